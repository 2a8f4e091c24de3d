#!/bin/bash
# Policy integration tests: the real daemon with admin policy files, one
# test per decision the policy language can make, plus reload.
#   SB_BIN=<dir of skillbrokerd, skillctl, ...> bash tests/integration/policy.sh [TEST...]
# Needs root; workers use a slot of uids in 64100-64149. The plumbing
# (config, daemon, runner, cleanup) is tests/lib/daemon.sh; KEEP_TMP=1
# keeps the temp dir.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/daemon.sh"
sb_init policy
claim_uids 64100 5 10 policy
sb_tmpdir sb-policy
TMP=$SB_TMP

LONG_NAME=$(printf 'x%.0s' $(seq 65))

# A skill: NAME CMD SCRIPT [skill.yaml body]
mkskill() {
	mkdir -p "$TMP/skills/$1/bin"
	printf -- '---\nname: %s\ndescription: test skill %s\n---\n' "$1" "$1" \
		>"$TMP/skills/$1/SKILL.md"
	printf '#!/bin/sh\n%s\n' "$3" >"$TMP/skills/$1/bin/$2"
	printf 'commands:\n  %s: bin/%s\n%s\n' "$2" "$2" "${4:-}" \
		>"$TMP/skills/$1/skill.yaml"
	chmod -R a+rX "$TMP/skills"
	chmod 755 "$TMP/skills/$1/bin/$2"
}

setup() {
	mkskill greet run 'echo "hi $*"'
	mkskill secret run 'echo secret'
	mkskill wide run 'echo wide' 'permissions:
  fs: { write: ["$DATA_DIR/**"] }
  network: { allow: ["api.example.com:443"] }'
	mkskill asker run 'echo asked'
	mkskill envy run 'echo "TZ=${TZ:-unset} FOO=${FOO:-unset}"' 'permissions:
  env: [TZ]'
	mkskill limited run 'echo limited' 'limits: { timeout_ms: 700, memory_mb: 64 }'
	mkskill disabled run 'echo never'
	# Published-style frontmatter: our block inline, Claude's tools
	mkdir -p "$TMP/skills/tooly/bin"
	cat >"$TMP/skills/tooly/SKILL.md" <<-'M'
	---
	name: tooly
	description: A skill whose frontmatter needs a word.
	allowed-tools: Bash(python3:*) Bash(git status) Read Write Task
	commands:
	  run: bin/run
	---
	M
	printf '#!/bin/sh\necho tooly\n' >"$TMP/skills/tooly/bin/run"
	chmod 755 "$TMP/skills/tooly/bin/run"
	# Descriptions at the spec's bound, in characters of 2 and 4 bytes
	mkskill accents run 'echo accents'
	mkskill wide-chars run 'echo wide'
	/usr/bin/python3 -c 'import sys
for d, c, n in (("accents", "\u00e9", 600), ("wide-chars", "\U0001F600", 1024)):
    open(sys.argv[1] + "/" + d + "/SKILL.md", "w").write(
        "---\nname: %s\ndescription: %s\n---\n" % (d, c * n))' "$TMP/skills"
	chmod -R a+rX "$TMP/skills"
	mkdir -p "$TMP/policy.d"
	cat >"$TMP/policy.d/00-principals.yaml" <<-'P'
	principals:
	  admins: { uids: [0], admin: true }
	  nobodies: { uids: [65534] }
	P
	cat >"$TMP/policy.d/10-rules.yaml" <<-'P'
	skills:
	  enabled: [greet, secret, wide, asker, envy, limited]
	rules:
	  - name: all-greet
	    principals: [admins, nobodies]
	    skills: [greet]
	    action: allow
	    rate: { per_minute: 1, burst: 2 }
	  - name: admins-run-most
	    principals: [admins]
	    skills: ["*"]
	    action: allow
	    ceiling:
	      network: { allow: ["*.example.com:443"] }
	      env: [TZ, FOO]
	    limits: { timeout_ms: 5000, memory_mb: 256 }
	  - name: no-secrets
	    principals: ["*"]
	    skills: [secret]
	    action: deny
	  - name: ask-first
	    principals: [admins]
	    skills: [asker]
	    action: ask
	P
	sb_config "$TMP/sb.yaml"
	AUDIT=$SB_AUDIT
}

# ctl ARGS: run skillctl as root; OUT = JSON reply, RC = exit status
ctl() {
	local verb=$1; shift
	sb_ctl "$verb" --json "$@"
}
ctl_as_nobody() {
	local verb=$1; shift
	sb_ctl_as 65534 "$verb" --json "$@"
}
j() { sb_j "$@"; }
expect() { sb_eq "$@"; }
contains() { sb_contains "$@"; }
# The number of audit records of ACTION.
nrec() { grep -c "\"action\":\"$1\"" "$AUDIT" 2>/dev/null; }
# Wait until there are more than N records of ACTION.
more_recs() { [ "$(nrec "$1")" -gt "$2" ]; }

t_allowed_rule_named() {
	ctl invoke greet --phase execution -- you
	expect ok "$(j .ok)" true && expect out "$(j .output.stdout)" "hi you" &&
	contains rule "$(j '.policy.matched_rules[0]')" "10-rules.yaml:4 all-greet"
}
t_not_enabled() {
	ctl invoke disabled --phase execution
	expect type "$(j .error.type)" skill_not_enabled && expect rc "$RC" 3
}
t_deny_beats_allow() {
	ctl invoke secret --phase execution
	expect type "$(j .error.type)" permission_denied &&
	contains rule "$(j '.policy.matched_rules[0]')" "no-secrets" &&
	contains reason "$(j .policy.decision_reason)" "10-rules.yaml:"
}
t_default_deny() {
	ctl_as_nobody invoke limited --phase execution
	expect type "$(j .error.type)" permission_denied &&
	expect rule "$(j '.policy.matched_rules[0]')" "builtin:default-deny"
}
t_ceiling_names_missing() {
	ctl invoke wide --phase execution
	expect type "$(j .error.type)" permission_denied &&
	contains reason "$(j .policy.decision_reason)" 'fs.write $DATA_DIR/**' &&
	case "$(j .policy.decision_reason)" in *api.example.com*) WHY="covered item named"; false;; esac
}
# ask: a client that does not answer approvals (skillctl without a
# terminal) is denied at once; authorize says what an invoke would be
# asked about (tests/integration/run.sh t20-t23 answer them).
t_ask_is_approval_denied() {
	ctl invoke asker --phase execution
	expect type "$(j .error.type)" approval_denied &&
	contains why "$(j .error.message)" "does not answer approval requests" &&
	contains rule "$(j '.policy.matched_rules[0]')" "ask-first" || return 1
	ctl authorize asker --phase execution
	expect authorize "$(j .error.type)" approval_denied &&
	contains reason "$(j .policy.decision_reason)" "requires approval" &&
	expect "authorize: what would be allowed" "$(j '.effective.limits | type')" object
}
t_rate_limited() {
	ctl_as_nobody invoke greet --phase execution -- 1
	expect first "$(j .ok)" true || return 1
	ctl_as_nobody invoke greet --phase execution -- 2
	expect second "$(j .ok)" true || return 1
	ctl_as_nobody invoke greet --phase execution -- 3
	expect third "$(j .error.type)" rate_limited
}
t_authorize_effective() {
	ctl authorize limited --phase execution --timeout 60000
	expect ok "$(j .ok)" true && expect timeout "$(j .effective.limits.timeout_ms)" 700 &&
	expect mem "$(j .effective.limits.memory_mb)" 64 &&
	[ "$(grep -c '"action":"worker.started"' "$AUDIT" 2>/dev/null)" = \
	  "$(grep -c '"action":"worker.started"' "$AUDIT" 2>/dev/null)" ]
}
t_env_allowlist() {
	ctl invoke envy --phase execution --env TZ=UTC --env FOO=bar
	expect out "$(j .output.stdout)" "TZ=UTC FOO=unset"
}
t_reload_admin_only() {
	ctl_as_nobody reload
	expect nobody "$(j .error.type)" permission_denied || return 1
	ctl reload
	expect admin "$(j .ok)" true
}
t_sighup_broken_file_keeps_old() {
	cp "$TMP/policy.d/10-rules.yaml" "$TMP/rules.bak"
	local line=$(($(wc -l <"$TMP/rules.bak") + 1))
	printf '  - name: broken\n    action: allow\n' >>"$TMP/policy.d/10-rules.yaml"
	# policyd audits the outcome of a reload once it is in force
	local failed=$(nrec policy.reload_failed) reloaded
	kill -HUP "$SB_DPID"
	sb_wait_for 5 "no policy.reload_failed record after SIGHUP" \
	    more_recs policy.reload_failed "$failed" || return 1
	ctl invoke greet --phase execution -- still
	expect still-allowed "$(j .ok)" true || return 1
	grep '"action":"policy.reload_failed"' "$AUDIT" | tail -1 | grep -q "10-rules.yaml:$line: rule" ||
		{ WHY="no policy.reload_failed with file:line in the audit log"; return 1; }
	# a good change takes effect on the next SIGHUP
	cp "$TMP/rules.bak" "$TMP/policy.d/10-rules.yaml"
	sed -i 's/skills: \[secret\]/skills: [secret, greet]/' "$TMP/policy.d/10-rules.yaml"
	reloaded=$(nrec policy.reloaded)
	kill -HUP "$SB_DPID"
	sb_wait_for 5 "no policy.reloaded record after SIGHUP" \
	    more_recs policy.reloaded "$reloaded" || return 1
	ctl invoke greet --phase execution -- now
	expect denied-after-reload "$(j .error.type)" permission_denied &&
	grep -q '"action":"policy.reloaded"' "$AUDIT" || { WHY="${WHY}; no policy.reloaded"; return 1; }
}
t_policy_check_cli() {
	"$SB_BIN/skillctl" policy check "$TMP/policy.d" "$TMP/skills" >/dev/null ||
		{ WHY="good policy rejected"; return 1; }
	mkdir -p "$TMP/bad.d"
	printf 'rules:\n  - name: x\n    principals: [ghost]\n    skills: [a]\n    action: allow\n' >"$TMP/bad.d/10.yaml"
	out=$("$SB_BIN/skillctl" policy check "$TMP/bad.d"); rc=$?
	expect rc "$rc" 1 && contains msg "$out" "10.yaml:2: rule \"x\": unknown principal"
}

# ---- hostile policy files and skill directories: each is refused with
# file:line, quickly, by skillctl policy check and by a reload, which
# keeps the old policy and never stalls the calls made meanwhile.

# attack KIND FILE: write one attack into FILE.
attack() {
	local i
	rm -f "$2"
	case $1 in
	fifo) mkfifo -m 644 "$2" ;;
	alias) # 1000 rules of 3 x 1024 names, from a few KB (at most 1024
		# rules in all)
		{
			printf 'rules:\n  - &r\n    name: bomb\n'
			printf '    principals: &pl [&n admins'
			for ((i = 1; i < 1024; i++)); do printf ', *n'; done
			printf ']\n    skills: *pl\n    commands: *pl\n    action: allow\n'
			for ((i = 1; i < 1000; i++)); do printf '  - *r\n'; done
		} >"$2" ;;
	nest) # 60,000 nested flow sequences
		{ printf 'rules: '; head -c 60000 /dev/zero | tr '\0' '['; echo; } >"$2" ;;
	second) # rules after a second document
		printf 'skills:\n  enabled: [greet]\n---\nrules:\n  - name: sneaky\n    principals: ["*"]\n    skills: ["*"]\n    action: allow\n' >"$2" ;;
	esac
	chmod a+r "$2"
}
# What each attack's refusal says, after the file's name.
attack_says() {
	case $1 in
	fifo) echo ": a FIFO, not a regular file" ;;
	alias) echo ":2: anchor" ;;
	nest) echo ":1: nested deeper than 32 levels" ;;
	second) echo ":3: a second YAML document" ;;
	esac
}
# A FIFO a reader still waits on (a policyd that opened it) is released
# (a non-blocking open for writing succeeds only if a reader waits),
# then removed.
unblock_rm() {
	local f
	for f in "$@"; do
		[ -p "$f" ] && dd if=/dev/null of="$f" oflag=nonblock \
		    conv=notrunc status=none 2>/dev/null
		rm -rf "$f"
	done
	return 0
}

t_hostile_policy_check() {
	local k d out rc t0 ms want
	for k in fifo alias nest second; do
		d=$TMP/check-$k.d
		mkdir -p "$d"
		cp "$TMP/policy.d/00-principals.yaml" "$d/"
		attack "$k" "$d/50-attack.yaml"
		want="$d/50-attack.yaml$(attack_says "$k")"
		t0=$(sb_now_ms)
		out=$(timeout 20 "$SB_BIN/skillctl" policy check "$d" 2>&1)
		rc=$?
		ms=$(($(sb_now_ms) - t0))
		unblock_rm "$d/50-attack.yaml"
		[ "$rc" = 1 ] || sb_fail "$k: policy check exited $rc"
		[ "$ms" -le 2000 ] || sb_fail "$k: policy check took $ms ms"
		contains "$k" "$out" "$want"
	done
	[ -z "$WHY" ]
}

# hostile_reload KIND: the attack in policy.d, then SIGHUP.
hostile_reload() {
	local f=$TMP/policy.d/50-attack.yaml failed t0 ms
	attack "$1" "$f"
	failed=$(nrec policy.reload_failed)
	kill -HUP "$SB_DPID"
	t0=$(sb_now_ms)
	SB_CTL_TIMEOUT=5 ctl invoke limited --phase execution
	ms=$(($(sb_now_ms) - t0))
	expect "call during the reload" "$(j .ok)" true
	[ "$ms" -le 2000 ] || sb_fail "a call during the reload took $ms ms"
	sb_wait_for 5 "no policy.reload_failed record after SIGHUP" \
	    more_recs policy.reload_failed "$failed" &&
	    contains "reload_failed" \
	    "$(grep '"action":"policy.reload_failed"' "$AUDIT" | tail -1)" \
	    "50-attack.yaml$(attack_says "$1")"
	unblock_rm "$f"
	# the old policy stands: the call still succeeds, greet stays denied
	SB_CTL_TIMEOUT=5 ctl invoke limited --phase execution
	expect "call after the reload" "$(j .ok)" true
	[ -z "$WHY" ]
}
t_reload_rejects_fifo() { hostile_reload fifo; }
t_reload_rejects_alias_bomb() { hostile_reload alias; }
t_reload_rejects_deep_nesting() { hostile_reload nest; }
t_reload_rejects_second_document() { hostile_reload second; }

# Skills whose skill.yaml is a FIFO, or nested 60,000 deep: the registry
# marks them invalid, saying why, and the other skills keep working.
t_hostile_skill_dirs() {
	local s reloaded err out
	for s in fifo-skill deep-skill; do
		mkskill "$s" run 'echo never'
		rm -f "$TMP/skills/$s/skill.yaml"
	done
	mkfifo -m 644 "$TMP/skills/fifo-skill/skill.yaml"
	attack nest "$TMP/skills/deep-skill/skill.yaml"
	reloaded=$(nrec policy.reloaded)
	kill -HUP "$SB_DPID"
	SB_CTL_TIMEOUT=5 ctl invoke limited --phase execution
	expect "call during the reload" "$(j .ok)" true
	if sb_wait_for 5 "no policy.reloaded record after SIGHUP" \
	    more_recs policy.reloaded "$reloaded"; then
		SB_CTL_TIMEOUT=5 ctl skills
		err=$(j '.skills[] | select(.name == "fifo-skill") | .error')
		contains fifo-skill "$err" "skill.yaml: a FIFO, not a regular file"
		err=$(j '.skills[] | select(.name == "deep-skill") | .error')
		contains deep-skill "$err" "skill.yaml:1: nested deeper than 32 levels"
		expect "valid greet" \
		    "$(j '.skills[] | select(.name == "greet") | .valid')" true
	fi
	# skillctl policy check says the same, quickly
	out=$(timeout 20 "$SB_BIN/skillctl" policy check "$TMP/policy.d" "$TMP/skills" 2>&1)
	contains "policy check" "$out" "skill fifo-skill: skill.yaml: a FIFO"
	unblock_rm "$TMP/skills/fifo-skill/skill.yaml"
	SB_CTL_TIMEOUT=5 ctl invoke limited --phase execution
	expect "call after the reload" "$(j .ok)" true
	rm -rf "$TMP/skills/fifo-skill" "$TMP/skills/deep-skill"
	[ -z "$WHY" ]
}

# A skill that loads with warnings (our block inline in SKILL.md, an
# allowed-tools entry with no mapping, one mapped wider than its rule)
# shows them in skillctl skills and skillctl policy check; none is an
# error, and the spec's longest descriptions come through whole.
t_skill_warnings() {
	local out rc
	ctl skills
	expect "tooly valid" \
	    "$(j '.skills[] | select(.name == "tooly") | .valid')" true
	expect "tooly warnings" \
	    "$(j '.skills[] | select(.name == "tooly") | .warnings | length')" 3
	contains "inline blocks" \
	    "$(j '.skills[] | select(.name == "tooly") | .warnings[0]')" \
	    "SKILL.md:5: Unexpected fields in frontmatter: commands. Only ['allowed-tools',"
	contains "git status" \
	    "$(j '.skills[] | select(.name == "tooly") | .warnings[1]')" \
	    'SKILL.md:4: allowed-tools "Bash(git status)": mapped to exec git'
	contains "Task" \
	    "$(j '.skills[] | select(.name == "tooly") | .warnings[2]')" \
	    'SKILL.md:4: allowed-tools "Task": no mapping'
	expect "greet has none" \
	    "$(j '.skills[] | select(.name == "greet") | .warnings')" null
	expect "600 x e-acute" "$(j '.skills[] | select(.name == "accents") |
	    [.valid, (.description | length)] | @tsv')" "$(printf 'true\t600')"
	expect "1024 x 4 bytes" "$(j '.skills[] | select(.name == "wide-chars") |
	    [.valid, (.description | length)] | @tsv')" "$(printf 'true\t1024')"
	sb_ctl skills
	contains "skillctl skills" "$(printf '%s\n' "$OUT" | grep '^tooly')" \
	    'WARNING: SKILL.md:4: allowed-tools "Task": no mapping'
	out=$("$SB_BIN/skillctl" policy check "$TMP/policy.d" "$TMP/skills" 2>&1)
	rc=$?
	expect "policy check exit" "$rc" 0
	contains "policy check" "$out" \
	    'warning: skill tooly: SKILL.md:4: allowed-tools "Bash(git status)": mapped to exec git'
	contains "policy check" "$out" \
	    "warning: skill tooly: SKILL.md:5: Unexpected fields in frontmatter: commands."
	[ -z "$WHY" ]
}

# A skill directory named longer than a name may be (65 characters, the
# spec's limit plus one): invalid, listed under its directory's name cut
# to 64 bytes, and the skills answer still decodes (it once ended
# policyd at every skills request).
t_skill_long_name() {
	local reloaded out rc
	mkskill "$LONG_NAME" run 'echo long'
	reloaded=$(nrec policy.reloaded)
	kill -HUP "$SB_DPID"
	if sb_wait_for 5 "no policy.reloaded record after SIGHUP" \
	    more_recs policy.reloaded "$reloaded"; then
		ctl skills
		expect "skills exit status" "$RC" 0
		contains "65 characters" "$(j '.skills[] |
		    select(.name == "'"${LONG_NAME:1}"'") | .error')" \
		    "Skill name '$LONG_NAME' exceeds 64 character limit (65 chars)"
		ctl invoke limited --phase execution
		expect "policyd still answers" "$(j .output.stdout)" "limited"
	fi
	out=$("$SB_BIN/skillctl" policy check "$TMP/policy.d" "$TMP/skills" 2>&1)
	rc=$?
	expect "policy check exit" "$rc" 1
	contains "policy check" "$out" "skill $LONG_NAME: SKILL.md:2: Skill name"
	rm -rf "${TMP:?}/skills/$LONG_NAME"
	[ -z "$WHY" ]
}

# Last: the daemon outlived every test.
# A denied authorize prints the decision once: on stdout, with the rules
# that matched, and no second copy of it on stderr; exit 3.
t_authorize_denial_once() {
	local out err
	out=$(timeout 20 "$SB_BIN/skillctl" -s "$SB_SOCK" authorize secret \
	    --phase execution 2>"$TMP/authz.err" </dev/null)
	RC=$? err=$(cat "$TMP/authz.err")
	expect rc "$RC" 3 && contains stdout "$out" "denied (permission_denied): " &&
	contains stdout "$out" "matched: 10-rules.yaml:" &&
	expect "denied lines" "$(printf '%s\n' "$out" | grep -c denied)" 1 &&
	expect stderr "$err" ""
}

# invoke without --stdin sends no stdin and says so when its stdin held
# data; with --stdin, or with </dev/null, it says nothing.
t_piped_stdin_said() {
	local msg='stdin holds data that was not sent to the skill: --stdin sends it'
	echo data | timeout 20 "$SB_BIN/skillctl" -s "$SB_SOCK" invoke limited \
	    --phase execution >"$TMP/pipe.out" 2>"$TMP/pipe.err"
	RC=$?
	expect "piped: rc" "$RC" 0 && expect "piped: stdout" "$(cat "$TMP/pipe.out")" limited &&
	contains "piped: warned" "$(cat "$TMP/pipe.err")" "$msg" || return 1
	echo data >"$TMP/pipe.in"
	timeout 20 "$SB_BIN/skillctl" -s "$SB_SOCK" invoke limited \
	    --phase execution <"$TMP/pipe.in" >/dev/null 2>"$TMP/pipe.err"
	contains "a file: warned" "$(cat "$TMP/pipe.err")" "$msg" || return 1
	echo data | timeout 20 "$SB_BIN/skillctl" -s "$SB_SOCK" invoke limited \
	    --phase execution --stdin >/dev/null 2>"$TMP/pipe.err"
	expect "--stdin: no warning" "$(cat "$TMP/pipe.err")" "" || return 1
	timeout 20 "$SB_BIN/skillctl" -s "$SB_SOCK" invoke limited \
	    --phase execution </dev/null >/dev/null 2>"$TMP/pipe.err"
	expect "/dev/null: no warning" "$(cat "$TMP/pipe.err")" ""
}

t_daemon_still_alive() {
	kill -0 "$SB_DPID" 2>/dev/null || sb_fail "the daemon died"
}

SB_TESTS="t_allowed_rule_named t_not_enabled t_deny_beats_allow t_default_deny
t_ceiling_names_missing t_ask_is_approval_denied t_rate_limited
t_authorize_effective t_env_allowlist t_reload_admin_only
t_sighup_broken_file_keeps_old t_policy_check_cli t_hostile_policy_check
t_reload_rejects_fifo t_reload_rejects_alias_bomb t_reload_rejects_deep_nesting
t_reload_rejects_second_document t_hostile_skill_dirs t_skill_warnings
t_skill_long_name t_authorize_denial_once t_piped_stdin_said t_daemon_still_alive"

setup
sb_start || exit 1
sb_run_tests "$@"
