/*
 * cgroup.h: a memory and pids cgroup per id for processes we start (v2
 * where delegated, else v1), and what the kernel says happened in it.
 */
#ifndef SB_CGROUP_H
#define SB_CGROUP_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "error.h"

/*
 * Choose the hierarchy, make our parent group name (bounded to total_mb
 * of memory for everything in it), sweep dead owners'.
 */
void cgroup_init(const char *name, uint64_t total_mb);
/* 1 when memory and pids limits are enforced by cgroups. */
int cgroup_active(void);
/* At most this many files a process writes to join a call's groups. */
#define CGROUP_JOIN_MAX 3
/*
 * Make id's groups with their limits, and open (close-on-exec) in join
 * the files a child writes "0" to, to move itself in (os_spawn): the
 * number opened, 0 without cgroups, -1 on error (the groups removed).
 */
int cgroup_prepare(uint64_t id, uint64_t memory_mb, uint64_t npids,
    int join[CGROUP_JOIN_MAX], struct error *e);
/* Set id's limits anew (a pre-forked worker's, when its grant comes). */
int cgroup_limit(
    uint64_t id, uint64_t memory_mb, uint64_t npids, struct error *e);
/* What the kernel counted for a call's group. */
struct cgroup_usage {
	int oom;              /* the memory limit killed a process */
	int pids_max;         /* the pids limit refused a fork */
	uint64_t cpu_ms;      /* of every process the group had */
	uint64_t mem_peak_kb; /* peak memory charged to the group */
};
/*
 * ru (wait4 of the group's first process) stands in where no group
 * counts; -1 when it would have to and is NULL (the process is not
 * reaped yet).
 */
int cgroup_usage(uint64_t id, const struct rusage *ru, struct cgroup_usage *u);
/* Kill every process in id's group (cgroup.kill, else its task list). */
void cgroup_kill(uint64_t id);
/* Remove id's group; -1 while a process is still in it. */
int cgroup_remove(uint64_t id);

#endif
