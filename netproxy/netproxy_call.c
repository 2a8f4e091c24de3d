/*
 * netproxy_call.c: the calls the proxy serves. NET_OPEN brings one
 * (the grant's allow list, from policyd through the master, and the
 * listener the worker made in the call's network namespace); NET_CLOSE
 * ends it with every connection it has. Each accepted connection counts
 * against the call's max_connections and everyone's
 * max_total_connections, and is refused while audit records cannot be
 * written.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "netproxy.h"

static struct np_call *
call_find(const char *grant_id)
{
	struct np_call *c;

	TAILQ_FOREACH (c, &NP->calls, entry)
		if (strcmp(c->grant_id, grant_id) == 0)
			return c;
	return NULL;
}

static void
on_accept(struct evconnlistener *l UNUSED, evutil_socket_t fd,
    struct sockaddr *sa UNUSED, int len UNUSED, void *arg)
{
	struct np_call *call = arg;

	if (!npaudit_ok())
		conn_refuse_now(call, (int)fd, 503, "audit_unavailable",
		    "the audit log cannot take records: no connection now");
	else if (call->bytes >= NP->conf.set.max_bytes)
		conn_refuse_now(call, (int)fd, 429, "limit",
		    "the call reached its network byte limit");
	else if (call->nconns >= NP->conf.set.max_connections)
		conn_refuse_now(call, (int)fd, 429, "limit",
		    "this call has as many connections open as it may");
	else if (NP->nconns >= NP->conf.set.max_total_connections)
		conn_refuse_now(call, (int)fd, 429, "limit",
		    "the proxy has as many connections open as it may");
	else
		conn_start(call, (int)fd);
}

static void
accept_resume(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct np_call *call = arg;

	(void)evconnlistener_enable(call->lev);
}

/* accept() failed (out of fds, say): pause 100 ms rather than spin. */
static void
on_accept_error(struct evconnlistener *l, void *arg)
{
	struct np_call *call = arg;
	struct timeval tv = {0, 100000};

	log_warn("accept for grant %s", call->grant_id);
	(void)evconnlistener_disable(l);
	if (evtimer_add(call->pause, &tv) == -1)
		(void)evconnlistener_enable(l);
}

static void
call_free(struct np_call *c)
{
	struct audit_net n = {c->grant_id, c->skill, c->session, c->uid, NULL,
	    0, NULL, NULL, 0, 0, 0, "limit",
	    "connections refused before their request was read (a limit, or "
	    "no audit log), beyond those recorded one by one",
	    c->refused};

	conn_end_call(c, NULL, "the call is over");
	if (c->refused > 0)
		npaudit_send(&n);
	if (c->lev != NULL)
		evconnlistener_free(c->lev);
	if (c->pause != NULL)
		event_free(c->pause);
	TAILQ_REMOVE(&NP->calls, c, entry);
	free(c->grant_id);
	free(c->skill);
	free(c->session);
	strarr_free(c->allow, c->nallow);
	free(c);
}

int
call_on_open(struct peer *p, const struct mp_doc *d)
{
	struct msg_net_open o;
	struct np_call *c;
	struct error e;
	int fd = chan_take_fd(&p->ch);

	if (fd == -1 || msg_net_open_dec(d, &o, &e) == -1) {
		if (fd != -1)
			close(fd);
		log_warnx("master: bad NET_OPEN");
		return -1;
	}
	if (call_find(o.grant_id) != NULL) { /* sent again after a restart */
		close(fd);
		msg_net_open_free(&o);
		return 0;
	}
	c = xcalloc(1, sizeof(*c));
	c->grant_id = o.grant_id;
	c->skill = o.skill;
	c->session = o.session;
	c->uid = o.uid;
	c->allow = o.allow;
	c->nallow = o.nallow;
	TAILQ_INIT(&c->conns);
	TAILQ_INSERT_TAIL(&NP->calls, c, entry);
	if (set_nonblock(fd) == -1 ||
	    (c->pause = evtimer_new(NP->base, accept_resume, c)) == NULL ||
	    (c->lev = evconnlistener_new(NP->base, on_accept, c,
	         LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd)) ==
	        NULL) {
		log_warn("listener of grant %s", c->grant_id);
		close(fd);
		call_free(c);
		return 0;
	}
	evconnlistener_set_error_cb(c->lev, on_accept_error);
	log_debug("serving grant %s (%zu allowed)", c->grant_id, c->nallow);
	return 0;
}

int
call_on_close(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_cancel m;
	struct np_call *c;
	struct error e;

	if (msg_net_close_dec(d, &m, &e) == -1)
		return -1;
	if ((c = call_find(m.grant_id)) != NULL)
		call_free(c);
	msg_cancel_free(&m);
	return 0;
}

void
call_close_all(void)
{
	while (!TAILQ_EMPTY(&NP->calls))
		call_free(TAILQ_FIRST(&NP->calls));
}
