/* test_log.c: a repeated message is rate-limited, counted and reported. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/log.h"
#include "../../lib/util.h"

/* stderr goes to a temporary file; each test reads back what was logged. */
static FILE *captured;

static int
setup(void **state)
{
	(void)state;
	captured = tmpfile();
	if (captured == NULL || dup2(fileno(captured), STDERR_FILENO) == -1)
		return -1;
	log_init("test_log", 1, 0);
	return 0;
}

/* Lines logged since the last call that contain needle. */
static int
count_lines(const char *needle, char *last, size_t lastsz)
{
	char line[2048];
	int n = 0;

	fflush(stderr);
	rewind(captured);
	while (fgets(line, sizeof(line), captured) != NULL)
		if (strstr(line, needle) != NULL) {
			n++;
			if (last != NULL)
				snprintf(last, lastsz, "%s", line);
		}
	if (ftruncate(fileno(captured), 0) == -1)
		return -1;
	rewind(captured);
	return n;
}

static void
flood(int n, const char *what)
{
	int i;

	for (i = 0; i < n; i++)
		log_warnx("disk full writing %s, attempt %d", what, i);
}

static void
test_burst_then_count(void **state)
{
	char last[2048];
	uint64_t t0;

	(void)state;
	log_ratelimit(5, 2);
	t0 = now_mono_ms();
	flood(10000, "audit.jsonl");
	/* The flood must fit one window (about 20 ms; a loaded machine may
	 * take longer): else it spans two, and the count means nothing. */
	if (now_mono_ms() - t0 >= 1000) {
		print_message("the flood took %llu ms: not one window\n",
		    (unsigned long long)(now_mono_ms() - t0));
		skip();
	}
	/* Only the burst reaches the log, not 10,000 lines. */
	assert_int_equal(count_lines("disk full writing", NULL, 0), 5);
	sleep(3);
	log_warnx("an unrelated line");
	/* The window passed: the count and the first dropped line come out. */
	assert_int_equal(
	    count_lines("9995 similar messages suppressed", last, sizeof(last)),
	    1);
	assert_non_null(strstr(last, "attempt 5"));
}

static void
test_sites_are_separate(void **state)
{
	int i;

	(void)state;
	log_ratelimit(3, 60);
	for (i = 0; i < 100; i++) {
		log_warnx("first site %d", i);
		log_info("second site %d", i);
	}
	log_warnx("a third site");
	/* One noisy site does not silence another. */
	fflush(stderr);
	assert_int_equal(count_lines("site", NULL, 0), 7);
	log_flush();
	assert_int_equal(
	    count_lines("97 similar messages suppressed", NULL, 0), 2);
}

static void
test_bare_string_sites_keyed_by_text(void **state)
{
	char msg[64];
	int i;

	(void)state;
	log_ratelimit(2, 60);
	/* Distinct texts through one "%s" site are distinct messages. */
	for (i = 0; i < 10; i++) {
		snprintf(msg, sizeof(msg), "recovery note %d", i);
		log_warnx("%s", msg);
	}
	assert_int_equal(count_lines("recovery note", NULL, 0), 10);
	for (i = 0; i < 10; i++)
		log_warnx("%s", "the same note");
	assert_int_equal(count_lines("the same note", NULL, 0), 2);
	log_flush();
}

static void
test_flush_reports_at_exit(void **state)
{
	char last[2048];

	(void)state;
	log_ratelimit(1, 3600);
	flood(50, "a file");
	log_flush();
	/* Dropped lines are never lost silently, even if the site goes quiet.
	 */
	assert_int_equal(
	    count_lines("49 similar messages suppressed", last, sizeof(last)),
	    1);
	assert_non_null(strstr(last, "attempt 1"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_burst_then_count),
	    cmocka_unit_test(test_sites_are_separate),
	    cmocka_unit_test(test_bare_string_sites_keyed_by_text),
	    cmocka_unit_test(test_flush_reports_at_exit),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
