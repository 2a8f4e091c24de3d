/*
 * skillbroker-policyd: decides every call. It answers the broker with a
 * decision; for an allowed call it first sends the master the complete
 * grant under a random one-time id, and only once the master holds it
 * does the broker learn the id. A compromised broker can name ids, never
 * write a grant.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/privdrop.h"
#include "../lib/usage.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/fds.h"
#include "../proto/frame.h"
#include "../proto/peer.h"
#include "policyd.h"
#include "policyd_exec.h"
#include "policyd_index.h"

#define PENDING_MAX 1024
#define SKILLS_ANS_BUDGET (FRAME_MAX_INTERNAL - 64 * 1024)

struct pending_grant {
	int used;
	char grant_id[GRANT_ID_LEN + 1];
	struct msg_authz_ans ans;
};

static struct peer master_peer, broker_peer;
static struct registry reg;
static struct policy pol;
static struct index *rules_index; /* pol's rules by what they name */
static char *policy_dir;
static struct policy_env penv;
static char **skills_dirs;
static size_t nskills_dirs;
static struct pending_grant pending[PENDING_MAX];
static struct event_base *base;

static int on_authz(struct peer *p, const struct mp_doc *d);
static int on_skills(struct peer *p, const struct mp_doc *d);
static int on_grant_ack(struct peer *p, const struct mp_doc *d);
static int on_reload(struct peer *p, const struct mp_doc *d);
static int on_skill_info(struct peer *p, const struct mp_doc *d);

static const struct peer_handler broker_table[] = {
    {MSG_AUTHZ_REQ, 0, on_authz},
    {MSG_SKILLS_REQ, 0, on_skills},
    {MSG_RELOAD_REQ, 0, on_reload},
    {MSG_SKILL_INFO_REQ, 0, on_skill_info},
    {0, 0, NULL},
};
static const struct peer_handler master_table[] = {
    {MSG_GRANT_ACK, 0, on_grant_ack},
    {0, 0, NULL},
};

static void
send_answer(const struct msg_authz_ans *a)
{

	PEER_SEND(&broker_peer, msg_authz_ans_enc, a);
}

/* Park the answer until the master acknowledges the grant. */
static int
send_grant(const struct grant *g, struct msg_authz_ans *a)
{
	size_t i;

	for (i = 0; i < PENDING_MAX; i++)
		if (!pending[i].used)
			break;
	if (i == PENDING_MAX)
		return -1;
	pending[i].used = 1;
	memcpy(pending[i].grant_id, g->grant_id, GRANT_ID_LEN + 1);
	pending[i].ans = *a;
	PEER_SEND(&master_peer, grant_enc, g);
	return 0;
}

static int
on_authz(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_authz_req req;
	struct msg_authz_ans a;
	struct decision dec;
	struct error e;
	struct grant g;
	struct mp_enc eff;

	if (msg_authz_req_dec(d, &req, &e) == -1) {
		log_warnx("broker: bad AUTHZ_REQ: %s", e.msg);
		return -1;
	}
	decide(&penv, &req, now_mono_ms(), &dec);
	memset(&a, 0, sizeof(a));
	a.ref = req.ref;
	a.err = dec.err;
	a.ask = dec.ask;
	a.reason = xstrdup(dec.reason);
	a.rules = decision_rules(&dec, &a.nrules);
	a.command = xstrdup(dec.cmd ? dec.cmd->name : req.command);
	a.timeout_ms = dec.limits.timeout_ms;
	a.output_bytes = dec.limits.output_bytes ? dec.limits.output_bytes
	                                         : penv.limits.output_bytes;
	enc_init(&eff);
	decision_effective_enc(&eff, &dec);
	a.effective = xmalloc(eff.sb.size);
	memcpy(a.effective, eff.sb.data, eff.sb.size);
	a.effective_len = eff.sb.size;
	enc_free(&eff);
	if (a.err != ERR_NONE || req.dry_run) {
		send_answer(&a);
		msg_authz_ans_free(&a);
	} else {
		grant_build(&penv, &req, &dec, &g);
		a.grant_id = xstrdup(g.grant_id);
		if (send_grant(&g, &a) == -1) {
			a.err = ERR_OVERLOADED;
			free(a.grant_id);
			a.grant_id = NULL;
			send_answer(&a);
			msg_authz_ans_free(&a);
		}
		grant_free(&g);
	}
	decision_free(&dec);
	msg_authz_req_free(&req);
	return 0;
}

/* The master holds the grant now: tell the broker its id. */
static int
on_grant_ack(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_grant_ack ack;
	struct msg_authz_ans *a;
	struct error e;
	size_t i;

	if (msg_grant_ack_dec(d, &ack, &e) == -1)
		return -1;
	for (i = 0; i < PENDING_MAX; i++)
		if (pending[i].used &&
		    strcmp(pending[i].grant_id, ack.grant_id) == 0)
			break;
	if (i == PENDING_MAX) {
		log_warnx("master: ack for unknown grant %s", ack.grant_id);
		msg_grant_ack_free(&ack);
		return -1;
	}
	a = &pending[i].ans;
	if (ack.err != ERR_NONE) { /* allowed, but it cannot run now */
		a->err = ack.err;
		free(a->reason);
		a->reason = xstrdup(ack.message);
		free(a->grant_id);
		a->grant_id = NULL;
	}
	send_answer(a);
	msg_authz_ans_free(a);
	pending[i].used = 0;
	msg_grant_ack_free(&ack);
	return 0;
}

/* The registry as the broker lists it, within one message. */
static int
on_skills(struct peer *p, const struct mp_doc *d)
{
	struct msg_skills_ans a;
	struct msg_skill *s;
	struct error e;
	size_t i, j, budget = SKILLS_ANS_BUDGET, cost;

	memset(&a, 0, sizeof(a));
	if (msg_skills_req_dec(d, &a.ref, &e) == -1)
		return -1;
	a.skills = xcalloc(reg.n + 1, sizeof(*a.skills));
	for (i = 0; i < reg.n && a.nskills < SKILLS_LIST_MAX; i++) {
		const struct skill *k = &reg.skills[i];
		cost = strlen(k->name) +
		       (k->description ? strlen(k->description) : 0) +
		       (k->error ? strlen(k->error) : 0) + 64 + 80 * k->ncmds;
		for (j = 0; j < k->nwarnings; j++)
			cost += strlen(k->warnings[j]) + 8;
		if (cost > budget) {
			a.truncated = 1;
			break;
		}
		budget -= cost;
		s = &a.skills[a.nskills++];
		/* an invalid skill is named by its directory, which may be
		 * longer than a name: the message carries a cut copy */
		s->name =
		    strlen(k->name) <= NAME_MAX_LEN
		        ? k->name
		        : xstrndup(k->name, utf8_cut(k->name, NAME_MAX_LEN));
		s->description = k->description ? k->description : "";
		s->valid = k->valid;
		s->error = k->valid || k->error == NULL ? "" : k->error;
		s->commands = xcalloc(k->ncmds + 1, sizeof(char *));
		for (s->ncommands = 0; s->ncommands < k->ncmds; s->ncommands++)
			s->commands[s->ncommands] = k->cmds[s->ncommands].name;
		s->warnings = k->warnings;
		s->nwarnings = k->nwarnings;
	}
	a.truncated |= i < reg.n;
	PEER_SEND(p, msg_skills_ans_enc, &a);
	for (i = 0; i < a.nskills; i++) {
		free(a.skills[i].commands); /* the strings are the registry's */
		if (a.skills[i].name != reg.skills[i].name)
			free(a.skills[i].name);
	}
	free(a.skills);
	return 0;
}

/* skill_info: the skill as this caller may see it, or why not. */
static int
on_skill_info(struct peer *p, const struct mp_doc *d)
{
	struct msg_skill_info_req r;
	struct msg_skill_info_ans a;
	struct error e;

	if (msg_skill_info_req_dec(d, &r, &e) == -1) {
		log_warnx("broker: bad SKILL_INFO_REQ: %s", e.msg);
		return -1;
	}
	if (info_build(&penv, &r, &a, &e) == -1) {
		memset(&a, 0, sizeof(a));
		a.ref = r.ref;
		a.err = e.type;
		a.message = e.msg;
		if (e.type != ERR_UNKNOWN_SKILL)
			log_warnx("skill_info %s for uid %llu: %s", r.skill,
			    (unsigned long long)r.uid, e.msg);
		PEER_SEND(p, msg_skill_info_ans_enc, &a);
	} else {
		PEER_SEND(p, msg_skill_info_ans_enc, &a);
		msg_skill_info_ans_free(&a);
	}
	msg_skill_info_req_free(&r);
	return 0;
}

static void
on_dead(struct peer *p, const char *why)
{
	fatalx("%s channel: %s", p->name, why);
}

/* Tell the master, which has it audited, and the broker who is admin. */
static void
report_load(enum policy_event action, const char *message)
{
	struct msg_policy_event pe = {
	    action, (char *)message, pol.nfiles, pol.nrules, reg.n};
	struct msg_admins a;

	PEER_SEND(&master_peer, msg_policy_event_enc, &pe);
	if (action == POLICY_RELOAD_FAILED)
		return;
	policy_admins(&pol, &a);
	PEER_SEND(&broker_peer, msg_admins_enc, &a);
	msg_admins_free(&a);
}

/*
 * Load policy and registry anew. A policy that does not validate, or a
 * load over its time budget, is rejected whole and the old policy and
 * registry stay; in-flight grants keep theirs. Nothing here blocks: the
 * loader opens only regular files, non-blocking, and bounds each parse.
 */
static int
reload(struct error *e)
{
	struct registry fresh_reg;
	struct policy fresh;

	if (policy_load(&fresh, policy_dir, e) == -1) {
		log_warnx("policy reload rejected, keeping the old policy: %s",
		    e->msg);
		report_load(POLICY_RELOAD_FAILED, e->msg);
		return -1;
	}
	if (registry_load(&fresh_reg, skills_dirs, nskills_dirs) == -1) {
		error_set(e, ERR_BAD_REQUEST,
		    "skills took longer than %d ms to load",
		    REGISTRY_BUDGET_MS);
		policy_free(&fresh);
		log_warnx("reload rejected, keeping the old policy and skills: "
		          "%s",
		    e->msg);
		report_load(POLICY_RELOAD_FAILED, e->msg);
		return -1;
	}
	index_free(rules_index);
	policy_free(&pol);
	registry_free(&reg);
	exec_memo_clear(); /* the programs are resolved anew too */
	pol = fresh;
	reg = fresh_reg;
	rules_index = index_build(&pol);
	penv.pol = &pol;
	penv.reg = &reg;
	penv.index = rules_index;
	log_info("policy reloaded: %zu files, %zu rules, %zu skills",
	    pol.nfiles, pol.nrules, reg.n);
	report_load(POLICY_RELOADED, "");
	return 0;
}

static void
on_hup(evutil_socket_t sig UNUSED, short ev UNUSED, void *arg UNUSED)
{
	struct error e;

	(void)reload(&e);
}

/* skillctl reload: only an admin principal may ask. */
static int
on_reload(struct peer *p, const struct mp_doc *d)
{
	struct msg_reload_req r;
	struct msg_reload_ans a;
	struct error e;

	if (msg_reload_req_dec(d, &r, &e) == -1)
		return -1;
	if (!policy_is_admin(&pol, r.uid, r.gid))
		error_set(&e, ERR_PERMISSION_DENIED,
		    "uid %llu is not an admin principal (admin: true in "
		    "the policy's principals); SIGHUP to skillbrokerd "
		    "reloads too",
		    (unsigned long long)r.uid);
	else if (reload(&e) == 0)
		error_set(&e, ERR_NONE, "policy reloaded");
	a.ref = r.ref;
	a.err = e.type;
	a.message = e.msg;
	PEER_SEND(p, msg_reload_ans_enc, &a);
	return 0;
}

/* The settings, from the master, before anything else. */
static void
read_conf(struct conf_policyd *c)
{
	struct mp_doc d;
	struct error e;

	if (msg_read(FD_MASTER, MSG_CONF_POLICYD, &d, &e) == -1 ||
	    conf_policyd_dec(&d, c, &e) == -1)
		fatalx("settings: %s", e.msg);
	mp_doc_free(&d);
}

int
main(int argc, char *argv[])
{
	static struct conf_policyd conf; /* lives as long as policyd */
	struct privdrop pd;
	struct error e;
	int ch, fg = 0, verbose = 0;

	usage_helper(argc, argv, "skillbroker-policyd", "[-dv]", FD_MASTER);
	while ((ch = getopt(argc, argv, "dv")) != -1)
		if (ch == 'd')
			fg = 1;
		else if (ch == 'v')
			verbose = 1;
		else {
			fputs("usage: skillbroker-policyd [-dv]\n", stderr);
			exit(2);
		}
	log_init("skillbroker-policyd", fg, verbose);
	read_conf(&conf);
	pd = (struct privdrop){(uid_t)conf.uid, (gid_t)conf.gid, NULL};
	if (privdrop(&pd, &e) == -1)
		fatalx("%s", e.msg);
	signal(SIGPIPE, SIG_IGN);
	skills_dirs = conf.skills_dirs;
	nskills_dirs = conf.nskills_dirs;
	policy_dir = conf.policy_dir;
	penv.net = conf.net;
	penv.limits = conf.limits;
	perms_protect(conf.protect, conf.nprotect);
	exec_system_paths(conf.sys_paths, conf.nsys_paths);
	cmds_interpreters(conf.interp_exts, conf.interp_progs, conf.ninterps);
	/* A policy that does not validate at start is fatal: fail closed. */
	if (policy_load(&pol, policy_dir, &e) == -1)
		fatalx("policy: %s", e.msg);
	if (registry_load(&reg, skills_dirs, nskills_dirs) == -1)
		fatalx("skills took longer than %d ms to load",
		    REGISTRY_BUDGET_MS);
	rules_index = index_build(&pol);
	penv.reg = &reg;
	penv.pol = &pol;
	penv.index = rules_index;
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	if (evsignal_add(evsignal_new(base, SIGHUP, on_hup, NULL), NULL) == -1)
		fatalx("SIGHUP event");
	peer_defer_writes(); /* a loop pass's answers go out together */
	peer_init(&master_peer, base, FD_MASTER, "master", master_table,
	    on_dead, NULL);
	peer_init(&broker_peer, base, FD_PEER_BROKER, "broker", broker_table,
	    on_dead, NULL);
	PEER_SEND(&master_peer, msg_ready_enc, "policyd");
	report_load(POLICY_LOADED, "");
	event_base_dispatch(base);
	fatalx("event loop ended");
}
