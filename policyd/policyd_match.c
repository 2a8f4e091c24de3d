/* policyd_match.c: glob, path and host:port matching for policy checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policyd_match.h"

/* Iterative-with-recursion glob; patterns are short and bounded. With
 * slash, '*' and '?' stop at '/'. */
static int
glob_rec(const char *p, const char *s, int slash, int depth)
{
	if (depth > 32)
		return 0;
	for (; *p != '\0'; p++, s++) {
		if (p[0] == '*' && p[1] == '*') {
			p += 2;
			for (;; s++) {
				if (glob_rec(p, s, slash, depth + 1))
					return 1;
				if (*s == '\0')
					return 0;
			}
		}
		if (*p == '*') {
			p++;
			for (;; s++) {
				if (glob_rec(p, s, slash, depth + 1))
					return 1;
				if (*s == '\0' || (slash && *s == '/'))
					return 0;
			}
		}
		if (*s == '\0' || (*p != '?' && *p != *s) ||
		    (*p == '?' && slash && *s == '/'))
			return 0;
	}
	return *s == '\0';
}

int
glob_match(const char *pat, const char *s)
{
	return glob_rec(pat, s, 1, 0);
}

int
name_glob_match(const char *pat, const char *s)
{
	return glob_rec(pat, s, 0, 0);
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
