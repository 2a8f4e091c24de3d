/* test_histo.c: lib/histo.c, the latency histograms of the stats reply. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "../../lib/histo.h"

/* The bucket index a lone observation of ms lands in first. */
static size_t
first_bucket(uint64_t ms)
{
	struct histo h;
	size_t i;

	memset(&h, 0, sizeof(h));
	histo_add(&h, ms);
	for (i = 0; i < HISTO_BUCKETS; i++)
		if (h.cum[i] == 1)
			return i;
	return HISTO_BUCKETS;
}

/* The bounds are the documented 1-2-5 series, increasing. */
static void
test_bounds(void **state)
{
	static const uint64_t want[HISTO_BOUNDS] = {1, 2, 5, 10, 20, 50, 100,
	    200, 500, 1000, 2000, 5000, 10000, 20000, 60000};
	size_t i;

	(void)state;
	for (i = 0; i < HISTO_BOUNDS; i++) {
		assert_int_equal(histo_bounds_ms[i], want[i]);
		if (i > 0)
			assert_true(
			    histo_bounds_ms[i] > histo_bounds_ms[i - 1]);
	}
}

/* A value on a bound belongs to that bucket (le), one above to the next. */
static void
test_bucket_edges(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(first_bucket(0), 0);
	for (i = 0; i < HISTO_BOUNDS; i++) {
		assert_int_equal(first_bucket(histo_bounds_ms[i]), i);
		assert_int_equal(first_bucket(histo_bounds_ms[i] + 1), i + 1);
	}
	assert_int_equal(first_bucket(3), 2);
	assert_int_equal(first_bucket(60001), HISTO_BOUNDS);
	assert_int_equal(first_bucket(UINT64_MAX), HISTO_BOUNDS);
}

/* Counts are cumulative: each bucket holds all below it; +Inf is all. */
static void
test_cumulative(void **state)
{
	static const uint64_t v[] = {0, 1, 2, 3, 7, 70, 700, 7000, 70000};
	struct histo h;
	size_t i;

	(void)state;
	memset(&h, 0, sizeof(h));
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		histo_add(&h, v[i]);
	assert_int_equal(histo_count(&h), 9);
	assert_int_equal(h.sum_ms, 0 + 1 + 2 + 3 + 7 + 70 + 700 + 7000 + 70000);
	assert_int_equal(h.cum[0], 2);  /* <= 1: 0, 1 */
	assert_int_equal(h.cum[1], 3);  /* <= 2 */
	assert_int_equal(h.cum[2], 4);  /* <= 5 */
	assert_int_equal(h.cum[3], 5);  /* <= 10 */
	assert_int_equal(h.cum[5], 5);  /* <= 50 */
	assert_int_equal(h.cum[6], 6);  /* <= 100 */
	assert_int_equal(h.cum[9], 7);  /* <= 1000 */
	assert_int_equal(h.cum[12], 8); /* <= 10000 */
	assert_int_equal(h.cum[14], 8); /* <= 60000 */
	assert_int_equal(h.cum[15], 9); /* +Inf */
	for (i = 1; i < HISTO_BUCKETS; i++)
		assert_true(h.cum[i] >= h.cum[i - 1]);
}

/* Nothing observed: count, sum and every quantile are 0. */
static void
test_empty(void **state)
{
	struct histo h;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_int_equal(histo_count(&h), 0);
	assert_int_equal(histo_quantile(&h, 500), 0);
	assert_int_equal(histo_quantile(&h, 990), 0);
	assert_int_equal(histo_quantile(&h, 1000), 0);
}

/* Interpolated within the bucket, as histogram_quantile() does. */
static void
test_quantiles(void **state)
{
	struct histo h;
	int i;

	(void)state;
	memset(&h, 0, sizeof(h));
	for (i = 0; i < 10; i++) /* ten values in (10, 20] */
		histo_add(&h, 15);
	assert_int_equal(histo_quantile(&h, 500), 15); /* 10 + 10 * 5/10 */
	assert_int_equal(histo_quantile(&h, 900), 19); /* 10 + 10 * 9/10 */
	assert_int_equal(histo_quantile(&h, 990), 20); /* 19.9, rounded */
	assert_int_equal(histo_quantile(&h, 1000), 20);

	/* 90 in (0, 1] and 10 in (1000, 2000]: the tail shows at p99 */
	memset(&h, 0, sizeof(h));
	for (i = 0; i < 90; i++)
		histo_add(&h, 1);
	for (i = 0; i < 10; i++)
		histo_add(&h, 1500);
	assert_int_equal(histo_quantile(&h, 500), 1);    /* 0 + 1 * 50/90 */
	assert_int_equal(histo_quantile(&h, 900), 1);    /* rank 90: <= 1 */
	assert_int_equal(histo_quantile(&h, 990), 1900); /* 1000 + 1000*.9 */

	/* the first bucket starts at 0 */
	memset(&h, 0, sizeof(h));
	for (i = 0; i < 4; i++)
		histo_add(&h, 2);
	assert_int_equal(histo_quantile(&h, 500), 2); /* 1 + 1 * 2/4, 1.5 */
	assert_int_equal(histo_quantile(&h, 250), 1); /* 1.25 */

	/* beyond 1000 per mille is 1000; 0 says nothing */
	assert_int_equal(histo_quantile(&h, 2000), 2);
	assert_int_equal(histo_quantile(&h, 0), 0);
}

/* Past the largest bound a quantile is that bound, not infinity. */
static void
test_overflow_bucket(void **state)
{
	struct histo h;
	int i;

	(void)state;
	memset(&h, 0, sizeof(h));
	for (i = 0; i < 5; i++)
		histo_add(&h, 3600000); /* an hour */
	assert_int_equal(h.cum[HISTO_BOUNDS - 1], 0);
	assert_int_equal(histo_count(&h), 5);
	assert_int_equal(h.sum_ms, 5 * 3600000ULL);
	assert_int_equal(histo_quantile(&h, 500), 60000);
	assert_int_equal(histo_quantile(&h, 990), 60000);

	/* half below, half beyond: p50 in the bucket below, p90 at the top */
	histo_add(&h, 30);
	histo_add(&h, 30);
	histo_add(&h, 30);
	histo_add(&h, 30);
	histo_add(&h, 30);
	assert_int_equal(histo_quantile(&h, 500), 50);
	assert_int_equal(histo_quantile(&h, 900), 60000);
}

/* Counters and the sum hold at UINT64_MAX rather than wrap. */
static void
test_saturation(void **state)
{
	struct histo h;
	size_t i;

	(void)state;
	memset(&h, 0, sizeof(h));
	histo_add(&h, UINT64_MAX - 1);
	histo_add(&h, 5);
	assert_int_equal(h.sum_ms, UINT64_MAX);
	for (i = 0; i < HISTO_BUCKETS; i++)
		h.cum[i] = UINT64_MAX;
	histo_add(&h, 1);
	for (i = 0; i < HISTO_BUCKETS; i++)
		assert_true(h.cum[i] == UINT64_MAX);
	assert_int_equal(histo_quantile(&h, 500), 1); /* 0 + 1 * 1/2 */
}

/* Counts beyond what a double holds exactly still land in their bucket. */
static void
test_large_counts(void **state)
{
	struct histo h;
	size_t i;

	(void)state;
	memset(&h, 0, sizeof(h));
	for (i = 0; i < HISTO_BUCKETS; i++) /* 9e18 <= 1 ms, 1e18 in 1-2 s */
		h.cum[i] =
		    i < 10 ? 9000000000000000000ULL : 10000000000000000000ULL;
	assert_int_equal(histo_quantile(&h, 900), 1);
	assert_int_equal(histo_quantile(&h, 990), 1900);
	h.cum[0] = h.cum[1] = 8999999999999999999ULL; /* one fewer at 0-1 */
	assert_int_equal(histo_quantile(&h, 900), 5); /* now in 2-5 */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_bucket_edges),
	    cmocka_unit_test(test_cumulative),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_quantiles),
	    cmocka_unit_test(test_overflow_bucket),
	    cmocka_unit_test(test_saturation),
	    cmocka_unit_test(test_large_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
