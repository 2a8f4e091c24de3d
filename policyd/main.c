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
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/peer.h"
#include "policyd.h"

#define FD_MASTER 3
#define FD_BROKER 4
#define PENDING_MAX 1024

struct pending_grant {
	int used;
	char grant_id[GRANT_ID_LEN + 1];
	struct msg_authz_ans ans;
};

static struct peer master_peer, broker_peer;
static struct registry reg;
static struct policy pol;
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

static const struct peer_handler broker_table[] = {
    {MSG_AUTHZ_REQ, 0, on_authz},
    {MSG_SKILLS_REQ, 0, on_skills},
    {MSG_RELOAD_REQ, 0, on_reload},
    {0, 0, NULL},
};
static const struct peer_handler master_table[] = {
    {MSG_GRANT_ACK, 0, on_grant_ack},
    {0, 0, NULL},
};

static void
send_answer(const struct msg_authz_ans *a)
{
	struct mp_enc m;

	enc_init(&m);
	msg_authz_ans_enc(&m, a);
	peer_send(&broker_peer, &m, NULL, 0);
	enc_free(&m);
}

/* Park the answer until the master acknowledges the grant. */
static int
send_grant(const struct grant *g, struct msg_authz_ans *a)
{
	struct mp_enc m;
	size_t i;

	for (i = 0; i < PENDING_MAX; i++)
		if (!pending[i].used)
			break;
	if (i == PENDING_MAX)
		return -1;
	pending[i].used = 1;
	memcpy(pending[i].grant_id, g->grant_id, GRANT_ID_LEN + 1);
	pending[i].ans = *a;
	enc_init(&m);
	grant_enc(&m, g);
	peer_send(&master_peer, &m, NULL, 0);
	enc_free(&m);
	return 0;
}

static int
on_authz(struct peer *p, const struct mp_doc *d)
{
	struct msg_authz_req req;
	struct msg_authz_ans a;
	struct decision dec;
	struct error e;
	struct grant g;
	struct mp_enc eff;

	(void)p;
	if (msg_authz_req_dec(d, &req, &e) == -1) {
		log_warnx("broker: bad AUTHZ_REQ: %s", e.msg);
		return -1;
	}
	decide(&penv, &req, now_mono_ms(), &dec);
	memset(&a, 0, sizeof(a));
	a.ref = req.ref;
	a.allowed = dec.err == ERR_NONE;
	a.err = dec.err;
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
	if (!a.allowed || req.dry_run) {
		send_answer(&a);
		msg_authz_ans_free(&a);
	} else {
		grant_build(&penv, &req, &dec, &g);
		a.grant_id = xstrdup(g.grant_id);
		if (send_grant(&g, &a) == -1) {
			a.allowed = 0;
			a.err = ERR_OVERLOADED;
			send_answer(&a);
			msg_authz_ans_free(&a);
		}
		grant_free(&g);
	}
	msg_authz_req_free(&req);
	return 0;
}

/* The master holds the grant now: tell the broker its id. */
static int
on_grant_ack(struct peer *p, const struct mp_doc *d)
{
	struct msg_grant_ack ack;
	struct error e;
	size_t i;

	(void)p;
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
	if (!ack.ok) {
		pending[i].ans.allowed = 0;
		pending[i].ans.err = ERR_INTERNAL;
		free(pending[i].ans.reason);
		pending[i].ans.reason = xstrdup("the master refused the grant");
		free(pending[i].ans.grant_id);
		pending[i].ans.grant_id = NULL;
	}
	send_answer(&pending[i].ans);
	msg_authz_ans_free(&pending[i].ans);
	pending[i].used = 0;
	msg_grant_ack_free(&ack);
	return 0;
}

static void
enc_skill(struct mp_enc *m, const struct skill *s)
{
	size_t i;

	enc_map(m, s->valid ? 4 : 5);
	enc_kstr(m, "name", s->name);
	enc_kstr(m, "description", s->description ? s->description : "");
	enc_kbool(m, "valid", s->valid);
	enc_str(m, "commands");
	enc_array(m, s->ncmds);
	for (i = 0; i < s->ncmds; i++)
		enc_str(m, s->cmds[i].name);
	if (!s->valid)
		enc_kstr(m, "error", s->error);
}

static int
on_skills(struct peer *p, const struct mp_doc *d)
{
	struct mp_enc m;
	struct error e;
	uint64_t ref;
	size_t i;

	if (msg_ref_dec(d, &ref, &e) == -1)
		return -1;
	enc_init(&m);
	msg_begin(&m, MSG_SKILLS_ANS, 2);
	enc_kuint(&m, "ref", ref);
	enc_str(&m, "skills");
	enc_array(&m, reg.n);
	for (i = 0; i < reg.n; i++)
		enc_skill(&m, &reg.skills[i]);
	peer_send(p, &m, NULL, 0);
	enc_free(&m);
	return 0;
}

static void
on_dead(struct peer *p, const char *why)
{
	fatalx("%s channel: %s", p->name, why);
}

/* Tell the master, which has it audited. */
static void
report_load(const char *action, int ok, const char *message)
{
	struct mp_enc m;

	enc_init(&m);
	msg_begin(&m, MSG_POLICY_EVENT, 6);
	enc_kstr(&m, "action", action);
	enc_kbool(&m, "ok", ok);
	enc_kstr(&m, "message", message);
	enc_kuint(&m, "files", pol.nfiles);
	enc_kuint(&m, "rules", pol.nrules);
	enc_kuint(&m, "skills", reg.n);
	peer_send(&master_peer, &m, NULL, 0);
	enc_free(&m);
}

/*
 * Load policy and registry anew. A policy that does not validate is
 * rejected whole and the old set stays; in-flight grants keep theirs.
 */
static int
reload(struct error *e)
{
	struct registry fresh_reg;
	struct policy fresh;

	if (policy_load(&fresh, policy_dir, e) == -1) {
		log_warnx("policy reload rejected, keeping the old policy: %s",
		    e->msg);
		report_load("policy.reload_failed", 0, e->msg);
		return -1;
	}
	registry_load(&fresh_reg, skills_dirs, nskills_dirs);
	policy_free(&pol);
	registry_free(&reg);
	pol = fresh;
	reg = fresh_reg;
	penv.pol = &pol;
	penv.reg = &reg;
	log_info("policy reloaded: %zu files, %zu rules, %zu skills",
	    pol.nfiles, pol.nrules, reg.n);
	report_load("policy.reloaded", 1, "");
	return 0;
}

static void
on_hup(evutil_socket_t sig, short ev, void *arg)
{
	struct error e;

	(void)sig;
	(void)ev;
	(void)arg;
	(void)reload(&e);
}

/* skillctl reload: only an admin principal may ask. */
static int
on_reload(struct peer *p, const struct mp_doc *d)
{
	static const char *const keys[] = {"t", "ref", "uid", "gid", NULL};
	uint64_t ref, uid, gid;
	struct error e;
	struct mp_enc m;
	int ok;

	if (mp_only_keys(d->root, keys, &e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &ref, &e) ||
	    mp_uint(d->root, "uid", 1, UINT32_MAX, &uid, &e) ||
	    mp_uint(d->root, "gid", 1, UINT32_MAX, &gid, &e))
		return -1;
	if (!policy_is_admin(&pol, uid, gid)) {
		ok = 0;
		error_set(&e, ERR_PERMISSION_DENIED,
		    "uid %llu is not an admin "
		    "principal",
		    (unsigned long long)uid);
	} else
		ok = reload(&e) == 0;
	enc_init(&m);
	msg_begin(&m, MSG_RELOAD_ANS, 4);
	enc_kuint(&m, "ref", ref);
	enc_kbool(&m, "ok", ok);
	enc_kuint(&m, "err", ok ? ERR_NONE : e.type);
	enc_kstr(&m, "message", ok ? "policy reloaded" : e.msg);
	peer_send(p, &m, NULL, 0);
	enc_free(&m);
	return 0;
}

static int
parse_limits(const char *s, struct limits *l)
{
	unsigned long long v[7];

	if (sscanf(s, "%llu,%llu,%llu,%llu,%llu,%llu,%llu", &v[0], &v[1], &v[2],
	        &v[3], &v[4], &v[5], &v[6]) != 7)
		return -1;
	l->timeout_ms = v[0];
	l->max_timeout_ms = v[1];
	l->output_bytes = v[2];
	l->memory_mb = v[3];
	l->pids = v[4];
	l->fsize_mb = v[5];
	l->nofile = v[6];
	return 0;
}

int
main(int argc, char *argv[])
{
	uint64_t uid = 0, gid = 0;
	int ch, fg = 0, verbose = 0, have_limits = 0;
	struct error e;
	struct mp_enc m;

	skills_dirs = xcalloc((size_t)argc, sizeof(char *));
	while ((ch = getopt(argc, argv, "D:dg:L:NP:S:u:vW:")) != -1) {
		switch (ch) {
		case 'd':
			fg = 1;
			break;
		case 'g':
			if (parse_uint(optarg, 1, 4294967294U, &gid))
				return 2;
			break;
		case 'L':
			have_limits = parse_limits(optarg, &penv.limits) == 0;
			break;
		case 'D':
			penv.dataroot = optarg;
			break;
		case 'N':
			penv.net_host = 1;
			break;
		case 'P':
			policy_dir = optarg;
			break;
		case 'S':
			skills_dirs[nskills_dirs++] = optarg;
			break;
		case 'u':
			if (parse_uint(optarg, 1, 4294967294U, &uid))
				return 2;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'W':
			penv.workroot = optarg;
			break;
		default:
			return 2;
		}
	}
	if (uid == 0 || gid == 0 || !have_limits || penv.workroot == NULL ||
	    penv.dataroot == NULL || policy_dir == NULL)
		return 2;
	log_init("skillbroker-policyd", fg, verbose);
	if (privdrop((uid_t)uid, (gid_t)gid, NULL, &e) == -1)
		fatalx("%s", e.msg);
	signal(SIGPIPE, SIG_IGN);
	/* A policy that does not validate at start is fatal: fail closed. */
	if (policy_load(&pol, policy_dir, &e) == -1)
		fatalx("policy: %s", e.msg);
	registry_load(&reg, skills_dirs, nskills_dirs);
	penv.reg = &reg;
	penv.pol = &pol;
	if ((base = event_base_new()) == NULL)
		fatalx("event_base_new");
	evsignal_add(evsignal_new(base, SIGHUP, on_hup, NULL), NULL);
	peer_init(&master_peer, base, FD_MASTER, "master", master_table,
	    on_dead, NULL);
	peer_init(&broker_peer, base, FD_BROKER, "broker", broker_table,
	    on_dead, NULL);
	enc_init(&m);
	msg_ready_enc(&m, "policyd");
	peer_send(&master_peer, &m, NULL, 0);
	enc_free(&m);
	report_load("policy.loaded", 1, "");
	event_base_dispatch(base);
	fatalx("event loop ended");
}
