#!/bin/sh
# put NAME TEXT: write TEXT (and a newline) to NAME in the work dir.
set -eu
printf '%s\n' "$2" >"$1"
echo "PUT $1"
