/*
 * broker_conn.c: client connections. The kernel tells us who the peer
 * is (SO_PEERCRED); a frame is bounded before it is buffered; a frame
 * header that is not acceptable is answered with bad_request and the
 * connection closes, affecting no one else. Whole frames go to the
 * on_frame callback, a closed connection to on_close. Each uid has a
 * bound on its connections (broker_quota.c); a connection has deadlines
 * for a partial frame and for idleness, and one that leaves its replies
 * unread is read no more, then closed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"
#include "broker.h"

static void conn_free(struct conn *cn);
static void conn_readcb(struct bufferevent *bev, void *arg);

/* Queue one reply; a connection that has gone takes nothing. */
void
conn_send(struct conn *cn, const struct mp_enc *m)
{
	uint8_t hdr[FRAME_HDR_LEN];

	if (cn == NULL || cn->bev == NULL)
		return;
	if (!enc_complete(m))
		fatalx("a reply left a map open");
	frame_put_len(hdr, m->sb.size);
	bufferevent_write(cn->bev, hdr, sizeof(hdr));
	bufferevent_write(cn->bev, m->sb.data, m->sb.size);
	cn->last_ms = now_mono_ms();
	/* A client that does not read its replies sends no more requests. */
	if (!cn->throttled && evbuffer_get_length(bufferevent_get_output(
	                          cn->bev)) > B->clients.output_bytes) {
		cn->throttled = 1;
		bufferevent_disable(cn->bev, EV_READ);
		log_debug("uid %u: %llu bytes of replies unread: not reading",
		    (unsigned)cn->uid,
		    (unsigned long long)B->clients.output_bytes);
	}
	conn_arm(cn);
}

/* An error reply; with close_after the connection ends once it is sent. */
void
conn_error(struct conn *cn, const struct client_id *id, enum err_type type,
    const char *msg, int close_after)
{
	struct mp_enc m;

	if (cn == NULL)
		return;
	enc_init(&m);
	client_error_enc(&m, id, type, msg);
	conn_send(cn, &m);
	enc_free(&m);
	if (close_after) {
		cn->closing = 1;
		bufferevent_disable(cn->bev, EV_READ);
		evtimer_del(cn->timer);
	}
}

/*
 * The one deadline a connection has now: a frame begun must be whole
 * within clients.frame_s; a connection with nothing in flight ends after
 * clients.idle_s without a byte. One that does not read its replies
 * has the write timeout (clients.stall_s) instead.
 */
void
conn_arm(struct conn *cn)
{
	uint64_t now = now_mono_ms(), due;
	struct timeval tv;

	if (cn->closing || cn->throttled) {
		evtimer_del(cn->timer);
		return;
	}
	if (cn->frame_ms != 0)
		due = cn->frame_ms + B->clients.frame_s * 1000;
	else if (cn->inflight == 0)
		due = cn->last_ms + B->clients.idle_s * 1000;
	else {
		evtimer_del(cn->timer);
		return;
	}
	tv = timeval_ms(due > now ? due - now : 0);
	evtimer_add(cn->timer, &tv);
}

static void
conn_timeout(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct conn *cn = arg;
	uint64_t now = now_mono_ms();
	char msg[128];

	if (cn->frame_ms != 0 &&
	    now - cn->frame_ms >= B->clients.frame_s * 1000) {
		snprintf(msg, sizeof(msg),
		    "a frame was not complete %llu s after it began "
		    "(clients.frame_s)",
		    (unsigned long long)B->clients.frame_s);
		conn_error(cn, NULL, ERR_BAD_REQUEST, msg, 1);
	} else if (cn->frame_ms == 0 && cn->inflight == 0 &&
	           now - cn->last_ms >= B->clients.idle_s * 1000) {
		log_debug("uid %u: idle for %llu s: closed", (unsigned)cn->uid,
		    (unsigned long long)B->clients.idle_s);
		conn_free(cn);
	} else
		conn_arm(cn);
}

/* Take every whole frame from the input; a bad header ends the client. */
static void
conn_readcb(struct bufferevent *bev, void *arg)
{
	struct conn *cn = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct error e;
	uint8_t *data;
	size_t blen;
	int took = 0;

	cn->last_ms = now_mono_ms();
	while (!cn->closing && !cn->throttled &&
	       evbuffer_get_length(in) >= FRAME_HDR_LEN) {
		data = evbuffer_pullup(in, FRAME_HDR_LEN);
		if (frame_check(data, FRAME_HDR_LEN, B->max_frame, &blen, &e) ==
		    FRAME_BAD) {
			conn_error(cn, NULL, ERR_BAD_REQUEST, e.msg, 1);
			return;
		}
		blen = frame_get_len(data);
		if (evbuffer_get_length(in) < FRAME_HDR_LEN + blen)
			break;
		data = evbuffer_pullup(in, (ssize_t)(FRAME_HDR_LEN + blen));
		B->on_frame(cn, data + FRAME_HDR_LEN, blen);
		evbuffer_drain(in, FRAME_HDR_LEN + blen);
		took = 1;
	}
	/* A frame begun: it has clients.frame_s from its first byte. */
	if (evbuffer_get_length(in) == 0)
		cn->frame_ms = 0;
	else if (cn->frame_ms == 0 || took)
		cn->frame_ms = now_mono_ms();
	conn_arm(cn);
}

/* Replies went out: a throttled client may send again; a farewell closes. */
static void
conn_writecb(struct bufferevent *bev, void *arg)
{
	struct conn *cn = arg;
	size_t left = evbuffer_get_length(bufferevent_get_output(bev));

	if (cn->closing && left == 0) {
		conn_free(cn);
		return;
	}
	if (cn->throttled && !cn->closing &&
	    left <= B->clients.output_bytes / 2) {
		cn->throttled = 0;
		bufferevent_enable(bev, EV_READ);
		conn_readcb(bev, cn); /* what it sent meanwhile */
	}
}

static void
conn_eventcb(struct bufferevent *bev UNUSED, short what, void *arg)
{
	struct conn *cn = arg;

	if ((what & BEV_EVENT_TIMEOUT) && (what & BEV_EVENT_WRITING))
		log_info("uid %u read no reply for %llu s (clients.stall_s): "
		         "closed, its calls cancelled",
		    (unsigned)cn->uid, (unsigned long long)B->clients.stall_s);
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT))
		conn_free(cn);
}

/* A connection gone: what it held goes back once the broker is idle. */
static void
conn_free(struct conn *cn)
{
	B->on_close(cn);
	LIST_REMOVE(cn, entry);
	bufferevent_free(cn->bev);
	event_free(cn->timer);
	quota_release(QUOTA_CLIENTS, cn->uid);
	free(cn);
	conn_idle_arm();
}

void
conn_idle_arm(void)
{
	struct timeval tv = timeval_ms(IDLE_TRIM_MS);

	if (B->ncalls == 0 && B->trim_ev != NULL &&
	    evtimer_add(B->trim_ev, &tv) == -1)
		fatalx("idle timer");
}

/* A connection over a bound: one error frame that names it, then close. */
static void
conn_refuse(int fd, const struct error *e)
{
	uint8_t hdr[FRAME_HDR_LEN];
	struct iovec iov[2];
	struct msghdr mh;
	struct mp_enc m;

	enc_init(&m);
	client_error_enc(&m, NULL, e->type, e->msg);
	frame_put_len(hdr, m.sb.size);
	iov[0] = (struct iovec){hdr, sizeof(hdr)};
	iov[1] = (struct iovec){m.sb.data, m.sb.size};
	memset(&mh, 0, sizeof(mh));
	mh.msg_iov = iov;
	mh.msg_iovlen = 2;
	/* Small enough for an empty socket buffer; never waits. */
	(void)sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	enc_free(&m);
	close(fd);
}

void
conn_accept(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval stall = {(time_t)B->clients.stall_s, 0};
	struct conn *cn;
	struct error e;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("SO_PEERCRED");
		close(fd);
		return;
	}
	if (quota_take(QUOTA_CLIENTS, cred.uid, cred.gid, &e) == -1) {
		log_warnx("uid %u refused: %s", (unsigned)cred.uid, e.msg);
		conn_refuse(fd, &e);
		return;
	}
	cn = xcalloc(1, sizeof(*cn));
	cn->uid = cred.uid;
	cn->gid = cred.gid;
	cn->pid = cred.pid;
	cn->last_ms = now_mono_ms();
	cn->proto = CLIENT_PROTO_MAX; /* until hello says otherwise */
	cn->bev = bufferevent_socket_new(B->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (cn->bev == NULL ||
	    (cn->timer = evtimer_new(B->base, conn_timeout, cn)) == NULL)
		fatalx("bufferevent_socket_new");
	/* Bound what one client can make us buffer, either way. */
	bufferevent_setwatermark(
	    cn->bev, EV_READ, 0, B->max_frame + FRAME_HDR_LEN);
	bufferevent_setwatermark(
	    cn->bev, EV_WRITE, B->clients.output_bytes / 2, 0);
	bufferevent_set_timeouts(cn->bev, NULL, &stall);
	bufferevent_setcb(cn->bev, conn_readcb, conn_writecb, conn_eventcb, cn);
	bufferevent_enable(cn->bev, EV_READ | EV_WRITE);
	LIST_INSERT_HEAD(&B->conns, cn, entry);
	conn_arm(cn);
	log_debug("client uid %u gid %u pid %d connected", (unsigned)cn->uid,
	    (unsigned)cn->gid, (int)cn->pid);
}
