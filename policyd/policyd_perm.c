/* policyd_perm.c: parse, compare and encode permission sets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "policyd_match.h"
#include "policyd_perm.h"

static const char *const kind_names[PERM__COUNT] = {
    "fs.read", "fs.write", "network.allow", "exec", "env"};

const char *
perms_kind_label(enum perm_kind k)
{
	return (unsigned)k < PERM__COUNT ? kind_names[k] : "unknown";
}

/*
 * fs globs are rooted at a variable or at "/", never climb, and are
 * spelled one way only (no "//", no "." or ".." component), so that no
 * second spelling of a path gets past the checks of fs_exact.
 */
static int
fs_item_ok(const char *s)
{
	static const char *const roots[] = {
	    "$SKILL_DIR", "$WORK_DIR", "$DATA_DIR", NULL};
	size_t i, l;

	if (strstr(s, "//") != NULL || path_has_dot(s))
		return 0;
	if (s[0] == '/')
		return 1;
	for (i = 0; roots[i] != NULL; i++) {
		l = strlen(roots[i]);
		if (strncmp(s, roots[i], l) == 0 && (s[l] == '/' || !s[l]))
			return 1;
	}
	return 0;
}

static int
name_ok(const char *s, int wild, int env)
{
	size_t i;

	if (*s == '\0' || strlen(s) > 128)
		return 0;
	if (wild && strcmp(s, "*") == 0)
		return 1;
	for (i = 0; s[i] != '\0'; i++) {
		char c = s[i];
		if (c == '*' && wild)
			continue;
		if (env ? !(c == '_' || (c >= 'A' && c <= 'Z') ||
		              (c >= 'a' && c <= 'z') ||
		              (i > 0 && c >= '0' && c <= '9'))
		        : !(c == '_' || c == '-' || c == '.' || c == '+' ||
		              (c >= 'A' && c <= 'Z') ||
		              (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

static int
item_ok(enum perm_kind k, const char *s, int ceiling)
{
	char h[300], p[8];

	switch (k) {
	case PERM_FS_READ:
	case PERM_FS_WRITE:
		return fs_item_ok(s);
	case PERM_NETWORK:
		return hostport_parse(s, h, sizeof(h), p, sizeof(p)) == 0;
	case PERM_EXEC:
		return name_ok(s, ceiling, 0);
	case PERM_ENV:
		return name_ok(s, ceiling, 1);
	default:
		return 0;
	}
}

/* The daemon's own paths, which no grant may reach (perms_protect). */
static char **protected_paths;
static size_t nprotected;

void
perms_protect(char *const *paths, size_t n)
{
	strarr_free(protected_paths, nprotected);
	protected_paths = strarr_dup(paths, n);
	nprotected = n;
}

/* a is b, or one of them lies beneath the other. */
static int
path_overlaps(const char *a, const char *b)
{
	return path_under(a, b) || path_under(b, a);
}

/*
 * A skill's fs entry must mean what the sandbox does with it, which is
 * to bind (or allow beneath) the directory before a final wildcard, or
 * a path as it is: a wildcard anywhere else would be widened.
 * $WORK_DIR (always read-write) and reads of $SKILL_DIR (always shown)
 * add nothing to the baseline, so any glob there is harmless. Host
 * paths never reach /proc, /sys, /dev, "/" or the daemon's own paths.
 */
static int
fs_exact(struct ydoc *y, struct ynode *n, enum perm_kind k, const char *s,
    struct error *e)
{
	static const char *const never[] = {"/proc", "/sys", "/dev", NULL};
	const char *wild = strpbrk(s, "*?[");
	char fixed[PATH_MAX_LEN];
	size_t i, len = strlen(s);

	if (strncmp(s, "$WORK_DIR", 9) == 0 ||
	    (k == PERM_FS_READ && strncmp(s, "$SKILL_DIR", 10) == 0))
		return 0;
	if (strncmp(s, "$DATA_DIR", 9) == 0 && strcmp(s, "$DATA_DIR") != 0 &&
	    strcmp(s, "$DATA_DIR/**") != 0)
		return yerr(y, n, e,
		    "%s \"%s\": a skill gets its whole data dir or none: "
		    "write $DATA_DIR/**",
		    kind_names[k], s);
	if (wild != NULL &&
	    (len < 3 || strcmp(s + len - 3, "/**") != 0 || wild != s + len - 2))
		return yerr(y, n, e,
		    "%s \"%s\": a wildcard may only end a path, as /** "
		    "(everything beneath a directory); the sandbox cannot "
		    "enforce a finer glob",
		    kind_names[k], s);
	if (s[0] != '/')
		return 0;
	if (fmt_path(fixed, sizeof(fixed), "%.*s",
	        (int)(wild != NULL ? (size_t)(wild - s) : len), s) == -1 ||
	    strcmp(fixed, "/") == 0 || strcmp(fixed, "") == 0)
		return yerr(y, n, e,
		    "%s \"%s\": the whole host file system can never be "
		    "granted",
		    kind_names[k], s);
	for (i = 0; never[i] != NULL; i++)
		if (path_overlaps(fixed, never[i]))
			return yerr(y, n, e,
			    "%s \"%s\": %s can never be granted (the sandbox "
			    "has its own)",
			    kind_names[k], s, never[i]);
	for (i = 0; i < nprotected; i++)
		if (path_overlaps(fixed, protected_paths[i]))
			return yerr(y, n, e,
			    "%s \"%s\": reaches the daemon's own %s, which "
			    "is never granted",
			    kind_names[k], s, protected_paths[i]);
	return 0;
}

/* A second spelling of a path: "//" or a "." component. */
static int
fs_respelled(const char *s)
{
	size_t len = strlen(s);

	return strstr(s, "//") != NULL || strstr(s, "/./") != NULL ||
	       (len >= 2 && strcmp(s + len - 2, "/.") == 0);
}

/*
 * A network entry with a non-ASCII host becomes its IDNA A-labels, as
 * the proxy compares names; one that IDNA refuses is invalid (-1).
 */
static int
net_item_ascii(char **item)
{
	char host[HOSTPORT_HOST_MAX], *colon = strrchr(*item, ':'), *s;
	const char *h = *item;
	size_t i, wild;

	for (i = 0; (*item)[i] != '\0' && (unsigned char)(*item)[i] < 0x80; i++)
		;
	if ((*item)[i] == '\0')
		return 0;
	if (colon == NULL || colon == h || (size_t)(colon - h) >= sizeof(host))
		return -1;
	wild = strncmp(h, "*.", 2) == 0 ? 2 : 0;
	memcpy(host, h + wild, (size_t)(colon - h) - wild);
	host[(size_t)(colon - h) - wild] = '\0';
	if (hostport_host_ascii(host, host, sizeof(host)) == -1)
		return -1;
	xasprintf(&s, "%s%s%s", wild ? "*." : "", host, colon);
	free(*item);
	*item = s;
	return 0;
}

static int
perms_list(struct ydoc *y, struct ynode *n, enum perm_kind k, int ceiling,
    struct perms *p, struct error *e)
{
	size_t i;

	if (n == NULL)
		return 0;
	if (ystrlist(y, n, PERM_ITEMS_MAX, &p->v[k], &p->n[k], e) == -1)
		return -1;
	for (i = 0; i < p->n[k]; i++) {
		/* the entry's own line, where the list has one per item */
		struct ynode *at =
		    n->type == YNODE_SEQ && i < n->n ? n->items[i] : n;

		if ((k == PERM_FS_READ || k == PERM_FS_WRITE) &&
		    fs_respelled(p->v[k][i]))
			return yerr(y, at, e,
			    "%s \"%s\": a path spelled with \"//\" or a "
			    "\".\" component cannot be granted: write it one "
			    "way only",
			    kind_names[k], p->v[k][i]);
		if ((k == PERM_NETWORK && net_item_ascii(&p->v[k][i]) == -1) ||
		    !item_ok(k, p->v[k][i], ceiling))
			return yerr(y, at, e, "%s: invalid entry \"%s\"",
			    kind_names[k], p->v[k][i]);
		/* a skill's declaration; a ceiling's globs only match */
		if (!ceiling && (k == PERM_FS_READ || k == PERM_FS_WRITE) &&
		    fs_exact(y, at, k, p->v[k][i], e) == -1)
			return -1;
	}
	return 0;
}

int
perms_parse(struct ydoc *y, struct ynode *n, int ceiling, struct perms *p,
    struct error *e)
{
	static const char *const keys[] = {
	    "fs", "network", "exec", "env", NULL};
	static const char *const fs_keys[] = {"read", "write", NULL};
	static const char *const net_keys[] = {"allow", NULL};
	struct ynode *fs, *net;

	memset(p, 0, sizeof(*p));
	if (yexpect(y, n, YNODE_MAP, "permissions", e) ||
	    ymap_only(y, n, keys, e))
		return -1;
	fs = ymap_get(y, n, "fs");
	net = ymap_get(y, n, "network");
	if ((fs && (yexpect(y, fs, YNODE_MAP, "fs", e) ||
	               ymap_only(y, fs, fs_keys, e))) ||
	    (net && (yexpect(y, net, YNODE_MAP, "network", e) ||
	                ymap_only(y, net, net_keys, e))))
		return -1;
	if (perms_list(y, fs ? ymap_get(y, fs, "read") : NULL, PERM_FS_READ,
	        ceiling, p, e) ||
	    perms_list(y, fs ? ymap_get(y, fs, "write") : NULL, PERM_FS_WRITE,
	        ceiling, p, e) ||
	    perms_list(y, net ? ymap_get(y, net, "allow") : NULL, PERM_NETWORK,
	        ceiling, p, e) ||
	    perms_list(y, ymap_get(y, n, "exec"), PERM_EXEC, ceiling, p, e) ||
	    perms_list(y, ymap_get(y, n, "env"), PERM_ENV, ceiling, p, e))
		return -1;
	return 0;
}

int
plimits_parse(
    struct ydoc *y, struct ynode *n, struct plimits *l, struct error *e)
{
	static const char *const keys[] = {
	    "timeout_ms", "memory_mb", "pids", "output_bytes", NULL};
	struct ynode *v;

	memset(l, 0, sizeof(*l));
	if (yexpect(y, n, YNODE_MAP, "limits", e) || ymap_only(y, n, keys, e))
		return -1;
	if (((v = ymap_get(y, n, "timeout_ms")) &&
	        yuint(y, v, 1, 86400000, &l->timeout_ms, e)) ||
	    ((v = ymap_get(y, n, "memory_mb")) &&
	        yuint(y, v, 8, 1024 * 1024, &l->memory_mb, e)) ||
	    ((v = ymap_get(y, n, "pids")) &&
	        yuint(y, v, 1, 65536, &l->pids, e)) ||
	    ((v = ymap_get(y, n, "output_bytes")) &&
	        yuint(y, v, 1, 64 * 1024 * 1024, &l->output_bytes, e)))
		return -1;
	return 0;
}

/* One exec or network entry a skill declares by other means
 * (allowed-tools): checked as a skills' entry, kept once. */
int
perms_add(struct perms *p, enum perm_kind k, const char *item)
{
	char *it = xstrdup(item);
	size_t i;

	if ((k != PERM_EXEC && k != PERM_NETWORK) ||
	    (k == PERM_NETWORK && net_item_ascii(&it) == -1) ||
	    !item_ok(k, it, 0)) {
		free(it);
		return -1;
	}
	for (i = 0; i < p->n[k]; i++)
		if (strcmp(p->v[k][i], it) == 0) {
			free(it);
			return 0;
		}
	if (p->n[k] >= PERM_ITEMS_MAX) {
		free(it);
		return -2;
	}
	p->v[k] = xreallocarray(p->v[k], p->n[k] + 2, sizeof(char *));
	p->v[k][p->n[k]++] = it;
	p->v[k][p->n[k]] = NULL;
	return 0;
}

void
perms_free(struct perms *p)
{
	int k;

	for (k = 0; k < PERM__COUNT; k++)
		strarr_free(p->v[k], p->n[k]);
	memset(p, 0, sizeof(*p));
}

void
perms_copy(struct perms *dst, const struct perms *src)
{
	int k;

	memset(dst, 0, sizeof(*dst));
	for (k = 0; k < PERM__COUNT; k++) {
		dst->v[k] = strarr_dup(src->v[k], src->n[k]);
		dst->n[k] = src->n[k];
	}
}

/* Always granted: the skill reads itself and owns its work dir. */
static int
baseline_covers(enum perm_kind k, const char *want)
{
	if (k == PERM_FS_READ)
		return path_covers("$SKILL_DIR/**", want) ||
		       strcmp(want, "$SKILL_DIR") == 0 ||
		       path_covers("$WORK_DIR/**", want) ||
		       strcmp(want, "$WORK_DIR") == 0;
	if (k == PERM_FS_WRITE)
		return path_covers("$WORK_DIR/**", want) ||
		       strcmp(want, "$WORK_DIR") == 0;
	return 0;
}

static int
item_covered(enum perm_kind k, const char *want, const struct perms *ceil)
{
	size_t i;

	if (baseline_covers(k, want))
		return 1;
	for (i = 0; i < ceil->n[k]; i++) {
		const char *c = ceil->v[k][i];
		if (k == PERM_NETWORK ? hostport_covers(c, want)
		    : (k == PERM_FS_READ || k == PERM_FS_WRITE)
		        ? path_covers(c, want)
		        : glob_match(c, want))
			return 1;
		/* A writable path may also be read. */
	}
	if (k == PERM_FS_READ)
		for (i = 0; i < ceil->n[PERM_FS_WRITE]; i++)
			if (path_covers(ceil->v[PERM_FS_WRITE][i], want))
				return 1;
	return 0;
}

size_t
perms_missing(
    const struct perms *want, const struct perms *ceil, char *buf, size_t len)
{
	size_t i, missing = 0, off = 0;
	int k, w;

	if (len > 0)
		buf[0] = '\0';
	for (k = 0; k < PERM__COUNT; k++)
		for (i = 0; i < want->n[k]; i++) {
			if (item_covered(
			        (enum perm_kind)k, want->v[k][i], ceil))
				continue;
			missing++;
			if (off < len) {
				w = snprintf(buf + off, len - off, "%s%s %s",
				    off ? ", " : "", kind_names[k],
				    want->v[k][i]);
				off += w > 0 ? (size_t)w : 0;
			}
		}
	return missing;
}

void
perms_enc(struct mp_enc *m, const struct perms *p)
{
	enc_map_open(m);
	enc_key(m, "fs");
	enc_map_open(m);
	enc_kstrarr(m, "read", p->v[PERM_FS_READ], p->n[PERM_FS_READ]);
	enc_kstrarr(m, "write", p->v[PERM_FS_WRITE], p->n[PERM_FS_WRITE]);
	enc_map_close(m);
	enc_key(m, "network");
	enc_map_open(m);
	enc_kstrarr(m, "allow", p->v[PERM_NETWORK], p->n[PERM_NETWORK]);
	enc_map_close(m);
	enc_kstrarr(m, "exec", p->v[PERM_EXEC], p->n[PERM_EXEC]);
	enc_kstrarr(m, "env", p->v[PERM_ENV], p->n[PERM_ENV]);
	enc_map_close(m);
}

void
plimits_enc(struct mp_enc *m, const struct plimits *l)
{
	enc_map_open(m);
	enc_kuint(m, "timeout_ms", l->timeout_ms);
	enc_kuint(m, "memory_mb", l->memory_mb);
	enc_kuint(m, "pids", l->pids);
	enc_kuint(m, "output_bytes", l->output_bytes);
	enc_map_close(m);
}

uint64_t
limit_min(uint64_t a, uint64_t b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}
