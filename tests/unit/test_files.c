/*
 * test_files.c: the broker's strict decoding of the files skill's answer
 * (broker/broker_files.c, reply_file). A call is built by hand as the
 * call machine leaves it once the skill has exited: its request, the
 * skill's stdout and exit code. A good answer of each command becomes
 * its reply field by field; the skill's own refusals pass when their
 * type may; anything malformed is an internal error that says the files
 * skill answered badly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testenc.h"
#include "../../broker/broker.h"
#include "../../lib/xmalloc.h"

struct broker *B;

#define SHA "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4"
#define BADLY "the files skill answered badly: "

/* A call of type t on path at off, as it stands once the skill exited. */
static struct call *
mkcall(enum creq_type t, const char *path, uint64_t off)
{
	struct call *c = xcalloc(1, sizeof(*c));

	c->cr.type = t;
	c->cr.id.is_num = 1;
	c->cr.id.num = 7;
	c->cr.session = xstrdup("s1");
	c->cr.path = path != NULL ? xstrdup(path) : NULL;
	c->cr.offset = off;
	c->queued_ms = 3;
	return c;
}

static void
call_free(struct call *c)
{
	client_req_free(&c->cr);
	free(c->run.out.buf);
	free(c);
}

/* The skill wrote these bytes on stdout (all of them kept), and exited. */
static void
stdout_is(struct call *c, const void *p, size_t len, int64_t exit_code)
{
	free(c->run.out.buf);
	c->run.out.buf = xmalloc(len + 1);
	memcpy(c->run.out.buf, p, len);
	c->run.out.len = len;
	c->run.out.cap = len;
	c->run.out.total = len;
	c->x.exit_code = exit_code;
}

/* ... the answer m (freed), exit code 0. */
static void
answer(struct call *c, struct mp_enc *m)
{
	assert_true(enc_complete(m));
	stdout_is(c, m->sb.data, m->sb.size, 0);
	enc_free(m);
}

/* The reply, encoded and decoded again. */
struct reply {
	struct mp_enc m;
	struct mp_doc d;
};

static const msgpack_object *
reply(struct reply *r, const struct call *c)
{
	struct error e;

	enc_init(&r->m);
	reply_file(&r->m, c);
	if (mp_decode(&r->d, (const uint8_t *)r->m.sb.data, r->m.sb.size, NULL,
	        &e) != 0)
		fail_msg("the reply does not decode: %s", e.msg);
	return r->d.root;
}

static void
reply_free(struct reply *r)
{
	mp_doc_free(&r->d);
	enc_free(&r->m);
}

/* A str field of o, which must be there. */
static char *
str_of(const msgpack_object *o, const char *key)
{
	char *s = NULL;
	struct error e;

	if (mp_str(o, key, 1, 4096, &s, &e) != 0)
		fail_msg("%s: %s", key, e.msg);
	return s;
}

static void
assert_str(const msgpack_object *o, const char *key, const char *want)
{
	char *s = str_of(o, key);

	if (strcmp(s, want) != 0)
		fail_msg("%s: \"%s\", want \"%s\"", key, s, want);
	free(s);
}

static void
assert_uint(const msgpack_object *o, const char *key, uint64_t want)
{
	uint64_t v = 0;
	struct error e;

	if (mp_uint(o, key, 1, UINT64_MAX, &v, &e) != 0)
		fail_msg("%s: %s", key, e.msg);
	assert_true(v == want);
}

static void
assert_bool(const msgpack_object *o, const char *key, int want)
{
	int v = -1;
	struct error e;

	if (mp_bool(o, key, 1, &v, &e) != 0)
		fail_msg("%s: %s", key, e.msg);
	assert_int_equal(v, want);
}

/* o has exactly these keys. */
static void
assert_keys(const msgpack_object *o, const char *const *keys)
{
	struct error e;
	size_t n = 0;

	while (keys[n] != NULL)
		n++;
	if (mp_only_keys(o, keys, &e) != 0)
		fail_msg("%s", e.msg);
	assert_int_equal(o->via.map.size, n);
}

/* The successful reply's envelope: type, id 7, ok, session, queued_ms. */
static void
assert_ok_reply(const msgpack_object *o, const char *type)
{
	assert_str(o, "type", type);
	assert_uint(o, "id", 7);
	assert_bool(o, "ok", 1);
	assert_str(o, "session", "s1");
	assert_uint(o, "queued_ms", 3);
}

/* An error reply of type t whose message starts with msg. */
static void
assert_error_reply(const struct call *c, const char *t, const char *msg)
{
	const msgpack_object *o, *err;
	struct reply r;
	char *m;

	o = reply(&r, c);
	assert_str(o, "type", "error");
	assert_uint(o, "id", 7);
	assert_bool(o, "ok", 0);
	if ((err = mp_get(o, "error")) == NULL ||
	    err->type != MSGPACK_OBJECT_MAP)
		fail_msg("no error map");
	assert_str(err, "type", t);
	m = str_of(err, "message");
	if (strncmp(m, msg, strlen(msg)) != 0)
		fail_msg("message \"%s\" does not start with \"%s\"", m, msg);
	free(m);
	reply_free(&r);
}

/* The answer m to a call of type t is malformed: internal, "badly". */
static void
assert_badly(enum creq_type t, const char *path, uint64_t off, struct mp_enc *m,
    int64_t exit_code)
{
	struct call *c = mkcall(t, path, off);

	answer(c, m);
	c->x.exit_code = exit_code;
	assert_error_reply(c, "internal", BADLY);
	call_free(c);
}

/* The start of a successful answer: {ok: true, path?, ...}. */
static void
ok_begin(struct mp_enc *m, const char *path)
{
	enc_init(m);
	enc_map_open(m);
	enc_kbool(m, "ok", 1);
	if (path != NULL)
		enc_kstr(m, "path", path);
}

/* A good answer of put, as the skill writes it. */
static void
put_answer(struct mp_enc *m, const char *path, const char *sha)
{
	ok_begin(m, path);
	enc_kuint(m, "size_bytes", 3);
	enc_kstr(m, "sha256", sha);
	enc_map_close(m);
}

/* A good answer of get: data from off, of a file of size bytes. */
static void
get_answer(
    struct mp_enc *m, uint64_t off, uint64_t size, const char *data, size_t len)
{
	ok_begin(m, "in/a.txt");
	enc_kuint(m, "offset", off);
	enc_kuint(m, "size_bytes", size);
	enc_kstr(m, "sha256", SHA);
	enc_kbin(m, "data", data, len);
	enc_map_close(m);
}

/* A listing entry. */
static void
entry(struct mp_enc *m, const char *path, const char *kind, int64_t size,
    const char *sha)
{
	enc_map_open(m);
	enc_kstr(m, "path", path);
	enc_kstr(m, "kind", kind);
	enc_kint(m, "size_bytes", size);
	if (sha != NULL)
		enc_kstr(m, "sha256", sha);
	enc_map_close(m);
}

/* ------------------------------------------------------ good answers */

static void
test_put_ok(void **state)
{
	static const char *const keys[] = {"type", "id", "ok", "session",
	    "path", "size_bytes", "sha256", "queued_ms", NULL};
	struct call *c = mkcall(CREQ_PUT_FILE, "in/a.txt", 0);
	const msgpack_object *o;
	struct mp_enc m;
	struct reply r;

	(void)state;
	put_answer(&m, "in/a.txt", SHA);
	answer(c, &m);
	o = reply(&r, c);
	assert_ok_reply(o, "put_file");
	assert_str(o, "path", "in/a.txt");
	assert_uint(o, "size_bytes", 3);
	assert_str(o, "sha256", SHA);
	assert_keys(o, keys);
	reply_free(&r);
	call_free(c);
}

static void
test_get_ok(void **state)
{
	static const char *const keys[] = {"type", "id", "ok", "session",
	    "path", "size_bytes", "sha256", "offset", "data", "eof",
	    "queued_ms", NULL};
	struct call *c = mkcall(CREQ_GET_FILE, "in/a.txt", 1);
	const msgpack_object *o, *data;
	struct mp_enc m;
	struct reply r;

	(void)state;
	/* the last two bytes of "hi\n": eof */
	get_answer(&m, 1, 3, "i\n", 2);
	answer(c, &m);
	o = reply(&r, c);
	assert_ok_reply(o, "get_file");
	assert_str(o, "path", "in/a.txt");
	assert_uint(o, "size_bytes", 3);
	assert_str(o, "sha256", SHA);
	assert_uint(o, "offset", 1);
	data = mp_get(o, "data");
	assert_non_null(data);
	assert_int_equal(data->type, MSGPACK_OBJECT_BIN);
	assert_int_equal(data->via.bin.size, 2);
	assert_memory_equal(data->via.bin.ptr, "i\n", 2);
	assert_bool(o, "eof", 1);
	assert_keys(o, keys);
	reply_free(&r);
	/* one byte of three from 1: not the end; none at the end: eof */
	get_answer(&m, 1, 3, "i", 1);
	answer(c, &m);
	o = reply(&r, c);
	assert_bool(o, "eof", 0);
	reply_free(&r);
	c->cr.offset = 3;
	get_answer(&m, 3, 3, "", 0);
	answer(c, &m);
	o = reply(&r, c);
	assert_bool(o, "eof", 1);
	assert_int_equal(mp_get(o, "data")->via.bin.size, 0);
	reply_free(&r);
	call_free(c);
}

static void
test_list_ok(void **state)
{
	static const char *const keys[] = {"type", "id", "ok", "session",
	    "files", "truncated", "queued_ms", NULL};
	static const char *const ekeys[] = {
	    "path", "kind", "size_bytes", "sha256", NULL};
	struct call *c = mkcall(CREQ_LIST_FILES, NULL, 0);
	const msgpack_object *o, *files, *e;
	struct mp_enc m;
	struct reply r;

	(void)state;
	ok_begin(&m, NULL);
	enc_key(&m, "files");
	enc_array(&m, 3);
	entry(&m, "in", "dir", 0, NULL);
	entry(&m, "in/a.txt", "file", 3, SHA);
	entry(&m, "in/bad\\xff", "symlink", 0, NULL);
	enc_kbool(&m, "truncated", 1);
	enc_map_close(&m);
	answer(c, &m);
	o = reply(&r, c);
	assert_ok_reply(o, "list_files");
	assert_bool(o, "truncated", 1);
	assert_keys(o, keys);
	files = mp_get(o, "files");
	assert_non_null(files);
	assert_int_equal(files->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(files->via.array.size, 3);
	e = &files->via.array.ptr[1];
	assert_str(e, "path", "in/a.txt");
	assert_str(e, "kind", "file");
	assert_uint(e, "size_bytes", 3);
	assert_str(e, "sha256", SHA);
	assert_keys(e, ekeys);
	e = &files->via.array.ptr[2];
	assert_str(e, "path", "in/bad\\xff");
	assert_str(e, "kind", "symlink");
	assert_null(mp_get(e, "sha256"));
	reply_free(&r);
	/* An empty work dir. */
	ok_begin(&m, NULL);
	enc_key(&m, "files");
	enc_array(&m, 0);
	enc_kbool(&m, "truncated", 0);
	enc_map_close(&m);
	answer(c, &m);
	o = reply(&r, c);
	assert_int_equal(mp_get(o, "files")->via.array.size, 0);
	assert_bool(o, "truncated", 0);
	reply_free(&r);
	call_free(c);
}

static void
test_delete_ok(void **state)
{
	static const char *const keys[] = {"type", "id", "ok", "session",
	    "path", "kind", "size_bytes", "sha256", "queued_ms", NULL};
	static const char *const lkeys[] = {"type", "id", "ok", "session",
	    "path", "kind", "size_bytes", "queued_ms", NULL};
	struct call *c = mkcall(CREQ_DELETE_FILE, "in/a.txt", 0);
	const msgpack_object *o;
	struct mp_enc m;
	struct reply r;

	(void)state;
	ok_begin(&m, "in/a.txt");
	enc_kstr(&m, "kind", "file");
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	answer(c, &m);
	o = reply(&r, c);
	assert_ok_reply(o, "delete_file");
	assert_str(o, "kind", "file");
	assert_uint(o, "size_bytes", 3);
	assert_str(o, "sha256", SHA);
	assert_keys(o, keys);
	reply_free(&r);
	/* A link: no sha256. */
	ok_begin(&m, "in/a.txt");
	enc_kstr(&m, "kind", "symlink");
	enc_kuint(&m, "size_bytes", 0);
	enc_map_close(&m);
	answer(c, &m);
	o = reply(&r, c);
	assert_str(o, "kind", "symlink");
	assert_keys(o, lkeys);
	reply_free(&r);
	call_free(c);
}

/* The skill's own refusal, {ok: false, error: {type, message}}, exit 1. */
static void
refusal(struct mp_enc *m, const char *type, const char *msg)
{
	enc_init(m);
	enc_map_open(m);
	enc_kbool(m, "ok", 0);
	enc_key(m, "error");
	enc_map_open(m);
	enc_kstr(m, "type", type);
	enc_kstr(m, "message", msg);
	enc_map_close(m);
	enc_map_close(m);
}

static void
test_refusals(void **state)
{
	static const char *const pass[] = {
	    "bad_request", "not_found", "resource_limit", "permission_denied"};
	static const char *const kept[] = {
	    "timeout", "overloaded", "unsupported", "no_such_type"};
	struct call *c = mkcall(CREQ_GET_FILE, "in/a.txt", 0);
	struct mp_enc m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pass) / sizeof(pass[0]); i++) {
		refusal(&m, pass[i], "why it said no");
		answer(c, &m);
		c->x.exit_code = 1;
		assert_error_reply(c, pass[i], "why it said no");
	}
	/* Types the skill may not pass on are the daemon's failure. */
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
		refusal(&m, kept[i], "why it said no");
		answer(c, &m);
		c->x.exit_code = 1;
		assert_error_reply(c, "internal",
		    "the files skill answered badly: an error type it may not "
		    "give");
	}
	call_free(c);
}

/* A call that failed before or while the skill ran: its own error. */
static void
test_call_failed(void **state)
{
	struct call *c = mkcall(CREQ_PUT_FILE, "in/a.txt", 0);

	(void)state;
	c->err = ERR_TIMEOUT;
	snprintf(c->errmsg, sizeof(c->errmsg), "the skill ran out of time");
	assert_error_reply(c, "timeout", "the skill ran out of time");
	c->err = ERR_SKILL_NOT_ENABLED;
	snprintf(c->errmsg, sizeof(c->errmsg), "not enabled");
	assert_error_reply(c, "skill_not_enabled",
	    "session files are calls of the skill \"files\"");
	c->err = ERR_UNKNOWN_SKILL;
	assert_error_reply(c, "unknown_skill",
	    "session files are calls of the skill \"files\"");
	c->err = ERR_PERMISSION_DENIED;
	assert_error_reply(c, "permission_denied",
	    "session files are calls of the skill \"files\"");
	call_free(c);
}

/* ------------------------------------------------- malformed answers */

static void
test_not_msgpack(void **state)
{
	static const uint8_t arr[] = {0x92, 0x01, 0x02};
	static const uint8_t badutf8[] = {
	    0x82, 0xa2, 'o', 'k', 0xc3, 0xa4, 'p', 'a', 't', 'h', 0xa1, 0xff};
	struct call *c = mkcall(CREQ_PUT_FILE, "in/a.txt", 0);
	struct mp_enc m;

	(void)state;
	stdout_is(c, "hello, world\n", 13, 0);
	assert_error_reply(c, "internal", BADLY "no msgpack map");
	stdout_is(c, "", 0, 0);
	assert_error_reply(c, "internal", BADLY);
	stdout_is(c, arr, sizeof(arr), 0);
	assert_error_reply(c, "internal", BADLY);
	stdout_is(c, badutf8, sizeof(badutf8), 0);
	assert_error_reply(c, "internal", BADLY);
	/* A good answer cut short, or with a byte after it. */
	put_answer(&m, "in/a.txt", SHA);
	stdout_is(c, m.sb.data, m.sb.size - 5, 0);
	assert_error_reply(c, "internal", BADLY);
	msgpack_pack_nil(&m.pk);
	stdout_is(c, m.sb.data, m.sb.size, 0);
	assert_error_reply(c, "internal", BADLY);
	/* A good answer the output cap cut: the pipe held more than kept. */
	enc_free(&m);
	put_answer(&m, "in/a.txt", SHA);
	stdout_is(c, m.sb.data, m.sb.size, 0);
	c->run.out.total = m.sb.size + 1;
	assert_error_reply(c, "internal", BADLY "it is over the output cap");
	enc_free(&m);
	call_free(c);
}

static void
test_bad_envelope(void **state)
{
	struct mp_enc m;

	(void)state;
	/* no ok */
	enc_init(&m);
	enc_map_open(&m);
	enc_kstr(&m, "path", "in/a.txt");
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	/* ok not a bool */
	enc_init(&m);
	enc_map_open(&m);
	enc_kuint(&m, "ok", 1);
	enc_kstr(&m, "path", "in/a.txt");
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	/* ok, but the skill exited 1 */
	put_answer(&m, "in/a.txt", SHA);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 1);
	/* a failure without its reason, or with half of it */
	enc_init(&m);
	enc_map_open(&m);
	enc_kbool(&m, "ok", 0);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 1);
	enc_init(&m);
	enc_map_open(&m);
	enc_kbool(&m, "ok", 0);
	enc_key(&m, "error");
	enc_map_open(&m);
	enc_kstr(&m, "type", "not_found");
	enc_map_close(&m);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 1);
	enc_init(&m);
	enc_map_open(&m);
	enc_kbool(&m, "ok", 0);
	enc_kstr(&m, "error", "not_found");
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 1);
	enc_init(&m);
	enc_map_open(&m);
	enc_kbool(&m, "ok", 0);
	enc_key(&m, "error");
	enc_map_open(&m);
	enc_kuint(&m, "type", 5);
	enc_kstr(&m, "message", "m");
	enc_map_close(&m);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 1);
}

static void
test_bad_put(void **state)
{
	static const char *const shas[] = {
	    "98EA6E4F216F2FB4B69FFF9B3A44842C38686CA685F3F55DC48C5D3FB1107BE4",
	    "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be",
	    "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107beg",
	    "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be40",
	    "", "-"};
	struct mp_enc m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(shas) / sizeof(shas[0]); i++) {
		put_answer(&m, "in/a.txt", shas[i]);
		assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	}
	/* a path other than the request's */
	put_answer(&m, "in/b.txt", SHA);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	put_answer(&m, "in/a.txt/", SHA);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	/* a field missing: path, size_bytes, sha256 */
	ok_begin(&m, NULL);
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, "in/a.txt");
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "size_bytes", 3);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	/* a field too many: another command's, or none's */
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_kuint(&m, "offset", 0);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_kstr(&m, "note", "hello");
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	/* wrong types: size_bytes a str or < 0, path bin, sha256 a number */
	ok_begin(&m, "in/a.txt");
	enc_kstr(&m, "size_bytes", "3");
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, "in/a.txt");
	enc_kint(&m, "size_bytes", -3);
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, NULL);
	enc_kbin(&m, "path", "in/a.txt", 8);
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "size_bytes", 3);
	enc_kuint(&m, "sha256", 98);
	enc_map_close(&m);
	assert_badly(CREQ_PUT_FILE, "in/a.txt", 0, &m, 0);
}

static void
test_bad_get(void **state)
{
	struct mp_enc m;

	(void)state;
	/* data past the size, from the offset */
	get_answer(&m, 1, 3, "i\nX", 3);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 1, &m, 0);
	get_answer(&m, 0, 0, "x", 1);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 0, &m, 0);
	/* an offset other than the request's, or past the size */
	get_answer(&m, 0, 3, "h", 1);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 1, &m, 0);
	get_answer(&m, 4, 3, "", 0);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 4, &m, 0);
	/* data or offset missing; data a number */
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "offset", 0);
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_kbin(&m, "data", "hi\n", 3);
	enc_map_close(&m);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "offset", 0);
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_kuint(&m, "data", 3);
	enc_map_close(&m);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 0, &m, 0);
	/* an eof of its own: the broker says eof, not the skill */
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "offset", 0);
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_kbin(&m, "data", "hi\n", 3);
	enc_kbool(&m, "eof", 1);
	enc_map_close(&m);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 0, &m, 0);
	/* a put's answer to a get */
	put_answer(&m, "in/a.txt", SHA);
	assert_badly(CREQ_GET_FILE, "in/a.txt", 0, &m, 0);
}

/* A listing with a good entry and the one e writes (desc says what it
 * is): a good reply when ok, else badly. */
static void
list_with(const char *desc, void (*e)(struct mp_enc *), int ok)
{
	struct call *c = mkcall(CREQ_LIST_FILES, NULL, 0);
	struct mp_enc m;
	struct reply r;

	ok_begin(&m, NULL);
	enc_key(&m, "files");
	enc_array(&m, 2);
	entry(&m, "a", "file", 3, SHA);
	e(&m);
	enc_kbool(&m, "truncated", 0);
	enc_map_close(&m);
	answer(c, &m);
	if (ok) {
		assert_ok_reply(reply(&r, c), "list_files");
		reply_free(&r);
	} else {
		char *type = str_of(reply(&r, c), "type");

		if (strcmp(type, "error") != 0)
			fail_msg("a listing entry %s: a %s reply", desc, type);
		free(type);
		reply_free(&r);
		assert_error_reply(c, "internal", BADLY);
	}
	call_free(c);
}

static void
e_good(struct mp_enc *m)
{
	entry(m, "b", "dir", 0, NULL);
}
static void
e_not_map(struct mp_enc *m)
{
	enc_str(m, "b");
}
static void
e_extra(struct mp_enc *m)
{
	enc_map_open(m);
	enc_kstr(m, "path", "b");
	enc_kstr(m, "kind", "file");
	enc_kuint(m, "size_bytes", 0);
	enc_kuint(m, "mode", 0644);
	enc_map_close(m);
}
static void
e_no_kind(struct mp_enc *m)
{
	enc_map_open(m);
	enc_kstr(m, "path", "b");
	enc_kuint(m, "size_bytes", 0);
	enc_map_close(m);
}
static void
e_no_size(struct mp_enc *m)
{
	enc_map_open(m);
	enc_kstr(m, "path", "b");
	enc_kstr(m, "kind", "file");
	enc_map_close(m);
}
static void
e_negative(struct mp_enc *m)
{
	entry(m, "b", "file", -1, NULL);
}
static void
e_bad_sha(struct mp_enc *m)
{
	entry(m, "b", "file", 3, "abc");
}
static void
e_long_kind(struct mp_enc *m)
{
	entry(m, "b", "a-kind-of-seventeen", 0, NULL);
}

static void
test_bad_list(void **state)
{
	struct mp_enc m;

	(void)state;
	list_with("good", e_good, 1);
	list_with("no map", e_not_map, 0);
	list_with("with a field too many", e_extra, 0);
	list_with("without kind", e_no_kind, 0);
	list_with("without size_bytes", e_no_size, 0);
	list_with("of a negative size", e_negative, 0);
	list_with("with a bad sha256", e_bad_sha, 0);
	list_with("of a kind over 16 bytes", e_long_kind, 0);
	/* files not an array; missing; truncated missing or not a bool */
	ok_begin(&m, NULL);
	enc_key(&m, "files");
	enc_map_open(&m);
	enc_map_close(&m);
	enc_kbool(&m, "truncated", 0);
	enc_map_close(&m);
	assert_badly(CREQ_LIST_FILES, NULL, 0, &m, 0);
	ok_begin(&m, NULL);
	enc_kbool(&m, "truncated", 0);
	enc_map_close(&m);
	assert_badly(CREQ_LIST_FILES, NULL, 0, &m, 0);
	ok_begin(&m, NULL);
	enc_key(&m, "files");
	enc_array(&m, 0);
	enc_map_close(&m);
	assert_badly(CREQ_LIST_FILES, NULL, 0, &m, 0);
	ok_begin(&m, NULL);
	enc_key(&m, "files");
	enc_array(&m, 0);
	enc_kuint(&m, "truncated", 0);
	enc_map_close(&m);
	assert_badly(CREQ_LIST_FILES, NULL, 0, &m, 0);
	/* a path field in a listing */
	ok_begin(&m, "a");
	enc_key(&m, "files");
	enc_array(&m, 0);
	enc_kbool(&m, "truncated", 0);
	enc_map_close(&m);
	assert_badly(CREQ_LIST_FILES, NULL, 0, &m, 0);
}

static void
test_bad_delete(void **state)
{
	struct mp_enc m;

	(void)state;
	/* no kind */
	ok_begin(&m, "in/a.txt");
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", SHA);
	enc_map_close(&m);
	assert_badly(CREQ_DELETE_FILE, "in/a.txt", 0, &m, 0);
	/* another path; a bad sha256 */
	ok_begin(&m, "in");
	enc_kstr(&m, "kind", "dir");
	enc_kuint(&m, "size_bytes", 0);
	enc_map_close(&m);
	assert_badly(CREQ_DELETE_FILE, "in/a.txt", 0, &m, 0);
	ok_begin(&m, "in/a.txt");
	enc_kstr(&m, "kind", "file");
	enc_kuint(&m, "size_bytes", 3);
	enc_kstr(&m, "sha256", "x");
	enc_map_close(&m);
	assert_badly(CREQ_DELETE_FILE, "in/a.txt", 0, &m, 0);
	/* a field of a get's */
	ok_begin(&m, "in/a.txt");
	enc_kstr(&m, "kind", "file");
	enc_kuint(&m, "size_bytes", 3);
	enc_kbin(&m, "data", "hi\n", 3);
	enc_map_close(&m);
	assert_badly(CREQ_DELETE_FILE, "in/a.txt", 0, &m, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_put_ok),
	    cmocka_unit_test(test_get_ok),
	    cmocka_unit_test(test_list_ok),
	    cmocka_unit_test(test_delete_ok),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_call_failed),
	    cmocka_unit_test(test_not_msgpack),
	    cmocka_unit_test(test_bad_envelope),
	    cmocka_unit_test(test_bad_put),
	    cmocka_unit_test(test_bad_get),
	    cmocka_unit_test(test_bad_list),
	    cmocka_unit_test(test_bad_delete),
	};

	B = xcalloc(1, sizeof(*B));
	B->max_frame = 1024 * 1024;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
