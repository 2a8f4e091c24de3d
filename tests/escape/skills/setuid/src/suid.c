/*
 * suid: installed setuid and setgid root (mode 6755) in the skill dir by
 * the test. Reports the ids it runs with; with euid or egid 0 it has
 * escaped, and proves it by reading /etc/shadow.
 */
#include "attack.h"
#include <fcntl.h>

int
main(void)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;
	char buf[64];
	ssize_t n;
	int fd;

	getresuid(&r, &e, &s);
	getresgid(&gr, &ge, &gs);
	say("EUID %u RUID %u SUID %u EGID %u RGID %u SGID %u", (unsigned)e,
	    (unsigned)r, (unsigned)s, (unsigned)ge, (unsigned)gr, (unsigned)gs);
	if (e == 0 || s == 0 || ge == 0 || gs == 0) {
		say("ESCAPED setuid binary ran with root ids");
		if ((fd = open("/etc/shadow", O_RDONLY)) != -1 &&
		    (n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			say("ESCAPED read /etc/shadow: %s", buf);
		}
	} else {
		say("BLOCKED setuid: no root ids");
	}
	if (setuid(0) == 0)
		say("ESCAPED setuid(0) worked");
	else
		say("BLOCKED setuid(0): %s", ename(errno));
	return 0;
}
