/* policyd_match.c: glob, path and host:port matching for policy checks. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policyd_match.h"

/* Iterative-with-recursion glob; patterns are short and bounded. */
static int
glob_rec(const char *p, const char *s, int depth)
{
	if (depth > 32)
		return 0;
	for (; *p != '\0'; p++, s++) {
		if (p[0] == '*' && p[1] == '*') {
			p += 2;
			for (;; s++) {
				if (glob_rec(p, s, depth + 1))
					return 1;
				if (*s == '\0')
					return 0;
			}
		}
		if (*p == '*') {
			p++;
			for (;; s++) {
				if (glob_rec(p, s, depth + 1))
					return 1;
				if (*s == '\0' || *s == '/')
					return 0;
			}
		}
		if (*s == '\0' || (*p != '?' && *p != *s) ||
		    (*p == '?' && *s == '/'))
			return 0;
	}
	return *s == '\0';
}

int
glob_match(const char *pat, const char *s)
{
	return glob_rec(pat, s, 0);
}

/*
 * Does glob c match every path glob w can match? Each wildcard of w must
 * be absorbed by one of c at least as wide: "**" only by "**"; '*' by '*'
 * or "**"; '?' by '?', '*' or "**". (Matching w as plain text let a
 * ceiling of one level, "d/" '*', cover any depth, "d/" "**".)
 */
static int
covers_rec(const char *c, const char *w, int depth)
{
	if (depth > 32)
		return 0;
	while (*c != '\0') {
		if (c[0] == '*' && c[1] == '*') {
			for (c += 2;;
			     w += (w[0] == '*' && w[1] == '*') ? 2 : 1) {
				if (covers_rec(c, w, depth + 1))
					return 1;
				if (*w == '\0')
					return 0;
			}
		}
		if (*c == '*') {
			for (c++;; w++) {
				if (covers_rec(c, w, depth + 1))
					return 1;
				if (*w == '\0' || *w == '/' ||
				    (w[0] == '*' && w[1] == '*'))
					return 0;
			}
		}
		if (*w == '\0' ||
		    (*c == '?' ? (*w == '/' || *w == '*') : *w != *c))
			return 0;
		c++;
		w++;
	}
	return *w == '\0';
}

int
path_covers(const char *ceil, const char *want)
{
	return covers_rec(ceil, want, 0);
}

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
