/*
 * broker_conn.c: client connections. The kernel tells us who the peer
 * is (SO_PEERCRED); a frame is bounded before it is buffered; a frame
 * header that is not acceptable is answered with bad_request and the
 * connection closes, affecting no one else. Whole frames go to the
 * on_frame callback, a closed connection to on_close.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"
#include "broker.h"

static void conn_free(struct conn *cn);

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
	}
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

	while (!cn->closing && evbuffer_get_length(in) >= FRAME_HDR_LEN) {
		data = evbuffer_pullup(in, FRAME_HDR_LEN);
		if (frame_check(data, FRAME_HDR_LEN, B->max_frame, &blen, &e) ==
		    FRAME_BAD) {
			conn_error(cn, NULL, ERR_BAD_REQUEST, e.msg, 1);
			return;
		}
		blen = frame_get_len(data);
		if (evbuffer_get_length(in) < FRAME_HDR_LEN + blen)
			return;
		data = evbuffer_pullup(in, (ssize_t)(FRAME_HDR_LEN + blen));
		B->on_frame(cn, data + FRAME_HDR_LEN, blen);
		evbuffer_drain(in, FRAME_HDR_LEN + blen);
	}
}

/* Close once a farewell error has been written out. */
static void
conn_writecb(struct bufferevent *bev, void *arg)
{
	struct conn *cn = arg;

	if (cn->closing &&
	    evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		conn_free(cn);
}

static void
conn_eventcb(struct bufferevent *bev UNUSED, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_free(arg);
}

static void
conn_free(struct conn *cn)
{
	B->on_close(cn);
	LIST_REMOVE(cn, entry);
	bufferevent_free(cn->bev);
	B->nclients--;
	free(cn);
}

void
conn_accept(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct conn *cn;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("SO_PEERCRED");
		close(fd);
		return;
	}
	if (B->nclients >= B->max_clients) {
		log_warnx("uid %u refused: %u clients connected",
		    (unsigned)cred.uid, B->nclients);
		close(fd);
		return;
	}
	cn = xcalloc(1, sizeof(*cn));
	cn->uid = cred.uid;
	cn->gid = cred.gid;
	cn->pid = cred.pid;
	cn->bev = bufferevent_socket_new(B->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (cn->bev == NULL)
		fatalx("bufferevent_socket_new");
	/* Bound what one client can make us buffer. */
	bufferevent_setwatermark(
	    cn->bev, EV_READ, 0, B->max_frame + FRAME_HDR_LEN);
	bufferevent_setcb(cn->bev, conn_readcb, conn_writecb, conn_eventcb, cn);
	bufferevent_enable(cn->bev, EV_READ | EV_WRITE);
	LIST_INSERT_HEAD(&B->conns, cn, entry);
	B->nclients++;
	log_debug("client uid %u gid %u pid %d connected", (unsigned)cn->uid,
	    (unsigned)cn->gid, (int)cn->pid);
}
