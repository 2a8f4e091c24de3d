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

/* Wait for the frame that answers id, skipping (and noting) the rest. */
int
cli_recv_reply(int fd, const struct client_id *id, FILE *err,
    struct cli_reply *rep, struct error *e)
{
	int noted = 0;

	for (;;) {
		if (recv_one(fd, rep, e) == -1)
			return -1;
		if (reply_is_ours(rep->doc.root, id))
			return 0;
		if (reply_is(rep->doc.root, "approval_request") && !noted) {
			fprintf(err, "skillctl: the broker asks for an "
			             "approval; this client does not support "
			             "approvals, still waiting\n");
			fflush(err);
			noted = 1;
		}
		cli_reply_free(rep);
	}
}

/*
 * The whole conversation: connect, send the encoded request, wait for
 * its reply. A failed send still looks for a reply, since a broker that
 * refuses a connection (overloaded, bad frame) answers and closes.
 */
int
cli_call(const char *path, const void *msg, size_t len,
    const struct client_id *id, FILE *err, struct cli_reply *rep,
    struct error *e)
{
	struct error fe;
	int fd, r;

	if (cli_connect(path, &fd, e) == -1)
		return -1;
	if (frame_send(fd, msg, len, &fe) == 0)
		r = cli_recv_reply(fd, id, err, rep, e);
	else if ((r = cli_recv_reply(fd, id, err, rep, e)) == -1)
		error_set(e, ERR_INTERNAL, "sending to %s: %s", path, fe.msg);
	close(fd);
	return r;
}
