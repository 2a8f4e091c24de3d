/*
 * membomb heap|memfd: take 2 GiB of memory and touch all of it, spread
 * over 8 processes of 256 MiB each, so that a per-process limit
 * (RLIMIT_AS) cannot be all that stops it:
 *   heap:  malloc and memset 16 MiB chunks;
 *   memfd: write 1 MiB blocks into memfd files of 8 MiB each (not
 *          mapped, so RLIMIT_AS does not see them at all).
 * Only the memory cgroup of the call bounds the total. Each process
 * keeps what it holds in its slot of a shared array; the parent sums
 * the slots of the processes still alive (a killed one frees what it
 * held), prints "HELD n MiB" each time the peak of that sum grows by
 * 64 MiB and "PEAK n MiB" at the end, and "ESCAPED" when all 2 GiB
 * were held at once.
 */
#include "attack.h"
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define NPROC 8
#define PER_PROC (256L << 20)
#define CHUNK (16L << 20)

static atomic_long *slot; /* bytes held, per process */
static atomic_int *fin;   /* the process takes no more */

static int
take_heap(int id)
{
	long held = 0;
	char *p;

	while (held < PER_PROC) {
		if ((p = malloc(CHUNK)) == NULL) {
			say("STOPPED %d: malloc at %ld MiB of its own: %s", id,
			    held >> 20, ename(errno));
			return 1;
		}
		memset(p, 'h', CHUNK);
		held += CHUNK;
		atomic_store(&slot[id], held);
	}
	return 0;
}

static int
take_memfd(int id)
{
	static char buf[1 << 20];
	long held = 0, in_fd = 0;
	int fd = -1;

	memset(buf, 'm', sizeof(buf));
	signal(SIGXFSZ, SIG_IGN);
	while (held < PER_PROC) {
		if (fd == -1 || in_fd >= (8L << 20)) {
			if ((fd = memfd_create("sb-escape", 0)) == -1) {
				say("STOPPED %d: memfd_create at %ld MiB of "
				    "its own: %s",
				    id, held >> 20, ename(errno));
				return 1;
			}
			in_fd = 0;
		}
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			say("STOPPED %d: write at %ld MiB of its own: %s", id,
			    held >> 20, ename(errno));
			return 1;
		}
		held += sizeof(buf);
		in_fd += sizeof(buf);
		atomic_store(&slot[id], held);
	}
	return 0;
}

int
main(int argc, char *argv[])
{
	int memfd = argc > 1 && strcmp(argv[1], "memfd") == 0;
	long now, peak = 0, shown = 0;
	pid_t pids[NPROC], p;
	int i, st, alive[NPROC], left = 0, busy;

	slot = mmap(NULL, NPROC * sizeof(*slot), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fin = mmap(NULL, NPROC * sizeof(*fin), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (slot == MAP_FAILED || fin == MAP_FAILED) {
		say("INFO mmap: %s", ename(errno));
		return 2;
	}
	say("INFO %s: %d processes of %ld MiB", memfd ? "memfd" : "heap", NPROC,
	    PER_PROC >> 20);
	for (i = 0; i < NPROC; i++) {
		alive[i] = 0;
		if ((pids[i] = fork()) == 0) {
			(void)(memfd ? take_memfd(i) : take_heap(i));
			atomic_store(&fin[i], 1);
			for (;;)
				pause(); /* hold what it got */
		}
		if (pids[i] == -1)
			say("INFO fork: %s", ename(errno));
		else
			alive[i] = 1, left++;
	}
	for (;;) {
		/* reap first: a dead process holds nothing */
		while ((p = waitpid(-1, &st, WNOHANG)) > 0)
			for (i = 0; i < NPROC; i++)
				if (pids[i] == p && alive[i]) {
					alive[i] = 0;
					left--;
					if (WIFSIGNALED(st))
						say("INFO process %d killed by "
						    "signal %d",
						    i, WTERMSIG(st));
				}
		for (now = 0, busy = 0, i = 0; i < NPROC; i++)
			if (alive[i]) {
				now += atomic_load(&slot[i]);
				busy += !atomic_load(&fin[i]);
			}
		if (now > peak)
			peak = now;
		if ((peak >> 26) != (shown >> 26)) { /* every 64 MiB */
			say("HELD %ld MiB", peak >> 20);
			shown = peak;
		}
		if (now >= NPROC * PER_PROC) {
			say("PEAK %ld MiB", peak >> 20);
			say("ESCAPED held and touched %ld MiB at once",
			    now >> 20);
			return 0;
		}
		if (busy == 0) {
			say("PEAK %ld MiB", peak >> 20);
			say("STOPPED %d processes hold %ld MiB and can take no "
			    "more, %d were killed",
			    left, now >> 20, NPROC - left);
			return 1;
		}
		usleep(5000);
	}
}
