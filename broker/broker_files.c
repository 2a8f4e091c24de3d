/*
 * broker_files.c: the session file requests. put_file, get_file,
 * list_files and delete_file are calls of the files skill (skills/files)
 * on the caller's session: the broker names its command and arguments
 * here, so each is decided by policyd, audited and run in a worker on
 * the session's work dir like any invoke, in the session's line. Its
 * answer is one msgpack map on the skill's stdout, decoded strictly here
 * into the reply; the broker never touches a work dir itself.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"
#include "broker.h"

#define FILES_SKILL "files"
#define FILES_ROOM 512 /* of an answer or a frame, beside path and data */

static const char *const files_commands[CREQ__COUNT] = {
    [CREQ_PUT_FILE] = "put",
    [CREQ_GET_FILE] = "get",
    [CREQ_LIST_FILES] = "list",
    [CREQ_DELETE_FILE] = "delete",
};

/* The room a frame has for a file's bytes beside a path of len bytes. */
static size_t
files_room(size_t path_len)
{
	size_t room = FILES_ROOM + path_len;

	return B->max_frame > room ? B->max_frame - room : 0;
}

/*
 * The most data one put_file carries beside the longest path (hello's
 * limits say it); a quarter of a frame too small for that.
 */
size_t
files_put_max(void)
{
	size_t room = files_room(CLIENT_PATH_MAX);

	if (room < B->max_frame / 4)
		room = B->max_frame / 4;
	return room < FRAME_MAX_DEFAULT ? room : FRAME_MAX_DEFAULT;
}

/*
 * The request as a call of the files skill: put and get take the path
 * and the offset as arguments, delete the path, list none.
 */
int
files_call_prepare(struct client_req *cr, uint32_t uid, struct error *e)
{
	size_t n = cr->type == CREQ_LIST_FILES    ? 0
	           : cr->type == CREQ_DELETE_FILE ? 1
	                                          : 2;

	if (cr->type != CREQ_PUT_FILE && !session_exists(uid, cr->session))
		return error_set(
		    e, ERR_NOT_FOUND, "no such session of this uid");
	if (cr->type == CREQ_GET_FILE && files_room(strlen(cr->path)) == 0)
		return error_set(e, ERR_BAD_REQUEST,
		    "a path of %zu bytes leaves no room for data in a reply of "
		    "max_frame_bytes (%zu)",
		    strlen(cr->path), B->max_frame);
	cr->skill = xstrdup(FILES_SKILL);
	cr->command = xstrdup(files_commands[cr->type]);
	cr->phase = xstrdup("execution");
	cr->args = xcalloc(3, sizeof(char *));
	if (n > 0)
		cr->args[0] = xstrdup(cr->path);
	if (n > 1)
		xasprintf(&cr->args[1], "%" PRIu64, cr->offset);
	cr->nargs = n;
	return 0;
}

/*
 * A file call's answer is bounded by the frame, not by the grant's
 * output cap: the daemon's own program writes it, to the size the broker
 * gives it on stdin (get and list), and a reply must carry a chunk of a
 * file, not a skill's chatter. So a get moves up to a frame per worker.
 */
void
files_granted(struct call *c)
{
	if (creq_is_file(c->cr.type))
		c->ans.output_bytes = B->max_frame;
}

/* get and list: the most their answer may carry, as the skill's stdin. */
void
files_bound_stdin(struct client_req *cr)
{
	uint64_t bound;

	if (cr->type != CREQ_GET_FILE && cr->type != CREQ_LIST_FILES)
		return;
	if (cr->type == CREQ_LIST_FILES) /* the whole answer, not the data */
		bound = B->max_frame - FILES_ROOM;
	else
		bound = files_room(strlen(cr->path));
	if (cr->type == CREQ_GET_FILE && cr->length != 0 && cr->length < bound)
		bound = cr->length;
	free(cr->stdin_data);
	cr->stdin_data = xmalloc(24);
	cr->stdin_len =
	    (size_t)snprintf((char *)cr->stdin_data, 24, "%" PRIu64, bound);
}

/* The skill's error types a client may see; ERR__COUNT for any other. */
static enum err_type
files_err(const char *name)
{
	enum err_type t = err_type_from_name(name);

	return t == ERR_BAD_REQUEST || t == ERR_NOT_FOUND ||
	               t == ERR_RESOURCE_LIMIT || t == ERR_PERMISSION_DENIED
	           ? t
	           : ERR__COUNT;
}

static int
files_kind_valid(const char *k)
{
	return strcmp(k, "file") == 0 || strcmp(k, "dir") == 0 ||
	       strcmp(k, "symlink") == 0 || strcmp(k, "other") == 0;
}

static int
files_sha_valid(const char *s)
{
	return strlen(s) == 64 && hex_lower_n(s, 64);
}

/* One entry of a listing: copied field by field, each checked. */
static int
files_entry_copy(struct mp_enc *m, const msgpack_object *o, struct error *e)
{
	static const char *const keys[] = {
	    "path", "kind", "size_bytes", "sha256", NULL};
	char *path = NULL, *kind = NULL, *sha = NULL;
	uint64_t size = 0;
	int r = -1;

	if (o->type != MSGPACK_OBJECT_MAP)
		return error_set(e, ERR_INTERNAL, "an entry is no map");
	if (mp_only_keys(o, keys, e) ||
	    mp_str(o, "path", 1, PATH_MAX_LEN, &path, e) ||
	    mp_str(o, "kind", 1, 16, &kind, e) ||
	    mp_uint(o, "size_bytes", 1, INT64_MAX, &size, e) ||
	    mp_str(o, "sha256", 0, 64, &sha, e))
		goto out;
	if (sha != NULL && !files_sha_valid(sha)) {
		error_set(e, ERR_INTERNAL, "a bad sha256");
		goto out;
	}
	if (*path == '\0' || !files_kind_valid(kind)) {
		error_set(e, ERR_INTERNAL, "an entry without a path or a kind");
		goto out;
	}
	enc_map_open(m);
	enc_kstr(m, "path", path);
	enc_kstr(m, "kind", kind);
	enc_kuint(m, "size_bytes", size);
	if (sha != NULL)
		enc_kstr(m, "sha256", sha);
	enc_map_close(m);
	r = 0;
out:
	free(path);
	free(kind);
	free(sha);
	return r;
}

/* The fields of a successful answer, as the reply carries them. */
static int
files_ok_copy(struct mp_enc *m, const struct call *c, const msgpack_object *o,
    struct error *e)
{
	static const char *const put[] = {
	    "ok", "path", "size_bytes", "sha256", NULL};
	static const char *const get[] = {
	    "ok", "path", "offset", "size_bytes", "sha256", "data", NULL};
	static const char *const list[] = {"ok", "files", "truncated", NULL};
	static const char *const del[] = {
	    "ok", "path", "kind", "size_bytes", "sha256", NULL};
	const char *const *keys = c->cr.type == CREQ_PUT_FILE     ? put
	                          : c->cr.type == CREQ_GET_FILE   ? get
	                          : c->cr.type == CREQ_LIST_FILES ? list
	                                                          : del;
	const msgpack_object *files;
	char *path = NULL, *sha = NULL, *kind = NULL;
	uint64_t size = 0, off = 0;
	uint8_t *data = NULL;
	size_t len = 0;
	uint32_t i;
	int trunc = 0, r = -1;

	if (mp_only_keys(o, keys, e))
		return -1;
	if (c->cr.type == CREQ_LIST_FILES) {
		if (mp_bool(o, "truncated", 1, &trunc, e) ||
		    (files = mp_get(o, "files")) == NULL ||
		    files->type != MSGPACK_OBJECT_ARRAY)
			return error_set(e, ERR_INTERNAL, "no files array");
		enc_key(m, "files");
		enc_array(m, files->via.array.size);
		for (i = 0; i < files->via.array.size; i++)
			if (files_entry_copy(m, &files->via.array.ptr[i], e))
				return -1;
		enc_kbool(m, "truncated", trunc);
		return 0;
	}
	if (mp_str(o, "path", 1, CLIENT_PATH_MAX, &path, e) ||
	    (c->cr.type == CREQ_DELETE_FILE &&
	        mp_str(o, "kind", 1, 16, &kind, e)) ||
	    mp_uint(o, "size_bytes", 1, INT64_MAX, &size, e) ||
	    mp_str(o, "sha256", c->cr.type != CREQ_DELETE_FILE, 64, &sha, e) ||
	    mp_uint(
	        o, "offset", c->cr.type == CREQ_GET_FILE, INT64_MAX, &off, e) ||
	    mp_bin(o, "data", c->cr.type == CREQ_GET_FILE, FRAME_MAX_DEFAULT,
	        &data, &len, e))
		goto out;
	if (strcmp(path, c->cr.path) != 0 ||
	    (kind != NULL && !files_kind_valid(kind)) ||
	    (sha != NULL && !files_sha_valid(sha)) ||
	    (c->cr.type == CREQ_GET_FILE &&
	        (off != c->cr.offset || off > size || len > size - off))) {
		error_set(e, ERR_INTERNAL, "its fields do not agree");
		goto out;
	}
	enc_kstr(m, "path", path);
	if (kind != NULL)
		enc_kstr(m, "kind", kind);
	enc_kuint(m, "size_bytes", size);
	if (sha != NULL)
		enc_kstr(m, "sha256", sha);
	if (c->cr.type == CREQ_GET_FILE) {
		enc_kuint(m, "offset", off);
		enc_kbin(m, "data", data, len);
		enc_kbool(m, "eof", off + len == size);
	}
	r = 0;
out:
	free(path);
	free(sha);
	free(kind);
	free(data);
	return r;
}

/*
 * The skill's answer: 0 and its reply in m; 1 when the skill said why
 * it failed (in *e); -1 when the answer is malformed (why in *e).
 */
static int
files_answer(struct mp_enc *m, const struct call *c, struct error *e)
{
	static const char *const fail_keys[] = {"ok", "error", NULL};
	static const char *const err_keys[] = {"type", "message", NULL};
	const struct run *r = &c->run;
	const msgpack_object *err;
	char *type = NULL, *msg = NULL;
	struct mp_doc d;
	int ok = 0, ret = -1;

	if (r->out.total > r->out.len)
		return error_set(e, ERR_INTERNAL, "it is over the output cap");
	if (mp_decode(&d, r->out.buf, r->out.len, NULL, e) == -1)
		return error_set(e, ERR_INTERNAL,
		    "no msgpack map (the skill exited %" PRId64 ")",
		    c->x.exit_code);
	if (mp_bool(d.root, "ok", 1, &ok, e) == -1)
		;
	else if (!ok && mp_only_keys(d.root, fail_keys, e) == 0 &&
	         (err = mp_get(d.root, "error")) != NULL &&
	         err->type == MSGPACK_OBJECT_MAP &&
	         mp_only_keys(err, err_keys, e) == 0 &&
	         mp_str(err, "type", 1, 32, &type, e) == 0 &&
	         mp_str(err, "message", 1, ERROR_MSG_MAX - 1, &msg, e) == 0) {
		if (files_err(type) == ERR__COUNT)
			error_set(e, ERR_INTERNAL,
			    "an error type it may not give (%s): %s", type,
			    msg);
		else {
			error_set(e, files_err(type), "%s", msg);
			ret = 1;
		}
	} else if (!ok)
		error_set(e, ERR_INTERNAL, "a failure without its reason");
	else if (c->x.exit_code != 0)
		error_set(e, ERR_INTERNAL, "ok, but the skill exited %" PRId64,
		    c->x.exit_code);
	else {
		client_reply_begin(m, creq_type_name(c->cr.type), &c->cr.id, 1);
		enc_kstr(m, "session", c->cr.session);
		if ((ret = files_ok_copy(m, c, d.root, e)) == 0) {
			enc_kuint(m, "queued_ms", c->queued_ms);
			client_reply_end(m);
		}
	}
	free(type);
	free(msg);
	mp_doc_free(&d);
	return ret;
}

/* The reply to a session file request, whatever path its call took. */
void
reply_file(struct mp_enc *m, const struct call *c)
{
	enum err_type t = c->err;
	struct error e = {ERR_NONE, ""};
	char msg[ERROR_MSG_MAX + REASON_MAX_LEN];

	int r = 0;

	if (t == ERR_NONE && (r = files_answer(m, c, &e)) == 0)
		return;
	enc_free(m);
	enc_init(m);
	if (r == 1)
		client_error_enc(m, &c->cr.id, e.type, e.msg);
	else if (r == -1) {
		snprintf(msg, sizeof(msg), "the files skill answered badly: %s",
		    e.msg);
		client_error_enc(m, &c->cr.id, ERR_INTERNAL, msg);
	} else if (t == ERR_UNKNOWN_SKILL || t == ERR_SKILL_NOT_ENABLED ||
	           t == ERR_UNKNOWN_COMMAND || t == ERR_PERMISSION_DENIED) {
		snprintf(msg, sizeof(msg),
		    "session files are calls of the skill \"%s\" "
		    "(skills/files), which the policy does not let run: %s",
		    FILES_SKILL, c->errmsg);
		client_error_enc(m, &c->cr.id, t, msg);
	} else
		client_error_enc(m, &c->cr.id, t, c->errmsg);
}
