/*
 * seccomp: the rest of the calls the sandbox's seccomp filter denies
 * with EPERM. Each is made so that, unfiltered, it would succeed or
 * fail with another errno as an unprivileged process, so EPERM shows
 * the filter (for the few that need a capability anyway, EPERM is all
 * either way). Only the new mount API may answer ENOSYS.
 */
#include "attack.h"
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/userfaultfd.h>
#include <stdlib.h>
#include <sys/personality.h>
#include <sys/quota.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

int
main(void)
{
	union bpf_attr ba;
	struct perf_event_attr pa;
	struct file_handle *fh;
	struct iovec l, rv;
	char buf[16], src[16] = "sb";
	long r;
	int mnt;

	memset(&ba, 0, sizeof(ba));
	ba.map_type = BPF_MAP_TYPE_ARRAY;
	ba.key_size = 4;
	ba.value_size = 4;
	ba.max_entries = 1;
	r = syscall(__NR_bpf, BPF_MAP_CREATE, &ba, sizeof(ba));
	if (verdict("bpf BPF_MAP_CREATE", r, errno, EPERM, 0))
		close((int)r);

	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_SOFTWARE;
	pa.size = sizeof(pa);
	pa.config = PERF_COUNT_SW_TASK_CLOCK;
	pa.disabled = 1;
	pa.exclude_kernel = 1;
	pa.exclude_hv = 1;
	r = syscall(__NR_perf_event_open, &pa, 0, -1, -1, 0);
	if (verdict("perf_event_open own task clock", r, errno, EPERM, 0))
		close((int)r);

	r = syscall(
	    __NR_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
	verdict("keyctl KEYCTL_GET_KEYRING_ID", r, errno, EPERM, 0);
	r = syscall(__NR_add_key, "user", "sb-escape", "x", 1,
	    KEY_SPEC_PROCESS_KEYRING);
	verdict("add_key user", r, errno, EPERM, 0);
	r = syscall(__NR_request_key, "user", "sb-escape-none", NULL, 0);
	verdict("request_key user", r, errno, EPERM, 0);

	r = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (verdict("userfaultfd user mode", r, errno, EPERM, 0))
		close((int)r);

	fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ);
	fh->handle_bytes = MAX_HANDLE_SZ;
	r = name_to_handle_at(AT_FDCWD, ".", fh, &mnt, 0);
	verdict("name_to_handle_at .", r, errno, EPERM, 0);
	r = open_by_handle_at(AT_FDCWD, fh, O_RDONLY);
	if (verdict("open_by_handle_at", r, errno, EPERM, 0))
		close((int)r);

	l.iov_base = buf;
	l.iov_len = sizeof(buf);
	rv.iov_base = src;
	rv.iov_len = sizeof(src);
	r = process_vm_readv(getpid(), &l, 1, &rv, 1, 0);
	verdict("process_vm_readv self", r, errno, EPERM, 0);
	r = process_vm_writev(getpid(), &rv, 1, &l, 1, 0);
	verdict("process_vm_writev self", r, errno, EPERM, 0);

	/* unfiltered, personality returns the previous persona (>= 0) */
	r = personality(ADDR_NO_RANDOMIZE);
	verdict("personality ADDR_NO_RANDOMIZE", r, errno, EPERM, 0);
	r = personality(PER_LINUX32);
	verdict("personality PER_LINUX32", r, errno, EPERM, 0);

	r = syscall(__NR_kexec_load, 0, 0, NULL, 0);
	verdict("kexec_load", r, errno, EPERM, 0);
	r = syscall(__NR_kexec_file_load, -1, -1, 0, "", 0);
	verdict("kexec_file_load", r, errno, EPERM, 0);
	r = syscall(__NR_init_module, NULL, 0, "");
	verdict("init_module", r, errno, EPERM, 0);
	r = syscall(__NR_finit_module, 0, "", 0);
	verdict("finit_module", r, errno, EPERM, 0);
	r = syscall(__NR_delete_module, "sb_escape_none", 0);
	verdict("delete_module", r, errno, EPERM, 0);
	r = syscall(__NR_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
	    LINUX_REBOOT_CMD_CAD_OFF, NULL);
	verdict("reboot CAD_OFF", r, errno, EPERM, 0);
	r = syscall(__NR_swapon, "/sb-escape-none", 0);
	verdict("swapon", r, errno, EPERM, 0);
	r = syscall(__NR_swapoff, "/sb-escape-none");
	verdict("swapoff", r, errno, EPERM, 0);
	r = syscall(__NR_acct, NULL);
	verdict("acct", r, errno, EPERM, 0);
	r = syscall(__NR_quotactl, QCMD(Q_SYNC, USRQUOTA), NULL, 0, NULL);
	verdict("quotactl Q_SYNC", r, errno, EPERM, 0);

	/* memory layout and NUMA placement; unfiltered, each succeeds (or,
	 * memfd_secret where the kernel lacks it, says ENOSYS) */
	r = syscall(__NR_modify_ldt, 0, buf, sizeof(buf));
	verdict("modify_ldt read", r, errno, EPERM, 0);
	r = syscall(__NR_memfd_secret, 0);
	if (verdict("memfd_secret", r, errno, EPERM, 0))
		close((int)r);
	r = syscall(__NR_move_pages, 0, 0UL, NULL, NULL, NULL, 0);
	verdict("move_pages self none", r, errno, EPERM, 0);
	r = syscall(__NR_migrate_pages, 0, 0UL, NULL, NULL);
	verdict("migrate_pages self none", r, errno, EPERM, 0);
	r = syscall(__NR_set_mempolicy, 0 /* MPOL_DEFAULT */, NULL, 0UL);
	verdict("set_mempolicy default", r, errno, EPERM, 0);
	r = syscall(__NR_mbind, NULL, 0UL, 0, NULL, 0UL, 0U);
	verdict("mbind empty range", r, errno, EPERM, 0);

	/* the new mount API: EPERM, or ENOSYS */
	r = syscall(__NR_fsopen, "tmpfs", 0);
	if (verdict("fsopen tmpfs", r, errno, EPERM, ENOSYS, 0))
		close((int)r);
	r = syscall(__NR_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */);
	if (verdict("open_tree clone /", r, errno, EPERM, ENOSYS, 0))
		close((int)r);
	r = syscall(__NR_move_mount, -1, "", -1, "/tmp", 0);
	verdict("move_mount", r, errno, EPERM, ENOSYS, 0);
	r = syscall(__NR_mount_setattr, -1, "", 0, NULL, 0);
	verdict("mount_setattr", r, errno, EPERM, ENOSYS, 0);
	say("DONE");
	return 0;
}
