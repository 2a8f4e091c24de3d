#!/bin/sh
# run.sh OP PATH [OP PATH...]: each operation on a path, one line each.
# What worked: SEEN (read, with the start of the file), LISTED, WROTE,
# OPENED (a device node, for writing), MADE (mknod), RAN (a program, with
# its output), MOUNT (the options of the mount at PATH), SOURCE (the mount
# points of the mounts of a source), APPEARED (PATH exists, waited for
# every 0.05 s, at most 8 s: calls time out at 10). What did not:
# FAILED OP PATH: why. run.sh does not judge: run.sh of the suite does.
#   read PATH | list DIR | write PATH | dev NODE | mknod PATH | run PROG |
#   mount PATH | source SRC | waitfor PATH | pid PID (a host pid's cmdline
#   under /proc)
# write puts "sb-escape fs-probe wrote" in PATH.
why() { printf '%s' "$1" | head -n 1 | cut -c 1-160; }
while [ $# -ge 2 ]; do
	op=$1 p=$2
	shift 2
	case $op in
	read)
		if out=$(head -c 200 "$p" 2>&1); then
			echo "SEEN $p: $(printf '%s' "$out" | tr '\n\0' '| ' | cut -c 1-160)"
		else
			echo "FAILED read $p: $(why "$out")"
		fi ;;
	list)
		if out=$(ls -A "$p" 2>&1); then
			echo "LISTED $p: $(printf '%s' "$out" | head -n 20 | tr '\n' ' ')"
		else
			echo "FAILED list $p: $(why "$out")"
		fi ;;
	write)
		if out=$( (echo "sb-escape fs-probe wrote" >"$p") 2>&1); then
			echo "WROTE $p"
		else
			echo "FAILED write $p: $(why "$out")"
		fi ;;
	dev)
		if out=$( (exec 3>"$p") 2>&1); then
			echo "OPENED $p"
		else
			echo "FAILED dev $p: $(why "$out")"
		fi ;;
	mknod)
		if out=$(mknod "$p" c 1 3 2>&1); then
			echo "MADE $p"
			rm -f "$p"
		else
			echo "FAILED mknod $p: $(why "$out")"
		fi ;;
	run)
		out=$("$p" 2>&1)
		echo "RAN $p: $(printf '%s' "$out" | tr '\n' '|' | cut -c 1-300)" ;;
	mount)
		o=$(awk -v m="$p" '$5 == m { o = $6 } END { print o }' /proc/self/mountinfo)
		echo "MOUNT $p ${o:-none}" ;;
	source)
		o=$(awk -v s="$p" '{ for (i = 7; $i != "-"; i++) ; }
		    $(i + 2) == s { printf " %s", $5 }' /proc/self/mountinfo)
		echo "SOURCE $p${o:- none}" ;;
	waitfor)
		n=0
		while [ ! -e "$p" ] && [ $n -lt 160 ]; do
			sleep 0.05
			n=$((n + 1))
		done
		if [ -e "$p" ]; then
			echo "APPEARED $p"
		else
			echo "FAILED waitfor $p: absent after 8 s"
		fi ;;
	pid)
		if [ -r "/proc/$p/cmdline" ] &&
		    out=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>&1) && [ -n "$out" ]; then
			echo "SEEN pid $p: $(printf '%s' "$out" | cut -c 1-160)"
		else
			echo "FAILED pid $p: absent"
		fi ;;
	*)
		echo "FAILED $op $p: unknown operation" ;;
	esac
done
echo DONE
