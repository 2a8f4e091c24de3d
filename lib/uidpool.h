/*
 * uidpool.h: the worker uids, one per call at a time. A uid some
 * process may still hold (left by a daemon killed with SIGKILL, or a
 * call whose cgroup would not go) is lost until a later sweep finds it
 * free; it is never handed out meanwhile.
 */
#ifndef SB_UIDPOOL_H
#define SB_UIDPOOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct uidpool {
	uid_t first;
	size_t n;
	uint8_t *st;    /* UIDPOOL_FREE, _BUSY or _LOST per uid */
	uint64_t *cg;   /* a lost uid's cgroup to remove first, or 0 */
	uint64_t tried; /* the last sweep of the lost uids (monotonic ms) */
};

/* n uids from first; kills what holds them, waiting about a second. */
void uidpool_init(struct uidpool *p, uid_t first, size_t n);

/*
 * A free uid's index, or -1. With none free, sweeps the lost ones (a
 * scan of /proc, at most every two seconds) first.
 */
long uidpool_take(struct uidpool *p);
/* How many uids are free now (lost ones are not counted). */
size_t uidpool_nfree(const struct uidpool *p);

/* Give back index i; its call's cgroup cg (0: none) goes first. */
void uidpool_put(struct uidpool *p, size_t i, uint64_t cg);

#endif
