/*
 * mcp_call.c: tools/call. The tool's name is resolved in the catalog
 * (refreshed once for a name it lacks), the files are put into the
 * session chunk by chunk, each put_file's reply checked (its size, and
 * the whole file's sha256 at the end), then the command is invoked in
 * phase execution. Every step is a request in flight with a callback;
 * the call's one broker request is in req_id, so notifications/cancelled
 * can cancel it. A cancelled call is answered by nothing, as MCP says.
 */
#include "mcp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

static void mcp_call_resolve(struct mcp_server *s, struct mcp_call *c);

/* Forget c. */
static void
mcp_call_free(struct mcp_server *s, struct mcp_call *c)
{
	mcp_approve_withdraw(s, c);
	TAILQ_REMOVE(&s->calls, c, entry);
	s->ncalls--;
	mcp_args_free(&c->args);
	json_decref(c->rpc_id);
	json_decref(c->params);
	json_decref(c->progress);
	free(c->tool);
	free(c->skill);
	free(c->command);
	free(c);
}

/* Answer c with result (stolen), unless it was cancelled; forget it. */
static void
mcp_call_answer(struct mcp_server *s, struct mcp_call *c, json_t *result)
{
	if (!c->cancelled)
		mcp_send_result(s, c->rpc_id, result);
	else
		json_decref(result);
	mcp_call_free(s, c);
}

/* A result of one text item, isError. */
static json_t *
mcp_call_error_result(const char *text)
{
	return json_pack("{s:[{s:s, s:o}], s:b}", "content", "type", "text",
	    "text", mcp_text_json(text, strlen(text)), "isError", 1);
}

/* End c with isError and a message. */
static void mcp_call_fail(struct mcp_server *s, struct mcp_call *c,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void
mcp_call_fail(struct mcp_server *s, struct mcp_call *c, const char *fmt, ...)
{
	char *msg;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) == -1)
		fatal("vasprintf");
	va_end(ap);
	mcp_call_answer(s, c, mcp_call_error_result(msg));
	free(msg);
}

/* A progress notification for c, when the host asked for them. */
void
mcp_call_progress(
    struct mcp_server *s, struct mcp_call *c, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	json_t *n;

	if (c->progress == NULL || c->cancelled)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = mcp_rpc_notify("notifications/progress",
	    json_pack("{s:O, s:I, s:o}", "progressToken", c->progress,
	        "progress", (json_int_t)c->progress_n++, "message",
	        mcp_text_json(msg, strlen(msg))));
	mcp_send(s, n);
	json_decref(n);
}

/* The call whose broker request in flight is req_id. */
struct mcp_call *
mcp_call_by_req(struct mcp_server *s, const char *req_id)
{
	struct mcp_call *c;

	TAILQ_FOREACH (c, &s->calls, entry)
		if (c->req_id[0] != '\0' && strcmp(c->req_id, req_id) == 0)
			return c;
	return NULL;
}

/* The session a call runs in, or NULL for the broker's default. */
static const char *
mcp_call_session(struct mcp_server *s, struct mcp_call *c)
{
	return c->args.session ? c->args.session : s->session;
}

/* ------------------------------------------------------------ result */

/* {type: "text", text} */
static json_t *
mcp_call_text(json_t *text)
{
	return json_pack("{s:s, s:o}", "type", "text", "text", text);
}

/* A stream of the reply as JSON text ("" when absent). */
static json_t *
mcp_call_stream(const struct sb_reply *r, const char *path)
{
	const void *data;
	const char *str;
	size_t len = 0;

	if ((data = sb_reply_bin(r, path, &len)) != NULL)
		return mcp_text_json(data, len);
	if ((str = sb_reply_str(r, path)) != NULL)
		return mcp_text_json(str, strlen(str));
	return json_string("");
}

/* effects.files_written as a JSON array, and a line of text each. */
static json_t *
mcp_call_files(const struct sb_reply *r, char **text)
{
	char p[96], *t = NULL, *u;
	const char *path, *sha;
	uint64_t size;
	json_t *a = json_array();
	int i, n;

	*text = NULL;
	n = sb_reply_count(r, "effects.files_written");
	for (i = 0; i < n; i++) {
		(void)snprintf(
		    p, sizeof(p), "effects.files_written.%d.path", i);
		path = sb_reply_str(r, p);
		(void)snprintf(
		    p, sizeof(p), "effects.files_written.%d.size_bytes", i);
		if (sb_reply_uint(r, p, &size) == -1)
			size = 0;
		(void)snprintf(
		    p, sizeof(p), "effects.files_written.%d.sha256", i);
		sha = sb_reply_str(r, p);
		if (path == NULL)
			continue;
		json_array_append_new(
		    a, json_pack("{s:o, s:I, s:s}", "path",
		           mcp_text_json(path, strlen(path)), "size_bytes",
		           (json_int_t)size, "sha256", sha ? sha : ""));
		(void)xasprintf(&u, "%s\n%s (%llu bytes, sha256 %s)",
		    t ? t : "files written:", path, (unsigned long long)size,
		    sha && *sha ? sha : "not computed");
		free(t);
		t = u;
	}
	*text = t;
	return a;
}

/* A word on an error the broker's message alone does not explain. */
static const char *
mcp_call_why(struct mcp_server *s, enum sb_err err)
{
	if (err == SB_ERR_APPROVAL_DENIED && !s->caps.elicitation)
		return "\nThe MCP host does not support elicitation (it "
		       "declared no elicitation capability at initialize), so "
		       "the approval the policy's ask rule requires could not "
		       "be asked of a human, and the call was denied.";
	if (err == SB_ERR_PROTOCOL)
		return "\nThe connection to the skillbroker daemon was lost "
		       "(the broker cancels the calls of a connection that "
		       "closes); the next request connects again.";
	return "";
}

/* What a result reply says, for the host: content and
 * structuredContent, and isError when the call failed or the skill
 * exited non-zero. */
static json_t *
mcp_call_result(struct mcp_server *s, struct mcp_call *c, struct sb_reply *r)
{
	json_t *content = json_array(), *sc, *files, *out, *err;
	int64_t code = 0, sig = 0;
	int ok, has_code, has_sig, has_dur, trunc = 0, is_error;
	uint64_t dur = 0;
	char *ftext, *t;
	const char *etype;

	ok = sb_reply_ok(r);
	has_code = sb_reply_int(r, "effects.process.exit_code", &code) == 0;
	has_sig = sb_reply_int(r, "effects.process.signal", &sig) == 0;
	(void)sb_reply_bool(r, "output.truncated", &trunc);
	has_dur = sb_reply_uint(r, "effects.process.duration_ms", &dur) == 0;
	out = mcp_call_stream(r, "output.stdout");
	err = mcp_call_stream(r, "output.stderr");
	files = mcp_call_files(r, &ftext);
	is_error = !ok || (has_code && code != 0) || has_sig;
	sc = json_pack("{s:b, s:s, s:s, s:O, s:O, s:b, s:O}", "ok", ok, "skill",
	    c->skill, "command", c->command, "stdout", out, "stderr", err,
	    "truncated", trunc, "files_written", files);
	json_object_set_new(
	    sc, "exit_code", has_code ? json_integer(code) : json_null());
	json_object_set_new(
	    sc, "signal", has_sig ? json_integer(sig) : json_null());
	json_object_set_new(sc, "duration_ms",
	    has_dur ? json_integer((json_int_t)dur) : json_null());
	if (!ok) {
		etype = mcp_reply_etype(r);
		json_object_set_new(sc, "error",
		    json_pack("{s:o, s:o}", "type",
		        mcp_text_json(etype, strlen(etype)), "message",
		        mcp_text_json(
		            mcp_reply_emsg(r), strlen(mcp_reply_emsg(r)))));
		(void)xasprintf(&t, "%s %s failed: %s: %s%s", c->skill,
		    c->command, etype, mcp_reply_emsg(r),
		    mcp_call_why(s, sb_reply_error(r)));
		json_array_append_new(
		    content, mcp_call_text(mcp_text_json(t, strlen(t))));
		free(t);
	}
	if (ok || json_string_length(out) > 0)
		json_array_append_new(content, mcp_call_text(json_incref(out)));
	if (json_string_length(err) > 0) {
		(void)xasprintf(&t, "stderr:\n%s", json_string_value(err));
		json_array_append_new(
		    content, mcp_call_text(json_stringn(t, strlen(t))));
		free(t);
	}
	if (has_code || has_sig) {
		(void)xasprintf(&t,
		    has_code ? "exit code: %lld" : "killed by signal %lld",
		    (long long)(has_code ? code : sig));
		json_array_append_new(content, mcp_call_text(json_string(t)));
		free(t);
	}
	if (ftext != NULL) {
		json_array_append_new(content,
		    mcp_call_text(mcp_text_json(ftext, strlen(ftext))));
		free(ftext);
	}
	if (trunc)
		json_array_append_new(content,
		    mcp_call_text(json_string("(the output was cut at the "
		                              "call's output cap)")));
	json_decref(out);
	json_decref(err);
	json_decref(files);
	return json_pack("{s:o, s:o, s:b}", "content", content,
	    "structuredContent", sc, "isError", is_error);
}

/* ------------------------------------------------------------ invoke */

/* The invoke's reply: the answer. */
static void
mcp_call_invoked(UNUSED struct sb_client *sb, struct sb_reply *r, void *arg)
{
	struct mcp_call *c = arg;
	struct mcp_server *s = c->server;
	json_t *res;

	c->req_id[0] = '\0';
	if (c->cancelled) {
		sb_reply_free(r);
		mcp_call_free(s, c);
		return;
	}
	res = mcp_call_result(s, c, r);
	sb_reply_free(r);
	mcp_call_answer(s, c, res);
}

/* Set the invoke's fields from the arguments; -1 with the field the
 * library refused. */
static int
mcp_call_fields(struct mcp_server *s, struct mcp_call *c, struct sb_req *req,
    const char **bad)
{
	const char *k, *session = mcp_call_session(s, c);
	json_t *v;
	size_t i;

	*bad = "skill";
	if (sb_req_skill(req, c->skill) == -1)
		return -1;
	*bad = "command";
	if (sb_req_command(req, c->command) == -1 ||
	    sb_req_phase(req, "execution") == -1)
		return -1;
	*bad = "session";
	if (session != NULL && sb_req_session(req, session) == -1)
		return -1;
	*bad = "args";
	for (i = 0; i < c->args.argc; i++)
		if (sb_req_arg(req, c->args.argv[i]) == -1)
			return -1;
	*bad = "stdin";
	if (c->args.stdin_data != NULL &&
	    sb_req_stdin(req, c->args.stdin_data, c->args.stdin_len) == -1)
		return -1;
	*bad = "env";
	if (c->args.env != NULL)
		json_object_foreach(c->args.env, k, v)
		{
			if (sb_req_env(req, k, json_string_value(v)) == -1)
				return -1;
		}
	*bad = "timeout_ms";
	if (c->args.timeout_ms > 0 &&
	    sb_req_timeout(req, c->args.timeout_ms) == -1)
		return -1;
	return 0;
}

/* Send the invoke. */
static void
mcp_call_invoke(struct mcp_server *s, struct mcp_call *c)
{
	struct sb_client *sb;
	struct sb_req *req;
	const char *bad = "";
	struct error e;

	c->state = MCP_CALL_INVOKING;
	if ((sb = mcp_broker(s, &e)) == NULL) {
		mcp_call_fail(s, c, "%s", e.msg);
		return;
	}
	mcp_server_req_id(s, c->req_id, sizeof(c->req_id));
	if ((req = sb_req_new("invoke")) == NULL ||
	    sb_req_id(req, c->req_id) == -1 ||
	    mcp_call_fields(s, c, req, &bad) == -1) {
		sb_req_free(req);
		c->req_id[0] = '\0';
		if (!c->cancelled)
			mcp_send_error(s, c->rpc_id, RPC_INVALID_PARAMS,
			    "Invalid params: %s: the broker's bounds refuse "
			    "it",
			    bad);
		mcp_call_free(s, c);
		return;
	}
	if (sb_send(sb, req, mcp_call_invoked, c) == -1) {
		sb_req_free(req);
		c->req_id[0] = '\0';
		mcp_call_fail(s, c,
		    "the call could not be sent to the broker: %s",
		    sb_errmsg(sb));
		return;
	}
	sb_req_free(req);
	mcp_call_progress(s, c, "%s %s: sent to the broker (%s)", c->skill,
	    c->command, c->req_id);
}

/* ------------------------------------------------------------ files */

static void mcp_call_put(struct mcp_server *s, struct mcp_call *c);

/* The sha256 of data, in hex (65 bytes). */
static void
mcp_call_sha256(const void *data, size_t len, char *hex)
{
	if (sha256_mem(data, len, hex) == -1)
		fatalx("cannot compute a sha256");
}

/* A put_file's reply: the next chunk, the next file, or the invoke. */
static void
mcp_call_put_done(UNUSED struct sb_client *sb, struct sb_reply *r, void *arg)
{
	struct mcp_call *c = arg;
	struct mcp_server *s = c->server;
	const struct mcp_file *f = &c->args.files[c->file_i];
	char hex[65];
	const char *sha;
	uint64_t size;

	c->req_id[0] = '\0';
	if (c->cancelled) {
		sb_reply_free(r);
		mcp_call_free(s, c);
		return;
	}
	if (!sb_reply_ok(r)) {
		mcp_call_fail(s, c,
		    "files[%zu] (%s) could not be put into the "
		    "session: %s: %s",
		    c->file_i, f->path, mcp_reply_etype(r), mcp_reply_emsg(r));
		sb_reply_free(r);
		return;
	}
	c->file_off += c->chunk;
	if (sb_reply_uint(r, "size_bytes", &size) == -1 ||
	    size != c->file_off) {
		sb_reply_free(r);
		mcp_call_fail(s, c,
		    "files[%zu] (%s): the broker holds another "
		    "size than was sent",
		    c->file_i, f->path);
		return;
	}
	if (c->file_off == f->len) {
		mcp_call_sha256(f->content, f->len, hex);
		sha = sb_reply_str(r, "sha256");
		if (sha == NULL || strcmp(sha, hex) != 0) {
			sb_reply_free(r);
			mcp_call_fail(s, c,
			    "files[%zu] (%s): the broker holds "
			    "other bytes than were sent",
			    c->file_i, f->path);
			return;
		}
		c->file_i++;
		c->file_off = 0;
	}
	sb_reply_free(r);
	if (c->file_i < c->args.nfiles)
		mcp_call_put(s, c);
	else
		mcp_call_invoke(s, c);
}

/* Send the next chunk of the file being put. */
static void
mcp_call_put(struct mcp_server *s, struct mcp_call *c)
{
	const struct mcp_file *f = &c->args.files[c->file_i];
	const char *session = mcp_call_session(s, c);
	struct sb_client *sb;
	struct sb_req *req;
	struct error e;

	c->state = MCP_CALL_PUTTING;
	if ((sb = mcp_broker(s, &e)) == NULL) {
		mcp_call_fail(s, c, "%s", e.msg);
		return;
	}
	c->chunk = f->len - c->file_off;
	if (c->chunk > s->put_chunk)
		c->chunk = s->put_chunk;
	mcp_server_req_id(s, c->req_id, sizeof(c->req_id));
	if ((req = sb_req_new("put_file")) == NULL ||
	    sb_req_id(req, c->req_id) == -1 ||
	    (session != NULL && sb_req_session(req, session) == -1) ||
	    sb_req_path(req, f->path) == -1 ||
	    sb_req_data(req, f->content + c->file_off, c->chunk) == -1 ||
	    sb_req_offset(req, c->file_off) == -1) {
		sb_req_free(req);
		c->req_id[0] = '\0';
		if (!c->cancelled)
			mcp_send_error(s, c->rpc_id, RPC_INVALID_PARAMS,
			    "Invalid params: files[%zu].path: not a path the "
			    "broker takes (relative, no empty, \".\" or "
			    "\"..\" component, no control character)",
			    c->file_i);
		mcp_call_free(s, c);
		return;
	}
	if (sb_send(sb, req, mcp_call_put_done, c) == -1) {
		sb_req_free(req);
		c->req_id[0] = '\0';
		mcp_call_fail(s, c,
		    "files[%zu] could not be sent to the "
		    "broker: %s",
		    c->file_i, sb_errmsg(sb));
		return;
	}
	sb_req_free(req);
	if (c->file_off == 0)
		mcp_call_progress(s, c, "putting %s into the session", f->path);
}

/* ------------------------------------------------------------ start */

/* The refresh a name the catalog lacked waited for. */
static void
mcp_call_refreshed(struct mcp_server *s, void *arg, const char *err)
{
	struct mcp_call *c = arg;

	if (c->cancelled) {
		mcp_call_free(s, c);
		return;
	}
	if (err != NULL) {
		mcp_call_fail(s, c, "%s", err);
		return;
	}
	mcp_call_resolve(s, c);
}

/* Name to skill and command, then the files or the invoke. */
static void
mcp_call_resolve(struct mcp_server *s, struct mcp_call *c)
{
	const struct mcp_tool *t;

	t = s->have_cat ? mcp_catalog_find(&s->cat, c->tool) : NULL;
	if (t == NULL) {
		if (!c->refreshed &&
		    (!s->have_cat ||
		        now_mono_ms() - s->cat.built_ms > MCP_FRESH_MS)) {
			c->refreshed = 1;
			mcp_broker_refresh(s, mcp_call_refreshed, c);
			return;
		}
		mcp_send_error(s, c->rpc_id, RPC_INVALID_PARAMS,
		    "Unknown tool: %.128s", c->tool);
		mcp_call_free(s, c);
		return;
	}
	c->skill = xstrdup(t->skill);
	c->command = xstrdup(t->command);
	if (c->args.nfiles > 0)
		mcp_call_put(s, c);
	else
		mcp_call_invoke(s, c);
}

/* 1 if a call of this id is in flight. */
static int
mcp_call_busy(struct mcp_server *s, json_t *id)
{
	struct mcp_call *c;

	TAILQ_FOREACH (c, &s->calls, entry)
		if (json_equal(c->rpc_id, id))
			return 1;
	return 0;
}

/* tools/call: check the request, then resolve and run it. */
void
mcp_call_start(struct mcp_server *s, json_t *id, json_t *params)
{
	json_t *name, *args, *meta, *token = NULL;
	struct mcp_call *c;
	struct error e;

	name = params ? json_object_get(params, "name") : NULL;
	args = params ? json_object_get(params, "arguments") : NULL;
	meta = params ? json_object_get(params, "_meta") : NULL;
	if (!json_is_string(name)) {
		mcp_send_error(s, id, RPC_INVALID_PARAMS,
		    "Invalid params: name must be a string");
		return;
	}
	if (meta != NULL && !json_is_object(meta)) {
		mcp_send_error(s, id, RPC_INVALID_PARAMS,
		    "Invalid params: _meta must be an object");
		return;
	}
	if (meta != NULL &&
	    (token = json_object_get(meta, "progressToken")) != NULL &&
	    !mcp_rpc_id_valid(token)) {
		mcp_send_error(s, id, RPC_INVALID_PARAMS,
		    "Invalid params: _meta.progressToken must be a string or "
		    "an integer");
		return;
	}
	if (mcp_call_busy(s, id)) {
		mcp_send_error(s, id, RPC_INVALID_REQUEST,
		    "Invalid Request: a request of this id is in flight");
		return;
	}
	c = xcalloc(1, sizeof(*c));
	if (mcp_args_parse(json_is_null(args) ? NULL : args, &c->args, &e) ==
	    -1) {
		free(c);
		mcp_send_error(
		    s, id, RPC_INVALID_PARAMS, "Invalid params: %s", e.msg);
		return;
	}
	if (s->ncalls >= MCP_CALLS_MAX) {
		mcp_args_free(&c->args);
		free(c);
		mcp_send_result(s, id,
		    mcp_call_error_result("overloaded: too many tool calls in "
		                          "flight; try again when one ended"));
		return;
	}
	c->server = s;
	c->rpc_id = json_incref(id);
	c->params = json_incref(params);
	c->progress = token ? json_incref(token) : NULL;
	c->tool = xstrdup(json_string_value(name));
	TAILQ_INSERT_TAIL(&s->calls, c, entry);
	s->ncalls++;
	mcp_call_progress(s, c, "%s: starting", c->tool);
	mcp_call_resolve(s, c);
}

/* notifications/cancelled for a tools/call: cancel it at the broker. */
void
mcp_call_cancel(struct mcp_server *s, json_t *id)
{
	struct mcp_call *c;

	TAILQ_FOREACH (c, &s->calls, entry)
		if (json_equal(c->rpc_id, id) && !c->cancelled)
			break;
	if (c == NULL)
		return;
	log_debug("tools/call %s cancelled by the host while %s", c->tool,
	    c->state == MCP_CALL_RESOLVING ? "resolving its name"
	    : c->state == MCP_CALL_PUTTING ? "putting its files"
	                                   : "invoked");
	c->cancelled = 1;
	mcp_approve_withdraw(s, c);
	if (c->req_id[0] != '\0' && s->sb != NULL && !s->sb_closing &&
	    sb_cancel(s->sb, c->req_id) == -1)
		log_warnx("cancel %s: %s", c->req_id, sb_errmsg(s->sb));
}
