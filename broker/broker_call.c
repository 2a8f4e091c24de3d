/*
 * broker_call.c: one client request's life, as one state machine.
 *
 *   invoke:    NEW -> QUEUED -> WORKERS -> AUTHZ -> DECISION -> RUN_WAIT
 *              -> RUNNING -> DRAINING -> DONE
 *              (an ask rule: AUTHZ -> APPROVAL -> AUTHZ on a yes,
 *               APPROVAL -> DECISION, a denial, on anything else)
 *   authorize: NEW -> AUTHZ -> DECISION -> DONE
 *   skills:    NEW -> SKILLS -> DONE         reload: NEW -> RELOAD -> DONE
 *   skill_info: NEW -> INFO -> DONE
 *
 * call_edges[] says which event may move a call of which kind out of
 * which state; call_event() is the only place a call changes state, and
 * each state's entry action (call_entry[]) is what the call does on
 * arriving there. A message from a peer that the table does not expect
 * for the call it names is a protocol violation that ends that peer.
 * Any state but DONE may fail (CEV_FAIL), which answers with c->err.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

static int call_event(struct call *c, enum call_event ev);
static void call_line_wake(void);

#define K(t) (1U << (t))
/* invoke, and the session file requests (calls of the files skill) */
#define K_RUN                                                                  \
	(K(CREQ_INVOKE) | K(CREQ_PUT_FILE) | K(CREQ_GET_FILE) |                \
	    K(CREQ_LIST_FILES) | K(CREQ_DELETE_FILE))
#define K_AUTHORIZE K(CREQ_AUTHORIZE)
#define K_SKILLS K(CREQ_SKILLS)
#define K_RELOAD K(CREQ_RELOAD)
#define K_INFO K(CREQ_SKILL_INFO)

static const struct call_edge {
	unsigned kinds; /* the request types this row is for */
	enum call_state from;
	enum call_event ev;
	enum call_state to;
} call_edges[] = {
    {K_RUN, CALL_NEW, CEV_START, CALL_QUEUED},
    {K_AUTHORIZE, CALL_NEW, CEV_START, CALL_AUTHZ},
    {K_SKILLS, CALL_NEW, CEV_START, CALL_SKILLS},
    {K_RELOAD, CALL_NEW, CEV_START, CALL_RELOAD},
    {K_INFO, CALL_NEW, CEV_START, CALL_INFO},
    {K_RUN, CALL_QUEUED, CEV_SESSION_FREE, CALL_WORKERS},
    {K_RUN, CALL_WORKERS, CEV_WORKER_FREE, CALL_AUTHZ},
    {K_RUN | K_AUTHORIZE, CALL_AUTHZ, CEV_AUTHZ_ANS, CALL_DECISION},
    {K_RUN, CALL_AUTHZ, CEV_ASK, CALL_APPROVAL},
    {K_RUN, CALL_APPROVAL, CEV_APPROVED, CALL_AUTHZ},
    {K_RUN, CALL_APPROVAL, CEV_NOT_APPROVED, CALL_DECISION},
    {K_RUN, CALL_DECISION, CEV_AUDIT_ACK, CALL_RUN_WAIT},
    {K_AUTHORIZE, CALL_DECISION, CEV_AUDIT_ACK, CALL_DONE},
    {K_RUN, CALL_RUN_WAIT, CEV_RUN_STARTED, CALL_RUNNING},
    {K_RUN, CALL_RUN_WAIT, CEV_RUN_EXITED, CALL_DONE}, /* refused */
    {K_RUN, CALL_RUNNING, CEV_OUTPUT_DONE, CALL_RUNNING},
    {K_RUN, CALL_RUNNING, CEV_RUN_EXITED, CALL_DRAINING},
    {K_RUN, CALL_DRAINING, CEV_OUTPUT_DONE, CALL_DONE},
    {K_SKILLS, CALL_SKILLS, CEV_SKILLS_ANS, CALL_DONE},
    {K_RELOAD, CALL_RELOAD, CEV_RELOAD_ANS, CALL_DONE},
    {K_INFO, CALL_INFO, CEV_INFO_ANS, CALL_DONE},
};

static const char *const state_names[CALL__COUNT] = {"new", "queued", "workers",
    "authz", "approval", "decision", "run_wait", "running", "draining",
    "skills", "reload", "info", "done"};

const char *
call_state_name(enum call_state st)
{
	return (unsigned)st < CALL__COUNT ? state_names[st] : "unknown";
}

/* The row that lets ev move c now, or NULL. */
static const struct call_edge *
call_edge(const struct call *c, enum call_event ev)
{
	static const struct call_edge fail = {
	    ~0U, CALL_NEW, CEV_FAIL, CALL_DONE};
	size_t i;

	if (ev == CEV_FAIL)
		return c->st != CALL_DONE ? &fail : NULL;
	for (i = 0; i < sizeof(call_edges) / sizeof(call_edges[0]); i++)
		if ((call_edges[i].kinds & K(c->cr.type)) &&
		    call_edges[i].from == c->st && call_edges[i].ev == ev)
			return &call_edges[i];
	return NULL;
}

int
call_expects(const struct call *c, enum call_event ev)
{
	return call_edge(c, ev) != NULL;
}

/*
 * The calls by ref: chains in a table of a power of two slots, at least
 * as many as calls in flight; an empty table is freed.
 */
static struct call **call_slots;
static size_t call_nslots;

static struct call *
call_find(uint64_t ref)
{
	struct call *c;

	if (call_nslots == 0)
		return NULL;
	for (c = call_slots[ref & (call_nslots - 1)]; c != NULL; c = c->hnext)
		if (c->ref == ref)
			return c;
	return NULL;
}

/* Into the table, which doubles when the calls outgrow it. */
static void
call_index_add(struct call *c)
{
	struct call **old = call_slots, *o, *next;
	size_t n = call_nslots, i;

	if (B->ncalls > call_nslots) {
		call_nslots = n ? 2 * n : 64;
		call_slots = xcalloc(call_nslots, sizeof(*call_slots));
		for (i = 0; i < n; i++)
			for (o = old[i]; o != NULL; o = next) {
				next = o->hnext;
				o->hnext =
				    call_slots[o->ref & (call_nslots - 1)];
				call_slots[o->ref & (call_nslots - 1)] = o;
			}
		free(old);
	}
	c->hnext = call_slots[c->ref & (call_nslots - 1)];
	call_slots[c->ref & (call_nslots - 1)] = c;
}

/* Out of the table; the last call out frees it, and the waits ring. */
static void
call_index_del(struct call *c)
{
	struct call **pp = &call_slots[c->ref & (call_nslots - 1)];

	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	if (B->ncalls == 0) { /* and no call waits for any record */
		free(call_slots);
		call_slots = NULL;
		call_nslots = 0;
		audit_wait_clear();
		conn_idle_arm();
	}
}

/* Out of the line for workers. */
static void
call_line_leave(struct call *c)
{
	TAILQ_REMOVE(&B->worker_line, c, wentry);
	c->wentry.tqe_prev = NULL;
	B->nworker_line--;
}

/* Note why the call fails; CEV_FAIL then ends it. */
static enum call_event
call_error(struct call *c, enum err_type t, const char *msg)
{
	c->err = t;
	snprintf(c->errmsg, sizeof(c->errmsg), "%s", msg ? msg : "");
	return CEV_FAIL;
}

static enum call_event
enter_wait(struct call *c UNUSED)
{
	return CEV_NONE;
}

/* invoke: take the session, or wait in its line. */
static enum call_event
enter_queued(struct call *c)
{
	struct error e;

	switch (session_acquire(c, &e)) {
	case 1:
		return CEV_SESSION_FREE;
	case 0:
		return CEV_NONE;
	default:
		return call_error(c, e.type, e.msg);
	}
}

/*
 * invoke: a grant makes the master start a worker, so the call takes one
 * of its uid's share first, or waits in line for one (its timeout runs).
 */
static enum call_event
enter_workers(struct call *c)
{
	struct error e;

	if (quota_take(QUOTA_WORKERS, c->uid, c->gid, &e) == 0) {
		c->holds_worker = 1;
		return CEV_WORKER_FREE;
	}
	if (e.type != ERR_OVERLOADED)
		return call_error(c, e.type, e.msg);
	snprintf(c->line_why, sizeof(c->line_why), "%s", e.msg);
	TAILQ_INSERT_TAIL(&B->worker_line, c, wentry);
	B->nworker_line++;
	return CEV_NONE;
}

static enum call_event
enter_authz(struct call *c)
{
	struct msg_authz_req a;

	if (c->qtimer != NULL && !c->out_of_line) { /* the wait counts */
		evtimer_del(c->qtimer);
		c->queued_ms = now_mono_ms() - c->t0_ms;
		c->out_of_line = 1;
	}
	if (B->stopping)
		return call_error(c, ERR_CANCELLED, "skillbrokerd is stopping");
	if (!B->policyd.alive)
		return call_error(c, ERR_POLICY_UNAVAILABLE,
		    "policyd is not running; nothing can be authorized");
	memset(&a, 0, sizeof(a));
	a.ref = c->ref;
	a.uid = c->uid;
	a.gid = c->gid;
	a.pid = c->pid;
	a.skill = c->cr.skill;
	a.command = c->cr.command;
	a.session = c->cr.session;
	a.phase = c->cr.phase;
	a.args = c->cr.args;
	a.nargs = c->cr.nargs;
	a.env = c->cr.env;
	a.nenv = c->cr.nenv;
	a.timeout_ms = c->cr.timeout_ms;
	a.queued_ms = c->queued_ms;
	a.dry_run = c->cr.type == CREQ_AUTHORIZE;
	a.approved = c->approved;
	PEER_SEND(&B->policyd, msg_authz_req_enc, &a);
	return CEV_NONE;
}

/*
 * The call is not approved (why: a no, no answer in time, nobody to
 * ask): the ask becomes its denial, recorded and answered in DECISION.
 */
static enum call_event
call_not_approved(struct call *c, enum err_type t, const char *why)
{
	char *reason;

	xasprintf(
	    &reason, "%s; %s", c->ans.reason != NULL ? c->ans.reason : "", why);
	free(c->ans.reason);
	c->ans.reason = reason;
	c->ans.err = t;
	return CEV_NOT_APPROVED;
}

/*
 * The approval is settled (by: "client", "admin", "timeout" or
 * "cancelled"): its timer goes, and approval.answered says how, once.
 */
static void
call_approval_close(struct call *c, enum client_approval option, const char *by,
    const struct conn *who)
{
	int yes = option == CLIENT_APPROVAL_YES_ONCE ||
	          option == CLIENT_APPROVAL_YES_IN_SESSION;

	if (!c->appr_open)
		return;
	c->appr_open = 0;
	if (c->appr_timer != NULL)
		evtimer_del(c->appr_timer);
	c->appr_option = option;
	c->appr_by = by;
	if (who != NULL) {
		c->appr_by_uid = who->uid;
		c->appr_by_admin = quota_is_admin(who->uid, who->gid);
	}
	(void)audit_call(c, "approval.answered", yes ? "allowed" : "denied",
	    yes ? "success" : "failure");
}

static void call_approval_timeout(evutil_socket_t fd, short ev, void *arg);

/*
 * invoke: an ask rule decided. A yes the session remembers goes back to
 * policyd at once; a connection that answers approvals is asked (the
 * call's timeout_ms does not run meanwhile: its line timer stopped at
 * AUTHZ); any other connection is refused at once.
 */
static enum call_event
enter_approval(struct call *c)
{
	struct timeval tv = timeval_ms(B->clients.approval_s * 1000);

	if (session_approved(c->session, c->cr.skill)) {
		c->approved = 1;
		c->appr_remembered = 1;
		c->appr_option = CLIENT_APPROVAL_YES_IN_SESSION;
		return CEV_APPROVED;
	}
	if (c->conn == NULL || !c->conn->approvals)
		return call_not_approved(c, ERR_APPROVAL_DENIED,
		    "this connection does not answer approval requests "
		    "(hello approvals: true)");
	if (!B->auditd.alive)
		return call_error(c, ERR_AUDIT_UNAVAILABLE,
		    "auditd is not running; nobody is asked unaudited");
	c->appr = ++B->next_approval;
	c->appr_ms = now_mono_ms();
	c->appr_open = 1;
	(void)audit_call(c, "approval.requested", "start", "unknown");
	approval_request_send(c);
	if (c->appr_timer == NULL && (c->appr_timer = evtimer_new(B->base,
	                                  call_approval_timeout, c)) == NULL)
		fatalx("approval timer");
	if (evtimer_add(c->appr_timer, &tv) == -1)
		fatalx("approval timer");
	return CEV_NONE;
}

#define AUDIT_REFUSED                                                          \
	"the audit log could not record the request; nothing runs unaudited"

/* The decision goes to the log; nothing moves on until it is durable. */
static enum call_event
enter_decision(struct call *c)
{
	int allowed = c->ans.err == ERR_NONE;

	if (c->received_refused)
		return call_error(c, ERR_AUDIT_UNAVAILABLE, AUDIT_REFUSED);
	c->audit_ref = audit_call(c, "policy.decision",
	    allowed ? "allowed" : "denied", allowed ? "success" : "failure");
	if (c->audit_ref == 0)
		return call_error(c, ERR_AUDIT_UNAVAILABLE,
		    "auditd is not running; nothing runs unaudited");
	audit_wait_push(c->audit_ref, c->ref);
	return CEV_NONE;
}

static enum call_event
enter_run_wait(struct call *c)
{
	struct msg_run run = {c->ref, c->ans.grant_id};

	if (c->cancelled) /* call_done gives the grant back */
		return call_error(c, ERR_CANCELLED, c->cancel_why);
	c->run_sent = 1;
	PEER_SEND(&B->master, msg_run_enc, &run);
	return CEV_NONE;
}

static enum call_event
enter_draining(struct call *c)
{
	if (c->output_done)
		return CEV_OUTPUT_DONE;
	run_drain(&c->run);
	return CEV_NONE;
}

static enum call_event
enter_skills(struct call *c)
{

	if (!B->policyd.alive)
		return call_error(
		    c, ERR_POLICY_UNAVAILABLE, "policyd is not running");
	PEER_SEND(&B->policyd, msg_skills_req_enc, c->ref);
	return CEV_NONE;
}

/* policyd decides who is an admin. */
static enum call_event
enter_reload(struct call *c)
{
	struct msg_reload_req r = {c->ref, c->uid, c->gid};

	if (!B->policyd.alive)
		return call_error(
		    c, ERR_POLICY_UNAVAILABLE, "policyd is not running");
	PEER_SEND(&B->policyd, msg_reload_req_enc, &r);
	return CEV_NONE;
}

/* policyd owns the skills; the answer must fit one client frame. */
static enum call_event
enter_info(struct call *c)
{
	struct msg_skill_info_req r = {c->ref, c->uid, c->gid, c->cr.skill,
	    c->cr.references, B->max_frame - INFO_REPLY_ROOM};

	if (!B->policyd.alive)
		return call_error(
		    c, ERR_POLICY_UNAVAILABLE, "policyd is not running");
	PEER_SEND(&B->policyd, msg_skill_info_req_enc, &r);
	return CEV_NONE;
}

static enum call_event (*const call_entry[CALL__COUNT])(struct call *) = {
    [CALL_NEW] = enter_wait,
    [CALL_QUEUED] = enter_queued,
    [CALL_WORKERS] = enter_workers,
    [CALL_AUTHZ] = enter_authz,
    [CALL_APPROVAL] = enter_approval,
    [CALL_DECISION] = enter_decision,
    [CALL_RUN_WAIT] = enter_run_wait,
    [CALL_RUNNING] = enter_wait,
    [CALL_DRAINING] = enter_draining,
    [CALL_SKILLS] = enter_skills,
    [CALL_RELOAD] = enter_reload,
    [CALL_INFO] = enter_info,
    [CALL_DONE] = enter_wait,
};

static void
call_free(struct call *c)
{
	LIST_REMOVE(c, entry);
	B->ncalls--;
	call_index_del(c);
	quota_release(QUOTA_CALLS, c->uid);
	if (c->wentry.tqe_prev != NULL)
		call_line_leave(c);
	if (c->qtimer != NULL)
		event_free(c->qtimer);
	if (c->appr_timer != NULL)
		event_free(c->appr_timer);
	if (c->holds_worker) {
		quota_release(QUOTA_WORKERS, c->uid);
		B->worker_freed = 1;
	}
	if (c->conn != NULL && --c->conn->inflight == 0)
		conn_arm(c->conn);
	if (c->answer != NULL && c->cr.type == CREQ_SKILLS)
		msg_skills_ans_free(c->answer);
	else if (c->answer != NULL && c->cr.type == CREQ_SKILL_INFO)
		msg_skill_info_ans_free(c->answer);
	else if (c->answer != NULL)
		msg_reload_ans_free(c->answer);
	free(c->answer);
	run_close(&c->run);
	client_req_free(&c->cr);
	msg_authz_ans_free(&c->ans);
	msg_run_exited_free(&c->x);
	msg_files_free(&c->files);
	free(c);
}

/* The answer the client reads, whatever path the call took. */
static void
call_reply(struct call *c)
{
	struct msg_reload_ans *ra = c->answer;
	struct mp_enc m;

	enc_init(&m);
	if ((c->cr.type == CREQ_SKILLS || c->cr.type == CREQ_RELOAD ||
	        c->cr.type == CREQ_SKILL_INFO) &&
	    c->err != ERR_NONE)
		client_error_enc(&m, &c->cr.id, c->err, c->errmsg);
	else if (c->cr.type == CREQ_SKILLS)
		reply_skills(&m, &c->cr.id, c->answer);
	else if (c->cr.type == CREQ_SKILL_INFO)
		reply_skill_info(&m, &c->cr.id, c->answer, c->cr.references);
	else if (c->cr.type == CREQ_RELOAD)
		reply_reload(&m, &c->cr.id, ra->message);
	else if (creq_is_file(c->cr.type))
		reply_file(&m, c);
	else {
		reply_result(&m, c);
		session_keep_result(c, &m);
	}
	conn_send(c->conn, &m);
	enc_free(&m);
}

/* DONE: the last record, the reply; the session's next call may go. */
static void
call_done(struct call *c)
{
	struct call *next;
	struct error e;

	if (c->ran && run_files(&c->run, &c->files, &e) == -1)
		log_warnx("call %llu: files report: %s",
		    (unsigned long long)c->ref, e.msg);
	/* Ended while it waited for a human (cancel, hangup, stop). */
	call_approval_close(c, CLIENT_APPROVAL_NONE, "cancelled", NULL);
	if (c->received) /* every invoke.received has its end */
		audit_call(c, "invoke.completed", "end",
		    c->err == ERR_NONE ? "success" : "failure");
	/* A grant it will never run: the master may free its worker now. */
	if (!c->run_sent && c->ans.grant_id != NULL && *c->ans.grant_id != '\0')
		PEER_SEND(&B->master, msg_cancel_enc,
		    &(struct msg_cancel){c->ans.grant_id});
	call_reply(c);
	next = session_release(c);
	call_free(c);
	if (next != NULL)
		(void)call_event(next, CEV_SESSION_FREE);
	call_line_wake();
}

/*
 * A worker of some uid's share came free: the first calls in line that
 * may take one now go on, in the order they came (each uid's share
 * bounds it, so one uid's line does not hold up another's).
 */
static void
call_line_wake(void)
{
	struct call *c, *next;
	struct error e;
	uint64_t *refs;
	size_t n = 0, i;

	if (!B->worker_freed || B->nworker_line == 0)
		return;
	B->worker_freed = 0;
	refs = xcalloc(B->nworker_line, sizeof(*refs));
	for (c = TAILQ_FIRST(&B->worker_line); c != NULL; c = next) {
		next = TAILQ_NEXT(c, wentry);
		if (quota_take(QUOTA_WORKERS, c->uid, c->gid, &e) == -1)
			continue;
		c->holds_worker = 1;
		call_line_leave(c);
		refs[n++] = c->ref;
	}
	/* Moving one call may end others: look each up anew. */
	for (i = 0; i < n; i++)
		if ((c = call_find(refs[i])) != NULL)
			(void)call_event(c, CEV_WORKER_FREE);
	free(refs);
}

/*
 * The one transition function: move c along the table for ev, run the
 * new state's entry action, and follow what it raises. -1 when ev is
 * not legal for c now (the caller ends the peer that sent it).
 */
static int
call_event(struct call *c, enum call_event ev)
{
	const struct call_edge *edge;
	enum call_state from;
	int first = 1;

	do {
		if ((edge = call_edge(c, ev)) == NULL) {
			if (!first)
				fatalx("call %llu: %s raised an illegal event",
				    (unsigned long long)c->ref,
				    call_state_name(c->st));
			log_warnx("call %llu: event %d not expected in %s",
			    (unsigned long long)c->ref, (int)ev,
			    call_state_name(c->st));
			return -1;
		}
		log_debug("call %llu: %s -> %s", (unsigned long long)c->ref,
		    call_state_name(c->st), call_state_name(edge->to));
		from = c->st;
		c->st = edge->to;
		if (B->on_move != NULL)
			B->on_move(c, from);
		stats_move(c, from);
		if (c->st == CALL_DONE) {
			call_done(c);
			return 0;
		}
		ev = call_entry[c->st](c);
		first = 0;
	} while (ev != CEV_NONE);
	return 0;
}

static int
call_fail(struct call *c, enum err_type t, const char *msg)
{
	return call_event(c, call_error(c, t, msg));
}

/* Nobody answered its approval within clients.approval_s. */
static void
call_approval_timeout(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct call *c = arg;
	char why[96], id[32];

	if (c->st != CALL_APPROVAL || !c->appr_open)
		return;
	approval_id_fmt(c->appr, id, sizeof(id));
	snprintf(why, sizeof(why), "approval %s: no answer within %llu s", id,
	    (unsigned long long)B->clients.approval_s);
	call_approval_close(c, CLIENT_APPROVAL_NONE, "timeout", NULL);
	(void)call_event(c, call_not_approved(c, ERR_APPROVAL_TIMEOUT, why));
}

/* Its whole timeout passed while it waited in line. */
static void
call_line_timeout(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct call *c = arg;
	char msg[REASON_MAX_LEN];

	if (c->st != CALL_QUEUED && c->st != CALL_WORKERS)
		return;
	snprintf(msg, sizeof(msg),
	    "the call waited %llu ms, its whole timeout, for %s%s",
	    (unsigned long long)(now_mono_ms() - c->t0_ms),
	    c->st == CALL_QUEUED ? "its session's earlier calls" : "a worker: ",
	    c->st == CALL_QUEUED ? "" : c->line_why);
	(void)call_fail(c, ERR_TIMEOUT, msg);
}

/*
 * invoke: its timeout runs from now, in line too (the client's, or at
 * most limits.max_timeout_ms; policyd takes the wait off the rest).
 */
static void
call_line_timer(struct call *c)
{
	uint64_t ms = c->cr.timeout_ms;
	struct timeval tv;

	if (ms == 0 || ms > B->max_timeout_ms)
		ms = B->max_timeout_ms;
	tv = timeval_ms(ms);
	if ((c->qtimer = evtimer_new(B->base, call_line_timeout, c)) == NULL ||
	    evtimer_add(c->qtimer, &tv) == -1)
		fatalx("call timer");
}

/* A decoded request: admit it as a call (takes cr). */
void
call_start(struct conn *cn, struct client_req *cr)
{
	struct call *c = xcalloc(1, sizeof(*c));
	int audited = creq_runs(cr->type) || cr->type == CREQ_AUTHORIZE;

	c->ref = ++B->next_ref;
	c->st = CALL_NEW;
	c->conn = cn;
	c->uid = cn->uid;
	c->gid = cn->gid;
	c->pid = cn->pid;
	c->cr = *cr;
	memset(cr, 0, sizeof(*cr));
	run_init(&c->run);
	now_rfc3339(c->ts, sizeof(c->ts));
	c->t0_ms = now_mono_ms();
	LIST_INSERT_HEAD(&B->calls, c, entry);
	B->ncalls++;
	call_index_add(c);
	cn->inflight++;
	quota_add(QUOTA_CALLS, c->uid);
	conn_arm(cn);
	if (creq_runs(c->cr.type))
		call_line_timer(c);
	if (!B->policyd.alive)
		(void)call_fail(c, ERR_POLICY_UNAVAILABLE,
		    "policyd is not running; nothing can be authorized");
	else if (audited && !B->auditd.alive)
		(void)call_fail(c, ERR_AUDIT_UNAVAILABLE,
		    "auditd is not running; nothing runs unaudited");
	else {
		if (creq_runs(c->cr.type)) {
			B->stat_invokes++;
			c->received_ref = audit_call(
			    c, "invoke.received", "start", "unknown");
			c->received = c->received_ref != 0;
			if (c->received)
				audit_wait_push(c->received_ref, c->ref);
		}
		(void)call_event(c, CEV_START);
	}
}

/* End a running call's worker; the master answers with RUN_EXITED. */
static void
call_cancel_run(struct call *c)
{
	if (c->cancel_sent || c->ans.grant_id == NULL ||
	    *c->ans.grant_id == '\0')
		return;
	c->cancel_sent = 1;
	PEER_SEND(
	    &B->master, msg_cancel_enc, &(struct msg_cancel){c->ans.grant_id});
}

/*
 * Cancel c: a call that waits for nobody (in line, or for a human's
 * approval) ends now; one that
 * waits for policyd or auditd ends at its answer; a running one has its
 * worker ended by the master. Each is audited as cancelled.
 */
static void
call_cancel(struct call *c, const char *why)
{
	if (c->cancelled)
		return;
	c->cancelled = 1;
	snprintf(c->cancel_why, sizeof(c->cancel_why), "%s", why);
	if (c->st == CALL_QUEUED || c->st == CALL_WORKERS ||
	    c->st == CALL_APPROVAL)
		(void)call_fail(c, ERR_CANCELLED, why);
	else if (c->st == CALL_RUN_WAIT || c->st == CALL_RUNNING)
		call_cancel_run(c);
}

/* The client went away: its calls are cancelled, answered to nobody. */
void
call_conn_gone(struct conn *cn)
{
	uint64_t *refs;
	size_t n = 0, i;
	struct call *c;

	refs = xcalloc(B->ncalls + 1, sizeof(*refs));
	LIST_FOREACH (c, &B->calls, entry)
		if (c->conn == cn) {
			c->conn = NULL;
			refs[n++] = c->ref;
		}
	for (i = 0; i < n; i++)
		if ((c = call_find(refs[i])) != NULL)
			call_cancel(c, "the client disconnected");
	free(refs);
}

/*
 * The call cr->rid names: this connection's, else the one call of that
 * id its uid has on another connection (skillctl cancel); n how many.
 */
static struct call *
call_named(const struct conn *cn, const struct client_req *cr, size_t *n)
{
	struct call *c, *other = NULL;

	*n = 0;
	LIST_FOREACH (c, &B->calls, entry)
		if (c->conn != NULL && c->uid == cn->uid &&
		    client_id_eq(&c->cr.id, &cr->rid)) {
			if (c->conn == cn) {
				*n = 1;
				return c;
			}
			other = c;
			(*n)++;
		}
	return *n == 1 ? other : NULL;
}

void
call_cancel_request(struct conn *cn, const struct client_req *cr)
{
	struct mp_enc m;
	struct call *c;
	size_t n;

	c = call_named(cn, cr, &n);
	enc_init(&m);
	if (c == NULL && n > 1)
		client_error_enc(&m, &cr->id, ERR_BAD_REQUEST,
		    "calls on several connections of this uid have that "
		    "request_id: cancel it from its own connection");
	else if (c == NULL)
		client_error_enc(&m, &cr->id, ERR_NOT_FOUND,
		    "no call of that request_id is in flight for this uid");
	else {
		client_reply_begin(&m, "cancel", &cr->id, 1);
		enc_key(&m, "request_id");
		client_id_enc(&m, &cr->rid);
		enc_kstr(&m, "state", call_state_name(c->st));
		client_reply_end(&m);
	}
	conn_send(cn, &m);
	enc_free(&m);
	if (c != NULL) /* the call's own reply follows this one */
		call_cancel(c, "cancelled by the client");
}

/*
 * approve: the calling connection, or an admin principal from any, gives
 * a pending approval its answer. The reply goes first; then the call
 * goes back to policyd (a yes) or is denied (a no).
 */
void
call_approve_request(struct conn *cn, const struct client_req *cr)
{
	char id[32], why[128];
	struct call *c = NULL;
	struct mp_enc m;
	uint64_t n;
	int own;

	if (approval_id_parse(cr->approval_id, &n) == 0)
		c = approval_find(n);
	enc_init(&m);
	if (c == NULL)
		client_error_enc(&m, &cr->id, ERR_NOT_FOUND,
		    "no approval of that id is pending");
	else if (!approval_may_answer(c, cn)) {
		approval_id_fmt(n, id, sizeof(id));
		snprintf(why, sizeof(why),
		    "only the connection that made the call, or an admin "
		    "principal, may answer approval %s",
		    id);
		client_error_enc(&m, &cr->id, ERR_PERMISSION_DENIED, why);
		c = NULL;
	} else {
		client_reply_begin(&m, "approve", &cr->id, 1);
		approval_id_fmt(n, id, sizeof(id));
		enc_kstr(&m, "approval_id", id);
		client_reply_end(&m);
	}
	conn_send(cn, &m);
	enc_free(&m);
	if (c == NULL)
		return;
	own = c->conn == cn;
	call_approval_close(c, cr->option, own ? "client" : "admin", cn);
	if (cr->option == CLIENT_APPROVAL_NO) {
		snprintf(why, sizeof(why),
		    "approval %s: answered no by uid %u%s", id,
		    (unsigned)cn->uid, own ? "" : " (an admin)");
		(void)call_event(
		    c, call_not_approved(c, ERR_APPROVAL_DENIED, why));
		return;
	}
	if (cr->option == CLIENT_APPROVAL_YES_IN_SESSION)
		session_approve(c->session, c->cr.skill);
	c->approved = 1;
	(void)call_event(c, CEV_APPROVED);
}

/*
 * A peer died: every call that waits on it fails closed. p NULL: the
 * daemon stops, and every call ends, cancelled.
 */
void
calls_peer_lost(struct peer *p)
{
	uint64_t *refs;
	size_t n = 0, i;
	struct call *c;

	refs = xcalloc(B->ncalls + 1, sizeof(*refs));
	LIST_FOREACH (c, &B->calls, entry)
		if (p == NULL ||
		    (p == &B->policyd &&
		        (c->st == CALL_AUTHZ || c->st == CALL_SKILLS ||
		            c->st == CALL_RELOAD || c->st == CALL_INFO)) ||
		    (p == &B->auditd && c->st == CALL_DECISION))
			refs[n++] = c->ref;
	/* Failing one call may start or end others: look each up anew. */
	for (i = 0; i < n; i++)
		if ((c = call_find(refs[i])) != NULL)
			(void)call_fail(c,
			    p == NULL          ? ERR_CANCELLED
			    : p == &B->policyd ? ERR_POLICY_UNAVAILABLE
			                       : ERR_AUDIT_UNAVAILABLE,
			    p == NULL ? "skillbrokerd is stopping"
			    : p == &B->policyd
			        ? "policyd stopped before deciding"
			        : "auditd stopped before the decision was "
			          "recorded");
	free(refs);
}

int
call_on_authz_ans(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_authz_ans a;
	enum call_event ev;
	struct call *c;
	struct error e;
	int want_grant;

	if (msg_authz_ans_dec(d, &a, &e) == -1) {
		log_warnx("policyd: AUTHZ_ANS: %s", e.msg);
		return -1;
	}
	c = call_find(a.ref);
	want_grant = c != NULL && creq_runs(c->cr.type) && a.err == ERR_NONE;
	/* An invoke is asked; to an authorize an ask is its denial. */
	ev = a.ask && c != NULL && creq_runs(c->cr.type) ? CEV_ASK
	                                                 : CEV_AUTHZ_ANS;
	/* Once approved, policyd answers an ask rule as an allow. */
	if (c == NULL || !call_expects(c, ev) ||
	    want_grant != (*a.grant_id != '\0') ||
	    (ev == CEV_ASK && c->approved)) {
		msg_authz_ans_free(&a);
		return -1;
	}
	msg_authz_ans_free(&c->ans); /* an approved call's first answer */
	c->ans = a;
	files_granted(c);
	if (*a.command != '\0') { /* the command the decision resolved */
		free(c->cr.command);
		c->cr.command = xstrdup(a.command);
	}
	if (c->cancelled) /* its grant goes back in call_done */
		return call_fail(c, ERR_CANCELLED, c->cancel_why);
	return call_event(c, ev);
}

int
call_on_audit_ack(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_audit_ack a;
	struct call *c;
	struct error e;
	uint64_t cref;
	int r = 0;

	if (msg_audit_ack_dec(d, &a, &e) == -1 || audit_ack_check(&a) == -1) {
		msg_audit_ack_free(&a);
		return -1;
	}
	c = audit_wait_take(a.ref, &cref) ? call_find(cref) : NULL;
	/* The request's own record refused: the call never runs (acks come
	 * in order, so before its decision's). */
	if (c != NULL && c->received_ref == a.ref) {
		c->received_ref = 0;
		c->received = a.ok;
		c->received_refused = !a.ok;
		c = NULL;
	}
	if (c != NULL && (c->st != CALL_DECISION || c->audit_ref != a.ref))
		c = NULL;
	if (c != NULL && a.ok)
		stats_decision(c);
	if (c != NULL && !a.ok)
		r = call_fail(c, ERR_AUDIT_UNAVAILABLE, a.message);
	else if (c != NULL && c->received_refused)
		r = call_fail(c, ERR_AUDIT_UNAVAILABLE, AUDIT_REFUSED);
	else if (c != NULL && c->ans.err != ERR_NONE)
		r = call_fail(c, (enum err_type)c->ans.err, c->ans.reason);
	else if (c != NULL)
		r = call_event(c, CEV_AUDIT_ACK);
	msg_audit_ack_free(&a);
	return r;
}

/* The worker's pipes all reached EOF, or the drain ran out. */
static void
call_output_done(void *arg)
{
	struct call *c = arg;

	c->output_done = 1;
	if (call_event(c, CEV_OUTPUT_DONE) == -1)
		fatalx("output done in state %s", call_state_name(c->st));
}

int
call_on_run_started(struct peer *p, const struct mp_doc *d)
{
	struct msg_run_started s;
	int fds[RUN_STARTED_FDS], i, ok;
	struct call *c = NULL;
	struct error e;

	for (i = 0; i < RUN_STARTED_FDS; i++)
		fds[i] = chan_take_fd(&p->ch);
	ok = msg_run_started_dec(d, &s, &e) == 0 &&
	     fds[RUN_STARTED_FDS - 1] != -1 && (c = call_find(s.ref)) != NULL &&
	     call_expects(c, CEV_RUN_STARTED);
	if (!ok) {
		for (i = 0; i < RUN_STARTED_FDS; i++)
			if (fds[i] != -1)
				close(fds[i]);
		return -1;
	}
	c->ran = 1;
	files_bound_stdin(&c->cr);
	run_open(&c->run, fds, c->ans.output_bytes, c->cr.stdin_data,
	    c->cr.stdin_len, call_output_done, c);
	return call_event(c, CEV_RUN_STARTED);
}

int
call_on_run_exited(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_run_exited x;
	struct call *c;
	struct error e;

	if (msg_run_exited_dec(d, &x, &e) == -1)
		return -1;
	c = call_find(x.ref);
	/* Before RUN_STARTED, only a refusal: nothing ran, and why. */
	if (c == NULL || !call_expects(c, CEV_RUN_EXITED) ||
	    (c->st == CALL_RUN_WAIT && (x.started || x.err == ERR_NONE))) {
		msg_run_exited_free(&x);
		return -1;
	}
	c->x = x;
	c->err = (enum err_type)x.err;
	snprintf(c->errmsg, sizeof(c->errmsg), "%s", x.message);
	return call_event(c, CEV_RUN_EXITED);
}

int
call_on_skills_ans(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_skills_ans *a = xcalloc(1, sizeof(*a));
	struct call *c;
	struct error e;

	if (msg_skills_ans_dec(d, a, &e) == -1 ||
	    (c = call_find(a->ref)) == NULL ||
	    !call_expects(c, CEV_SKILLS_ANS)) {
		msg_skills_ans_free(a);
		free(a);
		return -1;
	}
	c->answer = a;
	return call_event(c, CEV_SKILLS_ANS);
}

int
call_on_reload_ans(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_reload_ans *a = xcalloc(1, sizeof(*a));
	struct call *c;
	struct error e;

	if (msg_reload_ans_dec(d, a, &e) == -1 ||
	    (c = call_find(a->ref)) == NULL ||
	    !call_expects(c, CEV_RELOAD_ANS)) {
		msg_reload_ans_free(a);
		free(a);
		return -1;
	}
	c->answer = a;
	if (a->err != ERR_NONE)
		return call_fail(c, (enum err_type)a->err, a->message);
	return call_event(c, CEV_RELOAD_ANS);
}

/* ADMINS comes after each policy load: approvals are asked for anew. */
int
call_on_admins(struct peer *p, const struct mp_doc *d)
{
	if (quota_on_admins(p, d) == -1)
		return -1;
	session_forget_approvals();
	B->worker_freed = 1;
	call_line_wake();
	return 0;
}

/* An answer for another skill than asked is a protocol violation. */
int
call_on_info_ans(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_skill_info_ans *a = xcalloc(1, sizeof(*a));
	struct call *c;
	struct error e;

	if (msg_skill_info_ans_dec(d, a, &e) == -1 ||
	    (c = call_find(a->ref)) == NULL || !call_expects(c, CEV_INFO_ANS) ||
	    (a->err == ERR_NONE && strcmp(a->name, c->cr.skill) != 0)) {
		msg_skill_info_ans_free(a);
		free(a);
		return -1;
	}
	c->answer = a;
	if (a->err != ERR_NONE)
		return call_fail(c, (enum err_type)a->err, a->message);
	return call_event(c, CEV_INFO_ANS);
}
