/*
 * mcp_out.c: stdout, the protocol's only channel. Messages are queued
 * and written as far as the pipe takes them (stdout is non-blocking),
 * so a host that stops reading never stalls the loop: the server reads
 * no new requests while more than MCP_OUT_HIGH bytes wait, and the
 * replies still owed (bounded by the calls in flight) wait here.
 */
#include "mcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/xmalloc.h"

/* An empty output queue for fd, bounded by max bytes. */
void
mcp_out_init(struct mcp_out *o, int fd, size_t max)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->max = max;
}

/* Queue msg as one line of compact JSON (it holds no newline: JSON
 * escapes every control character in strings). */
int
mcp_out_json(struct mcp_out *o, json_t *msg)
{
	char *text;
	size_t n, cap;

	if ((text = json_dumps(msg, JSON_COMPACT)) == NULL)
		return -1;
	n = strlen(text);
	if (n + 1 > o->max - (o->len - o->off)) {
		free(text);
		errno = ENOBUFS;
		return -1;
	}
	if (o->off > 0 && o->off == o->len)
		o->off = o->len = 0;
	if (o->len + n + 1 > o->cap) {
		if (o->off > 0) { /* move the unsent part to the front */
			memmove(o->buf, o->buf + o->off, o->len - o->off);
			o->len -= o->off;
			o->off = 0;
		}
		cap = o->cap ? o->cap : 65536;
		while (cap < o->len + n + 1)
			cap *= 2;
		if (cap != o->cap) {
			o->buf = xreallocarray(o->buf, 1, cap);
			o->cap = cap;
		}
	}
	memcpy(o->buf + o->len, text, n);
	o->buf[o->len + n] = '\n';
	o->len += n + 1;
	free(text);
	return 0;
}

/* Write what the fd takes now without blocking. */
int
mcp_out_flush(struct mcp_out *o)
{
	ssize_t w;

	while (o->off < o->len) {
		w = write(o->fd, o->buf + o->off, o->len - o->off);
		if (w == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		o->off += (size_t)w;
	}
	o->off = o->len = 0;
	/* a burst's buffer is not kept for good */
	if (o->cap > 4 * MCP_OUT_HIGH) {
		free(o->buf);
		o->buf = NULL;
		o->cap = 0;
	}
	return 0;
}

/* Bytes queued and not yet written. */
size_t
mcp_out_pending(const struct mcp_out *o)
{
	return o->len - o->off;
}

/* Free the queue (what is in it is lost). */
void
mcp_out_free(struct mcp_out *o)
{
	free(o->buf);
	memset(o, 0, sizeof(*o));
}
