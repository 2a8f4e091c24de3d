/*
 * cli_approve.c: an approval_request on a terminal. skillctl invoke, run
 * on one, shows what would run (skill, command, args, the permissions
 * it would get) and reads the answer from /dev/tty: [o]nce, [s]ession
 * or [n]o. Every string the broker sent is shown through cli_put_safe:
 * a skill's arguments cannot drive the terminal.
 */
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

#define CLI_APPROVE_LINE 256 /* bytes of one answer line */

/* One scalar of the effective map, as text. */
static void
cli_approve_scalar(const msgpack_object *o, FILE *out)
{
	char *s;

	switch (o->type) {
	case MSGPACK_OBJECT_STR:
		s = xstrndup(o->via.str.ptr, o->via.str.size);
		cli_put_safe(out, s);
		free(s);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		fprintf(out, "%" PRIu64, o->via.u64);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		fputs(o->via.boolean ? "true" : "false", out);
		break;
	default:
		fputs("?", out);
		break;
	}
}

/* 1 if no value of map o is itself a map or an array (limits). */
static int
cli_approve_flat(const msgpack_object *o)
{
	uint32_t i;

	for (i = 0; i < o->via.map.size; i++)
		if (o->via.map.ptr[i].val.type == MSGPACK_OBJECT_MAP ||
		    o->via.map.ptr[i].val.type == MSGPACK_OBJECT_ARRAY)
			return 0;
	return 1;
}

/*
 * The effective map, a line per list ("fs.read: a, b"), a map of plain
 * values on one line ("limits: timeout_ms 5000, ..."); at most depth 4.
 */
static void
cli_approve_tree(
    const char *prefix, const msgpack_object *o, int depth, FILE *out)
{
	char key[128];
	uint32_t i;

	if (o->type == MSGPACK_OBJECT_MAP && depth < 4 &&
	    !cli_approve_flat(o)) {
		for (i = 0; i < o->via.map.size; i++) {
			const msgpack_object *k = &o->via.map.ptr[i].key;
			if (k->type != MSGPACK_OBJECT_STR)
				continue;
			snprintf(key, sizeof(key), "%s%s%.*s", prefix,
			    *prefix ? "." : "", (int)k->via.str.size,
			    k->via.str.ptr);
			cli_approve_tree(
			    key, &o->via.map.ptr[i].val, depth + 1, out);
		}
		return;
	}
	fputs("    ", out);
	cli_put_safe(out, *prefix ? prefix : "effective");
	fputs(": ", out);
	if (o->type == MSGPACK_OBJECT_ARRAY) {
		if (o->via.array.size == 0)
			fputs("(none)", out);
		for (i = 0; i < o->via.array.size; i++) {
			fputs(i ? ", " : "", out);
			cli_approve_scalar(&o->via.array.ptr[i], out);
		}
	} else if (o->type == MSGPACK_OBJECT_MAP) {
		if (o->via.map.size == 0)
			fputs("(none)", out);
		for (i = 0; i < o->via.map.size; i++) {
			fputs(i ? ", " : "", out);
			cli_approve_scalar(&o->via.map.ptr[i].key, out);
			fputc(' ', out);
			cli_approve_scalar(&o->via.map.ptr[i].val, out);
		}
	} else
		cli_approve_scalar(o, out);
	fputc('\n', out);
}

/* One field of the request: "  name:     value". */
static void
cli_approve_field(const msgpack_object *req, const char *k, FILE *out)
{
	const msgpack_object *o = mp_get(req, k);

	fprintf(out, "  %-9s ", k);
	if (o != NULL)
		cli_approve_scalar(o, out);
	fputc('\n', out);
}

/* What the broker asks about, for a human to read. */
void
cli_approval_show(const msgpack_object *req, FILE *out)
{
	const msgpack_object *args = mp_get(req, "args"), *eff, *o;
	uint64_t total = 0;
	uint32_t i;

	fputs("skillctl: approval requested (", out);
	if ((o = mp_get(req, "id")) != NULL)
		cli_approve_scalar(o, out);
	fputs(")\n", out);
	cli_approve_field(req, "skill", out);
	cli_approve_field(req, "command", out);
	cli_approve_field(req, "session", out);
	fprintf(out, "  %-9s ", "args");
	if (args != NULL && args->type == MSGPACK_OBJECT_ARRAY)
		for (i = 0; i < args->via.array.size; i++) {
			fputs(i ? " \"" : "\"", out);
			cli_approve_scalar(&args->via.array.ptr[i], out);
			fputc('"', out);
		}
	(void)mp_uint(req, "args_total", 0, UINT64_MAX, &total, NULL);
	if (args != NULL && args->type == MSGPACK_OBJECT_ARRAY &&
	    total > args->via.array.size)
		fprintf(out, " ... (%" PRIu64 " in all)", total);
	fputc('\n', out);
	fputs("  it would get:\n", out);
	if ((eff = mp_get(req, "effective")) != NULL)
		cli_approve_tree("", eff, 0, out);
}

/* An answer line: o/once, s/session, n/no; NONE for anything else. */
enum client_approval
cli_approval_answer(const char *line)
{
	static const struct {
		const char *word;
		enum client_approval a;
	} words[] = {{"o", CLIENT_APPROVAL_YES_ONCE},
	    {"once", CLIENT_APPROVAL_YES_ONCE},
	    {"yes_once", CLIENT_APPROVAL_YES_ONCE},
	    {"s", CLIENT_APPROVAL_YES_IN_SESSION},
	    {"session", CLIENT_APPROVAL_YES_IN_SESSION},
	    {"yes_in_session", CLIENT_APPROVAL_YES_IN_SESSION},
	    {"n", CLIENT_APPROVAL_NO}, {"no", CLIENT_APPROVAL_NO}};
	char w[32];
	size_t i, n = 0;

	while (*line == ' ' || *line == '\t')
		line++;
	while (line[n] != '\0' && line[n] != '\n' && line[n] != '\r' &&
	       line[n] != ' ' && line[n] != '\t' && n < sizeof(w) - 1) {
		w[n] =
		    line[n] >= 'A' && line[n] <= 'Z' ? line[n] + 32 : line[n];
		n++;
	}
	w[n] = '\0';
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcmp(w, words[i].word) == 0)
			return words[i].a;
	return CLIENT_APPROVAL_NONE;
}

/*
 * Show req and read the answer from tty, while watching the broker's
 * socket: if the broker speaks first (the approval timed out, or was
 * answered elsewhere), or the request's time runs out, nothing is
 * answered (NONE). End of input on the terminal is a no.
 */
enum client_approval
cli_approval_prompt(const msgpack_object *req, int sock, int tty, FILE *out)
{
	char line[CLI_APPROVE_LINE];
	struct pollfd p[2];
	uint64_t ms = 60000, t0 = now_mono_ms(), spent;
	enum client_approval a;
	ssize_t n;
	int r;

	(void)mp_uint(req, "timeout_ms", 0, 86400000, &ms, NULL);
	cli_approval_show(req, out);
	for (;;) {
		spent = now_mono_ms() - t0;
		if (spent >= ms)
			break;
		fprintf(out,
		    "Allow? [o]nce / [s]ession / [n]o (%" PRIu64 " s left): ",
		    (ms - spent + 999) / 1000);
		fflush(out);
		p[0] = (struct pollfd){tty, POLLIN, 0};
		p[1] = (struct pollfd){sock, POLLIN, 0};
		r = poll(p, 2, (int)(ms - spent));
		if (r == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (p[1].revents != 0) {
			fputs("\nskillctl: no longer asked (answered "
			      "elsewhere, timed out, or cancelled)\n",
			    out);
			return CLIENT_APPROVAL_NONE;
		}
		n = read(tty, line, sizeof(line) - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			fputs("\n", out);
			return CLIENT_APPROVAL_NO;
		}
		line[n] = '\0';
		if ((a = cli_approval_answer(line)) != CLIENT_APPROVAL_NONE)
			return a;
		fputs("skillctl: answer o (yes, once), s (yes, for the "
		      "session) or n (no)\n",
		    out);
	}
	fputs("\nskillctl: no answer in time\n", out);
	return CLIENT_APPROVAL_NONE;
}
