#!/bin/bash
# Agent Skills as they are published, run unchanged by the real daemon:
# no commands block, scripts without "#!" and without an execute bit,
# found only where the instructions name them (docs/skills.md "Commands
# from the instructions"). The shipped examples skills/csv-report and
# skills/text-tools end to end (session files in, the script's report
# out), fixture skills written here for each rule of how a referenced
# script becomes a command and how it runs, and the spec's edge cases of
# names and descriptions (docs/skills.md), through skillctl skills,
# info, invoke and policy check.
#
#   SB_BIN=<dir of skillbrokerd, skillctl, ...> bash tests/integration/published.sh [TEST...]
#
# Needs root, jq and /usr/bin/python3 (the skills' interpreter). Workers
# use a slot of 10 uids in 64900-64949 (tests/lib/uids.sh). KEEP_TMP=1
# keeps the temp dir (config, daemon.log, audit log, the fixtures under
# skills/); SB_VERBOSE=1 prints each test's duration. The plumbing
# (config, daemon, runner, cleanup) is tests/lib/daemon.sh. Prints "ok -
# NAME" / "not ok - NAME: why" / "skip - NAME: why" per test, then
# "published: N passed, M failed, K skipped"; exits 1 if any failed.
# shellcheck disable=SC2016 # fixtures are written as literal text
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
. "$ROOT/tests/lib/daemon.sh"
sb_init published
[ -x /usr/bin/python3 ] ||
    { echo "published: /usr/bin/python3 missing; run scripts/install-deps" >&2; exit 2; }
claim_uids 64900 5 10 published
sb_tmpdir sb-published
TMP=$SB_TMP
sb_config "$TMP/sb.yaml"
# Tests that show a daemon bug not fixed yet: reported as "not ok ... #
# TODO" and not counted as failures (SB_STRICT=1 counts them).
# p06b: policyd answers skill_info only for a skill the caller may run
# some command of, so a skill of instructions only (no command) is
# never served, though docs/skills.md says it is.
SB_KNOWN_BUGS=""

# ---------------------------------------------------------------- helpers

# fx_file SKILL PATH [MODE]: stdin becomes the file PATH of the skill
# directory SKILL under the suite's skills dir (mode 644: as a published
# skill's files come out of an archive).
fx_file() {
	local f=$TMP/skills/$1/$2
	mkdir -p "$(dirname "$f")"
	cat >"$f"
	chmod "${3:-644}" "$f"
}

# fx_md SKILL [DESCRIPTION]: a SKILL.md with only name and description
# in its frontmatter, and stdin as its instructions.
fx_md() {
	{
		printf -- '---\nname: %s\ndescription: %s\n---\n' "$1" \
		    "${2:-Fixture skill $1 of the published suite.}"
		cat
	} | fx_file "$1" SKILL.md
}

# fx_run SKILL: an explicit command run (skill.yaml) with an executable
# script, so that a fixture of the spec's edge cases is valid or
# invalid for its frontmatter alone.
fx_run() {
	printf 'commands:\n  run: scripts/run.sh\n' | fx_file "$1" skill.yaml
	printf '#!/bin/sh\necho run\n' | fx_file "$1" scripts/run.sh 755
}

# The skills answer, as JSON, in SKILLS.
load_skills() {
	sb_ctl skills --json
	SKILLS=$OUT
	[ "$RC" = 0 ] || sb_fail "skillctl skills --json exited $RC: $(head -c 300 "$SB_DIR/ctl.err")"
}

# sk NAME JQ: JQ (jq -r) on the entry of skill NAME in SKILLS; nothing
# when there is none.
sk() {
	printf '%s' "$SKILLS" |
	    jq -r --arg n "$1" ".skills[]? | select(.name == \$n) | $2" 2>/dev/null
}

# is_valid NAME CMD,CMD...: NAME is listed valid, with exactly these
# commands in this order (none: "").
is_valid() {
	sb_eq "skills: $1" "$(sk "$1" '"\(.valid) [\(.commands | join(","))] \(.error // "")"')" \
	    "true [$2] "
}

# is_invalid NAME PART: NAME is listed invalid, and its error holds PART.
is_invalid() {
	sb_eq "skills: $1: valid" "$(sk "$1" .valid)" false &&
	    sb_contains "skills: $1: error" "$(sk "$1" '.error // ""')" "$2"
}

# has_warning NAME PART: one of NAME's warnings holds PART.
has_warning() {
	sb_contains "skills: $1: warnings" "$(sk "$1" '.warnings // [] | join(" | ")')" "$2"
}

# check_alone SKILL: skillctl policy check of the suite's policy and a
# skills dir that holds only a copy of SKILL: PC (its stdout and
# stderr), PC_RC.
check_alone() {
	local d=$TMP/alone/$1
	rm -rf "$d"
	mkdir -p "$d"
	cp -a "$TMP/skills/$1" "$d/"
	PC=$(timeout 20 "$SB_BIN/skillctl" policy check "$TMP/policy.d" "$d" 2>&1)
	PC_RC=$?
}

# check_rejects SKILL PART: policy check exits 1 and says PART of SKILL.
check_rejects() {
	check_alone "$1"
	sb_eq "policy check $1: status" "$PC_RC" 1
	sb_contains "policy check $1" "$PC" "skill $1: "
	sb_contains "policy check $1" "$PC" "$2"
}

# check_accepts SKILL: policy check exits 0 for SKILL.
check_accepts() {
	check_alone "$1"
	sb_eq "policy check $1: status ($(sb_short "$PC"))" "$PC_RC" 0
}

# call SKILL COMMAND SESSION [ARGS...]: invoke in phase execution, as
# JSON: OUT, RC. CALL_STDIN names a file for --stdin-file.
CALL_STDIN=""
call() {
	local skill=$1 cmd=$2 sess=$3
	shift 3
	sb_ctl invoke "$skill" "$cmd" --phase execution --session "$sess" \
	    ${CALL_STDIN:+--stdin-file "$CALL_STDIN"} --json -- "$@"
}

# ran DESC EXIT STDOUT: the call in OUT ran, exited EXIT and printed
# STDOUT (without its last newline).
ran() {
	local got
	got=$(sb_j '"\(.ok) \(.effects.process.exit_code)"')
	if [ "$got" != "true $2" ]; then
		sb_fail "$1: got '$got' ($(sb_j '"\(.error.type // "") \(.error.message // "")
	    stderr: \(.output.stderr // "")"' | head -c 400)), want 'true $2'"
		return 1
	fi
	sb_eq "$1: stdout" "$(sb_j .output.stdout)" "$3"
}

# refused DESC TYPE [PART]: the call in OUT was refused with an error
# of TYPE, whose message holds PART.
refused() {
	sb_eq "$1" "$(sb_j '"\(.ok) \(.error.type)"')" "false $2" || return 1
	[ -z "${3:-}" ] || sb_contains "$1: message" "$(sb_j '.error.message')" "$3"
}

# ------------------------------------------------------------ the fixtures

# The shipped examples and the files skill as they are in the tree, the
# fixtures of each test, and the policy.
setup_fixtures() {
	mkdir -p "$TMP/skills" "$TMP/policy.d"
	cp -R "$ROOT/skills/csv-report" "$ROOT/skills/text-tools" \
	    "$ROOT/skills/files" "$TMP/skills/"
	fx_instructions_only
	fx_missing_script
	fx_spellings
	fx_named_md
	fx_explicit
	fx_python
	fx_cwd
	fx_interpreters
	fx_unknown_extension
	fx_globbed
	fx_exec
	fx_spec
	chmod -R u+rwX,go+rX,go-w "$TMP/skills"
	# Every skill is enabled; globbed is allowed only by a command glob.
	cat >"$TMP/policy.d/10-published.yaml" <<-'EOF'
	skills:
	  enabled: ["*"]
	rules:
	  - name: published-allow
	    principals: ["*"]
	    skills: [files, csv-report, text-tools, "fx-*"]
	    ceiling: { exec: ["*"] }
	    action: allow
	  - name: python-scripts-only
	    principals: ["*"]
	    skills: [globbed]
	    commands: ["scripts/*.py"]
	    action: allow
	EOF
}

# A skill of instructions only: it names a reference, no script.
fx_instructions_only() {
	fx_md fx-prose "Answers in the house style. Use when writing for the blog." <<-'EOF'
	# House style

	Write short sentences. Prefer the active voice.

	The tone for each audience is in references/tone.md.
	EOF
	printf '# Tone\n\nFriendly, never chummy.\n' | fx_file fx-prose references/tone.md
}

# One referenced script exists, the other does not.
fx_missing_script() {
	fx_md fx-missing <<-'EOF'
	First run `python3 scripts/present.py`, then `python3 scripts/absent.py`.
	EOF
	printf 'print("present")\n' | fx_file fx-missing scripts/present.py
}

# The spellings of a path that instructions use, each naming a script
# of the skill dir; the commands are the paths, sorted by their bytes.
fx_spellings() {
	fx_md fx-spellings <<-'EOF'
	Steps, each with its own spelling of the same kind of path:

	1. `python3 {baseDir}/scripts/zeta.py`
	2. `bash $SKILL_DIR/scripts/Beta.sh`
	3. `sh ./scripts/alpha.sh`
	4. `python3 scripts/sub/gamma.py`
	5. `python3 scripts/zeta.py` again.
	EOF
	printf 'print("zeta")\n' | fx_file fx-spellings scripts/zeta.py
	printf 'echo Beta\n' | fx_file fx-spellings scripts/Beta.sh
	printf 'echo alpha\n' | fx_file fx-spellings scripts/alpha.sh
	printf 'print("gamma")\n' | fx_file fx-spellings scripts/sub/gamma.py
}

# A script named only in a markdown file that the instructions name is
# a command; one named only in a markdown file they do not name, or
# lying in scripts/ unnamed, is not; nor is a named script or markdown
# file that is a link leading out of the skill.
fx_named_md() {
	fx_md fx-named-md <<-'EOF'
	Read references/howto.md first, then references/outside.md.
	Never run scripts/out.sh.
	EOF
	printf 'Run `python3 scripts/leak.py`.\n' >"$TMP/outside.md"
	mkdir -p "$TMP/skills/fx-named-md/references"
	ln -s "$TMP/outside.md" "$TMP/skills/fx-named-md/references/outside.md"
	printf 'print("leak")\n' | fx_file fx-named-md scripts/leak.py
	mkdir -p "$TMP/skills/fx-named-md/scripts"
	ln -s /bin/sh "$TMP/skills/fx-named-md/scripts/out.sh"
	printf 'Run `python3 scripts/deep.py`.\n' | fx_file fx-named-md references/howto.md
	printf 'Run `python3 scripts/hidden.py`.\n' | fx_file fx-named-md references/unnamed.md
	printf 'print("deep")\n' | fx_file fx-named-md scripts/deep.py
	printf 'print("hidden")\n' | fx_file fx-named-md scripts/hidden.py
	printf 'print("lying")\n' | fx_file fx-named-md scripts/lying.py
}

# An explicit commands block wins over what the instructions name: in
# skill.yaml, and in the frontmatter.
fx_explicit() {
	local s
	for s in fx-explicit fx-explicit-fm; do
		printf 'print("a")\n' | fx_file "$s" scripts/a.py
		printf 'print("b")\n' | fx_file "$s" scripts/b.py
	done
	fx_md fx-explicit <<-'EOF'
	Run `python3 scripts/a.py`, or `python3 scripts/b.py`.
	EOF
	printf 'commands:\n  go:\n    path: scripts/b.py\n    description: Print b.\n' |
	    fx_file fx-explicit skill.yaml
	fx_file fx-explicit-fm SKILL.md <<-'EOF'
	---
	name: fx-explicit-fm
	description: Fixture skill fx-explicit-fm of the published suite.
	commands:
	  run: scripts/a.py
	---
	Run `python3 scripts/a.py`, or `python3 scripts/b.py`.
	EOF
}

# A .py without "#!" or an execute bit that reads a file of its own
# skill, found from __file__; a .sh with the bit but without "#!".
fx_python() {
	fx_md fx-python <<-'EOF'
	Run `python3 scripts/show.py`, or `scripts/plain.sh`.
	EOF
	printf 'echo "plain $0 $#"\n' | fx_file fx-python scripts/plain.sh 755
	fx_file fx-python scripts/show.py <<-'EOF'
	import os
	import sys
	from pathlib import Path

	here = Path(__file__).resolve()
	print((here.parent.parent / "assets" / "greeting.txt").read_text().strip())
	print(here)
	print("executable" if os.access(here, os.X_OK) else "not executable")
	print("python", sys.version_info[0], sys.argv[1:])
	EOF
	printf 'hello from assets\n' | fx_file fx-python assets/greeting.txt
}

# The same script as two commands: one in the work dir (the default),
# one in the skill dir.
fx_cwd() {
	fx_md fx-cwd <<-'EOF'
	Run `sh scripts/where.sh`.
	EOF
	fx_file fx-cwd skill.yaml <<-'EOF'
	commands:
	  here: scripts/where.sh
	  scripts/where.sh:
	    cwd: skill
	EOF
	fx_file fx-cwd scripts/where.sh <<-'EOF'
	printf 'cwd=%s SKILL_DIR=%s WORK_DIR=%s\n' "$(pwd)" "${SKILL_DIR-unset}" "${WORK_DIR-unset}"
	if { IFS= read -r m <marker.txt; } 2>/dev/null; then echo "marker=$m"; else echo "no marker"; fi
	if { echo probe >probe.txt; } 2>/dev/null; then echo writable; else echo read-only; fi
	EOF
	printf 'in the skill dir\n' | fx_file fx-cwd marker.txt
}

# An interpreter that no system has, ruby (when this host has none), and
# .shx, which only the daemon config of p17 maps (to sh): named by the
# instructions, and declared.
fx_interpreters() {
	fx_md fx-nointerp <<-'EOF'
	Run `scripts/x.py`.
	EOF
	printf 'commands:\n  run:\n    path: scripts/x.py\n    interpreter: sb-no-such-interp\n' |
	    fx_file fx-nointerp skill.yaml
	printf 'print("x")\n' | fx_file fx-nointerp scripts/x.py
	fx_md fx-ruby <<-'EOF'
	Run `ruby scripts/hello.rb`.
	EOF
	printf 'puts "hello"\n' | fx_file fx-ruby scripts/hello.rb
	fx_md fx-shx <<-'EOF'
	Run `scripts/hi.shx NAME`.
	EOF
	printf 'echo "hi $1 from $0"\n' | fx_file fx-shx scripts/hi.shx
	fx_md fx-shx-cmd <<-'EOF'
	Run it.
	EOF
	printf 'commands:\n  run: scripts/hi.shx\n' | fx_file fx-shx-cmd skill.yaml
	printf 'echo hi\n' | fx_file fx-shx-cmd scripts/hi.shx
}

# A file of an extension no interpreter is known for, without "#!":
# named by the instructions (not a script, so no command), and declared
# as a command (an error); beside them, a file without an extension
# that runs by itself: executable, with "#!".
fx_unknown_extension() {
	local s
	fx_md fx-foo <<-'EOF'
	Run `scripts/x.foo`.
	EOF
	fx_md fx-foo-cmd <<-'EOF'
	Run it.
	EOF
	printf 'commands:\n  run: scripts/x.foo\n' | fx_file fx-foo-cmd skill.yaml
	for s in fx-foo fx-foo-cmd; do
		printf 'echo foo\n' | fx_file "$s" scripts/x.foo
	done
	fx_md fx-direct <<-'EOF'
	Run `scripts/tool`.
	EOF
	printf '#!/bin/sh\necho "direct $0"\n' | fx_file fx-direct scripts/tool 755
}

# Commands named by their paths, for a policy whose command glob
# crosses a "/".
fx_globbed() {
	fx_md globbed <<-'EOF'
	Run `python3 scripts/a.py`, `python3 scripts/tools/b.py` or `sh scripts/c.sh`.
	EOF
	printf 'print("a")\n' | fx_file globbed scripts/a.py
	printf 'print("b")\n' | fx_file globbed scripts/tools/b.py
	printf 'echo c\n' | fx_file globbed scripts/c.sh
}

# A script whose interpreter is granted by itself, running a program
# it does not declare, and the same declared by allowed-tools.
fx_exec() {
	local s
	fx_md fx-undeclared <<-'EOF'
	Run `sh scripts/upper.sh`.
	EOF
	fx_file fx-declared SKILL.md <<-'EOF'
	---
	name: fx-declared
	description: Fixture skill fx-declared of the published suite.
	allowed-tools: Bash(tr:*)
	---
	Run `sh scripts/upper.sh`.
	EOF
	for s in fx-undeclared fx-declared; do
		printf 'echo abc | tr a-z A-Z || echo "tr refused: $?"\n' | fx_file "$s" scripts/upper.sh
	done
}

# The spec's edge cases of description and name (each with an explicit
# command, so that only its frontmatter decides).
fx_spec() {
	local d x
	d=$(printf 'é%.0s' $(seq 600))
	fx_md fx-desc-600e "$d" </dev/null
	d=$(printf '%01024d' 0 | tr 0 d)
	fx_md fx-desc-1024 "$d" </dev/null
	fx_md fx-desc-1025 "${d}d" </dev/null
	d=$(printf '\xf0\x9f\x98\x80%.0s' $(seq 1024))
	fx_md fx-desc-1024-4byte "$d" </dev/null
	printf -- '---\nname: Fx-Upper\ndescription: Upper case.\n---\n' | fx_file fx-upper SKILL.md
	printf -- '---\nname: fx--double\ndescription: Two hyphens.\n---\n' | fx_file fx-double SKILL.md
	printf -- '---\nname: -fx-lead\ndescription: A leading hyphen.\n---\n' | fx_file fx-lead SKILL.md
	printf -- '---\nname: fx-trail-\ndescription: A trailing hyphen.\n---\n' |
	    fx_file fx-trail SKILL.md
	printf -- '---\nname: fx-mismatch-y\ndescription: Another name.\n---\n' |
	    fx_file fx-mismatch-x SKILL.md
	for x in fx-desc-600e fx-desc-1024 fx-desc-1025 fx-desc-1024-4byte fx-upper \
	    fx-double fx-lead fx-trail fx-mismatch-x; do
		fx_run "$x"
	done
}

# ------------------------------------------------------------------ tests

# The shipped examples are published skills: no "#!", no execute bit,
# no commands block. They load valid and without a warning, each script
# their instructions name a command named by its path, sorted.
p01_shipped_load() {
	local f
	for f in csv-report/scripts/summarize.py text-tools/scripts/wordcount.py \
	    text-tools/scripts/slugify.sh; do
		[ ! -x "$ROOT/skills/$f" ] || sb_fail "skills/$f is executable"
		[ "$(head -c 2 "$ROOT/skills/$f")" != '#!' ] || sb_fail "skills/$f starts with #!"
	done
	! grep -qs '^commands:' "$ROOT"/skills/csv-report/* "$ROOT"/skills/text-tools/* ||
	    sb_fail "a shipped example declares commands"
	load_skills
	is_valid csv-report scripts/summarize.py
	is_valid text-tools scripts/slugify.sh,scripts/wordcount.py
	sb_eq "warnings" "$(sk csv-report '.warnings // [] | length')" 0
	sb_eq "warnings" "$(sk text-tools '.warnings // [] | length')" 0
	sb_contains "csv-report: description" "$(sk csv-report .description)" \
	    "Summarizes a CSV file as a Markdown report"
	sb_ctl skills
	sb_contains "skillctl skills" "$OUT" \
	    "$(printf 'text-tools\tscripts/slugify.sh,scripts/wordcount.py\t')"
	check_accepts csv-report
	check_accepts text-tools
}

# skill_info lists the same commands, serves the instructions, and the
# references.
p02_shipped_info() {
	local body
	sb_ctl info csv-report --references --json
	sb_eq "info csv-report: status" "$RC" 0
	sb_eq "info csv-report: commands" \
	    "$(sb_j '[.skill.commands[] | "\(.name):\(.allowed)"] | join(",")')" \
	    "scripts/summarize.py:true"
	body=$(awk 'n >= 2; /^---$/ { n++ }' "$ROOT/skills/csv-report/SKILL.md")
	sb_eq "info csv-report: body" "$(sb_j .skill.body)" "$body"
	sb_contains "info csv-report: body" "$(sb_j .skill.body)" \
	    "python3 scripts/summarize.py data.csv report.md"
	sb_eq "info csv-report: references" \
	    "$(sb_j '[.skill.references[] | "\(.path) \(.size_bytes)"] | join(",")')" \
	    "references/format.md $(wc -c <"$ROOT/skills/csv-report/references/format.md")"
	sb_contains "info csv-report: reference text" "$(sb_j '.skill.references[0].text')" \
	    "# Report format"
	sb_eq "info csv-report: frontmatter" "$(sb_j '.skill.frontmatter.metadata.version')" 1.0
	sb_ctl info text-tools --json
	sb_eq "info text-tools: commands" "$(sb_j '[.skill.commands[].name] | join(",")')" \
	    "scripts/slugify.sh,scripts/wordcount.py"
	sb_contains "info text-tools: body" "$(sb_j .skill.body)" "references/rules.md"
	sb_ctl info text-tools
	sb_contains "info text-tools: text" "$OUT" "$(printf 'scripts/wordcount.py\tallowed')"
}

# End to end as the instructions say: put data.csv into a session, run
# the script on it, get report.md back.
p03_csv_report() {
	local got=$TMP/report.md
	cat >"$TMP/data.csv" <<-'EOF'
	city,temp_c,rain_mm,note
	Oslo,4.5,12,cold
	Lima,19,0,
	"Cairo, EG",25.5,0.4,dry
	Oslo,-1,30,"snow, then rain"
	Quito,14,,
	EOF
	sb_ctl put --session csv "$TMP/data.csv" data.csv
	sb_eq "put data.csv" "$RC" 0
	call csv-report scripts/summarize.py csv data.csv report.md
	ran "summarize" 0 "wrote report.md: 5 rows, 4 columns"
	sb_eq "files_written" "$(sb_j '[.effects.files_written[].path] | join(",")')" /work/report.md
	rm -f "$got"
	sb_ctl get --session csv report.md "$got"
	sb_eq "get report.md" "$RC" 0
	sb_eq "report.md" "$(cat "$got" 2>/dev/null)" "# Summary of data.csv

- Rows: 5
- Columns: city, temp_c, rain_mm, note

| Column | Min | Max | Mean |
| --- | ---: | ---: | ---: |
| temp_c | -1 | 25.5 | 12.4 |
| rain_mm | 0 | 30 | 10.6 |"
	sb_ctl ls --session csv
	sb_eq "the session" "$(printf '%s\n' "$OUT" | awk '{ print $4 }' | sort | tr '\n' ' ')" \
	    "data.csv report.md "
}

# What is wrong with the input, said and exited 1, and no report.
p04_csv_errors() {
	printf 'a,b,c\n1,2,3\n4,5\n' >"$TMP/bad.csv"
	: >"$TMP/empty.csv"
	sb_ctl put --session csverr "$TMP/bad.csv" bad.csv
	sb_ctl put --session csverr "$TMP/empty.csv" empty.csv
	sb_eq "put empty.csv" "$RC" 0
	call csv-report scripts/summarize.py csverr bad.csv report.md
	ran "bad.csv" 1 ""
	sb_contains "bad.csv: stderr" "$(sb_j .output.stderr)" \
	    "summarize.py: bad.csv:3: 2 field(s), but the header has 3"
	sb_eq "bad.csv: files_written" "$(sb_j '.effects.files_written | length')" 0
	call csv-report scripts/summarize.py csverr empty.csv report.md
	ran "empty.csv" 1 ""
	sb_contains "empty.csv: stderr" "$(sb_j .output.stderr)" "empty.csv: the file is empty"
	call csv-report scripts/summarize.py csverr nosuch.csv report.md
	ran "nosuch.csv" 1 ""
	sb_contains "nosuch.csv: stderr" "$(sb_j .output.stderr)" \
	    "nosuch.csv: no such file in the working directory"
}

# text-tools: wordcount reads stdin, slugify its arguments (and runs tr,
# which its allowed-tools declares).
p05_text_tools() {
	printf 'Größe zählt\nnicht.\nlast line' >"$TMP/words.txt"
	CALL_STDIN=$TMP/words.txt call text-tools scripts/wordcount.py tt
	ran "wordcount" 0 '{"lines": 3, "words": 5, "chars": 28, "bytes": 31}'
	call text-tools scripts/slugify.sh tt "Hello, World!" "Über 2024"
	ran "slugify" 0 "hello-world-ber-2024"
	call text-tools scripts/slugify.sh tt "!!"
	ran "slugify of no letter" 2 ""
	sb_contains "slugify of no letter: stderr" "$(sb_j .output.stderr)" "no letter or digit"
}

# Instructions only: valid with no command, and a call has nothing to
# run, saying so.
p06_instructions_only() {
	load_skills
	is_valid fx-prose ""
	sb_eq "warnings" "$(sk fx-prose '.warnings // [] | length')" 0
	check_accepts fx-prose
	call fx-prose run pr
	refused "invoke" unknown_command 'skill "fx-prose" has no commands'
}

# ... and skill_info serves its instructions and references
# (docs/skills.md "Commands from the instructions").
p06b_instructions_only_info() {
	sb_ctl info fx-prose --json
	sb_eq "info: status ($(head -c 200 "$SB_DIR/ctl.err"))" "$RC" 0
	sb_eq "info: commands" "$(sb_j '.skill.commands | length')" 0
	sb_eq "info: body" "$(sb_j .skill.body)" "# House style

Write short sentences. Prefer the active voice.

The tone for each audience is in references/tone.md."
	sb_eq "info: references" "$(sb_j '[.skill.references[].path] | join(",")')" references/tone.md
}

# A referenced script that is not there: a warning that names it, and no
# such command; the one that is there runs.
p07_missing_script() {
	load_skills
	is_valid fx-missing scripts/present.py
	has_warning fx-missing scripts/absent.py
	check_alone fx-missing
	sb_eq "policy check: status" "$PC_RC" 0
	sb_contains "policy check" "$PC" "warning: skill fx-missing: "
	sb_contains "policy check" "$PC" scripts/absent.py
	call fx-missing scripts/absent.py miss
	refused "the absent script" unknown_command \
	    'skill "fx-missing" has no command "scripts/absent.py" (it has: scripts/present.py)'
	call fx-missing scripts/present.py miss
	ran "the present script" 0 present
}

# Each spelling of a path names the same kind of command; a path named
# twice is one command; names sort by their bytes ("B" before "a").
p08_spellings() {
	load_skills
	is_valid fx-spellings scripts/Beta.sh,scripts/alpha.sh,scripts/sub/gamma.py,scripts/zeta.py
	call fx-spellings scripts/sub/gamma.py sp
	ran "gamma" 0 gamma
	call fx-spellings scripts/Beta.sh sp
	ran "Beta" 0 Beta
}

# Found through a markdown file the instructions name, never by looking
# into a directory.
p09_named_md() {
	load_skills
	is_valid fx-named-md scripts/deep.py
	has_warning fx-named-md "references/outside.md resolves outside the skill directory"
	has_warning fx-named-md "scripts/out.sh resolves outside the skill directory"
	call fx-named-md scripts/deep.py md
	ran "deep" 0 deep
	call fx-named-md scripts/hidden.py md
	refused "a script named only by an unnamed file" unknown_command
	call fx-named-md scripts/lying.py md
	refused "a script named nowhere" unknown_command
	call fx-named-md scripts/leak.py md
	refused "a script named by a link out of the skill" unknown_command
}

# An explicit commands block wins: the scripts the instructions name are
# not commands too.
p10_explicit() {
	load_skills
	is_valid fx-explicit go
	is_valid fx-explicit-fm run
	call fx-explicit go ex
	ran "go" 0 b
	call fx-explicit scripts/a.py ex
	refused "a named script beside an explicit block" unknown_command
	call fx-explicit-fm scripts/b.py ex
	refused "the same, in the frontmatter" unknown_command
	call fx-explicit-fm run ex
	ran "run" 0 a
}

# A .py without "#!" and without an execute bit runs under python3, and
# finds its own files from __file__; an executable .sh without "#!"
# runs under sh (the kernel could not run it by itself).
p11_python() {
	load_skills
	is_valid fx-python scripts/plain.sh,scripts/show.py
	call fx-python scripts/plain.sh py a b
	ran "plain.sh" 0 "plain /skill/scripts/plain.sh 2"
	call fx-python scripts/show.py py one "two words"
	ran "show.py" 0 "hello from assets
/skill/scripts/show.py
not executable
python 3 ['one', 'two words']"
}

# cwd: work (the default) and cwd: skill, and the two variables.
p12_cwd() {
	load_skills
	is_valid fx-cwd here,scripts/where.sh
	call fx-cwd here cwd
	ran "default cwd" 0 "cwd=/work SKILL_DIR=/skill WORK_DIR=/work
no marker
writable"
	call fx-cwd scripts/where.sh cwd
	ran "cwd: skill" 0 "cwd=/skill SKILL_DIR=/skill WORK_DIR=/work
marker=in the skill dir
read-only"
}

# An interpreter that is not there makes the skill invalid when it
# loads, saying which.
p13_missing_interpreter() {
	load_skills
	is_invalid fx-nointerp sb-no-such-interp
	check_rejects fx-nointerp sb-no-such-interp
	call fx-nointerp run ni
	refused "invoke" skill_not_enabled
}

# A .rb script on a host without ruby: invalid, naming ruby.
p14_ruby_absent() {
	local d
	for d in /usr/local/bin /usr/bin /bin; do
		[ ! -x "$d/ruby" ] || { sb_skip "this host has $d/ruby"; return; }
	done
	load_skills
	is_invalid fx-ruby ruby
	check_rejects fx-ruby ruby
}

# A file of an unknown extension without "#!": named by the
# instructions, a warning that names it and no command; declared, an
# error that says what to do. A file with "#!" and an execute bit runs
# by itself whatever its name.
p15_unknown_extension() {
	load_skills
	is_valid fx-foo ""
	has_warning fx-foo "SKILL.md:5: scripts/x.foo is named by the instructions but is neither"
	call fx-foo scripts/x.foo ux
	refused "invoke the named file" unknown_command
	is_invalid fx-foo-cmd 'scripts/x.foo has no "#!" line and no interpreter runs ".foo" files'
	check_rejects fx-foo-cmd 'no interpreter runs ".foo" files'
	is_valid fx-direct scripts/tool
	call fx-direct scripts/tool ux
	ran "direct" 0 "direct /skill/scripts/tool"
}

# A command glob of the policy matches command names across "/".
p16_command_glob() {
	load_skills
	is_valid globbed scripts/a.py,scripts/c.sh,scripts/tools/b.py
	call globbed scripts/a.py gl
	ran "scripts/a.py" 0 a
	call globbed scripts/tools/b.py gl
	ran "scripts/tools/b.py" 0 b
	call globbed scripts/c.sh gl
	refused "scripts/c.sh" permission_denied
	sb_ctl info globbed --json
	sb_eq "info: allowed" "$(sb_j '[.skill.commands[] | "\(.name):\(.allowed)"] | join(",")')" \
	    "scripts/a.py:true,scripts/c.sh:false,scripts/tools/b.py:true"
}

# The config's interpreters map adds an extension: under the defaults a
# .shx file is no script (named: no command; declared: an error); with
# the map it is a command that runs under sh (the daemon restarted on
# that config), and policy check -f reads the map too.
p17_interpreters_config() {
	local conf=$SB_CONF conf2=$TMP/sb-interp.yaml
	load_skills
	is_valid fx-shx ""
	has_warning fx-shx scripts/hi.shx
	is_invalid fx-shx-cmd '".shx"'
	check_rejects fx-shx-cmd '".shx"'
	{ cat "$conf"; printf 'interpreters:\n  ".shx": sh\n'; } >"$conf2"
	sed "s|^skills_dirs: .*|skills_dirs: [$TMP/alone/fx-shx-cmd]|" "$conf2" >"$conf2.alone"
	PC=$(timeout 20 "$SB_BIN/skillctl" policy check -f "$conf2.alone" 2>&1)
	PC_RC=$?
	sb_eq "policy check -f with .shx ($(sb_short "$PC"))" "$PC_RC" 0
	sb_stop
	SB_CONF=$conf2
	if sb_start; then
		load_skills
		is_valid fx-shx scripts/hi.shx
		is_valid fx-shx-cmd run
		call fx-shx scripts/hi.shx shx you
		ran "hi.shx" 0 "hi you from /skill/scripts/hi.shx"
		sb_stop
	fi
	SB_CONF=$conf
	sb_start
}

# The interpreter is the one program a script gets without declaring
# it: what the script runs in turn must be declared.
p18_exec_still_declared() {
	load_skills
	is_valid fx-undeclared scripts/upper.sh
	is_valid fx-declared scripts/upper.sh
	call fx-undeclared scripts/upper.sh ex
	ran "tr undeclared" 0 "tr refused: 126"
	call fx-declared scripts/upper.sh ex
	ran "tr declared" 0 ABC
}

# Descriptions are counted in characters: 600 of two bytes, 1024 of one
# and of four bytes load; 1025 does not, with the validator's words.
p19_spec_description() {
	load_skills
	is_valid fx-desc-600e run
	is_valid fx-desc-1024 run
	is_valid fx-desc-1024-4byte run
	sb_eq "600 x é: whole" "$(sk fx-desc-600e '.description | length')" 600
	sb_eq "1024 x U+1F600: whole" "$(sk fx-desc-1024-4byte '.description | length')" 1024
	is_invalid fx-desc-1025 "SKILL.md:3: Description exceeds 1024 character limit (1025 chars)"
	check_accepts fx-desc-600e
	check_accepts fx-desc-1024
	check_rejects fx-desc-1025 "Description exceeds 1024 character limit (1025 chars)"
}

# Names: lowercase, no hyphen at either end or doubled, the directory's.
# An invalid skill is listed under its directory's name.
p20_spec_names() {
	local x want
	load_skills
	while IFS='|' read -r x want; do
		is_invalid "$x" "SKILL.md:2: $want"
		check_rejects "$x" "$want"
	done <<-'EOF'
	fx-upper|Skill name 'Fx-Upper' must be lowercase
	fx-double|Skill name cannot contain consecutive hyphens
	fx-lead|Skill name cannot start or end with a hyphen
	fx-trail|Skill name cannot start or end with a hyphen
	fx-mismatch-x|Directory name 'fx-mismatch-x' must match skill name 'fx-mismatch-y'
	EOF
}

SB_TESTS="p01_shipped_load p02_shipped_info p03_csv_report p04_csv_errors
p05_text_tools p06_instructions_only p06b_instructions_only_info
p07_missing_script p08_spellings p09_named_md p10_explicit p11_python
p12_cwd p13_missing_interpreter p14_ruby_absent p15_unknown_extension
p16_command_glob p17_interpreters_config p18_exec_still_declared
p19_spec_description p20_spec_names"

setup_fixtures
if ! sb_start; then
	echo "not ok - startup: the daemon did not start"
	echo "published: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
sb_run_tests "$@"
