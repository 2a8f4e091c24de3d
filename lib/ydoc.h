/* ydoc.h: a loaded YAML document (libyaml) with line-numbered errors. */
#ifndef SB_YDOC_H
#define SB_YDOC_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "error.h"

#define YDOC_MAX_BYTES (1024 * 1024)

struct ydoc {
	yaml_document_t doc;
	int loaded;
	char *name;     /* file name used in messages */
	unsigned line0; /* added to libyaml's line numbers */
	int empty;      /* the text held no document (comments only) */
};

/* Load one document from a file or a buffer; errors read "name:line: why". */
int ydoc_load_file(struct ydoc *y, const char *path, struct error *e);
int ydoc_load_buf(struct ydoc *y, const char *name, const char *buf, size_t len,
    unsigned line0, struct error *e);
void ydoc_free(struct ydoc *y);

yaml_node_t *ydoc_root(struct ydoc *y);
unsigned ynode_line(const struct ydoc *y, const yaml_node_t *n);
/* Fill e with "name:line: message" for node n; returns -1. */
int yerr(const struct ydoc *y, const yaml_node_t *n, struct error *e,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

yaml_node_t *ymap_get(struct ydoc *y, yaml_node_t *map, const char *key);
/* Every key of map must be in allowed (NULL-terminated). */
int ymap_only(struct ydoc *y, yaml_node_t *map, const char *const *allowed,
    struct error *e);
int yexpect(struct ydoc *y, yaml_node_t *n, yaml_node_type_t t,
    const char *what, struct error *e);
/* A scalar as a string (borrowed from the document). */
int yscalar(struct ydoc *y, yaml_node_t *n, const char **s, struct error *e);
int yuint(struct ydoc *y, yaml_node_t *n, uint64_t min, uint64_t max,
    uint64_t *out, struct error *e);
/* A sequence of scalars, copied into a new NULL-terminated array. */
int ystrlist(struct ydoc *y, yaml_node_t *n, size_t maxn, char ***out,
    size_t *count, struct error *e);

#endif
