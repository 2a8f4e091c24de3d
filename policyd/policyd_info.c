/*
 * policyd_info.c: skill_info, a skill as one caller may see it: its
 * frontmatter, its instructions (the SKILL.md body), its commands, the
 * permissions the policy would grant this caller, and the files directly
 * in its references/ directory, sorted by name, with size, sha256 and,
 * when asked, their text.
 *
 * Only a caller that some rule lets run some command of the skill (phase
 * execution) sees it; any other gets what a skill that does not exist
 * gets, so that the answer does not tell whether it exists. The skill's
 * files are read now, without following a link, opening only regular
 * files and never blocking (a FIFO is never opened), each bound checked
 * before anything is allocated for it, and the whole answer stays within
 * the budget the broker gives (its client frame bound).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../lib/ydoc.h"
#include "policyd.h"

#define INFO_ENTRIES_MAX 4096           /* entries of references/ looked at */
#define INFO_HASH_FILE_MAX (8ULL << 20) /* a larger file: no sha256 */
#define INFO_HASH_BUDGET (16ULL << 20)  /* bytes hashed for one answer */
/* What one listed file may cost in the reply beyond its path and its
 * text (keys, size, sha256, headers), here and in the client's reply. */
#define INFO_REF_COST 160
#define INFO_REFS_DIR "references"
#define INFO_MAP_MAX 4096 /* entries of a frontmatter list or mapping */
#define INFO_KEY_MAX 64   /* bytes of a frontmatter key */
/* The same words for a skill that does not exist and one the caller
 * may not run. */
#define INFO_UNKNOWN "no skill \"%s\" that this caller may run"

/* One regular file seen in references/. */
struct info_file {
	char *name;
	struct stat st;
};

/* What an answer still may take. */
struct info_budget {
	uint64_t left;      /* bytes of the encoded answer */
	uint64_t hash_left; /* bytes to hash */
	int texts_stopped;  /* a text did not fit: no more texts */
};

/* The caller's view of the skill: which commands it may run, at once
 * or once a human said yes (an ask rule), and the permissions the first
 * of these would get; -1 if it may run none. */
static int
info_decide(const struct policy_env *pe, const struct msg_skill_info_req *req,
    const struct skill *s, struct msg_skill_info_ans *a, struct error *e)
{
	struct msg_authz_req q;
	struct decision d, first;
	struct mp_enc m;
	size_t i;
	int any = 0, asked = 0;

	memset(&q, 0, sizeof(q));
	memset(&first, 0, sizeof(first));
	q.uid = req->uid;
	q.gid = req->gid;
	q.skill = req->skill;
	q.session = "default";
	q.phase = "execution";
	q.dry_run = 1;
	a->commands = xcalloc(s->ncmds + 1, sizeof(*a->commands));
	for (i = 0; i < s->ncmds; i++) {
		q.command = s->cmds[i].name;
		decide(pe, &q, now_mono_ms(), &d);
		a->commands[i].name = xstrdup(s->cmds[i].name);
		a->commands[i].description = xstrdup(
		    s->cmds[i].description ? s->cmds[i].description : "");
		a->commands[i].allowed = d.err == ERR_NONE;
		a->commands[i].ask = d.err != ERR_NONE && d.ask;
		a->ncommands++;
		if (d.err == ERR_NONE && !any++) {
			if (asked) /* an allowed command's view wins */
				decision_free(&first);
			first = d;
		} else if (a->commands[i].ask && !any && !asked++)
			first = d;
		else
			decision_free(&d);
	}
	any += asked;
	/* Instructions only: no command to run, none granted. */
	if (s->ncmds == 0 && decide_sees(pe, &q))
		any = 1;
	if (!any)
		return error_set(
		    e, ERR_UNKNOWN_SKILL, INFO_UNKNOWN, req->skill);
	enc_init(&m);
	decision_permissions_enc(&m, &first); /* {} without a decision */
	decision_free(&first);
	a->permissions = xmalloc(m.sb.size);
	memcpy(a->permissions, m.sb.data, m.sb.size);
	a->permissions_len = m.sb.size;
	enc_free(&m);
	return 0;
}

/* A YAML node as msgpack: scalars as strings, lists, mappings; the
 * shape a strict msgpack reader takes (depth, entries, key sizes). */
static int
info_yaml_enc(struct mp_enc *m, struct ydoc *y, struct ynode *n, unsigned depth,
    struct error *e)
{
	size_t i;

	if (n->type == YNODE_SCALAR) {
		enc_strn(m, n->str, n->len);
		return 0;
	}
	if (depth > SKILL_INFO_FM_DEPTH)
		return yerr(y, n, e,
		    "frontmatter nested deeper than skill_info carries (%d "
		    "levels)",
		    SKILL_INFO_FM_DEPTH);
	if (n->n > INFO_MAP_MAX)
		return yerr(y, n, e,
		    "a frontmatter list or mapping of more than %d entries",
		    INFO_MAP_MAX);
	if (n->type == YNODE_SEQ) {
		enc_array(m, n->n);
		for (i = 0; i < n->n; i++)
			if (info_yaml_enc(m, y, n->items[i], depth + 1, e))
				return -1;
		return 0;
	}
	enc_map_open(m);
	for (i = 0; i < n->n; i++) {
		const struct ynode *k = n->pairs[i].key;
		if (k->len == 0 || k->len > INFO_KEY_MAX)
			return yerr(y, n->pairs[i].key, e,
			    "a frontmatter key empty or over %d bytes",
			    INFO_KEY_MAX);
		enc_keyn(m, k->str, k->len);
		if (info_yaml_enc(m, y, n->pairs[i].value, depth + 1, e))
			return -1;
	}
	enc_map_close(m);
	return 0;
}

/* The frontmatter text as a msgpack map, within SKILL_INFO_FM_MAX. */
static int
info_frontmatter(
    struct msg_skill_info_ans *a, const char *fm, size_t flen, struct error *e)
{
	struct yopts o = {
	    "SKILL.md", SKILL_MD_MAX, 1, ydoc_deadline(YDOC_BUDGET_MS)};
	struct mp_enc m;
	struct ydoc y;
	int r;

	if (ydoc_load_buf_opt(&y, fm, flen, &o, e) == -1) {
		ydoc_free(&y);
		e->type = ERR_INTERNAL;
		return -1;
	}
	enc_init(&m);
	if ((r = yexpect(&y, ydoc_root(&y), YNODE_MAP, "frontmatter", e)) != 0)
		e->type = ERR_INTERNAL;
	else if ((r = info_yaml_enc(&m, &y, ydoc_root(&y), 1, e)) != 0)
		e->type = ERR_RESOURCE_LIMIT;
	ydoc_free(&y);
	if (r == 0 && m.sb.size > SKILL_INFO_FM_MAX)
		r = error_set(e, ERR_RESOURCE_LIMIT,
		    "SKILL.md: the frontmatter takes %zu bytes, over %d",
		    m.sb.size, SKILL_INFO_FM_MAX);
	if (r == 0) {
		a->frontmatter = xmalloc(m.sb.size);
		memcpy(a->frontmatter, m.sb.data, m.sb.size);
		a->frontmatter_len = m.sb.size;
	}
	enc_free(&m);
	return r;
}

/* SKILL.md as it is now: its frontmatter and its body, both UTF-8. */
static int
info_skill_md(int dfd, struct msg_skill_info_ans *a, struct error *e)
{
	const char *fm, *body;
	size_t len, flen, blen;
	char *md;
	int r = -1;

	if (ydoc_read_fileat(dfd, "SKILL.md", "SKILL.md", SKILL_MD_MAX, &md,
	        &len, NULL, e)) {
		e->type = ERR_INTERNAL;
		return -1;
	}
	if (skill_md_split(md, len, &fm, &flen, &body) == -1)
		error_set(e, ERR_INTERNAL,
		    "SKILL.md: no YAML frontmatter between \"---\" lines");
	else if ((blen = len - (size_t)(body - md)) > SKILL_INFO_BODY_MAX)
		error_set(e, ERR_RESOURCE_LIMIT,
		    "SKILL.md: the body is %zu bytes, over %d", blen,
		    SKILL_INFO_BODY_MAX);
	else if (!utf8_valid(body, blen))
		error_set(e, ERR_INTERNAL,
		    "SKILL.md: the body is not UTF-8 text (or holds a NUL)");
	else if (info_frontmatter(a, fm, flen, e) == 0) {
		a->body = xstrndup(body, blen);
		r = 0;
	}
	free(md);
	return r;
}

/* Sort reference files by name, byte by byte. */
static int
info_file_cmp(const void *x, const void *y)
{
	return strcmp(((const struct info_file *)x)->name,
	    ((const struct info_file *)y)->name);
}

/*
 * The regular files directly in the directory rfd, sorted, looking at
 * no more than INFO_ENTRIES_MAX entries (*more set when some were not
 * looked at). Links, FIFOs, devices, sockets, directories, names that
 * start with "." and names that are not UTF-8 are not listed.
 */
static struct info_file *
info_list(int rfd, size_t *n, int *more)
{
	struct info_file *v;
	struct dirent *de;
	size_t seen = 0;
	struct stat st;
	int fd;
	DIR *d;

	*n = 0;
	v = xcalloc(INFO_ENTRIES_MAX + 1, sizeof(*v));
	if ((fd = dup(rfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		log_warn("references/");
		if (fd != -1)
			close(fd);
		*more = 1;
		return v;
	}
	while ((de = readdir(d)) != NULL) {
		if (++seen > INFO_ENTRIES_MAX) {
			*more = 1;
			break;
		}
		if (de->d_name[0] == '.' ||
		    !utf8_valid(de->d_name, strlen(de->d_name)) ||
		    strlen(de->d_name) > SKILL_INFO_NAME_MAX ||
		    fstatat(rfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(st.st_mode))
			continue;
		v[*n].name = xstrdup(de->d_name);
		v[(*n)++].st = st;
	}
	closedir(d);
	qsort(v, *n, sizeof(*v), info_file_cmp);
	return v;
}

/* Hex SHA-256 of what the digest saw. */
static char *
info_digest_hex(EVP_MD_CTX *ctx)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char hex[2 * EVP_MAX_MD_SIZE + 1] = "";
	unsigned int len = 0;

	if (EVP_DigestFinal_ex(ctx, md, &len))
		hex_encode(md, len, hex);
	return xstrdup(hex);
}

/*
 * Read one open file once: hash it when its size is within the hash
 * bounds, and keep its text when text is set (a buffer of cap bytes:
 * the size it had when opened). Reads stop at what is needed, so a
 * file that grows costs no more than one that does not. Sets f->size,
 * f->sha256, f->text (when whole and UTF-8) and f->omitted.
 */
static void
info_read(int fd, uint64_t size, char *text, size_t cap, struct info_budget *b,
    struct msg_info_ref *f)
{
	uint64_t hash_max = b->hash_left < INFO_HASH_FILE_MAX
	                        ? b->hash_left
	                        : INFO_HASH_FILE_MAX;
	EVP_MD_CTX *ctx = NULL;
	uint64_t total = 0;
	char buf[65536];
	ssize_t r = 0;

	if (size <= hash_max && (ctx = EVP_MD_CTX_new()) != NULL &&
	    !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		ctx = NULL;
	}
	while (ctx != NULL || text != NULL) {
		if ((r = read(fd, buf, sizeof(buf))) == -1 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (ctx != NULL && total + (uint64_t)r > hash_max) {
			EVP_MD_CTX_free(ctx); /* it grew past the bound */
			ctx = NULL;
		} else if (ctx != NULL)
			EVP_DigestUpdate(ctx, buf, (size_t)r);
		if (text != NULL && total + (uint64_t)r > cap) {
			free(text); /* it grew while being read */
			text = NULL;
			f->omitted = INFO_OMIT_UNREADABLE;
		} else if (text != NULL)
			memcpy(text + total, buf, (size_t)r);
		total += (uint64_t)r;
	}
	f->size = size;
	if (r == -1) {
		log_warn("%s", f->path);
		f->omitted = text != NULL ? INFO_OMIT_UNREADABLE : f->omitted;
		free(text);
		text = NULL;
	} else if (ctx != NULL) {
		f->sha256 = info_digest_hex(ctx);
		f->size = total;
		b->hash_left -= total;
	}
	EVP_MD_CTX_free(ctx);
	if (f->sha256 == NULL)
		f->sha256 = xstrdup("");
	if (text != NULL) {
		text[total] = '\0';
		if (utf8_valid(text, (size_t)total)) {
			f->text = text;
			f->size = total;
			return;
		}
		f->omitted = INFO_OMIT_NOT_TEXT;
		free(text);
	}
}

/* One listed file: open it (never a link, never blocking), read it. */
static void
info_ref(int rfd, const struct info_file *file, int want_text,
    struct info_budget *b, struct msg_info_ref *f)
{
	uint64_t size = (uint64_t)file->st.st_size;
	char *text = NULL;
	struct error e;
	struct stat st;
	int fd, reserved = 0;

	xasprintf(&f->path, "%s/%s", INFO_REFS_DIR, file->name);
	if ((fd = ydoc_open_regular(rfd, file->name, f->path, &st, NULL, &e)) ==
	    -1) {
		log_warnx("%s", e.msg);
		f->size = size;
		f->sha256 = xstrdup("");
		f->omitted = want_text ? INFO_OMIT_UNREADABLE : INFO_OMIT_NONE;
		f->text = xstrdup("");
		return;
	}
	size = (uint64_t)st.st_size;
	if (!want_text)
		f->omitted = INFO_OMIT_NONE;
	else if (size > SKILL_INFO_TEXT_MAX)
		f->omitted = INFO_OMIT_TOO_LARGE;
	else if (b->texts_stopped || size > b->left) {
		f->omitted = INFO_OMIT_REPLY_FULL;
		b->texts_stopped = 1;
	} else {
		text = xmalloc((size_t)size + 1); /* at most TEXT_MAX + 1 */
		b->left -= size;
		reserved = 1;
	}
	info_read(fd, size, text, (size_t)size, b, f); /* takes text */
	close(fd);
	if (reserved && f->text == NULL)
		b->left += size; /* not sent after all */
	if (f->text == NULL)
		f->text = xstrdup("");
}

/*
 * references/: each regular file directly in it, sorted, as many as the
 * budget lists (at most SKILL_INFO_REFS_MAX), then their texts in the
 * same order while they fit. No references/ (or one that is a link or
 * no directory) lists nothing.
 */
static void
info_refs(
    int dfd, int want_text, struct info_budget *b, struct msg_skill_info_ans *a)
{
	struct info_file *files;
	size_t n, i, listed = 0;
	uint64_t cost;
	int rfd, more = 0;

	rfd = openat(dfd, INFO_REFS_DIR,
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rfd == -1) {
		if (errno != ENOENT)
			log_warnx("skill %s: references/: %s", a->name,
			    strerror(errno));
		a->refs = xcalloc(1, sizeof(*a->refs));
		return;
	}
	files = info_list(rfd, &n, &more);
	for (listed = 0; listed < n && listed < SKILL_INFO_REFS_MAX; listed++) {
		cost = INFO_REF_COST + strlen(INFO_REFS_DIR) + 1 +
		       strlen(files[listed].name);
		if (cost > b->left)
			break;
		b->left -= cost;
	}
	a->refs_truncated = more || listed < n;
	a->refs = xcalloc(listed + 1, sizeof(*a->refs));
	for (i = 0; i < listed; i++) {
		info_ref(rfd, &files[i], want_text, b, &a->refs[i]);
		a->nrefs++;
	}
	for (i = 0; i < n; i++)
		free(files[i].name);
	free(files);
	close(rfd);
}

/* The encoded size of a, as it stands. */
static size_t
info_size(const struct msg_skill_info_ans *a)
{
	struct mp_enc m;
	size_t n;

	enc_init(&m);
	msg_skill_info_ans_enc(&m, a);
	n = m.sb.size;
	enc_free(&m);
	return n;
}

/* Visibility first, then the files: nothing is read for a hidden skill. */
int
info_build(const struct policy_env *pe, const struct msg_skill_info_req *req,
    struct msg_skill_info_ans *a, struct error *e)
{
	const struct skill *s = registry_find(pe->reg, req->skill);
	struct info_budget b = {0, INFO_HASH_BUDGET, 0};
	size_t used;
	int dfd;

	memset(a, 0, sizeof(*a));
	a->ref = req->ref;
	if (s == NULL || !s->valid) {
		error_set(e, ERR_UNKNOWN_SKILL, INFO_UNKNOWN, req->skill);
		goto bad;
	}
	if (info_decide(pe, req, s, a, e) == -1)
		goto bad;
	a->name = xstrdup(s->name);
	a->description = xstrdup(s->description);
	a->message = xstrdup("");
	if ((dfd = open(s->dir,
	         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		error_set(e, ERR_INTERNAL, "skill %s: its directory: %s",
		    s->name, strerror(errno));
		goto bad;
	}
	if (info_skill_md(dfd, a, e) == -1) {
		close(dfd);
		goto bad;
	}
	/* The references array grows from 1 byte of header to at most 3. */
	used = info_size(a) + 2;
	if (used > req->max_bytes) {
		close(dfd);
		error_set(e, ERR_RESOURCE_LIMIT,
		    "skill %s: its SKILL.md alone makes a %zu-byte reply, over "
		    "the %llu bytes a reply may take (max_frame_bytes)",
		    s->name, used, (unsigned long long)req->max_bytes);
		goto bad;
	}
	b.left = req->max_bytes - used;
	info_refs(dfd, req->references, &b, a);
	close(dfd);
	if ((used = info_size(a)) > req->max_bytes) { /* never, by the costs */
		error_set(e, ERR_INTERNAL,
		    "skill %s: the reply came to %zu bytes, over %llu", s->name,
		    used, (unsigned long long)req->max_bytes);
		goto bad;
	}
	return 0;
bad:
	if (e->type == ERR_BAD_REQUEST)
		e->type = ERR_INTERNAL;
	msg_skill_info_ans_free(a);
	return -1;
}
