/* os.c: operating-system mechanisms of the master and the worker (os.h). */
#include "os.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"
#include "xmalloc.h"

#define SPAWN_FDS_MAX 8
#define VFORK_STACK (256 * 1024) /* the child's until its exec */
#define VFORK_GUARD 4096

struct spawn_args {
	const char *path;
	char *const *argv;
	const struct fdmap *fds;
	const int *join;
	int nfds, njoin;
};

/*
 * In the child: stdin on /dev/null, each fd moved to its number, every
 * other fd closed, signals unblocked and SIGPIPE at its default, then
 * execv. Never returns (exit 126 or 127 on failure).
 */
static void OS_VFORK_CHILD __attribute__((noreturn)) os_spawn_exec(
    const char *path, char *const argv[], const struct fdmap *fds, int nfds)
{
	int tmp[SPAWN_FDS_MAX], i, top = 2, devnull;
	sigset_t none;

	if (nfds > SPAWN_FDS_MAX)
		_exit(126);
	/* Above every target first, so no move overwrites a later source. */
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
	if (sigprocmask(SIG_SETMASK, &none, NULL) == -1 ||
	    signal(SIGPIPE, SIG_DFL) == SIG_ERR)
		_exit(126);
	execv(path, argv);
	_exit(127);
}

/*
 * In a child before its exec, signals still blocked: no handler of the
 * parent's runs in it (libevent's would report the child's signal as
 * the parent's own), and SIGHUP and SIGUSR1, which a parent forwards to
 * its children (reload, reopen), are ignored until the program installs
 * its own handlers, rather than killing it while it starts.
 */
static void OS_VFORK_CHILD
os_spawn_signals(void)
{
	struct sigaction sa;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, NULL, &sa) == 0 &&
		    sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN &&
		    signal(sig, SIG_DFL) == SIG_ERR)
			_exit(126);
	if (signal(SIGHUP, SIG_IGN) == SIG_ERR ||
	    signal(SIGUSR1, SIG_IGN) == SIG_ERR)
		_exit(126);
}

/* The child of os_spawn, all signals blocked, we waiting for its exec. */
static int OS_VFORK_CHILD
os_spawn_child(void *arg)
{
	const struct spawn_args *a = arg;
	int i;

	os_spawn_signals();
	for (i = 0; i < a->njoin; i++)
		if (write(a->join[i], "0", 1) != 1)
			_exit(OS_EXIT_JOIN);
	os_spawn_exec(a->path, a->argv, a->fds, a->nfds); /* unblocks them */
}

/*
 * A vfork-like clone (CLONE_VM | CLONE_VFORK, as posix_spawn makes):
 * a fork copies our page tables and write-protects every page, and
 * each of our writes after it faults and flushes the TLB of every core;
 * with a worker per call that was most of the master's CPU.
 */
pid_t
os_vfork(int (*fn)(void *), void *arg, int flags)
{
	static char *stack;
	sigset_t all, old;
	pid_t pid = -1;
	int saved, masked;

	/* Made once, with a guard page below it. */
	if (stack == NULL &&
	    (stack = mmap(NULL, VFORK_GUARD + VFORK_STACK, PROT_NONE,
	         MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)) !=
	        MAP_FAILED &&
	    mprotect(stack + VFORK_GUARD, VFORK_STACK,
	        PROT_READ | PROT_WRITE) == -1) {
		saved = errno;
		(void)munmap(stack, VFORK_GUARD + VFORK_STACK);
		errno = saved;
		stack = MAP_FAILED;
	}
	if (stack == MAP_FAILED)
		stack = NULL;
	sigfillset(&all);
	masked = stack != NULL && sigprocmask(SIG_BLOCK, &all, &old) == 0;
	/* One stack serves all: we are stopped until the child's exec. */
	if (masked)
		pid = clone(fn, stack + VFORK_GUARD + VFORK_STACK,
		    CLONE_VM | CLONE_VFORK | flags | SIGCHLD, arg);
	saved = errno;
	if (masked) /* a valid how and set: it cannot fail */
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
	errno = saved;
	return pid;
}

/* A helper or a worker, placed by os_spawn_child before its exec. */
pid_t
os_spawn(const char *path, char *const argv[], const struct fdmap *fds,
    int nfds, int newpid, const int *join, int njoin)
{
	struct spawn_args a = {path, argv, fds, join, nfds, njoin};
	pid_t pid;
	int i, saved;

	pid = os_vfork(os_spawn_child, &a, newpid ? CLONE_NEWPID : 0);
	saved = errno;
	for (i = 0; i < nfds; i++)
		close(fds[i].fd);
	errno = saved;
	return pid;
}

int
os_chans(const struct os_chan *spec, int n, struct fdmap *child, int *ours,
    struct error *e)
{
	int p[2], i, r;

	for (i = 0; i < n; i++) {
		r = spec[i].sock
		        ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p)
		        : pipe2(p, O_CLOEXEC);
		if (r == -1) {
			error_set(e, ERR_INTERNAL, "pipe: %s", strerror(errno));
			while (i-- > 0) {
				close(child[i].fd);
				close(ours[i]);
			}
			return -1;
		}
		/* p[0] reads, p[1] writes; a socketpair's ends are alike */
		child[i] = (struct fdmap){p[spec[i].reads ? 0 : 1], spec[i].to};
		ours[i] = p[spec[i].reads ? 1 : 0];
	}
	return 0;
}

int
os_unix_listen(const char *path, struct error *e)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t old;
	int fd, probe;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return error_set(
		    e, ERR_INTERNAL, "socket path too long: %s", path);
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return error_set(e, ERR_INTERNAL,
			    "%s exists and is not a socket", path);
		if ((probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
		    -1)
			return error_set(
			    e, ERR_INTERNAL, "socket: %s", strerror(errno));
		if (connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
			close(probe);
			return error_set(e, ERR_INTERNAL,
			    "another daemon is serving %s", path);
		}
		close(probe);
		if (unlink(path) == -1)
			return error_set(e, ERR_INTERNAL, "unlink stale %s: %s",
			    path, strerror(errno));
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return error_set(
		    e, ERR_INTERNAL, "socket: %s", strerror(errno));
	old = umask(0111); /* any local user may connect; policy decides */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, 128) == -1) {
		umask(old);
		error_set(
		    e, ERR_INTERNAL, "listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

int
os_dir_dedicated(const char *dir, uid_t owner)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int empty = 1;

	if (lstat(dir, &st) == -1)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (st.st_uid == owner)
		return 1;
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			empty = 0;
	closedir(d);
	return empty;
}

int
os_is_mountpoint(const char *path)
{
	char parent[PATH_MAX];
	struct stat a, b;

	if (fmt_path(parent, sizeof(parent), "%s/..", path) == -1 ||
	    lstat(path, &a) == -1 || stat(parent, &b) == -1)
		return 0;
	return S_ISDIR(a.st_mode) && a.st_dev != b.st_dev;
}

char *
os_exe_dir_with(const char *file, const char *fallback)
{
	char self[PATH_MAX], *dir, *probe;
	ssize_t n;
	int found;

	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
		self[n] = '\0';
		dir = xstrdup(dirname(self));
		xasprintf(&probe, "%s/%s", dir, file);
		found = access(probe, X_OK) == 0;
		free(probe);
		if (found)
			return dir;
		free(dir);
	}
	return xstrdup(fallback);
}

int
os_tmpfs_new(uint64_t size_mb, struct error *e)
{
	char size[32], inodes[32];
	int fs, mnt = -1;

	snprintf(size, sizeof(size), "%llum", (unsigned long long)size_mb);
	snprintf(inodes, sizeof(inodes), "%llu",
	    (unsigned long long)OS_TMPFS_INODES(size_mb));
	if ((fs = fsopen("tmpfs", FSOPEN_CLOEXEC)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700", 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mnt = fsmount(fs, FSMOUNT_CLOEXEC,
	         MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) == -1)
		error_set(e, ERR_SANDBOX_FAILED, "tmpfs: %s", strerror(errno));
	if (fs != -1)
		close(fs);
	return mnt;
}

int
os_tree_clone(int fd, struct error *e)
{
	int c;

	if ((c = open_tree(fd, "",
	         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)) == -1)
		error_set(e, ERR_SANDBOX_FAILED, "clone a mount: %s",
		    strerror(errno));
	return c;
}

/*
 * The real, effective, saved and filesystem uids of process pid; -1 for
 * a zombie, which runs nothing and waits only for its reaper.
 */
static int
proc_uids(const char *pid, unsigned u[4])
{
	char path[64], line[256], st = '?';
	int r = -1;
	FILE *f;

	if (fmt_path(path, sizeof(path), "/proc/%s/status", pid) == -1 ||
	    (f = fopen(path, "re")) == NULL)
		return -1;
	while (r == -1 && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "State: %c", &st) == 1 &&
		    (st == 'Z' || st == 'X'))
			break;
		else if (sscanf(line, "Uid: %u %u %u %u", &u[0], &u[1], &u[2],
		             &u[3]) == 4)
			r = 0;
	fclose(f);
	return r;
}

/*
 * One pass over /proc: kill (with kill set) and mark in held every live
 * process holding a uid in [first, last] that sweep selects; how many.
 */
static int
sweep_pass(
    uid_t first, uid_t last, const uint8_t *sweep, int kill_them, uint8_t *held)
{
	struct dirent *de;
	unsigned u[4];
	int found = 0, i, hit;
	DIR *d;

	if ((d = opendir("/proc")) == NULL)
		return -1;
	memset(held, 0, (size_t)(last - first) + 1);
	while ((de = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)de->d_name[0]) ||
		    proc_uids(de->d_name, u) == -1)
			continue;
		for (i = 0, hit = 0; i < 4; i++)
			if (u[i] >= first && u[i] <= last &&
			    sweep[u[i] - first]) {
				hit = 1;
				held[u[i] - first] = 1;
			}
		found += hit;
		if (hit && kill_them)
			(void)kill(atoi(de->d_name), SIGKILL);
	}
	closedir(d);
	return found;
}

int
os_sweep_uids(uid_t first, uid_t last, uint8_t *held, int wait)
{
	size_t n = (size_t)(last - first) + 1;
	uint8_t *sweep = xmalloc(n);
	int tries, found = 1, killed = 0;

	memcpy(sweep, held, n);
	for (tries = 0; wait && tries < 100 && found > 0; tries++)
		if ((found = sweep_pass(first, last, sweep, 1, held)) > 0) {
			killed += tries == 0 ? found : 0;
			usleep(10000);
		}
	/* Without wait (kill, and see), or still there (see). */
	if (found > 0)
		found = sweep_pass(first, last, sweep, !wait, held);
	free(sweep);
	return found == -1 ? -1 : killed;
}
