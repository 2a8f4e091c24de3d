#!/bin/sh
# look HOSTFILE MARK: after plant, is the host's /tmp mounted inside?
# Read HOSTFILE (a path in the host's /tmp) and write MARK in the host's
# /tmp through every place the second grant may have landed.
echo "INFO mounts: $(awk '{ print $2 }' /proc/self/mounts | tr '\n' ' ' | head -c 600)"
rel=${1#/tmp}
for top in /skill-dir-links/cache/d/tmp "$SKILL_DIR/cache/a/skill-dir-links/cache/d/tmp"; do
	if out=$(head -c 200 "$top$rel" 2>&1); then
		echo "ESCAPED read host $1 at $top$rel: $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "BLOCKED read $top$rel: $out"
	fi
	if out=$( (echo escaped >"$top/$2") 2>&1); then
		echo "ESCAPED wrote $top/$2"
	else
		echo "BLOCKED write $top/$2: $out"
	fi
done
echo DONE
