/*
 * test_mcp_rpc.c: skillbroker-mcp's JSON-RPC layer without a daemon:
 * each kind of line gets the class and the error code JSON-RPC names,
 * lines are framed within their bound (an over-long one is dropped
 * without being kept), output is queued without blocking, and bytes
 * become valid JSON text.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../mcp/mcp.h"

struct rpc_case {
	const char *name;
	const char *line;
	enum mcp_msg_kind kind;
	int code;     /* MCP_MSG_INVALID */
	long long id; /* the id answered: -1 null, else the integer */
	const char *method;
};

static const struct rpc_case rpc_cases[] = {
    {"request", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
        MCP_MSG_REQUEST, 0, 1, "ping"},
    {"request with params",
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\","
        "\"params\":{}}",
        MCP_MSG_REQUEST, 0, 7, "tools/list"},
    {"notification",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
        MCP_MSG_NOTIFY, 0, -1, "notifications/initialized"},
    {"notification with bad params",
        "{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":3}", MCP_MSG_NOTIFY,
        0, -1, "x"},
    {"response", "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}",
        MCP_MSG_RESPONSE, 0, 3, NULL},
    {"error response",
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-1,\"message\":"
        "\"x\"}}",
        MCP_MSG_RESPONSE, 0, 4, NULL},
    {"not JSON", "{bad", MCP_MSG_INVALID, RPC_PARSE_ERROR, -1, NULL},
    {"empty", "", MCP_MSG_INVALID, RPC_PARSE_ERROR, -1, NULL},
    {"trailing bytes", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} x",
        MCP_MSG_INVALID, RPC_PARSE_ERROR, -1, NULL},
    {"duplicate key",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"ping\"}",
        MCP_MSG_INVALID, RPC_PARSE_ERROR, -1, NULL},
    {"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"p\"}",
        MCP_MSG_INVALID, RPC_PARSE_ERROR, -1, NULL},
    {"escaped NUL",
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0000b\",\"method\":\"ping\"}",
        MCP_MSG_INVALID, RPC_PARSE_ERROR, -1, NULL},
    {"integer too big",
        "{\"jsonrpc\":\"2.0\",\"id\":100000000000000000000000,\"method\":"
        "\"ping\"}",
        MCP_MSG_INVALID, RPC_PARSE_ERROR, -1, NULL},
    {"a number", "42", MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"a string", "\"ping\"", MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"null", "null", MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"batch", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"empty batch", "[]", MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"no jsonrpc", "{\"id\":5,\"method\":\"ping\"}", MCP_MSG_INVALID,
        RPC_INVALID_REQUEST, 5, NULL},
    {"jsonrpc 1.0", "{\"jsonrpc\":\"1.0\",\"id\":6,\"method\":\"ping\"}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, 6, NULL},
    {"null id", "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"real id", "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"bool id", "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"method not a string", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":5}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, 8, NULL},
    {"empty method", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"\"}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, 9, NULL},
    {"unknown member",
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\",\"x\":1}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, 10, NULL},
    {"params an array",
        "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"ping\",\"params\":[1]}",
        MCP_MSG_INVALID, RPC_INVALID_PARAMS, 11, NULL},
    {"result and error",
        "{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":{},\"error\":{}}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, 12, NULL},
    {"neither", "{\"jsonrpc\":\"2.0\",\"id\":13}", MCP_MSG_INVALID,
        RPC_INVALID_REQUEST, 13, NULL},
    {"response without id", "{\"jsonrpc\":\"2.0\",\"result\":{}}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, -1, NULL},
    {"error not an object", "{\"jsonrpc\":\"2.0\",\"id\":14,\"error\":3}",
        MCP_MSG_INVALID, RPC_INVALID_REQUEST, 14, NULL},
};

static void
test_classify(void **state)
{
	const struct rpc_case *c;
	struct mcp_msg m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rpc_cases) / sizeof(rpc_cases[0]); i++) {
		c = &rpc_cases[i];
		mcp_rpc_parse(c->line, strlen(c->line), &m);
		if (m.kind != c->kind)
			fail_msg("%s: kind %d, want %d (%s)", c->name, m.kind,
			    c->kind, m.why);
		if (c->kind == MCP_MSG_INVALID && m.code != c->code)
			fail_msg("%s: code %d, want %d (%s)", c->name, m.code,
			    c->code, m.why);
		if (c->id == -1 && c->kind != MCP_MSG_NOTIFY && m.id != NULL)
			fail_msg("%s: an id, want null", c->name);
		if (c->id != -1 && (!json_is_integer(m.id) ||
		                       json_integer_value(m.id) != c->id))
			fail_msg("%s: not id %lld", c->name, c->id);
		if (c->method != NULL &&
		    (m.method == NULL || strcmp(m.method, c->method) != 0))
			fail_msg("%s: method %s", c->name,
			    m.method ? m.method : "(none)");
		mcp_rpc_free(&m);
	}
}

/* Nesting beyond jansson's depth is a parse error, not a crash. */
static void
test_deep(void **state)
{
	size_t n = 100000, i;
	char *line = malloc(2 * n + 1);
	struct mcp_msg m;

	(void)state;
	for (i = 0; i < n; i++) {
		line[i] = '[';
		line[n + i] = ']';
	}
	line[2 * n] = '\0';
	mcp_rpc_parse(line, 2 * n, &m);
	assert_int_equal(m.kind, MCP_MSG_INVALID);
	assert_int_equal(m.code, RPC_PARSE_ERROR);
	mcp_rpc_free(&m);
	free(line);
}

/* An error answer: the code, null id, and a message that is valid
 * UTF-8 whatever bytes went in. */
static void
test_error_message(void **state)
{
	json_t *e, *back;
	char *text;

	(void)state;
	e = mcp_rpc_error(NULL, RPC_PARSE_ERROR, "near '\xff\xfe'", NULL);
	text = json_dumps(e, JSON_COMPACT);
	assert_non_null(text);
	back = json_loads(text, 0, NULL);
	assert_non_null(back);
	assert_true(json_is_null(json_object_get(back, "id")));
	assert_int_equal(json_integer_value(json_object_get(
	                     json_object_get(back, "error"), "code")),
	    RPC_PARSE_ERROR);
	assert_string_equal(json_string_value(json_object_get(
	                        json_object_get(back, "error"), "message")),
	    "near '\xef\xbf\xbd\xef\xbf\xbd'");
	free(text);
	json_decref(back);
	json_decref(e);
}

/* ------------------------------------------------------------ lines */

struct seen {
	int lines, oversize;
	char last[256];
	size_t last_len;
};

static void
on_line(void *arg, const char *line, size_t len, int oversize)
{
	struct seen *s = arg;

	if (oversize) {
		s->oversize++;
		return;
	}
	s->lines++;
	s->last_len = len;
	memcpy(s->last, line, len < sizeof(s->last) ? len : sizeof(s->last));
}

static void
test_lines(void **state)
{
	struct mcp_line l;
	struct seen s;

	(void)state;
	memset(&s, 0, sizeof(s));
	mcp_line_init(&l, 16);
	mcp_line_feed(&l, "ab", 2, on_line, &s);
	assert_int_equal(s.lines, 0);
	mcp_line_feed(&l, "c\r\nde\nf", 7, on_line, &s);
	assert_int_equal(s.lines, 2);
	assert_int_equal(s.last_len, 2);
	assert_memory_equal(s.last, "de", 2);
	/* exactly the bound, split over feeds */
	mcp_line_feed(&l, "ghijklmnopqrstu", 15, on_line, &s);
	mcp_line_feed(&l, "\n", 1, on_line, &s);
	assert_int_equal(s.lines, 3);
	assert_int_equal(s.last_len, 16);
	assert_int_equal(s.oversize, 0);
	/* one byte over, whole in one feed */
	mcp_line_feed(&l, "0123456789abcdefg\nok\n", 21, on_line, &s);
	assert_int_equal(s.oversize, 1);
	assert_int_equal(s.lines, 4);
	assert_memory_equal(s.last, "ok", 2);
	/* the last line needs no newline */
	mcp_line_feed(&l, "end", 3, on_line, &s);
	mcp_line_eof(&l, on_line, &s);
	assert_int_equal(s.lines, 5);
	assert_memory_equal(s.last, "end", 3);
	mcp_line_free(&l);
}

/* A line of 10 MB in 64 KiB pieces: reported once, never kept (the
 * buffer stays within the bound), and the next line still comes. */
static void
test_oversize_stream(void **state)
{
	char chunk[65536];
	struct mcp_line l;
	struct seen s;
	size_t sent;

	(void)state;
	memset(&s, 0, sizeof(s));
	memset(chunk, 'x', sizeof(chunk));
	mcp_line_init(&l, MCP_LINE_MAX);
	for (sent = 0; sent < 10 * 1000 * 1000; sent += sizeof(chunk)) {
		mcp_line_feed(&l, chunk, sizeof(chunk), on_line, &s);
		assert_true(l.cap <= MCP_LINE_MAX);
	}
	assert_int_equal(s.oversize, 1);
	assert_int_equal(s.lines, 0);
	assert_null(l.buf);
	mcp_line_feed(&l, "tail\n{}\n", 8, on_line, &s);
	assert_int_equal(s.oversize, 1);
	assert_int_equal(s.lines, 1);
	assert_memory_equal(s.last, "{}", 2);
	mcp_line_free(&l);
}

/* ------------------------------------------------------------ output */

/* A pipe that takes little: output waits, nothing blocks, and the
 * bound refuses more. */
static void
test_out(void **state)
{
	struct mcp_out o;
	int p[2], i, n = 0;
	char buf[65536];
	json_t *msg;

	(void)state;
	signal(SIGPIPE, SIG_IGN); /* as the adapter does */
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	(void)fcntl(p[1], F_SETPIPE_SZ, 4096);
	mcp_out_init(&o, p[1], 1024 * 1024);
	msg = json_pack("{s:s%}", "x", "y", (size_t)1);
	json_object_set_new(msg, "pad", json_stringn(buf, 0));
	for (i = 0; i < 200; i++) {
		json_object_set_new(msg, "i", json_integer(i));
		assert_int_equal(mcp_out_json(&o, msg), 0);
		assert_int_equal(mcp_out_flush(&o), 0);
	}
	assert_true(mcp_out_pending(&o) > 0); /* the pipe is full */
	memset(buf, 'z', sizeof(buf));
	json_object_set_new(msg, "pad", json_stringn(buf, sizeof(buf)));
	while (n < 100 && mcp_out_json(&o, msg) == 0)
		n++;
	assert_true(n > 0 && n < 20);
	assert_int_equal(errno, ENOBUFS);
	/* drained, it goes on */
	while (read(p[0], buf, sizeof(buf)) > 0 || mcp_out_pending(&o) > 0)
		assert_int_equal(mcp_out_flush(&o), 0);
	assert_int_equal(mcp_out_pending(&o), 0);
	/* a reader that is gone is an error */
	close(p[0]);
	assert_int_equal(mcp_out_json(&o, msg), 0);
	assert_int_equal(mcp_out_flush(&o), -1);
	json_decref(msg);
	mcp_out_free(&o);
	close(p[1]);
}

/* ------------------------------------------------------------ text */

static void
test_text(void **state)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
		size_t outlen;
	} cases[] = {
	    {"plain", 5, "plain", 5},
	    {"a\0b", 3, "a\0b", 3},
	    {"caf\xc3\xa9", 5, "caf\xc3\xa9", 5},
	    {"\xff", 1, "\xef\xbf\xbd", 3},
	    {"\xc3", 1, "\xef\xbf\xbd", 3},
	    {"\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 6},
	    {"\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 9},
	    {"\xf4\x90\x80\x80", 4,
	        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 12},
	    {"\xf0\x9d\x84\x9e", 4, "\xf0\x9d\x84\x9e", 4},
	};
	json_t *j;
	char *cut;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		j = mcp_text_json(cases[i].in, cases[i].len);
		assert_non_null(j);
		assert_int_equal(json_string_length(j), cases[i].outlen);
		assert_memory_equal(
		    json_string_value(j), cases[i].out, cases[i].outlen);
		json_decref(j);
	}
	cut = mcp_text_cut("abc\xc3\xa9\xc3\xa9", 6);
	assert_string_equal(cut, "abc\xe2\x80\xa6");
	free(cut);
	cut = mcp_text_cut("short", 7);
	assert_string_equal(cut, "short");
	free(cut);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classify),
	    cmocka_unit_test(test_deep),
	    cmocka_unit_test(test_error_message),
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_oversize_stream),
	    cmocka_unit_test(test_out),
	    cmocka_unit_test(test_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
