/*
 * killer [PID...]: SIGKILL and ptrace every process visible in /proc and
 * every pid given (the host pids of another worker, found by the test).
 * Also ptrace and process_vm_readv its own child, which the seccomp
 * filter must refuse with EPERM whatever the target.
 */
#include "attack.h"
#include <ctype.h>
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

static void
attack(pid_t pid, const char *why)
{
	char what[128], comm[64] = "?", path[64];
	FILE *f;
	long r;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(comm, sizeof(comm), f) != NULL)
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	say("INFO target %d (%s) %s", (int)pid, comm, why);
	snprintf(what, sizeof(what), "ptrace attach %d", (int)pid);
	r = ptrace(PTRACE_ATTACH, pid, NULL, NULL);
	if (verdict(what, r, errno, EPERM, ESRCH, 0))
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	snprintf(what, sizeof(what), "ptrace seize %d", (int)pid);
	r = ptrace(PTRACE_SEIZE, pid, NULL, NULL);
	if (verdict(what, r, errno, EPERM, ESRCH, 0))
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
	snprintf(what, sizeof(what), "kill -9 %d", (int)pid);
	r = kill(pid, SIGKILL);
	verdict(what, r, errno, EPERM, ESRCH, 0);
}

int
main(int argc, char *argv[])
{
	struct iovec l, rv;
	struct dirent *de;
	char buf[16];
	pid_t self = getpid(), child;
	DIR *d;
	long r;
	int i, st;

	say("INFO self pid %d", (int)self);
	/* own child: seccomp, not permissions, must stop these */
	if ((child = fork()) == 0) {
		pause();
		_exit(0);
	}
	r = ptrace(PTRACE_ATTACH, child, NULL, NULL);
	if (verdict("ptrace attach own child", r, errno, EPERM, 0))
		ptrace(PTRACE_DETACH, child, NULL, NULL);
	l.iov_base = buf;
	l.iov_len = sizeof(buf);
	rv.iov_base = (void *)&self;
	rv.iov_len = sizeof(self);
	r = process_vm_readv(child, &l, 1, &rv, 1, 0);
	verdict("process_vm_readv own child", r, errno, EPERM, 0);
	r = process_vm_writev(child, &l, 1, &rv, 1, 0);
	verdict("process_vm_writev own child", r, errno, EPERM, 0);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);

	if ((d = opendir("/proc")) != NULL) {
		while ((de = readdir(d)) != NULL) {
			pid_t p;
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			p = (pid_t)atoi(de->d_name);
			/*
			 * pid 1 is this call's own init (the worker): the
			 * kernel drops signals sent to it from inside its
			 * namespace, and it is no other call's process.
			 */
			if (p == 1)
				say("INFO pid 1: this call's own init, "
				    "skipped");
			else if (p != self)
				attack(p, "seen in /proc");
		}
		closedir(d);
	}
	for (i = 1; i < argc; i++)
		attack((pid_t)atoi(argv[i]), "given by the test");
	r = kill(-1, SIGKILL);
	say("INFO kill(-1, SIGKILL): %s",
	    r == 0 ? "signalled something" : ename(errno));
	say("DONE");
	return 0;
}
