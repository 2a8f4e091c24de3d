/* main.c: skillbroker-mcp, options and start; the rest is mcp_*.c. */
#include "mcp.h"

#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/usage.h"
#include "../lib/util.h"

/* stdin's and stdout's file status flags before the adapter set them */
static int mcp_main_flags[2];

static void
mcp_main_restore(void)
{
	(void)fcntl(STDIN_FILENO, F_SETFL, mcp_main_flags[0]);
	(void)fcntl(STDOUT_FILENO, F_SETFL, mcp_main_flags[1]);
}

static const char mcp_usage[] =
    "usage: skillbroker-mcp [-s SOCKET] [--session NAME] [--poll-s N] [-v] "
    "[-h] [-V]\n"
    "\n"
    "An MCP server on stdio (JSON-RPC 2.0, one message a line) whose tools\n"
    "are the skill commands the skillbroker daemon lets this user run.\n"
    "stdout carries the protocol; logs go to stderr.\n"
    "\n"
    "  -s SOCKET       the broker's socket (else $SKILLBROKER_SOCKET, else\n"
    "                  " SKILLBROKER_SOCKET_DEFAULT ",\n"
    "                  else run/skillbroker.sock when only that exists)\n"
    "  --session NAME  the session calls run in when a call names none\n"
    "                  (default: the broker's, \"default\")\n"
    "  --poll-s N      seconds between checks of the skills for\n"
    "                  notifications/tools/list_changed (default 5; 0: never)\n"
    "  -v              debug logs\n"
    "  -h, --help      this help\n"
    "  -V, --version   the version\n";

/* Usage error: why, then the synopsis; exit 2. */
static void __attribute__((noreturn)) mcp_main_usage(const char *why)
{
	if (why != NULL)
		fprintf(stderr, "skillbroker-mcp: %s\n", why);
	fputs(mcp_usage, stderr);
	exit(2);
}

/* Parse the options, make stdin and stdout non-blocking, and serve. */
int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"session", required_argument, NULL, 'S'},
	    {"poll-s", required_argument, NULL, 'P'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	const char *sock = NULL, *session = NULL;
	struct mcp_server *s;
	uint64_t poll_s = MCP_POLL_S_DEFAULT;
	int ch, verbose = 0;

	while ((ch = getopt_long(argc, argv, "s:vhV", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			sock = optarg;
			break;
		case 'S':
			if (!ident_valid(optarg, MCP_SESSION_MAX))
				mcp_main_usage("--session: 1..64 characters of "
				               "[A-Za-z0-9._-], not . or ..");
			session = optarg;
			break;
		case 'P':
			if (parse_uint(optarg, 0, 86400, &poll_s) == -1)
				mcp_main_usage("--poll-s: seconds, 0..86400");
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			fputs(mcp_usage, stdout);
			return 0;
		case 'V':
			printf("%s %s (MCP %s)\n", MCP_SERVER_NAME,
			    usage_version_string(), MCP_PROTOCOL_LATEST);
			return 0;
		default:
			mcp_main_usage(NULL);
		}
	}
	if (optind != argc)
		mcp_main_usage("no operands are taken");
	log_init(MCP_SERVER_NAME, 1, verbose);
	if (signal(SIGPIPE, SIG_IGN) == SIG_ERR)
		fatal("signal");
	/* the host's (or a terminal's) open files: their flags come back
	 * as they were when the adapter ends */
	if ((mcp_main_flags[0] = fcntl(STDIN_FILENO, F_GETFL)) == -1 ||
	    (mcp_main_flags[1] = fcntl(STDOUT_FILENO, F_GETFL)) == -1 ||
	    atexit(mcp_main_restore) != 0 || set_nonblock(STDIN_FILENO) == -1 ||
	    set_nonblock(STDOUT_FILENO) == -1)
		fatal("stdin and stdout must be open");
	if ((s = calloc(1, sizeof(*s))) == NULL)
		fatal("calloc");
	mcp_server_init(s, sock, session, (unsigned)poll_s);
	ch = mcp_server_run(s);
	mcp_server_free(s);
	return ch;
}
