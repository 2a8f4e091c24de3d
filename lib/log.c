/* log.c: one logging convention for every process role. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static const char *log_procname = "skillbroker";
static int log_foreground = 1;
static int log_verbose;

/*
 * Repeated messages are rate-limited per call site (its format string, or
 * the text itself for a bare "%s"): a flood such as a full disk retried in a
 * loop must not fill the log. A site may emit log_rl_burst lines per window;
 * the rest are counted, and the count goes out with the first dropped line
 * and its time once the window has passed (at the next message or exit).
 */
#define LOG_RL_SLOTS 64
#define LOG_RL_FIRST 200
struct log_rl {
	const char *site;        /* format string; NULL: slot free */
	unsigned long text_hash; /* for a bare "%s" site */
	int pri;
	struct timespec start; /* window start, monotonic */
	unsigned int shown;
	unsigned long dropped;
	time_t first_at; /* wall clock of the first dropped line */
	char first[LOG_RL_FIRST];
};
static struct log_rl log_rl[LOG_RL_SLOTS];
static unsigned int log_rl_burst = 5;
static unsigned int log_rl_window = 10;

static void vlog_emit(int, int, const char *, int);

/* Set the process tag and where messages go; called once per process. */
void
log_init(const char *procname, int foreground, int verbose)
{
	log_procname = procname;
	log_foreground = foreground;
	log_verbose = verbose;
	if (!foreground)
		openlog(procname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	(void)atexit(log_flush);
}

/* Set the rate limit: burst lines per site per window_s seconds; 0: none. */
void
log_ratelimit(unsigned int burst, unsigned int window_s)
{
	log_rl_burst = burst;
	log_rl_window = window_s;
}

/* Write out the count of one slot's dropped lines, and empty it. */
static void
log_rl_report(struct log_rl *r)
{
	char line[LOG_RL_FIRST + 128];
	struct tm tm;
	char when[32];

	if (r->dropped > 0) {
		if (localtime_r(&r->first_at, &tm) == NULL ||
		    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
			(void)snprintf(
			    when, sizeof(when), "%lld", (long long)r->first_at);
		(void)snprintf(line, sizeof(line),
		    "%lu similar messages suppressed, the first at %s: %s",
		    r->dropped, when, r->first);
		vlog_emit(r->pri, 0, line, 0);
	}
	r->dropped = 0;
	r->shown = 0;
}

static int
log_rl_expired(const struct log_rl *r, const struct timespec *now)
{
	return now->tv_sec - r->start.tv_sec >= (time_t)log_rl_window;
}

/* Report every slot whose window has passed with lines dropped. */
static void
log_rl_sweep(const struct timespec *now)
{
	size_t i;

	for (i = 0; i < LOG_RL_SLOTS; i++)
		if (log_rl[i].site != NULL && log_rl[i].dropped > 0 &&
		    log_rl_expired(&log_rl[i], now))
			log_rl_report(&log_rl[i]);
}

/* Report all dropped counts now: at exit, and before a fatal exit. */
void
log_flush(void)
{
	size_t i;

	for (i = 0; i < LOG_RL_SLOTS; i++)
		if (log_rl[i].site != NULL)
			log_rl_report(&log_rl[i]);
}

static unsigned long
log_rl_hash(const char *s)
{
	unsigned long h = 5381;

	while (*s != '\0')
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* 1: emit this line; 0: it repeats its site too often, count it instead. */
static int
log_rl_admit(const char *site, int pri, const char *msg)
{
	struct timespec now;
	struct log_rl *r = NULL, *oldest = &log_rl[0];
	unsigned long h = strcmp(site, "%s") == 0 ? log_rl_hash(msg) : 0;
	size_t i;

	if (log_rl_burst == 0 || clock_gettime(CLOCK_MONOTONIC, &now) == -1)
		return 1;
	log_rl_sweep(&now);
	for (i = 0; i < LOG_RL_SLOTS && r == NULL; i++) {
		if (log_rl[i].site == site && log_rl[i].text_hash == h)
			r = &log_rl[i];
		else if (log_rl[i].site == NULL ||
		         (oldest->site != NULL &&
		             log_rl[i].start.tv_sec < oldest->start.tv_sec))
			oldest = &log_rl[i];
	}
	if (r == NULL) {
		r = oldest; /* a free slot, or the least recent site */
		log_rl_report(r);
		r->site = site;
		r->text_hash = h;
		r->start = now;
	} else if (log_rl_expired(r, &now)) {
		log_rl_report(r);
		r->start = now;
	}
	if (r->shown < log_rl_burst) {
		r->shown++;
		return 1;
	}
	if (r->dropped++ == 0) {
		size_t n = strnlen(msg, sizeof(r->first) - 1);

		memcpy(r->first, msg, n); /* truncated: it names the site */
		r->first[n] = '\0';
		r->pri = pri;
		r->first_at = time(NULL);
	}
	return 0;
}

/* Rename the process tag, e.g. after a fork. */
void
log_setproc(const char *procname)
{
	log_procname = procname;
}

/* Write one formatted line to stderr or syslog. */
static void
vlog_emit(int pri, int with_errno, const char *msg, int err)
{
	if (log_foreground) {
		if (with_errno)
			fprintf(stderr, "%s[%d]: %s: %s\n", log_procname,
			    (int)getpid(), msg, strerror(err));
		else
			fprintf(stderr, "%s[%d]: %s\n", log_procname,
			    (int)getpid(), msg);
		fflush(stderr);
	} else if (with_errno)
		syslog(pri, "%s: %s", msg, strerror(err));
	else
		syslog(pri, "%s", msg);
}

/* Emit one line at a priority, with an optional errno suffix, unless its
 * call site has been repeating itself too often. */
static void
vlog(int pri, int with_errno, const char *fmt, va_list ap)
{
	char msg[1024];
	int saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_rl_admit(fmt, pri, msg))
		vlog_emit(pri, with_errno, msg, saved);
	errno = saved;
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 0)
		return;
	va_start(ap, fmt);
	vlog(LOG_WARNING, 1, fmt, ap);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 0)
		return;
	va_start(ap, fmt);
	vlog(LOG_WARNING, 0, fmt, ap);
	va_end(ap);
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose < 0)
		return;
	va_start(ap, fmt);
	vlog(LOG_INFO, 0, fmt, ap);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (log_verbose <= 0)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, 0, fmt, ap);
	va_end(ap);
}

/* Log with strerror and exit; used when continuing would be unsafe. */
void
fatal_impl(const char *func, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	int saved = errno;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	errno = saved;
	log_warn("fatal in %s: %s", func, msg);
	exit(1);
}

/* Log without errno and exit. */
void
fatalx_impl(const char *func, const char *fmt, ...)
{
	char msg[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_warnx("fatal in %s: %s", func, msg);
	exit(1);
}
