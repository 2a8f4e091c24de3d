/*
 * test_audit_canon.c: the direct line writer (auditd_canon.c) writes
 * byte for byte the line the jansson path writes for the same event and
 * stamp, at every cut; what it does not take on it leaves to that path.
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
#include "testenc.h"
#include "../../proto/mp.h"

#define ZEROS "0000000000000000000000000000000000000000000000000000000000000000"

static const struct audit_stamp stamp = {
    41, ZEROS, "broker", "host-1", "2026-11-22T00:04:13.202Z"};

/* The event map of an encoded AUDIT-style map (d keeps it alive). */
static const msgpack_object *
event_of(struct mp_enc *m, struct mp_doc *d)
{
	struct error e;

	assert_int_equal(
	    mp_decode(d, (const uint8_t *)m->sb.data, m->sb.size, NULL, &e), 0);
	return d->root;
}

/* Both writers, every cut: the same line and hash, or canon declines. */
static int
same_line(const msgpack_object *ev)
{
	static const size_t caps[] = {AUDIT_FIELD_MAX, 1024, 256, 64};
	char h1[HASH_HEX_LEN + 1], h2[HASH_HEX_LEN + 1], *l1, *l2;
	struct error e;
	size_t n1, n2, i;
	json_t *rec;

	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		if (canon_event_line(ev, &stamp, caps[i], h1, &l1, &n1) == 0)
			return 0;
		assert_non_null(rec = audit_record_from_event(ev, caps[i], &e));
		audit_record_stamp(rec, &stamp);
		l2 = audit_line_encode(rec, h2, &n2);
		json_decref(rec);
		if (n1 != n2 || memcmp(l1, l2, n1) != 0)
			fail_msg("cap %zu:\n canon %.*s json  %.*s", caps[i],
			    (int)n1, l1, (int)n2, l2);
		assert_string_equal(h1, h2);
		free(l1);
		free(l2);
	}
	return 1;
}

/* A broker's policy.decision, nested names sharing prefixes. */
static void
test_decision(void **state)
{
	static char *rules[] = {"10-x.yaml:3 anyone", "builtin:phase"};
	struct mp_doc d;
	struct mp_enc m;

	(void)state;
	enc_init(&m);
	enc_map(&m, 19);
	enc_kstr(&m, "event.action", "policy.decision");
	enc_kstr(&m, "event.type", "allowed");
	enc_kstr(&m, "event.outcome", "success");
	enc_kstr(&m, "request.id", "r-1");
	enc_kuintstr(&m, "user.id", 1000);
	enc_kuintstr(&m, "group.id", 1000);
	enc_kint(&m, "process.pid", -42);
	enc_kstr(&m, "session.id", "default");
	enc_kstr(&m, "skill.name", "hello");
	enc_kstr(&m, "skill.command", "run");
	enc_kstr(&m, "skill.phase", "execution");
	enc_kstrarr(&m, "rule.name", rules, 2);
	enc_kstr(
	    &m, "event.reason", "allowed by \"rule\" \\ (a/b)\n\t\x01\x1f");
	enc_kstr(&m, "error.type", "none");
	enc_kbool(&m, "policy.dry_run", 1);
	enc_kuint(&m, "policy.effective.limits.timeout_ms", UINT64_MAX);
	enc_kstrarr(&m, "policy.effective.permissions.exec", NULL, 0);
	enc_key(&m, "policy.effective_x");
	enc_nil(&m);
	enc_kbool(&m, "policy0", 0);
	assert_true(same_line(event_of(&m, &d)));
	mp_doc_free(&d);
	enc_free(&m);
}

/*
 * The event object goes last, after names that sort after it ("zz",
 * "worker"), with its own keys sorted and a nested object of its own
 * last in it: the hash is still event's last member.
 */
static void
test_event_last(void **state)
{
	static char *cats[] = {"api"};
	struct mp_doc d;
	struct mp_enc m;

	(void)state;
	enc_init(&m);
	enc_map(&m, 8);
	enc_kstrarr(&m, "event.category", cats, 1);
	enc_kstr(&m, "event.action", "invoke.received");
	enc_kstr(&m, "event.type", "start");
	enc_kstr(&m, "zz", "last by name");
	enc_kint(&m, "worker.pid", 7);
	enc_kint(&m, "event.zz.deep", 1);
	enc_kstr(&m, "eventx.a", "not event");
	enc_kstr(&m, "a", "first");
	assert_true(same_line(event_of(&m, &d)));
	mp_doc_free(&d);
	enc_free(&m);
}

/* Text cut at each cap, bytes that are no UTF-8, long arrays. */
static void
test_cuts(void **state)
{
	char big[9000], *items[100];
	struct mp_doc d;
	struct mp_enc m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(big); i++)
		big[i] = "a\xc3\xa9\"\\\x7f\xe2\x82\xac"[i % 9];
	for (i = 0; i < 100; i++) /* each starts on a character */
		items[i] = big + 9 * i + (i % 2);
	big[8991] = '\0';
	enc_init(&m);
	enc_map(&m, 6);
	enc_kstr(&m, "event.action", "invoke.completed");
	enc_kstr(&m, "x.long", big + 1);
	enc_kbin(
	    &m, "x.bin", "ok\xff\x00\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80z", 14);
	enc_kstrarr(&m, "x.items", items, 100);
	enc_kint(&m, "x.min", INT64_MIN);
	enc_kstr(&m, "zz", "\xf0\x9f\x98\x80");
	assert_true(same_line(event_of(&m, &d)));
	mp_doc_free(&d);
	enc_free(&m);
}

/* What the general path replaces, refuses or cuts is left to it. */
static void
test_declined(void **state)
{
	static const char *const keys[] = {"ecs", "audit", "host.name.x",
	    "event.kind.y", "service", "Upper", "audit.prev_hash", "a..b",
	    "event.hash", "audit.x", "ecs.version", ".a", "a.", NULL};
	char h[HASH_HEX_LEN + 1], *line;
	struct mp_doc d;
	struct mp_enc m;
	size_t i, len;

	(void)state;
	for (i = 0; keys[i] != NULL; i++) {
		enc_init(&m);
		enc_map(&m, 2);
		enc_kstr(&m, "event.action", "x");
		enc_kstr(&m, keys[i], "v");
		if (mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL,
		        NULL) == 0) {
			assert_int_equal(canon_event_line(d.root, &stamp, 4096,
			                     h, &line, &len),
			    0);
			mp_doc_free(&d);
		}
		enc_free(&m);
	}
	/* a value and a prefix of another name */
	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "event.action", "x");
	enc_kstr(&m, "skill", "v");
	enc_kstr(&m, "skill.name", "v");
	assert_int_equal(
	    canon_event_line(event_of(&m, &d), &stamp, 4096, h, &line, &len),
	    0);
	mp_doc_free(&d);
	enc_free(&m);
	/* no event.action string */
	enc_init(&m);
	enc_map(&m, 1);
	enc_kuint(&m, "event.action", 1);
	assert_int_equal(
	    canon_event_line(event_of(&m, &d), &stamp, 4096, h, &line, &len),
	    0);
	mp_doc_free(&d);
	enc_free(&m);
}

/* A random name of [a-c_.] segments (some collide, some share prefixes). */
static void
rand_key(char *k, size_t max)
{
	size_t n = 1 + (size_t)rand() % (max - 1), i;

	for (i = 0; i < n; i++)
		k[i] = "abc_.0"[rand() % 6];
	k[n] = '\0';
}

/* Many random events: whenever canon writes one, it is the same line. */
static void
test_random(void **state)
{
	char key[12], val[64];
	struct mp_doc d;
	struct mp_enc m;
	int i, f, nf, taken = 0, v, j;

	(void)state;
	srand(7);
	for (i = 0; i < 3000; i++) {
		nf = rand() % 12;
		enc_init(&m);
		enc_map(&m, (size_t)nf + 1);
		enc_kstr(&m, "event.action", "random");
		for (f = 0; f < nf; f++) {
			rand_key(key, sizeof(key) - 1);
			enc_key(&m, key);
			v = rand() % 6;
			for (j = 0; j < (int)sizeof(val); j++)
				val[j] = (char)(1 + rand() % 255);
			if (v == 0)
				enc_int(&m, (int64_t)rand() - RAND_MAX / 2);
			else if (v == 1)
				enc_bool(&m, rand() % 2);
			else if (v == 2)
				enc_nil(&m);
			else if (v == 3)
				enc_bin(&m, val, (size_t)rand() % sizeof(val));
			else if (v == 4) {
				enc_array(&m, 2);
				enc_str(&m, "q\"\\");
				enc_uint(&m, (uint64_t)rand());
			} else
				enc_str(&m, "t\x01\x19\xc3\xa9");
		}
		/* duplicate keys and bad names do not decode: skipped */
		if (mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL,
		        NULL) == 0) {
			taken += same_line(d.root);
			mp_doc_free(&d);
		}
		enc_free(&m);
	}
	assert_true(taken > 500);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_decision),
	    cmocka_unit_test(test_event_last),
	    cmocka_unit_test(test_cuts),
	    cmocka_unit_test(test_declined),
	    cmocka_unit_test(test_random),
	};

	log_init("test_audit_canon", 1, -1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
