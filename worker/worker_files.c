/*
 * worker_files.c: the files a call created or changed under /work and
 * /data, with size and sha256, for the broker (FILES). The worker's
 * init runs it once every other process of the call is gone, so nothing
 * can change the tree under it; it never follows a link, opens nothing
 * but regular files without blocking, and is bounded in depth, entries
 * and bytes hashed. Names a skill chose may hold any bytes: they are
 * escaped to valid UTF-8.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "worker.h"

#define SCAN_DEPTH 16
#define SCAN_ENTRIES 20000
#define HASH_MAX_BYTES (16ULL << 20)    /* per file; larger: no sha256 */
#define HASH_BUDGET_BYTES (64ULL << 20) /* per call */

struct scan {
	uint64_t hash_budget; /* bytes still to hash for this call */
	uint64_t since_ns;
	struct msg_files *f;
	long entries; /* directory entries still to look at */
};

/* sha256 of an open regular file, or "" when it cannot be read whole. */
static char *
hash_fd(int fd)
{
	char hex[65];

	return xstrdup(sha256_fd(fd, hex) == 0 ? hex : "");
}

static void
scan_file(struct scan *s, int dfd, const char *name, const char *shown,
    const struct stat *st)
{
	uint64_t mtime = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL +
	                 (uint64_t)st->st_mtim.tv_nsec;
	struct written *w;
	struct stat again;
	char *path;
	int fd;

	if (mtime < s->since_ns)
		return;
	s->f->found++;
	if (s->f->nfiles == FILES_WRITTEN_MAX) {
		s->f->complete = 0;
		return;
	}
	xasprintf(&path, "%s/%s", shown, name);
	w = &s->f->files[s->f->nfiles++];
	w->path = utf8_escape(path);
	free(path);
	w->size = (uint64_t)st->st_size;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd != -1 && fstat(fd, &again) == 0 && S_ISREG(again.st_mode) &&
	    again.st_ino == st->st_ino &&
	    (uint64_t)again.st_size <= HASH_MAX_BYTES &&
	    (uint64_t)again.st_size <= s->hash_budget) {
		s->hash_budget -= (uint64_t)again.st_size;
		w->sha256 = hash_fd(fd);
	} else
		w->sha256 = xstrdup("");
	if (fd != -1)
		close(fd);
}

static void
scan_dir(struct scan *s, int dfd, const char *shown, int depth)
{
	char sub[PATH_MAX_LEN];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int cfd;

	if (depth > SCAN_DEPTH || (d = fdopendir(dfd)) == NULL) {
		s->f->complete = 0;
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (--s->entries <= 0) {
			s->f->complete = 0;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1)
			continue;
		if (S_ISREG(st.st_mode))
			scan_file(s, dirfd(d), de->d_name, shown, &st);
		else if (S_ISDIR(st.st_mode) &&
		         fmt_path(sub, sizeof(sub), "%s/%s", shown,
		             de->d_name) == 0 &&
		         (cfd = openat(dirfd(d), de->d_name,
		              O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		                  O_CLOEXEC)) != -1)
			scan_dir(s, cfd, sub, depth + 1);
	}
	closedir(d);
}

/* What the call wrote since since_ns, under each of dirs (NULL-ended). */
void
files_scan(const char *const *dirs, uint64_t since_ns, struct msg_files *f)
{
	struct scan s = {HASH_BUDGET_BYTES, since_ns, f, SCAN_ENTRIES};
	int fd;

	memset(f, 0, sizeof(*f));
	f->files = xcalloc(FILES_WRITTEN_MAX + 1, sizeof(*f->files));
	f->complete = 1;
	for (; *dirs != NULL; dirs++)
		if ((fd = open(*dirs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		                          O_CLOEXEC)) != -1)
			scan_dir(&s, fd, *dirs, 0);
}
