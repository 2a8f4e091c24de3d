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
 * With newpid the program is pid 1 of a pid namespace of its own;
 * without, it is not. Root only.
 */
static void
test_newpid(void **state)
{
	char *argv[] = {"sh", "-c", "[ $$ = 1 ]", NULL};
	int status, newpid;
	pid_t pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	for (newpid = 0; newpid <= 1; newpid++) {
		pid = os_spawn("/bin/sh", argv, NULL, 0, newpid, NULL, 0);
		assert_true(pid > 0);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status) == 0, newpid);
	}
}

/*
 * The child runs in our memory until its exec: its fds are its own (ours
 * stay open, theirs are placed), our memory is as it was whether its
 * exec worked or not, and one stack serves spawn after spawn.
 */
static void
test_child_leaves_us_alone(void **state)
{
	char *argv[] = {"sh", "-c", "echo hi >&5; exec 5>&-", NULL};
	char *none[] = {"none", NULL};
	struct stat in0, in1;
	char got[8] = "";
	struct fdmap fd;
	int p[2], status, i;
	pid_t pid;

	(void)state;
	assert_int_equal(fstat(0, &in0), 0);
	for (i = 0; i < 64; i++) {
		assert_int_equal(pipe(p), 0);
		fd = (struct fdmap){p[1], 5};
		pid = os_spawn("/bin/sh", argv, &fd, 1, 0, NULL, 0);
		assert_true(pid > 0);
		assert_int_equal(fcntl(p[1], F_GETFD), -1); /* given: closed */
		assert_int_equal(read(p[0], got, sizeof(got)), 3);
		assert_memory_equal(got, "hi\n", 3);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(close(p[0]), 0);
	}
	pid = os_spawn("/nonexistent/none", none, NULL, 0, 0, NULL, 0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 127);
	/* the child's stdin went to /dev/null, ours stays */
	assert_int_equal(fstat(0, &in1), 0);
	assert_true(in0.st_dev == in1.st_dev && in0.st_ino == in1.st_ino);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_join_before_exec),
	    cmocka_unit_test(test_join_refused),
	    cmocka_unit_test(test_newpid),
	    cmocka_unit_test(test_child_leaves_us_alone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
