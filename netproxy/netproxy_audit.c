/*
 * netproxy_audit.c: the proxy's records (network.connect, built by
 * proto/msg_audit.c) go straight to auditd, in order; auditd answers
 * each. While auditd is away or refusing records, no new connection is
 * let through (npaudit_ok), and the records of connections that end
 * meanwhile wait in a bounded queue for the restarted auditd.
 */
#include "../lib/log.h"
#include "../proto/auditq.h"
#include "netproxy.h"

#define NPAUDIT_QUEUE_MAX 1024

static struct auditq queue;

void
npaudit_send(const struct audit_net *n)
{
	struct mp_enc m;

	if (queue.q == NULL)
		auditq_init(&queue, NPAUDIT_QUEUE_MAX);
	enc_init(&m);
	msg_audit_net(&m, ++NP->audit_ref, n);
	if (auditq_send(&queue, &NP->auditd, &m) == -1)
		log_warnx("auditd is away and %d records wait: one is dropped",
		    NPAUDIT_QUEUE_MAX);
}

/* A new auditd channel: what waited goes first; refs start again. */
void
npaudit_flush(void)
{
	NP->audit_acked = NP->audit_ref - queue.n;
	if (queue.q != NULL)
		(void)auditq_flush(&queue, &NP->auditd);
	NP->audit_failing = 0;
}

int
npaudit_on_ack(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_audit_ack a;
	struct error e;

	if (msg_audit_ack_dec(d, &a, &e) == -1 || a.ref > NP->audit_ref ||
	    a.ref <= NP->audit_acked) {
		log_warnx("auditd: bad or unexpected AUDIT_ACK");
		msg_audit_ack_free(&a);
		return -1;
	}
	NP->audit_acked = a.ref;
	if (!a.ok && !NP->audit_failing)
		log_warnx("auditd refuses records (%s): no new connection "
		          "until it takes them again",
		    a.message);
	NP->audit_failing = !a.ok;
	msg_audit_ack_free(&a);
	return 0;
}

/* auditd there, taking records, and not too far behind. */
int
npaudit_ok(void)
{
	return NP->auditd.alive && !NP->audit_failing &&
	       NP->audit_ref - NP->audit_acked < NPAUDIT_QUEUE_MAX;
}
