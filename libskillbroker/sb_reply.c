/* sb_reply.c: a reply decoded once, and its fields read by path. */
#include "sb_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/mpjson.h"

/* Replies nest deeper than requests (effects.files_written[].path). */
static const struct mp_limits sb_reply_limits = {
    .max_depth = 8,
    .max_str = SB_REPLY_MAX_CAP,
    .max_elems = 65536,
    .max_key = 256,
};

/* The broker's error types map one to one onto enum sb_err. */
enum sb_err
sb_err_from_type(enum err_type t)
{
	if (t == ERR_NONE)
		return SB_OK;
	if ((unsigned)t < ERR__COUNT)
		return (enum sb_err)t;
	return SB_ERR_UNKNOWN;
}

enum err_type
sb_err_to_type(enum sb_err err)
{
	if ((unsigned)err < ERR__COUNT)
		return (enum err_type)err;
	return ERR__COUNT;
}

const char *
sb_err_name(enum sb_err err)
{
	switch (err) {
	case SB_ERR_CONNECT:
		return "connect";
	case SB_ERR_PROTOCOL:
		return "protocol";
	case SB_ERR_USAGE:
		return "usage";
	case SB_ERR_IO:
		return "io";
	default:
		break;
	}
	if ((unsigned)err < ERR__COUNT)
		return err_type_name((enum err_type)err);
	return "unknown";
}

/* A str field of map m as a new string, or NULL. */
static char *
sb_reply_dupstr(const msgpack_object *m, const char *key)
{
	const msgpack_object *o = mp_get(m, key);

	if (o == NULL || o->type != MSGPACK_OBJECT_STR)
		return NULL;
	return xstrndup(o->via.str.ptr, o->via.str.size);
}

/* Read the fields every reply has; a frame without them is malformed. */
static int
sb_reply_head(struct sb_reply *r, struct error *e)
{
	const msgpack_object *root = r->doc.root, *o, *em;
	int ok = 1;

	if ((r->type = sb_reply_dupstr(root, "type")) == NULL)
		return error_set(e, ERR_INTERNAL, "a frame without a type");
	o = mp_get(root, "id");
	if (o != NULL && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		r->cid.is_num = 1;
		r->cid.num = o->via.u64;
		xasprintf(&r->id, "%llu", (unsigned long long)o->via.u64);
	} else if (o != NULL && o->type == MSGPACK_OBJECT_STR) {
		r->cid.str = xstrndup(o->via.str.ptr, o->via.str.size);
		r->id = xstrdup(r->cid.str);
	} else
		r->id = xstrdup("");
	o = mp_get(root, "ok");
	if (o != NULL && o->type == MSGPACK_OBJECT_BOOLEAN)
		ok = o->via.boolean;
	else if (o != NULL)
		return error_set(e, ERR_INTERNAL, "\"ok\" is not a boolean");
	else if (strcmp(r->type, "approval_request") != 0)
		return error_set(e, ERR_INTERNAL, "a reply without \"ok\"");
	if (ok) {
		r->err = SB_OK;
		return 0;
	}
	em = mp_get(root, "error");
	if (em != NULL && em->type == MSGPACK_OBJECT_MAP) {
		r->errtype = sb_reply_dupstr(em, "type");
		r->errmsg = sb_reply_dupstr(em, "message");
	}
	if (r->errtype == NULL)
		r->errtype = xstrdup("unknown");
	if (r->errmsg == NULL)
		r->errmsg = xstrdup("");
	r->err = sb_err_from_type(err_type_from_name(r->errtype));
	if (r->err == SB_OK) /* ok: false, whatever its type says */
		r->err = SB_ERR_UNKNOWN;
	return 0;
}

/* A reply from a frame's body (buf becomes the reply's), or NULL. */
struct sb_reply *
sb_reply_decode(uint8_t *buf, size_t len, struct error *e)
{
	struct sb_reply *r = xcalloc(1, sizeof(*r));

	SLIST_INIT(&r->strs);
	r->buf = buf;
	r->len = len;
	if (mp_decode(&r->doc, buf, len, &sb_reply_limits, e) == -1 ||
	    sb_reply_head(r, e) == -1) {
		sb_reply_free(r);
		return NULL;
	}
	return r;
}

/* An error reply made here: a call that no frame will answer. */
struct sb_reply *
sb_reply_local(const struct client_id *id, enum sb_err err, const char *msg)
{
	struct mp_enc m;
	struct sb_reply *r;
	struct error e;
	uint8_t *buf;
	size_t len;

	enc_init(&m);
	enc_map_open(&m);
	enc_kstr(&m, "type", "error");
	enc_key(&m, "id");
	client_id_enc(&m, id);
	enc_kbool(&m, "ok", 0);
	enc_key(&m, "error");
	enc_map_open(&m);
	enc_kstr(&m, "type", sb_err_name(err));
	enc_kstr(&m, "message", msg);
	enc_map_close(&m);
	enc_map_close(&m);
	len = m.sb.size;
	buf = xmalloc(len);
	memcpy(buf, m.sb.data, len);
	enc_free(&m);
	/* msg is trimmed UTF-8; were it not, the reply still comes */
	if ((r = sb_reply_decode(buf, len, &e)) == NULL && msg[0] != '\0')
		return sb_reply_local(id, err, "");
	if (r == NULL)
		fatal("sb_reply_local: %s", e.msg);
	r->err = err; /* the library's own errors have no wire type */
	r->local = 1;
	return r;
}

void
sb_reply_free(struct sb_reply *r)
{
	struct sb_str *s;

	if (r == NULL)
		return;
	while ((s = SLIST_FIRST(&r->strs)) != NULL) {
		SLIST_REMOVE_HEAD(&r->strs, next);
		free(s);
	}
	mp_doc_free(&r->doc);
	free(r->buf);
	free(r->cid.str);
	free(r->type);
	free(r->id);
	free(r->errtype);
	free(r->errmsg);
	free(r);
}

const msgpack_object *
sb_reply_object(const struct sb_reply *r)
{
	return r->doc.root;
}

const char *
sb_reply_type(const struct sb_reply *r)
{
	return r->type;
}

const char *
sb_reply_id(const struct sb_reply *r)
{
	return r->id;
}

int
sb_reply_ok(const struct sb_reply *r)
{
	return r->err == SB_OK;
}

enum sb_err
sb_reply_error(const struct sb_reply *r)
{
	return r->err;
}

const char *
sb_reply_error_type(const struct sb_reply *r)
{
	return r->err == SB_OK ? NULL : r->errtype;
}

const char *
sb_reply_error_message(const struct sb_reply *r)
{
	return r->err == SB_OK ? NULL : r->errmsg;
}

/* The object at a dotted path ("a.b.0.c"), or NULL. */
static const msgpack_object *
sb_reply_at(const struct sb_reply *r, const char *path)
{
	const msgpack_object *o = r->doc.root;
	const char *p = path, *dot;
	size_t n, i;
	char *end;
	unsigned long idx;

	if (path == NULL)
		return NULL;
	while (o != NULL && *p != '\0') {
		dot = strchr(p, '.');
		n = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (o->type == MSGPACK_OBJECT_MAP) {
			const msgpack_object *next = NULL;
			for (i = 0; i < o->via.map.size; i++) {
				const msgpack_object *k =
				    &o->via.map.ptr[i].key;
				if (k->type == MSGPACK_OBJECT_STR &&
				    k->via.str.size == n &&
				    memcmp(k->via.str.ptr, p, n) == 0) {
					next = &o->via.map.ptr[i].val;
					break;
				}
			}
			o = next;
		} else if (o->type == MSGPACK_OBJECT_ARRAY && n > 0 &&
		           p[0] >= '0' && p[0] <= '9') {
			idx = strtoul(p, &end, 10);
			if (end != p + n || idx >= o->via.array.size)
				return NULL;
			o = &o->via.array.ptr[idx];
		} else
			return NULL;
		p += n;
		if (*p == '.')
			p++;
	}
	return o;
}

const char *
sb_reply_str(const struct sb_reply *r, const char *path)
{
	const msgpack_object *o = sb_reply_at(r, path);
	struct sb_str *s;
	size_t n;

	if (o == NULL || o->type != MSGPACK_OBJECT_STR)
		return NULL;
	SLIST_FOREACH(s, &r->strs, next)
	if (s->o == o)
		return s->s;
	n = o->via.str.size;
	if (memchr(o->via.str.ptr, '\0', n) != NULL)
		return NULL;
	s = xmalloc(sizeof(*s) + n + 1);
	s->o = o;
	memcpy(s->s, o->via.str.ptr, n);
	s->s[n] = '\0';
	SLIST_INSERT_HEAD(&((struct sb_reply *)r)->strs, s, next);
	return s->s;
}

int
sb_reply_uint(const struct sb_reply *r, const char *path, uint64_t *v)
{
	const msgpack_object *o = sb_reply_at(r, path);

	if (o == NULL || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return -1;
	*v = o->via.u64;
	return 0;
}

int
sb_reply_int(const struct sb_reply *r, const char *path, int64_t *v)
{
	const msgpack_object *o = sb_reply_at(r, path);

	if (o != NULL && o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
		*v = o->via.i64;
		return 0;
	}
	if (o == NULL || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    o->via.u64 > INT64_MAX)
		return -1;
	*v = (int64_t)o->via.u64;
	return 0;
}

int
sb_reply_bool(const struct sb_reply *r, const char *path, int *v)
{
	const msgpack_object *o = sb_reply_at(r, path);

	if (o == NULL || o->type != MSGPACK_OBJECT_BOOLEAN)
		return -1;
	*v = o->via.boolean;
	return 0;
}

const void *
sb_reply_bin(const struct sb_reply *r, const char *path, size_t *len)
{
	const msgpack_object *o = sb_reply_at(r, path);

	if (o == NULL || o->type != MSGPACK_OBJECT_BIN)
		return NULL;
	*len = o->via.bin.size;
	/* a pointer for an empty bin too: NULL means absent */
	return o->via.bin.size > 0 ? (const void *)o->via.bin.ptr : "";
}

int
sb_reply_count(const struct sb_reply *r, const char *path)
{
	const msgpack_object *o = sb_reply_at(r, path);

	if (o != NULL && o->type == MSGPACK_OBJECT_ARRAY)
		return (int)o->via.array.size;
	if (o != NULL && o->type == MSGPACK_OBJECT_MAP)
		return (int)o->via.map.size;
	return -1;
}

const void *
sb_reply_msgpack(const struct sb_reply *r, size_t *len)
{
	*len = r->len;
	return r->buf;
}

char *
sb_reply_json(const struct sb_reply *r)
{
	json_t *j = mp_to_json(r->doc.root);
	char *s;

	if (j == NULL)
		return NULL;
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return s;
}
