#!/bin/bash
# Audit log integration tests: the real daemon, its audit log under
# faults (disk full, file deleted, made read-only, auditd killed with
# calls in flight), rotation and logrotate-style reopen, skillctl audit
# verify on whole runs and on tampered copies, the JSON Schema, and a
# real log shipper (rsyslog imfile) across a rotation.
#
#   SB_BIN=<dir of skillbrokerd, skillctl, ...> bash tests/integration/audit.sh [TEST...]
#
# Needs root (the master runs as root; tmpfs mounts for disk-full), jq,
# and sha256sum. Workers use a slot of 10 uids in 64200-64249. Optional:
# python3 with jsonschema (the schema check) and rsyslogd (the shipper
# test); each is skipped with a message when missing. KEEP_TMP=1 keeps
# the temp dir. Prints "ok - NAME" / "not ok - NAME: why" per test.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SCHEMA=$ROOT/docs/audit-schema.json
. "$ROOT/tests/lib/daemon.sh"
sb_init audit
command -v sha256sum >/dev/null 2>&1 ||
    { echo "audit: sha256sum missing; run scripts/install-deps" >&2; exit 2; }
# Worker uids: one of 5 slots of 10 in 64200-64249 (tests/lib/uids.sh).
claim_uids 64200 5 10 audit
sb_tmpdir sbaudit
TMP=$SB_TMP
D="" RSPID=""

# ---------------------------------------------------------------- helpers

fail() { sb_fail "$@"; }
expect() { sb_eq "$@"; }
contains() { sb_contains "$@"; }
j() { sb_j "$@"; }
ctl() { sb_ctl "$@"; }
start_daemon() { sb_start; }
stop_daemon() { sb_stop; }

# A skill: NAME SCRIPT [PROGRAM, ...] (what it runs besides sh)
mkskill() {
	mkdir -p "$TMP/skills/$1/bin"
	printf -- '---\nname: %s\ndescription: audit test skill %s\n---\n' \
	    "$1" "$1" >"$TMP/skills/$1/SKILL.md"
	printf '#!/bin/sh\n%s\n' "$2" >"$TMP/skills/$1/bin/run"
	printf 'commands:\n  run: bin/run\npermissions:\n  exec: [%s]\n' "${3:-}" \
	    >"$TMP/skills/$1/skill.yaml"
	chmod -R a+rX "$TMP/skills"
	chmod 755 "$TMP/skills/$1/bin/run"
}

setup_common() {
	mkskill echo 'echo "$*"'
	mkskill mark 'echo ran >"$WORK_DIR/ran"; echo marked'
	# A session's work dir has no host path: these plant a file in it
	# and list it, for the tests to see whether a refused call ran.
	mkskill plant 'echo here >"$WORK_DIR/planted"; echo planted'
	mkskill look 'cd "$WORK_DIR" && ls -A | tr "\n" " "; echo' "ls, tr"
	# Every call of this one asks a human first (a14).
	mkskill confirm 'echo "$*"'
	mkdir -p "$TMP/policy.d"
	cat >"$TMP/policy.d/10-audit.yaml" <<-'EOF'
	skills:
	  enabled: ["*"]
	rules:
	  - name: audit-allow-all
	    principals: ["*"]
	    skills: ["*"]
	    action: allow
	    ceiling: { exec: ["*"] }
	  - name: audit-confirm
	    principals: ["*"]
	    skills: [confirm]
	    action: ask
	EOF
}

# A fresh daemon directory D for a test; $1 names it, the rest are
# extra lines of the audit block ("flush: none", ...).
newdir() {
	local name=$1
	shift
	D=$TMP/$name
	sb_config "$D/sb.yaml" "${@/#/audit.}"
	SOCK=$SB_SOCK
	LOG=$SB_AUDIT
	HEAD=$SB_STATE/audit.head
}

verify() {
	VOUT=$("$SB_BIN/skillctl" audit verify "$@" 2>&1)
	VRC=$?
}
# Records of the test's log (or $2) matching a jq select expression.
recs() { sb_recs "$1" "${2:-$LOG}"; }
count() { recs "$@" | grep -c .; }
wait_rec() { sb_poll 3 sb_has_rec "$1" "$LOG"; }
# ctl ARGS..., then 0 when the call succeeded (for sb_poll).
call_ok() { ctl "$@"; [ "$RC" = 0 ]; }
# rsyslog's output holds as many lines as the logs FILES... (at least, more).
shipped_lines() { { wc -l <"$D/rs/out.jsonl"; } 2>/dev/null || echo 0; }
shipped_all() { [ "$(shipped_lines)" -ge "$(cat "$@" | wc -l)" ]; }
# A call whose record is just under the line's 32 KiB: 7 arguments at
# the 4 KiB a string keeps, and one more, of the letter $1; rsyslog's
# default 8 KiB would cut it.
near_max_record() {
	local big
	big=$(head -c 4096 /dev/zero | tr '\0' "$1")
	ctl invoke echo --phase execution -- "$big" "$big" "$big" "$big" \
	    "$big" "$big" "$big" "$(head -c 1800 /dev/zero | tr '\0' "$1")"
}
shipped_more() { [ "$(shipped_lines)" -gt "$(cat "$@" | wc -l)" ]; }
auditd_pid() { sb_role_pid auditd; }

# A python3 that has jsonschema, or nothing.
schema_python() {
	local p
	for p in python3 /usr/bin/python3; do
		command -v "$p" >/dev/null 2>&1 &&
		    "$p" -c 'import jsonschema' 2>/dev/null && { echo "$p"; return; }
	done
}

# ------------------------------------------------------------------ tests

# Every call leaves its records, with the fields docs/audit.md promises.
a01_records() {
	local id rec dec grant want py
	newdir a01
	start_daemon || return
	ctl invoke echo --phase execution --json -- hello "big world"
	expect "invoke ok" "$(j .ok)" true
	id=$(j .id)
	ctl invoke echo --json -- planned
	expect "denied" "$(j .error.type)" phase_violation
	ctl authorize echo --phase execution --json
	expect "authorize" "$(j .policy.allowed)" true
	wait_rec ".event.action == \"invoke.completed\" and .request.id == \"$id\"" ||
	    fail "no invoke.completed for $id"
	rec=$(recs ".event.action == \"invoke.received\" and .request.id == \"$id\"")
	expect "args" "$(printf '%s' "$rec" | jq -c .skill.args)" '["hello","big world"]'
	expect "args_count" "$(printf '%s' "$rec" | jq .skill.args_count)" 2
	dec=$(recs ".event.action == \"policy.decision\" and .request.id == \"$id\"")
	expect "decision type" "$(printf '%s' "$dec" | jq -r .event.type)" allowed
	contains "rule" "$(printf '%s' "$dec" | jq -r '.rule.name[0]')" "audit-allow-all"
	expect "effective permissions" \
	    "$(printf '%s' "$dec" | jq -c '.policy.effective.permissions | [.fs.read, .fs.write, .network.allow, .exec, .env] | map(type)')" \
	    '["array","array","array","array","array"]'
	[ "$(printf '%s' "$dec" | jq .policy.effective.limits.timeout_ms)" -gt 0 ] 2>/dev/null ||
	    fail "no effective timeout_ms"
	grant=$(printf '%s' "$dec" | jq -r .grant.id)
	expect "worker.started" "$(count ".event.action == \"worker.started\" and .grant.id == \"$grant\"")" 1
	expect "worker.exited" "$(count ".event.action == \"worker.exited\" and .grant.id == \"$grant\"")" 1
	rec=$(recs ".event.action == \"invoke.completed\" and .request.id == \"$id\"")
	want=$(printf 'hello big world\n' | sha256sum | cut -d' ' -f1)
	expect "stdout sha256" "$(printf '%s' "$rec" | jq -r .output.stdout_sha256)" "$want"
	expect "stdout bytes" "$(printf '%s' "$rec" | jq -r .output.stdout_bytes)" 16
	expect "limits hit" "$(printf '%s' "$rec" | jq -c .limits.hit)" '[]'
	[ "$(printf '%s' "$rec" | jq .worker.max_rss_kb)" -gt 0 ] 2>/dev/null ||
	    fail "no max_rss_kb"
	expect "denied decision" "$(count '.event.action == "policy.decision" and .error.type == "phase_violation"')" 1
	expect "authorize decision" "$(count '.event.action == "policy.decision" and .policy.dry_run == true')" 1
	expect "header" "$(head -n 1 "$LOG" | jq -r .event.action)" audit.created
	expect "daemon.started" "$(count '.event.action == "daemon.started" and .event.provider == "master"')" 1
	expect "audit.started" "$(count '.event.action == "audit.started" and .audit.flush == "data"')" 1
	expect "policy.loaded" "$(count '.event.action == "policy.loaded"')" 1
	# One object per line, valid UTF-8, each line under 32 KiB.
	expect "lines" "$(jq -c . "$LOG" | wc -l)" "$(wc -l <"$LOG")"
	iconv -f UTF-8 -t UTF-8 "$LOG" >/dev/null 2>&1 || fail "not UTF-8"
	[ "$(awk 'length($0) >= 32768' "$LOG" | wc -l)" = 0 ] || fail "a line over 32 KiB"
	stop_daemon
	expect "last two" "$(tail -n 2 "$LOG" | jq -r .event.action | tr '\n' ' ')" \
	    "daemon.stopping audit.stopped "
	schema_check a01
}

# Every record of the test's log against docs/audit-schema.json, when
# a python3 with jsonschema is there ($1: the test, for the skip note).
schema_check() {
	local py
	py=$(schema_python)
	if [ -z "$py" ]; then
		echo "# $1: schema check skipped: no python3 with jsonschema"
	elif ! "$py" - "$SCHEMA" "$LOG" >"$D/schema.out" 2>&1 <<-'PY'
	import json, sys, jsonschema
	schema = json.load(open(sys.argv[1]))
	v = jsonschema.Draft202012Validator(schema)
	bad = 0
	for n, line in enumerate(open(sys.argv[2]), 1):
	    for e in v.iter_errors(json.loads(line)):
	        print("line %d: %s" % (n, e.message[:200])); bad += 1
	sys.exit(1 if bad else 0)
	PY
	then
		fail "schema: $(head -n 3 "$D/schema.out" | tr '\n' ' ')"
	fi
}

# verify passes on a whole run and fails on every kind of tampering,
# naming the first bad event.sequence.
a02_verify_tamper() {
	local n last head T=$TMP/a02t
	newdir a02
	start_daemon || return
	for n in 1 2 3; do
		ctl invoke echo --phase execution -- "call $n"
	done
	stop_daemon
	mkdir -p "$T"
	n=$(wc -l <"$LOG")
	verify "$LOG"
	expect "intact" "$VRC" 0
	verify --head "$HEAD" "$LOG"
	expect "intact with head file" "$VRC" 0
	last=$(tail -n 1 "$LOG" | jq -r '"\(.event.sequence):\(.event.hash)"')
	verify --head "$last" "$LOG"
	expect "intact with SEQ:HASH" "$VRC" 0
	# tamper NAME BADSEQ: the copy $T/NAME must fail at BADSEQ.
	tamper() {
		verify ${3:+--head "$3"} "$T/$1"
		expect "$1 exit" "$VRC" 1
		contains "$1 names the sequence" "$VOUT" "first bad event.sequence: $2"
	}
	sed '5s/"call 1"/"call X"/' "$LOG" >"$T/edited"
	tamper edited 5
	sed '6d' "$LOG" >"$T/deleted"
	tamper deleted 6
	awk 'NR == 7 { held = $0; next } NR == 8 { print; print held; next } { print }' \
	    "$LOG" >"$T/reordered"
	tamper reordered 7
	awk 'NR == 4 { print } { print }' "$LOG" >"$T/duplicated"
	tamper duplicated 5
	awk -v n="$n" 'NR == 3 { keep = $0 } { print } NR == n - 1 { print keep }' \
	    "$LOG" >"$T/inserted"
	tamper inserted "$n"
	head -n $((n - 2)) "$LOG" >"$T/truncated"
	verify "$T/truncated"
	expect "a cut tail passes without a head" "$VRC" 0
	tamper truncated $((n - 1)) "$HEAD"
	tamper truncated $((n - 1)) "$last"
	head -c -30 "$LOG" >"$T/torn"
	tamper torn "$n"
	unset -f tamper
}

# Long fields are cut with a marker; the line stays under 32 KiB.
a03_long_fields() {
	local big args=() rec len
	newdir a03
	start_daemon || return
	big=$(head -c 3000 /dev/zero | tr '\0' 'x')
	for i in $(seq 100); do args+=("$big"); done
	ctl invoke echo --phase execution --json -- "caf$(printf '\303\251')" "${args[@]}"
	expect "invoke" "$(j .ok)" true
	wait_rec '.event.action == "invoke.completed"' || fail "no invoke.completed"
	rec=$(recs '.event.action == "invoke.received"')
	expect "args_count" "$(printf '%s' "$rec" | jq .skill.args_count)" 101
	expect "first arg" "$(printf '%s' "$rec" | jq -r '.skill.args[0]')" "café"
	contains "marker" "$rec" '…[truncated]'
	len=$(grep '"invoke.received"' "$LOG" | awk '{ print length($0) }')
	[ "$len" -lt 32768 ] || fail "invoke.received line is $len bytes"
	verify "$LOG"
	expect "verify" "$VRC" 0
}

# max_log_file with num_logs, and with keep_logs: a verifiable series.
a04_rotation() {
	local i f
	newdir a04 "max_log_file: 8K" "num_logs: 3"
	start_daemon || return
	for i in $(seq 40); do
		ctl authorize echo --phase execution
	done
	stop_daemon
	[ -f "$LOG.1" ] && [ -f "$LOG.2" ] || fail "no rotated files"
	[ ! -e "$LOG.3" ] || fail "num_logs 3 kept $LOG.3"
	for f in "$LOG" "$LOG.1"; do
		expect "header of $f" "$(head -n 1 "$f" | jq -r .event.action)" audit.rotated
	done
	expect "previous file" "$(head -n 1 "$LOG" | jq -r .audit.previous.file)" audit.jsonl.1
	verify --head "$HEAD" "$LOG.1" "$LOG" "$LOG.2"
	expect "series verifies" "$VRC" 0
	verify "$LOG" "$LOG.2"
	expect "a file missing from the series" "$VRC" 1
	# logrotate's compress: verify reads gzip files as they are
	gzip -c "$LOG.2" >"$D/audit.jsonl.2.gz"
	verify --head "$HEAD" "$LOG.1" "$LOG" "$D/audit.jsonl.2.gz"
	expect "series with a gzip file verifies" "$VRC" 0
	head -c "$(($(stat -c %s "$D/audit.jsonl.2.gz") - 20))" \
	    "$D/audit.jsonl.2.gz" >"$D/cut.jsonl.gz"
	verify "$D/cut.jsonl.gz"
	expect "a cut gzip file" "$VRC" 1
	contains "a cut gzip file is named so" "$VOUT" "gzip"
	newdir a04k "max_log_file: 8K" "num_logs: 2" "max_log_file_action: keep_logs"
	start_daemon || return
	for i in $(seq 40); do
		ctl authorize echo --phase execution
	done
	stop_daemon
	[ -f "$LOG.3" ] || fail "keep_logs dropped files: $(ls "$D/log" | tr '\n' ' ')"
	verify --head "$HEAD" "$D"/log/audit.jsonl*
	expect "keep_logs series verifies" "$VRC" 0
}

# logrotate's way (rename, create, SIGUSR1), a reload (SIGHUP) after a
# rename, and a rename without a signal: no record is written into the
# renamed file once it is renamed. Wait until the call's last records are
# in (they may land just after its reply), so the move comes after them.
settle() {
	sb_wait_for 3 "the call's worker.exited and invoke.completed records" \
	    sb_has_rec '.event.action == "worker.exited"' "$LOG" &&
	    sb_wait_for 3 "the call's invoke.completed record" \
	    sb_has_rec '.event.action == "invoke.completed"' "$LOG"
}

# Rename the log to $1 and create an empty one, as logrotate's "create".
rotate_by_hand() {
	mv "$LOG" "$1"
	install -m 0640 -o "$(sb_role_uid auditd)" -g "$(sb_role_uid auditd)" \
	    /dev/null "$LOG"
}

a05_reopen() {
	local r
	newdir a05
	start_daemon || return
	ctl invoke echo --phase execution -- one
	settle
	# A reload writes policy.reloaded: into the new file, never the
	# renamed one; and SIGHUP alone is no reopen.
	rotate_by_hand "$LOG.1"
	kill -HUP "$SB_DPID"
	sb_wait_for 3 "policy.reloaded after SIGHUP" \
	    sb_has_rec '.event.action == "policy.reloaded"' "$LOG"
	expect "records in the renamed file after the rename" \
	    "$(jq -r .event.action "$LOG.1" | grep -c -e policy.reloaded -e audit.rotated)" 0
	expect "header before the reload's record" \
	    "$(jq -r .event.action "$LOG" | head -n 2 | tr '\n' ' ')" \
	    "audit.rotated policy.reloaded "
	contains "reload: moved reason" "$(head -n 1 "$LOG" | jq -r .event.reason)" "moved"
	# logrotate's postrotate: SIGUSR1 to the master reopens the log.
	rotate_by_hand "$LOG.2"
	kill -USR1 "$SB_DPID"
	sb_wait_for 3 "the reopened log's header" \
	    sb_has_rec '.event.action == "audit.rotated"' "$LOG"
	expect "reopen reason" "$(head -n 1 "$LOG" | jq -r .event.reason)" "reopened on SIGUSR1"
	expect "no reload on SIGUSR1" "$(cat "$LOG" "$LOG.1" "$LOG.2" | grep -c '"policy.reloaded"')" 1
	ctl invoke echo --phase execution -- two
	expect "call after SIGUSR1" "$OUT" two
	settle
	# Moved away without a signal: auditd sees it before its next write,
	# so the next call's records all go to a new file at the path.
	mv "$LOG" "$LOG.3"
	ctl invoke echo --phase execution -- three
	expect "call after a silent move" "$OUT" three
	ctl invoke echo --phase execution -- four
	stop_daemon
	[ -f "$LOG" ] || fail "no new file after the move"
	contains "moved reason" "$(head -n 1 "$LOG" | jq -r .event.reason)" "moved"
	r=$(jq -r 'select(.event.action == "invoke.received") | .skill.args[0]' "$LOG.3" | tr '\n' ' ')
	expect "calls in the renamed file" "$r" "two "
	verify --head "$HEAD" "$LOG.1" "$LOG.2" "$LOG.3" "$LOG"
	expect "series verifies" "$VRC" 0
}

# Fill the tmpfs mounted on $D/log; returns when a write would fail.
fill_log_fs() {
	dd if=/dev/zero of="$D/log/${1:-filler}" bs=4k >/dev/null 2>&1
	sync
}
mount_small_log() {
	mkdir -p "$D/log"
	mount -t tmpfs -o size=${1:-256k},mode=0750 skillbroker-audit-test "$D/log" ||
	    { fail "cannot mount a tmpfs"; return 1; }
}

# plant in each SESSION: a later look sees the session it asks for.
plant_in() {
	local s
	for s in "$@"; do
		ctl invoke plant --phase execution --session "$s"
		expect "plant in $s" "$OUT" planted
	done
}
# What a call in session S sees of its work dir (LOOK): the planted
# file, and the mark of a call that ran (ran) or not. $2: yes, no, or
# any (LOOK tells).
session_ran() {
	ctl invoke look --phase execution --session "$1"
	LOOK=$OUT
	[ "$RC" = 0 ] || { fail "look in session $1: exit $RC"; return 1; }
	contains "session $1 (as its calls see it)" " $LOOK " " planted "
	case " $LOOK " in
	*" ran "*) [ "$2" != no ] || fail "session $1: the refused call ran" ;;
	*) [ "$2" != yes ] || fail "session $1: the call ran but left no mark" ;;
	esac
}

# Call mark in session S until one is refused; sets REFUSED to that session.
call_until_refused() {
	local i
	REFUSED=""
	for i in $(seq 8); do
		ctl invoke mark --phase execution --session "$1$i" --json
		if [ "$RC" = 3 ]; then
			expect "refused type" "$(j .error.type)" audit_unavailable
			REFUSED=$1$i
			return 0
		fi
	done
	fail "no call was refused on a full disk"
}

a06_disk_full() {
	local i
	newdir a06
	mount_small_log || return
	start_daemon || return
	ctl invoke mark --phase execution --session before
	expect "before" "$OUT" marked
	plant_in full1 full2 full3 full4 full5 full6 full7 full8
	fill_log_fs
	call_until_refused full
	contains "daemon log" "$(cat "$D/daemon.log")" "suspended"
	ctl invoke echo --phase execution -- still
	expect "still refused" "$RC" 3
	rm -f "$D/log/filler"
	sb_poll 5 call_ok invoke echo --phase execution -- back
	expect "resumed" "$OUT" back
	[ -z "$REFUSED" ] || session_ran "$REFUSED" no
	# "still" was refused while suspended: its invoke.received at least
	# (a call whose request record is refused goes no further)
	expect "audit.resumed" "$(count '.event.action == "audit.resumed" and .audit.refused >= 1')" 1
	stop_daemon
	verify --head "$HEAD" "$LOG"
	expect "chain intact after disk full" "$VRC" 0
}

# disk_full_action rotate removes the oldest rotated file to make room.
a06b_disk_full_rotate() {
	newdir a06b "disk_full_action: rotate" "num_logs: 9"
	mount_small_log || return
	start_daemon || return
	ctl invoke echo --phase execution -- one
	fill_log_fs audit.jsonl.2
	ctl invoke mark --phase execution --session rot --json
	expect "call runs" "$(j .output.stdout)" marked
	[ ! -e "$LOG.3" ] || fail "the oldest rotated file was kept"
	[ -f "$LOG.1" ] || fail "no rotation"
	stop_daemon
	verify --head "$HEAD" "$LOG.1" "$LOG"
	expect "series verifies" "$VRC" 0
}

# disk_full_action halt stops the whole daemon.
a06c_disk_full_halt() {
	local i
	newdir a06c "disk_full_action: halt"
	mount_small_log || return
	start_daemon || return
	fill_log_fs
	for i in $(seq 8); do
		ctl invoke echo --phase execution -- x
		[ "$RC" = 0 ] || break
	done
	[ "$RC" != 0 ] || fail "calls still ran on a full disk"
	sb_daemon_exits 5 || fail "the daemon did not stop"
	contains "daemon log" "$(cat "$D/daemon.log")" "auditd halted"
}

# A burst of decisions fills the disk within one batch of lines (one
# write() for the records of a pass of auditd's loop): the batch is cut
# back off and its records are written one by one, so those that fit
# are acknowledged and in the log, the rest refused, and the chain holds.
a16_batch_disk_full() {
	local avail out ok refused
	newdir a16
	mount_small_log 256k || return
	start_daemon || return
	ctl authorize echo --phase execution
	expect "first authorize" "$RC" 0
	avail=$(df --output=avail -B 1024 "$D/log" | tail -n 1)
	dd if=/dev/zero of="$D/log/filler" bs=1024 count=$((avail - 40)) \
	    >/dev/null 2>&1
	out=$(/usr/bin/python3 - "$SOCK" <<-'EOF'
	import msgpack, socket, struct, sys
	s = socket.socket(socket.AF_UNIX)
	s.connect(sys.argv[1])
	req = {"type": "authorize", "skill": "echo", "phase": "execution"}
	b = b""
	for k in range(120):
	    m = msgpack.packb(dict(req, id=k))
	    b += struct.pack(">I", len(m)) + m
	s.sendall(b)
	buf, ok, refused = b"", 0, 0
	while ok + refused < 120:
	    d = s.recv(1 << 20)
	    if not d:
	        sys.exit("closed")
	    buf += d
	    while len(buf) >= 4 and len(buf) >= 4 + struct.unpack(">I", buf[:4])[0]:
	        n = struct.unpack(">I", buf[:4])[0]
	        r = msgpack.unpackb(buf[4:4 + n], raw=False)
	        buf = buf[4 + n:]
	        if r.get("ok"):
	            ok += 1
	        elif r.get("error", {}).get("type") == "audit_unavailable":
	            refused += 1
	        else:
	            sys.exit("unexpected reply %r" % r)
	print(ok, refused)
	EOF
	)
	ok=${out% *} refused=${out#* }
	echo "# a16: $ok decisions recorded, $refused refused"
	[ "${ok:-0}" -gt 0 ] && [ "${refused:-0}" -gt 0 ] ||
	    fail "wanted some decisions recorded and some refused: '$out'"
	expect "every ok decision in the log" \
	    "$(count '.event.action == "policy.decision" and .policy.dry_run == true')" \
	    "$((ok + 1))"
	stop_daemon
	verify --head "$HEAD" "$LOG"
	expect "chain intact after a batch hit a full disk" "$VRC" 0
}

# The sequence the head file holds (its higher slot), and the log's last.
head_seq() {
	tr -c '[:print:]' '\n' <"$HEAD" | awk '$1 == "skillbroker-audit-head" &&
	    $3 > max { max = $3 } END { print max + 0 }'
}
log_seq() { tail -n 1 "$LOG" | jq .event.sequence; }
# Every record in the log is committed: the head file has the last.
all_committed() { [ "$(head_seq)" = "$(log_seq)" ]; }

# The log deleted under the daemon: refused, then a new file. (The last
# call's records nothing waits for are committed first, within 50 ms of
# its reply: a commit of theirs after the deletion would find it and
# recover before the next call comes.)
a07_deleted() {
	local i
	newdir a07
	start_daemon || return
	ctl invoke echo --phase execution -- one
	plant_in gone
	sb_wait_for 5 "the last call's records committed" all_committed ||
	    return
	rm -f "$LOG"
	ctl invoke mark --phase execution --session gone --json
	expect "refused" "$(j .error.type)" audit_unavailable
	sb_poll 5 call_ok invoke echo --phase execution -- back
	expect "resumed" "$OUT" back
	session_ran gone no
	expect "header" "$(head -n 1 "$LOG" | jq -r .event.action)" audit.rotated
	stop_daemon
	verify --head "$HEAD" "$LOG"
	expect "new file verifies" "$VRC" 0
	contains "continues" "$VOUT" "continues a file not given"
}

# The log made read-only (auditd is not root, so chmod binds it).
a08_readonly() {
	local i
	newdir a08
	start_daemon || return
	ctl invoke echo --phase execution -- one
	plant_in ro
	chmod 0440 "$LOG"
	ctl invoke mark --phase execution --session ro --json
	expect "refused" "$(j .error.type)" audit_unavailable
	chmod 0640 "$LOG"
	sb_poll 5 call_ok invoke echo --phase execution -- back
	expect "resumed" "$OUT" back
	session_ran ro no
	stop_daemon
	verify --head "$HEAD" "$LOG"
	expect "one chain" "$VRC" 0
	# disk_error_action rotate: the file handed to root is rotated away.
	newdir a08r "disk_error_action: rotate"
	start_daemon || return
	ctl invoke echo --phase execution -- one
	chown root:root "$LOG"
	ctl invoke echo --phase execution -- two
	ctl invoke echo --phase execution -- three
	expect "runs on" "$OUT" three
	[ -f "$LOG.1" ] || fail "not rotated"
	stop_daemon
	verify --head "$HEAD" "$LOG.1" "$LOG"
	expect "series verifies" "$VRC" 0
}

# auditd killed with calls in flight: each call either ran with its
# worker.started durable in the log, or failed with audit_unavailable
# and did not run; the chain survives the restart.
a09_auditd_killed() {
	local i pids=() rc id grant ok=0 refused=0 pid ran=()
	# sessions k1..k15 and the default one: within per_uid.sessions (16)
	local A09_N=15
	newdir a09
	start_daemon || return
	for i in $(seq "$A09_N"); do
		plant_in "k$i"
	done
	for i in $(seq "$A09_N"); do
		timeout 20 "$SB_BIN/skillctl" -s "$SOCK" invoke mark \
		    --phase execution --session "k$i" --json >"$D/call.$i" 2>&1 &
		pids+=($!)
	done
	# kill auditd once the calls are coming in
	sb_wait_for 3 "no invoke.received record of a mark call" \
	    sb_has_rec '.event.action == "invoke.received" and .skill.name == "mark"' "$LOG"
	pid=$(auditd_pid)
	[ -n "$pid" ] && kill -KILL "$pid"
	for i in $(seq "$A09_N"); do
		wait "${pids[$((i - 1))]}"
		rc=$?
		if [ "$rc" = 0 ]; then
			ok=$((ok + 1))
			ran[$i]=yes
		elif [ "$(jq -r .error.type "$D/call.$i" 2>/dev/null)" = audit_unavailable ] ||
		    [ "$(jq -r .error.type "$D/call.$i" 2>/dev/null)" = overloaded ]; then
			refused=$((refused + 1))
			ran[$i]=no
		else
			fail "call $i: exit $rc: $(head -c 200 "$D/call.$i")"
			ran[$i]=any
		fi
	done
	echo "# a09: $ok ran, $refused refused (audit_unavailable or overloaded)"
	sb_poll 5 call_ok invoke echo --phase execution -- after
	expect "after the restart" "$OUT" after
	wait_rec '.event.action == "child.died" and .process.name == "auditd"' ||
	    fail "no child.died record for auditd"
	# Each session as its calls see it: ok calls left their mark,
	# refused ones none, and anything that ran had its start durable.
	for i in $(seq "$A09_N"); do
		session_ran "k$i" "${ran[$i]}"
		case " $LOOK " in *" ran "*) ;; *) continue ;; esac
		id=$(jq -r .id "$D/call.$i" 2>/dev/null)
		grant=$(recs ".event.action == \"policy.decision\" and .request.id == \"$id\"" |
		    jq -r .grant.id)
		[ "$(count ".event.action == \"worker.started\" and .grant.id == \"${grant:-none}\"")" = 1 ] ||
		    fail "call $i ran without a durable worker.started"
	done
	expect "audit.started twice" "$(count '.event.action == "audit.started"')" 2
	stop_daemon
	verify --head "$HEAD" "$LOG"
	expect "chain intact across the kill" "$VRC" 0
}

a10_flush_modes() {
	local mode
	for mode in none incremental sync; do
		newdir "a10$mode" "flush: $mode" "freq: 3"
		start_daemon || return
		ctl invoke echo --phase execution -- "$mode"
		expect "$mode call" "$OUT" "$mode"
		expect "$mode recorded" "$(count ".event.action == \"audit.started\" and .audit.flush == \"$mode\"")" 1
		stop_daemon
		verify --head "$HEAD" "$LOG"
		expect "$mode verifies" "$VRC" 0
	done
}

# The fdatasyncs of the log while CMD runs, by the strace of auditd
# running (its output in $D/strace.txt): the log's descriptor only.
log_syncs() {
	grep -c "^[0-9]* *fdatasync($LOGFD)" "$D/strace.txt" 2>/dev/null
}

# Group commit: a call's records that nothing waits for (invoke.received,
# worker.exited, invoke.completed) ride on the commits of the records
# that gate it (policy.decision, worker.started), or on one of their own
# within LAZY_MS: an invoke costs 3 syncs at most, an authorize 1.
a15_syncs_per_call() {
	local pid spid f n0 n1 i best=99
	command -v strace >/dev/null 2>&1 ||
	    { sb_skip "strace is not installed"; return 1; }
	newdir a15
	start_daemon || return
	ctl invoke echo --phase execution -- warm
	pid=$(auditd_pid)
	LOGFD=""
	for f in /proc/"$pid"/fd/*; do
		[ "$(readlink "$f")" = "$(readlink -f "$LOG")" ] && LOGFD=${f##*/}
	done
	[ -n "$LOGFD" ] || { fail "auditd holds no descriptor of $LOG"; return; }
	strace -f -qq -e trace=fdatasync -e signal=none -o "$D/strace.txt" \
	    -p "$pid" 2>/dev/null &
	spid=$!
	sb_bg_add "$spid"
	# attached once an authorize's sync shows
	sb_wait_for 10 "strace of auditd" eval \
	    'ctl authorize echo --phase execution; [ "$(log_syncs)" -ge 1 ]' ||
	    return
	sleep 0.3
	n0=$(log_syncs)
	ctl authorize echo --phase execution
	sleep 0.3
	n1=$(log_syncs)
	expect "syncs of one authorize" "$((n1 - n0))" 1
	for i in 1 2 3; do
		n0=$(log_syncs)
		ctl invoke echo --phase execution -- "s$i"
		expect "call s$i" "$OUT" "s$i"
		sleep 0.3
		n1=$(log_syncs)
		[ $((n1 - n0)) -lt "$best" ] && best=$((n1 - n0))
	done
	[ "$best" -le 3 ] ||
	    fail "an invoke took $best fdatasyncs of the log at best (want 3 at most)"
	sb_bg_kill "$spid"
}

# rsyslogd, or nothing (the shipper tests are skipped without it).
rsyslogd_path() {
	local rs
	rs=$(command -v rsyslogd || echo /usr/sbin/rsyslogd)
	[ -x "$rs" ] && echo "$rs"
}

# Start an rsyslogd of the test's own in $1 (its config there, written
# by the caller as $1/rsyslog.conf); its pid in RSPID.
rs_start() {
	"$(rsyslogd_path)" -n -f "$1/rsyslog.conf" -i "$1/rsyslogd.pid" \
	    >"$1/rsyslogd.log" 2>&1 &
	RSPID=$!
	sb_bg_add "$RSPID"
}

# The imfile config that tails $LOG into $D/rs/out.jsonl, with the
# message size docs/audit.md says a shipper must accept (A_RS_MAXMSG:
# another, to see what a smaller one does).
rs_imfile_conf() {
	mkdir -p "$D/rs"
	cat >"$D/rs/rsyslog.conf" <<-EOF
	global(workDirectory="$D/rs" maxMessageSize="${A_RS_MAXMSG:-64k}")
	module(load="imfile" mode="inotify")
	input(type="imfile" file="$LOG" tag="skillbroker-audit"
	      ruleset="ship" addMetadata="off")
	template(name="line" type="string" string="%msg%\n")
	ruleset(name="ship") {
	  action(type="omfile" file="$D/rs/out.jsonl" template="line")
	}
	EOF
}

# Every line of the logs FILES... (compressed or not), one a line.
log_lines() { zcat -f "$@"; }
# rsyslog shipped at least as many lines as FILES... hold.
shipped_gz_all() { [ "$(shipped_lines)" -ge "$(log_lines "$@" | wc -l)" ]; }
shipped_gz_more() { [ "$(shipped_lines)" -gt "$(log_lines "$@" | wc -l)" ]; }

# What rsyslog shipped ($D/rs/out.jsonl) against the logs FILES...:
# every line exactly once, and every sequence from 1 to the last one
# exactly once. Waits for rsyslog, then stops it.
shipped_exactly_once() {
	local want got n last
	sb_poll 20 shipped_gz_all "$@"
	# Explicit bounded wait: nothing more (a duplicate) may arrive.
	sb_never 0.3 "rsyslog shipped more lines than the logs hold" \
	    shipped_gz_more "$@"
	sb_bg_kill "$RSPID"
	RSPID=""
	want=$(log_lines "$@" | sort | sha256sum)
	got=$(sort "$D/rs/out.jsonl" 2>/dev/null | sha256sum)
	n=$(log_lines "$@" | wc -l)
	last=$(log_lines "$@" | jq .event.sequence | sort -n | tail -n 1)
	SHIPPED=$(wc -l <"$D/rs/out.jsonl" 2>/dev/null || echo 0)
	expect "records in the logs" "$n" "$last"
	expect "records shipped" "$SHIPPED" "$n"
	expect "every record exactly once" "$got" "$want"
	expect "no duplicates" "$(sort "$D/rs/out.jsonl" | uniq -d | wc -l)" 0
	expect "every sequence exactly once" \
	    "$(jq .event.sequence "$D/rs/out.jsonl" | sort -n | uniq | wc -l) $(jq .event.sequence "$D/rs/out.jsonl" | sort -n | tail -n 1)" \
	    "$n $n"
}

# rsyslog's imfile tails the log across rotations: every record arrives
# at its output exactly once.
a11_rsyslog() {
	local i big n
	if [ -z "$(rsyslogd_path)" ]; then
		sb_skip "rsyslogd is not installed (Debian package rsyslog)"
		return
	fi
	newdir a11 "max_log_file: 16K" "num_logs: 50"
	mkdir -p "$D/log"
	chown "$(sb_role_uid auditd)" "$D/log"
	rs_imfile_conf
	start_daemon || return
	rs_start "$D/rs"
	# imfile must have the file open before the first rotation.
	sb_poll 5 shipped_all "$LOG"
	near_max_record b
	for i in $(seq 60); do
		ctl authorize echo --phase execution -- "$i"
	done
	stop_daemon
	[ -f "$LOG.2" ] || fail "fewer than 2 rotations"
	n=$(cat "$D"/log/audit.jsonl* | awk 'length($0) > 30000 && length($0) < 32768' | wc -l)
	expect "a record of 30 to 32 KiB in the log" "$n" 1
	shipped_exactly_once "$D"/log/audit.jsonl*
	expect "the near-max record shipped whole" \
	    "$(awk 'length($0) > 30000' "$D/rs/out.jsonl" | sha256sum)" \
	    "$(cat "$D"/log/audit.jsonl* | awk 'length($0) > 30000' | sha256sum)"
	verify --head "$HEAD" "$D"/log/audit.jsonl*
	expect "shipped series verifies" "$VRC" 0
}

# Calls go on without a pause while logrotate (create, compress,
# delaycompress, and a postrotate that signals the daemon to reopen
# its log) rotates the log 20 times; rsyslog's imfile ships every
# record of the chain exactly once, across all the files.
A17_SIGNAL=${A17_SIGNAL:-USR1} # HUP: the signal before reopen had its own
a17_logrotate_load() {
	local i lpid n
	if [ -z "$(rsyslogd_path)" ]; then
		sb_skip "rsyslogd is not installed (Debian package rsyslog)"
		return
	fi
	if ! command -v logrotate >/dev/null 2>&1; then
		sb_skip "logrotate is not installed (Debian package logrotate)"
		return
	fi
	newdir a17 "max_log_file: 0"
	rs_imfile_conf
	cat >"$D/logrotate.conf" <<-EOF
	$LOG {
		create 0640
		rotate 100
		compress
		delaycompress
		missingok
		postrotate
			[ -s $D/skillbrokerd.pid ] && kill -$A17_SIGNAL "\$(cat $D/skillbrokerd.pid)" || true
		endscript
	}
	EOF
	start_daemon || return
	echo "$SB_DPID" >"$D/skillbrokerd.pid"
	rs_start "$D/rs"
	sb_poll 5 shipped_all "$LOG"
	# the load: one call after another until told to stop
	(
		while [ ! -e "$D/stop" ]; do
			"$SB_BIN/skillctl" -s "$SOCK" invoke echo \
			    --phase execution -- load >/dev/null 2>&1
		done
	) &
	lpid=$!
	sb_bg_add "$lpid"
	for i in $(seq 20); do
		sleep 0.3
		logrotate -f -s "$D/logrotate.state" "$D/logrotate.conf" \
		    >>"$D/logrotate.out" 2>&1 ||
		    fail "logrotate $i: $(tail -n 2 "$D/logrotate.out" | tr '\n' ' ')"
	done
	sleep 0.3
	touch "$D/stop"
	sb_bg_wait "$lpid"
	stop_daemon
	n=$(ls "$D"/log/audit.jsonl* | wc -l)
	expect "files after 20 rotations" "$n" 21
	shipped_exactly_once "$D"/log/audit.jsonl*
	echo "# a17: $SHIPPED records in $n files shipped, 20 rotations (SIG$A17_SIGNAL)"
	expect "calls made" "$([ "$(log_lines "$D"/log/audit.jsonl* | grep -c '"invoke.completed"')" -gt 40 ] && echo yes)" yes
	verify --head "$HEAD" "$D"/log/audit.jsonl*
	expect "rotated series, compressed files too, verifies" "$VRC" 0
}

# config errors name the key
a12_config() {
	local c=$TMP/a12.yaml
	printf 'state_dir: s\naudit:\n  flush: sometimes\n' >"$c"
	OUT=$("$SB_BIN/skillbrokerd" -n -f "$c" 2>&1)
	contains "bad flush" "$OUT" "$c:3"
	contains "bad flush names the choices" "$OUT" "none, incremental, data, sync"
	printf 'state_dir: s\naudit:\n  max_log_file: 1G\n' >"$c"
	OUT=$("$SB_BIN/skillbrokerd" -n -f "$c" 2>&1)
	contains "bad size" "$OUT" "max_log_file"
	printf 'state_dir: s\naudit:\n  flush: sync\n  freq: 10\n  max_log_file: 64K\n  max_log_file_action: keep_logs\n  num_logs: 4\n  disk_full_action: rotate\n  disk_error_action: halt\n' >"$c"
	OUT=$("$SB_BIN/skillbrokerd" -n -f "$c" 2>&1)
	contains "all keys" "$OUT" "OK"
}

# A port nothing listens on, on loopback.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Off the node through the host's pipeline (docs/deploy.md): a first
# rsyslogd tails the log with imfile and forwards each record with omrelp
# to a second one on loopback, which takes them with imrelp and writes
# them to a file. Every record arrives, exactly once and whole (one near
# the 32 KiB line), across auditd's rotations and a stop of the daemon.
a20_relp_forward() {
	local i port big spid rpid
	if [ -z "$(rsyslogd_path)" ]; then
		sb_skip "rsyslogd is not installed (Debian package rsyslog)"
		return
	fi
	if ! [ -e /usr/lib/x86_64-linux-gnu/rsyslog/omrelp.so ] &&
	    ! find /usr/lib -name omrelp.so 2>/dev/null | grep -q .; then
		sb_skip "rsyslog's RELP modules are not installed (Debian package rsyslog-relp)"
		return
	fi
	newdir a20 "max_log_file: 16K" "num_logs: 50"
	port=$(free_port)
	mkdir -p "$D/rs" "$D/rs1"
	# the second host's rsyslog, here on loopback: RELP in, a file out
	cat >"$D/rs/rsyslog.conf" <<-EOF
	global(workDirectory="$D/rs" maxMessageSize="64k")
	module(load="imrelp")
	input(type="imrelp" address="127.0.0.1" port="$port" ruleset="store")
	template(name="raw" type="string" string="%rawmsg%\n")
	ruleset(name="store") {
	  action(type="omfile" file="$D/rs/out.jsonl" template="raw")
	}
	EOF
	# the node's rsyslog: the audit log in, RELP out (each record as is)
	cat >"$D/rs1/rsyslog.conf" <<-EOF
	global(workDirectory="$D/rs1" maxMessageSize="64k")
	module(load="imfile" mode="inotify")
	module(load="omrelp")
	input(type="imfile" file="$LOG" tag="skillbroker-audit"
	      ruleset="forward" addMetadata="off")
	template(name="line" type="string" string="%msg%")
	ruleset(name="forward") {
	  action(type="omrelp" target="127.0.0.1" port="$port" template="line"
	         queue.type="LinkedList" action.resumeRetryCount="-1")
	}
	EOF
	rs_start "$D/rs"
	rpid=$RSPID
	sb_poll 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null ||
	    fail "imrelp does not listen on $port"
	start_daemon || return
	rs_start "$D/rs1"
	spid=$RSPID
	sb_poll 5 shipped_all "$LOG"
	near_max_record r
	for i in $(seq 40); do
		ctl invoke echo --phase execution -- "$i"
	done
	stop_daemon
	[ -f "$LOG.2" ] || fail "fewer than 2 rotations"
	sb_poll 20 shipped_gz_all "$D"/log/audit.jsonl*
	sb_bg_kill "$spid"
	RSPID=$rpid # shipped_exactly_once stops the receiver
	shipped_exactly_once "$D"/log/audit.jsonl*
	echo "# a20: $SHIPPED records forwarded over RELP, $(ls "$D"/log | wc -l) files"
	expect "the near-max record forwarded whole" \
	    "$(awk 'length($0) > 30000' "$D/rs/out.jsonl" | sha256sum)" \
	    "$(cat "$D"/log/audit.jsonl* | awk 'length($0) > 30000' | sha256sum)"
}

# contrib/kubernetes/skillbroker-daemonset.yaml (docs/deploy.md): no
# schema validator for Kubernetes objects runs offline here (kubectl
# needs an API server even for --dry-run=client), so: every document
# parses as YAML and is of a kind we expect; the DaemonSet is privileged,
# has the socket's, the log's and the state's directories on hostPaths
# that the config names; the config passes skillbrokerd -n and the policy
# skillctl policy check.
a21_deploy_manifest() {
	local m=$ROOT/contrib/kubernetes/skillbroker-daemonset.yaml out
	if ! python3 -c 'import yaml' 2>/dev/null; then
		sb_skip "no python3 with yaml (Debian package python3-yaml)"
		return
	fi
	mkdir -p "$TMP/a21/policy.d"
	out=$(python3 - "$m" "$TMP/a21" <<-'PY' 2>&1
	import os, sys, yaml
	docs = list(yaml.safe_load_all(open(sys.argv[1])))
	kinds = [d["kind"] for d in docs]
	assert kinds == ["Namespace", "ConfigMap", "ConfigMap", "DaemonSet"], kinds
	cfg = docs[1]["data"]["skillbroker.yaml"]
	conf = yaml.safe_load(cfg)
	open(os.path.join(sys.argv[2], "sb.yaml"), "w").write(cfg)
	for name, text in docs[2]["data"].items():
	    assert name.endswith(".yaml"), name
	    open(os.path.join(sys.argv[2], "policy.d", name), "w").write(text)
	ds = docs[3]
	assert ds["apiVersion"] == "apps/v1"
	pod = ds["spec"]["template"]["spec"]
	assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
	c = pod["containers"][0]
	assert c["securityContext"]["privileged"] is True
	host = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
	mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
	for name in host:
	    assert mounts[name] == host[name], (name, mounts[name], host[name])
	want = [os.path.dirname(conf["socket"]), os.path.dirname(conf["audit"]["path"]), conf["state_dir"]]
	for d in want:
	    assert d in host.values(), "not on a hostPath: " + d
	assert c["command"][-1] == mounts["config"], c["command"]
	assert conf["policy_dir"] == mounts["policy"]
	PY
	) || { fail "manifest: $(printf '%s' "$out" | tail -n 2 | tr '\n' ' ')"; return; }
	out=$("$SB_BIN/skillbrokerd" -n -f "$TMP/a21/sb.yaml" 2>&1) ||
	    fail "the manifest's config: $out"
	out=$("$SB_BIN/skillctl" policy check "$TMP/a21/policy.d" 2>&1) ||
	    fail "the manifest's policy: $out"
}

# Every field of every record this run wrote is an ECS 8.11.0 field of
# the right type, or under one of skillbroker's own names, and nothing
# else ECS asks of the records is missing (tests/tools/ecs-check.sh,
# against tests/data/ecs-8.11.0.txt, taken from the ECS repository).
a18_ecs_fields() {
	local out
	set -- "$TMP"/*/log/audit.jsonl*
	[ -e "$1" ] || { newdir a18; start_daemon || return
		ctl invoke echo --phase execution -- one
		ctl invoke echo -- denied
		stop_daemon; set -- "$LOG"; }
	out=$("$ROOT/tests/tools/ecs-check.sh" "$@" 2>&1) ||
	    fail "$(printf '%s' "$out" | head -n 5 | tr '\n' ';')"
}

# docs/elasticsearch: the ingest pipeline and the index template are
# JSON; the template maps each ECS field the records use with ECS's type,
# and every field of every record this run wrote (or a short run's) has
# a mapping, explicit or dynamic, that takes its values as they are.
a19_es_docs() {
	local t=$ROOT/docs/elasticsearch/index-template.json maps bad
	jq -e .processors "$ROOT/docs/elasticsearch/ingest-pipeline.json" >/dev/null ||
	    fail "ingest-pipeline.json: not JSON with processors"
	jq -e .template.mappings "$t" >/dev/null || fail "index-template.json: not JSON with mappings"
	maps=$(jq -r '.template.mappings.properties | . as $root | paths(objects)
	    | select(.[-1] != "properties" and (.[-1] | type) == "string") as $p
	    | $root | getpath($p) | select(.type != null or .properties != null)
	    | "\($p | map(select(. != "properties")) | join(".")) \(.type // "object")"' "$t")
	bad=$(awk 'NR == FNR { m[$1] = $2; next }
	    $1 == "field" && m[$2] != $3 { print $2 " is " m[$2] ", ECS has " $3 }' \
	    <(printf '%s\n' "$maps") "$ROOT/tests/data/ecs-8.11.0.txt")
	[ -z "$bad" ] || fail "template: $(printf '%s' "$bad" | head -n 3 | tr '\n' ';')"
	set -- "$TMP"/*/log/audit.jsonl*
	[ -e "$1" ] || { newdir a19; start_daemon || return
		ctl invoke echo --phase execution -- one
		stop_daemon; set -- "$LOG"; }
	bad=$(zcat -f "$@" | jq -r 'paths(scalars) as $p
	    | "\($p | map(select(type == "string")) | join(".")) \(getpath($p) | type)"' |
	    sort -u | awk 'NR == FNR { m[$1] = $2; next }
	    { k = $1; t = m[k]; while (t == "" && k ~ /\./) { sub(/\.[^.]*$/, "", k); t = m[k] } }
	    t == "" && $2 != "string" { print $1 ": no mapping for a " $2; next }
	    t == "" { next }
	    t == "object" && $1 !~ /^policy\.effective\./ { print $1 ": mapped as an object" }
	    t == "long" && $2 != "number" { print $1 ": a " $2 " mapped as long" }
	    (t == "keyword" || t == "ip" || t == "date" || t == "match_only_text") && $2 != "string" { print $1 ": a " $2 " mapped as " t }
	    t == "boolean" && $2 != "boolean" { print $1 ": a " $2 " mapped as boolean" }' \
	    <(printf '%s\n' "$maps") -)
	[ -z "$bad" ] || fail "records against the template: $(printf '%s' "$bad" | head -n 3 | tr '\n' ';')"
}

# Every log this run wrote verifies as a whole (with its head file), and
# no daemon reported a sanitizer error (make SAN=1 check).
a13_whole_run() {
	local dir n=0
	for dir in "$TMP"/*/log; do
		[ -f "$dir/audit.jsonl" ] || continue
		n=$((n + 1))
		verify --head "$dir/../state/audit.head" "$dir"/audit.jsonl*
		[ "$VRC" = 0 ] || fail "$dir: $(printf '%s' "$VOUT" | head -n 2 | tr '\n' ' ')"
	done
	[ "$n" -gt 0 ] || fail "no logs to verify"
	if grep -lE 'AddressSanitizer|UndefinedBehaviorSanitizer|LeakSanitizer|runtime error:' \
	    "$TMP"/*/daemon.log >/dev/null 2>&1; then
		fail "sanitizer report: $(grep -hE -m 1 'Sanitizer|runtime error:' "$TMP"/*/daemon.log | head -n 1)"
	fi
}

# Approvals leave their records: each answer, a timeout and a cancel,
# every record valid against the schema.
a14_approvals() {
	local s id
	D=$TMP/a14
	sb_config "$D/sb.yaml" "clients.approval_s: 1"
	SOCK=$SB_SOCK
	LOG=$SB_AUDIT
	HEAD=$SB_STATE/audit.head
	s=$D/p14.jsonl
	start_daemon || return
	cat >"$s" <<-'EOF'
	{"type":"hello","id":"h","approvals":true}
	{"on":"approval_request","request_id":"y1","reply":{"type":"approve","option":"yes_once"}}
	{"on":"approval_request","request_id":"ys","reply":{"type":"approve","option":"yes_in_session"}}
	{"on":"approval_request","request_id":"n1","reply":{"type":"approve","option":"no"}}
	{"on":"approval_request","request_id":"t1","reply":null}
	{"on":"approval_request","request_id":"c1","reply":null}
	{"type":"invoke","id":"y1","skill":"confirm","phase":"execution","session":"s1","args":["a"]}
	{"type":"invoke","id":"ys","skill":"confirm","phase":"execution","session":"s2","args":["b"]}
	{"type":"invoke","id":"n1","skill":"confirm","phase":"execution","session":"s3"}
	{"type":"invoke","id":"t1","skill":"confirm","phase":"execution","session":"s4"}
	{"type":"invoke","id":"c1","skill":"confirm","phase":"execution","session":"s5"}
	{"pause_ms":300}
	{"type":"cancel","id":"cc","request_id":"c1"}
	{"type":"invoke","id":"ys2","skill":"confirm","phase":"execution","session":"s2","args":["c"]}
	EOF
	"$ROOT/tests/tools/pipeclient.py" "$SOCK" 20 <"$s" >"$D/pipe.out" 2>&1 ||
	    fail "pipeclient: $(tail -c 300 "$D/pipe.out")"
	wait_rec '.event.action == "invoke.completed" and .request.id == "t1"' ||
	    fail "no invoke.completed for t1"
	for id in y1 ys n1 t1 c1; do
		expect "$id: approval.requested" "$(count ".event.action == \"approval.requested\" and .request.id == \"$id\"")" 1
	done
	expect "yes_once" "$(recs '.event.action == "approval.answered" and .request.id == "y1"' | jq -r '[.approval.option, .approval.by, .event.type] | join(" ")')" "yes_once client allowed"
	expect "yes_in_session" "$(recs '.event.action == "approval.answered" and .request.id == "ys"' | jq -r .approval.option)" yes_in_session
	expect "no" "$(recs '.event.action == "approval.answered" and .request.id == "n1"' | jq -r '[.approval.option, .event.outcome] | join(" ")')" "no failure"
	expect "timeout" "$(recs '.event.action == "approval.answered" and .request.id == "t1"' | jq -r .approval.by)" timeout
	expect "cancelled" "$(recs '.event.action == "approval.answered" and .request.id == "c1"' | jq -r '[.approval.by, .event.reason] | join(" ")')" "cancelled cancelled by the client"
	expect "remembered" "$(recs '.event.action == "policy.decision" and .request.id == "ys2"' | jq -r .approval.remembered)" true
	expect "ys2 not asked" "$(count '.event.action == "approval.requested" and .request.id == "ys2"')" 0
	# The answer is recorded before the decision it leads to.
	id=$(recs '.event.action == "approval.answered" and .request.id == "y1"' | jq .event.sequence)
	[ "$id" -lt "$(recs '.event.action == "policy.decision" and .request.id == "y1"' | jq .event.sequence)" ] ||
	    fail "approval.answered after policy.decision"
	stop_daemon
	schema_check a14
}

ALL="a01_records a02_verify_tamper a03_long_fields a04_rotation a05_reopen
a06_disk_full a06b_disk_full_rotate a06c_disk_full_halt a07_deleted
a08_readonly a09_auditd_killed a10_flush_modes a11_rsyslog a12_config
a14_approvals a15_syncs_per_call a16_batch_disk_full a17_logrotate_load
a18_ecs_fields a19_es_docs a20_relp_forward a21_deploy_manifest
a13_whole_run"

SB_TESTS=$ALL
SB_AFTER_EACH=stop_daemon
setup_common
sb_run_tests "$@"
