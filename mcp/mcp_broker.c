/*
 * mcp_broker.c: the connection to the broker, and the catalog kept
 * fresh through it. The connection is made at initialize and again, if
 * it died, by the next request that needs it (the calls in flight when
 * it died answer isError). A refresh asks `skills`, then `skill_info`
 * of each valid skill, at most MCP_INFO_IN_FLIGHT at once; whoever
 * wants the catalog meanwhile waits for that same refresh. The broker
 * pushes nothing when its policy is reloaded, so a poll refreshes every
 * --poll-s seconds and tells the host when its lists changed.
 */
#include "mcp.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

#define MCP_PUT_CHUNK_DEFAULT (256 * 1024)

/* One skill_info of a refresh. */
struct mcp_info_req {
	struct mcp_server *s;
	size_t skill;
};

/* A frame that answers none of our requests: an approve or a cancel
 * the broker did not take (the call had ended). */
static void
mcp_broker_notice(
    UNUSED struct sb_client *sb, const struct sb_reply *frame, UNUSED void *arg)
{
	log_debug("broker notice: %s %s: %s", sb_reply_type(frame),
	    mcp_reply_etype(frame), mcp_reply_emsg(frame));
}

/* The broker connection, made now if there is none. */
struct sb_client *
mcp_broker(struct mcp_server *s, struct error *e)
{
	char msg[512];
	enum sb_err err;
	const struct sb_reply *h;
	uint64_t v;

	if (s->sb_closing) {
		(void)error_set(
		    e, ERR_INTERNAL, "the broker connection is closing");
		return NULL;
	}
	if (s->sb != NULL && !s->sb_dead)
		return s->sb;
	if (s->sb != NULL)
		mcp_broker_drop(s);
	/* a connect can take up to the library's hello bound: after a
	 * failure, requests fail at once for a while (1 s, doubling to 30 s)
	 * rather than each holding the loop */
	if (now_mono_ms() < s->sb_retry_ms) {
		(void)error_set(e, ERR_INTERNAL,
		    "cannot reach the skillbroker daemon at %s (tried %llu ms "
		    "ago; trying again in %llu ms)",
		    sb_socket_path(s->sock),
		    (unsigned long long)(s->sb_backoff_ms / 2),
		    (unsigned long long)(s->sb_retry_ms - now_mono_ms()));
		return NULL;
	}
	s->sb = sb_connect(s->sock, s->caps.elicitation ? mcp_approve_cb : NULL,
	    s, &err, msg, sizeof(msg));
	if (s->sb == NULL) {
		if (s->sb_backoff_ms == 0)
			s->sb_backoff_ms = MCP_RETRY_MIN_MS;
		s->sb_retry_ms = now_mono_ms() + s->sb_backoff_ms;
		if (s->sb_backoff_ms < MCP_RETRY_MAX_MS)
			s->sb_backoff_ms *= 2;
		(void)error_set(e, ERR_INTERNAL,
		    "cannot reach the skillbroker daemon at %s: %s",
		    sb_socket_path(s->sock), msg);
		return NULL;
	}
	s->sb_backoff_ms = 0;
	s->sb_retry_ms = 0;
	sb_set_notice(s->sb, mcp_broker_notice, s);
	s->put_chunk = MCP_PUT_CHUNK_DEFAULT;
	h = sb_hello(s->sb);
	if (h != NULL &&
	    sb_reply_uint(h, "capabilities.limits.put_file_bytes", &v) == 0 &&
	    v > 0 && v < MCP_PUT_CHUNK_DEFAULT * 64)
		s->put_chunk = (size_t)v;
	if (s->sb_down_logged)
		log_info("connected to the broker at %s again",
		    sb_socket_path(s->sock));
	else
		log_debug(
		    "connected to the broker at %s", sb_socket_path(s->sock));
	s->sb_down_logged = 0;
	return s->sb;
}

/* Close a connection that died; the next use reconnects. */
void
mcp_broker_drop(struct mcp_server *s)
{
	if (s->sb == NULL)
		return;
	log_warnx("the connection to the broker was lost (%s); the next "
	          "request reconnects",
	    sb_errmsg(s->sb));
	s->sb_down_logged = 1;
	/* the replies sb_close gives the requests in flight must not
	 * send new ones */
	s->sb_closing = 1;
	sb_close(s->sb);
	s->sb_closing = 0;
	s->sb = NULL;
	s->sb_dead = 0;
}

/* A reply's error type: the broker's wire name, or the library's. */
const char *
mcp_reply_etype(const struct sb_reply *r)
{
	const char *t = sb_reply_error_type(r);

	return t != NULL ? t : sb_err_name(sb_reply_error(r));
}

/* A reply's error message, "" when it has none. */
const char *
mcp_reply_emsg(const struct sb_reply *r)
{
	const char *m = sb_reply_error_message(r);

	return m != NULL ? m : "";
}

/* The refresh ended (err NULL: the new catalog is in): swap it in,
 * compare the lists the host knows, and run every waiter. */
static void
mcp_broker_done(struct mcp_server *s, const char *err)
{
	struct mcp_waiters run;
	struct mcp_waiter *w;
	char *tools, *res;
	json_t *j;

	s->refreshing = 0;
	if (err == NULL) {
		mcp_catalog_finish(&s->next);
		mcp_catalog_free(&s->cat);
		s->cat = s->next;
		mcp_catalog_init(&s->next);
		s->have_cat = 1;
		j = mcp_catalog_tools(&s->cat);
		tools = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		j = mcp_catalog_resources(&s->cat);
		res = json_dumps(j, JSON_COMPACT);
		json_decref(j);
		if (s->tools_seen != NULL && tools != NULL &&
		    strcmp(tools, s->tools_seen) != 0 && s->ready) {
			j = mcp_rpc_notify(
			    "notifications/tools/list_changed", NULL);
			mcp_send(s, j);
			json_decref(j);
		}
		if (s->resources_seen != NULL && res != NULL &&
		    strcmp(res, s->resources_seen) != 0 && s->ready) {
			j = mcp_rpc_notify(
			    "notifications/resources/list_changed", NULL);
			mcp_send(s, j);
			json_decref(j);
		}
		free(s->tools_seen);
		free(s->resources_seen);
		s->tools_seen = tools;
		s->resources_seen = res;
	} else {
		mcp_catalog_free(&s->next);
	}
	TAILQ_INIT(&run);
	TAILQ_CONCAT(&run, &s->waiters, entry);
	while ((w = TAILQ_FIRST(&run)) != NULL) {
		TAILQ_REMOVE(&run, w, entry);
		w->cb(s, w->arg, err);
		free(w);
	}
}

/* Fail the refresh with the reply's error, or the library's. */
static void
mcp_broker_fail(struct mcp_server *s, struct sb_reply *r, const char *what)
{
	char *msg;

	if (r != NULL)
		(void)xasprintf(&msg, "%s failed: %s: %s", what,
		    mcp_reply_etype(r), mcp_reply_emsg(r));
	else
		(void)xasprintf(&msg, "%s could not be sent: %s", what,
		    s->sb ? sb_errmsg(s->sb) : "no connection");
	mcp_broker_done(s, msg);
	free(msg);
}

static void mcp_broker_info_cb(struct sb_client *, struct sb_reply *, void *);

/* Send skill_info requests while there is room; done when all came. */
static void
mcp_broker_pump(struct mcp_server *s)
{
	struct mcp_info_req *ir;
	struct sb_req *req;
	char id[64];

	while (s->info_pending < MCP_INFO_IN_FLIGHT &&
	       s->info_next < s->next.nskills) {
		ir = xcalloc(1, sizeof(*ir));
		ir->s = s;
		ir->skill = s->info_next++;
		mcp_server_req_id(s, id, sizeof(id));
		req = sb_req_new("skill_info");
		if (s->sb_closing || req == NULL || sb_req_id(req, id) == -1 ||
		    sb_req_skill(req, s->next.skills[ir->skill].name) == -1 ||
		    sb_send(s->sb, req, mcp_broker_info_cb, ir) == -1) {
			sb_req_free(req);
			free(ir);
			/* send no more; done once those in flight came */
			s->info_next = s->next.nskills;
			if (s->refresh_err == NULL)
				s->refresh_err =
				    xstrdup("skill_info could not be sent: the "
				            "broker connection is gone");
			break;
		}
		sb_req_free(req);
		s->info_pending++;
	}
	if (s->info_pending == 0 && s->info_next == s->next.nskills) {
		if (s->refresh_err != NULL) {
			char *err = s->refresh_err;

			s->refresh_err = NULL;
			mcp_broker_done(s, err);
			free(err);
		} else {
			mcp_broker_done(s, NULL);
		}
	}
}

/* A skill_info came: the skill is visible with its commands, or not. */
static void
mcp_broker_info_cb(UNUSED struct sb_client *c, struct sb_reply *r, void *arg)
{
	struct mcp_info_req *ir = arg;
	struct mcp_server *s = ir->s;
	char path[64];
	const char *name, *desc;
	int i, n, allowed, ask;
	enum sb_err err;

	s->info_pending--;
	if (sb_reply_ok(r)) {
		mcp_catalog_body(
		    &s->next, ir->skill, sb_reply_str(r, "skill.body"));
		n = sb_reply_count(r, "skill.commands");
		for (i = 0; i < n; i++) {
			(void)snprintf(
			    path, sizeof(path), "skill.commands.%d.name", i);
			name = sb_reply_str(r, path);
			(void)snprintf(path, sizeof(path),
			    "skill.commands.%d.description", i);
			desc = sb_reply_str(r, path);
			(void)snprintf(
			    path, sizeof(path), "skill.commands.%d.allowed", i);
			if (sb_reply_bool(r, path, &allowed) == -1)
				allowed = 0;
			(void)snprintf(
			    path, sizeof(path), "skill.commands.%d.ask", i);
			if (sb_reply_bool(r, path, &ask) == -1)
				ask = 0;
			if (name != NULL)
				mcp_catalog_command(&s->next, ir->skill, name,
				    desc, allowed, ask);
		}
	} else if ((err = sb_reply_error(r)) == SB_ERR_PROTOCOL ||
	           err == SB_ERR_POLICY_UNAVAILABLE ||
	           err == SB_ERR_CANCELLED) {
		/* the whole refresh is off */
		if (s->refresh_err == NULL)
			(void)xasprintf(&s->refresh_err,
			    "skill_info failed: %s: %s", mcp_reply_etype(r),
			    mcp_reply_emsg(r));
	} else if (err != SB_ERR_UNKNOWN_SKILL) {
		log_warnx("skill_info %s: %s: %s",
		    s->next.skills[ir->skill].name, mcp_reply_etype(r),
		    mcp_reply_emsg(r));
	}
	free(ir);
	sb_reply_free(r);
	mcp_broker_pump(s);
}

/* 1 if name is a skill name the broker could have registered. */
static int
mcp_broker_skill_name(const char *name)
{
	size_t i, n = strlen(name);

	if (n == 0 || n > MCP_SKILL_NAME_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		        (name[i] >= '0' && name[i] <= '9') || name[i] == '-'))
			return 0;
	return 1;
}

/* The skills reply: every valid skill, then skill_info for each. */
static void
mcp_broker_skills_cb(UNUSED struct sb_client *c, struct sb_reply *r, void *arg)
{
	struct mcp_server *s = arg;
	char path[64];
	const char *name, **cmds;
	int i, j, n, nc, valid;

	if (!sb_reply_ok(r)) {
		mcp_broker_fail(s, r, "skills");
		sb_reply_free(r);
		return;
	}
	mcp_catalog_free(&s->next);
	n = sb_reply_count(r, "skills");
	for (i = 0; i < n; i++) {
		(void)snprintf(path, sizeof(path), "skills.%d.name", i);
		name = sb_reply_str(r, path);
		(void)snprintf(path, sizeof(path), "skills.%d.valid", i);
		if (name == NULL || sb_reply_bool(r, path, &valid) == -1 ||
		    !valid || !mcp_broker_skill_name(name))
			continue;
		(void)snprintf(path, sizeof(path), "skills.%d.commands", i);
		nc = sb_reply_count(r, path);
		cmds = xcalloc(nc > 0 ? (size_t)nc + 1 : 1, sizeof(*cmds));
		for (j = 0; j < nc; j++) {
			(void)snprintf(
			    path, sizeof(path), "skills.%d.commands.%d", i, j);
			cmds[j] = sb_reply_str(r, path);
			if (cmds[j] == NULL)
				cmds[j] = "";
		}
		(void)snprintf(path, sizeof(path), "skills.%d.description", i);
		(void)mcp_catalog_add(&s->next, name, sb_reply_str(r, path),
		    cmds, nc > 0 ? (size_t)nc : 0);
		free(cmds);
	}
	sb_reply_free(r);
	s->info_next = s->info_pending = 0;
	mcp_broker_pump(s);
}

/* Wait for a fresh catalog: join the refresh in flight, or start one. */
void
mcp_broker_refresh(struct mcp_server *s, mcp_refresh_cb cb, void *arg)
{
	struct mcp_waiter *w;
	struct sb_req *req;
	struct error e;
	char id[64];

	w = xcalloc(1, sizeof(*w));
	w->cb = cb;
	w->arg = arg;
	TAILQ_INSERT_TAIL(&s->waiters, w, entry);
	if (s->refreshing)
		return;
	s->refreshing = 1;
	if (mcp_broker(s, &e) == NULL) {
		mcp_broker_done(s, e.msg);
		return;
	}
	mcp_server_req_id(s, id, sizeof(id));
	req = sb_req_new("skills");
	if (s->sb_closing || req == NULL || sb_req_id(req, id) == -1 ||
	    sb_send(s->sb, req, mcp_broker_skills_cb, s) == -1)
		mcp_broker_fail(s, NULL, "skills");
	sb_req_free(req);
}

/* The poll's waiter: a failure is logged once per outage. */
static void
mcp_broker_polled(struct mcp_server *s, UNUSED void *arg, const char *err)
{
	if (err == NULL || s->sb_down_logged)
		return;
	log_warnx("refreshing the tools: %s", err);
	s->sb_down_logged = 1;
}

/* The poll's tick: refresh unless a refresh runs already. */
void
mcp_broker_poll(struct mcp_server *s)
{
	if (!s->refreshing)
		mcp_broker_refresh(s, mcp_broker_polled, NULL);
}
