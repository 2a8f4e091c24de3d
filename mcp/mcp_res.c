/*
 * mcp_res.c: resources, a skill's instructions. resources/list lists
 * skill://NAME/SKILL.md for each skill the caller may see (from a fresh
 * catalog); resources/read asks skill_info for that one skill, so what
 * it returns is SKILL.md as it is now. A URI of no such skill, or of
 * one the caller may not see, is "resource not found" (-32002, as MCP
 * 2025-11-25 says), with the URI in data.
 */
#include "mcp.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

/* resources/list once the catalog is fresh. */
static void
mcp_res_listed(struct mcp_server *s, void *arg, const char *err)
{
	json_t *id = arg;

	if (err != NULL)
		mcp_send_error(s, id, RPC_INTERNAL_ERROR, "%s", err);
	else
		mcp_send_result(s, id,
		    json_pack(
		        "{s:o}", "resources", mcp_catalog_resources(&s->cat)));
	json_decref(id);
}

/* resources/list, from a fresh catalog. */
void
mcp_res_list(struct mcp_server *s, json_t *id)
{
	mcp_broker_refresh(s, mcp_res_listed, json_incref(id));
}

/* "Resource not found", with the URI. */
static void
mcp_res_missing(struct mcp_server *s, json_t *id, const char *uri)
{
	json_t *m;

	m = mcp_rpc_error(id, MCP_RESOURCE_NOT_FOUND, "Resource not found",
	    json_pack("{s:o}", "uri", mcp_text_json(uri, strlen(uri))));
	mcp_send(s, m);
	json_decref(m);
}

/* Free a resources/read that was answered. */
static void
mcp_res_free(struct mcp_read *rd)
{
	json_decref(rd->rpc_id);
	free(rd->uri);
	free(rd);
}

/* skill_info's reply: the body, or not found. */
static void
mcp_res_info(UNUSED struct sb_client *sb, struct sb_reply *r, void *arg)
{
	struct mcp_read *rd = arg;
	struct mcp_server *s = rd->server;
	const char *body;

	if (sb_reply_ok(r)) {
		body = sb_reply_str(r, "skill.body");
		if (body == NULL)
			body = "";
		mcp_send_result(s, rd->rpc_id,
		    json_pack("{s:[{s:o, s:s, s:o}]}", "contents", "uri",
		        mcp_text_json(rd->uri, strlen(rd->uri)), "mimeType",
		        "text/markdown", "text",
		        mcp_text_json(body, strlen(body))));
	} else if (sb_reply_error(r) == SB_ERR_UNKNOWN_SKILL) {
		mcp_res_missing(s, rd->rpc_id, rd->uri);
	} else {
		mcp_send_error(s, rd->rpc_id, RPC_INTERNAL_ERROR,
		    "skill_info %s failed: %s: %s", rd->skill,
		    mcp_reply_etype(r), mcp_reply_emsg(r));
	}
	sb_reply_free(r);
	mcp_res_free(rd);
}

/* resources/read: skill_info for the skill the URI names. */
void
mcp_res_read(struct mcp_server *s, json_t *id, json_t *params)
{
	struct mcp_read *rd;
	struct sb_client *sb;
	struct sb_req *req;
	json_t *uri;
	struct error e;
	char rid[64];

	uri = params ? json_object_get(params, "uri") : NULL;
	if (!json_is_string(uri)) {
		mcp_send_error(s, id, RPC_INVALID_PARAMS,
		    "Invalid params: uri must be a string");
		return;
	}
	rd = xcalloc(1, sizeof(*rd));
	rd->server = s;
	rd->rpc_id = json_incref(id);
	rd->uri = xstrdup(json_string_value(uri));
	if (mcp_catalog_uri_skill(rd->uri, rd->skill, sizeof(rd->skill)) ==
	    -1) {
		mcp_res_missing(s, id, rd->uri);
		mcp_res_free(rd);
		return;
	}
	if ((sb = mcp_broker(s, &e)) == NULL) {
		mcp_send_error(s, id, RPC_INTERNAL_ERROR, "%s", e.msg);
		mcp_res_free(rd);
		return;
	}
	mcp_server_req_id(s, rid, sizeof(rid));
	if ((req = sb_req_new("skill_info")) == NULL ||
	    sb_req_id(req, rid) == -1 || sb_req_skill(req, rd->skill) == -1 ||
	    sb_send(sb, req, mcp_res_info, rd) == -1) {
		mcp_send_error(s, id, RPC_INTERNAL_ERROR,
		    "skill_info could not be sent: %s", sb_errmsg(sb));
		mcp_res_free(rd);
	}
	sb_req_free(req);
}
