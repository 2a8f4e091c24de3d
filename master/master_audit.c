/*
 * master_audit.c: the master's records (built by proto/msg_audit.c) go
 * to auditd in order. One made while auditd is down waits in a small
 * queue and goes to the restarted auditd first, so a crash of auditd is
 * itself in the log.
 */
#include "../lib/log.h"
#include "master.h"

#define MAUDIT_QUEUE_MAX 64

static struct mp_enc queue[MAUDIT_QUEUE_MAX];
static size_t nqueue;

/* Send a whole record now, or queue it while auditd is down (takes m). */
void
maudit_send(struct mp_enc *m)
{
	if (M->roles[ROLE_AUDITD].peer.alive && nqueue == 0) {
		peer_send(&M->roles[ROLE_AUDITD].peer, m, NULL, 0);
		enc_free(m);
	} else if (nqueue == MAUDIT_QUEUE_MAX) {
		log_warnx("auditd is down and %d records wait: one is dropped",
		    MAUDIT_QUEUE_MAX);
		enc_free(m);
	} else
		queue[nqueue++] = *m;
}

/* auditd is back: send what waited, oldest first. */
void
maudit_flush(void)
{
	size_t i;

	for (i = 0; i < nqueue; i++) { /* a dead peer closes nothing here */
		peer_send(&M->roles[ROLE_AUDITD].peer, &queue[i], NULL, 0);
		enc_free(&queue[i]);
	}
	nqueue = 0;
}
