/*
 * msg.h: typed messages on the internal channels. Every message is one
 * msgpack map whose "t" field is a msg_type; the numbered ranges say
 * which channel a type belongs to. READY carries PROTO_VERSION, which
 * the master checks on every child.
 */
#ifndef SB_MSG_H
#define SB_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/error.h"
#include "mp.h"

#define PROTO_VERSION 1

enum msg_type {
	/* any child -> master */
	MSG_READY = 1,
	/* broker <-> policyd */
	MSG_AUTHZ_REQ = 16,
	MSG_AUTHZ_ANS = 17,
	MSG_SKILLS_REQ = 18,
	MSG_SKILLS_ANS = 19,
	MSG_RELOAD_REQ = 20, /* an admin's reload: {ref, uid, gid} */
	MSG_RELOAD_ANS = 21, /* {ref, ok, err, message} */
	/* policyd <-> master */
	MSG_GRANT = 32,
	MSG_GRANT_ACK = 33,
	MSG_POLICY_EVENT =
	    34, /* policyd -> master: a load, for the audit log */
	/* broker <-> master */
	MSG_RUN = 48,
	MSG_RUN_STARTED = 49, /* carries stdin, stdout, stderr pipe fds */
	MSG_RUN_EXITED = 50,
	MSG_PEER_CHANNEL = 51, /* master -> broker: a restarted peer's fd */
	MSG_SERVE = 52,        /* master -> broker: all ready, accept clients */
	/* broker, master -> auditd */
	MSG_AUDIT = 64,
	MSG_AUDIT_ACK = 65,
};

#define GRANT_ID_LEN 32 /* hex chars of a 128-bit random id */
#define ARGS_MAX 256
#define ARG_MAX_LEN 4096
#define NAME_MAX_LEN 64
#define SESSION_MAX_LEN 64
#define REASON_MAX_LEN 512
#define PATH_MAX_LEN 4096

struct msg_ready {
	uint64_t version;
	char *role;
};

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
	int dry_run;
};

struct msg_authz_ans {
	uint64_t ref;
	int allowed;
	uint64_t err; /* enum err_type */
	char *reason;
	char **rules;
	size_t nrules;
	char *grant_id; /* set when allowed and not a dry run */
	char *command;  /* the command the decision resolved to */
	uint64_t timeout_ms, output_bytes;
	uint8_t *effective; /* msgpack map: permissions and limits */
	size_t effective_len;
};

/* The complete worker spec: only what policyd decided, nothing from a client.
 */
struct grant {
	char *grant_id;
	char *skill, *command;
	char *skill_dir; /* absolute, resolved */
	char *entry;     /* relative to skill_dir, resolved inside it */
	char **args;
	size_t nargs;
	char **env; /* KEY=VALUE */
	size_t nenv;
	char *work_dir; /* absolute */
	char *data_dir; /* absolute, per skill, persistent */
	char **perm[5]; /* effective fs.read, fs.write, network, exec, env */
	size_t nperm[5];
	uint64_t principal_uid;
	char *session;
	uint64_t timeout_ms, output_bytes, memory_mb, pids, fsize_mb, nofile;
	/* set by the master for the worker only */
	uint64_t worker_uid, worker_gid;
	char *root_dir;   /* empty mount point for the private root */
	char **sys_paths; /* host paths bound read-only */
	size_t nsys_paths;
	uint64_t tmp_mb;
	uint64_t
	    as_mb; /* RLIMIT_AS: the memory limit, or a backstop to a cgroup */
	int net_host; /* keep the host network (no new net namespace) */
};

struct msg_grant_ack {
	char *grant_id;
	int ok;
};

struct msg_run {
	uint64_t ref;
	char *grant_id;
};

struct msg_run_started {
	uint64_t ref;
	int64_t pid;
};

#define FILES_WRITTEN_MAX 256

struct written {
	char *path;
	uint64_t size;
	char *sha256; /* hex, or "" when not hashed (too big) */
};

struct msg_run_exited {
	uint64_t ref;
	int started;
	int64_t exit_code; /* -1 when killed by a signal */
	int64_t signal;    /* 0 when it exited */
	int timed_out;
	uint64_t duration_ms, cpu_ms, max_rss_kb;
	uint64_t err; /* ERR_NONE or why nothing ran / how it ended */
	char *message;
	struct written *files; /* created or changed under writable dirs */
	size_t nfiles;
};

struct msg_audit_ack {
	uint64_t ref;
	int ok;
	char *message;
};

/* Read the "t" field of a decoded message. */
int msg_type_of(const struct mp_doc *d, uint64_t *type, struct error *e);
/* Start a message map of n fields (plus "t"). */
void msg_begin(struct mp_enc *m, enum msg_type t, size_t nfields);

void msg_ready_enc(struct mp_enc *m, const char *role);
int msg_ready_dec(const struct mp_doc *d, struct msg_ready *r, struct error *e);
void msg_ready_free(struct msg_ready *r);

void msg_authz_req_enc(struct mp_enc *m, const struct msg_authz_req *r);
int msg_authz_req_dec(
    const struct mp_doc *d, struct msg_authz_req *r, struct error *e);
void msg_authz_req_free(struct msg_authz_req *r);

void msg_authz_ans_enc(struct mp_enc *m, const struct msg_authz_ans *a);
int msg_authz_ans_dec(
    const struct mp_doc *d, struct msg_authz_ans *a, struct error *e);
void msg_authz_ans_free(struct msg_authz_ans *a);

/* A grant is also the worker spec (type MSG_GRANT either way). */
void grant_enc(struct mp_enc *m, const struct grant *g);
int grant_dec(const struct mp_doc *d, struct grant *g, struct error *e);
void grant_free(struct grant *g);

void msg_grant_ack_enc(struct mp_enc *m, const struct msg_grant_ack *a);
int msg_grant_ack_dec(
    const struct mp_doc *d, struct msg_grant_ack *a, struct error *e);
void msg_grant_ack_free(struct msg_grant_ack *a);

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

void msg_audit_ack_enc(struct mp_enc *m, const struct msg_audit_ack *a);
int msg_audit_ack_dec(
    const struct mp_doc *d, struct msg_audit_ack *a, struct error *e);
void msg_audit_ack_free(struct msg_audit_ack *a);

/* PEER_CHANNEL: which role the attached fd now reaches. */
void msg_peer_channel_enc(struct mp_enc *m, const char *role);
int msg_peer_channel_dec(const struct mp_doc *d, char **role, struct error *e);

/* Simple {t, ref} messages (SKILLS_REQ). */
void msg_ref_enc(struct mp_enc *m, enum msg_type t, uint64_t ref);
int msg_ref_dec(const struct mp_doc *d, uint64_t *ref, struct error *e);

/* 1 if s is a well-formed grant id. */
int grant_id_valid(const char *s);

#endif
