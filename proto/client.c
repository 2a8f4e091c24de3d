/* client.c: strict decoding and encoding of client requests. */
#include "client.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "frame.h"
#include "msg.h"

static const char *const creq_names[CREQ__COUNT] = {
    [CREQ_HELLO] = "hello",
    [CREQ_INVOKE] = "invoke",
    [CREQ_AUTHORIZE] = "authorize",
    [CREQ_SKILLS] = "skills",
    [CREQ_APPROVE] = "approve",
    [CREQ_CANCEL] = "cancel",
    [CREQ_STATS] = "stats",
    [CREQ_RELOAD] = "reload",
    [CREQ_SKILL_INFO] = "skill_info",
    [CREQ_LAST_RESULT] = "last_result",
    [CREQ_SESSION_END] = "session_end",
    [CREQ_APPROVALS] = "approvals",
    [CREQ_PUT_FILE] = "put_file",
    [CREQ_GET_FILE] = "get_file",
    [CREQ_LIST_FILES] = "list_files",
    [CREQ_DELETE_FILE] = "delete_file",
};

static const char *const client_approval_names[CLIENT_APPROVAL__COUNT] = {
    [CLIENT_APPROVAL_NONE] = "none",
    [CLIENT_APPROVAL_YES_ONCE] = "yes_once",
    [CLIENT_APPROVAL_YES_IN_SESSION] = "yes_in_session",
    [CLIENT_APPROVAL_NO] = "no",
};

/* What this server answers (hello lists it): every type but these. */
#define CREQ_NOT_YET 0U

int
creq_supported(enum creq_type t)
{
	return (unsigned)t < CREQ__COUNT && !(CREQ_NOT_YET & (1U << t));
}

int
creq_is_file(enum creq_type t)
{
	return t == CREQ_PUT_FILE || t == CREQ_GET_FILE ||
	       t == CREQ_LIST_FILES || t == CREQ_DELETE_FILE;
}

int
creq_runs(enum creq_type t)
{
	return t == CREQ_INVOKE || creq_is_file(t);
}

int
client_path_check(const char *p, size_t len, struct error *e)
{
	size_t i, start = 0, depth = 0;

	if (len == 0 || len > CLIENT_PATH_MAX)
		return error_set(e, ERR_BAD_REQUEST,
		    "a path must be 1..%d bytes", CLIENT_PATH_MAX);
	for (i = 0; i < len; i++)
		if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
			return error_set(e, ERR_BAD_REQUEST,
			    "a path has no control character (byte 0x%02x)",
			    (unsigned char)p[i]);
	if (p[0] == '/')
		return error_set(e, ERR_BAD_REQUEST,
		    "path \"%.*s\" is absolute: paths are relative to the "
		    "session's work dir, as a skill sees them under /work",
		    (int)utf8_cut(p, 64), p);
	for (i = 0; i <= len; i++) {
		if (i < len && p[i] != '/')
			continue;
		if (i == start || (i - start == 1 && p[start] == '.') ||
		    (i - start == 2 && p[start] == '.' && p[start + 1] == '.'))
			return error_set(e, ERR_BAD_REQUEST,
			    "path \"%.*s\" has an empty, \".\" or \"..\" "
			    "component: paths name a file inside the "
			    "session's work dir",
			    (int)utf8_cut(p, 64), p);
		if (i - start > 255 || ++depth > CLIENT_PATH_DEPTH)
			return error_set(e, ERR_BAD_REQUEST,
			    "path \"%.*s\" has a component over 255 bytes "
			    "or over %d components",
			    (int)utf8_cut(p, 64), p, CLIENT_PATH_DEPTH);
		start = i + 1;
	}
	return 0;
}

const char *
creq_type_name(enum creq_type t)
{
	return (unsigned)t < CREQ__COUNT ? creq_names[t] : "unknown";
}

/* The wire name of an approval's answer. */
const char *
client_approval_name(enum client_approval a)
{
	return (unsigned)a < CLIENT_APPROVAL__COUNT ? client_approval_names[a]
	                                            : "none";
}

/* An answer by its wire name; "none" is no answer one can give. */
enum client_approval
client_approval_parse(const char *s)
{
	int i;

	for (i = CLIENT_APPROVAL_YES_ONCE; i < CLIENT_APPROVAL__COUNT; i++)
		if (strcmp(s, client_approval_names[i]) == 0)
			return (enum client_approval)i;
	return CLIENT_APPROVAL_NONE;
}

/* An id (key "id" or "request_id") is a string or an unsigned integer. */
static int
client_id_dec(const msgpack_object *map, const char *key, struct client_id *id,
    struct error *e)
{
	const msgpack_object *o = mp_get(map, key);

	if (o == NULL)
		return error_set(
		    e, ERR_BAD_REQUEST, "missing field \"%s\"", key);
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		id->is_num = 1;
		id->num = o->via.u64;
		return 0;
	}
	if (o->type != MSGPACK_OBJECT_STR || o->via.str.size == 0 ||
	    o->via.str.size > CLIENT_ID_MAX)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" must be a string of 1..%d bytes or an "
		    "unsigned integer",
		    key, CLIENT_ID_MAX);
	id->str = xstrndup(o->via.str.ptr, o->via.str.size);
	return 0;
}

/* The env map: string keys and values, bounded, turned into KEY=VALUE. */
static int
client_env_dec(
    const msgpack_object *map, struct client_req *req, struct error *e)
{
	const msgpack_object *o = NULL;
	uint32_t i;

	if (mp_submap(map, "env", 0, &o, e) == -1)
		return -1;
	if (o == NULL)
		return 0;
	if (o->via.map.size > CLIENT_ENV_MAX)
		return error_set(e, ERR_BAD_REQUEST, "too many env entries");
	req->env = xcalloc(o->via.map.size + 1, sizeof(char *));
	for (i = 0; i < o->via.map.size; i++) {
		const msgpack_object *k = &o->via.map.ptr[i].key;
		const msgpack_object *v = &o->via.map.ptr[i].val;
		if (v->type != MSGPACK_OBJECT_STR ||
		    v->via.str.size > ARG_MAX_LEN ||
		    memchr(k->via.str.ptr, '=', k->via.str.size) != NULL)
			return error_set(e, ERR_BAD_REQUEST,
			    "env entries must be NAME: string");
		xasprintf(&req->env[i], "%.*s=%.*s", (int)k->via.str.size,
		    k->via.str.ptr, (int)v->via.str.size, v->via.str.ptr);
		req->nenv++;
	}
	return 0;
}

static int
client_type_dec(const msgpack_object *map, enum creq_type *t, struct error *e)
{
	char *s = NULL;
	int i;

	if (mp_str(map, "type", 1, 32, &s, e) == -1)
		return -1;
	for (i = 0; i < CREQ__COUNT; i++)
		if (strcmp(s, creq_names[i]) == 0) {
			*t = (enum creq_type)i;
			free(s);
			return 0;
		}
	error_set(e, ERR_UNSUPPORTED, "unknown request type \"%.32s\"", s);
	free(s);
	return -1;
}

/* The session a request names (its caller's), "default" when none. */
static int
client_session_dec(
    const msgpack_object *o, struct client_req *r, struct error *e)
{
	if (mp_str(o, "session", 0, SESSION_MAX_LEN, &r->session, e) == -1)
		return -1;
	if (r->session != NULL && !ident_valid(r->session, SESSION_MAX_LEN))
		return error_set(e, ERR_BAD_REQUEST,
		    "session must be 1..64 of [A-Za-z0-9._-]");
	if (r->session == NULL)
		r->session = xstrdup(DEFAULT_SESSION);
	return 0;
}

/* approve: which approval, and the answer, both bounded and known. */
static int
client_approve_dec(
    const msgpack_object *o, struct client_req *r, struct error *e)
{
	static const char *const keys[] = {
	    "type", "id", "approval_id", "option", NULL};
	char *opt = NULL;

	if (mp_only_keys(o, keys, e) ||
	    mp_str(o, "approval_id", 1, CLIENT_APPROVAL_ID_MAX, &r->approval_id,
	        e) ||
	    mp_str(o, "option", 1, 32, &opt, e)) {
		free(opt);
		return -1;
	}
	if (*r->approval_id == '\0') {
		free(opt);
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"approval_id\" must not be empty");
	}
	if ((r->option = client_approval_parse(opt)) == CLIENT_APPROVAL_NONE) {
		error_set(e, ERR_BAD_REQUEST,
		    "unknown option \"%.32s\": the options are yes_once, "
		    "yes_in_session and no",
		    opt);
		free(opt);
		return -1;
	}
	free(opt);
	return 0;
}

/* invoke and authorize share their fields. */
static int
client_call_dec(const msgpack_object *o, struct client_req *r, struct error *e)
{
	static const char *const keys[] = {"type", "id", "skill", "command",
	    "args", "stdin", "env", "session", "phase", "timeout_ms", NULL};

	if (mp_only_keys(o, keys, e) ||
	    mp_str(o, "skill", 1, NAME_MAX_LEN, &r->skill, e) ||
	    mp_str(o, "command", 0, COMMAND_MAX_LEN, &r->command, e) ||
	    mp_strarr(
	        o, "args", 0, ARGS_MAX, ARG_MAX_LEN, &r->args, &r->nargs, e) ||
	    mp_bin(o, "stdin", 0, FRAME_MAX_DEFAULT, &r->stdin_data,
	        &r->stdin_len, e) ||
	    client_env_dec(o, r, e) || client_session_dec(o, r, e) ||
	    mp_str(o, "phase", 0, 32, &r->phase, e) ||
	    mp_uint(o, "timeout_ms", 0, 86400000, &r->timeout_ms, e))
		return -1;
	if (r->command == NULL)
		r->command = xstrdup("");
	if (r->phase == NULL)
		r->phase = xstrdup("planning");
	return 0;
}

/* put_file, get_file, list_files, delete_file: a session, and a path. */
static int
client_file_dec(const msgpack_object *o, struct client_req *r, struct error *e)
{
	static const char *const put[] = {"type", "id", "session", "path",
	    "data", "offset", "timeout_ms", NULL};
	static const char *const get[] = {"type", "id", "session", "path",
	    "offset", "length", "timeout_ms", NULL};
	static const char *const list[] = {
	    "type", "id", "session", "timeout_ms", NULL};
	static const char *const del[] = {
	    "type", "id", "session", "path", "timeout_ms", NULL};
	const char *const *keys = r->type == CREQ_PUT_FILE     ? put
	                          : r->type == CREQ_GET_FILE   ? get
	                          : r->type == CREQ_LIST_FILES ? list
	                                                       : del;

	if (mp_only_keys(o, keys, e) || client_session_dec(o, r, e) ||
	    mp_uint(o, "timeout_ms", 0, 86400000, &r->timeout_ms, e) ||
	    mp_uint(o, "offset", 0, INT64_MAX, &r->offset, e) ||
	    mp_uint(o, "length", 0, INT64_MAX, &r->length, e) ||
	    mp_bin(o, "data", r->type == CREQ_PUT_FILE, FRAME_MAX_DEFAULT,
	        &r->stdin_data, &r->stdin_len, e))
		return -1;
	if (r->type == CREQ_LIST_FILES)
		return 0;
	if (mp_str(o, "path", 1, CLIENT_PATH_MAX, &r->path, e) == -1)
		return -1;
	return client_path_check(r->path, strlen(r->path), e);
}

/* skill_info: a skill's name, and whether the reference texts come too. */
static int
client_info_dec(const msgpack_object *o, struct client_req *r, struct error *e)
{
	static const char *const keys[] = {
	    "type", "id", "skill", "references", NULL};

	if (mp_only_keys(o, keys, e) ||
	    mp_str(o, "skill", 1, NAME_MAX_LEN, &r->skill, e) ||
	    mp_bool(o, "references", 0, &r->references, e))
		return -1;
	if (*r->skill == '\0')
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"skill\" must not be empty");
	return 0;
}

int
client_req_dec(const struct mp_doc *d, struct client_req *r, struct error *e)
{
	static const char *const plain[] = {"type", "id", NULL};
	static const char *const hello[] = {
	    "type", "id", "protocol", "approvals", NULL};
	static const char *const cancel[] = {"type", "id", "request_id", NULL};
	static const char *const sess[] = {"type", "id", "session", NULL};
	const msgpack_object *o = d->root;

	memset(r, 0, sizeof(*r));
	if (client_id_dec(o, "id", &r->id, e) == -1 ||
	    client_type_dec(o, &r->type, e) == -1)
		return -1;
	switch (r->type) {
	case CREQ_INVOKE:
	case CREQ_AUTHORIZE:
		return client_call_dec(o, r, e);
	case CREQ_SKILL_INFO:
		return client_info_dec(o, r, e);
	case CREQ_HELLO:
		return mp_only_keys(o, hello, e) ||
		               mp_uint(o, "protocol", 0, UINT32_MAX,
		                   &r->protocol, e) ||
		               mp_bool(o, "approvals", 0, &r->approvals, e)
		           ? -1
		           : 0;
	case CREQ_CANCEL:
		return mp_only_keys(o, cancel, e) ||
		               client_id_dec(o, "request_id", &r->rid, e)
		           ? -1
		           : 0;
	case CREQ_LAST_RESULT:
	case CREQ_SESSION_END:
		return mp_only_keys(o, sess, e) || client_session_dec(o, r, e)
		           ? -1
		           : 0;
	case CREQ_APPROVE:
		return client_approve_dec(o, r, e);
	case CREQ_PUT_FILE:
	case CREQ_GET_FILE:
	case CREQ_LIST_FILES:
	case CREQ_DELETE_FILE:
		return client_file_dec(o, r, e);
	case CREQ_SKILLS:
	case CREQ_STATS:
	case CREQ_RELOAD:
	case CREQ_APPROVALS:
		return mp_only_keys(o, plain, e);
	case CREQ__COUNT:
		break;
	}
	{
		return error_set(e, ERR_UNSUPPORTED,
		    "request type \"%s\" is not supported yet",
		    creq_type_name(r->type));
	}
}

void
client_req_free(struct client_req *r)
{
	free(r->id.str);
	free(r->rid.str);
	free(r->approval_id);
	free(r->skill);
	free(r->command);
	free(r->session);
	free(r->phase);
	free(r->path);
	strarr_free(r->args, r->nargs);
	free(r->stdin_data);
	strarr_free(r->env, r->nenv);
	memset(r, 0, sizeof(*r));
}

int
client_id_eq(const struct client_id *a, const struct client_id *b)
{
	if (a->is_num || b->is_num)
		return a->is_num && b->is_num && a->num == b->num;
	if (a->str == NULL || b->str == NULL)
		return a->str == b->str;
	return strcmp(a->str, b->str) == 0;
}

void
client_id_enc(struct mp_enc *m, const struct client_id *id)
{
	if (id->is_num)
		enc_uint(m, id->num);
	else if (id->str != NULL)
		enc_str(m, id->str);
	else
		enc_nil(m);
}

/* Encode only the fields that are set. */
void
client_req_enc(struct mp_enc *m, const struct client_req *r)
{
	int call = r->type == CREQ_INVOKE || r->type == CREQ_AUTHORIZE;
	const char *eq;
	size_t i;

	enc_map_open(m);
	enc_kstr(m, "type", creq_type_name(r->type));
	enc_key(m, "id");
	client_id_enc(m, &r->id);
	if (call) {
		enc_kstr(m, "skill", r->skill);
		if (r->command && *r->command)
			enc_kstr(m, "command", r->command);
		enc_kstrarr(m, "args", r->args, r->nargs);
		if (r->stdin_data != NULL)
			enc_kbin(m, "stdin", r->stdin_data, r->stdin_len);
		if (r->session != NULL)
			enc_kstr(m, "session", r->session);
		if (r->phase != NULL)
			enc_kstr(m, "phase", r->phase);
		if (r->timeout_ms != 0)
			enc_kuint(m, "timeout_ms", r->timeout_ms);
	}
	if (r->type == CREQ_HELLO && r->protocol != 0)
		enc_kuint(m, "protocol", r->protocol);
	if (r->type == CREQ_HELLO && r->approvals)
		enc_kbool(m, "approvals", 1);
	if (r->type == CREQ_CANCEL) {
		enc_key(m, "request_id");
		client_id_enc(m, &r->rid);
	}
	if ((r->type == CREQ_LAST_RESULT || r->type == CREQ_SESSION_END ||
	        creq_is_file(r->type)) &&
	    r->session != NULL)
		enc_kstr(m, "session", r->session);
	if (creq_is_file(r->type) && r->path != NULL)
		enc_kstr(m, "path", r->path);
	if (r->type == CREQ_PUT_FILE)
		enc_kbin(m, "data", r->stdin_data, r->stdin_len);
	if ((r->type == CREQ_PUT_FILE || r->type == CREQ_GET_FILE) &&
	    r->offset != 0)
		enc_kuint(m, "offset", r->offset);
	if (r->type == CREQ_GET_FILE && r->length != 0)
		enc_kuint(m, "length", r->length);
	if (creq_is_file(r->type) && r->timeout_ms != 0)
		enc_kuint(m, "timeout_ms", r->timeout_ms);
	if (r->type == CREQ_SKILL_INFO) {
		enc_kstr(m, "skill", r->skill);
		if (r->references)
			enc_kbool(m, "references", 1);
	}
	if (r->type == CREQ_APPROVE) {
		enc_kstr(m, "approval_id",
		    r->approval_id != NULL ? r->approval_id : "");
		enc_kstr(m, "option", client_approval_name(r->option));
	}
	if (call && r->nenv > 0) {
		enc_key(m, "env");
		enc_map_open(m);
		for (i = 0; i < r->nenv; i++) {
			eq = strchr(r->env[i], '=');
			enc_keyn(m, r->env[i],
			    eq ? (size_t)(eq - r->env[i]) : strlen(r->env[i]));
			enc_str(m, eq ? eq + 1 : "");
		}
		enc_map_close(m);
	}
	enc_map_close(m);
}

void
client_reply_begin(
    struct mp_enc *m, const char *type, const struct client_id *id, int ok)
{
	static const struct client_id none = {0, 0, NULL};

	enc_map_open(m);
	enc_kstr(m, "type", type);
	enc_key(m, "id");
	client_id_enc(m, id != NULL ? id : &none);
	enc_kbool(m, "ok", ok);
}

void
client_reply_end(struct mp_enc *m)
{
	enc_map_close(m);
}

void
client_error_field(struct mp_enc *m, enum err_type t, const char *msg)
{
	enc_key(m, "error");
	enc_map_open(m);
	enc_kstr(m, "type", err_type_name(t));
	enc_kstr(m, "message", msg ? msg : "");
	enc_key(m, "details");
	enc_map_open(m);
	enc_map_close(m);
	enc_map_close(m);
}

void
client_error_enc(struct mp_enc *m, const struct client_id *id, enum err_type t,
    const char *msg)
{
	client_reply_begin(m, "error", id, 0);
	client_error_field(m, t, msg);
	client_reply_end(m);
}
