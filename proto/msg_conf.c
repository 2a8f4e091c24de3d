/*
 * msg_conf.c: the settings the master sends each child at start
 * (CONF_BROKER, CONF_POLICYD, CONF_AUDITD). No child reads the config
 * file; each learns only what its role needs, with the bounds the
 * config loader enforces checked again here.
 */
#include "msg.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

#define ID_MAX 4294967294ULL

/* The uid and gid a role drops to: never root. */
static int
ids_dec(const msgpack_object *o, uint64_t *uid, uint64_t *gid, struct error *e)
{
	if (mp_uint(o, "uid", 1, ID_MAX, uid, e) ||
	    mp_uint(o, "gid", 1, ID_MAX, gid, e))
		return -1;
	if (*uid == 0 || *gid == 0)
		return error_set(e, ERR_BAD_REQUEST, "field \"%s\" is root",
		    *uid == 0 ? "uid" : "gid");
	return 0;
}

/* An absolute path. */
static int
abspath_dec(const msgpack_object *o, const char *k, char **out, struct error *e)
{
	if (mp_str(o, k, 1, PATH_MAX_LEN, out, e) == -1)
		return -1;
	if ((*out)[0] != '/')
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" must be absolute", k);
	return 0;
}

void
conf_broker_enc(struct mp_enc *m, const struct conf_broker *c)
{
	msg_begin(m, MSG_CONF_BROKER);
	enc_kuint(m, "uid", c->uid);
	enc_kuint(m, "gid", c->gid);
	enc_kstr(m, "root", c->root);
	enc_kuint(m, "max_frame", c->max_frame);
	enc_kuint(m, "max_clients", c->max_clients);
	enc_kuint(m, "max_sessions", c->max_sessions);
	enc_kuint(m, "session_idle_s", c->session_idle_s);
	enc_kuint(m, "workers", c->workers);
	enc_kuint(m, "max_timeout_ms", c->max_timeout_ms);
	enc_kuint(m, "per_uid_clients", c->per_uid.clients);
	enc_kuint(m, "per_uid_calls", c->per_uid.calls);
	enc_kuint(m, "per_uid_sessions", c->per_uid.sessions);
	enc_kuint(m, "per_uid_workers", c->per_uid.workers);
	enc_kuint(m, "idle_s", c->clients.idle_s);
	enc_kuint(m, "frame_s", c->clients.frame_s);
	enc_kuint(m, "stall_s", c->clients.stall_s);
	enc_kuint(m, "output_bytes", c->clients.output_bytes);
	enc_kuint(m, "approval_s", c->clients.approval_s);
	enc_kuint(m, "call_output", c->call_output);
	msg_end(m);
}

int
conf_broker_dec(const struct mp_doc *d, struct conf_broker *c, struct error *e)
{
	static const char *const keys[] = {"t", "uid", "gid", "root",
	    "max_frame", "max_clients", "max_sessions", "session_idle_s",
	    "workers", "max_timeout_ms", "per_uid_clients", "per_uid_calls",
	    "per_uid_sessions", "per_uid_workers", "idle_s", "frame_s",
	    "stall_s", "output_bytes", "approval_s", "call_output", NULL};
	struct quota *q = &c->per_uid;
	struct client_bounds *b = &c->clients;
	const msgpack_object *o = d->root;

	memset(c, 0, sizeof(*c));
	if (mp_only_keys(o, keys, e) || ids_dec(o, &c->uid, &c->gid, e) ||
	    abspath_dec(o, "root", &c->root, e) ||
	    mp_uint(o, "max_frame", 1, 1024 * 1024, &c->max_frame, e) ||
	    mp_uint(o, "max_clients", 1, 65536, &c->max_clients, e) ||
	    mp_uint(o, "max_sessions", 1, 65536, &c->max_sessions, e) ||
	    mp_uint(
	        o, "session_idle_s", 1, 86400 * 365, &c->session_idle_s, e) ||
	    mp_uint(o, "workers", 1, CONFIG_WORKERS_MAX, &c->workers, e) ||
	    mp_uint(o, "max_timeout_ms", 1, 86400000, &c->max_timeout_ms, e) ||
	    mp_uint(o, "per_uid_clients", 1, 65536, &q->clients, e) ||
	    mp_uint(o, "per_uid_calls", 1, 65536, &q->calls, e) ||
	    mp_uint(o, "per_uid_sessions", 1, 65536, &q->sessions, e) ||
	    mp_uint(o, "per_uid_workers", 1, 65536, &q->workers, e) ||
	    mp_uint(o, "idle_s", 1, 86400 * 365, &b->idle_s, e) ||
	    mp_uint(o, "frame_s", 1, 3600, &b->frame_s, e) ||
	    mp_uint(o, "stall_s", 1, 3600, &b->stall_s, e) ||
	    mp_uint(o, "output_bytes", 65536, 1024 * 1024 * 1024,
	        &b->output_bytes, e) ||
	    mp_uint(o, "approval_s", 1, 3600, &b->approval_s, e) ||
	    mp_uint(
	        o, "call_output", 1, 64 * 1024 * 1024, &c->call_output, e)) {
		conf_broker_free(c);
		return -1;
	}
	/* One user's share within the whole, as the config loader says. */
	if (c->max_frame < 1024 || c->max_clients == 0 ||
	    c->max_sessions == 0 || c->session_idle_s == 0 || c->workers == 0 ||
	    q->clients == 0 || q->calls == 0 || q->sessions == 0 ||
	    q->workers == 0 || b->idle_s == 0 || b->frame_s == 0 ||
	    b->stall_s == 0 || b->output_bytes < 65536 || b->approval_s == 0 ||
	    q->clients > c->max_clients || q->sessions > c->max_sessions ||
	    q->workers > c->workers) {
		conf_broker_free(c);
		return error_set(
		    e, ERR_BAD_REQUEST, "broker settings out of range");
	}
	return 0;
}

void
conf_broker_free(struct conf_broker *c)
{
	free(c->root);
	memset(c, 0, sizeof(*c));
}

/* The limits block, with the config loader's bounds. */
static const struct {
	const char *k;
	size_t off;
	uint64_t min, max;
} limit_fields[] = {
    {"timeout_ms", offsetof(struct limits, timeout_ms), 1, 86400000},
    {"max_timeout_ms", offsetof(struct limits, max_timeout_ms), 1, 86400000},
    {"output_bytes", offsetof(struct limits, output_bytes), 1,
        64 * 1024 * 1024},
    {"memory_mb", offsetof(struct limits, memory_mb), 8, 1024 * 1024},
    {"pids", offsetof(struct limits, pids), 1, 65536},
    {"fsize_mb", offsetof(struct limits, fsize_mb), 1, 1024 * 1024},
    {"nofile", offsetof(struct limits, nofile), 8, 65536},
};
#define NLIMIT_FIELDS (sizeof(limit_fields) / sizeof(limit_fields[0]))

static void
limits_enc(struct mp_enc *m, const struct limits *l)
{
	size_t i;

	enc_key(m, "limits");
	enc_map_open(m);
	for (i = 0; i < NLIMIT_FIELDS; i++)
		enc_kuint(m, limit_fields[i].k,
		    *(const uint64_t *)((const char *)l + limit_fields[i].off));
	enc_map_close(m);
}

static int
limits_dec(const msgpack_object *o, struct limits *l, struct error *e)
{
	const char *keys[NLIMIT_FIELDS + 1];
	const msgpack_object *lm = NULL;
	size_t i;

	for (i = 0; i < NLIMIT_FIELDS; i++)
		keys[i] = limit_fields[i].k;
	keys[i] = NULL;
	if (mp_submap(o, "limits", 1, &lm, e) || mp_only_keys(lm, keys, e))
		return -1;
	for (i = 0; i < NLIMIT_FIELDS; i++)
		if (mp_uint(lm, limit_fields[i].k, 1, limit_fields[i].max,
		        (uint64_t *)((char *)l + limit_fields[i].off), e))
			return -1;
	for (i = 0; i < NLIMIT_FIELDS; i++)
		if (*(uint64_t *)((char *)l + limit_fields[i].off) <
		    limit_fields[i].min)
			return error_set(e, ERR_BAD_REQUEST,
			    "limit \"%s\" below %llu", limit_fields[i].k,
			    (unsigned long long)limit_fields[i].min);
	if (l->timeout_ms > l->max_timeout_ms)
		return error_set(
		    e, ERR_BAD_REQUEST, "timeout_ms exceeds max_timeout_ms");
	return 0;
}

void
conf_policyd_enc(struct mp_enc *m, const struct conf_policyd *c)
{
	msg_begin(m, MSG_CONF_POLICYD);
	enc_kuint(m, "uid", c->uid);
	enc_kuint(m, "gid", c->gid);
	enc_kstrarr(m, "skills_dirs", c->skills_dirs, c->nskills_dirs);
	enc_kstr(m, "policy_dir", c->policy_dir);
	enc_kstr(m, "net", config_net_names[c->net]);
	limits_enc(m, &c->limits);
	enc_kstrarr(m, "protect", c->protect, c->nprotect);
	enc_kstrarr(m, "sys_paths", c->sys_paths, c->nsys_paths);
	enc_kstrarr(m, "interp_exts", c->interp_exts, c->ninterps);
	enc_kstrarr(m, "interp_progs", c->interp_progs, c->ninterps);
	msg_end(m);
}

int
conf_policyd_dec(
    const struct mp_doc *d, struct conf_policyd *c, struct error *e)
{
	static const char *const keys[] = {"t", "uid", "gid", "skills_dirs",
	    "policy_dir", "net", "limits", "protect", "sys_paths",
	    "interp_exts", "interp_progs", NULL};
	const msgpack_object *o = d->root;
	size_t i, nprogs;
	int net;

	memset(c, 0, sizeof(*c));
	if (mp_only_keys(o, keys, e) || ids_dec(o, &c->uid, &c->gid, e) ||
	    mp_strarr(o, "skills_dirs", 1, SKILLS_DIRS_MAX, PATH_MAX_LEN,
	        &c->skills_dirs, &c->nskills_dirs, e) ||
	    abspath_dec(o, "policy_dir", &c->policy_dir, e) ||
	    mp_keyword(o, "net", config_net_names, &net, e) ||
	    limits_dec(o, &c->limits, e) ||
	    mp_strarr(o, "protect", 1, SKILLS_DIRS_MAX + 4, PATH_MAX_LEN,
	        &c->protect, &c->nprotect, e) ||
	    mp_strarr(o, "sys_paths", 1, SYS_PATHS_MAX, PATH_MAX_LEN,
	        &c->sys_paths, &c->nsys_paths, e) ||
	    mp_strarr(o, "interp_exts", 1, CONFIG_INTERPS_MAX, 16,
	        &c->interp_exts, &c->ninterps, e) ||
	    mp_strarr(o, "interp_progs", 1, CONFIG_INTERPS_MAX, PATH_MAX_LEN,
	        &c->interp_progs, &nprogs, e))
		goto bad;
	c->net = (uint64_t)net;
	if (nprogs != c->ninterps) {
		strarr_free(c->interp_progs, nprogs);
		c->interp_progs = NULL;
		error_set(e, ERR_BAD_REQUEST,
		    "interp_exts and interp_progs differ in length");
		goto bad;
	}
	for (i = 0; i < c->nskills_dirs; i++)
		if (c->skills_dirs[i][0] != '/') {
			error_set(
			    e, ERR_BAD_REQUEST, "skills_dirs must be absolute");
			goto bad;
		}
	for (i = 0; i < c->nprotect; i++)
		if (c->protect[i][0] != '/') {
			error_set(
			    e, ERR_BAD_REQUEST, "protect must be absolute");
			goto bad;
		}
	for (i = 0; i < c->nsys_paths; i++)
		if (c->sys_paths[i][0] != '/') {
			error_set(
			    e, ERR_BAD_REQUEST, "sys_paths must be absolute");
			goto bad;
		}
	return 0;
bad:
	conf_policyd_free(c);
	return -1;
}

void
conf_policyd_free(struct conf_policyd *c)
{
	strarr_free(c->skills_dirs, c->nskills_dirs);
	strarr_free(c->protect, c->nprotect);
	strarr_free(c->sys_paths, c->nsys_paths);
	strarr_free(c->interp_exts, c->ninterps);
	strarr_free(c->interp_progs, c->ninterps);
	free(c->policy_dir);
	memset(c, 0, sizeof(*c));
}

void
conf_auditd_enc(struct mp_enc *m, const struct conf_auditd *c)
{
	const struct audit_settings *s = &c->set;

	msg_begin(m, MSG_CONF_AUDITD);
	enc_kuint(m, "uid", c->uid);
	enc_kuint(m, "gid", c->gid);
	enc_kstr(m, "path", c->path);
	enc_kstr(m, "head", c->head);
	enc_kstr(m, "flush", audit_flush_names[s->flush]);
	enc_kuint(m, "freq", s->freq);
	enc_kuint(m, "max_log_file", s->max_log_file);
	enc_kstr(m, "max_log_file_action",
	    audit_max_action_names[s->max_log_file_action]);
	enc_kuint(m, "num_logs", s->num_logs);
	enc_kstr(m, "disk_full_action",
	    audit_fail_action_names[s->disk_full_action]);
	enc_kstr(m, "disk_error_action",
	    audit_fail_action_names[s->disk_error_action]);
	msg_end(m);
}

int
conf_auditd_dec(const struct mp_doc *d, struct conf_auditd *c, struct error *e)
{
	static const char *const keys[] = {"t", "uid", "gid", "path", "head",
	    "flush", "freq", "max_log_file", "max_log_file_action", "num_logs",
	    "disk_full_action", "disk_error_action", NULL};
	const msgpack_object *o = d->root;
	struct audit_settings *s = &c->set;
	int flush, maxact, full, err;

	memset(c, 0, sizeof(*c));
	if (mp_only_keys(o, keys, e) || ids_dec(o, &c->uid, &c->gid, e) ||
	    abspath_dec(o, "path", &c->path, e) ||
	    abspath_dec(o, "head", &c->head, e) ||
	    mp_keyword(o, "flush", audit_flush_names, &flush, e) ||
	    mp_uint(o, "freq", 1, AUDIT_FREQ_MAX, &s->freq, e) ||
	    mp_uint(o, "max_log_file", 1, AUDIT_MAX_LOG_FILE_MAX,
	        &s->max_log_file, e) ||
	    mp_keyword(
	        o, "max_log_file_action", audit_max_action_names, &maxact, e) ||
	    mp_uint(o, "num_logs", 1, AUDIT_NUM_LOGS_MAX, &s->num_logs, e) ||
	    mp_keyword(
	        o, "disk_full_action", audit_fail_action_names, &full, e) ||
	    mp_keyword(
	        o, "disk_error_action", audit_fail_action_names, &err, e)) {
		conf_auditd_free(c);
		return -1;
	}
	if (s->freq == 0 || s->num_logs < 2) {
		conf_auditd_free(c);
		return error_set(
		    e, ERR_BAD_REQUEST, "audit settings out of range");
	}
	s->flush = (enum audit_flush)flush;
	s->max_log_file_action = (enum audit_max_action)maxact;
	s->disk_full_action = (enum audit_fail_action)full;
	s->disk_error_action = (enum audit_fail_action)err;
	return 0;
}

void
conf_auditd_free(struct conf_auditd *c)
{
	free(c->path);
	free(c->head);
	memset(c, 0, sizeof(*c));
}

/*
 * Each role's settings from the daemon config: the one place that says
 * what of the config reaches which role (the broker's chroot is
 * state_dir/empty).
 */
void
conf_enc_for(struct mp_enc *m, enum msg_type t, const struct config *c)
{
	struct conf_broker cb = {c->uid[USER_BROKER], c->gid[USER_BROKER], NULL,
	    c->max_frame_bytes, c->max_clients, c->max_sessions,
	    c->session_idle_s, config_nworkers(c), c->limits.max_timeout_ms,
	    c->per_uid, c->clients, c->limits.output_bytes};
	struct conf_policyd cp = {c->uid[USER_POLICYD], c->gid[USER_POLICYD],
	    c->skills_dirs, c->nskills_dirs, c->policy_dir, c->worker_network,
	    c->limits, NULL, 0, c->sys_paths, c->nsys_paths, c->interp_exts,
	    c->interp_progs, c->ninterps};
	struct conf_auditd ca = {c->uid[USER_AUDITD], c->gid[USER_AUDITD],
	    c->audit_path, c->audit_head, c->audit};
	struct conf_netproxy cn = {
	    c->uid[USER_NETPROXY], c->gid[USER_NETPROXY], NULL, c->netproxy};

	xasprintf(&cb.root, "%s/empty", c->state_dir);
	cn.root = cb.root;
	cp.protect = config_protected(c, &cp.nprotect);
	if (t == MSG_CONF_BROKER)
		conf_broker_enc(m, &cb);
	else if (t == MSG_CONF_POLICYD)
		conf_policyd_enc(m, &cp);
	else if (t == MSG_CONF_NETPROXY)
		conf_netproxy_enc(m, &cn);
	else
		conf_auditd_enc(m, &ca);
	free(cb.root);
	strarr_free(cp.protect, cp.nprotect);
}

void
conf_netproxy_enc(struct mp_enc *m, const struct conf_netproxy *c)
{
	const struct netproxy_settings *s = &c->set;

	msg_begin(m, MSG_CONF_NETPROXY);
	enc_kuint(m, "uid", c->uid);
	enc_kuint(m, "gid", c->gid);
	enc_kstr(m, "root", c->root);
	enc_kstr(m, "hosts_file", s->hosts_file ? s->hosts_file : "");
	enc_kuint(m, "max_connections", s->max_connections);
	enc_kuint(m, "max_total_connections", s->max_total_connections);
	enc_kuint(m, "max_bytes", s->max_bytes);
	enc_kuint(m, "connect_timeout_s", s->connect_timeout_s);
	enc_kuint(m, "header_timeout_s", s->header_timeout_s);
	enc_kuint(m, "idle_s", s->idle_s);
	msg_end(m);
}

int
conf_netproxy_dec(
    const struct mp_doc *d, struct conf_netproxy *c, struct error *e)
{
	static const char *const keys[] = {"t", "uid", "gid", "root",
	    "hosts_file", "max_connections", "max_total_connections",
	    "max_bytes", "connect_timeout_s", "header_timeout_s", "idle_s",
	    NULL};
	const msgpack_object *o = d->root;
	struct netproxy_settings *s = &c->set;

	memset(c, 0, sizeof(*c));
	if (mp_only_keys(o, keys, e) || ids_dec(o, &c->uid, &c->gid, e) ||
	    abspath_dec(o, "root", &c->root, e) ||
	    mp_str(o, "hosts_file", 1, PATH_MAX_LEN, &s->hosts_file, e) ||
	    mp_uint(o, "max_connections", 1, 4096, &s->max_connections, e) ||
	    mp_uint(o, "max_total_connections", 1, 65536,
	        &s->max_total_connections, e) ||
	    mp_uint(o, "max_bytes", 1024, 1ULL << 40, &s->max_bytes, e) ||
	    mp_uint(o, "connect_timeout_s", 1, 600, &s->connect_timeout_s, e) ||
	    mp_uint(o, "header_timeout_s", 1, 600, &s->header_timeout_s, e) ||
	    mp_uint(o, "idle_s", 1, 86400, &s->idle_s, e))
		goto bad;
	if (s->max_connections == 0 || s->max_total_connections == 0 ||
	    s->max_connections > s->max_total_connections ||
	    s->max_bytes < 1024 || s->connect_timeout_s == 0 ||
	    s->header_timeout_s == 0 || s->idle_s == 0) {
		error_set(e, ERR_BAD_REQUEST, "netproxy settings out of range");
		goto bad;
	}
	if (s->hosts_file[0] == '\0') {
		free(s->hosts_file);
		s->hosts_file = NULL;
	} else if (s->hosts_file[0] != '/') {
		error_set(e, ERR_BAD_REQUEST, "hosts_file must be absolute");
		goto bad;
	}
	return 0;
bad:
	conf_netproxy_free(c);
	return -1;
}

void
conf_netproxy_free(struct conf_netproxy *c)
{
	free(c->root);
	free(c->set.hosts_file);
	memset(c, 0, sizeof(*c));
}
