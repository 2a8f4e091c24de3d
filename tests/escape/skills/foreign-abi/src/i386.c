/* i386: getpid through int $0x80. The filter must kill the process (SIGSYS). */
#include "attack.h"

int
main(void)
{
	long r;

	say("BEFORE i386 getpid, pid %d", (int)getpid());
	__asm__ volatile("int $0x80"
	                 : "=a"(r)
	                 : "a"(20L) /* __NR_getpid of i386 */
	                 : "memory", "r8", "r9", "r10", "r11");
	say("RETURNED i386 getpid: %ld", r);
	if (r == getpid())
		say("ESCAPED i386 getpid returned the pid");
	return 0;
}
