/*
 * broker_session.c: calls of one session run one at a time, because
 * each owns the session's work dir while it runs. A session is named
 * by the caller's uid and the session name; the others wait in line, in
 * order, within a bound per session and a bound for all.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/xmalloc.h"
#include "broker.h"

struct bsession {
	LIST_ENTRY(bsession) entry;
	uint32_t uid;
	char *name;
	struct call *running;
	TAILQ_HEAD(, call) queue;
	size_t nqueued;
};

static LIST_HEAD(, bsession) sessions = LIST_HEAD_INITIALIZER(sessions);

static struct bsession *
session_get(uint32_t uid, const char *name)
{
	struct bsession *s;

	LIST_FOREACH(s, &sessions, entry)
	if (s->uid == uid && strcmp(s->name, name) == 0)
		return s;
	s = xcalloc(1, sizeof(*s));
	s->uid = uid;
	s->name = xstrdup(name);
	TAILQ_INIT(&s->queue);
	LIST_INSERT_HEAD(&sessions, s, entry);
	return s;
}

static void
session_put(struct bsession *s)
{
	if (s->running != NULL || s->nqueued > 0)
		return;
	LIST_REMOVE(s, entry);
	free(s->name);
	free(s);
}

/* 1: c may run now; 0: c waits in line; -1: the line is full. */
int
session_acquire(struct call *c, struct error *e)
{
	struct bsession *s = session_get(c->uid, c->cr.session);

	if (s->running == NULL) {
		s->running = c;
		c->session = s;
		return 1;
	}
	if (s->nqueued >= SESSION_QUEUE_MAX || B->nqueued >= QUEUE_MAX) {
		session_put(s);
		return error_set(e, ERR_OVERLOADED,
		    s->nqueued >= SESSION_QUEUE_MAX
		        ? "%d calls already wait for session \"%s\" "
		          "(the bound per session)"
		        : "%d calls already wait for their sessions "
		          "(the bound for all sessions)",
		    s->nqueued >= SESSION_QUEUE_MAX ? SESSION_QUEUE_MAX
		                                    : QUEUE_MAX,
		    s->name);
	}
	TAILQ_INSERT_TAIL(&s->queue, c, qentry);
	s->nqueued++;
	B->nqueued++;
	c->session = s;
	return 0;
}

/* c is done with its session: the next call in line, if any, may run. */
struct call *
session_release(struct call *c)
{
	struct bsession *s = c->session;
	struct call *next = NULL;

	if (s == NULL)
		return NULL;
	c->session = NULL;
	if (s->running == c) {
		s->running = next = TAILQ_FIRST(&s->queue);
		if (next != NULL) {
			TAILQ_REMOVE(&s->queue, next, qentry);
			s->nqueued--;
			B->nqueued--;
		}
	} else {
		TAILQ_REMOVE(&s->queue, c, qentry);
		s->nqueued--;
		B->nqueued--;
	}
	session_put(s);
	return next;
}
