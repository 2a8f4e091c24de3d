/*
 * auditq.h: a role's audit records on their way to auditd, in order:
 * sent at once while the channel lives, else kept (at most max) for the
 * restarted auditd, which gets them first.
 */
#ifndef SB_AUDITQ_H
#define SB_AUDITQ_H

#include <stddef.h>

#include "mp.h"
#include "peer.h"

struct auditq {
	struct mp_enc *q;
	size_t n, max;
};

void auditq_init(struct auditq *a, size_t max);
/* Send m (taken) on p, or keep it; -1 when the queue is full: dropped. */
int auditq_send(struct auditq *a, struct peer *p, struct mp_enc *m);
/* p is back: send what waited, oldest first; how many did. */
size_t auditq_flush(struct auditq *a, struct peer *p);

#endif
