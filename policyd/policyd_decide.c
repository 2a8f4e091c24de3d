/*
 * policyd_decide.c: one decision. Fail closed: gates first (registry,
 * enabled, command, phase), then rules: deny beats ask beats allow, and
 * no matching rule means deny. An allowed skill must not declare more
 * than the deciding rule's ceiling; limits are the smaller of skill,
 * rule and daemon; a rate limit is per (principal uid, skill). An ask
 * rule is weighed as an allow rule would be, but answers "ask" (no
 * grant) until the request says a human approved it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "policyd.h"
#include "policyd_exec.h"
#include "policyd_index.h"
#include "policyd_match.h"
#include "policyd_rate.h"

static void deny(struct decision *d, enum err_type err, const char *fmt, ...)
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

/* Gates before any rule; 0 when the call may be weighed by rules. */
static int
gates(const struct policy_env *pe, const struct msg_authz_req *req,
    struct decision *d)
{
	char cmds[256];

	d->builtin = "builtin:registry";
	if ((d->skill = registry_find(pe->reg, req->skill)) == NULL) {
		deny(d, ERR_UNKNOWN_SKILL,
		    "no skill named \"%s\" is "
		    "registered",
		    req->skill);
		return -1;
	}
	if (!d->skill->valid) {
		deny(d, ERR_SKILL_NOT_ENABLED,
		    "skill \"%s\" is invalid and "
		    "never runs: %s",
		    req->skill, d->skill->error);
		return -1;
	}
	d->builtin = "builtin:enabled";
	if (!index_enabled(pe->index, pe->pol, req->skill)) {
		deny(d, ERR_SKILL_NOT_ENABLED,
		    "skill \"%s\" is not enabled "
		    "by policy (skills.enabled)",
		    req->skill);
		return -1;
	}
	d->builtin = "builtin:command";
	command_list(d->skill, cmds, sizeof(cmds));
	if (d->skill->ncmds == 0) {
		deny(d, ERR_UNKNOWN_COMMAND,
		    "skill \"%s\" has no commands: its instructions name no "
		    "script to run (skill_info serves them)",
		    req->skill);
		return -1;
	}
	if ((d->cmd = command_find(d->skill, req->command)) == NULL) {
		deny(d, ERR_UNKNOWN_COMMAND,
		    *req->command
		        ? "skill \"%s\" has no command \"%s\" (it has: %s)"
		        : "skill \"%s\" needs a command%s (it has: %s)",
		    req->skill, req->command, cmds);
		return -1;
	}
	d->builtin = "builtin:phase";
	if (strcmp(req->phase, "planning") == 0) {
		deny(d, ERR_PHASE_VIOLATION,
		    "skills do not run in the planning "
		    "phase; send phase \"execution\" to run");
		return -1;
	}
	if (strcmp(req->phase, "execution") != 0) {
		deny(d, ERR_PHASE_VIOLATION,
		    "unknown phase \"%s\"; phases are "
		    "planning and execution",
		    req->phase);
		return -1;
	}
	d->builtin = NULL;
	return 0;
}

static int
list_has_glob(char *const *v, size_t n, const char *s,
    int (*match)(const char *, const char *))
{
	size_t i;

	for (i = 0; i < n; i++)
		if (match(v[i], s))
			return 1;
	return 0;
}

/* Does rule r apply to this requester and call? */
static int
rule_applies(const struct policy *pol, const struct rule *r,
    const struct msg_authz_req *req, const char *command)
{
	size_t i;
	int who = 0;

	/* Names were resolved when the policy loaded (rule.who). */
	for (i = 0; i < r->nprincipals && !who; i++)
		who =
		    r->who[i] == POLICY_ANYONE ||
		    principal_matches(&pol->pr[r->who[i]], req->uid, req->gid);
	return who &&
	       list_has_glob(r->skills, r->nskills, req->skill, glob_match) &&
	       (command == NULL || list_has_glob(r->commands, r->ncommands,
	                               command, name_glob_match)) &&
	       list_has_glob(r->phases, r->nphases, req->phase, glob_match);
}

/*
 * The rules of one action that apply, in file order: only those filed
 * under the caller's principals and the skill are looked at.
 */
static size_t
collect(const struct policy_env *pe, const struct msg_authz_req *req,
    const char *command, enum action act, const struct rule **out)
{
	const struct policy *pol = pe->pol;
	struct index_iter it;
	size_t i, n = 0;

	index_iter_init(
	    &it, pe->pol, pe->index, req->uid, req->gid, req->skill, act);
	while (n < MATCHED_MAX && index_iter_next(&it, &i))
		if (rule_applies(pol, &pol->rules[i], req, command))
			out[n++] = &pol->rules[i];
	index_iter_done(&it);
	return n;
}

static void
effective_limits(const struct policy_env *pe, const struct msg_authz_req *req,
    const struct rule *r, struct decision *d)
{
	struct plimits *l = &d->limits;
	const struct plimits *s = &d->skill->limits;

	l->timeout_ms =
	    limit_min(limit_min(s->timeout_ms, r->limits.timeout_ms),
	        pe->limits.timeout_ms);
	if (req->timeout_ms) /* a caller may ask for less, or up to the cap */
		l->timeout_ms =
		    limit_min(limit_min(s->timeout_ms, r->limits.timeout_ms),
		        limit_min(req->timeout_ms, pe->limits.max_timeout_ms));
	l->memory_mb = limit_min(
	    limit_min(s->memory_mb, r->limits.memory_mb), pe->limits.memory_mb);
	l->pids =
	    limit_min(limit_min(s->pids, r->limits.pids), pe->limits.pids);
	l->output_bytes =
	    limit_min(limit_min(s->output_bytes, r->limits.output_bytes),
	        pe->limits.output_bytes);
}

/*
 * The deciding allow rule (or an ask rule): ceiling, limits, rate. ask
 * stops short of the rate: nothing is taken until a human says yes.
 */
static void
weigh_allow(const struct policy_env *pe, const struct msg_authz_req *req,
    const struct rule *r, uint64_t now_ms, int ask, struct decision *d)
{
	char missing[REASON_MAX_LEN - 128];
	struct error e;

	if (perms_missing(
	        &d->skill->perms, &r->ceiling, missing, sizeof(missing)) > 0) {
		deny(d, ERR_PERMISSION_DENIED,
		    "skill \"%s\" declares more "
		    "than rule \"%s\" allows: %s",
		    req->skill, r->name, missing);
		return;
	}
	if (d->skill->perms.n[PERM_NETWORK] > 0 && pe->net == NET_NONE) {
		deny(d, ERR_PERMISSION_DENIED,
		    "skill \"%s\" declares network "
		    "access, and this host gives workers none (worker.network: "
		    "none)",
		    req->skill);
		return;
	}
	/* What it may execute: a program that is not there refuses it. */
	if (exec_resolve_memo(now_ms, d->skill->dir, d->cmd->path,
	        d->cmd->interpreter, d->skill->perms.v[PERM_EXEC],
	        d->skill->perms.n[PERM_EXEC], &d->programs, &d->nprograms,
	        &d->interpreter, &e) == -1) {
		deny(d, e.type, "skill \"%s\" cannot run: %s", req->skill,
		    e.msg);
		return;
	}
	effective_limits(pe, req, r, d);
	/* The wait in its session's line and for a worker is call time. */
	if (req->queued_ms >= d->limits.timeout_ms) {
		deny(d, ERR_TIMEOUT,
		    "the call waited %llu ms in line, its whole timeout "
		    "(%llu ms)",
		    (unsigned long long)req->queued_ms,
		    (unsigned long long)d->limits.timeout_ms);
		return;
	}
	d->limits.timeout_ms -= req->queued_ms;
	if (ask) {
		d->ask = 1;
		deny(d, ERR_APPROVAL_DENIED,
		    "rule \"%s\" (%s) requires approval: uid %llu may run %s "
		    "%s in phase execution once a human approves",
		    r->name, r->where, (unsigned long long)req->uid, req->skill,
		    d->cmd->name);
		return;
	}
	if (!req->dry_run && !rate_take(req->uid, req->skill,
	                         r->rate.per_minute, r->rate.burst, now_ms)) {
		deny(d, ERR_RATE_LIMITED,
		    "rule \"%s\" allows %llu calls a "
		    "minute (burst %llu) per principal for skill \"%s\"",
		    r->name, (unsigned long long)r->rate.per_minute,
		    (unsigned long long)r->rate.burst, req->skill);
		return;
	}
	d->err = ERR_NONE;
	snprintf(d->reason, sizeof(d->reason),
	    "allowed by rule \"%s\" "
	    "(%s)%s: uid %llu may run %s %s in phase execution",
	    r->name, r->where,
	    r->action == ACT_ASK ? " with a human's approval" : "",
	    (unsigned long long)req->uid, req->skill, d->cmd->name);
}

void
decide(const struct policy_env *pe, const struct msg_authz_req *req,
    uint64_t now_ms, struct decision *d)
{
	const struct rule *hits[MATCHED_MAX];
	size_t n;

	memset(d, 0, sizeof(*d));
	if (gates(pe, req, d) == -1)
		return;
	if ((n = collect(pe, req, d->cmd->name, ACT_DENY, hits)) > 0) {
		memcpy(d->matched, hits, n * sizeof(hits[0]));
		d->nmatched = n;
		deny(d, ERR_PERMISSION_DENIED, "denied by rule \"%s\" (%s)",
		    hits[0]->name, hits[0]->where);
		return;
	}
	/* Asked, unless a human approved this call: then it is an allow. */
	if ((n = collect(pe, req, d->cmd->name, ACT_ASK, hits)) > 0) {
		memcpy(d->matched, hits, n * sizeof(hits[0]));
		d->nmatched = n;
		weigh_allow(pe, req, hits[0], now_ms, !req->approved, d);
		return;
	}
	if ((n = collect(pe, req, d->cmd->name, ACT_ALLOW, hits)) == 0) {
		d->builtin = "builtin:default-deny";
		deny(d, ERR_PERMISSION_DENIED,
		    "no rule allows uid %llu (gid "
		    "%llu) to run %s %s in phase %s",
		    (unsigned long long)req->uid, (unsigned long long)req->gid,
		    req->skill, d->cmd->name, req->phase);
		return;
	}
	memcpy(d->matched, hits, n * sizeof(hits[0]));
	d->nmatched = n;
	weigh_allow(pe, req, hits[0], now_ms, 0, d);
}

int
decide_sees(const struct policy_env *pe, const struct msg_authz_req *req)
{
	const struct skill *s = registry_find(pe->reg, req->skill);
	const struct rule *hits[MATCHED_MAX];

	if (s == NULL || !s->valid ||
	    !index_enabled(pe->index, pe->pol, req->skill) ||
	    strcmp(req->phase, "execution") != 0)
		return 0;
	return collect(pe, req, NULL, ACT_DENY, hits) == 0 &&
	       collect(pe, req, NULL, ACT_ASK, hits) == 0 &&
	       collect(pe, req, NULL, ACT_ALLOW, hits) > 0;
}

void
decision_free(struct decision *d)
{
	strarr_free(d->programs, d->nprograms);
	d->programs = NULL;
	d->nprograms = 0;
	free(d->interpreter);
	d->interpreter = NULL;
}

char **
decision_rules(const struct decision *d, size_t *n)
{
	char **v;
	size_t i;

	if (d->nmatched == 0) {
		v = xcalloc(2, sizeof(char *));
		v[0] = xstrdup(d->builtin ? d->builtin : "builtin:none");
		*n = 1;
		return v;
	}
	v = xcalloc(d->nmatched + 1, sizeof(char *));
	for (i = 0; i < d->nmatched; i++)
		xasprintf(
		    &v[i], "%s %s", d->matched[i]->where, d->matched[i]->name);
	*n = d->nmatched;
	return v;
}

/*
 * An allowed call gets what its skill declares (the ceiling covers it),
 * and so would an asked one, once approved.
 */
void
decision_permissions_enc(struct mp_enc *m, const struct decision *d)
{
	if (d->skill != NULL && (d->err == ERR_NONE || d->ask))
		perms_enc(m, &d->skill->perms);
	else {
		enc_map_open(m);
		enc_map_close(m);
	}
}

/* The entry point first, then what the grant lets it execute. */
static void
decision_programs_enc(struct mp_enc *m, const struct decision *d)
{
	char entry[PATH_MAX_LEN + 8];
	size_t i;

	snprintf(entry, sizeof(entry), "/skill/%s", d->cmd->path);
	enc_array(m, d->nprograms + 1);
	enc_str(m, entry);
	for (i = 0; i < d->nprograms; i++)
		enc_str(m, d->programs[i]);
}

/* What an authorize reply shows: the permissions, limits and programs. */
void
decision_effective_enc(struct mp_enc *m, const struct decision *d)
{
	enc_map_open(m);
	if (d->err == ERR_NONE || d->ask) { /* what would be allowed */
		enc_key(m, "permissions");
		decision_permissions_enc(m, d);
		enc_key(m, "limits");
		plimits_enc(m, &d->limits);
		enc_key(m, "programs");
		decision_programs_enc(m, d);
	}
	enc_map_close(m);
}

/* Client env passes only for names the skill declares (and the rule let). */
static void
grant_env(
    const struct msg_authz_req *req, const struct decision *d, struct grant *g)
{
	const struct perms *p = &d->skill->perms;
	size_t i, k, nl;

	g->env = xcalloc(3 + req->nenv, sizeof(char *));
	g->env[g->nenv++] = xstrdup("PATH=" EXEC_SANDBOX_PATH);
	g->env[g->nenv++] = xstrdup("LANG=C.UTF-8");
	for (i = 0; i < req->nenv; i++) {
		nl = strcspn(req->env[i], "=");
		for (k = 0; k < p->n[PERM_ENV]; k++)
			if (strlen(p->v[PERM_ENV][k]) == nl &&
			    strncmp(p->v[PERM_ENV][k], req->env[i], nl) == 0 &&
			    strcmp(p->v[PERM_ENV][k], "PATH") != 0 &&
			    strcmp(p->v[PERM_ENV][k], "HOME") != 0) {
				g->env[g->nenv++] = xstrdup(req->env[i]);
				break;
			}
	}
}

void
grant_build(const struct policy_env *pe, const struct msg_authz_req *req,
    const struct decision *d, struct grant *g)
{
	uint8_t rnd[GRANT_ID_LEN / 2];
	size_t k;

	memset(g, 0, sizeof(*g));
	if (random_bytes(rnd, sizeof(rnd)) == -1)
		abort();
	g->grant_id = xmalloc(GRANT_ID_LEN + 1);
	hex_encode(rnd, sizeof(rnd), g->grant_id);
	g->skill = xstrdup(d->skill->name);
	g->command = xstrdup(d->cmd->name);
	g->skill_dir = xstrdup(d->skill->dir);
	g->entry = xstrdup(d->cmd->path);
	g->args = strarr_dup(req->args, req->nargs);
	g->nargs = req->nargs;
	for (k = 0; k < PERM__COUNT; k++) {
		g->perm[k] =
		    strarr_dup(d->skill->perms.v[k], d->skill->perms.n[k]);
		g->nperm[k] = d->skill->perms.n[k];
	}
	grant_env(req, d, g);
	g->principal_uid = req->uid;
	g->session = xstrdup(req->session);
	g->timeout_ms = d->limits.timeout_ms;
	g->output_bytes = d->limits.output_bytes;
	g->memory_mb = d->limits.memory_mb;
	g->pids = d->limits.pids;
	g->programs = strarr_dup(d->programs, d->nprograms);
	g->nprograms = d->nprograms;
	g->interpreter = xstrdup(d->interpreter ? d->interpreter : "");
	g->cwd = (uint64_t)d->cmd->cwd;
	g->fsize_mb = pe->limits.fsize_mb;
	g->nofile = pe->limits.nofile;
}
