#!/bin/sh
# Read /etc/shadow directly, through /proc/1/root (the root of pid 1)
# and through /proc/self/root.
for p in /etc/shadow /proc/1/root/etc/shadow /proc/self/root/etc/shadow \
    /etc/gshadow; do
	if [ -e "$p" ] || [ -L "$p" ]; then
		echo "INFO seen $p: $(ls -ld "$p" 2>&1)"
	else
		echo "INFO absent $p"
	fi
	if out=$(head -c 100 "$p" 2>&1); then
		echo "ESCAPED read $p: $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "BLOCKED read $p: $out"
	fi
done
echo DONE
