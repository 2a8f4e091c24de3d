/* iouring: the io_uring calls must be refused (EPERM, or ENOSYS). */
#include "attack.h"
#include <linux/io_uring.h>
#include <sys/syscall.h>

int
main(void)
{
	struct io_uring_params p;
	long r;

	memset(&p, 0, sizeof(p));
	r = syscall(__NR_io_uring_setup, 8, &p);
	if (verdict("io_uring_setup", r, errno, EPERM, ENOSYS, 0))
		close((int)r);
	/* with a bad fd: EBADF would mean the call reached the kernel */
	r = syscall(__NR_io_uring_enter, 1000, 1, 0, 0, NULL, 0);
	verdict("io_uring_enter", r, errno, EPERM, ENOSYS, 0);
	r = syscall(__NR_io_uring_register, 1000, 0, NULL, 0);
	verdict("io_uring_register", r, errno, EPERM, ENOSYS, 0);
	say("DONE");
	return 0;
}
