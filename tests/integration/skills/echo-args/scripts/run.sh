#!/bin/sh
echo "$*"
