/*
 * diskfill one|many|tmp MARK: write 1 MiB blocks until a write fails.
 *   one:  one file in the work dir, SIGXFSZ left at its default (the
 *         file size limit must end it);
 *   many: 8 MiB files in the work dir, SIGXFSZ ignored;
 *   tmp:  8 MiB files in /tmp, SIGXFSZ ignored (the small /tmp must
 *         fill up);
 *   files: empty files in the work dir until one cannot be created (the
 *         inode bound must stop it; 100,000 is ESCAPED);
 *   data, datafiles: as many and files, in $DATA_DIR (its own bound
 *         must stop them, before the host's disk does).
 * Stops by itself at 512 MiB in all: "ESCAPED" then, since no limit
 * held. Files are named MARK-N so that the host can find them.
 */
#include "attack.h"
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>

#define CAP (512L << 20)

int
main(int argc, char *argv[])
{
	static char buf[1 << 20];
	const char *mode = argc > 1 ? argv[1] : "one";
	const char *mark = argc > 2 ? argv[2] : "sb-escape-fill";
	const char *dir =
	    strcmp(mode, "tmp") == 0 ? "/tmp"
	    : strncmp(mode, "data", 4) == 0 && getenv("DATA_DIR") != NULL
	        ? getenv("DATA_DIR")
	        : ".";
	long total = 0, in_file = 0, per_file;
	char path[512];
	int fd = -1, nfile = 0;
	ssize_t w;

	if (strcmp(mode, "files") == 0 || strcmp(mode, "datafiles") == 0) {
		for (nfile = 0; nfile < 100000; nfile++) {
			snprintf(
			    path, sizeof(path), "%s/%s-e%d", dir, mark, nfile);
			if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL,
			         0600)) == -1) {
				say("STOPPED files after %d: %s", nfile,
				    ename(errno));
				say("DONE");
				return 1;
			}
			close(fd);
		}
		say("ESCAPED created %d empty files", nfile);
		say("DONE");
		return 0;
	}
	memset(buf, 'd', sizeof(buf));
	per_file = strcmp(mode, "one") == 0 ? CAP : (8L << 20);
	if (strcmp(mode, "one") != 0)
		signal(SIGXFSZ, SIG_IGN);
	say("INFO mode %s dir %s", mode, dir);
	while (total < CAP) {
		if (fd == -1 || in_file >= per_file) {
			if (fd != -1)
				close(fd);
			snprintf(
			    path, sizeof(path), "%s/%s-%d", dir, mark, nfile++);
			if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC,
			         0600)) == -1) {
				say("STOPPED open %s after %ld MiB: %s", path,
				    total >> 20, ename(errno));
				say("DONE");
				return 1;
			}
			in_file = 0;
		}
		w = write(fd, buf, sizeof(buf));
		if (w != (ssize_t)sizeof(buf)) {
			if (w > 0)
				total += w;
			say("STOPPED write after %ld MiB in %d files: %s",
			    total >> 20, nfile,
			    w == -1 ? ename(errno) : "short write");
			say("DONE");
			return 1;
		}
		total += w;
		in_file += w;
		if ((total & ((16L << 20) - 1)) == 0)
			say("WROTE %ld MiB", total >> 20);
	}
	say("ESCAPED wrote %ld MiB in %d files without hitting a limit",
	    total >> 20, nfile);
	say("DONE");
	return 0;
}
