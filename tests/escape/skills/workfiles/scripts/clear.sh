#!/bin/sh
# clear: remove everything in the work dir.
find . -mindepth 1 -delete && echo CLEARED
