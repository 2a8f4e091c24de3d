/*
 * mcp_init.c: initialize. The client names the revision it wants; we
 * answer it when we speak it, else our latest (the client may then
 * disconnect). We speak the revisions without JSON-RPC batches:
 * 2025-03-26 requires a server to take batches, so it is not among them.
 * What we serve: tools (with list_changed) and resources (with
 * list_changed). Elicitation in form mode is what approvals need.
 */
#include "mcp.h"

#include <stdio.h>
#include <string.h>

const char *const mcp_protocols[] = {
    MCP_PROTOCOL_LATEST, "2025-06-18", "2024-11-05", NULL};

/* A string member of o into buf, or -1 when it is absent or not one. */
static int
mcp_init_str(json_t *o, const char *key, char *buf, size_t len)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		return -1;
	(void)snprintf(buf, len, "%s", json_string_value(v));
	return 0;
}

/* 1 if the client takes form elicitations: "elicitation": {} (form, as
 * 2025-06-18 had it) or one that names "form". */
static int
mcp_init_elicitation(json_t *caps)
{
	json_t *el = json_object_get(caps, "elicitation");

	if (!json_is_object(el))
		return 0;
	return json_object_size(el) == 0 || json_object_get(el, "form") != NULL;
}

/* initialize: check the params, agree on a revision, say what we serve. */
json_t *
mcp_init_answer(json_t *params, struct mcp_client_caps *caps, struct error *e)
{
	char want[64];
	json_t *ccaps, *info, *scaps;
	size_t i;

	memset(caps, 0, sizeof(*caps));
	if (!json_is_object(params)) {
		(void)error_set(e, ERR_BAD_REQUEST,
		    "initialize takes params: protocolVersion, capabilities, "
		    "clientInfo");
		return NULL;
	}
	if (mcp_init_str(params, "protocolVersion", want, sizeof(want)) == -1) {
		(void)error_set(
		    e, ERR_BAD_REQUEST, "protocolVersion must be a string");
		return NULL;
	}
	ccaps = json_object_get(params, "capabilities");
	if (!json_is_object(ccaps)) {
		(void)error_set(
		    e, ERR_BAD_REQUEST, "capabilities must be an object");
		return NULL;
	}
	info = json_object_get(params, "clientInfo");
	if (!json_is_object(info) ||
	    mcp_init_str(info, "name", caps->name, sizeof(caps->name)) == -1) {
		(void)error_set(e, ERR_BAD_REQUEST,
		    "clientInfo must be an object with a name");
		return NULL;
	}
	if (mcp_init_str(
	        info, "version", caps->version, sizeof(caps->version)) == -1)
		(void)snprintf(caps->version, sizeof(caps->version), "?");
	for (i = 0; mcp_protocols[i] != NULL; i++)
		if (strcmp(want, mcp_protocols[i]) == 0)
			break;
	(void)snprintf(caps->protocol, sizeof(caps->protocol), "%s",
	    mcp_protocols[i] ? mcp_protocols[i] : MCP_PROTOCOL_LATEST);
	caps->elicitation = mcp_init_elicitation(ccaps);
	scaps = json_pack("{s:{s:b}, s:{s:b}}", "tools", "listChanged", 1,
	    "resources", "listChanged", 1);
	return json_pack("{s:s, s:o, s:{s:s, s:s, s:s}, s:s}",
	    "protocolVersion", caps->protocol, "capabilities", scaps,
	    "serverInfo", "name", MCP_SERVER_NAME, "title", "skillbroker",
	    "version", SB_VERSION, "instructions",
	    "Each tool runs one command of a skill (an Agent Skills "
	    "directory) through the local skillbroker daemon, in a sandbox, "
	    "under its policy. Read a skill's instructions, the resource "
	    "skill://NAME/SKILL.md, before calling its tools. A call the "
	    "policy holds for a human's approval asks through elicitation.");
}
