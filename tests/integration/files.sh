#!/bin/bash
# Session files against the real daemon: put_file, get_file, list_files
# and delete_file (calls of the shipped skill "files" on the session's
# work dir, docs/protocol.md "Session files"), driven byte-exact by
# tests/tools/fileclient.py, and skillctl put, get, ls and rm once
# skillctl has them.
#
#   SB_BIN=<dir of skillbrokerd, skillctl, ...> bash tests/integration/files.sh [TEST...]
#
# Needs root, jq, setpriv and /usr/bin/python3 with python3-msgpack.
# Workers use a slot of 10 uids in 64700-64749 (tests/lib/uids.sh); the
# other client is uid 64790, which no suite runs workers as. The fixture
# skill files-fixture (tests/integration/skills) does in a session what
# no client request may: it transforms a file, plants links and a FIFO,
# hostile names, a deep tree, locked and many files, and fills the work
# dir. KEEP_TMP=1 keeps the temp dir (config, daemon.log, audit log,
# every client line in fc.out); SB_VERBOSE=1 prints each test's
# duration. The plumbing (config, daemon, runner, cleanup) is
# tests/lib/daemon.sh. Prints "ok - NAME" / "not ok - NAME: why" /
# "skip - NAME: why" per test, then "files: N passed, M failed, K
# skipped"; exits 1 if any failed.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/tests/lib/daemon.sh"
sb_init files
PY=/usr/bin/python3
if ! "$PY" -c 'import msgpack' 2>/dev/null; then
	echo "files: $PY cannot import msgpack; run scripts/install-deps" >&2
	exit 2
fi
command -v setpriv >/dev/null 2>&1 ||
    { echo "files: setpriv missing (util-linux)" >&2; exit 2; }
claim_uids 64700 5 10 files
sb_tmpdir sb-files
TMP=$SB_TMP
OTHER=64790

# Small bounds, so that the over-size cases are quick: a file of at most
# 4 MiB (RLIMIT_FSIZE), a work dir of 20 MiB per session (5184 inodes:
# room for f14's 4200 files).
FSIZE_MB=4
SB_FSIZE_MB=$FSIZE_MB
sb_config "$TMP/sb.yaml" "worker.work_mb: 20"
# The most data one put carries (hello's put_file_bytes): max_frame_bytes
# (1 MiB) less 1536, room for the longest path. A get answers up to
# max_frame_bytes less 512 and its path's length.
CHUNK=$((1048576 - 1536))
get_chunk() { echo $((1048576 - 512 - ${#1})); }
# Tests that show a daemon bug not fixed yet: reported as "not ok ... #
# TODO" and not counted as failures (SB_STRICT=1 counts them).
SB_KNOWN_BUGS=""

# ---------------------------------------------------------------- helpers

# The fixture, the files skill, a policy that allows every skill, and
# the client where the other uid can read it.
setup_fixtures() {
	mkdir -p "$TMP/skills" "$TMP/policy.d"
	cp -R "$HERE/skills/files-fixture" "$TMP/skills/"
	cp -R "$ROOT/skills/files" "$TMP/skills/files"
	chmod -R u+rwX,go+rX,go-w "$TMP/skills"
	find "$TMP/skills" -name '*.sh' -exec chmod 755 {} +
	write_policy allow
	cp "$ROOT/tests/tools/fileclient.py" "$TMP/fileclient.py"
	chmod 755 "$TMP/fileclient.py"
}

# write_policy allow|not-enabled|deny: the suite's one policy file.
write_policy() {
	local enabled='["*"]' deny=""
	case $1 in
	not-enabled) enabled='[files-fixture]' ;;
	deny) deny=$'\n  - name: no-session-files\n    principals: ["*"]\n    skills: [files]\n    action: deny' ;;
	esac
	cat >"$TMP/policy.d/10-files.yaml" <<-EOF
	skills:
	  enabled: $enabled
	rules:
	  - name: files-allow-all
	    principals: ["*"]
	    skills: ["*"]
	    ceiling: { exec: ["*"] }
	    action: allow$deny
	EOF
}

count_action() { sb_recs ".event.action == \"$1\"" | wc -l; }
more_reloads() { [ "$(count_action policy.reloaded)" -gt "$1" ]; }
# Reload the policy (SIGHUP to the master) and wait for policyd to say so.
reload_policy() {
	local n
	n=$(count_action policy.reloaded)
	kill -HUP "$SB_DPID" || return 1
	sb_poll 5 more_reloads "$n" || sb_fail "no policy.reloaded after SIGHUP"
}
# The worker.started records so far.
started() { count_action worker.started; }

# js STR: STR as a JSON string (backslash, quote, newline, tab escaped).
js() {
	local s=${1//\\/\\\\}
	s=${s//\"/\\\"}
	s=${s//$'\n'/\\n}
	s=${s//$'\t'/\\t}
	printf '"%s"' "$s"
}

# q TYPE ID SESSION [PATH [MEMBERS]]: a request as a JSON line; MEMBERS
# is more of the object, as JSON text ('"offset": 5, "_data_text": "x"').
q() {
	local path=""
	[ $# -lt 4 ] || path=", \"path\": $(js "$4")"
	printf '{"type": "%s", "id": %s, "session": %s%s%s}' "$1" "$(js "$2")" \
	    "$(js "$3")" "$path" "${5:+, $5}"
}

# fc LINE...: fileclient.py on the daemon's socket, one request a line;
# its lines in FC_OUT (and appended to $TMP/fc.out), its status in RC.
# Each reply is summed up by id: SUM[ID] "type/ok/error.type", MSG[ID]
# the error's message.
declare -A SUM MSG
fc() {
	FC_OUT=$(printf '%s\n' "$@" | timeout 60 "$PY" "$TMP/fileclient.py" \
	    "$SB_SOCK" 50 2>"$TMP/fc.err")
	RC=$?
	_fc_done
}
# fc_as UID LINE...: the same as another uid (its gid, no groups).
fc_as() {
	local uid=$1
	shift
	FC_OUT=$(printf '%s\n' "$@" | timeout 60 setpriv --reuid="$uid" \
	    --regid="$uid" --clear-groups "$PY" "$TMP/fileclient.py" \
	    "$SB_SOCK" 50 2>"$TMP/fc.err")
	RC=$?
	_fc_done
}
_fc_done() {
	local id s m
	printf '%s\n' "$FC_OUT" >>"$TMP/fc.out"
	[ ! -s "$TMP/fc.err" ] || echo "# fileclient: $(head -c 300 "$TMP/fc.err")"
	SUM=() MSG=()
	while IFS=$'\x1f' read -r id s m; do
		SUM[$id]=$s
		MSG[$id]=$m
	done < <(printf '%s\n' "$FC_OUT" | jq -r 'select(.reply) | .reply |
	    "\(.id)\u001f\(.type)/\(.ok)/\(.error.type // "")\u001f\(.error.message // "" |
	    gsub("\n"; "\\n"))"')
	return 0
}
# The reply to request ID of the last fc, compact JSON.
rep() {
	printf '%s\n' "$FC_OUT" |
	    jq -c --arg id "$1" 'select(.reply.id == $id) | .reply' | tail -n 1
}

# is_err DESC ID TYPE MSGPART: the reply to ID is an error of TYPE whose
# message holds MSGPART.
is_err() {
	local s=${SUM[$2]-"no reply"}
	if [ "$s" != "error/false/$3" ]; then
		sb_fail "$1: got '$s' (${MSG[$2]-}), want an error of type $3"
		return 1
	fi
	sb_contains "$1: message" "${MSG[$2]}" "$4"
}
# is_ok DESC ID TYPE: the reply to ID is a success of TYPE.
is_ok() {
	[ "${SUM[$2]-}" = "$3/true/" ] ||
	    sb_fail "$1: got '${SUM[$2]-no reply}' (${MSG[$2]-}), want $3 ok"
}
# has DESC ID JQ: the reply to ID holds JQ (a jq expression).
has() { sb_jq_expect "$(rep "$2")" "$3" "$1"; }

sha() { sha256sum <"$1" | cut -d' ' -f1; }
sha_of() { printf '%b' "$1" | sha256sum | cut -d' ' -f1; }

# ls_of SESSION: its listing; LS "path kind size sha256" a line, in the
# reply's order; SUM[ls] and MSG[ls] as fc leaves them.
ls_of() {
	fc "$(q list_files ls "$1")"
	LS=$(printf '%s\n' "$FC_OUT" | jq -r '.reply.files[]? |
	    "\(.path) \(.kind) \(.size_bytes) \(.sha256 // "-")"')
}

# fixture SESSION CMD ARGS...: the fixture skill in SESSION (skillctl
# --json: OUT, RC).
fixture() {
	local sess=$1 cmd=$2
	shift 2
	sb_ctl invoke files-fixture "$cmd" --phase execution --session "$sess" \
	    --json -- "$@"
}
# fixture_says DESC WANT: the fixture's stdout, and its exit status 0.
fixture_says() { sb_eq "$1" "$RC $(sb_j .output.stdout)" "0 $2"; }

# The stdout of the invoke in OUT as text (skillctl shows bytes that are
# not UTF-8 as {base64}).
stdout_text() {
	if [ "$(sb_j '.output.stdout | type')" = object ]; then
		sb_j .output.stdout.base64 | base64 -d | tr -c '[:print:]\n' '.'
	else
		sb_j .output.stdout
	fi
}

# ------------------------------------------------------------------ tests

# hello says what a client may send.
f01_hello() {
	sb_ctl hello --json
	sb_eq "hello" "$RC" 0
	sb_eq "requests" "$(sb_j '[.capabilities.requests[] |
	    select(. == "put_file" or . == "get_file" or . == "list_files" or
	    . == "delete_file")] | join(",")')" \
	    "put_file,get_file,list_files,delete_file"
	sb_eq "file_path_bytes" "$(sb_j .capabilities.limits.file_path_bytes)" 1024
	sb_eq "put_file_bytes" "$(sb_j .capabilities.limits.put_file_bytes)" "$CHUNK"
}

# put a binary input in chunks, a skill transforms it, get the output
# back in chunks: every size and sha256 agrees with the bytes and with
# what the call reported as files_written; the listing shows both.
f02_roundtrip() {
	local x=$TMP/rt-x y=$TMP/rt-y want=$TMP/rt-want xsha ysha size n ng gc i
	size=$((5 * 524288))
	head -c "$size" /dev/urandom >"$x"
	tr '\000-\177\200-\377' '\200-\377\000-\177' <"$x" >"$want"
	xsha=$(sha "$x")
	ysha=$(sha "$want")
	n=$(((size + CHUNK - 1) / CHUNK))
	fc "$(q put_file p rt in/x "\"_data_file\": $(js "$x"), \"_chunk\": $CHUNK")"
	for i in $(seq 0 $((n - 1))); do
		is_ok "put $i" "p-$i" put_file
	done
	has "put: the last" "p-$((n - 1))" ".session == \"rt\" and .path == \"in/x\" and
	    .size_bytes == $size and .sha256 == \"$xsha\" and
	    (.queued_ms | type) == \"number\" and (has(\"data\") | not)"
	has "put: the first" p-0 ".size_bytes == $CHUNK and
	    .sha256 == \"$(head -c "$CHUNK" "$x" | sha256sum | cut -d' ' -f1)\""

	fixture rt transform
	fixture_says "transform" "transformed $size bytes"
	sb_eq "transform: files_written" \
	    "$(sb_j '[.effects.files_written[] | "\(.path) \(.size_bytes) \(.sha256)"] | join(",")')" \
	    "/work/out/y $size $ysha"

	rm -f "$y"
	fc "$(q get_file g rt out/y "\"_until_eof\": true, \"_save\": $(js "$y")")"
	sb_eq "get: every request answered" "$RC" 0
	gc=$(get_chunk out/y)
	ng=$(((size + gc - 1) / gc))
	sb_eq "get: replies" "$(printf '%s\n' "$FC_OUT" | grep -c .)" "$ng"
	sb_jq_expect "$(printf '%s\n' "$FC_OUT" | jq -sc '[.[].reply]')" \
	    "length == $ng and all(.[]; .type == \"get_file\" and .ok and
	    .session == \"rt\" and .path == \"out/y\" and .size_bytes == $size and
	    .sha256 == \"$ysha\" and .data.len > 0 and .data.len <= $gc and
	    .eof == (.offset + .data.len == $size) and (.queued_ms | type) == \"number\") and
	    ([.[].offset] == [foreach .[] as \$r (0; . + \$r.data.len; . - \$r.data.len)]) and
	    ([.[].eof] | index(true)) == $((ng - 1))" "the chunks"
	cmp -s "$y" "$want" || sb_fail "the assembled out/y differs from the transform of in/x"

	# A slice (offset and length), and the end.
	fc "$(q get_file s rt out/y '"offset": 1000, "length": 10')" \
	    "$(q get_file e rt out/y "\"offset\": $size")"
	has "get a slice" s ".ok and .offset == 1000 and .data.len == 10 and
	    .data.sha256 == \"$(tail -c +1001 "$want" | head -c 10 | sha256sum | cut -d' ' -f1)\" and
	    .eof == false and .size_bytes == $size and .sha256 == \"$ysha\""
	has "get at the end" e '.ok and .data.len == 0 and .eof == true'

	ls_of rt
	sb_eq "list" "$LS" "in dir 0 -
in/x file $size $xsha
out dir 0 -
out/y file $size $ysha"
	has "list: the reply" ls '.type == "list_files" and .ok and .session == "rt" and
	    .truncated == false and (.queued_ms | type) == "number"'
}

# Paths and fields a client may not send are refused before any call:
# the error says why, no worker starts, nothing is written.
f03_bad_paths() {
	local before long comp deep lines=() ids=() whys=() i p why t
	fc "$(q put_file seed bp keep '"_data_text": "kept\n"')"
	is_ok "seed" seed put_file
	before=$(started)
	long=$(printf '%01025d' 0)
	comp=$(printf '%0256d' 0)
	deep=$(printf 'd/%.0s' $(seq 32))f
	i=0
	while IFS='|' read -r p why; do
		for t in put_file get_file delete_file; do
			lines+=("$(q "$t" "$t-$i" bp "$p" \
			    "$([ "$t" != put_file ] || echo '"_data_text": "evil\n"')")")
			ids+=("$t-$i")
			whys+=("$why")
		done
		i=$((i + 1))
	done <<-EOF
	../escape|"../escape" has an empty, "." or ".." component
	a/../../escape|".." component
	..|".." component
	.|"." or ".." component
	./keep|"." or ".." component
	a//b|"a//b" has an empty
	a/|an empty
	/etc/hosts|"/etc/hosts" is absolute
	/$TMP/escape|is absolute
	|1..1024 bytes
	$long|longer than 1024 bytes
	$comp|over 255 bytes
	$deep|over 32 components
	EOF
	fc "${lines[@]}"
	sb_eq "every request answered" "$RC" 0
	for i in "${!ids[@]}"; do
		is_err "${ids[$i]}" "${ids[$i]}" bad_request "${whys[$i]}"
	done
	# Fields: each request type takes its own, typed.
	fc "$(q list_files f1 bp x)" \
	    "$(q get_file f2 bp keep '"offset": "5"')" \
	    "$(q get_file f3 bp keep '"length": -1')" \
	    "$(q put_file f4 bp keep)" \
	    "$(q put_file f5 bp keep '"data": 5')" \
	    "$(q delete_file f6 bp keep '"offset": 0')" \
	    "$(q get_file f7 "../s" keep)" \
	    '{"type": "get_file", "id": "f8", "session": "bp"}'
	is_err "list with a path" f1 bad_request 'unknown field'
	is_err "offset as a str" f2 bad_request '"offset"'
	is_err "a negative length" f3 bad_request '"length"'
	is_err "put without data" f4 bad_request '"data"'
	is_err "put with data a number" f5 bad_request '"data"'
	is_err "delete with an offset" f6 bad_request 'unknown field'
	is_err "a bad session name" f7 bad_request 'session'
	is_err "get without a path" f8 bad_request '"path"'
	# Control characters: no terminal escape to plant for a listing.
	fc '{"type": "get_file", "id": "c1", "session": "bp", "path": "a\nb"}' \
	    '{"type": "put_file", "id": "c2", "session": "bp", "path": "x\u001b[31m", "_data_text": "x"}' \
	    '{"type": "delete_file", "id": "c3", "session": "bp", "path": "d/\u007f"}'
	is_err "a newline" c1 bad_request "a path has no control character (byte 0x0a)"
	is_err "an escape" c2 bad_request "a path has no control character (byte 0x1b)"
	is_err "a DEL" c3 bad_request "a path has no control character (byte 0x7f)"
	# A NUL breaks the frame rules (no str may hold one): refused, with
	# no id (the frame was not decoded), and the connection closes.
	fc '{"type": "get_file", "id": "nul", "session": "bp", "path": "keep\u0000x"}'
	is_err "a NUL in the path" null bad_request "UTF-8"
	fc '{"type": "put_file", "id": "nul", "session": "bp", "path": "a\u0000b", "_data_text": "x"}'
	is_err "a NUL in a put's path" null bad_request "UTF-8"
	sb_eq "workers started for refused requests" "$(($(started) - before))" 0
	[ ! -e "$TMP/escape" ] || sb_fail "$TMP/escape exists"
	ls_of bp
	sb_eq "the session after" "$LS" "keep file 5 $(sha_of 'kept\n')"
}

# The files skill invoked by name makes the same checks itself.
f04_direct_invoke() {
	local p
	for p in ../escape /etc/hosts a//b; do
		sb_ctl invoke files get --phase execution --session di --json -- "$p" 0
		sb_eq "get '$p': ran, and said no" \
		    "$(sb_j '"\(.ok)/\(.effects.process.exit_code)"')" true/1
		case $p in
		/*) sb_contains "get '$p'" "$(stdout_text)" "is absolute" ;;
		*) sb_contains "get '$p'" "$(stdout_text)" '"." or ".." component' ;;
		esac
		sb_ctl invoke files put --phase execution --session di --json -- "$p" 0 </dev/null
		sb_eq "put '$p': ran, said no, wrote nothing" \
		    "$(sb_j '"\(.ok)/\(.effects.process.exit_code)/\(.effects.files_written | length)"')" \
		    true/1/0
	done
	[ ! -e "$TMP/escape" ] || sb_fail "$TMP/escape exists"
	ls_of di
	sb_eq "the session after" "$LS" ""
}

# The host side of f05: a marker file and a directory, each writable by
# anyone, that a followed link would change, and a path that a followed
# link would make.
ln_host() {
	LN_MARKER=$TMP/host-marker
	LN_HOSTDIR=$TMP/hostdir
	LN_NEW=$TMP/host-new
	rm -f "$LN_NEW"
	printf 'host marker\n' >"$LN_MARKER"
	mkdir -p "$LN_HOSTDIR"
	printf 'keep\n' >"$LN_HOSTDIR/keep"
	chmod 777 "$LN_HOSTDIR"
	chmod 666 "$LN_MARKER" "$LN_HOSTDIR/keep"
}
ln_host_unchanged() {
	sb_eq "the host marker" "$(cat "$LN_MARKER" 2>&1)" "host marker"
	sb_eq "the host dir" "$(ls -A "$LN_HOSTDIR" | tr '\n' ' ')" "keep "
	sb_eq "the host dir's file" "$(cat "$LN_HOSTDIR/keep" 2>&1)" keep
	if [ -e "$LN_NEW" ] || [ -L "$LN_NEW" ]; then sb_fail "$LN_NEW was made"; fi
}
# Links at a path's end, and paths through links (see plant.sh).
LN_LAST="hostfile newfile hosts in/link"
LN_THROUGH="d/etc/hosts d/work/in/target hostdir/keep sub/din/target"

# Links a skill planted are never followed, whichever request meets
# them and wherever they point; deleting a link removes the link alone;
# a FIFO or a directory where a file is wanted is refused at once.
f05_links() {
	local p t lines=() ms
	ln_host
	fixture ln plant "$LN_MARKER" "$LN_HOSTDIR" "$LN_NEW"
	fixture_says "plant" planted
	for p in $LN_LAST $LN_THROUGH; do
		lines+=("$(q get_file "get $p" ln "$p")")
		lines+=("$(q put_file "put $p" ln "$p" '"_data_text": "evil\n"')")
		lines+=("$(q put_file "append $p" ln "$p" '"offset": 5, "_data_text": "evil\n"')")
	done
	for p in d/tmp/evil d/work/evil hostdir/evil sub/din/new; do
		lines+=("$(q put_file "put $p" ln "$p" '"_data_text": "evil\n"')")
	done
	for p in $LN_THROUGH; do
		lines+=("$(q delete_file "delete $p" ln "$p")")
	done
	fc "${lines[@]}"
	sb_eq "every request answered" "$RC" 0
	for p in $LN_LAST; do
		for t in get put append; do
			is_err "$t $p" "$t $p" bad_request \
			    "\"$p\" is or passes through a symbolic link: session files never follow links"
		done
	done
	# Through a link to a directory: refused, naming the path (f05b:
	# with the words the spec has).
	for p in $LN_THROUGH d/tmp/evil d/work/evil hostdir/evil sub/din/new; do
		for t in get put append delete; do
			[ -n "${SUM[$t $p]+set}" ] || continue
			is_err "$t $p" "$t $p" bad_request "\"$p\"" || continue
			case ${MSG[$t $p]} in
			*"symbolic link"* | *"is not a directory"*) ;;
			*) sb_fail "$t $p: ${MSG[$t $p]}" ;;
			esac
		done
	done
	ln_host_unchanged
	# In the session: the links and their targets as planted, nothing new.
	ls_of ln
	sb_eq "list" "$(printf '%s\n' "$LS" | cut -d' ' -f1,2 | tr '\n' ' ')" \
	    "d symlink fifo other hostdir symlink hostfile symlink hosts symlink in dir in/link symlink in/target file newfile symlink sub dir sub/din symlink "
	sb_eq "in/target" "$(printf '%s\n' "$LS" | grep '^in/target ')" \
	    "in/target file 7 $(sha_of 'inside\n')"
	# Deleting a link removes the link, never what it names.
	lines=()
	for p in d in/link sub/din hostfile hostdir; do
		lines+=("$(q delete_file "rm $p" ln "$p")")
	done
	fc "${lines[@]}"
	sb_jq_expect "$(printf '%s\n' "$FC_OUT" | jq -sc '[.[].reply]')" \
	    'map("\(.type) \(.ok) \(.path) \(.kind) \(.size_bytes) \(has("sha256"))") ==
	    (["d", "in/link", "sub/din", "hostfile", "hostdir"] |
	    map("delete_file true \(.) symlink 0 false"))' "the links deleted"
	ls_of ln
	sb_eq "list after" "$(printf '%s\n' "$LS" | cut -d' ' -f1,2 | tr '\n' ' ')" \
	    "fifo other hosts symlink in dir in/target file newfile symlink sub dir "
	fc "$(q get_file g ln in/target)"
	has "in/target after its link went" g ".ok and .data.sha256 == \"$(sha_of 'inside\n')\""
	ln_host_unchanged
	# A FIFO: refused at once, never opened for a read that waits.
	fc "$(q get_file ff1 ln fifo)" "$(q put_file ff2 ln fifo '"_data_text": "x"')" \
	    "$(q put_file ff3 ln fifo '"offset": 1, "_data_text": "x"')"
	for p in ff1 ff2 ff3; do
		is_err "$p: the fifo" "$p" bad_request '"fifo" is no regular file'
	done
	ms=$(printf '%s\n' "$FC_OUT" | jq -s 'map(.t_ms) | max')
	[ "${ms:-99999}" -lt 3000 ] || sb_fail "a request on the FIFO took ${ms} ms"
	# A directory where a file is wanted, and what is not there.
	fc "$(q get_file d1 ln in)" "$(q put_file d2 ln in '"_data_text": "x"')" \
	    "$(q delete_file d3 ln in)" "$(q get_file d4 ln nosuch/file)" \
	    "$(q delete_file d5 ln nosuch)" \
	    "$(q put_file d6 ln in/target/x '"_data_text": "x"')"
	is_err "get a dir" d1 bad_request '"in" is no regular file'
	is_err "put onto a dir" d2 bad_request '"in" is a directory'
	is_err "delete a dir with files" d3 bad_request 'directory "in" is not empty'
	is_err "get a missing file" d4 not_found 'no "nosuch/file" in the session'
	is_err "delete a missing file" d5 not_found 'no "nosuch" in the session'
	is_err "put below a file" d6 bad_request 'a component of "in/target/x" is not a directory'
	# The FIFO, a file and an empty directory go.
	fc "$(q delete_file e1 ln fifo)" "$(q delete_file e2 ln in/target)" \
	    "$(q delete_file e3 ln in)"
	has "delete the fifo" e1 '.ok and .kind == "other" and .size_bytes == 0'
	has "delete in/target" e2 ".ok and .kind == \"file\" and .size_bytes == 7 and
	    .sha256 == \"$(sha_of 'inside\n')\""
	has "delete the empty in" e3 '.ok and .kind == "dir"'
}

# docs/protocol.md: a path that passes through a link is refused with
# the same words as one that is a link.
f05b_link_message() {
	local p lines=()
	ln_host
	fixture lnm plant "$LN_MARKER" "$LN_HOSTDIR" "$LN_NEW"
	for p in $LN_THROUGH; do
		lines+=("$(q get_file "$p" lnm "$p")")
	done
	fc "${lines[@]}"
	for p in $LN_THROUGH; do
		is_err "get $p" "$p" bad_request \
		    "\"$p\" is or passes through a symbolic link: session files never follow links"
	done
}

# Over the file size bound, over the work dir, at a wrong offset, past
# the end: the typed error, and the file as it was.
f06_oversize() {
	local big=$TMP/big n keep p
	head -c $((FSIZE_MB * 1048576 + 1)) /dev/urandom >"$big"
	n=$((FSIZE_MB * 1048576 / CHUNK))
	fc "$(q put_file b big big "\"_data_file\": $(js "$big"), \"_chunk\": $CHUNK")"
	has "the puts within the bound" "b-$((n - 1))" ".ok and .size_bytes == $((n * CHUNK))"
	is_err "the put past the bound" "b-$n" resource_limit \
	    "\"big\" would be $((FSIZE_MB * 1048576 + 1)) bytes, over the file size bound of $((FSIZE_MB * 1048576)) (limits.fsize_mb)"
	keep="big file $((n * CHUNK)) $(head -c $((n * CHUNK)) "$big" | sha256sum | cut -d' ' -f1)"
	# An append must start where the file ends; a get within the file.
	fc "$(q put_file o1 big big '"offset": 5, "_data_text": "x"')" \
	    "$(q put_file o2 big big "\"offset\": $((n * CHUNK + 1)), \"_data_text\": \"x\"")" \
	    "$(q get_file o3 big big "\"offset\": $((n * CHUNK + 1))")" \
	    "$(q put_file o4 big big "\"offset\": $((FSIZE_MB * 1048576)), \"_data_text\": \"x\"")"
	is_err "append at 5" o1 bad_request \
	    "offset 5 is not the size of \"big\" ($((n * CHUNK))): a put goes on where the file ends"
	is_err "append past the end" o2 bad_request "is not the size of \"big\""
	# A wrong offset is wrong whatever the size bound says.
	is_err "append far past the end" o4 bad_request "is not the size of \"big\""
	is_err "get past the end" o3 bad_request \
	    "offset $((n * CHUNK + 1)) is past the end of \"big\" ($((n * CHUNK)) bytes)"
	ls_of big
	sb_eq "big after" "$LS" "$keep"

	# A full work dir: what does not fit is refused, and what was there
	# stays as it was (a replace, an append cut back).
	fc "$(q put_file d full doc '"_data_text": "the old doc\n"')" \
	    "$(q put_file a full grow '"_data_zeros": 10000')"
	is_ok "doc" d put_file
	is_ok "grow" a put_file
	fixture full fill
	sb_eq "fill" "$RC $(sb_j .ok)" "0 true"
	fc "$(q put_file m full more '"_data_zeros": 500000')" \
	    "$(q put_file r full doc '"_data_zeros": 500000')" \
	    "$(q put_file g full grow '"offset": 10000, "_data_zeros": 500000')"
	for p in m r g; do
		is_err "put $p into a full work dir" "$p" resource_limit \
		    "the session's work dir is full (worker.work_mb)"
	done
	ls_of full
	sb_eq "the files after" "$(printf '%s\n' "$LS" | grep -v '^fill')" \
	    "doc file 12 $(sha_of 'the old doc\n')
grow file 10000 $(head -c 10000 /dev/zero | sha256sum | cut -d' ' -f1)"
}

# A put refused at a wrong offset leaves the session as it was: no file,
# and no directory made for it (docs/protocol.md has a put that fails
# leave the file as it was; this asks the same of its directories).
f07_refused_put_makes_dirs() {
	fc "$(q put_file o newf a/b/new '"offset": 5, "_data_text": "x"')"
	case ${SUM[o]-} in
	error/false/bad_request | error/false/not_found) ;;
	*) sb_fail "append to a missing file: ${SUM[o]-no reply} ${MSG[o]-}" ;;
	esac
	ls_of newf
	sb_eq "the session after" "$LS" ""
}

# Sessions are the uid's and apart: another session, another uid, a
# session never used.
f08_isolation() {
	local t
	fc "$(q put_file s iso-a secret.txt '"_data_text": "secret of A\n"')" \
	    "$(q list_files l never)" "$(q get_file g never secret.txt)" \
	    "$(q delete_file d never secret.txt)" \
	    "$(q put_file p iso-b other.txt '"_data_text": "B\n"')" \
	    "$(q get_file g2 iso-b secret.txt)" "$(q delete_file d2 iso-b secret.txt)"
	is_ok "put in A" s put_file
	for t in l g d; do
		is_err "a never-used session ($t)" "$t" not_found "no such session of this uid"
	done
	is_ok "put in B" p put_file
	is_err "A's file from B" g2 not_found 'no "secret.txt" in the session'
	is_err "delete A's file from B" d2 not_found 'no "secret.txt" in the session'
	ls_of iso-b
	sb_eq "B's listing" "$LS" "other.txt file 2 $(sha_of 'B\n')"
	# Another uid that names session A: it has no such session.
	fc_as "$OTHER" "$(q list_files l iso-a)" "$(q get_file g iso-a secret.txt)" \
	    "$(q delete_file d iso-a secret.txt)"
	sb_eq "other uid: every request answered" "$RC" 0
	for t in l g d; do
		is_err "other uid on A ($t)" "$t" not_found "no such session of this uid"
	done
	# ... and a session of that name it makes is its own.
	fc_as "$OTHER" "$(q put_file p iso-a mine.txt '"_data_text": "mine\n"')" \
	    "$(q list_files l iso-a)" "$(q get_file g iso-a secret.txt)"
	is_ok "other uid: put" p put_file
	has "other uid: its listing" l '[.files[].path] == ["mine.txt"]'
	is_err "other uid: A's file in its own session" g not_found 'no "secret.txt"'
	ls_of iso-a
	sb_eq "A after" "$LS" "secret.txt file 12 $(sha_of 'secret of A\n')"
}

# Each file request is a call of the skill files, audited as one.
f09_audit() {
	local id cmd recs put_sha
	put_sha=$(sha_of 'audited\n')
	fc "$(q put_file au-put au a.txt '"_data_text": "audited\n"')" \
	    "$(q get_file au-get au a.txt)" "$(q list_files au-list au)" \
	    "$(q delete_file au-delete au a.txt)" "$(q get_file au-miss au a.txt)"
	sb_eq "every request answered" "$RC" 0
	has "the delete's reply" au-delete ".ok and .kind == \"file\" and .size_bytes == 8 and
	    .sha256 == \"$put_sha\""
	is_err "get after the delete" au-miss not_found 'no "a.txt" in the session'
	sb_wait_for 3 "invoke.completed of au-miss" sb_has_rec \
	    '.event.action == "invoke.completed" and .request.id == "au-miss"'
	recs=$(jq -sc '[.[] | select(.session.id == "au")]' "$SB_AUDIT")
	for cmd in put get list delete miss; do
		id=au-$cmd
		[ "$cmd" != miss ] || cmd="get"
		sb_jq_expect "$recs" "(map(select(.request.id == \"$id\")) | map(.event.action) ==
		    [\"invoke.received\", \"policy.decision\", \"invoke.completed\"]) and
		    (map(select(.request.id == \"$id\")) | all(.[]; .skill.name == \"files\" and
		    .user.id == \"0\")) and
		    (map(select(.request.id == \"$id\" and .event.action != \"invoke.received\")) |
		    all(.[]; .skill.command == \"$cmd\")) and
		    (map(select(.request.id == \"$id\" and .event.action == \"policy.decision\"))[0].grant.id
		    as \$g | map(select(.event.action == \"worker.started\" and .grant.id == \$g)) |
		    length == 1 and .[0].skill.name == \"files\" and .[0].skill.command == \"$cmd\")" \
		    "the records of $id"
	done
	sb_jq_expect "$recs" "map(select(.request.id == \"au-put\" and
	    .event.action == \"invoke.completed\"))[0] | .event.outcome == \"success\" and
	    .files_written.count == 1 and .files_written.path == [\"/work/a.txt\"] and
	    .files_written.size_bytes == [8] and .files_written.sha256 == [\"$put_sha\"]" \
	    "the put's invoke.completed"
}

# Without the policy's leave, session files are refused, saying why,
# and nothing runs.
f10_policy() {
	local before
	before=$(started)
	write_policy not-enabled
	reload_policy
	fc "$(q put_file p pol x '"_data_text": "x"')"
	is_err "files not enabled" p skill_not_enabled \
	    'session files are calls of the skill "files"'
	write_policy deny
	reload_policy
	fc "$(q put_file p pol x '"_data_text": "x"')"
	is_err "files denied" p permission_denied 'no-session-files'
	sb_eq "workers started" "$(($(started) - before))" 0
	write_policy allow
	reload_policy
	fc "$(q put_file p pol x '"_data_text": "x"')"
	is_ok "allowed again" p put_file
}

# docs/protocol.md: a deny rule's refusal says, as skill_not_enabled's
# does, that session files are calls of the skill "files".
f10b_deny_message() {
	write_policy deny
	reload_policy
	fc "$(q put_file p pol x '"_data_text": "x"')"
	is_err "files denied" p permission_denied 'session files are calls of the skill "files"'
	write_policy allow
	reload_policy
}

# Names a skill chose are listed escaped, whole, in a stable order; a
# tree deeper than a path may be is cut, and says so.
f11_listing() {
	local long a b
	long=$(printf '%0255d' 0 | tr 0 L)
	fixture names names
	fixture_says "names" named
	fc "$(q list_files l names)" "$(q get_file g names "names/$long")" \
	    "$(q get_file nl names "names/new
line")" "$(q get_file esc names 'names/bad\xff\xfebytes')" \
	    "$(q delete_file d names "names/$long")"
	is_ok "the listing decodes" l list_files
	has "paths, sorted by their bytes" l "[.files[].path] == [\"names\",
	    \"names/$long\", \"names/bad\\\\xff\\\\xfebytes\",
	    \"names/ctl\\u0001\\u001b[31mred\", \"names/new\\nline\"] and
	    [.files[].size_bytes] == [0, 5, 4, 6, 4] and .truncated == false"
	has "get the 255-byte name" g ".ok and .data.sha256 == \"$(sha_of 'four\n')\""
	is_err "a name with a newline cannot be asked for" nl bad_request \
	    "no control character (byte 0x0a)"
	is_err "the escaped form names no file" esc not_found 'no "names/bad\xff\xfebytes"'
	has "delete the 255-byte name" d ".ok and .size_bytes == 5"

	fixture deep deep
	fixture_says "deep" nested
	fc "$(q list_files a deep)" "$(q list_files b deep)"
	a=$(rep a | jq -c 'del(.queued_ms, .id)')
	b=$(rep b | jq -c 'del(.queued_ms, .id)')
	sb_eq "deep: the same twice" "$a" "$b"
	sb_jq_expect "$a" '.truncated == true and (.files | length) == 32 and
	    ([.files[].path | split("/") | length] | max) == 32 and
	    [.files[].path] == ([.files[].path] | sort)' "deep: cut at 32 levels"
}

# Error messages that quote a path stay UTF-8 where they cut it: the
# broker's (64 bytes of it) and the skill's (200 bytes).
f12_utf8_messages() {
	local e40 e120
	e40=$(printf 'é%.0s' $(seq 40))
	e120=$(printf 'é%.0s' $(seq 120))
	fc "$(q get_file b1 u8 "a$e40/..")" "$(q put_file p u8 x '"_data_text": "x"')" \
	    "$(q get_file s1 u8 "a$e120")"
	sb_eq "every reply decodes" "$(printf '%s\n' "$FC_OUT" | grep -c undecodable)" 0
	is_err "the broker's message" b1 bad_request '".." component'
	is_err "the skill's message" s1 not_found 'in the session'
}

# Files and directories a skill locked (mode 000): delete_file removes
# a file as any other, get_file's refusal is not the daemon's failure,
# and a listing that could not look into a directory says it is cut.
f13_unreadable() {
	fixture lk lock
	fixture_says "lock" locked
	fc "$(q list_files l lk)" "$(q get_file g lk locked)" "$(q delete_file d lk locked)"
	has "list: truncated" l '.ok and .truncated == true'
	case ${SUM[g]-} in
	*/internal) sb_fail "get of a locked file: ${SUM[g]} ${MSG[g]}" ;;
	esac
	has "delete the locked file" d '.ok and .kind == "file"'
}

# A session with more entries than a msgpack array of the broker's
# decoder may hold (4096) lists, cut or whole, but does not fail.
f14_list_many() {
	fixture many many 4200
	fixture_says "many" "made 4200"
	fc "$(q list_files l many)"
	is_ok "list" l list_files
}

# skillctl put, get, ls and rm: a 3 MiB file there and back, what it
# refuses itself, and the broker's refusals as its exit statuses.
f15_skillctl() {
	local f=$TMP/sc-in g=$TMP/sc-out big=$TMP/sc-big fsha err=$SB_DIR/ctl.err
	"$SB_BIN/skillctl" put -h >/dev/null 2>&1 ||
	    { sb_skip "skillctl has no put yet"; return; }
	head -c $((3 * 1048576)) /dev/urandom >"$f"
	fsha=$(sha "$f")
	sb_ctl put --session sc "$f" dir/big.bin
	sb_eq "put" "$RC $OUT" "0 dir/big.bin: 3145728 bytes, sha256 $fsha"
	rm -f "$g"
	sb_ctl get --session sc dir/big.bin "$g"
	sb_eq "get" "$RC $OUT" "0 dir/big.bin: 3145728 bytes, sha256 $fsha"
	cmp -s "$f" "$g" || sb_fail "the file got back differs from the one put"
	sb_eq "get to stdout" "$("$SB_BIN/skillctl" -s "$SB_SOCK" get --session sc \
	    dir/big.bin - 2>/dev/null | sha256sum | cut -d' ' -f1)" "$fsha"
	sb_ctl ls --session sc
	sb_eq "ls: status" "$RC" 0
	sb_eq "ls" "$(printf '%s\n' "$OUT" | awk '{ print $1, $2, $3, $4 }')" \
	    "dir - - dir
file 3145728 ${fsha:0:12} dir/big.bin"
	sb_ctl rm --session sc dir/big.bin
	sb_eq "rm" "$RC $OUT" "0 removed dir/big.bin (file, 3145728 bytes)"
	sb_ctl ls --session sc
	sb_eq "ls after rm" "$RC $(printf '%s\n' "$OUT" | awk '{ print $1, $4 }')" "0 dir dir"
	fc "$(q get_file g sc dir/big.bin)"
	is_err "get after rm" g not_found 'no "dir/big.bin" in the session'
	# Refused before anything is sent; refused by the broker.
	sb_ctl put --session sc "$f" /etc/evil
	sb_eq "put to an absolute path" "$RC" 2
	sb_ctl get --session sc dir/big.bin "$g"
	sb_eq "get of what is gone" "$RC" 3
	sb_contains "get of what is gone: stderr" "$(cat "$err")" 'not_found: no "dir/big.bin" in the session'
	sb_ctl ls --session never-used
	sb_eq "ls of a session never used" "$RC" 3
	sb_contains "ls of a session never used: stderr" "$(cat "$err")" "no such session of this uid"
	head -c $((FSIZE_MB * 1048576 + 1)) /dev/urandom >"$big"
	sb_ctl put --session sc "$big" big
	sb_eq "put over limits.fsize_mb" "$RC" 3
	sb_contains "put over limits.fsize_mb: stderr" "$(cat "$err")" "limits.fsize_mb"
	sb_contains "put over limits.fsize_mb: what is left" "$(cat "$err")" \
	    "big is not a whole copy of"
}

SB_TESTS="f01_hello f02_roundtrip f03_bad_paths f04_direct_invoke f05_links
f05b_link_message f06_oversize f07_refused_put_makes_dirs f08_isolation
f09_audit f10_policy f10b_deny_message f11_listing f12_utf8_messages
f13_unreadable f14_list_many f15_skillctl"

setup_fixtures
if ! sb_start; then
	echo "not ok - startup: the daemon did not start"
	echo "files: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
sb_run_tests "$@"
