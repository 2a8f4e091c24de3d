/*
 * master_audit.c: the master's records (daemon.started, daemon.stopping,
 * child.died, policy loads, worker starts and ends), built with the one
 * record builder in proto. A record made while auditd is down waits in
 * a small queue and goes to the restarted auditd first, so a crash of
 * auditd is itself in the log.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "master.h"

#define MAUDIT_QUEUE_MAX 64

static struct mp_enc queue[MAUDIT_QUEUE_MAX];
static size_t nqueue;

/* Start a record with the next ref; its fields follow, then maudit_send. */
uint64_t
maudit_begin(
    struct mp_enc *m, const char *action, const char *type, const char *outcome)
{
	enc_init(m);
	msg_audit_begin(m, ++M->audit_ref, action, type, outcome);
	return M->audit_ref;
}

/* Send now, or queue while auditd is down (takes the record). */
void
maudit_send(struct mp_enc *m)
{
	msg_audit_end(m);
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

	if (!M->roles[ROLE_AUDITD].peer.alive)
		return;
	for (i = 0; i < nqueue; i++) {
		peer_send(&M->roles[ROLE_AUDITD].peer, &queue[i], NULL, 0);
		enc_free(&queue[i]);
	}
	nqueue = 0;
}

/* daemon.started or daemon.stopping. */
void
maudit_daemon(const char *action, const char *reason)
{
	struct mp_enc m;

	maudit_begin(&m, action,
	    strcmp(action, "daemon.started") == 0 ? "start" : "end", "success");
	enc_kstr(&m, "process.name", "skillbrokerd");
	enc_kint(&m, "process.pid", getpid());
	if (reason != NULL)
		enc_kstr(&m, "event.reason", reason);
	else
		enc_kstr(&m, "daemon.config", M->cfg.path);
	maudit_send(&m);
}

/* A role's process ended while the daemon was serving. */
void
maudit_child_died(const char *role, pid_t pid, int status)
{
	struct mp_enc m;
	char what[64];

	if (WIFSIGNALED(status))
		snprintf(what, sizeof(what), "killed by signal %d",
		    WTERMSIG(status));
	else
		snprintf(what, sizeof(what), "exited with status %d",
		    WEXITSTATUS(status));
	log_warnx("%s (pid %d) %s", role, (int)pid, what);
	maudit_begin(&m, "child.died", "end", "failure");
	enc_kstr(&m, "process.name", role);
	enc_kint(&m, "process.pid", pid);
	enc_kint(&m, "process.exit_code",
	    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	enc_kint(
	    &m, "process.signal", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	enc_kstr(&m, "event.reason", what);
	maudit_send(&m);
}
