/*
 * sb-invoke.c: the smallest whole program on libskillbroker, the one
 * docs/libskillbroker.md walks through. It runs one skill command and
 * prints what the skill wrote and how it ended:
 *
 *	sb-invoke SKILL COMMAND [ARG...]
 *
 * Build it against an installed library:
 *
 *	cc -o sb-invoke sb-invoke.c $(pkg-config --cflags --libs skillbroker)
 *
 * The socket is $SKILLBROKER_SOCKET, else the installed daemon's.
 * Exit status: the skill's, or 1 when the call was refused or failed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <skillbroker.h>

int
main(int argc, char *argv[])
{
	struct sb_client *c;
	struct sb_reply *r;
	enum sb_err err;
	char msg[512];
	const void *out;
	size_t len;
	uint64_t code;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: sb-invoke SKILL COMMAND [ARG...]\n");
		return 2;
	}
	/* Connect and say hello; NULL: no approval callback, so a call
	 * that needs a human's yes is denied (approval_denied). */
	c = sb_connect(NULL, NULL, NULL, &err, msg, sizeof(msg));
	if (c == NULL) {
		fprintf(stderr, "sb-invoke: %s\n", msg);
		return 1;
	}
	/* One call, waited for: argv after the command is its arguments. */
	if (sb_invoke(c, argv[1], argv[2], (const char *const *)argv + 3, NULL,
	        &r) == -1) {
		fprintf(stderr, "sb-invoke: %s\n", sb_errmsg(c));
		sb_close(c);
		return 1;
	}
	if (!sb_reply_ok(r)) {
		/* refused, timed out, ...: the broker says which and why */
		fprintf(stderr, "sb-invoke: %s: %s\n", sb_reply_error_type(r),
		    sb_reply_error_message(r));
		status = 1;
	} else {
		out = sb_reply_bin(r, "output.stdout", &len);
		if (out != NULL)
			fwrite(out, 1, len, stdout);
		/* exit_code is nil when a signal ended the skill */
		if (sb_reply_uint(r, "effects.process.exit_code", &code) == 0)
			status = (int)code;
		else
			status = 1;
		printf("[exit %d]\n", status);
	}
	sb_reply_free(r);
	sb_close(c);
	return status;
}
