/*
 * auditd_record.c: a record from an AUDIT event. Keys are dotted ECS
 * names, written as nested objects; values are scalars or arrays of
 * scalars. Text is UTF-8: a byte that is not part of a well-formed
 * sequence is written as the four characters \xNN, never raw. A string
 * longer than the cap is cut on a character boundary and marked, and the
 * cap shrinks until the whole line fits in AUDIT_LINE_MAX.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "auditd.h"

/* Keys only auditd sets; a sender naming one is misbehaving. */
static const char *const stamped[] = {"ecs.version", "event.kind",
    "event.dataset", "event.sequence", "event.provider", "service.name",
    "host.name", "event.hash", NULL};

/*
 * Put value at a dotted ECS name ("event.action") as nested objects.
 * strict: -1 (value dropped) when the name collides with a value already
 * there or with a prefix of one; otherwise the last one wins.
 */
static int
dotted_put(json_t *obj, const char *path, json_t *value, int strict)
{
	const char *dot;
	json_t *child;
	char *head;

	while ((dot = strchr(path, '.')) != NULL) {
		head = xstrndup(path, (size_t)(dot - path));
		child = json_object_get(obj, head);
		if (child == NULL || (!strict && !json_is_object(child))) {
			child = json_object();
			json_object_set_new(obj, head, child);
		}
		free(head);
		if (!json_is_object(child))
			goto conflict;
		obj = child;
		path = dot + 1;
	}
	if (strict && json_object_get(obj, path) != NULL)
		goto conflict;
	json_object_set_new(obj, path, value);
	return 0;
conflict:
	json_decref(value);
	return -1;
}

void
json_set_dotted(json_t *obj, const char *path, json_t *value)
{
	(void)dotted_put(obj, path, value, 0);
}

/* A sender's field: a name given twice, or as value and prefix, is refused. */
static int
json_add_dotted(json_t *obj, const char *path, json_t *value)
{
	return dotted_put(obj, path, value, 1);
}

/* Length of the well-formed UTF-8 sequence at p (not NUL), or 0. */
size_t
audit_utf8_seq(const unsigned char *p, size_t left)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (p[0] >= 0x01 && p[0] <= 0x7f)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		lo = p[0] == 0xe0 ? 0xa0 : 0x80;
		hi = p[0] == 0xed ? 0x9f : 0xbf;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		lo = p[0] == 0xf0 ? 0x90 : 0x80;
		hi = p[0] == 0xf4 ? 0x8f : 0xbf;
	} else
		return 0;
	if (left < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/* Text as valid UTF-8 (bad bytes as \xNN), cut at cap bytes with a mark. */
json_t *
audit_text(const char *s, size_t len, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, n, mark = sizeof(AUDIT_TRUNC_MARK) - 1;
	char *out = xmalloc(cap + mark + 1);
	json_t *j;

	while (i < len) {
		n = audit_utf8_seq(p + i, len - i);
		if (o + (n ? n : 4) > cap) {
			memcpy(out + o, AUDIT_TRUNC_MARK, mark);
			o += mark;
			break;
		}
		if (n > 0) {
			memcpy(out + o, p + i, n);
			i += n;
			o += n;
		} else {
			snprintf(out + o, 5, "\\x%02x", p[i++]);
			o += 4;
		}
	}
	if ((j = json_stringn(out, o)) == NULL)
		fatalx("json_stringn");
	free(out);
	return j;
}

/* One scalar; NULL for a kind a record may not hold. */
static json_t *
audit_scalar(const msgpack_object *v, size_t cap)
{
	switch (v->type) {
	case MSGPACK_OBJECT_NIL:
		return json_null();
	case MSGPACK_OBJECT_BOOLEAN:
		return json_boolean(v->via.boolean);
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		return json_integer(v->via.u64 > (uint64_t)INT64_MAX
		                        ? INT64_MAX
		                        : (json_int_t)v->via.u64);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return json_integer(v->via.i64);
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return isfinite(v->via.f64) ? json_real(v->via.f64)
		                            : json_null();
	case MSGPACK_OBJECT_STR:
		return audit_text(v->via.str.ptr, v->via.str.size, cap);
	case MSGPACK_OBJECT_BIN:
		return audit_text(v->via.bin.ptr, v->via.bin.size, cap);
	default:
		return NULL;
	}
}

/* A scalar, or an array of scalars cut at AUDIT_ARRAY_MAX items. */
static json_t *
audit_value(const msgpack_object *v, size_t cap)
{
	json_t *a, *item;
	uint32_t i;

	if (v->type != MSGPACK_OBJECT_ARRAY)
		return audit_scalar(v, cap);
	a = json_array();
	for (i = 0; i < v->via.array.size; i++) {
		if (i == AUDIT_ARRAY_MAX) {
			json_array_append_new(a, json_string(AUDIT_TRUNC_MARK));
			break;
		}
		if (v->via.array.ptr[i].type == MSGPACK_OBJECT_ARRAY ||
		    (item = audit_scalar(&v->via.array.ptr[i], cap)) == NULL) {
			json_decref(a);
			return NULL;
		}
		json_array_append_new(a, item);
	}
	return a;
}

/* Dotted segments of [a-z0-9_], none reserved for auditd. */
int
audit_key_ok(const char *k)
{
	const char *c;
	int i;

	if (*k == '\0' || *k == '.' || strncmp(k, "audit.", 6) == 0)
		return 0;
	for (c = k; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		        *c == '_' ||
		        (*c == '.' && c[1] != '.' && c[1] != '\0')))
			return 0;
	for (i = 0; stamped[i] != NULL; i++)
		if (strcmp(k, stamped[i]) == 0)
			return 0;
	return 1;
}

/* The JSON record of an AUDIT event; NULL if it breaks the rules. */
json_t *
audit_record_from_event(const msgpack_object *ev, size_t cap, struct error *e)
{
	json_t *rec = json_object(), *val;
	uint32_t i;
	char *key;

	for (i = 0; i < ev->via.map.size; i++) {
		const msgpack_object *k = &ev->via.map.ptr[i].key;
		if (k->type != MSGPACK_OBJECT_STR) {
			json_decref(rec);
			error_set(e, ERR_BAD_REQUEST, "a key is not a string");
			return NULL;
		}
		key = xstrndup(k->via.str.ptr, k->via.str.size);
		if (!audit_key_ok(key) ||
		    (val = audit_value(&ev->via.map.ptr[i].val, cap)) == NULL ||
		    json_add_dotted(rec, key, val) == -1) {
			error_set(e, ERR_BAD_REQUEST,
			    "field \"%s\" is not "
			    "allowed in a record",
			    key);
			free(key);
			json_decref(rec);
			return NULL;
		}
		free(key);
	}
	if (!json_is_string(
	        json_object_get(json_object_get(rec, "event"), "action"))) {
		json_decref(rec);
		error_set(e, ERR_BAD_REQUEST, "a record needs event.action");
		return NULL;
	}
	return rec;
}

/* The fields auditd adds to every record. */
void
audit_record_stamp(json_t *rec, const struct audit_stamp *st)
{
	char ts[40];

	if (st->ts != NULL)
		snprintf(ts, sizeof(ts), "%s", st->ts);
	else
		now_rfc3339(ts, sizeof(ts));
	json_object_set_new(rec, "@timestamp", json_string(ts));
	json_set_dotted(rec, "ecs.version", json_string(AUDIT_ECS_VERSION));
	json_set_dotted(rec, "event.kind", json_string("event"));
	json_set_dotted(rec, "event.dataset", json_string(AUDIT_DATASET));
	json_set_dotted(
	    rec, "event.sequence", json_integer((json_int_t)st->seq));
	json_set_dotted(rec, "event.provider", json_string(st->provider));
	json_set_dotted(rec, "service.name", json_string("skillbroker"));
	json_set_dotted(rec, "host.name", json_string(st->host));
	json_set_dotted(rec, "audit.prev_hash", json_string(st->prev_hash));
}

/*
 * The line for an event through a jansson object, strings cut shorter
 * until it fits: any record's line, and what the direct one must equal.
 */
char *
audit_event_line_json(const msgpack_object *ev, const struct audit_stamp *st,
    char hash[HASH_HEX_LEN + 1], size_t *len, struct error *e)
{
	static const size_t caps[] = {AUDIT_FIELD_MAX, 1024, 256, 64};
	json_t *rec;
	size_t i;
	char *line;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if ((rec = audit_record_from_event(ev, caps[i], e)) == NULL)
			return NULL;
		audit_record_stamp(rec, st);
		line = audit_line_encode(rec, hash, len);
		json_decref(rec);
		if (*len <= AUDIT_LINE_MAX)
			return line;
		free(line);
	}
	error_set(e, ERR_AUDIT_UNAVAILABLE,
	    "a record of %u fields does not "
	    "fit in %d bytes",
	    ev->via.map.size, AUDIT_LINE_MAX);
	return NULL;
}

/*
 * A record of auditd's own, before its stamp. Its ECS category: a file's
 * start or the log's return is about the file, a start or stop about
 * auditd's process.
 */
json_t *
audit_own_record(const char *action, const char *type, const char *outcome,
    const char *reason)
{
	json_t *rec = json_object(), *cat = json_array();
	int proc = strcmp(type, "start") == 0 || strcmp(type, "end") == 0;

	json_array_append_new(cat, json_string(proc ? "process" : "file"));
	json_set_dotted(rec, "event.category", cat);
	json_set_dotted(rec, "event.action", json_string(action));
	json_set_dotted(rec, "event.type", json_string(type));
	json_set_dotted(rec, "event.outcome", json_string(outcome));
	if (reason != NULL)
		json_set_dotted(rec, "event.reason",
		    audit_text(reason, strlen(reason), AUDIT_FIELD_MAX));
	json_set_dotted(rec, "process.pid", json_integer(getpid()));
	return rec;
}
