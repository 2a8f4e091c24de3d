/*
 * broker_client.c: one request frame from a client. hello and stats are
 * answered here, cancel ends a call, approve answers one and approvals
 * lists what waits for an answer; every other request becomes a call
 * (broker_call.c), a session file request as a call of the files skill
 * (broker_files.c). A frame that is no msgpack map is answered with
 * bad_request and the connection closes; a request that breaks its
 * type's rules gets its error and the connection goes on.
 */
#include <stdio.h>

#include "../lib/log.h"
#include "broker.h"

/* hello: agree on a major; a client may say it answers approvals. */
static void
client_hello(struct conn *cn, const struct client_req *cr, struct mp_enc *m)
{
	char msg[96];

	if (cr->protocol != 0 && (cr->protocol < CLIENT_PROTO_MIN ||
	                             cr->protocol > CLIENT_PROTO_MAX)) {
		snprintf(msg, sizeof(msg),
		    "protocol %llu is not supported: this server speaks %d..%d",
		    (unsigned long long)cr->protocol, CLIENT_PROTO_MIN,
		    CLIENT_PROTO_MAX);
		client_error_enc(m, &cr->id, ERR_UNSUPPORTED, msg);
		return;
	}
	cn->proto =
	    cr->protocol != 0 ? (unsigned)cr->protocol : CLIENT_PROTO_MAX;
	cn->approvals = cr->approvals;
	reply_hello(m, &cr->id, cn);
}

void
client_request(struct conn *cn, const uint8_t *body, size_t len)
{
	struct client_req cr;
	struct mp_doc d;
	struct error e;
	struct mp_enc m;
	char msg[64];

	B->stat_requests++;
	/* A frame that is no msgpack map ends the connection... */
	if (mp_decode(&d, body, len, NULL, &e) == -1) {
		conn_error(cn, NULL, ERR_BAD_REQUEST, e.msg, 1);
		return;
	}
	/* ...a request that breaks its type's rules is answered alone. */
	if (client_req_dec(&d, &cr, &e) == -1) {
		conn_error(cn, &cr.id, e.type, e.msg, 0);
		client_req_free(&cr);
		mp_doc_free(&d);
		return;
	}
	mp_doc_free(&d);
	enc_init(&m);
	if (!creq_supported(cr.type)) { /* known, not served yet */
		snprintf(msg, sizeof(msg), "request type \"%s\" is not served",
		    creq_type_name(cr.type));
		client_error_enc(&m, &cr.id, ERR_UNSUPPORTED, msg);
	} else if (cr.type == CREQ_HELLO)
		client_hello(cn, &cr, &m);
	else if (cr.type == CREQ_LAST_RESULT)
		session_last_result(cn, &cr, &m);
	else if (cr.type == CREQ_SESSION_END)
		session_end_request(cn, &cr, &m);
	else if (cr.type == CREQ_STATS)
		reply_stats(&m, &cr.id);
	else if (cr.type == CREQ_CANCEL || cr.type == CREQ_APPROVE ||
	         cr.type == CREQ_APPROVALS) {
		if (cr.type == CREQ_CANCEL)
			call_cancel_request(cn, &cr);
		else if (cr.type == CREQ_APPROVE)
			call_approve_request(cn, &cr);
		else
			approval_list_reply(cn, &cr);
		enc_free(&m);
		client_req_free(&cr);
		return;
	} else if (cn->inflight >= CONN_INFLIGHT_MAX) {
		snprintf(msg, sizeof(msg),
		    "%d requests in flight on this connection, its bound",
		    CONN_INFLIGHT_MAX);
		client_error_enc(&m, &cr.id, ERR_OVERLOADED, msg);
		stats_refused(cr.type, ERR_OVERLOADED);
	} else if (quota_check(QUOTA_CALLS, cn->uid, cn->gid, 0, &e) == -1 ||
	           (creq_is_file(cr.type) &&
	               files_call_prepare(&cr, cn->uid, &e) == -1)) {
		client_error_enc(&m, &cr.id, e.type, e.msg);
		stats_refused(cr.type, e.type);
	} else {
		enc_free(&m);
		call_start(cn, &cr); /* takes cr */
		return;
	}
	conn_send(cn, &m);
	enc_free(&m);
	client_req_free(&cr);
}
