#!/bin/sh
# List the notes saved in this session.
ls -1 *.txt 2>/dev/null || echo "no notes"
