#!/bin/bash
# Escape suite (issue 4): one skill per attack against the worker
# sandbox, on a real skillbrokerd. Each test asserts that the attack
# failed (the skill reports what it saw on stdout: BLOCKED / ESCAPED /
# UNEXPECTED lines, see tools/attack.h), checks the host side where the
# attack would leave a trace, and then checks that the daemon is alive
# and serves a call of the hello skill.
#
#   SB_BIN=<dir of skillbrokerd, skillctl, ...>  (default: <repo>/bin)
#   bash tests/escape/run.sh [TEST...]           (TEST: a function name, e.g. t_fork_bomb)
#
# Needs root, jq and a C compiler (cc). Workers use a slot of uids in 64300-64349;
# nothing else may use them while this runs (the check that no process
# of a call survives looks at these uids). KEEP_TMP=1 keeps the temp
# dir (config, daemon.log, audit log, every reply in replies.log);
# SB_VERBOSE=1 prints each test's duration. The plumbing (config, daemon,
# waits, host probes, runner, cleanup) is tests/lib/daemon.sh.
# A test of a layer the host lacks by itself (i386 or x32 syscalls,
# memory and pids cgroups) is skipped with the probe's finding.
# Prints "ok - NAME" / "not ok - NAME: why" / "skip - NAME: why" per
# test, then "escape: N passed, M failed, K skipped"; exits 1 if any
# failed.
if [ -z "${BASH_VERSION:-}" ]; then
	exec bash "$0" "$@"
fi
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CC=${CC:-cc}
. "$ROOT/tests/lib/daemon.sh"
sb_init escape
for c in "$CC" df stat sha256sum; do
	if ! command -v "$c" >/dev/null 2>&1; then
		echo "escape: $c missing" >&2
		exit 2
	fi
done
# Worker uids: one of 5 slots of 10 in 64300-64349 (tests/lib/uids.sh).
claim_uids 64300 5 10 escape
PIDS=64         # limits.pids of the daemon
FSIZE_MB=16     # limits.fsize_mb of the daemon
MEM_MB=128      # memory_mb of the mem-bomb skill
WORK_MB=64      # worker.work_mb of the daemon: each session's work dir
SB_PIDS=$PIDS SB_FSIZE_MB=$FSIZE_MB

# ---------------------------------------------------------------- helpers

now_ms() { sb_now_ms; }
worker_procs() { sb_worker_procs; }
# Wait (at most 3 s) until no process runs under a worker uid.
no_worker_procs() { sb_poll 3 sb_no_worker_procs; }
fail() { sb_fail "$@"; }
short() { sb_short "$@"; }
expect() { sb_eq "$@"; }
j() { sb_j "$@"; }

# Host paths an escaped write would have created (see t_write_outside
# and the disk fill tests): removed whatever happens.
MARK=sbescape$$
host_marks() {
	local d
	for d in /usr /usr/bin /usr/lib /etc / /lib /skill /work /tmp; do
		printf '%s\n' "${d%/}/$MARK" "${d%/}/$MARK.d"
	done
}

# At exit (tests/lib/daemon.sh stops the daemon and kills the workers
# first): what an escaped attack would have left on the host.
host_cleanup() {
	local p
	host_marks | while read -r p; do
		[ -e "$p" ] && rm -rf -- "$p"
	done
	rm -f /tmp/"$MARK"-fill-* 2>/dev/null
	# made in the host's /dev/shm by a grant of it (t_fs_dev_never)
	rm -f /dev/shm/"$MARK"* 2>/dev/null
	# made by a sandbox set-up that followed a planted link (t_skill_dir_symlinks)
	[ -n "${TMPUSR_BEFORE-x}" ] || rmdir /tmp/usr 2>/dev/null
}
SB_CLEANUP_HOOK=host_cleanup

# Nothing else may run under our worker uids: the tests count them.
if [ -n "$(worker_procs)" ]; then
	echo "escape: processes already run under uids $UID_FIRST-$UID_LAST:" >&2
	worker_procs >&2
	exit 2
fi

sb_tmpdir sb-escape
TMP=$SB_TMP
CONF=$TMP/sb.yaml               # sb_config: its socket, state and log beside it
SOCK=$TMP/sb.sock
AUDIT=$TMP/log/audit.jsonl
HOSTWORK=$TMP/state/work        # where work dirs were once; none may be there now
VICTIM=$TMP/victim              # host files that attacks aim at
SECRET=sbsecret-$MARK           # in the daemon's environment only
ABSTRACT=sb-escape-$MARK        # the host listener's abstract socket
TOOLS=$TMP/tools
# Host dirs that skills' fs grants name (t_fs_*): a temp dir of their own,
# since all of $TMP lies beneath the daemon's socket dir, which no grant
# may reach.
sb_tmpdir sb-escape-fs
FSH=$SB_TMP
SB_TMP=$TMP
# A system path of the suite's own (t_fs_no_propagation): not beneath
# /tmp, which the sandbox covers with a tmpfs of its own. sb_cleanup
# unmounts what is mounted beneath it and removes it, as it does FSH.
SYSP=$(mktemp -d /var/tmp/sb-escape-sys.XXXXXX) ||
	{ echo "escape: mktemp in /var/tmp failed" >&2; exit 2; }
chmod 755 "$SYSP"
SB_TMPDIRS="$SB_TMPDIRS $SYSP"

# Build the helpers and the attack programs, plant what the attacks
# need, write the config and the policy.
setup() {
	local c s
	mkdir -p "$TOOLS"
	for c in ptyrun listener; do
		"$CC" -O2 -Wall -o "$TOOLS/$c" "$HERE/tools/$c.c" ||
			{ echo "escape: cannot build $c" >&2; exit 2; }
	done
	cp -R "$HERE/skills" "$TMP/skills"
	for c in "$TMP"/skills/*/src/*.c; do
		s=${c%/src/*}
		mkdir -p "$s/bin"
		"$CC" -O2 -Wall -I"$HERE/tools" -o "$s/bin/$(basename "$c" .c)" "$c" ||
			{ echo "escape: cannot build $c" >&2; exit 2; }
	done
	fs_skills
	chmod -R u+rwX,go+rX,go-w "$TMP/skills"
	find "$TMP/skills" -path '*/scripts/*' -type f -exec chmod 755 {} +
	find "$TMP/skills" -path '*/bin/*' -type f -exec chmod 755 {} +

	# a setuid and setgid root binary, planted by the admin side
	chown root:root "$TMP/skills/setuid/bin/suid"
	chmod 6755 "$TMP/skills/setuid/bin/suid"
	# commands that leave the skill dir: the registry must refuse them
	mkdir -p "$TMP/skills/link-cmd-abs/scripts" "$TMP/skills/link-cmd-rel/scripts"
	ln -sfn /bin/sh "$TMP/skills/link-cmd-abs/scripts/run"
	ln -sfn ../../hello/scripts/run.sh "$TMP/skills/link-cmd-rel/scripts/run"
	# files of a valid skill that are symlinks to host files
	mkdir -p "$TMP/skills/link-files/planted"
	ln -sfn /etc/shadow "$TMP/skills/link-files/planted/shadow"
	ln -sfn "$CONF" "$TMP/skills/link-files/planted/conf"
	ln -sfn ../../../sb.yaml "$TMP/skills/link-files/planted/conf-rel"
	ln -sfn "$TMP/state" "$TMP/skills/link-files/planted/hostdir"
	ln -sfn / "$TMP/skills/link-files/planted/root"
	# the part of its skill dir a skill may write (by its grant)
	mkdir -p "$TMP/skills/skill-dir-links/cache"
	chmod 777 "$TMP/skills/skill-dir-links/cache"
	# directories anyone may write on the host: only the sandbox stops it
	mkdir -p "$TMP/skills/write-out/open" "$TMP/hostdir"
	chmod 1777 "$TMP/skills/write-out/open" "$TMP/hostdir"

	# victims: a root file anyone may read and write (so that only the
	# sandbox, not its mode, keeps links to it away), and a root dir
	# with a readable file and a secret one
	mkdir -p "$VICTIM/dir"
	echo "sb-escape victim file" >"$VICTIM/file"
	chmod 666 "$VICTIM/file"
	echo "sb-escape victim readable" >"$VICTIM/dir/readable"
	echo "sb-escape victim secret" >"$VICTIM/dir/secret"
	chmod 644 "$VICTIM/dir/readable"
	chmod 600 "$VICTIM/dir/secret"
	chmod 755 "$VICTIM" "$VICTIM/dir"
	VICTIM_STAT=$(victim_stat)

	mkdir -p "$TMP/policy.d"
	cat >"$TMP/policy.d/10-escape.yaml" <<-EOF
	# skillbroker escape suite policy (generated by tests/escape/run.sh)
	skills:
	  enabled: ["*"]
	rules:
	  # fs-* skills may declare any host path: only the registry's check
	  # of their fs entries and the sandbox keep them from the host
	  - name: escape-fs-grants
	    principals: ["*"]
	    skills: ["fs-*"]
	    action: allow
	    ceiling:
	      fs:
	        read: ["/", "/**", "\$SKILL_DIR/**", "\$DATA_DIR", "\$DATA_DIR/**"]
	        write: ["/", "/**", "\$SKILL_DIR/**", "\$DATA_DIR", "\$DATA_DIR/**"]
	      exec: ["*"]
	  - name: escape-allow-all
	    principals: ["*"]
	    skills: ["*"]
	    action: allow
	    ceiling:
	      env: [TZ, LD_PRELOAD, HOME, PYTHONNOUSERSITE]
	      fs: { write: ["\$SKILL_DIR/**", "\$DATA_DIR/**"] }
	      exec: ["*"]
	EOF
	# readable by anyone (sb_config): only the sandbox keeps it from a skill
	escape_config
}

# escape_config [KEY: VALUE...]: the suite's daemon config, with
# worker.system_paths the default (lib/config.c) and SYSP.
escape_config() {
	sb_config "$CONF" "worker.work_mb: $WORK_MB" \
	    "worker.system_paths: [/usr, /bin, /sbin, /lib, /lib64, /lib32, /libx32, /etc/ld.so.cache, /etc/ld.so.conf, /etc/ld.so.conf.d, /etc/alternatives, /etc/localtime, /etc/nsswitch.conf, /etc/hosts, /etc/resolv.conf, /etc/ssl/certs, $SYSP]" \
	    "$@"
}

# Owner, mode and content hash of every victim file and dir.
victim_stat() {
	local f
	for f in "$VICTIM" "$VICTIM/file" "$VICTIM/dir" "$VICTIM/dir/readable" \
	    "$VICTIM/dir/secret"; do
		printf '%s %s' "$f" "$(stat -c '%u:%g %a %h' "$f" 2>&1)"
		[ -f "$f" ] && printf ' %s' "$(sha256sum <"$f" | cut -c1-64)"
		echo
	done
}

# The daemon runs with a terminal of ours as its controlling terminal
# (for t_tiocsti), and with a secret in its environment (for t_env).
SB_DAEMON_WRAP=(env "SB_SECRET=$SECRET" "$TOOLS/ptyrun" "$TMP/tty.log" "$TMP/daemon.pid")
SB_DAEMON_PIDFILE=$TMP/daemon.pid

# A TCP/UDP/abstract-unix listener on the host loopback (for t_network).
start_listener() {
	"$TOOLS/listener" "$TMP/listener.port" "$TMP/listener.log" "$ABSTRACT" \
	    2>>"$TMP/listener.err" &
	sb_bg_add $!
	disown $!
	sb_poll 5 test -s "$TMP/listener.port" ||
	    echo "# escape: the host listener did not start: $(head -c 200 "$TMP/listener.err")"
	PORT=$(cat "$TMP/listener.port" 2>/dev/null)
	: >>"$TMP/listener.log"
}

# inv SESSION SKILL [COMMAND] [OPTIONS] [-- ARGS...]: one invoke, as uid 0
# (the admin), bounded to 60 s. Sets OUT (the JSON reply), RC, MS (how
# long it took) and SO (the skill's stdout). Every reply goes to
# replies.log.
inv() {
	local sess=$1 skill=$2 t0
	shift 2
	t0=$(now_ms)
	SB_CTL_TIMEOUT=60 sb_ctl invoke "$skill" --json --phase execution \
	    --session "$sess" "$@"
	MS=$(($(now_ms) - t0))
	printf '%s %s %s\n' "$skill" "$*" "$OUT" >>"$TMP/replies.log"
	SO=$(j '.output.stdout // ""')
}

# The reply's error, for failure messages.
errinfo() {
	printf 'rc %s, ok %s, error %s: %s, exit %s, signal %s' "$RC" "$(j .ok)" \
	    "$(j '.error.type // "-"')" "$(j '.error.message // ""')" \
	    "$(j .effects.process.exit_code)" "$(j .effects.process.signal)"
}

# The attack ran to its end and nothing got through: a DONE line, no
# ESCAPED or UNEXPECTED line, and each given line present.
attack_failed() {
	local bad l
	if [ "$OUT" = "" ] || [ "$(j .type)" = JQERR ]; then
		fail "no reply (skillctl rc $RC: $(short "$(cat "$TMP/ctl.err")"))"
		return 1
	fi
	bad=$(printf '%s\n' "$SO" | grep -E '^(ESCAPED|UNEXPECTED) ' | head -n 8 |
	    tr '\n' '|')
	[ -z "$bad" ] || fail "attack got through: ${bad%|}"
	printf '%s\n' "$SO" | grep -qx DONE ||
		fail "the attack did not run to its end ($(errinfo)); stdout: $(short "$SO")"
	for l in "$@"; do
		printf '%s\n' "$SO" | grep -qF -- "$l" ||
			fail "missing '$l' in: $(short "$(printf '%s' "$SO" | tr '\n' '|')")"
	done
	[ -z "$WHY" ]
}

# After every attack: the daemon lives and serves a call.
healthy() {
	local name=$1
	if [ -z "$SB_DPID" ] || ! kill -0 "$SB_DPID" 2>/dev/null; then
		fail "the daemon died"
		return
	fi
	inv health hello -- "$name"
	[ "$(j .ok)" = true ] && [ "$SO" = "hello ok $name" ] ||
		fail "the next call failed ($(errinfo)): $(short "$OUT")"
}

# The victims are as they were, and no reply holds a hash or the text
# of a file the skill must not read (file tracking that follows links).
victims_intact() {
	local now h f
	now=$(victim_stat)
	[ "$now" = "$VICTIM_STAT" ] ||
		fail "host victim files changed: $(diff <(echo "$VICTIM_STAT") <(echo "$now") | grep '^>' | tr '\n' ' ')"
	for f in "$VICTIM/file" "$VICTIM/dir/readable" "$VICTIM/dir/secret" /etc/shadow; do
		h=$(sha256sum <"$f" | cut -c1-64)
		! grep -q "$h" "$TMP/replies.log" ||
			fail "a reply holds the sha256 of host file $f"
	done
	! grep -q 'sb-escape victim' "$TMP/replies.log" ||
		fail "a reply holds the text of a host victim file"
}

# A session's work dir has no host path: the suite sees it through calls
# of the workfiles skill in that session.
# session_list SESSION: LIST is what a call in SESSION sees of its work
# dir (UID, FS and FILE lines, see skills/workfiles/scripts/list.sh).
session_list() {
	inv "$1" workfiles list
	LIST=$SO
	printf '%s\n' "$LIST" | grep -qx DONE ||
		fail "cannot list session $1 ($(errinfo)): $(short "$SO")"
}
# FIELD (3 owner, 4 size, 5 KiB used) of FILE in LIST; empty when absent.
list_file() {
	printf '%s\n' "$LIST" | awk -v f="$1" -v k="$2" '$1 == "FILE" && $2 == f { print $k }'
}
# Empty a session's work dir (it holds memory until the session ends).
session_clear() {
	inv "$1" workfiles clear
	[ "$SO" = CLEARED ] || fail "cannot clear session $1 ($(errinfo))"
}
# No host path shows a work dir: state_dir/work does not exist, or is empty.
no_host_workdirs() {
	[ ! -e "$HOSTWORK" ] && [ ! -L "$HOSTWORK" ] && return 0
	[ -d "$HOSTWORK" ] && [ ! -L "$HOSTWORK" ] &&
		[ -z "$(ls -A "$HOSTWORK" 2>/dev/null)" ] && return 0
	fail "work dirs show on the host: $HOSTWORK holds $(ls -lA "$HOSTWORK" 2>&1 | head -n 5 | tr '\n' ' ')"
}

# Available KiB on the file system of the state dir.
avail_kb() { df -Pk "$TMP/state" | awk 'NR == 2 { print $4 }'; }

# ------------------------------------------------------------------ tests

t_read_shadow() {
	inv rs read-shadow
	attack_failed "BLOCKED read /etc/shadow:" "INFO absent /etc/shadow"
}

# The daemon's config, audit log and state, another session's files,
# /root and the repo: none may exist inside. Another session's file is
# planted by a call in session "victim" and sought from session "thief"
# (by the skill that wrote it and by read-host), from the session of
# the same name of another principal, and on the host under state_dir.
t_read_host_files() {
	local p paths note="sb-escape other session $MARK" seen
	inv victim workfiles put -- notes.txt "$note"
	expect "plant in session victim" "$SO" "PUT notes.txt"
	inv victim workfiles get -- notes.txt
	expect "the planted file in its own session" "$SO" "$note"
	no_host_workdirs
	seen=$(grep -rlsF -- "$note" "$TMP/state" | head -n 3 | tr '\n' ' ')
	[ -z "$seen" ] || fail "the other session's file is on the host: $seen"
	inv thief workfiles get -- notes.txt
	expect "session thief reads notes.txt" "$SO" "NO FILE"
	sb_ctl_as 65534 invoke workfiles get --json --phase execution \
	    --session victim -- notes.txt
	printf 'workfiles get (uid 65534) %s\n' "$OUT" >>"$TMP/replies.log"
	expect "uid 65534 in its session victim reads notes.txt" \
	    "$(j '.output.stdout // ""')" "NO FILE"
	paths="$CONF $AUDIT $(dirname "$AUDIT") $TMP/state $HOSTWORK $HOSTWORK/0 $HOSTWORK/0/victim $HOSTWORK/0/victim/notes.txt /work/notes.txt $TMP/daemon.log /root $ROOT/Makefile"
	# shellcheck disable=SC2086
	inv thief read-host -- $paths
	attack_failed || return
	for p in $paths; do
		printf '%s\n' "$SO" | grep -qxF "ABSENT $p" ||
			fail "host path $p exists inside: $(printf '%s\n' "$SO" | grep -F "SEEN $p:" | head -n 1)"
	done
	! printf '%s\n' "$SO" | grep -qF -- "$note" ||
		fail "read-host in session thief read the other session's file"
}

t_write_outside() {
	local p q hits=""
	inv wo write-out -- "$MARK" "$TMP/hostdir" "$HOSTWORK" "$TMP" "$ROOT"
	attack_failed "BLOCKED write /usr/$MARK" "BLOCKED write /skill/open/$MARK" \
	    "BLOCKED write $TMP/hostdir/$MARK"
	for p in $(host_marks) "$TMP/skills/write-out/$MARK" \
	    "$TMP/skills/write-out/open/$MARK" "$TMP/hostdir/$MARK" \
	    "$HOSTWORK/$MARK" "$TMP/$MARK" "$ROOT/$MARK"; do
		for q in "$p" "$p.d"; do
			[ -e "$q" ] && hits="$hits $q"
		done
	done
	# anywhere in the state dir (the private root, the data dirs, where
	# work dirs once were): a write through /work/.. would land there
	for q in $(find "$TMP/state" -name "$MARK*" 2>/dev/null); do
		hits="$hits $q"
	done
	[ -z "$hits" ] || fail "files appeared on the host:$hits"
	no_host_workdirs
}

# Commands that are symlinks out of the skill dir, or climb out with
# "..": the registry marks the skill invalid and nothing runs.
t_skill_symlink_commands() {
	local s valid
	OUT=$(timeout 20 "$SB_BIN/skillctl" -s "$SOCK" skills --json 2>/dev/null)
	for s in link-cmd-abs link-cmd-rel link-cmd-dotdot; do
		valid=$(j ".skills[] | select(.name == \"$s\") | .valid")
		expect "$s valid in the registry" "$valid" false
	done
	for s in link-cmd-abs link-cmd-rel link-cmd-dotdot; do
		inv lc "$s" -- -c 'echo ESCAPED ran'
		expect "$s error" "$(j .error.type)" skill_not_enabled
		[ -z "$SO" ] || fail "$s ran: $(short "$SO")"
	done
}

# Files of a valid skill that are symlinks to host files.
t_skill_symlink_files() {
	inv lf link-files -- "$CONF" "$TMP/state"
	if [ "$(j .error.type)" = skill_not_enabled ]; then
		return 0        # refused by the registry: also safe
	fi
	attack_failed "BLOCKED read shadow:" "BLOCKED read conf:" \
	    "BLOCKED read conf-rel:" "BLOCKED read root$CONF:"
	# hostdir is read (dangling here) or listed (a directory): blocked both ways
	printf '%s\n' "$SO" | grep -qE '^BLOCKED (read|list) hostdir:' ||
		fail "no BLOCKED line for hostdir"
}

# A skill granted two write paths in its skill dir, one inside the
# other, plants symlinks through the first so that the next call's
# set-up resolves the second to a host directory (/tmp) as bind source.
t_skill_dir_symlinks() {
	local p
	TMPUSR_BEFORE=$(ls -d /tmp/usr 2>/dev/null)
	inv sdl skill-dir-links plant
	attack_failed "INFO planted cache/a -> ../.." "INFO planted cache/d -> /" ||
		{ fail "the plant call could not set the attack up"; return; }
	inv sdl skill-dir-links look -- "$CONF" "$MARK"
	if [ "$(j .error.type)" = sandbox_failed ]; then
		:       # the set-up refused the planted links: safe
	else
		attack_failed "BLOCKED read /skill-dir-links/cache/d/tmp${CONF#/tmp}:" \
		    "BLOCKED write /skill-dir-links/cache/d/tmp/$MARK:"
	fi
	[ ! -e "/tmp/$MARK" ] || fail "/tmp/$MARK appeared on the host"
	# cache/b: the mount point of "$SKILL_DIR/cache/b/usr/**", made as
	# root through the link, lands outside the private root on the host
	# (in /tmp with the private root at $TMP/state/root)
	for p in /tmp/usr "$TMP/usr" "$TMP/state/usr"; do
		[ "$p" = /tmp/usr ] && [ -n "$TMPUSR_BEFORE" ] && continue
		[ ! -e "$p" ] || fail "the set-up made $p on the host ($(stat -c '%U %a' "$p"))"
	done
}

# A call plants symlinks, hard links and a FIFO in its work dir; the
# next call of the session follows them. The worker's own walks of the
# work dir (set-up, file tracking) must neither follow nor hang.
t_workdir_symlinks() {
	local a
	inv wp workdir-plant plant -- "$VICTIM/file" "$VICTIM/dir"
	a=$SO
	attack_failed || fail "plant call"
	inv wp workdir-plant follow -- "$VICTIM/file" "$VICTIM/dir"
	attack_failed "BLOCKED read link-file:" "BLOCKED read link-dir/readable:" \
	    "BLOCKED append through link-file:"
	[ "$MS" -lt 10000 ] || fail "the follow call took $MS ms (a FIFO hung it?)"
	printf '%s\n' "$a" | grep -q '^BLOCKED hard link' ||
		fail "plant: $(short "$a")"
	victims_intact
}

# The race call of session race2 has started and its racer runs.
race2_racing() {
	sb_has_rec '.event.action == "worker.started" and .session.id == "race2" and .skill.command == "race"' &&
		worker_procs | grep -q 'bin/racer 2500 '
}

# A directory of the work dir swapped for a symlink to a host dir in a
# tight loop, (1) by a process a call left behind and (2) by a running
# call, while more calls of the same session start.
t_workdir_race() {
	local i racer bgout=$TMP/race.json
	inv race1 workdir-race race -- 1500 bg "$VICTIM/dir"
	attack_failed || fail "race (bg) call"
	for i in 1 2 3; do
		inv race1 workdir-race probe
		attack_failed || fail "probe $i after the background racer"
	done
	(
		OUT=$(timeout 60 "$SB_BIN/skillctl" -s "$SOCK" invoke workdir-race race \
		    --json --phase execution --session race2 -- 2500 fg "$VICTIM/dir" 2>&1)
		printf '%s\n' "$OUT" >"$bgout"
	) &
	racer=$!
	# the racing call started (its start is in the audit log before the
	# skill runs) and its racer runs
	sb_wait_for 5 "the racing call to race" race2_racing
	# Calls of one session run one at a time: a probe during the race
	# waits for its end, or is refused (overloaded), which is the race
	# failing; one that runs must not escape either.
	for i in 1 2 3 4; do
		inv race2 workdir-race probe
		if [ "$(j .error.type)" != overloaded ]; then
			attack_failed || fail "probe $i during the race"
		fi
	done
	wait "$racer"
	OUT=$(cat "$bgout")
	printf 'workdir-race race %s\n' "$OUT" >>"$TMP/replies.log"
	SO=$(j '.output.stdout // ""')
	attack_failed || fail "the racing call"
	victims_intact
}

# A memory file of the daemon's cgroup of calls, in MiB: the bound
# (limit) or what it holds now (usage).
memory_mb() {
	local own f v1=memory.limit_in_bytes v2=memory.max
	[ "$1" = usage ] && v1=memory.usage_in_bytes v2=memory.current
	if own=$(awk -F: '$2 == "memory" { print $3 }' "/proc/$SB_DPID/cgroup") && [ -n "$own" ]; then
		f=/sys/fs/cgroup/memory${own%/}/skillbroker/$v1
	else
		own=$(awk -F: '$1 == "0" { print $3 }' "/proc/$SB_DPID/cgroup")
		f=/sys/fs/cgroup${own%/}/skillbroker/$v2
		[ -e "$f" ] || f=/sys/fs/cgroup/unified${own%/}/skillbroker/$v2
	fi
	echo $(($(cat "$f" 2>/dev/null || echo 0) >> 20))
}

# PID runs as the marker (bash's exec -a is done).
marker_runs() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q '^sbhostmark-'; }

t_host_processes() {
	local mpid n bad
	bash -c "exec -a sbhostmark-$MARK sleep 300" &
	mpid=$!
	sb_bg_add "$mpid"
	sb_wait_for 3 "the host marker process to run" marker_runs "$mpid"
	# the master, the marker, this shell, and ptyrun (the master's parent)
	inv hp procs -- "$SB_DPID" "$mpid" "$$" "$SB_LAUNCH_PID"
	sb_bg_kill "$mpid"
	attack_failed "BLOCKED host pid $SB_DPID: absent"
	n=$(printf '%s\n' "$SO" | grep -c '^PROC ')
	[ "$n" -ge 1 ] && [ "$n" -le 8 ] ||
		fail "sees $n processes: $(short "$(printf '%s\n' "$SO" | grep '^PROC ' | tr '\n' '|')")"
	bad=$(printf '%s\n' "$SO" | grep '^PROC ' |
	    grep -E 'skillbrokerd|skillbroker-(broker|policyd|auditd)|sbhostmark|ptyrun|listener|skillctl' |
	    head -n 5 | tr '\n' '|')
	[ -z "$bad" ] || fail "sees host processes: $bad"
}

sleeper_up() { worker_procs | grep -q ' sleep 4$'; }

# A sleeper call in one session; a second call tries to SIGKILL and
# ptrace every process it can see and the sleeper's host pids.
t_kill_other_worker() {
	local i pids="" sout=$TMP/sleeper.json spid
	(
		OUT=$(timeout 60 "$SB_BIN/skillctl" -s "$SOCK" invoke sleeper --json \
		    --phase execution --session sleepy -- 4 2>&1)
		printf '%s\n' "$OUT" >"$sout"
	) &
	spid=$!
	# the sleeper's shell and its sleep 4, both on the host
	sb_wait_for 3 "no sleeper process found on the host" sleeper_up
	pids=$(worker_procs | awk '{ print $2 }' | tr '\n' ' ')
	# shellcheck disable=SC2086
	inv killer killer -- $pids
	attack_failed "BLOCKED ptrace attach own child: EPERM" \
	    "BLOCKED process_vm_readv own child: EPERM"
	wait "$spid"
	OUT=$(cat "$sout")
	printf 'sleeper %s\n' "$OUT" >>"$TMP/replies.log"
	SO=$(j '.output.stdout // ""')
	expect "sleeper ok" "$(j .ok)" true
	expect "sleeper exit" "$(j .effects.process.exit_code)" 0
	printf '%s\n' "$SO" | grep -qx SURVIVED ||
		fail "the sleeper did not survive ($(errinfo)): $(short "$SO")"
}

t_capabilities() {
	local k v u
	inv caps caps
	attack_failed || return
	for k in CapInh CapPrm CapEff CapBnd CapAmb; do
		v=$(printf '%s\n' "$SO" | awk -v k="STATUS $k:" 'index($0, k) == 1 { print $3 }')
		expect "$k" "$v" 0000000000000000
	done
	expect NoNewPrivs "$(printf '%s\n' "$SO" | awk '/^STATUS NoNewPrivs:/ { print $3 }')" 1
	expect Seccomp "$(printf '%s\n' "$SO" | awk '/^STATUS Seccomp:/ { print $3 }')" 2
	for k in Uid Gid; do
		for u in $(printf '%s\n' "$SO" | awk -v k="STATUS $k:" 'index($0, k) == 1 { print $3, $4, $5, $6 }'); do
			[ "$u" -ge "$UID_FIRST" ] && [ "$u" -le "$UID_LAST" ] ||
				fail "$k $u outside the worker uids"
		done
	done
	expect Groups "$(printf '%s\n' "$SO" | awk '/^STATUS Groups:/ { $1 = $2 = ""; print }' | tr -d ' ')" ""
}

t_setuid_root() {
	inv su setuid
	if [ "$(j .error.type)" = skill_not_enabled ]; then
		return 0        # the registry refuses setuid files: also safe
	fi
	attack_failed "BLOCKED su:" "BLOCKED passwd:"
	# the setuid program as the entry point (the skill dir is noexec
	# beside it), on a nosuid mount: no root ids
	inv su setuid suid
	printf '%s\n' "$SO" | grep -qF "BLOCKED setuid: no root ids" ||
		fail "the setuid entry point: $(errinfo): $(short "$SO")"
	! printf '%s\n' "$SO" | grep -q '^ESCAPED' || fail "setuid entry: $(short "$SO")"
}

t_mount_unshare_setns() {
	inv ns ns-calls
	attack_failed "BLOCKED mount tmpfs on /tmp: EPERM" "BLOCKED umount2 /proc: EPERM" \
	    "BLOCKED pivot_root: EPERM" "BLOCKED unshare CLONE_NEWUSER: EPERM" \
	    "BLOCKED unshare CLONE_NEWNS: EPERM" "BLOCKED setns mnt: EPERM" \
	    "BLOCKED setns user: EPERM" "BLOCKED clone CLONE_NEWUSER: EPERM" \
	    "BLOCKED clone3 CLONE_NEWUSER|CLONE_NEWNS:"
}

t_io_uring() {
	inv iou io-uring
	attack_failed "BLOCKED io_uring_setup:" "BLOCKED io_uring_enter:" \
	    "BLOCKED io_uring_register:"
}

t_seccomp_denylist() {
	inv sc seccomp-list
	attack_failed "BLOCKED keyctl KEYCTL_GET_KEYRING_ID: EPERM" \
	    "BLOCKED userfaultfd user mode: EPERM" "BLOCKED name_to_handle_at .: EPERM" \
	    "BLOCKED personality ADDR_NO_RANDOMIZE: EPERM" \
	    "BLOCKED perf_event_open own task clock: EPERM" "BLOCKED bpf BPF_MAP_CREATE: EPERM" \
	    "BLOCKED modify_ldt read: EPERM" "BLOCKED memfd_secret: EPERM" \
	    "BLOCKED move_pages self none: EPERM" "BLOCKED set_mempolicy default: EPERM"
}

# A skill plants start-up code (Python usercustomize and .pth, shell
# profiles) in its $HOME and the work dir; another skill of the same
# session, run the ordinary way, must not run any of it.
t_session_startup_files() {
	inv hs home-plant
	attack_failed "PLANTED /work" || return
	inv hs home-victim
	attack_failed "RAN sh -l"
	! printf '%s\n' "$SO" | grep -q '^HOME /work' || fail "HOME is the shared work dir"
	if command -v python3 >/dev/null; then
		printf '%s\n' "$SO" | grep -qx "RAN python3" || fail "python3 did not run: $(short "$SO")"
	fi
}

# Directories nested deeper than the daemon's ownership walk, in the work
# dir and the skill's data dir: later calls of the session, and of the
# skill in another session, must still run.
t_nested_dirs() {
	inv nest1 nest
	attack_failed "NESTED /work" "NESTED /data" || return
	inv nest1 nest -- check
	attack_failed "WRITABLE /work" "WRITABLE /data"
	inv nest2 nest -- check
	attack_failed "WRITABLE /work" "WRITABLE /data"
	inv nest1 hello
	[ "$(j .ok)" = true ] || fail "a later call of the session failed: $(errinfo)"
}

# What a skill learns from inside: the host's name, the master's pid and
# the global call counter in its cgroup names, the host path of the skills.
t_host_names() {
	inv ln leaks -- "$(uname -n)" "$TMP/skills" "$SB_DPID"
	attack_failed "BLOCKED hostname:" "BLOCKED cgroup names:" \
	    "BLOCKED mountinfo:" "SKILL readable"
}

# x32 and i386 system calls: the filter kills the process with SIGSYS.
foreign_abi() {
	inv abi foreign-abi "$1"
	printf '%s\n' "$SO" | grep -q "^BEFORE $1 getpid" ||
		{ fail "$1: the program did not start ($(errinfo)): $(short "$SO")"; return; }
	! printf '%s\n' "$SO" | grep -q '^RETURNED' ||
		fail "$1: the call returned: $(printf '%s\n' "$SO" | grep -E '^(RETURNED|ESCAPED)' | tr '\n' ' ')"
	[ "$(j .effects.process.signal)" = 31 ] || [ "$(j .effects.process.exit_code)" = 159 ] ||
		fail "$1: not killed by SIGSYS ($(errinfo))"
}
# x32 numbers reach the filter whether or not the kernel has the ABI
# (without CONFIG_X86_X32_ABI they would return ENOSYS): the filter must
# kill them on every host. An i386 int $0x80 on a host without IA32
# emulation (or with ia32_emulation=0) raises SIGSEGV before any filter
# sees it: nothing to test there.
t_x32_syscall() { foreign_abi x32; }
t_i386_syscall() { sb_require i386 || return; foreign_abi i386; }

t_network() {
	local ifaces
	: >"$TMP/listener.log"
	inv net net -- "$PORT" "$ABSTRACT" "$SOCK"
	attack_failed "BLOCKED tcp 127.0.0.1:" "BLOCKED abstract unix @host-listener:" \
	    "BLOCKED unix daemon socket:" "BLOCKED socket AF_NETLINK: EPERM" \
	    "BLOCKED socket AF_PACKET: EPERM" "BLOCKED socket AF_NETLINK|1<<32: EPERM"
	# Explicit bounded wait: nothing may reach the listener late either.
	sb_never 0.2 "the host listener heard from the skill after its call" \
	    test -s "$TMP/listener.log"
	[ ! -s "$TMP/listener.log" ] ||
		fail "the host listener heard from the skill: $(tr '\n' '|' <"$TMP/listener.log")"
	ifaces=$(printf '%s\n' "$SO" | awk '/^IFACE / { print $2 }' | sort | tr '\n' ' ')
	expect "network interfaces" "$ifaces" "lo "
}

t_fork_bomb() {
	local n
	inv fb fork-bomb
	case $(j .error.type) in
	timeout|resource_limit) ;;
	*) fail "did not end by a limit ($(errinfo))" ;;
	esac
	[ "$MS" -le 7000 ] || fail "took $MS ms (timeout 3000)"
	! printf '%s\n' "$SO" | grep -q '^ESCAPED' ||
		fail "$(printf '%s\n' "$SO" | grep '^ESCAPED')"
	n=$(printf '%s\n' "$SO" | awk '/^FORKS / { print $2 }')
	if [ -z "$n" ]; then
		fail "no FORKS line: $(short "$SO")"
	elif [ "$n" -gt "$PIDS" ]; then
		fail "forked $n processes (pids limit $PIDS)"
	fi
	no_worker_procs || fail "processes left: $(worker_procs | head -n 5 | tr '\n' '|')"
}

# Children that spin or hold memory and are killed by the timeout, never
# waited for: the call is charged what they used (its cgroup's counters),
# not what its init happened to reap.
t_usage_accounted() {
	local cpu rss spun
	sb_require cgroups || return
	inv ua burner
	expect error "$(j .error.type)" timeout
	cpu=$(j '.effects.process.cpu_ms // 0')
	rss=$(j '.effects.process.max_rss_kb // 0')
	# at least what the spinners had used when last seen (a v1 host
	# without cpuacct counts no CPU per group)
	spun=$(printf '%s\n' "$SO" | awk '/^SPUN / && $2 > v { v = $2 } END { print v + 0 }')
	if grep -qE '^0::|cpuacct' /proc/self/cgroup; then
		[ "$spun" -gt 0 ] || fail "no SPUN line: $(short "$SO")"
		[ "$cpu" -ge "$spun" ] || fail "cpu_ms $cpu; the spinners alone used $spun ms"
	else
		echo "# no cgroup CPU accounting on this host: cpu_ms not checked"
	fi
	[ "$rss" -ge $((48 * 1024)) ] || fail "max_rss_kb $rss with 48 MiB held"
	no_worker_procs || fail "processes left: $(worker_procs | head -n 5 | tr '\n' '|')"
}

mem_bomb() {
	local held rss
	inv mb mem-bomb -- "$1"
	! printf '%s\n' "$SO" | grep -q '^ESCAPED' ||
		fail "$1: $(printf '%s\n' "$SO" | grep '^ESCAPED')"
	printf '%s\n' "$SO" | grep -q '^HELD 2048 ' && fail "$1: held all 2 GiB"
	# the peak the skill held at once (PEAK, or the last HELD if killed)
	held=$(printf '%s\n' "$SO" | awk '/^(HELD|PEAK) / && $2 > v { v = $2 } END { print v + 0 }')
	[ "$held" -le $((MEM_MB + 64)) ] ||
		fail "$1: held $held MiB at once (memory limit $MEM_MB MiB)"
	rss=$(j '.effects.process.max_rss_kb // 0')
	[ "$rss" -le $(((MEM_MB + 64) * 1024)) ] ||
		fail "$1: max_rss_kb $rss (memory limit $MEM_MB MiB)"
	[ "$(j .error.type)" = resource_limit ] ||
		[ "$(j .effects.process.exit_code)" != 0 ] ||
		fail "$1: ended well ($(errinfo))"
	[ "$MS" -le 11000 ] || fail "$1: took $MS ms (timeout 8000)"
	no_worker_procs || fail "$1: processes left: $(worker_procs | head -n 5 | tr '\n' '|')"
}
# Only the memory cgroup bounds what 8 processes hold together (RLIMIT_AS
# is per process and does not see memfd pages).
t_memory_bomb_heap() { sb_require cgroups || return; mem_bomb heap; }
t_memory_bomb_memfd() { sb_require cgroups || return; mem_bomb memfd; }

# Write until a write fails. The host file system must not lose more
# than the limits allow, whatever else runs on the host (generous slack).
disk_fill() {
	local mode=$1 sess=df-$1 before after drop
	before=$(avail_kb)
	inv "$sess" disk-fill -- "$mode" "$MARK-fill"
	after=$(avail_kb)
	drop=$(((before - after) / 1024))
	! printf '%s\n' "$SO" | grep -q '^ESCAPED' ||
		fail "$mode: $(printf '%s\n' "$SO" | grep '^ESCAPED')"
	[ "$drop" -lt 192 ] || fail "$mode: the host file system lost $drop MiB"
	[ "$MS" -le 11000 ] || fail "$mode: took $MS ms (timeout 8000)"
}

t_disk_fill_one_file() {
	local size
	disk_fill one
	case "$(j .error.type) $(j .effects.process.signal)" in
	"resource_limit "*|*" 25") ;;
	*) printf '%s\n' "$SO" | grep -qE '^STOPPED .*(EFBIG|ENOSPC|EDQUOT)' ||
		fail "one: not stopped by a limit ($(errinfo)): $(short "$SO")" ;;
	esac
	# the size the reply reports, and the size a later call of the
	# session sees
	size=$(j ".effects.files_written[] | select(.path == \"/work/$MARK-fill-0\") | .size_bytes")
	[ -n "$size" ] || fail "one: no /work/$MARK-fill-0 in files_written"
	[ "${size:-0}" -le $((FSIZE_MB << 20)) ] ||
		fail "one: files_written says the file grew to $size bytes (fsize limit $FSIZE_MB MiB)"
	session_list df-one
	expect "one: the file's size in a later call" "$(list_file "$MARK-fill-0" 4)" "$size"
	session_clear df-one
}

# Files of 8 MiB, each under the file size limit: only a bound on the
# work dir as a whole (a quota, a size-bound file system) stops this.
# The skill stops by itself at 512 MiB, so a missing bound costs the
# host no more than that.
t_disk_fill_many_files() {
	local fs used total
	disk_fill many
	printf '%s\n' "$SO" | grep -qE '^STOPPED .*(ENOSPC|EDQUOT|EFBIG)' ||
		fail "many: not stopped by a limit ($(errinfo)): $(short "$(printf '%s\n' "$SO" | grep -vE '^WROTE' | tr '\n' '|')")"
	# a later call of the session measures it: bound by worker.work_mb,
	# whatever the skill wrote
	session_list df-many
	fs=$(printf '%s\n' "$LIST" | awk '$1 == "FS" { print $3 }')
	used=$(printf '%s\n' "$LIST" | awk '$1 == "FS" { print $5 }')
	total=$(printf '%s\n' "$LIST" | awk '$1 == "FILE" { t += $5 } END { print t + 0 }')
	[ -n "$fs" ] && [ "$fs" -le $((WORK_MB * 1024)) ] ||
		fail "many: the session's file system holds '$fs' KiB (work_mb $WORK_MB)"
	[ "${used:-0}" -le $((WORK_MB * 1024)) ] && [ "$total" -le $((WORK_MB * 1024)) ] ||
		fail "many: the session holds $total KiB in files, $used KiB used (work_mb $WORK_MB)"
	[ "$total" -gt $((16 * 1024)) ] ||
		fail "many: a later call sees only $total KiB of the files the skill wrote"
	session_clear df-many
}

# Empty files pin kernel memory (about 1 KiB each) that no size limit
# sees: the work dir's inode count is bound with its size.
t_disk_fill_inodes() {
	local n
	disk_fill files
	n=$(printf '%s\n' "$SO" | awk '/^STOPPED files after / { print $4 }' | tr -d :)
	[ -n "$n" ] || fail "files: not stopped ($(errinfo)): $(short "$SO")"
	printf '%s\n' "$SO" | grep -q '^STOPPED files after .*ENOSPC' ||
		fail "files: not stopped by ENOSPC: $(short "$SO")"
	[ "${n:-0}" -le $((WORK_MB * 256 + 64)) ] ||
		fail "files: $n empty files in a $WORK_MB MiB work dir"
	session_clear df-files
}

# The skill's data dir, shared by its calls and kept across restarts, is
# an image of worker.data_mb: a call that fills it finds it full, and the
# host file system (which holds the audit log) loses only the image's
# reservation, once, when the first call made it.
t_disk_fill_data() {
	local n before drop
	[ -e /dev/loop-control ] ||
		{ sb_skip "no loop devices here (/dev/loop-control): data dirs cannot be mounted"; return; }
	disk_fill data
	printf '%s\n' "$SO" | grep -qE '^STOPPED .*ENOSPC' ||
		fail "data: not stopped by ENOSPC ($(errinfo)): $(short "$(printf '%s\n' "$SO" | grep -v '^WROTE' | tr '\n' '|')")"
	n=$(printf '%s\n' "$SO" | sed -n 's/^STOPPED write after \([0-9]*\) MiB.*/\1/p')
	[ "${n:-999}" -le 64 ] || fail "data: wrote ${n:-?} MiB into a 64 MiB data dir"
	# Full already: another call finds it so, and costs the host nothing.
	before=$(avail_kb)
	inv df-data2 disk-fill -- data "$MARK-fill2"
	drop=$(((before - $(avail_kb)) / 1024))
	[ "$drop" -lt 16 ] || fail "data: a second fill cost the host $drop MiB"
	inv df-data3 disk-fill -- datafiles "$MARK-fill3"
	n=$(printf '%s\n' "$SO" | awk '/^STOPPED files after / { print $4 }' | tr -d :)
	[ -n "$n" ] && [ "$n" -le $((64 * 256 + 64)) ] ||
		fail "data: ${n:-no limit on} empty files in a 64 MiB data dir"
	inv df-data3 hello
	[ "$(j .ok)" = true ] || fail "a call after the fill failed: $(errinfo)"
}

t_disk_fill_tmp() {
	local left
	disk_fill tmp
	printf '%s\n' "$SO" | grep -qE '^STOPPED .*(ENOSPC|EDQUOT)' ||
		fail "tmp: not stopped by a full /tmp ($(errinfo)): $(short "$(printf '%s\n' "$SO" | grep -vE '^WROTE' | tr '\n' '|')")"
	left=$(ls /tmp/"$MARK"-fill-* 2>/dev/null | head -n 3 | tr '\n' ' ')
	[ -z "$left" ] || fail "tmp: files on the host's /tmp: $left"
	rm -f /tmp/"$MARK"-fill-*
}

# A call that leaves 256 sparse files of the file size limit: no disk,
# no time for the skill, but GiBs to read for whoever hashes them. A
# call of another session made meanwhile must not wait for that.
t_hash_stall() {
	local out=$TMP/stall.json t0 ms stall
	(
		OUT=$(timeout 60 "$SB_BIN/skillctl" -s "$SOCK" invoke hash-stall --json \
		    --phase execution --session stall 2>&1)
		printf '%s\n' "$OUT" >"$out"
	) &
	stall=$!
	# the stall call started (its start is in the audit log before the
	# skill runs); the skill makes its files in a millisecond, and the
	# daemon deals with them after it
	sb_wait_for 10 "the stall call to start" sb_has_rec \
	    '.event.action == "worker.started" and .session.id == "stall"'
	t0=$(now_ms)
	inv stall-other hello -- other
	ms=$(($(now_ms) - t0))
	expect "the other call" "$SO" "hello ok other"
	wait "$stall"
	OUT=$(cat "$out")
	printf 'hash-stall %s\n' "$OUT" >>"$TMP/replies.log"
	SO=$(j '.output.stdout // ""')
	attack_failed "INFO made 256 sparse files"
	[ "$ms" -le 1500 ] ||
		fail "a call of another session took $ms ms while the daemon dealt with the files (the stall call took $(j .effects.process.duration_ms) ms in the skill)"
	# the files are in the session, as the skill said
	session_list stall
	expect "stall files a later call of the session sees" \
	    "$(printf '%s\n' "$LIST" | grep -c '^FILE stall-')" 256
	session_clear stall
}

t_output_flood() {
	inv fl flood
	expect truncated "$(j .output.truncated)" true
	expect "stdout length" "$(j '.output.stdout | length')" 65536
	expect "stderr length" "$(j '.output.stderr | length')" 0
	[ "$MS" -le 23000 ] || fail "took $MS ms (timeout 20000)"
	[ -z "$SB_VERBOSE" ] ||
		echo "# flood: $MS ms, stdout_bytes $(j .output.stdout_bytes), $(errinfo)"
}

t_sleep_forever() {
	inv sf sleep-forever
	expect error "$(j .error.type)" timeout
	[ "$MS" -le 4500 ] || fail "took $MS ms (timeout 1500)"
	no_worker_procs || fail "processes left: $(worker_procs | head -n 5 | tr '\n' '|')"
}

t_fd_inherit() {
	local fds
	inv fd fds
	attack_failed "OPEN 0 " "OPEN 1 " "OPEN 2 "
	fds=$(printf '%s\n' "$SO" | awk '/^OPEN / { print $2 }' | tr '\n' ' ')
	expect "open fds" "$fds" "0 1 2 "
}

t_env_leak() {
	local names want
	# the skill declares LD_PRELOAD, HOME and PYTHONNOUSERSITE, and the
	# policy lets them: the loader's and the sandbox's own still never pass
	inv env env --env TZ=UTC --env EVIL=1 --env LD_PRELOAD=/tmp/x.so \
	    --env HOME=/work --env PYTHONNOUSERSITE=0
	attack_failed "ENV TZ=UTC" "ENV HOME=/tmp" "ENV PYTHONNOUSERSITE=1"
	names=$(printf '%s\n' "$SO" | sed -n 's/^ENV \([^=]*\)=.*/\1/p' | sort | tr '\n' ' ')
	want="DATA_DIR GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_KEY_1 GIT_CONFIG_VALUE_0 "
	want+="GIT_CONFIG_VALUE_1 HOME LANG PATH PYTHONNOUSERSITE SKILL_DIR TZ WORK_DIR "
	expect "environment names" "$names" "$want"
	! printf '%s\n' "$SO" | grep -qF "$SECRET" || fail "the daemon's SB_SECRET leaked"
	! printf '%s\n' "$SO" | grep '^ENV ' | grep -qF "$TMP" ||
		fail "the environment names host paths: $(printf '%s\n' "$SO" | grep '^ENV ' | grep -F "$TMP" | tr '\n' ' ')"
}

t_tiocsti() {
	inv tty tiocsti
	attack_failed "BLOCKED ioctl TIOCSTI on fd 0: EPERM" \
	    "BLOCKED ioctl TIOCLINUX on fd 0: EPERM" "BLOCKED open /dev/tty:" \
	    "BLOCKED ioctl TIOCSTI|1<<32 on fd 0: EPERM"
	# Explicit bounded wait: no injected input may show up late either.
	sb_never 0.1 "input reached the daemon's terminal after the call" \
	    grep -q 'sbINJECT\|INJECT' "$TMP/tty.log"
	! grep -q 'sbINJECT\|INJECT' "$TMP/tty.log" 2>/dev/null ||
		fail "input reached the daemon's terminal: $(od -c "$TMP/tty.log" | head -n 3 | tr '\n' ' ')"
}

t_host_devices() {
	inv dev devices
	attack_failed "BLOCKED open /dev/vda:" "BLOCKED open /dev/kmsg:" \
	    "BLOCKED mknod /tmp/sbnull:"
}

# File names a skill chose flow back as files_written: bytes that are not
# UTF-8 must not break the daemon's messages (this once stopped it).
t_bad_file_names() {
	local n
	inv badnames bad-names
	attack_failed || return 1
	expect "ok" "$(j .ok)" true
	n=$(j '.effects.files_written | length')
	expect "files reported" "$n" 4
	sb_jq_expect "$OUT" '.effects.files_written[].path | select(test("\\\\xff\\\\xfe"))' \
	    "the invalid bytes are not escaped"
}

# The mounts a daemon of ours could leave on the host, from our own
# mountinfo: any under the temp dir, and every tmpfs of the daemon's
# (the workers' sb-root, sb-dev, sb-tmp; a work dir's tmpfs, which has
# no source, shows as "none"). "MOUNT_POINT FSTYPE SOURCE", sorted.
daemon_mounts() {
	awk -v t="$TMP" '{
		for (i = 7; $i != "-"; i++) ;
		fs = $(i + 1); src = $(i + 2)
		if ($5 == t || index($5, t "/") == 1 ||
		    (fs == "tmpfs" && (src ~ /^sb-/ || src == "none")))
			print $5, fs, src
	}' /proc/self/mountinfo | sort
}

# Kill the master with SIGKILL while a sleeper call (SECONDS) runs in
# session mk; wait for the master and its roles to be gone.
kill_master_during_call() {
	local spid roles p
	(
		timeout 60 "$SB_BIN/skillctl" -s "$SOCK" invoke sleeper --json \
		    --phase execution --session mk -- "$1" >"$TMP/killed.json" 2>&1
	) &
	spid=$!
	sb_bg_add "$spid"
	sb_wait_for 5 "the sleeper call of session mk to run" sleeper_n_up "$1" ||
		return 1
	roles="$(sb_role_pid broker) $(sb_role_pid policyd) $(sb_role_pid auditd)"
	kill -KILL "$SB_DPID"
	sb_wait_for 5 "the master to die" _sb_gone "$SB_DPID" || return 1
	for p in $roles; do
		sb_wait_for 5 "role $p of the killed daemon to go" _sb_gone "$p"
	done
	sb_bg_wait "$spid"
	printf 'sleeper (master killed) %s\n' "$(cat "$TMP/killed.json")" >>"$TMP/replies.log"
	! grep -q SURVIVED "$TMP/killed.json" ||
		fail "the client got the call's reply although its master was killed"
	sb_stop         # reaps the launcher
}
sleeper_n_up() { worker_procs | grep -q " sleep $1\$"; }

# A call runs in a session when the master is killed with SIGKILL: no
# mount of the daemon is left on the host, and a restarted daemon serves
# the session, with an empty work dir (the old one died with the old
# master: it was held by its fd and attached only inside workers).
t_master_killed() {
	local before after
	sb_stop
	before=$(daemon_mounts)
	sb_start || return
	inv mk workfiles put -- kept.txt "before the kill"
	session_list mk
	expect "the session's file before the kill" "$(list_file kept.txt 4)" 16
	kill_master_during_call 2 || return
	after=$(daemon_mounts)
	[ "$after" = "$before" ] ||
		fail "mounts left on the host: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -n 5 | tr '\n' '|')"
	no_host_workdirs
	# A worker of the killed master may outlive it until its skill ends
	# (t_master_killed_workers); the new daemon must not share its uid.
	sb_wait_for 10 "the killed daemon's call to end" sb_no_worker_procs || return
	sb_start || return
	session_list mk
	expect "files in session mk after the restart" \
	    "$(printf '%s\n' "$LIST" | grep '^FILE ' | tr '\n' ' ')" ""
}

# Many sessions' work dirs filled at once: each is bound by work_mb, all
# calls together (what the work dirs hold included) by
# worker.total_memory_mb, the daemon's own cgroup, and the work dirs kept
# between calls by half of it, so full sessions leave room for calls.
# Runs a daemon of its own with 192 MiB for all; then the suite's again.
t_total_memory() {
	local i n total=0 mem held
	sb_require cgroups || return
	sb_stop
	escape_config "worker.total_memory_mb: 192"
	sb_start || return
	mem=$(memory_mb limit)
	expect "the daemon's memory bound (MiB)" "$mem" 192
	for i in 1 2 3 4 5 6; do
		inv "tm$i" disk-fill -- many "$MARK-tm$i"
		n=$(printf '%s\n' "$SO" | sed -n 's/^STOPPED write after \([0-9]*\) MiB.*/\1/p')
		[ -n "$n" ] || n=$(printf '%s\n' "$SO" | awk '/^WROTE / { v = $2 } END { print v + 0 }')
		total=$((total + n))
	done
	held=$(memory_mb usage)
	echo "# six sessions wrote $total MiB; the daemon's calls hold $held MiB of 192"
	[ "$held" -le 112 ] ||
		fail "full sessions hold $held MiB: calls have ${mem}-$held MiB left"
	for i in 1 2 3; do
		healthy t_total_memory
	done
	sb_stop
	escape_config
	sb_start
}

# The processes of a call end with their master: none is left to run
# past its timeout, as a uid the next daemon hands out again.
t_master_killed_workers() {
	local p left
	kill_master_during_call 30 || return
	sb_poll 3 sb_no_worker_procs
	left=$(worker_procs)
	[ -z "$left" ] ||
		fail "the call's processes outlived their master: $(short "$(printf '%s' "$left" | tr '\n' '|')")"
	for p in $(worker_procs | awk '{ print $2 }'); do
		kill -KILL "$p" 2>/dev/null
	done
	sb_wait_for 5 "the leftover processes to die" sb_no_worker_procs
	sb_start
}

# ------------------------------------------------------- fs grants (t_fs_*)
#
# A skill's fs entries are bound into its sandbox as they are: so an
# entry must mean exactly what the bind gives (a wildcard only as a final
# /**, a whole data dir), it must never reach /, /proc, /sys, /dev or the
# daemon's own paths (a skill naming them is invalid, so never runs), and
# a granted directory's submounts are bound with its flags (read-only
# all the way down for a read grant, nosuid and nodev everywhere). Each
# attack is a copy of skills/fs-probe whose skill.yaml declares it; the
# host dirs the grants name are in FSH, not beneath the daemon's paths.

FSPROBE_WROTE="sb-escape fs-probe wrote"
FSPROBE_EXEC="head, cut, tr, ls, mknod, rm, awk, sleep" # what fs-probe runs
FSH_MAIN="int main(void) { return 0; } /* sb-escape fs host main.c */"
FSH_SECRET="sb-escape fs host secret"
SHM_SECRET="sb-escape fs shm secret"
LATE_FS_SECRET="sb-escape fs late mount secret, granted"
LATE_SYS_SECRET="sb-escape fs late mount secret, system"
GONE_SYS_SECRET="sb-escape fs mount secret, unmounted before the call"

# fs_skill NAME KIND ENTRY...: skills/NAME, a copy of fs-probe whose
# skill.yaml declares each ENTRY under permissions.fs.KIND (read or
# write), one a line, the first on line 6.
fs_skill() {
	local name=$1 kind=$2 d=$TMP/skills/$1 e
	shift 2
	cp -R "$TMP/skills/fs-probe" "$d"
	sed -i "s/^name: fs-probe\$/name: $name/" "$d/SKILL.md"
	{
		printf 'commands:\n  run: scripts/run.sh\npermissions:\n  fs:\n    %s:\n' "$kind"
		for e in "$@"; do
			printf '      - "%s"\n' "$e"
		done
		printf '  exec: [%s]\n' "$FSPROBE_EXEC"
	} >"$d/skill.yaml"
}

# The skills of the t_fs_* tests (from setup, before the daemon starts).
fs_skills() {
	local d
	# globs finer than a final /**: each would bind more than it says
	fs_skill fs-glob write "$FSH/host/*/build/**"
	fs_skill fs-glob-mid write "$FSH/host/**/src"
	fs_skill fs-glob-dir write "$FSH/host/pro*/**"
	fs_skill fs-glob-one read "$FSH/host/pro?/**"
	fs_skill fs-glob-files write "$FSH/host/proj/src/*.c"
	fs_skill fs-glob-class write "$FSH/host/[p]roj/**"
	fs_skill fs-glob-second write "$FSH/host/proj/build/**" "$FSH/host/*/src/**"
	fs_skill fs-glob-data write "\$DATA_DIR/*.txt"
	fs_skill fs-glob-skill write "\$SKILL_DIR/*/cache/**"
	# the same in SKILL.md's frontmatter: the entry is on line 9
	d=$TMP/skills/fs-glob-md
	fs_skill fs-glob-md write "$FSH/host/*/src/**"
	rm "$d/skill.yaml"
	cat >"$d/SKILL.md" <<-MD
	---
	name: fs-glob-md
	description: An fs glob finer than a final /** in SKILL.md's frontmatter.
	commands:
	  run: scripts/run.sh
	permissions:
	  fs:
	    write:
	      - "$FSH/host/*/src/**"
	---
	# fs-glob-md

	Escape suite (tests/escape/run.sh), t_fs_glob_forms.
	MD
	# the kernel's own file systems
	fs_skill fs-proc read "/proc/**"
	fs_skill fs-proc-bare read "/proc"
	fs_skill fs-proc-pid read "/proc/1/root/**"
	fs_skill fs-sys read "/sys/**"
	fs_skill fs-dev read "/dev/**"
	fs_skill fs-dev-bare read "/dev"
	fs_skill fs-dev-shm write "/dev/shm/**"
	# the daemon's own paths, what holds them, what lies beneath them
	fs_skill fs-state read "$TMP/state/**"
	fs_skill fs-state-parent read "$TMP/**"
	fs_skill fs-state-tmp read "/tmp/**"
	fs_skill fs-state-root read "/**"
	fs_skill fs-state-slash read "/"
	fs_skill fs-state-audit read "$TMP/log/**"
	fs_skill fs-state-auditfile read "$TMP/log/audit.jsonl"
	fs_skill fs-state-policy read "$TMP/policy.d/**"
	fs_skill fs-state-skills read "$TMP/skills/**"
	fs_skill fs-state-hello write "$TMP/skills/hello/**"
	fs_skill fs-state-data write "$TMP/state/data/**"
	# the same places spelt another way
	# (not "/.": on a daemon that took it, the host's root would be the
	# sandbox's, and its remount read-only would reach the host's)
	fs_skill fs-sp-dot read "/tmp/."
	fs_skill fs-sp-proc read "//proc/**"
	fs_skill fs-sp-shm write "//dev/shm/**"
	fs_skill fs-sp-state read "/tmp//${TMP#/tmp/}/state/**"
	fs_skill fs-sp-dotdir read "$TMP/."
	# host symlinks to them (planted here, by the admin side)
	ln -sfn /proc "$FSH/plink"
	ln -sfn "$TMP" "$FSH/slink"
	fs_skill fs-sp-plink read "$FSH/plink/**"
	fs_skill fs-sp-slink read "$FSH/slink/**"
	# a host dir with a file system mounted inside (t_fs_submount_*)
	fs_skill fs-sub-ro read "$FSH/sub/**"
	fs_skill fs-sub-rw write "$FSH/sub/**"
	# a host dir the host mounts inside while a call runs (t_fs_no_propagation)
	fs_skill fs-prop read "$FSH/prop/**"
	# the whole data dir alone (beside skills/fs-legit)
	fs_skill fs-data-bare read "\$DATA_DIR"
}

# A project tree on the host that the glob attacks aim at: files and
# dirs anyone may write, so that only the registry and the sandbox keep
# a skill away. FSH_STAT: its owners, modes and hashes.
fs_host_plant() {
	rm -rf "$FSH/host"
	mkdir -p "$FSH/host/proj/src" "$FSH/host/proj/build"
	echo "$FSH_MAIN" >"$FSH/host/proj/src/main.c"
	echo "$FSH_SECRET" >"$FSH/host/secret.txt"
	chmod 666 "$FSH/host/proj/src/main.c" "$FSH/host/secret.txt"
	chmod 1777 "$FSH/host" "$FSH/host/proj" "$FSH/host/proj/src" \
	    "$FSH/host/proj/build"
	FSH_STAT=$(fs_tree_stat "$FSH/host")
}

# Every path beneath DIR with its owner, mode, size and content hash.
fs_tree_stat() {
	local f
	find "$1" -xdev -printf '%p %U:%G %m %s\n' 2>&1 | sort
	find "$1" -type f 2>/dev/null | sort | while read -r f; do
		printf '%s %s\n' "$f" "$(sha256sum <"$f" | cut -c1-64)"
	done
}

# fs_host_intact DIR BEFORE: the tree under DIR is as BEFORE says.
fs_host_intact() {
	local now
	now=$(fs_tree_stat "$1")
	[ "$now" = "$2" ] ||
		fail "host files under $1 changed: $(diff <(echo "$2") <(echo "$now") | grep '^[<>]' | head -n 6 | tr '\n' ' ')"
}

# Fetch the registry (skillctl skills --json) into SKILLS.
fs_registry() {
	sb_ctl skills --json
	SKILLS=$OUT
	[ "$(printf '%s' "$SKILLS" | jq -r '.skills | length' 2>/dev/null)" -gt 0 ] 2>/dev/null ||
		fail "no skills listing (skillctl rc $RC): $(short "$SKILLS")"
}

# fs_invalid NAME WHERE KIND ENTRY WHY: NAME is invalid in SKILLS and its
# error says WHERE (skill.yaml:6, the entry's file and line), then
# KIND "ENTRY", then a reason matching the extended regex WHY.
fs_invalid() {
	local name=$1 where=$2 kind=$3 entry=$4 why=$5 valid err head
	valid=$(printf '%s' "$SKILLS" | jq -r --arg n "$name" \
	    '.skills[] | select(.name == $n) | .valid')
	err=$(printf '%s' "$SKILLS" | jq -r --arg n "$name" \
	    '.skills[] | select(.name == $n) | .error // ""')
	if [ "$valid" != false ]; then
		fail "$name ($kind \"$entry\") is valid: '$valid'"
		return 1
	fi
	head="$where: $kind \"$entry\""
	case $err in
	*"$head"*)
		printf '%s' "${err#*"$head"}" | grep -qiE -- "$why" ||
			fail "$name: the error gives no reason like /$why/: $(short "$err")" ;;
	*) fail "$name: the error does not say '$head': $(short "$err")" ;;
	esac
}

# fs_not_run NAME ARGS...: the attack (fs-probe's ARGS) in a call of the
# invalid NAME is refused as such, and nothing of it ran.
fs_not_run() {
	local name=$1
	shift
	inv fs "$name" -- "$@"
	expect "$name: the call's error" "$(j '.error.type // "none"')" skill_not_enabled
	[ -z "$SO" ] || fail "$name ran: $(short "$(printf '%s' "$SO" | tr '\n' '|')")"
}

# fs_refused NAME WHERE KIND ENTRY WHY ARGS...: fs_invalid and fs_not_run.
fs_refused() {
	fs_invalid "$1" "$2" "$3" "$4" "$5"
	fs_not_run "$1" "${@:6}"
}

# What a glob attack does when it runs: overwrite main.c, plant source
# and build output, read a host file beside the project.
fs_glob_attack() {
	echo write "$FSH/host/proj/src/main.c" write "$FSH/host/proj/src/evil.c" \
	    write "$FSH/host/proj/build/out.o" write "$FSH/host/planted" \
	    read "$FSH/host/secret.txt"
}

# A test's start: the replies so far are not its own.
fs_begin() { FS_REPLIES=$(wc -l 2>/dev/null <"$TMP/replies.log" || echo 0); }

# No reply of this test holds the text of a host file the grants aimed
# at: the project, the host secret, a file in /dev/shm, the daemon's
# environment, the audit log, the policy.
fs_no_secret_seen() {
	local s r
	r=$(tail -n "+$((FS_REPLIES + 1))" "$TMP/replies.log" 2>/dev/null)
	for s in "$FSH_MAIN" "$FSH_SECRET" "$SHM_SECRET" "$LATE_FS_SECRET" \
	    "$LATE_SYS_SECRET" "$SECRET" "policy.decision" \
	    "escape suite policy (generated"; do
		! printf '%s' "$r" | grep -qF -- "$s" ||
			fail "a reply holds host text '$(short "$s")': $(printf '%s' "$r" | grep -F -- "$s" | head -n 1 | cut -c 1-200)"
	done
}

# A skill declaring fs.write "<host>/*/build/**" (meant: each project's
# build dir) is invalid at load, with the file and line of the entry; its
# call is refused, and the host's project is as it was (on a daemon that
# bound the dir before the first wildcard, it overwrote src/main.c).
t_fs_glob_exact() {
	local a
	fs_begin
	fs_host_plant
	fs_registry || return
	a=$(fs_glob_attack)
	# shellcheck disable=SC2086 # host paths without spaces
	fs_refused fs-glob skill.yaml:6 fs.write "$FSH/host/*/build/**" \
	    'wildcard|glob|/\*\*' $a
	fs_host_intact "$FSH/host" "$FSH_STAT"
	[ "$(cat "$FSH/host/proj/src/main.c")" = "$FSH_MAIN" ] ||
		fail "the host's main.c now reads: $(short "$(cat "$FSH/host/proj/src/main.c")")"
	fs_no_secret_seen
}

# The other globs a sandbox bind cannot hold to, in skill.yaml and in
# SKILL.md, and $DATA_DIR globs (a data dir is granted whole or not at
# all); $SKILL_DIR globs may be read, not written.
t_fs_glob_forms() {
	local a
	fs_begin
	fs_host_plant
	fs_registry || return
	a=$(fs_glob_attack)
	# shellcheck disable=SC2086
	{
		fs_refused fs-glob-mid skill.yaml:6 fs.write "$FSH/host/**/src" \
		    'wildcard|glob' $a
		fs_refused fs-glob-dir skill.yaml:6 fs.write "$FSH/host/pro*/**" \
		    'wildcard|glob' $a
		fs_refused fs-glob-one skill.yaml:6 fs.read "$FSH/host/pro?/**" \
		    'wildcard|glob' $a
		fs_refused fs-glob-files skill.yaml:6 fs.write "$FSH/host/proj/src/*.c" \
		    'wildcard|glob' $a
		fs_refused fs-glob-class skill.yaml:6 fs.write "$FSH/host/[p]roj/**" \
		    'wildcard|glob' $a
		fs_refused fs-glob-md SKILL.md:9 fs.write "$FSH/host/*/src/**" \
		    'wildcard|glob' $a
		fs_refused fs-glob-data skill.yaml:6 fs.write "\$DATA_DIR/*.txt" \
		    'DATA_DIR|data dir' write /data/evil.txt
		fs_refused fs-glob-skill skill.yaml:6 fs.write "\$SKILL_DIR/*/cache/**" \
		    'wildcard|glob' write /skill/evil.txt
	}
	fs_host_intact "$FSH/host" "$FSH_STAT"
	fs_no_secret_seen
}

# A bad entry after a good one: the error names the bad entry's own line
# (7), so that a user finds it, and its call is refused.
t_fs_glob_line() {
	local a
	fs_begin
	fs_host_plant
	fs_registry || return
	a=$(fs_glob_attack)
	# shellcheck disable=SC2086
	fs_refused fs-glob-second skill.yaml:7 fs.write "$FSH/host/*/src/**" \
	    'wildcard|glob' $a
	fs_host_intact "$FSH/host" "$FSH_STAT"
	fs_no_secret_seen
}

# /proc (the host's processes: the master, this shell), /proc/1/root
# (the host's root through init) and /sys: never granted.
t_fs_proc_never() {
	local a
	fs_begin
	fs_registry || return
	a="pid $SB_DPID pid $$ read /proc/$SB_DPID/environ read /proc/1/root$CONF list /sys/fs/cgroup"
	# shellcheck disable=SC2086
	{
		fs_refused fs-proc skill.yaml:6 fs.read "/proc/**" 'never|cannot|not be' $a
		fs_refused fs-proc-bare skill.yaml:6 fs.read "/proc" 'never|cannot|not be' $a
		fs_refused fs-proc-pid skill.yaml:6 fs.read "/proc/1/root/**" \
		    'never|cannot|not be' $a
		fs_refused fs-sys skill.yaml:6 fs.read "/sys/**" 'never|cannot|not be' $a
	}
	fs_no_secret_seen
}

# /dev (the host's devices, and its /dev/shm: writable beneath a read
# grant when submounts kept their own flags) and /dev/shm: never granted;
# nothing appears in the host's /dev/shm, and nothing there is seen.
t_fs_dev_never() {
	local a f left=""
	fs_begin
	echo "$SHM_SECRET" >"/dev/shm/$MARK-host"
	chmod 644 "/dev/shm/$MARK-host"
	fs_registry || return
	a="list /dev read /dev/shm/$MARK-host write /dev/shm/$MARK-w dev /dev/vda"
	# shellcheck disable=SC2086
	{
		fs_refused fs-dev skill.yaml:6 fs.read "/dev/**" 'never|cannot|not be' $a
		fs_refused fs-dev-bare skill.yaml:6 fs.read "/dev" 'never|cannot|not be' $a
		fs_refused fs-dev-shm skill.yaml:6 fs.write "/dev/shm/**" \
		    'never|cannot|not be' $a
	}
	for f in /dev/shm/"$MARK"*; do
		[ ! -e "$f" ] || [ "$f" = "/dev/shm/$MARK-host" ] || left="$left $f"
	done
	[ -z "$left" ] || fail "files appeared in the host's /dev/shm: $left"
	rm -f "/dev/shm/$MARK-host"
	fs_no_secret_seen
}

# The daemon's state dir, what holds it ($TMP, where its socket is; /tmp;
# / as /** or itself), the audit log's dir and the log itself, the
# policy dir, the skills dir and a skill in it, a dir beneath the state
# dir: never granted. What such a skill would read or write: the audit
# log (other sessions' calls), the config, the policy, another skill.
t_fs_state_never() {
	local a n e k before_hello
	fs_begin
	before_hello=$(fs_tree_stat "$TMP/skills/hello")
	fs_registry || return
	a="read $AUDIT read $CONF read $TMP/policy.d/10-escape.yaml list $TMP/state"
	a="$a write $TMP/skills/hello/$MARK write $TMP/state/data/$MARK write $TMP/$MARK"
	while read -r n k e <&3; do
		# shellcheck disable=SC2086
		fs_refused "$n" skill.yaml:6 "$k" "$e" 'never|cannot|not be|daemon' $a
	done 3<<-LIST
	fs-state fs.read $TMP/state/**
	fs-state-parent fs.read $TMP/**
	fs-state-tmp fs.read /tmp/**
	fs-state-root fs.read /**
	fs-state-slash fs.read /
	fs-state-audit fs.read $TMP/log/**
	fs-state-auditfile fs.read $TMP/log/audit.jsonl
	fs-state-policy fs.read $TMP/policy.d/**
	fs-state-skills fs.read $TMP/skills/**
	fs-state-hello fs.write $TMP/skills/hello/**
	fs-state-data fs.write $TMP/state/data/**
	LIST
	for n in "$TMP/skills/hello/$MARK" "$TMP/state/data/$MARK" "$TMP/$MARK"; do
		[ ! -e "$n" ] || { fail "$n appeared on the host"; rm -f "$n"; }
	done
	fs_host_intact "$TMP/skills/hello" "$before_hello"
	fs_no_secret_seen
}

# What the spelling and symlink attacks try: the master's process, the
# audit log and config, a file in the host's /dev/shm; writes to /dev/shm,
# /, /tmp and the daemon's dir.
fs_place_attack() {
	echo "pid $SB_DPID read $AUDIT read $CONF list $TMP/state read /dev/shm/$MARK-host" \
	    "write /dev/shm/$MARK-w write /$MARK write /tmp/$MARK write $TMP/$MARK"
}

# Nothing of fs_place_attack landed on the host; the planted /dev/shm
# file goes.
fs_place_intact() {
	local n
	for n in "/dev/shm/$MARK-w" "/$MARK" "/tmp/$MARK" "$TMP/$MARK"; do
		[ ! -e "$n" ] || { fail "$n appeared on the host"; rm -f "$n"; }
	done
	rm -f "/dev/shm/$MARK-host"
}

# The same places spelt so that a comparison of strings misses them
# ("/tmp/.", "//proc", "//dev/shm", "/tmp//<the suite's dir>/state",
# "$TMP/."):
# invalid like the plain spelling, and never run.
t_fs_spelling_never() {
	local a
	fs_begin
	echo "$SHM_SECRET" >"/dev/shm/$MARK-host"
	chmod 644 "/dev/shm/$MARK-host"
	fs_registry || return
	a=$(fs_place_attack)
	# shellcheck disable=SC2086
	{
		fs_refused fs-sp-dot skill.yaml:6 fs.read "/tmp/." \
		    'never|cannot|not be|daemon' $a
		fs_refused fs-sp-proc skill.yaml:6 fs.read "//proc/**" 'never|cannot|not be' $a
		fs_refused fs-sp-shm skill.yaml:6 fs.write "//dev/shm/**" \
		    'never|cannot|not be' $a
		fs_refused fs-sp-state skill.yaml:6 fs.read "/tmp//${TMP#/tmp/}/state/**" \
		    'never|cannot|not be|daemon' $a
		fs_refused fs-sp-dotdir skill.yaml:6 fs.read "$TMP/." \
		    'never|cannot|not be|daemon' $a
	}
	fs_place_intact
	fs_no_secret_seen
}

# Host symlinks (the admin's) to /proc and to $TMP, granted as
# "<link>/**": no call sees what they lead to (the skill is invalid, or
# its set-up refuses to follow the link).
t_fs_symlink_never() {
	local n
	fs_begin
	for n in fs-sp-plink fs-sp-slink; do
		inv fs "$n" -- read "$FSH/plink/$SB_DPID/cmdline" list "$FSH/plink/$$" \
		    read "$FSH/slink/sb.yaml" list "$FSH/slink/state" pid "$SB_DPID" read "$CONF"
		case "$(j .ok) $(j '.error.type // ""')" in
		"false skill_not_enabled" | "false sandbox_failed") ;;
		*) printf '%s\n' "$SO" | grep -qx DONE ||
			fail "$n: neither refused nor run ($(errinfo))" ;;
		esac
		! printf '%s\n' "$SO" | grep -qE '^(SEEN|LISTED|WROTE)' ||
			fail "$n reached the host: $(printf '%s\n' "$SO" | grep -E '^(SEEN|LISTED|WROTE)' | head -n 3 | tr '\n' '|')"
	done
	fs_no_secret_seen
}

# FSH/sub, a host dir anyone may write, with a tmpfs mounted at sub/mnt
# (as the host mounts them: suid and dev allowed), files anyone may
# write in both, a device node (/dev/null's) anyone may open in both and
# a setuid-root program in both. SUB_STAT: all of it.
fs_sub_mount() {
	local d=$FSH/sub f
	fs_sub_umount
	rm -rf "$d"
	mkdir -p "$d/mnt"
	mount -t tmpfs -o size=1m,mode=1777 sb-escape-sub "$d/mnt" ||
		{ fail "cannot mount a tmpfs at $d/mnt"; return 1; }
	chmod 1777 "$d" "$d/mnt"
	echo "sb-escape sub a" >"$d/a"
	echo "sb-escape sub mnt b" >"$d/mnt/b"
	for f in "$d" "$d/mnt"; do
		mknod -m 666 "$f/null" c 1 3
		cp "$TMP/skills/setuid/bin/suid" "$f/suid"
		chown root:root "$f/suid"
		chmod 4755 "$f/suid"
	done
	chmod 666 "$d/a" "$d/mnt/b"
	SUB_STAT=$(fs_tree_stat "$d")$'\n'$(fs_tree_stat "$d/mnt")
}
fs_sub_umount() {
	! mountpoint -q "$FSH/sub/mnt" 2>/dev/null || umount "$FSH/sub/mnt" ||
		umount -l "$FSH/sub/mnt"
}

# probe_line PREFIX: the first line of SO that starts with PREFIX.
probe_line() { printf '%s\n' "$SO" | grep -F -- "$1" | head -n 1; }

# A read grant of FSH/sub: both files read, but no write lands, in the
# dir or in the file system mounted inside it (read-only all the way
# down), and neither mount lets a device node or a setuid bit work.
t_fs_submount_ro() {
	local d=$FSH/sub now
	fs_begin
	fs_registry || return
	expect "fs-sub-ro valid" \
	    "$(printf '%s' "$SKILLS" | jq -r '.skills[] | select(.name == "fs-sub-ro") | .valid')" true
	fs_sub_mount || return
	inv subro fs-sub-ro -- read "$d/a" read "$d/mnt/b" write "$d/a" write "$d/new" \
	    write "$d/mnt/b" write "$d/mnt/new" mount "$d" mount "$d/mnt" \
	    dev "$d/null" dev "$d/mnt/null" run "$d/mnt/suid"
	if ! printf '%s\n' "$SO" | grep -qx DONE; then
		fail "the call did not run ($(errinfo)): $(short "$SO")"
	else
		sb_contains "read sub/a" "$(probe_line "SEEN $d/a:")" "sb-escape sub a"
		sb_contains "read sub/mnt/b" "$(probe_line "SEEN $d/mnt/b:")" "sb-escape sub mnt b"
		! printf '%s\n' "$SO" | grep -qE '^(WROTE|OPENED) ' ||
			fail "wrote or opened through a read grant: $(printf '%s\n' "$SO" | grep -E '^(WROTE|OPENED) ' | tr '\n' '|')"
		fs_mount_flags "$d" ro
		fs_mount_flags "$d/mnt" ro
		# granted paths are noexec: the setuid program does not run at all
		printf '%s\n' "$(probe_line "RAN $d/mnt/suid:")" | grep -q 'Permission denied' ||
			fail "the setuid program: $(short "$(probe_line "RAN $d/mnt/suid:")")"
	fi
	now=$(fs_tree_stat "$d")$'\n'$(fs_tree_stat "$d/mnt")
	[ "$now" = "$SUB_STAT" ] ||
		fail "host files under $d changed: $(diff <(echo "$SUB_STAT") <(echo "$now") | grep '^[<>]' | head -n 6 | tr '\n' ' ')"
	fs_sub_umount
}

# fs_mount_flags PATH FLAG...: the mount the skill sees at PATH has
# nosuid, nodev, noexec and each FLAG among its options.
fs_mount_flags() {
	local p=$1 l f
	shift
	l=$(probe_line "MOUNT $p ")
	for f in nosuid nodev noexec "$@"; do
		case ,${l##* }, in
		*,"$f",*) ;;
		*) fail "the mount at $p inside lacks $f: '$l'" ;;
		esac
	done
}

# A write grant of FSH/sub: writes land in the dir and in the file
# system mounted inside it; neither lets a device node be opened or made,
# nor a setuid-root program run as root.
t_fs_submount_nosuid() {
	local d=$FSH/sub f
	fs_begin
	fs_registry || return
	expect "fs-sub-rw valid" \
	    "$(printf '%s' "$SKILLS" | jq -r '.skills[] | select(.name == "fs-sub-rw") | .valid')" true
	fs_sub_mount || return
	inv subrw fs-sub-rw -- write "$d/new" write "$d/mnt/new" mount "$d" mount "$d/mnt" \
	    dev "$d/null" dev "$d/mnt/null" mknod "$d/node" mknod "$d/mnt/node" \
	    run "$d/suid" run "$d/mnt/suid"
	if ! printf '%s\n' "$SO" | grep -qx DONE; then
		fail "the call did not run ($(errinfo)): $(short "$SO")"
	else
		for f in "$d/new" "$d/mnt/new"; do
			[ -n "$(probe_line "WROTE $f")" ] ||
				fail "no write to $f: $(short "$(probe_line "FAILED write $f")")"
			[ "$(cat "$f" 2>/dev/null)" = "$FSPROBE_WROTE" ] ||
				fail "the host's $f does not hold what the skill wrote"
		done
		! printf '%s\n' "$SO" | grep -qE '^(OPENED|MADE) ' ||
			fail "a device node worked: $(printf '%s\n' "$SO" | grep -E '^(OPENED|MADE) ' | tr '\n' '|')"
		fs_mount_flags "$d" rw
		fs_mount_flags "$d/mnt" rw
		for f in "$d/suid" "$d/mnt/suid"; do
			probe_line "RAN $f:" | grep -q 'Permission denied' ||
				fail "the setuid program $f: $(short "$(probe_line "RAN $f:")")"
			! probe_line "RAN $f:" | grep -q ESCAPED ||
				fail "the setuid program $f: $(short "$(probe_line "RAN $f:")")"
		done
	fi
	for f in "$d/node" "$d/mnt/node"; do
		[ ! -e "$f" ] || fail "a node $f appeared on the host"
	done
	fs_sub_umount
}

# FSH/prop (read by fs-prop) and SYSP (a system path), each with a file
# and an empty dir "late" that the host mounts on while a call runs.
fs_prop_plant() {
	local d
	fs_prop_umount
	rm -rf "$FSH/prop" "$SYSP/late" "$SYSP/before"
	for d in "$FSH/prop" "$SYSP"; do
		mkdir -p "$d/late"
		echo "sb-escape fs before" >"$d/before"
		chmod 755 "$d" "$d/late"
		chmod 644 "$d/before"
		# shared, as systemd makes every mount: where the host's
		# mounts are private, nothing could propagate anyway
		mount --bind "$d" "$d" && mount --make-shared "$d" ||
			{ fail "cannot make $d a shared mount"; return 1; }
	done
}
fs_prop_umount() {
	local m
	for m in "$FSH/prop/late" "$SYSP/late" "$FSH/prop" "$SYSP"; do
		! mountpoint -q "$m" 2>/dev/null || umount "$m" || umount -l "$m"
	done
}
# fs_late_mount SOURCE DIR TEXT: a tmpfs at DIR whose file "secret",
# readable by anyone, holds TEXT.
fs_late_mount() {
	mount -t tmpfs -o size=1m,mode=755 "$1" "$2" ||
		{ fail "cannot mount a tmpfs at $2"; return 1; }
	echo "$3" >"$2/secret"
	chmod 644 "$2/secret"
}
# fs-prop's call polls for FSH/prop/go: its sandbox is built.
fs_prop_waits() { worker_procs | grep -q ' sleep 0.05$'; }

# Mounts the host makes while a call runs, beneath its read grant and
# beneath a system path, never show in its sandbox (no propagation from
# the host): no mount inside, nothing of what they hold.
t_fs_no_propagation() {
	local p=$FSH/prop pid m
	fs_begin
	fs_registry || return
	expect "fs-prop valid" \
	    "$(printf '%s' "$SKILLS" | jq -r '.skills[] | select(.name == "fs-prop") | .valid')" true
	fs_prop_plant || return
	( inv prop fs-prop -- waitfor "$p/go" read "$p/before" read "$SYSP/before" \
	    mount "$p" mount "$SYSP" read "$p/late/secret" read "$SYSP/late/secret" \
	    list "$p/late" list "$SYSP/late" mount "$p/late" mount "$SYSP/late" \
	    source sb-escape-late-fs source sb-escape-late-sys
	printf '%s' "$OUT" >"$TMP/prop.json"
	exit "$RC" ) &
	pid=$!
	sb_bg_add "$pid"
	if sb_wait_for 8 "the fs-prop call to wait for $p/go" fs_prop_waits; then
		fs_late_mount sb-escape-late-fs "$p/late" "$LATE_FS_SECRET" &&
			fs_late_mount sb-escape-late-sys "$SYSP/late" "$LATE_SYS_SECRET"
	fi
	touch "$p/go"
	sb_bg_wait "$pid"
	fs_prop_umount
	OUT=$(cat "$TMP/prop.json" 2>/dev/null) RC=$SB_BG_RC
	SO=$(j '.output.stdout // ""')
	if ! printf '%s\n' "$SO" | grep -qx DONE; then
		fail "the call did not run ($(errinfo)): $(short "$SO")"
		return
	fi
	expect "waitfor" "$(probe_line "$p/go")" "APPEARED $p/go"
	# what was there before the call shows: the probe looks where it should
	sb_contains "read prop/before" "$(probe_line "SEEN $p/before:")" "sb-escape fs before"
	sb_contains "read SYSP/before" "$(probe_line "SEEN $SYSP/before:")" "sb-escape fs before"
	fs_mount_flags "$p" ro
	[ "$(probe_line "MOUNT $SYSP ")" != "MOUNT $SYSP none" ] ||
		fail "no mount of the system path $SYSP inside"
	for m in "$p/late" "$SYSP/late"; do
		sb_contains "read $m/secret" "$(probe_line "$m/secret:")" "FAILED read $m/secret:"
		expect "list $m" "$(probe_line "LISTED $m:")" "LISTED $m: "
		expect "mount $m" "$(probe_line "MOUNT $m ")" "MOUNT $m none"
	done
	for m in sb-escape-late-fs sb-escape-late-sys; do
		expect "mounts of $m" "$(probe_line "SOURCE $m ")" "SOURCE $m none"
	done
	fs_no_secret_seen
}

# The warm pool: pre-forked workers of the master, as root (no grant yet).
pool_workers() {
	ps -o pid=,uid=,comm= --ppid "$SB_DPID" |
	    awk '$2 == 0 && $3 ~ /^skillbroker-wor/ { print $1 }' | sort
}
# Two warm workers (worker.pool's default), none of those in $1.
pool_new() {
	local p
	p=$(pool_workers)
	[ "$(printf '%s' "$p" | grep -c .)" -eq 2 ] &&
		! printf '%s\n' "$p" | grep -qxF -f <(printf '%s\n' $1)
}

# A pre-forked worker bound the system paths at its start, with what
# the host had mounted beneath them then. The host then unmounts one
# (a secret, mounted there by mistake): the next call, which takes a
# warm worker, must not see it; and a call made while it was mounted
# did (the system paths show as the host has them).
t_fs_pool_unmounted() {
	local g=$SYSP/gone before refilled
	fs_begin
	! mountpoint -q "$g" 2>/dev/null || umount "$g" || umount -l "$g"
	rm -rf "$g"
	mkdir -p "$g" && chmod 755 "$g"
	before=$(pool_workers)
	fs_late_mount sb-escape-gone-sys "$g" "$GONE_SYS_SECRET" || return
	inv gone1 fs-prop -- read "$g/secret" source sb-escape-gone-sys
	expect "the call while mounted ($(errinfo))" "$(j .ok)" true
	expect "read while mounted" "$(probe_line "$g/secret:")" \
	    "SEEN $g/secret: $GONE_SYS_SECRET"
	# the pool refilled since the mount: its workers bound the secret
	sb_poll 10 pool_new "$before" ||
		fail "the pool did not refill: $(pool_workers | tr '\n' ' ')"
	sleep 0.5 # their PREP is done: they wait for a grant
	refilled=$(pool_workers)
	umount "$g" || { fail "cannot unmount $g"; return; }
	inv gone2 fs-prop -- read "$g/secret" list "$g" source sb-escape-gone-sys
	expect "the call after the unmount ($(errinfo))" "$(j .ok)" true
	sb_contains "read after the unmount" "$(probe_line "$g/secret:")" \
	    "FAILED read $g/secret:"
	expect "list after the unmount" "$(probe_line "LISTED $g:")" "LISTED $g: "
	expect "mounts of the unmounted source" \
	    "$(probe_line "SOURCE sb-escape-gone-sys ")" "SOURCE sb-escape-gone-sys none"
	! printf '%s' "$OUT" | grep -qF -- "$GONE_SYS_SECRET" ||
		fail "the call after the unmount saw what was mounted: $(short "$SO")"
	# the workers that bound it were retired, not only passed over
	sb_poll 10 pool_new "$refilled" ||
		fail "workers that bound the unmounted path are still warm: $(pool_workers | tr '\n' ' ')"
	rm -rf "$g"
}

# What stays valid: the whole data dir read-write ($DATA_DIR/**) or
# read ($DATA_DIR), globs under $WORK_DIR, reads of globs under
# $SKILL_DIR. They load, and their calls work (the data kept between
# calls).
t_fs_legit_grants() {
	local n
	[ -e /dev/loop-control ] ||
		{ sb_skip "no loop devices here (/dev/loop-control): data dirs cannot be mounted"; return; }
	fs_registry || return
	for n in fs-legit fs-data-bare; do
		expect "$n valid" "$(printf '%s' "$SKILLS" | jq -r --arg n "$n" \
		    '.skills[] | select(.name == $n) | "\(.valid) \(.error // "")"')" "true "
	done
	inv legit1 fs-legit -- "$MARK"
	expect "fs-legit ok ($(errinfo))" "$(j .ok)" true
	expect "fs-legit data" "$(probe_line "HOLDS /data/")" "HOLDS /data/$MARK.txt: line $MARK|"
	expect "fs-legit work" "$(probe_line "HOLDS /work/")" "HOLDS /work/$MARK.txt: line $MARK|"
	expect "fs-legit csv" "$(probe_line CSV)" "CSV name,value|sb-escape fs-legit csv,1|"
	inv legit2 fs-legit -- "$MARK"
	expect "fs-legit data, a second call" "$(probe_line "HOLDS /data/")" \
	    "HOLDS /data/$MARK.txt: line $MARK|line $MARK|"
	expect "fs-legit work, another session" "$(probe_line "HOLDS /work/")" \
	    "HOLDS /work/$MARK.txt: line $MARK|"
	# its own data dir (a skill's own), shown read-only
	inv legit3 fs-data-bare -- list /data write "/data/$MARK-ro"
	expect "fs-data-bare ok ($(errinfo))" "$(j .ok)" true
	sb_contains "fs-data-bare lists /data" "$(probe_line "LISTED /data:")" "LISTED /data:"
	sb_contains "fs-data-bare writes" "$(probe_line "FAILED write /data/")" \
	    "FAILED write /data/$MARK-ro"
}

# ------------------------------------------------------------------- main

# ---------------------------------------------------------------- exec

# The loader the host's programs name (PT_INTERP), as the skills call it.
exec_loader() {
	local l
	l=$(readelf -l /bin/sh 2>/dev/null | sed -n 's/.*interpreter: \(\/[^]]*\)\]/\1/p')
	printf '%s\n' "${l:-/lib64/ld-linux-x86-64.so.2}"
}

# A skill allowed only sh: python3, perl, curl, env, the loader on
# python3 and perl, and copies of sh and python3 (made in the session's
# work dir by exec-cp, which may run cp, and in its own /tmp) never run;
# sh does. authorize shows the resolved programs.
t_exec_sh_only() {
	local loader sh
	loader=$(exec_loader)
	sh=$(readlink -f /bin/sh)
	inv ex exec-cp -- "$loader"
	attack_failed "INFO copied into /work" "INFO copied into /tmp" \
	    "BLOCKED /work/sh-copy -c:" "BLOCKED /tmp/sh-copy -c:" \
	    "BLOCKED $loader /work/py-copy -c:" "BLOCKED $loader /tmp/py-copy -c:" ||
		return
	inv ex exec-sh -- "$loader"
	attack_failed "RAN sh" "INFO the copies are there" "BLOCKED python3:" \
	    "BLOCKED perl:" "BLOCKED curl:" "BLOCKED env python3:" \
	    "BLOCKED loader python3:" "BLOCKED loader perl:" \
	    "BLOCKED work copy of sh:" "BLOCKED loader work copy of sh:" \
	    "BLOCKED work copy of python3:" "BLOCKED loader work copy of python3:" \
	    "BLOCKED another script of the skill:" || return
	sb_ctl authorize exec-sh --json --phase execution
	expect programs "$(printf '%s' "$OUT" | jq -c .effective.programs)" \
	    "[\"/skill/scripts/run.sh\",\"$sh\",\"$(readlink -f "$loader")\"]"
}

# A python3 entry point (#!/usr/bin/env python3) that declares no
# program: its C extensions load; sh, id, env's programs and an
# executable memfd do not run.
t_exec_python_entry() {
	inv ep exec-py
	attack_failed "IMPORTED ssl" "BLOCKED subprocess /bin/sh:" \
	    "BLOCKED subprocess env sh:" "BLOCKED subprocess id:" "BLOCKED os.system:" \
	    "BLOCKED memfd_create MFD_EXEC:" || return
	printf '%s\n' "$SO" | grep -q "^BLOCKED memfd" || fail "memfd: $(short "$SO")"
	printf '%s\n' "$SO" | grep -q "^uid=" && fail "the memfd program ran: $(short "$SO")"
	[ -z "$WHY" ]
}

# A skill declaring a program the sandbox does not have is refused with
# a clear error naming it and the PATH searched, and nothing runs.
t_exec_missing_program() {
	local started
	started=$(sb_recs '.event.action == "worker.started" and .skill.name == "exec-missing"' | wc -l)
	inv em exec-missing
	expect error "$(j .error.type)" sandbox_failed || return
	sb_contains message "$(j .error.message)" 'exec "sb-no-such-program": no such program in the sandbox'"'"'s PATH (/usr/local/bin:/usr/bin:/bin)'
	! printf '%s\n' "$SO" | grep -q ESCAPED || fail "it ran: $(short "$SO")"
	expect "worker.started records" \
	    "$(sb_recs '.event.action == "worker.started" and .skill.name == "exec-missing"' | wc -l)" "$started"
	sb_ctl authorize exec-missing --json --phase execution
	expect "authorize error" "$(j .error.type)" sandbox_failed
}

# An entry run by its declared interpreter is read, not executed: it
# cannot execute itself, though it is executable and its "#!" line names
# that same interpreter; sh, which nothing grants, does not run. What the
# interpreter may do, it does: run the entry again as its argument.
t_exec_interpreted_entry() {
	inv ei exec-interp
	attack_failed "INFO argv0 /skill/scripts/probe.py cwd /work" \
	    "BLOCKED exec the entry:" "BLOCKED exec sh:" \
	    "RAN python3 the entry" "RAN python3 entry"
}

ALL="t_read_shadow t_read_host_files t_write_outside t_skill_symlink_commands
t_skill_symlink_files t_skill_dir_symlinks t_workdir_symlinks t_workdir_race t_host_processes
t_kill_other_worker t_capabilities t_setuid_root t_mount_unshare_setns
t_io_uring t_seccomp_denylist t_session_startup_files t_nested_dirs t_host_names t_x32_syscall t_i386_syscall t_network
t_fork_bomb t_usage_accounted t_memory_bomb_heap t_memory_bomb_memfd t_disk_fill_one_file
t_disk_fill_many_files t_disk_fill_inodes t_disk_fill_data t_disk_fill_tmp t_hash_stall t_output_flood t_sleep_forever
t_fd_inherit t_env_leak t_tiocsti t_host_devices t_bad_file_names
t_total_memory t_master_killed t_master_killed_workers
t_fs_glob_exact t_fs_glob_forms t_fs_glob_line t_fs_proc_never t_fs_dev_never
t_fs_state_never t_fs_spelling_never t_fs_symlink_never t_fs_submount_ro
t_fs_submount_nosuid t_fs_no_propagation t_fs_pool_unmounted t_fs_legit_grants
t_exec_sh_only t_exec_python_entry t_exec_missing_program t_exec_interpreted_entry"
# Tests that show a daemon bug not fixed yet: "not ok ... # TODO", not
# counted (SB_STRICT=1 counts them).
SB_KNOWN_BUGS=""

SB_TESTS=$ALL
# After every attack (not after a skip): the daemon lives and serves.
SB_AFTER_EACH=healthy
setup
start_listener
sb_start || exit 2
sb_run_tests "$@"
