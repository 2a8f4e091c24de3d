#!/bin/sh
# procs [PID...]: every process visible in /proc, then whether the given
# host pids exist here.
echo "SELF $$"
for d in /proc/[0-9]*; do
	p=${d#/proc/}
	[ -r "$d/stat" ] || continue
	comm=$(cat "$d/comm" 2>/dev/null)
	cmd=$(tr '\0' ' ' <"$d/cmdline" 2>/dev/null | head -c 200)
	echo "PROC $p $comm: $cmd"
done
for p in "$@"; do
	if [ -e "/proc/$p" ]; then
		echo "ESCAPED host pid $p visible: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | head -c 200)"
	else
		echo "BLOCKED host pid $p: absent"
	fi
done
echo DONE
