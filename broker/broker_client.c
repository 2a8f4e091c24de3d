/*
 * broker_client.c: client connections. The kernel tells us who the peer
 * is (SO_PEERCRED); frames are bounded; a frame that does not decode is
 * answered with bad_request and the connection is closed, affecting no
 * one else.
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

static void client_free(struct client *c);

void
client_send(struct client *c, const struct mp_enc *m)
{
	uint8_t hdr[FRAME_HDR_LEN];

	if (c == NULL || c->bev == NULL)
		return;
	frame_put_len(hdr, m->sb.size);
	bufferevent_write(c->bev, hdr, sizeof(hdr));
	bufferevent_write(c->bev, m->sb.data, m->sb.size);
}

/* An error reply; with close_after the connection ends once it is sent. */
void
client_error(struct client *c, const struct client_id *id, enum err_type type,
    const char *msg, int close_after)
{
	struct client_id none = {0, 0, NULL};
	struct mp_enc m;

	enc_init(&m);
	enc_map(&m, 4);
	enc_kstr(&m, "type", "error");
	enc_str(&m, "id");
	client_id_enc(&m, id ? id : &none);
	enc_kbool(&m, "ok", 0);
	enc_str(&m, "error");
	enc_map(&m, 3);
	enc_kstr(&m, "type", err_type_name(type));
	enc_kstr(&m, "message", msg);
	enc_str(&m, "details");
	enc_map(&m, 0);
	client_send(c, &m);
	enc_free(&m);
	if (close_after) {
		c->closing = 1;
		bufferevent_disable(c->bev, EV_READ);
	}
}

static void
reply_hello(struct client *c, const struct client_req *cr)
{
	struct mp_enc m;

	enc_init(&m);
	enc_map(&m, 7);
	enc_kstr(&m, "type", "hello");
	enc_str(&m, "id");
	client_id_enc(&m, &cr->id);
	enc_kbool(&m, "ok", 1);
	enc_kstr(&m, "server", "skillbroker");
	enc_kstr(&m, "version", BROKER_VERSION);
	enc_kuint(&m, "protocol", PROTO_VERSION);
	enc_str(&m, "principal");
	enc_map(&m, 3);
	enc_kuint(&m, "uid", c->uid);
	enc_kuint(&m, "gid", c->gid);
	enc_kint(&m, "pid", c->pid);
	client_send(c, &m);
	enc_free(&m);
}

static void
reply_stats(struct client *c, const struct client_req *cr)
{
	struct request *r;
	struct mp_enc m;
	uint64_t inflight = 0;

	LIST_FOREACH(r, &B->requests, entry)
	inflight++;
	enc_init(&m);
	enc_map(&m, 7);
	enc_kstr(&m, "type", "stats");
	enc_str(&m, "id");
	client_id_enc(&m, &cr->id);
	enc_kbool(&m, "ok", 1);
	enc_kuint(&m, "clients", B->nclients);
	enc_kuint(&m, "requests_total", B->stat_requests);
	enc_kuint(&m, "invokes_total", B->stat_invokes);
	enc_kuint(&m, "in_flight", inflight);
	client_send(c, &m);
	enc_free(&m);
}

/* One decoded frame: answer it here or start a request. */
static void
client_handle(struct client *c, const uint8_t *body, size_t len)
{
	struct client_req cr;
	struct mp_doc d;
	struct error e;

	B->stat_requests++;
	if (mp_decode(&d, body, len, NULL, &e) == -1) {
		client_error(c, NULL, ERR_BAD_REQUEST, e.msg, 1);
		return;
	}
	if (client_req_dec(&d, &cr, &e) == -1) {
		client_error(c, &cr.id, ERR_BAD_REQUEST, e.msg, 1);
		client_req_free(&cr);
		mp_doc_free(&d);
		return;
	}
	mp_doc_free(&d);
	if (cr.type == CREQ_HELLO)
		reply_hello(c, &cr);
	else if (cr.type == CREQ_STATS)
		reply_stats(c, &cr);
	else if (c->inflight >= CLIENT_INFLIGHT_MAX)
		client_error(c, &cr.id, ERR_OVERLOADED,
		    "too many requests in flight on this connection", 0);
	else {
		request_start(c, &cr); /* takes cr */
		return;
	}
	client_req_free(&cr);
}

/* Take every whole frame from the input; a bad header ends the client. */
static void
client_readcb(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct error e;
	uint8_t *data;
	size_t blen;

	while (!c->closing && evbuffer_get_length(in) >= FRAME_HDR_LEN) {
		data = evbuffer_pullup(in, FRAME_HDR_LEN);
		if (frame_check(data, FRAME_HDR_LEN, B->max_frame, &blen, &e) ==
		    FRAME_BAD) {
			client_error(c, NULL, ERR_BAD_REQUEST, e.msg, 1);
			return;
		}
		blen = ((size_t)data[0] << 24) | ((size_t)data[1] << 16) |
		       ((size_t)data[2] << 8) | data[3];
		if (evbuffer_get_length(in) < FRAME_HDR_LEN + blen)
			return;
		data = evbuffer_pullup(in, (ssize_t)(FRAME_HDR_LEN + blen));
		client_handle(c, data + FRAME_HDR_LEN, blen);
		evbuffer_drain(in, FRAME_HDR_LEN + blen);
	}
}

/* Close once a farewell error has been written out. */
static void
client_writecb(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;

	if (c->closing && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		client_free(c);
}

static void
client_eventcb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		client_free(arg);
}

static void
client_free(struct client *c)
{
	requests_detach(c);
	LIST_REMOVE(c, entry);
	bufferevent_free(c->bev);
	B->nclients--;
	free(c);
}

void
client_accept(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct client *c;

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
	c = xcalloc(1, sizeof(*c));
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	c->bev = bufferevent_socket_new(B->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL)
		fatalx("bufferevent_socket_new");
	/* Bound what one client can make us buffer. */
	bufferevent_setwatermark(
	    c->bev, EV_READ, 0, B->max_frame + FRAME_HDR_LEN);
	bufferevent_setcb(
	    c->bev, client_readcb, client_writecb, client_eventcb, c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	LIST_INSERT_HEAD(&B->clients, c, entry);
	B->nclients++;
	log_debug("client uid %u gid %u pid %d connected", (unsigned)c->uid,
	    (unsigned)c->gid, (int)c->pid);
}
