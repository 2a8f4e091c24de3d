/*
 * auditd_fail.c: what auditd does when the log cannot be written, as
 * disk_full_action and disk_error_action say. suspend refuses every
 * record (so the broker and the master refuse every call with
 * audit_unavailable) until a retry or SIGUSR1 can write again; rotate
 * starts a new file (and, when the disk is full, removes the oldest
 * rotated files) and falls back to suspend; halt stops the daemon.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "auditd.h"

/* Refuse records from now on, until a retry or SIGUSR1 writes again. */
void
alog_suspend(struct alog *l, const char *why)
{
	if (l->suspended)
		return;
	l->suspended = 1;
	l->refused = 0;
	l->suspended_ms = now_mono_ms();
	snprintf(l->why, sizeof(l->why), "%s", why);
	alog_head_sync(l);
	log_warnx("audit log suspended: %s; every call is refused with "
	          "audit_unavailable until the log can be written again "
	          "(retried every second and on SIGUSR1)",
	    why);
}

/* A fresh file: rotate ours when it is still at the path, else reopen. */
static int
alog_fresh_file(struct alog *l, const char *why, struct error *e)
{
	struct stat fs, ps;

	if (l->fd != -1 && fstat(l->fd, &fs) == 0 && fs.st_nlink > 0 &&
	    fstatat(l->dirfd, l->name, &ps, AT_SYMLINK_NOFOLLOW) == 0 &&
	    ps.st_dev == fs.st_dev && ps.st_ino == fs.st_ino)
		return alog_rotate(l, why, e);
	return alog_reopen(l, why, e);
}

/* disk_*_action rotate; -1 when it did not get a writable file. */
static int
alog_failed_rotate(struct alog *l, enum alog_fail kind, const char *why)
{
	struct error e;

	if (alog_fresh_file(l, why, &e) == 0)
		return 0;
	while (kind == ALOG_FAIL_FULL && l->fail == ALOG_FAIL_FULL &&
	       alog_drop_oldest(l) == 0)
		if (alog_reopen(l, why, &e) == 0)
			return 0;
	log_warnx("rotating did not help: %s", e.msg);
	return -1;
}

/* The configured action for a failure; 0 when writing can go on. */
int
alog_failed(struct alog *l, enum alog_fail kind, const char *why)
{
	enum audit_fail_action a = kind == ALOG_FAIL_FULL
	                               ? l->set.disk_full_action
	                               : l->set.disk_error_action;

	log_warnx("audit log: %s (%s is %s)", why,
	    kind == ALOG_FAIL_FULL ? "disk_full_action" : "disk_error_action",
	    audit_fail_action_names[a]);
	if (a == AUDIT_FAIL_HALT) {
		alog_head_sync(l);
		log_warnx("halting: no call may run without an audit record");
		exit(AUDIT_EXIT_HALT);
	}
	if (a == AUDIT_FAIL_ROTATE && alog_failed_rotate(l, kind, why) == 0)
		return 0;
	alog_suspend(l, why);
	return -1;
}

/* Leave suspension once audit.resumed is durable; -1 while it is not. */
int
alog_try_resume(struct alog *l, const char *how)
{
	struct error e;
	json_t *rec;

	if (!l->suspended)
		return 0;
	if (alog_reopen(l, l->why, &e) == -1 ||
	    alog_health(l, &e) != ALOG_HEALTHY) {
		log_debug("audit log still suspended: %s", e.msg);
		return -1;
	}
	rec = audit_own_record("audit.resumed", "change", "success", l->why);
	json_set_dotted(
	    rec, "audit.refused", json_integer((json_int_t)l->refused));
	json_set_dotted(rec, "event.duration",
	    json_integer(
	        (json_int_t)((now_mono_ms() - l->suspended_ms) * 1000000)));
	if (alog_append_own(l, rec, &e) == -1 || alog_sync(l, 1, &e) == -1) {
		log_debug("audit log still suspended: %s", e.msg);
		return -1;
	}
	alog_head_write(l);
	l->suspended = 0;
	log_info("audit log resumed (%s) after refusing %llu records", how,
	    (unsigned long long)l->refused);
	return 0;
}
