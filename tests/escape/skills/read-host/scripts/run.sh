#!/bin/sh
# Each argument is a host path (a file or a directory). Report whether it
# is visible at all, then try to read or list it, also through .. from
# the work dir and through /proc/1/root.
probe() {
	p=$1
	if [ -e "$p" ] || [ -L "$p" ]; then
		echo "SEEN $p: $(ls -ld "$p" 2>&1)"
	else
		echo "ABSENT $p"
	fi
	if [ -d "$p" ]; then
		if out=$(ls -A "$p" 2>&1); then
			echo "ESCAPED list $p: $(printf '%s' "$out" | tr '\n' ' ' | head -c 300)"
		else
			echo "BLOCKED list $p: $out"
		fi
	elif out=$(head -c 200 "$p" 2>&1); then
		echo "ESCAPED read $p: $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "BLOCKED read $p: $out"
	fi
}
echo "INFO cwd $(pwd) HOME=$HOME WORK_DIR=$WORK_DIR"
for p in "$@"; do
	probe "$p"
	# the same path climbing out of the work dir
	dots=$(pwd | sed 's|/[^/]*|/..|g')
	q=$dots$p
	if out=$(head -c 200 "$q" 2>&1) && [ -f "$q" ]; then
		echo "ESCAPED read $q: $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "BLOCKED dotdot $q"
	fi
	if out=$(head -c 200 "/proc/1/root$p" 2>/dev/null) && [ -f "/proc/1/root$p" ]; then
		echo "ESCAPED read /proc/1/root$p: $(printf '%s' "$out" | tr '\n' ' ')"
	else
		echo "BLOCKED procroot /proc/1/root$p"
	fi
done
echo DONE
