/*
 * ydoc.c: the one YAML loader. Hostile text can neither stall it nor
 * fool it:
 *
 * - ydoc_read_file reads only a regular file: it lstat()s first (so a
 *   FIFO or device is never opened), opens with O_NONBLOCK|O_NOFOLLOW,
 *   checks the open file is the regular file it saw, and reads at most
 *   max + 1 bytes, whatever fstat says, so a growing file cannot blow
 *   the bound.
 * - nest_scan reads the text before libyaml does and refuses nesting
 *   deeper than YDOC_MAX_DEPTH, counting flow collections ([ and {
 *   outside quotes, comments and block scalars) and block levels
 *   (indentation columns, and "- " / "? " entries begun on one line).
 *   libyaml 0.2.5 is quadratic in nesting depth, so deep text must not
 *   reach it.
 * - The parser is driven event by event (yaml_parser_parse) into our
 *   own tree, and the depth is checked again there. That check is the
 *   authority: libyaml reads at most about 1 KiB of text ahead of the
 *   events it hands out, so even text the scan misjudged costs it
 *   little before the parse stops. Anchors and aliases are refused
 *   (nothing is ever shared or expanded), as are a second document,
 *   keys that are not scalars, duplicate keys, more than
 *   YDOC_MAX_NODES nodes, and parsing past the deadline.
 */
#include "ydoc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "util.h"
#include "xmalloc.h"

#define ARENA_NODES 256
#define DEADLINE_EVERY 64 /* events between two looks at the clock */

struct ydoc_arena {
	struct ydoc_arena *next;
	size_t used;
	struct ynode node[ARENA_NODES];
};

uint64_t
ydoc_deadline(unsigned ms)
{
	return now_mono_ns() + (uint64_t)ms * 1000000ULL;
}

static void
ydoc_init(struct ydoc *y, const char *name, unsigned line0)
{
	memset(y, 0, sizeof(*y));
	y->name = xstrdup(name);
	y->line0 = line0;
}

/* Set y->why and fill e with "name:line: why" (line 0: no line). */
static int yfail(struct ydoc *y, enum ydoc_why why, unsigned line,
    struct error *e, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int
yfail(struct ydoc *y, enum ydoc_why why, unsigned line, struct error *e,
    const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	y->why = why;
	if (why == YDOC_E_EMPTY)
		y->empty = 1;
	if (line == 0)
		return error_set(e, ERR_BAD_REQUEST, "%s: %s", y->name, msg);
	return error_set(e, ERR_BAD_REQUEST, "%s:%u: %s", y->name, line, msg);
}

/* ------------------------------------------------------------ reading */

static const char *
file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "not a regular file";
}

static int read_fail(enum ydoc_why *why, enum ydoc_why w, struct error *e,
    const char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int
read_fail(enum ydoc_why *why, enum ydoc_why w, struct error *e,
    const char *name, const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (why != NULL)
		*why = w;
	return error_set(e, ERR_BAD_REQUEST, "%s: %s", name, msg);
}

/* Open a regular file at dfd/path for reading without following a
 * symlink, blocking, or ever opening a FIFO or device; *st is it. */
int
ydoc_open_regular(int dfd, const char *path, const char *name, struct stat *st,
    enum ydoc_why *why, struct error *e)
{
	struct stat lst;
	int fd;

	/* Look before opening: opening a FIFO or a device may block or
	 * act; lstat does neither. */
	if (fstatat(dfd, path, &lst, AT_SYMLINK_NOFOLLOW) == -1)
		return read_fail(
		    why, YDOC_E_OPEN, e, name, "%s", strerror(errno));
	if (!S_ISREG(lst.st_mode))
		return read_fail(why, YDOC_E_NOTREG, e, name,
		    "%s, not a regular file", file_kind(lst.st_mode));
	fd = openat(dfd, path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1)
		return read_fail(why,
		    errno == ELOOP ? YDOC_E_NOTREG : YDOC_E_OPEN, e, name, "%s",
		    errno == ELOOP ? "a symbolic link, not a regular file"
		                   : strerror(errno));
	if (fstat(fd, st) == -1 || !S_ISREG(st->st_mode) ||
	    st->st_dev != lst.st_dev || st->st_ino != lst.st_ino) {
		close(fd);
		return read_fail(why, YDOC_E_NOTREG, e, name,
		    "not a regular file (it changed while being opened)");
	}
	return fd;
}

/* A path name, for callers that have no directory fd. */
int
ydoc_read_file(const char *path, const char *name, size_t max, char **out,
    size_t *outlen, enum ydoc_why *why, struct error *e)
{
	return ydoc_read_fileat(AT_FDCWD, path, name, max, out, outlen, why, e);
}

/* Bounded whatever fstat says, so a growing file cannot pass max. */
int
ydoc_read_fileat(int dfd, const char *path, const char *name, size_t max,
    char **out, size_t *outlen, enum ydoc_why *why, struct error *e)
{
	struct stat st;
	size_t cap, len = 0;
	ssize_t n;
	char *buf;
	int fd;

	*out = NULL;
	*outlen = 0;
	if ((fd = ydoc_open_regular(dfd, path, name, &st, why, e)) == -1)
		return -1;
	/* st_size is a hint: the file may grow while it is read. Room for
	 * max + 1 bytes (to see that it is too large) and a NUL. */
	cap = st.st_size > 0 && (size_t)st.st_size < max
	          ? (size_t)st.st_size + 2
	          : 4096;
	if (cap > max + 2)
		cap = max + 2;
	buf = xmalloc(cap);
	for (;;) {
		if (len == cap - 1) {
			if (cap == max + 2)
				break;
			cap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
			buf = xreallocarray(buf, cap, 1);
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			int err = errno;
			close(fd);
			free(buf);
			return read_fail(why, YDOC_E_OPEN, e, name, "read: %s",
			    strerror(err));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (len > max) {
		free(buf);
		return read_fail(
		    why, YDOC_E_SIZE, e, name, "larger than %zu bytes", max);
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = len;
	if (why != NULL)
		*why = YDOC_OK;
	return 0;
}

/* The 1-based line of the first byte that is not UTF-8 (or a NUL). */
static unsigned
bad_utf8_line(const char *buf, size_t len)
{
	size_t start = 0, i;
	unsigned line = 1;

	for (i = 0; i <= len; i++)
		if (i == len || buf[i] == '\n') {
			if (!utf8_valid(buf + start, i - start))
				return line;
			start = i + 1;
			line++;
		}
	return line;
}

/* ------------------------------------------------- the nesting scan */

/* A line break as libyaml counts them: its length at s[i], else 0. */
static size_t
ybreak(const unsigned char *s, size_t i, size_t len)
{
	if (i >= len)
		return 0;
	if (s[i] == '\n')
		return 1;
	if (s[i] == '\r')
		return i + 1 < len && s[i + 1] == '\n' ? 2 : 1;
	if (s[i] == 0xc2 && i + 1 < len && s[i + 1] == 0x85)
		return 2; /* NEL */
	if (s[i] == 0xe2 && i + 2 < len && s[i + 1] == 0x80 &&
	    (s[i + 2] == 0xa8 || s[i + 2] == 0xa9))
		return 3; /* LS, PS */
	return 0;
}

/* Blank, a break, or the end: what may follow an indicator. */
static int
yblankz(const unsigned char *s, size_t i, size_t len)
{
	return i >= len || s[i] == ' ' || s[i] == '\t' || ybreak(s, i, len);
}

static int
yflowind(unsigned char c)
{
	return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

enum scan_mode { SC_NORMAL, SC_SQUOTE, SC_DQUOTE, SC_BLOCK };

struct scan {
	const unsigned char *s;
	size_t len, i;
	unsigned max, line, flow, nlv;
	/* Open flow collections: '[', '{', or 'p', the single-pair mapping
	 * that "k: v" makes inside a flow sequence. */
	unsigned char fl[YDOC_MAX_DEPTH + 2];
	struct {
		unsigned col;
		int seq;
	} lv[YDOC_MAX_DEPTH + 2];
	enum scan_mode mode;
	int bs_parent;    /* block scalar: the enclosing level's column */
	int bs_indent;    /* its content's indentation; -1: not seen yet */
	int in_plain;     /* inside a plain scalar */
	int new_node;     /* the next token begins a node */
	int line_first;   /* ... the first of its line */
	int key;          /* the last token may be a key... */
	unsigned key_col; /* ... that began at this column */
};

static int
scan_deep(const struct scan *sc)
{
	return sc->nlv + sc->flow > sc->max;
}

enum lv_kind { LV_NONE, LV_SEQ, LV_MAP };

static int
scan_push(struct scan *sc, unsigned col, int seq)
{
	sc->lv[sc->nlv].col = col;
	sc->lv[sc->nlv].seq = seq;
	sc->nlv++;
	return scan_deep(sc) ? -1 : 0;
}

/*
 * A node begins at column col (when the scan expects one: sc->new_node).
 * The first of its line closes the deeper levels (and an indentless
 * sequence when a mapping goes on); a sequence entry "- " or an
 * explicit key "? " opens a level. A key found by its ": " opens its
 * mapping later (scan_key), so a plain value opens nothing.
 */
static int
scan_level(struct scan *sc, unsigned col, enum lv_kind kind)
{
	unsigned top;

	if (!sc->new_node)
		return 0;
	sc->new_node = 0;
	if (sc->line_first) {
		sc->line_first = 0;
		while (sc->nlv > 0 && sc->lv[sc->nlv - 1].col > col)
			sc->nlv--;
		if (kind != LV_SEQ && sc->nlv > 0 &&
		    sc->lv[sc->nlv - 1].col == col && sc->lv[sc->nlv - 1].seq)
			sc->nlv--;
	}
	if (kind == LV_NONE)
		return 0;
	top = sc->nlv > 0 ? sc->lv[sc->nlv - 1].col : 0;
	if (sc->nlv > 0 &&
	    (top > col ||
	        (top == col && sc->lv[sc->nlv - 1].seq == (kind == LV_SEQ))))
		return 0;
	return scan_push(sc, col, kind == LV_SEQ);
}

/* A node that may be a key: its mapping opens at its ": ". */
static void
scan_maybe_key(struct scan *sc, unsigned col)
{
	int at_node = sc->new_node;

	scan_level(sc, col, LV_NONE);
	sc->key = at_node && sc->flow == 0;
	sc->key_col = col;
}

/* ": " after a key that began a node: its mapping opens there. */
static int
scan_key(struct scan *sc)
{
	if (sc->nlv > 0 && (sc->lv[sc->nlv - 1].col > sc->key_col ||
	                       (sc->lv[sc->nlv - 1].col == sc->key_col &&
	                           !sc->lv[sc->nlv - 1].seq)))
		return 0;
	return scan_push(sc, sc->key_col, 0);
}

static int
scan_flow_open(struct scan *sc, unsigned char c)
{
	sc->fl[sc->flow++] = c;
	sc->i++;
	return scan_deep(sc) ? -1 : 0;
}

/* "k: v" (or "? k") in a flow sequence is a mapping of its own. */
static int
scan_flow_pair(struct scan *sc)
{
	if (sc->flow == 0 || sc->fl[sc->flow - 1] != '[')
		return 0;
	sc->fl[sc->flow++] = 'p';
	return scan_deep(sc) ? -1 : 0;
}

/* Skip an anchor, alias or tag name. */
static void
scan_name(struct scan *sc)
{
	while (!yblankz(sc->s, sc->i, sc->len) &&
	       !(sc->flow > 0 && yflowind(sc->s[sc->i])))
		sc->i++;
}

/* One character where a token may start. -1: too deep. */
static int
scan_token(struct scan *sc, unsigned col)
{
	const unsigned char *s = sc->s;
	unsigned char c = s[sc->i];
	size_t next = sc->i + 1;
	int key = sc->key, at_node;

	sc->key = 0; /* a key is followed by its ":" at once */
	switch (c) {
	case '\'':
	case '"':
		scan_maybe_key(sc, col);
		sc->mode = c == '\'' ? SC_SQUOTE : SC_DQUOTE;
		sc->i++;
		return 0;
	case '[':
	case '{':
		scan_level(sc, col, LV_NONE);
		return scan_flow_open(sc, c);
	case ']':
	case '}':
		if (sc->flow > 0 && sc->fl[sc->flow - 1] == 'p')
			sc->flow--;
		if (sc->flow > 0)
			sc->flow--;
		sc->i++;
		return 0;
	case ',':
		if (sc->flow > 0 && sc->fl[sc->flow - 1] == 'p')
			sc->flow--;
		sc->i++;
		return 0;
	case '-':
		if (sc->flow > 0 || !yblankz(s, next, sc->len))
			break;
		if (scan_level(sc, col, LV_SEQ) == -1)
			return -1;
		sc->new_node = 1; /* "- - a", "- a: b": compact nesting */
		sc->i++;
		return 0;
	case '?':
		if (sc->flow == 0 && !yblankz(s, next, sc->len))
			break;
		if (sc->flow == 0) {
			if (scan_level(sc, col, LV_MAP) == -1)
				return -1;
			sc->new_node = 1;
		}
		sc->i++;
		return scan_flow_pair(sc);
	case ':':
		if (sc->flow == 0 && !yblankz(s, next, sc->len))
			break;
		scan_level(sc, col, LV_NONE); /* ": v" on a line of its own */
		sc->i++;
		if (sc->flow > 0)
			return scan_flow_pair(sc);
		return key ? scan_key(sc) : 0;
	case '|':
	case '>':
		if (sc->flow > 0)
			break;
		scan_level(sc, col, LV_NONE);
		sc->mode = SC_BLOCK;
		sc->bs_parent = sc->nlv > 0 ? (int)sc->lv[sc->nlv - 1].col : -1;
		sc->bs_indent = -1;
		/* An explicit indentation indicator: |2, >-1, ... */
		while (next < sc->len && !yblankz(s, next, sc->len)) {
			if (s[next] >= '1' && s[next] <= '9')
				sc->bs_indent =
				    (sc->bs_parent >= 0 ? sc->bs_parent : 0) +
				    (s[next] - '0');
			next++;
		}
		sc->i = next;
		return 0;
	case '&':
	case '!':
		/* Properties of the node that follows. */
		at_node = sc->new_node;
		scan_level(sc, col, LV_NONE);
		sc->new_node = at_node;
		scan_name(sc);
		return 0;
	case '*':
		scan_maybe_key(sc, col);
		scan_name(sc);
		return 0;
	default:
		break;
	}
	/* A plain scalar begins: a value, or a key. */
	scan_maybe_key(sc, col);
	sc->in_plain = 1;
	sc->i++;
	return 0;
}

/* The rest of a line: 1 at its end, -1 when too deep. */
static int
scan_line(struct scan *sc, size_t line_start)
{
	const unsigned char *s = sc->s;
	int blank_before = 1;
	unsigned char c;

	while (sc->i < sc->len && !ybreak(s, sc->i, sc->len)) {
		c = s[sc->i];
		if (sc->mode == SC_SQUOTE) {
			if (c == '\'' && sc->i + 1 < sc->len &&
			    s[sc->i + 1] == '\'')
				sc->i += 2;
			else if (c == '\'') {
				sc->mode = SC_NORMAL;
				sc->i++;
			} else
				sc->i++;
			continue;
		}
		if (sc->mode == SC_DQUOTE) {
			if (c == '\\' && sc->i + 1 < sc->len &&
			    !ybreak(s, sc->i + 1, sc->len))
				sc->i += 2;
			else if (c == '"') {
				sc->mode = SC_NORMAL;
				sc->i++;
			} else
				sc->i++;
			continue;
		}
		if (sc->mode == SC_BLOCK)
			break; /* the rest of the header line is a comment */
		if (c == ' ' || c == '\t') {
			blank_before = 1;
			sc->i++;
			continue;
		}
		if (sc->in_plain) {
			if (c == '#' && blank_before) {
				sc->in_plain = 0;
				break;
			}
			if ((c == ':' &&
			        (yblankz(s, sc->i + 1, sc->len) ||
			            (sc->flow > 0 && sc->i + 1 < sc->len &&
			                (yflowind(s[sc->i + 1]) ||
			                    s[sc->i + 1] == '?')))) ||
			    (sc->flow > 0 && yflowind(c)))
				sc->in_plain = 0; /* the indicator is a token */
			else {
				blank_before = 0;
				sc->i++;
				continue;
			}
		}
		if (c == '#')
			break; /* a comment */
		if (scan_token(sc, (unsigned)(sc->i - line_start)) == -1)
			return -1;
		blank_before = 0;
	}
	return 1;
}

/*
 * Nesting in the text, before libyaml sees it: 0, or the 1-based line
 * where it goes deeper than max levels.
 */
static unsigned
nest_scan(const char *text, size_t len, unsigned max)
{
	struct scan sc;
	size_t ls, j, b;
	unsigned indent;

	memset(&sc, 0, sizeof(sc));
	if (max > YDOC_MAX_DEPTH)
		max = YDOC_MAX_DEPTH;
	sc.s = (const unsigned char *)text;
	sc.len = len;
	sc.max = max;
	sc.line = 1;
	while (sc.i < sc.len) {
		ls = sc.i;
		for (indent = 0; sc.i < sc.len && sc.s[sc.i] == ' '; sc.i++)
			indent++;
		for (j = sc.i;
		     j < sc.len && (sc.s[j] == ' ' || sc.s[j] == '\t');)
			j++;
		if (sc.mode == SC_BLOCK) {
			if (j >= sc.len || ybreak(sc.s, j, sc.len))
				goto next_line; /* blank lines belong to it */
			if (indent == 0 && sc.len - sc.i >= 3 &&
			    (memcmp(sc.s + sc.i, "---", 3) == 0 ||
			        memcmp(sc.s + sc.i, "...", 3) == 0) &&
			    yblankz(sc.s, sc.i + 3, sc.len))
				sc.bs_indent =
				    1; /* a document marker ends it */
			if (sc.bs_indent < 0 && (int)indent > sc.bs_parent)
				sc.bs_indent = (int)indent;
			if (sc.bs_indent >= 0 && (int)indent >= sc.bs_indent)
				goto next_line;
			sc.mode = SC_NORMAL;
		}
		/* libyaml skips a BOM at column 0 between tokens, as one
		 * column: so do we, or what follows it would hide from us. */
		if (sc.mode == SC_NORMAL && indent == 0 && sc.len - sc.i >= 3 &&
		    memcmp(sc.s + sc.i, "\xef\xbb\xbf", 3) == 0) {
			sc.i += 3;
			ls += 2; /* columns from here on are libyaml's */
			for (indent = 1; sc.i < sc.len && sc.s[sc.i] == ' ';
			     sc.i++)
				indent++;
			for (j = sc.i;
			     j < sc.len && (sc.s[j] == ' ' || sc.s[j] == '\t');)
				j++;
		}
		if (sc.mode == SC_NORMAL && sc.flow == 0) {
			sc.in_plain = 0;
			if (j >= sc.len || ybreak(sc.s, j, sc.len) ||
			    sc.s[j] == '#')
				goto next_line; /* blank, or a comment */
			if (indent == 0 && sc.len - sc.i >= 3 &&
			    (memcmp(sc.s + sc.i, "---", 3) == 0 ||
			        memcmp(sc.s + sc.i, "...", 3) == 0) &&
			    yblankz(sc.s, sc.i + 3, sc.len)) {
				sc.nlv = 0; /* a document marker */
				sc.i += 3;
			} else if (indent == 0 && sc.s[sc.i] == '%')
				goto next_line; /* a directive */
			sc.new_node = 1;
			sc.line_first = 1;
			sc.key = 0;
		}
		if (scan_line(&sc, ls) == -1)
			return sc.line;
	next_line:
		while (sc.i < sc.len && !ybreak(sc.s, sc.i, sc.len))
			sc.i++;
		if ((b = ybreak(sc.s, sc.i, sc.len)) > 0) {
			sc.i += b;
			sc.line++;
		}
	}
	return 0;
}

/* ----------------------------------------------------- the event tree */

struct frame {
	struct ynode *node;
	struct ynode **v; /* children; a mapping's alternate key, value */
	size_t n, cap;
};

struct build {
	struct ydoc *y;
	struct frame st[YDOC_MAX_DEPTH];
	size_t depth;
	unsigned ndocs;
};

static struct ynode *
node_new(struct ydoc *y, enum ynode_type t, unsigned line)
{
	struct ydoc_arena *a = y->arena;
	struct ynode *n;

	if (a == NULL || a->used == ARENA_NODES) {
		a = xcalloc(1, sizeof(*a));
		a->next = y->arena;
		y->arena = a;
	}
	n = &a->node[a->used++];
	n->type = t;
	n->line = line;
	y->nnodes++;
	return n;
}

static unsigned
mark_line(const struct ydoc *y, const yaml_mark_t *m)
{
	return (unsigned)m->line + 1 + y->line0;
}

struct keyref {
	const struct ynode *k;
	size_t i;
};

static int
keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	size_t l = x->k->len < y->k->len ? x->k->len : y->k->len;
	int c = memcmp(x->k->str, y->k->str, l);

	if (c != 0)
		return c;
	if (x->k->len != y->k->len)
		return x->k->len < y->k->len ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Duplicate keys, found in O(n log n): the first repeat is reported. */
static int
map_unique(struct build *b, struct ynode *m, struct error *e)
{
	struct keyref *r;
	const struct ynode *dup = NULL;
	size_t i, dup_i = 0;

	if (m->n < 2)
		return 0;
	r = xcalloc(m->n, sizeof(*r));
	for (i = 0; i < m->n; i++) {
		r[i].k = m->pairs[i].key;
		r[i].i = i;
	}
	qsort(r, m->n, sizeof(*r), keyref_cmp);
	for (i = 1; i < m->n; i++)
		if (r[i].k->len == r[i - 1].k->len &&
		    memcmp(r[i].k->str, r[i - 1].k->str, r[i].k->len) == 0 &&
		    (dup == NULL || r[i].i < dup_i)) {
			dup = r[i].k;
			dup_i = r[i].i;
		}
	free(r);
	if (dup != NULL)
		return yfail(b->y, YDOC_E_KEY, dup->line, e,
		    "duplicate key \"%.64s\"", dup->str);
	return 0;
}

/* Attach n to the open collection, or make it the root. */
static int
attach(struct build *b, struct ynode *n, struct error *e)
{
	struct frame *f;

	if (b->depth == 0) {
		b->y->root = n;
		return 0;
	}
	f = &b->st[b->depth - 1];
	if (f->node->type == YNODE_MAP && f->n % 2 == 0 &&
	    n->type != YNODE_SCALAR)
		return yfail(b->y, YDOC_E_KEY, n->line, e,
		    "a key must be a single value, not a list or a mapping");
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 8;
		f->v = xreallocarray(f->v, f->cap, sizeof(*f->v));
	}
	f->v[f->n++] = n;
	return 0;
}

static int
close_frame(struct build *b, struct error *e)
{
	struct frame *f = &b->st[--b->depth];
	struct ynode *n = f->node;
	size_t i;

	if (n->type == YNODE_SEQ) {
		n->items = f->v;
		n->n = f->n;
	} else {
		n->n = f->n / 2;
		n->pairs = xcalloc(n->n + 1, sizeof(*n->pairs));
		for (i = 0; i < n->n; i++) {
			n->pairs[i].key = f->v[2 * i];
			n->pairs[i].value = f->v[2 * i + 1];
		}
		free(f->v);
	}
	memset(f, 0, sizeof(*f));
	return n->type == YNODE_MAP ? map_unique(b, n, e) : 0;
}

static int
anchor_refused(
    struct build *b, const yaml_char_t *anchor, unsigned line, struct error *e)
{
	if (anchor == NULL)
		return 0;
	return yfail(b->y, YDOC_E_ALIAS, line, e,
	    "anchor \"&%.40s\": anchors and aliases are not allowed (write "
	    "the value out)",
	    (const char *)anchor);
}

/* One event into the tree. */
static int
on_event(struct build *b, const yaml_event_t *ev, struct error *e)
{
	struct ydoc *y = b->y;
	unsigned line = mark_line(y, &ev->start_mark);
	struct ynode *n;
	char *s;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (b->ndocs++ > 0)
			return yfail(y, YDOC_E_DOCS, line, e,
			    "a second YAML document (after \"---\"): a file "
			    "holds exactly one");
		return 0;
	case YAML_ALIAS_EVENT:
		return yfail(y, YDOC_E_ALIAS, line, e,
		    "alias \"*%.40s\": anchors and aliases are not allowed "
		    "(write the value out)",
		    (const char *)ev->data.alias.anchor);
	case YAML_SCALAR_EVENT:
		if (anchor_refused(b, ev->data.scalar.anchor, line, e) == -1)
			return -1;
		break;
	case YAML_SEQUENCE_START_EVENT:
		if (anchor_refused(b, ev->data.sequence_start.anchor, line, e))
			return -1;
		break;
	case YAML_MAPPING_START_EVENT:
		if (anchor_refused(b, ev->data.mapping_start.anchor, line, e))
			return -1;
		break;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return b->depth > 0 ? close_frame(b, e) : 0;
	default:
		return 0;
	}
	if (y->nnodes >= YDOC_MAX_NODES)
		return yfail(y, YDOC_E_NODES, line, e,
		    "more than %d YAML nodes (values, lists and mappings)",
		    YDOC_MAX_NODES);
	if (ev->type == YAML_SCALAR_EVENT) {
		n = node_new(y, YNODE_SCALAR, line);
		s = xmalloc(ev->data.scalar.length + 1);
		memcpy(s, ev->data.scalar.value, ev->data.scalar.length);
		s[ev->data.scalar.length] = '\0';
		n->str = s;
		n->len = ev->data.scalar.length;
		return attach(b, n, e);
	}
	if (b->depth == YDOC_MAX_DEPTH)
		return yfail(y, YDOC_E_DEPTH_PARSE, line, e,
		    "nested deeper than %d levels", YDOC_MAX_DEPTH);
	n = node_new(y,
	    ev->type == YAML_SEQUENCE_START_EVENT ? YNODE_SEQ : YNODE_MAP,
	    line);
	if (attach(b, n, e) == -1)
		return -1;
	b->st[b->depth++].node = n;
	return 0;
}

static int
parse_events(struct ydoc *y, const char *buf, size_t len, uint64_t deadline,
    struct error *e)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct build b;
	unsigned long count = 0;
	int rc = 0, done = 0;

	memset(&b, 0, sizeof(b));
	b.y = y;
	if (!yaml_parser_initialize(&p))
		return error_set(
		    e, ERR_INTERNAL, "%s: yaml init failed", y->name);
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	while (!done && rc == 0) {
		if (count++ % DEADLINE_EVERY == 0 && now_mono_ns() > deadline) {
			rc = yfail(y, YDOC_E_BUDGET,
			    (unsigned)p.mark.line + 1 + y->line0, e,
			    "parsing stopped: over its time budget");
			break;
		}
		if (!yaml_parser_parse(&p, &ev)) {
			rc = yfail(y, YDOC_E_SYNTAX,
			    (unsigned)p.problem_mark.line + 1 + y->line0, e,
			    "%s", p.problem ? p.problem : "YAML syntax error");
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(&b, &ev, e);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	while (b.depth > 0) /* a failed parse: free the open frames */
		free(b.st[--b.depth].v);
	if (rc == 0 && b.ndocs == 0)
		rc = yfail(y, YDOC_E_EMPTY, y->line0 + 1, e,
		    "no YAML document (the text is empty or only comments)");
	return rc;
}

int
ydoc_load_buf_opt(struct ydoc *y, const char *buf, size_t len,
    const struct yopts *o, struct error *e)
{
	uint64_t deadline;
	unsigned line;

	deadline =
	    o->deadline_ns ? o->deadline_ns : ydoc_deadline(YDOC_BUDGET_MS);
	ydoc_init(y, o->name ? o->name : "(text)", o->line0);
	if (o->max_bytes && len > o->max_bytes)
		return yfail(y, YDOC_E_SIZE, 0, e, "larger than %zu bytes",
		    o->max_bytes);
	if (!utf8_valid(buf, len))
		return yfail(y, YDOC_E_UTF8, bad_utf8_line(buf, len) + o->line0,
		    e, "not valid UTF-8 text");
	if ((line = nest_scan(buf, len, YDOC_MAX_DEPTH)) != 0)
		return yfail(y, YDOC_E_DEPTH, line + o->line0, e,
		    "nested deeper than %d levels", YDOC_MAX_DEPTH);
	if (parse_events(y, buf, len, deadline, e) == -1)
		return -1;
	y->why = YDOC_OK;
	return 0;
}

int
ydoc_load_buf(struct ydoc *y, const char *name, const char *buf, size_t len,
    unsigned line0, struct error *e)
{
	struct yopts o = {name, 0, line0, 0};

	return ydoc_load_buf_opt(y, buf, len, &o, e);
}

int
ydoc_load_file_opt(
    struct ydoc *y, const char *path, const struct yopts *o, struct error *e)
{
	struct yopts bo = *o;
	enum ydoc_why why;
	char *buf;
	size_t len;
	int r;

	if (bo.name == NULL)
		bo.name = path;
	if (bo.max_bytes == 0)
		bo.max_bytes = YDOC_MAX_BYTES;
	if (bo.deadline_ns == 0) /* reading counts against the budget */
		bo.deadline_ns = ydoc_deadline(YDOC_BUDGET_MS);
	if (ydoc_read_file(path, bo.name, bo.max_bytes, &buf, &len, &why, e) ==
	    -1) {
		ydoc_init(y, bo.name, bo.line0);
		y->why = why;
		return -1;
	}
	r = ydoc_load_buf_opt(y, buf, len, &bo, e);
	free(buf);
	return r;
}

int
ydoc_load_file(struct ydoc *y, const char *path, struct error *e)
{
	struct yopts o = {path, 0, 0, 0};

	return ydoc_load_file_opt(y, path, &o, e);
}

void
ydoc_free(struct ydoc *y)
{
	struct ydoc_arena *a, *next;
	size_t i;

	for (a = y->arena; a != NULL; a = next) {
		next = a->next;
		for (i = 0; i < a->used; i++) {
			free(a->node[i].str);
			free(a->node[i].items);
			free(a->node[i].pairs);
		}
		free(a);
	}
	free(y->name);
	memset(y, 0, sizeof(*y));
}

/* ---------------------------------------------------------- accessors */

struct ynode *
ydoc_root(struct ydoc *y)
{
	return y->root;
}

unsigned
ynode_line(const struct ydoc *y, const struct ynode *n)
{
	return n != NULL ? n->line : y->line0 + 1;
}

int
yerr(const struct ydoc *y, const struct ynode *n, struct error *e,
    const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(
	    e, ERR_BAD_REQUEST, "%s:%u: %s", y->name, ynode_line(y, n), msg);
}

int
yexpect(struct ydoc *y, struct ynode *n, enum ynode_type t, const char *what,
    struct error *e)
{
	static const char *const kind[] = {
	    "nothing", "a scalar", "a list", "a mapping"};

	if (n == NULL || n->type != t)
		return yerr(y, n, e, "%s must be %s", what,
		    kind[t <= YNODE_MAP ? t : 0]);
	return 0;
}

struct ynode *
ymap_get(struct ydoc *y, struct ynode *map, const char *key)
{
	size_t i, l = strlen(key);

	(void)y;
	if (map == NULL || map->type != YNODE_MAP)
		return NULL;
	for (i = 0; i < map->n; i++)
		if (map->pairs[i].key->len == l &&
		    memcmp(map->pairs[i].key->str, key, l) == 0)
			return map->pairs[i].value;
	return NULL;
}

/* Unknown keys are errors: a typo must not pass silently. (The loader
 * has refused duplicate keys already.) */
int
ymap_only(struct ydoc *y, struct ynode *map, const char *const *allowed,
    struct error *e)
{
	const struct ynode *k;
	size_t i, j;

	for (i = 0; i < map->n; i++) {
		k = map->pairs[i].key;
		for (j = 0; allowed[j] != NULL; j++)
			if (strlen(allowed[j]) == k->len &&
			    memcmp(allowed[j], k->str, k->len) == 0)
				break;
		if (allowed[j] == NULL)
			return yerr(y, k, e, "unknown key \"%.64s\"", k->str);
	}
	return 0;
}

int
yscalar(struct ydoc *y, struct ynode *n, const char **s, struct error *e)
{
	if (n == NULL || n->type != YNODE_SCALAR)
		return yerr(y, n, e, "expected a single value");
	*s = n->str;
	if (strlen(*s) != n->len)
		return yerr(y, n, e, "value contains a NUL byte");
	return 0;
}

int
yuint(struct ydoc *y, struct ynode *n, uint64_t min, uint64_t max,
    uint64_t *out, struct error *e)
{
	const char *s;

	if (yscalar(y, n, &s, e) == -1)
		return -1;
	if (parse_uint(s, min, max, out) == -1)
		return yerr(y, n, e, "expected a whole number in %llu..%llu",
		    (unsigned long long)min, (unsigned long long)max);
	return 0;
}

int
ystrlist(struct ydoc *y, struct ynode *n, size_t maxn, char ***out,
    size_t *count, struct error *e)
{
	const char *s;
	size_t i;
	char **v;

	if (yexpect(y, n, YNODE_SEQ, "value", e) == -1)
		return -1;
	if (n->n > maxn)
		return yerr(y, n, e, "more than %zu entries", maxn);
	v = xcalloc(n->n + 1, sizeof(*v));
	for (i = 0; i < n->n; i++) {
		if (yscalar(y, n->items[i], &s, e) == -1) {
			strarr_free(v, i);
			return -1;
		}
		v[i] = xstrdup(s);
	}
	*out = v;
	*count = n->n;
	return 0;
}
