/*
 * bench_stats.c: latency samples and what sb_bench reports of them
 * (p50, p99, mean, as JSON), the clock, and the process's way to fail.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

/* A bench that cannot measure ends: one line on stderr, exit 1. */
void
bench_stats_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sb_bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* realloc of n items of size bytes, refusing an overflow; never NULL. */
void *
bench_stats_xrealloc(void *p, size_t n, size_t size)
{
	void *q;

	if (size != 0 && n > SIZE_MAX / size)
		bench_stats_die(
		    "allocation of %zu x %zu bytes overflows", n, size);
	if ((q = realloc(p, n * size == 0 ? 1 : n * size)) == NULL)
		bench_stats_die("out of memory");
	return q;
}

/* The monotonic clock in ns: every interval sb_bench reports uses it. */
uint64_t
bench_stats_now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1)
		bench_stats_die("clock_gettime: %s", strerror(errno));
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* One more sample; the set doubles as it fills. */
void
bench_stats_add(struct bench_samples *s, uint64_t ns)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = bench_stats_xrealloc(s->v, s->cap, sizeof(*s->v));
	}
	s->v[s->n++] = ns;
}

/* Forget the samples (the set may be used again). */
void
bench_stats_free(struct bench_samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* qsort's order of two samples. */
static int
bench_stats_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The pct-th percentile in ms, by nearest rank (sorts the set). */
double
bench_stats_pct_ms(struct bench_samples *s, unsigned pct)
{
	size_t rank;

	if (s->n == 0 || pct > 100)
		return 0;
	qsort(s->v, s->n, sizeof(*s->v), bench_stats_cmp);
	rank = (s->n * pct + 99) / 100;
	if (rank == 0)
		rank = 1;
	return (double)s->v[rank - 1] / 1e6;
}

/* The mean in ms. */
double
bench_stats_mean_ms(const struct bench_samples *s)
{
	long double sum = 0;
	size_t i;

	if (s->n == 0)
		return 0;
	for (i = 0; i < s->n; i++)
		sum += (long double)s->v[i];
	return (double)(sum / (long double)s->n / 1e6L);
}

/* "name": {"n", "p50_ms", "p99_ms", "mean_ms"} (null with no sample). */
void
bench_stats_json(FILE *f, const char *name, struct bench_samples *s)
{
	if (s->n == 0) {
		fprintf(f, "\"%s\":null", name);
		return;
	}
	fprintf(f,
	    "\"%s\":{\"n\":%zu,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
	    "\"mean_ms\":%.3f}",
	    name, s->n, bench_stats_pct_ms(s, 50), bench_stats_pct_ms(s, 99),
	    bench_stats_mean_ms(s));
}
