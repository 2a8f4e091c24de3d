/*
 * skillbroker.h: the client library of skillbroker (libskillbroker).
 *
 * A client opens a connection to the broker's socket, builds requests,
 * and either waits for each reply (sb_call) or sends many and gets each
 * reply through a callback as its frames arrive (sb_send, with the
 * connection's fd in the caller's poll loop and sb_process when it is
 * ready). Both kinds mix on one connection: while sb_call waits, the
 * replies of other requests still reach their callbacks. The protocol
 * itself (framing, msgpack, ids, approvals) is the library's business;
 * docs/protocol.md says what each request and reply holds, and a reply's
 * fields are read by their dotted path ("effects.process.exit_code").
 *
 * Conventions: functions that can fail return 0 or a pointer on success
 * and -1 or NULL on failure, with the reason in sb_errcode() and
 * sb_errmsg() of the connection (or errno for the functions that have
 * none: EINVAL for a bad argument). A reply whose "ok" is false is not
 * a failure of the call that returned it: sb_reply_ok says so and
 * sb_reply_error says why. A connection is used by one thread at a
 * time. Allocation failure ends the process (exit status 1, a line on
 * stderr), as in the daemon.
 * SIGPIPE is never raised: the library writes with MSG_NOSIGNAL.
 */
#ifndef SKILLBROKER_H
#define SKILLBROKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SB_API __attribute__((visibility("default")))
#else
#define SB_API
#endif

/* The version of this header and of the library's ABI (the soname's). */
#define SKILLBROKER_VERSION_MAJOR 1
#define SKILLBROKER_VERSION_MINOR 0
/* The protocol major this library speaks (hello's "protocol"). */
#define SKILLBROKER_PROTOCOL 2
/* Where the socket is when neither the caller nor the environment says. */
#define SKILLBROKER_SOCKET_ENV "SKILLBROKER_SOCKET"
#define SKILLBROKER_SOCKET_DEFAULT "/run/skillbroker/skillbroker.sock"

/*
 * Why something failed: the broker's error types (docs/protocol.md,
 * "Error types"), in their order, then the library's own.
 */
enum sb_err {
	SB_OK = 0,
	SB_ERR_BAD_REQUEST,
	SB_ERR_UNKNOWN_SKILL,
	SB_ERR_SKILL_NOT_ENABLED,
	SB_ERR_UNKNOWN_COMMAND,
	SB_ERR_PHASE_VIOLATION,
	SB_ERR_PERMISSION_DENIED,
	SB_ERR_APPROVAL_DENIED,
	SB_ERR_APPROVAL_TIMEOUT,
	SB_ERR_RATE_LIMITED,
	SB_ERR_TIMEOUT,
	SB_ERR_RESOURCE_LIMIT,
	SB_ERR_SANDBOX_FAILED,
	SB_ERR_AUDIT_UNAVAILABLE,
	SB_ERR_POLICY_UNAVAILABLE,
	SB_ERR_CANCELLED,
	SB_ERR_OVERLOADED,
	SB_ERR_INTERNAL,
	SB_ERR_UNSUPPORTED,
	SB_ERR_NOT_FOUND,
	SB_ERR_UNKNOWN = 100, /* an error type this library does not know */
	SB_ERR_CONNECT,       /* cannot connect to the socket */
	SB_ERR_PROTOCOL,      /* a malformed frame, or the connection closed */
	SB_ERR_USAGE,         /* a bad argument to a library function */
	SB_ERR_IO,            /* a local file could not be read or written */
};

/* The wire name of an error type ("permission_denied"), or "unknown". */
SB_API const char *sb_err_name(enum sb_err err);

/* The answers to an approval request. */
enum sb_approval {
	SB_APPROVAL_NONE = 0, /* no answer now (sb_approve may give it later) */
	SB_APPROVAL_YES_ONCE,
	SB_APPROVAL_YES_IN_SESSION,
	SB_APPROVAL_NO,
};

struct sb_client; /* one connection to the broker */
struct sb_req;    /* a request being built */
struct sb_reply;  /* a reply, or an approval request */

/* A reply to a request sent with sb_send; the callback owns it (free it). */
typedef void (*sb_reply_cb)(
    struct sb_client *c, struct sb_reply *reply, void *arg);
/*
 * An approval request (sb_reply_type "approval_request") for one of
 * this connection's calls: return the answer, or SB_APPROVAL_NONE to
 * answer later with sb_approve. The request stays the library's.
 */
typedef enum sb_approval (*sb_approval_cb)(
    struct sb_client *c, const struct sb_reply *request, void *arg);
/*
 * A frame that answers none of the caller's requests: the broker's error
 * reply to an answer sb_approve or an approval callback gave, or to an
 * sb_cancel; or an approval request when no approval callback is set.
 * For the caller to note; the library goes on.
 */
typedef void (*sb_notice_cb)(
    struct sb_client *c, const struct sb_reply *frame, void *arg);

/* ---------------------------------------------------------- connections */

/* The socket path: path if not NULL, else $SKILLBROKER_SOCKET, else the
 * installed socket; never one relative to the current directory. */
SB_API const char *sb_socket_path(const char *path);

/*
 * Connect to the broker at path (see sb_socket_path) and say hello:
 * protocol 2, and approvals: true when cb is not NULL (approval
 * requests for this connection's calls then go to cb). On failure
 * returns NULL with *err and errmsg (errmsg_len bytes, may be NULL) set:
 * SB_ERR_CONNECT, SB_ERR_PROTOCOL (also when no hello came within 5 s),
 * or the broker's refusal (overloaded).
 */
SB_API struct sb_client *sb_connect(const char *path, sb_approval_cb cb,
    void *cb_arg, enum sb_err *err, char *errmsg, size_t errmsg_len);
/* Close the connection; callbacks of requests in flight get a reply of
 * SB_ERR_CANCELLED ("the client closed") before it returns. */
SB_API void sb_close(struct sb_client *c);
/* Where the connection's notices go (NULL: nowhere). */
SB_API void sb_set_notice(struct sb_client *c, sb_notice_cb cb, void *arg);
/* The hello reply the connection got (server, protocol, limits). */
SB_API const struct sb_reply *sb_hello(const struct sb_client *c);
/* The last failure of a call on c. */
SB_API enum sb_err sb_errcode(const struct sb_client *c);
SB_API const char *sb_errmsg(const struct sb_client *c);

/* ---------------------------------------------------------- requests */

/*
 * A new request of a type docs/protocol.md names: "invoke",
 * "authorize", "skills", "skill_info", "cancel", "approve",
 * "approvals", "stats", "reload", "last_result", "session_end",
 * "put_file", "get_file", "list_files", "delete_file" (NULL, errno
 * EINVAL, for any other).
 */
SB_API struct sb_req *sb_req_new(const char *type);
SB_API void sb_req_free(struct sb_req *req);
/* The setters return -1 (errno EINVAL) for a value out of the
 * protocol's bounds or a field the request type does not take. */
SB_API int sb_req_id(struct sb_req *req, const char *id); /* else "N" */
SB_API int sb_req_skill(struct sb_req *req, const char *skill);
SB_API int sb_req_command(struct sb_req *req, const char *command);
SB_API int sb_req_session(struct sb_req *req, const char *session);
SB_API int sb_req_phase(struct sb_req *req, const char *phase);
SB_API int sb_req_arg(struct sb_req *req, const char *arg); /* appends */
SB_API int sb_req_env(struct sb_req *req, const char *key, const char *value);
SB_API int sb_req_stdin(struct sb_req *req, const void *data, size_t len);
SB_API int sb_req_timeout(struct sb_req *req, uint64_t ms);
SB_API int sb_req_references(struct sb_req *req, int on); /* skill_info */
/* cancel: the request to end, by its id as sent */
SB_API int sb_req_target(struct sb_req *req, const char *request_id);
/* approve: the approval ("appr-17") and the answer */
SB_API int sb_req_approval(
    struct sb_req *req, const char *approval_id, enum sb_approval answer);
/* put_file, get_file, delete_file: the path in the session's work dir;
 * put_file's data at offset; get_file's bytes from offset, at most
 * length (0: as many as one reply holds). */
SB_API int sb_req_path(struct sb_req *req, const char *path);
SB_API int sb_req_data(struct sb_req *req, const void *data, size_t len);
SB_API int sb_req_offset(struct sb_req *req, uint64_t offset);
SB_API int sb_req_length(struct sb_req *req, uint64_t length);
/* The request's id as it goes on the wire (set when it is sent). */
SB_API const char *sb_req_get_id(const struct sb_req *req);

/* ---------------------------------------------------------- calls */

/*
 * Send req and wait for its reply (*reply, the caller's to free).
 * Meanwhile other requests' replies reach their callbacks and approval
 * requests the approval callback. 0 once a reply came (ok or not); -1
 * when none can come (sb_errcode: SB_ERR_PROTOCOL, SB_ERR_USAGE).
 */
SB_API int sb_call(
    struct sb_client *c, struct sb_req *req, struct sb_reply **reply);
/* A callback may send, call and cancel on its connection; an sb_close
 * of it takes effect once the library function that ran the callback
 * returns (that function then returns -1, and c is gone). */
/*
 * Queue req to be sent, its reply to go to cb. 0, or -1 (a duplicate
 * id in flight, a request over the frame limit, a dead connection).
 * The request stays the caller's; what is sent is a copy.
 */
SB_API int sb_send(
    struct sb_client *c, struct sb_req *req, sb_reply_cb cb, void *arg);
/* Cancel a request of this connection in flight (its reply comes with
 * SB_ERR_CANCELLED, unless it had ended; -1, SB_ERR_USAGE, when none of
 * this connection has that id); the cancel's own reply is dropped. A
 * "cancel" request (sb_req_new) reaches the uid's other connections. */
SB_API int sb_cancel(struct sb_client *c, const char *request_id);
/* Answer an approval request later (approval_id: its "id"). */
SB_API int sb_approve(
    struct sb_client *c, const char *approval_id, enum sb_approval answer);

/* The event-driven side: the fd to poll, what to poll it for (POLLIN,
 * and POLLOUT while requests wait to go out), and the work to do when it
 * is ready: write what it can, read what came, run the callbacks. -1
 * when the connection is dead: every request in flight has then had a
 * reply, of SB_ERR_PROTOCOL, or of the error the broker ended the
 * connection with (an error frame without an id: overloaded, a bad
 * frame). */
SB_API int sb_fd(const struct sb_client *c);
SB_API short sb_events(const struct sb_client *c);
SB_API int sb_process(struct sb_client *c);
/* Requests sent whose reply has not come yet. */
SB_API size_t sb_pending(const struct sb_client *c);

/* ---------------------------------------------------------- replies */

SB_API void sb_reply_free(struct sb_reply *r);
/* "result", "hello", "skills", "error", "approval_request", ... */
SB_API const char *sb_reply_type(const struct sb_reply *r);
/* The id it answers (the id sent), or "" for none. */
SB_API const char *sb_reply_id(const struct sb_reply *r);
SB_API int sb_reply_ok(const struct sb_reply *r);
/* SB_OK when ok; else the error type, its wire name and its message. */
SB_API enum sb_err sb_reply_error(const struct sb_reply *r);
SB_API const char *sb_reply_error_type(const struct sb_reply *r);
SB_API const char *sb_reply_error_message(const struct sb_reply *r);

/*
 * A field by its dotted path ("effects.process.exit_code",
 * "effects.files_written.0.path"; a number indexes an array). Each
 * returns -1 (or NULL) when the field is absent or of another kind.
 * Strings are NUL-terminated copies that live as long as the reply.
 */
SB_API const char *sb_reply_str(const struct sb_reply *r, const char *path);
SB_API int sb_reply_uint(
    const struct sb_reply *r, const char *path, uint64_t *v);
SB_API int sb_reply_int(const struct sb_reply *r, const char *path, int64_t *v);
SB_API int sb_reply_bool(const struct sb_reply *r, const char *path, int *v);
SB_API const void *sb_reply_bin(
    const struct sb_reply *r, const char *path, size_t *len);
/* The entries of the array or map at path, or -1. */
SB_API int sb_reply_count(const struct sb_reply *r, const char *path);
/* The whole reply as msgpack, as it came; as one line of JSON (bin as
 * text where it is UTF-8; the caller frees it). */
SB_API const void *sb_reply_msgpack(const struct sb_reply *r, size_t *len);
SB_API char *sb_reply_json(const struct sb_reply *r);

/* ---------------------------------------------------------- shortcuts */

/* An invoke of skill's command (NULL: its default) with argv (NULL-ended,
 * may be NULL), in session (NULL: "default"), phase "execution". */
SB_API int sb_invoke(struct sb_client *c, const char *skill,
    const char *command, const char *const *argv, const char *session,
    struct sb_reply **reply);
/*
 * Session files, whole and checked: a put goes in chunks of the size the
 * broker's hello allows, and a get comes in chunks until eof; each
 * reply's size and sha256 (the whole file's) are checked against the
 * bytes sent or assembled. 0, with *last (may be NULL; the caller frees
 * it) the last reply; or -1 with sb_errcode: the broker's error (the
 * reply that said it in *last), SB_ERR_PROTOCOL when what the broker
 * holds is not what was sent, or SB_ERR_IO when src or sink failed.
 */
/* sb_put_from's *done (may be NULL): the bytes the broker holds, so a
 * caller can say that a failed put left part of a file. */
/* put's source: up to max bytes into buf; the count, 0 at the end, or
 * -1 (errno set). */
typedef ssize_t (*sb_source)(void *arg, void *buf, size_t max);
/* get's sink: takes all len bytes; 0, or -1 (errno set). */
typedef int (*sb_sink)(void *arg, const void *data, size_t len);
SB_API int sb_put_from(struct sb_client *c, const char *session,
    const char *path, sb_source src, void *arg, uint64_t *done,
    struct sb_reply **last);
SB_API int sb_get_to(struct sb_client *c, const char *session, const char *path,
    sb_sink sink, void *arg, struct sb_reply **last);
/* The same from and to memory; sb_get refuses a file over max bytes
 * (SB_ERR_USAGE) and gives *data to the caller to free. */
SB_API int sb_put(struct sb_client *c, const char *session, const char *path,
    const void *data, size_t len, struct sb_reply **last);
SB_API int sb_get(struct sb_client *c, const char *session, const char *path,
    size_t max, void **data, size_t *len);

#ifdef __cplusplus
}
#endif

#endif
