/*
 * image.c: a persistent directory with a size and a file count of its
 * own: an ext4 filesystem in an image file, its space reserved on disk
 * when it is made, mounted through a loop device as a detached mount
 * that an fd holds. What is written inside can never fill the
 * filesystem that holds the image (nor the audit log beside it), and no
 * host path shows it. Needs loop devices and mke2fs (e2fsprogs).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/loop.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image.h"
#include "log.h"
#include "os.h"
#include "util.h"
#include "xmalloc.h"

#define LOOP_TRIES 16

static const char *const mke2fs_paths[] = {
    "/usr/sbin/mke2fs", "/sbin/mke2fs", NULL};

/* Make an ext4 filesystem on the open image fd (mke2fs, waited for). */
static int
image_mkfs(int fd, uint64_t size_mb, struct error *e)
{
	char inodes[32], dev[32], why[64];
	char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	const char *mke2fs = NULL;
	int i, status;
	pid_t pid;

	for (i = 0; mke2fs_paths[i] != NULL && mke2fs == NULL; i++)
		if (access(mke2fs_paths[i], X_OK) == 0)
			mke2fs = mke2fs_paths[i];
	if (mke2fs == NULL)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "no mke2fs (e2fsprogs) to make a data dir");
	snprintf(inodes, sizeof(inodes), "%llu",
	    (unsigned long long)IMAGE_INODES(size_mb));
	snprintf(dev, sizeof(dev), "/proc/self/fd/%d", fd);
	if ((pid = fork()) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "fork: %s", strerror(errno));
	if (pid == 0) {
		char *argv[] = {(char *)mke2fs, "-q", "-F", "-t", "ext4", "-b",
		    "4096", "-N", inodes, "-m", "0", "-E",
		    "lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0",
		    "-L", "sb-data", dev, NULL};
		int null = open("/dev/null", O_RDWR);

		if (null == -1 || set_cloexec(fd, 0) == -1 ||
		    dup2(null, 0) == -1 || dup2(null, 1) == -1 ||
		    dup2(null, 2) == -1)
			_exit(127);
		execve(mke2fs, argv, envp);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return error_set(e, ERR_SANDBOX_FAILED, "waitpid: %s",
			    strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return error_set(e, ERR_SANDBOX_FAILED, "mke2fs failed: %s",
		    wait_status_text(status, why, sizeof(why)));
	return 0;
}

/*
 * Make the image NAME in dirfd: its whole size reserved (no later write
 * inside can find the disk full), then its filesystem, under a
 * temporary name so that a crash never leaves a half-made image.
 */
static int
image_create(int dirfd, const char *name, uint64_t size_mb, struct error *e)
{
	char tmp[NAME_MAX + 1];
	int fd, r;

	if (fmt_path(tmp, sizeof(tmp), "%s.new", name) == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "image name too long");
	(void)unlinkat(dirfd, tmp, 0); /* what a crash left */
	fd = openat(dirfd, tmp,
	    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "create %s: %s", tmp,
		    strerror(errno));
	if ((r = posix_fallocate(fd, 0, (off_t)(size_mb << 20))) != 0)
		error_set(e, ERR_SANDBOX_FAILED,
		    "cannot reserve %llu MiB for a data dir: %s",
		    (unsigned long long)size_mb, strerror(r));
	else if (image_mkfs(fd, size_mb, e) == -1)
		; /* e says why */
	else if (fsync(fd) == -1 || renameat(dirfd, tmp, dirfd, name) == -1 ||
	         fsync(dirfd) == -1)
		error_set(e, ERR_SANDBOX_FAILED, "make %s: %s", name,
		    strerror(errno));
	else
		return fd;
	close(fd);
	(void)unlinkat(dirfd, tmp, 0);
	return -1;
}

/* A free loop device bound to fd, read-write, gone with its last user. */
static int
image_loop(int fd, char *dev, size_t len, struct error *e)
{
	struct loop_config lc;
	int ctl, lfd = -1, n, i;

	if ((ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC)) == -1)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "no loop devices (/dev/loop-control: %s): data dirs "
		    "cannot be mounted",
		    strerror(errno));
	memset(&lc, 0, sizeof(lc));
	lc.fd = (uint32_t)fd;
	lc.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	/* Another process may take the free device first: try again. */
	for (i = 0; i < LOOP_TRIES && lfd == -1; i++) {
		if ((n = ioctl(ctl, LOOP_CTL_GET_FREE)) < 0)
			break;
		snprintf(dev, len, "/dev/loop%d", n);
		if ((lfd = open(dev, O_RDWR | O_CLOEXEC)) == -1)
			continue;
		if (ioctl(lfd, LOOP_CONFIGURE, &lc) == -1) {
			close(lfd);
			lfd = -1;
			if (errno != EBUSY)
				break;
		}
	}
	close(ctl);
	if (lfd == -1)
		return error_set(e, ERR_SANDBOX_FAILED, "no loop device: %s",
		    strerror(errno));
	return lfd;
}

int
image_mount(int dirfd, const char *name, uint64_t size_mb, struct error *e)
{
	char dev[32];
	struct stat st;
	int fd, lfd, fs = -1, mnt = -1;

	fd = openat(dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd == -1 && errno == ENOENT)
		fd = image_create(dirfd, name, size_mb, e);
	else if (fd == -1)
		error_set(e, ERR_SANDBOX_FAILED, "open %s: %s", name,
		    strerror(errno));
	if (fd == -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_uid != 0) {
		close(fd);
		return error_set(e, ERR_SANDBOX_FAILED,
		    "%s: not a regular file of root's", name);
	}
	if ((uint64_t)st.st_size != size_mb << 20)
		log_info("%s: %lld MiB (made with another worker.data_mb): "
		         "used as it is",
		    name, (long long)(st.st_size >> 20));
	if ((lfd = image_loop(fd, dev, sizeof(dev), e)) == -1) {
		close(fd);
		return -1;
	}
	close(fd); /* the loop device holds the file */
	if ((fs = fsopen("ext4", FSOPEN_CLOEXEC)) == -1 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "source", dev, 0) == -1 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == -1 ||
	    (mnt = fsmount(fs, FSMOUNT_CLOEXEC,
	         MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) == -1)
		error_set(e, ERR_SANDBOX_FAILED, "mount %s: %s", name,
		    strerror(errno));
	if (fs != -1)
		close(fs);
	close(lfd); /* the device goes when its filesystem is unmounted */
	return mnt;
}

/* The images mounted so far, by name: each is mounted once, held. */
struct held {
	char *name;
	int fd;
};
static struct held *held;
static size_t nheld;

static int held_dir = -1;

int
image_clone(const char *dir, const char *key, uint64_t size_mb, struct error *e)
{
	char name[NAME_MAX + 1];
	size_t i;
	int fd;

	if (held_dir == -1 &&
	    (held_dir = open(
	         dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "open %s: %s", dir, strerror(errno));
	for (i = 0; i < nheld && strcmp(held[i].name, key) != 0; i++)
		;
	if (i == nheld) {
		if (fmt_path(name, sizeof(name), "%s.img", key) == -1)
			return error_set(
			    e, ERR_SANDBOX_FAILED, "image name too long");
		if ((fd = image_mount(held_dir, name, size_mb, e)) == -1)
			return -1;
		held = xreallocarray(held, nheld + 1, sizeof(*held));
		held[nheld++] = (struct held){xstrdup(key), fd};
	}
	return os_tree_clone(held[i].fd, e);
}
