#!/bin/sh
echo "UID $(id -u)"
find . -mindepth 1 -printf 'FILE %P %U %s\n'
