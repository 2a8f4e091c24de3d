/*
 * broker_stats.c: what the stats request tells an operator. Replies to
 * invoke and authorize are counted by outcome, and three spans of a
 * call go into latency histograms (lib/histo.c):
 *
 *   decision      request received -> its policy.decision is durable
 *   worker_start  RUN sent to the master -> RUN_STARTED (the skill runs)
 *   call          request received -> reply
 *
 * The call machine reports moves through stats_move(); gauges (clients,
 * calls in flight and queued, audit records not yet acknowledged) are
 * read when the request comes. stats_enc() alone writes the fields.
 */
#include <string.h>

#include "../lib/util.h"
#include "broker.h"

/* Everything counted since the broker started. */
static struct {
	uint64_t start_ms;
	uint64_t calls[ERR__COUNT];
	struct histo decision, worker_start, call;
} stats_acc;

/* Counters hold at UINT64_MAX rather than wrap. */
static void
stats_inc(uint64_t *v)
{
	if (*v < UINT64_MAX)
		(*v)++;
}

/* ms from t0 to now; 0 if the clock says otherwise. */
static uint64_t
stats_since(uint64_t t0, uint64_t now)
{
	return now > t0 ? now - t0 : 0;
}

/* Only what runs a skill, and authorize, are calls in the counters'
 * sense. */
static int
stats_counted(enum creq_type t)
{
	return creq_runs(t) || t == CREQ_AUTHORIZE;
}

/* One reply of a call, with its outcome and how long it took. */
static void
stats_reply(enum err_type err, uint64_t ms)
{
	stats_inc(
	    &stats_acc.calls[(unsigned)err < ERR__COUNT ? err : ERR_INTERNAL]);
	histo_add(&stats_acc.call, ms);
}

/* Uptime counts from here; every counter starts at zero. */
void
stats_init(void)
{
	memset(&stats_acc, 0, sizeof(stats_acc));
	stats_acc.start_ms = now_mono_ms();
}

/* Each move of a call: RUN going out, the skill started, the reply. */
void
stats_move(struct call *c, enum call_state from)
{
	uint64_t now;

	if (!stats_counted(c->cr.type))
		return;
	now = now_mono_ms();
	if (c->st == CALL_RUN_WAIT)
		c->run_ms = now;
	else if (from == CALL_RUN_WAIT && c->st == CALL_RUNNING)
		histo_add(&stats_acc.worker_start, stats_since(c->run_ms, now));
	else if (c->st == CALL_DONE)
		stats_reply(c->err, stats_since(c->t0_ms, now));
}

/* auditd acknowledged c's policy.decision: the decision is durable. */
void
stats_decision(const struct call *c)
{
	histo_add(&stats_acc.decision, stats_since(c->t0_ms, now_mono_ms()));
}

/* A call refused before it became one (a bound): answered at once. */
void
stats_refused(enum creq_type t, enum err_type err)
{
	if (stats_counted(t))
		stats_reply(err, 0);
}

/* Calls in state st, or (st CALL_QUEUED) waiting for a worker too. */
static uint64_t
stats_in_state(enum call_state st)
{
	const struct call *c;
	uint64_t n = 0;

	LIST_FOREACH (c, &B->calls, entry)
		if (c->st == st || (st == CALL_QUEUED && c->st == CALL_WORKERS))
			n++;
	return n;
}

/* The counters and the gauges, now. */
void
stats_get(struct stats *s)
{
	uint64_t now = now_mono_ms();

	memset(s, 0, sizeof(*s));
	s->uptime_s = stats_since(stats_acc.start_ms, now) / 1000;
	s->clients = quota_total(QUOTA_CLIENTS);
	s->requests = B->stat_requests;
	s->invokes = B->stat_invokes;
	s->in_flight = B->ncalls;
	s->queued = stats_in_state(CALL_QUEUED);
	s->approvals = stats_in_state(CALL_APPROVAL);
	s->audit_queue = stats_since(B->audit_acked, B->audit_sent);
	memcpy(s->calls, stats_acc.calls, sizeof(s->calls));
	s->decision = stats_acc.decision;
	s->worker_start = stats_acc.worker_start;
	s->call = stats_acc.call;
}

/* p50/p90/p99 as ms, or nil while the histogram is empty. */
static void
stats_enc_pct(
    struct mp_enc *m, const char *k, const struct histo *h, unsigned permille)
{
	enc_key(m, k);
	if (histo_count(h) == 0)
		enc_nil(m);
	else
		enc_uint(m, histo_quantile(h, permille));
}

/* One histogram: cumulative bucket counts (the last is +Inf), sum, count. */
static void
stats_enc_histo(struct mp_enc *m, const char *k, const struct histo *h)
{
	size_t i;

	enc_key(m, k);
	enc_map_open(m);
	enc_kuint(m, "count", histo_count(h));
	enc_kuint(m, "sum_ms", h->sum_ms);
	enc_key(m, "buckets");
	enc_array(m, HISTO_BUCKETS);
	for (i = 0; i < HISTO_BUCKETS; i++)
		enc_uint(m, h->cum[i]);
	stats_enc_pct(m, "p50_ms", h, 500);
	stats_enc_pct(m, "p90_ms", h, 900);
	stats_enc_pct(m, "p99_ms", h, 990);
	enc_map_close(m);
}

/* The fields of the stats reply, between its envelope's begin and end. */
void
stats_enc(struct mp_enc *m, const struct stats *s)
{
	size_t i;

	enc_kuint(m, "uptime_s", s->uptime_s);
	enc_kuint(m, "clients", s->clients);
	enc_kuint(m, "requests_total", s->requests);
	enc_kuint(m, "invokes_total", s->invokes);
	enc_kuint(m, "in_flight", s->in_flight);
	enc_kuint(m, "queued", s->queued);
	enc_kuint(m, "approvals_pending", s->approvals);
	enc_kuint(m, "audit_queue", s->audit_queue);
	enc_key(m, "calls");
	enc_map_open(m);
	for (i = 0; i < ERR__COUNT; i++)
		enc_kuint(m,
		    i == ERR_NONE ? "ok" : err_type_name((enum err_type)i),
		    s->calls[i]);
	enc_map_close(m);
	enc_key(m, "latency");
	enc_map_open(m);
	enc_key(m, "bounds_ms");
	enc_array(m, HISTO_BOUNDS);
	for (i = 0; i < HISTO_BOUNDS; i++)
		enc_uint(m, histo_bounds_ms[i]);
	stats_enc_histo(m, "decision", &s->decision);
	stats_enc_histo(m, "worker_start", &s->worker_start);
	stats_enc_histo(m, "call", &s->call);
	enc_map_close(m);
}
