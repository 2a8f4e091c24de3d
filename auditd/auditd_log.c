/*
 * auditd_log.c: the open audit log. One write() per record on an
 * O_APPEND descriptor; a short or failed write is cut back off, so the
 * file only ever holds whole lines. Syncs follow the flush setting. The
 * chain's head (last sequence and hash) goes to the head file after
 * each commit, in two alternating slots.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "auditd.h"

#define TAIL_SCAN (AUDIT_LINE_MAX + 1)

/* ENOSPC and EDQUOT mean "full"; anything else is an error. */
static enum alog_fail
fail_kind(int err)
{
	return err == ENOSPC || err == EDQUOT ? ALOG_FAIL_FULL
	                                      : ALOG_FAIL_ERROR;
}

/* Write the head to the other slot (synced at once with flush sync). */
void
alog_head_write(struct alog *l)
{
	char slot[AUDIT_HEAD_SLOT];
	int next = !l->head_slot;

	if (l->headfd == -1)
		return;
	audit_head_slot_enc(&l->head, slot);
	if (pwrite(l->headfd, slot, sizeof(slot),
	        (off_t)next * AUDIT_HEAD_SLOT) != (ssize_t)sizeof(slot)) {
		log_warn("writing the audit head file");
		return;
	}
	l->head_slot = next;
	l->head_dirty = 1;
	if (l->set.flush == AUDIT_FLUSH_SYNC)
		alog_head_sync(l);
}

/* Sync the head file if it was written since. */
void
alog_head_sync(struct alog *l)
{
	if (l->headfd == -1 || !l->head_dirty)
		return;
	if (fdatasync(l->headfd) == -1)
		log_warn("syncing the audit head file");
	else
		l->head_dirty = 0;
}

/* One record, one write(); a failure leaves the file as it was. */
int
alog_write(struct alog *l, const char *line, size_t len, const char *hash,
    struct error *e)
{
	ssize_t n;
	int err;

	if (l->fd == -1) {
		l->fail = ALOG_FAIL_ERROR;
		return error_set(
		    e, ERR_AUDIT_UNAVAILABLE, "no audit log file is open");
	}
	if ((n = write(l->fd, line, len)) == (ssize_t)len) {
		l->size += (off_t)len;
		l->head.seq++;
		memcpy(l->head.hash, hash, HASH_HEX_LEN + 1);
		l->unsynced++;
		return 0;
	}
	err = n == -1 ? errno : ENOSPC; /* a short write: out of room */
	if (n > 0 && ftruncate(l->fd, l->size) == -1)
		log_warn("cutting off a partial audit record");
	l->fail = fail_kind(err);
	return error_set(
	    e, ERR_AUDIT_UNAVAILABLE, "writing %s: %s", l->name, strerror(err));
}

/* A batch in one write(), as alog_write writes one line. */
int
alog_write_lines(struct alog *l, const char *buf, size_t len, uint64_t n,
    const struct audit_head *head, struct error *e)
{
	ssize_t w;
	int err;

	if (l->fd == -1) {
		l->fail = ALOG_FAIL_ERROR;
		return error_set(
		    e, ERR_AUDIT_UNAVAILABLE, "no audit log file is open");
	}
	if ((w = write(l->fd, buf, len)) == (ssize_t)len) {
		l->size += (off_t)len;
		l->head = *head;
		l->unsynced += n;
		return 0;
	}
	err = w == -1 ? errno : ENOSPC; /* a short write: out of room */
	if (w > 0 && ftruncate(l->fd, l->size) == -1)
		log_warn("cutting off partial audit records");
	l->fail = fail_kind(err);
	return error_set(
	    e, ERR_AUDIT_UNAVAILABLE, "writing %s: %s", l->name, strerror(err));
}

/* Stamp, encode and write one of auditd's own records (takes rec). */
int
alog_append_own(struct alog *l, json_t *rec, struct error *e)
{
	struct audit_stamp st = {
	    l->head.seq + 1, l->head.hash, "auditd", l->host, NULL};
	char hash[HASH_HEX_LEN + 1], *line;
	size_t len;
	int r;

	audit_record_stamp(rec, &st);
	line = audit_line_encode(rec, hash, &len);
	json_decref(rec);
	r = alog_write(l, line, len, hash, e);
	free(line);
	return r;
}

/* Sync as the flush mode says (force: sync whatever the mode). */
int
alog_sync(struct alog *l, int force, struct error *e)
{
	int r;

	if (l->fd == -1 || l->unsynced == 0)
		return 0;
	if (!force && (l->set.flush == AUDIT_FLUSH_NONE ||
	                  (l->set.flush == AUDIT_FLUSH_INCREMENTAL &&
	                      l->unsynced < l->set.freq)))
		return 0;
	r = l->set.flush == AUDIT_FLUSH_SYNC ? fsync(l->fd) : fdatasync(l->fd);
	if (r == -1) {
		l->fail = fail_kind(errno);
		return error_set(e, ERR_AUDIT_UNAVAILABLE, "syncing %s: %s",
		    l->name, strerror(errno));
	}
	l->unsynced = 0;
	return 0;
}

/* Is the open file still the log, whole, linked and writable? */
enum alog_health
alog_health(struct alog *l, struct error *e)
{
	struct stat fs, ps;

	if (l->fd == -1 || fstat(l->fd, &fs) == -1) {
		error_set(e, ERR_AUDIT_UNAVAILABLE, "no audit log file");
		return ALOG_BROKEN;
	}
	if (fs.st_nlink == 0) {
		error_set(e, ERR_AUDIT_UNAVAILABLE,
		    "%s was deleted under "
		    "auditd",
		    l->name);
		return ALOG_LOST;
	}
	if (fs.st_size != l->size) {
		error_set(e, ERR_AUDIT_UNAVAILABLE,
		    "%s changed size under "
		    "auditd (%lld bytes, %lld written): another writer, or "
		    "copytruncate",
		    l->name, (long long)fs.st_size, (long long)l->size);
		return ALOG_BROKEN;
	}
	if (fstatat(l->dirfd, l->name, &ps, AT_SYMLINK_NOFOLLOW) == -1 ||
	    ps.st_dev != fs.st_dev || ps.st_ino != fs.st_ino) {
		error_set(
		    e, ERR_AUDIT_UNAVAILABLE, "%s was moved away", l->name);
		return ALOG_MOVED;
	}
	if (faccessat(l->dirfd, l->name, W_OK, 0) == -1) {
		error_set(e, ERR_AUDIT_UNAVAILABLE,
		    "%s is no longer writable "
		    "by auditd: %s",
		    l->name, strerror(errno));
		return ALOG_READONLY;
	}
	return ALOG_HEALTHY;
}

/*
 * Does the path still name the open file? One fstatat, before a batch's
 * write: a file logrotate renamed gets no record written after auditd
 * could have seen the rename, so a shipper that stops reading a renamed
 * file at once (rsyslog imfile) misses nothing. 0 when it does not (moved
 * away, and maybe replaced); the caller follows the path before writing.
 */
int
alog_at_path(struct alog *l)
{
	struct stat ps, fs;

	if (l->fd == -1)
		return 1; /* nothing open: nothing written here */
	if (fstatat(l->dirfd, l->name, &ps, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno != ENOENT)
			return 1; /* an error: the commit's checks say */
	} else if (ps.st_dev == l->dev && ps.st_ino == l->ino)
		return 1;
	/* not at the path: moved, unless deleted (a disk error the
	 * commit's checks find, with its action) */
	return fstat(l->fd, &fs) == 0 && fs.st_nlink == 0;
}

/* Close the file (the path is left as it is). */
void
alog_close(struct alog *l)
{
	if (l->fd != -1 && close(l->fd) == -1)
		log_warn("closing %s", l->name);
	l->fd = -1;
}

/* Drop a torn last line (never acknowledged); returns bytes dropped. */
static off_t
alog_drop_torn(struct alog *l, const char *buf, size_t n, off_t off)
{
	const char *nl;
	off_t keep;

	for (nl = buf + n; nl > buf && nl[-1] != '\n'; nl--)
		;
	if (nl == buf && off > 0)
		return -1; /* no line end within a line's length */
	keep = off + (off_t)(nl - buf);
	if (ftruncate(l->fd, keep) == -1)
		return -1;
	log_warnx("%s ended in a torn record of %lld bytes; it was cut off",
	    l->name, (long long)(l->size - keep));
	snprintf(l->notes, sizeof(l->notes),
	    "a torn last line of %lld "
	    "bytes was cut off; ",
	    (long long)(l->size - keep));
	return l->size - keep;
}

/* The last whole line into *out: 0, 1 if no line is left, -1 if no record. */
int
alog_last_line(struct alog *l, struct audit_line *out, struct error *e)
{
	char *buf = xmalloc(TAIL_SCAN + 1), *start;
	off_t off;
	ssize_t n;
	int r = -1;

	off = l->size > TAIL_SCAN ? l->size - TAIL_SCAN : 0;
	if ((n = pread(l->fd, buf, (size_t)(l->size - off), off)) !=
	    l->size - off)
		error_set(e, ERR_AUDIT_UNAVAILABLE, "reading %s: %s", l->name,
		    n == -1 ? strerror(errno) : "short read");
	else if (buf[n - 1] != '\n' &&
	         alog_drop_torn(l, buf, (size_t)n, off) == -1)
		error_set(e, ERR_AUDIT_UNAVAILABLE,
		    "%s ends in a torn line "
		    "that cannot be cut off",
		    l->name);
	else {
		for (; n > 0 && buf[n - 1] != '\n'; n--)
			;
		l->size = off + n;
		if (n == 0) {
			free(buf);
			if (off == 0)
				return 1;
			return error_set(e, ERR_AUDIT_UNAVAILABLE,
			    "no whole line at the end of %s", l->name);
		}
		buf[--n] = '\0';
		start = memrchr(buf, '\n', (size_t)n);
		start = start ? start + 1 : buf;
		r = audit_line_check(start, (size_t)(buf + n - start), out, e);
	}
	free(buf);
	return r;
}
