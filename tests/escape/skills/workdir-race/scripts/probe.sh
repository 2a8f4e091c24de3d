#!/bin/sh
# probe: read through whatever d and s are right now, and report what
# the racer logged.
for p in d/readable s/readable d/sub/readable s/sub/readable d/ssub/readable \
    s/ssub/readable; do
	if out=$(head -c 200 "$p" 2>/dev/null); then
		case $out in
		"sb-escape victim"*) echo "ESCAPED read $p: $out" ;;
		*) echo "INFO read $p: $(printf '%s' "$out" | head -c 60)" ;;
		esac
	fi
done
echo "INFO racer: $(tail -n 1 racer.log 2>/dev/null)"
echo DONE
