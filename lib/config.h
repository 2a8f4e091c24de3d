/*
 * config.h: the daemon configuration (etc/skillbroker.yaml). Relative
 * paths are resolved against the directory of the config file. Only the
 * master reads it; each child gets the few settings it needs on argv.
 */
#ifndef SB_CONFIG_H
#define SB_CONFIG_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct limits {
	uint64_t timeout_ms, max_timeout_ms, output_bytes, memory_mb, pids,
	    fsize_mb, nofile;
};

/* Audit log settings, named as Linux auditd names them (docs/audit.md). */
enum audit_flush {
	AUDIT_FLUSH_NONE,
	AUDIT_FLUSH_INCREMENTAL,
	AUDIT_FLUSH_DATA,
	AUDIT_FLUSH_SYNC
};
enum audit_max_action { AUDIT_MAX_ROTATE, AUDIT_MAX_KEEP_LOGS };
enum audit_fail_action {
	AUDIT_FAIL_SUSPEND,
	AUDIT_FAIL_ROTATE,
	AUDIT_FAIL_HALT
};

#define AUDIT_FREQ_MAX 1000000
#define AUDIT_NUM_LOGS_MAX 999
#define AUDIT_MAX_LOG_FILE_MAX (1024ULL * 1024 * 1024 * 1024) /* 1 TiB */
/* auditd's exit status when an action says halt: the master stops. */
#define AUDIT_EXIT_HALT 3

struct audit_settings {
	enum audit_flush flush;
	uint64_t freq;         /* incremental: sync every freq records */
	uint64_t max_log_file; /* bytes; 0: no size limit */
	enum audit_max_action max_log_file_action;
	uint64_t num_logs; /* files kept by rotate, current included */
	enum audit_fail_action disk_full_action, disk_error_action;
};

extern const char *const audit_flush_names[];
extern const char *const audit_max_action_names[];
extern const char *const audit_fail_action_names[];

/*
 * worker.network: what a call with a network grant gets. proxy: its own
 * network namespace, reaching out only through the egress proxy; none:
 * such calls are refused; host: the host's network, unfiltered (unsafe).
 */
enum net_mode { NET_NONE, NET_PROXY, NET_HOST, NET__COUNT };
extern const char *const config_net_names[NET__COUNT + 1];

/* netproxy: the egress proxy's bounds (docs/network.md). */
struct netproxy_settings {
	char *hosts_file; /* names resolved from it before DNS; NULL: none */
	uint64_t max_connections;       /* per call, open at once */
	uint64_t max_total_connections; /* all calls */
	uint64_t max_bytes;             /* per call, both directions */
	uint64_t connect_timeout_s, header_timeout_s, idle_s;
};

/* Each unprivileged role runs as a user of its own. */
enum role_user {
	USER_BROKER,
	USER_POLICYD,
	USER_AUDITD,
	USER_NETPROXY,
	USER__COUNT
};
extern const char *const config_user_keys[USER__COUNT];
extern const char *const config_user_defaults[USER__COUNT];
/* uids used when a default user does not exist (make install makes them) */
#define CONFIG_FALLBACK_UID 64290

/* per_uid: what one local user (uid) may hold at once. */
struct quota {
	uint64_t clients, calls, sessions, workers;
};

/* clients: idle and partial-frame timeouts, unread replies. */
struct client_bounds {
	uint64_t idle_s, frame_s, stall_s, output_bytes;
	uint64_t approval_s; /* how long a call waits for a human's answer */
};

struct config {
	char *path; /* absolute path of the config file */
	char *socket;
	char *pidfile; /* the master's pid, locked while it runs; NULL: none */
	char **skills_dirs;
	size_t nskills_dirs;
	char *policy_dir;
	char *state_dir;
	char *audit_path;
	char *audit_head; /* state_dir/audit.head: the chain's head */
	char *data_dir;   /* state_dir/data: the skills' data images */
	struct audit_settings audit;
	char *users[USER__COUNT]; /* users.broker, .policyd, .auditd */
	uid_t uid[USER__COUNT];
	gid_t gid[USER__COUNT];
	uint32_t worker_uid_first, worker_uid_last;
	enum net_mode worker_network; /* worker.network */
	struct netproxy_settings netproxy;
	char **sys_paths; /* worker.system_paths: read-only binds */
	size_t nsys_paths;
	char **lib_paths; /* worker.library_paths: code the loader may map */
	size_t nlib_paths;
	/* interpreters: ".ext" -> program, for entries without "#!" */
	char **interp_exts, **interp_progs;
	size_t ninterps;
	uint64_t worker_tmp_mb;   /* worker.tmp_mb: the sandbox's /tmp */
	uint64_t worker_pool;     /* worker.pool: pre-forked workers kept */
	uint64_t work_mb;         /* worker.work_mb: each session's work dir */
	uint64_t data_mb;         /* worker.data_mb: each skill's data image */
	uint64_t total_memory_mb; /* worker.total_memory_mb; 0: half the RAM */
	uint64_t max_sessions;    /* worker.max_sessions: work dirs at once */
	uint64_t session_idle_s;  /* worker.session_idle_s: then unmounted */
	uint64_t max_frame_bytes;
	uint64_t max_clients;
	struct quota per_uid;
	struct client_bounds clients;
	struct limits limits;
};

/* Workers at once: one per worker uid, at most CONFIG_WORKERS_MAX. */
#define CONFIG_WORKERS_MAX 1024
#define CONFIG_POOL_MAX 64 /* worker.pool */
uint64_t config_nworkers(const struct config *c);
/* Memory of all calls together: worker.total_memory_mb, or half the RAM. */
uint64_t config_total_memory_mb(const struct config *c);

int config_load(struct config *c, const char *path, struct error *e);
/* The built-in defaults alone, paths relative to base (no file read). */
void config_defaults(struct config *c, const char *base);
/* At most this many interpreters by extension. */
#define CONFIG_INTERPS_MAX 32
/*
 * The daemon's own paths no skill may be granted: state_dir, the
 * socket's, the audit log's and the pidfile's directories, policy_dir
 * and skills_dirs (a NULL-ended array the caller frees with strarr_free).
 */
char **config_protected(const struct config *c, size_t *n);
void config_free(struct config *c);
/*
 * Resolve each role's user (name or number) into uid/gid. The default
 * name, when no such user exists, falls back to CONFIG_FALLBACK_UID +
 * role (and says so); any other name must exist.
 */
int config_resolve_users(struct config *c, struct error *e);
/* Create the directories the config names, with owners and modes. */
int config_make_dirs(const struct config *c, struct error *e);
/* Index of s in a NULL-terminated name table, or -1. */
int config_keyword(const char *const *names, const char *s);
/* The defaults of the audit settings. */
void audit_settings_default(struct audit_settings *a);
/* "8" is MiB (as Linux auditd), "64K" KiB, "0" no limit: into bytes. */
int audit_size_parse(const char *s, uint64_t *bytes);

#endif
