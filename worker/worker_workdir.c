/*
 * worker_workdir.c: the session's work dir and the skill's data dir,
 * handed to this call's uid. Their roots are the daemon's, so only their
 * contents can be hostile: those are walked without following symlinks,
 * within bounds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "worker.h"

#define WALK_MAX_DEPTH 32
#define WALK_MAX_ENTRIES 100000

/*
 * Hand the tree at dfd to uid:gid. The bounds end the walk, never the
 * call: what lies deeper or further stays with its old owner (this call
 * may not write it), so no tree a skill builds can make later calls of
 * the session or the skill fail. Inode limits keep it small anyway.
 */
static int
chown_tree(
    int dfd, uid_t uid, gid_t gid, int depth, long *budget, struct error *e)
{
	struct dirent *de;
	DIR *d;
	int sub, r = 0;

	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return error_set(
		    e, ERR_SANDBOX_FAILED, "fdopendir: %s", strerror(errno));
	}
	while (r == 0 && *budget > 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		--*budget;
		if (fchownat(dirfd(d), de->d_name, uid, gid,
		        AT_SYMLINK_NOFOLLOW) == -1 &&
		    errno != ENOENT)
			r = error_set(e, ERR_SANDBOX_FAILED, "chown %s: %s",
			    de->d_name, strerror(errno));
		else if (de->d_type == DT_DIR && depth < WALK_MAX_DEPTH &&
		         (sub = openat(dirfd(d), de->d_name,
		              O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		                  O_CLOEXEC)) != -1)
			r = chown_tree(sub, uid, gid, depth + 1, budget, e);
	}
	closedir(d);
	return r;
}

/* Open (creating) one level below dfd, refusing symlinks. */
static int
open_level(int dfd, const char *name, mode_t mode, uid_t uid, gid_t gid,
    struct error *e)
{
	int fd;

	if (mkdirat(dfd, name, mode) == -1 && errno != EEXIST)
		return error_set(e, ERR_SANDBOX_FAILED, "mkdir %s: %s", name,
		    strerror(errno));
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "open %s: %s", name,
		    strerror(errno));
	if (fchown(fd, uid, gid) == -1 || fchmod(fd, mode) == -1) {
		close(fd);
		return error_set(e, ERR_SANDBOX_FAILED, "chown %s: %s", name,
		    strerror(errno));
	}
	return fd;
}

/*
 * The session's work dir is the detached tmpfs at FD_WORKER_WORK (no
 * host path shows it): its root and everything a call left in it go to
 * this call's uid, without following links.
 */
int
workdir_prepare(const struct grant *g, struct error *e)
{
	long budget = WALK_MAX_ENTRIES;
	int fd;

	fd = openat(FD_WORKER_WORK, ".",
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 ||
	    fchown(fd, (uid_t)g->worker_uid, (gid_t)g->worker_gid) == -1 ||
	    fchmod(fd, 0700) == -1) {
		error_set(
		    e, ERR_SANDBOX_FAILED, "work dir: %s", strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return chown_tree(
	    fd, (uid_t)g->worker_uid, (gid_t)g->worker_gid, 0, &budget, e);
}

/* data_dir is DATAROOT/<skill>: persistent, handed to this call's uid. */
int
datadir_prepare(const struct grant *g, struct error *e)
{
	char root[PATH_MAX_LEN];
	const char *name = strrchr(g->data_dir, '/');
	long budget = WALK_MAX_ENTRIES;
	size_t len = (size_t)(name - g->data_dir);
	int rfd, dfd;

	if (len == 0 || len >= sizeof(root) || strcmp(name + 1, g->skill) != 0)
		return error_set(e, ERR_SANDBOX_FAILED, "malformed data dir");
	memcpy(root, g->data_dir, len);
	root[len] = '\0';
	if ((rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "open %s: %s", root,
		    strerror(errno));
	dfd = open_level(
	    rfd, g->skill, 0700, (uid_t)g->worker_uid, (gid_t)g->worker_gid, e);
	close(rfd);
	if (dfd == -1)
		return -1;
	return chown_tree(
	    dfd, (uid_t)g->worker_uid, (gid_t)g->worker_gid, 0, &budget, e);
}
