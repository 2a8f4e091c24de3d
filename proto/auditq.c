/* auditq.c: the bounded queue of audit records a restarted auditd gets. */
#include "auditq.h"

#include "../lib/xmalloc.h"

void
auditq_init(struct auditq *a, size_t max)
{
	a->q = xcalloc(max, sizeof(*a->q));
	a->n = 0;
	a->max = max;
}

int
auditq_send(struct auditq *a, struct peer *p, struct mp_enc *m)
{
	if (p->alive && a->n == 0) {
		peer_send(p, m, NULL, 0);
		enc_free(m);
		return 0;
	}
	if (a->n == a->max) {
		enc_free(m);
		return -1;
	}
	a->q[a->n++] = *m;
	return 0;
}

size_t
auditq_flush(struct auditq *a, struct peer *p)
{
	size_t i, n = a->n;

	for (i = 0; i < n; i++) { /* a dead peer closes nothing here */
		peer_send(p, &a->q[i], NULL, 0);
		enc_free(&a->q[i]);
	}
	a->n = 0;
	return n;
}
