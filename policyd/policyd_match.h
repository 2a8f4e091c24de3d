/*
 * policyd_match.h: the pattern languages of policies and manifests.
 *   glob:      '*' any run without '/', '**' any run, '?' one char
 *   host:port: "api.example.com:443", "*.example.com:443" (subdomains
 *              only, never example.com itself), "*:443", "[::1]:8080";
 *              hosts compare case-insensitively; port "*" is any port.
 */
#ifndef SB_POLICYD_MATCH_H
#define SB_POLICYD_MATCH_H

#include <stddef.h>

int glob_match(const char *pat, const char *s);
/* Does pattern ceil allow everything pattern want may reach (as text)? */
int path_covers(const char *ceil, const char *want);
/* Split and validate "host:port"; 0 ok, -1 malformed. */
int hostport_parse(
    const char *s, char *host, size_t hlen, char *port, size_t plen);
/* Does ceiling pattern ceil cover the declared pattern want? */
int hostport_covers(const char *ceil, const char *want);

#endif
