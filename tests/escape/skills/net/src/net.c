/*
 * net PORT ABSTRACT_NAME DAEMON_SOCKET: reach the host from a call that
 * was not granted network. The test runs a listener on the host at
 * 127.0.0.1:PORT (TCP and UDP), [::1]:PORT and @ABSTRACT_NAME, and checks
 * its log; this program reports what it got. Also opens the sockets
 * that need no network at all to do harm (netlink, packet, raw), which
 * the filter must refuse with EPERM.
 */
#include "attack.h"
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

/* Connect with a 2 s bound; on success read the banner. */
static void
try_connect(const char *what, int fam, const struct sockaddr *sa, socklen_t len)
{
	char banner[64] = "";
	struct pollfd p;
	socklen_t el = sizeof(int);
	int s, r, err = 0;
	ssize_t n;

	if ((s = socket(fam, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1) {
		say("BLOCKED %s: socket: %s", what, ename(errno));
		return;
	}
	r = connect(s, sa, len);
	if (r == -1 && errno == EINPROGRESS) {
		p.fd = s;
		p.events = POLLOUT;
		if (poll(&p, 1, 2000) == 1) {
			getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
			r = err == 0 ? 0 : -1;
			errno = err;
		} else {
			r = -1;
			errno = ETIMEDOUT;
		}
	}
	if (r == -1) {
		say("BLOCKED %s: connect: %s", what, ename(errno));
		close(s);
		return;
	}
	p.fd = s;
	p.events = POLLIN;
	if (poll(&p, 1, 1000) == 1 &&
	    (n = read(s, banner, sizeof(banner) - 1)) > 0)
		banner[n] = '\0';
	banner[strcspn(banner, "\n")] = '\0';
	say("ESCAPED %s: connected, banner '%s'", what, banner);
	close(s);
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;
	struct sockaddr_un au;
	char line[256];
	FILE *f;
	int s, port;

	if (argc != 4) {
		say("INFO usage: net PORT ABSTRACT_NAME DAEMON_SOCKET");
		return 2;
	}
	port = atoi(argv[1]);
	if ((f = fopen("/proc/net/dev", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			if (strchr(line, ':') != NULL) {
				line[strcspn(line, ":")] = '\0';
				say("IFACE %s", line + strspn(line, " "));
			}
		fclose(f);
	} else {
		say("INFO /proc/net/dev: %s", ename(errno));
	}

	memset(&a4, 0, sizeof(a4));
	a4.sin_family = AF_INET;
	a4.sin_port = htons((uint16_t)port);
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	try_connect(
	    "tcp 127.0.0.1", AF_INET, (struct sockaddr *)&a4, sizeof(a4));
	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_port = htons((uint16_t)port);
	a6.sin6_addr = in6addr_loopback;
	try_connect("tcp [::1]", AF_INET6, (struct sockaddr *)&a6, sizeof(a6));
	if ((s = socket(AF_INET, SOCK_DGRAM, 0)) == -1) {
		say("BLOCKED udp 127.0.0.1: socket: %s", ename(errno));
	} else {
		if (sendto(s, "sb-escape udp", 13, 0, (struct sockaddr *)&a4,
		        sizeof(a4)) == -1)
			say("BLOCKED udp 127.0.0.1: sendto: %s", ename(errno));
		else
			say("INFO udp 127.0.0.1: sent (the host listener "
			    "decides)");
		close(s);
	}

	memset(&au, 0, sizeof(au));
	au.sun_family = AF_UNIX;
	snprintf(au.sun_path + 1, sizeof(au.sun_path) - 1, "%s", argv[2]);
	try_connect("abstract unix @host-listener", AF_UNIX,
	    (struct sockaddr *)&au,
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	                strlen(argv[2])));
	memset(&au, 0, sizeof(au));
	au.sun_family = AF_UNIX;
	snprintf(au.sun_path, sizeof(au.sun_path), "%s", argv[3]);
	try_connect(
	    "unix daemon socket", AF_UNIX, (struct sockaddr *)&au, sizeof(au));

	s = socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	if (verdict("socket AF_NETLINK", s, errno, EPERM, 0))
		close(s);
	s = socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
	if (verdict("socket AF_NETLINK audit", s, errno, EPERM, 0))
		close(s);
	/* the kernel reads the family as an int: high bits must not help */
	s = (int)syscall(SYS_socket, (unsigned long)AF_NETLINK | (1UL << 32),
	    SOCK_RAW, NETLINK_ROUTE);
	if (verdict("socket AF_NETLINK|1<<32", s, errno, EPERM, 0))
		close(s);
	s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (verdict("socket AF_PACKET", s, errno, EPERM, 0))
		close(s);
	s = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (verdict("socket AF_INET raw", s, errno, EPERM, 0))
		close(s);
	s = socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6);
	if (verdict("socket AF_INET6 raw", s, errno, EPERM, 0))
		close(s);
	s = socket(40 /* AF_VSOCK */, SOCK_STREAM, 0);
	if (verdict("socket AF_VSOCK", s, errno, EPERM, 0))
		close(s);
	s = socket(38 /* AF_ALG */, SOCK_SEQPACKET, 0);
	if (verdict("socket AF_ALG", s, errno, EPERM, 0))
		close(s);
	say("DONE");
	return 0;
}
