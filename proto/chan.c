/* chan.c: framed, fd-passing, non-blocking internal channels. */
#include "chan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/xmalloc.h"
#include "frame.h"

void
chan_init(struct chan *c, int fd, const char *peer)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->peer = peer;
}

void
chan_close(struct chan *c)
{
	size_t k;
	int i;

	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	for (i = 0; i < c->nfdq; i++)
		close(c->fdq[i]);
	c->nfdq = 0;
	for (k = 0; k < c->nmarks; k++)
		for (i = 0; i < c->marks[k].nfds; i++)
			close(c->marks[k].fds[i]);
	free(c->marks);
	c->marks = NULL;
	c->nmarks = c->mcap = 0;
	free(c->obuf);
	c->obuf = NULL;
	c->ooff = c->olen = c->ocap = 0;
	free(c->rbuf);
	c->rbuf = NULL;
	c->roff = c->rlen = c->rcap = 0;
}

/* Stash fds from a control message; too many is a protocol violation. */
static int
chan_collect_fds(struct chan *c, struct msghdr *mh)
{
	struct cmsghdr *cm;
	int *fds, n, i, bad = 0;

	for (cm = CMSG_FIRSTHDR(mh); cm != NULL; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		fds = (int *)CMSG_DATA(cm);
		n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < n; i++) {
			if (c->nfdq >= CHAN_MAX_FDS) {
				close(fds[i]);
				bad = 1;
			} else
				c->fdq[c->nfdq++] = fds[i];
		}
	}
	if (mh->msg_flags & MSG_CTRUNC)
		bad = 1;
	return bad ? -1 : 0;
}

int
chan_read(struct chan *c)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * CHAN_MAX_FDS)];
	} cmsgbuf;
	struct msghdr mh;
	struct iovec iov;
	ssize_t n;

	if (c->roff > 0 && c->rcap - c->rlen < CHAN_READ_MIN) {
		memmove(c->rbuf, c->rbuf + c->roff, c->rlen - c->roff);
		c->rlen -= c->roff;
		c->roff = 0;
	}
	if (c->rcap - c->rlen < CHAN_READ_MIN) {
		if (c->rcap > FRAME_MAX_INTERNAL * 2) {
			errno = EMSGSIZE;
			return -1;
		}
		c->rcap = c->rcap ? c->rcap * 2 : CHAN_READ_FIRST;
		c->rbuf = xreallocarray(c->rbuf, c->rcap, 1);
	}
	memset(&mh, 0, sizeof(mh));
	iov.iov_base = c->rbuf + c->rlen;
	iov.iov_len = c->rcap - c->rlen;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cmsgbuf.buf;
	mh.msg_controllen = sizeof(cmsgbuf.buf);
	n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC);
	if (n == -1)
		return (errno == EAGAIN || errno == EINTR) ? -2 : -1;
	if (chan_collect_fds(c, &mh) == -1) {
		errno = EPROTO;
		return -1;
	}
	c->rlen += (size_t)n;
	return (int)(n > 0 ? 1 : 0);
}

int
chan_next(struct chan *c, struct mp_doc *d, struct error *e)
{
	size_t blen;
	enum frame_status st;
	int r;

	st = frame_check(
	    c->rbuf + c->roff, c->rlen - c->roff, FRAME_MAX_INTERNAL, &blen, e);
	if (st == FRAME_NEED_MORE)
		return 0;
	if (st == FRAME_BAD)
		return -1;
	r = mp_decode(d, c->rbuf + c->roff + FRAME_HDR_LEN, blen, NULL, e);
	/* Taken: the next message follows; compacted only before a read. */
	c->roff += FRAME_HDR_LEN + blen;
	if (c->roff == c->rlen)
		c->roff = c->rlen = 0;
	return r == 0 ? 1 : -1;
}

int
chan_take_fd(struct chan *c)
{
	int fd;

	if (c->nfdq == 0)
		return -1;
	fd = c->fdq[0];
	memmove(c->fdq, c->fdq + 1, sizeof(int) * (size_t)(c->nfdq - 1));
	c->nfdq--;
	return fd;
}

/* Room for len more bytes of output, compacting what was sent first. */
static void
chan_out_room(struct chan *c, size_t len)
{
	size_t k, cap;

	if (c->ooff > 0 && c->ocap - c->olen < len) {
		memmove(c->obuf, c->obuf + c->ooff, c->olen - c->ooff);
		for (k = 0; k < c->nmarks; k++)
			c->marks[k].at -= c->ooff;
		c->olen -= c->ooff;
		c->ooff = 0;
	}
	if (c->ocap - c->olen >= len)
		return;
	cap = c->ocap ? c->ocap : CHAN_OUT_FIRST;
	while (cap - c->olen < len)
		cap *= 2;
	c->obuf = xreallocarray(c->obuf, cap, 1);
	c->ocap = cap;
}

void
chan_queue(struct chan *c, const struct mp_enc *m, const int *fds, int nfds)
{
	struct chan_fdmark *mk;

	if (nfds < 0 || nfds > 4)
		fatalx("too many fds for one message");
	if (m->sb.size == 0 || m->sb.size > FRAME_MAX_INTERNAL)
		fatalx("internal message of %zu bytes", m->sb.size);
	chan_out_room(c, FRAME_HDR_LEN + m->sb.size);
	if (nfds > 0) {
		if (c->nmarks == c->mcap) {
			c->mcap = c->mcap ? 2 * c->mcap : 4;
			c->marks =
			    xreallocarray(c->marks, c->mcap, sizeof(*c->marks));
		}
		mk = &c->marks[c->nmarks++];
		mk->at = c->olen;
		memcpy(mk->fds, fds, sizeof(int) * (size_t)nfds);
		mk->nfds = nfds;
	}
	frame_put_len(c->obuf + c->olen, m->sb.size);
	memcpy(c->obuf + c->olen + FRAME_HDR_LEN, m->sb.data, m->sb.size);
	c->olen += FRAME_HDR_LEN + m->sb.size;
}

/* Send len bytes at p, with mk's fds (mk not NULL) attached to the first. */
static ssize_t
chan_send(
    struct chan *c, const uint8_t *p, size_t len, const struct chan_fdmark *mk)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} cmsgbuf;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = (void *)p;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (mk != NULL) {
		memset(&cmsgbuf, 0, sizeof(cmsgbuf));
		mh.msg_control = cmsgbuf.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)mk->nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)mk->nfds);
		memcpy(CMSG_DATA(cm), mk->fds, sizeof(int) * (size_t)mk->nfds);
	}
	return sendmsg(c->fd, &mh, MSG_NOSIGNAL);
}

/*
 * Write the queue: every run of messages without fds in one sendmsg, a
 * message with fds starting a sendmsg of its own.
 */
int
chan_flush(struct chan *c)
{
	struct chan_fdmark *mk;
	size_t end;
	ssize_t n;
	int i, nfds;

	while (c->ooff < c->olen) {
		mk = c->nmarks > 0 ? &c->marks[0] : NULL;
		nfds = mk != NULL && mk->at == c->ooff ? mk->nfds : 0;
		if (nfds > 0)
			end = c->nmarks > 1 ? c->marks[1].at : c->olen;
		else
			end = mk != NULL ? mk->at : c->olen;
		n = chan_send(
		    c, c->obuf + c->ooff, end - c->ooff, nfds > 0 ? mk : NULL);
		if (n == -1)
			return errno == EAGAIN || errno == EINTR ? 1 : -1;
		if (n == 0)
			return 1;
		if (nfds > 0) { /* they went with the message's first byte */
			for (i = 0; i < nfds; i++)
				close(mk->fds[i]);
			memmove(c->marks, c->marks + 1,
			    (c->nmarks - 1) * sizeof(*c->marks));
			c->nmarks--;
		}
		c->ooff += (size_t)n;
	}
	c->ooff = c->olen = 0;
	/* A burst's buffer goes back; a small one is kept for the next. */
	if (c->ocap > CHAN_OUT_KEEP) {
		free(c->obuf);
		c->obuf = NULL;
		c->ocap = 0;
	}
	return 0;
}

/* Buffers with nothing in them go; the next use makes them anew. */
void
chan_shrink(struct chan *c)
{
	if (c->roff == c->rlen) {
		free(c->rbuf);
		c->rbuf = NULL;
		c->roff = c->rlen = c->rcap = 0;
	}
	if (c->ooff == c->olen) {
		free(c->obuf);
		c->obuf = NULL;
		c->ooff = c->olen = c->ocap = 0;
	}
}

int
chan_pending(const struct chan *c)
{
	return c->ooff < c->olen;
}
