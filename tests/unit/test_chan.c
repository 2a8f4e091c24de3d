/* test_chan.c: internal channels deliver whole messages and fds, in order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "testenc.h"
#include "../../proto/chan.h"
#include "../../proto/frame.h"

struct pair {
	struct chan a, b; /* a writes, b reads (mostly) */
};

static int
pair_setup(void **state)
{
	struct pair *p = calloc(1, sizeof(*p));
	int sv[2];

	if (p == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1 ||
	    set_nonblock(sv[0]) == -1 || set_nonblock(sv[1]) == -1)
		return -1;
	chan_init(&p->a, sv[0], "a");
	chan_init(&p->b, sv[1], "b");
	*state = p;
	return 0;
}

static int
pair_teardown(void **state)
{
	struct pair *p = *state;

	chan_close(&p->a);
	chan_close(&p->b);
	free(p);
	return 0;
}

/* A test message: {"seq": seq, "s": s}. */
static void
enc_test_msg(struct mp_enc *m, uint64_t seq, const char *s)
{
	enc_init(m);
	enc_map(m, 2);
	enc_kuint(m, "seq", seq);
	enc_kstr(m, "s", s);
}

static void
queue_msg(struct chan *c, uint64_t seq, const char *s, const int *fds, int nfds)
{
	struct mp_enc m;

	enc_test_msg(&m, seq, s);
	chan_queue(c, &m, fds, nfds);
	enc_free(&m);
}

static void
check_msg(const struct mp_doc *d, uint64_t seq, const char *s)
{
	struct error e;
	uint64_t got = 0;
	char *str = NULL;

	if (mp_uint(d->root, "seq", 1, UINT64_MAX, &got, &e) == -1)
		fail_msg("seq: %s", e.msg);
	assert_int_equal(got, seq);
	if (mp_str(d->root, "s", 1, 1024 * 1024, &str, &e) == -1)
		fail_msg("s: %s", e.msg);
	assert_string_equal(str, s);
	free(str);
}

/* Take the next message and check it. */
static void
expect_msg(struct chan *c, uint64_t seq, const char *s)
{
	struct mp_doc d;
	struct error e;
	int r;

	memset(&e, 0, sizeof(e));
	r = chan_next(c, &d, &e);
	if (r != 1)
		fail_msg("chan_next = %d (%s), want a message", r, e.msg);
	check_msg(&d, seq, s);
	mp_doc_free(&d);
}

/* Read until the socket is drained; returns the number of reads. */
static int
read_all(struct chan *c)
{
	int r, n = 0;

	while ((r = chan_read(c)) == 1)
		n++;
	assert_int_equal(r, -2);
	return n;
}

static void
test_one_message(void **state)
{
	struct pair *p = *state;
	struct mp_doc d;
	struct error e;

	assert_int_equal(chan_pending(&p->a), 0);
	queue_msg(&p->a, 1, "hello", NULL, 0);
	assert_int_equal(chan_pending(&p->a), 1);
	assert_int_equal(chan_flush(&p->a), 0);
	assert_int_equal(chan_pending(&p->a), 0);
	/* Nothing to read yet on the writer's side. */
	assert_int_equal(chan_read(&p->a), -2);

	assert_int_equal(chan_read(&p->b), 1);
	expect_msg(&p->b, 1, "hello");
	assert_int_equal(chan_next(&p->b, &d, &e), 0);
	assert_int_equal(chan_read(&p->b), -2);
	assert_int_equal(chan_next(&p->b, &d, &e), 0);
	/* Flushing an empty queue is a no-op. */
	assert_int_equal(chan_flush(&p->a), 0);
}

/* Several messages in one read; each decoded document stays intact. */
static void
test_several_in_one_read(void **state)
{
	struct pair *p = *state;
	struct mp_doc d[3], none;
	struct error e;
	char big[1001];

	memset(big, 'q', 1000);
	big[1000] = '\0';
	queue_msg(&p->a, 10, "first", NULL, 0);
	queue_msg(&p->a, 11, big, NULL, 0);
	queue_msg(&p->a, 12, "third", NULL, 0);
	assert_int_equal(chan_flush(&p->a), 0);
	assert_int_equal(read_all(&p->b), 1);

	assert_int_equal(chan_next(&p->b, &d[0], &e), 1);
	assert_int_equal(chan_next(&p->b, &d[1], &e), 1);
	assert_int_equal(chan_next(&p->b, &d[2], &e), 1);
	assert_int_equal(chan_next(&p->b, &none, &e), 0);
	/* Later reads reuse the buffer; the documents must not care. */
	queue_msg(&p->a, 13, "fourth, longer than the others", NULL, 0);
	assert_int_equal(chan_flush(&p->a), 0);
	assert_int_equal(read_all(&p->b), 1);
	check_msg(&d[0], 10, "first");
	check_msg(&d[1], 11, big);
	check_msg(&d[2], 12, "third");
	mp_doc_free(&d[0]);
	mp_doc_free(&d[1]);
	mp_doc_free(&d[2]);
	expect_msg(&p->b, 13, "fourth, longer than the others");
}

/* Write raw bytes to the reader's peer socket. */
static void
raw_write(struct pair *p, const void *buf, size_t len)
{
	assert_int_equal(write_full(p->a.fd, buf, len), 0);
}

static void
test_split_across_reads(void **state)
{
	struct pair *p = *state;
	struct mp_enc m1, m2;
	struct mp_doc d;
	struct error e;
	uint8_t *f1, *f2;
	size_t l1, l2;

	enc_test_msg(&m1, 1, "split me");
	enc_test_msg(&m2, 2, "and me too");
	l1 = FRAME_HDR_LEN + m1.sb.size;
	l2 = FRAME_HDR_LEN + m2.sb.size;
	f1 = malloc(l1);
	f2 = malloc(l2);
	assert_non_null(f1);
	assert_non_null(f2);
	frame_put_len(f1, m1.sb.size);
	memcpy(f1 + FRAME_HDR_LEN, m1.sb.data, m1.sb.size);
	frame_put_len(f2, m2.sb.size);
	memcpy(f2 + FRAME_HDR_LEN, m2.sb.data, m2.sb.size);

	/* Half a header, the rest of it plus some body, all but one byte. */
	raw_write(p, f1, 2);
	assert_int_equal(chan_read(&p->b), 1);
	assert_int_equal(chan_next(&p->b, &d, &e), 0);
	raw_write(p, f1 + 2, 5);
	assert_int_equal(chan_read(&p->b), 1);
	assert_int_equal(chan_next(&p->b, &d, &e), 0);
	raw_write(p, f1 + 7, l1 - 8);
	assert_int_equal(chan_read(&p->b), 1);
	assert_int_equal(chan_next(&p->b, &d, &e), 0);
	/* The last byte of message 1 arrives with half of message 2. */
	raw_write(p, f1 + l1 - 1, 1);
	raw_write(p, f2, l2 / 2);
	assert_int_equal(read_all(&p->b), 1);
	expect_msg(&p->b, 1, "split me");
	assert_int_equal(chan_next(&p->b, &d, &e), 0);
	raw_write(p, f2 + l2 / 2, l2 - l2 / 2);
	assert_int_equal(read_all(&p->b), 1);
	expect_msg(&p->b, 2, "and me too");
	assert_int_equal(chan_next(&p->b, &d, &e), 0);
	free(f1);
	free(f2);
	enc_free(&m1);
	enc_free(&m2);
}

/* Write a marker through fd and read it back from the pipe's read end. */
static void
check_pipe(int wfd, int rfd, const char *marker)
{
	char buf[32];
	ssize_t n;

	assert_true(wfd >= 0);
	assert_true(fcntl(wfd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write_full(wfd, marker, strlen(marker)), 0);
	n = read(rfd, buf, sizeof(buf));
	assert_int_equal(n, (ssize_t)strlen(marker));
	assert_memory_equal(buf, marker, (size_t)n);
	close(wfd);
	/* The channel closed its copy: with ours gone, the pipe is at EOF. */
	assert_int_equal(read(rfd, buf, sizeof(buf)), 0);
}

static void
test_fd_passing(void **state)
{
	struct pair *p = *state;
	int p1[2], p2[2], p3[2], p4[2], fds[2];

	assert_int_equal(pipe(p1), 0);
	assert_int_equal(pipe(p2), 0);
	assert_int_equal(pipe(p3), 0);
	assert_int_equal(pipe(p4), 0);
	assert_int_equal(set_nonblock(p1[0]), 0);
	assert_int_equal(set_nonblock(p2[0]), 0);
	assert_int_equal(set_nonblock(p3[0]), 0);
	assert_int_equal(set_nonblock(p4[0]), 0);

	queue_msg(&p->a, 0, "no fds", NULL, 0);
	queue_msg(&p->a, 1, "one fd", &p1[1], 1);
	queue_msg(&p->a, 2, "nothing here", NULL, 0);
	fds[0] = p2[1];
	fds[1] = p3[1];
	queue_msg(&p->a, 3, "two fds", fds, 2);
	queue_msg(&p->a, 4, "last fd", &p4[1], 1);
	assert_int_equal(chan_flush(&p->a), 0);
	read_all(&p->b);

	expect_msg(&p->b, 0, "no fds");
	expect_msg(&p->b, 1, "one fd");
	check_pipe(chan_take_fd(&p->b), p1[0], "one");
	expect_msg(&p->b, 2, "nothing here");
	expect_msg(&p->b, 3, "two fds");
	check_pipe(chan_take_fd(&p->b), p2[0], "two");
	check_pipe(chan_take_fd(&p->b), p3[0], "three");
	expect_msg(&p->b, 4, "last fd");
	check_pipe(chan_take_fd(&p->b), p4[0], "four");
	assert_int_equal(chan_take_fd(&p->b), -1);
	close(p1[0]);
	close(p2[0]);
	close(p3[0]);
	close(p4[0]);
}

/* An fd travels with its message even when the reader is slow. */
static void
test_fd_with_each_read(void **state)
{
	struct pair *p = *state;
	int p1[2], p2[2];

	assert_int_equal(pipe(p1), 0);
	assert_int_equal(pipe(p2), 0);
	assert_int_equal(set_nonblock(p1[0]), 0);
	assert_int_equal(set_nonblock(p2[0]), 0);
	assert_int_equal(chan_take_fd(&p->b), -1);
	queue_msg(&p->a, 1, "first", &p1[1], 1);
	assert_int_equal(chan_flush(&p->a), 0);
	read_all(&p->b);
	queue_msg(&p->a, 2, "second", &p2[1], 1);
	assert_int_equal(chan_flush(&p->a), 0);
	read_all(&p->b);
	expect_msg(&p->b, 1, "first");
	expect_msg(&p->b, 2, "second");
	/* Oldest first. */
	check_pipe(chan_take_fd(&p->b), p1[0], "a");
	check_pipe(chan_take_fd(&p->b), p2[0], "b");
	close(p1[0]);
	close(p2[0]);
}

/* An idle channel gives its buffers back, and works on as before. */
static void
test_shrink(void **state)
{
	struct pair *p = *state;

	queue_msg(&p->a, 1, "one", NULL, 0);
	assert_true(p->a.ocap > 0);
	chan_shrink(&p->a); /* something to send: kept */
	assert_int_equal(chan_pending(&p->a), 1);
	assert_int_equal(chan_flush(&p->a), 0);
	read_all(&p->b);
	chan_shrink(&p->b); /* a message not taken yet: kept */
	assert_true(p->b.rcap > 0);
	expect_msg(&p->b, 1, "one");
	chan_shrink(&p->a);
	chan_shrink(&p->b);
	assert_int_equal(p->a.ocap, 0);
	assert_null(p->a.obuf);
	assert_int_equal(p->b.rcap, 0);
	assert_null(p->b.rbuf);
	queue_msg(&p->a, 2, "two", NULL, 0);
	assert_int_equal(chan_flush(&p->a), 0);
	read_all(&p->b);
	expect_msg(&p->b, 2, "two");
}

static void
test_close_releases_fds(void **state)
{
	struct pair *p = *state;
	int p1[2], p2[2];
	char c;

	assert_int_equal(pipe(p1), 0);
	assert_int_equal(pipe(p2), 0);
	assert_int_equal(set_nonblock(p1[0]), 0);
	assert_int_equal(set_nonblock(p2[0]), 0);
	/* Received but never taken: chan_close closes it. */
	queue_msg(&p->a, 1, "x", &p1[1], 1);
	assert_int_equal(chan_flush(&p->a), 0);
	read_all(&p->b);
	assert_int_equal(read(p1[0], &c, 1), -1);
	assert_int_equal(errno, EAGAIN);
	chan_close(&p->b);
	assert_int_equal(read(p1[0], &c, 1), 0);
	/* Queued but never sent: chan_close closes it too. */
	queue_msg(&p->a, 2, "y", &p2[1], 1);
	chan_close(&p->a);
	assert_int_equal(read(p2[0], &c, 1), 0);
	close(p1[0]);
	close(p2[0]);
}

static void
test_eof(void **state)
{
	struct pair *p = *state;
	struct mp_doc d;
	struct error e;

	/* A whole message, then half of another, then EOF. */
	queue_msg(&p->a, 7, "before eof", NULL, 0);
	assert_int_equal(chan_flush(&p->a), 0);
	raw_write(p, "\x00\x00\x00\x09\x82", 5);
	chan_close(&p->a);
	assert_int_equal(chan_read(&p->b), 1);
	assert_int_equal(chan_read(&p->b), 0);
	assert_int_equal(chan_read(&p->b), 0);
	/* What arrived before EOF is still delivered... */
	expect_msg(&p->b, 7, "before eof");
	/* ...and the partial frame is never a message. */
	assert_int_equal(chan_next(&p->b, &d, &e), 0);
}

static void
test_flush_backpressure(void **state)
{
	struct pair *p = *state;
	enum { NMSG = 24, MSGLEN = 100000 };
	char *s = malloc(MSGLEN + 1);
	uint64_t next = 0;
	struct mp_doc d;
	struct error e;
	int i, r, rounds = 0, saw_pending = 0;

	assert_non_null(s);
	for (i = 0; i < NMSG; i++) {
		memset(s, 'a' + i, MSGLEN);
		s[MSGLEN] = '\0';
		queue_msg(&p->a, (uint64_t)i, s, NULL, 0);
	}
	while (next < NMSG) {
		assert_true(++rounds < 10000);
		r = chan_flush(&p->a);
		assert_true(r == 0 || r == 1);
		if (r == 1) {
			saw_pending = 1;
			assert_int_equal(chan_pending(&p->a), 1);
		}
		while ((r = chan_read(&p->b)) == 1)
			;
		assert_int_equal(r, -2);
		while ((r = chan_next(&p->b, &d, &e)) == 1) {
			memset(s, 'a' + (int)next, MSGLEN);
			check_msg(&d, next, s);
			mp_doc_free(&d);
			next++;
		}
		assert_int_equal(r, 0);
	}
	/* 2.4 MB cannot fit a socket buffer: some flush had to wait. */
	assert_int_equal(saw_pending, 1);
	assert_int_equal(chan_pending(&p->a), 0);
	free(s);
}

static void
test_flush_to_closed_peer(void **state)
{
	struct pair *p = *state;

	chan_close(&p->b);
	queue_msg(&p->a, 1, "nobody listens", NULL, 0);
	/* EPIPE, without a SIGPIPE killing the process. */
	assert_int_equal(chan_flush(&p->a), -1);
	assert_int_equal(errno, EPIPE);
}

static void
test_bad_frames(void **state)
{
	struct pair *p = *state;
	struct mp_doc d;
	struct error e;
	uint8_t hdr[FRAME_HDR_LEN];

	/* A frame whose body is not msgpack is consumed and reported. */
	raw_write(p, "\x00\x00\x00\x01\xc1", 5);
	queue_msg(&p->a, 5, "after garbage", NULL, 0);
	assert_int_equal(chan_flush(&p->a), 0);
	read_all(&p->b);
	memset(&e, 0, sizeof(e));
	assert_int_equal(chan_next(&p->b, &d, &e), -1);
	assert_int_equal(e.type, ERR_BAD_REQUEST);
	assert_null(d.root);
	expect_msg(&p->b, 5, "after garbage");

	/* A root that is not a map. */
	raw_write(p, "\x00\x00\x00\x02\x91\x01", 6);
	read_all(&p->b);
	assert_int_equal(chan_next(&p->b, &d, &e), -1);
	assert_non_null(strstr(e.msg, "not a map"));

	/* Oversized and empty frames are protocol errors. */
	frame_put_len(hdr, FRAME_MAX_INTERNAL + 1);
	raw_write(p, hdr, sizeof(hdr));
	read_all(&p->b);
	memset(&e, 0, sizeof(e));
	assert_int_equal(chan_next(&p->b, &d, &e), -1);
	assert_non_null(strstr(e.msg, "exceeds"));
}

static void
test_empty_frame(void **state)
{
	struct pair *p = *state;
	struct mp_doc d;
	struct error e;

	raw_write(p, "\x00\x00\x00\x00", 4);
	read_all(&p->b);
	memset(&e, 0, sizeof(e));
	assert_int_equal(chan_next(&p->b, &d, &e), -1);
	assert_non_null(strstr(e.msg, "empty frame"));
}

#define PAIR_TEST(f)                                                           \
	cmocka_unit_test_setup_teardown(f, pair_setup, pair_teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    PAIR_TEST(test_one_message),
	    PAIR_TEST(test_several_in_one_read),
	    PAIR_TEST(test_split_across_reads),
	    PAIR_TEST(test_fd_passing),
	    PAIR_TEST(test_fd_with_each_read),
	    PAIR_TEST(test_shrink),
	    PAIR_TEST(test_close_releases_fds),
	    PAIR_TEST(test_eof),
	    PAIR_TEST(test_flush_backpressure),
	    PAIR_TEST(test_flush_to_closed_peer),
	    PAIR_TEST(test_bad_frames),
	    PAIR_TEST(test_empty_frame),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
