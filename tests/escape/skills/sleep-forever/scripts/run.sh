#!/bin/sh
# Never end: ignore the polite signals, and leave detached children
# (own session, double fork) that do the same.
trap '' HUP INT TERM QUIT
setsid sh -c "trap '' HUP INT TERM QUIT; sleep 100000" \
	</dev/null >/dev/null 2>&1 &
( (trap '' HUP INT TERM QUIT; exec sleep 100001) </dev/null >/dev/null 2>&1 & )
echo "INFO children left"
while :; do sleep 100002; done
