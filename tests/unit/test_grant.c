/*
 * test_grant.c: the master's grant store. A grant from policyd runs at
 * most once, only before it expires, and only if its paths stay in the
 * state directory and its timeout within the daemon's maximum, whatever
 * policyd said.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/xmalloc.h"
#include "../../master/master.h"

struct master *M;

#define ID1 "0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210"

static int
setup(void **state)
{
	(void)state;
	M = calloc(1, sizeof(*M));
	if (M == NULL)
		return -1;
	M->cfg.state_dir = strdup("/var/lib/sb");
	M->cfg.limits.max_timeout_ms = 300000;
	grant_store_init(0);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	grant_store_clear();
	free(M->cfg.state_dir);
	free(M);
	M = NULL;
	return 0;
}

/* A valid grant as policyd would send it. */
static void
grant_make(struct grant *g, const char *id)
{
	memset(g, 0, sizeof(*g));
	g->grant_id = xstrdup(id);
	g->skill = xstrdup("hello");
	g->command = xstrdup("run");
	g->skill_dir = xstrdup("/skills/hello");
	g->entry = xstrdup("run.sh");
	g->work_dir = xstrdup("/var/lib/sb/work/1000/default");
	g->data_dir = xstrdup("/var/lib/sb/data/hello");
	g->session = xstrdup("default");
	g->args = xcalloc(2, sizeof(char *));
	g->args[0] = xstrdup("--greet");
	g->nargs = 1;
	g->principal_uid = 1000;
	g->timeout_ms = 1000;
}

static void
set(char **field, const char *v)
{
	free(*field);
	*field = xstrdup(v);
}

static void
add_ok(struct grant *g)
{
	struct error e;

	memset(&e, 0, sizeof(e));
	if (grant_store_add(g, &e) != 0)
		fail_msg("grant refused: %s", e.msg);
	/* The store owns it now. */
	assert_null(g->grant_id);
	assert_null(g->work_dir);
}

/* grant_store_add must refuse g, leaving it to the caller. */
static void
add_refused(struct grant *g, enum err_type type, const char *why)
{
	struct error e;
	char id[GRANT_ID_LEN + 1];
	struct grant *t;

	memset(&e, 0, sizeof(e));
	snprintf(id, sizeof(id), "%s", g->grant_id);
	if (grant_store_add(g, &e) == 0)
		fail_msg(
		    "grant %s was stored; expected a refusal \"%s\"", id, why);
	assert_int_equal(e.type, type);
	if (strstr(e.msg, why) == NULL)
		fail_msg("error \"%s\" does not say \"%s\"", e.msg, why);
	assert_non_null(g->grant_id); /* still the caller's */
	assert_string_equal(g->grant_id, id);
	grant_free(g);
	/* Nothing under that id can be taken. */
	if ((t = grant_store_take(id)) != NULL) {
		grant_free(t);
		free(t);
		fail_msg("a refused grant can be taken");
	}
}

static void
test_taken_once(void **state)
{
	struct grant g, *t;

	(void)state;
	grant_make(&g, ID1);
	add_ok(&g);
	assert_non_null(t = grant_store_take(ID1));
	/* What comes out is what went in. */
	assert_string_equal(t->grant_id, ID1);
	assert_string_equal(t->skill, "hello");
	assert_string_equal(t->command, "run");
	assert_string_equal(t->skill_dir, "/skills/hello");
	assert_string_equal(t->entry, "run.sh");
	assert_string_equal(t->work_dir, "/var/lib/sb/work/1000/default");
	assert_string_equal(t->data_dir, "/var/lib/sb/data/hello");
	assert_int_equal(t->nargs, 1);
	assert_string_equal(t->args[0], "--greet");
	assert_int_equal(t->timeout_ms, 1000);
	assert_int_equal(t->principal_uid, 1000);
	grant_free(t);
	free(t);
	/* Reused: gone. */
	assert_null(grant_store_take(ID1));
	assert_null(grant_store_take(ID1));
}

static void
test_unknown_and_malformed_ids(void **state)
{
	struct grant g, *t;
	static const char *const bad[] = {"", "0123", ID1 "0",
	    "0123456789ABCDEF0123456789ABCDEF",
	    "0123456789abcdef0123456789abcdeg",
	    "0123456789abcdef0123456789abcde ",
	    "../../../../../../../../../etc/x",
	    "0123456789abcdef0123456789abcde", NULL};
	size_t i;

	(void)state;
	grant_make(&g, ID1);
	add_ok(&g);
	assert_null(grant_store_take(ID2));
	for (i = 0; bad[i] != NULL; i++)
		if ((t = grant_store_take(bad[i])) != NULL)
			fail_msg("id \"%s\" took a grant", bad[i]);
	assert_null(grant_store_take(NULL));
	/* Failed attempts do not consume the real grant. */
	assert_non_null(t = grant_store_take(ID1));
	grant_free(t);
	free(t);
}

static void
test_many_grants_independent(void **state)
{
	struct grant g, *t;
	char id[GRANT_ID_LEN + 1];
	int i;

	(void)state;
	for (i = 0; i < 100; i++) {
		snprintf(id, sizeof(id), "%032x", i);
		grant_make(&g, id);
		add_ok(&g);
	}
	for (i = 99; i >= 0; i -= 2) {
		snprintf(id, sizeof(id), "%032x", i);
		assert_non_null(t = grant_store_take(id));
		assert_string_equal(t->grant_id, id);
		grant_free(t);
		free(t);
		assert_null(grant_store_take(id));
	}
	/* The rest stay; grant_store_clear (teardown) frees them. */
	snprintf(id, sizeof(id), "%032x", 0);
	assert_non_null(t = grant_store_take(id));
	grant_free(t);
	free(t);
}

static void
test_expires_unused(void **state)
{
	struct grant g, *t;

	(void)state;
	grant_store_init(50);
	grant_make(&g, ID1);
	add_ok(&g);
	grant_make(&g, ID2);
	add_ok(&g);
	/* Taken in time: fine. */
	assert_non_null(t = grant_store_take(ID2));
	grant_free(t);
	free(t);
	usleep(120 * 1000);
	assert_null(grant_store_take(ID1));
	/* The expired id is free again for a new grant. */
	grant_make(&g, ID1);
	add_ok(&g);
	assert_non_null(t = grant_store_take(ID1));
	grant_free(t);
	free(t);
}

static void
test_default_ttl_does_not_expire_early(void **state)
{
	struct grant g, *t;

	(void)state;
	grant_store_init(0);
	grant_make(&g, ID1);
	add_ok(&g);
	usleep(120 * 1000);
	assert_non_null(t = grant_store_take(ID1));
	grant_free(t);
	free(t);
}

static void
test_work_dir_outside_refused(void **state)
{
	static const char *const bad[] = {"/tmp/work/1000/default",
	    "/var/lib/sb/data/hello", "/var/lib/sb/work", "/var/lib/sb/work/",
	    "/var/lib/sb/workx/1000", "/var/lib/sbx/work/1000",
	    "/var/lib/sb/work/../../../etc", "/var/lib/sb/work/1000/..",
	    "var/lib/sb/work/1000/default", "/var/lib/sb/work/.",
	    "/var/lib/sb/work/./", NULL};
	struct grant g;
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		grant_make(&g, ID1);
		set(&g.work_dir, bad[i]);
		if (grant_store_add(&g, NULL) == 0) {
			grant_store_clear();
			fail_msg("work_dir \"%s\" was accepted", bad[i]);
		}
		grant_free(&g);
	}
	grant_make(&g, ID1);
	set(&g.work_dir, "/etc");
	add_refused(&g, ERR_INTERNAL, "outside the state directory");
}

static void
test_data_dir_outside_refused(void **state)
{
	static const char *const bad[] = {"/var/lib/sb/work/1000/default",
	    "/var/lib/sb/data", "/var/lib/sb/data/",
	    "/var/lib/sb/data/hello/sub", /* one dir per skill */
	    "/var/lib/sb/data/..",
	    "/var/lib/sb/data/.", /* every skill's data */
	    "/var/lib/sb/datax/hello", "/srv/data/hello", NULL};
	struct grant g;
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		grant_make(&g, ID1);
		set(&g.data_dir, bad[i]);
		if (grant_store_add(&g, NULL) == 0) {
			grant_store_clear();
			fail_msg("data_dir \"%s\" was accepted", bad[i]);
		}
		grant_free(&g);
	}
	grant_make(&g, ID1);
	set(&g.data_dir, "/var/lib/sb/data/hello/../notes");
	add_refused(&g, ERR_INTERNAL, "\"..\"");
}

static void
test_entry_dotdot_refused(void **state)
{
	static const char *const bad[] = {
	    "../bin/sh", "scripts/../../x", "..", "a/..", NULL};
	struct grant g;
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		grant_make(&g, ID1);
		set(&g.entry, bad[i]);
		add_refused(&g, ERR_INTERNAL, "\"..\"");
	}
	grant_make(&g, ID1);
	set(&g.skill_dir, "/skills/hello/../../etc");
	add_refused(&g, ERR_INTERNAL, "\"..\"");
	/* A nested entry without ".." is fine. */
	grant_make(&g, ID1);
	set(&g.entry, "scripts/run.sh");
	add_ok(&g);
}

static void
test_timeout_bounds(void **state)
{
	struct grant g, *t;

	(void)state;
	grant_make(&g, ID1);
	g.timeout_ms = 300001;
	add_refused(&g, ERR_INTERNAL, "timeout");
	grant_make(&g, ID1);
	g.timeout_ms = 0;
	add_refused(&g, ERR_INTERNAL, "timeout");
	grant_make(&g, ID1);
	g.timeout_ms = UINT64_MAX;
	add_refused(&g, ERR_INTERNAL, "timeout");
	/* Exactly the maximum is allowed. */
	grant_make(&g, ID1);
	g.timeout_ms = 300000;
	add_ok(&g);
	assert_non_null(t = grant_store_take(ID1));
	assert_int_equal(t->timeout_ms, 300000);
	grant_free(t);
	free(t);
}

static void
test_duplicate_id_refused(void **state)
{
	struct grant g, *t;

	(void)state;
	grant_make(&g, ID1);
	add_ok(&g);
	grant_make(&g, ID1);
	set(&g.skill, "other");
	{
		struct error e;

		memset(&e, 0, sizeof(e));
		assert_int_equal(grant_store_add(&g, &e), -1);
		assert_int_equal(e.type, ERR_INTERNAL);
		assert_non_null(strstr(e.msg, "duplicate grant id"));
		assert_string_equal(g.skill, "other"); /* still the caller's */
		grant_free(&g);
	}
	/* The first grant is intact, not replaced. */
	assert_non_null(t = grant_store_take(ID1));
	assert_string_equal(t->skill, "hello");
	grant_free(t);
	free(t);
	/* Once taken, the id may be stored again. */
	grant_make(&g, ID1);
	add_ok(&g);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_taken_once),
	    T(test_unknown_and_malformed_ids),
	    T(test_many_grants_independent),
	    T(test_expires_unused),
	    T(test_default_ttl_does_not_expire_early),
	    T(test_work_dir_outside_refused),
	    T(test_data_dir_outside_refused),
	    T(test_entry_dotdot_refused),
	    T(test_timeout_bounds),
	    T(test_duplicate_id_refused),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
