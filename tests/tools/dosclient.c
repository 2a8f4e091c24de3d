/*
 * dosclient.c: a test tool that attacks the broker the way a local user
 * could to deny service to others (tests/dos/run.sh): it holds idle
 * connections, leaves frames half sent, floods requests whose replies
 * it never reads, and fires many invokes at once, or abandons them.
 *
 * usage: dosclient -s SOCKET MODE [OPTIONS] [-- ARGS...]
 *
 *   hold [-c N] [-w MS] [-t S]
 *	Open N connections (default 200), each sending one hello; a
 *	connection whose hello is answered within MS ms (default 2000)
 *	of the last connect is accepted, then held, idle, for S seconds
 *	(default 10) or until the broker closed them all.
 *   partial [-c N] [-b BYTES] [-i MS] [-t S]
 *	Open N connections (default 10) and send the first BYTES
 *	(default 2) bytes of a hello frame on each; with -i, one more
 *	byte every MS ms, never the frame's last. Wait S seconds
 *	(default 10) or until the broker closed them all.
 *   flood [-t S]
 *	Send hello frames on one connection as fast as the broker takes
 *	them, for S seconds (default 10) or until it closes the
 *	connection, never reading a reply.
 *   invoke -k SKILL [-x COMMAND] [-c N] [-C CONNS] [-P WINDOW] [-S PREFIX]
 *	    [-M K] [-T TIMEOUT_MS] [-d] [-t S] [-- ARGS...]
 *	Send N invokes (default 1) with ids 1..N, in phase execution, of
 *	SKILL (and COMMAND) with ARGS; request i goes on connection
 *	(i-1) mod CONNS (default 1) in session PREFIX-((i-1) mod K + 1)
 *	(PREFIX "dos", K = N: a session each). At most WINDOW (default N)
 *	are in flight at once. -d: close every connection as soon as all
 *	are sent, reading nothing. Else wait for the replies, at most S
 *	seconds (default 30).
 *
 * Output: one line per finding on stdout, flushed at once; the first
 * word says what it is, MS is milliseconds, ERRTYPE is an error type or
 * "-" when the broker closed without a reply, TEXT is the rest of the
 * line (control characters made spaces):
 *
 *   CONN I ok MS | CONN I ERRTYPE TEXT | CONN I noanswer
 *	| CONN I connect-failed TEXT
 *	connection I (from 1): its hello answered MS ms after the start,
 *	refused, unanswered, or never connected (hold, partial, invoke)
 *   ACCEPTED N, REFUSED N, NOANSWER N, FAILED N     totals (hold)
 *   CLOSED I MS ERRTYPE TEXT
 *	the broker closed connection I, MS ms after it went idle (hold:
 *	its hello's reply; partial: the first bytes sent; flood: the
 *	start), with a last error reply of ERRTYPE, or "-"
 *   OPEN N         connections still open at the end (hold, partial)
 *   BLOCKED MS     flood: the broker took no byte for 500 ms from MS on
 *   SENT BYTES FRAMES   flood: what was sent; invoke -d: FRAMES requests
 *   REPLY ID ok MS TEXT | REPLY ID ERRTYPE MS TEXT
 *	the reply to request ID, MS after it was sent; TEXT is the first
 *	line of the skill's stdout, or the error message
 *   NOREPLY ID WHY     no reply: "closed" (the connection), "timeout"
 *	(-t), "stopped" (a signal) or "send-failed" (never sent)
 *   DONE ok=N error=N noreply=N                     totals (invoke)
 *
 * SIGTERM or SIGINT ends a run early: what was seen so far and the
 * totals are still printed. Exit: 0 the attack ran (whatever the broker
 * did); 2 usage or a local error.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../lib/xmalloc.h"
#include "../../proto/client.h"
#include "../../proto/frame.h"
#include "../../proto/mp.h"

#define REPLY_MAX FRAME_MAX_INTERNAL
#define TEXT_MAX 300
#define DIAL_MS 5000 /* bound of connect() and of a blocking send */
#define FLOOD_FRAMES 1024
#define BLOCKED_MS 500

static const struct mp_limits reply_limits = {
    .max_depth = 8,
    .max_str = REPLY_MAX,
    .max_elems = 65536,
    .max_key = 256,
};

static const char *sock_path;
static uint64_t start_ms;
static volatile sig_atomic_t stop; /* SIGTERM or SIGINT: report and end */

/* A connection's unread input, and what became of it. */
struct conn {
	int fd; /* -1 once closed */
	uint8_t *in;
	size_t inlen, incap;
	int state;
	uint64_t idle_ms; /* when it went idle (mode's meaning) */
	size_t sent;      /* partial: bytes of the frame sent */
	char etype[64];   /* the last error reply's type, "-" if none */
	char text[TEXT_MAX];
};

/* What a reply says, as far as the tests care. */
struct reply {
	int has_id;
	uint64_t id;
	int ok;
	char etype[64];
	char text[TEXT_MAX];
};

enum { C_WAIT, C_OPEN, C_REFUSED, C_FAILED, C_NOANSWER, C_CLOSED };

/* Usage errors and local failures end the run with status 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("dosclient: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* One finding: a line on stdout, out at once for a watching shell. */
static void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* A TERM ends the attack early; what was seen so far is still reported. */
static void
on_stop(int sig UNUSED)
{
	stop = 1;
}

/* Milliseconds since the run started. */
static uint64_t
elapsed(void)
{
	return now_mono_ms() - start_ms;
}

/* Copy len bytes of p into out as one printable line of at most max-1. */
static void
text_copy(char *out, size_t max, const char *p, size_t len, int first_line)
{
	size_t i, n = 0;

	for (i = 0; i < len && n + 1 < max; i++) {
		unsigned char c = (unsigned char)p[i];

		if (first_line && c == '\n')
			break;
		out[n++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	out[n] = '\0';
}

/* The str or bin o as text into out; "" for anything else. */
static void
obj_text(const msgpack_object *o, char *out, size_t max, int first_line)
{
	out[0] = '\0';
	if (o != NULL && o->type == MSGPACK_OBJECT_STR)
		text_copy(
		    out, max, o->via.str.ptr, o->via.str.size, first_line);
	else if (o != NULL && o->type == MSGPACK_OBJECT_BIN)
		text_copy(
		    out, max, o->via.bin.ptr, o->via.bin.size, first_line);
}

/* Read the fields of a decoded reply into r. */
static void
reply_read(const msgpack_object *root, struct reply *r)
{
	const msgpack_object *o, *err, *out;

	memset(r, 0, sizeof(*r));
	o = mp_get(root, "id");
	if (o != NULL && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		r->has_id = 1;
		r->id = o->via.u64;
	}
	o = mp_get(root, "ok");
	r->ok =
	    o != NULL && o->type == MSGPACK_OBJECT_BOOLEAN && o->via.boolean;
	snprintf(r->etype, sizeof(r->etype), "%s", r->ok ? "ok" : "unknown");
	if ((err = mp_get(root, "error")) != NULL) {
		obj_text(mp_get(err, "type"), r->etype, sizeof(r->etype), 1);
		obj_text(mp_get(err, "message"), r->text, sizeof(r->text), 0);
		if (r->etype[0] == '\0')
			snprintf(r->etype, sizeof(r->etype), "unknown");
	} else if ((out = mp_get(root, "output")) != NULL)
		obj_text(mp_get(out, "stdout"), r->text, sizeof(r->text), 1);
	else if (r->ok)
		obj_text(mp_get(root, "type"), r->text, sizeof(r->text), 1);
}

/* Connect to the socket, bounded by DIAL_MS; -1 with errno on failure. */
static int
dial(void)
{
	struct sockaddr_un sun;
	struct timeval tv = {DIAL_MS / 1000, (DIAL_MS % 1000) * 1000};
	int fd, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, sock_path, strlen(sock_path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		die("socket: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1)
		die("SO_SNDTIMEO: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* A request as one frame (header and body) in a new buffer. */
static uint8_t *
frame_of(const struct client_req *cr, size_t *lenp)
{
	struct mp_enc m;
	uint8_t *buf;

	enc_init(&m);
	client_req_enc(&m, cr);
	buf = xmalloc(FRAME_HDR_LEN + m.sb.size);
	frame_put_len(buf, m.sb.size);
	memcpy(buf + FRAME_HDR_LEN, m.sb.data, m.sb.size);
	*lenp = FRAME_HDR_LEN + m.sb.size;
	enc_free(&m);
	return buf;
}

/* A hello frame of the given id. */
static uint8_t *
hello_frame(uint64_t id, size_t *lenp)
{
	struct client_req cr;

	memset(&cr, 0, sizeof(cr));
	cr.type = CREQ_HELLO;
	cr.id.is_num = 1;
	cr.id.num = id;
	return frame_of(&cr, lenp);
}

/* Send all of buf; -1 with errno when the broker took it not. */
static int
send_all(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Read what is there into cn's buffer without blocking: 1 when bytes
 * came, 0 when none, -1 when the broker closed the connection.
 */
static int
conn_fill(struct conn *cn)
{
	ssize_t n;
	int got = 0;

	for (;;) {
		if (cn->inlen == cn->incap) {
			if (cn->incap >= REPLY_MAX + FRAME_HDR_LEN)
				die("a reply frame is too big");
			cn->incap = cn->incap ? cn->incap * 2 : 4096;
			cn->in = xreallocarray(cn->in, 1, cn->incap);
		}
		n = recv(cn->fd, cn->in + cn->inlen, cn->incap - cn->inlen,
		    MSG_DONTWAIT);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return got;
		if (n <= 0)
			return -1; /* EOF, ECONNRESET and the like */
		cn->inlen += (size_t)n;
		got = 1;
	}
}

/* The next whole reply of cn's buffer into r: 1, or 0 if none is whole. */
static int
conn_reply(struct conn *cn, struct reply *r)
{
	struct mp_doc doc;
	struct error e;
	size_t blen;

	switch (frame_check(cn->in, cn->inlen, REPLY_MAX, &blen, &e)) {
	case FRAME_NEED_MORE:
		return 0;
	case FRAME_BAD:
		die("bad reply frame: %s", e.msg);
	case FRAME_READY:
		break;
	}
	if (mp_decode(&doc, cn->in + FRAME_HDR_LEN, blen, &reply_limits, &e) ==
	    -1)
		die("bad reply: %s", e.msg);
	reply_read(doc.root, r);
	mp_doc_free(&doc);
	memmove(cn->in, cn->in + FRAME_HDR_LEN + blen,
	    cn->inlen - FRAME_HDR_LEN - blen);
	cn->inlen -= FRAME_HDR_LEN + blen;
	return 1;
}

/* Our side of a connection ends. */
static void
conn_close(struct conn *cn)
{
	if (cn->fd != -1)
		close(cn->fd);
	cn->fd = -1;
}

/* A connection the broker closed: what it said last, and when. */
static void
conn_closed(struct conn *cn, int i)
{
	say("CLOSED %d %llu %s %s", i + 1,
	    (unsigned long long)(now_mono_ms() - cn->idle_ms), cn->etype,
	    cn->text);
	conn_close(cn);
	cn->state = C_CLOSED;
}

/* Remember an error reply as the connection's last word. */
static void
conn_note(struct conn *cn, const struct reply *r)
{
	if (r->ok)
		return;
	snprintf(cn->etype, sizeof(cn->etype), "%s", r->etype);
	snprintf(cn->text, sizeof(cn->text), "%s", r->text);
}

/* A new connection slot, not connected yet. */
static void
conn_init(struct conn *cn)
{
	memset(cn, 0, sizeof(*cn));
	cn->fd = -1;
	snprintf(cn->etype, sizeof(cn->etype), "-");
}

/*
 * poll() the open connections of cs for input, at most ms; pfd and map
 * are scratch arrays of n. Returns how many fds were polled.
 */
static int
conns_poll(struct conn *cs, int n, int want_state, struct pollfd *pfd, int *map,
    int ms)
{
	int i, np = 0;

	for (i = 0; i < n; i++) {
		if (cs[i].fd == -1 || cs[i].state != want_state)
			continue;
		pfd[np].fd = cs[i].fd;
		pfd[np].events = POLLIN;
		pfd[np].revents = 0;
		map[np++] = i;
	}
	if (poll(pfd, (nfds_t)np, ms < 0 ? 0 : ms) == -1 && errno != EINTR)
		die("poll: %s", strerror(errno));
	return np;
}

/* Milliseconds from now until deadline (a time of elapsed()), at least 0. */
static int
ms_until(uint64_t deadline)
{
	uint64_t now = elapsed();

	return now >= deadline ? 0 : (int)(deadline - now);
}

/* hold: the broker's answer to each hello, then who it closes and when. */
static void
mode_hold(int n, int settle_ms, int hold_s)
{
	struct conn *cs = xcalloc((size_t)n, sizeof(*cs));
	struct pollfd *pfd = xcalloc((size_t)n, sizeof(*pfd));
	int *map = xcalloc((size_t)n, sizeof(*map));
	int i, k, np, gone, got, waiting = 0, nopen = 0;
	int counts[C_CLOSED + 1] = {0};
	struct reply r;
	uint64_t deadline;
	uint8_t *hello;
	size_t hlen;

	for (i = 0; i < n; i++) {
		conn_init(&cs[i]);
		if (stop || (cs[i].fd = dial()) == -1) {
			say("CONN %d connect-failed %s", i + 1,
			    stop ? "stopped" : strerror(errno));
			cs[i].state = C_FAILED;
			continue;
		}
		hello = hello_frame((uint64_t)i + 1, &hlen);
		(void)send_all(cs[i].fd, hello, hlen); /* a refusal may race */
		free(hello);
		cs[i].state = C_WAIT;
		waiting++;
	}
	deadline = elapsed() + (uint64_t)settle_ms;
	while (!stop && waiting > 0 && ms_until(deadline) > 0) {
		np = conns_poll(cs, n, C_WAIT, pfd, map, ms_until(deadline));
		for (k = 0; k < np; k++) {
			if (pfd[k].revents == 0)
				continue;
			i = map[k];
			gone = conn_fill(&cs[i]) == -1;
			got = conn_reply(&cs[i], &r);
			if (got && r.ok) {
				say("CONN %d ok %llu", i + 1,
				    (unsigned long long)elapsed());
				cs[i].state = C_OPEN;
				cs[i].idle_ms = now_mono_ms();
				nopen++;
			} else if (got) {
				say("CONN %d %s %s", i + 1, r.etype, r.text);
				cs[i].state = C_REFUSED;
			} else if (gone) {
				say("CONN %d - closed without a reply", i + 1);
				cs[i].state = C_REFUSED;
			}
			if (!got && !gone)
				continue; /* the rest of the reply is to come */
			waiting--;
			if (cs[i].state == C_REFUSED)
				conn_close(&cs[i]);
		}
	}
	for (i = 0; i < n; i++)
		if (cs[i].state == C_WAIT) {
			say("CONN %d noanswer", i + 1);
			conn_close(&cs[i]);
			cs[i].state = C_NOANSWER;
		}
	for (i = 0; i < n; i++)
		counts[cs[i].state]++;
	say("ACCEPTED %d", counts[C_OPEN]);
	say("REFUSED %d", counts[C_REFUSED]);
	say("NOANSWER %d", counts[C_NOANSWER]);
	say("FAILED %d", counts[C_FAILED]);

	deadline = elapsed() + (uint64_t)hold_s * 1000;
	while (!stop && nopen > 0 && ms_until(deadline) > 0) {
		np = conns_poll(cs, n, C_OPEN, pfd, map, ms_until(deadline));
		for (k = 0; k < np; k++) {
			if (pfd[k].revents == 0)
				continue;
			i = map[k];
			gone = conn_fill(&cs[i]) == -1;
			while (conn_reply(&cs[i], &r) == 1)
				conn_note(&cs[i], &r);
			if (gone) {
				conn_closed(&cs[i], i);
				nopen--;
			}
		}
	}
	say("OPEN %d", nopen);
}

/* partial: frames that never complete; when does the broker give up? */
static void
mode_partial(int n, size_t bytes, int drip_ms, int wait_s)
{
	struct conn *cs = xcalloc((size_t)n, sizeof(*cs));
	struct pollfd *pfd = xcalloc((size_t)n, sizeof(*pfd));
	int *map = xcalloc((size_t)n, sizeof(*map));
	int i, k, np, gone, nopen = 0, ms;
	uint64_t deadline, next_drip;
	struct reply r;
	uint8_t *frame;
	size_t flen;

	frame = hello_frame(1, &flen);
	if (bytes < 1 || bytes >= flen)
		die("partial: -b must be 1..%zu (the frame is %zu bytes)",
		    flen - 1, flen);
	for (i = 0; i < n; i++) {
		conn_init(&cs[i]);
		if (stop || (cs[i].fd = dial()) == -1) {
			say("CONN %d connect-failed %s", i + 1,
			    stop ? "stopped" : strerror(errno));
			cs[i].state = C_FAILED;
			continue;
		}
		cs[i].idle_ms = now_mono_ms();
		if (send_all(cs[i].fd, frame, bytes) == -1) {
			say("CONN %d connect-failed send: %s", i + 1,
			    strerror(errno));
			conn_close(&cs[i]);
			cs[i].state = C_FAILED;
			continue;
		}
		cs[i].sent = bytes;
		cs[i].state = C_OPEN;
		nopen++;
	}
	deadline = elapsed() + (uint64_t)wait_s * 1000;
	next_drip = elapsed() + (uint64_t)drip_ms;
	while (!stop && nopen > 0 && ms_until(deadline) > 0) {
		ms = ms_until(deadline);
		if (drip_ms > 0 && ms_until(next_drip) < ms)
			ms = ms_until(next_drip);
		np = conns_poll(cs, n, C_OPEN, pfd, map, ms);
		for (k = 0; k < np; k++) {
			if (pfd[k].revents == 0)
				continue;
			i = map[k];
			gone = conn_fill(&cs[i]) == -1;
			while (conn_reply(&cs[i], &r) == 1)
				conn_note(&cs[i], &r);
			if (gone) {
				conn_closed(&cs[i], i);
				nopen--;
			}
		}
		if (drip_ms <= 0 || ms_until(next_drip) > 0)
			continue;
		next_drip = elapsed() + (uint64_t)drip_ms;
		for (i = 0; i < n; i++)
			if (cs[i].state == C_OPEN && cs[i].sent + 1 < flen &&
			    send_all(cs[i].fd, frame + cs[i].sent, 1) == 0)
				cs[i].sent++;
	}
	free(frame);
	say("OPEN %d", nopen);
}

/* flood: requests as fast as the broker takes them, replies never read. */
static void
mode_flood(int secs)
{
	uint8_t *one, *buf;
	size_t len, blen, off = 0;
	unsigned long long sent = 0;
	uint64_t deadline, progress_ms;
	struct pollfd pfd;
	int fd, i, ms, blocked = 0;
	ssize_t n;

	if ((fd = dial()) == -1)
		die("connect %s: %s", sock_path, strerror(errno));
	one = hello_frame(1, &len);
	blen = len * FLOOD_FRAMES;
	buf = xmalloc(blen);
	for (i = 0; i < FLOOD_FRAMES; i++)
		memcpy(buf + (size_t)i * len, one, len);
	progress_ms = elapsed();
	deadline = progress_ms + (uint64_t)secs * 1000;
	while (!stop && ms_until(deadline) > 0) {
		pfd.fd = fd;
		pfd.events = POLLOUT;
		pfd.revents = 0;
		ms = ms_until(deadline) < 100 ? ms_until(deadline) : 100;
		if (poll(&pfd, 1, ms) == -1 && errno != EINTR)
			die("poll: %s", strerror(errno));
		if (pfd.revents & (POLLHUP | POLLERR)) {
			say("CLOSED 1 %llu - hangup",
			    (unsigned long long)elapsed());
			break;
		}
		if (!blocked && elapsed() - progress_ms >= BLOCKED_MS) {
			say("BLOCKED %llu", (unsigned long long)progress_ms);
			blocked = 1;
		}
		if (!(pfd.revents & POLLOUT))
			continue;
		n = send(
		    fd, buf + off, blen - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n == -1) {
			say("CLOSED 1 %llu - %s", (unsigned long long)elapsed(),
			    strerror(errno));
			break;
		}
		sent += (unsigned long long)n;
		off = (off + (size_t)n) % blen;
		progress_ms = elapsed();
		blocked = 0;
	}
	say("SENT %llu %llu", sent, sent / (unsigned long long)len);
	close(fd);
	free(one);
	free(buf);
}

/* One invoke request of the run, and what became of it. */
struct ireq {
	int conn;
	int state; /* 0 unsent, 1 in flight, 2 answered or given up */
	uint64_t sent_ms;
	uint8_t *frame;
	size_t flen;
};

/* Settings of an invoke run. */
struct iopts {
	const char *skill, *command, *prefix;
	int n, nconns, window, modulo, drop, secs;
	uint64_t timeout_ms;
	char **args;
	size_t nargs;
};

/* The frames of the run's requests, each in its session. */
static struct ireq *
invoke_build(const struct iopts *o)
{
	struct ireq *rq = xcalloc((size_t)o->n, sizeof(*rq));
	struct client_req cr;
	char session[80];
	int i;

	for (i = 0; i < o->n; i++) {
		snprintf(session, sizeof(session), "%s-%d", o->prefix,
		    i % o->modulo + 1);
		memset(&cr, 0, sizeof(cr));
		cr.type = CREQ_INVOKE;
		cr.id.is_num = 1;
		cr.id.num = (uint64_t)i + 1;
		cr.skill = (char *)o->skill;
		cr.command = (char *)o->command;
		cr.session = session;
		cr.phase = (char *)"execution";
		cr.args = o->args;
		cr.nargs = o->nargs;
		cr.timeout_ms = o->timeout_ms;
		rq[i].frame = frame_of(&cr, &rq[i].flen);
		rq[i].conn = i % o->nconns;
	}
	return rq;
}

/* Request i is given up (its connection is gone, or time is up). */
static void
invoke_noreply(struct ireq *rq, int i, const char *why, int *left)
{
	if (rq[i].state == 2)
		return;
	say("NOREPLY %d %s", i + 1, why);
	rq[i].state = 2;
	(*left)--;
}

/* Every request still open on connection c goes unanswered. */
static void
invoke_conn_lost(const struct iopts *o, struct ireq *rq, int c, int *left)
{
	int i;

	for (i = 0; i < o->n; i++)
		if (rq[i].conn == c)
			invoke_noreply(rq, i, "closed", left);
}

/* invoke: many calls at once; each reply, or why there was none. */
static void
mode_invoke(const struct iopts *o)
{
	struct conn *cs = xcalloc((size_t)o->nconns, sizeof(*cs));
	struct pollfd *pfd = xcalloc((size_t)o->nconns, sizeof(*pfd));
	int *map = xcalloc((size_t)o->nconns, sizeof(*map));
	struct ireq *rq = invoke_build(o);
	int i, k, c, np, gone, next = 0, inflight = 0, left = o->n;
	int nok = 0, nerr = 0;
	size_t bytes = 0;
	uint64_t deadline;
	struct reply r;

	for (c = 0; c < o->nconns; c++) {
		conn_init(&cs[c]);
		if ((cs[c].fd = dial()) == -1) {
			say("CONN %d connect-failed %s", c + 1,
			    strerror(errno));
			cs[c].state = C_FAILED;
		} else
			cs[c].state = C_OPEN;
	}
	for (c = 0; c < o->nconns; c++)
		if (cs[c].state == C_FAILED)
			invoke_conn_lost(o, rq, c, &left);
	if (o->drop) {
		for (i = 0; i < o->n; i++)
			if (rq[i].state == 0 &&
			    send_all(cs[rq[i].conn].fd, rq[i].frame,
			        rq[i].flen) == 0) {
				bytes += rq[i].flen;
				next++;
			}
		say("SENT %zu %d", bytes, next);
		for (c = 0; c < o->nconns; c++)
			conn_close(&cs[c]);
		return;
	}
	deadline = elapsed() + (uint64_t)o->secs * 1000;
	while (!stop && left > 0 && ms_until(deadline) > 0) {
		for (; next < o->n && inflight < o->window; next++) {
			if (rq[next].state != 0)
				continue;
			c = rq[next].conn;
			rq[next].sent_ms = now_mono_ms();
			if (send_all(cs[c].fd, rq[next].frame, rq[next].flen) ==
			    -1) {
				invoke_noreply(rq, next, "send-failed", &left);
				continue;
			}
			rq[next].state = 1;
			inflight++;
		}
		np = conns_poll(
		    cs, o->nconns, C_OPEN, pfd, map, ms_until(deadline));
		for (k = 0; k < np; k++) {
			if (pfd[k].revents == 0)
				continue;
			c = map[k];
			gone = conn_fill(&cs[c]) == -1;
			while (conn_reply(&cs[c], &r) == 1) {
				/* A reply to none of ours: the connection's. */
				i = r.has_id ? (int)r.id - 1 : -1;
				if (i < 0 || i >= o->n || rq[i].state != 1) {
					say("CONN %d %s %s", c + 1, r.etype,
					    r.text);
					continue;
				}
				say("REPLY %d %s %llu %s", i + 1, r.etype,
				    (unsigned long long)(now_mono_ms() -
				                         rq[i].sent_ms),
				    r.text);
				if (r.ok)
					nok++;
				else
					nerr++;
				rq[i].state = 2;
				inflight--;
				left--;
			}
			if (gone) {
				conn_close(&cs[c]);
				cs[c].state = C_CLOSED;
				for (i = 0; i < o->n; i++)
					if (rq[i].conn == c && rq[i].state == 1)
						inflight--;
				invoke_conn_lost(o, rq, c, &left);
			}
		}
	}
	for (i = 0; i < o->n; i++)
		invoke_noreply(rq, i, stop ? "stopped" : "timeout", &left);
	say("DONE ok=%d error=%d noreply=%d", nok, nerr, o->n - nok - nerr);
	for (c = 0; c < o->nconns; c++)
		conn_close(&cs[c]);
}

/* Wrong arguments: the synopsis, status 2. */
static void __attribute__((noreturn)) usage(void)
{
	die("usage: dosclient -s SOCKET hold [-c N] [-w MS] [-t S]\n"
	    "       dosclient -s SOCKET partial [-c N] [-b BYTES] [-i MS] "
	    "[-t S]\n"
	    "       dosclient -s SOCKET flood [-t S]\n"
	    "       dosclient -s SOCKET invoke -k SKILL [-x COMMAND] [-c N] "
	    "[-C CONNS]\n"
	    "           [-P WINDOW] [-S PREFIX] [-M K] [-T TIMEOUT_MS] [-d] "
	    "[-t S] [-- ARGS...]");
}

/* A whole number option within [min, max], or a usage error. */
static int
num_arg(const char *s, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_uint(s, min, max, &v) == -1)
		usage();
	return (int)v;
}

/* Pick the mode, read its options, run it. */
int
main(int argc, char **argv)
{
	struct iopts io = {.prefix = "dos", .nconns = 1, .secs = 30};
	int ch, count = -1, wait_ms = 2000, secs = 10, drip = 0, bytes = 2;
	struct sigaction sa;
	const char *mode;

	while ((ch = getopt(argc, argv, "+s:")) != -1) {
		if (ch != 's')
			usage();
		sock_path = optarg;
	}
	if (sock_path == NULL || optind >= argc)
		usage();
	if (strlen(sock_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		die("socket path too long");
	mode = argv[optind];
	argc -= optind;
	argv += optind;
	optind = 1;
	while ((ch = getopt(argc, argv, "c:w:t:b:i:k:x:C:P:S:M:T:d")) != -1) {
		switch (ch) {
		case 'c':
			count = num_arg(optarg, 1, 10000);
			break;
		case 'w':
			wait_ms = num_arg(optarg, 0, 600000);
			break;
		case 't':
			secs = io.secs = num_arg(optarg, 0, 3600);
			break;
		case 'b':
			bytes = num_arg(optarg, 1, 4096);
			break;
		case 'i':
			drip = num_arg(optarg, 1, 600000);
			break;
		case 'k':
			io.skill = optarg;
			break;
		case 'x':
			io.command = optarg;
			break;
		case 'C':
			io.nconns = num_arg(optarg, 1, 10000);
			break;
		case 'P':
			io.window = num_arg(optarg, 1, 100000);
			break;
		case 'S':
			io.prefix = optarg;
			break;
		case 'M':
			io.modulo = num_arg(optarg, 1, 100000);
			break;
		case 'T':
			io.timeout_ms = (uint64_t)num_arg(optarg, 0, 86400000);
			break;
		case 'd':
			io.drop = 1;
			break;
		default:
			usage();
		}
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop; /* no SA_RESTART: poll() and connect() end */
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) == -1 ||
	    sigaction(SIGINT, &sa, NULL) == -1)
		die("sigaction: %s", strerror(errno));
	start_ms = now_mono_ms();
	if (strcmp(mode, "hold") == 0 && optind == argc)
		mode_hold(count > 0 ? count : 200, wait_ms, secs);
	else if (strcmp(mode, "partial") == 0 && optind == argc)
		mode_partial(count > 0 ? count : 10, (size_t)bytes, drip, secs);
	else if (strcmp(mode, "flood") == 0 && optind == argc)
		mode_flood(secs);
	else if (strcmp(mode, "invoke") == 0 && io.skill != NULL) {
		io.n = count > 0 ? count : 1;
		io.window = io.window > 0 ? io.window : io.n;
		io.modulo = io.modulo > 0 ? io.modulo : io.n;
		if (io.nconns > io.n)
			io.nconns = io.n;
		io.args = argv + optind;
		io.nargs = (size_t)(argc - optind);
		mode_invoke(&io);
	} else
		usage();
	return 0;
}
