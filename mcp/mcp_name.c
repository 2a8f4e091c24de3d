/*
 * mcp_name.c: a tool's name for a skill's command. MCP (2025-11-25)
 * takes 1..128 characters of [A-Za-z0-9._-]; a skill is [a-z0-9-] but a
 * command may be a script's path ("scripts/fill.py"). The name is the
 * skill, a dot, the command, with every other byte written as "_XX"
 * (hex): "csv-report.scripts_2freport.py". That is one-to-one, so a
 * name decodes back. A name that would pass 128 characters is cut, and
 * "_h" and 16 hex digits of a SHA-256 of the pair end it; "_h" is never
 * an escape, so it cannot meet a plain name, and only the catalog can
 * resolve it.
 */
#include "mcp.h"

#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#define MCP_NAME_HASH_HEX 16
#define MCP_NAME_CUT (MCP_TOOL_NAME_MAX - 2 - MCP_NAME_HASH_HEX)

/* 1 if c may stand for itself in the skill part (dot: also the
 * command's). */
static int
mcp_name_plain(unsigned char c, int command)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || (command && c == '.');
}

/* 1 if name fits MCP's tool name rule. */
int
mcp_name_valid(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > MCP_TOOL_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!mcp_name_plain((unsigned char)name[i], 1) &&
		    name[i] != '_')
			return 0;
	return 1;
}

/* Append s, escaped, to out at *o; stops (returns -1) past max. */
static int
mcp_name_put(const char *s, int command, char *out, size_t *o, size_t max)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		if (mcp_name_plain(*p, command)) {
			if (*o + 1 > max)
				return -1;
			out[(*o)++] = (char)*p;
		} else {
			if (*o + 3 > max)
				return -1;
			(void)snprintf(out + *o, 4, "_%02x", *p);
			*o += 3;
		}
	}
	return 0;
}

/* The tool name of (skill, command): plain, or cut and hashed. */
int
mcp_name_encode(const char *skill, const char *command, char *out)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char full[(MCP_SKILL_NAME_MAX + MCP_COMMAND_MAX) * 3 + 2];
	unsigned int mdlen = 0, i;
	size_t o = 0, cut;
	EVP_MD_CTX *ctx;

	if (mcp_name_put(skill, 0, full, &o, sizeof(full) - 2) == 0 &&
	    o + 1 < sizeof(full)) {
		full[o++] = '.';
		if (mcp_name_put(command, 1, full, &o, sizeof(full) - 1) == 0 &&
		    o <= MCP_TOOL_NAME_MAX) {
			memcpy(out, full, o);
			out[o] = '\0';
			return 0;
		}
	}
	/* too long: a prefix that ends on a whole escape, then the hash */
	cut = o < MCP_NAME_CUT ? o : MCP_NAME_CUT;
	if (cut >= 1 && full[cut - 1] == '_')
		cut -= 1;
	else if (cut >= 2 && full[cut - 2] == '_')
		cut -= 2;
	memcpy(out, full, cut);
	if ((ctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(ctx, skill, strlen(skill) + 1) != 1 ||
	    EVP_DigestUpdate(ctx, command, strlen(command)) != 1 ||
	    EVP_DigestFinal_ex(ctx, md, &mdlen) != 1)
		memset(md, 0, sizeof(md)); /* cannot happen; still a name */
	EVP_MD_CTX_free(ctx);
	out[cut++] = '_';
	out[cut++] = 'h';
	for (i = 0; i < MCP_NAME_HASH_HEX / 2; i++, cut += 2)
		(void)snprintf(out + cut, 3, "%02x", md[i]);
	out[cut] = '\0';
	return 1;
}

/* The value of a lowercase hex digit, or -1. */
static int
mcp_name_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Unescape [p, end) into out (len bytes); -1 if malformed or not the
 * one spelling the encoder writes. */
static int
mcp_name_get(const char *p, const char *end, int command, char *out, size_t len)
{
	size_t o = 0;
	int hi, lo;
	unsigned char c;

	if (p == end)
		return -1;
	for (; p < end; p++) {
		if (*p == '_') {
			if (end - p < 3 || (hi = mcp_name_hex(p[1])) < 0 ||
			    (lo = mcp_name_hex(p[2])) < 0)
				return -1;
			c = (unsigned char)(hi << 4 | lo);
			if (c == 0 || mcp_name_plain(c, command))
				return -1;
			p += 2;
		} else {
			c = (unsigned char)*p;
		}
		if (o + 1 >= len)
			return -1;
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* The pair a plain name encodes; -1 for any other spelling. */
int
mcp_name_decode(const char *name, char *skill, size_t skill_len, char *command,
    size_t command_len)
{
	const char *dot, *end;

	if (!mcp_name_valid(name) || (dot = strchr(name, '.')) == NULL)
		return -1;
	end = name + strlen(name);
	if (mcp_name_get(name, dot, 0, skill, skill_len) == -1 ||
	    mcp_name_get(dot + 1, end, 1, command, command_len) == -1)
		return -1;
	return 0;
}
