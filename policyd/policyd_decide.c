/*
 * policyd_decide.c: decisions. Fail closed: anything not positively
 * allowed is denied with a typed error and one readable sentence.
 * (The admin policy language extends this; the registry gate, command
 * gate and phase gate stay.)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "policyd.h"

static void
deny(struct decision *d, enum err_type err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
deny(struct decision *d, enum err_type err, const char *fmt, ...)
{
	va_list ap;

	d->err = err;
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
}

/* "a, b, c": the commands a skill declares, for error messages. */
static void
command_list(const struct skill *s, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < s->ncmds && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
		    i ? ", " : "", s->cmds[i].name);
}

/* No command named: the only one, else one called "run". */
static const struct skill_cmd *
command_find(const struct skill *s, const char *name)
{
	size_t i;

	if (*name == '\0' && s->ncmds == 1)
		return &s->cmds[0];
	if (*name == '\0')
		name = "run";
	for (i = 0; i < s->ncmds; i++)
		if (strcmp(s->cmds[i].name, name) == 0)
			return &s->cmds[i];
	return NULL;
}

void
decide(const struct policy_env *pe, const struct msg_authz_req *req,
    struct decision *d)
{
	char cmds[256];

	memset(d, 0, sizeof(*d));
	d->rule = "builtin:registry";
	if ((d->skill = registry_find(pe->reg, req->skill)) == NULL) {
		deny(d, ERR_UNKNOWN_SKILL, "no skill named \"%s\" is "
		    "registered", req->skill);
		return;
	}
	if (!d->skill->valid) {
		deny(d, ERR_SKILL_NOT_ENABLED, "skill \"%s\" is invalid "
		    "and never runs: %s", req->skill, d->skill->error);
		return;
	}
	command_list(d->skill, cmds, sizeof(cmds));
	if ((d->cmd = command_find(d->skill, req->command)) == NULL) {
		deny(d, ERR_UNKNOWN_COMMAND, *req->command ?
		    "skill \"%s\" has no command \"%s\" (it has: %s)" :
		    "skill \"%s\" needs a command%s (it has: %s)",
		    req->skill, req->command, cmds);
		return;
	}
	d->rule = "builtin:phase";
	if (strcmp(req->phase, "planning") == 0) {
		deny(d, ERR_PHASE_VIOLATION, "skills do not run in the "
		    "planning phase; send phase \"execution\" to run");
		return;
	}
	if (strcmp(req->phase, "execution") != 0) {
		deny(d, ERR_PHASE_VIOLATION, "unknown phase \"%s\"; "
		    "phases are planning and execution", req->phase);
		return;
	}
	d->timeout_ms = req->timeout_ms ? req->timeout_ms : pe->limits.timeout_ms;
	if (d->timeout_ms > pe->limits.max_timeout_ms)
		d->timeout_ms = pe->limits.max_timeout_ms;
	d->err = ERR_NONE;
	snprintf(d->reason, sizeof(d->reason), "skill \"%s\" command \"%s\" "
	    "is registered and the call is in phase execution", req->skill,
	    d->cmd->name);
}

void
grant_build(const struct policy_env *pe, const struct msg_authz_req *req,
    const struct decision *d, struct grant *g)
{
	uint8_t rnd[GRANT_ID_LEN / 2];
	size_t i;

	memset(g, 0, sizeof(*g));
	if (random_bytes(rnd, sizeof(rnd)) == -1)
		abort();
	g->grant_id = xmalloc(GRANT_ID_LEN + 1);
	hex_encode(rnd, sizeof(rnd), g->grant_id);
	g->skill = xstrdup(d->skill->name);
	g->command = xstrdup(d->cmd->name);
	g->skill_dir = xstrdup(d->skill->dir);
	g->entry = xstrdup(d->cmd->path);
	g->args = xcalloc(req->nargs + 1, sizeof(char *));
	for (i = 0; i < req->nargs; i++)
		g->args[i] = xstrdup(req->args[i]);
	g->nargs = req->nargs;
	xasprintf(&g->work_dir, "%s/%llu/%s", pe->workroot,
	    (unsigned long long)req->uid, req->session);
	g->env = xcalloc(5, sizeof(char *));
	g->env[g->nenv++] = xstrdup("PATH=/usr/local/bin:/usr/bin:/bin");
	g->env[g->nenv++] = xstrdup("LANG=C.UTF-8");
	xasprintf(&g->env[g->nenv++], "HOME=%s", g->work_dir);
	xasprintf(&g->env[g->nenv++], "SKILL_DIR=%s", g->skill_dir);
	g->principal_uid = req->uid;
	g->session = xstrdup(req->session);
	g->timeout_ms = d->timeout_ms;
	g->output_bytes = pe->limits.output_bytes;
	g->memory_mb = pe->limits.memory_mb;
	g->pids = pe->limits.pids;
	g->fsize_mb = pe->limits.fsize_mb;
	g->nofile = pe->limits.nofile;
}
