/* test_util.c: the lib/util.c validators every decoder relies on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/error.h"
#include "../../lib/util.h"

struct utf8_case {
	const char *name;
	const char *s;
	size_t len;
	int valid;
};

#define U8(name, lit, valid)                                                   \
	{                                                                      \
		name, lit, sizeof(lit) - 1, valid                              \
	}

static const struct utf8_case utf8_cases[] = {
    U8("empty", "", 1),
    U8("ascii", "hello, world", 1),
    U8("U+0080 first 2-byte", "\xc2\x80", 1),
    U8("U+00E9", "caf\xc3\xa9", 1),
    U8("U+07FF last 2-byte", "\xdf\xbf", 1),
    U8("U+0800 first 3-byte", "\xe0\xa0\x80", 1),
    U8("U+20AC euro", "\xe2\x82\xac", 1),
    U8("U+D7FF before surrogates", "\xed\x9f\xbf", 1),
    U8("U+E000 after surrogates", "\xee\x80\x80", 1),
    U8("U+FFFF last 3-byte", "\xef\xbf\xbf", 1),
    U8("U+10000 first 4-byte", "\xf0\x90\x80\x80", 1),
    U8("U+1D11E clef", "\xf0\x9d\x84\x9e", 1),
    U8("U+10FFFF last", "\xf4\x8f\xbf\xbf", 1),
    U8("mixed", "a\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9ez", 1),
    U8("NUL", "a\0b", 0),
    U8("lone NUL", "\0", 0),
    U8("overlong NUL", "\xc0\x80", 0),
    U8("overlong slash c0", "\xc0\xaf", 0),
    U8("overlong c1", "\xc1\xbf", 0),
    U8("overlong 3-byte slash", "\xe0\x80\xaf", 0),
    U8("overlong 3-byte U+07FF", "\xe0\x9f\xbf", 0),
    U8("overlong 4-byte", "\xf0\x80\x80\xaf", 0),
    U8("overlong 4-byte U+FFFF", "\xf0\x8f\xbf\xbf", 0),
    U8("surrogate U+D800", "\xed\xa0\x80", 0),
    U8("surrogate U+DBFF", "\xed\xaf\xbf", 0),
    U8("surrogate U+DC00", "\xed\xb0\x80", 0),
    U8("surrogate U+DFFF", "\xed\xbf\xbf", 0),
    U8("surrogate pair as CESU-8", "\xed\xa0\xbd\xed\xb8\x80", 0),
    U8("U+110000", "\xf4\x90\x80\x80", 0),
    U8("f5 lead", "\xf5\x80\x80\x80", 0),
    U8("5-byte form", "\xf8\x88\x80\x80\x80", 0),
    U8("6-byte form", "\xfc\x84\x80\x80\x80\x80", 0),
    U8("fe", "\xfe", 0),
    U8("ff", "\xff", 0),
    U8("lone continuation 80", "\x80", 0),
    U8("lone continuation bf", "a\xbf", 0),
    U8("truncated 2-byte", "\xc3", 0),
    U8("truncated 3-byte", "\xe2\x82", 0),
    U8("truncated 4-byte", "\xf0\x9f\x98", 0),
    U8("truncated 4-byte then ascii", "\xf0\x9f\x98z", 0),
    U8("bad 2nd byte of 2", "\xc3\x28", 0),
    U8("bad 2nd byte of 3", "\xe2\x28\xa1", 0),
    U8("bad 3rd byte of 3", "\xe2\x82\x28", 0),
    U8("bad 2nd byte of 4", "\xf0\x28\x8c\xbc", 0),
    U8("bad 4th byte of 4", "\xf0\x90\x8c\x28", 0),
    U8("valid then bad", "ok\xc3\xa9\xff", 0),
};

static void
test_utf8_table(void **state)
{
	size_t i;
	int got;

	(void)state;
	for (i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++) {
		const struct utf8_case *c = &utf8_cases[i];
		got = utf8_valid(c->s, c->len);
		if (got != c->valid)
			fail_msg("utf8_valid(%s) = %d, want %d", c->name, got,
			    c->valid);
	}
}

/* The length bound is honoured: a sequence cut by len is truncated. */
static void
test_utf8_len_bound(void **state)
{
	const char *s = "\xe2\x82\xac";

	(void)state;
	assert_int_equal(utf8_valid(s, 3), 1);
	assert_int_equal(utf8_valid(s, 2), 0);
	assert_int_equal(utf8_valid(s, 1), 0);
	assert_int_equal(utf8_valid(s, 0), 1);
	/* Bytes past len are never looked at. */
	assert_int_equal(utf8_valid("ab\xff", 2), 1);
}

/* utf8_valid of a heap copy of exactly len bytes: a sanitizer build
 * sees any read past the end. */
static int
utf8_exact(const char *s, size_t len)
{
	char *p = malloc(len > 0 ? len : 1);
	int r;

	assert_non_null(p);
	memcpy(p, s, len);
	r = utf8_valid(p, len);
	free(p);
	return r;
}

/*
 * Long ASCII is checked a word at a time: a NUL, a stray byte or a
 * multi-byte character at any place, in any length, is seen as one is
 * in a short string (and nothing past len is read).
 */
static void
test_utf8_long(void **state)
{
	static const char *const bad[] = {
	    "\0", "\x80", "\xff", "\xc3", "\xed\xa0\x80"};
	char s[40];
	size_t len, at, b, blen;

	(void)state;
	for (len = 0; len <= 32; len++) {
		memset(s, 'a', sizeof(s));
		assert_int_equal(utf8_exact(s, len), 1);
		for (at = 0; at < len; at++) {
			for (b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
				memset(s, 'a', sizeof(s));
				blen = b == 0 ? 1 : strlen(bad[b]);
				if (at + blen > len)
					continue;
				memcpy(s + at, bad[b], blen);
				if (utf8_exact(s, len) != 0)
					fail_msg(
					    "len %zu: bad %zu at %zu passed",
					    len, b, at);
			}
			memset(s, 'a', sizeof(s));
			if (at + 2 <= len) { /* a valid é anywhere */
				memcpy(s + at, "\xc3\xa9", 2);
				if (utf8_exact(s, len) != 1)
					fail_msg("len %zu: é at %zu refused",
					    len, at);
			}
		}
	}
}

static void
test_ident_valid(void **state)
{
	char long_ok[65], long_bad[66];

	(void)state;
	assert_int_equal(ident_valid("a", 64), 1);
	assert_int_equal(ident_valid("skill-1.2_X", 64), 1);
	assert_int_equal(ident_valid("...", 64), 1);
	assert_int_equal(ident_valid(".hidden", 64), 1);
	assert_int_equal(ident_valid("", 64), 0);
	assert_int_equal(ident_valid(".", 64), 0);
	assert_int_equal(ident_valid("..", 64), 0);
	assert_int_equal(ident_valid("a/b", 64), 0);
	assert_int_equal(ident_valid("../etc", 64), 0);
	assert_int_equal(ident_valid("a b", 64), 0);
	assert_int_equal(ident_valid("a\tb", 64), 0);
	assert_int_equal(ident_valid("caf\xc3\xa9", 64), 0);
	assert_int_equal(ident_valid("a:b", 64), 0);
	assert_int_equal(ident_valid("a\\b", 64), 0);
	assert_int_equal(ident_valid("abcd", 3), 0);
	assert_int_equal(ident_valid("abc", 3), 1);
	memset(long_ok, 'x', 64);
	long_ok[64] = '\0';
	memset(long_bad, 'x', 65);
	long_bad[65] = '\0';
	assert_int_equal(ident_valid(long_ok, 64), 1);
	assert_int_equal(ident_valid(long_bad, 64), 0);
}

static void
test_parse_uint(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(parse_uint("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_uint("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(parse_uint("007", 0, 10, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(
	    parse_uint("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);

	/* Failures leave *out alone. */
	v = 12345;
	assert_int_equal(parse_uint("0", 1, 10, &v), -1);
	assert_int_equal(parse_uint("11", 0, 10, &v), -1);
	assert_int_equal(
	    parse_uint("18446744073709551616", 0, UINT64_MAX, &v), -1);
	assert_int_equal(
	    parse_uint("99999999999999999999999", 0, UINT64_MAX, &v), -1);
	assert_int_equal(parse_uint("", 0, 10, &v), -1);
	assert_int_equal(parse_uint(NULL, 0, 10, &v), -1);
	assert_int_equal(parse_uint("-1", 0, UINT64_MAX, &v), -1);
	assert_int_equal(parse_uint("+1", 0, 10, &v), -1);
	assert_int_equal(parse_uint(" 1", 0, 10, &v), -1);
	assert_int_equal(parse_uint("1 ", 0, 10, &v), -1);
	assert_int_equal(parse_uint("1a", 0, 10, &v), -1);
	assert_int_equal(parse_uint("0x1", 0, 10, &v), -1);
	assert_int_equal(parse_uint("1.5", 0, 10, &v), -1);
	assert_true(v == 12345);
}

/* A copy owns its strings: NULL-ended, equal, not the same storage. */
static void
test_strarr_dup(void **state)
{
	char a[] = "alpha", b[] = "";
	char *v[] = {a, b};
	char **c;

	(void)state;
	c = strarr_dup(v, 2);
	assert_string_equal(c[0], "alpha");
	assert_string_equal(c[1], "");
	assert_null(c[2]);
	assert_ptr_not_equal(c[0], a);
	a[0] = 'A';
	assert_string_equal(c[0], "alpha");
	strarr_free(c, 2);
	c = strarr_dup(NULL, 0);
	assert_non_null(c);
	assert_null(c[0]);
	strarr_free(c, 0);
}

static void
test_hex_encode(void **state)
{
	const uint8_t in[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
	char out[2 * sizeof(in) + 1];
	char empty[1] = {'x'};

	(void)state;
	memset(out, 'Z', sizeof(out));
	hex_encode(in, sizeof(in), out);
	assert_string_equal(out, "00017f80abff");
	hex_encode(in, 0, empty);
	assert_string_equal(empty, "");
}

static void
check_norm(const char *in, const char *want)
{
	char buf[256];

	assert_true(strlen(in) < sizeof(buf));
	strcpy(buf, in);
	path_normalize(buf);
	if (strcmp(buf, want) != 0)
		fail_msg("path_normalize(\"%s\") = \"%s\", want \"%s\"", in,
		    buf, want);
}

static void
test_path_normalize(void **state)
{
	(void)state;
	check_norm("/", "/");
	check_norm("//", "/");
	check_norm("/a/b", "/a/b");
	check_norm("/a//b///c/", "/a/b/c");
	check_norm("/a/./b/.", "/a/b");
	check_norm("/a/b/../c", "/a/c");
	check_norm("/a/b/../../..", "/");
	check_norm("/../../etc/passwd", "/etc/passwd");
	check_norm("/a/../../b", "/b");
	check_norm("/..a/b..c/...", "/..a/b..c/...");
	check_norm("/a/.b/./..", "/a");
	check_norm("/srv/skills/../../etc", "/etc");
}

static void
test_mkdir_p(void **state)
{
	char tmpl[] = "/tmp/sb-test-util-XXXXXX", path[128];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(path, sizeof(path), "%s/a/b/c", tmpl);
	assert_int_equal(mkdir_p(path, 0750), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	/* Existing levels are fine. */
	assert_int_equal(mkdir_p(path, 0750), 0);
	/* A file in the way is an error. */
	snprintf(path, sizeof(path), "%s/a/file", tmpl);
	close(open(path, O_CREAT | O_WRONLY, 0600));
	snprintf(path, sizeof(path), "%s/a/file/sub", tmpl);
	assert_int_equal(mkdir_p(path, 0750), -1);
	assert_int_equal(mkdir_p("", 0750), -1);
	snprintf(path, sizeof(path), "rm -rf '%s'", tmpl);
	assert_int_equal(system(path), 0);
}

static void
test_read_full_eof(void **state)
{
	int p[2];
	char buf[8];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(write_full(p[1], "abc", 3), 0);
	close(p[1]);
	assert_int_equal(read_full(p[0], buf, 2), 0);
	assert_memory_equal(buf, "ab", 2);
	/* One byte left, four wanted: EOF before len. */
	assert_int_equal(read_full(p[0], buf, 4), -2);
	close(p[0]);
	assert_int_equal(read_full(p[0], buf, 1), -1);
}

static void
test_fd_flags(void **state)
{
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(set_nonblock(p[0]), 0);
	assert_true(fcntl(p[0], F_GETFL) & O_NONBLOCK);
	assert_int_equal(set_cloexec(p[0], 1), 0);
	assert_true(fcntl(p[0], F_GETFD) & FD_CLOEXEC);
	assert_int_equal(set_cloexec(p[0], 0), 0);
	assert_false(fcntl(p[0], F_GETFD) & FD_CLOEXEC);
	close(p[0]);
	close(p[1]);
	assert_int_equal(set_nonblock(p[0]), -1);
}

/* Cuts land on a character: no reply carries half of one. */
static void
test_utf8_cut_trim(void **state)
{
	char buf[16];
	struct error e;

	(void)state;
	assert_int_equal(utf8_cut("abc", 8), 3);
	assert_int_equal(utf8_cut("abcdef", 4), 4);
	assert_int_equal(utf8_cut("a\xc3\xa9"
	                          "b",
	                     2),
	    1); /* not inside é */
	assert_int_equal(utf8_cut("a\xc3\xa9"
	                          "b",
	                     3),
	    3);
	assert_int_equal(utf8_cut("\xe2\x80\xa6"
	                          "x",
	                     2),
	    0);
	assert_int_equal(utf8_cut("\xf0\x9f\x98\x80", 3), 0);
	snprintf(buf, sizeof(buf), "%s", "abc\xe2\x80");
	utf8_trim(buf);
	assert_string_equal(buf, "abc");
	snprintf(buf, sizeof(buf), "%s", "abc\xe2\x80\xa6");
	utf8_trim(buf);
	assert_string_equal(buf, "abc\xe2\x80\xa6");
	snprintf(buf, sizeof(buf), "%s", "ab\xc3");
	utf8_trim(buf);
	assert_string_equal(buf, "ab");
	/* error_set keeps its message UTF-8 when the bound cuts it. */
	memset(buf, 0, sizeof(buf));
	error_set(&e, ERR_BAD_REQUEST, "%0*d%s", ERROR_MSG_MAX - 2, 0,
	    "\xc3\xa9\xc3\xa9");
	assert_true(utf8_valid(e.msg, strlen(e.msg)));
	assert_int_equal(strlen(e.msg), ERROR_MSG_MAX - 2);
}

/* The time as gmtime_r and strftime write it, as now_rfc3339 did. */
static void
rfc3339_ref(time_t sec, long nsec, char *buf, size_t len)
{
	char base[32];
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, len, "%.24s.%03dZ", base, (int)(nsec / 1000000L % 1000));
}

/* rfc3339_fmt writes what gmtime_r and strftime do, 1970 to 9999. */
static void
test_rfc3339(void **state)
{
	static const time_t at[] = {0, 59, 86399, 86400, 951782400, 951868799,
	    4107542400, 4107456000, 946684799, 1798761599, 253402300799};
	struct timespec ts;
	char got[40], want[40];
	uint64_t x = 88172645463325252ULL;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(at) / sizeof(at[0]) + 200000; i++) {
		x ^= x << 13; /* xorshift: seconds anywhere up to 9999 */
		x ^= x >> 7;
		x ^= x << 17;
		ts.tv_sec = i < sizeof(at) / sizeof(at[0])
		                ? at[i]
		                : (time_t)(x % 253402300800ULL);
		ts.tv_nsec = (long)(x % 1000000000ULL);
		rfc3339_fmt(&ts, got, sizeof(got));
		rfc3339_ref(ts.tv_sec, ts.tv_nsec, want, sizeof(want));
		if (strcmp(got, want) != 0)
			fail_msg("%lld: %s, want %s", (long long)ts.tv_sec, got,
			    want);
	}
	/* cut to fit, as snprintf */
	rfc3339_fmt(&ts, got, 5);
	assert_int_equal(strlen(got), 4);
	assert_memory_equal(got, want, 4);
	now_rfc3339(got, sizeof(got));
	assert_int_equal(strlen(got), 24);
}

/* path_under: the path itself or beneath it, never a mere prefix. */
static void
test_path_under(void **state)
{
	(void)state;
	assert_true(path_under("/tmp", "/tmp"));
	assert_true(path_under("/tmp/x", "/tmp"));
	assert_true(path_under("/tmp/x", "/tmp/"));
	assert_true(path_under("/usr/bin", "/"));
	assert_false(path_under("/tmpx", "/tmp"));
	assert_false(path_under("/tm", "/tmp"));
	assert_false(path_under("/usr", "/usr/bin"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_utf8_table),
	    cmocka_unit_test(test_utf8_len_bound),
	    cmocka_unit_test(test_utf8_long),
	    cmocka_unit_test(test_ident_valid),
	    cmocka_unit_test(test_parse_uint),
	    cmocka_unit_test(test_hex_encode),
	    cmocka_unit_test(test_strarr_dup),
	    cmocka_unit_test(test_path_normalize),
	    cmocka_unit_test(test_mkdir_p),
	    cmocka_unit_test(test_read_full_eof),
	    cmocka_unit_test(test_fd_flags),
	    cmocka_unit_test(test_utf8_cut_trim),
	    cmocka_unit_test(test_rfc3339),
	    cmocka_unit_test(test_path_under),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
