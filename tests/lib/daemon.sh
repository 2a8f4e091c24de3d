# tests/lib/daemon.sh (sourced by every bash test suite): the plumbing
# the suites share. A suite names itself, claims a worker uid slot, makes
# its temp dir, writes its daemon config here (the ONLY place that knows
# the daemon's config keys), starts and stops the daemon, calls skillctl,
# waits for what it can observe, and lets the runner count its tests.
#
#   sb_init NAME                  checks (root, binaries, jq), traps; call first
#   sb_tmpdir NAME                SB_TMP: a new /tmp/NAME.XXXXXX (0755), removed at exit
#   sb_config FILE [KEY: VAL...]  write the daemon config FILE; set SB_CONF, SB_DIR,
#                                 SB_SOCK, SB_STATE, SB_AUDIT, SB_LOG
#   sb_start / sb_stop / sb_restart / sb_daemon_exits TIMEOUT
#   sb_ctl ARGS... / sb_ctl_as UID ARGS...   skillctl: OUT, RC
#   sb_poll TIMEOUT CMD...        poll CMD every 50 ms until it succeeds
#   sb_wait_for TIMEOUT DESC CMD...   the same; fails the test with DESC on timeout
#   sb_never TIMEOUT DESC CMD...  fails the test with DESC if CMD succeeds within TIMEOUT
#   sb_fail / sb_eq / sb_contains / sb_expect / sb_j / sb_jq_expect   assertions
#   sb_recs / sb_has_rec          audit records matching a jq select expression
#   sb_bg_add / sb_bg_kill PID [SIG] / sb_bg_wait PID   background helpers, killed at exit
#   sb_worker_procs / sb_daemon_procs / sb_orphan_roles / sb_call_cgroups [PID...]
#   sb_loop_devices / sb_mounts   what a daemon may leave behind
#   sb_have / sb_require / sb_skip    host-ability probes and skips
#   sb_run_tests [TEST...]        the runner: ok / not ok / skip lines and a count
#
# Environment: SB_BIN (the programs, default <repo>/bin), KEEP_TMP=1
# (keep the temp dir), SB_VERBOSE=1 (each test's duration; SB_IT_VERBOSE
# and SB_ESCAPE_VERBOSE too), SB_STRICT=1 (count SB_KNOWN_BUGS as failures).
#
# Run by hand, `bash tests/lib/daemon.sh probe` prints what each probe
# finds on this host.

SB_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SB_ROOT=$(cd "$SB_LIB/../.." && pwd)
SB_BIN=${SB_BIN:-$SB_ROOT/bin}
. "$SB_LIB/uids.sh"

SB_SUITE=${SB_SUITE:-test}
SB_TMP=""          # the suite's temp dir
SB_TMPDIRS=""      # every temp dir made by sb_tmpdir
SB_CONF="" SB_DIR="" SB_SOCK="" SB_STATE="" SB_AUDIT="" SB_LOG=""
SB_DPID=""         # the master (skillbrokerd) of the running daemon
SB_MASTERS=""      # every master sb_start started (their cgroups are named after them)
# In the environment of every daemon this run starts: the master passes
# its environment on to its roles and workers, so sb_daemon_procs tells
# this run's processes from another suite's beside it.
SB_MARK=SB_HARNESS_MARK=sb$$.$RANDOM
SB_LAUNCH_PID=""   # our child that runs it: the master, or SB_DAEMON_WRAP
SB_BG_PIDS=""      # helpers started in the background (sb_bg_add)
SB_STOP_RC="" SB_STOP_MS=0 SB_EXIT_RC=""
SB_CLEANUP_HOOK="" # suite function run at exit, after the daemon stopped
WHY="" SB_SKIP=""
SB_VERBOSE=${SB_VERBOSE:-${SB_IT_VERBOSE:-${SB_ESCAPE_VERBOSE:-}}}

# Suites may set, before sb_config or sb_start:
#   SB_SKILLS_DIR, SB_POLICY_DIR   absolute (default $SB_TMP/skills, $SB_TMP/policy.d)
#   SB_TIMEOUT_MS SB_MAX_TIMEOUT_MS SB_OUTPUT_BYTES SB_MEMORY_MB SB_PIDS
#   SB_FSIZE_MB SB_NOFILE SB_MAX_FRAME_BYTES   the daemon's limits
#   SB_DAEMON_WRAP=(CMD ARGS...)   run the master under CMD (which exits as it does)
#   SB_DAEMON_PIDFILE              where CMD writes the master's pid
#   SB_START_TIMEOUT (s, 10), SB_STOP_TIMEOUT (s, 5), SB_CTL_TIMEOUT (s, 20)
SB_DAEMON_WRAP=()
SB_DAEMON_PIDFILE=""

sb_now_ms() {
	local t=${EPOCHREALTIME/,/.}
	echo $((${t%.*} * 1000 + 10#${t#*.} / 1000))
}

# ------------------------------------------------------------- set-up

sb_init() {
	local f
	SB_SUITE=$1
	if [ "$(id -u)" != 0 ]; then
		echo "$SB_SUITE: must run as root (the master runs as root)" >&2
		exit 2
	fi
	for f in skillbrokerd skillctl skillbroker-broker skillbroker-policyd \
	    skillbroker-auditd skillbroker-worker; do
		if [ ! -x "$SB_BIN/$f" ]; then
			echo "$SB_SUITE: $SB_BIN/$f missing; run make all" >&2
			exit 2
		fi
	done
	for f in jq pgrep ps timeout; do
		command -v "$f" >/dev/null 2>&1 ||
		    { echo "$SB_SUITE: $f missing; run scripts/install-deps" >&2; exit 2; }
	done
	trap sb_cleanup EXIT
	trap 'exit 130' INT TERM
}

sb_tmpdir() {
	SB_TMP=$(mktemp -d "/tmp/$1.XXXXXX") ||
	    { echo "$SB_SUITE: mktemp failed" >&2; exit 2; }
	SB_TMPDIRS="$SB_TMPDIRS $SB_TMP"
	chmod 755 "$SB_TMP"        # workers and the privsep user traverse it
}

# sb_config FILE [KEY: VALUE...]: the daemon config of a daemon whose
# socket, state and audit log live in FILE's directory. Each extra line
# is "KEY: VALUE" at the top level, or "SECTION.KEY: VALUE" inside a
# section (audit, worker, limits); an extra line replaces a default of
# the same key. Sets SB_CONF, SB_DIR, SB_SOCK, SB_STATE, SB_AUDIT, SB_LOG.
sb_config() {
	local file=$1 dir x k v i sec last=""
	local -a keys=() vals=()
	shift
	mkdir -p "$(dirname "$file")"
	dir=$(cd "$(dirname "$file")" && pwd)
	_sb_cfg() {
		for i in "${!keys[@]}"; do
			[ "${keys[$i]}" != "$1" ] || { vals[$i]=$2; return; }
		done
		keys+=("$1")
		vals+=("$2")
	}
	_sb_cfg socket "$dir/sb.sock"
	_sb_cfg skills_dirs "[${SB_SKILLS_DIR:-$SB_TMP/skills}]"
	_sb_cfg policy_dir "${SB_POLICY_DIR:-$SB_TMP/policy.d}"
	_sb_cfg state_dir "$dir/state"
	_sb_cfg audit.path "$dir/log/audit.jsonl"
	_sb_cfg worker.uids "[${UID_FIRST:?claim_uids first}, $UID_LAST]"
	_sb_cfg limits.timeout_ms "${SB_TIMEOUT_MS:-10000}"
	_sb_cfg limits.max_timeout_ms "${SB_MAX_TIMEOUT_MS:-60000}"
	_sb_cfg limits.output_bytes "${SB_OUTPUT_BYTES:-65536}"
	_sb_cfg limits.memory_mb "${SB_MEMORY_MB:-256}"
	_sb_cfg limits.pids "${SB_PIDS:-64}"
	_sb_cfg limits.fsize_mb "${SB_FSIZE_MB:-64}"
	_sb_cfg limits.nofile "${SB_NOFILE:-64}"
	_sb_cfg max_frame_bytes "${SB_MAX_FRAME_BYTES:-1048576}"
	for x in "$@"; do
		if ! [[ $x =~ ^([a-z_]+(\.[a-z_]+)?):\ (.+)$ ]]; then
			echo "$SB_SUITE: sb_config: '$x' is not 'KEY: VALUE'" >&2
			return 1
		fi
		_sb_cfg "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}"
	done
	unset -f _sb_cfg
	{
		echo "# $SB_SUITE test daemon (written by tests/lib/daemon.sh)"
		# sections grouped, in the order of their first key
		for i in "${!keys[@]}"; do
			k=${keys[$i]}
			v=${vals[$i]}
			case $k in
			*.*) sec=${k%%.*} ;;
			*) echo "$k: $v"; continue ;;
			esac
			case " $last " in *" $sec "*) continue ;; esac
			last="$last $sec"
			echo "$sec:"
			for x in "${!keys[@]}"; do
				[ "${keys[$x]%%.*}" = "$sec" ] && [ "${keys[$x]}" != "$sec" ] &&
				    echo "  ${keys[$x]#*.}: ${vals[$x]}"
			done
		done
	} >"$file"
	chmod 644 "$file"
	SB_CONF=$file
	SB_DIR=$dir
	SB_SOCK=$dir/sb.sock
	SB_STATE=$dir/state
	SB_AUDIT=$dir/log/audit.jsonl
	SB_LOG=$dir/daemon.log
}

# ----------------------------------------------------------- the daemon

_sb_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
_sb_gone() { ! kill -0 "$1" 2>/dev/null; }
_sb_hello() {
	[ -S "$SB_SOCK" ] && timeout 5 "$SB_BIN/skillctl" -s "$SB_SOCK" hello \
	    >/dev/null 2>&1
}
# Done waiting: the daemon answers, or it is gone.
_sb_up_or_dead() { _sb_hello || ! _sb_alive "$SB_DPID"; }

# Start the master on SB_CONF in the background (stderr to SB_LOG) and
# wait until it answers hello, at most SB_START_TIMEOUT s. On failure
# prints the daemon's log, fails the test and returns 1.
sb_start() {
	local t=${SB_START_TIMEOUT:-10}
	if [ -n "$SB_DPID" ]; then
		sb_fail "sb_start: a daemon runs already (pid $SB_DPID)"
		return 1
	fi
	[ -z "$SB_DAEMON_PIDFILE" ] || rm -f "$SB_DAEMON_PIDFILE"
	env "$SB_MARK" "${SB_DAEMON_WRAP[@]}" "$SB_BIN/skillbrokerd" -d -f "$SB_CONF" \
	    2>>"$SB_LOG" &
	SB_LAUNCH_PID=$!
	SB_DPID=$SB_LAUNCH_PID
	if [ -n "$SB_DAEMON_PIDFILE" ]; then
		SB_DPID=""
		sb_poll 5 test -s "$SB_DAEMON_PIDFILE" &&
		    SB_DPID=$(cat "$SB_DAEMON_PIDFILE")
	fi
	[ -z "$SB_DPID" ] || SB_MASTERS="$SB_MASTERS $SB_DPID"
	if [ -n "$SB_DPID" ] && sb_poll "$t" _sb_up_or_dead && _sb_hello; then
		return 0
	fi
	echo "# $SB_SUITE: the daemon did not answer within $t s; its log ($SB_LOG):"
	tail -n 20 "$SB_LOG" 2>/dev/null | sed 's/^/#   /'
	sb_stop
	sb_fail "the daemon did not start"
}

# SIGTERM the master, wait at most SB_STOP_TIMEOUT s, then SIGKILL. Sets
# SB_STOP_RC (the exit status of our child, or "hung") and SB_STOP_MS.
sb_stop() {
	local t0 rc
	SB_STOP_RC=""
	SB_STOP_MS=0
	[ -n "$SB_LAUNCH_PID" ] || { SB_DPID=""; return 0; }
	t0=$(sb_now_ms)
	if [ -n "$SB_DPID" ]; then
		kill -TERM "$SB_DPID" 2>/dev/null
		if ! sb_poll "${SB_STOP_TIMEOUT:-5}" _sb_gone "$SB_DPID"; then
			SB_STOP_RC=hung
			kill -KILL "$SB_DPID" 2>/dev/null
		fi
	else
		kill -KILL "$SB_LAUNCH_PID" 2>/dev/null
	fi
	wait "$SB_LAUNCH_PID" 2>/dev/null
	rc=$?
	SB_STOP_RC=${SB_STOP_RC:-$rc}
	SB_STOP_MS=$(($(sb_now_ms) - t0))
	SB_DPID="" SB_LAUNCH_PID=""
	return 0
}

# Stop, kill whatever of ours outlived the daemon (but not the suite's
# background helpers), start again.
sb_restart() {
	local p
	sb_stop
	for p in $(sb_our_pids); do
		case " $SB_BG_PIDS " in *" $p "*) continue ;; esac
		kill -KILL "$p" 2>/dev/null
	done
	sb_start
}

# The daemon is to stop by itself: wait at most TIMEOUT s for it. 0 and
# SB_EXIT_RC (its exit status) when it did; 1 when it still runs.
sb_daemon_exits() {
	SB_EXIT_RC=""
	sb_poll "$1" _sb_gone "$SB_DPID" || return 1
	wait "$SB_LAUNCH_PID" 2>/dev/null
	SB_EXIT_RC=$?
	SB_DPID="" SB_LAUNCH_PID=""
}

# Processes whose argv mentions one of our temp dirs (all started by us),
# and roles of our daemons whose master is gone (sb_orphan_roles).
sb_our_pids() {
	local d
	for d in $SB_TMPDIRS; do
		case $d in
		/tmp/?*) pgrep -f -- "$d/" | grep -vx "$$" ;;
		esac
	done
	sb_orphan_roles
}

# Roles of the daemons this run started whose master is gone
# (reparented: nobody's any more), one pid a line. Another suite's
# daemons, beside this one, are not ours to judge.
sb_orphan_roles() {
	local p rest
	sb_daemon_procs | while read -r p rest; do
		case $rest in skillbroker-broker* | skillbroker-policyd* | skillbroker-auditd*) ;; *) continue ;; esac
		[ "$(ps -o ppid= -p "$p" | tr -d ' ')" != 1 ] || echo "$p"
	done
	return 0
}

# The pid of a role of our daemon: its child, named by argv[0].
sb_role_pid() {
	[ -n "${SB_DPID:-}" ] || return 0
	pgrep -P "$SB_DPID" -f -- "^skillbroker-$1( |\$)" | head -n 1
}

# The uid a role runs as: its user's when installed, else the fallback
# (users.* of docs/config.md).
sb_role_uid() {
	case $1 in
	broker) id -u _sb-broker 2>/dev/null || echo 64290 ;;
	policyd) id -u _sb-policyd 2>/dev/null || echo 64291 ;;
	auditd) id -u _sb-auditd 2>/dev/null || echo 64292 ;;
	netproxy) id -u _sb-netproxy 2>/dev/null || echo 64293 ;;
	esac
}

# Live processes of our worker uids: "uid pid args" (zombies are dead
# already; their parent may be a slow init).
sb_worker_procs() {
	[ -n "${UID_FIRST:-}" ] || return 0
	ps -eo uid=,pid=,stat=,args= | awk -v a="$UID_FIRST" -v b="$UID_LAST" \
	    '$1 >= a && $1 <= b && $3 !~ /^Z/ { $3 = ""; print }'
}
sb_no_worker_procs() { [ -z "$(sb_worker_procs)" ]; }

# Live processes of the daemons this run started (masters, roles,
# workers; not the skills, whose environment is their own): "pid args".
sb_daemon_procs() {
	local f p
	for f in $(grep -lsazx -- "$SB_MARK" /proc/[0-9]*/environ); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" != "$$" ] || continue
		printf '%s %s\n' "$p" "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
	done
	return 0
}
sb_no_daemon_procs() { [ -z "$(sb_daemon_procs)" ]; }

# The per-call cgroups (m<masterpid>.c<N>, lib/cgroup.c) of the masters
# PID... (default: every master sb_start started) that exist now, one
# path a line: under the v1 memory and pids hierarchies and cgroup v2,
# below our own group (the master's, as it inherits ours).
sb_call_cgroups() {
	local pids="${*:-$SB_MASTERS}" base p d
	[ -n "${pids// /}" ] || return 0
	for base in $(_sb_cgroup_bases); do
		for p in $pids; do
			for d in "$base"/m"$p".c*; do
				[ -d "$d" ] && echo "$d"
			done
		done
	done
	return 0
}
# Where the master makes its groups: <hierarchy><our group>/skillbroker.
_sb_cgroup_bases() {
	local own
	own=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup)
	echo "/sys/fs/cgroup/memory${own%/}/skillbroker"
	own=$(sed -n 's/^[0-9]*:pids:\(.*\)$/\1/p' /proc/self/cgroup)
	echo "/sys/fs/cgroup/pids${own%/}/skillbroker"
	own=$(sed -n 's/^0::\(.*\)$/\1/p' /proc/self/cgroup)
	echo "/sys/fs/cgroup${own%/}/skillbroker"
	echo "/sys/fs/cgroup/unified${own%/}/skillbroker"
}

# Loop devices backed by a file under our temp dirs (a data dir image
# of a daemon of ours), "DEVICE FILE" a line.
sb_loop_devices() {
	local f b d
	for f in /sys/block/loop*/loop/backing_file; do
		[ -r "$f" ] || continue
		b=$(cat "$f" 2>/dev/null)
		for d in $SB_TMPDIRS; do
			case $b in "$d"/*) d=${f#/sys/block/}; echo "/dev/${d%%/*} $b" ;; esac
		done
	done
	return 0
}

# The host's mounts as this process sees them, "MOUNT_POINT FSTYPE
# SOURCE" sorted, leaving out those under other suites' temp dirs
# (/tmp/NAME.XXXXXX that are not ours), so a suite that runs beside
# another can compare snapshots.
sb_mounts() {
	awk -v ours="$SB_TMPDIRS" '
	BEGIN { n = split(ours, o, " ") }
	{
		for (i = 7; $i != "-"; i++) ;
		mp = $5
		if (mp ~ /^\/tmp\/[^\/]+\.[A-Za-z0-9]+(\/|$)/) {
			mine = 0
			for (j = 1; j <= n; j++)
				if (mp == o[j] || index(mp, o[j] "/") == 1)
					mine = 1
			if (!mine)
				next
		}
		print mp, $(i + 1), $(i + 2)
	}' /proc/self/mountinfo | sort
}

# --------------------------------------------------------------- clients

# skillctl on the daemon's socket, bounded by SB_CTL_TIMEOUT s: OUT is
# its stdout, RC its exit status, its stderr goes to SB_DIR/ctl.err.
sb_ctl() {
	OUT=$(timeout "${SB_CTL_TIMEOUT:-20}" "$SB_BIN/skillctl" -s "$SB_SOCK" \
	    "$@" 2>"$SB_DIR/ctl.err")
	RC=$?
}

# The same as another uid (and its gid, no supplementary groups).
sb_ctl_as() {
	local uid=$1
	shift
	OUT=$(timeout "${SB_CTL_TIMEOUT:-20}" setpriv --reuid="$uid" \
	    --regid="$uid" --clear-groups "$SB_BIN/skillctl" -s "$SB_SOCK" \
	    "$@" 2>"$SB_DIR/ctl.err")
	RC=$?
}

# Audit records (compact JSON, one a line) of SB_AUDIT, or FILE, that
# match a jq select expression.
sb_recs() { jq -c "select($1)" "${2:-$SB_AUDIT}" 2>/dev/null; }
sb_has_rec() { [ -n "$(sb_recs "$@" | head -n 1)" ]; }

# ------------------------------------------------------------- waiting

# sb_poll TIMEOUT_S CMD...: run CMD (in this shell) every 50 ms until it
# succeeds; 1 when TIMEOUT_S (may be fractional) passed first.
sb_poll() {
	local end
	end=$(($(sb_now_ms) + ${1%.*} * 1000 + $(_sb_frac_ms "$1")))
	shift
	while :; do
		"$@" && return 0
		[ "$(sb_now_ms)" -lt "$end" ] || return 1
		sleep 0.05     # the poll interval
	done
}
_sb_frac_ms() {
	case $1 in
	*.*) local f=${1#*.}000; echo $((10#${f:0:3})) ;;
	*) echo 0 ;;
	esac
}

# sb_wait_for TIMEOUT_S DESC CMD...: sb_poll, and on a timeout the test
# fails with "DESC".
sb_wait_for() {
	local t=$1 desc=$2
	shift 2
	sb_poll "$t" "$@" || sb_fail "$desc (waited ${t} s)"
}

# sb_never TIMEOUT_S DESC CMD...: something must NOT happen: CMD is
# checked every 50 ms for TIMEOUT_S; the test fails with DESC as soon as
# it succeeds. An explicit bounded wait: it always takes TIMEOUT_S when
# all is well.
sb_never() {
	local t=$1 desc=$2
	shift 2
	if sb_poll "$t" "$@"; then
		sb_fail "$desc"
		return 1
	fi
	return 0
}

# ------------------------------------------------------------ assertions

# Record a failure reason; the test goes on to report them all.
sb_fail() { WHY="${WHY:+$WHY; }$*"; return 1; }

# At most 300 characters of a value, for failure messages.
sb_short() {
	if [ "${#1}" -gt 300 ]; then
		printf '%s...(%d bytes)' "${1:0:300}" "${#1}"
	else
		printf '%s' "$1"
	fi
}

# sb_eq DESC GOT WANT
sb_eq() {
	[ "$2" = "$3" ] ||
	    sb_fail "$1: got '$(sb_short "$2")', want '$(sb_short "$3")'"
}

# sb_contains DESC TEXT PART
sb_contains() {
	case $2 in *"$3"*) return 0 ;; esac
	sb_fail "$1: '$(sb_short "$2")' lacks '$3'"
}

# sb_expect DESC CMD...: CMD must succeed.
sb_expect() {
	local desc=$1
	shift
	"$@" || sb_fail "$desc"
}

# A field of the JSON in $OUT (jq -r), "JQERR" when $OUT is not JSON.
sb_j() { printf '%s' "$OUT" | jq -r "$1" 2>/dev/null || echo JQERR; }

# sb_jq_expect JSON FILTER DESC: jq -e FILTER must hold on JSON.
sb_jq_expect() {
	printf '%s' "$1" | jq -e "$2" >/dev/null 2>&1 ||
	    sb_fail "$3: $(sb_short "$1")"
}

# ------------------------------------------------------ background helpers

sb_bg_add() { SB_BG_PIDS="$SB_BG_PIDS $*"; }
_sb_bg_forget() {
	local p keep=""
	for p in $SB_BG_PIDS; do
		[ "$p" = "$1" ] || keep="$keep $p"
	done
	SB_BG_PIDS=$keep
}
# Wait for a helper to end; its exit status in SB_BG_RC.
sb_bg_wait() {
	wait "$1" 2>/dev/null
	SB_BG_RC=$?
	_sb_bg_forget "$1"
	return 0
}
sb_bg_kill() {
	kill "${2:--TERM}" "$1" 2>/dev/null
	sb_bg_wait "$1"
}

# ------------------------------------------------------- host abilities

# sb_have ABILITY: 0 when this host can do it outside any sandbox; the
# finding in SB_HAVE_WHY. Abilities: i386 (int $0x80 syscalls), x32 (x32
# syscalls), landlock, cgroups (memory and pids controllers).
sb_have() {
	local var=SB_PROBE_${1}
	if [ -z "${!var:-}" ]; then
		case $1 in
		i386 | x32 | landlock | landlock_scope) _sb_hostprobe "$1" ;;
		cgroups) _sb_probe_cgroups ;;
		*) echo "$SB_SUITE: sb_have: no probe for '$1'" >&2; return 2 ;;
		esac
		printf -v "$var" '%s %s' "$?" "$SB_HAVE_WHY"
	fi
	SB_HAVE_WHY=${!var#* }
	[ "${!var%% *}" = 0 ]
}

_sb_hostprobe() {
	local bin=${SB_TMP:-/tmp}/.hostprobe.$$
	if [ ! -x "$bin" ] && ! "${CC:-cc}" -O2 -o "$bin" "$SB_LIB/hostprobe.c" \
	    2>"$bin.err"; then
		SB_HAVE_WHY="cannot build the probe: $(head -c 200 "$bin.err")"
		rm -f "$bin.err"
		return 1
	fi
	rm -f "$bin.err"
	SB_HAVE_WHY=$("$bin" "$1" 2>&1)
}

# Memory and pids cgroup controllers: a cgroup v2 mount whose
# cgroup.controllers (of our own group, or its root) lists both, or v1
# memory and pids hierarchies.
_sb_probe_cgroups() {
	local own dev mnt type opts rest f v1mem="" v1pids=""
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	while read -r dev mnt type opts rest; do
		case $type in
		cgroup2)
			for f in "$mnt${own%/}/cgroup.controllers" "$mnt/cgroup.controllers"; do
				[ -r "$f" ] || continue
				if grep -qw memory "$f" && grep -qw pids "$f"; then
					SB_HAVE_WHY="cgroup v2 with memory and pids at $mnt"
					return 0
				fi
			done
			;;
		cgroup)
			case ,$opts, in *,memory,*) v1mem=$mnt ;; esac
			case ,$opts, in *,pids,*) v1pids=$mnt ;; esac
			;;
		esac
	done </proc/self/mounts
	if [ -n "$v1mem" ] && [ -n "$v1pids" ]; then
		SB_HAVE_WHY="cgroup v1 memory at $v1mem and pids at $v1pids"
		return 0
	fi
	SB_HAVE_WHY="no memory and pids cgroup controllers (neither cgroup v2 with both in cgroup.controllers nor v1 memory and pids hierarchies are mounted)"
	return 1
}

# In a test: skip it with a reason. sb_skip REASON || return
sb_skip() { SB_SKIP=$*; return 1; }

# In a test: sb_require ABILITY || return   skips the test, with the
# probe's finding as the reason, when the host lacks ABILITY.
sb_require() {
	local what
	sb_have "$1" && return 0
	case $1 in
	i386) what="i386 syscalls (int \$0x80)" ;;
	x32) what="x32 syscalls" ;;
	landlock) what="Landlock" ;;
	landlock_scope) what="Landlock scoping of abstract unix sockets" ;;
	cgroups) what="memory and pids cgroups" ;;
	esac
	sb_skip "the host has no $what even outside any sandbox: $SB_HAVE_WHY"
}

# ---------------------------------------------------------------- runner

# Suites may set:
#   SB_TESTS          the tests sb_run_tests runs when given none
#   SB_BEFORE_EACH    a function called with the test's name first; when
#                     it fails the test does not run and fails
#   SB_AFTER_EACH     a function called with the test's name after it
#                     (not after a skip)
#   SB_KNOWN_BUGS     tests that show a daemon bug not fixed yet: their
#                     failures are printed "# TODO" and not counted
#                     (SB_STRICT=1 counts them)
SB_TESTS="" SB_BEFORE_EACH="" SB_AFTER_EACH="" SB_KNOWN_BUGS=""
SB_PASSED=0 SB_FAILED=0 SB_SKIPPED=0 SB_KNOWN=0

_sb_run_one() {
	local name=$1 t0 rc=0
	WHY="" SB_SKIP=""
	t0=$(sb_now_ms)
	if ! declare -F "$name" >/dev/null; then
		sb_fail "no such test"
	elif [ -n "$SB_BEFORE_EACH" ] && ! "$SB_BEFORE_EACH" "$name"; then
		[ -n "$WHY" ] || sb_fail "$SB_BEFORE_EACH failed"
	else
		"$name"
		rc=$?
		[ -n "$SB_SKIP" ] || [ -z "$SB_AFTER_EACH" ] || "$SB_AFTER_EACH" "$name"
	fi
	[ -z "$SB_VERBOSE" ] || echo "# $name: $(($(sb_now_ms) - t0)) ms"
	# A test fails by a reason (sb_fail) or by returning non-zero.
	[ "$rc" = 0 ] || [ -n "$WHY" ] || [ -n "$SB_SKIP" ] ||
	    WHY="returned $rc without a reason"
	if [ -z "$WHY" ] && [ -n "$SB_SKIP" ]; then
		echo "skip - $name: $SB_SKIP"
		SB_SKIPPED=$((SB_SKIPPED + 1))
	elif [ -z "$WHY" ]; then
		case " $SB_KNOWN_BUGS " in
		*" $name "*) echo "ok - $name # TODO the known daemon bug" \
		    "seems fixed: take $name out of SB_KNOWN_BUGS" ;;
		*) echo "ok - $name" ;;
		esac
		SB_PASSED=$((SB_PASSED + 1))
	elif [ -z "${SB_STRICT:-${SB_IT_STRICT:-}}" ] &&
	    [[ " $SB_KNOWN_BUGS " == *" $name "* ]]; then
		echo "not ok - $name # TODO known daemon bug, not counted: $WHY"
		SB_KNOWN=$((SB_KNOWN + 1))
	else
		echo "not ok - $name: $WHY"
		SB_FAILED=$((SB_FAILED + 1))
		if [ -s "$SB_LOG" ]; then
			echo "# the daemon's log ($SB_LOG), last lines:"
			tail -n 10 "$SB_LOG" | sed 's/^/#   /'
		fi
	fi
}

# sb_run_tests [TEST...]: run the named tests, or all of SB_TESTS; print
# "SUITE: N passed, M failed, K skipped"; 0 when none failed.
sb_run_tests() {
	local t t0
	t0=$(sb_now_ms)
	# shellcheck disable=SC2086 # the list splits on purpose
	[ $# -gt 0 ] || set -- $SB_TESTS
	for t in "$@"; do
		_sb_run_one "$t"
	done
	echo "# $SB_SUITE: $(($(sb_now_ms) - t0)) ms"
	[ "$SB_KNOWN" = 0 ] ||
	    echo "# $SB_KNOWN test(s) failed on known daemon bugs (not counted; see # TODO above)"
	echo "$SB_SUITE: $SB_PASSED passed, $SB_FAILED failed, $SB_SKIPPED skipped"
	[ "$SB_FAILED" = 0 ]
}

# ---------------------------------------------------------------- cleanup

# At exit: helpers, the daemon, anything of ours that outlived it, worker
# processes of our uid slot, the suite's hook, mounts under our temp
# dirs (deepest first, so rm meets no busy mount point), the uid slot,
# the temp dirs (KEEP_TMP=1 keeps them).
sb_cleanup() {
	local p d m
	for p in $SB_BG_PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	sb_stop >/dev/null 2>&1
	for p in $(sb_our_pids); do
		kill -KILL "$p" 2>/dev/null
	done
	if [ -n "${UID_LOCK:-}" ]; then
		for p in $(sb_worker_procs | awk '{ print $2 }'); do
			kill -KILL "$p" 2>/dev/null
		done
	fi
	[ -z "$SB_CLEANUP_HOOK" ] || "$SB_CLEANUP_HOOK"
	# empty groups our masters left (a new master sweeps them too)
	for d in $(sb_call_cgroups 2>/dev/null); do
		rmdir "$d" 2>/dev/null
	done
	for d in $SB_TMPDIRS; do
		for m in $(awk -v t="$d/" 'index($2, t) == 1 { print $2 }' \
		    /proc/self/mounts | sort -r); do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		done
	done
	release_uids
	for d in $SB_TMPDIRS; do
		if [ -n "${KEEP_TMP:-}" ]; then
			echo "$SB_SUITE: kept $d" >&2
		else
			rm -rf "$d"
		fi
	done
	rm -f "/tmp/.hostprobe.$$" 2>/dev/null
}

# Run by hand: bash tests/lib/daemon.sh probe
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	if [ "${1:-}" != probe ]; then
		echo "usage: bash tests/lib/daemon.sh probe   (the suites source this file)" >&2
		exit 2
	fi
	SB_SUITE=probe
	trap sb_cleanup EXIT
	sb_tmpdir sb-probe
	for a in i386 x32 landlock cgroups; do
		if sb_have "$a"; then
			echo "$a: yes: $SB_HAVE_WHY"
		else
			echo "$a: no: $SB_HAVE_WHY"
		fi
	done
	exit 0
fi
