/*
 * skillbroker-netproxy: the egress proxy. As root it reads only its
 * settings, the resolver's configuration and the hosts file; then it
 * chroots into an empty directory and drops to its own user. It serves
 * the calls the master names (NET_OPEN, NET_CLOSE) on listeners that
 * live in each call's network namespace, and records every connection
 * with auditd.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/privdrop.h"
#include "../lib/usage.h"
#include "../lib/util.h"
#include "../proto/fds.h"
#include "netproxy.h"

static int on_peer_channel(struct peer *p, const struct mp_doc *d);

static const struct peer_handler master_table[] = {
    {MSG_NET_OPEN, 0, call_on_open},
    {MSG_NET_CLOSE, 0, call_on_close},
    {MSG_PEER_CHANNEL, 0, on_peer_channel},
    {0, 0, NULL},
};
static const struct peer_handler auditd_table[] = {
    {MSG_AUDIT_ACK, 0, npaudit_on_ack},
    {0, 0, NULL},
};

static struct netproxy np;
struct netproxy *NP = &np;

static void
on_dead(struct peer *p, const char *why)
{
	if (p == &np.master) {
		call_close_all();
		fatalx("master channel: %s", why);
	}
	log_warnx("auditd channel: %s: no connection until it is back", why);
}

/* A restarted auditd: its new channel; what waited goes first. */
static int
on_peer_channel(struct peer *p, const struct mp_doc *d)
{
	static const char *const roles[] = {"auditd", NULL};
	int fd, which;

	if ((fd = peer_take_channel(p, d, roles, &which)) == -1)
		return -1;
	peer_kill(&np.auditd, "replaced by a restarted process");
	peer_init(
	    &np.auditd, np.base, fd, "auditd", auditd_table, on_dead, NULL);
	npaudit_flush();
	log_info("auditd is back");
	return 0;
}

/* SIGTERM: every connection ends and is recorded; then exit. */
static void
on_sigterm(evutil_socket_t sig UNUSED, short ev UNUSED, void *arg UNUSED)
{
	call_close_all();
	peer_drain(&np.auditd);
	exit(0);
}

/*
 * Enough fds for every connection's two sockets and every call's
 * listener (one per worker at most), set as root since it may exceed
 * the hard limit we inherited.
 */
static void
fds_setup(void)
{
	rlim_t want = 2 * np.conf.set.max_total_connections + 1024 + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit");
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want;
	if (rl.rlim_max < want)
		rl.rlim_max = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("setrlimit NOFILE %llu", (unsigned long long)want);
}

/*
 * The resolver, as root: the nameservers of /etc/resolv.conf (no search
 * list: a name means itself), and the hosts file (hosts_file, else
 * /etc/hosts), both read once.
 */
static void
dns_setup(void)
{
	const char *hosts =
	    np.conf.set.hosts_file ? np.conf.set.hosts_file : "/etc/hosts";
	int r;

	if ((np.dns = evdns_base_new(np.base, 0)) == NULL)
		fatalx("evdns_base_new");
	if ((r = evdns_base_resolv_conf_parse(np.dns,
	         DNS_OPTION_NAMESERVERS | DNS_OPTION_MISC,
	         "/etc/resolv.conf")) != 0)
		log_info("/etc/resolv.conf: not read whole (%d)", r);
	if (evdns_base_set_option(np.dns, "randomize-case:", "0") == -1)
		fatalx("evdns option");
	if (evdns_base_load_hosts(np.dns, hosts) != 0) {
		if (np.conf.set.hosts_file != NULL)
			fatalx("netproxy.hosts_file %s: cannot be read", hosts);
		log_info("%s: cannot be read", hosts);
	}
}

int
main(int argc, char *argv[])
{
	struct privdrop pd;
	struct mp_doc d;
	struct error e;
	int ch, fg = 0, verbose = 0;

	usage_helper(argc, argv, "skillbroker-netproxy", "[-dv]", FD_MASTER);
	while ((ch = getopt(argc, argv, "dv")) != -1)
		if (ch == 'd')
			fg = 1;
		else if (ch == 'v')
			verbose = 1;
		else {
			fputs("usage: skillbroker-netproxy [-dv]\n", stderr);
			exit(2);
		}
	log_init("skillbroker-netproxy", fg, verbose);
	if (msg_read(FD_MASTER, MSG_CONF_NETPROXY, &d, &e) == -1 ||
	    conf_netproxy_dec(&d, &np.conf, &e) == -1)
		fatalx("settings: %s", e.msg);
	mp_doc_free(&d);
	TAILQ_INIT(&np.calls);
	if ((np.base = event_base_new()) == NULL)
		fatalx("event_base_new");
	dns_setup();
	fds_setup();
	pd = (struct privdrop){
	    (uid_t)np.conf.uid, (gid_t)np.conf.gid, np.conf.root};
	if (privdrop(&pd, &e) == -1)
		fatalx("%s", e.msg);
	signal(SIGPIPE, SIG_IGN);
	peer_init(&np.master, np.base, FD_MASTER, "master", master_table,
	    on_dead, NULL);
	peer_init(&np.auditd, np.base, FD_NETPROXY_AUDITD, "auditd",
	    auditd_table, on_dead, NULL);
	if (evsignal_add(
	        evsignal_new(np.base, SIGTERM, on_sigterm, NULL), NULL) == -1)
		fatalx("signal setup");
	PEER_SEND(&np.master, msg_ready_enc, "netproxy");
	event_base_dispatch(np.base);
	return 0;
}
