/*
 * skillbroker-worker: one per call, never reused. It builds what no
 * grant changes (PREP: it may be pre-forked, waiting for its call),
 * reads its spec from the master, builds the rest, says WORKER_READY, and waits
 * for WORKER_GO, which the master sends only once the audit record of this
 * start is durable. Then it runs the declared entry point as the child
 * of its init, reports how it ended (WORKER_EXIT), what it wrote
 * (FILES, to the broker), and that it is done (WORKER_DONE).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/os.h"
#include "../lib/usage.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"
#include "worker.h"

/*
 * The worker dies with the master: SIGKILL when the master goes (pid 1
 * dying takes the whole namespace). The setting is cleared when our
 * credentials change, so it is made again after the drop; each time,
 * a master that died before it was set shows as a hung-up socket.
 */
static void
die_with_master(void)
{
	struct pollfd pfd = {FD_WORKER_CTL, POLLIN, 0};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    poll(&pfd, 1, 0) == -1 || (pfd.revents & (POLLHUP | POLLERR)))
		_exit(125);
}

/* One message to the master on the control socket. */
static int
ctl_send(const struct mp_enc *m)
{
	struct error e;

	return frame_send(FD_WORKER_CTL, m->sb.data, m->sb.size, &e);
}

/* Report a failed step to the master. */
static void
fail_report(const char *step, const char *msg)
{
	struct msg_worker_fail f = {(char *)step, (char *)msg};
	struct mp_enc m;

	enc_init(&m);
	msg_worker_fail_enc(&m, &f);
	(void)ctl_send(&m);
	enc_free(&m);
}

/* ... and stop; nothing of the skill ran. */
static void __attribute__((noreturn)) fail(const char *step, const char *msg)
{
	fail_report(step, msg);
	_exit(127);
}

static void
read_prep(struct msg_prep *p)
{
	struct mp_doc d;
	struct error e;

	if (msg_read(FD_WORKER_CTL, MSG_PREP, &d, &e) == -1 ||
	    msg_prep_dec(&d, p, &e) == -1)
		fail("spec", "malformed worker prep");
	mp_doc_free(&d);
}

/*
 * The grant, with the work dir and (granted) the data dir: moved out of
 * the way first, then to their fds.
 */
static void
read_spec(struct grant *g)
{
	static const int at[2] = {FD_WORKER_WORK, FD_WORKER_DATA};
	int fds[2], hi[2], n = 0, i;
	struct mp_doc d;
	struct error e;

	if (msg_read_fds(FD_WORKER_CTL, MSG_SPEC, &d, fds, 2, &n, &e) == -1)
		fail("spec", "malformed worker spec");
	if (spec_dec(&d, g, &e) == -1 ||
	    n != (grant_data_access(g) >= 0 ? 2 : 1))
		fail("spec", "malformed worker spec");
	mp_doc_free(&d);
	for (i = 0; i < n; i++)
		if ((hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 16)) == -1 ||
		    close(fds[i]) == -1)
			fail("spec", strerror(errno));
	for (i = 0; i < n; i++)
		if (dup3(hi[i], at[i], O_CLOEXEC) == -1 || close(hi[i]) == -1)
			fail("spec", strerror(errno));
}

/*
 * What runs: the entry point's path inside the sandbox, then the
 * arguments; or its interpreter with the entry as its first argument.
 */
static char **
build_argv(const struct grant *g, char **path)
{
	char **argv, *entry;
	size_t i, n = 0;

	xasprintf(&entry, "/skill/%s", g->entry);
	argv = xcalloc(g->nargs + 3, sizeof(char *));
	if (g->interpreter[0] != '\0')
		argv[n++] = g->interpreter;
	argv[n++] = entry;
	for (i = 0; i < g->nargs; i++)
		argv[n++] = g->args[i];
	*path = argv[0];
	return argv;
}

/* Does KEY=VALUE entry name a variable one of list's entries sets? */
static int
env_named(const char *entry, const char *const *list)
{
	size_t k;

	for (k = 0; list[k] != NULL; k++)
		if (strncmp(entry, list[k], strcspn(list[k], "=") + 1) == 0)
			return 1;
	return 0;
}

/*
 * The environment: the directory variables, where the sandbox shows them
 * (the host paths stay hidden); HOME on this call's own /tmp, so no
 * start-up file another call of the session left in the shared work dir
 * runs (shell profiles, Python's user site, tool configs); the start-up
 * hooks of interpreters and git that read the work dir turned off. Then
 * the grant's other entries, never one that overrides these or that the
 * dynamic loader acts on.
 */
static char **
build_env(const struct grant *g)
{
	/* Where the egress proxy listens, for every client that honours
	 * these; loopback itself (the skill's own servers) is direct. */
	static const char *const proxy[] = {"HTTP_PROXY=" NET_PROXY_URL,
	    "HTTPS_PROXY=" NET_PROXY_URL, "http_proxy=" NET_PROXY_URL,
	    "https_proxy=" NET_PROXY_URL, "ALL_PROXY=" NET_PROXY_URL,
	    "all_proxy=" NET_PROXY_URL, "NO_PROXY=localhost,127.0.0.1,::1",
	    "no_proxy=localhost,127.0.0.1,::1", NULL};
	static const char *const fixed[] = {"HOME=/tmp", "WORK_DIR=/work",
	    "SKILL_DIR=/skill", "DATA_DIR=/data", "PYTHONNOUSERSITE=1",
	    "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=core.hooksPath",
	    "GIT_CONFIG_VALUE_0=/dev/null", "GIT_CONFIG_KEY_1=core.fsmonitor",
	    "GIT_CONFIG_VALUE_1=false", NULL};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]) - 1,
	       nproxy = sizeof(proxy) / sizeof(proxy[0]) - 1;
	char **envp = xcalloc(g->nenv + nfixed + nproxy + 1, sizeof(char *));
	size_t i, k, n = 0;

	for (k = 0; fixed[k] != NULL; k++)
		envp[n++] = (char *)fixed[k];
	for (k = 0; g->net == NET_PROXY && proxy[k] != NULL; k++)
		envp[n++] = (char *)proxy[k];
	for (i = 0; i < g->nenv; i++)
		if (!env_named(g->env[i], fixed) &&
		    !env_named(g->env[i], proxy) &&
		    strncmp(g->env[i], "LD_", 3) != 0 &&
		    strncmp(g->env[i], "GIT_CONFIG", 10) != 0)
			envp[n++] = g->env[i];
	return envp;
}

/* /dev/null at fd (close-on-exec), holding its number; -1 on failure. */
static int
hold_fd(int fd)
{
	int n, r;

	if ((n = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	r = n == fd ? 0 : dup3(n, fd, O_CLOEXEC);
	if (n != fd)
		close(n);
	return r == -1 ? -1 : 0;
}

/* Signals start at their defaults, whatever the daemon inherited. */
static void
reset_signals(void)
{
	sigset_t none;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)signal(sig, SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Realtime ns, a little early: file times come from a coarse clock. */
static uint64_t
now_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec -
	       20000000ULL;
}

/*
 * The skill is gone: end whatever it left (pid 1 may kill every other
 * process of its namespace), then list what the call wrote for the
 * broker. No process of the skill is left to change the tree, send a
 * signal pid 1 would take, or reach this process's memory (it is not
 * dumpable). The report pipe is closed at once (the broker reads to its
 * end), and DONE tells the master the call may be answered: the kernel's
 * teardown of the namespaces at our exit is no part of the call.
 */
static void
report_files(uint64_t since_ns)
{
	static const char *const dirs[] = {"/work", "/data", NULL};
	struct msg_files f = {0};
	struct mp_enc m;
	struct error e;

	(void)kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) != -1 || errno == EINTR)
		;
	files_scan(dirs, since_ns, &f);
	enc_init(&m);
	msg_files_enc(&m, &f);
	(void)frame_send(FD_WORKER_REPORT, m.sb.data, m.sb.size, &e);
	(void)close(FD_WORKER_REPORT);
	enc_free(&m);
	msg_files_free(&f);
	enc_init(&m);
	msg_empty_enc(&m, MSG_WORKER_DONE);
	(void)ctl_send(&m);
	enc_free(&m);
}

/* What the skill's child needs, and what it leaves if it fails. */
struct skill_start {
	const char *path;
	char **argv, **envp;
	struct rlimit as;
	const char *step, *call; /* where it failed, and in which call */
	int err;                 /* 0, or errno of the failure */
};

/*
 * The skill's child, in our memory until its exec (os_vfork): system
 * calls only; a failure is left in *s for us and exits 127.
 */
static int OS_VFORK_CHILD
skill_exec(void *arg)
{
	struct skill_start *s = arg;
	sigset_t none;

	s->step = "rlimits";
	s->call = "setrlimit AS: ";
	if (setrlimit(RLIMIT_AS, &s->as) == 0) {
		s->step = "exec";
		s->call = "";
		if (sigemptyset(&none) == 0 &&
		    sigprocmask(SIG_SETMASK, &none, NULL) == 0)
			execve(s->path, s->argv, s->envp);
	}
	s->err = errno;
	_exit(127);
}

/*
 * Stay as pid 1 of the namespace and run the skill as a child: pid 1
 * ignores signals it has no handler for (SIGXFSZ, SIGXCPU would not end
 * the skill), and orphans need a reaper. When the skill ends, report how
 * on the status pipe, list its files, and exit: the kernel then ends
 * every process left.
 */
static void __attribute__((noreturn))
run_as_init(const struct grant *g, const char *path, char **xargv, char **envp)
{
	struct skill_start s = {path, xargv, envp, {0, 0}, NULL, NULL, 0};
	uint64_t since = now_real_ns();
	struct msg_worker_exit x;
	char msg[128];
	struct mp_enc m;
	pid_t skill, pid;
	int status;

	/* The address-space cap binds the skill, not its init. */
	s.as.rlim_cur = s.as.rlim_max = sandbox_as_limit(g);
	if ((skill = os_vfork(skill_exec, &s, 0)) == -1)
		fail("exec", strerror(errno));
	if (s.err != 0) { /* reported as its own fork reported it */
		snprintf(msg, sizeof(msg), "%s%s", s.call, strerror(s.err));
		fail_report(s.step, msg);
	}
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	close(0);
	close(1);
	close(2);
	for (;;) {
		pid = waitpid(-1, &status, 0);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid == -1)
			_exit(126);
		if (pid != skill)
			continue;
		x.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
		x.exit_code = WIFSIGNALED(status) ? -1 : WEXITSTATUS(status);
		enc_init(&m);
		msg_worker_exit_enc(&m, &x);
		(void)ctl_send(&m);
		enc_free(&m);
		report_files(since);
		_exit(0);
	}
}

int
main(int argc, char *argv[])
{
	struct msg_prep prep;
	struct grant g;
	struct error e;
	const char *step = "start";
	char *path, **xargv, **envp;
	struct mp_enc m;
	struct mp_doc d;
	int lfd;

	usage_helper(argc, argv, "skillbroker-worker", "[-v]", FD_WORKER_CTL);
	reset_signals();
	if (set_cloexec(FD_WORKER_CTL, 1) == -1 ||
	    set_cloexec(FD_WORKER_REPORT, 1) == -1)
		_exit(126);
	close_from(FD_WORKER_REPORT + 1);
	/*
	 * The syslog socket, connected now (its /dev/log is out of sight
	 * once the root is ours), above the fds SPEC's mounts take: held
	 * by /dev/null until then, so no log line ever goes to a mount.
	 */
	if (hold_fd(FD_WORKER_WORK) == -1 || hold_fd(FD_WORKER_DATA) == -1)
		_exit(126);
	log_init(
	    "skillbroker-worker", 0, argc > 1 && strcmp(argv[1], "-v") == 0);
	die_with_master();
	/* What no grant changes first: a pre-forked worker waits after it. */
	read_prep(&prep);
	if (sandbox_prep(&prep, &step, &e) == -1)
		fail(step, e.msg);
	read_spec(&g);
	msg_prep_free(&prep);
	if (sandbox_build(&g, &step, &e) == -1)
		fail(step, e.msg);
	die_with_master(); /* the drop to the worker uid cleared it */
	xargv = build_argv(&g, &path);
	envp = build_env(&g);
	enc_init(&m);
	msg_empty_enc(&m, MSG_WORKER_READY);
	/* The proxy's listener goes with READY; none stays in here. */
	if ((lfd = sandbox_net_listener()) != -1
	        ? frame_send_fd(FD_WORKER_CTL, m.sb.data, m.sb.size, lfd, &e) ==
	                  -1 ||
	              close(lfd) == -1
	        : ctl_send(&m) == -1)
		_exit(127);
	enc_free(&m);
	/* Wait for the durable audit record; anything else: do not run. */
	if (msg_read(FD_WORKER_CTL, MSG_WORKER_GO, &d, &e) == -1 ||
	    msg_empty_dec(&d, &e) == -1)
		_exit(125);
	mp_doc_free(&d);
	run_as_init(&g, path, xargv, envp);
}
