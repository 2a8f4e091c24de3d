/*
 * broker_request.c: one client request through the roles.
 *   invoke:    AUTHZ -> audit decision (durable) -> RUN -> RUNNING -> reply
 *   authorize: AUTHZ -> audit decision (durable) -> reply
 *   skills:    SKILLS_REQ -> reply
 * A message from policyd or the master that names a request not in the
 * state that expects it is a protocol violation.
 */
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

static int on_authz_ans(struct peer *p, const struct mp_doc *d);
static int on_skills_ans(struct peer *p, const struct mp_doc *d);
static int on_reload_ans(struct peer *p, const struct mp_doc *d);
static int on_run_started(struct peer *p, const struct mp_doc *d);
static int on_run_exited(struct peer *p, const struct mp_doc *d);
static int on_peer_channel(struct peer *p, const struct mp_doc *d);
static int on_serve(struct peer *p, const struct mp_doc *d);

const struct peer_handler policyd_table[] = {
    {MSG_AUTHZ_ANS, 0, on_authz_ans},
    {MSG_SKILLS_ANS, 0, on_skills_ans},
    {MSG_RELOAD_ANS, 0, on_reload_ans},
    {0, 0, NULL},
};
const struct peer_handler master_table[] = {
    {MSG_RUN_STARTED, 0, on_run_started},
    {MSG_RUN_EXITED, 0, on_run_exited},
    {MSG_PEER_CHANNEL, 0, on_peer_channel},
    {MSG_SERVE, PH_ONCE, on_serve},
    {0, 0, NULL},
};
const struct peer_handler auditd_table[] = {
    {MSG_AUDIT_ACK, 0, audit_on_ack},
    {0, 0, NULL},
};

struct request *
request_find(uint64_t ref)
{
	struct request *r;

	LIST_FOREACH(r, &B->requests, entry)
	if (r->ref == ref)
		return r;
	return NULL;
}

void
request_end(struct request *r)
{
	LIST_REMOVE(r, entry);
	if (r->c != NULL)
		r->c->inflight--;
	run_free(r);
	client_req_free(&r->cr);
	msg_authz_ans_free(&r->ans);
	msg_run_exited_free(&r->x);
	free(r);
}

/* A typed error for this request, with the decision when there was one. */
void
request_reply_error(struct request *r, enum err_type t, const char *msg)
{
	if (r->ans.reason == NULL) {
		r->ans.reason = xstrdup(msg);
		r->ans.err = t;
	}
	r->x.err = t;
	free(r->x.message);
	r->x.message = xstrdup(msg);
	reply_result(r);
	request_end(r);
}

/* Every request waiting in st fails with t (a peer went away). */
void
requests_fail_state(enum rstate st, enum err_type t, const char *msg)
{
	struct request *r, *next;

	for (r = LIST_FIRST(&B->requests); r != NULL; r = next) {
		next = LIST_NEXT(r, entry);
		if (r->st == st)
			request_reply_error(r, t, msg);
	}
}

void
requests_detach(struct client *c)
{
	struct request *r;

	LIST_FOREACH(r, &B->requests, entry)
	if (r->c == c)
		r->c = NULL;
}

static void
send_authz(struct request *r)
{
	struct msg_authz_req a;
	struct mp_enc m;

	memset(&a, 0, sizeof(a));
	a.ref = r->ref;
	a.uid = r->uid;
	a.gid = r->gid;
	a.pid = r->pid;
	a.skill = r->cr.skill;
	a.command = r->cr.command;
	a.session = r->cr.session;
	a.phase = r->cr.phase;
	a.args = r->cr.args;
	a.nargs = r->cr.nargs;
	a.env = r->cr.env;
	a.nenv = r->cr.nenv;
	a.timeout_ms = r->cr.timeout_ms;
	a.dry_run = r->cr.type == CREQ_AUTHORIZE;
	enc_init(&m);
	msg_authz_req_enc(&m, &a);
	peer_send(&B->policyd, &m, NULL, 0);
	enc_free(&m);
}

/* Takes ownership of *cr. */
void
request_start(struct client *c, struct client_req *cr)
{
	struct request *r = xcalloc(1, sizeof(*r));
	struct mp_enc m;

	r->ref = ++B->next_ref;
	r->c = c;
	r->uid = c->uid;
	r->gid = c->gid;
	r->pid = c->pid;
	r->cr = *cr;
	memset(cr, 0, sizeof(*cr));
	r->in_fd = r->out.fd = r->err.fd = -1;
	now_rfc3339(r->ts, sizeof(r->ts));
	LIST_INSERT_HEAD(&B->requests, r, entry);
	c->inflight++;
	if (!B->policyd.alive) {
		request_reply_error(r, ERR_POLICY_UNAVAILABLE,
		    "policyd is not running; nothing can be authorized");
		return;
	}
	if (r->cr.type == CREQ_SKILLS) {
		r->st = R_SKILLS;
		enc_init(&m);
		msg_ref_enc(&m, MSG_SKILLS_REQ, r->ref);
		peer_send(&B->policyd, &m, NULL, 0);
		enc_free(&m);
		return;
	}
	if (r->cr.type == CREQ_RELOAD) { /* policyd decides who is admin */
		r->st = R_RELOAD;
		enc_init(&m);
		msg_begin(&m, MSG_RELOAD_REQ, 3);
		enc_kuint(&m, "ref", r->ref);
		enc_kuint(&m, "uid", r->uid);
		enc_kuint(&m, "gid", r->gid);
		peer_send(&B->policyd, &m, NULL, 0);
		enc_free(&m);
		return;
	}
	if (!B->auditd.alive) {
		request_reply_error(r, ERR_AUDIT_UNAVAILABLE,
		    "auditd is not running; nothing runs unaudited");
		return;
	}
	if (r->cr.type == CREQ_INVOKE) {
		B->stat_invokes++;
		audit_request(r, "invoke.received", "start", "unknown");
	}
	r->st = R_AUTHZ;
	send_authz(r);
}

static int
on_authz_ans(struct peer *p, const struct mp_doc *d)
{
	struct msg_authz_ans a;
	struct request *r;
	struct error e;

	(void)p;
	if (msg_authz_ans_dec(d, &a, &e) == -1) {
		log_warnx("policyd: %s", e.msg);
		return -1;
	}
	if ((r = request_find(a.ref)) == NULL || r->st != R_AUTHZ ||
	    (a.allowed && r->cr.type == CREQ_INVOKE &&
	        !grant_id_valid(a.grant_id))) {
		msg_authz_ans_free(&a);
		return -1;
	}
	r->ans = a;
	if (*a.command != '\0') { /* the command the decision resolved */
		free(r->cr.command);
		r->cr.command = xstrdup(a.command);
	}
	r->st = R_AUDIT_DECISION;
	r->audit_ref = audit_request(r, "policy.decision",
	    a.allowed ? "allowed" : "denied",
	    a.allowed ? "success" : "failure");
	if (r->audit_ref == 0) /* auditd died after the request came in */
		request_reply_error(r, ERR_AUDIT_UNAVAILABLE,
		    "auditd is not running; nothing runs unaudited");
	return 0;
}

/* Called by the audit layer once the decision record is durable. */
void
request_decision_durable(struct request *r, int ok, const char *msg)
{
	struct msg_run run;
	struct mp_enc m;

	if (!ok) {
		request_reply_error(r, ERR_AUDIT_UNAVAILABLE, msg);
		return;
	}
	if (!r->ans.allowed) {
		request_reply_error(
		    r, (enum err_type)r->ans.err, r->ans.reason);
		return;
	}
	if (r->cr.type == CREQ_AUTHORIZE) {
		reply_result(r);
		request_end(r);
		return;
	}
	if (!B->master.alive) {
		request_reply_error(r, ERR_INTERNAL, "no master");
		return;
	}
	r->st = R_RUN_WAIT;
	run.ref = r->ref;
	run.grant_id = r->ans.grant_id;
	enc_init(&m);
	msg_run_enc(&m, &run);
	peer_send(&B->master, &m, NULL, 0);
	enc_free(&m);
}

static int
on_skills_ans(struct peer *p, const struct mp_doc *d)
{
	static const char *const keys[] = {"t", "ref", "skills", NULL};
	const msgpack_object *skills;
	struct request *r;
	struct error e;
	struct mp_enc m;
	uint64_t ref;

	(void)p;
	if (mp_only_keys(d->root, keys, &e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &ref, &e) ||
	    (skills = mp_get(d->root, "skills")) == NULL ||
	    skills->type != MSGPACK_OBJECT_ARRAY ||
	    (r = request_find(ref)) == NULL || r->st != R_SKILLS)
		return -1;
	enc_init(&m);
	enc_map(&m, 4);
	enc_kstr(&m, "type", "skills");
	enc_str(&m, "id");
	client_id_enc(&m, &r->cr.id);
	enc_kbool(&m, "ok", 1);
	enc_str(&m, "skills");
	enc_obj(&m, skills);
	client_send(r->c, &m);
	enc_free(&m);
	request_end(r);
	return 0;
}

static int
on_run_started(struct peer *p, const struct mp_doc *d)
{
	struct msg_run_started s;
	struct request *r;
	struct error e;
	int fds[3], i;

	for (i = 0; i < 3; i++)
		fds[i] = chan_take_fd(&p->ch);
	if (msg_run_started_dec(d, &s, &e) == -1 || fds[2] == -1 ||
	    (r = request_find(s.ref)) == NULL || r->st != R_RUN_WAIT) {
		for (i = 0; i < 3; i++)
			if (fds[i] != -1)
				close(fds[i]);
		return -1;
	}
	run_started(r, fds[0], fds[1], fds[2]);
	return 0;
}

static int
on_run_exited(struct peer *p, const struct mp_doc *d)
{
	struct msg_run_exited x;
	struct request *r;
	struct error e;

	(void)p;
	if (msg_run_exited_dec(d, &x, &e) == -1 ||
	    (r = request_find(x.ref)) == NULL ||
	    (r->st != R_RUN_WAIT && r->st != R_RUNNING) || r->exited) {
		msg_run_exited_free(&x);
		return -1;
	}
	msg_run_exited_free(&r->x);
	r->x = x;
	if (r->st == R_RUN_WAIT) {
		r->x.message = NULL;
		request_reply_error(r, (enum err_type)x.err, x.message);
		free(x.message);
		return 0;
	}
	run_exited(r);
	return 0;
}

/* The master restarted policyd or auditd: talk to it on the new fd. */
static int
on_peer_channel(struct peer *p, const struct mp_doc *d)
{
	struct peer *target;
	struct error e;
	char *role;
	int fd = chan_take_fd(&p->ch);

	if (fd == -1 || msg_peer_channel_dec(d, &role, &e) == -1) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	target = strcmp(role, "policyd") == 0 ? &B->policyd : &B->auditd;
	free(role);
	peer_kill(target, "replaced by a restarted process");
	peer_init(target, B->base, fd,
	    target == &B->policyd ? "policyd" : "auditd",
	    target == &B->policyd ? policyd_table : auditd_table,
	    target->on_dead, NULL);
	if (target == &B->auditd)
		B->audit_acked = B->audit_sent;
	log_info("%s is back", target->name);
	return 0;
}

static int
on_reload_ans(struct peer *p, const struct mp_doc *d)
{
	static const char *const keys[] = {
	    "t", "ref", "ok", "err", "message", NULL};
	uint64_t ref, err;
	char *msg = NULL;
	struct request *r;
	struct mp_enc m;
	struct error e;
	int ok;

	(void)p;
	if (mp_only_keys(d->root, keys, &e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &ref, &e) ||
	    mp_bool(d->root, "ok", 1, &ok, &e) ||
	    mp_uint(d->root, "err", 1, ERR__COUNT - 1, &err, &e) ||
	    mp_str(d->root, "message", 1, REASON_MAX_LEN, &msg, &e) ||
	    (r = request_find(ref)) == NULL || r->st != R_RELOAD) {
		free(msg);
		return -1;
	}
	if (!ok)
		client_error(r->c, &r->cr.id, (enum err_type)err, msg, 0);
	else if (r->c != NULL) {
		enc_init(&m);
		enc_map(&m, 4);
		enc_kstr(&m, "type", "reload");
		enc_str(&m, "id");
		client_id_enc(&m, &r->cr.id);
		enc_kbool(&m, "ok", 1);
		enc_kstr(&m, "message", msg);
		client_send(r->c, &m);
		enc_free(&m);
	}
	free(msg);
	request_end(r);
	return 0;
}

/* Start-up barrier: every role is ready, so clients may come in. */
static int
on_serve(struct peer *p, const struct mp_doc *d)
{
	static const char *const keys[] = {"t", NULL};
	struct error e;

	(void)p;
	if (mp_only_keys(d->root, keys, &e) == -1)
		return -1;
	if (evconnlistener_enable(B->listener) == -1)
		fatalx("cannot enable the listener");
	log_debug("serving clients");
	return 0;
}
