/*
 * msg_grant.c: GRANT, what policyd decided may run (policyd -> master),
 * and SPEC, the same plus what only the master knows (master ->
 * worker). A GRANT that names a host field is malformed: policyd can
 * neither pick a worker uid nor widen the private root.
 */
#include "msg.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/sysfilter.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

static const char *const grant_keys[] = {"t", "grant_id", "skill", "command",
    "skill_dir", "entry", "args", "env", "fs_read", "fs_write", "network",
    "exec", "env_names", "principal_uid", "session", "timeout_ms",
    "output_bytes", "memory_mb", "pids", "fsize_mb", "nofile", "programs",
    "interpreter", "cwd", "v", NULL};
static const char *const spec_keys[] = {"t", "grant_id", "skill", "command",
    "skill_dir", "entry", "args", "env", "fs_read", "fs_write", "network",
    "exec", "env_names", "principal_uid", "session", "timeout_ms",
    "output_bytes", "memory_mb", "pids", "fsize_mb", "nofile", "programs",
    "interpreter", "cwd", "v", "worker_uid", "worker_gid", "as_mb", "net",
    NULL};

/* The fields policyd decides. */
static void
grant_fields_enc(struct mp_enc *m, const struct grant *g)
{
	int i;

	enc_kstr(m, "grant_id", g->grant_id);
	enc_kstr(m, "skill", g->skill);
	enc_kstr(m, "command", g->command);
	enc_kstr(m, "skill_dir", g->skill_dir);
	enc_kstr(m, "entry", g->entry);
	enc_kstrarr(m, "args", g->args, g->nargs);
	enc_kstrarr(m, "env", g->env, g->nenv);
	for (i = 0; i < PERM__COUNT; i++)
		enc_kstrarr(m, perm_kind_name((enum perm_kind)i), g->perm[i],
		    g->nperm[i]);
	enc_kuint(m, "principal_uid", g->principal_uid);
	enc_kstr(m, "session", g->session);
	enc_kuint(m, "timeout_ms", g->timeout_ms);
	enc_kuint(m, "output_bytes", g->output_bytes);
	enc_kuint(m, "memory_mb", g->memory_mb);
	enc_kuint(m, "pids", g->pids);
	enc_kuint(m, "fsize_mb", g->fsize_mb);
	enc_kuint(m, "nofile", g->nofile);
	enc_kstrarr(m, "programs", g->programs, g->nprograms);
	enc_kstr(m, "interpreter", g->interpreter ? g->interpreter : "");
	enc_kstr(m, "cwd", grant_cwd_names[g->cwd]);
	enc_kuint(m, "v", PROTO_VERSION);
}

static int
grant_perms_dec(const msgpack_object *o, struct grant *g, struct error *e)
{
	int i;

	for (i = 0; i < PERM__COUNT; i++)
		if (mp_strarr(o, perm_kind_name((enum perm_kind)i), 1,
		        PERM_ITEMS_MAX, 1024, &g->perm[i], &g->nperm[i], e))
			return -1;
	return 0;
}

const char *const grant_cwd_names[GRANT_CWD__COUNT + 1] = {
    "work", "skill", NULL};

/* Real paths of the host's programs: absolute, one spelling, no /skill;
 * the interpreter, if any, is one of them. */
static int
grant_programs_valid(const struct grant *g)
{
	size_t i;
	int interp = g->interpreter[0] == '\0';

	for (i = 0; i < g->nprograms; i++) {
		if (g->programs[i][0] != '/' || path_has_dot(g->programs[i]) ||
		    strstr(g->programs[i], "//") != NULL ||
		    strncmp(g->programs[i], "/skill/", 7) == 0)
			return 0;
		interp |= strcmp(g->programs[i], g->interpreter) == 0;
	}
	return interp;
}

static int
grant_fields_dec(const msgpack_object *o, struct grant *g, struct error *e)
{
	uint64_t v;
	int cwd;

	if (mp_uint(o, "v", 1, UINT32_MAX, &v, e) ||
	    mp_str(o, "grant_id", 1, GRANT_ID_LEN, &g->grant_id, e) ||
	    mp_str(o, "skill", 1, NAME_MAX_LEN, &g->skill, e) ||
	    mp_str(o, "command", 1, COMMAND_MAX_LEN, &g->command, e) ||
	    mp_str(o, "skill_dir", 1, PATH_MAX_LEN, &g->skill_dir, e) ||
	    mp_str(o, "entry", 1, PATH_MAX_LEN, &g->entry, e) ||
	    mp_strarr(
	        o, "args", 1, ARGS_MAX, ARG_MAX_LEN, &g->args, &g->nargs, e) ||
	    mp_strarr(
	        o, "env", 1, ENV_MAX, ARG_MAX_LEN, &g->env, &g->nenv, e) ||
	    grant_perms_dec(o, g, e) ||
	    mp_uint(o, "principal_uid", 1, UINT32_MAX, &g->principal_uid, e) ||
	    mp_str(o, "session", 1, SESSION_MAX_LEN, &g->session, e) ||
	    mp_uint(o, "timeout_ms", 1, 86400000, &g->timeout_ms, e) ||
	    mp_uint(
	        o, "output_bytes", 1, 64 * 1024 * 1024, &g->output_bytes, e) ||
	    mp_uint(o, "memory_mb", 1, 1024 * 1024, &g->memory_mb, e) ||
	    mp_uint(o, "pids", 1, 65536, &g->pids, e) ||
	    mp_uint(o, "fsize_mb", 1, 1024 * 1024, &g->fsize_mb, e) ||
	    mp_uint(o, "nofile", 1, 65536, &g->nofile, e) ||
	    mp_strarr(o, "programs", 1, GRANT_PROGRAMS_MAX, PATH_MAX_LEN,
	        &g->programs, &g->nprograms, e) ||
	    mp_str(o, "interpreter", 1, PATH_MAX_LEN, &g->interpreter, e) ||
	    mp_keyword(o, "cwd", grant_cwd_names, &cwd, e))
		return -1;
	g->cwd = (uint64_t)cwd;
	if (!grant_programs_valid(g))
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"programs\": absolute paths without \".\" or "
		    "\"..\", outside /skill, the interpreter among them");
	/* skill and session name directories of the master's (no "/"). */
	if (v != PROTO_VERSION || !grant_id_valid(g->grant_id) ||
	    !ident_valid(g->skill, NAME_MAX_LEN) ||
	    !ident_valid(g->session, SESSION_MAX_LEN) ||
	    g->skill_dir[0] != '/' || path_has_dot(g->skill_dir) ||
	    strstr(g->entry, "..") != NULL || g->entry[0] == '/' ||
	    g->entry[0] == '\0')
		return error_set(e, ERR_BAD_REQUEST, "malformed grant");
	return 0;
}

void
grant_enc(struct mp_enc *m, const struct grant *g)
{
	msg_begin(m, MSG_GRANT);
	grant_fields_enc(m, g);
	msg_end(m);
}

int
grant_dec(const struct mp_doc *d, struct grant *g, struct error *e)
{
	memset(g, 0, sizeof(*g));
	if (mp_only_keys(d->root, grant_keys, e) ||
	    grant_fields_dec(d->root, g, e)) {
		grant_free(g);
		return -1;
	}
	return 0;
}

void
spec_enc(struct mp_enc *m, const struct grant *g)
{
	msg_begin(m, MSG_SPEC);
	grant_fields_enc(m, g);
	enc_kuint(m, "worker_uid", g->worker_uid);
	enc_kuint(m, "worker_gid", g->worker_gid);
	enc_kuint(m, "as_mb", g->as_mb);
	enc_kuint(m, "net", g->net);
	msg_end(m);
}

int
spec_dec(const struct mp_doc *d, struct grant *g, struct error *e)
{
	const msgpack_object *o = d->root;

	memset(g, 0, sizeof(*g));
	if (mp_only_keys(o, spec_keys, e) || grant_fields_dec(o, g, e) ||
	    mp_uint(o, "worker_uid", 1, UINT32_MAX - 1, &g->worker_uid, e) ||
	    mp_uint(o, "worker_gid", 1, UINT32_MAX - 1, &g->worker_gid, e) ||
	    mp_uint(o, "as_mb", 1, 4 * 1024 * 1024, &g->as_mb, e) ||
	    mp_uint(o, "net", 1, NET__COUNT - 1, &g->net, e))
		goto bad;
	if (g->worker_uid == 0 || g->worker_gid == 0) {
		error_set(e, ERR_BAD_REQUEST, "malformed worker spec");
		goto bad;
	}
	return 0;
bad:
	grant_free(g);
	return -1;
}

void
grant_free(struct grant *g)
{
	int i;

	free(g->grant_id);
	free(g->skill);
	free(g->command);
	free(g->skill_dir);
	free(g->entry);
	free(g->interpreter);
	strarr_free(g->args, g->nargs);
	strarr_free(g->env, g->nenv);
	for (i = 0; i < PERM__COUNT; i++)
		strarr_free(g->perm[i], g->nperm[i]);
	free(g->session);
	strarr_free(g->programs, g->nprograms);
	memset(g, 0, sizeof(*g));
}

/*
 * A grant becomes a worker's SPEC with what only the master knows: the
 * worker's uid, the address-space cap (with a memory cgroup, whose OOM
 * kill is the limit, only a backstop) and the network. (Where the
 * private root goes, its /tmp and the host paths every call sees came
 * with PREP.)
 */
void
spec_fill(struct grant *g, const struct config *c, uid_t uid, int cgroups)
{
	g->worker_uid = g->worker_gid = uid;
	g->as_mb = cgroups ? g->memory_mb * 4 : g->memory_mb;
	g->net = grant_net(g, c);
}

enum net_mode
grant_net(const struct grant *g, const struct config *c)
{
	return g->nperm[PERM_NETWORK] > 0 ? c->worker_network : NET_NONE;
}

/* -1 no data dir, 0 read-only, 1 read-write: how the grant names $DATA_DIR. */
int
grant_data_access(const struct grant *g)
{
	int mode = -1, k;
	size_t i;

	for (k = PERM_FS_READ; k <= PERM_FS_WRITE; k++)
		for (i = 0; i < g->nperm[k]; i++)
			if (strncmp(g->perm[k][i], "$DATA_DIR", 9) == 0 &&
			    (g->perm[k][i][9] == '\0' ||
			        g->perm[k][i][9] == '/'))
				mode = k == PERM_FS_WRITE ? 1
				       : mode < 0         ? 0
				                          : mode;
	return mode;
}

/* Every program lies beneath one of the config's system paths. */
static int
grant_programs_fit(
    const struct grant *g, const struct config *c, struct error *e)
{
	size_t i, k, l;

	for (i = 0; i < g->nprograms; i++) {
		for (k = 0; k < c->nsys_paths; k++) {
			l = strlen(c->sys_paths[k]);
			if (strncmp(g->programs[i], c->sys_paths[k], l) == 0 &&
			    (g->programs[i][l] == '/' || l == 1))
				break;
		}
		if (k == c->nsys_paths)
			return error_set(e, ERR_SANDBOX_FAILED,
			    "the grant allows %s, outside the system paths",
			    g->programs[i]);
	}
	return 0;
}

/*
 * The master's own checks on a grant against its config, whatever
 * policyd said (the decoder checked its names and paths).
 */
int
grant_fits(const struct grant *g, const struct config *c, struct error *e)
{
	if (g->timeout_ms == 0 || g->timeout_ms > c->limits.max_timeout_ms)
		return error_set(e, ERR_INTERNAL, "grant timeout out of range");
	if (g->nperm[PERM_NETWORK] > 0 && c->worker_network == NET_NONE)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "the grant asks for network access, which this host does "
		    "not provide");
	return grant_programs_fit(g, c, e);
}

/*
 * PREP: what a worker builds before any grant, sent as it starts (a
 * pre-forked one waits with it): the syscall filters the master
 * compiled once, where and how big its private root is, whether it
 * keeps the host's network namespace, and the host paths every call
 * sees (the system paths, and the library directories' globs).
 */
void
msg_prep_enc(struct mp_enc *m, const struct msg_prep *p)
{
	msg_begin(m, MSG_PREP);
	enc_kbin(m, "filter", p->filter[0], p->filter_len[0]);
	enc_kbin(m, "filter_net", p->filter[1], p->filter_len[1]);
	enc_kstr(m, "root_dir", p->root_dir);
	enc_kuint(m, "tmp_mb", p->tmp_mb);
	enc_kbool(m, "host_net", p->host_net);
	enc_kstrarr(m, "sys_paths", p->sys_paths, p->nsys_paths);
	enc_kstrarr(m, "lib_paths", p->lib_paths, p->nlib_paths);
	msg_end(m);
}

int
msg_prep_dec(const struct mp_doc *d, struct msg_prep *p, struct error *e)
{
	static const char *const keys[] = {"t", "filter", "filter_net",
	    "root_dir", "tmp_mb", "host_net", "sys_paths", "lib_paths", NULL};
	static const char *const names[] = {"filter", "filter_net"};
	const msgpack_object *o = d->root;
	size_t i;

	memset(p, 0, sizeof(*p));
	if (mp_only_keys(o, keys, e))
		goto bad;
	for (i = 0; i < 2; i++) {
		if (mp_bin(o, names[i], 1, SYSFILTER_MAX, &p->filter[i],
		        &p->filter_len[i], e))
			goto bad;
		if (p->filter_len[i] == 0 ||
		    p->filter_len[i] % SYSFILTER_INSN != 0) {
			error_set(e, ERR_BAD_REQUEST,
			    "field \"%s\" must be whole BPF instructions",
			    names[i]);
			goto bad;
		}
	}
	if (mp_str(o, "root_dir", 1, PATH_MAX_LEN, &p->root_dir, e) ||
	    mp_uint(o, "tmp_mb", 1, 65536, &p->tmp_mb, e) ||
	    mp_bool(o, "host_net", 1, &p->host_net, e) ||
	    mp_strarr(o, "sys_paths", 1, SYS_PATHS_MAX, PATH_MAX_LEN,
	        &p->sys_paths, &p->nsys_paths, e) ||
	    mp_strarr(o, "lib_paths", 1, LIB_PATHS_MAX, PATH_MAX_LEN,
	        &p->lib_paths, &p->nlib_paths, e))
		goto bad;
	for (i = 0; i < p->nsys_paths; i++)
		if (p->sys_paths[i][0] != '/') {
			error_set(e, ERR_BAD_REQUEST,
			    "field \"sys_paths\" must be absolute");
			goto bad;
		}
	for (i = 0; i < p->nlib_paths; i++)
		if (p->lib_paths[i][0] != '/' ||
		    path_has_dot(p->lib_paths[i])) {
			error_set(e, ERR_BAD_REQUEST,
			    "field \"lib_paths\" must be absolute, without "
			    "\".\" or \"..\"");
			goto bad;
		}
	if (p->root_dir[0] != '/') {
		error_set(
		    e, ERR_BAD_REQUEST, "field \"root_dir\" must be absolute");
		goto bad;
	}
	if (p->tmp_mb == 0) { /* a tmpfs of size 0 has no bound */
		error_set(
		    e, ERR_BAD_REQUEST, "field \"tmp_mb\" must be at least 1");
		goto bad;
	}
	return 0;
bad:
	msg_prep_free(p);
	return -1;
}

void
msg_prep_free(struct msg_prep *p)
{
	free(p->filter[0]);
	free(p->filter[1]);
	free(p->root_dir);
	strarr_free(p->sys_paths, p->nsys_paths);
	strarr_free(p->lib_paths, p->nlib_paths);
	memset(p, 0, sizeof(*p));
}
