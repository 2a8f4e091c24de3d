#!/bin/sh
# make bench: the cost of running a skill through skillbroker, as a ratio
# against running the same entry point directly, and audit records/s at
# each flush mode, as a ratio against flush none; each baseline is
# measured in the same run (machines here are noisy; only the ratios
# mean something).
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
# The shipped example policy rate-limits hello; the bench allows it freely.
mkdir -p "$TMP/policy.d"
cat > "$TMP/policy.d/10-bench.yaml" <<POLICY
skills:
  enabled: [hello]
rules:
  - name: bench-may-greet
    principals: ["*"]
    skills: [hello]
    action: allow
POLICY
cat > "$TMP/sb.yaml" <<CONF
socket: sb.sock
skills_dirs: [$ROOT/skills]
policy_dir: policy.d
state_dir: state
audit: {path: log/audit.jsonl}
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

# Audit records per second through a real auditd at each flush mode, with
# one record in flight (one client calling in turn) and with 32 (many
# clients: their records share group commits); ratios against flush
# none at the same concurrency, measured in this run.
SB_BENCH=${SB_BENCH:-$ROOT/build/bench}
AB=$TMP/abench
ASECS=${BENCH_AUDIT_SECONDS:-1}
mkdir -p "$AB/log" "$AB/state"
chown nobody "$AB/log"
chmod 750 "$AB/log"
# audit_run MODE WINDOW: records per second of one run.
audit_run() {
	rm -f "$AB"/log/audit.jsonl* "$AB/state/audit.head"
	"$SB_BENCH/audit_bench" -a "$SB_BIN/skillbroker-auditd" \
	    -l "$AB/log/audit.jsonl" -H "$AB/state/audit.head" -F "$1" \
	    -u "$(id -u nobody)" -g "$(id -g nobody)" -w "$2" -t "$ASECS" \
	    2>>"$AB/auditd.log" | awk '{ print $6 }'
}
# audit_rate MODE WINDOW: the median of three runs.
audit_rate() {
	{ audit_run "$1" "$2"; audit_run "$1" "$2"; audit_run "$1" "$2"; } |
	    sort -n | sed -n 2p
}
echo "bench: audit records/s through auditd, median of 3 runs of ${ASECS} s (acknowledged as the flush mode says)"
printf '%-12s %14s %8s %14s %8s\n' flush "1 in flight" ratio "32 in flight" ratio
audit_run none 1 >/dev/null  # warm up
base1=$(audit_rate none 1)
base32=$(audit_rate none 32)
for mode in none incremental data sync; do
	if [ "$mode" = none ]; then
		r1=$base1 r32=$base32
	else
		r1=$(audit_rate "$mode" 1)
		r32=$(audit_rate "$mode" 32)
	fi
	printf '%-12s %12s/s %7sx %12s/s %7sx\n' "$mode" "$r1" \
	    "$(ratio "$r1" "$base1")" "$r32" "$(ratio "$r32" "$base32")"
done
