#!/bin/sh
head -c "$1" /dev/zero | tr '\0' x
