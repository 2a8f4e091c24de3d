/*
 * master_service.c: what a service manager sees of the master. The
 * pidfile (config key pidfile) is locked for as long as the master runs,
 * so a second master on it refuses to start; systemd's notification
 * protocol (sd_notify(3): one datagram of "KEY=value" lines to
 * $NOTIFY_SOCKET) says when the daemon is ready, reloading or stopping.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "master.h"

static int service_pid_fd = -1;
static char *service_pid_path;
static pid_t service_pid_owner; /* the process that wrote it */
static struct sockaddr_un service_addr;
static socklen_t service_addr_len; /* 0: no service manager listens */

/* The pid a running master wrote into the locked file fd, or 0. */
static long
service_pidfile_owner(int fd)
{
	char buf[32];
	ssize_t n;
	long pid;

	if ((n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = '\0';
	pid = strtol(buf, NULL, 10);
	return pid > 0 ? pid : 0;
}

/*
 * Take the pidfile: create it (or reuse one a dead master left), lock
 * it, and make sure the locked file is still the one at path (a master
 * that stopped meanwhile unlinks it). Another master holding it is an
 * error that names its pid. The lock survives daemon(): it belongs to
 * the open file, which the daemonized child keeps.
 */
int
service_pidfile_lock(const char *path, struct error *e)
{
	struct stat fst, pst;
	char *tmp;
	long pid;
	int fd, tries;

	tmp = xstrdup(path);
	if (mkdir_p(dirname(tmp), 0755) == -1) {
		free(tmp);
		return error_set(e, ERR_INTERNAL, "pidfile directory of %s: %s",
		    path, strerror(errno));
	}
	free(tmp);
	for (tries = 0; tries < 10; tries++) {
		if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
		         0644)) == -1)
			return error_set(e, ERR_INTERNAL, "pidfile %s: %s",
			    path, strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB) == -1) {
			int saved = errno;

			pid = saved == EWOULDBLOCK ? service_pidfile_owner(fd)
			                           : -1;
			(void)close(fd);
			if (pid == -1)
				return error_set(e, ERR_INTERNAL,
				    "pidfile %s: lock: %s", path,
				    strerror(saved));
			return error_set(e, ERR_INTERNAL,
			    "pidfile %s is locked: skillbrokerd already runs "
			    "(pid %ld); stop it first",
			    path, pid);
		}
		if (fstat(fd, &fst) == -1) {
			(void)close(fd);
			return error_set(e, ERR_INTERNAL, "pidfile %s: %s",
			    path, strerror(errno));
		}
		if (!S_ISREG(fst.st_mode)) {
			(void)close(fd);
			return error_set(e, ERR_INTERNAL,
			    "pidfile %s: not a regular file", path);
		}
		if (stat(path, &pst) == 0 && pst.st_dev == fst.st_dev &&
		    pst.st_ino == fst.st_ino) {
			/* no dead master's pid while ours is not written */
			if (ftruncate(fd, 0) == -1) {
				int saved = errno;

				(void)close(fd);
				return error_set(e, ERR_INTERNAL,
				    "pidfile %s: truncate: %s", path,
				    strerror(saved));
			}
			service_pid_fd = fd;
			free(service_pid_path);
			service_pid_path = xstrdup(path);
			service_pid_owner = getpid();
			if (atexit(service_pidfile_remove) != 0)
				fatalx("atexit");
			return 0;
		}
		(void)close(fd); /* unlinked under us: take the new one */
	}
	return error_set(e, ERR_INTERNAL, "pidfile %s: keeps changing", path);
}

/*
 * Write our pid (after daemon(), which changes it, and once our signal
 * handlers are in: a signal sent by the pidfile must not kill us) into
 * the pidfile; it goes at our exit, a fatal one too.
 */
void
service_pidfile_write(void)
{
	char buf[32];
	int n;

	if (service_pid_fd == -1)
		return;
	service_pid_owner = getpid();
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)service_pid_owner);
	if (ftruncate(service_pid_fd, 0) == -1)
		fatal("pidfile %s: truncate", service_pid_path);
	if (pwrite(service_pid_fd, buf, (size_t)n, 0) != n)
		fatal("pidfile %s: write", service_pid_path);
}

/*
 * At exit: remove the pidfile while we still hold its lock (only the
 * master: a forked child that exits before its exec leaves it).
 */
void
service_pidfile_remove(void)
{
	if (service_pid_fd == -1 || getpid() != service_pid_owner)
		return;
	if (unlink(service_pid_path) == -1 && errno != ENOENT)
		log_warn("unlink %s", service_pid_path);
	if (close(service_pid_fd) == -1)
		log_warn("close %s", service_pid_path);
	service_pid_fd = -1;
}

/*
 * Read $NOTIFY_SOCKET once and take it out of the environment, which the
 * roles and workers would otherwise inherit. A path, or an abstract
 * socket written with a leading '@'; anything else is ignored.
 */
void
service_notify_init(void)
{
	const char *s = getenv("NOTIFY_SOCKET");
	size_t len;

	if (s == NULL)
		return;
	len = strlen(s);
	if ((s[0] != '/' && s[0] != '@') || len < 2 ||
	    len >= sizeof(service_addr.sun_path)) {
		log_warnx(
		    "NOTIFY_SOCKET \"%s\": not a socket path; ignored", s);
		(void)unsetenv("NOTIFY_SOCKET");
		return;
	}
	memset(&service_addr, 0, sizeof(service_addr));
	service_addr.sun_family = AF_UNIX;
	memcpy(service_addr.sun_path, s, len);
	if (s[0] == '@')
		service_addr.sun_path[0] = '\0';
	service_addr_len =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
	if (s[0] == '/')
		service_addr_len++; /* a path's terminating NUL */
	if (unsetenv("NOTIFY_SOCKET") == -1)
		fatal("unsetenv NOTIFY_SOCKET");
}

/*
 * Tell the service manager state ("READY=1", "RELOADING=1", ...), with
 * a STATUS= line when status is not NULL. Nothing without one; a send
 * that fails is only logged.
 */
void
service_notify(const char *state, const char *status)
{
	char msg[512];
	int fd, n;

	if (service_addr_len == 0)
		return;
	n = -1;
	if (status != NULL)
		n = snprintf(msg, sizeof(msg), "%s\nSTATUS=%s", state, status);
	if (n < 0 || (size_t)n >= sizeof(msg)) /* the state alone, then */
		n = snprintf(msg, sizeof(msg), "%s", state);
	if (n < 0 || (size_t)n >= sizeof(msg))
		fatalx("notify: %s: too long", state);
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("notify: socket");
		return;
	}
	if (sendto(fd, msg, (size_t)n, MSG_NOSIGNAL,
	        (struct sockaddr *)&service_addr, service_addr_len) != n)
		log_warn("notify: send %s", state);
	if (close(fd) == -1)
		log_warn("notify: close");
}

/* RELOADING=1 with the time systemd asks for (MONOTONIC_USEC). */
void
service_notify_reloading(void)
{
	struct timespec ts;
	char msg[64];

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == -1) {
		service_notify("RELOADING=1", NULL);
		return;
	}
	(void)snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
	    (unsigned long long)ts.tv_sec * 1000000ULL +
	        (unsigned long long)ts.tv_nsec / 1000);
	service_notify(msg, "reloading the policy");
}
