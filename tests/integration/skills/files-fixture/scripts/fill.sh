#!/bin/sh
# fill: files of 1 MiB until the work dir has no room left.
i=0
while head -c 1048576 /dev/zero >"fill$i" 2>/dev/null; do
	i=$((i + 1))
done
echo "filled $i"
