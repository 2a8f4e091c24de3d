/*
 * master_proc.c: the privsep children as a table. Each is re-exec'd
 * (fresh address space) with its channels at fixed fds, must say READY
 * with our protocol version in time, and is supervised afterwards.
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
#include "master.h"

#define STARTUP_TIMEOUT_S 10
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000
#define HEALTHY_MS 60000

static int on_ready(struct peer *p, const struct mp_doc *d);
static int on_grant(struct peer *p, const struct mp_doc *d);
static int on_policy_event(struct peer *p, const struct mp_doc *d);

const struct peer_handler broker_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_RUN, 0, worker_on_run},
    {0, 0, NULL},
};
const struct peer_handler policyd_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_GRANT, 0, on_grant},
    {MSG_POLICY_EVENT, 0, on_policy_event},
    {0, 0, NULL},
};
const struct peer_handler auditd_table[] = {
    {MSG_READY, PH_ONCE, on_ready},
    {MSG_AUDIT_ACK, 0, worker_on_audit_ack},
    {0, 0, NULL},
};

static struct event *startup_timer;

struct role *
proc_role_of(struct peer *p)
{
	return p->arg;
}

/* READY: right role, right protocol version; all ready ends start-up. */
static int
on_ready(struct peer *p, const struct mp_doc *d)
{
	struct role *r = proc_role_of(p);
	struct msg_ready m;
	struct error e;

	if (msg_ready_dec(d, &m, &e) == -1) {
		log_warnx("%s: READY: %s", r->name, e.msg);
		return -1;
	}
	if (m.version != PROTO_VERSION || strcmp(m.role, r->name) != 0) {
		log_warnx("%s: READY from \"%s\" protocol %llu, expected "
		          "protocol %d",
		    r->name, m.role, (unsigned long long)m.version,
		    PROTO_VERSION);
		msg_ready_free(&m);
		return -1;
	}
	msg_ready_free(&m);
	if (r->ready) { /* a restarted child */
		log_info("%s restarted and ready", r->name);
		if (r - M->roles == ROLE_AUDITD)
			maudit_flush();
		return 0;
	}
	r->ready = 1;
	if (++M->nready == ROLE__COUNT) {
		struct mp_enc serve;

		evtimer_del(startup_timer);
		enc_init(&serve);
		msg_begin(&serve, MSG_SERVE, 0);
		peer_send(&M->roles[ROLE_BROKER].peer, &serve, NULL, 0);
		enc_free(&serve);
		log_info("ready: listening on %s", M->cfg.socket);
		maudit_daemon_started();
	}
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
	ack.ok = grant_store_add(&g, &e) == 0;
	if (!ack.ok)
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
	static const char *const keys[] = {
	    "t", "action", "ok", "message", "files", "rules", "skills", NULL};
	static const char *const actions[] = {
	    "policy.loaded", "policy.reloaded", "policy.reload_failed", NULL};
	uint64_t files, rules, skills;
	char *action = NULL, *message = NULL;
	struct maudit a;
	struct error e;
	int ok, i, known = 0;

	(void)p;
	if (mp_only_keys(d->root, keys, &e) ||
	    mp_str(d->root, "action", 1, 32, &action, &e) ||
	    mp_bool(d->root, "ok", 1, &ok, &e) ||
	    mp_str(d->root, "message", 1, REASON_MAX_LEN, &message, &e) ||
	    mp_uint(d->root, "files", 1, UINT32_MAX, &files, &e) ||
	    mp_uint(d->root, "rules", 1, UINT32_MAX, &rules, &e) ||
	    mp_uint(d->root, "skills", 1, UINT32_MAX, &skills, &e)) {
		free(action);
		free(message);
		return -1;
	}
	for (i = 0; actions[i] != NULL; i++)
		known |= strcmp(actions[i], action) == 0;
	if (known) {
		maudit_begin(&a, action, "change", ok ? "success" : "failure");
		maudit_str(&a, "event.reason", message);
		maudit_uint(&a, "policy.files", files);
		maudit_uint(&a, "policy.rules", rules);
		maudit_uint(&a, "policy.skills", skills);
		maudit_send(&a);
	}
	free(action);
	free(message);
	return known ? 0 : -1;
}

/* A master channel died: a live child that misbehaved is ended. */
static void
on_peer_dead(struct peer *p, const char *why)
{
	struct role *r = proc_role_of(p);

	if (M->shutting_down)
		return;
	log_warnx("%s channel: %s", r->name, why);
	if (r->pid > 0)
		kill(r->pid, SIGKILL);
	if (r - M->roles == ROLE_POLICYD)
		grant_store_clear();
	if (r - M->roles == ROLE_AUDITD)
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

/* In the child: move fds to 3.. in order, close the rest, exec. */
static void __attribute__((noreturn))
proc_exec_child(const char *path, char *const argv[], const int *fds, int nfds)
{
	int tmp[8], i, devnull;

	for (i = 0; i < nfds; i++)
		if ((tmp[i] = fcntl(fds[i], F_DUPFD, 64)) == -1)
			_exit(126);
	for (i = 0; i < nfds; i++)
		if (dup2(tmp[i], FD_MASTER + i) == -1)
			_exit(126);
	if ((devnull = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(devnull, 0) == -1)
		_exit(126);
	close_from(FD_MASTER + nfds);
	execv(path, argv);
	_exit(127);
}

static pid_t
proc_spawn(struct role *r, char **argv, const int *fds, int nfds)
{
	char *path;
	pid_t pid;

	xasprintf(&path, "%s/%s", M->helper_dir, r->program);
	argv[0] = path;
	if ((pid = fork()) == -1)
		fatal("fork %s", r->name);
	if (pid == 0)
		proc_exec_child(path, argv, fds, nfds);
	free(path);
	return pid;
}

/* Append the common flags and NULL; argv has room. */
static void
argv_common(char **argv, int *n)
{
	static char uid[16], gid[16];

	snprintf(uid, sizeof(uid), "%u", (unsigned)M->cfg.privsep_uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned)M->cfg.privsep_gid);
	argv[(*n)++] = "-u";
	argv[(*n)++] = uid;
	argv[(*n)++] = "-g";
	argv[(*n)++] = gid;
	if (M->foreground)
		argv[(*n)++] = "-d";
	if (M->verbose)
		argv[(*n)++] = "-v";
	argv[*n] = NULL;
}

static char *
numstr(uint64_t v)
{
	char *s;

	xasprintf(&s, "%llu", (unsigned long long)v);
	return s;
}

static void
spawn_broker(int master_end, int pol, int aud)
{
	char *argv[32], *empty;
	int n = 1, fds[4] = {master_end, M->listen_fd, pol, aud};
	char *frame = numstr(M->cfg.max_frame_bytes);
	char *clients = numstr(M->cfg.max_clients);

	xasprintf(&empty, "%s/empty", M->cfg.state_dir);
	argv[n++] = "-r";
	argv[n++] = empty;
	argv[n++] = "-F";
	argv[n++] = frame;
	argv[n++] = "-C";
	argv[n++] = clients;
	argv_common(argv, &n);
	M->roles[ROLE_BROKER].started_ms = now_mono_ms();
	M->roles[ROLE_BROKER].pid =
	    proc_spawn(&M->roles[ROLE_BROKER], argv, fds, 4);
	free(empty);
	free(frame);
	free(clients);
}

static void
spawn_policyd(int master_end, int brk)
{
	char *argv[64 + 2 * 64], *vals[8], *work, *data;
	const struct limits *l = &M->cfg.limits;
	int n = 1, fds[2] = {master_end, brk};
	size_t i;

	xasprintf(&work, "%s/work", M->cfg.state_dir);
	xasprintf(&data, "%s/data", M->cfg.state_dir);
	vals[0] = numstr(l->timeout_ms);
	vals[1] = numstr(l->max_timeout_ms);
	vals[2] = numstr(l->output_bytes);
	vals[3] = numstr(l->memory_mb);
	vals[4] = numstr(l->pids);
	vals[5] = numstr(l->fsize_mb);
	vals[6] = numstr(l->nofile);
	for (i = 0; i < M->cfg.nskills_dirs; i++) {
		argv[n++] = "-S";
		argv[n++] = M->cfg.skills_dirs[i];
	}
	argv[n++] = "-P";
	argv[n++] = M->cfg.policy_dir;
	argv[n++] = "-W";
	argv[n++] = work;
	argv[n++] = "-D";
	argv[n++] = data;
	if (M->cfg.worker_network_host)
		argv[n++] = "-N";
	argv[n++] = "-L";
	xasprintf(&vals[7], "%s,%s,%s,%s,%s,%s,%s", vals[0], vals[1], vals[2],
	    vals[3], vals[4], vals[5], vals[6]);
	argv[n++] = vals[7];
	argv_common(argv, &n);
	M->roles[ROLE_POLICYD].started_ms = now_mono_ms();
	M->roles[ROLE_POLICYD].pid =
	    proc_spawn(&M->roles[ROLE_POLICYD], argv, fds, 2);
	for (i = 0; i < 8; i++)
		free(vals[i]);
	free(work);
	free(data);
}

/* auditd: the log, the head file and the audit settings, by name. */
static void
spawn_auditd(int master_end, int brk)
{
	const struct audit_settings *s = &M->cfg.audit;
	char *argv[32], *freq = numstr(s->freq);
	char *maxb = numstr(s->max_log_file), *num = numstr(s->num_logs);
	int n = 1, fds[2] = {master_end, brk};

	argv[n++] = "-l";
	argv[n++] = M->cfg.audit_path;
	argv[n++] = "-H";
	argv[n++] = M->cfg.audit_head;
	argv[n++] = "-F";
	argv[n++] = (char *)audit_flush_names[s->flush];
	argv[n++] = "-q";
	argv[n++] = freq;
	argv[n++] = "-m";
	argv[n++] = maxb;
	argv[n++] = "-a";
	argv[n++] = (char *)audit_max_action_names[s->max_log_file_action];
	argv[n++] = "-n";
	argv[n++] = num;
	argv[n++] = "-f";
	argv[n++] = (char *)audit_fail_action_names[s->disk_full_action];
	argv[n++] = "-e";
	argv[n++] = (char *)audit_fail_action_names[s->disk_error_action];
	argv_common(argv, &n);
	M->roles[ROLE_AUDITD].started_ms = now_mono_ms();
	M->roles[ROLE_AUDITD].pid =
	    proc_spawn(&M->roles[ROLE_AUDITD], argv, fds, 2);
	free(freq);
	free(maxb);
	free(num);
}

static void
socketpair_or_die(int sv[2])
{
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		fatal("socketpair");
}

/* Wire only the pairs that must talk, start each child, await READY. */
void
proc_start_all(void)
{
	static const struct {
		const char *name, *program;
	} def[] = {
	    [ROLE_BROKER] = {"broker", "skillbroker-broker"},
	    [ROLE_POLICYD] = {"policyd", "skillbroker-policyd"},
	    [ROLE_AUDITD] = {"auditd", "skillbroker-auditd"},
	};
	const struct peer_handler *tables[] = {
	    broker_table, policyd_table, auditd_table};
	int mb[2], mp[2], ma[2], bp[2], ba[2], i;
	struct timeval tv = {STARTUP_TIMEOUT_S, 0};

	for (i = 0; i < ROLE__COUNT; i++) {
		M->roles[i].name = def[i].name;
		M->roles[i].program = def[i].program;
		M->roles[i].table = tables[i];
	}
	socketpair_or_die(mb);
	socketpair_or_die(mp);
	socketpair_or_die(ma);
	socketpair_or_die(bp);
	socketpair_or_die(ba);
	spawn_broker(mb[1], bp[0], ba[0]);
	spawn_policyd(mp[1], bp[1]);
	spawn_auditd(ma[1], ba[1]);
	close(mb[1]);
	close(mp[1]);
	close(ma[1]);
	close(bp[0]);
	close(bp[1]);
	close(ba[0]);
	close(ba[1]);
	close(M->listen_fd); /* only the broker accepts */
	M->listen_fd = -1;
	peer_init(&M->roles[ROLE_BROKER].peer, M->base, mb[0], "broker",
	    broker_table, on_peer_dead, &M->roles[ROLE_BROKER]);
	peer_init(&M->roles[ROLE_POLICYD].peer, M->base, mp[0], "policyd",
	    policyd_table, on_peer_dead, &M->roles[ROLE_POLICYD]);
	peer_init(&M->roles[ROLE_AUDITD].peer, M->base, ma[0], "auditd",
	    auditd_table, on_peer_dead, &M->roles[ROLE_AUDITD]);
	startup_timer = evtimer_new(M->base, startup_timeout, NULL);
	evtimer_add(startup_timer, &tv);
}

/* Start policyd or auditd again and give the broker its new channel. */
static void
proc_restart(evutil_socket_t fd, short ev, void *arg)
{
	struct role *r = arg;
	int i = (int)(r - M->roles), mc[2], bc[2];
	struct mp_enc m;

	(void)fd;
	(void)ev;
	if (M->shutting_down || !M->roles[ROLE_BROKER].peer.alive)
		return;
	socketpair_or_die(mc);
	socketpair_or_die(bc);
	if (i == ROLE_POLICYD)
		spawn_policyd(mc[1], bc[1]);
	else
		spawn_auditd(mc[1], bc[1]);
	close(mc[1]);
	close(bc[1]);
	peer_init(&r->peer, M->base, mc[0], r->name, r->table, on_peer_dead, r);
	enc_init(&m);
	msg_peer_channel_enc(&m, r->name);
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
	if (r->restart_ev == NULL)
		r->restart_ev = evtimer_new(M->base, proc_restart, r);
	tv.tv_sec = (time_t)(r->backoff_ms / 1000);
	tv.tv_usec = (suseconds_t)(r->backoff_ms % 1000) * 1000;
	evtimer_add(r->restart_ev, &tv);
	log_warnx("restarting %s in %llu ms", r->name,
	    (unsigned long long)r->backoff_ms);
}

/* Log how a privsep child ended, and audit it. */
static void
proc_died_log(struct role *r, pid_t pid, int status)
{
	char what[64];

	if (WIFSIGNALED(status))
		snprintf(what, sizeof(what), "killed by signal %d",
		    WTERMSIG(status));
	else
		snprintf(what, sizeof(what), "exited with status %d",
		    WEXITSTATUS(status));
	log_warnx("%s (pid %d) %s", r->name, (int)pid, what);
	maudit_child_died(r->name, pid,
	    WIFEXITED(status) ? WEXITSTATUS(status) : -1,
	    WIFSIGNALED(status) ? WTERMSIG(status) : 0, what);
}

/* A privsep child is gone: fail closed, and stop if it was the broker. */
void
proc_child_exited(pid_t pid, int status)
{
	int i, halted;

	for (i = 0; i < ROLE__COUNT; i++) {
		struct role *r = &M->roles[i];
		if (r->pid != pid)
			continue;
		r->pid = 0;
		if (M->shutting_down)
			return;
		peer_kill(&r->peer, "child exited");
		proc_died_log(r, pid, status); /* after: a dead auditd queues */
		if (i == ROLE_POLICYD)
			log_warnx("policyd is down: every invoke is refused "
			          "with policy_unavailable");
		if (i == ROLE_AUDITD)
			log_warnx("auditd is down: every invoke is refused "
			          "with audit_unavailable");
		halted = i == ROLE_AUDITD && WIFEXITED(status) &&
		         WEXITSTATUS(status) == AUDIT_EXIT_HALT;
		if (halted)
			log_warnx("auditd halted: the audit log cannot be "
			          "written and its action is halt");
		if (i == ROLE_BROKER || M->nready < ROLE__COUNT || halted) {
			log_warnx(
			    "cannot serve without the %s; stopping", r->name);
			M->exit_status = 1;
			proc_stop_all();
			event_base_loopexit(M->base, NULL);
		} else
			proc_schedule_restart(r);
		return;
	}
	log_debug("reaped unknown child %d", (int)pid);
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
			kill(M->roles[i].pid, SIGTERM);
}
