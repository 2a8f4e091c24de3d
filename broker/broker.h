/* broker.h: the unprivileged front end on the client socket. */
#ifndef SB_BROKER_H
#define SB_BROKER_H

#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <sys/queue.h>

#include "../proto/client.h"
#include "../proto/msg.h"
#include "../proto/peer.h"

#define BROKER_VERSION "0.1.0"
#define CLIENT_INFLIGHT_MAX 32
#define DRAIN_MS 200

struct client {
	LIST_ENTRY(client) entry;
	struct bufferevent *bev;
	uint32_t uid, gid;
	int32_t pid;
	int closing;
	unsigned inflight;
};

enum rstate {
	R_AUTHZ,
	R_AUDIT_DECISION,
	R_RUN_WAIT,
	R_RUNNING,
	R_SKILLS,
	R_RELOAD
};

struct outstream {
	int fd;
	struct event *ev;
	uint8_t *buf;
	size_t len, cap;
	uint64_t total;
	EVP_MD_CTX *sha;
	int eof;
};

struct request {
	LIST_ENTRY(request) entry;
	uint64_t ref;
	enum rstate st;
	struct client *c; /* NULL once the client has gone */
	uint32_t uid, gid;
	int32_t pid;
	struct client_req cr;
	char ts[40];
	struct msg_authz_ans ans;
	uint64_t audit_ref;
	int in_fd;
	struct event *in_ev;
	size_t in_off;
	struct outstream out, err;
	int exited;
	struct msg_run_exited x;
	struct event *drain;
};

struct broker {
	struct event_base *base;
	struct evconnlistener *listener; /* enabled once the master says so */
	struct peer master, policyd, auditd;
	size_t max_frame;
	unsigned max_clients, nclients;
	uint64_t next_ref, audit_sent, audit_acked;
	uint64_t stat_requests, stat_invokes;
	LIST_HEAD(client_list, client) clients;
	LIST_HEAD(request_list, request) requests;
};

extern struct broker *B;

/* broker_client.c */
void client_accept(int fd);
void client_send(struct client *c, const struct mp_enc *m);
void client_error(struct client *c, const struct client_id *id,
    enum err_type type, const char *msg, int close_after);

/* broker_request.c */
void request_start(struct client *c, struct client_req *cr);
struct request *request_find(uint64_t ref);
void request_end(struct request *r);
void request_reply_error(struct request *r, enum err_type t, const char *msg);
void requests_fail_state(enum rstate st, enum err_type t, const char *msg);
void requests_detach(struct client *c);
extern const struct peer_handler policyd_table[], master_table[],
    auditd_table[];

void request_decision_durable(struct request *r, int ok, const char *msg);

/* broker_run.c */
void run_started(struct request *r, int in_fd, int out_fd, int err_fd);
void run_exited(struct request *r);
void run_free(struct request *r);
void reply_result(struct request *r);

/* broker_audit.c */
uint64_t audit_request(struct request *r, const char *action, const char *type,
    const char *outcome);
int audit_on_ack(struct peer *p, const struct mp_doc *d);

#endif
