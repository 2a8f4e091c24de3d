/*
 * broker_quota.c: what each local user (uid) holds at once, and the
 * bounds on it, so that no user can deny service to another. Each kind
 * has a bound per uid (per_uid.*) well below the global one, and the
 * global bounds keep a reserve that only admin principals (ADMINS, from
 * the policy) may use. A refusal names the bound that was hit.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/xmalloc.h"
#include "broker.h"

struct principal {
	LIST_ENTRY(principal) entry;
	uint32_t uid;
	unsigned held[QUOTA__COUNT];
};

static LIST_HEAD(, principal) principals = LIST_HEAD_INITIALIZER(principals);
static unsigned total[QUOTA__COUNT];
static struct msg_admins admins;

static const char *const quota_keys[QUOTA__COUNT] = {
    "per_uid.clients", "per_uid.calls", "per_uid.sessions", "per_uid.workers"};
static const char *const global_keys[QUOTA__COUNT] = {
    "max_clients", "", "worker.max_sessions", "worker.uids"};
static const char *const quota_what[QUOTA__COUNT] = {
    "connections", "requests in flight", "sessions", "calls holding workers"};

/* The bound per uid, and the global one (0: none). */
static unsigned
quota_per_uid(enum quota_kind k)
{
	switch (k) {
	case QUOTA_CLIENTS:
		return (unsigned)B->per_uid.clients;
	case QUOTA_CALLS:
		return (unsigned)B->per_uid.calls;
	case QUOTA_SESSIONS:
		return (unsigned)B->per_uid.sessions;
	default:
		return (unsigned)B->per_uid.workers;
	}
}

static unsigned
quota_global(enum quota_kind k)
{
	switch (k) {
	case QUOTA_CLIENTS:
		return B->max_clients;
	case QUOTA_SESSIONS:
		return (unsigned)B->max_sessions;
	case QUOTA_WORKERS:
		return (unsigned)B->workers;
	default:
		return 0;
	}
}

/* Kept for admins: an eighth of the global bound, never all of it. */
unsigned
quota_reserve(unsigned global)
{
	unsigned r = (global + 7) / 8;

	return global <= 1 ? 0 : r >= global ? global - 1 : r;
}

static struct principal *
principal_find(uint32_t uid, int create)
{
	struct principal *p;

	LIST_FOREACH (p, &principals, entry)
		if (p->uid == uid)
			return p;
	if (!create)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->uid = uid;
	LIST_INSERT_HEAD(&principals, p, entry);
	return p;
}

int
quota_is_admin(uint32_t uid, uint32_t gid)
{
	size_t i;

	for (i = 0; i < admins.nuids; i++)
		if (admins.uids[i] == uid)
			return 1;
	for (i = 0; i < admins.ngids; i++)
		if (admins.gids[i] == gid)
			return 1;
	return 0;
}

unsigned
quota_held(enum quota_kind k, uint32_t uid)
{
	struct principal *p = principal_find(uid, 0);

	return p != NULL ? p->held[k] : 0;
}

unsigned
quota_total(enum quota_kind k)
{
	return total[k];
}

/*
 * May uid take one more of kind k, beyond what it holds? 0, or -1 with
 * an overloaded error that names the bound. Nothing is taken.
 */
int
quota_check(
    enum quota_kind k, uint32_t uid, uint32_t gid, int reserve, struct error *e)
{
	unsigned per = quota_per_uid(k), global = quota_global(k), avail;

	if (quota_held(k, uid) >= per)
		return error_set(e, ERR_OVERLOADED,
		    "uid %u has %u %s, its bound (%s)", (unsigned)uid, per,
		    quota_what[k], quota_keys[k]);
	if (global == 0)
		return 0;
	avail = global;
	if (reserve && !quota_is_admin(uid, gid))
		avail -= quota_reserve(global);
	if (total[k] >= avail)
		return error_set(e, ERR_OVERLOADED,
		    "%u of %u %s are in use (%s)%s", total[k], global,
		    quota_what[k], global_keys[k],
		    avail < global ? "; the rest are kept for admins" : "");
	return 0;
}

/* quota_check, then take one. */
int
quota_take(enum quota_kind k, uint32_t uid, uint32_t gid, struct error *e)
{
	if (quota_check(k, uid, gid, 1, e) == -1)
		return -1;
	quota_add(k, uid);
	return 0;
}

/* Take one without a check (a session that evicts another in its place). */
void
quota_add(enum quota_kind k, uint32_t uid)
{
	principal_find(uid, 1)->held[k]++;
	total[k]++;
}

void
quota_release(enum quota_kind k, uint32_t uid)
{
	struct principal *p = principal_find(uid, 0);
	int i;

	if (p == NULL || p->held[k] == 0 || total[k] == 0)
		fatalx("uid %u releases %s it does not hold", (unsigned)uid,
		    quota_what[k]);
	p->held[k]--;
	total[k]--;
	for (i = 0; i < QUOTA__COUNT; i++)
		if (p->held[i] != 0)
			return;
	LIST_REMOVE(p, entry);
	free(p);
}

/* ADMINS: after each policy load, who may use the reserve. */
int
quota_on_admins(struct peer *p UNUSED, const struct mp_doc *d)
{
	struct msg_admins a;
	struct error e;

	if (msg_admins_dec(d, &a, &e) == -1) {
		log_warnx("policyd: ADMINS: %s", e.msg);
		return -1;
	}
	msg_admins_free(&admins);
	admins = a;
	log_debug("%zu admin uids, %zu admin gids", a.nuids, a.ngids);
	return 0;
}
