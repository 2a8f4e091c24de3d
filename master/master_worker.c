/*
 * master_worker.c: one worker per granted RUN. The worker is re-exec'd,
 * builds its sandbox, says "ready" on its status pipe and then waits.
 * Only after auditd acknowledged worker.started (durable) does the
 * master send the go byte; the broker then gets the worker's pipes.
 */
#include <ctype.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"
#include "master.h"

#define BUILD_TIMEOUT_MS 10000
#define WORKER_FD_SPEC 3
#define WORKER_FD_STATUS 4

enum wstate { W_FREE, W_BUILDING, W_AUDITING, W_RUNNING, W_REAPED };

struct worker {
	enum wstate st;
	uint64_t ref; /* the broker's request reference */
	struct grant *g;
	pid_t pid;
	uid_t uid;
	uint64_t cg_id; /* this call's cgroups, never reused */
	int spec_fd, status_fd, in_w, out_r, err_r;
	struct event *status_ev, *timer;
	char status[256];
	size_t status_len;
	uint64_t audit_ref, t_go, t_go_real_ns;
	int timed_out;
	int have_final; /* the worker's init reported the skill's end */
	int final_exit, final_signal;
	enum err_type fail;
	char failmsg[ERROR_MSG_MAX];
};

static struct worker *workers;
static size_t nworkers;
static uint8_t *uid_busy;
static uint64_t audit_ack_floor; /* acks above the counter are forged */
static uint64_t cg_counter;

void
worker_init(void)
{
	nworkers = (size_t)M->cfg.worker_uid_last - M->cfg.worker_uid_first + 1;
	if (nworkers > 1024)
		nworkers = 1024;
	workers = xcalloc(nworkers, sizeof(*workers));
	workdir_init();
	uid_busy = xcalloc(nworkers, 1);
	audit_ack_floor = 0;
}

/* Tell the broker how a RUN ended (or why it never started). */
static void
send_exited(uint64_t ref, const struct msg_run_exited *x)
{
	struct mp_enc m;
	struct msg_run_exited r = *x;

	r.ref = ref;
	enc_init(&m);
	msg_run_exited_enc(&m, &r);
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

/* Send one audit record; returns its ref, 0 if auditd is down. */
static uint64_t
audit_worker_event(struct worker *w, const char *action, const char *type,
    const char *outcome, const struct msg_run_exited *x)
{
	struct peer *a = &M->roles[ROLE_AUDITD].peer;
	struct mp_enc m;
	uint64_t ref;

	if (!a->alive)
		return 0;
	ref = ++M->audit_ref;
	enc_init(&m);
	msg_begin(&m, MSG_AUDIT, 2);
	enc_kuint(&m, "ref", ref);
	enc_str(&m, "event");
	enc_map(&m, x ? 18 : 10);
	enc_kstr(&m, "event.action", action);
	enc_kstr(&m, "event.type", type);
	enc_kstr(&m, "event.outcome", outcome);
	enc_kstr(&m, "grant.id", w->g->grant_id);
	enc_kstr(&m, "skill.name", w->g->skill);
	enc_kstr(&m, "skill.command", w->g->command);
	enc_kuintstr(&m, "user.id", w->g->principal_uid);
	enc_kstr(&m, "session.id", w->g->session);
	enc_kint(&m, "worker.pid", w->pid);
	enc_kuint(&m, "worker.uid", w->uid);
	if (x) {
		enc_kint(&m, "process.exit_code", x->exit_code);
		enc_kint(&m, "process.signal", x->signal);
		enc_kuint(&m, "event.duration", x->duration_ms * 1000000ULL);
		enc_kbool(&m, "worker.timed_out", x->timed_out);
		enc_kuint(&m, "worker.cpu_ms", x->cpu_ms);
		enc_kuint(&m, "worker.max_rss_kb", x->max_rss_kb);
		enc_kstr(
		    &m, "error.type", err_type_name((enum err_type)x->err));
		enc_kstr(&m, "error.message", x->message ? x->message : "");
	}
	peer_send(a, &m, NULL, 0);
	enc_free(&m);
	return ref;
}

static void
close_if(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

/* The worker is pid 1 of its namespace: killing it ends the namespace. */
static void
worker_kill(pid_t pid)
{
	kill(pid, SIGKILL);
	kill(-pid, SIGKILL);
}

/* Kill the worker's process group; the reaper reports the outcome. */
static void
worker_fail(struct worker *w, enum err_type err, const char *msg)
{
	if (w->fail == ERR_NONE) {
		w->fail = err;
		snprintf(w->failmsg, sizeof(w->failmsg), "%s", msg);
	}
	if (w->pid > 0)
		worker_kill(w->pid);
}

static void
worker_timer(evutil_socket_t fd, short ev, void *arg)
{
	struct worker *w = arg;

	(void)fd;
	(void)ev;
	if (w->st == W_RUNNING) {
		w->timed_out = 1;
		worker_kill(w->pid);
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

	evtimer_add(w->timer, &tv);
}

/* The worker is built: audit worker.started before it may exec. */
static void
worker_ready(struct worker *w)
{
	w->st = W_AUDITING;
	if ((w->audit_ref = audit_worker_event(
	         w, "worker.started", "start", "unknown", NULL)) == 0)
		worker_fail(w, ERR_AUDIT_UNAVAILABLE, "auditd is not running");
}

/*
 * Status lines from the worker: "ready", "fail STEP: why", and once the
 * skill ran, "exit N" or "signal N" from the worker's init.
 */
static void
worker_status_line(struct worker *w, const char *line)
{
	int v;

	if (strcmp(line, "ready") == 0 && w->st == W_BUILDING)
		worker_ready(w);
	else if (w->st == W_RUNNING && !w->have_final &&
	         (sscanf(line, "exit %d", &v) == 1 ||
	             sscanf(line, "signal %d", &v) == 1) &&
	         v >= 0 && v <= 255) {
		w->have_final = 1;
		if (line[0] == 'e')
			w->final_exit = v;
		else
			w->final_signal = v;
	} else if (strncmp(line, "fail ", 5) == 0)
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
	if (n <= 0) { /* exec closed it, or the worker died */
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
		if (workers[i].st == W_FREE && !uid_busy[i]) {
			memset(&workers[i], 0, sizeof(workers[i]));
			workers[i].uid = (uid_t)(M->cfg.worker_uid_first + i);
			uid_busy[i] = 1;
			return &workers[i];
		}
	return NULL;
}

/* What only the master knows: where the private root goes, and more. */
static void
grant_fill_host(struct grant *g)
{
	size_t i;

	free(g->root_dir);
	xasprintf(&g->root_dir, "%s/root", M->cfg.state_dir);
	strarr_free(g->sys_paths, g->nsys_paths);
	g->sys_paths = xcalloc(M->cfg.nsys_paths + 1, sizeof(char *));
	for (i = 0; i < M->cfg.nsys_paths; i++)
		g->sys_paths[i] = xstrdup(M->cfg.sys_paths[i]);
	g->nsys_paths = M->cfg.nsys_paths;
	g->tmp_mb = M->cfg.worker_tmp_mb;
	/*
	 * With a memory cgroup its OOM kill is the limit (and is reported);
	 * the address-space rlimit is then only a backstop.
	 */
	g->as_mb = cgroup_active() ? g->memory_mb * 4 : g->memory_mb;
	g->net_host = g->nperm[2] > 0 && M->cfg.worker_network_host;
}

/* In the child: the worker's fds at fixed numbers, then exec. */
static void __attribute__((noreturn))
worker_exec(int in_r, int out_w, int err_w, int spec_r, int stat_w)
{
	char *path;
	char *argv[3] = {"skillbroker-worker", NULL, NULL};
	int tmp[5] = {in_r, out_w, err_w, spec_r, stat_w}, i;
	sigset_t all;

	for (i = 0; i < 5; i++)
		if ((tmp[i] = fcntl(tmp[i], F_DUPFD, 64)) == -1)
			_exit(126);
	for (i = 0; i < 5; i++)
		if (dup2(tmp[i], i) == -1)
			_exit(126);
	close_from(5);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (M->verbose)
		argv[1] = "-v";
	if (asprintf(&path, "%s/skillbroker-worker", M->helper_dir) == -1)
		_exit(126);
	execv(path, argv);
	_exit(127);
}

static int
pipe_pair(int p[2])
{
	return pipe2(p, O_CLOEXEC);
}

/* Fork the worker and hand it the spec; it reports on its status pipe. */
static int
worker_spawn(struct worker *w, struct error *e)
{
	int in[2], out[2], err[2], spec[2], st[2];
	struct mp_enc m;
	struct error fe;

	if (pipe_pair(in) || pipe_pair(out) || pipe_pair(err) ||
	    pipe_pair(spec) || pipe_pair(st))
		return error_set(e, ERR_INTERNAL, "pipe: %s", strerror(errno));
	/* fork-like clone: the worker starts as pid 1 of fresh namespaces. */
	w->pid = (pid_t)syscall(SYS_clone,
	    CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
	        CLONE_NEWCGROUP | (w->g->net_host ? 0 : CLONE_NEWNET) | SIGCHLD,
	    NULL, NULL, NULL, 0);
	if (w->pid == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "clone: %s", strerror(errno));
	if (w->pid == 0)
		worker_exec(in[0], out[1], err[1], spec[0], st[1]);
	close(in[0]);
	close(out[1]);
	close(err[1]);
	close(spec[0]);
	close(st[1]);
	w->in_w = in[1];
	w->out_r = out[0];
	w->err_r = err[0];
	w->spec_fd = spec[1];
	w->status_fd = st[0];
	w->g->worker_uid = w->uid;
	w->g->worker_gid = w->uid;
	/* In its cgroups before it reads its spec, so nothing escapes them. */
	w->cg_id = ++cg_counter;
	if (cgroup_enter(w->cg_id, w->pid, w->g->memory_mb, w->g->pids, &fe) ==
	    -1)
		worker_fail(w, ERR_SANDBOX_FAILED, fe.msg);
	enc_init(&m);
	grant_enc(&m, w->g);
	if (frame_send(w->spec_fd, m.sb.data, m.sb.size, &fe) == -1)
		worker_fail(w, ERR_SANDBOX_FAILED, "could not pass the spec");
	enc_free(&m);
	set_nonblock(w->status_fd);
	w->status_ev = event_new(
	    M->base, w->status_fd, EV_READ | EV_PERSIST, worker_status_read, w);
	w->timer = evtimer_new(M->base, worker_timer, w);
	event_add(w->status_ev, NULL);
	arm_timer(w, BUILD_TIMEOUT_MS);
	w->st = W_BUILDING;
	return 0;
}

/* One call per session at a time: each call owns the work dir. */
int
session_busy(const char *work_dir)
{
	size_t i;

	for (i = 0; i < nworkers; i++)
		if (workers[i].st != W_FREE && workers[i].g != NULL &&
		    strcmp(workers[i].g->work_dir, work_dir) == 0)
			return 1;
	return 0;
}

/* Calls waiting for their session's running call to end (FIFO). */
#define QUEUE_MAX 256
#define QUEUE_PER_SESSION 16

struct queued {
	uint64_t ref;
	struct grant *g;
};

static struct queued queue[QUEUE_MAX];
static size_t nqueued;

static size_t
queued_for(const char *work_dir)
{
	size_t i, n = 0;

	for (i = 0; i < nqueued; i++)
		n += strcmp(queue[i].g->work_dir, work_dir) == 0;
	return n;
}

static void
drop_grant(struct grant *g)
{
	grant_free(g);
	free(g);
}

/* Start a worker for a grant now; on failure the broker is told why. */
static void
start_run(uint64_t ref, struct grant *g)
{
	struct worker *w;
	struct error e;

	if (!M->roles[ROLE_AUDITD].peer.alive) {
		refuse_run(ref, ERR_AUDIT_UNAVAILABLE, "auditd is not running");
		drop_grant(g);
	} else if (workdir_mount(g->work_dir, &e) == -1) {
		refuse_run(ref, e.type, e.msg);
		drop_grant(g);
	} else if ((w = worker_slot()) == NULL) {
		refuse_run(ref, ERR_OVERLOADED, "every worker uid is in use");
		drop_grant(g);
	} else {
		w->ref = ref;
		w->g = g;
		grant_fill_host(g);
		w->in_w = w->out_r = w->err_r = w->spec_fd = w->status_fd = -1;
		if (worker_spawn(w, &e) == -1) {
			refuse_run(ref, e.type, e.msg);
			close_if(&w->in_w);
			close_if(&w->out_r);
			close_if(&w->err_r);
			close_if(&w->spec_fd);
			close_if(&w->status_fd);
			drop_grant(g);
			uid_busy[w - workers] = 0;
			w->st = W_FREE;
		}
	}
}

/* A session's call ended: start the next one queued for it. */
static void
start_queued(const char *work_dir)
{
	struct queued q;
	size_t i;

	for (i = 0; i < nqueued; i++)
		if (strcmp(queue[i].g->work_dir, work_dir) == 0) {
			q = queue[i];
			memmove(&queue[i], &queue[i + 1],
			    (nqueued - i - 1) * sizeof(queue[0]));
			nqueued--;
			start_run(q.ref, q.g);
			return;
		}
}

/*
 * RUN from the broker: only a grant policyd gave us, and only once.
 * Calls of one session run one at a time (each owns the work dir while
 * it runs); a busy session's calls wait in line, in order.
 */
int
worker_on_run(struct peer *p, const struct mp_doc *d)
{
	struct msg_run r;
	struct grant *g;
	struct error e;

	(void)p;
	if (msg_run_dec(d, &r, &e) == -1) {
		log_warnx("broker: bad RUN: %s", e.msg);
		return -1;
	}
	if ((g = grant_store_take(r.grant_id)) == NULL) {
		log_warnx("RUN names grant \"%s\", which is unknown, used or "
		          "expired: refused",
		    r.grant_id);
		refuse_run(r.ref, ERR_PERMISSION_DENIED,
		    "no such grant: unknown, already used, or expired");
	} else if (g->nperm[2] > 0 && !M->cfg.worker_network_host) {
		refuse_run(r.ref, ERR_SANDBOX_FAILED,
		    "the grant asks for "
		    "network access, which this host does not provide");
		drop_grant(g);
	} else if (session_busy(g->work_dir) || queued_for(g->work_dir) > 0) {
		if (nqueued == QUEUE_MAX ||
		    queued_for(g->work_dir) >= QUEUE_PER_SESSION) {
			refuse_run(r.ref, ERR_OVERLOADED,
			    "too many calls wait "
			    "for this session");
			drop_grant(g);
		} else {
			queue[nqueued].ref = r.ref;
			queue[nqueued++].g = g;
		}
	} else
		start_run(r.ref, g);
	msg_run_free(&r);
	return 0;
}

/* The record is durable: let the worker exec, give the broker its pipes. */
static void
worker_go(struct worker *w)
{
	struct msg_run_started s = {w->ref, w->pid};
	struct mp_enc m;
	int fds[3] = {w->in_w, w->out_r, w->err_r};
	const char go = 'g';

	if (write_full(w->spec_fd, &go, 1) == -1) {
		worker_fail(
		    w, ERR_SANDBOX_FAILED, "worker vanished before exec");
		return;
	}
	close_if(&w->spec_fd);
	w->st = W_RUNNING;
	w->t_go = now_mono_ms();
	{
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		/* 20 ms of slack: file times come from a coarse clock */
		w->t_go_real_ns = (uint64_t)ts.tv_sec * 1000000000ULL +
		                  (uint64_t)ts.tv_nsec - 20000000ULL;
	}
	evtimer_del(w->timer);
	arm_timer(w, w->g->timeout_ms);
	enc_init(&m);
	msg_run_started_enc(&m, &s);
	peer_send(&M->roles[ROLE_BROKER].peer, &m, fds, 3);
	enc_free(&m);
	w->in_w = w->out_r = w->err_r = -1;
}

int
worker_on_audit_ack(struct peer *p, const struct mp_doc *d)
{
	struct msg_audit_ack a;
	struct error e;
	size_t i;

	(void)p;
	if (msg_audit_ack_dec(d, &a, &e) == -1 || a.ref == 0 ||
	    a.ref > M->audit_ref || a.ref <= audit_ack_floor) {
		log_warnx("auditd: bad or unexpected AUDIT_ACK");
		msg_audit_ack_free(&a);
		return -1;
	}
	audit_ack_floor = a.ref; /* auditd answers in order */
	for (i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];
		if (w->st != W_AUDITING || w->audit_ref != a.ref)
			continue;
		if (a.ok)
			worker_go(w);
		else
			worker_fail(w, ERR_AUDIT_UNAVAILABLE, a.message);
	}
	if (!a.ok)
		log_warnx("auditd could not record an event: %s", a.message);
	msg_audit_ack_free(&a);
	return 0;
}

/* Kill whatever still runs as this worker uid before the uid is reused. */
static void
kill_uid_processes(uid_t uid)
{
	char path[300], line[256];
	struct dirent *de;
	unsigned r, eu;
	DIR *d;
	FILE *f;
	int pass;

	for (pass = 0; pass < 3; pass++) {
		if ((d = opendir("/proc")) == NULL)
			return;
		while ((de = readdir(d)) != NULL) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			snprintf(
			    path, sizeof(path), "/proc/%s/status", de->d_name);
			if ((f = fopen(path, "re")) == NULL)
				continue;
			while (fgets(line, sizeof(line), f) != NULL)
				if (sscanf(line, "Uid: %u %u", &r, &eu) == 2) {
					if (r == uid || eu == uid)
						kill(atoi(de->d_name), SIGKILL);
					break;
				}
			fclose(f);
		}
		closedir(d);
	}
}

/* Fill x from the wait status and resource usage. */
static void
worker_result(struct worker *w, int status, const struct rusage *ru,
    struct msg_run_exited *x)
{
	int oom, pids_hit;

	memset(x, 0, sizeof(*x));
	cgroup_limits_hit(w->cg_id, &oom, &pids_hit);
	x->started = w->st == W_RUNNING;
	x->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	x->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	if (w->have_final) { /* the skill's own end, as its init saw it */
		x->exit_code = w->final_signal ? -1 : w->final_exit;
		x->signal = w->final_signal;
	}
	x->timed_out = w->timed_out;
	x->duration_ms = x->started ? now_mono_ms() - w->t_go : 0;
	x->cpu_ms =
	    (uint64_t)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1000 +
	    (uint64_t)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1000;
	x->max_rss_kb = (uint64_t)ru->ru_maxrss;
	x->message = "";
	if (w->fail != ERR_NONE) {
		x->started = 0;
		x->err = w->fail;
		x->message = w->failmsg;
	} else if (!x->started) {
		x->err = ERR_SANDBOX_FAILED;
		x->message = "the worker exited during sandbox setup";
	} else if (w->timed_out) {
		x->err = ERR_TIMEOUT;
		x->message = "the wall-clock timeout ended the skill";
	} else if (x->signal == SIGXCPU || x->signal == SIGXFSZ) {
		x->err = ERR_RESOURCE_LIMIT;
		x->message = x->signal == SIGXCPU ? "CPU time limit reached"
		                                  : "file size limit reached";
	} else if (oom) {
		x->err = ERR_RESOURCE_LIMIT;
		x->message = "the memory limit ended the skill";
	} else if (pids_hit && (x->exit_code != 0 || x->signal != 0)) {
		x->err = ERR_RESOURCE_LIMIT;
		x->message = "the process limit was reached";
	}
}

/* Files the call wrote, as the skill saw them (/work, /data). */
static void
worker_files(struct worker *w, struct msg_run_exited *x)
{
	static struct file_written found[FILES_WRITTEN_MAX];
	uint64_t budget = FILES_HASH_BUDGET;
	size_t n, i;

	if (!x->started)
		return;
	n = files_written_scan(w->g->work_dir, "/work", w->t_go_real_ns, found,
	    FILES_WRITTEN_MAX, &budget);
	n += files_written_scan(w->g->data_dir, "/data", w->t_go_real_ns,
	    found + n, FILES_WRITTEN_MAX - n, &budget);
	x->files = xcalloc(n + 1, sizeof(*x->files));
	for (i = 0; i < n; i++) {
		/* A skill chose these names: never pass raw bytes on. */
		x->files[i].path = utf8_escape(found[i].path);
		x->files[i].size = found[i].size;
		x->files[i].sha256 = xstrdup(found[i].sha256);
	}
	x->nfiles = n;
}

/* SIGCHLD for a worker: clean up its processes and report. */
int
worker_reap(pid_t pid, int status, const struct rusage *ru)
{
	struct msg_run_exited x;
	size_t i, slot = nworkers;
	struct worker *w;
	char *done_dir;

	for (i = 0; i < nworkers; i++)
		if (workers[i].st != W_FREE && workers[i].pid == pid)
			slot = i;
	if (slot == nworkers)
		return 0;
	w = &workers[slot];
	worker_kill(pid);
	kill_uid_processes(w->uid);
	worker_status_read(w->status_fd, EV_READ, w); /* a last "fail" */
	worker_result(w, status, ru, &x);
	worker_files(w, &x);
	cgroup_remove(w->cg_id);
	audit_worker_event(w, "worker.exited", "end",
	    x.err == ERR_NONE ? "success" : "failure", &x);
	send_exited(w->ref, &x);
	for (i = 0; i < x.nfiles; i++) {
		free(x.files[i].path);
		free(x.files[i].sha256);
	}
	free(x.files);
	if (w->status_ev)
		event_free(w->status_ev);
	if (w->timer)
		event_free(w->timer);
	close_if(&w->status_fd);
	close_if(&w->spec_fd);
	close_if(&w->in_w);
	close_if(&w->out_r);
	close_if(&w->err_r);
	done_dir = w->g->work_dir;
	w->g->work_dir = NULL;
	grant_free(w->g);
	free(w->g);
	memset(w, 0, sizeof(*w));
	w->st = W_FREE;
	uid_busy[slot] = 0;
	start_queued(done_dir);
	free(done_dir);
	return 1;
}

void
worker_kill_all(void)
{
	size_t i;

	for (i = 0; i < nworkers; i++)
		if (workers[i].st != W_FREE && workers[i].pid > 0)
			worker_kill(workers[i].pid);
}

/* auditd is gone: no start may wait for an acknowledgement forever. */
void
worker_audit_lost(void)
{
	size_t i;

	audit_ack_floor = M->audit_ref;
	for (i = 0; i < nworkers; i++)
		if (workers[i].st == W_AUDITING)
			worker_fail(&workers[i], ERR_AUDIT_UNAVAILABLE,
			    "auditd stopped before recording the start");
}
