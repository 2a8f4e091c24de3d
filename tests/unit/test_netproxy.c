/*
 * test_netproxy.c: the egress proxy's parser of request heads and its
 * rules of where a connection may go (netproxy/netproxy_http.c,
 * netproxy/netproxy_addr.c).
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../netproxy/netproxy.h"

/* Parse head; its status (0: accepted), and the upstream head in out. */
static int
parse(const char *head, struct http_req *r, char *out, size_t outlen)
{
	struct evbuffer *b = evbuffer_new();
	size_t n;
	int rc;

	assert_non_null(b);
	rc = http_head_parse(head, strlen(head), r, b);
	n = evbuffer_get_length(b);
	if (out != NULL) {
		assert_true(n < outlen);
		evbuffer_remove(b, out, n);
		out[n] = '\0';
	}
	evbuffer_free(b);
	return rc == 0 ? 0 : r->status;
}

static void
test_head_end(void **state)
{
	(void)state;
	assert_int_equal(http_head_end("GET / HTTP/1.1\r\n", 16), 0);
	assert_int_equal(http_head_end("A\r\n\r\nrest", 9), 5);
	assert_int_equal(http_head_end("A\n\nrest", 7), 3);
	assert_int_equal(http_head_end("", 0), 0);
}

static void
test_connect(void **state)
{
	struct http_req r;

	(void)state;
	assert_int_equal(
	    parse("CONNECT Api.Example.COM:443 HTTP/1.1\r\nHost: x\r\n\r\n", &r,
	        NULL, 0),
	    0);
	assert_true(r.connect);
	assert_string_equal(r.host, "api.example.com");
	assert_int_equal(r.port, 443);
	assert_int_equal(
	    parse("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", &r, NULL, 0), 0);
	assert_string_equal(r.host, "[::1]");
	assert_int_equal(r.port, 8443);
	assert_int_equal(
	    parse("CONNECT 10.0.0.1:80 HTTP/1.0\n\n", &r, NULL, 0), 0);
	assert_string_equal(r.host, "10.0.0.1");
}

/* A plain request goes on in origin form, with our Host and close. */
static void
test_plain_rewritten(void **state)
{
	struct http_req r;
	char out[1024];

	(void)state;
	assert_int_equal(
	    parse("GET http://Example.org:8080/a/b?q=1 HTTP/1.1\r\n"
	          "Host: evil.test\r\nProxy-Connection: keep-alive\r\n"
	          "Proxy-Authorization: Basic eA==\r\nproxy-anything: x\r\n"
	          "Accept: */*\r\nConnection: keep-alive\r\n\r\n",
	        &r, out, sizeof(out)),
	    0);
	assert_false(r.connect);
	assert_string_equal(r.host, "example.org");
	assert_int_equal(r.port, 8080);
	assert_string_equal(out,
	    "GET /a/b?q=1 HTTP/1.1\r\nHost: example.org:8080\r\n"
	    "Accept: */*\r\nConnection: close\r\n\r\n");
	assert_int_equal(parse("HEAD http://example.org HTTP/1.1\r\n\r\n", &r,
	                     out, sizeof(out)),
	    0);
	assert_int_equal(r.port, 80);
	assert_string_equal(out, "HEAD / HTTP/1.1\r\nHost: "
	                         "example.org\r\nConnection: close\r\n\r\n");
}

/* Every malformed head is refused with its status, never let through. */
static void
test_refused(void **state)
{
	static const struct {
		const char *head;
		int status;
		const char *code;
	} bad[] = {
	    {"garbage\r\n\r\n", 400, "bad_request"},
	    {"CONNECT\r\n\r\n", 400, "bad_request"},
	    {"CONNECT example.org HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT example.org:0 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT example.org:65536 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT example.org:-1 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT example.org:+80 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT example.org:080000 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT example.org:443 HTTP/2.0\r\n\r\n", 400, "bad_request"},
	    {"CONNECT  example.org:443 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"connect example.org:443 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT exa\tmple.org:443 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT ex_ample.org:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"CONNECT -.org:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"CONNECT a..b:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"CONNECT example.org.:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT [zz]:443 HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"CONNECT \xff\xfe:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"GET https://example.org/ HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"GET /relative HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"GET http://u:p@example.org/ HTTP/1.1\r\n\r\n", 400,
	        "bad_request"},
	    {"GET http://example.org:99999/ HTTP/1.1\r\n\r\n", 400,
	        "bad_request"},
	    {"GET http:///x HTTP/1.1\r\n\r\n", 400, "bad_request"},
	    {"GET http://example.org/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400,
	        "bad_request"},
	    {"GET http://example.org/ HTTP/1.1\r\nBad Header: a\r\n\r\n", 400,
	        "bad_request"},
	    {"GET http://example.org/ HTTP/1.1\r\nX: a\x01"
	     "b\r\n\r\n",
	        400, "bad_request"},
	    /* an address spelled as a name: a resolver may read it so */
	    {"CONNECT 8.8.8.08:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"CONNECT 127.1:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"CONNECT 127.0.0.01:443 HTTP/1.1\r\n\r\n", 403, "bad_host"},
	    {"GET http://example.org/ HTTP/1.1\r\n: v\r\n\r\n", 400,
	        "bad_request"},
	};
	struct http_req r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse(bad[i].head, &r, NULL, 0) != bad[i].status ||
		    strcmp(r.code, bad[i].code) != 0)
			fail_msg("\"%s\": %d %s, not %d %s", bad[i].head,
			    r.status, r.code ? r.code : "-", bad[i].status,
			    bad[i].code);
	}
}

/* A NUL inside the head is a control byte like any other. */
static void
test_nul_refused(void **state)
{
	static const char head[] = "CONNECT example.org\0:443 HTTP/1.1\r\n\r\n";
	struct evbuffer *b = evbuffer_new();
	struct http_req r;

	(void)state;
	static const char name[] = "GET http://a.example/ HTTP/1.1\r\n"
	                           "Host\0: evil.example\r\n\r\n";

	assert_int_equal(http_head_parse(head, sizeof(head) - 1, &r, b), -1);
	assert_int_equal(r.status, 400);
	/* in a header's name too: it would pass for another Host line */
	assert_int_equal(http_head_parse(name, sizeof(name) - 1, &r, b), -1);
	assert_int_equal(r.status, 400);
	assert_int_equal(evbuffer_get_length(b), 0);
	evbuffer_free(b);
}

/* A non-ASCII name reaches the allow check as its A-labels. */
static void
test_idna(void **state)
{
	struct http_req r;

	(void)state;
	assert_int_equal(
	    parse("CONNECT b\xc3\xbc\x63her.example:443 HTTP/1.1\r\n\r\n", &r,
	        NULL, 0),
	    0);
	assert_string_equal(r.host, "xn--bcher-kva.example");
}

static int
internal(const char *lit)
{
	struct sockaddr_storage ss;
	int len = sizeof(ss);

	assert_int_equal(
	    evutil_parse_sockaddr_port(lit, (struct sockaddr *)&ss, &len), 0);
	return addr_internal((struct sockaddr *)&ss);
}

static void
test_internal_ranges(void **state)
{
	static const char *const in[] = {"127.0.0.1", "127.9.9.9", "10.1.2.3",
	    "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
	    "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255",
	    "198.18.0.1", "[::1]", "[::]", "[fe80::1]", "[fd00:ec2::254]",
	    "[fc00::1]", "[ff02::1]", "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]",
	    "[64:ff9b::a9fe:a9fe]", "[fec0::1]", "[2002:7f00:1::1]",
	    "[2002:a9fe:a9fe::1]", NULL};
	static const char *const out[] = {"93.184.216.34", "8.8.8.8",
	    "172.32.0.1", "172.15.255.255", "100.128.0.1", "192.169.0.1",
	    "[2606:4700::1111]", "[::ffff:8.8.8.8]", "[2002:808:808::1]", NULL};
	size_t i;

	(void)state;
	for (i = 0; in[i] != NULL; i++)
		if (!internal(in[i]))
			fail_msg("%s: not internal", in[i]);
	for (i = 0; out[i] != NULL; i++)
		if (internal(out[i]))
			fail_msg("%s: internal", out[i]);
}

static void
test_allowed(void **state)
{
	static char *allow[] = {"api.example.com:443", "*.github.com:443",
	    "127.0.0.1:8080", "[::1]:9000", "*:8443", NULL};
	size_t n = 5;

	(void)state;
	assert_true(addr_allowed(allow, n, "api.example.com", 443, 0));
	assert_false(addr_allowed(allow, n, "api.example.com", 80, 0));
	assert_false(addr_allowed(allow, n, "example.com", 443, 0));
	assert_true(addr_allowed(allow, n, "raw.github.com", 443, 0));
	assert_false(addr_allowed(allow, n, "github.com", 443, 0));
	assert_false(addr_allowed(allow, n, "evilgithub.com", 443, 0));
	assert_true(addr_allowed(allow, n, "anything.test", 8443, 0));
	/* a literal only by its own entry: "*:8443" lets no IP through */
	assert_true(addr_allowed(allow, n, "127.0.0.1", 8080, 0));
	assert_false(addr_allowed(allow, n, "127.0.0.1", 8443, 0));
	assert_false(addr_allowed(allow, n, "127.0.0.2", 8080, 0));
	assert_true(addr_allowed(allow, n, "[0:0::1]", 9000, 0));
	assert_false(addr_allowed(allow, n, "93.184.216.34", 8443, 0));
	/* an internal address a name resolved to: listed as a literal? */
	assert_true(addr_allowed(allow, n, "127.0.0.1", 8080, 1));
	assert_false(addr_allowed(allow, n, "127.0.0.1", 443, 1));
	/* a name entry never covers a literal, even one spelled alike */
	assert_false(addr_allowed(allow, n, "api.example.com", 443, 1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_head_end),
	    cmocka_unit_test(test_connect),
	    cmocka_unit_test(test_plain_rewritten),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_nul_refused),
	    cmocka_unit_test(test_idna),
	    cmocka_unit_test(test_internal_ranges),
	    cmocka_unit_test(test_allowed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
