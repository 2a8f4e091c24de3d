#!/bin/sh
# run.sh NAME: append NAME to the data dir's NAME.txt and the work dir's
# NAME.txt, then show both, the skill's CSV and what the data dir holds.
set -u
n=${1:-legit}
for d in "$DATA_DIR" "$WORK_DIR"; do
	if echo "line $n" >>"$d/$n.txt"; then
		echo "WROTE $d/$n.txt"
	else
		echo "FAILED write $d/$n.txt"
	fi
	echo "HOLDS $d/$n.txt: $(tr '\n' '|' <"$d/$n.txt" 2>&1)"
done
echo "CSV $(tr '\n' '|' <"$SKILL_DIR/data/a.csv" 2>&1)"
echo DONE
