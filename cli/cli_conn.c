/* cli_conn.c: skillctl's side of the socket: connect, send, wait. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

/* Replies nest deeper than requests (effects.files_written[].path). */
static const struct mp_limits cli_reply_limits = {
    .max_depth = 8,
    .max_str = CLI_REPLY_MAX,
    .max_elems = 65536,
    .max_key = 256,
};

/* -s wins, then the environment, then the installed or the dev socket. */
const char *
cli_socket_path(const char *opt)
{
	const char *env;
	struct stat st;

	if (opt != NULL)
		return opt;
	if ((env = getenv(CLI_SOCKET_ENV)) != NULL && *env != '\0')
		return env;
	if (stat(CLI_SOCKET_DEFAULT, &st) == -1 && errno == ENOENT &&
	    stat(CLI_SOCKET_DEV, &st) == 0)
		return CLI_SOCKET_DEV;
	return CLI_SOCKET_DEFAULT;
}

/* A connected stream socket, or the message the user should see. */
int
cli_connect(const char *path, int *fdp, struct error *e)
{
	struct sockaddr_un sun;
	int fd, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return error_set(e, ERR_INTERNAL, "cannot connect to %s: %s",
		    path, strerror(ENAMETOOLONG));
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return error_set(e, ERR_INTERNAL, "cannot connect to %s: %s",
		    path, strerror(errno));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		close(fd);
		return error_set(e, ERR_INTERNAL, "cannot connect to %s: %s",
		    path, strerror(saved));
	}
	*fdp = fd;
	return 0;
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

/* Encode req into m, refusing what the broker would reject as too big. */
int
cli_encode(const struct client_req *req, struct mp_enc *m, struct error *e)
{
	enc_init(m);
	client_req_enc(m, req);
	if (m->sb.size > FRAME_MAX_DEFAULT) {
		error_set(e, ERR_BAD_REQUEST,
		    "request of %zu bytes exceeds "
		    "the broker's limit of %d bytes",
		    m->sb.size, FRAME_MAX_DEFAULT);
		enc_free(m);
		return -1;
	}
	return 0;
}

/* 1 if the reply's "id" is the one we sent. */
int
cli_id_matches(const msgpack_object *reply, const struct client_id *id)
{
	const msgpack_object *o = mp_get(reply, "id");

	if (o == NULL)
		return 0;
	if (id->is_num)
		return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
		       o->via.u64 == id->num;
	return id->str != NULL && o->type == MSGPACK_OBJECT_STR &&
	       o->via.str.size == strlen(id->str) &&
	       memcmp(o->via.str.ptr, id->str, o->via.str.size) == 0;
}

/* 1 if the reply's "type" is the string t. */
static int
reply_is(const msgpack_object *reply, const char *t)
{
	const msgpack_object *o = mp_get(reply, "type");

	return o != NULL && o->type == MSGPACK_OBJECT_STR &&
	       o->via.str.size == strlen(t) &&
	       memcmp(o->via.str.ptr, t, o->via.str.size) == 0;
}

/* A request-independent error (id nil or absent) ends our wait too. */
static int
reply_is_ours(const msgpack_object *reply, const struct client_id *id)
{
	const msgpack_object *o = mp_get(reply, "id");

	if (cli_id_matches(reply, id))
		return 1;
	return reply_is(reply, "error") &&
	       (o == NULL || o->type == MSGPACK_OBJECT_NIL);
}

/* Release a reply; safe on a zeroed or already freed one. */
void
cli_reply_free(struct cli_reply *rep)
{
	mp_doc_free(&rep->doc);
	free(rep->buf);
	rep->buf = NULL;
	rep->len = 0;
}

/* Read and decode one frame into rep. */
static int
recv_one(int fd, struct cli_reply *rep, struct error *e)
{
	struct error fe;

	memset(rep, 0, sizeof(*rep));
	if (frame_recv(fd, CLI_REPLY_MAX, &rep->buf, &rep->len, &fe) == -1)
		return error_set(
		    e, ERR_INTERNAL, "reading the reply: %s", fe.msg);
	if (mp_decode(&rep->doc, rep->buf, rep->len, &cli_reply_limits, &fe) ==
	    -1) {
		cli_reply_free(rep);
		return error_set(
		    e, ERR_INTERNAL, "malformed reply: %s", fe.msg);
	}
	return 0;
}

/* Send approve for the approval_request req, under its own id. */
static int
cli_send_approve(int fd, const msgpack_object *req, const struct client_id *id,
    unsigned n, enum client_approval a, struct error *e)
{
	struct client_req ar;
	struct error fe;
	struct mp_enc m;
	int r;

	memset(&ar, 0, sizeof(ar));
	ar.type = CREQ_APPROVE;
	ar.option = a;
	if (mp_str(req, "id", 1, CLIENT_APPROVAL_ID_MAX, &ar.approval_id, e) ==
	    -1)
		return -1;
	xasprintf(&ar.id.str, "%.100s-approve-%u",
	    id->str != NULL ? id->str : "skillctl", n);
	enc_init(&m);
	client_req_enc(&m, &ar);
	r = frame_send(fd, m.sb.data, m.sb.size, &fe);
	enc_free(&m);
	client_req_free(&ar);
	if (r == -1)
		return error_set(
		    e, ERR_INTERNAL, "sending the answer: %s", fe.msg);
	return 0;
}

/* 1 if the reply's id is one cli_send_approve gave. */
static int
cli_is_approve_id(const msgpack_object *reply)
{
	const msgpack_object *o = mp_get(reply, "id");

	return o != NULL && o->type == MSGPACK_OBJECT_STR &&
	       memmem(o->via.str.ptr, o->via.str.size, "-approve-", 9) != NULL;
}

/* An error reply to one of our approve requests: say so, go on. */
static void
cli_note_approve_error(const msgpack_object *reply, FILE *err)
{
	const msgpack_object *em = NULL;
	char *t = NULL, *msg = NULL;

	(void)mp_submap(reply, "error", 0, &em, NULL);
	if (em != NULL) {
		(void)mp_str(em, "type", 0, 64, &t, NULL);
		(void)mp_str(em, "message", 0, 1024, &msg, NULL);
	}
	fputs("skillctl: the answer was not taken: ", err);
	cli_put_safe(err, t != NULL ? t : "error");
	fputs(": ", err);
	cli_put_safe(err, msg != NULL ? msg : "");
	fputc('\n', err);
	fflush(err);
	free(t);
	free(msg);
}

/*
 * Wait for the frame that answers id. An approval_request on the way is
 * put to ap (NULL: noted, and the wait goes on); its answer is sent as
 * an approve of its own. Other frames are skipped.
 */
int
cli_recv_reply_approving(int fd, const struct client_id *id,
    const struct cli_approver *ap, FILE *err, struct cli_reply *rep,
    struct error *e)
{
	enum client_approval a;
	unsigned asked = 0;
	int noted = 0;

	for (;;) {
		if (recv_one(fd, rep, e) == -1)
			return -1;
		if (reply_is_ours(rep->doc.root, id))
			return 0;
		if (reply_is(rep->doc.root, "approval_request") && ap != NULL) {
			a = ap->ask(rep->doc.root, fd, ap->arg);
			if (a != CLIENT_APPROVAL_NONE &&
			    cli_send_approve(
			        fd, rep->doc.root, id, ++asked, a, e) == -1) {
				cli_reply_free(rep);
				return -1;
			}
		} else if (reply_is(rep->doc.root, "approval_request") &&
		           !noted) {
			fprintf(err, "skillctl: the broker asks for an "
			             "approval; this client does not answer "
			             "approvals, still waiting\n");
			fflush(err);
			noted = 1;
		} else if (reply_is(rep->doc.root, "error") &&
		           cli_is_approve_id(rep->doc.root))
			cli_note_approve_error(rep->doc.root, err);
		cli_reply_free(rep);
	}
}

/* Wait for the frame that answers id, skipping (and noting) the rest. */
int
cli_recv_reply(int fd, const struct client_id *id, FILE *err,
    struct cli_reply *rep, struct error *e)
{
	return cli_recv_reply_approving(fd, id, NULL, err, rep, e);
}

/*
 * One request on a connection to the socket at path: send the encoded
 * request, wait for its reply. A failed send still looks for a reply,
 * since a broker that refuses a connection (overloaded, bad frame)
 * answers and closes.
 */
int
cli_exchange(int fd, const char *path, const void *msg, size_t len,
    const struct client_id *id, FILE *err, struct cli_reply *rep,
    struct error *e)
{
	struct error fe;
	int r;

	if (frame_send(fd, msg, len, &fe) == 0)
		return cli_recv_reply(fd, id, err, rep, e);
	if ((r = cli_recv_reply(fd, id, err, rep, e)) == -1)
		error_set(e, ERR_INTERNAL, "sending to %s: %s", path, fe.msg);
	return r;
}

/* The whole conversation: connect, one request and its reply, close. */
int
cli_call(const char *path, const void *msg, size_t len,
    const struct client_id *id, FILE *err, struct cli_reply *rep,
    struct error *e)
{
	int fd, r;

	if (cli_connect(path, &fd, e) == -1)
		return -1;
	r = cli_exchange(fd, path, msg, len, id, err, rep, e);
	close(fd);
	return r;
}

/*
 * cli_call for a call that may be asked: hello says approvals: true
 * first, and the approval requests on the way go to ap.
 */
int
cli_call_approving(const char *path, const void *msg, size_t len,
    const struct client_id *id, const struct cli_approver *ap, FILE *err,
    struct cli_reply *rep, struct error *e)
{
	struct client_req hello;
	struct error fe;
	struct mp_enc m;
	int fd, r;

	if (cli_connect(path, &fd, e) == -1)
		return -1;
	memset(&hello, 0, sizeof(hello));
	hello.type = CREQ_HELLO;
	hello.protocol = CLIENT_PROTO_MAX;
	hello.approvals = 1;
	xasprintf(&hello.id.str, "%.100s-hello",
	    id->str != NULL ? id->str : "skillctl");
	enc_init(&m);
	client_req_enc(&m, &hello);
	client_req_free(&hello);
	if (frame_send(fd, m.sb.data, m.sb.size, &fe) == 0 &&
	    frame_send(fd, msg, len, &fe) == 0)
		r = cli_recv_reply_approving(fd, id, ap, err, rep, e);
	else if ((r = cli_recv_reply_approving(fd, id, ap, err, rep, e)) == -1)
		error_set(e, ERR_INTERNAL, "sending to %s: %s", path, fe.msg);
	enc_free(&m);
	close(fd);
	return r;
}
