#!/bin/sh
# plant: in the writable cache, cache/a -> ../.. and cache/d -> / (a
# host dir bound inside), and cache/b -> ../../../../.. (a mount point made
# by root on the host, outside the private root).
cd "$SKILL_DIR/cache" || { echo "INFO no writable cache: $(ls -ld "$SKILL_DIR/cache" 2>&1)"; exit 1; }
for l in "a ../.." "d /" "b ../../../../.."; do
	# shellcheck disable=SC2086
	set -- $l
	if out=$(ln -sfn "$2" "$1" 2>&1); then
		echo "INFO planted cache/$1 -> $2"
	else
		echo "INFO cannot plant cache/$1: $out"
	fi
done
echo DONE
