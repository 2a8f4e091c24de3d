/* privdrop.c: the privilege drop every role and every worker goes through. */
#include "privdrop.h"

#include <errno.h>
#include <grp.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

/* Empty the bounding and ambient sets while CAP_SETPCAP is still ours. */
static int
privdrop_bounding(struct error *e)
{
	cap_value_t c;

	for (c = 0; c <= CAP_LAST_CAP; c++)
		if (cap_drop_bound(c) == -1 && errno != EINVAL)
			return error_set(e, ERR_INTERNAL,
			    "drop bounding cap %d: %s", (int)c,
			    strerror(errno));
	if (cap_reset_ambient() == -1)
		return error_set(
		    e, ERR_INTERNAL, "reset ambient: %s", strerror(errno));
	return 0;
}

/* Clear every capability set and prove nothing is left. */
static int
privdrop_caps(struct error *e)
{
	cap_t empty = cap_init(), now;
	int same;

	if (empty == NULL || cap_set_proc(empty) == -1) {
		cap_free(empty);
		return error_set(
		    e, ERR_INTERNAL, "cap_set_proc: %s", strerror(errno));
	}
	now = cap_get_proc();
	same = now != NULL && cap_compare(now, empty) == 0;
	cap_free(now);
	cap_free(empty);
	if (!same)
		return error_set(
		    e, ERR_INTERNAL, "capabilities remain after the drop");
	return 0;
}

int
privdrop(const struct privdrop *pd, struct error *e)
{
	uid_t ru, eu, su, uid = pd->uid;
	gid_t rg, eg, sg, gid = pd->gid;

	if (uid == 0 || gid == 0)
		return error_set(e, ERR_INTERNAL, "refusing to drop to root");
	if (pd->chroot_dir != NULL &&
	    (chroot(pd->chroot_dir) == -1 || chdir("/") == -1))
		return error_set(e, ERR_INTERNAL, "chroot %s: %s",
		    pd->chroot_dir, strerror(errno));
	if (privdrop_bounding(e) == -1)
		return -1;
	if (setgroups(0, NULL) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1)
		return error_set(e, ERR_INTERNAL, "drop to %u:%u: %s",
		    (unsigned)uid, (unsigned)gid, strerror(errno));
	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1 ||
	    ru != uid || eu != uid || su != uid || rg != gid || eg != gid ||
	    sg != gid || getgroups(0, NULL) != 0)
		return error_set(e, ERR_INTERNAL, "ids not fully dropped");
	/* The drop must be permanent: regaining root has to fail. */
	if (setuid(0) != -1 || seteuid(0) != -1 || setgid(0) != -1)
		return error_set(e, ERR_INTERNAL, "could regain root");
	if (privdrop_caps(e) == -1)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return error_set(
		    e, ERR_INTERNAL, "no_new_privs: %s", strerror(errno));
	return 0;
}
