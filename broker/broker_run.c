/*
 * broker_run.c: a running call's pipes. stdin gets the client's bytes
 * and is closed. stdout and stderr are read to the end and counted and
 * hashed in full, but at most cap bytes are kept of the two together
 * (stdout first), so truncation is deterministic. The report pipe
 * carries the worker's FILES frame. When all three reach EOF (or the
 * drain runs out), done() is called once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"
#include "broker.h"

static void
run_maybe_done(struct run *r)
{
	if (r->done_sent || !r->out.eof || !r->err.eof || !r->rep.eof)
		return;
	r->done_sent = 1;
	r->done(r->arg);
}

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
stream_readcb(evutil_socket_t fd, short ev UNUSED, void *arg)
{
	struct run *r = arg;
	struct outstream *s = fd == r->out.fd   ? &r->out
	                      : fd == r->err.fd ? &r->err
	                                        : &r->rep;
	uint8_t buf[16384];
	size_t keep, room;
	ssize_t n;

	n = read(fd, buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		stream_close(s);
		run_maybe_done(r);
		return;
	}
	s->total += (uint64_t)n;
	if (s->sha != NULL)
		EVP_DigestUpdate(s->sha, buf, (size_t)n);
	room = s->cap - s->len;
	keep = room < (size_t)n ? room : (size_t)n;
	memcpy(s->buf + s->len, buf, keep);
	s->len += keep;
}

static void
stream_open(struct run *r, struct outstream *s, int fd, size_t cap, int hash)
{
	s->fd = fd;
	s->cap = cap;
	s->buf = xmalloc(cap ? cap : 1);
	if (hash && ((s->sha = EVP_MD_CTX_new()) == NULL ||
	                !EVP_DigestInit_ex(s->sha, EVP_sha256(), NULL)))
		fatalx("sha256 init");
	if (set_nonblock(fd) == -1)
		fatal("nonblock");
	s->ev = event_new(B->base, fd, EV_READ | EV_PERSIST, stream_readcb, r);
	if (s->ev == NULL || event_add(s->ev, NULL) == -1)
		fatalx("stream event");
}

/* Feed the client's stdin bytes; then close so the skill sees EOF. */
static void
stdin_writecb(evutil_socket_t fd, short ev UNUSED, void *arg)
{
	struct run *r = arg;
	ssize_t n;

	if (r->in_off < r->in_len) {
		n = write(fd, r->in_data + r->in_off, r->in_len - r->in_off);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n > 0)
			r->in_off += (size_t)n;
		if (n > 0 && r->in_off < r->in_len)
			return;
	}
	event_free(r->in_ev);
	r->in_ev = NULL;
	close(r->in_fd);
	r->in_fd = -1;
}

/* The worker's pipes arrived with RUN_STARTED; in is borrowed. */
void
run_open(struct run *r, const int fds[RUN_STARTED_FDS], size_t cap,
    const uint8_t *in, size_t in_len, void (*done)(void *), void *arg)
{
	r->done = done;
	r->arg = arg;
	stream_open(r, &r->out, fds[1], cap, 1);
	stream_open(r, &r->err, fds[2], cap, 1);
	stream_open(r, &r->rep, fds[3], FRAME_HDR_LEN + FRAME_MAX_INTERNAL, 0);
	r->in_fd = fds[0];
	r->in_data = in;
	r->in_len = in_len;
	if (set_nonblock(r->in_fd) == -1)
		fatal("nonblock");
	r->in_ev = event_new(
	    B->base, r->in_fd, EV_WRITE | EV_PERSIST, stdin_writecb, r);
	if (r->in_ev == NULL || event_add(r->in_ev, NULL) == -1)
		fatalx("stdin event");
}

static void
drain_timeout(evutil_socket_t fd UNUSED, short ev UNUSED, void *arg)
{
	struct run *r = arg;

	stream_close(&r->out);
	stream_close(&r->err);
	stream_close(&r->rep);
	run_maybe_done(r);
}

/* The worker is gone: what is left in the pipes has DRAIN_MS to come. */
void
run_drain(struct run *r)
{
	struct timeval tv = {0, DRAIN_MS * 1000};

	if (r->done_sent)
		return;
	r->drain = evtimer_new(B->base, drain_timeout, r);
	if (r->drain == NULL || evtimer_add(r->drain, &tv) == -1)
		fatalx("drain timer");
}

/* The FILES frame the worker wrote, strictly decoded. */
int
run_files(const struct run *r, struct msg_files *f, struct error *e)
{
	struct mp_doc d;
	uint64_t t;
	size_t blen;
	int rc;

	memset(f, 0, sizeof(*f));
	if (frame_check(r->rep.buf, r->rep.len, FRAME_MAX_INTERNAL, &blen, e) !=
	        FRAME_READY ||
	    r->rep.len != FRAME_HDR_LEN + blen)
		return error_set(e, ERR_INTERNAL, "no whole files report");
	if (mp_decode(&d, r->rep.buf + FRAME_HDR_LEN, blen, NULL, e) == -1)
		return -1;
	rc = msg_type_of(&d, &t, e) == -1 || t != MSG_FILES ||
	             msg_files_dec(&d, f, e) == -1
	         ? -1
	         : 0;
	mp_doc_free(&d);
	return rc;
}

/* Nothing open yet. */
void
run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->in_fd = r->out.fd = r->err.fd = r->rep.fd = -1;
}

void
run_close(struct run *r)
{
	if (r->in_ev != NULL)
		event_free(r->in_ev);
	if (r->in_fd != -1)
		close(r->in_fd);
	if (r->drain != NULL)
		event_free(r->drain);
	stream_close(&r->out);
	stream_close(&r->err);
	stream_close(&r->rep);
	free(r->out.buf);
	free(r->err.buf);
	free(r->rep.buf);
	EVP_MD_CTX_free(r->out.sha);
	EVP_MD_CTX_free(r->err.sha);
	run_init(r);
}
