/*
 * burner: two children spin and a third holds 48 MiB until the timeout
 * kills the call; none is ever waited for. Every 100 ms it says how much
 * CPU the spinners have used so far (SPUN ms, from /proc): what the reply
 * says the call used must be at least that.
 */
#include "attack.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

/* utime + stime of pid, in ms; 0 when unreadable. */
static long
cpu_ms(pid_t pid)
{
	unsigned long ut = 0, st = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL ||
	    (p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
	        &ut, &st) != 2)
		ut = st = 0;
	fclose(f);
	return (long)((ut + st) * 1000 / (unsigned long)sysconf(_SC_CLK_TCK));
}

int
main(void)
{
	size_t n = 48u << 20, i;
	volatile unsigned long spin = 0;
	pid_t spinners[2];
	char *p;
	int k;

	for (k = 0; k < 3; k++) {
		pid_t c = fork();

		if (c == -1) {
			say("UNEXPECTED fork: %s", ename(errno));
			return 1;
		}
		if (c > 0) {
			if (k < 2)
				spinners[k] = c;
			continue;
		}
		if (k < 2)
			for (;;)
				spin++;
		if ((p = malloc(n)) == NULL)
			_exit(1);
		for (i = 0; i < n; i += 4096)
			p[i] = 1;
		say("HELD 48");
		pause();
		_exit(0);
	}
	say("DONE");
	for (;;) {
		usleep(100000);
		say("SPUN %ld", cpu_ms(spinners[0]) + cpu_ms(spinners[1]));
	}
}
