/*
 * test_audit_record.c: records from AUDIT events (auditd_record.c).
 * Text is always valid UTF-8 (bad bytes escaped as \xNN), long strings
 * and arrays are cut with a marker, every line fits in 32 KiB, and a
 * sender cannot set auditd's own fields.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../auditd/auditd.h"
#include "../../lib/log.h"
#include "../../lib/util.h"
#include "testenc.h"
#include "../../proto/mp.h"

#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"
#define MARK AUDIT_TRUNC_MARK

static void
expect_text(const char *in, size_t len, size_t cap, const char *want)
{
	json_t *j = audit_text(in, len, cap);

	assert_non_null(j);
	assert_string_equal(json_string_value(j), want);
	json_decref(j);
}

static void
test_text_utf8(void **state)
{
	(void)state;
	expect_text("plain", 5, 100, "plain");
	expect_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, 100,
	    "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	expect_text("a\xff"
	            "b",
	    3, 100, "a\\xffb");
	expect_text("a\0b", 3, 100, "a\\x00b");
	expect_text("\xc0\xaf", 2, 100, "\\xc0\\xaf");          /* overlong */
	expect_text("\xed\xa0\x80", 3, 100, "\\xed\\xa0\\x80"); /* surrogate */
	expect_text("\xf4\x90\x80\x80", 4, 100,
	    "\\xf4\\x90\\x80\\x80");                   /* > U+10FFFF */
	expect_text("\xe2\x82", 2, 100, "\\xe2\\x82"); /* truncated */
	expect_text("x\x1b[31m", 6, 100, "x\x1b[31m"); /* JSON escapes it */
}

static void
test_text_cut(void **state)
{
	char big[5000];
	json_t *j;

	(void)state;
	expect_text("abcdef", 6, 6, "abcdef");
	expect_text("abcdefg", 7, 6, "abcdef" MARK);
	/* Never inside a character: the euro sign is 3 bytes. */
	expect_text("ab\xe2\x82\xac", 5, 4, "ab" MARK);
	/* An escape takes 4 bytes of the cap. */
	expect_text("ab\xff", 3, 5, "ab" MARK);
	memset(big, 'x', sizeof(big));
	j = audit_text(big, sizeof(big), AUDIT_FIELD_MAX);
	assert_int_equal(json_string_length(j), AUDIT_FIELD_MAX + strlen(MARK));
	json_decref(j);
}

/* Decode an encoded event map into d (the caller frees it). */
static const msgpack_object *
event_of(struct mp_enc *m, struct mp_doc *d)
{
	struct error e;

	if (mp_decode(d, (const uint8_t *)m->sb.data, m->sb.size, NULL, &e) ==
	    -1)
		fail_msg("decode: %s", e.msg);
	return d->root;
}

static json_t *
build(struct mp_enc *m, size_t cap, struct error *e)
{
	struct mp_doc d;
	json_t *rec;

	rec = audit_record_from_event(event_of(m, &d), cap, e);
	mp_doc_free(&d);
	enc_free(m);
	return rec;
}

static void
test_nested_names(void **state)
{
	struct mp_enc m;
	struct error e;
	json_t *rec;
	char *s;

	(void)state;
	enc_init(&m);
	enc_map(&m, 4);
	enc_kstr(&m, "event.action", "invoke.received");
	enc_kstr(&m, "skill.name", "hello");
	enc_kint(&m, "process.pid", -5);
	enc_kbin(&m, "skill.raw", "\x80ok", 3);
	rec = build(&m, AUDIT_FIELD_MAX, &e);
	assert_non_null(rec);
	s = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s,
	    "{\"event\":{\"action\":\"invoke.received\"},"
	    "\"process\":{\"pid\":-5},\"skill\":{\"name\":\"hello\","
	    "\"raw\":\"\\\\x80ok\"}}");
	free(s);
	json_decref(rec);
}

/* Each key alone (with event.action) must be refused. */
static void
test_refused_keys(void **state)
{
	static const char *const bad[] = {"audit.prev_hash", "audit.x",
	    "event.hash", "event.sequence", "event.kind", "event.provider",
	    "ecs.version", "service.name", "host.name", "@timestamp", ".x",
	    "x.", "a..b", "Upper.case", "sp ace", "event", "event.action.sub",
	    NULL};
	struct mp_enc m;
	struct error e;
	json_t *rec;
	int i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		enc_init(&m);
		enc_map(&m, 2);
		enc_kstr(&m, "event.action", "x");
		enc_kstr(&m, bad[i], "v");
		rec = build(&m, AUDIT_FIELD_MAX, &e);
		if (rec != NULL)
			fail_msg("key \"%s\" was accepted", bad[i]);
	}
}

static void
test_refused_values(void **state)
{
	struct mp_enc m;
	struct error e;

	(void)state;
	enc_init(&m); /* a map value */
	enc_map(&m, 2);
	enc_kstr(&m, "event.action", "x");
	enc_str(&m, "a.b");
	enc_map(&m, 0);
	assert_null(build(&m, AUDIT_FIELD_MAX, &e));
	enc_init(&m); /* an array in an array */
	enc_map(&m, 2);
	enc_kstr(&m, "event.action", "x");
	enc_str(&m, "a.b");
	enc_array(&m, 1);
	enc_array(&m, 0);
	assert_null(build(&m, AUDIT_FIELD_MAX, &e));
	enc_init(&m); /* no event.action */
	enc_map(&m, 1);
	enc_kstr(&m, "a.b", "x");
	assert_null(build(&m, AUDIT_FIELD_MAX, &e));
}

static void
test_array_cut(void **state)
{
	struct mp_enc m;
	struct error e;
	json_t *rec, *a;
	int i;

	(void)state;
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "event.action", "x");
	enc_str(&m, "skill.args");
	enc_array(&m, 100);
	for (i = 0; i < 100; i++)
		enc_str(&m, "arg");
	rec = build(&m, AUDIT_FIELD_MAX, &e);
	assert_non_null(rec);
	a = json_object_get(json_object_get(rec, "skill"), "args");
	assert_int_equal(json_array_size(a), AUDIT_ARRAY_MAX + 1);
	assert_string_equal(
	    json_string_value(json_array_get(a, AUDIT_ARRAY_MAX)), MARK);
	json_decref(rec);
}

/* 64 strings of 4 KiB: the line is cut to fit, and still verifies. */
static void
test_line_fits(void **state)
{
	struct audit_stamp st = {1, ZEROS, "broker", "host", NULL};
	char hash[HASH_HEX_LEN + 1], key[32], *big, *line;
	struct audit_line ln;
	struct mp_doc d;
	struct mp_enc m;
	struct error e;
	size_t len;
	int i;

	(void)state;
	big = malloc(4096);
	memset(big, 'y', 4096);
	enc_init(&m);
	enc_map(&m, 65);
	enc_kstr(&m, "event.action", "x");
	for (i = 0; i < 64; i++) {
		snprintf(key, sizeof(key), "f.k%d", i);
		enc_kbin(&m, key, big, 4096);
	}
	line = audit_event_line(event_of(&m, &d), &st, hash, &len, &e);
	assert_non_null(line);
	assert_true(len <= AUDIT_LINE_MAX);
	assert_non_null(strstr(line, MARK));
	assert_true(utf8_valid(line, len));
	assert_int_equal(audit_line_check(line, len - 1, &ln, &e), 0);
	assert_int_equal(ln.seq, 1);
	free(line);
	mp_doc_free(&d);
	enc_free(&m);
	free(big);
}

/* Too many fields for any cut: refused as "does not fit", not a crash. */
static void
test_line_too_many_fields(void **state)
{
	struct audit_stamp st = {1, ZEROS, "broker", "host", NULL};
	char hash[HASH_HEX_LEN + 1], key[64];
	struct mp_doc d;
	struct mp_enc m;
	struct error e;
	size_t len;
	int i;

	(void)state;
	enc_init(&m);
	enc_map(&m, 2001);
	enc_kstr(&m, "event.action", "x");
	for (i = 0; i < 2000; i++) {
		snprintf(key, sizeof(key), "f.a_rather_long_field_name_%d", i);
		enc_kstr(&m, key, "0123456789");
	}
	assert_null(audit_event_line(event_of(&m, &d), &st, hash, &len, &e));
	assert_int_equal(e.type, ERR_AUDIT_UNAVAILABLE);
	mp_doc_free(&d);
	enc_free(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_text_utf8),
	    cmocka_unit_test(test_text_cut),
	    cmocka_unit_test(test_nested_names),
	    cmocka_unit_test(test_refused_keys),
	    cmocka_unit_test(test_refused_values),
	    cmocka_unit_test(test_array_cut),
	    cmocka_unit_test(test_line_fits),
	    cmocka_unit_test(test_line_too_many_fields),
	};

	log_init("test_audit_record", 1, -1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
