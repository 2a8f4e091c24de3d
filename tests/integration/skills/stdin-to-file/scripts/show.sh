#!/bin/sh
if [ -f saved.txt ]; then cat saved.txt; else echo "NO FILE"; fi
