/*
 * cli_files.c: skillctl put, get, ls and rm, on the files of a session
 * (its work dir, what a skill sees under /work). The transfers are the
 * library's (sb_put_from, sb_get_to: chunks of the size hello allows,
 * every reply's size and sha256 checked against the bytes); here are
 * their ends: put's source (a regular file read as it goes, or stdin
 * read whole), get's target (a temporary file beside LOCAL, renamed
 * over it only once the copy is whole and checked, removed by a signal
 * that ends skillctl), and what the user sees. The paths of a listing
 * are a skill's choice: they are shown through cli_put_safe.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

/* put - reads stdin whole first: at most what a work dir holds by default */
#define CLI_FILES_STDIN_MAX (64 * 1024 * 1024)
#define CLI_FILES_SHA_HEX 64  /* hex digits of a sha256 */
#define CLI_FILES_SHOWN 12    /* of them in a listing */
#define CLI_FILES_KIND_MAX 16 /* bytes of an entry's kind */
#define CLI_FILES_TMP_TRIES 16

/* put's source: a regular file read as it goes, or stdin read whole. */
struct files_src {
	int fd;       /* the file, or -1: the bytes are in mem */
	uint8_t *mem; /* stdin's bytes */
	size_t len, off;
	int err; /* errno of a read of the file that failed */
};

/* get's target: the temporary file, or stdout. */
struct files_sink {
	int fd;
	int err; /* errno of a write that failed */
};

/* get's temporary file, which a signal that ends skillctl removes. */
static char *volatile cli_files_tmp;

/* "skillctl: MESSAGE" on stderr (controls as ?); returns status. */
static int
files_say(int status, const struct error *e)
{
	return cli_say(status, "%s", e->msg);
}

/* A syscall that failed after the work was done: noted, no more. */
static void
files_warn(const char *what)
{
	fprintf(stderr, "skillctl: %s: %s\n", what, strerror(errno));
}

/* Read fd to EOF, refusing more than max bytes; *out is never NULL. */
int
cli_read_all(int fd, size_t max, uint8_t **out, size_t *outlen, struct error *e)
{
	size_t cap = 65536, len = 0;
	uint8_t *buf = xmalloc(cap);
	ssize_t n;

	for (;;) {
		if (len == cap) {
			buf = xreallocarray(buf, 2, cap);
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			free(buf);
			return error_set(
			    e, ERR_INTERNAL, "%s", strerror(errno));
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			free(buf);
			return error_set(
			    e, ERR_BAD_REQUEST, "more than %zu bytes", max);
		}
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* The session a file request names: the broker's default if none. */
static const char *
files_session(const struct client_req *req)
{
	return req->session != NULL ? req->session : "default";
}

/*
 * A transfer the library ended without the whole copy (its source or
 * sink failed: the caller says that): the broker's refusal, its reply
 * in last, printed as any refusal is; a check on what came, in the
 * library's words; else what ended the connection.
 */
static int
files_failed(struct cli_conn *cc, const struct sb_reply *last, enum creq_type t)
{
	if (last != NULL && !sb_reply_ok(last))
		return cli_print_reply(
		    sb_reply_object(last), t, cc->format, stdout, stderr);
	/* a reply that failed a check; or no put_file in hello's limits */
	if (last != NULL || sb_errcode(cc->c) == SB_ERR_UNSUPPORTED)
		return cli_say(CLI_EXIT_PROTO, "%s", sb_errmsg(cc->c));
	return cli_failed(cc);
}

/* Open put's source: LOCAL a regular file, or "-" for stdin. */
static int
files_src_open(struct files_src *s, const char *local, struct error *e)
{
	struct error fe;
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (strcmp(local, "-") == 0) {
		if (cli_read_all(STDIN_FILENO, CLI_FILES_STDIN_MAX, &s->mem,
		        &s->len, &fe) == 0)
			return 0;
		if (fe.type == ERR_BAD_REQUEST)
			return error_set(e, ERR_BAD_REQUEST,
			    "stdin: more than 64 MiB, the most put reads from "
			    "stdin (and the most a session's work dir holds "
			    "by default)");
		return error_set(e, ERR_INTERNAL, "reading stdin: %s", fe.msg);
	}
	/* O_NONBLOCK: a FIFO must not hold the open; it is refused below */
	if ((s->fd = open(
	         local, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) == -1)
		return error_set(
		    e, ERR_BAD_REQUEST, "%s: %s", local, strerror(errno));
	if (fstat(s->fd, &st) == -1)
		error_set(e, ERR_BAD_REQUEST, "%s: %s", local, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		error_set(e, ERR_BAD_REQUEST,
		    "%s: not a regular file (- reads stdin)", local);
	else
		return 0;
	if (close(s->fd) == -1)
		files_warn("closing the local file");
	s->fd = -1;
	return -1;
}

/* Release put's source. */
static void
files_src_close(struct files_src *s)
{
	if (s->fd != -1 && close(s->fd) == -1)
		files_warn("closing the local file");
	s->fd = -1;
	free(s->mem);
	s->mem = NULL;
}

/* sb_source: the next bytes of the file, or of stdin's copy. */
static ssize_t
files_src_read(void *arg, void *buf, size_t max)
{
	struct files_src *s = arg;
	size_t n;
	ssize_t r;

	if (s->fd == -1) {
		n = s->len - s->off < max ? s->len - s->off : max;
		if (n > 0)
			memcpy(buf, s->mem + s->off, n);
		s->off += n;
		return (ssize_t)n;
	}
	while ((r = read(s->fd, buf, max)) == -1 && errno == EINTR)
		continue;
	if (r == -1)
		s->err = errno;
	return r;
}

/* "PATH: N bytes, sha256 HEX": the last reply of a whole copy. */
static void
files_summary(const char *path, const struct sb_reply *last)
{
	const char *sha = sb_reply_str(last, "sha256");
	uint64_t size = 0;

	/* the library checked both against the bytes */
	(void)sb_reply_uint(last, "size_bytes", &size);
	cli_put_safe(stdout, path);
	printf(
	    ": %" PRIu64 " bytes, sha256 %s\n", size, sha != NULL ? sha : "-");
}

/* put on an open connection: the library's chunks from src. */
static int
files_put_send(struct cli_conn *cc, const struct client_req *req,
    struct files_src *src, const char *local, int format)
{
	struct sb_reply *last = NULL;
	uint64_t done = 0;
	int status = CLI_EXIT_OK;

	if (sb_put_from(cc->c, files_session(req), req->path, files_src_read,
	        src, &done, &last) == 0) {
		if (format == CLI_OUT_JSON)
			status = cli_print_reply(sb_reply_object(last),
			    CREQ_PUT_FILE, format, stdout, stderr);
		else
			files_summary(req->path, last);
	} else if (sb_errcode(cc->c) == SB_ERR_IO)
		status = cli_say(CLI_EXIT_USAGE, "reading the local file: %s",
		    strerror(src->err));
	else
		status = files_failed(cc, last, CREQ_PUT_FILE);
	if (status != CLI_EXIT_OK && done > 0)
		(void)cli_say(status,
		    "%s is not a whole copy of %s (%" PRIu64
		    " bytes were put): put it again, or rm it",
		    req->path, strcmp(local, "-") == 0 ? "stdin" : local, done);
	sb_reply_free(last);
	return status;
}

/* put [--json] LOCAL PATH: LOCAL open first, then the connection. */
static int
files_put(const char *sock, const struct client_req *req, const char *local,
    int format)
{
	struct files_src src;
	struct cli_conn cc;
	struct error e;
	int status;

	if (files_src_open(&src, local, &e) == -1)
		return files_say(CLI_EXIT_USAGE, &e);
	if ((status = cli_open(&cc, sock, -1, format)) == CLI_EXIT_OK) {
		status = files_put_send(&cc, req, &src, local, format);
		cli_close(&cc);
	}
	files_src_close(&src);
	return status;
}

/* A signal that ends skillctl mid-get takes the temporary file along. */
static void
files_on_signal(int sig)
{
	char *p = cli_files_tmp;

	if (p != NULL)
		(void)unlink(p); /* a handler has nobody to tell */
	(void)raise(sig);        /* SA_RESETHAND: the default action */
}

/* Catch (act) or restore (old) the signals that end skillctl. */
static int
files_signals(const struct sigaction *act, struct sigaction *old, int restore)
{
	static const int sigs[] = {SIGHUP, SIGINT, SIGTERM};
	size_t i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], restore ? &old[i] : act,
		        restore ? NULL : &old[i]) == -1)
			return -1;
	return 0;
}

/*
 * A new file beside LOCAL (O_EXCL, 0644 less the umask), its name in
 * *tmp and in cli_files_tmp for the signal handler; signals are held
 * until both name it.
 */
static int
files_tmp_open(const char *local, char **tmp, int *fdp, struct error *e)
{
	const char *slash = strrchr(local, '/');
	int dirlen = slash != NULL ? (int)(slash - local) + 1 : 0;
	sigset_t ends, old;
	uint8_t rnd[6];
	char hex[sizeof(rnd) * 2 + 1];
	struct stat st;
	int i, fd, saved;

	if (strlen(local) > PATH_MAX)
		return error_set(e, ERR_INTERNAL, "%.64s...: %s", local,
		    strerror(ENAMETOOLONG));
	if (stat(local, &st) == 0 && S_ISDIR(st.st_mode))
		return error_set(
		    e, ERR_INTERNAL, "%s: %s", local, strerror(EISDIR));
	if (sigemptyset(&ends) == -1 || sigaddset(&ends, SIGHUP) == -1 ||
	    sigaddset(&ends, SIGINT) == -1 || sigaddset(&ends, SIGTERM) == -1)
		return error_set(
		    e, ERR_INTERNAL, "sigset: %s", strerror(errno));
	for (i = 0; i < CLI_FILES_TMP_TRIES; i++) {
		if (random_bytes(rnd, sizeof(rnd)) == -1)
			return error_set(
			    e, ERR_INTERNAL, "getrandom: %s", strerror(errno));
		hex_encode(rnd, sizeof(rnd), hex);
		xasprintf(tmp, "%.*s.skillctl-get.%s", dirlen, local, hex);
		if (sigprocmask(SIG_BLOCK, &ends, &old) == -1) {
			saved = errno;
			free(*tmp);
			*tmp = NULL;
			return error_set(e, ERR_INTERNAL, "sigprocmask: %s",
			    strerror(saved));
		}
		fd = open(*tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		saved = errno;
		if (fd != -1)
			cli_files_tmp = *tmp;
		if (sigprocmask(SIG_SETMASK, &old, NULL) == -1 && fd != -1)
			files_warn("sigprocmask");
		if (fd != -1) {
			*fdp = fd;
			return 0;
		}
		free(*tmp);
		*tmp = NULL;
		if (saved != EEXIST)
			return error_set(e, ERR_INTERNAL,
			    "%s: cannot create a file beside it: %s", local,
			    strerror(saved));
	}
	return error_set(
	    e, ERR_INTERNAL, "%s: no free temporary name beside it", local);
}

/* The temporary file made LOCAL: its bytes on disk, then the rename. */
static int
files_tmp_commit(int *out, const char *tmp, const char *local, struct error *e)
{
	int fd = *out;

	*out = -1;
	if (fsync(fd) == -1) {
		error_set(e, ERR_INTERNAL, "%s: %s", local, strerror(errno));
		if (close(fd) == -1)
			files_warn("closing the temporary file");
		return -1;
	}
	if (close(fd) == -1)
		return error_set(
		    e, ERR_INTERNAL, "%s: %s", local, strerror(errno));
	if (rename(tmp, local) == -1)
		return error_set(
		    e, ERR_INTERNAL, "%s: %s", local, strerror(errno));
	return 0;
}

/* sb_sink: the bytes to the temporary file, or stdout, as they come. */
static int
files_sink_write(void *arg, const void *data, size_t len)
{
	struct files_sink *s = arg;

	if (write_full(s->fd, data, len) == -1) {
		s->err = errno;
		return -1;
	}
	return 0;
}

/*
 * get on an open connection, into out (tmp: the temporary file's name,
 * renamed over LOCAL once the copy is whole; NULL: stdout).
 */
static int
files_get_recv(struct cli_conn *cc, const struct client_req *req, int *out,
    const char *tmp, const char *local)
{
	struct files_sink sink = {*out, 0};
	struct sb_reply *last = NULL;
	struct error e;
	int status = CLI_EXIT_OK;

	if (sb_get_to(cc->c, files_session(req), req->path, files_sink_write,
	        &sink, &last) == 0) {
		if (tmp != NULL && files_tmp_commit(out, tmp, local, &e) == -1)
			status = files_say(CLI_EXIT_PROTO, &e);
		else if (tmp != NULL)
			files_summary(req->path, last);
	} else if (sb_errcode(cc->c) == SB_ERR_IO)
		status = cli_say(CLI_EXIT_PROTO, "writing %s: %s",
		    tmp == NULL ? "stdout" : "the local file",
		    strerror(sink.err));
	else
		status = files_failed(cc, last, CREQ_GET_FILE);
	sb_reply_free(last);
	return status;
}

/* get PATH LOCAL: LOCAL whole and checked, or untouched. */
static int
files_get(const char *sock, const struct client_req *req, const char *local)
{
	struct sigaction act, old[3];
	struct cli_conn cc;
	struct error e;
	char *tmp = NULL;
	int out = STDOUT_FILENO, caught = 0, status;

	memset(&act, 0, sizeof(act));
	act.sa_handler = files_on_signal;
	act.sa_flags = SA_RESETHAND;
	if (strcmp(local, "-") != 0) {
		if (sigemptyset(&act.sa_mask) == -1 ||
		    files_signals(&act, old, 0) == -1) {
			error_set(
			    &e, ERR_INTERNAL, "sigaction: %s", strerror(errno));
			return files_say(CLI_EXIT_PROTO, &e);
		}
		caught = 1;
		if (files_tmp_open(local, &tmp, &out, &e) == -1) {
			status = files_say(CLI_EXIT_PROTO, &e);
			goto out;
		}
	}
	if ((status = cli_open(&cc, sock, -1, CLI_OUT_HUMAN)) == CLI_EXIT_OK) {
		status = files_get_recv(&cc, req, &out, tmp, local);
		cli_close(&cc);
	}
out:
	if (tmp != NULL && out != -1 && close(out) == -1)
		files_warn("closing the temporary file");
	if (tmp != NULL && status != CLI_EXIT_OK && unlink(tmp) == -1)
		files_warn("removing the temporary file");
	cli_files_tmp = NULL;
	if (caught && files_signals(&act, old, 1) == -1)
		files_warn("sigaction");
	free(tmp);
	return status;
}

/* One entry of a listing: KIND SIZE SHA256[:12] PATH. */
static int
files_ls_line(const msgpack_object *f, FILE *out, struct error *e)
{
	char *path = NULL, *kind = NULL, *sha = NULL;
	uint64_t size = 0;
	size_t w;
	int r = -1;

	if (f->type != MSGPACK_OBJECT_MAP)
		return error_set(e, ERR_INTERNAL, "an entry is not a map");
	if (mp_str(f, "path", 1, CLI_REPLY_MAX, &path, e) == -1 ||
	    mp_str(f, "kind", 1, CLI_FILES_KIND_MAX, &kind, e) == -1 ||
	    mp_uint(f, "size_bytes", 1, INT64_MAX, &size, e) == -1 ||
	    mp_str(f, "sha256", 0, CLI_FILES_SHA_HEX, &sha, e) == -1)
		goto out;
	if (sha != NULL && (strlen(sha) != CLI_FILES_SHA_HEX ||
	                       !hex_lower_n(sha, CLI_FILES_SHA_HEX))) {
		error_set(e, ERR_INTERNAL, "a bad sha256");
		goto out;
	}
	cli_put_safe(out, kind);
	for (w = strlen(kind); w < 7; w++)
		fputc(' ', out);
	if (strcmp(kind, "file") == 0)
		fprintf(out, " %12" PRIu64 "  ", size);
	else
		fprintf(out, " %12s  ", "-");
	fprintf(out, "%-*.*s  ", CLI_FILES_SHOWN, CLI_FILES_SHOWN,
	    sha != NULL ? sha : "-");
	cli_put_safe(out, path);
	fputc('\n', out);
	r = 0;
out:
	free(path);
	free(kind);
	free(sha);
	return r;
}

/* ls: a list_files reply, a line per entry, then "(truncated)". */
int
cli_files_list_print(const msgpack_object *reply, FILE *out, struct error *e)
{
	const msgpack_object *arr = mp_get(reply, "files");
	int trunc = 0;
	uint32_t i;

	if (arr == NULL || arr->type != MSGPACK_OBJECT_ARRAY)
		return error_set(
		    e, ERR_INTERNAL, "field \"files\" must be an array");
	if (mp_bool(reply, "truncated", 1, &trunc, e) == -1)
		return -1;
	for (i = 0; i < arr->via.array.size; i++)
		if (files_ls_line(&arr->via.array.ptr[i], out, e) == -1)
			return -1;
	if (trunc)
		fputs("(truncated)\n", out);
	return 0;
}

/* The reply's path is the one asked about. */
static int
files_path_is(const msgpack_object *reply, const char *path, struct error *e)
{
	char *p = NULL;
	int same;

	if (mp_str(reply, "path", 1, CLIENT_PATH_MAX, &p, e) == -1)
		return -1;
	same = strcmp(p, path) == 0;
	free(p);
	return same ? 0 : error_set(e, ERR_INTERNAL, "it names another path");
}

/* rm PATH: what was removed. */
static int
files_rm_print(
    const msgpack_object *reply, const char *path, FILE *out, struct error *e)
{
	char *kind = NULL;
	uint64_t size = 0;

	if (files_path_is(reply, path, e) == -1 ||
	    mp_str(reply, "kind", 1, CLI_FILES_KIND_MAX, &kind, e) == -1 ||
	    mp_uint(reply, "size_bytes", 1, INT64_MAX, &size, e) == -1)
		return -1;
	fputs("removed ", out);
	cli_put_safe(out, path);
	fputs(" (", out);
	cli_put_safe(out, kind);
	fprintf(out, ", %" PRIu64 " bytes)\n", size);
	free(kind);
	return 0;
}

/* ls and rm: the reply as --json or the text of its type. */
static int
files_one_print(
    const struct sb_reply *rep, const struct client_req *req, int format)
{
	const msgpack_object *o = sb_reply_object(rep);
	struct error e;

	if (!sb_reply_ok(rep) || format == CLI_OUT_JSON)
		return cli_print_reply(o, req->type, format, stdout, stderr);
	/* a wrapper accepts only its own answer */
	if (strcmp(sb_reply_type(rep), creq_type_name(req->type)) != 0)
		error_set(&e, ERR_INTERNAL,
		    "the answer to %s is of another type",
		    creq_type_name(req->type));
	else if ((req->type == CREQ_LIST_FILES
	                 ? cli_files_list_print(o, stdout, &e)
	                 : files_rm_print(o, req->path, stdout, &e)) == 0)
		return CLI_EXIT_OK;
	return cli_say(CLI_EXIT_PROTO, "malformed reply: %s", e.msg);
}

/* ls and rm: one request, its reply printed. */
static int
files_one(const char *sock, const struct client_req *req, int format)
{
	struct sb_reply *rep = NULL;
	struct cli_conn cc;
	struct sb_req *r;
	struct error e;
	int status;

	if ((r = cli_req(req, &e)) == NULL)
		return files_say(CLI_EXIT_USAGE, &e);
	/* the library wants a session named: the broker's default */
	if (req->session == NULL && sb_req_session(r, files_session(req)) == -1)
		fatalx("the default session refused");
	if ((status = cli_open(&cc, sock, -1, format)) == CLI_EXIT_OK) {
		if ((status = cli_call(&cc, r, &rep)) == CLI_EXIT_OK)
			status = files_one_print(rep, req, format);
		sb_reply_free(rep);
		cli_close(&cc);
	}
	sb_req_free(r);
	return status;
}

/*
 * put, get, ls and rm (req: type, id, session, path; local: put's
 * source or get's target, "-" for stdin or stdout); the exit status.
 */
int
cli_files_run(const char *sock, const struct client_req *req, const char *local,
    int format)
{
	struct sigaction ign, old;
	struct error e;
	int status;

	/* get - into a pipe its reader closed: EPIPE, a message, exit 4 */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	if (sigemptyset(&ign.sa_mask) == -1 ||
	    sigaction(SIGPIPE, &ign, &old) == -1) {
		error_set(&e, ERR_INTERNAL, "sigaction: %s", strerror(errno));
		return files_say(CLI_EXIT_PROTO, &e);
	}
	switch (req->type) {
	case CREQ_PUT_FILE:
		status = files_put(sock, req, local, format);
		break;
	case CREQ_GET_FILE:
		status = files_get(sock, req, local);
		break;
	default:
		status = files_one(sock, req, format);
		break;
	}
	if (sigaction(SIGPIPE, &old, NULL) == -1)
		files_warn("sigaction");
	fflush(stdout);
	return status;
}
