/*
 * master.h: skillbrokerd, the privileged supervisor. It forks, reaps,
 * passes fds, mounts, manages cgroups and keeps grants; it reads no
 * byte that a client or a skill chose.
 *
 * Files call each other in one direction only:
 *   main.c -> master_proc.c -> master_worker.c -> master_grant.c,
 *   master_workdir.c, master_cgroup.c, master_audit.c
 */
#ifndef SB_MASTER_H
#define SB_MASTER_H

#include <event2/event.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "../lib/config.h"
#include "../proto/msg.h"
#include "../proto/peer.h"

enum role_id { ROLE_BROKER, ROLE_POLICYD, ROLE_AUDITD, ROLE__COUNT };

struct role {
	const char *name;    /* for logs and READY */
	const char *program; /* helper executable */
	const struct peer_handler *table;
	pid_t pid;
	int ready;
	struct peer peer;
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
	int shutting_down;
	int exit_status; /* non-zero when a failure, not a signal, stopped us */
	uint64_t audit_ref, audit_acked;
};

extern struct master *M;

/* A child's fd and the number it must have after exec. */
struct fdmap {
	int fd, to;
};

/* master_proc.c: the roles */
void proc_start_all(void);
int proc_child_exited(pid_t pid, int status);
void proc_stop_all(void);
void proc_exec(const char *program, int foreground, const struct fdmap *fds,
    int nfds) __attribute__((noreturn));

/* master_worker.c: one worker per granted RUN */
void worker_init(void);
int worker_on_run(struct peer *p, const struct mp_doc *d);
int worker_on_audit_ack(struct peer *p, const struct mp_doc *d);
int worker_reap(pid_t pid, int status, const struct rusage *ru);
void worker_kill_all(void);
void worker_audit_lost(void);

/* master_grant.c: what policyd granted, each taken once */
int grant_store_add(struct grant *g, struct error *e);
struct grant *grant_store_take(const char *id);
void grant_store_clear(void);
void grant_store_init(uint64_t ttl_ms);

/* master_cgroup.c: a memory and pids group per call */
void cgroup_init(void);
int cgroup_enter(uint64_t id, pid_t pid, uint64_t memory_mb, uint64_t npids,
    struct error *e);
void cgroup_limits_hit(uint64_t id, int *oom, int *pids_max);
void cgroup_kill(uint64_t id);
int cgroup_remove(uint64_t id);
int cgroup_active(void);

/* master_workdir.c: a size-bound tmpfs per session */
void workdir_init(void);
int workdir_take(const char *work_dir, struct error *e);
void workdir_release(const char *work_dir);

/* master_audit.c: the master's records, queued while auditd is down */
uint64_t maudit_begin(struct mp_enc *m, const char *action, const char *type,
    const char *outcome);
void maudit_send(struct mp_enc *m);
void maudit_flush(void);
void maudit_daemon(const char *action, const char *reason);
void maudit_child_died(const char *role, pid_t pid, int status);

#endif
