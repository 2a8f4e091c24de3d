/* ydoc.c: libyaml document helpers that report file:line on every error. */
#include "ydoc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"
#include "xmalloc.h"

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

int
ydoc_load_buf(struct ydoc *y, const char *name, const char *buf, size_t len,
    unsigned line0, struct error *e)
{
	yaml_parser_t p;
	int ok;

	memset(y, 0, sizeof(*y));
	y->name = xstrdup(name);
	y->line0 = line0;
	if (!utf8_valid(buf, len))
		return error_set(e, ERR_BAD_REQUEST,
		    "%s:%u: not valid UTF-8 "
		    "text",
		    name, bad_utf8_line(buf, len) + line0);
	if (!yaml_parser_initialize(&p))
		return error_set(e, ERR_INTERNAL, "%s: yaml init failed", name);
	yaml_parser_set_input_string(&p, (const unsigned char *)buf, len);
	ok = yaml_parser_load(&p, &y->doc);
	if (!ok) {
		error_set(e, ERR_BAD_REQUEST, "%s:%zu: %s", name,
		    p.problem_mark.line + 1 + line0,
		    p.problem ? p.problem : "YAML syntax error");
		yaml_parser_delete(&p);
		return -1;
	}
	y->loaded = 1;
	yaml_parser_delete(&p);
	if (yaml_document_get_root_node(&y->doc) == NULL) {
		y->empty = 1;
		return error_set(e, ERR_BAD_REQUEST, "%s:%u: empty document",
		    name, line0 + 1);
	}
	return 0;
}

/* Read a regular file of bounded size without following a final symlink. */
int
ydoc_load_file(struct ydoc *y, const char *path, struct error *e)
{
	struct stat st;
	char *buf;
	int fd, r;

	memset(y, 0, sizeof(*y));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return error_set(
		    e, ERR_BAD_REQUEST, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > YDOC_MAX_BYTES) {
		close(fd);
		return error_set(e, ERR_BAD_REQUEST,
		    "%s: not a regular file of at most %d bytes", path,
		    YDOC_MAX_BYTES);
	}
	buf = xmalloc((size_t)st.st_size + 1);
	r = read_full(fd, buf, (size_t)st.st_size);
	close(fd);
	if (r != 0) {
		free(buf);
		return error_set(e, ERR_BAD_REQUEST, "%s: read failed", path);
	}
	r = ydoc_load_buf(y, path, buf, (size_t)st.st_size, 0, e);
	free(buf);
	return r;
}

void
ydoc_free(struct ydoc *y)
{
	if (y->loaded)
		yaml_document_delete(&y->doc);
	free(y->name);
	memset(y, 0, sizeof(*y));
}

yaml_node_t *
ydoc_root(struct ydoc *y)
{
	return yaml_document_get_root_node(&y->doc);
}

unsigned
ynode_line(const struct ydoc *y, const yaml_node_t *n)
{
	return (unsigned)n->start_mark.line + 1 + y->line0;
}

int
yerr(const struct ydoc *y, const yaml_node_t *n, struct error *e,
    const char *fmt, ...)
{
	char msg[ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error_set(e, ERR_BAD_REQUEST, "%s:%u: %s", y->name,
	    n ? ynode_line(y, n) : y->line0 + 1, msg);
}

int
yexpect(struct ydoc *y, yaml_node_t *n, yaml_node_type_t t, const char *what,
    struct error *e)
{
	static const char *const kind[] = {
	    "nothing", "a scalar", "a list", "a mapping"};

	if (n->type != t)
		return yerr(y, n, e, "%s must be %s", what,
		    kind[t <= YAML_MAPPING_NODE ? t : 0]);
	return 0;
}

yaml_node_t *
ymap_get(struct ydoc *y, yaml_node_t *map, const char *key)
{
	yaml_node_pair_t *p;
	yaml_node_t *k;

	if (map == NULL || map->type != YAML_MAPPING_NODE)
		return NULL;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		k = yaml_document_get_node(&y->doc, p->key);
		if (k != NULL && k->type == YAML_SCALAR_NODE &&
		    strcmp((const char *)k->data.scalar.value, key) == 0)
			return yaml_document_get_node(&y->doc, p->value);
	}
	return NULL;
}

/* Unknown or duplicate keys are errors: a typo must not pass silently. */
int
ymap_only(struct ydoc *y, yaml_node_t *map, const char *const *allowed,
    struct error *e)
{
	yaml_node_pair_t *p, *q;
	yaml_node_t *k, *k2;
	size_t i;
	int found;

	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
	     p++) {
		k = yaml_document_get_node(&y->doc, p->key);
		if (k == NULL || k->type != YAML_SCALAR_NODE)
			return yerr(y, k, e, "keys must be plain names");
		found = 0;
		for (i = 0; allowed[i] != NULL; i++)
			if (strcmp((const char *)k->data.scalar.value,
			        allowed[i]) == 0)
				found = 1;
		if (!found)
			return yerr(y, k, e, "unknown key \"%s\"",
			    (const char *)k->data.scalar.value);
		for (q = map->data.mapping.pairs.start; q < p; q++) {
			k2 = yaml_document_get_node(&y->doc, q->key);
			if (k2 != NULL && k2->type == YAML_SCALAR_NODE &&
			    strcmp((const char *)k2->data.scalar.value,
			        (const char *)k->data.scalar.value) == 0)
				return yerr(y, k, e, "duplicate key \"%s\"",
				    (const char *)k->data.scalar.value);
		}
	}
	return 0;
}

int
yscalar(struct ydoc *y, yaml_node_t *n, const char **s, struct error *e)
{
	if (n == NULL || n->type != YAML_SCALAR_NODE)
		return yerr(y, n, e, "expected a single value");
	*s = (const char *)n->data.scalar.value;
	if (strlen(*s) != n->data.scalar.length)
		return yerr(y, n, e, "value contains a NUL byte");
	return 0;
}

int
yuint(struct ydoc *y, yaml_node_t *n, uint64_t min, uint64_t max, uint64_t *out,
    struct error *e)
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
ystrlist(struct ydoc *y, yaml_node_t *n, size_t maxn, char ***out,
    size_t *count, struct error *e)
{
	yaml_node_item_t *it;
	yaml_node_t *item;
	const char *s;
	size_t num, i = 0;
	char **v;

	if (yexpect(y, n, YAML_SEQUENCE_NODE, "value", e) == -1)
		return -1;
	num =
	    (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
	if (num > maxn)
		return yerr(y, n, e, "more than %zu entries", maxn);
	v = xcalloc(num + 1, sizeof(*v));
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top;
	     it++) {
		item = yaml_document_get_node(&y->doc, *it);
		if (yscalar(y, item, &s, e) == -1) {
			while (i > 0)
				free(v[--i]);
			free(v);
			return -1;
		}
		v[i++] = xstrdup(s);
	}
	*out = v;
	*count = num;
	return 0;
}
