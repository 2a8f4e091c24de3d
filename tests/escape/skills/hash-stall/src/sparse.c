/*
 * sparse: 256 sparse files, each as large as RLIMIT_FSIZE allows (at
 * most 64 MiB), made with ftruncate: no disk used, no time spent, but
 * every byte reads back as a zero for whoever hashes the files.
 */
#include "attack.h"
#include <fcntl.h>
#include <sys/resource.h>

int
main(void)
{
	struct rlimit rl;
	off_t size = 64L << 20;
	char name[32];
	int i, fd, n = 0;

	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    (off_t)rl.rlim_cur < size)
		size = (off_t)rl.rlim_cur;
	for (i = 0; i < 256; i++) {
		snprintf(name, sizeof(name), "stall-%03d", i);
		if ((fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600)) ==
		        -1 ||
		    ftruncate(fd, size) == -1) {
			say("INFO file %d: %s", i, ename(errno));
			if (fd != -1)
				close(fd);
			break;
		}
		close(fd);
		n++;
	}
	say("INFO made %d sparse files of %lld MiB", n,
	    (long long)(size >> 20));
	say("DONE");
	return 0;
}
