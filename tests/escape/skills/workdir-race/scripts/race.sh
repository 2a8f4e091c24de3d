#!/bin/sh
# race MS fg|bg HOSTDIR: swap the directory d and a symlink to HOSTDIR
# for MS milliseconds (see src/racer.c). bg: leave the racer running in
# the background, detached, and return at once.
case $2 in
bg)
	setsid "$SKILL_DIR/bin/racer" "$1" "$3" >/dev/null 2>&1 </dev/null &
	sleep 0.5
	echo "INFO racer left in the background"
	echo DONE
	;;
*)
	exec "$SKILL_DIR/bin/racer" "$1" "$3"
	;;
esac
