/*
 * master_workdir.c: each session's work dir is a tmpfs of its own, of
 * worker.work_mb, that no host path shows: the master creates it
 * detached on the session's first call and holds it by an fd; each
 * worker gets a clone of it to attach at /work. It goes when the broker
 * ends the idle session (SESSION_END), or with the master (its fd
 * closes). At most worker.max_sessions exist at once, and a session runs
 * one call at a time (the broker keeps the line).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "master.h"

struct wsession {
	uint64_t uid;
	char *name;
	int fd;     /* the detached tmpfs */
	int busy;   /* a call holds it */
	int ending; /* SESSION_END came while busy: end at the release */
};

static struct wsession *sessions;
static size_t nsessions;

static struct wsession *
workdir_find(uint64_t uid, const char *name)
{
	size_t i;

	for (i = 0; i < nsessions; i++)
		if (sessions[i].uid == uid &&
		    strcmp(sessions[i].name, name) == 0)
			return &sessions[i];
	return NULL;
}

/* A call takes its session's work dir: an fd of a clone to attach. */
int
workdir_take(uint64_t uid, const char *name, struct error *e)
{
	struct wsession *s = workdir_find(uid, name);
	int fd;

	if (s != NULL && s->busy)
		return error_set(e, ERR_INTERNAL, "its session is busy");
	if (s == NULL && nsessions == M->cfg.max_sessions)
		return error_set(e, ERR_OVERLOADED,
		    "%llu sessions have work dirs",
		    (unsigned long long)M->cfg.max_sessions);
	if (sessions == NULL)
		sessions = xcalloc(M->cfg.max_sessions, sizeof(*sessions));
	if (s == NULL) {
		if ((fd = os_tmpfs_new(M->cfg.work_mb, e)) == -1)
			return -1;
		s = &sessions[nsessions++];
		*s = (struct wsession){uid, xstrdup(name), fd, 0, 0};
	}
	if ((fd = os_tree_clone(s->fd, e)) != -1)
		s->busy = 1;
	return fd;
}

static void
workdir_end(struct wsession *s)
{
	close(s->fd); /* the tmpfs goes with its last mount */
	free(s->name);
	*s = sessions[--nsessions];
}

/* The call that held the session is over. */
void
workdir_release(uint64_t uid, const char *name)
{
	struct wsession *s = workdir_find(uid, name);

	if (s != NULL && (s->busy = 0, s->ending))
		workdir_end(s);
}

/*
 * SESSION_END: the broker ended an idle session. Its last call may still
 * hold it here (a call cancelled before it ran, whose worker is not
 * reaped yet): it ends when that call lets go.
 */
int
workdir_on_end(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_session_end se;
	struct wsession *s;
	struct error e;

	if (msg_session_end_dec(d, &se, &e) == -1)
		return -1;
	if ((s = workdir_find(se.uid, se.session)) != NULL && s->busy)
		s->ending = 1;
	else if (s != NULL)
		workdir_end(s);
	msg_session_end_free(&se);
	return 0;
}
