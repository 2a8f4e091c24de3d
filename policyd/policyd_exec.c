/*
 * policyd_exec.c: the programs a call may execute, resolved when the
 * call is decided. The worker lets the kernel execute only these (and
 * the entry point): Landlock's execute right per file and a view where
 * every other program lies on a noexec mount. So each must be a real
 * path the worker can bind as it is: a regular file, executable by
 * others, inside the system paths the worker binds at the same place.
 *
 * The entry point's interpreter comes from its "#!" line (with
 * "/usr/bin/env NAME", env and NAME), or is the loader of an ELF entry;
 * each declared name is searched in the sandbox's PATH; every ELF
 * program brings its loader (PT_INTERP). A declared program that is a
 * script needs its interpreter among the programs: declaring a script
 * does not grant what runs it. Reading the entry (the skill's bytes)
 * happens here, in the unprivileged policyd, never in the worker.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/msg.h"
#include "policyd_exec.h"

#define ELF_PHNUM_MAX 512 /* program headers looked at */

struct exec_set {
	char *v[GRANT_PROGRAMS_MAX];
	size_t n;
};

/* What a file starts with. */
enum exec_kind { EXEC_OTHER, EXEC_ELF, EXEC_SCRIPT };

/* The system paths that are their own real path (see exec_system_paths). */
static char **exec_sys;
static size_t exec_nsys;

/*
 * Keep the system paths the worker binds at their own place: a path
 * that is a symlink is recreated as a link (it binds nothing), and one
 * reached through a link is bound where the link names it, not where
 * realpath puts a program.
 */
void
exec_system_paths(char *const *paths, size_t n)
{
	char real[PATH_MAX];
	struct stat st;
	size_t i;

	strarr_free(exec_sys, exec_nsys);
	exec_sys = xcalloc(n + 1, sizeof(char *));
	exec_nsys = 0;
	for (i = 0; i < n; i++)
		if (lstat(paths[i], &st) == 0 && !S_ISLNK(st.st_mode) &&
		    realpath(paths[i], real) != NULL &&
		    strcmp(real, paths[i]) == 0)
			exec_sys[exec_nsys++] = xstrdup(real);
}

/* real lies inside one of the system paths. */
static int
exec_in_system(const char *real)
{
	size_t i, l;

	for (i = 0; i < exec_nsys; i++) {
		l = strlen(exec_sys[i]);
		if (strncmp(real, exec_sys[i], l) == 0 &&
		    (real[l] == '/' || real[l] == '\0' || l == 1))
			return 1;
	}
	return 0;
}

int
exec_shebang(const char *buf, size_t len, char *interp, size_t ilen, char *arg,
    size_t alen, struct error *e)
{
	size_t i, start, end, lineend;

	if (len < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	if (len > EXEC_SHEBANG_MAX)
		len = EXEC_SHEBANG_MAX;
	for (lineend = 2;
	     lineend < len && buf[lineend] != '\n' && buf[lineend] != '\0';
	     lineend++)
		;
	for (i = 2; i < lineend && (buf[i] == ' ' || buf[i] == '\t'); i++)
		;
	start = i;
	while (i < lineend && buf[i] != ' ' && buf[i] != '\t')
		i++;
	end = i;
	/* The kernel refuses a name cut at the end of its buffer (a
	 * shorter file ends in zeros there, which end the name). */
	if (end == len && len == EXEC_SHEBANG_MAX)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "its \"#!\" line names no whole interpreter within %d "
		    "bytes",
		    EXEC_SHEBANG_MAX);
	if (end == start || buf[start] != '/')
		return error_set(e, ERR_SANDBOX_FAILED,
		    "its \"#!\" line names no absolute interpreter");
	if (end - start >= ilen)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "its \"#!\" interpreter is too long");
	memcpy(interp, buf + start, end - start);
	interp[end - start] = '\0';
	while (end < lineend && (buf[end] == ' ' || buf[end] == '\t'))
		end++;
	i = lineend;
	while (i > end &&
	       (buf[i - 1] == ' ' || buf[i - 1] == '\t' || buf[i - 1] == '\r'))
		i--;
	if (i - end >= alen)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "its \"#!\" argument is too long");
	memcpy(arg, buf + end, i - end);
	arg[i - end] = '\0';
	return 1;
}

/* pread exactly len bytes at off; -1 on a short file or an error. */
static int
exec_pread(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	ssize_t n;

	if (off > (uint64_t)INT64_MAX - len)
		return -1;
	while (got < len) {
		n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/*
 * The loader an ELF file names (PT_INTERP) into interp, "" for a static
 * program; -1 (e set) for a file the kernel could not load as named.
 */
static int
exec_elf_interp(
    int fd, const char *label, char *interp, size_t ilen, struct error *e)
{
	Elf64_Ehdr h;
	Elf32_Ehdr h32;
	uint64_t phoff, off, size, type;
	size_t i, phnum, phent;
	int is64;

	interp[0] = '\0';
	if (exec_pread(fd, h.e_ident, EI_NIDENT, 0) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "%s: a cut ELF header", label);
	is64 = h.e_ident[EI_CLASS] == ELFCLASS64;
	if ((!is64 && h.e_ident[EI_CLASS] != ELFCLASS32) ||
	    h.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	                                  ? ELFDATA2LSB
	                                  : ELFDATA2MSB))
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: an ELF file of another machine", label);
	if (is64 ? exec_pread(fd, &h, sizeof(h), 0)
	         : exec_pread(fd, &h32, sizeof(h32), 0))
		return error_set(
		    e, ERR_SANDBOX_FAILED, "%s: a cut ELF header", label);
	phoff = is64 ? h.e_phoff : h32.e_phoff;
	phnum = is64 ? h.e_phnum : h32.e_phnum;
	phent = is64 ? h.e_phentsize : h32.e_phentsize;
	if (phnum > ELF_PHNUM_MAX ||
	    phent != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: ELF program headers out of bounds", label);
	for (i = 0; i < phnum; i++) {
		Elf64_Phdr p;
		Elf32_Phdr p32;

		if (is64 ? exec_pread(fd, &p, sizeof(p), phoff + i * phent)
		         : exec_pread(fd, &p32, sizeof(p32), phoff + i * phent))
			return error_set(e, ERR_SANDBOX_FAILED,
			    "%s: a cut ELF program header", label);
		type = is64 ? p.p_type : p32.p_type;
		off = is64 ? p.p_offset : p32.p_offset;
		size = is64 ? p.p_filesz : p32.p_filesz;
		if (type != PT_INTERP)
			continue;
		if (size < 2 || size > ilen ||
		    exec_pread(fd, interp, (size_t)size, off) == -1 ||
		    interp[size - 1] != '\0' || strlen(interp) != size - 1 ||
		    interp[0] != '/') {
			interp[0] = '\0';
			return error_set(e, ERR_SANDBOX_FAILED,
			    "%s: a malformed ELF interpreter", label);
		}
		return 0;
	}
	return 0;
}

/* Which kind fd is: its loader or its "#!" interpreter and argument. */
static int
exec_kind_of(int fd, const char *label, char *interp, size_t ilen, char *arg,
    size_t alen, enum exec_kind *kind, struct error *e)
{
	char head[EXEC_SHEBANG_MAX];
	ssize_t n;
	int r;

	*kind = EXEC_OTHER;
	interp[0] = arg[0] = '\0';
	while ((n = pread(fd, head, sizeof(head), 0)) == -1 && errno == EINTR)
		;
	if (n == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "%s: read: %s", label,
		    strerror(errno));
	if ((r = exec_shebang(head, (size_t)n, interp, ilen, arg, alen, e)) ==
	    -1) {
		char why[ERROR_MSG_MAX];

		snprintf(why, sizeof(why), "%s", e->msg);
		return error_set(e, ERR_SANDBOX_FAILED, "%s: %s", label, why);
	}
	if (r == 1)
		*kind = EXEC_SCRIPT;
	else if (n >= SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0) {
		*kind = EXEC_ELF;
		return exec_elf_interp(fd, label, interp, ilen, e);
	}
	return 0;
}

/* Add real to the set, once. */
static int
exec_set_add(struct exec_set *s, const char *real, struct error *e)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], real) == 0)
			return 0;
	if (s->n == GRANT_PROGRAMS_MAX)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "more than %d programs to allow", GRANT_PROGRAMS_MAX);
	s->v[s->n++] = xstrdup(real);
	return 0;
}

static int
exec_set_has(const struct exec_set *s, const char *real)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (strcmp(s->v[i], real) == 0)
			return 1;
	return 0;
}

/*
 * path's real path, a regular file executable by others inside the
 * system paths, and an open fd of it for reading its head.
 */
static int
exec_open_program(
    const char *label, const char *path, char *real, struct error *e)
{
	struct stat st;
	int fd;

	if (realpath(path, real) == NULL)
		return error_set(e, ERR_SANDBOX_FAILED, "%s: %s: %s", label,
		    path, errno == ENOENT ? "no such file" : strerror(errno));
	if (!exec_in_system(real))
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: %s lies outside the worker's system paths "
		    "(worker.system_paths)",
		    label, real);
	if ((fd = open(real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return error_set(e, ERR_SANDBOX_FAILED, "%s: open %s: %s",
		    label, real, strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & S_IXOTH) == 0) {
		close(fd);
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: %s is not a regular file the worker may execute",
		    label, real);
	}
	return fd;
}

/* The first file named name in the sandbox's PATH, or an absolute path. */
static int
exec_search(const char *label, const char *name, char *found, size_t len,
    struct error *e)
{
	char dirs[] = EXEC_SANDBOX_PATH, *dir, *save = NULL;

	if (strchr(name, '/') != NULL) {
		if (name[0] != '/' || path_has_dot(name))
			return error_set(e, ERR_SANDBOX_FAILED,
			    "%s: a program name or an absolute path, without "
			    "\".\" or \"..\"",
			    label);
		return fmt_path(found, len, "%s", name) == -1
		           ? error_set(e, ERR_SANDBOX_FAILED,
		                 "%s: path too long", label)
		           : 0;
	}
	for (dir = strtok_r(dirs, ":", &save); dir != NULL;
	     dir = strtok_r(NULL, ":", &save))
		if (fmt_path(found, len, "%s/%s", dir, name) == 0 &&
		    access(found, F_OK) == 0)
			return 0;
	return error_set(e, ERR_SANDBOX_FAILED,
	    "%s: no such program in the sandbox's PATH (%s)", label,
	    EXEC_SANDBOX_PATH);
}

static int exec_add(struct exec_set *s, const char *label, const char *path,
    int depth, int follow, struct error *e);

/* A "#!" interpreter and, for env, the program env runs. */
static int
exec_add_interp(struct exec_set *s, const char *label, const char *interp,
    const char *arg, int depth, struct error *e)
{
	char name[NAME_MAX + 1], found[PATH_MAX], what[PATH_MAX];
	const char *base = strrchr(interp, '/');
	size_t n = strcspn(arg, " \t");

	if (depth > EXEC_DEPTH_MAX)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: interpreters nested deeper than %d", label,
		    EXEC_DEPTH_MAX);
	if (exec_add(s, label, interp, depth, 1, e) == -1)
		return -1;
	/* "env -S ..." and other options: the skill declares the program. */
	if (strcmp(base + 1, "env") != 0 || n == 0 || arg[0] == '-')
		return 0;
	if (n >= sizeof(name))
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: env's program name too long", label);
	memcpy(name, arg, n);
	name[n] = '\0';
	snprintf(what, sizeof(what), "%.200s: %s's program \"%s\"", label,
	    interp, name);
	if (exec_search(what, name, found, sizeof(found), e) == -1)
		return -1;
	return exec_add(s, what, found, depth, 1, e);
}

/* Open the program at path: its real path, what kind it is, what runs it. */
static int
exec_inspect(const char *label, const char *path, char real[PATH_MAX],
    char interp[PATH_MAX], char arg[EXEC_SHEBANG_MAX], enum exec_kind *kind,
    struct error *e)
{
	int fd, r;

	if ((fd = exec_open_program(label, path, real, e)) == -1)
		return -1;
	r = exec_kind_of(
	    fd, label, interp, PATH_MAX, arg, EXEC_SHEBANG_MAX, kind, e);
	close(fd);
	return r;
}

/*
 * Add the program at path and its loader; with follow, a script's
 * interpreter too (the entry's chain), else that is checked later.
 */
static int
exec_add(struct exec_set *s, const char *label, const char *path, int depth,
    int follow, struct error *e)
{
	char real[PATH_MAX], interp[PATH_MAX], arg[EXEC_SHEBANG_MAX];
	enum exec_kind kind;

	if (exec_inspect(label, path, real, interp, arg, &kind, e) == -1 ||
	    exec_set_add(s, real, e) == -1)
		return -1;
	if (kind == EXEC_ELF && interp[0] != '\0') /* not a nesting */
		return exec_add_interp(s, label, interp, "", depth, e);
	if (kind == EXEC_SCRIPT && follow)
		return exec_add_interp(s, label, interp, arg, depth + 1, e);
	return 0;
}

/* A declared script runs only if what runs it is among the programs. */
static int
exec_check_script(const struct exec_set *s, const char *label, const char *path,
    struct error *e)
{
	char real[PATH_MAX], interp[PATH_MAX], arg[EXEC_SHEBANG_MAX];
	char ireal[PATH_MAX], found[PATH_MAX], name[NAME_MAX + 1];
	enum exec_kind kind;
	size_t n;
	int r;

	if ((r = exec_inspect(label, path, real, interp, arg, &kind, e)) ==
	        -1 ||
	    kind != EXEC_SCRIPT)
		return r;
	if (realpath(interp, ireal) == NULL || !exec_set_has(s, ireal))
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: %s is a script run by %s, which is not among the "
		    "programs (declare it in exec)",
		    label, real, interp);
	n = strcspn(arg, " \t");
	if (strcmp(strrchr(interp, '/') + 1, "env") != 0 || n == 0 ||
	    arg[0] == '-' || n >= sizeof(name))
		return 0;
	memcpy(name, arg, n);
	name[n] = '\0';
	if (exec_search(label, name, found, sizeof(found), e) == -1)
		return -1;
	if (realpath(found, ireal) == NULL || !exec_set_has(s, ireal))
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: %s is a script run by %s %s, which is not among the "
		    "programs (declare it in exec)",
		    label, real, interp, name);
	return 0;
}

/* The entry point, read beneath the skill dir: its interpreter chain. */
static int
exec_entry(struct exec_set *s, const char *skill_dir, const char *entry,
    struct error *e)
{
	char interp[PATH_MAX], arg[EXEC_SHEBANG_MAX], label[PATH_MAX + 16];
	struct open_how how;
	enum exec_kind kind;
	struct stat st;
	int dfd, fd, r;

	snprintf(label, sizeof(label), "entry %s", entry);
	if ((dfd = open(skill_dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "skill dir: %s", strerror(errno));
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	fd = (int)syscall(SYS_openat2, dfd, entry, &how, sizeof(how));
	close(dfd);
	if (fd == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "%s: %s", label, strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return error_set(
		    e, ERR_SANDBOX_FAILED, "%s: not a regular file", label);
	}
	r = exec_kind_of(
	    fd, label, interp, sizeof(interp), arg, sizeof(arg), &kind, e);
	close(fd);
	if (r == -1)
		return -1;
	if (kind == EXEC_OTHER)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: neither a \"#!\" script nor an ELF program", label);
	if (interp[0] == '\0') /* a static program needs nothing */
		return 0;
	return exec_add_interp(s, label, interp, arg, 1, e);
}

/* The interpreter named for the entry, and what it needs in turn. */
static int
exec_interp(
    struct exec_set *s, const char *interp, char **interp_real, struct error *e)
{
	char found[PATH_MAX], real[PATH_MAX], label[160];

	snprintf(label, sizeof(label), "interpreter \"%s\"", interp);
	if (exec_search(label, interp, found, sizeof(found), e) == -1 ||
	    exec_add(s, label, found, 1, 1, e) == -1)
		return -1;
	if (realpath(found, real) == NULL)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "%s: %s", label, strerror(errno));
	*interp_real = xstrdup(real);
	return 0;
}

int
exec_resolve(const char *skill_dir, const char *entry, const char *interp,
    char *const *names, size_t nnames, char ***out, size_t *nout,
    char **interp_real, struct error *e)
{
	char found[PATH_MAX], label[160];
	struct exec_set s;
	size_t i, ndeclared;
	char *declared[GRANT_PROGRAMS_MAX];

	memset(&s, 0, sizeof(s));
	*out = NULL;
	*nout = 0;
	*interp_real = NULL;
	ndeclared = 0;
	if (interp != NULL ? exec_interp(&s, interp, interp_real, e)
	                   : exec_entry(&s, skill_dir, entry, e))
		goto bad;
	for (i = 0; i < nnames; i++) {
		snprintf(label, sizeof(label), "exec \"%s\"", names[i]);
		if (exec_search(label, names[i], found, sizeof(found), e) ==
		        -1 ||
		    exec_add(&s, label, found, 0, 0, e) == -1)
			goto bad;
		if (ndeclared < GRANT_PROGRAMS_MAX)
			declared[ndeclared++] = xstrdup(found);
	}
	for (i = 0; i < ndeclared && i < nnames; i++) {
		snprintf(label, sizeof(label), "exec \"%s\"", names[i]);
		if (exec_check_script(&s, label, declared[i], e) == -1)
			goto bad;
	}
	for (i = 0; i < ndeclared; i++)
		free(declared[i]);
	*out = xcalloc(s.n + 1, sizeof(char *));
	memcpy(*out, s.v, s.n * sizeof(char *));
	*nout = s.n;
	return 0;
bad:
	for (i = 0; i < ndeclared; i++)
		free(declared[i]);
	for (i = 0; i < s.n; i++)
		free(s.v[i]);
	free(*interp_real);
	*interp_real = NULL;
	return -1;
}

/* One remembered resolution: its arguments as one key, its answer. */
struct exec_memo {
	char *key;
	size_t keylen;
	uint64_t at_ms;
	char **programs;
	size_t nprograms;
	char *interp_real;
};

static struct exec_memo *exec_memo; /* EXEC_MEMO_SLOTS, made at first use */

/* The arguments as one byte string: each part and a NUL after it. */
static char *
exec_memo_key(const char *skill_dir, const char *entry, const char *interp,
    char *const *names, size_t nnames, size_t *len)
{
	size_t i, n, off = 0;
	char *k;

	n = strlen(skill_dir) + strlen(entry) + 4 +
	    (interp != NULL ? strlen(interp) : 0);
	for (i = 0; i < nnames; i++)
		n += strlen(names[i]) + 1;
	k = xmalloc(n);
	off += (size_t)sprintf(k + off, "%s", skill_dir) + 1;
	off += (size_t)sprintf(k + off, "%s", entry) + 1;
	/* no interpreter and an empty one differ */
	off += (size_t)sprintf(k + off, "%c%s", interp != NULL ? 'i' : '-',
	           interp != NULL ? interp : "") +
	       1;
	for (i = 0; i < nnames; i++)
		off += (size_t)sprintf(k + off, "%s", names[i]) + 1;
	*len = off;
	return k;
}

/* FNV-1a of the key: its slot. */
static size_t
exec_memo_slot(const char *k, size_t len)
{
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)k[i]) * 1099511628211ULL;
	return (size_t)(h % EXEC_MEMO_SLOTS);
}

/* An entry emptied, for another resolution or none. */
static void
exec_memo_drop(struct exec_memo *m)
{
	free(m->key);
	strarr_free(m->programs, m->nprograms);
	free(m->interp_real);
	memset(m, 0, sizeof(*m));
}

/* The entry of these arguments, if fresh; else resolved and kept. */
int
exec_resolve_memo(uint64_t now_ms, const char *skill_dir, const char *entry,
    const char *interp, char *const *names, size_t nnames, char ***out,
    size_t *nout, char **interp_real, struct error *e)
{
	struct exec_memo *m;
	size_t len;
	char *key;

	if (exec_memo == NULL)
		exec_memo = xcalloc(EXEC_MEMO_SLOTS, sizeof(*exec_memo));
	key = exec_memo_key(skill_dir, entry, interp, names, nnames, &len);
	m = &exec_memo[exec_memo_slot(key, len)];
	if (m->key != NULL && m->keylen == len &&
	    memcmp(m->key, key, len) == 0 && now_ms >= m->at_ms &&
	    now_ms - m->at_ms < EXEC_MEMO_MS) {
		free(key);
		*out = strarr_dup(m->programs, m->nprograms);
		*nout = m->nprograms;
		*interp_real =
		    m->interp_real != NULL ? xstrdup(m->interp_real) : NULL;
		return 0;
	}
	if (exec_resolve(skill_dir, entry, interp, names, nnames, out, nout,
	        interp_real, e) == -1) {
		free(key);
		return -1;
	}
	exec_memo_drop(m);
	m->key = key;
	m->keylen = len;
	m->at_ms = now_ms;
	m->programs = strarr_dup(*out, *nout);
	m->nprograms = *nout;
	m->interp_real = *interp_real != NULL ? xstrdup(*interp_real) : NULL;
	return 0;
}

/* A reload: nothing resolved before it is used after. */
void
exec_memo_clear(void)
{
	size_t i;

	if (exec_memo == NULL)
		return;
	for (i = 0; i < EXEC_MEMO_SLOTS; i++)
		exec_memo_drop(&exec_memo[i]);
}
