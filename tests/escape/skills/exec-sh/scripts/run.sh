#!/bin/sh
# run.sh LOADER: with only sh allowed, every other program must fail to
# start. try WHAT CMD...: BLOCKED when it did not print its marker.
try() {
	what=$1
	shift
	out=$("$@" 2>&1)
	case $out in
	*sb-ran*) echo "ESCAPED $what: $(printf '%.120s' "$out")" ;;
	*) echo "BLOCKED $what: $(printf '%.160s' "$out")" ;;
	esac
}
loader=$1
try "python3" python3 -c 'print("sb-ran")'
try "perl" perl -e 'print "sb-ran\n"'
out=$(curl --version 2>&1)
case $out in
*libcurl*) echo "ESCAPED curl ran" ;;
*) echo "BLOCKED curl: $(printf '%.160s' "$out")" ;;
esac
try "env python3" /usr/bin/env python3 -c 'print("sb-ran")'
try "loader python3" "$loader" /usr/bin/python3 -c 'print("sb-ran")'
try "loader perl" "$loader" /usr/bin/perl -e 'print "sb-ran\n"'
try "work copy of sh" /work/sh-copy -c 'echo sb-ran'
try "loader work copy of sh" "$loader" /work/sh-copy -c 'echo sb-ran'
try "work copy of python3" /work/py-copy -c 'print("sb-ran")'
try "loader work copy of python3" "$loader" /work/py-copy -c 'print("sb-ran")'
try "another script of the skill" "$SKILL_DIR/scripts/other.sh"
# what it may do: run sh
out=$(sh -c 'echo sb-sh-ok' 2>&1)
[ "$out" = sb-sh-ok ] && echo "RAN sh" || echo "UNEXPECTED sh did not run: $out"
[ -f /work/sh-copy ] && [ -f /work/py-copy ] && echo "INFO the copies are there" || echo "UNEXPECTED no copies in /work"
echo DONE
