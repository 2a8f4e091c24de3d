/*
 * test_stats.c: the stats reply, end to end without a daemon: the
 * broker's counters fed by the call machine's hooks (broker_stats.c),
 * the one encoder of the reply's fields, and skillctl's decoder with its
 * text and Prometheus forms (cli/cli_stats.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../broker/broker.h"
#include "../../cli/cli.h"
#include "../../lib/util.h"

struct broker *B;

/* A sample: every field a different value, one histogram empty. */
static void
sample(struct stats *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	s->uptime_s = 3600;
	s->clients = 2;
	s->requests = 40;
	s->invokes = 30;
	s->in_flight = 5;
	s->queued = 3;
	s->approvals = 6;
	s->audit_queue = 4;
	s->calls[ERR_NONE] = 25;
	s->calls[ERR_PHASE_VIOLATION] = 2;
	s->calls[ERR_OVERLOADED] = 1;
	for (i = 0; i < 10; i++)
		histo_add(&s->decision, 15); /* p50 15, p90 19, p99 20 */
	histo_add(&s->call, 1500);
}

/* The reply as the broker sends it: envelope and stats_enc. */
static void
encode(struct mp_enc *m, const struct stats *s, const struct client_id *id)
{
	enc_init(m);
	client_reply_begin(m, "stats", id, 1);
	stats_enc(m, s);
	client_reply_end(m);
	assert_true(enc_complete(m));
}

static const struct client_id id7 = {1, 7, NULL};

/* The uint array key of map, which must have n entries. */
static const msgpack_object *
uarr(const msgpack_object *map, const char *key, uint32_t n)
{
	const msgpack_object *o = mp_get(map, key);

	assert_non_null(o);
	assert_int_equal(o->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(o->via.array.size, n);
	return o;
}

/* Every documented field, with its type and value. */
static void
test_enc_fields(void **state)
{
	const msgpack_object *calls, *lat, *h, *a;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	struct stats s;
	uint64_t v;
	size_t i;

	(void)state;
	sample(&s);
	encode(&m, &s, &id7);
	assert_int_equal(
	    mp_decode(&d, (uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	assert_int_equal(mp_uint(d.root, "id", 1, UINT64_MAX, &v, &e), 0);
	assert_int_equal(v, 7);
#define U(k, want)                                                             \
	do {                                                                   \
		assert_int_equal(                                              \
		    mp_uint(d.root, k, 1, UINT64_MAX, &v, &e), 0);             \
		assert_int_equal(v, want);                                     \
	} while (0)
	U("uptime_s", 3600);
	U("clients", 2);
	U("requests_total", 40);
	U("invokes_total", 30);
	U("in_flight", 5);
	U("queued", 3);
	U("approvals_pending", 6);
	U("audit_queue", 4);
#undef U
	/* calls: every error type of lib/error.c, ok first, in its order */
	assert_int_equal(mp_submap(d.root, "calls", 1, &calls, &e), 0);
	assert_int_equal(calls->via.map.size, ERR__COUNT);
	for (i = 0; i < ERR__COUNT; i++) {
		const msgpack_object_kv *kv = &calls->via.map.ptr[i];
		const char *want =
		    i == 0 ? "ok" : err_type_name((enum err_type)i);
		assert_int_equal(kv->key.via.str.size, strlen(want));
		assert_memory_equal(kv->key.via.str.ptr, want, strlen(want));
		assert_int_equal(kv->val.via.u64, s.calls[i]);
	}
	assert_int_equal(mp_submap(d.root, "latency", 1, &lat, &e), 0);
	a = uarr(lat, "bounds_ms", HISTO_BOUNDS);
	for (i = 0; i < HISTO_BOUNDS; i++)
		assert_int_equal(
		    a->via.array.ptr[i].via.u64, histo_bounds_ms[i]);
	/* decision: ten values of 15 ms */
	assert_int_equal(mp_submap(lat, "decision", 1, &h, &e), 0);
	assert_int_equal(mp_uint(h, "count", 1, UINT64_MAX, &v, &e), 0);
	assert_int_equal(v, 10);
	assert_int_equal(mp_uint(h, "sum_ms", 1, UINT64_MAX, &v, &e), 0);
	assert_int_equal(v, 150);
	assert_int_equal(mp_uint(h, "p50_ms", 1, UINT64_MAX, &v, &e), 0);
	assert_int_equal(v, 15);
	assert_int_equal(mp_uint(h, "p90_ms", 1, UINT64_MAX, &v, &e), 0);
	assert_int_equal(v, 19);
	assert_int_equal(mp_uint(h, "p99_ms", 1, UINT64_MAX, &v, &e), 0);
	assert_int_equal(v, 20);
	a = uarr(h, "buckets", HISTO_BUCKETS); /* cumulative: 10 from 20 ms */
	for (i = 0; i < HISTO_BOUNDS; i++)
		assert_int_equal(a->via.array.ptr[i].via.u64,
		    histo_bounds_ms[i] >= 15 ? 10 : 0);
	assert_int_equal(a->via.array.ptr[HISTO_BOUNDS].via.u64, 10);
	/* worker_start: empty, so its percentiles are nil */
	assert_int_equal(mp_submap(lat, "worker_start", 1, &h, &e), 0);
	assert_int_equal(mp_uint(h, "count", 1, UINT64_MAX, &v, &e), 0);
	assert_int_equal(v, 0);
	assert_non_null(mp_get(h, "p50_ms"));
	assert_int_equal(mp_get(h, "p50_ms")->type, MSGPACK_OBJECT_NIL);
	assert_int_equal(mp_get(h, "p99_ms")->type, MSGPACK_OBJECT_NIL);
	uarr(h, "buckets", HISTO_BUCKETS);
	/* call: one of 1.5 s */
	assert_int_equal(mp_submap(lat, "call", 1, &h, &e), 0);
	assert_int_equal(mp_uint(h, "p50_ms", 1, UINT64_MAX, &v, &e), 0);
	assert_int_equal(v, 1500);
	mp_doc_free(&d);
	enc_free(&m);
}

/* Every counter at its largest and the longest id: still small. */
static void
test_enc_size(void **state)
{
	struct client_id id = {0, 0, NULL};
	struct mp_enc m;
	struct stats s;
	size_t i;

	(void)state;
	memset(&s, 0xff, sizeof(s));
	id.str = malloc(CLIENT_ID_MAX + 1);
	memset(id.str, 'x', CLIENT_ID_MAX);
	id.str[CLIENT_ID_MAX] = '\0';
	for (i = 0; i < HISTO_BUCKETS; i++)
		assert_true(s.call.cum[i] == UINT64_MAX);
	encode(&m, &s, &id);
	assert_true(m.sb.size < 2048);
	enc_free(&m);
	free(id.str);
}

/* A broker with no call, its counters from zero. */
static int
setup(void **state)
{
	(void)state;
	B = calloc(1, sizeof(*B));
	LIST_INIT(&B->calls);
	LIST_INIT(&B->conns);
	stats_init();
	return 0;
}

/* The broker goes; the next test makes its own. */
static int
teardown(void **state)
{
	(void)state;
	free(B);
	B = NULL;
	return 0;
}

/* A call as the machine moves it: c->st is set, then the hook runs. */
static void
move(struct call *c, enum call_state to)
{
	enum call_state from = c->st;

	c->st = to;
	stats_move(c, from);
}

/* The hooks: what counts, under which outcome, in which histogram. */
static void
test_hooks(void **state)
{
	struct call inv, den, sk, q;
	struct stats s;
	uint64_t now = now_mono_ms();

	(void)state;
	memset(&inv, 0, sizeof(inv));
	memset(&den, 0, sizeof(den));
	memset(&sk, 0, sizeof(sk));
	memset(&q, 0, sizeof(q));
	/* an invoke that runs: every span */
	inv.cr.type = CREQ_INVOKE;
	inv.t0_ms = now - 40;
	move(&inv, CALL_QUEUED);
	move(&inv, CALL_AUTHZ);
	move(&inv, CALL_DECISION);
	stats_decision(&inv);
	move(&inv, CALL_RUN_WAIT);
	assert_true(inv.run_ms >= now);
	inv.run_ms -= 7; /* the worker took 7 ms to start */
	move(&inv, CALL_RUNNING);
	move(&inv, CALL_DRAINING);
	move(&inv, CALL_DONE);
	/* an authorize denied: decision and call, under its error */
	den.cr.type = CREQ_AUTHORIZE;
	den.t0_ms = now;
	move(&den, CALL_AUTHZ);
	move(&den, CALL_DECISION);
	stats_decision(&den);
	den.err = ERR_PERMISSION_DENIED;
	move(&den, CALL_DONE);
	/* skills is not a call in this sense */
	sk.cr.type = CREQ_SKILLS;
	move(&sk, CALL_SKILLS);
	move(&sk, CALL_DONE);
	/* refused at the door: overloaded, counted; hello is not */
	stats_refused(CREQ_INVOKE, ERR_OVERLOADED);
	stats_refused(CREQ_HELLO, ERR_OVERLOADED);
	stats_refused(CREQ_AUTHORIZE, (enum err_type)99); /* internal */
	/* one waits in line; two records wait for auditd */
	q.cr.type = CREQ_INVOKE;
	q.st = CALL_QUEUED;
	LIST_INSERT_HEAD(&B->calls, &q, entry);
	B->ncalls = 1;
	B->audit_sent = 12;
	B->audit_acked = 10;
	B->stat_requests = 9;

	stats_get(&s);
	assert_int_equal(s.calls[ERR_NONE], 1);
	assert_int_equal(s.calls[ERR_PERMISSION_DENIED], 1);
	assert_int_equal(s.calls[ERR_OVERLOADED], 1);
	assert_int_equal(s.calls[ERR_INTERNAL], 1);
	assert_int_equal(histo_count(&s.call), 4);
	assert_int_equal(histo_count(&s.decision), 2);
	assert_int_equal(histo_count(&s.worker_start), 1);
	assert_true(s.worker_start.sum_ms >= 7 && s.worker_start.sum_ms < 1000);
	assert_true(s.decision.sum_ms >= 40 && s.decision.sum_ms < 1000);
	assert_true(s.call.sum_ms >= 40 && s.call.sum_ms < 1000);
	assert_int_equal(s.queued, 1);
	assert_int_equal(s.in_flight, 1);
	assert_int_equal(s.audit_queue, 2);
	assert_int_equal(s.requests, 9);
	assert_true(s.uptime_s < 60);
	LIST_REMOVE(&q, entry);
}

/* Decode what the broker encodes, as skillctl does. */
static void
cli_decode(const struct stats *in, struct cli_stats *out)
{
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	encode(&m, in, &id7);
	assert_int_equal(
	    mp_decode(&d, (uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	assert_int_equal(cli_stats_dec(d.root, out, &e), 0);
	mp_doc_free(&d);
	enc_free(&m);
}

/* What out wrote, as one string (freed by the caller). */
static char *
render(const struct cli_stats *cs, int prometheus)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (prometheus)
		cli_stats_prometheus(cs, f);
	else
		cli_stats_text(cs, f);
	fclose(f);
	return buf;
}

/* The Prometheus text: families, types, cumulative buckets in seconds. */
static void
test_cli_prometheus(void **state)
{
	static const char *const want[] = {
	    "# TYPE skillbroker_uptime_seconds gauge\n"
	    "skillbroker_uptime_seconds 3600\n",
	    "# TYPE skillbroker_calls_total counter\n"
	    "skillbroker_calls_total{outcome=\"ok\"} 25\n"
	    "skillbroker_calls_total{outcome=\"bad_request\"} 0\n",
	    "skillbroker_calls_total{outcome=\"phase_violation\"} 2\n",
	    "skillbroker_calls_total{outcome=\"internal\"} 0\n",
	    "skillbroker_calls_total{outcome=\"not_found\"} 0\n"
	    "# HELP skillbroker_in_flight ",
	    "# TYPE skillbroker_in_flight gauge\nskillbroker_in_flight 5\n",
	    "# TYPE skillbroker_queued gauge\nskillbroker_queued 3\n",
	    "# TYPE skillbroker_approvals_pending gauge\n"
	    "skillbroker_approvals_pending 6\n",
	    "# TYPE skillbroker_audit_queue gauge\nskillbroker_audit_queue 4\n",
	    "# TYPE skillbroker_decision_seconds histogram\n"
	    "skillbroker_decision_seconds_bucket{le=\"0.001\"} 0\n"
	    "skillbroker_decision_seconds_bucket{le=\"0.002\"} 0\n"
	    "skillbroker_decision_seconds_bucket{le=\"0.005\"} 0\n"
	    "skillbroker_decision_seconds_bucket{le=\"0.01\"} 0\n"
	    "skillbroker_decision_seconds_bucket{le=\"0.02\"} 10\n",
	    "skillbroker_decision_seconds_bucket{le=\"1\"} 10\n",
	    "skillbroker_decision_seconds_bucket{le=\"60\"} 10\n"
	    "skillbroker_decision_seconds_bucket{le=\"+Inf\"} 10\n"
	    "skillbroker_decision_seconds_sum 0.15\n"
	    "skillbroker_decision_seconds_count 10\n",
	    "# TYPE skillbroker_worker_start_seconds histogram\n",
	    "skillbroker_worker_start_seconds_sum 0\n"
	    "skillbroker_worker_start_seconds_count 0\n",
	    "skillbroker_call_seconds_bucket{le=\"1\"} 0\n"
	    "skillbroker_call_seconds_bucket{le=\"2\"} 1\n",
	    "skillbroker_call_seconds_sum 1.5\n"
	    "skillbroker_call_seconds_count 1\n",
	};
	struct cli_stats cs;
	struct stats s;
	char *text, *line;
	size_t i;

	(void)state;
	sample(&s);
	cli_decode(&s, &cs);
	assert_int_equal(cs.noutcomes, ERR__COUNT);
	assert_int_equal(cs.nbounds, HISTO_BOUNDS);
	text = render(&cs, 1);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(text, want[i]) == NULL)
			fail_msg("missing:\n%s\nin:\n%s", want[i], text);
	/* every line a comment or "name[{labels}] value" */
	for (line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n"))
		assert_true(strncmp(line, "# HELP skillbroker_", 19) == 0 ||
		            strncmp(line, "# TYPE skillbroker_", 19) == 0 ||
		            (strncmp(line, "skillbroker_", 12) == 0 &&
		                strchr(line, ' ') != NULL));
	free(text);
}

/* The text for a person: gauges, non-zero outcomes, percentiles. */
static void
test_cli_text(void **state)
{
	struct cli_stats cs;
	struct stats s;
	char *text;

	(void)state;
	sample(&s);
	cli_decode(&s, &cs);
	text = render(&cs, 0);
	assert_non_null(strstr(text, "uptime       3600 s\n"));
	assert_non_null(strstr(text, "queued       3\n"));
	assert_non_null(strstr(
	    text, "calls        28: ok 25, phase_violation 2, overloaded 1\n"));
	assert_non_null(strstr(text, "decision             10       15       "
	                             "19       20\n"));
	assert_non_null(strstr(text, "worker_start          0        -"));
	assert_non_null(strstr(text, "estimates"));
	free(text);
}

/* 1 if the defect being written is d. */
static const char *defect;
#define IS(d) (strcmp(defect, d) == 0)

/* One histogram of two bounds written by hand. */
static void
hand_histo(struct mp_enc *m, const char *name)
{
	enc_key(m, name);
	enc_map_open(m);
	enc_kuint(m, "count", 2);
	enc_kuint(m, "sum_ms", 7);
	enc_key(m, "buckets");
	enc_array(m, IS("length") ? 2 : 3);
	enc_uint(m, 1);
	enc_uint(m, IS("cumulative") ? 0 : 1);
	if (!IS("length"))
		enc_uint(m, IS("count") ? 3 : 2);
	enc_map_close(m);
}

/* A stats reply by hand, whole but for the defect named. */
static void
hand(struct mp_enc *m)
{
	enc_init(m);
	client_reply_begin(m, "stats", &id7, 1);
	enc_kuint(m, "uptime_s", 1);
	enc_kuint(m, "clients", 1);
	enc_kuint(m, "requests_total", 1);
	enc_kuint(m, "invokes_total", 1);
	enc_kuint(m, "in_flight", 1);
	enc_kuint(m, "queued", 1);
	enc_kuint(m, "approvals_pending", 1);
	if (!IS("missing"))
		enc_kuint(m, "audit_queue", 1);
	enc_key(m, "calls");
	enc_map_open(m);
	enc_kuint(m, IS("outcome") ? "o\"k" : "ok", 1);
	enc_map_close(m);
	enc_key(m, "latency");
	enc_map_open(m);
	enc_key(m, "bounds_ms");
	enc_array(m, 2);
	enc_uint(m, IS("bound0") ? 0 : 5);
	enc_uint(m, IS("bounds") ? 5 : 6);
	hand_histo(m, "decision");
	hand_histo(m, "worker_start");
	if (!IS("span"))
		hand_histo(m, "call");
	enc_kuint(m, "future_field", 1); /* a newer broker's: ignored */
	enc_map_close(m);
	client_reply_end(m);
}

/* A reply that is not the documented shape is refused, not printed. */
static void
test_cli_malformed(void **state)
{
	static const char *const bad[] = {"length", "cumulative", "count",
	    "missing", "outcome", "bound0", "bounds", "span"};
	struct cli_stats cs;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	size_t i;

	(void)state;
	for (i = 0; i <= sizeof(bad) / sizeof(bad[0]); i++) {
		defect = i == 0 ? "none" : bad[i - 1];
		hand(&m);
		assert_int_equal(
		    mp_decode(&d, (uint8_t *)m.sb.data, m.sb.size, NULL, &e),
		    0);
		if ((cli_stats_dec(d.root, &cs, &e) == 0) != (i == 0))
			fail_msg("%s: %s", defect, i == 0 ? e.msg : "accepted");
		if (i == 0) {
			assert_int_equal(cs.nbounds, 2);
			assert_int_equal(cs.span[2].buckets[2], 2);
		}
		mp_doc_free(&d);
		enc_free(&m);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_enc_fields),
	    cmocka_unit_test(test_enc_size),
	    cmocka_unit_test_setup_teardown(test_hooks, setup, teardown),
	    cmocka_unit_test(test_cli_prometheus),
	    cmocka_unit_test(test_cli_text),
	    cmocka_unit_test(test_cli_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
