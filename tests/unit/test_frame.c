/* test_frame.c: length-prefixed framing is bounded and detects truncation. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../proto/frame.h"

static void
assert_msg_has(const struct error *e, const char *needle)
{
	if (strstr(e->msg, needle) == NULL)
		fail_msg(
		    "error \"%s\" does not mention \"%s\"", e->msg, needle);
}

static void
test_put_len(void **state)
{
	uint8_t hdr[FRAME_HDR_LEN];

	(void)state;
	frame_put_len(hdr, 0x01020304);
	assert_memory_equal(hdr, "\x01\x02\x03\x04", 4);
	frame_put_len(hdr, 5);
	assert_memory_equal(hdr, "\x00\x00\x00\x05", 4);
	frame_put_len(hdr, 0xffffffffu);
	assert_memory_equal(hdr, "\xff\xff\xff\xff", 4);
}

static void
test_check_need_more(void **state)
{
	uint8_t buf[16] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 'x'};
	size_t n = 12345;
	struct error e;

	(void)state;
	/* Not even a header yet. */
	assert_int_equal(frame_check(buf, 0, 100, &n, &e), FRAME_NEED_MORE);
	assert_int_equal(frame_check(buf, 3, 100, &n, &e), FRAME_NEED_MORE);
	/* Header, partial body. */
	assert_int_equal(frame_check(buf, 4, 100, &n, &e), FRAME_NEED_MORE);
	assert_int_equal(frame_check(buf, 8, 100, &n, &e), FRAME_NEED_MORE);
	assert_int_equal(n, 12345);
}

static void
test_check_ready(void **state)
{
	uint8_t buf[16] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 'x'};
	size_t n = 0;
	struct error e;

	(void)state;
	assert_int_equal(frame_check(buf, 9, 100, &n, &e), FRAME_READY);
	assert_int_equal(n, 5);
	/* Bytes of the next frame after it do not matter. */
	n = 0;
	assert_int_equal(frame_check(buf, 10, 100, &n, &e), FRAME_READY);
	assert_int_equal(n, 5);
	/* A body of exactly max is fine. */
	n = 0;
	assert_int_equal(frame_check(buf, 9, 5, &n, &e), FRAME_READY);
	assert_int_equal(n, 5);
}

static void
test_check_bad(void **state)
{
	uint8_t zero[4] = {0, 0, 0, 0};
	uint8_t big[4] = {0, 0, 0, 6};
	uint8_t huge[4] = {0xff, 0xff, 0xff, 0xff};
	uint8_t hdr[4];
	size_t n = 777;
	struct error e;

	(void)state;
	memset(&e, 0, sizeof(e));
	assert_int_equal(frame_check(zero, 4, 100, &n, &e), FRAME_BAD);
	assert_int_equal(e.type, ERR_BAD_REQUEST);
	assert_msg_has(&e, "empty frame");
	/* One over max is refused from the header alone. */
	memset(&e, 0, sizeof(e));
	assert_int_equal(frame_check(big, 4, 5, &n, &e), FRAME_BAD);
	assert_int_equal(e.type, ERR_BAD_REQUEST);
	assert_msg_has(&e, "exceeds the limit of 5");
	assert_int_equal(
	    frame_check(huge, 4, FRAME_MAX_DEFAULT, &n, &e), FRAME_BAD);
	assert_msg_has(&e, "4294967295");
	/* The default limits, at and one past. */
	frame_put_len(hdr, FRAME_MAX_DEFAULT);
	assert_int_equal(
	    frame_check(hdr, 4, FRAME_MAX_DEFAULT, &n, &e), FRAME_NEED_MORE);
	frame_put_len(hdr, FRAME_MAX_DEFAULT + 1);
	assert_int_equal(
	    frame_check(hdr, 4, FRAME_MAX_DEFAULT, &n, &e), FRAME_BAD);
	assert_int_equal(
	    frame_check(hdr, 4, FRAME_MAX_INTERNAL, &n, &e), FRAME_NEED_MORE);
	assert_int_equal(n, 777);
	/* A NULL error pointer is allowed. */
	assert_int_equal(frame_check(zero, 4, 100, &n, NULL), FRAME_BAD);
}

/* The full frame of exactly max bytes is READY. */
static void
test_check_exact_max(void **state)
{
	size_t max = 1000, n = 0;
	uint8_t *buf = calloc(1, FRAME_HDR_LEN + max + 1);
	struct error e;

	(void)state;
	assert_non_null(buf);
	frame_put_len(buf, max);
	assert_int_equal(frame_check(buf, FRAME_HDR_LEN + max - 1, max, &n, &e),
	    FRAME_NEED_MORE);
	assert_int_equal(
	    frame_check(buf, FRAME_HDR_LEN + max, max, &n, &e), FRAME_READY);
	assert_int_equal(n, max);
	frame_put_len(buf, max + 1);
	assert_int_equal(
	    frame_check(buf, FRAME_HDR_LEN + max + 1, max, &n, &e), FRAME_BAD);
	free(buf);
}

static int
sp_setup(void **state)
{
	int *sv = malloc(2 * sizeof(int));

	if (sv == NULL || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
		return -1;
	*state = sv;
	return 0;
}

static int
sp_teardown(void **state)
{
	int *sv = *state;

	if (sv[0] != -1)
		close(sv[0]);
	if (sv[1] != -1)
		close(sv[1]);
	free(sv);
	return 0;
}

static void
test_send_recv(void **state)
{
	int *sv = *state;
	uint8_t *body = NULL, raw[9];
	size_t len = 0;
	struct error e;

	assert_int_equal(frame_send(sv[0], "hello", 5, &e), 0);
	assert_int_equal(frame_send(sv[0], "x", 1, &e), 0);
	/* The wire form is the 4-byte big-endian length, then the body. */
	assert_int_equal(read_full(sv[1], raw, 9), 0);
	assert_memory_equal(raw, "\x00\x00\x00\x05hello", 9);
	assert_int_equal(write_full(sv[0], raw, 9), 0);

	assert_int_equal(frame_recv(sv[1], 100, &body, &len, &e), 0);
	assert_int_equal(len, 1);
	assert_memory_equal(body, "x", 1);
	free(body);
	assert_int_equal(frame_recv(sv[1], 100, &body, &len, &e), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(body, "hello", 5);
	free(body);
}

/* A frame bigger than the socket buffer, written by another process. */
static void
test_send_recv_large(void **state)
{
	int *sv = *state, status;
	size_t n = 512 * 1024, len = 0, i;
	uint8_t *data = malloc(n), *body = NULL;
	struct error e;
	pid_t pid;

	assert_non_null(data);
	for (i = 0; i < n; i++)
		data[i] = (uint8_t)(i * 7 + 3);
	pid = fork();
	assert_true(pid != -1);
	if (pid == 0)
		_exit(frame_send(sv[0], data, n, &e) == 0 ? 0 : 1);
	assert_int_equal(frame_recv(sv[1], n, &body, &len, &e), 0);
	assert_int_equal(len, n);
	assert_memory_equal(body, data, n);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(body);
	free(data);
}

static void
test_recv_truncated(void **state)
{
	int *sv = *state;
	uint8_t *body = (uint8_t *)"sentinel";
	size_t len = 99;
	struct error e;

	/* The header promises 10 bytes, 3 arrive, then EOF. */
	assert_int_equal(write_full(sv[0],
	                     "\x00\x00\x00\x0a"
	                     "abc",
	                     7),
	    0);
	close(sv[0]);
	sv[0] = -1;
	memset(&e, 0, sizeof(e));
	assert_int_equal(frame_recv(sv[1], 100, &body, &len, &e), -1);
	assert_msg_has(&e, "truncated frame");
	assert_null(body);
	assert_int_equal(len, 99);
}

static void
test_recv_eof(void **state)
{
	int *sv = *state;
	uint8_t *body = NULL;
	size_t len = 0;
	struct error e;

	/* EOF before any header, and EOF inside the header. */
	assert_int_equal(write_full(sv[0], "\x00\x00", 2), 0);
	assert_int_equal(shutdown(sv[0], SHUT_WR), 0);
	memset(&e, 0, sizeof(e));
	assert_int_equal(frame_recv(sv[1], 100, &body, &len, &e), -1);
	assert_msg_has(&e, "connection closed");
	assert_int_equal(frame_recv(sv[1], 100, &body, &len, &e), -1);
	assert_msg_has(&e, "connection closed");
	assert_null(body);
}

static void
test_recv_oversize(void **state)
{
	int *sv = *state;
	uint8_t *body = NULL, hdr[FRAME_HDR_LEN];
	size_t len = 0;
	struct error e;

	assert_int_equal(frame_send(sv[0], "0123456789", 10, &e), 0);
	memset(&e, 0, sizeof(e));
	assert_int_equal(frame_recv(sv[1], 9, &body, &len, &e), -1);
	assert_int_equal(e.type, ERR_BAD_REQUEST);
	assert_msg_has(&e, "exceeds the limit of 9");
	assert_null(body);
	/* A 4 GiB claim is refused from the header, nothing allocated. */
	frame_put_len(hdr, 0xffffffffu);
	assert_int_equal(write_full(sv[0], hdr, sizeof(hdr)), 0);
	memset(&e, 0, sizeof(e));
	assert_int_equal(
	    frame_recv(sv[1], FRAME_MAX_DEFAULT, &body, &len, &e), -1);
	assert_msg_has(&e, "exceeds the limit");
	assert_null(body);
}

static void
test_recv_empty_frame(void **state)
{
	int *sv = *state;
	uint8_t *body = NULL;
	size_t len = 0;
	struct error e;

	assert_int_equal(write_full(sv[0], "\x00\x00\x00\x00", 4), 0);
	memset(&e, 0, sizeof(e));
	assert_int_equal(frame_recv(sv[1], 100, &body, &len, &e), -1);
	assert_msg_has(&e, "empty frame");
}

static void
test_send_errors(void **state)
{
	int *sv = *state;
	struct error e;
	void (*old)(int);

	memset(&e, 0, sizeof(e));
	assert_int_equal(frame_send(sv[0], "", 0, &e), -1);
	assert_int_equal(e.type, ERR_INTERNAL);
	/* Writing to a closed peer fails cleanly (SIGPIPE ignored here). */
	close(sv[1]);
	sv[1] = -1;
	old = signal(SIGPIPE, SIG_IGN);
	memset(&e, 0, sizeof(e));
	assert_int_equal(frame_send(sv[0], "abc", 3, &e), -1);
	assert_int_equal(e.type, ERR_INTERNAL);
	assert_msg_has(&e, "write");
	signal(SIGPIPE, old);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_put_len),
	    cmocka_unit_test(test_check_need_more),
	    cmocka_unit_test(test_check_ready),
	    cmocka_unit_test(test_check_bad),
	    cmocka_unit_test(test_check_exact_max),
	    cmocka_unit_test_setup_teardown(
	        test_send_recv, sp_setup, sp_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_send_recv_large, sp_setup, sp_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_truncated, sp_setup, sp_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_eof, sp_setup, sp_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_oversize, sp_setup, sp_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_recv_empty_frame, sp_setup, sp_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_send_errors, sp_setup, sp_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
