/*
 * auditd_chain.c: the hash chain's formats, shared by auditd (which
 * writes them) and skillctl audit verify (which checks them).
 *
 * A line is T with the two closing braces that end it replaced by
 * ,"hash":"H"}} and a newline, where T is the record as compact JSON
 * with keys sorted at every level except that the top level's "event"
 * comes last (so T ends in the braces of event and of the record: H is
 * the last member of event, event.hash), T includes audit.prev_hash (the
 * previous line's H), and H is the lowercase hex SHA-256 of T. A checker
 * strips the suffix, puts the braces back and hashes: it never
 * re-serializes JSON. Lines written before the hash was nested end in
 * ,"event.hash":"H"} instead (T with its one closing brace replaced, keys
 * sorted everywhere), and are checked as such.
 *
 * The head file holds two slots of AUDIT_HEAD_SLOT bytes, written in
 * turn, so a torn write leaves the other one whole. A slot is a text
 * line "skillbroker-audit-head 1 SEQ HASH CHECK", padded with spaces,
 * where CHECK is the first 16 hex digits of SHA-256("SEQ HASH").
 */
#include <inttypes.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "auditd.h"

#define SUFFIX_HEAD ",\"hash\":\""
#define SUFFIX_LEN (sizeof(SUFFIX_HEAD) - 1 + HASH_HEX_LEN + 3)
#define OLD_SUFFIX_HEAD ",\"event.hash\":\""
#define OLD_SUFFIX_LEN (sizeof(OLD_SUFFIX_HEAD) - 1 + HASH_HEX_LEN + 2)
#define CHECK_LEN 16

/* 1 if s starts with 64 lowercase hex digits. */
int
audit_hex64(const char *s)
{
	return hex_lower_n(s, HASH_HEX_LEN);
}

/* Hex SHA-256 of len bytes. */
static void
sha256_hex(const void *p, size_t len, char out[HASH_HEX_LEN + 1])
{
	unsigned char md[SHA256_DIGEST_LENGTH];

	SHA256(p, len, md);
	hex_encode(md, sizeof(md), out);
}

/* Compact JSON with sorted keys; NULL only when out of memory. */
static char *
chain_dump(const json_t *j)
{
	char *t;

	if ((t = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
		fatalx("json_dumps");
	return t;
}

/*
 * T of a stamped record: its members but event sorted, then event
 * (sorted). rec is left as it was.
 */
static char *
chain_text(json_t *rec, size_t *len)
{
	json_t *ev = json_object_get(rec, "event");
	char *rest, *evt, *t;
	size_t rn, en;

	if (!json_is_object(ev))
		fatalx("an audit record without an event object");
	json_incref(ev);
	if (json_object_del(rec, "event") == -1)
		fatalx("json_object_del");
	rest = chain_dump(rec);
	if (json_object_set_new(rec, "event", ev) == -1)
		fatalx("json_object_set");
	evt = chain_dump(ev);
	rn = strlen(rest);
	en = strlen(evt);
	t = xmalloc(rn + en + 12);
	memcpy(t, rest, rn - 1); /* without its closing brace */
	*len = rn - 1;
	if (rn > 2)
		t[(*len)++] = ',';
	memcpy(t + *len, "\"event\":", 8);
	*len += 8;
	memcpy(t + *len, evt, en);
	*len += en;
	t[(*len)++] = '}';
	t[*len] = '\0';
	free(rest);
	free(evt);
	return t;
}

/* The line for a stamped record, and its hash. */
char *
audit_line_encode(json_t *rec, char hash[HASH_HEX_LEN + 1], size_t *len)
{
	char *t, *line;
	size_t n;

	t = chain_text(rec, &n);
	sha256_hex(t, n, hash);
	line = xmalloc(n - 2 + SUFFIX_LEN + 2);
	memcpy(line, t, n - 2);
	snprintf(line + n - 2, SUFFIX_LEN + 2, "%s%s\"}}\n", SUFFIX_HEAD, hash);
	*len = n - 2 + SUFFIX_LEN + 1;
	free(t);
	return line;
}

/*
 * The fields a verifier needs, from the parsed line (nested: its
 * event.hash must be the hash of T, which T itself cannot hold) or from
 * T (a line of the old form, which must not hold event.hash).
 */
static int
line_fields(const char *t, size_t len, int nested, const char *hash,
    struct audit_line *out, struct error *e)
{
	json_t *j, *ev, *seq, *prev, *act, *h;
	json_error_t je;
	int r = -1;

	if ((j = json_loadb(t, len, JSON_REJECT_DUPLICATES, &je)) == NULL)
		return error_set(e, ERR_BAD_REQUEST, "not JSON: %s", je.text);
	ev = json_object_get(j, "event");
	seq = json_object_get(ev, "sequence");
	prev = json_object_get(json_object_get(j, "audit"), "prev_hash");
	act = json_object_get(ev, "action");
	h = json_object_get(ev, "hash");
	if (!json_is_object(j) || json_object_get(j, "event.hash") != NULL ||
	    (nested && (!json_is_string(h) ||
	                   strcmp(json_string_value(h), hash) != 0)) ||
	    (!nested && h != NULL))
		error_set(e, ERR_BAD_REQUEST, "not a record");
	else if (!json_is_integer(seq) || json_integer_value(seq) < 1)
		error_set(e, ERR_BAD_REQUEST, "no event.sequence");
	else if (!json_is_string(prev) ||
	         json_string_length(prev) != HASH_HEX_LEN ||
	         !audit_hex64(json_string_value(prev)))
		error_set(e, ERR_BAD_REQUEST, "no audit.prev_hash");
	else if (!json_is_string(act) ||
	         json_string_length(act) >= sizeof(out->action))
		error_set(e, ERR_BAD_REQUEST, "no event.action");
	else {
		out->seq = (uint64_t)json_integer_value(seq);
		memcpy(out->prev, json_string_value(prev), HASH_HEX_LEN + 1);
		snprintf(out->action, sizeof(out->action), "%s",
		    json_string_value(act));
		r = 0;
	}
	json_decref(j);
	return r;
}

/*
 * Where the hash of a line of either form starts, and how many closing
 * braces its T ends in; NULL when the line ends in neither suffix.
 */
static const char *
line_suffix(const char *line, size_t len, size_t *slen, int *braces)
{
	const char *suf;

	if (len >= SUFFIX_LEN + 2) {
		suf = line + len - SUFFIX_LEN;
		if (memcmp(suf, SUFFIX_HEAD, sizeof(SUFFIX_HEAD) - 1) == 0 &&
		    audit_hex64(suf + sizeof(SUFFIX_HEAD) - 1) &&
		    memcmp(line + len - 3, "\"}}", 3) == 0) {
			*slen = SUFFIX_LEN;
			*braces = 2;
			return suf + sizeof(SUFFIX_HEAD) - 1;
		}
	}
	if (len >= OLD_SUFFIX_LEN + 2) {
		suf = line + len - OLD_SUFFIX_LEN;
		if (memcmp(suf, OLD_SUFFIX_HEAD, sizeof(OLD_SUFFIX_HEAD) - 1) ==
		        0 &&
		    audit_hex64(suf + sizeof(OLD_SUFFIX_HEAD) - 1) &&
		    memcmp(line + len - 2, "\"}", 2) == 0) {
			*slen = OLD_SUFFIX_LEN;
			*braces = 1;
			return suf + sizeof(OLD_SUFFIX_HEAD) - 1;
		}
	}
	return NULL;
}

/* Check one line (no newline): suffix, hash, then the chain fields. */
int
audit_line_check(
    const char *line, size_t len, struct audit_line *out, struct error *e)
{
	const char *h;
	char calc[HASH_HEX_LEN + 1], *t;
	size_t tlen, slen;
	int r, braces;

	memset(out, 0, sizeof(*out));
	if (len + 1 > AUDIT_LINE_MAX)
		return error_set(e, ERR_BAD_REQUEST,
		    "line longer than %d bytes", AUDIT_LINE_MAX);
	if (len < SUFFIX_LEN + 2 || line[0] != '{')
		return error_set(e, ERR_BAD_REQUEST, "not a record line");
	if ((h = line_suffix(line, len, &slen, &braces)) == NULL)
		return error_set(
		    e, ERR_BAD_REQUEST, "no event.hash at the end of the line");
	memcpy(out->hash, h, HASH_HEX_LEN);
	out->hash[HASH_HEX_LEN] = '\0';
	tlen = len - slen + (size_t)braces;
	t = xmalloc(tlen + 1);
	memcpy(t, line, len - slen);
	memcpy(t + len - slen, "}}", (size_t)braces);
	t[tlen] = '\0';
	sha256_hex(t, tlen, calc);
	if (strcmp(calc, out->hash) != 0) {
		free(t);
		return error_set(e, ERR_BAD_REQUEST,
		    "event.hash does not "
		    "match the record: the line was changed");
	}
	if (braces == 2)
		r = line_fields(line, len, 1, out->hash, out, e);
	else
		r = line_fields(t, tlen, 0, NULL, out, e);
	free(t);
	return r;
}

/* The first record of every file. */
int
audit_is_header(const char *action)
{
	return strcmp(action, "audit.created") == 0 ||
	       strcmp(action, "audit.rotated") == 0;
}

/* The head before the first record: sequence 0, 64 zeros. */
void
audit_head_zero(struct audit_head *h)
{
	h->seq = 0;
	memset(h->hash, '0', HASH_HEX_LEN);
	h->hash[HASH_HEX_LEN] = '\0';
}

/* No record yet. */
int
audit_head_is_zero(const struct audit_head *h)
{
	return h->seq == 0;
}

/* "SEQ HASH" and its check digits. */
static void
head_check(const struct audit_head *h, char check[HASH_HEX_LEN + 1])
{
	char body[96];
	int n;

	n = snprintf(body, sizeof(body), "%" PRIu64 " %s", h->seq, h->hash);
	sha256_hex(body, (size_t)n, check);
}

/* One slot of the head file. */
void
audit_head_slot_enc(const struct audit_head *h, char slot[AUDIT_HEAD_SLOT])
{
	char check[HASH_HEX_LEN + 1];
	int n;

	head_check(h, check);
	memset(slot, ' ', AUDIT_HEAD_SLOT);
	n = snprintf(slot, AUDIT_HEAD_SLOT, "%s 1 %" PRIu64 " %s %.*s",
	    AUDIT_HEAD_MAGIC, h->seq, h->hash, CHECK_LEN, check);
	slot[n] = ' ';
	slot[AUDIT_HEAD_SLOT - 1] = '\n';
}

/* One slot back; -1 when it is torn or not a head. */
int
audit_head_slot_dec(const char *slot, size_t len, struct audit_head *h)
{
	char buf[AUDIT_HEAD_SLOT + 1], magic[32], hash[80], chk[32];
	char want[HASH_HEX_LEN + 1];
	unsigned version;
	int used = 0;

	if (len != AUDIT_HEAD_SLOT || slot[AUDIT_HEAD_SLOT - 1] != '\n')
		return -1;
	memcpy(buf, slot, AUDIT_HEAD_SLOT);
	buf[AUDIT_HEAD_SLOT] = '\0';
	if (sscanf(buf, "%31s %u %" SCNu64 " %79s %31s %n", magic, &version,
	        &h->seq, hash, chk, &used) != 5 ||
	    used != AUDIT_HEAD_SLOT || strcmp(magic, AUDIT_HEAD_MAGIC) != 0 ||
	    version != 1 || strlen(hash) != HASH_HEX_LEN ||
	    !audit_hex64(hash) || strlen(chk) != CHECK_LEN)
		return -1;
	memcpy(h->hash, hash, HASH_HEX_LEN + 1);
	head_check(h, want);
	return strncmp(want, chk, CHECK_LEN) == 0 ? 0 : -1;
}

/* The newest valid slot of a head file. */
int
audit_head_file_dec(const char *buf, size_t len, struct audit_head *h,
    int *slot, struct error *e)
{
	struct audit_head s[2];
	int ok[2] = {0, 0}, i;

	for (i = 0; i < 2; i++)
		ok[i] = len >= (size_t)(i + 1) * AUDIT_HEAD_SLOT &&
		        audit_head_slot_dec(buf + i * AUDIT_HEAD_SLOT,
		            AUDIT_HEAD_SLOT, &s[i]) == 0;
	if (!ok[0] && !ok[1])
		return error_set(e, ERR_BAD_REQUEST, "no valid head record");
	i = !ok[0] || (ok[1] && s[1].seq > s[0].seq);
	*h = s[i];
	if (slot != NULL)
		*slot = i;
	return 0;
}

/* A head given as SEQ:HASH (for example, copied off the host). */
int
audit_head_arg_dec(const char *s, struct audit_head *h, struct error *e)
{
	const char *colon = strchr(s, ':');
	char num[24];

	if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof(num) ||
	    strlen(colon + 1) != HASH_HEX_LEN || !audit_hex64(colon + 1))
		return error_set(e, ERR_BAD_REQUEST,
		    "a head is SEQ:HASH (64 lowercase hex digits)");
	memcpy(num, s, (size_t)(colon - s));
	num[colon - s] = '\0';
	if (parse_uint(num, 1, INT64_MAX, &h->seq) == -1)
		return error_set(
		    e, ERR_BAD_REQUEST, "bad head sequence \"%s\"", num);
	memcpy(h->hash, colon + 1, HASH_HEX_LEN + 1);
	return 0;
}
