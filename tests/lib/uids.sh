# tests/lib/uids.sh (sourced by the bash test suites): a block of worker
# uids for one test run. The master kills every process of a worker uid,
# so runs at once on one machine (make check beside make SAN=1 check, or
# two suites) must never share one. A slot is held with a lock dir that
# names its owner's pid; a lock whose owner is gone is taken over.
#
#   claim_uids BASE SLOTS SIZE NAME   sets UID_FIRST, UID_LAST, UID_LOCK
#   release_uids                      frees the slot (call from cleanup)

UID_LOCK=""

claim_uids() {
	local base=$1 slots=$2 size=$3 name=$4 n lock owner
	for n in $(seq 0 $((slots - 1))); do
		lock=/tmp/skillbroker-uids.$base.$n
		if ! mkdir "$lock" 2>/dev/null; then
			owner=$(cat "$lock/pid" 2>/dev/null)
			if [ -z "$owner" ] || kill -0 "$owner" 2>/dev/null; then
				continue
			fi
			rm -rf "$lock"
			mkdir "$lock" 2>/dev/null || continue
		fi
		echo $$ >"$lock/pid"
		UID_LOCK=$lock
		UID_FIRST=$((base + n * size))
		UID_LAST=$((UID_FIRST + size - 1))
		return 0
	done
	echo "$name: no free worker uid slot in $base-$((base + slots * size - 1))" >&2
	exit 2
}

release_uids() {
	[ -z "$UID_LOCK" ] || rm -rf "$UID_LOCK"
	UID_LOCK=""
}
