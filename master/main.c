/*
 * skillbrokerd: the privileged master. It reads the config, opens the
 * socket, starts the roles, then supervises them and runs a worker for
 * each grant policyd sends. It reads nothing a client or a skill wrote.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/usage.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "master.h"

struct master *M;

static const char master_usage[] = "usage: skillbrokerd [-dnv] -f CONFIG\n";
static const char master_help[] =
    "\n"
    "The skillbroker daemon's master: it reads CONFIG, opens the socket\n"
    "clients connect to, starts the broker, policyd, auditd and netproxy\n"
    "roles, and runs a sandboxed worker for each skill call. It starts as\n"
    "root and detaches, logging to syslog.\n"
    "\n"
    "  -f CONFIG      the configuration file, skillbroker.yaml(5)\n"
    "  -d             stay in the foreground, every process logging to\n"
    "                 stderr\n"
    "  -n             check CONFIG and the users it names, say so, exit\n"
    "                 (0: valid; 1: not, and why); needs no root\n"
    "  -v             debug logs, in the master, each role and each worker\n"
    "  -h, --help     this help\n"
    "  -V, --version  the version\n"
    "\n"
    "Exit status: 0 after a clean stop (SIGTERM, SIGINT), 1 on an error,\n"
    "2 on a usage error. skillbrokerd(8) says more.\n";

/* Reap exited children (flags 0: all of them): workers, then roles. */
static void
reap(int flags)
{
	struct rusage ru;
	pid_t pid;
	int status;

	while ((pid = wait4(-1, &status, flags, &ru)) > 0)
		(void)(worker_reap(pid, status, &ru) ||
		       proc_child_exited(pid, status));
}

static void
on_sigchld(evutil_socket_t sig UNUSED, short ev UNUSED, void *arg UNUSED)
{
	int i, left = 0;

	reap(WNOHANG);
	for (i = 0; i < ROLE__COUNT; i++)
		left += M->roles[i].pid > 0;
	if (M->shutting_down && left == 0)
		event_base_loopexit(M->base, NULL);
}

/* SIGTERM, SIGINT: stop the roles; SIGKILL what is left after 5 s. */
static void
on_sigterm(evutil_socket_t sig, short ev UNUSED, void *arg UNUSED)
{
	struct timeval tv = {5, 0};
	char why[32];

	log_info("signal %d: shutting down", (int)sig);
	service_notify("STOPPING=1", "stopping");
	snprintf(why, sizeof(why), "signal %d", (int)sig);
	if (!M->shutting_down)
		MAUDIT(msg_audit_daemon, "daemon.stopping", getpid(),
		    M->cfg.path, why);
	proc_stop_all();
	event_base_loopexit(M->base, &tv);
}

/*
 * SIGHUP: policyd reloads the policy. Only that: the audit log is
 * reopened on SIGUSR1, so a reload never stands for a reopen.
 */
static void
on_sighup(evutil_socket_t sig UNUSED, short ev UNUSED, void *arg UNUSED)
{
	/* READY=1 again when policyd reports the reload (master_proc.c). */
	service_notify_reloading();
	if (M->roles[ROLE_POLICYD].pid <= 0)
		service_notify("READY=1", "policyd is down: nothing reloaded");
	else if (kill(M->roles[ROLE_POLICYD].pid, SIGHUP) == -1) {
		log_warn("passing SIGHUP to policyd");
		service_notify("READY=1", "policyd not signalled: nothing "
		                          "reloaded");
	} else
		M->reloading =
		    1; /* a policyd that dies meanwhile: its restart */
}

/* SIGUSR1 (logrotate's postrotate): auditd reopens the audit log. */
static void
on_sigusr1(evutil_socket_t sig UNUSED, short ev UNUSED, void *arg UNUSED)
{
	if (M->roles[ROLE_AUDITD].pid > 0 &&
	    kill(M->roles[ROLE_AUDITD].pid, SIGUSR1) == -1)
		log_warn("passing SIGUSR1 to auditd");
}

/* After the loop: SIGKILL the rest, reap all (workers' cgroups go). */
static void
final_cleanup(void)
{
	int i;

	M->shutting_down = 1;
	worker_role_lost(ROLE_BROKER);
	for (i = 0; i < ROLE__COUNT; i++)
		if (M->roles[i].pid > 0)
			(void)kill(M->roles[i].pid, SIGKILL);
	reap(0);
	if (unlink(M->cfg.socket) == -1 && errno != ENOENT)
		log_warn("unlink %s", M->cfg.socket);
	service_pidfile_remove();
}

/* The config, its users, its directories (or -n: just say it is fine). */
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
	if (geteuid() != 0)
		fatalx("must start as root (it drops privileges for every "
		       "other process)");
	if (config_make_dirs(&M->cfg, &e) == -1)
		fatalx("%s", e.msg);
	if (M->cfg.pidfile != NULL &&
	    service_pidfile_lock(M->cfg.pidfile, &e) == -1)
		fatalx("%s", e.msg);
}

int
main(int argc, char *argv[])
{
	static const struct {
		int sig;
		event_callback_fn cb;
	} sigs[] = {{SIGCHLD, on_sigchld}, {SIGTERM, on_sigterm},
	    {SIGINT, on_sigterm}, {SIGHUP, on_sighup}, {SIGUSR1, on_sigusr1}};
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *conf = NULL;
	int ch, check_only = 0, bad = 0, i;
	struct event *ev;
	struct error e;

	M = xcalloc(1, sizeof(*M));
	while ((ch = getopt_long(argc, argv, "df:nvhV", longopts, NULL)) != -1)
		if (ch == 'd')
			M->foreground = 1;
		else if (ch == 'f')
			conf = optarg;
		else if (ch == 'n')
			check_only = 1;
		else if (ch == 'v')
			M->verbose = 1;
		else if (ch == 'h') {
			fputs(master_usage, stdout);
			fputs(master_help, stdout);
			return 0;
		} else if (ch == 'V') {
			usage_version("skillbrokerd");
			return 0;
		} else
			bad = 1; /* getopt said why */
	if (!bad && optind != argc)
		fprintf(stderr, "skillbrokerd: no operands are taken: \"%s\"\n",
		    argv[optind]);
	else if (!bad && conf == NULL)
		fprintf(stderr, "skillbrokerd: -f CONFIG is required\n");
	if (bad || conf == NULL || optind != argc) {
		fputs(master_usage, stderr);
		fputs("(skillbrokerd -h for the options)\n", stderr);
		return 2;
	}
	log_init("skillbrokerd", M->foreground || check_only, M->verbose);
	service_notify_init();
	load_config(conf, check_only);
	/* Helpers live beside this binary in a build tree, else LIBEXECDIR. */
	M->helper_dir = os_exe_dir_with("skillbroker-broker", LIBEXECDIR);
	if ((M->listen_fd = os_unix_listen(M->cfg.socket, &e)) == -1)
		fatalx("%s", e.msg);
	if (!M->foreground && daemon(0, 0) == -1)
		fatal("daemon");
	signal(SIGPIPE, SIG_IGN);
	if ((M->base = event_base_new()) == NULL)
		fatalx("event_base_new");
	for (i = 0; i < (int)(sizeof(sigs) / sizeof(sigs[0])); i++)
		if ((ev = evsignal_new(
		         M->base, sigs[i].sig, sigs[i].cb, NULL)) == NULL ||
		    event_add(ev, NULL) == -1)
			fatalx("signal %d setup", sigs[i].sig);
	service_pidfile_write();
	cgroup_init("skillbroker", config_total_memory_mb(&M->cfg));
	log_info("at most %llu sessions keep a work dir of %llu MiB",
	    (unsigned long long)M->cfg.max_sessions,
	    (unsigned long long)M->cfg.work_mb);
	if (M->cfg.worker_network == NET_HOST)
		log_warnx("worker.network: host: a call with a network grant "
		          "gets the host's network unfiltered (unsafe: "
		          "docs/network.md)");
	worker_init();
	proc_start_all();
	event_base_dispatch(M->base);
	final_cleanup();
	log_info("stopped%s", M->exit_status ? " after a failure" : "");
	return M->exit_status;
}
