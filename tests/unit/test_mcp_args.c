/*
 * test_mcp_args.c: the tools' input schema and the strict check of
 * tools/call's arguments: what the schema declares is taken, anything
 * else (an unknown property, a wrong type, a value past the broker's
 * bounds) is refused with a message naming the field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../mcp/mcp.h"

/* Parse JSON text as arguments; the parsed value goes to *keep. */
static int
parse(const char *text, struct mcp_args *a, struct error *e, json_t **keep)
{
	json_error_t je;

	*keep = json_loads(text, JSON_DECODE_ANY, &je);
	if (*keep == NULL)
		fail_msg("bad test JSON %s: %s", text, je.text);
	memset(e, 0, sizeof(*e));
	return mcp_args_parse(*keep, a, e);
}

static void
test_full(void **state)
{
	struct mcp_args a;
	struct error e;
	json_t *j;

	(void)state;
	assert_int_equal(
	    parse(
	        "{\"args\": [\"a\", \"b c\"], \"stdin\": \"in\\n\", "
	        "\"session\": \"s-1.x\", \"env\": {\"K\": \"v\"}, "
	        "\"timeout_ms\": 1500, \"files\": [{\"path\": \"in/a.txt\", "
	        "\"content\": \"hi\"}, {\"path\": \"b\", \"content\": \"\"}]}",
	        &a, &e, &j),
	    0);
	assert_int_equal(a.argc, 2);
	assert_string_equal(a.argv[1], "b c");
	assert_int_equal(a.stdin_len, 3);
	assert_string_equal(a.session, "s-1.x");
	assert_non_null(a.env);
	assert_int_equal(a.timeout_ms, 1500);
	assert_int_equal(a.nfiles, 2);
	assert_string_equal(a.files[0].path, "in/a.txt");
	assert_int_equal(a.files[0].len, 2);
	assert_int_equal(a.files[1].len, 0);
	mcp_args_free(&a);
	json_decref(j);
	/* none at all, and an empty object */
	assert_int_equal(mcp_args_parse(NULL, &a, &e), 0);
	assert_int_equal(a.argc, 0);
	assert_null(a.session);
	assert_int_equal(parse("{}", &a, &e, &j), 0);
	mcp_args_free(&a);
	json_decref(j);
}

struct bad_case {
	const char *args;
	const char *needle; /* in the message */
};

static const struct bad_case bad_cases[] = {
    {"[]", "arguments must be an object"},
    {"\"x\"", "arguments must be an object"},
    {"{\"argv\": []}", "unknown property \"argv\""},
    {"{\"args\": \"a b\"}", "args must be an array"},
    {"{\"args\": [1]}", "args[0] must be a string"},
    {"{\"args\": [\"a\", null]}", "args[1] must be a string"},
    {"{\"stdin\": 5}", "stdin must be a string"},
    {"{\"stdin\": [\"x\"]}", "stdin must be a string"},
    {"{\"session\": 1}", "session must be"},
    {"{\"session\": \"\"}", "session must be"},
    {"{\"session\": \"..\"}", "session must be"},
    {"{\"session\": \"a/b\"}", "session must be"},
    {"{\"env\": []}", "env must be an object"},
    {"{\"env\": {\"A\": 1}}", "env.A must be a string"},
    {"{\"env\": {\"A=B\": \"x\"}}", "without '='"},
    {"{\"env\": {\"\": \"x\"}}", "without '='"},
    {"{\"timeout_ms\": \"5\"}", "timeout_ms must be an integer"},
    {"{\"timeout_ms\": 1.5}", "timeout_ms must be an integer"},
    {"{\"timeout_ms\": -1}", "timeout_ms must be an integer"},
    {"{\"timeout_ms\": 86400001}", "timeout_ms must be an integer"},
    {"{\"files\": {}}", "files must be an array"},
    {"{\"files\": [\"a\"]}", "files[0] must be an object"},
    {"{\"files\": [{\"path\": \"a\"}]}", "files[0].content must be"},
    {"{\"files\": [{\"content\": \"a\"}]}", "files[0].path must be"},
    {"{\"files\": [{\"path\": \"/etc/x\", \"content\": \"\"}]}",
        "files[0].path must be"},
    {"{\"files\": [{\"path\": \"\", \"content\": \"\"}]}",
        "files[0].path must be"},
    {"{\"files\": [{\"path\": \"a\", \"content\": 3}]}",
        "files[0].content must be a string"},
    {"{\"files\": [{\"path\": \"a\", \"content\": \"\", \"mode\": 1}]}",
        "files[0]: unknown property \"mode\""},
};

static void
test_bad(void **state)
{
	struct mcp_args a;
	struct error e;
	json_t *j;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		if (parse(bad_cases[i].args, &a, &e, &j) != -1)
			fail_msg("%s: taken", bad_cases[i].args);
		assert_int_equal(e.type, ERR_BAD_REQUEST);
		if (strstr(e.msg, bad_cases[i].needle) == NULL)
			fail_msg("%s: \"%s\" lacks \"%s\"", bad_cases[i].args,
			    e.msg, bad_cases[i].needle);
		assert_null(a.argv);
		assert_null(a.files);
		json_decref(j);
	}
}

/* The broker's bounds: at the bound taken, one past refused. */
static void
test_bounds(void **state)
{
	struct mcp_args a;
	struct error e;
	json_t *o, *arr, *env;
	char *big, key[16];
	int i;

	(void)state;
	arr = json_array();
	for (i = 0; i < MCP_ARGS_MAX; i++)
		json_array_append_new(arr, json_string("x"));
	o = json_pack("{s:O}", "args", arr);
	assert_int_equal(mcp_args_parse(o, &a, &e), 0);
	mcp_args_free(&a);
	json_array_append_new(arr, json_string("x"));
	json_object_set(o, "args", arr);
	assert_int_equal(mcp_args_parse(o, &a, &e), -1);
	assert_non_null(strstr(e.msg, "at most 256"));
	json_decref(arr);
	json_decref(o);

	big = malloc(MCP_STDIN_MAX + 2);
	memset(big, 'b', MCP_STDIN_MAX + 1);
	big[MCP_ARG_BYTES + 1] = '\0';
	o = json_pack("{s:[s]}", "args", big);
	assert_int_equal(mcp_args_parse(o, &a, &e), -1);
	assert_non_null(strstr(e.msg, "args[0] must be at most 4096 bytes"));
	json_decref(o);
	big[MCP_ARG_BYTES + 1] = 'b';
	o = json_pack("{s:s%}", "stdin", big, (size_t)MCP_STDIN_MAX);
	assert_int_equal(mcp_args_parse(o, &a, &e), 0);
	mcp_args_free(&a);
	json_decref(o);
	o = json_pack("{s:s%}", "stdin", big, (size_t)MCP_STDIN_MAX + 1);
	assert_int_equal(mcp_args_parse(o, &a, &e), -1);
	json_decref(o);
	free(big);

	env = json_object();
	for (i = 0; i < MCP_ENV_MAX; i++) {
		(void)snprintf(key, sizeof(key), "K%d", i);
		json_object_set_new(env, key, json_string("v"));
	}
	o = json_pack("{s:O}", "env", env);
	assert_int_equal(mcp_args_parse(o, &a, &e), 0);
	mcp_args_free(&a);
	json_object_set_new(env, "ONE_MORE", json_string("v"));
	assert_int_equal(mcp_args_parse(o, &a, &e), -1);
	assert_non_null(strstr(e.msg, "at most 64"));
	json_decref(env);
	json_decref(o);

	/* a NUL inside a string the broker takes as C text */
	o = json_pack("{s:[s%]}", "args", "a\0b", (size_t)3);
	assert_int_equal(mcp_args_parse(o, &a, &e), -1);
	json_decref(o);
}

/* The schema says what the check takes. */
static void
test_schema(void **state)
{
	static const char *const props[] = {
	    "args", "stdin", "session", "env", "timeout_ms", "files"};
	json_t *s, *p, *f;
	size_t i;

	(void)state;
	s = mcp_args_schema();
	assert_string_equal(
	    json_string_value(json_object_get(s, "type")), "object");
	assert_true(json_is_false(json_object_get(s, "additionalProperties")));
	p = json_object_get(s, "properties");
	assert_int_equal(json_object_size(p), 6);
	for (i = 0; i < sizeof(props) / sizeof(props[0]); i++)
		assert_non_null(json_object_get(p, props[i]));
	assert_string_equal(json_string_value(json_object_get(
	                        json_object_get(p, "timeout_ms"), "type")),
	    "integer");
	f = json_object_get(json_object_get(p, "files"), "items");
	assert_true(json_is_false(json_object_get(f, "additionalProperties")));
	assert_int_equal(json_array_size(json_object_get(f, "required")), 2);
	json_decref(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_full),
	    cmocka_unit_test(test_bad),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_schema),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
