#!/bin/sh
# run-suite.sh LOGDIR NAME CMD...: run one test suite (or check) with
# its whole output in LOGDIR/NAME.log, and print one line: the suite's
# own count line ("NAME: N passed, M failed, K skipped"; else its last
# "NAME: ..." line) and how long it took. When it fails, the lines that
# say why come first: everything but passing tests (and the indented
# output under them), at most SB_CHECK_SHOW lines (default 300), then
# the log's path. Exits as CMD does. SB_CHECK_VERBOSE=1 (make V=1)
# shows the whole output as it comes, too.
set -u
dir=$1 name=$2
shift 2
mkdir -p "$dir" || exit 2
log=$dir/$name.log
show=${SB_CHECK_SHOW:-300}

t0=$(date +%s%N)
if [ "${SB_CHECK_VERBOSE:-}" = 1 ]; then
	{ "$@" </dev/null 2>&1; echo $? >"$log.rc"; } | tee "$log"
	rc=$(cat "$log.rc")
	rm -f "$log.rc"
else
	"$@" </dev/null >"$log" 2>&1
	rc=$?
fi
t1=$(date +%s%N)
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f s", (b - a) / 1e9 }')

line=$(grep -E "^$name: [0-9]+ passed" "$log" | tail -n 1)
[ -n "$line" ] || line=$(grep "^$name: " "$log" | tail -n 1)
[ -n "$line" ] || line="$name: done"
count=$line
known=$(sed -n 's/^# \([0-9]*\) test(s) failed on known daemon bugs.*/\1/p' "$log" | tail -n 1)
[ -z "$known" ] || line="$line, $known known bug(s) not counted"

if [ "$rc" = 0 ]; then
	echo "$line ($took)"
	exit 0
fi
if [ "${SB_CHECK_VERBOSE:-}" = 1 ]; then # all of it was shown
	echo "$line ($took) FAILED (exit $rc); full output: $log"
	exit "$rc"
fi
# What failed: drop passing tests, their indented output (a unit test
# program's), skips, timings, the count lines (the last one is printed
# below) and cmocka's RUN/OK pairs (a RUN without its OK stays: that
# test failed).
awk -v max="$show" -v file="$log" -v name="$name" -v count="$count" '
function out(l) { if (++n <= max) print l }
/^ok - / { inok = 1; next }
inok && /^    / { next }
{ inok = 0 }
/^skip - / { next }
/^# [^ ]+: [0-9]+ ms$/ { next }
$0 == count || (index($0, name ": ") == 1 && / [0-9]+ passed, /) { next }
/^ *\[ RUN +\]/ { if (run != "") out(run); run = $0; next }
/^ *\[ +OK +\]/ { run = ""; next }
{ if (run != "") out(run); run = ""; out($0) }
END {
	if (run != "") out(run)
	if (n > max) printf "... %d more lines in %s\n", n - max, file
}
' "$log"
echo "$line ($took) FAILED (exit $rc); full output: $log"
exit "$rc"
