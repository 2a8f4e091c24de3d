/*
 * auditd_start.c: what auditd finds at start. As root it only opens the
 * directory, the head file and the log; once unprivileged it reads the
 * chain's head, and continues the log from its last record, drops a
 * torn last line, or begins a new file (rotating away one whose end is
 * not a record).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "auditd.h"

/* Read the head file; a zero head when it is empty or unreadable. */
static void
alog_head_read(struct alog *l)
{
	char buf[2 * AUDIT_HEAD_SLOT];
	struct error e;
	ssize_t n;

	audit_head_zero(&l->head);
	l->head_slot = 1;
	if (l->headfd == -1)
		return;
	if ((n = pread(l->headfd, buf, sizeof(buf), 0)) <= 0)
		return;
	if (audit_head_file_dec(buf, (size_t)n, &l->head, &l->head_slot, &e) ==
	    -1) {
		log_warnx("the audit head file holds no valid head");
		audit_head_zero(&l->head);
	}
}

/* Note where the file and the head file disagree. */
static void
alog_compare_head(struct alog *l, const struct audit_head *saved)
{
	size_t off = strlen(l->notes);

	if (audit_head_is_zero(saved))
		return;
	if (saved->seq > l->head.seq)
		snprintf(l->notes + off, sizeof(l->notes) - off,
		    "the log ends "
		    "at sequence %llu but the head file is at %llu: records "
		    "%llu..%llu are missing; ",
		    (unsigned long long)l->head.seq,
		    (unsigned long long)saved->seq,
		    (unsigned long long)l->head.seq + 1,
		    (unsigned long long)saved->seq);
	else if (saved->seq == l->head.seq &&
	         strcmp(saved->hash, l->head.hash) != 0)
		snprintf(l->notes + off, sizeof(l->notes) - off,
		    "the log's "
		    "last record (sequence %llu) differs from the head "
		    "file's; ",
		    (unsigned long long)saved->seq);
	if (l->notes[off] != '\0')
		log_warnx("%s", l->notes + off);
}

/* Continue the chain from the file's last record. */
int
alog_recover(struct alog *l, struct error *e)
{
	struct audit_head saved = l->head;
	struct audit_line last;
	int r;

	if (l->size == 0)
		return alog_new_file(l, "", "the log file was empty", e);
	if ((r = alog_last_line(l, &last, e)) == 1)
		return alog_new_file(l, "",
		    "the log file held only a torn "
		    "line",
		    e);
	if (r == -1) {
		log_warnx("%s: %s; it is rotated away", l->name, e->msg);
		return alog_rotate(l,
		    "the last line of the previous file was "
		    "not a record",
		    e);
	}
	l->head.seq = last.seq;
	memcpy(l->head.hash, last.hash, sizeof(last.hash));
	alog_compare_head(l, &saved);
	return 0;
}

/*
 * At start, as root: take the directory, the head file and the log, if
 * there is one. Nothing is read from them yet (alog_start does that,
 * unprivileged).
 */
int
alog_open(struct alog *l, int dirfd, const char *name, int headfd,
    const struct audit_settings *set, struct error *e)
{
	struct stat st;

	memset(l, 0, sizeof(*l));
	l->dirfd = dirfd;
	l->headfd = headfd;
	l->set = *set;
	snprintf(l->name, sizeof(l->name), "%s", name);
	if (gethostname(l->host, sizeof(l->host) - 1) == -1)
		snprintf(l->host, sizeof(l->host), "localhost");
	l->fd = openat(dirfd, name, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (l->fd == -1 && errno == ENOENT)
		return 0;
	if (l->fd == -1)
		return error_set(
		    e, ERR_INTERNAL, "open %s: %s", name, strerror(errno));
	if (fstat(l->fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
		return error_set(e, ERR_INTERNAL,
		    "%s is not a regular file with one link", name);
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	l->size = st.st_size;
	return 0;
}

/* Unprivileged: the chain's head, then recovery (or a new file). */
int
alog_start(struct alog *l, struct error *e)
{
	alog_head_read(l);
	if (l->fd == -1)
		return alog_new_file(l,
		    audit_head_is_zero(&l->head) ? "" : l->name,
		    audit_head_is_zero(&l->head)
		        ? "a new audit log"
		        : "the log file was missing at start",
		    e);
	return alog_recover(l, e);
}
