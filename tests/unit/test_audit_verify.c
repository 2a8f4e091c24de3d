/*
 * test_audit_verify.c: skillctl audit verify (cli_audit.c) on logs that
 * auditd's own code wrote, then tampered with: a line edited, deleted,
 * moved, inserted or duplicated, the tail cut off (caught with a head),
 * a torn last line, a file of a rotated series missing or swapped. Each
 * must fail and name the first bad event.sequence.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../auditd/auditd.h"
#include "../../cli/cli.h"
#include "../../lib/log.h"

#define NREC 10 /* header, then records 2..NREC */
#define LINES_MAX 64

struct fixture {
	char dir[64];
	char *lines[LINES_MAX]; /* the log, one line each (with newline) */
	size_t n;
	struct audit_head head;
};

static char *
path_in(struct fixture *f, const char *name)
{
	static char p[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", f->dir, name);
	return p[i];
}

/* Write a log of NREC records with auditd's code, and read it back. */
static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct audit_settings set;
	char buf[AUDIT_LINE_MAX];
	struct alog l;
	struct error e;
	int dirfd, i;
	FILE *fp;

	snprintf(f->dir, sizeof(f->dir), "/tmp/sbverify.XXXXXX");
	if (mkdtemp(f->dir) == NULL ||
	    (dirfd = open(f->dir, O_RDONLY | O_DIRECTORY)) == -1)
		return -1;
	audit_settings_default(&set);
	if (alog_open(&l, dirfd, "audit.jsonl", -1, &set, &e) == -1 ||
	    alog_start(&l, &e) == -1)
		return -1;
	for (i = 2; i <= NREC; i++)
		if (alog_append_own(&l,
		        audit_own_record(
		            "test.record", "info", "success", NULL),
		        &e) == -1)
			return -1;
	f->head = l.head;
	alog_close(&l);
	close(dirfd);
	if ((fp = fopen(path_in(f, "audit.jsonl"), "r")) == NULL)
		return -1;
	while (f->n < LINES_MAX && fgets(buf, sizeof(buf), fp) != NULL)
		f->lines[f->n++] = strdup(buf);
	fclose(fp);
	*state = f;
	return f->n == NREC ? 0 : -1;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	size_t i;

	for (i = 0; i < f->n; i++)
		free(f->lines[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* Write the lines at the given indexes (-1 ends) as file name. */
static void
write_lines(struct fixture *f, const char *name, const int *idx)
{
	FILE *fp = fopen(path_in(f, name), "w");
	int i;

	assert_non_null(fp);
	for (i = 0; idx[i] != -1; i++)
		fputs(f->lines[idx[i]], fp);
	fclose(fp);
}

/* Verify files; returns the first bad sequence (0 when good). */
static uint64_t
verify(struct fixture *f, const char *const *names, size_t n,
    const struct audit_head *h)
{
	struct audit_verify res;
	char *files[8];
	size_t i;
	FILE *out = fopen("/dev/null", "w");

	for (i = 0; i < n; i++)
		files[i] = strdup(path_in(f, names[i]));
	cli_audit_verify_files(files, n, h, out, &res);
	for (i = 0; i < n; i++)
		free(files[i]);
	fclose(out);
	return res.bad_seq;
}

static uint64_t
verify1(struct fixture *f, const int *idx, const struct audit_head *h)
{
	static const char *const name[] = {"t.jsonl"};

	write_lines(f, "t.jsonl", idx);
	return verify(f, name, 1, h);
}

static void
test_intact(void **state)
{
	struct fixture *f = *state;
	static const int all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1};

	assert_int_equal(verify1(f, all, NULL), 0);
	assert_int_equal(verify1(f, all, &f->head), 0);
}

static void
test_edited(void **state)
{
	struct fixture *f = *state;
	static const int all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1};
	char *p;

	p = strstr(f->lines[4], "\"success\"");
	assert_non_null(p);
	memcpy(p, "\"failure\"", 9);
	assert_int_equal(verify1(f, all, NULL), 5);
	memcpy(p, "\"success\"", 9);
	/* The sequence number itself edited. */
	p = strstr(f->lines[6], "\"sequence\":7");
	assert_non_null(p);
	p[11] = '9';
	assert_int_equal(verify1(f, all, NULL), 7);
}

static void
test_deleted(void **state)
{
	static const int gap[] = {0, 1, 2, 3, 5, 6, 7, 8, 9, -1};
	static const int first[] = {1, 2, 3, -1};

	assert_int_equal(verify1(*state, gap, NULL), 5);
	/* Without its header, a file does not verify. */
	assert_int_not_equal(verify1(*state, first, NULL), 0);
}

static void
test_reordered(void **state)
{
	static const int swap[] = {0, 1, 2, 3, 5, 4, 6, 7, 8, 9, -1};
	static const int last[] = {0, 1, 2, 3, 4, 5, 6, 7, 9, 8, -1};

	assert_int_equal(verify1(*state, swap, NULL), 5);
	assert_int_equal(verify1(*state, last, NULL), 9);
}

static void
test_inserted_duplicated(void **state)
{
	static const int dup[] = {0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9, -1};
	static const int early[] = {0, 1, 2, 8, 3, 4, 5, 6, 7, 9, -1};

	assert_int_equal(verify1(*state, dup, NULL), 5);
	assert_int_equal(verify1(*state, early, NULL), 4);
}

/* A valid-looking line forged with the right sequence still breaks. */
static void
test_forged_line(void **state)
{
	struct fixture *f = *state;
	static const int all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1};
	struct audit_stamp st = {5,
	    "1111111111111111111111111111111111111111"
	    "111111111111111111111111",
	    "broker", "host", NULL};
	char hash[HASH_HEX_LEN + 1], *old = f->lines[4];
	json_t *rec =
	    audit_own_record("invoke.received", "start", "unknown", NULL);
	size_t len;

	audit_record_stamp(rec, &st);
	f->lines[4] = audit_line_encode(rec, hash, &len);
	json_decref(rec);
	assert_int_equal(verify1(f, all, NULL), 5);
	free(f->lines[4]);
	f->lines[4] = old;
}

static void
test_truncated_tail(void **state)
{
	struct fixture *f = *state;
	static const int cut[] = {0, 1, 2, 3, 4, 5, 6, -1};
	struct audit_head old = f->head;
	char arg[100];
	struct error e;

	/* The chain alone cannot see it... */
	assert_int_equal(verify1(f, cut, NULL), 0);
	/* ...the head can. */
	assert_int_equal(verify1(f, cut, &f->head), 8);
	/* An older head (copied off the host earlier) still matches. */
	snprintf(arg, sizeof(arg), "3:%.64s",
	    strstr(f->lines[2], ",\"hash\":\"") + 9);
	assert_int_equal(audit_head_arg_dec(arg, &old, &e), 0);
	assert_int_equal(verify1(f, cut, &old), 0);
	/* A head whose hash differs: the log was rewritten there. */
	old.hash[0] = old.hash[0] == 'a' ? 'b' : 'a';
	assert_int_equal(verify1(f, cut, &old), 3);
}

static void
test_torn_last_line(void **state)
{
	struct fixture *f = *state;
	static const int all[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1};
	size_t n = strlen(f->lines[9]);

	f->lines[9][n - 20] = '\0';
	assert_int_equal(verify1(f, all, NULL), 10);
}

/* A series: [0..3] and [4..9] as two files, as if rotated at 4. */
static void
test_series(void **state)
{
	struct fixture *f = *state;
	static const int a[] = {0, 1, 2, 3, -1};
	static const int b[] = {4, 5, 6, 7, 8, 9, -1};
	static const char *const both[] = {"b", "a"};
	static const char *const only_b[] = {"b"};

	write_lines(f, "a", a);
	write_lines(f, "b", b);
	/* Line 4 is no header, so b alone does not verify... */
	assert_int_not_equal(verify(f, only_b, 1, NULL), 0);
	/* ...nor does the pair, in either order. */
	assert_int_not_equal(verify(f, both, 2, NULL), 0);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_intact),
	    T(test_edited),
	    T(test_deleted),
	    T(test_reordered),
	    T(test_inserted_duplicated),
	    T(test_forged_line),
	    T(test_truncated_tail),
	    T(test_torn_last_line),
	    T(test_series),
	};
#undef T

	log_init("test_audit_verify", 1, -1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
