/* master.h: skillbrokerd, the privileged supervisor and worker spawner. */
#ifndef SB_MASTER_H
#define SB_MASTER_H

#include <event2/event.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "../lib/config.h"
#include "../proto/msg.h"
#include "../proto/peer.h"

/* Fixed fd numbers in the children (the contract with their main()). */
#define FD_MASTER 3
#define FD_BROKER_LISTEN 4
#define FD_BROKER_POLICYD 5
#define FD_BROKER_AUDITD 6
#define FD_PEER_BROKER 4 /* in policyd and auditd */

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
	uint64_t audit_ref;
};

extern struct master *M;

/* master_proc.c */
void proc_start_all(void);
void proc_child_exited(pid_t pid, int status);
void proc_stop_all(void);
struct role *proc_role_of(struct peer *p);
extern const struct peer_handler broker_table[], policyd_table[],
    auditd_table[];

/* master_audit.c: one record's fields, then maudit_send */
struct maudit {
	struct mp_enc body;
	size_t n;
};
void maudit_begin(struct maudit *a, const char *action, const char *type,
    const char *outcome);
void maudit_str(struct maudit *a, const char *k, const char *v);
void maudit_int(struct maudit *a, const char *k, int64_t v);
void maudit_uint(struct maudit *a, const char *k, uint64_t v);
void maudit_send(struct maudit *a);
void maudit_flush(void);
void maudit_daemon_started(void);
void maudit_daemon_stopping(int sig);
void maudit_child_died(
    const char *role, pid_t pid, int exit_code, int sig, const char *what);

/* master_grant.c */
int grant_store_add(struct grant *g, struct error *e);
struct grant *grant_store_take(const char *id);
void grant_store_clear(void);
void grant_store_init(uint64_t ttl_ms);

/* master_cgroup.c */
void cgroup_init(void);
/* id names the call's own groups (a counter, never reused). */
int cgroup_enter(uint64_t id, pid_t pid, uint64_t memory_mb, uint64_t npids,
    struct error *e);
void cgroup_limits_hit(uint64_t id, int *oom, int *pids_max);
void cgroup_remove(uint64_t id);
int cgroup_active(void);

/* master_files.c */
struct file_written {
	char path[PATH_MAX_LEN];
	uint64_t size;
	char sha256[65];
};
/*
 * Regular files under dir modified at or after since (realtime ns),
 * hashing at most *hash_budget bytes in all (files beyond: no sha256).
 */
#define FILES_HASH_BUDGET (64ULL << 20)
size_t files_written_scan(const char *dir, const char *shown_as,
    uint64_t since_ns, struct file_written *out, size_t max,
    uint64_t *hash_budget);

/* master_workdir.c */
void workdir_init(void);
int workdir_mount(const char *work_dir, struct error *e);

/* master_worker.c */
int worker_on_run(struct peer *p, const struct mp_doc *d);
int worker_on_audit_ack(struct peer *p, const struct mp_doc *d);
int worker_reap(pid_t pid, int status, const struct rusage *ru);
void worker_kill_all(void);
void worker_audit_lost(void);
int session_busy(const char *work_dir);
void worker_init(void);

#endif
