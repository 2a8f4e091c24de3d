/*
 * mcp.h: skillbroker-mcp, an MCP server on stdio in front of the broker.
 * A host (an MCP client) writes JSON-RPC 2.0 messages to our stdin, one
 * per line; we answer on stdout and log on stderr. Each skill command
 * the caller may run is a tool, each skill's instructions a resource;
 * tools/call is an invoke through libskillbroker (include/skillbroker.h).
 *
 * mcp_line.c frames lines; mcp_rpc.c classifies and builds JSON-RPC
 * messages; mcp_out.c is the bounded output buffer; mcp_name.c maps
 * skill and command to a tool name; mcp_args.c is the tools' input
 * schema and its validation; mcp_text.c makes bytes JSON text;
 * mcp_catalog.c is the table of skills, tools and resources;
 * mcp_init.c negotiates initialize. Those need no broker and are unit
 * tested. mcp_server.c dispatches, mcp_broker.c keeps the connection
 * and refreshes the catalog, mcp_call.c runs tools/call, mcp_approve.c
 * turns approval requests into elicitations, mcp_res.c serves
 * resources; main.c parses options and runs the loop.
 */
#ifndef SB_MCP_H
#define SB_MCP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <jansson.h>

#include "../include/skillbroker.h"
#include "../lib/error.h"

#define MCP_SERVER_NAME "skillbroker-mcp"

/* The MCP revisions we speak (mcp_init.c), newest first. */
#define MCP_PROTOCOL_LATEST "2025-11-25"
extern const char *const mcp_protocols[];

/* Bounds. */
#define MCP_LINE_MAX (4 * 1024 * 1024) /* a message line, newline excluded */
#define MCP_READ_CHUNK 65536           /* bytes read from stdin at once */
#define MCP_RETRY_MIN_MS 1000 /* after a failed connect, none before this */
#define MCP_RETRY_MAX_MS 30000
#define MCP_OUT_HIGH (1024 * 1024)      /* unsent output: stop reading */
#define MCP_OUT_MAX (256 * 1024 * 1024) /* unsent output: give up */
#define MCP_CALLS_MAX 64                /* tools/call in flight */
#define MCP_INFO_IN_FLIGHT 16           /* skill_info requests at once */
#define MCP_POLL_S_DEFAULT 5            /* seconds between catalog polls */
/* A catalog this young is not refreshed for a tool name it lacks. */
#define MCP_FRESH_MS 1000

/* Tool arguments (the broker's bounds, docs/protocol.md). */
#define MCP_ARGS_MAX 256
#define MCP_ARG_BYTES 4096
#define MCP_ENV_MAX 64
#define MCP_ENV_VALUE_BYTES 4096
#define MCP_STDIN_MAX (1024 * 1024)
#define MCP_TIMEOUT_MS_MAX 86400000
#define MCP_SESSION_MAX 64
#define MCP_FILES_MAX 64
#define MCP_FILE_PATH_MAX 1024

/* Tool names: MCP's rule ([A-Za-z0-9._-], 1..128 characters). */
#define MCP_TOOL_NAME_MAX 128
#define MCP_SKILL_NAME_MAX 64
#define MCP_COMMAND_MAX 128
#define MCP_APPROVAL_ID_MAX 40 /* "appr-" and a number, with room */

/* JSON-RPC error codes, and MCP's. */
#define RPC_PARSE_ERROR (-32700)
#define RPC_INVALID_REQUEST (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS (-32602)
#define RPC_INTERNAL_ERROR (-32603)
#define MCP_RESOURCE_NOT_FOUND (-32002)

/* mcp_line.c: bytes to lines, bounded; an over-long line is dropped to
 * its newline without being kept, and reported once. */
struct mcp_line {
	char *buf;
	size_t len, cap, max;
	int discarding; /* inside an over-long line */
};
/* line: one message without its newline (and \r); NULL with oversize
 * set for a line over the bound. */
typedef void (*mcp_line_cb)(
    void *arg, const char *line, size_t len, int oversize);
void mcp_line_init(struct mcp_line *l, size_t max);
void mcp_line_feed(
    struct mcp_line *l, const char *data, size_t n, mcp_line_cb cb, void *arg);
void mcp_line_eof(struct mcp_line *l, mcp_line_cb cb, void *arg);
void mcp_line_free(struct mcp_line *l);

/* mcp_rpc.c: one message, classified. */
enum mcp_msg_kind {
	MCP_MSG_INVALID = 0, /* answer code/why to id (NULL: null) */
	MCP_MSG_REQUEST,
	MCP_MSG_NOTIFY,
	MCP_MSG_RESPONSE,
};
struct mcp_msg {
	enum mcp_msg_kind kind;
	json_t *root;       /* owned */
	json_t *id;         /* borrowed from root, or NULL */
	const char *method; /* request, notification */
	json_t *params;     /* borrowed, or NULL when absent */
	json_t *result;     /* response */
	json_t *error;      /* error response */
	int code;           /* MCP_MSG_INVALID */
	char why[256];
};
void mcp_rpc_parse(const char *line, size_t len, struct mcp_msg *m);
void mcp_rpc_free(struct mcp_msg *m);
/* 1 if id is a valid request id (a string or an integer). */
int mcp_rpc_id_valid(const json_t *id);
/* New messages; each takes a reference of its own to id. */
json_t *mcp_rpc_result(json_t *id, json_t *result); /* steals result */
json_t *mcp_rpc_error(json_t *id, int code, const char *msg,
    json_t *data); /* steals data; id NULL: null */
json_t *mcp_rpc_notify(const char *method, json_t *params); /* steals */
json_t *mcp_rpc_request(json_t *id, const char *method, json_t *params);

/* mcp_out.c: what goes to stdout, queued and written without blocking. */
struct mcp_out {
	int fd;
	char *buf;
	size_t off, len, cap, max;
};
void mcp_out_init(struct mcp_out *o, int fd, size_t max);
/* Queue msg as one line (msg stays the caller's); -1 when over max. */
int mcp_out_json(struct mcp_out *o, json_t *msg);
/* Write what the fd takes now: 0, or -1 (errno) when it is gone. */
int mcp_out_flush(struct mcp_out *o);
size_t mcp_out_pending(const struct mcp_out *o);
void mcp_out_free(struct mcp_out *o);

/* mcp_name.c: skill and command to a tool name and back. */
/* 1 if name fits MCP's tool name rule. */
int mcp_name_valid(const char *name);
/* The name of (skill, command) into out (MCP_TOOL_NAME_MAX + 1 bytes).
 * 0 when it decodes back (mcp_name_decode), 1 when it had to be cut
 * and ends in a hash: then only the catalog knows it. */
int mcp_name_encode(const char *skill, const char *command, char *out);
/* The skill and command a name encodes; -1 for a hashed or malformed
 * name. */
int mcp_name_decode(const char *name, char *skill, size_t skill_len,
    char *command, size_t command_len);

/* mcp_args.c: a tool's input schema, and arguments checked against it. */
struct mcp_file {
	const char *path;
	const char *content;
	size_t len;
};
struct mcp_args {
	const char **argv;
	size_t argc;
	const char *stdin_data; /* NULL: none */
	size_t stdin_len;
	const char *session; /* NULL: the adapter's default */
	json_t *env;         /* borrowed object of strings, or NULL */
	uint64_t timeout_ms; /* 0: the broker's default */
	struct mcp_file *files;
	size_t nfiles;
};
json_t *mcp_args_schema(void);
/* Check arguments (an object, or NULL for none) into *a, which borrows
 * from it; -1 with e (ERR_BAD_REQUEST) naming the field. */
int mcp_args_parse(json_t *arguments, struct mcp_args *a, struct error *e);
void mcp_args_free(struct mcp_args *a);

/* mcp_text.c: bytes a skill wrote, as JSON text. */
/* A JSON string of data: invalid UTF-8 becomes U+FFFD. */
json_t *mcp_text_json(const void *data, size_t len);
/* A string that fits a message: at most max bytes, cut on a
 * character, with "…" when cut. The caller frees it. */
char *mcp_text_cut(const char *s, size_t max);

/* mcp_catalog.c: what the caller may see, built from skills and
 * skill_info replies. */
struct mcp_tool {
	char name[MCP_TOOL_NAME_MAX + 1];
	char *skill;
	char *command;
	char *description; /* the command's own, or "" */
	int listed;        /* skill_info says the caller may run it */
	int ask;           /* once a human said yes */
	size_t skill_index;
};
struct mcp_skill {
	char *name;
	char *description;
	char *body;  /* SKILL.md after the frontmatter; NULL: not visible */
	int visible; /* skill_info answered for this caller */
	char **commands;
	int *allowed;
	int *ask;
	char **command_desc;
	size_t ncommands;
};
struct mcp_catalog {
	struct mcp_skill *skills;
	size_t nskills;
	struct mcp_tool *tools;
	size_t ntools;
	uint64_t built_ms; /* when it was finished (monotonic) */
};
void mcp_catalog_init(struct mcp_catalog *c);
void mcp_catalog_free(struct mcp_catalog *c);
/* A skill from the skills reply, with its command names; its index. */
size_t mcp_catalog_add(struct mcp_catalog *c, const char *name,
    const char *description, const char *const *commands, size_t n);
/* What skill_info said for skill i: its body (it is visible), and each
 * command's description and whether the caller may run it, at once
 * (allowed) or once a human said yes (ask). */
void mcp_catalog_body(struct mcp_catalog *c, size_t i, const char *body);
void mcp_catalog_command(struct mcp_catalog *c, size_t i, const char *command,
    const char *description, int allowed, int ask);
/* Name the tools once every skill is in. */
void mcp_catalog_finish(struct mcp_catalog *c);
const struct mcp_tool *mcp_catalog_find(
    const struct mcp_catalog *c, const char *name);
const struct mcp_skill *mcp_catalog_skill(
    const struct mcp_catalog *c, const char *name);
/* tools/list's tools and resources/list's resources (new references). */
json_t *mcp_catalog_tools(const struct mcp_catalog *c);
json_t *mcp_catalog_resources(const struct mcp_catalog *c);
/* A skill's resource URI, and the skill a URI names (into name); -1
 * for a URI that names none. */
#define MCP_URI_PREFIX "skill://"
#define MCP_URI_SUFFIX "/SKILL.md"
char *mcp_catalog_uri(const char *skill);
int mcp_catalog_uri_skill(const char *uri, char *name, size_t len);

/* mcp_init.c: initialize's answer. */
struct mcp_client_caps {
	char protocol[32]; /* the revision agreed */
	int elicitation;   /* the client takes form elicitations */
	char name[128];    /* clientInfo, for the log */
	char version[64];
};
/* Check initialize's params; fill caps and return the result object,
 * or NULL with e naming what is wrong (invalid params). */
json_t *mcp_init_answer(
    json_t *params, struct mcp_client_caps *caps, struct error *e);

/* ---- the server (needs the broker) ---- */

struct mcp_server;

/* A job waiting for a fresh catalog; err NULL when it came. */
typedef void (*mcp_refresh_cb)(
    struct mcp_server *s, void *arg, const char *err);
struct mcp_waiter {
	TAILQ_ENTRY(mcp_waiter) entry;
	mcp_refresh_cb cb;
	void *arg;
};
TAILQ_HEAD(mcp_waiters, mcp_waiter);

/* One tools/call, from its request to its answer. */
enum mcp_call_state {
	MCP_CALL_RESOLVING, /* waits for the catalog */
	MCP_CALL_PUTTING,   /* put_file requests */
	MCP_CALL_INVOKING,  /* the invoke */
};
struct mcp_call {
	TAILQ_ENTRY(mcp_call) entry;
	struct mcp_server *server;
	enum mcp_call_state state;
	json_t *rpc_id;   /* the tools/call's id */
	json_t *params;   /* its params, which args borrows from */
	json_t *progress; /* _meta.progressToken, or NULL */
	int64_t progress_n;
	char *tool;
	char *skill;
	char *command;
	struct mcp_args args;
	size_t file_i;     /* the file being put */
	size_t file_off;   /* bytes of it put */
	size_t chunk;      /* bytes of the put_file in flight */
	char req_id[64];   /* the broker request in flight, or "" */
	int cancelled;     /* the client cancelled it: answer nothing */
	int refreshed;     /* the catalog was refreshed for a miss */
	json_t *elicit_id; /* our elicitation/create in flight, or NULL */
	char approval[MCP_APPROVAL_ID_MAX]; /* its approval id */
};
TAILQ_HEAD(mcp_calls, mcp_call);

/* A resources/read waiting for its skill_info. */
struct mcp_read {
	struct mcp_server *server;
	json_t *rpc_id;
	char *uri;
	char skill[MCP_SKILL_NAME_MAX + 1];
};

struct mcp_server {
	struct mcp_line in;
	struct mcp_out out;
	int throttled;   /* output waits: stdin is not read */
	int stopping;    /* shutting down: answer nothing more */
	int initialized; /* initialize answered */
	int ready;       /* notifications/initialized came */
	struct mcp_client_caps caps;

	const char *sock;    /* -s, or NULL: sb_socket_path's choice */
	const char *session; /* --session, or NULL: the broker's default */
	unsigned poll_s;
	uint64_t next_poll_ms;

	struct sb_client *sb;
	int sb_dead;            /* sb_process failed: close and reconnect */
	int sb_closing;         /* inside sb_close: send nothing */
	int sb_down_logged;     /* the outage was logged */
	uint64_t sb_retry_ms;   /* no connect tried before this (monotonic) */
	uint64_t sb_backoff_ms; /* the wait after the next failure */
	uint64_t next_req;      /* broker request ids: mcp-PID-N */
	int64_t next_rpc;       /* our own JSON-RPC request ids */
	size_t put_chunk;       /* put_file data bytes per request */

	struct mcp_catalog cat;
	int have_cat;
	char *tools_seen;     /* the tools list last compared (JSON) */
	char *resources_seen; /* the resources list last compared */

	/* the refresh in flight */
	int refreshing;
	struct mcp_catalog next;
	size_t info_next, info_pending;
	char *refresh_err;
	struct mcp_waiters waiters;

	struct mcp_calls calls;
	size_t ncalls;
};

/* mcp_server.c */
void mcp_server_init(struct mcp_server *s, const char *sock,
    const char *session, unsigned poll_s);
/* Run until stdin ends; returns the exit status. */
int mcp_server_run(struct mcp_server *s);
void mcp_server_free(struct mcp_server *s);
/* Queue a message for the host (msg is the caller's). */
void mcp_send(struct mcp_server *s, json_t *msg);
void mcp_send_result(struct mcp_server *s, json_t *id, json_t *result);
void mcp_send_error(struct mcp_server *s, json_t *id, int code, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));
/* A new broker request id (into buf). */
void mcp_server_req_id(struct mcp_server *s, char *buf, size_t len);

/* mcp_broker.c */
/* The connection, connecting if there is none; NULL (why in e) when the
 * broker cannot be reached. */
struct sb_client *mcp_broker(struct mcp_server *s, struct error *e);
/* After sb_process failed: close, so the next use reconnects. */
void mcp_broker_drop(struct mcp_server *s);
/* A reply's error type and message, never NULL. */
const char *mcp_reply_etype(const struct sb_reply *r);
const char *mcp_reply_emsg(const struct sb_reply *r);
/* Refresh the catalog; cb runs once it is fresh (or failed). */
void mcp_broker_refresh(struct mcp_server *s, mcp_refresh_cb cb, void *arg);
/* The poll's refresh: notify list_changed when a list changed. */
void mcp_broker_poll(struct mcp_server *s);

/* mcp_call.c */
void mcp_call_start(struct mcp_server *s, json_t *id, json_t *params);
/* notifications/cancelled for request id. */
void mcp_call_cancel(struct mcp_server *s, json_t *id);
struct mcp_call *mcp_call_by_req(struct mcp_server *s, const char *req_id);
void mcp_call_progress(struct mcp_server *s, struct mcp_call *c,
    const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* mcp_approve.c */
/* The library's approval callback (arg: the server). */
enum sb_approval mcp_approve_cb(
    struct sb_client *sb, const struct sb_reply *request, void *arg);
/* A response from the host to one of our requests. */
void mcp_approve_response(
    struct mcp_server *s, json_t *id, json_t *result, json_t *error);
/* The call ended while the host was asked: withdraw the question. */
void mcp_approve_withdraw(struct mcp_server *s, struct mcp_call *c);

/* mcp_res.c */
void mcp_res_list(struct mcp_server *s, json_t *id);
void mcp_res_read(struct mcp_server *s, json_t *id, json_t *params);

#endif
