/*
 * test_skill_load.c: hostile skill directories. A skill that escapes its
 * directory (symlinked root, entry point or path glob, "..", absolute
 * paths), is malformed, or is ambiguous is loaded as invalid with a
 * clear reason; it never stops the good skills beside it.
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
#include <time.h>
#include <unistd.h>

#include "tmptree.h"
#include "skillenv.h"
#include "../../policyd/policyd.h"

/* "Well under a second" of CPU; the sanitizers make all code slower. */
#ifdef __SANITIZE_ADDRESS__
#define FAST_NS (5 * 500 * 1000000ULL)
#else
#define FAST_NS (500 * 1000000ULL)
#endif

static char root[64];     /* a fresh temp dir per test */
static char outside[128]; /* a dir beside the skills, "outside" them */

static int
setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/sb-test-skill.XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	snprintf(outside, sizeof(outside), "%s-outside", root);
	if (mkdir(outside, 0755) == -1)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	alarm(0);
	tmptree_rm(root);
	tmptree_rm(outside);
	return 0;
}

/* Write root/rel (making parent dirs) with this mode. */
static void
put(const char *rel, const char *text, mode_t mode)
{
	tmptree_put(root, rel, text, mode);
}

static void
link_at(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (symlink(target, path) != 0)
		fail_msg("symlink %s -> %s failed", path, target);
}

static void
mkdir_at(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* A SKILL.md for dir, with name and description, then the rest. */
static void
skill_md(const char *dir, const char *name, const char *rest)
{
	char rel[PATH_MAX], md[4096];

	snprintf(rel, sizeof(rel), "%s/SKILL.md", dir);
	snprintf(md, sizeof(md),
	    "---\nname: %s\ndescription: A test skill.\n"
	    "%s---\n\n# Body\n\nText.\n",
	    name, rest);
	put(rel, md, 0644);
}

static void
script(const char *dir, const char *relpath, mode_t mode)
{
	char rel[PATH_MAX];

	snprintf(rel, sizeof(rel), "%s/%s", dir, relpath);
	put(rel, "#!/bin/sh\necho hi\n", mode);
}

/* A complete valid skill called name in root/name. */
static void
good_skill(const char *name)
{
	script(name, "scripts/run.sh", 0755);
	skill_md(name, name, "commands:\n  run: scripts/run.sh\n");
}

static void
expect_valid(struct skill *s, const char *dname)
{
	skill_load(s, root, dname);
	if (!s->valid)
		fail_msg("skill %s refused: %s", dname, s->error);
	assert_null(s->error);
}

/* Load dname; it must be invalid with an error saying why. */
static void
expect_invalid(const char *dname, const char *why)
{
	struct skill s;

	skill_load(&s, root, dname);
	if (s.valid)
		fail_msg("skill %s loaded; expected \"%s\"", dname, why);
	assert_non_null(s.error);
	if (strstr(s.error, why) == NULL)
		fail_msg("skill %s: error \"%s\" does not say \"%s\"", dname,
		    s.error, why);
	assert_non_null(s.name);
	skill_free(&s);
}

static int
has(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

static void
test_valid_skill(void **state)
{
	struct skill s;
	char real[PATH_MAX], want[PATH_MAX + 16];

	(void)state;
	script("notes", "scripts/run.sh", 0755);
	script("notes", "scripts/report.py", 0755);
	skill_md("notes", "notes",
	    "license: MIT\n"
	    "metadata: { author: me }\n"
	    "commands:\n"
	    "  run: scripts/run.sh\n"
	    "  report: { path: scripts/report.py }\n"
	    "permissions:\n"
	    "  fs:\n"
	    "    read: [\"$SKILL_DIR/**\", \"/usr/share/zoneinfo/**\"]\n"
	    "    write: [\"$WORK_DIR/**\", \"$DATA_DIR/**\"]\n"
	    "  network:\n"
	    "    allow: [\"api.example.com:443\"]\n"
	    "  exec: [sh, python3]\n"
	    "  env: [LANG, TZ]\n"
	    "limits: { timeout_ms: 10000, memory_mb: 256, pids: 64, "
	    "output_bytes: 65536 }\n");
	expect_valid(&s, "notes");
	assert_string_equal(s.name, "notes");
	assert_string_equal(s.description, "A test skill.");
	assert_non_null(realpath(root, real));
	snprintf(want, sizeof(want), "%s/notes", real);
	assert_string_equal(s.dir, want);
	assert_string_equal(s.manifest, "SKILL.md");
	assert_int_equal(s.ncmds, 2);
	assert_string_equal(s.cmds[0].name, "run");
	assert_string_equal(s.cmds[0].path, "scripts/run.sh");
	assert_string_equal(s.cmds[1].name, "report");
	assert_string_equal(s.cmds[1].path, "scripts/report.py");
	assert_int_equal(s.perms.n[PERM_FS_READ], 2);
	assert_int_equal(s.perms.n[PERM_FS_WRITE], 2);
	assert_string_equal(s.perms.v[PERM_NETWORK][0], "api.example.com:443");
	assert_int_equal(s.perms.n[PERM_EXEC], 2);
	assert_int_equal(s.perms.n[PERM_ENV], 2);
	assert_int_equal(s.limits.timeout_ms, 10000);
	assert_int_equal(s.limits.memory_mb, 256);
	assert_int_equal(s.limits.pids, 64);
	assert_int_equal(s.limits.output_bytes, 65536);
	skill_free(&s);

	/* The minimal skill: no permissions is the minimal sandbox. */
	good_skill("tiny");
	expect_valid(&s, "tiny");
	assert_int_equal(s.perms.n[PERM_FS_READ] + s.perms.n[PERM_FS_WRITE] +
	                     s.perms.n[PERM_NETWORK] + s.perms.n[PERM_EXEC] +
	                     s.perms.n[PERM_ENV],
	    0);
	skill_free(&s);
}

/* A command's long form may describe it: 1..1024 bytes, nothing else. */
static void
test_command_description(void **state)
{
	char long_desc[1100], rest[1300];
	struct skill s;

	(void)state;
	script("described", "scripts/run.sh", 0755);
	skill_md("described", "described",
	    "commands:\n"
	    "  run: { path: scripts/run.sh, description: \"Runs it once.\" }\n"
	    "  plain: scripts/run.sh\n");
	expect_valid(&s, "described");
	assert_int_equal(s.ncmds, 2);
	assert_string_equal(s.cmds[0].description, "Runs it once.");
	assert_null(s.cmds[1].description);
	skill_free(&s);

	script("emptydesc", "scripts/run.sh", 0755);
	skill_md("emptydesc", "emptydesc",
	    "commands:\n  run: { path: scripts/run.sh, description: \"\" }\n");
	expect_invalid("emptydesc", "command run: description: 1..1024 bytes");
	memset(long_desc, 'd', 1025);
	long_desc[1025] = '\0';
	snprintf(rest, sizeof(rest),
	    "commands:\n  run: { path: scripts/run.sh, description: %s }\n",
	    long_desc);
	script("longdesc", "scripts/run.sh", 0755);
	skill_md("longdesc", "longdesc", rest);
	expect_invalid("longdesc", "description: 1..1024 bytes");
	script("listdesc", "scripts/run.sh", 0755);
	skill_md("listdesc", "listdesc",
	    "commands:\n  run: { path: scripts/run.sh, description: [a] }\n");
	expect_invalid("listdesc", "expected a single value");
	script("otherkey", "scripts/run.sh", 0755);
	skill_md("otherkey", "otherkey",
	    "commands:\n  run: { path: scripts/run.sh, usage: x }\n");
	expect_invalid("otherkey", "usage");
}

/* A command may be a symlink that stays inside the skill. */
static void
test_inner_symlink_command_ok(void **state)
{
	struct skill s;

	(void)state;
	script("inner", "scripts/real.sh", 0755);
	link_at("real.sh", "inner/scripts/run.sh");
	skill_md("inner", "inner", "commands: { run: scripts/run.sh }\n");
	expect_valid(&s, "inner");
	skill_free(&s);
}

static void
test_symlinked_root(void **state)
{
	char target[PATH_MAX];

	(void)state;
	good_skill("real");
	snprintf(target, sizeof(target), "%s/real", root);
	link_at(target, "linked");
	/* Same name inside, so only the symlink can be the reason. */
	skill_md("real", "linked", "commands: { run: scripts/run.sh }\n");
	expect_invalid("linked", "symlink");
	/* And a relative link, too. */
	link_at("real", "linked2");
	expect_invalid("linked2", "symlink");
}

static void
test_command_symlink_outside(void **state)
{
	char target[PATH_MAX];

	(void)state;
	mkdir_at("evil");
	mkdir_at("evil/scripts");
	link_at("/bin/sh", "evil/scripts/run.sh");
	skill_md("evil", "evil", "commands: { run: scripts/run.sh }\n");
	expect_invalid("evil", "resolves outside the skill directory");

	/* A symlinked directory on the way out counts the same. */
	snprintf(target, sizeof(target), "%s/bin", outside);
	mkdir(target, 0755);
	snprintf(target, sizeof(target), "%s/bin/run.sh", outside);
	{
		FILE *f = fopen(target, "w");
		assert_non_null(f);
		fputs("#!/bin/sh\n", f);
		fclose(f);
		chmod(target, 0755);
	}
	snprintf(target, sizeof(target), "%s/bin", outside);
	mkdir_at("evil2");
	link_at(target, "evil2/scripts");
	skill_md("evil2", "evil2", "commands: { run: scripts/run.sh }\n");
	expect_invalid("evil2", "resolves outside the skill directory");

	/* A sibling skill is outside too. */
	good_skill("victim");
	mkdir_at("evil3");
	link_at("../victim/scripts/run.sh", "evil3/run.sh");
	skill_md("evil3", "evil3", "commands: { run: run.sh }\n");
	expect_invalid("evil3", "resolves outside the skill directory");
}

static void
test_command_dotdot_and_absolute(void **state)
{
	(void)state;
	good_skill("dots");
	skill_md(
	    "dots", "dots", "commands: { run: scripts/../scripts/run.sh }\n");
	expect_invalid("dots", "without \"..\"");
	skill_md("dots", "dots", "commands: { run: ../dots/scripts/run.sh }\n");
	expect_invalid("dots", "without \"..\"");
	skill_md("dots", "dots", "commands: { run: /bin/sh }\n");
	expect_invalid("dots", "must be relative");
	skill_md("dots", "dots", "commands: { run: \"\" }\n");
	expect_invalid("dots", "must be relative");
	skill_md("dots", "dots", "commands: { run: { path: /bin/sh } }\n");
	expect_invalid("dots", "must be relative");
}

static void
test_entry_missing_or_not_executable(void **state)
{
	(void)state;
	good_skill("ent");
	skill_md("ent", "ent", "commands: { run: scripts/missing.sh }\n");
	expect_invalid("ent", "No such file or directory");
	/* "#!" but not executable, of no extension an interpreter runs */
	script("ent", "scripts/plain", 0644);
	skill_md("ent", "ent", "commands: { run: scripts/plain }\n");
	expect_invalid("ent",
	    "command run: scripts/plain has a \"#!\" line but is not "
	    "executable by others, and no interpreter runs \"extensionless\" "
	    "files: make it executable (chmod +x)");
	/* executable by its owner only: the worker's uid is another */
	script("ent", "scripts/mine", 0700);
	skill_md("ent", "ent", "commands: { run: scripts/mine }\n");
	expect_invalid("ent", "is not executable by others");
	skill_md("ent", "ent", "commands: { run: scripts }\n");
	expect_invalid("ent", "command run: scripts is not a regular file");
	/* One bad command spoils the skill, not just that command. */
	skill_md("ent", "ent",
	    "commands:\n  run: scripts/run.sh\n"
	    "  other: scripts/plain\n");
	expect_invalid("ent", "command other");
}

/* SKILL.md for dir (name dir) with this body. */
static void
skill_body(const char *dir, const char *body)
{
	char rel[PATH_MAX], md[8192];

	snprintf(rel, sizeof(rel), "%s/SKILL.md", dir);
	snprintf(md, sizeof(md),
	    "---\nname: %s\ndescription: A published skill.\n---\n%s", dir,
	    body);
	put(rel, md, 0644);
}

/* The command named name of s, or a failure. */
static const struct skill_cmd *
cmd_of(const struct skill *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->ncmds; i++)
		if (strcmp(s->cmds[i].name, name) == 0)
			return &s->cmds[i];
	fail_msg("skill %s has no command %s", s->name, name);
	return NULL;
}

/* Some warning of s says what. */
static void
expect_warning(const struct skill *s, const char *what)
{
	size_t i;

	for (i = 0; i < s->nwarnings; i++)
		if (strstr(s->warnings[i], what) != NULL)
			return;
	fail_msg("skill %s: no warning says \"%s\" (%zu warnings%s%s)", s->name,
	    what, s->nwarnings, s->nwarnings ? ", first: " : "",
	    s->nwarnings ? s->warnings[0] : "");
}

/*
 * No commands block: the commands are the scripts the instructions name,
 * however they are written, and those named by a markdown file the body
 * names; by path, sorted; each with what runs it. A script in the skill
 * that nothing names is no command: nothing is found by listing a dir.
 */
static void
test_instructions_commands(void **state)
{
	struct skill s;

	(void)state;
	put("pub/scripts/fill.py", "print('fill')\n", 0644);
	script("pub", "scripts/run.sh", 0755);
	put("pub/scripts/b.py", "print('b')\n", 0644);
	put("pub/scripts/c.py", "print('c')\n", 0644);
	put("pub/scripts/d.sh", "echo d\n", 0644);
	put("pub/scripts/from_ref.py", "print('r')\n", 0644);
	put("pub/scripts/unnamed.py", "print('never')\n", 0644);
	put("pub/tool.py", "print('top')\n", 0644);
	put("pub/references/guide.md",
	    "# Guide\n\nThen run:\n\n    python scripts/from_ref.py x\n", 0644);
	skill_body("pub",
	    "# Pub\n\n"
	    "Fill with `python3 scripts/fill.py in.pdf out.pdf`.\n"
	    "Or ./scripts/run.sh, $SKILL_DIR/scripts/b.py,\n"
	    "{baseDir}/scripts/c.py and ${SKILL_DIR}/scripts/d.sh.\n"
	    "Also tool.py. See references/guide.md.\n"
	    "Not https://example.com/scripts/x.py nor /usr/bin/env.\n");
	expect_valid(&s, "pub");
	assert_int_equal(s.nwarnings, 0);
	assert_int_equal(s.ncmds, 7);
	assert_string_equal(s.cmds[0].name, "scripts/b.py");
	assert_string_equal(s.cmds[1].name, "scripts/c.py");
	assert_string_equal(s.cmds[2].name, "scripts/d.sh");
	assert_string_equal(s.cmds[3].name, "scripts/fill.py");
	assert_string_equal(s.cmds[4].name, "scripts/from_ref.py");
	assert_string_equal(s.cmds[5].name, "scripts/run.sh");
	assert_string_equal(s.cmds[6].name, "tool.py");
	assert_string_equal(
	    cmd_of(&s, "scripts/fill.py")->path, "scripts/fill.py");
	assert_string_equal(
	    cmd_of(&s, "scripts/fill.py")->interpreter, "python3");
	assert_string_equal(cmd_of(&s, "scripts/d.sh")->interpreter, "sh");
	assert_null(cmd_of(&s, "scripts/run.sh")->interpreter);
	assert_int_equal(cmd_of(&s, "scripts/fill.py")->cwd, GRANT_CWD_WORK);
	skill_free(&s);
}

/* Instructions that name no script: valid, with no commands. */
static void
test_instructions_only(void **state)
{
	struct skill s;

	(void)state;
	put("prose/scripts/helper.py", "print('unnamed')\n", 0644);
	skill_body("prose", "# Prose\n\nWrite clearly. See references/style.md"
	                    " (which is not there).\n");
	expect_valid(&s, "prose");
	assert_int_equal(s.ncmds, 0);
	assert_int_equal(s.nwarnings, 0);
	skill_free(&s);
}

/*
 * What the instructions name under scripts/ but is no command is a
 * warning at its line: a file the skill lacks, one no interpreter runs,
 * a link out of the skill. A markdown file that is a FIFO is not read.
 */
static void
test_instructions_warnings(void **state)
{
	char fifo[PATH_MAX];
	struct skill s;

	(void)state;
	put("warn/scripts/data.json", "{}\n", 0644);
	put("warn/scripts/ok.py", "print(1)\n", 0644);
	mkdir_at("warn/references");
	snprintf(fifo, sizeof(fifo), "%s/warn/references/pipe.md", root);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	link_at("/etc/passwd", "warn/scripts/out.py");
	skill_body("warn", "# Warn\n"                    /* line 5 */
	                   "Run scripts/missing.py.\n"   /* 6 */
	                   "Read scripts/data.json.\n"   /* 7 */
	                   "Run scripts/ok.py\n"         /* 8 */
	                   "Run scripts/out.py\n"        /* 9 */
	                   "See references/pipe.md.\n"); /* 10 */
	alarm(5); /* a FIFO opened for reading would block */
	expect_valid(&s, "warn");
	alarm(0);
	assert_int_equal(s.ncmds, 1);
	assert_string_equal(s.cmds[0].name, "scripts/ok.py");
	expect_warning(&s, "SKILL.md:6: the instructions name "
	                   "scripts/missing.py, which the skill does not have");
	expect_warning(&s, "SKILL.md:7: scripts/data.json is named by the "
	                   "instructions but is neither an executable");
	expect_warning(&s, "SKILL.md:6: the instructions name "
	                   "scripts/missing.py, which the skill does not have: "
	                   "not a command");
	expect_warning(&s, "SKILL.md:9: scripts/out.py resolves outside the "
	                   "skill directory: not a command");
	expect_warning(&s, "SKILL.md:10: references/pipe.md is not a regular "
	                   "file: not read for the scripts it names");
	skill_free(&s);
}

/*
 * A markdown file named in another case (FORMS.md; the skill has
 * forms.md) is read, as on a case-insensitive file system, with a
 * warning; two that match leave it unread. A script's name is exact.
 */
static void
test_instructions_case(void **state)
{
	struct skill s;

	(void)state;
	put("cas/forms.md", "Then run scripts/fill.py.\n", 0644);
	put("cas/scripts/fill.py", "print(1)\n", 0644);
	put("cas/scripts/Other.py", "print(2)\n", 0644);
	put("cas/ref/a.md", "scripts/one.py\n", 0644);
	put("cas/ref/A.md", "scripts/one.py\n", 0644);
	put("cas/scripts/one.py", "print(3)\n", 0644);
	skill_body(
	    "cas", "Read FORMS.md and REF/a.md, ref/A.MD; scripts/other.py.\n");
	expect_valid(&s, "cas");
	assert_int_equal(s.ncmds, 1);
	assert_string_equal(s.cmds[0].name, "scripts/fill.py");
	expect_warning(&s, "SKILL.md:5: the instructions name FORMS.md, which "
	                   "is forms.md here (the names differ in case): read "
	                   "it");
	expect_warning(&s,
	    "SKILL.md:5: the instructions name scripts/other.py, "
	    "which the skill does not have");
	skill_free(&s);
}

/* A commands block wins: only what it declares runs. */
static void
test_block_wins(void **state)
{
	struct skill s;

	(void)state;
	put("blk/scripts/a.py", "print('a')\n", 0644);
	put("blk/scripts/b.py", "print('b')\n", 0644);
	put("blk/skill.yaml", "commands:\n  go: scripts/a.py\n", 0644);
	skill_body("blk", "Run scripts/a.py or scripts/b.py.\n");
	expect_valid(&s, "blk");
	assert_int_equal(s.ncmds, 1);
	assert_string_equal(s.cmds[0].name, "go");
	assert_string_equal(s.cmds[0].interpreter, "python3");
	skill_free(&s);
	/* a sidecar of permissions only: the instructions' scripts */
	put("blk/skill.yaml", "permissions: { exec: [sh] }\n", 0644);
	expect_valid(&s, "blk");
	assert_int_equal(s.ncmds, 2);
	assert_string_equal(s.cmds[1].name, "scripts/b.py");
	skill_free(&s);
}

/*
 * What runs an entry: "interpreter:", a path as the name, "cwd", and
 * the load-time errors: an interpreter that is not there (declared or
 * by extension), an extension none runs.
 */
static void
test_interpreters(void **state)
{
	static char *const exts[] = {".zz"}, *const progs[] = {"sb-no-zz"};
	struct skill s;

	(void)state;
	put("ip/scripts/x.py", "print('x')\n", 0644);
	put("ip/scripts/y.foo", "y\n", 0644);
	put("ip/scripts/z.zz", "z\n", 0644);
	skill_md("ip", "ip",
	    "commands:\n"
	    "  scripts/x.py: { cwd: skill }\n"
	    "  other: { path: scripts/y.foo, interpreter: /bin/sh }\n");
	expect_valid(&s, "ip");
	assert_string_equal(s.cmds[0].name, "scripts/x.py");
	assert_string_equal(s.cmds[0].path, "scripts/x.py");
	assert_int_equal(s.cmds[0].cwd, GRANT_CWD_SKILL);
	assert_string_equal(s.cmds[1].interpreter, "/bin/sh");
	skill_free(&s);
	skill_md(
	    "ip", "ip", "commands: { x: { path: scripts/x.py, cwd: home } }\n");
	expect_invalid("ip", "command x: cwd: work");
	skill_md("ip", "ip",
	    "commands: { x: { path: scripts/x.py, interpreter: sb-no-interp } "
	    "}\n");
	expect_invalid("ip", "command x: interpreter \"sb-no-interp\": no such "
	                     "program in the sandbox's PATH");
	skill_md("ip", "ip",
	    "commands: { x: { path: scripts/x.py, interpreter: ../bin/sh } "
	    "}\n");
	expect_invalid("ip", "interpreter: a program name or an absolute path");
	skill_md("ip", "ip", "commands: { y: scripts/y.foo }\n");
	expect_invalid("ip", "command y: scripts/y.foo has no \"#!\" line and "
	                     "no interpreter runs \".foo\" files: set "
	                     "\"interpreter:\" in its command");
	/* the config's table: an interpreter it names that is not there */
	cmds_interpreters(exts, progs, 1);
	skill_md("ip", "ip", "commands: { z: scripts/z.zz }\n");
	expect_invalid("ip", "command z: interpreter \"sb-no-zz\": no such "
	                     "program");
	expect_invalid("ip", "(the interpreter of \".zz\" files: install it");
	skill_md("ip", "ip", "commands: { x: scripts/x.py }\n");
	expect_invalid("ip", "no interpreter runs \".py\" files");
	skillenv_defaults();
	/* names: paths in the skill, never out of it */
	skill_md("ip", "ip", "commands: { \"a//b\": scripts/x.py }\n");
	expect_invalid("ip", "bad command name \"a//b\"");
	skill_md("ip", "ip", "commands: { ../x.py: scripts/x.py }\n");
	expect_invalid("ip", "bad command name \"../x.py\"");
	skill_md("ip", "ip", "commands: { scripts/../../x.py: {} }\n");
	expect_invalid("ip", "bad command name");
}

/* Bounds: at most 64 scripts become commands, the rest a warning. */
static void
test_instructions_bounds(void **state)
{
	char body[8192], rel[64];
	size_t off = 0;
	struct skill s;
	int i;

	(void)state;
	for (i = 0; i < 70; i++) {
		snprintf(rel, sizeof(rel), "many/scripts/s%02d.py", i);
		put(rel, "print(1)\n", 0644);
		off += (size_t)snprintf(
		    body + off, sizeof(body) - off, "scripts/s%02d.py\n", i);
	}
	skill_body("many", body);
	expect_valid(&s, "many");
	assert_int_equal(s.ncmds, COMMANDS_MAX);
	assert_string_equal(s.cmds[63].name, "scripts/s63.py");
	expect_warning(&s, "more than 64 scripts named: scripts/s64.py and the "
	                   "rest are not commands");
	skill_free(&s);
}

static void
test_name_mismatch(void **state)
{
	(void)state;
	good_skill("alpha");
	skill_md("alpha", "beta", "commands: { run: scripts/run.sh }\n");
	expect_invalid("alpha",
	    "SKILL.md:2: Directory name 'alpha' must match skill name 'beta'");
}

static void
test_bad_names(void **state)
{
	static const char *const bad[] = {
	    "Bad_Name", "a--b", "-a", "a-", "UPPER", "a.b", NULL};
	static const char *const why[] = {"must be lowercase",
	    "cannot contain consecutive hyphens",
	    "cannot start or end with a hyphen",
	    "cannot start or end with a hyphen", "must be lowercase",
	    "contains invalid characters"};
	char big[80];
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		script(bad[i], "scripts/run.sh", 0755);
		skill_md(bad[i], bad[i], "commands: { run: scripts/run.sh }\n");
		expect_invalid(bad[i], why[i]);
		assert_false(skill_name_valid(bad[i]));
	}
	memset(big, 'a', 65);
	big[65] = '\0';
	assert_false(skill_name_valid(big));
	big[64] = '\0';
	assert_true(skill_name_valid(big));
	assert_false(skill_name_valid(""));
	assert_true(skill_name_valid("a-b-c"));
	assert_true(skill_name_valid("x1"));
}

static void
test_non_utf8_dir(void **state)
{
	struct skill s;
	const char *dname = "caf\xe9";

	(void)state;
	good_skill(dname);
	skill_load(&s, root, dname);
	assert_false(s.valid);
	assert_non_null(strstr(s.error, "not valid UTF-8"));
	assert_string_equal(s.name, "?");
	assert_null(s.dir);
	skill_free(&s);
}

static void
test_no_frontmatter(void **state)
{
	(void)state;
	good_skill("nofm");
	put("nofm/SKILL.md", "# Just a title\n\nname: nofm\n", 0644);
	expect_invalid("nofm", "no YAML frontmatter");
	put("nofm/SKILL.md", "---\nname: nofm\ndescription: d\n", 0644);
	expect_invalid("nofm", "no YAML frontmatter");
	put("nofm/SKILL.md", "\n---\nname: nofm\ndescription: d\n---\n", 0644);
	expect_invalid("nofm", "no YAML frontmatter");
	put("nofm/SKILL.md", "", 0644);
	expect_invalid("nofm", "no YAML frontmatter");
	/* Frontmatter that is not a mapping. */
	put("nofm/SKILL.md", "---\n- a\n- b\n---\n", 0644);
	expect_invalid("nofm", "SKILL.md:2: frontmatter must be a mapping");
}

static void
test_missing_required_fields(void **state)
{
	(void)state;
	good_skill("req");
	put("req/SKILL.md",
	    "---\ndescription: d\ncommands: { run: "
	    "scripts/run.sh }\n---\n",
	    0644);
	expect_invalid(
	    "req", "SKILL.md:2: Missing required field in frontmatter: name");
	put("req/SKILL.md",
	    "---\nname: req\ncommands: { run: "
	    "scripts/run.sh }\n---\n",
	    0644);
	expect_invalid("req",
	    "SKILL.md:2: Missing required field in frontmatter: description");
	skill_md("req", "req", "commands: {}\n");
	expect_invalid("req", "commands: 1..64 entries");
	skill_md("req", "req",
	    "commands: { run: scripts/run.sh }\n"
	    "hooks: [x]\n");
	expect_invalid("req", "SKILL.md:5: Unexpected fields in frontmatter: "
	                      "hooks. Only ['allowed-tools', 'compatibility', "
	                      "'description', 'license', 'metadata', 'name'] "
	                      "are allowed.");
}

static void
test_skill_md_not_regular(void **state)
{
	char target[PATH_MAX];

	(void)state;
	good_skill("lnk");
	/* The real manifest lives outside; SKILL.md is a symlink to it. */
	snprintf(target, sizeof(target), "%s/SKILL.md", outside);
	{
		FILE *f = fopen(target, "w");
		assert_non_null(f);
		fputs("---\nname: lnk\ndescription: d\ncommands: { run: "
		      "scripts/run.sh }\n---\n",
		    f);
		fclose(f);
	}
	snprintf(target, sizeof(target), "%s/lnk/SKILL.md", root);
	unlink(target);
	snprintf(target, sizeof(target), "%s/SKILL.md", outside);
	link_at(target, "lnk/SKILL.md");
	expect_invalid("lnk", "SKILL.md");
	/* A symlink to a sibling file inside the skill is refused too. */
	snprintf(target, sizeof(target), "%s/lnk/SKILL.md", root);
	unlink(target);
	put("lnk/README.md",
	    "---\nname: lnk\ndescription: d\ncommands: "
	    "{ run: scripts/run.sh }\n---\n",
	    0644);
	link_at("README.md", "lnk/SKILL.md");
	expect_invalid("lnk", "SKILL.md");
	/* A directory called SKILL.md, and no SKILL.md at all. */
	unlink(target);
	mkdir_at("lnk/SKILL.md");
	expect_invalid("lnk", "SKILL.md");
	rmdir(target);
	expect_invalid("lnk", "SKILL.md");
	/* Not a directory at all. */
	put("plainfile", "x", 0644);
	expect_invalid("plainfile", "not a directory");
	expect_invalid("absent", "not a directory");
}

static void
test_blocks_in_both_places(void **state)
{
	(void)state;
	good_skill("both");
	put("both/skill.yaml", "commands: { run: scripts/run.sh }\n", 0644);
	expect_invalid("both", "in both SKILL.md and skill.yaml");
	skill_md("both", "both", "limits: { timeout_ms: 5 }\n");
	expect_invalid("both", "in both SKILL.md and skill.yaml");
	skill_md("both", "both", "permissions: { exec: [sh] }\n");
	expect_invalid("both", "in both SKILL.md and skill.yaml");
}

static void
test_sidecar_only(void **state)
{
	struct skill s;

	(void)state;
	script("side", "scripts/run.sh", 0755);
	skill_md("side", "side", "allowed-tools: Bash(jq:*)\n");
	put("side/skill.yaml",
	    "# blocks live here, SKILL.md stays spec-valid\n"
	    "commands:\n"
	    "  run: scripts/run.sh\n"
	    "permissions:\n"
	    "  fs: { write: [\"$DATA_DIR/**\"] }\n"
	    "  network: { allow: [\"*.example.com:443\"] }\n"
	    "  exec: [sh]\n"
	    "limits: { timeout_ms: 1234 }\n",
	    0644);
	expect_valid(&s, "side");
	assert_string_equal(s.manifest, "skill.yaml");
	assert_int_equal(s.ncmds, 1);
	assert_int_equal(s.perms.n[PERM_FS_WRITE], 1);
	assert_string_equal(s.perms.v[PERM_FS_WRITE][0], "$DATA_DIR/**");
	assert_string_equal(s.perms.v[PERM_NETWORK][0], "*.example.com:443");
	assert_true(has(s.perms.v[PERM_EXEC], s.perms.n[PERM_EXEC], "sh"));
	assert_true(has(s.perms.v[PERM_EXEC], s.perms.n[PERM_EXEC], "jq"));
	assert_int_equal(s.limits.timeout_ms, 1234);
	skill_free(&s);

	/* Errors in the sidecar name skill.yaml and its line. */
	put("side/skill.yaml",
	    "commands:\n"
	    "  run: scripts/run.sh\n"
	    "permissions:\n"
	    "  exec: [\"rm -rf\"]\n",
	    0644);
	expect_invalid("side", "skill.yaml:4: exec: invalid entry");
	put("side/skill.yaml",
	    "commands: { run: scripts/run.sh }\n"
	    "name: side\n",
	    0644);
	expect_invalid("side", "skill.yaml:2: unknown key \"name\"");
	/* A sidecar that is a symlink is refused. */
	put("side/real.yaml", "commands: { run: scripts/run.sh }\n", 0644);
	{
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/side/skill.yaml", root);
		unlink(p);
	}
	link_at("real.yaml", "side/skill.yaml");
	expect_invalid("side", "skill.yaml");
}

static void
test_fs_globs_contained(void **state)
{
	char target[PATH_MAX];

	(void)state;
	good_skill("globs");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { read: [\"$SKILL_DIR/../x\"] }\n");
	expect_invalid("globs", "fs.read: invalid entry \"$SKILL_DIR/../x\"");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { write: [\"$SKILL_DIR/..\"] }\n");
	expect_invalid("globs", "fs.write: invalid entry");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { read: [\"relative/**\"] }\n");
	expect_invalid("globs", "fs.read: invalid entry");

	/* A symlink inside the skill that leads outside it. */
	snprintf(target, sizeof(target), "%s", outside);
	link_at(target, "globs/link");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { read: [\"$SKILL_DIR/link/**\"] }\n");
	expect_invalid("globs", "fs.read $SKILL_DIR/link/** resolves outside "
	                        "the skill directory");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { read: [\"$SKILL_DIR/link\"] }\n");
	expect_invalid("globs", "resolves outside the skill directory");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { write: [\"$SKILL_DIR/link/out/**\"] }\n");
	expect_invalid("globs", "fs.write $SKILL_DIR/link/out/** resolves "
	                        "outside");
	/* Through the link to a path that does not exist (yet). */
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { read: [\"$SKILL_DIR/link/later/**\"] }\n");
	expect_invalid("globs", "resolves outside the skill directory");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { read: [\"$SKILL_DIR/link/a/b/c.txt\"] }\n");
	expect_invalid("globs", "resolves outside the skill directory");
	/* A dangling symlink: where it leads may appear later. */
	link_at("/nonexistent-sb-test/dir", "globs/dangling");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { read: [\"$SKILL_DIR/dangling/**\"] }\n");
	expect_invalid("globs", "resolves outside the skill directory");
	skill_md("globs", "globs",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs: { read: [\"$SKILL_DIR/dangling/x/y\"] }\n");
	expect_invalid("globs", "resolves outside the skill directory");
}

/*
 * An fs entry means what the sandbox does with it: a wildcard only at
 * the end (everything beneath a directory), never /, /proc, /sys, /dev
 * or the daemon's own paths; each refusal names the file and line.
 */
static void
test_fs_exact(void **state)
{
	static const struct {
		const char *perm, *why;
	} bad[] = {
	    {"write: [\"/srv/host/*/build/**\"]", "a wildcard may only end"},
	    {"read: [\"/srv/*.conf\"]", "a wildcard may only end"},
	    {"read: [\"/srv/**/x\"]", "a wildcard may only end"},
	    {"write: [\"$SKILL_DIR/out/*.txt\"]", "a wildcard may only end"},
	    {"read: [\"/proc/**\"]", "/proc can never be granted"},
	    {"read: [\"/proc\"]", "/proc can never be granted"},
	    {"write: [\"/dev/shm/**\"]", "/dev can never be granted"},
	    {"read: [\"/sys/kernel\"]", "/sys can never be granted"},
	    {"read: [\"/**\"]", "the whole host file system"},
	    {"read: [\"/\"]", "the whole host file system"},
	    {"read: [\"/var/**\"]", "reaches the daemon's own /var/lib/sb"},
	    {"write: [\"/var/lib/sb/data/x.img\"]", "the daemon's own"},
	    {"read: [\"/var/lib/sb/\"]", "the daemon's own"},
	    {"write: [\"$DATA_DIR/cache/**\"]", "whole data dir or none"},
	    /* a second spelling of a path never reaches the checks */
	    {"read: [\"//proc/**\"]", "cannot be granted: write it one way"},
	    {"write: [\"//dev/shm/**\"]",
	        "cannot be granted: write it one way"},
	    {"read: [\"/tmp/.\"]", "cannot be granted: write it one way"},
	    {"write: [\"/.\"]", "cannot be granted: write it one way"},
	    {"read: [\"/var//lib/sb/**\"]",
	        "cannot be granted: write it one way"},
	    {"read: [\"/srv/./x\"]", "cannot be granted: write it one way"},
	};
	char *prot[] = {"/var/lib/sb", "/run/sb"};
	char perm[256];
	struct skill s;
	size_t i;

	(void)state;
	perms_protect(prot, 2);
	good_skill("exact");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(perm, sizeof(perm),
		    "commands: { run: scripts/run.sh }\n"
		    "permissions:\n  fs: { %s }\n",
		    bad[i].perm);
		skill_md("exact", "exact", perm);
		expect_invalid("exact", bad[i].why);
		expect_invalid("exact", "SKILL.md:");
	}
	/* What the sandbox does exactly, and the baseline's own dirs. */
	skill_md("exact", "exact",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n  fs:\n"
	    "    read: [\"/usr/share/zoneinfo/**\", \"/etc/hostname\", "
	    "\"/var/lib/other/**\", \"/run/sbx/**\", \"$WORK_DIR/*.txt\"]\n"
	    "    write: [\"$DATA_DIR/**\", \"$WORK_DIR/out/*.csv\", "
	    "\"/srv/build/**\"]\n");
	expect_valid(&s, "exact");
	skill_free(&s);
	perms_protect(NULL, 0);
}

static void
test_fs_globs_inside_ok(void **state)
{
	struct skill s;

	(void)state;
	good_skill("fine");
	mkdir_at("fine/data");
	link_at("data", "fine/alias");
	skill_md("fine", "fine",
	    "commands: { run: scripts/run.sh }\n"
	    "permissions:\n"
	    "  fs:\n"
	    "    read: [\"$SKILL_DIR/**\", \"$SKILL_DIR/data/*.csv\", "
	    "\"$SKILL_DIR/alias/**\", \"$SKILL_DIR/not-yet/**\", "
	    "\"$SKILL_DIR\"]\n");
	expect_valid(&s, "fine");
	assert_int_equal(s.perms.n[PERM_FS_READ], 5);
	skill_free(&s);
}

static void
test_allowed_tools(void **state)
{
	struct skill s;

	(void)state;
	good_skill("tools");
	skill_md("tools", "tools",
	    "allowed-tools: Bash(git:*) Bash(curl) "
	    "Read\n"
	    "commands: { run: scripts/run.sh }\n"
	    "permissions: { exec: [sh] }\n");
	expect_valid(&s, "tools");
	assert_int_equal(s.perms.n[PERM_EXEC], 3);
	assert_true(has(s.perms.v[PERM_EXEC], s.perms.n[PERM_EXEC], "sh"));
	assert_true(has(s.perms.v[PERM_EXEC], s.perms.n[PERM_EXEC], "git"));
	assert_true(has(s.perms.v[PERM_EXEC], s.perms.n[PERM_EXEC], "curl"));
	assert_false(has(s.perms.v[PERM_EXEC], s.perms.n[PERM_EXEC], "Read"));
	skill_free(&s);

	/* A list, and no permissions block at all; junk is skipped. */
	skill_md("tools", "tools",
	    "allowed-tools:\n"
	    "  - Bash(npm run:*)\n"
	    "  - Bash(/bin/rm:*)\n"
	    "  - Bash($(id))\n"
	    "  - Write\n"
	    "commands: { run: scripts/run.sh }\n");
	expect_valid(&s, "tools");
	assert_int_equal(s.perms.n[PERM_EXEC], 1);
	assert_string_equal(s.perms.v[PERM_EXEC][0], "npm");
	assert_null(s.perms.v[PERM_EXEC][1]);
	skill_free(&s);
}

static void
test_yaml_error_lines_are_skill_md_lines(void **state)
{
	(void)state;
	good_skill("lines");
	/* SKILL.md line 1 is "---"; the frontmatter starts at line 2. */
	put("lines/SKILL.md",
	    "---\n"                   /* 1 */
	    "name: lines\n"           /* 2 */
	    "description: d\n"        /* 3 */
	    "commands:\n"             /* 4 */
	    "  run: scripts/run.sh\n" /* 5 */
	    "permissions:\n"          /* 6 */
	    "  bogus: [x]\n"          /* 7 */
	    "---\n",
	    0644);
	expect_invalid("lines", "SKILL.md:7: unknown key \"bogus\"");
	put("lines/SKILL.md",
	    "---\n"               /* 1 */
	    "name: lines\n"       /* 2 */
	    "description: d: e\n" /* 3 */
	    "commands: { run: scripts/run.sh }\n"
	    "---\n",
	    0644);
	expect_invalid("lines", "SKILL.md:3:");
	put("lines/SKILL.md",
	    "---\n"         /* 1 */
	    "name: Lines\n" /* 2 */
	    "description: d\n"
	    "---\n",
	    0644);
	expect_invalid(
	    "lines", "SKILL.md:2: Skill name 'Lines' must be lowercase");
	put("lines/SKILL.md",
	    "---\n"                    /* 1 */
	    "name: lines\n"            /* 2 */
	    "description: d\n"         /* 3 */
	    "commands:\n"              /* 4 */
	    "  run: scripts/nope.sh\n" /* 5 */
	    "---\n",
	    0644);
	expect_invalid("lines", "SKILL.md:5: command run");
	put("lines/SKILL.md",
	    "---\n"                               /* 1 */
	    "name: lines\n"                       /* 2 */
	    "description: d\n"                    /* 3 */
	    "commands: { run: scripts/run.sh }\n" /* 4 */
	    "limits:\n"                           /* 5 */
	    "  timeout_ms: 0\n"                   /* 6 */
	    "---\n",
	    0644);
	expect_invalid("lines", "SKILL.md:6:");
	put("lines/SKILL.md",
	    "---\n"
	    "name: lines\n"
	    "description: caf\xe9\n"
	    "commands: { run: scripts/run.sh }\n"
	    "---\n",
	    0644);
	expect_invalid("lines", "UTF-8");
}

static void
test_registry_bad_does_not_stop_good(void **state)
{
	struct registry r;
	const struct skill *s;
	char *dirs[2];
	char second[256];

	(void)state;
	good_skill("good");
	good_skill("zeta");
	good_skill("bad");
	skill_md("bad", "bad", "commands: { run: /bin/sh }\n");
	mkdir_at("empty");
	put("stray-file", "x", 0644);
	good_skill(".hidden");
	link_at("good", "alias");

	/* A second skills dir, one skill repeated: the first one wins. */
	snprintf(second, sizeof(second), "%s/more", outside);
	mkdir(second, 0755);
	{
		char p[PATH_MAX];
		FILE *f;
		snprintf(p, sizeof(p), "%s/extra", second);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/extra/run.sh", second);
		f = fopen(p, "w");
		fputs("#!/bin/sh\n", f);
		fclose(f);
		chmod(p, 0755);
		snprintf(p, sizeof(p), "%s/extra/SKILL.md", second);
		f = fopen(p, "w");
		fputs("---\nname: extra\ndescription: d\ncommands: { run: "
		      "run.sh }\n---\n",
		    f);
		fclose(f);
	}

	dirs[0] = root;
	dirs[1] = second;
	registry_load(&r, dirs, 2);
	/* good, zeta, bad, empty, stray-file, alias, extra; not .hidden */
	assert_int_equal(r.n, 7);
	assert_non_null(s = registry_find(&r, "good"));
	assert_true(s->valid);
	assert_non_null(s = registry_find(&r, "zeta"));
	assert_true(s->valid);
	assert_non_null(s = registry_find(&r, "extra"));
	assert_true(s->valid);
	assert_non_null(s = registry_find(&r, "bad"));
	assert_false(s->valid);
	assert_non_null(strstr(s->error, "must be relative"));
	assert_non_null(s = registry_find(&r, "empty"));
	assert_false(s->valid);
	assert_non_null(s = registry_find(&r, "stray-file"));
	assert_false(s->valid);
	assert_non_null(s = registry_find(&r, "alias"));
	assert_false(s->valid);
	assert_null(registry_find(&r, ".hidden"));
	assert_null(registry_find(&r, "nope"));
	/* Sorted by name. */
	assert_string_equal(r.skills[0].name, "alias");
	assert_string_equal(r.skills[6].name, "zeta");
	registry_free(&r);
	assert_int_equal(r.n, 0);

	/* A missing skills dir is logged and skipped. */
	snprintf(second, sizeof(second), "%s/missing", root);
	dirs[1] = second;
	registry_load(&r, dirs, 2);
	assert_non_null(registry_find(&r, "good"));
	registry_free(&r);
}

/* This thread's CPU time: a bound that a loaded machine cannot break. */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* expect_invalid, in well under a second of CPU. */
static void
expect_invalid_fast(const char *dname, const char *why)
{
	uint64_t t0 = cpu_ns();

	expect_invalid(dname, why);
	if (cpu_ns() - t0 > FAST_NS)
		fail_msg("skill %s refused after %llu ms of CPU", dname,
		    (unsigned long long)((cpu_ns() - t0) / 1000000));
}

/* A FIFO named skill.yaml blocked policyd at the next reload (every
 * call then hung). It is refused, never opened, and the skill beside
 * it loads. */
static void
test_sidecar_fifo(void **state)
{
	struct registry r;
	const struct skill *s;
	char path[PATH_MAX], *dirs[1] = {root};

	(void)state;
	script("fifo", "scripts/run.sh", 0755);
	skill_md("fifo", "fifo", "");
	snprintf(path, sizeof(path), "%s/fifo/skill.yaml", root);
	assert_int_equal(mkfifo(path, 0644), 0);
	good_skill("good");
	alarm(10); /* a blocking open: the test dies instead of hanging */
	expect_invalid_fast("fifo", "skill.yaml: a FIFO, not a regular file");
	registry_load(&r, dirs, 1);
	alarm(0);
	assert_non_null(s = registry_find(&r, "fifo"));
	assert_false(s->valid);
	assert_non_null(s = registry_find(&r, "good"));
	assert_true(s->valid);
	registry_free(&r);
	/* SKILL.md itself as a FIFO, or a device. */
	unlink(path);
	snprintf(path, sizeof(path), "%s/fifo/SKILL.md", root);
	unlink(path);
	assert_int_equal(mkfifo(path, 0644), 0);
	alarm(10);
	expect_invalid_fast("fifo", "SKILL.md: a FIFO, not a regular file");
	alarm(0);
	unlink(path);
	link_at("/dev/zero", "fifo/SKILL.md");
	expect_invalid_fast("fifo", "SKILL.md: a symbolic link");
}

/* Deep nesting in skill.yaml (60,000 flow sequences: seconds of CPU in
 * libyaml) is refused from the text. */
static void
test_sidecar_deep(void **state)
{
	size_t n = 60000;
	char *text = malloc(n + 32);

	(void)state;
	assert_non_null(text);
	script("deep", "scripts/run.sh", 0755);
	skill_md("deep", "deep", "");
	strcpy(text, "commands: ");
	memset(text + 10, '[', n);
	strcpy(text + 10 + n, "\n");
	put("deep/skill.yaml", text, 0644);
	free(text);
	expect_invalid_fast(
	    "deep", "skill.yaml:1: nested deeper than 32 levels");
}

/* A list 100,000 deep in allowed-tools: libyaml loads it fast, but the
 * walk over it recursed once a level and overflowed the stack
 * (policyd died on SIGSEGV). */
static void
test_deep_allowed_tools(void **state)
{
	size_t n = 100000, i;
	char *md = malloc(2 * n + 256), *p;

	(void)state;
	assert_non_null(md);
	script("tools", "scripts/run.sh", 0755);
	p = md + sprintf(md, "---\nname: tools\ndescription: d\n"
	                     "commands: {run: scripts/run.sh}\n"
	                     "allowed-tools:\n  ");
	for (i = 0; i < n; i++, p += 2)
		memcpy(p, "- ", 2);
	strcpy(p, "Bash(ls)\n---\n");
	put("tools/SKILL.md", md, 0644);
	free(md);
	expect_invalid_fast(
	    "tools", "SKILL.md:6: nested deeper than 32 levels");
}

/* What comes after a second "---" in skill.yaml was dropped silently;
 * aliases are refused like everywhere else. */
static void
test_sidecar_one_document_no_alias(void **state)
{
	(void)state;
	script("side", "scripts/run.sh", 0755);
	skill_md("side", "side", "");
	put("side/skill.yaml",
	    "commands: { run: scripts/run.sh }\n"
	    "---\n"
	    "permissions: { exec: [sh] }\n",
	    0644);
	expect_invalid_fast("side", "skill.yaml:2: a second YAML document");
	put("side/skill.yaml",
	    "commands: &c { run: scripts/run.sh }\n"
	    "limits: *c\n",
	    0644);
	expect_invalid_fast("side", "skill.yaml:1: anchor \"&c\"");
	put("side/skill.yaml",
	    "commands: { run: scripts/run.sh, run: scripts/run.sh }\n", 0644);
	expect_invalid_fast("side", "skill.yaml:1: duplicate key \"run\"");
	/* A skill.yaml that is a dangling symlink is refused, not ignored. */
	{
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/side/skill.yaml", root);
		unlink(p);
	}
	link_at("nowhere.yaml", "side/skill.yaml");
	expect_invalid_fast("side", "skill.yaml: a symbolic link");
}

/* The skills shipped with the project load, and are valid, without a
 * warning: each passes the Agent Skills rules (docs/skills.md). */
static void
test_shipped_skills_valid(void **state)
{
	struct registry r;
	char *dirs[1] = {(char *)"skills"};
	size_t i;

	(void)state;
	registry_load(&r, dirs, 1);
	assert_true(r.n >= 2);
	for (i = 0; i < r.n; i++)
		if (!r.skills[i].valid)
			fail_msg("shipped skill %s is invalid: %s",
			    r.skills[i].name, r.skills[i].error);
		else if (r.skills[i].nwarnings > 0)
			fail_msg("shipped skill %s: %s", r.skills[i].name,
			    r.skills[i].warnings[0]);
	assert_non_null(registry_find(&r, "hello"));
	assert_non_null(registry_find(&r, "notes"));
	registry_free(&r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_valid_skill),
	    T(test_command_description),
	    T(test_inner_symlink_command_ok),
	    T(test_symlinked_root),
	    T(test_command_symlink_outside),
	    T(test_command_dotdot_and_absolute),
	    T(test_entry_missing_or_not_executable),
	    T(test_instructions_commands),
	    T(test_instructions_only),
	    T(test_instructions_warnings),
	    T(test_instructions_case),
	    T(test_block_wins),
	    T(test_interpreters),
	    T(test_instructions_bounds),
	    T(test_name_mismatch),
	    T(test_bad_names),
	    T(test_non_utf8_dir),
	    T(test_no_frontmatter),
	    T(test_missing_required_fields),
	    T(test_skill_md_not_regular),
	    T(test_blocks_in_both_places),
	    T(test_sidecar_only),
	    T(test_fs_globs_contained),
	    T(test_fs_globs_inside_ok),
	    T(test_fs_exact),
	    T(test_allowed_tools),
	    T(test_yaml_error_lines_are_skill_md_lines),
	    T(test_registry_bad_does_not_stop_good),
	    T(test_shipped_skills_valid),
	    T(test_sidecar_fifo),
	    T(test_sidecar_deep),
	    T(test_deep_allowed_tools),
	    T(test_sidecar_one_document_no_alias),
#undef T
	};

	skillenv_defaults();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
