/*
 * listener: the host side of the network escape test. Listens on
 * 127.0.0.1:PORT (TCP and UDP), [::1]:PORT (TCP, when IPv6 works) and
 * the abstract unix socket @NAME, answers each connection with a
 * banner, and appends one line per connection or datagram to LOG.
 *   listener PORTFILE LOG NAME   (binds an ephemeral port, writes it to
 * PORTFILE)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void
logline(const char *log, const char *what)
{
	FILE *f = fopen(log, "a");

	if (f != NULL) {
		fprintf(f, "%s\n", what);
		fclose(f);
	}
}

int
main(int argc, char *argv[])
{
	struct sockaddr_in a4;
	struct sockaddr_in6 a6;
	struct sockaddr_un au;
	struct pollfd p[4];
	socklen_t len;
	int n = 0, one = 1, port, i;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: listener PORTFILE LOG NAME\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	memset(&a4, 0, sizeof(a4));
	a4.sin_family = AF_INET;
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	p[n].fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(p[n].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(p[n].fd, (struct sockaddr *)&a4, sizeof(a4)) == -1 ||
	    listen(p[n].fd, 16) == -1) {
		perror("listener: tcp");
		return 1;
	}
	len = sizeof(a4);
	getsockname(p[n].fd, (struct sockaddr *)&a4, &len);
	port = ntohs(a4.sin_port);
	n++;
	p[n].fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (bind(p[n].fd, (struct sockaddr *)&a4, sizeof(a4)) == -1) {
		perror("listener: udp");
		return 1;
	}
	n++;
	memset(&a6, 0, sizeof(a6));
	a6.sin6_family = AF_INET6;
	a6.sin6_addr = in6addr_loopback;
	a6.sin6_port = htons((uint16_t)port);
	p[n].fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (p[n].fd != -1) {
		setsockopt(
		    p[n].fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(p[n].fd, (struct sockaddr *)&a6, sizeof(a6)) == 0 &&
		    listen(p[n].fd, 16) == 0)
			n++;
		else
			close(p[n].fd);
	}
	memset(&au, 0, sizeof(au));
	au.sun_family = AF_UNIX;
	snprintf(au.sun_path + 1, sizeof(au.sun_path) - 1, "%s", argv[3]);
	p[n].fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (bind(p[n].fd, (struct sockaddr *)&au,
	        (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	                    strlen(argv[3]))) == -1 ||
	    listen(p[n].fd, 16) == -1) {
		perror("listener: abstract unix");
		return 1;
	}
	n++;
	if ((f = fopen(argv[1], "w")) == NULL)
		return 1;
	fprintf(f, "%d\n", port);
	fclose(f);
	for (;;) {
		for (i = 0; i < n; i++)
			p[i].events = POLLIN;
		if (poll(p, (nfds_t)n, -1) == -1) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (i = 0; i < n; i++) {
			char buf[256], line[512];
			int c;
			ssize_t r;

			if (!(p[i].revents & POLLIN))
				continue;
			if (i == 1) {
				r = recv(p[i].fd, buf, sizeof(buf) - 1, 0);
				buf[r > 0 ? r : 0] = '\0';
				snprintf(line, sizeof(line), "udp datagram: %s",
				    buf);
				logline(argv[2], line);
				continue;
			}
			if ((c = accept(p[i].fd, NULL, NULL)) == -1)
				continue;
			snprintf(
			    line, sizeof(line), "connection on socket %d", i);
			logline(argv[2], line);
			(void)!write(c, "HELLO-FROM-HOST\n", 16);
			close(c);
		}
	}
}
