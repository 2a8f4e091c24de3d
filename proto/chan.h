/*
 * chan.h: a non-blocking internal channel over a stream socketpair:
 * length-prefixed msgpack frames, a write queue, and fds passed with
 * SCM_RIGHTS that arrive in the order their messages were sent.
 */
#ifndef SB_CHAN_H
#define SB_CHAN_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"
#include "mp.h"

#define CHAN_MAX_FDS 16

struct chan_out {
	struct chan_out *next;
	uint8_t *data;
	size_t len, off;
	int fds[4];
	int nfds;
};

struct chan {
	int fd;
	uint8_t *rbuf;
	size_t rlen, rcap;
	int fdq[CHAN_MAX_FDS];
	int nfdq;
	struct chan_out *head, *tail;
	const char *peer; /* for log messages */
};

void chan_init(struct chan *c, int fd, const char *peer);
void chan_close(struct chan *c);
/* Read what is available: >0 bytes, 0 on EOF, -1 on error, -2 on EAGAIN. */
int chan_read(struct chan *c);
/* Next whole message: 1 and *d filled, 0 need more, -1 protocol error. */
int chan_next(struct chan *c, struct mp_doc *d, struct error *e);
/* Pop the oldest received fd, or -1. */
int chan_take_fd(struct chan *c);
/* Queue an encoded message; the channel owns (and closes) the fds. */
void chan_queue(
    struct chan *c, const struct mp_enc *m, const int *fds, int nfds);
/* Write queued data: 0 all sent, 1 more pending, -1 error. */
int chan_flush(struct chan *c);
int chan_pending(const struct chan *c);

#endif
