/*
 * msg.c: what every message shares (the type field, the map around it,
 * the enum names) and the small start-up and control messages.
 */
#include "msg.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "frame.h"

int
msg_type_of(const struct mp_doc *d, uint64_t *type, struct error *e)
{
	return mp_uint(d->root, "t", 1, 255, type, e);
}

void
msg_begin(struct mp_enc *m, enum msg_type t)
{
	enc_map_open(m);
	enc_kuint(m, "t", (uint64_t)t);
}

void
msg_end(struct mp_enc *m)
{
	enc_map_close(m);
	if (!enc_complete(m))
		fatalx("a message left a map open");
}

/* Decode a frame's body (freed) as a message of type want. */
static int
msg_decode_want(uint8_t *buf, size_t len, enum msg_type want, struct mp_doc *d,
    struct error *e)
{
	uint64_t t;
	int r;

	r = mp_decode(d, buf, len, NULL, e);
	free(buf);
	if (r == -1)
		return -1;
	if (msg_type_of(d, &t, e) == -1 || t != (uint64_t)want) {
		mp_doc_free(d);
		return error_set(
		    e, ERR_BAD_REQUEST, "expected message type %d", (int)want);
	}
	return 0;
}

/* Blocking: one whole message of type want from fd (a start-up read). */
int
msg_read(int fd, enum msg_type want, struct mp_doc *d, struct error *e)
{
	uint8_t *buf;
	size_t len;

	if (frame_recv(fd, FRAME_MAX_INTERNAL, &buf, &len, e) == -1)
		return -1;
	return msg_decode_want(buf, len, want, d, e);
}

int
msg_read_fds(int fd, enum msg_type want, struct mp_doc *d, int *fds, int max,
    int *nfds, struct error *e)
{
	uint8_t *buf;
	size_t len;
	int r, i;

	if (frame_recv_fds(
	        fd, FRAME_MAX_INTERNAL, &buf, &len, fds, max, nfds, e) == -1)
		return -1;
	r = msg_decode_want(buf, len, want, d, e);
	for (i = 0; r == -1 && i < *nfds; i++)
		close(fds[i]);
	if (r == -1)
		*nfds = 0;
	return r;
}

int
grant_id_valid(const char *s)
{
	return s != NULL && strlen(s) == GRANT_ID_LEN &&
	       hex_lower_n(s, GRANT_ID_LEN);
}

const char *
perm_kind_name(enum perm_kind k)
{
	static const char *const names[PERM__COUNT] = {
	    "fs_read", "fs_write", "network", "exec", "env_names"};

	return (unsigned)k < PERM__COUNT ? names[k] : "unknown";
}

const char *
limit_kind_name(enum limit_kind k)
{
	static const char *const names[LIMIT__COUNT] = {
	    "", "timeout_ms", "memory_mb", "pids", "cpu", "fsize_mb"};

	return (unsigned)k < LIMIT__COUNT ? names[k] : "";
}

const char *
policy_event_name(enum policy_event a)
{
	static const char *const names[POLICY__COUNT] = {
	    "policy.loaded", "policy.reloaded", "policy.reload_failed"};

	return (unsigned)a < POLICY__COUNT ? names[a] : "policy.unknown";
}

void
msg_ready_enc(struct mp_enc *m, const char *role)
{
	msg_begin(m, MSG_READY);
	enc_kuint(m, "v", PROTO_VERSION);
	enc_kstr(m, "role", role);
	msg_end(m);
}

int
msg_ready_dec(const struct mp_doc *d, struct msg_ready *r, struct error *e)
{
	static const char *const keys[] = {"t", "v", "role", NULL};

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "v", 1, UINT32_MAX, &r->version, e) ||
	    mp_str(d->root, "role", 1, ROLE_MAX_LEN, &r->role, e)) {
		msg_ready_free(r);
		return -1;
	}
	return 0;
}

/* READY from role, speaking our protocol version, or why not. */
int
msg_ready_check(const struct mp_doc *d, const char *role, struct error *e)
{
	struct msg_ready r;
	int ok;

	if (msg_ready_dec(d, &r, e) == -1)
		return -1;
	ok = r.version == PROTO_VERSION && strcmp(r.role, role) == 0;
	if (!ok)
		error_set(e, ERR_BAD_REQUEST,
		    "READY from \"%s\" protocol %llu, expected \"%s\" %d",
		    r.role, (unsigned long long)r.version, role, PROTO_VERSION);
	msg_ready_free(&r);
	return ok ? 0 : -1;
}

void
msg_ready_free(struct msg_ready *r)
{
	free(r->role);
	memset(r, 0, sizeof(*r));
}

void
msg_empty_enc(struct mp_enc *m, enum msg_type t)
{
	msg_begin(m, t);
	msg_end(m);
}

int
msg_empty_dec(const struct mp_doc *d, struct error *e)
{
	static const char *const keys[] = {"t", NULL};

	return mp_only_keys(d->root, keys, e);
}

void
msg_worker_fail_enc(struct mp_enc *m, const struct msg_worker_fail *f)
{
	msg_begin(m, MSG_WORKER_FAIL);
	enc_kstr(m, "step", f->step);
	enc_kstr(m, "message", f->message);
	msg_end(m);
}

int
msg_worker_fail_dec(
    const struct mp_doc *d, struct msg_worker_fail *f, struct error *e)
{
	static const char *const keys[] = {"t", "step", "message", NULL};

	memset(f, 0, sizeof(*f));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_str(d->root, "step", 1, 32, &f->step, e) ||
	    mp_str(d->root, "message", 1, REASON_MAX_LEN, &f->message, e)) {
		msg_worker_fail_free(f);
		return -1;
	}
	return 0;
}

void
msg_worker_fail_free(struct msg_worker_fail *f)
{
	free(f->step);
	free(f->message);
	memset(f, 0, sizeof(*f));
}

void
msg_worker_exit_enc(struct mp_enc *m, const struct msg_worker_exit *x)
{
	msg_begin(m, MSG_WORKER_EXIT);
	enc_kint(m, "exit_code", x->exit_code);
	enc_kint(m, "signal", x->signal);
	msg_end(m);
}

int
msg_worker_exit_dec(
    const struct mp_doc *d, struct msg_worker_exit *x, struct error *e)
{
	static const char *const keys[] = {"t", "exit_code", "signal", NULL};

	memset(x, 0, sizeof(*x));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_int(d->root, "exit_code", 1, -1, 255, &x->exit_code, e) ||
	    mp_int(d->root, "signal", 1, 0, 128, &x->signal, e))
		return -1;
	if ((x->exit_code == -1) != (x->signal != 0))
		return error_set(
		    e, ERR_BAD_REQUEST, "an exit code or a signal, not both");
	return 0;
}

void
msg_session_end_enc(struct mp_enc *m, const struct msg_session_end *s)
{
	msg_begin(m, MSG_SESSION_END);
	enc_kuint(m, "uid", s->uid);
	enc_kstr(m, "session", s->session);
	msg_end(m);
}

int
msg_session_end_dec(
    const struct mp_doc *d, struct msg_session_end *s, struct error *e)
{
	static const char *const keys[] = {"t", "uid", "session", NULL};

	memset(s, 0, sizeof(*s));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "uid", 1, UINT32_MAX, &s->uid, e) ||
	    mp_str(d->root, "session", 1, SESSION_MAX_LEN, &s->session, e))
		goto bad;
	if (!ident_valid(s->session, SESSION_MAX_LEN)) {
		error_set(e, ERR_BAD_REQUEST, "malformed session name");
		goto bad;
	}
	return 0;
bad:
	msg_session_end_free(s);
	return -1;
}

void
msg_session_end_free(struct msg_session_end *s)
{
	free(s->session);
	memset(s, 0, sizeof(*s));
}

void
msg_peer_channel_enc(struct mp_enc *m, const struct msg_peer_channel *p)
{
	msg_begin(m, MSG_PEER_CHANNEL);
	enc_kstr(m, "role", p->role);
	msg_end(m);
}

int
msg_peer_channel_dec(
    const struct mp_doc *d, struct msg_peer_channel *p, struct error *e)
{
	static const char *const keys[] = {"t", "role", NULL};

	memset(p, 0, sizeof(*p));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_str(d->root, "role", 1, ROLE_MAX_LEN, &p->role, e))
		goto bad;
	if (strcmp(p->role, "policyd") != 0 && strcmp(p->role, "auditd") != 0 &&
	    strcmp(p->role, "netproxy") != 0) {
		error_set(e, ERR_BAD_REQUEST, "unknown role");
		goto bad;
	}
	return 0;
bad:
	msg_peer_channel_free(p);
	return -1;
}

void
msg_peer_channel_free(struct msg_peer_channel *p)
{
	free(p->role);
	memset(p, 0, sizeof(*p));
}

void
msg_grant_ack_enc(struct mp_enc *m, const struct msg_grant_ack *a)
{
	msg_begin(m, MSG_GRANT_ACK);
	enc_kstr(m, "grant_id", a->grant_id);
	enc_kuint(m, "err", a->err);
	enc_kstr(m, "message", a->message ? a->message : "");
	msg_end(m);
}

int
msg_grant_ack_dec(
    const struct mp_doc *d, struct msg_grant_ack *a, struct error *e)
{
	static const char *const keys[] = {
	    "t", "grant_id", "err", "message", NULL};

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_str(d->root, "grant_id", 1, GRANT_ID_LEN, &a->grant_id, e) ||
	    mp_uint(d->root, "err", 1, ERR__COUNT - 1, &a->err, e) ||
	    mp_str(d->root, "message", 1, REASON_MAX_LEN, &a->message, e))
		goto bad;
	if (!grant_id_valid(a->grant_id)) {
		error_set(e, ERR_BAD_REQUEST, "malformed grant id");
		goto bad;
	}
	return 0;
bad:
	msg_grant_ack_free(a);
	return -1;
}

void
msg_grant_ack_free(struct msg_grant_ack *a)
{
	free(a->grant_id);
	free(a->message);
	memset(a, 0, sizeof(*a));
}
