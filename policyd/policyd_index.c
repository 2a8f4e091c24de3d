/*
 * policyd_index.c: a loaded policy's rules filed by what they name. A
 * rule is filed under each (skill, principal) pair it names, when it
 * names few; under each skill for any principal, when it names many
 * principals or anyone; and under any skill for each principal (or
 * for anyone) when one of its skills is a glob. A decision looks in
 * the files of its skill and of any skill, for each principal the
 * caller is in and for anyone, and merges them in file order. The
 * principals are found by the caller's uid and gid through sorted
 * tables, and the enabled skills by name through a hash table, the
 * globs among them beside it.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/xmalloc.h"
#include "policyd_index.h"
#include "policyd_match.h"

#define INDEX_ANYONE ((size_t)-1) /* a file for any principal */

/* The rules of one action filed under one skill and one principal. */
struct index_file {
	const char *skill; /* NULL: any skill (a glob) */
	size_t who;        /* a principal's index, or INDEX_ANYONE */
	enum action act;
	uint64_t hash;
	uint32_t *rules; /* in file order */
	size_t n, cap;
};

/* One id of a principal: the caller's uid or gid finds it. */
struct index_id {
	uint64_t id;
	size_t pr;
};

struct index {
	struct index_file *files; /* open addressing; a power of two slots */
	size_t nfiles, cap;
	struct index_id *uids, *gids; /* sorted by id */
	size_t nuids, ngids;
	const char **names; /* enabled skills without a glob, hashed */
	size_t nnames, names_cap;
	const char **globs; /* enabled skills that are globs */
	size_t nglobs;
};

/* A glob matches more than its own text. */
static int
index_is_glob(const char *s)
{
	return strpbrk(s, "*?") != NULL;
}

/* FNV-1a of a name; any skill hashes as the empty name does not. */
static uint64_t
index_hash_name(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	if (s == NULL)
		return 0x9e3779b97f4a7c15ULL;
	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

/* The slot of a file: its name's hash mixed with principal and action. */
static uint64_t
index_hash(uint64_t name, size_t who, enum action act)
{
	uint64_t h = name ^ ((uint64_t)who * 0xff51afd7ed558ccdULL) ^
	             ((uint64_t)act << 56);

	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

/* Two skills of files: the same name, or both any skill. */
static int
index_same(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* The file of (skill, who, act), or its empty slot. */
static struct index_file *
index_slot(const struct index *x, const char *skill, size_t who,
    enum action act, uint64_t h)
{
	struct index_file *f;
	size_t i;

	for (i = h & (x->cap - 1);; i = (i + 1) & (x->cap - 1)) {
		f = &x->files[i];
		if (f->rules == NULL ||
		    (f->hash == h && f->who == who && f->act == act &&
		        index_same(f->skill, skill)))
			return f;
	}
}

/* Twice the slots, every file moved to its new place. */
static void
index_grow(struct index *x)
{
	struct index_file *old = x->files, *f;
	size_t n = x->cap, i;

	x->cap = n ? 2 * n : 64;
	x->files = xcalloc(x->cap, sizeof(*x->files));
	for (i = 0; i < n; i++)
		if (old[i].rules != NULL) {
			f = index_slot(x, old[i].skill, old[i].who, old[i].act,
			    old[i].hash);
			*f = old[i];
		}
	free(old);
}

/* File rule r under (skill, who, act), once. */
static void
index_put(
    struct index *x, const char *skill, size_t who, enum action act, uint32_t r)
{
	uint64_t h = index_hash(index_hash_name(skill), who, act);
	struct index_file *f;

	if (2 * (x->nfiles + 1) > x->cap)
		index_grow(x);
	f = index_slot(x, skill, who, act, h);
	if (f->rules == NULL) {
		f->skill = skill;
		f->who = who;
		f->act = act;
		f->hash = h;
		f->cap = 4;
		f->rules = xcalloc(f->cap, sizeof(*f->rules));
		x->nfiles++;
	}
	if (f->n > 0 && f->rules[f->n - 1] == r) /* named twice */
		return;
	if (f->n == f->cap) {
		f->cap *= 2;
		f->rules = xreallocarray(f->rules, f->cap, sizeof(*f->rules));
	}
	f->rules[f->n++] = r;
}

/*
 * Where rule r goes: its skills (NULL for any, when one is a glob) by
 * its principals (INDEX_ANYONE for "*"), as pairs when there are few,
 * else by its skills alone when it names them all, else by principal.
 */
static void
index_rule(struct index *x, const struct rule *rule, uint32_t r)
{
	size_t i, k, ns = rule->nskills, nw = rule->nprincipals;
	int glob = 0, anyone = 0;

	for (i = 0; i < rule->nskills; i++)
		glob |= index_is_glob(rule->skills[i]);
	for (i = 0; i < rule->nprincipals; i++)
		anyone |= rule->who[i] == POLICY_ANYONE;
	if (glob)
		ns = 1;
	if (anyone)
		nw = 1;
	/* too many pairs: by its skills alone (a glob's: by none) */
	if (ns * nw > INDEX_PAIRS_MAX) {
		anyone = 1;
		nw = 1;
	}
	for (i = 0; i < ns; i++)
		for (k = 0; k < nw; k++)
			index_put(x, glob ? NULL : rule->skills[i],
			    anyone ? INDEX_ANYONE : rule->who[k], rule->action,
			    r);
}

/* By id, then by principal: the order index_find_ids bisects. */
static int
index_id_cmp(const void *a, const void *b)
{
	const struct index_id *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->pr < y->pr ? -1 : x->pr > y->pr;
}

/* Every principal's uids and gids, sorted, each naming its principal. */
static void
index_principals(struct index *x, const struct policy *p)
{
	size_t i, k, nu = 0, ng = 0;

	for (i = 0; i < p->npr; i++) {
		nu += p->pr[i].nuids;
		ng += p->pr[i].ngids;
	}
	x->uids = xcalloc(nu + 1, sizeof(*x->uids));
	x->gids = xcalloc(ng + 1, sizeof(*x->gids));
	for (i = 0; i < p->npr; i++) {
		for (k = 0; k < p->pr[i].nuids; k++)
			x->uids[x->nuids++] =
			    (struct index_id){p->pr[i].uids[k], i};
		for (k = 0; k < p->pr[i].ngids; k++)
			x->gids[x->ngids++] =
			    (struct index_id){p->pr[i].gids[k], i};
	}
	qsort(x->uids, x->nuids, sizeof(*x->uids), index_id_cmp);
	qsort(x->gids, x->ngids, sizeof(*x->gids), index_id_cmp);
}

/* The slot of an enabled name in the hash set, or its empty one. */
static const char **
index_name_slot(const struct index *x, const char *name)
{
	size_t i = index_hash_name(name) & (x->names_cap - 1);

	while (x->names[i] != NULL && strcmp(x->names[i], name) != 0)
		i = (i + 1) & (x->names_cap - 1);
	return &x->names[i];
}

/* skills.enabled: names in a hash set, globs in a list. */
static void
index_enabled_build(struct index *x, const struct policy *p)
{
	const char **slot;
	size_t i;

	for (x->names_cap = 16; x->names_cap < 2 * p->nenabled + 2;)
		x->names_cap *= 2;
	x->names = xcalloc(x->names_cap, sizeof(*x->names));
	x->globs = xcalloc(p->nenabled + 1, sizeof(*x->globs));
	for (i = 0; i < p->nenabled; i++) {
		if (index_is_glob(p->enabled[i])) {
			x->globs[x->nglobs++] = p->enabled[i];
			continue;
		}
		slot = index_name_slot(x, p->enabled[i]);
		if (*slot == NULL) {
			*slot = p->enabled[i];
			x->nnames++;
		}
	}
}

/* Every rule filed, the principals' ids sorted, the enabled hashed. */
struct index *
index_build(const struct policy *p)
{
	struct index *x = xcalloc(1, sizeof(*x));
	size_t i;

	if (p->nrules > UINT32_MAX)
		fatalx("%zu rules", p->nrules);
	for (i = 0; i < p->nrules; i++)
		index_rule(x, &p->rules[i], (uint32_t)i);
	index_principals(x, p);
	index_enabled_build(x, p);
	return x;
}

/* The files, the id tables and the enabled names (the policy keeps its
 * own strings). */
void
index_free(struct index *x)
{
	size_t i;

	if (x == NULL)
		return;
	for (i = 0; i < x->cap; i++)
		free(x->files[i].rules);
	free(x->files);
	free(x->uids);
	free(x->gids);
	free(x->names);
	free(x->globs);
	free(x);
}

/* The principals with id among ids, added to pr (at most max). */
static size_t
index_find_ids(const struct index_id *ids, size_t n, uint64_t id, size_t *pr,
    size_t npr, size_t max)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) { /* the first entry not below id */
		mid = lo + (hi - lo) / 2;
		if (ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && ids[lo].id == id && npr < max; lo++)
		pr[npr++] = ids[lo].pr;
	return npr;
}

/* Principals' indexes in order, for index_unique. */
static int
index_size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* n principals sorted, each once (one in both uids and gids); how many. */
static size_t
index_unique(size_t *pr, size_t n)
{
	size_t i, k = 0;

	qsort(pr, n, sizeof(*pr), index_size_cmp);
	for (i = 0; i < n; i++)
		if (k == 0 || pr[k - 1] != pr[i])
			pr[k++] = pr[i];
	return k;
}

/* One more candidate list for the iterator, if that file exists. */
static void
index_iter_add(
    struct index_iter *it, const struct index *x, const char *skill, size_t who)
{
	uint64_t h = index_hash(index_hash_name(skill), who, it->act);
	const struct index_file *f;

	if (x->cap == 0)
		return;
	f = index_slot(x, skill, who, it->act, h);
	if (f->rules == NULL)
		return;
	it->list[it->nlists] = f->rules;
	it->len[it->nlists] = f->n;
	it->pos[it->nlists] = 0;
	it->nlists++;
}

/* The caller's principals, then the files to merge: two for each. */
void
index_iter_init(struct index_iter *it, const struct policy *p,
    const struct index *x, uint64_t uid, uint64_t gid, const char *skill,
    enum action act)
{
	size_t *pr, npr, i, max, w;

	memset(it, 0, sizeof(*it));
	it->pol = p;
	it->x = x;
	it->act = act;
	it->last = -1;
	if (x == NULL)
		return;
	/* the caller's principals: at most every principal, once each */
	max = x->nuids + x->ngids;
	pr = xcalloc(max + 1, sizeof(*pr));
	npr = index_find_ids(x->uids, x->nuids, uid, pr, 0, max);
	npr = index_find_ids(x->gids, x->ngids, gid, pr, npr, max);
	npr = index_unique(pr, npr);
	if (2 * (npr + 1) <= INDEX_LISTS_INLINE) {
		it->list = it->ilist;
		it->len = it->ilen;
		it->pos = it->ipos;
	} else {
		it->list = xcalloc(2 * (npr + 1), sizeof(*it->list));
		it->len = xcalloc(2 * (npr + 1), sizeof(*it->len));
		it->pos = xcalloc(2 * (npr + 1), sizeof(*it->pos));
	}
	for (i = 0; i <= npr; i++) {
		w = i < npr ? pr[i] : INDEX_ANYONE;
		index_iter_add(it, x, skill, w);
		index_iter_add(it, x, NULL, w);
	}
	free(pr);
}

/* The least rule at the head of any list, repeats skipped. */
int
index_iter_next(struct index_iter *it, size_t *rule)
{
	size_t i, best;
	uint32_t v;

	if (it->x == NULL) { /* no index: every rule in turn */
		for (; it->next < it->pol->nrules; it->next++)
			if (it->pol->rules[it->next].action == it->act) {
				*rule = it->next++;
				return 1;
			}
		return 0;
	}
	for (;;) {
		best = it->nlists;
		for (i = 0; i < it->nlists; i++)
			if (it->pos[i] < it->len[i] &&
			    (best == it->nlists ||
			        it->list[i][it->pos[i]] <
			            it->list[best][it->pos[best]]))
				best = i;
		if (best == it->nlists)
			return 0;
		v = it->list[best][it->pos[best]++];
		if ((int64_t)v == it->last) /* in two lists */
			continue;
		it->last = v;
		*rule = v;
		return 1;
	}
}

/* Lists beyond INDEX_LISTS_INLINE were allocated. */
void
index_iter_done(struct index_iter *it)
{
	if (it->list != NULL && it->list != it->ilist) {
		free(it->list);
		free(it->len);
		free(it->pos);
	}
	it->list = NULL;
}

/* A name in the set, or a glob among the enabled that matches. */
int
index_enabled(const struct index *x, const struct policy *p, const char *skill)
{
	size_t i;

	if (x == NULL)
		return policy_skill_enabled(p, skill);
	if (*index_name_slot(x, skill) != NULL)
		return 1;
	for (i = 0; i < x->nglobs; i++)
		if (glob_match(x->globs[i], skill))
			return 1;
	return 0;
}
