/*
 * rawclient.c: a test tool that speaks raw bytes to the broker socket.
 *
 * usage: rawclient [-H] [-c] [-w MS] [-t MS] SOCKET
 *
 * Sends stdin verbatim (no framing added), or with -H the bytes of the
 * hex on stdin (whitespace ignored). -c half-closes the socket after
 * sending; -w MS waits MS milliseconds after sending; -t MS bounds the
 * wait for the reply (default 10000, 0 waits forever). Then reads ONE
 * framed reply (at most 1 MiB + 64 KiB) and prints it as one line of
 * compact JSON.
 *
 * Exit: 0 reply printed; 1 the connection closed first ("EOF" on
 * stdout); 2 usage or local error; 3 no reply within -t ("TIMEOUT" on
 * stdout); 4 the reply frame or its msgpack is malformed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../lib/xmalloc.h"
#include "../../proto/frame.h"
#include "../../proto/mp.h"
#include "../../proto/mpjson.h"

#define INPUT_MAX (16 * 1024 * 1024)
#define REPLY_MAX FRAME_MAX_INTERNAL

enum { EX_REPLY, EX_EOF, EX_LOCAL, EX_TIMEOUT, EX_BAD };

static const struct mp_limits reply_limits = {
    .max_depth = 8,
    .max_str = REPLY_MAX,
    .max_elems = 65536,
    .max_key = 256,
};

/* Usage errors and local failures end the run with status 2. */
static void __attribute__((noreturn)) die(const char *what)
{
	fprintf(stderr, "rawclient: %s\n", what);
	exit(EX_LOCAL);
}

/* The socket may close without a reply: that is a result, not a bug. */
static void __attribute__((noreturn)) saw_eof(const char *why)
{
	if (why != NULL)
		fprintf(stderr, "rawclient: %s\n", why);
	puts("EOF");
	exit(EX_EOF);
}

/* All of stdin, bounded so a runaway test cannot eat memory. */
static uint8_t *
read_stdin(size_t *lenp)
{
	size_t cap = 65536, len = 0;
	uint8_t *buf = xmalloc(cap);
	ssize_t n;

	for (;;) {
		if (len == cap) {
			if (cap >= INPUT_MAX)
				die("input too big");
			buf = xreallocarray(buf, 2, cap);
			cap *= 2;
		}
		n = read(0, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			die(strerror(errno));
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*lenp = len;
	return buf;
}

/* Value of one hex digit, -1 if c is not one. */
static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* -H: decode hex in place, skipping whitespace; odd digits are an error. */
static size_t
unhex(uint8_t *buf, size_t len)
{
	size_t i, out = 0;
	int hi = -1, v;

	for (i = 0; i < len; i++) {
		if (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' ||
		    buf[i] == '\r')
			continue;
		if ((v = hexval(buf[i])) == -1)
			die("bad hex digit in input");
		if (hi == -1)
			hi = v;
		else {
			buf[out++] = (uint8_t)(hi << 4 | v);
			hi = -1;
		}
	}
	if (hi != -1)
		die("odd number of hex digits");
	return out;
}

/* Connect to path with send and receive timeouts of ms. */
static int
dial(const char *path, unsigned long ms)
{
	struct sockaddr_un sun;
	struct timeval tv;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		die("socket path too long");
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		die(strerror(errno));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		fprintf(stderr, "rawclient: connect %s: %s\n", path,
		    strerror(errno));
		exit(EX_LOCAL);
	}
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) == -1)
		die(strerror(errno));
	return fd;
}

/* Send what we were given; a peer that hangs up early may still answer. */
static void
send_all(int fd, const uint8_t *buf, size_t len)
{
	if (len > 0 && write_full(fd, buf, len) == -1)
		fprintf(
		    stderr, "rawclient: send stopped: %s\n", strerror(errno));
}

/* Sleep ms milliseconds, resuming after signals. */
static void
wait_ms(unsigned long ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* read_full with the outcomes told apart: EOF, timeout, other error. */
static void
recv_exact(int fd, uint8_t *buf, size_t len, int in_body)
{
	int r = read_full(fd, buf, len);

	if (r == 0)
		return;
	if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		puts("TIMEOUT");
		exit(EX_TIMEOUT);
	}
	if (r == -2 || errno == ECONNRESET)
		saw_eof(in_body ? "connection closed inside a frame" : NULL);
	die(strerror(errno));
}

/* One bounded frame, decoded and printed as compact JSON. */
static int
recv_print(int fd)
{
	uint8_t hdr[FRAME_HDR_LEN], *body;
	struct mp_doc doc;
	struct error e;
	size_t len;
	json_t *j;
	char *s;

	recv_exact(fd, hdr, sizeof(hdr), 0);
	if (frame_check(hdr, sizeof(hdr), REPLY_MAX, &len, &e) == FRAME_BAD) {
		fprintf(stderr, "rawclient: bad reply frame: %s\n", e.msg);
		return EX_BAD;
	}
	len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 |
	      (size_t)hdr[2] << 8 | hdr[3];
	body = xmalloc(len);
	recv_exact(fd, body, len, 1);
	if (mp_decode(&doc, body, len, &reply_limits, &e) == -1) {
		fprintf(stderr, "rawclient: bad reply: %s\n", e.msg);
		free(body);
		return EX_BAD;
	}
	if ((j = mp_to_json(doc.root)) == NULL ||
	    (s = json_dumps(j, JSON_COMPACT)) == NULL)
		die("cannot convert the reply to JSON");
	puts(s);
	free(s);
	json_decref(j);
	mp_doc_free(&doc);
	free(body);
	return EX_REPLY;
}

/* Wrong arguments: the synopsis, status 2. */
static void __attribute__((noreturn)) usage(void)
{
	die("usage: rawclient [-H] [-c] [-w MS] [-t MS] SOCKET");
}

/* A millisecond count option, or a usage error. */
static unsigned long
ms_arg(const char *s)
{
	uint64_t v;

	if (parse_uint(s, 0, 3600000, &v) == -1)
		usage();
	return (unsigned long)v;
}

/* Send stdin's bytes, then report the one reply or what happened instead. */
int
main(int argc, char **argv)
{
	unsigned long wait = 0, tmo = 10000;
	int ch, hex = 0, halfclose = 0, fd;
	uint8_t *buf;
	size_t len;

	while ((ch = getopt(argc, argv, "Hcw:t:")) != -1) {
		switch (ch) {
		case 'H':
			hex = 1;
			break;
		case 'c':
			halfclose = 1;
			break;
		case 'w':
			wait = ms_arg(optarg);
			break;
		case 't':
			tmo = ms_arg(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	signal(SIGPIPE, SIG_IGN);
	buf = read_stdin(&len);
	if (hex)
		len = unhex(buf, len);
	fd = dial(argv[optind], tmo);
	send_all(fd, buf, len);
	free(buf);
	if (halfclose)
		(void)shutdown(fd, SHUT_WR);
	if (wait > 0)
		wait_ms(wait);
	return recv_print(fd);
}
