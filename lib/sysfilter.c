/*
 * sysfilter.c: the worker's syscall filter, compiled to a BPF program
 * once by the master and installed by each worker (worker_seccomp.c).
 * Default allow, with EPERM for what lets a process leave or inspect
 * its sandbox (mounts, namespaces, ptrace, modules, bpf, keyrings,
 * io_uring, ...), for socket families beyond AF_UNIX (and AF_INET/6
 * only with network), and for terminal injection; any other
 * architecture's syscall (i386, x32 on x86_64) kills the process.
 */
#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sysfilter.h"
#include "util.h"
#include "xmalloc.h"

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
sysfilter_deny(
    scmp_filter_ctx ctx, int nr, unsigned n, const struct scmp_arg_cmp *a)
{
	return seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO(EPERM), nr, n, a);
}

/* clone with any namespace flag; clone3 cannot be inspected: ENOSYS. */
static int
sysfilter_deny_clone_ns(scmp_filter_ctx ctx)
{
	static const unsigned long ns[] = {CLONE_NEWNS, CLONE_NEWUTS,
	    CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
	    CLONE_NEWCGROUP, CLONE_NEWTIME};
	struct scmp_arg_cmp a;
	size_t i;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		a = SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]);
		if (sysfilter_deny(ctx, SCMP_SYS(clone), 1, &a) < 0)
			return -1;
	}
	return seccomp_rule_add(
	           ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) < 0
	           ? -1
	           : 0;
}

/* socket/socketpair: only AF_UNIX, plus AF_INET/6 when network is granted. */
static int
sysfilter_deny_families(scmp_filter_ctx ctx, int net)
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
			if (sysfilter_deny(ctx, nr, 1, &a) < 0)
				return -1;
		}
		a = SCMP_A0(SCMP_CMP_GE, AF_MAX);
		if (sysfilter_deny(ctx, nr, 1, &a) < 0)
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
sysfilter_deny_misc(scmp_filter_ctx ctx)
{
	struct scmp_arg_cmp a[1];

	a[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCSTI);
	if (sysfilter_deny(ctx, SCMP_SYS(ioctl), 1, a) < 0)
		return -1;
	a[0] = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL, TIOCLINUX);
	if (sysfilter_deny(ctx, SCMP_SYS(ioctl), 1, a) < 0)
		return -1;
	a[0] = SCMP_A0(SCMP_CMP_NE, 0);
	return sysfilter_deny(ctx, SCMP_SYS(personality), 1, a) < 0 ? -1 : 0;
}

/* The rules, in a context of libseccomp's; NULL if one failed. */
static scmp_filter_ctx
sysfilter_rules(int net)
{
	scmp_filter_ctx ctx;
	size_t i;
	int nr;

	if ((ctx = seccomp_init(SCMP_ACT_ALLOW)) == NULL)
		return NULL;
	if (seccomp_attr_set(
	        ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0)
		goto bad;
	for (i = 0; denied[i] != NULL; i++)
		if ((nr = seccomp_syscall_resolve_name(denied[i])) !=
		        __NR_SCMP_ERROR &&
		    sysfilter_deny(ctx, nr, 0, NULL) < 0)
			goto bad;
	if (sysfilter_deny_clone_ns(ctx) == -1 ||
	    sysfilter_deny_families(ctx, net) == -1 ||
	    sysfilter_deny_misc(ctx) == -1)
		goto bad;
	return ctx;
bad:
	seccomp_release(ctx);
	return NULL;
}

int
sysfilter_compile(int net, uint8_t **prog, size_t *len, struct error *e)
{
	scmp_filter_ctx ctx;
	struct stat st;
	int fd = -1, r = -1;

	*prog = NULL;
	*len = 0;
	if ((ctx = sysfilter_rules(net)) == NULL)
		return error_set(e, ERR_INTERNAL, "the syscall filter's rules");
	if ((fd = memfd_create("sysfilter", MFD_CLOEXEC)) == -1 ||
	    seccomp_export_bpf(ctx, fd) < 0 || fstat(fd, &st) == -1 ||
	    st.st_size <= 0 || st.st_size > SYSFILTER_MAX ||
	    st.st_size % SYSFILTER_INSN != 0)
		error_set(
		    e, ERR_INTERNAL, "the syscall filter did not compile");
	else {
		*len = (size_t)st.st_size;
		*prog = xmalloc(*len);
		if (pread(fd, *prog, *len, 0) != (ssize_t)*len) {
			free(*prog);
			*prog = NULL;
			*len = 0;
			error_set(e, ERR_INTERNAL,
			    "read the syscall filter: %s", strerror(errno));
		} else
			r = 0;
	}
	if (fd != -1)
		close(fd);
	seccomp_release(ctx);
	return r;
}
