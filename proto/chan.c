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
	struct chan_out *o, *next;
	int i;

	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
	for (i = 0; i < c->nfdq; i++)
		close(c->fdq[i]);
	c->nfdq = 0;
	for (o = c->head; o != NULL; o = next) {
		next = o->next;
		for (i = 0; i < o->nfds; i++)
			close(o->fds[i]);
		free(o->data);
		free(o);
	}
	c->head = c->tail = NULL;
	free(c->rbuf);
	c->rbuf = NULL;
	c->rlen = c->rcap = 0;
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

	if (c->rcap - c->rlen < 65536) {
		if (c->rcap > FRAME_MAX_INTERNAL * 2) {
			errno = EMSGSIZE;
			return -1;
		}
		c->rcap = c->rcap ? c->rcap * 2 : 131072;
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

	st = frame_check(c->rbuf, c->rlen, FRAME_MAX_INTERNAL, &blen, e);
	if (st == FRAME_NEED_MORE)
		return 0;
	if (st == FRAME_BAD)
		return -1;
	r = mp_decode(d, c->rbuf + FRAME_HDR_LEN, blen, NULL, e);
	memmove(c->rbuf, c->rbuf + FRAME_HDR_LEN + blen,
	    c->rlen - FRAME_HDR_LEN - blen);
	c->rlen -= FRAME_HDR_LEN + blen;
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

void
chan_queue(struct chan *c, const struct mp_enc *m, const int *fds, int nfds)
{
	struct chan_out *o;

	if (nfds < 0 || nfds > 4)
		fatalx("too many fds for one message");
	if (m->sb.size == 0 || m->sb.size > FRAME_MAX_INTERNAL)
		fatalx("internal message of %zu bytes", m->sb.size);
	o = xcalloc(1, sizeof(*o));
	o->len = FRAME_HDR_LEN + m->sb.size;
	o->data = xmalloc(o->len);
	frame_put_len(o->data, m->sb.size);
	memcpy(o->data + FRAME_HDR_LEN, m->sb.data, m->sb.size);
	if (nfds > 0)
		memcpy(o->fds, fds, sizeof(int) * (size_t)nfds);
	o->nfds = nfds;
	if (c->tail)
		c->tail->next = o;
	else
		c->head = o;
	c->tail = o;
}

/* Send one chunk of the head message, attaching its fds to the first. */
static ssize_t
chan_send_one(struct chan *c, struct chan_out *o)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int) * 4)];
	} cmsgbuf;
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *cm;

	memset(&mh, 0, sizeof(mh));
	iov.iov_base = o->data + o->off;
	iov.iov_len = o->len - o->off;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (o->nfds > 0) {
		memset(&cmsgbuf, 0, sizeof(cmsgbuf));
		mh.msg_control = cmsgbuf.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)o->nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)o->nfds);
		memcpy(CMSG_DATA(cm), o->fds, sizeof(int) * (size_t)o->nfds);
	}
	return sendmsg(c->fd, &mh, MSG_NOSIGNAL);
}

int
chan_flush(struct chan *c)
{
	struct chan_out *o;
	ssize_t n;
	int i;

	while ((o = c->head) != NULL) {
		n = chan_send_one(c, o);
		if (n == -1) {
			if (errno == EAGAIN || errno == EINTR)
				return 1;
			return -1;
		}
		for (i = 0; i < o->nfds; i++)
			close(o->fds[i]);
		o->nfds = 0;
		o->off += (size_t)n;
		if (o->off < o->len)
			continue;
		c->head = o->next;
		if (c->head == NULL)
			c->tail = NULL;
		free(o->data);
		free(o);
	}
	return 0;
}

int
chan_pending(const struct chan *c)
{
	return c->head != NULL;
}
