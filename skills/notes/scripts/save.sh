#!/bin/sh
# Save stdin as NAME.txt in the work directory (the cwd).
set -eu
name="${1:-note}"
case "$name" in
*/* | .* | "") echo "bad note name: $name" >&2; exit 2 ;;
esac
cat > "$name.txt"
echo "saved $(wc -c < "$name.txt") bytes to $name.txt"
