/* test_msg.c: every internal message round-trips and decodes strictly. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../proto/msg.h"

#define GID "0123456789abcdef0123456789abcdef"

typedef int (*decoder)(const struct mp_doc *, struct error *);

static void
decode_enc(const struct mp_enc *m, struct mp_doc *d)
{
	struct error e;

	if (mp_decode(d, (const uint8_t *)m->sb.data, m->sb.size, NULL, &e) !=
	    0)
		fail_msg("mp_decode: %s", e.msg);
}

static void
assert_type(const struct mp_doc *d, enum msg_type t)
{
	struct error e;
	uint64_t got = 0;

	assert_int_equal(msg_type_of(d, &got, &e), 0);
	assert_int_equal(got, t);
}

static void
assert_err(int r, const struct error *e, enum err_type type, const char *needle)
{
	assert_int_equal(r, -1);
	assert_int_equal(e->type, type);
	if (strstr(e->msg, needle) == NULL)
		fail_msg(
		    "error \"%s\" does not mention \"%s\"", e->msg, needle);
}

/* Adapters: decode into a local struct, free it, report the result. */
static int
dec_ready(const struct mp_doc *d, struct error *e)
{
	struct msg_ready r;

	if (msg_ready_dec(d, &r, e) == -1)
		return -1;
	msg_ready_free(&r);
	return 0;
}

static int
dec_authz_req(const struct mp_doc *d, struct error *e)
{
	struct msg_authz_req r;

	if (msg_authz_req_dec(d, &r, e) == -1)
		return -1;
	msg_authz_req_free(&r);
	return 0;
}

static int
dec_authz_ans(const struct mp_doc *d, struct error *e)
{
	struct msg_authz_ans a;

	if (msg_authz_ans_dec(d, &a, e) == -1)
		return -1;
	msg_authz_ans_free(&a);
	return 0;
}

static int
dec_grant(const struct mp_doc *d, struct error *e)
{
	struct grant g;

	if (grant_dec(d, &g, e) == -1)
		return -1;
	grant_free(&g);
	return 0;
}

static int
dec_grant_ack(const struct mp_doc *d, struct error *e)
{
	struct msg_grant_ack a;

	if (msg_grant_ack_dec(d, &a, e) == -1)
		return -1;
	msg_grant_ack_free(&a);
	return 0;
}

static int
dec_run(const struct mp_doc *d, struct error *e)
{
	struct msg_run r;

	if (msg_run_dec(d, &r, e) == -1)
		return -1;
	msg_run_free(&r);
	return 0;
}

static int
dec_run_started(const struct mp_doc *d, struct error *e)
{
	struct msg_run_started r;

	return msg_run_started_dec(d, &r, e);
}

static int
dec_run_exited(const struct mp_doc *d, struct error *e)
{
	struct msg_run_exited r;

	if (msg_run_exited_dec(d, &r, e) == -1)
		return -1;
	msg_run_exited_free(&r);
	return 0;
}

static int
dec_audit_ack(const struct mp_doc *d, struct error *e)
{
	struct msg_audit_ack a;

	if (msg_audit_ack_dec(d, &a, e) == -1)
		return -1;
	msg_audit_ack_free(&a);
	return 0;
}

static int
dec_peer_channel(const struct mp_doc *d, struct error *e)
{
	char *role;

	if (msg_peer_channel_dec(d, &role, e) == -1)
		return -1;
	free(role);
	return 0;
}

static int
dec_ref(const struct mp_doc *d, struct error *e)
{
	uint64_t ref;

	return msg_ref_dec(d, &ref, e);
}

/* Sample messages, valid as encoded. */
static char *sample_args[] = {"--flag", "value with spaces", ""};
static char *sample_env[] = {"LANG=C.UTF-8", "TZ=UTC"};
static char *sample_rules[] = {"allow:hello", "phase:planning"};
static char *sample_read[] = {"/usr/share/dict"};
static char *sample_write[] = {"/tmp/out", "/var/tmp/x"};
static char *sample_net[] = {"example.org:443"};
static char *sample_exec[] = {"/bin/sh"};
static char *sample_envnames[] = {"LANG", "TZ"};

/* An "effective" permissions map: {"network": false, "fs_read": ["/x"]}. */
static void
enc_effective(struct mp_enc *m)
{
	enc_init(m);
	enc_map(m, 2);
	enc_kbool(m, "network", 0);
	enc_str(m, "fs_read");
	enc_array(m, 1);
	enc_str(m, "/x");
}

static void
enc_sample_authz_req(struct mp_enc *m)
{
	struct msg_authz_req r = {
	    .ref = 9,
	    .uid = 1000,
	    .gid = 1000,
	    .pid = 4242,
	    .skill = "hello",
	    .command = "greet",
	    .session = "s1",
	    .phase = "planning",
	    .args = sample_args,
	    .nargs = 3,
	    .env = sample_env,
	    .nenv = 2,
	    .timeout_ms = 5000,
	    .dry_run = 1,
	};

	enc_init(m);
	msg_authz_req_enc(m, &r);
}

static void
enc_sample_authz_ans(struct mp_enc *m, int allowed, uint64_t err)
{
	struct msg_authz_ans a = {
	    .ref = 9,
	    .allowed = allowed,
	    .err = err,
	    .reason = "because",
	    .rules = sample_rules,
	    .nrules = 2,
	    .grant_id = allowed ? GID : NULL,
	    .command = "greet",
	    .timeout_ms = 30000,
	    .output_bytes = 65536,
	};
	struct mp_enc eff;

	enc_effective(&eff);
	a.effective = (uint8_t *)eff.sb.data;
	a.effective_len = eff.sb.size;
	enc_init(m);
	msg_authz_ans_enc(m, &a);
	enc_free(&eff);
}

static struct grant
sample_grant(void)
{
	struct grant g = {
	    .grant_id = GID,
	    .skill = "hello",
	    .command = "greet",
	    .skill_dir = "/var/lib/skillbroker/skills/hello",
	    .entry = "scripts/hello.sh",
	    .args = sample_args,
	    .nargs = 3,
	    .env = sample_env,
	    .nenv = 2,
	    .work_dir = "/tmp/work",
	    .data_dir = "/var/lib/skillbroker/data/hello",
	    .perm = {sample_read, sample_write, sample_net, sample_exec,
	        sample_envnames},
	    .nperm = {1, 2, 1, 1, 2},
	    .principal_uid = 1000,
	    .session = "default",
	    .timeout_ms = 30000,
	    .output_bytes = 1 << 20,
	    .memory_mb = 256,
	    .pids = 64,
	    .fsize_mb = 16,
	    .nofile = 128,
	    .worker_uid = 61000,
	    .worker_gid = 61000,
	};

	return g;
}

static void
enc_sample_grant(struct mp_enc *m)
{
	struct grant g = sample_grant();

	enc_init(m);
	grant_enc(m, &g);
}

static void
enc_sample_run_exited(struct mp_enc *m)
{
	struct msg_run_exited r = {
	    .ref = 3,
	    .started = 1,
	    .exit_code = -1,
	    .signal = 9,
	    .timed_out = 1,
	    .duration_ms = 30001,
	    .cpu_ms = 12,
	    .max_rss_kb = 2048,
	    .err = ERR_TIMEOUT,
	    .message = "killed",
	};

	enc_init(m);
	msg_run_exited_enc(m, &r);
}

static void
test_ready_round_trip(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct msg_ready r;
	struct error e;

	(void)state;
	enc_init(&m);
	msg_ready_enc(&m, "policyd");
	decode_enc(&m, &d);
	assert_type(&d, MSG_READY);
	assert_int_equal(msg_ready_dec(&d, &r, &e), 0);
	assert_int_equal(r.version, PROTO_VERSION);
	assert_string_equal(r.role, "policyd");
	msg_ready_free(&r);
	assert_null(r.role);
	mp_doc_free(&d);
	enc_free(&m);
}

static void
test_authz_req_round_trip(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct msg_authz_req r;
	struct error e;

	(void)state;
	enc_sample_authz_req(&m);
	decode_enc(&m, &d);
	assert_type(&d, MSG_AUTHZ_REQ);
	assert_int_equal(msg_authz_req_dec(&d, &r, &e), 0);
	assert_int_equal(r.ref, 9);
	assert_int_equal(r.uid, 1000);
	assert_int_equal(r.gid, 1000);
	assert_int_equal(r.pid, 4242);
	assert_string_equal(r.skill, "hello");
	assert_string_equal(r.command, "greet");
	assert_string_equal(r.session, "s1");
	assert_string_equal(r.phase, "planning");
	assert_int_equal(r.nargs, 3);
	assert_string_equal(r.args[0], "--flag");
	assert_string_equal(r.args[1], "value with spaces");
	assert_string_equal(r.args[2], "");
	assert_null(r.args[3]);
	assert_int_equal(r.nenv, 2);
	assert_string_equal(r.env[0], "LANG=C.UTF-8");
	assert_string_equal(r.env[1], "TZ=UTC");
	assert_int_equal(r.timeout_ms, 5000);
	assert_int_equal(r.dry_run, 1);
	msg_authz_req_free(&r);
	mp_doc_free(&d);
	enc_free(&m);
}

static void
test_authz_ans_round_trip(void **state)
{
	struct mp_enc m, eff;
	struct mp_doc d;
	struct msg_authz_ans a;
	struct error e;

	(void)state;
	enc_sample_authz_ans(&m, 1, ERR_NONE);
	decode_enc(&m, &d);
	assert_type(&d, MSG_AUTHZ_ANS);
	assert_int_equal(msg_authz_ans_dec(&d, &a, &e), 0);
	assert_int_equal(a.ref, 9);
	assert_int_equal(a.allowed, 1);
	assert_int_equal(a.err, ERR_NONE);
	assert_string_equal(a.reason, "because");
	assert_int_equal(a.nrules, 2);
	assert_string_equal(a.rules[0], "allow:hello");
	assert_string_equal(a.rules[1], "phase:planning");
	assert_string_equal(a.grant_id, GID);
	assert_int_equal(a.timeout_ms, 30000);
	assert_int_equal(a.output_bytes, 65536);
	assert_string_equal(a.command, "greet");
	/* The effective map comes back as the same msgpack bytes. */
	enc_effective(&eff);
	assert_int_equal(a.effective_len, eff.sb.size);
	assert_memory_equal(a.effective, eff.sb.data, eff.sb.size);
	enc_free(&eff);
	msg_authz_ans_free(&a);
	mp_doc_free(&d);
	enc_free(&m);

	/* A denial: no grant id goes over as "". */
	enc_sample_authz_ans(&m, 0, ERR_PHASE_VIOLATION);
	decode_enc(&m, &d);
	assert_int_equal(msg_authz_ans_dec(&d, &a, &e), 0);
	assert_int_equal(a.allowed, 0);
	assert_int_equal(a.err, ERR_PHASE_VIOLATION);
	assert_string_equal(a.grant_id, "");
	msg_authz_ans_free(&a);
	mp_doc_free(&d);
	enc_free(&m);

	/* No effective map and no command: "{}" and "" go over. */
	{
		struct msg_authz_ans b = {
		    .ref = 1,
		    .allowed = 0,
		    .err = ERR_UNKNOWN_SKILL,
		    .reason = "no such skill",
		};
		enc_init(&m);
		msg_authz_ans_enc(&m, &b);
		decode_enc(&m, &d);
		assert_int_equal(msg_authz_ans_dec(&d, &a, &e), 0);
		assert_string_equal(a.command, "");
		assert_int_equal(a.effective_len, 1);
		assert_memory_equal(a.effective, "\x80", 1);
		assert_int_equal(a.nrules, 0);
		msg_authz_ans_free(&a);
		mp_doc_free(&d);
		enc_free(&m);
	}
}

static void
test_grant_round_trip(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct grant g;
	struct error e;

	(void)state;
	enc_sample_grant(&m);
	decode_enc(&m, &d);
	assert_type(&d, MSG_GRANT);
	assert_int_equal(grant_dec(&d, &g, &e), 0);
	assert_string_equal(g.grant_id, GID);
	assert_string_equal(g.skill, "hello");
	assert_string_equal(g.command, "greet");
	assert_string_equal(g.skill_dir, "/var/lib/skillbroker/skills/hello");
	assert_string_equal(g.entry, "scripts/hello.sh");
	assert_int_equal(g.nargs, 3);
	assert_string_equal(g.args[1], "value with spaces");
	assert_int_equal(g.nenv, 2);
	assert_string_equal(g.env[0], "LANG=C.UTF-8");
	assert_string_equal(g.env[1], "TZ=UTC");
	assert_null(g.env[2]);
	assert_string_equal(g.work_dir, "/tmp/work");
	assert_string_equal(g.data_dir, "/var/lib/skillbroker/data/hello");
	assert_int_equal(g.nperm[0], 1);
	assert_string_equal(g.perm[0][0], "/usr/share/dict");
	assert_int_equal(g.nperm[1], 2);
	assert_string_equal(g.perm[1][1], "/var/tmp/x");
	assert_int_equal(g.nperm[2], 1);
	assert_string_equal(g.perm[2][0], "example.org:443");
	assert_int_equal(g.nperm[3], 1);
	assert_string_equal(g.perm[3][0], "/bin/sh");
	assert_int_equal(g.nperm[4], 2);
	assert_string_equal(g.perm[4][1], "TZ");
	assert_int_equal(g.principal_uid, 1000);
	assert_string_equal(g.session, "default");
	assert_int_equal(g.timeout_ms, 30000);
	assert_int_equal(g.output_bytes, 1 << 20);
	assert_int_equal(g.memory_mb, 256);
	assert_int_equal(g.pids, 64);
	assert_int_equal(g.fsize_mb, 16);
	assert_int_equal(g.nofile, 128);
	assert_int_equal(g.worker_uid, 61000);
	assert_int_equal(g.worker_gid, 61000);
	grant_free(&g);
	assert_null(g.grant_id);
	mp_doc_free(&d);
	enc_free(&m);
}

static void
test_small_round_trips(void **state)
{
	struct msg_grant_ack ga = {.grant_id = GID, .ok = 1}, ga2;
	struct msg_run run = {.ref = UINT64_MAX, .grant_id = GID}, run2;
	struct msg_run_started rs = {.ref = 5, .pid = INT32_MAX}, rs2;
	struct msg_audit_ack aa = {.ref = 6, .ok = 0, .message = "disk full"};
	struct msg_audit_ack aa2;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint64_t ref = 0;

	(void)state;
	enc_init(&m);
	msg_grant_ack_enc(&m, &ga);
	decode_enc(&m, &d);
	assert_type(&d, MSG_GRANT_ACK);
	assert_int_equal(msg_grant_ack_dec(&d, &ga2, &e), 0);
	assert_string_equal(ga2.grant_id, GID);
	assert_int_equal(ga2.ok, 1);
	msg_grant_ack_free(&ga2);
	mp_doc_free(&d);
	enc_free(&m);

	enc_init(&m);
	msg_run_enc(&m, &run);
	decode_enc(&m, &d);
	assert_type(&d, MSG_RUN);
	assert_int_equal(msg_run_dec(&d, &run2, &e), 0);
	assert_true(run2.ref == UINT64_MAX);
	assert_string_equal(run2.grant_id, GID);
	msg_run_free(&run2);
	mp_doc_free(&d);
	enc_free(&m);

	enc_init(&m);
	msg_run_started_enc(&m, &rs);
	decode_enc(&m, &d);
	assert_type(&d, MSG_RUN_STARTED);
	assert_int_equal(msg_run_started_dec(&d, &rs2, &e), 0);
	assert_int_equal(rs2.ref, 5);
	assert_int_equal(rs2.pid, INT32_MAX);
	mp_doc_free(&d);
	enc_free(&m);

	enc_init(&m);
	msg_audit_ack_enc(&m, &aa);
	decode_enc(&m, &d);
	assert_type(&d, MSG_AUDIT_ACK);
	assert_int_equal(msg_audit_ack_dec(&d, &aa2, &e), 0);
	assert_int_equal(aa2.ref, 6);
	assert_int_equal(aa2.ok, 0);
	assert_string_equal(aa2.message, "disk full");
	msg_audit_ack_free(&aa2);
	mp_doc_free(&d);
	enc_free(&m);

	/* A NULL message goes over as "". */
	aa.message = NULL;
	aa.ok = 1;
	enc_init(&m);
	msg_audit_ack_enc(&m, &aa);
	decode_enc(&m, &d);
	assert_int_equal(msg_audit_ack_dec(&d, &aa2, &e), 0);
	assert_string_equal(aa2.message, "");
	assert_int_equal(aa2.ok, 1);
	msg_audit_ack_free(&aa2);
	mp_doc_free(&d);
	enc_free(&m);

	enc_init(&m);
	msg_ref_enc(&m, MSG_SKILLS_REQ, 77);
	decode_enc(&m, &d);
	assert_type(&d, MSG_SKILLS_REQ);
	assert_int_equal(msg_ref_dec(&d, &ref, &e), 0);
	assert_int_equal(ref, 77);
	mp_doc_free(&d);
	enc_free(&m);
}

static void
test_run_exited_round_trip(void **state)
{
	struct msg_run_exited r;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;

	(void)state;
	enc_sample_run_exited(&m);
	decode_enc(&m, &d);
	assert_type(&d, MSG_RUN_EXITED);
	assert_int_equal(msg_run_exited_dec(&d, &r, &e), 0);
	assert_int_equal(r.ref, 3);
	assert_int_equal(r.started, 1);
	assert_int_equal(r.exit_code, -1);
	assert_int_equal(r.signal, 9);
	assert_int_equal(r.timed_out, 1);
	assert_int_equal(r.duration_ms, 30001);
	assert_int_equal(r.cpu_ms, 12);
	assert_int_equal(r.max_rss_kb, 2048);
	assert_int_equal(r.err, ERR_TIMEOUT);
	assert_string_equal(r.message, "killed");
	msg_run_exited_free(&r);
	mp_doc_free(&d);
	enc_free(&m);
}

enum mutation { MUT_DROP, MUT_NIL, MUT_WRONG_TYPE, MUT_BAD_ITEM };

static const char *const mut_names[] = {
    "drop", "nil", "wrong type", "non-string item"};

/* A value of a type the field cannot have. */
static void
enc_wrong(struct mp_enc *m, const msgpack_object *v)
{
	switch (v->type) {
	case MSGPACK_OBJECT_STR:
	case MSGPACK_OBJECT_BOOLEAN:
		enc_uint(m, 1);
		break;
	case MSGPACK_OBJECT_ARRAY:
		enc_str(m, "x");
		break;
	default:
		enc_str(m, "1");
		break;
	}
}

/*
 * Re-encode root with entry i mutated; 0 when the mutation does not
 * apply to that field.
 */
static int
mutate(const msgpack_object *root, uint32_t i, enum mutation mu,
    struct mp_enc *out)
{
	const msgpack_object_kv *kv = root->via.map.ptr;
	uint32_t j, n = root->via.map.size;

	if (mu == MUT_BAD_ITEM && kv[i].val.type != MSGPACK_OBJECT_ARRAY)
		return 0;
	enc_init(out);
	enc_map(out, mu == MUT_DROP ? n - 1 : n);
	for (j = 0; j < n; j++) {
		if (j == i && mu == MUT_DROP)
			continue;
		enc_obj(out, &kv[j].key);
		if (j != i) {
			enc_obj(out, &kv[j].val);
			continue;
		}
		switch (mu) {
		case MUT_NIL:
			enc_nil(out);
			break;
		case MUT_WRONG_TYPE:
			enc_wrong(out, &kv[j].val);
			break;
		default:
			enc_array(out, 2);
			enc_str(out, "ok");
			enc_uint(out, 1);
			break;
		}
	}
	return 1;
}

/*
 * The valid message decodes; every field dropped, nulled or retyped makes
 * the decoder fail with bad_request naming the field; an extra field is
 * refused too.
 */
static void
check_strict(const struct mp_enc *valid, decoder dec, const char *what)
{
	struct mp_doc d, d2;
	struct mp_enc m;
	struct error e;
	const msgpack_object_kv *kv;
	char name[80];
	uint32_t i;
	int mu, r;

	decode_enc(valid, &d);
	memset(&e, 0, sizeof(e));
	if (dec(&d, &e) != 0)
		fail_msg("%s: valid sample refused: %s", what, e.msg);
	kv = d.root->via.map.ptr;
	for (i = 0; i < d.root->via.map.size; i++) {
		snprintf(name, sizeof(name), "\"%.*s\"",
		    (int)kv[i].key.via.str.size, kv[i].key.via.str.ptr);
		for (mu = MUT_DROP; mu <= MUT_BAD_ITEM; mu++) {
			if (!mutate(d.root, i, (enum mutation)mu, &m))
				continue;
			decode_enc(&m, &d2);
			memset(&e, 0, sizeof(e));
			if (strcmp(name, "\"t\"") == 0) {
				/* "t" is read by msg_type_of, not the decoder.
				 */
				uint64_t t;
				r = msg_type_of(&d2, &t, &e);
			} else
				r = dec(&d2, &e);
			if (r != -1 || e.type != ERR_BAD_REQUEST ||
			    strstr(e.msg, name) == NULL)
				fail_msg("%s: %s %s: r=%d type=%d \"%s\"", what,
				    mut_names[mu], name, r, e.type, e.msg);
			mp_doc_free(&d2);
			enc_free(&m);
		}
	}
	/* One unknown field. */
	enc_init(&m);
	enc_map(&m, d.root->via.map.size + 1);
	for (i = 0; i < d.root->via.map.size; i++) {
		enc_obj(&m, &kv[i].key);
		enc_obj(&m, &kv[i].val);
	}
	enc_kuint(&m, "bogus", 1);
	decode_enc(&m, &d2);
	memset(&e, 0, sizeof(e));
	r = dec(&d2, &e);
	if (r != -1 || e.type != ERR_BAD_REQUEST ||
	    strstr(e.msg, "unknown field \"bogus\"") == NULL)
		fail_msg("%s: extra field: r=%d \"%s\"", what, r, e.msg);
	mp_doc_free(&d2);
	enc_free(&m);
	mp_doc_free(&d);
}

static void
test_strict_decoders(void **state)
{
	struct msg_grant_ack ga = {.grant_id = GID, .ok = 1};
	struct msg_run run = {.ref = 1, .grant_id = GID};
	struct msg_run_started rs = {.ref = 5, .pid = 77};
	struct msg_audit_ack aa = {.ref = 6, .ok = 1, .message = "ok"};
	struct mp_enc m;

	(void)state;
	enc_init(&m);
	msg_ready_enc(&m, "broker");
	check_strict(&m, dec_ready, "ready");
	enc_free(&m);
	enc_sample_authz_req(&m);
	check_strict(&m, dec_authz_req, "authz_req");
	enc_free(&m);
	enc_sample_authz_ans(&m, 1, ERR_NONE);
	check_strict(&m, dec_authz_ans, "authz_ans");
	enc_free(&m);
	enc_sample_grant(&m);
	check_strict(&m, dec_grant, "grant");
	enc_free(&m);
	enc_init(&m);
	msg_grant_ack_enc(&m, &ga);
	check_strict(&m, dec_grant_ack, "grant_ack");
	enc_free(&m);
	enc_init(&m);
	msg_run_enc(&m, &run);
	check_strict(&m, dec_run, "run");
	enc_free(&m);
	enc_init(&m);
	msg_run_started_enc(&m, &rs);
	check_strict(&m, dec_run_started, "run_started");
	enc_free(&m);
	enc_sample_run_exited(&m);
	check_strict(&m, dec_run_exited, "run_exited");
	enc_free(&m);
	enc_init(&m);
	msg_audit_ack_enc(&m, &aa);
	check_strict(&m, dec_audit_ack, "audit_ack");
	enc_free(&m);
	enc_init(&m);
	msg_ref_enc(&m, MSG_SKILLS_REQ, 1);
	check_strict(&m, dec_ref, "ref");
	enc_free(&m);
	enc_init(&m);
	msg_peer_channel_enc(&m, "auditd");
	check_strict(&m, dec_peer_channel, "peer_channel");
	enc_free(&m);
}

static void
test_peer_channel(void **state)
{
	const char *roles[] = {"policyd", "auditd"};
	const char *bad[] = {"broker", "master", "", "policyd2", "Auditd"};
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	char *role;
	size_t i;

	(void)state;
	for (i = 0; i < 2; i++) {
		enc_init(&m);
		msg_peer_channel_enc(&m, roles[i]);
		decode_enc(&m, &d);
		assert_type(&d, MSG_PEER_CHANNEL);
		assert_int_equal(msg_peer_channel_dec(&d, &role, &e), 0);
		assert_string_equal(role, roles[i]);
		free(role);
		mp_doc_free(&d);
		enc_free(&m);
	}
	/* Only the restartable peers can be handed over. */
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enc_init(&m);
		msg_peer_channel_enc(&m, bad[i]);
		decode_enc(&m, &d);
		role = (char *)"unset";
		assert_err(msg_peer_channel_dec(&d, &role, &e), &e,
		    ERR_INTERNAL, "unknown role");
		assert_null(role);
		mp_doc_free(&d);
		enc_free(&m);
	}
}

/* Encode a grant, decode it, expect "malformed grant". */
static void
expect_bad_grant(const struct grant *g, enum err_type type, const char *needle)
{
	struct mp_enc m;
	struct mp_doc d;
	struct grant out;
	struct error e;

	enc_init(&m);
	grant_enc(&m, g);
	decode_enc(&m, &d);
	memset(&e, 0, sizeof(e));
	assert_err(grant_dec(&d, &out, &e), &e, type, needle);
	/* Nothing is left allocated on failure. */
	assert_null(out.grant_id);
	assert_null(out.skill_dir);
	assert_null(out.args);
	mp_doc_free(&d);
	enc_free(&m);
}

static void
test_grant_rejects(void **state)
{
	struct grant g, out;
	struct mp_enc m, m2;
	struct mp_doc d;
	struct error e;
	uint32_t i;

	(void)state;
	g = sample_grant();
	g.skill_dir = "skills/hello";
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g.skill_dir = "";
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");

	g = sample_grant();
	g.entry = "/bin/sh";
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g.entry = "";
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");

	g = sample_grant();
	g.work_dir = "tmp/work";
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g = sample_grant();
	g.data_dir = "data/hello";
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g.data_dir = NULL; /* encodes as "" */
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");

	g = sample_grant();
	g.grant_id = "0123456789abcdef0123456789abcde"; /* 31 */
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g.grant_id = "0123456789ABCDEF0123456789ABCDEF"; /* upper case */
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g.grant_id = "0123456789abcdef0123456789abcdeg"; /* not hex */
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g.grant_id = "../../../../../../../../etc/pass"; /* 32, a path */
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g.grant_id = "";
	expect_bad_grant(&g, ERR_INTERNAL, "malformed grant");
	g.grant_id = GID "0"; /* 33 */
	expect_bad_grant(&g, ERR_BAD_REQUEST, "\"grant_id\" longer than 32");

	/* Limits on the resource fields. */
	g = sample_grant();
	g.timeout_ms = 86400001;
	expect_bad_grant(&g, ERR_BAD_REQUEST, "\"timeout_ms\" above");
	g = sample_grant();
	g.pids = 65537;
	expect_bad_grant(&g, ERR_BAD_REQUEST, "\"pids\" above");
	g = sample_grant();
	g.worker_uid = (uint64_t)UINT32_MAX + 1;
	expect_bad_grant(&g, ERR_BAD_REQUEST, "\"worker_uid\" above");

	/* A grant from another protocol version. */
	g = sample_grant();
	enc_init(&m);
	grant_enc(&m, &g);
	decode_enc(&m, &d);
	enc_init(&m2);
	enc_map(&m2, d.root->via.map.size);
	for (i = 0; i < d.root->via.map.size; i++) {
		const msgpack_object_kv *kv = &d.root->via.map.ptr[i];
		enc_obj(&m2, &kv->key);
		if (kv->key.via.str.size == 1 && kv->key.via.str.ptr[0] == 'v')
			enc_uint(&m2, PROTO_VERSION + 1);
		else
			enc_obj(&m2, &kv->val);
	}
	mp_doc_free(&d);
	decode_enc(&m2, &d);
	assert_err(
	    grant_dec(&d, &out, &e), &e, ERR_INTERNAL, "malformed grant");
	mp_doc_free(&d);
	enc_free(&m);
	enc_free(&m2);
}

static void
test_authz_ans_consistency(void **state)
{
	struct mp_enc m;
	struct mp_doc d;
	struct msg_authz_ans a;
	struct error e;

	(void)state;
	/* Allowed, yet carrying an error. */
	enc_sample_authz_ans(&m, 1, ERR_PERMISSION_DENIED);
	decode_enc(&m, &d);
	memset(&e, 0, sizeof(e));
	assert_err(msg_authz_ans_dec(&d, &a, &e), &e, ERR_INTERNAL, "disagree");
	assert_null(a.reason);
	assert_null(a.rules);
	mp_doc_free(&d);
	enc_free(&m);
	/* Denied without saying why. */
	enc_sample_authz_ans(&m, 0, ERR_NONE);
	decode_enc(&m, &d);
	assert_err(msg_authz_ans_dec(&d, &a, &e), &e, ERR_INTERNAL, "disagree");
	mp_doc_free(&d);
	enc_free(&m);
	/* An error code past the last known one. */
	enc_sample_authz_ans(&m, 0, ERR__COUNT);
	decode_enc(&m, &d);
	assert_err(msg_authz_ans_dec(&d, &a, &e), &e, ERR_BAD_REQUEST,
	    "\"err\" above");
	mp_doc_free(&d);
	enc_free(&m);
	enc_sample_authz_ans(&m, 0, ERR__COUNT - 1);
	decode_enc(&m, &d);
	assert_int_equal(msg_authz_ans_dec(&d, &a, &e), 0);
	msg_authz_ans_free(&a);
	mp_doc_free(&d);
	enc_free(&m);
}

static void
test_ranges(void **state)
{
	struct msg_authz_req rq;
	struct msg_run_started rs = {.ref = 1, .pid = 0}, rs2;
	struct msg_run_exited rx, rx2;
	struct mp_enc m;
	struct mp_doc d;
	struct error e;
	uint64_t t;

	(void)state;
	/* authz_req: pid must be >= 0, uid/gid 32-bit. */
	{
		struct msg_authz_req r = {
		    .ref = 1,
		    .uid = 1,
		    .gid = 1,
		    .pid = -1,
		    .skill = "s",
		    .command = "c",
		    .session = "x",
		    .phase = "p",
		};
		enc_init(&m);
		msg_authz_req_enc(&m, &r);
		decode_enc(&m, &d);
		assert_err(msg_authz_req_dec(&d, &rq, &e), &e, ERR_BAD_REQUEST,
		    "\"pid\" out of range");
		mp_doc_free(&d);
		enc_free(&m);
		r.pid = 1;
		r.uid = (uint64_t)UINT32_MAX + 1;
		enc_init(&m);
		msg_authz_req_enc(&m, &r);
		decode_enc(&m, &d);
		assert_err(msg_authz_req_dec(&d, &rq, &e), &e, ERR_BAD_REQUEST,
		    "\"uid\" above");
		assert_null(rq.skill);
		mp_doc_free(&d);
		enc_free(&m);
	}

	/* run_started: a pid of 0 is no process. */
	enc_init(&m);
	msg_run_started_enc(&m, &rs);
	decode_enc(&m, &d);
	assert_err(msg_run_started_dec(&d, &rs2, &e), &e, ERR_BAD_REQUEST,
	    "\"pid\" out of range");
	mp_doc_free(&d);
	enc_free(&m);

	/* run_exited: exit codes -1..255, signals 0..128. */
	memset(&rx, 0, sizeof(rx));
	rx.exit_code = -2;
	enc_init(&m);
	msg_run_exited_enc(&m, &rx);
	decode_enc(&m, &d);
	assert_err(msg_run_exited_dec(&d, &rx2, &e), &e, ERR_BAD_REQUEST,
	    "\"exit_code\" out of range");
	mp_doc_free(&d);
	enc_free(&m);
	rx.exit_code = 256;
	enc_init(&m);
	msg_run_exited_enc(&m, &rx);
	decode_enc(&m, &d);
	assert_err(msg_run_exited_dec(&d, &rx2, &e), &e, ERR_BAD_REQUEST,
	    "\"exit_code\" out of range");
	mp_doc_free(&d);
	enc_free(&m);
	rx.exit_code = 255;
	rx.signal = 129;
	enc_init(&m);
	msg_run_exited_enc(&m, &rx);
	decode_enc(&m, &d);
	assert_err(msg_run_exited_dec(&d, &rx2, &e), &e, ERR_BAD_REQUEST,
	    "\"signal\" out of range");
	mp_doc_free(&d);
	enc_free(&m);
	rx.signal = 128;
	enc_init(&m);
	msg_run_exited_enc(&m, &rx);
	decode_enc(&m, &d);
	assert_int_equal(msg_run_exited_dec(&d, &rx2, &e), 0);
	assert_int_equal(rx2.exit_code, 255);
	assert_string_equal(rx2.message, "");
	msg_run_exited_free(&rx2);
	mp_doc_free(&d);
	enc_free(&m);

	/* A type number past 255. */
	enc_init(&m);
	enc_map(&m, 1);
	enc_kuint(&m, "t", 256);
	decode_enc(&m, &d);
	assert_err(msg_type_of(&d, &t, &e), &e, ERR_BAD_REQUEST, "\"t\" above");
	mp_doc_free(&d);
	enc_free(&m);
}

static void
test_grant_id_valid(void **state)
{
	(void)state;
	assert_int_equal(grant_id_valid(GID), 1);
	assert_int_equal(grant_id_valid("ffffffffffffffffffffffffffffffff"), 1);
	assert_int_equal(grant_id_valid(NULL), 0);
	assert_int_equal(grant_id_valid(""), 0);
	assert_int_equal(grant_id_valid("0123456789abcdef0123456789abcde"), 0);
	assert_int_equal(grant_id_valid(GID "0"), 0);
	assert_int_equal(grant_id_valid("0123456789ABCDEF0123456789abcdef"), 0);
	assert_int_equal(grant_id_valid("0123456789abcdef0123456789abcdeg"), 0);
	assert_int_equal(grant_id_valid("0123456789abcdef 123456789abcdef"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ready_round_trip),
	    cmocka_unit_test(test_authz_req_round_trip),
	    cmocka_unit_test(test_authz_ans_round_trip),
	    cmocka_unit_test(test_grant_round_trip),
	    cmocka_unit_test(test_small_round_trips),
	    cmocka_unit_test(test_run_exited_round_trip),
	    cmocka_unit_test(test_strict_decoders),
	    cmocka_unit_test(test_grant_rejects),
	    cmocka_unit_test(test_authz_ans_consistency),
	    cmocka_unit_test(test_ranges),
	    cmocka_unit_test(test_grant_id_valid),
	    cmocka_unit_test(test_peer_channel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
