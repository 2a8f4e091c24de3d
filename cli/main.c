/* main.c: skillctl, the command-line client: arguments and dispatch. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/usage.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/msg.h"
#include "cli.h"

static const char synopsis[] =
    "usage: skillctl [-s SOCKET] invoke SKILL [COMMAND] [OPTIONS] [-- "
    "ARGS...]\n"
    "       skillctl [-s SOCKET] authorize SKILL [COMMAND] [OPTIONS] "
    "[-- ARGS...]\n"
    "       skillctl [-s SOCKET] skills [--json]\n"
    "       skillctl [-s SOCKET] info SKILL [--references] [--json]\n"
    "       skillctl [-s SOCKET] hello [--json]\n"
    "       skillctl [-s SOCKET] reload [--json]\n"
    "       skillctl [-s SOCKET] cancel REQUEST_ID [--json]\n"
    "       skillctl [-s SOCKET] last-result [--session S] [--json]\n"
    "       skillctl [-s SOCKET] session-end [--session S] [--json]\n"
    "       skillctl [-s SOCKET] put [--session S] [--json] LOCAL PATH\n"
    "       skillctl [-s SOCKET] get [--session S] PATH LOCAL\n"
    "       skillctl [-s SOCKET] ls [--session S] [--json]\n"
    "       skillctl [-s SOCKET] rm [--session S] PATH\n"
    "       skillctl [-s SOCKET] approvals [--json]\n"
    "       skillctl [-s SOCKET] approve APPROVAL_ID "
    "yes_once|yes_in_session|no [--json]\n"
    "       skillctl [-s SOCKET] stats [--json | --prometheus]\n"
    "       skillctl policy check [-f CONFIG | POLICY_DIR [SKILLS_DIR...]]\n"
    "       skillctl skill check [-f CONFIG] [--json] DIR\n"
    "       skillctl skill init [-d PARENT] NAME\n"
    "       skillctl audit verify [--head FILE|SEQ:HASH] FILE...\n"
    "       skillctl -h | --help | -V | --version\n";

static const char usage_text[] =
    "\n"
    "options of invoke and authorize:\n"
    "  --session ID     the session to run in (default \"default\")\n"
    "  --phase P        the phase to run in (default \"planning\")\n"
    "  --timeout MS     ask for a run time limit, in milliseconds\n"
    "  --stdin-file F   send the contents of file F as the skill's stdin\n"
    "  --stdin          send skillctl's own stdin (at most 1 MiB)\n"
    "  --env K=V        set an environment variable (repeatable)\n"
    "  --json           print the whole reply as one line of JSON\n"
    "  -- ARGS...       everything after -- goes to the skill as arguments\n"
    "\n"
    "invoke sends no stdin to the skill unless --stdin or --stdin-file\n"
    "says so; when its own stdin is a pipe or file that still holds data\n"
    "after the call, it warns on stderr that the data was not sent (run\n"
    "it with </dev/null to say no stdin is meant).\n"
    "\n"
    "-h or --help after any command prints this help; -V or --version\n"
    "prints the version.\n"
    "\n"
    "The socket is -s SOCKET, else $SKILLBROKER_SOCKET, else\n"
    "/run/skillbroker/skillbroker.sock, or run/skillbroker.sock in the\n"
    "current directory when only that one exists. The daemon listens on\n"
    "the socket: of its config (skillbrokerd -f CONFIG, as root).\n"
    "\n"
    "Exit status:\n"
    "  0      success (invoke: the skill exited 0)\n"
    "  1-255  invoke: the skill's non-zero exit status, or 128+N when a\n"
    "         signal N killed it (these can overlap 2-4; --json tells)\n"
    "  2      usage error, a value the protocol does not take, or\n"
    "         --stdin/--stdin-file input (or put's LOCAL) unreadable or too\n"
    "         big\n"
    "  3      the broker refused or failed the request (ok=false)\n"
    "  4      cannot connect, a protocol error, output (or get's LOCAL)\n"
    "         cannot be written, or a put or get check failed\n"
    "\n"
    "cancel ends a call of the same uid that another skillctl (or client)\n"
    "runs, named by its request id (skillctl's are skillctl-PID-1).\n"
    "last-result prints a session's last invoke result again, as invoke\n"
    "did; session-end ends a session (its work dir and files go).\n"
    "\n"
    "put, get, ls and rm work on a session's files: its work dir, what a\n"
    "skill sees under /work; a PATH is relative to it (-- before a PATH\n"
    "that starts with -). put sends LOCAL (- reads stdin, at most 64 MiB)\n"
    "in chunks and checks the size and sha256 the broker reports; get\n"
    "writes PATH to a new file beside LOCAL and renames it over LOCAL\n"
    "only once its size and sha256 check out (- writes to stdout as the\n"
    "bytes come); ls lists every entry (kind, size, sha256, path); rm\n"
    "removes a file, a link or an empty directory.\n"
    "\n"
    "invoke on a terminal (stdin and stderr) answers approval requests:\n"
    "an ask rule shows the call and its permissions, and asks on\n"
    "/dev/tty for [o]nce, [s]ession or [n]o. Elsewhere it does not, and\n"
    "an ask rule denies the call (approval_denied). approvals lists the\n"
    "approvals waiting for an answer (an admin principal sees all);\n"
    "approve answers one: from an admin principal, for any client that\n"
    "answers approvals.\n"
    "\n"
    "stats prints the broker's counters and latency percentiles (estimates\n"
    "from histogram buckets); --prometheus prints them in the Prometheus\n"
    "text format (0.0.4), for a scraper or node_exporter's textfile\n"
    "collector.\n"
    "\n"
    "info shows a skill you may run: its description, its commands (and\n"
    "which you may run), the permissions you would get, its instructions\n"
    "(SKILL.md after the frontmatter) and the files in its references/\n"
    "directory; --references adds their text.\n"
    "\n"
    "reload asks policyd to load its policy files and skills again (admin\n"
    "principals only). policy check lints policy files and skill\n"
    "directories offline with the daemon's own parser: it prints\n"
    "FILE:LINE: MESSAGE lines and exits 1 if anything is invalid.\n"
    "\n"
    "skill check loads one skill directory offline as policyd would and\n"
    "prints its errors and warnings as DIR/FILE:LINE: lines, then its\n"
    "commands, what runs each, its permissions and limits; it exits 0 if\n"
    "the skill is valid (warnings allowed), 1 if not. skill init creates\n"
    "PARENT/NAME, a skeleton that skill check passes (exit 1 if it\n"
    "exists). skillctl skill -h says more.\n"
    "\n"
    "audit verify checks audit log files (one, or a rotated series in any\n"
    "order) offline: every line's hash, the chain from line to line and\n"
    "file to file, and with --head (the daemon's state_dir/audit.head, or\n"
    "SEQ:HASH kept elsewhere) that no record was cut off the end. It\n"
    "names the first bad event.sequence and exits 1 if the chain is\n"
    "broken.\n";

struct opts {
	const char *sock;
	int json, prometheus, from_stdin;
	const char *stdin_file;
	const char *local; /* put's source, get's target */
	struct client_req req;
};

/* --help: the full text on stdout. */
static void __attribute__((noreturn)) usage_help(void)
{
	fputs(synopsis, stdout);
	fputs(usage_text, stdout);
	exit(0);
}

/* A usage error: what was wrong, then the synopsis, exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2)))
usage_err(const char *fmt, ...)
{
	va_list ap;

	fputs("skillctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n", stderr);
	fputs(synopsis, stderr);
	fputs("(skillctl -h for the options and exit statuses)\n", stderr);
	exit(CLI_EXIT_USAGE);
}

/* The value of --name VALUE or --name=VALUE; NULL if argv[*i] is not it. */
static const char *
opt_value(const char *name, int argc, char **argv, int *i)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc)
		usage_err("option %s needs a value", name);
	return argv[++*i];
}

/* --env K=V: a later K replaces an earlier one, as env(1) does. */
static void
add_env(struct client_req *r, const char *kv)
{
	const char *eq = strchr(kv, '=');
	size_t kl, i;

	if (eq == NULL || eq == kv)
		usage_err("--env wants KEY=VALUE, not \"%s\"", kv);
	kl = (size_t)(eq - kv) + 1;
	for (i = 0; i < r->nenv; i++)
		if (strncmp(r->env[i], kv, kl) == 0) {
			free(r->env[i]);
			r->env[i] = xstrdup(kv);
			return;
		}
	if (r->nenv >= CLIENT_ENV_MAX)
		usage_err("at most %d --env options", CLIENT_ENV_MAX);
	r->env = xreallocarray(r->env, r->nenv + 2, sizeof(char *));
	r->env[r->nenv++] = xstrdup(kv);
	r->env[r->nenv] = NULL;
}

/* Replace *slot with a copy of v (a repeated option: the last wins). */
static void
set_str(char **slot, const char *v)
{
	free(*slot);
	*slot = xstrdup(v);
}

/* One option of invoke/authorize at argv[*i]; 0 if it is none of them. */
static int
call_option(struct opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;

	if ((v = opt_value("--session", argc, argv, i)) != NULL)
		set_str(&o->req.session, v);
	else if ((v = opt_value("--phase", argc, argv, i)) != NULL)
		set_str(&o->req.phase, v);
	else if ((v = opt_value("--timeout", argc, argv, i)) != NULL) {
		if (parse_uint(v, 1, 86400000, &o->req.timeout_ms) == -1)
			usage_err(
			    "--timeout wants 1..86400000 ms, not \"%s\"", v);
	} else if ((v = opt_value("--stdin-file", argc, argv, i)) != NULL)
		o->stdin_file = v;
	else if ((v = opt_value("--env", argc, argv, i)) != NULL)
		add_env(&o->req, v);
	else if (strcmp(a, "--stdin") == 0)
		o->from_stdin = 1;
	else if (strcmp(a, "--json") == 0)
		o->json = 1;
	else
		return 0;
	return 1;
}

/* Everything after --: the skill's arguments, copied. */
static void
take_args(struct client_req *r, int argc, char **argv, int first)
{
	int i;

	if (first >= argc)
		return;
	r->args = xcalloc((size_t)(argc - first) + 1, sizeof(char *));
	for (i = first; i < argc; i++)
		r->args[r->nargs++] = xstrdup(argv[i]);
}

/* invoke/authorize SKILL [COMMAND] [options] [-- ARGS...]. */
static void
parse_call(struct opts *o, int argc, char **argv)
{
	const char *verb = argv[0];
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			take_args(&o->req, argc, argv, i + 1);
			break;
		}
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			usage_help();
		if (call_option(o, argc, argv, &i))
			continue;
		if (argv[i][0] == '-')
			usage_err("unknown option \"%s\"", argv[i]);
		if (o->req.skill == NULL)
			o->req.skill = xstrdup(argv[i]);
		else if (o->req.command == NULL)
			o->req.command = xstrdup(argv[i]);
		else
			usage_err("unexpected \"%s\"; skill arguments go "
			          "after --",
			    argv[i]);
	}
	if (o->req.skill == NULL)
		usage_err("%s needs a SKILL", verb);
	if (o->from_stdin && o->stdin_file != NULL)
		usage_err("--stdin and --stdin-file exclude each other");
}

/* skills/hello take --json and nothing else. */
static void
parse_plain(struct opts *o, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			usage_help();
		if (strcmp(argv[i], "--json") == 0)
			o->json = 1;
		else
			usage_err("%s takes no \"%s\"", argv[0], argv[i]);
	}
}

/* stats [--json | --prometheus]. */
static void
parse_stats(struct opts *o, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			usage_help();
		if (strcmp(argv[i], "--json") == 0)
			o->json = 1;
		else if (strcmp(argv[i], "--prometheus") == 0)
			o->prometheus = 1;
		else
			usage_err("stats takes no \"%s\"", argv[i]);
	}
	if (o->json && o->prometheus)
		usage_err("--json and --prometheus exclude each other");
}

/* info SKILL [--references] [--json]. */
static void
parse_info(struct opts *o, int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			usage_help();
		if (strcmp(argv[i], "--json") == 0)
			o->json = 1;
		else if (strcmp(argv[i], "--references") == 0)
			o->req.references = 1;
		else if (argv[i][0] == '-')
			usage_err("unknown option \"%s\"", argv[i]);
		else if (o->req.skill == NULL)
			o->req.skill = xstrdup(argv[i]);
		else
			usage_err(
			    "info takes one SKILL, not also \"%s\"", argv[i]);
	}
	if (o->req.skill == NULL)
		usage_err("info needs a SKILL");
}

/* last-result, session-end: [--session S] [--json]. */
static void
parse_session_op(struct opts *o, int argc, char **argv)
{
	const char *val;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0)
			usage_help();
		if (strcmp(argv[i], "--json") == 0)
			o->json = 1;
		else if ((val = opt_value("--session", argc, argv, &i)) != NULL)
			set_str(&o->req.session, val);
		else
			usage_err("%s takes no \"%s\"", argv[0], argv[i]);
	}
}

/*
 * put LOCAL PATH, get PATH LOCAL, ls, rm PATH: [--session S], --json
 * for put and ls; after --, operands only (a PATH may start with -).
 */
static void
parse_files(struct opts *o, int argc, char **argv)
{
	const char *v = argv[0], *val, *arg[2] = {NULL, NULL}, *path;
	int put = strcmp(v, "put") == 0, get = strcmp(v, "get") == 0;
	int ls = strcmp(v, "ls") == 0, json = put || ls;
	int i, n = 0, nargs = put || get ? 2 : ls ? 0 : 1, ended = 0;
	struct error e;

	o->req.type = put   ? CREQ_PUT_FILE
	              : get ? CREQ_GET_FILE
	              : ls  ? CREQ_LIST_FILES
	                    : CREQ_DELETE_FILE;
	for (i = 1; i < argc; i++) {
		if (!ended && (strcmp(argv[i], "-h") == 0 ||
		                  strcmp(argv[i], "--help") == 0))
			usage_help();
		if (!ended && strcmp(argv[i], "--") == 0)
			ended = 1;
		else if (!ended && json && strcmp(argv[i], "--json") == 0)
			o->json = 1;
		else if (!ended &&
		         (val = opt_value("--session", argc, argv, &i)) != NULL)
			set_str(&o->req.session, val);
		else if ((!ended && argv[i][0] == '-' && argv[i][1] != '\0') ||
		         n == nargs)
			usage_err("%s takes no \"%s\"", v, argv[i]);
		else
			arg[n++] = argv[i];
	}
	if (n < nargs)
		usage_err("%s needs %s", v,
		    put   ? "a LOCAL and a PATH"
		    : get ? "a PATH and a LOCAL"
		          : "a PATH");
	if (ls)
		return;
	path = arg[put ? 1 : 0];
	if (client_path_check(path, strlen(path), &e) == -1)
		usage_err("%s", e.msg);
	o->req.path = xstrdup(path);
	if (put || get) {
		o->local = arg[put ? 0 : 1];
		if (*o->local == '\0')
			usage_err("%s: LOCAL is empty (- for std%s)", v,
			    put ? "in" : "out");
	}
}

/*
 * policy check [-f CONFIG | POLICY_DIR [SKILLS_DIR...]]: checked here,
 * so that -h is help and -x an unknown option, never a directory.
 */
static void __attribute__((noreturn)) parse_policy(int argc, char **argv)
{
	struct stat st;
	int i;

	for (i = 1; i < argc; i++)
		if (usage_is_help(argv[i]))
			usage_help();
	if (argc < 2 || strcmp(argv[1], "check") != 0)
		usage_err("policy wants the subcommand \"check\"");
	if (argc > 2 && strcmp(argv[2], "-f") == 0) {
		if (argc == 3)
			usage_err("-f needs a CONFIG");
		if (argc > 4)
			usage_err(
			    "policy check -f CONFIG takes no \"%s\"", argv[4]);
	} else
		for (i = 2; i < argc; i++)
			if (argv[i][0] == '-')
				usage_err("policy check: unknown option \"%s\" "
				          "(a directory named so: ./%s)",
				    argv[i], argv[i]);
	/* the default is the source tree's: elsewhere, say what to give */
	if (argc == 2 && stat(CLI_POLICY_DIR_DEV, &st) == -1)
		usage_err("policy check: no POLICY_DIR given, and no %s here "
		          "(a source tree's): name a directory, or -f CONFIG "
		          "(the daemon's skillbroker.yaml)",
		    CLI_POLICY_DIR_DEV);
	exit(cli_policy_check(argc - 2, argv + 2));
}

/* The subcommand names the request type. */
static void
parse_verb(struct opts *o, int argc, char **argv)
{
	const char *v = argv[0];
	int i;

	if (strcmp(v, "invoke") == 0 || strcmp(v, "authorize") == 0) {
		o->req.type = v[0] == 'i' ? CREQ_INVOKE : CREQ_AUTHORIZE;
		parse_call(o, argc, argv);
	} else if (strcmp(v, "skills") == 0 || strcmp(v, "hello") == 0 ||
	           strcmp(v, "reload") == 0) {
		o->req.type = v[0] == 's'   ? CREQ_SKILLS
		              : v[0] == 'h' ? CREQ_HELLO
		                            : CREQ_RELOAD;
		parse_plain(o, argc, argv);
	} else if (strcmp(v, "cancel") == 0) {
		o->req.type = CREQ_CANCEL;
		if (argc > 1 && usage_is_help(argv[1]))
			usage_help();
		if (argc < 2 || argv[1][0] == '-')
			usage_err("cancel needs a REQUEST_ID");
		o->req.rid.str = xstrdup(argv[1]); /* the library reads it */
		parse_plain(o, argc - 1, argv + 1);
	} else if (strcmp(v, "last-result") == 0 ||
	           strcmp(v, "session-end") == 0) {
		o->req.type = v[0] == 'l' ? CREQ_LAST_RESULT : CREQ_SESSION_END;
		parse_session_op(o, argc, argv);
	} else if (strcmp(v, "put") == 0 || strcmp(v, "get") == 0 ||
	           strcmp(v, "ls") == 0 || strcmp(v, "rm") == 0)
		parse_files(o, argc, argv);
	else if (strcmp(v, "approvals") == 0) {
		o->req.type = CREQ_APPROVALS;
		parse_plain(o, argc, argv);
	} else if (strcmp(v, "approve") == 0) {
		o->req.type = CREQ_APPROVE;
		if ((argc > 1 && usage_is_help(argv[1])) ||
		    (argc > 2 && usage_is_help(argv[2])))
			usage_help();
		if (argc < 3 || argv[1][0] == '-' || argv[2][0] == '-')
			usage_err("approve needs an APPROVAL_ID and an option");
		if (strlen(argv[1]) > CLIENT_APPROVAL_ID_MAX)
			usage_err("\"%.40s...\" is no approval id", argv[1]);
		o->req.approval_id = xstrdup(argv[1]);
		if ((o->req.option = client_approval_parse(argv[2])) ==
		    CLIENT_APPROVAL_NONE)
			usage_err("the option is yes_once, yes_in_session or "
			          "no, not \"%s\"",
			    argv[2]);
		parse_plain(o, argc - 2, argv + 2);
	} else if (strcmp(v, "stats") == 0) {
		o->req.type = CREQ_STATS;
		parse_stats(o, argc, argv);
	} else if (strcmp(v, "info") == 0) {
		o->req.type = CREQ_SKILL_INFO;
		parse_info(o, argc, argv);
	} else if (strcmp(v, "policy") == 0)
		parse_policy(argc, argv);
	else if (strcmp(v, "skill") == 0)
		exit(cli_skill(argc - 1, argv + 1));
	else if (strcmp(v, "audit") == 0) {
		/* -h anywhere before --: a FILE named -h is ./-h */
		for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
			if (usage_is_help(argv[i]))
				usage_help();
		if (argc < 2 || strcmp(argv[1], "verify") != 0)
			usage_err("audit wants the subcommand \"verify\"");
		exit(cli_audit(argc - 1, argv + 1));
	} else if (strcmp(v, "help") == 0)
		usage_help();
	else
		usage_err("unknown command \"%s\"", v);
}

/* [-s SOCKET] [-h] [-V] VERB ...: global options stop at the verb. */
static void
parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+s:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			o->sock = optarg;
			break;
		case 'h':
			usage_help();
		case 'V':
			usage_version("skillctl");
			exit(0);
		default:
			if (optopt == 's')
				usage_err("-s needs a SOCKET");
			if (optopt ==
			    0) /* a long option getopt does not know */
				usage_err(
				    "unknown option \"%s\"", argv[optind - 1]);
			usage_err("unknown option \"-%c\"", optopt);
		}
	}
	if (optind >= argc)
		usage_err("no command given");
	parse_verb(o, argc - optind, argv + optind);
}

/* --stdin or --stdin-file: the bytes for the request's stdin field. */
static void
load_stdin(struct opts *o)
{
	const char *name = o->from_stdin ? "stdin" : o->stdin_file;
	struct error e;
	int fd = 0, r;

	if (!o->from_stdin && o->stdin_file == NULL)
		return;
	if (o->stdin_file != NULL && strcmp(o->stdin_file, "-") != 0 &&
	    (fd = open(o->stdin_file, O_RDONLY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "skillctl: %s: %s\n", name, strerror(errno));
		exit(CLI_EXIT_USAGE);
	}
	r = cli_read_all(
	    fd, CLI_STDIN_MAX, &o->req.stdin_data, &o->req.stdin_len, &e);
	if (fd != 0)
		close(fd);
	if (r == -1) {
		fprintf(stderr, "skillctl: reading %s: %s\n", name, e.msg);
		exit(CLI_EXIT_USAGE);
	}
}

/*
 * The terminal to ask on, when invoke runs on one (stdin and stderr);
 * else -1: this client does not answer approvals.
 */
static int
open_tty(const struct opts *o)
{
	if (o->req.type != CREQ_INVOKE || !isatty(0) || !isatty(2))
		return -1;
	return open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
}

/* The output format the options ask for. */
static int
out_format(const struct opts *o)
{
	if (o->prometheus)
		return CLI_OUT_PROMETHEUS;
	return o->json ? CLI_OUT_JSON : CLI_OUT_HUMAN;
}

/*
 * On a connection: hello's reply (the library's own), or req sent and
 * its reply printed; the exit status.
 */
static int
run_on(struct cli_conn *cc, const struct opts *o, struct sb_req *req)
{
	struct sb_reply *rep = NULL;
	int status;

	if (req == NULL)
		return cli_print_reply(sb_reply_object(sb_hello(cc->c)),
		    CREQ_HELLO, out_format(o), stdout, stderr);
	if ((status = cli_call(cc, req, &rep)) == CLI_EXIT_OK)
		status = cli_print_reply(sb_reply_object(rep), o->req.type,
		    out_format(o), stdout, stderr);
	sb_reply_free(rep);
	return status;
}

/* Build the request, connect, send, print; the exit status. */
static int
run(struct opts *o)
{
	struct sb_req *req = NULL;
	struct cli_conn cc;
	struct error e;
	int status, tty;

	if (creq_is_file(o->req.type))
		return cli_files_run(o->sock, &o->req, o->local, out_format(o));
	/* a value the protocol does not take is refused before connecting */
	if (o->req.type != CREQ_HELLO && (req = cli_req(&o->req, &e)) == NULL)
		return cli_say(CLI_EXIT_USAGE, "%s", e.msg);
	tty = open_tty(o);
	if ((status = cli_open(&cc, o->sock, tty, out_format(o))) ==
	    CLI_EXIT_OK) {
		status = run_on(&cc, o, req);
		cli_close(&cc);
	}
	if (tty != -1 && close(tty) == -1)
		fprintf(stderr, "skillctl: /dev/tty: %s\n", strerror(errno));
	sb_req_free(req);
	return status;
}

/*
 * invoke without --stdin or --stdin-file sends no stdin, and reads none
 * (a loop's input stays the loop's): when its stdin is a pipe or a file
 * that still holds data after the call, say that it was not sent.
 */
static void
stdin_unsent_warn(const struct opts *o)
{
	struct stat st;
	off_t pos;
	int n = 0;

	if (o->req.type != CREQ_INVOKE || o->from_stdin ||
	    o->stdin_file != NULL || fstat(0, &st) == -1)
		return;
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		if (ioctl(0, FIONREAD, &n) == -1 || n <= 0)
			return;
	} else if (!S_ISREG(st.st_mode) ||
	           (pos = lseek(0, 0, SEEK_CUR)) == -1 || pos >= st.st_size)
		return;
	fputs("skillctl: warning: stdin holds data that was not sent to the "
	      "skill: --stdin sends it (</dev/null: none meant)\n",
	    stderr);
}

/* Parse, send, print; a failed write to stdout is an error too. */
int
main(int argc, char **argv)
{
	struct opts o;
	int status;

	log_init("skillctl", 1, 0);
	memset(&o, 0, sizeof(o));
	parse_args(&o, argc, argv);
	load_stdin(&o);
	xasprintf(&o.req.id.str, "skillctl-%d-1", (int)getpid());
	status = run(&o);
	stdin_unsent_warn(&o);
	client_req_free(&o.req);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(
		    stderr, "skillctl: writing output: %s\n", strerror(errno));
		return CLI_EXIT_PROTO;
	}
	return status;
}
