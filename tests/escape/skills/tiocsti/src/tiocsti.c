/*
 * tiocsti: push "sbINJECT" into a terminal's input queue, as if typed.
 * The test runs the daemon with a terminal of its own as controlling
 * terminal and stdin, and logs all that terminal shows. Tries fds 0-2,
 * /dev/tty, and every terminal device in /dev and /dev/pts. The seccomp
 * filter must refuse TIOCSTI and TIOCLINUX with EPERM whatever the fd.
 */
#include "attack.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

static const char inject[] = "sbINJECT\n";

/* returns 1 when a byte went in */
static int
sti(int fd, const char *what)
{
	char w[256];
	size_t i;
	long r = 0;
	int e = 0;

	for (i = 0; i < sizeof(inject) - 1 && r == 0; i++) {
		r = ioctl(fd, TIOCSTI, &inject[i]);
		e = errno;
	}
	snprintf(w, sizeof(w), "ioctl TIOCSTI on %s", what);
	return verdict(w, r, e, EPERM, 0);
}

static void
try_path(const char *path)
{
	int fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK);

	if (fd == -1) {
		say("INFO open %s: %s", path, ename(errno));
		return;
	}
	say("INFO opened %s (isatty %d)", path, isatty(fd));
	sti(fd, path);
	close(fd);
}

static void
scan(const char *dir, const char *prefix)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 ||
		    strcmp(de->d_name, "ptmx") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		try_path(path);
	}
	closedir(d);
}

int
main(void)
{
	char sel[2] = {12, 0}; /* TIOCL_GETSHIFTSTATE: harmless if it ran */
	char stat[1024], *p;
	int fd, ttynr = -1;
	long r;
	FILE *f;

	if ((f = fopen("/proc/self/stat", "r")) != NULL) {
		if (fgets(stat, sizeof(stat), f) != NULL &&
		    (p = strrchr(stat, ')')) != NULL)
			sscanf(p + 2, "%*c %*d %*d %*d %d", &ttynr);
		fclose(f);
	}
	say("INFO controlling tty_nr %d, sid %d, pid %d", ttynr, (int)getsid(0),
	    (int)getpid());
	if (ttynr > 0)
		say("ESCAPED has a controlling terminal (tty_nr %d)", ttynr);
	sti(0, "fd 0");
	sti(1, "fd 1");
	sti(2, "fd 2");
	/* the kernel reads the request as 32 bits: high bits must not help */
	r = syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (1UL << 32), "x");
	verdict("ioctl TIOCSTI|1<<32 on fd 0", r, errno, EPERM, 0);
	r = ioctl(0, TIOCLINUX, sel);
	verdict("ioctl TIOCLINUX on fd 0", r, errno, EPERM, 0);
	if ((fd = open("/dev/tty", O_RDWR | O_NOCTTY)) == -1) {
		say("BLOCKED open /dev/tty: %s", ename(errno));
	} else {
		say("ESCAPED opened /dev/tty");
		sti(fd, "/dev/tty");
		close(fd);
	}
	scan("/dev", "tty");
	scan("/dev", "console");
	scan("/dev/pts", "");
	say("DONE");
	return 0;
}
