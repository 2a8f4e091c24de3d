/*
 * policyd_skill.c: the skill registry. A skill is a directory with a
 * SKILL.md whose YAML frontmatter names it and declares its commands.
 * Every entry point is resolved by realpath and must stay inside the
 * skill directory; a bad skill is kept as invalid (with the reason) and
 * never runs, and it never stops the others from loading.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../lib/ydoc.h"
#include "policyd.h"

static void
skill_invalid(struct skill *s, const char *fmt, ...)
{
	char buf[ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s->valid || s->error == NULL) {
		free(s->error);
		s->error = xstrdup(buf);
	}
	s->valid = 0;
}

/* Read SKILL.md: a regular file (never a FIFO, device or symlink) of
 * at most SKILL_MD_MAX bytes, NUL-terminated. */
static char *
read_skill_md(struct skill *s, size_t *len)
{
	struct error e;
	char *path, *buf;
	int r;

	xasprintf(&path, "%s/SKILL.md", s->dir);
	r = ydoc_read_file(path, "SKILL.md", SKILL_MD_MAX, &buf, len, NULL, &e);
	free(path);
	if (r == -1) {
		skill_invalid(s, "%s", e.msg);
		return NULL;
	}
	return buf;
}

/* The frontmatter is between a first line "---" and the next "---". */
int
skill_md_split(const char *md, size_t len, const char **start, size_t *flen,
    const char **body)
{
	const char *end;

	if (len < 4 || strncmp(md, "---\n", 4) != 0)
		return -1;
	*start = md + 4;
	if (strncmp(*start, "---\n", 4) == 0 || strcmp(*start, "---") == 0) {
		*flen = 0;
		*body = (*start)[3] == '\0' ? *start + 3 : *start + 4;
		return 0;
	}
	if ((end = strstr(*start, "\n---\n")) == NULL &&
	    ((end = strstr(*start, "\n---")) == NULL || end[4] != '\0'))
		return -1;
	*flen = (size_t)(end - *start) + 1;
	*body = end[4] == '\0' ? end + 4 : end + 5;
	return 0;
}

/* A $SKILL_DIR glob's fixed prefix must resolve inside the skill. */
static int
skill_globs_contained(struct skill *s, struct error *e)
{
	char *path, *real, *cut;
	size_t i, dlen = strlen(s->dir);
	struct stat st;
	int k, ok;

	for (k = PERM_FS_READ; k <= PERM_FS_WRITE; k++)
		for (i = 0; i < s->perms.n[k]; i++) {
			const char *g = s->perms.v[k][i];
			if (strncmp(g, "$SKILL_DIR", 10) != 0)
				continue;
			xasprintf(&path, "%s%s", s->dir, g + 10);
			if ((cut = strpbrk(path, "*?")) != NULL) {
				*cut = '\0';
				if ((cut = strrchr(path, '/')) != NULL)
					*cut = '\0';
			}
			/* Not there (yet): what exists of it must be inside;
			 * a dangling symlink on the way is refused. */
			while ((real = realpath(path, NULL)) == NULL &&
			       errno == ENOENT && lstat(path, &st) == -1 &&
			       errno == ENOENT &&
			       (cut = strrchr(path, '/')) != NULL &&
			       cut != path)
				*cut = '\0';
			ok = real != NULL && strncmp(real, s->dir, dlen) == 0 &&
			     (real[dlen] == '/' || real[dlen] == '\0');
			free(path);
			free(real);
			if (!ok)
				return error_set(e, ERR_BAD_REQUEST,
				    "%s %s "
				    "resolves outside the skill directory",
				    perms_kind_label((enum perm_kind)k), g);
		}
	return 0;
}

/* commands, permissions and limits, from SKILL.md or skill.yaml; no
 * commands block: *declared is 0. */
static int
skill_blocks(struct skill *s, struct ydoc *y, struct ynode *r, int *declared,
    struct error *e)
{
	struct ynode *n;

	*declared = (n = ymap_get(y, r, "commands")) != NULL;
	if (*declared && cmds_declared(s, y, n, e) == -1)
		return -1;
	if ((n = ymap_get(y, r, "permissions")) != NULL &&
	    perms_parse(y, n, 0, &s->perms, e) == -1)
		return -1;
	if ((n = ymap_get(y, r, "limits")) != NULL &&
	    plimits_parse(y, n, &s->limits, e) == -1)
		return -1;
	return 0;
}

/* The sidecar skill.yaml holds only the three blocks. It is read as
 * SKILL.md is: a regular file of at most SKILL_MD_MAX bytes. */
static int
skill_sidecar(
    struct skill *s, uint64_t deadline, int *declared, struct error *e)
{
	static const char *const keys[] = {
	    "commands", "permissions", "limits", NULL};
	struct yopts o = {"skill.yaml", SKILL_MD_MAX, 0, deadline};
	struct ydoc y;
	char *path;
	int r;

	xasprintf(&path, "%s/skill.yaml", s->dir);
	r = ydoc_load_file_opt(&y, path, &o, e);
	free(path);
	if (r == 0)
		r = yexpect(&y, ydoc_root(&y), YNODE_MAP, "skill.yaml", e) ||
		            ymap_only(&y, ydoc_root(&y), keys, e) ||
		            skill_blocks(s, &y, ydoc_root(&y), declared, e)
		        ? -1
		        : 0;
	ydoc_free(&y);
	return r;
}

/* The body starts on this line of SKILL.md. */
static unsigned
skill_body_line(const char *md, const char *body)
{
	unsigned line = 1;

	for (; md < body; md++)
		line += *md == '\n';
	return line;
}

static int
skill_frontmatter(struct skill *s, struct ydoc *y, const char *dname,
    const char *md, const char *body, uint64_t deadline, struct error *e)
{
	struct ynode *r = ydoc_root(y), *n;
	struct stat st;
	char *side;
	int inline_blocks, has_side, declared;

	if (yexpect(y, r, YNODE_MAP, "frontmatter", e) ||
	    spec_keys(s, y, r, e) || spec_fields(s, y, r, dname, e))
		return -1;
	inline_blocks = ymap_get(y, r, "commands") != NULL ||
	                ymap_get(y, r, "permissions") != NULL ||
	                ymap_get(y, r, "limits") != NULL;
	xasprintf(&side, "%s/skill.yaml", s->dir);
	has_side = lstat(side, &st) == 0; /* a FIFO or symlink is refused */
	free(side);
	if (inline_blocks && has_side)
		return yerr(y, r, e,
		    "commands/permissions/limits are in both "
		    "SKILL.md and skill.yaml; keep one");
	if (has_side ? skill_sidecar(s, deadline, &declared, e)
	             : skill_blocks(s, y, r, &declared, e))
		return -1;
	s->declared = declared;
	if (!declared && cmds_from_instructions(s, body,
	                     skill_body_line(md, body), deadline, e) == -1)
		return -1;
	s->manifest = xstrdup(has_side ? "skill.yaml" : "SKILL.md");
	if ((n = ymap_get(y, r, "allowed-tools")) != NULL)
		tools_parse(s, y, n);
	return skill_globs_contained(s, e);
}

void
skill_load_by(
    struct skill *s, const char *parent, const char *dname, uint64_t deadline)
{
	struct ydoc y;
	struct error e;
	struct stat st;
	const char *fm, *body;
	char *path, *md;
	size_t len, flen;

	memset(s, 0, sizeof(*s));
	memset(&y, 0, sizeof(y));
	if (deadline == 0)
		deadline = ydoc_deadline(YDOC_BUDGET_MS);
	s->valid = 1;
	s->name = xstrdup(utf8_valid(dname, strlen(dname)) ? dname : "?");
	xasprintf(&path, "%s/%s", parent, dname);
	if (!utf8_valid(dname, strlen(dname)))
		skill_invalid(s, "directory name is not valid UTF-8");
	else if (lstat(path, &st) == -1 || !S_ISDIR(st.st_mode))
		skill_invalid(s, "not a directory (a symlinked skill root is "
		                 "refused)");
	else if ((s->dir = realpath(path, NULL)) == NULL)
		skill_invalid(s, "realpath: %s", strerror(errno));
	free(path);
	if (!s->valid || (md = read_skill_md(s, &len)) == NULL)
		return;
	if (skill_md_split(md, len, &fm, &flen, &body) == -1)
		skill_invalid(s, "SKILL.md: no YAML frontmatter between "
		                 "\"---\" lines");
	else {
		struct yopts o = {"SKILL.md", SKILL_MD_MAX, 1, deadline};
		if (ydoc_load_buf_opt(&y, fm, flen, &o, &e) == -1 ||
		    skill_frontmatter(s, &y, dname, md, body, deadline, &e) ==
		        -1)
			skill_invalid(s, "%s", e.msg);
	}
	ydoc_free(&y);
	free(md);
}

void
skill_load(struct skill *s, const char *parent, const char *dname)
{
	skill_load_by(s, parent, dname, 0);
}

void
skill_free(struct skill *s)
{
	size_t i;

	free(s->name);
	free(s->description);
	free(s->dir);
	free(s->error);
	for (i = 0; i < s->ncmds; i++) {
		free(s->cmds[i].name);
		free(s->cmds[i].path);
		free(s->cmds[i].description);
		free(s->cmds[i].interpreter);
	}
	free(s->cmds);
	perms_free(&s->perms);
	free(s->manifest);
	for (i = 0; i < s->nwarnings; i++)
		free(s->warnings[i]);
	free(s->warnings);
	memset(s, 0, sizeof(*s));
}

static int
skill_cmp(const void *a, const void *b)
{
	return strcmp(
	    ((const struct skill *)a)->name, ((const struct skill *)b)->name);
}

/*
 * Scan one skills directory, appending each subdirectory as a skill:
 * at most SKILLS_DIR_ENTRIES_MAX entries are looked at, and nothing but
 * a skill's SKILL.md and skill.yaml is opened (both only when regular
 * files). -1 once the deadline has passed.
 */
static int
registry_scan(
    struct registry *r, const char *dir, uint64_t deadline, struct error *e)
{
	struct dirent *de;
	size_t seen = 0, i;
	DIR *d;

	if ((d = opendir(dir)) == NULL) {
		log_warn("skills directory %s", dir);
		return 0;
	}
	while ((de = readdir(d)) != NULL) {
		if (now_mono_ns() > deadline) {
			closedir(d);
			return error_set(e, ERR_BAD_REQUEST,
			    "%s: loading the skills took longer than %d ms",
			    dir, REGISTRY_BUDGET_MS);
		}
		if (++seen > SKILLS_DIR_ENTRIES_MAX) {
			log_warnx("%s: more than %d entries; the rest are "
			          "ignored",
			    dir, SKILLS_DIR_ENTRIES_MAX);
			break;
		}
		if (de->d_name[0] == '.')
			continue;
		if (r->n == SKILLS_MAX) {
			log_warnx("more than %d skills; the rest are ignored",
			    SKILLS_MAX);
			break;
		}
		skill_load_by(&r->skills[r->n], dir, de->d_name, deadline);
		if (registry_find(r, r->skills[r->n].name) != NULL) {
			log_warnx("%s/%s: duplicate skill name; ignored", dir,
			    de->d_name);
			skill_free(&r->skills[r->n]);
			continue;
		}
		if (!r->skills[r->n].valid)
			log_warnx("skill %s/%s is invalid: %s", dir, de->d_name,
			    r->skills[r->n].error);
		for (i = 0; i < r->skills[r->n].nwarnings; i++)
			log_warnx("skill %s/%s: %s", dir, de->d_name,
			    r->skills[r->n].warnings[i]);
		r->n++;
	}
	closedir(d);
	return 0;
}

int
registry_load_by(struct registry *r, char *const *dirs, size_t ndirs,
    uint64_t deadline, struct error *e)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	r->skills = xcalloc(SKILLS_MAX, sizeof(*r->skills));
	for (i = 0; i < ndirs; i++)
		if (registry_scan(r, dirs[i], deadline, e) == -1) {
			registry_free(r);
			return -1;
		}
	qsort(r->skills, r->n, sizeof(*r->skills), skill_cmp);
	r->sorted = 1;
	log_info("loaded %zu skills", r->n);
	return 0;
}

int
registry_load(struct registry *r, char *const *dirs, size_t ndirs)
{
	return registry_load_by(
	    r, dirs, ndirs, ydoc_deadline(REGISTRY_BUDGET_MS), NULL);
}

void
registry_free(struct registry *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		skill_free(&r->skills[i]);
	free(r->skills);
	memset(r, 0, sizeof(*r));
}

/* By name: bisected once the registry is sorted, else looked through. */
const struct skill *
registry_find(const struct registry *r, const char *name)
{
	size_t i, lo = 0, hi = r->n, mid;
	int c;

	if (!r->sorted) { /* while loading: duplicates are looked for */
		for (i = 0; i < r->n; i++)
			if (strcmp(r->skills[i].name, name) == 0)
				return &r->skills[i];
		return NULL;
	}
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if ((c = strcmp(name, r->skills[mid].name)) == 0)
			return &r->skills[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}
