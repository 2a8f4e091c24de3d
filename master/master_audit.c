/*
 * master_audit.c: the master's daemon records (daemon.started,
 * daemon.stopping, child.died, the policy loads). A record made while
 * auditd is down waits in a small queue and goes to the restarted auditd
 * first, so a crash of auditd is itself in the log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/xmalloc.h"
#include "master.h"

#define MAUDIT_QUEUE_MAX 64

/* Queued records own their bodies (only the buffer is used after). */
static struct maudit queue[MAUDIT_QUEUE_MAX];
static size_t nqueue;

/* Start a record: action, type, outcome. */
void
maudit_begin(
    struct maudit *a, const char *action, const char *type, const char *outcome)
{
	enc_init(&a->body);
	a->n = 0;
	maudit_str(a, "event.action", action);
	maudit_str(a, "event.type", type);
	maudit_str(a, "event.outcome", outcome);
}

/* One string field. */
void
maudit_str(struct maudit *a, const char *k, const char *v)
{
	enc_kstr(&a->body, k, v ? v : "");
	a->n++;
}

/* One signed field. */
void
maudit_int(struct maudit *a, const char *k, int64_t v)
{
	enc_kint(&a->body, k, v);
	a->n++;
}

/* One unsigned field. */
void
maudit_uint(struct maudit *a, const char *k, uint64_t v)
{
	enc_kuint(&a->body, k, v);
	a->n++;
}

/* Frame the fields as one AUDIT message with the next ref, and send. */
static void
maudit_send_now(struct maudit *a)
{
	struct mp_enc m;

	enc_init(&m);
	msg_begin(&m, MSG_AUDIT, 2);
	enc_kuint(&m, "ref", ++M->audit_ref);
	enc_str(&m, "event");
	enc_map(&m, a->n);
	if (msgpack_sbuffer_write(&m.sb, a->body.sb.data, a->body.sb.size))
		fatalx("audit encode");
	peer_send(&M->roles[ROLE_AUDITD].peer, &m, NULL, 0);
	enc_free(&m);
	enc_free(&a->body);
}

/* Send now, or queue while auditd is down (takes the record). */
void
maudit_send(struct maudit *a)
{
	if (M->roles[ROLE_AUDITD].peer.alive && nqueue == 0)
		maudit_send_now(a);
	else if (nqueue == MAUDIT_QUEUE_MAX) {
		log_warnx("auditd is down and %d daemon records wait: one is "
		          "dropped",
		    MAUDIT_QUEUE_MAX);
		enc_free(&a->body);
	} else
		queue[nqueue++] = *a;
}

/* auditd is back: send what waited, oldest first. */
void
maudit_flush(void)
{
	size_t i;

	if (!M->roles[ROLE_AUDITD].peer.alive)
		return;
	for (i = 0; i < nqueue; i++)
		maudit_send_now(&queue[i]);
	nqueue = 0;
}

/* Every role said READY: the daemon serves. */
void
maudit_daemon_started(void)
{
	struct maudit a;

	maudit_begin(&a, "daemon.started", "start", "success");
	maudit_str(&a, "process.name", "skillbrokerd");
	maudit_int(&a, "process.pid", getpid());
	maudit_str(&a, "daemon.config", M->cfg.path);
	maudit_send(&a);
}

/* A stop signal, before any child is stopped. */
void
maudit_daemon_stopping(int sig)
{
	struct maudit a;
	char why[32];

	snprintf(why, sizeof(why), "signal %d", sig);
	maudit_begin(&a, "daemon.stopping", "end", "success");
	maudit_str(&a, "process.name", "skillbrokerd");
	maudit_int(&a, "process.pid", getpid());
	maudit_str(&a, "event.reason", why);
	maudit_send(&a);
}

/* A privsep child ended while the daemon was serving. */
void
maudit_child_died(
    const char *role, pid_t pid, int exit_code, int sig, const char *what)
{
	struct maudit a;

	maudit_begin(&a, "child.died", "end", "failure");
	maudit_str(&a, "process.name", role);
	maudit_int(&a, "process.pid", pid);
	maudit_int(&a, "process.exit_code", exit_code);
	maudit_int(&a, "process.signal", sig);
	maudit_str(&a, "event.reason", what);
	maudit_send(&a);
}
