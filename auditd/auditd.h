/*
 * auditd.h: the only writer of the audit log. auditd_chain.c holds the
 * line format and the head file format, which skillctl audit verify
 * shares; the other files are the daemon's.
 */
#ifndef SB_AUDITD_H
#define SB_AUDITD_H

#include <jansson.h>
#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/config.h"
#include "../lib/error.h"

#define AUDIT_LINE_MAX (32 * 1024) /* bytes of a line, newline included */
#define HASH_HEX_LEN 64
#define AUDIT_FIELD_MAX 4096 /* bytes of a string before it is cut */
#define AUDIT_ARRAY_MAX 64   /* items of an array before it is cut */
#define AUDIT_TRUNC_MARK "\xe2\x80\xa6[truncated]" /* "…[truncated]" */
#define AUDIT_ECS_VERSION "8.11.0"        /* the ECS the field names follow */
#define AUDIT_DATASET "skillbroker.audit" /* event.dataset */
#define AUDIT_HEAD_SLOT 128 /* bytes of one slot of the head file */
#define AUDIT_HEAD_MAGIC "skillbroker-audit-head"

/* The chain's head: the last record's sequence and hash. */
struct audit_head {
	uint64_t seq;
	char hash[HASH_HEX_LEN + 1];
};

/* What a verifier learns from one line. */
struct audit_line {
	uint64_t seq;
	char hash[HASH_HEX_LEN + 1];
	char prev[HASH_HEX_LEN + 1];
	char action[64];
};

/* Fields auditd stamps on every record. */
struct audit_stamp {
	uint64_t seq;
	const char *prev_hash;
	const char *provider; /* broker, master or auditd */
	const char *host;
	const char *ts; /* @timestamp; NULL: now */
};

enum alog_fail { ALOG_FAIL_NONE, ALOG_FAIL_FULL, ALOG_FAIL_ERROR };
/* MOVED and READONLY keep what was written; LOST and BROKEN do not. */
enum alog_health {
	ALOG_HEALTHY,
	ALOG_MOVED,
	ALOG_READONLY,
	ALOG_LOST,
	ALOG_BROKEN
};

/* The open log, its chain head and its failure state. */
struct alog {
	int dirfd;      /* the log's directory */
	char name[256]; /* the log's file name in it */
	int fd;         /* -1 while no file is open */
	dev_t dev;
	ino_t ino;
	off_t size;             /* bytes written: the file's size */
	struct audit_head head; /* the last record written */
	uint64_t file_first;    /* sequence of this file's header */
	uint64_t unsynced;      /* records written since the last sync */
	struct audit_settings set;
	char host[256];
	int headfd;              /* state_dir/audit.head, or -1 */
	int head_slot;           /* the slot written last */
	int head_dirty;          /* written since its last sync */
	enum alog_fail fail;     /* what the last failure was */
	int suspended;           /* records are refused */
	char why[ERROR_MSG_MAX]; /* why suspended */
	uint64_t refused, suspended_ms;
	char notes[512];     /* what start-up recovery found */
	char prev_name[300]; /* the previous file, for its header */
};

/* auditd_chain.c: the line and head formats (skillctl links this file) */
char *audit_line_encode(json_t *rec, char hash[HASH_HEX_LEN + 1], size_t *len);
int audit_line_check(
    const char *line, size_t len, struct audit_line *out, struct error *e);
int audit_is_header(const char *action);
void audit_head_zero(struct audit_head *h);
int audit_head_is_zero(const struct audit_head *h);
void audit_head_slot_enc(
    const struct audit_head *h, char slot[AUDIT_HEAD_SLOT]);
int audit_head_slot_dec(const char *slot, size_t len, struct audit_head *h);
int audit_head_file_dec(const char *buf, size_t len, struct audit_head *h,
    int *slot, struct error *e);
int audit_head_arg_dec(const char *s, struct audit_head *h, struct error *e);
int audit_hex64(const char *s);

/* auditd_record.c: records from events, cut to fit a line */
void json_set_dotted(json_t *obj, const char *path, json_t *value);
json_t *audit_text(const char *s, size_t len, size_t cap);
json_t *audit_record_from_event(
    const msgpack_object *ev, size_t cap, struct error *e);
void audit_record_stamp(json_t *rec, const struct audit_stamp *st);
char *audit_event_line(const msgpack_object *ev, const struct audit_stamp *st,
    char hash[HASH_HEX_LEN + 1], size_t *len, struct error *e);
char *audit_event_line_json(const msgpack_object *ev,
    const struct audit_stamp *st, char hash[HASH_HEX_LEN + 1], size_t *len,
    struct error *e);
/* Length of the well-formed UTF-8 sequence at p (NUL is not), or 0. */
size_t audit_utf8_seq(const unsigned char *p, size_t left);
/* A sender may name this field (dotted [a-z0-9_], not auditd's own). */
int audit_key_ok(const char *k);

/* auditd_canon.c: the line of an ordinary event without jansson */
/*
 * 1 with *line (the caller frees it), *len and hash as
 * audit_event_line_json gives them for this cap; 0 when the event is
 * not ordinary (the general path decides it).
 */
int canon_event_line(const msgpack_object *ev, const struct audit_stamp *st,
    size_t cap, char hash[HASH_HEX_LEN + 1], char **line, size_t *len);
json_t *audit_own_record(const char *action, const char *type,
    const char *outcome, const char *reason);

/* auditd_log.c: the open file: write, sync, health, head */
int alog_open(struct alog *l, int dirfd, const char *name, int headfd,
    const struct audit_settings *set, struct error *e);
int alog_start(struct alog *l, struct error *e);
int alog_write(struct alog *l, const char *line, size_t len, const char *hash,
    struct error *e);
/* The lines of n records in one write(), head the last one's; a write
 * that fails or is cut short leaves the file as it was (-1). */
int alog_write_lines(struct alog *l, const char *buf, size_t len, uint64_t n,
    const struct audit_head *head, struct error *e);
int alog_append_own(struct alog *l, json_t *rec, struct error *e);
int alog_sync(struct alog *l, int force, struct error *e);
enum alog_health alog_health(struct alog *l, struct error *e);
int alog_at_path(struct alog *l);
void alog_head_write(struct alog *l);
void alog_head_sync(struct alog *l);
void alog_close(struct alog *l);
int alog_recover(struct alog *l, struct error *e);
int alog_last_line(struct alog *l, struct audit_line *out, struct error *e);

/* auditd_file.c: new files, rotation, reopen */
int alog_new_file(
    struct alog *l, const char *prev_name, const char *reason, struct error *e);
int alog_rotate(struct alog *l, const char *reason, struct error *e);
int alog_reopen(struct alog *l, const char *why, struct error *e);
int alog_drop_oldest(struct alog *l);
int alog_shift(struct alog *l, struct error *e);

/* auditd_fail.c: disk_full_action, disk_error_action, suspend, resume */
int alog_failed(struct alog *l, enum alog_fail kind, const char *why);
int alog_try_resume(struct alog *l, const char *how);
void alog_suspend(struct alog *l, const char *why);

#endif
