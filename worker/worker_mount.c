/*
 * worker_mount.c: the private root. In the worker's own mount namespace
 * a small tmpfs becomes "/": read-only binds of the system paths, the
 * skill at /skill (read-only), the session's work dir at /work and, as
 * granted, the skill's data dir at /data (both mounts the master made,
 * attached from fds), a fresh /proc for the new pid
 * namespace, a minimal /dev, a size-bound /tmp. Everything is nosuid,
 * nodev and noexec; over it, the exec view (library directories, the
 * grant's programs, the entry point) is bound read-only and executable.
 * The root with the system paths, /dev, /proc and /tmp is built and
 * entered (pivot_root, the old root detached), and the library
 * directories cloned, before the grant comes: every call sees these.
 * The grant's host paths are cloned from the daemon's namespace as they
 * are then. Last, "/" is made read-only. Host paths neither the config
 * nor the grant names do not exist inside.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "../lib/log.h"
#include "../lib/os.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "worker.h"

#define MNT_SAFE (MS_NOSUID | MS_NODEV)

static int
merr(struct error *e, const char *what, const char *path)
{
	return error_set(
	    e, ERR_SANDBOX_FAILED, "%s %s: %s", what, path, strerror(errno));
}

static int root_fd = -1;  /* the new root (our tmpfs), O_PATH */
static dev_t own_devs[4]; /* filesystems we mounted fresh: creation is safe */
static int nown;

static int
own_dev(dev_t d)
{
	int i;

	for (i = 0; i < nown; i++)
		if (own_devs[i] == d)
			return 1;
	return 0;
}

/* Remember a fresh filesystem of ours, by the mount at path. */
static void
add_own(const char *path)
{
	struct stat st;

	if (nown < 4 && stat(path, &st) == 0)
		own_devs[nown++] = st.st_dev;
}

/*
 * O_PATH fd of path with no symlink anywhere in it (and, with beneath,
 * no escape from dfd): what a skill could have planted is never
 * followed.
 */
static int
open_nolinks(int dfd, const char *path, int beneath)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
	              (beneath ? RESOLVE_BENEATH : 0);
	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
}

/*
 * Walk rel beneath the new root without following links. Missing parts
 * are created only on our own tmpfs, never inside a bound host
 * directory; the last part is a directory or (is_dir 0) a file.
 * Returns an O_PATH fd of the mount point.
 */
static int
mountpoint_at(const char *rel, int is_dir, struct error *e)
{
	char buf[PATH_MAX], *comp, *next;
	struct stat st, here;
	int dfd, nfd, last, fd;

	if (fmt_path(buf, sizeof(buf), "%s", rel) == -1 ||
	    (dfd = dup(root_fd)) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "mount point %s", rel);
	for (comp = buf; comp != NULL; comp = next) {
		if ((next = strchr(comp, '/')) != NULL)
			*next++ = '\0';
		last = next == NULL || *next == '\0';
		if (*comp == '\0')
			continue;
		if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			if (errno != ENOENT || fstat(dfd, &here) == -1 ||
			    !own_dev(here.st_dev)) {
				close(dfd);
				return error_set(e, ERR_SANDBOX_FAILED,
				    "mount "
				    "point %s: missing inside a bound "
				    "directory",
				    rel);
			}
			if (!last || is_dir)
				fd = mkdirat(dfd, comp, 0755);
			else if ((fd = openat(dfd, comp,
			              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			                  O_CLOEXEC,
			              0644)) != -1)
				close(fd);
			if (fd == -1) {
				close(dfd);
				return merr(e, "create mount point", rel);
			}
		} else if (S_ISLNK(st.st_mode)) {
			close(dfd);
			return error_set(e, ERR_SANDBOX_FAILED,
			    "mount point %s "
			    "crosses a symlink: refused",
			    rel);
		}
		nfd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		if (nfd == -1)
			return merr(e, "open mount point", rel);
		dfd = nfd;
		if (last)
			break;
	}
	return dfd;
}

#define BIND_RO 0
#define BIND_RW 1   /* else read-only */
#define BIND_EXEC 2 /* else noexec: only what may run is executable */

/*
 * What the worker binds from the host is taken while it stands in the
 * daemon's mount namespace, as detached clones, attached in its own
 * namespace afterwards, in the order they were planned: at PREP what
 * every call sees (the system paths, the library directories), at the
 * grant what the grant names, as it is then.
 */
enum plan_kind {
	PLAN_BIND, /* tree at rel */
	PLAN_LINK, /* a symlink to link at rel */
	PLAN_SKILL /* tree: the skill, at /skill */
};

struct plan_item {
	enum plan_kind kind;
	int tree;   /* a sealed detached clone, or -1 */
	int is_dir; /* what the mount point must be */
	char *rel;  /* beneath the new root */
	char *link;
};

struct plan {
	struct plan_item *v;
	size_t n, cap;
};

static struct plan_item *
plan_add(struct plan *pl, enum plan_kind kind, const char *rel)
{
	struct plan_item *it;

	if (pl->n == pl->cap) {
		pl->cap = pl->cap != 0 ? pl->cap * 2 : 32;
		pl->v = xreallocarray(pl->v, pl->cap, sizeof(*pl->v));
	}
	it = &pl->v[pl->n++];
	memset(it, 0, sizeof(*it));
	it->kind = kind;
	it->tree = -1;
	it->rel = xstrdup(rel);
	return it;
}

static void
plan_free(struct plan *pl)
{
	size_t i;

	for (i = 0; i < pl->n; i++) {
		if (pl->v[i].tree != -1)
			close(pl->v[i].tree);
		free(pl->v[i].rel);
		free(pl->v[i].link);
	}
	free(pl->v);
	memset(pl, 0, sizeof(*pl));
}

/*
 * A sealed clone of what srcfd refers to, to be bound at rel (kind BIND
 * or SKILL): recursive, every submount with the same flags, so a read
 * grant is read-only all the way down, and nosuid, nodev and (unless
 * BIND_EXEC) noexec everywhere; and private, so no mount the host makes
 * later propagates into the sandbox.
 */
static int
plan_clone(struct plan *pl, enum plan_kind kind, int srcfd, const char *rel,
    int how, struct error *e)
{
	struct mount_attr seal = {
	    .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
	                (how & BIND_RW ? 0 : MOUNT_ATTR_RDONLY) |
	                (how & BIND_EXEC ? 0 : MOUNT_ATTR_NOEXEC),
	    .attr_clr = how & BIND_EXEC ? MOUNT_ATTR_NOEXEC : 0,
	    .propagation = MS_PRIVATE,
	};
	struct plan_item *it;
	struct stat st;
	int tree;

	if (fstat(srcfd, &st) == -1)
		return merr(e, "stat", rel);
	if ((tree = open_tree(srcfd, "",
	         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
	             AT_EMPTY_PATH)) == -1)
		return merr(e, "clone", rel);
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE,
	        &seal, sizeof(seal)) == -1) {
		close(tree);
		return merr(e, "seal", rel);
	}
	it = plan_add(pl, kind, rel);
	it->tree = tree;
	it->is_dir = S_ISDIR(st.st_mode);
	return 0;
}

/* Attach tree at rel (beneath the new root). */
static int
attach_tree(int tree, const char *rel, int is_dir, struct error *e)
{
	int dfd, r;

	if ((dfd = mountpoint_at(rel, is_dir, e)) == -1)
		return -1;
	r = move_mount(tree, "", dfd, "",
	    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	close(dfd);
	return r == -1 ? merr(e, "bind onto", rel) : 0;
}

/*
 * A system path (the admin's config, not the skill's to touch): bound
 * read-only at the same place; a symlink (merged-/usr /bin) is recreated
 * as a symlink; a missing one is skipped. Only a directory (dirs 1) or
 * only what is not one (dirs 0): a directory is bound at PREP (what the
 * host renames into it shows), a file at the grant, since a bind keeps
 * the file it found and the host replaces /etc/resolv.conf or
 * /etc/ld.so.cache by a rename.
 */
static int
plan_system(struct plan *pl, const char *path, int dirs, struct error *e)
{
	char link[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd, r;

	if (lstat(path, &st) == -1)
		return errno == ENOENT ? 0 : merr(e, "lstat", path);
	if ((S_ISDIR(st.st_mode) != 0) != dirs)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlink(path, link, sizeof(link) - 1)) == -1)
			return merr(e, "readlink", path);
		link[n] = '\0';
		plan_add(pl, PLAN_LINK, path + 1)->link = xstrdup(link);
		return 0;
	}
	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return merr(e, "open", path);
	r = plan_clone(pl, PLAN_BIND, fd, path + 1, BIND_RO, e);
	close(fd);
	return r;
}

/* The symlink a PLAN_LINK item makes, at rel beneath the new root. */
static int
make_link(const struct plan_item *it, struct error *e)
{
	char parent[PATH_MAX], *slash;
	int fd, r;

	if (fmt_path(parent, sizeof(parent), "%s", it->rel) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "symlink: too long");
	slash = strrchr(parent, '/');
	if (slash != NULL)
		*slash = '\0';
	fd = slash != NULL ? mountpoint_at(parent, 1, e) : dup(root_fd);
	if (fd == -1)
		return slash != NULL ? -1 : merr(e, "dup", "/");
	r = symlinkat(it->link, fd, slash != NULL ? slash + 1 : parent);
	close(fd);
	return r == -1 ? merr(e, "symlink", it->rel) : 0;
}

/* A planned link or bind, made at its place beneath the new root. */
static int
plan_attach(const struct plan_item *it, struct error *e)
{
	return it->kind == PLAN_LINK
	           ? make_link(it, e)
	           : attach_tree(it->tree, it->rel, it->is_dir, e);
}

/*
 * Whether dfd names an empty directory of a filesystem we mounted fresh:
 * 1 or 0, -1 with errno when it cannot be read.
 */
static int
mount_empty_own_dir(int dfd)
{
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int fd, n = 0, saved;

	if (fstat(dfd, &st) == -1)
		return -1;
	if (!own_dev(st.st_dev))
		return 0;
	if ((fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if ((dir = fdopendir(fd)) == NULL) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	errno = 0;
	while ((d = readdir(dir)) != NULL)
		n +=
		    strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
	saved = errno;
	closedir(dir);
	errno = saved;
	return saved != 0 ? -1 : n == 0;
}

/*
 * The skill, read-only at /skill. An overlay whose layers are the skill's
 * clone and the empty mount point it covers (a directory of the root's
 * own tmpfs), both named by fd: /proc/self/mountinfo inside then shows
 * "/" and two fd numbers where a bind would show the skill's host path.
 * The clone stays open for the worker's life: closing a detached mount
 * unmounts it and waits for an RCU grace period, a millisecond or more.
 * A filesystem overlayfs refuses as a layer gets the plain read-only
 * bind.
 */
static int skill_layer = -1; /* the skill's clone, kept */

/* The overlay at dfd over layer and dfd itself; 0, or -1 with errno. */
static int
skill_overlay(int layer, int dfd)
{
	char opts[160], dst[64];

	snprintf(opts, sizeof(opts),
	    "lowerdir=/proc/self/fd/%d:/proc/self/fd/%d,"
	    "redirect_dir=nofollow,index=off,metacopy=off",
	    layer, dfd);
	snprintf(dst, sizeof(dst), "/proc/self/fd/%d", dfd);
	return mount(
	    "sb-skill", dst, "overlay", MNT_SAFE | MS_RDONLY | MS_NOEXEC, opts);
}

/*
 * Before Linux 6.15 an overlay's layer must be a mount of the caller's
 * namespace, never a detached one: there the clone is attached at a
 * staging directory of the root for the overlay's mount, which then
 * holds a private copy of it; the staging mount is detached and its
 * directory removed, so nothing of it is left in sight (a grace period
 * more, on those kernels only). Should the overlay still be refused,
 * the staged mount is moved to /skill instead. 0 (overlay), 1 (bound),
 * or -1 with errno.
 */
static int
skill_overlay_staged(struct plan_item *it, int dfd)
{
	static const char stage[] = "sb-skill-layer";
	int sfd, r;

	if (mkdirat(root_fd, stage, 0700) == -1)
		return -1;
	if ((sfd = openat(root_fd, stage,
	         O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	r = move_mount(it->tree, "", sfd, "",
	    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	close(sfd);
	if (r == -1)
		return -1;
	close(it->tree); /* attached: closing it unmounts nothing */
	it->tree = -1;
	if ((sfd = openat(root_fd, stage,
	         O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	if ((r = skill_overlay(sfd, dfd)) == -1)
		log_info("skill: overlay refused (%s): bound instead",
		    strerror(errno));
	if ((r == 0 ? umount2("/sb-skill-layer", MNT_DETACH | UMOUNT_NOFOLLOW)
	            : move_mount(sfd, "", dfd, "",
	                  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)) ==
	        -1 ||
	    unlinkat(root_fd, stage, AT_REMOVEDIR) == -1) {
		close(sfd);
		return -1;
	}
	close(sfd);
	return r == 0 ? 0 : 1;
}

static int
mount_skill(struct plan_item *it, struct error *e)
{
	int dfd, r;

	if ((dfd = mountpoint_at("skill", 1, e)) == -1)
		return -1;
	if ((r = mount_empty_own_dir(dfd)) != 1) { /* a system path in it */
		close(dfd);
		return r == -1 ? merr(e, "read", "/skill")
		               : error_set(e, ERR_SANDBOX_FAILED,
		                     "mount point /skill: not an empty "
		                     "directory of the root");
	}
	if (skill_overlay(it->tree, dfd) == 0) {
		skill_layer = it->tree;
		it->tree = -1;
		r = 0;
	} else if (errno == EINVAL)
		r = skill_overlay_staged(it, dfd) == -1
		        ? merr(e, "overlay", "/skill")
		        : 0;
	else {
		log_info("skill: overlay refused (%s): bound instead",
		    strerror(errno));
		r = attach_tree(it->tree, "skill", 1, e);
	}
	close(dfd);
	return r;
}

/*
 * A detached mount the master handed us at fd, attached at rel: the
 * session's work dir (FD_WORKER_WORK) at /work, the skill's data dir
 * (FD_WORKER_DATA) at /data, read-only unless rw; private, as every
 * clone is.
 */
static int
attach_fd(int fd, const char *rel, int rw, struct error *e)
{
	struct mount_attr attr = {
	    .attr_set = MOUNT_ATTR_NOEXEC | (rw ? 0 : MOUNT_ATTR_RDONLY),
	    .propagation = MS_PRIVATE,
	};

	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr,
	        sizeof(attr)) == -1)
		return merr(e, rw ? "noexec" : "read-only", rel);
	if (attach_tree(fd, rel, 1, e) == -1)
		return -1;
	close(fd);
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

/*
 * One granted path. Its source is resolved with no symlink anywhere (a
 * skill may have planted one there through an earlier write grant); a
 * path that does not exist is skipped.
 */
static int
plan_grant_path(struct plan *pl, int base, const char *src, const char *rel,
    int rw, struct error *e)
{
	int fd, r;

	fd = open_nolinks(
	    base, base == AT_FDCWD ? src : src + 1, base != AT_FDCWD);
	if (fd == -1) {
		if (errno == ENOENT)
			return 0;
		return error_set(e, ERR_SANDBOX_FAILED, "granted path %s: %s",
		    src,
		    errno == ELOOP ? "a symlink on the way: refused"
		                   : strerror(errno));
	}
	r = plan_clone(pl, PLAN_BIND, fd, rel, rw ? BIND_RW : BIND_RO, e);
	close(fd);
	return r;
}

/* Granted absolute paths and $SKILL_DIR subdirs beyond the baseline. */
static int
plan_granted(
    struct plan *pl, const struct grant *g, int skillfd, struct error *e)
{
	char pre[PATH_MAX], rel[PATH_MAX];
	size_t i;
	int k, r = 0;

	for (k = 0; k < 2 && r == 0; k++) /* 0: fs.read, 1: fs.write */
		for (i = 0; i < g->nperm[k] && r == 0; i++) {
			const char *p = g->perm[k][i];
			if (p[0] == '/' &&
			    glob_prefix(p, pre, sizeof(pre)) == 0)
				r = plan_grant_path(
				    pl, AT_FDCWD, pre, pre + 1, k, e);
			else if (k == 1 && strncmp(p, "$SKILL_DIR/", 11) == 0 &&
			         glob_prefix(p + 10, pre, sizeof(pre)) == 0 &&
			         fmt_path(rel, sizeof(rel), "skill%s", pre) ==
			             0)
				r = plan_grant_path(
				    pl, skillfd, pre, rel, 1, e);
		}
	return r;
}

/*
 * The entry point, executable over the noexec /skill: resolved inside
 * the new root (a link in the skill stays in it) and bound onto itself.
 */
static int
bind_entry(const struct grant *g, struct error *e)
{
	struct mount_attr attr = {
	    .attr_set =
	        MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
	    .attr_clr = MOUNT_ATTR_NOEXEC,
	    .propagation = MS_PRIVATE,
	};
	char rel[PATH_MAX];
	struct open_how how;
	struct stat st;
	int fd, tree, r;

	if (fmt_path(rel, sizeof(rel), "skill/%s", g->entry) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "entry: too long");
	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
	if ((fd = (int)syscall(SYS_openat2, root_fd, rel, &how, sizeof(how))) ==
	    -1)
		return merr(e, "open entry", g->entry);
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error_set(e, ERR_SANDBOX_FAILED,
		    "entry %s: not a regular file", g->entry);
	}
	if ((tree = open_tree(fd, "",
	         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH)) == -1) {
		close(fd);
		return merr(e, "clone entry", g->entry);
	}
	r = (int)syscall(
	    SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr));
	if (r == 0)
		r = move_mount(tree, "", fd, "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	close(tree);
	close(fd);
	return r == -1 ? merr(e, "bind entry", g->entry) : 0;
}

/* One host file or directory made executable (read-only) at its place. */
static int
plan_exec(struct plan *pl, const char *path, int want_dir, struct error *e)
{
	struct stat st;
	int fd, r;

	if (!exec_in_system(path))
		return error_set(e, ERR_SANDBOX_FAILED,
		    "program %s: outside the system paths", path);
	if ((fd = open_nolinks(AT_FDCWD, path, 0)) == -1)
		return merr(e, "open program", path);
	if (fstat(fd, &st) == -1 ||
	    (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
		close(fd);
		return error_set(e, ERR_SANDBOX_FAILED, "%s: not a %s", path,
		    want_dir ? "directory" : "regular file");
	}
	r = plan_clone(pl, PLAN_BIND, fd, path + 1, BIND_RO | BIND_EXEC, e);
	close(fd);
	return r;
}

/* The library directories' clones, made at PREP, kept for the grant. */
static struct plan exec_libs;

/* The library dirs the loader maps shared objects from, cloned. */
static int
plan_lib_dirs(const struct msg_prep *p, struct error *e)
{
	char **dirs;
	size_t i, n;
	int r = 0;

	if (exec_lib_dirs(p, &dirs, &n, e) == -1)
		return -1;
	for (i = 0; i < n && r == 0; i++)
		r = plan_exec(&exec_libs, dirs[i], 1, e);
	strarr_free(dirs, n);
	return r;
}

/*
 * The exec view, over everything else (all noexec): the library dirs
 * (PREP's clones, handed over), and each program of the grant (and so
 * its loader); the entry point is bound once the skill is in place. All
 * read-only.
 */
static int
plan_exec_view(struct plan *pl, const struct grant *g, struct error *e)
{
	struct plan_item *it;
	size_t i;
	int r = 0;

	for (i = 0; i < exec_libs.n; i++) {
		it = plan_add(pl, exec_libs.v[i].kind, exec_libs.v[i].rel);
		it->tree = exec_libs.v[i].tree;
		it->is_dir = exec_libs.v[i].is_dir;
		exec_libs.v[i].tree = -1;
	}
	plan_free(&exec_libs);
	for (i = 0; i < g->nprograms && r == 0; i++)
		r = plan_exec(pl, g->programs[i], 0, e);
	return r;
}

/* A minimal /dev: a few character devices bound from the host. */
static int
make_dev(const char *root, struct error *e)
{
	static const char *const devs[] = {
	    "null", "zero", "full", "random", "urandom", NULL};
	static const char *const links[][2] = {{"fd", "/proc/self/fd"},
	    {"stdin", "/proc/self/fd/0"}, {"stdout", "/proc/self/fd/1"},
	    {"stderr", "/proc/self/fd/2"}, {NULL, NULL}};
	char dev[PATH_MAX], path[PATH_MAX], src[64];
	int i;

	if (fmt_path(dev, sizeof(dev), "%s/dev", root) == -1 ||
	    (i = mountpoint_at("dev", 1, e)) == -1)
		return -1;
	close(i);
	if (mount("sb-dev", dev, "tmpfs", MNT_SAFE | MS_NOEXEC,
	        "size=64k,mode=0755") == -1)
		return merr(e, "mount tmpfs", dev);
	add_own(dev);
	for (i = 0; devs[i] != NULL; i++) {
		int fd;

		snprintf(src, sizeof(src), "/dev/%s", devs[i]);
		if (fmt_path(path, sizeof(path), "dev/%s", devs[i]) == -1 ||
		    (fd = mountpoint_at(path, 0, e)) == -1)
			return -1;
		close(fd);
		if (fmt_path(path, sizeof(path), "%s/%s", dev, devs[i]) == -1)
			return -1;
		/* Device nodes need a mount without nodev; nothing else does.
		 */
		if (mount(src, path, NULL, MS_BIND, NULL) == -1 ||
		    mount(NULL, path, NULL,
		        MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NOEXEC,
		        NULL) == -1)
			return merr(e, "bind", src);
	}
	for (i = 0; links[i][0] != NULL; i++)
		if (fmt_path(path, sizeof(path), "%s/%s", dev, links[i][0]) ==
		        -1 ||
		    symlink(links[i][1], path) == -1)
			return merr(e, "symlink", links[i][0]);
	return 0;
}

/*
 * No executable memfd in this pid namespace (vm.memfd_noexec 2, per pid
 * namespace since Linux 6.3, and never lowered by a child namespace):
 * a program cannot write code into a memfd and execute it, past the
 * noexec mounts and Landlock. A kernel without it leaves that open.
 */
static int
memfd_noexec(const char *proc, struct error *e)
{
	char path[PATH_MAX];
	int fd;
	ssize_t n;

	if (fmt_path(path, sizeof(path), "%s/sys/vm/memfd_noexec", proc) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "memfd_noexec: path");
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : merr(e, "open", path);
	n = write(fd, "2\n", 2);
	close(fd);
	return n == 2 ? 0 : merr(e, "write", path);
}

static int
make_proc_tmp(const char *root, uint64_t tmp_mb, struct error *e)
{
	char path[PATH_MAX], opts[64];
	int fd;

	if (fmt_path(path, sizeof(path), "%s/proc", root) == -1 ||
	    (fd = mountpoint_at("proc", 1, e)) == -1)
		return -1;
	close(fd);
	if (mount("proc", path, "proc", MNT_SAFE | MS_NOEXEC, NULL) == -1)
		return merr(e, "mount", "/proc");
	if (memfd_noexec(path, e) == -1)
		return -1;
	if (fmt_path(path, sizeof(path), "%s/tmp", root) == -1 ||
	    (fd = mountpoint_at("tmp", 1, e)) == -1)
		return -1;
	close(fd);
	snprintf(opts, sizeof(opts), "size=%llum,nr_inodes=%llu,mode=1777",
	    (unsigned long long)tmp_mb,
	    (unsigned long long)OS_TMPFS_INODES(tmp_mb));
	if (mount("sb-tmp", path, "tmpfs", MNT_SAFE | MS_NOEXEC, opts) == -1)
		return merr(e, "mount", "/tmp");
	add_own(path);
	return 0;
}

/*
 * The daemon's mount namespace (host paths) and its root directory (a
 * chroot, as in a container or an image being installed, is no
 * namespace's root: setns alone would lose it), then our own namespace.
 */
static int host_ns = -1, host_root = -1, own_ns = -1;

/*
 * fd (kept from PREP to the grant) moved above the fds SPEC's mounts
 * are placed at; -1 with errno.
 */
static int
fd_keep(int fd)
{
	int hi, saved;

	if (fd == -1)
		return -1;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, FD_WORKER_DATA + 1);
	saved = errno;
	close(fd);
	errno = saved;
	return hi;
}

/* The system directories' clones, attached once PREP's root is made. */
static struct plan sys_binds;
/* The system paths, for the files and links among them at the grant. */
static char **sys_paths;
static size_t nsys_paths;

/*
 * The host paths every call sees, cloned while we still stand in the
 * daemon's namespace and root: the system directories and the library
 * directories (kept for the grant's exec view, which lies over what
 * the grant binds).
 */
static int
plan_every_call(const struct msg_prep *p, struct error *e)
{
	size_t i;
	int r = 0;

	exec_prep(p);
	sys_paths = strarr_dup(p->sys_paths, p->nsys_paths);
	nsys_paths = p->nsys_paths;
	for (i = 0; i < p->nsys_paths && r == 0; i++)
		r = plan_system(&sys_binds, p->sys_paths[i], 1, e);
	return r == 0 ? plan_lib_dirs(p, e) : -1;
}

/*
 * What no grant changes, built before the grant comes (a pre-forked
 * worker waits with it): a mount namespace of our own whose mounts are
 * private, a tmpfs as the root, /dev, /proc, /tmp and the system paths;
 * then pivot_root into it and the old root detached (an RCU grace
 * period: off the call's path here). Nothing else of the host's tree is
 * left inside; the daemon's namespace stays reachable by host_ns only,
 * for the grant's host paths.
 */
int
sandbox_root_prep(const struct msg_prep *p, struct error *e)
{
	const char *root = p->root_dir;
	struct stat st;
	size_t i;
	int r = 0;

	if (plan_every_call(p, e) == -1)
		return -1;
	if ((host_ns = fd_keep(
	         open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC))) == -1 ||
	    (host_root =
	            fd_keep(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC))) == -1)
		return merr(e, "open", "mount namespace");
	if (unshare(CLONE_NEWNS) == -1)
		return merr(e, "unshare", "mount namespace");
	/* Nothing we mount may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1)
		return merr(e, "make private", "/");
	if (mount("sb-root", root, "tmpfs", MNT_SAFE | MS_NOEXEC,
	        "size=1m,mode=0755") == -1)
		return merr(e, "mount tmpfs", root);
	if ((root_fd = fd_keep(open(root, O_PATH | O_DIRECTORY | O_CLOEXEC))) ==
	        -1 ||
	    fstat(root_fd, &st) == -1)
		return merr(e, "open", root);
	nown = 0;
	own_devs[nown++] = st.st_dev;
	if (make_dev(root, e) == -1 || make_proc_tmp(root, p->tmp_mb, e) == -1)
		return -1;
	for (i = 0; i < sys_binds.n && r == 0; i++)
		r = plan_attach(&sys_binds.v[i], e);
	plan_free(&sys_binds);
	if (r == -1)
		return -1;
	if (chdir(root) == -1)
		return merr(e, "chdir", root);
	if (syscall(SYS_pivot_root, ".", ".") == -1)
		return merr(e, "pivot_root", root);
	if (umount2(".", MNT_DETACH) == -1)
		return merr(e, "detach old root", "/");
	if (chdir("/") == -1)
		return merr(e, "chdir", "/");
	if ((own_ns = fd_keep(
	         open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC))) == -1)
		return merr(e, "open", "own mount namespace");
	return 0;
}

/*
 * The grant's host paths, as clones taken in the daemon's namespace:
 * the system paths that are no directory, the skill, granted paths, the
 * exec view.
 */
static int
plan_host(struct plan *pl, const struct grant *g, struct error *e)
{
	size_t i;
	int fd, r = 0;

	for (i = 0; i < nsys_paths && r == 0; i++)
		r = plan_system(pl, sys_paths[i], 0, e);
	if (r == -1)
		return -1;
	if ((fd = open_nolinks(AT_FDCWD, g->skill_dir, 0)) == -1)
		return merr(e, "open", g->skill_dir);
	r = plan_clone(pl, PLAN_SKILL, fd, "skill", BIND_RO, e);
	/* After /skill, so a granted $SKILL_DIR path is not hidden. */
	if (r == 0)
		r = plan_granted(pl, g, fd, e) == -1 ||
		            plan_exec_view(pl, g, e) == -1
		        ? -1
		        : 0;
	close(fd);
	return r;
}

/*
 * The plan attached, in order; the session's work dir and the data dir
 * (the master's mounts) right after the skill, before granted paths
 * (which may lie beneath them).
 */
static int
plan_apply(struct plan *pl, const struct grant *g, struct error *e)
{
	struct plan_item *it;
	size_t i;
	int data, r = 0;

	for (i = 0; i < pl->n && r == 0; i++) {
		it = &pl->v[i];
		if (it->kind != PLAN_SKILL)
			r = plan_attach(it, e);
		else if ((r = mount_skill(it, e)) == 0) {
			r = attach_fd(FD_WORKER_WORK, "work", 1, e);
			if (r == 0 && (data = grant_data_access(g)) >= 0)
				r = attach_fd(FD_WORKER_DATA, "data", data, e);
		}
	}
	return r;
}

/*
 * The grant's part, in the root PREP built: the host paths planned in
 * the daemon's namespace, then (back in ours, for good: the daemon's is
 * closed) attached, the entry point made executable, "/" read-only.
 */
int
sandbox_mounts(const struct grant *g, struct error *e)
{
	struct plan pl = {0};
	int r;

	if (host_ns == -1 || host_root == -1 || own_ns == -1 || root_fd == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "no sandbox root");
	if (setns(host_ns, CLONE_NEWNS) == -1)
		return merr(e, "enter", "the daemon's mount namespace");
	r = fchdir(host_root) == -1 || chroot(".") == -1
	        ? merr(e, "enter", "the daemon's root")
	        : plan_host(&pl, g, e);
	/* Back, and into our root again: setns puts us at the namespace's
	 * root, which under a chroot is not the root we pivoted to. */
	if (setns(own_ns, CLONE_NEWNS) == -1 || fchdir(root_fd) == -1 ||
	    chroot(".") == -1 || chdir("/") == -1) { /* nothing may run */
		merr(e, "return to", "own mount namespace");
		plan_free(&pl);
		return -1;
	}
	close(host_ns);
	close(host_root);
	close(own_ns);
	host_ns = host_root = own_ns = -1;
	if (r == 0)
		r = plan_apply(&pl, g, e);
	plan_free(&pl);
	if (r == 0 && g->interpreter[0] == '\0') /* else it reads the entry */
		r = bind_entry(g, e);
	close(root_fd);
	root_fd = -1;
	if (r == -1)
		return -1;
	if (chdir("/") == -1)
		return merr(e, "chdir", "/");
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MNT_SAFE, NULL) ==
	    -1)
		return merr(e, "remount read-only", "/");
	return 0;
}
