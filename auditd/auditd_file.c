/*
 * auditd_file.c: which file the log is. Every file starts with a header
 * record (audit.created for a new chain, audit.rotated when it continues
 * the chain of a previous file) naming the previous file and its last
 * sequence and hash. Rotation renames NAME.N to NAME.N+1 and NAME to
 * NAME.1, then creates NAME; a reopen (SIGUSR1, a write that finds the
 * path moved, or a retry) follows a file that logrotate or an admin
 * moved, replaced or removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "auditd.h"

#define ROTATED_MAX 100000
#define CREATE_GRACE_MS 20 /* a moved log's creator gets this long */

/* The header record, then a sync of the file and of its directory. */
static int
alog_header(
    struct alog *l, const char *prev_name, const char *reason, struct error *e)
{
	json_t *rec;

	rec = audit_own_record(
	    audit_head_is_zero(&l->head) ? "audit.created" : "audit.rotated",
	    "creation", "success", reason);
	json_set_dotted(rec, "file.name", json_string(l->name));
	json_set_dotted(rec, "audit.previous.file",
	    audit_text(prev_name, strlen(prev_name), AUDIT_FIELD_MAX));
	json_set_dotted(rec, "audit.previous.sequence",
	    json_integer((json_int_t)l->head.seq));
	json_set_dotted(rec, "audit.previous.hash", json_string(l->head.hash));
	if (alog_append_own(l, rec, e) == -1 || alog_sync(l, 1, e) == -1)
		return -1;
	if (fsync(l->dirfd) == -1)
		log_warn("syncing the audit log directory");
	l->file_first = l->head.seq;
	alog_head_write(l);
	log_info("%s: new file (%s)", l->name, reason);
	return 0;
}

/* Start the file at the path (created unless open) with its header. */
int
alog_new_file(
    struct alog *l, const char *prev_name, const char *reason, struct error *e)
{
	struct stat st;

	snprintf(l->prev_name, sizeof(l->prev_name), "%s", prev_name);
	if (l->fd == -1) {
		l->fd = openat(l->dirfd, l->name,
		    O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC |
		        O_NOFOLLOW,
		    0640);
		if (l->fd == -1) {
			l->fail = ALOG_FAIL_ERROR;
			return error_set(e, ERR_AUDIT_UNAVAILABLE,
			    "creating %s: %s", l->name, strerror(errno));
		}
		if (fstat(l->fd, &st) == -1)
			fatal("fstat %s", l->name);
		l->dev = st.st_dev;
		l->ino = st.st_ino;
		l->size = 0;
	}
	return alog_header(l, l->prev_name, reason, e);
}

/* N of "NAME.N", or 0 when ent is not a rotated file of the log. */
static unsigned long
rotated_number(const struct alog *l, const char *ent)
{
	size_t n = strlen(l->name);
	uint64_t v;

	if (strncmp(ent, l->name, n) != 0 || ent[n] != '.' ||
	    parse_uint(ent + n + 1, 1, ROTATED_MAX, &v) == -1 ||
	    ent[n + 1] == '0')
		return 0;
	return (unsigned long)v;
}

/* The numbers of the rotated files present, highest first. */
static size_t
rotated_list(const struct alog *l, unsigned long **out)
{
	unsigned long *v = NULL, k, t;
	size_t n = 0, cap = 0, i, j;
	struct dirent *de;
	DIR *d;
	int fd;

	*out = NULL;
	if ((fd = openat(l->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	        -1 ||
	    (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if ((k = rotated_number(l, de->d_name)) != 0) {
			if (n == cap)
				v = xreallocarray(
				    v, cap = cap * 2 + 16, sizeof(*v));
			v[n++] = k;
		}
	closedir(d);
	for (i = 1; i < n; i++) /* insertion sort, descending */
		for (j = i; j > 0 && v[j - 1] < v[j]; j--) {
			t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	*out = v;
	return n;
}

/* NAME.from (NAME for 0) to NAME.to; a missing file is no error. */
static int
rename_rotated(
    struct alog *l, unsigned long from, unsigned long to, struct error *e)
{
	char a[300], b[300];

	if (from == 0)
		snprintf(a, sizeof(a), "%s", l->name);
	else
		snprintf(a, sizeof(a), "%s.%lu", l->name, from);
	snprintf(b, sizeof(b), "%s.%lu", l->name, to);
	if (renameat(l->dirfd, a, l->dirfd, b) == -1 && errno != ENOENT) {
		l->fail = ALOG_FAIL_ERROR;
		return error_set(e, ERR_AUDIT_UNAVAILABLE,
		    "rename %s to %s: "
		    "%s",
		    a, b, strerror(errno));
	}
	return 0;
}

/* Make room for NAME.1: drop what num_logs drops, shift the rest up. */
int
alog_shift(struct alog *l, struct error *e)
{
	unsigned long *v, keep = (unsigned long)l->set.num_logs - 1;
	size_t n, i;
	char old[300];
	int r = 0;

	n = rotated_list(l, &v);
	for (i = 0; i < n && r == 0; i++) {
		if (l->set.max_log_file_action == AUDIT_MAX_ROTATE &&
		    v[i] >= keep) {
			snprintf(old, sizeof(old), "%s.%lu", l->name, v[i]);
			if (unlinkat(l->dirfd, old, 0) == -1 && errno != ENOENT)
				log_warn("removing %s", old);
			continue;
		}
		if (v[i] >= ROTATED_MAX)
			r = error_set(e, ERR_AUDIT_UNAVAILABLE,
			    "%lu rotated "
			    "files: remove some",
			    v[i]);
		else
			r = rename_rotated(l, v[i], v[i] + 1, e);
	}
	free(v);
	if (r == 0)
		r = rename_rotated(l, 0, 1, e);
	if (fsync(l->dirfd) == -1)
		log_warn("syncing the audit log directory");
	return r;
}

/* Sync, shift and start a new file whose header names NAME.1. */
int
alog_rotate(struct alog *l, const char *reason, struct error *e)
{
	char prev[300];

	if (alog_sync(l, 1, e) == -1)
		log_warnx("rotating %s: %s", l->name, e->msg);
	alog_head_sync(l);
	if (alog_shift(l, e) == -1)
		return -1;
	alog_close(l);
	snprintf(prev, sizeof(prev), "%s.1", l->name);
	return alog_new_file(l, prev, reason, e);
}

/* Disk full: remove the highest NAME.N (never NAME.1); -1 if none. */
int
alog_drop_oldest(struct alog *l)
{
	unsigned long *v;
	char old[300];
	size_t n;
	int r = -1;

	n = rotated_list(l, &v);
	if (n > 0 && v[0] >= 2) {
		snprintf(old, sizeof(old), "%s.%lu", l->name, v[0]);
		if (unlinkat(l->dirfd, old, 0) == 0) {
			log_warnx("disk full: removed %s to make room", old);
			r = 0;
		} else
			log_warn("removing %s", old);
	}
	free(v);
	return r;
}

/* Take over the file now at the log's path (it is not ours). */
static int
alog_adopt(struct alog *l, const char *why, struct error *e)
{
	struct audit_head saved = l->head;
	struct audit_line last;
	struct stat st;
	int fd, r;

	fd = openat(
	    l->dirfd, l->name, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 || fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 1) {
		l->fail = ALOG_FAIL_ERROR;
		error_set(e, ERR_AUDIT_UNAVAILABLE, "opening %s: %s", l->name,
		    fd == -1 ? strerror(errno)
		             : "not a regular file with one "
		               "link");
		if (fd != -1)
			close(fd);
		return -1;
	}
	alog_sync(l, 1, e);
	alog_close(l);
	l->fd = fd;
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	l->size = st.st_size;
	snprintf(l->prev_name, sizeof(l->prev_name), "%s", l->name);
	if (l->size == 0)
		return alog_header(l, l->name, why, e);
	r = alog_last_line(l, &last, e);
	if (r == 0 && last.seq == saved.seq &&
	    strcmp(last.hash, saved.hash) == 0)
		return 0; /* our own file, moved back */
	if (r == 1)
		return alog_header(l, l->name, why, e);
	return alog_rotate(l,
	    "the file at the log's path held records that "
	    "do not continue the chain",
	    e);
}

/*
 * The open log was moved and nothing is at its path yet: logrotate's
 * "create" makes the new file right after its rename, so wait a few ms
 * for it rather than race it to O_EXCL (its create would fail). 0 with
 * *ps once a file is there; -1 with errno set otherwise.
 */
static int
alog_wait_creator(struct alog *l, struct stat *ps)
{
	struct timespec ms = {0, 1000000};
	int i;

	for (i = 0; i < CREATE_GRACE_MS; i++) {
		if (nanosleep(&ms, NULL) == -1 && errno != EINTR)
			return -1;
		if (fstatat(l->dirfd, l->name, ps, AT_SYMLINK_NOFOLLOW) == 0)
			return 0;
		if (errno != ENOENT)
			return -1;
	}
	return -1;
}

/* Follow the path: a new, replaced or missing file, or nothing to do. */
int
alog_reopen(struct alog *l, const char *why, struct error *e)
{
	struct stat fs, ps;
	int have = l->fd != -1 && fstat(l->fd, &fs) == 0;

	if (fstatat(l->dirfd, l->name, &ps, AT_SYMLINK_NOFOLLOW) == -1 &&
	    (errno != ENOENT || !have || fs.st_nlink == 0 ||
	        alog_wait_creator(l, &ps) == -1)) {
		if (errno != ENOENT) {
			l->fail = ALOG_FAIL_ERROR;
			return error_set(e, ERR_AUDIT_UNAVAILABLE, "%s: %s",
			    l->name, strerror(errno));
		}
		if (have)
			alog_sync(l, 1, e);
		alog_close(l);
		return alog_new_file(l, l->name, why, e);
	}
	if (!have || ps.st_dev != fs.st_dev || ps.st_ino != fs.st_ino)
		return alog_adopt(l, why, e);
	if (fs.st_size != l->size)
		return alog_rotate(
		    l, "the log file changed size under auditd", e);
	if (faccessat(l->dirfd, l->name, W_OK, 0) == -1) {
		l->fail = ALOG_FAIL_ERROR;
		return error_set(e, ERR_AUDIT_UNAVAILABLE,
		    "%s is not writable "
		    "by auditd: %s",
		    l->name, strerror(errno));
	}
	if (l->size == 0)
		return alog_header(l, l->prev_name, why, e);
	return 0;
}
