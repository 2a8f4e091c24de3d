#!/bin/sh
set -eu
f=${1:-saved.txt}
cat > "$f"
echo "saved $(wc -c < "$f")"
