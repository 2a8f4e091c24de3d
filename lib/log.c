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

/* Set the process tag and where messages go; called once per process. */
void
log_init(const char *procname, int foreground, int verbose)
{
	log_procname = procname;
	log_foreground = foreground;
	log_verbose = verbose;
	if (!foreground)
		openlog(procname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* Rename the process tag, e.g. after a fork. */
void
log_setproc(const char *procname)
{
	log_procname = procname;
}

/* Emit one line at a priority, with an optional errno suffix. */
static void
vlog(int pri, int with_errno, const char *fmt, va_list ap)
{
	char msg[1024];
	int saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_foreground) {
		if (with_errno)
			fprintf(stderr, "%s[%d]: %s: %s\n", log_procname,
			    (int)getpid(), msg, strerror(saved));
		else
			fprintf(stderr, "%s[%d]: %s\n", log_procname,
			    (int)getpid(), msg);
		fflush(stderr);
	} else if (with_errno)
		syslog(pri, "%s: %s", msg, strerror(saved));
	else
		syslog(pri, "%s", msg);
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
