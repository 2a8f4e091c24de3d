/*
 * test_config.c: the daemon config's "interpreters": the built-in
 * table, entries that replace or remove one, and what is refused with
 * the line that says why.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/config.h"

static char path[64];

/* Load a config holding text; 0 or -1 with e set. */
static int
load(struct config *c, const char *text, struct error *e)
{
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "/tmp/sb-test-config.XXXXXX");
	if ((fd = mkstemp(path)) == -1 || (f = fdopen(fd, "w")) == NULL)
		fail_msg("cannot make a temp file");
	fputs(text, f);
	fclose(f);
	memset(e, 0, sizeof(*e));
	memset(c, 0, sizeof(*c));
	fd = config_load(c, path, e);
	unlink(path);
	return fd;
}

/* The program c names for ext, or NULL. */
static const char *
interp(const struct config *c, const char *ext)
{
	size_t i;

	for (i = 0; i < c->ninterps; i++)
		if (strcmp(c->interp_exts[i], ext) == 0)
			return c->interp_progs[i];
	return NULL;
}

static void
test_defaults(void **state)
{
	struct config c;
	struct error e;

	(void)state;
	assert_int_equal(load(&c, "socket: /tmp/x.sock\n", &e), 0);
	assert_string_equal(interp(&c, ".py"), "python3");
	assert_string_equal(interp(&c, ".sh"), "sh");
	assert_string_equal(interp(&c, ".mjs"), "node");
	assert_string_equal(interp(&c, ".rb"), "ruby");
	assert_string_equal(interp(&c, ".pl"), "perl");
	assert_null(interp(&c, ".md"));
	config_free(&c);
}

static void
test_override_and_remove(void **state)
{
	struct config c;
	struct error e;

	(void)state;
	assert_int_equal(load(&c,
	                     "interpreters:\n"
	                     "  \".py\": /usr/bin/python3\n"
	                     "  \".sh\": \"\"\n"
	                     "  \".tcl\": tclsh\n",
	                     &e),
	    0);
	assert_string_equal(interp(&c, ".py"), "/usr/bin/python3");
	assert_null(interp(&c, ".sh"));
	assert_string_equal(interp(&c, ".tcl"), "tclsh");
	assert_string_equal(interp(&c, ".rb"), "ruby");
	config_free(&c);
}

/* Paths beside the sandbox's own places are system paths like any. */
static void
test_system_paths_near_own(void **state)
{
	struct config c;
	struct error e;

	(void)state;
	assert_int_equal(load(&c,
	                     "worker:\n  uids: [61000, 61009]\n"
	                     "  system_paths: [/tmpx, /devices, /skills, "
	                     "/usr/proc, /opt/tmp]\n",
	                     &e),
	    0);
	assert_int_equal(c.nsys_paths, 5);
	assert_string_equal(c.sys_paths[0], "/tmpx");
	config_free(&c);
}

static void
test_refused(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
	    {"interpreters:\n  py: python3\n",
	        ":2: interpreters: \"py\" is no extension"},
	    {"interpreters:\n  \".\": python3\n", "is no extension"},
	    {"interpreters:\n  \".p-y\": python3\n", "is no extension"},
	    {"interpreters:\n  \".abcdefghijklmnop\": x\n", "is no extension"},
	    {"interpreters:\n  \".py\": ../bin/python3\n",
	        ":2: interpreters .py: a program name, an absolute path"},
	    {"interpreters:\n  \".py\": /usr/bin/../bin/python3\n",
	        "a program name, an absolute path"},
	    {"interpreters:\n  \".py\": \"python3 -u\"\n",
	        "a program name, an absolute path"},
	    {"interpreters: [python3]\n", "interpreters"},
	    /* the sandbox mounts these itself: a system path would cover or
	     * hide beneath them */
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/usr, /dev]\n",
	        "system_paths: /dev: the sandbox makes"},
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/tmp/x]\n",
	        "system_paths: /tmp/x: the sandbox makes"},
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/]\n",
	        "system_paths: /: the sandbox makes"},
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/proc]\n",
	        "the sandbox makes"},
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/skill]\n",
	        "the sandbox makes"},
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/work/x]\n",
	        "the sandbox makes"},
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/data]\n",
	        "the sandbox makes"},
	    /* the same places spelled otherwise */
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [//tmp]\n",
	        "without \".\", \"..\" or \"//\""},
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/./proc]\n",
	        "without \".\", \"..\" or \"//\""},
	    {"worker:\n  uids: [61000, 61009]\n  system_paths: [/tmp/.]\n",
	        "without \".\", \"..\" or \"//\""},
	};
	struct config c;
	struct error e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (load(&c, bad[i].text, &e) == 0)
			fail_msg("accepted: %s", bad[i].text);
		if (strstr(e.msg, bad[i].why) == NULL)
			fail_msg(
			    "\"%s\" does not say \"%s\"", e.msg, bad[i].why);
		config_free(&c);
	}
}

/* At most 32 interpreters, the defaults included. */
static void
test_bound(void **state)
{
	char text[4096];
	size_t off;
	struct config c;
	struct error e;
	int i;

	(void)state;
	off = (size_t)snprintf(text, sizeof(text), "interpreters:\n");
	for (i = 0; i < 24; i++)
		off += (size_t)snprintf(
		    text + off, sizeof(text) - off, "  \".x%d\": prog\n", i);
	assert_int_equal(load(&c, text, &e), 0);
	assert_int_equal(c.ninterps, 32);
	config_free(&c);
	snprintf(text + off, sizeof(text) - off, "  \".y\": prog\n");
	assert_int_equal(load(&c, text, &e), -1);
	assert_non_null(strstr(e.msg, "interpreters: at most 32"));
	config_free(&c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_override_and_remove),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_system_paths_near_own),
	    cmocka_unit_test(test_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
