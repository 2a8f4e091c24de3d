/* msg.c: encoders and strict decoders for the internal messages. */
#include "msg.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/xmalloc.h"

int
msg_type_of(const struct mp_doc *d, uint64_t *type, struct error *e)
{
	return mp_uint(d->root, "t", 1, 255, type, e);
}

void
msg_begin(struct mp_enc *m, enum msg_type t, size_t nfields)
{
	enc_map(m, nfields + 1);
	enc_kuint(m, "t", (uint64_t)t);
}

int
grant_id_valid(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != GRANT_ID_LEN)
		return 0;
	for (i = 0; i < GRANT_ID_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		        (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

void
msg_ready_enc(struct mp_enc *m, const char *role)
{
	msg_begin(m, MSG_READY, 2);
	enc_kuint(m, "v", PROTO_VERSION);
	enc_kstr(m, "role", role);
}

int
msg_ready_dec(const struct mp_doc *d, struct msg_ready *r, struct error *e)
{
	static const char *const keys[] = {"t", "v", "role", NULL};

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "v", 1, UINT32_MAX, &r->version, e) ||
	    mp_str(d->root, "role", 1, 32, &r->role, e))
		return -1;
	return 0;
}

void
msg_ready_free(struct msg_ready *r)
{
	free(r->role);
	memset(r, 0, sizeof(*r));
}

void
msg_authz_req_enc(struct mp_enc *m, const struct msg_authz_req *r)
{
	msg_begin(m, MSG_AUTHZ_REQ, 12);
	enc_kuint(m, "ref", r->ref);
	enc_kuint(m, "uid", r->uid);
	enc_kuint(m, "gid", r->gid);
	enc_kint(m, "pid", r->pid);
	enc_kstr(m, "skill", r->skill);
	enc_kstr(m, "command", r->command);
	enc_kstr(m, "session", r->session);
	enc_kstr(m, "phase", r->phase);
	enc_kstrarr(m, "args", r->args, r->nargs);
	enc_kstrarr(m, "env", r->env, r->nenv);
	enc_kuint(m, "timeout_ms", r->timeout_ms);
	enc_kbool(m, "dry_run", r->dry_run);
}

int
msg_authz_req_dec(
    const struct mp_doc *d, struct msg_authz_req *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "uid", "gid", "pid",
	    "skill", "command", "session", "phase", "args", "env", "timeout_ms",
	    "dry_run", NULL};
	const msgpack_object *o = d->root;

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &r->ref, e) ||
	    mp_uint(o, "uid", 1, UINT32_MAX, &r->uid, e) ||
	    mp_uint(o, "gid", 1, UINT32_MAX, &r->gid, e) ||
	    mp_int(o, "pid", 1, 0, INT32_MAX, &r->pid, e) ||
	    mp_str(o, "skill", 1, NAME_MAX_LEN, &r->skill, e) ||
	    mp_str(o, "command", 1, NAME_MAX_LEN, &r->command, e) ||
	    mp_str(o, "session", 1, SESSION_MAX_LEN, &r->session, e) ||
	    mp_str(o, "phase", 1, 32, &r->phase, e) ||
	    mp_strarr(
	        o, "args", 1, ARGS_MAX, ARG_MAX_LEN, &r->args, &r->nargs, e) ||
	    mp_strarr(o, "env", 1, 64, ARG_MAX_LEN, &r->env, &r->nenv, e) ||
	    mp_uint(o, "timeout_ms", 1, UINT32_MAX, &r->timeout_ms, e) ||
	    mp_bool(o, "dry_run", 1, &r->dry_run, e)) {
		msg_authz_req_free(r);
		return -1;
	}
	return 0;
}

void
msg_authz_req_free(struct msg_authz_req *r)
{
	free(r->skill);
	free(r->command);
	free(r->session);
	free(r->phase);
	strarr_free(r->args, r->nargs);
	strarr_free(r->env, r->nenv);
	memset(r, 0, sizeof(*r));
}

void
msg_authz_ans_enc(struct mp_enc *m, const struct msg_authz_ans *a)
{
	msg_begin(m, MSG_AUTHZ_ANS, 10);
	enc_kuint(m, "ref", a->ref);
	enc_kbool(m, "allowed", a->allowed);
	enc_kuint(m, "err", a->err);
	enc_kstr(m, "reason", a->reason);
	enc_kstrarr(m, "rules", a->rules, a->nrules);
	enc_kstr(m, "grant_id", a->grant_id ? a->grant_id : "");
	enc_kuint(m, "timeout_ms", a->timeout_ms);
	enc_kuint(m, "output_bytes", a->output_bytes);
	enc_kstr(m, "command", a->command ? a->command : "");
	enc_str(m, "effective");
	if (a->effective_len > 0) {
		if (msgpack_sbuffer_write(
		        &m->sb, (const char *)a->effective, a->effective_len))
			fatalx("msgpack encode failed");
	} else
		enc_map(m, 0);
}

/* Keep a decoded map as its own msgpack bytes, to pass it on as is. */
static int
mp_keep_map(const msgpack_object *map, const char *key, uint8_t **out,
    size_t *len, struct error *e)
{
	const msgpack_object *o = NULL;
	struct mp_enc m;

	if (mp_submap(map, key, 1, &o, e) == -1)
		return -1;
	enc_init(&m);
	enc_obj(&m, o);
	*out = xmalloc(m.sb.size);
	memcpy(*out, m.sb.data, m.sb.size);
	*len = m.sb.size;
	enc_free(&m);
	return 0;
}

int
msg_authz_ans_dec(
    const struct mp_doc *d, struct msg_authz_ans *a, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "allowed", "err",
	    "reason", "rules", "grant_id", "timeout_ms", "output_bytes",
	    "command", "effective", NULL};
	const msgpack_object *o = d->root;

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &a->ref, e) ||
	    mp_bool(o, "allowed", 1, &a->allowed, e) ||
	    mp_uint(o, "err", 1, ERR__COUNT - 1, &a->err, e) ||
	    mp_str(o, "reason", 1, REASON_MAX_LEN, &a->reason, e) ||
	    mp_strarr(o, "rules", 1, 64, 512, &a->rules, &a->nrules, e) ||
	    mp_str(o, "grant_id", 1, GRANT_ID_LEN, &a->grant_id, e) ||
	    mp_uint(o, "timeout_ms", 1, UINT32_MAX, &a->timeout_ms, e) ||
	    mp_uint(o, "output_bytes", 1, UINT32_MAX, &a->output_bytes, e) ||
	    mp_str(o, "command", 1, NAME_MAX_LEN, &a->command, e) ||
	    mp_keep_map(o, "effective", &a->effective, &a->effective_len, e)) {
		msg_authz_ans_free(a);
		return -1;
	}
	if (a->allowed != (a->err == ERR_NONE)) {
		msg_authz_ans_free(a);
		return error_set(
		    e, ERR_INTERNAL, "decision and error disagree");
	}
	return 0;
}

void
msg_authz_ans_free(struct msg_authz_ans *a)
{
	free(a->reason);
	strarr_free(a->rules, a->nrules);
	free(a->grant_id);
	free(a->command);
	free(a->effective);
	memset(a, 0, sizeof(*a));
}

static const char *const grant_perm_keys[5] = {
    "fs_read", "fs_write", "network", "exec", "env_names"};

void
grant_enc(struct mp_enc *m, const struct grant *g)
{
	size_t i;

	msg_begin(m, MSG_GRANT, 30);
	enc_kstr(m, "grant_id", g->grant_id);
	enc_kstr(m, "skill", g->skill);
	enc_kstr(m, "command", g->command);
	enc_kstr(m, "skill_dir", g->skill_dir);
	enc_kstr(m, "entry", g->entry);
	enc_kstrarr(m, "args", g->args, g->nargs);
	enc_kstrarr(m, "env", g->env, g->nenv);
	enc_kstr(m, "work_dir", g->work_dir);
	enc_kstr(m, "data_dir", g->data_dir);
	for (i = 0; i < 5; i++)
		enc_kstrarr(m, grant_perm_keys[i], g->perm[i], g->nperm[i]);
	enc_kuint(m, "principal_uid", g->principal_uid);
	enc_kstr(m, "session", g->session);
	enc_kuint(m, "timeout_ms", g->timeout_ms);
	enc_kuint(m, "output_bytes", g->output_bytes);
	enc_kuint(m, "memory_mb", g->memory_mb);
	enc_kuint(m, "pids", g->pids);
	enc_kuint(m, "fsize_mb", g->fsize_mb);
	enc_kuint(m, "nofile", g->nofile);
	enc_kuint(m, "worker_uid", g->worker_uid);
	enc_kuint(m, "worker_gid", g->worker_gid);
	enc_kstr(m, "root_dir", g->root_dir ? g->root_dir : "");
	enc_kstrarr(m, "sys_paths", g->sys_paths, g->nsys_paths);
	enc_kuint(m, "tmp_mb", g->tmp_mb);
	enc_kuint(m, "as_mb", g->as_mb);
	enc_kbool(m, "net_host", g->net_host);
	enc_kuint(m, "v", PROTO_VERSION);
}

static int
grant_perms_dec(const msgpack_object *o, struct grant *g, struct error *e)
{
	int i;

	for (i = 0; i < 5; i++)
		if (mp_strarr(o, grant_perm_keys[i], 1, 64, 1024, &g->perm[i],
		        &g->nperm[i], e) == -1)
			return -1;
	return 0;
}

int
grant_dec(const struct mp_doc *d, struct grant *g, struct error *e)
{
	static const char *const keys[] = {"t", "grant_id", "skill", "command",
	    "skill_dir", "entry", "args", "env", "work_dir", "data_dir",
	    "fs_read", "fs_write", "network", "exec", "env_names",
	    "principal_uid", "session", "timeout_ms", "output_bytes",
	    "memory_mb", "pids", "fsize_mb", "nofile", "worker_uid",
	    "worker_gid", "root_dir", "sys_paths", "tmp_mb", "as_mb",
	    "net_host", "v", NULL};
	const msgpack_object *o = d->root;
	uint64_t v;

	memset(g, 0, sizeof(*g));
	if (mp_only_keys(o, keys, e) || mp_uint(o, "v", 1, UINT32_MAX, &v, e) ||
	    mp_str(o, "grant_id", 1, GRANT_ID_LEN, &g->grant_id, e) ||
	    mp_str(o, "skill", 1, NAME_MAX_LEN, &g->skill, e) ||
	    mp_str(o, "command", 1, NAME_MAX_LEN, &g->command, e) ||
	    mp_str(o, "skill_dir", 1, PATH_MAX_LEN, &g->skill_dir, e) ||
	    mp_str(o, "entry", 1, PATH_MAX_LEN, &g->entry, e) ||
	    mp_strarr(
	        o, "args", 1, ARGS_MAX, ARG_MAX_LEN, &g->args, &g->nargs, e) ||
	    mp_strarr(o, "env", 1, 64, ARG_MAX_LEN, &g->env, &g->nenv, e) ||
	    mp_str(o, "work_dir", 1, PATH_MAX_LEN, &g->work_dir, e) ||
	    mp_str(o, "data_dir", 1, PATH_MAX_LEN, &g->data_dir, e) ||
	    grant_perms_dec(o, g, e) ||
	    mp_uint(o, "principal_uid", 1, UINT32_MAX, &g->principal_uid, e) ||
	    mp_str(o, "session", 1, SESSION_MAX_LEN, &g->session, e) ||
	    mp_uint(o, "timeout_ms", 1, 86400000, &g->timeout_ms, e) ||
	    mp_uint(
	        o, "output_bytes", 1, 64 * 1024 * 1024, &g->output_bytes, e) ||
	    mp_uint(o, "memory_mb", 1, 1024 * 1024, &g->memory_mb, e) ||
	    mp_uint(o, "pids", 1, 65536, &g->pids, e) ||
	    mp_uint(o, "fsize_mb", 1, 1024 * 1024, &g->fsize_mb, e) ||
	    mp_uint(o, "nofile", 1, 65536, &g->nofile, e) ||
	    mp_uint(o, "worker_uid", 1, UINT32_MAX, &g->worker_uid, e) ||
	    mp_uint(o, "worker_gid", 1, UINT32_MAX, &g->worker_gid, e) ||
	    mp_str(o, "root_dir", 1, PATH_MAX_LEN, &g->root_dir, e) ||
	    mp_strarr(o, "sys_paths", 1, 64, PATH_MAX_LEN, &g->sys_paths,
	        &g->nsys_paths, e) ||
	    mp_uint(o, "tmp_mb", 1, 65536, &g->tmp_mb, e) ||
	    mp_uint(o, "as_mb", 1, 4 * 1024 * 1024, &g->as_mb, e) ||
	    mp_bool(o, "net_host", 1, &g->net_host, e)) {
		grant_free(g);
		return -1;
	}
	if (v != PROTO_VERSION || !grant_id_valid(g->grant_id) ||
	    g->skill_dir[0] != '/' || g->work_dir[0] != '/' ||
	    g->data_dir[0] != '/' || strstr(g->entry, "..") != NULL ||
	    g->entry[0] == '/' || g->entry[0] == '\0') {
		grant_free(g);
		return error_set(e, ERR_INTERNAL, "malformed grant");
	}
	return 0;
}

void
grant_free(struct grant *g)
{
	int i;

	free(g->grant_id);
	free(g->skill);
	free(g->command);
	free(g->skill_dir);
	free(g->entry);
	strarr_free(g->args, g->nargs);
	strarr_free(g->env, g->nenv);
	free(g->work_dir);
	free(g->data_dir);
	for (i = 0; i < 5; i++)
		strarr_free(g->perm[i], g->nperm[i]);
	free(g->session);
	free(g->root_dir);
	strarr_free(g->sys_paths, g->nsys_paths);
	memset(g, 0, sizeof(*g));
}

void
msg_grant_ack_enc(struct mp_enc *m, const struct msg_grant_ack *a)
{
	msg_begin(m, MSG_GRANT_ACK, 2);
	enc_kstr(m, "grant_id", a->grant_id);
	enc_kbool(m, "ok", a->ok);
}

int
msg_grant_ack_dec(
    const struct mp_doc *d, struct msg_grant_ack *a, struct error *e)
{
	static const char *const keys[] = {"t", "grant_id", "ok", NULL};

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_str(d->root, "grant_id", 1, GRANT_ID_LEN, &a->grant_id, e) ||
	    mp_bool(d->root, "ok", 1, &a->ok, e)) {
		msg_grant_ack_free(a);
		return -1;
	}
	return 0;
}

void
msg_grant_ack_free(struct msg_grant_ack *a)
{
	free(a->grant_id);
	memset(a, 0, sizeof(*a));
}

void
msg_run_enc(struct mp_enc *m, const struct msg_run *r)
{
	msg_begin(m, MSG_RUN, 2);
	enc_kuint(m, "ref", r->ref);
	enc_kstr(m, "grant_id", r->grant_id);
}

int
msg_run_dec(const struct mp_doc *d, struct msg_run *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "grant_id", NULL};

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &r->ref, e) ||
	    mp_str(d->root, "grant_id", 1, GRANT_ID_LEN, &r->grant_id, e)) {
		msg_run_free(r);
		return -1;
	}
	if (!grant_id_valid(r->grant_id)) {
		msg_run_free(r);
		return error_set(e, ERR_BAD_REQUEST, "malformed grant id");
	}
	return 0;
}

void
msg_run_free(struct msg_run *r)
{
	free(r->grant_id);
	memset(r, 0, sizeof(*r));
}

void
msg_run_started_enc(struct mp_enc *m, const struct msg_run_started *r)
{
	msg_begin(m, MSG_RUN_STARTED, 2);
	enc_kuint(m, "ref", r->ref);
	enc_kint(m, "pid", r->pid);
}

int
msg_run_started_dec(
    const struct mp_doc *d, struct msg_run_started *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "pid", NULL};

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &r->ref, e) ||
	    mp_int(d->root, "pid", 1, 1, INT32_MAX, &r->pid, e))
		return -1;
	return 0;
}

void
msg_run_exited_enc(struct mp_enc *m, const struct msg_run_exited *r)
{
	size_t i;

	msg_begin(m, MSG_RUN_EXITED, 11);
	enc_kuint(m, "ref", r->ref);
	enc_kbool(m, "started", r->started);
	enc_kint(m, "exit_code", r->exit_code);
	enc_kint(m, "signal", r->signal);
	enc_kbool(m, "timed_out", r->timed_out);
	enc_kuint(m, "duration_ms", r->duration_ms);
	enc_kuint(m, "cpu_ms", r->cpu_ms);
	enc_kuint(m, "max_rss_kb", r->max_rss_kb);
	enc_kuint(m, "err", r->err);
	enc_kstr(m, "message", r->message ? r->message : "");
	enc_str(m, "files");
	enc_array(m, r->nfiles);
	for (i = 0; i < r->nfiles; i++) {
		enc_map(m, 3);
		enc_kstr(m, "path", r->files[i].path);
		enc_kuint(m, "size_bytes", r->files[i].size);
		enc_kstr(m, "sha256", r->files[i].sha256);
	}
}

/* files: [{path, size_bytes, sha256}], each field checked. */
static int
written_dec(
    const msgpack_object *map, struct msg_run_exited *r, struct error *e)
{
	static const char *const keys[] = {
	    "path", "size_bytes", "sha256", NULL};
	const msgpack_object *a = mp_get(map, "files"), *it;
	uint32_t i;

	if (a == NULL)
		return error_set(e, ERR_BAD_REQUEST, "missing field \"files\"");
	if (a->type != MSGPACK_OBJECT_ARRAY ||
	    a->via.array.size > FILES_WRITTEN_MAX)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"files\" must be "
		    "an array of at most %d entries",
		    FILES_WRITTEN_MAX);
	r->files = xcalloc(a->via.array.size + 1, sizeof(*r->files));
	for (i = 0; i < a->via.array.size; i++) {
		it = &a->via.array.ptr[i];
		if (it->type != MSGPACK_OBJECT_MAP)
			return error_set(e, ERR_BAD_REQUEST,
			    "an item of "
			    "\"files\" is not a map");
		if (mp_only_keys(it, keys, e) ||
		    mp_str(it, "path", 1, PATH_MAX_LEN, &r->files[i].path, e) ||
		    mp_uint(it, "size_bytes", 1, UINT64_MAX, &r->files[i].size,
		        e) ||
		    mp_str(it, "sha256", 1, 64, &r->files[i].sha256, e))
			return -1;
		r->nfiles++;
	}
	return 0;
}

int
msg_run_exited_dec(
    const struct mp_doc *d, struct msg_run_exited *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "started", "exit_code",
	    "signal", "timed_out", "duration_ms", "cpu_ms", "max_rss_kb", "err",
	    "message", "files", NULL};
	const msgpack_object *o = d->root;

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &r->ref, e) ||
	    mp_bool(o, "started", 1, &r->started, e) ||
	    mp_int(o, "exit_code", 1, -1, 255, &r->exit_code, e) ||
	    mp_int(o, "signal", 1, 0, 128, &r->signal, e) ||
	    mp_bool(o, "timed_out", 1, &r->timed_out, e) ||
	    mp_uint(o, "duration_ms", 1, UINT64_MAX, &r->duration_ms, e) ||
	    mp_uint(o, "cpu_ms", 1, UINT64_MAX, &r->cpu_ms, e) ||
	    mp_uint(o, "max_rss_kb", 1, UINT64_MAX, &r->max_rss_kb, e) ||
	    mp_uint(o, "err", 1, ERR__COUNT - 1, &r->err, e) ||
	    mp_str(o, "message", 1, REASON_MAX_LEN, &r->message, e) ||
	    written_dec(o, r, e)) {
		msg_run_exited_free(r);
		return -1;
	}
	return 0;
}

void
msg_run_exited_free(struct msg_run_exited *r)
{
	size_t i;

	for (i = 0; i < r->nfiles; i++) {
		free(r->files[i].path);
		free(r->files[i].sha256);
	}
	free(r->files);
	free(r->message);
	memset(r, 0, sizeof(*r));
}

void
msg_audit_ack_enc(struct mp_enc *m, const struct msg_audit_ack *a)
{
	msg_begin(m, MSG_AUDIT_ACK, 3);
	enc_kuint(m, "ref", a->ref);
	enc_kbool(m, "ok", a->ok);
	enc_kstr(m, "message", a->message ? a->message : "");
}

int
msg_audit_ack_dec(
    const struct mp_doc *d, struct msg_audit_ack *a, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "ok", "message", NULL};

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &a->ref, e) ||
	    mp_bool(d->root, "ok", 1, &a->ok, e) ||
	    mp_str(d->root, "message", 1, REASON_MAX_LEN, &a->message, e)) {
		msg_audit_ack_free(a);
		return -1;
	}
	return 0;
}

void
msg_audit_ack_free(struct msg_audit_ack *a)
{
	free(a->message);
	memset(a, 0, sizeof(*a));
}

void
msg_ref_enc(struct mp_enc *m, enum msg_type t, uint64_t ref)
{
	msg_begin(m, t, 1);
	enc_kuint(m, "ref", ref);
}

int
msg_ref_dec(const struct mp_doc *d, uint64_t *ref, struct error *e)
{
	static const char *const keys[] = {"t", "ref", NULL};

	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, ref, e))
		return -1;
	return 0;
}

void
msg_peer_channel_enc(struct mp_enc *m, const char *role)
{
	msg_begin(m, MSG_PEER_CHANNEL, 1);
	enc_kstr(m, "role", role);
}

int
msg_peer_channel_dec(const struct mp_doc *d, char **role, struct error *e)
{
	static const char *const keys[] = {"t", "role", NULL};

	*role = NULL;
	if (mp_only_keys(d->root, keys, e) ||
	    mp_str(d->root, "role", 1, 32, role, e))
		return -1;
	if (strcmp(*role, "policyd") != 0 && strcmp(*role, "auditd") != 0) {
		free(*role);
		*role = NULL;
		return error_set(e, ERR_INTERNAL, "unknown role");
	}
	return 0;
}
