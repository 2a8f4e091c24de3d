/*
 * cli_stats.c: `skillctl stats`: the broker's counters, gauges and
 * latency histograms (docs/protocol.md, stats) as text for a person, or
 * in the Prometheus text exposition format (version 0.0.4) for a
 * scraper or node_exporter's textfile collector. Both come from one
 * decoded reply; the bucket bounds are the ones the broker sent.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const cli_stats_span_names[CLI_STATS_SPANS] = {
    "decision", "worker_start", "call"};

static const char *const cli_stats_span_help[CLI_STATS_SPANS] = {
    "Time from receiving an invoke or authorize request to its policy "
    "decision being durable in the audit log.",
    "Time from asking the master to run a granted call to the worker "
    "running its skill.",
    "Time from receiving an invoke or authorize request to its reply."};

/* An outcome becomes a label value: only [a-z0-9_], so no escaping. */
static int
cli_stats_name_ok(const char *p, size_t n)
{
	size_t i;

	if (n == 0 || n >= CLI_STATS_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') ||
		        (p[i] >= '0' && p[i] <= '9') || p[i] == '_'))
			return 0;
	return 1;
}

/* calls: {outcome: count, ...}, in the broker's order. */
static int
cli_stats_dec_calls(
    const msgpack_object *reply, struct cli_stats *s, struct error *e)
{
	const msgpack_object *m = NULL;
	uint32_t i;

	if (mp_submap(reply, "calls", 1, &m, e) == -1)
		return -1;
	if (m->via.map.size > CLI_STATS_OUTCOMES_MAX)
		return error_set(e, ERR_BAD_REQUEST, "too many outcomes");
	for (i = 0; i < m->via.map.size; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key;
		const msgpack_object *v = &m->via.map.ptr[i].val;
		if (!cli_stats_name_ok(k->via.str.ptr, k->via.str.size) ||
		    v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return error_set(e, ERR_BAD_REQUEST,
			    "calls: an outcome must be a plain name with a "
			    "count");
		memcpy(s->outcome[i], k->via.str.ptr, k->via.str.size);
		s->outcome[i][k->via.str.size] = '\0';
		s->calls[i] = v->via.u64;
	}
	s->noutcomes = m->via.map.size;
	return 0;
}

/* An array of at most max uints into out; its length into *n. */
static int
cli_stats_dec_uints(const msgpack_object *map, const char *key, uint64_t *out,
    size_t max, size_t *n, struct error *e)
{
	uint64_t *v = NULL;

	if (mp_uintarr(map, key, 1, max, UINT64_MAX, &v, n, e) == -1)
		return -1;
	memcpy(out, v, *n * sizeof(*v));
	free(v);
	return 0;
}

/* One histogram; its buckets must match the bounds and add up. */
static int
cli_stats_dec_histo(const msgpack_object *lat, const char *name, size_t nbounds,
    struct cli_histo *h, struct error *e)
{
	const msgpack_object *m = NULL;
	size_t n, i;

	if (mp_submap(lat, name, 1, &m, e) == -1 ||
	    mp_uint(m, "count", 1, UINT64_MAX, &h->count, e) == -1 ||
	    mp_uint(m, "sum_ms", 1, UINT64_MAX, &h->sum_ms, e) == -1 ||
	    mp_uint(m, "p50_ms", 0, UINT64_MAX, &h->p50, e) == -1 ||
	    mp_uint(m, "p90_ms", 0, UINT64_MAX, &h->p90, e) == -1 ||
	    mp_uint(m, "p99_ms", 0, UINT64_MAX, &h->p99, e) == -1 ||
	    cli_stats_dec_uints(m, "buckets", h->buckets,
	        CLI_STATS_BOUNDS_MAX + 1, &n, e) == -1)
		return -1;
	if (n != nbounds + 1)
		return error_set(e, ERR_BAD_REQUEST,
		    "latency.%s: %zu buckets for %zu bounds", name, n, nbounds);
	for (i = 1; i < n; i++)
		if (h->buckets[i] < h->buckets[i - 1])
			return error_set(e, ERR_BAD_REQUEST,
			    "latency.%s: buckets are not cumulative", name);
	if (h->buckets[n - 1] != h->count)
		return error_set(e, ERR_BAD_REQUEST,
		    "latency.%s: the +Inf bucket is not the count", name);
	return 0;
}

/* The stats reply, checked: what both outputs need, nothing assumed. */
int
cli_stats_dec(const msgpack_object *reply, struct cli_stats *s, struct error *e)
{
	const msgpack_object *lat = NULL;
	size_t i;

	memset(s, 0, sizeof(*s));
	if (mp_uint(reply, "uptime_s", 1, UINT64_MAX, &s->uptime_s, e) == -1 ||
	    mp_uint(reply, "clients", 1, UINT64_MAX, &s->clients, e) == -1 ||
	    mp_uint(reply, "requests_total", 1, UINT64_MAX, &s->requests, e) ==
	        -1 ||
	    mp_uint(reply, "invokes_total", 1, UINT64_MAX, &s->invokes, e) ==
	        -1 ||
	    mp_uint(reply, "in_flight", 1, UINT64_MAX, &s->in_flight, e) ==
	        -1 ||
	    mp_uint(reply, "queued", 1, UINT64_MAX, &s->queued, e) == -1 ||
	    mp_uint(reply, "approvals_pending", 1, UINT64_MAX, &s->approvals,
	        e) == -1 ||
	    mp_uint(reply, "audit_queue", 1, UINT64_MAX, &s->audit_queue, e) ==
	        -1 ||
	    cli_stats_dec_calls(reply, s, e) == -1 ||
	    mp_submap(reply, "latency", 1, &lat, e) == -1 ||
	    cli_stats_dec_uints(lat, "bounds_ms", s->bounds_ms,
	        CLI_STATS_BOUNDS_MAX, &s->nbounds, e) == -1)
		return -1;
	for (i = 0; i < s->nbounds; i++)
		if (s->bounds_ms[i] == 0 ||
		    (i > 0 && s->bounds_ms[i] <= s->bounds_ms[i - 1]))
			return error_set(e, ERR_BAD_REQUEST,
			    "latency.bounds_ms must increase from 1");
	for (i = 0; i < CLI_STATS_SPANS; i++)
		if (cli_stats_dec_histo(lat, cli_stats_span_names[i],
		        s->nbounds, &s->span[i], e) == -1)
			return -1;
	return 0;
}

/* ms as seconds in the fewest digits: 1500 -> 1.5, 1 -> 0.001. */
static void
cli_stats_put_seconds(FILE *out, uint64_t ms)
{
	char frac[8];
	size_t n;

	if (ms % 1000 == 0) {
		fprintf(out, "%" PRIu64, ms / 1000);
		return;
	}
	snprintf(frac, sizeof(frac), "%03u", (unsigned)(ms % 1000));
	for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	fprintf(out, "%" PRIu64 ".%s", ms / 1000, frac);
}

/* # HELP and # TYPE of one metric family. */
static void
cli_stats_family(
    FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP skillbroker_%s %s\n", name, help);
	fprintf(out, "# TYPE skillbroker_%s %s\n", name, type);
}

/* A family with one unlabelled sample. */
static void
cli_stats_single(
    FILE *out, const char *name, const char *type, const char *help, uint64_t v)
{
	cli_stats_family(out, name, type, help);
	fprintf(out, "skillbroker_%s %" PRIu64 "\n", name, v);
}

/* A histogram in seconds: _bucket{le} (cumulative), _sum, _count. */
static void
cli_stats_prom_histo(FILE *out, const struct cli_stats *s, size_t span)
{
	const struct cli_histo *h = &s->span[span];
	const char *name = cli_stats_span_names[span];
	char fam[64];
	size_t i;

	snprintf(fam, sizeof(fam), "%s_seconds", name);
	cli_stats_family(out, fam, "histogram", cli_stats_span_help[span]);
	for (i = 0; i < s->nbounds; i++) {
		fprintf(out, "skillbroker_%s_bucket{le=\"", fam);
		cli_stats_put_seconds(out, s->bounds_ms[i]);
		fprintf(out, "\"} %" PRIu64 "\n", h->buckets[i]);
	}
	fprintf(out, "skillbroker_%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", fam,
	    h->buckets[s->nbounds]);
	fprintf(out, "skillbroker_%s_sum ", fam);
	cli_stats_put_seconds(out, h->sum_ms);
	fprintf(out, "\nskillbroker_%s_count %" PRIu64 "\n", fam, h->count);
}

/* The Prometheus text exposition format, version 0.0.4. */
void
cli_stats_prometheus(const struct cli_stats *s, FILE *out)
{
	size_t i;

	cli_stats_single(out, "uptime_seconds", "gauge",
	    "Seconds since the broker started.", s->uptime_s);
	cli_stats_single(
	    out, "clients", "gauge", "Client connections open.", s->clients);
	cli_stats_single(out, "requests_total", "counter",
	    "Request frames received.", s->requests);
	cli_stats_single(out, "invokes_total", "counter",
	    "Invoke requests that went on to policyd.", s->invokes);
	cli_stats_family(out, "calls_total", "counter",
	    "Replies to invoke and authorize requests, by outcome: ok, or "
	    "the error type.");
	for (i = 0; i < s->noutcomes; i++)
		fprintf(out,
		    "skillbroker_calls_total{outcome=\"%s\"} %" PRIu64 "\n",
		    s->outcome[i], s->calls[i]);
	cli_stats_single(out, "in_flight", "gauge",
	    "Requests being processed (queued ones included).", s->in_flight);
	cli_stats_single(out, "queued", "gauge",
	    "Calls waiting behind their session or for a worker.", s->queued);
	cli_stats_single(out, "approvals_pending", "gauge",
	    "Calls waiting for a human's approval.", s->approvals);
	cli_stats_single(out, "audit_queue", "gauge",
	    "Audit records the broker sent and auditd has not acknowledged.",
	    s->audit_queue);
	for (i = 0; i < CLI_STATS_SPANS; i++)
		cli_stats_prom_histo(out, s, i);
}

/* A percentile column: "-" while nothing was measured. */
static void
cli_stats_put_pct(FILE *out, const struct cli_histo *h, uint64_t v)
{
	if (h->count == 0)
		fprintf(out, " %8s", "-");
	else
		fprintf(out, " %8" PRIu64, v);
}

/* For a person: gauges, calls by outcome, latency percentiles. */
void
cli_stats_text(const struct cli_stats *s, FILE *out)
{
	const struct cli_histo *h;
	uint64_t total = 0;
	size_t i;
	int first = 1;

	for (i = 0; i < s->noutcomes; i++)
		total = s->calls[i] > UINT64_MAX - total ? UINT64_MAX
		                                         : total + s->calls[i];
	fprintf(out, "uptime       %" PRIu64 " s\n", s->uptime_s);
	fprintf(out, "clients      %" PRIu64 "\n", s->clients);
	fprintf(out, "in flight    %" PRIu64 "\n", s->in_flight);
	fprintf(out, "queued       %" PRIu64 "\n", s->queued);
	fprintf(out, "approvals    %" PRIu64 "\n", s->approvals);
	fprintf(out, "audit queue  %" PRIu64 "\n", s->audit_queue);
	fprintf(out, "requests     %" PRIu64 "\n", s->requests);
	fprintf(out, "calls        %" PRIu64, total);
	for (i = 0; i < s->noutcomes; i++) {
		if (s->calls[i] == 0)
			continue;
		fprintf(out, "%s%s %" PRIu64, first ? ": " : ", ",
		    s->outcome[i], s->calls[i]);
		first = 0;
	}
	fprintf(out, "\n\n%-14s %8s %8s %8s %8s\n", "latency (ms)", "count",
	    "p50", "p90", "p99");
	for (i = 0; i < CLI_STATS_SPANS; i++) {
		h = &s->span[i];
		fprintf(
		    out, "%-14s %8" PRIu64, cli_stats_span_names[i], h->count);
		cli_stats_put_pct(out, h, h->p50);
		cli_stats_put_pct(out, h, h->p90);
		cli_stats_put_pct(out, h, h->p99);
		fputc('\n', out);
	}
	fputs("(percentiles are estimates from histogram buckets)\n", out);
}

/* A stats reply as text or Prometheus; -1 if it is not one. */
int
cli_stats_print(
    const msgpack_object *reply, int format, FILE *out, struct error *e)
{
	struct cli_stats s;

	if (cli_stats_dec(reply, &s, e) == -1)
		return -1;
	if (format == CLI_OUT_PROMETHEUS)
		cli_stats_prometheus(&s, out);
	else
		cli_stats_text(&s, out);
	return 0;
}
