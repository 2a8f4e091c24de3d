/*
 * broker_session.c: a session is named by the caller's uid and the
 * session name, and owns a work dir the master mounts on its first run.
 * Its calls run one at a time (each owns the work dir while it runs);
 * the others wait in line, in order, within a bound per session and one
 * for all. A session with nothing running or waiting ends after
 * session_idle_s, or sooner when a new session needs its place: the
 * broker then tells the master (SESSION_END), which unmounts its work
 * dir. A uid at its own bound (per_uid.sessions) gives up its least
 * recently used idle session; at the global bound, the uid holding the
 * most sessions does. So one user's sessions never push out another's.
 * A session also remembers the skills a human approved for it
 * (yes_in_session), at most SESSION_APPROVED_MAX, until it ends or the
 * policy is loaded again.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

#define SWEEP_MS 1000
#define SESSION_APPROVED_MAX 32 /* skills approved for the session */

struct bsession {
	TAILQ_ENTRY(bsession) entry; /* least recently used first */
	uint32_t uid;
	char *name;
	struct call *running;
	struct call_queue queue;
	size_t nqueued;
	uint64_t used_ms;
	uint8_t *last; /* the last invoke's reply, as sent (last_result) */
	size_t last_len;
	char *approved[SESSION_APPROVED_MAX]; /* oldest first */
	size_t napproved;
};

static TAILQ_HEAD(bsession_list, bsession) sessions = TAILQ_HEAD_INITIALIZER(
    sessions);
static size_t nsessions;
static struct event *sweep_ev;

static int
session_idle(const struct bsession *s)
{
	return s->running == NULL && s->nqueued == 0;
}

/* An idle session ends: its work dir goes with it. */
static void
session_end(struct bsession *s)
{
	struct msg_session_end se = {s->uid, s->name};
	size_t i;

	PEER_SEND(&B->master, msg_session_end_enc, &se);
	TAILQ_REMOVE(&sessions, s, entry);
	nsessions--;
	quota_release(QUOTA_SESSIONS, s->uid);
	free(s->last);
	for (i = 0; i < s->napproved; i++)
		free(s->approved[i]);
	free(s->name);
	free(s);
}

/* End every session idle for longer than session_idle_s. */
static void
session_sweep(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	uint64_t now = now_mono_ms();
	struct bsession *s, *next;

	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (session_idle(s) && now - s->used_ms >= B->session_idle_ms)
			session_end(s);
	}
}

void
session_init(void)
{
	struct timeval tv = {SWEEP_MS / 1000, 0};

	sweep_ev = event_new(B->base, -1, EV_PERSIST, session_sweep, NULL);
	if (sweep_ev == NULL || event_add(sweep_ev, &tv) == -1)
		fatalx("session sweep");
}

/*
 * The idle session to give way: uid's own least recently used one, or
 * (uid -1) the least recently used of the uid that holds the most.
 */
static struct bsession *
session_victim(int64_t uid)
{
	struct bsession *s, *best = NULL;
	unsigned held, most = 0;

	TAILQ_FOREACH (s, &sessions, entry) {
		if (!session_idle(s) || (uid >= 0 && s->uid != (uint32_t)uid))
			continue;
		if (uid >= 0)
			return s;
		if ((held = quota_held(QUOTA_SESSIONS, s->uid)) > most) {
			most = held;
			best = s;
		}
	}
	return best;
}

/* The session, made (if need be) in the place of an idle one. */
static struct bsession *
session_get(const struct call *c, struct error *e)
{
	struct bsession *s, *victim = NULL;

	TAILQ_FOREACH (s, &sessions, entry)
		if (s->uid == c->uid && strcmp(s->name, c->cr.session) == 0)
			return s;
	if (quota_held(QUOTA_SESSIONS, c->uid) >= B->per_uid.sessions) {
		if ((victim = session_victim(c->uid)) == NULL) {
			error_set(e, ERR_OVERLOADED,
			    "uid %u has %llu sessions, all with calls running "
			    "or waiting (per_uid.sessions)",
			    (unsigned)c->uid,
			    (unsigned long long)B->per_uid.sessions);
			return NULL;
		}
	} else if (quota_check(QUOTA_SESSIONS, c->uid, c->gid, 1, e) == -1 &&
	           (victim = session_victim(-1)) == NULL) {
		error_set(e, ERR_OVERLOADED,
		    "%u of %zu sessions are in use, all with calls running or "
		    "waiting (worker.max_sessions)%s",
		    quota_total(QUOTA_SESSIONS), B->max_sessions,
		    quota_is_admin(c->uid, c->gid) ? ""
		                                   : "; the rest are kept for "
		                                     "admins");
		return NULL;
	}
	if (victim != NULL)
		session_end(victim);
	s = xcalloc(1, sizeof(*s));
	s->uid = c->uid;
	s->name = xstrdup(c->cr.session);
	TAILQ_INIT(&s->queue);
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	nsessions++;
	quota_add(QUOTA_SESSIONS, c->uid);
	return s;
}

/* Every idle session ends: the broker's end (and a test's teardown). */
void
session_fini(void)
{
	struct bsession *s, *next;

	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (session_idle(s))
			session_end(s);
	}
}

/* Most recently used last. */
static void
session_touch(struct bsession *s)
{
	s->used_ms = now_mono_ms();
	TAILQ_REMOVE(&sessions, s, entry);
	TAILQ_INSERT_TAIL(&sessions, s, entry);
}

/* 1: c may run now; 0: c waits in line; -1: no room. */
int
session_acquire(struct call *c, struct error *e)
{
	struct bsession *s;

	if ((s = session_get(c, e)) == NULL)
		return -1;
	session_touch(s);
	if (s->running == NULL) {
		s->running = c;
		c->session = s;
		return 1;
	}
	if (s->nqueued >= SESSION_QUEUE_MAX)
		return error_set(e, ERR_OVERLOADED,
		    "%d calls already wait for session \"%s\" (the bound per "
		    "session)",
		    SESSION_QUEUE_MAX, s->name);
	if (B->nqueued >= QUEUE_MAX)
		return error_set(e, ERR_OVERLOADED,
		    "%d calls already wait for their sessions (the bound for "
		    "all sessions)",
		    QUEUE_MAX);
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
	session_touch(s);
	return next;
}

/* The caller's session of that name, or NULL. */
static struct bsession *
session_find(uint32_t uid, const char *name)
{
	struct bsession *s;

	TAILQ_FOREACH (s, &sessions, entry)
		if (s->uid == uid && strcmp(s->name, name) == 0)
			return s;
	return NULL;
}

int
session_exists(uint32_t uid, const char *name)
{
	return session_find(uid, name) != NULL;
}

void
session_keep_result(struct call *c, const struct mp_enc *reply)
{
	struct bsession *s = c->session;

	if (s == NULL || c->cr.type != CREQ_INVOKE)
		return;
	free(s->last);
	s->last = xmalloc(reply->sb.size);
	memcpy(s->last, reply->sb.data, reply->sb.size);
	s->last_len = reply->sb.size;
}

void
session_last_result(
    const struct conn *cn, const struct client_req *cr, struct mp_enc *m)
{
	struct bsession *s = session_find(cn->uid, cr->session);

	if (s == NULL || s->last == NULL) {
		client_error_enc(m, &cr->id, ERR_NOT_FOUND,
		    s == NULL ? "no such session of this uid"
		              : "no invoke of this session has ended yet");
		return;
	}
	client_reply_begin(m, "last_result", &cr->id, 1);
	enc_kstr(m, "session", s->name);
	enc_key(m, "result");
	enc_raw(m, s->last, s->last_len);
	client_reply_end(m);
}

void
session_end_request(
    const struct conn *cn, const struct client_req *cr, struct mp_enc *m)
{
	struct bsession *s = session_find(cn->uid, cr->session);
	char msg[128];

	if (s == NULL) {
		client_error_enc(
		    m, &cr->id, ERR_NOT_FOUND, "no such session of this uid");
		return;
	}
	if (!session_idle(s)) {
		snprintf(msg, sizeof(msg),
		    "%zu call(s) of this session are in flight: cancel or "
		    "await them first",
		    s->nqueued + (s->running != NULL));
		client_error_enc(m, &cr->id, ERR_BAD_REQUEST, msg);
		return;
	}
	client_reply_begin(m, "session_end", &cr->id, 1);
	enc_kstr(m, "session", s->name);
	client_reply_end(m);
	session_end(s);
}

/* 1 if a human said yes_in_session to skill in s (and it still holds). */
int
session_approved(const struct bsession *s, const char *skill)
{
	size_t i;

	if (s == NULL)
		return 0;
	for (i = 0; i < s->napproved; i++)
		if (strcmp(s->approved[i], skill) == 0)
			return 1;
	return 0;
}

/*
 * yes_in_session: remember skill for s. A session that has its bound of
 * them forgets its oldest, which is then asked for again.
 */
void
session_approve(struct bsession *s, const char *skill)
{
	if (s == NULL || session_approved(s, skill))
		return;
	if (s->napproved == SESSION_APPROVED_MAX) {
		free(s->approved[0]);
		memmove(&s->approved[0], &s->approved[1],
		    (SESSION_APPROVED_MAX - 1) * sizeof(s->approved[0]));
		s->napproved--;
	}
	s->approved[s->napproved++] = xstrdup(skill);
}

/* The policy was loaded again: every session's yes is asked for anew. */
void
session_forget_approvals(void)
{
	struct bsession *s;
	size_t i;

	TAILQ_FOREACH (s, &sessions, entry) {
		for (i = 0; i < s->napproved; i++) {
			free(s->approved[i]);
			s->approved[i] = NULL;
		}
		s->napproved = 0;
	}
}
