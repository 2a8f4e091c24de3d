/*
 * test_skill_spec.c: a SKILL.md frontmatter against the Agent Skills
 * specification and its reference validator (skills-ref): the name,
 * description and compatibility rules with the validator's words, our
 * own blocks as a warning, and allowed-tools mapped to permissions or
 * warned of, entry by entry (policyd/policyd_spec.c, policyd_tools.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmptree.h"
#include "../../lib/xmalloc.h"
#include "skillenv.h"
#include "../../policyd/policyd.h"
#include "../../proto/mp.h"

static char root[64]; /* a fresh temp dir per test */

static int
setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/sb-test-spec.XXXXXX");
	return mkdtemp(root) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	(void)state;
	tmptree_rm(root);
	return 0;
}

/* Write root/rel, making its directories. */
static void
put(const char *rel, const char *text, mode_t mode)
{
	tmptree_put(root, rel, text, mode);
}

/*
 * A skill in root/dir whose SKILL.md frontmatter is fm (name and all),
 * with its command in skill.yaml, so that only fm is under test.
 */
static void
skill_at(const char *dir, const char *fm)
{
	char rel[PATH_MAX], *md;

	snprintf(rel, sizeof(rel), "%s/scripts/run.sh", dir);
	put(rel, "#!/bin/sh\necho hi\n", 0755);
	snprintf(rel, sizeof(rel), "%s/skill.yaml", dir);
	put(rel, "commands:\n  run: scripts/run.sh\n", 0644);
	snprintf(rel, sizeof(rel), "%s/SKILL.md", dir);
	xasprintf(&md, "---\n%s---\n# Body\n", fm);
	put(rel, md, 0644);
	free(md);
}

/* name: NAME, a plain description, then rest. */
static void
skill_named(const char *dir, const char *name, const char *rest)
{
	char *fm;

	xasprintf(&fm, "name: %s\ndescription: A test skill.\n%s", name, rest);
	skill_at(dir, fm);
	free(fm);
}

static void
load_valid(struct skill *s, const char *dir)
{
	skill_load(s, root, dir);
	if (!s->valid)
		fail_msg("skill %s refused: %s", dir, s->error);
}

/* dir must load invalid, its error being exactly want. */
static void
expect_error(const char *dir, const char *want)
{
	struct skill s;

	skill_load(&s, root, dir);
	if (s.valid)
		fail_msg("skill %s loaded; expected \"%s\"", dir, want);
	if (strcmp(s.error, want) != 0)
		fail_msg("skill %s: error\n  \"%s\", expected\n  \"%s\"", dir,
		    s.error, want);
	skill_free(&s);
}

/* A string of n copies of the UTF-8 character c. */
static char *
repeat(const char *c, size_t n)
{
	size_t l = strlen(c), i;
	char *s = xmalloc(l * n + 1);

	for (i = 0; i < n; i++)
		memcpy(s + i * l, c, l);
	s[l * n] = '\0';
	return s;
}

/* The spec's own examples: valid and invalid names, in its words. */
static void
test_name_spec_examples(void **state)
{
	static const char *const good[] = {
	    "pdf-processing", "data-analysis", "code-review", "x", "123", NULL};
	struct skill s;
	size_t i;

	(void)state;
	for (i = 0; good[i] != NULL; i++) {
		skill_named(good[i], good[i], "");
		load_valid(&s, good[i]);
		assert_string_equal(s.name, good[i]);
		assert_int_equal(s.nwarnings, 0);
		skill_free(&s);
	}
	skill_named("PDF-Processing", "PDF-Processing", "");
	expect_error("PDF-Processing",
	    "SKILL.md:2: Skill name 'PDF-Processing' must be lowercase");
	skill_named("-pdf", "-pdf", "");
	expect_error(
	    "-pdf", "SKILL.md:2: Skill name cannot start or end with a hyphen");
	skill_named("pdf-", "pdf-", "");
	expect_error(
	    "pdf-", "SKILL.md:2: Skill name cannot start or end with a hyphen");
	skill_named("pdf--processing", "pdf--processing", "");
	expect_error("pdf--processing",
	    "SKILL.md:2: Skill name cannot contain consecutive hyphens");
	skill_named("a_b", "a_b", "");
	expect_error("a_b",
	    "SKILL.md:2: Skill name 'a_b' contains invalid characters. Only "
	    "letters, digits, and hyphens are allowed.");
	skill_named("a.b", "a.b", "");
	expect_error("a.b",
	    "SKILL.md:2: Skill name 'a.b' contains invalid characters. Only "
	    "letters, digits, and hyphens are allowed.");
}

/* 1..64 characters; empty or not a string is the validator's error. */
static void
test_name_length_and_type(void **state)
{
	char *n64 = repeat("a", 64), *n65 = repeat("a", 65), want[256];
	struct skill s;

	(void)state;
	skill_named(n64, n64, "");
	load_valid(&s, n64);
	skill_free(&s);
	skill_named(n65, n65, "");
	snprintf(want, sizeof(want),
	    "SKILL.md:2: Skill name '%s' exceeds 64 character limit (65 chars)",
	    n65);
	expect_error(n65, want);
	skill_named("empty", "\"\"", "");
	expect_error("empty", "SKILL.md:2: Field 'name' must be a non-empty "
	                      "string");
	skill_named("blank", "\"   \"", "");
	expect_error("blank", "SKILL.md:2: Field 'name' must be a non-empty "
	                      "string");
	skill_named("list", "[list]", "");
	expect_error("list", "SKILL.md:2: Field 'name' must be a non-empty "
	                     "string");
	skill_at("none", "description: d\n");
	expect_error(
	    "none", "SKILL.md:2: Missing required field in frontmatter: name");
	/* the validator strips the name before it checks it */
	skill_named("padded", "\" padded \"", "");
	load_valid(&s, "padded");
	assert_string_equal(s.name, "padded");
	skill_free(&s);
	free(n64);
	free(n65);
}

/* The name must be the directory's, byte for byte. */
static void
test_name_directory_mismatch(void **state)
{
	(void)state;
	skill_named("alpha", "beta", "");
	expect_error("alpha",
	    "SKILL.md:2: Directory name 'alpha' must match skill name 'beta'");
	skill_named("upper-dir", "upper-Dir", "");
	expect_error("upper-dir",
	    "SKILL.md:2: Skill name 'upper-Dir' must be lowercase");
	skill_named("Mixed", "mixed", "");
	expect_error("Mixed",
	    "SKILL.md:2: Directory name 'Mixed' must match skill name 'mixed'");
}

/*
 * Non-ASCII names: the spec lists a-z and 0-9; the validator would also
 * take lowercase Unicode letters (技能, мой-навык, café after NFKC).
 * skillbroker takes the spec's list (docs/skills.md), so each is an
 * error that says so, never a name that slips through.
 */
static void
test_name_unicode(void **state)
{
	static const char *const names[] = {"caf\xc3\xa9", /* café */
	    "\xe6\x8a\x80\xe8\x83\xbd",                    /* 技能 */
	    "\xd0\xbd\xd0\xb0\xd0\xb2\xd1\x8b\xd0\xba",    /* навык */
	    "\xd0\x9d\xd0\x90\xd0\x92\xd0\xab\xd0\x9a",    /* НАВЫК */
	    NULL};
	char want[256];
	size_t i;

	(void)state;
	for (i = 0; names[i] != NULL; i++) {
		skill_named(names[i], names[i], "");
		snprintf(want, sizeof(want),
		    "SKILL.md:2: Skill name '%s' contains invalid characters. "
		    "Only a-z, 0-9 and hyphens are allowed here: skillbroker "
		    "takes no letter beyond a-z (docs/skills.md)",
		    names[i]);
		expect_error(names[i], want);
	}
	/* "café" decomposed (e + U+0301) in a directory spelled composed:
	 * the validator's NFKC makes them equal; we refuse the name. */
	skill_named("caf\xc3\xa9", "cafe\xcc\x81", "");
	snprintf(want, sizeof(want),
	    "SKILL.md:2: Skill name '%s' contains invalid characters. "
	    "Only a-z, 0-9 and hyphens are allowed here: skillbroker "
	    "takes no letter beyond a-z (docs/skills.md)",
	    "cafe\xcc\x81");
	expect_error("caf\xc3\xa9", want);
	/* Fullwidth "ｃａｆｅ", which NFKC makes "cafe": refused too. */
	skill_named(
	    "cafe", "\xef\xbd\x83\xef\xbd\x81\xef\xbd\x86\xef\xbd\x85", "");
	snprintf(want, sizeof(want),
	    "SKILL.md:2: Skill name '%s' contains invalid characters. "
	    "Only a-z, 0-9 and hyphens are allowed here: skillbroker "
	    "takes no letter beyond a-z (docs/skills.md)",
	    "\xef\xbd\x83\xef\xbd\x81\xef\xbd\x86\xef\xbd\x85");
	expect_error("cafe", want);
}

/* description: 1..1024 characters, not bytes. */
static void
test_description_characters(void **state)
{
	char *fm, *d;
	struct skill s;

	(void)state;
	d = repeat("x", 1024);
	xasprintf(&fm, "name: d1024\ndescription: %s\n", d);
	skill_at("d1024", fm);
	load_valid(&s, "d1024");
	assert_int_equal(strlen(s.description), 1024);
	skill_free(&s);
	free(fm);
	free(d);

	d = repeat("x", 1025);
	xasprintf(&fm, "name: d1025\ndescription: %s\n", d);
	skill_at("d1025", fm);
	expect_error("d1025", "SKILL.md:3: Description exceeds 1024 "
	                      "character limit (1025 chars)");
	free(fm);
	free(d);

	/* 600 x "é": 600 characters, 1200 bytes: valid */
	d = repeat("\xc3\xa9", 600);
	xasprintf(&fm, "name: e600\ndescription: %s\n", d);
	skill_at("e600", fm);
	load_valid(&s, "e600");
	assert_int_equal(strlen(s.description), 1200);
	assert_int_equal(spec_chars(s.description), 600);
	skill_free(&s);
	free(fm);
	free(d);

	/* 1025 x "é": one character too many */
	d = repeat("\xc3\xa9", 1025);
	xasprintf(&fm, "name: e1025\ndescription: %s\n", d);
	skill_at("e1025", fm);
	expect_error("e1025", "SKILL.md:3: Description exceeds 1024 "
	                      "character limit (1025 chars)");
	free(fm);
	free(d);

	/* a combining accent is a character of its own, as in Python */
	d = repeat("e\xcc\x81", 513);
	xasprintf(&fm, "name: comb\ndescription: %s\n", d);
	skill_at("comb", fm);
	expect_error("comb", "SKILL.md:3: Description exceeds 1024 "
	                     "character limit (1026 chars)");
	free(fm);
	free(d);
}

static void
test_description_empty_or_missing(void **state)
{
	(void)state;
	skill_at("nodesc", "name: nodesc\n");
	expect_error("nodesc",
	    "SKILL.md:2: Missing required field in frontmatter: description");
	skill_at("emptyd", "name: emptyd\ndescription: \"\"\n");
	expect_error("emptyd",
	    "SKILL.md:3: Field 'description' must be a non-empty string");
	skill_at("blankd", "name: blankd\ndescription: \"  \\t \"\n");
	expect_error("blankd",
	    "SKILL.md:3: Field 'description' must be a non-empty string");
	skill_at("listd", "name: listd\ndescription: [a, b]\n");
	expect_error("listd",
	    "SKILL.md:3: Field 'description' must be a non-empty string");
}

/*
 * The longest spec-valid description, 1024 characters of 4 bytes, fits
 * what carries it: the skills answer (SKILL_DESC_MAX bytes).
 */
static void
test_description_fits_the_wire(void **state)
{
	struct msg_skills_ans a, b;
	struct msg_skill one;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	struct skill s;
	char *fm, *desc = repeat("\xf0\x9f\x98\x80", 1024); /* U+1F600 */

	(void)state;
	xasprintf(&fm, "name: wide\ndescription: %s\n", desc);
	skill_at("wide", fm);
	load_valid(&s, "wide");
	assert_int_equal(strlen(s.description), 4096);
	assert_true(strlen(s.description) <= SKILL_DESC_MAX);
	memset(&one, 0, sizeof(one));
	one.name = s.name;
	one.description = s.description;
	one.valid = 1;
	one.error = "";
	memset(&a, 0, sizeof(a));
	a.ref = 1;
	a.skills = &one;
	a.nskills = 1;
	enc_init(&m);
	msg_skills_ans_enc(&m, &a);
	assert_int_equal(
	    mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	if (msg_skills_ans_dec(&d, &b, &e) != 0)
		fail_msg("%s", e.msg);
	assert_string_equal(b.skills[0].description, desc);
	msg_skills_ans_free(&b);
	mp_doc_free(&d);
	enc_free(&m);
	skill_free(&s);
	free(fm);
	free(desc);
}

/* compatibility: a string of at most 500 characters, when present. */
static void
test_compatibility(void **state)
{
	char *fm, *c;
	struct skill s;

	(void)state;
	c = repeat("c", 500);
	xasprintf(&fm, "name: c500\ndescription: d\ncompatibility: %s\n", c);
	skill_at("c500", fm);
	load_valid(&s, "c500");
	skill_free(&s);
	free(fm);
	free(c);
	c = repeat("\xc3\xa9", 500); /* 500 characters, 1000 bytes */
	xasprintf(&fm, "name: e500\ndescription: d\ncompatibility: %s\n", c);
	skill_at("e500", fm);
	load_valid(&s, "e500");
	skill_free(&s);
	free(fm);
	free(c);
	c = repeat("c", 501);
	xasprintf(&fm, "name: c501\ndescription: d\ncompatibility: %s\n", c);
	skill_at("c501", fm);
	expect_error("c501", "SKILL.md:4: Compatibility exceeds 500 "
	                     "character limit (501 chars)");
	free(fm);
	free(c);
	skill_at("cmap", "name: cmap\ndescription: d\ncompatibility: {a: b}\n");
	expect_error("cmap", "SKILL.md:4: Field 'compatibility' must be a "
	                     "string");
	/* the validator takes an empty one (the spec's prose says 1..500) */
	skill_at(
	    "cempty", "name: cempty\ndescription: d\ncompatibility: \"\"\n");
	load_valid(&s, "cempty");
	skill_free(&s);
}

/* The spec's keys load without a word; an unknown key is an error. */
static void
test_unknown_keys(void **state)
{
	struct skill s;

	(void)state;
	skill_at("full", "name: full\ndescription: d\nlicense: MIT\n"
	                 "compatibility: Needs sh\n"
	                 "metadata:\n  author: me\n  version: \"1.0\"\n"
	                 "allowed-tools: Read\n");
	load_valid(&s, "full");
	assert_int_equal(s.nwarnings, 0);
	skill_free(&s);
	skill_at("extra", "name: extra\ndescription: d\nversion: 1\n"
	                  "model: x\n");
	expect_error("extra",
	    "SKILL.md:4: Unexpected fields in frontmatter: model, version. "
	    "Only ['allowed-tools', 'compatibility', 'description', "
	    "'license', 'metadata', 'name'] are allowed.");
}

/* Our blocks in SKILL.md load, with a warning naming skill.yaml. */
static void
test_own_blocks_warn(void **state)
{
	struct skill s;

	(void)state;
	put("inline/scripts/run.sh", "#!/bin/sh\n", 0755);
	put("inline/SKILL.md",
	    "---\n"
	    "name: inline\n"
	    "description: d\n"
	    "limits: { timeout_ms: 1000 }\n"
	    "commands: { run: scripts/run.sh }\n"
	    "permissions: { exec: [sh] }\n"
	    "---\n",
	    0644);
	load_valid(&s, "inline");
	assert_int_equal(s.ncmds, 1);
	assert_int_equal(s.limits.timeout_ms, 1000);
	assert_int_equal(s.nwarnings, 1);
	assert_string_equal(s.warnings[0],
	    "SKILL.md:4: Unexpected fields in frontmatter: commands, limits, "
	    "permissions. Only ['allowed-tools', 'compatibility', "
	    "'description', 'license', 'metadata', 'name'] are allowed. "
	    "skillbroker reads commands, permissions and limits here too, "
	    "but the Agent Skills validator refuses them: move them to "
	    "skill.yaml beside SKILL.md");
	skill_free(&s);
	/* an unknown key beside them: the error names it alone */
	put("inline/SKILL.md",
	    "---\nname: inline\ndescription: d\n"
	    "commands: { run: scripts/run.sh }\nhooks: x\n---\n",
	    0644);
	skill_load(&s, root, "inline");
	assert_false(s.valid);
	assert_non_null(strstr(s.error,
	    "SKILL.md:5: Unexpected fields in frontmatter: hooks. Only"));
	assert_int_equal(s.nwarnings, 1);
	skill_free(&s);
	/* in skill.yaml: nothing to say */
	skill_named("side", "side", "");
	load_valid(&s, "side");
	assert_int_equal(s.nwarnings, 0);
	skill_free(&s);
}

/* allowed-tools of skill dir: load it, with warnings and perms. */
static void
tools(struct skill *s, const char *dir, const char *value)
{
	char *rest;

	xasprintf(&rest, "allowed-tools: %s\n", value);
	skill_named(dir, dir, rest);
	free(rest);
	load_valid(s, dir);
}

/* s has exactly one warning, which says want. */
static void
one_warning(const struct skill *s, const char *want)
{
	if (s->nwarnings != 1)
		fail_msg("%zu warnings, expected one: %s", s->nwarnings, want);
	if (strstr(s->warnings[0], want) == NULL)
		fail_msg(
		    "warning \"%s\" does not say \"%s\"", s->warnings[0], want);
}

/* The issue's example: nothing is dropped without a word. */
static void
test_tools_issue_example(void **state)
{
	struct skill s;

	(void)state;
	tools(&s, "ex", "Bash(python3:*) Bash(git status) Read Write");
	assert_int_equal(s.perms.n[PERM_EXEC], 2);
	assert_string_equal(s.perms.v[PERM_EXEC][0], "python3");
	assert_string_equal(s.perms.v[PERM_EXEC][1], "git");
	one_warning(&s, "SKILL.md:4: allowed-tools \"Bash(git status)\": "
	                "mapped to exec git, which allows the program, not "
	                "one command line: git may run with any arguments");
	skill_free(&s);
}

/* Bash(...): each form. */
static void
test_tools_bash_forms(void **state)
{
	struct skill s;

	(void)state;
	tools(&s, "b1", "Bash(jq:*) Bash(sed *)"); /* any arguments */
	assert_int_equal(s.perms.n[PERM_EXEC], 2);
	assert_int_equal(s.nwarnings, 0);
	skill_free(&s);
	tools(&s, "b2", "Bash(npm run:*)");
	assert_string_equal(s.perms.v[PERM_EXEC][0], "npm");
	one_warning(&s, "mapped to exec npm");
	skill_free(&s);
	tools(&s, "b3", "Bash(curl)"); /* exactly "curl", no arguments */
	assert_string_equal(s.perms.v[PERM_EXEC][0], "curl");
	one_warning(&s, "curl may run with any arguments");
	skill_free(&s);
	tools(&s, "b4", "Bash");
	assert_int_equal(s.perms.n[PERM_EXEC], 0);
	one_warning(&s, "\"Bash\": no mapping: any command line");
	skill_free(&s);
	tools(&s, "b5", "Bash(*)");
	assert_int_equal(s.perms.n[PERM_EXEC], 0);
	one_warning(&s, "\"Bash(*)\": no mapping: it names no one program");
	skill_free(&s);
	tools(&s, "b6", "Bash(./scripts/run.sh:*)");
	assert_int_equal(s.perms.n[PERM_EXEC], 0);
	one_warning(&s, "no mapping: a path, not a program name");
	skill_free(&s);
	tools(&s, "b7", "Bash(/bin/rm:*)");
	assert_int_equal(s.perms.n[PERM_EXEC], 0);
	one_warning(&s, "no mapping: a path, not a program name");
	skill_free(&s);
	tools(&s, "b8", "\"Bash(FOO=1 make) Bash($(id)) Bash(..:*)\"");
	assert_int_equal(s.perms.n[PERM_EXEC], 0);
	assert_int_equal(s.nwarnings, 3);
	assert_non_null(strstr(s.warnings[0], "not a program name"));
	assert_non_null(strstr(s.warnings[1], "not a program name"));
	assert_non_null(strstr(s.warnings[2], "not a program name"));
	skill_free(&s);
	tools(&s, "b9", "Bash(git status");
	assert_int_equal(s.perms.n[PERM_EXEC], 0);
	one_warning(&s, "\"Bash(git status\": no mapping: its parentheses do "
	                "not balance");
	skill_free(&s);
	tools(&s, "b10", "Bash(python*)");
	one_warning(&s, "it names no one program");
	skill_free(&s);
}

/* A program is declared once, whoever declares it. */
static void
test_tools_dedup(void **state)
{
	struct skill s;

	(void)state;
	skill_named("dd", "dd", "allowed-tools: Bash(git:*) Bash(git log *)\n");
	put("dd/skill.yaml",
	    "commands:\n  run: scripts/run.sh\npermissions:\n  exec: [git]\n",
	    0644);
	load_valid(&s, "dd");
	assert_int_equal(s.perms.n[PERM_EXEC], 1);
	assert_string_equal(s.perms.v[PERM_EXEC][0], "git");
	skill_free(&s);
}

/* The agent's file tools are the baseline; a path rule of theirs is not. */
static void
test_tools_file_tools(void **state)
{
	struct skill s;
	int k;

	(void)state;
	tools(&s, "ft",
	    "Read Write Edit MultiEdit Glob Grep LS NotebookEdit NotebookRead");
	for (k = 0; k < PERM__COUNT; k++)
		assert_int_equal(s.perms.n[k], 0);
	assert_int_equal(s.nwarnings, 0);
	skill_free(&s);
	tools(&s, "fp", "Read(./docs/**)");
	one_warning(&s, "\"Read(./docs/**)\": no mapping: a path rule of "
	                "the agent's file tools");
	assert_int_equal(s.perms.n[PERM_FS_READ], 0);
	skill_free(&s);
	tools(&s, "fw", "Edit(/etc/passwd)");
	one_warning(&s, "no mapping: a path rule");
	assert_int_equal(s.perms.n[PERM_FS_WRITE], 0);
	skill_free(&s);
}

/* WebFetch(domain:HOST) is network.allow HOST:443. */
static void
test_tools_webfetch(void **state)
{
	struct skill s;

	(void)state;
	tools(&s, "w1", "WebFetch(domain:api.example.com)");
	assert_int_equal(s.perms.n[PERM_NETWORK], 1);
	assert_string_equal(s.perms.v[PERM_NETWORK][0], "api.example.com:443");
	assert_int_equal(s.nwarnings, 0);
	skill_free(&s);
	tools(&s, "w2",
	    "WebFetch(domain:b\xc3\xbc"
	    "cher.example)");
	assert_string_equal(
	    s.perms.v[PERM_NETWORK][0], "xn--bcher-kva.example:443");
	skill_free(&s);
	tools(&s, "w3", "WebFetch");
	assert_int_equal(s.perms.n[PERM_NETWORK], 0);
	one_warning(&s, "\"WebFetch\": no mapping: any site");
	skill_free(&s);
	tools(&s, "w4", "WebFetch(https://example.com/x)");
	assert_int_equal(s.perms.n[PERM_NETWORK], 0);
	one_warning(&s, "only WebFetch(domain:HOST) names a host");
	skill_free(&s);
	tools(&s, "w5", "\"WebFetch(domain:a b)\"");
	assert_int_equal(s.perms.n[PERM_NETWORK], 0);
	one_warning(&s, "no mapping: not a host name");
	skill_free(&s);
}

/* Tools we know nothing of: a warning each. */
static void
test_tools_unknown(void **state)
{
	struct skill s;

	(void)state;
	tools(&s, "u1", "Task mcp__github__create_issue WebSearch");
	assert_int_equal(s.nwarnings, 3);
	assert_non_null(strstr(s.warnings[0],
	    "\"Task\": no mapping: a tool of the agent, not a permission"));
	assert_non_null(strstr(s.warnings[1], "mcp__github__create_issue"));
	assert_non_null(strstr(s.warnings[2], "WebSearch"));
	skill_free(&s);
	tools(&s, "u2", "\"Skill(x) !bad\"");
	assert_int_equal(s.nwarnings, 2);
	assert_non_null(strstr(s.warnings[0], "a tool of the agent"));
	assert_non_null(
	    strstr(s.warnings[1], "neither a tool name nor TOOL(RULE)"));
	skill_free(&s);
}

/* Commas (as Claude Code writes them), lists, and their lines. */
static void
test_tools_separators_and_lists(void **state)
{
	struct skill s;

	(void)state;
	tools(&s, "c1", "Read, Grep, Bash(git:*),Bash(jq:*)");
	assert_int_equal(s.perms.n[PERM_EXEC], 2);
	assert_int_equal(s.nwarnings, 0);
	skill_free(&s);
	skill_named("l1", "l1",
	    "allowed-tools:\n"
	    "  - Bash(python3:*)\n"
	    "  - Bash(git status)\n"
	    "  - Task\n");
	load_valid(&s, "l1");
	assert_int_equal(s.perms.n[PERM_EXEC], 2);
	assert_int_equal(s.nwarnings, 2);
	assert_non_null(strstr(s.warnings[0], "SKILL.md:6: allowed-tools "
	                                      "\"Bash(git status)\""));
	assert_non_null(strstr(s.warnings[1], "SKILL.md:7: allowed-tools "
	                                      "\"Task\""));
	skill_free(&s);
	skill_named("m1", "m1", "allowed-tools: { Bash: git }\n");
	load_valid(&s, "m1");
	one_warning(&s, "SKILL.md:4: expected a single value: not read");
	skill_free(&s);
}

/* However many entries, the warnings a skill keeps are bounded. */
static void
test_tools_warnings_bounded(void **state)
{
	char value[2048] = "\"";
	struct skill s;
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		snprintf(value + strlen(value), sizeof(value) - strlen(value),
		    "T%d ", i);
	strcat(value, "\"");
	tools(&s, "many", value);
	assert_int_equal(s.nwarnings, SKILL_WARNINGS_MAX);
	assert_string_equal(s.warnings[SKILL_WARNINGS_MAX - 1],
	    "more than 15 warnings: the rest are not kept");
	for (i = 0; i < SKILL_WARNINGS_MAX; i++)
		assert_true(strlen(s.warnings[i]) < SKILL_WARNING_MAX);
	skill_free(&s);
	/* a long entry is quoted cut, whole characters only */
	{
		char *big = repeat("\xc3\xa9", 800), *v;
		xasprintf(&v, "Bash(%s)", big);
		tools(&s, "long", v);
		assert_int_equal(s.nwarnings, 1);
		assert_non_null(strstr(s.warnings[0], "longer than 1024"));
		free(big);
		free(v);
		skill_free(&s);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_name_spec_examples),
	    T(test_name_length_and_type),
	    T(test_name_directory_mismatch),
	    T(test_name_unicode),
	    T(test_description_characters),
	    T(test_description_empty_or_missing),
	    T(test_description_fits_the_wire),
	    T(test_compatibility),
	    T(test_unknown_keys),
	    T(test_own_blocks_warn),
	    T(test_tools_issue_example),
	    T(test_tools_bash_forms),
	    T(test_tools_dedup),
	    T(test_tools_file_tools),
	    T(test_tools_webfetch),
	    T(test_tools_unknown),
	    T(test_tools_separators_and_lists),
	    T(test_tools_warnings_bounded),
#undef T
	};

	skillenv_defaults();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
