/*
 * files.c: the session files skill. It runs as any skill does, in a
 * worker on the session's work dir at /work, and the broker turns
 * put_file, get_file, list_files and delete_file into its commands put,
 * get, list and delete (the name it was run by). Whatever an earlier
 * call left in /work is hostile: every path is resolved beneath /work
 * by openat2 without following a link or leaving the mount, only
 * regular files are read or written, and walks are bounded. It answers
 * with one msgpack map on stdout (docs/protocol.md, "Session files"),
 * which the broker decodes strictly.
 *
 *   put PATH OFFSET   stdin: the bytes to write at OFFSET (0: replace)
 *   get PATH OFFSET   stdin: the most data bytes the answer may carry
 *   list              stdin: the most bytes the answer may take
 *   delete PATH
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../../lib/error.h"
#include "../../../lib/util.h"
#include "../../../lib/xmalloc.h"
#include "../../../proto/client.h"
#include "../../../proto/mp.h"

#define FILES_WORK "/work"
#define FILES_IN_MAX (2U << 20) /* stdin: a put's data is at most a frame */
#define FILES_ENTRIES 100000    /* list: directory entries looked at */
#define FILES_BOUND_DEFAULT 60000
#define FILES_SHOWN_MAX 4096 /* bytes of a listed path, escaped */
#define FILES_LIST_MAX 4096  /* entries of a listing: what a reply holds */
/* A path in a message: its first 120 bytes, cut on a character. */
#define FILES_P(p) (int)utf8_cut((p), 120), (p)
#define FILES_RESOLVE                                                          \
	(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |       \
	    RESOLVE_NO_XDEV)

struct files_entry {
	char *raw;        /* the path as the file system has it */
	char *path;       /* as shown: escaped to UTF-8 where it is not */
	const char *kind; /* file, dir, symlink, other */
	uint64_t size;
};

struct files_list {
	struct files_entry *v;
	size_t n, cap;
	long budget; /* entries still to look at */
	int truncated;
};

static int work_fd = -1;

/* The answer, then the exit code: 0 when it did what was asked. */
static void __attribute__((noreturn)) files_answer(struct mp_enc *m, int ok)
{
	if (write_full(STDOUT_FILENO, m->sb.data, m->sb.size) == -1)
		_exit(2);
	enc_free(m);
	exit(ok ? 0 : 1);
}

static void __attribute__((noreturn, format(printf, 2, 3)))
files_fail(enum err_type t, const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	struct mp_enc m;
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(msg, sizeof(msg), fmt, ap) >= (int)sizeof(msg))
		utf8_trim(msg); /* the broker takes UTF-8 only */
	va_end(ap);
	enc_init(&m);
	enc_map_open(&m);
	enc_kbool(&m, "ok", 0);
	enc_key(&m, "error");
	enc_map_open(&m);
	enc_kstr(&m, "type", err_type_name(t));
	enc_kstr(&m, "message", msg);
	enc_map_close(&m);
	enc_map_close(&m);
	files_answer(&m, 0);
}

/* Why an open of path failed, as the client should read it. */
static void __attribute__((noreturn)) files_open_fail(const char *path, int err)
{
	if (err == ENOENT)
		files_fail(
		    ERR_NOT_FOUND, "no \"%.*s\" in the session", FILES_P(path));
	if (err == ELOOP)
		files_fail(ERR_BAD_REQUEST,
		    "\"%.*s\" is or passes through a symbolic link: "
		    "session files never follow links",
		    FILES_P(path));
	if (err == EXDEV)
		files_fail(ERR_BAD_REQUEST,
		    "\"%.*s\" leaves the session's work dir", FILES_P(path));
	if (err == ENOTDIR)
		files_fail(ERR_BAD_REQUEST,
		    "a component of \"%.*s\" is not a directory",
		    FILES_P(path));
	if (err == EISDIR)
		files_fail(
		    ERR_BAD_REQUEST, "\"%.*s\" is a directory", FILES_P(path));
	if (err == EACCES || err == EPERM)
		files_fail(ERR_PERMISSION_DENIED,
		    "\"%.*s\": its mode or a directory's on the way denies it "
		    "(a skill of the session set it)",
		    FILES_P(path));
	if (err == ENOSPC || err == EDQUOT)
		files_fail(ERR_RESOURCE_LIMIT,
		    "the session's work dir is full (worker.work_mb)");
	files_fail(ERR_INTERNAL, "%.*s: %s", FILES_P(path), strerror(err));
}

static int
files_openat2(int dfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_CLOEXEC),
	    .mode = (flags & O_CREAT) ? mode : 0,
	    .resolve = FILES_RESOLVE,
	};

	return (int)syscall(SYS_openat2, dfd, name, &how, sizeof(how));
}

/*
 * The directory holding path's last component, beneath /work, made
 * where missing when create is set; *last points into path at it.
 */
static int
files_parent(char *path, int create, const char **last)
{
	char *slash = strrchr(path, '/'), *p, *next;
	int dfd, fd;

	*last = slash != NULL ? slash + 1 : path;
	if ((dfd = dup(work_fd)) == -1)
		files_fail(ERR_INTERNAL, "dup: %s", strerror(errno));
	for (p = path; slash != NULL && p <= slash; p = next + 1) {
		next = strchr(p, '/');
		*next = '\0';
		if (create && mkdirat(dfd, p, 0755) == -1 && errno != EEXIST)
			files_open_fail(path, errno);
		fd = files_openat2(dfd, p, O_PATH | O_DIRECTORY, 0);
		*next = '/';
		if (fd == -1)
			files_open_fail(path, errno);
		close(dfd);
		dfd = fd;
	}
	return dfd;
}

static void
files_hash(int fd, const char *path, char *hex)
{
	if (lseek(fd, 0, SEEK_SET) == -1 || sha256_fd(fd, hex) == -1)
		files_fail(
		    ERR_INTERNAL, "%.*s cannot be read whole", FILES_P(path));
}

/* A regular file opened to read, or the reason it cannot be. */
static int
files_open_reg(char *path, struct stat *st)
{
	const char *last;
	int dfd, fd;

	dfd = files_parent(path, 0, &last);
	fd = files_openat2(dfd, last, O_RDONLY | O_NONBLOCK, 0);
	close(dfd);
	if (fd == -1)
		files_open_fail(path, errno);
	if (fstat(fd, st) == -1)
		files_fail(ERR_INTERNAL, "fstat: %s", strerror(errno));
	if (!S_ISREG(st->st_mode))
		files_fail(ERR_BAD_REQUEST, "\"%.*s\" is no regular file",
		    FILES_P(path));
	return fd;
}

/* The bytes on stdin, at most max. */
static uint8_t *
files_stdin(size_t max, size_t *len)
{
	uint8_t *buf = xmalloc(max + 1);
	ssize_t n;

	*len = 0;
	while ((n = read(STDIN_FILENO, buf + *len, max + 1 - *len)) > 0)
		if ((*len += (size_t)n) > max)
			files_fail(ERR_RESOURCE_LIMIT,
			    "more than %zu bytes on stdin", max);
	if (n == -1)
		files_fail(ERR_INTERNAL, "stdin: %s", strerror(errno));
	return buf;
}

/* get and list: the bound the broker gave on stdin. */
static uint64_t
files_bound(void)
{
	uint64_t v = FILES_BOUND_DEFAULT;
	size_t len;
	char *s = (char *)files_stdin(32, &len);

	s[len] = '\0';
	if (len > 0 && parse_uint(s, 1, FILES_IN_MAX, &v) == -1)
		files_fail(ERR_BAD_REQUEST, "stdin must be a byte count");
	free(s);
	return v;
}

static uint64_t
files_offset(const char *s)
{
	uint64_t v;

	if (parse_uint(s, 0, INT64_MAX, &v) == -1)
		files_fail(ERR_BAD_REQUEST, "bad offset \"%.32s\"", s);
	return v;
}

static void
files_begin(struct mp_enc *m, const char *path)
{
	enc_init(m);
	enc_map_open(m);
	enc_kbool(m, "ok", 1);
	if (path != NULL)
		enc_kstr(m, "path", path);
}

/* All len bytes at off: 0, or the errno that stopped it. */
static int
files_write(int fd, const uint8_t *data, size_t len, uint64_t off)
{
	size_t done;
	ssize_t n;

	for (done = 0; done < len; done += (size_t)n)
		if ((n = pwrite(fd, data + done, len - done,
		         (off_t)(off + done))) <= 0)
			return n == 0 ? ENOSPC : errno;
	return 0;
}

/*
 * put at 0: a file written aside, under a name no one chose, in the
 * directory it goes to, then renamed over PATH; never over a link or
 * anything but a regular file.
 */
static int
files_put_aside(int dfd, const char *last, char *path, char *tmp, size_t len)
{
	uint8_t rnd[8];
	struct stat st;
	char hex[17];
	int fd;

	if (fstatat(dfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			files_open_fail(path, ELOOP);
		if (S_ISDIR(st.st_mode))
			files_open_fail(path, EISDIR);
		if (!S_ISREG(st.st_mode))
			files_fail(ERR_BAD_REQUEST,
			    "\"%.*s\" is no regular file", FILES_P(path));
	} else if (errno != ENOENT)
		files_open_fail(path, errno);
	if (random_bytes(rnd, sizeof(rnd)) == -1)
		files_fail(ERR_INTERNAL, "no random bytes");
	hex_encode(rnd, sizeof(rnd), hex);
	hex[16] = '\0';
	snprintf(tmp, len, ".files-put-%s", hex);
	if ((fd = files_openat2(dfd, tmp, O_RDWR | O_CREAT | O_EXCL, 0644)) ==
	    -1)
		files_open_fail(path, errno);
	return fd;
}

/*
 * put PATH OFFSET: stdin at OFFSET; 0 replaces the file, else OFFSET is
 * its end. A put that fails leaves the file as it was.
 */
static void
files_put(char *path, uint64_t off)
{
	char hex[65], tmp[64] = "";
	struct rlimit fsize;
	const char *last;
	struct mp_enc m;
	struct stat st;
	uint8_t *data;
	int dfd, fd, err;
	size_t len;

	data = files_stdin(FILES_IN_MAX, &len);
	if (getrlimit(RLIMIT_FSIZE, &fsize) == -1)
		files_fail(ERR_INTERNAL, "getrlimit: %s", strerror(errno));
	/* An append needs its file: nothing is made for one that fails. */
	dfd = files_parent(path, off == 0, &last);
	if (off != 0) {
		if ((fd = files_openat2(dfd, last, O_RDWR | O_NONBLOCK, 0)) ==
		    -1)
			files_open_fail(path, errno);
		if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode))
			files_fail(ERR_BAD_REQUEST,
			    "\"%.*s\" is no regular file", FILES_P(path));
		if ((uint64_t)st.st_size != off)
			files_fail(ERR_BAD_REQUEST,
			    "offset %llu is not the size of \"%.*s\" (%llu): "
			    "a put goes on where the file ends",
			    (unsigned long long)off, FILES_P(path),
			    (unsigned long long)st.st_size);
	}
	if (fsize.rlim_cur != RLIM_INFINITY && off + len > fsize.rlim_cur)
		files_fail(ERR_RESOURCE_LIMIT,
		    "\"%.*s\" would be %llu bytes, over the file size bound "
		    "of %llu (limits.fsize_mb)",
		    FILES_P(path), (unsigned long long)(off + len),
		    (unsigned long long)fsize.rlim_cur);
	if (off == 0)
		fd = files_put_aside(dfd, last, path, tmp, sizeof(tmp));
	if ((err = files_write(fd, data, len, off)) == 0 && *tmp != '\0' &&
	    renameat(dfd, tmp, dfd, last) == -1)
		err = errno;
	if (err != 0) { /* as it was: the aside file goes, an append is cut */
		if (*tmp != '\0')
			(void)unlinkat(dfd, tmp, 0);
		else if (ftruncate(fd, (off_t)off) == -1)
			files_fail(ERR_INTERNAL,
			    "\"%.*s\" keeps part of a failed append: %s",
			    FILES_P(path), strerror(errno));
		if (err == EFBIG)
			files_fail(ERR_RESOURCE_LIMIT,
			    "\"%.*s\" is over the file size bound "
			    "(limits.fsize_mb)",
			    FILES_P(path));
		files_open_fail(path, err);
	}
	if (fstat(fd, &st) == -1)
		files_fail(ERR_INTERNAL, "fstat: %s", strerror(errno));
	files_hash(fd, path, hex);
	files_begin(&m, path);
	enc_kuint(&m, "size_bytes", (uint64_t)st.st_size);
	enc_kstr(&m, "sha256", hex);
	enc_map_close(&m);
	free(data);
	files_answer(&m, 1);
}

/* get PATH OFFSET: at most the bound's bytes from OFFSET, and the whole
 * file's size and sha256. */
static void
files_get(char *path, uint64_t off)
{
	uint64_t bound = files_bound(), want, got;
	struct mp_enc m;
	struct stat st;
	uint8_t *buf;
	char hex[65];
	ssize_t n;
	int fd;

	fd = files_open_reg(path, &st);
	if (off > (uint64_t)st.st_size)
		files_fail(ERR_BAD_REQUEST,
		    "offset %llu is past the end of \"%.*s\" (%llu bytes)",
		    (unsigned long long)off, FILES_P(path),
		    (unsigned long long)st.st_size);
	want = (uint64_t)st.st_size - off;
	want = want < bound ? want : bound;
	buf = xmalloc(want + 1);
	for (got = 0; got < want; got += (uint64_t)n)
		if ((n = pread(
		         fd, buf + got, want - got, (off_t)(off + got))) <= 0)
			files_fail(ERR_INTERNAL, "\"%.*s\" changed while read",
			    FILES_P(path));
	files_hash(fd, path, hex);
	files_begin(&m, path);
	enc_kuint(&m, "offset", off);
	enc_kuint(&m, "size_bytes", (uint64_t)st.st_size);
	enc_kstr(&m, "sha256", hex);
	enc_kbin(&m, "data", buf, (size_t)want);
	enc_map_close(&m);
	free(buf);
	files_answer(&m, 1);
}

static void
files_add(
    struct files_list *l, const char *path, const char *kind, uint64_t size)
{
	char *shown = utf8_escape(path);

	if (strlen(shown) > FILES_SHOWN_MAX) { /* beyond what a reply names */
		free(shown);
		l->truncated = 1;
		return;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		l->v = xreallocarray(l->v, l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = (struct files_entry){xstrdup(path), shown, kind, size};
}

/* Every entry beneath dfd, never through a link, bounded. */
static void
files_walk(struct files_list *l, int dfd, const char *shown, int depth)
{
	struct dirent *de;
	struct stat st;
	char *path;
	DIR *d;
	int cfd;

	if (depth >= CLIENT_PATH_DEPTH || (d = fdopendir(dfd)) == NULL) {
		l->truncated = 1;
		close(dfd);
		return;
	}
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (--l->budget < 0) {
			l->truncated = 1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ==
		    -1)
			continue;
		if (*shown != '\0')
			xasprintf(&path, "%s/%s", shown, de->d_name);
		else
			path = xstrdup(de->d_name);
		files_add(l, path,
		    S_ISREG(st.st_mode)   ? "file"
		    : S_ISDIR(st.st_mode) ? "dir"
		    : S_ISLNK(st.st_mode) ? "symlink"
		                          : "other",
		    S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0);
		if (!S_ISDIR(st.st_mode))
			;
		else if ((cfd = files_openat2(dirfd(d), de->d_name,
		              O_RDONLY | O_DIRECTORY, 0)) != -1)
			files_walk(l, cfd, path, depth + 1);
		else /* e.g. a mode that lets no one read it */
			l->truncated = 1;
		free(path);
	}
	if (de == NULL && errno != 0) /* a directory that cannot be read */
		l->truncated = 1;
	closedir(d);
}

static int
files_cmp(const void *a, const void *b)
{
	return strcmp(((const struct files_entry *)a)->raw,
	    ((const struct files_entry *)b)->raw);
}

/* One entry of the listing, hashed when it is a regular file. */
static void
files_entry_enc(struct mp_enc *m, const struct files_entry *f)
{
	char hex[65];
	struct stat st;
	int fd = -1;

	enc_map_open(m);
	enc_kstr(m, "path", f->path);
	enc_kstr(m, "kind", f->kind);
	enc_kuint(m, "size_bytes", f->size);
	if (strcmp(f->kind, "file") == 0 &&
	    (fd = files_openat2(work_fd, f->raw, O_RDONLY | O_NONBLOCK, 0)) !=
	        -1 &&
	    fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    sha256_fd(fd, hex) == 0)
		enc_kstr(m, "sha256", hex);
	if (fd != -1)
		close(fd);
	enc_map_close(m);
}

/* list: every entry of the work dir, sorted by path, within the bound. */
static void
files_ls(void)
{
	struct files_list l = {NULL, 0, 0, FILES_ENTRIES, 0};
	uint64_t bound = files_bound(), used = 64;
	struct mp_enc m, *ents;
	size_t i, k;
	int fd;

	if ((fd = files_openat2(work_fd, ".", O_RDONLY | O_DIRECTORY, 0)) == -1)
		files_fail(ERR_INTERNAL, "%s: %s", FILES_WORK, strerror(errno));
	files_walk(&l, fd, "", 0);
	qsort(l.v, l.n, sizeof(*l.v), files_cmp);
	ents = xcalloc(l.n + 1, sizeof(*ents));
	for (k = 0; k < l.n; k++) {
		enc_init(&ents[k]);
		files_entry_enc(&ents[k], &l.v[k]);
		if ((used += ents[k].sb.size) > bound || k == FILES_LIST_MAX) {
			enc_free(&ents[k]);
			l.truncated = 1;
			break;
		}
	}
	files_begin(&m, NULL);
	enc_key(&m, "files");
	enc_array(&m, k);
	for (i = 0; i < k; i++) {
		enc_raw(&m, ents[i].sb.data, ents[i].sb.size);
		enc_free(&ents[i]);
	}
	enc_kbool(&m, "truncated", l.truncated);
	enc_map_close(&m);
	files_answer(&m, 1);
}

/* delete PATH: a file, a link (not what it names) or an empty dir. */
static void
files_delete(char *path)
{
	const char *last, *kind;
	struct mp_enc m;
	struct stat st;
	char hex[65] = "";
	int dfd, fd;

	dfd = files_parent(path, 0, &last);
	if (fstatat(dfd, last, &st, AT_SYMLINK_NOFOLLOW) == -1)
		files_open_fail(path, errno);
	kind = S_ISREG(st.st_mode)   ? "file"
	       : S_ISDIR(st.st_mode) ? "dir"
	       : S_ISLNK(st.st_mode) ? "symlink"
	                             : "other";
	/* Removing needs no read access: a file no one may read has no
	 * sha256 in the answer, and goes all the same. */
	if (S_ISREG(st.st_mode) &&
	    (fd = files_openat2(dfd, last, O_RDONLY | O_NONBLOCK, 0)) != -1) {
		files_hash(fd, path, hex);
		close(fd);
	} else if (S_ISREG(st.st_mode) && errno != EACCES)
		files_open_fail(path, errno);
	if (unlinkat(dfd, last, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) == -1) {
		if (errno == ENOTEMPTY || errno == EEXIST)
			files_fail(ERR_BAD_REQUEST,
			    "directory \"%.*s\" is not empty", FILES_P(path));
		files_open_fail(path, errno);
	}
	files_begin(&m, path);
	enc_kstr(&m, "kind", kind);
	enc_kuint(
	    &m, "size_bytes", S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0);
	if (*hex != '\0')
		enc_kstr(&m, "sha256", hex);
	enc_map_close(&m);
	files_answer(&m, 1);
}

int
main(int argc, char *argv[])
{
	const char *op = strrchr(argv[0], '/');
	struct error e;
	char *path;
	int want;

	op = op != NULL ? op + 1 : argv[0];
	/* A write past limits.fsize_mb fails with EFBIG, answered. */
	if (signal(SIGXFSZ, SIG_IGN) == SIG_ERR)
		files_fail(ERR_INTERNAL, "signal: %s", strerror(errno));
	want = strcmp(op, "list") == 0                            ? 1
	       : strcmp(op, "delete") == 0                        ? 2
	       : strcmp(op, "put") == 0 || strcmp(op, "get") == 0 ? 3
	                                                          : 0;
	if (want == 0)
		files_fail(
		    ERR_BAD_REQUEST, "run as \"%.32s\": not a command", op);
	if (argc != want)
		files_fail(
		    ERR_BAD_REQUEST, "%s takes %d argument(s)", op, want - 1);
	if ((work_fd = open(FILES_WORK, O_PATH | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		files_fail(ERR_INTERNAL, "%s: %s", FILES_WORK, strerror(errno));
	if (want == 1)
		files_ls();
	path = xstrdup(argv[1]);
	if (client_path_check(path, strlen(path), &e) == -1)
		files_fail(e.type, "%s", e.msg);
	if (want == 2)
		files_delete(path);
	if (strcmp(op, "put") == 0)
		files_put(path, files_offset(argv[2]));
	files_get(path, files_offset(argv[2]));
}
