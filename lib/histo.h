/*
 * histo.h: a latency histogram over one fixed set of log-scale buckets
 * (1, 2, 5, 10, ... 20000, 60000 ms and +Inf), kept as cumulative
 * counts, as Prometheus exposes a histogram. Quantiles are estimates:
 * the buckets hold counts, not the values, so a quantile is
 * interpolated within the bucket it falls in. Counters saturate; they
 * never wrap.
 */
#ifndef SB_HISTO_H
#define SB_HISTO_H

#include <stdint.h>

#define HISTO_BOUNDS 15                  /* finite upper bounds */
#define HISTO_BUCKETS (HISTO_BOUNDS + 1) /* and +Inf */

/* The upper bound of each finite bucket, in ms, increasing. */
extern const uint64_t histo_bounds_ms[HISTO_BOUNDS];

struct histo {
	/* cum[i]: observations <= histo_bounds_ms[i]; the last: all of them */
	uint64_t cum[HISTO_BUCKETS];
	uint64_t sum_ms;
};

/* One observation of ms milliseconds. */
void histo_add(struct histo *h, uint64_t ms);
/* How many observations h holds. */
uint64_t histo_count(const struct histo *h);
/*
 * The quantile of permille/1000 (500: the median, 990: p99) in ms,
 * estimated as Prometheus's histogram_quantile() does: linear within
 * the bucket it falls in (the first from 0), the largest finite bound
 * when it falls in +Inf. Rounded to the nearest ms (halves up); 0 when
 * h is empty or permille is 0; above 1000 counts as 1000.
 */
uint64_t histo_quantile(const struct histo *h, unsigned permille);

#endif
