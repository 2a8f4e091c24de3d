/*
 * netproxy.h: skillbroker-netproxy, the egress proxy. Unprivileged and
 * chrooted, it accepts on listeners the master hands it, one per call
 * with a network grant (made by the worker in the call's own network
 * namespace), and lets each connection through only to what that
 * call's grant allows. Its files call one way only: main.c ->
 * netproxy_call.c -> netproxy_conn.c -> netproxy_http.c,
 * netproxy_addr.c, netproxy_audit.c.
 */
#ifndef SB_NETPROXY_H
#define SB_NETPROXY_H

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include "../lib/hostport.h"
#include "../proto/msg.h"
#include "../proto/peer.h"

#define HTTP_HEAD_MAX 8192      /* bytes of a request head */
#define NP_BUF_HIGH (64 * 1024) /* bytes queued toward one side */
#define NP_LIMIT_RECORDS 4      /* limit refusals of a call, each logged */
#define NP_ADDRS_MAX 8          /* resolved addresses tried, in order */

/* netproxy_http.c: what a skill asked for. */
struct http_req {
	char method[16];
	char host[HOSTPORT_HOST_MAX]; /* lower-case ASCII; [v6] bracketed */
	uint16_t port;
	int connect; /* CONNECT, else an absolute-form http:// request */
	/* a refusal: the HTTP status, its code and text */
	int status;
	const char *code;
	char msg[160];
};
/* The end of the head (just past its blank line) in buf, or 0. */
size_t http_head_end(const char *buf, size_t len);
/*
 * Parse a whole head; 0, with the head to send upstream appended to out
 * for a plain request; -1 with r->status, code and msg.
 */
int http_head_parse(
    const char *buf, size_t len, struct http_req *r, struct evbuffer *out);

/* netproxy_addr.c: where a connection may go. */
/* An address no call reaches unless its grant names it as a literal. */
int addr_internal(const struct sockaddr *sa);
/* The literal of sa: "10.0.0.1" or "[fe80::1]". */
void addr_literal(const struct sockaddr *sa, char *out, size_t len);
/* Does an entry of allow (host:port patterns) let host:port through? */
int addr_allowed(char *const *allow, size_t n, const char *host, unsigned port,
    int literal_only);

struct np_conn;
TAILQ_HEAD(np_conns, np_conn);

/* One call with a network grant. */
struct np_call {
	TAILQ_ENTRY(np_call) entry;
	char *grant_id, *skill, *session;
	uint64_t uid;
	char **allow;
	size_t nallow;
	struct evconnlistener *lev;
	struct event *pause; /* accept failed: a moment before the next */
	struct np_conns conns;
	size_t nconns;
	uint64_t bytes;   /* both directions, all its connections */
	uint64_t refused; /* at a limit, beyond NP_LIMIT_RECORDS logged */
	unsigned limit_logged;
};

struct netproxy {
	struct event_base *base;
	struct evdns_base *dns;
	struct conf_netproxy conf;
	struct peer master, auditd;
	TAILQ_HEAD(, np_call) calls;
	size_t nconns; /* all calls */
	uint64_t audit_ref, audit_acked;
	int audit_failing; /* auditd's last answer was a refusal */
};
extern struct netproxy *NP;

/* netproxy_call.c */
int call_on_open(struct peer *p, const struct mp_doc *d);
int call_on_close(struct peer *p, const struct mp_doc *d);
void call_close_all(void);

/* netproxy_conn.c: one connection, HEAD -> RESOLVE -> CONNECT -> RELAY */
void conn_start(struct np_call *call, int fd);
/* End conn (its record written): why NULL for a normal end. */
void conn_end(struct np_conn *c, const char *code, const char *why);
/* Refuse a connection at once, before reading it (a limit). */
void conn_refuse_now(struct np_call *call, int fd, int status, const char *code,
    const char *why);
/* The call is over, or over its byte budget: end every connection. */
void conn_end_call(struct np_call *call, const char *code, const char *why);

/* netproxy_audit.c */
void npaudit_send(const struct audit_net *n);
int npaudit_on_ack(struct peer *p, const struct mp_doc *d);
/* Records can be written: auditd is there and not refusing. */
int npaudit_ok(void);
void npaudit_flush(void);

#endif
