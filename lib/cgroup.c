/*
 * cgroup.c: a memory and pids group per id, with limits, for processes
 * this process starts. cgroup v2 where both controllers are available
 * to us, else the v1 memory and pids hierarchies (hosts that mount them
 * as v1). Groups are made under our own cgroup, so limits on us still
 * bind them, and are named after our pid and the id, never reused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "util.h"
#include "xmalloc.h"

enum cg_mode { CG_NONE, CG_V1, CG_V2 };

static enum cg_mode mode;
/* .../<name>; cpu_base is v1's cpuacct (empty: none), v2's is mem_base */
static char mem_base[PATH_MAX], pids_base[PATH_MAX], cpu_base[PATH_MAX];

/* Our own path in a hierarchy ("0" = v2, else a v1 controller). */
static int
own_path(const char *ctrl, char *out, size_t len)
{
	char line[1024], *p, *q;
	FILE *f;
	int found = 0;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((p = strchr(line, ':')) == NULL ||
		    (q = strchr(p + 1, ':')) == NULL)
			continue;
		*q = '\0';
		if ((strcmp(ctrl, "0") == 0 && strncmp(line, "0:", 2) == 0 &&
		        p[1] == '\0') ||
		    (strcmp(ctrl, "0") != 0 && strcmp(p + 1, ctrl) == 0)) {
			snprintf(
			    out, len, "%s", strcmp(q + 1, "/") ? q + 1 : "");
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

static int
write_file(const char *dir, const char *name, const char *val)
{
	char path[PATH_MAX];
	int fd, r;

	if (fmt_path(path, sizeof(path), "%s/%s", dir, name) == -1 ||
	    (fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	r = write_full(fd, val, strlen(val));
	close(fd);
	return r;
}

/*
 * v2 lets a group hand controllers to its children only while it holds
 * no process, and a service manager's group (systemd's, with Delegate=)
 * holds us: move into a leaf of our own beside the groups of the calls.
 */
static int
leave_to_leaf(const char *parent)
{
	char leaf[PATH_MAX];

	if (fmt_path(leaf, sizeof(leaf), "%s/supervisor", parent) == -1 ||
	    (mkdir(leaf, 0755) == -1 && errno != EEXIST) ||
	    write_file(leaf, "cgroup.procs", "0") == -1)
		return -1;
	log_info("cgroup v2: moved into %s, so that %s can hand memory and "
	         "pids to the calls' groups",
	    leaf, parent);
	return 0;
}

/* Read "key N" from a flat-keyed file such as memory.events. */
static uint64_t
read_key(const char *dir, const char *name, const char *key)
{
	char path[PATH_MAX], line[256];
	unsigned long long v = 0;
	size_t kl = strlen(key);
	FILE *f;

	if (fmt_path(path, sizeof(path), "%s/%s", dir, name) == -1 ||
	    (f = fopen(path, "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, kl) == 0 && line[kl] == ' ')
			v = strtoull(line + kl + 1, NULL, 10);
	fclose(f);
	return v;
}

static int
v2_usable(char *base, size_t len)
{
	static const char *const roots[] = {
	    "/sys/fs/cgroup", "/sys/fs/cgroup/unified", NULL};
	char own[1024], ctl[PATH_MAX], buf[256];
	int i, fd;
	ssize_t n;

	if (own_path("0", own, sizeof(own)) == -1)
		return 0;
	for (i = 0; roots[i] != NULL; i++) {
		if (fmt_path(ctl, sizeof(ctl), "%s%s/cgroup.controllers",
		        roots[i], own) == -1 ||
		    (fd = open(ctl, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		if (strstr(buf, "memory") && strstr(buf, "pids"))
			return fmt_path(base, len, "%s%s", roots[i], own) == 0;
	}
	return 0;
}

/* Kill every process listed in dir's cgroup.procs (v1, or v2 unaided). */
static int
kill_listed(const char *dir)
{
	char path[PATH_MAX];
	int n = 0;
	long pid;
	FILE *f;

	if (fmt_path(path, sizeof(path), "%s/cgroup.procs", dir) == -1 ||
	    (f = fopen(path, "re")) == NULL)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 1 && kill((pid_t)pid, SIGKILL) == 0)
			n++;
	fclose(f);
	return n;
}

/* Kill every process in the group at dir: cgroup.kill (v2), else its list. */
static void
group_kill(const char *dir)
{
	if (mode != CG_V2 || write_file(dir, "cgroup.kill", "1") == -1)
		(void)kill_listed(dir);
}

/*
 * Remove the leftover groups of owners that are gone (a master killed
 * with SIGKILL): whatever still runs in them is killed first, and the
 * group removed once it is empty (waiting at most about a second).
 */
static void
sweep(const char *base)
{
	char path[PATH_MAX];
	struct dirent *de;
	int tries;
	DIR *d;

	if ((d = opendir(base)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int pid;

		if (de->d_type != DT_DIR ||
		    sscanf(de->d_name, "m%d.c", &pid) != 1 || pid <= 0 ||
		    (pid != (int)getpid() &&
		        (kill(pid, 0) == 0 || errno != ESRCH)) ||
		    fmt_path(path, sizeof(path), "%s/%s", base, de->d_name) ==
		        -1)
			continue;
		for (tries = 0;
		     tries < 100 && rmdir(path) == -1 && errno == EBUSY;
		     tries++) {
			if (tries == 0)
				log_warnx("%s: a dead master left processes: "
				          "killed",
				    path);
			group_kill(path);
			usleep(10000);
		}
	}
	closedir(d);
}

/*
 * Pick the hierarchy and create our parent group, bounded to total_mb of
 * memory for all calls together (what work dirs left charged to it
 * included); no cgroups is logged.
 */
void
cgroup_init(const char *name, uint64_t total_mb)
{
	char own[1024], parent[PATH_MAX], v[32];

	mode = CG_NONE;
	if (v2_usable(parent, sizeof(parent))) {
		/* v2: a leaf may not hold processes and children at once. */
		if (fmt_path(mem_base, sizeof(mem_base), "%s/%s", parent,
		        name) == 0 &&
		    (mkdir(mem_base, 0755) == 0 || errno == EEXIST) &&
		    (write_file(parent, "cgroup.subtree_control",
		         "+memory +pids") == 0 ||
		        (errno == EBUSY && leave_to_leaf(parent) == 0 &&
		            write_file(parent, "cgroup.subtree_control",
		                "+memory +pids") == 0)) &&
		    write_file(mem_base, "cgroup.subtree_control",
		        "+memory +pids") == 0) {
			mode = CG_V2;
			snprintf(pids_base, sizeof(pids_base), "%s", mem_base);
		}
	}
	cpu_base[0] = '\0';
	if (mode == CG_NONE && own_path("memory", own, sizeof(own)) == 0 &&
	    fmt_path(mem_base, sizeof(mem_base), "/sys/fs/cgroup/memory%s/%s",
	        own, name) == 0 &&
	    own_path("pids", own, sizeof(own)) == 0 &&
	    fmt_path(pids_base, sizeof(pids_base), "/sys/fs/cgroup/pids%s/%s",
	        own, name) == 0) {
		if ((mkdir(mem_base, 0755) == 0 || errno == EEXIST) &&
		    (mkdir(pids_base, 0755) == 0 || errno == EEXIST))
			mode = CG_V1;
		/* CPU accounting, where the host mounts cpuacct. */
		if (mode == CG_V1 &&
		    (own_path("cpuacct", own, sizeof(own)) == 0 ||
		        own_path("cpu,cpuacct", own, sizeof(own)) == 0)) {
			if (fmt_path(cpu_base, sizeof(cpu_base),
			        access("/sys/fs/cgroup/cpuacct/cpuacct.usage",
			            F_OK) == 0
			            ? "/sys/fs/cgroup/cpuacct%s/%s"
			            : "/sys/fs/cgroup/cpu,cpuacct%s/%s",
			        own, name) == -1 ||
			    (mkdir(cpu_base, 0755) == -1 && errno != EEXIST))
				cpu_base[0] = '\0';
		}
	}
	if (mode != CG_NONE) {
		sweep(mem_base);
		if (mode == CG_V1)
			sweep(pids_base);
		if (cpu_base[0] != '\0')
			sweep(cpu_base);
	}
	snprintf(v, sizeof(v), "%llu", (unsigned long long)total_mb << 20);
	if (mode != CG_NONE &&
	    write_file(mem_base,
	        mode == CG_V2 ? "memory.max" : "memory.limit_in_bytes",
	        v) == -1)
		log_warn("%s: cannot bound all calls to %llu MiB", mem_base,
		    (unsigned long long)total_mb);
	if (mode == CG_NONE)
		log_warnx("no usable cgroup memory/pids controllers: workers "
		          "are bound by rlimits only");
	else
		log_info("cgroup %s limits under %s, %llu MiB for all calls",
		    mode == CG_V2 ? "v2" : "v1", mem_base,
		    (unsigned long long)total_mb);
}

/* One call's group in each hierarchy; cpu is empty where v1 has none. */
struct cg_dirs {
	char mem[PATH_MAX], pids[PATH_MAX], cpu[PATH_MAX];
};

/*
 * A group per call, never reused: a group that could not be removed yet
 * must not hand its charges or counters to a later call. Our pid is in
 * the name too: several daemons may share the parent group.
 */
static int
group_dirs(uint64_t id, struct cg_dirs *d)
{
	int pid = (int)getpid();
	unsigned long long n = (unsigned long long)id;

	d->cpu[0] = '\0';
	return fmt_path(
	           d->mem, sizeof(d->mem), "%s/m%d.c%llu", mem_base, pid, n) ||
	               fmt_path(d->pids, sizeof(d->pids), "%s/m%d.c%llu",
	                   pids_base, pid, n) ||
	               (mode == CG_V1 && cpu_base[0] != '\0' &&
	                   fmt_path(d->cpu, sizeof(d->cpu), "%s/m%d.c%llu",
	                       cpu_base, pid, n))
	           ? -1
	           : 0;
}

/* Set the limits of id's groups (made by cgroup_prepare). */
static int
group_limit(const struct cg_dirs *d, uint64_t memory_mb, uint64_t npids,
    struct error *e)
{
	char v[32], p[32];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)memory_mb << 20);
	snprintf(p, sizeof(p), "%llu", (unsigned long long)npids);
	if (mode == CG_V2) {
		if (write_file(d->mem, "memory.max", v) == -1 ||
		    write_file(d->mem, "pids.max", p) == -1)
			return error_set(e, ERR_SANDBOX_FAILED,
			    "cgroup limits: %s", strerror(errno));
		(void)write_file(d->mem, "memory.swap.max", "0");
		return 0;
	}
	if (write_file(d->mem, "memory.limit_in_bytes", v) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "memory limit: %s", strerror(errno));
	(void)write_file(d->mem, "memory.memsw.limit_in_bytes", v);
	if (write_file(d->pids, "pids.max", p) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "pids limit: %s", strerror(errno));
	return 0;
}

int
cgroup_limit(uint64_t id, uint64_t memory_mb, uint64_t npids, struct error *e)
{
	struct cg_dirs d;

	if (mode == CG_NONE)
		return 0;
	if (group_dirs(id, &d) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "cgroup path too long");
	return group_limit(&d, memory_mb, npids, e);
}

/* Open dir/name for a child to write "0" to; -1 with errno. */
static int
join_open(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (fmt_path(path, sizeof(path), "%s/%s", dir, name) == -1)
		return -1;
	return open(path, O_WRONLY | O_CLOEXEC);
}

/*
 * The child moves itself: on cgroup v1, "0" written to `tasks` moves the
 * writing thread alone, without the host-wide lock (and its RCU grace
 * period, about 1 ms, up to 5 under load) a write of a pid to
 * cgroup.procs takes in the master's loop. The child is one thread then.
 */
int
cgroup_prepare(uint64_t id, uint64_t memory_mb, uint64_t npids,
    int join[CGROUP_JOIN_MAX], struct error *e)
{
	const char *file = mode == CG_V2 ? "cgroup.procs" : "tasks";
	struct cg_dirs d;
	int n = 0;

	if (mode == CG_NONE)
		return 0;
	if (group_dirs(id, &d) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "cgroup path too long");
	if ((mkdir(d.mem, 0755) == -1 && errno != EEXIST) ||
	    (mode == CG_V1 && mkdir(d.pids, 0755) == -1 && errno != EEXIST) ||
	    (d.cpu[0] != '\0' && mkdir(d.cpu, 0755) == -1 && errno != EEXIST)) {
		error_set(
		    e, ERR_SANDBOX_FAILED, "cgroup mkdir: %s", strerror(errno));
		(void)cgroup_remove(id);
		return -1;
	}
	if (group_limit(&d, memory_mb, npids, e) == -1) {
		(void)cgroup_remove(id);
		return -1;
	}
	if ((join[n++] = join_open(d.mem, file)) == -1 ||
	    (mode == CG_V1 && (join[n++] = join_open(d.pids, file)) == -1) ||
	    (d.cpu[0] != '\0' && (join[n++] = join_open(d.cpu, file)) == -1)) {
		error_set(
		    e, ERR_SANDBOX_FAILED, "cgroup join: %s", strerror(errno));
		while (--n > 0)
			close(join[n - 1]);
		(void)cgroup_remove(id);
		return -1;
	}
	return n;
}

/*
 * The number in a file (memory.peak), or after "key " in a flat-keyed
 * one (cpu.stat); *ok says whether it was there.
 */
static uint64_t
read_num_key(const char *dir, const char *name, const char *key, int *ok)
{
	char path[PATH_MAX], line[256];
	unsigned long long v = 0;
	size_t kl = key != NULL ? strlen(key) : 0;
	FILE *f;

	if (fmt_path(path, sizeof(path), "%s/%s", dir, name) == -1 ||
	    (f = fopen(path, "re")) == NULL)
		return 0;
	while (!*ok && fgets(line, sizeof(line), f) != NULL)
		if (key == NULL ||
		    (strncmp(line, key, kl) == 0 && line[kl] == ' ')) {
			v = strtoull(
			    line + (key != NULL ? kl + 1 : 0), NULL, 10);
			*ok = 1;
		}
	fclose(f);
	return v;
}

/*
 * What the kernel counted for id's group: CPU time and peak memory of
 * every process the call ever had (wait4 of its init misses whatever was
 * killed rather than reaped: that is only the stand-in without cgroups),
 * and whether a limit ended or held it.
 */
int
cgroup_usage(uint64_t id, const struct rusage *ru, struct cgroup_usage *u)
{
	int have_cpu = 0, have_mem = 0;
	struct cg_dirs d;

	memset(u, 0, sizeof(*u));
	if (mode != CG_NONE && group_dirs(id, &d) == 0) {
		const char *cpu = mode == CG_V2 ? d.mem : d.cpu;

		u->oom =
		    mode == CG_V2
		        ? read_key(d.mem, "memory.events", "oom_kill") > 0
		        : read_key(d.mem, "memory.oom_control", "oom_kill") > 0;
		u->pids_max = read_key(d.pids, "pids.events", "max") > 0;
		u->mem_peak_kb =
		    read_num_key(d.mem,
		        mode == CG_V2 ? "memory.peak"
		                      : "memory.max_usage_in_bytes",
		        NULL, &have_mem) >>
		    10;
		if (cpu[0] != '\0')
			u->cpu_ms = mode == CG_V2
			                ? read_num_key(cpu, "cpu.stat",
			                      "usage_usec", &have_cpu) /
			                      1000
			                : read_num_key(cpu, "cpuacct.usage",
			                      NULL, &have_cpu) /
			                      1000000;
	}
	if ((!have_cpu || !have_mem) && ru == NULL)
		return -1;
	if (!have_cpu)
		u->cpu_ms =
		    ((uint64_t)ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) *
		        1000 +
		    ((uint64_t)ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) /
		        1000;
	if (!have_mem)
		u->mem_peak_kb = (uint64_t)ru->ru_maxrss;
	return 0;
}

/* 1 when memory and pids limits are enforced by cgroups. */
int
cgroup_active(void)
{
	return mode != CG_NONE;
}

/*
 * End every process in id's group: cgroup.kill on v2, on v1 the group's
 * own task list. Never a scan of the host's processes.
 */
void
cgroup_kill(uint64_t id)
{
	struct cg_dirs d;

	if (mode != CG_NONE && group_dirs(id, &d) == 0)
		group_kill(mode == CG_V2 ? d.mem : d.pids);
}

/* Remove id's groups; -1 while a process is still in one. */
int
cgroup_remove(uint64_t id)
{
	const char *dirs[3];
	struct cg_dirs d;
	int i, r = 0;

	if (mode == CG_NONE || group_dirs(id, &d) == -1)
		return 0;
	dirs[0] = d.mem;
	dirs[1] = mode == CG_V1 ? d.pids : "";
	dirs[2] = d.cpu;
	for (i = 0; i < 3; i++)
		if (dirs[i][0] != '\0' && rmdir(dirs[i]) == -1 &&
		    errno != ENOENT) {
			log_warn("rmdir %s", dirs[i]);
			r = -1;
		}
	return r;
}
