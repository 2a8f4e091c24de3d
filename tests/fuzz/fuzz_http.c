/*
 * fuzz_http.c: libFuzzer harness for what a sandboxed skill sends the
 * egress proxy: the request head (netproxy/netproxy_http.c), fed as
 * head_read feeds it (at most HTTP_HEAD_MAX bytes, parsed once a head
 * ends within them), then the grant's decision on the parsed target
 * (addr_allowed, netproxy/netproxy_addr.c). Whatever the input:
 *
 * - the head ends just past its first blank line, and no sooner;
 * - a refusal is a 400, 403 or 431 with a code and a message;
 * - an accepted head names a host of lower-case letters, digits, '-'
 *   and '.' or a bracketed IPv6 literal, a port in 1..65535 and a method
 *   of upper-case letters; a CONNECT sends nothing upstream;
 * - a plain request's upstream head is "METHOD /... HTTP/1.1", one Host
 *   line naming the parsed host (and port unless 80), no Proxy- header,
 *   no control byte but CR LF and TAB, every line ended by CR LF, and
 *   "Connection: close" then the one blank line at its end;
 * - on a fixed allow list, addr_allowed lets through exactly what a
 *   reading of the list by hand does: a literal only by its own entry.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "../../netproxy/netproxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                               \
	do {                                                                   \
		if (!(x))                                                      \
			abort();                                               \
	} while (0)

/* The grant the parsed target is checked against. */
static char *const fuzz_allow[] = {
    "api.example.com:443",
    "*.example.org:*",
    "*:8080",
    "10.0.0.1:80",
    "192.168.1.1:*",
    "[::1]:8080",
    "[2001:db8::1]:*",
};
#define FUZZ_NALLOW (sizeof(fuzz_allow) / sizeof(fuzz_allow[0]))

/* The literals of fuzz_allow, read by hand: family, address, port (0: any). */
static const struct {
	int af;
	const char *addr;
	unsigned port;
} fuzz_literals[] = {
    {AF_INET, "10.0.0.1", 80},
    {AF_INET, "192.168.1.1", 0},
    {AF_INET6, "::1", 8080},
    {AF_INET6, "2001:db8::1", 0},
};

/* host as an IP literal: its family and bytes, or 0 when it is a name. */
static int
literal_of(const char *host, unsigned char addr[16])
{
	char tmp[HOSTPORT_HOST_MAX];
	size_t n = strlen(host);

	if (inet_pton(AF_INET, host, addr) == 1)
		return AF_INET;
	if (n < 3 || host[0] != '[' || host[n - 1] != ']')
		return 0;
	memcpy(tmp, host + 1, n - 2);
	tmp[n - 2] = '\0';
	return inet_pton(AF_INET6, tmp, addr) == 1 ? AF_INET6 : 0;
}

/* Does an entry of fuzz_allow name this literal and port? */
static int
literal_listed(int af, const unsigned char addr[16], unsigned port)
{
	unsigned char want[16];
	size_t i;

	for (i = 0; i < sizeof(fuzz_literals) / sizeof(fuzz_literals[0]); i++) {
		if (fuzz_literals[i].af != af ||
		    (fuzz_literals[i].port != 0 &&
		        fuzz_literals[i].port != port))
			continue;
		CHECK(inet_pton(af, fuzz_literals[i].addr, want) == 1);
		if (memcmp(want, addr, af == AF_INET ? 4 : 16) == 0)
			return 1;
	}
	return 0;
}

/* Does a name entry of fuzz_allow cover this name and port? */
static int
name_listed(const char *host, unsigned port)
{
	static const char org[] = ".example.org";
	size_t n = strlen(host), lo = sizeof(org) - 1;

	return (strcmp(host, "api.example.com") == 0 && port == 443) ||
	       (n > lo && strcmp(host + n - lo, org) == 0) || port == 8080;
}

/* The grant lets through what the list says, a literal only by name. */
static void
check_allowed(const struct http_req *r)
{
	unsigned char addr[16];
	int af = literal_of(r->host, addr);
	int by_name =
	    addr_allowed(fuzz_allow, FUZZ_NALLOW, r->host, r->port, 0);
	int by_lit = addr_allowed(fuzz_allow, FUZZ_NALLOW, r->host, r->port, 1);

	CHECK(hostport_is_literal(r->host) == (af != 0));
	if (af != 0) {
		CHECK(by_name == literal_listed(af, addr, r->port));
		CHECK(by_lit == by_name);
	} else {
		CHECK(by_name == name_listed(r->host, r->port));
		CHECK(!by_lit);
	}
}

/* A host as the parser promises it. */
static void
check_host(const char *h)
{
	unsigned char addr[16];
	size_t n = strlen(h), i;

	CHECK(n > 0 && n < HOSTPORT_HOST_MAX);
	if (h[0] == '[') {
		CHECK(literal_of(h, addr) == AF_INET6);
		for (i = 1; i < n - 1; i++)
			CHECK((h[i] >= '0' && h[i] <= '9') ||
			      (h[i] >= 'a' && h[i] <= 'f') || h[i] == ':' ||
			      h[i] == '.');
		return;
	}
	for (i = 0; i < n; i++)
		CHECK((h[i] >= 'a' && h[i] <= 'z') ||
		      (h[i] >= '0' && h[i] <= '9') || h[i] == '-' ||
		      h[i] == '.');
}

/* Does line (n bytes, no CR LF) name header name? */
static int
header_is(const char *line, size_t n, const char *name)
{
	size_t l = strlen(name);

	return n > l && line[l] == ':' && strncasecmp(line, name, l) == 0;
}

/* The head a plain request sends upstream. */
static void
check_upstream(const struct http_req *r, const char *s, size_t len)
{
	static const char tail[] = "Connection: close\r\n\r\n";
	char want[HOSTPORT_HOST_MAX + 16];
	const char *p, *end = s + len, *nl;
	size_t ml = strlen(r->method), n, i, nhost = 0, nconn = 0;

	CHECK(len > ml + 2 && memcmp(s, r->method, ml) == 0 && s[ml] == ' ' &&
	      s[ml + 1] == '/');
	CHECK(len >= sizeof(tail) - 1 &&
	      memcmp(end - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		CHECK(c >= 0x20 || c == '\r' || c == '\n' || c == '\t');
		CHECK(c != 0x7f);
		/* CR only before LF, LF only after CR */
		CHECK(c != '\r' || (i + 1 < len && s[i + 1] == '\n'));
		CHECK(c != '\n' || (i > 0 && s[i - 1] == '\r'));
	}
	snprintf(want, sizeof(want), "Host: %s", r->host);
	if (r->port != 80)
		snprintf(want + strlen(want), sizeof(want) - strlen(want),
		    ":%u", r->port);
	/* the request line */
	nl = memchr(s, '\n', len);
	CHECK(
	    nl != NULL && nl - s >= 10 && memcmp(nl - 10, " HTTP/1.1", 9) == 0);
	for (p = nl + 1; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		CHECK(nl != NULL);
		n = (size_t)(nl - p) - 1; /* without its CR */
		if (n == 0) {
			CHECK(nl + 1 == end); /* the one blank line ends it */
			break;
		}
		CHECK(!(n >= 6 && strncasecmp(p, "proxy-", 6) == 0));
		if (header_is(p, n, "host")) {
			nhost++;
			CHECK(n == strlen(want) && memcmp(p, want, n) == 0);
		}
		if (header_is(p, n, "connection")) {
			nconn++;
			CHECK(
			    n == 17 && memcmp(p, "Connection: close", 17) == 0);
		}
	}
	CHECK(nhost == 1 && nconn == 1);
}

/* An accepted head: what the rest of the proxy relies on. */
static void
check_accepted(const struct http_req *r, struct evbuffer *out)
{
	size_t i, ml = strlen(r->method), len = evbuffer_get_length(out);

	CHECK(ml >= 1 && ml < sizeof(r->method));
	for (i = 0; i < ml; i++)
		CHECK(r->method[i] >= 'A' && r->method[i] <= 'Z');
	CHECK(r->connect == (strcmp(r->method, "CONNECT") == 0));
	CHECK(r->port >= 1);
	check_host(r->host);
	check_allowed(r);
	if (r->connect) {
		CHECK(len == 0);
		return;
	}
	check_upstream(r, (const char *)evbuffer_pullup(out, -1), len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = size < HTTP_HEAD_MAX ? size : HTTP_HEAD_MAX, end;
	struct evbuffer *out;
	struct http_req r;
	char *buf, *head;

	/* exact copies, so that a read past either end is ASan's */
	if ((buf = malloc(len ? len : 1)) == NULL)
		return 0;
	memcpy(buf, data, len);
	end = http_head_end(buf, len);
	if (end == 0) {
		free(buf);
		return 0;
	}
	CHECK(end >= 2 && end <= len && buf[end - 1] == '\n');
	CHECK(
	    http_head_end(buf, end) == end && http_head_end(buf, end - 1) == 0);
	if ((head = malloc(end)) == NULL || (out = evbuffer_new()) == NULL)
		abort();
	memcpy(head, buf, end);
	free(buf);
	if (http_head_parse(head, end, &r, out) == -1) {
		CHECK(r.status == 400 || r.status == 403 || r.status == 431);
		CHECK(r.code != NULL && r.code[0] != '\0' && r.msg[0] != '\0');
	} else
		check_accepted(&r, out);
	evbuffer_free(out);
	free(head);
	return 0;
}
