/*
 * hostprobe: what this host can do by itself, outside any sandbox, so
 * that a test of a sandbox layer can tell "the sandbox stopped it" from
 * "the host cannot do it at all". Built and run by tests/lib/daemon.sh
 * (sb_have, sb_require).
 *
 *   hostprobe i386       int $0x80 getpid (IA32 emulation)
 *   hostprobe x32        getpid with __X32_SYSCALL_BIT (the x32 ABI)
 *   hostprobe landlock   the Landlock ABI version
 *   hostprobe landlock_scope   ABI 6: abstract unix sockets scoped
 *
 * Prints one line saying what it found. Exit 0: the host has it; 1: it
 * does not; 2: usage or a local error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* Each call runs in a child: a host without the ABI may kill it. */
static long
i386_getpid(void)
{
#if defined(__x86_64__)
	long r;

	__asm__ volatile("int $0x80"
	                 : "=a"(r)
	                 : "a"(20L) /* __NR_getpid of i386 */
	                 : "memory", "r8", "r9", "r10", "r11");
	return r;
#else
	return -ENOSYS;
#endif
}

static long
x32_getpid(void)
{
	long r = syscall(__X32_SYSCALL_BIT | __NR_getpid);

	return r == -1 ? -errno : r;
}

/*
 * Run fn in a child; 0 when it returned the child's pid, else say why
 * (hint: what a host that fails this way most likely lacks).
 */
static int
try_getpid(const char *what, const char *hint, long (*fn)(void))
{
	int st, fds[2];
	long r = 0;
	pid_t pid;

	if (pipe(fds) == -1 || (pid = fork()) == -1) {
		perror("hostprobe");
		return 2;
	}
	if (pid == 0) {
		close(fds[0]);
		r = fn();
		(void)!write(fds[1], &r, sizeof(r));
		_exit(r == (long)getpid() ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &r, sizeof(r)) != (ssize_t)sizeof(r))
		r = 0;
	close(fds[0]);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR) {
			perror("hostprobe: waitpid");
			return 2;
		}
	if (WIFSIGNALED(st)) {
		printf("%s getpid raises SIG%s on this host (%s)\n", what,
		    sigabbrev_np(WTERMSIG(st)) ? sigabbrev_np(WTERMSIG(st))
		                               : "?",
		    hint);
		return 1;
	}
	if (WEXITSTATUS(st) == 0) {
		printf("%s getpid works on this host\n", what);
		return 0;
	}
	if (r < 0 && r > -4096)
		printf("%s getpid fails on this host: %s (%s)\n", what,
		    strerrorname_np((int)-r) ? strerrorname_np((int)-r)
		                             : strerror((int)-r),
		    hint);
	else
		printf("%s getpid returned %ld, not the pid\n", what, r);
	return 1;
}

static int
landlock(void)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);

	if (v < 0) {
		printf("no Landlock on this host: %s\n",
		    errno == EOPNOTSUPP ? "EOPNOTSUPP (built in, not enabled)"
		    : errno == ENOSYS   ? "ENOSYS (not built in)"
		                        : strerror(errno));
		return 1;
	}
	printf("Landlock ABI %ld\n", v);
	return 0;
}

/* Landlock scoping of abstract unix sockets: ABI 6 (Linux 6.12). */
static int
landlock_scope(void)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);

	if (v < 6) {
		printf("Landlock ABI %ld: no scoping of abstract unix sockets "
		       "(ABI 6)\n",
		    v < 0 ? 0 : v);
		return 1;
	}
	printf("Landlock ABI %ld\n", v);
	return 0;
}

int
main(int argc, char *argv[])
{
	if (argc == 2 && strcmp(argv[1], "i386") == 0) {
#if !defined(__x86_64__)
		puts("not an x86-64 host");
		return 1;
#endif
		return try_getpid("int $0x80 (i386)",
		    "no IA32 emulation, or ia32_emulation=0", i386_getpid);
	}
	if (argc == 2 && strcmp(argv[1], "x32") == 0) {
#if !defined(__x86_64__)
		puts("not an x86-64 host");
		return 1;
#endif
		return try_getpid("x32", "no CONFIG_X86_X32_ABI", x32_getpid);
	}
	if (argc == 2 && strcmp(argv[1], "landlock") == 0)
		return landlock();
	if (argc == 2 && strcmp(argv[1], "landlock_scope") == 0)
		return landlock_scope();
	fprintf(stderr, "usage: hostprobe i386|x32|landlock|landlock_scope\n");
	return 2;
}
