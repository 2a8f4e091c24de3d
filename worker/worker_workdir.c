/*
 * worker_workdir.c: the session's work dir and the skill's data dir,
 * mounts the master made and passed at fds, handed to this call's uid.
 * Their roots are the daemon's, so only their contents can be hostile:
 * those are walked without following symlinks, within bounds.
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

/*
 * Hand the detached mount at fd, root and contents, to this call's uid,
 * without following links: what an earlier call (another uid) left there
 * becomes this call's.
 */
static int
hand_over(int fd, const struct grant *g, const char *what, struct error *e)
{
	long budget = WALK_MAX_ENTRIES;
	int dfd;

	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd == -1 ||
	    fchown(dfd, (uid_t)g->worker_uid, (gid_t)g->worker_gid) == -1 ||
	    fchmod(dfd, 0700) == -1) {
		error_set(
		    e, ERR_SANDBOX_FAILED, "%s: %s", what, strerror(errno));
		if (dfd != -1)
			close(dfd);
		return -1;
	}
	return chown_tree(
	    dfd, (uid_t)g->worker_uid, (gid_t)g->worker_gid, 0, &budget, e);
}

/* The session's work dir: the detached tmpfs at FD_WORKER_WORK. */
int
workdir_prepare(const struct grant *g, struct error *e)
{
	return hand_over(FD_WORKER_WORK, g, "work dir", e);
}

/* The skill's data dir, when granted: its image, at FD_WORKER_DATA. */
int
datadir_prepare(const struct grant *g, struct error *e)
{
	if (grant_data_access(g) < 0)
		return 0;
	return hand_over(FD_WORKER_DATA, g, "data dir", e);
}
