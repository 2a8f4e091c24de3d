/*
 * broker_audit.c: the broker's audit records. auditd answers in order;
 * the decision record of an invoke must be acknowledged (durable)
 * before the broker may ask the master to run anything.
 */
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

#define AUDIT_ARGS_MAX 64 /* auditd cuts arrays here anyway */
#define AUDIT_KEY_MAX 64  /* auditd's bound on a key */
#define EFFECTIVE_DEPTH 4

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

static void
ab_strarr(struct abuild *a, const char *k, char *const *v, size_t n)
{
	enc_kstrarr(&a->body, k, v, n);
	a->n++;
}

/* What every record of a request says: who, what, which call. */
static void
ab_request(struct abuild *a, const struct request *r)
{
	ab_id(a, &r->cr.id);
	ab_uidstr(a, "user.id", r->uid); /* ECS: ids are keywords */
	ab_uidstr(a, "group.id", r->gid);
	ab_int(a, "process.pid", r->pid);
	ab_str(a, "session.id", r->cr.session);
	ab_str(a, "skill.name", r->cr.skill);
	ab_str(a, "skill.command", r->cr.command);
	ab_str(a, "skill.phase", r->cr.phase);
}

/* The call's arguments (the first AUDIT_ARGS_MAX) and their count. */
static void
ab_args(struct abuild *a, const struct request *r)
{
	ab_strarr(a, "skill.args", r->cr.args,
	    r->cr.nargs < AUDIT_ARGS_MAX ? r->cr.nargs : AUDIT_ARGS_MAX);
	ab_int(a, "skill.args_count", (int64_t)r->cr.nargs);
}

/* Nested maps of the effective permissions become dotted keys. */
static void
ab_flatten(
    struct abuild *a, const char *prefix, const msgpack_object *map, int depth)
{
	char key[AUDIT_KEY_MAX + 1];
	uint32_t i;
	int n;

	for (i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		const msgpack_object *v = &map->via.map.ptr[i].val;
		if (k->type != MSGPACK_OBJECT_STR)
			continue;
		n = snprintf(key, sizeof(key), "%s.%.*s", prefix,
		    (int)k->via.str.size, k->via.str.ptr);
		if (n < 0 || (size_t)n >= sizeof(key))
			continue;
		if (v->type == MSGPACK_OBJECT_MAP) {
			if (depth < EFFECTIVE_DEPTH)
				ab_flatten(a, key, v, depth + 1);
			continue;
		}
		enc_str(&a->body, key);
		enc_obj(&a->body, v);
		a->n++;
	}
}

/* policyd's effective permissions and limits (msgpack map bytes). */
static void
ab_effective(struct abuild *a, const struct request *r)
{
	msgpack_unpacked up;
	size_t off = 0;

	if (r->ans.effective == NULL || r->ans.effective_len == 0)
		return;
	msgpack_unpacked_init(&up);
	if (msgpack_unpack_next(&up, (const char *)r->ans.effective,
	        r->ans.effective_len, &off) == MSGPACK_UNPACK_SUCCESS &&
	    up.data.type == MSGPACK_OBJECT_MAP)
		ab_flatten(a, "policy.effective", &up.data, 1);
	msgpack_unpacked_destroy(&up);
}

static void
ab_decision(struct abuild *a, const struct request *r)
{
	ab_strarr(a, "rule.name", r->ans.rules, r->ans.nrules);
	ab_str(a, "event.reason", r->ans.reason);
	ab_str(a, "error.type", err_type_name((enum err_type)r->ans.err));
	ab_bool(a, "policy.dry_run", r->cr.type == CREQ_AUTHORIZE);
	if (r->ans.grant_id && *r->ans.grant_id)
		ab_str(a, "grant.id", r->ans.grant_id);
	ab_effective(a, r);
}

/* Which limits the call ran into, by their names in the limits block. */
static void
ab_limits_hit(struct abuild *a, const struct request *r)
{
	char *hit[4], *msg = r->x.message ? r->x.message : "";
	size_t n = 0;

	if (r->x.timed_out)
		hit[n++] = "timeout_ms";
	if (r->x.err == ERR_RESOURCE_LIMIT) {
		/* The master's words for each limit (worker_result). */
		if (r->x.signal == SIGXCPU)
			hit[n++] = "cpu";
		else if (r->x.signal == SIGXFSZ)
			hit[n++] = "fsize_mb";
		else if (strstr(msg, "memory") != NULL)
			hit[n++] = "memory_mb";
		else if (strstr(msg, "process") != NULL)
			hit[n++] = "pids";
	}
	if (r->out.total + r->err.total > r->ans.output_bytes)
		hit[n++] = "output_bytes";
	ab_strarr(a, "limits.hit", hit, n);
}

/* The files the call wrote, as parallel arrays (one record, flat). */
static void
ab_files(struct abuild *a, const struct request *r)
{
	size_t i,
	    n = r->x.nfiles < AUDIT_ARGS_MAX ? r->x.nfiles : AUDIT_ARGS_MAX;

	ab_int(a, "files_written.count", (int64_t)r->x.nfiles);
	enc_str(&a->body, "files_written.path");
	enc_array(&a->body, n);
	for (i = 0; i < n; i++) /* bin: auditd escapes what is not UTF-8 */
		enc_bin(
		    &a->body, r->x.files[i].path, strlen(r->x.files[i].path));
	enc_str(&a->body, "files_written.size_bytes");
	enc_array(&a->body, n);
	for (i = 0; i < n; i++)
		enc_uint(&a->body, r->x.files[i].size);
	enc_str(&a->body, "files_written.sha256");
	enc_array(&a->body, n);
	for (i = 0; i < n; i++)
		enc_str(&a->body, r->x.files[i].sha256);
	a->n += 3;
}

static void
ab_completion(struct abuild *a, const struct request *r)
{
	ab_int(a, "process.exit_code", r->x.exit_code);
	ab_int(a, "process.signal", r->x.signal);
	ab_int(a, "event.duration", (int64_t)r->x.duration_ms * 1000000);
	ab_str(a, "error.type", err_type_name((enum err_type)r->x.err));
	ab_str(a, "error.message", r->x.message);
	ab_int(a, "output.stdout_bytes", (int64_t)r->out.total);
	ab_int(a, "output.stderr_bytes", (int64_t)r->err.total);
	ab_bool(a, "output.truncated",
	    r->out.total + r->err.total > r->ans.output_bytes);
	if (r->out.sha)
		ab_sha(a, "output.stdout_sha256", r->out.sha);
	if (r->err.sha)
		ab_sha(a, "output.stderr_sha256", r->err.sha);
	ab_int(a, "worker.cpu_ms", (int64_t)r->x.cpu_ms);
	ab_int(a, "worker.max_rss_kb", (int64_t)r->x.max_rss_kb);
	ab_bool(a, "worker.timed_out", r->x.timed_out);
	ab_limits_hit(a, r);
	ab_files(a, r);
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
	if (strcmp(action, "invoke.received") == 0)
		ab_args(&a, r);
	else if (strcmp(action, "policy.decision") == 0)
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
