/*
 * msg.h: the internal wire contract. Every message on a channel between
 * the processes is one msgpack map whose "t" field is a msg_type; the
 * numbered ranges say which channel a type belongs to. Each type has one
 * encoder and one strict decoder here (proto/msg*.c); no role encodes or
 * decodes a message by hand. READY carries PROTO_VERSION, which the
 * master checks on every child. docs/architecture.md lists the same
 * table (tests/check-msg-doc.sh checks that they agree).
 */
#ifndef SB_MSG_H
#define SB_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/config.h"
#include "../lib/error.h"
#include "mp.h"

#define PROTO_VERSION 2

enum msg_type {
	/* start-up: master <-> each child */
	MSG_READY = 1,         /* child -> master: {v, role} */
	MSG_CONF_BROKER = 2,   /* master -> broker: its settings */
	MSG_CONF_POLICYD = 3,  /* master -> policyd: its settings */
	MSG_CONF_AUDITD = 4,   /* master -> auditd: its settings */
	MSG_CONF_NETPROXY = 5, /* master -> netproxy: its settings */
	/* broker <-> policyd */
	MSG_AUTHZ_REQ = 16,
	MSG_AUTHZ_ANS = 17,
	MSG_SKILLS_REQ = 18,
	MSG_SKILLS_ANS = 19,
	MSG_RELOAD_REQ = 20, /* an admin's reload: {ref, uid, gid} */
	MSG_RELOAD_ANS = 21, /* {ref, err, message} */
	MSG_ADMINS = 22,     /* policyd -> broker: who may use the reserve */
	MSG_SKILL_INFO_REQ = 23, /* a caller's skill_info */
	MSG_SKILL_INFO_ANS = 24, /* the skill as that caller may see it */
	/* policyd <-> master */
	MSG_GRANT = 32,
	MSG_GRANT_ACK = 33,
	MSG_POLICY_EVENT = 34, /* a policy load, for the audit log */
	/* broker <-> master */
	MSG_RUN = 48,
	MSG_RUN_STARTED = 49, /* + stdin, stdout, stderr, report fds */
	MSG_RUN_EXITED = 50,
	MSG_PEER_CHANNEL = 51, /* + a restarted peer's fd */
	MSG_SERVE = 52,        /* every role is ready: accept clients */
	MSG_SESSION_END = 53,  /* broker -> master: unmount an idle work dir */
	MSG_CANCEL = 54, /* broker -> master: the call of a grant is over */
	/* broker, master -> auditd */
	MSG_AUDIT = 64,
	MSG_AUDIT_ACK = 65,
	/* worker -> broker, on the report pipe */
	MSG_FILES = 80,
	/* master <-> worker, on the worker's control socket */
	MSG_SPEC = 96,         /* master -> worker: what to build and run */
	MSG_WORKER_READY = 97, /* worker -> master: built, waiting for go */
	MSG_WORKER_GO = 98,    /* master -> worker: the start is durable */
	MSG_WORKER_FAIL = 99, /* worker -> master: a step failed: nothing ran */
	MSG_WORKER_EXIT = 100, /* worker -> master: how the skill ended */
	MSG_PREP = 101,        /* master -> worker, at its start: the syscall
	                          filters, compiled once */
	MSG_WORKER_DONE = 102, /* worker -> master: files listed, nothing of
	                          the skill left: the call may be answered */
	/* master -> netproxy */
	MSG_NET_OPEN = 112,  /* a call's allow list + its listener in the
	                        worker's network namespace */
	MSG_NET_CLOSE = 113, /* that call is over: end its connections */
};

#define GRANT_ID_LEN 32 /* hex chars of a 128-bit random id */
/* Where a call with a network grant finds the egress proxy. */
#define NET_PROXY_ADDR "127.0.0.1"
#define NET_PROXY_PORT 3128
#define NET_PROXY_URL "http://127.0.0.1:3128"
#define NET_PROXY_BACKLOG 64
#define ARGS_MAX 256
#define ARG_MAX_LEN 4096
#define ENV_MAX 64
#define NAME_MAX_LEN 64
#define COMMAND_MAX_LEN 128 /* a command's name: a script's path */
#define SESSION_MAX_LEN 64
#define REASON_MAX_LEN 512
#define PATH_MAX_LEN 4096
#define ROLE_MAX_LEN 32
#define PERM_ITEMS_MAX 64
#define SKILLS_LIST_MAX 1024
#define SKILL_DESC_MAX 4096   /* bytes: 1024 characters of UTF-8 */
#define SKILL_WARNINGS_MAX 16 /* warnings a skill carries */
#define SKILL_WARNING_MAX 512 /* bytes of one */
#define COMMANDS_MAX 64
#define FILES_WRITTEN_MAX 256
#define SKILLS_DIRS_MAX 32
#define SYS_PATHS_MAX 64
#define GRANT_PROGRAMS_MAX 96 /* resolved programs a call may execute */
#define LIB_PATHS_MAX 64      /* worker.library_paths */

/* The kinds of permission a skill declares, in this order everywhere. */
enum perm_kind {
	PERM_FS_READ,
	PERM_FS_WRITE,
	PERM_NETWORK,
	PERM_EXEC,
	PERM_ENV,
	PERM__COUNT
};
/* Wire names of the kinds ("fs_read", ...). */
const char *perm_kind_name(enum perm_kind k);

/* Which limit ended a call, as the limits block names it. */
enum limit_kind {
	LIMIT_NONE,
	LIMIT_TIMEOUT,
	LIMIT_MEMORY,
	LIMIT_PIDS,
	LIMIT_CPU,
	LIMIT_FSIZE,
	LIMIT__COUNT
};
/* "timeout_ms", "memory_mb", "pids", "cpu", "fsize_mb"; "" for NONE. */
const char *limit_kind_name(enum limit_kind k);

/* READY */
struct msg_ready {
	uint64_t version;
	char *role;
};

/* CONF_BROKER: what the broker needs, and no more. */
struct conf_broker {
	uint64_t uid, gid;
	char *root; /* chroot: an empty directory */
	uint64_t max_frame, max_clients;
	uint64_t max_sessions, session_idle_s;
	uint64_t workers;             /* the master's pool: workers at once */
	uint64_t max_timeout_ms;      /* limits.max_timeout_ms: queued calls */
	struct quota per_uid;         /* per_uid.* */
	struct client_bounds clients; /* clients.* */
	uint64_t call_output;         /* limits.output_bytes: hello's bound */
};

/* CONF_POLICYD */
struct conf_policyd {
	uint64_t uid, gid;
	char **skills_dirs;
	size_t nskills_dirs;
	char *policy_dir;
	uint64_t net; /* worker.network: enum net_mode */
	struct limits limits;
	char **protect; /* the daemon's own paths: never granted */
	size_t nprotect;
	char **sys_paths; /* worker.system_paths: where programs must lie */
	size_t nsys_paths;
	char **interp_exts;  /* interpreters: ".py" ...  */
	char **interp_progs; /* ... and the program that runs it */
	size_t ninterps;
};

/* CONF_NETPROXY */
struct conf_netproxy {
	uint64_t uid, gid;
	char *root;                   /* chroot: an empty directory */
	struct netproxy_settings set; /* hosts_file NULL: none */
};

/* CONF_AUDITD */
struct conf_auditd {
	uint64_t uid, gid;
	char *path; /* the log */
	char *head; /* the head file */
	struct audit_settings set;
};

/* AUTHZ_REQ */
struct msg_authz_req {
	uint64_t ref;
	uint64_t uid, gid;
	int64_t pid;
	char *skill, *command, *session, *phase;
	char **args;
	size_t nargs;
	char **env; /* KEY=VALUE from the client, not yet filtered */
	size_t nenv;
	uint64_t timeout_ms; /* 0: the policy's default */
	uint64_t queued_ms;  /* how long it waited in line: counts against it */
	int dry_run;
	int approved; /* a human approved it: an ask rule counts as allow */
};

/* AUTHZ_ANS */
struct msg_authz_ans {
	uint64_t ref;
	uint64_t err; /* enum err_type: ERR_NONE is allowed */
	char *reason;
	char **rules;
	size_t nrules;
	char *grant_id; /* "" unless an allowed invoke */
	char *command;  /* the command the decision resolved to */
	uint64_t timeout_ms, output_bytes;
	uint8_t *effective; /* msgpack map: permissions and limits */
	size_t effective_len;
	/*
	 * An ask rule decided: a human must approve first. err is then
	 * ERR_APPROVAL_DENIED (what a receiver that does not ask makes of
	 * it), there is no grant, and effective is what would be allowed.
	 */
	int ask;
};

/* SKILLS_ANS: one registered skill. */
struct msg_skill {
	char *name, *description;
	int valid;
	char *error; /* why it is not valid; "" when it is */
	char **commands;
	size_t ncommands;
	char **warnings; /* what loads but deserves a word, "file:line: why" */
	size_t nwarnings;
};

struct msg_skills_ans {
	uint64_t ref;
	struct msg_skill *skills;
	size_t nskills;
	int truncated; /* more skills than one message holds */
};

/*
 * SKILL_INFO_REQ: what the caller (uid, gid) may learn of a skill it may
 * run. max_bytes bounds the encoded SKILL_INFO_ANS, so that the reply
 * fits the client's frame.
 */
#define SKILL_INFO_BODY_MAX (256 * 1024) /* SKILL.md after the frontmatter */
#define SKILL_INFO_FM_MAX (256 * 1024)   /* the frontmatter map, encoded */
#define SKILL_INFO_FM_DEPTH 5   /* levels of it, its own map the first */
#define SKILL_INFO_REFS_MAX 256 /* files of references/ listed */
#define SKILL_INFO_TEXT_MAX (64 * 1024)  /* bytes of one file's text */
#define SKILL_INFO_NAME_MAX 255          /* bytes of a file name */
#define SKILL_INFO_PERMS_MAX (64 * 1024) /* the permissions map, encoded */
#define SKILL_INFO_MIN_BYTES 512         /* the least max_bytes */

struct msg_skill_info_req {
	uint64_t ref, uid, gid;
	char *skill;
	int references;     /* the files' texts too */
	uint64_t max_bytes; /* the most the answer may take, encoded */
};

/* SKILL_INFO_ANS: one declared command. */
struct msg_info_cmd {
	char *name, *description; /* description: "" when none */
	int allowed;              /* the caller may run it (phase execution) */
	int ask;                  /* it may, once a human said yes (ask rule) */
};

/* Why a reference file comes without its text. */
enum info_omit {
	INFO_OMIT_NONE,      /* the text is there (or was not asked for) */
	INFO_OMIT_TOO_LARGE, /* over SKILL_INFO_TEXT_MAX */
	INFO_OMIT_NOT_TEXT,  /* not UTF-8, or a NUL byte */
	INFO_OMIT_UNREADABLE,
	INFO_OMIT_REPLY_FULL, /* the reply would pass max_bytes */
	INFO_OMIT__COUNT
};
/* "", "too_large", "not_text", "unreadable", "reply_full". */
const char *info_omit_name(enum info_omit o);

/* SKILL_INFO_ANS: one regular file directly in references/. */
struct msg_info_ref {
	char *path; /* "references/NAME" */
	uint64_t size;
	char *sha256;     /* hex, or "" when not hashed */
	char *text;       /* "" unless sent */
	uint64_t omitted; /* enum info_omit */
};

struct msg_skill_info_ans {
	uint64_t ref;
	uint64_t err;  /* ERR_NONE, or why not: then only message counts */
	char *message; /* "" with ERR_NONE */
	char *name, *description, *body;
	uint8_t *frontmatter; /* msgpack map: strings, arrays, maps */
	size_t frontmatter_len;
	uint8_t *permissions; /* msgpack map: what this caller is granted */
	size_t permissions_len;
	struct msg_info_cmd *commands;
	size_t ncommands;
	struct msg_info_ref *refs; /* sorted by path */
	size_t nrefs;
	int refs_truncated; /* references/ holds more than is listed */
};

/* RELOAD_REQ */
struct msg_reload_req {
	uint64_t ref, uid, gid;
};

/* RELOAD_ANS */
struct msg_reload_ans {
	uint64_t ref;
	uint64_t err; /* ERR_NONE: reloaded */
	char *message;
};

/* ADMINS: the uids and gids of the policy's admin principals. */
#define ADMINS_MAX 1024
struct msg_admins {
	uint64_t *uids, *gids;
	size_t nuids, ngids;
};

/*
 * GRANT: the worker spec policyd decided, nothing from a client. The
 * fields after "set by the master" travel only in SPEC (master ->
 * worker): a GRANT cannot carry them.
 */
/* A command's working directory: the session's work dir, or the skill's. */
enum grant_cwd { GRANT_CWD_WORK, GRANT_CWD_SKILL, GRANT_CWD__COUNT };
extern const char *const grant_cwd_names[GRANT_CWD__COUNT + 1];

struct grant {
	char *grant_id;
	char *skill, *command;
	char *skill_dir; /* absolute, resolved */
	char *entry;     /* relative to skill_dir, resolved inside it */
	char **args;
	size_t nargs;
	char **env; /* KEY=VALUE */
	size_t nenv;
	char **perm[PERM__COUNT];
	size_t nperm[PERM__COUNT];
	uint64_t principal_uid;
	char *session;
	uint64_t timeout_ms, output_bytes, memory_mb, pids, fsize_mb, nofile;
	char **programs; /* real paths the call may execute, beside the entry */
	size_t nprograms;
	char *interpreter; /* "": the entry runs itself; else one of programs,
	                      run with the entry as its first argument */
	uint64_t cwd;      /* enum grant_cwd: where the entry starts */
	/* set by the master for the worker only */
	uint64_t worker_uid, worker_gid;
	uint64_t as_mb; /* RLIMIT_AS: the memory limit, or a backstop */
	uint64_t net;   /* enum net_mode this call gets: NET_NONE without a
	                   network grant; NET_HOST: no new net namespace */
};

/* GRANT_ACK: the master builds a worker for the grant, or says why not. */
struct msg_grant_ack {
	char *grant_id;
	uint64_t err; /* ERR_NONE: the grant is held */
	char *message;
};

/* POLICY_EVENT */
enum policy_event {
	POLICY_LOADED,
	POLICY_RELOADED,
	POLICY_RELOAD_FAILED,
	POLICY__COUNT
};
/* "policy.loaded", ...: the audit action. */
const char *policy_event_name(enum policy_event a);

struct msg_policy_event {
	uint64_t action; /* enum policy_event */
	char *message;
	uint64_t files, rules, skills;
};

/* RUN */
struct msg_run {
	uint64_t ref;
	char *grant_id;
};

/* RUN_STARTED (the fds travel beside it) */
struct msg_run_started {
	uint64_t ref;
	int64_t pid;
};
#define RUN_STARTED_FDS 4 /* stdin, stdout, stderr, report, in this order */

/* RUN_EXITED */
struct msg_run_exited {
	uint64_t ref;
	int started;       /* the skill was exec'd */
	int64_t exit_code; /* -1 when killed by a signal */
	int64_t signal;    /* 0 when it exited */
	uint64_t limit;    /* enum limit_kind that ended it */
	uint64_t duration_ms, cpu_ms, max_rss_kb;
	uint64_t err; /* ERR_NONE or why nothing ran / how it ended */
	char *message;
};

/*
 * Settle how a call ended: its limit, error and message, from what ran
 * (started, exit_code, signal, limit if the clock ended it), what its
 * cgroup saw, and fail: why the master stopped it, if it did. The
 * message points at a constant or at failmsg.
 */
void run_exited_settle(struct msg_run_exited *x, int oom, int pids_hit,
    enum err_type fail, const char *failmsg);

/*
 * CANCEL: the call holding grant_id is over: a grant not yet run is
 * dropped with its worker, a running one is ended (RUN_EXITED follows).
 */
struct msg_cancel {
	char *grant_id;
};
void msg_cancel_enc(struct mp_enc *m, const struct msg_cancel *c);
int msg_cancel_dec(
    const struct mp_doc *d, struct msg_cancel *c, struct error *e);
void msg_cancel_free(struct msg_cancel *c);

/* SESSION_END: a session of uid, idle, is over (its work dir too). */
struct msg_session_end {
	uint64_t uid;
	char *session;
};
void msg_session_end_enc(struct mp_enc *m, const struct msg_session_end *s);
int msg_session_end_dec(
    const struct mp_doc *d, struct msg_session_end *s, struct error *e);
void msg_session_end_free(struct msg_session_end *s);

/* PEER_CHANNEL: a restarted role's end of a channel to the receiver. */
struct msg_peer_channel {
	char *role; /* "policyd", "auditd" or "netproxy" */
};

/*
 * NET_OPEN: the egress proxy serves one call: the listener the worker
 * made in its network namespace (the one fd) and what the grant allows,
 * from policyd through the master, never from the worker.
 */
struct msg_net_open {
	char *grant_id, *skill, *session;
	uint64_t uid; /* the principal */
	char **allow; /* network.allow: host:port patterns */
	size_t nallow;
};
void msg_net_open_enc(struct mp_enc *m, const struct msg_net_open *o);
int msg_net_open_dec(
    const struct mp_doc *d, struct msg_net_open *o, struct error *e);
void msg_net_open_free(struct msg_net_open *o);

/* NET_CLOSE: the call of grant_id is over (struct msg_cancel's shape). */
void msg_net_close_enc(struct mp_enc *m, const char *grant_id);
int msg_net_close_dec(
    const struct mp_doc *d, struct msg_cancel *c, struct error *e);

/* AUDIT_ACK */
struct msg_audit_ack {
	uint64_t ref;
	int ok;
	char *message;
};

/* FILES: what a call wrote, from the worker once the skill is gone. */
struct written {
	char *path; /* as the skill saw it: /work/..., /data/... */
	uint64_t size;
	char *sha256; /* hex, or "" when not hashed (over the budget) */
};

struct msg_files {
	struct written *files;
	size_t nfiles;
	uint64_t found; /* files found, listed or not */
	int complete;   /* no bound cut the scan short */
};

/* Common to every message. */
int msg_type_of(const struct mp_doc *d, uint64_t *type, struct error *e);
/* Open a message map of type t; msg_end closes it. */
void msg_begin(struct mp_enc *m, enum msg_type t);
void msg_end(struct mp_enc *m);
/* Blocking: read one message of type want from fd, whole (start-up). */
int msg_read(int fd, enum msg_type want, struct mp_doc *d, struct error *e);
/* msg_read, taking the fds sent with it too (at most max; *nfds). */
int msg_read_fds(int fd, enum msg_type want, struct mp_doc *d, int *fds,
    int max, int *nfds, struct error *e);
/* 1 if s is a well-formed grant id. */
int grant_id_valid(const char *s);

/* Each message: _enc writes a whole message, _dec checks every field. */
void msg_ready_enc(struct mp_enc *m, const char *role);
int msg_ready_dec(const struct mp_doc *d, struct msg_ready *r, struct error *e);
void msg_ready_free(struct msg_ready *r);
/* Decode READY and check its role and PROTO_VERSION. */
int msg_ready_check(const struct mp_doc *d, const char *role, struct error *e);

/* The CONF of type t (a role's settings) from the daemon config. */
void conf_enc_for(struct mp_enc *m, enum msg_type t, const struct config *c);
void conf_broker_enc(struct mp_enc *m, const struct conf_broker *c);
int conf_broker_dec(
    const struct mp_doc *d, struct conf_broker *c, struct error *e);
void conf_broker_free(struct conf_broker *c);

void conf_policyd_enc(struct mp_enc *m, const struct conf_policyd *c);
int conf_policyd_dec(
    const struct mp_doc *d, struct conf_policyd *c, struct error *e);
void conf_policyd_free(struct conf_policyd *c);

void conf_auditd_enc(struct mp_enc *m, const struct conf_auditd *c);
int conf_auditd_dec(
    const struct mp_doc *d, struct conf_auditd *c, struct error *e);
void conf_auditd_free(struct conf_auditd *c);
void conf_netproxy_enc(struct mp_enc *m, const struct conf_netproxy *c);
int conf_netproxy_dec(
    const struct mp_doc *d, struct conf_netproxy *c, struct error *e);
void conf_netproxy_free(struct conf_netproxy *c);

void msg_authz_req_enc(struct mp_enc *m, const struct msg_authz_req *r);
int msg_authz_req_dec(
    const struct mp_doc *d, struct msg_authz_req *r, struct error *e);
void msg_authz_req_free(struct msg_authz_req *r);

void msg_authz_ans_enc(struct mp_enc *m, const struct msg_authz_ans *a);
int msg_authz_ans_dec(
    const struct mp_doc *d, struct msg_authz_ans *a, struct error *e);
void msg_authz_ans_free(struct msg_authz_ans *a);

/* SKILLS_REQ is {ref} alone. */
void msg_skills_req_enc(struct mp_enc *m, uint64_t ref);
int msg_skills_req_dec(const struct mp_doc *d, uint64_t *ref, struct error *e);

void msg_skills_ans_enc(struct mp_enc *m, const struct msg_skills_ans *a);
int msg_skills_ans_dec(
    const struct mp_doc *d, struct msg_skills_ans *a, struct error *e);
void msg_skills_ans_free(struct msg_skills_ans *a);

void msg_reload_req_enc(struct mp_enc *m, const struct msg_reload_req *r);
int msg_reload_req_dec(
    const struct mp_doc *d, struct msg_reload_req *r, struct error *e);

void msg_reload_ans_enc(struct mp_enc *m, const struct msg_reload_ans *a);
int msg_reload_ans_dec(
    const struct mp_doc *d, struct msg_reload_ans *a, struct error *e);
void msg_reload_ans_free(struct msg_reload_ans *a);

void msg_skill_info_req_enc(
    struct mp_enc *m, const struct msg_skill_info_req *r);
int msg_skill_info_req_dec(
    const struct mp_doc *d, struct msg_skill_info_req *r, struct error *e);
void msg_skill_info_req_free(struct msg_skill_info_req *r);

void msg_skill_info_ans_enc(
    struct mp_enc *m, const struct msg_skill_info_ans *a);
int msg_skill_info_ans_dec(
    const struct mp_doc *d, struct msg_skill_info_ans *a, struct error *e);
void msg_skill_info_ans_free(struct msg_skill_info_ans *a);

void msg_admins_enc(struct mp_enc *m, const struct msg_admins *a);
int msg_admins_dec(
    const struct mp_doc *d, struct msg_admins *a, struct error *e);
void msg_admins_free(struct msg_admins *a);

/* GRANT (policyd -> master) and SPEC (master -> worker). */
void grant_enc(struct mp_enc *m, const struct grant *g);
int grant_dec(const struct mp_doc *d, struct grant *g, struct error *e);
void spec_enc(struct mp_enc *m, const struct grant *g);
int spec_dec(const struct mp_doc *d, struct grant *g, struct error *e);
/* A grant within the config's bounds (the master's check): 0, or -1. */
int grant_fits(const struct grant *g, const struct config *c, struct error *e);
/* The network a call of g gets: worker.network with a grant, else none. */
enum net_mode grant_net(const struct grant *g, const struct config *c);
/* -1: no data dir; 0: read-only; 1: read-write, as the grant names it. */
int grant_data_access(const struct grant *g);
void grant_free(struct grant *g);
/* A grant's host part, for the SPEC, from the config (see msg_grant.c). */
void spec_fill(struct grant *g, const struct config *c, uid_t uid, int cgroups);

/* PREP: what a worker needs before any grant: the syscall filters. */
struct msg_prep {
	uint8_t *filter[2]; /* BPF: calls without network, with it */
	size_t filter_len[2];
	char *root_dir;   /* empty mount point for the private root */
	uint64_t tmp_mb;  /* the size of its /tmp */
	int host_net;     /* 1: no network namespace of its own */
	char **sys_paths; /* worker.system_paths: host paths bound read-only */
	size_t nsys_paths;
	char **lib_paths; /* worker.library_paths: mappable code, as globs */
	size_t nlib_paths;
};
void msg_prep_enc(struct mp_enc *m, const struct msg_prep *p);
int msg_prep_dec(const struct mp_doc *d, struct msg_prep *p, struct error *e);
void msg_prep_free(struct msg_prep *p);

void msg_grant_ack_enc(struct mp_enc *m, const struct msg_grant_ack *a);
int msg_grant_ack_dec(
    const struct mp_doc *d, struct msg_grant_ack *a, struct error *e);
void msg_grant_ack_free(struct msg_grant_ack *a);

void msg_policy_event_enc(struct mp_enc *m, const struct msg_policy_event *p);
int msg_policy_event_dec(
    const struct mp_doc *d, struct msg_policy_event *p, struct error *e);
void msg_policy_event_free(struct msg_policy_event *p);

void msg_run_enc(struct mp_enc *m, const struct msg_run *r);
int msg_run_dec(const struct mp_doc *d, struct msg_run *r, struct error *e);
void msg_run_free(struct msg_run *r);

void msg_run_started_enc(struct mp_enc *m, const struct msg_run_started *r);
int msg_run_started_dec(
    const struct mp_doc *d, struct msg_run_started *r, struct error *e);

void msg_run_exited_enc(struct mp_enc *m, const struct msg_run_exited *r);
int msg_run_exited_dec(
    const struct mp_doc *d, struct msg_run_exited *r, struct error *e);
void msg_run_exited_free(struct msg_run_exited *r);

void msg_peer_channel_enc(struct mp_enc *m, const struct msg_peer_channel *p);
int msg_peer_channel_dec(
    const struct mp_doc *d, struct msg_peer_channel *p, struct error *e);
void msg_peer_channel_free(struct msg_peer_channel *p);

/* SERVE, WORKER_READY, WORKER_GO and WORKER_DONE have no fields but "t". */
void msg_empty_enc(struct mp_enc *m, enum msg_type t);
int msg_empty_dec(const struct mp_doc *d, struct error *e);

/* WORKER_FAIL */
struct msg_worker_fail {
	char *step, *message;
};
void msg_worker_fail_enc(struct mp_enc *m, const struct msg_worker_fail *f);
int msg_worker_fail_dec(
    const struct mp_doc *d, struct msg_worker_fail *f, struct error *e);
void msg_worker_fail_free(struct msg_worker_fail *f);

/* WORKER_EXIT: the skill's exit code (0..255), or the signal that ended it. */
struct msg_worker_exit {
	int64_t exit_code; /* -1 when a signal ended it */
	int64_t signal;    /* 0 when it exited */
};
void msg_worker_exit_enc(struct mp_enc *m, const struct msg_worker_exit *x);
int msg_worker_exit_dec(
    const struct mp_doc *d, struct msg_worker_exit *x, struct error *e);

/*
 * AUDIT: {ref, event, lazy}. The event is one flat record: dotted ECS
 * names to strings, integers, booleans, bins (text a skill chose) or
 * arrays of those. Build one with msg_audit_begin, enc_k* fields,
 * msg_audit_end (or msg_audit_end_lazy); auditd stamps time, sequence
 * and hashes. lazy (absent: false): nothing waits for this record, so
 * auditd may leave its sync to the next commit (docs/audit.md).
 */
#define AUDIT_KEY_MAX 64
#define AUDIT_EVENT_FIELDS_MAX 128
void msg_audit_begin(struct mp_enc *m, uint64_t ref, const char *action,
    const char *type, const char *outcome);
void msg_audit_end(struct mp_enc *m);
void msg_audit_end_lazy(struct mp_enc *m);
/* The fields that say whose call a record is about. */
struct audit_call {
	const char *request_id; /* the client's id, or NULL */
	uint64_t uid;
	int64_t gid, pid; /* -1: not known to the sender */
	const char *session, *skill, *command, *phase;
	const char *grant_id; /* NULL or "": none */
};
void msg_audit_call(struct mp_enc *m, const struct audit_call *c);
/* The master's records, whole (their schema: docs/audit.md). */
void msg_audit_daemon(struct mp_enc *m, uint64_t ref, const char *action,
    int64_t pid, const char *config, const char *reason);
void msg_audit_child_died(
    struct mp_enc *m, uint64_t ref, const char *role, int64_t pid, int status);
void msg_audit_policy(
    struct mp_enc *m, uint64_t ref, const struct msg_policy_event *pe);
void msg_audit_worker(struct mp_enc *m, uint64_t ref, const struct grant *g,
    int64_t pid, const struct msg_run_exited *x);
/*
 * network.connect, by the egress proxy: one connection of a call, when
 * it ended or was refused (err_code NULL: it was allowed and ran).
 * refused > 0: a summary of that many connections refused at a limit.
 */
struct audit_net {
	const char *grant_id, *skill, *session;
	uint64_t uid;
	const char *domain; /* as asked, lower-case; NULL: never parsed */
	uint64_t port;      /* 0: none */
	const char *ip;     /* where it went; NULL: nowhere */
	const char *method; /* NULL: never parsed */
	uint64_t bytes_up, bytes_down, duration_ns;
	const char *err_code, *err_msg;
	uint64_t refused;
};
void msg_audit_net(struct mp_enc *m, uint64_t ref, const struct audit_net *n);
/* *event points into d; valid while d is. */
int msg_audit_dec(const struct mp_doc *d, uint64_t *ref,
    const msgpack_object **event, struct error *e);
/* 1 if a record msg_audit_dec took says lazy: true. */
int msg_audit_is_lazy(const struct mp_doc *d);

void msg_audit_ack_enc(struct mp_enc *m, const struct msg_audit_ack *a);
int msg_audit_ack_dec(
    const struct mp_doc *d, struct msg_audit_ack *a, struct error *e);
void msg_audit_ack_free(struct msg_audit_ack *a);

void msg_files_enc(struct mp_enc *m, const struct msg_files *f);
int msg_files_dec(const struct mp_doc *d, struct msg_files *f, struct error *e);
void msg_files_free(struct msg_files *f);

#endif
