/*
 * skillbroker-broker: the front end. It reads its settings from the
 * master, chroots to an empty directory and drops to its own user
 * before touching client input, then serves the client socket. It holds
 * no privilege and no secret: it can ask for a decision and name a
 * grant id, nothing more.
 */
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/listener.h>

#include "../lib/log.h"
#include "../lib/privdrop.h"
#include "../lib/usage.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/fds.h"
#include "broker.h"

struct broker *B;

static int on_peer_channel(struct peer *p, const struct mp_doc *d);
static int on_serve(struct peer *p, const struct mp_doc *d);

/* What each peer may send the broker. */
static const struct peer_handler policyd_table[] = {
    {MSG_AUTHZ_ANS, 0, call_on_authz_ans},
    {MSG_SKILLS_ANS, 0, call_on_skills_ans},
    {MSG_RELOAD_ANS, 0, call_on_reload_ans},
    {MSG_SKILL_INFO_ANS, 0, call_on_info_ans},
    {MSG_ADMINS, 0, call_on_admins},
    {0, 0, NULL},
};
static const struct peer_handler master_table[] = {
    {MSG_RUN_STARTED, 0, call_on_run_started},
    {MSG_RUN_EXITED, 0, call_on_run_exited},
    {MSG_PEER_CHANNEL, 0, on_peer_channel},
    {MSG_SERVE, PH_ONCE, on_serve},
    {0, 0, NULL},
};
static const struct peer_handler auditd_table[] = {
    {MSG_AUDIT_ACK, 0, call_on_audit_ack},
    {0, 0, NULL},
};

static void
accept_cb(struct evconnlistener *l UNUSED, evutil_socket_t fd,
    struct sockaddr *sa UNUSED, int len UNUSED, void *arg UNUSED)
{
	conn_accept(fd);
}

/* Every client's replies are out, or the time is up: exit. */
static void
stop_check(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct conn *cn;
	int *ticks = arg, pending = 0;

	LIST_FOREACH (cn, &B->conns, entry)
		pending |=
		    evbuffer_get_length(bufferevent_get_output(cn->bev)) > 0;
	if (!pending || ++*ticks >= STOP_TICKS)
		exit(B->stop_status);
}

/*
 * The daemon stops (SIGTERM, or the master is gone): no new client, no
 * new call; every call in flight is answered with a typed error before
 * the connections close (within STOP_TICKS * 50 ms).
 */
static void
broker_stop(const char *why, int status)
{
	static struct timeval tv = {0, 50000};
	static int ticks;
	struct event *ev;
	struct conn *cn;

	if (B->stopping)
		return;
	B->stopping = 1;
	B->stop_status = status;
	log_info("stopping: %s", why);
	evconnlistener_disable(B->listener);
	LIST_FOREACH (cn, &B->conns, entry)
		bufferevent_disable(cn->bev, EV_READ);
	calls_peer_lost(NULL);
	if ((ev = event_new(B->base, -1, EV_PERSIST, stop_check, &ticks)) ==
	        NULL ||
	    event_add(ev, &tv) == -1)
		exit(status);
}

/*
 * Idle since the last call ended: the channels' buffers, and the heap
 * pages a burst of calls left free, go back to the system.
 */
static void
idle_trim(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg UNUSED)
{
	if (B->ncalls != 0)
		return;
	chan_shrink(&B->master.ch);
	chan_shrink(&B->policyd.ch);
	chan_shrink(&B->auditd.ch);
	(void)malloc_trim(0);
}

/* Fail closed: with policyd or auditd gone, calls get a typed error. */
static void
on_dead(struct peer *p, const char *why)
{
	if (p == &B->master) {
		if (!B->stopping)
			log_warnx("master channel: %s", why);
		broker_stop("the master is gone", 1);
		return;
	}
	log_warnx("%s channel: %s", p->name, why);
	calls_peer_lost(p);
}

static void
on_sigterm(evutil_socket_t sig UNUSED, short ev UNUSED, void *arg UNUSED)
{
	broker_stop("SIGTERM", 0);
}

/* The master restarted policyd or auditd: talk to it on the new fd. */
static int
on_peer_channel(struct peer *p, const struct mp_doc *d)
{
	static const char *const roles[] = {"auditd", "policyd", NULL};
	struct peer *target;
	int pol, fd;

	if ((fd = peer_take_channel(p, d, roles, &pol)) == -1)
		return -1;
	target = pol ? &B->policyd : &B->auditd;
	peer_kill(target, "replaced by a restarted process");
	peer_init(target, B->base, fd, pol ? "policyd" : "auditd",
	    pol ? policyd_table : auditd_table, on_dead, NULL);
	if (!pol)
		audit_restarted();
	log_info("%s is back", target->name);
	return 0;
}

/* Start-up barrier: every role is ready, so clients may come in. */
static int
on_serve(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct error e;

	if (msg_empty_dec(d, &e) == -1)
		return -1;
	if (evconnlistener_enable(B->listener) == -1)
		fatalx("cannot enable the listener");
	log_debug("serving clients");
	return 0;
}

/* The settings, from the master, before anything else. */
static void
read_conf(struct conf_broker *c)
{
	struct mp_doc d;
	struct error e;

	if (msg_read(FD_MASTER, MSG_CONF_BROKER, &d, &e) == -1 ||
	    conf_broker_dec(&d, c, &e) == -1)
		fatalx("settings: %s", e.msg);
	mp_doc_free(&d);
}

int
main(int argc, char *argv[])
{
	struct conf_broker conf;
	struct privdrop pd;
	struct error e;
	int ch, fg = 0, verbose = 0;

	usage_helper(argc, argv, "skillbroker-broker", "[-dv]", FD_MASTER);
	while ((ch = getopt(argc, argv, "dv")) != -1)
		if (ch == 'd')
			fg = 1;
		else if (ch == 'v')
			verbose = 1;
		else {
			fputs("usage: skillbroker-broker [-dv]\n", stderr);
			exit(2);
		}
	log_init("skillbroker-broker", fg, verbose);
	read_conf(&conf);
	memset(&pd, 0, sizeof(pd));
	pd.uid = (uid_t)conf.uid;
	pd.gid = (gid_t)conf.gid;
	pd.chroot_dir = conf.root;
	if (privdrop(&pd, &e) == -1)
		fatalx("%s", e.msg);
	signal(SIGPIPE, SIG_IGN);
	B = xcalloc(1, sizeof(*B));
	B->max_frame = (size_t)conf.max_frame;
	B->max_timeout_ms = conf.max_timeout_ms;
	B->call_output = conf.call_output;
	B->max_clients = (unsigned)conf.max_clients;
	B->max_sessions = (size_t)conf.max_sessions;
	B->workers = conf.workers;
	B->per_uid = conf.per_uid;
	B->clients = conf.clients;
	B->session_idle_ms = conf.session_idle_s * 1000;
	B->on_frame = client_request;
	B->on_close = call_conn_gone;
	conf_broker_free(&conf);
	if ((B->base = event_base_new()) == NULL)
		fatalx("event_base_new");
	LIST_INIT(&B->conns);
	LIST_INIT(&B->calls);
	TAILQ_INIT(&B->worker_line);
	stats_init();
	session_init();
	peer_defer_writes(); /* a loop pass's messages go out together */
	peer_init(&B->master, B->base, FD_MASTER, "master", master_table,
	    on_dead, NULL);
	peer_init(&B->policyd, B->base, FD_BROKER_POLICYD, "policyd",
	    policyd_table, on_dead, NULL);
	peer_init(&B->auditd, B->base, FD_BROKER_AUDITD, "auditd", auditd_table,
	    on_dead, NULL);
	if (set_nonblock(FD_BROKER_LISTEN) == -1 ||
	    set_cloexec(FD_BROKER_LISTEN, 1) == -1)
		fatal("listen fd");
	/* Disabled until the master says every role is ready (SERVE). */
	B->listener = evconnlistener_new(B->base, accept_cb, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_DISABLED, -1, FD_BROKER_LISTEN);
	if (B->listener == NULL)
		fatalx("evconnlistener_new");
	if (evsignal_add(
	        evsignal_new(B->base, SIGTERM, on_sigterm, NULL), NULL) == -1)
		fatalx("SIGTERM event");
	if ((B->trim_ev = evtimer_new(B->base, idle_trim, NULL)) == NULL)
		fatalx("idle timer");
	PEER_SEND(&B->master, msg_ready_enc, "broker");
	event_base_dispatch(B->base);
	fatalx("event loop ended");
}
