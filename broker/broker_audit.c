/*
 * broker_audit.c: the broker's audit records. auditd answers in order;
 * the decision record of an invoke must be acknowledged (durable)
 * before the broker may ask the master to run anything.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

#define AUDIT_FIELDS_MAX 32

/* Fields are packed into body while n counts them, then framed. */
struct abuild {
	struct mp_enc body;
	size_t n;
};

static void
ab_str(struct abuild *a, const char *k, const char *v)
{
	enc_kstr(&a->body, k, v ? v : "");
	a->n++;
}

static void
ab_int(struct abuild *a, const char *k, int64_t v)
{
	enc_kint(&a->body, k, v);
	a->n++;
}

static void
ab_bool(struct abuild *a, const char *k, int v)
{
	enc_kbool(&a->body, k, v);
	a->n++;
}

static void
ab_uidstr(struct abuild *a, const char *k, uint64_t v)
{
	enc_kuintstr(&a->body, k, v);
	a->n++;
}

static void
ab_id(struct abuild *a, const struct client_id *id)
{
	char buf[32];

	if (id->is_num) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)id->num);
		ab_str(a, "request.id", buf);
	} else
		ab_str(a, "request.id", id->str);
}

static void
ab_sha(struct abuild *a, const char *k, EVP_MD_CTX *ctx)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	unsigned int len = 0;
	EVP_MD_CTX *copy = EVP_MD_CTX_new();

	if (copy == NULL || !EVP_MD_CTX_copy_ex(copy, ctx) ||
	    !EVP_DigestFinal_ex(copy, md, &len))
		fatalx("sha256");
	EVP_MD_CTX_free(copy);
	hex_encode(md, len, hex);
	ab_str(a, k, hex);
}

/* What every record of a request says: who, what, which call. */
static void
ab_request(struct abuild *a, const struct request *r)
{
	ab_id(a, &r->cr.id);
	ab_uidstr(a, "user.id", r->uid);  /* ECS: ids are keywords */
	ab_uidstr(a, "group.id", r->gid);
	ab_int(a, "process.pid", r->pid);
	ab_str(a, "session.id", r->cr.session);
	ab_str(a, "skill.name", r->cr.skill);
	ab_str(a, "skill.command", r->cr.command);
	ab_str(a, "skill.phase", r->cr.phase);
}

static void
ab_decision(struct abuild *a, const struct request *r)
{
	size_t i, off = 0;
	char rules[512];

	rules[0] = '\0';
	for (i = 0; i < r->ans.nrules && off < sizeof(rules); i++)
		off += (size_t)snprintf(rules + off, sizeof(rules) - off,
		    "%s%s", i ? ", " : "", r->ans.rules[i]);
	ab_str(a, "rule.name", rules);
	ab_str(a, "event.reason", r->ans.reason);
	ab_str(a, "error.type", err_type_name((enum err_type)r->ans.err));
	ab_bool(a, "policy.dry_run", r->cr.type == CREQ_AUTHORIZE);
	if (r->ans.grant_id && *r->ans.grant_id)
		ab_str(a, "grant.id", r->ans.grant_id);
}

static void
ab_completion(struct abuild *a, const struct request *r)
{
	ab_int(a, "process.exit_code", r->x.exit_code);
	ab_int(a, "process.signal", r->x.signal);
	ab_int(a, "event.duration", (int64_t)r->x.duration_ms * 1000000);
	ab_str(a, "error.type", err_type_name((enum err_type)r->x.err));
	ab_int(a, "output.stdout_bytes", (int64_t)r->out.total);
	ab_int(a, "output.stderr_bytes", (int64_t)r->err.total);
	if (r->out.sha)
		ab_sha(a, "output.stdout_sha256", r->out.sha);
	if (r->err.sha)
		ab_sha(a, "output.stderr_sha256", r->err.sha);
}

/* Send one record about r; returns its audit ref (0 if auditd is gone). */
uint64_t
audit_request(struct request *r, const char *action, const char *type,
    const char *outcome)
{
	struct abuild a;
	struct mp_enc m;
	uint64_t ref;

	if (!B->auditd.alive)
		return 0;
	enc_init(&a.body);
	a.n = 0;
	ab_str(&a, "event.action", action);
	ab_str(&a, "event.type", type);
	ab_str(&a, "event.outcome", outcome);
	ab_request(&a, r);
	if (strcmp(action, "policy.decision") == 0)
		ab_decision(&a, r);
	else if (strcmp(action, "invoke.completed") == 0)
		ab_completion(&a, r);
	ref = ++B->audit_sent;
	enc_init(&m);
	msg_begin(&m, MSG_AUDIT, 2);
	enc_kuint(&m, "ref", ref);
	enc_str(&m, "event");
	enc_map(&m, a.n);
	if (msgpack_sbuffer_write(&m.sb, a.body.sb.data, a.body.sb.size))
		fatalx("audit encode");
	peer_send(&B->auditd, &m, NULL, 0);
	enc_free(&m);
	enc_free(&a.body);
	return ref;
}

int
audit_on_ack(struct peer *p, const struct mp_doc *d)
{
	struct msg_audit_ack a;
	struct request *r, *next;
	struct error e;

	(void)p;
	if (msg_audit_ack_dec(d, &a, &e) == -1 || a.ref <= B->audit_acked ||
	    a.ref > B->audit_sent) {
		msg_audit_ack_free(&a);
		return -1;
	}
	B->audit_acked = a.ref;
	if (!a.ok)
		log_warnx("audit record not written: %s", a.message);
	for (r = LIST_FIRST(&B->requests); r != NULL; r = next) {
		next = LIST_NEXT(r, entry);
		if (r->st == R_AUDIT_DECISION && r->audit_ref == a.ref) {
			request_decision_durable(r, a.ok, a.message);
			break;
		}
	}
	msg_audit_ack_free(&a);
	return 0;
}
