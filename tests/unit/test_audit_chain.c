/*
 * test_audit_chain.c: the audit line and head formats (auditd_chain.c).
 * A line hashes to its event.hash without re-serializing; any changed
 * byte is caught; the head file survives a torn slot.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../auditd/auditd.h"
#include "../../lib/log.h"

#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"

/* A stamped record's line (without its newline) in buf. */
static size_t
make_line(char *buf, size_t cap, uint64_t seq, const char *prev,
    char hash[HASH_HEX_LEN + 1])
{
	struct audit_stamp st = {seq, prev, "auditd", "host", NULL};
	json_t *rec = audit_own_record("test.record", "info", "success",
	    "a reason with \"quotes\" and \xc3\xa9");
	char *line;
	size_t len;

	audit_record_stamp(rec, &st);
	line = audit_line_encode(rec, hash, &len);
	json_decref(rec);
	assert_true(len < cap);
	assert_int_equal(line[len - 1], '\n');
	memcpy(buf, line, len - 1);
	buf[len - 1] = '\0';
	free(line);
	return len - 1;
}

static void
test_roundtrip(void **state)
{
	char buf[4096], hash[HASH_HEX_LEN + 1];
	struct audit_line ln;
	struct error e;
	size_t n;

	(void)state;
	n = make_line(buf, sizeof(buf), 7, ZEROS, hash);
	assert_int_equal(audit_line_check(buf, n, &ln, &e), 0);
	assert_int_equal(ln.seq, 7);
	assert_string_equal(ln.hash, hash);
	assert_string_equal(ln.prev, ZEROS);
	assert_string_equal(ln.action, "test.record");
	/* The hash is event.hash, nested: the last member of event, which
	 * is the record's last member. */
	assert_null(strstr(buf, "\"event.hash\""));
	assert_non_null(strstr(buf, ",\"hash\":\""));
	assert_string_equal(buf + n - 3, "\"}}");
	assert_null(strstr(strstr(buf, ",\"event\":{") + 9, "\":{"));
}

/* The line parsed has event.hash in its event object, and only there. */
static void
test_nested_hash(void **state)
{
	char buf[4096], hash[HASH_HEX_LEN + 1];
	json_t *j;
	size_t n;

	(void)state;
	n = make_line(buf, sizeof(buf), 9, ZEROS, hash);
	assert_non_null(j = json_loadb(buf, n, JSON_REJECT_DUPLICATES, NULL));
	assert_string_equal(json_string_value(json_object_get(
	                        json_object_get(j, "event"), "hash")),
	    hash);
	assert_null(json_object_get(j, "event.hash"));
	assert_string_equal(json_string_value(json_object_get(
	                        json_object_get(j, "event"), "dataset")),
	    AUDIT_DATASET);
	json_decref(j);
}

/* A line of the form before the hash was nested still verifies. */
static void
test_old_form(void **state)
{
	char hash[HASH_HEX_LEN + 1], *t, *line;
	unsigned char md[SHA256_DIGEST_LENGTH];
	struct audit_stamp st = {4, ZEROS, "auditd", "host", NULL};
	struct audit_line ln;
	struct error e;
	json_t *rec;
	size_t n, i;

	(void)state;
	rec = audit_own_record("test.record", "info", "success", NULL);
	audit_record_stamp(rec, &st);
	t = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rec);
	n = strlen(t);
	SHA256((const unsigned char *)t, n, md);
	for (i = 0; i < SHA256_DIGEST_LENGTH; i++)
		snprintf(hash + 2 * i, 3, "%02x", md[i]);
	line = malloc(n + 100);
	assert_non_null(line);
	snprintf(
	    line, n + 100, "%.*s,\"event.hash\":\"%s\"}", (int)n - 1, t, hash);
	assert_int_equal(audit_line_check(line, strlen(line), &ln, &e), 0);
	assert_int_equal(ln.seq, 4);
	assert_string_equal(ln.hash, hash);
	line[10] = line[10] == 'a' ? 'b' : 'a';
	assert_int_equal(audit_line_check(line, strlen(line), &ln, &e), -1);
	free(line);
	free(t);
}

static void
test_any_byte_changed(void **state)
{
	char buf[4096], copy[4096], hash[HASH_HEX_LEN + 1];
	struct audit_line ln;
	struct error e;
	size_t n, i;

	(void)state;
	n = make_line(buf, sizeof(buf), 3, ZEROS, hash);
	for (i = 0; i < n; i++) {
		memcpy(copy, buf, n + 1);
		copy[i] = copy[i] == 'a' ? 'b' : 'a';
		assert_int_equal(audit_line_check(copy, n, &ln, &e), -1);
	}
}

static void
test_not_a_line(void **state)
{
	static const char *const bad[] = {
	    "",
	    "{}",
	    "not json at all",
	    "{\"a\":1}",
	    "{\"a\":1,\"event.hash\":\"" ZEROS "\"}",
	    "{\"a\":1,\"event.hash\":\"" ZEROS "x\"}",
	    "[1,\"event.hash\":\"" ZEROS "\"}",
	    "{\"a\":1,\"event\":{\"x\":1,\"hash\":\"" ZEROS "\"}}",
	    "{\"event\":{\"hash\":\"" ZEROS "\"}}",
	    NULL,
	};
	struct audit_line ln;
	struct error e;
	int i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++)
		assert_int_equal(
		    audit_line_check(bad[i], strlen(bad[i]), &ln, &e), -1);
}

/* A record that hashes right but lacks a sequence is still refused. */
static void
test_hash_ok_fields_missing(void **state)
{
	char hash[HASH_HEX_LEN + 1], *line;
	struct audit_line ln;
	struct error e;
	json_t *rec;
	size_t len;

	(void)state;
	rec = json_pack("{s:{s:s}}", "event", "action", "x");
	line = audit_line_encode(rec, hash, &len);
	json_decref(rec);
	assert_int_equal(audit_line_check(line, len - 1, &ln, &e), -1);
	free(line);
}

static void
test_header_names(void **state)
{
	(void)state;
	assert_true(audit_is_header("audit.created"));
	assert_true(audit_is_header("audit.rotated"));
	assert_false(audit_is_header("audit.started"));
	assert_false(audit_is_header("invoke.received"));
}

static void
test_head_slots(void **state)
{
	struct audit_head h = {42, ZEROS}, got;
	char buf[2 * AUDIT_HEAD_SLOT];
	struct error e;
	int slot;

	(void)state;
	memset(h.hash, 'a', HASH_HEX_LEN);
	audit_head_slot_enc(&h, buf);
	assert_int_equal(buf[AUDIT_HEAD_SLOT - 1], '\n');
	assert_int_equal(audit_head_slot_dec(buf, AUDIT_HEAD_SLOT, &got), 0);
	assert_int_equal(got.seq, 42);
	assert_string_equal(got.hash, h.hash);
	/* Slot 1 newer: it wins. */
	h.seq = 43;
	audit_head_slot_enc(&h, buf + AUDIT_HEAD_SLOT);
	assert_int_equal(
	    audit_head_file_dec(buf, sizeof(buf), &got, &slot, &e), 0);
	assert_int_equal(got.seq, 43);
	assert_int_equal(slot, 1);
	/* A torn newer slot: the older one still stands. */
	buf[AUDIT_HEAD_SLOT + 40] ^= 1;
	assert_int_equal(
	    audit_head_file_dec(buf, sizeof(buf), &got, &slot, &e), 0);
	assert_int_equal(got.seq, 42);
	assert_int_equal(slot, 0);
	/* Both torn: no head. */
	buf[30] ^= 1;
	assert_int_equal(
	    audit_head_file_dec(buf, sizeof(buf), &got, &slot, &e), -1);
	/* Only one slot written yet. */
	audit_head_slot_enc(&h, buf);
	assert_int_equal(
	    audit_head_file_dec(buf, AUDIT_HEAD_SLOT, &got, NULL, &e), 0);
	assert_int_equal(got.seq, 43);
}

static void
test_head_arg(void **state)
{
	struct audit_head h;
	struct error e;

	(void)state;
	assert_int_equal(audit_head_arg_dec("12:" ZEROS, &h, &e), 0);
	assert_int_equal(h.seq, 12);
	assert_string_equal(h.hash, ZEROS);
	assert_int_equal(audit_head_arg_dec("12" ZEROS, &h, &e), -1);
	assert_int_equal(audit_head_arg_dec(":" ZEROS, &h, &e), -1);
	assert_int_equal(audit_head_arg_dec("0:" ZEROS, &h, &e), -1);
	assert_int_equal(audit_head_arg_dec("x:" ZEROS, &h, &e), -1);
	assert_int_equal(audit_head_arg_dec("5:" ZEROS "0", &h, &e), -1);
	assert_int_equal(audit_head_arg_dec("5:ABCDEF", &h, &e), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_nested_hash),
	    cmocka_unit_test(test_old_form),
	    cmocka_unit_test(test_any_byte_changed),
	    cmocka_unit_test(test_not_a_line),
	    cmocka_unit_test(test_hash_ok_fields_missing),
	    cmocka_unit_test(test_header_names),
	    cmocka_unit_test(test_head_slots),
	    cmocka_unit_test(test_head_arg),
	};

	log_init("test_audit_chain", 1, -1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
