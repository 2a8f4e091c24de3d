#!/bin/sh
# Print the arguments after "hello".
echo "hello $*"
