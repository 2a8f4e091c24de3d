/*
 * broker_reply.c: the replies a client reads, each inside the one reply
 * envelope of proto/client.c. The result of invoke and authorize keeps
 * the ToolInvokeResult shape (docs/protocol.md).
 */
#include <stdio.h>
#include <string.h>

#include "broker.h"

static void
reply_policy(struct mp_enc *m, const struct call *c)
{
	enc_key(m, "policy");
	enc_map_open(m);
	enc_kbool(
	    m, "allowed", c->ans.reason != NULL && c->ans.err == ERR_NONE);
	enc_kstr(m, "decision_reason",
	    c->ans.reason != NULL ? c->ans.reason : c->errmsg);
	enc_kstrarr(m, "matched_rules", c->ans.rules, c->ans.nrules);
	enc_map_close(m);
}

/* stdout first, then stderr, within output_bytes together. */
static void
reply_output(struct mp_enc *m, const struct call *c)
{
	const struct run *r = &c->run;
	size_t cap = c->ans.output_bytes, so, se;

	so = r->out.len < cap ? r->out.len : cap;
	se = r->err.len < cap - so ? r->err.len : cap - so;
	enc_key(m, "output");
	enc_map_open(m);
	enc_kbin(m, "stdout", r->out.buf, so);
	enc_kbin(m, "stderr", r->err.buf, se);
	enc_kbool(m, "truncated", r->out.total > so || r->err.total > se);
	enc_kuint(m, "stdout_bytes", r->out.total);
	enc_kuint(m, "stderr_bytes", r->err.total);
	enc_map_close(m);
}

static void
reply_effects(struct mp_enc *m, const struct call *c)
{
	size_t i;

	enc_key(m, "effects");
	enc_map_open(m);
	enc_key(m, "process");
	enc_map_open(m);
	enc_key(m, "exit_code");
	if (c->x.exit_code >= 0)
		enc_int(m, c->x.exit_code);
	else
		enc_nil(m);
	enc_key(m, "signal");
	if (c->x.signal > 0)
		enc_int(m, c->x.signal);
	else
		enc_nil(m);
	enc_kuint(m, "duration_ms", c->x.duration_ms);
	enc_kuint(m, "cpu_ms", c->x.cpu_ms);
	enc_kuint(m, "max_rss_kb", c->x.max_rss_kb);
	enc_map_close(m);
	enc_key(m, "files_written");
	enc_array(m, c->files.nfiles);
	for (i = 0; i < c->files.nfiles; i++) {
		enc_map_open(m);
		enc_kstr(m, "path", c->files.files[i].path);
		enc_kuint(m, "size_bytes", c->files.files[i].size);
		enc_kstr(m, "sha256", c->files.files[i].sha256);
		enc_map_close(m);
	}
	enc_map_close(m);
}

/* The result of invoke or authorize. */
void
reply_result(struct mp_enc *m, const struct call *c)
{
	client_reply_begin(m, "result", &c->cr.id, c->err == ERR_NONE);
	enc_kstr(m, "skill", c->cr.skill);
	enc_kstr(m, "command", c->cr.command);
	enc_kstr(m, "timestamp_utc", c->ts);
	if (c->cr.type == CREQ_INVOKE) /* in line, before it was decided */
		enc_kuint(m, "queued_ms",
		    c->out_of_line ? c->queued_ms : now_mono_ms() - c->t0_ms);
	reply_policy(m, c);
	if (c->cr.type == CREQ_AUTHORIZE && c->ans.effective_len > 0) {
		enc_key(m, "effective");
		enc_raw(m, c->ans.effective, c->ans.effective_len);
	}
	if (c->ran) {
		reply_output(m, c);
		reply_effects(m, c);
	}
	if (c->err != ERR_NONE)
		client_error_field(m, c->err, c->errmsg);
	client_reply_end(m);
}

void
reply_skills(struct mp_enc *m, const struct client_id *id,
    const struct msg_skills_ans *a)
{
	const struct msg_skill *s;
	size_t i;

	client_reply_begin(m, "skills", id, 1);
	enc_key(m, "skills");
	enc_array(m, a->nskills);
	for (i = 0; i < a->nskills; i++) {
		s = &a->skills[i];
		enc_map_open(m);
		enc_kstr(m, "name", s->name);
		enc_kstr(m, "description", s->description);
		enc_kbool(m, "valid", s->valid);
		enc_kstrarr(m, "commands", s->commands, s->ncommands);
		if (!s->valid)
			enc_kstr(m, "error", s->error);
		if (s->nwarnings > 0)
			enc_kstrarr(m, "warnings", s->warnings, s->nwarnings);
		enc_map_close(m);
	}
	if (a->truncated)
		enc_kbool(m, "truncated", 1);
	client_reply_end(m);
}

void
reply_reload(struct mp_enc *m, const struct client_id *id, const char *message)
{
	client_reply_begin(m, "reload", id, 1);
	enc_kstr(m, "message", message);
	client_reply_end(m);
}

/* The skill map of a skill_info reply; texts only when asked for. */
static void
reply_info_skill(
    struct mp_enc *m, const struct msg_skill_info_ans *a, int texts)
{
	const struct msg_info_ref *f;
	size_t i;

	enc_key(m, "skill");
	enc_map_open(m);
	enc_kstr(m, "name", a->name);
	enc_kstr(m, "description", a->description);
	enc_key(m, "frontmatter");
	enc_raw(m, a->frontmatter, a->frontmatter_len);
	enc_kstr(m, "body", a->body);
	enc_key(m, "commands");
	enc_array(m, a->ncommands);
	for (i = 0; i < a->ncommands; i++) {
		enc_map_open(m);
		enc_kstr(m, "name", a->commands[i].name);
		enc_kstr(m, "description", a->commands[i].description);
		enc_kbool(m, "allowed", a->commands[i].allowed);
		enc_kbool(m, "ask", a->commands[i].ask);
		enc_map_close(m);
	}
	enc_key(m, "permissions");
	enc_raw(m, a->permissions, a->permissions_len);
	enc_key(m, "references");
	enc_array(m, a->nrefs);
	for (i = 0; i < a->nrefs; i++) {
		f = &a->refs[i];
		enc_map_open(m);
		enc_kstr(m, "path", f->path);
		enc_kuint(m, "size_bytes", f->size);
		enc_kstr(m, "sha256", f->sha256);
		if (texts && f->omitted == INFO_OMIT_NONE)
			enc_kstr(m, "text", f->text);
		else if (texts)
			enc_kstr(m, "text_omitted",
			    info_omit_name((enum info_omit)f->omitted));
		enc_map_close(m);
	}
	enc_kbool(m, "references_truncated", a->refs_truncated);
	enc_map_close(m);
}

/* The reply must fit the client's frame, as every request must. */
void
reply_skill_info(struct mp_enc *m, const struct client_id *id,
    const struct msg_skill_info_ans *a, int texts)
{
	char msg[128];

	client_reply_begin(m, "skill_info", id, 1);
	reply_info_skill(m, a, texts);
	client_reply_end(m);
	if (m->sb.size <= B->max_frame)
		return;
	/* policyd keeps within the budget it was given: this is a bug. */
	snprintf(msg, sizeof(msg),
	    "the skill_info reply came to %zu bytes, over max_frame_bytes "
	    "(%zu)",
	    m->sb.size, B->max_frame);
	enc_free(m);
	enc_init(m);
	client_error_enc(m, id, ERR_INTERNAL, msg);
}

void
reply_hello(struct mp_enc *m, const struct client_id *id, const struct conn *cn)
{
	enum creq_type t;
	size_t n;

	client_reply_begin(m, "hello", id, 1);
	enc_kstr(m, "server", "skillbroker");
	enc_kstr(m, "version", SB_VERSION); /* the Makefile's VERSION */
	enc_kuint(m, "protocol", cn->proto);
	enc_key(m, "principal");
	enc_map_open(m);
	enc_kuint(m, "uid", cn->uid);
	enc_kuint(m, "gid", cn->gid);
	enc_kint(m, "pid", cn->pid);
	enc_map_close(m);
	enc_key(m, "capabilities");
	enc_map_open(m);
	enc_kuint(m, "protocol_min", CLIENT_PROTO_MIN);
	enc_kuint(m, "protocol_max", CLIENT_PROTO_MAX);
	for (t = 0, n = 0; t < CREQ__COUNT; t++)
		n += (size_t)creq_supported(t);
	enc_key(m, "requests");
	enc_array(m, n);
	for (t = 0; t < CREQ__COUNT; t++)
		if (creq_supported(t))
			enc_str(m, creq_type_name(t));
	enc_key(m, "limits");
	enc_map_open(m);
	enc_kuint(m, "max_frame_bytes", B->max_frame);
	enc_kuint(m, "in_flight", CONN_INFLIGHT_MAX);
	enc_kuint(m, "args", ARGS_MAX);
	enc_kuint(m, "arg_bytes", ARG_MAX_LEN);
	enc_kuint(m, "env", CLIENT_ENV_MAX);
	enc_kuint(m, "max_timeout_ms", B->max_timeout_ms);
	enc_kuint(m, "file_path_bytes", CLIENT_PATH_MAX);
	enc_kuint(m, "put_file_bytes", files_put_max());
	enc_kuint(m, "reply_bytes",
	    B->max_frame + B->call_output + CLIENT_REPLY_FIELDS);
	enc_map_close(m);
	enc_map_close(m);
	client_reply_end(m);
}

/* The counters and gauges of broker_stats.c, as they are now. */
void
reply_stats(struct mp_enc *m, const struct client_id *id)
{
	struct stats s;

	stats_get(&s);
	client_reply_begin(m, "stats", id, 1);
	stats_enc(m, &s);
	client_reply_end(m);
}
