/* fuzz_msg.c: libFuzzer harness for the internal message decoders. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../proto/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode what an encoder wrote; a failure is a codec asymmetry. */
static void
redecode(struct mp_enc *m, struct mp_doc *d)
{
	struct error e;

	if (mp_decode(d, (const uint8_t *)m->sb.data, m->sb.size, NULL, &e) !=
	    0)
		abort();
}

static void
fuzz_ready(const struct mp_doc *d)
{
	struct msg_ready r, r2;
	struct mp_enc m;
	struct mp_doc d2;
	struct error e;

	if (msg_ready_dec(d, &r, &e) != 0)
		return;
	enc_init(&m);
	msg_ready_enc(&m, r.role);
	redecode(&m, &d2);
	if (msg_ready_dec(&d2, &r2, &e) != 0 || strcmp(r.role, r2.role) != 0)
		abort();
	msg_ready_free(&r2);
	mp_doc_free(&d2);
	enc_free(&m);
	msg_ready_free(&r);
}

static void
fuzz_authz_req(const struct mp_doc *d)
{
	struct msg_authz_req r, r2;
	struct mp_enc m;
	struct mp_doc d2;
	struct error e;
	size_t i;

	if (msg_authz_req_dec(d, &r, &e) != 0)
		return;
	enc_init(&m);
	msg_authz_req_enc(&m, &r);
	redecode(&m, &d2);
	if (msg_authz_req_dec(&d2, &r2, &e) != 0 || r2.ref != r.ref ||
	    r2.pid != r.pid || r2.nargs != r.nargs ||
	    strcmp(r2.skill, r.skill) != 0 || r2.dry_run != r.dry_run)
		abort();
	for (i = 0; i < r.nargs; i++)
		if (strcmp(r.args[i], r2.args[i]) != 0)
			abort();
	msg_authz_req_free(&r2);
	mp_doc_free(&d2);
	enc_free(&m);
	msg_authz_req_free(&r);
}

static void
fuzz_authz_ans(const struct mp_doc *d)
{
	struct msg_authz_ans a, a2;
	struct mp_enc m;
	struct mp_doc d2;
	struct error e;

	if (msg_authz_ans_dec(d, &a, &e) != 0)
		return;
	if (a.allowed != (a.err == ERR_NONE))
		abort();
	enc_init(&m);
	msg_authz_ans_enc(&m, &a);
	redecode(&m, &d2);
	if (msg_authz_ans_dec(&d2, &a2, &e) != 0 || a2.err != a.err ||
	    strcmp(a2.grant_id, a.grant_id) != 0 || a2.nrules != a.nrules ||
	    strcmp(a2.command, a.command) != 0 ||
	    a2.effective_len != a.effective_len ||
	    memcmp(a2.effective, a.effective, a.effective_len) != 0)
		abort();
	msg_authz_ans_free(&a2);
	mp_doc_free(&d2);
	enc_free(&m);
	msg_authz_ans_free(&a);
}

static void
fuzz_grant(const struct mp_doc *d)
{
	struct grant g, g2;
	struct mp_enc m;
	struct mp_doc d2;
	struct error e;

	if (grant_dec(d, &g, &e) != 0)
		return;
	/* What the worker relies on. */
	if (!grant_id_valid(g.grant_id) || g.skill_dir[0] != '/' ||
	    g.work_dir[0] != '/' || g.data_dir[0] != '/' || g.entry[0] == '/' ||
	    g.entry[0] == '\0')
		abort();
	enc_init(&m);
	grant_enc(&m, &g);
	redecode(&m, &d2);
	if (grant_dec(&d2, &g2, &e) != 0 || strcmp(g2.entry, g.entry) != 0 ||
	    g2.nenv != g.nenv || strcmp(g2.data_dir, g.data_dir) != 0 ||
	    g2.nperm[4] != g.nperm[4] || g2.worker_uid != g.worker_uid)
		abort();
	grant_free(&g2);
	mp_doc_free(&d2);
	enc_free(&m);
	grant_free(&g);
}

static void
fuzz_small(const struct mp_doc *d)
{
	struct msg_grant_ack ga;
	struct msg_run run;
	struct msg_run_started rs;
	struct msg_run_exited rx, rx2;
	struct msg_audit_ack aa;
	struct mp_enc m;
	struct mp_doc d2;
	struct error e;
	uint64_t ref;
	char *role;

	if (msg_grant_ack_dec(d, &ga, &e) == 0)
		msg_grant_ack_free(&ga);
	if (msg_run_dec(d, &run, &e) == 0)
		msg_run_free(&run);
	if (msg_run_started_dec(d, &rs, &e) == 0 && rs.pid <= 0)
		abort();
	if (msg_audit_ack_dec(d, &aa, &e) == 0)
		msg_audit_ack_free(&aa);
	(void)msg_ref_dec(d, &ref, &e);
	if (msg_peer_channel_dec(d, &role, &e) == 0) {
		if (strcmp(role, "policyd") != 0 && strcmp(role, "auditd") != 0)
			abort();
		free(role);
	}
	if (msg_run_exited_dec(d, &rx, &e) == 0) {
		enc_init(&m);
		msg_run_exited_enc(&m, &rx);
		redecode(&m, &d2);
		if (msg_run_exited_dec(&d2, &rx2, &e) != 0 ||
		    rx2.exit_code != rx.exit_code || rx2.signal != rx.signal)
			abort();
		msg_run_exited_free(&rx2);
		mp_doc_free(&d2);
		enc_free(&m);
		msg_run_exited_free(&rx);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mp_doc d;
	struct error e;
	uint64_t t;

	if (mp_decode(&d, data, size, NULL, &e) != 0)
		return 0;
	(void)msg_type_of(&d, &t, &e);
	/* Every decoder sees every input: none may trust "t". */
	fuzz_ready(&d);
	fuzz_authz_req(&d);
	fuzz_authz_ans(&d);
	fuzz_grant(&d);
	fuzz_small(&d);
	mp_doc_free(&d);
	return 0;
}
