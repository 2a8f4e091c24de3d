/*
 * hostport.h: "api.example.com:443", "*.example.com:443" (subdomains
 * only, never example.com itself), "*:443", "[::1]:8080", "10.0.0.1:80";
 * hosts compare case-insensitively; port "*" is any port.
 */
#ifndef SB_HOSTPORT_H
#define SB_HOSTPORT_H

#include <stddef.h>

#define HOSTPORT_HOST_MAX 256 /* bytes of a host, its NUL included */

/* Split and validate "host:port"; 0 ok, -1 malformed. */
int hostport_parse(
    const char *s, char *host, size_t hlen, char *port, size_t plen);
/* Does pattern ceil cover the pattern (or plain host:port) want? */
int hostport_covers(const char *ceil, const char *want);
/*
 * A host as DNS knows it: lower-case ASCII, a non-ASCII name through
 * IDNA2008 (UTS #46) into its A-labels; 0, or -1 when it cannot be.
 */
int hostport_host_ascii(const char *in, char *out, size_t len);
/* Is host an IPv4 literal or a bracketed IPv6 literal? */
int hostport_is_literal(const char *host);

#endif
