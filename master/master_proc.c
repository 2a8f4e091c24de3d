/*
 * master_proc.c: the roles as a table. Each is re-exec'd (a fresh
 * address space) with its channels at the fixed fds of proto/fds.h, gets
 * its settings as its first message, must say READY with our protocol
 * version in time, and is supervised afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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
static int on_grant(struct peer *p, const struct mp_doc *d);
static int on_policy_event(struct peer *p, const struct mp_doc *d);

/* What each role may send the master. */
static const struct peer_handler broker_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_RUN, 0, worker_on_run},
    {0, 0, NULL},
};
static const struct peer_handler policyd_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_GRANT, 0, on_grant},
    {MSG_POLICY_EVENT, 0, on_policy_event},
    {0, 0, NULL},
};
static const struct peer_handler auditd_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_AUDIT_ACK, 0, worker_on_audit_ack},
    {0, 0, NULL},
};

static const struct {
	const char *name, *program;
	const struct peer_handler *table;
} roles[ROLE__COUNT] = {
    [ROLE_BROKER] = {"broker", "skillbroker-broker", broker_table},
    [ROLE_POLICYD] = {"policyd", "skillbroker-policyd", policyd_table},
    [ROLE_AUDITD] = {"auditd", "skillbroker-auditd", auditd_table},
};

static struct event *startup_timer;

/* READY: right role, right protocol version; all ready ends start-up. */
static int
on_ready(struct peer *p, const struct mp_doc *d)
{
	struct role *r = p->arg;
	struct msg_ready m;
	struct error e;
	struct mp_enc serve;
	int ok;

	if (msg_ready_dec(d, &m, &e) == -1) {
		log_warnx("%s: READY: %s", r->name, e.msg);
		return -1;
	}
	ok = m.version == PROTO_VERSION && strcmp(m.role, r->name) == 0;
	if (!ok)
		log_warnx("%s: READY from \"%s\" protocol %llu, expected %d",
		    r->name, m.role, (unsigned long long)m.version,
		    PROTO_VERSION);
	msg_ready_free(&m);
	if (!ok)
		return -1;
	if (r->ready) { /* a restarted child */
		log_info("%s restarted and ready", r->name);
		if (r == &M->roles[ROLE_AUDITD])
			maudit_flush();
		return 0;
	}
	r->ready = 1;
	if (++M->nready < ROLE__COUNT)
		return 0;
	evtimer_del(startup_timer);
	enc_init(&serve);
	msg_serve_enc(&serve);
	peer_send(&M->roles[ROLE_BROKER].peer, &serve, NULL, 0);
	enc_free(&serve);
	log_info("ready: listening on %s", M->cfg.socket);
	maudit_daemon("daemon.started", NULL);
	return 0;
}

/* GRANT from policyd: keep it for one RUN, and acknowledge. */
static int
on_grant(struct peer *p, const struct mp_doc *d)
{
	struct msg_grant_ack ack;
	struct mp_enc m;
	struct grant g;
	struct error e;

	if (grant_dec(d, &g, &e) == -1) {
		log_warnx("policyd: bad grant: %s", e.msg);
		return -1;
	}
	ack.grant_id = xstrdup(g.grant_id);
	if (!(ack.ok = grant_store_add(&g, &e) == 0))
		log_warnx("grant %s refused: %s", ack.grant_id, e.msg);
	grant_free(&g);
	enc_init(&m);
	msg_grant_ack_enc(&m, &ack);
	peer_send(p, &m, NULL, 0);
	enc_free(&m);
	free(ack.grant_id);
	return 0;
}

/* A policy load or reload, as policyd reports it: into the audit log. */
static int
on_policy_event(struct peer *p, const struct mp_doc *d)
{
	struct msg_policy_event pe;
	struct mp_enc m;
	struct error e;

	(void)p;
	if (msg_policy_event_dec(d, &pe, &e) == -1)
		return -1;
	maudit_begin(&m, policy_event_name((enum policy_event)pe.action),
	    "change",
	    pe.action == POLICY_RELOAD_FAILED ? "failure" : "success");
	enc_kstr(&m, "event.reason", pe.message);
	enc_kuint(&m, "policy.files", pe.files);
	enc_kuint(&m, "policy.rules", pe.rules);
	enc_kuint(&m, "policy.skills", pe.skills);
	maudit_send(&m);
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
	if (r == &M->roles[ROLE_POLICYD])
		grant_store_clear();
	if (r == &M->roles[ROLE_AUDITD])
		worker_audit_lost();
}

static void
startup_timeout(evutil_socket_t fd, short ev, void *arg)
{
	int i;

	(void)fd;
	(void)ev;
	(void)arg;
	for (i = 0; i < ROLE__COUNT; i++)
		if (!M->roles[i].ready)
			log_warnx("%s did not report ready within %d s",
			    M->roles[i].name, STARTUP_TIMEOUT_S);
	proc_stop_all();
	fatalx("start-up failed");
}

/* In a child: each fd to its fixed number, every other fd closed, exec. */
void
proc_exec(
    const char *program, int foreground, const struct fdmap *fds, int nfds)
{
	char *argv[4], *path;
	int tmp[8], i, top = 0, n = 1, devnull;
	sigset_t none;

	if (nfds > 8)
		_exit(126);
	for (i = 0; i < nfds; i++)
		if ((tmp[i] = fcntl(fds[i].fd, F_DUPFD, 64)) == -1)
			_exit(126);
	if ((devnull = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(devnull, 0) == -1)
		_exit(126);
	for (i = 0; i < nfds; i++) {
		if (dup2(tmp[i], fds[i].to) == -1)
			_exit(126);
		top = fds[i].to > top ? fds[i].to : top;
	}
	close_from(top + 1);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	argv[0] = (char *)program;
	if (foreground)
		argv[n++] = "-d";
	if (M->verbose)
		argv[n++] = "-v";
	argv[n] = NULL;
	if (asprintf(&path, "%s/%s", M->helper_dir, program) == -1)
		_exit(126);
	execv(path, argv);
	_exit(127);
}

/* Each role's settings: only what it needs (proto/msg_conf.c). */
static void
proc_send_conf(struct role *r)
{
	struct config *c = &M->cfg;
	struct conf_broker cb;
	struct conf_policyd cp;
	struct conf_auditd ca;
	struct mp_enc m;
	char *root = NULL, *work = NULL, *data = NULL;

	enc_init(&m);
	if (r == &M->roles[ROLE_BROKER]) {
		xasprintf(&root, "%s/empty", c->state_dir);
		cb = (struct conf_broker){c->uid[USER_BROKER],
		    c->gid[USER_BROKER], root, c->max_frame_bytes,
		    c->max_clients};
		conf_broker_enc(&m, &cb);
	} else if (r == &M->roles[ROLE_POLICYD]) {
		xasprintf(&work, "%s/work", c->state_dir);
		xasprintf(&data, "%s/data", c->state_dir);
		cp = (struct conf_policyd){c->uid[USER_POLICYD],
		    c->gid[USER_POLICYD], c->skills_dirs, c->nskills_dirs,
		    c->policy_dir, work, data, c->worker_network_host,
		    c->limits};
		conf_policyd_enc(&m, &cp);
	} else {
		ca = (struct conf_auditd){c->uid[USER_AUDITD],
		    c->gid[USER_AUDITD], c->audit_path, c->audit_head,
		    c->audit};
		conf_auditd_enc(&m, &ca);
	}
	peer_send(&r->peer, &m, NULL, 0);
	enc_free(&m);
	free(root);
	free(work);
	free(data);
}

/* Start one role: fork, place its fds, exec; then its settings. */
static void
proc_spawn(struct role *r, int master_end, const struct fdmap *fds, int nfds)
{
	if ((r->pid = fork()) == -1)
		fatal("fork %s", r->name);
	if (r->pid == 0)
		proc_exec(r->program, M->foreground, fds, nfds);
	r->started_ms = now_mono_ms();
	peer_init(
	    &r->peer, M->base, master_end, r->name, r->table, on_peer_dead, r);
	proc_send_conf(r);
}

static void
socketpair_or_die(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		fatal("socketpair");
}

/* Wire only the pairs that must talk, start each role, await READY. */
void
proc_start_all(void)
{
	int mb[2], mp[2], ma[2], bp[2], ba[2], i;
	struct timeval tv = {STARTUP_TIMEOUT_S, 0};

	for (i = 0; i < ROLE__COUNT; i++) {
		M->roles[i].name = roles[i].name;
		M->roles[i].program = roles[i].program;
		M->roles[i].table = roles[i].table;
	}
	socketpair_or_die(mb);
	socketpair_or_die(mp);
	socketpair_or_die(ma);
	socketpair_or_die(bp);
	socketpair_or_die(ba);
	proc_spawn(&M->roles[ROLE_BROKER], mb[0],
	    (struct fdmap[]){{mb[1], FD_MASTER},
	        {M->listen_fd, FD_BROKER_LISTEN}, {bp[0], FD_BROKER_POLICYD},
	        {ba[0], FD_BROKER_AUDITD}},
	    4);
	proc_spawn(&M->roles[ROLE_POLICYD], mp[0],
	    (struct fdmap[]){{mp[1], FD_MASTER}, {bp[1], FD_PEER_BROKER}}, 2);
	proc_spawn(&M->roles[ROLE_AUDITD], ma[0],
	    (struct fdmap[]){{ma[1], FD_MASTER}, {ba[1], FD_PEER_BROKER}}, 2);
	close(mb[1]);
	close(mp[1]);
	close(ma[1]);
	close(bp[0]);
	close(bp[1]);
	close(ba[0]);
	close(ba[1]);
	close(M->listen_fd); /* only the broker accepts */
	M->listen_fd = -1;
	if ((startup_timer = evtimer_new(M->base, startup_timeout, NULL)) ==
	        NULL ||
	    evtimer_add(startup_timer, &tv) == -1)
		fatalx("startup timer");
}

/* Start policyd or auditd again and give the broker its new channel. */
static void
proc_restart(evutil_socket_t fd, short ev, void *arg)
{
	struct role *r = arg;
	struct msg_peer_channel pc = {(char *)r->name};
	struct mp_enc m;
	int mc[2], bc[2];

	(void)fd;
	(void)ev;
	if (M->shutting_down || !M->roles[ROLE_BROKER].peer.alive)
		return;
	socketpair_or_die(mc);
	socketpair_or_die(bc);
	proc_spawn(r, mc[0],
	    (struct fdmap[]){{mc[1], FD_MASTER}, {bc[1], FD_PEER_BROKER}}, 2);
	close(mc[1]);
	close(bc[1]);
	enc_init(&m);
	msg_peer_channel_enc(&m, &pc);
	peer_send(&M->roles[ROLE_BROKER].peer, &m, &bc[0], 1);
	enc_free(&m);
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
	tv.tv_sec = (time_t)(r->backoff_ms / 1000);
	tv.tv_usec = (suseconds_t)(r->backoff_ms % 1000) * 1000;
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
	maudit_child_died(
	    r->name, pid, status); /* after: a dead auditd queues */
	halted = r == &M->roles[ROLE_AUDITD] && WIFEXITED(status) &&
	         WEXITSTATUS(status) == AUDIT_EXIT_HALT;
	if (r != &M->roles[ROLE_BROKER] && !halted &&
	    M->nready == ROLE__COUNT) {
		log_warnx("%s is down: every call it serves is refused with "
		          "%s_unavailable",
		    r->name, r == &M->roles[ROLE_POLICYD] ? "policy" : "audit");
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
	worker_kill_all();
	for (i = 0; i < ROLE__COUNT; i++)
		if (M->roles[i].pid > 0)
			(void)kill(M->roles[i].pid, SIGTERM);
}
