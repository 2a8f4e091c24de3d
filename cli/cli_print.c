/* cli_print.c: a broker reply as human text or JSON, and an exit status. */
#include "cli.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/xmalloc.h"
#include "../proto/mpjson.h"

#define FIELD_MAX 4096

/* Broker strings may carry skill-authored text: no terminal controls. */
void
cli_put_safe(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	for (; *p != '\0'; p++) {
		if (*p < 0x20 || *p == 0x7f)
			fputc('?', f);
		else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			fputc('?', f); /* C1 control, e.g. CSI */
			p++;
		} else
			fputc(*p, f);
	}
}

/* The in-place twin of cli_put_safe, for strings we own. */
static char *
sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;

	for (; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f)
			*p = '?';
		else if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			p[0] = p[1] = '?';
			p++;
		}
	return s;
}

/* A "skillctl: " note on stderr, on its own line after skill output. */
static void __attribute__((format(printf, 3, 4)))
note(FILE *err, int *midline, const char *fmt, ...)
{
	va_list ap;

	if (*midline)
		fputc('\n', err);
	*midline = 0;
	fputs("skillctl: ", err);
	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	fputc('\n', err);
}

/* --json: the whole reply as one compact line. */
int
cli_print_json(const msgpack_object *reply, FILE *out)
{
	json_t *j = mp_to_json(reply);
	char *s;

	if (j == NULL)
		return -1;
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	if (s == NULL)
		return -1;
	fputs(s, out);
	fputc('\n', out);
	free(s);
	return 0;
}

/* 1 if the reply's "type" is the string t. */
static int
type_is(const msgpack_object *reply, const char *t)
{
	const msgpack_object *o = mp_get(reply, "type");

	return o != NULL && o->type == MSGPACK_OBJECT_STR &&
	       o->via.str.size == strlen(t) &&
	       memcmp(o->via.str.ptr, t, o->via.str.size) == 0;
}

/* The error's type name, or NULL when the reply carries none. */
static char *
error_type(const msgpack_object *reply)
{
	const msgpack_object *em = NULL;
	char *t = NULL;

	if (mp_submap(reply, "error", 0, &em, NULL) == -1 || em == NULL ||
	    mp_str(em, "type", 0, FIELD_MAX, &t, NULL) == -1)
		return NULL;
	return t;
}

/* ok=false: "skillctl: <type>: <message>" on stderr. */
static void
print_error(const msgpack_object *reply, FILE *err, int *midline)
{
	const msgpack_object *em = NULL;
	char *t = NULL, *msg = NULL;

	(void)mp_submap(reply, "error", 0, &em, NULL);
	if (em != NULL) {
		(void)mp_str(em, "type", 0, FIELD_MAX, &t, NULL);
		(void)mp_str(em, "message", 0, FIELD_MAX, &msg, NULL);
	}
	note(err, midline, "%s: %s", t != NULL ? sanitize(t) : "error",
	    msg != NULL ? sanitize(msg) : "request failed");
	free(t);
	free(msg);
}

/* effects.process, or NULL when the reply has none. */
static int
get_process(
    const msgpack_object *reply, const msgpack_object **proc, struct error *e)
{
	const msgpack_object *eff = NULL;

	*proc = NULL;
	if (mp_submap(reply, "effects", 0, &eff, e) == -1)
		return -1;
	if (eff == NULL)
		return 0;
	return mp_submap(eff, "process", 0, proc, e);
}

/* The status for an ok reply: the skill's exit code, or 128+signal. */
static int
ok_status(const msgpack_object *reply, struct error *e)
{
	const msgpack_object *proc, *pol = NULL;
	int64_t code = 0, sig = 0;
	int allowed = 1;

	if (get_process(reply, &proc, e) == -1 ||
	    mp_submap(reply, "policy", 0, &pol, e) == -1 ||
	    (pol != NULL && mp_bool(pol, "allowed", 0, &allowed, e) == -1))
		return -1;
	if (proc != NULL &&
	    (mp_int(proc, "exit_code", 0, INT32_MIN, INT32_MAX, &code, e) ==
	            -1 ||
	        mp_int(proc, "signal", 0, 0, 1024, &sig, e) == -1))
		return -1;
	if (sig > 0)
		return sig < 128 ? 128 + (int)sig : 255;
	if (code != 0)
		return code >= 1 && code <= 255 ? (int)code : 1;
	return allowed ? CLI_EXIT_OK : CLI_EXIT_FAILED;
}

/* The exit status a reply stands for, per the usage text. */
static int
reply_status(const msgpack_object *reply, int ok, struct error *e)
{
	if (!ok)
		return CLI_EXIT_FAILED;
	return ok_status(reply, e);
}

/* Raw bytes of a bin field to f; *midline says if a line is left open. */
static int
put_bin(const msgpack_object *map, const char *key, FILE *f, int *midline,
    struct error *e)
{
	uint8_t *p = NULL;
	size_t n = 0;

	if (mp_bin(map, key, 0, CLI_REPLY_MAX, &p, &n, e) == -1)
		return -1;
	if (n > 0) {
		fwrite(p, 1, n, f);
		*midline = p[n - 1] != '\n';
	}
	free(p);
	return 0;
}

/* invoke: the skill's output, then notes on truncation. */
static int
print_output(const msgpack_object *reply, FILE *out, FILE *err, int *midline,
    struct error *e)
{
	const msgpack_object *o = NULL;
	uint64_t nout = 0, nerr = 0;
	int trunc = 0, outmid = 0;

	if (mp_submap(reply, "output", 0, &o, e) == -1)
		return -1;
	if (o == NULL)
		return 0;
	if (put_bin(o, "stdout", out, &outmid, e) == -1 ||
	    put_bin(o, "stderr", err, midline, e) == -1 ||
	    mp_bool(o, "truncated", 0, &trunc, e) == -1 ||
	    mp_uint(o, "stdout_bytes", 0, UINT64_MAX, &nout, e) == -1 ||
	    mp_uint(o, "stderr_bytes", 0, UINT64_MAX, &nerr, e) == -1)
		return -1;
	fflush(out);
	if (trunc)
		note(err, midline,
		    "output truncated (stdout %" PRIu64
		    " bytes, stderr %" PRIu64 " bytes in full)",
		    nout, nerr);
	return 0;
}

/* invoke: say on stderr when the skill was killed or timed out. */
static int
print_process(
    const msgpack_object *reply, FILE *err, int *midline, struct error *e)
{
	const msgpack_object *proc;
	int64_t sig = 0;
	uint64_t ms = 0;
	char *et;
	int timedout;

	if (get_process(reply, &proc, e) == -1)
		return -1;
	if (proc == NULL)
		return 0;
	if (mp_int(proc, "signal", 0, 0, 1024, &sig, e) == -1 ||
	    mp_uint(proc, "duration_ms", 0, UINT64_MAX, &ms, e) == -1)
		return -1;
	et = error_type(reply);
	timedout = et != NULL && strcmp(et, "timeout") == 0;
	free(et);
	if (timedout)
		note(err, midline, "the skill timed out after %" PRIu64 " ms",
		    ms);
	else if (sig > 0)
		note(err, midline, "the skill was killed by signal %d (%s)",
		    (int)sig, strsignal((int)sig));
	return 0;
}

/* invoke: output, then process notes. */
static int
print_invoke(const msgpack_object *reply, FILE *out, FILE *err, int *midline,
    struct error *e)
{
	if (print_output(reply, out, err, midline, e) == -1)
		return -1;
	return print_process(reply, err, midline, e);
}

/* authorize: the decision, its reason and the rules that matched. */
static int
print_authorize(const msgpack_object *reply, FILE *out, struct error *e)
{
	const msgpack_object *pol = NULL;
	char *reason = NULL, *et, **rules = NULL;
	size_t nrules = 0, i;
	int allowed = 0;

	if (mp_submap(reply, "policy", 0, &pol, e) == -1)
		return -1;
	if (pol == NULL)
		return 0;
	if (mp_bool(pol, "allowed", 1, &allowed, e) == -1 ||
	    mp_str(pol, "decision_reason", 0, FIELD_MAX, &reason, e) == -1 ||
	    mp_strarr(pol, "matched_rules", 0, 65536, FIELD_MAX, &rules,
	        &nrules, e) == -1) {
		free(reason);
		return -1;
	}
	if (allowed)
		fputs("allowed: ", out);
	else {
		et = error_type(reply);
		fprintf(out, "denied (%s): ", et != NULL ? et : "denied");
		free(et);
	}
	cli_put_safe(out, reason != NULL ? reason : "");
	fputc('\n', out);
	for (i = 0; i < nrules; i++) {
		fputs("matched: ", out);
		cli_put_safe(out, rules[i]);
		fputc('\n', out);
	}
	free(reason);
	strarr_free(rules, nrules);
	return 0;
}

/* skills: one line, name TAB commands TAB description [TAB INVALID: why]
 * [TAB WARNING: why]... */
static int
print_skill(const msgpack_object *s, FILE *out, struct error *e)
{
	char *name = NULL, *desc = NULL, *why = NULL, **cmds = NULL;
	char **warns = NULL;
	size_t ncmds = 0, nwarns = 0, i;
	int valid = 1, r = -1;

	if (s->type != MSGPACK_OBJECT_MAP) {
		error_set(e, ERR_BAD_REQUEST, "a skill is not a map");
		goto out;
	}
	if (mp_str(s, "name", 1, FIELD_MAX, &name, e) == -1 ||
	    mp_str(s, "description", 0, FIELD_MAX, &desc, e) == -1 ||
	    mp_strarr(s, "commands", 0, 65536, FIELD_MAX, &cmds, &ncmds, e) ==
	        -1 ||
	    mp_bool(s, "valid", 0, &valid, e) == -1 ||
	    mp_str(s, "error", 0, FIELD_MAX, &why, e) == -1 ||
	    mp_strarr(s, "warnings", 0, 65536, FIELD_MAX, &warns, &nwarns, e) ==
	        -1)
		goto out;
	cli_put_safe(out, name);
	fputc('\t', out);
	for (i = 0; i < ncmds; i++) {
		if (i > 0)
			fputc(',', out);
		cli_put_safe(out, cmds[i]);
	}
	fputs(ncmds == 0 ? "-\t" : "\t", out);
	cli_put_safe(out, desc != NULL && *desc != '\0' ? desc : "-");
	if (!valid) {
		fputs("\tINVALID: ", out);
		cli_put_safe(out, why != NULL ? why : "unknown error");
	}
	for (i = 0; i < nwarns; i++) {
		fputs("\tWARNING: ", out);
		cli_put_safe(out, warns[i]);
	}
	fputc('\n', out);
	r = 0;
out:
	free(name);
	free(desc);
	free(why);
	strarr_free(cmds, ncmds);
	strarr_free(warns, nwarns);
	return r;
}

/* skills: every skill the broker knows, valid or not. */
static int
print_skills(const msgpack_object *reply, FILE *out, struct error *e)
{
	const msgpack_object *arr = mp_get(reply, "skills");
	uint32_t i;

	if (arr == NULL || arr->type == MSGPACK_OBJECT_NIL)
		return 0;
	if (arr->type != MSGPACK_OBJECT_ARRAY)
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"skills\" must be an array");
	for (i = 0; i < arr->via.array.size; i++)
		if (print_skill(&arr->via.array.ptr[i], out, e) == -1)
			return -1;
	return 0;
}

/* hello: who the broker is and who it thinks we are. */
static int
print_hello(const msgpack_object *reply, FILE *out, struct error *e)
{
	const msgpack_object *pr = NULL;
	char *server = NULL, *version = NULL;
	uint64_t proto = 0, uid = 0, gid = 0;
	int r = -1;

	if (mp_str(reply, "server", 0, FIELD_MAX, &server, e) == -1 ||
	    mp_str(reply, "version", 1, FIELD_MAX, &version, e) == -1 ||
	    mp_uint(reply, "protocol", 1, UINT64_MAX, &proto, e) == -1 ||
	    mp_submap(reply, "principal", 1, &pr, e) == -1 ||
	    mp_uint(pr, "uid", 1, UINT32_MAX, &uid, e) == -1 ||
	    mp_uint(pr, "gid", 1, UINT32_MAX, &gid, e) == -1)
		goto out;
	cli_put_safe(out, server != NULL ? server : "skillbroker");
	fputc(' ', out);
	cli_put_safe(out, version);
	fprintf(out,
	    " protocol %" PRIu64 ", you are uid %" PRIu64 " gid %" PRIu64 "\n",
	    proto, uid, gid);
	r = 0;
out:
	free(server);
	free(version);
	return r;
}

/* The human form of a reply to a request of the given type. */
/* cancel: what was cancelled, and where it was. */
static int
print_cancel(const msgpack_object *reply, FILE *out, struct error *e)
{
	char *state = NULL;

	if (mp_str(reply, "state", 1, 32, &state, e) == -1)
		return -1;
	fprintf(out, "cancelled (it was %s)\n", sanitize(state));
	free(state);
	return 0;
}

/* approve: which approval was answered. */
static int
print_approve(const msgpack_object *reply, FILE *out, struct error *e)
{
	char *id = NULL;

	if (mp_str(reply, "approval_id", 1, CLIENT_APPROVAL_ID_MAX, &id, e) ==
	    -1)
		return -1;
	fprintf(out, "answered %s\n", sanitize(id));
	free(id);
	return 0;
}

/* approvals: one line each, ID uid UID session S: SKILL COMMAND (...). */
static int
print_approval(const msgpack_object *a, FILE *out, struct error *e)
{
	char *id = NULL, *skill = NULL, *cmd = NULL, *session = NULL;
	uint64_t uid = 0, waited = 0, limit = 0;
	const msgpack_object *rid;
	int r = -1;

	if (a->type != MSGPACK_OBJECT_MAP) {
		error_set(e, ERR_BAD_REQUEST, "an approval is not a map");
		goto out;
	}
	if (mp_str(a, "id", 1, CLIENT_APPROVAL_ID_MAX, &id, e) == -1 ||
	    mp_uint(a, "uid", 1, UINT32_MAX, &uid, e) == -1 ||
	    mp_str(a, "skill", 1, FIELD_MAX, &skill, e) == -1 ||
	    mp_str(a, "command", 1, FIELD_MAX, &cmd, e) == -1 ||
	    mp_str(a, "session", 1, FIELD_MAX, &session, e) == -1 ||
	    mp_uint(a, "waited_ms", 1, UINT64_MAX, &waited, e) == -1 ||
	    mp_uint(a, "timeout_ms", 1, UINT64_MAX, &limit, e) == -1)
		goto out;
	fprintf(out,
	    "%s\tuid %" PRIu64 "\tsession %s\t%s %s\twaited %" PRIu64
	    " of %" PRIu64 " ms\trequest ",
	    sanitize(id), uid, sanitize(session), sanitize(skill),
	    sanitize(cmd), waited, limit);
	rid = mp_get(a, "request_id");
	if (rid != NULL && rid->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		fprintf(out, "%" PRIu64, rid->via.u64);
	else if (rid != NULL && rid->type == MSGPACK_OBJECT_STR) {
		free(id); /* another's request id: no terminal controls */
		id = xstrndup(rid->via.str.ptr, rid->via.str.size);
		cli_put_safe(out, id);
	}
	fputc('\n', out);
	r = 0;
out:
	free(id);
	free(skill);
	free(cmd);
	free(session);
	return r;
}

/* approvals: every approval waiting for an answer that we may see. */
static int
print_approvals(const msgpack_object *reply, FILE *out, struct error *e)
{
	const msgpack_object *arr = mp_get(reply, "approvals");
	uint32_t i;

	if (arr == NULL || arr->type != MSGPACK_OBJECT_ARRAY)
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"approvals\" must be an array");
	for (i = 0; i < arr->via.array.size; i++)
		if (print_approval(&arr->via.array.ptr[i], out, e) == -1)
			return -1;
	return 0;
}

static int
print_human(const msgpack_object *reply, enum creq_type type, FILE *out,
    FILE *err, int *midline, struct error *e)
{
	if (type_is(reply, "error"))
		return 0;
	switch (type) {
	case CREQ_INVOKE:
		return print_invoke(reply, out, err, midline, e);
	case CREQ_AUTHORIZE:
		return print_authorize(reply, out, e);
	case CREQ_SKILLS:
		return print_skills(reply, out, e);
	case CREQ_HELLO:
		return print_hello(reply, out, e);
	case CREQ_RELOAD:
		fprintf(out, "policy reloaded\n");
		return 0;
	case CREQ_CANCEL:
		return print_cancel(reply, out, e);
	case CREQ_STATS:
		return cli_stats_print(reply, CLI_OUT_HUMAN, out, e);
	case CREQ_SESSION_END:
		fprintf(out, "session ended\n");
		return 0;
	case CREQ_SKILL_INFO:
		return cli_info_print(reply, out, e);
	case CREQ_APPROVE:
		return print_approve(reply, out, e);
	case CREQ_APPROVALS:
		return print_approvals(reply, out, e);
	default:
		return 0;
	}
}

/*
 * Print a reply (format: CLI_OUT_*) and return skillctl's exit status. A
 * reply that does not have the documented shape is a protocol error.
 */
int
cli_print_reply(const msgpack_object *reply, enum creq_type type, int format,
    FILE *out, FILE *err)
{
	struct error e;
	int ok = 0, midline = 0, r, status = CLI_EXIT_PROTO;
	const msgpack_object *last = NULL;

	if (mp_bool(reply, "ok", 1, &ok, &e) == -1)
		goto bad;
	/* last_result: the stored invoke reply, printed as invoke does */
	if (type == CREQ_LAST_RESULT && ok) {
		if (mp_submap(reply, "result", 1, &last, &e) == -1)
			goto bad;
		if (format != CLI_OUT_JSON)
			return cli_print_reply(
			    last, CREQ_INVOKE, format, out, err);
		r = cli_print_json(reply, out);
		fflush(out);
		if (r == -1 || mp_bool(last, "ok", 1, &ok, &e) == -1 ||
		    (status = reply_status(last, ok, &e)) == -1)
			goto bad;
		return status;
	}
	if (format == CLI_OUT_JSON)
		r = cli_print_json(reply, out) == -1
		        ? error_set(&e, ERR_INTERNAL, "cannot convert to JSON")
		        : 0;
	else if (format == CLI_OUT_PROMETHEUS && !type_is(reply, "error"))
		r = cli_stats_print(reply, CLI_OUT_PROMETHEUS, out, &e);
	else
		r = print_human(reply, type, out, err, &midline, &e);
	fflush(out);
	if (r == -1 || (status = reply_status(reply, ok, &e)) == -1)
		goto bad;
	/* a denied authorize said why on stdout already: once is enough */
	if (!ok && !(type == CREQ_AUTHORIZE && format == CLI_OUT_HUMAN &&
	               mp_get(reply, "policy") != NULL))
		print_error(reply, err, &midline);
	fflush(err);
	return status;
bad:
	note(err, &midline, "malformed reply: %s", sanitize(e.msg));
	fflush(err);
	return CLI_EXIT_PROTO;
}
