/* sb_req.c: a request built field by field, each checked as it is set. */
#include "sb_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"

/* The bounds the broker holds requests to (docs/protocol.md). */
#define SB_STR_MAX 4096
#define SB_ARGS_MAX 256
#define SB_ENV_MAX CLIENT_ENV_MAX

/* Which fields each request type takes. */
enum {
	F_SKILL = 1 << 0,
	F_CALL = 1 << 1, /* command, phase, args, env, stdin */
	F_SESSION = 1 << 2,
	F_TIMEOUT = 1 << 3,
	F_REFS = 1 << 4,
	F_TARGET = 1 << 5,
	F_APPROVAL = 1 << 6,
	F_PATH = 1 << 7,
	F_DATA = 1 << 8,
	F_OFFSET = 1 << 9,
	F_LENGTH = 1 << 10,
};

static const unsigned sb_req_fields[CREQ__COUNT] = {
    [CREQ_INVOKE] = F_SKILL | F_CALL | F_SESSION | F_TIMEOUT,
    [CREQ_AUTHORIZE] = F_SKILL | F_CALL | F_SESSION | F_TIMEOUT,
    [CREQ_SKILL_INFO] = F_SKILL | F_REFS,
    [CREQ_CANCEL] = F_TARGET,
    [CREQ_APPROVE] = F_APPROVAL,
    [CREQ_LAST_RESULT] = F_SESSION,
    [CREQ_SESSION_END] = F_SESSION,
    [CREQ_PUT_FILE] = F_SESSION | F_TIMEOUT | F_PATH | F_DATA | F_OFFSET,
    [CREQ_GET_FILE] = F_SESSION | F_TIMEOUT | F_PATH | F_OFFSET | F_LENGTH,
    [CREQ_LIST_FILES] = F_SESSION | F_TIMEOUT,
    [CREQ_DELETE_FILE] = F_SESSION | F_TIMEOUT | F_PATH,
};

/* -1 with errno EINVAL: the value or the field is not for this request. */
static int
sb_inval(void)
{
	errno = EINVAL;
	return -1;
}

/* req takes field f, and s is a string the broker would take. */
static int
sb_req_takes(const struct sb_req *req, unsigned f, const char *s)
{
	size_t n;

	if (req == NULL || !(sb_req_fields[req->r.type] & f))
		return 0;
	if (s == NULL)
		return 1;
	n = strlen(s);
	return n > 0 && n <= SB_STR_MAX && utf8_valid(s, n);
}

/* Replace *slot with a copy of s. */
static int
sb_req_setstr(struct sb_req *req, unsigned f, char **slot, const char *s)
{
	if (s == NULL || !sb_req_takes(req, f, s))
		return sb_inval();
	free(*slot);
	*slot = xstrdup(s);
	return 0;
}

/* A request id as the user names it: digits are a number on the wire
 * (as the library numbers its own requests), anything else a string. */
int
sb_req_parse_id(const char *s, struct client_id *id)
{
	char *end;
	unsigned long long v;

	memset(id, 0, sizeof(*id));
	if (s == NULL || *s == '\0' || strlen(s) > CLIENT_ID_MAX ||
	    !utf8_valid(s, strlen(s)))
		return -1;
	if (s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		v = strtoull(s, &end, 10);
		if (*end == '\0' && errno == 0) {
			id->is_num = 1;
			id->num = v;
			return 0;
		}
	}
	id->str = xstrdup(s);
	return 0;
}

struct sb_req *
sb_req_new(const char *type)
{
	struct sb_req *req;
	int t;

	if (type == NULL)
		return errno = EINVAL, NULL;
	for (t = 0; t < CREQ__COUNT; t++)
		if (sb_req_fields[t] != 0 || t == CREQ_SKILLS ||
		    t == CREQ_STATS || t == CREQ_RELOAD || t == CREQ_APPROVALS)
			if (strcmp(type, creq_type_name((enum creq_type)t)) ==
			    0)
				break;
	if (t == CREQ__COUNT)
		return errno = EINVAL, NULL;
	req = xcalloc(1, sizeof(*req));
	req->r.type = (enum creq_type)t;
	return req;
}

void
sb_req_free(struct sb_req *req)
{
	if (req == NULL)
		return;
	client_req_free(&req->r);
	free(req);
}

int
sb_req_id(struct sb_req *req, const char *id)
{
	struct client_id cid;

	if (req == NULL || sb_req_parse_id(id, &cid) == -1)
		return sb_inval();
	free(req->r.id.str);
	req->r.id = cid;
	req->own_id = 1;
	if (cid.is_num)
		snprintf(req->idbuf, sizeof(req->idbuf), "%llu",
		    (unsigned long long)cid.num);
	return 0;
}

int
sb_req_skill(struct sb_req *req, const char *skill)
{
	return sb_req_setstr(req, F_SKILL, &req->r.skill, skill);
}

int
sb_req_command(struct sb_req *req, const char *command)
{
	return sb_req_setstr(req, F_CALL, &req->r.command, command);
}

int
sb_req_session(struct sb_req *req, const char *session)
{
	return sb_req_setstr(req, F_SESSION, &req->r.session, session);
}

int
sb_req_phase(struct sb_req *req, const char *phase)
{
	return sb_req_setstr(req, F_CALL, &req->r.phase, phase);
}

int
sb_req_arg(struct sb_req *req, const char *arg)
{
	/* an argument may be empty */
	if (arg == NULL || !sb_req_takes(req, F_CALL, NULL) ||
	    strlen(arg) > SB_STR_MAX || !utf8_valid(arg, strlen(arg)) ||
	    req->r.nargs >= SB_ARGS_MAX)
		return sb_inval();
	req->r.args =
	    xreallocarray(req->r.args, req->r.nargs + 2, sizeof(*req->r.args));
	req->r.args[req->r.nargs++] = xstrdup(arg);
	req->r.args[req->r.nargs] = NULL;
	return 0;
}

int
sb_req_env(struct sb_req *req, const char *key, const char *value)
{
	size_t i, klen;

	if (key == NULL || value == NULL || !sb_req_takes(req, F_CALL, key) ||
	    strchr(key, '=') != NULL || strlen(value) > SB_STR_MAX ||
	    !utf8_valid(value, strlen(value)))
		return sb_inval();
	klen = strlen(key);
	for (i = 0; i < req->r.nenv; i++)
		if (strncmp(req->r.env[i], key, klen) == 0 &&
		    req->r.env[i][klen] == '=') {
			free(req->r.env[i]);
			xasprintf(&req->r.env[i], "%s=%s", key, value);
			return 0;
		}
	if (req->r.nenv >= SB_ENV_MAX)
		return sb_inval();
	req->r.env =
	    xreallocarray(req->r.env, req->r.nenv + 2, sizeof(*req->r.env));
	xasprintf(&req->r.env[req->r.nenv++], "%s=%s", key, value);
	req->r.env[req->r.nenv] = NULL;
	return 0;
}

/* stdin and data share the request's one byte buffer. */
static int
sb_req_bytes(struct sb_req *req, unsigned f, const void *data, size_t len)
{
	if (!sb_req_takes(req, f, NULL) || (data == NULL && len > 0) ||
	    len > FRAME_MAX_DEFAULT)
		return sb_inval();
	free(req->r.stdin_data);
	req->r.stdin_data = xmalloc(len > 0 ? len : 1);
	if (len > 0)
		memcpy(req->r.stdin_data, data, len);
	req->r.stdin_len = len;
	return 0;
}

int
sb_req_stdin(struct sb_req *req, const void *data, size_t len)
{
	return sb_req_bytes(req, F_CALL, data, len);
}

int
sb_req_data(struct sb_req *req, const void *data, size_t len)
{
	return sb_req_bytes(req, F_DATA, data, len);
}

int
sb_req_timeout(struct sb_req *req, uint64_t ms)
{
	if (!sb_req_takes(req, F_TIMEOUT, NULL) || ms == 0)
		return sb_inval();
	req->r.timeout_ms = ms;
	return 0;
}

int
sb_req_references(struct sb_req *req, int on)
{
	if (!sb_req_takes(req, F_REFS, NULL))
		return sb_inval();
	req->r.references = on != 0;
	return 0;
}

int
sb_req_target(struct sb_req *req, const char *request_id)
{
	struct client_id id;

	if (!sb_req_takes(req, F_TARGET, NULL) ||
	    sb_req_parse_id(request_id, &id) == -1)
		return sb_inval();
	free(req->r.rid.str);
	req->r.rid = id;
	return 0;
}

int
sb_req_approval(
    struct sb_req *req, const char *approval_id, enum sb_approval answer)
{
	if (answer != SB_APPROVAL_YES_ONCE &&
	    answer != SB_APPROVAL_YES_IN_SESSION && answer != SB_APPROVAL_NO)
		return sb_inval();
	if (approval_id == NULL || strlen(approval_id) > CLIENT_APPROVAL_ID_MAX)
		return sb_inval();
	if (sb_req_setstr(req, F_APPROVAL, &req->r.approval_id, approval_id) ==
	    -1)
		return -1;
	req->r.option = (enum client_approval)answer;
	return 0;
}

int
sb_req_path(struct sb_req *req, const char *path)
{
	if (path == NULL || client_path_check(path, strlen(path), NULL) == -1)
		return sb_inval();
	return sb_req_setstr(req, F_PATH, &req->r.path, path);
}

int
sb_req_offset(struct sb_req *req, uint64_t offset)
{
	if (!sb_req_takes(req, F_OFFSET, NULL))
		return sb_inval();
	req->r.offset = offset;
	return 0;
}

int
sb_req_length(struct sb_req *req, uint64_t length)
{
	if (!sb_req_takes(req, F_LENGTH, NULL))
		return sb_inval();
	req->r.length = length;
	return 0;
}

const char *
sb_req_get_id(const struct sb_req *req)
{
	if (req->r.id.str != NULL)
		return req->r.id.str;
	return req->idbuf[0] != '\0' ? req->idbuf : NULL;
}

/* What the broker needs before it would even look at the request. */
static int
sb_req_complete(const struct client_req *r, struct error *e)
{
	unsigned f = sb_req_fields[r->type];

	if ((f & F_SKILL) && r->skill == NULL)
		return error_set(e, ERR_BAD_REQUEST, "%s needs a skill",
		    creq_type_name(r->type));
	if ((f & F_PATH) && r->path == NULL)
		return error_set(e, ERR_BAD_REQUEST, "%s needs a path",
		    creq_type_name(r->type));
	if ((r->type == CREQ_PUT_FILE || creq_is_file(r->type)) &&
	    r->session == NULL)
		return error_set(e, ERR_BAD_REQUEST, "%s needs a session",
		    creq_type_name(r->type));
	if (r->type == CREQ_PUT_FILE && r->stdin_data == NULL)
		return error_set(e, ERR_BAD_REQUEST, "put_file needs data");
	if ((f & F_TARGET) && !r->rid.is_num && r->rid.str == NULL)
		return error_set(
		    e, ERR_BAD_REQUEST, "cancel needs the request to cancel");
	if ((f & F_APPROVAL) && r->approval_id == NULL)
		return error_set(e, ERR_BAD_REQUEST,
		    "approve needs an approval and an answer");
	return 0;
}

/* The request as one frame's body, at most max bytes. */
int
sb_req_encode(
    const struct sb_req *req, size_t max, struct mp_enc *m, struct error *e)
{
	if (sb_req_complete(&req->r, e) == -1)
		return -1;
	enc_init(m);
	client_req_enc(m, &req->r);
	if (m->sb.size > max) {
		error_set(e, ERR_BAD_REQUEST,
		    "a request of %zu bytes is over the broker's limit of "
		    "%zu bytes",
		    m->sb.size, max);
		enc_free(m);
		return -1;
	}
	return 0;
}
