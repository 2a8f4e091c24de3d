/*
 * skillbroker-worker: one per call, never reused. It reads its spec (the
 * grant) from the master, builds the sandbox, says "ready", and waits
 * for the go byte, which the master sends only once the audit record of
 * this start is durable. Then it execs the declared entry point.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"
#include "worker.h"

/* Report a failed step to the master and stop; nothing of the skill ran. */
static void __attribute__((noreturn)) fail(const char *step, const char *msg)
{
	char line[ERROR_MSG_MAX + 64];
	int n;

	n = snprintf(line, sizeof(line), "fail %s: %s\n", step, msg);
	if (n > 0)
		(void)write_full(WORKER_FD_STATUS, line,
		    (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	_exit(127);
}

static void
read_spec(struct grant *g)
{
	struct mp_doc d;
	struct error e;
	uint8_t *buf;
	size_t len;
	uint64_t t;

	if (frame_recv(WORKER_FD_SPEC, FRAME_MAX_INTERNAL, &buf, &len, &e) ==
	    -1)
		fail("spec", e.msg);
	if (mp_decode(&d, buf, len, NULL, &e) == -1 ||
	    msg_type_of(&d, &t, &e) == -1 || t != MSG_GRANT ||
	    grant_dec(&d, g, &e) == -1)
		fail("spec", "malformed worker spec");
	mp_doc_free(&d);
	free(buf);
}

/* argv: the entry point's path inside the sandbox, then the arguments. */
static char **
build_argv(const struct grant *g, char **path)
{
	char **argv;
	size_t i;

	xasprintf(path, "/skill/%s", g->entry);
	argv = xcalloc(g->nargs + 2, sizeof(char *));
	argv[0] = *path;
	for (i = 0; i < g->nargs; i++)
		argv[i + 1] = g->args[i];
	return argv;
}

/*
 * The environment: the grant's, with the directory variables pointing
 * where the sandbox shows them (the host paths stay hidden).
 */
static char **
build_env(const struct grant *g)
{
	static const char *const fixed[][2] = {{"HOME=", "HOME=/work"},
	    {"WORK_DIR=", "WORK_DIR=/work"}, {"SKILL_DIR=", "SKILL_DIR=/skill"},
	    {"DATA_DIR=", "DATA_DIR=/data"}, {NULL, NULL}};
	char **envp = xcalloc(g->nenv + 1, sizeof(char *));
	size_t i, k;

	for (i = 0; i < g->nenv; i++) {
		envp[i] = g->env[i];
		for (k = 0; fixed[k][0] != NULL; k++)
			if (strncmp(g->env[i], fixed[k][0],
			        strlen(fixed[k][0])) == 0)
				envp[i] = (char *)fixed[k][1];
	}
	return envp;
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

/*
 * Stay as pid 1 of the namespace and run the skill as a child: pid 1
 * ignores signals it has no handler for (SIGXFSZ, SIGXCPU would not end
 * the skill), and orphans need a reaper. When the skill ends, report how
 * on the status pipe and exit: the kernel then ends every process left.
 */
static void __attribute__((noreturn))
run_as_init(const char *path, char **xargv, char **envp)
{
	char line[64];
	pid_t skill, pid;
	int status, n;

	if ((skill = fork()) == -1)
		fail("exec", strerror(errno));
	if (skill == 0) {
		execve(path, xargv, envp);
		fail("exec", strerror(errno));
	}
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
		n = WIFSIGNALED(status) ? snprintf(line, sizeof(line),
		                              "signal %d\n", WTERMSIG(status))
		                        : snprintf(line, sizeof(line),
		                              "exit %d\n", WEXITSTATUS(status));
		(void)write_full(WORKER_FD_STATUS, line, (size_t)n);
		_exit(0);
	}
}

int
main(int argc, char *argv[])
{
	struct grant g;
	struct error e;
	const char *step = "start";
	char go, *path, **xargv, **envp;
	int r;

	log_init(
	    "skillbroker-worker", 0, argc > 1 && strcmp(argv[1], "-v") == 0);
	reset_signals();
	if (set_cloexec(WORKER_FD_STATUS, 1) == -1)
		_exit(126);
	close_from(5);
	read_spec(&g);
	if (sandbox_build(&g, &step, &e) == -1)
		fail(step, e.msg);
	xargv = build_argv(&g, &path);
	envp = build_env(&g);
	if (write_full(WORKER_FD_STATUS, "ready\n", 6) == -1)
		_exit(127);
	/* Wait for the durable audit record; EOF means "do not run". */
	if ((r = read_full(WORKER_FD_SPEC, &go, 1)) != 0 || go != 'g')
		_exit(125);
	close(WORKER_FD_SPEC);
	if (sandbox_final_limits(&g, &e) == -1)
		fail("rlimits", e.msg);
	run_as_init(path, xargv, envp);
}
