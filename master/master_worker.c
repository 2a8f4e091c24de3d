/*
 * master_worker.c: each grant policyd sends is held by a worker (a
 * worker uid, pid 1 of fresh namespaces): one of the warm pool, which
 * built what no grant changes before it came, or one started for it. It
 * gets the grant with the session's work dir and says READY. The broker's RUN
 * names the grant, once; only when worker.started is durable does the master
 * send GO and hand the broker the pipes. A grant not run in time goes with its
 * worker. The worker says EXIT when the skill ended and DONE once nothing of
 * it is left: the master reports then (or at the reap), and reaps.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/sysfilter.h"
#include "../lib/uidpool.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/fds.h"
#include "master.h"

#define BUILD_MS 10000     /* to build the sandbox */
#define GRANT_TTL_MS 30000 /* for the broker to name the grant */
#define SCAN_MS 5000       /* for the worker to list what the call wrote */
#define POOL_HOLD_MS 1000  /* no pre-fork after a pre-forked worker failed */
#define POOL_NICE 19       /* of a pre-forked worker until its grant */
#define POOL_AGE_MS 60000  /* a pre-forked worker's life, unused */

enum wstate {
	W_FREE,
	W_WARM,     /* pre-forked: no grant yet; builds or has built its PREP */
	W_BUILDING, /* the sandbox is being built */
	W_BUILT,    /* ready; waiting for the broker's RUN */
	W_AUDITING, /* RUN came; worker.started is not durable yet */
	W_RUNNING,  /* the skill runs */
	W_SCANNING, /* the skill is gone; the worker lists its files */
	W_DONE      /* answered; the worker is on its way out */
};

struct worker {
	enum wstate st;
	struct grant g;
	uint64_t ref; /* the broker's call, once RUN came (else 0) */
	pid_t pid;
	uint64_t cg_id; /* this call's cgroups, never reused */
	int holds_work; /* its session's work dir is its, until released */
	struct peer ctl;
	int pipes[RUN_STARTED_FDS]; /* the broker's ends */
	int net_fd; /* the proxy's listener in the worker's namespace, or -1 */
	struct event *timer;
	uint64_t audit_ref, t_go;
	struct msg_run_exited x; /* what the worker and the clock said */
	int answered;            /* worker.exited and RUN_EXITED are sent */
	int retired;             /* pre-forked, ended unused: stale, or old */
	enum err_type fail;
	char failmsg[ERROR_MSG_MAX];
};

static int worker_ctl_ready(struct peer *p, const struct mp_doc *d);
static int worker_ctl_fail(struct peer *p, const struct mp_doc *d);
static int worker_ctl_exit(struct peer *p, const struct mp_doc *d);
static int worker_ctl_done(struct peer *p, const struct mp_doc *d);

/* What a worker may tell the master. */
static const struct peer_handler worker_table[] = {
    {MSG_WORKER_READY, PH_ONCE, worker_ctl_ready},
    {MSG_WORKER_FAIL, PH_ONCE, worker_ctl_fail},
    {MSG_WORKER_EXIT, PH_ONCE, worker_ctl_exit},
    {MSG_WORKER_DONE, PH_ONCE, worker_ctl_done},
    {0, 0, NULL},
};

static struct worker *workers; /* one per worker uid, by index */
static size_t nworkers;
static uint64_t cg_counter;
static struct uidpool uids;
static uint64_t pool_hold_until; /* no refill before (a warm one failed) */
/*
 * Grants whose worker failed before the broker's RUN came (a warm
 * worker fails within a millisecond): RUN still learns why, for a
 * while; the oldest are overwritten first (then: "no such grant").
 */
static struct {
	char id[GRANT_ID_LEN + 1];
	enum err_type err;
	char msg[ERROR_MSG_MAX];
	uint64_t at;
} failed[64];
static size_t nfailed_next;
static uint8_t *filters[2]; /* the syscall filters, compiled once */
static size_t filter_lens[2];
static char *root_dir; /* where each worker mounts its private root */
/*
 * Grants that found every worker uid taken while a worker whose call was
 * answered (WORKER_DONE) still held one: each waits for such a reap, at
 * most one per dying worker (the broker counts a call's worker only
 * until its answer, so it may send a call more than the uids free).
 */
static struct grant *parked;
static size_t nparked;

static void pool_fill(void);
static struct event *pool_timer; /* pool_fill once the hold is over */
/*
 * The daemon's mount table, watched: a pre-forked worker bound the
 * system paths and cloned the library directories as they were at its
 * PREP, so every change since retires the warm ones (poll on
 * /proc/self/mountinfo says so, and takes note, with no race: a change
 * done before a grant is placed is seen by it). -1: not watched, and
 * there is no pool.
 */
static int mounts_fd = -1;

/* The hold after a failed pre-forked worker is over. */
static void
pool_refill(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	pool_fill();
}

void
worker_init(void)
{
	struct error e;

	nworkers = (size_t)config_nworkers(&M->cfg);
	workers = xcalloc(nworkers, sizeof(*workers));
	uidpool_init(&uids, M->cfg.worker_uid_first, nworkers);
	if ((pool_timer = evtimer_new(M->base, pool_refill, NULL)) == NULL)
		fatalx("pool timer");
	if (M->cfg.worker_pool > 0 && (mounts_fd = open("/proc/self/mountinfo",
	                                   O_RDONLY | O_CLOEXEC)) == -1)
		log_warn("/proc/self/mountinfo: no warm pool");
	xasprintf(&root_dir, "%s/root", M->cfg.state_dir);
	parked = xcalloc(nworkers, sizeof(*parked));
	if (sysfilter_compile(0, &filters[0], &filter_lens[0], &e) == -1 ||
	    sysfilter_compile(1, &filters[1], &filter_lens[1], &e) == -1)
		fatalx("%s", e.msg);
	pool_fill();
}

/* worker.started (x NULL) or worker.exited; its ref, 0 if auditd is down. */
static uint64_t
audit_worker(struct worker *w, const struct msg_run_exited *x)
{
	struct mp_enc m;
	uint64_t ref;

	if (!M->roles[ROLE_AUDITD].peer.alive)
		return 0;
	enc_init(&m);
	msg_audit_worker(&m, ref = ++M->audit_ref, &w->g, w->pid, x);
	maudit_send(&m);
	return ref;
}

/* The live worker that holds grant id, or (pid > 0) that is pid. */
static struct worker *
worker_find(const char *id, pid_t pid)
{
	size_t i;

	for (i = 0; i < nworkers; i++)
		if (pid > 0 ? workers[i].st != W_FREE && workers[i].pid == pid
		            : workers[i].st > W_WARM &&
		                  strcmp(workers[i].g.grant_id, id) == 0)
			return &workers[i];
	return NULL;
}

/* Fail the call (the first reason wins); the worker's death ends it. */
static void
worker_fail(struct worker *w, enum err_type err, const char *msg)
{
	if (w->fail == ERR_NONE && err != ERR_NONE) {
		w->fail = err;
		snprintf(w->failmsg, sizeof(w->failmsg), "%s", msg);
	}
	if (w->pid > 0)
		(void)kill(w->pid, SIGKILL); /* pid 1: the namespace dies */
	cgroup_kill(w->cg_id);
}

static void
arm_timer(struct worker *w, uint64_t ms)
{
	struct timeval tv = timeval_ms(ms);

	if (evtimer_add(w->timer, &tv) == -1)
		fatalx("worker timer");
}

/* Each state's deadline has passed. */
static void
worker_timer(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct worker *w = arg;

	if (w->st == W_WARM) { /* unused for POOL_AGE_MS: a new one comes */
		w->retired = 1;
		log_debug("worker %d: pre-forked too long ago", (int)w->pid);
	} else if (w->st == W_RUNNING)
		w->x.limit = LIMIT_TIMEOUT;
	else if (w->st == W_BUILT)
		log_info("grant %s for %s expired unused", w->g.grant_id,
		    w->g.skill);
	else if (w->st == W_SCANNING)
		log_warnx(
		    "worker %d: listing files took too long", (int)w->pid);
	else if (w->st == W_DONE)
		log_warnx("worker %d: did not exit once done", (int)w->pid);
	worker_fail(w,
	    w->st == W_AUDITING   ? ERR_AUDIT_UNAVAILABLE
	    : w->st == W_BUILDING ? ERR_SANDBOX_FAILED
	                          : ERR_NONE,
	    w->st == W_AUDITING
	        ? "the audit record was not acknowledged in time"
	        : "worker setup timed out");
}

/* RUN came and the sandbox is built: the start goes to the log first. */
static void
worker_audit_start(struct worker *w)
{
	w->st = W_AUDITING;
	arm_timer(w, BUILD_MS); /* for auditd to make it durable */
	if ((w->audit_ref = audit_worker(w, NULL)) == 0)
		worker_fail(w, ERR_AUDIT_UNAVAILABLE, "auditd is not running");
}

/* The egress proxy serves w's call: its allow list, its listener. */
static int
worker_net_open(struct worker *w)
{
	struct msg_net_open o = {w->g.grant_id, w->g.skill, w->g.session,
	    w->g.principal_uid, w->g.perm[PERM_NETWORK],
	    w->g.nperm[PERM_NETWORK]};
	int fd;

	if ((fd = fcntl(w->net_fd, F_DUPFD_CLOEXEC, 3)) == -1) {
		log_warn("dup of a proxy listener");
		return -1;
	}
	PEER_SEND_FDS(
	    &M->roles[ROLE_NETPROXY].peer, &fd, 1, msg_net_open_enc, &o);
	return 0;
}

/* A restarted proxy learns every call it serves again. */
void
worker_net_reopen(void)
{
	size_t i;

	for (i = 0; i < nworkers; i++)
		if (workers[i].st > W_WARM && workers[i].st < W_SCANNING &&
		    workers[i].net_fd != -1 &&
		    worker_net_open(&workers[i]) == -1)
			worker_fail(&workers[i], ERR_SANDBOX_FAILED,
			    "the egress proxy cannot serve the call");
}

/*
 * A proxied call's READY carries the listener the worker made in its
 * network namespace (a listening TCP socket, or it is a violation); any
 * other READY carries none. Without a proxy running, it cannot start.
 */
static int
worker_net_ready(struct worker *w)
{
	int fd = chan_take_fd(&w->ctl.ch), v = 0, dom = 0;
	socklen_t l = sizeof(v), ld = sizeof(dom);

	if (w->g.net != NET_PROXY)
		return fd == -1 ? 0 : (close(fd), -1);
	if (fd == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &l) == -1 || !v ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &ld) == -1 ||
	    dom != AF_INET) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	w->net_fd = fd;
	if (!M->roles[ROLE_NETPROXY].peer.alive)
		worker_fail(
		    w, ERR_SANDBOX_FAILED, "the egress proxy is not running");
	else if (worker_net_open(w) == -1)
		worker_fail(w, ERR_SANDBOX_FAILED,
		    "the egress proxy cannot serve the call");
	return 0;
}

/* READY: the sandbox is built; it waits for RUN, or RUN came already. */
static int
worker_ctl_ready(struct peer *p, const struct mp_doc *d)
{
	struct worker *w = p->arg;
	struct error e;

	if (msg_empty_dec(d, &e) == -1 || w->st != W_BUILDING ||
	    worker_net_ready(w) == -1)
		return -1;
	if (w->fail != ERR_NONE) /* no proxy: it is being ended */
		return 0;
	if (w->ref != 0)
		worker_audit_start(w);
	else {
		w->st = W_BUILT;
		arm_timer(w, GRANT_TTL_MS);
	}
	return 0;
}

/* FAIL: a step of the sandbox failed; nothing of the skill ran. */
static int
worker_ctl_fail(struct peer *p, const struct mp_doc *d)
{
	struct worker *w = p->arg;
	struct msg_worker_fail f;
	struct error e;
	char msg[ERROR_MSG_MAX];

	if (msg_worker_fail_dec(d, &f, &e) == -1 ||
	    (w->st != W_BUILDING && w->st != W_WARM))
		return -1;
	snprintf(msg, sizeof(msg), "%s: %s", f.step, f.message);
	if (w->st == W_WARM) /* no call waits on it; its reap pauses the pool */
		log_warnx("pre-forked worker %d: %s", (int)w->pid, msg);
	worker_fail(w, ERR_SANDBOX_FAILED, msg);
	msg_worker_fail_free(&f);
	return 0;
}

/* EXIT: the skill ended; its clock stops, the file listing starts. */
static int
worker_ctl_exit(struct peer *p, const struct mp_doc *d)
{
	struct worker *w = p->arg;
	struct msg_worker_exit x;
	struct error e;

	if (msg_worker_exit_dec(d, &x, &e) == -1 || w->st != W_RUNNING)
		return -1;
	w->x.exit_code = x.exit_code;
	w->x.signal = x.signal;
	w->x.duration_ms = now_mono_ms() - w->t_go;
	w->st = W_SCANNING;
	arm_timer(w, SCAN_MS);
	return 0;
}

/* A worker that says what it may not is ended as a failed setup. */
static void
worker_ctl_dead(struct peer *p, const char *why)
{
	struct worker *w = p->arg;

	if (w->st == W_BUILDING || w->st == W_WARM)
		worker_fail(w, ERR_SANDBOX_FAILED, why);
}

/*
 * The worker's fds: pipes for stdin, stdout, stderr and the report (the
 * broker gets our ends), then its control socket.
 */
static const struct os_chan wchans[RUN_STARTED_FDS + 1] = {{0, 1, 0}, {1, 0, 0},
    {2, 0, 0}, {FD_WORKER_REPORT, 0, 0}, {FD_WORKER_CTL, 0, 1}};

/*
 * Start slot w's worker as pid 1 of a new pid namespace, in new cgroups
 * with these limits, and send it PREP: what it builds before any grant,
 * its other namespaces first (a new network one unless host_net). It is
 * W_WARM until it gets a grant.
 */
static int
worker_spawn(struct worker *w, int host_net, uint64_t memory_mb, uint64_t npids,
    struct error *e)
{
	char *argv[3] = {"skillbroker-worker", M->verbose ? "-v" : NULL, NULL};
	struct msg_prep prep = {{filters[0], filters[1]},
	    {filter_lens[0], filter_lens[1]}, root_dir, M->cfg.worker_tmp_mb,
	    host_net, M->cfg.sys_paths, M->cfg.nsys_paths, M->cfg.lib_paths,
	    M->cfg.nlib_paths};
	struct fdmap fds[RUN_STARTED_FDS + 1];
	int ours[RUN_STARTED_FDS + 1], i = RUN_STARTED_FDS;
	int join[CGROUP_JOIN_MAX], njoin, k;
	uint64_t cg = ++cg_counter;
	char *path;

	memset(w, 0, sizeof(*w));
	memset(w->pipes, -1, sizeof(w->pipes));
	w->net_fd = -1;
	/* In its cgroups before its exec, so nothing of it escapes them. */
	if ((njoin = cgroup_prepare(cg, memory_mb, npids, join, e)) == -1)
		return -1;
	if (os_chans(wchans, RUN_STARTED_FDS + 1, fds, ours, e) == -1) {
		for (k = 0; k < njoin; k++)
			close(join[k]);
		(void)cgroup_remove(cg);
		return -1;
	}
	xasprintf(&path, "%s/skillbroker-worker", M->helper_dir);
	w->pid = os_spawn(path, argv, fds, RUN_STARTED_FDS + 1, 1, join, njoin);
	free(path);
	for (k = 0; k < njoin; k++)
		close(join[k]);
	if (w->pid == -1) {
		for (i = 0; i <= RUN_STARTED_FDS; i++)
			close(ours[i]);
		(void)cgroup_remove(cg);
		return error_set(
		    e, ERR_SANDBOX_FAILED, "clone: %s", strerror(errno));
	}
	w->cg_id = cg;
	memcpy(w->pipes, ours, sizeof(w->pipes));
	peer_init(&w->ctl, M->base, ours[i], "worker", worker_table,
	    worker_ctl_dead, w);
	if ((w->timer = evtimer_new(M->base, worker_timer, w)) == NULL)
		fatalx("worker timer");
	w->st = W_WARM;
	PEER_SEND(&w->ctl, msg_prep_enc, &prep);
	return 0;
}

/*
 * Keep worker.pool workers warm, never taking the last free uid (a call
 * the pool cannot serve, with the host's network, still finds one).
 */
static void
pool_fill(void)
{
	uint64_t now = now_mono_ms();
	struct error e;
	size_t i, warm = 0;
	long k;

	if (M->shutting_down || mounts_fd == -1)
		return;
	if (now < pool_hold_until) {
		struct timeval tv = timeval_ms(pool_hold_until - now);

		if (evtimer_add(pool_timer, &tv) == -1)
			fatalx("pool timer");
		return;
	}
	for (i = 0; i < nworkers; i++)
		warm += workers[i].st == W_WARM;
	while (warm < M->cfg.worker_pool && uidpool_nfree(&uids) > 1 &&
	       (k = uidpool_take(&uids)) != -1) {
		if (worker_spawn(&workers[k], 0, M->cfg.limits.memory_mb,
		        M->cfg.limits.pids, &e) == -1) {
			log_warnx("pre-fork a worker: %s", e.msg);
			workers[k].st = W_FREE;
			uidpool_put(&uids, (size_t)k, 0);
			pool_hold_until = now_mono_ms() + POOL_HOLD_MS;
			return;
		}
		/* Its build yields to calls that run now; back to 0 at GRANT.
		 */
		if (setpriority(
		        PRIO_PROCESS, (id_t)workers[k].pid, POOL_NICE) == -1)
			log_warn("nice a pre-forked worker");
		/* What it found at PREP ages: a library directory made
		 * since is executable only in workers started after it. */
		arm_timer(&workers[k], POOL_AGE_MS);
		warm++;
	}
}

/*
 * Has the daemon's mount table changed since we last asked? Then the
 * warm workers, which bound what it held at their PREP, are retired;
 * so they are when poll cannot tell (a signal interrupts even a poll
 * that does not wait: it is asked again, a few times).
 */
static void
pool_check_mounts(void)
{
	struct pollfd pfd = {mounts_fd, POLLPRI, 0};
	int n, tries = 0;
	size_t i;

	while ((n = poll(&pfd, 1, 0)) == -1 && errno == EINTR && ++tries < 8)
		;
	if (n == -1)
		log_warn("poll /proc/self/mountinfo: the warm pool is retired");
	else if (!(pfd.revents & (POLLPRI | POLLERR | POLLNVAL)))
		return;
	for (i = 0; i < nworkers; i++)
		if (workers[i].st == W_WARM && !workers[i].retired) {
			workers[i].retired = 1;
			worker_fail(&workers[i], ERR_NONE, NULL);
		}
}

/* A warm worker that can take g (not one of the host's network). */
static struct worker *
pool_take(int host_net)
{
	size_t i;

	if (mounts_fd == -1 || host_net)
		return NULL;
	pool_check_mounts();
	for (i = 0; i < nworkers; i++)
		if (workers[i].st == W_WARM && workers[i].fail == ERR_NONE &&
		    !workers[i].retired)
			return &workers[i];
	return NULL;
}

/*
 * Give w its grant (w->g, filled): a pre-forked one (warm) gets the
 * normal priority and the grant's limits on its cgroups (one started
 * for the grant has both), then SPEC with the work dir and, if granted,
 * the data dir (data -1: none); the channel owns both fds from here.
 */
static void
worker_give(struct worker *w, int warm, int work, int data)
{
	int fds[2] = {work, data};
	struct error e;

	w->st = W_BUILDING;
	arm_timer(w, BUILD_MS);
	if (warm && setpriority(PRIO_PROCESS, (id_t)w->pid, 0) == -1)
		log_warn("worker %d: priority", (int)w->pid);
	if (warm && cgroup_limit(w->cg_id, w->g.memory_mb, w->g.pids, &e) == -1)
		worker_fail(w, ERR_SANDBOX_FAILED, e.msg);
	PEER_SEND_FDS(&w->ctl, fds, data == -1 ? 1 : 2, spec_enc, &w->g);
}

/*
 * A worker for g: a warm one (*warm 1), or one started now; NULL with
 * e set.
 */
static struct worker *
worker_for(const struct grant *g, int *warm, struct error *e)
{
	int host_net = grant_net(g, &M->cfg) == NET_HOST;
	struct worker *w;
	long i;

	if ((*warm = (w = pool_take(host_net)) != NULL))
		return w;
	if ((i = uidpool_take(&uids)) == -1) {
		error_set(e, ERR_OVERLOADED, "every worker uid is in use");
		return NULL;
	}
	if (worker_spawn(&workers[i], host_net, g->memory_mb, g->pids, e) ==
	    -1) {
		workers[i].st = W_FREE;
		uidpool_put(&uids, (size_t)i, 0);
		return NULL;
	}
	return &workers[i];
}

/* Park g (taken over) if a dying worker is left for it; 1 if parked. */
static int
grant_park(struct grant *g)
{
	size_t i, dying = 0;

	for (i = 0; i < nworkers; i++) /* answered, or retired unused */
		dying += workers[i].st != W_FREE &&
		         (workers[i].answered || workers[i].retired);
	if (dying <= nparked)
		return 0;
	parked[nparked++] = *g;
	memset(g, 0, sizeof(*g));
	return 1;
}

/*
 * Check g and give it a worker; policyd learns which (GRANT_ACK), unless
 * g waits for a dying worker's uid.
 */
static void
grant_place(struct grant *gp)
{
	char id[GRANT_ID_LEN + 1];
	struct msg_grant_ack ack = {id, ERR_NONE, ""};
	struct error e = {ERR_NONE, ""};
	struct worker *w = NULL;
	struct grant g = *gp;
	int work = -1, data = -1, warm;

	memset(gp, 0, sizeof(*gp));
	memcpy(id, g.grant_id, sizeof(id));
	if (worker_find(id, 0) != NULL)
		error_set(&e, ERR_INTERNAL, "duplicate grant id");
	else if (grant_fits(&g, &M->cfg, &e) == 0 &&
	         /* Each skill's data dir is an image (lib/image.c), mounted
	          * on first use and held. */
	         (grant_data_access(&g) < 0 ||
	             (data = image_clone(M->cfg.data_dir, g.skill,
	                  M->cfg.data_mb, &e)) != -1) &&
	         (work = workdir_take(g.principal_uid, g.session, &e)) != -1 &&
	         (w = worker_for(&g, &warm, &e)) != NULL) {
		w->g = g;
		memset(&g, 0, sizeof(g));
		spec_fill(&w->g, &M->cfg,
		    (uid_t)(M->cfg.worker_uid_first + (size_t)(w - workers)),
		    cgroup_active());
		w->holds_work = 1;
		worker_give(w, warm, work, data);
	} else {
		if (work != -1) {
			close(work);
			workdir_release(g.principal_uid, g.session);
		}
		if (data != -1)
			close(data);
		/* No uid: one comes with a dying worker's reap. */
		if (work != -1 && e.type == ERR_OVERLOADED && grant_park(&g))
			return;
	}
	if ((ack.err = e.type) != ERR_NONE) {
		log_warnx("grant %s refused: %s", id, e.msg);
		ack.message = e.msg;
	}
	PEER_SEND(&M->roles[ROLE_POLICYD].peer, msg_grant_ack_enc, &ack);
	grant_free(&g);
}

/* A reap freed a uid: the oldest parked grant tries again. */
static void
grant_unpark(void)
{
	struct grant g;

	if (nparked == 0)
		return;
	g = parked[0];
	memmove(parked, parked + 1, --nparked * sizeof(*parked));
	grant_place(&g);
}

/* GRANT: check it, and give it a worker; policyd learns which. */
int
worker_on_grant(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct error e;
	struct grant g;

	if (grant_dec(d, &g, &e) == -1) {
		log_warnx("policyd: bad grant: %s", e.msg);
		return -1;
	}
	grant_place(&g);
	return 0;
}

/* The entry of a grant whose worker failed unrun, still fresh; or -1. */
static long
failed_find(const char *id)
{
	size_t i;

	for (i = 0; i < sizeof(failed) / sizeof(failed[0]); i++)
		if (failed[i].id[0] != '\0' && strcmp(failed[i].id, id) == 0 &&
		    now_mono_ms() - failed[i].at < GRANT_TTL_MS)
			return (long)i;
	return -1;
}

/* RUN: the broker names a grant it was told, once. */
int
worker_on_run(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_run_exited x = {0};
	struct worker *w;
	struct msg_run r;
	struct error e;
	long k;

	if (msg_run_dec(d, &r, &e) == -1 || r.ref == 0) { /* 0: no RUN yet */
		msg_run_free(&r);
		return -1;
	}
	if ((w = worker_find(r.grant_id, 0)) != NULL && w->ref != 0)
		w = NULL; /* run already */
	if (w == NULL && (k = failed_find(r.grant_id)) >= 0) {
		/* Its worker failed before RUN: that is the answer, once. */
		x = (struct msg_run_exited){.ref = r.ref,
		    .exit_code = -1,
		    .err = failed[k].err,
		    .message = failed[k].msg};
		PEER_SEND(&M->roles[ROLE_BROKER].peer, msg_run_exited_enc, &x);
		failed[k].id[0] = '\0';
	} else if (w == NULL) {
		log_warnx(
		    "RUN names grant %s: unknown, used or expired", r.grant_id);
		x = (struct msg_run_exited){.ref = r.ref,
		    .exit_code = -1,
		    .err = ERR_PERMISSION_DENIED,
		    .message =
		        "no such grant: unknown, already used, or expired"};
		PEER_SEND(&M->roles[ROLE_BROKER].peer, msg_run_exited_enc, &x);
	} else if ((w->ref = r.ref) != 0 && w->st == W_BUILT)
		worker_audit_start(w);
	msg_run_free(&r);
	return 0;
}

/* CANCEL: the broker is done with a grant: drop it, or end its run. */
int
worker_on_cancel(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_cancel c;
	struct worker *w;
	struct error e;

	if (msg_cancel_dec(d, &c, &e) == -1)
		return -1;
	if ((w = worker_find(c.grant_id, 0)) != NULL)
		worker_fail(w, w->ref ? ERR_CANCELLED : ERR_NONE,
		    "the call was cancelled");
	/* Never run: the broker's call is over, and so is its hold on the
	 * session; the session's next call need not wait for the reap. */
	if (w != NULL && w->ref == 0 && w->holds_work) {
		workdir_release(w->g.principal_uid, w->g.session);
		w->holds_work = 0;
	}
	msg_cancel_free(&c);
	return 0;
}

/* The record is durable: let the worker exec, give the broker its pipes. */
static void
worker_go(struct worker *w)
{
	struct msg_run_started s = {w->ref, w->pid};

	PEER_SEND(&w->ctl, msg_empty_enc, MSG_WORKER_GO);
	w->st = W_RUNNING;
	w->t_go = now_mono_ms();
	arm_timer(w, w->g.timeout_ms);
	PEER_SEND_FDS(&M->roles[ROLE_BROKER].peer, w->pipes, RUN_STARTED_FDS,
	    msg_run_started_enc, &s);
	memset(w->pipes, -1, sizeof(w->pipes)); /* the channel owns them */
}

/* auditd answers in order: the start it made durable may go. */
int
worker_on_audit_ack(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_audit_ack a;
	struct error e;
	size_t i;

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

/*
 * How the call ended: the worker's word, the clock, cgroups (rusage of the
 * init where no cgroup counts: it misses what was killed, not reaped);
 * -1 when that rusage is needed and ru is NULL (not reaped yet).
 */
static int
worker_result(struct worker *w, int status, const struct rusage *ru)
{
	struct msg_run_exited *x = &w->x;
	struct cgroup_usage u;

	if (cgroup_usage(w->cg_id, ru, &u) == -1)
		return -1;
	x->started = w->st >= W_RUNNING;
	if (w->st == W_RUNNING) { /* its init ended before the skill */
		x->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		x->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		x->duration_ms = now_mono_ms() - w->t_go;
		if (!u.oom && x->limit == LIMIT_NONE) /* not by us: killed */
			worker_fail(w, ERR_SANDBOX_FAILED,
			    "the sandbox ended before the skill did");
	}
	x->cpu_ms = u.cpu_ms;
	x->max_rss_kb = u.mem_peak_kb;
	run_exited_settle(x, u.oom, u.pids_max, w->fail, w->failmsg);
	return 0;
}

/*
 * The call is over: worker.exited to the log and RUN_EXITED to the broker
 * (for a call it asked to run), once; the session's work dir is free for
 * its next call.
 */
static void
worker_answer(struct worker *w)
{
	w->answered = 1;
	if (w->ref != 0) {
		audit_worker(w, &w->x);
		w->x.ref = w->ref;
		PEER_SEND(
		    &M->roles[ROLE_BROKER].peer, msg_run_exited_enc, &w->x);
	}
	if (w->holds_work) {
		workdir_release(w->g.principal_uid, w->g.session);
		w->holds_work = 0;
	}
}

/*
 * DONE: the files are listed and every process of the skill is gone, so
 * the call is answered now, not at the reap, which comes only once the
 * kernel has torn the worker's namespaces down (milliseconds: its mounts
 * go with an RCU grace period). Without cgroups to count the call, the
 * init's rusage is needed: that waits for the reap. (Its uid is free
 * only at the reap: a grant that finds none meanwhile waits, parked.)
 */
static int
worker_ctl_done(struct peer *p, const struct mp_doc *d)
{
	struct worker *w = p->arg;
	struct error e;

	if (msg_empty_dec(d, &e) == -1 || w->st != W_SCANNING)
		return -1;
	w->st = W_DONE;
	arm_timer(w, SCAN_MS); /* to be gone */
	if (worker_result(w, 0, NULL) == 0)
		worker_answer(w);
	return 0;
}

/* SIGCHLD for a worker: end what is left of the call, and report. */
int
worker_reap(pid_t pid, int status, const struct rusage *ru)
{
	struct worker *w;
	size_t i;

	if ((w = worker_find("", pid)) == NULL)
		return 0;
	w->ctl.on_dead = NULL; /* the reaper has the last word */
	peer_drain(&w->ctl);   /* its last words may be queued still */
	if ((w->st == W_WARM || w->st == W_BUILDING) && WIFEXITED(status) &&
	    WEXITSTATUS(status) == OS_EXIT_JOIN) {
		/* before its exec: no word of its own came, only our EOF's */
		const char *why = "cgroups: the worker could not join its "
		                  "groups";

		log_warnx("worker %d: %s", (int)pid, why);
		w->fail = ERR_SANDBOX_FAILED;
		snprintf(w->failmsg, sizeof(w->failmsg), "%s", why);
	}
	worker_fail(w, ERR_NONE, NULL); /* whatever is left of it */
	if (!w->answered) {
		(void)worker_result(w, status, ru);
		worker_answer(w);
	}
	if (w->ref == 0 && w->st > W_WARM && w->fail != ERR_NONE) {
		size_t k =
		    nfailed_next++ % (sizeof(failed) / sizeof(failed[0]));

		snprintf(
		    failed[k].id, sizeof(failed[k].id), "%s", w->g.grant_id);
		failed[k].err = w->fail;
		snprintf(
		    failed[k].msg, sizeof(failed[k].msg), "%s", w->failmsg);
		failed[k].at = now_mono_ms();
	}
	if (w->net_fd != -1) { /* its connections end with it */
		PEER_SEND(&M->roles[ROLE_NETPROXY].peer, msg_net_close_enc,
		    w->g.grant_id);
		close(w->net_fd);
	}
	peer_kill(&w->ctl, "reaped");
	event_free(w->timer);
	for (i = 0; i < RUN_STARTED_FDS; i++)
		if (w->pipes[i] != -1)
			close(w->pipes[i]);
	if (w->st == W_WARM && !w->retired && !M->shutting_down) /* failed */
		pool_hold_until = now_mono_ms() + POOL_HOLD_MS;
	w->st = W_FREE;
	uidpool_put(&uids, (size_t)(w - workers), w->cg_id);
	grant_free(&w->g);
	grant_unpark();
	pool_fill();
	return 1;
}

/*
 * Which workers end with a role: all with a grant (broker), unrun
 * (policyd), auditing; the warm pool only when the daemon stops.
 */
void
worker_role_lost(enum role_id role)
{
	size_t i;

	if (role == ROLE_AUDITD)
		M->audit_acked = M->audit_ref;
	while (role == ROLE_POLICYD && nparked > 0) /* no one to answer */
		grant_free(&parked[--nparked]);
	for (i = 0; i < nworkers; i++)
		if (workers[i].st == W_WARM && M->shutting_down)
			worker_fail(&workers[i], ERR_NONE, NULL);
		else if (workers[i].st > W_WARM &&
		         (role == ROLE_BROKER ||
		             (role == ROLE_POLICYD && workers[i].ref == 0) ||
		             (role == ROLE_AUDITD &&
		                 workers[i].st == W_AUDITING)))
			worker_fail(&workers[i],
			    role == ROLE_AUDITD   ? ERR_AUDIT_UNAVAILABLE
			    : role == ROLE_BROKER ? ERR_CANCELLED
			                          : ERR_NONE,
			    role == ROLE_AUDITD ? "auditd stopped before "
			                          "recording the start"
			                        : "skillbrokerd is stopping");
}
