/*
 * cgroup.h: a memory and pids cgroup per id for processes we start (v2
 * where delegated, else v1), and what the kernel says happened in it.
 */
#ifndef SB_CGROUP_H
#define SB_CGROUP_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* Choose the hierarchy, make our parent group name, sweep dead owners'. */
void cgroup_init(const char *name);
/* 1 when memory and pids limits are enforced by cgroups. */
int cgroup_active(void);
/* Make id's group with its limits and move pid into it. */
int cgroup_enter(uint64_t id, pid_t pid, uint64_t memory_mb, uint64_t npids,
    struct error *e);
/* Did the memory limit kill, or the pids limit refuse, in id's group? */
void cgroup_limits_hit(uint64_t id, int *oom, int *pids_max);
/* Kill every process in id's group (cgroup.kill, else its task list). */
void cgroup_kill(uint64_t id);
/* Remove id's group; -1 while a process is still in it. */
int cgroup_remove(uint64_t id);

#endif
