/*
 * master_files.c: the files a call created or changed under its writable
 * directories, with size and sha256. It runs after every process of the
 * call is gone, never follows a link, opens nothing but regular files,
 * and is bounded in depth, entries and bytes hashed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/util.h"
#include "master.h"

#define SCAN_DEPTH 16
#define SCAN_ENTRIES 20000
#define HASH_MAX_BYTES (16ULL << 20) /* per file; larger ones: no sha256 */

struct scan {
	uint64_t
	    *hash_budget; /* bytes the master may still hash for this call */
	uint64_t since_ns;
	struct file_written *out;
	size_t max, n;
	long budget;
};

/* sha256 of an open regular file, or "" when it is too big or unreadable. */
static void
hash_fd(int fd, uint64_t size, char out[65])
{
	unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	EVP_MD_CTX *ctx;
	ssize_t n;

	out[0] = '\0';
	if (size > HASH_MAX_BYTES || (ctx = EVP_MD_CTX_new()) == NULL)
		return;
	if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			EVP_DigestUpdate(ctx, buf, (size_t)n);
		if (n == 0 && EVP_DigestFinal_ex(ctx, md, &len))
			hex_encode(md, len, out);
	}
	EVP_MD_CTX_free(ctx);
}

static void
scan_file(struct scan *s, int dfd, const char *name, const char *shown,
    const struct stat *st)
{
	struct file_written *f;
	uint64_t mtime = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL +
	                 (uint64_t)st->st_mtim.tv_nsec;
	int fd;

	if (mtime < s->since_ns || s->n == s->max)
		return;
	f = &s->out[s->n];
	if (fmt_path(f->path, sizeof(f->path), "%s/%s", shown, name) == -1)
		return;
	f->size = (uint64_t)st->st_size;
	f->sha256[0] = '\0';
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd != -1) {
		struct stat again;
		/* Hashing is bounded per call: the event loop must not stall.
		 */
		if (fstat(fd, &again) == 0 && S_ISREG(again.st_mode) &&
		    again.st_ino == st->st_ino &&
		    (uint64_t)again.st_size <= *s->hash_budget) {
			*s->hash_budget -= (uint64_t)again.st_size;
			hash_fd(fd, (uint64_t)again.st_size, f->sha256);
		}
		close(fd);
	}
	s->n++;
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
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL && --s->budget > 0) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
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

size_t
files_written_scan(const char *dir, const char *shown_as, uint64_t since_ns,
    struct file_written *out, size_t max, uint64_t *hash_budget)
{
	struct scan s = {hash_budget, since_ns, out, max, 0, SCAN_ENTRIES};
	int fd;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return 0;
	scan_dir(&s, fd, shown_as, 0);
	return s.n;
}
