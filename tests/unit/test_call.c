/*
 * test_call.c: the broker's call machine (broker_call.c) driven through
 * fake peers. The broker's own files run as they do in the daemon; the
 * master, policyd, auditd and a client are the other ends of
 * socketpairs, read and written here with proto's own encoders and
 * decoders. Every move a call makes is recorded and checked against
 * the transition table written out below.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../broker/broker.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../proto/frame.h"
#include "msgsample.h"

#include <event2/buffer.h>

struct broker *B;

#define GRANT "0123456789abcdef0123456789abcdef"
#define SHA "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

/*
 * The transition table as this test expects it: a change to
 * call_edges[] must change this too. Any state but DONE may also fail
 * (CEV_FAIL -> DONE).
 */
#define K(t) (1U << (t))
/* invoke and the session file requests: calls that run a skill */
#define KI                                                                     \
	(K(CREQ_INVOKE) | K(CREQ_PUT_FILE) | K(CREQ_GET_FILE) |                \
	    K(CREQ_LIST_FILES) | K(CREQ_DELETE_FILE))
#define KA K(CREQ_AUTHORIZE)
#define KS K(CREQ_SKILLS)
#define KR K(CREQ_RELOAD)
#define KN K(CREQ_SKILL_INFO)
static const struct {
	unsigned kinds;
	enum call_state from;
	enum call_event ev;
	enum call_state to;
} table[] = {
    {KI, CALL_NEW, CEV_START, CALL_QUEUED},
    {KA, CALL_NEW, CEV_START, CALL_AUTHZ},
    {KS, CALL_NEW, CEV_START, CALL_SKILLS},
    {KR, CALL_NEW, CEV_START, CALL_RELOAD},
    {KN, CALL_NEW, CEV_START, CALL_INFO},
    {KI, CALL_QUEUED, CEV_SESSION_FREE, CALL_WORKERS},
    {KI, CALL_WORKERS, CEV_WORKER_FREE, CALL_AUTHZ},
    {KI | KA, CALL_AUTHZ, CEV_AUTHZ_ANS, CALL_DECISION},
    {KI, CALL_AUTHZ, CEV_ASK, CALL_APPROVAL},
    {KI, CALL_APPROVAL, CEV_APPROVED, CALL_AUTHZ},
    {KI, CALL_APPROVAL, CEV_NOT_APPROVED, CALL_DECISION},
    {KI, CALL_DECISION, CEV_AUDIT_ACK, CALL_RUN_WAIT},
    {KA, CALL_DECISION, CEV_AUDIT_ACK, CALL_DONE},
    {KI, CALL_RUN_WAIT, CEV_RUN_STARTED, CALL_RUNNING},
    {KI, CALL_RUN_WAIT, CEV_RUN_EXITED, CALL_DONE},
    {KI, CALL_RUNNING, CEV_OUTPUT_DONE, CALL_RUNNING},
    {KI, CALL_RUNNING, CEV_RUN_EXITED, CALL_DRAINING},
    {KI, CALL_DRAINING, CEV_OUTPUT_DONE, CALL_DONE},
    {KS, CALL_SKILLS, CEV_SKILLS_ANS, CALL_DONE},
    {KR, CALL_RELOAD, CEV_RELOAD_ANS, CALL_DONE},
    {KN, CALL_INFO, CEV_INFO_ANS, CALL_DONE},
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

/* The other ends of the broker's channels and of one client. */
static struct chan t_master, t_policyd, t_auditd, t_client;
static int deaths;

/* Every move of every call, as on_move saw it. */
#define MOVES_MAX 1024
static struct move {
	uint64_t id; /* the client's request id */
	enum creq_type kind;
	enum call_state from, to;
} moves[MOVES_MAX];
static size_t nmoves;

/* Replies read from the client socket but not yet looked at. */
#define STASH_MAX 64
static struct {
	uint64_t id;
	uint8_t *buf;
	size_t len;
} stash[STASH_MAX];
static size_t nstash;

/* What each fake peer may send, as broker/main.c says. */
static const struct peer_handler policyd_table[] = {
    {MSG_AUTHZ_ANS, 0, call_on_authz_ans},
    {MSG_SKILLS_ANS, 0, call_on_skills_ans},
    {MSG_RELOAD_ANS, 0, call_on_reload_ans},
    {MSG_SKILL_INFO_ANS, 0, call_on_info_ans},
    {MSG_ADMINS, 0, call_on_admins},
    {0, 0, NULL},
};
static const struct peer_handler master_table[] = {
    {MSG_RUN_STARTED, 0, call_on_run_started},
    {MSG_RUN_EXITED, 0, call_on_run_exited},
    {0, 0, NULL},
};
static const struct peer_handler auditd_table[] = {
    {MSG_AUDIT_ACK, 0, call_on_audit_ack},
    {0, 0, NULL},
};

/* As broker/main.c, but a dead master is noted, not fatal. */
static void
on_dead(struct peer *p, const char *why)
{
	(void)why;
	deaths++;
	if (p != &B->master)
		calls_peer_lost(p);
}

static void
on_move(const struct call *c, enum call_state from)
{
	if (nmoves == MOVES_MAX)
		fail_msg("too many moves");
	moves[nmoves].id = c->cr.id.num;
	moves[nmoves].kind = c->cr.type;
	moves[nmoves].from = from;
	moves[nmoves].to = c->st;
	nmoves++;
}

/* 1 if the table (or a failure) allows kind to move from -> to. */
static int
move_legal(const struct move *m)
{
	size_t i;

	if (m->to == CALL_DONE && m->from != CALL_DONE)
		return 1; /* CEV_FAIL, or a row to DONE */
	for (i = 0; i < NTABLE; i++)
		if ((table[i].kinds & K(m->kind)) && table[i].from == m->from &&
		    table[i].to == m->to)
			return 1;
	return 0;
}

/* The moves of request id, as "from>to from>to ...". */
static const char *
trace_of(uint64_t id)
{
	static char buf[2048];
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < nmoves; i++)
		if (moves[i].id == id)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off,
			    "%s%s>%s", off ? " " : "",
			    call_state_name(moves[i].from),
			    call_state_name(moves[i].to));
	return buf;
}

static void
pair(struct peer *p, const char *name, const struct peer_handler *t,
    struct chan *end)
{
	int sv[2];

	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	peer_init(p, B->base, sv[0], name, t, on_dead, NULL);
	assert_int_equal(set_nonblock(sv[1]), 0);
	chan_init(end, sv[1], name);
}

static int
setup(void **state)
{
	int sv[2];

	(void)state;
	B = calloc(1, sizeof(*B));
	if (B == NULL || (B->base = event_base_new()) == NULL)
		return -1;
	B->max_frame = FRAME_MAX_DEFAULT;
	B->max_clients = 8;
	B->max_sessions = 64;
	B->session_idle_ms = 3600 * 1000;
	B->workers = 64;
	B->per_uid = (struct quota){8, 256, 64, 64};
	B->clients = (struct client_bounds){600, 10, 30, 4 * 1024 * 1024, 60};
	B->on_frame = client_request;
	B->on_close = call_conn_gone;
	B->on_move = on_move;
	LIST_INIT(&B->conns);
	LIST_INIT(&B->calls);
	TAILQ_INIT(&B->worker_line);
	B->max_timeout_ms = 600000;
	pair(&B->master, "master", master_table, &t_master);
	pair(&B->policyd, "policyd", policyd_table, &t_policyd);
	pair(&B->auditd, "auditd", auditd_table, &t_auditd);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	conn_accept(sv[0]);
	if (quota_total(QUOTA_CLIENTS) != 1 || set_nonblock(sv[1]) == -1)
		return -1;
	chan_init(&t_client, sv[1], "client");
	deaths = 0;
	nmoves = 0;
	nstash = 0;
	return 0;
}

static void
pump(void)
{
	int i;

	for (i = 0; i < 8; i++)
		assert_int_not_equal(
		    event_base_loop(B->base, EVLOOP_NONBLOCK), -1);
}

/* Every call answered, every move legal; then take it all down. */
static int
teardown(void **state)
{
	size_t i;
	int bad = 0;

	(void)state;
	for (i = 0; i < nmoves; i++)
		if (!move_legal(&moves[i])) {
			print_error("request %llu (%s) moved %s -> %s\n",
			    (unsigned long long)moves[i].id,
			    creq_type_name(moves[i].kind),
			    call_state_name(moves[i].from),
			    call_state_name(moves[i].to));
			bad = 1;
		}
	if (B->ncalls != 0) {
		print_error("%zu calls left over\n", B->ncalls);
		bad = 1;
	}
	for (i = 0; i < nstash; i++) {
		print_error("reply to %llu never looked at\n",
		    (unsigned long long)stash[i].id);
		free(stash[i].buf);
		bad = 1;
	}
	chan_close(&t_client);
	for (i = 0; i < 100 && quota_total(QUOTA_CLIENTS) > 0; i++)
		pump();
	session_fini();
	/* Nothing is held once everything has ended. */
	for (i = 0; i < QUOTA__COUNT; i++)
		if (quota_total((enum quota_kind)i) != 0) {
			print_error("quota %zu: %u still held\n", i,
			    quota_total((enum quota_kind)i));
			bad = 1;
		}
	peer_kill(&B->master, "teardown");
	peer_kill(&B->policyd, "teardown");
	peer_kill(&B->auditd, "teardown");
	chan_close(&t_master);
	chan_close(&t_policyd);
	chan_close(&t_auditd);
	event_base_free(B->base);
	free(B);
	B = NULL;
	return bad ? -1 : 0;
}

/* The next message on end, reading and pumping until it comes. */
static void
recv_doc(struct chan *end, struct mp_doc *d)
{
	struct error e;
	int i, r;

	for (i = 0; i < 2000; i++) {
		memset(&e, 0, sizeof(e));
		if ((r = chan_next(end, d, &e)) == 1)
			return;
		if (r == -1)
			fail_msg("%s: %s", end->peer, e.msg);
		pump();
		while ((r = chan_read(end)) == 1)
			;
		if (r == 0 && chan_next(end, d, &e) == 1)
			return; /* what came before the end */
		if (r == 0)
			fail_msg(
			    "%s: the broker closed the channel", end->peer);
		if (i > 10)
			usleep(1000);
	}
	fail_msg("%s: nothing came", end->peer);
}

static void
recv_msg(struct chan *end, enum msg_type want, struct mp_doc *d)
{
	struct error e;
	uint64_t t;

	recv_doc(end, d);
	if (msg_type_of(d, &t, &e) == -1)
		fail_msg("%s: %s", end->peer, e.msg);
	if (t != (uint64_t)want)
		fail_msg("%s: message %llu, want %d", end->peer,
		    (unsigned long long)t, (int)want);
}

/* Nothing more came on end. */
static void
assert_quiet(struct chan *end)
{
	struct mp_doc d;
	struct error e;
	int r;

	pump();
	while ((r = chan_read(end)) == 1)
		;
	if (chan_next(end, &d, &e) != 0)
		fail_msg("%s: an unexpected message", end->peer);
}

/* Send m (freed here) from a fake peer, and let the broker run. */
static void
send_msg(struct chan *end, struct mp_enc *m, const int *fds, int nfds)
{
	chan_queue(end, m, fds, nfds);
	enc_free(m);
	assert_int_equal(chan_flush(end), 0);
	pump();
}

/*
 * Hand m (freed here) straight to handler h, as p's dispatch would,
 * and return what h says; p is not ended when h says -1.
 */
static int
deliver(struct peer *p, struct chan *end, struct mp_enc *m, const int *fds,
    int nfds, int (*h)(struct peer *, const struct mp_doc *))
{
	struct mp_doc d;
	struct error e;
	int r;

	chan_queue(end, m, fds, nfds);
	enc_free(m);
	assert_int_equal(chan_flush(end), 0);
	assert_int_equal(chan_read(&p->ch), 1);
	assert_int_equal(chan_next(&p->ch, &d, &e), 1);
	r = h(p, &d);
	mp_doc_free(&d);
	return r;
}

/* The call of client request id, or NULL when it is gone. */
static struct call *
call_of(uint64_t id)
{
	struct call *c;

	LIST_FOREACH (c, &B->calls, entry)
		if (c->cr.id.num == id)
			return c;
	return NULL;
}

static void
assert_state(uint64_t id, enum call_state st)
{
	struct call *c = call_of(id);

	if (c == NULL)
		fail_msg("request %llu has no call", (unsigned long long)id);
	if (c->st != st)
		fail_msg("request %llu is in %s, want %s",
		    (unsigned long long)id, call_state_name(c->st),
		    call_state_name(st));
}

static void
assert_trace(uint64_t id, const char *want)
{
	assert_string_equal(trace_of(id), want);
}

/* A client request. */
static void
client_send(enum creq_type type, uint64_t id, const char *skill,
    const char *session, const char *in)
{
	struct client_req r;
	struct mp_enc m;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.id.is_num = 1;
	r.id.num = id;
	r.skill = (char *)skill;
	r.session = (char *)session;
	r.stdin_data = (uint8_t *)in;
	r.stdin_len = in != NULL ? strlen(in) : 0;
	enc_init(&m);
	client_req_enc(&m, &r);
	send_msg(&t_client, &m, NULL, 0);
}

static void
invoke(uint64_t id, const char *session)
{
	client_send(CREQ_INVOKE, id, "hello", session, NULL);
}

static uint64_t
reply_id(const struct mp_doc *d)
{
	struct error e;
	uint64_t id = 0;

	if (mp_uint(d->root, "id", 1, UINT64_MAX, &id, &e) == -1)
		fail_msg("reply: %s", e.msg);
	return id;
}

/*
 * The reply to request id. Replies to others that come first wait in
 * the stash, as bytes (a decoded document cannot be moved).
 */
static void
reply_to(uint64_t id, struct mp_doc *d)
{
	struct error e;
	struct mp_enc m;
	size_t i;

	for (i = 0; i < nstash; i++)
		if (stash[i].id == id) {
			if (mp_decode(
			        d, stash[i].buf, stash[i].len, NULL, &e) == -1)
				fail_msg("%s", e.msg);
			free(stash[i].buf);
			stash[i] = stash[--nstash];
			return;
		}
	for (;;) {
		recv_doc(&t_client, d);
		if (reply_id(d) == id)
			return;
		if (nstash == STASH_MAX)
			fail_msg("too many replies");
		enc_init(&m);
		enc_obj(&m, d->root);
		stash[nstash].id = reply_id(d);
		stash[nstash].len = m.sb.size;
		stash[nstash].buf = malloc(m.sb.size);
		assert_non_null(stash[nstash].buf);
		memcpy(stash[nstash].buf, m.sb.data, m.sb.size);
		nstash++;
		enc_free(&m);
		mp_doc_free(d);
	}
}

static const msgpack_object *
sub(const msgpack_object *o, const char *k)
{
	const msgpack_object *s = NULL;
	struct error e;

	if (mp_submap(o, k, 1, &s, &e) == -1)
		fail_msg("%s", e.msg);
	return s;
}

static void
assert_str(const msgpack_object *o, const char *k, const char *want)
{
	struct error e;
	char *s = NULL;

	if (mp_str(o, k, 1, 65536, &s, &e) == -1)
		fail_msg("%s", e.msg);
	assert_string_equal(s, want);
	free(s);
}

static void
assert_bool(const msgpack_object *o, const char *k, int want)
{
	struct error e;
	int v = -1;

	if (mp_bool(o, k, 1, &v, &e) == -1)
		fail_msg("%s", e.msg);
	assert_int_equal(v, want);
}

static void
assert_uint(const msgpack_object *o, const char *k, uint64_t want)
{
	struct error e;
	uint64_t v = 0;

	if (mp_uint(o, k, 1, UINT64_MAX, &v, &e) == -1)
		fail_msg("%s", e.msg);
	assert_int_equal(v, want);
}

static void
assert_bin(const msgpack_object *o, const char *k, const char *want)
{
	struct error e;
	uint8_t *b = NULL;
	size_t len = 0;

	if (mp_bin(o, k, 1, 65536, &b, &len, &e) == -1)
		fail_msg("%s", e.msg);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(b, want, len);
	free(b);
}

/* The reply to id failed with error type t; the message, if want. */
static void
assert_failed(uint64_t id, enum err_type t, const char *msg)
{
	struct mp_doc d;
	struct error e;
	char *s = NULL;

	reply_to(id, &d);
	assert_bool(d.root, "ok", 0);
	assert_str(sub(d.root, "error"), "type", err_type_name(t));
	if (msg != NULL) {
		if (mp_str(sub(d.root, "error"), "message", 1, 4096, &s, &e))
			fail_msg("%s", e.msg);
		if (strstr(s, msg) == NULL)
			fail_msg("error \"%s\" does not say \"%s\"", s, msg);
		free(s);
	}
	mp_doc_free(&d);
}

/* The next record to auditd: its action is want; returns its ref. */
/*
 * Only policy.decision gates anything the broker does (its reply, RUN):
 * every other record of the broker's is lazy, its sync left to a later
 * commit (docs/audit.md, "Durability").
 */
static void
assert_lazy_unless_gating(const struct mp_doc *d, const msgpack_object *ev)
{
	const msgpack_object *a = mp_get(ev, "event.action");
	int gating = a != NULL && a->type == MSGPACK_OBJECT_STR &&
	             a->via.str.size == 15 &&
	             memcmp(a->via.str.ptr, "policy.decision", 15) == 0;

	if (msg_audit_is_lazy(d) == gating)
		fail_msg("%.*s: lazy is %d",
		    a != NULL ? (int)a->via.str.size : 0,
		    a != NULL ? a->via.str.ptr : "", msg_audit_is_lazy(d));
}

static uint64_t
expect_audit(const char *action, const char *outcome)
{
	const msgpack_object *ev;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	recv_msg(&t_auditd, MSG_AUDIT, &d);
	if (msg_audit_dec(&d, &ref, &ev, &e) == -1)
		fail_msg("AUDIT: %s", e.msg);
	assert_lazy_unless_gating(&d, ev);
	assert_str(ev, "event.action", action);
	if (outcome != NULL)
		assert_str(ev, "event.outcome", outcome);
	mp_doc_free(&d);
	return ref;
}

/* The next AUTHZ_REQ: for request id's call; returns the call's ref. */
static uint64_t
expect_authz_req(uint64_t id, int dry_run)
{
	struct msg_authz_req a;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	recv_msg(&t_policyd, MSG_AUTHZ_REQ, &d);
	if (msg_authz_req_dec(&d, &a, &e) == -1)
		fail_msg("AUTHZ_REQ: %s", e.msg);
	mp_doc_free(&d);
	assert_non_null(call_of(id));
	assert_int_equal(a.ref, call_of(id)->ref);
	assert_string_equal(a.skill, "hello");
	assert_int_equal(a.dry_run, dry_run);
	assert_int_equal(a.approved, 0);
	assert_int_equal(a.uid, getuid());
	ref = a.ref;
	msg_authz_req_free(&a);
	return ref;
}

/* The next RUN: for ref, with the grant policyd gave. */
static void
expect_run(uint64_t ref)
{
	struct msg_run r;
	struct mp_doc d;
	struct error e;

	recv_msg(&t_master, MSG_RUN, &d);
	if (msg_run_dec(&d, &r, &e) == -1)
		fail_msg("RUN: %s", e.msg);
	mp_doc_free(&d);
	assert_int_equal(r.ref, ref);
	assert_string_equal(r.grant_id, GRANT);
	msg_run_free(&r);
}

/* The next CANCEL: the grant of a call that will never run it. */
static void
expect_cancel(void)
{
	struct msg_cancel x;
	struct mp_doc d;
	struct error e;

	recv_msg(&t_master, MSG_CANCEL, &d);
	if (msg_cancel_dec(&d, &x, &e) == -1)
		fail_msg("CANCEL: %s", e.msg);
	mp_doc_free(&d);
	assert_string_equal(x.grant_id, GRANT);
	msg_cancel_free(&x);
}

/* AUTHZ_ANS: allowed (grant NULL: none) or denied with err. */
static void
enc_authz_ans(
    struct mp_enc *m, uint64_t ref, enum err_type err, const char *grant)
{
	char *rules[] = {"rule-1"};
	struct msg_authz_ans a;

	memset(&a, 0, sizeof(a));
	a.ref = ref;
	a.err = err;
	a.reason = err == ERR_NONE ? "allowed by rule-1" : "no rule allows it";
	a.rules = rules;
	a.nrules = 1;
	a.grant_id = (char *)grant;
	a.command = "greet";
	a.timeout_ms = 5000;
	a.output_bytes = 4096;
	enc_init(m);
	msg_authz_ans_enc(m, &a);
}

static void
authz_ans(uint64_t ref, enum err_type err, const char *grant)
{
	struct mp_enc m;

	enc_authz_ans(&m, ref, err, grant);
	send_msg(&t_policyd, &m, NULL, 0);
}

static void
enc_ack(struct mp_enc *m, uint64_t ref, int ok)
{
	struct msg_audit_ack a = {ref, ok, ok ? "" : "disk full"};

	enc_init(m);
	msg_audit_ack_enc(m, &a);
}

static void
ack(uint64_t ref)
{
	struct mp_enc m;

	enc_ack(&m, ref, 1);
	send_msg(&t_auditd, &m, NULL, 0);
}

static void
enc_run_exited(struct mp_enc *m, uint64_t ref, int started, enum err_type err)
{
	struct msg_run_exited x;

	memset(&x, 0, sizeof(x));
	x.ref = ref;
	x.started = started;
	x.exit_code = started ? 0 : -1;
	x.duration_ms = 12;
	x.err = err;
	x.message = err == ERR_NONE ? "" : "the sandbox could not be built";
	enc_init(m);
	msg_run_exited_enc(m, &x);
}

static void
run_exited(uint64_t ref, int started, enum err_type err)
{
	struct mp_enc m;

	enc_run_exited(&m, ref, started, err);
	send_msg(&t_master, &m, NULL, 0);
}

static void
enc_run_started(struct mp_enc *m, uint64_t ref)
{
	struct msg_run_started s = {ref, 4242};

	enc_init(m);
	msg_run_started_enc(m, &s);
}

/* A worker's pipes: the broker gets w[], the test keeps t[]. */
struct pipes {
	int w[RUN_STARTED_FDS]; /* stdin write end, then read ends */
	int in_r, out_w, err_w, rep_w;
};

static void
pipes_open(struct pipes *p)
{
	int in[2], out[2], err[2], rep[2];

	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rep, O_CLOEXEC), 0);
	p->w[0] = in[1];
	p->w[1] = out[0];
	p->w[2] = err[0];
	p->w[3] = rep[0];
	p->in_r = in[0];
	p->out_w = out[1];
	p->err_w = err[1];
	p->rep_w = rep[1];
}

/* What a worker writes: stdout, stderr, and its FILES report. */
static void
pipes_write(struct pipes *p)
{
	struct written w = {"/work/out.txt", 3, SHA};
	struct msg_files f = {&w, 1, 1, 1};
	uint8_t hdr[FRAME_HDR_LEN];
	struct mp_enc m;

	assert_int_equal(write_full(p->out_w, "hello out\n", 10), 0);
	assert_int_equal(write_full(p->err_w, "careful\n", 8), 0);
	enc_init(&m);
	msg_files_enc(&m, &f);
	frame_put_len(hdr, m.sb.size);
	assert_int_equal(write_full(p->rep_w, hdr, sizeof(hdr)), 0);
	assert_int_equal(write_full(p->rep_w, m.sb.data, m.sb.size), 0);
	enc_free(&m);
}

static void
pipes_close(struct pipes *p)
{
	close(p->out_w);
	close(p->err_w);
	close(p->rep_w);
	close(p->in_r);
}

/* The broker fed the client's stdin to the skill, then closed it. */
static void
assert_stdin(struct pipes *p, const char *want)
{
	char buf[64];
	size_t off = 0;
	ssize_t n = -1;
	int i;

	assert_int_equal(set_nonblock(p->in_r), 0);
	for (i = 0; i < 1000; i++) {
		pump();
		n = read(p->in_r, buf + off, sizeof(buf) - off);
		if (n == 0)
			break;
		if (n > 0)
			off += (size_t)n;
		else if (errno != EAGAIN)
			fail_msg("stdin: %s", strerror(errno));
		else
			usleep(1000);
	}
	assert_int_equal(n, 0);
	assert_int_equal(off, strlen(want));
	assert_memory_equal(buf, want, off);
}

/* Take invoke id from AUTHZ through to RUN_WAIT; returns its ref. */
static uint64_t
to_run_wait(uint64_t id, uint64_t received)
{
	uint64_t ref = call_of(id)->ref, dec;

	authz_ans(ref, ERR_NONE, GRANT);
	dec = expect_audit("policy.decision", "success");
	ack(received);
	ack(dec);
	expect_run(ref);
	assert_state(id, CALL_RUN_WAIT);
	return ref;
}

/*
 * The invoke.completed of a call whose skill never ran: its error, how
 * long it took, nothing about a process. Acknowledged.
 */
static void
expect_end(enum err_type t)
{
	const msgpack_object *ev;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	recv_msg(&t_auditd, MSG_AUDIT, &d);
	if (msg_audit_dec(&d, &ref, &ev, &e) == -1)
		fail_msg("AUDIT: %s", e.msg);
	assert_lazy_unless_gating(&d, ev);
	assert_str(ev, "event.action", "invoke.completed");
	assert_str(ev, "event.outcome", "failure");
	assert_str(ev, "error.type", err_type_name(t));
	assert_null(mp_get(ev, "process.exit_code"));
	assert_non_null(mp_get(ev, "event.duration"));
	mp_doc_free(&d);
	ack(ref);
}

/* Deny request id (in AUTHZ) and acknowledge what remains. */
static void
deny(uint64_t id, uint64_t received)
{
	int invoke = call_of(id)->cr.type == CREQ_INVOKE;
	uint64_t dec;

	authz_ans(call_of(id)->ref, ERR_PERMISSION_DENIED, "");
	dec = expect_audit("policy.decision", "failure");
	if (received != 0)
		ack(received);
	ack(dec);
	if (invoke)
		expect_end(ERR_PERMISSION_DENIED);
	assert_failed(id, ERR_PERMISSION_DENIED, "no rule allows it");
}

/* The reply of a completed invoke: ok, output, files_written. */
static void
assert_result_ok(uint64_t id)
{
	const msgpack_object *out, *fx, *files, *f0;
	struct mp_doc d;

	reply_to(id, &d);
	assert_str(d.root, "type", "result");
	assert_bool(d.root, "ok", 1);
	assert_str(d.root, "command", "greet");
	assert_bool(sub(d.root, "policy"), "allowed", 1);
	out = sub(d.root, "output");
	assert_bin(out, "stdout", "hello out\n");
	assert_bin(out, "stderr", "careful\n");
	assert_bool(out, "truncated", 0);
	assert_uint(out, "stdout_bytes", 10);
	fx = sub(d.root, "effects");
	assert_uint(sub(fx, "process"), "exit_code", 0);
	files = mp_get(fx, "files_written");
	assert_non_null(files);
	assert_int_equal(files->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(files->via.array.size, 1);
	f0 = &files->via.array.ptr[0];
	assert_str(f0, "path", "/work/out.txt");
	assert_uint(f0, "size_bytes", 3);
	assert_str(f0, "sha256", SHA);
	assert_null(mp_get(d.root, "error"));
	mp_doc_free(&d);
}

/* invoke.completed: what ran, what it wrote; returns its ref. */
static uint64_t
expect_completed(void)
{
	const msgpack_object *ev;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	recv_msg(&t_auditd, MSG_AUDIT, &d);
	if (msg_audit_dec(&d, &ref, &ev, &e) == -1)
		fail_msg("AUDIT: %s", e.msg);
	assert_lazy_unless_gating(&d, ev);
	assert_str(ev, "event.action", "invoke.completed");
	assert_str(ev, "event.outcome", "success");
	assert_str(ev, "grant.id", GRANT);
	assert_uint(ev, "output.stdout_bytes", 10);
	assert_uint(ev, "output.stderr_bytes", 8);
	assert_uint(ev, "files_written.count", 1);
	mp_doc_free(&d);
	return ref;
}

#define WALK_TO_RUNNING                                                        \
	"new>queued queued>workers workers>authz authz>decision "              \
	"decision>run_wait "                                                   \
	"run_wait>running"

/*
 * An invoke, step by step: each message goes out only when the table
 * says, RUN only once the decision is durable, the completion only once
 * the pipes are at EOF.
 */
static void
test_invoke_walk(void **state)
{
	struct pipes p;
	struct mp_enc m;
	uint64_t received, ref, dec;

	(void)state;
	client_send(CREQ_INVOKE, 1, "hello", "s1", "in\n");
	received = expect_audit("invoke.received", "unknown");
	ref = expect_authz_req(1, 0);
	assert_state(1, CALL_AUTHZ);
	assert_trace(1, "new>queued queued>workers workers>authz");
	assert_quiet(&t_master);

	authz_ans(ref, ERR_NONE, GRANT);
	dec = expect_audit("policy.decision", "success");
	assert_int_equal(dec, received + 1);
	assert_state(1, CALL_DECISION);
	assert_quiet(&t_master);
	/* The first record's ack is not the decision's. */
	ack(received);
	assert_state(1, CALL_DECISION);
	assert_quiet(&t_master);
	ack(dec);
	expect_run(ref);
	assert_state(1, CALL_RUN_WAIT);
	assert_trace(1,
	    "new>queued queued>workers workers>authz authz>decision "
	    "decision>run_wait");

	pipes_open(&p);
	enc_run_started(&m, ref);
	send_msg(&t_master, &m, p.w, RUN_STARTED_FDS);
	assert_state(1, CALL_RUNNING);
	assert_stdin(&p, "in\n");
	pipes_write(&p);
	run_exited(ref, 1, ERR_NONE);
	assert_state(1, CALL_DRAINING);
	assert_trace(1, WALK_TO_RUNNING " running>draining");
	/* The worker is gone, its pipes are not: nothing is final yet. */
	assert_quiet(&t_auditd);
	assert_quiet(&t_client);
	assert_state(1, CALL_DRAINING);

	pipes_close(&p);
	expect_completed();
	assert_result_ok(1);
	assert_null(call_of(1));
	assert_trace(1, WALK_TO_RUNNING " running>draining draining>done");
	assert_quiet(&t_master);
	assert_quiet(&t_policyd);
}

/* The pipes reach EOF first: the call completes when the worker exits. */
static void
test_invoke_eof_then_exit(void **state)
{
	struct pipes p;
	struct mp_enc m;
	uint64_t received, ref;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	ref = to_run_wait(1, received);
	pipes_open(&p);
	enc_run_started(&m, ref);
	send_msg(&t_master, &m, p.w, RUN_STARTED_FDS);
	pipes_write(&p);
	pipes_close(&p);
	pump();
	assert_state(1, CALL_RUNNING);
	assert_trace(1, WALK_TO_RUNNING " running>running");
	assert_quiet(&t_auditd);
	assert_quiet(&t_client);

	run_exited(ref, 1, ERR_NONE);
	expect_completed();
	assert_result_ok(1);
	assert_trace(1,
	    WALK_TO_RUNNING " running>running running>draining draining>done");
}

/* A pipe held open past the worker's exit drains for DRAIN_MS, no more. */
static void
test_invoke_drain_bounded(void **state)
{
	struct pipes p;
	struct mp_enc m;
	uint64_t received, ref;
	uint64_t t0;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	ref = to_run_wait(1, received);
	pipes_open(&p);
	enc_run_started(&m, ref);
	send_msg(&t_master, &m, p.w, RUN_STARTED_FDS);
	pipes_write(&p);
	close(p.err_w);
	close(p.rep_w);
	t0 = now_mono_ms();
	run_exited(ref, 1, ERR_NONE);
	assert_state(1, CALL_DRAINING);
	expect_completed();
	assert_true(now_mono_ms() - t0 >= DRAIN_MS - 10);
	assert_result_ok(1);
	close(p.out_w);
	close(p.in_r);
}

/* authorize: decided and recorded, never run. */
static void
test_authorize(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	uint64_t ref, dec;

	(void)state;
	client_send(CREQ_AUTHORIZE, 2, "hello", NULL, NULL);
	ref = expect_authz_req(2, 1);
	assert_trace(2, "new>authz");
	/* No invoke.received for a dry run. */
	assert_quiet(&t_auditd);
	/* A dry run carries no grant. */
	enc_authz_ans(&m, ref, ERR_NONE, GRANT);
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_authz_ans),
	    -1);
	assert_state(2, CALL_AUTHZ);
	authz_ans(ref, ERR_NONE, "");
	dec = expect_audit("policy.decision", "success");
	assert_state(2, CALL_DECISION);
	ack(dec);
	reply_to(2, &d);
	assert_str(d.root, "type", "result");
	assert_bool(d.root, "ok", 1);
	assert_bool(sub(d.root, "policy"), "allowed", 1);
	assert_null(mp_get(d.root, "output"));
	mp_doc_free(&d);
	assert_trace(2, "new>authz authz>decision decision>done");
	assert_quiet(&t_master);
}

/* A denial is recorded, then answered with the policy's error. */
static void
test_denied(void **state)
{
	struct mp_doc d;
	uint64_t received, ref, dec;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ans(ref, ERR_PERMISSION_DENIED, "");
	dec = expect_audit("policy.decision", "failure");
	ack(received);
	assert_state(1, CALL_DECISION);
	assert_quiet(&t_client);
	ack(dec);
	/* Every invoke.received has its invoke.completed. */
	expect_end(ERR_PERMISSION_DENIED);
	reply_to(1, &d);
	assert_bool(d.root, "ok", 0);
	assert_bool(sub(d.root, "policy"), "allowed", 0);
	assert_str(sub(d.root, "error"), "type", "permission_denied");
	assert_str(sub(d.root, "error"), "message", "no rule allows it");
	mp_doc_free(&d);
	assert_trace(1, "new>queued queued>workers workers>authz "
	                "authz>decision decision>done");
	assert_quiet(&t_master);

	/* An authorize denied the same way. */
	client_send(CREQ_AUTHORIZE, 2, "hello", NULL, NULL);
	ref = expect_authz_req(2, 1);
	authz_ans(ref, ERR_SKILL_NOT_ENABLED, "");
	ack(expect_audit("policy.decision", "failure"));
	assert_failed(2, ERR_SKILL_NOT_ENABLED, NULL);
	assert_trace(2, "new>authz authz>decision decision>done");
}

/* The master refuses to run: nothing ran, and the client learns why. */
static void
test_run_refused(void **state)
{
	uint64_t received, ref;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	ref = to_run_wait(1, received);
	run_exited(ref, 0, ERR_SANDBOX_FAILED);
	/* Nothing ran: the completion record says why, and no more. */
	expect_end(ERR_SANDBOX_FAILED);
	assert_failed(1, ERR_SANDBOX_FAILED, "could not be built");
	assert_trace(1,
	    "new>queued queued>workers workers>authz authz>decision "
	    "decision>run_wait run_wait>done");
	assert_quiet(&t_auditd);
}

/* A decision that is not durable is no decision. */
static void
test_audit_not_written(void **state)
{
	struct mp_enc m;
	uint64_t received, ref, dec;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ans(ref, ERR_NONE, GRANT);
	dec = expect_audit("policy.decision", NULL);
	ack(received);
	enc_ack(&m, dec, 0);
	send_msg(&t_auditd, &m, NULL, 0);
	assert_failed(1, ERR_AUDIT_UNAVAILABLE, "disk full");
	/* The master holds a worker for the grant: it is told to drop it. */
	expect_cancel();
	assert_quiet(&t_master);
}

static void
test_skills_and_reload(void **state)
{
	struct msg_skill sk = {"hello", "says hello", 1, "", NULL, 0, NULL, 0};
	struct msg_skills_ans sa = {0, &sk, 1, 0};
	struct msg_reload_ans ra = {0, ERR_NONE, "reloaded 3 rules"};
	struct msg_reload_req rr;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	const msgpack_object *arr;

	(void)state;
	client_send(CREQ_SKILLS, 3, NULL, NULL, NULL);
	recv_msg(&t_policyd, MSG_SKILLS_REQ, &d);
	assert_int_equal(msg_skills_req_dec(&d, &sa.ref, &e), 0);
	mp_doc_free(&d);
	assert_int_equal(sa.ref, call_of(3)->ref);
	assert_trace(3, "new>skills");
	enc_init(&m);
	msg_skills_ans_enc(&m, &sa);
	send_msg(&t_policyd, &m, NULL, 0);
	reply_to(3, &d);
	assert_str(d.root, "type", "skills");
	arr = mp_get(d.root, "skills");
	assert_non_null(arr);
	assert_int_equal(arr->via.array.size, 1);
	assert_str(&arr->via.array.ptr[0], "name", "hello");
	mp_doc_free(&d);
	assert_trace(3, "new>skills skills>done");

	client_send(CREQ_RELOAD, 4, NULL, NULL, NULL);
	recv_msg(&t_policyd, MSG_RELOAD_REQ, &d);
	assert_int_equal(msg_reload_req_dec(&d, &rr, &e), 0);
	mp_doc_free(&d);
	assert_int_equal(rr.uid, getuid());
	ra.ref = rr.ref;
	enc_init(&m);
	msg_reload_ans_enc(&m, &ra);
	send_msg(&t_policyd, &m, NULL, 0);
	reply_to(4, &d);
	assert_str(d.root, "type", "reload");
	assert_str(d.root, "message", "reloaded 3 rules");
	mp_doc_free(&d);
	assert_trace(4, "new>reload reload>done");

	/* A refused reload is an error reply. */
	client_send(CREQ_RELOAD, 5, NULL, NULL, NULL);
	recv_msg(&t_policyd, MSG_RELOAD_REQ, &d);
	assert_int_equal(msg_reload_req_dec(&d, &rr, &e), 0);
	mp_doc_free(&d);
	ra.ref = rr.ref;
	ra.err = ERR_PERMISSION_DENIED;
	ra.message = "not an admin";
	enc_init(&m);
	msg_reload_ans_enc(&m, &ra);
	send_msg(&t_policyd, &m, NULL, 0);
	assert_failed(5, ERR_PERMISSION_DENIED, "not an admin");
	assert_trace(5, "new>reload reload>done");
	assert_quiet(&t_auditd);
}

/* Nothing about call id moved since n moves were recorded. */ /* Nothing about
                                                                  call id moved
                                                                  since n moves
                                                                  were recorded.
                                                                */
static void
assert_untouched(uint64_t id, enum call_state st, size_t n)
{
	assert_state(id, st);
	assert_int_equal(nmoves, n);
}

/* skill_info id for skill, texts or not; returns the SKILL_INFO_REQ. */
static struct msg_skill_info_req
info_send(uint64_t id, const char *skill, int texts)
{
	struct msg_skill_info_req r;
	struct client_req cr;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	memset(&cr, 0, sizeof(cr));
	cr.type = CREQ_SKILL_INFO;
	cr.id.is_num = 1;
	cr.id.num = id;
	cr.skill = (char *)skill;
	cr.references = texts;
	enc_init(&m);
	client_req_enc(&m, &cr);
	send_msg(&t_client, &m, NULL, 0);
	recv_msg(&t_policyd, MSG_SKILL_INFO_REQ, &d);
	assert_int_equal(msg_skill_info_req_dec(&d, &r, &e), 0);
	mp_doc_free(&d);
	assert_int_equal(r.ref, call_of(id)->ref);
	return r;
}

static void
info_answer(const struct msg_skill_info_ans *a)
{
	struct mp_enc m;

	enc_init(&m);
	msg_skill_info_ans_enc(&m, a);
	send_msg(&t_policyd, &m, NULL, 0);
}

/* The reference at i of a skill_info reply. */
static const msgpack_object *
info_ref_at(const msgpack_object *reply, uint32_t i)
{
	const msgpack_object *arr = mp_get(sub(reply, "skill"), "references");

	assert_non_null(arr);
	assert_int_equal(arr->type, MSGPACK_OBJECT_ARRAY);
	assert_true(i < arr->via.array.size);
	return &arr->via.array.ptr[i];
}

/* skill_info: NEW -> INFO -> DONE, as skills; policyd answers. */
static void
test_skill_info(void **state)
{
	struct msg_skill_info_ans a = sample_skill_info_ans();
	struct msg_skill_info_req r;
	const msgpack_object *sk, *f;
	char body[2048];
	struct mp_enc m;
	struct mp_doc d;
	size_t n;

	(void)state;
	r = info_send(3, "notes", 0);
	assert_int_equal(r.uid, getuid());
	assert_int_equal(r.gid, getgid());
	assert_string_equal(r.skill, "notes");
	assert_int_equal(r.references, 0);
	/* The budget: a client frame less the reply's envelope. */
	assert_int_equal(r.max_bytes, FRAME_MAX_DEFAULT - INFO_REPLY_ROOM);
	assert_trace(3, "new>info");
	a.ref = r.ref;
	msg_skill_info_req_free(&r);
	info_answer(&a);
	reply_to(3, &d);
	assert_str(d.root, "type", "skill_info");
	assert_bool(d.root, "ok", 1);
	sk = sub(d.root, "skill");
	assert_str(sk, "name", "notes");
	assert_str(sk, "body", "# notes\n\nWrite one note per call.\n");
	assert_bool(sk, "references_truncated", 1);
	assert_str(sub(sk, "frontmatter"), "name", "notes");
	assert_non_null(sub(sk, "permissions"));
	f = info_ref_at(d.root, 0);
	assert_str(f, "path", "references/format.md");
	assert_uint(f, "size_bytes", 13);
	assert_null(mp_get(f, "text")); /* not asked for */
	assert_null(mp_get(f, "text_omitted"));
	mp_doc_free(&d);
	assert_trace(3, "new>info info>done");

	/* Asked for: a text, or why there is none. */
	r = info_send(4, "notes", 1);
	assert_int_equal(r.references, 1);
	a.ref = r.ref;
	msg_skill_info_req_free(&r);
	info_answer(&a);
	reply_to(4, &d);
	assert_str(info_ref_at(d.root, 0), "text", "h\xc3\xa9llo notes\n");
	assert_null(mp_get(info_ref_at(d.root, 0), "text_omitted"));
	assert_str(info_ref_at(d.root, 1), "text_omitted", "not_text");
	assert_null(mp_get(info_ref_at(d.root, 1), "text"));
	mp_doc_free(&d);

	/* policyd's refusal is the client's error, as for an unknown skill. */
	r = info_send(5, "secret", 0);
	memset(&a, 0, sizeof(a));
	a.ref = r.ref;
	a.err = ERR_UNKNOWN_SKILL;
	a.message = "no skill \"secret\" that this caller may run";
	msg_skill_info_req_free(&r);
	info_answer(&a);
	assert_failed(5, ERR_UNKNOWN_SKILL, "no skill \"secret\"");
	assert_trace(5, "new>info info>done");

	/* An answer about another skill than asked: a violation. */
	a = sample_skill_info_ans();
	r = info_send(6, "other", 0);
	a.ref = r.ref;
	msg_skill_info_req_free(&r);
	n = nmoves;
	enc_init(&m);
	msg_skill_info_ans_enc(&m, &a);
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_info_ans),
	    -1);
	assert_untouched(6, CALL_INFO, n);
	assert_null(call_of(6)->answer);
	/* ... and so is one for a call that does not wait for it. */
	a.ref = call_of(6)->ref + 1000;
	enc_init(&m);
	msg_skill_info_ans_enc(&m, &a);
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_info_ans),
	    -1);
	a.ref = call_of(6)->ref;
	a.name = "other";
	info_answer(&a);
	reply_to(6, &d);
	assert_bool(d.root, "ok", 1);
	mp_doc_free(&d);

	/* A reply that would pass the client's frame bound is not sent. */
	B->max_frame = 1024;
	r = info_send(7, "notes", 0);
	assert_int_equal(r.max_bytes, 1024 - INFO_REPLY_ROOM);
	a = sample_skill_info_ans();
	a.ref = r.ref;
	msg_skill_info_req_free(&r);
	memset(body, 'b', sizeof(body) - 1);
	body[sizeof(body) - 1] = '\0';
	a.body = body;
	info_answer(&a);
	assert_failed(7, ERR_INTERNAL, "over max_frame_bytes (1024)");
	assert_quiet(&t_auditd);
}

static void
test_authz_ans_twice(void **state)
{
	struct mp_enc m;
	uint64_t received, ref, dec;
	size_t n;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	enc_authz_ans(&m, ref, ERR_PERMISSION_DENIED, "");
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_authz_ans),
	    0);
	dec = expect_audit("policy.decision", "failure");
	n = nmoves;
	/* A second answer, even a different one, is a violation. */
	enc_authz_ans(&m, ref, ERR_NONE, GRANT);
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_authz_ans),
	    -1);
	assert_untouched(1, CALL_DECISION, n);
	assert_int_equal(call_of(1)->ans.err, ERR_PERMISSION_DENIED);
	assert_string_equal(call_of(1)->ans.grant_id, "");
	assert_quiet(&t_auditd);
	ack(received);
	ack(dec);
	assert_failed(1, ERR_PERMISSION_DENIED, NULL);
	assert_quiet(&t_master);
}

/* An allowed invoke must come with a grant to run. */
static void
test_authz_ans_no_grant(void **state)
{
	struct mp_enc m;
	uint64_t received, ref;
	size_t n;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	n = nmoves;
	enc_authz_ans(&m, ref, ERR_NONE, "");
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_authz_ans),
	    -1);
	assert_untouched(1, CALL_AUTHZ, n);
	assert_null(call_of(1)->ans.reason);
	assert_quiet(&t_auditd);
	/* An answer for a call that does not exist. */
	enc_authz_ans(&m, ref + 100, ERR_PERMISSION_DENIED, "");
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_authz_ans),
	    -1);
	deny(1, received);
}

/* RUN_STARTED while the decision is not yet durable. */
static void
test_run_started_early(void **state)
{
	struct pipes p;
	struct mp_enc m;
	uint64_t received, ref, dec;
	size_t n;
	char c;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ans(ref, ERR_NONE, GRANT);
	dec = expect_audit("policy.decision", NULL);
	n = nmoves;
	pipes_open(&p);
	enc_run_started(&m, ref);
	assert_int_equal(deliver(&B->master, &t_master, &m, p.w,
	                     RUN_STARTED_FDS, call_on_run_started),
	    -1);
	assert_untouched(1, CALL_DECISION, n);
	assert_int_equal(call_of(1)->ran, 0);
	/* The pipes it brought are closed, not kept. */
	assert_int_equal(read(p.in_r, &c, 1), 0);
	assert_int_equal(write(p.out_w, "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	assert_int_equal(chan_take_fd(&B->master.ch), -1);
	pipes_close(&p);
	/* Nor before the answer came at all. */
	invoke(2, "s2");
	expect_audit("invoke.received", NULL);
	expect_authz_req(2, 0);
	n = nmoves;
	pipes_open(&p);
	enc_run_started(&m, call_of(2)->ref);
	assert_int_equal(deliver(&B->master, &t_master, &m, p.w,
	                     RUN_STARTED_FDS, call_on_run_started),
	    -1);
	assert_untouched(2, CALL_AUTHZ, n);
	pipes_close(&p);
	ack(received);
	ack(dec);
	expect_run(ref);
	run_exited(ref, 0, ERR_SANDBOX_FAILED);
	ack(received + 2); /* 2's invoke.received, before 1's end */
	expect_end(ERR_SANDBOX_FAILED);
	assert_failed(1, ERR_SANDBOX_FAILED, NULL);
	deny(2, 0);
}

/* RUN_EXITED for a call that is not there, or not running. */
static void
test_run_exited_unexpected(void **state)
{
	struct mp_enc m;
	uint64_t received, ref;
	size_t n;

	(void)state;
	enc_run_exited(&m, 999, 1, ERR_NONE);
	assert_int_equal(
	    deliver(&B->master, &t_master, &m, NULL, 0, call_on_run_exited),
	    -1);
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	n = nmoves;
	enc_run_exited(&m, ref, 0, ERR_SANDBOX_FAILED);
	assert_int_equal(
	    deliver(&B->master, &t_master, &m, NULL, 0, call_on_run_exited),
	    -1);
	assert_untouched(1, CALL_AUTHZ, n);
	ref = to_run_wait(1, received);
	n = nmoves;
	/* Still waiting for RUN_STARTED: only a refusal may come. */
	enc_run_exited(&m, ref, 1, ERR_NONE);
	assert_int_equal(
	    deliver(&B->master, &t_master, &m, NULL, 0, call_on_run_exited),
	    -1);
	assert_untouched(1, CALL_RUN_WAIT, n);
	enc_run_exited(&m, ref, 1, ERR_TIMEOUT);
	assert_int_equal(
	    deliver(&B->master, &t_master, &m, NULL, 0, call_on_run_exited),
	    -1);
	enc_run_exited(&m, ref, 0, ERR_NONE);
	assert_int_equal(
	    deliver(&B->master, &t_master, &m, NULL, 0, call_on_run_exited),
	    -1);
	assert_untouched(1, CALL_RUN_WAIT, n);
	assert_int_equal(call_of(1)->err, ERR_NONE);
	assert_int_equal(call_of(1)->x.ref, 0);
	run_exited(ref, 0, ERR_SANDBOX_FAILED);
	assert_failed(1, ERR_SANDBOX_FAILED, NULL);
}

/* An ack for a record never sent, or acknowledged already. */
static void
test_audit_ack_unexpected(void **state)
{
	struct mp_enc m;
	uint64_t received, ref, dec;
	size_t n;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ans(ref, ERR_NONE, GRANT);
	dec = expect_audit("policy.decision", NULL);
	n = nmoves;
	enc_ack(&m, dec + 1, 1);
	assert_int_equal(
	    deliver(&B->auditd, &t_auditd, &m, NULL, 0, call_on_audit_ack), -1);
	assert_untouched(1, CALL_DECISION, n);
	/* auditd acknowledges in order: not the decision before received. */
	enc_ack(&m, dec, 1);
	assert_int_equal(
	    deliver(&B->auditd, &t_auditd, &m, NULL, 0, call_on_audit_ack), -1);
	assert_untouched(1, CALL_DECISION, n);
	assert_quiet(&t_master);
	enc_ack(&m, received, 1);
	assert_int_equal(
	    deliver(&B->auditd, &t_auditd, &m, NULL, 0, call_on_audit_ack), 0);
	enc_ack(&m, received, 1);
	assert_int_equal(
	    deliver(&B->auditd, &t_auditd, &m, NULL, 0, call_on_audit_ack), -1);
	assert_untouched(1, CALL_DECISION, n);
	assert_quiet(&t_master);
	ack(dec);
	expect_run(ref);
	/* The decision's ack, again, once the call moved on. */
	n = nmoves;
	enc_ack(&m, dec, 1);
	assert_int_equal(
	    deliver(&B->auditd, &t_auditd, &m, NULL, 0, call_on_audit_ack), -1);
	assert_untouched(1, CALL_RUN_WAIT, n);
	run_exited(ref, 0, ERR_SANDBOX_FAILED);
	assert_failed(1, ERR_SANDBOX_FAILED, NULL);
}

/* An answer of the wrong kind for a call. */
static void
test_wrong_answer_kind(void **state)
{
	struct msg_skills_ans sa = {0, NULL, 0, 0};
	struct msg_reload_ans ra = {0, ERR_NONE, "reloaded"};
	struct mp_enc m;
	uint64_t received, ref;
	size_t n;

	(void)state;
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	n = nmoves;
	sa.ref = ref;
	enc_init(&m);
	msg_skills_ans_enc(&m, &sa);
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_skills_ans),
	    -1);
	ra.ref = ref;
	enc_init(&m);
	msg_reload_ans_enc(&m, &ra);
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_reload_ans),
	    -1);
	assert_untouched(1, CALL_AUTHZ, n);
	assert_null(call_of(1)->answer);
	deny(1, received);
}

/* Through the real dispatch, a violation ends the peer that sent it. */
static void
test_violation_ends_peer(void **state)
{
	struct mp_enc m;
	uint64_t ref;

	(void)state;
	invoke(1, "s1");
	expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	enc_authz_ans(&m, ref, ERR_NONE, "");
	send_msg(&t_policyd, &m, NULL, 0);
	assert_int_equal(deaths, 1);
	assert_false(B->policyd.alive);
	/* ...and a dead policyd fails the call that waited on it. */
	assert_failed(1, ERR_POLICY_UNAVAILABLE, NULL);
	assert_trace(1, "new>queued queued>workers workers>authz authz>done");
}

/* policyd dies: calls waiting on it fail with policy_unavailable. */
static void
test_policyd_dies(void **state)
{
	struct mp_doc d;
	uint64_t dec4;

	(void)state;
	invoke(1, "a");
	expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	client_send(CREQ_SKILLS, 2, NULL, NULL, NULL);
	client_send(CREQ_RELOAD, 3, NULL, NULL, NULL);
	client_send(CREQ_AUTHORIZE, 4, "hello", NULL, NULL);
	client_send(CREQ_SKILL_INFO, 7, "hello", NULL, NULL);
	invoke(5, "a"); /* waits behind 1 */
	expect_audit("invoke.received", NULL);
	assert_state(2, CALL_SKILLS);
	assert_state(3, CALL_RELOAD);
	assert_state(7, CALL_INFO);
	assert_state(5, CALL_QUEUED);
	authz_ans(call_of(4)->ref, ERR_NONE, "");
	dec4 = expect_audit("policy.decision", NULL);
	assert_state(4, CALL_DECISION);

	chan_close(&t_policyd);
	pump();
	assert_int_equal(deaths, 1);
	assert_failed(1, ERR_POLICY_UNAVAILABLE, "policyd");
	assert_failed(2, ERR_POLICY_UNAVAILABLE, "policyd");
	assert_failed(3, ERR_POLICY_UNAVAILABLE, "policyd");
	assert_failed(5, ERR_POLICY_UNAVAILABLE, "policyd");
	assert_failed(7, ERR_POLICY_UNAVAILABLE, "policyd");
	assert_trace(7, "new>info info>done");
	assert_trace(1, "new>queued queued>workers workers>authz authz>done");
	assert_trace(2, "new>skills skills>done");
	assert_trace(3, "new>reload reload>done");
	assert_trace(5, "new>queued queued>workers workers>authz authz>done");
	/* A decided call does not need policyd any more. */
	assert_state(4, CALL_DECISION);
	/* A new call fails at once. */
	invoke(6, "b");
	assert_failed(6, ERR_POLICY_UNAVAILABLE, NULL);
	assert_trace(6, "new>done");
	ack(dec4 - 2); /* 1 received */
	ack(dec4 - 1); /* 5 received */
	ack(dec4);
	reply_to(4, &d);
	assert_bool(d.root, "ok", 1);
	mp_doc_free(&d);
}

/* auditd dies: a call whose decision is not durable fails. */
static void
test_auditd_dies(void **state)
{
	struct msg_skills_ans sa = {0, NULL, 0, 0};
	struct mp_enc m;
	struct mp_doc d;
	uint64_t ref1;

	(void)state;
	invoke(1, "a");
	expect_audit("invoke.received", NULL);
	ref1 = expect_authz_req(1, 0);
	invoke(2, "b");
	expect_audit("invoke.received", NULL);
	expect_authz_req(2, 0);
	client_send(CREQ_AUTHORIZE, 3, "hello", NULL, NULL);
	expect_authz_req(3, 1);
	client_send(CREQ_SKILLS, 4, NULL, NULL, NULL);
	authz_ans(ref1, ERR_NONE, GRANT);
	expect_audit("policy.decision", NULL);
	assert_state(1, CALL_DECISION);

	chan_close(&t_auditd);
	pump();
	assert_int_equal(deaths, 1);
	assert_failed(1, ERR_AUDIT_UNAVAILABLE, "auditd");
	expect_cancel();
	assert_trace(1, "new>queued queued>workers workers>authz "
	                "authz>decision decision>done");
	assert_state(2, CALL_AUTHZ);
	assert_state(3, CALL_AUTHZ);
	/* A decision that cannot be recorded is not acted on. */
	authz_ans(call_of(2)->ref, ERR_NONE, GRANT);
	assert_failed(2, ERR_AUDIT_UNAVAILABLE, "auditd");
	expect_cancel();
	assert_trace(2, "new>queued queued>workers workers>authz "
	                "authz>decision decision>done");
	authz_ans(call_of(3)->ref, ERR_NONE, "");
	assert_failed(3, ERR_AUDIT_UNAVAILABLE, "auditd");
	assert_quiet(&t_master);
	/* skills needs no audit. */
	assert_state(4, CALL_SKILLS);
	sa.ref = call_of(4)->ref;
	enc_init(&m);
	msg_skills_ans_enc(&m, &sa);
	send_msg(&t_policyd, &m, NULL, 0);
	reply_to(4, &d);
	assert_bool(d.root, "ok", 1);
	mp_doc_free(&d);
	/* A new invoke fails at once. */
	invoke(5, "c");
	assert_failed(5, ERR_AUDIT_UNAVAILABLE, NULL);
	assert_trace(5, "new>done");
}

/*
 * auditd is gone but the broker has not read its EOF yet: recording the
 * decision fails inside the send. The call must not be ended under the
 * code that is moving it; the death comes from the loop.
 */
static void
test_auditd_gone_unnoticed(void **state)
{
	struct mp_enc m;
	uint64_t ref;

	(void)state;
	invoke(1, "s1");
	expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	chan_close(&t_auditd);
	enc_authz_ans(&m, ref, ERR_NONE, GRANT);
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_authz_ans),
	    0);
	assert_int_equal(deaths, 0);
	assert_state(1, CALL_DECISION);
	pump();
	assert_int_equal(deaths, 1);
	assert_false(B->auditd.alive);
	assert_failed(1, ERR_AUDIT_UNAVAILABLE, "auditd");
	expect_cancel();
	assert_trace(1, "new>queued queued>workers workers>authz "
	                "authz>decision decision>done");
	assert_quiet(&t_master);
}

/* Two invokes of one session run one after the other. */
static void
test_session_in_order(void **state)
{
	struct pipes p;
	struct mp_enc m;
	uint64_t r1, r2, ref1;

	(void)state;
	invoke(1, "s1");
	r1 = expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	invoke(2, "s1");
	r2 = expect_audit("invoke.received", NULL);
	assert_state(2, CALL_QUEUED);
	assert_trace(2, "new>queued");
	assert_quiet(&t_policyd);
	/* Another session is not held up. */
	invoke(3, "s2");
	expect_audit("invoke.received", NULL);
	expect_authz_req(3, 0);

	/* 2 waits through each of 1's states, up to DONE. */
	authz_ans(call_of(1)->ref, ERR_NONE, GRANT);
	expect_audit("policy.decision", NULL);
	assert_state(2, CALL_QUEUED);
	ack(r1);
	ack(r2);
	ack(r2 + 1);
	ack(r2 + 2);
	ref1 = call_of(1)->ref;
	expect_run(ref1);
	assert_state(2, CALL_QUEUED);
	pipes_open(&p);
	enc_run_started(&m, ref1);
	send_msg(&t_master, &m, p.w, RUN_STARTED_FDS);
	pipes_write(&p);
	run_exited(ref1, 1, ERR_NONE);
	assert_state(1, CALL_DRAINING);
	assert_state(2, CALL_QUEUED);
	assert_quiet(&t_policyd);
	pipes_close(&p);
	ack(expect_completed());
	assert_result_ok(1);
	/* 1 is done: 2 goes. */
	expect_authz_req(2, 0);
	assert_trace(2, "new>queued queued>workers workers>authz");
	deny(2, 0);
	deny(3, 0);
}

/* The line for one session is bounded, and the refusal names the bound. */
static void
test_session_bound(void **state)
{
	char want[128];
	uint64_t id;

	(void)state;
	invoke(1, "s1");
	expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	for (id = 2; id <= SESSION_QUEUE_MAX + 1; id++) {
		invoke(id, "s1");
		assert_state(id, CALL_QUEUED);
	}
	assert_int_equal(B->nqueued, SESSION_QUEUE_MAX);
	invoke(id, "s1");
	snprintf(want, sizeof(want),
	    "%d calls already wait for session \"s1\" (the bound per session)",
	    SESSION_QUEUE_MAX);
	assert_failed(id, ERR_OVERLOADED, want);
	assert_trace(id, "new>queued queued>done");
	assert_int_equal(B->nqueued, SESSION_QUEUE_MAX);
	/* Another session still has room. */
	invoke(100, "s2");
	expect_authz_req(100, 0);
	/* Let them all go: without policyd each fails in turn. */
	chan_close(&t_policyd);
	pump();
	for (id = 1; id <= SESSION_QUEUE_MAX + 1; id++) {
		assert_failed(id, ERR_POLICY_UNAVAILABLE, NULL);
		assert_trace(
		    id, "new>queued queued>workers workers>authz authz>done");
	}
	assert_failed(100, ERR_POLICY_UNAVAILABLE, NULL);
	assert_int_equal(B->nqueued, 0);
}

/*
 * The client goes away: its calls are cancelled. One that waits for
 * policyd ends at the answer (its grant goes back, it never runs); one
 * that waits in its session's line ends at once; one that runs has its
 * worker ended by the master. Each is audited as cancelled.
 */
static void
test_client_gone(void **state)
{
	uint64_t r1, r2, r3, ref1, ref3;
	struct pipes p;
	struct mp_enc m;

	(void)state;
	invoke(1, "s1");
	r1 = expect_audit("invoke.received", NULL);
	ref1 = expect_authz_req(1, 0);
	invoke(2, "s1"); /* waits behind 1 */
	r2 = expect_audit("invoke.received", NULL);
	invoke(3, "s3");
	r3 = expect_audit("invoke.received", NULL);
	ref3 = expect_authz_req(3, 0);
	ack(r1);
	ack(r2);
	ack(r3);
	authz_ans(ref3, ERR_NONE, GRANT);
	ack(expect_audit("policy.decision", NULL));
	expect_run(ref3);
	pipes_open(&p);
	enc_run_started(&m, ref3);
	send_msg(&t_master, &m, p.w, RUN_STARTED_FDS);
	assert_state(3, CALL_RUNNING);

	chan_close(&t_client);
	pump();
	assert_int_equal(quota_total(QUOTA_CLIENTS), 0);
	/* 2, in line, ends now: it never reaches policyd. */
	expect_end(ERR_CANCELLED);
	assert_null(call_of(2));
	/* 3 runs: the master is asked to end its worker. */
	expect_cancel();
	assert_state(3, CALL_RUNNING);
	pipes_close(&p);
	run_exited(ref3, 1, ERR_CANCELLED);
	ack(expect_audit("invoke.completed", "failure"));
	assert_null(call_of(3));
	/* 1 ends at policyd's answer; its grant goes back unused. */
	assert_state(1, CALL_AUTHZ);
	authz_ans(ref1, ERR_NONE, GRANT);
	expect_end(ERR_CANCELLED);
	expect_cancel();
	assert_null(call_of(1));
	assert_quiet(&t_policyd);
	assert_int_equal(B->ncalls, 0);
}

static int idle_fired;

static void
idle_cb(evutil_socket_t fd, short ev, void *arg)
{
	(void)fd;
	(void)ev;
	(void)arg;
	idle_fired++;
}

/*
 * The idle timer (main.c gives memory back when it fires) is armed when
 * the last call ends, or a connection goes with none left.
 */
static void
test_idle_timer(void **state)
{
	uint64_t r1, r2;
	struct mp_doc d;

	(void)state;
	B->trim_ev = evtimer_new(B->base, idle_cb, NULL);
	assert_non_null(B->trim_ev);
	idle_fired = 0;
	client_send(CREQ_AUTHORIZE, 1, "hello", NULL, NULL);
	r1 = expect_authz_req(1, 1);
	client_send(CREQ_AUTHORIZE, 2, "hello", NULL, NULL);
	r2 = expect_authz_req(2, 1);
	authz_ans(r1, ERR_NONE, "");
	ack(expect_audit("policy.decision", "success"));
	reply_to(1, &d);
	mp_doc_free(&d);
	assert_false(evtimer_pending(B->trim_ev, NULL)); /* 2 is in flight */
	authz_ans(r2, ERR_NONE, "");
	ack(expect_audit("policy.decision", "success"));
	reply_to(2, &d);
	mp_doc_free(&d);
	assert_int_equal(B->ncalls, 0);
	assert_true(evtimer_pending(B->trim_ev, NULL));
	assert_int_equal(idle_fired, 0);
	/* a connection that goes, with no call left, arms it too */
	evtimer_del(B->trim_ev);
	chan_close(&t_client);
	pump();
	assert_int_equal(quota_total(QUOTA_CLIENTS), 0);
	assert_true(evtimer_pending(B->trim_ev, NULL));
	event_free(B->trim_ev);
	B->trim_ev = NULL;
}

/*
 * For every kind, state and event: call_expects() says exactly what the
 * table above says.
 */
static void
test_table(void **state)
{
	static const enum creq_type kinds[] = {CREQ_INVOKE, CREQ_AUTHORIZE,
	    CREQ_SKILLS, CREQ_RELOAD, CREQ_SKILL_INFO, CREQ_PUT_FILE,
	    CREQ_GET_FILE, CREQ_LIST_FILES, CREQ_DELETE_FILE};
	struct call c;
	size_t k, i;
	int st, ev, want;

	(void)state;
	memset(&c, 0, sizeof(c));
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		for (st = 0; st < CALL__COUNT; st++)
			for (ev = 0; ev < CEV__COUNT; ev++) {
				c.cr.type = kinds[k];
				c.st = (enum call_state)st;
				want = ev == CEV_FAIL && st != CALL_DONE;
				for (i = 0; i < NTABLE; i++)
					if ((table[i].kinds & K(kinds[k])) &&
					    (int)table[i].from == st &&
					    (int)table[i].ev == ev)
						want = 1;
				if (call_expects(&c, (enum call_event)ev) !=
				    want)
					fail_msg("%s in %s, event %d: "
					         "call_expects says %d",
					    creq_type_name(kinds[k]),
					    call_state_name(c.st), ev, !want);
			}
}

/* A request that gets overloaded at once, naming the bound. */
static void
assert_overloaded(uint64_t id, const char *bound)
{
	assert_failed(id, ERR_OVERLOADED, bound);
}

/* One uid's requests in flight are bounded over all its connections. */
static void
test_quota_calls(void **state)
{
	uint64_t r[3];
	int i;

	(void)state;
	B->per_uid.calls = 3;
	for (i = 0; i < 3; i++) {
		invoke((uint64_t)i + 1, i == 0 ? "s1" : i == 1 ? "s2" : "s3");
		r[i] = expect_audit("invoke.received", NULL);
		expect_authz_req((uint64_t)i + 1, 0);
	}
	invoke(4, "s4");
	assert_overloaded(4, "per_uid.calls");
	assert_null(call_of(4));
	/* The connection stays: once one ends, the next is taken. */
	for (i = 0; i < 3; i++)
		ack(r[i]);
	deny(1, 0);
	invoke(5, "s5");
	ack(expect_audit("invoke.received", NULL));
	expect_authz_req(5, 0);
	deny(2, 0);
	deny(3, 0);
	deny(5, 0);
}

/*
 * Calls beyond their uid's share of workers wait in line (policyd is not
 * asked) and go, first come first, as workers come back; the share kept
 * for admins opens to an admin's waiting call.
 */
static void
test_quota_workers(void **state)
{
	struct msg_admins a;
	uint64_t uid0 = 0;
	struct mp_enc m;
	uint64_t r;

	(void)state;
	B->per_uid.workers = 2;
	invoke(1, "s1");
	r = expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	invoke(2, "s2");
	expect_audit("invoke.received", NULL);
	expect_authz_req(2, 0);
	invoke(3, "s3");
	expect_audit("invoke.received", NULL);
	invoke(4, "s4");
	expect_audit("invoke.received", NULL);
	ack(r);
	ack(r + 1);
	ack(r + 2);
	ack(r + 3);
	assert_quiet(&t_policyd);
	assert_state(3, CALL_WORKERS);
	assert_state(4, CALL_WORKERS);
	deny(1, 0); /* a worker back: the first in line goes */
	expect_authz_req(3, 0);
	assert_state(4, CALL_WORKERS);
	deny(2, 0);
	expect_authz_req(4, 0);
	deny(3, 0);
	deny(4, 0);

	/* 4 workers, 4 per uid: one is kept for admins. */
	B->workers = 4;
	B->per_uid.workers = 4;
	assert_int_equal(quota_reserve(4), 1);
	invoke(11, "t1");
	r = expect_audit("invoke.received", NULL);
	expect_authz_req(11, 0);
	invoke(12, "t2");
	expect_audit("invoke.received", NULL);
	expect_authz_req(12, 0);
	invoke(13, "t3");
	expect_audit("invoke.received", NULL);
	expect_authz_req(13, 0);
	invoke(14, "t4");
	expect_audit("invoke.received", NULL);
	ack(r);
	ack(r + 1);
	ack(r + 2);
	ack(r + 3);
	assert_quiet(&t_policyd);
	assert_state(14, CALL_WORKERS); /* the last worker is kept */
	/* policyd says this uid is an admin: the last worker is its. */
	a = (struct msg_admins){&uid0, NULL, 1, 0};
	enc_init(&m);
	msg_admins_enc(&m, &a);
	send_msg(&t_policyd, &m, NULL, 0);
	expect_authz_req(14, 0);
	invoke(15, "t5");
	expect_audit("invoke.received", NULL);
	ack(r + 4);
	assert_state(15, CALL_WORKERS); /* its own share is used up */
	deny(11, 0);
	expect_authz_req(15, 0);
	deny(12, 0);
	deny(13, 0);
	deny(14, 0);
	deny(15, 0);
}

/*
 * Time in line is call time: a call whose timeout passes while it waits
 * for a worker ends with timeout (policyd never asked); one that got
 * out tells policyd how long it waited. A call in line is cancelled by
 * the client's cancel, at once.
 */
static void
test_line_timeout_cancel(void **state)
{
	struct client_req cr;
	struct msg_authz_req ar;
	struct mp_doc d;
	struct mp_enc m;
	struct error e;
	uint64_t r;

	(void)state;
	B->per_uid.workers = 1;
	invoke(1, "s1");
	r = expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	memset(&cr, 0, sizeof(cr));
	cr.type = CREQ_INVOKE;
	cr.id.is_num = 1;
	cr.id.num = 2;
	cr.skill = "hello";
	cr.session = "s2";
	cr.timeout_ms = 150;
	enc_init(&m);
	client_req_enc(&m, &cr);
	send_msg(&t_client, &m, NULL, 0);
	expect_audit("invoke.received", NULL);
	invoke(3, "s3");
	expect_audit("invoke.received", NULL);
	ack(r);
	ack(r + 1);
	ack(r + 2);
	assert_state(2, CALL_WORKERS);
	/* cancel 3, in line: answered, then its own reply */
	memset(&cr, 0, sizeof(cr));
	cr.type = CREQ_CANCEL;
	cr.id.is_num = 1;
	cr.id.num = 4;
	cr.rid.is_num = 1;
	cr.rid.num = 3;
	enc_init(&m);
	client_req_enc(&m, &cr);
	send_msg(&t_client, &m, NULL, 0);
	reply_to(4, &d);
	assert_str(d.root, "type", "cancel");
	assert_bool(d.root, "ok", 1);
	assert_str(d.root, "state", "workers");
	mp_doc_free(&d);
	expect_end(ERR_CANCELLED);
	assert_failed(3, ERR_CANCELLED, "cancelled by the client");
	/* cancel of what is not in flight */
	cr.id.num = 5;
	cr.rid.num = 99;
	enc_init(&m);
	client_req_enc(&m, &cr);
	send_msg(&t_client, &m, NULL, 0);
	assert_failed(5, ERR_NOT_FOUND, "no call of that request_id");
	/* 2's 150 ms pass in line */
	expect_end(ERR_TIMEOUT);
	assert_failed(2, ERR_TIMEOUT, "waited");
	assert_quiet(&t_policyd);
	/* a call that waited tells policyd how long */
	invoke(6, "s6");
	r = expect_audit("invoke.received", NULL);
	ack(r);
	usleep(50000);
	deny(1, 0);
	recv_msg(&t_policyd, MSG_AUTHZ_REQ, &d);
	if (msg_authz_req_dec(&d, &ar, &e) == -1)
		fail_msg("AUTHZ_REQ: %s", e.msg);
	assert_true(ar.queued_ms >= 50);
	msg_authz_req_free(&ar);
	mp_doc_free(&d);
	deny(6, 0);
}

/* The master's SESSION_END for (uid 0, session). */
static void
expect_session_end(const char *session)
{
	struct msg_session_end se;
	struct mp_doc d;
	struct error e;

	recv_msg(&t_master, MSG_SESSION_END, &d);
	if (msg_session_end_dec(&d, &se, &e) == -1)
		fail_msg("SESSION_END: %s", e.msg);
	mp_doc_free(&d);
	assert_string_equal(se.session, session);
	msg_session_end_free(&se);
}

/*
 * A uid at its session bound gives up its own least recently used idle
 * session; if none is idle, its new session is refused.
 */
static void
test_quota_sessions(void **state)
{
	uint64_t r;

	(void)state;
	B->per_uid.sessions = 2;
	invoke(1, "s1");
	r = expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	deny(1, r);
	invoke(2, "s2");
	expect_audit("invoke.received", NULL);
	expect_authz_req(2, 0);
	/* s1 is idle, s2 busy: s3 takes s1's place */
	invoke(3, "s3");
	expect_audit("invoke.received", NULL);
	expect_session_end("s1");
	expect_authz_req(3, 0);
	/* s2 and s3 busy: s4 cannot be */
	invoke(4, "s4");
	expect_audit("invoke.received", NULL);
	ack(r + 3); /* r + 1, r + 2: 1's decision and end */
	ack(r + 4);
	ack(r + 5);
	expect_end(ERR_OVERLOADED);
	assert_overloaded(4, "per_uid.sessions");
	assert_quiet(&t_master);
	deny(2, 0);
	deny(3, 0);
}

/* A partial frame has clients.frame_s; then bad_request, and the end. */
static void
test_partial_frame(void **state)
{
	static const uint8_t half[2] = {0, 0};
	struct mp_doc d;
	int i;

	(void)state;
	B->clients.frame_s = 1;
	assert_int_equal(write(t_client.fd, half, sizeof(half)), 2);
	for (i = 0; i < 50 && quota_total(QUOTA_CLIENTS) > 0; i++) {
		usleep(30000);
		pump();
	}
	recv_doc(&t_client, &d);
	assert_str(d.root, "type", "error");
	assert_str(sub(d.root, "error"), "type", "bad_request");
	assert_non_null(
	    strstr(mp_get(sub(d.root, "error"), "message")->via.str.ptr,
	        "clients.frame_s"));
	mp_doc_free(&d);
	assert_int_equal(quota_total(QUOTA_CLIENTS), 0);
}

/* A connection with nothing in flight ends after clients.idle_s. */
static void
test_idle_client(void **state)
{
	uint64_t r;
	int i;

	(void)state;
	B->clients.idle_s = 1;
	/* A call in flight: the connection is not idle, however long. */
	invoke(1, "s1");
	r = expect_audit("invoke.received", NULL);
	expect_authz_req(1, 0);
	for (i = 0; i < 50; i++) {
		usleep(30000);
		pump();
	}
	assert_int_equal(quota_total(QUOTA_CLIENTS), 1);
	deny(1, r);
	for (i = 0; i < 60 && quota_total(QUOTA_CLIENTS) > 0; i++) {
		usleep(30000);
		pump();
	}
	assert_int_equal(quota_total(QUOTA_CLIENTS), 0);
}

/*
 * A client that sends requests and never reads the replies: past
 * clients.output_bytes of unread replies the broker reads no more from
 * it, so it cannot grow the broker; once it reads, it is served again.
 */
static void
test_output_throttle(void **state)
{
	struct client_req r;
	struct mp_enc m;
	struct conn *cn = LIST_FIRST(&B->conns);
	struct mp_doc d;
	uint64_t sent = 0, got = 0;
	int i;

	(void)state;
	B->clients.output_bytes = 65536;
	memset(&r, 0, sizeof(r));
	r.type = CREQ_HELLO;
	r.id.is_num = 1;
	for (i = 0; i < 400 && !cn->throttled; i++) {
		int k;

		for (k = 0; k < 100; k++) {
			r.id.num = ++sent;
			enc_init(&m);
			client_req_enc(&m, &r);
			chan_queue(&t_client, &m, NULL, 0);
			enc_free(&m);
		}
		(void)chan_flush(&t_client);
		pump();
	}
	assert_true(cn->throttled);
	/* What it still has queued is not read while it does not read. */
	for (i = 0; i < 20; i++)
		pump();
	assert_true(B->stat_requests < sent);
	assert_true(evbuffer_get_length(bufferevent_get_output(cn->bev)) <=
	            2 * B->clients.output_bytes);
	/* It reads: every request is answered. */
	while (got < sent) {
		recv_doc(&t_client, &d);
		mp_doc_free(&d);
		got++;
		if (chan_flush(&t_client) == -1)
			fail_msg("client: flush");
	}
	assert_int_equal(B->stat_requests, sent);
	assert_false(cn->throttled);
}

/* ------------------------------------------------------------ approvals */

/* policyd's answer for an ask rule: approval_denied, no grant, ask. */
static void
authz_ask_enc(struct mp_enc *m, uint64_t ref)
{
	char *rules[] = {"10-rules.yaml:7 confirm"};
	struct msg_authz_ans a;

	memset(&a, 0, sizeof(a));
	a.ref = ref;
	a.err = ERR_APPROVAL_DENIED;
	a.ask = 1;
	a.reason = "rule \"confirm\" requires approval";
	a.rules = rules;
	a.nrules = 1;
	a.grant_id = "";
	a.command = "greet";
	a.timeout_ms = 5000;
	a.output_bytes = 4096;
	a.effective = (uint8_t *)"\x81\xa6limits\x80";
	a.effective_len = 9;
	enc_init(m);
	msg_authz_ans_enc(m, &a);
}

static void
authz_ask(uint64_t ref)
{
	struct mp_enc m;

	authz_ask_enc(&m, ref);
	send_msg(&t_policyd, &m, NULL, 0);
}

/* The next AUTHZ_REQ, for id's call, says a human approved it. */
static uint64_t
expect_authz_approved(uint64_t id)
{
	struct msg_authz_req a;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	recv_msg(&t_policyd, MSG_AUTHZ_REQ, &d);
	if (msg_authz_req_dec(&d, &a, &e) == -1)
		fail_msg("AUTHZ_REQ: %s", e.msg);
	mp_doc_free(&d);
	assert_non_null(call_of(id));
	assert_int_equal(a.ref, call_of(id)->ref);
	assert_int_equal(a.approved, 1);
	assert_int_equal(a.dry_run, 0);
	ref = a.ref;
	msg_authz_req_free(&a);
	return ref;
}

/* The next record is an approval's: its action, id and outcome. */
static uint64_t
expect_approval_rec(
    const char *action, const char *appr, const char *outcome, const char *by)
{
	const msgpack_object *ev;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	recv_msg(&t_auditd, MSG_AUDIT, &d);
	if (msg_audit_dec(&d, &ref, &ev, &e) == -1)
		fail_msg("AUDIT: %s", e.msg);
	assert_lazy_unless_gating(&d, ev);
	assert_str(ev, "event.action", action);
	assert_str(ev, "event.outcome", outcome);
	assert_str(ev, "approval.id", appr);
	assert_str(ev, "session.id", "s1");
	if (by != NULL)
		assert_str(ev, "approval.by", by);
	if (strcmp(action, "approval.requested") == 0) {
		assert_uint(
		    ev, "approval.timeout_ms", B->clients.approval_s * 1000);
		assert_non_null(mp_get(ev, "rule.name"));
	} else
		assert_non_null(mp_get(ev, "event.duration"));
	mp_doc_free(&d);
	return ref;
}

/* The next frame the client reads: the approval_request of request id. */
static void
expect_approval_request(uint64_t id, const char *appr)
{
	const msgpack_object *args, *opts;
	struct mp_doc d;

	recv_doc(&t_client, &d);
	assert_str(d.root, "type", "approval_request");
	assert_null(mp_get(d.root, "ok"));
	assert_str(d.root, "id", appr);
	assert_uint(d.root, "request_id", id);
	assert_str(d.root, "skill", "hello");
	assert_str(d.root, "command", "greet");
	args = mp_get(d.root, "args");
	assert_non_null(args);
	assert_int_equal(args->type, MSGPACK_OBJECT_ARRAY);
	assert_uint(d.root, "args_total", args->via.array.size);
	assert_non_null(sub(d.root, "effective"));
	opts = mp_get(d.root, "options");
	assert_non_null(opts);
	assert_int_equal(opts->via.array.size, 3);
	assert_uint(d.root, "timeout_ms", B->clients.approval_s * 1000);
	mp_doc_free(&d);
}

/* hello with approvals: true on the test's client connection. */
static void
hello_approvals(uint64_t id)
{
	struct client_req r;
	struct mp_enc m;
	struct mp_doc d;

	memset(&r, 0, sizeof(r));
	r.type = CREQ_HELLO;
	r.id.is_num = 1;
	r.id.num = id;
	r.approvals = 1;
	enc_init(&m);
	client_req_enc(&m, &r);
	send_msg(&t_client, &m, NULL, 0);
	reply_to(id, &d);
	assert_bool(d.root, "ok", 1);
	mp_doc_free(&d);
	assert_true(LIST_FIRST(&B->conns)->approvals);
}

/* approve (request id) of approval appr with option, from end. */
static void
approve_on(struct chan *end, uint64_t id, const char *appr, const char *opt)
{
	struct client_req r;
	struct mp_enc m;

	memset(&r, 0, sizeof(r));
	r.type = CREQ_APPROVE;
	r.id.is_num = 1;
	r.id.num = id;
	r.approval_id = (char *)appr;
	r.option = client_approval_parse(opt);
	enc_init(&m);
	client_req_enc(&m, &r);
	send_msg(end, &m, NULL, 0);
}

/* The reply to approve id: ok, and the approval it answered. */
static void
assert_approved_reply(uint64_t id, const char *appr)
{
	struct mp_doc d;

	reply_to(id, &d);
	assert_str(d.root, "type", "approve");
	assert_bool(d.root, "ok", 1);
	assert_str(d.root, "approval_id", appr);
	mp_doc_free(&d);
}

/* policy.decision of an approved call: allowed, and how it was approved. */
static uint64_t
expect_approved_decision(const char *option, int remembered)
{
	const msgpack_object *ev;
	struct mp_doc d;
	struct error e;
	uint64_t ref;

	recv_msg(&t_auditd, MSG_AUDIT, &d);
	if (msg_audit_dec(&d, &ref, &ev, &e) == -1)
		fail_msg("AUDIT: %s", e.msg);
	assert_lazy_unless_gating(&d, ev);
	assert_str(ev, "event.action", "policy.decision");
	assert_str(ev, "event.outcome", "success");
	assert_str(ev, "approval.option", option);
	assert_bool(ev, "approval.remembered", remembered);
	if (remembered)
		assert_null(mp_get(ev, "approval.id"));
	else
		assert_non_null(mp_get(ev, "approval.id"));
	mp_doc_free(&d);
	return ref;
}

/* Policy says this uid is an admin (1) or names nobody (0). */
static void
admins(int me)
{
	uint64_t uid = getuid();
	struct msg_admins a = {me ? &uid : NULL, NULL, me ? 1 : 0, 0};
	struct mp_enc m;

	enc_init(&m);
	msg_admins_enc(&m, &a);
	send_msg(&t_policyd, &m, NULL, 0);
}

#define TO_APPROVAL "new>queued queued>workers workers>authz authz>approval"

/*
 * An approved call (AUTHZ_REQ approved, ref) that policyd allows and the
 * master cannot run: its decision says how it was approved; recs are
 * the records before it, acknowledged in order.
 */
static void
allowed_then_refused(uint64_t id, uint64_t ref, const char *option,
    int remembered, const uint64_t *recs, size_t nrecs)
{
	uint64_t dec;
	size_t i;

	authz_ans(ref, ERR_NONE, GRANT);
	dec = expect_approved_decision(option, remembered);
	for (i = 0; i < nrecs; i++)
		ack(recs[i]);
	ack(dec);
	expect_run(ref);
	run_exited(ref, 0, ERR_SANDBOX_FAILED);
	expect_end(ERR_SANDBOX_FAILED);
	assert_failed(id, ERR_SANDBOX_FAILED, NULL);
}

/* invoke id in session s1 with timeout_ms (0: none). */
static void
invoke_timeout(uint64_t id, uint64_t timeout_ms)
{
	struct client_req cr;
	struct mp_enc m;

	memset(&cr, 0, sizeof(cr));
	cr.type = CREQ_INVOKE;
	cr.id.is_num = 1;
	cr.id.num = id;
	cr.skill = "hello";
	cr.session = "s1";
	cr.timeout_ms = timeout_ms;
	enc_init(&m);
	client_req_enc(&m, &cr);
	send_msg(&t_client, &m, NULL, 0);
}

#define TO_APPROVAL "new>queued queued>workers workers>authz authz>approval"
#define APPROVED_REFUSED                                                       \
	" approval>authz authz>decision decision>run_wait run_wait>done"

/*
 * yes_once: the call waits for the human (its timeout_ms stopped: the
 * wait is not call time), asked once under a fresh id, and goes back to
 * policyd approved; the next call of the session is asked again.
 */
static void
test_approval_yes_once(void **state)
{
	struct msg_authz_req ar;
	struct mp_doc d;
	struct mp_enc m;
	struct error e;
	uint64_t recs[3], ref;
	size_t n;

	(void)state;
	admins(0);
	hello_approvals(100);
	invoke_timeout(1, 150); /* less than the human takes */
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ask(ref);
	recs[1] = expect_approval_rec(
	    "approval.requested", "appr-1", "unknown", NULL);
	expect_approval_request(1, "appr-1");
	assert_state(1, CALL_APPROVAL);
	assert_trace(1, TO_APPROVAL);
	assert_quiet(&t_policyd);
	assert_quiet(&t_master);
	/* The human takes longer than timeout_ms: nothing times out. */
	usleep(300000);
	pump();
	assert_state(1, CALL_APPROVAL);
	approve_on(&t_client, 2, "appr-1", "yes_once");
	assert_approved_reply(2, "appr-1");
	recs[2] = expect_approval_rec(
	    "approval.answered", "appr-1", "success", "client");
	recv_msg(&t_policyd, MSG_AUTHZ_REQ, &d);
	if (msg_authz_req_dec(&d, &ar, &e) == -1)
		fail_msg("AUTHZ_REQ: %s", e.msg);
	mp_doc_free(&d);
	assert_int_equal(ar.approved, 1);
	assert_int_equal(ar.ref, ref);
	assert_true(ar.queued_ms < 150); /* the human's time is not in it */
	msg_authz_req_free(&ar);
	assert_state(1, CALL_AUTHZ);
	/* Once approved, an ask from policyd is a violation. */
	n = nmoves;
	authz_ask_enc(&m, ref);
	assert_int_equal(
	    deliver(&B->policyd, &t_policyd, &m, NULL, 0, call_on_authz_ans),
	    -1);
	assert_int_equal(nmoves, n);
	/* The answer was given: answering it again finds nothing. */
	approve_on(&t_client, 3, "appr-1", "no");
	assert_failed(3, ERR_NOT_FOUND, "no approval of that id is pending");
	allowed_then_refused(1, ref, "yes_once", 0, recs, 3);
	assert_trace(1, TO_APPROVAL APPROVED_REFUSED);
	/* yes_once is not remembered: the next call is asked again. */
	invoke(4, "s1");
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(4, 0);
	authz_ask(ref);
	recs[1] = expect_approval_rec(
	    "approval.requested", "appr-2", "unknown", NULL);
	expect_approval_request(4, "appr-2");
	approve_on(&t_client, 5, "appr-2", "yes_once");
	assert_approved_reply(5, "appr-2");
	recs[2] = expect_approval_rec(
	    "approval.answered", "appr-2", "success", "client");
	ref = expect_authz_approved(4);
	allowed_then_refused(4, ref, "yes_once", 0, recs, 3);
	assert_quiet(&t_client);
}

/*
 * yes_in_session: remembered for (uid, session, skill): the session's
 * next call is not asked, even on a connection that answers nothing;
 * another session is. A policy load (ADMINS) forgets it.
 */
static void
test_approval_in_session(void **state)
{
	uint64_t recs[3], ref;

	(void)state;
	admins(0);
	hello_approvals(100);
	invoke(1, "s1");
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ask(ref);
	recs[1] = expect_approval_rec(
	    "approval.requested", "appr-1", "unknown", NULL);
	expect_approval_request(1, "appr-1");
	approve_on(&t_client, 2, "appr-1", "yes_in_session");
	assert_approved_reply(2, "appr-1");
	recs[2] = expect_approval_rec(
	    "approval.answered", "appr-1", "success", "client");
	ref = expect_authz_approved(1);
	allowed_then_refused(1, ref, "yes_in_session", 0, recs, 3);
	/* Not asked again: the session remembers, whoever calls. */
	LIST_FIRST(&B->conns)->approvals = 0;
	invoke(3, "s1");
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(3, 0);
	authz_ask(ref);
	assert_int_equal(expect_authz_approved(3), ref);
	assert_quiet(&t_client);
	assert_trace(3, TO_APPROVAL " approval>authz");
	allowed_then_refused(3, ref, "yes_in_session", 1, recs, 1);
	/* Another session is asked (this connection answers nothing). */
	client_send(CREQ_INVOKE, 4, "hello", "s2", NULL);
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(4, 0);
	authz_ask(ref);
	ack(recs[0]);
	ack(expect_audit("policy.decision", "failure"));
	expect_end(ERR_APPROVAL_DENIED);
	assert_failed(4, ERR_APPROVAL_DENIED, "does not answer approval");
	/* The policy is loaded again: s1 is asked anew. */
	admins(0);
	invoke(5, "s1");
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(5, 0);
	authz_ask(ref);
	ack(recs[0]);
	ack(expect_audit("policy.decision", "failure"));
	expect_end(ERR_APPROVAL_DENIED);
	assert_failed(5, ERR_APPROVAL_DENIED, "does not answer approval");
	assert_trace(5, TO_APPROVAL " approval>decision decision>done");
}

/* no: the ask becomes the decision, a denial naming who said no. */
static void
test_approval_no(void **state)
{
	const msgpack_object *ev;
	uint64_t recs[3], ref, dec;
	struct mp_doc d;
	struct error e;

	(void)state;
	admins(0);
	hello_approvals(100);
	invoke(1, "s1");
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ask(ref);
	recs[1] = expect_approval_rec(
	    "approval.requested", "appr-1", "unknown", NULL);
	expect_approval_request(1, "appr-1");
	approve_on(&t_client, 2, "appr-1", "no");
	assert_approved_reply(2, "appr-1");
	recs[2] = expect_approval_rec(
	    "approval.answered", "appr-1", "failure", "client");
	recv_msg(&t_auditd, MSG_AUDIT, &d);
	if (msg_audit_dec(&d, &dec, &ev, &e) == -1)
		fail_msg("AUDIT: %s", e.msg);
	assert_lazy_unless_gating(&d, ev);
	assert_str(ev, "event.action", "policy.decision");
	assert_str(ev, "event.type", "denied");
	assert_str(ev, "error.type", "approval_denied");
	mp_doc_free(&d);
	assert_quiet(&t_policyd);
	ack(recs[0]);
	ack(recs[1]);
	ack(recs[2]);
	ack(dec);
	expect_end(ERR_APPROVAL_DENIED);
	assert_failed(1, ERR_APPROVAL_DENIED, "appr-1: answered no by uid");
	assert_trace(1, TO_APPROVAL " approval>decision decision>done");
	/* A no is not remembered. */
	invoke(3, "s1");
	ack(expect_audit("invoke.received", NULL));
	ref = expect_authz_req(3, 0);
	authz_ask(ref);
	ack(expect_approval_rec(
	    "approval.requested", "appr-2", "unknown", NULL));
	expect_approval_request(3, "appr-2");
	approve_on(&t_client, 4, "appr-2", "no");
	assert_approved_reply(4, "appr-2");
	ack(expect_approval_rec(
	    "approval.answered", "appr-2", "failure", "client"));
	ack(expect_audit("policy.decision", "failure"));
	expect_end(ERR_APPROVAL_DENIED);
	assert_failed(3, ERR_APPROVAL_DENIED, NULL);
}

/* No answer within clients.approval_s: approval_timeout, a denial. */
static void
test_approval_timeout(void **state)
{
	uint64_t recs[3], ref, t0;

	(void)state;
	admins(0);
	B->clients.approval_s = 1;
	hello_approvals(100);
	invoke(1, "s1");
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	t0 = now_mono_ms();
	authz_ask(ref);
	recs[1] = expect_approval_rec(
	    "approval.requested", "appr-1", "unknown", NULL);
	expect_approval_request(1, "appr-1");
	recs[2] = expect_approval_rec(
	    "approval.answered", "appr-1", "failure", "timeout");
	assert_true(now_mono_ms() - t0 >= 990);
	ack(recs[0]);
	ack(recs[1]);
	ack(recs[2]);
	ack(expect_audit("policy.decision", "failure"));
	expect_end(ERR_APPROVAL_TIMEOUT);
	assert_failed(1, ERR_APPROVAL_TIMEOUT, "appr-1: no answer within 1 s");
	assert_trace(1, TO_APPROVAL " approval>decision decision>done");
	/* Too late now. */
	approve_on(&t_client, 2, "appr-1", "yes_once");
	assert_failed(2, ERR_NOT_FOUND, NULL);
	assert_quiet(&t_policyd);
}

/*
 * A cancel, or the client's hangup, ends a call waiting for approval at
 * once: nobody else is waited for. Each is audited as cancelled.
 */
static void
test_approval_cancel(void **state)
{
	struct client_req cr;
	struct mp_enc m;
	struct mp_doc d;
	uint64_t ref;

	(void)state;
	admins(0);
	hello_approvals(100);
	invoke(1, "s1");
	ack(expect_audit("invoke.received", NULL));
	ref = expect_authz_req(1, 0);
	authz_ask(ref);
	ack(expect_approval_rec(
	    "approval.requested", "appr-1", "unknown", NULL));
	expect_approval_request(1, "appr-1");
	memset(&cr, 0, sizeof(cr));
	cr.type = CREQ_CANCEL;
	cr.id.is_num = 1;
	cr.id.num = 2;
	cr.rid.is_num = 1;
	cr.rid.num = 1;
	enc_init(&m);
	client_req_enc(&m, &cr);
	send_msg(&t_client, &m, NULL, 0);
	reply_to(2, &d);
	assert_str(d.root, "state", "approval");
	mp_doc_free(&d);
	ack(expect_approval_rec(
	    "approval.answered", "appr-1", "failure", "cancelled"));
	expect_end(ERR_CANCELLED);
	assert_failed(1, ERR_CANCELLED, "cancelled by the client");
	assert_trace(1, TO_APPROVAL " approval>done");
	assert_quiet(&t_policyd);
	assert_quiet(&t_master);
	/* The client goes away while its call waits. */
	invoke(3, "s1");
	ack(expect_audit("invoke.received", NULL));
	ref = expect_authz_req(3, 0);
	authz_ask(ref);
	ack(expect_approval_rec(
	    "approval.requested", "appr-2", "unknown", NULL));
	expect_approval_request(3, "appr-2");
	chan_close(&t_client);
	pump();
	ack(expect_approval_rec(
	    "approval.answered", "appr-2", "failure", "cancelled"));
	expect_end(ERR_CANCELLED);
	assert_null(call_of(3));
	assert_int_equal(B->ncalls, 0);
}

/*
 * Who may answer: the calling connection, or an admin principal from
 * any connection; another connection of the same uid may list its
 * uid's approvals, not answer them. Unknown ids are not_found.
 */
static void
test_approval_who(void **state)
{
	static const char *const bad[] = {"appr-0", "appr-01", "appr-", "x",
	    "appr-1x", "APPR-1", "appr-99999999999999999999", "appr--1",
	    "appr-18446744073709551616"};
	const msgpack_object *arr;
	struct chan other;
	struct mp_enc m;
	struct mp_doc d;
	struct client_req r;
	uint64_t recs[3], ref;
	size_t i;
	int sv[2];

	(void)state;
	admins(0);
	hello_approvals(100);
	assert_int_equal(
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	conn_accept(sv[0]);
	assert_int_equal(set_nonblock(sv[1]), 0);
	chan_init(&other, sv[1], "other client");
	invoke(1, "s1");
	recs[0] = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ask(ref);
	recs[1] = expect_approval_rec(
	    "approval.requested", "appr-1", "unknown", NULL);
	expect_approval_request(1, "appr-1");
	/* Ids checked before use: malformed, or not pending, not found. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		approve_on(&t_client, 10 + i, bad[i], "yes_once");
		assert_failed(10 + i, ERR_NOT_FOUND, "no approval");
	}
	approve_on(&t_client, 30, "appr-2", "yes_once");
	assert_failed(30, ERR_NOT_FOUND, "no approval");
	/* The other connection lists it, may not answer it. */
	memset(&r, 0, sizeof(r));
	r.type = CREQ_APPROVALS;
	r.id.is_num = 1;
	r.id.num = 31;
	enc_init(&m);
	client_req_enc(&m, &r);
	send_msg(&other, &m, NULL, 0);
	recv_doc(&other, &d);
	assert_str(d.root, "type", "approvals");
	assert_uint(d.root, "id", 31);
	arr = mp_get(d.root, "approvals");
	assert_non_null(arr);
	assert_int_equal(arr->via.array.size, 1);
	assert_str(&arr->via.array.ptr[0], "id", "appr-1");
	assert_uint(&arr->via.array.ptr[0], "request_id", 1);
	assert_uint(&arr->via.array.ptr[0], "uid", getuid());
	assert_str(&arr->via.array.ptr[0], "session", "s1");
	assert_str(&arr->via.array.ptr[0], "skill", "hello");
	assert_uint(&arr->via.array.ptr[0], "timeout_ms", 60000);
	mp_doc_free(&d);
	approve_on(&other, 32, "appr-1", "yes_once");
	recv_doc(&other, &d);
	assert_str(sub(d.root, "error"), "type", "permission_denied");
	mp_doc_free(&d);
	assert_state(1, CALL_APPROVAL);
	/* Made an admin, it may: answered by "admin". */
	admins(1);
	approve_on(&other, 33, "appr-1", "yes_once");
	recv_doc(&other, &d);
	assert_str(d.root, "type", "approve");
	assert_bool(d.root, "ok", 1);
	mp_doc_free(&d);
	recs[2] = expect_approval_rec(
	    "approval.answered", "appr-1", "success", "admin");
	ref = expect_authz_approved(1);
	allowed_then_refused(1, ref, "yes_once", 0, recs, 3);
	/* Nothing pending: an empty list. */
	r.id.num = 34;
	enc_init(&m);
	client_req_enc(&m, &r);
	send_msg(&other, &m, NULL, 0);
	recv_doc(&other, &d);
	assert_int_equal(mp_get(d.root, "approvals")->via.array.size, 0);
	mp_doc_free(&d);
	chan_close(&other);
	for (i = 0; i < 100 && quota_total(QUOTA_CLIENTS) > 1; i++)
		pump();
	admins(0);
}

/*
 * A connection that did not say approvals: true is not asked: the ask
 * is its denial at once, recorded as the decision.
 */
static void
test_approval_not_asked(void **state)
{
	uint64_t received, ref;

	(void)state;
	admins(0);
	invoke(1, "s1");
	received = expect_audit("invoke.received", NULL);
	ref = expect_authz_req(1, 0);
	authz_ask(ref);
	assert_state(1, CALL_DECISION);
	ack(received);
	ack(expect_audit("policy.decision", "failure"));
	expect_end(ERR_APPROVAL_DENIED);
	assert_failed(1, ERR_APPROVAL_DENIED,
	    "this connection does not answer approval requests");
	assert_trace(1, TO_APPROVAL " approval>decision decision>done");
	/* An authorize is never asked: the ask is its denial. */
	client_send(CREQ_AUTHORIZE, 2, "hello", NULL, NULL);
	ref = expect_authz_req(2, 1);
	authz_ask(ref);
	ack(expect_audit("policy.decision", "failure"));
	assert_failed(2, ERR_APPROVAL_DENIED, NULL);
	assert_trace(2, "new>authz authz>decision decision>done");
	assert_quiet(&t_client);
}

#define CALL_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    CALL_TEST(test_invoke_walk),
	    CALL_TEST(test_invoke_eof_then_exit),
	    CALL_TEST(test_invoke_drain_bounded),
	    CALL_TEST(test_authorize),
	    CALL_TEST(test_idle_timer),
	    CALL_TEST(test_denied),
	    CALL_TEST(test_run_refused),
	    CALL_TEST(test_audit_not_written),
	    CALL_TEST(test_skills_and_reload),
	    CALL_TEST(test_skill_info),
	    CALL_TEST(test_authz_ans_twice),
	    CALL_TEST(test_authz_ans_no_grant),
	    CALL_TEST(test_run_started_early),
	    CALL_TEST(test_run_exited_unexpected),
	    CALL_TEST(test_audit_ack_unexpected),
	    CALL_TEST(test_wrong_answer_kind),
	    CALL_TEST(test_violation_ends_peer),
	    CALL_TEST(test_policyd_dies),
	    CALL_TEST(test_auditd_dies),
	    CALL_TEST(test_auditd_gone_unnoticed),
	    CALL_TEST(test_session_in_order),
	    CALL_TEST(test_session_bound),
	    CALL_TEST(test_client_gone),
	    CALL_TEST(test_quota_calls),
	    CALL_TEST(test_quota_workers),
	    CALL_TEST(test_line_timeout_cancel),
	    CALL_TEST(test_quota_sessions),
	    CALL_TEST(test_partial_frame),
	    CALL_TEST(test_idle_client),
	    CALL_TEST(test_output_throttle),
	    CALL_TEST(test_approval_yes_once),
	    CALL_TEST(test_approval_in_session),
	    CALL_TEST(test_approval_no),
	    CALL_TEST(test_approval_timeout),
	    CALL_TEST(test_approval_cancel),
	    CALL_TEST(test_approval_who),
	    CALL_TEST(test_approval_not_asked),
	    cmocka_unit_test(test_table),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_call", 1, getenv("TEST_VERBOSE") ? 1 : -1);
	log_ratelimit(0, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
