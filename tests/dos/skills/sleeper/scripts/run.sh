#!/bin/sh
# Hold the worker for $1 seconds, then say so.
echo "SLEEPING $$"
sleep "${1:-20}"
echo WOKE
