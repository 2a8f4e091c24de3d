/* config.c: load and validate the daemon configuration. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "os.h"
#include "util.h"
#include "xmalloc.h"
#include "ydoc.h"

static const struct limits default_limits = {
    .timeout_ms = 10000,
    .max_timeout_ms = 300000,
    .output_bytes = 65536,
    .memory_mb = 256,
    .pids = 64,
    .fsize_mb = 64,
    .nofile = 64,
};

/* Make p absolute relative to base (the config file's directory). */
static char *
config_abspath(const char *base, const char *p)
{
	char *out;

	if (p[0] == '/')
		out = xstrdup(p);
	else
		xasprintf(&out, "%s/%s", base, p);
	path_normalize(out);
	return out;
}

/*
 * Whether path is a place the worker mounts itself in every sandbox
 * ("/", or at or beneath /dev, /proc, /tmp, /skill, /work, /data): a
 * system path there would cover, or hide beneath, the sandbox's own.
 */
static int
config_sandbox_own(const char *path)
{
	static const char *const own[] = {
	    "/dev", "/proc", "/tmp", "/skill", "/work", "/data", NULL};
	size_t i;

	if (strcmp(path, "/") == 0)
		return 1;
	for (i = 0; own[i] != NULL; i++)
		if (path_under(path, own[i]))
			return 1;
	return 0;
}

static int
config_path(struct ydoc *y, struct ynode *n, const char *base, char **out,
    struct error *e)
{
	const char *s;

	if (yscalar(y, n, &s, e) == -1)
		return -1;
	if (*s == '\0' || strlen(s) >= PATH_MAX)
		return yerr(y, n, e, "path must be 1..%d bytes", PATH_MAX - 1);
	free(*out);
	*out = config_abspath(base, s);
	return 0;
}

/* One whole-number key of a section, its place and its range. */
struct config_uint {
	const char *k;
	uint64_t *v;
	uint64_t min, max;
};

/* A section of whole numbers only: every key in f[], each in range. */
static int
config_uints(struct ydoc *y, struct ynode *n, const char *section,
    const struct config_uint *f, size_t nf, struct error *e)
{
	const char *keys[16];
	struct ynode *v;
	size_t i;

	if (nf >= sizeof(keys) / sizeof(keys[0]))
		fatalx("section %s: too many keys", section);
	for (i = 0; i < nf; i++)
		keys[i] = f[i].k;
	keys[nf] = NULL;
	if (yexpect(y, n, YNODE_MAP, section, e) || ymap_only(y, n, keys, e))
		return -1;
	for (i = 0; i < nf; i++)
		if ((v = ymap_get(y, n, f[i].k)) != NULL &&
		    yuint(y, v, f[i].min, f[i].max, f[i].v, e) == -1)
			return -1;
	return 0;
}

static int
config_limits(
    struct ydoc *y, struct ynode *n, struct limits *l, struct error *e)
{
	const struct config_uint f[] = {
	    {"timeout_ms", &l->timeout_ms, 1, 86400000},
	    {"max_timeout_ms", &l->max_timeout_ms, 1, 86400000},
	    {"output_bytes", &l->output_bytes, 1, 64 * 1024 * 1024},
	    {"memory_mb", &l->memory_mb, 8, 1024 * 1024},
	    {"pids", &l->pids, 1, 65536},
	    {"fsize_mb", &l->fsize_mb, 1, 1024 * 1024},
	    {"nofile", &l->nofile, 8, 65536},
	};

	if (config_uints(y, n, "limits", f, sizeof(f) / sizeof(f[0]), e))
		return -1;
	if (l->timeout_ms > l->max_timeout_ms)
		return yerr(y, n, e, "timeout_ms exceeds max_timeout_ms");
	return 0;
}

/* per_uid: what one local user may hold at once. */
static int
config_per_uid(
    struct ydoc *y, struct ynode *n, struct quota *q, struct error *e)
{
	const struct config_uint f[] = {
	    {"clients", &q->clients, 1, 65536},
	    {"calls", &q->calls, 1, 65536},
	    {"sessions", &q->sessions, 1, 65536},
	    {"workers", &q->workers, 1, 65536},
	};

	return config_uints(y, n, "per_uid", f, sizeof(f) / sizeof(f[0]), e);
}

/* clients: how long a connection may idle or stall, what it may leave. */
static int
config_clients(
    struct ydoc *y, struct ynode *n, struct client_bounds *b, struct error *e)
{
	const struct config_uint f[] = {
	    {"idle_s", &b->idle_s, 1, 86400 * 365},
	    {"frame_s", &b->frame_s, 1, 3600},
	    {"stall_s", &b->stall_s, 1, 3600},
	    {"output_bytes", &b->output_bytes, 65536, 1024 * 1024 * 1024},
	    {"approval_s", &b->approval_s, 1, 3600},
	};

	return config_uints(y, n, "clients", f, sizeof(f) / sizeof(f[0]), e);
}

/* worker.library_paths: absolute globs, each one spelling of its place. */
static int
config_lib_paths(
    struct ydoc *y, struct ynode *u, struct config *c, struct error *e)
{
	size_t i;

	strarr_free(c->lib_paths, c->nlib_paths);
	c->lib_paths = NULL;
	c->nlib_paths = 0;
	if (ystrlist(y, u, 64, &c->lib_paths, &c->nlib_paths, e))
		return -1;
	for (i = 0; i < c->nlib_paths; i++)
		if (c->lib_paths[i][0] != '/' ||
		    path_has_dot(c->lib_paths[i]) ||
		    strstr(c->lib_paths[i], "//") != NULL)
			return yerr(y, u, e,
			    "worker.library_paths: absolute paths "
			    "without \".\", \"..\" or \"//\"");
	return 0;
}

static int
config_worker(
    struct ydoc *y, struct ynode *n, struct config *c, struct error *e)
{
	static const char *const keys[] = {"uids", "network", "system_paths",
	    "tmp_mb", "work_mb", "data_mb", "total_memory_mb", "max_sessions",
	    "session_idle_s", "library_paths", "pool", NULL};
	struct ynode *u;
	uint64_t first, last;
	const char *net;
	size_t i;
	int k;

	if (yexpect(y, n, YNODE_MAP, "worker", e) || ymap_only(y, n, keys, e))
		return -1;
	if ((u = ymap_get(y, n, "network")) != NULL) {
		if (yscalar(y, u, &net, e))
			return -1;
		if ((k = config_keyword(config_net_names, net)) < 0)
			return yerr(
			    y, u, e, "worker.network: proxy, none or host");
		c->worker_network = (enum net_mode)k;
	}
	if (((u = ymap_get(y, n, "tmp_mb")) != NULL &&
	        yuint(y, u, 1, 65536, &c->worker_tmp_mb, e)) ||
	    ((u = ymap_get(y, n, "pool")) != NULL &&
	        yuint(y, u, 0, CONFIG_POOL_MAX, &c->worker_pool, e)) ||
	    ((u = ymap_get(y, n, "work_mb")) != NULL &&
	        yuint(y, u, 1, 1024 * 1024, &c->work_mb, e)) ||
	    ((u = ymap_get(y, n, "data_mb")) != NULL &&
	        yuint(y, u, 16, 1024 * 1024, &c->data_mb, e)) ||
	    ((u = ymap_get(y, n, "total_memory_mb")) != NULL &&
	        yuint(y, u, 64, 1024 * 1024 * 1024, &c->total_memory_mb, e)) ||
	    ((u = ymap_get(y, n, "max_sessions")) != NULL &&
	        yuint(y, u, 1, 65536, &c->max_sessions, e)) ||
	    ((u = ymap_get(y, n, "session_idle_s")) != NULL &&
	        yuint(y, u, 1, 86400 * 365, &c->session_idle_s, e)))
		return -1;
	if ((u = ymap_get(y, n, "system_paths")) != NULL) {
		strarr_free(c->sys_paths, c->nsys_paths);
		if (ystrlist(y, u, 64, &c->sys_paths, &c->nsys_paths, e))
			return -1;
		for (i = 0; i < c->nsys_paths; i++)
			if (c->sys_paths[i][0] != '/' ||
			    path_has_dot(c->sys_paths[i]) ||
			    strstr(c->sys_paths[i], "//") != NULL)
				return yerr(y, u, e,
				    "worker.system_paths: absolute paths "
				    "without \".\", \"..\" or \"//\"");
			else if (config_sandbox_own(c->sys_paths[i]))
				return yerr(y, u, e,
				    "worker.system_paths: %s: the sandbox "
				    "makes /, /dev, /proc, /tmp, /skill, "
				    "/work and /data itself",
				    c->sys_paths[i]);
	}
	if ((u = ymap_get(y, n, "library_paths")) != NULL &&
	    config_lib_paths(y, u, c, e) == -1)
		return -1;
	if ((u = ymap_get(y, n, "uids")) == NULL)
		return 0;
	if (u->type != YNODE_SEQ || u->n != 2)
		return yerr(y, u, e, "worker.uids must be [first, last]");
	if (yuint(y, u->items[0], 1, 4294967294U, &first, e) ||
	    yuint(y, u->items[1], 1, 4294967294U, &last, e))
		return -1;
	if (first > last || last - first > 65535)
		return yerr(y, u, e,
		    "worker.uids: first must be <= last, "
		    "at most 65536 uids");
	c->worker_uid_first = (uint32_t)first;
	c->worker_uid_last = (uint32_t)last;
	return 0;
}

const char *const audit_flush_names[] = {
    "none", "incremental", "data", "sync", NULL};
const char *const audit_max_action_names[] = {"rotate", "keep_logs", NULL};
const char *const audit_fail_action_names[] = {
    "suspend", "rotate", "halt", NULL};

int
config_keyword(const char *const *names, const char *s)
{
	int i;

	for (i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

void
audit_settings_default(struct audit_settings *a)
{
	a->flush = AUDIT_FLUSH_DATA;
	a->freq = 50;
	a->max_log_file = 8 * 1024 * 1024;
	a->max_log_file_action = AUDIT_MAX_ROTATE;
	a->num_logs = 5;
	a->disk_full_action = AUDIT_FAIL_SUSPEND;
	a->disk_error_action = AUDIT_FAIL_SUSPEND;
}

int
audit_size_parse(const char *s, uint64_t *bytes)
{
	uint64_t v, unit = 1024 * 1024;
	size_t len = strlen(s);
	char num[24];

	if (len == 0 || len >= sizeof(num))
		return -1;
	memcpy(num, s, len + 1);
	if (num[len - 1] == 'K' || num[len - 1] == 'M') {
		unit = num[len - 1] == 'K' ? 1024 : 1024 * 1024;
		num[len - 1] = '\0';
	}
	if (parse_uint(num, 0, AUDIT_MAX_LOG_FILE_MAX / unit, &v) == -1)
		return -1;
	*bytes = v * unit;
	return 0;
}

/* One keyword setting: its value must be one of names. */
static int
config_audit_keyword(struct ydoc *y, struct ynode *n, const char *key,
    const char *const *names, int *out, struct error *e)
{
	char list[128];
	size_t off = 0;
	const char *s;
	int i;

	if (yscalar(y, n, &s, e) == -1)
		return -1;
	if ((i = config_keyword(names, s)) >= 0) {
		*out = i;
		return 0;
	}
	list[0] = '\0';
	for (i = 0; names[i] != NULL && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
		    i ? ", " : "", names[i]);
	return yerr(y, n, e, "audit.%s must be one of: %s", key, list);
}

static int
config_audit_size(
    struct ydoc *y, struct ynode *n, uint64_t *out, struct error *e)
{
	const char *s;

	if (yscalar(y, n, &s, e) == -1)
		return -1;
	if (audit_size_parse(s, out) == -1 || (*out != 0 && *out < 4096))
		return yerr(y, n, e,
		    "audit.max_log_file must be a whole "
		    "number of MiB, or of KiB with a K suffix (at least 4K), "
		    "or 0 for no limit");
	return 0;
}

/* The audit block: path and the Linux auditd-named durability keys. */
static int
config_audit(struct ydoc *y, struct ynode *n, const char *base,
    struct config *c, struct error *e)
{
	static const char *const keys[] = {"path", "flush", "freq",
	    "max_log_file", "max_log_file_action", "num_logs",
	    "disk_full_action", "disk_error_action", NULL};
	struct audit_settings *a = &c->audit;
	int v[4] = {(int)a->flush, (int)a->max_log_file_action,
	    (int)a->disk_full_action, (int)a->disk_error_action};
	struct ynode *p;

	if (yexpect(y, n, YNODE_MAP, "audit", e) || ymap_only(y, n, keys, e))
		return -1;
	if (((p = ymap_get(y, n, "path")) &&
	        config_path(y, p, base, &c->audit_path, e)) ||
	    ((p = ymap_get(y, n, "flush")) &&
	        config_audit_keyword(
	            y, p, "flush", audit_flush_names, &v[0], e)) ||
	    ((p = ymap_get(y, n, "freq")) &&
	        yuint(y, p, 1, AUDIT_FREQ_MAX, &a->freq, e)) ||
	    ((p = ymap_get(y, n, "max_log_file")) &&
	        config_audit_size(y, p, &a->max_log_file, e)) ||
	    ((p = ymap_get(y, n, "max_log_file_action")) &&
	        config_audit_keyword(y, p, "max_log_file_action",
	            audit_max_action_names, &v[1], e)) ||
	    ((p = ymap_get(y, n, "num_logs")) &&
	        yuint(y, p, 2, AUDIT_NUM_LOGS_MAX, &a->num_logs, e)) ||
	    ((p = ymap_get(y, n, "disk_full_action")) &&
	        config_audit_keyword(y, p, "disk_full_action",
	            audit_fail_action_names, &v[2], e)) ||
	    ((p = ymap_get(y, n, "disk_error_action")) &&
	        config_audit_keyword(y, p, "disk_error_action",
	            audit_fail_action_names, &v[3], e)))
		return -1;
	a->flush = (enum audit_flush)v[0];
	a->max_log_file_action = (enum audit_max_action)v[1];
	a->disk_full_action = (enum audit_fail_action)v[2];
	a->disk_error_action = (enum audit_fail_action)v[3];
	return 0;
}

static int
config_skills_dirs(struct ydoc *y, struct ynode *n, const char *base,
    struct config *c, struct error *e)
{
	char **v;
	size_t i, num;

	if (ystrlist(y, n, 64, &v, &num, e) == -1)
		return -1;
	c->skills_dirs = xcalloc(num + 1, sizeof(char *));
	for (i = 0; i < num; i++) {
		c->skills_dirs[i] = config_abspath(base, v[i]);
		free(v[i]);
	}
	free(v);
	c->nskills_dirs = num;
	return 0;
}

static int
config_users(struct ydoc *y, struct ynode *n, struct config *c, struct error *e)
{
	static const char *const keys[] = {
	    "broker", "policyd", "auditd", "netproxy", NULL};
	struct ynode *u;
	const char *s;
	int i;

	if (yexpect(y, n, YNODE_MAP, "users", e) || ymap_only(y, n, keys, e))
		return -1;
	for (i = 0; i < USER__COUNT; i++) {
		if ((u = ymap_get(y, n, config_user_keys[i])) == NULL)
			continue;
		if (yscalar(y, u, &s, e) == -1)
			return -1;
		if (*s == '\0' || strlen(s) > 32)
			return yerr(y, u, e, "a user name of 1..32 bytes");
		free(c->users[i]);
		c->users[i] = xstrdup(s);
	}
	return 0;
}

uint64_t
config_total_memory_mb(const struct config *c)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (c->total_memory_mb != 0 || pages <= 0 || size <= 0)
		return c->total_memory_mb ? c->total_memory_mb : 1024;
	return (uint64_t)pages / 2 * (uint64_t)size >> 20;
}

uint64_t
config_nworkers(const struct config *c)
{
	uint64_t n = (uint64_t)c->worker_uid_last - c->worker_uid_first + 1;

	return n > CONFIG_WORKERS_MAX ? CONFIG_WORKERS_MAX : n;
}

/*
 * Session work dirs are tmpfs that stay charged to the daemon's memory
 * between calls: together they may hold at most half of the memory for
 * all calls, so sessions kept full cannot starve the calls themselves.
 */
static void
config_sessions_fit(struct config *c)
{
	uint64_t fit = config_total_memory_mb(c) / 2 / c->work_mb;

	if (fit == 0)
		fit = 1;
	if (c->max_sessions > fit)
		c->max_sessions = fit;
}

/*
 * One user's share never exceeds the whole: an unset per_uid bound is
 * its default or the global bound, whichever is smaller; a set one
 * above the global bound is an error.
 */
static int
config_per_uid_fill(
    struct ydoc *y, struct ynode *r, struct config *c, struct error *e)
{
	struct {
		uint64_t *v, def, global;
		const char *k, *gk;
	} f[] = {
	    {&c->per_uid.clients, 16, c->max_clients, "clients", "max_clients"},
	    {&c->per_uid.calls, 128, UINT64_MAX, "calls", ""},
	    {&c->per_uid.sessions, 16, c->max_sessions, "sessions",
	        "worker.max_sessions"},
	    {&c->per_uid.workers, 8, config_nworkers(c), "workers",
	        "the workers at once (worker.uids)"},
	};
	size_t i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (*f[i].v == 0)
			*f[i].v =
			    f[i].def < f[i].global ? f[i].def : f[i].global;
		else if (*f[i].v > f[i].global)
			return yerr(y, r, e,
			    "per_uid.%s (%llu) exceeds %s (%llu)", f[i].k,
			    (unsigned long long)*f[i].v, f[i].gk,
			    (unsigned long long)f[i].global);
	return 0;
}

/* netproxy: the egress proxy's resolver file and its bounds. */
static int
config_netproxy(struct ydoc *y, struct ynode *n, const char *base,
    struct netproxy_settings *s, struct error *e)
{
	static const char *const keys[] = {"hosts_file", "max_connections",
	    "max_total_connections", "max_bytes", "connect_timeout_s",
	    "header_timeout_s", "idle_s", NULL};
	struct ynode *u;

	if (yexpect(y, n, YNODE_MAP, "netproxy", e) || ymap_only(y, n, keys, e))
		return -1;
	if ((u = ymap_get(y, n, "hosts_file")) != NULL) {
		free(s->hosts_file);
		s->hosts_file = NULL;
		if (config_path(y, u, base, &s->hosts_file, e))
			return -1;
	}
	if (((u = ymap_get(y, n, "max_connections")) != NULL &&
	        yuint(y, u, 1, 4096, &s->max_connections, e)) ||
	    ((u = ymap_get(y, n, "max_total_connections")) != NULL &&
	        yuint(y, u, 1, 65536, &s->max_total_connections, e)) ||
	    ((u = ymap_get(y, n, "max_bytes")) != NULL &&
	        yuint(y, u, 1024, 1ULL << 40, &s->max_bytes, e)) ||
	    ((u = ymap_get(y, n, "connect_timeout_s")) != NULL &&
	        yuint(y, u, 1, 600, &s->connect_timeout_s, e)) ||
	    ((u = ymap_get(y, n, "header_timeout_s")) != NULL &&
	        yuint(y, u, 1, 600, &s->header_timeout_s, e)) ||
	    ((u = ymap_get(y, n, "idle_s")) != NULL &&
	        yuint(y, u, 1, 86400, &s->idle_s, e)))
		return -1;
	if (s->max_connections > s->max_total_connections)
		return yerr(y, n, e,
		    "netproxy.max_connections (%llu) exceeds "
		    "netproxy.max_total_connections (%llu)",
		    (unsigned long long)s->max_connections,
		    (unsigned long long)s->max_total_connections);
	return 0;
}

/* What runs an entry point without "#!", by its extension. */
static const char *const default_interps[][2] = {{".py", "python3"},
    {".sh", "sh"}, {".bash", "bash"}, {".js", "node"}, {".mjs", "node"},
    {".cjs", "node"}, {".rb", "ruby"}, {".pl", "perl"}, {NULL, NULL}};

/* Set ext's interpreter (prog NULL: none), keeping the table's order. */
static void
config_interp_set(struct config *c, const char *ext, const char *prog)
{
	size_t i;

	for (i = 0; i < c->ninterps && strcmp(c->interp_exts[i], ext) != 0; i++)
		;
	if (i < c->ninterps) {
		free(c->interp_progs[i]);
		if (prog != NULL) {
			c->interp_progs[i] = xstrdup(prog);
			return;
		}
		free(c->interp_exts[i]);
		c->ninterps--;
		memmove(&c->interp_exts[i], &c->interp_exts[i + 1],
		    (c->ninterps - i) * sizeof(char *));
		memmove(&c->interp_progs[i], &c->interp_progs[i + 1],
		    (c->ninterps - i) * sizeof(char *));
		return;
	}
	if (prog == NULL)
		return;
	c->interp_exts =
	    xreallocarray(c->interp_exts, c->ninterps + 2, sizeof(char *));
	c->interp_progs =
	    xreallocarray(c->interp_progs, c->ninterps + 2, sizeof(char *));
	c->interp_exts[c->ninterps] = xstrdup(ext);
	c->interp_progs[c->ninterps++] = xstrdup(prog);
}

/*
 * interpreters: {".py": python3, ".x": /opt/bin/x, ".sh": ""}: each
 * entry sets or ("") removes one of the defaults. An extension is "."
 * and 1..15 letters or digits; a program a name or an absolute path.
 */
static int
config_interpreters(
    struct ydoc *y, struct ynode *n, struct config *c, struct error *e)
{
	const char *ext, *prog;
	size_t i, j;

	if (yexpect(y, n, YNODE_MAP, "interpreters", e))
		return -1;
	for (i = 0; i < n->n; i++) {
		if (yscalar(y, n->pairs[i].key, &ext, e) ||
		    yscalar(y, n->pairs[i].value, &prog, e))
			return -1;
		for (j = 1; ext[j] != '\0' && isalnum((unsigned char)ext[j]);
		     j++)
			;
		if (ext[0] != '.' || j < 2 || j > 16 || ext[j] != '\0')
			return yerr(y, n->pairs[i].key, e,
			    "interpreters: \"%s\" is no extension: \".\" and "
			    "1..15 letters or digits, as \".py\"",
			    ext);
		if (*prog != '\0' && !ident_valid(prog, 255) &&
		    (prog[0] != '/' || path_has_dot(prog) ||
		        strstr(prog, "//") != NULL || strlen(prog) > 1024))
			return yerr(y, n->pairs[i].value, e,
			    "interpreters %s: a program name, an absolute "
			    "path without \".\" or \"..\", or \"\" for none",
			    ext);
		config_interp_set(c, ext, *prog != '\0' ? prog : NULL);
		if (c->ninterps > CONFIG_INTERPS_MAX)
			return yerr(y, n, e, "interpreters: at most %d",
			    CONFIG_INTERPS_MAX);
	}
	return 0;
}

static int
config_parse(
    struct ydoc *y, const char *base, struct config *c, struct error *e)
{
	static const char *const keys[] = {"socket", "pidfile", "skills_dirs",
	    "policy_dir", "state_dir", "audit", "users", "worker", "limits",
	    "max_frame_bytes", "max_clients", "per_uid", "clients", "netproxy",
	    "interpreters", NULL};
	struct ynode *r = ydoc_root(y), *n;

	if (yexpect(y, r, YNODE_MAP, "the config", e) ||
	    ymap_only(y, r, keys, e))
		return -1;
	if (((n = ymap_get(y, r, "socket")) &&
	        config_path(y, n, base, &c->socket, e)) ||
	    ((n = ymap_get(y, r, "pidfile")) &&
	        config_path(y, n, base, &c->pidfile, e)) ||
	    ((n = ymap_get(y, r, "policy_dir")) &&
	        config_path(y, n, base, &c->policy_dir, e)) ||
	    ((n = ymap_get(y, r, "state_dir")) &&
	        config_path(y, n, base, &c->state_dir, e)) ||
	    ((n = ymap_get(y, r, "skills_dirs")) &&
	        config_skills_dirs(y, n, base, c, e)) ||
	    ((n = ymap_get(y, r, "audit")) && config_audit(y, n, base, c, e)) ||
	    ((n = ymap_get(y, r, "worker")) && config_worker(y, n, c, e)) ||
	    ((n = ymap_get(y, r, "limits")) &&
	        config_limits(y, n, &c->limits, e)) ||
	    ((n = ymap_get(y, r, "max_frame_bytes")) &&
	        yuint(y, n, 1024, 1024 * 1024, &c->max_frame_bytes, e)) ||
	    ((n = ymap_get(y, r, "max_clients")) &&
	        yuint(y, n, 1, 65536, &c->max_clients, e)) ||
	    ((n = ymap_get(y, r, "per_uid")) &&
	        config_per_uid(y, n, &c->per_uid, e)) ||
	    ((n = ymap_get(y, r, "clients")) &&
	        config_clients(y, n, &c->clients, e)) ||
	    ((n = ymap_get(y, r, "netproxy")) &&
	        config_netproxy(y, n, base, &c->netproxy, e)) ||
	    ((n = ymap_get(y, r, "interpreters")) &&
	        config_interpreters(y, n, c, e)))
		return -1;
	if ((n = ymap_get(y, r, "users")) != NULL &&
	    config_users(y, n, c, e) == -1)
		return -1;
	config_sessions_fit(c);
	return config_per_uid_fill(y, r, c, e);
}

/* What a skill needs of the host to run programs, and nothing secret. */
static const char *const default_sys_paths[] = {"/usr", "/bin", "/sbin", "/lib",
    "/lib64", "/lib32", "/libx32", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
    "/etc/nsswitch.conf", "/etc/hosts", "/etc/resolv.conf", "/etc/ssl/certs",
    NULL};

/*
 * Where shared objects are mapped from, as globs the worker expands:
 * the loader's multiarch and biarch directories, /usr/local/lib, and
 * Python's C extension modules. Every other place is noexec.
 */
static const char *const default_lib_paths[] = {"/usr/lib/*-linux-gnu*",
    "/usr/lib64", "/usr/lib32", "/usr/libx32", "/usr/local/lib",
    "/usr/lib/python3*/lib-dynload", "/usr/lib/python3/dist-packages", NULL};

/* Defaults that need the config's directory. */
void
config_defaults(struct config *c, const char *base)
{
	memset(c, 0, sizeof(*c));
	c->socket = config_abspath(base, "skillbroker.sock");
	c->policy_dir = config_abspath(base, "policy.d");
	c->state_dir = config_abspath(base, "state");
	for (int i = 0; i < USER__COUNT; i++)
		c->users[i] = xstrdup(config_user_defaults[i]);
	c->worker_uid_first = 61000;
	c->worker_uid_last = 61099;
	c->max_frame_bytes = 1024 * 1024;
	c->max_clients = 128;
	/* per_uid: 0 until parsed, then a default (config_per_uid_fill) */
	c->clients = (struct client_bounds){600, 10, 30, 4 * 1024 * 1024, 60};
	c->limits = default_limits;
	audit_settings_default(&c->audit);
	c->worker_tmp_mb = 64;
	c->worker_pool = 2;
	c->work_mb = 64;
	c->data_mb = 64;
	c->max_sessions = 128;
	c->session_idle_s = 3600;
	c->worker_network = NET_PROXY;
	c->netproxy = (struct netproxy_settings){
	    NULL, 16, 1024, 64ULL * 1024 * 1024, 10, 10, 300};
	for (c->nsys_paths = 0; default_sys_paths[c->nsys_paths] != NULL;
	     c->nsys_paths++)
		;
	c->sys_paths = xcalloc(c->nsys_paths + 1, sizeof(char *));
	for (size_t i = 0; i < c->nsys_paths; i++)
		c->sys_paths[i] = xstrdup(default_sys_paths[i]);
	for (c->nlib_paths = 0; default_lib_paths[c->nlib_paths] != NULL;
	     c->nlib_paths++)
		;
	c->lib_paths = xcalloc(c->nlib_paths + 1, sizeof(char *));
	for (size_t i = 0; i < c->nlib_paths; i++)
		c->lib_paths[i] = xstrdup(default_lib_paths[i]);
	for (size_t i = 0; default_interps[i][0] != NULL; i++)
		config_interp_set(
		    c, default_interps[i][0], default_interps[i][1]);
}

int
config_load(struct config *c, const char *path, struct error *e)
{
	struct ydoc y;
	char *abs, *dir, *tmp;
	int r;

	if ((abs = realpath(path, NULL)) == NULL)
		return error_set(
		    e, ERR_BAD_REQUEST, "%s: %s", path, strerror(errno));
	tmp = xstrdup(abs);
	dir = xstrdup(dirname(tmp));
	free(tmp);
	config_defaults(c, dir);
	c->path = abs;
	r = ydoc_load_file(&y, abs, e);
	if (r == 0)
		r = config_parse(&y, dir, c, e);
	ydoc_free(&y);
	if (r == 0 && c->audit_path == NULL)
		xasprintf(&c->audit_path, "%s/audit.jsonl", c->state_dir);
	if (r == 0)
		xasprintf(&c->audit_head, "%s/audit.head", c->state_dir);
	if (r == 0)
		xasprintf(&c->data_dir, "%s/data", c->state_dir);
	if (r == 0 && c->nskills_dirs == 0) {
		c->skills_dirs = xcalloc(2, sizeof(char *));
		c->skills_dirs[0] = config_abspath(dir, "skills");
		c->nskills_dirs = 1;
	}
	if (r == 0 && strlen(c->socket) >= 108)
		r = error_set(e, ERR_BAD_REQUEST,
		    "%s: socket path longer than 107 bytes", abs);
	free(dir);
	return r;
}

const char *const config_user_keys[USER__COUNT] = {
    "broker", "policyd", "auditd", "netproxy"};
const char *const config_user_defaults[USER__COUNT] = {
    "_sb-broker", "_sb-policyd", "_sb-auditd", "_sb-netproxy"};
const char *const config_net_names[NET__COUNT + 1] = {
    "none", "proxy", "host", NULL};

/* One role's user: a name, a number, or a default's fallback uid. */
static int
config_resolve_one(struct config *c, int i, struct error *e)
{
	struct passwd *pw;
	uint64_t id;

	if ((pw = getpwnam(c->users[i])) != NULL) {
		c->uid[i] = pw->pw_uid;
		c->gid[i] = pw->pw_gid;
	} else if (parse_uint(c->users[i], 1, 4294967294U, &id) == 0) {
		c->uid[i] = (uid_t)id;
		c->gid[i] = (gid_t)id;
	} else if (strcmp(c->users[i], config_user_defaults[i]) == 0) {
		c->uid[i] = c->gid[i] = CONFIG_FALLBACK_UID + (uid_t)i;
		log_info("user %s does not exist: the %s runs as uid %u (make "
		         "install creates the user)",
		    c->users[i], config_user_keys[i], (unsigned)c->uid[i]);
	} else
		return error_set(e, ERR_BAD_REQUEST,
		    "users.%s \"%s\": no such user", config_user_keys[i],
		    c->users[i]);
	if (c->uid[i] == 0 || c->gid[i] == 0)
		return error_set(e, ERR_BAD_REQUEST,
		    "users.%s must not be root", config_user_keys[i]);
	if (c->uid[i] >= c->worker_uid_first && c->uid[i] <= c->worker_uid_last)
		return error_set(e, ERR_BAD_REQUEST,
		    "users.%s: uid %u lies inside worker.uids",
		    config_user_keys[i], (unsigned)c->uid[i]);
	return 0;
}

int
config_resolve_users(struct config *c, struct error *e)
{
	int i, j;

	for (i = 0; i < USER__COUNT; i++)
		if (config_resolve_one(c, i, e) == -1)
			return -1;
	/* A role that shares a uid could reach the other's files. */
	for (i = 0; i < USER__COUNT; i++)
		for (j = i + 1; j < USER__COUNT; j++)
			if (c->uid[i] == c->uid[j] || c->gid[i] == c->gid[j])
				return error_set(e, ERR_BAD_REQUEST,
				    "users.%s and users.%s share a uid or a "
				    "gid: each role needs its own",
				    config_user_keys[i], config_user_keys[j]);
	return 0;
}

void
config_free(struct config *c)
{
	size_t i;

	free(c->path);
	free(c->socket);
	free(c->pidfile);
	for (i = 0; i < c->nskills_dirs; i++)
		free(c->skills_dirs[i]);
	free(c->skills_dirs);
	free(c->policy_dir);
	free(c->state_dir);
	free(c->audit_path);
	free(c->audit_head);
	free(c->data_dir);
	for (i = 0; i < USER__COUNT; i++)
		free(c->users[i]);
	strarr_free(c->sys_paths, c->nsys_paths);
	free(c->netproxy.hosts_file);
	strarr_free(c->lib_paths, c->nlib_paths);
	strarr_free(c->interp_exts, c->ninterps);
	strarr_free(c->interp_progs, c->ninterps);
	memset(c, 0, sizeof(*c));
}

/*
 * The directories the daemon needs, with owners and modes: state_dir
 * and its empty/ (the broker's chroot), root/ (the workers' mount
 * point) and data/, root's; the audit log's directory, auditd's, which
 * must be its own (never a shared one such as /var/log); the socket's.
 */
int
config_make_dirs(const struct config *c, struct error *e)
{
	static const struct {
		const char *sub;
		mode_t mode;
	} dirs[] = {
	    {"", 0755}, {"/empty", 0755}, {"/root", 0755}, {"/data", 0700}};
	char *p, *tmp = NULL;
	size_t i;
	int r = 0;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && r == 0; i++) {
		xasprintf(&p, "%s%s", c->state_dir, dirs[i].sub);
		if (mkdir_p(p, dirs[i].mode) == -1 || chown(p, 0, 0) == -1 ||
		    chmod(p, dirs[i].mode) == -1)
			r = error_set(
			    e, ERR_INTERNAL, "%s: %s", p, strerror(errno));
		free(p);
	}
	tmp = xstrdup(c->audit_path);
	p = dirname(tmp);
	if (r == 0 && !os_dir_dedicated(p, c->uid[USER_AUDITD]))
		r = error_set(e, ERR_BAD_REQUEST,
		    "the directory of audit.path, %s, holds other files: give "
		    "the audit log a directory of its own (auditd owns and "
		    "chroots into it)",
		    p);
	else if (r == 0 &&
	         (mkdir_p(p, 0750) == -1 ||
	             chown(p, c->uid[USER_AUDITD], c->gid[USER_AUDITD]) == -1 ||
	             chmod(p, 0750) == -1))
		r = error_set(e, ERR_INTERNAL, "%s: %s", p, strerror(errno));
	free(tmp);
	tmp = xstrdup(c->socket);
	if (r == 0 && mkdir_p(dirname(tmp), 0755) == -1)
		r = error_set(e, ERR_INTERNAL, "socket dir for %s: %s",
		    c->socket, strerror(errno));
	free(tmp);
	return r;
}

char **
config_protected(const struct config *c, size_t *n)
{
	char **v = xcalloc(c->nskills_dirs + 6, sizeof(char *));
	const char *files[] = {c->socket, c->audit_path, c->pidfile};
	size_t i;
	char *slash;

	*n = 0;
	v[(*n)++] = xstrdup(c->state_dir);
	v[(*n)++] = xstrdup(c->policy_dir);
	for (i = 0; i < 3; i++) { /* a file's directory */
		if (files[i] == NULL)
			continue;
		v[*n] = xstrdup(files[i]);
		if ((slash = strrchr(v[*n], '/')) != NULL && slash != v[*n])
			*slash = '\0';
		(*n)++;
	}
	for (i = 0; i < c->nskills_dirs; i++)
		v[(*n)++] = xstrdup(c->skills_dirs[i]);
	return v;
}
