/*
 * test_msg.c: every internal message (proto/msg.h) round-trips through
 * its encoder and decoder, and every decoder refuses malformed input
 * with bad_request and a message that says why, leaving nothing
 * allocated behind (the SAN build checks for leaks).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgsample.h"

/*
 * Each decoder as the generic checks call it: decode into a poisoned
 * struct; on failure the struct must come back all zero (every pointer
 * freed and cleared); on success re-encode it into again (if not NULL)
 * and free it.
 */
typedef int (*dec_fn)(
    const struct mp_doc *d, struct mp_enc *again, struct error *e);

#define ADAPTER(name, T, decf, encf, freef)                                    \
	static int dec_##name(                                                 \
	    const struct mp_doc *d, struct mp_enc *again, struct error *e)     \
	{                                                                      \
		T v, zero;                                                     \
                                                                               \
		memset(&v, 0xa5, sizeof(v));                                   \
		memset(&zero, 0, sizeof(zero));                                \
		if (decf(d, &v, e) == -1) {                                    \
			assert_memory_equal(&v, &zero, sizeof(v));             \
			return -1;                                             \
		}                                                              \
		if (again != NULL)                                             \
			encf(again, &v);                                       \
		freef(&v);                                                     \
		return 0;                                                      \
	}

static void
ready_enc(struct mp_enc *m, const struct msg_ready *r)
{
	msg_ready_enc(m, r->role);
}

ADAPTER(prep, struct msg_prep, msg_prep_dec, msg_prep_enc, msg_prep_free)
ADAPTER(ready, struct msg_ready, msg_ready_dec, ready_enc, msg_ready_free)
ADAPTER(conf_broker, struct conf_broker, conf_broker_dec, conf_broker_enc,
    conf_broker_free)
ADAPTER(conf_policyd, struct conf_policyd, conf_policyd_dec, conf_policyd_enc,
    conf_policyd_free)
ADAPTER(conf_netproxy, struct conf_netproxy, conf_netproxy_dec,
    conf_netproxy_enc, conf_netproxy_free)
ADAPTER(net_open, struct msg_net_open, msg_net_open_dec, msg_net_open_enc,
    msg_net_open_free)
ADAPTER(conf_auditd, struct conf_auditd, conf_auditd_dec, conf_auditd_enc,
    conf_auditd_free)
ADAPTER(authz_req, struct msg_authz_req, msg_authz_req_dec, msg_authz_req_enc,
    msg_authz_req_free)
ADAPTER(authz_ans, struct msg_authz_ans, msg_authz_ans_dec, msg_authz_ans_enc,
    msg_authz_ans_free)
ADAPTER(skills_ans, struct msg_skills_ans, msg_skills_ans_dec,
    msg_skills_ans_enc, msg_skills_ans_free)
ADAPTER(reload_ans, struct msg_reload_ans, msg_reload_ans_dec,
    msg_reload_ans_enc, msg_reload_ans_free)
ADAPTER(
    admins, struct msg_admins, msg_admins_dec, msg_admins_enc, msg_admins_free)
ADAPTER(skill_info_req, struct msg_skill_info_req, msg_skill_info_req_dec,
    msg_skill_info_req_enc, msg_skill_info_req_free)
ADAPTER(skill_info_ans, struct msg_skill_info_ans, msg_skill_info_ans_dec,
    msg_skill_info_ans_enc, msg_skill_info_ans_free)
ADAPTER(grant, struct grant, grant_dec, grant_enc, grant_free)
ADAPTER(spec, struct grant, spec_dec, spec_enc, grant_free)
ADAPTER(grant_ack, struct msg_grant_ack, msg_grant_ack_dec, msg_grant_ack_enc,
    msg_grant_ack_free)
ADAPTER(policy_event, struct msg_policy_event, msg_policy_event_dec,
    msg_policy_event_enc, msg_policy_event_free)
ADAPTER(run, struct msg_run, msg_run_dec, msg_run_enc, msg_run_free)
ADAPTER(run_exited, struct msg_run_exited, msg_run_exited_dec,
    msg_run_exited_enc, msg_run_exited_free)
ADAPTER(peer_channel, struct msg_peer_channel, msg_peer_channel_dec,
    msg_peer_channel_enc, msg_peer_channel_free)
ADAPTER(audit_ack, struct msg_audit_ack, msg_audit_ack_dec, msg_audit_ack_enc,
    msg_audit_ack_free)
ADAPTER(files, struct msg_files, msg_files_dec, msg_files_enc, msg_files_free)
ADAPTER(session_end, struct msg_session_end, msg_session_end_dec,
    msg_session_end_enc, msg_session_end_free)
ADAPTER(
    cancel, struct msg_cancel, msg_cancel_dec, msg_cancel_enc, msg_cancel_free)
ADAPTER(worker_fail, struct msg_worker_fail, msg_worker_fail_dec,
    msg_worker_fail_enc, msg_worker_fail_free)

static int
dec_net_close(const struct mp_doc *d, struct mp_enc *again, struct error *e)
{
	struct msg_cancel c;

	if (msg_net_close_dec(d, &c, e) == -1)
		return -1;
	if (again != NULL)
		msg_net_close_enc(again, c.grant_id);
	msg_cancel_free(&c);
	return 0;
}

/* The decoders that own no memory. */
static int
dec_skills_req(const struct mp_doc *d, struct mp_enc *again, struct error *e)
{
	uint64_t ref;

	if (msg_skills_req_dec(d, &ref, e) == -1)
		return -1;
	if (again != NULL)
		msg_skills_req_enc(again, ref);
	return 0;
}

static int
dec_reload_req(const struct mp_doc *d, struct mp_enc *again, struct error *e)
{
	struct msg_reload_req r;

	if (msg_reload_req_dec(d, &r, e) == -1)
		return -1;
	if (again != NULL)
		msg_reload_req_enc(again, &r);
	return 0;
}

static int
dec_run_started(const struct mp_doc *d, struct mp_enc *again, struct error *e)
{
	struct msg_run_started r;

	if (msg_run_started_dec(d, &r, e) == -1)
		return -1;
	if (again != NULL)
		msg_run_started_enc(again, &r);
	return 0;
}

static int
dec_worker_exit(const struct mp_doc *d, struct mp_enc *again, struct error *e)
{
	struct msg_worker_exit x;

	if (msg_worker_exit_dec(d, &x, e) == -1)
		return -1;
	if (again != NULL)
		msg_worker_exit_enc(again, &x);
	return 0;
}

/* SERVE, WORKER_READY, WORKER_GO, WORKER_DONE: "t" alone. */
static int
dec_empty(const struct mp_doc *d, struct mp_enc *again, struct error *e)
{
	uint64_t t;

	if (msg_empty_dec(d, e) == -1)
		return -1;
	assert_int_equal(msg_type_of(d, &t, e), 0);
	if (again != NULL)
		msg_empty_enc(again, (enum msg_type)t);
	return 0;
}

/* The event points into the document: re-encode it as it stands. */
static int
dec_audit(const struct mp_doc *d, struct mp_enc *again, struct error *e)
{
	const msgpack_object *ev = NULL;
	uint64_t ref;

	if (msg_audit_dec(d, &ref, &ev, e) == -1) {
		assert_null(ev);
		return -1;
	}
	if (again != NULL) {
		msg_begin(again, MSG_AUDIT);
		enc_kuint(again, "ref", ref);
		enc_key(again, "event");
		enc_obj(again, ev);
		msg_end(again);
	}
	return 0;
}

static const struct codec {
	enum msg_type type;
	dec_fn dec;
} codecs[] = {
    {MSG_READY, dec_ready},
    {MSG_CONF_BROKER, dec_conf_broker},
    {MSG_CONF_POLICYD, dec_conf_policyd},
    {MSG_CONF_AUDITD, dec_conf_auditd},
    {MSG_CONF_NETPROXY, dec_conf_netproxy},
    {MSG_AUTHZ_REQ, dec_authz_req},
    {MSG_AUTHZ_ANS, dec_authz_ans},
    {MSG_SKILLS_REQ, dec_skills_req},
    {MSG_SKILLS_ANS, dec_skills_ans},
    {MSG_RELOAD_REQ, dec_reload_req},
    {MSG_RELOAD_ANS, dec_reload_ans},
    {MSG_ADMINS, dec_admins},
    {MSG_SKILL_INFO_REQ, dec_skill_info_req},
    {MSG_SKILL_INFO_ANS, dec_skill_info_ans},
    {MSG_GRANT, dec_grant},
    {MSG_GRANT_ACK, dec_grant_ack},
    {MSG_POLICY_EVENT, dec_policy_event},
    {MSG_RUN, dec_run},
    {MSG_RUN_STARTED, dec_run_started},
    {MSG_RUN_EXITED, dec_run_exited},
    {MSG_PEER_CHANNEL, dec_peer_channel},
    {MSG_SERVE, dec_empty},
    {MSG_SESSION_END, dec_session_end},
    {MSG_CANCEL, dec_cancel},
    {MSG_AUDIT, dec_audit},
    {MSG_AUDIT_ACK, dec_audit_ack},
    {MSG_FILES, dec_files},
    {MSG_SPEC, dec_spec},
    {MSG_WORKER_READY, dec_empty},
    {MSG_WORKER_GO, dec_empty},
    {MSG_WORKER_FAIL, dec_worker_fail},
    {MSG_WORKER_EXIT, dec_worker_exit},
    {MSG_PREP, dec_prep},
    {MSG_WORKER_DONE, dec_empty},
    {MSG_NET_OPEN, dec_net_open},
    {MSG_NET_CLOSE, dec_net_close},
};
#define NCODECS (sizeof(codecs) / sizeof(codecs[0]))

static dec_fn
codec_of(uint64_t t)
{
	size_t i;

	for (i = 0; i < NCODECS; i++)
		if ((uint64_t)codecs[i].type == t)
			return codecs[i].dec;
	fail_msg("no decoder for type %llu", (unsigned long long)t);
	return NULL;
}

static const char *
name_of(uint64_t t)
{
	size_t i;

	for (i = 0; i < SAMPLE_NTYPES; i++)
		if ((uint64_t)sample_types[i].type == t)
			return sample_types[i].name;
	return "?";
}

static void
decode_enc(const struct mp_enc *m, struct mp_doc *d)
{
	struct error e;

	if (mp_decode(d, (const uint8_t *)m->sb.data, m->sb.size, NULL, &e) !=
	    0)
		fail_msg("mp_decode: %s", e.msg);
}

/* Decode m as a message of type t. */
static void
open_msg(const struct mp_enc *m, struct mp_doc *d, enum msg_type t)
{
	struct error e;
	uint64_t got = 0;

	decode_enc(m, d);
	assert_int_equal(msg_type_of(d, &got, &e), 0);
	assert_int_equal(got, t);
}

static void
close_msg(struct mp_enc *m, struct mp_doc *d)
{
	mp_doc_free(d);
	enc_free(m);
}

/*
 * The message in m, decoded within lim (NULL: the default), goes to the
 * decoder its "t" names, which refuses it.
 */
static void
expect_refused_lim(
    struct mp_enc *m, const struct mp_limits *lim, const char *needle)
{
	struct mp_doc d;
	struct error e;
	uint64_t t = 0;
	int r;

	if (mp_decode(&d, (const uint8_t *)m->sb.data, m->sb.size, lim, &e) !=
	    0)
		fail_msg("mp_decode: %s", e.msg);
	assert_int_equal(msg_type_of(&d, &t, &e), 0);
	memset(&e, 0, sizeof(e));
	r = codec_of(t)(&d, NULL, &e);
	if (r != -1 || e.type != ERR_BAD_REQUEST ||
	    strstr(e.msg, needle) == NULL)
		fail_msg("%s: r=%d type=%d \"%s\"; wanted \"%s\"", name_of(t),
		    r, (int)e.type, e.msg, needle);
	close_msg(m, &d);
}

static void
expect_refused(struct mp_enc *m, const char *needle)
{
	expect_refused_lim(m, NULL, needle);
}

static void
expect_accepted(struct mp_enc *m)
{
	struct mp_doc d;
	struct error e;
	uint64_t t = 0;

	decode_enc(m, &d);
	assert_int_equal(msg_type_of(&d, &t, &e), 0);
	memset(&e, 0, sizeof(e));
	if (codec_of(t)(&d, NULL, &e) != 0)
		fail_msg("%s: refused: %s", name_of(t), e.msg);
	close_msg(m, &d);
}

/* Encode msg with an encoder, expect the decoder to refuse or take it. */
#define REFUSED(encf, msg, needle)                                             \
	do {                                                                   \
		struct mp_enc m_;                                              \
		enc_init(&m_);                                                 \
		encf(&m_, msg);                                                \
		expect_refused(&m_, needle);                                   \
	} while (0)
#define ACCEPTED(encf, msg)                                                    \
	do {                                                                   \
		struct mp_enc m_;                                              \
		enc_init(&m_);                                                 \
		encf(&m_, msg);                                                \
		expect_accepted(&m_);                                          \
	} while (0)

/*
 * Edits of a sample: the value at a path ("limits/pids", "files/0/path",
 * "event/event.action") replaced, added when absent, or removed.
 */
enum vkind {
	V_DEL,
	V_NIL,
	V_UINT,
	V_INT,
	V_BOOL,
	V_STR,
	V_LONG,  /* n bytes of c */
	V_STRS,  /* an array of n copies of s */
	V_DUP,   /* an array of n copies of the old array's first item */
	V_MAP,   /* {"k": 1} */
	V_MIXED, /* ["ok", 1] */
};

struct val {
	enum vkind k;
	uint64_t u;
	int64_t i;
	const char *s;
	size_t n;
	char c;
};

static struct val
vdel(void)
{
	return (struct val){.k = V_DEL};
}
static struct val
vnil(void)
{
	return (struct val){.k = V_NIL};
}
static struct val
vuint(uint64_t u)
{
	return (struct val){.k = V_UINT, .u = u};
}
static struct val
vint(int64_t i)
{
	return (struct val){.k = V_INT, .i = i};
}
static struct val
vbool(int b)
{
	return (struct val){.k = V_BOOL, .u = (uint64_t)b};
}
static struct val
vstr(const char *s)
{
	return (struct val){.k = V_STR, .s = s};
}
static struct val
vlong(size_t n, char c)
{
	return (struct val){.k = V_LONG, .n = n, .c = c};
}
static struct val
vstrs(size_t n, const char *s)
{
	return (struct val){.k = V_STRS, .n = n, .s = s};
}
static struct val
vdup(size_t n)
{
	return (struct val){.k = V_DUP, .n = n};
}
static struct val
vmap(void)
{
	return (struct val){.k = V_MAP};
}
static struct val
vmixed(void)
{
	return (struct val){.k = V_MIXED};
}

static void
put_val(struct mp_enc *m, const struct val *v, const msgpack_object *old)
{
	char *s;
	size_t i;

	switch (v->k) {
	case V_DEL:
		break;
	case V_NIL:
		enc_nil(m);
		break;
	case V_UINT:
		enc_uint(m, v->u);
		break;
	case V_INT:
		enc_int(m, v->i);
		break;
	case V_BOOL:
		enc_bool(m, (int)v->u);
		break;
	case V_STR:
		enc_str(m, v->s);
		break;
	case V_LONG:
		s = malloc(v->n + 1);
		assert_non_null(s);
		memset(s, v->c, v->n);
		enc_strn(m, s, v->n);
		free(s);
		break;
	case V_STRS:
		enc_array(m, v->n);
		for (i = 0; i < v->n; i++)
			enc_str(m, v->s);
		break;
	case V_DUP:
		assert_non_null(old);
		assert_int_equal(old->type, MSGPACK_OBJECT_ARRAY);
		assert_true(old->via.array.size > 0);
		enc_array(m, v->n);
		for (i = 0; i < v->n; i++)
			enc_obj(m, &old->via.array.ptr[0]);
		break;
	case V_MAP:
		enc_map_open(m);
		enc_kuint(m, "k", 1);
		enc_map_close(m);
		break;
	case V_MIXED:
		enc_array(m, 2);
		enc_str(m, "ok");
		enc_uint(m, 1);
		break;
	}
}

/* Copy o into m with the value at path edited. */
static void
put_edited(struct mp_enc *m, const msgpack_object *o, const char *path,
    const struct val *v)
{
	const char *rest = strchr(path, '/');
	size_t seg = rest != NULL ? (size_t)(rest - path) : strlen(path);
	const msgpack_object_kv *kv;
	uint32_t i, at;
	int found = 0;

	if (rest != NULL)
		rest++;
	if (o->type == MSGPACK_OBJECT_ARRAY) {
		at = (uint32_t)strtoul(path, NULL, 10);
		assert_true(at < o->via.array.size);
		enc_array(m, o->via.array.size);
		for (i = 0; i < o->via.array.size; i++)
			if (i != at)
				enc_obj(m, &o->via.array.ptr[i]);
			else if (rest != NULL)
				put_edited(m, &o->via.array.ptr[i], rest, v);
			else
				put_val(m, v, &o->via.array.ptr[i]);
		return;
	}
	assert_int_equal(o->type, MSGPACK_OBJECT_MAP);
	enc_map_open(m);
	for (i = 0; i < o->via.map.size; i++) {
		kv = &o->via.map.ptr[i];
		if (kv->key.via.str.size != seg ||
		    memcmp(kv->key.via.str.ptr, path, seg) != 0) {
			enc_keyn(m, kv->key.via.str.ptr, kv->key.via.str.size);
			enc_obj(m, &kv->val);
			continue;
		}
		found = 1;
		if (rest == NULL && v->k == V_DEL)
			continue;
		enc_keyn(m, kv->key.via.str.ptr, kv->key.via.str.size);
		if (rest != NULL)
			put_edited(m, &kv->val, rest, v);
		else
			put_val(m, v, &kv->val);
	}
	if (!found) {
		assert_null(rest);
		if (v->k != V_DEL) {
			enc_keyn(m, path, seg);
			put_val(m, v, NULL);
		}
	}
	enc_map_close(m);
}

/* The object at path in o ("" is o itself). */
static const msgpack_object *
object_at(const msgpack_object *o, const char *path)
{
	const char *rest;
	size_t seg;
	uint32_t i;

	for (; *path != '\0'; path = rest) {
		rest = strchr(path, '/');
		seg = rest != NULL ? (size_t)(rest - path) : strlen(path);
		rest = rest != NULL ? rest + 1 : path + seg;
		if (o->type == MSGPACK_OBJECT_ARRAY) {
			i = (uint32_t)strtoul(path, NULL, 10);
			assert_true(i < o->via.array.size);
			o = &o->via.array.ptr[i];
			continue;
		}
		assert_int_equal(o->type, MSGPACK_OBJECT_MAP);
		for (i = 0; i < o->via.map.size; i++)
			if (o->via.map.ptr[i].key.via.str.size == seg &&
			    memcmp(o->via.map.ptr[i].key.via.str.ptr, path,
			        seg) == 0)
				break;
		assert_true(i < o->via.map.size);
		o = &o->via.map.ptr[i].val;
	}
	return o;
}

/* out: the sample of type t, edited. */
static void
edit_sample(struct mp_enc *out, enum msg_type t, const char *path, struct val v)
{
	struct mp_enc m;
	struct mp_doc d;

	enc_init(&m);
	assert_int_equal(sample_enc(&m, t), 0);
	decode_enc(&m, &d);
	enc_init(out);
	put_edited(out, d.root, path, &v);
	close_msg(&m, &d);
}

static void
refused_edit(
    enum msg_type t, const char *path, struct val v, const char *needle)
{
	struct mp_enc m;

	edit_sample(&m, t, path, v);
	expect_refused(&m, needle);
}

static void
accepted_edit(enum msg_type t, const char *path, struct val v)
{
	struct mp_enc m;

	edit_sample(&m, t, path, v);
	expect_accepted(&m);
}

/* A value of a type the field cannot have. */
static struct val
wrong_type(const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_STR:
	case MSGPACK_OBJECT_BOOLEAN:
	case MSGPACK_OBJECT_MAP:
		return vuint(1);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return vbool(1);
	default:
		return vstr("1");
	}
}

/*
 * In the sample of type t, within the map at prefix ("" for the whole
 * message, "skills/0" for the first skill): each field dropped, set to nil or
 * to a wrong type (and, for an array of strings, given a non-string item) is
 * refused with an error that names the field; so is one unknown field. "t" is
 * msg_type_of's.
 */
static void
check_strict(enum msg_type t, const char *prefix)
{
	struct mp_enc m, m2;
	struct mp_doc d, d2;
	struct error e;
	const msgpack_object *map;
	const msgpack_object_kv *kv;
	char path[128], key[80], needle[96];
	struct val v[4];
	uint32_t i;
	size_t j, nv;
	uint64_t got;
	int r;

	enc_init(&m);
	assert_int_equal(sample_enc(&m, t), 0);
	decode_enc(&m, &d);
	map = object_at(d.root, prefix);
	assert_int_equal(map->type, MSGPACK_OBJECT_MAP);
	for (i = 0; i < map->via.map.size; i++) {
		kv = &map->via.map.ptr[i];
		snprintf(key, sizeof(key), "%.*s", (int)kv->key.via.str.size,
		    kv->key.via.str.ptr);
		snprintf(path, sizeof(path), "%s%s%s", prefix,
		    *prefix != '\0' ? "/" : "", key);
		snprintf(needle, sizeof(needle), "\"%s\"", key);
		nv = 0;
		v[nv++] = vdel();
		v[nv++] = vnil();
		v[nv++] = wrong_type(&kv->val);
		if (kv->val.type == MSGPACK_OBJECT_ARRAY &&
		    (kv->val.via.array.size == 0 ||
		        kv->val.via.array.ptr[0].type == MSGPACK_OBJECT_STR))
			v[nv++] = vmixed();
		for (j = 0; j < nv; j++) {
			edit_sample(&m2, t, path, v[j]);
			decode_enc(&m2, &d2);
			memset(&e, 0, sizeof(e));
			if (strcmp(path, "t") == 0)
				r = msg_type_of(&d2, &got, &e);
			else
				r = codec_of(t)(&d2, NULL, &e);
			if (r != -1 || e.type != ERR_BAD_REQUEST ||
			    strstr(e.msg, needle) == NULL)
				fail_msg("%s: edit %zu of %s: r=%d \"%s\"",
				    name_of(t), j, path, r, e.msg);
			close_msg(&m2, &d2);
		}
	}
	snprintf(path, sizeof(path), "%s%sbogus", prefix,
	    *prefix != '\0' ? "/" : "");
	refused_edit(t, path, vuint(1), "unknown field \"bogus\"");
	close_msg(&m, &d);
}

/* Every type has a sample, a decoder, and its number in the enum. */
static void
test_every_type_has_a_codec(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	size_t i;

	(void)state;
	assert_int_equal(SAMPLE_NTYPES, NCODECS);
	for (i = 0; i < SAMPLE_NTYPES; i++) {
		assert_int_equal(sample_types[i].type, codecs[i].type);
		enc_init(&m);
		assert_int_equal(sample_enc(&m, sample_types[i].type), 0);
		assert_true(enc_complete(&m));
		open_msg(&m, &d, sample_types[i].type);
		close_msg(&m, &d);
	}
	enc_init(&m);
	assert_int_equal(sample_enc(&m, (enum msg_type)6), -1);
	enc_free(&m);
}

/* Decoding then encoding again gives the very bytes of the sample. */
static void
test_every_type_round_trips(void **state)
{
	struct mp_enc m, again;
	struct mp_doc d;
	struct error e;
	size_t i;

	(void)state;
	for (i = 0; i < SAMPLE_NTYPES; i++) {
		enc_init(&m);
		sample_enc(&m, sample_types[i].type);
		open_msg(&m, &d, sample_types[i].type);
		enc_init(&again);
		if (codecs[i].dec(&d, &again, &e) != 0)
			fail_msg("%s: %s", sample_types[i].name, e.msg);
		if (again.sb.size != m.sb.size ||
		    memcmp(again.sb.data, m.sb.data, m.sb.size) != 0)
			fail_msg(
			    "%s: re-encoded differently", sample_types[i].name);
		enc_free(&again);
		close_msg(&m, &d);
	}
}

static void
test_every_type_strict(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < SAMPLE_NTYPES; i++)
		check_strict(sample_types[i].type, "");
	check_strict(MSG_CONF_POLICYD, "limits");
	check_strict(MSG_SKILLS_ANS, "skills/0");
	check_strict(MSG_SKILL_INFO_ANS, "commands/0");
	check_strict(MSG_SKILL_INFO_ANS, "references/0");
	check_strict(MSG_FILES, "files/0");
}

/* "t": present, an integer, at most 255. */
static void
test_type_field(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint64_t t;

	(void)state;
	edit_sample(&m, MSG_SERVE, "t", vuint(256));
	decode_enc(&m, &d);
	assert_int_equal(msg_type_of(&d, &t, &e), -1);
	assert_non_null(strstr(e.msg, "\"t\" above 255"));
	close_msg(&m, &d);
	edit_sample(&m, MSG_SERVE, "t", vint(-1));
	decode_enc(&m, &d);
	assert_int_equal(msg_type_of(&d, &t, &e), -1);
	assert_non_null(strstr(e.msg, "\"t\" must be a non-negative"));
	close_msg(&m, &d);
}

static void
test_ready(void **state)
{
	struct msg_ready r;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_ready_enc(&m, "broker");
	open_msg(&m, &d, MSG_READY);
	assert_int_equal(msg_ready_dec(&d, &r, &e), 0);
	assert_int_equal(r.version, PROTO_VERSION);
	assert_string_equal(r.role, "broker");
	msg_ready_free(&r);
	assert_null(r.role);
	close_msg(&m, &d);

	refused_edit(
	    MSG_READY, "v", vuint((uint64_t)UINT32_MAX + 1), "\"v\" above");
	refused_edit(MSG_READY, "v", vint(-1), "\"v\" must be a non-negative");
	refused_edit(MSG_READY, "role", vlong(ROLE_MAX_LEN + 1, 'a'),
	    "\"role\" longer than 32");
	accepted_edit(MSG_READY, "role", vlong(ROLE_MAX_LEN, 'a'));

	/* msg_ready_check: the role expected, speaking PROTO_VERSION. */
	enc_init(&m);
	msg_ready_enc(&m, "broker");
	open_msg(&m, &d, MSG_READY);
	assert_int_equal(msg_ready_check(&d, "broker", &e), 0);
	memset(&e, 0, sizeof(e));
	assert_int_equal(msg_ready_check(&d, "auditd", &e), -1);
	assert_int_equal(e.type, ERR_BAD_REQUEST);
	assert_non_null(strstr(e.msg, "expected \"auditd\""));
	close_msg(&m, &d);
	edit_sample(&m, MSG_READY, "v", vuint(PROTO_VERSION + 1));
	open_msg(&m, &d, MSG_READY);
	assert_int_equal(msg_ready_check(&d, "policyd", &e), -1);
	assert_non_null(strstr(e.msg, "READY from \"policyd\" protocol"));
	close_msg(&m, &d);
	edit_sample(&m, MSG_READY, "role", vuint(1));
	open_msg(&m, &d, MSG_READY);
	assert_int_equal(msg_ready_check(&d, "policyd", &e), -1);
	assert_non_null(strstr(e.msg, "\"role\" must be a string"));
	close_msg(&m, &d);
}

static void
test_conf_broker(void **state)
{
	struct conf_broker in = sample_conf_broker(), out, c;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	conf_broker_enc(&m, &in);
	open_msg(&m, &d, MSG_CONF_BROKER);
	assert_int_equal(conf_broker_dec(&d, &out, &e), 0);
	assert_int_equal(out.uid, 64290);
	assert_int_equal(out.gid, 64291);
	assert_string_equal(out.root, "/var/empty/skillbroker");
	assert_int_equal(out.max_frame, 65536);
	assert_int_equal(out.max_clients, 17);
	assert_int_equal(out.max_sessions, 33);
	assert_int_equal(out.session_idle_s, 600);
	assert_int_equal(out.workers, 40);
	assert_int_equal(out.max_timeout_ms, 120000);
	assert_int_equal(out.call_output, 4096);
	assert_int_equal(out.per_uid.clients, 4);
	assert_int_equal(out.per_uid.calls, 20);
	assert_int_equal(out.per_uid.sessions, 8);
	assert_int_equal(out.per_uid.workers, 5);
	assert_int_equal(out.clients.idle_s, 300);
	assert_int_equal(out.clients.frame_s, 7);
	assert_int_equal(out.clients.stall_s, 9);
	assert_int_equal(out.clients.output_bytes, 65536);
	assert_int_equal(out.clients.approval_s, 45);
	conf_broker_free(&out);
	assert_null(out.root);
	close_msg(&m, &d);

	/* A role never runs as root. */
	c = in;
	c.uid = 0;
	REFUSED(conf_broker_enc, &c, "\"uid\" is root");
	c = in;
	c.gid = 0;
	REFUSED(conf_broker_enc, &c, "\"gid\" is root");
	c = in;
	c.uid = 4294967295ULL; /* (uid_t)-1 */
	REFUSED(conf_broker_enc, &c, "\"uid\" above");
	c = in;
	c.root = "var/empty";
	REFUSED(conf_broker_enc, &c, "\"root\" must be absolute");
	c.root = "";
	REFUSED(conf_broker_enc, &c, "\"root\" must be absolute");
	refused_edit(MSG_CONF_BROKER, "root", vlong(PATH_MAX_LEN + 1, '/'),
	    "\"root\" longer than 4096");
	c = in;
	c.max_frame = 1023;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c.max_frame = 1024;
	ACCEPTED(conf_broker_enc, &c);
	c.max_frame = 1024 * 1024 + 1;
	REFUSED(conf_broker_enc, &c, "\"max_frame\" above");
	c = in;
	c.max_clients = 0;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c.max_clients = 65537;
	REFUSED(conf_broker_enc, &c, "\"max_clients\" above");
	c.max_clients = c.per_uid.clients = 1;
	ACCEPTED(conf_broker_enc, &c);
	c = in;
	c.max_sessions = 0;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c.max_sessions = 65537;
	REFUSED(conf_broker_enc, &c, "\"max_sessions\" above");
	c.max_sessions = c.per_uid.sessions = 1;
	ACCEPTED(conf_broker_enc, &c);
	c = in;
	c.session_idle_s = 0;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c.session_idle_s = 86400 * 365 + 1;
	REFUSED(conf_broker_enc, &c, "\"session_idle_s\" above");
	c.session_idle_s = 86400 * 365;
	ACCEPTED(conf_broker_enc, &c);
	/* One user's share is never above the whole, nor zero. */
	c = in;
	c.per_uid.clients = c.max_clients + 1;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c.per_uid.clients = c.max_clients;
	ACCEPTED(conf_broker_enc, &c);
	c = in;
	c.per_uid.sessions = c.max_sessions + 1;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c = in;
	c.per_uid.workers = c.workers + 1;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c.per_uid.workers = c.workers;
	ACCEPTED(conf_broker_enc, &c);
	c = in;
	c.workers = CONFIG_WORKERS_MAX + 1;
	REFUSED(conf_broker_enc, &c, "\"workers\" above");
	c = in;
	c.per_uid.calls = 0;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c = in;
	c.clients.frame_s = 0;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c = in;
	c.clients.output_bytes = 65535;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c = in;
	c.clients.approval_s = 0;
	REFUSED(conf_broker_enc, &c, "broker settings out of range");
	c.clients.approval_s = 3601;
	REFUSED(conf_broker_enc, &c, "\"approval_s\" above");
	c.clients.approval_s = 3600;
	ACCEPTED(conf_broker_enc, &c);
}

static void
test_conf_policyd(void **state)
{
	static const struct {
		const char *k;
		size_t off;
		uint64_t min, max;
	} lim[] = {
	    {"timeout_ms", offsetof(struct limits, timeout_ms), 1, 86400000},
	    {"max_timeout_ms", offsetof(struct limits, max_timeout_ms), 1,
	        86400000},
	    {"output_bytes", offsetof(struct limits, output_bytes), 1,
	        64 * 1024 * 1024},
	    {"memory_mb", offsetof(struct limits, memory_mb), 8, 1024 * 1024},
	    {"pids", offsetof(struct limits, pids), 1, 65536},
	    {"fsize_mb", offsetof(struct limits, fsize_mb), 1, 1024 * 1024},
	    {"nofile", offsetof(struct limits, nofile), 8, 65536},
	};
	static char *rel[] = {"/srv/skills", "skills"};
	struct conf_policyd in = sample_conf_policyd(), out, c;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	char needle[64];
	uint64_t *f;
	size_t i;

	(void)state;
	enc_init(&m);
	conf_policyd_enc(&m, &in);
	open_msg(&m, &d, MSG_CONF_POLICYD);
	assert_int_equal(conf_policyd_dec(&d, &out, &e), 0);
	assert_int_equal(out.uid, 64291);
	assert_int_equal(out.gid, 64292);
	assert_int_equal(out.nskills_dirs, 2);
	assert_string_equal(
	    out.skills_dirs[0], "/usr/share/skillbroker/skills");
	assert_string_equal(out.skills_dirs[1], "/srv/skills");
	assert_null(out.skills_dirs[2]);
	assert_string_equal(out.policy_dir, "/etc/skillbroker/policy.d");
	assert_int_equal(out.net, NET_PROXY);
	assert_memory_equal(&out.limits, &in.limits, sizeof(in.limits));
	assert_int_equal(out.nprotect, 2);
	assert_string_equal(out.protect[0], "/var/lib/skillbroker");
	assert_string_equal(out.protect[1], "/run/skillbroker");
	assert_int_equal(out.nsys_paths, 2);
	assert_string_equal(out.sys_paths[0], "/usr");
	assert_string_equal(out.sys_paths[1], "/bin");
	conf_policyd_free(&out);
	close_msg(&m, &d);

	c = in;
	c.uid = 0;
	REFUSED(conf_policyd_enc, &c, "\"uid\" is root");
	c = in;
	c.gid = 0;
	REFUSED(conf_policyd_enc, &c, "\"gid\" is root");
	c = in;
	c.skills_dirs = rel;
	REFUSED(conf_policyd_enc, &c, "skills_dirs must be absolute");
	refused_edit(MSG_CONF_POLICYD, "skills_dirs",
	    vstrs(SKILLS_DIRS_MAX + 1, "/s"),
	    "\"skills_dirs\" has more than 32 items");
	accepted_edit(
	    MSG_CONF_POLICYD, "skills_dirs", vstrs(SKILLS_DIRS_MAX, "/s"));
	refused_edit(MSG_CONF_POLICYD, "skills_dirs/1",
	    vlong(PATH_MAX_LEN + 1, '/'),
	    "an item of \"skills_dirs\" is longer than 4096");
	c = in;
	c.protect = rel;
	REFUSED(conf_policyd_enc, &c, "protect must be absolute");
	refused_edit(MSG_CONF_POLICYD, "protect",
	    vstrs(SKILLS_DIRS_MAX + 5, "/p"), "\"protect\" has more than 36");
	c = in;
	c.sys_paths = rel;
	REFUSED(conf_policyd_enc, &c, "sys_paths must be absolute");
	refused_edit(MSG_CONF_POLICYD, "sys_paths",
	    vstrs(SYS_PATHS_MAX + 1, "/u"), "\"sys_paths\" has more than 64");
	c = in;
	c.policy_dir = "policy.d";
	REFUSED(conf_policyd_enc, &c, "\"policy_dir\" must be absolute");
	c.policy_dir = "";
	REFUSED(conf_policyd_enc, &c, "\"policy_dir\" must be absolute");
	refused_edit(MSG_CONF_POLICYD, "policy_dir",
	    vlong(PATH_MAX_LEN + 1, '/'), "\"policy_dir\" longer than 4096");

	/* Each limit: its minimum and maximum hold, one past them does not. */
	for (i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
		c = in;
		f = (uint64_t *)((char *)&c.limits + lim[i].off);
		c.limits.timeout_ms = c.limits.max_timeout_ms = 1000;
		*f = lim[i].min;
		if (lim[i].min == 1 && strstr(lim[i].k, "timeout") != NULL)
			c.limits.timeout_ms = c.limits.max_timeout_ms = 1;
		ACCEPTED(conf_policyd_enc, &c);
		*f = lim[i].min - 1;
		snprintf(needle, sizeof(needle), "limit \"%s\" below %llu",
		    lim[i].k, (unsigned long long)lim[i].min);
		REFUSED(conf_policyd_enc, &c, needle);
		c.limits.timeout_ms = c.limits.max_timeout_ms = 1000;
		*f = lim[i].max;
		if (strstr(lim[i].k, "timeout") != NULL)
			c.limits.timeout_ms = c.limits.max_timeout_ms =
			    lim[i].max;
		ACCEPTED(conf_policyd_enc, &c);
		*f = lim[i].max + 1;
		snprintf(needle, sizeof(needle), "\"%s\" above", lim[i].k);
		REFUSED(conf_policyd_enc, &c, needle);
	}
	c = in;
	c.limits.timeout_ms = c.limits.max_timeout_ms + 1;
	REFUSED(conf_policyd_enc, &c, "timeout_ms exceeds max_timeout_ms");
	c.limits.timeout_ms = c.limits.max_timeout_ms;
	ACCEPTED(conf_policyd_enc, &c);
}

static void
test_conf_auditd(void **state)
{
	static const char *const kw[] = {"flush", "max_log_file_action",
	    "disk_full_action", "disk_error_action"};
	struct conf_auditd in = sample_conf_auditd(), out, c;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	char needle[64];
	size_t i;

	(void)state;
	enc_init(&m);
	conf_auditd_enc(&m, &in);
	open_msg(&m, &d, MSG_CONF_AUDITD);
	assert_int_equal(conf_auditd_dec(&d, &out, &e), 0);
	assert_int_equal(out.uid, 64292);
	assert_int_equal(out.gid, 64293);
	assert_string_equal(out.path, "/var/log/skillbroker/audit.jsonl");
	assert_string_equal(out.head, "/var/lib/skillbroker/audit.head");
	assert_int_equal(out.set.flush, AUDIT_FLUSH_DATA);
	assert_int_equal(out.set.freq, 20);
	assert_int_equal(out.set.max_log_file, 8 * 1024 * 1024);
	assert_int_equal(out.set.max_log_file_action, AUDIT_MAX_KEEP_LOGS);
	assert_int_equal(out.set.num_logs, 7);
	assert_int_equal(out.set.disk_full_action, AUDIT_FAIL_ROTATE);
	assert_int_equal(out.set.disk_error_action, AUDIT_FAIL_HALT);
	conf_auditd_free(&out);
	close_msg(&m, &d);

	c = in;
	c.uid = 0;
	REFUSED(conf_auditd_enc, &c, "\"uid\" is root");
	c = in;
	c.gid = 0;
	REFUSED(conf_auditd_enc, &c, "\"gid\" is root");
	c = in;
	c.path = "audit.jsonl";
	REFUSED(conf_auditd_enc, &c, "\"path\" must be absolute");
	c = in;
	c.head = "";
	REFUSED(conf_auditd_enc, &c, "\"head\" must be absolute");
	refused_edit(MSG_CONF_AUDITD, "head", vlong(PATH_MAX_LEN + 1, '/'),
	    "\"head\" longer than 4096");
	for (i = 0; i < sizeof(kw) / sizeof(kw[0]); i++) {
		snprintf(
		    needle, sizeof(needle), "\"%s\": unknown keyword", kw[i]);
		refused_edit(MSG_CONF_AUDITD, kw[i], vstr("fsync"), needle);
		snprintf(
		    needle, sizeof(needle), "\"%s\" longer than 32", kw[i]);
		refused_edit(MSG_CONF_AUDITD, kw[i], vlong(33, 'a'), needle);
	}
	c = in;
	c.set.freq = 0;
	REFUSED(conf_auditd_enc, &c, "out of range");
	c.set.freq = AUDIT_FREQ_MAX + 1;
	REFUSED(conf_auditd_enc, &c, "\"freq\" above");
	c.set.freq = AUDIT_FREQ_MAX;
	ACCEPTED(conf_auditd_enc, &c);
	c = in;
	c.set.num_logs = 1;
	REFUSED(conf_auditd_enc, &c, "out of range");
	c.set.num_logs = AUDIT_NUM_LOGS_MAX + 1;
	REFUSED(conf_auditd_enc, &c, "\"num_logs\" above");
	c.set.num_logs = 2;
	ACCEPTED(conf_auditd_enc, &c);
	c = in;
	c.set.max_log_file = AUDIT_MAX_LOG_FILE_MAX + 1;
	REFUSED(conf_auditd_enc, &c, "\"max_log_file\" above");
	c.set.max_log_file = 0; /* no size limit */
	ACCEPTED(conf_auditd_enc, &c);
}

static void
test_authz_req(void **state)
{
	struct msg_authz_req in = sample_authz_req(), out, r;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_authz_req_enc(&m, &in);
	open_msg(&m, &d, MSG_AUTHZ_REQ);
	assert_int_equal(msg_authz_req_dec(&d, &out, &e), 0);
	assert_int_equal(out.ref, 9);
	assert_int_equal(out.uid, 1000);
	assert_int_equal(out.gid, 1001);
	assert_int_equal(out.pid, 4242);
	assert_string_equal(out.skill, "hello");
	assert_string_equal(out.command, "greet");
	assert_string_equal(out.session, "s1");
	assert_string_equal(out.phase, "planning");
	assert_int_equal(out.nargs, 3);
	assert_string_equal(out.args[0], "--flag");
	assert_string_equal(out.args[1], "value with spaces");
	assert_string_equal(out.args[2], "");
	assert_null(out.args[3]);
	assert_int_equal(out.nenv, 2);
	assert_string_equal(out.env[0], "LANG=C.UTF-8");
	assert_string_equal(out.env[1], "TZ=UTC");
	assert_int_equal(out.timeout_ms, 5000);
	assert_int_equal(out.queued_ms, 250);
	assert_int_equal(out.dry_run, 0);
	assert_int_equal(out.approved, 1);
	msg_authz_req_free(&out);
	close_msg(&m, &d);

	/* A dry run decides without asking anyone: never approved. */
	r = in;
	r.dry_run = 1;
	REFUSED(msg_authz_req_enc, &r, "a dry run is never approved");
	r.approved = 0;
	ACCEPTED(msg_authz_req_enc, &r);

	r = in;
	r.pid = -1;
	REFUSED(msg_authz_req_enc, &r, "\"pid\" out of range");
	r.pid = (int64_t)INT32_MAX + 1;
	REFUSED(msg_authz_req_enc, &r, "\"pid\" out of range");
	r.pid = 0; /* not known */
	ACCEPTED(msg_authz_req_enc, &r);
	r = in;
	r.uid = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_authz_req_enc, &r, "\"uid\" above");
	r = in;
	r.gid = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_authz_req_enc, &r, "\"gid\" above");
	r = in;
	r.timeout_ms = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_authz_req_enc, &r, "\"timeout_ms\" above");
	refused_edit(MSG_AUTHZ_REQ, "skill", vlong(NAME_MAX_LEN + 1, 's'),
	    "\"skill\" longer than 64");
	accepted_edit(MSG_AUTHZ_REQ, "skill", vlong(NAME_MAX_LEN, 's'));
	refused_edit(MSG_AUTHZ_REQ, "command", vlong(COMMAND_MAX_LEN + 1, 'c'),
	    "\"command\" longer than 128");
	refused_edit(MSG_AUTHZ_REQ, "session", vlong(SESSION_MAX_LEN + 1, 's'),
	    "\"session\" longer than 64");
	refused_edit(
	    MSG_AUTHZ_REQ, "phase", vlong(33, 'p'), "\"phase\" longer than 32");
	refused_edit(MSG_AUTHZ_REQ, "args", vstrs(ARGS_MAX + 1, "a"),
	    "\"args\" has more than 256 items");
	accepted_edit(MSG_AUTHZ_REQ, "args", vstrs(ARGS_MAX, "a"));
	refused_edit(MSG_AUTHZ_REQ, "args/1", vlong(ARG_MAX_LEN + 1, 'a'),
	    "an item of \"args\" is longer than 4096");
	refused_edit(MSG_AUTHZ_REQ, "env", vstrs(ENV_MAX + 1, "A=B"),
	    "\"env\" has more than 64 items");
	refused_edit(MSG_AUTHZ_REQ, "env/0", vlong(ARG_MAX_LEN + 1, 'e'),
	    "an item of \"env\" is longer than 4096");
}

static void
test_authz_ans(void **state)
{
	struct msg_authz_ans in = sample_authz_ans(), out, a;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_authz_ans_enc(&m, &in);
	open_msg(&m, &d, MSG_AUTHZ_ANS);
	assert_int_equal(msg_authz_ans_dec(&d, &out, &e), 0);
	assert_int_equal(out.ref, 10);
	assert_int_equal(out.err, ERR_NONE);
	assert_string_equal(out.reason, "allowed by rule 2");
	assert_int_equal(out.nrules, 2);
	assert_string_equal(out.rules[0], "allow:hello");
	assert_string_equal(out.rules[1], "phase:planning");
	assert_string_equal(out.grant_id, SAMPLE_GID);
	assert_string_equal(out.command, "greet");
	assert_int_equal(out.timeout_ms, 30000);
	assert_int_equal(out.output_bytes, 65536);
	/* The effective map comes back as the same msgpack bytes. */
	assert_int_equal(out.effective_len, SAMPLE_EFFECTIVE_LEN);
	assert_memory_equal(
	    out.effective, SAMPLE_EFFECTIVE, SAMPLE_EFFECTIVE_LEN);
	msg_authz_ans_free(&out);
	close_msg(&m, &d);

	/* A denial, nothing optional set: "" and {} go over. */
	memset(&a, 0, sizeof(a));
	a.ref = 1;
	a.err = ERR_UNKNOWN_SKILL;
	a.reason = "no such skill";
	enc_init(&m);
	msg_authz_ans_enc(&m, &a);
	open_msg(&m, &d, MSG_AUTHZ_ANS);
	assert_int_equal(msg_authz_ans_dec(&d, &out, &e), 0);
	assert_int_equal(out.err, ERR_UNKNOWN_SKILL);
	assert_string_equal(out.grant_id, "");
	assert_string_equal(out.command, "");
	assert_int_equal(out.nrules, 0);
	assert_int_equal(out.effective_len, 1);
	assert_memory_equal(out.effective, "\x80", 1);
	msg_authz_ans_free(&out);
	close_msg(&m, &d);

	/* Allowed without a grant: a dry run. */
	a = in;
	a.grant_id = "";
	ACCEPTED(msg_authz_ans_enc, &a);
	/* An ask: approval_denied to whoever does not ask, with what would
	 * be allowed, and never a grant. */
	a.err = ERR_APPROVAL_DENIED;
	a.ask = 1;
	enc_init(&m);
	msg_authz_ans_enc(&m, &a);
	open_msg(&m, &d, MSG_AUTHZ_ANS);
	assert_int_equal(msg_authz_ans_dec(&d, &out, &e), 0);
	assert_int_equal(out.ask, 1);
	assert_int_equal(out.err, ERR_APPROVAL_DENIED);
	assert_string_equal(out.grant_id, "");
	assert_int_equal(out.effective_len, SAMPLE_EFFECTIVE_LEN);
	msg_authz_ans_free(&out);
	close_msg(&m, &d);
	a.err = ERR_NONE;
	REFUSED(msg_authz_ans_enc, &a,
	    "an ask is approval_denied and carries no grant");
	a.err = ERR_PERMISSION_DENIED;
	REFUSED(msg_authz_ans_enc, &a,
	    "an ask is approval_denied and carries no grant");
	a = in;
	a.ask = 1;
	a.err = ERR_APPROVAL_DENIED;
	REFUSED(msg_authz_ans_enc, &a, "a grant id without a grant");
	/* A grant id travels only with an allowed answer. */
	a = in;
	a.err = ERR_PERMISSION_DENIED;
	REFUSED(msg_authz_ans_enc, &a, "a grant id without a grant");
	a = in;
	a.grant_id = "0123456789ABCDEF0123456789ABCDEF";
	REFUSED(msg_authz_ans_enc, &a, "a grant id without a grant");
	a.grant_id = "0123456789abcdef0123456789abcde";
	REFUSED(msg_authz_ans_enc, &a, "a grant id without a grant");
	a.grant_id = "0123456789abcdef0123456789abcdeg";
	REFUSED(msg_authz_ans_enc, &a, "a grant id without a grant");
	a.grant_id = "../../../../../../../../etc/pass";
	REFUSED(msg_authz_ans_enc, &a, "a grant id without a grant");
	a.grant_id = SAMPLE_GID "0";
	REFUSED(msg_authz_ans_enc, &a, "\"grant_id\" longer than 32");
	a = in;
	a.grant_id = "";
	a.err = ERR__COUNT;
	REFUSED(msg_authz_ans_enc, &a, "\"err\" above");
	a.err = ERR__COUNT - 1;
	ACCEPTED(msg_authz_ans_enc, &a);
	a = in;
	a.timeout_ms = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_authz_ans_enc, &a, "\"timeout_ms\" above");
	a = in;
	a.output_bytes = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_authz_ans_enc, &a, "\"output_bytes\" above");
	refused_edit(MSG_AUTHZ_ANS, "reason", vlong(REASON_MAX_LEN + 1, 'r'),
	    "\"reason\" longer than 512");
	accepted_edit(MSG_AUTHZ_ANS, "reason", vlong(REASON_MAX_LEN, 'r'));
	refused_edit(MSG_AUTHZ_ANS, "command", vlong(COMMAND_MAX_LEN + 1, 'c'),
	    "\"command\" longer than 128");
	refused_edit(MSG_AUTHZ_ANS, "rules", vstrs(65, "r"),
	    "\"rules\" has more than 64 items");
	refused_edit(MSG_AUTHZ_ANS, "rules/0", vlong(513, 'r'),
	    "an item of \"rules\" is longer than 512");
	/* The effective map is bounded in bytes. */
	{
		struct mp_enc eff;
		char *big = calloc(1, 64 * 1024);

		assert_non_null(big);
		enc_init(&eff);
		enc_map_open(&eff);
		enc_kbin(&eff, "x", big, 64 * 1024);
		enc_map_close(&eff);
		a = in;
		a.effective = (uint8_t *)eff.sb.data;
		a.effective_len = eff.sb.size;
		REFUSED(msg_authz_ans_enc, &a, "\"effective\" too large");
		enc_free(&eff);
		free(big);
	}
}

static void
test_skills_req(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint64_t ref = 0;

	(void)state;
	enc_init(&m);
	msg_skills_req_enc(&m, UINT64_MAX);
	open_msg(&m, &d, MSG_SKILLS_REQ);
	assert_int_equal(msg_skills_req_dec(&d, &ref, &e), 0);
	assert_true(ref == UINT64_MAX);
	close_msg(&m, &d);
	refused_edit(MSG_SKILLS_REQ, "ref", vint(-1),
	    "\"ref\" must be a non-negative integer");
}

static void
test_skills_ans(void **state)
{
	struct msg_skills_ans in = sample_skills_ans(), out;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_skills_ans_enc(&m, &in);
	open_msg(&m, &d, MSG_SKILLS_ANS);
	assert_int_equal(msg_skills_ans_dec(&d, &out, &e), 0);
	assert_int_equal(out.ref, 11);
	assert_int_equal(out.truncated, 1);
	assert_int_equal(out.nskills, 2);
	assert_string_equal(out.skills[0].name, "hello");
	assert_string_equal(
	    out.skills[0].description, "Says hello, in UTF-8: h\xc3\xa9llo");
	assert_int_equal(out.skills[0].valid, 1);
	assert_string_equal(out.skills[0].error, "");
	assert_int_equal(out.skills[0].ncommands, 2);
	assert_string_equal(out.skills[0].commands[0], "greet");
	assert_string_equal(out.skills[0].commands[1], "wave");
	assert_int_equal(out.skills[0].nwarnings, 1);
	assert_string_equal(out.skills[0].warnings[0],
	    "SKILL.md:4: allowed-tools \"Task\": no mapping");
	assert_int_equal(out.skills[1].nwarnings, 0);
	assert_string_equal(out.skills[1].name, "broken");
	assert_string_equal(out.skills[1].description, "");
	assert_int_equal(out.skills[1].valid, 0);
	assert_string_equal(out.skills[1].error, "SKILL.md: no name");
	assert_int_equal(out.skills[1].ncommands, 0);
	msg_skills_ans_free(&out);
	assert_null(out.skills);
	close_msg(&m, &d);

	refused_edit(MSG_SKILLS_ANS, "skills", vdup(SKILLS_LIST_MAX + 1),
	    "\"skills\" must be an array of at most 1024");
	accepted_edit(MSG_SKILLS_ANS, "skills", vdup(SKILLS_LIST_MAX));
	refused_edit(
	    MSG_SKILLS_ANS, "skills/1", vstr("hello"), "a skill is not a map");
	refused_edit(MSG_SKILLS_ANS, "skills/0/name",
	    vlong(NAME_MAX_LEN + 1, 'n'), "\"name\" longer than 64");
	refused_edit(MSG_SKILLS_ANS, "skills/0/description",
	    vlong(SKILL_DESC_MAX + 1, 'd'), "\"description\" longer than 4096");
	accepted_edit(
	    MSG_SKILLS_ANS, "skills/0/description", vlong(SKILL_DESC_MAX, 'd'));
	refused_edit(MSG_SKILLS_ANS, "skills/1/error",
	    vlong(REASON_MAX_LEN + 1, 'e'), "\"error\" longer than 512");
	refused_edit(MSG_SKILLS_ANS, "skills/0/commands",
	    vstrs(COMMANDS_MAX + 1, "c"),
	    "\"commands\" has more than 64 items");
	refused_edit(MSG_SKILLS_ANS, "skills/0/commands/0",
	    vlong(PATH_MAX_LEN + 1, 'c'),
	    "an item of \"commands\" is longer than 4096");
	refused_edit(MSG_SKILLS_ANS, "skills/0/warnings",
	    vstrs(SKILL_WARNINGS_MAX + 1, "w"),
	    "\"warnings\" has more than 16 items");
	accepted_edit(MSG_SKILLS_ANS, "skills/0/warnings",
	    vstrs(SKILL_WARNINGS_MAX, "w"));
	refused_edit(MSG_SKILLS_ANS, "skills/0/warnings/0",
	    vlong(SKILL_WARNING_MAX + 1, 'w'),
	    "an item of \"warnings\" is longer than 512");
	refused_edit(MSG_SKILLS_ANS, "skills/0/warnings/0", vuint(1),
	    "\"warnings\" must be an array of strings");
	/* The second skill is bad: the first one decoded is freed. */
	refused_edit(MSG_SKILLS_ANS, "skills/1/valid", vuint(1),
	    "\"valid\" must be a boolean");
}

static void
test_skill_info_req(void **state)
{
	struct msg_skill_info_req in = sample_skill_info_req(), out, r;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_skill_info_req_enc(&m, &in);
	open_msg(&m, &d, MSG_SKILL_INFO_REQ);
	assert_int_equal(msg_skill_info_req_dec(&d, &out, &e), 0);
	assert_int_equal(out.ref, 18);
	assert_int_equal(out.uid, 1000);
	assert_int_equal(out.gid, 1001);
	assert_string_equal(out.skill, "notes");
	assert_int_equal(out.references, 1);
	assert_int_equal(out.max_bytes, 65280);
	msg_skill_info_req_free(&out);
	assert_null(out.skill);
	close_msg(&m, &d);

	/* The budget: at least SKILL_INFO_MIN_BYTES, at most a frame. */
	r = in;
	r.max_bytes = SKILL_INFO_MIN_BYTES - 1;
	REFUSED(msg_skill_info_req_enc, &r, "max_bytes under 512");
	r.max_bytes = SKILL_INFO_MIN_BYTES;
	ACCEPTED(msg_skill_info_req_enc, &r);
	r.max_bytes = 1024 * 1024;
	ACCEPTED(msg_skill_info_req_enc, &r);
	r.max_bytes = 1024 * 1024 + 1;
	REFUSED(msg_skill_info_req_enc, &r, "\"max_bytes\" above");
	r = in;
	r.skill = "";
	REFUSED(msg_skill_info_req_enc, &r, "an empty skill name");
	r.uid = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_skill_info_req_enc, &r, "\"uid\" above");
	refused_edit(MSG_SKILL_INFO_REQ, "skill", vlong(NAME_MAX_LEN + 1, 's'),
	    "\"skill\" longer than 64");
	refused_edit(MSG_SKILL_INFO_REQ, "references", vuint(1),
	    "\"references\" must be a boolean");
}

/* The sample answer with one bad reference or command field. */
static void
refused_info(const char *path, struct val v, const char *needle)
{
	refused_edit(MSG_SKILL_INFO_ANS, path, v, needle);
}

static void
test_skill_info_ans(void **state)
{
	static const char *const outside[] = {"references/", "references/.",
	    "references/..", "references/../SKILL.md", "references/a/b",
	    "referencesx/a", "scripts/run.sh", "/etc/passwd", "references"};
	struct msg_skill_info_ans in = sample_skill_info_ans(), out, a;
	struct msg_info_ref refs[SKILL_INFO_REFS_MAX + 1];
	char names[SKILL_INFO_REFS_MAX + 1][32];
	struct mp_enc m, fm;
	struct mp_doc d;
	struct error e;
	size_t i;

	(void)state;
	enc_init(&m);
	msg_skill_info_ans_enc(&m, &in);
	open_msg(&m, &d, MSG_SKILL_INFO_ANS);
	assert_int_equal(msg_skill_info_ans_dec(&d, &out, &e), 0);
	assert_int_equal(out.ref, 19);
	assert_int_equal(out.err, ERR_NONE);
	assert_string_equal(out.name, "notes");
	assert_string_equal(out.body, "# notes\n\nWrite one note per call.\n");
	assert_int_equal(out.frontmatter_len, SAMPLE_FRONTMATTER_LEN);
	assert_memory_equal(
	    out.frontmatter, SAMPLE_FRONTMATTER, SAMPLE_FRONTMATTER_LEN);
	assert_int_equal(out.permissions_len, SAMPLE_EFFECTIVE_LEN);
	assert_int_equal(out.ncommands, 2);
	assert_string_equal(out.commands[0].name, "save");
	assert_string_equal(
	    out.commands[0].description, "Saves stdin as a note");
	assert_int_equal(out.commands[0].allowed, 1);
	assert_int_equal(out.commands[0].ask, 0);
	assert_int_equal(out.commands[1].allowed, 0);
	assert_int_equal(out.commands[1].ask, 1);
	assert_int_equal(out.nrefs, 2);
	assert_string_equal(out.refs[0].path, "references/format.md");
	assert_int_equal(out.refs[0].size, 13);
	assert_string_equal(out.refs[0].text, "h\xc3\xa9llo notes\n");
	assert_int_equal(out.refs[0].omitted, INFO_OMIT_NONE);
	assert_string_equal(out.refs[1].sha256, "");
	assert_int_equal(out.refs[1].omitted, INFO_OMIT_NOT_TEXT);
	assert_int_equal(out.refs_truncated, 1);
	msg_skill_info_ans_free(&out);
	assert_null(out.refs);
	close_msg(&m, &d);

	/* An error: only its message counts, and it must have one. */
	memset(&a, 0, sizeof(a));
	a.ref = 2;
	a.err = ERR_UNKNOWN_SKILL;
	a.message = "no skill named \"x\" that this caller may run";
	ACCEPTED(msg_skill_info_ans_enc, &a);
	a.message = "";
	REFUSED(msg_skill_info_ans_enc, &a, "an error without a message");
	a.err = ERR__COUNT;
	REFUSED(msg_skill_info_ans_enc, &a, "\"err\" above");
	a = in;
	a.name = "";
	REFUSED(msg_skill_info_ans_enc, &a, "a skill without a name");
	a.name = "../x";
	REFUSED(msg_skill_info_ans_enc, &a, "a skill without a name");

	/* Each reference is one file directly in references/. */
	for (i = 0; i < sizeof(outside) / sizeof(outside[0]); i++)
		refused_info("references/0/path", vstr(outside[i]),
		    "a reference path is not references/NAME");
	refused_info("references/1/path",
	    vlong(strlen("references/") + SKILL_INFO_NAME_MAX + 1, 'r'),
	    "\"path\" longer than 266");
	refused_info("references/1/path", vstr("references/format.md"),
	    "references not sorted by path");
	refused_info("references/0/path", vstr("references/zz"),
	    "references not sorted by path");
	accepted_edit(MSG_SKILL_INFO_ANS, "references/0/path",
	    vstr("references/a file, with spaces..md"));
	refused_info("references/0/sha256", vlong(64, 'A'), "malformed sha256");
	refused_info("references/0/sha256", vlong(63, 'a'), "malformed sha256");
	refused_info(
	    "references/0/sha256", vlong(65, 'a'), "\"sha256\" longer than 64");
	refused_info("references/0/size_bytes", vint(-1), "\"size_bytes\"");
	/* A text only with nothing omitted, and never past the size. */
	refused_info("references/0/text_omitted", vuint(INFO_OMIT_REPLY_FULL),
	    "a reference text it cannot have");
	refused_info("references/0/text_omitted", vuint(INFO_OMIT__COUNT),
	    "\"text_omitted\" above");
	refused_info("references/0/size_bytes", vuint(12),
	    "a reference text it cannot have");
	refused_info("references/0/text", vlong(SKILL_INFO_TEXT_MAX + 1, 't'),
	    "\"text\" longer than 65536");
	refused_info(
	    "references/1", vstr("references/x"), "a reference is not a map");
	a = in;
	for (i = 0; i <= SKILL_INFO_REFS_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "references/%04zu", i);
		refs[i] = in.refs[1];
		refs[i].path = names[i];
	}
	a.refs = refs;
	a.nrefs = SKILL_INFO_REFS_MAX;
	ACCEPTED(msg_skill_info_ans_enc, &a);
	a.nrefs = SKILL_INFO_REFS_MAX + 1;
	REFUSED(msg_skill_info_ans_enc, &a,
	    "\"references\" must be an array of at most 256");

	/* Commands: plain names, bounded. */
	refused_info(
	    "commands/0/name", vstr("../run"), "malformed command name");
	refused_info("commands/0/description", vlong(SKILL_DESC_MAX + 1, 'd'),
	    "\"description\" longer than 4096");
	refused_info("commands", vdup(COMMANDS_MAX + 1),
	    "\"commands\" must be an array of at most 64");
	refused_info("commands/1", vstr("list"), "a command is not a map");
	refused_info("body", vlong(SKILL_INFO_BODY_MAX + 1, 'b'),
	    "\"body\" longer than 262144");
	accepted_edit(
	    MSG_SKILL_INFO_ANS, "body", vlong(SKILL_INFO_BODY_MAX, 'b'));

	/* The frontmatter: a map of strings, arrays and maps only. */
	refused_info("frontmatter/name", vuint(1),
	    "\"frontmatter\" holds more than strings");
	refused_info("frontmatter/metadata/tags", vmixed(),
	    "\"frontmatter\" holds more than strings");
	refused_info("frontmatter/metadata", vbool(1),
	    "\"frontmatter\" holds more than strings");
	refused_info("frontmatter/metadata", vmap(),
	    "\"frontmatter\" holds more than strings");
	refused_info("frontmatter/metadata", vnil(),
	    "\"frontmatter\" holds more than strings");
	accepted_edit(MSG_SKILL_INFO_ANS, "frontmatter/extra", vstrs(2, "x"));
	refused_info(
	    "frontmatter", vstrs(1, "x"), "\"frontmatter\" must be a map");
	refused_info("permissions", vstr("x"), "\"permissions\" must be a map");
	enc_init(&fm);
	enc_map_open(&fm);
	enc_key(&fm, "x");
	{
		char *big = calloc(1, SKILL_INFO_FM_MAX);

		assert_non_null(big);
		memset(big, 'x', SKILL_INFO_FM_MAX);
		enc_strn(&fm, big, SKILL_INFO_FM_MAX);
		free(big);
	}
	enc_map_close(&fm);
	a = in;
	a.frontmatter = (uint8_t *)fm.sb.data;
	a.frontmatter_len = fm.sb.size;
	REFUSED(msg_skill_info_ans_enc, &a, "\"frontmatter\" too large");
	enc_free(&fm);
	assert_string_equal(info_omit_name(INFO_OMIT_REPLY_FULL), "reply_full");
	assert_string_equal(info_omit_name(INFO_OMIT_NONE), "");
	assert_string_equal(info_omit_name(INFO_OMIT__COUNT), "");
}

static void
test_reload(void **state)
{
	struct msg_reload_req rq = sample_reload_req(), rq2;
	struct msg_reload_ans ra = sample_reload_ans(), ra2;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_reload_req_enc(&m, &rq);
	open_msg(&m, &d, MSG_RELOAD_REQ);
	assert_int_equal(msg_reload_req_dec(&d, &rq2, &e), 0);
	assert_int_equal(rq2.ref, 12);
	assert_int_equal(rq2.uid, 0);
	assert_int_equal(rq2.gid, 4);
	close_msg(&m, &d);
	rq2 = rq;
	rq2.uid = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_reload_req_enc, &rq2, "\"uid\" above");
	rq2 = rq;
	rq2.gid = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_reload_req_enc, &rq2, "\"gid\" above");

	enc_init(&m);
	msg_reload_ans_enc(&m, &ra);
	open_msg(&m, &d, MSG_RELOAD_ANS);
	assert_int_equal(msg_reload_ans_dec(&d, &ra2, &e), 0);
	assert_int_equal(ra2.ref, 13);
	assert_int_equal(ra2.err, ERR_BAD_REQUEST);
	assert_string_equal(ra2.message, "10-base.yaml:3: unknown key");
	msg_reload_ans_free(&ra2);
	close_msg(&m, &d);
	ra2 = ra;
	ra2.err = ERR__COUNT;
	REFUSED(msg_reload_ans_enc, &ra2, "\"err\" above");
	refused_edit(MSG_RELOAD_ANS, "message", vlong(REASON_MAX_LEN + 1, 'm'),
	    "\"message\" longer than 512");
}

static void
test_admins(void **state)
{
	struct msg_admins a = sample_admins(), b;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_admins_enc(&m, &a);
	open_msg(&m, &d, MSG_ADMINS);
	assert_int_equal(msg_admins_dec(&d, &b, &e), 0);
	assert_int_equal(b.nuids, 3);
	assert_int_equal(b.uids[0], 0);
	assert_int_equal(b.uids[2], 4294967295ULL);
	assert_int_equal(b.ngids, 1);
	assert_int_equal(b.gids[0], 27);
	msg_admins_free(&b);
	assert_null(b.uids);
	close_msg(&m, &d);
	/* Nobody is an admin: both lists empty. */
	b = a;
	b.nuids = b.ngids = 0;
	ACCEPTED(msg_admins_enc, &b);
	refused_edit(MSG_ADMINS, "uids/0", vuint((uint64_t)UINT32_MAX + 1),
	    "is not an integer in 0..4294967295");
	refused_edit(MSG_ADMINS, "gids/0", vint(-1),
	    "is not an integer in 0..4294967295");
	refused_edit(MSG_ADMINS, "uids", vmixed(), "is not an integer");
	refused_edit(
	    MSG_ADMINS, "gids", vdup(ADMINS_MAX + 1), "more than 1024 items");
	accepted_edit(MSG_ADMINS, "gids", vdup(ADMINS_MAX));
}

/* The fields of sample_grant(), as decoded. */
static void
assert_sample_grant(const struct grant *g)
{
	assert_string_equal(g->grant_id, SAMPLE_GID);
	assert_string_equal(g->skill, "hello");
	assert_string_equal(g->command, "greet");
	assert_string_equal(
	    g->skill_dir, "/usr/share/skillbroker/skills/hello");
	assert_string_equal(g->entry, "scripts/hello.sh");
	assert_int_equal(g->nargs, 3);
	assert_string_equal(g->args[0], "--flag");
	assert_string_equal(g->args[1], "value with spaces");
	assert_string_equal(g->args[2], "");
	assert_null(g->args[3]);
	assert_int_equal(g->nenv, 2);
	assert_string_equal(g->env[0], "LANG=C.UTF-8");
	assert_string_equal(g->env[1], "TZ=UTC");
	assert_int_equal(g->nperm[PERM_FS_READ], 1);
	assert_string_equal(g->perm[PERM_FS_READ][0], "/usr/share/dict");
	assert_int_equal(g->nperm[PERM_FS_WRITE], 2);
	assert_string_equal(g->perm[PERM_FS_WRITE][0], "/tmp/out");
	assert_string_equal(g->perm[PERM_FS_WRITE][1], "/var/tmp/x");
	assert_int_equal(g->nperm[PERM_NETWORK], 1);
	assert_string_equal(g->perm[PERM_NETWORK][0], "example.org:443");
	assert_int_equal(g->nperm[PERM_EXEC], 1);
	assert_string_equal(g->perm[PERM_EXEC][0], "/bin/sh");
	assert_int_equal(g->nperm[PERM_ENV], 2);
	assert_string_equal(g->perm[PERM_ENV][0], "LANG");
	assert_string_equal(g->perm[PERM_ENV][1], "TZ");
	assert_int_equal(g->principal_uid, 1000);
	assert_string_equal(g->session, "s1");
	assert_int_equal(g->nprograms, 2);
	assert_string_equal(g->programs[0], "/usr/bin/dash");
	assert_string_equal(
	    g->programs[1], "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
	assert_null(g->programs[2]);
	assert_string_equal(g->interpreter, "/usr/bin/dash");
	assert_int_equal(g->cwd, GRANT_CWD_SKILL);
	assert_int_equal(g->timeout_ms, 30000);
	assert_int_equal(g->output_bytes, 1 << 20);
	assert_int_equal(g->memory_mb, 256);
	assert_int_equal(g->pids, 64);
	assert_int_equal(g->fsize_mb, 16);
	assert_int_equal(g->nofile, 128);
}

/* What grant_dec and spec_dec both check, through the encoder enc. */
static void
check_grant_fields(void (*enc)(struct mp_enc *, const struct grant *),
    struct grant in, enum msg_type t)
{
	static const char *const bad_ids[] = {
	    "0123456789abcdef0123456789abcde",  /* 31 */
	    "0123456789ABCDEF0123456789ABCDEF", /* upper case */
	    "0123456789abcdef0123456789abcdeg", /* not hex */
	    "../../../../../../../../etc/pass", /* 32, a path */
	    "",
	};
	static const char *const bad_entries[] = {
	    "/bin/sh", "", "../x", "scripts/../../x", ".."};
	static const char *const bad_dirs[] = {"skills/hello", "",
	    "/srv/skills/../etc", "/srv/./skills", "/srv/skills/.."};
	static const char *const bad_names[] = {
	    "", ".", "..", "a/b", "../x", "a b", "caf\xc3\xa9"};
	static const struct {
		const char *k;
		uint64_t max;
	} nums[] = {
	    {"principal_uid", UINT32_MAX},
	    {"timeout_ms", 86400000},
	    {"output_bytes", 64 * 1024 * 1024},
	    {"memory_mb", 1024 * 1024},
	    {"pids", 65536},
	    {"fsize_mb", 1024 * 1024},
	    {"nofile", 65536},
	};
	struct grant g;
	char needle[80], path[32];
	size_t i;

	for (i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		g = in;
		g.grant_id = (char *)bad_ids[i];
		REFUSED(enc, &g, "malformed grant");
	}
	g = in;
	g.grant_id = SAMPLE_GID "0";
	REFUSED(enc, &g, "\"grant_id\" longer than 32");
	for (i = 0; i < sizeof(bad_entries) / sizeof(bad_entries[0]); i++) {
		g = in;
		g.entry = (char *)bad_entries[i];
		REFUSED(enc, &g, "malformed grant");
	}
	for (i = 0; i < sizeof(bad_dirs) / sizeof(bad_dirs[0]); i++) {
		g = in;
		g.skill_dir = (char *)bad_dirs[i];
		REFUSED(enc, &g, "malformed grant");
	}
	/* The skill and the session name directories of the master's. */
	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
		g = in;
		g.skill = (char *)bad_names[i];
		REFUSED(enc, &g, "malformed grant");
		g = in;
		g.session = (char *)bad_names[i];
		REFUSED(enc, &g, "malformed grant");
	}
	/* A grant from another protocol version. */
	refused_edit(t, "v", vuint(PROTO_VERSION + 1), "malformed grant");
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		snprintf(needle, sizeof(needle), "\"%s\" above", nums[i].k);
		refused_edit(t, nums[i].k, vuint(nums[i].max + 1), needle);
		accepted_edit(t, nums[i].k, vuint(nums[i].max));
	}
	refused_edit(t, "skill", vlong(NAME_MAX_LEN + 1, 's'),
	    "\"skill\" longer than 64");
	refused_edit(t, "command", vlong(COMMAND_MAX_LEN + 1, 'c'),
	    "\"command\" longer than 128");
	refused_edit(t, "session", vlong(SESSION_MAX_LEN + 1, 's'),
	    "\"session\" longer than 64");
	refused_edit(t, "skill_dir", vlong(PATH_MAX_LEN + 1, '/'),
	    "\"skill_dir\" longer than 4096");
	refused_edit(t, "entry", vlong(PATH_MAX_LEN + 1, 'e'),
	    "\"entry\" longer than 4096");
	refused_edit(t, "args", vstrs(ARGS_MAX + 1, "a"),
	    "\"args\" has more than 256 items");
	refused_edit(t, "env", vstrs(ENV_MAX + 1, "A=B"),
	    "\"env\" has more than 64 items");
	for (i = 0; i < PERM__COUNT; i++) {
		const char *k = perm_kind_name((enum perm_kind)i);

		snprintf(needle, sizeof(needle), "\"%s\" has more than 64", k);
		refused_edit(t, k, vstrs(PERM_ITEMS_MAX + 1, "p"), needle);
		accepted_edit(t, k, vstrs(PERM_ITEMS_MAX, "p"));
		snprintf(needle, sizeof(needle),
		    "an item of \"%s\" is longer than 1024", k);
		snprintf(path, sizeof(path), "%s/0", k);
		refused_edit(t, path, vlong(1025, 'p'), needle);
	}
}

/*
 * The programs a grant lets run are real host paths: absolute, one
 * spelling, never the skill's own (/skill), and bounded in number.
 */
static void
check_grant_programs(
    void (*enc)(struct mp_enc *, const struct grant *), struct grant in)
{
	static char *bad[][1] = {{"usr/bin/dash"}, {"/usr/bin/../bin/sh"},
	    {"/usr/bin/./sh"}, {"/usr//bin/sh"}, {"/skill/scripts/run.sh"},
	    {""}};
	struct grant g;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		g = in;
		g.programs = bad[i];
		g.nprograms = 1;
		REFUSED(enc, &g, "field \"programs\": absolute paths");
	}
	refused_edit(MSG_GRANT, "programs",
	    vstrs(GRANT_PROGRAMS_MAX + 1, "/usr/bin/sh"),
	    "\"programs\" has more than 96 items");
	accepted_edit(
	    MSG_GRANT, "programs", vstrs(GRANT_PROGRAMS_MAX, "/usr/bin/dash"));
	refused_edit(MSG_GRANT, "programs", vuint(1),
	    "\"programs\" must be an array of strings");
	/* The interpreter is one of the programs; none is "". */
	g = in;
	g.interpreter = "/usr/bin/python3";
	REFUSED(enc, &g, "the interpreter among them");
	g.interpreter = "";
	ACCEPTED(enc, &g);
	refused_edit(
	    MSG_GRANT, "cwd", vstr("home"), "field \"cwd\": unknown keyword");
	refused_edit(MSG_GRANT, "interpreter", vuint(1),
	    "\"interpreter\" must be a string");
}

static void
test_grant(void **state)
{
	static const char *const master_only[] = {"worker_uid", "worker_gid",
	    "root_dir", "sys_paths", "tmp_mb", "as_mb",
	    "net"}; /* also PREP's */
	struct grant in = sample_grant(), out;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	char needle[64];
	size_t i;

	(void)state;
	enc_init(&m);
	grant_enc(&m, &in);
	open_msg(&m, &d, MSG_GRANT);
	assert_int_equal(grant_dec(&d, &out, &e), 0);
	assert_sample_grant(&out);
	/* None of the master's fields came over. */
	assert_int_equal(out.worker_uid, 0);
	assert_int_equal(out.worker_gid, 0);
	assert_int_equal(out.as_mb, 0);
	assert_int_equal(out.net, NET_NONE);
	grant_free(&out);
	assert_null(out.grant_id);
	close_msg(&m, &d);

	/* policyd cannot pick a worker uid nor widen the root. */
	for (i = 0; i < sizeof(master_only) / sizeof(master_only[0]); i++) {
		snprintf(needle, sizeof(needle), "unknown field \"%s\"",
		    master_only[i]);
		refused_edit(MSG_GRANT, master_only[i], vuint(61000), needle);
	}
	/* A whole SPEC sent as a GRANT. */
	refused_edit(MSG_SPEC, "t", vuint(MSG_GRANT), "unknown field");
	refused_edit(MSG_GRANT, "lib_paths", vstrs(1, "/usr/lib"),
	    "unknown field \"lib_paths\"");
	check_grant_fields(grant_enc, in, MSG_GRANT);
	check_grant_programs(grant_enc, in);
}

/* PREP: the filters, and the root a worker builds before any grant. */
static void
test_prep(void **state)
{
	static char *rel[] = {"/usr", "lib"};
	struct msg_prep in = sample_prep(), out, p;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_prep_enc(&m, &in);
	open_msg(&m, &d, MSG_PREP);
	assert_int_equal(msg_prep_dec(&d, &out, &e), 0);
	assert_string_equal(out.root_dir, "/run/skillbroker/root");
	assert_int_equal(out.tmp_mb, 64);
	assert_int_equal(out.filter_len[0], 8);
	assert_int_equal(out.host_net, 1);
	assert_int_equal(out.nsys_paths, 3);
	assert_string_equal(out.sys_paths[0], "/usr");
	assert_string_equal(out.sys_paths[1], "/lib");
	assert_string_equal(out.sys_paths[2], "/etc/ssl");
	assert_null(out.sys_paths[3]);
	assert_int_equal(out.nlib_paths, 2);
	assert_string_equal(out.lib_paths[0], "/usr/lib/*-linux-gnu*");
	assert_string_equal(out.lib_paths[1], "/usr/local/lib");
	msg_prep_free(&out);
	assert_null(out.root_dir);
	assert_null(out.sys_paths);
	close_msg(&m, &d);

	/* The host paths every call sees: absolute, bounded, no dots. */
	p = in;
	p.sys_paths = rel;
	p.nsys_paths = 2;
	REFUSED(msg_prep_enc, &p, "\"sys_paths\" must be absolute");
	refused_edit(MSG_PREP, "sys_paths", vstrs(SYS_PATHS_MAX + 1, "/usr"),
	    "\"sys_paths\" has more than 64 items");
	accepted_edit(MSG_PREP, "sys_paths", vstrs(SYS_PATHS_MAX, "/usr"));
	refused_edit(MSG_PREP, "sys_paths", vdel(), "\"sys_paths\"");
	p = in;
	p.lib_paths = rel;
	p.nlib_paths = 2;
	REFUSED(msg_prep_enc, &p, "\"lib_paths\" must be absolute");
	refused_edit(MSG_PREP, "lib_paths", vstrs(1, "/usr/lib/../../etc"),
	    "\"lib_paths\" must be absolute");
	refused_edit(MSG_PREP, "lib_paths", vstrs(LIB_PATHS_MAX + 1, "/l"),
	    "\"lib_paths\" has more than 64 items");
	accepted_edit(MSG_PREP, "lib_paths", vstrs(0, "/l"));

	p = in;
	p.root_dir = "run/skillbroker/root";
	REFUSED(msg_prep_enc, &p, "\"root_dir\" must be absolute");
	p.root_dir = NULL;
	REFUSED(msg_prep_enc, &p, "\"root_dir\"");
	p = in;
	p.tmp_mb = 0;
	REFUSED(msg_prep_enc, &p, "\"tmp_mb\"");
	p.tmp_mb = 65537;
	REFUSED(msg_prep_enc, &p, "\"tmp_mb\" above");
	refused_edit(MSG_PREP, "root_dir", vlong(PATH_MAX_LEN + 1, '/'),
	    "\"root_dir\" longer than 4096");
	/* Whether the worker keeps the host's network: said, and a bool. */
	refused_edit(MSG_PREP, "host_net", vdel(), "\"host_net\"");
	refused_edit(MSG_PREP, "host_net", vint(1), "\"host_net\"");
	/* A grant's fields have no place before the grant. */
	refused_edit(MSG_PREP, "skill_dir", vstr("/srv/skills/x"),
	    "unknown field \"skill_dir\"");
}

static void
test_spec(void **state)
{
	struct grant in = sample_spec(), out, g;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	spec_enc(&m, &in);
	open_msg(&m, &d, MSG_SPEC);
	assert_int_equal(spec_dec(&d, &out, &e), 0);
	assert_sample_grant(&out);
	assert_int_equal(out.worker_uid, 61000);
	assert_int_equal(out.worker_gid, 61001);
	assert_int_equal(out.as_mb, 512);
	assert_int_equal(out.net, NET_HOST);
	grant_free(&out);
	close_msg(&m, &d);

	/* A worker never runs as root. */
	g = in;
	g.worker_uid = 0;
	REFUSED(spec_enc, &g, "malformed worker spec");
	g = in;
	g.worker_gid = 0;
	REFUSED(spec_enc, &g, "malformed worker spec");
	g = in;
	g.worker_uid = UINT32_MAX; /* (uid_t)-1 */
	REFUSED(spec_enc, &g, "\"worker_uid\" above");
	g = in;
	g.worker_gid = UINT32_MAX;
	REFUSED(spec_enc, &g, "\"worker_gid\" above");
	/* The root is PREP's, before any grant: no SPEC names one. */
	refused_edit(MSG_SPEC, "root_dir", vstr("/run/skillbroker/root"),
	    "unknown field \"root_dir\"");
	refused_edit(MSG_SPEC, "tmp_mb", vuint(64), "unknown field \"tmp_mb\"");
	/* No host path of a data dir: the master passes its mount. */
	refused_edit(MSG_SPEC, "data_dir", vstr("/var/lib/skillbroker/data"),
	    "unknown field \"data_dir\"");
	/* The host paths every call sees came with PREP: a warm worker
	 * has bound them already, so no SPEC names them. */
	refused_edit(MSG_SPEC, "sys_paths", vstrs(1, "/usr"),
	    "unknown field \"sys_paths\"");
	refused_edit(MSG_SPEC, "lib_paths", vstrs(1, "/usr/lib"),
	    "unknown field \"lib_paths\"");
	g = in;
	g.as_mb = 4 * 1024 * 1024 + 1;
	REFUSED(spec_enc, &g, "\"as_mb\" above");
	/* A GRANT is no SPEC: the master's fields are missing. */
	refused_edit(MSG_GRANT, "t", vuint(MSG_SPEC), "missing field");
	check_grant_fields(spec_enc, in, MSG_SPEC);
}

static void
test_grant_ack(void **state)
{
	struct msg_grant_ack in = sample_grant_ack(), out, a;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_grant_ack_enc(&m, &in);
	open_msg(&m, &d, MSG_GRANT_ACK);
	assert_int_equal(msg_grant_ack_dec(&d, &out, &e), 0);
	assert_string_equal(out.grant_id, SAMPLE_GID);
	assert_int_equal(out.err, ERR_OVERLOADED);
	assert_string_equal(out.message, "no worker uid free");
	msg_grant_ack_free(&out);
	close_msg(&m, &d);

	/* Held: no error, and no message goes over as "". */
	a = in;
	a.err = ERR_NONE;
	a.message = NULL;
	enc_init(&m);
	msg_grant_ack_enc(&m, &a);
	open_msg(&m, &d, MSG_GRANT_ACK);
	assert_int_equal(msg_grant_ack_dec(&d, &out, &e), 0);
	assert_int_equal(out.err, ERR_NONE);
	assert_string_equal(out.message, "");
	msg_grant_ack_free(&out);
	close_msg(&m, &d);

	a = in;
	a.err = ERR__COUNT;
	REFUSED(msg_grant_ack_enc, &a, "\"err\" above");
	refused_edit(MSG_GRANT_ACK, "message", vlong(REASON_MAX_LEN + 1, 'm'),
	    "\"message\" longer than 512");
	a = in;
	a.grant_id = "0123456789ABCDEF0123456789abcdef";
	REFUSED(msg_grant_ack_enc, &a, "malformed grant id");
	a.grant_id = "";
	REFUSED(msg_grant_ack_enc, &a, "malformed grant id");
	a.grant_id = SAMPLE_GID "0";
	REFUSED(msg_grant_ack_enc, &a, "\"grant_id\" longer than 32");
}

static void
test_policy_event(void **state)
{
	struct msg_policy_event in = sample_policy_event(), out, p;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_policy_event_enc(&m, &in);
	open_msg(&m, &d, MSG_POLICY_EVENT);
	assert_int_equal(msg_policy_event_dec(&d, &out, &e), 0);
	assert_int_equal(out.action, POLICY_RELOADED);
	assert_string_equal(out.message, "3 files");
	assert_int_equal(out.files, 3);
	assert_int_equal(out.rules, 14);
	assert_int_equal(out.skills, 2);
	msg_policy_event_free(&out);
	close_msg(&m, &d);

	p = in;
	p.action = POLICY__COUNT;
	REFUSED(msg_policy_event_enc, &p, "\"action\" above 2");
	p.action = POLICY_RELOAD_FAILED;
	p.message = NULL; /* goes over as "" */
	ACCEPTED(msg_policy_event_enc, &p);
	p = in;
	p.files = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_policy_event_enc, &p, "\"files\" above");
	p = in;
	p.rules = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_policy_event_enc, &p, "\"rules\" above");
	p = in;
	p.skills = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_policy_event_enc, &p, "\"skills\" above");
	refused_edit(MSG_POLICY_EVENT, "message",
	    vlong(REASON_MAX_LEN + 1, 'm'), "\"message\" longer than 512");
}

static void
test_run(void **state)
{
	struct msg_run in = sample_run(), out, r;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_run_enc(&m, &in);
	open_msg(&m, &d, MSG_RUN);
	assert_int_equal(msg_run_dec(&d, &out, &e), 0);
	assert_true(out.ref == UINT64_MAX);
	assert_string_equal(out.grant_id, SAMPLE_GID);
	msg_run_free(&out);
	close_msg(&m, &d);

	r = in;
	r.grant_id = "0123456789abcdef0123456789abcdeF";
	REFUSED(msg_run_enc, &r, "malformed grant id");
	r.grant_id = "0123456789abcdef";
	REFUSED(msg_run_enc, &r, "malformed grant id");
	r.grant_id = SAMPLE_GID "0";
	REFUSED(msg_run_enc, &r, "\"grant_id\" longer than 32");
}

static void
test_run_started(void **state)
{
	struct msg_run_started in = sample_run_started(), out, r;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_run_started_enc(&m, &in);
	open_msg(&m, &d, MSG_RUN_STARTED);
	assert_int_equal(msg_run_started_dec(&d, &out, &e), 0);
	assert_int_equal(out.ref, 14);
	assert_int_equal(out.pid, 31337);
	close_msg(&m, &d);

	r = in;
	r.pid = 0;
	REFUSED(msg_run_started_enc, &r, "\"pid\" out of range");
	r.pid = -5;
	REFUSED(msg_run_started_enc, &r, "\"pid\" out of range");
	r.pid = (int64_t)INT32_MAX + 1;
	REFUSED(msg_run_started_enc, &r, "\"pid\" out of range");
	r.pid = INT32_MAX;
	ACCEPTED(msg_run_started_enc, &r);
}

static void
test_run_exited(void **state)
{
	struct msg_run_exited in = sample_run_exited(), out, r;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_run_exited_enc(&m, &in);
	open_msg(&m, &d, MSG_RUN_EXITED);
	assert_int_equal(msg_run_exited_dec(&d, &out, &e), 0);
	assert_int_equal(out.ref, 15);
	assert_int_equal(out.started, 1);
	assert_int_equal(out.exit_code, -1);
	assert_int_equal(out.signal, 9);
	assert_int_equal(out.limit, LIMIT_TIMEOUT);
	assert_int_equal(out.duration_ms, 30001);
	assert_int_equal(out.cpu_ms, 12);
	assert_int_equal(out.max_rss_kb, 2048);
	assert_int_equal(out.err, ERR_TIMEOUT);
	assert_string_equal(out.message, "killed after 30000 ms");
	msg_run_exited_free(&out);
	close_msg(&m, &d);

	r = in;
	r.limit = LIMIT__COUNT;
	REFUSED(msg_run_exited_enc, &r, "\"limit\" above 5");
	r.limit = LIMIT__COUNT - 1;
	ACCEPTED(msg_run_exited_enc, &r);
	r = in;
	r.exit_code = -2;
	REFUSED(msg_run_exited_enc, &r, "\"exit_code\" out of range");
	r.exit_code = 256;
	REFUSED(msg_run_exited_enc, &r, "\"exit_code\" out of range");
	r.exit_code = 255;
	ACCEPTED(msg_run_exited_enc, &r);
	r = in;
	r.signal = -1;
	REFUSED(msg_run_exited_enc, &r, "\"signal\" out of range");
	r.signal = 129;
	REFUSED(msg_run_exited_enc, &r, "\"signal\" out of range");
	r.signal = 128;
	ACCEPTED(msg_run_exited_enc, &r);
	r = in;
	r.err = ERR__COUNT;
	REFUSED(msg_run_exited_enc, &r, "\"err\" above");
	refused_edit(MSG_RUN_EXITED, "message", vlong(REASON_MAX_LEN + 1, 'm'),
	    "\"message\" longer than 512");

	/* Nothing ran: no message goes over as "". */
	memset(&r, 0, sizeof(r));
	r.err = ERR_SANDBOX_FAILED;
	enc_init(&m);
	msg_run_exited_enc(&m, &r);
	open_msg(&m, &d, MSG_RUN_EXITED);
	assert_int_equal(msg_run_exited_dec(&d, &out, &e), 0);
	assert_int_equal(out.started, 0);
	assert_string_equal(out.message, "");
	msg_run_exited_free(&out);
	close_msg(&m, &d);
}

static void
test_peer_channel(void **state)
{
	static const char *const roles[] = {"policyd", "auditd"};
	static const char *const bad[] = {
	    "broker", "master", "worker", "", "policyd2", "Auditd", "auditd "};
	struct msg_peer_channel p, out;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		p.role = (char *)roles[i];
		enc_init(&m);
		msg_peer_channel_enc(&m, &p);
		open_msg(&m, &d, MSG_PEER_CHANNEL);
		assert_int_equal(msg_peer_channel_dec(&d, &out, &e), 0);
		assert_string_equal(out.role, roles[i]);
		msg_peer_channel_free(&out);
		close_msg(&m, &d);
	}
	/* Only the peers the master restarts are handed over. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p.role = (char *)bad[i];
		REFUSED(msg_peer_channel_enc, &p, "unknown role");
	}
	refused_edit(MSG_PEER_CHANNEL, "role", vlong(ROLE_MAX_LEN + 1, 'r'),
	    "\"role\" longer than 32");
}

/* SERVE, WORKER_READY, WORKER_GO, WORKER_DONE: "t" and nothing else. */
static void
test_empty(void **state)
{
	static const enum msg_type types[] = {
	    MSG_SERVE, MSG_WORKER_READY, MSG_WORKER_GO, MSG_WORKER_DONE};
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		enc_init(&m);
		msg_empty_enc(&m, types[i]);
		assert_int_equal(m.sb.size, 4); /* {"t": N} */
		open_msg(&m, &d, types[i]);
		assert_int_equal(d.root->via.map.size, 1);
		assert_int_equal(msg_empty_dec(&d, &e), 0);
		close_msg(&m, &d);
		refused_edit(
		    types[i], "ref", vuint(1), "unknown field \"ref\"");
	}
}

static void
test_session_end(void **state)
{
	static const char *const bad[] = {
	    "", ".", "..", "../x", "a/b", "a b", "s\xc3\xa9"};
	struct msg_session_end in = sample_session_end(), out, s;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	size_t i;

	(void)state;
	enc_init(&m);
	msg_session_end_enc(&m, &in);
	open_msg(&m, &d, MSG_SESSION_END);
	assert_int_equal(msg_session_end_dec(&d, &out, &e), 0);
	assert_int_equal(out.uid, 1000);
	assert_string_equal(out.session, "s1");
	msg_session_end_free(&out);
	close_msg(&m, &d);

	/* The session names a directory of the master's. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = in;
		s.session = (char *)bad[i];
		REFUSED(msg_session_end_enc, &s, "malformed session name");
	}
	s = in;
	s.uid = (uint64_t)UINT32_MAX + 1;
	REFUSED(msg_session_end_enc, &s, "\"uid\" above");
	refused_edit(MSG_SESSION_END, "session",
	    vlong(SESSION_MAX_LEN + 1, 's'), "\"session\" longer than 64");
	accepted_edit(MSG_SESSION_END, "session", vlong(SESSION_MAX_LEN, 's'));
}

static void
test_cancel(void **state)
{
	struct msg_cancel in = sample_cancel(), out, c;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_cancel_enc(&m, &in);
	open_msg(&m, &d, MSG_CANCEL);
	assert_int_equal(msg_cancel_dec(&d, &out, &e), 0);
	assert_string_equal(out.grant_id, SAMPLE_GID);
	msg_cancel_free(&out);
	close_msg(&m, &d);

	c = in;
	c.grant_id = "0123456789abcdef0123456789ABCDEF";
	REFUSED(msg_cancel_enc, &c, "malformed grant id");
	c.grant_id = "";
	REFUSED(msg_cancel_enc, &c, "malformed grant id");
	c.grant_id = SAMPLE_GID "0";
	REFUSED(msg_cancel_enc, &c, "\"grant_id\" longer than 32");
}

static void
test_worker_fail(void **state)
{
	struct msg_worker_fail in = sample_worker_fail(), out;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_worker_fail_enc(&m, &in);
	open_msg(&m, &d, MSG_WORKER_FAIL);
	assert_int_equal(msg_worker_fail_dec(&d, &out, &e), 0);
	assert_string_equal(out.step, "landlock");
	assert_string_equal(
	    out.message, "landlock_restrict_self: Operation not permitted");
	msg_worker_fail_free(&out);
	close_msg(&m, &d);

	refused_edit(
	    MSG_WORKER_FAIL, "step", vlong(33, 's'), "\"step\" longer than 32");
	accepted_edit(MSG_WORKER_FAIL, "step", vlong(32, 's'));
	refused_edit(MSG_WORKER_FAIL, "message", vlong(REASON_MAX_LEN + 1, 'm'),
	    "\"message\" longer than 512");
}

static void
test_worker_exit(void **state)
{
	struct msg_worker_exit in = sample_worker_exit(), out, x;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_worker_exit_enc(&m, &in);
	open_msg(&m, &d, MSG_WORKER_EXIT);
	assert_int_equal(msg_worker_exit_dec(&d, &out, &e), 0);
	assert_int_equal(out.exit_code, 3);
	assert_int_equal(out.signal, 0);
	close_msg(&m, &d);
	x.exit_code = -1;
	x.signal = 9;
	enc_init(&m);
	msg_worker_exit_enc(&m, &x);
	open_msg(&m, &d, MSG_WORKER_EXIT);
	assert_int_equal(msg_worker_exit_dec(&d, &out, &e), 0);
	assert_int_equal(out.exit_code, -1);
	assert_int_equal(out.signal, 9);
	close_msg(&m, &d);

	/* An exit code (0..255) or a signal (1..128), never both or none. */
	x.exit_code = 0;
	x.signal = 9;
	REFUSED(msg_worker_exit_enc, &x, "an exit code or a signal, not both");
	x.exit_code = -1;
	x.signal = 0;
	REFUSED(msg_worker_exit_enc, &x, "an exit code or a signal, not both");
	x.exit_code = 256;
	REFUSED(msg_worker_exit_enc, &x, "\"exit_code\" out of range");
	x.exit_code = -2;
	REFUSED(msg_worker_exit_enc, &x, "\"exit_code\" out of range");
	x.exit_code = -1;
	x.signal = 129;
	REFUSED(msg_worker_exit_enc, &x, "\"signal\" out of range");
	x.signal = 128;
	ACCEPTED(msg_worker_exit_enc, &x);
	x.exit_code = 255;
	x.signal = 0;
	ACCEPTED(msg_worker_exit_enc, &x);
}

/* A string field of the decoded event. */
static void
assert_event_str(const msgpack_object *ev, const char *k, const char *want)
{
	const msgpack_object *o = mp_get(ev, k);

	if (o == NULL)
		fail_msg("no \"%s\" in the event", k);
	assert_int_equal(o->type, MSGPACK_OBJECT_STR);
	assert_int_equal(o->via.str.size, strlen(want));
	assert_memory_equal(o->via.str.ptr, want, strlen(want));
}

/* An AUDIT whose event is the builder's plus one field k: v. */
static void
refused_event_field(const char *k, struct val v, const char *needle)
{
	struct mp_enc m;

	enc_init(&m);
	msg_audit_begin(&m, 1, "skill.run", "start", "success");
	enc_key(&m, k);
	put_val(&m, &v, NULL);
	msg_audit_end(&m);
	expect_refused(&m, needle);
}

static void
test_audit(void **state)
{
	static const char *const bad_keys[] = {"Event.reason", "a..b", ".lead",
	    "trail.", "a-b", "a b", "caf\xc3\xa9"};
	static const struct mp_limits wide_keys = {
	    .max_depth = 6, .max_str = 1024, .max_elems = 256, .max_key = 255};
	struct audit_call c;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	const msgpack_object *ev = NULL, *o;
	char key[AUDIT_KEY_MAX + 2];
	uint64_t ref = 0;
	size_t i;

	(void)state;
	enc_init(&m);
	sample_audit_enc(&m);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_int_equal(ref, 17);
	assert_non_null(ev);
	assert_int_equal(ev->via.map.size, 16);
	assert_event_str(ev, "event.action", "skill.run");
	assert_event_str(ev, "event.type", "start");
	assert_event_str(ev, "event.outcome", "success");
	assert_event_str(ev, "request.id", "req-1");
	assert_event_str(ev, "user.id", "1000"); /* ECS: ids are keywords */
	assert_event_str(ev, "group.id", "1001");
	assert_int_equal(mp_get(ev, "process.pid")->via.u64, 4242);
	assert_event_str(ev, "session.id", "s1");
	assert_event_str(ev, "skill.name", "hello");
	assert_event_str(ev, "skill.command", "greet");
	assert_event_str(ev, "skill.phase", "execution");
	assert_event_str(ev, "grant.id", SAMPLE_GID);
	assert_int_equal(mp_get(ev, "process.exit_code")->via.i64, -1);
	assert_int_equal(
	    mp_get(ev, "skill.dry_run")->type, MSGPACK_OBJECT_BOOLEAN);
	o = mp_get(ev, "skill.stderr");
	assert_int_equal(o->type, MSGPACK_OBJECT_BIN);
	assert_int_equal(o->via.bin.size, 6);
	assert_memory_equal(o->via.bin.ptr, "\xff\x00oops", 6);
	o = mp_get(ev, "skill.args");
	assert_int_equal(o->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(o->via.array.size, 2);
	close_msg(&m, &d);

	/* What a sender does not know stays out of the record. */
	c = sample_audit_call();
	c.request_id = NULL;
	c.gid = -1;
	c.pid = -1;
	c.phase = NULL;
	c.grant_id = "";
	enc_init(&m);
	msg_audit_begin(&m, 2, "skill.deny", "denied", "failure");
	msg_audit_call(&m, &c);
	msg_audit_end(&m);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_int_equal(ev->via.map.size, 7);
	assert_null(mp_get(ev, "request.id"));
	assert_null(mp_get(ev, "group.id"));
	assert_null(mp_get(ev, "process.pid"));
	assert_null(mp_get(ev, "skill.phase"));
	assert_null(mp_get(ev, "grant.id"));
	assert_event_str(ev, "user.id", "1000");
	close_msg(&m, &d);

	/* Keys: dotted segments of [a-z0-9_], at most AUDIT_KEY_MAX. */
	for (i = 0; i < sizeof(bad_keys) / sizeof(bad_keys[0]); i++)
		refused_event_field(bad_keys[i], vstr("x"), "is malformed");
	/*
	 * A key past AUDIT_KEY_MAX: mp_decode's default bound on keys is
	 * as short, so decode within a wider one to reach the decoder's.
	 */
	memset(key, 'k', sizeof(key));
	key[AUDIT_KEY_MAX + 1] = '\0';
	enc_init(&m);
	msg_audit_begin(&m, 1, "a", "b", "c");
	enc_kstr(&m, key, "x");
	msg_audit_end(&m);
	expect_refused_lim(&m, &wide_keys, "is malformed");
	key[AUDIT_KEY_MAX] = '\0';
	key[3] = '.';
	{
		struct mp_enc ok;

		enc_init(&ok);
		msg_audit_begin(&ok, 1, "a", "b", "c");
		enc_kstr(&ok, key, "x");
		enc_kstr(&ok, "skill_2.x_y.z9", "x");
		enc_key(&ok, "nil.ok");
		enc_nil(&ok);
		msg_audit_end(&ok);
		expect_accepted(&ok);
	}
	/* Values: scalars, or arrays of scalars; nothing nested deeper. */
	refused_event_field("x.map", vmap(), "is malformed");
	{
		struct mp_enc nest;

		enc_init(&nest);
		msg_audit_begin(&nest, 1, "a", "b", "c");
		enc_key(&nest, "x.arr");
		enc_array(&nest, 2);
		enc_str(&nest, "ok");
		enc_map_open(&nest);
		enc_kuint(&nest, "k", 1);
		enc_map_close(&nest);
		msg_audit_end(&nest);
		expect_refused(&nest, "is malformed");
		enc_init(&nest);
		msg_audit_begin(&nest, 1, "a", "b", "c");
		enc_key(&nest, "x.arr");
		enc_array(&nest, 1);
		enc_array(&nest, 0);
		msg_audit_end(&nest);
		expect_refused(&nest, "is malformed");
	}
	/* At most AUDIT_EVENT_FIELDS_MAX fields, event.action among them. */
	for (i = AUDIT_EVENT_FIELDS_MAX; i <= AUDIT_EVENT_FIELDS_MAX + 1; i++) {
		size_t j;

		enc_init(&m);
		msg_audit_begin(&m, 1, "a", "b", "c");
		for (j = 3; j < i; j++) {
			snprintf(key, sizeof(key), "x.f%zu", j);
			enc_kuint(&m, key, j);
		}
		msg_audit_end(&m);
		if (i == AUDIT_EVENT_FIELDS_MAX)
			expect_accepted(&m);
		else
			expect_refused(&m, "an event of 129 fields");
	}
	refused_edit(
	    MSG_AUDIT, "event/event.action", vdel(), "an event without action");
	refused_edit(
	    MSG_AUDIT, "event/event.action", vnil(), "an event without action");
	refused_edit(MSG_AUDIT, "event/event.action", vuint(1),
	    "an event without action");
	refused_edit(MSG_AUDIT, "event/event.action", vstr(""),
	    "an event without action");
}

/* The master's own records, whole, each an AUDIT that decodes. */
static void
test_audit_builders(void **state)
{
	struct msg_policy_event pe = sample_policy_event();
	struct msg_run_exited x = sample_run_exited();
	struct grant g = sample_spec();
	const msgpack_object *ev;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	(void)state;
	enc_init(&m);
	msg_audit_daemon(&m, 1, "daemon.started", 77, "/etc/sb.yaml", NULL);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_int_equal(ref, 1);
	assert_event_str(ev, "event.action", "daemon.started");
	assert_event_str(ev, "event.type", "start");
	assert_int_equal(
	    mp_get(ev, "event.category")->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(mp_get(ev, "event.category")->via.array.size, 1);
	assert_event_str(ev, "daemon.config", "/etc/sb.yaml");
	assert_null(mp_get(ev, "event.reason"));
	close_msg(&m, &d);
	enc_init(&m);
	msg_audit_daemon(&m, 2, "daemon.stopping", 77, NULL, "SIGTERM");
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_event_str(ev, "event.type", "end");
	assert_event_str(ev, "event.reason", "SIGTERM");
	assert_null(mp_get(ev, "daemon.config"));
	close_msg(&m, &d);

	enc_init(&m);
	msg_audit_child_died(&m, 3, "policyd", 78, 9); /* killed by 9 */
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_event_str(ev, "event.action", "child.died");
	assert_event_str(ev, "process.name", "policyd");
	assert_int_equal(mp_get(ev, "daemon.child_signal")->via.u64, 9);
	assert_null(mp_get(ev, "process.signal")); /* not an ECS field */
	assert_int_equal(mp_get(ev, "process.exit_code")->via.i64, -1);
	assert_event_str(ev, "event.reason", "killed by signal 9");
	close_msg(&m, &d);
	enc_init(&m);
	msg_audit_child_died(&m, 4, "auditd", 79, 3 << 8); /* exit 3 */
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_int_equal(mp_get(ev, "process.exit_code")->via.u64, 3);
	assert_event_str(ev, "event.reason", "exited with status 3");
	close_msg(&m, &d);

	enc_init(&m);
	msg_audit_policy(&m, 5, &pe);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_event_str(ev, "event.action", "policy.reloaded");
	assert_event_str(ev, "event.outcome", "success");
	assert_int_equal(mp_get(ev, "policy.rules")->via.u64, 14);
	close_msg(&m, &d);

	enc_init(&m);
	msg_audit_worker(&m, 6, &g, 4242, NULL);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_event_str(ev, "event.action", "worker.started");
	assert_event_str(ev, "grant.id", SAMPLE_GID);
	assert_int_equal(mp_get(ev, "worker.uid")->via.u64, 61000);
	assert_null(mp_get(ev, "process.exit_code"));
	assert_int_equal(msg_audit_is_lazy(&d), 0); /* it gates the run */
	close_msg(&m, &d);
	enc_init(&m);
	msg_audit_worker(&m, 7, &g, 4242, &x);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_event_str(ev, "event.action", "worker.exited");
	assert_event_str(ev, "event.outcome", "failure");
	assert_event_str(ev, "error.type", err_type_name(ERR_TIMEOUT));
	assert_non_null(mp_get(ev, "skill.exit_code")); /* not process.* */
	assert_null(mp_get(ev, "process.exit_code"));
	assert_int_equal(mp_get(ev, "worker.timed_out")->via.boolean, 1);
	assert_int_equal(
	    mp_get(ev, "event.duration")->via.u64, 30001ULL * 1000000);
	assert_int_equal(msg_audit_is_lazy(&d), 1); /* nothing waits for it */
	close_msg(&m, &d);
	/* a worker that did what it was asked: no error at all (ECS) */
	x.err = ERR_NONE;
	enc_init(&m);
	msg_audit_worker(&m, 8, &g, 4242, &x);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_event_str(ev, "event.outcome", "success");
	assert_null(mp_get(ev, "error.type"));
	assert_null(mp_get(ev, "error.message"));
	close_msg(&m, &d);
}

/* lazy: a bool, absent false; the event is the same either way. */
static void
test_audit_lazy(void **state)
{
	const msgpack_object *ev;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	(void)state;
	enc_init(&m);
	msg_audit_begin(&m, 8, "invoke.received", "start", "unknown");
	msg_audit_end_lazy(&m);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_int_equal(ref, 8);
	assert_int_equal(
	    ev->via.map.size, 4); /* category, action, type, outcome */
	assert_int_equal(msg_audit_is_lazy(&d), 1);
	close_msg(&m, &d);
	enc_init(&m);
	msg_audit_begin(&m, 9, "policy.decision", "allowed", "success");
	msg_audit_end(&m);
	open_msg(&m, &d, MSG_AUDIT);
	assert_int_equal(msg_audit_dec(&d, &ref, &ev, &e), 0);
	assert_int_equal(msg_audit_is_lazy(&d), 0);
	close_msg(&m, &d);
	enc_init(&m);
	msg_begin(&m, MSG_AUDIT);
	enc_kuint(&m, "ref", 1);
	enc_key(&m, "event");
	enc_map_open(&m);
	enc_kstr(&m, "event.action", "a");
	enc_map_close(&m);
	enc_kstr(&m, "lazy", "yes");
	msg_end(&m);
	expect_refused(&m, "lazy");
}

static void
test_audit_ack(void **state)
{
	struct msg_audit_ack in = sample_audit_ack(), out, a;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_audit_ack_enc(&m, &in);
	open_msg(&m, &d, MSG_AUDIT_ACK);
	assert_int_equal(msg_audit_ack_dec(&d, &out, &e), 0);
	assert_int_equal(out.ref, 16);
	assert_int_equal(out.ok, 0);
	assert_string_equal(out.message, "disk full");
	msg_audit_ack_free(&out);
	close_msg(&m, &d);

	a = in;
	a.ok = 1;
	a.message = NULL; /* goes over as "" */
	enc_init(&m);
	msg_audit_ack_enc(&m, &a);
	open_msg(&m, &d, MSG_AUDIT_ACK);
	assert_int_equal(msg_audit_ack_dec(&d, &out, &e), 0);
	assert_int_equal(out.ok, 1);
	assert_string_equal(out.message, "");
	msg_audit_ack_free(&out);
	close_msg(&m, &d);
	refused_edit(MSG_AUDIT_ACK, "message", vlong(REASON_MAX_LEN + 1, 'm'),
	    "\"message\" longer than 512");
}

static void
test_files(void **state)
{
	static const char *const outside[] = {
	    "/etc/passwd", "/workx/a", "work/a", "/work", "/data", ""};
	static const char *const dotted[] = {"/work/../etc/passwd",
	    "/data/x/../../etc/shadow", "/work/./a", "/work/a/..", "/data/."};
	static const char *const inside[] = {"/work/a", "/data/x/y.txt",
	    "/work/a..b", "/work/.hidden", "/data/..."};
	struct msg_files in = sample_files(), out, f;
	struct written w[FILES_WRITTEN_MAX + 1];
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	size_t i;

	(void)state;
	enc_init(&m);
	msg_files_enc(&m, &in);
	open_msg(&m, &d, MSG_FILES);
	assert_int_equal(msg_files_dec(&d, &out, &e), 0);
	assert_int_equal(out.found, 5);
	assert_int_equal(out.complete, 0);
	assert_int_equal(out.nfiles, 2);
	assert_string_equal(out.files[0].path, "/work/out.txt");
	assert_int_equal(out.files[0].size, 12);
	assert_string_equal(out.files[0].sha256,
	    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	assert_string_equal(out.files[1].path, "/data/big.bin");
	assert_true(out.files[1].size == 1ULL << 40);
	assert_string_equal(out.files[1].sha256, "");
	msg_files_free(&out);
	assert_null(out.files);
	close_msg(&m, &d);

	/* Paths as the skill saw them: under /work/ or /data/ only. */
	for (i = 0; i < sizeof(outside) / sizeof(outside[0]); i++)
		refused_edit(MSG_FILES, "files/0/path", vstr(outside[i]),
		    "a file outside /work, /data");
	/* No "." or ".." component, so that none leads out of them. */
	for (i = 0; i < sizeof(dotted) / sizeof(dotted[0]); i++)
		refused_edit(MSG_FILES, "files/0/path", vstr(dotted[i]),
		    "a file outside /work, /data");
	for (i = 0; i < sizeof(inside) / sizeof(inside[0]); i++)
		accepted_edit(MSG_FILES, "files/1/path", vstr(inside[i]));
	refused_edit(MSG_FILES, "files/0/path", vlong(PATH_MAX_LEN + 1, '/'),
	    "\"path\" longer than 4096");
	/* A sha256 is 64 lowercase hex digits, or "" when not hashed. */
	refused_edit(
	    MSG_FILES, "files/0/sha256", vlong(63, 'a'), "a malformed sha256");
	refused_edit(
	    MSG_FILES, "files/0/sha256", vlong(64, 'A'), "a malformed sha256");
	refused_edit(
	    MSG_FILES, "files/0/sha256", vlong(64, 'g'), "a malformed sha256");
	refused_edit(MSG_FILES, "files/0/sha256", vlong(65, 'a'),
	    "\"sha256\" longer than 64");
	accepted_edit(MSG_FILES, "files/0/sha256", vlong(64, 'f'));
	refused_edit(
	    MSG_FILES, "files/1", vstr("/work/a"), "a file is not a map");
	/* No more files listed than found, nor than FILES_WRITTEN_MAX. */
	f = in;
	f.found = 1;
	REFUSED(msg_files_enc, &f, "\"files\" lists more than \"found\"");
	f.found = 2;
	ACCEPTED(msg_files_enc, &f);
	for (i = 0; i < FILES_WRITTEN_MAX + 1; i++)
		w[i] = in.files[0];
	f.files = w;
	f.nfiles = FILES_WRITTEN_MAX + 1;
	f.found = UINT64_MAX;
	REFUSED(msg_files_enc, &f, "\"files\" must be an array of at most 256");
	f.nfiles = FILES_WRITTEN_MAX;
	ACCEPTED(msg_files_enc, &f);
	/* The second file is bad: the first one decoded is freed. */
	refused_edit(
	    MSG_FILES, "files/1/size_bytes", vint(-1), "\"size_bytes\"");
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(perm_kind_name(PERM_FS_READ), "fs_read");
	assert_string_equal(perm_kind_name(PERM_ENV), "env_names");
	assert_string_equal(perm_kind_name(PERM__COUNT), "unknown");
	assert_string_equal(limit_kind_name(LIMIT_NONE), "");
	assert_string_equal(limit_kind_name(LIMIT_TIMEOUT), "timeout_ms");
	assert_string_equal(limit_kind_name(LIMIT_FSIZE), "fsize_mb");
	assert_string_equal(limit_kind_name(LIMIT__COUNT), "");
	assert_string_equal(policy_event_name(POLICY_LOADED), "policy.loaded");
	assert_string_equal(
	    policy_event_name(POLICY_RELOAD_FAILED), "policy.reload_failed");
	assert_string_equal(policy_event_name(POLICY__COUNT), "policy.unknown");
}

static void
test_grant_id_valid(void **state)
{
	(void)state;
	assert_int_equal(grant_id_valid(SAMPLE_GID), 1);
	assert_int_equal(grant_id_valid("ffffffffffffffffffffffffffffffff"), 1);
	assert_int_equal(grant_id_valid(NULL), 0);
	assert_int_equal(grant_id_valid(""), 0);
	assert_int_equal(grant_id_valid("0123456789abcdef0123456789abcde"), 0);
	assert_int_equal(grant_id_valid(SAMPLE_GID "0"), 0);
	assert_int_equal(grant_id_valid("0123456789ABCDEF0123456789abcdef"), 0);
	assert_int_equal(grant_id_valid("0123456789abcdef0123456789abcdeg"), 0);
	assert_int_equal(grant_id_valid("0123456789abcdef 123456789abcdef"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_type_has_a_codec),
	    cmocka_unit_test(test_every_type_round_trips),
	    cmocka_unit_test(test_every_type_strict),
	    cmocka_unit_test(test_type_field),
	    cmocka_unit_test(test_ready),
	    cmocka_unit_test(test_conf_broker),
	    cmocka_unit_test(test_conf_policyd),
	    cmocka_unit_test(test_conf_auditd),
	    cmocka_unit_test(test_authz_req),
	    cmocka_unit_test(test_authz_ans),
	    cmocka_unit_test(test_skills_req),
	    cmocka_unit_test(test_skills_ans),
	    cmocka_unit_test(test_skill_info_req),
	    cmocka_unit_test(test_skill_info_ans),
	    cmocka_unit_test(test_reload),
	    cmocka_unit_test(test_admins),
	    cmocka_unit_test(test_grant),
	    cmocka_unit_test(test_prep),
	    cmocka_unit_test(test_spec),
	    cmocka_unit_test(test_grant_ack),
	    cmocka_unit_test(test_policy_event),
	    cmocka_unit_test(test_run),
	    cmocka_unit_test(test_run_started),
	    cmocka_unit_test(test_run_exited),
	    cmocka_unit_test(test_peer_channel),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_session_end),
	    cmocka_unit_test(test_cancel),
	    cmocka_unit_test(test_worker_fail),
	    cmocka_unit_test(test_worker_exit),
	    cmocka_unit_test(test_audit),
	    cmocka_unit_test(test_audit_builders),
	    cmocka_unit_test(test_audit_ack),
	    cmocka_unit_test(test_audit_lazy),
	    cmocka_unit_test(test_files),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_grant_id_valid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
