/* test_mp.c: the strict msgpack decoder refuses every malformed input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testenc.h"
#include "../../proto/frame.h"
#include "../../proto/mp.h"
#include "../../proto/msg.h"

/* A byte array literal and its length, for hand-made msgpack. */
#define BYTES(...)                                                             \
	(const uint8_t[]){__VA_ARGS__}, sizeof((const uint8_t[]){__VA_ARGS__})

static const struct mp_limits small_lim = {
    .max_depth = 6,
    .max_str = 8,
    .max_elems = 4,
    .max_key = 8,
};

/* Decoding must fail as bad_request, say why, and leave nothing live. */
static void
expect_bad_lim(const uint8_t *buf, size_t len, const struct mp_limits *lim,
    const char *needle)
{
	struct mp_doc d;
	struct error e;

	memset(&e, 0, sizeof(e));
	memset(&d, 0x5a, sizeof(d));
	assert_int_equal(mp_decode(&d, buf, len, lim, &e), -1);
	assert_int_equal(e.type, ERR_BAD_REQUEST);
	if (strstr(e.msg, needle) == NULL)
		fail_msg("error \"%s\" does not mention \"%s\"", e.msg, needle);
	assert_null(d.root);
	assert_int_equal(d.live, 0);
	mp_doc_free(&d);
	/* A NULL error pointer is allowed and changes nothing. */
	assert_int_equal(mp_decode(&d, buf, len, lim, NULL), -1);
	mp_doc_free(&d);
}

static void
expect_bad(const uint8_t *buf, size_t len, const char *needle)
{
	expect_bad_lim(buf, len, NULL, needle);
}

static void
expect_good_lim(const uint8_t *buf, size_t len, const struct mp_limits *lim)
{
	struct mp_doc d;
	struct error e;

	memset(&e, 0, sizeof(e));
	if (mp_decode(&d, buf, len, lim, &e) != 0)
		fail_msg("unexpected decode error: %s", e.msg);
	assert_non_null(d.root);
	assert_int_equal(d.root->type, MSGPACK_OBJECT_MAP);
	mp_doc_free(&d);
	assert_null(d.root);
}

static void
enc_expect_bad(
    struct mp_enc *m, const struct mp_limits *lim, const char *needle)
{
	expect_bad_lim((const uint8_t *)m->sb.data, m->sb.size, lim, needle);
	enc_free(m);
}

static void
enc_expect_good(struct mp_enc *m, const struct mp_limits *lim)
{
	expect_good_lim((const uint8_t *)m->sb.data, m->sb.size, lim);
	enc_free(m);
}

static void
test_empty_input(void **state)
{
	(void)state;
	expect_bad((const uint8_t *)"", 0, "empty message");
	expect_bad(NULL, 0, "empty message");
}

static void
test_root_not_map(void **state)
{
	(void)state;
	expect_bad(BYTES(0x91, 0x01), "not a map");       /* [1] */
	expect_bad(BYTES(0x90), "not a map");             /* [] */
	expect_bad(BYTES(0x05), "not a map");             /* 5 */
	expect_bad(BYTES(0xcd, 0x12, 0x34), "not a map"); /* uint16 */
	expect_bad(BYTES(0xff), "not a map");             /* -1 */
	expect_bad(BYTES(0xa1, 'a'), "not a map");        /* "a" */
	expect_bad(BYTES(0xc4, 0x01, 'a'), "not a map");  /* bin */
	expect_bad(BYTES(0xc0), "not a map");             /* nil */
	expect_bad(BYTES(0xc3), "not a map");             /* true */
	expect_bad(BYTES(0xca, 0x3f, 0x80, 0, 0), "not a map");
}

static void
test_truncated(void **state)
{
	(void)state;
	expect_bad(BYTES(0x81), "truncated");
	expect_bad(BYTES(0x82, 0xa1, 'a', 0x01), "truncated");
	expect_bad(BYTES(0x81, 0xa1, 'a'), "truncated");
	expect_bad(BYTES(0x81, 0xa1), "truncated");
	/* String header promises five bytes, two follow. */
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xa5, 'a', 'b'), "truncated");
	/* str32 promising 4 GiB. */
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xdb, 0xff, 0xff, 0xff, 0xff, 'x'),
	    "truncated");
	/* Half a uint32 and half an array16 header. */
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xce, 0x00, 0x01), "truncated");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xdc, 0x00), "truncated");
	expect_bad(BYTES(0xde, 0x00), "truncated");
	/* map16 header with no entries after it. */
	expect_bad(BYTES(0xde, 0x00, 0x02, 0xa1, 'a', 0x01), "truncated");
}

static void
test_malformed(void **state)
{
	(void)state;
	/* 0xc1 is never used in msgpack. */
	expect_bad(BYTES(0xc1), "malformed");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xc1), "malformed");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0x91, 0xc1), "malformed");
}

/*
 * Containers that declare far more entries than the limits allow or the
 * input could hold are refused before anything is allocated for them.
 */
static void
test_huge_declared_sizes(void **state)
{
	(void)state;
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xdd, 0xff, 0xff, 0xff, 0xff),
	    "array too long");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xdd, 0x04, 0x00, 0x00, 0x00),
	    "array too long");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xdf, 0xff, 0xff, 0xff, 0xff),
	    "map too large");
	expect_bad(BYTES(0xdf, 0x10, 0x00, 0x00, 0x00), "map too large");
	/* Within max_elems, but the bytes for the items are not there. */
	expect_bad(BYTES(0xdf, 0x00, 0x00, 0x10, 0x00), "truncated");
	expect_bad(
	    BYTES(0x81, 0xa1, 'a', 0xdc, 0x0f, 0xa0, 0x01, 0x02), "truncated");
	/* The input libFuzzer found: a 7-byte root asking for 64 GiB. */
	expect_bad(
	    BYTES(0xdd, 0x99, 0x00, 0xcc, 0xcc, 0xcc, 0xcc), "array too long");
	/* Nested declarations are each checked. */
	expect_bad(
	    BYTES(0x81, 0xa1, 'a', 0x91, 0x91, 0xdd, 0x7f, 0xff, 0xff, 0xff),
	    "array too long");
}

static void
test_trailing_bytes(void **state)
{
	(void)state;
	expect_bad(BYTES(0x80, 0x00), "1 trailing bytes");
	expect_bad(BYTES(0x80, 0x80), "1 trailing bytes");
	expect_bad(
	    BYTES(0x81, 0xa1, 'a', 0x01, 'x', 'y', 'z'), "3 trailing bytes");
	expect_good_lim(BYTES(0x80), NULL);
	expect_good_lim(BYTES(0x81, 0xa1, 'a', 0x01), NULL);
}

/* {"a": {"a": ... {"a": 1}}} with n maps in all, the root included. */
static void
enc_nested_maps(struct mp_enc *m, unsigned n)
{
	unsigned i;

	enc_init(m);
	for (i = 0; i + 1 < n; i++) {
		enc_map(m, 1);
		enc_str(m, "a");
	}
	enc_map(m, 1);
	enc_kuint(m, "a", 1);
}

/* {"a": [[...[1]...]]} with n arrays under the root map. */
static void
enc_nested_arrays(struct mp_enc *m, unsigned n)
{
	unsigned i;

	enc_init(m);
	enc_map(m, 1);
	enc_str(m, "a");
	for (i = 0; i < n; i++)
		enc_array(m, 1);
	enc_uint(m, 1);
}

static void
test_depth(void **state)
{
	struct mp_enc m;
	struct mp_limits one = small_lim;

	(void)state;
	/* Default max_depth is 6 levels, the root map being the first. */
	assert_int_equal(mp_limits_default.max_depth, 6);
	enc_nested_maps(&m, 6);
	enc_expect_good(&m, NULL);
	enc_nested_maps(&m, 7);
	enc_expect_bad(&m, NULL, "nesting too deep");
	enc_nested_arrays(&m, 5);
	enc_expect_good(&m, NULL);
	enc_nested_arrays(&m, 6);
	enc_expect_bad(&m, NULL, "nesting too deep");
	/* Deeper than msgpack-c's own parser stack. */
	enc_nested_maps(&m, 100);
	enc_expect_bad(&m, NULL, "nesting too deep");
	enc_nested_arrays(&m, 100);
	enc_expect_bad(&m, NULL, "nesting too deep");

	/* max_depth 1: only the root map, any container inside is too deep. */
	one.max_depth = 1;
	expect_good_lim(BYTES(0x81, 0xa1, 'a', 0x01), &one);
	expect_bad_lim(BYTES(0x81, 0xa1, 'a', 0x90), &one, "nesting too deep");
	expect_bad_lim(BYTES(0x81, 0xa1, 'a', 0x80), &one, "nesting too deep");
}

static void
enc_str_of(struct mp_enc *m, size_t n)
{
	char buf[128];

	assert_true(n <= sizeof(buf));
	memset(buf, 'x', sizeof(buf));
	enc_strn(m, buf, n);
}

static void
test_size_limits(void **state)
{
	struct mp_enc m;
	size_t i;

	(void)state;
	/* Strings: 8 bytes fit, 9 do not. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_str(&m, "s");
	enc_str_of(&m, 8);
	enc_expect_good(&m, &small_lim);
	enc_init(&m);
	enc_map(&m, 1);
	enc_str(&m, "s");
	enc_str_of(&m, 9);
	enc_expect_bad(&m, &small_lim, "string too long");
	/* The same string nested in an array. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_str(&m, "s");
	enc_array(&m, 1);
	enc_str_of(&m, 9);
	enc_expect_bad(&m, &small_lim, "string too long");

	/* Binary. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_kbin(&m, "b", "12345678", 8);
	enc_expect_good(&m, &small_lim);
	enc_init(&m);
	enc_map(&m, 1);
	enc_kbin(&m, "b", "123456789", 9);
	enc_expect_bad(&m, &small_lim, "binary too long");

	/* Arrays: 4 entries fit, 5 do not. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_str(&m, "a");
	enc_array(&m, 4);
	for (i = 0; i < 4; i++)
		enc_uint(&m, i);
	enc_expect_good(&m, &small_lim);
	enc_init(&m);
	enc_map(&m, 1);
	enc_str(&m, "a");
	enc_array(&m, 5);
	for (i = 0; i < 5; i++)
		enc_uint(&m, i);
	enc_expect_bad(&m, &small_lim, "array too long");

	/* Maps, nested and at the root. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_str(&m, "m");
	enc_map(&m, 5);
	for (i = 0; i < 5; i++) {
		char k[2] = {(char)('a' + i), 0};
		enc_kuint(&m, k, i);
	}
	enc_expect_bad(&m, &small_lim, "map too large");
	enc_init(&m);
	enc_map(&m, 4);
	for (i = 0; i < 4; i++) {
		char k[2] = {(char)('a' + i), 0};
		enc_kuint(&m, k, i);
	}
	enc_expect_good(&m, &small_lim);
	enc_init(&m);
	enc_map(&m, 5);
	for (i = 0; i < 5; i++) {
		char k[2] = {(char)('a' + i), 0};
		enc_kuint(&m, k, i);
	}
	enc_expect_bad(&m, &small_lim, "map too large");

	/* Keys: 8 bytes fit, 9 do not. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_kuint(&m, "12345678", 1);
	enc_expect_good(&m, &small_lim);
	enc_init(&m);
	enc_map(&m, 1);
	enc_kuint(&m, "123456789", 1);
	enc_expect_bad(&m, &small_lim, "map key must be a short string");

	/* Default limits: a 65-byte key is refused, 64 accepted. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_str_of(&m, 64);
	enc_uint(&m, 1);
	enc_expect_good(&m, NULL);
	enc_init(&m);
	enc_map(&m, 1);
	enc_str_of(&m, 65);
	enc_uint(&m, 1);
	enc_expect_bad(&m, NULL, "map key");
}

/* Byte strings that are not valid UTF-8 (or hold a NUL). */
static const struct {
	const char *s;
	size_t len;
} bad_utf8[] = {
    {"\xc0\xaf", 2},         /* overlong '/' */
    {"\xc0\x80", 2},         /* overlong NUL */
    {"\xe0\x80\xaf", 3},     /* 3-byte overlong */
    {"\xf0\x80\x80\xaf", 4}, /* 4-byte overlong */
    {"\xed\xa0\x80", 3},     /* U+D800 */
    {"\xed\xbf\xbf", 3},     /* U+DFFF */
    {"\xf4\x90\x80\x80", 4}, /* U+110000 */
    {"\xf7\xbf\xbf\xbf", 4}, /* U+1FFFFF */
    {"a\0b", 3},             /* NUL */
    {"\x80", 1},             /* lone continuation */
    {"ab\xe2\x82", 4},       /* truncated */
    {"\xff", 1},
};

static void
test_utf8_values_and_keys(void **state)
{
	struct mp_enc m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_utf8) / sizeof(bad_utf8[0]); i++) {
		/* As a value. */
		enc_init(&m);
		enc_map(&m, 1);
		enc_str(&m, "k");
		enc_strn(&m, bad_utf8[i].s, bad_utf8[i].len);
		enc_expect_bad(&m, NULL, "invalid UTF-8");
		/* Inside an array. */
		enc_init(&m);
		enc_map(&m, 1);
		enc_str(&m, "k");
		enc_array(&m, 2);
		enc_str(&m, "ok");
		enc_strn(&m, bad_utf8[i].s, bad_utf8[i].len);
		enc_expect_bad(&m, NULL, "invalid UTF-8");
		/* As a key, at the root and nested. */
		enc_init(&m);
		enc_map(&m, 1);
		enc_strn(&m, bad_utf8[i].s, bad_utf8[i].len);
		enc_uint(&m, 1);
		enc_expect_bad(&m, NULL, "map key must be a short string");
		enc_init(&m);
		enc_map(&m, 1);
		enc_str(&m, "m");
		enc_map(&m, 1);
		enc_strn(&m, bad_utf8[i].s, bad_utf8[i].len);
		enc_uint(&m, 1);
		enc_expect_bad(&m, NULL, "map key must be a short string");
		/* Binary is opaque: the same bytes are fine there. */
		enc_init(&m);
		enc_map(&m, 1);
		enc_kbin(&m, "k", bad_utf8[i].s, bad_utf8[i].len);
		enc_expect_good(&m, NULL);
	}
	/* Valid multi-byte text passes in keys and values. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_kstr(&m, "cl\xc3\xa9", "\xf0\x9d\x84\x9e \xe2\x82\xac");
	enc_expect_good(&m, NULL);
}

static void
test_non_string_keys(void **state)
{
	(void)state;
	expect_bad(BYTES(0x81, 0x01, 0x01), "map key");            /* int */
	expect_bad(BYTES(0x81, 0xff, 0x01), "map key");            /* -1 */
	expect_bad(BYTES(0x81, 0xc0, 0x01), "map key");            /* nil */
	expect_bad(BYTES(0x81, 0xc3, 0x01), "map key");            /* true */
	expect_bad(BYTES(0x81, 0xc4, 0x01, 'a', 0x01), "map key"); /* bin */
	expect_bad(BYTES(0x81, 0x91, 0x01, 0x01), "map key");      /* [1] */
	expect_bad(BYTES(0x81, 0x80, 0x01), "map key");            /* {} */
	expect_bad(BYTES(0x81, 0xa0, 0x01), "map key");            /* "" */
	/* Nested: {"a": {1: 1}} and {"a": [{nil: 1}]}. */
	expect_bad(BYTES(0x81, 0xa1, 'a', 0x81, 0x01, 0x01), "map key");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0x91, 0x81, 0xc0, 0x01), "map key");
}

static void
test_duplicate_keys(void **state)
{
	(void)state;
	expect_bad(BYTES(0x82, 0xa1, 'a', 0x01, 0xa1, 'a', 0x02),
	    "duplicate key \"a\"");
	expect_bad(
	    BYTES(0x83, 0xa1, 'a', 0x01, 0xa1, 'b', 0x02, 0xa1, 'a', 0x03),
	    "duplicate key \"a\"");
	/* Nested map with a repeated key. */
	expect_bad(
	    BYTES(0x81, 0xa1, 'm', 0x82, 0xa1, 'x', 0x01, 0xa1, 'x', 0x02),
	    "duplicate key \"x\"");
	/* The same bytes as str8 and fixstr are still the same key. */
	expect_bad(BYTES(0x82, 0xa1, 'a', 0x01, 0xd9, 0x01, 'a', 0x02),
	    "duplicate key \"a\"");
	/* Prefixes are distinct keys. */
	expect_good_lim(
	    BYTES(0x83, 0xa1, 'a', 0x01, 0xa2, 'a', 'b', 0x02, 0xa1, 'b', 0x03),
	    NULL);
	/* The same key in two sibling maps is fine. */
	expect_good_lim(BYTES(0x82, 0xa1, 'm', 0x81, 0xa1, 'x', 0x01, 0xa1, 'n',
	                    0x81, 0xa1, 'x', 0x02),
	    NULL);
}

static void
test_float_and_ext(void **state)
{
	(void)state;
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xca, 0x3f, 0xc0, 0x00, 0x00),
	    "float or ext");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xcb, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0),
	    "float or ext");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0x92, 0x01, 0xca, 0, 0, 0, 0),
	    "float or ext");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xd4, 0x01, 0x00), "float or ext");
	expect_bad(
	    BYTES(0x81, 0xa1, 'a', 0xc7, 0x01, 0x05, 0x00), "float or ext");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xd5, 0x01, 0, 0), "float or ext");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xd7, 0x01, 0, 0, 0, 0, 0, 0, 0, 0),
	    "float or ext");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xd8, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	               0, 0, 0, 0, 0, 0, 0),
	    "float or ext");
	expect_bad(BYTES(0x81, 0xa1, 'a', 0xc8, 0x00, 0x02, 0x05, 'x', 'y'),
	    "float or ext");
	expect_bad(
	    BYTES(0x81, 0xa1, 'a', 0xc9, 0x00, 0x00, 0x00, 0x01, 0x05, 'x'),
	    "float or ext");
	/* Timestamp extension (type -1). */
	expect_bad(
	    BYTES(0x81, 0xa1, 'a', 0xd6, 0xff, 0, 0, 0, 0), "float or ext");
	/* An ext as a key is refused too. */
	expect_bad(BYTES(0x81, 0xd4, 0x01, 0x00, 0x01), "");
}

/* Every wire form of every accepted type decodes (the pre-scan agrees). */
static void
test_all_encodings_accepted(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	char *big;
	size_t i;
	uint64_t u;
	int64_t v;

	(void)state;
	/* uint8/16/32/64 and int8/16/32/64 in their explicit forms. */
	expect_good_lim(
	    BYTES(0x88, 0xa1, 'a', 0xcc, 0xff, 0xa1, 'b', 0xcd, 0xff, 0xff,
	        0xa1, 'c', 0xce, 0xff, 0xff, 0xff, 0xff, 0xa1, 'd', 0xcf, 0xff,
	        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xa1, 'e', 0xd0, 0x80,
	        0xa1, 'f', 0xd1, 0x80, 0x00, 0xa1, 'g', 0xd2, 0x80, 0x00, 0x00,
	        0x00, 0xa1, 'h', 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0),
	    NULL);
	/* str8/16/32, bin8/16/32, array16/32 and map16/32 forms. */
	expect_good_lim(
	    BYTES(0x86, 0xd9, 0x01, 'a', 0xda, 0x00, 0x01, 'x', 0xda, 0x00,
	        0x01, 'b', 0xdb, 0x00, 0x00, 0x00, 0x01, 'y', 0xa1, 'c', 0xc5,
	        0x00, 0x02, 0xff, 0xfe, 0xa1, 'd', 0xc6, 0x00, 0x00, 0x00, 0x01,
	        0x00, 0xa1, 'e', 0xdc, 0x00, 0x02, 0xc0, 0xdd, 0x00, 0x00, 0x00,
	        0x00, 0xa1, 'f', 0xde, 0x00, 0x01, 0xa1, 'k', 0xdf, 0x00, 0x00,
	        0x00, 0x01, 0xa1, 'k', 0xc2),
	    NULL);

	/* Large but legal: a 70000-byte str32 and a 4096-item array. */
	big = malloc(70000);
	assert_non_null(big);
	memset(big, 'z', 70000);
	enc_init(&m);
	enc_map(&m, 3);
	enc_str(&m, "big");
	enc_strn(&m, big, 70000);
	enc_str(&m, "arr");
	enc_array(&m, mp_limits_default.max_elems);
	for (i = 0; i < mp_limits_default.max_elems; i++)
		enc_uint(&m, i * 1000003);
	enc_kint(&m, "neg", INT32_MIN);
	assert_int_equal(
	    mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	assert_int_equal(mp_get(d.root, "big")->via.str.size, 70000);
	assert_memory_equal(mp_get(d.root, "big")->via.str.ptr, big, 70000);
	u = mp_get(d.root, "arr")->via.array.ptr[4095].via.u64;
	assert_true(u == 4095ULL * 1000003);
	assert_int_equal(mp_int(d.root, "neg", 1, INT64_MIN, 0, &v, &e), 0);
	assert_true(v == INT32_MIN);
	mp_doc_free(&d);
	enc_free(&m);
	/* One more array item is one too many. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_str(&m, "arr");
	enc_array(&m, mp_limits_default.max_elems + 1);
	for (i = 0; i <= mp_limits_default.max_elems; i++)
		enc_uint(&m, i);
	enc_expect_bad(&m, NULL, "array too long");
	free(big);
}

/* The accessor fixture: one map with a field of every kind. */
static void
enc_fixture(struct mp_enc *m)
{
	static char *const arr[] = {"x", "yy"};

	enc_init(m);
	enc_map(m, 12);
	enc_kstr(m, "s", "hello");
	enc_kuint(m, "u", 42);
	enc_kint(m, "n", -5);
	enc_kbool(m, "b", 1);
	enc_kbin(m, "bin", "\x00\x01\xff", 3);
	enc_kstrarr(m, "arr", arr, 2);
	enc_str(m, "m");
	enc_map(m, 1);
	enc_kstr(m, "k", "v");
	enc_str(m, "nil");
	enc_nil(m);
	enc_kuint(m, "big", UINT64_MAX);
	enc_str(m, "mixed");
	enc_array(m, 2);
	enc_str(m, "x");
	enc_uint(m, 1);
	enc_kint(m, "min", INT64_MIN);
	enc_kstrarr(m, "empty", NULL, 0);
}

struct fixture {
	struct mp_enc m;
	struct mp_doc d;
	const msgpack_object *o;
};

static int
fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct error e;

	if (f == NULL)
		return -1;
	enc_fixture(&f->m);
	if (mp_decode(&f->d, (const uint8_t *)f->m.sb.data, f->m.sb.size, NULL,
	        &e) != 0)
		return -1;
	f->o = f->d.root;
	*state = f;
	return 0;
}

static int
fixture_teardown(void **state)
{
	struct fixture *f = *state;

	mp_doc_free(&f->d);
	enc_free(&f->m);
	free(f);
	return 0;
}

static void
assert_err(int r, const struct error *e, const char *needle)
{
	assert_int_equal(r, -1);
	assert_int_equal(e->type, ERR_BAD_REQUEST);
	if (strstr(e->msg, needle) == NULL)
		fail_msg(
		    "error \"%s\" does not mention \"%s\"", e->msg, needle);
}

static void
test_get(void **state)
{
	struct fixture *f = *state;
	const msgpack_object *v;

	v = mp_get(f->o, "s");
	assert_non_null(v);
	assert_int_equal(v->type, MSGPACK_OBJECT_STR);
	assert_null(mp_get(f->o, "nope"));
	assert_null(mp_get(f->o, ""));
	/* "bi" is a prefix of "bin" and "big", not a key. */
	assert_null(mp_get(f->o, "bi"));
	assert_null(mp_get(NULL, "s"));
	/* Only maps have fields. */
	assert_null(mp_get(mp_get(f->o, "arr"), "x"));
}

static void
test_str(void **state)
{
	struct fixture *f = *state;
	struct error e;
	char *s = NULL, *keep = strdup("keep");

	assert_int_equal(mp_str(f->o, "s", 1, 5, &s, &e), 0);
	assert_string_equal(s, "hello");
	/* A second read replaces (and frees) the old value. */
	assert_int_equal(mp_str(f->o, "s", 1, 64, &s, &e), 0);
	assert_string_equal(s, "hello");
	free(s);
	s = NULL;

	assert_err(
	    mp_str(f->o, "zz", 1, 64, &s, &e), &e, "missing field \"zz\"");
	assert_err(
	    mp_str(f->o, "nil", 1, 64, &s, &e), &e, "missing field \"nil\"");
	assert_err(mp_str(f->o, "u", 1, 64, &s, &e), &e,
	    "field \"u\" must be a string");
	assert_err(mp_str(f->o, "bin", 1, 64, &s, &e), &e, "must be a string");
	assert_err(mp_str(f->o, "s", 1, 4, &s, &e), &e,
	    "field \"s\" longer than 4 bytes");
	assert_null(s);

	/* Optional and absent (or nil): success, value untouched. */
	assert_int_equal(mp_str(f->o, "zz", 0, 64, &keep, &e), 0);
	assert_string_equal(keep, "keep");
	assert_int_equal(mp_str(f->o, "nil", 0, 64, &keep, &e), 0);
	assert_string_equal(keep, "keep");
	/* Optional but present with the wrong type is still an error. */
	assert_err(mp_str(f->o, "u", 0, 64, &keep, &e), &e, "must be a string");
	assert_string_equal(keep, "keep");
	free(keep);
}

static void
test_uint(void **state)
{
	struct fixture *f = *state;
	struct error e;
	uint64_t v = 7;

	assert_int_equal(mp_uint(f->o, "u", 1, 42, &v, &e), 0);
	assert_int_equal(v, 42);
	assert_int_equal(mp_uint(f->o, "big", 1, UINT64_MAX, &v, &e), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_err(
	    mp_uint(f->o, "u", 1, 41, &v, &e), &e, "field \"u\" above 41");
	assert_err(mp_uint(f->o, "big", 1, UINT32_MAX, &v, &e), &e, "above");
	assert_err(mp_uint(f->o, "n", 1, 100, &v, &e), &e,
	    "must be a non-negative integer");
	assert_err(mp_uint(f->o, "s", 1, 100, &v, &e), &e,
	    "must be a non-negative integer");
	assert_err(mp_uint(f->o, "b", 1, 100, &v, &e), &e,
	    "must be a non-negative integer");
	assert_err(mp_uint(f->o, "zz", 1, 100, &v, &e), &e, "missing field");
	assert_int_equal(mp_uint(f->o, "zz", 0, 100, &v, &e), 0);
	assert_int_equal(v, 7);
}

static void
test_int(void **state)
{
	struct fixture *f = *state;
	struct error e;
	int64_t v = 7;

	assert_int_equal(mp_int(f->o, "n", 1, -5, 5, &v, &e), 0);
	assert_int_equal(v, -5);
	assert_int_equal(mp_int(f->o, "u", 1, -5, 42, &v, &e), 0);
	assert_int_equal(v, 42);
	assert_int_equal(mp_int(f->o, "min", 1, INT64_MIN, 0, &v, &e), 0);
	assert_true(v == INT64_MIN);
	v = 7;
	assert_err(mp_int(f->o, "n", 1, -4, 5, &v, &e), &e,
	    "field \"n\" out of range");
	assert_err(mp_int(f->o, "u", 1, 0, 41, &v, &e), &e, "out of range");
	/* UINT64_MAX does not fit an int64. */
	assert_err(mp_int(f->o, "big", 1, INT64_MIN, INT64_MAX, &v, &e), &e,
	    "out of range");
	assert_err(
	    mp_int(f->o, "s", 1, 0, 10, &v, &e), &e, "must be an integer");
	assert_err(mp_int(f->o, "zz", 1, 0, 10, &v, &e), &e, "missing field");
	assert_int_equal(mp_int(f->o, "zz", 0, 0, 10, &v, &e), 0);
	assert_int_equal(v, 7);
}

static void
test_bool(void **state)
{
	struct fixture *f = *state;
	struct error e;
	int v = 0;

	assert_int_equal(mp_bool(f->o, "b", 1, &v, &e), 0);
	assert_int_equal(v, 1);
	v = 5;
	assert_err(
	    mp_bool(f->o, "u", 1, &v, &e), &e, "field \"u\" must be a boolean");
	assert_err(mp_bool(f->o, "zz", 1, &v, &e), &e, "missing field");
	assert_int_equal(mp_bool(f->o, "zz", 0, &v, &e), 0);
	assert_int_equal(v, 5);
}

static void
test_bin(void **state)
{
	struct fixture *f = *state;
	struct error e;
	uint8_t *p = NULL;
	size_t n = 99;

	assert_int_equal(mp_bin(f->o, "bin", 1, 3, &p, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(p, "\x00\x01\xff", 3);
	assert_int_equal(p[3], 0); /* always NUL-terminated */
	/* A string is accepted as binary. */
	assert_int_equal(mp_bin(f->o, "s", 1, 64, &p, &n, &e), 0);
	assert_int_equal(n, 5);
	assert_string_equal((char *)p, "hello");
	free(p);
	p = NULL;
	n = 99;
	assert_err(mp_bin(f->o, "bin", 1, 2, &p, &n, &e), &e,
	    "field \"bin\" longer than 2 bytes");
	assert_err(mp_bin(f->o, "u", 1, 64, &p, &n, &e), &e,
	    "field \"u\" must be binary");
	assert_err(mp_bin(f->o, "zz", 1, 64, &p, &n, &e), &e, "missing field");
	assert_int_equal(mp_bin(f->o, "zz", 0, 64, &p, &n, &e), 0);
	assert_null(p);
	assert_int_equal(n, 99);
}

static void
test_strarr(void **state)
{
	struct fixture *f = *state;
	struct error e;
	char **v = NULL;
	size_t n = 0;

	assert_int_equal(mp_strarr(f->o, "arr", 1, 2, 2, &v, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0], "x");
	assert_string_equal(v[1], "yy");
	assert_null(v[2]); /* NULL-terminated, ready for execve */
	/* Reading again replaces the old array. */
	assert_int_equal(mp_strarr(f->o, "empty", 1, 2, 2, &v, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_non_null(v);
	assert_null(v[0]);
	strarr_free(v, n);
	v = NULL;
	n = 0;

	assert_err(mp_strarr(f->o, "mixed", 1, 8, 8, &v, &n, &e), &e,
	    "field \"mixed\" must be an array of strings");
	assert_err(mp_strarr(f->o, "arr", 1, 1, 8, &v, &n, &e), &e,
	    "field \"arr\" has more than 1 items");
	assert_err(mp_strarr(f->o, "arr", 1, 8, 1, &v, &n, &e), &e,
	    "an item of \"arr\" is longer than 1 bytes");
	assert_err(mp_strarr(f->o, "s", 1, 8, 8, &v, &n, &e), &e,
	    "must be an array of strings");
	assert_err(mp_strarr(f->o, "m", 1, 8, 8, &v, &n, &e), &e,
	    "must be an array of strings");
	assert_err(
	    mp_strarr(f->o, "zz", 1, 8, 8, &v, &n, &e), &e, "missing field");
	assert_null(v);
	assert_int_equal(n, 0);
	assert_int_equal(mp_strarr(f->o, "zz", 0, 8, 8, &v, &n, &e), 0);
	assert_null(v);
}

static void
test_submap(void **state)
{
	struct fixture *f = *state;
	struct error e;
	const msgpack_object *m = NULL;
	char *s = NULL;

	assert_int_equal(mp_submap(f->o, "m", 1, &m, &e), 0);
	assert_non_null(m);
	assert_int_equal(mp_str(m, "k", 1, 8, &s, &e), 0);
	assert_string_equal(s, "v");
	free(s);
	m = NULL;
	assert_err(mp_submap(f->o, "arr", 1, &m, &e), &e,
	    "field \"arr\" must be a map");
	assert_err(mp_submap(f->o, "zz", 1, &m, &e), &e, "missing field");
	assert_int_equal(mp_submap(f->o, "zz", 0, &m, &e), 0);
	assert_null(m);
}

static void
test_only_keys(void **state)
{
	struct fixture *f = *state;
	static const char *const all[] = {"s", "u", "n", "b", "bin", "arr", "m",
	    "nil", "big", "mixed", "min", "empty", NULL};
	static const char *const some[] = {"s", "u", "n", "b", "bin", "arr",
	    "m", "nil", "big", "min", "empty", NULL};
	static const char *const prefixes[] = {"s", "u", "n", "b", "bi", "arr",
	    "m", "nil", "big", "mixed", "min", "empty", NULL};
	struct error e;

	assert_int_equal(mp_only_keys(f->o, all, &e), 0);
	assert_err(mp_only_keys(f->o, some, &e), &e, "unknown field \"mixed\"");
	/* "bi" must not admit "bin". */
	assert_err(
	    mp_only_keys(f->o, prefixes, &e), &e, "unknown field \"bin\"");
}

/* Everything the enc_* helpers write decodes back to the same values. */
static void
test_enc_round_trip(void **state)
{
	static char *const words[] = {"one", "", "thr\xc3\xa9\x65"};
	struct mp_enc m, m2;
	struct mp_doc d, d2;
	struct error e;
	const msgpack_object *o, *sub;
	char *s = NULL, **arr = NULL;
	uint8_t *bin = NULL;
	size_t n = 0, binlen = 0;
	uint64_t u;
	int64_t i;
	int b;

	(void)state;
	enc_init(&m);
	enc_map(&m, 12);
	enc_kstr(&m, "str", "hello");
	enc_kstr(&m, "null", NULL); /* NULL encodes as "" */
	enc_str(&m, "strn");
	enc_strn(&m, "abcdef", 3);
	enc_kuint(&m, "u0", 0);
	enc_kuint(&m, "umax", UINT64_MAX);
	enc_kint(&m, "ineg", -1234567890123LL);
	enc_kint(&m, "ipos", 77);
	enc_kbool(&m, "t", 1);
	enc_kbool(&m, "f", 0);
	enc_kbin(&m, "bin", "\x00\xfe", 2);
	enc_kstrarr(&m, "arr", words, 3);
	enc_str(&m, "sub");
	enc_map(&m, 2);
	enc_str(&m, "nil");
	enc_nil(&m);
	enc_str(&m, "list");
	enc_array(&m, 2);
	enc_uint(&m, 1);
	enc_int(&m, -1);
	assert_int_equal(
	    mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	o = d.root;
	assert_int_equal(o->via.map.size, 12);

	assert_int_equal(mp_str(o, "str", 1, 64, &s, &e), 0);
	assert_string_equal(s, "hello");
	assert_int_equal(mp_str(o, "null", 1, 64, &s, &e), 0);
	assert_string_equal(s, "");
	assert_int_equal(mp_str(o, "strn", 1, 64, &s, &e), 0);
	assert_string_equal(s, "abc");
	free(s);
	assert_int_equal(mp_uint(o, "u0", 1, 0, &u, &e), 0);
	assert_int_equal(u, 0);
	assert_int_equal(mp_uint(o, "umax", 1, UINT64_MAX, &u, &e), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(mp_int(o, "ineg", 1, INT64_MIN, 0, &i, &e), 0);
	assert_true(i == -1234567890123LL);
	assert_int_equal(mp_int(o, "ipos", 1, 0, 100, &i, &e), 0);
	assert_int_equal(i, 77);
	assert_int_equal(mp_bool(o, "t", 1, &b, &e), 0);
	assert_int_equal(b, 1);
	assert_int_equal(mp_bool(o, "f", 1, &b, &e), 0);
	assert_int_equal(b, 0);
	assert_int_equal(mp_get(o, "bin")->type, MSGPACK_OBJECT_BIN);
	assert_int_equal(mp_bin(o, "bin", 1, 2, &bin, &binlen, &e), 0);
	assert_int_equal(binlen, 2);
	assert_memory_equal(bin, "\x00\xfe", 2);
	free(bin);
	assert_int_equal(mp_strarr(o, "arr", 1, 3, 8, &arr, &n, &e), 0);
	assert_int_equal(n, 3);
	assert_string_equal(arr[0], "one");
	assert_string_equal(arr[1], "");
	assert_string_equal(arr[2], "thr\xc3\xa9\x65");
	strarr_free(arr, n);
	assert_int_equal(mp_submap(o, "sub", 1, &sub, &e), 0);
	assert_int_equal(mp_get(sub, "nil")->type, MSGPACK_OBJECT_NIL);

	/* enc_obj copies a decoded subtree verbatim. */
	enc_init(&m2);
	enc_map(&m2, 1);
	enc_str(&m2, "copy");
	enc_obj(&m2, sub);
	assert_int_equal(
	    mp_decode(&d2, (const uint8_t *)m2.sb.data, m2.sb.size, NULL, &e),
	    0);
	sub = mp_get(d2.root, "copy");
	assert_non_null(sub);
	assert_int_equal(sub->type, MSGPACK_OBJECT_MAP);
	assert_int_equal(mp_get(sub, "list")->via.array.size, 2);
	assert_int_equal(mp_get(sub, "list")->via.array.ptr[1].via.i64, -1);
	mp_doc_free(&d2);
	enc_free(&m2);
	mp_doc_free(&d);
	mp_doc_free(&d); /* freeing twice is harmless */
	enc_free(&m);
}

/* A decoded document must not depend on the caller's buffer. */
static void
test_doc_owns_its_data(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint8_t *copy;
	char *s = NULL;
	uint8_t *bin = NULL;
	size_t binlen = 0;

	(void)state;
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "s", "original");
	enc_kbin(&m, "b", "bytes", 5);
	copy = malloc(m.sb.size);
	assert_non_null(copy);
	memcpy(copy, m.sb.data, m.sb.size);
	assert_int_equal(mp_decode(&d, copy, m.sb.size, NULL, &e), 0);
	memset(copy, 'X', m.sb.size);
	free(copy);
	assert_int_equal(mp_str(d.root, "s", 1, 64, &s, &e), 0);
	assert_string_equal(s, "original");
	assert_int_equal(mp_bin(d.root, "b", 1, 64, &bin, &binlen, &e), 0);
	assert_memory_equal(bin, "bytes", 5);
	free(s);
	free(bin);
	mp_doc_free(&d);
	enc_free(&m);
}

/* {"v": text}, decoded into d; the encoder is freed. */
static void
decode_text(struct mp_doc *d, const char *text)
{
	struct mp_enc m;
	struct error e;

	enc_init(&m);
	assert_int_equal(m.sb.size, 0); /* a kept buffer starts empty */
	enc_map_open(&m);
	enc_kstr(&m, "v", text);
	enc_map_close(&m);
	/* fixmap, "v", the string's header (fixstr or str8), its bytes */
	assert_int_equal(
	    m.sb.size, 1 + 2 + (strlen(text) < 32 ? 1 : 2) + strlen(text));
	assert_int_equal(
	    mp_decode(d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	enc_free(&m);
}

/* Document i's text in a round; lengths differ, so a stale byte shows. */
static void
reuse_text(char *buf, size_t len, size_t i, int round)
{
	snprintf(buf, len, "document %zu of round %d%.*s", i, round,
	    (int)(i * 5), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
}

/*
 * Documents and encoders take what freed ones left (a role keeps a
 * few): each still holds its own message alone, with more live at
 * once than are kept, round after round.
 */
static void
test_doc_reuse(void **state)
{
	struct mp_doc d[7];
	const msgpack_object *v;
	char want[64];
	size_t i;
	int round;

	(void)state;
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 7; i++) {
			reuse_text(want, sizeof(want), i, round);
			decode_text(&d[i], want);
		}
		for (i = 0; i < 7; i++) {
			reuse_text(want, sizeof(want), i, round);
			v = mp_get(d[i].root, "v");
			assert_non_null(v);
			assert_int_equal(v->via.str.size, strlen(want));
			assert_memory_equal(v->via.str.ptr, want, strlen(want));
		}
		/* freed in another order than made */
		for (i = 0; i < 7; i++)
			mp_doc_free(&d[(i * 3) % 7]);
	}
}

/*
 * Under AddressSanitizer a freed document's bytes are poisoned while
 * kept: reading them fails as a use after free would, and does not
 * quietly read the next message.
 */
static void
test_freed_doc_poisoned(void **state)
{
	struct mp_doc d;
	const char *p;
	int status;
	pid_t pid;

	(void)state;
#if !defined(__SANITIZE_ADDRESS__)
	skip(); /* only a sanitizer build can see it */
#endif
	assert_true((pid = fork()) != -1);
	if (pid == 0) {
		FILE *quiet = freopen("/dev/null", "w", stderr);

		(void)quiet;
		decode_text(&d, "a secret of the last message");
		p = mp_get(d.root, "v")->via.str.ptr;
		mp_doc_free(&d);
		*(volatile const char *)p; /* the read a sanitizer stops */
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The n entries {"k0": 0, "k1": 1, ...}, keys counted when a map is open. */
static void
enc_entries(struct mp_enc *m, uint32_t n)
{
	char k[16];
	uint32_t i;

	for (i = 0; i < n; i++) {
		snprintf(k, sizeof(k), "k%u", (unsigned)i);
		enc_kuint(m, k, i);
	}
}

/* The map at o holds exactly enc_entries(n), in order (a lookup of
 * each key would cost n^2: minutes under a sanitizer at 65,536). */
static void
assert_entries(const msgpack_object *o, uint32_t n)
{
	const msgpack_object_kv *kv;
	char k[16];
	uint32_t i;

	assert_int_equal(o->type, MSGPACK_OBJECT_MAP);
	assert_int_equal(o->via.map.size, n);
	for (i = 0; i < n; i++) {
		kv = &o->via.map.ptr[i];
		snprintf(k, sizeof(k), "k%u", (unsigned)i);
		assert_int_equal(kv->key.type, MSGPACK_OBJECT_STR);
		assert_int_equal(kv->key.via.str.size, strlen(k));
		assert_memory_equal(kv->key.via.str.ptr, k, strlen(k));
		assert_int_equal(kv->val.type, MSGPACK_OBJECT_POSITIVE_INTEGER);
		assert_int_equal(kv->val.via.u64, i);
	}
}

/*
 * A map counts its own entries and comes out with the smallest header
 * that holds the count (fixmap, map16, map32), directly followed by the
 * entries; at the root and nested in another map.
 */
static void
test_enc_map_counts_itself(void **state)
{
	static const struct {
		uint32_t n;
		uint8_t first;
		size_t hdr;
	} cases[] = {
	    {0, 0x80, 1},
	    {15, 0x8f, 1},
	    {16, 0xde, 3},
	    {65535, 0xde, 3},
	    {65536, 0xdf, 5},
	};
	static const struct mp_limits big = {
	    .max_depth = 6, .max_str = 64, .max_elems = 65536, .max_key = 64};
	struct mp_enc m, body;
	struct mp_doc d;
	struct error e;
	const uint8_t *p;
	size_t i;
	int b = 0;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* The same entries outside any map: the body alone. */
		enc_init(&body);
		enc_entries(&body, cases[i].n);

		enc_init(&m);
		enc_map_open(&m);
		assert_false(enc_complete(&m));
		enc_entries(&m, cases[i].n);
		enc_map_close(&m);
		assert_true(enc_complete(&m));
		p = (const uint8_t *)m.sb.data;
		assert_int_equal(p[0], cases[i].first);
		if (cases[i].hdr == 3)
			assert_int_equal((p[1] << 8) | p[2], cases[i].n);
		if (cases[i].hdr == 5)
			assert_int_equal(((uint32_t)p[1] << 24) | (p[2] << 16) |
			                     (p[3] << 8) | p[4],
			    cases[i].n);
		assert_int_equal(m.sb.size, cases[i].hdr + body.sb.size);
		assert_memory_equal(
		    p + cases[i].hdr, body.sb.data, body.sb.size);
		assert_int_equal(mp_decode(&d, p, m.sb.size, &big, &e), 0);
		assert_entries(d.root, cases[i].n);
		mp_doc_free(&d);
		enc_free(&m);

		/* Nested: the entries after the shrunk header stay in place. */
		enc_init(&m);
		enc_map_open(&m);
		enc_kuint(&m, "before", 1);
		enc_key(&m, "m");
		enc_map_open(&m);
		enc_entries(&m, cases[i].n);
		enc_map_close(&m);
		assert_false(enc_complete(&m));
		enc_kbool(&m, "after", 1);
		enc_map_close(&m);
		assert_true(enc_complete(&m));
		p = (const uint8_t *)m.sb.data;
		assert_int_equal(p[0], 0x83);
		assert_int_equal(mp_decode(&d, p, m.sb.size, &big, &e), 0);
		assert_int_equal(d.root->via.map.size, 3);
		assert_entries(mp_get(d.root, "m"), cases[i].n);
		assert_int_equal(mp_bool(d.root, "after", 1, &b, &e), 0);
		assert_int_equal(b, 1);
		mp_doc_free(&d);
		enc_free(&m);
		enc_free(&body);
	}
}

/* Maps in maps, in arrays, several deep, each counted on its own. */
static void
test_enc_nested_maps(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	const msgpack_object *o, *arr;
	char *s = NULL;
	uint64_t v = 0;

	(void)state;
	enc_init(&m);
	enc_map_open(&m);
	enc_key(&m, "empty");
	enc_map_open(&m);
	enc_map_close(&m);
	enc_key(&m, "list");
	enc_array(&m, 3);
	enc_map_open(&m);
	enc_kuint(&m, "x", 1);
	enc_map_close(&m);
	enc_map_open(&m);
	enc_map_close(&m);
	enc_map_open(&m);
	enc_entries(&m, 20);
	enc_map_close(&m);
	enc_key(&m, "deep");
	enc_map_open(&m);
	enc_key(&m, "a");
	enc_map_open(&m);
	enc_key(&m, "b");
	enc_map_open(&m);
	enc_kstr(&m, "c", "bottom");
	enc_map_close(&m);
	enc_kuint(&m, "after_b", 2);
	enc_map_close(&m);
	enc_map_close(&m);
	enc_kuint(&m, "last", 3);
	enc_map_close(&m);
	assert_true(enc_complete(&m));
	assert_int_equal((uint8_t)m.sb.data[0], 0x84);

	assert_int_equal(
	    mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	assert_int_equal(d.root->via.map.size, 4);
	assert_int_equal(mp_get(d.root, "empty")->via.map.size, 0);
	arr = mp_get(d.root, "list");
	assert_int_equal(arr->via.array.size, 3);
	assert_int_equal(arr->via.array.ptr[0].via.map.size, 1);
	assert_int_equal(arr->via.array.ptr[1].via.map.size, 0);
	assert_entries(&arr->via.array.ptr[2], 20);
	o = mp_get(mp_get(d.root, "deep"), "a");
	assert_int_equal(o->via.map.size, 2);
	assert_int_equal(mp_str(mp_get(o, "b"), "c", 1, 16, &s, &e), 0);
	assert_string_equal(s, "bottom");
	free(s);
	assert_int_equal(mp_uint(o, "after_b", 1, 9, &v, &e), 0);
	assert_int_equal(v, 2);
	assert_int_equal(mp_uint(d.root, "last", 1, 9, &v, &e), 0);
	assert_int_equal(v, 3);
	mp_doc_free(&d);
	enc_free(&m);
}

/* A header whose count is wrong (written by hand) does not decode. */
static void
test_enc_wrong_count(void **state)
{
	struct mp_enc m;

	(void)state;
	enc_init(&m);
	enc_map(&m, 3);
	enc_entries(&m, 2);
	enc_expect_bad(&m, NULL, "truncated msgpack");
	enc_init(&m);
	enc_map(&m, 1);
	enc_entries(&m, 2);
	enc_expect_bad(&m, NULL, "trailing bytes");
	enc_init(&m);
	enc_map_open(&m);
	enc_entries(&m, 2);
	enc_map_close(&m);
	enc_expect_good(&m, NULL);
}

/* A pipe whose reading end holds len bytes, the writing end closed. */
static int
pipe_of(const void *p, size_t len)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	assert_true(write(fds[1], p, len) == (ssize_t)len);
	close(fds[1]);
	return fds[0];
}

/* msg_read: one whole message of the type asked for, or an error. */
static void
test_msg_read_pipe(void **state)
{
	static const uint8_t not_msgpack[] = {0, 0, 0, 1, 0xc1};
	static const uint8_t truncated[] = {0, 0, 0, 9, 0x81, 0xa1};
	static const uint8_t empty[] = {0, 0, 0, 0};
	uint8_t big[FRAME_HDR_LEN];
	struct msg_ready r;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	int fds[2];

	(void)state;
	/* Two messages back to back: each read takes one frame. */
	assert_int_equal(pipe(fds), 0);
	enc_init(&m);
	msg_ready_enc(&m, "auditd");
	assert_int_equal(frame_send(fds[1], m.sb.data, m.sb.size, &e), 0);
	enc_free(&m);
	enc_init(&m);
	msg_empty_enc(&m, MSG_SERVE);
	assert_int_equal(frame_send(fds[1], m.sb.data, m.sb.size, &e), 0);
	enc_free(&m);
	close(fds[1]);
	assert_int_equal(msg_read(fds[0], MSG_READY, &d, &e), 0);
	assert_int_equal(msg_ready_dec(&d, &r, &e), 0);
	assert_string_equal(r.role, "auditd");
	msg_ready_free(&r);
	mp_doc_free(&d);
	/* The next one is a SERVE, not the READY asked for. */
	memset(&e, 0, sizeof(e));
	assert_int_equal(msg_read(fds[0], MSG_READY, &d, &e), -1);
	assert_non_null(strstr(e.msg, "expected message type 1"));
	assert_null(d.root);
	/* Then the writer is gone. */
	assert_int_equal(msg_read(fds[0], MSG_READY, &d, &e), -1);
	assert_non_null(strstr(e.msg, "connection closed"));
	close(fds[0]);

	fds[0] = pipe_of(not_msgpack, sizeof(not_msgpack));
	assert_int_equal(msg_read(fds[0], MSG_READY, &d, &e), -1);
	assert_non_null(strstr(e.msg, "malformed msgpack"));
	close(fds[0]);
	fds[0] = pipe_of(truncated, sizeof(truncated));
	assert_int_equal(msg_read(fds[0], MSG_READY, &d, &e), -1);
	assert_non_null(strstr(e.msg, "truncated frame"));
	close(fds[0]);
	fds[0] = pipe_of(empty, sizeof(empty));
	assert_int_equal(msg_read(fds[0], MSG_READY, &d, &e), -1);
	assert_non_null(strstr(e.msg, "empty frame"));
	close(fds[0]);
	frame_put_len(big, FRAME_MAX_INTERNAL + 1);
	fds[0] = pipe_of(big, sizeof(big));
	assert_int_equal(msg_read(fds[0], MSG_READY, &d, &e), -1);
	assert_non_null(strstr(e.msg, "exceeds the limit"));
	close(fds[0]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_input),
	    cmocka_unit_test(test_root_not_map),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_huge_declared_sizes),
	    cmocka_unit_test(test_trailing_bytes),
	    cmocka_unit_test(test_depth),
	    cmocka_unit_test(test_size_limits),
	    cmocka_unit_test(test_utf8_values_and_keys),
	    cmocka_unit_test(test_non_string_keys),
	    cmocka_unit_test(test_duplicate_keys),
	    cmocka_unit_test(test_float_and_ext),
	    cmocka_unit_test(test_all_encodings_accepted),
	    cmocka_unit_test_setup_teardown(
	        test_get, fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_str, fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_uint, fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_int, fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_bool, fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_bin, fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_strarr, fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_submap, fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(
	        test_only_keys, fixture_setup, fixture_teardown),
	    cmocka_unit_test(test_enc_round_trip),
	    cmocka_unit_test(test_doc_owns_its_data),
	    cmocka_unit_test(test_doc_reuse),
	    cmocka_unit_test(test_freed_doc_poisoned),
	    cmocka_unit_test(test_enc_map_counts_itself),
	    cmocka_unit_test(test_enc_nested_maps),
	    cmocka_unit_test(test_enc_wrong_count),
	    cmocka_unit_test(test_msg_read_pipe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
