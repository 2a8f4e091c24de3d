/*
 * attack.h: how the escape suite's attack programs report. Every line
 * goes straight to stdout (unbuffered, so a kill keeps what came
 * before), one outcome per line:
 *   BLOCKED WHAT: ERRNO        the attempt failed the way the sandbox promises
 *   ESCAPED WHAT: DETAIL       the attempt worked
 *   UNEXPECTED WHAT: ERRNO     it failed, but not with the promised errno
 *   INFO ...                   what the program saw, for the diagnosis
 * run.sh fails a test on any ESCAPED or UNEXPECTED line, and when the
 * expected BLOCKED lines or the final DONE are missing.
 */
#ifndef SB_ESCAPE_ATTACK_H
#define SB_ESCAPE_ATTACK_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void __attribute__((format(printf, 1, 2), unused))
say(const char *fmt, ...)
{
	char b[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(b) - 2)
		n = (int)sizeof(b) - 2;
	b[n++] = '\n';
	(void)!write(1, b, (size_t)n);
}

static const char *__attribute__((unused)) ename(int e)
{
	const char *s = strerrorname_np(e);

	return s != NULL ? s : "E?";
}

/*
 * The outcome of one call: r is its return value, e the errno right
 * after it, then the errnos that count as blocked, ending with 0.
 * Returns 1 when the call succeeded.
 */
static int __attribute__((unused)) verdict(const char *what, long r, int e, ...)
{
	va_list ap;
	int ok, want = 0;

	if (r >= 0) {
		say("ESCAPED %s: returned %ld", what, r);
		return 1;
	}
	va_start(ap, e);
	while ((ok = va_arg(ap, int)) != 0)
		if (ok == e)
			want = 1;
	va_end(ap);
	say("%s %s: %s", want ? "BLOCKED" : "UNEXPECTED", what, ename(e));
	return 0;
}

#endif
