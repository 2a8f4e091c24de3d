/*
 * netproxy_addr.c: where a connection may go. A name is let through by
 * an entry that covers it; an IP literal only by an entry naming that
 * literal (never by a wildcard); and an address in a range that reaches
 * the host or its network (loopback, private, link-local and so cloud
 * metadata, CGNAT, unspecified, multicast, reserved) only when an entry
 * names it as a literal: a name that resolves there (DNS rebinding) is
 * refused.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "netproxy.h"

/* IPv4 ranges, as (network, prefix length). */
static const struct {
	uint32_t net;
	unsigned len;
} v4_internal[] = {
    {0x00000000, 8},  /* 0/8: "this network" */
    {0x0a000000, 8},  /* 10/8 */
    {0x64400000, 10}, /* 100.64/10: CGNAT */
    {0x7f000000, 8},  /* 127/8: loopback */
    {0xa9fe0000, 16}, /* 169.254/16: link-local, cloud metadata */
    {0xac100000, 12}, /* 172.16/12 */
    {0xc0000000, 24}, /* 192.0.0/24: protocol assignments */
    {0xc0a80000, 16}, /* 192.168/16 */
    {0xc6120000, 15}, /* 198.18/15: benchmarking */
    {0xe0000000, 3},  /* 224/3: multicast, reserved, broadcast */
};

static int
v4_is_internal(uint32_t a)
{
	size_t i;

	for (i = 0; i < sizeof(v4_internal) / sizeof(v4_internal[0]); i++)
		if ((a >> (32 - v4_internal[i].len)) ==
		    (v4_internal[i].net >> (32 - v4_internal[i].len)))
			return 1;
	return 0;
}

int
addr_internal(const struct sockaddr *sa)
{
	static const uint8_t mapped[12] = {
	    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
	const uint8_t *b;
	uint32_t v4;

	if (sa->sa_family == AF_INET)
		return v4_is_internal(
		    ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return 1;
	b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	/* an IPv4 address inside (mapped, NAT64) counts as that address */
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0) {
		v4 = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 |
		     (uint32_t)b[14] << 8 | b[15];
		return v4_is_internal(v4);
	}
	if (b[0] == 0x20 && b[1] == 0x02) { /* 6to4: 2002:V4V4::/48 */
		v4 = (uint32_t)b[2] << 24 | (uint32_t)b[3] << 16 |
		     (uint32_t)b[4] << 8 | b[5];
		if (v4_is_internal(v4))
			return 1;
	}
	return IN6_IS_ADDR_UNSPECIFIED((const struct in6_addr *)b) ||
	       IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)b) ||
	       (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || /* fe80::/10 */
	       (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) || /* fec0::/10 */
	       (b[0] & 0xfe) == 0xfc ||                   /* fc00::/7 */
	       b[0] == 0xff ||                            /* multicast */
	       (b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] == 0 && b[4] == 0 &&
	           b[5] == 0 && b[6] == 0 && b[7] == 0 && b[8] == 0 &&
	           b[9] == 0 && b[10] == 0 &&
	           b[11] == 0); /* ::/96, IPv4-compatible */
}

void
addr_literal(const struct sockaddr *sa, char *out, size_t len)
{
	char tmp[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET &&
	    inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out,
	        (socklen_t)len) != NULL)
		return;
	if (sa->sa_family == AF_INET6 &&
	    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr,
	        tmp, sizeof(tmp)) != NULL) {
		snprintf(out, len, "[%s]", tmp);
		return;
	}
	snprintf(out, len, "?");
}

int
addr_allowed(char *const *allow, size_t n, const char *host, unsigned port,
    int literal_only)
{
	char want[HOSTPORT_HOST_MAX + 8], h[HOSTPORT_HOST_MAX], p[8];
	size_t i;

	snprintf(want, sizeof(want), "%s:%u", host, port);
	for (i = 0; i < n; i++) {
		if (hostport_parse(allow[i], h, sizeof(h), p, sizeof(p)) == -1)
			continue;
		/* a literal is let through by its own entry, never by "*" */
		if ((literal_only || hostport_is_literal(host)) &&
		    !hostport_is_literal(h))
			continue;
		if (!literal_only && !hostport_is_literal(host) &&
		    hostport_is_literal(h))
			continue;
		if (hostport_covers(allow[i], want))
			return 1;
	}
	return 0;
}
