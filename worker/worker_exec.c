/*
 * worker_exec.c: where the exec view may put executable code. The
 * worker binds the system paths noexec, then makes executable again
 * only the grant's programs (real paths policyd resolved) and the
 * directories shared objects are mapped from (worker.library_paths,
 * globs the admin chose, expanded here on the host's own tree). Each
 * must lie inside a system path that the sandbox shows at its own
 * place, so that the bind lands where the program is looked for. Both
 * are read at PREP, in the daemon's namespace, as the system binds are
 * taken (the master retires a pre-forked worker once the daemon's
 * mount table changed, and after a while in any case).
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "worker.h"

#define EXEC_LIB_DIRS_MAX 128 /* directories bound executable */

/* The system paths that are their own real path, as PREP found them. */
static char **exec_roots;
static size_t nexec_roots;

/* Note which of PREP's system paths are their own real path. */
void
exec_prep(const struct msg_prep *p)
{
	char real[PATH_MAX];
	struct stat st;
	size_t i;

	strarr_free(exec_roots, nexec_roots);
	exec_roots = xcalloc(p->nsys_paths + 1, sizeof(char *));
	nexec_roots = 0;
	for (i = 0; i < p->nsys_paths; i++)
		if (lstat(p->sys_paths[i], &st) == 0 && !S_ISLNK(st.st_mode) &&
		    realpath(p->sys_paths[i], real) != NULL &&
		    strcmp(real, p->sys_paths[i]) == 0)
			exec_roots[nexec_roots++] = xstrdup(real);
}

/* real lies inside a system path that is its own real path. */
int
exec_in_system(const char *real)
{
	size_t i;

	for (i = 0; i < nexec_roots; i++)
		if (path_under(real, exec_roots[i]))
			return 1;
	return 0;
}

/* Add the real path of dir, once. */
static int
exec_lib_add(const char *dir, char **v, size_t *n, struct error *e)
{
	char real[PATH_MAX];
	struct stat st;
	size_t i;

	if (realpath(dir, real) == NULL || stat(real, &st) == -1 ||
	    !S_ISDIR(st.st_mode) || !exec_in_system(real))
		return 0; /* missing, or not the sandbox's: never bound */
	for (i = 0; i < *n; i++)
		if (strcmp(v[i], real) == 0)
			return 0;
	if (*n == EXEC_LIB_DIRS_MAX)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "worker.library_paths: more than %d directories",
		    EXEC_LIB_DIRS_MAX);
	v[(*n)++] = xstrdup(real);
	return 0;
}

int
exec_lib_dirs(
    const struct msg_prep *p, char ***out, size_t *nout, struct error *e)
{
	char **v = xcalloc(EXEC_LIB_DIRS_MAX + 1, sizeof(char *));
	size_t i, k, n = 0;
	glob_t gl;
	int r;

	for (i = 0; i < p->nlib_paths; i++) {
		memset(&gl, 0, sizeof(gl));
		r = glob(
		    p->lib_paths[i], GLOB_ONLYDIR | GLOB_NOSORT, NULL, &gl);
		if (r == GLOB_NOMATCH)
			continue;
		if (r != 0) {
			globfree(&gl);
			strarr_free(v, n);
			return error_set(e, ERR_SANDBOX_FAILED,
			    "worker.library_paths %s: glob failed",
			    p->lib_paths[i]);
		}
		for (k = 0; k < gl.gl_pathc; k++)
			if (exec_lib_add(gl.gl_pathv[k], v, &n, e) == -1) {
				globfree(&gl);
				strarr_free(v, n);
				return -1;
			}
		globfree(&gl);
	}
	*out = v;
	*nout = n;
	return 0;
}
