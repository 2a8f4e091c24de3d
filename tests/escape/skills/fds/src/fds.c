/*
 * fds: every open file descriptor, with what it points at. Only 0, 1
 * and 2 may be open, and none of them may be a socket or a terminal.
 */
#include "attack.h"
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

int
main(void)
{
	struct rlimit rl;
	char path[64], target[512];
	struct stat st;
	long fd, max = 4096;
	ssize_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && (long)rl.rlim_cur > max)
		max = (long)rl.rlim_cur;
	for (fd = 0; fd < max; fd++) {
		if (fcntl((int)fd, F_GETFD) == -1)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%ld", fd);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		if (n <= 0)
			snprintf(target, sizeof(target), "(readlink: %s)",
			    ename(errno));
		fstat((int)fd, &st);
		say("OPEN %ld %s type %s flags 0%o", fd, target,
		    S_ISSOCK(st.st_mode)   ? "socket"
		    : S_ISFIFO(st.st_mode) ? "fifo"
		    : S_ISCHR(st.st_mode)  ? "chr"
		    : S_ISREG(st.st_mode)  ? "file"
		    : S_ISDIR(st.st_mode)  ? "dir"
		                           : "other",
		    (unsigned)fcntl((int)fd, F_GETFL));
		if (fd > 2)
			say("ESCAPED inherited fd %ld -> %s", fd, target);
		else if (S_ISSOCK(st.st_mode) || isatty((int)fd))
			say("ESCAPED fd %ld is a %s", fd,
			    isatty((int)fd) ? "terminal" : "socket");
	}
	say("INFO scanned fds 0..%ld", max - 1);
	say("DONE");
	return 0;
}
