#!/bin/sh
# get NAME: print NAME of the work dir, or NO FILE.
if [ -f "$1" ]; then cat -- "$1"; else echo "NO FILE"; fi
