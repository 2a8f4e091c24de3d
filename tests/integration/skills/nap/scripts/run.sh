#!/bin/sh
sleep "${1:-1}"
echo "slept ${1:-1}"
