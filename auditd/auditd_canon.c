/*
 * auditd_canon.c: the line of an ordinary record written straight from
 * its msgpack event, byte for byte what the general path
 * (auditd_record.c: a jansson object dumped with JSON_COMPACT |
 * JSON_SORT_KEYS, the event object last: auditd_chain.c) writes,
 * without building that object. Keys are [a-z0-9_] segments joined by
 * '.', and '.' sorts before every one of those characters, so the dotted
 * names sorted whole (those under "event." after all others) are the
 * nested objects' keys sorted level by level. Anything out of the ordinary (a
 * field that is not allowed, a name that is both a value and a prefix,
 * a sender's name that meets one auditd stamps) is left to the general
 * path, which also says what is wrong.
 */
#include <inttypes.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/msg.h"
#include "auditd.h"

#define CANON_STAMPS 9
#define CANON_LEAVES (AUDIT_EVENT_FIELDS_MAX + CANON_STAMPS)
#define CANON_DEPTH (AUDIT_KEY_MAX / 2 + 2)
#define SUFFIX_HEAD ",\"hash\":\""

/* One name of the record and its value: the sender's, or a stamp. */
struct canon_leaf {
	int last; /* under "event.": after every other name */
	uint64_t
	    head; /* the first 8 bytes, big-endian, 0-padded: for sorting */
	const char *path;
	size_t plen;
	const msgpack_object *v; /* NULL: a stamp, sval or ival */
	const char *sval;        /* a stamp's string; NULL: ival */
	int64_t ival;
};

/* The text being built. */
struct canon_buf {
	char *p;
	size_t len, cap;
};

/* Room for n more bytes. */
static void
canon_room(struct canon_buf *b, size_t n)
{
	if (b->cap - b->len >= n)
		return;
	while (b->cap - b->len < n)
		b->cap = b->cap ? 2 * b->cap : 2048;
	b->p = xreallocarray(b->p, b->cap, 1);
}

/* n bytes as they are. */
static void
canon_put(struct canon_buf *b, const char *s, size_t n)
{
	canon_room(b, n);
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* One character of the syntax. */
static void
canon_ch(struct canon_buf *b, char c)
{
	canon_room(b, 1);
	b->p[b->len++] = c;
}

/*
 * One byte of text as JSON writes it (jansson's escapes) at w, which
 * has room for 6; the end of what was written.
 */
static char *
canon_esc(char *w, unsigned char c)
{
	static const char hex[] = "0123456789ABCDEF";

	if (c >= 0x20 && c != '"' && c != '\\') {
		*w++ = (char)c;
		return w;
	}
	*w++ = '\\';
	switch (c) {
	case '"':
	case '\\':
		*w++ = (char)c;
		return w;
	case '\b':
		*w++ = 'b';
		return w;
	case '\f':
		*w++ = 'f';
		return w;
	case '\n':
		*w++ = 'n';
		return w;
	case '\r':
		*w++ = 'r';
		return w;
	case '\t':
		*w++ = 't';
		return w;
	}
	*w++ = 'u';
	*w++ = '0';
	*w++ = '0';
	*w++ = hex[c >> 4];
	*w++ = hex[c & 0xf];
	return w;
}

/* A JSON string of text that needs no sanitizing (auditd's own). */
static void
canon_str(struct canon_buf *b, const char *s, size_t len)
{
	size_t i;
	char *w;

	canon_room(b, 2 + 6 * len);
	w = b->p + b->len;
	*w++ = '"';
	for (i = 0; i < len; i++)
		w = canon_esc(w, (unsigned char)s[i]);
	*w++ = '"';
	b->len = (size_t)(w - b->p);
}

/* A name of the record: [a-z0-9_@] needs no escaping. */
static void
canon_name(struct canon_buf *b, const char *s, size_t len)
{
	canon_room(b, len + 3);
	b->p[b->len++] = '"';
	memcpy(b->p + b->len, s, len);
	b->len += len;
	b->p[b->len++] = '"';
	b->p[b->len++] = ':';
}

/* A sender's text as audit_text makes it: \xNN for a bad byte, cut at cap. */
static void
canon_text(struct canon_buf *b, const char *s, size_t len, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, n;
	char *w;

	canon_room(
	    b, 2 + 6 * (len < cap ? len : cap) + sizeof(AUDIT_TRUNC_MARK));
	w = b->p + b->len;
	*w++ = '"';
	while (i < len) {
		if (p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
			n = 1; /* the common case, without a call */
		else
			n = audit_utf8_seq(p + i, len - i);
		if (o + (n ? n : 4) > cap) {
			memcpy(
			    w, AUDIT_TRUNC_MARK, sizeof(AUDIT_TRUNC_MARK) - 1);
			w += sizeof(AUDIT_TRUNC_MARK) - 1;
			break;
		}
		if (n == 0) { /* the four characters \xNN, the \ escaped */
			*w++ = '\\';
			*w++ = '\\';
			*w++ = 'x';
			*w++ = hex[p[i] >> 4];
			*w++ = hex[p[i] & 0xf];
			i++;
			o += 4;
			continue;
		}
		if (n == 1)
			w = canon_esc(w, p[i]);
		else {
			memcpy(w, p + i, n);
			w += n;
		}
		i += n;
		o += n;
	}
	*w++ = '"';
	b->len = (size_t)(w - b->p);
}

/* An integer as jansson writes it ("%lld"), without printf. */
static void
canon_int(struct canon_buf *b, int64_t v)
{
	char num[24], *e = num + sizeof(num), *d = e;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do
		*--d = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		*--d = '-';
	canon_put(b, d, (size_t)(e - d));
}

/* A scalar; 0 for a kind the general path must judge. */
static int
canon_scalar(struct canon_buf *b, const msgpack_object *v, size_t cap)
{
	switch (v->type) {
	case MSGPACK_OBJECT_NIL:
		canon_put(b, "null", 4);
		return 1;
	case MSGPACK_OBJECT_BOOLEAN:
		if (v->via.boolean)
			canon_put(b, "true", 4);
		else
			canon_put(b, "false", 5);
		return 1;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		canon_int(b, v->via.u64 > (uint64_t)INT64_MAX
		                 ? INT64_MAX
		                 : (int64_t)v->via.u64);
		return 1;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		canon_int(b, v->via.i64);
		return 1;
	case MSGPACK_OBJECT_STR:
		canon_text(b, v->via.str.ptr, v->via.str.size, cap);
		return 1;
	case MSGPACK_OBJECT_BIN:
		canon_text(b, v->via.bin.ptr, v->via.bin.size, cap);
		return 1;
	default:
		return 0;
	}
}

/* A scalar or an array of scalars, cut at AUDIT_ARRAY_MAX items. */
static int
canon_value(struct canon_buf *b, const msgpack_object *v, size_t cap)
{
	uint32_t i;

	if (v->type != MSGPACK_OBJECT_ARRAY)
		return canon_scalar(b, v, cap);
	canon_ch(b, '[');
	for (i = 0; i < v->via.array.size; i++) {
		if (i > 0)
			canon_ch(b, ',');
		if (i == AUDIT_ARRAY_MAX) {
			canon_str(
			    b, AUDIT_TRUNC_MARK, sizeof(AUDIT_TRUNC_MARK) - 1);
			break;
		}
		if (v->via.array.ptr[i].type == MSGPACK_OBJECT_ARRAY ||
		    !canon_scalar(b, &v->via.array.ptr[i], cap))
			return 0;
	}
	canon_ch(b, ']');
	return 1;
}

/* 1 for a name under "event.", which the line puts last. */
static int
canon_last(const char *path, size_t plen)
{
	return plen > 6 && memcmp(path, "event.", 6) == 0;
}

/* A name's first 8 bytes as a number that sorts as they do. */
static uint64_t
canon_head(const char *path, size_t plen)
{
	uint64_t h = 0;
	size_t i;

	for (i = 0; i < 8; i++)
		h = h << 8 | (i < plen ? (uint8_t)path[i] : 0);
	return h;
}

/*
 * Dotted names in byte order (shorter first when one begins the other;
 * no name holds a NUL, so the padded heads order as the names do).
 */
static int
canon_cmp(const struct canon_leaf *x, const struct canon_leaf *y)
{
	size_t n;
	int r;

	if (x->last != y->last)
		return x->last - y->last;
	if (x->head != y->head)
		return x->head < y->head ? -1 : 1;
	n = x->plen < y->plen ? x->plen : y->plen;
	if (n > 8 && (r = memcmp(x->path + 8, y->path + 8, n - 8)) != 0)
		return r;
	return x->plen < y->plen ? -1 : x->plen > y->plen;
}

/* A few dozen names, mostly in order already: insertion. */
static void
canon_sort(struct canon_leaf *l, size_t n)
{
	struct canon_leaf t;
	size_t i, j;

	for (i = 1; i < n; i++) {
		t = l[i];
		for (j = i; j > 0 && canon_cmp(&l[j - 1], &t) > 0; j--)
			l[j] = l[j - 1];
		l[j] = t;
	}
}

/* 1 if name a ends where b goes on with '.', or a and b are one name. */
static int
canon_meets(const char *a, size_t alen, const char *b, size_t blen)
{
	if (alen > blen)
		return canon_meets(b, blen, a, alen);
	return memcmp(a, b, alen) == 0 && (alen == blen || b[alen] == '.');
}

/* The fields auditd stamps, as audit_record_stamp sets them. */
static size_t
canon_stamps(struct canon_leaf *l, const struct audit_stamp *st, const char *ts,
    const char **names)
{
	static const char *const paths[CANON_STAMPS] = {"@timestamp",
	    "ecs.version", "event.kind", "event.dataset", "event.sequence",
	    "event.provider", "service.name", "host.name", "audit.prev_hash"};
	const char *vals[CANON_STAMPS] = {ts, AUDIT_ECS_VERSION, "event",
	    AUDIT_DATASET, NULL, st->provider, "skillbroker", st->host,
	    st->prev_hash};
	size_t i;

	for (i = 0; i < CANON_STAMPS; i++) {
		names[i] = paths[i];
		l[i].path = paths[i];
		l[i].plen = strlen(paths[i]);
		l[i].head = canon_head(l[i].path, l[i].plen);
		l[i].last = canon_last(l[i].path, l[i].plen);
		l[i].v = NULL;
		l[i].sval = vals[i];
		l[i].ival = (int64_t)st->seq;
	}
	return CANON_STAMPS;
}

/*
 * A sender's name that the fast path takes: dotted [a-z0-9_] segments,
 * not auditd's "audit" nor "event.hash", and not one that meets a name
 * auditd stamps (those the general path refuses or replaces).
 */
static int
canon_name_ok(const char *k, size_t len, const char *const *stamped)
{
	const char *dot = memchr(k, '.', len);
	size_t first = dot != NULL ? (size_t)(dot - k) : len, i, s;

	if (len == 0 || len > AUDIT_KEY_MAX || first == 0 || k[len - 1] == '.')
		return 0;
	for (i = 0; i < len; i++)
		if (!((k[i] >= 'a' && k[i] <= 'z') ||
		        (k[i] >= '0' && k[i] <= '9') || k[i] == '_' ||
		        (k[i] == '.' && k[i + 1] != '.')))
			return 0;
	if ((first == 5 && memcmp(k, "audit", 5) == 0) ||
	    (len == 10 && memcmp(k, "event.hash", 10) == 0))
		return 0;
	/* only a name whose first segment is a stamp's can meet it */
	for (s = 0; s < CANON_STAMPS; s++)
		if (stamped[s][0] == k[0] &&
		    strncmp(stamped[s], k, first) == 0 &&
		    (stamped[s][first] == '.' || stamped[s][first] == '\0') &&
		    canon_meets(k, len, stamped[s], strlen(stamped[s])))
			return 0;
	return 1;
}

/*
 * The sender's fields after the stamps; 0 when one is not allowed or
 * meets a stamped name (the general path replaces or refuses it).
 */
static int
canon_fields(const msgpack_object *ev, struct canon_leaf *l, size_t *n,
    const char *const *stamped)
{
	const msgpack_object *k;
	uint32_t i;

	if (ev->type != MSGPACK_OBJECT_MAP ||
	    ev->via.map.size > AUDIT_EVENT_FIELDS_MAX)
		return 0;
	for (i = 0; i < ev->via.map.size; i++) {
		k = &ev->via.map.ptr[i].key;
		if (k->type != MSGPACK_OBJECT_STR ||
		    !canon_name_ok(k->via.str.ptr, k->via.str.size, stamped))
			return 0;
		l[*n].path = k->via.str.ptr;
		l[*n].plen = k->via.str.size;
		l[*n].head = canon_head(l[*n].path, l[*n].plen);
		l[*n].last = canon_last(l[*n].path, l[*n].plen);
		l[*n].v = &ev->via.map.ptr[i].val;
		(*n)++;
	}
	return 1;
}

/* SHA-256 of T, with the digest fetched once, not at every record. */
static void
canon_sha256(const char *p, size_t len, unsigned char md[SHA256_DIGEST_LENGTH])
{
	static EVP_MD *sha;
	static EVP_MD_CTX *ctx;
	unsigned int n = 0;

	if (sha == NULL && (sha = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL)
		fatalx("EVP_MD_fetch SHA256");
	if (ctx == NULL && (ctx = EVP_MD_CTX_new()) == NULL)
		fatalx("EVP_MD_CTX_new");
	if (!EVP_DigestInit_ex(ctx, sha, NULL) ||
	    !EVP_DigestUpdate(ctx, p, len) ||
	    !EVP_DigestFinal_ex(ctx, md, &n) || n != SHA256_DIGEST_LENGTH)
		fatalx("sha256");
}

/* One leaf's value. */
static int
canon_leaf_value(struct canon_buf *b, const struct canon_leaf *l, size_t cap)
{
	if (l->v != NULL)
		return canon_value(b, l->v, cap);
	if (l->sval != NULL)
		canon_str(b, l->sval, strlen(l->sval));
	else
		canon_int(b, l->ival);
	return 1;
}

/* Where segment i of path starts and how long it is; 0 past the end. */
static int
canon_seg(const char *path, size_t plen, size_t *off, size_t *len)
{
	const char *dot;

	if (*off > plen)
		return 0;
	dot = memchr(path + *off, '.', plen - *off);
	*len = dot != NULL ? (size_t)(dot - (path + *off)) : plen - *off;
	return 1;
}

/*
 * The sorted leaves as nested objects. open[] holds the path of the
 * objects open now, so a leaf closes those it is not under and opens
 * the rest of its own.
 */
static int
canon_emit(
    struct canon_buf *b, const struct canon_leaf *l, size_t n, size_t cap)
{
	const char *open[CANON_DEPTH];
	size_t olen[CANON_DEPTH], i, d = 0, off, len, depth;
	int has[CANON_DEPTH + 1];

	memset(has, 0, sizeof(has));
	canon_ch(b, '{');
	for (i = 0; i < n; i++) {
		/* the leaf's segments: how many of the open objects hold it */
		for (off = 0, depth = 0;
		     canon_seg(l[i].path, l[i].plen, &off, &len); depth++) {
			if (off + len == l[i].plen)
				break; /* the last segment names the value */
			if (depth >= CANON_DEPTH - 1)
				return 0;
			if (depth < d && olen[depth] == len &&
			    memcmp(open[depth], l[i].path + off, len) == 0) {
				off += len + 1;
				continue;
			}
			while (d > depth) {
				canon_ch(b, '}');
				d--;
			}
			if (has[d])
				canon_ch(b, ',');
			has[d] = 1;
			canon_name(b, l[i].path + off, len);
			canon_ch(b, '{');
			open[d] = l[i].path + off;
			olen[d] = len;
			has[++d] = 0;
			off += len + 1;
		}
		while (d > depth) {
			canon_ch(b, '}');
			d--;
		}
		if (has[d])
			canon_ch(b, ',');
		has[d] = 1;
		canon_name(b, l[i].path + off, len);
		if (!canon_leaf_value(b, &l[i], cap))
			return 0;
	}
	while (d > 0) {
		canon_ch(b, '}');
		d--;
	}
	canon_ch(b, '}');
	return 1;
}

/* The fast path of audit_event_line for one cut (auditd.h says more). */
int
canon_event_line(const msgpack_object *ev, const struct audit_stamp *st,
    size_t cap, char hash[HASH_HEX_LEN + 1], char **line, size_t *len)
{
	struct canon_leaf l[CANON_LEAVES];
	const char *stamped[CANON_STAMPS];
	unsigned char md[SHA256_DIGEST_LENGTH];
	struct canon_buf b = {NULL, 0, 0};
	char ts[40];
	size_t n, i;
	int action = 0;

	if (st->ts != NULL)
		snprintf(ts, sizeof(ts), "%s", st->ts);
	else
		now_rfc3339(ts, sizeof(ts));
	n = canon_stamps(l, st, ts, stamped);
	if (!canon_fields(ev, l, &n, stamped))
		return 0;
	canon_sort(l, n);
	for (i = 0; i < n; i++) {
		if (i > 0 && canon_meets(l[i - 1].path, l[i - 1].plen,
		                 l[i].path, l[i].plen))
			return 0; /* a value and a prefix, or a name twice */
		if (l[i].plen == 12 &&
		    memcmp(l[i].path, "event.action", 12) == 0)
			action = l[i].v != NULL &&
			         l[i].v->type == MSGPACK_OBJECT_STR;
	}
	if (!action || !canon_emit(&b, l, n, cap)) {
		free(b.p);
		return 0;
	}
	/* T hashed; the line is T with its "}}" (event's and the record's)
	 * turned into the hash field, event's last */
	canon_sha256(b.p, b.len, md);
	hex_encode(md, SHA256_DIGEST_LENGTH, hash);
	b.len -= 2;
	canon_put(&b, SUFFIX_HEAD, sizeof(SUFFIX_HEAD) - 1);
	canon_put(&b, hash, HASH_HEX_LEN);
	canon_put(&b, "\"}}\n", 4);
	canon_ch(&b, '\0');
	*line = b.p;
	*len = b.len - 1;
	return 1;
}

/*
 * The line for an event, strings cut shorter until it fits: written
 * straight when it can be, else through jansson (auditd_record.c).
 */
char *
audit_event_line(const msgpack_object *ev, const struct audit_stamp *st,
    char hash[HASH_HEX_LEN + 1], size_t *len, struct error *e)
{
	static const size_t caps[] = {AUDIT_FIELD_MAX, 1024, 256, 64};
	size_t i;
	char *line;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (canon_event_line(ev, st, caps[i], hash, &line, len) == 0)
			return audit_event_line_json(ev, st, hash, len, e);
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
