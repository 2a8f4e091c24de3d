/*
 * netattack: the sandbox side of the egress proxy tests
 * (tests/escape/network.sh). Runs its operations in order and reports
 * each on stdout in the lines of attack.h (BLOCKED / ESCAPED /
 * UNEXPECTED / INFO), then DONE:
 *
 *   env                       ENV NAME=VALUE for each variable whose name
 *                             holds "proxy" (any case); INFO no proxy
 *                             variables when there is none
 *   tcp ADDR PORT             a direct TCP connect (IPv4 or IPv6 literal),
 *                             2 s bound: must fail
 *   udp ADDR PORT TEXT        one datagram: off the machine it must
 *                             fail; on loopback the kernel takes it
 *                             either way (INFO sent), so the host's
 *                             listener is the judge
 *   raw                       raw IPv4/IPv6 and packet sockets: must fail
 *   abstract NAME             connect to the abstract unix socket @NAME
 *   flood PORT TOTAL SECS T.. open TOTAL connections to the proxy at
 *                             127.0.0.1:PORT (at most SECS seconds), as
 *                             many at once as RLIMIT_NOFILE allows, each
 *                             sending "CONNECT T HTTP/1.1" for the targets
 *                             T in turn; a round keeps its connections
 *                             open (tunnels too) until all answered or
 *                             500 ms passed, then closes them all. Ends
 *                             the operations; reports one FLOOD line.
 */
#include "attack.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

extern char **environ;

static long
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ADDR and PORT as a sockaddr (IPv4 or IPv6 literal); 0 on success. */
static int
mkaddr(const char *addr, const char *port, struct sockaddr_storage *ss,
    socklen_t *len)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)atoi(port));
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, addr, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)atoi(port));
		*len = sizeof(*a6);
		return 0;
	}
	return -1;
}

static void
op_env(void)
{
	char **e, lower[64];
	size_t i;
	int n = 0;

	for (e = environ; *e != NULL; e++) {
		for (i = 0; i < sizeof(lower) - 1 && (*e)[i] && (*e)[i] != '=';
		     i++)
			lower[i] = (char)tolower((unsigned char)(*e)[i]);
		lower[i] = '\0';
		if (strstr(lower, "proxy") != NULL) {
			say("ENV %s", *e);
			n++;
		}
	}
	if (n == 0)
		say("INFO no proxy variables");
}

/* A direct connect with a 2 s bound; on success reads a banner. */
static void
op_tcp(const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	struct pollfd p;
	socklen_t len, el = sizeof(int);
	char what[128], banner[64] = "";
	int s, r, err = 0;
	ssize_t n;

	snprintf(what, sizeof(what), "tcp %s:%s", addr, port);
	if (mkaddr(addr, port, &ss, &len) == -1) {
		say("INFO %s: not an address", what);
		return;
	}
	if ((s = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0)) == -1) {
		verdict(what, -1, errno, EPERM, EACCES, EAFNOSUPPORT, 0);
		return;
	}
	r = connect(s, (struct sockaddr *)&ss, len);
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
		verdict(what, -1, errno, ECONNREFUSED, ENETUNREACH,
		    EHOSTUNREACH, ETIMEDOUT, EPERM, EACCES, EADDRNOTAVAIL, 0);
		close(s);
		return;
	}
	p.fd = s;
	p.events = POLLIN;
	if (poll(&p, 1, 1000) == 1 &&
	    (n = read(s, banner, sizeof(banner) - 1)) > 0)
		banner[n] = '\0';
	banner[strcspn(banner, "\r\n")] = '\0';
	say("ESCAPED %s: connected, banner '%s'", what, banner);
	close(s);
}

/* 127.0.0.0/8 or ::1: a datagram the sandbox's own loopback takes. */
static int
loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET)
		return (ntohl(a4->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr);
}

static void
op_udp(const char *addr, const char *port, const char *text)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char what[128];
	ssize_t r;
	int s;

	snprintf(what, sizeof(what), "udp %s:%s", addr, port);
	if (mkaddr(addr, port, &ss, &len) == -1) {
		say("INFO %s: not an address", what);
		return;
	}
	if ((s = socket(ss.ss_family, SOCK_DGRAM, 0)) == -1) {
		verdict(what, -1, errno, EPERM, EACCES, EAFNOSUPPORT, 0);
		return;
	}
	r = sendto(s, text, strlen(text), 0, (struct sockaddr *)&ss, len);
	if (r == -1)
		verdict(what, -1, errno, ENETUNREACH, EHOSTUNREACH, EPERM,
		    EACCES, EADDRNOTAVAIL, 0);
	else if (loopback(&ss))
		say("INFO %s: sent %zd bytes", what, r);
	else
		say("ESCAPED %s: sent %zd bytes off the machine", what, r);
	close(s);
}

static void
op_raw(void)
{
	static const struct {
		const char *what;
		int fam, type, proto;
	} k[] = {
	    {"socket AF_INET SOCK_RAW IPPROTO_ICMP", AF_INET, SOCK_RAW,
	        IPPROTO_ICMP},
	    {"socket AF_INET SOCK_RAW IPPROTO_RAW", AF_INET, SOCK_RAW,
	        IPPROTO_RAW},
	    {"socket AF_INET SOCK_RAW IPPROTO_TCP", AF_INET, SOCK_RAW,
	        IPPROTO_TCP},
	    {"socket AF_INET6 SOCK_RAW IPPROTO_ICMPV6", AF_INET6, SOCK_RAW,
	        IPPROTO_ICMPV6},
	    {"socket AF_PACKET SOCK_RAW", AF_PACKET, SOCK_RAW, 0},
	    {"socket AF_PACKET SOCK_DGRAM", AF_PACKET, SOCK_DGRAM, 0},
	};
	size_t i;
	int s, proto;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		proto = k[i].fam == AF_PACKET ? htons(ETH_P_ALL) : k[i].proto;
		s = socket(k[i].fam, k[i].type, proto);
		if (!verdict(
		        k[i].what, s, errno, EPERM, EACCES, EAFNOSUPPORT, 0))
			continue;
		close(s);
	}
}

static void
op_abstract(const char *name)
{
	struct sockaddr_un au;
	char what[160], banner[64] = "";
	socklen_t len;
	ssize_t n;
	int s;

	snprintf(what, sizeof(what), "abstract unix @%s", name);
	memset(&au, 0, sizeof(au));
	au.sun_family = AF_UNIX;
	snprintf(au.sun_path + 1, sizeof(au.sun_path) - 1, "%s", name);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	                  strlen(name));
	if ((s = socket(AF_UNIX, SOCK_STREAM, 0)) == -1) {
		say("INFO %s: socket: %s", what, ename(errno));
		return;
	}
	if (connect(s, (struct sockaddr *)&au, len) == -1) {
		verdict(
		    what, -1, errno, ECONNREFUSED, ENOENT, EPERM, EACCES, 0);
	} else {
		if ((n = read(s, banner, sizeof(banner) - 1)) > 0)
			banner[n] = '\0';
		banner[strcspn(banner, "\r\n")] = '\0';
		say("ESCAPED %s: connected, banner '%s'", what, banner);
	}
	close(s);
}

struct conn {
	int fd;
	int state; /* 0 connecting, 1 CONNECT sent, 2 answered or dead */
	const char *target;
	char head[64];
	size_t n;
};

struct flood {
	long opened, connected, s200, s403, s429, sother, closed, pending,
	    connerr, rounds, maxopen;
};

/* Read a connection's answer; count it once its status line is in. */
static void
flood_read(struct conn *c, struct flood *f)
{
	char *eol;
	ssize_t r;
	int code;

	r = read(c->fd, c->head + c->n, sizeof(c->head) - 1 - c->n);
	if (r <= 0) {
		f->closed++;
		c->state = 2;
		return;
	}
	c->n += (size_t)r;
	c->head[c->n] = '\0';
	if ((eol = strstr(c->head, "\r\n")) == NULL &&
	    c->n < sizeof(c->head) - 1)
		return;
	code = 0;
	if (sscanf(c->head, "HTTP/1.%*d %d", &code) != 1)
		code = 0;
	if (code == 200)
		f->s200++;
	else if (code == 403)
		f->s403++;
	else if (code == 429)
		f->s429++;
	else
		f->sother++;
	c->state = 2; /* a tunnel stays open until the round ends */
}

static void
op_flood(int port, long total, long secs, char **targets, int ntargets)
{
	struct sockaddr_in a;
	struct flood f;
	struct rlimit rl;
	struct conn *c;
	struct pollfd *p;
	char req[512];
	long t0 = now_ms(), end, cap;
	int i, n, live, fd, err;
	socklen_t el = sizeof(int);
	size_t k = 0;

	memset(&f, 0, sizeof(f));
	getrlimit(RLIMIT_NOFILE, &rl);
	cap = (long)rl.rlim_cur - 8;
	if (cap > 4096)
		cap = 4096;
	if (cap < 1)
		cap = 1;
	c = calloc((size_t)cap, sizeof(*c));
	p = calloc((size_t)cap, sizeof(*p));
	if (c == NULL || p == NULL) {
		say("INFO flood: out of memory");
		return;
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = htons((uint16_t)port);
	while (f.opened < total && now_ms() - t0 < secs * 1000) {
		f.rounds++;
		for (n = 0; n < cap && f.opened < total; n++) {
			fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (fd == -1)
				break; /* EMFILE: as many as NOFILE allows */
			f.opened++;
			if (connect(fd, (struct sockaddr *)&a, sizeof(a)) ==
			        -1 &&
			    errno != EINPROGRESS) {
				f.connerr++;
				close(fd);
				n--;
				continue;
			}
			c[n].fd = fd;
			c[n].state = 0;
			c[n].n = 0;
			c[n].target = targets[k++ % (size_t)ntargets];
		}
		if (n > f.maxopen)
			f.maxopen = n;
		end = now_ms() + 500;
		for (;;) {
			for (i = 0, live = 0; i < n; i++) {
				p[i].fd = c[i].state == 2 ? -1 : c[i].fd;
				p[i].events =
				    c[i].state == 0 ? POLLOUT : POLLIN;
				p[i].revents = 0;
				live += c[i].state != 2;
			}
			if (live == 0 || now_ms() >= end)
				break;
			if (poll(p, (nfds_t)n, (int)(end - now_ms())) <= 0)
				continue;
			for (i = 0; i < n; i++) {
				if (p[i].revents == 0)
					continue;
				if (c[i].state == 0) {
					err = 0;
					getsockopt(c[i].fd, SOL_SOCKET,
					    SO_ERROR, &err, &el);
					if (err != 0) {
						f.connerr++;
						c[i].state = 2;
						continue;
					}
					f.connected++;
					snprintf(req, sizeof(req),
					    "CONNECT %s HTTP/1.1\r\nHost: "
					    "%s\r\n\r\n",
					    c[i].target, c[i].target);
					if (write(c[i].fd, req, strlen(req)) <
					    0) {
						f.closed++;
						c[i].state = 2;
						continue;
					}
					c[i].state = 1;
				} else if (p[i].revents &
				           (POLLIN | POLLHUP | POLLERR)) {
					flood_read(&c[i], &f);
				}
			}
		}
		for (i = 0; i < n; i++) {
			if (c[i].state != 2)
				f.pending++;
			close(c[i].fd);
		}
	}
	say("FLOOD opened=%ld connected=%ld s200=%ld s403=%ld s429=%ld "
	    "sother=%ld closed=%ld pending=%ld connerr=%ld rounds=%ld "
	    "maxopen=%ld ms=%ld",
	    f.opened, f.connected, f.s200, f.s403, f.s429, f.sother, f.closed,
	    f.pending, f.connerr, f.rounds, f.maxopen, now_ms() - t0);
	free(c);
	free(p);
}

int
main(int argc, char *argv[])
{
	int i = 1;

	while (i < argc) {
		const char *op = argv[i++];
		if (strcmp(op, "env") == 0) {
			op_env();
		} else if (strcmp(op, "tcp") == 0 && i + 2 <= argc) {
			op_tcp(argv[i], argv[i + 1]);
			i += 2;
		} else if (strcmp(op, "udp") == 0 && i + 3 <= argc) {
			op_udp(argv[i], argv[i + 1], argv[i + 2]);
			i += 3;
		} else if (strcmp(op, "raw") == 0) {
			op_raw();
		} else if (strcmp(op, "abstract") == 0 && i + 1 <= argc) {
			op_abstract(argv[i]);
			i += 1;
		} else if (strcmp(op, "flood") == 0 && i + 4 <= argc) {
			op_flood(atoi(argv[i]), atol(argv[i + 1]),
			    atol(argv[i + 2]), argv + i + 3, argc - i - 3);
			i = argc;
		} else {
			say("INFO usage: bad operation '%s'", op);
			return 2;
		}
	}
	say("DONE");
	return 0;
}
