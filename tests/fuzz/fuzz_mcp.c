/*
 * fuzz_mcp.c: libFuzzer harness for what an MCP host can write to
 * skillbroker-mcp: the bytes are cut into lines as the adapter cuts its
 * stdin (a small line bound, so long lines are dropped as they come),
 * and each line is classified and, when it is a tools/call's params,
 * its arguments checked, as the adapter does before anything reaches
 * the broker.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../mcp/mcp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One line: a message, and for a request its arguments if it has any. */
static void
fuzz_line(void *arg, const char *line, size_t len, int oversize)
{
	struct mcp_args a;
	struct mcp_msg m;
	struct error e;
	json_t *args;

	(void)arg;
	if (oversize)
		return;
	memset(&m, 0, sizeof(m));
	mcp_rpc_parse(line, len, &m);
	if (m.kind == MCP_MSG_REQUEST && m.params != NULL &&
	    (args = json_object_get(m.params, "arguments")) != NULL) {
		memset(&a, 0, sizeof(a));
		if (mcp_args_parse(args, &a, &e) == 0)
			mcp_args_free(&a);
	}
	mcp_rpc_free(&m);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_line l;
	size_t half = size / 2;

	mcp_line_init(&l, 4096);
	/* in two reads, so a line can span them */
	mcp_line_feed(&l, (const char *)data, half, fuzz_line, NULL);
	mcp_line_feed(
	    &l, (const char *)data + half, size - half, fuzz_line, NULL);
	mcp_line_eof(&l, fuzz_line, NULL);
	mcp_line_free(&l);
	return 0;
}
