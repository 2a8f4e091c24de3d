/*
 * netproxy_conn.c: one connection of a call, through one state machine:
 * HEAD (read the request head, within header_timeout_s) -> RESOLVE (the
 * name, by the proxy, never the skill) -> CONNECT (each allowed address
 * in turn, within connect_timeout_s) -> RELAY (both ways, each way at
 * most NP_BUF_HIGH queued, idle_s without a byte ends it) -> DONE. A
 * refusal answers with its HTTP status; every connection, allowed or
 * refused, is one network.connect record when it ends.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "netproxy.h"

enum conn_state { CS_HEAD, CS_RESOLVE, CS_CONNECT, CS_RELAY, CS_DONE };

struct np_conn {
	TAILQ_ENTRY(np_conn) entry;
	struct np_call *call; /* NULL once ended */
	enum conn_state st;
	struct bufferevent *down, *up; /* the skill's side, the destination */
	struct event *timer;
	struct evdns_getaddrinfo_request *dns;
	struct sockaddr_storage cand[NP_ADDRS_MAX]; /* to try, in order */
	socklen_t candlen[NP_ADDRS_MAX];
	int ncand, icand;
	struct evbuffer *head; /* a plain request's head, rewritten */
	struct http_req req;
	int parsed;
	char ip[64];
	uint64_t t0_ns, last_ms, bytes_up, bytes_down;
};

static void conn_to(struct np_conn *c, enum conn_state st);

/* A refusal's status line: the codes of docs/network.md. */
static const char *
status_text(int status)
{
	switch (status) {
	case 400:
		return "Bad Request";
	case 403:
		return "Forbidden";
	case 408:
		return "Request Timeout";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return "Internal Server Error";
	}
}

static int
code_status(const char *code, enum conn_state st)
{
	static const struct {
		const char *code;
		int status;
	} map[] = {{"not_allowed", 403}, {"internal_address", 403},
	    {"bad_host", 403}, {"bad_request", 400}, {"head_too_large", 431},
	    {"resolve_failed", 502}, {"connect_failed", 502}, {"limit", 429},
	    {"audit_unavailable", 503}, {NULL, 0}};
	size_t i;

	if (strcmp(code, "timeout") == 0)
		return st == CS_HEAD ? 408 : 504;
	for (i = 0; map[i].code != NULL; i++)
		if (strcmp(map[i].code, code) == 0)
			return map[i].status;
	return 500;
}

/* The refusal a client sees: status, X-Skillbroker-Error, one line. */
static void
refusal_text(
    struct evbuffer *out, int status, const char *code, const char *why)
{
	size_t blen = strlen("skillbroker proxy: \n") + strlen(why);

	(void)evbuffer_add_printf(out,
	    "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
	    "X-Skillbroker-Error: %s\r\nConnection: close\r\n"
	    "Content-Length: %zu\r\n\r\nskillbroker proxy: %s\n",
	    status, status_text(status), code, blen, why);
}

/*
 * The connection's record. destination.ip is an ECS ip: an IPv6 address
 * without the brackets it is written with elsewhere.
 */
static void
conn_record(const struct np_conn *c, const struct np_call *call,
    const char *code, const char *why)
{
	struct audit_net n = {call->grant_id, call->skill, call->session,
	    call->uid, c->parsed ? c->req.host : NULL,
	    c->parsed ? c->req.port : 0, c->ip[0] ? c->ip : NULL,
	    c->parsed ? c->req.method : NULL, c->bytes_up, c->bytes_down,
	    now_mono_ns() - c->t0_ns, code, why, 0};
	char ip[sizeof(c->ip)];
	size_t len = strlen(c->ip);

	if (len > 2 && c->ip[0] == '[' && c->ip[len - 1] == ']') {
		snprintf(ip, sizeof(ip), "%.*s", (int)(len - 2), c->ip + 1);
		n.ip = ip;
	}
	npaudit_send(&n);
}

static void
conn_free(struct np_conn *c)
{
	if (c->dns != NULL) { /* its callback frees c */
		evdns_getaddrinfo_cancel(c->dns);
		return;
	}
	if (c->timer != NULL)
		event_free(c->timer);
	if (c->down != NULL)
		bufferevent_free(c->down);
	if (c->up != NULL)
		bufferevent_free(c->up);
	if (c->head != NULL)
		evbuffer_free(c->head);
	free(c);
}

/* After a refusal or the other side's end: free once down has it all. */
static void
closing_write(struct bufferevent *bev UNUSED, void *arg)
{
	conn_free(arg);
}

static void
closing_event(struct bufferevent *bev UNUSED, short what UNUSED, void *arg)
{
	conn_free(arg);
}

static void
closing_timer(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	conn_free(arg);
}

/*
 * Keep only down, with what it still has to take (a refusal, or the
 * rest of what the destination sent), for at most 5 s; then free.
 */
static void
conn_linger(struct np_conn *c)
{
	struct timeval tv = {5, 0};

	if (c->up != NULL) {
		bufferevent_free(c->up);
		c->up = NULL;
	}
	if (c->down == NULL ||
	    evbuffer_get_length(bufferevent_get_output(c->down)) == 0) {
		conn_free(c);
		return;
	}
	bufferevent_disable(c->down, EV_READ);
	bufferevent_setwatermark(c->down, EV_WRITE, 0, 0);
	bufferevent_setcb(c->down, NULL, closing_write, closing_event, c);
	evtimer_assign(
	    c->timer, bufferevent_get_base(c->down), closing_timer, c);
	if (evtimer_add(c->timer, &tv) == -1)
		conn_free(c);
}

void
conn_end(struct np_conn *c, const char *code, const char *why)
{
	struct np_call *call = c->call;

	if (call == NULL) /* ended already */
		return;
	conn_record(c, call, code, why);
	TAILQ_REMOVE(&call->conns, c, entry);
	call->nconns--;
	NP->nconns--;
	c->call = NULL;
	if (code != NULL && c->st < CS_RELAY && c->down != NULL)
		refusal_text(bufferevent_get_output(c->down),
		    code_status(code, c->st), code, why);
	c->st = CS_DONE;
	evtimer_del(c->timer);
	conn_linger(c);
}

void
conn_end_call(struct np_call *call, const char *code, const char *why)
{
	struct np_conn *c;

	while ((c = TAILQ_FIRST(&call->conns)) != NULL)
		conn_end(c, code, why);
}

void
conn_refuse_now(
    struct np_call *call, int fd, int status, const char *code, const char *why)
{
	struct evbuffer *b = evbuffer_new();
	struct audit_net n = {call->grant_id, call->skill, call->session,
	    call->uid, NULL, 0, NULL, NULL, 0, 0, 0, code, why, 0};

	if (b != NULL) { /* a short answer: it fits the socket's buffer */
		refusal_text(b, status, code, why);
		(void)send(fd, evbuffer_pullup(b, -1), evbuffer_get_length(b),
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		evbuffer_free(b);
	}
	close(fd);
	if (call->limit_logged++ >= NP_LIMIT_RECORDS) {
		call->refused++; /* summed up when the call ends */
		return;
	}
	npaudit_send(&n);
}

static void
timer_fired(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct np_conn *c = arg;

	conn_end(c, "timeout",
	    c->st == CS_HEAD ? "the request head did not come in time"
	                     : "the destination did not answer in time");
}

static void
arm(struct np_conn *c, uint64_t s)
{
	struct timeval tv = {(time_t)s, 0};

	if (evtimer_add(c->timer, &tv) == -1)
		conn_end(c, "internal", "timer");
}

/*
 * RELAY: what one side sent goes to the other, bounded by NP_BUF_HIGH;
 * -1 when that ended the connection (c may be gone).
 */
static int
relay_pump(struct bufferevent *from, struct np_conn *c)
{
	struct np_call *call = c->call;
	struct bufferevent *to = from == c->down ? c->up : c->down;
	struct evbuffer *in = bufferevent_get_input(from);
	size_t n = evbuffer_get_length(in);

	if (call == NULL || c->st != CS_RELAY)
		return -1;
	*(from == c->down ? &c->bytes_up : &c->bytes_down) += n;
	call->bytes += n;
	c->last_ms = now_mono_ms();
	if (bufferevent_write_buffer(to, in) == -1) {
		conn_end(c, "internal", "out of memory");
		return -1;
	}
	if (call->bytes > NP->conf.set.max_bytes) {
		conn_end_call(
		    call, "limit", "the call reached its network byte limit");
		return -1;
	}
	if (evbuffer_get_length(bufferevent_get_output(to)) >= NP_BUF_HIGH)
		bufferevent_disable(from, EV_READ);
	return 0;
}

static void
relay_read(struct bufferevent *from, void *arg)
{
	(void)relay_pump(from, arg);
}

/* to drained below half: read again from the other side. */
static void
relay_write(struct bufferevent *to, void *arg)
{
	struct np_conn *c = arg;

	if (c->st == CS_RELAY)
		bufferevent_enable(to == c->down ? c->up : c->down, EV_READ);
}

/* Either side ended: the other gets what is queued, then both close. */
static void
relay_event(struct bufferevent *bev, short what, void *arg)
{
	struct np_conn *c = arg;
	struct timeval idle = timeval_ms(NP->conf.set.idle_s * 1000);

	if ((what & BEV_EVENT_TIMEOUT) &&
	    now_mono_ms() - c->last_ms < NP->conf.set.idle_s * 1000) {
		(void)bufferevent_set_timeouts(bev, &idle, NULL);
		bufferevent_enable(bev, EV_READ); /* the other side is busy */
		return;
	}
	if (what & BEV_EVENT_TIMEOUT) {
		conn_end(c, NULL, "idle");
		return;
	}
	/* the destination's last bytes go first, unless that ended it */
	if (bev == c->up && evbuffer_get_length(bufferevent_get_input(bev)) &&
	    relay_pump(bev, c) == -1)
		return;
	conn_end(c, NULL, NULL);
}

/* CONNECT: the destination answered, or did not. */
static void
up_event(struct bufferevent *bev, short what, void *arg)
{
	struct np_conn *c = arg;

	if (c->st != CS_CONNECT) {
		relay_event(bev, what, arg);
		return;
	}
	if (what & BEV_EVENT_CONNECTED) {
		conn_to(c, CS_RELAY);
		return;
	}
	bufferevent_free(c->up);
	c->up = NULL;
	conn_to(c, CS_CONNECT); /* the next address, if any */
}

/* May the call reach this resolved address? */
static int
addr_ok(const struct np_conn *c, const struct sockaddr *sa)
{
	char lit[64];

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return 0;
	if (!addr_internal(sa))
		return 1;
	addr_literal(sa, lit, sizeof(lit));
	return addr_allowed(
	    c->call->allow, c->call->nallow, lit, c->req.port, 1);
}

/* The resolved addresses the call may reach, IPv4 first, to try. */
static void
candidates(struct np_conn *c, const struct evutil_addrinfo *res)
{
	const struct evutil_addrinfo *a;
	int v4;

	for (v4 = 1; v4 >= 0; v4--)
		for (a = res; a != NULL && c->ncand < NP_ADDRS_MAX;
		     a = a->ai_next)
			if (a->ai_addr != NULL &&
			    (a->ai_family == AF_INET) == v4 &&
			    a->ai_addrlen <= sizeof(c->cand[0]) &&
			    addr_ok(c, a->ai_addr)) {
				memcpy(&c->cand[c->ncand], a->ai_addr,
				    a->ai_addrlen);
				c->candlen[c->ncand++] = a->ai_addrlen;
			}
}

static void
resolved(int result, struct evutil_addrinfo *res, void *arg)
{
	struct np_conn *c = arg;
	char lit[64], why[HOSTPORT_HOST_MAX + 128];

	c->dns = NULL;
	if (c->call == NULL) { /* ended, or cancelled while we waited */
		if (res != NULL)
			evutil_freeaddrinfo(res);
		conn_free(c);
		return;
	}
	if (result != 0 || res == NULL) {
		snprintf(why, sizeof(why), "cannot resolve %s: %s", c->req.host,
		    result != 0 ? evutil_gai_strerror(result) : "no address");
		conn_end(c, "resolve_failed", why);
		return;
	}
	candidates(c, res);
	if (c->ncand == 0) {
		addr_literal(res->ai_addr, lit, sizeof(lit));
		evutil_freeaddrinfo(res);
		snprintf(why, sizeof(why),
		    "%s resolves to %s, an internal address the grant does "
		    "not name",
		    c->req.host, lit);
		snprintf(c->ip, sizeof(c->ip), "%s", lit);
		conn_end(c, "internal_address", why);
		return;
	}
	evutil_freeaddrinfo(res);
	conn_to(c, CS_CONNECT);
}

/* HEAD: a whole head within HTTP_HEAD_MAX, then the grant decides. */
static void
head_read(struct bufferevent *bev, void *arg)
{
	struct np_conn *c = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t len = evbuffer_get_length(in), end;
	char *buf, why[HOSTPORT_HOST_MAX + 96];

	if (c->st != CS_HEAD)
		return;
	if (len > HTTP_HEAD_MAX)
		len = HTTP_HEAD_MAX;
	buf = (char *)evbuffer_pullup(in, (ssize_t)len);
	if (buf == NULL || (end = http_head_end(buf, len)) == 0) {
		if (len == HTTP_HEAD_MAX)
			conn_end(c, "head_too_large",
			    "the request head is over 8 KiB");
		return;
	}
	if (http_head_parse(buf, end, &c->req, c->head) == -1) {
		conn_end(c, c->req.code, c->req.msg);
		return;
	}
	c->parsed = 1;
	(void)evbuffer_drain(in, end);
	bufferevent_disable(bev, EV_READ); /* the rest waits for the relay */
	if (!addr_allowed(
	        c->call->allow, c->call->nallow, c->req.host, c->req.port, 0)) {
		snprintf(why, sizeof(why),
		    "%s:%u is not in this call's network.allow", c->req.host,
		    c->req.port);
		conn_end(c, "not_allowed", why);
		return;
	}
	conn_to(c, CS_RESOLVE);
}

static void
down_event(struct bufferevent *bev, short what, void *arg)
{
	struct np_conn *c = arg;

	if (c->st == CS_RELAY) {
		relay_event(bev, what, arg);
		return;
	}
	/* the skill went away before its request was through */
	(void)what;
	bufferevent_free(c->down);
	c->down = NULL;
	conn_end(c, "cancelled", "the client closed the connection");
}

/* Resolve a name; an IP literal (listed, or refused before) is its own. */
static void
resolve(struct np_conn *c)
{
	struct evutil_addrinfo hints;
	struct evdns_getaddrinfo_request *r;
	char lit[HOSTPORT_HOST_MAX + 8];
	int len = (int)sizeof(c->cand[0]);

	if (hostport_is_literal(c->req.host)) {
		snprintf(lit, sizeof(lit), "%s:%u", c->req.host, c->req.port);
		if (evutil_parse_sockaddr_port(
		        lit, (struct sockaddr *)&c->cand[0], &len) == -1) {
			conn_end(c, "bad_host", "a malformed IP literal");
			return;
		}
		c->candlen[0] = (socklen_t)len;
		c->ncand = 1;
		conn_to(c, CS_CONNECT);
		return;
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	/* NULL: answered at once (a hosts file name), c may be gone */
	r = evdns_getaddrinfo(NP->dns, c->req.host, NULL, &hints, resolved, c);
	if (r != NULL)
		c->dns = r;
}

/* The one transition function: each state's entry action. */
static void
conn_to(struct np_conn *c, enum conn_state st)
{
	struct timeval idle = timeval_ms(NP->conf.set.idle_s * 1000);
	struct sockaddr_storage ss;
	char why[HOSTPORT_HOST_MAX + 64];
	socklen_t len;

	c->st = st;
	switch (st) {
	case CS_HEAD:
		bufferevent_setcb(c->down, head_read, NULL, down_event, c);
		bufferevent_enable(c->down, EV_READ);
		arm(c, NP->conf.set.header_timeout_s);
		break;
	case CS_RESOLVE:
		arm(c, NP->conf.set.connect_timeout_s);
		resolve(c);
		break;
	case CS_CONNECT:
		if (c->icand == c->ncand) {
			snprintf(why, sizeof(why), "cannot connect to %s:%u",
			    c->req.host, c->req.port);
			conn_end(c, "connect_failed", why);
			return;
		}
		memcpy(&ss, &c->cand[c->icand], sizeof(ss));
		len = c->candlen[c->icand++];
		/* a resolved address has no port; ours is the request's */
		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port =
			    htons(c->req.port);
		else
			((struct sockaddr_in6 *)&ss)->sin6_port =
			    htons(c->req.port);
		addr_literal((struct sockaddr *)&ss, c->ip, sizeof(c->ip));
		if ((c->up = bufferevent_socket_new(
		         NP->base, -1, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
			conn_end(c, "internal", "out of memory");
			return;
		}
		bufferevent_setcb(c->up, relay_read, relay_write, up_event, c);
		if (bufferevent_socket_connect(
		        c->up, (struct sockaddr *)&ss, (int)len) == -1)
			up_event(c->up, BEV_EVENT_ERROR, c);
		break;
	case CS_RELAY:
		evtimer_del(c->timer);
		c->last_ms = now_mono_ms();
		if (c->req.connect)
			(void)evbuffer_add_printf(
			    bufferevent_get_output(c->down),
			    "HTTP/1.1 200 Connection established\r\n\r\n");
		else {
			c->bytes_up += evbuffer_get_length(c->head);
			c->call->bytes += evbuffer_get_length(c->head);
			if (bufferevent_write_buffer(c->up, c->head) == -1) {
				conn_end(c, "internal", "out of memory");
				return;
			}
		}
		bufferevent_setcb(
		    c->down, relay_read, relay_write, down_event, c);
		bufferevent_setwatermark(c->down, EV_WRITE, NP_BUF_HIGH / 2, 0);
		bufferevent_setwatermark(c->up, EV_WRITE, NP_BUF_HIGH / 2, 0);
		(void)bufferevent_set_timeouts(c->down, &idle, NULL);
		(void)bufferevent_set_timeouts(c->up, &idle, NULL);
		bufferevent_enable(c->up, EV_READ);
		bufferevent_enable(c->down, EV_READ);
		if (evbuffer_get_length(bufferevent_get_input(c->down)) > 0)
			(void)relay_pump(c->down, c); /* sent with the head */
		break;
	case CS_DONE:
		break;
	}
}

void
conn_start(struct np_call *call, int fd)
{
	struct np_conn *c = xcalloc(1, sizeof(*c));

	c->t0_ns = now_mono_ns();
	c->call = call;
	if ((c->down = bufferevent_socket_new(
	         NP->base, fd, BEV_OPT_CLOSE_ON_FREE)) == NULL ||
	    (c->timer = evtimer_new(NP->base, timer_fired, c)) == NULL ||
	    (c->head = evbuffer_new()) == NULL) {
		if (c->down == NULL)
			close(fd);
		c->call = NULL;
		conn_free(c);
		log_warnx("out of memory for a connection");
		return;
	}
	TAILQ_INSERT_TAIL(&call->conns, c, entry);
	call->nconns++;
	NP->nconns++;
	conn_to(c, CS_HEAD);
}
