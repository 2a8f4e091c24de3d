/*
 * fuzz_yaml.c: libFuzzer harness for the YAML loader (lib/ydoc.c), run
 * through the path a policy file's bytes take in policyd
 * (policy_load_text), then against the loader's own promises:
 *
 * - a refusal is a bad_request whose message starts "fuzz.yaml:";
 * - an accepted tree nests at most YDOC_MAX_DEPTH deep, holds at most
 *   YDOC_MAX_NODES nodes, has scalar, unique keys and lines within the
 *   text, and libyaml's own loader reads the text as one document;
 * - nesting that the parser sees, the scan of the text saw first
 *   (YDOC_E_DEPTH_PARSE never happens), so deep text never reaches
 *   libyaml.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "../../lib/ydoc.h"
#include "../../policyd/policyd_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned
count_lines(const uint8_t *d, size_t n)
{
	unsigned lines = 2; /* libyaml ends a last line without a break */
	size_t i;

	for (i = 0; i < n; i++)
		if (d[i] == '\n' || d[i] == '\r' || d[i] == 0xc2 ||
		    d[i] == 0xe2)
			lines++; /* at least every break libyaml counts */
	return lines;
}

static size_t
walk(const struct ynode *n, unsigned depth, unsigned maxline)
{
	size_t count = 1, i, j;

	if (n == NULL || n->line < 1 || n->line > maxline)
		abort();
	switch (n->type) {
	case YNODE_SCALAR:
		if (n->str == NULL || n->str[n->len] != '\0')
			abort();
		return 1;
	case YNODE_SEQ:
		if (depth + 1 > YDOC_MAX_DEPTH)
			abort();
		for (i = 0; i < n->n; i++)
			count += walk(n->items[i], depth + 1, maxline);
		return count;
	case YNODE_MAP:
		if (depth + 1 > YDOC_MAX_DEPTH)
			abort();
		for (i = 0; i < n->n; i++) {
			if (n->pairs[i].key->type != YNODE_SCALAR)
				abort();
			for (j = 0; j < i && n->n < 64; j++)
				if (n->pairs[j].key->len ==
				        n->pairs[i].key->len &&
				    memcmp(n->pairs[j].key->str,
				        n->pairs[i].key->str,
				        n->pairs[i].key->len) == 0)
					abort();
			count += walk(n->pairs[i].key, depth + 1, maxline);
			count += walk(n->pairs[i].value, depth + 1, maxline);
		}
		return count;
	}
	abort();
}

/* libyaml's own loader agrees: one document, no error. */
static void
libyaml_agrees(const uint8_t *data, size_t size)
{
	yaml_parser_t p;
	yaml_document_t d1, d2;

	if (!yaml_parser_initialize(&p))
		abort();
	yaml_parser_set_input_string(&p, data, size);
	yaml_parser_set_encoding(&p, YAML_UTF8_ENCODING);
	if (!yaml_parser_load(&p, &d1))
		abort();
	if (yaml_document_get_root_node(&d1) == NULL)
		abort();
	if (!yaml_parser_load(&p, &d2))
		abort();
	if (yaml_document_get_root_node(&d2) != NULL)
		abort();
	yaml_document_delete(&d2);
	yaml_document_delete(&d1);
	yaml_parser_delete(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy pol;
	struct error e;
	struct ydoc y;
	int r;

	/* What policyd does with a policy file's bytes. */
	memset(&pol, 0, sizeof(pol));
	memset(&e, 0, sizeof(e));
	if (policy_load_text(
	        &pol, "fuzz.yaml", (const char *)data, size, 0, &e) == -1 &&
	    (e.type != ERR_BAD_REQUEST || strncmp(e.msg, "fuzz.yaml", 9) != 0))
		abort();
	policy_free(&pol);

	/* The loader's promises. */
	memset(&e, 0, sizeof(e));
	r = ydoc_load_buf(&y, "fuzz.yaml", (const char *)data, size, 0, &e);
	if (r == 0) {
		if (y.why != YDOC_OK || y.nnodes > YDOC_MAX_NODES ||
		    walk(ydoc_root(&y), 0, count_lines(data, size)) != y.nnodes)
			abort();
		libyaml_agrees(data, size);
	} else {
		if (e.type != ERR_BAD_REQUEST ||
		    strncmp(e.msg, "fuzz.yaml:", 10) != 0 || y.why == YDOC_OK)
			abort();
		if (y.why == YDOC_E_DEPTH_PARSE) /* the scan missed it */
			abort();
	}
	ydoc_free(&y);
	return 0;
}
