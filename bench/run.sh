#!/bin/sh
# make bench: the cost of running a skill through skillbroker, as a ratio
# against running the same entry point directly, measured in the same run
# (machines here are noisy; only the ratios mean something).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB_BIN=${SB_BIN:-$ROOT/bin}
N=${BENCH_N:-200}
[ "$(id -u)" = 0 ] || { echo "bench: needs root (the daemon starts as root)"; exit 1; }

TMP=$(mktemp -d /tmp/sb-bench.XXXXXX)
chmod 755 "$TMP"
cleanup() {
	[ -n "${PID:-}" ] && kill -TERM "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
cat > "$TMP/sb.yaml" <<CONF
socket: sb.sock
skills_dirs: [$ROOT/skills]
state_dir: state
audit: {path: log/audit.jsonl}
privsep_user: nobody
worker: {uids: [64000, 64031]}
CONF
"$SB_BIN/skillbrokerd" -d -f "$TMP/sb.yaml" 2>"$TMP/daemon.log" &
PID=$!
i=0
until "$SB_BIN/skillctl" -s "$TMP/sb.sock" hello >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 50 ] || { cat "$TMP/daemon.log"; exit 1; }; sleep 0.1
done

now() { date +%s%N; }
# Time N runs of a command; print nanoseconds per run.
per_run() {
	t0=$(now); n=0
	while [ $n -lt "$N" ]; do "$@" >/dev/null 2>&1; n=$((n + 1)); done
	echo $(( ($(now) - t0) / N ))
}

direct=$(per_run "$ROOT/skills/hello/scripts/hello.sh" world)
hello=$(per_run "$SB_BIN/skillctl" -s "$TMP/sb.sock" hello)
invoke=$(per_run "$SB_BIN/skillctl" -s "$TMP/sb.sock" invoke hello --phase execution -- world)
denied=$(per_run sh -c "\"$SB_BIN/skillctl\" -s \"$TMP/sb.sock\" invoke hello -- x || true")

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "bench: $N sequential calls each"
printf '%-44s %9.3f ms  %6sx\n' "baseline: exec the entry point directly" \
	"$(ratio "$direct" 1000000)" 1.00
printf '%-44s %9.3f ms  %6sx\n' "skillctl hello (client + broker round trip)" \
	"$(ratio "$hello" 1000000)" "$(ratio "$hello" "$direct")"
printf '%-44s %9.3f ms  %6sx\n' "skillctl invoke, denied by policy" \
	"$(ratio "$denied" 1000000)" "$(ratio "$denied" "$direct")"
printf '%-44s %9.3f ms  %6sx\n' "skillctl invoke hello (full path, audited)" \
	"$(ratio "$invoke" 1000000)" "$(ratio "$invoke" "$direct")"
