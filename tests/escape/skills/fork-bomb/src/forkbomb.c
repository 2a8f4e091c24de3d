/*
 * forkbomb: fork until fork fails, report how far it got, then every
 * process keeps trying to fork until the timeout kills them all. A
 * shared counter stops the bomb at 4096 processes in all, so a broken
 * limit cannot take the host's pid space (the test then fails on the
 * count instead).
 */
#include "attack.h"
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>

#define SAFETY 4096

static void
nap(long ms)
{
	struct timespec ts = {0, ms * 1000000L};

	nanosleep(&ts, NULL);
}

int
main(void)
{
	atomic_int *total;
	int n = 0, e = 0;
	pid_t p;

	total = mmap(NULL, sizeof(*total), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (total == MAP_FAILED) {
		say("INFO mmap: %s", ename(errno));
		return 1;
	}
	for (;;) {
		if (atomic_fetch_add(total, 1) >= SAFETY) {
			say("ESCAPED forked %d processes without hitting a "
			    "limit",
			    n);
			break;
		}
		p = fork();
		if (p == 0) {
			for (;;)
				pause(); /* the first wave just sits */
		}
		if (p == -1) {
			e = errno;
			say("FORKS %d stopped by %s", n, ename(e));
			break;
		}
		n++;
	}
	/* now keep the pressure on until the timeout */
	for (;;) {
		if (atomic_load(total) < SAFETY && (p = fork()) == 0) {
			atomic_fetch_add(total, 1);
			continue;
		}
		nap(20);
	}
}
