/*
 * test_peer.c: proto/peer.c through a real socketpair and a libevent
 * base. A permitted message reaches its handler; anything else ends the
 * peer exactly once, and no handler runs after that.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../lib/log.h"
#include "../../lib/util.h"
#include "../../proto/frame.h"
#include "../../proto/msg.h"
#include "../../proto/peer.h"

/* Message types of the test table (any 0..255 will do). */
#define T_PLAIN 10
#define T_ONCE 11
#define T_FAIL 12
#define T_FDS 13
#define T_KILL 14
#define T_OTHER 15
#define T_UNKNOWN 99

#define FDS_MAX 8

struct fix {
	struct event_base *base;
	struct peer p;
	struct chan tc; /* the test's end of the socketpair */
	int calls[256]; /* handler calls by type */
	int ncalls;
	uint64_t seq[16]; /* "n" of each T_PLAIN, in arrival order */
	int nseq;
	char fdbytes[FDS_MAX + 1]; /* a byte read from each fd, in order */
	int nfdbytes;
	int dead;
	char why[64];
};

/* Count a call; dispatching to a dead peer is a bug in itself. */
static void
note(struct peer *p, uint64_t t)
{
	struct fix *f = p->arg;

	assert_true(p->alive);
	f->calls[t]++;
	f->ncalls++;
}

static int
h_plain(struct peer *p, const struct mp_doc *d)
{
	struct fix *f = p->arg;
	struct error e;
	uint64_t n = 0;

	note(p, T_PLAIN);
	if (mp_uint(d->root, "n", 0, UINT64_MAX, &n, &e) == -1)
		return -1;
	if (f->nseq < 16)
		f->seq[f->nseq++] = n;
	return 0;
}

static int
h_once(struct peer *p, const struct mp_doc *d)
{
	(void)d;
	note(p, T_ONCE);
	return 0;
}

static int
h_fail(struct peer *p, const struct mp_doc *d)
{
	(void)d;
	note(p, T_FAIL);
	return -1;
}

/* Take "n" fds and read one byte from each: which fd came, in order. */
static int
h_fds(struct peer *p, const struct mp_doc *d)
{
	struct fix *f = p->arg;
	struct error e;
	uint64_t n = 0, i;
	int fd;

	note(p, T_FDS);
	if (mp_uint(d->root, "n", 1, FDS_MAX, &n, &e) == -1)
		return -1;
	for (i = 0; i < n; i++) {
		if ((fd = chan_take_fd(&p->ch)) == -1)
			return -1;
		if (f->nfdbytes < FDS_MAX &&
		    read(fd, &f->fdbytes[f->nfdbytes], 1) == 1)
			f->nfdbytes++;
		close(fd);
	}
	return 0;
}

/* A handler may end its own peer; on_dead must still run only once. */
static int
h_kill(struct peer *p, const struct mp_doc *d)
{
	(void)d;
	note(p, T_KILL);
	peer_kill(p, "the handler ended it");
	return -1;
}

static int
h_other(struct peer *p, const struct mp_doc *d)
{
	(void)d;
	note(p, T_OTHER);
	return 0;
}

static const struct peer_handler table[] = {
    {T_PLAIN, 0, h_plain},
    {T_ONCE, PH_ONCE, h_once},
    {T_FAIL, 0, h_fail},
    {T_FDS, 0, h_fds},
    {T_KILL, 0, h_kill},
    {T_OTHER, PH_ONCE, h_other},
    {0, 0, NULL},
};

static void
on_dead(struct peer *p, const char *why)
{
	struct fix *f = p->arg;

	assert_false(p->alive);
	f->dead++;
	snprintf(f->why, sizeof(f->why), "%s", why);
}

static int
setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	int sv[2];

	if (f == NULL || (f->base = event_base_new()) == NULL ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	peer_init(&f->p, f->base, sv[0], "test", table, on_dead, f);
	chan_init(&f->tc, sv[1], "test end");
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fix *f = *state;
	int dead = f->dead;

	peer_kill(&f->p, "teardown");
	/* A peer already dead is not reported again. */
	if (dead > 0 && f->dead != dead)
		return -1;
	chan_close(&f->tc);
	event_base_free(f->base);
	free(f);
	return 0;
}

/* Run the loop until nothing is ready. */
static void
pump(struct fix *f)
{
	int i;

	for (i = 0; i < 8; i++)
		assert_int_not_equal(
		    event_base_loop(f->base, EVLOOP_NONBLOCK), -1);
}

/* Queue {t, n} on the test's end, with fds (which the channel closes). */
static void
queue(struct fix *f, uint64_t t, uint64_t n, const int *fds, int nfds)
{
	struct mp_enc m;

	enc_init(&m);
	msg_begin(&m, (enum msg_type)t);
	enc_kuint(&m, "n", n);
	msg_end(&m);
	chan_queue(&f->tc, &m, fds, nfds);
	enc_free(&m);
}

static void
flush(struct fix *f)
{
	assert_int_equal(chan_flush(&f->tc), 0);
}

static void
raw(struct fix *f, const void *buf, size_t len)
{
	assert_int_equal(write_full(f->tc.fd, buf, len), 0);
}

/* The peer is gone once, for why, and closed its end of the channel. */
static void
assert_dead_once(struct fix *f, const char *why)
{
	ssize_t n;
	char c;

	assert_int_equal(f->dead, 1);
	assert_false(f->p.alive);
	assert_string_equal(f->why, why);
	/* Its end is closed (a reset when it left data unread). */
	n = read(f->tc.fd, &c, 1);
	assert_true(n == 0 || (n == -1 && errno == ECONNRESET));
	pump(f);
	assert_int_equal(f->dead, 1);
}

/* Every permitted message reaches its handler, in order. */
static void
test_permitted(void **state)
{
	struct fix *f = *state;

	queue(f, T_PLAIN, 1, NULL, 0);
	queue(f, T_ONCE, 0, NULL, 0);
	queue(f, T_PLAIN, 2, NULL, 0);
	queue(f, T_PLAIN, 3, NULL, 0);
	flush(f);
	pump(f);
	assert_int_equal(f->calls[T_PLAIN], 3);
	assert_int_equal(f->calls[T_ONCE], 1);
	assert_int_equal(f->nseq, 3);
	assert_int_equal(f->seq[0], 1);
	assert_int_equal(f->seq[1], 2);
	assert_int_equal(f->seq[2], 3);
	/* Messages in separate reads too. */
	queue(f, T_PLAIN, 4, NULL, 0);
	flush(f);
	pump(f);
	assert_int_equal(f->calls[T_PLAIN], 4);
	assert_int_equal(f->seq[3], 4);
	assert_int_equal(f->dead, 0);
	assert_true(f->p.alive);
}

/* A type not in the table ends the peer; what follows is never read. */
static void
test_unknown_type(void **state)
{
	struct fix *f = *state;

	queue(f, T_PLAIN, 1, NULL, 0);
	queue(f, T_UNKNOWN, 0, NULL, 0);
	queue(f, T_PLAIN, 2, NULL, 0);
	flush(f);
	pump(f);
	assert_int_equal(f->calls[T_PLAIN], 1);
	assert_int_equal(f->ncalls, 1);
	assert_dead_once(f, "protocol violation");
}

/* A second ONCE message ends the peer; another ONCE type is separate. */
static void
test_once_repeated(void **state)
{
	struct fix *f = *state;

	queue(f, T_ONCE, 0, NULL, 0);
	queue(f, T_OTHER, 0, NULL, 0);
	flush(f);
	pump(f);
	assert_int_equal(f->calls[T_ONCE], 1);
	assert_int_equal(f->calls[T_OTHER], 1);
	assert_int_equal(f->dead, 0);
	/* In a later read, with a permitted message behind it. */
	queue(f, T_ONCE, 0, NULL, 0);
	queue(f, T_PLAIN, 1, NULL, 0);
	flush(f);
	pump(f);
	assert_int_equal(f->calls[T_ONCE], 1);
	assert_int_equal(f->calls[T_PLAIN], 0);
	assert_int_equal(f->ncalls, 2);
	assert_dead_once(f, "protocol violation");
}

/* Each malformed frame, followed by a good message in the same write. */
#define BYTES(s) s, sizeof(s) - 1
static const struct {
	const char *name;
	const char *bytes;
	size_t len;
	const char *why;
} bad_frames[] = {
    {"empty frame", BYTES("\x00\x00\x00\x00"), "malformed message"},
    {"oversized frame", BYTES("\x7f\xff\xff\xff"), "malformed message"},
    {"not msgpack", BYTES("\x00\x00\x00\x01\xc1"), "malformed message"},
    {"cut msgpack", BYTES("\x00\x00\x00\x02\x81\xa1"), "malformed message"},
    {"trailing bytes", BYTES("\x00\x00\x00\x02\x80\x80"), "malformed message"},
    {"not a map", BYTES("\x00\x00\x00\x03\x92\x0a\x0a"), "malformed message"},
    {"no t", BYTES("\x00\x00\x00\x04\x81\xa1n\x01"), "protocol violation"},
    {"t a string", BYTES("\x00\x00\x00\x05\x81\xa1t\xa1x"),
        "protocol violation"},
    {"t too big", BYTES("\x00\x00\x00\x06\x81\xa1t\xcd\x01\x00"),
        "protocol violation"},
};

static void
test_malformed(void **state)
{
	struct fix *f;
	uint32_t hlen;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_frames) / sizeof(bad_frames[0]); i++) {
		hlen = frame_get_len((const uint8_t *)bad_frames[i].bytes);
		/* A frame that claims a body carries exactly that body. */
		if (hlen > 0 && hlen <= FRAME_MAX_INTERNAL)
			assert_int_equal(
			    hlen, bad_frames[i].len - FRAME_HDR_LEN);
		assert_int_equal(setup((void **)&f), 0);
		queue(f, T_PLAIN, 1, NULL, 0);
		flush(f);
		raw(f, bad_frames[i].bytes, bad_frames[i].len);
		queue(f, T_PLAIN, 2, NULL, 0);
		flush(f);
		pump(f);
		if (f->calls[T_PLAIN] != 1 || f->dead != 1 ||
		    strcmp(f->why, bad_frames[i].why) != 0)
			fail_msg("%s: %d calls, dead %d (%s)",
			    bad_frames[i].name, f->calls[T_PLAIN], f->dead,
			    f->why);
		assert_dead_once(f, bad_frames[i].why);
		assert_int_equal(teardown((void **)&f), 0);
	}
}

/* A handler's -1 ends the peer, and nothing behind it is dispatched. */
static void
test_handler_fails(void **state)
{
	struct fix *f = *state;

	queue(f, T_FAIL, 0, NULL, 0);
	queue(f, T_PLAIN, 1, NULL, 0);
	queue(f, T_ONCE, 0, NULL, 0);
	flush(f);
	pump(f);
	assert_int_equal(f->calls[T_FAIL], 1);
	assert_int_equal(f->ncalls, 1);
	assert_dead_once(f, "protocol violation");
}

/* A handler that ends its own peer: on_dead once, with its reason. */
static void
test_handler_kills(void **state)
{
	struct fix *f = *state;

	queue(f, T_KILL, 0, NULL, 0);
	queue(f, T_PLAIN, 1, NULL, 0);
	flush(f);
	pump(f);
	assert_int_equal(f->ncalls, 1);
	assert_dead_once(f, "the handler ended it");
}

/* The other end closing is a death too, reported once. */
static void
test_eof(void **state)
{
	struct fix *f = *state;

	queue(f, T_PLAIN, 1, NULL, 0);
	flush(f);
	chan_close(&f->tc);
	pump(f);
	assert_int_equal(f->calls[T_PLAIN], 1);
	assert_int_equal(f->dead, 1);
	assert_string_equal(f->why, "channel closed");
	pump(f);
	assert_int_equal(f->dead, 1);
}

/* A pipe whose write end carries marker c; the read end goes out. */
static int
marked_pipe(char c)
{
	int pp[2];

	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	assert_int_equal(write(pp[1], &c, 1), 1);
	close(pp[1]);
	return pp[0];
}

/* fds arrive with their messages, in the order they were sent. */
static void
test_fds_in_order(void **state)
{
	struct fix *f = *state;
	int fds[3];

	fds[0] = marked_pipe('a');
	queue(f, T_FDS, 1, fds, 1);
	queue(f, T_PLAIN, 1, NULL, 0);
	fds[0] = marked_pipe('b');
	fds[1] = marked_pipe('c');
	fds[2] = marked_pipe('d');
	queue(f, T_FDS, 3, fds, 3);
	flush(f);
	pump(f);
	fds[0] = marked_pipe('e');
	fds[1] = marked_pipe('f');
	queue(f, T_FDS, 2, fds, 2);
	flush(f);
	pump(f);
	assert_int_equal(f->calls[T_FDS], 3);
	assert_int_equal(f->nfdbytes, 6);
	assert_memory_equal(f->fdbytes, "abcdef", 6);
	assert_int_equal(chan_take_fd(&f->p.ch), -1);
	assert_int_equal(f->dead, 0);
}

/* A message that promises an fd it did not bring is a violation. */
static void
test_fd_missing(void **state)
{
	struct fix *f = *state;

	queue(f, T_FDS, 1, NULL, 0);
	queue(f, T_PLAIN, 1, NULL, 0);
	flush(f);
	pump(f);
	assert_int_equal(f->ncalls, 1);
	assert_dead_once(f, "protocol violation");
}

/* peer_send delivers the message, and its fds, which it then closes. */
static void
test_send(void **state)
{
	struct fix *f = *state;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint64_t t;
	int pp[2], fd;
	char c;

	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	enc_init(&m);
	msg_begin(&m, (enum msg_type)T_PLAIN);
	enc_kuint(&m, "n", 7);
	msg_end(&m);
	peer_send(&f->p, &m, &pp[1], 1);
	enc_free(&m);
	assert_int_equal(chan_read(&f->tc), 1);
	assert_int_equal(chan_next(&f->tc, &d, &e), 1);
	assert_int_equal(msg_type_of(&d, &t, &e), 0);
	assert_int_equal(t, T_PLAIN);
	mp_doc_free(&d);
	fd = chan_take_fd(&f->tc);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	/* The sender's copy is closed: with ours gone, the pipe is at EOF. */
	assert_int_equal(read(pp[0], &c, 1), 1);
	assert_int_equal(read(pp[0], &c, 1), 0);
	close(pp[0]);
}

/*
 * A send that fails (the other end is gone) ends the peer from the
 * loop, not inside peer_send: the caller may be in the middle of
 * changing what on_dead would tear down.
 */
static void
test_send_fails_later(void **state)
{
	struct fix *f = *state;
	struct mp_enc m;
	int pp[2];
	char c;

	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	chan_close(&f->tc);
	enc_init(&m);
	msg_begin(&m, (enum msg_type)T_PLAIN);
	msg_end(&m);
	peer_send(&f->p, &m, &pp[1], 1);
	peer_send(&f->p, &m, NULL, 0);
	enc_free(&m);
	assert_int_equal(f->dead, 0);
	assert_true(f->p.alive);
	pump(f);
	assert_int_equal(f->dead, 1);
	assert_false(f->p.alive);
	/* The fd that was never sent is closed with the channel. */
	assert_int_equal(read(pp[0], &c, 1), 0);
	close(pp[0]);
}

/* peer_send on a dead peer sends nothing and closes the fds it got. */
static void
test_send_dead(void **state)
{
	struct fix *f = *state;
	struct mp_enc m;
	int p1[2], p2[2], fds[2];
	char c;

	peer_kill(&f->p, "killed by the test");
	assert_int_equal(f->dead, 1);
	assert_int_equal(pipe2(p1, O_CLOEXEC), 0);
	assert_int_equal(pipe2(p2, O_CLOEXEC), 0);
	fds[0] = p1[1];
	fds[1] = p2[1];
	enc_init(&m);
	msg_begin(&m, (enum msg_type)T_PLAIN);
	msg_end(&m);
	peer_send(&f->p, &m, fds, 2);
	enc_free(&m);
	assert_int_equal(read(p1[0], &c, 1), 0);
	assert_int_equal(read(p2[0], &c, 1), 0);
	assert_int_equal(fcntl(p1[1], F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	close(p1[0]);
	close(p2[0]);
	/* Killing it again reports nothing. */
	peer_kill(&f->p, "again");
	assert_int_equal(f->dead, 1);
	assert_string_equal(f->why, "killed by the test");
}

/* 1 if the peer wrote something the test's end has not read. */
static int
readable(struct fix *f)
{
	char c;

	return recv(f->tc.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1;
}

/*
 * A deferred peer queues what it is given and writes it all once the
 * loop has run what was ready, fds with their messages; peer_flush
 * writes at once.
 */
static void
test_send_deferred(void **state)
{
	struct fix *f = *state;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint64_t t, n;
	int pp[2], fd, i;
	char c;

	f->p.defer = 1;
	assert_int_equal(pipe2(pp, O_CLOEXEC), 0);
	for (i = 0; i < 3; i++) {
		enc_init(&m);
		msg_begin(&m, (enum msg_type)T_PLAIN);
		enc_kuint(&m, "n", (uint64_t)i);
		msg_end(&m);
		peer_send(&f->p, &m, i == 1 ? &pp[1] : NULL, i == 1 ? 1 : 0);
		enc_free(&m);
	}
	assert_false(readable(f)); /* nothing written yet */
	pump(f);
	assert_int_equal(chan_read(&f->tc), 1);
	for (i = 0; i < 3; i++) {
		assert_int_equal(chan_next(&f->tc, &d, &e), 1);
		assert_int_equal(msg_type_of(&d, &t, &e), 0);
		assert_int_equal(mp_uint(d.root, "n", 1, 9, &n, &e), 0);
		assert_int_equal(n, (uint64_t)i);
		mp_doc_free(&d);
	}
	fd = chan_take_fd(&f->tc);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(read(pp[0], &c, 1), 0); /* both copies closed */
	close(pp[0]);
	/* peer_flush: out at once, without the loop */
	enc_init(&m);
	msg_begin(&m, (enum msg_type)T_PLAIN);
	msg_end(&m);
	peer_send(&f->p, &m, NULL, 0);
	enc_free(&m);
	assert_false(readable(f));
	peer_flush(&f->p);
	assert_int_equal(chan_read(&f->tc), 1);
	assert_int_equal(chan_next(&f->tc, &d, &e), 1);
	mp_doc_free(&d);
	assert_true(f->p.alive);
}

#define FIX_TEST(t) cmocka_unit_test_setup_teardown(t, setup, teardown)

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    FIX_TEST(test_permitted),
	    FIX_TEST(test_unknown_type),
	    FIX_TEST(test_once_repeated),
	    cmocka_unit_test(test_malformed),
	    FIX_TEST(test_handler_fails),
	    FIX_TEST(test_handler_kills),
	    FIX_TEST(test_eof),
	    FIX_TEST(test_fds_in_order),
	    FIX_TEST(test_fd_missing),
	    FIX_TEST(test_send),
	    FIX_TEST(test_send_fails_later),
	    FIX_TEST(test_send_dead),
	    FIX_TEST(test_send_deferred),
	};

	signal(SIGPIPE, SIG_IGN);
	log_init("test_peer", 1, -1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
