/*
 * mcp_approve.c: a policy's ask rule, put to the host's user. The
 * broker sends an approval_request for one of our calls; the library
 * hands it to mcp_approve_cb, which asks the host with
 * elicitation/create (what would run, with which permissions, and the
 * three answers) and answers the broker later, with sb_approve, when
 * the host's response comes. Only accept with yes_once or
 * yes_in_session approves; decline, cancel, an error or anything else
 * is no. Without the host's elicitation capability we never told the
 * broker we answer approvals, so it denies such calls itself.
 */
#include "mcp.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

#define MCP_APPROVE_MSG_MAX 8192 /* bytes of the question */

/* A member of o as compact JSON (the caller frees it). */
static char *
mcp_approve_dump(json_t *o, const char *path)
{
	char *p = xstrdup(path), *tok, *save = NULL, *out;
	json_t *v = o;

	for (tok = strtok_r(p, ".", &save); tok && v;
	     tok = strtok_r(NULL, ".", &save))
		v = json_object_get(v, tok);
	free(p);
	if (v == NULL ||
	    (out = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY)) == NULL)
		return xstrdup("(not given)");
	return out;
}

/* A string member of o, or "?". */
static const char *
mcp_approve_str(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : "?";
}

/* The question for the human. */
static char *
mcp_approve_message(const struct sb_reply *rq)
{
	char *js, *msg, *args, *perms, *limits, *rules, *cut;
	json_t *o = NULL;
	json_int_t total, tmo;

	if ((js = sb_reply_json(rq)) != NULL)
		o = json_loads(js, 0, NULL);
	free(js);
	if (o == NULL)
		o = json_object();
	args = mcp_approve_dump(o, "args");
	perms = mcp_approve_dump(o, "effective.permissions");
	limits = mcp_approve_dump(o, "effective.limits");
	rules = mcp_approve_dump(o, "rules");
	total = json_integer_value(json_object_get(o, "args_total"));
	tmo = json_integer_value(json_object_get(o, "timeout_ms"));
	(void)xasprintf(&msg,
	    "skillbroker: the policy asks a human before this call runs.\n\n"
	    "Skill: %s\nCommand: %s\nSession: %s\nArguments "
	    "(%" JSON_INTEGER_FORMAT
	    " in all): %s\nPermissions: %s\nLimits: %s\nAsked by rule: %s\n\n"
	    "Answer yes_once to run it this once, yes_in_session to run it "
	    "and let this skill's later calls in this session run without "
	    "asking, or no. No answer within %" JSON_INTEGER_FORMAT " s is a "
	    "no.",
	    mcp_approve_str(o, "skill"), mcp_approve_str(o, "command"),
	    mcp_approve_str(o, "session"), total, args, perms, limits, rules,
	    tmo / 1000);
	json_decref(o);
	free(args);
	free(perms);
	free(limits);
	free(rules);
	cut = mcp_text_cut(msg, MCP_APPROVE_MSG_MAX);
	free(msg);
	return cut;
}

/* An approval request for one of our calls: ask the host, answer later. */
enum sb_approval
mcp_approve_cb(
    UNUSED struct sb_client *sb, const struct sb_reply *rq, void *arg)
{
	struct mcp_server *s = arg;
	const char *appr, *rid;
	char rbuf[32], *msg, idbuf[64];
	struct mcp_call *c;
	uint64_t n;
	json_t *id, *params, *req;

	appr = sb_reply_str(rq, "id");
	if ((rid = sb_reply_str(rq, "request_id")) == NULL &&
	    sb_reply_uint(rq, "request_id", &n) == 0) {
		(void)snprintf(rbuf, sizeof(rbuf), "%" PRIu64, n);
		rid = rbuf;
	}
	c = rid ? mcp_call_by_req(s, rid) : NULL;
	if (appr == NULL || strlen(appr) >= MCP_APPROVAL_ID_MAX || c == NULL ||
	    c->cancelled || c->elicit_id != NULL || !s->caps.elicitation) {
		log_warnx("approval request %s for %s: no call of ours asks; "
		          "answered no",
		    appr ? appr : "?", rid ? rid : "?");
		return SB_APPROVAL_NO;
	}
	msg = mcp_approve_message(rq);
	params = json_pack("{s:o, s:{s:s, s:{s:{s:s, s:s, s:s, s:[s,s,s]}}, "
	                   "s:[s]}}",
	    "message", mcp_text_json(msg, strlen(msg)), "requestedSchema",
	    "type", "object", "properties", "answer", "type", "string", "title",
	    "Run it?", "description",
	    "yes_once: run it this once; yes_in_session: run it, and this "
	    "skill's later calls in this session without asking; no: refuse",
	    "enum", "yes_once", "yes_in_session", "no", "required", "answer");
	free(msg);
	(void)snprintf(
	    idbuf, sizeof(idbuf), "skillbroker-mcp-%" PRId64, ++s->next_rpc);
	id = json_string(idbuf);
	req = mcp_rpc_request(id, "elicitation/create", params);
	mcp_send(s, req);
	json_decref(req);
	c->elicit_id = id;
	(void)snprintf(c->approval, sizeof(c->approval), "%s", appr);
	mcp_call_progress(s, c,
	    "waiting for a human's approval (%s), asked through elicitation",
	    appr);
	return SB_APPROVAL_NONE;
}

/* The answer an elicitation response gives. */
static enum sb_approval
mcp_approve_answer(json_t *result, json_t *error, const char **why)
{
	const char *action, *answer;

	*why = "an error";
	if (error != NULL || !json_is_object(result))
		return SB_APPROVAL_NO;
	action = json_string_value(json_object_get(result, "action"));
	*why = action ? action : "a malformed response";
	if (action == NULL || strcmp(action, "accept") != 0)
		return SB_APPROVAL_NO;
	answer = json_string_value(
	    json_object_get(json_object_get(result, "content"), "answer"));
	*why = answer ? answer : "accept without an answer";
	if (answer != NULL && strcmp(answer, "yes_once") == 0)
		return SB_APPROVAL_YES_ONCE;
	if (answer != NULL && strcmp(answer, "yes_in_session") == 0)
		return SB_APPROVAL_YES_IN_SESSION;
	return SB_APPROVAL_NO;
}

/* The host answered an elicitation: pass the answer on to the broker. */
void
mcp_approve_response(
    struct mcp_server *s, json_t *id, json_t *result, json_t *error)
{
	enum sb_approval ans;
	struct mcp_call *c;
	const char *why;

	TAILQ_FOREACH (c, &s->calls, entry)
		if (c->elicit_id != NULL && json_equal(c->elicit_id, id))
			break;
	if (c == NULL) {
		log_debug("a response to no request of ours in flight");
		return;
	}
	ans = mcp_approve_answer(result, error, &why);
	json_decref(c->elicit_id);
	c->elicit_id = NULL;
	log_info("approval %s of %s: %s (%s)", c->approval, c->req_id,
	    ans == SB_APPROVAL_NO ? "no" : "yes", why);
	if (s->sb == NULL || s->sb_dead || s->sb_closing ||
	    sb_approve(s->sb, c->approval, ans) == -1) {
		log_warnx("approval %s could not be answered: the broker "
		          "connection is gone",
		    c->approval);
		return;
	}
	mcp_call_progress(s, c, "approval %s answered: %s", c->approval,
	    ans == SB_APPROVAL_YES_ONCE         ? "yes_once"
	    : ans == SB_APPROVAL_YES_IN_SESSION ? "yes_in_session"
	                                        : "no");
}

/* Tell the host a question it was asked no longer needs an answer. */
void
mcp_approve_withdraw(struct mcp_server *s, struct mcp_call *c)
{
	json_t *n;

	if (c->elicit_id == NULL)
		return;
	n = mcp_rpc_notify("notifications/cancelled",
	    json_pack("{s:O, s:s}", "requestId", c->elicit_id, "reason",
	        "the tool call ended"));
	mcp_send(s, n);
	json_decref(n);
	json_decref(c->elicit_id);
	c->elicit_id = NULL;
}
