/*
 * fuzz_msg.c: one libFuzzer harness for every internal message decoder.
 * The input is decoded as a message and handed, by its "t", to the
 * decoder of that type (GRANT and SPEC both). A refusal must be a
 * bad_request that leaves the output zeroed. What a decoder accepts must
 * hold what its receiver relies on, and must survive the trip back:
 * encoded again and decoded again, the key fields agree and the second
 * encoding is byte for byte the first. Anything else aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/hostport.h"
#include "../../lib/util.h"
#include "../../lib/sysfilter.h"
#include "../../proto/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                               \
	do {                                                                   \
		if (!(x))                                                      \
			abort();                                               \
	} while (0)

/* NULL-safe string equality ("" and NULL both encode as ""). */
static int
same_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static int
same_strarr(char **a, size_t na, char **b, size_t nb)
{
	size_t i;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++)
		if (strcmp(a[i], b[i]) != 0)
			return 0;
	return 1;
}

/* A refusal: bad_request with a reason, and nothing kept in out. */
static void
refused(const struct error *e, const void *out, size_t len)
{
	const uint8_t *p = out;
	size_t i;

	CHECK(e->type == ERR_BAD_REQUEST && e->msg[0] != '\0');
	for (i = 0; i < len; i++)
		CHECK(p[i] == 0);
}

/* Decode what an encoder wrote: it must be a whole message of type t. */
static void
redecode(const struct mp_enc *m, struct mp_doc *d, uint64_t t)
{
	struct error e;
	uint64_t got;

	CHECK(enc_complete(m));
	CHECK(mp_decode(d, (const uint8_t *)m->sb.data, m->sb.size, NULL, &e) ==
	      0);
	CHECK(msg_type_of(d, &got, &e) == 0 && got == t);
}

static void
same_bytes(const struct mp_enc *a, const struct mp_enc *b)
{
	CHECK(a->sb.size == b->sb.size &&
	      memcmp(a->sb.data, b->sb.data, a->sb.size) == 0);
}

static int
absolute(const char *p)
{
	return p != NULL && p[0] == '/';
}

/*
 * One message type: decode; on success encode (into m1), decode again,
 * compare with same_<name>, encode the second decoding (into m2) and
 * compare the bytes. check_<name> holds what a receiver relies on.
 */
#define FUZZ_TYPE(name, T, decf, encf, freef)                                  \
	static void fuzz_##name(const struct mp_doc *d, uint64_t t)            \
	{                                                                      \
		struct mp_enc m1, m2;                                          \
		struct mp_doc d2;                                              \
		struct error e;                                                \
		T a, b;                                                        \
                                                                               \
		memset(&e, 0, sizeof(e));                                      \
		if (decf(d, &a, &e) != 0) {                                    \
			refused(&e, &a, sizeof(a));                            \
			return;                                                \
		}                                                              \
		check_##name(&a);                                              \
		enc_init(&m1);                                                 \
		encf(&m1, &a);                                                 \
		redecode(&m1, &d2, t);                                         \
		CHECK(decf(&d2, &b, &e) == 0);                                 \
		same_##name(&a, &b);                                           \
		enc_init(&m2);                                                 \
		encf(&m2, &b);                                                 \
		same_bytes(&m1, &m2);                                          \
		enc_free(&m2);                                                 \
		freef(&b);                                                     \
		mp_doc_free(&d2);                                              \
		enc_free(&m1);                                                 \
		freef(&a);                                                     \
	}

static void
nothing(void *p)
{
	(void)p;
}

static void
check_ready(const struct msg_ready *r)
{
	CHECK(r->role != NULL);
}
static void
same_ready(const struct msg_ready *a, const struct msg_ready *b)
{
	/* The encoder writes its own PROTO_VERSION. */
	CHECK(b->version == PROTO_VERSION && strcmp(a->role, b->role) == 0);
}
static void
ready_enc(struct mp_enc *m, const struct msg_ready *r)
{
	msg_ready_enc(m, r->role);
}
FUZZ_TYPE(ready, struct msg_ready, msg_ready_dec, ready_enc, msg_ready_free)

static void
check_conf_broker(const struct conf_broker *c)
{
	CHECK(c->uid != 0 && c->gid != 0 && absolute(c->root));
	CHECK(c->max_frame >= 1024 && c->max_clients >= 1 &&
	      c->max_sessions >= 1 && c->session_idle_s >= 1);
	CHECK(c->workers >= 1 && c->workers <= CONFIG_WORKERS_MAX);
	CHECK(c->per_uid.clients >= 1 && c->per_uid.clients <= c->max_clients);
	CHECK(
	    c->per_uid.sessions >= 1 && c->per_uid.sessions <= c->max_sessions);
	CHECK(c->per_uid.workers >= 1 && c->per_uid.workers <= c->workers);
	CHECK(c->per_uid.calls >= 1 && c->clients.idle_s >= 1 &&
	      c->clients.frame_s >= 1 && c->clients.stall_s >= 1 &&
	      c->clients.output_bytes >= 65536 && c->clients.approval_s >= 1 &&
	      c->clients.approval_s <= 3600);
}
static void
same_conf_broker(const struct conf_broker *a, const struct conf_broker *b)
{
	CHECK(a->uid == b->uid && a->gid == b->gid &&
	      strcmp(a->root, b->root) == 0 && a->max_frame == b->max_frame &&
	      a->max_clients == b->max_clients &&
	      a->max_sessions == b->max_sessions &&
	      a->session_idle_s == b->session_idle_s &&
	      a->workers == b->workers &&
	      memcmp(&a->per_uid, &b->per_uid, sizeof(a->per_uid)) == 0 &&
	      memcmp(&a->clients, &b->clients, sizeof(a->clients)) == 0);
}
FUZZ_TYPE(conf_broker, struct conf_broker, conf_broker_dec, conf_broker_enc,
    conf_broker_free)

static void
check_conf_policyd(const struct conf_policyd *c)
{
	size_t i;

	CHECK(c->uid != 0 && c->gid != 0);
	CHECK(absolute(c->policy_dir));
	for (i = 0; i < c->nskills_dirs; i++)
		CHECK(absolute(c->skills_dirs[i]));
	for (i = 0; i < c->nprotect; i++)
		CHECK(absolute(c->protect[i]));
	for (i = 0; i < c->nsys_paths; i++)
		CHECK(absolute(c->sys_paths[i]));
	CHECK(c->limits.timeout_ms >= 1 &&
	      c->limits.timeout_ms <= c->limits.max_timeout_ms);
	CHECK(c->limits.memory_mb >= 8 && c->limits.nofile >= 8);
}
static void
same_conf_policyd(const struct conf_policyd *a, const struct conf_policyd *b)
{
	CHECK(a->uid == b->uid && a->gid == b->gid &&
	      same_strarr(a->skills_dirs, a->nskills_dirs, b->skills_dirs,
	          b->nskills_dirs) &&
	      strcmp(a->policy_dir, b->policy_dir) == 0 && a->net == b->net &&
	      same_strarr(a->protect, a->nprotect, b->protect, b->nprotect) &&
	      same_strarr(
	          a->sys_paths, a->nsys_paths, b->sys_paths, b->nsys_paths) &&
	      memcmp(&a->limits, &b->limits, sizeof(a->limits)) == 0);
}
FUZZ_TYPE(conf_policyd, struct conf_policyd, conf_policyd_dec, conf_policyd_enc,
    conf_policyd_free)

static void
check_conf_auditd(const struct conf_auditd *c)
{
	CHECK(c->uid != 0 && c->gid != 0);
	CHECK(absolute(c->path) && absolute(c->head));
	CHECK(c->set.freq >= 1 && c->set.num_logs >= 2);
}
static void
same_conf_auditd(const struct conf_auditd *a, const struct conf_auditd *b)
{
	CHECK(a->uid == b->uid && a->gid == b->gid &&
	      strcmp(a->path, b->path) == 0 && strcmp(a->head, b->head) == 0 &&
	      memcmp(&a->set, &b->set, sizeof(a->set)) == 0);
}
FUZZ_TYPE(conf_auditd, struct conf_auditd, conf_auditd_dec, conf_auditd_enc,
    conf_auditd_free)

/* The config loader's bounds (config_netproxy): what the proxy relies on. */
static void
check_conf_netproxy(const struct conf_netproxy *c)
{
	const struct netproxy_settings *s = &c->set;

	CHECK(c->uid != 0 && c->gid != 0 && absolute(c->root));
	CHECK(s->hosts_file == NULL || absolute(s->hosts_file));
	CHECK(s->max_connections >= 1 && s->max_connections <= 4096 &&
	      s->max_total_connections >= 1 &&
	      s->max_total_connections <= 65536 &&
	      s->max_connections <= s->max_total_connections);
	CHECK(s->max_bytes >= 1024 && s->max_bytes <= 1ULL << 40);
	CHECK(s->connect_timeout_s >= 1 && s->connect_timeout_s <= 600 &&
	      s->header_timeout_s >= 1 && s->header_timeout_s <= 600 &&
	      s->idle_s >= 1 && s->idle_s <= 86400);
}
static void
same_conf_netproxy(const struct conf_netproxy *a, const struct conf_netproxy *b)
{
	const struct netproxy_settings *x = &a->set, *y = &b->set;

	CHECK(a->uid == b->uid && a->gid == b->gid &&
	      strcmp(a->root, b->root) == 0 &&
	      same_str(x->hosts_file, y->hosts_file) &&
	      x->max_connections == y->max_connections &&
	      x->max_total_connections == y->max_total_connections &&
	      x->max_bytes == y->max_bytes &&
	      x->connect_timeout_s == y->connect_timeout_s &&
	      x->header_timeout_s == y->header_timeout_s &&
	      x->idle_s == y->idle_s);
}
FUZZ_TYPE(conf_netproxy, struct conf_netproxy, conf_netproxy_dec,
    conf_netproxy_enc, conf_netproxy_free)

static void
check_authz_req(const struct msg_authz_req *r)
{
	CHECK(r->pid >= 0 && r->nargs <= ARGS_MAX && r->nenv <= ENV_MAX);
	CHECK(!(r->dry_run && r->approved));
}
static void
same_authz_req(const struct msg_authz_req *a, const struct msg_authz_req *b)
{
	CHECK(a->ref == b->ref && a->uid == b->uid && a->gid == b->gid &&
	      a->pid == b->pid && strcmp(a->skill, b->skill) == 0 &&
	      strcmp(a->command, b->command) == 0 &&
	      strcmp(a->session, b->session) == 0 &&
	      strcmp(a->phase, b->phase) == 0 &&
	      same_strarr(a->args, a->nargs, b->args, b->nargs) &&
	      same_strarr(a->env, a->nenv, b->env, b->nenv) &&
	      a->timeout_ms == b->timeout_ms && a->dry_run == b->dry_run &&
	      a->approved == b->approved);
}
FUZZ_TYPE(authz_req, struct msg_authz_req, msg_authz_req_dec, msg_authz_req_enc,
    msg_authz_req_free)

static void
check_authz_ans(const struct msg_authz_ans *a)
{
	/* A grant id only with an allowed answer, and a well-formed one. */
	CHECK(a->grant_id[0] == '\0' ||
	      (a->err == ERR_NONE && grant_id_valid(a->grant_id)));
	CHECK(a->err < ERR__COUNT && a->effective_len > 0);
	/* An ask is a denial and never a grant. */
	CHECK(!a->ask ||
	      (a->err == ERR_APPROVAL_DENIED && a->grant_id[0] == '\0'));
}
static void
same_authz_ans(const struct msg_authz_ans *a, const struct msg_authz_ans *b)
{
	CHECK(a->ref == b->ref && a->err == b->err &&
	      strcmp(a->reason, b->reason) == 0 &&
	      same_strarr(a->rules, a->nrules, b->rules, b->nrules) &&
	      strcmp(a->grant_id, b->grant_id) == 0 &&
	      strcmp(a->command, b->command) == 0 &&
	      a->timeout_ms == b->timeout_ms &&
	      a->output_bytes == b->output_bytes &&
	      a->effective_len == b->effective_len &&
	      memcmp(a->effective, b->effective, a->effective_len) == 0 &&
	      a->ask == b->ask);
}
FUZZ_TYPE(authz_ans, struct msg_authz_ans, msg_authz_ans_dec, msg_authz_ans_enc,
    msg_authz_ans_free)

static void
check_skills_req(const uint64_t *ref)
{
	(void)ref;
}
static void
same_skills_req(const uint64_t *a, const uint64_t *b)
{
	CHECK(*a == *b);
}
static void
skills_req_enc(struct mp_enc *m, const uint64_t *ref)
{
	msg_skills_req_enc(m, *ref);
}
/* It owns nothing, and may set the ref before it refuses. */
static int
skills_req_dec(const struct mp_doc *d, uint64_t *ref, struct error *e)
{
	if (msg_skills_req_dec(d, ref, e) == -1) {
		*ref = 0;
		return -1;
	}
	return 0;
}
FUZZ_TYPE(skills_req, uint64_t, skills_req_dec, skills_req_enc, nothing)

static void
check_skills_ans(const struct msg_skills_ans *a)
{
	CHECK(a->nskills <= SKILLS_LIST_MAX);
}
static void
same_skills_ans(const struct msg_skills_ans *a, const struct msg_skills_ans *b)
{
	size_t i;

	CHECK(a->ref == b->ref && a->truncated == b->truncated &&
	      a->nskills == b->nskills);
	for (i = 0; i < a->nskills; i++)
		CHECK(strcmp(a->skills[i].name, b->skills[i].name) == 0 &&
		      strcmp(a->skills[i].description,
		          b->skills[i].description) == 0 &&
		      a->skills[i].valid == b->skills[i].valid &&
		      strcmp(a->skills[i].error, b->skills[i].error) == 0 &&
		      same_strarr(a->skills[i].commands, a->skills[i].ncommands,
		          b->skills[i].commands, b->skills[i].ncommands) &&
		      same_strarr(a->skills[i].warnings, a->skills[i].nwarnings,
		          b->skills[i].warnings, b->skills[i].nwarnings));
}
FUZZ_TYPE(skills_ans, struct msg_skills_ans, msg_skills_ans_dec,
    msg_skills_ans_enc, msg_skills_ans_free)

static void
check_reload_req(const struct msg_reload_req *r)
{
	CHECK(r->uid <= UINT32_MAX && r->gid <= UINT32_MAX);
}
static void
same_reload_req(const struct msg_reload_req *a, const struct msg_reload_req *b)
{
	CHECK(a->ref == b->ref && a->uid == b->uid && a->gid == b->gid);
}
static int
reload_req_dec(
    const struct mp_doc *d, struct msg_reload_req *r, struct error *e)
{
	if (msg_reload_req_dec(d, r, e) == -1) {
		memset(r, 0, sizeof(*r));
		return -1;
	}
	return 0;
}
FUZZ_TYPE(reload_req, struct msg_reload_req, reload_req_dec, msg_reload_req_enc,
    nothing)

static void
check_reload_ans(const struct msg_reload_ans *a)
{
	CHECK(a->err < ERR__COUNT);
}
static void
same_reload_ans(const struct msg_reload_ans *a, const struct msg_reload_ans *b)
{
	CHECK(a->ref == b->ref && a->err == b->err &&
	      strcmp(a->message, b->message) == 0);
}
FUZZ_TYPE(reload_ans, struct msg_reload_ans, msg_reload_ans_dec,
    msg_reload_ans_enc, msg_reload_ans_free)

static void
check_admins(const struct msg_admins *a)
{
	size_t i;

	CHECK(a->nuids <= ADMINS_MAX && a->ngids <= ADMINS_MAX);
	for (i = 0; i < a->nuids; i++)
		CHECK(a->uids[i] <= UINT32_MAX);
	for (i = 0; i < a->ngids; i++)
		CHECK(a->gids[i] <= UINT32_MAX);
}
static void
same_admins(const struct msg_admins *a, const struct msg_admins *b)
{
	CHECK(a->nuids == b->nuids && a->ngids == b->ngids);
	CHECK(a->nuids == 0 ||
	      memcmp(a->uids, b->uids, a->nuids * sizeof(*a->uids)) == 0);
	CHECK(a->ngids == 0 ||
	      memcmp(a->gids, b->gids, a->ngids * sizeof(*a->gids)) == 0);
}
FUZZ_TYPE(
    admins, struct msg_admins, msg_admins_dec, msg_admins_enc, msg_admins_free)

static void
check_skill_info_req(const struct msg_skill_info_req *r)
{
	CHECK(r->skill[0] != '\0' && strlen(r->skill) <= NAME_MAX_LEN);
	CHECK(r->max_bytes >= SKILL_INFO_MIN_BYTES &&
	      r->max_bytes <= 1024 * 1024);
}
static void
same_skill_info_req(
    const struct msg_skill_info_req *a, const struct msg_skill_info_req *b)
{
	CHECK(a->ref == b->ref && a->uid == b->uid && a->gid == b->gid &&
	      strcmp(a->skill, b->skill) == 0 &&
	      a->references == b->references && a->max_bytes == b->max_bytes);
}
FUZZ_TYPE(skill_info_req, struct msg_skill_info_req, msg_skill_info_req_dec,
    msg_skill_info_req_enc, msg_skill_info_req_free)

/* What the broker relies on before it passes a skill to a client. */
static void
check_skill_info_ans(const struct msg_skill_info_ans *a)
{
	size_t i;

	CHECK(a->err < ERR__COUNT && a->nrefs <= SKILL_INFO_REFS_MAX &&
	      a->ncommands <= COMMANDS_MAX);
	CHECK(a->err != ERR_NONE || ident_valid(a->name, NAME_MAX_LEN));
	CHECK(
	    a->frontmatter_len > 0 && a->frontmatter_len <= SKILL_INFO_FM_MAX);
	CHECK(strlen(a->body) <= SKILL_INFO_BODY_MAX);
	for (i = 0; i < a->ncommands; i++)
		CHECK(command_name_valid(a->commands[i].name, COMMAND_MAX_LEN));
	for (i = 0; i < a->nrefs; i++) {
		const struct msg_info_ref *f = &a->refs[i];
		CHECK(strncmp(f->path, "references/", 11) == 0 &&
		      f->path[11] != '\0' &&
		      strchr(f->path + 11, '/') == NULL &&
		      strcmp(f->path + 11, "..") != 0);
		CHECK(f->omitted < INFO_OMIT__COUNT);
		CHECK(f->text[0] == '\0' || (f->omitted == INFO_OMIT_NONE &&
		                                strlen(f->text) <= f->size));
		CHECK(i == 0 || strcmp(a->refs[i - 1].path, f->path) < 0);
	}
}
static void
same_skill_info_ans(
    const struct msg_skill_info_ans *a, const struct msg_skill_info_ans *b)
{
	size_t i;

	CHECK(a->ref == b->ref && a->err == b->err &&
	      strcmp(a->message, b->message) == 0 &&
	      strcmp(a->name, b->name) == 0 && strcmp(a->body, b->body) == 0 &&
	      a->frontmatter_len == b->frontmatter_len &&
	      memcmp(a->frontmatter, b->frontmatter, a->frontmatter_len) == 0 &&
	      a->permissions_len == b->permissions_len &&
	      a->ncommands == b->ncommands && a->nrefs == b->nrefs &&
	      a->refs_truncated == b->refs_truncated);
	for (i = 0; i < a->nrefs; i++)
		CHECK(strcmp(a->refs[i].path, b->refs[i].path) == 0 &&
		      a->refs[i].size == b->refs[i].size &&
		      strcmp(a->refs[i].sha256, b->refs[i].sha256) == 0 &&
		      strcmp(a->refs[i].text, b->refs[i].text) == 0 &&
		      a->refs[i].omitted == b->refs[i].omitted);
}
FUZZ_TYPE(skill_info_ans, struct msg_skill_info_ans, msg_skill_info_ans_dec,
    msg_skill_info_ans_enc, msg_skill_info_ans_free)

/* What the master and the worker rely on in any grant. */
static void
check_grant_fields(const struct grant *g)
{
	CHECK(grant_id_valid(g->grant_id));
	CHECK(ident_valid(g->skill, NAME_MAX_LEN) &&
	      ident_valid(g->session, SESSION_MAX_LEN));
	CHECK(absolute(g->skill_dir) && !path_has_dot(g->skill_dir));
	CHECK(g->entry[0] != '\0' && g->entry[0] != '/' &&
	      strstr(g->entry, "..") == NULL);
	/* What may run: real host paths, never the skill's own files. */
	for (size_t i = 0; i < g->nprograms; i++)
		CHECK(absolute(g->programs[i]) &&
		      !path_has_dot(g->programs[i]) &&
		      strstr(g->programs[i], "//") == NULL &&
		      strncmp(g->programs[i], "/skill/", 7) != 0);
}
static void
check_grant(const struct grant *g)
{
	check_grant_fields(g);
	/* No field only the master may set. */
	CHECK(g->worker_uid == 0 && g->worker_gid == 0 && g->as_mb == 0 &&
	      g->net == 0);
}
static void
same_grant(const struct grant *a, const struct grant *b)
{
	int i;

	CHECK(
	    strcmp(a->grant_id, b->grant_id) == 0 &&
	    strcmp(a->skill, b->skill) == 0 &&
	    strcmp(a->command, b->command) == 0 &&
	    strcmp(a->skill_dir, b->skill_dir) == 0 &&
	    strcmp(a->entry, b->entry) == 0 &&
	    same_strarr(a->args, a->nargs, b->args, b->nargs) &&
	    same_strarr(a->env, a->nenv, b->env, b->nenv) &&
	    a->principal_uid == b->principal_uid &&
	    strcmp(a->session, b->session) == 0 &&
	    a->timeout_ms == b->timeout_ms &&
	    a->output_bytes == b->output_bytes &&
	    a->memory_mb == b->memory_mb && a->pids == b->pids &&
	    a->fsize_mb == b->fsize_mb && a->nofile == b->nofile &&
	    same_strarr(a->programs, a->nprograms, b->programs, b->nprograms));
	for (i = 0; i < PERM__COUNT; i++)
		CHECK(same_strarr(
		    a->perm[i], a->nperm[i], b->perm[i], b->nperm[i]));
}
FUZZ_TYPE(grant, struct grant, grant_dec, grant_enc, grant_free)

static void
check_spec(const struct grant *g)
{
	check_grant_fields(g);
	CHECK(g->worker_uid != 0 && g->worker_gid != 0);
}
static void
same_spec(const struct grant *a, const struct grant *b)
{
	same_grant(a, b);
	CHECK(a->worker_uid == b->worker_uid &&
	      a->worker_gid == b->worker_gid && a->as_mb == b->as_mb &&
	      a->net == b->net);
}
FUZZ_TYPE(spec, struct grant, spec_dec, spec_enc, grant_free)

static void
check_grant_ack(const struct msg_grant_ack *a)
{
	CHECK(grant_id_valid(a->grant_id) && a->err < ERR__COUNT);
}
static void
same_grant_ack(const struct msg_grant_ack *a, const struct msg_grant_ack *b)
{
	CHECK(strcmp(a->grant_id, b->grant_id) == 0 && a->err == b->err &&
	      strcmp(a->message, b->message) == 0);
}
FUZZ_TYPE(grant_ack, struct msg_grant_ack, msg_grant_ack_dec, msg_grant_ack_enc,
    msg_grant_ack_free)

static void
check_policy_event(const struct msg_policy_event *p)
{
	CHECK(p->action < POLICY__COUNT);
}
static void
same_policy_event(
    const struct msg_policy_event *a, const struct msg_policy_event *b)
{
	CHECK(a->action == b->action && same_str(a->message, b->message) &&
	      a->files == b->files && a->rules == b->rules &&
	      a->skills == b->skills);
}
FUZZ_TYPE(policy_event, struct msg_policy_event, msg_policy_event_dec,
    msg_policy_event_enc, msg_policy_event_free)

static void
check_run(const struct msg_run *r)
{
	CHECK(grant_id_valid(r->grant_id));
}
static void
same_run(const struct msg_run *a, const struct msg_run *b)
{
	CHECK(a->ref == b->ref && strcmp(a->grant_id, b->grant_id) == 0);
}
FUZZ_TYPE(run, struct msg_run, msg_run_dec, msg_run_enc, msg_run_free)

static void
check_run_started(const struct msg_run_started *r)
{
	CHECK(r->pid > 0 && r->pid <= INT32_MAX);
}
static void
same_run_started(
    const struct msg_run_started *a, const struct msg_run_started *b)
{
	CHECK(a->ref == b->ref && a->pid == b->pid);
}
static int
run_started_dec(
    const struct mp_doc *d, struct msg_run_started *r, struct error *e)
{
	if (msg_run_started_dec(d, r, e) == -1) {
		memset(r, 0, sizeof(*r));
		return -1;
	}
	return 0;
}
FUZZ_TYPE(run_started, struct msg_run_started, run_started_dec,
    msg_run_started_enc, nothing)

static void
check_run_exited(const struct msg_run_exited *r)
{
	CHECK(r->limit < LIMIT__COUNT && r->err < ERR__COUNT);
	CHECK(r->exit_code >= -1 && r->exit_code <= 255 && r->signal >= 0 &&
	      r->signal <= 128);
}
static void
same_run_exited(const struct msg_run_exited *a, const struct msg_run_exited *b)
{
	CHECK(a->ref == b->ref && a->started == b->started &&
	      a->exit_code == b->exit_code && a->signal == b->signal &&
	      a->limit == b->limit && a->duration_ms == b->duration_ms &&
	      a->cpu_ms == b->cpu_ms && a->max_rss_kb == b->max_rss_kb &&
	      a->err == b->err && same_str(a->message, b->message));
}
FUZZ_TYPE(run_exited, struct msg_run_exited, msg_run_exited_dec,
    msg_run_exited_enc, msg_run_exited_free)

static void
check_peer_channel(const struct msg_peer_channel *p)
{
	CHECK(
	    strcmp(p->role, "policyd") == 0 || strcmp(p->role, "auditd") == 0);
}
static void
same_peer_channel(
    const struct msg_peer_channel *a, const struct msg_peer_channel *b)
{
	CHECK(strcmp(a->role, b->role) == 0);
}
FUZZ_TYPE(peer_channel, struct msg_peer_channel, msg_peer_channel_dec,
    msg_peer_channel_enc, msg_peer_channel_free)

static void
check_audit_ack(const struct msg_audit_ack *a)
{
	CHECK(a->message != NULL);
}
static void
same_audit_ack(const struct msg_audit_ack *a, const struct msg_audit_ack *b)
{
	CHECK(a->ref == b->ref && a->ok == b->ok &&
	      strcmp(a->message, b->message) == 0);
}
FUZZ_TYPE(audit_ack, struct msg_audit_ack, msg_audit_ack_dec, msg_audit_ack_enc,
    msg_audit_ack_free)

static void
check_files(const struct msg_files *f)
{
	size_t i;

	CHECK(f->nfiles <= FILES_WRITTEN_MAX && f->nfiles <= f->found);
	for (i = 0; i < f->nfiles; i++) {
		const char *p = f->files[i].path;

		CHECK(strncmp(p, "/work/", 6) == 0 ||
		      strncmp(p, "/data/", 6) == 0);
		CHECK(strstr(p, "/../") == NULL &&
		      strcmp(p + strlen(p) - 3, "/..") != 0);
		CHECK(strlen(f->files[i].sha256) == 0 ||
		      strlen(f->files[i].sha256) == 64);
	}
}
static void
same_files(const struct msg_files *a, const struct msg_files *b)
{
	size_t i;

	CHECK(a->found == b->found && a->complete == b->complete &&
	      a->nfiles == b->nfiles);
	for (i = 0; i < a->nfiles; i++)
		CHECK(strcmp(a->files[i].path, b->files[i].path) == 0 &&
		      a->files[i].size == b->files[i].size &&
		      strcmp(a->files[i].sha256, b->files[i].sha256) == 0);
}
FUZZ_TYPE(files, struct msg_files, msg_files_dec, msg_files_enc, msg_files_free)

static void
check_session_end(const struct msg_session_end *s)
{
	/* The session names a directory of the master's. */
	CHECK(s->uid <= UINT32_MAX && ident_valid(s->session, SESSION_MAX_LEN));
}
static void
same_session_end(
    const struct msg_session_end *a, const struct msg_session_end *b)
{
	CHECK(a->uid == b->uid && strcmp(a->session, b->session) == 0);
}
FUZZ_TYPE(session_end, struct msg_session_end, msg_session_end_dec,
    msg_session_end_enc, msg_session_end_free)

static void
check_cancel(const struct msg_cancel *c)
{
	CHECK(grant_id_valid(c->grant_id));
}
static void
same_cancel(const struct msg_cancel *a, const struct msg_cancel *b)
{
	CHECK(strcmp(a->grant_id, b->grant_id) == 0);
}
FUZZ_TYPE(
    cancel, struct msg_cancel, msg_cancel_dec, msg_cancel_enc, msg_cancel_free)

/*
 * What the proxy relies on in a call: its names, and an allow list of
 * 1..PERM_ITEMS_MAX entries that each parse and each cover themselves.
 */
static void
check_net_open(const struct msg_net_open *o)
{
	char host[HOSTPORT_HOST_MAX], port[8];
	size_t i;

	CHECK(grant_id_valid(o->grant_id) &&
	      ident_valid(o->skill, NAME_MAX_LEN) &&
	      ident_valid(o->session, SESSION_MAX_LEN) && o->uid <= UINT32_MAX);
	CHECK(o->nallow >= 1 && o->nallow <= PERM_ITEMS_MAX);
	for (i = 0; i < o->nallow; i++) {
		CHECK(hostport_parse(o->allow[i], host, sizeof(host), port,
		          sizeof(port)) == 0);
		CHECK(hostport_covers(o->allow[i], o->allow[i]));
	}
}
static void
same_net_open(const struct msg_net_open *a, const struct msg_net_open *b)
{
	CHECK(strcmp(a->grant_id, b->grant_id) == 0 &&
	      strcmp(a->skill, b->skill) == 0 &&
	      strcmp(a->session, b->session) == 0 && a->uid == b->uid &&
	      same_strarr(a->allow, a->nallow, b->allow, b->nallow));
}
FUZZ_TYPE(net_open, struct msg_net_open, msg_net_open_dec, msg_net_open_enc,
    msg_net_open_free)

/* NET_CLOSE has CANCEL's shape and CANCEL's promise. */
static void
check_net_close(const struct msg_cancel *c)
{
	check_cancel(c);
}
static void
same_net_close(const struct msg_cancel *a, const struct msg_cancel *b)
{
	same_cancel(a, b);
}
static void
net_close_enc(struct mp_enc *m, const struct msg_cancel *c)
{
	msg_net_close_enc(m, c->grant_id);
}
FUZZ_TYPE(net_close, struct msg_cancel, msg_net_close_dec, net_close_enc,
    msg_cancel_free)

static void
check_worker_fail(const struct msg_worker_fail *f)
{
	CHECK(f->step != NULL && f->message != NULL);
}
static void
same_worker_fail(
    const struct msg_worker_fail *a, const struct msg_worker_fail *b)
{
	CHECK(strcmp(a->step, b->step) == 0 &&
	      strcmp(a->message, b->message) == 0);
}
FUZZ_TYPE(worker_fail, struct msg_worker_fail, msg_worker_fail_dec,
    msg_worker_fail_enc, msg_worker_fail_free)

static void
check_worker_exit(const struct msg_worker_exit *x)
{
	/* An exit code, or the signal that ended it: one of the two. */
	CHECK((x->exit_code >= 0 && x->exit_code <= 255 && x->signal == 0) ||
	      (x->exit_code == -1 && x->signal >= 1 && x->signal <= 128));
}
static void
same_worker_exit(
    const struct msg_worker_exit *a, const struct msg_worker_exit *b)
{
	CHECK(a->exit_code == b->exit_code && a->signal == b->signal);
}
static int
worker_exit_dec(
    const struct mp_doc *d, struct msg_worker_exit *x, struct error *e)
{
	if (msg_worker_exit_dec(d, x, e) == -1) {
		memset(x, 0, sizeof(*x));
		return -1;
	}
	return 0;
}
FUZZ_TYPE(worker_exit, struct msg_worker_exit, worker_exit_dec,
    msg_worker_exit_enc, nothing)

/* PREP: two filters of whole BPF instructions, within the bound; an
 * absolute root dir; a /tmp size in range; absolute host paths, the
 * library globs without dots. */
static void
check_prep(const struct msg_prep *p)
{
	size_t i;

	for (i = 0; i < 2; i++)
		CHECK(p->filter_len[i] > 0 &&
		      p->filter_len[i] <= SYSFILTER_MAX &&
		      p->filter_len[i] % SYSFILTER_INSN == 0);
	CHECK(absolute(p->root_dir) && p->tmp_mb >= 1 && p->tmp_mb <= 65536);
	for (i = 0; i < p->nsys_paths; i++)
		CHECK(absolute(p->sys_paths[i]));
	for (i = 0; i < p->nlib_paths; i++)
		CHECK(absolute(p->lib_paths[i]) &&
		      !path_has_dot(p->lib_paths[i]));
}
static void
same_prep(const struct msg_prep *a, const struct msg_prep *b)
{
	size_t i;

	for (i = 0; i < 2; i++)
		CHECK(
		    a->filter_len[i] == b->filter_len[i] &&
		    memcmp(a->filter[i], b->filter[i], a->filter_len[i]) == 0);
	CHECK(strcmp(a->root_dir, b->root_dir) == 0 && a->tmp_mb == b->tmp_mb &&
	      a->host_net == b->host_net &&
	      same_strarr(
	          a->sys_paths, a->nsys_paths, b->sys_paths, b->nsys_paths) &&
	      same_strarr(
	          a->lib_paths, a->nlib_paths, b->lib_paths, b->nlib_paths));
}
FUZZ_TYPE(prep, struct msg_prep, msg_prep_dec, msg_prep_enc, msg_prep_free)

/* SERVE, WORKER_READY, WORKER_GO and WORKER_DONE carry nothing but "t". */
static void
fuzz_empty(const struct mp_doc *d, uint64_t t)
{
	struct mp_enc m1, m2;
	struct mp_doc d2;
	struct error e;

	memset(&e, 0, sizeof(e));
	if (msg_empty_dec(d, &e) != 0) {
		refused(&e, NULL, 0);
		return;
	}
	CHECK(d->root->via.map.size == 1);
	enc_init(&m1);
	msg_empty_enc(&m1, (enum msg_type)t);
	redecode(&m1, &d2, t);
	CHECK(msg_empty_dec(&d2, &e) == 0);
	enc_init(&m2);
	msg_empty_enc(&m2, (enum msg_type)t);
	same_bytes(&m1, &m2);
	enc_free(&m2);
	mp_doc_free(&d2);
	enc_free(&m1);
}

/* The event is a map of the document: write it back as it stands. */
static void
audit_enc(struct mp_enc *m, uint64_t ref, const msgpack_object *ev)
{
	msg_begin(m, MSG_AUDIT);
	enc_kuint(m, "ref", ref);
	enc_key(m, "event");
	enc_obj(m, ev);
	msg_end(m);
}

static void
fuzz_audit(const struct mp_doc *d, uint64_t t)
{
	const msgpack_object *ev = NULL, *ev2 = NULL, *action;
	struct mp_enc m1, m2;
	struct mp_doc d2;
	struct error e;
	uint64_t ref = 0, ref2 = 0;

	memset(&e, 0, sizeof(e));
	if (msg_audit_dec(d, &ref, &ev, &e) != 0) {
		refused(&e, NULL, 0);
		CHECK(ev == NULL);
		return;
	}
	CHECK(ev->type == MSGPACK_OBJECT_MAP &&
	      ev->via.map.size <= AUDIT_EVENT_FIELDS_MAX);
	action = mp_get(ev, "event.action");
	CHECK(action != NULL && action->type == MSGPACK_OBJECT_STR &&
	      action->via.str.size > 0);
	enc_init(&m1);
	audit_enc(&m1, ref, ev);
	redecode(&m1, &d2, t);
	CHECK(msg_audit_dec(&d2, &ref2, &ev2, &e) == 0);
	CHECK(ref == ref2 && msgpack_object_equal(*ev, *ev2));
	enc_init(&m2);
	audit_enc(&m2, ref2, ev2);
	same_bytes(&m1, &m2);
	enc_free(&m2);
	mp_doc_free(&d2);
	enc_free(&m1);
}

/* GRANT and SPEC differ by the master's fields: none decodes as both. */
static void
grant_or_spec(const struct mp_doc *d)
{
	struct grant g;
	struct error e;
	int as_grant, as_spec;

	if ((as_grant = grant_dec(d, &g, &e) == 0))
		grant_free(&g);
	if ((as_spec = spec_dec(d, &g, &e) == 0))
		grant_free(&g);
	CHECK(!(as_grant && as_spec));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mp_doc d;
	struct error e;
	uint64_t t;

	memset(&e, 0, sizeof(e));
	if (mp_decode(&d, data, size, NULL, &e) != 0) {
		CHECK(e.type == ERR_BAD_REQUEST && !d.live && d.root == NULL);
		return 0;
	}
	CHECK(d.root != NULL && d.root->type == MSGPACK_OBJECT_MAP);
	if (msg_type_of(&d, &t, &e) != 0) {
		mp_doc_free(&d);
		return 0;
	}
	switch (t) {
	case MSG_READY:
		fuzz_ready(&d, t);
		break;
	case MSG_CONF_BROKER:
		fuzz_conf_broker(&d, t);
		break;
	case MSG_CONF_POLICYD:
		fuzz_conf_policyd(&d, t);
		break;
	case MSG_CONF_AUDITD:
		fuzz_conf_auditd(&d, t);
		break;
	case MSG_CONF_NETPROXY:
		fuzz_conf_netproxy(&d, t);
		break;
	case MSG_AUTHZ_REQ:
		fuzz_authz_req(&d, t);
		break;
	case MSG_AUTHZ_ANS:
		fuzz_authz_ans(&d, t);
		break;
	case MSG_SKILLS_REQ:
		fuzz_skills_req(&d, t);
		break;
	case MSG_SKILLS_ANS:
		fuzz_skills_ans(&d, t);
		break;
	case MSG_RELOAD_REQ:
		fuzz_reload_req(&d, t);
		break;
	case MSG_RELOAD_ANS:
		fuzz_reload_ans(&d, t);
		break;
	case MSG_ADMINS:
		fuzz_admins(&d, t);
		break;
	case MSG_SKILL_INFO_REQ:
		fuzz_skill_info_req(&d, t);
		break;
	case MSG_SKILL_INFO_ANS:
		fuzz_skill_info_ans(&d, t);
		break;
	case MSG_GRANT:
		fuzz_grant(&d, t);
		grant_or_spec(&d);
		break;
	case MSG_GRANT_ACK:
		fuzz_grant_ack(&d, t);
		break;
	case MSG_POLICY_EVENT:
		fuzz_policy_event(&d, t);
		break;
	case MSG_RUN:
		fuzz_run(&d, t);
		break;
	case MSG_RUN_STARTED:
		fuzz_run_started(&d, t);
		break;
	case MSG_RUN_EXITED:
		fuzz_run_exited(&d, t);
		break;
	case MSG_PEER_CHANNEL:
		fuzz_peer_channel(&d, t);
		break;
	case MSG_SERVE:
	case MSG_WORKER_READY:
	case MSG_WORKER_GO:
	case MSG_WORKER_DONE:
		fuzz_empty(&d, t);
		break;
	case MSG_SESSION_END:
		fuzz_session_end(&d, t);
		break;
	case MSG_CANCEL:
		fuzz_cancel(&d, t);
		break;
	case MSG_WORKER_FAIL:
		fuzz_worker_fail(&d, t);
		break;
	case MSG_WORKER_EXIT:
		fuzz_worker_exit(&d, t);
		break;
	case MSG_AUDIT:
		fuzz_audit(&d, t);
		break;
	case MSG_AUDIT_ACK:
		fuzz_audit_ack(&d, t);
		break;
	case MSG_FILES:
		fuzz_files(&d, t);
		break;
	case MSG_SPEC:
		fuzz_spec(&d, t);
		grant_or_spec(&d);
		break;
	case MSG_PREP:
		fuzz_prep(&d, t);
		break;
	case MSG_NET_OPEN:
		fuzz_net_open(&d, t);
		break;
	case MSG_NET_CLOSE:
		fuzz_net_close(&d, t);
		break;
	default:
		break;
	}
	mp_doc_free(&d);
	return 0;
}
