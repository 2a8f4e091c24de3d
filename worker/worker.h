/* worker.h: building one worker's sandbox from its grant. */
#ifndef SB_WORKER_H
#define SB_WORKER_H

#include <sys/resource.h>

#include "../lib/error.h"
#include "../proto/fds.h"
#include "../proto/msg.h"

/* The steps no grant changes (PREP), in order; on failure *step names it. */
int sandbox_prep(const struct msg_prep *p, const char **step, struct error *e);
/* Then the grant's steps, in order; on failure *step names it. */
int sandbox_build(const struct grant *g, const char **step, struct error *e);
/* The skill's RLIMIT_AS, set in its child: it must not bind the builder. */
rlim_t sandbox_as_limit(const struct grant *g);
/* Give the work tree to the worker uid without following symlinks. */
int workdir_prepare(const struct grant *g, struct error *e);
int datadir_prepare(const struct grant *g, struct error *e);
/*
 * worker_net.c: under worker.network: proxy, loopback up and the
 * proxy's listener; sandbox_net_listener hands it over once (-1: none).
 */
int sandbox_net(const struct grant *g, struct error *e);
int sandbox_net_listener(void);
/* worker_mount.c: the private root, built and entered at PREP, then
 * the grant's mounts in it. */
int sandbox_root_prep(const struct msg_prep *p, struct error *e);
int sandbox_mounts(const struct grant *g, struct error *e);
/* worker_exec.c: where executable code may lie, as PREP found it. */
void exec_prep(const struct msg_prep *p);
int exec_in_system(const char *real);
/* The real directories of worker.library_paths (caller frees). */
int exec_lib_dirs(
    const struct msg_prep *p, char ***out, size_t *nout, struct error *e);
/* worker_landlock.c: writes only beneath the granted places, and
 * execution only of the entry and the grant's programs. */
int sandbox_landlock(const struct grant *g, struct error *e);
/* worker_seccomp.c: the syscall filters PREP carries, checked; the
 * grant's one installed last. */
int sandbox_seccomp_prep(const struct msg_prep *p, struct error *e);
int sandbox_seccomp(const struct grant *g, struct error *e);
/* worker_files.c: what the call wrote under dirs since since_ns. */
void files_scan(
    const char *const *dirs, uint64_t since_ns, struct msg_files *f);

#endif
