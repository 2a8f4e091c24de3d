/* privdrop.h: drop root the OpenSSH way, and prove it cannot come back. */
#ifndef SB_PRIVDROP_H
#define SB_PRIVDROP_H

#include <sys/types.h>

#include "error.h"

struct privdrop {
	uid_t uid;              /* never 0 */
	gid_t gid;              /* never 0 */
	const char *chroot_dir; /* NULL: stay where we are */
};

/*
 * The one privilege drop, for every role and every worker, in order:
 * chroot and chdir("/") (when asked), empty the capability bounding and
 * ambient sets, setgroups(0), setresgid, setresuid; then check every id
 * changed, that setuid(0), seteuid(0) and setgid(0) fail, that no
 * capability is left in any set; then no_new_privs. Any failure is an
 * error; callers treat it as fatal.
 */
int privdrop(const struct privdrop *pd, struct error *e);

#endif
