/* sb_call.c: sending requests, waiting for one, and the shortcuts. */
#include "sb_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/xmalloc.h"

/* A request the library sends for itself: its reply is not the caller's
 * (an error one goes to the notice callback). */
int
sb_queue_internal(struct sb_client *c, struct client_req *r)
{
	if (sb_queue(c, r, NULL, NULL) == -1)
		return -1;
	TAILQ_LAST(&c->pend, sb_pendq)->internal = 1;
	return 0;
}

/* Each send of a request the caller did not name is a new request: it
 * gets the connection's next number (sb_req_get_id gives it back). */
static void
sb_call_number(struct sb_client *c, struct sb_req *req)
{
	if (req->own_id)
		return;
	req->r.id.is_num = 1;
	req->r.id.num = c->next_id++;
	(void)snprintf(req->idbuf, sizeof(req->idbuf), "%llu",
	    (unsigned long long)req->r.id.num);
}

int
sb_send(struct sb_client *c, struct sb_req *req, sb_reply_cb cb, void *arg)
{
	if (req == NULL || cb == NULL)
		return sb_fail(
		    c, SB_ERR_USAGE, "sb_send: no request or callback");
	sb_call_number(c, req);
	return sb_queue(c, &req->r, cb, arg);
}

int
sb_call(struct sb_client *c, struct sb_req *req, struct sb_reply **reply)
{
	struct sb_reply *r = NULL;

	*reply = NULL;
	if (req == NULL)
		return sb_fail(c, SB_ERR_USAGE, "sb_call: no request");
	sb_call_number(c, req);
	sb_enter(c);
	if (sb_queue(c, &req->r, NULL, &r) == -1 || sb_wait(c, &r, -1) == -1)
		r = NULL;
	if (sb_leave(c)) { /* a callback closed c */
		sb_reply_free(r);
		return -1;
	}
	*reply = r;
	return r != NULL ? 0 : -1;
}

int
sb_cancel(struct sb_client *c, const char *request_id)
{
	struct client_req r;
	int ret;

	memset(&r, 0, sizeof(r));
	r.type = CREQ_CANCEL;
	if (sb_req_parse_id(request_id, &r.rid) == -1)
		return sb_fail(c, SB_ERR_USAGE, "sb_cancel: a bad request id");
	/* this connection's own call: the broker would look on the uid's
	 * other connections too (a cancel request does that on purpose) */
	if (sb_find(c, &r.rid) == NULL) {
		client_req_free(&r);
		return sb_fail(c, SB_ERR_USAGE,
		    "sb_cancel: no request %s in flight on this connection",
		    request_id);
	}
	ret = sb_queue_internal(c, &r);
	client_req_free(&r);
	return ret;
}

int
sb_approve(
    struct sb_client *c, const char *approval_id, enum sb_approval answer)
{
	struct client_req r;
	int ret;

	if (approval_id == NULL || *approval_id == '\0' ||
	    strlen(approval_id) > CLIENT_APPROVAL_ID_MAX ||
	    (answer != SB_APPROVAL_YES_ONCE &&
	        answer != SB_APPROVAL_YES_IN_SESSION &&
	        answer != SB_APPROVAL_NO))
		return sb_fail(c, SB_ERR_USAGE, "sb_approve: a bad approval");
	memset(&r, 0, sizeof(r));
	r.type = CREQ_APPROVE;
	r.approval_id = xstrdup(approval_id);
	r.option = (enum client_approval)answer;
	ret = sb_queue_internal(c, &r);
	client_req_free(&r);
	return ret;
}

int
sb_invoke(struct sb_client *c, const char *skill, const char *command,
    const char *const *argv, const char *session, struct sb_reply **reply)
{
	struct sb_req *req = sb_req_new("invoke");
	size_t i;
	int ret = -1;

	*reply = NULL;
	if (sb_req_skill(req, skill) == -1 ||
	    (command != NULL && sb_req_command(req, command) == -1) ||
	    (session != NULL && sb_req_session(req, session) == -1) ||
	    sb_req_phase(req, "execution") == -1)
		sb_fail(c, SB_ERR_USAGE,
		    "sb_invoke: a bad skill, command "
		    "or session");
	else {
		for (i = 0; argv != NULL && argv[i] != NULL; i++)
			if (sb_req_arg(req, argv[i]) == -1)
				break;
		if (argv != NULL && argv[i] != NULL)
			sb_fail(c, SB_ERR_USAGE,
			    "sb_invoke: argument %zu is not one the broker "
			    "takes",
			    i);
		else
			ret = sb_call(c, req, reply);
	}
	sb_req_free(req);
	return ret;
}
