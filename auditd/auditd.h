/* auditd.h: the only writer of the audit log. */
#ifndef SB_AUDITD_H
#define SB_AUDITD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"

#define AUDIT_LINE_MAX (32 * 1024)
#define HASH_HEX_LEN 64

struct audit_log {
	int fd;
	char prev_hash[HASH_HEX_LEN + 1];
	uint64_t seq;
	int broken;           /* a write failed: refuse until reopened */
	char host[256];
};

/* auditd_log.c */
int audit_log_open(struct audit_log *l, int dirfd, const char *name,
    struct error *e);
/* Chain, encode and write one record (one write on O_APPEND). */
int audit_log_append(struct audit_log *l, json_t *rec, const char *source,
    struct error *e);
int audit_log_sync(struct audit_log *l, struct error *e);
/* Encode line bytes for rec given prev; used by verify and tests. */
char *audit_line_encode(json_t *rec, char hash_out[HASH_HEX_LEN + 1]);
/* Insert value at a dotted ECS path ("event.action") into obj. */
void json_set_dotted(json_t *obj, const char *path, json_t *value);

#endif
