#!/bin/sh
# many N: N empty files, many/0 ... many/N-1.
set -eu
mkdir -p many
i=0
while [ "$i" -lt "$1" ]; do
	: >"many/$i"
	i=$((i + 1))
done
echo "made $i"
