/*
 * client.h: the client protocol on the local socket. Requests are one
 * msgpack map with "type" and a client-chosen "id" (string or unsigned
 * integer) echoed in the reply. Decoding is strict: unknown fields,
 * wrong types and out-of-range values are bad_request, an unknown type
 * is unsupported; either answers that request alone.
 */
#ifndef SB_CLIENT_H
#define SB_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"
#include "mp.h"

enum creq_type {
	CREQ_HELLO,
	CREQ_INVOKE,
	CREQ_AUTHORIZE,
	CREQ_SKILLS,
	CREQ_APPROVE,
	CREQ_CANCEL,
	CREQ_STATS,
	CREQ_RELOAD,
	CREQ_SKILL_INFO,
	CREQ_LAST_RESULT,
	CREQ_SESSION_END,
	CREQ_APPROVALS,
	CREQ_PUT_FILE,
	CREQ_GET_FILE,
	CREQ_LIST_FILES,
	CREQ_DELETE_FILE,
	CREQ__COUNT
};

/* The answers to an approval request (approve's "option"). */
enum client_approval {
	CLIENT_APPROVAL_NONE,
	CLIENT_APPROVAL_YES_ONCE,
	CLIENT_APPROVAL_YES_IN_SESSION,
	CLIENT_APPROVAL_NO,
	CLIENT_APPROVAL__COUNT
};

#define CLIENT_ID_MAX 128
#define CLIENT_ENV_MAX 64
#define DEFAULT_SESSION "default"
#define CLIENT_PROTO_MIN 1 /* the majors this server speaks */
#define CLIENT_PROTO_MAX 2
#define CLIENT_APPROVAL_ID_MAX 32 /* bytes of an approval id ("appr-17") */
#define CLIENT_PATH_MAX 1024      /* bytes of a session file's path */
#define CLIENT_PATH_DEPTH 32      /* its components */
/* What a reply holds beside a call's output and a frame's worth of data
 * (a result's files_written: 256 paths of at most 4 KiB, its policy,
 * effects and the rest): hello's reply_bytes counts it in. */
#define CLIENT_REPLY_FIELDS (2 * 1024 * 1024)

struct client_id {
	int is_num;
	uint64_t num;
	char *str;
};

struct client_req {
	enum creq_type type;
	struct client_id id;
	char *skill, *command, *session, *phase;
	char **args;
	size_t nargs;
	uint8_t *stdin_data;
	size_t stdin_len;
	char **env; /* KEY=VALUE pairs from the "env" map */
	size_t nenv;
	uint64_t timeout_ms;
	uint64_t protocol;    /* hello: the client's major (0: not said) */
	int approvals;        /* hello: it answers approval requests */
	struct client_id rid; /* cancel: the request to end */
	int references;       /* skill_info: the reference files' texts too */
	char *approval_id;    /* approve: the approval it answers */
	enum client_approval option; /* approve: the answer */
	char *path;      /* put_file, get_file, delete_file: under /work */
	uint64_t offset; /* put_file, get_file: where the bytes go or start */
	uint64_t length; /* get_file: the most bytes wanted (0: as many) */
};

const char *creq_type_name(enum creq_type t);
/* "yes_once", "yes_in_session", "no"; "none" for CLIENT_APPROVAL_NONE. */
const char *client_approval_name(enum client_approval a);
/* The option named s, or CLIENT_APPROVAL_NONE when s names none. */
enum client_approval client_approval_parse(const char *s);
/* A request on the files of a session (put_file ... delete_file). */
int creq_is_file(enum creq_type t);
/* A request that runs a skill in a worker: invoke, or a file request. */
int creq_runs(enum creq_type t);
/*
 * A session file's path as a client names it: relative to the work dir,
 * 1..CLIENT_PATH_MAX bytes, no control character (NUL among them, so no
 * terminal escape either), no empty, "." or ".." component, at
 * most CLIENT_PATH_DEPTH components of at most 255 bytes.
 */
int client_path_check(const char *path, size_t len, struct error *e);
/* This server answers requests of type t (hello lists them). */
int creq_supported(enum creq_type t);
/*
 * Decode a request. Even on failure, req->id is set when the request
 * carried a usable id, so the error reply can echo it.
 */
int client_req_dec(
    const struct mp_doc *d, struct client_req *req, struct error *e);
void client_req_free(struct client_req *req);
/* Encode a request (for skillctl and tests). */
void client_req_enc(struct mp_enc *m, const struct client_req *req);
void client_id_enc(struct mp_enc *m, const struct client_id *id);
/* Two ids are the same id (a number, or the same string; none, none). */
int client_id_eq(const struct client_id *a, const struct client_id *b);

/*
 * Every reply is one map {type, id, ok, ...}: client_reply_begin, the
 * reply's own fields, client_reply_end. An error is {type: "error", id,
 * ok: false, error: {type, message, details}}.
 */
void client_reply_begin(
    struct mp_enc *m, const char *type, const struct client_id *id, int ok);
void client_reply_end(struct mp_enc *m);
/* The "error" field of a reply. */
void client_error_field(struct mp_enc *m, enum err_type t, const char *msg);
/* A whole error reply. */
void client_error_enc(struct mp_enc *m, const struct client_id *id,
    enum err_type t, const char *msg);

#endif
