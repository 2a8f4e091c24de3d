#!/bin/sh
# nest [check]: without an argument, nest 40 directories deep under /work
# and $DATA_DIR with a file at the bottom; "check": say whether this call
# may write at the top of both.
if [ "$1" = check ]; then
	for d in /work "$DATA_DIR"; do
		if echo ok >"$d/top-$$" 2>/dev/null; then
			echo "WRITABLE $d"
		else
			echo "UNEXPECTED cannot write $d"
		fi
		rm -f "$d/top-$$"
	done
	echo DONE
	exit 0
fi
for d in /work "$DATA_DIR"; do
	p=$d/n
	i=0
	while [ $i -lt 40 ]; do
		p=$p/d
		i=$((i + 1))
	done
	mkdir -p "$p" && echo deep >"$p/f" && echo "NESTED $d"
done
echo DONE
