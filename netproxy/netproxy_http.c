/*
 * netproxy_http.c: the one parser of what a skill sends the egress
 * proxy: a request head, CONNECT host:port or an absolute-form
 * http://host[:port]/path request, strictly (no control byte, no
 * userinfo, no folded header, a port of digits in 1..65535), and for
 * the latter the head to send on: origin-form, the Host of the target,
 * no hop-by-hop or proxy header, Connection: close. Pure code: no I/O.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../lib/hostport.h"
#include "netproxy.h"

size_t
http_head_end(const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static int
refuse(struct http_req *r, int status, const char *code, const char *msg)
{
	r->status = status;
	r->code = code;
	snprintf(r->msg, sizeof(r->msg), "%s", msg);
	return -1;
}

/* One line of the head, without its CR LF; NULL at the blank line. */
static const char *
next_line(const char **p, const char *end, size_t *n)
{
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));

	if (nl == NULL)
		return NULL;
	*p = nl + 1;
	*n = (size_t)(nl - s);
	if (*n > 0 && s[*n - 1] == '\r')
		(*n)--;
	return *n == 0 ? NULL : s;
}

/* A port: 1 to 5 digits, 1..65535. */
static int
port_parse(const char *s, size_t n, uint16_t *port)
{
	unsigned long v = 0;
	size_t i;

	if (n == 0 || n > 5)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

/*
 * host[:port] (or [v6][:port]) into r->host (lower-case ASCII, IDNA for
 * a non-ASCII name) and r->port (defport when none and allowed).
 */
static int
authority_parse(const char *s, size_t n, uint16_t defport, struct http_req *r)
{
	char raw[HOSTPORT_HOST_MAX];
	const char *colon = NULL;
	size_t hl, i;

	if (n == 0)
		return refuse(r, 400, "bad_request", "no host in the request");
	if (memchr(s, '@', n) != NULL)
		return refuse(r, 400, "bad_request",
		    "a user name or password in the URL is refused");
	if (s[0] == '[') {
		const char *rb = memchr(s, ']', n);
		if (rb == NULL)
			return refuse(
			    r, 400, "bad_request", "bad IPv6 literal");
		hl = (size_t)(rb - s) + 1;
		if (hl < n && s[hl] != ':')
			return refuse(
			    r, 400, "bad_request", "bad IPv6 literal");
		colon = hl < n ? s + hl : NULL;
	} else {
		colon = memchr(s, ':', n);
		hl = colon ? (size_t)(colon - s) : n;
	}
	if (colon != NULL) {
		if (port_parse(colon + 1, n - hl - 1, &r->port) == -1)
			return refuse(r, 400, "bad_request",
			    "the port must be a number from 1 to 65535");
	} else if (defport == 0)
		return refuse(r, 400, "bad_request", "no port in the request");
	else
		r->port = defport;
	if (hl == 0 || hl >= sizeof(raw))
		return refuse(r, 403, "bad_host", "the host name is too long");
	memcpy(raw, s, hl);
	raw[hl] = '\0';
	if (raw[0] == '[') {
		if (!hostport_is_literal(raw))
			return refuse(
			    r, 400, "bad_request", "bad IPv6 literal");
		for (i = 0; i <= hl; i++)
			r->host[i] = (char)tolower((unsigned char)raw[i]);
		return 0;
	}
	if (hostport_host_ascii(raw, r->host, sizeof(r->host)) == -1)
		return refuse(r, 403, "bad_host",
		    "the host name is not a valid internationalized name");
	/* labels of 1..63 letters, digits, inner '-', joined by '.' */
	for (i = 0, hl = 0; r->host[i] != '\0'; i++) {
		char c = r->host[i];
		if (c == '.') {
			if (hl == 0 || r->host[i - 1] == '-')
				break;
			hl = 0;
			continue;
		}
		if (!(isalnum((unsigned char)c) || (c == '-' && hl > 0)) ||
		    ++hl > 63)
			break;
	}
	if (r->host[i] != '\0' || hl == 0 || i > 253 || r->host[i - 1] == '-')
		return refuse(r, 403, "bad_host", "not a valid host name");
	/* No top-level label is all digits: such a "name" is an IPv4
	 * address spelled another way (8.8.8.08, 127.1), which a resolver
	 * may read as one; only the dotted-quad literal itself passes. */
	if (strspn(r->host + i - hl, "0123456789") == hl &&
	    !hostport_is_literal(r->host))
		return refuse(r, 403, "bad_host",
		    "an IP address must be written as a plain dotted quad");
	return 0;
}

/* Headers a proxy must not pass on, or that we set ourselves. */
static int
header_dropped(const char *s, size_t n)
{
	static const char *const drop[] = {"host", "connection",
	    "proxy-connection", "proxy-authorization", "keep-alive",
	    "proxy-authenticate", "te", "upgrade", NULL};
	size_t i, l;

	if (n > 6 && strncasecmp(s, "proxy-", 6) == 0) /* ours, not theirs */
		return 1;
	for (i = 0; drop[i] != NULL; i++) {
		l = strlen(drop[i]);
		if (n > l && s[l] == ':' && strncasecmp(s, drop[i], l) == 0)
			return 1;
	}
	return 0;
}

/* A header line: a token, ':', then visible text, spaces and tabs. */
static int
header_ok(const char *s, size_t n)
{
	static const char tchar[] = "!#$%&'*+-.^_`|~";
	const char *colon = memchr(s, ':', n);
	size_t i;

	if (colon == NULL || colon == s)
		return 0;
	for (i = 0; s + i < colon; i++)
		if (!isalnum((unsigned char)s[i]) &&
		    (s[i] == '\0' || strchr(tchar, s[i]) == NULL))
			return 0;
	for (i++; i < n; i++)
		if (((unsigned char)s[i] < 0x20 && s[i] != '\t') ||
		    (unsigned char)s[i] == 0x7f)
			return 0;
	return 1;
}

int
http_head_parse(
    const char *buf, size_t len, struct http_req *r, struct evbuffer *out)
{
	const char *p = buf, *end = buf + len, *line, *sp1, *sp2, *t, *a;
	size_t n, i, tl, al;

	memset(r, 0, sizeof(*r));
	if ((line = next_line(&p, end, &n)) == NULL)
		return refuse(r, 400, "bad_request", "no request line");
	for (i = 0; i < n; i++)
		if (((unsigned char)line[i] < 0x21 && line[i] != ' ') ||
		    (unsigned char)line[i] == 0x7f)
			return refuse(r, 400, "bad_request",
			    "a control character in the request line");
	if ((sp1 = memchr(line, ' ', n)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', (size_t)(line + n - sp1 - 1))) ==
	        NULL ||
	    memchr(sp2 + 1, ' ', (size_t)(line + n - sp2 - 1)) != NULL ||
	    (size_t)(sp1 - line) >= sizeof(r->method) || sp1 == line)
		return refuse(
		    r, 400, "bad_request", "not an HTTP request line");
	if ((size_t)(line + n - sp2 - 1) != 8 ||
	    (strncmp(sp2 + 1, "HTTP/1.1", 8) != 0 &&
	        strncmp(sp2 + 1, "HTTP/1.0", 8) != 0))
		return refuse(r, 400, "bad_request", "not HTTP/1.0 or 1.1");
	for (i = 0; line + i < sp1; i++) {
		if (!isupper((unsigned char)line[i]))
			return refuse(r, 400, "bad_request", "bad method");
		r->method[i] = line[i];
	}
	t = sp1 + 1;
	tl = (size_t)(sp2 - t);
	r->connect = strcmp(r->method, "CONNECT") == 0;
	/* every header, checked, whatever the method */
	for (a = p; (line = next_line(&p, end, &n)) != NULL;)
		if (line[0] == ' ' || line[0] == '\t' || !header_ok(line, n))
			return refuse(
			    r, 400, "bad_request", "a malformed header");
	if (r->connect)
		return authority_parse(t, tl, 0, r);
	if (tl < 7 || strncasecmp(t, "http://", 7) != 0)
		return refuse(r, 400, "bad_request",
		    "only CONNECT and absolute http:// URLs are proxied");
	t += 7;
	tl -= 7;
	for (al = 0; al < tl && t[al] != '/' && t[al] != '?' && t[al] != '#';
	     al++)
		;
	if (authority_parse(t, al, 80, r) == -1)
		return -1;
	/* origin-form, our Host, the client's other headers, close */
	if (evbuffer_add_printf(out, "%s %s%.*s HTTP/1.1\r\nHost: %s",
	        r->method, al == tl || t[al] != '/' ? "/" : "", (int)(tl - al),
	        t + al, r->host) == -1 ||
	    (r->port != 80 && evbuffer_add_printf(out, ":%u", r->port) == -1) ||
	    evbuffer_add(out, "\r\n", 2) == -1)
		return refuse(r, 500, "internal", "out of memory");
	for (p = a; (line = next_line(&p, end, &n)) != NULL;)
		if (!header_dropped(line, n) &&
		    (evbuffer_add(out, line, n) == -1 ||
		        evbuffer_add(out, "\r\n", 2) == -1))
			return refuse(r, 500, "internal", "out of memory");
	if (evbuffer_add_printf(out, "Connection: close\r\n\r\n") == -1)
		return refuse(r, 500, "internal", "out of memory");
	return 0;
}
