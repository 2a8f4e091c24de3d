/*
 * skillbrokerd: the privileged master. It reads the config, opens the
 * socket, starts broker, policyd and auditd, and afterwards only
 * supervises them and spawns workers for grants received from policyd.
 * It never parses client input.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "master.h"

struct master *M;

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: skillbrokerd [-dnv] -f config\n");
	exit(2);
}

/* Helpers live beside this binary in a build tree, else in LIBEXECDIR. */
static char *
find_helper_dir(void)
{
	char self[PATH_MAX], *dir, *probe;
	ssize_t n;
	int found;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		dir = xstrdup(dirname(self));
		xasprintf(&probe, "%s/skillbroker-broker", dir);
		found = access(probe, X_OK) == 0;
		free(probe);
		if (found)
			return dir;
		free(dir);
	}
	return xstrdup(LIBEXECDIR);
}

/*
 * auditd owns and chroots into the audit log's directory, so it must be
 * the log's alone: missing, already the privsep user's, or empty (we
 * never re-own a shared directory such as /var/log).
 */
static int
audit_dir_dedicated(const char *dir, uid_t owner)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int empty = 1;

	if (lstat(dir, &st) == -1)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (st.st_uid == owner)
		return 1;
	if ((d = opendir(dir)) == NULL)
		return 0;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") != 0 &&
		    strcmp(de->d_name, "..") != 0)
			empty = 0;
	closedir(d);
	return empty;
}

/* Create the directories the roles need, with owners and modes. */
static void
prepare_dirs(void)
{
	static const struct {
		const char *sub;
		mode_t mode;
	} dirs[] = {{"empty", 0755}, {"work", 0711},
	    {"root", 0755 /* the workers' mount point */}, {"data", 0711}};
	struct config *c = &M->cfg;
	char *p, *tmp;
	size_t i;

	if (mkdir_p(c->state_dir, 0755) == -1)
		fatal("mkdir %s", c->state_dir);
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		xasprintf(&p, "%s/%s", c->state_dir, dirs[i].sub);
		if (mkdir_p(p, dirs[i].mode) == -1 || chown(p, 0, 0) == -1 ||
		    chmod(p, dirs[i].mode) == -1)
			fatal("%s", p);
		free(p);
	}
	tmp = xstrdup(c->audit_path);
	p = dirname(tmp);
	if (!audit_dir_dedicated(p, c->uid[USER_AUDITD]))
		fatalx("the directory of audit.path, %s, holds other files: "
		       "give the audit log a directory of its own (auditd owns "
		       "and chroots into it)",
		    p);
	if (mkdir_p(p, 0750) == -1 ||
	    chown(p, c->uid[USER_AUDITD], c->gid[USER_AUDITD]) == -1 ||
	    chmod(p, 0750) == -1)
		fatal("audit dir %s", p);
	free(tmp);
	tmp = xstrdup(c->socket);
	if (mkdir_p(dirname(tmp), 0755) == -1)
		fatal("socket dir for %s", c->socket);
	free(tmp);
}

/* Bind the client socket; refuse if another daemon is serving it. */
static int
open_socket(const char *path)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t old;
	int fd, probe;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		fatalx("socket path too long: %s", path);
	strcpy(sun.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			fatalx("%s exists and is not a socket", path);
		if ((probe = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
			fatal("socket");
		if (connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			fatalx("another daemon is serving %s", path);
		close(probe);
		if (unlink(path) == -1)
			fatal("unlink stale %s", path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		fatal("socket");
	old = umask(0111); /* any local user may connect; policy decides */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
		fatal("bind %s", path);
	umask(old);
	if (listen(fd, 128) == -1)
		fatal("listen");
	return fd;
}

/* Reap every exited child: workers first, then the privsep roles. */
static void
on_sigchld(evutil_socket_t sig, short ev, void *arg)
{
	struct rusage ru;
	pid_t pid;
	int status, i, left = 0;

	(void)sig;
	(void)ev;
	(void)arg;
	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0)
		if (!worker_reap(pid, status, &ru) &&
		    !proc_child_exited(pid, status))
			log_debug("reaped unknown child %d", (int)pid);
	if (!M->shutting_down)
		return;
	for (i = 0; i < ROLE__COUNT; i++)
		left += M->roles[i].pid > 0;
	if (left == 0)
		event_base_loopexit(M->base, NULL);
}

static void
on_sigterm(evutil_socket_t sig, short ev, void *arg)
{
	struct timeval tv = {5, 0};
	char why[32];

	(void)ev;
	(void)arg;
	log_info("signal %d: shutting down", (int)sig);
	snprintf(why, sizeof(why), "signal %d", (int)sig);
	if (!M->shutting_down)
		maudit_daemon("daemon.stopping", why);
	proc_stop_all();
	event_base_loopexit(M->base, &tv);
}

static void
on_sighup(evutil_socket_t sig, short ev, void *arg)
{
	(void)sig;
	(void)ev;
	(void)arg;
	if (M->roles[ROLE_POLICYD].pid > 0)
		kill(M->roles[ROLE_POLICYD].pid, SIGHUP);
	if (M->roles[ROLE_AUDITD].pid > 0)
		kill(M->roles[ROLE_AUDITD].pid, SIGHUP);
}

/* After the loop: escalate to SIGKILL, reap, remove the socket. */
static void
final_cleanup(void)
{
	int i, status;

	worker_kill_all();
	for (i = 0; i < ROLE__COUNT; i++)
		if (M->roles[i].pid > 0) {
			kill(M->roles[i].pid, SIGKILL);
			waitpid(M->roles[i].pid, &status, 0);
		}
	while (waitpid(-1, &status, WNOHANG) > 0)
		;
	if (unlink(M->cfg.socket) == -1 && errno != ENOENT)
		log_warn("unlink %s", M->cfg.socket);
	grant_store_clear();
}

static void
load_config(const char *path, int check_only)
{
	struct error e;

	if (config_load(&M->cfg, path, &e) == -1 ||
	    config_resolve_users(&M->cfg, &e) == -1) {
		fprintf(stderr, "skillbrokerd: %s\n", e.msg);
		exit(1);
	}
	if (check_only) {
		printf("skillbrokerd: configuration %s OK\n", M->cfg.path);
		exit(0);
	}
	for (int i = 0; i < USER__COUNT; i++)
		if (M->cfg.user_fallback[i])
			log_info("user %s does not exist: the %s runs as uid "
			         "%u (make install creates the user)",
			    M->cfg.users[i], config_user_keys[i],
			    (unsigned)M->cfg.uid[i]);
}

static void
add_signal(int sig, event_callback_fn cb)
{
	struct event *ev = evsignal_new(M->base, sig, cb, NULL);

	if (ev == NULL || event_add(ev, NULL) == -1)
		fatalx("signal %d setup", sig);
}

int
main(int argc, char *argv[])
{
	const char *conf = NULL;
	int ch, check_only = 0;

	M = xcalloc(1, sizeof(*M));
	while ((ch = getopt(argc, argv, "df:nv")) != -1) {
		switch (ch) {
		case 'd':
			M->foreground = 1;
			break;
		case 'f':
			conf = optarg;
			break;
		case 'n':
			check_only = 1;
			break;
		case 'v':
			M->verbose = 1;
			break;
		default:
			usage();
		}
	}
	if (conf == NULL || optind != argc)
		usage();
	log_init("skillbrokerd", M->foreground || check_only, M->verbose);
	load_config(conf, check_only);
	if (geteuid() != 0)
		fatalx("must start as root (it drops privileges for every "
		       "other process)");
	M->helper_dir = find_helper_dir();
	prepare_dirs();
	M->listen_fd = open_socket(M->cfg.socket);
	if (!M->foreground && daemon(0, 0) == -1)
		fatal("daemon");
	signal(SIGPIPE, SIG_IGN);
	if ((M->base = event_base_new()) == NULL)
		fatalx("event_base_new");
	add_signal(SIGCHLD, on_sigchld);
	add_signal(SIGTERM, on_sigterm);
	add_signal(SIGINT, on_sigterm);
	add_signal(SIGHUP, on_sighup);
	grant_store_init(0);
	cgroup_init();
	worker_init();
	proc_start_all();
	event_base_dispatch(M->base);
	final_cleanup();
	log_info("stopped%s", M->exit_status ? " after a failure" : "");
	return M->exit_status;
}
