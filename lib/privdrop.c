/* privdrop.c: the privilege-drop sequence used by every unprivileged role. */
#include "privdrop.h"

#include <errno.h>
#include <grp.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int
privdrop(uid_t uid, gid_t gid, const char *chroot_dir, struct error *e)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (uid == 0)
		return error_set(e, ERR_INTERNAL, "refusing to drop to uid 0");
	if (chroot_dir != NULL &&
	    (chroot(chroot_dir) == -1 || chdir("/") == -1))
		return error_set(e, ERR_INTERNAL, "chroot %s: %s", chroot_dir,
		    strerror(errno));
	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1)
		return error_set(e, ERR_INTERNAL, "drop to %u:%u: %s",
		    (unsigned)uid, (unsigned)gid, strerror(errno));
	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1 ||
	    ru != uid || eu != uid || su != uid || rg != gid || eg != gid ||
	    sg != gid)
		return error_set(e, ERR_INTERNAL, "ids not fully dropped");
	/* The drop must be permanent: regaining root has to fail. */
	if (setuid(0) != -1 || seteuid(0) != -1 || setgid(0) != -1)
		return error_set(e, ERR_INTERNAL, "could regain root");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return error_set(
		    e, ERR_INTERNAL, "no_new_privs: %s", strerror(errno));
	return 0;
}
