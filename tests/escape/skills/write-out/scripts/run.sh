#!/bin/sh
# write-out MARK HOSTDIR...: create MARK in every directory outside the
# work dir that the skill must not write, and in each host dir given.
mark=$1; shift
for d in "$SKILL_DIR" "$SKILL_DIR/open" /skill /usr /usr/bin /usr/lib /etc / /lib \
    /proc /dev "$(pwd)/.." "$@"; do
	f=$d/$mark
	if out=$( (echo escaped >"$f") 2>&1); then
		echo "ESCAPED wrote $f"
	else
		echo "BLOCKED write $f: $out"
	fi
	if out=$(mkdir "$f.d" 2>&1); then
		echo "ESCAPED mkdir $f.d"
	else
		echo "BLOCKED mkdir $f.d: $out"
	fi
done
echo DONE
