#!/bin/sh
# Sleep, then say so: the kill attack must not end this.
echo "INFO sleeper pid $$"
sleep "${1:-4}"
echo SURVIVED
