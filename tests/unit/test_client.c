/* test_client.c: client requests decode strictly, with the right defaults. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testenc.h"
#include "../../proto/client.h"
#include "../../proto/msg.h"

/* Decode the encoded request into *r; the encoder is freed. */
static int
dec_req(struct mp_enc *m, struct client_req *r, struct error *e)
{
	struct mp_doc d;
	struct error de;
	int ret;

	if (mp_decode(&d, (const uint8_t *)m->sb.data, m->sb.size, NULL, &de) !=
	    0)
		fail_msg("mp_decode: %s", de.msg);
	memset(e, 0, sizeof(*e));
	ret = client_req_dec(&d, r, e);
	mp_doc_free(&d);
	enc_free(m);
	return ret;
}

static void
assert_bad(int r, const struct error *e, const char *needle)
{
	assert_int_equal(r, -1);
	assert_int_equal(e->type, ERR_BAD_REQUEST);
	if (strstr(e->msg, needle) == NULL)
		fail_msg(
		    "error \"%s\" does not mention \"%s\"", e->msg, needle);
}

/* An unknown (or not yet served) request type: unsupported. */
static void
assert_unsupported(int r, const struct error *e, const char *needle)
{
	assert_int_equal(r, -1);
	assert_int_equal(e->type, ERR_UNSUPPORTED);
	if (strstr(e->msg, needle) == NULL)
		fail_msg(
		    "error \"%s\" does not mention \"%s\"", e->msg, needle);
}

static void
assert_num_id(const struct client_req *r, uint64_t num)
{
	assert_int_equal(r->id.is_num, 1);
	assert_true(r->id.num == num);
	assert_null(r->id.str);
}

static void
assert_str_id(const struct client_req *r, const char *s)
{
	assert_int_equal(r->id.is_num, 0);
	assert_non_null(r->id.str);
	assert_string_equal(r->id.str, s);
}

static void
assert_no_id(const struct client_req *r)
{
	assert_int_equal(r->id.is_num, 0);
	assert_null(r->id.str);
}

/* Start {"type": type, "id": "r1", "skill": "hello", ...n more}. */
static void
call_begin(struct mp_enc *m, const char *type, size_t nmore)
{
	enc_init(m);
	enc_map(m, 3 + nmore);
	enc_kstr(m, "type", type);
	enc_kstr(m, "id", "r1");
	enc_kstr(m, "skill", "hello");
}

static void
test_hello_skills_stats(void **state)
{
	struct client_req r;
	struct mp_enc m;
	struct error e;

	(void)state;
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "hello");
	enc_kuint(&m, "id", 1);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_HELLO);
	assert_num_id(&r, 1);
	assert_null(r.skill);
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "id", "abc");
	enc_kstr(&m, "type", "skills");
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_SKILLS);
	assert_str_id(&r, "abc");
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "stats");
	enc_kuint(&m, "id", UINT64_MAX);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_STATS);
	assert_num_id(&r, UINT64_MAX);
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "reload");
	enc_kstr(&m, "id", "rl");
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_RELOAD);
	assert_str_id(&r, "rl");
	client_req_free(&r);

	/* Type names are exact. */
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "Hello");
	enc_kuint(&m, "id", 2);
	assert_unsupported(dec_req(&m, &r, &e), &e, "unknown request type");
	client_req_free(&r);
}

/* hello and skills take no other fields; the id still comes back. */
static void
test_plain_rejects_fields(void **state)
{
	struct client_req r;
	struct mp_enc m;
	struct error e;

	(void)state;
	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "hello");
	enc_kuint(&m, "id", 7);
	enc_kstr(&m, "skill", "x");
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"skill\"");
	assert_num_id(&r, 7);
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "skills");
	enc_kstr(&m, "id", "q");
	enc_kuint(&m, "verbose", 1);
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"verbose\"");
	assert_str_id(&r, "q");
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "reload");
	enc_kstr(&m, "id", "q");
	enc_kstr(&m, "policy_dir", "/tmp/evil");
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"policy_dir\"");
	client_req_free(&r);
}

static void
test_invoke_defaults(void **state)
{
	struct client_req r;
	struct mp_enc m;
	struct error e;

	(void)state;
	call_begin(&m, "invoke", 0);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_INVOKE);
	assert_str_id(&r, "r1");
	assert_string_equal(r.skill, "hello");
	assert_string_equal(r.session, DEFAULT_SESSION);
	assert_string_equal(r.session, "default");
	assert_string_equal(r.phase, "planning");
	assert_string_equal(r.command, "");
	assert_null(r.args);
	assert_int_equal(r.nargs, 0);
	assert_null(r.stdin_data);
	assert_int_equal(r.stdin_len, 0);
	assert_null(r.env);
	assert_int_equal(r.nenv, 0);
	assert_int_equal(r.timeout_ms, 0);
	client_req_free(&r);
	assert_null(r.skill);

	/* nil for an optional field means "not given". */
	call_begin(&m, "authorize", 2);
	enc_str(&m, "session");
	enc_nil(&m);
	enc_str(&m, "phase");
	enc_nil(&m);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_AUTHORIZE);
	assert_string_equal(r.session, "default");
	assert_string_equal(r.phase, "planning");
	client_req_free(&r);
}

static void
test_full_call(void **state)
{
	static char *const args[] = {"a", "b c", ""};
	const char *types[] = {"invoke", "authorize"};
	struct client_req r;
	struct mp_enc m;
	struct error e;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		call_begin(&m, types[i], 7);
		enc_kstr(&m, "command", "greet");
		enc_kstrarr(&m, "args", args, 3);
		enc_kbin(&m, "stdin", "\x00\xff\n", 3);
		enc_str(&m, "env");
		enc_map(&m, 2);
		enc_kstr(&m, "LANG", "C");
		enc_kstr(&m, "X", "a=b");
		enc_kstr(&m, "session", "work-1.a_b");
		enc_kstr(&m, "phase", "execution");
		enc_kuint(&m, "timeout_ms", 86400000);
		assert_int_equal(dec_req(&m, &r, &e), 0);
		assert_int_equal(r.type, i == 0 ? CREQ_INVOKE : CREQ_AUTHORIZE);
		assert_string_equal(r.command, "greet");
		assert_int_equal(r.nargs, 3);
		assert_string_equal(r.args[0], "a");
		assert_string_equal(r.args[1], "b c");
		assert_string_equal(r.args[2], "");
		assert_int_equal(r.stdin_len, 3);
		assert_memory_equal(r.stdin_data, "\x00\xff\n", 3);
		assert_int_equal(r.nenv, 2);
		assert_string_equal(r.env[0], "LANG=C");
		assert_string_equal(r.env[1], "X=a=b");
		assert_string_equal(r.session, "work-1.a_b");
		assert_string_equal(r.phase, "execution");
		assert_int_equal(r.timeout_ms, 86400000);
		client_req_free(&r);
	}
}

static void
test_stdin_forms(void **state)
{
	struct client_req r;
	struct mp_enc m;
	struct error e;

	(void)state;
	/* A str is accepted for clients without bin. */
	call_begin(&m, "invoke", 1);
	enc_kstr(&m, "stdin", "text\n");
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.stdin_len, 5);
	assert_string_equal((char *)r.stdin_data, "text\n");
	client_req_free(&r);
	/* Empty stdin is present, not absent. */
	call_begin(&m, "invoke", 1);
	enc_kbin(&m, "stdin", "", 0);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_non_null(r.stdin_data);
	assert_int_equal(r.stdin_len, 0);
	client_req_free(&r);

	call_begin(&m, "invoke", 1);
	enc_kuint(&m, "stdin", 5);
	assert_bad(dec_req(&m, &r, &e), &e, "\"stdin\" must be binary");
	assert_str_id(&r, "r1");
	client_req_free(&r);
	call_begin(&m, "invoke", 1);
	enc_str(&m, "stdin");
	enc_array(&m, 0);
	assert_bad(dec_req(&m, &r, &e), &e, "\"stdin\"");
	client_req_free(&r);
}

static void
test_bad_sessions(void **state)
{
	char s64[65], s65[66];
	const char *bad[] = {"..", ".", "a/b", "/etc", "../x", "a b", "",
	    "caf\xc3\xa9", "x\ty", NULL};
	struct client_req r;
	struct mp_enc m;
	struct error e;
	size_t i;

	(void)state;
	memset(s64, 's', 64);
	s64[64] = '\0';
	memset(s65, 's', 65);
	s65[65] = '\0';
	for (i = 0; bad[i] != NULL; i++) {
		call_begin(&m, "invoke", 1);
		enc_kstr(&m, "session", bad[i]);
		assert_bad(dec_req(&m, &r, &e), &e, "session");
		assert_str_id(&r, "r1");
		client_req_free(&r);
	}
	call_begin(&m, "invoke", 1);
	enc_kstr(&m, "session", s65);
	assert_bad(dec_req(&m, &r, &e), &e, "\"session\" longer than 64");
	client_req_free(&r);
	call_begin(&m, "invoke", 1);
	enc_kuint(&m, "session", 1);
	assert_bad(dec_req(&m, &r, &e), &e, "\"session\" must be a string");
	client_req_free(&r);

	call_begin(&m, "invoke", 1);
	enc_kstr(&m, "session", s64);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_string_equal(r.session, s64);
	client_req_free(&r);
	call_begin(&m, "authorize", 1);
	enc_kstr(&m, "session", "...");
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_string_equal(r.session, "...");
	client_req_free(&r);
}

static void
test_id_forms(void **state)
{
	char s128[129], s129[130];
	struct client_req r;
	struct mp_enc m;
	struct error e;
	int i;

	(void)state;
	memset(s128, 'i', 128);
	s128[128] = '\0';
	memset(s129, 'i', 129);
	s129[129] = '\0';

	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "hello");
	enc_kuint(&m, "id", 0);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_num_id(&r, 0);
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "hello");
	enc_kstr(&m, "id", s128);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_str_id(&r, s128);
	client_req_free(&r);

	/* Missing id. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_kstr(&m, "type", "hello");
	assert_bad(dec_req(&m, &r, &e), &e, "missing field \"id\"");
	assert_no_id(&r);
	client_req_free(&r);

	/* Ids of the wrong type or size: refused, and no id to echo. */
	for (i = 0; i < 8; i++) {
		enc_init(&m);
		enc_map(&m, 2);
		enc_kstr(&m, "type", "hello");
		enc_str(&m, "id");
		switch (i) {
		case 0:
			enc_nil(&m);
			break;
		case 1:
			enc_bool(&m, 1);
			break;
		case 2:
			enc_int(&m, -1);
			break;
		case 3:
			enc_array(&m, 1);
			enc_uint(&m, 1);
			break;
		case 4:
			enc_map(&m, 0);
			break;
		case 5:
			enc_bin(&m, "ab", 2);
			break;
		case 6:
			enc_str(&m, "");
			break;
		default:
			enc_str(&m, s129);
			break;
		}
		memset(&r, 0x5a, sizeof(r));
		assert_bad(dec_req(&m, &r, &e), &e, "\"id\"");
		assert_no_id(&r);
		client_req_free(&r);
	}
}

/* Once an id is read, any later failure keeps it for the error reply. */
static void
test_id_survives_errors(void **state)
{
	struct client_req r;
	struct mp_enc m;
	struct error e;

	(void)state;
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "frobnicate");
	enc_kuint(&m, "id", 42);
	assert_unsupported(
	    dec_req(&m, &r, &e), &e, "unknown request type \"frobnicate\"");
	assert_num_id(&r, 42);
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 1);
	enc_kuint(&m, "id", 43);
	assert_bad(dec_req(&m, &r, &e), &e, "missing field \"type\"");
	assert_num_id(&r, 43);
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 2);
	enc_kuint(&m, "type", 1);
	enc_kstr(&m, "id", "x");
	assert_bad(dec_req(&m, &r, &e), &e, "\"type\" must be a string");
	assert_str_id(&r, "x");
	client_req_free(&r);

	/* An approve without its approval. */
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "approve");
	enc_kuint(&m, "id", 44);
	assert_bad(dec_req(&m, &r, &e), &e, "missing field \"approval_id\"");
	assert_num_id(&r, 44);
	client_req_free(&r);

	/* An invoke without its skill. */
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "invoke");
	enc_kstr(&m, "id", "y");
	assert_bad(dec_req(&m, &r, &e), &e, "missing field \"skill\"");
	assert_str_id(&r, "y");
	client_req_free(&r);

	/* cancel names its request; hello may say its major and more. */
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "cancel");
	enc_kuint(&m, "id", 45);
	assert_bad(dec_req(&m, &r, &e), &e, "missing field \"request_id\"");
	client_req_free(&r);
	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "cancel");
	enc_kuint(&m, "id", 46);
	enc_kstr(&m, "request_id", "call-7");
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_string_equal(r.rid.str, "call-7");
	client_req_free(&r);
	enc_init(&m);
	enc_map(&m, 4);
	enc_kstr(&m, "type", "hello");
	enc_kuint(&m, "id", 47);
	enc_kuint(&m, "protocol", 2);
	enc_kbool(&m, "approvals", 1);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.protocol, 2);
	assert_int_equal(r.approvals, 1);
	client_req_free(&r);
	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "hello");
	enc_kuint(&m, "id", 48);
	enc_kstr(&m, "protocol", "2");
	assert_bad(dec_req(&m, &r, &e), &e, "protocol");
	client_req_free(&r);

	/* last_result and session_end name a session, "default" if none */
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "last_result");
	enc_kuint(&m, "id", 49);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_string_equal(r.session, "default");
	client_req_free(&r);
	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "session_end");
	enc_kuint(&m, "id", 50);
	enc_kstr(&m, "session", "../etc");
	assert_bad(dec_req(&m, &r, &e), &e, "session must be");
	client_req_free(&r);
	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "session_end");
	enc_kuint(&m, "id", 51);
	enc_kstr(&m, "skill", "x");
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"skill\"");
	client_req_free(&r);
}

static void
test_env(void **state)
{
	struct client_req r;
	struct mp_enc m;
	struct error e;
	char *big;
	size_t i;

	(void)state;
	/* A value that is not a string. */
	call_begin(&m, "invoke", 1);
	enc_str(&m, "env");
	enc_map(&m, 2);
	enc_kstr(&m, "A", "1");
	enc_kuint(&m, "B", 2);
	assert_bad(dec_req(&m, &r, &e), &e, "env entries");
	assert_str_id(&r, "r1");
	client_req_free(&r);
	/* '=' in a name would smuggle a different variable. */
	call_begin(&m, "invoke", 1);
	enc_str(&m, "env");
	enc_map(&m, 1);
	enc_kstr(&m, "A=B", "c");
	assert_bad(dec_req(&m, &r, &e), &e, "env entries");
	client_req_free(&r);
	call_begin(&m, "invoke", 1);
	enc_str(&m, "env");
	enc_map(&m, 1);
	enc_kstr(&m, "=", "c");
	assert_bad(dec_req(&m, &r, &e), &e, "env entries");
	client_req_free(&r);
	/* Not a map at all. */
	call_begin(&m, "invoke", 1);
	enc_kstr(&m, "env", "A=B");
	assert_bad(dec_req(&m, &r, &e), &e, "\"env\" must be a map");
	client_req_free(&r);

	/* 64 entries fit, 65 do not. */
	for (i = 64; i <= 65; i++) {
		size_t j;
		call_begin(&m, "invoke", 1);
		enc_str(&m, "env");
		enc_map(&m, i);
		for (j = 0; j < i; j++) {
			char k[16];
			snprintf(k, sizeof(k), "V%zu", j);
			enc_kstr(&m, k, "v");
		}
		if (i == 64) {
			assert_int_equal(dec_req(&m, &r, &e), 0);
			assert_int_equal(r.nenv, 64);
			assert_string_equal(r.env[63], "V63=v");
			assert_null(r.env[64]);
		} else
			assert_bad(
			    dec_req(&m, &r, &e), &e, "too many env entries");
		client_req_free(&r);
	}

	/* Values up to ARG_MAX_LEN bytes. */
	big = malloc(ARG_MAX_LEN + 2);
	assert_non_null(big);
	memset(big, 'v', ARG_MAX_LEN + 1);
	big[ARG_MAX_LEN + 1] = '\0';
	call_begin(&m, "invoke", 1);
	enc_str(&m, "env");
	enc_map(&m, 1);
	enc_kstr(&m, "BIG", big);
	assert_bad(dec_req(&m, &r, &e), &e, "env entries");
	client_req_free(&r);
	big[ARG_MAX_LEN] = '\0';
	call_begin(&m, "invoke", 1);
	enc_str(&m, "env");
	enc_map(&m, 1);
	enc_kstr(&m, "BIG", big);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(strlen(r.env[0]), 4 + ARG_MAX_LEN);
	client_req_free(&r);
	free(big);

	/* An empty map is no variables. */
	call_begin(&m, "invoke", 1);
	enc_str(&m, "env");
	enc_map(&m, 0);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.nenv, 0);
	client_req_free(&r);
}

static void
test_unknown_field(void **state)
{
	struct client_req r;
	struct mp_enc m;
	struct error e;

	(void)state;
	call_begin(&m, "invoke", 1);
	enc_kuint(&m, "bogus", 1);
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"bogus\"");
	assert_str_id(&r, "r1");
	client_req_free(&r);
	/* Names are case-sensitive. */
	call_begin(&m, "authorize", 1);
	enc_kstr(&m, "Session", "x");
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"Session\"");
	client_req_free(&r);
	/* Internal-only fields cannot be set by a client. */
	call_begin(&m, "invoke", 1);
	enc_kuint(&m, "uid", 0);
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"uid\"");
	client_req_free(&r);
}

static void
test_field_limits(void **state)
{
	char s65[66], s129[130], s33[34], *big;
	struct client_req r;
	struct mp_enc m;
	struct error e;
	size_t i;

	(void)state;
	memset(s65, 'k', 65);
	s65[65] = '\0';
	memset(s129, 'k', 129);
	s129[129] = '\0';
	memset(s33, 'p', 33);
	s33[33] = '\0';

	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "invoke");
	enc_kstr(&m, "id", "r1");
	enc_kstr(&m, "skill", s65);
	assert_bad(dec_req(&m, &r, &e), &e, "\"skill\" longer than 64");
	client_req_free(&r);
	call_begin(&m, "invoke", 1);
	enc_kstr(&m, "command", s129);
	assert_bad(dec_req(&m, &r, &e), &e, "\"command\" longer than 128");
	client_req_free(&r);
	call_begin(&m, "invoke", 1);
	enc_kstr(&m, "phase", s33);
	assert_bad(dec_req(&m, &r, &e), &e, "\"phase\" longer than 32");
	client_req_free(&r);

	call_begin(&m, "invoke", 1);
	enc_kuint(&m, "timeout_ms", 86400001);
	assert_bad(dec_req(&m, &r, &e), &e, "\"timeout_ms\" above");
	client_req_free(&r);
	call_begin(&m, "invoke", 1);
	enc_kint(&m, "timeout_ms", -1);
	assert_bad(dec_req(&m, &r, &e), &e, "\"timeout_ms\" must be");
	client_req_free(&r);

	/* Arguments: 256 fit, 257 do not; items are strings up to 4096. */
	for (i = ARGS_MAX; i <= ARGS_MAX + 1; i++) {
		size_t j;
		call_begin(&m, "invoke", 1);
		enc_str(&m, "args");
		enc_array(&m, i);
		for (j = 0; j < i; j++)
			enc_str(&m, "x");
		if (i == ARGS_MAX) {
			assert_int_equal(dec_req(&m, &r, &e), 0);
			assert_int_equal(r.nargs, ARGS_MAX);
		} else
			assert_bad(dec_req(&m, &r, &e), &e,
			    "\"args\" has more than 256 items");
		client_req_free(&r);
	}
	call_begin(&m, "invoke", 1);
	enc_str(&m, "args");
	enc_array(&m, 2);
	enc_str(&m, "x");
	enc_uint(&m, 1);
	assert_bad(dec_req(&m, &r, &e), &e, "must be an array of strings");
	client_req_free(&r);
	big = malloc(ARG_MAX_LEN + 2);
	assert_non_null(big);
	memset(big, 'a', ARG_MAX_LEN + 1);
	big[ARG_MAX_LEN + 1] = '\0';
	call_begin(&m, "invoke", 1);
	enc_kstrarr(&m, "args", &big, 1);
	assert_bad(dec_req(&m, &r, &e), &e, "longer than 4096");
	client_req_free(&r);
	free(big);
}

static void
assert_same_req(const struct client_req *a, const struct client_req *b)
{
	size_t i;

	assert_int_equal(a->type, b->type);
	assert_int_equal(a->id.is_num, b->id.is_num);
	assert_true(a->id.num == b->id.num);
	if (a->id.str != NULL || b->id.str != NULL)
		assert_string_equal(a->id.str, b->id.str);
	if (a->skill != NULL || b->skill != NULL)
		assert_string_equal(a->skill, b->skill);
	assert_int_equal(a->nargs, b->nargs);
	for (i = 0; i < a->nargs; i++)
		assert_string_equal(a->args[i], b->args[i]);
	assert_int_equal(a->stdin_len, b->stdin_len);
	if (a->stdin_len > 0)
		assert_memory_equal(a->stdin_data, b->stdin_data, a->stdin_len);
	assert_int_equal(a->nenv, b->nenv);
	for (i = 0; i < a->nenv; i++)
		assert_string_equal(a->env[i], b->env[i]);
	assert_int_equal(a->timeout_ms, b->timeout_ms);
	if (a->approval_id != NULL || b->approval_id != NULL)
		assert_string_equal(a->approval_id, b->approval_id);
	assert_int_equal(a->option, b->option);
}

/* Encode, decode, and again: the second pass changes nothing. */
static void
round_trip(const struct client_req *in, struct client_req *out)
{
	struct client_req again;
	struct mp_enc m;
	struct error e;

	enc_init(&m);
	client_req_enc(&m, in);
	if (dec_req(&m, out, &e) != 0)
		fail_msg("decode of encoded request: %s", e.msg);
	assert_same_req(in, out);
	enc_init(&m);
	client_req_enc(&m, out);
	if (dec_req(&m, &again, &e) != 0)
		fail_msg("decode of re-encoded request: %s", e.msg);
	assert_same_req(out, &again);
	if (out->session != NULL)
		assert_string_equal(out->session, again.session);
	if (out->phase != NULL)
		assert_string_equal(out->phase, again.phase);
	if (out->command != NULL)
		assert_string_equal(out->command, again.command);
	client_req_free(&again);
}

static void
test_round_trip(void **state)
{
	static char *args[] = {"one", "two words", "\xc3\xa9"};
	static char *env[] = {"A=1", "PATHISH=/x:/y", "EQ=a=b", "EMPTY="};
	struct client_req in, out;

	(void)state;
	memset(&in, 0, sizeof(in));
	in.type = CREQ_INVOKE;
	in.id.str = "req-1";
	in.skill = "hello";
	in.command = "greet";
	in.args = args;
	in.nargs = 3;
	in.stdin_data = (uint8_t *)"in\x00put";
	in.stdin_len = 6;
	in.env = env;
	in.nenv = 4;
	in.session = "s.1";
	in.phase = "review";
	in.timeout_ms = 1234;
	round_trip(&in, &out);
	assert_string_equal(out.command, "greet");
	assert_string_equal(out.session, "s.1");
	assert_string_equal(out.phase, "review");
	assert_string_equal(out.env[3], "EMPTY=");
	client_req_free(&out);

	/* The minimal authorize: defaults fill in on the far side. */
	memset(&in, 0, sizeof(in));
	in.type = CREQ_AUTHORIZE;
	in.id.is_num = 1;
	in.id.num = 99;
	in.skill = "notes";
	in.command = "";
	round_trip(&in, &out);
	assert_string_equal(out.command, "");
	assert_string_equal(out.session, "default");
	assert_string_equal(out.phase, "planning");
	assert_null(out.stdin_data);
	client_req_free(&out);

	memset(&in, 0, sizeof(in));
	in.type = CREQ_HELLO;
	in.id.is_num = 1;
	in.id.num = 0;
	round_trip(&in, &out);
	client_req_free(&out);

	memset(&in, 0, sizeof(in));
	in.type = CREQ_SKILLS;
	in.id.str = "list";
	round_trip(&in, &out);
	client_req_free(&out);

	memset(&in, 0, sizeof(in));
	in.type = CREQ_APPROVE;
	in.id.str = "a-1";
	in.approval_id = "appr-17";
	in.option = CLIENT_APPROVAL_YES_IN_SESSION;
	round_trip(&in, &out);
	client_req_free(&out);

	memset(&in, 0, sizeof(in));
	in.type = CREQ_APPROVALS;
	in.id.is_num = 1;
	in.id.num = 5;
	round_trip(&in, &out);
	client_req_free(&out);
}

/* {"type": "approve", "id": 1, "approval_id": id, "option": opt}. */
static int
dec_approve(
    const char *id, const char *opt, struct client_req *r, struct error *e)
{
	struct mp_enc m;

	enc_init(&m);
	enc_map(&m, 4);
	enc_kstr(&m, "type", "approve");
	enc_kuint(&m, "id", 1);
	enc_kstr(&m, "approval_id", id);
	enc_kstr(&m, "option", opt);
	return dec_req(&m, r, e);
}

/*
 * approve: an approval id of 1..32 bytes and one of the three options;
 * approvals takes nothing else. Every refusal keeps the id.
 */
static void
test_approve(void **state)
{
	static const char *const opts[] = {"yes_once", "yes_in_session", "no"};
	char id33[34];
	struct client_req r;
	struct mp_enc m;
	struct error e;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(dec_approve("appr-3", opts[i], &r, &e), 0);
		assert_int_equal(r.type, CREQ_APPROVE);
		assert_string_equal(r.approval_id, "appr-3");
		assert_int_equal(r.option, CLIENT_APPROVAL_YES_ONCE + i);
		assert_string_equal(client_approval_name(r.option), opts[i]);
		client_req_free(&r);
	}
	/* Unknown options, "none" (no answer anyone gives) among them. */
	assert_bad(
	    dec_approve("appr-3", "yes", &r, &e), &e, "unknown option \"yes\"");
	assert_num_id(&r, 1);
	client_req_free(&r);
	assert_bad(dec_approve("appr-3", "none", &r, &e), &e, "unknown option");
	client_req_free(&r);
	assert_bad(
	    dec_approve("appr-3", "YES_ONCE", &r, &e), &e, "unknown option");
	client_req_free(&r);
	assert_bad(dec_approve("appr-3", "", &r, &e), &e, "unknown option");
	client_req_free(&r);
	memset(id33, 'o', 33);
	id33[33] = '\0';
	assert_bad(dec_approve("appr-3", id33, &r, &e), &e,
	    "\"option\" longer than 32");
	client_req_free(&r);
	/* The approval id: bounded, not empty, a string. */
	memset(id33, '7', 33);
	assert_bad(dec_approve(id33, "no", &r, &e), &e,
	    "\"approval_id\" longer than 32");
	client_req_free(&r);
	id33[32] = '\0';
	assert_int_equal(dec_approve(id33, "no", &r, &e), 0);
	client_req_free(&r);
	assert_bad(dec_approve("", "no", &r, &e), &e, "must not be empty");
	client_req_free(&r);
	enc_init(&m);
	enc_map(&m, 4);
	enc_kstr(&m, "type", "approve");
	enc_kuint(&m, "id", 2);
	enc_kuint(&m, "approval_id", 17);
	enc_kstr(&m, "option", "no");
	assert_bad(dec_req(&m, &r, &e), &e, "\"approval_id\" must be a string");
	assert_num_id(&r, 2);
	client_req_free(&r);
	/* Nothing else. */
	enc_init(&m);
	enc_map(&m, 5);
	enc_kstr(&m, "type", "approve");
	enc_kuint(&m, "id", 3);
	enc_kstr(&m, "approval_id", "appr-1");
	enc_kstr(&m, "option", "no");
	enc_kstr(&m, "reason", "because");
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"reason\"");
	client_req_free(&r);
	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "approvals");
	enc_kstr(&m, "id", "list");
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_APPROVALS);
	client_req_free(&r);
	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "approvals");
	enc_kstr(&m, "id", "list");
	enc_kuint(&m, "uid", 0);
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"uid\"");
	assert_str_id(&r, "list");
	client_req_free(&r);
	/* The names both ways. */
	assert_int_equal(client_approval_parse("yes_in_session"),
	    CLIENT_APPROVAL_YES_IN_SESSION);
	assert_int_equal(client_approval_parse("none"), CLIENT_APPROVAL_NONE);
	assert_string_equal(client_approval_name(CLIENT_APPROVAL_NONE), "none");
	assert_string_equal(
	    client_approval_name(CLIENT_APPROVAL__COUNT), "none");
	/* Both are served: hello lists them. */
	assert_true(creq_supported(CREQ_APPROVE));
	assert_true(creq_supported(CREQ_APPROVALS));
}

/* skill_info: a skill, and references (a boolean, default false). */
static void
test_skill_info(void **state)
{
	struct client_req r, in, out;
	struct mp_enc m;
	struct error e;

	(void)state;
	call_begin(&m, "skill_info", 0);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_SKILL_INFO);
	assert_string_equal(r.skill, "hello");
	assert_int_equal(r.references, 0);
	assert_str_id(&r, "r1");
	client_req_free(&r);

	call_begin(&m, "skill_info", 1);
	enc_kbool(&m, "references", 1);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.references, 1);
	client_req_free(&r);

	call_begin(&m, "skill_info", 1);
	enc_kstr(&m, "references", "yes");
	assert_bad(dec_req(&m, &r, &e), &e, "\"references\" must be a boolean");
	assert_str_id(&r, "r1");
	client_req_free(&r);

	/* Only its own fields: an invoke's are unknown here. */
	call_begin(&m, "skill_info", 1);
	enc_kstr(&m, "command", "run");
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"command\"");
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 2);
	enc_kstr(&m, "type", "skill_info");
	enc_kstr(&m, "id", "r2");
	assert_bad(dec_req(&m, &r, &e), &e, "missing field \"skill\"");
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "skill_info");
	enc_kstr(&m, "id", "r3");
	enc_kstr(&m, "skill", "");
	assert_bad(dec_req(&m, &r, &e), &e, "\"skill\" must not be empty");
	client_req_free(&r);

	enc_init(&m);
	enc_map(&m, 3);
	enc_kstr(&m, "type", "skill_info");
	enc_kstr(&m, "id", "r4");
	enc_kstr(&m, "skill",
	    "0123456789012345678901234567890123456789012345678901234567890123"
	    "4");
	assert_bad(dec_req(&m, &r, &e), &e, "longer than 64");
	client_req_free(&r);

	memset(&in, 0, sizeof(in));
	in.type = CREQ_SKILL_INFO;
	in.id.str = "info";
	in.skill = "notes";
	in.references = 1;
	round_trip(&in, &out);
	assert_int_equal(out.references, 1);
	client_req_free(&out);
	in.references = 0;
	round_trip(&in, &out);
	assert_int_equal(out.references, 0);
	client_req_free(&out);
}

/* Start {"type": type, "id": "f1", "path": path, ...n more}. */
static void
file_begin(struct mp_enc *m, const char *type, const char *path, size_t nmore)
{
	enc_init(m);
	enc_map(m, 2 + (path != NULL) + nmore);
	enc_kstr(m, "type", type);
	enc_kstr(m, "id", "f1");
	if (path != NULL)
		enc_kstr(m, "path", path);
}

/* Each path a client may not name, and why the answer says so. */
static void
test_file_paths(void **state)
{
	static const struct {
		const char *path;
		const char *why;
	} bad[] = {
	    {"/etc/passwd", "is absolute"},
	    {"../x", "\"..\" component"},
	    {"a/../../x", "\"..\" component"},
	    {"a/..", "\"..\" component"},
	    {"./x", "\".\" or"},
	    {"a/./b", "\".\" or"},
	    {"a//b", "an empty"},
	    {"a/", "an empty"},
	    {"", "1..1024 bytes"},
	};
	char longname[300], deep[3 * 40 + 1];
	struct client_req r;
	struct mp_enc m;
	struct error e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		file_begin(&m, "get_file", bad[i].path, 0);
		assert_bad(dec_req(&m, &r, &e), &e, bad[i].why);
		assert_str_id(&r, "f1");
		client_req_free(&r);
	}
	/* A NUL inside: refused, never cut short at it. */
	assert_int_equal(client_path_check("a\0b", 3, &e), -1);
	assert_non_null(strstr(e.msg, "control character (byte 0x00)"));
	/* A terminal escape a client would plant for the next ls. */
	assert_int_equal(client_path_check("x\x1b[2Jy", 6, &e), -1);
	assert_non_null(strstr(e.msg, "0x1b"));
	assert_int_equal(client_path_check("a\nb", 3, &e), -1);
	assert_int_equal(client_path_check("a\x7f", 2, &e), -1);
	assert_int_equal(client_path_check("caf\xc3\xa9", 5, &e), 0);
	memset(longname, 'n', 256);
	longname[256] = '\0';
	assert_int_equal(client_path_check(longname, 256, &e), -1);
	assert_non_null(strstr(e.msg, "255 bytes"));
	longname[255] = '\0';
	assert_int_equal(client_path_check(longname, 255, &e), 0);
	for (i = 0; i < 33; i++)
		memcpy(deep + 2 * i, "d/", 2);
	deep[2 * 33 - 1] = '\0'; /* 33 components */
	assert_int_equal(client_path_check(deep, strlen(deep), &e), -1);
	assert_non_null(strstr(e.msg, "32 components"));
	deep[2 * 32 - 1] = '\0';
	assert_int_equal(client_path_check(deep, strlen(deep), &e), 0);
	/* Names a skill may well use. */
	assert_int_equal(client_path_check("out/report.v2..txt", 18, &e), 0);
	assert_int_equal(client_path_check("...", 3, &e), 0);
	assert_int_equal(client_path_check(".hidden/x", 9, &e), 0);
}

/* The four file requests, their defaults and their own fields only. */
static void
test_file_requests(void **state)
{
	struct client_req r, in, out;
	struct mp_enc m;
	struct error e;

	(void)state;
	file_begin(&m, "put_file", "in/a.txt", 1);
	enc_kbin(&m, "data", "abc", 3);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_PUT_FILE);
	assert_true(creq_is_file(r.type) && creq_runs(r.type));
	assert_string_equal(r.session, DEFAULT_SESSION);
	assert_string_equal(r.path, "in/a.txt");
	assert_int_equal(r.stdin_len, 3);
	assert_memory_equal(r.stdin_data, "abc", 3);
	assert_true(r.offset == 0);
	assert_null(r.skill); /* the broker names the skill, not the client */
	client_req_free(&r);

	file_begin(&m, "put_file", "a", 0);
	assert_bad(dec_req(&m, &r, &e), &e, "missing field \"data\"");
	client_req_free(&r);

	file_begin(&m, "put_file", "a", 2);
	enc_kbin(&m, "data", "", 0);
	enc_kint(&m, "offset", -1);
	assert_bad(dec_req(&m, &r, &e), &e, "offset");
	client_req_free(&r);

	file_begin(&m, "get_file", "out/b", 3);
	enc_kstr(&m, "session", "s1");
	enc_kuint(&m, "offset", 65536);
	enc_kuint(&m, "length", 100);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_GET_FILE);
	assert_string_equal(r.session, "s1");
	assert_true(r.offset == 65536 && r.length == 100);
	client_req_free(&r);

	/* A field of another file request is unknown here. */
	file_begin(&m, "get_file", "b", 1);
	enc_kbin(&m, "data", "x", 1);
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"data\"");
	client_req_free(&r);
	file_begin(&m, "delete_file", "b", 1);
	enc_kuint(&m, "offset", 1);
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"offset\"");
	client_req_free(&r);
	file_begin(&m, "list_files", "b", 0);
	assert_bad(dec_req(&m, &r, &e), &e, "unknown field \"path\"");
	client_req_free(&r);
	file_begin(&m, "delete_file", NULL, 0);
	assert_bad(dec_req(&m, &r, &e), &e, "missing field \"path\"");
	client_req_free(&r);
	file_begin(&m, "list_files", NULL, 1);
	enc_kstr(&m, "session", "../s");
	assert_bad(dec_req(&m, &r, &e), &e, "session must be");
	client_req_free(&r);

	file_begin(&m, "list_files", NULL, 0);
	assert_int_equal(dec_req(&m, &r, &e), 0);
	assert_int_equal(r.type, CREQ_LIST_FILES);
	assert_null(r.path);
	client_req_free(&r);

	memset(&in, 0, sizeof(in));
	in.type = CREQ_PUT_FILE;
	in.id.num = 7;
	in.id.is_num = 1;
	in.session = "s2";
	in.path = "x/y";
	in.stdin_data = (uint8_t *)"data";
	in.stdin_len = 4;
	in.offset = 12;
	round_trip(&in, &out);
	assert_string_equal(out.path, "x/y");
	assert_string_equal(out.session, "s2");
	assert_int_equal(out.stdin_len, 4);
	assert_true(out.offset == 12);
	client_req_free(&out);
	in.type = CREQ_GET_FILE;
	in.stdin_data = NULL;
	in.stdin_len = 0;
	in.length = 99;
	round_trip(&in, &out);
	assert_true(out.offset == 12 && out.length == 99);
	client_req_free(&out);
}

static void
test_type_names(void **state)
{
	(void)state;
	assert_string_equal(creq_type_name(CREQ_HELLO), "hello");
	assert_string_equal(creq_type_name(CREQ_INVOKE), "invoke");
	assert_string_equal(creq_type_name(CREQ_AUTHORIZE), "authorize");
	assert_string_equal(creq_type_name(CREQ_SKILLS), "skills");
	assert_string_equal(creq_type_name(CREQ_STATS), "stats");
	assert_string_equal(creq_type_name(CREQ_RELOAD), "reload");
	assert_string_equal(creq_type_name(CREQ_SKILL_INFO), "skill_info");
	assert_string_equal(creq_type_name(CREQ_APPROVE), "approve");
	assert_string_equal(creq_type_name(CREQ_APPROVALS), "approvals");
	assert_string_equal(creq_type_name(CREQ_PUT_FILE), "put_file");
	assert_string_equal(creq_type_name(CREQ_GET_FILE), "get_file");
	assert_string_equal(creq_type_name(CREQ_LIST_FILES), "list_files");
	assert_string_equal(creq_type_name(CREQ_DELETE_FILE), "delete_file");
	assert_string_equal(creq_type_name(CREQ__COUNT), "unknown");
	assert_string_equal(creq_type_name((enum creq_type) - 1), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hello_skills_stats),
	    cmocka_unit_test(test_plain_rejects_fields),
	    cmocka_unit_test(test_invoke_defaults),
	    cmocka_unit_test(test_full_call),
	    cmocka_unit_test(test_stdin_forms),
	    cmocka_unit_test(test_bad_sessions),
	    cmocka_unit_test(test_id_forms),
	    cmocka_unit_test(test_id_survives_errors),
	    cmocka_unit_test(test_env),
	    cmocka_unit_test(test_unknown_field),
	    cmocka_unit_test(test_field_limits),
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_skill_info),
	    cmocka_unit_test(test_approve),
	    cmocka_unit_test(test_file_paths),
	    cmocka_unit_test(test_file_requests),
	    cmocka_unit_test(test_type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
