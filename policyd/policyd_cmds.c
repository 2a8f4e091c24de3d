/*
 * policyd_cmds.c: a skill's commands and how each one runs. They are
 * the declared "commands" block, or, when a skill declares none, the
 * scripts its instructions name (SKILL.md's body and the markdown files
 * it names), each called by its path: nothing is found by scanning a
 * directory. An entry runs itself when it is an executable "#!" script
 * or ELF program, else under the interpreter declared for it or named
 * by its extension (the daemon config's "interpreters"); what runs it
 * is resolved here, at load, so a missing interpreter is a load error.
 */
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../lib/ydoc.h"
#include "policyd.h"
#include "policyd_exec.h"

#define SCAN_PATHS_MAX 256 /* distinct paths of the instructions looked up */
#define SCAN_FILES_MAX 16  /* markdown files the body names, read too */

/* interpreters: ".ext" -> program (lib/config.c has the defaults). */
static char **cmds_exts, **cmds_progs;
static size_t cmds_ninterps;

void
cmds_interpreters(char *const *exts, char *const *progs, size_t n)
{
	size_t i;

	strarr_free(cmds_exts, cmds_ninterps);
	strarr_free(cmds_progs, cmds_ninterps);
	cmds_exts = xcalloc(n + 1, sizeof(char *));
	cmds_progs = xcalloc(n + 1, sizeof(char *));
	for (i = 0; i < n; i++) {
		cmds_exts[i] = xstrdup(exts[i]);
		cmds_progs[i] = xstrdup(progs[i]);
	}
	cmds_ninterps = n;
}

/* ".py" of "scripts/x.py"; NULL without an extension. */
static const char *
cmds_ext(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base != NULL ? base + 1 : path;
	dot = strrchr(base, '.');
	return dot != NULL && dot != base && dot[1] != '\0' ? dot : NULL;
}

const char *
cmds_interp_for(const char *path)
{
	const char *ext = cmds_ext(path);
	size_t i;

	for (i = 0; ext != NULL && i < cmds_ninterps; i++)
		if (strcmp(cmds_exts[i], ext) == 0)
			return cmds_progs[i];
	return NULL;
}

/* What a path of the skill is, looked up by realpath. */
enum cmds_look {
	LOOK_OK,          /* a regular file inside the skill */
	LOOK_BAD_PATH,    /* absolute, "..", empty or not UTF-8 */
	LOOK_MISSING,     /* nothing there (errno says why) */
	LOOK_OUTSIDE,     /* it resolves out of the skill */
	LOOK_NOT_REGULAR, /* a directory, FIFO, device... */
};

static enum cmds_look
cmds_look(const struct skill *s, const char *rel, struct stat *st, int *err)
{
	char *joined, *real;
	size_t dlen = strlen(s->dir);
	enum cmds_look r = LOOK_OK;

	if (rel[0] == '/' || strstr(rel, "..") != NULL || rel[0] == '\0' ||
	    !utf8_valid(rel, strlen(rel)))
		return LOOK_BAD_PATH;
	xasprintf(&joined, "%s/%s", s->dir, rel);
	real = realpath(joined, NULL);
	*err = errno;
	free(joined);
	if (real == NULL)
		return LOOK_MISSING;
	if (strncmp(real, s->dir, dlen) != 0 || real[dlen] != '/')
		r = LOOK_OUTSIDE;
	else if (stat(real, st) == -1 || !S_ISREG(st->st_mode))
		r = LOOK_NOT_REGULAR;
	free(real);
	return r;
}

/* Why look is not LOOK_OK, for a message. */
static const char *
cmds_look_why(enum cmds_look look, int err, char *buf, size_t len)
{
	switch (look) {
	case LOOK_BAD_PATH:
		return "must be relative, inside the skill, without \"..\"";
	case LOOK_MISSING:
		snprintf(buf, len, "%s", strerror(err));
		return buf;
	case LOOK_OUTSIDE:
		return "resolves outside the skill directory";
	default:
		return "is not a regular file";
	}
}

/* cmds_look for command cmd: -1 (e set) unless a regular file inside. */
static int
cmds_lookup(const struct skill *s, const char *cmd, const char *rel,
    struct stat *st, struct error *e)
{
	enum cmds_look look;
	char buf[128];
	int err = 0;

	if ((look = cmds_look(s, rel, st, &err)) == LOOK_OK)
		return 0;
	return error_set(e, ERR_BAD_REQUEST, "command %s: %s%s %s", cmd, rel,
	    look == LOOK_MISSING ? ":" : "",
	    cmds_look_why(look, err, buf, sizeof(buf)));
}

/* 1 when the file starts with "#!" or is ELF: it can run by itself. */
static int
cmds_self_running(const struct skill *s, const char *rel)
{
	char head[SELFMAG], *path;
	ssize_t n;
	int fd;

	xasprintf(&path, "%s/%s", s->dir, rel);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	free(path);
	if (fd == -1)
		return 0;
	while ((n = pread(fd, head, sizeof(head), 0)) == -1 && errno == EINTR)
		;
	close(fd);
	return (n >= 2 && head[0] == '#' && head[1] == '!') ||
	       (n == SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0);
}

/*
 * What runs command c (its path is looked up, st its stat, self what
 * cmds_self_running says of it): interp when declared; the entry itself
 * when executable and "#!" or ELF; else the program its extension
 * names. Then the whole chain is resolved as a call's is, so that what
 * cannot run is refused now.
 */
static int
cmds_how(struct skill *s, struct skill_cmd *c, const char *interp,
    const struct stat *st, int self, struct error *e)
{
	char why[ERROR_MSG_MAX], **progs, *ireal;
	const char *ext = cmds_ext(c->path), *prog;
	size_t np;

	if (interp != NULL)
		c->interpreter = xstrdup(interp);
	else if (self && (st->st_mode & S_IXOTH) != 0)
		c->interpreter = NULL;
	else if ((prog = cmds_interp_for(c->path)) != NULL)
		c->interpreter = xstrdup(prog);
	else if (self)
		return error_set(e, ERR_BAD_REQUEST,
		    "command %s: %s has a \"#!\" line but is not executable by "
		    "others, and no interpreter runs \"%s\" files: make it "
		    "executable (chmod +x) or set \"interpreter:\" in its "
		    "command",
		    c->name, c->path, ext ? ext : "extensionless");
	else
		return error_set(e, ERR_BAD_REQUEST,
		    "command %s: %s has no \"#!\" line and no interpreter runs "
		    "\"%s\" files: set \"interpreter:\" in its command, or add "
		    "it to interpreters in the daemon config",
		    c->name, c->path, ext ? ext : "extensionless");
	if (c->interpreter != NULL && (st->st_mode & S_IROTH) == 0)
		return error_set(e, ERR_BAD_REQUEST,
		    "command %s: %s is not readable by others, and its "
		    "interpreter runs as the worker's uid: chmod o+r it",
		    c->name, c->path);
	if (exec_resolve(s->dir, c->path, c->interpreter, NULL, 0, &progs, &np,
	        &ireal, e) == -1) {
		snprintf(why, sizeof(why), "%s", e->msg);
		return error_set(e, ERR_BAD_REQUEST, "command %s: %s%s%s%s",
		    c->name, why,
		    interp == NULL && c->interpreter != NULL
		        ? " (the interpreter of \""
		        : "",
		    interp == NULL && c->interpreter != NULL ? ext : "",
		    interp == NULL && c->interpreter != NULL
		        ? "\" files: install it, or change interpreters in "
		          "the daemon config)"
		        : "");
	}
	strarr_free(progs, np);
	free(ireal);
	return 0;
}

/* A program name, or an absolute path without "." or "..". */
static int
cmds_interp_valid(const char *p)
{
	return ident_valid(p, NAME_MAX) ||
	       (p[0] == '/' && !path_has_dot(p) && strstr(p, "//") == NULL &&
	           strlen(p) < PATH_MAX);
}

/* One entry of the block: "name: path", or a map whose path defaults to
 * the name. */
static int
cmds_entry(struct skill *s, struct ydoc *y, struct ynode *k, struct ynode *v,
    struct error *e)
{
	static const char *const keys[] = {
	    "path", "description", "interpreter", "cwd", NULL};
	struct skill_cmd *c = &s->cmds[s->ncmds];
	const char *name, *path, *desc = NULL, *interp = NULL, *cwd;
	struct ynode *n;
	struct stat st;

	if (yscalar(y, k, &name, e))
		return -1;
	if (!command_name_valid(name, COMMAND_MAX_LEN))
		return yerr(y, k, e,
		    "bad command name \"%s\": 1..%d bytes of letters, digits, "
		    "\".\", \"_\" and \"-\", with single \"/\" between",
		    name, COMMAND_MAX_LEN);
	path = name;
	c->cwd = GRANT_CWD_WORK;
	if (v->type == YNODE_MAP) {
		if (ymap_only(y, v, keys, e) ||
		    ((n = ymap_get(y, v, "path")) && yscalar(y, n, &path, e)))
			return -1;
		if ((n = ymap_get(y, v, "description")) != NULL &&
		    (yscalar(y, n, &desc, e) ||
		        ((*desc == '\0' || strlen(desc) > SKILL_CMD_DESC_MAX) &&
		            yerr(y, n, e,
		                "command %s: description: 1..%d bytes", name,
		                SKILL_CMD_DESC_MAX))))
			return -1;
		if ((n = ymap_get(y, v, "interpreter")) != NULL &&
		    (yscalar(y, n, &interp, e) ||
		        (!cmds_interp_valid(interp) &&
		            yerr(y, n, e,
		                "command %s: interpreter: a program name or "
		                "an absolute path without \".\" or \"..\"",
		                name))))
			return -1;
		if ((n = ymap_get(y, v, "cwd")) != NULL) {
			if (yscalar(y, n, &cwd, e))
				return -1;
			if (strcmp(cwd, "skill") == 0)
				c->cwd = GRANT_CWD_SKILL;
			else if (strcmp(cwd, "work") != 0)
				return yerr(y, n, e,
				    "command %s: cwd: work (the session's "
				    "work dir) or skill (the skill's, "
				    "read-only)",
				    name);
		}
	} else if (yscalar(y, v, &path, e))
		return -1;
	c->name = xstrdup(name);
	c->path = xstrdup(path);
	c->description = desc ? xstrdup(desc) : NULL;
	s->ncmds++;
	if (cmds_lookup(s, name, path, &st, e) == -1 ||
	    cmds_how(s, c, interp, &st,
	        interp == NULL && cmds_self_running(s, path), e) == -1)
		return yerr(y, v, e, "%s", e->msg);
	return 0;
}

int
cmds_declared(struct skill *s, struct ydoc *y, struct ynode *n, struct error *e)
{
	size_t i;

	if (yexpect(y, n, YNODE_MAP, "commands", e))
		return -1;
	if (n->n == 0 || n->n > COMMANDS_MAX)
		return yerr(y, n, e, "commands: 1..%d entries", COMMANDS_MAX);
	s->cmds = xcalloc(n->n, sizeof(*s->cmds));
	for (i = 0; i < n->n; i++) /* keys are unique: so are names */
		if (cmds_entry(s, y, n->pairs[i].key, n->pairs[i].value, e))
			return -1;
	return 0;
}

/* A path named by the instructions, where it was first seen. */
struct cmds_ref {
	char *path;
	const char *file;
	unsigned line;
};

struct cmds_scan {
	struct cmds_ref v[SCAN_PATHS_MAX];
	size_t n;
	int full; /* more distinct paths than SCAN_PATHS_MAX */
	char *files[SCAN_FILES_MAX + 1]; /* "SKILL.md", then those read */
	size_t nfiles;
};

static int
cmds_scan_byte(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' ||
	       c == '/';
}

static int
cmds_scan_ends(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && strcmp(s + n - k, suffix) == 0;
}

static void
cmds_scan_note(
    struct cmds_scan *sc, const char *path, const char *file, unsigned line)
{
	size_t i;

	for (i = 0; i < sc->n; i++)
		if (strcmp(sc->v[i].path, path) == 0)
			return;
	if (sc->n == SCAN_PATHS_MAX) {
		sc->full = 1;
		return;
	}
	sc->v[sc->n++] = (struct cmds_ref){xstrdup(path), file, line};
}

/*
 * Note each word of text that may name a file of the skill: a relative
 * path with a directory, or a file name whose extension names an
 * interpreter, or a markdown file; written as is, after "./", or after
 * "$VAR/", "${VAR}/" or "{baseDir}/" (the skill's directory).
 */
static void
cmds_scan_text(
    struct cmds_scan *sc, const char *text, const char *file, unsigned line)
{
	const char *p = text, *start, *slash;
	char tok[COMMAND_MAX_LEN + 1];
	size_t len;

	while (*p != '\0') {
		if (!cmds_scan_byte(*p)) {
			line += *p++ == '\n';
			continue;
		}
		for (start = p; cmds_scan_byte(*p); p++)
			;
		len = (size_t)(p - start);
		if (start > text && start[-1] == '$' &&
		    (slash = memchr(start, '/', len)) != NULL) {
			len -= (size_t)(slash + 1 - start);
			start = slash + 1;
		} else if (start > text && start[-1] == '}' && *start == '/') {
			start++;
			len--;
		}
		while (len >= 2 && start[0] == '.' && start[1] == '/') {
			start += 2;
			len -= 2;
		}
		while (
		    len > 0 && (start[len - 1] == '.' || start[len - 1] == '-'))
			len--; /* the end of a sentence */
		if (len == 0 || len > COMMAND_MAX_LEN || *start == '/')
			continue;
		memcpy(tok, start, len);
		tok[len] = '\0';
		if (command_name_valid(tok, COMMAND_MAX_LEN) &&
		    (strchr(tok, '/') != NULL || cmds_scan_ends(tok, ".md") ||
		        cmds_interp_for(tok) != NULL))
			cmds_scan_note(sc, tok, file, line);
	}
}

#define SCAN_CASE_ENTRIES_MAX 256 /* entries looked at for another case */

/*
 * rel in another case, as a case-insensitive file system finds it (the
 * body names FORMS.md, the skill has forms.md): the one entry of its
 * directory that matches, or NULL. Where it resolves is checked by the
 * caller, as for any name.
 */
static char *
cmds_scan_case(const struct skill *s, const char *rel)
{
	const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
	char *dir, *found = NULL;
	struct dirent *de;
	size_t seen = 0;
	int n = 0;
	DIR *d;

	xasprintf(&dir, "%s/%.*s", s->dir, slash ? (int)(slash - rel) : 0, rel);
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL &&
		       ++seen <= SCAN_CASE_ENTRIES_MAX)
			if (strcasecmp(de->d_name, base) == 0 && n++ == 0)
				xasprintf(&found, "%.*s%s",
				    slash ? (int)(slash - rel + 1) : 0, rel,
				    de->d_name);
		closedir(d);
	}
	free(dir);
	if (n != 1) {
		free(found);
		found = NULL;
	}
	return found;
}

/* Read one markdown file the body named, for the scripts it names;
 * 1 when no more may be read. */
static int
cmds_scan_follow_one(
    struct skill *s, struct cmds_scan *sc, const struct cmds_ref *r)
{
	char why[128], *alt = NULL, *path, *buf;
	const char *rel = r->path;
	enum cmds_look look;
	struct error e;
	struct stat st;
	size_t len;
	int err;

	look = cmds_look(s, rel, &st, &err);
	if (look == LOOK_MISSING && (alt = cmds_scan_case(s, rel)) != NULL &&
	    (look = cmds_look(s, alt, &st, &err)) == LOOK_OK) {
		skill_warn(s,
		    "%s:%u: the instructions name %s, which is %s here (the "
		    "names differ in case): read it",
		    r->file, r->line, rel, alt);
		rel = alt;
	}
	if (look == LOOK_OUTSIDE || look == LOOK_NOT_REGULAR)
		skill_warn(s, "%s:%u: %s %s: not read for the scripts it names",
		    r->file, r->line, rel,
		    cmds_look_why(look, err, why, sizeof(why)));
	if (look == LOOK_OK && sc->nfiles == SCAN_FILES_MAX + 1) {
		skill_warn(s,
		    "%s:%u: the instructions name more than %d markdown "
		    "files: %s and the rest are not read for scripts",
		    r->file, r->line, SCAN_FILES_MAX, rel);
		free(alt);
		return 1;
	}
	if (look == LOOK_OK) {
		xasprintf(&path, "%s/%s", s->dir, rel);
		if (ydoc_read_file(
		        path, rel, SKILL_MD_MAX, &buf, &len, NULL, &e) == 0) {
			sc->files[sc->nfiles] = xstrdup(rel);
			cmds_scan_text(sc, buf, sc->files[sc->nfiles++], 1);
			free(buf);
		} else
			skill_warn(s, "%s:%u: %s", r->file, r->line, e.msg);
		free(path);
	}
	free(alt);
	return 0;
}

/* Read the markdown files the body named (not those they name). */
static void
cmds_scan_follow(
    struct skill *s, struct cmds_scan *sc, size_t nbody, uint64_t deadline)
{
	size_t i;

	for (i = 0; i < nbody && now_mono_ns() <= deadline; i++)
		if (cmds_scan_ends(sc->v[i].path, ".md") &&
		    strcmp(sc->v[i].path, "SKILL.md") != 0 &&
		    cmds_scan_follow_one(s, sc, &sc->v[i]))
			break;
}

static int
cmds_cmp(const void *a, const void *b)
{
	return strcmp(((const struct skill_cmd *)a)->name,
	    ((const struct skill_cmd *)b)->name);
}

/* Make ref a command if it is a script; warn of what under scripts/ is
 * named but is not one. -1 (e set) for one that cannot run. */
static int
cmds_scan_command(struct skill *s, const struct cmds_ref *r, struct error *e)
{
	struct skill_cmd *c = &s->cmds[s->ncmds];
	int in_scripts = strncmp(r->path, "scripts/", 8) == 0, err, self;
	enum cmds_look look;
	struct stat st;
	char why[128];

	if (cmds_scan_ends(r->path, ".md"))
		return 0;
	if ((look = cmds_look(s, r->path, &st, &err)) != LOOK_OK) {
		if (in_scripts && look == LOOK_MISSING)
			skill_warn(s,
			    "%s:%u: the instructions name %s, which the "
			    "skill does not have: not a command",
			    r->file, r->line, r->path);
		else if (in_scripts)
			skill_warn(s, "%s:%u: %s %s: not a command", r->file,
			    r->line, r->path,
			    cmds_look_why(look, err, why, sizeof(why)));
		return 0;
	}
	self = cmds_self_running(s, r->path);
	if (!((self && (st.st_mode & S_IXOTH)) ||
	        cmds_interp_for(r->path) != NULL)) {
		if (in_scripts)
			skill_warn(s,
			    "%s:%u: %s is named by the instructions but is "
			    "neither an executable \"#!\" script or program "
			    "nor of an extension an interpreter runs: not a "
			    "command",
			    r->file, r->line, r->path);
		return 0;
	}
	if (s->ncmds == COMMANDS_MAX) {
		skill_warn(s,
		    "%s:%u: more than %d scripts named: %s and the rest are "
		    "not commands (declare commands in skill.yaml)",
		    r->file, r->line, COMMANDS_MAX, r->path);
		return 1;
	}
	c->name = xstrdup(r->path);
	c->path = xstrdup(r->path);
	c->cwd = GRANT_CWD_WORK;
	s->ncmds++;
	if (cmds_how(s, c, NULL, &st, self, e) == -1) {
		char msg[ERROR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		return error_set(
		    e, ERR_BAD_REQUEST, "%s:%u: %s", r->file, r->line, msg);
	}
	return 0;
}

int
cmds_from_instructions(struct skill *s, const char *body, unsigned line,
    uint64_t deadline, struct error *e)
{
	struct cmds_scan *sc = xcalloc(1, sizeof(*sc));
	size_t i, nbody;
	int r = 0;

	sc->files[sc->nfiles++] = xstrdup("SKILL.md");
	cmds_scan_text(sc, body, sc->files[0], line);
	nbody = sc->n;
	cmds_scan_follow(s, sc, nbody, deadline);
	if (sc->full)
		skill_warn(s,
		    "the instructions name more than %d paths: the rest are "
		    "not looked at for scripts",
		    SCAN_PATHS_MAX);
	s->cmds = xcalloc(COMMANDS_MAX, sizeof(*s->cmds));
	for (i = 0; i < sc->n && r == 0; i++)
		if (now_mono_ns() > deadline)
			r = error_set(e, ERR_BAD_REQUEST,
			    "looking for the scripts of the instructions "
			    "took too long");
		else
			r = cmds_scan_command(s, &sc->v[i], e);
	for (i = 0; i < sc->n; i++)
		free(sc->v[i].path);
	for (i = 0; i < sc->nfiles; i++)
		free(sc->files[i]);
	free(sc);
	if (r == -1)
		return -1;
	qsort(s->cmds, s->ncmds, sizeof(*s->cmds), cmds_cmp);
	return 0;
}
