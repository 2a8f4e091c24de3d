/*
 * audit_bench.c: audit records per second through a real auditd, the
 * way the broker sends them (AUDIT on its channel, AUDIT_ACK back), with
 * WINDOW records in flight: 1 is one client calling in turn, more is
 * many clients at once (their records share group commits).
 *
 * usage: audit_bench -a AUDITD -l LOG -H HEAD -F FLUSH -u UID -g GID
 *            [-w WINDOW] [-t SECONDS]
 *
 * SECONDS may be a decimal number, at most 60.
 *
 * Starts AUDITD with its channels at fds 3 (master), 4 (broker) and 5
 * (netproxy, idle), sends records for SECONDS (default 2), and prints
 * one JSON line: {"bench":"audit","flush","window","records","seconds",
 * "per_second"}. bench/run.sh counts the syncs (perf stat).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"
#include "../proto/msg.h"

struct opts {
	const char *auditd, *log, *head, *flush, *uid, *gid;
	unsigned window;
	double seconds;
};

/* The usage line, exit 2. */
static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: audit_bench -a AUDITD -l LOG -H HEAD -F FLUSH "
	                "-u UID -g GID [-w WINDOW] [-t SECONDS]\n");
	exit(2);
}

/* auditd with its master, broker and netproxy ends at fds 3, 4, 5. */
static pid_t
spawn(const struct opts *o, int master, int broker, int proxy)
{
	char *argv[] = {(char *)o->auditd, "-d", NULL};
	pid_t pid;
	int m, b, n;

	if ((pid = fork()) == -1)
		fatal("fork");
	if (pid != 0)
		return pid;
	if ((m = fcntl(master, F_DUPFD, 64)) == -1 ||
	    (b = fcntl(broker, F_DUPFD, 64)) == -1 ||
	    (n = fcntl(proxy, F_DUPFD, 64)) == -1 || dup2(m, 3) == -1 ||
	    dup2(b, 4) == -1 || dup2(n, 5) == -1)
		_exit(126);
	close_from(6);
	execv(o->auditd, argv);
	_exit(127);
}

/* auditd's settings, as the master would send them. */
static void
send_conf(const struct opts *o, int fd)
{
	struct conf_auditd c;
	struct mp_enc enc;
	struct error e;
	uint64_t v;
	int i;

	memset(&c, 0, sizeof(c));
	audit_settings_default(&c.set);
	if ((i = config_keyword(audit_flush_names, o->flush)) < 0 ||
	    parse_uint(o->uid, 1, UINT32_MAX - 1, &v) == -1 ||
	    parse_uint(o->gid, 1, UINT32_MAX - 1, &c.gid) == -1)
		usage();
	c.set.flush = (enum audit_flush)i;
	c.set.max_log_file = 0;
	c.uid = v;
	c.path = (char *)o->log;
	c.head = (char *)o->head;
	enc_init(&enc);
	conf_auditd_enc(&enc, &c);
	if (frame_send(fd, enc.sb.data, enc.sb.size, &e) == -1)
		fatalx("settings: %s", e.msg);
	enc_free(&enc);
}

/* A record the size and shape of a broker's policy.decision. */
static void
send_record(int fd, uint64_t ref)
{
	struct mp_enc m;
	struct error e;
	char id[32];

	snprintf(id, sizeof(id), "bench-%llu", (unsigned long long)ref);
	enc_init(&m);
	msg_audit_begin(&m, ref, "policy.decision", "allowed", "success");
	enc_kstr(&m, "request.id", id);
	enc_kstr(&m, "user.id", "1000");
	enc_kstr(&m, "group.id", "1000");
	enc_kint(&m, "process.pid", 4242);
	enc_kstr(&m, "session.id", "default");
	enc_kstr(&m, "skill.name", "hello");
	enc_kstr(&m, "skill.command", "run");
	enc_kstr(&m, "skill.phase", "execution");
	enc_kstr(&m, "event.reason",
	    "allowed by rule \"anyone-may-greet\" "
	    "(10-default.yaml:7): uid 1000 may run hello run in phase "
	    "execution");
	enc_kstr(&m, "error.type", "none");
	enc_kstr(&m, "grant.id", "0123456789abcdef0123456789abcdef");
	msg_audit_end(&m);
	if (frame_send(fd, m.sb.data, m.sb.size, &e) == -1)
		fatalx("send: %s", e.msg);
	enc_free(&m);
}

/* One AUDIT_ACK; it must be ok. */
static void
recv_ack(int fd)
{
	struct msg_audit_ack a;
	struct mp_doc d;
	struct error e;
	uint8_t *body;
	size_t len;

	if (frame_recv(fd, FRAME_MAX_INTERNAL, &body, &len, &e) == -1 ||
	    mp_decode(&d, body, len, NULL, &e) == -1 ||
	    msg_audit_ack_dec(&d, &a, &e) == -1)
		fatalx("ack: %s", e.msg);
	if (!a.ok)
		fatalx("auditd refused a record: %s", a.message);
	msg_audit_ack_free(&a);
	mp_doc_free(&d);
	free(body);
}

/* Options into o. */
static void
parse(int argc, char **argv, struct opts *o)
{
	uint64_t v;
	char *end;
	int ch;

	memset(o, 0, sizeof(*o));
	o->window = 1;
	o->seconds = 2;
	while ((ch = getopt(argc, argv, "a:F:g:H:l:t:u:w:")) != -1) {
		switch (ch) {
		case 'a':
			o->auditd = optarg;
			break;
		case 'F':
			o->flush = optarg;
			break;
		case 'g':
			o->gid = optarg;
			break;
		case 'H':
			o->head = optarg;
			break;
		case 'l':
			o->log = optarg;
			break;
		case 'u':
			o->uid = optarg;
			break;
		case 't':
			errno = 0;
			o->seconds = strtod(optarg, &end);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    !(o->seconds > 0) || o->seconds > 60)
				usage();
			break;
		case 'w':
			if (parse_uint(optarg, 1, 1024, &v))
				usage();
			o->window = (unsigned)v;
			break;
		default:
			usage();
		}
	}
	if (!o->auditd || !o->log || !o->head || !o->flush || !o->uid ||
	    !o->gid)
		usage();
}

/* Start auditd, keep the window full for the time given, print the rate. */
int
main(int argc, char **argv)
{
	uint64_t sent = 0, acked = 0, t0, t1, limit;
	int mp[2], bp[2], np[2], status;
	struct opts o;
	uint8_t *body;
	struct error e;
	size_t len;
	pid_t pid;

	parse(argc, argv, &o);
	log_init("audit_bench", 1, 0);
	signal(SIGPIPE, SIG_IGN);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, mp) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, bp) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, np) == -1)
		fatal("socketpair");
	pid = spawn(&o, mp[1], bp[1], np[1]);
	send_conf(&o, mp[0]);
	if (close(mp[1]) == -1 || close(bp[1]) == -1 || close(np[1]) == -1)
		fatal("close");
	if (frame_recv(mp[0], FRAME_MAX_INTERNAL, &body, &len, &e) == -1)
		fatalx("auditd did not start: %s", e.msg);
	free(body); /* READY */
	t0 = now_mono_ns();
	limit = t0 + (uint64_t)(o.seconds * 1e9);
	while (sent < o.window)
		send_record(bp[0], ++sent);
	while (acked < sent) {
		recv_ack(bp[0]);
		acked++;
		if (now_mono_ns() < limit)
			send_record(bp[0], ++sent);
	}
	t1 = now_mono_ns();
	printf("{\"bench\":\"audit\",\"flush\":\"%s\",\"window\":%u,"
	       "\"records\":%llu,\"seconds\":%.3f,\"per_second\":%.0f}\n",
	    o.flush, o.window, (unsigned long long)acked,
	    (double)(t1 - t0) / 1e9, (double)acked * 1e9 / (double)(t1 - t0));
	if (kill(pid, SIGTERM) == -1)
		fatal("kill");
	close(bp[0]);
	if (waitpid(pid, &status, 0) == -1)
		fatal("waitpid");
	close(mp[0]);
	close(np[0]);
	return 0;
}
