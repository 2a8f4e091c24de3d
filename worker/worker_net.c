/*
 * worker_net.c: a call with a network grant, under worker.network:
 * proxy, keeps its own network namespace with only loopback up. The
 * egress proxy listens inside it at NET_PROXY_ADDR:NET_PROXY_PORT on a
 * socket made here, in this namespace, and handed to the master with
 * READY: the proxy accepts on it from the host's side, so no relay runs
 * in the sandbox and nothing of the host's network is reachable.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "worker.h"

static int listener = -1;

/* Loopback up: the namespace's only interface. */
static int
loopback_up(struct error *e)
{
	struct ifreq ifr;
	int s, r;

	if ((s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "socket: %s", strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if ((r = ioctl(s, SIOCGIFFLAGS, &ifr)) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	if (r == -1)
		return error_set(
		    e, ERR_SANDBOX_FAILED, "loopback up: %s", strerror(errno));
	return 0;
}

int
sandbox_net(const struct grant *g, struct error *e)
{
	struct sockaddr_in sin;
	int one = 1;

	if (g->net != NET_PROXY)
		return 0;
	if (loopback_up(e) == -1)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(NET_PROXY_PORT);
	if (inet_pton(AF_INET, NET_PROXY_ADDR, &sin.sin_addr) != 1 ||
	    (listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ==
	        -1 ||
	    bind(listener, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(listener, NET_PROXY_BACKLOG) == -1)
		return error_set(e, ERR_SANDBOX_FAILED,
		    "proxy listener %s:%d: %s", NET_PROXY_ADDR, NET_PROXY_PORT,
		    strerror(errno));
	return 0;
}

int
sandbox_net_listener(void)
{
	int fd = listener;

	listener = -1;
	return fd;
}
