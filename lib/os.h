/*
 * os.h: operating-system mechanisms the privileged master (and the
 * worker) need, with no knowledge of any role: start a child without
 * copying our memory, exec a helper with its fds at fixed numbers,
 * listen on a unix socket, check a directory is ours alone, tell a
 * mount point.
 */
#ifndef SB_OS_H
#define SB_OS_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* A child's fd and the number it must have after exec. */
struct fdmap {
	int fd, to;
};

/*
 * Channels to a child: a pipe the child reads (reads) or writes, or
 * (sock) a socketpair; the child's end goes at fd number to.
 */
struct os_chan {
	int to, reads, sock;
};
/* n of them: child[i] is the child's end (for os_spawn), ours[i] ours. */
int os_chans(const struct os_chan *spec, int n, struct fdmap *child, int *ours,
    struct error *e);

/*
 * fn(arg) in a child that runs in our memory, on a stack of its own,
 * until its exec or exit, while we wait (CLONE_VM | CLONE_VFORK, and
 * flags): no copy of our address space. fn starts with every signal
 * blocked (none of our handlers may run on its stack) and unblocks
 * what its program should have; it does nothing slow, and mark it
 * OS_VFORK_CHILD, so no sanitizer takes its stack for ours. It shares
 * our thread's storage (errno) and heap: system calls only, no malloc,
 * stdio or lock. One stack serves every call: only for a caller with
 * one thread, never from a signal handler. -1 with errno on failure.
 */
#define OS_VFORK_CHILD __attribute__((no_sanitize("address")))
pid_t os_vfork(int (*fn)(void *), void *arg, int flags);

/* The exit status of a child that could not join its cgroups. */
#define OS_EXIT_JOIN 124
/*
 * Start path as a child (pid 1 of a new pid namespace with newpid): its
 * stdin on /dev/null, each of fds moved to its number, every other fd
 * closed, no handler of ours, SIGHUP and SIGUSR1 ignored (the program
 * installs its own), signals unblocked. Before anything else the child
 * writes "0" to each of the njoin files join (its cgroups:
 * cgroup_prepare), and exits OS_EXIT_JOIN if one refuses; 126 or 127
 * if its exec fails. It runs in our memory until its exec, and we wait
 * for that (a copy of our address space would cost more than the rest
 * of the start), so it does nothing slow: a program makes its other
 * namespaces itself. The fds given are the child's: closed here either
 * way. -1 with errno on failure.
 */
pid_t os_spawn(const char *path, char *const argv[], const struct fdmap *fds,
    int nfds, int newpid, const int *join, int njoin);

/*
 * Bind and listen on a unix socket at path that any local user may
 * connect to. A stale socket file is replaced; a live server on it is
 * an error.
 */
int os_unix_listen(const char *path, struct error *e);

/*
 * 1 if dir is ours alone: missing, already owner's, or empty (never a
 * shared directory such as /var/log).
 */
int os_dir_dedicated(const char *dir, uid_t owner);

/*
 * A fresh tmpfs of size_mb, nosuid, nodev, root's and 0700, mounted
 * nowhere: the fd holds it. os_tree_clone gives a new detached mount of
 * the same files, for another mount namespace to attach (move_mount).
 */
int os_tmpfs_new(uint64_t size_mb, struct error *e);
/*
 * Inodes of a tmpfs of size_mb: one per 4 KiB page, so whatever fits by
 * size fits by count, and empty files (about 1 KiB of kernel memory each,
 * unreclaimable while the tmpfs lives) pin at most a quarter of its size.
 */
#define OS_TMPFS_INODES(size_mb) ((size_mb)*256 + 64)
int os_tree_clone(int fd, struct error *e);

/* 1 if path is a mount point (its device differs from its parent's). */
int os_is_mountpoint(const char *path);

/*
 * Kill every process that holds a uid u in [first, last] with
 * held[u - first] set (what a daemon killed with SIGKILL may have left),
 * wait (if wait) about a second, and leave held[u - first] set for each
 * such uid a live process (not a zombie) still holds. Reads every
 * /proc/PID/status: never on a call's usual path. Returns how many it
 * killed at first (0 without wait), or -1.
 */
int os_sweep_uids(uid_t first, uid_t last, uint8_t *held, int wait);

/* The directory of this executable if it holds file, else fallback. */
char *os_exe_dir_with(const char *file, const char *fallback);

#endif
