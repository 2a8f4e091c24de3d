/*
 * test_policy_load.c: loading the admin policy directory. A good set
 * loads with its defaults; every mistake is reported as "file:line:" at
 * the offending line; one bad file rejects the whole set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#define _XOPEN_SOURCE_EXTENDED 1
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tmptree.h"
#include "../../policyd/policyd_policy.h"

/* "Well under a second" of CPU; the sanitizers make all code slower. */
#ifdef __SANITIZE_ADDRESS__
#define FAST_NS (5 * 500 * 1000000ULL)
#else
#define FAST_NS (500 * 1000000ULL)
#endif

struct tdir {
	char path[64];
};

static void
put(const struct tdir *t, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->path, name);
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

static int
setup(void **state)
{
	struct tdir *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	snprintf(t->path, sizeof(t->path), "/tmp/sb-test-policy.XXXXXX");
	if (mkdtemp(t->path) == NULL) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int
teardown(void **state)
{
	struct tdir *t = *state;

	alarm(0);
	tmptree_rm(t->path);
	free(t);
	return 0;
}

static void
assert_empty(const struct policy *p)
{
	assert_int_equal(p->npr, 0);
	assert_int_equal(p->nrules, 0);
	assert_int_equal(p->nenabled, 0);
	assert_null(p->pr);
	assert_null(p->rules);
	assert_null(p->enabled);
}

/* Loading must fail with a message that starts at "file:line:" (after
 * an optional directory) and says why; the policy is left empty. */
static void
expect_error(const struct tdir *t, const char *where, const char *why)
{
	struct policy p;
	struct error e;
	const char *at;

	memset(&e, 0, sizeof(e));
	memset(&p, 0x5a, sizeof(p));
	if (policy_load(&p, t->path, &e) == 0) {
		policy_free(&p);
		fail_msg("policy loaded; expected \"%s: %s\"", where, why);
	}
	assert_int_equal(e.type, ERR_BAD_REQUEST);
	if ((at = strstr(e.msg, where)) == NULL ||
	    (at != e.msg && at[-1] != '/') || at[strlen(where)] != ':')
		fail_msg("error \"%s\" is not at \"%s\"", e.msg, where);
	if (strstr(e.msg, why) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", e.msg, why);
	assert_empty(&p);
	policy_free(&p);
}

static const char principals_yaml[] = "# who is who\n"           /* 1 */
                                      "principals:\n"            /* 2 */
                                      "  admins:\n"              /* 3 */
                                      "    uids: [0]\n"          /* 4 */
                                      "    admin: true\n"        /* 5 */
                                      "  devs:\n"                /* 6 */
                                      "    uids: [1000, 1001]\n" /* 7 */
                                      "    gids: [100]\n";       /* 8 */

static const char rules_yaml[] =
    "skills:\n"                           /* 1 */
    "  enabled: [hello, notes]\n"         /* 2 */
    "rules:\n"                            /* 3 */
    "  - name: greet\n"                   /* 4 */
    "    principals: [\"*\"]\n"           /* 5 */
    "    skills: [hello]\n"               /* 6 */
    "    action: allow\n"                 /* 7 */
    "    rate: { per_minute: 30 }\n"      /* 8 */
    "  - name: notes\n"                   /* 9 */
    "    principals: [devs, admins]\n"    /* 10 */
    "    skills: [notes]\n"               /* 11 */
    "    commands: [add, list]\n"         /* 12 */
    "    phases: [execution, planning]\n" /* 13 */
    "    action: ask\n"                   /* 14 */
    "    ceiling:\n"                      /* 15 */
    "      fs: { read: [\"/usr/share/**\"], write: [\"$DATA_DIR/**\"] }\n"
    "      network: { allow: [\"*.example.com:443\"] }\n" /* 17 */
    "      exec: [sh, \"py*\"]\n"                         /* 18 */
    "      env: [LANG, \"LC_*\"]\n"                       /* 19 */
    "    limits: { timeout_ms: 5000, memory_mb: 64, pids: 8, "
    "output_bytes: 1024 }\n"                   /* 20 */
    "    rate: { per_minute: 60, burst: 5 }\n" /* 21 */
    "  - name: nobody\n"                       /* 22 */
    "    principals: [devs]\n"                 /* 23 */
    "    skills: [\"*\"]\n"                    /* 24 */
    "    action: deny\n";                      /* 25 */

static void
test_good_set(void **state)
{
	struct tdir *t = *state;
	struct policy p;
	struct error e;
	const struct rule *r;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml", rules_yaml);
	memset(&e, 0, sizeof(e));
	if (policy_load(&p, t->path, &e) != 0)
		fail_msg("good policy refused: %s", e.msg);
	assert_int_equal(p.nfiles, 2);
	assert_int_equal(p.npr, 2);
	assert_string_equal(p.pr[0].name, "admins");
	assert_int_equal(p.pr[0].admin, 1);
	assert_int_equal(p.pr[0].nuids, 1);
	assert_int_equal(p.pr[0].uids[0], 0);
	assert_string_equal(p.pr[1].name, "devs");
	assert_int_equal(p.pr[1].admin, 0);
	assert_int_equal(p.pr[1].nuids, 2);
	assert_int_equal(p.pr[1].uids[1], 1001);
	assert_int_equal(p.pr[1].ngids, 1);
	assert_int_equal(p.pr[1].gids[0], 100);
	assert_int_equal(p.nenabled, 2);
	assert_string_equal(p.enabled[1], "notes");
	assert_int_equal(p.nrules, 3);

	/* Defaults: every command, the execution phase, burst = rate. */
	r = &p.rules[0];
	assert_string_equal(r->name, "greet");
	assert_string_equal(r->where, "10-rules.yaml:4");
	assert_int_equal(r->action, ACT_ALLOW);
	assert_int_equal(r->ncommands, 1);
	assert_string_equal(r->commands[0], "*");
	assert_int_equal(r->nphases, 1);
	assert_string_equal(r->phases[0], "execution");
	assert_int_equal(r->rate.per_minute, 30);
	assert_int_equal(r->rate.burst, 30);
	assert_int_equal(r->limits.timeout_ms, 0);
	assert_int_equal(r->ceiling.n[PERM_NETWORK], 0);

	r = &p.rules[1];
	assert_string_equal(r->where, "10-rules.yaml:9");
	assert_int_equal(r->action, ACT_ASK);
	assert_int_equal(r->nprincipals, 2);
	assert_int_equal(r->ncommands, 2);
	assert_string_equal(r->commands[1], "list");
	assert_int_equal(r->nphases, 2);
	assert_int_equal(r->rate.per_minute, 60);
	assert_int_equal(r->rate.burst, 5);
	assert_int_equal(r->limits.timeout_ms, 5000);
	assert_int_equal(r->limits.memory_mb, 64);
	assert_int_equal(r->limits.pids, 8);
	assert_int_equal(r->limits.output_bytes, 1024);
	assert_int_equal(r->ceiling.n[PERM_FS_READ], 1);
	assert_int_equal(r->ceiling.n[PERM_FS_WRITE], 1);
	assert_string_equal(r->ceiling.v[PERM_FS_WRITE][0], "$DATA_DIR/**");
	assert_string_equal(r->ceiling.v[PERM_NETWORK][0], "*.example.com:443");
	assert_int_equal(r->ceiling.n[PERM_EXEC], 2);
	assert_int_equal(r->ceiling.n[PERM_ENV], 2);

	r = &p.rules[2];
	assert_string_equal(r->where, "10-rules.yaml:22");
	assert_int_equal(r->action, ACT_DENY);
	assert_int_equal(r->rate.per_minute, 0);

	assert_true(policy_is_admin(&p, 0, 0));
	assert_false(policy_is_admin(&p, 1000, 100));
	assert_true(policy_skill_enabled(&p, "hello"));
	assert_false(policy_skill_enabled(&p, "hell"));
	policy_free(&p);
	assert_empty(&p);
}

static void
test_shipped_examples_load(void **state)
{
	struct policy p;
	struct error e;

	(void)state;
	memset(&e, 0, sizeof(e));
	if (policy_load(&p, "etc/policy.d", &e) != 0)
		fail_msg("etc/policy.d refused: %s", e.msg);
	/* Counts follow the examples; they must at least say something. */
	assert_true(p.nfiles >= 1);
	assert_true(p.npr >= 1);
	assert_true(p.nrules >= 1);
	policy_free(&p);
}

static void
test_empty_dir_and_missing_dir(void **state)
{
	struct tdir *t = *state;
	struct policy p;
	struct error e;
	char missing[128];

	assert_int_equal(policy_load(&p, t->path, &e), 0);
	assert_int_equal(p.nfiles, 0);
	assert_empty(&p);
	policy_free(&p);

	snprintf(missing, sizeof(missing), "%s/nope", t->path);
	assert_int_equal(policy_load(&p, missing, &e), -1);
	assert_non_null(strstr(e.msg, missing));
	assert_empty(&p);
}

static void
test_unknown_key(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: r\n"
	    "    principals: [devs]\n"
	    "    skills: [hello]\n"
	    "    acton: allow\n"
	    "    action: allow\n");
	expect_error(t, "10-rules.yaml:5", "unknown key \"acton\"");
}

static void
test_unknown_top_level_key(void **state)
{
	struct tdir *t = *state;

	put(t, "a.yaml",
	    "principals:\n"
	    "  devs: { uids: [1] }\n"
	    "rule:\n"
	    "  - name: r\n");
	expect_error(t, "a.yaml:3", "unknown key \"rule\"");
}

static void
test_bad_action(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: ok\n"
	    "    principals: [devs]\n"
	    "    skills: [hello]\n"
	    "    action: allow\n"
	    "  - name: r\n"
	    "    principals: [devs]\n"
	    "    skills: [hello]\n"
	    "    action: permit\n");
	expect_error(t, "10-rules.yaml:9", "action must be allow, ask or deny");
}

static void
test_missing_action(void **state)
{
	struct tdir *t = *state;

	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: r\n"
	    "    principals: [\"*\"]\n"
	    "    skills: [hello]\n");
	expect_error(t, "10-rules.yaml:2", "needs an action");
}

/* The rule naming an undefined principal is the one reported. */
static void
test_unknown_principal(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: fine\n"
	    "    principals: [devs]\n"
	    "    skills: [hello]\n"
	    "    action: allow\n"
	    "  - name: ghostly\n"
	    "    principals: [devs, ghost]\n"
	    "    skills: [hello]\n"
	    "    action: allow\n");
	expect_error(t, "10-rules.yaml:6", "unknown principal \"ghost\"");
}

/* Principals must be defined in an earlier (or the same) file. */
static void
test_principal_defined_later(void **state)
{
	struct tdir *t = *state;

	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: early\n"
	    "    principals: [devs]\n"
	    "    skills: [hello]\n"
	    "    action: allow\n");
	put(t, "20-principals.yaml", principals_yaml);
	expect_error(t, "10-rules.yaml:2", "unknown principal \"devs\"");
}

static void
test_unknown_phase(void **state)
{
	struct tdir *t = *state;

	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: r1\n"
	    "    principals: [\"*\"]\n"
	    "    skills: [hello]\n"
	    "    action: allow\n"
	    "\n"
	    "  - name: r2\n"
	    "    principals: [\"*\"]\n"
	    "    skills: [hello]\n"
	    "    phases: [execution, review]\n"
	    "    action: allow\n");
	expect_error(t, "10-rules.yaml:7", "unknown phase \"review\"");
}

/* Empty lists take the defaults, as absent ones do (and leak nothing,
 * which the sanitizer build checks). */
static void
test_empty_lists_default(void **state)
{
	struct tdir *t = *state;
	struct policy p;
	struct error e;

	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: r1\n"
	    "    principals: [\"*\"]\n"
	    "    skills: [hello]\n"
	    "    commands: []\n"
	    "    phases: []\n"
	    "    action: allow\n");
	assert_int_equal(policy_load(&p, t->path, &e), 0);
	assert_int_equal(p.nrules, 1);
	assert_int_equal(p.rules[0].ncommands, 1);
	assert_string_equal(p.rules[0].commands[0], "*");
	assert_int_equal(p.rules[0].nphases, 1);
	assert_string_equal(p.rules[0].phases[0], "execution");
	policy_free(&p);
}

static void
test_principal_without_ids(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml",
	    "principals:\n"
	    "  admins: { uids: [0] }\n"
	    "  nobody: { admin: false }\n");
	expect_error(t, "00-principals.yaml:3", "names no uid or gid");
}

static void
test_principal_empty_id_lists(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml",
	    "principals:\n"
	    "  admins: { uids: [0] }\n"
	    "  nobody:\n"
	    "    uids: []\n"
	    "    gids: []\n");
	expect_error(t, "00-principals.yaml:4", "names no uid or gid");
}

static void
test_principal_bad_uid(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml",
	    "principals:\n"
	    "  devs:\n"
	    "    uids: [1000, -1]\n");
	expect_error(t, "00-principals.yaml:3", "whole number");
}

static void
test_duplicate_principal_across_files(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "50-more.yaml",
	    "# more people\n"
	    "principals:\n"
	    "  ops: { uids: [2000] }\n"
	    "  devs: { uids: [3000] }\n");
	expect_error(t, "50-more.yaml:4", "principal \"devs\" defined twice");
}

static void
test_yaml_syntax_error(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: r\n"
	    "    principals: [devs\n"
	    "    skills: [hello]\n"
	    "  - action: allow\n"
	    "oops: ]\n");
	{
		struct policy p;
		struct error e;
		const char *at;

		assert_int_equal(policy_load(&p, t->path, &e), -1);
		assert_empty(&p);
		/* libyaml reports where it gave up; it is in this file, past
		 * the unclosed list, and named by line. */
		if ((at = strstr(e.msg, "10-rules.yaml:")) == NULL)
			fail_msg(
			    "syntax error \"%s\" names no file:line", e.msg);
		at += strlen("10-rules.yaml:");
		if (atoi(at) < 3 || atoi(at) > 6)
			fail_msg(
			    "syntax error \"%s\" is not at lines 3..6", e.msg);
	}
}

static void
test_yaml_syntax_error_exact_line(void **state)
{
	struct tdir *t = *state;

	put(t, "10-rules.yaml",
	    "skills:\n"
	    "  enabled: [hello]\n"
	    "rules: x: y\n");
	expect_error(t, "10-rules.yaml:3", "mapping values are not allowed");
}

static void
test_bad_ceiling_network(void **state)
{
	struct tdir *t = *state;

	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - name: r\n"
	    "    principals: [\"*\"]\n"
	    "    skills: [hello]\n"
	    "    action: allow\n"
	    "    ceiling:\n"
	    "      exec: [sh]\n"
	    "      network: {allow: [nohost]}\n");
	expect_error(
	    t, "10-rules.yaml:8", "network.allow: invalid entry \"nohost\"");
}

static void
test_bad_ceiling_entries(void **state)
{
	static const struct {
		const char *line, *why;
	} cases[] = {
	    {"fs: { read: [\"relative/path\"] }", "fs.read: invalid entry"},
	    {"fs: { write: [\"$DATA_DIR/../etc\"] }",
	        "fs.write: invalid entry"},
	    {"fs: { exec: [\"/x\"] }", "unknown key \"exec\""},
	    {"network: { allow: [\"host:0\"] }", "network.allow: invalid"},
	    {"network: [\"a.b:1\"]", "network must be a mapping"},
	    {"exec: [\"rm -rf\"]", "exec: invalid entry"},
	    {"env: [\"1BAD\"]", "env: invalid entry"},
	    {"bogus: [x]", "unknown key \"bogus\""},
	};
	struct tdir *t = *state;
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text),
		    "rules:\n"
		    "  - name: r\n"
		    "    principals: [\"*\"]\n"
		    "    skills: [hello]\n"
		    "    action: allow\n"
		    "    ceiling:\n"
		    "      %s\n",
		    cases[i].line);
		put(t, "10-rules.yaml", text);
		expect_error(t, "10-rules.yaml:7", cases[i].why);
	}
}

static void
test_bad_limits_and_rate(void **state)
{
	static const struct {
		const char *line, *why;
	} cases[] = {
	    {"limits: { timeout_ms: 0 }", "whole number"},
	    {"limits: { memory_mb: lots }", "whole number"},
	    {"limits: { cpu: 1 }", "unknown key \"cpu\""},
	    {"rate: { burst: 5 }", "rate needs per_minute"},
	    {"rate: { per_minute: 0 }", "whole number"},
	    {"rate: { per_minute: 10, burst: 0 }", "whole number"},
	};
	struct tdir *t = *state;
	char text[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text),
		    "rules:\n"
		    "  - name: r\n"
		    "    principals: [\"*\"]\n"
		    "    skills: [hello]\n"
		    "    action: allow\n"
		    "    %s\n",
		    cases[i].line);
		put(t, "10-rules.yaml", text);
		expect_error(t, "10-rules.yaml:6", cases[i].why);
	}
}

static void
test_non_utf8(void **state)
{
	struct tdir *t = *state;
	struct policy p;
	struct error e;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml",
	    "skills:\n"
	    "  enabled: [hello]\n"
	    "# caf\xe9 (latin-1)\n");
	assert_int_equal(policy_load(&p, t->path, &e), -1);
	assert_empty(&p);
	if (strstr(e.msg, "10-rules.yaml") == NULL ||
	    strstr(e.msg, "UTF-8") == NULL)
		fail_msg(
		    "error \"%s\" does not name the file and UTF-8", e.msg);
}

/* All or nothing: a good first file does not survive a bad second. */
static void
test_bad_second_file_rejects_all(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml", rules_yaml);
	put(t, "20-bad.yaml",
	    "rules:\n"
	    "  - name: broken\n"
	    "    principals: [\"*\"]\n"
	    "    skills: [hello]\n"
	    "    action: maybe\n");
	expect_error(t, "20-bad.yaml:5", "action must be");
}

static void
test_non_yaml_files_ignored(void **state)
{
	struct tdir *t = *state;
	struct policy p;
	struct error e;
	char sub[128];

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yml", "garbage: [\n");
	put(t, "10-rules.yaml~", "garbage: [\n");
	put(t, "10-rules.yaml.bak", "garbage: [\n");
	put(t, ".10-rules.yaml.swp", "garbage: [\n");
	put(t, ".hidden.yaml", "garbage: [\n");
	put(t, "README", "not yaml at all: [\n");
	put(t, "yaml", "garbage: [\n");
	put(t, ".yaml", "garbage: [\n");
	snprintf(sub, sizeof(sub), "%s/conf.d", t->path);
	assert_int_equal(mkdir(sub, 0700), 0);
	memset(&e, 0, sizeof(e));
	if (policy_load(&p, t->path, &e) != 0)
		fail_msg("non-.yaml files were read: %s", e.msg);
	assert_int_equal(p.nfiles, 1);
	assert_int_equal(p.npr, 2);
	assert_int_equal(p.nrules, 0);
	policy_free(&p);
}

/* Files are read in lexical order of their names, whatever the order in
 * which they were created; rules keep file order. */
static void
test_lexical_order(void **state)
{
	struct tdir *t = *state;
	struct policy p;
	struct error e;

	put(t, "30-c.yaml",
	    "rules:\n"
	    "  - { name: c1, principals: [\"*\"], skills: [x], action: deny "
	    "}\n");
	put(t, "10-a.yaml",
	    "principals:\n"
	    "  devs: { uids: [1000] }\n"
	    "rules:\n"
	    "  - { name: a1, principals: [devs], skills: [x], action: allow }\n"
	    "  - { name: a2, principals: [devs], skills: [y], action: ask }\n");
	put(t, "20-b.yaml",
	    "\n"
	    "rules:\n"
	    "  - { name: b1, principals: [devs], skills: [x], action: allow "
	    "}\n");
	put(t, "100-z.yaml",
	    "rules:\n"
	    "  - { name: z1, principals: [devs], skills: [x], action: allow "
	    "}\n");
	memset(&e, 0, sizeof(e));
	if (policy_load(&p, t->path, &e) != 0)
		fail_msg("refused: %s", e.msg);
	assert_int_equal(p.nfiles, 4);
	assert_int_equal(p.nrules, 5);
	/* "100-z" sorts before "10-a" byte-wise ('0' < '-' is false: '-'
	 * is 0x2d, '0' is 0x30), so 10-a, 100-z, 20-b, 30-c. */
	assert_string_equal(p.rules[0].name, "a1");
	assert_string_equal(p.rules[0].where, "10-a.yaml:4");
	assert_string_equal(p.rules[1].name, "a2");
	assert_string_equal(p.rules[1].where, "10-a.yaml:5");
	assert_string_equal(p.rules[2].name, "z1");
	assert_string_equal(p.rules[2].where, "100-z.yaml:2");
	assert_string_equal(p.rules[3].name, "b1");
	assert_string_equal(p.rules[3].where, "20-b.yaml:3");
	assert_string_equal(p.rules[4].name, "c1");
	assert_string_equal(p.rules[4].where, "30-c.yaml:2");
	policy_free(&p);
}

static void
test_rule_requires_name_principals_skills(void **state)
{
	struct tdir *t = *state;

	put(t, "r.yaml",
	    "rules:\n"
	    "  - principals: [\"*\"]\n"
	    "    skills: [x]\n"
	    "    action: allow\n");
	expect_error(t, "r.yaml:2", "rule needs a name");
	put(t, "r.yaml",
	    "rules:\n"
	    "  - name: r\n"
	    "    skills: [x]\n"
	    "    action: allow\n");
	expect_error(t, "r.yaml:2", "needs principals");
	put(t, "r.yaml",
	    "rules:\n"
	    "  - name: r\n"
	    "    principals: [\"*\"]\n"
	    "    action: allow\n");
	expect_error(t, "r.yaml:2", "needs skills");
}

/* This thread's CPU time: a bound that a loaded machine cannot break. */
static uint64_t
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* expect_error, in well under a second of CPU. */
static void
expect_error_fast(const struct tdir *t, const char *where, const char *why)
{
	uint64_t t0 = cpu_ns();

	expect_error(t, where, why);
	if (cpu_ns() - t0 > FAST_NS)
		fail_msg("refused after %llu ms of CPU",
		    (unsigned long long)((cpu_ns() - t0) / 1000000));
}

static void
path_at(const struct tdir *t, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", t->path, name);
}

/* A FIFO among the policy files is refused, never opened: opening it
 * would block policyd (and skillctl policy check) until a writer came. */
static void
test_fifo_policy_file(void **state)
{
	struct tdir *t = *state;
	char path[256];

	put(t, "00-principals.yaml", principals_yaml);
	path_at(t, "50-fifo.yaml", path, sizeof(path));
	assert_int_equal(mkfifo(path, 0644), 0);
	alarm(10); /* a blocking open: the test dies instead of hanging */
	expect_error_fast(t, "50-fifo.yaml", "a FIFO, not a regular file");
	alarm(0);
}

static void
test_odd_policy_files(void **state)
{
	struct tdir *t = *state;
	char path[256];

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "real", "rules: []\n");
	path_at(t, "50-link.yaml", path, sizeof(path));
	assert_int_equal(symlink("real", path), 0);
	expect_error_fast(t, "50-link.yaml", "a symbolic link");
	unlink(path);
	path_at(t, "50-dir.yaml", path, sizeof(path));
	assert_int_equal(mkdir(path, 0755), 0);
	expect_error_fast(t, "50-dir.yaml", "a directory, not a regular file");
}

/* Aliases multiply a rule and its lists: a few KB of text once made
 * 1024 rules of 3 x 1024 names (and 585 MB in skillctl policy check).
 * Anchors and aliases are refused. */
static void
test_alias_bomb_rules(void **state)
{
	struct tdir *t = *state;
	char *text, *p;
	int i;

	assert_non_null(text = malloc(64 * 1024));
	p = text;
	p += sprintf(p,
	    "principals:\n"
	    "  %s: { uids: [0] }\n"
	    "rules:\n"
	    "  - &r\n"
	    "    name: r\n"
	    "    principals: &pl [&n %s",
	    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp",
	    "pppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppppp");
	for (i = 1; i < 1024; i++)
		p += sprintf(p, ", *n");
	p += sprintf(p, "]\n"
	                "    skills: *pl\n"
	                "    commands: *pl\n"
	                "    action: allow\n");
	for (i = 1; i < 1024; i++)
		p += sprintf(p, "  - *r\n");
	put(t, "10-rules.yaml", text);
	free(text);
	expect_error_fast(
	    t, "10-rules.yaml:4", "anchors and aliases are not allowed");
}

/* 60,000 nested flow sequences: libyaml 0.2.5 is quadratic in depth
 * (8 s of CPU here); the text never reaches it. */
static void
test_deep_nesting_refused(void **state)
{
	struct tdir *t = *state;
	size_t n = 60000;
	char *text = malloc(n + 16);

	assert_non_null(text);
	strcpy(text, "rules: ");
	memset(text + 7, '[', n);
	strcpy(text + 7 + n, "\n");
	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml", text);
	free(text);
	expect_error_fast(t, "10-rules.yaml:1", "nested deeper than 32 levels");
}

/* Rules after a second "---" were silently dropped, and the set was
 * called good. */
static void
test_second_document_refused(void **state)
{
	struct tdir *t = *state;

	put(t, "00-principals.yaml", principals_yaml);
	put(t, "10-rules.yaml",
	    "skills:\n"
	    "  enabled: [hello]\n"
	    "---\n"
	    "rules:\n"
	    "  - name: never-seen\n"
	    "    principals: [\"*\"]\n"
	    "    skills: [\"*\"]\n"
	    "    action: deny\n");
	expect_error_fast(t, "10-rules.yaml:3", "a second YAML document");
}

/* 48,000 principals in four files, and rules that name them: loading
 * is O(n log n) (each name was compared with every one before it). */
static void
test_many_principals_fast(void **state)
{
	struct tdir *t = *state;
	struct policy p;
	struct error e;
	char name[32], *text, *q;
	uint64_t t0;
	int f, i;

	assert_non_null(text = malloc(12000 * 32 + 64));
	for (f = 0; f < 4; f++) {
		q = text + sprintf(text, "principals:\n");
		for (i = f * 12000; i < (f + 1) * 12000; i++)
			q += sprintf(q, "  p%d: {uids: [%d]}\n", i, i);
		snprintf(name, sizeof(name), "%02d.yaml", f);
		put(t, name, text);
	}
	free(text);
	put(t, "10-rules.yaml",
	    "rules:\n"
	    "  - {name: r, principals: [p0, p47999, p123], skills: [x], "
	    "action: allow}\n");
	t0 = cpu_ns();
	memset(&e, 0, sizeof(e));
	if (policy_load(&p, t->path, &e) != 0)
		fail_msg("refused: %s", e.msg);
	if (cpu_ns() - t0 > 2 * FAST_NS)
		fail_msg("48,000 principals took %llu ms of CPU",
		    (unsigned long long)((cpu_ns() - t0) / 1000000));
	assert_int_equal(p.npr, 48000);
	assert_true(principal_matches(&p.pr[47999], 47999, 1));
	assert_false(principal_matches(&p.pr[47999], 47998, 1));
	policy_free(&p);
	/* A repeat in the last file is still found, with its line. */
	put(t, "03.yaml", "principals:\n  x: {uids: [1]}\n  p7: {uids: [1]}\n");
	expect_error_fast(t, "03.yaml:3", "principal \"p7\" defined twice");
}

/* At most POLICY_DIR_ENTRIES_MAX entries of policy_dir are looked at. */
static void
test_policy_dir_entries_bounded(void **state)
{
	struct tdir *t = *state;
	char name[32];
	int i;

	put(t, "00-principals.yaml", principals_yaml);
	for (i = 0; i < 4096; i++) {
		snprintf(name, sizeof(name), "junk-%d.txt", i);
		put(t, name, "");
	}
	expect_error_fast(
	    t, strrchr(t->path, '/') + 1, "more than 4096 entries");
}

static void
test_duplicate_key_in_rule(void **state)
{
	struct tdir *t = *state;

	put(t, "r.yaml",
	    "rules:\n"
	    "  - name: r\n"
	    "    principals: [\"*\"]\n"
	    "    skills: [x]\n"
	    "    action: deny\n"
	    "    action: allow\n");
	expect_error(t, "r.yaml:6", "duplicate key \"action\"");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_good_set),
	    T(test_shipped_examples_load),
	    T(test_empty_dir_and_missing_dir),
	    T(test_unknown_key),
	    T(test_unknown_top_level_key),
	    T(test_bad_action),
	    T(test_missing_action),
	    T(test_unknown_principal),
	    T(test_principal_defined_later),
	    T(test_unknown_phase),
	    T(test_empty_lists_default),
	    T(test_principal_without_ids),
	    T(test_principal_empty_id_lists),
	    T(test_principal_bad_uid),
	    T(test_duplicate_principal_across_files),
	    T(test_yaml_syntax_error),
	    T(test_yaml_syntax_error_exact_line),
	    T(test_bad_ceiling_network),
	    T(test_bad_ceiling_entries),
	    T(test_bad_limits_and_rate),
	    T(test_non_utf8),
	    T(test_bad_second_file_rejects_all),
	    T(test_non_yaml_files_ignored),
	    T(test_lexical_order),
	    T(test_rule_requires_name_principals_skills),
	    T(test_duplicate_key_in_rule),
	    T(test_fifo_policy_file),
	    T(test_odd_policy_files),
	    T(test_alias_bomb_rules),
	    T(test_deep_nesting_refused),
	    T(test_second_document_refused),
	    T(test_many_principals_fast),
	    T(test_policy_dir_entries_bounded),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
