/*
 * auditd_log.c: JSON Lines records, hash-chained. Each line is the
 * compact, key-sorted JSON of the record (which names the previous
 * record's hash in audit.prev_hash), with ,"event.hash":"H"} appended
 * in place of its closing brace, where H = sha256 of that JSON text.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "auditd.h"

#define TAIL_SCAN 65536
#define HASH_SUFFIX_LEN (15 + HASH_HEX_LEN + 2)  /* ,"event.hash":"…"} */

void
json_set_dotted(json_t *obj, const char *path, json_t *value)
{
	const char *dot;
	json_t *child;
	char *head;

	while ((dot = strchr(path, '.')) != NULL) {
		head = xstrndup(path, (size_t)(dot - path));
		child = json_object_get(obj, head);
		if (!json_is_object(child)) {
			child = json_object();
			json_object_set_new(obj, head, child);
		}
		free(head);
		obj = child;
		path = dot + 1;
	}
	json_object_set_new(obj, path, value);
}

char *
audit_line_encode(json_t *rec, char hash_out[HASH_HEX_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char *s, *line;
	size_t len;

	s = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	if (s == NULL)
		fatalx("json_dumps");
	len = strlen(s);
	SHA256((const unsigned char *)s, len, md);
	hex_encode(md, sizeof(md), hash_out);
	s[len - 1] = '\0';  /* drop the closing brace */
	xasprintf(&line, "%s,\"event.hash\":\"%s\"}\n", s, hash_out);
	free(s);
	return line;
}

/* Recover the chain head (hash and sequence) from the file's last line. */
static void
audit_log_recover(struct audit_log *l)
{
	char buf[TAIL_SCAN + 1], *last, *end;
	json_t *j, *seq;
	struct stat st;
	off_t off;
	ssize_t n;

	memset(l->prev_hash, '0', HASH_HEX_LEN);
	l->prev_hash[HASH_HEX_LEN] = '\0';
	l->seq = 0;
	if (fstat(l->fd, &st) == -1 || st.st_size == 0)
		return;
	off = st.st_size > TAIL_SCAN ? st.st_size - TAIL_SCAN : 0;
	if ((n = pread(l->fd, buf, TAIL_SCAN, off)) <= 0)
		return;
	buf[n] = '\0';
	if (buf[n - 1] != '\n') {
		/* End the torn line so the next record starts a line of its own. */
		log_warnx("audit log ends in a partial line; it is closed off "
		    "and the chain restarts after it");
		if (write(l->fd, "\n", 1) != 1)
			log_warn("closing the partial line");
		return;
	}
	buf[n - 1] = '\0';
	last = (end = strrchr(buf, '\n')) ? end + 1 : buf;
	if ((j = json_loads(last, 0, NULL)) == NULL) {
		log_warnx("audit log's last line is not JSON");
		return;
	}
	seq = json_object_get(json_object_get(j, "event"), "sequence");
	if (json_is_integer(seq))
		l->seq = (uint64_t)json_integer_value(seq);
	if (json_is_string(json_object_get(j, "event.hash")) &&
	    strlen(json_string_value(json_object_get(j, "event.hash"))) ==
	    HASH_HEX_LEN)
		memcpy(l->prev_hash,
		    json_string_value(json_object_get(j, "event.hash")),
		    HASH_HEX_LEN);
	json_decref(j);
}

int
audit_log_open(struct audit_log *l, int dirfd, const char *name,
    struct error *e)
{
	l->fd = openat(dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
	    O_NOFOLLOW, 0640);
	if (l->fd == -1)
		return error_set(e, ERR_AUDIT_UNAVAILABLE, "open %s: %s", name,
		    strerror(errno));
	/* O_APPEND + pread: reopen read-write is not needed for pread. */
	close(l->fd);
	l->fd = openat(dirfd, name, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (l->fd == -1)
		return error_set(e, ERR_AUDIT_UNAVAILABLE, "open %s: %s", name,
		    strerror(errno));
	if (gethostname(l->host, sizeof(l->host) - 1) == -1)
		strcpy(l->host, "localhost");
	audit_log_recover(l);
	l->broken = 0;
	return 0;
}

/* Fields every record carries, in ECS names. */
static void
audit_common(struct audit_log *l, json_t *rec, const char *source)
{
	char ts[40];

	now_rfc3339(ts, sizeof(ts));
	json_object_set_new(rec, "@timestamp", json_string(ts));
	json_set_dotted(rec, "ecs.version", json_string("8.11.0"));
	json_set_dotted(rec, "event.kind", json_string("event"));
	json_set_dotted(rec, "event.sequence", json_integer((json_int_t)++l->seq));
	json_set_dotted(rec, "event.provider", json_string(source));
	json_set_dotted(rec, "service.name", json_string("skillbroker"));
	json_set_dotted(rec, "host.name", json_string(l->host));
	json_set_dotted(rec, "audit.prev_hash", json_string(l->prev_hash));
}

int
audit_log_append(struct audit_log *l, json_t *rec, const char *source,
    struct error *e)
{
	char hash[HASH_HEX_LEN + 1], *line;
	size_t len;
	ssize_t n;

	if (l->broken || l->fd == -1)
		return error_set(e, ERR_AUDIT_UNAVAILABLE,
		    "the audit log is not writable");
	audit_common(l, rec, source);
	line = audit_line_encode(rec, hash);
	len = strlen(line);
	if (len > AUDIT_LINE_MAX) {
		free(line);
		l->seq--;
		return error_set(e, ERR_AUDIT_UNAVAILABLE,
		    "record of %zu bytes exceeds %d", len, AUDIT_LINE_MAX);
	}
	n = write(l->fd, line, len);
	free(line);
	if (n != (ssize_t)len) {
		l->broken = 1;
		l->seq--;
		return error_set(e, ERR_AUDIT_UNAVAILABLE, "audit write: %s",
		    n == -1 ? strerror(errno) : "short write");
	}
	memcpy(l->prev_hash, hash, sizeof(hash));
	return 0;
}

int
audit_log_sync(struct audit_log *l, struct error *e)
{
	if (l->fd == -1 || fdatasync(l->fd) == -1) {
		l->broken = 1;
		return error_set(e, ERR_AUDIT_UNAVAILABLE, "fdatasync: %s",
		    strerror(errno));
	}
	return 0;
}
