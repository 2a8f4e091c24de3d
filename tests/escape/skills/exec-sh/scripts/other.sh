#!/bin/sh
echo sb-ran
