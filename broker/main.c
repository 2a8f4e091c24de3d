/*
 * skillbroker-broker: the front end. It chroots to an empty directory
 * and drops to the privsep user before touching client input, then
 * serves the client socket. It holds no privilege and no secret: it can
 * ask for a decision and name a grant id, nothing more.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/listener.h>

#include "../lib/log.h"
#include "../lib/privdrop.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

#define FD_MASTER 3
#define FD_LISTEN 4
#define FD_POLICYD 5
#define FD_AUDITD 6

struct broker *B;

static void
accept_cb(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int len, void *arg)
{
	(void)l;
	(void)sa;
	(void)len;
	(void)arg;
	client_accept(fd);
}

/* Fail closed: with policyd or auditd gone, calls get a typed error. */
static void
on_dead(struct peer *p, const char *why)
{
	if (p == &B->master)
		fatalx("master channel: %s", why);
	log_warnx("%s channel: %s", p->name, why);
	if (p == &B->policyd) {
		requests_fail_state(R_AUTHZ, ERR_POLICY_UNAVAILABLE,
		    "policyd stopped before deciding");
		requests_fail_state(
		    R_SKILLS, ERR_POLICY_UNAVAILABLE, "policyd stopped");
		requests_fail_state(
		    R_RELOAD, ERR_POLICY_UNAVAILABLE, "policyd stopped");
	} else
		requests_fail_state(R_AUDIT_DECISION, ERR_AUDIT_UNAVAILABLE,
		    "auditd stopped before the decision was recorded");
}

static void
parse_args(int argc, char *argv[], uint64_t *uid, uint64_t *gid, char **root,
    int *fg, int *verbose)
{
	uint64_t v;
	int ch;

	while ((ch = getopt(argc, argv, "C:dF:g:r:u:v")) != -1) {
		switch (ch) {
		case 'C':
			if (parse_uint(optarg, 1, 65536, &v))
				exit(2);
			B->max_clients = (unsigned)v;
			break;
		case 'd':
			*fg = 1;
			break;
		case 'F':
			if (parse_uint(optarg, 1024, 16 << 20, &v))
				exit(2);
			B->max_frame = (size_t)v;
			break;
		case 'g':
			if (parse_uint(optarg, 1, 4294967294U, gid))
				exit(2);
			break;
		case 'r':
			*root = optarg;
			break;
		case 'u':
			if (parse_uint(optarg, 1, 4294967294U, uid))
				exit(2);
			break;
		case 'v':
			*verbose = 1;
			break;
		default:
			exit(2);
		}
	}
	if (*uid == 0 || *gid == 0 || *root == NULL || B->max_frame == 0)
		exit(2);
}

int
main(int argc, char *argv[])
{
	uint64_t uid = 0, gid = 0;
	int fg = 0, verbose = 0;
	char *root = NULL;
	struct error e;
	struct mp_enc m;

	B = xcalloc(1, sizeof(*B));
	B->max_clients = 64;
	parse_args(argc, argv, &uid, &gid, &root, &fg, &verbose);
	log_init("skillbroker-broker", fg, verbose);
	if (privdrop((uid_t)uid, (gid_t)gid, root, &e) == -1)
		fatalx("%s", e.msg);
	signal(SIGPIPE, SIG_IGN);
	if ((B->base = event_base_new()) == NULL)
		fatalx("event_base_new");
	LIST_INIT(&B->clients);
	LIST_INIT(&B->requests);
	peer_init(&B->master, B->base, FD_MASTER, "master", master_table,
	    on_dead, NULL);
	peer_init(&B->policyd, B->base, FD_POLICYD, "policyd", policyd_table,
	    on_dead, NULL);
	peer_init(&B->auditd, B->base, FD_AUDITD, "auditd", auditd_table,
	    on_dead, NULL);
	if (set_nonblock(FD_LISTEN) == -1 || set_cloexec(FD_LISTEN, 1) == -1)
		fatal("listen fd");
	/* Disabled until the master says every role is ready (MSG_SERVE). */
	B->listener = evconnlistener_new(B->base, accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_DISABLED, -1, FD_LISTEN);
	if (B->listener == NULL)
		fatalx("evconnlistener_new");
	enc_init(&m);
	msg_ready_enc(&m, "broker");
	peer_send(&B->master, &m, NULL, 0);
	enc_free(&m);
	event_base_dispatch(B->base);
	fatalx("event loop ended");
}
