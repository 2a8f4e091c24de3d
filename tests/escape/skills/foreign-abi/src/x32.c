/* x32: an x32-ABI getpid. The filter must kill the process (SIGSYS). */
#include "attack.h"
#include <asm/unistd.h>
#include <sys/syscall.h>

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

int
main(void)
{
	long r;
	int e;

	say("BEFORE x32 getpid, pid %d", (int)getpid());
	r = syscall(__X32_SYSCALL_BIT | __NR_getpid);
	e = errno;
	say("RETURNED x32 getpid: %ld (%s)", r, r < 0 ? ename(e) : "a pid");
	if (r == getpid())
		say("ESCAPED x32 getpid returned the pid");
	return 0;
}
