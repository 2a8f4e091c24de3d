/* test_os.c: lib/os.c os_spawn, the start of every role and worker. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/os.h"

/* Start sh -c CMD with join files; its exit status. */
static int
spawn_sh(const char *cmd, const int *join, int njoin)
{
	char *argv[] = {"sh", "-c", (char *)cmd, NULL};
	int status;
	pid_t pid;

	pid = os_spawn("/bin/sh", argv, NULL, 0, 0, join, njoin);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/* The child writes "0" to each join file before its program runs. */
static void
test_join_before_exec(void **state)
{
	char got[8] = "";
	int p[2], join[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	join[0] = join[1] = p[1];
	assert_int_equal(spawn_sh("exit 7", join, 2), 7);
	close(p[1]);
	assert_int_equal(read(p[0], got, sizeof(got)), 2);
	assert_memory_equal(got, "00", 2);
	close(p[0]);
}

/* A join file that refuses the write: the program never runs. */
static void
test_join_refused(void **state)
{
	char tmpl[] = "/tmp/test_os.XXXXXX", cmd[128], mark[96];
	struct stat st;
	int join[2];

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(mark, sizeof(mark), "%s/ran", tmpl);
	snprintf(cmd, sizeof(cmd), ": > %s", mark);
	join[0] = open("/dev/null", O_WRONLY);
	join[1] = open("/dev/null", O_RDONLY); /* refuses writes */
	assert_true(join[0] >= 0 && join[1] >= 0);
	assert_int_equal(spawn_sh(cmd, join, 2), OS_EXIT_JOIN);
	assert_int_equal(stat(mark, &st), -1);
	/* the same program with the first file alone runs */
	assert_int_equal(spawn_sh(cmd, join, 1), 0);
	assert_int_equal(stat(mark, &st), 0);
	close(join[0]);
	close(join[1]);
	assert_int_equal(unlink(mark), 0);
	assert_int_equal(rmdir(tmpl), 0);
}

/*
 * The namespaces asked for are the child's own when its program runs
 * (the clone makes the pid one, the child the others): pid 1, and a
 * network and UTS namespace that differ from ours. Root only.
 */
static void
test_namespaces(void **state)
{
	char cmd[256], net[64], uts[64];
	ssize_t n;
	char *argv[] = {"sh", "-c", cmd, NULL};
	int status;
	pid_t pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_true(
	    (n = readlink("/proc/self/ns/net", net, sizeof(net) - 1)) > 0);
	net[n] = '\0';
	assert_true(
	    (n = readlink("/proc/self/ns/uts", uts, sizeof(uts) - 1)) > 0);
	uts[n] = '\0';
	snprintf(cmd, sizeof(cmd),
	    "[ $$ = 1 ] && [ \"$(readlink /proc/self/ns/net)\" != '%s' ] && "
	    "[ \"$(readlink /proc/self/ns/uts)\" != '%s' ]",
	    net, uts);
	pid = os_spawn("/bin/sh", argv, NULL, 0,
	    CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWUTS, NULL, 0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A namespace the child cannot make: its program never runs, and it
 * exits OS_EXIT_NS (a flag unshare refuses stands for one the host
 * does not allow).
 */
static void
test_namespace_refused(void **state)
{
	char tmpl[] = "/tmp/test_os.XXXXXX", cmd[128], mark[96];
	char *argv[] = {"sh", "-c", cmd, NULL};
	struct stat st;
	int status;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	snprintf(mark, sizeof(mark), "%s/ran", tmpl);
	snprintf(cmd, sizeof(cmd), ": > %s", mark);
	pid = os_spawn("/bin/sh", argv, NULL, 0, 0x1, NULL, 0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), OS_EXIT_NS);
	assert_int_equal(stat(mark, &st), -1);
	assert_int_equal(rmdir(tmpl), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_join_before_exec),
	    cmocka_unit_test(test_join_refused),
	    cmocka_unit_test(test_namespaces),
	    cmocka_unit_test(test_namespace_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
