/*
 * ptyrun: runs a command with a fresh pseudo-terminal as its controlling
 * terminal and stdin, so that a skill that reaches a terminal could
 * inject input into it. Everything that appears on the terminal (the
 * echo of injected input included) is appended to LOG.
 *   ptyrun LOG PIDFILE CMD [ARGS...]   (PIDFILE gets the command's pid)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	int m, s, st, log;
	char buf[4096];
	ssize_t r;
	pid_t pid;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: ptyrun LOG PIDFILE CMD [ARGS...]\n");
		return 2;
	}
	if ((m = posix_openpt(O_RDWR | O_NOCTTY)) == -1 || grantpt(m) == -1 ||
	    unlockpt(m) == -1) {
		perror("ptyrun: pty");
		return 1;
	}
	if ((log = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0600)) == -1) {
		perror("ptyrun: log");
		return 1;
	}
	if ((pid = fork()) == -1)
		return 1;
	if (pid == 0) {
		setsid();
		if ((s = open(ptsname(m), O_RDWR)) == -1) {
			perror("ptyrun: slave");
			_exit(1);
		}
		ioctl(s, TIOCSCTTY, 0);
		dup2(s, 0);
		close(s);
		close(m);
		close(log);
		execvp(argv[3], argv + 3);
		perror("ptyrun: exec");
		_exit(127);
	}
	if ((f = fopen(argv[2], "w")) != NULL) {
		fprintf(f, "%d\n", (int)pid);
		fclose(f);
	}
	for (;;) {
		r = read(m, buf, sizeof(buf));
		if (r > 0) {
			(void)!write(log, buf, (size_t)r);
			continue;
		}
		if (r == -1 && errno == EINTR)
			continue;
		break; /* EIO: every holder of the slave is gone */
	}
	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
