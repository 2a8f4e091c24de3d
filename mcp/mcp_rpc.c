/*
 * mcp_rpc.c: JSON-RPC 2.0 as MCP uses it. A line is parsed strictly
 * (duplicate keys refused) and classified as a request, a notification,
 * a response to one of our requests, or something to refuse with the
 * code JSON-RPC names for it. MCP revisions from 2025-06-18 on have no
 * batches, so an array is an invalid request.
 */
#include "mcp.h"

#include <stdio.h>
#include <string.h>

/* Mark m invalid: code and why go back to id (NULL: null). */
static void
mcp_rpc_invalid(struct mcp_msg *m, json_t *id, int code, const char *why)
{
	m->kind = MCP_MSG_INVALID;
	m->code = code;
	m->id = id;
	(void)snprintf(m->why, sizeof(m->why), "%s", why);
}

/* MCP ids are strings or integers; null is not one. */
int
mcp_rpc_id_valid(const json_t *id)
{
	return id != NULL && (json_is_string(id) || json_is_integer(id));
}

/* 1 if every member of o is one of the names (NULL-ended). */
static int
mcp_rpc_only(json_t *o, const char *const *names, const char **bad)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(o, key, v)
	{
		(void)v;
		for (i = 0; names[i] != NULL; i++)
			if (strcmp(key, names[i]) == 0)
				break;
		if (names[i] == NULL) {
			*bad = key;
			return 0;
		}
	}
	return 1;
}

/* Parse and classify one line into *m (free it with mcp_rpc_free). */
void
mcp_rpc_parse(const char *line, size_t len, struct mcp_msg *m)
{
	static const char *const req_keys[] = {
	    "jsonrpc", "id", "method", "params", NULL};
	static const char *const res_keys[] = {
	    "jsonrpc", "id", "result", "error", NULL};
	json_error_t jerr;
	json_t *root, *id, *ver, *method;
	const char *bad = NULL;
	char why[200];

	memset(m, 0, sizeof(*m));
	root = json_loadb(
	    line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (root == NULL) {
		(void)snprintf(why, sizeof(why), "Parse error: %s (column %d)",
		    jerr.text, jerr.column);
		mcp_rpc_invalid(m, NULL, RPC_PARSE_ERROR, why);
		return;
	}
	m->root = root;
	if (json_is_array(root)) {
		mcp_rpc_invalid(m, NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: batches are not supported");
		return;
	}
	if (!json_is_object(root)) {
		mcp_rpc_invalid(m, NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: a message is a JSON object");
		return;
	}
	id = json_object_get(root, "id");
	if (id != NULL && !mcp_rpc_id_valid(id)) {
		mcp_rpc_invalid(m, NULL, RPC_INVALID_REQUEST,
		    "Invalid Request: id must be a string or an integer");
		return;
	}
	ver = json_object_get(root, "jsonrpc");
	if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0")) {
		mcp_rpc_invalid(m, id, RPC_INVALID_REQUEST,
		    "Invalid Request: jsonrpc must be \"2.0\"");
		return;
	}
	method = json_object_get(root, "method");
	if (method != NULL) {
		if (!json_is_string(method) ||
		    json_string_length(method) == 0) {
			mcp_rpc_invalid(m, id, RPC_INVALID_REQUEST,
			    "Invalid Request: method must be a non-empty "
			    "string");
			return;
		}
		if (!mcp_rpc_only(root, req_keys, &bad)) {
			(void)snprintf(why, sizeof(why),
			    "Invalid Request: unknown member \"%.64s\"", bad);
			mcp_rpc_invalid(m, id, RPC_INVALID_REQUEST, why);
			return;
		}
		m->method = json_string_value(method);
		m->params = json_object_get(root, "params");
		m->id = id;
		m->kind = id ? MCP_MSG_REQUEST : MCP_MSG_NOTIFY;
		if (m->params != NULL && !json_is_object(m->params)) {
			if (id == NULL) /* nobody to tell */
				return;
			mcp_rpc_invalid(m, id, RPC_INVALID_PARAMS,
			    "Invalid params: params must be an object");
		}
		return;
	}
	m->result = json_object_get(root, "result");
	m->error = json_object_get(root, "error");
	if (id == NULL || (m->result == NULL) == (m->error == NULL) ||
	    !mcp_rpc_only(root, res_keys, &bad) ||
	    (m->error != NULL && !json_is_object(m->error))) {
		m->result = m->error = NULL;
		mcp_rpc_invalid(m, id, RPC_INVALID_REQUEST,
		    "Invalid Request: neither a request, a notification nor a "
		    "response");
		return;
	}
	m->id = id;
	m->kind = MCP_MSG_RESPONSE;
}

/* Free a parsed message (its borrowed pointers go with it). */
void
mcp_rpc_free(struct mcp_msg *m)
{
	json_decref(m->root);
	memset(m, 0, sizeof(*m));
}

/* {"jsonrpc": "2.0", "id": id} */
static json_t *
mcp_rpc_base(json_t *id)
{
	json_t *o = json_object();

	json_object_set_new(o, "jsonrpc", json_string("2.0"));
	json_object_set(o, "id", id ? id : json_null());
	return o;
}

/* A result response to id. */
json_t *
mcp_rpc_result(json_t *id, json_t *result)
{
	json_t *o = mcp_rpc_base(id);

	json_object_set_new(o, "result", result ? result : json_object());
	return o;
}

/* An error response to id (null when NULL); msg made valid UTF-8. */
json_t *
mcp_rpc_error(json_t *id, int code, const char *msg, json_t *data)
{
	json_t *o = mcp_rpc_base(id), *e = json_object();

	json_object_set_new(e, "code", json_integer(code));
	json_object_set_new(e, "message", mcp_text_json(msg, strlen(msg)));
	if (data != NULL)
		json_object_set_new(e, "data", data);
	json_object_set_new(o, "error", e);
	return o;
}

/* A notification. */
json_t *
mcp_rpc_notify(const char *method, json_t *params)
{
	json_t *o = json_object();

	json_object_set_new(o, "jsonrpc", json_string("2.0"));
	json_object_set_new(o, "method", json_string(method));
	if (params != NULL)
		json_object_set_new(o, "params", params);
	return o;
}

/* A request of ours to the host. */
json_t *
mcp_rpc_request(json_t *id, const char *method, json_t *params)
{
	json_t *o = mcp_rpc_base(id);

	json_object_set_new(o, "method", json_string(method));
	if (params != NULL)
		json_object_set_new(o, "params", params);
	return o;
}
