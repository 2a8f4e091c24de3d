/*
 * mcp_args.c: every tool takes the same arguments, an invoke's fields
 * (args, stdin, session, env, timeout_ms) and files to put into the
 * session first. The schema says so to the host, and mcp_args_parse
 * holds the arguments to it strictly: an unknown property, a wrong type
 * or a value past the broker's bounds is invalid params, naming the
 * field, before anything reaches the broker.
 */
#include "mcp.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

/* {"type": t, "description": d} */
static json_t *
mcp_args_prop(const char *type, const char *description)
{
	return json_pack(
	    "{s:s, s:s}", "type", type, "description", description);
}

/* The inputSchema every tool has (a new reference). */
json_t *
mcp_args_schema(void)
{
	json_t *props, *file, *args, *env, *session, *timeout, *files;

	args = mcp_args_prop("array", "The command's arguments.");
	json_object_set_new(
	    args, "items", json_pack("{s:s}", "type", "string"));
	json_object_set_new(args, "maxItems", json_integer(MCP_ARGS_MAX));
	env = mcp_args_prop("object",
	    "Environment variables; one reaches the skill only when the "
	    "skill declares its name.");
	json_object_set_new(
	    env, "additionalProperties", json_pack("{s:s}", "type", "string"));
	session = mcp_args_prop("string",
	    "The broker session to run in (its work dir and files); calls "
	    "of one session run one at a time.");
	json_object_set_new(
	    session, "pattern", json_string("^[A-Za-z0-9._-]{1,64}$"));
	timeout = mcp_args_prop("integer",
	    "The most milliseconds the call may take; 0 or absent: the "
	    "broker's default.");
	json_object_set_new(timeout, "minimum", json_integer(0));
	json_object_set_new(
	    timeout, "maximum", json_integer(MCP_TIMEOUT_MS_MAX));
	file = json_pack("{s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}, s:[s,s], s:b}",
	    "type", "object", "properties", "path", "type", "string",
	    "description",
	    "Relative to the session's work dir (the skill's /work).",
	    "content", "type", "string", "description", "The file's text.",
	    "required", "path", "content", "additionalProperties", 0);
	files = mcp_args_prop("array",
	    "Files written into the session's work dir before the call.");
	json_object_set_new(files, "items", file);
	json_object_set_new(files, "maxItems", json_integer(MCP_FILES_MAX));
	props = json_object();
	json_object_set_new(props, "args", args);
	json_object_set_new(props, "stdin",
	    mcp_args_prop("string", "Text written to the skill's stdin."));
	json_object_set_new(props, "session", session);
	json_object_set_new(props, "env", env);
	json_object_set_new(props, "timeout_ms", timeout);
	json_object_set_new(props, "files", files);
	return json_pack("{s:s, s:o, s:b}", "type", "object", "properties",
	    props, "additionalProperties", 0);
}

/* args: an array of at most MCP_ARGS_MAX strings of MCP_ARG_BYTES. */
static int
mcp_args_argv(json_t *v, struct mcp_args *a, struct error *e)
{
	size_t i;
	json_t *s;

	if (!json_is_array(v))
		return error_set(e, ERR_BAD_REQUEST, "args must be an array");
	if (json_array_size(v) > MCP_ARGS_MAX)
		return error_set(e, ERR_BAD_REQUEST,
		    "args has %zu items, at most %d are taken",
		    json_array_size(v), MCP_ARGS_MAX);
	a->argv = xcalloc(json_array_size(v) + 1, sizeof(*a->argv));
	json_array_foreach(v, i, s)
	{
		if (!json_is_string(s))
			return error_set(e, ERR_BAD_REQUEST,
			    "args[%zu] must be a string", i);
		if (json_string_length(s) > MCP_ARG_BYTES ||
		    strlen(json_string_value(s)) != json_string_length(s))
			return error_set(e, ERR_BAD_REQUEST,
			    "args[%zu] must be at most %d bytes, without NUL",
			    i, MCP_ARG_BYTES);
		a->argv[a->argc++] = json_string_value(s);
	}
	return 0;
}

/* env: an object of at most MCP_ENV_MAX strings. */
static int
mcp_args_env(json_t *v, struct mcp_args *a, struct error *e)
{
	const char *k;
	json_t *s;

	if (!json_is_object(v))
		return error_set(e, ERR_BAD_REQUEST, "env must be an object");
	if (json_object_size(v) > MCP_ENV_MAX)
		return error_set(e, ERR_BAD_REQUEST,
		    "env has %zu entries, at most %d are taken",
		    json_object_size(v), MCP_ENV_MAX);
	json_object_foreach(v, k, s)
	{
		if (*k == '\0' || strchr(k, '=') != NULL || strlen(k) > 255)
			return error_set(e, ERR_BAD_REQUEST,
			    "env: a name must be 1..255 bytes without '='");
		if (!json_is_string(s))
			return error_set(e, ERR_BAD_REQUEST,
			    "env.%.64s must be a string", k);
		if (json_string_length(s) > MCP_ENV_VALUE_BYTES ||
		    strlen(json_string_value(s)) != json_string_length(s))
			return error_set(e, ERR_BAD_REQUEST,
			    "env.%.64s must be at most %d bytes, without NUL",
			    k, MCP_ENV_VALUE_BYTES);
	}
	a->env = v;
	return 0;
}

/* files: [{path, content}], the paths 1..MCP_FILE_PATH_MAX bytes
 * (the broker checks the rest of its path rules). */
static int
mcp_args_files(json_t *v, struct mcp_args *a, struct error *e)
{
	static const char *const bad_path = "files[%zu].path must be a "
	                                    "relative path of 1..%d bytes";
	json_t *f, *p, *c;
	const char *k;
	json_t *x;
	size_t i;

	if (!json_is_array(v))
		return error_set(e, ERR_BAD_REQUEST, "files must be an array");
	if (json_array_size(v) > MCP_FILES_MAX)
		return error_set(e, ERR_BAD_REQUEST,
		    "files has %zu items, at most %d are taken",
		    json_array_size(v), MCP_FILES_MAX);
	a->files = xcalloc(json_array_size(v) + 1, sizeof(*a->files));
	json_array_foreach(v, i, f)
	{
		if (!json_is_object(f))
			return error_set(e, ERR_BAD_REQUEST,
			    "files[%zu] must be an object", i);
		json_object_foreach(f, k, x)
		{
			(void)x;
			if (strcmp(k, "path") != 0 && strcmp(k, "content") != 0)
				return error_set(e, ERR_BAD_REQUEST,
				    "files[%zu]: unknown property \"%.64s\" "
				    "(path and content are taken)",
				    i, k);
		}
		p = json_object_get(f, "path");
		c = json_object_get(f, "content");
		if (!json_is_string(p) || json_string_length(p) == 0 ||
		    json_string_length(p) > MCP_FILE_PATH_MAX ||
		    strlen(json_string_value(p)) != json_string_length(p) ||
		    json_string_value(p)[0] == '/')
			return error_set(
			    e, ERR_BAD_REQUEST, bad_path, i, MCP_FILE_PATH_MAX);
		if (!json_is_string(c))
			return error_set(e, ERR_BAD_REQUEST,
			    "files[%zu].content must be a string", i);
		a->files[a->nfiles].path = json_string_value(p);
		a->files[a->nfiles].content = json_string_value(c);
		a->files[a->nfiles].len = json_string_length(c);
		a->nfiles++;
	}
	return 0;
}

/* One property of the arguments. */
static int
mcp_args_one(const char *k, json_t *v, struct mcp_args *a, struct error *e)
{
	json_int_t t;

	if (strcmp(k, "args") == 0)
		return mcp_args_argv(v, a, e);
	if (strcmp(k, "env") == 0)
		return mcp_args_env(v, a, e);
	if (strcmp(k, "files") == 0)
		return mcp_args_files(v, a, e);
	if (strcmp(k, "stdin") == 0) {
		if (!json_is_string(v))
			return error_set(
			    e, ERR_BAD_REQUEST, "stdin must be a string");
		if (json_string_length(v) > MCP_STDIN_MAX)
			return error_set(e, ERR_BAD_REQUEST,
			    "stdin must be at most %d bytes", MCP_STDIN_MAX);
		a->stdin_data = json_string_value(v);
		a->stdin_len = json_string_length(v);
		return 0;
	}
	if (strcmp(k, "session") == 0) {
		if (!json_is_string(v) ||
		    !ident_valid(json_string_value(v), MCP_SESSION_MAX) ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return error_set(e, ERR_BAD_REQUEST,
			    "session must be 1..%d characters of "
			    "[A-Za-z0-9._-], not \".\" or \"..\"",
			    MCP_SESSION_MAX);
		a->session = json_string_value(v);
		return 0;
	}
	if (strcmp(k, "timeout_ms") == 0) {
		if (!json_is_integer(v) || (t = json_integer_value(v)) < 0 ||
		    t > MCP_TIMEOUT_MS_MAX)
			return error_set(e, ERR_BAD_REQUEST,
			    "timeout_ms must be an integer of 0..%d",
			    MCP_TIMEOUT_MS_MAX);
		a->timeout_ms = (uint64_t)t;
		return 0;
	}
	return error_set(e, ERR_BAD_REQUEST,
	    "unknown property \"%.64s\" (args, stdin, session, env, "
	    "timeout_ms and files are taken)",
	    k);
}

/* Check tools/call's arguments against the schema and the bounds. */
int
mcp_args_parse(json_t *arguments, struct mcp_args *a, struct error *e)
{
	const char *k;
	json_t *v;

	memset(a, 0, sizeof(*a));
	if (arguments == NULL)
		return 0;
	if (!json_is_object(arguments))
		return error_set(
		    e, ERR_BAD_REQUEST, "arguments must be an object");
	json_object_foreach(arguments, k, v)
	{
		if (mcp_args_one(k, v, a, e) == -1) {
			mcp_args_free(a);
			return -1;
		}
	}
	return 0;
}

/* Free what mcp_args_parse allocated (the strings are the JSON's). */
void
mcp_args_free(struct mcp_args *a)
{
	free(a->argv);
	free(a->files);
	memset(a, 0, sizeof(*a));
}
