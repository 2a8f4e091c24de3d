/*
 * histo.c: latency histograms with fixed log-scale buckets. One set of
 * bounds for every histogram, so any two can be compared and exported
 * bucket for bucket.
 */
#include <stddef.h>

#include "histo.h"

const uint64_t histo_bounds_ms[HISTO_BOUNDS] = {
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 60000};

/* a + b, held at UINT64_MAX rather than wrapped. */
static uint64_t
histo_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Every bucket whose bound the value does not exceed counts it. */
void
histo_add(struct histo *h, uint64_t ms)
{
	size_t i;

	for (i = 0; i < HISTO_BUCKETS; i++)
		if (i == HISTO_BOUNDS || ms <= histo_bounds_ms[i])
			h->cum[i] = histo_sat_add(h->cum[i], 1);
	h->sum_ms = histo_sat_add(h->sum_ms, ms);
}

/* The +Inf bucket counts every observation. */
uint64_t
histo_count(const struct histo *h)
{
	return h->cum[HISTO_BOUNDS];
}

/*
 * Linear interpolation inside the bucket that holds rank q * count, in
 * exact integers: rank, scaled by 1000, is permille * count (which may
 * pass 64 bits, so 128-bit arithmetic), and no rounding of q can move
 * it into the next bucket.
 */
uint64_t
histo_quantile(const struct histo *h, unsigned permille)
{
	unsigned __int128 rank, below, num, den;
	uint64_t n = histo_count(h), lower;
	size_t i;

	if (n == 0 || permille == 0)
		return 0;
	if (permille > 1000)
		permille = 1000;
	rank = (unsigned __int128)permille * n;
	for (i = 0; i < HISTO_BOUNDS; i++)
		if ((unsigned __int128)h->cum[i] * 1000 >= rank)
			break;
	if (i == HISTO_BOUNDS) /* beyond the largest bound: say that bound */
		return histo_bounds_ms[HISTO_BOUNDS - 1];
	below = i == 0 ? 0 : (unsigned __int128)h->cum[i - 1] * 1000;
	lower = i == 0 ? 0 : histo_bounds_ms[i - 1];
	/* below < rank <= cum[i] * 1000, so the bucket is not empty */
	num = (unsigned __int128)(histo_bounds_ms[i] - lower) * (rank - below);
	den = (unsigned __int128)h->cum[i] * 1000 - below;
	return lower + (uint64_t)((2 * num + den) / (2 * den)); /* nearest */
}
