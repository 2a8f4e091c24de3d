/*
 * master_worker.c: one worker per granted RUN. The worker is re-exec'd
 * as pid 1 of fresh namespaces, builds its sandbox, says "ready" on its
 * status pipe and waits. Only once auditd acknowledged worker.started
 * (durable) does the master send the go byte and hand the broker the
 * worker's pipes. When the skill has exited, the worker's init lists the
 * files it wrote for the broker; the master only reaps and reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/fds.h"
#include "../proto/frame.h"
#include "master.h"

#define BUILD_TIMEOUT_MS 10000
#define SCAN_TIMEOUT_MS 5000 /* the worker lists what the call wrote */
#define WORKERS_MAX 1024

enum wstate {
	W_FREE,
	W_BUILDING, /* sandbox under construction */
	W_AUDITING, /* ready; worker.started not yet durable */
	W_RUNNING,  /* the skill runs */
	W_SCANNING, /* the skill is gone; the worker lists its files */
	W_LOST      /* its cgroup could not be removed: uid never reused */
};

struct worker {
	enum wstate st;
	uint64_t ref; /* the broker's call */
	struct grant *g;
	pid_t pid;
	uid_t uid;
	uint64_t cg_id; /* this call's cgroups, never reused */
	int spec_fd, status_fd;
	int pipes[RUN_STARTED_FDS]; /* the broker's ends */
	struct event *status_ev, *timer;
	char status[256];
	size_t status_len;
	uint64_t audit_ref, t_go, duration_ms;
	int timed_out, have_final, final_exit, final_signal;
	enum err_type fail;
	char failmsg[ERROR_MSG_MAX];
};

static struct worker *workers;
static size_t nworkers;
static uint64_t cg_counter;

void
worker_init(void)
{
	nworkers = (size_t)M->cfg.worker_uid_last - M->cfg.worker_uid_first + 1;
	if (nworkers > WORKERS_MAX)
		nworkers = WORKERS_MAX;
	workers = xcalloc(nworkers, sizeof(*workers));
	workdir_init();
}

/* Tell the broker how a RUN ended, or why it never started. */
static void
send_exited(uint64_t ref, struct msg_run_exited *x)
{
	struct mp_enc m;

	x->ref = ref;
	enc_init(&m);
	msg_run_exited_enc(&m, x);
	peer_send(&M->roles[ROLE_BROKER].peer, &m, NULL, 0);
	enc_free(&m);
}

static void
refuse_run(uint64_t ref, enum err_type err, const char *msg)
{
	struct msg_run_exited x;

	memset(&x, 0, sizeof(x));
	x.exit_code = -1;
	x.err = err;
	x.message = (char *)msg;
	send_exited(ref, &x);
}

/* worker.started or worker.exited; its ref, 0 if auditd is down. */
static uint64_t
audit_worker(struct worker *w, const char *action, const char *type,
    const char *outcome, const struct msg_run_exited *x)
{
	struct audit_call who = {NULL, w->g->principal_uid, -1, -1,
	    w->g->session, w->g->skill, w->g->command, NULL, w->g->grant_id};
	struct mp_enc m;
	uint64_t ref;

	if (!M->roles[ROLE_AUDITD].peer.alive)
		return 0;
	ref = maudit_begin(&m, action, type, outcome);
	msg_audit_call(&m, &who);
	enc_kint(&m, "worker.pid", w->pid);
	enc_kuint(&m, "worker.uid", w->uid);
	if (x != NULL) {
		enc_kint(&m, "process.exit_code", x->exit_code);
		enc_kint(&m, "process.signal", x->signal);
		enc_kuint(&m, "event.duration", x->duration_ms * 1000000ULL);
		enc_kbool(&m, "worker.timed_out", x->limit == LIMIT_TIMEOUT);
		enc_kuint(&m, "worker.cpu_ms", x->cpu_ms);
		enc_kuint(&m, "worker.max_rss_kb", x->max_rss_kb);
		enc_kstr(
		    &m, "error.type", err_type_name((enum err_type)x->err));
		enc_kstr(&m, "error.message", x->message);
	}
	maudit_send(&m);
	return ref;
}

static void
close_if(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/* The worker is pid 1 of its namespace: its death ends every process. */
static void
worker_kill(struct worker *w)
{
	if (w->pid > 0)
		(void)kill(w->pid, SIGKILL);
	cgroup_kill(w->cg_id);
}

/* Fail the call; the reaper reports it. */
static void
worker_fail(struct worker *w, enum err_type err, const char *msg)
{
	if (w->fail == ERR_NONE) {
		w->fail = err;
		snprintf(w->failmsg, sizeof(w->failmsg), "%s", msg);
	}
	worker_kill(w);
}

static void
worker_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)ev;
	if (w->st == W_RUNNING) {
		w->timed_out = 1;
		worker_kill(w);
	} else if (w->st == W_SCANNING) {
		log_warnx(
		    "worker %d: listing the files took too long", (int)w->pid);
		worker_kill(w);
	} else if (w->st == W_AUDITING)
		worker_fail(w, ERR_AUDIT_UNAVAILABLE,
		    "the audit record was not acknowledged in time");
	else
		worker_fail(w, ERR_SANDBOX_FAILED, "worker setup timed out");
}

static void
arm_timer(struct worker *w, uint64_t ms)
{
	struct timeval tv = {
	    (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};

	evtimer_del(w->timer);
	if (evtimer_add(w->timer, &tv) == -1)
		fatalx("worker timer");
}

/* The skill has ended: its wall clock stops, the file listing starts. */
static void
worker_final(struct worker *w, const char *line, int v)
{
	w->have_final = 1;
	if (line[0] == 'e')
		w->final_exit = v;
	else
		w->final_signal = v;
	w->duration_ms = now_mono_ms() - w->t_go;
	w->st = W_SCANNING;
	arm_timer(w, SCAN_TIMEOUT_MS);
}

/*
 * Status lines from the worker: "ready", "fail STEP: why", and once the
 * skill ran, "exit N" or "signal N" from the worker's init.
 */
static void
worker_status_line(struct worker *w, const char *line)
{
	int v;

	if (strcmp(line, "ready") == 0 && w->st == W_BUILDING) {
		w->st = W_AUDITING;
		if ((w->audit_ref = audit_worker(
		         w, "worker.started", "start", "unknown", NULL)) == 0)
			worker_fail(
			    w, ERR_AUDIT_UNAVAILABLE, "auditd is not running");
	} else if (w->st == W_RUNNING &&
	           (sscanf(line, "exit %d", &v) == 1 ||
	               sscanf(line, "signal %d", &v) == 1) &&
	           v >= 0 && v <= 255)
		worker_final(w, line, v);
	else if (strncmp(line, "fail ", 5) == 0)
		worker_fail(w, ERR_SANDBOX_FAILED, line + 5);
	else
		worker_fail(w, ERR_SANDBOX_FAILED, "garbled worker status");
}

static void
worker_status_read(evutil_socket_t fd, short ev, void *arg)
{
	struct worker *w = arg;
	ssize_t n;
	char *nl;

	(void)ev;
	n = read(fd, w->status + w->status_len,
	    sizeof(w->status) - 1 - w->status_len);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) { /* the worker is gone */
		event_del(w->status_ev);
		return;
	}
	w->status_len += (size_t)n;
	w->status[w->status_len] = '\0';
	while ((nl = strchr(w->status, '\n')) != NULL) {
		*nl = '\0';
		worker_status_line(w, w->status);
		w->status_len -= (size_t)(nl + 1 - w->status);
		memmove(w->status, nl + 1, w->status_len + 1);
	}
	if (w->status_len == sizeof(w->status) - 1)
		worker_fail(w, ERR_SANDBOX_FAILED, "garbled worker status");
}

static struct worker *
worker_slot(void)
{
	size_t i;

	for (i = 0; i < nworkers; i++)
		if (workers[i].st == W_FREE) {
			memset(&workers[i], 0, sizeof(workers[i]));
			workers[i].uid = (uid_t)(M->cfg.worker_uid_first + i);
			workers[i].spec_fd = workers[i].status_fd = -1;
			memset(workers[i].pipes, -1, sizeof(workers[i].pipes));
			return &workers[i];
		}
	return NULL;
}

/* What only the master knows: where the private root goes, and more. */
static void
grant_fill_host(struct grant *g, uid_t uid)
{
	size_t i;

	g->worker_uid = g->worker_gid = uid;
	xasprintf(&g->root_dir, "%s/root", M->cfg.state_dir);
	g->sys_paths = xcalloc(M->cfg.nsys_paths + 1, sizeof(char *));
	for (i = 0; i < M->cfg.nsys_paths; i++)
		g->sys_paths[i] = xstrdup(M->cfg.sys_paths[i]);
	g->nsys_paths = M->cfg.nsys_paths;
	g->tmp_mb = M->cfg.worker_tmp_mb;
	/* With a memory cgroup its OOM kill is the limit; AS a backstop. */
	g->as_mb = cgroup_active() ? g->memory_mb * 4 : g->memory_mb;
	g->net_host = g->nperm[PERM_NETWORK] > 0 && M->cfg.worker_network_host;
}

/*
 * The worker's pipes: its fd number for each, and whether it reads it.
 * The first RUN_STARTED_FDS go to the broker (stdin, stdout, stderr,
 * report), then the spec (the master writes) and the status (it reads).
 */
static const struct {
	int to, child_reads;
} wpipes[] = {{0, 1}, {1, 0}, {2, 0}, {FD_WORKER_REPORT, 0},
    {FD_WORKER_SPEC, 1}, {FD_WORKER_STATUS, 0}};
#define NWPIPES (int)(sizeof(wpipes) / sizeof(wpipes[0]))

/* Fork the worker into fresh namespaces and hand it the spec. */
static int
worker_spawn(struct worker *w, struct error *e)
{
	int p[NWPIPES][2], ours[NWPIPES], i, n;
	struct fdmap fds[NWPIPES];
	struct mp_enc m;
	struct error fe;

	for (n = 0; n < NWPIPES; n++)
		if (pipe2(p[n], O_CLOEXEC) == -1) {
			error_set(e, ERR_INTERNAL, "pipe: %s", strerror(errno));
			while (n-- > 0) {
				close(p[n][0]);
				close(p[n][1]);
			}
			return -1;
		}
	for (i = 0; i < NWPIPES; i++) {
		fds[i].fd = p[i][wpipes[i].child_reads ? 0 : 1];
		fds[i].to = wpipes[i].to;
		ours[i] = p[i][wpipes[i].child_reads ? 1 : 0];
	}
	/* A fork-like clone: the worker starts as pid 1 of new namespaces. */
	w->pid = (pid_t)syscall(SYS_clone,
	    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
	        CLONE_NEWCGROUP | (w->g->net_host ? 0 : CLONE_NEWNET) | SIGCHLD,
	    NULL, NULL, NULL, 0);
	if (w->pid == 0)
		proc_exec("skillbroker-worker", 0, fds, NWPIPES);
	for (i = 0; i < NWPIPES; i++)
		close(fds[i].fd);
	if (w->pid == -1) {
		for (i = 0; i < NWPIPES; i++)
			close(ours[i]);
		return error_set(
		    e, ERR_SANDBOX_FAILED, "clone: %s", strerror(errno));
	}
	memcpy(w->pipes, ours, sizeof(w->pipes));
	w->spec_fd = ours[RUN_STARTED_FDS];
	w->status_fd = ours[RUN_STARTED_FDS + 1];
	/* In its cgroups before it reads its spec, so nothing escapes them. */
	w->cg_id = ++cg_counter;
	if (cgroup_enter(w->cg_id, w->pid, w->g->memory_mb, w->g->pids, &fe) ==
	    -1)
		worker_fail(w, ERR_SANDBOX_FAILED, fe.msg);
	enc_init(&m);
	spec_enc(&m, w->g);
	if (frame_send(w->spec_fd, m.sb.data, m.sb.size, &fe) == -1)
		worker_fail(w, ERR_SANDBOX_FAILED, "could not pass the spec");
	enc_free(&m);
	if (set_nonblock(w->status_fd) == -1)
		fatal("nonblock");
	w->status_ev = event_new(
	    M->base, w->status_fd, EV_READ | EV_PERSIST, worker_status_read, w);
	w->timer = evtimer_new(M->base, worker_timer, w);
	if (w->status_ev == NULL || w->timer == NULL ||
	    event_add(w->status_ev, NULL) == -1)
		fatalx("worker events");
	arm_timer(w, BUILD_TIMEOUT_MS);
	w->st = W_BUILDING;
	return 0;
}

static void
worker_close(struct worker *w)
{
	int i;

	if (w->status_ev != NULL)
		event_free(w->status_ev);
	if (w->timer != NULL)
		event_free(w->timer);
	close_if(&w->status_fd);
	close_if(&w->spec_fd);
	for (i = 0; i < RUN_STARTED_FDS; i++)
		close_if(&w->pipes[i]);
	if (w->g != NULL) {
		grant_free(w->g);
		free(w->g);
		w->g = NULL;
	}
}

/*
 * RUN from the broker: only a grant policyd gave us, only once, and one
 * call of a session at a time (the broker keeps the line).
 */
int
worker_on_run(struct peer *p, const struct mp_doc *d)
{
	struct msg_run r;
	struct worker *w;
	struct grant *g;
	struct error e;

	(void)p;
	if (msg_run_dec(d, &r, &e) == -1) {
		log_warnx("broker: bad RUN: %s", e.msg);
		return -1;
	}
	g = grant_store_take(r.grant_id);
	if (g == NULL) {
		log_warnx("RUN names grant \"%s\", which is unknown, used or "
		          "expired: refused",
		    r.grant_id);
		refuse_run(r.ref, ERR_PERMISSION_DENIED,
		    "no such grant: unknown, already used, or expired");
	} else if (g->nperm[PERM_NETWORK] > 0 && !M->cfg.worker_network_host)
		refuse_run(r.ref, ERR_SANDBOX_FAILED,
		    "the grant asks for network access, which this host "
		    "does not provide");
	else if (!M->roles[ROLE_AUDITD].peer.alive)
		refuse_run(
		    r.ref, ERR_AUDIT_UNAVAILABLE, "auditd is not running");
	else if ((w = worker_slot()) == NULL)
		refuse_run(r.ref, ERR_OVERLOADED, "every worker uid is in use");
	else if (workdir_take(g->work_dir, &e) == -1)
		refuse_run(r.ref, e.type, e.msg);
	else {
		w->ref = r.ref;
		w->g = g;
		g = NULL;
		grant_fill_host(w->g, w->uid);
		if (worker_spawn(w, &e) == -1) {
			refuse_run(r.ref, e.type, e.msg);
			workdir_release(w->g->work_dir);
			worker_close(w);
			memset(w, 0, sizeof(*w));
		}
	}
	if (g != NULL) {
		grant_free(g);
		free(g);
	}
	msg_run_free(&r);
	return 0;
}

/* The record is durable: let the worker exec, give the broker its pipes. */
static void
worker_go(struct worker *w)
{
	struct msg_run_started s = {w->ref, w->pid};
	struct mp_enc m;
	const char go = 'g';
	int i;

	if (write_full(w->spec_fd, &go, 1) == -1) {
		worker_fail(
		    w, ERR_SANDBOX_FAILED, "worker vanished before exec");
		return;
	}
	close_if(&w->spec_fd);
	w->st = W_RUNNING;
	w->t_go = now_mono_ms();
	arm_timer(w, w->g->timeout_ms);
	enc_init(&m);
	msg_run_started_enc(&m, &s);
	peer_send(&M->roles[ROLE_BROKER].peer, &m, w->pipes, RUN_STARTED_FDS);
	enc_free(&m);
	for (i = 0; i < RUN_STARTED_FDS; i++)
		w->pipes[i] = -1; /* the channel owns them now */
}

/* auditd answers in order: the start it made durable may go. */
int
worker_on_audit_ack(struct peer *p, const struct mp_doc *d)
{
	struct msg_audit_ack a;
	struct error e;
	size_t i;

	(void)p;
	if (msg_audit_ack_dec(d, &a, &e) == -1 || a.ref > M->audit_ref ||
	    a.ref <= M->audit_acked) {
		log_warnx("auditd: bad or unexpected AUDIT_ACK");
		msg_audit_ack_free(&a);
		return -1;
	}
	M->audit_acked = a.ref;
	for (i = 0; i < nworkers; i++)
		if (workers[i].st == W_AUDITING &&
		    workers[i].audit_ref == a.ref) {
			if (a.ok)
				worker_go(&workers[i]);
			else
				worker_fail(&workers[i], ERR_AUDIT_UNAVAILABLE,
				    a.message);
		}
	if (!a.ok)
		log_warnx("auditd could not record an event: %s", a.message);
	msg_audit_ack_free(&a);
	return 0;
}

/* How the call ended, from the wait status, the init's word, cgroups. */
static void
worker_result(struct worker *w, int status, const struct rusage *ru,
    struct msg_run_exited *x)
{
	int oom, pids_hit;

	memset(x, 0, sizeof(*x));
	cgroup_limits_hit(w->cg_id, &oom, &pids_hit);
	x->started = w->st == W_RUNNING || w->st == W_SCANNING;
	x->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	x->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	if (w->have_final) { /* the skill's own end, as its init saw it */
		x->exit_code = w->final_signal ? -1 : w->final_exit;
		x->signal = w->final_signal;
	}
	x->duration_ms = !x->started     ? 0
	                 : w->have_final ? w->duration_ms
	                                 : now_mono_ms() - w->t_go;
	x->cpu_ms =
	    (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000 +
	    (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000;
	x->max_rss_kb = (uint64_t)ru->ru_maxrss;
	x->message = "";
	if (w->timed_out)
		x->limit = LIMIT_TIMEOUT;
	else if (x->signal == SIGXCPU)
		x->limit = LIMIT_CPU;
	else if (x->signal == SIGXFSZ)
		x->limit = LIMIT_FSIZE;
	else if (oom)
		x->limit = LIMIT_MEMORY;
	else if (pids_hit && (x->exit_code != 0 || x->signal != 0))
		x->limit = LIMIT_PIDS;
	if (w->fail != ERR_NONE) {
		x->started = 0;
		x->limit = LIMIT_NONE;
		x->err = w->fail;
		x->message = w->failmsg;
	} else if (!x->started) {
		x->err = ERR_SANDBOX_FAILED;
		x->message = "the worker exited during sandbox setup";
	} else if (x->limit == LIMIT_TIMEOUT) {
		x->err = ERR_TIMEOUT;
		x->message = "the wall-clock timeout ended the skill";
	} else if (x->limit != LIMIT_NONE) {
		x->err = ERR_RESOURCE_LIMIT;
		x->message = x->limit == LIMIT_CPU ? "CPU time limit reached"
		             : x->limit == LIMIT_FSIZE
		                 ? "file size limit reached"
		             : x->limit == LIMIT_MEMORY ? "the memory limit "
		                                          "ended the skill"
		                                        : "the process limit "
		                                          "was reached";
	}
}

/* SIGCHLD for a worker: end what is left of the call, and report. */
int
worker_reap(pid_t pid, int status, const struct rusage *ru)
{
	struct msg_run_exited x;
	struct worker *w = NULL;
	size_t i;

	for (i = 0; i < nworkers && w == NULL; i++)
		if (workers[i].st != W_FREE && workers[i].st != W_LOST &&
		    workers[i].pid == pid)
			w = &workers[i];
	if (w == NULL)
		return 0;
	worker_kill(w);
	worker_status_read(w->status_fd, EV_READ, w); /* a last "fail" */
	worker_result(w, status, ru, &x);
	audit_worker(w, "worker.exited", "end",
	    x.err == ERR_NONE ? "success" : "failure", &x);
	send_exited(w->ref, &x);
	workdir_release(w->g->work_dir);
	worker_close(w);
	/* A uid is reused only once nothing of the call can hold it. */
	if (cgroup_remove(w->cg_id) == -1) {
		log_warnx("uid %u is out of service: the cgroup of its last "
		          "call still holds a process",
		    (unsigned)w->uid);
		w->st = W_LOST;
	} else
		memset(w, 0, sizeof(*w));
	return 1;
}

void
worker_kill_all(void)
{
	size_t i;

	for (i = 0; i < nworkers; i++)
		if (workers[i].st != W_FREE && workers[i].st != W_LOST)
			worker_kill(&workers[i]);
}

/* auditd is gone: no start may wait for an acknowledgement forever. */
void
worker_audit_lost(void)
{
	size_t i;

	M->audit_acked = M->audit_ref;
	for (i = 0; i < nworkers; i++)
		if (workers[i].st == W_AUDITING)
			worker_fail(&workers[i], ERR_AUDIT_UNAVAILABLE,
			    "auditd stopped before recording the start");
}
