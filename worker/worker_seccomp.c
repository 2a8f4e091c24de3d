/*
 * worker_seccomp.c: the syscall filter, last before exec. Default allow,
 * with EPERM for what lets a process leave or inspect its sandbox
 * (mounts, namespaces, ptrace, modules, bpf, keyrings, io_uring, ...),
 * for socket families beyond AF_UNIX (and AF_INET/6 only with network),
 * and for terminal injection; any other architecture's syscall (i386,
 * x32 on x86_64) kills the process.
 */
#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "worker.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const char *const denied[] = {"mount", "umount", "umount2", "pivot_root",
    "unshare", "setns", "ptrace", "process_vm_readv", "process_vm_writev",
    "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "bpf", "perf_event_open", "keyctl", "add_key",
    "request_key", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "open_by_handle_at", "name_to_handle_at", "reboot",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "fsopen",
    "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    "pidfd_getfd", "iopl", "ioperm", "syslog", "lookup_dcookie", "uselib",
    "vhangup", "nfsservctl", "kcmp", "landlock_create_ruleset",
    /* memory layout and placement: Docker's default profile refuses them */
    "modify_ldt", "memfd_secret", "move_pages", "migrate_pages",
    "set_mempolicy", "set_mempolicy_home_node", "mbind", NULL};

static int
deny(scmp_filter_ctx ctx, int nr, unsigned n, const struct scmp_arg_cmp *a)
{
	return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, n, a);
}

/* clone with any namespace flag; clone3 cannot be inspected: ENOSYS. */
static int
deny_clone_ns(scmp_filter_ctx ctx)
{
	static const unsigned long ns[] = {CLONE_NEWNS, CLONE_NEWUTS,
	    CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
	    CLONE_NEWCGROUP, CLONE_NEWTIME};
	struct scmp_arg_cmp a;
	size_t i;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		a = SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]);
		if (deny(ctx, SCMP_SYS(clone), 1, &a) < 0)
			return -1;
	}
	return seccomp_rule_add(
	           ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0
	           ? -1
	           : 0;
}

/* socket/socketpair: only AF_UNIX, plus AF_INET/6 when network is granted. */
static int
deny_families(scmp_filter_ctx ctx, int net)
{
	static const char *const calls[] = {"socket", "socketpair"};
	struct scmp_arg_cmp a;
	int c, f, nr;

	for (c = 0; c < 2; c++) {
		nr = seccomp_syscall_resolve_name(calls[c]);
		for (f = 0; f < AF_MAX; f++) {
			if (f == AF_UNIX ||
			    (net && (f == AF_INET || f == AF_INET6)))
				continue;
			a = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)f);
			if (deny(ctx, nr, 1, &a) < 0)
				return -1;
		}
		a = SCMP_A0(SCMP_CMP_GE, AF_MAX);
		if (deny(ctx, nr, 1, &a) < 0)
			return -1;
	}
	return 0;
}

/*
 * Terminal injection, and personality: anything but PER_LINUX (0) is
 * refused (libseccomp cannot compare one argument twice, so the query
 * value 0xffffffff is refused too).
 */
static int
deny_misc(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp a[1];

	a[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCSTI);
	if (deny(ctx, SCMP_SYS(ioctl), 1, a) < 0)
		return -1;
	a[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCLINUX);
	if (deny(ctx, SCMP_SYS(ioctl), 1, a) < 0)
		return -1;
	a[0] = SCMP_A0(SCMP_CMP_NE, 0);
	return deny(ctx, SCMP_SYS(personality), 1, a) < 0 ? -1 : 0;
}

int
sandbox_seccomp(const struct grant *g, struct error *e)
{
	scmp_filter_ctx ctx;
	int nr, r = -1;
	size_t i;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return error_set(e, ERR_SANDBOX_FAILED, "seccomp_init failed");
	if (seccomp_attr_set(
	        ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0)
		goto out;
	for (i = 0; denied[i] != NULL; i++)
		if ((nr = seccomp_syscall_resolve_name(denied[i])) !=
		        __NR_SCMP_ERROR &&
		    deny(ctx, nr, 0, NULL) < 0)
			goto out;
	if (deny_clone_ns(ctx) == -1 ||
	    deny_families(ctx, g->net != NET_NONE) == -1 ||
	    deny_misc(ctx) == -1)
		goto out;
	r = seccomp_load(ctx) < 0 ? -1 : 0;
out:
	seccomp_release(ctx);
	return r == 0 ? 0
	              : error_set(e, ERR_SANDBOX_FAILED,
	                    "seccomp filter could not be built or loaded");
}
