/*
 * policyd_exec.h: the programs a call may execute, resolved at grant
 * time: the entry point's interpreter (its "#!" line, or an ELF
 * program's loader), each declared exec name searched in the sandbox's
 * PATH, and the loader of each. Every one is a real path, a regular
 * executable file inside the worker's system paths.
 */
#ifndef SB_POLICYD_EXEC_H
#define SB_POLICYD_EXEC_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"

/* The sandbox's PATH, as the grant's environment sets it. */
#define EXEC_SANDBOX_PATH "/usr/local/bin:/usr/bin:/bin"
/* "#!" lines longer than this are cut by the kernel (BINPRM_BUF_SIZE). */
#define EXEC_SHEBANG_MAX 256
/* Interpreters of interpreters, as deep as the kernel follows them. */
#define EXEC_DEPTH_MAX 4

/* worker.system_paths: where every program must lie. */
void exec_system_paths(char *const *paths, size_t n);
/*
 * Parse the first bytes of a file as a "#!" line, as the kernel does:
 * 1 with the interpreter in interp and the rest of the line, trimmed,
 * in arg ("" for none); 0 when buf does not start with "#!"; -1 (e set)
 * when the interpreter is empty, not absolute or not whole within buf.
 */
int exec_shebang(const char *buf, size_t len, char *interp, size_t ilen,
    char *arg, size_t alen, struct error *e);
/*
 * The programs of one call: what runs the entry (skill_dir/entry, read
 * beneath skill_dir, or interp, a name searched in the sandbox's PATH
 * or an absolute path, which then reads it) and the declared names.
 * *out holds real paths, without repeats (the caller frees it with
 * strarr_free); *interp_real the interpreter's, or NULL without interp.
 * -1 (e set, ERR_SANDBOX_FAILED) names the program that cannot be run
 * and why.
 */
int exec_resolve(const char *skill_dir, const char *entry, const char *interp,
    char *const *names, size_t nnames, char ***out, size_t *nout,
    char **interp_real, struct error *e);

/*
 * exec_resolve, remembered: the same arguments within EXEC_MEMO_MS of
 * now_ms (a monotonic clock) get the answer resolved then, so a burst
 * of decisions reads each program once. Only successes are kept, in at
 * most EXEC_MEMO_SLOTS entries; exec_memo_clear forgets them all (a
 * reload).
 */
#define EXEC_MEMO_MS 1000
#define EXEC_MEMO_SLOTS 1024
int exec_resolve_memo(uint64_t now_ms, const char *skill_dir, const char *entry,
    const char *interp, char *const *names, size_t nnames, char ***out,
    size_t *nout, char **interp_real, struct error *e);
void exec_memo_clear(void);

#endif
