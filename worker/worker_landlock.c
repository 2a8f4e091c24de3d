/*
 * worker_landlock.c: Landlock mirroring the write grant, as defense in
 * depth behind the mounts. Writes (create, remove, write, rename across
 * dirs, truncate) are allowed only beneath /work, /tmp, /dev, /data when
 * granted read-write, and granted write paths; execution only of the
 * entry point and the grant's programs (each file by itself: its loader
 * is one of them); reads are left to the private root. A kernel without
 * Landlock gets the mounts alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/util.h"
#include "worker.h"

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */

#define WRITE_V1                                                               \
	(LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |       \
	    LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |    \
	    LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |        \
	    LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |      \
	    LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Allow access beneath path (or on the file path), if it exists. */
static int
allow_beneath(int ruleset, const char *path, uint64_t access, struct error *e)
{
	struct landlock_path_beneath_attr pb;
	int fd, r;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1)
		return errno == ENOENT
		           ? 0
		           : error_set(e, ERR_SANDBOX_FAILED,
		                 "landlock open %s: %s", path, strerror(errno));
	memset(&pb, 0, sizeof(pb));
	pb.allowed_access = access;
	pb.parent_fd = fd;
	r = (int)syscall(__NR_landlock_add_rule, ruleset,
	    LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	close(fd);
	if (r == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "landlock rule %s: %s",
		    path, strerror(errno));
	return 0;
}

/* The writable places, as the sandbox names them. */
static int
allow_writes(
    int ruleset, const struct grant *g, uint64_t access, struct error *e)
{
	static const char *const always[] = {"/work", "/tmp", "/dev", NULL};
	char path[PATH_MAX_LEN], *cut;
	size_t i;

	for (i = 0; always[i] != NULL; i++)
		if (allow_beneath(ruleset, always[i], access, e) == -1)
			return -1;
	for (i = 0; i < g->nperm[PERM_FS_WRITE]; i++) {
		const char *p = g->perm[PERM_FS_WRITE][i];
		if (strncmp(p, "$DATA_DIR", 9) == 0)
			p = "/data";
		else if (strncmp(p, "$SKILL_DIR", 10) == 0) {
			if (fmt_path(path, sizeof(path), "/skill%s", p + 10))
				continue;
			p = path;
		} else if (p[0] != '/')
			continue;
		if (p != path && fmt_path(path, sizeof(path), "%s", p))
			continue;
		if ((cut = strpbrk(path, "*?")) != NULL) {
			*cut = '\0';
			if ((cut = strrchr(path, '/')) != NULL && cut != path)
				*cut = '\0';
		}
		if (allow_beneath(ruleset, path, access, e) == -1)
			return -1;
	}
	return 0;
}

/* Execution of each program the grant resolved, and of the entry unless
 * an interpreter reads it. */
static int
allow_execs(int ruleset, const struct grant *g, struct error *e)
{
	char path[PATH_MAX_LEN];
	size_t i;

	if (fmt_path(path, sizeof(path), "/skill/%s", g->entry) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "entry: too long");
	if (g->interpreter[0] == '\0' &&
	    allow_beneath(ruleset, path, LANDLOCK_ACCESS_FS_EXECUTE, e) == -1)
		return -1;
	for (i = 0; i < g->nprograms; i++)
		if (allow_beneath(ruleset, g->programs[i],
		        LANDLOCK_ACCESS_FS_EXECUTE, e) == -1)
			return -1;
	return 0;
}

int
sandbox_landlock(const struct grant *g, struct error *e)
{
	/* struct landlock_ruleset_attr as of ABI 6, which older headers lack */
	struct {
		uint64_t handled_access_fs, handled_access_net, scoped;
	} attr;
	size_t attr_size = sizeof(uint64_t); /* ABI 1-3: handled_access_fs */
	uint64_t access = WRITE_V1;
	int abi, ruleset, r;

	abi = (int)syscall(__NR_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 1)
		return 0; /* not in this kernel: the mounts stand alone */
	if (abi >= 2)
		access |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		access |= LANDLOCK_ACCESS_FS_TRUNCATE;
	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = access | LANDLOCK_ACCESS_FS_EXECUTE;
	if (abi >= 4)
		attr_size = 2 * sizeof(uint64_t);
	/* No abstract unix socket made outside the sandbox is reachable,
	 * whatever network namespace the call has (worker.network: host). */
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET;
		attr_size = sizeof(attr);
	}
	ruleset =
	    (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "landlock ruleset: %s",
		    strerror(errno));
	r = allow_writes(ruleset, g, access, e);
	if (r == 0)
		r = allow_execs(ruleset, g, e);
	if (r == 0 && syscall(__NR_landlock_restrict_self, ruleset, 0) == -1)
		r = error_set(e, ERR_SANDBOX_FAILED, "landlock restrict: %s",
		    strerror(errno));
	close(ruleset);
	return r;
}
