/*
 * policyd_index.h: the rules of a loaded policy by what they name (the
 * skill, the principal, the action), and its enabled skills by name, so
 * a decision looks only at the rules that can apply to its caller and
 * skill: 10,000 rules cost about what 10 do.
 */
#ifndef SB_POLICYD_INDEX_H
#define SB_POLICYD_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "policyd_policy.h"

#define INDEX_PAIRS_MAX 64 /* skill-principal pairs one rule is filed under */
#define INDEX_LISTS_INLINE 16

struct index;

/* The index of p (its rules and enabled skills as they are now). */
struct index *index_build(const struct policy *p);
void index_free(struct index *x);

/*
 * The rules of one action that may apply to a caller and a skill, in
 * file order, each once: a superset of those that do (rule_applies
 * still decides). Without an index, every rule of the action.
 */
struct index_iter {
	const struct policy *pol;
	const struct index *x; /* NULL: every rule of the action */
	enum action act;
	const uint32_t **list; /* the candidate lists, each in file order */
	size_t *len, *pos, nlists;
	const uint32_t *ilist[INDEX_LISTS_INLINE];
	size_t ilen[INDEX_LISTS_INLINE], ipos[INDEX_LISTS_INLINE];
	size_t next;  /* without an index: the next rule to look at */
	int64_t last; /* the rule given last, -1 before the first */
};
void index_iter_init(struct index_iter *it, const struct policy *p,
    const struct index *x, uint64_t uid, uint64_t gid, const char *skill,
    enum action act);
/* 1 with *rule the next candidate, 0 at the end. */
int index_iter_next(struct index_iter *it, size_t *rule);
void index_iter_done(struct index_iter *it);

/* Does skills.enabled name skill (a name, or a glob that matches it)?
 * Without an index, policy_skill_enabled looks at each. */
int index_enabled(
    const struct index *x, const struct policy *p, const char *skill);

#endif
