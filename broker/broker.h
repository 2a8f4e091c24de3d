/*
 * broker.h: the unprivileged front end on the client socket.
 *
 * Files depend on each other in one direction only:
 *   main.c -> broker_client.c -> broker_call.c -> broker_files.c ->
 *   broker_session.c; broker_call.c -> broker_run.c, broker_audit.c,
 *   broker_reply.c, broker_conn.c, broker_quota.c; broker_reply.c ->
 * broker_stats.c -> broker_quota.c; broker_client.c, broker_call.c ->
 * broker_approval.c -> broker_conn.c, broker_quota.c broker_conn.c reports
 * frames and closes through callbacks that main.c installs, never by calling
 * up.
 */
#ifndef SB_BROKER_H
#define SB_BROKER_H

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <sys/queue.h>

#include "../lib/histo.h"
#include "../proto/client.h"
#include "../proto/msg.h"
#include "../proto/peer.h"

#define CONN_INFLIGHT_MAX 128
#define DRAIN_MS 200
#define STOP_TICKS 20        /* of 50 ms: at most a second to flush at a stop */
#define SESSION_QUEUE_MAX 16 /* calls waiting for one session */
#define QUEUE_MAX 256        /* calls waiting for any session */
#define INFO_REPLY_ROOM 512  /* of a frame, for the skill_info envelope */
#define IDLE_TRIM_MS 1000    /* idle this long: free memory goes back */

/* One client connection; the kernel says who is on the other end. */
struct conn {
	LIST_ENTRY(conn) entry;
	struct bufferevent *bev;
	uint32_t uid, gid;
	int32_t pid;
	int closing;
	int throttled; /* its unread replies passed clients.output_bytes */
	unsigned inflight;
	struct event *timer; /* clients.idle_s and clients.frame_s */
	uint64_t frame_ms;   /* when a partial frame began; 0: none */
	uint64_t last_ms;    /* the last byte read, or the last reply */
	unsigned proto;      /* the major hello agreed (CLIENT_PROTO_MAX) */
	int approvals;       /* hello said it answers approval requests */
};

/* What one uid holds at once (broker_quota.c). */
enum quota_kind {
	QUOTA_CLIENTS,
	QUOTA_CALLS,
	QUOTA_SESSIONS,
	QUOTA_WORKERS,
	QUOTA__COUNT
};

/* One output pipe of a worker: counted in full, kept up to cap. */
struct outstream {
	int fd;
	struct event *ev;
	uint8_t *buf;
	size_t len, cap;
	uint64_t total;
	EVP_MD_CTX *sha; /* NULL: not hashed */
	int eof;
};

/* A running call's pipes (broker_run.c). */
struct run {
	int in_fd;
	struct event *in_ev;
	const uint8_t *in_data;
	size_t in_len, in_off;
	struct outstream out, err, rep; /* stdout, stderr, report */
	struct event *drain;
	void (*done)(void *);
	void *arg;
	int done_sent;
};

/*
 * The states of a call. Which event may move a call out of which state
 * is the table in broker_call.c; call_event() is the one place a call
 * changes state.
 */
enum call_state {
	CALL_NEW,      /* decoded and admitted */
	CALL_QUEUED,   /* invoke: waits for its session's running call */
	CALL_WORKERS,  /* invoke: waits for a worker of its uid's share */
	CALL_AUTHZ,    /* AUTHZ_REQ sent, waits for AUTHZ_ANS */
	CALL_APPROVAL, /* invoke: an ask rule; waits for a human's answer */
	CALL_DECISION, /* policy.decision sent, waits for it to be durable */
	CALL_RUN_WAIT, /* RUN sent, waits for RUN_STARTED or RUN_EXITED */
	CALL_RUNNING,  /* the skill runs; its pipes are read */
	CALL_DRAINING, /* the worker is gone; the pipes drain, bounded */
	CALL_SKILLS,   /* SKILLS_REQ sent */
	CALL_RELOAD,   /* RELOAD_REQ sent */
	CALL_INFO,     /* SKILL_INFO_REQ sent */
	CALL_DONE,     /* answered; about to be freed */
	CALL__COUNT
};

enum call_event {
	CEV_NONE,
	CEV_START,
	CEV_SESSION_FREE,
	CEV_WORKER_FREE,
	CEV_AUTHZ_ANS,
	CEV_ASK,          /* AUTHZ_ANS: an ask rule decided */
	CEV_APPROVED,     /* a yes: policyd decides again, approved */
	CEV_NOT_APPROVED, /* a no, no answer in time, or none possible */
	CEV_AUDIT_ACK,
	CEV_RUN_STARTED,
	CEV_RUN_EXITED,
	CEV_OUTPUT_DONE,
	CEV_SKILLS_ANS,
	CEV_RELOAD_ANS,
	CEV_INFO_ANS,
	CEV_FAIL, /* c->err says why; legal in every state but DONE */
	CEV__COUNT
};

struct bsession;

struct call {
	LIST_ENTRY(call) entry;       /* every live call */
	struct call *hnext;           /* its chain in the table by ref */
	TAILQ_ENTRY(call) qentry;     /* its session's queue */
	TAILQ_ENTRY(call) wentry;     /* the line for workers (CALL_WORKERS) */
	struct event *qtimer;         /* invoke: its timeout while in line */
	uint64_t queued_ms;           /* how long it waited in line */
	int out_of_line;              /* queued_ms is final: it reached AUTHZ */
	char line_why[ERROR_MSG_MAX]; /* the bound it waits in WORKERS for */
	uint64_t ref;
	enum call_state st;
	struct conn *conn; /* NULL once the client has gone */
	uint32_t uid, gid;
	int32_t pid;
	struct client_req cr;
	char ts[40];
	uint64_t t0_ms;  /* when it came, monotonic */
	uint64_t run_ms; /* when RUN went to the master (broker_stats.c) */
	struct msg_authz_ans ans;
	uint64_t audit_ref; /* the record the call waits for */
	struct bsession *session;
	struct run run;
	int run_sent;          /* RUN went to the master */
	int ran;               /* RUN_STARTED came: the skill was exec'd */
	uint64_t received_ref; /* invoke.received, until auditd answers */
	int received_refused;  /* auditd could not write it: nothing runs */
	int received; /* invoke.received is in the log: invoke.completed ends it
	               */
	int holds_worker; /* counted in QUOTA_WORKERS */
	int cancelled;    /* cancelled: end at the next step, for cancel_why */
	char cancel_why[64];
	int cancel_sent; /* CANCEL went to the master */
	int output_done;
	struct msg_run_exited x;
	struct msg_files files;
	void *answer; /* SKILLS_ANS, RELOAD_ANS or SKILL_INFO_ANS, until the
	                 reply */
	enum err_type err; /* why the call failed, or ERR_NONE */
	char errmsg[REASON_MAX_LEN];
	/* CALL_APPROVAL: the approval it asked for (broker_approval.c) */
	uint64_t appr;            /* its number (appr-N); 0: none asked */
	uint64_t appr_ms;         /* when it was asked, monotonic */
	struct event *appr_timer; /* clients.approval_s */
	int appr_open;            /* asked, approval.answered not yet sent */
	enum client_approval appr_option; /* the answer, NONE for none */
	const char *appr_by;  /* "client", "admin", "timeout", "cancelled" */
	uint32_t appr_by_uid; /* who answered, when someone did */
	int appr_by_admin;
	int approved;        /* a human's yes: policyd is told so */
	int appr_remembered; /* that yes is the session's yes_in_session */
};

LIST_HEAD(call_list, call);
TAILQ_HEAD(call_queue, call);
LIST_HEAD(conn_list, conn);

struct broker {
	struct event_base *base;
	struct evconnlistener *listener; /* enabled at SERVE */
	struct peer master, policyd, auditd;
	size_t max_frame, max_sessions;
	uint64_t max_timeout_ms; /* a queued call waits at most this long */
	uint64_t call_output;    /* limits.output_bytes: a result's output */
	unsigned max_clients;
	uint64_t workers; /* the master's worker pool */
	struct quota per_uid;
	struct client_bounds clients;
	uint64_t session_idle_ms;
	uint64_t next_ref, audit_sent, audit_acked;
	uint64_t next_approval; /* approval ids: appr-1, appr-2, ... */
	uint64_t stat_requests, stat_invokes;
	int stopping, stop_status; /* the daemon stops: no new call */
	struct conn_list conns;
	struct call_list calls;
	struct call_queue worker_line; /* CALL_WORKERS, first come first */
	size_t ncalls, nqueued, nworker_line;
	int worker_freed; /* a worker came back: call_line_wake looks */
	/* armed when the last call ends or a connection goes: what a burst
	 * took goes back once the broker has been idle IDLE_TRIM_MS (main.c;
	 * NULL in tests) */
	struct event *trim_ev;
	/* installed by main.c */
	void (*on_frame)(struct conn *, const uint8_t *, size_t);
	void (*on_close)(struct conn *);
	/* each move of a call, for tests to watch; NULL in the daemon */
	void (*on_move)(const struct call *c, enum call_state from);
};

extern struct broker *B;

/* broker_conn.c: connections and framing */
void conn_accept(int fd);
void conn_send(struct conn *cn, const struct mp_enc *m);
/* Re-arm the idle and partial-frame deadline after a change. */
void conn_arm(struct conn *cn);
void conn_error(struct conn *cn, const struct client_id *id, enum err_type type,
    const char *msg, int close_after);
/* No call left (the last ended, or a connection went): in IDLE_TRIM_MS,
 * memory goes back (B->trim_ev). */
void conn_idle_arm(void);

/* broker_client.c: one request frame */
void client_request(struct conn *cn, const uint8_t *body, size_t len);

/* broker_call.c: the call machine */
void call_start(struct conn *cn, struct client_req *cr);
void call_conn_gone(struct conn *cn);
/* cancel: end the call of cn that cr->rid names, and answer. */
void call_cancel_request(struct conn *cn, const struct client_req *cr);
/* approve: answer the approval cr->approval_id names, and reply. */
void call_approve_request(struct conn *cn, const struct client_req *cr);
void calls_peer_lost(struct peer *p);
int call_on_authz_ans(struct peer *p, const struct mp_doc *d);
int call_on_skills_ans(struct peer *p, const struct mp_doc *d);
int call_on_reload_ans(struct peer *p, const struct mp_doc *d);
int call_on_info_ans(struct peer *p, const struct mp_doc *d);
int call_on_run_started(struct peer *p, const struct mp_doc *d);
int call_on_run_exited(struct peer *p, const struct mp_doc *d);
int call_on_audit_ack(struct peer *p, const struct mp_doc *d);
/* ADMINS: the reserve may now be an admin's; the line looks again. */
int call_on_admins(struct peer *p, const struct mp_doc *d);
/* The transition table, for tests: 1 if ev is legal for c now. */
int call_expects(const struct call *c, enum call_event ev);
const char *call_state_name(enum call_state st);

/* broker_quota.c: per-uid bounds, and the admins' reserve */
unsigned quota_reserve(unsigned global);
int quota_is_admin(uint32_t uid, uint32_t gid);
unsigned quota_held(enum quota_kind k, uint32_t uid);
unsigned quota_total(enum quota_kind k);
int quota_check(enum quota_kind k, uint32_t uid, uint32_t gid, int reserve,
    struct error *e);
int quota_take(enum quota_kind k, uint32_t uid, uint32_t gid, struct error *e);
void quota_add(enum quota_kind k, uint32_t uid);
void quota_release(enum quota_kind k, uint32_t uid);
int quota_on_admins(struct peer *p, const struct mp_doc *d);

/* broker_session.c: one call at a time per (uid, session) */
void session_init(void);
void session_fini(void);
int session_acquire(struct call *c, struct error *e);
struct call *session_release(struct call *c);
/* uid has a session of that name (its work dir may hold files). */
int session_exists(uint32_t uid, const char *name);
/* An invoke's reply, kept as its session's last result. */
void session_keep_result(struct call *c, const struct mp_enc *reply);
/* last_result and session_end, on the caller's own sessions. */
void session_last_result(
    const struct conn *cn, const struct client_req *cr, struct mp_enc *m);
void session_end_request(
    const struct conn *cn, const struct client_req *cr, struct mp_enc *m);
/* yes_in_session: skill is approved in s until s ends or a reload. */
void session_approve(struct bsession *s, const char *skill);
int session_approved(const struct bsession *s, const char *skill);
void session_forget_approvals(void);

/* broker_approval.c: approval requests, their ids, who may answer */
#define APPROVAL_ARGS_MAX 8    /* args an approval_request shows */
#define APPROVAL_ARG_BYTES 200 /* bytes of each, cut on a character */
void approval_id_fmt(uint64_t n, char *buf, size_t len);
int approval_id_parse(const char *s, uint64_t *n);
struct call *approval_find(uint64_t n);
/* 1 if the connection cn may answer c's approval. */
int approval_may_answer(const struct call *c, const struct conn *cn);
void approval_request_send(const struct call *c);
/* approvals: the pending approvals cn may see, sorted, as its reply. */
void approval_list_reply(struct conn *cn, const struct client_req *cr);

/* broker_run.c: a running call's pipes */
void run_init(struct run *r);
void run_open(struct run *r, const int fds[RUN_STARTED_FDS], size_t cap,
    const uint8_t *in, size_t in_len, void (*done)(void *), void *arg);
void run_drain(struct run *r);
int run_files(const struct run *r, struct msg_files *f, struct error *e);
void run_close(struct run *r);

/* broker_audit.c: the call's records */
uint64_t audit_call(const struct call *c, const char *action, const char *type,
    const char *outcome);
int audit_ack_check(const struct msg_audit_ack *a);
void audit_restarted(void);
/* A call waits for the ack of record aref (acks come in order). */
void audit_wait_push(uint64_t aref, uint64_t cref);
/* The call that waits for aref's ack (1), or none (0). */
int audit_wait_take(uint64_t aref, uint64_t *cref);
/* No call is left to wait for any record. */
void audit_wait_clear(void);

/* broker_stats.c: what the stats request reports */
struct stats {
	uint64_t uptime_s, clients, requests, invokes;
	uint64_t in_flight, queued, approvals, audit_queue;
	uint64_t calls[ERR__COUNT]; /* replies by error type; ERR_NONE: ok */
	struct histo decision, worker_start, call;
};
void stats_init(void);
void stats_move(struct call *c, enum call_state from);
void stats_decision(const struct call *c);
void stats_refused(enum creq_type t, enum err_type err);
void stats_get(struct stats *s);
void stats_enc(struct mp_enc *m, const struct stats *s);

/* broker_files.c: session files, as calls of the files skill */
size_t files_put_max(void);
/* Name the skill, command and args of a file request (in cr). */
int files_call_prepare(struct client_req *cr, uint32_t uid, struct error *e);
/* A file call's grant: its answer may take a frame. */
void files_granted(struct call *c);
/* get and list: the bound on the answer, as the skill's stdin. */
void files_bound_stdin(struct client_req *cr);
void reply_file(struct mp_enc *m, const struct call *c);

/* broker_reply.c: the replies a client reads */
void reply_result(struct mp_enc *m, const struct call *c);
void reply_skills(struct mp_enc *m, const struct client_id *id,
    const struct msg_skills_ans *a);
void reply_reload(
    struct mp_enc *m, const struct client_id *id, const char *message);
/* skill_info; an error instead when it would not fit max_frame. */
void reply_skill_info(struct mp_enc *m, const struct client_id *id,
    const struct msg_skill_info_ans *a, int texts);
void reply_hello(
    struct mp_enc *m, const struct client_id *id, const struct conn *cn);
void reply_stats(struct mp_enc *m, const struct client_id *id);

#endif
