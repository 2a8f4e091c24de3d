/*
 * sb_conn.c: one connection to the broker: frames queued out and read
 * in without blocking, each reply handed to the callback of the request
 * it answers, approval requests to the approval callback.
 */
#include "sb_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"

#define SB_READ_CHUNK (64 * 1024)

/* Note a failure on c; returns -1. */
int
sb_fail(struct sb_client *c, enum sb_err err, const char *fmt, ...)
{
	va_list ap;

	c->err = err;
	va_start(ap, fmt);
	(void)vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	utf8_trim(c->errmsg); /* a cut never splits a character */
	return -1;
}

/* The connection is over: every request in flight gets err as its
 * reply, in the order sent. */
void
sb_die(struct sb_client *c, enum sb_err err, const char *fmt, ...)
{
	struct sb_pending *p;
	va_list ap;

	if (!c->dead) {
		c->dead = 1;
		c->err = err;
		va_start(ap, fmt);
		(void)vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
		va_end(ap);
		utf8_trim(c->errmsg);
		c->outoff = c->outlen = 0;
		c->inoff = c->inlen = 0;
	}
	while ((p = TAILQ_FIRST(&c->pend)) != NULL) {
		TAILQ_REMOVE(&c->pend, p, entry);
		c->npend--;
		if (!p->internal)
			p->cb(c, sb_reply_local(&p->id, c->err, c->errmsg),
			    p->arg);
		free(p->id.str);
		free(p);
	}
}

/* Never a path relative to the caller's directory: whoever could plant
 * a socket there would get the calls' stdin, env and files. */
const char *
sb_socket_path(const char *path)
{
	const char *env;

	if (path != NULL)
		return path;
	if ((env = getenv(SKILLBROKER_SOCKET_ENV)) != NULL && *env != '\0')
		return env;
	return SKILLBROKER_SOCKET_DEFAULT;
}

/* A connected, non-blocking stream socket to path, or -1 (c->err). */
static int
sb_dial(struct sb_client *c, const char *path)
{
	struct sockaddr_un sun;
	int fd, r, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return sb_fail(c, SB_ERR_CONNECT, "cannot connect to %s: %s",
		    path, strerror(ENAMETOOLONG));
	memcpy(sun.sun_path, path, strlen(path));
	/* non-blocking before connect: a broker whose backlog is full
	 * (it accepts nothing) refuses at once, never holds us */
	if ((fd = socket(
	         AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1)
		return sb_fail(c, SB_ERR_CONNECT, "cannot connect to %s: %s",
		    path, strerror(errno));
	while ((r = connect(fd, (struct sockaddr *)&sun, sizeof(sun))) == -1 &&
	       errno == EINTR)
		;
	if (r == -1) {
		saved = errno;
		(void)close(fd);
		return sb_fail(c, SB_ERR_CONNECT, "cannot connect to %s: %s%s",
		    path,
		    saved == EAGAIN ? "the broker accepts no connection now "
		                      "(its backlog is full)"
		                    : strerror(saved),
		    saved == ENOENT || saved == ECONNREFUSED
		        ? " (is skillbrokerd running? the socket is "
		          "-s, or $" SKILLBROKER_SOCKET_ENV ")"
		        : "");
	}
	c->fd = fd;
	return 0;
}

/* hello's reply: keep it, and the bounds it names. */
static int
sb_hello_done(struct sb_client *c, struct sb_reply *r)
{
	uint64_t max, reply;

	if (r->local) {
		sb_reply_free(r);
		return -1; /* c->err says why */
	}
	if (!sb_reply_ok(r)) {
		sb_fail(c, r->err, "%s: %s", r->errtype, r->errmsg);
		sb_reply_free(r);
		return -1;
	}
	/* the peer is a skillbroker that speaks our major, or no peer */
	if (strcmp(r->type, "hello") != 0 ||
	    sb_reply_uint(r, "protocol", &max) == -1 ||
	    max != SKILLBROKER_PROTOCOL) {
		sb_fail(c, SB_ERR_PROTOCOL,
		    "the broker's hello does not agree to protocol %d",
		    SKILLBROKER_PROTOCOL);
		sb_reply_free(r);
		return -1;
	}
	if (sb_reply_uint(r, "capabilities.limits.max_frame_bytes", &max) ==
	        0 &&
	    max > 0 && max <= SB_REPLY_MAX_CAP - SB_REPLY_SLACK) {
		c->max_frame = (size_t)max;
		c->max_reply = (size_t)max + SB_REPLY_SLACK;
	}
	/* a result carries its output beside its fields: up to reply_bytes */
	if (sb_reply_uint(r, "capabilities.limits.reply_bytes", &reply) == 0 &&
	    reply > c->max_reply)
		c->max_reply =
		    reply < SB_REPLY_MAX_CAP ? (size_t)reply : SB_REPLY_MAX_CAP;
	c->hello = r;
	return 0;
}

/* A client on fd (-1: not connected yet), before its hello. */
struct sb_client *
sb_client_new(int fd, sb_approval_cb cb, void *cb_arg)
{
	struct sb_client *c = xcalloc(1, sizeof(*c));

	c->fd = fd;
	c->acb = cb;
	c->aarg = cb_arg;
	c->next_id = 1;
	c->max_frame = FRAME_MAX_DEFAULT;
	c->max_reply = FRAME_MAX_INTERNAL;
	TAILQ_INIT(&c->pend);
	return c;
}

struct sb_client *
sb_connect(const char *path, sb_approval_cb cb, void *cb_arg, enum sb_err *err,
    char *errmsg, size_t errmsg_len)
{
	struct sb_client *c = sb_client_new(-1, cb, cb_arg);
	struct sb_reply *r = NULL;
	struct client_req hello;

	memset(&hello, 0, sizeof(hello));
	hello.type = CREQ_HELLO;
	hello.protocol = SKILLBROKER_PROTOCOL;
	hello.approvals = cb != NULL;
	sb_enter(c); /* an approval callback could close c: not yet ours */
	if (sb_dial(c, sb_socket_path(path)) == 0 &&
	    sb_queue(c, &hello, NULL, &r) == 0 &&
	    sb_wait(c, &r, SB_HELLO_TIMEOUT_MS) == 0 &&
	    sb_hello_done(c, r) == 0 && !c->closing) {
		c->depth--;
		return c;
	}
	c->depth--;
	if (err != NULL)
		*err = c->err;
	if (errmsg != NULL && errmsg_len > 0)
		(void)snprintf(errmsg, errmsg_len, "%s", c->errmsg);
	c->closing = 0; /* a callback's sb_close waited for this one */
	sb_close(c);
	return NULL;
}

/* The connection's memory, once nothing runs on it. */
static void
sb_free(struct sb_client *c)
{
	if (c->fd != -1)
		(void)close(c->fd);
	sb_reply_free(c->hello);
	free(c->out);
	free(c->in);
	free(c);
}

void
sb_close(struct sb_client *c)
{
	if (c == NULL || c->closing)
		return;
	c->closing = 1;
	sb_enter(c);
	sb_die(c, SB_ERR_CANCELLED, "the client closed the connection");
	(void)sb_leave(c);
}

void
sb_set_notice(struct sb_client *c, sb_notice_cb cb, void *arg)
{
	c->ncb = cb;
	c->narg = arg;
}

const struct sb_reply *
sb_hello(const struct sb_client *c)
{
	return c->hello;
}

enum sb_err
sb_errcode(const struct sb_client *c)
{
	return c->err;
}

const char *
sb_errmsg(const struct sb_client *c)
{
	return c->errmsg;
}

int
sb_fd(const struct sb_client *c)
{
	return c->fd;
}

short
sb_events(const struct sb_client *c)
{
	if (c->dead)
		return 0;
	return POLLIN | (c->outoff < c->outlen ? POLLOUT : 0);
}

size_t
sb_pending(const struct sb_client *c)
{
	return c->npend;
}

/* The request in flight with this id, or NULL. */
struct sb_pending *
sb_find(struct sb_client *c, const struct client_id *id)
{
	struct sb_pending *p;

	TAILQ_FOREACH (p, &c->pend, entry)
		if (client_id_eq(&p->id, id))
			return p;
	return NULL;
}

/* The sync side's callback: the reply goes into the waiting slot. */
static void
sb_slot_cb(struct sb_client *c, struct sb_reply *r, void *arg)
{
	(void)c;
	*(struct sb_reply **)arg = r;
}

/*
 * Encode r as a frame at the end of the out queue, its reply to cb (NULL:
 * into the slot at arg). The id must be set and not in flight.
 */
int
sb_queue(struct sb_client *c, struct client_req *r, sb_reply_cb cb, void *arg)
{
	struct sb_pending *p;
	struct sb_req tmp;
	struct error e;
	struct mp_enc m;
	size_t need;

	if (c->dead)
		return sb_fail(c, c->err, "%s", c->errmsg);
	if (r->id.is_num == 0 && r->id.str == NULL) {
		/* the library's own requests (hello): numbered here */
		r->id.is_num = 1;
		r->id.num = c->next_id++;
	}
	if (sb_find(c, &r->id) != NULL)
		return sb_fail(c, SB_ERR_USAGE,
		    "a request with this id is in flight already");
	memset(&tmp, 0, sizeof(tmp));
	tmp.r = *r;
	if (sb_req_encode(&tmp, c->max_frame, &m, &e) == -1)
		return sb_fail(c, SB_ERR_USAGE, "%s", e.msg);
	need = FRAME_HDR_LEN + m.sb.size;
	if (c->outlen - c->outoff > SB_OUT_MAX) {
		enc_free(&m);
		return sb_fail(c, SB_ERR_USAGE,
		    "%zu bytes of requests wait to be written already: poll "
		    "the connection for POLLOUT and call sb_process",
		    c->outlen - c->outoff);
	}
	if (c->outoff > 0) { /* what was written goes, before growing */
		memmove(c->out, c->out + c->outoff, c->outlen - c->outoff);
		c->outlen -= c->outoff;
		c->outoff = 0;
	}
	if (c->outcap - c->outlen < need) {
		size_t cap = c->outcap > 0 ? c->outcap : 4096;
		while (cap - c->outlen < need)
			cap *= 2;
		c->out = xreallocarray(c->out, cap, 1);
		c->outcap = cap;
	}
	frame_put_len(c->out + c->outlen, m.sb.size);
	memcpy(c->out + c->outlen + FRAME_HDR_LEN, m.sb.data, m.sb.size);
	c->outlen += need;
	enc_free(&m);
	p = xcalloc(1, sizeof(*p));
	p->id = r->id;
	if (r->id.str != NULL)
		p->id.str = xstrdup(r->id.str);
	p->cb = cb != NULL ? cb : sb_slot_cb;
	p->arg = arg;
	TAILQ_INSERT_TAIL(&c->pend, p, entry);
	c->npend++;
	return 0;
}

/* Write what the socket takes now; -1 once the broker stopped reading. */
static int
sb_flush(struct sb_client *c)
{
	ssize_t n;

	while (c->outoff < c->outlen) {
		n = send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n == -1)
			return -1;
		c->outoff += (size_t)n;
	}
	c->outoff = c->outlen = 0;
	return 0;
}

/* An approval request: to the approval callback, or a notice. */
static void
sb_on_approval(struct sb_client *c, struct sb_reply *r)
{
	enum sb_approval a;

	if (c->acb == NULL) {
		if (c->ncb != NULL)
			c->ncb(c, r, c->narg);
		return;
	}
	a = c->acb(c, r, c->aarg);
	if (a != SB_APPROVAL_NONE && r->id[0] != '\0' &&
	    sb_approve(c, r->id, a) == -1 && c->ncb != NULL)
		c->ncb(c, r, c->narg);
}

/* One frame's body: hand it to whoever waits for it. */
static void
sb_dispatch(struct sb_client *c, uint8_t *body, size_t len)
{
	struct sb_pending *p;
	struct sb_reply *r;
	struct error e;

	if ((r = sb_reply_decode(body, len, &e)) == NULL) {
		sb_die(c, SB_ERR_PROTOCOL, "a malformed reply: %s", e.msg);
		return;
	}
	if (strcmp(r->type, "approval_request") == 0) {
		sb_on_approval(c, r);
		sb_reply_free(r);
		return;
	}
	if (r->id[0] == '\0' && r->err != SB_OK) {
		/* about the connection, not a request: it ends */
		sb_die(c, r->err, "%s: %s", r->errtype, r->errmsg);
		sb_reply_free(r);
		return;
	}
	if ((p = sb_find(c, &r->cid)) == NULL) {
		if (c->ncb != NULL)
			c->ncb(c, r, c->narg);
		sb_reply_free(r);
		return;
	}
	TAILQ_REMOVE(&c->pend, p, entry);
	c->npend--;
	if (p->internal) {
		if (r->err != SB_OK && c->ncb != NULL)
			c->ncb(c, r, c->narg);
		sb_reply_free(r);
	} else
		p->cb(c, r, p->arg);
	free(p->id.str);
	free(p);
}

/* Take the whole frames off the in buffer, one at a time (a callback
 * may read on: nothing here holds a pointer into the buffer). */
static void
sb_frames(struct sb_client *c)
{
	enum frame_status st;
	struct error e;
	uint8_t *body;
	size_t blen;

	while (!c->dead) {
		st = frame_check(c->in + c->inoff, c->inlen - c->inoff,
		    c->max_reply, &blen, &e);
		if (st == FRAME_NEED_MORE)
			return;
		if (st == FRAME_BAD) {
			sb_die(c, SB_ERR_PROTOCOL, "a bad frame: %s", e.msg);
			return;
		}
		body = xmalloc(blen);
		memcpy(body, c->in + c->inoff + FRAME_HDR_LEN, blen);
		c->inoff += FRAME_HDR_LEN + blen;
		if (c->inoff == c->inlen)
			c->inoff = c->inlen = 0;
		sb_dispatch(c, body, blen);
	}
}

/* Room to read into: the whole frame whose header is in (its length
 * was checked against max_reply), else a chunk. */
static void
sb_reserve(struct sb_client *c)
{
	size_t want;
	uint32_t blen;

	if (c->inoff > 0) { /* once per read, not once per frame */
		memmove(c->in, c->in + c->inoff, c->inlen - c->inoff);
		c->inlen -= c->inoff;
		c->inoff = 0;
	}
	want = c->inlen + SB_READ_CHUNK;
	if (c->inlen >= FRAME_HDR_LEN) {
		blen = frame_get_len(c->in);
		if (blen <= c->max_reply && FRAME_HDR_LEN + blen > want)
			want = FRAME_HDR_LEN + (size_t)blen;
	}
	if (c->incap < want) {
		c->in = xreallocarray(c->in, want, 1);
		c->incap = want;
	}
}

/* sb_process's work, which sb_wait runs too. */
static int
sb_run(struct sb_client *c)
{
	int wfail, reads;
	ssize_t n;

	if (c->dead)
		return -1;
	/* A broker that stopped reading may still have answered: read on. */
	wfail = sb_flush(c) == -1 ? errno : 0;
	/* a bounded share: a broker that writes on and on cannot keep the
	 * caller's loop here (what is left keeps the fd readable) */
	for (reads = 0; reads < SB_READS_MAX; reads++) {
		sb_reserve(c);
		n = recv(
		    c->fd, c->in + c->inlen, c->incap - c->inlen, MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n == -1) {
			sb_die(c, SB_ERR_PROTOCOL,
			    "reading from the broker: %s", strerror(errno));
			return -1;
		}
		if (n == 0) {
			sb_frames(c);
			sb_die(c, SB_ERR_PROTOCOL,
			    "the broker closed the connection%s",
			    c->inlen > c->inoff ? " in the middle of a frame"
			                        : "");
			return -1;
		}
		c->inlen += (size_t)n;
		sb_frames(c);
		if (c->dead)
			return -1;
	}
	if (wfail != 0 && !c->dead)
		sb_die(c, SB_ERR_PROTOCOL, "writing to the broker: %s",
		    strerror(wfail));
	return c->dead ? -1 : 0;
}

/* Callbacks run between these two: an sb_close in one waits for the
 * outermost library call to return (sb_leave: 1 when c is gone). */
void
sb_enter(struct sb_client *c)
{
	c->depth++;
}

int
sb_leave(struct sb_client *c)
{
	if (--c->depth > 0 || !c->closing)
		return 0;
	sb_free(c);
	return 1;
}

int
sb_process(struct sb_client *c)
{
	int r;

	sb_enter(c);
	r = sb_run(c);
	return sb_leave(c) ? -1 : r;
}

/* Milliseconds on the monotonic clock. */
static int64_t
sb_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Run the connection until *slot holds a reply, at most timeout_ms (-1:
 * as long as it takes; the broker answers every request in time); -1
 * (c->err) when the reply is one the library made because the
 * connection died, or the time ran out (the connection is then dead).
 */
int
sb_wait(struct sb_client *c, struct sb_reply **slot, int timeout_ms)
{
	int64_t end = sb_now_ms() + (timeout_ms < 0 ? 0 : timeout_ms);
	struct pollfd pfd;
	int left = -1, n;

	while (*slot == NULL) {
		pfd.fd = c->fd;
		pfd.events = sb_events(c);
		pfd.revents = 0;
		if (pfd.events == 0)
			break;
		if (timeout_ms >= 0 && (left = (int)(end - sb_now_ms())) <= 0) {
			sb_die(c, SB_ERR_PROTOCOL,
			    "the broker did not answer within %d ms",
			    timeout_ms);
			break;
		}
		if ((n = poll(&pfd, 1, left)) == -1) {
			if (errno == EINTR)
				continue;
			sb_die(c, SB_ERR_PROTOCOL, "poll: %s", strerror(errno));
			break;
		}
		if (n > 0)
			(void)sb_run(c);
	}
	if (*slot == NULL)
		return sb_fail(c, c->err, "%s", c->errmsg);
	if ((*slot)->local) {
		sb_fail(c, (*slot)->err, "%s", (*slot)->errmsg);
		sb_reply_free(*slot);
		*slot = NULL;
		return -1;
	}
	return 0;
}
