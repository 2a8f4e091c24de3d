/*
 * test_grant.c: what the master accepts of a grant. A GRANT names no
 * host path the master trusts: the decoder refuses names and paths that
 * could climb (the skill and session name the master's own
 * directories), the master's own check bounds the timeout and refuses
 * network a host does not provide, and the paths in the worker's SPEC
 * come from the config alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/xmalloc.h"
#include "../../master/master.h"

struct master *M;

#define ID1 "0123456789abcdef0123456789abcdef"

static int
setup(void **state)
{
	(void)state;
	if ((M = calloc(1, sizeof(*M))) == NULL)
		return -1;
	M->cfg.state_dir = strdup("/var/lib/sb");
	M->cfg.limits.max_timeout_ms = 300000;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	free(M->cfg.state_dir);
	free(M);
	M = NULL;
	return 0;
}

/* A valid grant as policyd would send it. */
static void
grant_make(struct grant *g)
{
	memset(g, 0, sizeof(*g));
	g->grant_id = xstrdup(ID1);
	g->skill = xstrdup("hello");
	g->command = xstrdup("run");
	g->skill_dir = xstrdup("/skills/hello");
	g->entry = xstrdup("scripts/run.sh");
	g->session = xstrdup("default");
	g->principal_uid = 1000;
	g->timeout_ms = 1000;
	g->output_bytes = g->memory_mb = g->pids = g->fsize_mb = g->nofile = 64;
}

static void
set(char **field, const char *v)
{
	free(*field);
	*field = xstrdup(v);
}

/* g through GRANT's encoder and decoder: 0 accepted, -1 refused. */
static int
roundtrip(const struct grant *g, struct grant *out)
{
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	int r;

	enc_init(&m);
	grant_enc(&m, g);
	assert_int_equal(
	    mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	r = grant_dec(&d, out, &e);
	mp_doc_free(&d);
	enc_free(&m);
	return r;
}

static void
test_valid_accepted(void **state)
{
	struct grant g, out;
	struct error e;

	(void)state;
	grant_make(&g);
	assert_int_equal(roundtrip(&g, &out), 0);
	assert_int_equal(grant_fits(&out, &M->cfg, &e), 0);
	grant_free(&out);
	grant_free(&g);
}

/* Names that would climb out of the master's directories are refused. */
static void
test_names_and_paths_refused(void **state)
{
	static const struct {
		int field; /* 0 skill, 1 session, 2 skill_dir, 3 entry */
		const char *v;
	} bad[] = {{0, ".."}, {0, "a/b"}, {0, "."}, {1, ".."}, {1, "x/../y"},
	    {1, ""}, {2, "/skills/../etc"}, {2, "/skills/./x"}, {2, "skills"},
	    {3, "../run.sh"}, {3, "/bin/sh"}, {3, "a/../../b"}, {3, ""}};
	struct grant g, out;
	char **f;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		grant_make(&g);
		f = bad[i].field == 0   ? &g.skill
		    : bad[i].field == 1 ? &g.session
		    : bad[i].field == 2 ? &g.skill_dir
		                        : &g.entry;
		set(f, bad[i].v);
		if (roundtrip(&g, &out) == 0) {
			grant_free(&out);
			fail_msg("a grant with \"%s\" was accepted", bad[i].v);
		}
		grant_free(&g);
	}
}

static void
test_timeout_bounds(void **state)
{
	struct grant g;
	struct error e;

	(void)state;
	grant_make(&g);
	g.timeout_ms = 0;
	assert_int_equal(grant_fits(&g, &M->cfg, &e), -1);
	g.timeout_ms = 300001;
	assert_int_equal(grant_fits(&g, &M->cfg, &e), -1);
	assert_non_null(strstr(e.msg, "timeout"));
	g.timeout_ms = 300000;
	assert_int_equal(grant_fits(&g, &M->cfg, &e), 0);
	grant_free(&g);
}

/* Network only where the host provides it (worker.network: host). */
static void
test_network_needs_host(void **state)
{
	struct grant g;
	struct error e;

	(void)state;
	grant_make(&g);
	g.perm[PERM_NETWORK] = xcalloc(2, sizeof(char *));
	g.perm[PERM_NETWORK][0] = xstrdup("example.com:443");
	g.nperm[PERM_NETWORK] = 1;
	M->cfg.worker_network = NET_NONE;
	assert_int_equal(grant_fits(&g, &M->cfg, &e), -1);
	assert_int_equal(e.type, ERR_SANDBOX_FAILED);
	M->cfg.worker_network = NET_PROXY;
	assert_int_equal(grant_fits(&g, &M->cfg, &e), 0);
	spec_fill(&g, &M->cfg, 61007, 1);
	assert_int_equal(g.net, NET_PROXY); /* its own netns, the proxy */
	M->cfg.worker_network = NET_HOST;
	assert_int_equal(grant_fits(&g, &M->cfg, &e), 0);
	grant_free(&g);
}

/* The master runs no program outside its own system paths. */
static void
test_programs_inside_system_paths(void **state)
{
	static char *sys[] = {"/usr", "/opt/tools"};
	struct grant g;
	struct error e;

	(void)state;
	M->cfg.sys_paths = sys;
	M->cfg.nsys_paths = 2;
	grant_make(&g);
	g.programs = xcalloc(3, sizeof(char *));
	g.programs[0] = xstrdup("/usr/bin/dash");
	g.programs[1] = xstrdup("/opt/tools/bin/x");
	g.nprograms = 2;
	assert_int_equal(grant_fits(&g, &M->cfg, &e), 0);
	set(&g.programs[1], "/opt/toolsx/x"); /* a prefix, not a parent */
	assert_int_equal(grant_fits(&g, &M->cfg, &e), -1);
	assert_non_null(strstr(e.msg, "/opt/toolsx/x, outside the system"));
	set(&g.programs[1], "/srv/x");
	assert_int_equal(grant_fits(&g, &M->cfg, &e), -1);
	assert_int_equal(e.type, ERR_SANDBOX_FAILED);
	grant_free(&g);
	M->cfg.sys_paths = NULL;
	M->cfg.nsys_paths = 0;
}

/* What the SPEC adds: the worker's uid, its memory cap, its network. */
static void
test_spec_fill(void **state)
{
	struct grant g;

	(void)state;
	grant_make(&g);
	spec_fill(&g, &M->cfg, 61007, 1);
	assert_int_equal(g.worker_uid, 61007);
	assert_int_equal(g.worker_gid, 61007);
	assert_int_equal(g.as_mb, 4 * g.memory_mb); /* a backstop to cgroups */
	assert_int_equal(g.net, NET_NONE);          /* no network grant */
	grant_free(&g);
	grant_make(&g);
	spec_fill(&g, &M->cfg, 61007, 0);
	assert_int_equal(g.as_mb, g.memory_mb); /* the limit itself */
	grant_free(&g);
}

/* Whether a call gets its skill's data dir, and how: from its grant. */
static void
test_data_access(void **state)
{
	static const struct {
		const char *read, *write;
		int want;
	} cases[] = {
	    {NULL, NULL, -1}, {"/etc/**", "$WORK_DIR/**", -1},
	    {"$DATA_DIR/**", NULL, 0}, {"$DATA_DIR", NULL, 0},
	    {NULL, "$DATA_DIR/cache/*", 1}, {"$DATA_DIR/**", "$DATA_DIR/**", 1},
	    {"$DATA_DIRX/**", NULL, -1}, /* another name */
	};
	struct grant g;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		grant_make(&g);
		if (cases[i].read != NULL) {
			g.perm[PERM_FS_READ] = xcalloc(2, sizeof(char *));
			g.perm[PERM_FS_READ][0] = xstrdup(cases[i].read);
			g.nperm[PERM_FS_READ] = 1;
		}
		if (cases[i].write != NULL) {
			g.perm[PERM_FS_WRITE] = xcalloc(2, sizeof(char *));
			g.perm[PERM_FS_WRITE][0] = xstrdup(cases[i].write);
			g.nperm[PERM_FS_WRITE] = 1;
		}
		if (grant_data_access(&g) != cases[i].want)
			fail_msg("case %zu: %d, want %d", i,
			    grant_data_access(&g), cases[i].want);
		grant_free(&g);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_valid_accepted),
	    T(test_names_and_paths_refused),
	    T(test_timeout_bounds),
	    T(test_network_needs_host),
	    T(test_programs_inside_system_paths),
	    T(test_spec_fill),
	    T(test_data_access),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
