/*
 * cli_conn.c: skillctl's connection, through libskillbroker: the socket
 * opened (the library says hello; invoke on a terminal answers approval
 * requests), a request built from main.c's struct client_req with the
 * library's setters, and a call that got no reply told to the user as a
 * message and an exit status.
 */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/xmalloc.h"

/* "skillctl: MESSAGE" on stderr (controls as ?); returns status. */
int
cli_say(int status, const char *fmt, ...)
{
	char msg[CLI_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fputs("skillctl: ", stderr);
	cli_put_safe(stderr, msg);
	fputc('\n', stderr);
	fflush(stderr);
	return status;
}

/* The terminal's answer, as the library names it. */
static enum sb_approval
conn_answer(enum client_approval a)
{
	switch (a) {
	case CLIENT_APPROVAL_YES_ONCE:
		return SB_APPROVAL_YES_ONCE;
	case CLIENT_APPROVAL_YES_IN_SESSION:
		return SB_APPROVAL_YES_IN_SESSION;
	case CLIENT_APPROVAL_NO:
		return SB_APPROVAL_NO;
	default:
		return SB_APPROVAL_NONE;
	}
}

/* An approval request for our call: put to the human at the terminal. */
static enum sb_approval
conn_ask(struct sb_client *c, const struct sb_reply *req, void *arg)
{
	const struct cli_conn *cc = arg;

	return conn_answer(cli_approval_prompt(
	    sb_reply_object(req), sb_fd(c), cc->tty, stderr));
}

/*
 * A frame that answers no call of ours: the broker's error to an answer
 * we gave is said; an approval request this client does not answer is
 * noted once (the wait goes on); anything else is skipped.
 */
static void
conn_notice(struct sb_client *c, const struct sb_reply *f, void *arg)
{
	struct cli_conn *cc = arg;

	if (strcmp(sb_reply_type(f), "approval_request") == 0) {
		if (cc->tty != -1) /* the library could not send our answer */
			(void)cli_say(0, "the answer could not be sent: %s",
			    sb_errmsg(c));
		else if (!cc->noted)
			(void)cli_say(0, "the broker asks for an approval; "
			                 "this client does not answer "
			                 "approvals, still waiting");
		cc->noted = 1;
	} else if (!sb_reply_ok(f) && cc->tty != -1)
		(void)cli_say(0, "the answer was not taken: %s: %s",
		    sb_reply_error_type(f), sb_reply_error_message(f));
}

/*
 * The broker refused the connection or ended it (an error of its own,
 * "TYPE: MESSAGE" in msg): printed as the error reply it sent, exit 3.
 */
static int
conn_refused(enum sb_err err, const char *msg, int format)
{
	static const struct client_id none; /* the reply had no id */
	const char *name = sb_err_name(err);
	size_t n = strlen(name);
	struct sb_reply *r;
	int status;

	if (err != SB_ERR_UNKNOWN && strncmp(msg, name, n) == 0 &&
	    strncmp(msg + n, ": ", 2) == 0)
		msg += n + 2;
	r = sb_reply_local(&none, err, msg);
	status = cli_print_reply(
	    sb_reply_object(r), CREQ_HELLO, format, stdout, stderr);
	sb_reply_free(r);
	return status;
}

/*
 * skillctl's socket: -s, else the library's choice ($SKILLBROKER_SOCKET,
 * the installed socket), else, when only it exists, the socket of `make
 * run` in the current directory (the source tree's daemon). The library
 * never looks there itself: that fallback is for a person in the tree.
 */
#define CLI_SOCKET_DEV "run/skillbroker.sock" /* `make run`'s socket */

static const char *
conn_socket_path(const char *sock)
{
	const char *path = sb_socket_path(sock);
	struct stat st;

	if (sock == NULL && strcmp(path, SKILLBROKER_SOCKET_DEFAULT) == 0 &&
	    stat(path, &st) == -1 && errno == ENOENT &&
	    stat(CLI_SOCKET_DEV, &st) == 0)
		return CLI_SOCKET_DEV;
	return path;
}

/* Where path came from, for a user who must find the daemon's socket. */
static const char *
conn_socket_origin(const char *sock, const char *path)
{
	const char *env = getenv(SKILLBROKER_SOCKET_ENV);

	if (sock != NULL)
		return "the socket given with -s";
	if (strcmp(path, CLI_SOCKET_DEV) == 0)
		return "make run's socket in this directory";
	if (env != NULL && *env != '\0')
		return "the socket $" SKILLBROKER_SOCKET_ENV " names";
	return "the default socket";
}

/*
 * No daemon to talk to: the library's reason (without its short hint),
 * where the path came from, and what to do next; exit 4.
 */
static int
conn_unreachable(const char *sock, const char *path, char *msg)
{
	char *hint = strstr(msg, " (is skillbrokerd running?");

	if (hint == NULL) /* not a missing or dead socket: the reason says */
		return cli_say(CLI_EXIT_PROTO, "%s", msg);
	*hint = '\0';
	(void)cli_say(0, "%s", msg);
	return cli_say(CLI_EXIT_PROTO,
	    "is skillbrokerd running? Start it as root: skillbrokerd -f "
	    "CONFIG (it listens on the config's socket:). %s is %s; -s "
	    "SOCKET or $%s names another",
	    path, conn_socket_origin(sock, path), SKILLBROKER_SOCKET_ENV);
}

/*
 * Connect to the socket sock (NULL: conn_socket_path's choice), asking on
 * tty (-1: approvals are not answered); the exit status, CLI_EXIT_OK
 * with cc->c open, else what was printed says why.
 */
int
cli_open(struct cli_conn *cc, const char *sock, int tty, int format)
{
	const char *path = conn_socket_path(sock);
	enum sb_err err = SB_ERR_CONNECT;
	char msg[SB_ERRMSG_MAX];

	memset(cc, 0, sizeof(*cc));
	cc->tty = tty;
	cc->format = format;
	cc->c = sb_connect(
	    path, tty != -1 ? conn_ask : NULL, cc, &err, msg, sizeof(msg));
	if (cc->c != NULL) {
		sb_set_notice(cc->c, conn_notice, cc);
		return CLI_EXIT_OK;
	}
	if (err != SB_OK && err <= SB_ERR_UNKNOWN)
		return conn_refused(err, msg, format);
	if (err == SB_ERR_CONNECT) /* the library names the socket */
		return conn_unreachable(sock, path, msg);
	/* the hello was not answered: our request was never sent */
	return cli_say(CLI_EXIT_PROTO, "cannot connect to %s: %s", path, msg);
}

/* Close the connection cli_open made. */
void
cli_close(struct cli_conn *cc)
{
	sb_close(cc->c);
	cc->c = NULL;
}

/* A value the library would not put in a request: -1, e says which. */
static int
req_refused(struct error *e, const char *what)
{
	return error_set(e, ERR_BAD_REQUEST,
	    "%s: not a value the protocol takes (empty, too long, not "
	    "UTF-8, or one too many)",
	    what);
}

/* The skill's arguments and environment, each as the library takes it. */
static int
req_lists(struct sb_req *req, const struct client_req *r, struct error *e)
{
	char what[32], *key;
	const char *eq;
	size_t i;
	int bad;

	for (i = 0; i < r->nargs; i++)
		if (sb_req_arg(req, r->args[i]) == -1) {
			(void)snprintf(
			    what, sizeof(what), "argument %zu", i + 1);
			return req_refused(e, what);
		}
	for (i = 0; i < r->nenv; i++) {
		if ((eq = strchr(r->env[i], '=')) == NULL)
			return req_refused(e, "--env");
		key = xstrndup(r->env[i], (size_t)(eq - r->env[i]));
		bad = sb_req_env(req, key, eq + 1) == -1;
		free(key);
		if (bad)
			return req_refused(e, "--env");
	}
	return 0;
}

/* invoke and authorize: what runs, and how. */
static int
req_call(struct sb_req *req, const struct client_req *r, struct error *e)
{
	/* an empty COMMAND is the skill's default, as it always was */
	if (r->command != NULL && *r->command != '\0' &&
	    sb_req_command(req, r->command) == -1)
		return req_refused(e, "COMMAND");
	if (r->phase != NULL && sb_req_phase(req, r->phase) == -1)
		return req_refused(e, "--phase");
	if (r->timeout_ms != 0 && sb_req_timeout(req, r->timeout_ms) == -1)
		return req_refused(e, "--timeout");
	if (r->stdin_data != NULL &&
	    sb_req_stdin(req, r->stdin_data, r->stdin_len) == -1)
		return req_refused(e, "the stdin");
	return req_lists(req, r, e);
}

/* The fields of the other request types (and a call's skill, session). */
static int
req_fields(struct sb_req *req, const struct client_req *r, struct error *e)
{
	if (r->skill != NULL && sb_req_skill(req, r->skill) == -1)
		return req_refused(e, "SKILL");
	if (r->session != NULL && sb_req_session(req, r->session) == -1)
		return req_refused(e, "--session");
	if (r->references && sb_req_references(req, 1) == -1)
		return req_refused(e, "--references");
	if (r->rid.str != NULL && sb_req_target(req, r->rid.str) == -1)
		return req_refused(e, "REQUEST_ID");
	if (r->approval_id != NULL &&
	    sb_req_approval(req, r->approval_id, conn_answer(r->option)) == -1)
		return req_refused(e, "APPROVAL_ID");
	if (r->path != NULL && sb_req_path(req, r->path) == -1)
		return req_refused(e, "PATH");
	return 0;
}

/*
 * The request r as the library sends it, under r's id (skillctl-PID-1;
 * cancel's target as typed, in rid.str); NULL with e set when a value
 * is not one the protocol takes: refused before anything is sent.
 */
struct sb_req *
cli_req(const struct client_req *r, struct error *e)
{
	struct sb_req *req;

	if ((req = sb_req_new(creq_type_name(r->type))) == NULL) {
		error_set(e, ERR_BAD_REQUEST, "no request of type %s",
		    creq_type_name(r->type));
		return NULL;
	}
	if (r->id.str != NULL && sb_req_id(req, r->id.str) == -1)
		(void)req_refused(e, "the request id");
	else if (req_fields(req, r, e) == 0 &&
	         ((r->type != CREQ_INVOKE && r->type != CREQ_AUTHORIZE) ||
	             req_call(req, r, e) == 0))
		return req;
	sb_req_free(req);
	return NULL;
}

/*
 * A call on cc that got no reply, or the broker's word on the whole
 * connection: the message, and the exit status the usage text gives.
 */
int
cli_failed(struct cli_conn *cc)
{
	enum sb_err err = sb_errcode(cc->c);

	/* an error frame with no id ended the connection */
	if (err != SB_OK && err <= SB_ERR_UNKNOWN)
		return conn_refused(err, sb_errmsg(cc->c), cc->format);
	if (err == SB_ERR_USAGE) /* refused before it was sent */
		return cli_say(CLI_EXIT_USAGE, "%s", sb_errmsg(cc->c));
	if (err == SB_ERR_PROTOCOL)
		return cli_say(
		    CLI_EXIT_PROTO, "reading the reply: %s", sb_errmsg(cc->c));
	return cli_say(CLI_EXIT_PROTO, "%s", sb_errmsg(cc->c));
}

/* Send req on cc and wait for its reply (*rep); the exit status. */
int
cli_call(struct cli_conn *cc, struct sb_req *req, struct sb_reply **rep)
{
	if (sb_call(cc->c, req, rep) == -1)
		return cli_failed(cc);
	return CLI_EXIT_OK;
}
