/*
 * broker_approval.c: what a human sees of a call an ask rule holds. A
 * call in CALL_APPROVAL has asked once, under an id the broker never
 * gives out twice ("appr-17"); the calling connection gets one
 * approval_request frame (not a reply: it has no "ok"), and the
 * connection itself, or an admin principal from any connection, may
 * answer it. The call machine (broker_call.c) moves the call; this file
 * only names, finds, shows and lists approvals.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "broker.h"

#define APPROVAL_ID_PREFIX "appr-"

/* "appr-N", the id clients see. */
void
approval_id_fmt(uint64_t n, char *buf, size_t len)
{
	snprintf(buf, len, APPROVAL_ID_PREFIX "%" PRIu64, n);
}

/*
 * The N of "appr-N", checked before use: the prefix, 1..20 digits with
 * no leading zero, no overflow, nothing after. -1 for anything else.
 */
int
approval_id_parse(const char *s, uint64_t *n)
{
	size_t plen = strlen(APPROVAL_ID_PREFIX), i, len;
	uint64_t v = 0;

	if (s == NULL || strncmp(s, APPROVAL_ID_PREFIX, plen) != 0)
		return -1;
	s += plen;
	len = strlen(s);
	if (len == 0 || len > 20 || s[0] == '0')
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' ||
		    v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*n = v;
	return 0;
}

/* The call that waits for approval n, or NULL (answered, ended, never). */
struct call *
approval_find(uint64_t n)
{
	struct call *c;

	if (n == 0)
		return NULL;
	LIST_FOREACH (c, &B->calls, entry)
		if (c->st == CALL_APPROVAL && c->appr_open && c->appr == n)
			return c;
	return NULL;
}

/* The calling connection, or an admin principal on any connection. */
int
approval_may_answer(const struct call *c, const struct conn *cn)
{
	return (c->conn != NULL && c->conn == cn) ||
	       quota_is_admin(cn->uid, cn->gid);
}

/* Shown bytes of one argument: at most APPROVAL_ARG_BYTES, "…" if cut. */
static void
approval_arg_enc(struct mp_enc *m, const char *a)
{
	static const char ell[] = "\xe2\x80\xa6"; /* U+2026, 3 bytes */
	size_t len = strlen(a), keep;
	char buf[APPROVAL_ARG_BYTES + 1];

	if (len <= APPROVAL_ARG_BYTES) {
		enc_str(m, a);
		return;
	}
	keep = utf8_cut(a, APPROVAL_ARG_BYTES - (sizeof(ell) - 1));
	memcpy(buf, a, keep);
	memcpy(buf + keep, ell, sizeof(ell) - 1);
	enc_strn(m, buf, keep + sizeof(ell) - 1);
}

/*
 * approval_request, to the calling connection: what would run, with
 * which permissions, and how long the broker waits for an answer.
 */
void
approval_request_send(const struct call *c)
{
	static char *const options[] = {"yes_once", "yes_in_session", "no"};
	char id[32];
	size_t i, n = c->cr.nargs < APPROVAL_ARGS_MAX ? c->cr.nargs
	                                              : APPROVAL_ARGS_MAX;
	struct mp_enc m;

	approval_id_fmt(c->appr, id, sizeof(id));
	enc_init(&m);
	enc_map_open(&m);
	enc_kstr(&m, "type", "approval_request");
	enc_kstr(&m, "id", id);
	enc_key(&m, "request_id");
	client_id_enc(&m, &c->cr.id);
	enc_kstr(&m, "skill", c->cr.skill);
	enc_kstr(&m, "command", c->cr.command);
	enc_kstr(&m, "session", c->cr.session);
	enc_key(&m, "args");
	enc_array(&m, n);
	for (i = 0; i < n; i++)
		approval_arg_enc(&m, c->cr.args[i]);
	enc_kuint(&m, "args_total", c->cr.nargs);
	enc_key(&m, "effective");
	if (c->ans.effective_len > 0)
		enc_raw(&m, c->ans.effective, c->ans.effective_len);
	else {
		enc_map_open(&m);
		enc_map_close(&m);
	}
	enc_kstrarr(&m, "rules", c->ans.rules, c->ans.nrules);
	enc_kstrarr(&m, "options", options, 3);
	enc_kuint(&m, "timeout_ms", B->clients.approval_s * 1000);
	enc_map_close(&m);
	conn_send(c->conn, &m);
	enc_free(&m);
}

/* Oldest first: by approval number. */
static int
approval_cmp(const void *a, const void *b)
{
	const struct call *x = *(const struct call *const *)a;
	const struct call *y = *(const struct call *const *)b;

	return x->appr < y->appr ? -1 : x->appr > y->appr;
}

/* One pending approval, as the approvals reply lists it. */
static void
approval_entry_enc(struct mp_enc *m, const struct call *c, uint64_t now)
{
	char id[32];

	approval_id_fmt(c->appr, id, sizeof(id));
	enc_map_open(m);
	enc_kstr(m, "id", id);
	enc_key(m, "request_id");
	client_id_enc(m, &c->cr.id);
	enc_kuint(m, "uid", c->uid);
	enc_kstr(m, "skill", c->cr.skill);
	enc_kstr(m, "command", c->cr.command);
	enc_kstr(m, "session", c->cr.session);
	enc_kuint(m, "waited_ms", now > c->appr_ms ? now - c->appr_ms : 0);
	enc_kuint(m, "timeout_ms", B->clients.approval_s * 1000);
	enc_map_close(m);
}

/*
 * approvals: an admin principal sees every pending approval, anyone
 * else those of its own uid. At most one per call holding a worker, so
 * the list is bounded by the worker pool.
 */
void
approval_list_reply(struct conn *cn, const struct client_req *cr)
{
	int admin = quota_is_admin(cn->uid, cn->gid);
	uint64_t now = now_mono_ms();
	const struct call **v;
	const struct call *c;
	struct mp_enc m;
	size_t n = 0, i;

	v = xcalloc(B->ncalls + 1, sizeof(*v));
	LIST_FOREACH (c, &B->calls, entry)
		if (c->st == CALL_APPROVAL && c->appr_open &&
		    (admin || c->uid == cn->uid))
			v[n++] = c;
	qsort(v, n, sizeof(*v), approval_cmp);
	enc_init(&m);
	client_reply_begin(&m, "approvals", &cr->id, 1);
	enc_key(&m, "approvals");
	enc_array(&m, n);
	for (i = 0; i < n; i++)
		approval_entry_enc(&m, v[i], now);
	client_reply_end(&m);
	conn_send(cn, &m);
	enc_free(&m);
	free(v);
}
