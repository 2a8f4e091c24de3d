/*
 * broker_run.c: a running worker's pipes and the result reply. Output is
 * read to the end and counted in full, but at most output_bytes are
 * kept in all: stdout first, then stderr, so truncation is deterministic.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

static void run_maybe_finish(struct request *r);

static void
stream_close(struct outstream *s)
{
	if (s->ev != NULL)
		event_free(s->ev);
	s->ev = NULL;
	if (s->fd != -1)
		close(s->fd);
	s->fd = -1;
	s->eof = 1;
}

static void
stream_readcb(evutil_socket_t fd, short ev, void *arg)
{
	struct request *r = arg;
	struct outstream *s = fd == r->out.fd ? &r->out : &r->err;
	uint8_t buf[16384];
	size_t keep;
	ssize_t n;

	(void)ev;
	n = read(fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		stream_close(s);
		run_maybe_finish(r);
		return;
	}
	s->total += (uint64_t)n;
	EVP_DigestUpdate(s->sha, buf, (size_t)n);
	keep = s->cap - s->len < (size_t)n ? s->cap - s->len : (size_t)n;
	memcpy(s->buf + s->len, buf, keep);
	s->len += keep;
}

static void
stream_open(struct request *r, struct outstream *s, int fd)
{
	s->fd = fd;
	s->cap = r->ans.output_bytes;
	s->buf = xmalloc(s->cap ? s->cap : 1);
	s->sha = EVP_MD_CTX_new();
	if (s->sha == NULL || !EVP_DigestInit_ex(s->sha, EVP_sha256(), NULL))
		fatalx("sha256 init");
	if (set_nonblock(fd) == -1)
		fatal("nonblock");
	s->ev = event_new(B->base, fd, EV_READ | EV_PERSIST, stream_readcb, r);
	event_add(s->ev, NULL);
}

/* Feed the client's stdin bytes; then close so the skill sees EOF. */
static void
stdin_writecb(evutil_socket_t fd, short ev, void *arg)
{
	struct request *r = arg;
	ssize_t n;

	(void)ev;
	if (r->in_off < r->cr.stdin_len) {
		n = write(fd, r->cr.stdin_data + r->in_off,
		    r->cr.stdin_len - r->in_off);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n > 0)
			r->in_off += (size_t)n;
		if (n > 0 && r->in_off < r->cr.stdin_len)
			return;
	}
	if (r->in_ev)
		event_free(r->in_ev);
	r->in_ev = NULL;
	close(r->in_fd);
	r->in_fd = -1;
}

void
run_started(struct request *r, int in_fd, int out_fd, int err_fd)
{
	r->st = R_RUNNING;
	stream_open(r, &r->out, out_fd);
	stream_open(r, &r->err, err_fd);
	r->in_fd = in_fd;
	if (set_nonblock(in_fd) == -1)
		fatal("nonblock");
	r->in_ev =
	    event_new(B->base, in_fd, EV_WRITE | EV_PERSIST, stdin_writecb, r);
	event_add(r->in_ev, NULL);
}

static void
drain_timeout(evutil_socket_t fd, short ev, void *arg)
{
	struct request *r = arg;

	(void)fd;
	(void)ev;
	stream_close(&r->out);
	stream_close(&r->err);
	run_maybe_finish(r);
}

/* The worker is gone; give its pipes a moment to reach EOF. */
void
run_exited(struct request *r)
{
	struct timeval tv = {0, DRAIN_MS * 1000};

	r->exited = 1;
	if (!r->out.eof || !r->err.eof) {
		r->drain = evtimer_new(B->base, drain_timeout, r);
		evtimer_add(r->drain, &tv);
	}
	run_maybe_finish(r);
}

static void
run_maybe_finish(struct request *r)
{
	if (!r->exited || !r->out.eof || !r->err.eof)
		return;
	audit_request(r, "invoke.completed", "end",
	    r->x.err == ERR_NONE ? "success" : "failure");
	reply_result(r);
	request_end(r);
}

void
run_free(struct request *r)
{
	if (r->in_ev)
		event_free(r->in_ev);
	if (r->in_fd != -1)
		close(r->in_fd);
	if (r->drain)
		event_free(r->drain);
	stream_close(&r->out);
	stream_close(&r->err);
	free(r->out.buf);
	free(r->err.buf);
	EVP_MD_CTX_free(r->out.sha);
	EVP_MD_CTX_free(r->err.sha);
}

static void
enc_policy(struct mp_enc *m, const struct request *r)
{
	enc_str(m, "policy");
	enc_map(m, 3);
	enc_kbool(m, "allowed", r->ans.allowed);
	enc_kstr(m, "decision_reason", r->ans.reason ? r->ans.reason : "");
	enc_kstrarr(m, "matched_rules", r->ans.rules, r->ans.nrules);
}

/* stdout first, then stderr, within output_bytes together. */
static void
enc_output(struct mp_enc *m, const struct request *r)
{
	size_t cap = r->ans.output_bytes, so, se;

	so = r->out.len < cap ? r->out.len : cap;
	se = r->err.len < cap - so ? r->err.len : cap - so;
	enc_str(m, "output");
	enc_map(m, 5);
	enc_kbin(m, "stdout", r->out.buf, so);
	enc_kbin(m, "stderr", r->err.buf, se);
	enc_kbool(m, "truncated", r->out.total > so || r->err.total > se);
	enc_kuint(m, "stdout_bytes", r->out.total);
	enc_kuint(m, "stderr_bytes", r->err.total);
}

static void
enc_effects(struct mp_enc *m, const struct request *r)
{
	size_t i;

	enc_str(m, "effects");
	enc_map(m, 2);
	enc_str(m, "process");
	enc_map(m, 5);
	enc_str(m, "exit_code");
	if (r->x.exit_code >= 0)
		enc_int(m, r->x.exit_code);
	else
		enc_nil(m);
	enc_str(m, "signal");
	if (r->x.signal > 0)
		enc_int(m, r->x.signal);
	else
		enc_nil(m);
	enc_kuint(m, "duration_ms", r->x.duration_ms);
	enc_kuint(m, "cpu_ms", r->x.cpu_ms);
	enc_kuint(m, "max_rss_kb", r->x.max_rss_kb);
	enc_str(m, "files_written");
	enc_array(m, r->x.nfiles);
	for (i = 0; i < r->x.nfiles; i++) {
		enc_map(m, 3);
		enc_kstr(m, "path", r->x.files[i].path);
		enc_kuint(m, "size_bytes", r->x.files[i].size);
		enc_kstr(m, "sha256", r->x.files[i].sha256);
	}
}

static void
enc_error(struct mp_enc *m, enum err_type t, const char *msg)
{
	enc_str(m, "error");
	enc_map(m, 3);
	enc_kstr(m, "type", err_type_name(t));
	enc_kstr(m, "message", msg ? msg : "");
	enc_str(m, "details");
	enc_map(m, 0);
}

/* The result of invoke or authorize (the ToolInvokeResult shape). */
void
reply_result(struct request *r)
{
	int ran = r->st == R_RUNNING;
	enum err_type err = ran ? (enum err_type)r->x.err
	                        : (r->x.err ? (enum err_type)r->x.err
	                                    : (enum err_type)r->ans.err);
	int ok = err == ERR_NONE;
	struct mp_enc m;

	if (r->c == NULL)
		return;
	if (r->cr.type == CREQ_SKILLS || r->cr.type == CREQ_RELOAD) {
		client_error(r->c, &r->cr.id, err, r->x.message, 0);
		return;
	}
	enc_init(&m);
	enc_map(
	    &m, 7 + (ran ? 2 : 0) + !ok +
	            (r->ans.effective_len > 0 && r->cr.type == CREQ_AUTHORIZE));
	enc_kstr(&m, "type", "result");
	enc_str(&m, "id");
	client_id_enc(&m, &r->cr.id);
	enc_kbool(&m, "ok", ok);
	enc_kstr(&m, "skill", r->cr.skill);
	enc_kstr(&m, "command", r->cr.command);
	enc_kstr(&m, "timestamp_utc", r->ts);
	enc_policy(&m, r);
	if (r->ans.effective_len > 0 && r->cr.type == CREQ_AUTHORIZE) {
		enc_str(&m, "effective");
		if (msgpack_sbuffer_write(&m.sb, (const char *)r->ans.effective,
		        r->ans.effective_len))
			fatalx("encode");
	}
	if (ran) {
		enc_output(&m, r);
		enc_effects(&m, r);
	}
	if (!ok)
		enc_error(&m, err, r->x.message ? r->x.message : r->ans.reason);
	client_send(r->c, &m);
	enc_free(&m);
}
