/*
 * bench_client.c: the daemon's side of the bench, through the public
 * client library only: one invoke waited for, K clients calling in a
 * loop (each its own connection and session), and authorize requests
 * pipelined W deep on each of N connections.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <skillbroker.h>

#include "bench.h"

struct bench_client_slot;

/* One connection of a loop: what it sends and when it sent it. */
struct bench_client_conn {
	struct sb_client *c;
	struct sb_req *req;
	char session[64];
	uint64_t end, *ok, *failed;
	struct bench_samples *lat;
	int authorize; /* authorize requests, several in flight */
	struct bench_client_slot *slots; /* one per request in flight */
};

/* One request in flight: the callback's argument. */
struct bench_client_slot {
	struct bench_client_conn *conn;
	uint64_t t0;
};

/* Connect and say hello, or end the bench saying why not. */
struct sb_client *
bench_client_connect(const char *sock)
{
	struct sb_client *c;
	enum sb_err err;
	char msg[256];

	if ((c = sb_connect(sock, NULL, NULL, &err, msg, sizeof(msg))) == NULL)
		bench_stats_die(
		    "connect %s: %s: %s", sock, sb_err_name(err), msg);
	return c;
}

/* The request a bench call sends: invoke or authorize of the skill. */
static struct sb_req *
bench_client_req(
    const struct bench_opts *o, const char *type, const char *session)
{
	struct sb_req *q;
	size_t i;

	if ((q = sb_req_new(type)) == NULL || sb_req_skill(q, o->skill) == -1 ||
	    sb_req_command(q, o->command) == -1 ||
	    sb_req_phase(q, "execution") == -1 ||
	    (session != NULL && sb_req_session(q, session) == -1))
		bench_stats_die("%s request: %s", type, strerror(errno));
	for (i = 0; i < o->nargs; i++)
		if (sb_req_arg(q, o->args[i]) == -1)
			bench_stats_die(
			    "argument %s: %s", o->args[i], strerror(errno));
	return q;
}

/* Whether a reply is what a bench call must get: ok, and exit 0 if run. */
static int
bench_client_good(const struct sb_reply *r, int invoke)
{
	uint64_t code;

	if (!sb_reply_ok(r)) {
		static int said;

		if (said++ < 3)
			fprintf(stderr, "sb_bench: %s: %s: %s\n",
			    invoke ? "invoke" : "authorize",
			    sb_reply_error_type(r), sb_reply_error_message(r));
		return 0;
	}
	return !invoke ||
	       (sb_reply_uint(r, "effects.process.exit_code", &code) == 0 &&
	           code == 0);
}

/* One invoke waited for on c: its round trip in ns; a failure ends all. */
uint64_t
bench_client_invoke(
    struct sb_client *c, const struct bench_opts *o, const char *session)
{
	struct sb_req *q = bench_client_req(o, "invoke", session);
	struct sb_reply *r = NULL;
	uint64_t t0, t;

	t0 = bench_stats_now_ns();
	if (sb_call(c, q, &r) == -1)
		bench_stats_die("invoke: %s", sb_errmsg(c));
	t = bench_stats_now_ns() - t0;
	if (!bench_client_good(r, 1))
		bench_stats_die("invoke of %s %s failed", o->skill, o->command);
	sb_reply_free(r);
	sb_req_free(q);
	return t;
}

static void bench_client_done(struct sb_client *, struct sb_reply *, void *);

/* Send one of the connection's requests again, timed from now. */
static void
bench_client_send(struct bench_client_slot *s)
{
	s->t0 = bench_stats_now_ns();
	if (sb_send(s->conn->c, s->conn->req, bench_client_done, s) == -1)
		bench_stats_die("send: %s", sb_errmsg(s->conn->c));
}

/* A reply: count it, and send the same request again while time remains. */
static void
bench_client_done(struct sb_client *c, struct sb_reply *r, void *arg)
{
	struct bench_client_slot *s = arg;
	struct bench_client_conn *k = s->conn;
	uint64_t now = bench_stats_now_ns();

	(void)c;
	if (bench_client_good(r, !k->authorize)) {
		(*k->ok)++;
		if (k->lat != NULL)
			bench_stats_add(k->lat, now - s->t0);
	} else
		(*k->failed)++;
	sb_reply_free(r);
	if (now < k->end)
		bench_client_send(s);
}

static struct bench_client_conn *bench_client_conns;
static unsigned bench_client_nconns;

/* Poll every connection and run the library until none has a request. */
static void
bench_client_loop(void)
{
	struct pollfd *pf;
	unsigned i, busy;

	pf = bench_stats_xrealloc(NULL, bench_client_nconns, sizeof(*pf));
	for (;;) {
		busy = 0;
		for (i = 0; i < bench_client_nconns; i++) {
			struct sb_client *c = bench_client_conns[i].c;

			pf[i] = (struct pollfd){sb_fd(c), sb_events(c), 0};
			if (sb_pending(c) == 0)
				pf[i].fd = -1;
			else
				busy++;
		}
		if (busy == 0)
			break;
		if (poll(pf, bench_client_nconns, -1) == -1) {
			if (errno == EINTR)
				continue;
			bench_stats_die("poll: %s", strerror(errno));
		}
		for (i = 0; i < bench_client_nconns; i++)
			if (pf[i].fd >= 0 && pf[i].revents != 0 &&
			    sb_process(bench_client_conns[i].c) == -1)
				bench_stats_die("connection %u: %s", i,
				    sb_errmsg(bench_client_conns[i].c));
	}
	free(pf);
}

/* n connections, each sending depth requests at once, for seconds. */
static void
bench_client_run(const struct bench_opts *o, unsigned n, unsigned depth,
    int authorize, double seconds, struct bench_samples *lat, uint64_t *ok,
    uint64_t *failed)
{
	uint64_t end;
	unsigned i, j;

	if (n == 0 || n > BENCH_MAX_CLIENTS || depth == 0 || depth > 128)
		bench_stats_die(
		    "clients 1..%d, window 1..128", BENCH_MAX_CLIENTS);
	bench_client_conns =
	    bench_stats_xrealloc(NULL, n, sizeof(*bench_client_conns));
	memset(bench_client_conns, 0, n * sizeof(*bench_client_conns));
	bench_client_nconns = n;
	for (i = 0; i < n; i++) {
		struct bench_client_conn *k = &bench_client_conns[i];

		snprintf(
		    k->session, sizeof(k->session), "%s-%u", o->session, i);
		k->c = bench_client_connect(o->sock);
		k->authorize = authorize;
		k->req = bench_client_req(o, authorize ? "authorize" : "invoke",
		    authorize ? NULL : k->session);
		k->ok = ok;
		k->failed = failed;
		k->lat = lat;
		k->slots = bench_stats_xrealloc(NULL, depth, sizeof(*k->slots));
		for (j = 0; j < depth; j++)
			k->slots[j].conn = k;
	}
	end = bench_stats_now_ns() + (uint64_t)(seconds * 1e9);
	for (i = 0; i < n; i++) {
		bench_client_conns[i].end = end;
		for (j = 0; j < depth; j++)
			bench_client_send(&bench_client_conns[i].slots[j]);
	}
	bench_client_loop();
	for (i = 0; i < n; i++) {
		sb_req_free(bench_client_conns[i].req);
		sb_close(bench_client_conns[i].c);
		free(bench_client_conns[i].slots);
	}
	free(bench_client_conns);
	bench_client_conns = NULL;
	bench_client_nconns = 0;
}

/* k clients, each its own connection and session, one call at a time. */
void
bench_client_throughput(const struct bench_opts *o, unsigned k, double seconds,
    struct bench_samples *lat, uint64_t *ok, uint64_t *failed)
{
	bench_client_run(o, k, 1, 0, seconds, lat, ok, failed);
}

/* authorize on conns connections, window requests in flight on each. */
void
bench_client_authorize(const struct bench_opts *o, unsigned conns,
    unsigned window, double seconds, uint64_t *ok, uint64_t *failed)
{
	bench_client_run(o, conns, window, 1, seconds, NULL, ok, failed);
}
