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
#define CHAN_READ_FIRST 65536 /* the read buffer, at its first read */
#define CHAN_READ_MIN 16384   /* free room a read asks for */
#define CHAN_OUT_FIRST 4096   /* the output buffer, at its first message */
#define CHAN_OUT_KEEP 65536   /* kept once flushed; a larger one is freed */

/* A queued message that carries fds: they go with its first byte. */
struct chan_fdmark {
	size_t at; /* its offset in obuf */
	int fds[4];
	int nfds;
};

struct chan {
	int fd;
	uint8_t *rbuf;
	size_t roff, rlen, rcap; /* unread messages: rbuf[roff, rlen) */
	int fdq[CHAN_MAX_FDS];
	int nfdq;
	/* Queued output, written as few sendmsg calls as the fds allow. */
	uint8_t *obuf;
	size_t ooff, olen, ocap;   /* unsent: obuf[ooff, olen) */
	struct chan_fdmark *marks; /* in order of at */
	size_t nmarks, mcap;
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
/* An idle channel gives back its buffers when nothing is in them. */
void chan_shrink(struct chan *c);

#endif
