/*
 * msg_authz.c: the broker <-> policyd channel: decisions (AUTHZ_REQ,
 * AUTHZ_ANS), the skill list (SKILLS_REQ, SKILLS_ANS) and an admin's
 * reload (RELOAD_REQ, RELOAD_ANS).
 */
#include "msg.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

#define EFFECTIVE_MAX (64 * 1024) /* bytes of the effective map */

void
msg_authz_req_enc(struct mp_enc *m, const struct msg_authz_req *r)
{
	msg_begin(m, MSG_AUTHZ_REQ);
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
	enc_kuint(m, "queued_ms", r->queued_ms);
	enc_kbool(m, "dry_run", r->dry_run);
	enc_kbool(m, "approved", r->approved);
	msg_end(m);
}

int
msg_authz_req_dec(
    const struct mp_doc *d, struct msg_authz_req *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "uid", "gid", "pid",
	    "skill", "command", "session", "phase", "args", "env", "timeout_ms",
	    "queued_ms", "dry_run", "approved", NULL};
	const msgpack_object *o = d->root;

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &r->ref, e) ||
	    mp_uint(o, "uid", 1, UINT32_MAX, &r->uid, e) ||
	    mp_uint(o, "gid", 1, UINT32_MAX, &r->gid, e) ||
	    mp_int(o, "pid", 1, 0, INT32_MAX, &r->pid, e) ||
	    mp_str(o, "skill", 1, NAME_MAX_LEN, &r->skill, e) ||
	    mp_str(o, "command", 1, COMMAND_MAX_LEN, &r->command, e) ||
	    mp_str(o, "session", 1, SESSION_MAX_LEN, &r->session, e) ||
	    mp_str(o, "phase", 1, 32, &r->phase, e) ||
	    mp_strarr(
	        o, "args", 1, ARGS_MAX, ARG_MAX_LEN, &r->args, &r->nargs, e) ||
	    mp_strarr(
	        o, "env", 1, ENV_MAX, ARG_MAX_LEN, &r->env, &r->nenv, e) ||
	    mp_uint(o, "timeout_ms", 1, UINT32_MAX, &r->timeout_ms, e) ||
	    mp_uint(o, "queued_ms", 1, UINT32_MAX, &r->queued_ms, e) ||
	    mp_bool(o, "dry_run", 1, &r->dry_run, e) ||
	    mp_bool(o, "approved", 1, &r->approved, e)) {
		msg_authz_req_free(r);
		return -1;
	}
	if (r->dry_run && r->approved) { /* nobody is asked for a dry run */
		msg_authz_req_free(r);
		return error_set(
		    e, ERR_BAD_REQUEST, "a dry run is never approved");
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
	msg_begin(m, MSG_AUTHZ_ANS);
	enc_kuint(m, "ref", a->ref);
	enc_kuint(m, "err", a->err);
	enc_kstr(m, "reason", a->reason);
	enc_kstrarr(m, "rules", a->rules, a->nrules);
	enc_kstr(m, "grant_id", a->grant_id ? a->grant_id : "");
	enc_kuint(m, "timeout_ms", a->timeout_ms);
	enc_kuint(m, "output_bytes", a->output_bytes);
	enc_kstr(m, "command", a->command ? a->command : "");
	enc_key(m, "effective");
	if (a->effective_len > 0)
		enc_raw(m, a->effective, a->effective_len);
	else {
		enc_map_open(m);
		enc_map_close(m);
	}
	enc_kbool(m, "ask", a->ask);
	msg_end(m);
}

int
msg_authz_ans_dec(
    const struct mp_doc *d, struct msg_authz_ans *a, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "err", "reason", "rules",
	    "grant_id", "timeout_ms", "output_bytes", "command", "effective",
	    "ask", NULL};
	const msgpack_object *o = d->root;

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &a->ref, e) ||
	    mp_uint(o, "err", 1, ERR__COUNT - 1, &a->err, e) ||
	    mp_str(o, "reason", 1, REASON_MAX_LEN, &a->reason, e) ||
	    mp_strarr(o, "rules", 1, 64, 512, &a->rules, &a->nrules, e) ||
	    mp_str(o, "grant_id", 1, GRANT_ID_LEN, &a->grant_id, e) ||
	    mp_uint(o, "timeout_ms", 1, UINT32_MAX, &a->timeout_ms, e) ||
	    mp_uint(o, "output_bytes", 1, UINT32_MAX, &a->output_bytes, e) ||
	    mp_str(o, "command", 1, COMMAND_MAX_LEN, &a->command, e) ||
	    mp_rawmap(o, "effective", EFFECTIVE_MAX, &a->effective,
	        &a->effective_len, e) ||
	    mp_bool(o, "ask", 1, &a->ask, e))
		goto bad;
	if (*a->grant_id != '\0' &&
	    (a->err != ERR_NONE || !grant_id_valid(a->grant_id))) {
		error_set(e, ERR_BAD_REQUEST, "a grant id without a grant");
		goto bad;
	}
	/* An ask is a denial to whoever does not ask, and never a grant. */
	if (a->ask && (a->err != ERR_APPROVAL_DENIED || *a->grant_id != '\0')) {
		error_set(e, ERR_BAD_REQUEST,
		    "an ask is approval_denied and carries no grant");
		goto bad;
	}
	return 0;
bad:
	msg_authz_ans_free(a);
	return -1;
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

void
msg_skills_req_enc(struct mp_enc *m, uint64_t ref)
{
	msg_begin(m, MSG_SKILLS_REQ);
	enc_kuint(m, "ref", ref);
	msg_end(m);
}

int
msg_skills_req_dec(const struct mp_doc *d, uint64_t *ref, struct error *e)
{
	static const char *const keys[] = {"t", "ref", NULL};

	return mp_only_keys(d->root, keys, e) ||
	               mp_uint(d->root, "ref", 1, UINT64_MAX, ref, e)
	           ? -1
	           : 0;
}

void
msg_skills_ans_enc(struct mp_enc *m, const struct msg_skills_ans *a)
{
	const struct msg_skill *s;
	size_t i;

	msg_begin(m, MSG_SKILLS_ANS);
	enc_kuint(m, "ref", a->ref);
	enc_kbool(m, "truncated", a->truncated);
	enc_key(m, "skills");
	enc_array(m, a->nskills);
	for (i = 0; i < a->nskills; i++) {
		s = &a->skills[i];
		enc_map_open(m);
		enc_kstr(m, "name", s->name);
		enc_kstr(m, "description", s->description);
		enc_kbool(m, "valid", s->valid);
		enc_kstr(m, "error", s->error ? s->error : "");
		enc_kstrarr(m, "commands", s->commands, s->ncommands);
		enc_kstrarr(m, "warnings", s->warnings, s->nwarnings);
		enc_map_close(m);
	}
	msg_end(m);
}

static int
skill_dec(const msgpack_object *o, struct msg_skill *s, struct error *e)
{
	static const char *const keys[] = {"name", "description", "valid",
	    "error", "commands", "warnings", NULL};

	if (o->type != MSGPACK_OBJECT_MAP)
		return error_set(e, ERR_BAD_REQUEST, "a skill is not a map");
	return mp_only_keys(o, keys, e) ||
	               mp_str(o, "name", 1, NAME_MAX_LEN, &s->name, e) ||
	               mp_str(o, "description", 1, SKILL_DESC_MAX,
	                   &s->description, e) ||
	               mp_bool(o, "valid", 1, &s->valid, e) ||
	               mp_str(o, "error", 1, REASON_MAX_LEN, &s->error, e) ||
	               mp_strarr(o, "commands", 1, COMMANDS_MAX, PATH_MAX_LEN,
	                   &s->commands, &s->ncommands, e) ||
	               mp_strarr(o, "warnings", 1, SKILL_WARNINGS_MAX,
	                   SKILL_WARNING_MAX, &s->warnings, &s->nwarnings, e)
	           ? -1
	           : 0;
}

int
msg_skills_ans_dec(
    const struct mp_doc *d, struct msg_skills_ans *a, struct error *e)
{
	static const char *const keys[] = {
	    "t", "ref", "truncated", "skills", NULL};
	const msgpack_object *o = d->root, *arr;
	uint32_t i;

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &a->ref, e) ||
	    mp_bool(o, "truncated", 1, &a->truncated, e))
		goto bad;
	arr = mp_get(o, "skills");
	if (arr == NULL || arr->type != MSGPACK_OBJECT_ARRAY ||
	    arr->via.array.size > SKILLS_LIST_MAX) {
		error_set(e, ERR_BAD_REQUEST,
		    "field \"skills\" must be an array of at most %d",
		    SKILLS_LIST_MAX);
		goto bad;
	}
	a->skills = xcalloc(arr->via.array.size + 1, sizeof(*a->skills));
	for (i = 0; i < arr->via.array.size; i++) {
		a->nskills++;
		if (skill_dec(&arr->via.array.ptr[i], &a->skills[i], e) == -1)
			goto bad;
	}
	return 0;
bad:
	msg_skills_ans_free(a);
	return -1;
}

void
msg_skills_ans_free(struct msg_skills_ans *a)
{
	size_t i;

	for (i = 0; i < a->nskills; i++) {
		free(a->skills[i].name);
		free(a->skills[i].description);
		free(a->skills[i].error);
		strarr_free(a->skills[i].commands, a->skills[i].ncommands);
		strarr_free(a->skills[i].warnings, a->skills[i].nwarnings);
	}
	free(a->skills);
	memset(a, 0, sizeof(*a));
}

void
msg_reload_req_enc(struct mp_enc *m, const struct msg_reload_req *r)
{
	msg_begin(m, MSG_RELOAD_REQ);
	enc_kuint(m, "ref", r->ref);
	enc_kuint(m, "uid", r->uid);
	enc_kuint(m, "gid", r->gid);
	msg_end(m);
}

int
msg_reload_req_dec(
    const struct mp_doc *d, struct msg_reload_req *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "uid", "gid", NULL};

	memset(r, 0, sizeof(*r));
	return mp_only_keys(d->root, keys, e) ||
	               mp_uint(d->root, "ref", 1, UINT64_MAX, &r->ref, e) ||
	               mp_uint(d->root, "uid", 1, UINT32_MAX, &r->uid, e) ||
	               mp_uint(d->root, "gid", 1, UINT32_MAX, &r->gid, e)
	           ? -1
	           : 0;
}

void
msg_reload_ans_enc(struct mp_enc *m, const struct msg_reload_ans *a)
{
	msg_begin(m, MSG_RELOAD_ANS);
	enc_kuint(m, "ref", a->ref);
	enc_kuint(m, "err", a->err);
	enc_kstr(m, "message", a->message);
	msg_end(m);
}

int
msg_reload_ans_dec(
    const struct mp_doc *d, struct msg_reload_ans *a, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "err", "message", NULL};

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &a->ref, e) ||
	    mp_uint(d->root, "err", 1, ERR__COUNT - 1, &a->err, e) ||
	    mp_str(d->root, "message", 1, REASON_MAX_LEN, &a->message, e)) {
		msg_reload_ans_free(a);
		return -1;
	}
	return 0;
}

void
msg_reload_ans_free(struct msg_reload_ans *a)
{
	free(a->message);
	memset(a, 0, sizeof(*a));
}

void
msg_admins_enc(struct mp_enc *m, const struct msg_admins *a)
{
	size_t i;

	msg_begin(m, MSG_ADMINS);
	enc_key(m, "uids");
	enc_array(m, a->nuids);
	for (i = 0; i < a->nuids; i++)
		enc_uint(m, a->uids[i]);
	enc_key(m, "gids");
	enc_array(m, a->ngids);
	for (i = 0; i < a->ngids; i++)
		enc_uint(m, a->gids[i]);
	msg_end(m);
}

int
msg_admins_dec(const struct mp_doc *d, struct msg_admins *a, struct error *e)
{
	static const char *const keys[] = {"t", "uids", "gids", NULL};

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uintarr(d->root, "uids", 1, ADMINS_MAX, UINT32_MAX, &a->uids,
	        &a->nuids, e) ||
	    mp_uintarr(d->root, "gids", 1, ADMINS_MAX, UINT32_MAX, &a->gids,
	        &a->ngids, e)) {
		msg_admins_free(a);
		return -1;
	}
	return 0;
}

void
msg_admins_free(struct msg_admins *a)
{
	free(a->uids);
	free(a->gids);
	memset(a, 0, sizeof(*a));
}
