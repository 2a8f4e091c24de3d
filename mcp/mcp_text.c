/*
 * mcp_text.c: bytes as JSON text. A skill's stdout is bytes, and a
 * message the broker or jansson wrote may quote them; JSON strings must
 * be UTF-8, so every ill-formed sequence becomes U+FFFD, as a decoder
 * would show it, rather than the whole text being lost.
 */
#include "mcp.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

/* The length of the well-formed UTF-8 character at p (n bytes left), or
 * 0 when it is not one. NUL is a character here: JSON carries it. */
static size_t
mcp_text_char(const unsigned char *p, size_t n)
{
	size_t need, i;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		need = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		need = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		need = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	if (n < need)
		return 0;
	for (i = 1; i < need; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return need;
}

/* A JSON string of data: each ill-formed sequence becomes U+FFFD. */
json_t *
mcp_text_json(const void *data, size_t len)
{
	static const char repl[] = "\xef\xbf\xbd"; /* U+FFFD */
	const unsigned char *p = data;
	char *out;
	size_t i = 0, o = 0, k;
	json_t *j;

	if (data == NULL)
		return json_string("");
	/* at worst each byte becomes three */
	out = xreallocarray(NULL, len + 1, 3);
	while (i < len) {
		k = mcp_text_char(p + i, len - i);
		if (k == 0) {
			memcpy(out + o, repl, 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(out + o, p + i, k);
		o += k;
		i += k;
	}
	j = json_stringn(out, o);
	free(out);
	return j ? j : json_string("");
}

/* s cut on a character to at most max bytes, with "…" when cut. */
char *
mcp_text_cut(const char *s, size_t max)
{
	size_t n;
	char *out;

	if (strlen(s) <= max)
		return xstrdup(s);
	n = utf8_cut(s, max > 3 ? max - 3 : 0);
	out = xmalloc(n + 4);
	memcpy(out, s, n);
	memcpy(out + n, "\xe2\x80\xa6", 4); /* "…" and NUL */
	return out;
}
