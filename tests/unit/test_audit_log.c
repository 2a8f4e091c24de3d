/*
 * test_audit_log.c: auditd's file handling (auditd_log.c, auditd_file.c,
 * auditd_fail.c) in a temp directory: headers, recovery of the chain on
 * reopen, a torn tail cut off, failed writes cut back, rotation with
 * num_logs and keep_logs, a log moved, deleted or replaced under
 * auditd, suspend and resume, and the head file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../auditd/auditd.h"
#include "../../cli/cli.h"
#include "../../lib/log.h"

struct fixture {
	char dir[64];
	int dirfd, headfd;
	struct audit_settings set;
	struct alog l;
};

static int
setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char head[128];

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/sbaudit.XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	snprintf(head, sizeof(head), "%s/head", f->dir);
	f->headfd = open(head, O_RDWR | O_CREAT, 0600);
	audit_settings_default(&f->set);
	*state = f;
	return f->dirfd == -1 || f->headfd == -1 ? -1 : 0;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	if (f->l.fd > 0)
		close(f->l.fd);
	close(f->dirfd);
	close(f->headfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void
fx_open(struct fixture *f)
{
	struct error e;

	if (alog_open(&f->l, f->dirfd, "audit.jsonl", f->headfd, &f->set, &e) ==
	        -1 ||
	    alog_start(&f->l, &e) == -1)
		fail_msg("alog_open: %s", e.msg);
}

/* n test records, synced. */
static void
fx_records(struct fixture *f, int n)
{
	struct error e;
	json_t *rec;
	int i;

	for (i = 0; i < n; i++) {
		rec = audit_own_record("test.record", "info", "success", NULL);
		json_set_dotted(rec, "test.n", json_integer(i));
		if (alog_append_own(&f->l, rec, &e) == -1)
			fail_msg("append: %s", e.msg);
	}
	assert_int_equal(alog_sync(&f->l, 1, &e), 0);
	alog_head_write(&f->l);
}

static char *
fx_path(const struct fixture *f, const char *name)
{
	static char p[4][128];
	static int i;

	i = (i + 1) % 4;
	snprintf(p[i], sizeof(p[i]), "%s/%s", f->dir, name);
	return p[i];
}

static int
exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Verify files with skillctl's verifier; returns the first bad sequence. */
static uint64_t
fx_verify(const struct fixture *f, const char *const *names, size_t n,
    const struct audit_head *h)
{
	struct audit_verify res;
	char *files[8];
	size_t i;
	FILE *out = fopen("/dev/null", "w");

	for (i = 0; i < n; i++)
		files[i] = fx_path(f, names[i]);
	cli_audit_verify_files(files, n, h, out, &res);
	fclose(out);
	return res.bad_seq;
}

/* The first line of a file, parsed. */
static json_t *
first_record(const struct fixture *f, const char *name)
{
	char buf[AUDIT_LINE_MAX];
	json_t *j;
	FILE *fp = fopen(fx_path(f, name), "r");

	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	j = json_loads(buf, 0, NULL);
	assert_non_null(j);
	return j;
}

static const char *
jstr(json_t *j, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(j, a), b));
}

static void
test_new_log_has_header(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = {"audit.jsonl"};
	json_t *j;

	fx_open(f);
	assert_int_equal(f->l.head.seq, 1);
	fx_records(f, 3);
	assert_int_equal(f->l.head.seq, 4);
	j = first_record(f, "audit.jsonl");
	assert_string_equal(jstr(j, "event", "action"), "audit.created");
	assert_string_equal(jstr(j, "file", "name"), "audit.jsonl");
	json_decref(j);
	assert_int_equal(fx_verify(f, names, 1, &f->l.head), 0);
}

static void
test_reopen_continues(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = {"audit.jsonl"};
	struct audit_head h;

	fx_open(f);
	fx_records(f, 5);
	h = f->l.head;
	alog_close(&f->l);
	fx_open(f);
	assert_int_equal(f->l.head.seq, h.seq);
	assert_string_equal(f->l.head.hash, h.hash);
	assert_string_equal(f->l.notes, "");
	fx_records(f, 2);
	assert_int_equal(fx_verify(f, names, 1, &f->l.head), 0);
}

static void
test_torn_tail_cut(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = {"audit.jsonl"};
	uint64_t seq;
	int fd;

	fx_open(f);
	fx_records(f, 2);
	seq = f->l.head.seq;
	alog_close(&f->l);
	fd = open(fx_path(f, "audit.jsonl"), O_WRONLY | O_APPEND);
	assert_int_equal(write(fd, "{\"torn\":", 8), 8);
	close(fd);
	fx_open(f);
	assert_int_equal(f->l.head.seq, seq);
	assert_non_null(strstr(f->l.notes, "torn"));
	fx_records(f, 1);
	assert_int_equal(fx_verify(f, names, 1, NULL), 0);
}

/* The head file is ahead of the log: recovery says what is missing. */
static void
test_head_ahead(void **state)
{
	struct fixture *f = *state;
	struct audit_head saved;
	char line[AUDIT_LINE_MAX];
	FILE *fp;
	long keep = 0;
	int n = 0;

	fx_open(f);
	fx_records(f, 4);
	saved = f->l.head;
	alog_close(&f->l);
	fp = fopen(fx_path(f, "audit.jsonl"), "r");
	while (n < 3 && fgets(line, sizeof(line), fp) != NULL) {
		keep = ftell(fp);
		n++;
	}
	fclose(fp);
	assert_int_equal(truncate(fx_path(f, "audit.jsonl"), keep), 0);
	fx_open(f);
	assert_int_equal(f->l.head.seq, 3);
	assert_non_null(strstr(f->l.notes, "missing"));
	(void)saved;
}

/* A write the file system cuts short leaves no partial line behind. */
static void
test_short_write_cut_back(void **state)
{
	struct fixture *f = *state;
	struct rlimit old, small;
	struct audit_head h;
	struct error e;
	struct stat st;
	json_t *rec;
	off_t size;

	fx_open(f);
	fx_records(f, 1);
	h = f->l.head;
	size = f->l.size;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = (rlim_t)size + 10;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	rec = audit_own_record("test.record", "info", "success", NULL);
	assert_int_equal(alog_append_own(&f->l, rec, &e), -1);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_not_equal(f->l.fail, ALOG_FAIL_NONE);
	assert_int_equal(fstat(f->l.fd, &st), 0);
	assert_int_equal(st.st_size, size);
	assert_int_equal(f->l.head.seq, h.seq);
	assert_string_equal(f->l.head.hash, h.hash);
	assert_int_equal(alog_health(&f->l, &e), ALOG_HEALTHY);
}

/* Three records' lines as auditd batches them, after the log's head. */
static size_t
fx_lines(struct fixture *f, char *buf, size_t cap, struct audit_head *h)
{
	char *line;
	size_t len, off = 0;
	json_t *rec;
	int i;

	*h = f->l.head;
	for (i = 0; i < 3; i++) {
		struct audit_stamp st = {
		    h->seq + 1, h->hash, "broker", "host", NULL};

		rec = audit_own_record("test.batched", "info", "success", NULL);
		audit_record_stamp(rec, &st);
		line = audit_line_encode(rec, h->hash, &len);
		json_decref(rec);
		assert_true(off + len <= cap);
		memcpy(buf + off, line, len);
		free(line);
		off += len;
		h->seq++;
	}
	return off;
}

/*
 * A batch's lines go in one write: the head moves to its last record;
 * cut short, the whole batch is cut back and nothing moves.
 */
static void
test_write_lines(void **state)
{
	static const char *const names[] = {"audit.jsonl"};
	struct fixture *f = *state;
	struct rlimit old, small;
	struct audit_head h, before;
	struct error e;
	struct stat st;
	char buf[8192];
	size_t len;
	off_t size;

	fx_open(f);
	fx_records(f, 1);
	len = fx_lines(f, buf, sizeof(buf), &h);
	size = f->l.size;
	assert_int_equal(alog_write_lines(&f->l, buf, len, 3, &h, &e), 0);
	assert_int_equal(f->l.size, size + (off_t)len);
	assert_int_equal(f->l.head.seq, h.seq);
	assert_string_equal(f->l.head.hash, h.hash);
	assert_int_equal(alog_health(&f->l, &e), ALOG_HEALTHY);
	assert_int_equal(fx_verify(f, names, 1, &f->l.head), 0);
	/* room for one line and a half: all three cut back */
	before = f->l.head;
	len = fx_lines(f, buf, sizeof(buf), &h);
	size = f->l.size;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = (rlim_t)size + (rlim_t)len / 2;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	assert_int_equal(alog_write_lines(&f->l, buf, len, 3, &h, &e), -1);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(f->l.fail, ALOG_FAIL_FULL);
	assert_int_equal(fstat(f->l.fd, &st), 0);
	assert_int_equal(st.st_size, size);
	assert_int_equal(f->l.size, size);
	assert_int_equal(f->l.head.seq, before.seq);
	assert_string_equal(f->l.head.hash, before.hash);
	assert_int_equal(alog_health(&f->l, &e), ALOG_HEALTHY);
	assert_int_equal(fx_verify(f, names, 1, &f->l.head), 0);
}

static void
test_rotate_num_logs(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = {
	    "audit.jsonl.2", "audit.jsonl", "audit.jsonl.1"};
	struct error e;
	json_t *j;
	int i;

	f->set.num_logs = 3;
	fx_open(f);
	for (i = 0; i < 4; i++) {
		fx_records(f, 2);
		assert_int_equal(alog_rotate(&f->l, "test", &e), 0);
	}
	fx_records(f, 1);
	assert_true(exists(fx_path(f, "audit.jsonl.1")));
	assert_true(exists(fx_path(f, "audit.jsonl.2")));
	assert_false(exists(fx_path(f, "audit.jsonl.3")));
	j = first_record(f, "audit.jsonl");
	assert_string_equal(jstr(j, "event", "action"), "audit.rotated");
	assert_string_equal(
	    jstr(json_object_get(j, "audit"), "previous", "file"),
	    "audit.jsonl.1");
	json_decref(j);
	/* The series verifies in any order; with a file missing it does not. */
	assert_int_equal(fx_verify(f, names, 3, &f->l.head), 0);
	assert_int_not_equal(fx_verify(f, names, 2, &f->l.head), 0);
}

static void
test_rotate_keep_logs(void **state)
{
	struct fixture *f = *state;
	struct error e;
	int i;

	f->set.num_logs = 2;
	f->set.max_log_file_action = AUDIT_MAX_KEEP_LOGS;
	fx_open(f);
	for (i = 0; i < 4; i++) {
		fx_records(f, 1);
		assert_int_equal(alog_rotate(&f->l, "test", &e), 0);
	}
	for (i = 1; i <= 4; i++) {
		char n[32];
		snprintf(n, sizeof(n), "audit.jsonl.%d", i);
		assert_true(exists(fx_path(f, n)));
	}
}

static void
test_health(void **state)
{
	struct fixture *f = *state;
	struct error e;

	fx_open(f);
	fx_records(f, 1);
	assert_int_equal(alog_health(&f->l, &e), ALOG_HEALTHY);
	assert_int_equal(
	    rename(fx_path(f, "audit.jsonl"), fx_path(f, "moved")), 0);
	assert_int_equal(alog_health(&f->l, &e), ALOG_MOVED);
	assert_int_equal(unlink(fx_path(f, "moved")), 0);
	assert_int_equal(alog_health(&f->l, &e), ALOG_LOST);
}

static void
test_health_size_changed(void **state)
{
	struct fixture *f = *state;
	struct error e;

	fx_open(f);
	fx_records(f, 2);
	assert_int_equal(truncate(fx_path(f, "audit.jsonl"), 0), 0);
	assert_int_equal(alog_health(&f->l, &e), ALOG_BROKEN);
	/* A reopen rotates the changed file away and starts anew. */
	assert_int_equal(alog_reopen(&f->l, "test", &e), 0);
	assert_true(exists(fx_path(f, "audit.jsonl.1")));
	assert_int_equal(alog_health(&f->l, &e), ALOG_HEALTHY);
}

/* logrotate's create: moved away, an empty file made in its place. */
static void
test_reopen_after_logrotate(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = {"audit.jsonl", "audit.jsonl.1"};
	struct error e;
	json_t *j;
	int fd;

	fx_open(f);
	fx_records(f, 3);
	assert_int_equal(
	    rename(fx_path(f, "audit.jsonl"), fx_path(f, "audit.jsonl.1")), 0);
	fd = open(fx_path(f, "audit.jsonl"), O_CREAT | O_WRONLY, 0640);
	close(fd);
	assert_int_equal(alog_reopen(&f->l, "reopened on SIGHUP", &e), 0);
	fx_records(f, 2);
	j = first_record(f, "audit.jsonl");
	assert_string_equal(jstr(j, "event", "action"), "audit.rotated");
	assert_string_equal(jstr(j, "event", "reason"), "reopened on SIGHUP");
	json_decref(j);
	assert_int_equal(fx_verify(f, names, 2, &f->l.head), 0);
	/* Nothing changed: a reopen is a no-op. */
	assert_int_equal(alog_reopen(&f->l, "again", &e), 0);
	assert_int_equal(alog_health(&f->l, &e), ALOG_HEALTHY);
}

/* Deleted under auditd: suspend, then a retry starts a new file. */
static void
test_deleted_suspend_resume(void **state)
{
	struct fixture *f = *state;
	struct error e;
	json_t *j;

	fx_open(f);
	fx_records(f, 2);
	assert_int_equal(unlink(fx_path(f, "audit.jsonl")), 0);
	assert_int_equal(alog_health(&f->l, &e), ALOG_LOST);
	assert_int_equal(alog_failed(&f->l, ALOG_FAIL_ERROR, e.msg), -1);
	assert_true(f->l.suspended);
	f->l.refused = 3;
	assert_int_equal(alog_try_resume(&f->l, "retry"), 0);
	assert_false(f->l.suspended);
	j = first_record(f, "audit.jsonl");
	assert_string_equal(jstr(j, "event", "action"), "audit.rotated");
	json_decref(j);
	assert_int_equal(f->l.head.seq, 5); /* header, audit.resumed */
}

/* disk_error_action rotate: a fresh file at once, no suspend. */
static void
test_error_rotate(void **state)
{
	struct fixture *f = *state;
	static const char *const names[] = {"audit.jsonl", "audit.jsonl.1"};

	f->set.disk_error_action = AUDIT_FAIL_ROTATE;
	fx_open(f);
	fx_records(f, 2);
	assert_int_equal(alog_failed(&f->l, ALOG_FAIL_ERROR, "test"), 0);
	assert_false(f->l.suspended);
	assert_true(exists(fx_path(f, "audit.jsonl.1")));
	fx_records(f, 1);
	assert_int_equal(fx_verify(f, names, 2, &f->l.head), 0);
}

/* The head file follows every commit, in alternating slots. */
static void
test_head_file(void **state)
{
	struct fixture *f = *state;
	char buf[2 * AUDIT_HEAD_SLOT];
	struct audit_head h;
	struct error e;

	fx_open(f);
	fx_records(f, 2);
	assert_int_equal(
	    pread(f->headfd, buf, sizeof(buf), 0), (ssize_t)sizeof(buf));
	assert_int_equal(
	    audit_head_file_dec(buf, sizeof(buf), &h, NULL, &e), 0);
	assert_int_equal(h.seq, f->l.head.seq);
	assert_string_equal(h.hash, f->l.head.hash);
	/* A new log file with the old head continues the chain. */
	alog_close(&f->l);
	assert_int_equal(unlink(fx_path(f, "audit.jsonl")), 0);
	fx_open(f);
	assert_int_equal(f->l.head.seq, h.seq + 1);
}

int
main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_new_log_has_header),
	    T(test_reopen_continues),
	    T(test_torn_tail_cut),
	    T(test_head_ahead),
	    T(test_short_write_cut_back),
	    T(test_write_lines),
	    T(test_rotate_num_logs),
	    T(test_rotate_keep_logs),
	    T(test_health),
	    T(test_health_size_changed),
	    T(test_reopen_after_logrotate),
	    T(test_deleted_suspend_resume),
	    T(test_error_rotate),
	    T(test_head_file),
	};
#undef T

	log_init("test_audit_log", 1, -1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
