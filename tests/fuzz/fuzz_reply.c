/*
 * fuzz_reply.c: libFuzzer harness for what a broker can send to a
 * client: the bytes arrive on a connection of libskillbroker that has
 * requests in flight and an approval callback, and the library must
 * take them apart (frames, replies, approval requests) without a crash,
 * a leak or a callback left without its reply.
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../libskillbroker/sb_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replies;

/* Read every field a caller might, then let it go. */
static void
fuzz_cb(struct sb_client *c, struct sb_reply *r, void *arg)
{
	uint64_t u;
	int64_t i;
	int b;
	size_t n;
	char *j;

	(void)c;
	(void)arg;
	replies++;
	(void)sb_reply_type(r);
	(void)sb_reply_error_message(r);
	(void)sb_reply_str(r, "skill.commands.0.name");
	(void)sb_reply_uint(r, "effects.process.exit_code", &u);
	(void)sb_reply_int(r, "a.1.b", &i);
	(void)sb_reply_bool(r, "ok", &b);
	(void)sb_reply_bin(r, "output.stdout", &n);
	(void)sb_reply_count(r, "effects.files_written");
	free(j = sb_reply_json(r));
	sb_reply_free(r);
}

static enum sb_approval
fuzz_ask(struct sb_client *c, const struct sb_reply *req, void *arg)
{
	(void)c;
	(void)arg;
	return sb_reply_str(req, "skill") != NULL ? SB_APPROVAL_YES_ONCE
	                                          : SB_APPROVAL_NONE;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_client *c;
	struct sb_req *q;
	int sv[2], i, sent = 0;

	if (size > 64 * 1024 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return 0;
	c = sb_client_new(sv[0], fuzz_ask, NULL);
	(void)fcntl(sv[0], F_SETFL, O_NONBLOCK);
	replies = 0;
	/* requests 1..3 in flight, and one named "x" */
	for (i = 0; i < 4; i++) {
		q = sb_req_new("invoke");
		(void)sb_req_skill(q, "s");
		if (i == 3)
			(void)sb_req_id(q, "x");
		if (sb_send(c, q, fuzz_cb, NULL) == 0)
			sent++;
		sb_req_free(q);
	}
	if (write(sv[1], data, size) != (ssize_t)size)
		abort();
	close(sv[1]);
	while (sb_process(c) == 0)
		;
	/* dead now: every request had its reply, made or received */
	if (replies != sent || sb_pending(c) != 0)
		abort();
	sb_close(c);
	return 0;
}
