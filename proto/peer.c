/* peer.c: internal channels on libevent with table-driven dispatch. */
#include "peer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "msg.h"

static int peer_deferred; /* peer_defer_writes: for peers set up later */

/* Find the handler for type t; -1 if this peer may not send it. */
static int
peer_lookup(const struct peer *p, uint64_t t)
{
	int i;

	for (i = 0; p->table[i].fn != NULL; i++)
		if (p->table[i].type == t)
			return i;
	return -1;
}

/* Run one message through the table; -1 on a protocol violation. */
static int
peer_dispatch(struct peer *p, const struct mp_doc *d)
{
	struct error e;
	uint64_t t;
	int i;

	if (msg_type_of(d, &t, &e) == -1) {
		log_warnx("%s: %s", p->name, e.msg);
		return -1;
	}
	if ((i = peer_lookup(p, t)) == -1) {
		log_warnx("%s: message type %llu not permitted", p->name,
		    (unsigned long long)t);
		return -1;
	}
	if (p->table[i].flags & PH_ONCE) {
		if (p->seen & (1U << i)) {
			log_warnx("%s: message type %llu repeated", p->name,
			    (unsigned long long)t);
			return -1;
		}
		p->seen |= 1U << i;
	}
	return p->table[i].fn(p, d);
}

/* Read once and dispatch what came; -2 when nothing was there. */
static int
peer_read(struct peer *p)
{
	struct mp_doc d;
	struct error e;
	int r;

	r = chan_read(&p->ch);
	if (r == -2)
		return -2;
	if (r == 0 || r == -1) {
		peer_kill(p, r == 0 ? "channel closed" : strerror(errno));
		return 0;
	}
	while (p->alive && (r = chan_next(&p->ch, &d, &e)) == 1) {
		r = peer_dispatch(p, &d);
		mp_doc_free(&d);
		if (r == -1 && p->alive) {
			peer_kill(p, "protocol violation");
			return 0;
		}
	}
	if (r == -1 && p->alive) {
		log_warnx("%s: %s", p->name, e.msg);
		peer_kill(p, "malformed message");
	}
	return 0;
}

static void
peer_readcb(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	(void)peer_read(arg);
}

void
peer_drain(struct peer *p)
{
	while (p->alive && peer_read(p) != -2)
		;
}

static void
peer_writecb(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct peer *p = arg;
	int r;

	if ((r = chan_flush(&p->ch)) == -1)
		peer_kill(p, strerror(errno));
	else if (r == 1)
		event_add(p->wev, NULL);
}

void
peer_init(struct peer *p, struct event_base *base, int fd, const char *name,
    const struct peer_handler *table,
    void (*on_dead)(struct peer *, const char *), void *arg)
{
	memset(p, 0, sizeof(*p));
	if (set_nonblock(fd) == -1)
		fatal("%s: nonblock", name);
	chan_init(&p->ch, fd, name);
	p->name = name;
	p->table = table;
	p->on_dead = on_dead;
	p->arg = arg;
	p->defer = peer_deferred;
	p->rev = event_new(base, fd, EV_READ | EV_PERSIST, peer_readcb, p);
	p->wev = event_new(base, fd, EV_WRITE, peer_writecb, p);
	if (p->rev == NULL || p->wev == NULL || event_add(p->rev, NULL) == -1)
		fatalx("%s: event setup", name);
	p->alive = 1;
}

void
peer_send(struct peer *p, const struct mp_enc *m, const int *fds, int nfds)
{
	int i;

	if (!p->alive) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		return;
	}
	chan_queue(&p->ch, m, fds, nfds);
	/* Deferred: the write callback runs after what is ready now,
	 * unless enough has queued for the peer to start on. */
	if (p->defer && p->ch.olen - p->ch.ooff < PEER_DEFER_BYTES) {
		event_active(p->wev, EV_WRITE, 0);
		return;
	}
	/*
	 * Write what fits now, but report a failure from the loop: on_dead
	 * must not run inside a caller that is changing what it tears down.
	 */
	switch (chan_flush(&p->ch)) {
	case 1:
		event_add(p->wev, NULL);
		break;
	case -1:
		event_active(p->wev, EV_WRITE, 0);
		break;
	}
}

/* Peers set up from now on defer their writes (a role's choice). */
void
peer_defer_writes(void)
{
	peer_deferred = 1;
}

/* Write what is queued now, as far as the socket takes it. */
void
peer_flush(struct peer *p)
{
	if (p->alive && chan_pending(&p->ch))
		peer_writecb(-1, EV_WRITE, p);
}

void
peer_kill(struct peer *p, const char *why)
{
	if (!p->alive)
		return;
	p->alive = 0;
	event_free(p->rev);
	event_free(p->wev);
	p->rev = p->wev = NULL;
	chan_close(&p->ch);
	if (p->on_dead)
		p->on_dead(p, why);
}

int
peer_take_channel(struct peer *p, const struct mp_doc *d,
    const char *const *roles, int *which)
{
	struct msg_peer_channel pc;
	struct error e;
	int fd = chan_take_fd(&p->ch), i;

	if (fd == -1 || msg_peer_channel_dec(d, &pc, &e) == -1) {
		if (fd != -1)
			close(fd);
		return -1;
	}
	for (i = 0; roles[i] != NULL && strcmp(roles[i], pc.role) != 0; i++)
		;
	msg_peer_channel_free(&pc);
	if (roles[i] == NULL) { /* not a channel this receiver serves */
		close(fd);
		return -1;
	}
	*which = i;
	return fd;
}
