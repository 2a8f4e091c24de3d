/*
 * worker_sandbox.c: the construction steps, in order. Each is one
 * function; the tables are the order: first what no grant changes (a
 * pre-forked worker does it before its grant comes), then the grant's.
 */
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../lib/privdrop.h"
#include "../lib/util.h"
#include "worker.h"

static int
step_workdir(const struct grant *g, struct error *e)
{
	return workdir_prepare(g, e) == -1 || datadir_prepare(g, e) == -1 ? -1
	                                                                  : 0;
}

/*
 * The namespaces the master's clone did not make (it waits while its
 * child runs, and a network namespace takes a millisecond or more):
 * ipc, uts, network unless the host's, and cgroup, rooted at the call's
 * own group (the master placed us there before our exec), so
 * /proc/self/cgroup shows "/", not the master's pid and call counter.
 * Then a hostname of its own in the new UTS namespace.
 */
static int
prep_namespaces(const struct msg_prep *p, struct error *e)
{
	static const char host[] = "localhost", domain[] = "(none)";
	int flags = CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;

	if (unshare(flags | (p->host_net ? 0 : CLONE_NEWNET)) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "unshare: %s", strerror(errno));
	if (sethostname(host, sizeof(host) - 1) == -1 ||
	    setdomainname(domain, sizeof(domain) - 1) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "hostname: %s", strerror(errno));
	return 0;
}

/* A new session: no controlling terminal to inject into. */
static int
prep_session(const struct msg_prep *p UNUSED, struct error *e)
{
	if (setsid() == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "setsid: %s", strerror(errno));
	return 0;
}

static int
set_limit(int res, rlim_t v, const char *name, struct error *e)
{
	struct rlimit rl = {v, v};

	if (setrlimit(res, &rl) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "setrlimit %s: %s",
		    name, strerror(errno));
	return 0;
}

/* Limits that bind the skill; memory comes last, just before exec. */
static int
step_rlimits(const struct grant *g, struct error *e)
{
	rlim_t cpu = (rlim_t)(g->timeout_ms / 1000 + 1);

	return set_limit(RLIMIT_CORE, 0, "CORE", e) ||
	               set_limit(RLIMIT_CPU, cpu, "CPU", e) ||
	               set_limit(
	                   RLIMIT_NOFILE, (rlim_t)g->nofile, "NOFILE", e) ||
	               set_limit(RLIMIT_NPROC, (rlim_t)g->pids, "NPROC", e) ||
	               set_limit(
	                   RLIMIT_FSIZE, (rlim_t)g->fsize_mb << 20, "FSIZE", e)
	           ? -1
	           : 0;
}

/* The one privilege drop (lib/privdrop.c), to this call's worker uid. */
static int
step_identity(const struct grant *g, struct error *e)
{
	struct privdrop pd = {(uid_t)g->worker_uid, (gid_t)g->worker_gid, NULL};

	if (privdrop(&pd, e) == -1) {
		e->type = ERR_SANDBOX_FAILED;
		return -1;
	}
	return 0;
}

static int
step_mounts(const struct grant *g, struct error *e)
{
	return sandbox_mounts(g, e);
}

static int
step_landlock(const struct grant *g, struct error *e)
{
	return sandbox_landlock(g, e);
}

static int
step_seccomp(const struct grant *g, struct error *e)
{
	return sandbox_seccomp(g, e);
}

/* Inside the private root the work dir is /work, the skill's /skill. */
static int
step_cwd(const struct grant *g, struct error *e)
{
	const char *dir = g->cwd == GRANT_CWD_SKILL ? "/skill" : "/work";

	if (chdir(dir) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "chdir %s: %s", dir,
		    strerror(errno));
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(const struct msg_prep *, struct error *);
} prep_steps[] = {
    {"namespaces", prep_namespaces},
    {"session", prep_session},
    {"root", sandbox_root_prep},
    {"seccomp", sandbox_seccomp_prep},
};

int
sandbox_prep(const struct msg_prep *p, const char **step, struct error *e)
{
	size_t i;

	for (i = 0; i < sizeof(prep_steps) / sizeof(prep_steps[0]); i++) {
		*step = prep_steps[i].name;
		if (prep_steps[i].fn(p, e) == -1)
			return -1;
	}
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(const struct grant *, struct error *);
} steps[] = {
    {"network", sandbox_net},
    {"workdir", step_workdir},
    {"mounts", step_mounts},
    {"rlimits", step_rlimits},
    {"identity", step_identity},
    {"cwd", step_cwd},
    {"landlock", step_landlock},
    {"seccomp", step_seccomp},
};

int
sandbox_build(const struct grant *g, const char **step, struct error *e)
{
	size_t i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		*step = steps[i].name;
		if (steps[i].fn(g, e) == -1)
			return -1;
	}
	return 0;
}

/* The address-space cap, which the skill's child sets before its exec:
 * it binds the skill, not the builder. */
rlim_t
sandbox_as_limit(const struct grant *g)
{
	return (rlim_t)(g->as_mb ? g->as_mb : g->memory_mb) << 20;
}
