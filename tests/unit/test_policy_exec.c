/*
 * test_policy_exec.c: the programs a call may execute, as policyd
 * resolves them: "#!" lines parsed as the kernel reads them, the entry's
 * interpreter (and env's program), declared names in the sandbox's PATH,
 * each ELF program's loader, real paths inside the system paths only,
 * and a clear refusal naming what is missing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/util.h"
#include "../../policyd/policyd_exec.h"

static char T[64];     /* a temp dir: skill/ and tools/ beneath it */
static char skill[96]; /* the skill dir */
static char tools[96]; /* a system path of the test's own */
static char *sys_usr_tools[2];

static void
put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		fail_msg("cannot write %s", path);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(T, sizeof(T), "/tmp/sb-test-exec.XXXXXX");
	if (mkdtemp(T) == NULL)
		return -1;
	snprintf(skill, sizeof(skill), "%s/skill", T);
	snprintf(tools, sizeof(tools), "%s/tools", T);
	if (mkdir(skill, 0755) == -1 || mkdir(tools, 0755) == -1)
		return -1;
	sys_usr_tools[0] = "/usr";
	sys_usr_tools[1] = tools;
	exec_system_paths(sys_usr_tools, 2);
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", T);
	return system(cmd) == 0 ? 0 : -1;
}

/* Resolve; on success *v holds the programs. */
static int
resolve(const char *entry, char *const *names, size_t n, char ***v, size_t *nv,
    struct error *e)
{
	char *interp = NULL;
	int r;

	memset(e, 0, sizeof(*e));
	r = exec_resolve(skill, entry, NULL, names, n, v, nv, &interp, e);
	assert_null(interp);
	return r;
}

static int
has(char **v, size_t n, const char *path)
{
	char real[PATH_MAX];
	size_t i;

	if (realpath(path, real) == NULL)
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(v[i], real) == 0)
			return 1;
	return 0;
}

static void
refused(const char *entry, char *const *names, size_t n, const char *why)
{
	struct error e;
	char **v;
	size_t nv;

	assert_int_equal(resolve(entry, names, n, &v, &nv, &e), -1);
	assert_int_equal(e.type, ERR_SANDBOX_FAILED);
	if (strstr(e.msg, why) == NULL)
		fail_msg("\"%s\" does not say \"%s\"", e.msg, why);
}

static int
shebang(const char *text, char *interp, char *arg, struct error *e)
{
	memset(e, 0, sizeof(*e));
	return exec_shebang(
	    text, strlen(text), interp, PATH_MAX, arg, EXEC_SHEBANG_MAX, e);
}

/* "#!" lines as the kernel splits them: one interpreter, one argument. */
static void
test_shebang(void **state)
{
	char interp[PATH_MAX], arg[EXEC_SHEBANG_MAX], line[600];
	struct error e;

	(void)state;
	assert_int_equal(shebang("echo hi\n", interp, arg, &e), 0);
	assert_int_equal(shebang("", interp, arg, &e), 0);
	assert_int_equal(shebang("#!/bin/sh\necho\n", interp, arg, &e), 1);
	assert_string_equal(interp, "/bin/sh");
	assert_string_equal(arg, "");
	assert_int_equal(shebang("#! \t/bin/sh -eu  \n", interp, arg, &e), 1);
	assert_string_equal(interp, "/bin/sh");
	assert_string_equal(arg, "-eu");
	assert_int_equal(
	    shebang("#!/usr/bin/env python3 -u\n", interp, arg, &e), 1);
	assert_string_equal(interp, "/usr/bin/env");
	assert_string_equal(arg, "python3 -u");
	assert_int_equal(shebang("#!/bin/sh", interp, arg, &e), 1); /* EOF */
	assert_string_equal(interp, "/bin/sh");
	assert_int_equal(shebang("#!\n", interp, arg, &e), -1);
	assert_non_null(strstr(e.msg, "no absolute interpreter"));
	assert_int_equal(shebang("#!sh\n", interp, arg, &e), -1);
	assert_non_null(strstr(e.msg, "no absolute interpreter"));
	/* an interpreter not whole within the kernel's 256 bytes */
	memset(line, 'a', sizeof(line));
	memcpy(line, "#!/", 3);
	line[sizeof(line) - 1] = '\0';
	assert_int_equal(shebang(line, interp, arg, &e), -1);
	assert_non_null(strstr(e.msg, "no whole interpreter within 256"));
	/* a long argument is cut there, as the kernel cuts it */
	memcpy(line, "#!/bin/sh ", 10);
	assert_int_equal(shebang(line, interp, arg, &e), 1);
	assert_string_equal(interp, "/bin/sh");
	assert_int_equal(strlen(arg), EXEC_SHEBANG_MAX - 10);
}

/* A sh entry: sh's real path and its loader; declared names beside. */
static void
test_entry_and_names(void **state)
{
	char *names[] = {"cat", "/bin/ls"};
	struct error e;
	char **v;
	size_t n, i;

	(void)state;
	put(skill, "run.sh", "#!/bin/sh -e\necho hi\n", 0755);
	assert_int_equal(resolve("run.sh", NULL, 0, &v, &n, &e), 0);
	assert_int_equal(n, 2);
	assert_true(has(v, n, "/bin/sh"));
	assert_non_null(strstr(v[1], "ld-")); /* the loader sh names */
	for (i = 0; i < n; i++)
		assert_int_equal(v[i][0], '/');
	strarr_free(v, n);
	assert_int_equal(resolve("run.sh", names, 2, &v, &n, &e), 0);
	assert_int_equal(n, 4);
	assert_true(has(v, n, "/bin/sh"));
	assert_true(has(v, n, "/usr/bin/cat"));
	assert_true(has(v, n, "/bin/ls"));
	strarr_free(v, n);
}

/* #!/usr/bin/env NAME: env and NAME; an option leaves NAME to exec. */
static void
test_env_entry(void **state)
{
	struct error e;
	char **v;
	size_t n;

	(void)state;
	put(skill, "env.sh", "#!/usr/bin/env sh\necho hi\n", 0755);
	assert_int_equal(resolve("env.sh", NULL, 0, &v, &n, &e), 0);
	assert_true(has(v, n, "/usr/bin/env"));
	assert_true(has(v, n, "/bin/sh"));
	strarr_free(v, n);
	put(skill, "envs.sh", "#!/usr/bin/env -S sh -e\necho hi\n", 0755);
	assert_int_equal(resolve("envs.sh", NULL, 0, &v, &n, &e), 0);
	assert_true(has(v, n, "/usr/bin/env"));
	assert_false(has(v, n, "/bin/sh"));
	strarr_free(v, n);
	put(skill, "envx.sh", "#!/usr/bin/env sb-no-such-prog\n", 0755);
	refused("envx.sh", NULL, 0,
	    "entry envx.sh: /usr/bin/env's program \"sb-no-such-prog\": no "
	    "such program in the sandbox's PATH");
}

/* What is missing or not a program is named, with the PATH searched. */
static void
test_refusals(void **state)
{
	char *missing[] = {"sb-no-such-program"}, *slash[] = {"bin/sh"};
	char *dots[] = {"/usr/bin/../bin/sh"}, *etc[] = {"/etc/passwd"};

	(void)state;
	put(skill, "run.sh", "#!/bin/sh\necho hi\n", 0755);
	refused("run.sh", missing, 1,
	    "exec \"sb-no-such-program\": no such program in the sandbox's "
	    "PATH (/usr/local/bin:/usr/bin:/bin)");
	refused("run.sh", slash, 1, "a program name or an absolute path");
	refused("run.sh", dots, 1, "a program name or an absolute path");
	refused("run.sh", etc, 1, "lies outside the worker's system paths");
	refused("nothere.sh", NULL, 0, "entry nothere.sh: No such file");
	refused("../skill/run.sh", NULL, 0, "entry ../skill/run.sh");
	put(skill, "text.sh", "echo no interpreter\n", 0755);
	refused("text.sh", NULL, 0, "neither a \"#!\" script nor an ELF");
	put(skill, "gone.sh", "#!/usr/bin/sb-no-such-shell\n", 0755);
	refused("gone.sh", NULL, 0, "/usr/bin/sb-no-such-shell: no such file");
	put(tools, "noexec", "#!/bin/sh\n", 0644);
	{
		char line[256];

		snprintf(line, sizeof(line), "#!%s/noexec\n", tools);
		put(skill, "ne.sh", line, 0755);
	}
	refused("ne.sh", NULL, 0, "is not a regular file the worker may");
}

/* Real paths only, and only inside system paths bound at their place. */
static void
test_system_paths(void **state)
{
	char *usr_only[] = {"/usr"}, *bin_only[] = {"/bin"}, *tools_only[1];
	char link[160], line[200], *names[1];
	struct error e;
	struct stat st;
	char **v;
	size_t n;

	(void)state;
	put(skill, "run.sh", "#!/bin/sh\necho hi\n", 0755);
	/* a link in a system path to a program outside it */
	snprintf(link, sizeof(link), "%s/sh-link", tools);
	assert_int_equal(symlink("/bin/sh", link), 0);
	snprintf(line, sizeof(line), "#!%s\n", link);
	put(skill, "link.sh", line, 0755);
	assert_int_equal(resolve("link.sh", NULL, 0, &v, &n, &e), 0);
	strarr_free(v, n); /* /usr is a system path: sh is there */
	tools_only[0] = tools;
	exec_system_paths(tools_only, 1);
	refused("link.sh", NULL, 0, "lies outside the worker's system paths");
	refused("run.sh", NULL, 0, "lies outside the worker's system paths");
	exec_system_paths(usr_only, 1);
	names[0] = "/etc/hosts"; /* a real file outside every system path */
	refused("run.sh", names, 1, "/etc/hosts lies outside the worker's");
	/* a system path that is a symlink binds nothing (merged /usr) */
	if (lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode)) {
		exec_system_paths(bin_only, 1);
		refused("run.sh", NULL, 0, "outside the worker's system paths");
	}
	exec_system_paths(sys_usr_tools, 2);
}

/* A declared script needs what runs it; interpreters nest at most 4. */
static void
test_scripts(void **state)
{
	char path[160], line[200], *names[1];
	struct error e;
	char **v;
	size_t n;
	int i;

	(void)state;
	exec_system_paths(sys_usr_tools, 2);
	snprintf(path, sizeof(path), "%s/tool", tools);
	put(tools, "tool", "#!/usr/bin/env sh\necho tool\n", 0755);
	names[0] = path;
	put(skill, "run.sh", "#!/bin/sh\necho hi\n", 0755);
	refused("run.sh", names, 1, "is a script run by /usr/bin/env");
	put(skill, "env.sh", "#!/usr/bin/env sh\necho hi\n", 0755);
	assert_int_equal(resolve("env.sh", names, 1, &v, &n, &e), 0);
	assert_true(has(v, n, path));
	strarr_free(v, n);
	/* i0 -> i1 -> ... -> i5 -> /bin/sh: deeper than the kernel goes */
	for (i = 0; i < 6; i++) {
		char name[8];

		snprintf(name, sizeof(name), "i%d", i);
		if (i < 5)
			snprintf(
			    line, sizeof(line), "#!%s/i%d\n", tools, i + 1);
		else
			snprintf(line, sizeof(line), "#!/bin/sh\n");
		put(tools, name, line, 0755);
	}
	snprintf(line, sizeof(line), "#!%s/i0\n", tools);
	put(skill, "deep.sh", line, 0755);
	refused("deep.sh", NULL, 0, "interpreters nested deeper than 4");
	snprintf(line, sizeof(line), "#!%s/i3\n", tools);
	put(skill, "three.sh", line, 0755);
	assert_int_equal(resolve("three.sh", NULL, 0, &v, &n, &e), 0);
	assert_true(has(v, n, "/bin/sh"));
	strarr_free(v, n);
}

/* An ELF entry brings its loader; a static one nothing. */
static void
test_elf_entry(void **state)
{
	char cmd[256];
	struct error e;
	char **v;
	size_t n;

	(void)state;
	snprintf(cmd, sizeof(cmd), "cp /bin/true %s/true", skill);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(resolve("true", NULL, 0, &v, &n, &e), 0);
	assert_int_equal(n, 1);
	assert_non_null(strstr(v[0], "ld-"));
	strarr_free(v, n);
	/* a cut ELF file: its header alone */
	snprintf(cmd, sizeof(cmd), "head -c 20 /bin/true >%s/cut", skill);
	assert_int_equal(system(cmd), 0);
	refused("cut", NULL, 0, "a cut ELF header");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shebang),
	    cmocka_unit_test(test_entry_and_names),
	    cmocka_unit_test(test_env_entry),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_system_paths),
	    cmocka_unit_test(test_scripts),
	    cmocka_unit_test(test_elf_entry),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
