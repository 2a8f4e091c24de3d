/*
 * msg_audit.c: records for auditd (AUDIT, AUDIT_ACK) and the policy
 * loads policyd reports for the log (POLICY_EVENT). This is the one
 * builder of audit records: the broker and the master both write their
 * events through msg_audit_begin / msg_audit_call / msg_audit_end.
 */
#include "msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

/*
 * The ECS event.category of an action, by its first words; each goes
 * with the event.type its senders give (docs/audit.md, "Actions").
 */
static const char *
msg_audit_category(const char *action)
{
	static const struct {
		const char *prefix, *category;
	} cats[] = {
	    {"invoke.", "api"},
	    {"approval.", "api"},
	    {"policy.decision", "api"},
	    {"policy.", "configuration"},
	    {"worker.", "process"},
	    {"daemon.", "process"},
	    {"child.", "process"},
	    {"network.", "network"},
	};
	size_t i;

	for (i = 0; i < sizeof(cats) / sizeof(cats[0]); i++)
		if (strncmp(action, cats[i].prefix, strlen(cats[i].prefix)) ==
		    0)
			return cats[i].category;
	return NULL;
}

void
msg_audit_begin(struct mp_enc *m, uint64_t ref, const char *action,
    const char *type, const char *outcome)
{
	char *cat = (char *)msg_audit_category(action);

	msg_begin(m, MSG_AUDIT);
	enc_kuint(m, "ref", ref);
	enc_key(m, "event");
	enc_map_open(m);
	if (cat != NULL)
		enc_kstrarr(m, "event.category", &cat, 1);
	enc_kstr(m, "event.action", action);
	enc_kstr(m, "event.type", type);
	enc_kstr(m, "event.outcome", outcome);
}

void
msg_audit_end(struct mp_enc *m)
{
	enc_map_close(m);
	msg_end(m);
}

/* A record nobody waits for: its sync may wait for the next commit. */
void
msg_audit_end_lazy(struct mp_enc *m)
{
	enc_map_close(m);
	enc_kbool(m, "lazy", 1);
	msg_end(m);
}

void
msg_audit_call(struct mp_enc *m, const struct audit_call *c)
{
	if (c->request_id != NULL)
		enc_kstr(m, "request.id", c->request_id);
	enc_kuintstr(m, "user.id", c->uid); /* ECS: ids are keywords */
	if (c->gid >= 0)
		enc_kuintstr(m, "group.id", (uint64_t)c->gid);
	if (c->pid >= 0)
		enc_kint(m, "process.pid", c->pid);
	enc_kstr(m, "session.id", c->session);
	enc_kstr(m, "skill.name", c->skill);
	enc_kstr(m, "skill.command", c->command);
	if (c->phase != NULL)
		enc_kstr(m, "skill.phase", c->phase);
	if (c->grant_id != NULL && *c->grant_id != '\0')
		enc_kstr(m, "grant.id", c->grant_id);
}

/* daemon.started (reason NULL: config names the file) or daemon.stopping. */
void
msg_audit_daemon(struct mp_enc *m, uint64_t ref, const char *action,
    int64_t pid, const char *config, const char *reason)
{
	msg_audit_begin(m, ref, action,
	    strcmp(action, "daemon.started") == 0 ? "start" : "end", "success");
	enc_kstr(m, "process.name", "skillbrokerd");
	enc_kint(m, "process.pid", pid);
	if (reason != NULL)
		enc_kstr(m, "event.reason", reason);
	else
		enc_kstr(m, "daemon.config", config);
	msg_audit_end(m);
}

/* child.died: a role's process ended (wait status) while the daemon served. */
void
msg_audit_child_died(
    struct mp_enc *m, uint64_t ref, const char *role, int64_t pid, int status)
{
	int64_t exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	int64_t sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	char what[64];

	wait_status_text(status, what, sizeof(what));
	msg_audit_begin(m, ref, "child.died", "end", "failure");
	enc_kstr(m, "process.name", role);
	enc_kint(m, "process.pid", pid);
	enc_kint(m, "process.exit_code", exit_code);
	enc_kint(m, "daemon.child_signal", sig); /* ECS has no signal */
	enc_kstr(m, "event.reason", what);
	msg_audit_end(m);
}

/* policy.loaded, policy.reloaded or policy.reload_failed. */
void
msg_audit_policy(
    struct mp_enc *m, uint64_t ref, const struct msg_policy_event *pe)
{
	msg_audit_begin(m, ref,
	    policy_event_name((enum policy_event)pe->action), "change",
	    pe->action == POLICY_RELOAD_FAILED ? "failure" : "success");
	enc_kstr(m, "event.reason", pe->message);
	enc_kuint(m, "policy.files", pe->files);
	enc_kuint(m, "policy.rules", pe->rules);
	enc_kuint(m, "policy.skills", pe->skills);
	msg_audit_end(m);
}

/* worker.started (x NULL) or worker.exited, by the master. */
void
msg_audit_worker(struct mp_enc *m, uint64_t ref, const struct grant *g,
    int64_t pid, const struct msg_run_exited *x)
{
	struct audit_call who = {NULL, g->principal_uid, -1, -1, g->session,
	    g->skill, g->command, NULL, g->grant_id};

	if (x == NULL)
		msg_audit_begin(m, ref, "worker.started", "start", "unknown");
	else
		msg_audit_begin(m, ref, "worker.exited", "end",
		    x->err == ERR_NONE ? "success" : "failure");
	msg_audit_call(m, &who);
	enc_kint(m, "worker.pid", pid);
	enc_kuint(m, "worker.uid", g->worker_uid);
	if (x != NULL) { /* the skill's end: not the client's process.* */
		enc_kint(m, "skill.exit_code", x->exit_code);
		enc_kint(m, "skill.signal", x->signal);
		enc_kuint(m, "event.duration", x->duration_ms * 1000000ULL);
		enc_kbool(m, "worker.timed_out", x->limit == LIMIT_TIMEOUT);
		enc_kuint(m, "worker.cpu_ms", x->cpu_ms);
		enc_kuint(m, "worker.max_rss_kb", x->max_rss_kb);
		if (x->err != ERR_NONE) { /* ECS: error only on a failure */
			enc_kstr(m, "error.type",
			    err_type_name((enum err_type)x->err));
			enc_kstr(m, "error.message", x->message);
		}
	}
	/* nothing waits for worker.exited; worker.started gates the run */
	if (x != NULL)
		msg_audit_end_lazy(m);
	else
		msg_audit_end(m);
}

void
msg_audit_net(struct mp_enc *m, uint64_t ref, const struct audit_net *n)
{
	msg_audit_begin(m, ref, "network.connect", "connection",
	    n->err_code == NULL ? "success" : "failure");
	enc_kstr(m, "grant.id", n->grant_id);
	enc_kuintstr(m, "user.id", n->uid);
	enc_kstr(m, "session.id", n->session);
	enc_kstr(m, "skill.name", n->skill);
	enc_kstr(m, "network.transport", "tcp");
	if (n->domain != NULL)
		enc_kstr(m, "destination.domain", n->domain);
	if (n->port != 0)
		enc_kuint(m, "destination.port", n->port);
	if (n->ip != NULL)
		enc_kstr(m, "destination.ip", n->ip);
	if (n->method != NULL)
		enc_kstr(m, "http.request.method", n->method);
	enc_kuint(m, "source.bytes", n->bytes_up);
	enc_kuint(m, "destination.bytes", n->bytes_down);
	enc_kuint(m, "event.duration", n->duration_ns);
	if (n->refused > 0)
		enc_kuint(m, "netproxy.refused_connections", n->refused);
	if (n->err_code != NULL) {
		enc_kstr(m, "error.type", n->err_code);
		enc_kstr(m, "error.message", n->err_msg ? n->err_msg : "");
	}
	msg_audit_end(m);
}

/* Dotted segments of [a-z0-9_]. */
static int
audit_key_valid(const msgpack_object *k)
{
	const char *p = k->via.str.ptr;
	uint32_t i, n = k->via.str.size;

	if (k->type != MSGPACK_OBJECT_STR || n == 0 || n > AUDIT_KEY_MAX ||
	    p[0] == '.' || p[n - 1] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') ||
		        (p[i] >= '0' && p[i] <= '9') || p[i] == '_' ||
		        (p[i] == '.' && p[i + 1] != '.')))
			return 0;
	return 1;
}

static int
audit_scalar(const msgpack_object *v)
{
	switch (v->type) {
	case MSGPACK_OBJECT_NIL:
	case MSGPACK_OBJECT_BOOLEAN:
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
	case MSGPACK_OBJECT_STR:
	case MSGPACK_OBJECT_BIN:
		return 1;
	default:
		return 0;
	}
}

/* A scalar or an array of scalars. */
static int
audit_value_valid(const msgpack_object *v)
{
	uint32_t i;

	if (v->type != MSGPACK_OBJECT_ARRAY)
		return audit_scalar(v);
	for (i = 0; i < v->via.array.size; i++)
		if (!audit_scalar(&v->via.array.ptr[i]))
			return 0;
	return 1;
}

int
msg_audit_dec(const struct mp_doc *d, uint64_t *ref,
    const msgpack_object **event, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "event", "lazy", NULL};
	const msgpack_object *ev = NULL, *action;
	uint32_t i;
	int lazy = 0;

	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, ref, e) ||
	    mp_submap(d->root, "event", 1, &ev, e) ||
	    mp_bool(d->root, "lazy", 0, &lazy, e))
		return -1;
	if (ev->via.map.size > AUDIT_EVENT_FIELDS_MAX)
		return error_set(e, ERR_BAD_REQUEST, "an event of %u fields",
		    (unsigned)ev->via.map.size);
	for (i = 0; i < ev->via.map.size; i++)
		if (!audit_key_valid(&ev->via.map.ptr[i].key) ||
		    !audit_value_valid(&ev->via.map.ptr[i].val))
			return error_set(e, ERR_BAD_REQUEST,
			    "event field %u is malformed", (unsigned)i);
	action = mp_get(ev, "event.action");
	if (action == NULL || action->type != MSGPACK_OBJECT_STR ||
	    action->via.str.size == 0)
		return error_set(e, ERR_BAD_REQUEST, "an event without action");
	*event = ev;
	return 0;
}

/* The decoder checked lazy's type; absent is false. */
int
msg_audit_is_lazy(const struct mp_doc *d)
{
	const msgpack_object *v = mp_get(d->root, "lazy");

	return v != NULL && v->type == MSGPACK_OBJECT_BOOLEAN && v->via.boolean;
}

void
msg_audit_ack_enc(struct mp_enc *m, const struct msg_audit_ack *a)
{
	msg_begin(m, MSG_AUDIT_ACK);
	enc_kuint(m, "ref", a->ref);
	enc_kbool(m, "ok", a->ok);
	enc_kstr(m, "message", a->message ? a->message : "");
	msg_end(m);
}

int
msg_audit_ack_dec(
    const struct mp_doc *d, struct msg_audit_ack *a, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "ok", "message", NULL};

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &a->ref, e) ||
	    mp_bool(d->root, "ok", 1, &a->ok, e) ||
	    mp_str(d->root, "message", 1, REASON_MAX_LEN, &a->message, e)) {
		msg_audit_ack_free(a);
		return -1;
	}
	return 0;
}

void
msg_audit_ack_free(struct msg_audit_ack *a)
{
	free(a->message);
	memset(a, 0, sizeof(*a));
}

void
msg_policy_event_enc(struct mp_enc *m, const struct msg_policy_event *p)
{
	msg_begin(m, MSG_POLICY_EVENT);
	enc_kuint(m, "action", p->action);
	enc_kstr(m, "message", p->message ? p->message : "");
	enc_kuint(m, "files", p->files);
	enc_kuint(m, "rules", p->rules);
	enc_kuint(m, "skills", p->skills);
	msg_end(m);
}

int
msg_policy_event_dec(
    const struct mp_doc *d, struct msg_policy_event *p, struct error *e)
{
	static const char *const keys[] = {
	    "t", "action", "message", "files", "rules", "skills", NULL};
	const msgpack_object *o = d->root;

	memset(p, 0, sizeof(*p));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "action", 1, POLICY__COUNT - 1, &p->action, e) ||
	    mp_str(o, "message", 1, REASON_MAX_LEN, &p->message, e) ||
	    mp_uint(o, "files", 1, UINT32_MAX, &p->files, e) ||
	    mp_uint(o, "rules", 1, UINT32_MAX, &p->rules, e) ||
	    mp_uint(o, "skills", 1, UINT32_MAX, &p->skills, e)) {
		msg_policy_event_free(p);
		return -1;
	}
	return 0;
}

void
msg_policy_event_free(struct msg_policy_event *p)
{
	free(p->message);
	memset(p, 0, sizeof(*p));
}
