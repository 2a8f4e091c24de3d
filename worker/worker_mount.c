/*
 * worker_mount.c: the private root. In the worker's own mount namespace
 * a small tmpfs becomes "/": read-only binds of the system paths, the
 * skill at /skill (read-only), the session's work dir at /work and, as
 * granted, the skill's data dir at /data, a fresh /proc for the new pid
 * namespace, a minimal /dev, a size-bound /tmp. Everything is nosuid and
 * nodev; after pivot_root the old root is detached and "/" made
 * read-only. Host paths the grant does not name do not exist inside.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/util.h"
#include "worker.h"

#define MNT_SAFE (MS_NOSUID | MS_NODEV)

static int
merr(struct error *e, const char *what, const char *path)
{
	return error_set(e, ERR_SANDBOX_FAILED, "%s %s: %s", what, path,
	    strerror(errno));
}

/* Create an empty mount point for src inside root: a dir or a file. */
static int
mountpoint(const char *dst, int is_dir, struct error *e)
{
	char parent[PATH_MAX];
	char *slash;
	int fd;

	if (fmt_path(parent, sizeof(parent), "%s", dst) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "path too long");
	if ((slash = strrchr(parent, '/')) != NULL)
		*slash = '\0';
	if (mkdir_p(parent, 0755) == -1)
		return merr(e, "mkdir", parent);
	if (is_dir)
		return mkdir(dst, 0755) == -1 && errno != EEXIST ?
		    merr(e, "mkdir", dst) : 0;
	if ((fd = open(dst, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) == -1)
		return merr(e, "create", dst);
	close(fd);
	return 0;
}

/*
 * Bind host path src at root/dst. A symlink is recreated as a symlink
 * (merged-/usr hosts link /bin to usr/bin); a missing src is skipped.
 */
static int
bind_at(const char *root, const char *src, const char *dst, int rw,
    struct error *e)
{
	char target[PATH_MAX], link[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (lstat(src, &st) == -1)
		return errno == ENOENT ? 0 : merr(e, "lstat", src);
	if (fmt_path(target, sizeof(target), "%s%s", root, dst) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "path too long");
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlink(src, link, sizeof(link) - 1)) == -1)
			return merr(e, "readlink", src);
		link[n] = '\0';
		if (mountpoint(target, 1, e) == -1 || rmdir(target) == -1 ||
		    symlink(link, target) == -1)
			return merr(e, "symlink", target);
		return 0;
	}
	if (mountpoint(target, S_ISDIR(st.st_mode), e) == -1)
		return -1;
	if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) == -1)
		return merr(e, "bind", src);
	if (mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | MNT_SAFE |
	    (rw ? 0 : MS_RDONLY), NULL) == -1)
		return merr(e, "remount", target);
	return 0;
}

/* The fixed part of a granted fs glob: up to the last '/' before a wildcard. */
static int
glob_prefix(const char *glob, char *out, size_t len)
{
	char *cut, *slash;

	if (fmt_path(out, len, "%s", glob) == -1)
		return -1;
	if ((cut = strpbrk(out, "*?")) != NULL) {
		*cut = '\0';
		if ((slash = strrchr(out, '/')) != NULL)
			*slash = '\0';
	}
	return out[0] == '/' && out[1] != '\0' ? 0 : -1;
}

/* Granted absolute paths and $SKILL_DIR subdirs beyond the baseline. */
static int
bind_granted(const char *root, const struct grant *g, struct error *e)
{
	char pre[PATH_MAX], host[PATH_MAX], inside[PATH_MAX];
	size_t i;
	int k;

	for (k = 0; k < 2; k++)  /* 0: fs.read, 1: fs.write */
		for (i = 0; i < g->nperm[k]; i++) {
			const char *p = g->perm[k][i];
			if (p[0] == '/' && glob_prefix(p, pre, sizeof(pre)) == 0) {
				if (bind_at(root, pre, pre, k, e) == -1)
					return -1;
			} else if (k == 1 && strncmp(p, "$SKILL_DIR/", 11) == 0 &&
			    glob_prefix(p + 10, pre, sizeof(pre)) == 0) {
				if (fmt_path(host, sizeof(host), "%s%s",
				    g->skill_dir, pre) == -1 ||
				    fmt_path(inside, sizeof(inside), "/skill%s",
				    pre) == -1 ||
				    bind_at(root, host, inside, 1, e) == -1)
					return -1;
			}
		}
	return 0;
}

/* -1 none, 0 read-only, 1 read-write: how the grant names $DATA_DIR. */
static int
data_access(const struct grant *g)
{
	int mode = -1, k;
	size_t i;

	for (k = 0; k < 2; k++)
		for (i = 0; i < g->nperm[k]; i++)
			if (strncmp(g->perm[k][i], "$DATA_DIR", 9) == 0 &&
			    k > mode)
				mode = k;
	return mode;
}

/* A minimal /dev: a few character devices bound from the host. */
static int
make_dev(const char *root, struct error *e)
{
	static const char *const devs[] = { "null", "zero", "full", "random",
		"urandom", NULL };
	static const char *const links[][2] = { { "fd", "/proc/self/fd" },
		{ "stdin", "/proc/self/fd/0" }, { "stdout", "/proc/self/fd/1" },
		{ "stderr", "/proc/self/fd/2" }, { NULL, NULL } };
	char dev[PATH_MAX], path[PATH_MAX], src[64];
	int i;

	if (fmt_path(dev, sizeof(dev), "%s/dev", root) == -1 ||
	    mountpoint(dev, 1, e) == -1)
		return -1;
	if (mount("sb-dev", dev, "tmpfs", MNT_SAFE | MS_NOEXEC,
	    "size=64k,mode=0755") == -1)
		return merr(e, "mount tmpfs", dev);
	for (i = 0; devs[i] != NULL; i++) {
		snprintf(src, sizeof(src), "/dev/%s", devs[i]);
		if (fmt_path(path, sizeof(path), "%s/%s", dev, devs[i]) == -1 ||
		    mountpoint(path, 0, e) == -1)
			return -1;
		/* Device nodes need a mount without nodev; nothing else does. */
		if (mount(src, path, NULL, MS_BIND, NULL) == -1 ||
		    mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID |
		    MS_NOEXEC, NULL) == -1)
			return merr(e, "bind", src);
	}
	for (i = 0; links[i][0] != NULL; i++)
		if (fmt_path(path, sizeof(path), "%s/%s", dev, links[i][0]) ==
		    -1 || symlink(links[i][1], path) == -1)
			return merr(e, "symlink", links[i][0]);
	return 0;
}

static int
make_proc_tmp(const char *root, uint64_t tmp_mb, struct error *e)
{
	char path[PATH_MAX], opts[64];

	if (fmt_path(path, sizeof(path), "%s/proc", root) == -1 ||
	    mountpoint(path, 1, e) == -1)
		return -1;
	if (mount("proc", path, "proc", MNT_SAFE | MS_NOEXEC, NULL) == -1)
		return merr(e, "mount", "/proc");
	if (fmt_path(path, sizeof(path), "%s/tmp", root) == -1 ||
	    mountpoint(path, 1, e) == -1)
		return -1;
	snprintf(opts, sizeof(opts), "size=%llum,mode=1777",
	    (unsigned long long)tmp_mb);
	if (mount("sb-tmp", path, "tmpfs", MNT_SAFE | MS_NOEXEC, opts) == -1)
		return merr(e, "mount", "/tmp");
	return 0;
}

/* pivot_root into root, detach the old root, make "/" read-only. */
static int
enter_root(const char *root, struct error *e)
{
	if (chdir(root) == -1)
		return merr(e, "chdir", root);
	if (syscall(SYS_pivot_root, ".", ".") == -1)
		return merr(e, "pivot_root", root);
	if (umount2(".", MNT_DETACH) == -1)
		return merr(e, "detach old root", "/");
	if (chdir("/") == -1)
		return merr(e, "chdir", "/");
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MNT_SAFE, NULL) ==
	    -1)
		return merr(e, "remount read-only", "/");
	return 0;
}

int
sandbox_mounts(const struct grant *g, struct error *e)
{
	const char *root = g->root_dir;
	size_t i;
	int data;

	if (root == NULL || root[0] != '/')
		return error_set(e, ERR_SANDBOX_FAILED, "no sandbox root");
	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return merr(e, "make private", "/");
	if (mount("sb-root", root, "tmpfs", MNT_SAFE, "size=1m,mode=0755") ==
	    -1)
		return merr(e, "mount tmpfs", root);
	for (i = 0; i < g->nsys_paths; i++)
		if (bind_at(root, g->sys_paths[i], g->sys_paths[i], 0, e) == -1)
			return -1;
	if (bind_at(root, g->skill_dir, "/skill", 0, e) == -1 ||
	    bind_at(root, g->work_dir, "/work", 1, e) == -1)
		return -1;
	if ((data = data_access(g)) >= 0 &&
	    bind_at(root, g->data_dir, "/data", data, e) == -1)
		return -1;
	if (bind_granted(root, g, e) == -1 || make_dev(root, e) == -1 ||
	    make_proc_tmp(root, g->tmp_mb ? g->tmp_mb : 64, e) == -1)
		return -1;
	return enter_root(root, e);
}
