/*
 * master_proc.c: the roles as a table. Each is re-exec'd (a fresh
 * address space) with its channels at the fixed fds of proto/fds.h, gets
 * its settings as its first message, must say READY with our protocol
 * version in time, and is supervised afterwards.
 */
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/fds.h"
#include "master.h"

#define STARTUP_TIMEOUT_S 10
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
#define HEALTHY_MS 60000

static int on_ready(struct peer *p, const struct mp_doc *d);
static int on_policy_event(struct peer *p, const struct mp_doc *d);

/* What each role may send the master. */
static const struct peer_handler broker_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_RUN, 0, worker_on_run},
    {MSG_SESSION_END, 0, workdir_on_end},
    {MSG_CANCEL, 0, worker_on_cancel},
    {0, 0, NULL},
};
static const struct peer_handler policyd_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_GRANT, 0, worker_on_grant},
    {MSG_POLICY_EVENT, 0, on_policy_event},
    {0, 0, NULL},
};
static const struct peer_handler auditd_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_AUDIT_ACK, 0, worker_on_audit_ack},
    {0, 0, NULL},
};
static const struct peer_handler netproxy_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {0, 0, NULL},
};

/* Each role: its program, what it may send, its settings (msg_conf.c). */
static const struct {
	const char *name, *program;
	const struct peer_handler *table;
	enum msg_type conf;
} roles[ROLE__COUNT] = {
    [ROLE_BROKER] = {"broker", "skillbroker-broker", broker_table,
        MSG_CONF_BROKER},
    [ROLE_POLICYD] = {"policyd", "skillbroker-policyd", policyd_table,
        MSG_CONF_POLICYD},
    [ROLE_AUDITD] = {"auditd", "skillbroker-auditd", auditd_table,
        MSG_CONF_AUDITD},
    [ROLE_NETPROXY] = {"netproxy", "skillbroker-netproxy", netproxy_table,
        MSG_CONF_NETPROXY},
};

static struct event *startup_timer;

/* READY: right role, right protocol version; all ready ends start-up. */
static int
on_ready(struct peer *p, const struct mp_doc *d)
{
	struct role *r = p->arg;
	struct error e;

	if (msg_ready_check(d, r->name, &e) == -1) {
		log_warnx("%s: %s", r->name, e.msg);
		return -1;
	}
	if (r->ready) { /* a restarted child */
		log_info("%s restarted and ready", r->name);
		if (r == &M->roles[ROLE_AUDITD])
			maudit_flush();
		if (r == &M->roles[ROLE_NETPROXY])
			worker_net_reopen();
		return 0;
	}
	r->ready = 1;
	if (++M->nready < ROLE__COUNT)
		return 0;
	evtimer_del(startup_timer);
	PEER_SEND(&M->roles[ROLE_BROKER].peer, msg_empty_enc, MSG_SERVE);
	log_info("ready: listening on %s", M->cfg.socket);
	service_notify("READY=1", "ready");
	MAUDIT(msg_audit_daemon, "daemon.started", getpid(), M->cfg.path, NULL);
	return 0;
}

/* A policy load or reload, as policyd reports it: into the audit log. */
static int
on_policy_event(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_policy_event pe;
	struct error e;

	if (msg_policy_event_dec(d, &pe, &e) == -1)
		return -1;
	MAUDIT(msg_audit_policy, &pe);
	/* a policyd restarted during a SIGHUP's reload reports a first load */
	if (pe.action == POLICY_RELOADED ||
	    (pe.action == POLICY_LOADED && M->reloading)) {
		M->reloading = 0;
		service_notify("READY=1", "ready: policy reloaded");
	} else if (pe.action == POLICY_RELOAD_FAILED) {
		M->reloading = 0;
		service_notify("READY=1", "ready: the policy reload failed, "
		                          "the previous policy stays");
	}
	msg_policy_event_free(&pe);
	return 0;
}

/* A master channel died: a live child that misbehaved is ended. */
static void
on_peer_dead(struct peer *p, const char *why)
{
	struct role *r = p->arg;

	if (M->shutting_down)
		return;
	log_warnx("%s channel: %s", r->name, why);
	if (r->pid > 0)
		(void)kill(r->pid, SIGKILL);
	if (r != &M->roles[ROLE_BROKER])
		worker_role_lost((enum role_id)(r - M->roles));
}

static void
startup_timeout(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	int i;

	for (i = 0; i < ROLE__COUNT; i++)
		if (!M->roles[i].ready)
			log_warnx("%s did not report ready within %d s",
			    M->roles[i].name, STARTUP_TIMEOUT_S);
	proc_stop_all();
	fatalx("start-up failed");
}

/* A socketpair for a channel; [0] stays with the master to hand over. */
static void
proc_pair(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		fatal("socketpair");
}

/*
 * Start one role with its channels at the fixed fds: the master's; the
 * broker's to policyd and auditd and the egress proxy's to auditd, made
 * with the serving end (policyd, auditd) and handed to the other when it
 * starts or, after a restart, in PEER_CHANNEL. Then its settings.
 */
static void
proc_spawn(struct role *r)
{
	struct role *pol = &M->roles[ROLE_POLICYD],
	            *aud = &M->roles[ROLE_AUDITD];
	int k = (int)(r - M->roles), mc[2], bc[2], pc[2], n = 1, i = 1;
	char *argv[4] = {(char *)roles[k].program, NULL, NULL, NULL}, *path;
	struct msg_peer_channel ch = {"netproxy"};
	struct fdmap fds[4];

	proc_pair(mc);
	fds[0] = (struct fdmap){mc[1], FD_MASTER};
	if (k == ROLE_BROKER) {
		fds[n++] = (struct fdmap){M->listen_fd, FD_BROKER_LISTEN};
		fds[n++] = (struct fdmap){pol->broker_end, FD_BROKER_POLICYD};
		fds[n++] = (struct fdmap){aud->broker_end, FD_BROKER_AUDITD};
		pol->broker_end = aud->broker_end = M->listen_fd = -1;
	} else if (k == ROLE_NETPROXY) {
		if (aud->proxy_end == -1) { /* a restart: auditd's end anew */
			proc_pair(pc);
			aud->proxy_end = pc[1];
			PEER_SEND_FDS(
			    &aud->peer, &pc[0], 1, msg_peer_channel_enc, &ch);
		}
		fds[n++] = (struct fdmap){aud->proxy_end, FD_NETPROXY_AUDITD};
		aud->proxy_end = -1;
	} else {
		proc_pair(bc);
		fds[n++] = (struct fdmap){bc[1], FD_PEER_BROKER};
		r->broker_end = bc[0];
		if (k == ROLE_AUDITD) {
			proc_pair(pc);
			fds[n++] = (struct fdmap){pc[1], FD_PEER_NETPROXY};
			r->proxy_end = pc[0];
		}
	}
	if (M->foreground)
		argv[i++] = "-d";
	if (M->verbose)
		argv[i++] = "-v";
	xasprintf(&path, "%s/%s", M->helper_dir, roles[k].program);
	/* The child's fds are closed here: the broker's listener too. */
	if ((r->pid = os_spawn(path, argv, fds, n, 0, NULL, 0)) == -1)
		fatal("spawn %s", r->name);
	free(path);
	r->started_ms = now_mono_ms();
	peer_init(
	    &r->peer, M->base, mc[0], r->name, roles[k].table, on_peer_dead, r);
	PEER_SEND(&r->peer, conf_enc_for, roles[k].conf, &M->cfg);
}

/* Start every role, the broker last; await their READY. */
void
proc_start_all(void)
{
	static const enum role_id order[] = {
	    ROLE_POLICYD, ROLE_AUDITD, ROLE_NETPROXY, ROLE_BROKER};
	struct timeval tv = {STARTUP_TIMEOUT_S, 0};
	size_t i;

	for (i = 0; i < ROLE__COUNT; i++) {
		M->roles[i].name = roles[i].name;
		M->roles[i].broker_end = M->roles[i].proxy_end = -1;
	}
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		proc_spawn(&M->roles[order[i]]);
	if ((startup_timer = evtimer_new(M->base, startup_timeout, NULL)) ==
	        NULL ||
	    evtimer_add(startup_timer, &tv) == -1)
		fatalx("startup timer");
}

/*
 * Start a role again; give the broker its new channel to policyd or
 * auditd, and the egress proxy its new one to auditd.
 */
static void
proc_restart(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct role *r = arg, *np = &M->roles[ROLE_NETPROXY];
	struct msg_peer_channel pc = {(char *)r->name};

	if (M->shutting_down || !M->roles[ROLE_BROKER].peer.alive)
		return;
	proc_spawn(r);
	if (r->broker_end != -1)
		PEER_SEND_FDS(&M->roles[ROLE_BROKER].peer, &r->broker_end, 1,
		    msg_peer_channel_enc, &pc);
	if (r->proxy_end != -1 && np->peer.alive)
		PEER_SEND_FDS(
		    &np->peer, &r->proxy_end, 1, msg_peer_channel_enc, &pc);
	else if (r->proxy_end != -1) /* its own restart makes a new pair */
		close(r->proxy_end);
	r->broker_end = r->proxy_end = -1;
	log_info("%s restarted as pid %d", r->name, (int)r->pid);
}

/* Back off: double the delay while the child keeps dying young. */
static void
proc_schedule_restart(struct role *r)
{
	struct timeval tv;

	if (now_mono_ms() - r->started_ms > HEALTHY_MS || r->backoff_ms == 0)
		r->backoff_ms = BACKOFF_MIN_MS;
	else if ((r->backoff_ms *= 2) > BACKOFF_MAX_MS)
		r->backoff_ms = BACKOFF_MAX_MS;
	if (r->restart_ev == NULL &&
	    (r->restart_ev = evtimer_new(M->base, proc_restart, r)) == NULL)
		fatalx("restart timer");
	tv = timeval_ms(r->backoff_ms);
	if (evtimer_add(r->restart_ev, &tv) == -1)
		fatalx("restart timer");
	log_warnx("restarting %s in %llu ms", r->name,
	    (unsigned long long)r->backoff_ms);
}

/* A role's process is gone: fail closed; stop if it was the broker. */
int
proc_child_exited(pid_t pid, int status)
{
	struct role *r = NULL;
	char why[64];
	int i, halted;

	for (i = 0; i < ROLE__COUNT; i++)
		if (M->roles[i].pid == pid)
			r = &M->roles[i];
	if (r == NULL)
		return 0;
	r->pid = 0;
	if (M->shutting_down)
		return 1;
	peer_kill(&r->peer, "child exited");
	log_warnx("%s (pid %d) %s", r->name, (int)pid,
	    wait_status_text(status, why, sizeof(why)));
	/* After peer_kill: a dead auditd's own record waits in the queue. */
	MAUDIT(msg_audit_child_died, r->name, pid, status);
	halted = r == &M->roles[ROLE_AUDITD] && WIFEXITED(status) &&
	         WEXITSTATUS(status) == AUDIT_EXIT_HALT;
	if (r != &M->roles[ROLE_BROKER] && !halted &&
	    M->nready == ROLE__COUNT) {
		if (r == &M->roles[ROLE_NETPROXY])
			log_warnx("netproxy is down: no call reaches the "
			          "network until it is back");
		else
			log_warnx("%s is down: every call it serves is "
			          "refused with %s_unavailable",
			    r->name,
			    r == &M->roles[ROLE_POLICYD] ? "policy" : "audit");
		proc_schedule_restart(r);
		return 1;
	}
	if (halted)
		log_warnx("auditd halted: the audit log cannot be written and "
		          "its action is halt");
	log_warnx("cannot serve without the %s; stopping", r->name);
	M->exit_status = 1;
	proc_stop_all();
	event_base_loopexit(M->base, NULL);
	return 1;
}

/* Ask every child to stop; main() reaps and escalates. */
void
proc_stop_all(void)
{
	int i;

	M->shutting_down = 1;
	worker_role_lost(ROLE_BROKER); /* all of them */
	for (i = 0; i < ROLE__COUNT; i++)
		if (M->roles[i].pid > 0)
			(void)kill(M->roles[i].pid, SIGTERM);
}
