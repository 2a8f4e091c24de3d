/*
 * hostport.c: the host:port language of network grants, shared by
 * policyd (does a ceiling cover a skill's entry?) and the egress proxy
 * (does an entry allow this connection?).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <idn2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostport.h"

static int
host_char_ok(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '.';
}

int
hostport_parse(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon, *h;
	size_t n, i;
	unsigned char v6[16];
	char tmp[64];

	if (s[0] == '[') {
		if ((colon = strstr(s, "]:")) == NULL)
			return -1;
		n = (size_t)(colon - s - 1);
		if (n == 0 || n >= sizeof(tmp) || n + 3 > hlen)
			return -1;
		memcpy(tmp, s + 1, n);
		tmp[n] = '\0';
		if (inet_pton(AF_INET6, tmp, v6) != 1)
			return -1;
		snprintf(host, hlen, "[%s]", tmp);
		colon++;
	} else {
		if ((colon = strrchr(s, ':')) == NULL || colon == s)
			return -1;
		n = (size_t)(colon - s);
		if (n >= hlen)
			return -1;
		h = s;
		if (n > 2 && h[0] == '*' && h[1] == '.') /* not "*." alone */
			h += 2;
		else if (n == 1 && h[0] == '*')
			h += 1;
		for (i = (size_t)(h - s); i < n; i++)
			if (!host_char_ok(s[i]))
				return -1;
		if (h != s + n &&
		    (h[0] == '.' || s[n - 1] == '.' || strstr(h, "..") != NULL))
			return -1;
		for (i = 0; i < n; i++)
			host[i] = (char)tolower((unsigned char)s[i]);
		host[n] = '\0';
	}
	colon++;
	if (strcmp(colon, "*") != 0) {
		unsigned long p;
		char *end;
		if (*colon < '0' || *colon > '9')
			return -1;
		p = strtoul(colon, &end, 10);
		if (*end != '\0' || p == 0 || p > 65535)
			return -1;
	}
	if (strlen(colon) >= plen)
		return -1;
	strcpy(port, colon);
	return 0;
}

/* An IPv6 literal compares by address, not by spelling. */
static int
v6_equal(const char *a, const char *b)
{
	unsigned char x[16], y[16];
	char ta[64], tb[64];
	size_t la = strlen(a), lb = strlen(b);

	if (la < 3 || lb < 3 || la - 2 >= sizeof(ta) || lb - 2 >= sizeof(tb))
		return 0;
	memcpy(ta, a + 1, la - 2);
	ta[la - 2] = '\0';
	memcpy(tb, b + 1, lb - 2);
	tb[lb - 2] = '\0';
	return inet_pton(AF_INET6, ta, x) == 1 &&
	       inet_pton(AF_INET6, tb, y) == 1 && memcmp(x, y, 16) == 0;
}

/* ceil host covers want host (both already lower-case). */
static int
host_covers(const char *ceil, const char *want)
{
	size_t lc, lw;

	if (strcmp(ceil, "*") == 0)
		return 1;
	if (ceil[0] == '[' || want[0] == '[')
		return ceil[0] == '[' && want[0] == '[' && v6_equal(ceil, want);
	if (strncmp(ceil, "*.", 2) == 0) {
		ceil += 1; /* ".example.com": strictly below example.com */
		lc = strlen(ceil);
		if (strncmp(want, "*.", 2) == 0) {
			want += 1;
			lw = strlen(want);
			return lw >= lc && strcmp(want + lw - lc, ceil) == 0;
		}
		lw = strlen(want);
		return lw > lc && strcmp(want + lw - lc, ceil) == 0;
	}
	return strcmp(want, "*") != 0 && strncmp(want, "*.", 2) != 0 &&
	       strcmp(ceil, want) == 0;
}

int
hostport_covers(const char *ceil, const char *want)
{
	char ch[300], cp[8], wh[300], wp[8];

	if (hostport_parse(ceil, ch, sizeof(ch), cp, sizeof(cp)) == -1 ||
	    hostport_parse(want, wh, sizeof(wh), wp, sizeof(wp)) == -1)
		return 0;
	if (strcmp(cp, "*") != 0 && strcmp(cp, wp) != 0)
		return 0;
	return host_covers(ch, wh);
}

int
hostport_host_ascii(const char *in, char *out, size_t len)
{
	char *a = NULL;
	size_t i, n = strlen(in);
	int ascii = 1;

	for (i = 0; i < n; i++)
		if ((unsigned char)in[i] >= 0x80)
			ascii = 0;
	if (!ascii) {
		if (idn2_lookup_u8((const uint8_t *)in, (uint8_t **)&a,
		        IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL) != IDN2_OK)
			return -1;
		in = a;
		n = strlen(in);
	}
	if (n == 0 || n >= len) {
		idn2_free(a);
		return -1;
	}
	for (i = 0; i <= n; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	idn2_free(a);
	return 0;
}

int
hostport_is_literal(const char *host)
{
	unsigned char a[16];
	char tmp[64];
	size_t n = strlen(host);

	if (inet_pton(AF_INET, host, a) == 1)
		return 1;
	if (n < 3 || host[0] != '[' || host[n - 1] != ']' ||
	    n - 2 >= sizeof(tmp))
		return 0;
	memcpy(tmp, host + 1, n - 2);
	tmp[n - 2] = '\0';
	return inet_pton(AF_INET6, tmp, a) == 1;
}
