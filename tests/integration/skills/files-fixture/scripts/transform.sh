#!/bin/sh
# transform: out/y is in/x with the top bit of every byte flipped.
set -eu
mkdir -p out
tr '\000-\177\200-\377' '\200-\377\000-\177' <in/x >out/y
echo "transformed $(wc -c <in/x) bytes"
