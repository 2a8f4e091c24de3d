/*
 * uidpool.c: which worker uids may take a call. A uid is handed out
 * only when no process holds it, so no call can signal, ptrace or read
 * what another left behind under the same uid.
 */
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "log.h"
#include "os.h"
#include "uidpool.h"
#include "util.h"
#include "xmalloc.h"

enum { UIDPOOL_FREE, UIDPOOL_BUSY, UIDPOOL_LOST };

#define UIDPOOL_RETRY_MS 2000

/* Sweep the uids marked in held (wait: kill and wait a second); -1. */
static int
uidpool_sweep(struct uidpool *p, uint8_t *held, int wait)
{
	if (os_sweep_uids(p->first, (uid_t)(p->first + p->n - 1), held, wait) ==
	    -1) {
		log_warn("sweep worker uids");
		return -1;
	}
	return 0;
}

void
uidpool_init(struct uidpool *p, uid_t first, size_t n)
{
	size_t i;

	p->first = first;
	p->n = n;
	p->st = xmalloc(n);
	p->cg = xcalloc(n, sizeof(*p->cg));
	p->tried = 0;
	memset(p->st, 1, n); /* every uid swept */
	if (uidpool_sweep(p, p->st, 1) == -1)
		fatalx("cannot tell which worker uids are free");
	for (i = 0; i < n; i++) {
		p->st[i] = p->st[i] ? UIDPOOL_LOST : UIDPOOL_FREE;
		if (p->st[i] == UIDPOOL_LOST)
			log_warnx("worker uid %llu: a process of a previous "
			          "daemon will not die; the uid waits until "
			          "it does",
			    (unsigned long long)first + i);
	}
}

/* Lost uids nothing holds any more are free again. */
static void
uidpool_retry(struct uidpool *p)
{
	uint64_t now = now_mono_ms();
	uint8_t *held;
	size_t i;

	if (now - p->tried < UIDPOOL_RETRY_MS)
		return;
	p->tried = now;
	held = xcalloc(p->n, 1);
	for (i = 0; i < p->n; i++)
		held[i] = p->st[i] == UIDPOOL_LOST;
	if (uidpool_sweep(p, held, 0) == 0)
		for (i = 0; i < p->n; i++)
			if (p->st[i] == UIDPOOL_LOST && !held[i] &&
			    (p->cg[i] == 0 || cgroup_remove(p->cg[i]) == 0)) {
				p->st[i] = UIDPOOL_FREE;
				p->cg[i] = 0;
				log_info("worker uid %llu is back in service",
				    (unsigned long long)p->first + i);
			}
	free(held);
}

long
uidpool_take(struct uidpool *p)
{
	size_t i, lost = 0;

	for (i = 0; i < p->n; i++)
		if (p->st[i] == UIDPOOL_FREE) {
			p->st[i] = UIDPOOL_BUSY;
			return (long)i;
		} else
			lost += p->st[i] == UIDPOOL_LOST;
	if (lost == 0)
		return -1;
	uidpool_retry(p);
	for (i = 0; i < p->n; i++)
		if (p->st[i] == UIDPOOL_FREE) {
			p->st[i] = UIDPOOL_BUSY;
			return (long)i;
		}
	return -1;
}

size_t
uidpool_nfree(const struct uidpool *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->n; i++)
		n += p->st[i] == UIDPOOL_FREE;
	return n;
}

void
uidpool_put(struct uidpool *p, size_t i, uint64_t cg)
{
	/* A uid is reused only once nothing of the call can hold it. */
	if (cg != 0 && cgroup_remove(cg) == -1) {
		log_warnx("worker uid %llu out of service: its last call's "
		          "cgroup holds a process",
		    (unsigned long long)p->first + i);
		p->st[i] = UIDPOOL_LOST;
		p->cg[i] = cg;
	} else
		p->st[i] = UIDPOOL_FREE;
}
