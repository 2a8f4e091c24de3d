/*
 * worker_seccomp.c: the syscall filter, last before exec. The master
 * compiled it once (lib/sysfilter.c) and sent it with PREP, one program
 * for calls without network and one for calls with it; here it is only
 * checked and installed (no_new_privs is set by then).
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "../lib/sysfilter.h"
#include "../lib/xmalloc.h"
#include "worker.h"

static struct sock_fprog progs[2]; /* without, with network */

int
sandbox_seccomp_prep(const struct msg_prep *p, struct error *e)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (p->filter_len[i] == 0 || p->filter_len[i] > SYSFILTER_MAX ||
		    p->filter_len[i] % sizeof(struct sock_filter) != 0)
			return error_set(
			    e, ERR_SANDBOX_FAILED, "malformed syscall filter");
		progs[i].len = (unsigned short)(p->filter_len[i] /
		                                sizeof(struct sock_filter));
		progs[i].filter = xmalloc(p->filter_len[i]);
		memcpy(progs[i].filter, p->filter[i], p->filter_len[i]);
	}
	return 0;
}

int
sandbox_seccomp(const struct grant *g, struct error *e)
{
	const struct sock_fprog *f = &progs[g->net != NET_NONE];

	if (f->filter == NULL ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, f, 0, 0) == -1)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "seccomp filter could not be loaded: %s",
		    f->filter == NULL ? "none" : strerror(errno));
	return 0;
}
