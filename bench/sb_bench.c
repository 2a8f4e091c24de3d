/*
 * sb_bench.c: the load generator of `make bench` (bench/run.sh runs it).
 * It speaks to the daemon through libskillbroker only, and prints one
 * JSON line per run on stdout.
 *
 *	sb_bench latency    -s SOCK -d SKILL_DIR -e ENTRY -w WORK [-b BWRAP]
 *	                    [-n ROUNDS] [-W WARMUP] [-F] [-P MS]
 *	sb_bench throughput -s SOCK -d SKILL_DIR -e ENTRY -w WORK [-b BWRAP]
 *	                    -j CLIENTS [-t SECONDS]
 *	sb_bench authorize  -s SOCK -j CONNECTIONS [-q WINDOW] [-t SECONDS]
 *	sb_bench idle       -s SOCK -j CONNECTIONS
 *
 * Common: -k SKILL (bench-noop), -c COMMAND (run), -a ARG (repeated:
 * the skill's arguments), -S SESSION (prefix of session names), -u UID
 * (bwrap's uid). latency: per round, one invoke on a persistent
 * connection, one fork+exec of the entry point (not with -F), one bwrap
 * launch of it; with -P, a pause of MS after each, so that what one
 * left running (a reap, the warm pool's refill) is not timed in the
 * next, as in an agent's loop, which thinks between its calls.
 * throughput: CLIENTS connections, each its own session, calling in a
 * loop, then as many bwrap launch loops, twice each in turn. authorize:
 * WINDOW requests in flight on each connection. idle: the connections
 * held until stdin ends (the line comes once all are open).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <skillbroker.h>

#include "bench.h"

/* The usage line, exit 2. */
static void __attribute__((noreturn)) bench_usage(void)
{
	fprintf(stderr,
	    "usage: sb_bench latency|throughput|authorize|idle -s SOCK "
	    "[-k SKILL] [-c COMMAND] [-a ARG]... [-S SESSION]\n"
	    "\t[-d SKILL_DIR -e ENTRY -w WORK_DIR] [-b BWRAP] [-u UID] "
	    "[-n ROUNDS] [-W WARMUP] [-F] [-P MS]\n"
	    "\t[-j CLIENTS] [-q WINDOW] [-t SECONDS]\n");
	exit(2);
}

/* A whole number within [min, max], or the usage. */
static unsigned
bench_num(const char *s, unsigned min, unsigned max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		bench_usage();
	return (unsigned)v;
}

/* Seconds as a decimal number within (0, 3600], or the usage. */
static double
bench_secs(const char *s)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v > 0) || v > 3600)
		bench_usage();
	return v;
}

/* A JSON string of s (quotes, backslashes and controls escaped). */
static void
bench_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* What every line says of the call: skill, command, arguments. */
static void
bench_json_call(FILE *f, const struct bench_opts *o)
{
	size_t i;

	fprintf(f, "\"skill\":");
	bench_json_str(f, o->skill);
	fprintf(f, ",\"command\":");
	bench_json_str(f, o->command);
	fprintf(f, ",\"args\":[");
	for (i = 0; i < o->nargs; i++) {
		if (i > 0)
			fputc(',', f);
		bench_json_str(f, o->args[i]);
	}
	fputc(']', f);
}

/* a / b, or 0 when b is 0 (a series that did not run). */
static double
bench_ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* Options into o; the subcommand's needs are checked by the caller. */
static void
bench_parse(int argc, char **argv, struct bench_opts *o)
{
	int ch;

	memset(o, 0, sizeof(*o));
	o->skill = "bench-noop";
	o->command = "run";
	o->session = "bench";
	o->rounds = 100;
	o->warmup = 10;
	o->clients = 1;
	o->window = 32;
	o->seconds = 2;
	o->uid = 65534;
	o->fork_series = 1;
	while ((ch = getopt(argc, argv, "a:b:c:d:e:Fj:k:n:P:q:s:S:t:u:w:W:")) !=
	       -1) {
		switch (ch) {
		case 'a':
			if (o->nargs == BENCH_MAX_ARGS)
				bench_usage();
			o->args[o->nargs++] = optarg;
			break;
		case 'b':
			o->bwrap = optarg;
			break;
		case 'c':
			o->command = optarg;
			break;
		case 'd':
			o->skill_dir = optarg;
			break;
		case 'e':
			o->entry = optarg;
			break;
		case 'F':
			o->fork_series = 0;
			break;
		case 'j':
			o->clients = bench_num(optarg, 1, BENCH_MAX_CLIENTS);
			break;
		case 'k':
			o->skill = optarg;
			break;
		case 'n':
			o->rounds = bench_num(optarg, 1, 1000000);
			break;
		case 'P':
			o->pause_ms = bench_num(optarg, 0, 10000);
			break;
		case 'q':
			o->window = bench_num(optarg, 1, 128);
			break;
		case 's':
			o->sock = optarg;
			break;
		case 'S':
			o->session = optarg;
			break;
		case 't':
			o->seconds = bench_secs(optarg);
			break;
		case 'u':
			o->uid = bench_num(optarg, 1, 4294967294U);
			break;
		case 'w':
			o->work_dir = optarg;
			break;
		case 'W':
			o->warmup = bench_num(optarg, 0, 100000);
			break;
		default:
			bench_usage();
		}
	}
	if (o->sock == NULL || optind != argc)
		bench_usage();
}

/* The baselines need the skill on the host; bwrap may be unusable. */
static int
bench_baselines(struct bench_opts *o)
{
	int user = 0;

	if (o->skill_dir == NULL || o->entry == NULL || o->work_dir == NULL)
		bench_usage();
	if (bench_launch_setup(o, &user) == -1) {
		fprintf(stderr, "sb_bench: bwrap does not run here: "
		                "no bwrap series\n");
		o->bwrap = NULL;
	}
	return user;
}

/* The pause after a latency sample (-P). */
static void
bench_pause(const struct bench_opts *o)
{
	struct timespec ts = {(time_t)(o->pause_ms / 1000),
	    (long)(o->pause_ms % 1000) * 1000000L};

	while (o->pause_ms > 0 && nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Rounds of one invoke, one fork+exec, one bwrap launch, in turn. */
static void
bench_latency(struct bench_opts *o)
{
	struct bench_samples ours = {0}, fork_ = {0}, bw = {0};
	char session[96];
	struct sb_client *c;
	unsigned r;
	uint64_t t;
	int user, st;

	user = bench_baselines(o);
	snprintf(session, sizeof(session), "%s-lat", o->session);
	c = bench_client_connect(o->sock);
	for (r = 0; r < o->warmup + o->rounds; r++) {
		int keep = r >= o->warmup;

		t = bench_client_invoke(c, o, session);
		if (keep)
			bench_stats_add(&ours, t);
		bench_pause(o);
		if (o->fork_series) {
			t = bench_launch_once(o, BENCH_LAUNCH_DIRECT, 0, &st);
			if (st != 0)
				bench_stats_die("fork+exec: status %d", st);
			if (keep)
				bench_stats_add(&fork_, t);
			bench_pause(o);
		}
		if (o->bwrap != NULL) {
			t = bench_launch_once(o, BENCH_LAUNCH_BWRAP, 0, &st);
			if (st != 0)
				bench_stats_die("bwrap: status %d", st);
			if (keep)
				bench_stats_add(&bw, t);
			bench_pause(o);
		}
	}
	sb_close(c);
	printf("{\"bench\":\"latency\",\"rounds\":%u,\"warmup\":%u,"
	       "\"pause_ms\":%u,",
	    o->rounds, o->warmup, o->pause_ms);
	bench_json_call(stdout, o);
	printf(",\"bwrap_user_ns\":%s,",
	    o->bwrap ? (user ? "true" : "false") : "null");
	bench_stats_json(stdout, "ours", &ours);
	putchar(',');
	bench_stats_json(stdout, "fork_exec", &fork_);
	putchar(',');
	bench_stats_json(stdout, "bwrap", &bw);
	printf(",\"ratio_bwrap_p50\":%.3f,\"ratio_bwrap_p99\":%.3f,"
	       "\"ratio_fork_p50\":%.3f,\"ratio_fork_p99\":%.3f}\n",
	    bench_ratio(
	        bench_stats_pct_ms(&ours, 50), bench_stats_pct_ms(&bw, 50)),
	    bench_ratio(
	        bench_stats_pct_ms(&ours, 99), bench_stats_pct_ms(&bw, 99)),
	    bench_ratio(
	        bench_stats_pct_ms(&ours, 50), bench_stats_pct_ms(&fork_, 50)),
	    bench_ratio(
	        bench_stats_pct_ms(&ours, 99), bench_stats_pct_ms(&fork_, 99)));
	bench_stats_free(&ours);
	bench_stats_free(&fork_);
	bench_stats_free(&bw);
}

/* One series' line part: calls, failures, rate and latency at load. */
static void
bench_tp_json(const char *name, uint64_t ok, uint64_t failed, uint64_t ns,
    struct bench_samples *lat)
{
	printf("\"%s\":{\"calls\":%llu,\"failed\":%llu,\"seconds\":%.3f,"
	       "\"per_second\":%.1f,",
	    name, (unsigned long long)ok, (unsigned long long)failed,
	    (double)ns / 1e9, ns ? (double)ok * 1e9 / (double)ns : 0.0);
	bench_stats_json(stdout, "latency", lat);
	putchar('}');
}

/* k clients calling for the time given, then k bwrap loops; twice. */
static void
bench_throughput(struct bench_opts *o)
{
	struct bench_samples lat = {0}, bwlat = {0};
	uint64_t ok = 0, failed = 0, bok = 0, bfailed = 0, ns = 0, bns = 0, t;
	double half = o->seconds / 2;
	int pass;

	(void)bench_baselines(o);
	for (pass = 0; pass < 2; pass++) {
		t = bench_stats_now_ns();
		bench_client_throughput(
		    o, o->clients, half, &lat, &ok, &failed);
		ns += bench_stats_now_ns() - t;
		if (o->bwrap == NULL)
			continue;
		t = bench_stats_now_ns();
		bok += bench_launch_parallel(
		    o, o->clients, half, &bwlat, &bfailed);
		bns += bench_stats_now_ns() - t;
	}
	printf("{\"bench\":\"throughput\",\"clients\":%u,\"seconds\":%.3f,",
	    o->clients, o->seconds);
	bench_json_call(stdout, o);
	putchar(',');
	bench_tp_json("ours", ok, failed, ns, &lat);
	putchar(',');
	if (o->bwrap != NULL)
		bench_tp_json("bwrap", bok, bfailed, bns, &bwlat);
	else
		printf("\"bwrap\":null");
	printf(",\"ratio_bwrap\":%.3f}\n",
	    bench_ratio(ns ? (double)ok / (double)ns : 0,
	        bns ? (double)bok / (double)bns : 0));
	bench_stats_free(&lat);
	bench_stats_free(&bwlat);
}

/* Pipelined authorize requests: decisions per second. */
static void
bench_authorize(const struct bench_opts *o)
{
	uint64_t ok = 0, failed = 0, t;

	t = bench_stats_now_ns();
	bench_client_authorize(
	    o, o->clients, o->window, o->seconds, &ok, &failed);
	t = bench_stats_now_ns() - t;
	printf("{\"bench\":\"authorize\",\"connections\":%u,\"window\":%u,",
	    o->clients, o->window);
	bench_json_call(stdout, o);
	printf(",\"decisions\":%llu,\"failed\":%llu,\"seconds\":%.3f,"
	       "\"per_second\":%.1f}\n",
	    (unsigned long long)ok, (unsigned long long)failed, (double)t / 1e9,
	    (double)ok * 1e9 / (double)t);
}

/* Open and hello n connections, say so, hold them until stdin ends. */
static void
bench_idle(const struct bench_opts *o)
{
	struct sb_client **c;
	char buf[256];
	uint64_t t;
	unsigned i;

	c = bench_stats_xrealloc(NULL, o->clients, sizeof(*c));
	t = bench_stats_now_ns();
	for (i = 0; i < o->clients; i++)
		c[i] = bench_client_connect(o->sock);
	t = bench_stats_now_ns() - t;
	printf("{\"bench\":\"idle\",\"connections\":%u,\"connect_ms\":%.3f}\n",
	    o->clients, (double)t / 1e6);
	if (fflush(stdout) == EOF)
		bench_stats_die("stdout: %s", strerror(errno));
	while (fgets(buf, sizeof(buf), stdin) != NULL)
		;
	for (i = 0; i < o->clients; i++)
		sb_close(c[i]);
	free(c);
}

/* Room for every connection asked for: the soft fd limit at the hard. */
static void
bench_fds(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		bench_stats_die("getrlimit: %s", strerror(errno));
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		bench_stats_die("setrlimit: %s", strerror(errno));
}

/* Run the subcommand argv[1] with the options after it. */
int
main(int argc, char **argv)
{
	struct bench_opts o;
	const char *cmd;

	if (argc < 2)
		bench_usage();
	cmd = argv[1];
	bench_parse(argc - 1, argv + 1, &o);
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		bench_stats_die("signal: %s", strerror(errno));
	bench_fds();
	if (strcmp(cmd, "latency") == 0)
		bench_latency(&o);
	else if (strcmp(cmd, "throughput") == 0)
		bench_throughput(&o);
	else if (strcmp(cmd, "authorize") == 0)
		bench_authorize(&o);
	else if (strcmp(cmd, "idle") == 0)
		bench_idle(&o);
	else
		bench_usage();
	if (fflush(stdout) == EOF || ferror(stdout))
		bench_stats_die("stdout: write error");
	return 0;
}
