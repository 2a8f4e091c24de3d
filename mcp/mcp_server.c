/*
 * mcp_server.c: the loop and the dispatch. One poll over stdin, stdout
 * (while output waits) and the broker's fd; every tools/call is a
 * request in flight on the broker connection with a callback, so no
 * call waits for another. Which requests are legal when is a table:
 * before initialize only initialize and ping are.
 */
#include "mcp.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

#define MCP_M_PREINIT 0x1 /* legal before initialize */

/* Requests the host may send, and who answers them. */
struct mcp_method {
	const char *name;
	int flags;
	void (*fn)(struct mcp_server *, json_t *id, json_t *params);
};

static void mcp_server_initialize(struct mcp_server *, json_t *, json_t *);
static void mcp_server_ping(struct mcp_server *, json_t *, json_t *);
static void mcp_server_tools_list(struct mcp_server *, json_t *, json_t *);
static void mcp_server_templates(struct mcp_server *, json_t *, json_t *);
static void mcp_server_res_list(struct mcp_server *, json_t *, json_t *);

static const struct mcp_method mcp_server_methods[] = {
    {"initialize", MCP_M_PREINIT, mcp_server_initialize},
    {"ping", MCP_M_PREINIT, mcp_server_ping},
    {"tools/list", 0, mcp_server_tools_list},
    {"tools/call", 0, mcp_call_start},
    {"resources/list", 0, mcp_server_res_list},
    {"resources/read", 0, mcp_res_read},
    {"resources/templates/list", 0, mcp_server_templates},
};

/* A server with nothing connected yet. */
void
mcp_server_init(struct mcp_server *s, const char *sock, const char *session,
    unsigned poll_s)
{
	memset(s, 0, sizeof(*s));
	mcp_line_init(&s->in, MCP_LINE_MAX);
	mcp_out_init(&s->out, STDOUT_FILENO, MCP_OUT_MAX);
	s->sock = sock;
	s->session = session;
	s->poll_s = poll_s;
	mcp_catalog_init(&s->cat);
	mcp_catalog_init(&s->next);
	TAILQ_INIT(&s->waiters);
	TAILQ_INIT(&s->calls);
}

/* Queue msg for stdout; a host that reads nothing for long ends us. */
void
mcp_send(struct mcp_server *s, json_t *msg)
{
	if (s->stopping)
		return;
	if (mcp_out_json(&s->out, msg) == -1)
		fatalx("the host has not read %zu bytes of our output: giving "
		       "up",
		    mcp_out_pending(&s->out));
}

/* Answer id with result (stolen). */
void
mcp_send_result(struct mcp_server *s, json_t *id, json_t *result)
{
	json_t *m = mcp_rpc_result(id, result);

	mcp_send(s, m);
	json_decref(m);
}

/* Answer id with an error of code and a formatted message. */
void
mcp_send_error(struct mcp_server *s, json_t *id, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	json_t *m;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	m = mcp_rpc_error(id, code, msg, NULL);
	mcp_send(s, m);
	json_decref(m);
}

/* A broker request id of this process: mcp-PID-N. */
void
mcp_server_req_id(struct mcp_server *s, char *buf, size_t len)
{
	(void)snprintf(buf, len, "mcp-%ld-%llu", (long)getpid(),
	    (unsigned long long)++s->next_req);
}

/* initialize: negotiate, then connect (the approval callback depends on
 * whether the host takes elicitations). */
static void
mcp_server_initialize(struct mcp_server *s, json_t *id, json_t *params)
{
	struct error e;
	json_t *res;

	if (s->initialized) {
		mcp_send_error(s, id, RPC_INVALID_REQUEST,
		    "Invalid Request: already initialized");
		return;
	}
	if ((res = mcp_init_answer(params, &s->caps, &e)) == NULL) {
		mcp_send_error(
		    s, id, RPC_INVALID_PARAMS, "Invalid params: %s", e.msg);
		return;
	}
	s->initialized = 1;
	mcp_send_result(s, id, res);
	log_info("client %s %s, protocol %s, elicitation %s", s->caps.name,
	    s->caps.version, s->caps.protocol,
	    s->caps.elicitation ? "yes" : "no");
	if (mcp_broker(s, &e) == NULL)
		log_warnx("%s", e.msg);
}

/* ping: an empty result. */
static void
mcp_server_ping(struct mcp_server *s, json_t *id, UNUSED json_t *params)
{
	mcp_send_result(s, id, json_object());
}

/* A cursor we never gave out is invalid params; -1 then. */
static int
mcp_server_no_cursor(struct mcp_server *s, json_t *id, json_t *params)
{
	json_t *c = params ? json_object_get(params, "cursor") : NULL;

	if (c == NULL || json_is_null(c))
		return 0;
	mcp_send_error(s, id, RPC_INVALID_PARAMS,
	    "Invalid params: no such cursor (lists come in one page)");
	return -1;
}

/* tools/list once the catalog is fresh. */
static void
mcp_server_tools_done(struct mcp_server *s, void *arg, const char *err)
{
	json_t *id = arg;

	if (err != NULL)
		mcp_send_error(s, id, RPC_INTERNAL_ERROR, "%s", err);
	else
		mcp_send_result(s, id,
		    json_pack("{s:o}", "tools", mcp_catalog_tools(&s->cat)));
	json_decref(id);
}

/* tools/list, from a fresh catalog. */
static void
mcp_server_tools_list(struct mcp_server *s, json_t *id, json_t *params)
{
	if (mcp_server_no_cursor(s, id, params) == -1)
		return;
	mcp_broker_refresh(s, mcp_server_tools_done, json_incref(id));
}

/* resources/list, after its cursor is checked. */
static void
mcp_server_res_list(struct mcp_server *s, json_t *id, json_t *params)
{
	if (mcp_server_no_cursor(s, id, params) == -1)
		return;
	mcp_res_list(s, id);
}

/* resources/templates/list: we have none. */
static void
mcp_server_templates(struct mcp_server *s, json_t *id, json_t *params)
{
	if (mcp_server_no_cursor(s, id, params) == -1)
		return;
	mcp_send_result(s, id, json_pack("{s:[]}", "resourceTemplates"));
}

/* A request: look it up, check that it is legal now, run it. */
static void
mcp_server_request(struct mcp_server *s, struct mcp_msg *m)
{
	const struct mcp_method *mt = NULL;
	size_t i;

	for (i = 0;
	     i < sizeof(mcp_server_methods) / sizeof(mcp_server_methods[0]);
	     i++)
		if (strcmp(m->method, mcp_server_methods[i].name) == 0)
			mt = &mcp_server_methods[i];
	if (mt == NULL) {
		mcp_send_error(s, m->id, RPC_METHOD_NOT_FOUND,
		    "Method not found: %.100s", m->method);
		return;
	}
	if (!s->initialized && !(mt->flags & MCP_M_PREINIT)) {
		mcp_send_error(s, m->id, RPC_INVALID_REQUEST,
		    "Invalid Request: not initialized (send initialize "
		    "first)");
		return;
	}
	mt->fn(s, m->id, m->params);
}

/* A notification: never answered, whatever it holds. */
static void
mcp_server_notify(struct mcp_server *s, struct mcp_msg *m)
{
	json_t *rid;

	if (strcmp(m->method, "notifications/initialized") == 0) {
		if (s->initialized && !s->ready) {
			s->ready = 1;
			s->next_poll_ms = now_mono_ms() + s->poll_s * 1000ULL;
		}
		return;
	}
	if (strcmp(m->method, "notifications/cancelled") == 0) {
		rid =
		    m->params ? json_object_get(m->params, "requestId") : NULL;
		if (mcp_rpc_id_valid(rid))
			mcp_call_cancel(s, rid);
		return;
	}
	log_debug("notification %.100s ignored", m->method);
}

/* One line from the host. */
static void
mcp_server_line(void *arg, const char *line, size_t len, int oversize)
{
	struct mcp_server *s = arg;
	struct mcp_msg m;
	size_t i;

	if (oversize) {
		mcp_send_error(s, NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: a message longer than %d bytes was "
		    "dropped",
		    MCP_LINE_MAX);
		return;
	}
	for (i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t')
			break;
	if (i == len) /* a blank line is no message */
		return;
	mcp_rpc_parse(line, len, &m);
	switch (m.kind) {
	case MCP_MSG_INVALID:
		mcp_send_error(s, m.id, m.code, "%s", m.why);
		break;
	case MCP_MSG_REQUEST:
		mcp_server_request(s, &m);
		break;
	case MCP_MSG_NOTIFY:
		mcp_server_notify(s, &m);
		break;
	case MCP_MSG_RESPONSE:
		mcp_approve_response(s, m.id, m.result, m.error);
		break;
	}
	mcp_rpc_free(&m);
}

/* Read what stdin has; 0 at its end. */
static int
mcp_server_read(struct mcp_server *s)
{
	char buf[MCP_READ_CHUNK];
	ssize_t n;

	n = read(STDIN_FILENO, buf, sizeof(buf));
	if (n == -1) {
		if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
			return 1;
		log_warn("read stdin");
		return 0;
	}
	if (n == 0)
		return 0;
	mcp_line_feed(&s->in, buf, (size_t)n, mcp_server_line, s);
	return 1;
}

/* Answer nothing more, and close the broker connection: the calls in
 * flight get their (cancelled) replies now and are forgotten. */
static void
mcp_server_close(struct mcp_server *s)
{
	s->stopping = 1;
	if (s->sb != NULL) {
		s->sb_closing = 1;
		sb_close(s->sb);
		s->sb_closing = 0;
		s->sb = NULL;
	}
}

/* Free everything the server holds, after mcp_server_run. */
void
mcp_server_free(struct mcp_server *s)
{
	mcp_server_close(s);
	mcp_line_free(&s->in);
	mcp_out_free(&s->out);
	mcp_catalog_free(&s->cat);
	mcp_catalog_free(&s->next);
	free(s->tools_seen);
	free(s->resources_seen);
	free(s->refresh_err);
	if (!TAILQ_EMPTY(&s->calls) || !TAILQ_EMPTY(&s->waiters))
		log_warnx("%zu calls left at exit", s->ncalls);
	free(s);
}

/* stdin ended: the host is done. Calls in flight are cancelled (the
 * broker kills what runs), what is queued is written, within 2 s. */
static int
mcp_server_stop(struct mcp_server *s)
{
	struct pollfd p;
	uint64_t end = now_mono_ms() + 2000;

	mcp_line_eof(&s->in, mcp_server_line, s);
	mcp_server_close(s);
	while (mcp_out_pending(&s->out) > 0 && now_mono_ms() < end) {
		p.fd = STDOUT_FILENO;
		p.events = POLLOUT;
		if (poll(&p, 1, 100) == -1 && errno != EINTR)
			break;
		if (mcp_out_flush(&s->out) == -1)
			break;
	}
	log_debug("stdin closed: exiting");
	return 0;
}

/* The loop: stdin, stdout and the broker, until stdin ends. */
int
mcp_server_run(struct mcp_server *s)
{
	struct pollfd pfd[3];
	uint64_t now;
	int n, timeout, sbi;

	for (;;) {
		if (mcp_out_flush(&s->out) == -1) {
			log_warn("write stdout (the host closed it?)");
			return 1;
		}
		n = 0;
		/* a negative fd is not polled: no input while the host
		 * does not read our output, no stdout while nothing waits */
		if ((mcp_out_pending(&s->out) >= MCP_OUT_HIGH) !=
		    s->throttled) {
			s->throttled = !s->throttled;
			log_debug("%zu bytes of output wait: %s reading stdin",
			    mcp_out_pending(&s->out),
			    s->throttled ? "stopped" : "resumed");
		}
		pfd[n].fd = s->throttled ? -1 : STDIN_FILENO;
		pfd[n].events = POLLIN;
		n++;
		pfd[n].fd = mcp_out_pending(&s->out) > 0 ? STDOUT_FILENO : -1;
		pfd[n].events = POLLOUT;
		n++;
		sbi = -1;
		if (s->sb != NULL && !s->sb_dead) {
			sbi = n;
			pfd[n].fd = sb_fd(s->sb);
			pfd[n].events = sb_events(s->sb);
			n++;
		}
		timeout = -1;
		if (s->ready && s->poll_s > 0) {
			now = now_mono_ms();
			timeout = s->next_poll_ms > now
			              ? (int)(s->next_poll_ms - now)
			              : 0;
		}
		if (poll(pfd, (nfds_t)n, timeout) == -1) {
			if (errno == EINTR)
				continue;
			fatal("poll");
		}
		if (pfd[1].revents & (POLLERR | POLLHUP)) {
			log_warnx("stdout closed by the host");
			return 1;
		}
		if (sbi != -1 && pfd[sbi].revents != 0 &&
		    sb_process(s->sb) == -1) {
			s->sb_dead = 1;
			mcp_broker_drop(s);
		}
		if (pfd[0].revents != 0 && !mcp_server_read(s))
			return mcp_server_stop(s);
		if (s->ready && s->poll_s > 0 &&
		    now_mono_ms() >= s->next_poll_ms) {
			s->next_poll_ms = now_mono_ms() + s->poll_s * 1000ULL;
			mcp_broker_poll(s);
		}
	}
}
