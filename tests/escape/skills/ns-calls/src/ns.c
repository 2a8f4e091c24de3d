/*
 * ns: every way into a new mount, user or other namespace, and every
 * mount call. The seccomp filter must answer each with EPERM (clone3,
 * whose flags it cannot see, with ENOSYS or EPERM). Each unshare runs
 * in its own child so that one success does not skew the rest.
 */
#include "attack.h"
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static const struct {
	int flag;
	const char *name;
} nsflags[] = {
    {CLONE_NEWUSER, "CLONE_NEWUSER"},
    {CLONE_NEWNS, "CLONE_NEWNS"},
    {CLONE_NEWNET, "CLONE_NEWNET"},
    {CLONE_NEWPID, "CLONE_NEWPID"},
    {CLONE_NEWUTS, "CLONE_NEWUTS"},
    {CLONE_NEWIPC, "CLONE_NEWIPC"},
    {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"},
    {0x00000080, "CLONE_NEWTIME"},
    {CLONE_NEWUSER | CLONE_NEWNS, "CLONE_NEWUSER|CLONE_NEWNS"},
};

/* After a successful unshare(CLONE_NEWUSER): show what it buys. */
static void
exploit_userns(void)
{
	char map[64];
	int fd;

	snprintf(map, sizeof(map), "0 %u 1", (unsigned)getuid());
	fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd != -1) {
		(void)!write(fd, "deny", 4);
		close(fd);
	}
	if ((fd = open("/proc/self/uid_map", O_WRONLY)) != -1) {
		if (write(fd, map, strlen(map)) > 0)
			say("ESCAPED became uid %u in a new user namespace",
			    (unsigned)getuid());
		close(fd);
	}
	if (unshare(CLONE_NEWNS) == 0 &&
	    mount("none", "/tmp", "tmpfs", 0, "") == 0)
		say("ESCAPED mounted a tmpfs inside the new user namespace");
}

int
main(void)
{
	static const char *nss[] = {
	    "mnt", "net", "pid", "user", "uts", "ipc", "cgroup", "time"};
	struct clone_args ca;
	char what[128], path[64];
	size_t i;
	long r;
	int st, fd, e;
	pid_t pid;

	r = mount("none", "/tmp", "tmpfs", 0, "");
	verdict("mount tmpfs on /tmp", r, errno, EPERM, 0);
	r = mount("/", "/tmp", NULL, MS_BIND | MS_REC, NULL);
	verdict("mount --rbind / /tmp", r, errno, EPERM, 0);
	r = mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL);
	verdict("remount / read-write", r, errno, EPERM, 0);
	r = umount2("/proc", MNT_DETACH);
	verdict("umount2 /proc", r, errno, EPERM, 0);
	r = umount2("/", MNT_DETACH);
	verdict("umount2 /", r, errno, EPERM, 0);
	r = syscall(SYS_pivot_root, "/tmp", "/tmp");
	verdict("pivot_root", r, errno, EPERM, 0);

	for (i = 0; i < sizeof(nsflags) / sizeof(nsflags[0]); i++) {
		if ((pid = fork()) == 0) {
			snprintf(
			    what, sizeof(what), "unshare %s", nsflags[i].name);
			r = unshare(nsflags[i].flag);
			if (verdict(what, r, errno, EPERM, 0) &&
			    (nsflags[i].flag & CLONE_NEWUSER))
				exploit_userns();
			_exit(0);
		}
		waitpid(pid, &st, 0);
	}

	for (i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", nss[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd == -1)
			say("INFO open %s: %s", path, ename(errno));
		snprintf(what, sizeof(what), "setns %s", nss[i]);
		/* seccomp answers before the fd is looked at */
		r = setns(fd != -1 ? fd : 0, 0);
		verdict(what, r, errno, EPERM, 0);
		if (fd != -1)
			close(fd);
	}

	for (i = 0; i < sizeof(nsflags) / sizeof(nsflags[0]); i++) {
		snprintf(what, sizeof(what), "clone %s", nsflags[i].name);
		r = syscall(SYS_clone, (unsigned long)nsflags[i].flag | SIGCHLD,
		    0, 0, 0, 0);
		e = errno;
		if (r == 0)
			_exit(0);
		if (r > 0)
			waitpid((pid_t)r, &st, 0);
		verdict(what, r, e, EPERM, 0);
	}

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS;
	ca.exit_signal = SIGCHLD;
	r = syscall(SYS_clone3, &ca, sizeof(ca));
	e = errno;
	if (r == 0)
		_exit(0);
	if (r > 0)
		waitpid((pid_t)r, &st, 0);
	verdict("clone3 CLONE_NEWUSER|CLONE_NEWNS", r, e, ENOSYS, EPERM, 0);

	r = chroot("/tmp");
	verdict("chroot /tmp", r, errno, EPERM, 0);
	say("DONE");
	return 0;
}
