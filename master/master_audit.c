/*
 * master_audit.c: the master's records (built by proto/msg_audit.c) go
 * to auditd in order. One made while auditd is down waits in a small
 * queue (proto/auditq.c) and goes to the restarted auditd first, so a
 * crash of auditd is itself in the log.
 */
#include "../lib/log.h"
#include "../proto/auditq.h"
#include "master.h"

#define MAUDIT_QUEUE_MAX 64

static struct auditq queue;

/* Send a whole record now, or queue it while auditd is down (takes m). */
void
maudit_send(struct mp_enc *m)
{
	if (queue.q == NULL)
		auditq_init(&queue, MAUDIT_QUEUE_MAX);
	if (auditq_send(&queue, &M->roles[ROLE_AUDITD].peer, m) == -1)
		log_warnx("auditd is down and %d records wait: one is dropped",
		    MAUDIT_QUEUE_MAX);
}

/* auditd is back: send what waited, oldest first. */
void
maudit_flush(void)
{
	if (queue.q != NULL)
		(void)auditq_flush(&queue, &M->roles[ROLE_AUDITD].peer);
}
