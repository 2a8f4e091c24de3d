/*
 * broker_audit.c: the records the broker writes about a call, through
 * the one record builder in proto. auditd answers in order; a record's
 * ref is what the call waits for when it must be durable first.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

#define AUDIT_LIST_MAX 64 /* auditd cuts arrays here anyway */
#define EFFECTIVE_DEPTH 4

/* The records calls wait for, in the order sent: a ring. */
struct audit_wait {
	uint64_t aref, cref;
};
static struct audit_wait *waits;
static size_t wait_head, wait_len, wait_cap;

/* The request id as text: clients may send a number or a string. */
static const char *
audit_id(const struct call *c, char *buf, size_t len)
{
	if (!c->cr.id.is_num)
		return c->cr.id.str;
	snprintf(buf, len, "%llu", (unsigned long long)c->cr.id.num);
	return buf;
}

static void
audit_sha(struct mp_enc *m, const char *k, EVP_MD_CTX *ctx)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char hex[2 * EVP_MAX_MD_SIZE + 1];
	unsigned int len = 0;
	EVP_MD_CTX *copy;

	if (ctx == NULL)
		return;
	if ((copy = EVP_MD_CTX_new()) == NULL ||
	    !EVP_MD_CTX_copy_ex(copy, ctx) ||
	    !EVP_DigestFinal_ex(copy, md, &len))
		fatalx("sha256");
	EVP_MD_CTX_free(copy);
	hex_encode(md, len, hex);
	enc_kstr(m, k, hex);
}

/*
 * Nested maps of the effective permissions become dotted keys: key
 * holds the prefix (plen bytes), each name is put after it and a dot.
 */
static void
audit_flatten(struct mp_enc *m, char key[AUDIT_KEY_MAX + 1], size_t plen,
    const msgpack_object *map, int depth)
{
	size_t n;
	uint32_t i;

	for (i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		const msgpack_object *v = &map->via.map.ptr[i].val;
		if (k->type != MSGPACK_OBJECT_STR)
			continue;
		n = plen + 1 + k->via.str.size;
		if (n > AUDIT_KEY_MAX) /* too long a name: left out */
			continue;
		key[plen] = '.';
		memcpy(key + plen + 1, k->via.str.ptr, k->via.str.size);
		key[n] = '\0';
		if (v->type == MSGPACK_OBJECT_MAP) {
			if (depth < EFFECTIVE_DEPTH)
				audit_flatten(m, key, n, v, depth + 1);
			continue;
		}
		enc_keyn(m, key, n);
		enc_obj(m, v);
	}
}

/* policyd's effective permissions and limits (msgpack map bytes). */
static void
audit_effective(struct mp_enc *m, const struct call *c)
{
	char key[AUDIT_KEY_MAX + 1] = "policy.effective";
	struct mp_doc d;
	struct error e;

	if (c->ans.effective == NULL || c->ans.effective_len == 0)
		return;
	/* checked as a part of policyd's answer already: a failure here
	 * would be our own bug, logged, and the record goes without them */
	if (mp_decode(&d, c->ans.effective, c->ans.effective_len, NULL, &e) ==
	    -1) {
		log_warnx("call %llu: effective permissions: %s",
		    (unsigned long long)c->ref, e.msg);
		return;
	}
	audit_flatten(m, key, strlen(key), d.root, 1);
	mp_doc_free(&d);
}

/* The approval this call asked for, as "appr-N". */
static void
audit_approval_id(struct mp_enc *m, const struct call *c)
{
	char id[32];

	approval_id_fmt(c->appr, id, sizeof(id));
	enc_kstr(m, "approval.id", id);
}

/*
 * Where a matched rule's "FILE:LINE NAME" (policyd's form) splits: the
 * space after the file (whose name ends in .yaml) and its line; 0 for a
 * built-in gate ("builtin:phase"), which has no file.
 */
static size_t
audit_rule_split(const char *s)
{
	const char *p = s, *d;

	while ((p = strstr(p, ".yaml:")) != NULL) {
		for (d = p + 6; *d >= '0' && *d <= '9'; d++)
			;
		if (d > p + 6 && *d == ' ')
			return (size_t)(d - s);
		p += 6;
	}
	return 0;
}

/*
 * The matched rules in ECS's rule fields, parallel arrays: rule.name the
 * rule's name, rule.id where it is (FILE:LINE, unique in the policy),
 * rule.ruleset its file; a built-in gate is all three ("builtin:phase",
 * "builtin:phase", "builtin").
 */
static void
audit_rules(struct mp_enc *m, const struct call *c)
{
	char **name, **id, **set, *colon;
	size_t i, n = c->ans.nrules, at;

	name = xcalloc(n + 1, sizeof(*name));
	id = xcalloc(n + 1, sizeof(*id));
	set = xcalloc(n + 1, sizeof(*set));
	for (i = 0; i < n; i++) {
		if ((at = audit_rule_split(c->ans.rules[i])) == 0) {
			name[i] = xstrdup(c->ans.rules[i]);
			id[i] = xstrdup(c->ans.rules[i]);
			set[i] = xstrdup("builtin");
			continue;
		}
		name[i] = xstrdup(c->ans.rules[i] + at + 1);
		id[i] = xstrndup(c->ans.rules[i], at);
		set[i] = xstrdup(id[i]);
		if ((colon = strrchr(set[i], ':')) != NULL)
			*colon = '\0';
	}
	enc_kstrarr(m, "rule.name", name, n);
	enc_kstrarr(m, "rule.id", id, n);
	enc_kstrarr(m, "rule.ruleset", set, n);
	strarr_free(name, n);
	strarr_free(id, n);
	strarr_free(set, n);
}

/*
 * A decision; one a human approved says which approval, and whether the
 * session remembered it (no approval asked this time). error only for a
 * refusal (ECS: error describes a failure).
 */
static void
audit_decision(struct mp_enc *m, const struct call *c)
{
	audit_rules(m, c);
	enc_kstr(m, "event.reason", c->ans.reason);
	if (c->ans.err != ERR_NONE)
		enc_kstr(
		    m, "error.type", err_type_name((enum err_type)c->ans.err));
	enc_kbool(m, "policy.dry_run", c->cr.type == CREQ_AUTHORIZE);
	audit_effective(m, c);
	if (!c->approved)
		return;
	if (c->appr != 0)
		audit_approval_id(m, c);
	enc_kstr(m, "approval.option", client_approval_name(c->appr_option));
	enc_kbool(m, "approval.remembered", c->appr_remembered);
}

/* A human is asked: under which id, about what, for how long. */
static void
audit_approval_requested(struct mp_enc *m, const struct call *c)
{
	audit_approval_id(m, c);
	enc_kuint(m, "approval.timeout_ms", B->clients.approval_s * 1000);
	audit_rules(m, c);
	enc_kstr(m, "event.reason", c->ans.reason);
	audit_effective(m, c);
}

/* The answer: the option, who gave it (or timeout, or cancelled). */
static void
audit_approval_answered(struct mp_enc *m, const struct call *c)
{
	int someone = strcmp(c->appr_by, "client") == 0 ||
	              strcmp(c->appr_by, "admin") == 0;

	audit_approval_id(m, c);
	enc_kstr(m, "approval.option", client_approval_name(c->appr_option));
	enc_kstr(m, "approval.by", c->appr_by);
	if (someone) {
		enc_kuintstr(m, "approval.by_uid", c->appr_by_uid);
		enc_kbool(m, "approval.by_admin", c->appr_by_admin);
	} else if (strcmp(c->appr_by, "cancelled") == 0)
		enc_kstr(m, "event.reason", c->errmsg);
	enc_kint(m, "event.duration",
	    (int64_t)(now_mono_ms() - c->appr_ms) * 1000000);
}

/* Which limits the call ran into, by their names in the limits block. */
static void
audit_limits_hit(struct mp_enc *m, const struct call *c)
{
	char *hit[2];
	size_t n = 0;

	if (c->x.limit != LIMIT_NONE)
		hit[n++] = (char *)limit_kind_name((enum limit_kind)c->x.limit);
	if (c->run.out.total + c->run.err.total > c->ans.output_bytes)
		hit[n++] = "output_bytes";
	enc_kstrarr(m, "limits.hit", hit, n);
}

/* The files the call wrote, as parallel arrays (one record, flat). */
static void
audit_files(struct mp_enc *m, const struct call *c)
{
	size_t i, n = c->files.nfiles < AUDIT_LIST_MAX ? c->files.nfiles
	                                               : AUDIT_LIST_MAX;

	enc_kint(m, "files_written.count", (int64_t)c->files.found);
	enc_key(m, "files_written.path");
	enc_array(m, n);
	for (i = 0; i < n; i++)
		enc_str(m, c->files.files[i].path);
	enc_key(m, "files_written.size_bytes");
	enc_array(m, n);
	for (i = 0; i < n; i++)
		enc_uint(m, c->files.files[i].size);
	enc_key(m, "files_written.sha256");
	enc_array(m, n);
	for (i = 0; i < n; i++)
		enc_str(m, c->files.files[i].sha256);
}

/*
 * How a call ended. One whose skill never started (denied, refused,
 * cancelled before it ran) has only its error and how long it took since
 * invoke.received; one that ran has what its skill did as well (skill.*:
 * process.* is the client's). error only when the call failed.
 */
static void
audit_completion(struct mp_enc *m, const struct call *c)
{
	const struct run *r = &c->run;

	if (c->err != ERR_NONE) {
		enc_kstr(m, "error.type", err_type_name(c->err));
		enc_kstr(m, "error.message", c->errmsg);
	}
	if (!c->ran) {
		enc_kint(m, "event.duration",
		    (int64_t)(now_mono_ms() - c->t0_ms) * 1000000);
		return;
	}
	enc_kint(m, "skill.exit_code", c->x.exit_code);
	enc_kint(m, "skill.signal", c->x.signal);
	enc_kint(m, "event.duration", (int64_t)c->x.duration_ms * 1000000);
	enc_kint(m, "output.stdout_bytes", (int64_t)r->out.total);
	enc_kint(m, "output.stderr_bytes", (int64_t)r->err.total);
	enc_kbool(m, "output.truncated",
	    r->out.total + r->err.total > c->ans.output_bytes);
	audit_sha(m, "output.stdout_sha256", r->out.sha);
	audit_sha(m, "output.stderr_sha256", r->err.sha);
	enc_kint(m, "worker.cpu_ms", (int64_t)c->x.cpu_ms);
	enc_kint(m, "worker.max_rss_kb", (int64_t)c->x.max_rss_kb);
	enc_kbool(m, "worker.timed_out", c->x.limit == LIMIT_TIMEOUT);
	audit_limits_hit(m, c);
	audit_files(m, c);
}

/* Send one record about c; its ref, or 0 when auditd is gone. */
uint64_t
audit_call(const struct call *c, const char *action, const char *type,
    const char *outcome)
{
	struct audit_call who;
	struct mp_enc m;
	char idbuf[24];

	if (!B->auditd.alive)
		return 0;
	memset(&who, 0, sizeof(who));
	who.request_id = audit_id(c, idbuf, sizeof(idbuf));
	who.uid = c->uid;
	who.gid = c->gid;
	who.pid = c->pid;
	who.session = c->cr.session;
	who.skill = c->cr.skill;
	who.command = c->cr.command;
	who.phase = c->cr.phase;
	who.grant_id = c->ans.grant_id;
	enc_init(&m);
	msg_audit_begin(&m, ++B->audit_sent, action, type, outcome);
	msg_audit_call(&m, &who);
	if (strcmp(action, "invoke.received") == 0) {
		enc_kstrarr(&m, "skill.args", c->cr.args,
		    c->cr.nargs < AUDIT_LIST_MAX ? c->cr.nargs
		                                 : AUDIT_LIST_MAX);
		enc_kint(&m, "skill.args_count", (int64_t)c->cr.nargs);
	} else if (strcmp(action, "policy.decision") == 0)
		audit_decision(&m, c);
	else if (strcmp(action, "approval.requested") == 0)
		audit_approval_requested(&m, c);
	else if (strcmp(action, "approval.answered") == 0)
		audit_approval_answered(&m, c);
	else if (strcmp(action, "invoke.completed") == 0)
		audit_completion(&m, c);
	/* Only the decision gates anything (a reply, RUN): the others ride
	 * on its commit, or a later one (docs/audit.md, "Durability"). */
	if (strcmp(action, "policy.decision") == 0)
		msg_audit_end(&m);
	else
		msg_audit_end_lazy(&m);
	peer_send(&B->auditd, &m, NULL, 0);
	enc_free(&m);
	return B->audit_sent;
}

/* auditd acknowledges each record, in order: only the next one. */
int
audit_ack_check(const struct msg_audit_ack *a)
{
	if (a->ref != B->audit_acked + 1 || a->ref > B->audit_sent)
		return -1;
	B->audit_acked = a->ref;
	if (!a->ok)
		log_warnx("audit record not written: %s", a->message);
	return 0;
}

/* A restarted auditd owes nothing for the records its predecessor had. */
void
audit_restarted(void)
{
	B->audit_acked = B->audit_sent;
	audit_wait_clear();
}

/* No call is left: nothing waits for any ack; the ring goes. */
void
audit_wait_clear(void)
{
	free(waits);
	waits = NULL;
	wait_head = wait_len = wait_cap = 0;
}

/* At the ring's end, which grows (its oldest first again) when full. */
void
audit_wait_push(uint64_t aref, uint64_t cref)
{
	struct audit_wait *n;
	size_t i, cap;

	if (wait_len == wait_cap) { /* grow, the oldest first again */
		cap = wait_cap ? 2 * wait_cap : 64;
		n = xcalloc(cap, sizeof(*n));
		for (i = 0; i < wait_len; i++)
			n[i] = waits[(wait_head + i) % wait_cap];
		free(waits);
		waits = n;
		wait_cap = cap;
		wait_head = 0;
	}
	waits[(wait_head + wait_len++) % wait_cap] =
	    (struct audit_wait){aref, cref};
}

/*
 * Acks come in order, so the record acked now is at the front, after
 * any whose waits a restarted auditd dropped. An empty ring is freed.
 */
int
audit_wait_take(uint64_t aref, uint64_t *cref)
{
	int found = 0;

	while (wait_len > 0 && waits[wait_head].aref <= aref) {
		found = waits[wait_head].aref == aref;
		*cref = waits[wait_head].cref;
		wait_head = (wait_head + 1) % wait_cap;
		wait_len--;
		if (found)
			break;
	}
	if (wait_len == 0)
		audit_wait_clear();
	return found;
}
