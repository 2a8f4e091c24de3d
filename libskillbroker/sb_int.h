/*
 * sb_int.h: libskillbroker's insides, shared by its files (and by
 * skillctl, which prints replies with the protocol's own decoder).
 * Nothing here is part of include/skillbroker.h's interface.
 */
#ifndef SB_INT_H
#define SB_INT_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include "../include/skillbroker.h"
#include "../proto/client.h"
#include "../proto/mp.h"

/* The most a reply may be: replies carry output and file chunks up to
 * the frame bound, with their fields beside. */
#define SB_REPLY_SLACK (64 * 1024)
#define SB_REPLY_MAX_CAP (256u * 1024 * 1024)
#define SB_ERRMSG_MAX 512
#define SB_IDBUF 24 /* "18446744073709551615" and its NUL */
/* A broker that took the connection answers hello at once; one that
 * does not within this long is stuck, and sb_connect gives up. */
#define SB_HELLO_TIMEOUT_MS 5000
#define SB_READS_MAX 16                /* reads per sb_process */
#define SB_OUT_MAX (64u * 1024 * 1024) /* requests queued, not written */

struct sb_req {
	struct client_req r;
	int own_id; /* the caller named the id (else each send numbers it) */
	char idbuf[SB_IDBUF]; /* the id as a string once it is numbered */
};

/* A string copied out of a reply, NUL-terminated, kept with it. */
struct sb_str {
	SLIST_ENTRY(sb_str) next;
	const msgpack_object *o; /* what it copies: asked again, no new copy */
	char s[];
};

struct sb_reply {
	uint8_t *buf; /* the frame's body */
	size_t len;
	struct mp_doc doc;
	enum sb_err err;      /* SB_OK for an ok reply */
	int local;            /* made by the library: no frame came */
	struct client_id cid; /* the id, to match it with a request */
	char *type, *id, *errtype, *errmsg;
	SLIST_HEAD(, sb_str) strs;
};

/* A request sent whose reply has not come. */
struct sb_pending {
	TAILQ_ENTRY(sb_pending) entry;
	struct client_id id;
	sb_reply_cb cb;
	void *arg;
	int internal; /* an answer or a cancel the library sent */
};
TAILQ_HEAD(sb_pendq, sb_pending);

struct sb_client {
	int fd;
	int dead;
	enum sb_err err;
	char errmsg[SB_ERRMSG_MAX];
	struct sb_reply *hello;
	size_t max_frame; /* hello's: the most a request may be */
	size_t max_reply; /* the most a reply may be */
	sb_approval_cb acb;
	void *aarg;
	sb_notice_cb ncb;
	void *narg;
	uint64_t next_id;
	uint8_t *out; /* frames waiting to be written: out[outoff..outlen) */
	size_t outlen, outoff, outcap;
	uint8_t *in; /* bytes read: in[inoff..inlen) not yet taken */
	size_t inoff, inlen, incap;
	int depth;   /* library calls running on c (callbacks inside) */
	int closing; /* sb_close was called: freed when depth is 0 */
	struct sb_pendq pend;
	size_t npend;
};

/* sb_conn.c */
struct sb_client *sb_client_new(int fd, sb_approval_cb cb, void *cb_arg);
void sb_enter(struct sb_client *c);
int sb_leave(struct sb_client *c);
int sb_fail(struct sb_client *c, enum sb_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void sb_die(struct sb_client *c, enum sb_err err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int sb_queue(
    struct sb_client *c, struct client_req *r, sb_reply_cb cb, void *arg);
int sb_queue_internal(struct sb_client *c, struct client_req *r);
struct sb_pending *sb_find(struct sb_client *c, const struct client_id *id);
int sb_wait(struct sb_client *c, struct sb_reply **slot, int timeout_ms);

/* sb_req.c */
int sb_req_parse_id(const char *s, struct client_id *id);
int sb_req_encode(
    const struct sb_req *req, size_t max, struct mp_enc *m, struct error *e);

/* sb_reply.c */
struct sb_reply *sb_reply_decode(uint8_t *buf, size_t len, struct error *e);
/* A reply the library makes itself: {type: "error", ok: false} with id. */
struct sb_reply *sb_reply_local(
    const struct client_id *id, enum sb_err err, const char *msg);
const msgpack_object *sb_reply_object(const struct sb_reply *r);
enum sb_err sb_err_from_type(enum err_type t);
enum err_type sb_err_to_type(enum sb_err err);

#endif
