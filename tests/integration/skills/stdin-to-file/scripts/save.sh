#!/bin/sh
set -eu
cat > saved.txt
echo "saved $(wc -c < saved.txt)"
