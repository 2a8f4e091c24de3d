/*
 * test_mcp_name.c: tool names for skill commands. Every name fits MCP's
 * rule ([A-Za-z0-9._-], 1..128), distinct pairs get distinct names, a
 * name decodes back to its pair (or, cut and hashed, only the catalog
 * knows it), and no other spelling decodes.
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

struct name_case {
	const char *skill, *command, *name;
};

static const struct name_case name_cases[] = {
    {"echo-args", "run", "echo-args.run"},
    {"csv-report", "scripts/report.py", "csv-report.scripts_2freport.py"},
    {"a", "my_cmd", "a.my_5fcmd"},
    {"a", "x.y.z", "a.x.y.z"},
    {"a", "dir/sub/f.sh", "a.dir_2fsub_2ff.sh"},
    {"a", "caf\xc3\xa9", "a.caf_c3_a9"},
    {"a", "sp ace", "a.sp_20ace"},
};

/* Each pair encodes to its name, which is valid and decodes back. */
static void
test_round_trip(void **state)
{
	char name[MCP_TOOL_NAME_MAX + 1], skill[65], cmd[129];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++) {
		assert_int_equal(mcp_name_encode(name_cases[i].skill,
		                     name_cases[i].command, name),
		    0);
		assert_string_equal(name, name_cases[i].name);
		assert_true(mcp_name_valid(name));
		assert_int_equal(mcp_name_decode(name, skill, sizeof(skill),
		                     cmd, sizeof(cmd)),
		    0);
		assert_string_equal(skill, name_cases[i].skill);
		assert_string_equal(cmd, name_cases[i].command);
	}
}

/* Every byte a command may hold, alone and in pairs: names valid,
 * distinct, and round trips. */
static void
test_all_bytes(void **state)
{
	char cmd[3], name[MCP_TOOL_NAME_MAX + 1], skill[65], back[129];
	static char seen[256 * 256][16];
	int a, b, n = 0, i;

	(void)state;
	for (a = 1; a < 256; a++)
		for (b = 0; b < 256; b++) {
			cmd[0] = (char)a;
			cmd[1] = (char)b;
			cmd[2] = '\0';
			assert_int_equal(mcp_name_encode("s", cmd, name), 0);
			assert_true(mcp_name_valid(name));
			assert_int_equal(mcp_name_decode(name, skill,
			                     sizeof(skill), back, sizeof(back)),
			    0);
			assert_string_equal(back, cmd);
			assert_true(strlen(name) < sizeof(seen[0]));
			memcpy(seen[n++], name, strlen(name) + 1);
		}
	qsort(seen, (size_t)n, sizeof(seen[0]),
	    (int (*)(const void *, const void *))strcmp);
	for (i = 1; i < n; i++)
		assert_string_not_equal(seen[i - 1], seen[i]);
}

/* A pair too long for 128 characters: cut, hashed, valid, distinct,
 * and not decodable. */
static void
test_long(void **state)
{
	char cmd[129], cmd2[129], n1[MCP_TOOL_NAME_MAX + 1],
	    n2[MCP_TOOL_NAME_MAX + 1], skill[65], back[129];
	const char *sk = "a-skill-with-a-name-of-exactly-sixty-four-characters-"
	                 "0123456789a";
	size_t i;

	(void)state;
	assert_int_equal(strlen(sk), 64);
	memset(cmd, 'c', 128);
	cmd[128] = '\0';
	memcpy(cmd2, cmd, sizeof(cmd));
	cmd2[127] = 'd';
	assert_int_equal(mcp_name_encode(sk, cmd, n1), 1);
	assert_int_equal(mcp_name_encode(sk, cmd2, n2), 1);
	assert_true(mcp_name_valid(n1));
	assert_true(strlen(n1) <= MCP_TOOL_NAME_MAX);
	assert_string_not_equal(n1, n2);
	assert_int_equal(
	    mcp_name_decode(n1, skill, sizeof(skill), back, sizeof(back)), -1);
	/* escapes are never cut in half: all slashes, after skills of
	 * each length modulo 3 */
	memset(cmd, '/', 128);
	for (i = 1; i <= 3; i++) {
		memset(skill, 'k', i);
		skill[i] = '\0';
		assert_int_equal(mcp_name_encode(skill, cmd, n1), 1);
		assert_true(mcp_name_valid(n1));
		assert_non_null(strstr(n1, "_h"));
		assert_int_equal(strlen(strstr(n1, "_h")), 18);
		assert_int_equal((strstr(n1, "_h") - n1 - (i + 1)) % 3, 0);
	}
	/* the longest that still decodes */
	memset(cmd, 'x', 128);
	cmd[MCP_TOOL_NAME_MAX - 2] = '\0';
	assert_int_equal(mcp_name_encode("s", cmd, n1), 0);
	assert_int_equal(strlen(n1), MCP_TOOL_NAME_MAX);
}

/* Names the encoder never writes do not decode. */
static void
test_bad_names(void **state)
{
	static const char *const bad[] = {
	    "",                   /* empty */
	    "norun",              /* no dot */
	    ".run",               /* no skill */
	    "a.",                 /* no command */
	    "a.b_2",              /* a cut escape */
	    "a.b_zz",             /* not hex */
	    "a.b_2F",             /* upper-case hex */
	    "a.b_61",             /* 'a' need not be escaped */
	    "a.b_2e",             /* '.' need not be escaped in a command */
	    "a.b_00",             /* NUL */
	    "a b.run",            /* a space */
	    "a.run/x",            /* a slash */
	    "a.b_habcdef0123456", /* a hash: only the catalog knows it */
	};
	char skill[65], cmd[129], longname[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (mcp_name_decode(
		        bad[i], skill, sizeof(skill), cmd, sizeof(cmd)) != -1)
			fail_msg("\"%s\" decoded", bad[i]);
	memset(longname, 'a', sizeof(longname));
	longname[1] = '.';
	longname[MCP_TOOL_NAME_MAX + 1] = '\0';
	assert_false(mcp_name_valid(longname));
	assert_int_equal(
	    mcp_name_decode(longname, skill, sizeof(skill), cmd, sizeof(cmd)),
	    -1);
	assert_true(mcp_name_valid("A-z_0.9"));
	assert_false(mcp_name_valid("a/b"));
	assert_false(mcp_name_valid("a\xc3\xa9"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_all_bytes),
	    cmocka_unit_test(test_long),
	    cmocka_unit_test(test_bad_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
