/* xmalloc.c: checked allocation; overflow in a size product is fatal. */
#include "xmalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

void *
xmalloc(size_t size)
{
	void *p;

	if (size == 0)
		fatalx("zero size");
	if ((p = malloc(size)) == NULL)
		fatal("malloc %zu", size);
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		fatalx("zero size");
	if ((p = calloc(nmemb, size)) == NULL)
		fatal("calloc %zu x %zu", nmemb, size);
	return p;
}

/* realloc with an overflow check on nmemb * size. */
void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p;

	if (nmemb == 0 || size == 0)
		fatalx("zero size");
	if (nmemb > SIZE_MAX / size)
		fatalx("size overflow %zu x %zu", nmemb, size);
	if ((p = realloc(ptr, nmemb * size)) == NULL)
		fatal("realloc %zu x %zu", nmemb, size);
	return p;
}

char *
xstrdup(const char *s)
{
	char *p;

	if ((p = strdup(s)) == NULL)
		fatal("strdup");
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p;

	if ((p = strndup(s, n)) == NULL)
		fatal("strndup");
	return p;
}

int
xasprintf(char **ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(ret, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("vasprintf");
	return n;
}
