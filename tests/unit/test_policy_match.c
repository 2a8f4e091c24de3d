/*
 * test_policy_match.c: the pattern languages an admin writes in policy
 * ceilings and a skill author in manifests: path globs, path coverage,
 * and host:port patterns (parse and coverage).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "../../policyd/policyd_match.h"

#define GLOB_YES(p, s)                                                         \
	do {                                                                   \
		if (!glob_match(p, s))                                         \
			fail_msg("glob \"%s\" should match \"%s\"", p, s);     \
	} while (0)
#define GLOB_NO(p, s)                                                          \
	do {                                                                   \
		if (glob_match(p, s))                                          \
			fail_msg("glob \"%s\" must not match \"%s\"", p, s);   \
	} while (0)
#define COVERS(c, w)                                                           \
	do {                                                                   \
		if (!hostport_covers(c, w))                                    \
			fail_msg("\"%s\" should cover \"%s\"", c, w);          \
	} while (0)
#define NOT_COVERS(c, w)                                                       \
	do {                                                                   \
		if (hostport_covers(c, w))                                     \
			fail_msg("\"%s\" must not cover \"%s\"", c, w);        \
	} while (0)
#define PCOVERS(c, w)                                                          \
	do {                                                                   \
		if (!path_covers(c, w))                                        \
			fail_msg("path \"%s\" should cover \"%s\"", c, w);     \
	} while (0)
#define NOT_PCOVERS(c, w)                                                      \
	do {                                                                   \
		if (path_covers(c, w))                                         \
			fail_msg("path \"%s\" must not cover \"%s\"", c, w);   \
	} while (0)

static void
test_glob_star_stops_at_slash(void **state)
{
	(void)state;
	GLOB_YES("/srv/*", "/srv/a");
	GLOB_YES("/srv/*", "/srv/");
	GLOB_YES("/srv/*.csv", "/srv/report.csv");
	GLOB_YES("/srv/*/x", "/srv/a/x");
	GLOB_NO("/srv/*", "/srv/a/b");
	GLOB_NO("/srv/*.csv", "/srv/sub/report.csv");
	GLOB_NO("/srv/*/x", "/srv/a/b/x");
	GLOB_NO("/srv/*", "/srvx");
	GLOB_NO("/srv/*", "/etc/passwd");
}

static void
test_glob_double_star_crosses_slash(void **state)
{
	(void)state;
	GLOB_YES("/srv/**", "/srv/a");
	GLOB_YES("/srv/**", "/srv/a/b/c");
	GLOB_YES("/srv/**", "/srv/");
	GLOB_YES("/srv/**.csv", "/srv/a/b/report.csv");
	GLOB_YES("$WORK_DIR/**", "$WORK_DIR/out/x.csv");
	GLOB_NO("/srv/**", "/srv");
	GLOB_NO("/srv/**", "/srvfoo/a");
	GLOB_NO("/srv/**.csv", "/srv/a/b/report.txt");
	GLOB_NO("$WORK_DIR/**", "$SKILL_DIR/x");
}

static void
test_glob_question_mark(void **state)
{
	(void)state;
	GLOB_YES("/tmp/?.log", "/tmp/a.log");
	GLOB_YES("a?c", "abc");
	GLOB_NO("/tmp/?.log", "/tmp/ab.log");
	GLOB_NO("/tmp/?.log", "/tmp/.log");
	GLOB_NO("a?c", "a/c"); /* '?' is one char, never '/' */
	GLOB_NO("a?c", "ac");
}

static void
test_glob_literal(void **state)
{
	(void)state;
	GLOB_YES("hello", "hello");
	GLOB_YES("", "");
	GLOB_YES("*", "hello");
	GLOB_NO("hello", "hell");
	GLOB_NO("hello", "hello!");
	GLOB_NO("hello", "Hello"); /* names are case-sensitive */
	GLOB_NO("", "x");
}

static void
test_path_covers(void **state)
{
	(void)state;
	PCOVERS("$WORK_DIR/**", "$WORK_DIR/out/*.csv");
	PCOVERS("$WORK_DIR/**", "$WORK_DIR/**");
	PCOVERS("$WORK_DIR/**", "$WORK_DIR/a/b/c");
	PCOVERS("/data/*", "/data/*");
	PCOVERS("/data/*", "/data/x");
	PCOVERS("/data/*", "/data/?.csv");
	PCOVERS("/data/**", "/data/*/x");
	PCOVERS("/usr/share/**", "/usr/share/zoneinfo/**");
	NOT_PCOVERS("$WORK_DIR/**", "$SKILL_DIR/x");
	NOT_PCOVERS("$WORK_DIR/**", "$DATA_DIR/**");
	NOT_PCOVERS("/data/*", "/data/a/b");
	NOT_PCOVERS("/data/x", "/data/*");
}

/*
 * A ceiling covers a declared pattern only if it allows every path the
 * pattern can reach, not merely if the pattern's text matches the glob:
 * "/data/" + "*" reaches one level, "/data/" + "**" any depth.
 */
static void
test_path_covers_by_reach_not_text(void **state)
{
	(void)state;
	NOT_PCOVERS("/data/*", "/data/**");
	NOT_PCOVERS("$DATA_DIR/*", "$DATA_DIR/**");
	NOT_PCOVERS("/data/?", "/data/*");
	NOT_PCOVERS("/data/?", "/data/**");
	NOT_PCOVERS("/data/a*", "/data/a**");
	NOT_PCOVERS("/data/*/x", "/data/**/x");
	NOT_PCOVERS("/data/x?", "/data/x*");
	PCOVERS("/data/*", "/data/a?*");
	PCOVERS("/data/**", "/data/**/x/*");
	PCOVERS("/data/*/*", "/data/?/*");
}

static void
test_hostport_wildcard_subdomains(void **state)
{
	(void)state;
	COVERS("*.example.com:443", "api.example.com:443");
	COVERS("*.example.com:443", "a.b.example.com:443");
	COVERS("*.example.com:443", "*.sub.example.com:443");
	COVERS("*.example.com:443", "*.example.com:443");
	NOT_COVERS("*.example.com:443", "example.com:443");
	NOT_COVERS("*.example.com:443", "api.example.com:80");
	NOT_COVERS("*.example.com:443", "evil-example.com:443");
	NOT_COVERS("*.example.com:443", "example.com.evil.org:443");
	NOT_COVERS("*.example.com:443", "*.com:443");
	NOT_COVERS("*.example.com:443", "*:443");
	NOT_COVERS("*.sub.example.com:443", "*.example.com:443");
	NOT_COVERS("*.sub.example.com:443", "api.example.com:443");
}

static void
test_hostport_exact(void **state)
{
	(void)state;
	COVERS("api.example.com:443", "api.example.com:443");
	NOT_COVERS("api.example.com:443", "api.example.com:8443");
	NOT_COVERS("api.example.com:443", "www.example.com:443");
	NOT_COVERS("api.example.com:443", "x.api.example.com:443");
	NOT_COVERS("api.example.com:443", "*.api.example.com:443");
	NOT_COVERS("api.example.com:443", "*:443");
	NOT_COVERS("api.example.com:443", "api.example.com:*");
}

static void
test_hostport_any_host_any_port(void **state)
{
	(void)state;
	COVERS("*:443", "api.example.com:443");
	COVERS("*:443", "localhost:443");
	COVERS("*:443", "*.example.com:443");
	COVERS("*:443", "*:443");
	COVERS("*:443", "[::1]:443");
	NOT_COVERS("*:443", "api.example.com:80");
	NOT_COVERS("*:443", "*:*");
	COVERS("api.example.com:*", "api.example.com:80");
	COVERS("api.example.com:*", "api.example.com:443");
	COVERS("api.example.com:*", "api.example.com:*");
	NOT_COVERS("api.example.com:*", "www.example.com:80");
	COVERS("*.example.com:*", "a.example.com:8080");
	COVERS("*:*", "anything.org:1");
	COVERS("*:*", "*:*");
}

static void
test_hostport_case_insensitive(void **state)
{
	char h[300], p[8];

	(void)state;
	COVERS("api.example.com:443", "API.Example.COM:443");
	COVERS("API.EXAMPLE.COM:443", "api.example.com:443");
	COVERS("*.Example.Com:443", "API.example.COM:443");
	assert_int_equal(
	    hostport_parse("API.Example.COM:443", h, sizeof(h), p, sizeof(p)),
	    0);
	assert_string_equal(h, "api.example.com");
	assert_string_equal(p, "443");
}

static void
test_hostport_ipv6(void **state)
{
	char h[300], p[8];

	(void)state;
	COVERS("[::1]:8080", "[::1]:8080");
	COVERS("[::1]:8080", "[0:0:0:0:0:0:0:1]:8080");
	COVERS("[0:0:0:0:0:0:0:1]:8080", "[::1]:8080");
	COVERS("[2001:DB8::1]:443", "[2001:db8:0::1]:443");
	NOT_COVERS("[::1]:8080", "[::2]:8080");
	NOT_COVERS("[::1]:8080", "[::1]:8081");
	NOT_COVERS("[::1]:8080", "localhost:8080");
	NOT_COVERS("*.example.com:8080", "[::1]:8080");
	assert_int_equal(
	    hostport_parse("[::1]:8080", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "[::1]");
	assert_string_equal(p, "8080");
}

static void
test_hostport_parse_good(void **state)
{
	static const char *const good[] = {"api.example.com:443",
	    "*.example.com:443", "*:443", "*:*", "localhost:1", "host:65535",
	    "a-b.c:80", "[::1]:8080", "[fe80::1]:22", "api.example.com:*",
	    "10.0.0.1:5432", NULL};
	char h[300], p[8];
	size_t i;

	(void)state;
	for (i = 0; good[i] != NULL; i++)
		if (hostport_parse(good[i], h, sizeof(h), p, sizeof(p)) != 0)
			fail_msg("\"%s\" should parse", good[i]);
	assert_int_equal(
	    hostport_parse("*.example.com:443", h, sizeof(h), p, sizeof(p)), 0);
	assert_string_equal(h, "*.example.com");
	assert_string_equal(p, "443");
}

static void
test_hostport_parse_malformed(void **state)
{
	static const char *const bad[] = {"host", "host:0", "host:70000",
	    "host:65536", "a..b:1", "[zz]:1", ":443", "", "host:", "host:-1",
	    "host:+80", "host:80x", "host:8 0", ".host:1", "host.:1", "ho st:1",
	    "ho_st:1", "a*b:1", "**:1", "*.*.example.com:1", "*.:443", "[::1]",
	    "[::1]80", "[]:80", "[::1]:0", "[::1]:abc", "::1:80", "host:1:2",
	    "*example.com:443", "ex*.com:443", NULL};
	char h[300], p[8];
	size_t i;

	(void)state;
	for (i = 0; bad[i] != NULL; i++) {
		if (hostport_parse(bad[i], h, sizeof(h), p, sizeof(p)) == 0)
			fail_msg("malformed \"%s\" was accepted (host \"%s\" "
			         "port \"%s\")",
			    bad[i], h, p);
		/* A malformed pattern covers nothing, nor is covered. */
		if (hostport_covers("*:*", bad[i]) ||
		    hostport_covers(bad[i], "api.example.com:443"))
			fail_msg(
			    "malformed \"%s\" took part in coverage", bad[i]);
	}
}

static void
test_hostport_parse_bounds(void **state)
{
	char big[400], h[300], p[8], small[8];

	(void)state;
	/* A host longer than the caller's buffer is refused, not cut. */
	memset(big, 'a', sizeof(big));
	snprintf(big + 350, sizeof(big) - 350, ":443");
	assert_int_equal(hostport_parse(big, h, sizeof(h), p, sizeof(p)), -1);
	assert_int_equal(hostport_parse("example.com:443", small, sizeof(small),
	                     p, sizeof(p)),
	    -1);
	assert_int_equal(
	    hostport_parse("[::1]:443", small, 5, p, sizeof(p)), -1);
	assert_int_equal(hostport_parse("a.b:443", h, sizeof(h), p, 3), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_glob_star_stops_at_slash),
	    cmocka_unit_test(test_glob_double_star_crosses_slash),
	    cmocka_unit_test(test_glob_question_mark),
	    cmocka_unit_test(test_glob_literal),
	    cmocka_unit_test(test_path_covers),
	    cmocka_unit_test(test_path_covers_by_reach_not_text),
	    cmocka_unit_test(test_hostport_wildcard_subdomains),
	    cmocka_unit_test(test_hostport_exact),
	    cmocka_unit_test(test_hostport_any_host_any_port),
	    cmocka_unit_test(test_hostport_case_insensitive),
	    cmocka_unit_test(test_hostport_ipv6),
	    cmocka_unit_test(test_hostport_parse_good),
	    cmocka_unit_test(test_hostport_parse_malformed),
	    cmocka_unit_test(test_hostport_parse_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
