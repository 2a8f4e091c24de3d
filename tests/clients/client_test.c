/*
 * client_test.c: libskillbroker against the real daemon, through the
 * public header and the shared library only, as a user's program is
 * built. The policy is tests/clients/run.sh's; the socket is
 * $SKILLBROKER_SOCKET. A fake broker (a child on a socket of its own)
 * plays the faults no real daemon makes. Prints "ok"/"not ok" per check
 * and exits 1 if any failed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <skillbroker.h>

#define NCALLS 50

static int failed, checks;

static void __attribute__((format(printf, 2, 3)))
check(int ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	printf("%s - ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		failed++;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct sb_client *
connect_or_die(sb_approval_cb cb, void *arg)
{
	struct sb_client *c;
	enum sb_err err;
	char msg[512];

	if ((c = sb_connect(NULL, cb, arg, &err, msg, sizeof(msg))) == NULL) {
		printf("not ok - connect: %s: %s\n", sb_err_name(err), msg);
		exit(1);
	}
	return c;
}

/* stdout of an ok result is want, exit code code. */
static int
result_is(const struct sb_reply *r, const char *want, uint64_t code)
{
	const void *out;
	size_t len;
	uint64_t ec;

	if (r == NULL || !sb_reply_ok(r) ||
	    strcmp(sb_reply_type(r), "result") != 0)
		return 0;
	out = sb_reply_bin(r, "output.stdout", &len);
	return out != NULL && len == strlen(want) &&
	       memcmp(out, want, len) == 0 &&
	       sb_reply_uint(r, "effects.process.exit_code", &ec) == 0 &&
	       ec == code;
}

static void
t_hello(void)
{
	struct sb_client *c = connect_or_die(NULL, NULL);
	const struct sb_reply *h = sb_hello(c);
	uint64_t proto = 0, max = 0;

	check(h != NULL && sb_reply_ok(h) &&
	          strcmp(sb_reply_type(h), "hello") == 0,
	    "hello: the connection's hello reply is kept");
	check(sb_reply_uint(h, "protocol", &proto) == 0 &&
	          proto == SKILLBROKER_PROTOCOL,
	    "hello: protocol %d agreed", SKILLBROKER_PROTOCOL);
	check(sb_reply_uint(h, "capabilities.limits.max_frame_bytes", &max) ==
	              0 &&
	          max >= 65536,
	    "hello: a reply field by its dotted path");
	check(sb_reply_count(h, "capabilities.requests") > 10 &&
	          sb_reply_str(h, "capabilities.requests.0") != NULL,
	    "hello: an array's length and an item by index");
	check(sb_reply_str(h, "no.such.field") == NULL &&
	          sb_reply_uint(h, "server", &max) == -1,
	    "hello: an absent field, or one of another kind, is -1/NULL");
	sb_close(c);
}

static void
t_blocking(void)
{
	struct sb_client *c = connect_or_die(NULL, NULL);
	const char *argv[] = {"a", "b c", NULL};
	struct sb_reply *r = NULL;
	struct sb_req *q;
	char *json;
	size_t len = 0;
	int ask = 0;

	check(sb_invoke(c, "echo-args", "run", argv, "blk", &r) == 0 &&
	          result_is(r, "a b c\n", 0),
	    "invoke: echo-args prints its arguments");
	json = r != NULL ? sb_reply_json(r) : NULL;
	check(json != NULL && strstr(json, "\"stdout\":\"a b c\\n\"") != NULL,
	    "invoke: the reply as JSON");
	free(json);
	sb_reply_free(r);
	check(sb_invoke(c, "exit-code", NULL, NULL, "blk", &r) == 0 &&
	          result_is(r, "exiting 7\n", 7),
	    "invoke: a non-zero exit is an ok result with its exit code");
	sb_reply_free(r);
	(void)sb_invoke(c, "whoami", NULL, NULL, "blk", &r);
	check(r != NULL && !sb_reply_ok(r) &&
	          sb_reply_error(r) == SB_ERR_PERMISSION_DENIED &&
	          strcmp(sb_reply_error_type(r), "permission_denied") == 0 &&
	          strstr(sb_reply_error_message(r), "clients-deny") != NULL,
	    "invoke: a denied call's typed error names the rule (%s)",
	    r ? sb_reply_error_message(r) : "no reply");
	sb_reply_free(r);
	check(sb_invoke(c, "sleeper", NULL, NULL, "blk", &r) == 0 && r &&
	          sb_reply_error(r) == SB_ERR_SKILL_NOT_ENABLED,
	    "invoke: skill_not_enabled");
	sb_reply_free(r);
	q = sb_req_new("invoke");
	check(sb_req_skill(q, "echo-args") == 0 &&
	          sb_req_phase(q, "execution") == 0 &&
	          sb_req_stdin(q, "in", 2) == 0 &&
	          sb_req_env(q, "LANG", "C") == 0 &&
	          sb_req_timeout(q, 5000) == 0 && sb_call(c, q, &r) == 0 &&
	          result_is(r, "\n", 0) && sb_req_get_id(q) != NULL &&
	          strcmp(sb_reply_id(r), sb_req_get_id(q)) == 0,
	    "sb_call: a built request, its reply under its id");
	sb_reply_free(r);
	sb_req_free(q);
	argv[0] = "3000000";
	argv[1] = NULL;
	check(sb_invoke(c, "bigout", NULL, argv, "blk", &r) == 0 &&
	          sb_reply_ok(r) &&
	          sb_reply_bin(r, "output.stdout", &len) != NULL &&
	          len == 3000000,
	    "invoke: a result longer than a frame (3 MB of output)");
	sb_reply_free(r);
	q = sb_req_new("authorize");
	check(sb_req_skill(q, "echo-args") == 0 &&
	          sb_req_phase(q, "execution") == 0 && sb_call(c, q, &r) == 0 &&
	          sb_reply_ok(r) && sb_reply_count(r, "effective.programs") > 0,
	    "authorize: allowed, with what the call would get");
	sb_reply_free(r);
	sb_req_free(q);
	q = sb_req_new("skill_info");
	check(sb_req_skill(q, "confirm") == 0 && sb_call(c, q, &r) == 0 &&
	          sb_reply_ok(r) &&
	          sb_reply_str(r, "skill.description") != NULL &&
	          sb_reply_bool(r, "skill.commands.0.ask", &ask) == 0 && ask,
	    "skill_info: an ask rule's skill, its command asks first");
	sb_reply_free(r);
	sb_req_free(q);
	q = sb_req_new("stats");
	check(sb_call(c, q, &r) == 0 && sb_reply_ok(r) &&
	          strcmp(sb_reply_type(r), "stats") == 0,
	    "stats");
	sb_reply_free(r);
	sb_req_free(q);
	sb_close(c);
}

static void
t_requests(void)
{
	struct sb_req *q = sb_req_new("invoke");

	errno = 0;
	check(sb_req_new("hello") == NULL && errno == EINVAL &&
	          sb_req_new("nonsense") == NULL,
	    "sb_req_new: an unknown type is EINVAL");
	check(sb_req_path(q, "a") == -1 && errno == EINVAL &&
	          sb_req_references(q, 1) == -1 && sb_req_target(q, "1") == -1,
	    "setters: a field the request type does not take is EINVAL");
	check(sb_req_skill(q, "") == -1 && sb_req_session(q, "\xff") == -1 &&
	          sb_req_env(q, "A=B", "x") == -1 && sb_req_timeout(q, 0) == -1,
	    "setters: empty, non-UTF-8 and out-of-range values are EINVAL");
	sb_req_free(q);
	q = sb_req_new("get_file");
	check(sb_req_path(q, "/etc/passwd") == -1 &&
	          sb_req_path(q, "a/../b") == -1 && sb_req_path(q, "a/b") == 0,
	    "setters: a session path must stay in the work dir");
	sb_req_free(q);
}

/* The event-driven side: NCALLS invokes in flight on one connection. */
struct many {
	int done, good;
};

static void
many_cb(struct sb_client *c, struct sb_reply *r, void *arg)
{
	struct many *m = arg;
	char want[64];
	const char *id = sb_reply_id(r);

	(void)c;
	/* each call's argument is its own session's name */
	snprintf(want, sizeof(want), "%s\n",
	    sb_reply_str(r, "skill") != NULL ? id : "");
	m->done++;
	if (sb_reply_ok(r))
		m->good++;
	else
		printf("# %s: %s: %s\n", id, sb_reply_error_type(r),
		    sb_reply_error_message(r));
	sb_reply_free(r);
}

static void
t_concurrent(void)
{
	struct sb_client *c = connect_or_die(NULL, NULL);
	struct many m = {0, 0};
	struct pollfd pfd;
	struct sb_req *q;
	char name[32];
	double t0 = now_s();
	int i, sent = 0;

	for (i = 0; i < NCALLS; i++) {
		q = sb_req_new("invoke");
		snprintf(name, sizeof(name), "c%d", i);
		if (sb_req_id(q, name) == 0 &&
		    sb_req_skill(q, "echo-args") == 0 &&
		    sb_req_phase(q, "execution") == 0 &&
		    sb_req_session(q, name) == 0 && sb_req_arg(q, name) == 0 &&
		    sb_send(c, q, many_cb, &m) == 0)
			sent++;
		sb_req_free(q);
	}
	check(sent == NCALLS, "sb_send: %d requests queued", sent);
	check(sb_pending(c) == (size_t)NCALLS, "sb_pending: %zu in flight",
	    sb_pending(c));
	while (m.done < sent && now_s() - t0 < 120) {
		pfd.fd = sb_fd(c);
		pfd.events = sb_events(c);
		if (poll(&pfd, 1, 1000) > 0 && sb_process(c) == -1)
			break;
	}
	check(m.done == NCALLS && m.good == NCALLS,
	    "%d concurrent calls: %d replies, %d ok, in %.1f s", NCALLS, m.done,
	    m.good, now_s() - t0);
	sb_close(c);
}

/* Approvals: answered at once by the callback, or later by sb_approve. */
struct asked {
	int n;
	enum sb_approval answer;
	char later[64]; /* an approval to answer after the callback */
};

static enum sb_approval
asked_cb(struct sb_client *c, const struct sb_reply *req, void *arg)
{
	struct asked *a = arg;
	const char *skill = sb_reply_str(req, "skill");

	(void)c;
	a->n++;
	if (skill == NULL || strcmp(skill, "confirm") != 0)
		return SB_APPROVAL_NO;
	if (a->answer == SB_APPROVAL_NONE)
		snprintf(a->later, sizeof(a->later), "%s", sb_reply_id(req));
	return a->answer;
}

static void
got_cb(struct sb_client *c, struct sb_reply *r, void *arg)
{
	(void)c;
	*(struct sb_reply **)arg = r;
}

static void
t_approvals(void)
{
	struct asked a = {0, SB_APPROVAL_YES_ONCE, ""};
	struct sb_client *c = connect_or_die(asked_cb, &a);
	const char *argv[] = {"go", NULL};
	struct sb_reply *r = NULL;
	struct pollfd pfd;
	struct sb_req *q;
	double t0;

	check(sb_invoke(c, "confirm", NULL, argv, "ap", &r) == 0 &&
	          result_is(r, "go\n", 0) && a.n == 1,
	    "approval: asked once, yes_once, the call runs");
	sb_reply_free(r);
	a.answer = SB_APPROVAL_NO;
	(void)sb_invoke(c, "confirm", NULL, argv, "ap", &r);
	check(r != NULL && sb_reply_error(r) == SB_ERR_APPROVAL_DENIED &&
	          a.n == 2,
	    "approval: no is approval_denied (%s)",
	    r ? sb_reply_error_message(r) : "");
	sb_reply_free(r);
	r = NULL;
	/* answered later, from the event loop */
	a.answer = SB_APPROVAL_NONE;
	q = sb_req_new("invoke");
	sb_req_skill(q, "confirm");
	sb_req_phase(q, "execution");
	sb_req_arg(q, "later");
	sb_req_session(q, "ap");
	check(sb_send(c, q, got_cb, &r) == 0, "approval: a call sent");
	t0 = now_s();
	while (r == NULL && now_s() - t0 < 20) {
		pfd.fd = sb_fd(c);
		pfd.events = sb_events(c);
		if (poll(&pfd, 1, 200) > 0 && sb_process(c) == -1)
			break;
		if (a.later[0] != '\0') {
			check(sb_approve(c, a.later, SB_APPROVAL_YES_ONCE) == 0,
			    "approval: sb_approve after the callback");
			a.later[0] = '\0';
		}
	}
	check(result_is(r, "later\n", 0), "approval: answered later, it runs");
	sb_reply_free(r);
	sb_req_free(q);
	sb_close(c);
	/* a connection without an approval callback is never asked */
	c = connect_or_die(NULL, NULL);
	check(sb_invoke(c, "confirm", NULL, argv, "ap2", &r) == 0 && r &&
	          sb_reply_error(r) == SB_ERR_APPROVAL_DENIED,
	    "approval: without a callback, the call is denied at once");
	sb_reply_free(r);
	sb_close(c);
}

/* A callback that closes its own connection, on the first reply. */
struct closer {
	int replies, cancelled, closed;
};

static void
closer_cb(struct sb_client *c, struct sb_reply *r, void *arg)
{
	struct closer *k = arg;

	k->replies++;
	if (sb_reply_error(r) == SB_ERR_CANCELLED)
		k->cancelled++;
	sb_reply_free(r);
	if (!k->closed) {
		k->closed = 1;
		sb_close(c); /* takes effect when sb_process returns */
		sb_close(c); /* and twice is once */
	}
}

static void
t_close_in_callback(void)
{
	struct sb_client *c = connect_or_die(NULL, NULL);
	struct closer k = {0, 0, 0};
	struct pollfd pfd;
	struct sb_req *q;
	char name[16];
	int i, r = 0;

	for (i = 0; i < 3; i++) {
		q = sb_req_new("invoke");
		snprintf(name, sizeof(name), "k%d", i);
		sb_req_skill(q, i == 0 ? "echo-args" : "nap");
		sb_req_phase(q, "execution");
		sb_req_session(q, name);
		sb_req_arg(q, "5");
		sb_send(c, q, closer_cb, &k);
		sb_req_free(q);
	}
	while (r == 0) {
		pfd.fd = sb_fd(c);
		pfd.events = sb_events(c);
		if (poll(&pfd, 1, 10000) <= 0)
			break;
		r = sb_process(c); /* -1 once the callback closed c */
	}
	check(r == -1 && k.closed && k.replies == 3 && k.cancelled == 2,
	    "sb_close in a callback: the other calls' callbacks get "
	    "cancelled, the connection goes when sb_process returns "
	    "(%d replies, %d cancelled)",
	    k.replies, k.cancelled);
}

static void
t_cancel(void)
{
	struct sb_client *c = connect_or_die(NULL, NULL);
	struct sb_reply *r = NULL;
	struct pollfd pfd;
	struct sb_req *q = sb_req_new("invoke");
	double t0;
	int cancelled = 0;

	sb_req_skill(q, "nap");
	sb_req_phase(q, "execution");
	sb_req_arg(q, "30");
	sb_req_session(q, "cx");
	check(sb_send(c, q, got_cb, &r) == 0, "cancel: a 30 s call sent");
	t0 = now_s();
	while (r == NULL && now_s() - t0 < 25) {
		pfd.fd = sb_fd(c);
		pfd.events = sb_events(c);
		if (poll(&pfd, 1, 100) > 0 && sb_process(c) == -1)
			break;
		/* once it runs (its worker started), cancel it */
		if (!cancelled && now_s() - t0 > 1.0) {
			check(sb_cancel(c, sb_req_get_id(q)) == 0,
			    "cancel: sb_cancel");
			cancelled = 1;
			t0 = now_s();
		}
	}
	check(r != NULL && sb_reply_error(r) == SB_ERR_CANCELLED &&
	          now_s() - t0 < 5,
	    "cancel: the call ends cancelled within %.2f s", now_s() - t0);
	sb_reply_free(r);
	sb_req_free(q);
	sb_close(c);
}

static void
t_files(void)
{
	struct sb_client *c = connect_or_die(NULL, NULL);
	size_t n = 3 * 1024 * 1024 + 17, len = 0, i;
	unsigned char *data = malloc(n);
	struct sb_reply *r = NULL;
	void *back = NULL;
	uint64_t size = 0;

	for (i = 0; i < n; i++)
		data[i] = (unsigned char)(i * 7 + i / 4096);
	check(sb_put(c, "fs", "in/big.bin", data, n, &r) == 0 && r &&
	          sb_reply_uint(r, "size_bytes", &size) == 0 && size == n,
	    "put: %zu bytes in chunks", n);
	sb_reply_free(r);
	check(sb_get(c, "fs", "in/big.bin", n, &back, &len) == 0 && len == n &&
	          memcmp(back, data, n) == 0,
	    "get: the same bytes back");
	free(back);
	check(sb_get(c, "fs", "in/big.bin", n - 1, &back, &len) == -1 &&
	          sb_errcode(c) == SB_ERR_USAGE,
	    "get: over the caller's bound is refused");
	check(sb_get(c, "fs", "no/such", n, &back, &len) == -1 &&
	          sb_errcode(c) == SB_ERR_NOT_FOUND,
	    "get: a file not there is not_found");
	check(sb_put(c, "fs", "empty", "", 0, NULL) == 0 &&
	          sb_get(c, "fs", "empty", 10, &back, &len) == 0 && len == 0,
	    "put and get: an empty file");
	free(back);
	free(data);
	sb_close(c);
}

/*
 * A fake broker on a socket of its own: it answers hello, then does
 * what mode says to the next request: 1 sends a frame over any bound,
 * 2 closes mid-frame, 3 sends a body that is not a map, 5 answers
 * ok: false with error type "none", 6 ends the connection with an error
 * whose message is 300 two-byte characters. Mode 4 never answers hello;
 * mode 7 answers it for protocol 1.
 */
static const unsigned char fake_none[] = {0x84, 0xa4, 0x74, 0x79, 0x70, 0x65,
    0xa6, 0x72, 0x65, 0x73, 0x75, 0x6c, 0x74, 0xa2, 0x69, 0x64, 0x02, 0xa2,
    0x6f, 0x6b, 0xc2, 0xa5, 0x65, 0x72, 0x72, 0x6f, 0x72, 0x83, 0xa4, 0x74,
    0x79, 0x70, 0x65, 0xa4, 0x6e, 0x6f, 0x6e, 0x65, 0xa7, 0x6d, 0x65, 0x73,
    0x73, 0x61, 0x67, 0x65, 0xa1, 0x78, 0xa7, 0x64, 0x65, 0x74, 0x61, 0x69,
    0x6c, 0x73, 0x80};
static const unsigned char fake_long[] = {0x84, 0xa4, 0x74, 0x79, 0x70, 0x65,
    0xa5, 0x65, 0x72, 0x72, 0x6f, 0x72, 0xa2, 0x69, 0x64, 0xc0, 0xa2, 0x6f,
    0x6b, 0xc2, 0xa5, 0x65, 0x72, 0x72, 0x6f, 0x72, 0x83, 0xa4, 0x74, 0x79,
    0x70, 0x65, 0xaa, 0x6f, 0x76, 0x65, 0x72, 0x6c, 0x6f, 0x61, 0x64, 0x65,
    0x64, 0xa7, 0x6d, 0x65, 0x73, 0x73, 0x61, 0x67, 0x65, 0xda, 0x02, 0x58,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9, 0xc3, 0xa9,
    0xa7, 0x64, 0x65, 0x74, 0x61, 0x69, 0x6c, 0x73, 0x80};
static const unsigned char fake_v1[] = {0x84, 0xa4, 0x74, 0x79, 0x70, 0x65,
    0xa5, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0xa2, 0x69, 0x64, 0x01, 0xa2, 0x6f,
    0x6b, 0xc3, 0xa8, 0x70, 0x72, 0x6f, 0x74, 0x6f, 0x63, 0x6f, 0x6c, 0x01};

/* Write one frame of body b (n bytes). */
static void
fake_frame(int fd, const unsigned char *b, size_t n)
{
	unsigned char hdr[4] = {
	    0, 0, (unsigned char)(n >> 8), (unsigned char)n};

	if (write(fd, hdr, 4) != 4 || write(fd, b, n) != (ssize_t)n)
		_exit(1);
}

static void
fake_serve(int ls, int mode)
{
	static const unsigned char hello[] = {0x84, 0xa4, 't', 'y', 'p', 'e',
	    0xa5, 'h', 'e', 'l', 'l', 'o', 0xa2, 'i', 'd', 0x01, 0xa2, 'o', 'k',
	    0xc3, 0xa8, 'p', 'r', 'o', 't', 'o', 'c', 'o', 'l', 0x02};
	unsigned char hdr[4], buf[65536];
	int fd = accept(ls, NULL, NULL);
	ssize_t n;

	if (fd == -1)
		_exit(1);
	n = read(fd, buf, sizeof(buf)); /* hello */
	if (mode == 4) {
		sleep(30);
		_exit(0);
	}
	if (mode == 7) {
		fake_frame(fd, fake_v1, sizeof(fake_v1));
		sleep(5);
		_exit(0);
	}
	hdr[0] = hdr[1] = hdr[2] = 0;
	hdr[3] = sizeof(hello);
	if (n <= 0 || write(fd, hdr, 4) != 4 ||
	    write(fd, hello, sizeof(hello)) != (ssize_t)sizeof(hello))
		_exit(1);
	n = read(fd, buf, sizeof(buf)); /* the request */
	if (mode == 5 || mode == 6) {
		if (mode == 5)
			fake_frame(fd, fake_none, sizeof(fake_none));
		else
			fake_frame(fd, fake_long, sizeof(fake_long));
		sleep(5);
	} else if (mode == 1) {
		hdr[0] = 0x7f; /* ~2 GiB */
		(void)!write(fd, hdr, 4);
		sleep(5);
	} else if (mode == 2) {
		hdr[0] = hdr[1] = 0;
		hdr[2] = 1;
		(void)!write(fd, hdr, 4);
		(void)!write(fd, "\x81", 1);
	} else {
		hdr[0] = hdr[1] = hdr[2] = 0;
		hdr[3] = 1;
		(void)!write(fd, hdr, 4);
		(void)!write(fd, "\x01", 1);
		sleep(5);
	}
	_exit(0);
}

/* Modes 5 to 7: what the library makes of a broker that lies. */
static void
fake_check(struct sb_client *c, int mode, enum sb_err err, const char *msg)
{
	struct sb_reply *r = NULL;
	int rc;

	if (mode == 7) {
		check(c == NULL && err == SB_ERR_PROTOCOL,
		    "fault: a hello for protocol 1 is refused (%s)", msg);
		return;
	}
	if (c == NULL) {
		check(0, "fault: mode %d: no connection: %s", mode, msg);
		return;
	}
	rc = sb_invoke(c, "x", NULL, NULL, NULL, &r);
	if (mode == 5)
		check(rc == 0 && r != NULL && !sb_reply_ok(r) &&
		          sb_reply_error(r) == SB_ERR_UNKNOWN,
		    "fault: ok: false with error type \"none\" is not ok");
	else
		check(
		    rc == -1 && sb_errcode(c) == SB_ERR_OVERLOADED &&
		        strlen(sb_errmsg(c)) > 100 &&
		        (sb_errmsg(c)[strlen(sb_errmsg(c)) - 1] & 0xc0) != 0xc0,
		    "fault: a long error message is cut on a character, the "
		    "call gets it (%zu bytes)",
		    strlen(sb_errmsg(c)));
	sb_reply_free(r);
}

static void
t_faults(void)
{
	static const char *what[] = {"", "an oversized frame",
	    "a close mid-frame", "a body that is not a map", "", "", "", ""};
	struct sockaddr_un sun;
	struct sb_client *c;
	struct sb_reply *r;
	enum sb_err err;
	char path[64], msg[256];
	double t0;
	pid_t pid;
	int ls, mode;

	c = sb_connect("/nonexistent/sock", NULL, NULL, &err, msg, sizeof(msg));
	check(c == NULL && err == SB_ERR_CONNECT &&
	          strstr(msg, "is skillbrokerd running?") != NULL,
	    "connect: no daemon is SB_ERR_CONNECT, with a hint (%s)", msg);
	for (mode = 1; mode <= 7; mode++) {
		snprintf(path, sizeof(path), "/tmp/sbfake.%d.%d", (int)getpid(),
		    mode);
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
		ls = socket(AF_UNIX, SOCK_STREAM, 0);
		if (ls == -1 ||
		    bind(ls, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
		    listen(ls, 1) == -1) {
			check(0, "fake broker: %s", strerror(errno));
			return;
		}
		if ((pid = fork()) == 0)
			fake_serve(ls, mode);
		close(ls);
		t0 = now_s();
		c = sb_connect(path, NULL, NULL, &err, msg, sizeof(msg));
		if (mode >= 5) {
			fake_check(c, mode, err, msg);
			if (c != NULL)
				sb_close(c);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			unlink(path);
			continue;
		}
		if (mode == 4) {
			check(c == NULL && err == SB_ERR_PROTOCOL &&
			          now_s() - t0 > 4 && now_s() - t0 < 8,
			    "fault: a broker that never answers hello: "
			    "sb_connect gives up after %.1f s (%s)",
			    now_s() - t0, msg);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			unlink(path);
			continue;
		}
		t0 = now_s();
		r = NULL;
		check(c != NULL &&
		          sb_invoke(c, "x", NULL, NULL, NULL, &r) == -1 &&
		          r == NULL && sb_errcode(c) == SB_ERR_PROTOCOL &&
		          now_s() - t0 < 3,
		    "fault: %s is SB_ERR_PROTOCOL at once (%s)", what[mode],
		    c ? sb_errmsg(c) : msg);
		check(c != NULL && sb_process(c) == -1 && sb_events(c) == 0,
		    "fault: the connection stays dead");
		sb_close(c);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		unlink(path);
	}
}

/* A socket planted in the current directory is never the broker's. */
static void
t_planted_socket(void)
{
	struct sockaddr_un sun;
	struct sb_client *c;
	enum sb_err err;
	char dir[] = "/tmp/sbplant.XXXXXX", cwd[4096], env[1024], msg[256];
	int ls = -1, fd;

	if (mkdtemp(dir) == NULL || getcwd(cwd, sizeof(cwd)) == NULL ||
	    chdir(dir) == -1 || mkdir("run", 0755) == -1) {
		check(0, "planted socket: set-up: %s", strerror(errno));
		return;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "run/skillbroker.sock");
	if ((ls = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1 ||
	    bind(ls, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(ls, 4) == -1)
		check(0, "planted socket: %s", strerror(errno));
	snprintf(env, sizeof(env), "%s", getenv(SKILLBROKER_SOCKET_ENV));
	unsetenv(SKILLBROKER_SOCKET_ENV);
	c = sb_connect(NULL, NULL, NULL, &err, msg, sizeof(msg));
	fd = accept(ls, NULL, NULL);
	check(fd == -1 &&
	          strcmp(sb_socket_path(NULL), SKILLBROKER_SOCKET_DEFAULT) == 0,
	    "a socket planted in the current directory is not used");
	if (fd != -1)
		close(fd);
	sb_close(c);
	setenv(SKILLBROKER_SOCKET_ENV, env, 1);
	close(ls);
	unlink("run/skillbroker.sock");
	rmdir("run");
	if (chdir(cwd) == -1 || rmdir(dir) == -1)
		check(0, "planted socket: clean-up: %s", strerror(errno));
}

int
main(void)
{
	if (getenv(SKILLBROKER_SOCKET_ENV) == NULL) {
		printf("skip - $%s is not set\n", SKILLBROKER_SOCKET_ENV);
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_hello();
	t_requests();
	t_blocking();
	t_concurrent();
	t_approvals();
	t_cancel();
	t_close_in_callback();
	t_files();
	t_faults();
	t_planted_socket();
	printf("client_test: %d checks, %d failed\n", checks, failed);
	return failed != 0;
}
