#!/bin/sh
# The test planted planted/* as symlinks to host files (see run.sh); read
# each through the skill dir. Argument: a host file reached through the
# symlink to /.
cd "$SKILL_DIR/planted" || { echo "INFO no planted dir in $SKILL_DIR"; exit 1; }
for l in shadow conf conf-rel hostdir; do
	echo "INFO $l -> $(readlink "$l" 2>&1)"
	if [ -d "$l" ]; then
		if out=$(ls -A "$l/" 2>&1); then
			echo "ESCAPED list $l: $(printf '%s' "$out" | tr '\n' ' ' | head -c 300)"
		else
			echo "BLOCKED list $l: $out"
		fi
	elif out=$(head -c 200 "$l" 2>&1); then
		echo "ESCAPED read $l: $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "BLOCKED read $l: $out"
	fi
done
for p in "$@"; do
	if out=$(head -c 200 "root$p" 2>&1); then
		echo "ESCAPED read root$p: $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "BLOCKED read root$p: $out"
	fi
done
echo DONE
