/*
 * bench.h: the parts of sb_bench, the load generator of `make bench`.
 * sb_bench talks to the daemon through the public client library only
 * (<skillbroker.h>), and launches the same entry point directly and
 * under bubblewrap as the baselines of the same run.
 */
#ifndef SB_BENCH_H
#define SB_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define BENCH_MAX_ARGS 16 /* -a arguments passed to the skill */
#define BENCH_MAX_CLIENTS 4096

/* What one run of sb_bench was asked for (sb_bench.c parses it). */
struct bench_opts {
	const char *sock;      /* the daemon's socket */
	const char *skill;     /* skill name, for the daemon */
	const char *command;   /* its command */
	const char *session;   /* session name prefix */
	const char *skill_dir; /* host path of the skill, for the baselines */
	const char *entry;     /* entry point, relative to skill_dir */
	const char *work_dir;  /* host dir bound at /work under bwrap */
	const char *bwrap;     /* bwrap's path, NULL: no bwrap series */
	const char *args[BENCH_MAX_ARGS + 1];
	size_t nargs;
	unsigned rounds, warmup, clients, window;
	uint32_t uid; /* bwrap's uid and gid inside its user namespace */
	double seconds;
	int fork_series;   /* latency: time fork+exec too */
	unsigned pause_ms; /* latency: idle after each sample, every series */
};

/* A growing set of latency samples in nanoseconds. */
struct bench_samples {
	uint64_t *v;
	size_t n, cap;
};

/* bench_stats.c */
void bench_stats_add(struct bench_samples *s, uint64_t ns);
void bench_stats_free(struct bench_samples *s);
void bench_stats_json(FILE *f, const char *name, struct bench_samples *s);
double bench_stats_pct_ms(struct bench_samples *s, unsigned pct);
double bench_stats_mean_ms(const struct bench_samples *s);
uint64_t bench_stats_now_ns(void);
void *bench_stats_xrealloc(void *p, size_t n, size_t size);
void __attribute__((noreturn, format(printf, 1, 2)))
bench_stats_die(const char *fmt, ...);

/* bench_launch.c */
enum bench_launch_kind { BENCH_LAUNCH_DIRECT, BENCH_LAUNCH_BWRAP };
int bench_launch_setup(const struct bench_opts *o, int *bwrap_user);
uint64_t bench_launch_once(const struct bench_opts *o,
    enum bench_launch_kind kind, unsigned slot, int *status);
uint64_t bench_launch_parallel(const struct bench_opts *o, unsigned k,
    double seconds, struct bench_samples *lat, uint64_t *failed);

/* bench_client.c */
struct sb_client *bench_client_connect(const char *sock);
uint64_t bench_client_invoke(
    struct sb_client *c, const struct bench_opts *o, const char *session);
void bench_client_throughput(const struct bench_opts *o, unsigned k,
    double seconds, struct bench_samples *lat, uint64_t *ok, uint64_t *failed);
void bench_client_authorize(const struct bench_opts *o, unsigned conns,
    unsigned window, double seconds, uint64_t *ok, uint64_t *failed);

#endif
