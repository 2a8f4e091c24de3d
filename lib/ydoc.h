/*
 * ydoc.h: the one YAML loader of policy files, the daemon config and
 * skill manifests. It reads only a regular file of bounded size (never
 * a FIFO, device, socket, directory or symlink), bounds nesting before
 * libyaml sees the text and again while it parses, refuses anchors and
 * aliases, a second document and more than YDOC_MAX_NODES nodes, and
 * stops at a deadline. Errors read "name:line: why".
 */
#ifndef SB_YDOC_H
#define SB_YDOC_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define YDOC_MAX_BYTES (1024 * 1024) /* a policy file, the config */
#define YDOC_MAX_DEPTH 32            /* nested lists and mappings */
#define YDOC_MAX_NODES 100000        /* scalars, lists and mappings */
#define YDOC_BUDGET_MS 1000          /* parse time without a deadline */

enum ynode_type { YNODE_SCALAR = 1, YNODE_SEQ, YNODE_MAP };

struct ynode;

struct ypair {
	struct ynode *key; /* always a scalar */
	struct ynode *value;
};

struct ynode {
	enum ynode_type type;
	unsigned line;        /* 1-based, in the file */
	char *str;            /* YNODE_SCALAR: NUL-terminated */
	size_t len;           /* YNODE_SCALAR: bytes of str */
	size_t n;             /* YNODE_SEQ: items; YNODE_MAP: pairs */
	struct ynode **items; /* YNODE_SEQ */
	struct ypair *pairs;  /* YNODE_MAP, keys unique */
};

/* Why a load failed (ydoc.why), for callers and tests. */
enum ydoc_why {
	YDOC_OK = 0,
	YDOC_E_OPEN,        /* missing, unreadable */
	YDOC_E_NOTREG,      /* a FIFO, device, socket, directory or symlink */
	YDOC_E_SIZE,        /* larger than the bound */
	YDOC_E_UTF8,        /* not UTF-8, or a NUL byte */
	YDOC_E_DEPTH,       /* nested too deep (seen in the text) */
	YDOC_E_DEPTH_PARSE, /* nested too deep (seen by the parser) */
	YDOC_E_NODES,       /* more than YDOC_MAX_NODES */
	YDOC_E_ALIAS,       /* an anchor or an alias */
	YDOC_E_DOCS,        /* a second document */
	YDOC_E_KEY,         /* a duplicate key, or a key that is no scalar */
	YDOC_E_BUDGET,      /* over the time budget */
	YDOC_E_SYNTAX,      /* libyaml refused the text */
	YDOC_E_EMPTY,       /* no document: empty, or only comments */
};

struct ydoc_arena;

struct ydoc {
	char *name;     /* file name used in messages */
	unsigned line0; /* lines before the text (frontmatter) */
	int empty;      /* the text held no document (comments only) */
	enum ydoc_why why;
	struct ynode *root;
	size_t nnodes;
	struct ydoc_arena *arena;
};

/* How to load: every field may be 0 for its default. */
struct yopts {
	const char *name;     /* in messages; default: the path */
	size_t max_bytes;     /* default YDOC_MAX_BYTES */
	unsigned line0;       /* buffers: lines before the text */
	uint64_t deadline_ns; /* now_mono_ns() past which parsing stops;
	                         default YDOC_BUDGET_MS from the start */
};

/*
 * Load one document from a file or a buffer, with the default bounds;
 * errors read "name:line: why". On failure *y may still be freed (and
 * must be); y->why says what failed, y->empty that there was no YAML.
 */
int ydoc_load_file(struct ydoc *y, const char *path, struct error *e);
int ydoc_load_buf(struct ydoc *y, const char *name, const char *buf, size_t len,
    unsigned line0, struct error *e);
int ydoc_load_file_opt(
    struct ydoc *y, const char *path, const struct yopts *o, struct error *e);
int ydoc_load_buf_opt(struct ydoc *y, const char *buf, size_t len,
    const struct yopts *o, struct error *e);
/*
 * Read a regular file of at most max bytes (never opening a FIFO or
 * device, never following a symlink) into a new NUL-terminated buffer.
 * name is used in messages. why (may be NULL) gets YDOC_E_*.
 */
int ydoc_read_file(const char *path, const char *name, size_t max, char **buf,
    size_t *len, enum ydoc_why *why, struct error *e);
/* The same for path relative to the directory fd dfd (or AT_FDCWD). */
int ydoc_read_fileat(int dfd, const char *path, const char *name, size_t max,
    char **buf, size_t *len, enum ydoc_why *why, struct error *e);
/*
 * The open under both: an fd (O_RDONLY, O_NONBLOCK, O_CLOEXEC) of the
 * regular file dfd/path, *st filled, or -1 (e, why). Only a regular
 * file is ever opened (it is looked at without following a link
 * first), a symlink in the last component is refused, and the file
 * opened must be the one looked at.
 */
struct stat;
int ydoc_open_regular(int dfd, const char *path, const char *name,
    struct stat *st, enum ydoc_why *why, struct error *e);
/* A deadline ms from now, for struct yopts. */
uint64_t ydoc_deadline(unsigned ms);
void ydoc_free(struct ydoc *y);

struct ynode *ydoc_root(struct ydoc *y);
unsigned ynode_line(const struct ydoc *y, const struct ynode *n);
/* Fill e with "name:line: message" for node n; returns -1. */
int yerr(const struct ydoc *y, const struct ynode *n, struct error *e,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

struct ynode *ymap_get(struct ydoc *y, struct ynode *map, const char *key);
/* Every key of map must be in allowed (NULL-terminated). */
int ymap_only(struct ydoc *y, struct ynode *map, const char *const *allowed,
    struct error *e);
int yexpect(struct ydoc *y, struct ynode *n, enum ynode_type t,
    const char *what, struct error *e);
/* A scalar as a string (borrowed from the document). */
int yscalar(struct ydoc *y, struct ynode *n, const char **s, struct error *e);
int yuint(struct ydoc *y, struct ynode *n, uint64_t min, uint64_t max,
    uint64_t *out, struct error *e);
/* A sequence of scalars, copied into a new NULL-terminated array. */
int ystrlist(struct ydoc *y, struct ynode *n, size_t maxn, char ***out,
    size_t *count, struct error *e);

#endif
