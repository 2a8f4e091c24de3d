#!/bin/sh
# run.sh LOADER: copies of allowed and other programs, in /work (for a
# later call of the session) and in this call's /tmp, must not run.
loader=$1
for d in /work /tmp; do
	cp /bin/sh "$d/sh-copy" && cp /usr/bin/python3 "$d/py-copy" &&
		echo "INFO copied into $d" || echo "UNEXPECTED cannot copy into $d"
	for c in "$d/sh-copy -c" "$loader $d/sh-copy -c"; do
		out=$($c 'echo sb-ran' 2>&1)
		case $out in
		*sb-ran*) echo "ESCAPED $c ran" ;;
		*) echo "BLOCKED $c: $out" ;;
		esac
	done
	for c in "$d/py-copy -c" "$loader $d/py-copy -c"; do
		out=$($c 'print("sb-ran")' 2>&1)
		case $out in
		*sb-ran*) echo "ESCAPED $c ran" ;;
		*) echo "BLOCKED $c: $out" ;;
		esac
	done
done
echo DONE
