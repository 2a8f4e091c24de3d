#!/bin/sh
# bench/run.sh (make bench): what a skill call costs through skillbroker,
# measured against baselines in the same run (fork+exec of the same
# entry point, and bubblewrap launching it in an equivalent sandbox);
# these machines are noisy, so every figure that is judged is a ratio to
# something measured beside it. docs/performance.md says what each
# section measures and how to read it.
#
# Sections, each written to bench/results/SECTION.json (an array of the
# JSON lines sb_bench and audit_bench print, with what this script
# adds), then a summary table of the targets of issue 13:
#   memory      RSS of each daemon process idle, with BENCH_IDLE_CONNS
#               idle connections, and under load
#   latency     no-op call p50/p99 against fork+exec and bwrap
#   throughput  calls/s with 1, 2, 8, 32 clients against parallel bwrap
#   authorize   pipelined decisions/s on 1 and 8 connections
#   audit       fdatasyncs per call in the daemon; records/s per flush
#   scaling     latency and 8-client throughput as skills, rules, host
#               processes and output size grow, each against its base
# The main daemon has no warm pool (`worker: {pool: 0}`: a worker is
# started for each call); latency and throughput run again with
# `worker: {pool: BENCH_POOL}`.
#
# Knobs (defaults; BENCH_QUICK=1 runs every section briefly):
#   BENCH_N=200 BENCH_WARMUP=20   latency rounds, and rounds not counted
#   BENCH_PAUSE_MS=25             idle after each latency sample of every
#                                 series (a reap, the pool's refill)
#   BENCH_SECONDS=4               each throughput row, per series
#   BENCH_CLIENTS="1 2 8 32"      throughput rows
#   BENCH_AUTH_SECONDS=3 BENCH_WINDOW=64
#   BENCH_AUTH_RUNS=3             authorize rows, each on 1 and 8
#                                 connections in turn; the best counts
#   BENCH_IDLE_CONNS=1000
#   BENCH_AUDIT_SECONDS=1         each audit_bench run
#   BENCH_SCALE_N=60 BENCH_SCALE_SECONDS=3
#   BENCH_SKILLS=1000 BENCH_RULES="1000 10000" BENCH_PROCS=2000
#   BENCH_OUTPUT_SIZES="0 1024 16384 65536"
#   BENCH_POOL=4                  the warm pool's size (0: no pool row)
#   BENCH_SECTIONS="memory latency throughput authorize audit scaling"
#   BENCH_SYNC_TOOL=perf|strace|none   how fdatasyncs are counted
#                                     (default: perf if it can, else strace)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SB_BIN=${SB_BIN:-$ROOT/bin}
SB_BENCH=${SB_BENCH:-$ROOT/build/bench}
RESULTS=${BENCH_RESULTS:-$ROOT/bench/results}
QUICK=${BENCH_QUICK:-0}

# quick FULL QUICK: the default of a knob in this mode.
quick() { if [ "$QUICK" = 1 ]; then echo "$2"; else echo "$1"; fi; }
N=${BENCH_N:-$(quick 200 10)}
WARMUP=${BENCH_WARMUP:-$(quick 20 2)}
PAUSE_MS=${BENCH_PAUSE_MS:-25}
TP_SECONDS=${BENCH_SECONDS:-$(quick 4 0.6)}
CLIENTS=${BENCH_CLIENTS:-1 2 8 32}
AUTH_SECONDS=${BENCH_AUTH_SECONDS:-$(quick 3 0.5)}
AUTH_RUNS=${BENCH_AUTH_RUNS:-$(quick 3 1)}
WINDOW=${BENCH_WINDOW:-64}
IDLE_CONNS=${BENCH_IDLE_CONNS:-1000}
AUDIT_SECONDS=${BENCH_AUDIT_SECONDS:-$(quick 1 0.3)}
SCALE_N=${BENCH_SCALE_N:-$(quick 60 5)}
SCALE_SECONDS=${BENCH_SCALE_SECONDS:-$(quick 3 0.5)}
SKILLS=${BENCH_SKILLS:-$(quick 1000 50)}
RULES=${BENCH_RULES:-$(quick "1000 10000" "100")}
PROCS=${BENCH_PROCS:-$(quick 2000 100)}
OUTPUT_SIZES=${BENCH_OUTPUT_SIZES:-$(quick "0 1024 16384 65536" "0 65536")}
POOL=${BENCH_POOL:-4}
SECTIONS=${BENCH_SECTIONS:-memory latency throughput authorize audit scaling}

say() { printf '%s\n' "$*"; }
skip() { say "bench: skip - $*"; }
die() { say "bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root: the daemon starts as root"
command -v jq >/dev/null 2>&1 || die "needs jq (scripts/install-deps)"
for f in "$SB_BIN/skillbrokerd" "$SB_BENCH/sb_bench" "$SB_BENCH/audit_bench"; do
	[ -x "$f" ] || die "$f: not built (make bench builds it)"
done

TMP=$(mktemp -d /tmp/sb-bench.XXXXXX)
chmod 755 "$TMP"
DPID="" HELPERS="" UID_LOCK="" SPAWNER="" SLEEPERS=$TMP/sleepers.pids

# Kill what this script started: helpers, sleepers, the daemon.
cleanup() {
	set +e
	for p in $HELPERS; do kill -TERM "$p" 2>/dev/null; done
	sleepers_kill
	daemon_stop
	[ -z "$UID_LOCK" ] || rm -rf "$UID_LOCK"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# bench_in SECTION: run this section? (BENCH_SECTIONS)
bench_in() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }

# Worker uids: a slot of 100 in 62000-62399, locked as tests/lib/uids.sh
# locks the test suites' (a directory naming its owner's pid), so two
# benches, or a bench and a test daemon, never share a worker uid.
claim_uids() {
	n=0
	while [ $n -lt 4 ]; do
		lock=/tmp/skillbroker-uids.62000.$n
		if ! mkdir "$lock" 2>/dev/null; then
			owner=$(cat "$lock/pid" 2>/dev/null || true)
			if [ -z "$owner" ] || kill -0 "$owner" 2>/dev/null; then
				n=$((n + 1)); continue
			fi
			rm -rf "$lock"
			mkdir "$lock" 2>/dev/null || { n=$((n + 1)); continue; }
		fi
		echo $$ >"$lock/pid"
		UID_LOCK=$lock
		UID_FIRST=$((62000 + n * 100))
		UID_LAST=$((UID_FIRST + 99))
		return 0
	done
	die "no free worker uid slot in 62000-62399"
}
claim_uids

# Host abilities.
BWRAP=$(command -v bwrap || true)
[ -n "$BWRAP" ] || skip "bwrap: not installed (scripts/install-deps bench): no bwrap baselines"
SYNC_TOOL=${BENCH_SYNC_TOOL:-}
if [ -n "$SYNC_TOOL" ]; then
	: # chosen (perf, strace, or none)
elif command -v perf >/dev/null 2>&1 &&
    perf stat -x, -e syscalls:sys_enter_fdatasync -- true >/dev/null 2>&1; then
	SYNC_TOOL=perf
elif command -v strace >/dev/null 2>&1; then
	SYNC_TOOL=strace
else
	skip "perf (with syscall tracepoints) and strace: neither here: no fdatasync counts"
fi
# (ulimit -n: not POSIX, but in every sh this runs under: dash, bash)
# shellcheck disable=SC3045
[ "$(ulimit -n)" = unlimited ] || [ "$(ulimit -n)" -ge $((IDLE_CONNS + 256)) ] ||
	ulimit -n $((IDLE_CONNS + 256)) 2>/dev/null ||
	{ skip "ulimit -n $(ulimit -n): idle connections lowered"; IDLE_CONNS=$(($(ulimit -n) - 256)); }

# The bench's skill dir (a copy, so generated skills can join it), its
# policy, and the baselines' work dir.
SKILLS_DIR=$TMP/skills
NOOP=$SKILLS_DIR/bench-noop
mkdir -p "$SKILLS_DIR" "$TMP/policy.d" "$TMP/work" "$TMP/res" "$RESULTS"
cp -R "$ROOT/bench/skills/bench-noop" "$SKILLS_DIR/"
chmod -R a+rX "$SKILLS_DIR"
chmod 777 "$TMP/work"
rm -f "$RESULTS"/*.json
cat >"$TMP/policy.d/99-bench.yaml" <<'POLICY'
# make bench: anyone may run the bench skill, with no rate limit.
skills:
  enabled: [bench-noop]
rules:
  - name: bench-may-run
    principals: ["*"]
    skills: [bench-noop]
    commands: ["*"]
    action: allow
POLICY
chmod 644 "$TMP/policy.d/99-bench.yaml"

# ---------------------------------------------------------- the daemon

# daemon_config NAME POOL: the config of a bench daemon (POOL "": no key).
daemon_config() {
	pool_kv=""
	[ -z "$2" ] || pool_kv=", pool: $2"
	cat <<CONF
# make bench daemon $1
socket: $TMP/$1/sb.sock
skills_dirs: [$SKILLS_DIR]
policy_dir: $TMP/policy.d
state_dir: $TMP/$1/state
audit: {path: $TMP/$1/log/audit.jsonl, flush: data}
worker: {uids: [$UID_FIRST, $UID_LAST], work_mb: 4$pool_kv}
limits: {timeout_ms: 30000}
max_clients: $((IDLE_CONNS + 512))
per_uid: {clients: $((IDLE_CONNS + 256)), calls: 1024, sessions: 64, workers: 64}
clients: {idle_s: 3600}
CONF
}

# daemon_start NAME [POOL]: start a daemon on its own dir and wait until
# it answers; 1 (and DPID empty) when it refuses its config or dies.
daemon_start() {
	D=$TMP/$1
	SOCK=$D/sb.sock
	mkdir -p "$D"
	daemon_config "$1" "${2:-}" >"$D/sb.yaml"
	if ! "$SB_BIN/skillbrokerd" -n -f "$D/sb.yaml" >"$D/check.log" 2>&1; then
		return 1
	fi
	"$SB_BIN/skillbrokerd" -d -f "$D/sb.yaml" 2>"$D/daemon.log" &
	DPID=$!
	i=0
	until "$SB_BIN/skillctl" -s "$SOCK" hello >/dev/null 2>&1; do
		if ! kill -0 "$DPID" 2>/dev/null || [ $i -ge 100 ]; then
			tail -n 5 "$D/daemon.log" >&2
			daemon_stop
			return 1
		fi
		i=$((i + 1))
		sleep 0.1
	done
}

# Stop the daemon this script started, and wait for it.
daemon_stop() {
	[ -n "$DPID" ] || return 0
	kill -TERM "$DPID" 2>/dev/null || true
	wait "$DPID" 2>/dev/null || true
	DPID=""
}

# The daemon's roles: "ROLE PID" lines (workers are children too).
daemon_roles() {
	ps -o pid=,comm= --ppid "$DPID" | while read -r pid comm; do
		case $comm in
		skillbroker-bro*) echo "broker $pid" ;;
		skillbroker-pol*) echo "policyd $pid" ;;
		skillbroker-aud*) echo "auditd $pid" ;;
		skillbroker-net*) echo "netproxy $pid" ;;
		esac
	done
	echo "skillbrokerd $DPID"
}

# daemon_reload: SIGHUP, then wait for policyd's word; 1 if rejected.
daemon_reload() {
	log=$D/daemon.log
	before=$(grep -c -e 'policy reloaded' -e 'reload rejected' "$log" || true)
	kill -HUP "$DPID"
	i=0
	while [ "$(grep -c -e 'policy reloaded' -e 'reload rejected' "$log" || true)" = "$before" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || die "no answer to a reload in 30 s"
		sleep 0.1
	done
	RELOAD_MSG=$(grep -e 'policy reloaded' -e 'reload rejected' "$log" | tail -n 1)
	case $RELOAD_MSG in *rejected*) return 1 ;; esac
}

# ---------------------------------------------------------- helpers

# bench CMD ARGS...: one sb_bench run against the daemon; its JSON line.
bench() {
	cmd=$1
	shift
	"$SB_BENCH/sb_bench" "$cmd" -s "$SOCK" -d "$NOOP" -w "$TMP/work" \
	    -u "$UID_LAST" "$@" 2>>"$TMP/sb_bench.log" ||
		{ tail -n 5 "$TMP/sb_bench.log" >&2; die "sb_bench $cmd failed"; }
}

# record SECTION JSON [JQ]: keep a result line (JQ adds fields to it).
record() {
	printf '%s\n' "$2" | jq -c "${3:-.}" >>"$TMP/res/$1.jsonl"
}

# Write a section's results as one JSON array.
section_done() {
	[ -s "$TMP/res/$1.jsonl" ] || return 0
	jq -s . "$TMP/res/$1.jsonl" >"$RESULTS/$1.json"
}

# rss PID: VmRSS in KiB (0 if gone).
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# mem_json STATE: the RSS of every role as a JSON line.
mem_json() {
	daemon_roles | while read -r role pid; do
		echo "$role $(rss "$pid")"
	done | jq -R -s -c --arg s "$1" \
	    'split("\n") | map(select(length > 0) | split(" ") |
	     {(.[0]): (.[1] | tonumber)}) | add | {bench: "memory", state: $s, rss_kib: .}'
}

# ratio A B: A/B with 3 decimals ("null" when B is 0 or absent).
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0 || a == "null") print "null"; else printf "%.3f\n", a / b }'
}

# count_syncs OUT CMD...: run CMD while counting fdatasync and fsync of
# the daemon's roles; "FDATASYNCS FSYNCS" into OUT.
count_syncs() {
	out=$1
	shift
	pids=$(daemon_roles | awk '{ print $2 }')
	case $SYNC_TOOL in
	perf)
		perf stat -x, -o "$TMP/perf.out" \
		    -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync \
		    -p "$(printf '%s\n' "$pids" | paste -s -d, -)" -- "$@"
		awk -F, '/sys_enter_fdatasync/ { d = $1 + 0 }
		    /sys_enter_fsync/ { s = $1 + 0 }
		    END { print d + 0, s + 0 }' "$TMP/perf.out" >"$out"
		;;
	strace)
		sargs=""
		for p in $pids; do sargs="$sargs -p $p"; done
		# shellcheck disable=SC2086
		strace -c -f -e trace=fdatasync,fsync -o "$TMP/strace.out" $sargs &
		spid=$!
		HELPERS="$HELPERS $spid"
		sleep 0.5
		"$@"
		kill -INT "$spid" 2>/dev/null || true
		wait "$spid" 2>/dev/null || true
		awk '$NF == "fdatasync" { d = $4 } $NF == "fsync" { s = $4 }
		    END { print d + 0, s + 0 }' "$TMP/strace.out" >"$out"
		;;
	*)
		"$@"
		echo "null null" >"$out"
		;;
	esac
}

# Start N idle sleep processes (their pids in SLEEPERS), from a
# subshell that cleanup can stop midway.
sleepers_start() {
	: >"$SLEEPERS"
	(
		i=0
		while [ $i -lt "$1" ]; do
			sleep 900 >/dev/null 2>&1 &
			echo $! >>"$SLEEPERS"
			i=$((i + 1))
		done
	) &
	SPAWNER=$!
	wait "$SPAWNER" || die "starting $1 sleep processes failed"
	SPAWNER=""
}

# Kill the sleep processes (orphans of the subshell: init reaps them).
sleepers_kill() {
	if [ -n "$SPAWNER" ]; then
		kill -TERM "$SPAWNER" 2>/dev/null || true
		wait "$SPAWNER" 2>/dev/null || true
		SPAWNER=""
	fi
	[ -s "$SLEEPERS" ] || return 0
	xargs kill -TERM <"$SLEEPERS" 2>/dev/null || true
	: >"$SLEEPERS"
}

# ---------------------------------------------------------- sections

# Memory: idle, with idle connections, under load, idle again.
section_memory() {
	say "== memory: RSS (KiB) of each daemon process"
	sleep 0.5
	record memory "$(mem_json idle)"
	mkfifo "$TMP/idle.in"
	"$SB_BENCH/sb_bench" idle -s "$SOCK" -j "$IDLE_CONNS" \
	    <"$TMP/idle.in" >"$TMP/idle.out" 2>>"$TMP/sb_bench.log" &
	ipid=$!
	HELPERS="$HELPERS $ipid"
	exec 9>"$TMP/idle.in"
	i=0
	until [ -s "$TMP/idle.out" ]; do
		kill -0 "$ipid" 2>/dev/null || { exec 9>&-; die "sb_bench idle failed: $(tail -n 2 "$TMP/sb_bench.log")"; }
		i=$((i + 1)); [ $i -lt 600 ] || die "idle connections: not open in 60 s"
		sleep 0.1
	done
	sleep 0.5
	record memory "$(mem_json idle_connections)" \
	    ". + {connections: $IDLE_CONNS, connect_ms: $(jq .connect_ms "$TMP/idle.out")}"
	exec 9>&-
	wait "$ipid" || die "sb_bench idle failed"
	# Under load: the largest RSS of each role while 8 clients call.
	bench throughput -e scripts/noop.sh -j 8 -t "$SCALE_SECONDS" -S load \
	    >"$TMP/load.out" &
	lpid=$!
	HELPERS="$HELPERS $lpid"
	: >"$TMP/load.rss"
	while kill -0 "$lpid" 2>/dev/null; do
		mem_json load >>"$TMP/load.rss"
		sleep 0.2
	done
	wait "$lpid" || die "load failed"
	record memory "$(jq -s -c '{bench: "memory", state: "load",
	    rss_kib: (map(.rss_kib | to_entries) | add | group_by(.key) |
	              map({(.[0].key): (map(.value) | max)}) | add)}' "$TMP/load.rss")" \
	    ". + {calls_per_s: $(jq .ours.per_second "$TMP/load.out")}"
	sleep 1
	record memory "$(mem_json idle_after_load)"
	jq -r '"  \(.state | . + " " * (18 - length))" +
	    (.rss_kib | to_entries | map("\(.key) \(.value)") | join("  "))' \
	    "$TMP/res/memory.jsonl"
	b0=$(jq -s '.[] | select(.state == "idle") | .rss_kib.broker' "$TMP/res/memory.jsonl")
	b1=$(jq -s '.[] | select(.state == "idle_connections") | .rss_kib.broker' "$TMP/res/memory.jsonl")
	PER_CONN=$(awk -v a="$b0" -v b="$b1" -v n="$IDLE_CONNS" 'BEGIN { printf "%.2f", (b - a) / n }')
	record memory "{\"bench\":\"memory\",\"state\":\"per_idle_connection\",\"broker_kib\":$PER_CONN,\"connections\":$IDLE_CONNS}"
	say "  broker: $PER_CONN KiB per idle connection ($IDLE_CONNS connections)"
	section_done memory
}

# latency POOL: no-op call against fork+exec and bwrap, interleaved.
section_latency() {
	if [ -n "$BWRAP" ]; then b="-b $BWRAP"; else b=""; fi
	# shellcheck disable=SC2086
	line=$(bench latency -e scripts/noop.sh -n "$N" -W "$WARMUP" -P "$PAUSE_MS" \
	    -S "lat-p$1" $b)
	record latency "$line" ". + {pool: $1}"
	printf '%s\n' "$line" | jq -r --arg p "$1" '"  pool \($p): ours p50 \(.ours.p50_ms) ms p99 \(.ours.p99_ms) ms | fork+exec p50 \(.fork_exec.p50_ms // "-") ms | bwrap p50 \(.bwrap.p50_ms // "-") ms p99 \(.bwrap.p99_ms // "-") ms | ours/bwrap p50 \(.ratio_bwrap_p50)x p99 \(.ratio_bwrap_p99)x, ours/fork+exec p50 \(.ratio_fork_p50)x"'
}

# throughput POOL: K clients against K parallel bwrap launch loops.
section_throughput() {
	if [ -n "$BWRAP" ]; then b="-b $BWRAP"; else b=""; fi
	for k in $CLIENTS; do
		# shellcheck disable=SC2086
		line=$(bench throughput -e scripts/noop.sh -j "$k" -t "$TP_SECONDS" -S "tp-p$1-$k" $b)
		record throughput "$line" ". + {pool: $1}"
		printf '%s\n' "$line" | jq -r --arg p "$1" '"  pool \($p), \(.clients) clients: ours \(.ours.per_second) calls/s (p50 \(.ours.latency.p50_ms // "-") ms) | bwrap \(.bwrap.per_second // "-")/s | ratio \(.ratio_bwrap)x"'
	done
}

# Pipelined authorize on 1 and 8 connections, AUTH_RUNS times in turn:
# what the machine's other load takes varies from run to run, and the
# daemon's capacity is the best run (every run is printed and kept).
section_authorize() {
	say "== authorize: pipelined, $WINDOW in flight per connection, $AUTH_RUNS run(s)"
	r=1
	while [ "$r" -le "$AUTH_RUNS" ]; do
		for c in 1 8; do
			line=$(bench authorize -e scripts/noop.sh -j "$c" -q "$WINDOW" -t "$AUTH_SECONDS")
			record authorize "$line" ". + {run: $r}"
			printf '%s\n' "$line" | jq -r --arg r "$r" '"  run \($r), \(.connections) connection(s): \(.per_second) decisions/s (\(.failed) failed)"'
		done
		r=$((r + 1))
	done
	section_done authorize
}

# Audit: fdatasyncs per call in the daemon, and auditd alone per flush.
section_audit() {
	say "== audit: fdatasyncs per call in the daemon (flush: data; counted by ${SYNC_TOOL:-nothing})"
	for c in 1 8; do
		count_syncs "$TMP/syncs" "$SB_BENCH/sb_bench" throughput -s "$SOCK" \
		    -d "$NOOP" -e scripts/noop.sh -w "$TMP/work" -j "$c" \
		    -t "$SCALE_SECONDS" -S "aud-$c" >"$TMP/aud.out" 2>>"$TMP/sb_bench.log"
		read -r fds fs <"$TMP/syncs"
		calls=$(jq .ours.calls "$TMP/aud.out")
		record audit "$(jq -c '.' "$TMP/aud.out")" \
		    "{bench: \"audit_daemon\", clients: $c, calls: $calls, calls_per_s: .ours.per_second,
		      counted_by: \"${SYNC_TOOL:-none}\", fdatasyncs: $fds, fsyncs: $fs,
		      fdatasyncs_per_call: $(ratio "$fds" "$calls")}"
		say "  $c client(s): $calls calls, $fds fdatasyncs, $(ratio "$fds" "$calls") per call"
	done
	say "== audit: records/s through auditd alone (audit_bench), ${AUDIT_SECONDS} s per run"
	AB=$TMP/abench
	mkdir -p "$AB/log" "$AB/state"
	chown nobody "$AB/log"
	chmod 750 "$AB/log"
	printf '  %-12s %10s %7s %9s   %10s %7s %9s\n' flush "1 in flight" ratio "syncs/rec" "32 in flight" ratio "syncs/rec"
	for mode in none incremental data sync; do
		row="  $(printf '%-12s' "$mode")"
		for w in 1 32; do
			rm -f "$AB"/log/audit.jsonl* "$AB/state/audit.head"
			set -- "$SB_BENCH/audit_bench" -a "$SB_BIN/skillbroker-auditd" \
			    -l "$AB/log/audit.jsonl" -H "$AB/state/audit.head" -F "$mode" \
			    -u "$(id -u nobody)" -g "$(id -g nobody)" -w "$w" -t "$AUDIT_SECONDS"
			if [ "$SYNC_TOOL" = perf ]; then
				perf stat -x, -o "$TMP/perf.ab" \
				    -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync \
				    -- "$@" >"$TMP/ab.out" 2>>"$AB/auditd.log" ||
					die "audit_bench failed: $(tail -n 3 "$AB/auditd.log")"
				syncs=$(awk -F, '/sys_enter_f(data)?sync/ { n += $1 } END { print n + 0 }' "$TMP/perf.ab")
			elif [ "$SYNC_TOOL" = strace ]; then
				strace -f -c -e trace=fdatasync,fsync -o "$TMP/strace.ab" \
				    -- "$@" >"$TMP/ab.out" 2>>"$AB/auditd.log" ||
					die "audit_bench failed: $(tail -n 3 "$AB/auditd.log")"
				syncs=$(awk '$NF == "fdatasync" || $NF == "fsync" { n += $4 } END { print n + 0 }' "$TMP/strace.ab")
			else
				"$@" >"$TMP/ab.out" 2>>"$AB/auditd.log" ||
					die "audit_bench failed: $(tail -n 3 "$AB/auditd.log")"
				syncs=null
			fi
			rate=$(jq .per_second "$TMP/ab.out")
			base=$rate
			recs=$(jq .records "$TMP/ab.out")
			[ "$mode" != none ] || eval "base_$w=\$rate"
			eval "base=\$base_$w"
			per=$(ratio "$syncs" "$recs")
			record audit "$(cat "$TMP/ab.out")" \
			    ". + {syncs: $syncs, syncs_per_record: $per, ratio_to_none: $(ratio "$rate" "$base")}"
			row="$row $(printf '%8s/s %6sx %9s' "$rate" "$(ratio "$rate" "$base")" "$per")  "
		done
		say "$row"
	done
	section_done audit
}

# scale_point KIND VALUE ENTRY [ARGS]: latency and 8-client throughput
# (ours only) now, kept in scale.raw; a base is measured before and
# after its points (scale_done).
scale_point() {
	kind=$1 value=$2 entry=$3
	shift 3
	lat=$(bench latency -F -e "$entry" -n "$SCALE_N" -W 3 -S "sc-lat" "$@")
	tp=$(bench throughput -e "$entry" -j 8 -t "$SCALE_SECONDS" -S "sc-tp" "$@")
	printf '%s %s %s %s %s\n' "$kind" "$value" \
	    "$(printf '%s\n' "$lat" | jq .ours.p50_ms)" \
	    "$(printf '%s\n' "$lat" | jq .ours.p99_ms)" \
	    "$(printf '%s\n' "$tp" | jq .ours.per_second)" >>"$TMP/scale.raw"
}

# scale_done KIND BASE: the points of KIND as ratios to the mean of its
# two base measurements (value BASE, before and after), recorded and
# printed.
scale_done() {
	awk -v k="$1" -v b="$2" '$1 == k && $2 == b { n++; p += $3; t += $5 }
	    END { printf "%.3f %.1f\n", p / n, t / n }' "$TMP/scale.raw" >"$TMP/scale.base"
	read -r bp bt <"$TMP/scale.base"
	awk -v k="$1" '$1 == k' "$TMP/scale.raw" | while read -r kind value p50 p99 tps; do
		record scaling "{}" "{bench: \"scaling\", kind: \"$kind\", value: $value,
		    latency_p50_ms: $p50, latency_p99_ms: $p99, calls_per_s: $tps,
		    base_p50_ms: $bp, base_calls_per_s: $bt,
		    ratio_latency: $(ratio "$p50" "$bp"), ratio_throughput: $(ratio "$tps" "$bt")}"
		printf '  %-7s %7s   p50 %8s ms  %6sx   %8s calls/s  %6sx\n' "$kind" \
		    "$value" "$p50" "$(ratio "$p50" "$bp")" "$tps" "$(ratio "$tps" "$bt")"
	done
}

# gen_skills N: N-1 more valid skills beside bench-noop.
gen_skills() {
	i=2
	while [ $i -le "$1" ]; do
		d=$SKILLS_DIR/bench-gen-$i
		mkdir -p "$d/scripts"
		printf -- '---\nname: bench-gen-%s\ndescription: A generated skill of the bench.\n---\n# bench-gen-%s\n' "$i" "$i" >"$d/SKILL.md"
		printf 'commands:\n  run: scripts/noop.sh\n' >"$d/skill.yaml"
		printf '#!/bin/sh\nexit 0\n' >"$d/scripts/noop.sh"
		i=$((i + 1))
	done
	find "$SKILLS_DIR" -path '*/bench-gen-*/scripts/noop.sh' -exec chmod 755 {} +
	chmod -R a+rX "$SKILLS_DIR"
}

# gen_rules N: N-1 rules ahead of the bench's own, 1000 to a file (half
# deny, half allow, each for a skill of its own, so none applies to the
# bench's calls and every call looks at them all).
gen_rules() {
	rm -f "$TMP"/policy.d/50-gen-*.yaml
	i=2
	while [ $i -le "$1" ]; do
		f=$TMP/policy.d/50-gen-$(printf '%03d' $((i / 1000))).yaml
		[ -e "$f" ] || echo "rules:" >"$f"
		if [ $((i % 2)) = 0 ]; then a=deny; else a=allow; fi
		printf '  - name: gen-%s\n    principals: ["*"]\n    skills: [bench-gen-%s]\n    action: %s\n' "$i" "$i" "$a" >>"$f"
		i=$((i + 1))
	done
	chmod 644 "$TMP"/policy.d/*.yaml
}

# scale_refused KIND VALUE: a point the daemon would not load.
scale_refused() {
	why=${RELOAD_MSG#*: }
	say "  $1 $2: refused by the daemon: $why"
	record scaling "{}" "{bench: \"scaling\", kind: \"$1\", value: $2, refused: $(printf '%s' "$why" | jq -R .)}"
}

# Scaling: each point against its base, measured before and after it.
section_scaling() {
	say "== scaling: no-op p50 over $SCALE_N calls and 8-client calls/s over $SCALE_SECONDS s; ratios to the mean of a base before and after"
	: >"$TMP/scale.raw"
	scale_point procs 0 scripts/noop.sh
	sleepers_start "$PROCS"
	scale_point procs "$PROCS" scripts/noop.sh
	sleepers_kill
	scale_point procs 0 scripts/noop.sh
	scale_done procs 0
	for n in $OUTPUT_SIZES; do
		scale_point output "$n" scripts/out.sh -c out -a "$n"
	done
	first=$(printf '%s\n' "$OUTPUT_SIZES" | awk '{ print $1 }')
	scale_point output "$first" scripts/out.sh -c out -a "$first"
	scale_done output "$first"
	scale_point skills 1 scripts/noop.sh
	gen_skills "$SKILLS"
	if daemon_reload; then
		scale_point skills "$SKILLS" scripts/noop.sh
	else
		scale_refused skills "$SKILLS"
	fi
	rm -rf "$SKILLS_DIR"/bench-gen-*
	daemon_reload || die "reload back to one skill failed: $RELOAD_MSG"
	scale_point skills 1 scripts/noop.sh
	scale_done skills 1
	scale_point rules 1 scripts/noop.sh
	for r in $RULES; do
		gen_rules "$r"
		if daemon_reload; then
			scale_point rules "$r" scripts/noop.sh
		else
			scale_refused rules "$r"
		fi
	done
	rm -f "$TMP"/policy.d/50-gen-*.yaml
	daemon_reload || die "reload back to one rule failed: $RELOAD_MSG"
	scale_point rules 1 scripts/noop.sh
	scale_done rules 1
	section_done scaling
}

# ---------------------------------------------------------- the run

T0=$(date +%s)
say "bench: worker uids $UID_FIRST-$UID_LAST; bwrap ${BWRAP:-none}; syncs counted by ${SYNC_TOOL:-nothing}$( [ "$QUICK" != 1 ] || echo '; quick mode')"
daemon_start main 0 || die "the daemon did not start: $(cat "$TMP/main/check.log")"
! bench_in memory || section_memory
if bench_in latency; then
	say "== latency: no-op call, $N rounds interleaved (+$WARMUP warm-up), $PAUSE_MS ms idle after each sample"
	section_latency 0
fi
if bench_in throughput; then
	say "== throughput: K clients (own connection and session) vs K parallel bwrap loops, ${TP_SECONDS} s each"
	section_throughput 0
fi
! bench_in authorize || section_authorize
! bench_in audit || section_audit
! bench_in scaling || section_scaling
daemon_stop

POOL_OK=""
if [ "$POOL" -gt 0 ] && { bench_in latency || bench_in throughput; }; then
	if daemon_start pool "$POOL"; then
		POOL_OK=1
		say "== warm pool: worker: {pool: $POOL}"
		! bench_in latency || section_latency "$POOL"
		! bench_in throughput || section_throughput "$POOL"
		daemon_stop
	else
		why=$(cat "$TMP/pool/check.log" "$TMP/pool/daemon.log" 2>/dev/null | head -n 1)
		say "pool: not supported by this build (${why#*: })"
	fi
fi
section_done latency
section_done throughput
T1=$(date +%s)

# ---------------------------------------------------------- summary

# q SECTION FILTER: a figure from a section's results ("null" if none).
q() {
	[ -s "$TMP/res/$1.jsonl" ] || { echo null; return; }
	jq -s -r "$2 // null" "$TMP/res/$1.jsonl" 2>/dev/null || echo null
}

# row TARGET GOAL MEASURED VERDICT (a figure of null: not measured)
row() {
	case $3 in
	null*) printf '%-44s %-12s %-44s %s\n' "$1" "$2" "not measured" "n/a" ;;
	*) printf '%-44s %-12s %-44s %s\n' "$1" "$2" "$3" "$4" ;;
	esac
}

# judge VALUE OP LIMIT: pass, miss, or n/a.
judge() {
	[ "$1" != null ] || { echo "n/a"; return; }
	awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN {
		ok = (op == "le") ? (v <= l) : (v >= l); print ok ? "pass" : "miss" }'
}

lat0=$(q latency '.[] | select(.pool == 0) | .ratio_bwrap_p50')
lat0_ms=$(q latency '.[] | select(.pool == 0) | "\(.ours.p50_ms) / \(.bwrap.p50_ms) ms"')
latp=$(q latency ".[] | select(.pool == $POOL and $POOL > 0) | .ratio_bwrap_p50")
latp_ms=$(q latency ".[] | select(.pool == $POOL and $POOL > 0) | \"\(.ours.p50_ms) / \(.bwrap.p50_ms) ms\"")
tp8=$(q throughput '.[] | select(.pool == 0 and .clients == 8) | .ratio_bwrap')
tp8_s=$(q throughput '.[] | select(.pool == 0 and .clients == 8) | "\(.ours.per_second) / \(.bwrap.per_second) calls/s"')
tp8r=$(q throughput '.[] | select(.pool == 0 and .clients == 8) | .ours.per_second')
tp8p=$(q throughput ".[] | select(.pool == $POOL and $POOL > 0 and .clients == 8) | .ratio_bwrap")
tp8p_s=$(q throughput ".[] | select(.pool == $POOL and $POOL > 0 and .clients == 8) | \"\(.ours.per_second) / \(.bwrap.per_second) calls/s\"")
tp8pr=$(q throughput ".[] | select(.pool == $POOL and $POOL > 0 and .clients == 8) | .ours.per_second")
auth=$(q authorize 'map(.per_second) | max')
auth_s=$(q authorize 'group_by(.connections) | map("\(.[0].connections)c \(map(.per_second | floor | tostring) | join(" "))") | join(", ")')
idle=$(q memory '.[] | select(.state == "idle") | .rss_kib.broker')
idle2=$(q memory '.[] | select(.state == "idle_after_load") | .rss_kib.broker')
perc=$(q memory '.[] | select(.state == "per_idle_connection") | .broker_kib')

say ""
say "== summary (issue 13 targets; $((T1 - T0)) s)"
row target goal measured result
row "no-op p50 vs bwrap, pool off" "<= 1.0x" "${lat0}x ($lat0_ms)" "$(judge "$lat0" le 1.0)"
if [ -n "$POOL_OK" ]; then
	row "no-op p50 vs bwrap, pool $POOL" "<= 0.5x" "${latp}x ($latp_ms)" "$(judge "$latp" le 0.5)"
elif [ "$POOL" = 0 ]; then
	row "no-op p50 vs bwrap, warm pool" "<= 0.5x" "not run (BENCH_POOL=0)" "n/a"
else
	row "no-op p50 vs bwrap, warm pool" "<= 0.5x" "pool: not supported by this build" "n/a"
fi
row "8 clients vs 8 parallel bwrap, pool off" ">= 1.0x" "${tp8}x ($tp8_s)" "$(judge "$tp8" ge 1.0)"
row "8 clients calls/s, pool off (stretch)" ">= 500/s" "$tp8r/s" "$(judge "$tp8r" ge 500)"
if [ -n "$POOL_OK" ]; then
	row "8 clients vs 8 parallel bwrap, pool $POOL" ">= 1.0x" "${tp8p}x ($tp8p_s)" "$(judge "$tp8p" ge 1.0)"
	row "8 clients calls/s, pool $POOL (stretch)" ">= 500/s" "$tp8pr/s" "$(judge "$tp8pr" ge 500)"
fi
row "authorize pipelined (best run, 1 or 8 conns)" ">= 50000/s" "$auth/s ($auth_s)" "$(judge "$auth" ge 50000)"
row "broker idle RSS" "<= 4096 KiB" "$idle KiB (after load: $idle2 KiB)" "$(judge "$idle" le 4096)"
row "broker per idle connection" "<= 16 KiB" "$perc KiB" "$(judge "$perc" le 16)"
say "results: $RESULTS/*.json"
