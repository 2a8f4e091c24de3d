/*
 * mcp_line.c: stdin's bytes to message lines. MCP's stdio transport is
 * one JSON-RPC message per line; a line longer than the bound is never
 * kept: it is reported once and dropped up to its newline, so a host
 * that sends 10 MB costs us no more than the bound.
 */
#include "mcp.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/xmalloc.h"

/* An empty framer for lines of at most max bytes. */
void
mcp_line_init(struct mcp_line *l, size_t max)
{
	memset(l, 0, sizeof(*l));
	l->max = max;
}

/* Hand one complete line to cb, without a trailing \r. */
static void
mcp_line_emit(const char *p, size_t n, mcp_line_cb cb, void *arg)
{
	if (n > 0 && p[n - 1] == '\r')
		n--;
	cb(arg, p, n, 0);
}

/* Keep n more bytes of the current line, or start discarding it when it
 * would pass the bound. */
static void
mcp_line_keep(
    struct mcp_line *l, const char *p, size_t n, mcp_line_cb cb, void *arg)
{
	size_t cap;

	if (n == 0)
		return;
	if (n > l->max - l->len) {
		free(l->buf);
		l->buf = NULL;
		l->len = l->cap = 0;
		l->discarding = 1;
		cb(arg, NULL, 0, 1);
		return;
	}
	if (l->len + n > l->cap) {
		cap = l->cap ? l->cap : 4096;
		while (cap < l->len + n)
			cap = cap > l->max / 2 ? l->max : cap * 2;
		l->buf = xreallocarray(l->buf, 1, cap);
		l->cap = cap;
	}
	memcpy(l->buf + l->len, p, n);
	l->len += n;
}

/* Take n bytes of stdin; cb gets every line they complete. */
void
mcp_line_feed(
    struct mcp_line *l, const char *data, size_t n, mcp_line_cb cb, void *arg)
{
	const char *nl;
	size_t k;

	while (n > 0) {
		nl = memchr(data, '\n', n);
		k = nl ? (size_t)(nl - data) : n;
		if (l->discarding) {
			if (nl != NULL)
				l->discarding = 0;
		} else if (nl == NULL) {
			mcp_line_keep(l, data, k, cb, arg);
		} else if (l->len == 0) {
			/* the whole line is here: no copy */
			if (k > l->max)
				cb(arg, NULL, 0, 1);
			else
				mcp_line_emit(data, k, cb, arg);
		} else {
			mcp_line_keep(l, data, k, cb, arg);
			if (!l->discarding)
				mcp_line_emit(l->buf, l->len, cb, arg);
			l->len = 0;
			l->discarding = 0;
		}
		if (nl == NULL)
			break;
		data += k + 1;
		n -= k + 1;
	}
}

/* stdin ended: a last line without its newline still counts. */
void
mcp_line_eof(struct mcp_line *l, mcp_line_cb cb, void *arg)
{
	if (!l->discarding && l->len > 0)
		mcp_line_emit(l->buf, l->len, cb, arg);
	l->len = 0;
	l->discarding = 0;
}

/* Free the framer's buffer. */
void
mcp_line_free(struct mcp_line *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}
