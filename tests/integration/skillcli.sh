#!/bin/bash
# skillctl without a daemon, as root or not: the skill authoring
# commands (`skillctl skill init`, `skillctl skill check`), -h and -V of
# every program in SB_BIN and of every skillctl command, and what a
# client that finds no daemon is told.
#   SB_BIN=<dir of skillctl> bash tests/integration/skillcli.sh
# Prints "ok - NAME" / "not ok - NAME: why" / "skip - NAME: why" per
# test, then "skillcli: N passed, M failed, K skipped"; exits 1 if any
# failed. KEEP_TMP=1 keeps the temp dir.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${SB_BIN:-$ROOT/bin}
CTL=$BIN/skillctl
TMP=$(mktemp -d "${TMPDIR:-/tmp}/sb-skillcli.XXXXXX") || exit 1
[ "${KEEP_TMP:-0}" = 1 ] || trap 'rm -rf "$TMP"' EXIT
PASS=0 FAIL=0 SKIP=0

ok() { echo "ok - $1"; PASS=$((PASS + 1)); }
notok() { echo "not ok - $1: $2"; FAIL=$((FAIL + 1)); }
skip() { echo "skip - $1: $2"; SKIP=$((SKIP + 1)); }

# ctl ARGS...: run skillctl; OUT, ERR and RC hold what it did.
ctl() {
	"$CTL" "$@" >"$TMP/out" 2>"$TMP/err"
	RC=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}

# expect NAME RC [PATTERN]: the last ctl exited RC and (if given) its
# stdout and stderr hold the extended regex PATTERN.
expect() {
	if [ "$RC" != "$2" ]; then
		notok "$1" "exit $RC, want $2; out: ${OUT:0:300} err: ${ERR:0:300}"
	elif [ -n "${3:-}" ] && ! printf '%s\n%s\n' "$OUT" "$ERR" | grep -Eq -- "$3"; then
		notok "$1" "no /$3/ in: ${OUT:0:400} ${ERR:0:400}"
	else
		ok "$1"
	fi
}

# no_warning NAME: the last ctl exited 0 and printed no warning.
no_warning() {
	if [ "$RC" != 0 ]; then
		notok "$1" "exit $RC: ${OUT:0:300} ${ERR:0:300}"
	elif printf '%s\n%s\n' "$OUT" "$ERR" | grep -q 'warning'; then
		notok "$1" "a warning: $(printf '%s\n' "$OUT" | grep warning | head -3)"
	else
		ok "$1"
	fi
}

# The interpreter of the skeleton's script, where the sandbox finds it.
have_python() {
	local d
	for d in /usr/local/bin /usr/bin /bin; do
		[ -x "$d/python3" ] && return 0
	done
	return 1
}

# mk DIR: a skill dir whose SKILL.md is stdin.
mk() {
	mkdir -p "$TMP/s/$1"
	cat >"$TMP/s/$1/SKILL.md"
}

test_usage() {
	ctl skill check -h
	expect "check -h prints usage, exit 0" 0 'usage: skillctl skill check'
	ctl skill init --help
	expect "init --help prints usage, exit 0" 0 'skillctl skill init \[-d PARENT\] NAME'
	ctl skill check
	expect "check without DIR: exit 2" 2 'needs a DIR'
	ctl skill check "$TMP/no-such-dir"
	expect "check of no directory: exit 2" 2 'not a directory'
	ctl skill check --bogus "$TMP"
	expect "check with an unknown option: exit 2" 2 'unknown option'
	ctl skill init
	expect "init without NAME: exit 2" 2 'needs a NAME'
	ctl skill frob
	expect "skill with an unknown subcommand: exit 2" 2 'check.*init|init.*check'
}

test_init() {
	local d=$TMP/p/my-skill m bad=
	mkdir -p "$TMP/p"
	ctl skill init -d "$TMP/p" my-skill
	expect "init creates a skeleton" 0 "skillctl skill check $TMP/p/my-skill"
	for f in SKILL.md skill.yaml scripts/run.py references/README.md; do
		m=$(stat -c %a "$d/$f" 2>/dev/null)
		[ -f "$d/$f" ] && [ "$m" = 644 ] || bad="$bad $f:${m:-missing}"
	done
	for f in . scripts references; do
		m=$(stat -c %a "$d/$f" 2>/dev/null)
		[ -d "$d/$f" ] && [ "$m" = 755 ] || bad="$bad $f/:${m:-missing}"
	done
	head -c2 "$d/scripts/run.py" 2>/dev/null | grep -q '#!' && bad="$bad run.py:#!"
	if [ -n "$bad" ]; then
		notok "init: files, modes, a script without #!" "$bad"
	else
		ok "init: files, modes, a script without #!"
	fi
	grep -q '^name: my-skill$' "$d/SKILL.md" && grep -q 'scripts/run.py' "$d/SKILL.md" &&
		ok "init: SKILL.md names the skill and its script" ||
		notok "init: SKILL.md" "$(head -5 "$d/SKILL.md")"
	if ! have_python; then
		skip "init: the skeleton checks valid" "no python3 in the sandbox's PATH"
		return
	fi
	ctl skill check "$d"
	expect "init: the skeleton checks valid" 0 'scripts/run.py +\(python3, cwd work\)'
	no_warning "init: the skeleton has no warning"
	if python3 "$d/scripts/run.py" a b | grep 'a b' >/dev/null; then
		ok "init: run.py runs and prints its arguments"
	else
		notok "init: run.py" "$(python3 "$d/scripts/run.py" a b 2>&1 | head -3)"
	fi
	ctl skill check --json "$d"
	if [ "$RC" = 0 ] && printf '%s' "$OUT" | jq -e '.valid == true and
	    .name == "my-skill" and .error == null and .warnings == [] and
	    .manifest == "skill.yaml" and
	    .commands == [{"name": "scripts/run.py", "path": "scripts/run.py",
	        "interpreter": "python3", "cwd": "work"}]' >/dev/null; then
		ok "check --json of the skeleton"
	else
		notok "check --json of the skeleton" "exit $RC: $OUT"
	fi
	# -f CONFIG: the loader takes the config's interpreters
	printf 'interpreters:\n  .py: ""\n' >"$TMP/no-py.yaml"
	ctl skill check -f "$TMP/no-py.yaml" "$d"
	expect "check -f CONFIG: its interpreters count" 0 \
		'SKILL.md:[0-9]+: warning: scripts/run.py is named .* nor of an extension an interpreter runs'
	ctl skill check -f "$TMP/no-such-config.yaml" "$d"
	expect "check -f with no config: exit 1" 1 'no-such-config'
	# the skeleton in the current directory
	(cd "$TMP/p" && "$CTL" skill init dot-skill >/dev/null 2>&1)
	[ -f "$TMP/p/dot-skill/SKILL.md" ] && ok "init: PARENT defaults to ." ||
		notok "init: PARENT defaults to ." "no $TMP/p/dot-skill/SKILL.md"
	(cd "$TMP/p/dot-skill" && "$CTL" skill check . >"$TMP/out" 2>&1)
	RC=$? OUT=$(cat "$TMP/out") ERR=
	expect "check . inside the skill" 0 'skill dot-skill: valid'
}

test_init_refuses() {
	local long
	long=$(printf 'a%.0s' $(seq 65))
	mkdir -p "$TMP/r"
	ctl skill init -d "$TMP/r" Bad_Name
	expect "init refuses Bad_Name" 2 "Skill name 'Bad_Name' must be lowercase"
	ctl skill init -d "$TMP/r" a--b
	expect "init refuses a--b" 2 'Skill name cannot contain consecutive hyphens'
	ctl skill init -d "$TMP/r" -- -x
	expect "init refuses -x" 2 'Skill name cannot start or end with a hyphen'
	ctl skill init -d "$TMP/r" "$long"
	expect "init refuses 65 characters" 2 'exceeds 64 character limit \(65 chars\)'
	ctl skill init -d "$TMP/r" a_b
	expect "init refuses a_b" 2 'contains invalid characters'
	[ -z "$(ls -A "$TMP/r")" ] && ok "init: a refused name creates nothing" ||
		notok "init: a refused name creates nothing" "$(ls -A "$TMP/r")"
	mkdir -p "$TMP/r/taken"
	echo keep >"$TMP/r/taken/SKILL.md"
	ctl skill init -d "$TMP/r" taken
	expect "init refuses an existing dir" 1 'exists'
	[ "$(cat "$TMP/r/taken/SKILL.md")" = keep ] &&
		ok "init: an existing dir is left as it was" ||
		notok "init: an existing dir is left as it was" "SKILL.md changed"
	ctl skill init -d "$TMP/r/no-such" fine
	expect "init: a missing PARENT is an error" 1 'no-such'
}

test_invalid() {
	local desc
	mk alpha <<-'E'
	---
	name: beta
	description: A skill in the wrong directory.
	---
	E
	ctl skill check "$TMP/s/alpha"
	expect "check: name/dir mismatch, exit 1 at file:line" 1 \
		"^$TMP/s/alpha/SKILL.md:2: error: Directory name 'alpha' must match skill name 'beta'"
	expect "check: an invalid skill is said to be" 1 'skill alpha: invalid'
	ctl skill check --json "$TMP/s/alpha"
	if [ "$RC" = 1 ] && printf '%s' "$OUT" | jq -e '.valid == false and
	    (.error | test("Directory name")) and .commands == []' >/dev/null; then
		ok "check --json of an invalid skill"
	else
		notok "check --json of an invalid skill" "exit $RC: $OUT"
	fi

	desc=$(printf 'd%.0s' $(seq 1025))
	printf -- '---\nname: longdesc\ndescription: %s\n---\n' "$desc" | mk longdesc
	ctl skill check "$TMP/s/longdesc"
	expect "check: description of 1025 characters" 1 \
		"longdesc/SKILL.md:3: error: Description exceeds 1024 character limit \(1025 chars\)"

	mk foo <<-'E'
	---
	name: foo
	description: A script of an extension nothing runs.
	---
	E
	mkdir -p "$TMP/s/foo/scripts"
	echo 'print hi' >"$TMP/s/foo/scripts/run.foo"
	chmod 644 "$TMP/s/foo/scripts/run.foo"
	printf 'commands:\n  run: scripts/run.foo\n' >"$TMP/s/foo/skill.yaml"
	ctl skill check "$TMP/s/foo"
	expect "check: a .foo script without #! in a commands block" 1 \
		"foo/skill.yaml:2: error: command run: scripts/run.foo has no \"#!\" line"

	mk nointerp <<-'E'
	---
	name: nointerp
	description: Its interpreter is nowhere.
	---
	E
	mkdir -p "$TMP/s/nointerp/scripts"
	echo 'x' >"$TMP/s/nointerp/scripts/run.x"
	chmod 644 "$TMP/s/nointerp/scripts/run.x"
	printf 'commands:\n  run:\n    path: scripts/run.x\n    interpreter: sb-no-such\n' \
		>"$TMP/s/nointerp/skill.yaml"
	ctl skill check "$TMP/s/nointerp"
	expect "check: a missing interpreter" 1 \
		"nointerp/skill.yaml:[0-9]+: error: command run: .*sb-no-such"

	mkdir -p "$TMP/s/empty"
	ctl skill check "$TMP/s/empty"
	expect "check: no SKILL.md" 1 "empty/SKILL.md: error: "
}

test_warnings() {
	mk ghost <<-'E'
	---
	name: ghost
	description: Names a script it does not have.
	---
	Run `python3 scripts/missing.py` to start.
	E
	ctl skill check "$TMP/s/ghost"
	expect "check: a named script that is not there" 0 \
		"ghost/SKILL.md:5: warning: the instructions name scripts/missing.py, which the skill does not have"

	mk inline <<-'E'
	---
	name: inline
	description: Our blocks in the frontmatter.
	limits:
	  timeout_ms: 5000
	---
	E
	ctl skill check "$TMP/s/inline"
	expect "check: our blocks in SKILL.md" 0 \
		"inline/SKILL.md:4: warning: Unexpected fields in frontmatter: limits\..*move them to skill.yaml"

	mk unnamed <<-'E'
	---
	name: unnamed
	description: Has a script no instruction names.
	---
	Run `sh scripts/named.sh`.
	E
	mkdir -p "$TMP/s/unnamed/scripts/sub"
	printf 'echo named\n' >"$TMP/s/unnamed/scripts/named.sh"
	printf 'print("x")\n' >"$TMP/s/unnamed/scripts/extra.py"
	printf '{}\n' >"$TMP/s/unnamed/scripts/data.json"
	printf 'x\n' >"$TMP/s/unnamed/scripts/_helper.py"
	ln -s named.sh "$TMP/s/unnamed/scripts/link.sh"
	chmod -R a+rX "$TMP/s/unnamed"
	ctl skill check "$TMP/s/unnamed"
	expect "check: an unnamed script in scripts/" 0 \
		"unnamed/scripts/extra.py: warning: not named by the instructions, so it is no command"
	if [ "$RC" != 0 ] || printf '%s\n' "$OUT" | grep -Eq 'data.json|_helper|link.sh|scripts/sub|named.sh: warning'; then
		notok "check: only unnamed scripts are warned of" "$OUT"
	else
		ok "check: only unnamed scripts are warned of"
	fi
	ctl skill check --json "$TMP/s/unnamed"
	if [ "$RC" = 0 ] && printf '%s' "$OUT" | jq -e '.valid == true and
	    (.warnings | length) == 1 and (.warnings[0] | startswith("scripts/extra.py: "))' \
	    >/dev/null; then
		ok "check --json lists the warnings"
	else
		notok "check --json lists the warnings" "exit $RC: $OUT"
	fi
	# With a commands block, only what it declares runs: no such warning
	printf 'commands:\n  run: scripts/named.sh\n' >"$TMP/s/unnamed/skill.yaml"
	chmod 755 "$TMP/s/unnamed/scripts/named.sh"
	ctl skill check "$TMP/s/unnamed"
	expect "check: a commands block, no unnamed-script warning" 0 'run +scripts/named.sh'
	no_warning "check: a commands block, no warning"
}

# The version every program reports: the Makefile's VERSION.
VERSION=$(sed -n 's/^VERSION = //p' "$ROOT/Makefile")

# help_ok NAME: the last run exited 0 with a usage line on stdout and
# nothing on stderr.
help_ok() {
	if [ "$RC" != 0 ] || [ -n "$ERR" ] || ! grep -q '^usage: ' "$TMP/out"; then
		notok "$1" "exit $RC; out: ${OUT:0:200} err: ${ERR:0:300}"
	else
		ok "$1"
	fi
}

# run_prog PROG ARGS...: as ctl, for any program of SB_BIN (stdin empty).
run_prog() {
	local p=$1
	shift
	timeout 10 "$BIN/$p" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
	RC=$?
	OUT=$(cat "$TMP/out")
	ERR=$(cat "$TMP/err")
}

# Every program answers -h, --help, -V and --version, whoever runs it;
# a helper the master starts says so when run by hand, never silently.
test_programs_help() {
	local p a
	for p in skillbrokerd skillctl skillbroker-mcp skillbroker-broker \
	    skillbroker-policyd skillbroker-auditd skillbroker-netproxy \
	    skillbroker-worker; do
		if [ ! -x "$BIN/$p" ]; then
			notok "$p: -h and -V" "no $BIN/$p"
			continue
		fi
		for a in -h --help; do
			run_prog "$p" "$a"
			help_ok "$p $a: usage on stdout, exit 0"
		done
		for a in -V --version; do
			run_prog "$p" "$a"
			if [ "$RC" = 0 ] && [ -z "$ERR" ] &&
			    printf '%s\n' "$OUT" | grep -Eq "^$p $VERSION( |\$)"; then
				ok "$p $a: \"$p $VERSION\""
			else
				notok "$p $a: \"$p $VERSION\"" "exit $RC; out: ${OUT:0:200} err: ${ERR:0:200}"
			fi
		done
		case $p in skillbroker-*) ;; *) continue ;; esac
		[ "$p" = skillbroker-mcp ] && continue
		run_prog "$p"
		if [ "$RC" = 2 ] && printf '%s\n' "$ERR" | grep -q 'started by skillbrokerd'; then
			ok "$p run by hand: says skillbrokerd starts it, exit 2"
		else
			notok "$p run by hand: says skillbrokerd starts it, exit 2" "exit $RC; err: ${ERR:0:200}"
		fi
	done
	run_prog skillbrokerd -q
	expect "skillbrokerd -q: a usage error, exit 2" 2 'usage: skillbrokerd'
	run_prog skillbrokerd
	expect "skillbrokerd without -f: exit 2, says -f is needed" 2 '-f CONFIG is required'
}

# Every skillctl command answers -h and --help with the usage, on stdout,
# exit 0, before it would read an operand or the socket.
test_commands_help() {
	local c a
	for c in invoke authorize skills info hello reload cancel last-result \
	    session-end put get ls rm approvals approve stats policy \
	    "policy check" "policy check -f" skill "skill check" "skill init" \
	    audit "audit verify" "audit verify --head 1:x" help; do
		for a in -h --help; do
			# shellcheck disable=SC2086 # c is words on purpose
			ctl -s "$TMP/no-daemon.sock" $c $a
			help_ok "skillctl $c $a: usage, exit 0"
		done
	done
	ctl policy check -h
	if printf '%s\n%s\n' "$OUT" "$ERR" | grep -Eq -- '(^|[ /])-h: |policy OK'; then
		notok "policy check -h reads no directory \"-h\"" "${OUT:0:200}"
	else
		ok "policy check -h reads no directory \"-h\""
	fi
	ctl policy check -q
	expect "policy check -q: unknown option, exit 2" 2 'unknown option "-q"'
	ctl --bogus
	expect "skillctl --bogus: unknown option, exit 2" 2 'unknown option "--bogus"'
	ctl audit verify
	expect "audit verify without FILE: says so, exit 2" 2 'needs a FILE'
	# Outside a source tree, the default etc/policy.d is not there
	(cd "$TMP" && ctl policy check && printf '%s\n' "$RC" >"$TMP/rc" &&
	    printf '%s\n' "$ERR" >"$TMP/err2")
	RC=$(cat "$TMP/rc") ERR=$(cat "$TMP/err2") OUT=""
	expect "policy check with no operand, no etc/policy.d: says what to give" 2 \
	    'no POLICY_DIR given, and no etc/policy.d here.*-f CONFIG'
}

# A client that finds no daemon is told the socket it tried, where that
# path came from, that the daemon may not be running and how to start it
# or name another socket.
test_cannot_connect() {
	local hint='is skillbrokerd running\? Start it as root: skillbrokerd -f CONFIG'
	ctl -s "$TMP/none.sock" hello
	expect "no daemon: exit 4" 4 || return
	expect "no daemon: names the socket" 4 "cannot connect to $TMP/none.sock"
	expect "no daemon: how to start it" 4 "$hint"
	expect "no daemon: -s named the socket" 4 "given with -s; -s SOCKET or .SKILLBROKER_SOCKET names another"
	SKILLBROKER_SOCKET=$TMP/env.sock ctl invoke echo
	expect "no daemon: \$SKILLBROKER_SOCKET named it" 4 "$TMP/env.sock is the socket .SKILLBROKER_SOCKET names"
	ctl -s "$TMP/none.sock" ls
	expect "no daemon: ls says the same" 4 "$hint"
}

# The shipped skills pass, without a warning.
test_shipped() {
	local d
	for d in "$ROOT"/skills/*/; do
		d=${d%/}
		ctl skill check "$d"
		expect "check: shipped skill ${d##*/}" 0 "skill ${d##*/}: valid"
		no_warning "check: shipped skill ${d##*/} has no warning"
	done
}

if [ ! -x "$CTL" ]; then
	echo "not ok - setup: no $CTL (make first)"
	echo "skillcli: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
test_usage
test_programs_help
test_commands_help
test_cannot_connect
test_init
test_init_refuses
test_invalid
test_warnings
test_shipped
echo "skillcli: $PASS passed, $FAIL failed, $SKIP skipped"
[ "$FAIL" = 0 ]
