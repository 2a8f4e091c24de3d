/* privdrop.h: drop root the OpenSSH way, and prove it cannot come back. */
#ifndef SB_PRIVDROP_H
#define SB_PRIVDROP_H

#include <sys/types.h>

#include "error.h"

/*
 * chroot to dir (if not NULL), chdir("/"), setgroups to gid only,
 * setresgid, setresuid, then verify that regaining root fails, and set
 * no_new_privs. Any failure is an error; callers treat it as fatal.
 */
int privdrop(uid_t uid, gid_t gid, const char *chroot_dir, struct error *e);

#endif
