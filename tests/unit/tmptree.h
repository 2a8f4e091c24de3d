/*
 * tmptree.h: the temp trees of the unit tests that read files: a file
 * written with its parent directories, and the tree removed. Include
 * after cmocka.h.
 */
#ifndef SB_TEST_TMPTREE_H
#define SB_TEST_TMPTREE_H

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static inline int
tmptree_rm_one(
    const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove dir and all beneath it, never following a link. */
static inline void
tmptree_rm(const char *dir)
{
	nftw(dir, tmptree_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write dir/rel with this mode, making the directories on the way. */
static inline void
tmptree_put(const char *dir, const char *rel, const char *text, mode_t mode)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, rel) >=
	    (int)sizeof(path))
		fail_msg("path too long: %s/%s", dir, rel);
	for (slash = path + strlen(dir) + 1; (slash = strchr(slash, '/'));
	     slash++) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	if ((f = fopen(path, "w")) == NULL)
		fail_msg("cannot write %s", path);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

#endif
