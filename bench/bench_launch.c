/*
 * bench_launch.c: the baselines. The bench's entry point started with
 * fork+exec, directly or under bubblewrap in a sandbox equivalent to a
 * worker's (docs/sandbox.md): every namespace (net included), the
 * system paths read-only as the worker binds them, the skill read-only
 * at /skill, a work dir at /work (the cwd), tmpfs /tmp, proc, a minimal
 * /dev, a new session, no capabilities, a non-root uid in a user
 * namespace, killed with its parent. Its stdout comes back through a
 * pipe read to EOF, as the broker reads a worker's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* worker.system_paths' defaults (docs/config.md): what bwrap binds. */
static const char *const bench_launch_sys[] = {"/usr", "/bin", "/sbin", "/lib",
    "/lib64", "/lib32", "/libx32", "/etc/ld.so.cache", "/etc/ld.so.conf",
    "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime",
    "/etc/nsswitch.conf", "/etc/hosts", "/etc/resolv.conf", "/etc/ssl/certs",
    NULL};

/* The environment of both baselines: a worker's, less what no-op needs. */
static char *bench_launch_env[] = {"PATH=/usr/local/bin:/usr/bin:/bin",
    "LANG=C.UTF-8", "HOME=/tmp", "SKILL_DIR=/skill", "WORK_DIR=/work", NULL};

#define BENCH_LAUNCH_ARGV 160
static char *bench_launch_bw[BENCH_LAUNCH_ARGV]; /* bwrap's argv */
static size_t bench_launch_nbw, bench_launch_work_at, bench_launch_user_at;
static char *bench_launch_direct[BENCH_MAX_ARGS + 2];
static char bench_launch_entry[PATH_MAX], bench_launch_inside[PATH_MAX];
static int bench_launch_user = 1;

/* A child started, its stdout at fd. */
struct bench_launch_child {
	pid_t pid;
	int fd;
	uint64_t t0;
};

/* Append to bwrap's argv, bounded. */
static void
bench_launch_push(const char *a)
{
	if (bench_launch_nbw + 1 >= BENCH_LAUNCH_ARGV)
		bench_stats_die("bwrap: too many arguments");
	bench_launch_bw[bench_launch_nbw++] = (char *)a;
	bench_launch_bw[bench_launch_nbw] = NULL;
}

/* A copy of a formatted string that lives as long as the process. */
static char *
bench_launch_fmt(const char *fmt, const char *a)
{
	char buf[PATH_MAX], *s;
	int n;

	n = snprintf(buf, sizeof(buf), fmt, a);
	if (n < 0 || (size_t)n >= sizeof(buf))
		bench_stats_die("path too long: %s", a);
	if ((s = strdup(buf)) == NULL)
		bench_stats_die("out of memory");
	return s;
}

/* --ro-bind each system path, or --symlink it where the host has a link. */
static void
bench_launch_push_sys(void)
{
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;
	size_t i;

	for (i = 0; bench_launch_sys[i] != NULL; i++) {
		const char *p = bench_launch_sys[i];

		if (lstat(p, &st) == -1)
			continue; /* the worker skips a missing path too */
		if (S_ISLNK(st.st_mode)) {
			n = readlink(p, target, sizeof(target) - 1);
			if (n < 0 || (size_t)n >= sizeof(target) - 1)
				bench_stats_die("readlink %s", p);
			target[n] = '\0';
			bench_launch_push("--symlink");
			bench_launch_push(bench_launch_fmt("%s", target));
		} else {
			bench_launch_push("--ro-bind");
			bench_launch_push(p);
		}
		bench_launch_push(p);
	}
}

/* bwrap's argv, with the work dir's place kept for each launch's slot. */
static void
bench_launch_build(const struct bench_opts *o)
{
	static char uid[16];
	size_t i;

	snprintf(uid, sizeof(uid), "%u", (unsigned)o->uid);
	bench_launch_nbw = 0;
	bench_launch_push(o->bwrap);
	bench_launch_push("--unshare-all");
	bench_launch_user_at = bench_launch_nbw;
	if (bench_launch_user) {
		bench_launch_push("--unshare-user");
		bench_launch_push("--uid");
		bench_launch_push(uid);
		bench_launch_push("--gid");
		bench_launch_push(uid);
	}
	bench_launch_push("--die-with-parent");
	bench_launch_push("--new-session");
	bench_launch_push("--cap-drop");
	bench_launch_push("ALL");
	bench_launch_push("--hostname");
	bench_launch_push("localhost");
	bench_launch_push_sys();
	bench_launch_push("--ro-bind");
	bench_launch_push(o->skill_dir);
	bench_launch_push("/skill");
	bench_launch_push("--bind");
	bench_launch_work_at = bench_launch_nbw;
	bench_launch_push(o->work_dir);
	bench_launch_push("/work");
	bench_launch_push("--proc");
	bench_launch_push("/proc");
	bench_launch_push("--dev");
	bench_launch_push("/dev");
	bench_launch_push("--tmpfs");
	bench_launch_push("/tmp");
	bench_launch_push("--remount-ro");
	bench_launch_push("/");
	bench_launch_push("--chdir");
	bench_launch_push("/work");
	bench_launch_push("--");
	bench_launch_push(bench_launch_inside);
	for (i = 0; i < o->nargs; i++)
		bench_launch_push(o->args[i]);
}

/* The work dir of one slot (one per parallel loop), made on first use. */
static void
bench_launch_slot_dir(
    const struct bench_opts *o, unsigned slot, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len, "%s/slot-%u", o->work_dir, slot);
	if (n < 0 || (size_t)n >= len)
		bench_stats_die("work dir path too long");
	if (mkdir(buf, 0777) == -1 && errno != EEXIST)
		bench_stats_die("mkdir %s: %s", buf, strerror(errno));
}

/* Fork and exec one launch with its stdout on a pipe, all else null. */
static struct bench_launch_child
bench_launch_start(
    const struct bench_opts *o, enum bench_launch_kind kind, unsigned slot)
{
	struct bench_launch_child ch;
	char work[PATH_MAX], *argv[BENCH_LAUNCH_ARGV];
	int p[2], null;

	bench_launch_slot_dir(o, slot, work, sizeof(work));
	if (kind == BENCH_LAUNCH_BWRAP) {
		memcpy(argv, bench_launch_bw,
		    (bench_launch_nbw + 1) * sizeof(*argv));
		argv[bench_launch_work_at] = work;
	}
	if (pipe2(p, O_CLOEXEC) == -1)
		bench_stats_die("pipe: %s", strerror(errno));
	ch.t0 = bench_stats_now_ns();
	if ((ch.pid = fork()) == -1)
		bench_stats_die("fork: %s", strerror(errno));
	if (ch.pid == 0) {
		if ((null = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(null, 0) == -1 || dup2(p[1], 1) == -1 ||
		    dup2(null, 2) == -1)
			_exit(126);
		if (kind == BENCH_LAUNCH_BWRAP)
			execve(o->bwrap, argv, bench_launch_env);
		else if (chdir(work) == 0)
			execve(bench_launch_entry, bench_launch_direct,
			    bench_launch_env);
		_exit(127);
	}
	if (close(p[1]) == -1 || fcntl(p[0], F_SETFL, O_NONBLOCK) == -1)
		bench_stats_die("pipe: %s", strerror(errno));
	ch.fd = p[0];
	return ch;
}

/* Read what is there; 1 at EOF (the fd closed), 0 if more may come. */
static int
bench_launch_drain(struct bench_launch_child *ch)
{
	char buf[65536];
	ssize_t n;

	for (;;) {
		n = read(ch->fd, buf, sizeof(buf));
		if (n > 0)
			continue;
		if (n == 0) {
			if (close(ch->fd) == -1)
				bench_stats_die("close: %s", strerror(errno));
			ch->fd = -1;
			return 1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0;
		bench_stats_die("read: %s", strerror(errno));
	}
}

/* Reap a child whose output ended; its exit status, or 128+signal. */
static int
bench_launch_reap(struct bench_launch_child *ch)
{
	int st;

	while (waitpid(ch->pid, &st, 0) == -1)
		if (errno != EINTR)
			bench_stats_die("waitpid: %s", strerror(errno));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One launch, waited for: its wall time in ns, its status in *status. */
uint64_t
bench_launch_once(const struct bench_opts *o, enum bench_launch_kind kind,
    unsigned slot, int *status)
{
	struct bench_launch_child ch = bench_launch_start(o, kind, slot);
	struct pollfd pf;

	do {
		pf = (struct pollfd){ch.fd, POLLIN, 0};
		if (poll(&pf, 1, -1) == -1 && errno != EINTR)
			bench_stats_die("poll: %s", strerror(errno));
	} while (!bench_launch_drain(&ch));
	*status = bench_launch_reap(&ch);
	return bench_stats_now_ns() - ch.t0;
}

/*
 * Check the entry point and build both argvs; try bwrap once with a
 * user namespace and, if that fails, once without (*bwrap_user says
 * which). -1 when bwrap (asked for) does not run at all.
 */
int
bench_launch_setup(const struct bench_opts *o, int *bwrap_user)
{
	int n, st;
	size_t i;

	n = snprintf(bench_launch_entry, sizeof(bench_launch_entry), "%s/%s",
	    o->skill_dir, o->entry);
	if (n < 0 || (size_t)n >= sizeof(bench_launch_entry) ||
	    snprintf(bench_launch_inside, sizeof(bench_launch_inside),
	        "/skill/%s", o->entry) >= (int)sizeof(bench_launch_inside))
		bench_stats_die("entry path too long");
	if (access(bench_launch_entry, X_OK) == -1)
		bench_stats_die("%s: %s", bench_launch_entry, strerror(errno));
	bench_launch_direct[0] = bench_launch_entry;
	for (i = 0; i < o->nargs; i++)
		bench_launch_direct[i + 1] = (char *)o->args[i];
	bench_launch_direct[o->nargs + 1] = NULL;
	*bwrap_user = 0;
	if (o->bwrap == NULL)
		return 0;
	for (bench_launch_user = 1; bench_launch_user >= 0;
	     bench_launch_user--) {
		bench_launch_build(o);
		(void)bench_launch_once(o, BENCH_LAUNCH_BWRAP, 0, &st);
		if (st == 0) {
			*bwrap_user = bench_launch_user;
			return 0;
		}
		fprintf(stderr,
		    "sb_bench: bwrap %s a user namespace: status %d\n",
		    bench_launch_user ? "with" : "without", st);
	}
	return -1;
}

/*
 * k loops of bwrap launches side by side for the given time, each
 * starting its next as its last ends: the launches that ended ok in
 * the time (the return), their wall times, and those that failed.
 */
uint64_t
bench_launch_parallel(const struct bench_opts *o, unsigned k, double seconds,
    struct bench_samples *lat, uint64_t *failed)
{
	struct bench_launch_child *ch;
	struct pollfd *pf;
	uint64_t end, done = 0;
	unsigned i, live = k;

	ch = bench_stats_xrealloc(NULL, k, sizeof(*ch));
	pf = bench_stats_xrealloc(NULL, k, sizeof(*pf));
	end = bench_stats_now_ns() + (uint64_t)(seconds * 1e9);
	for (i = 0; i < k; i++)
		ch[i] = bench_launch_start(o, BENCH_LAUNCH_BWRAP, i);
	while (live > 0) {
		for (i = 0; i < k; i++)
			pf[i] = (struct pollfd){ch[i].fd, POLLIN, 0};
		if (poll(pf, k, -1) == -1) {
			if (errno == EINTR)
				continue;
			bench_stats_die("poll: %s", strerror(errno));
		}
		for (i = 0; i < k; i++) {
			if (pf[i].fd < 0 || pf[i].revents == 0 ||
			    !bench_launch_drain(&ch[i]))
				continue;
			if (bench_launch_reap(&ch[i]) == 0) {
				done++;
				bench_stats_add(
				    lat, bench_stats_now_ns() - ch[i].t0);
			} else
				(*failed)++;
			if (bench_stats_now_ns() < end)
				ch[i] = bench_launch_start(
				    o, BENCH_LAUNCH_BWRAP, i);
			else
				live--;
		}
	}
	free(pf);
	free(ch);
	return done;
}
