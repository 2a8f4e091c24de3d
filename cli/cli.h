/*
 * cli.h: the pieces of skillctl. main.c parses arguments and dispatches;
 * cli_conn.c talks to the broker through libskillbroker (whose internal
 * header gives the printers a reply's msgpack object); cli_print.c
 * turns a reply into output and an exit status (cli_stats.c: the stats
 * reply's text and Prometheus forms; cli_approve.c: an approval request
 * shown and answered on a terminal; cli_files.c: put, get, ls and rm,
 * the library's whole checked transfers between a session and local
 * files; cli_policy.c, cli_skill.c, cli_audit.c: the offline checks, and
 * a skill's skeleton). Everything but main() lives outside main.c so the
 * unit tests can link it.
 */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../auditd/auditd.h"
#include "../lib/error.h"
#include "../libskillbroker/sb_int.h"
#include "../proto/client.h"
#include "../proto/mp.h"

/* Exit statuses; the usage text documents them. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_FAILED 3 /* the broker answered ok=false */
#define CLI_EXIT_PROTO 4  /* cannot connect, or a protocol error */

#define CLI_STDIN_MAX (1024 * 1024)
/* A field of a reply is no bigger than the reply the library takes. */
#define CLI_REPLY_MAX SB_REPLY_MAX_CAP
#define CLI_MSG_MAX 1024 /* bytes of one "skillctl: ..." message */

/* cli_conn.c: one connection to the broker. */
struct cli_conn {
	struct sb_client *c;
	int tty;    /* where approval requests are asked, or -1: not */
	int noted;  /* an unanswered approval request was noted */
	int format; /* CLI_OUT_*: how a refusal is printed */
};
int cli_say(int status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int cli_open(struct cli_conn *cc, const char *sock, int tty, int format);
void cli_close(struct cli_conn *cc);
struct sb_req *cli_req(const struct client_req *r, struct error *e);
int cli_call(struct cli_conn *cc, struct sb_req *req, struct sb_reply **rep);
int cli_failed(struct cli_conn *cc);

/* cli_approve.c: an approval request on a terminal */
void cli_approval_show(const msgpack_object *req, FILE *out);
enum client_approval cli_approval_answer(const char *line);
enum client_approval cli_approval_prompt(
    const msgpack_object *req, int sock, int tty, FILE *out);

/* cli_audit.c: `skillctl audit verify`; returns the exit status. */
struct audit_verify {
	uint64_t bad_seq; /* the first bad event.sequence, or 0 */
	uint64_t records;
	struct audit_head head; /* the last record of a good series */
	char why[512];
};
int cli_audit(int argc, char **argv);
int cli_audit_verify_files(char *const *files, size_t n,
    const struct audit_head *head, FILE *out, struct audit_verify *res);

/* cli_policy.c: `skillctl policy check`; returns the exit status. */
#define CLI_POLICY_DIR_DEV "etc/policy.d" /* without operands: a tree's */
int cli_policy_check(int argc, char **argv);
/* What loading a skill takes of the daemon config c (NULL: the built-in
 * defaults): the system paths programs must lie in, the interpreters by
 * extension, and, from a config, the daemon's own paths no fs
 * permission may reach. */
struct config;
void cli_skill_env(const struct config *c);

/* cli_skill.c: `skillctl skill check` and `skillctl skill init` (argv
 * starts at the subcommand); returns the exit status. */
int cli_skill(int argc, char **argv);
/* cli_skill_init.c: `skillctl skill init` (argv after "init") */
int cli_skill_init(int argc, char **argv);
/* cli_skill.c's usage error (why, then the synopsis; the exit status),
 * -h/--help, and the help itself, for both subcommands */
int cli_skill_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_is_help(const char *arg);
int cli_skill_help(void);

/* cli_info.c: a skill_info reply as text */
int cli_info_print(const msgpack_object *reply, FILE *out, struct error *e);

/*
 * cli_files.c: put, get, ls and rm on a session's files (sock: -s or
 * NULL; req: type, id, session, path; local: put's source or get's
 * target, "-" for stdin or stdout; format: CLI_OUT_HUMAN or
 * CLI_OUT_JSON); the exit status.
 */
int cli_files_run(const char *sock, const struct client_req *req,
    const char *local, int format);
/* Read fd to EOF, refusing more than max bytes; *out is never NULL. */
int cli_read_all(
    int fd, size_t max, uint8_t **out, size_t *outlen, struct error *e);
/* A list_files reply as ls prints it. */
int cli_files_list_print(
    const msgpack_object *reply, FILE *out, struct error *e);

/* cli_print.c; format is one of: */
#define CLI_OUT_HUMAN 0
#define CLI_OUT_JSON 1
#define CLI_OUT_PROMETHEUS 2 /* stats only */
int cli_print_json(const msgpack_object *reply, FILE *out);
int cli_print_reply(const msgpack_object *reply, enum creq_type type,
    int format, FILE *out, FILE *err);
void cli_put_safe(FILE *f, const char *s);

/* cli_stats.c: the stats reply, decoded and checked. */
#define CLI_STATS_BOUNDS_MAX 64
#define CLI_STATS_OUTCOMES_MAX 64
#define CLI_STATS_NAME_MAX 32
#define CLI_STATS_SPANS 3 /* decision, worker_start, call */
struct cli_histo {
	uint64_t count, sum_ms, p50, p90, p99;
	uint64_t buckets[CLI_STATS_BOUNDS_MAX + 1]; /* cumulative; +Inf last */
};
struct cli_stats {
	uint64_t uptime_s, clients, requests, invokes;
	uint64_t in_flight, queued, approvals, audit_queue;
	size_t noutcomes, nbounds;
	char outcome[CLI_STATS_OUTCOMES_MAX][CLI_STATS_NAME_MAX];
	uint64_t calls[CLI_STATS_OUTCOMES_MAX];
	uint64_t bounds_ms[CLI_STATS_BOUNDS_MAX];
	struct cli_histo span[CLI_STATS_SPANS];
};
int cli_stats_dec(
    const msgpack_object *reply, struct cli_stats *s, struct error *e);
void cli_stats_text(const struct cli_stats *s, FILE *out);
void cli_stats_prometheus(const struct cli_stats *s, FILE *out);
int cli_stats_print(
    const msgpack_object *reply, int format, FILE *out, struct error *e);

#endif
