/*
 * master_workdir.c: each session's work dir is a size-bound tmpfs, so no
 * call can fill the host's disk through it. The master mounts it on the
 * session's first call; it lives while the daemon runs (work dirs are
 * scratch space: $DATA_DIR is where a skill keeps things), is unmounted
 * after worker.session_idle_s without a call, and at exit. At most
 * worker.max_sessions exist at once. A session runs one call at a time
 * (the broker queues the others; a RUN for a busy session is refused).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "master.h"

struct wsession {
	char *path;
	uint64_t last_used_ms;
	int busy; /* a call holds it */
};

static struct wsession *sessions;
static size_t nsessions;

/* Unmount one session's tmpfs (lazily: a dying worker may still hold it). */
static void
session_drop(size_t i)
{
	if (umount2(sessions[i].path, MNT_DETACH) == -1 && errno != EINVAL &&
	    errno != ENOENT)
		log_warn("unmount %s", sessions[i].path);
	free(sessions[i].path);
	sessions[i] = sessions[--nsessions];
}

/* Every session idle for longer than the setting, unless a call runs. */
static void
sessions_expire(void)
{
	uint64_t now = now_mono_ms(), idle = M->cfg.session_idle_s * 1000;
	size_t i = 0;

	while (i < nsessions)
		if (now - sessions[i].last_used_ms > idle && !sessions[i].busy)
			session_drop(i);
		else
			i++;
}

static void
workdirs_release(void)
{
	while (nsessions > 0)
		session_drop(nsessions - 1);
}

void
workdir_init(void)
{
	sessions = xcalloc(M->cfg.max_sessions, sizeof(*sessions));
	nsessions = 0;
	if (atexit(workdirs_release) != 0)
		fatalx("atexit");
}

/* 1 if path is a mount point (its device differs from its parent's). */
static int
is_mounted(const char *path)
{
	char parent[PATH_MAX_LEN + 4];
	struct stat a, b;

	if (fmt_path(parent, sizeof(parent), "%s/..", path) == -1 ||
	    lstat(path, &a) == -1 || stat(parent, &b) == -1)
		return 0;
	return S_ISDIR(a.st_mode) && a.st_dev != b.st_dev;
}

static struct wsession *
workdir_find(const char *work_dir)
{
	size_t i;

	for (i = 0; i < nsessions; i++)
		if (strcmp(sessions[i].path, work_dir) == 0)
			return &sessions[i];
	return NULL;
}

/*
 * A call takes work_dir (WORKROOT/<uid>/<session>), its own bounded
 * tmpfs, mounted on first use; one call at a time holds a session.
 */
int
workdir_take(const char *work_dir, struct error *e)
{
	char parent[PATH_MAX_LEN], opts[64], *slash;
	struct wsession *s;

	if ((s = workdir_find(work_dir)) != NULL) {
		if (s->busy)
			return error_set(e, ERR_OVERLOADED,
			    "a call of this session is running");
		s->busy = 1;
		s->last_used_ms = now_mono_ms();
		return 0;
	}
	sessions_expire();
	if (nsessions == M->cfg.max_sessions)
		return error_set(e, ERR_OVERLOADED,
		    "%llu sessions have work "
		    "dirs; wait for one to go idle",
		    (unsigned long long)M->cfg.max_sessions);
	if (fmt_path(parent, sizeof(parent), "%s", work_dir) == -1 ||
	    (slash = strrchr(parent, '/')) == NULL)
		return error_set(e, ERR_INTERNAL, "bad work dir");
	*slash = '\0';
	/* Parents are root's; a session dir is made here, never followed. */
	if ((mkdir(parent, 0711) == -1 && errno != EEXIST) ||
	    (mkdir(work_dir, 0700) == -1 && errno != EEXIST))
		return error_set(e, ERR_SANDBOX_FAILED, "mkdir %s: %s",
		    work_dir, strerror(errno));
	snprintf(opts, sizeof(opts), "size=%llum,mode=0700",
	    (unsigned long long)M->cfg.work_mb);
	if (!is_mounted(work_dir) && mount("sb-work", work_dir, "tmpfs",
	                                 MS_NOSUID | MS_NODEV, opts) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "work dir tmpfs %s: %s",
		    work_dir, strerror(errno));
	sessions[nsessions].path = xstrdup(work_dir);
	sessions[nsessions].last_used_ms = now_mono_ms();
	sessions[nsessions].busy = 1;
	nsessions++;
	return 0;
}

/* The call that held work_dir is over. */
void
workdir_release(const char *work_dir)
{
	struct wsession *s = workdir_find(work_dir);

	if (s != NULL) {
		s->busy = 0;
		s->last_used_ms = now_mono_ms();
	}
}
