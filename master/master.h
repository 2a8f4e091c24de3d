/*
 * master.h: skillbrokerd, the privileged supervisor: it forks, reaps,
 * passes fds, mounts, manages cgroups and holds grants, and reads no byte
 * a client or a skill chose. Its files call one way only: main.c ->
 * master_proc.c -> master_worker.c -> master_workdir.c, master_audit.c,
 * master_service.c.
 * The mechanisms under them: lib/cgroup.c, lib/image.c, lib/os.c.
 */
#ifndef SB_MASTER_H
#define SB_MASTER_H

#include <event2/event.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "../lib/cgroup.h"
#include "../lib/config.h"
#include "../lib/image.h"
#include "../lib/os.h"
#include "../proto/msg.h"
#include "../proto/peer.h"

enum role_id {
	ROLE_BROKER,
	ROLE_POLICYD,
	ROLE_AUDITD,
	ROLE_NETPROXY,
	ROLE__COUNT
};

struct role {
	const char *name; /* for logs and READY */
	pid_t pid;
	int ready;
	struct peer peer;
	int broker_end; /* policyd, auditd: the broker's end, to hand over */
	int proxy_end;  /* auditd: the egress proxy's end, to hand over */
	uint64_t started_ms, backoff_ms;
	struct event *restart_ev;
};

struct master {
	struct config cfg;
	struct event_base *base;
	int foreground, verbose;
	char *helper_dir;
	int listen_fd;
	struct role roles[ROLE__COUNT];
	int nready;
	int reloading; /* SIGHUP sent RELOADING=1; READY=1 is owed */
	int shutting_down;
	int exit_status; /* non-zero when a failure, not a signal, stopped us */
	uint64_t audit_ref, audit_acked;
};

extern struct master *M;

/* master_proc.c: the roles */
void proc_start_all(void);
int proc_child_exited(pid_t pid, int status);
void proc_stop_all(void);

/* master_worker.c: grants, each held by the worker built for it */
void worker_init(void);
int worker_on_grant(struct peer *p, const struct mp_doc *d);
int worker_on_run(struct peer *p, const struct mp_doc *d);
int worker_on_cancel(struct peer *p, const struct mp_doc *d);
int worker_on_audit_ack(struct peer *p, const struct mp_doc *d);
int worker_reap(pid_t pid, int status, const struct rusage *ru);
void worker_role_lost(enum role_id role);
void worker_net_reopen(void);

/* master_workdir.c: a size-bound tmpfs per session */
int workdir_take(uint64_t uid, const char *session, struct error *e);
void workdir_release(uint64_t uid, const char *session);
int workdir_on_end(struct peer *p, const struct mp_doc *d);

/* master_service.c: the pidfile and systemd's notifications */
int service_pidfile_lock(const char *path, struct error *e);
void service_pidfile_write(void);
void service_pidfile_remove(void);
void service_notify_init(void);
void service_notify(const char *state, const char *status);
void service_notify_reloading(void);

/* master_audit.c: the master's records, queued while auditd is down */
void maudit_send(struct mp_enc *m);
void maudit_flush(void);
/*
 * Build a record with build(&m, ref, args...) (proto/msg_audit.c) and
 * send it; refs count up, and auditd acknowledges them in order.
 */
#define MAUDIT(build, ...)                                                     \
	do {                                                                   \
		struct mp_enc m_;                                              \
		enc_init(&m_);                                                 \
		build(&m_, ++M->audit_ref, __VA_ARGS__);                       \
		maudit_send(&m_);                                              \
	} while (0)

#endif
