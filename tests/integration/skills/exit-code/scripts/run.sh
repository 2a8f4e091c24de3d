#!/bin/sh
echo "exiting 7"
exit 7
