/*
 * test_mcp_catalog.c: the catalog (which commands are tools, which
 * names resolve, which skills are resources) and initialize's
 * negotiation, without a daemon: what skills and skill_info replies
 * would say is fed in by hand.
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

/* echo-args (run allowed, other allowed), confirm (ask), whoami (not
 * visible: skill_info said unknown_skill), csv (a script command). */
static void
build(struct mcp_catalog *c)
{
	static const char *const echo[] = {"run", "other"};
	static const char *const one[] = {"run"};
	static const char *const csv[] = {"scripts/report.py"};
	size_t i;

	mcp_catalog_init(c);
	i = mcp_catalog_add(c, "confirm", "Asks first.", one, 1);
	mcp_catalog_body(c, i, "# confirm\n");
	mcp_catalog_command(c, i, "run", "", 0, 1);
	i = mcp_catalog_add(c, "csv", "Reports.", csv, 1);
	mcp_catalog_body(c, i, "# csv\n");
	mcp_catalog_command(c, i, "scripts/report.py", "", 1, 0);
	i = mcp_catalog_add(c, "echo-args", "Prints.", echo, 2);
	mcp_catalog_body(c, i, "# echo-args\n");
	mcp_catalog_command(c, i, "run", "the default", 1, 0);
	mcp_catalog_command(c, i, "other", "", 0, 0);
	(void)mcp_catalog_add(c, "whoami", "Who.", one, 1);
	mcp_catalog_finish(c);
}

static void
test_tools(void **state)
{
	struct mcp_catalog c;
	const struct mcp_tool *t;
	json_t *tools, *x;
	const char *d;
	size_t i;

	(void)state;
	build(&c);
	tools = mcp_catalog_tools(&c);
	/* confirm.run (ask), csv's script, echo-args.run; not other (no
	 * rule lets it run), not whoami (not visible) */
	assert_int_equal(json_array_size(tools), 3);
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(tools, 0), "name")),
	    "confirm.run");
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(tools, 1), "name")),
	    "csv.scripts_2freport.py");
	assert_string_equal(json_string_value(json_object_get(
	                        json_array_get(tools, 2), "name")),
	    "echo-args.run");
	d = json_string_value(
	    json_object_get(json_array_get(tools, 0), "description"));
	assert_non_null(strstr(d, "asks a human"));
	d = json_string_value(
	    json_object_get(json_array_get(tools, 2), "description"));
	assert_non_null(strstr(d, "Prints."));
	assert_non_null(strstr(d, "the default"));
	json_array_foreach(tools, i, x)
	{
		assert_true(mcp_name_valid(
		    json_string_value(json_object_get(x, "name"))));
		assert_true(json_is_object(json_object_get(x, "inputSchema")));
	}
	json_decref(tools);
	/* every command resolves, listed or not; others do not */
	t = mcp_catalog_find(&c, "whoami.run");
	assert_non_null(t);
	assert_false(t->listed);
	assert_string_equal(t->skill, "whoami");
	t = mcp_catalog_find(&c, "echo-args.other");
	assert_non_null(t);
	assert_false(t->listed);
	t = mcp_catalog_find(&c, "csv.scripts_2freport.py");
	assert_non_null(t);
	assert_string_equal(t->command, "scripts/report.py");
	assert_true(t->listed);
	assert_null(mcp_catalog_find(&c, "echo-args.nope"));
	assert_null(mcp_catalog_find(&c, "nope.run"));
	assert_null(mcp_catalog_find(&c, ""));
	mcp_catalog_free(&c);
}

static void
test_resources(void **state)
{
	struct mcp_catalog c;
	json_t *res, *r;
	char name[65];

	(void)state;
	build(&c);
	res = mcp_catalog_resources(&c);
	assert_int_equal(json_array_size(res), 3); /* not whoami */
	r = json_array_get(res, 2);
	assert_string_equal(json_string_value(json_object_get(r, "uri")),
	    "skill://echo-args/SKILL.md");
	assert_string_equal(
	    json_string_value(json_object_get(r, "mimeType")), "text/markdown");
	assert_int_equal(json_integer_value(json_object_get(r, "size")), 12);
	json_decref(res);
	assert_int_equal(
	    mcp_catalog_uri_skill("skill://echo-args/SKILL.md", name, 65), 0);
	assert_string_equal(name, "echo-args");
	assert_int_equal(
	    mcp_catalog_uri_skill("skill:///SKILL.md", name, 65), -1);
	assert_int_equal(
	    mcp_catalog_uri_skill("skill://../SKILL.md", name, 65), -1);
	assert_int_equal(
	    mcp_catalog_uri_skill("skill://a/b/SKILL.md", name, 65), -1);
	assert_int_equal(
	    mcp_catalog_uri_skill("file://echo-args/SKILL.md", name, 65), -1);
	assert_int_equal(
	    mcp_catalog_uri_skill("skill://echo-args/skill.md", name, 65), -1);
	assert_int_equal(
	    mcp_catalog_uri_skill("skill://Echo/SKILL.md", name, 65), -1);
	mcp_catalog_free(&c);
}

/* initialize's answer for params text; NULL when refused. */
static json_t *
init(const char *params, struct mcp_client_caps *caps, struct error *e)
{
	json_t *p = json_loads(params, 0, NULL), *r;

	assert_non_null(p);
	r = mcp_init_answer(p, caps, e);
	json_decref(p);
	return r;
}

static void
test_init(void **state)
{
	static const struct {
		const char *want, *got;
	} versions[] = {
	    {"2025-11-25", "2025-11-25"},
	    {"2025-06-18", "2025-06-18"},
	    {"2024-11-05", "2024-11-05"},
	    {"2025-03-26", MCP_PROTOCOL_LATEST}, /* batches: not ours */
	    {"1999-01-01", MCP_PROTOCOL_LATEST},
	};
	struct mcp_client_caps caps;
	struct error e;
	char buf[512];
	json_t *r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		(void)snprintf(buf, sizeof(buf),
		    "{\"protocolVersion\": \"%s\", \"capabilities\": {}, "
		    "\"clientInfo\": {\"name\": \"t\", \"version\": \"1\"}}",
		    versions[i].want);
		r = init(buf, &caps, &e);
		assert_non_null(r);
		assert_string_equal(
		    json_string_value(json_object_get(r, "protocolVersion")),
		    versions[i].got);
		assert_string_equal(caps.protocol, versions[i].got);
		assert_true(json_is_true(json_object_get(
		    json_object_get(
		        json_object_get(r, "capabilities"), "tools"),
		    "listChanged")));
		assert_string_equal(
		    json_string_value(json_object_get(
		        json_object_get(r, "serverInfo"), "name")),
		    "skillbroker-mcp");
		assert_false(caps.elicitation);
		json_decref(r);
	}
	r = init("{\"protocolVersion\": \"2025-11-25\", \"capabilities\": "
	         "{\"elicitation\": {}}, \"clientInfo\": {\"name\": \"t\", "
	         "\"version\": \"1\"}}",
	    &caps, &e);
	assert_true(caps.elicitation);
	json_decref(r);
	r = init(
	    "{\"protocolVersion\": \"2025-11-25\", \"capabilities\": "
	    "{\"elicitation\": {\"form\": {}}}, \"clientInfo\": {\"name\": "
	    "\"t\", \"version\": \"1\"}}",
	    &caps, &e);
	assert_true(caps.elicitation);
	json_decref(r);
	r = init("{\"protocolVersion\": \"2025-11-25\", \"capabilities\": "
	         "{\"elicitation\": {\"url\": {}}}, \"clientInfo\": {\"name\": "
	         "\"t\", \"version\": \"1\"}}",
	    &caps, &e);
	assert_false(caps.elicitation); /* URL mode only: no form */
	json_decref(r);
	/* refused */
	assert_null(init("{\"capabilities\": {}, \"clientInfo\": {\"name\": "
	                 "\"t\"}}",
	    &caps, &e));
	assert_non_null(strstr(e.msg, "protocolVersion"));
	assert_null(init("{\"protocolVersion\": 1, \"capabilities\": {}, "
	                 "\"clientInfo\": {\"name\": \"t\"}}",
	    &caps, &e));
	assert_null(init("{\"protocolVersion\": \"2025-11-25\", "
	                 "\"clientInfo\": {\"name\": \"t\"}}",
	    &caps, &e));
	assert_non_null(strstr(e.msg, "capabilities"));
	assert_null(init("{\"protocolVersion\": \"2025-11-25\", "
	                 "\"capabilities\": {}}",
	    &caps, &e));
	assert_non_null(strstr(e.msg, "clientInfo"));
	assert_null(mcp_init_answer(NULL, &caps, &e));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tools),
	    cmocka_unit_test(test_resources),
	    cmocka_unit_test(test_init),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
