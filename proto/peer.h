/*
 * peer.h: one internal channel bound to libevent, with a dispatch table
 * that says which message types this peer may send. A type not in the
 * table, a second ONCE message, or a handler's -1 is a protocol
 * violation: the peer is cut off and on_dead runs (never "ignored").
 */
#ifndef SB_PEER_H
#define SB_PEER_H

#include <event2/event.h>
#include <stdint.h>

#include "chan.h"

struct peer;

#define PH_ONCE 0x1 /* at most once per peer lifetime */
/* A deferred peer writes at once when this much is queued. */
#ifndef PEER_DEFER_BYTES
#define PEER_DEFER_BYTES 16384
#endif

struct peer_handler {
	uint64_t type;
	unsigned flags;
	int (*fn)(struct peer *p, const struct mp_doc *d);
};

struct peer {
	struct chan ch;
	struct event *rev, *wev;
	const char *name;
	const struct peer_handler *table;
	uint32_t seen; /* bit per table index, for PH_ONCE */
	void (*on_dead)(struct peer *p, const char *why);
	void *arg;
	int alive;
	int defer; /* writes wait for the end of the loop pass */
};

void peer_init(struct peer *p, struct event_base *base, int fd,
    const char *name, const struct peer_handler *table,
    void (*on_dead)(struct peer *, const char *), void *arg);
/*
 * Queue a message (the peer owns the fds) and write what fits. A failed
 * write ends the peer from the event loop, never inside peer_send.
 */
void peer_send(
    struct peer *p, const struct mp_enc *m, const int *fds, int nfds);
/*
 * Encode one message with enc(&m, args...) and queue it on p (with nfds
 * fds, which the channel then owns): every role sends this way.
 */
#define PEER_SEND_FDS(p, fds, nfds, enc, ...)                                  \
	do {                                                                   \
		struct mp_enc m_;                                              \
		enc_init(&m_);                                                 \
		enc(&m_, __VA_ARGS__);                                         \
		peer_send((p), &m_, (fds), (nfds));                            \
		enc_free(&m_);                                                 \
	} while (0)
#define PEER_SEND(p, enc, ...) PEER_SEND_FDS(p, NULL, 0, enc, __VA_ARGS__)

/*
 * For every peer this process sets up from now on, peer_send only
 * queues, and the queue is written once the event loop has run what is
 * ready now: many messages, one sendmsg. peer_flush writes at once
 * (before exiting).
 */
void peer_defer_writes(void);
void peer_flush(struct peer *p);

/* Dispatch what the peer sent before it died (a reaped child). */
void peer_drain(struct peer *p);

/* Close the channel; calls on_dead once with why. */
void peer_kill(struct peer *p, const char *why);
/*
 * PEER_CHANNEL: the fd it carries, when its role is one of roles (a
 * NULL-ended list; *which its index); else -1, the fd closed: the
 * sender broke the protocol.
 */
int peer_take_channel(struct peer *p, const struct mp_doc *d,
    const char *const *roles, int *which);

#endif
