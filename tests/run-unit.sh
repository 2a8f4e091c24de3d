#!/bin/sh
# run-unit.sh PROGRAM...: run each cmocka unit test program. For each,
# "ok - NAME: N passed" or "not ok - NAME: ..." with its whole output
# indented below; then "unit: N passed, M failed, K skipped in P
# programs", counting tests. A program that exits non-zero without a
# failed test (a crash, a sanitizer's report) counts as one failure.
set -u
pass=0 fail=0 skip=0 progs=0
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT

# count WORD: the sum of cmocka's "[  WORD  ] N test(s)" lines in $out
# (count OK: the tests that passed, one line each; a program that
# writes on its own stdout may lose the PASSED summary, never those).
count() {
	awk -v w="$1" '
	{ sub(/^\[ */, ""); s = $0; sub(/ *\].*/, "", s) }
	w == "OK" && s == w { n++ }
	w != "OK" && s == w && match($0, /\] [0-9]+ test/) {
		n += substr($0, RSTART + 2, RLENGTH - 7)
	}
	END { print n + 0 }' "$out"
}

for t in "$@"; do
	progs=$((progs + 1))
	"$t" >"$out" 2>&1
	rc=$?
	p=$(count OK) f=$(count FAILED) s=$(count SKIPPED)
	[ "$rc" = 0 ] || [ "$f" -gt 0 ] || f=1
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	if [ "$rc" = 0 ]; then
		if [ "$s" = 0 ]; then
			echo "ok - ${t##*/}: $p passed"
		else
			echo "ok - ${t##*/}: $p passed, $s skipped"
		fi
	else
		echo "not ok - ${t##*/}: $f failed (exit $rc)"
	fi
	sed 's/^/    /' "$out"
done
echo "unit: $pass passed, $fail failed, $skip skipped in $progs programs"
[ "$fail" -eq 0 ]
