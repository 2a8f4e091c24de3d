/*
 * policyd_perm.h: permission sets (what a skill declares, what a rule's
 * ceiling allows) and limits. The same shape serves both.
 */
#ifndef SB_POLICYD_PERM_H
#define SB_POLICYD_PERM_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/ydoc.h"
#include "../proto/msg.h" /* enum perm_kind */

struct perms {
	char **v[PERM__COUNT];
	size_t n[PERM__COUNT];
};

struct plimits { /* 0 = not set */
	uint64_t timeout_ms, memory_mb, pids, output_bytes;
};

/*
 * The daemon's own paths (state, socket, audit, policy and skills
 * dirs): no skill's fs entry may be, contain or lie beneath one.
 */
void perms_protect(char *const *paths, size_t n);
/* The kind as the policy language names it ("fs.read", ...). */
const char *perms_kind_label(enum perm_kind k);
/* ceiling=1 allows wildcards in exec and env (rules), 0 for skills. */
int perms_parse(struct ydoc *y, struct ynode *n, int ceiling, struct perms *p,
    struct error *e);
int plimits_parse(
    struct ydoc *y, struct ynode *n, struct plimits *l, struct error *e);
/*
 * Add one exec or network.allow item to a skill's declaration (as
 * permissions would hold it: a non-ASCII host as its A-labels), once:
 * 0 (added, or there already), -1 not a valid item, -2 list full.
 */
int perms_add(struct perms *p, enum perm_kind k, const char *item);
void perms_free(struct perms *p);
void perms_copy(struct perms *dst, const struct perms *src);
/*
 * List in buf every item of want that ceil does not cover (the implicit
 * baseline, $SKILL_DIR read and $WORK_DIR read-write, is always
 * covered). Returns how many are missing.
 */
size_t perms_missing(
    const struct perms *want, const struct perms *ceil, char *buf, size_t len);
void perms_enc(struct mp_enc *m, const struct perms *p);
void plimits_enc(struct mp_enc *m, const struct plimits *l);
/* The smaller of two limits where set. */
uint64_t limit_min(uint64_t a, uint64_t b);

#endif
