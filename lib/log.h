/* log.h: process-wide logging and fatal exits (stderr or syslog). */
#ifndef SB_LOG_H
#define SB_LOG_H

#include <stdarg.h>

/* verbose: 1 adds debug lines; -1 silences all but fatal (offline tools). */
void log_init(const char *procname, int foreground, int verbose);
void log_setproc(const char *procname);
/* Lines per call site per window; the rest are counted and reported. */
void log_ratelimit(unsigned int burst, unsigned int window_s);
void log_flush(void);
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatal_impl(const char *func, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
void fatalx_impl(const char *func, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

/* fatal appends strerror(errno); fatalx does not. Both name the caller. */
#define fatal(...) fatal_impl(__func__, __VA_ARGS__)
#define fatalx(...) fatalx_impl(__func__, __VA_ARGS__)

#endif
