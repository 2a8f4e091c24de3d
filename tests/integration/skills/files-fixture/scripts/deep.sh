#!/bin/sh
# deep: directories nested 40 levels under deep/, a file at the bottom.
set -eu
p=deep
i=0
while [ "$i" -lt 40 ]; do
	p=$p/d
	i=$((i + 1))
done
mkdir -p "$p"
echo bottom >"$p/f"
echo nested
