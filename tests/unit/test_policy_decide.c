/*
 * test_policy_decide.c: one decision, as an admin would check it: the
 * gates (registry, enabled, command, phase), deny > ask > allow with a
 * default deny, principals by uid and gid, the permission ceiling,
 * effective limits and rate limits, each with its reason and the rules
 * that decided ("file:line name").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tmptree.h"
#include "skillenv.h"
#include "../../policyd/policyd.h"
#include "../../policyd/policyd_exec.h"
#include "../../policyd/policyd_index.h"
#include "../../policyd/policyd_rate.h"

struct fixture {
	char root[64];
	char skills[128], poldir[128];
	struct registry reg;
	struct policy pol;
	int pol_loaded;
	struct index *index; /* pol's, as policyd builds it */
	struct policy_env pe;
};

static struct fixture *F;

static void
skill(const char *name, const char *frontmatter_rest)
{
	char md[2048], dir[256];

	snprintf(dir, sizeof(dir), "%s/%s", F->skills, name);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(md, sizeof(md),
	    "---\nname: %s\ndescription: The %s skill.\n"
	    "%s---\n# %s\n",
	    name, name, frontmatter_rest, name);
	tmptree_put(dir, "SKILL.md", md, 0644);
	tmptree_put(dir, "scripts/run.sh", "#!/bin/sh\necho hi\n", 0755);
	tmptree_put(dir, "scripts/other.sh", "#!/bin/sh\necho other\n", 0755);
}

static const char principals_yaml[] =
    "principals:\n"
    "  alice: { uids: [1000] }\n"
    "  staff: { gids: [50] }\n"
    "  admins: { uids: [0], admin: true }\n"
    "skills:\n"
    "  enabled: [hello, multi, netty, worky, wide, broken, pub, bare]\n";

static int
group_setup(void **state)
{
	static char *const sys_usr[] = {"/usr"}; /* where the skills' sh lies */
	char *dirs[1], dirs0[512];

	(void)state;
	exec_system_paths(sys_usr, 1);
	F = calloc(1, sizeof(*F));
	snprintf(F->root, sizeof(F->root), "/tmp/sb-test-decide.XXXXXX");
	if (mkdtemp(F->root) == NULL)
		return -1;
	snprintf(F->skills, sizeof(F->skills), "%s/skills", F->root);
	snprintf(F->poldir, sizeof(F->poldir), "%s/policy", F->root);
	mkdir(F->skills, 0755);
	mkdir(F->poldir, 0755);

	skill("hello", "commands:\n"
	               "  run: scripts/run.sh\n"
	               "limits: { timeout_ms: 10000, memory_mb: 256, pids: 64, "
	               "output_bytes: 65536 }\n");
	skill("multi", /* no "run": a command must be named */
	    "commands:\n"
	    "  report: scripts/run.sh\n"
	    "  export: scripts/other.sh\n");
	skill("netty", "commands:\n"
	               "  run: scripts/run.sh\n"
	               "permissions:\n"
	               "  fs: { write: [\"$DATA_DIR/**\"] }\n"
	               "  network: { allow: [\"api.example.com:443\"] }\n");
	skill("worky",
	    "commands:\n"
	    "  run: scripts/run.sh\n"
	    "  other: scripts/other.sh\n"
	    "permissions:\n"
	    "  fs: { read: [\"$SKILL_DIR/**\"], write: [\"$WORK_DIR/**\"] }\n");
	skill("wide", "commands: { run: scripts/run.sh }\n"
	              "permissions:\n"
	              "  fs: { read: [\"/srv/**\"] }\n");
	skill("broken", "commands: { run: scripts/missing.sh }\n");
	skill("disabled", "commands: { run: scripts/run.sh }\n");
	/* Published: no block; the instructions name two scripts, one run
	 * by python3 for its extension, and a reference holds no script. */
	skill("pub", "");
	snprintf(dirs0, sizeof(dirs0), "%s/pub", F->skills);
	tmptree_put(dirs0, "SKILL.md",
	    "---\nname: pub\ndescription: Published.\n---\n"
	    "Run `python3 scripts/report.py in.csv` or scripts/run.sh.\n",
	    0644);
	tmptree_put(dirs0, "scripts/report.py", "print('hi')\n", 0644);
	skill("bare", ""); /* instructions only: no commands */

	dirs[0] = F->skills;
	registry_load(&F->reg, dirs, 1);
	if (F->reg.n != 9)
		return -1;
	F->pe.reg = &F->reg;
	F->pe.pol = &F->pol;
	F->pe.net = NET_PROXY; /* network grants are weighed; see
	                          test_no_network */
	return 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	registry_free(&F->reg);
	tmptree_rm(F->root);
	free(F);
	return 0;
}

static int
setup(void **state)
{
	(void)state;
	rate_reset();
	memset(&F->pe.limits, 0, sizeof(F->pe.limits));
	F->pe.limits.timeout_ms = 8000;
	F->pe.limits.max_timeout_ms = 20000;
	F->pe.limits.memory_mb = 128;
	F->pe.limits.pids = 100;
	F->pe.limits.output_bytes = 1000000;
	return 0;
}

static int
teardown(void **state)
{
	char path[256];

	(void)state;
	if (F->pol_loaded)
		policy_free(&F->pol);
	F->pol_loaded = 0;
	index_free(F->index);
	F->index = NULL;
	F->pe.index = NULL;
	snprintf(path, sizeof(path), "%s/00-principals.yaml", F->poldir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/10-rules.yaml", F->poldir);
	unlink(path);
	return 0;
}

/* Load the policy directory, and index it as policyd does. */
static void
load_policy(void)
{
	struct error e;

	if (F->pol_loaded)
		policy_free(&F->pol);
	F->pol_loaded = 0;
	index_free(F->index);
	F->index = NULL;
	F->pe.index = NULL;
	memset(&e, 0, sizeof(e));
	if (policy_load(&F->pol, F->poldir, &e) != 0)
		fail_msg("test policy refused: %s", e.msg);
	F->pol_loaded = 1;
	F->index = index_build(&F->pol);
	F->pe.index = F->index;
}

/* Load the principals plus these rules (10-rules.yaml, from line 2). */
static void
rules(const char *text)
{
	char body[4096];

	snprintf(body, sizeof(body), "rules:\n%s", text);
	tmptree_put(F->poldir, "00-principals.yaml", principals_yaml, 0644);
	tmptree_put(F->poldir, "10-rules.yaml", body, 0644);
	load_policy();
}

static struct msg_authz_req
req(uint64_t uid, uint64_t gid, const char *sk, const char *cmd)
{
	struct msg_authz_req r;

	memset(&r, 0, sizeof(r));
	r.ref = 1;
	r.uid = uid;
	r.gid = gid;
	r.pid = 4242;
	r.skill = (char *)sk;
	r.command = (char *)cmd;
	r.session = (char *)"default";
	r.phase = (char *)"execution";
	return r;
}

/*
 * Decide and check the outcome, a phrase of the reason, and the first
 * entry of matched_rules (exact). Returns the decision for more checks.
 */
static struct decision
check(const struct msg_authz_req *r, uint64_t now, enum err_type err,
    const char *reason, const char *rule0)
{
	static struct decision last; /* holds the programs of the last */
	struct decision d;
	char **v;
	size_t n;

	decision_free(&last);
	memset(&d, 0x5a, sizeof(d));
	decide(&F->pe, r, now, &d);
	last = d;
	if (d.err != err)
		fail_msg("%s %s by uid %llu: got %s (%s), want %s", r->skill,
		    r->command, (unsigned long long)r->uid,
		    err_type_name(d.err), d.reason, err_type_name(err));
	if (reason != NULL && strstr(d.reason, reason) == NULL)
		fail_msg("reason \"%s\" does not say \"%s\"", d.reason, reason);
	v = decision_rules(&d, &n);
	assert_true(n >= 1);
	if (rule0 != NULL && strcmp(v[0], rule0) != 0)
		fail_msg("matched rule \"%s\", want \"%s\" (%s)", v[0], rule0,
		    d.reason);
	strarr_free(v, n);
	return d;
}

static const char allow_all[] =
    "  - name: everything\n" /* 2 */
    "    principals: [\"*\"]\n"
    "    skills: [\"*\"]\n"
    "    action: allow\n"
    "    ceiling:\n"
    "      fs: { read: [\"/**\"], write: [\"/**\", \"$DATA_DIR/**\"] }\n"
    "      network: { allow: [\"*:*\"] }\n";

static void
test_unknown_skill(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "nope", "run");

	(void)state;
	rules(allow_all);
	check(&r, 1, ERR_UNKNOWN_SKILL, "no skill named \"nope\"",
	    "builtin:registry");
	r.skill = (char *)"";
	check(&r, 1, ERR_UNKNOWN_SKILL, NULL, "builtin:registry");
}

static void
test_skill_not_enabled(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "disabled", "run");
	struct decision d;

	(void)state;
	rules(allow_all);
	/* Valid and registered, but not in skills.enabled. */
	d = check(&r, 1, ERR_SKILL_NOT_ENABLED, "not enabled by policy",
	    "builtin:enabled");
	assert_int_equal(d.nmatched, 0);
	/* Enabled, but invalid: never runs, and says why. */
	r.skill = (char *)"broken";
	d = check(&r, 1, ERR_SKILL_NOT_ENABLED, "is invalid and never runs",
	    "builtin:registry");
	if (strstr(d.reason, "missing.sh") == NULL)
		fail_msg(
		    "reason \"%s\" does not give the skill's error", d.reason);
}

static void
test_unknown_command(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "multi", "nope");
	struct decision d;

	(void)state;
	rules(allow_all);
	check(&r, 1, ERR_UNKNOWN_COMMAND,
	    "has no command \"nope\" (it has: report, export)",
	    "builtin:command");
	/* No command, several, none called run: refused, listing them. */
	r.command = (char *)"";
	check(&r, 1, ERR_UNKNOWN_COMMAND,
	    "needs a command (it has: report, "
	    "export)",
	    "builtin:command");
	/* No command and a single one: that one. */
	r = req(1000, 1000, "hello", "");
	d = check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 everything");
	assert_string_equal(d.cmd->name, "run");
	/* No command and several: the one called run. */
	r = req(1000, 1000, "worky", "");
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_string_equal(d.cmd->name, "run");
	assert_string_equal(d.cmd->path, "scripts/run.sh");
	r.command = (char *)"other";
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_string_equal(d.cmd->path, "scripts/other.sh");
}

/*
 * A published skill's commands are its scripts, named by path: a rule's
 * command glob "*" spans the "/", the interpreter of a ".py" without
 * "#!" is in the grant and among its programs, and the cwd is the work
 * dir. A skill with no commands says so.
 */
static void
test_script_commands(void **state)
{
	const struct policy_env *pe = &F->pe;
	struct msg_authz_req r = req(1000, 1000, "pub", "scripts/report.py");
	char py[PATH_MAX];
	struct decision d;
	struct grant g;
	size_t i;
	int found = 0;

	(void)state;
	assert_non_null(realpath("/usr/bin/python3", py));
	rules("  - name: scripts\n" /* 2 */
	      "    principals: [alice]\n"
	      "    skills: [pub]\n"
	      "    commands: [\"scripts/*.py\"]\n"
	      "    action: allow\n");
	d = check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 scripts");
	assert_string_equal(d.cmd->path, "scripts/report.py");
	assert_string_equal(d.interpreter, py);
	grant_build(pe, &r, &d, &g);
	assert_string_equal(g.command, "scripts/report.py");
	assert_string_equal(g.entry, "scripts/report.py");
	assert_string_equal(g.interpreter, py);
	assert_int_equal(g.cwd, GRANT_CWD_WORK);
	for (i = 0; i < g.nprograms; i++)
		found |= strcmp(g.programs[i], py) == 0;
	assert_true(found);
	grant_free(&g);
	/* the glob of .py scripts is not the shell script; "*" is all */
	r.command = (char *)"scripts/run.sh";
	check(&r, 1, ERR_PERMISSION_DENIED, NULL, NULL);
	rules(allow_all);
	d = check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 everything");
	assert_null(d.interpreter); /* an executable "#!" script */
	r.command = (char *)"report.py";
	check(&r, 1, ERR_UNKNOWN_COMMAND,
	    "has no command \"report.py\" (it has: scripts/report.py, "
	    "scripts/run.sh)",
	    "builtin:command");
	r = req(1000, 1000, "bare", "");
	check(&r, 1, ERR_UNKNOWN_COMMAND,
	    "skill \"bare\" has no commands: its instructions name no script",
	    "builtin:command");
}

static void
test_phase_violation(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");

	(void)state;
	/* Even a rule that names planning cannot run a skill there. */
	rules("  - name: plan\n"
	      "    principals: [\"*\"]\n"
	      "    skills: [\"*\"]\n"
	      "    phases: [planning, execution]\n"
	      "    action: allow\n");
	r.phase = (char *)"planning";
	check(&r, 1, ERR_PHASE_VIOLATION, "planning phase", "builtin:phase");
	r.phase = (char *)"review";
	check(&r, 1, ERR_PHASE_VIOLATION, "unknown phase \"review\"",
	    "builtin:phase");
	r.phase = (char *)"";
	check(&r, 1, ERR_PHASE_VIOLATION, NULL, "builtin:phase");
	r.phase = (char *)"Execution";
	check(&r, 1, ERR_PHASE_VIOLATION, NULL, "builtin:phase");
	r.phase = (char *)"execution";
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 plan");
}

/* Gates come before rules: a deny-nothing policy still gates. */
static void
test_gates_before_rules(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "nope", "run");

	(void)state;
	rules("  - name: stop\n"
	      "    principals: [\"*\"]\n"
	      "    skills: [\"*\"]\n"
	      "    action: deny\n");
	check(&r, 1, ERR_UNKNOWN_SKILL, NULL, "builtin:registry");
	r.skill = (char *)"hello";
	check(&r, 1, ERR_PERMISSION_DENIED,
	    "denied by rule \"stop\" "
	    "(10-rules.yaml:2)",
	    "10-rules.yaml:2 stop");
}

static void
test_default_deny(void **state)
{
	struct msg_authz_req r = req(1000, 7, "hello", "run");
	struct decision d;

	(void)state;
	rules("  - name: other-skill\n"
	      "    principals: [\"*\"]\n"
	      "    skills: [multi]\n"
	      "    action: allow\n");
	d = check(&r, 1, ERR_PERMISSION_DENIED,
	    "no rule allows uid 1000 (gid 7) to run hello run in phase "
	    "execution",
	    "builtin:default-deny");
	assert_int_equal(d.nmatched, 0);
}

static void
test_deny_beats_allow(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");
	struct decision d;

	(void)state;
	rules("  - name: let-alice\n" /* 2 */
	      "    principals: [alice]\n"
	      "    skills: [hello]\n"
	      "    action: allow\n"
	      "  - name: block-hello\n" /* 6 */
	      "    principals: [\"*\"]\n"
	      "    skills: [\"hel*\"]\n"
	      "    action: deny\n"
	      "  - name: let-all\n" /* 10 */
	      "    principals: [\"*\"]\n"
	      "    skills: [\"*\"]\n"
	      "    action: allow\n");
	d = check(&r, 1, ERR_PERMISSION_DENIED,
	    "denied by rule "
	    "\"block-hello\" (10-rules.yaml:6)",
	    "10-rules.yaml:6 block-hello");
	assert_int_equal(d.nmatched, 1);
	assert_string_equal(d.matched[0]->name, "block-hello");
	/* The deny does not reach other skills: the allows apply. */
	r.skill = (char *)"worky";
	d = check(&r, 1, ERR_NONE,
	    "allowed by rule \"let-all\" "
	    "(10-rules.yaml:10)",
	    "10-rules.yaml:10 let-all");
	assert_int_equal(d.nmatched, 1);
}

static void
test_ask_beats_allow_deny_beats_ask(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");
	struct decision d;
	char **v;
	size_t n;

	(void)state;
	rules("  - name: allow-1\n" /* 2 */
	      "    principals: [\"*\"]\n"
	      "    skills: [hello, multi]\n"
	      "    commands: [\"*\"]\n"
	      "    action: allow\n"
	      "  - name: confirm\n" /* 7 */
	      "    principals: [alice]\n"
	      "    skills: [hello, multi]\n"
	      "    action: ask\n"
	      "  - name: allow-2\n" /* 11 */
	      "    principals: [alice]\n"
	      "    skills: [hello]\n"
	      "    action: allow\n"
	      "  - name: no-export\n" /* 15 */
	      "    principals: [\"*\"]\n"
	      "    skills: [multi]\n"
	      "    commands: [export]\n"
	      "    action: deny\n");
	d = check(&r, 1, ERR_APPROVAL_DENIED,
	    "rule \"confirm\" "
	    "(10-rules.yaml:7) requires approval",
	    "10-rules.yaml:7 confirm");
	assert_int_equal(d.nmatched, 1);
	assert_int_equal(d.ask, 1);
	/* Not alice: the ask does not apply, the first allow decides, and
	 * every matching allow is listed, the deciding one first. */
	r.uid = 1001;
	d = check(&r, 1, ERR_NONE, "allowed by rule \"allow-1\"",
	    "10-rules.yaml:2 allow-1");
	assert_int_equal(d.nmatched, 1);
	assert_int_equal(d.ask, 0);
	r.uid = 1000;
	r.skill = (char *)"multi";
	r.command = (char *)"export";
	check(&r, 1, ERR_PERMISSION_DENIED, "no-export",
	    "10-rules.yaml:15 no-export");
	r.command = (char *)"report";
	check(&r, 1, ERR_APPROVAL_DENIED, NULL, "10-rules.yaml:7 confirm");
	/* Dry runs decide the same. */
	r.dry_run = 1;
	check(&r, 1, ERR_APPROVAL_DENIED, NULL, "10-rules.yaml:7 confirm");

	/* Two allows for one call: both listed, file order. */
	r = req(1000, 1000, "hello", "run");
	rules("  - name: a1\n"
	      "    principals: [alice]\n"
	      "    skills: [hello]\n"
	      "    action: allow\n"
	      "  - name: a2\n"
	      "    principals: [\"*\"]\n"
	      "    skills: [\"*\"]\n"
	      "    action: allow\n");
	d = check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 a1");
	v = decision_rules(&d, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[1], "10-rules.yaml:6 a2");
	strarr_free(v, n);
}

/* The effective map of d, as policyd sends it, has key, a non-empty map. */
static int
effective_has(const struct decision *d, const char *key)
{
	const msgpack_object *o;
	struct mp_enc m;
	struct mp_doc doc;
	struct error e;
	int has;

	enc_init(&m);
	decision_effective_enc(&m, d);
	if (mp_decode(&doc, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e) ==
	    -1)
		fail_msg("effective: %s", e.msg);
	o = mp_get(doc.root, key);
	has = o != NULL && o->type == MSGPACK_OBJECT_MAP && o->via.map.size > 0;
	mp_doc_free(&doc);
	enc_free(&m);
	return has;
}

/*
 * ask: weighed as an allow would be (ceiling, limits), answered as an ask
 * with what would be allowed and no rate token taken; the same call
 * approved by a human is an allow of that rule, and takes its token.
 * Deny still beats it, and a ceiling it breaks denies without asking.
 */
static void
test_ask_approved(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "worky", "run");
	struct decision d;
	int i;

	(void)state;
	rules("  - name: confirm\n" /* 2 */
	      "    principals: [alice]\n"
	      "    skills: [worky, netty]\n"
	      "    action: ask\n"
	      "    limits: { timeout_ms: 3000 }\n"
	      "    rate: { per_minute: 1, burst: 1 }\n"
	      "  - name: anyone\n" /* 8 */
	      "    principals: [\"*\"]\n"
	      "    skills: [\"*\"]\n"
	      "    action: allow\n"
	      "    ceiling:\n"
	      "      fs: { write: [\"$DATA_DIR/**\"] }\n"
	      "      network: { allow: [\"*:*\"] }\n");
	/* Asked as often as it comes: no token is taken by an ask. */
	for (i = 0; i < 3; i++) {
		d = check(&r, 1, ERR_APPROVAL_DENIED,
		    "requires approval: uid 1000 may run worky run in phase "
		    "execution once a human approves",
		    "10-rules.yaml:2 confirm");
		assert_int_equal(d.ask, 1);
		assert_int_equal(d.limits.timeout_ms, 3000);
		assert_true(effective_has(&d, "permissions"));
		assert_true(effective_has(&d, "limits"));
	}
	/* Approved: allowed by the ask rule, which now takes its token. */
	r.approved = 1;
	d = check(&r, 1, ERR_NONE,
	    "allowed by rule \"confirm\" (10-rules.yaml:2) with a human's "
	    "approval",
	    "10-rules.yaml:2 confirm");
	assert_int_equal(d.ask, 0);
	assert_int_equal(d.limits.timeout_ms, 3000);
	check(&r, 1, ERR_RATE_LIMITED, "rule \"confirm\" allows 1 calls",
	    "10-rules.yaml:2 confirm");
	/* The ask rule's ceiling (none) holds, approved or not. */
	r = req(1000, 1000, "netty", "run");
	d = check(&r, 1, ERR_PERMISSION_DENIED,
	    "declares more than rule \"confirm\" allows",
	    "10-rules.yaml:2 confirm");
	assert_int_equal(d.ask, 0);
	assert_false(effective_has(&d, "permissions"));
	r.approved = 1;
	check(&r, 1, ERR_PERMISSION_DENIED, "declares more than", NULL);
	/* Not alice: the ask does not apply, approved or not. */
	r = req(1001, 1000, "worky", "run");
	r.approved = 1;
	d = check(&r, 1, ERR_NONE,
	    "allowed by rule \"anyone\" (10-rules.yaml:8):",
	    "10-rules.yaml:8 anyone");
	/* Deny beats an approved ask. */
	rules("  - name: confirm\n"
	      "    principals: [alice]\n"
	      "    skills: [worky]\n"
	      "    action: ask\n"
	      "  - name: never\n" /* 6 */
	      "    principals: [\"*\"]\n"
	      "    skills: [worky]\n"
	      "    action: deny\n");
	r = req(1000, 1000, "worky", "run");
	r.approved = 1;
	check(&r, 1, ERR_PERMISSION_DENIED, "denied by rule \"never\"",
	    "10-rules.yaml:6 never");
	/* The time the call waited in line still counts when it is asked. */
	rules("  - name: confirm\n"
	      "    principals: [alice]\n"
	      "    skills: [worky]\n"
	      "    action: ask\n"
	      "    limits: { timeout_ms: 3000 }\n");
	r.approved = 0;
	r.queued_ms = 1000;
	d = check(&r, 1, ERR_APPROVAL_DENIED, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 2000);
	r.queued_ms = 3000;
	check(&r, 1, ERR_TIMEOUT, "waited 3000 ms in line", NULL);
}

static void
test_principals(void **state)
{
	struct msg_authz_req r;

	(void)state;
	rules("  - name: by-uid\n" /* 2 */
	      "    principals: [alice]\n"
	      "    skills: [hello]\n"
	      "    action: allow\n"
	      "  - name: by-gid\n" /* 6 */
	      "    principals: [staff]\n"
	      "    skills: [multi]\n"
	      "    action: allow\n"
	      "  - name: anyone\n" /* 10 */
	      "    principals: [\"*\"]\n"
	      "    skills: [worky]\n"
	      "    action: allow\n");
	r = req(1000, 1, "hello", "run");
	check(&r, 1, ERR_NONE, "uid 1000 may run hello run",
	    "10-rules.yaml:2 by-uid");
	r.uid = 1001; /* not alice, whatever gid */
	check(&r, 1, ERR_PERMISSION_DENIED, NULL, "builtin:default-deny");
	r.gid = 1000; /* a gid equal to alice's uid is not alice */
	check(&r, 1, ERR_PERMISSION_DENIED, NULL, "builtin:default-deny");

	r = req(2000, 50, "multi", "report");
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:6 by-gid");
	r.gid = 51;
	check(&r, 1, ERR_PERMISSION_DENIED, NULL, "builtin:default-deny");
	r.uid = 50; /* a uid equal to staff's gid is not staff */
	check(&r, 1, ERR_PERMISSION_DENIED, NULL, "builtin:default-deny");

	r = req(4242, 4242, "worky", "run");
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:10 anyone");
	r.uid = 0;
	r.gid = 0;
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:10 anyone");
	/* A uid in no principal gets nothing from named rules. */
	r = req(31337, 31337, "hello", "run");
	check(&r, 1, ERR_PERMISSION_DENIED, NULL, "builtin:default-deny");
	r.skill = (char *)"multi";
	r.command = (char *)"report";
	check(&r, 1, ERR_PERMISSION_DENIED, NULL, "builtin:default-deny");
}

static void
test_command_glob(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "multi", "report");

	(void)state;
	rules("  - name: reports\n"
	      "    principals: [alice]\n"
	      "    skills: [\"mul?i\"]\n"
	      "    commands: [\"rep*\"]\n"
	      "    action: allow\n");
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 reports");
	r.command = (char *)"export";
	check(&r, 1, ERR_PERMISSION_DENIED, NULL, "builtin:default-deny");
}

static void
test_ceiling_names_what_is_missing(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "netty", "run");
	struct decision d;

	(void)state;
	rules("  - name: net-only\n"
	      "    principals: [alice]\n"
	      "    skills: [netty]\n"
	      "    action: allow\n"
	      "    ceiling:\n"
	      "      network: { allow: [\"api.example.com:443\"] }\n");
	d = check(&r, 1, ERR_PERMISSION_DENIED,
	    "skill \"netty\" declares "
	    "more than rule \"net-only\" allows: fs.write $DATA_DIR/**",
	    "10-rules.yaml:2 net-only");
	if (strstr(d.reason, "api.example.com") != NULL)
		fail_msg("reason \"%s\" names a covered item", d.reason);
	/* A dry run is refused alike. */
	r.dry_run = 1;
	check(&r, 1, ERR_PERMISSION_DENIED, "fs.write $DATA_DIR/**", NULL);

	/* No ceiling at all: both are missing, both named. */
	rules("  - name: bare\n"
	      "    principals: [alice]\n"
	      "    skills: [netty]\n"
	      "    action: allow\n");
	d = check(&r, 1, ERR_PERMISSION_DENIED, "fs.write $DATA_DIR/**", NULL);
	if (strstr(d.reason, "network.allow api.example.com:443") == NULL)
		fail_msg("reason \"%s\" omits the network item", d.reason);

	/* A ceiling that covers both, with wildcards: allowed. */
	rules("  - name: full\n"
	      "    principals: [alice]\n"
	      "    skills: [netty]\n"
	      "    action: allow\n"
	      "    ceiling:\n"
	      "      fs: { write: [\"$DATA_DIR/**\"] }\n"
	      "      network: { allow: [\"*.example.com:443\"] }\n");
	r.dry_run = 0;
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 full");

	/* The wrong port does not cover. */
	rules("  - name: port80\n"
	      "    principals: [alice]\n"
	      "    skills: [netty]\n"
	      "    action: allow\n"
	      "    ceiling:\n"
	      "      fs: { write: [\"$DATA_DIR/**\"] }\n"
	      "      network: { allow: [\"*.example.com:80\"] }\n");
	d = check(&r, 1, ERR_PERMISSION_DENIED,
	    "network.allow api.example.com:443", NULL);
	if (strstr(d.reason, "fs.write") != NULL)
		fail_msg("reason \"%s\" names a covered item", d.reason);
}

/* A one-level ceiling does not let a skill declare every depth. */
static void
test_ceiling_depth(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "wide", "run");

	(void)state;
	rules("  - name: srv-top\n"
	      "    principals: [alice]\n"
	      "    skills: [wide]\n"
	      "    action: allow\n"
	      "    ceiling:\n"
	      "      fs: { read: [\"/srv/*\"] }\n");
	check(&r, 1, ERR_PERMISSION_DENIED, "fs.read /srv/**", NULL);
	rules("  - name: srv-all\n"
	      "    principals: [alice]\n"
	      "    skills: [wide]\n"
	      "    action: allow\n"
	      "    ceiling:\n"
	      "      fs: { write: [\"/srv/**\"] }\n"); /* write implies read */
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 srv-all");
}

/* Reading the skill and its work dir, writing the work dir: always. */
static void
test_baseline_needs_no_ceiling(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "worky", "run");

	(void)state;
	rules("  - name: bare\n"
	      "    principals: [alice]\n"
	      "    skills: [worky]\n"
	      "    action: allow\n");
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 bare");
}

static void
test_effective_limits(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");
	struct decision d;

	(void)state;
	rules("  - name: limited\n"
	      "    principals: [\"*\"]\n"
	      "    skills: [hello]\n"
	      "    action: allow\n"
	      "    limits: { timeout_ms: 5000, memory_mb: 512, "
	      "output_bytes: 100000 }\n"
	      "  - name: plain\n"
	      "    principals: [\"*\"]\n"
	      "    skills: [multi]\n"
	      "    action: allow\n");
	/* skill {10000, 256, 64, 65536}, rule {5000, 512, -, 100000},
	 * daemon {8000 (max 20000), 128, 100, 1000000} */
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 5000);
	assert_int_equal(d.limits.memory_mb, 128);
	assert_int_equal(d.limits.pids, 64);
	assert_int_equal(d.limits.output_bytes, 65536);
	/* A caller may ask for less ... */
	r.timeout_ms = 3000;
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 3000);
	/* ... but never for more than skill or rule allow. */
	r.timeout_ms = 60000;
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 5000);

	/* Nothing set by skill or rule: the daemon's limits. */
	r = req(1000, 1000, "multi", "report");
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 8000);
	assert_int_equal(d.limits.memory_mb, 128);
	assert_int_equal(d.limits.pids, 100);
	assert_int_equal(d.limits.output_bytes, 1000000);
	/* A request above the default is capped by max_timeout_ms. */
	r.timeout_ms = 15000;
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 15000);
	r.timeout_ms = 60000;
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 20000);
	r.timeout_ms = 1;
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 1);
	/* Time in line is taken off; a call with none left is timeout. */
	r.timeout_ms = 15000;
	r.queued_ms = 4000;
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.timeout_ms, 11000);
	r.queued_ms = 15000;
	check(&r, 1, ERR_TIMEOUT, "waited 15000 ms in line", NULL);
	r.queued_ms = 0;

	/* The daemon's maxima bind a lax skill and rule too. */
	F->pe.limits.memory_mb = 32;
	F->pe.limits.pids = 4;
	F->pe.limits.output_bytes = 100;
	r = req(1000, 1000, "hello", "run");
	d = check(&r, 1, ERR_NONE, NULL, NULL);
	assert_int_equal(d.limits.memory_mb, 32);
	assert_int_equal(d.limits.pids, 4);
	assert_int_equal(d.limits.output_bytes, 100);
}

static const char rated[] = "  - name: rated\n"
                            "    principals: [\"*\"]\n"
                            "    skills: [hello, worky]\n"
                            "    action: allow\n"
                            "    rate: { per_minute: 60, burst: 2 }\n";

static void
test_rate_burst_then_refill(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");
	const uint64_t now = 1000000;

	(void)state;
	rules(rated);
	check(&r, now, ERR_NONE, NULL, NULL);
	check(&r, now, ERR_NONE, NULL, NULL);
	check(&r, now, ERR_RATE_LIMITED,
	    "rule \"rated\" allows 60 calls a "
	    "minute (burst 2)",
	    "10-rules.yaml:2 rated");
	check(&r, now + 500, ERR_RATE_LIMITED, NULL, NULL);
	/* 60 a minute: one more token a second. */
	check(&r, now + 1000, ERR_NONE, NULL, NULL);
	check(&r, now + 1000, ERR_RATE_LIMITED, NULL, NULL);
	/* A long pause refills to the burst, no more. */
	check(&r, now + 3600000, ERR_NONE, NULL, NULL);
	check(&r, now + 3600000, ERR_NONE, NULL, NULL);
	check(&r, now + 3600000, ERR_RATE_LIMITED, NULL, NULL);
}

static void
test_rate_dry_run_is_free(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");
	const uint64_t now = 5000;
	int i;

	(void)state;
	rules(rated);
	r.dry_run = 1;
	for (i = 0; i < 10; i++)
		check(&r, now, ERR_NONE, NULL, NULL);
	r.dry_run = 0;
	check(&r, now, ERR_NONE, NULL, NULL);
	check(&r, now, ERR_NONE, NULL, NULL);
	check(&r, now, ERR_RATE_LIMITED, NULL, NULL);
}

static void
test_rate_per_uid_and_skill(void **state)
{
	struct msg_authz_req a = req(1000, 1000, "hello", "run");
	struct msg_authz_req b = req(1001, 1000, "hello", "run");
	struct msg_authz_req c = req(1000, 1000, "worky", "run");
	const uint64_t now = 7000;

	(void)state;
	rules(rated);
	check(&a, now, ERR_NONE, NULL, NULL);
	check(&a, now, ERR_NONE, NULL, NULL);
	check(&a, now, ERR_RATE_LIMITED, NULL, NULL);
	/* Another uid, same gid: its own bucket. */
	check(&b, now, ERR_NONE, NULL, NULL);
	check(&b, now, ERR_NONE, NULL, NULL);
	check(&b, now, ERR_RATE_LIMITED, NULL, NULL);
	/* The same uid, another skill: its own bucket. */
	check(&c, now, ERR_NONE, NULL, NULL);
	check(&c, now, ERR_NONE, NULL, NULL);
	check(&c, now, ERR_RATE_LIMITED, NULL, NULL);
	/* rate_reset forgets every bucket. */
	rate_reset();
	check(&a, now, ERR_NONE, NULL, NULL);
}

/* A rule without a rate is unlimited. */
static void
test_no_rate_unlimited(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");
	int i;

	(void)state;
	rules(allow_all);
	for (i = 0; i < 1000; i++)
		check(&r, 1, ERR_NONE, NULL, NULL);
}

/* Without worker.network: host, a skill that declares network never runs. */
static void
test_no_network(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "netty", "run");

	(void)state;
	rules("  - name: full\n"
	      "    principals: [alice]\n"
	      "    skills: [netty]\n"
	      "    action: allow\n"
	      "    ceiling:\n"
	      "      fs: { write: [\"$DATA_DIR/**\"] }\n"
	      "      network: { allow: [\"*.example.com:443\"] }\n");
	F->pe.net = NET_NONE;
	check(&r, 1, ERR_PERMISSION_DENIED, "declares network access", NULL);
	F->pe.net = NET_PROXY;
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 full");
	F->pe.net = NET_HOST;
	check(&r, 1, ERR_NONE, NULL, "10-rules.yaml:2 full");
}

/* hello's entry, as the fixture wrote it or as a test changes it. */
static void
hello_entry(const char *text)
{
	char dir[256];

	snprintf(dir, sizeof(dir), "%s/hello", F->skills);
	tmptree_put(dir, "scripts/run.sh", text, 0755);
}

/*
 * What a call may execute is resolved once for a burst of decisions: a
 * change to the entry shows EXEC_MEMO_MS later, or at once after a
 * reload forgets what was resolved; a failure is never kept.
 */
static void
test_programs_memo(void **state)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");
	const uint64_t t = 50000;
	struct decision d;

	(void)state;
	rules(allow_all);
	exec_memo_clear();
	d = check(&r, t, ERR_NONE, NULL, NULL);
	assert_true(d.nprograms >= 1);
	hello_entry("#!/nonexistent/sh\necho hi\n");
	d = check(&r, t + EXEC_MEMO_MS - 1, ERR_NONE, NULL, NULL);
	assert_true(d.nprograms >= 1);
	check(
	    &r, t + EXEC_MEMO_MS, ERR_SANDBOX_FAILED, "/nonexistent/sh", NULL);
	hello_entry("#!/bin/sh\necho hi\n");
	check(&r, t + EXEC_MEMO_MS, ERR_NONE, NULL, NULL);
	hello_entry("#!/nonexistent/sh\necho hi\n");
	exec_memo_clear();
	check(
	    &r, t + EXEC_MEMO_MS, ERR_SANDBOX_FAILED, "/nonexistent/sh", NULL);
	hello_entry("#!/bin/sh\necho hi\n");
	exec_memo_clear();
}

/* A random pick of n from v. */
static const char *
pick(const char *const *v, size_t n)
{
	return v[(size_t)rand() % n];
}

/*
 * Random policies, many requests each: the decision through the index is
 * the decision of the whole scan, with the same reason and rules.
 */
static void
test_index_same_decisions(void **state)
{
	static const char *const skills[] = {"hello", "multi", "netty", "worky",
	    "wide", "pub", "bare", "broken", "nope", "*", "h*", "?ulti", "w*",
	    "*y"};
	static const char *const who[] = {
	    "\"*\"", "alice", "staff", "admins", "p1", "p2", "p3"};
	static const char *const cmds[] = {
	    "run", "report", "*", "ex*", "scripts/*", "other"};
	static const char *const acts[] = {"allow", "allow", "ask", "deny"};
	static const uint64_t ids[] = {0, 1, 50, 1000, 1001, 2000, 7};
	char *text, line[512];
	struct decision a, b;
	struct msg_authz_req r;
	size_t len, i, k, nr, same = 0;
	char **va, **vb;
	size_t na, nb;
	int round;
	FILE *f;

	(void)state;
	srand(11);
	for (round = 0; round < 40; round++) {
		f = open_memstream(&text, &len);
		fprintf(f, "principals:\n  alice: { uids: [1000] }\n"
		           "  staff: { gids: [50] }\n"
		           "  admins: { uids: [0], admin: true }\n"
		           "  p1: { uids: [1000, 1001], gids: [7] }\n"
		           "  p2: { gids: [1, 50] }\n  p3: { uids: [7] }\n"
		           "skills:\n  enabled: [hello, multi, \"w*\", pub, "
		           "\"?etty\"]\nrules:\n");
		nr = 1 + (size_t)rand() % 40;
		for (i = 0; i < nr; i++) {
			fprintf(f, "  - name: r%zu\n    principals: [%s", i,
			    pick(who, 7));
			for (k = (size_t)rand() % 3; k > 0; k--)
				fprintf(f, ", %s", pick(who + 1, 6));
			fprintf(f, "]\n    skills: [\"%s\"", pick(skills, 14));
			for (k = (size_t)rand() % 3; k > 0; k--)
				fprintf(f, ", \"%s\"", pick(skills, 14));
			fprintf(f,
			    "]\n    commands: [\"%s\"]\n    action: %s\n",
			    pick(cmds, 6), pick(acts, 4));
			fprintf(f, "    ceiling: { fs: { read: [\"/**\"], "
			           "write: [\"/**\", \"$DATA_DIR/**\"] }, "
			           "network: { allow: [\"*:*\"] } }\n");
		}
		fclose(f);
		tmptree_put(F->poldir, "10-rules.yaml", text, 0644);
		free(text);
		load_policy();
		for (i = 0; i < 200; i++) {
			r = req(ids[(size_t)rand() % 7],
			    ids[(size_t)rand() % 7], pick(skills, 9),
			    pick(cmds, 6));
			r.dry_run = 1; /* no rate token: decided twice */
			F->pe.index = F->index;
			decide(&F->pe, &r, 1, &a);
			F->pe.index = NULL;
			decide(&F->pe, &r, 1, &b);
			F->pe.index = F->index;
			va = decision_rules(&a, &na);
			vb = decision_rules(&b, &nb);
			snprintf(line, sizeof(line), "%s %s uid %llu gid %llu",
			    r.skill, r.command, (unsigned long long)r.uid,
			    (unsigned long long)r.gid);
			if (a.err != b.err || strcmp(a.reason, b.reason) != 0 ||
			    na != nb)
				fail_msg("%s: %s (%s) with the index, %s (%s) "
				         "without",
				    line, err_type_name(a.err), a.reason,
				    err_type_name(b.err), b.reason);
			for (k = 0; k < na; k++)
				assert_string_equal(va[k], vb[k]);
			same += a.err == ERR_NONE;
			strarr_free(va, na);
			strarr_free(vb, nb);
			decision_free(&a);
			decision_free(&b);
		}
	}
	assert_true(same > 100); /* allowed ones were compared too */
}

/* Rules for other skills cost a decision nothing: 10,000 about as 10. */
static double
decide_ms(int n)
{
	struct msg_authz_req r = req(1000, 1000, "hello", "run");
	struct decision d;
	uint64_t t0;
	double best = 1e9;
	int round, i;

	r.dry_run = 1;
	for (round = 0; round < 5; round++) {
		t0 = now_mono_ns();
		for (i = 0; i < n; i++) {
			decide(&F->pe, &r, 1, &d);
			assert_int_equal(d.err, ERR_NONE);
			decision_free(&d);
		}
		if ((double)(now_mono_ns() - t0) / 1e6 < best)
			best = (double)(now_mono_ns() - t0) / 1e6;
	}
	return best;
}

/* A policy of n rules for skills s0..s(n-1), and one for hello. */
static void
many_rules(size_t n)
{
	char *text, name[32];
	size_t len, i, part;
	uint64_t t0;
	FILE *f;

	/* at most 5000 a file: a file holds at most 100000 YAML nodes */
	for (part = 0; part * 5000 < n || part == 0; part++) {
		f = open_memstream(&text, &len);
		fprintf(f, "rules:\n");
		for (i = part * 5000; i < n && i < (part + 1) * 5000; i++)
			fprintf(f,
			    "  - {name: r%zu, principals: [alice], "
			    "skills: [s%zu], action: allow}\n",
			    i, i);
		if (part == 0)
			fprintf(f, "  - {name: hello, principals: [\"*\"], "
			           "skills: [hello], action: allow}\n");
		fclose(f);
		snprintf(name, sizeof(name), "%02zu-rules.yaml", 10 + part);
		tmptree_put(F->poldir, name, text, 0644);
		free(text);
	}
	t0 = now_mono_ns();
	load_policy();
	print_message("%zu rules loaded and indexed in %.1f ms\n", n + 1,
	    (double)(now_mono_ns() - t0) / 1e6);
	assert_int_equal(F->pol.nrules, n + 1);
}

static void
test_index_many_rules(void **state)
{
	char path[256];
	double few, many;
	size_t i;

	(void)state;
	tmptree_put(F->poldir, "00-principals.yaml", principals_yaml, 0644);
	many_rules(10);
	few = decide_ms(2000);
	many_rules(10000);
	many = decide_ms(2000);
	print_message("2000 decisions: %.2f ms with 11 rules, %.2f ms with "
	              "10001\n",
	    few, many);
	assert_true(many < 4 * few + 5);
	for (i = 11; i <= 12; i++) {
		snprintf(
		    path, sizeof(path), "%s/%02zu-rules.yaml", F->poldir, i);
		unlink(path);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_unknown_skill),
	    T(test_skill_not_enabled),
	    T(test_unknown_command),
	    T(test_script_commands),
	    T(test_phase_violation),
	    T(test_gates_before_rules),
	    T(test_default_deny),
	    T(test_deny_beats_allow),
	    T(test_ask_beats_allow_deny_beats_ask),
	    T(test_ask_approved),
	    T(test_principals),
	    T(test_command_glob),
	    T(test_ceiling_names_what_is_missing),
	    T(test_no_network),
	    T(test_ceiling_depth),
	    T(test_baseline_needs_no_ceiling),
	    T(test_effective_limits),
	    T(test_rate_burst_then_refill),
	    T(test_rate_dry_run_is_free),
	    T(test_rate_per_uid_and_skill),
	    T(test_no_rate_unlimited),
	    T(test_programs_memo),
	    T(test_index_same_decisions),
	    T(test_index_many_rules),
#undef T
	};

	skillenv_defaults();
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
