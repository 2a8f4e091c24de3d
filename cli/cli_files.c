/*
 * cli_files.c: skillctl put, get, ls and rm, on the files of a session
 * (its work dir, what a skill sees under /work). put sends a local file
 * in chunks of at most hello's put_file_bytes on one connection and
 * checks the size and sha256 the broker reports against its own; get
 * asks for chunks until eof, checks that every chunk speaks of the same
 * file and that what came hashes to its sha256, and only then renames a
 * temporary file over LOCAL. The paths of a listing are a skill's
 * choice: they are shown through cli_put_safe.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	uint8_t *mem; /* stdin's bytes; for a file, a chunk and one more */
	size_t len, off;
	int carry; /* a file: mem[chunk] is the next chunk's first byte */
};

/* get's temporary file, which a signal that ends skillctl removes. */
static char *volatile cli_files_tmp;

/* "skillctl: MESSAGE" on stderr (controls as ?); returns status. */
static int
files_say(int status, const struct error *e)
{
	fputs("skillctl: ", stderr);
	cli_put_safe(stderr, e->msg);
	fputc('\n', stderr);
	fflush(stderr);
	return status;
}

/* A syscall that failed after the work was done: noted, no more. */
static void
files_warn(const char *what)
{
	fprintf(stderr, "skillctl: %s: %s\n", what, strerror(errno));
}

/* A reply that does not have the documented shape: exit 4. */
static int
files_malformed(const struct error *e)
{
	struct error m;

	error_set(&m, ERR_INTERNAL, "malformed reply: %s", e->msg);
	return files_say(CLI_EXIT_PROTO, &m);
}

/* 1 if s is a sha256 as the broker writes it: 64 lowercase hex digits. */
static int
files_sha_valid(const char *s)
{
	return strlen(s) == CLI_FILES_SHA_HEX &&
	       hex_lower_n(s, CLI_FILES_SHA_HEX);
}

/* A sha256 context, or the reason there is none. */
static EVP_MD_CTX *
files_sha_new(struct error *e)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (ctx == NULL || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(ctx);
		error_set(e, ERR_INTERNAL, "cannot compute a sha256");
		return NULL;
	}
	return ctx;
}

/* Hash n more bytes. */
static int
files_sha_add(EVP_MD_CTX *ctx, const uint8_t *p, size_t n, struct error *e)
{
	if (n > 0 && !EVP_DigestUpdate(ctx, p, n))
		return error_set(e, ERR_INTERNAL, "cannot compute a sha256");
	return 0;
}

/* The sha256 of everything added, as hex (CLI_FILES_SHA_HEX + 1 bytes). */
static int
files_sha_end(EVP_MD_CTX *ctx, char *hex, struct error *e)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (!EVP_DigestFinal_ex(ctx, md, &len) || len != 32)
		return error_set(e, ERR_INTERNAL, "cannot compute a sha256");
	hex_encode(md, len, hex);
	return 0;
}

/* Encode req and send it on fd; its reply in rep. */
static int
files_send(int fd, const char *sock, const struct client_req *req,
    struct cli_reply *rep, struct error *e)
{
	struct mp_enc m;
	int r;

	if (cli_encode(req, &m, e) == -1)
		return -1;
	r = cli_exchange(
	    fd, sock, m.sb.data, m.sb.size, &req->id, stderr, rep, e);
	enc_free(&m);
	return r;
}

/*
 * The reply's ok, and for ok=true that it answers a request of type t
 * (a wrapper accepts only its own answer); -1 when it is malformed.
 */
static int
files_reply_ok(
    const struct cli_reply *rep, enum creq_type t, int *ok, struct error *e)
{
	const msgpack_object *o = mp_get(rep->doc.root, "type");
	const char *want = creq_type_name(t);

	if (mp_bool(rep->doc.root, "ok", 1, ok, e) == -1)
		return -1;
	if (!*ok)
		return 0;
	if (o == NULL || o->type != MSGPACK_OBJECT_STR ||
	    o->via.str.size != strlen(want) ||
	    memcmp(o->via.str.ptr, want, o->via.str.size) != 0)
		return error_set(e, ERR_INTERNAL,
		    "the answer to %s is of another type", want);
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

/*
 * The next chunk of at most max bytes (the same max every time) in
 * *p, *n; *last when no byte follows it. A file is read one byte
 * ahead, so a file that ends on a chunk's end needs no empty put.
 */
static int
files_src_next(struct files_src *s, size_t max, uint8_t **p, size_t *n,
    int *last, struct error *e)
{
	size_t have = 0;
	ssize_t r;

	if (s->fd == -1) {
		*p = s->mem + s->off;
		*n = s->len - s->off < max ? s->len - s->off : max;
		s->off += *n;
		*last = s->off == s->len;
		return 0;
	}
	if (s->mem == NULL)
		s->mem = xmalloc(max + 1);
	if (s->carry) {
		s->mem[0] = s->mem[max];
		have = 1;
	}
	while (have < max + 1) {
		if ((r = read(s->fd, s->mem + have, max + 1 - have)) == -1 &&
		    errno == EINTR)
			continue;
		if (r == -1)
			return error_set(e, ERR_INTERNAL,
			    "reading the local file: %s", strerror(errno));
		if (r == 0)
			break;
		have += (size_t)r;
	}
	s->carry = have == max + 1;
	*p = s->mem;
	*n = s->carry ? max : have;
	*last = !s->carry;
	return 0;
}

/* hello on the connection: the most data one put_file may carry. */
static int
files_hello(int fd, const char *sock, const struct client_req *req, int format,
    size_t *chunk)
{
	const msgpack_object *caps = NULL, *lim = NULL;
	struct client_req hello;
	struct cli_reply rep;
	struct error e;
	uint64_t max = 0;
	int ok, r, status = CLI_EXIT_OK;

	memset(&hello, 0, sizeof(hello));
	hello.type = CREQ_HELLO;
	hello.protocol = CLIENT_PROTO_MAX;
	xasprintf(&hello.id.str, "%.100s-hello",
	    req->id.str != NULL ? req->id.str : "skillctl");
	r = files_send(fd, sock, &hello, &rep, &e);
	client_req_free(&hello);
	if (r == -1)
		return files_say(CLI_EXIT_PROTO, &e);
	if (files_reply_ok(&rep, CREQ_HELLO, &ok, &e) == -1)
		status = files_malformed(&e);
	else if (!ok)
		status = cli_print_reply(
		    rep.doc.root, CREQ_HELLO, format, stdout, stderr);
	else if (mp_submap(rep.doc.root, "capabilities", 1, &caps, &e) == -1 ||
	         mp_submap(caps, "limits", 1, &lim, &e) == -1 ||
	         mp_uint(lim, "put_file_bytes", 0, FRAME_MAX_DEFAULT, &max,
	             &e) == -1)
		status = files_malformed(&e);
	else if (max == 0) {
		error_set(&e, ERR_UNSUPPORTED,
		    "the broker serves no put_file (its hello has no "
		    "limits.put_file_bytes)");
		status = files_say(CLI_EXIT_PROTO, &e);
	}
	cli_reply_free(&rep);
	*chunk = (size_t)max;
	return status;
}

/*
 * An ok answer to a put of the bytes up to sent: the path, and the
 * file's size is what was sent; its sha256 in sha.
 */
static int
files_put_check(const msgpack_object *reply, const char *path, uint64_t sent,
    char *sha, struct error *e)
{
	uint64_t size = 0;
	char *s = NULL;

	if (files_path_is(reply, path, e) == -1 ||
	    mp_uint(reply, "size_bytes", 1, INT64_MAX, &size, e) == -1 ||
	    mp_str(reply, "sha256", 1, CLI_FILES_SHA_HEX, &s, e) == -1)
		return -1;
	if (!files_sha_valid(s)) {
		free(s);
		return error_set(e, ERR_INTERNAL, "a bad sha256");
	}
	memcpy(sha, s, CLI_FILES_SHA_HEX + 1);
	free(s);
	if (size != sent)
		return error_set(e, ERR_INTERNAL,
		    "%s is %" PRIu64 " bytes after %" PRIu64
		    " were put: another writer, or a broker that lost bytes",
		    path, size, sent);
	return 0;
}

/*
 * The put_file loop: chunks of at most chunk bytes from offset 0, each
 * answer checked; then the whole against the last answer's sha256.
 * The last answer stays in rep, the bytes the broker took in *sent.
 */
static int
files_put_loop(int fd, const char *sock, struct client_req *req,
    struct files_src *src, size_t chunk, int format, struct cli_reply *rep,
    uint64_t *sent)
{
	char hex[CLI_FILES_SHA_HEX + 1], sha[CLI_FILES_SHA_HEX + 1] = "";
	EVP_MD_CTX *ctx;
	struct error e;
	uint8_t *p = NULL;
	size_t n = 0;
	int last = 0, ok, r, status = CLI_EXIT_PROTO;

	if ((ctx = files_sha_new(&e)) == NULL)
		return files_say(CLI_EXIT_PROTO, &e);
	while (!last) {
		if (files_src_next(src, chunk, &p, &n, &last, &e) == -1) {
			status = CLI_EXIT_USAGE;
			goto say;
		}
		if (files_sha_add(ctx, p, n, &e) == -1)
			goto say;
		req->stdin_data = p; /* borrowed: not req's to free */
		req->stdin_len = n;
		req->offset = *sent;
		cli_reply_free(rep);
		r = files_send(fd, sock, req, rep, &e);
		req->stdin_data = NULL;
		req->stdin_len = 0;
		if (r == -1)
			goto say;
		if (files_reply_ok(rep, CREQ_PUT_FILE, &ok, &e) == -1) {
			status = files_malformed(&e);
			goto out;
		}
		if (!ok) {
			status = cli_print_reply(rep->doc.root, CREQ_PUT_FILE,
			    format, stdout, stderr);
			goto out;
		}
		*sent += n;
		if (files_put_check(rep->doc.root, req->path, *sent, sha, &e) ==
		    -1)
			goto say;
	}
	if (files_sha_end(ctx, hex, &e) == -1)
		goto say;
	if (strcmp(hex, sha) != 0) {
		error_set(&e, ERR_INTERNAL,
		    "%s: the broker has sha256 %s, but what was sent has %s",
		    req->path, sha, hex);
		goto say;
	}
	status = CLI_EXIT_OK;
	goto out;
say:
	status = files_say(status, &e);
out:
	EVP_MD_CTX_free(ctx);
	return status;
}

/* put [--json] LOCAL PATH: hello, the chunks, what the broker has. */
static int
files_put(
    const char *sock, struct client_req *req, const char *local, int format)
{
	struct cli_reply rep;
	struct files_src src;
	struct error e;
	uint64_t sent = 0;
	size_t chunk = 0;
	char *sha = NULL;
	int fd = -1, status;

	memset(&rep, 0, sizeof(rep));
	if (files_src_open(&src, local, &e) == -1)
		return files_say(CLI_EXIT_USAGE, &e);
	if (cli_connect(sock, &fd, &e) == -1)
		status = files_say(CLI_EXIT_PROTO, &e);
	else if ((status = files_hello(fd, sock, req, format, &chunk)) ==
	         CLI_EXIT_OK)
		status = files_put_loop(
		    fd, sock, req, &src, chunk, format, &rep, &sent);
	if (status != CLI_EXIT_OK && sent > 0) {
		error_set(&e, ERR_INTERNAL,
		    "%s is not a whole copy of %s (%" PRIu64
		    " bytes were put): put it again, or rm it",
		    req->path, strcmp(local, "-") == 0 ? "stdin" : local, sent);
		(void)files_say(status, &e);
	} else if (status == CLI_EXIT_OK && format == CLI_OUT_JSON)
		status = cli_print_reply(
		    rep.doc.root, CREQ_PUT_FILE, format, stdout, stderr);
	else if (status == CLI_EXIT_OK &&
	         mp_str(rep.doc.root, "sha256", 1, CLI_FILES_SHA_HEX, &sha,
	             &e) == 0) {
		cli_put_safe(stdout, req->path);
		printf(": %" PRIu64 " bytes, sha256 %s\n", sent, sha);
	}
	free(sha);
	cli_reply_free(&rep);
	if (fd != -1 && close(fd) == -1)
		files_warn("closing the connection");
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

/* What get has seen of the file: the first chunk's word, and progress. */
struct files_got {
	uint64_t size, off;
	char sha[CLI_FILES_SHA_HEX + 1];
	int eof;
};

/*
 * One get_file answer: the path, the offset asked, the same size and
 * sha256 as the first chunk's, data that fits the size, eof exactly at
 * the end. The data in *data (new), *n bytes.
 */
static int
files_get_check(const msgpack_object *reply, const char *path,
    struct files_got *g, uint8_t **data, size_t *n, struct error *e)
{
	uint64_t size = 0, off = 0;
	struct error me;
	char *sha = NULL;
	int eof = 0, changed;

	*data = NULL;
	if (files_path_is(reply, path, &me) == -1 ||
	    mp_uint(reply, "offset", 1, INT64_MAX, &off, &me) == -1 ||
	    mp_uint(reply, "size_bytes", 1, INT64_MAX, &size, &me) == -1 ||
	    mp_str(reply, "sha256", 1, CLI_FILES_SHA_HEX, &sha, &me) == -1 ||
	    mp_bool(reply, "eof", 1, &eof, &me) == -1 ||
	    mp_bin(reply, "data", 1, CLI_REPLY_MAX, data, n, &me) == -1)
		goto bad;
	if (!files_sha_valid(sha)) {
		error_set(&me, ERR_INTERNAL, "a bad sha256");
		goto bad;
	}
	if (g->sha[0] == '\0') { /* the first chunk */
		g->size = size;
		memcpy(g->sha, sha, sizeof(g->sha));
	}
	changed = size != g->size || strcmp(sha, g->sha) != 0;
	free(sha);
	sha = NULL;
	if (changed) {
		free(*data);
		*data = NULL;
		return error_set(e, ERR_INTERNAL,
		    "%s changed while it was read (its size or sha256 "
		    "differ from one chunk to the next)",
		    path);
	}
	if (off != g->off || *n > size - off || eof != (off + *n == size) ||
	    (!eof && *n == 0)) {
		error_set(&me, ERR_INTERNAL,
		    "the chunk at %" PRIu64 " (%zu bytes of %" PRIu64
		    ", eof %d) does not follow %" PRIu64,
		    off, *n, size, eof, g->off);
		goto bad;
	}
	g->eof = eof;
	return 0;
bad:
	free(sha);
	free(*data);
	*data = NULL;
	return error_set(e, ERR_INTERNAL, "malformed reply: %s", me.msg);
}

/*
 * The get_file loop: chunks from offset 0 until eof, each checked,
 * written to out and hashed; then the whole against the sha256.
 */
static int
files_get_loop(int fd, const char *sock, struct client_req *req, int out,
    struct files_got *g)
{
	char hex[CLI_FILES_SHA_HEX + 1];
	struct cli_reply rep;
	EVP_MD_CTX *ctx;
	struct error e;
	uint8_t *data = NULL;
	size_t n = 0;
	int ok, status = CLI_EXIT_PROTO;

	memset(&rep, 0, sizeof(rep));
	memset(g, 0, sizeof(*g));
	if ((ctx = files_sha_new(&e)) == NULL)
		return files_say(CLI_EXIT_PROTO, &e);
	while (!g->eof) {
		req->offset = g->off;
		cli_reply_free(&rep);
		if (files_send(fd, sock, req, &rep, &e) == -1)
			goto say;
		if (files_reply_ok(&rep, CREQ_GET_FILE, &ok, &e) == -1) {
			status = files_malformed(&e);
			goto out;
		}
		if (!ok) {
			status = cli_print_reply(rep.doc.root, CREQ_GET_FILE,
			    CLI_OUT_HUMAN, stdout, stderr);
			goto out;
		}
		if (files_get_check(
		        rep.doc.root, req->path, g, &data, &n, &e) == -1 ||
		    files_sha_add(ctx, data, n, &e) == -1)
			goto say;
		if (write_full(out, data, n) == -1) {
			error_set(&e, ERR_INTERNAL, "writing %s: %s",
			    out == STDOUT_FILENO ? "stdout" : "the local file",
			    strerror(errno));
			goto say;
		}
		free(data);
		data = NULL;
		g->off += n;
	}
	if (files_sha_end(ctx, hex, &e) == -1)
		goto say;
	if (strcmp(hex, g->sha) != 0) {
		error_set(&e, ERR_INTERNAL,
		    "%s: the broker says sha256 %s, but what came has %s",
		    req->path, g->sha, hex);
		goto say;
	}
	status = CLI_EXIT_OK;
	goto out;
say:
	status = files_say(CLI_EXIT_PROTO, &e);
out:
	free(data);
	cli_reply_free(&rep);
	EVP_MD_CTX_free(ctx);
	return status;
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

/* get PATH LOCAL: LOCAL whole and checked, or untouched. */
static int
files_get(const char *sock, struct client_req *req, const char *local)
{
	struct sigaction act, old[3];
	struct files_got g;
	struct error e;
	char *tmp = NULL;
	int fd = -1, out = STDOUT_FILENO, caught = 0, status;

	memset(&g, 0, sizeof(g));
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
	if (cli_connect(sock, &fd, &e) == -1)
		status = files_say(CLI_EXIT_PROTO, &e);
	else
		status = files_get_loop(fd, sock, req, out, &g);
	if (status == CLI_EXIT_OK && tmp != NULL &&
	    files_tmp_commit(&out, tmp, local, &e) == -1)
		status = files_say(CLI_EXIT_PROTO, &e);
	if (status == CLI_EXIT_OK && tmp != NULL) {
		cli_put_safe(stdout, req->path);
		printf(": %" PRIu64 " bytes, sha256 %s\n", g.size, g.sha);
	}
out:
	if (fd != -1 && close(fd) == -1)
		files_warn("closing the connection");
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
	if (sha != NULL && !files_sha_valid(sha)) {
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

/* ls and rm: one request, its reply printed. */
static int
files_one(const char *sock, struct client_req *req, int format)
{
	struct cli_reply rep;
	struct mp_enc m;
	struct error e;
	int ok, r, status = CLI_EXIT_OK;

	if (cli_encode(req, &m, &e) == -1)
		return files_say(CLI_EXIT_USAGE, &e);
	r = cli_call(sock, m.sb.data, m.sb.size, &req->id, stderr, &rep, &e);
	enc_free(&m);
	if (r == -1)
		return files_say(CLI_EXIT_PROTO, &e);
	if (files_reply_ok(&rep, req->type, &ok, &e) == -1)
		status = files_malformed(&e);
	else if (!ok || format == CLI_OUT_JSON)
		status = cli_print_reply(
		    rep.doc.root, req->type, format, stdout, stderr);
	else if ((req->type == CREQ_LIST_FILES
	                 ? cli_files_list_print(rep.doc.root, stdout, &e)
	                 : files_rm_print(
	                       rep.doc.root, req->path, stdout, &e)) == -1)
		status = files_malformed(&e);
	cli_reply_free(&rep);
	return status;
}

/*
 * put, get, ls and rm (req: type, id, session, path; local: put's
 * source or get's target, "-" for stdin or stdout); the exit status.
 */
int
cli_files_run(
    const char *sock, struct client_req *req, const char *local, int format)
{
	struct sigaction ign, old;
	struct error e;
	int status;

	/* A broker that hangs up must not kill us mid-transfer. */
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
