#!/bin/bash
# The client libraries and the MCP adapter against the real daemon: the
# C library (its test program and the documented example), the Python
# client (sync and asyncio), the Node client, and skillbroker-mcp driven
# by the MCP TypeScript SDK's own client. Each client's own tests do the
# calls; this suite starts one daemon with the policy they share and
# runs them.
#
#   SB_BIN=<dir of skillbrokerd, skillctl, ...> \
#   SB_CLIENT_BIN=<dir of client_test, example> bash tests/clients/run.sh [TEST...]
#
# The shared policy (written below), which every client's tests rely on:
#   echo-args  allowed in phase execution: prints its arguments
#   exit-code  allowed: prints a line, exits 7
#   nap        allowed: sleeps its first argument's seconds (cancel)
#   confirm    an ask rule: the calling client is asked (approvals)
#   whoami     enabled, and a deny rule: permission_denied
#   sleeper    not enabled: skill_not_enabled
#   files      allowed: put_file, get_file, list_files, delete_file
#   bigout     allowed, with a 4 MiB output cap: writes N bytes, so a
#              result can be longer than a frame (1 MiB)
# The clients find the socket in SKILLBROKER_SOCKET. Calls run as root,
# with room for 64 sessions and 10 workers at once.
#
# Needs root, jq, /usr/bin/python3 with python3-msgpack; node and npm
# for the Node client and the MCP tests (skipped, with the reason, when
# node is missing or the npm registry cannot be reached to install their
# packages). Workers use a slot of 10 uids in 64800-64849
# (tests/lib/uids.sh). KEEP_TMP=1 keeps the temp dir.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/tests/lib/daemon.sh"
sb_init clients
PY=/usr/bin/python3
CBIN=${SB_CLIENT_BIN:-$ROOT/build/tests/clients}
claim_uids 64800 5 10 clients
sb_tmpdir sb-clients
TMP=$SB_TMP

setup_fixtures() {
	local s
	mkdir -p "$TMP/skills" "$TMP/policy.d"
	for s in echo-args exit-code nap confirm whoami sleeper; do
		cp -R "$ROOT/tests/integration/skills/$s" "$TMP/skills/"
	done
	cp -R "$ROOT/skills/files" "$TMP/skills/files"
	cp -R "$HERE/skills/bigout" "$TMP/skills/"
	chmod -R u+rwX,go+rX,go-w "$TMP/skills"
	find "$TMP/skills" -name '*.sh' -exec chmod 755 {} +
	cat >"$TMP/policy.d/10-clients.yaml" <<-EOF
	# the client suite's policy (tests/clients/run.sh)
	skills:
	  enabled: [echo-args, exit-code, nap, confirm, whoami, files, bigout]
	rules:
	  - name: clients-allow
	    principals: ["*"]
	    skills: [echo-args, exit-code, nap, files]
	    action: allow
	    ceiling: { exec: ["*"] }
	  - name: clients-ask
	    principals: ["*"]
	    skills: [confirm]
	    action: ask
	  - name: clients-deny
	    principals: ["*"]
	    skills: [whoami]
	    action: deny
	  - name: clients-big-output
	    principals: ["*"]
	    skills: [bigout]
	    action: allow
	    ceiling: { exec: ["*"] }
	    limits: { output_bytes: 4194304 }
	EOF
}

# Install a Node package dir's locked dependencies once (npm ci), or
# skip with the reason.
npm_ready() {
	local dir=$1
	command -v node >/dev/null 2>&1 || { sb_skip "node is not installed"; return 1; }
	command -v npm >/dev/null 2>&1 || { sb_skip "npm is not installed"; return 1; }
	[ -d "$dir/node_modules" ] && return 0
	if ! (cd "$dir" && npm ci --no-audit --no-fund >"$TMP/npm.log" 2>&1); then
		sb_skip "npm ci in ${dir#"$ROOT"/} failed (no registry?): $(tail -n 1 "$TMP/npm.log")"
		return 1
	fi
}

# Run a client's test command; on failure its output is the reason.
client_run() {
	local name=$1 out
	shift
	if ! out=$(cd "$ROOT" && SKILLBROKER_SOCKET=$SB_SOCK timeout 300 "$@" 2>&1); then
		printf '%s\n' "$out" | tail -n 40 | sed 's/^/#   /' >&2
		sb_fail "$name failed (its output above)"
		return 1
	fi
	[ -z "$SB_VERBOSE" ] || printf '%s\n' "$out" | sed 's/^/#   /'
}

c01_c_library() { client_run client_test "$CBIN/client_test"; }
c02_c_example() { client_run example "$CBIN/example" echo-args run hello world; }
c03_python() {
	"$PY" -c 'import msgpack' 2>/dev/null ||
	    { sb_skip "$PY cannot import msgpack"; return 1; }
	client_run python "$PY" -m unittest discover -s clients/python/tests -t clients/python
}
c04_node() {
	npm_ready "$ROOT/clients/node" || return 1
	client_run node npm --prefix clients/node test
}
c05_mcp_sdk() {
	npm_ready "$ROOT/tests/clients/mcp" || return 1
	SKILLBROKER_MCP=$SB_BIN/skillbroker-mcp client_run mcp npm --prefix tests/clients/mcp test
}

# The installed library: make install into a staging root, then the
# example built with what the installed skillbroker.pc says alone, once
# on the shared library and once on the static one, and run.
c06_installed_library() {
	local d=$TMP/root pc lib cc=${CC:-cc} san="" out
	command -v pkg-config >/dev/null 2>&1 || { sb_skip "pkg-config is not installed"; return 1; }
	# the sanitizer tree's library needs its runtime in the program too
	[ -z "${ASAN_OPTIONS:-}" ] || san="-fsanitize=address,undefined"
	if ! make -s -C "$ROOT" install DESTDIR="$d" >"$TMP/install.log" 2>&1; then
		sb_fail "make install DESTDIR=$d failed: $(tail -n 3 "$TMP/install.log")"
		return 1
	fi
	pc="env PKG_CONFIG_PATH=$d/usr/local/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$d pkg-config"
	lib=$d/usr/local/lib
	[ -L "$lib/libskillbroker.so.1" ] && [ -f "$lib/libskillbroker.a" ] &&
	    [ -f "$d/usr/local/include/skillbroker.h" ] &&
	    [ -f "$d/usr/local/share/man/man3/skillbroker.3" ] ||
	    { sb_fail "make install left out the library, header or manual page"; return 1; }
	sb_eq "soname" "$(objdump -p "$lib/libskillbroker.so.1" | awk '$1 == "SONAME" { print $2 }')" libskillbroker.so.1 || return 1
	# shellcheck disable=SC2046 # pkg-config's words split on purpose
	"$cc" $san -o "$TMP/ex-shared" "$ROOT/examples/sb-invoke.c" \
	    $($pc --cflags --libs skillbroker) 2>"$TMP/cc.log" ||
	    { sb_fail "building on the installed .pc: $(head -n 3 "$TMP/cc.log")"; return 1; }
	# shellcheck disable=SC2046
	"$cc" $san -o "$TMP/ex-static" "$ROOT/examples/sb-invoke.c" \
	    $($pc --cflags skillbroker) "$lib/libskillbroker.a" \
	    $($pc --static --libs-only-l skillbroker | sed 's/-lskillbroker//') 2>"$TMP/cc.log" ||
	    { sb_fail "building on the installed .a: $(head -n 3 "$TMP/cc.log")"; return 1; }
	out=$(SKILLBROKER_SOCKET=$SB_SOCK LD_LIBRARY_PATH=$lib "$TMP/ex-shared" echo-args run a b 2>&1)
	sb_eq "the example on the installed .so" "$out" $'a b\n[exit 0]' || return 1
	out=$(SKILLBROKER_SOCKET=$SB_SOCK "$TMP/ex-static" echo-args run c 2>&1)
	sb_eq "the example on the installed .a" "$out" $'c\n[exit 0]' || return 1
	ldd "$TMP/ex-static" | grep -q skillbroker &&
	    { sb_fail "the static build still loads the shared library"; return 1; }
	return 0
}

SB_TESTS="c01_c_library c02_c_example c03_python c04_node c05_mcp_sdk c06_installed_library"

setup_fixtures
SB_OUTPUT_BYTES=4194304
sb_config "$TMP/sb.yaml" "per_uid.sessions: 64" "per_uid.workers: 10"
if ! sb_start; then
	echo "not ok - startup: the daemon did not start"
	echo "clients: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
sb_run_tests "$@"
