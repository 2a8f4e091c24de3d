/* policyd.h: the skill registry and the decisions made on it. */
#ifndef SB_POLICYD_H
#define SB_POLICYD_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/config.h"
#include "../lib/error.h"
#include "../proto/msg.h"

#define SKILL_MD_MAX (256 * 1024)
#define SKILLS_MAX 1024
#define COMMANDS_MAX 64

struct skill_cmd {
	char *name;
	char *path;       /* relative to the skill dir, contained in it */
};

struct skill {
	char *name;
	char *description;
	char *dir;        /* realpath of the skill directory */
	int valid;
	char *error;      /* why it is invalid */
	struct skill_cmd *cmds;
	size_t ncmds;
};

struct registry {
	struct skill *skills;
	size_t n;
};

/* policyd_skill.c */
void registry_load(struct registry *r, char *const *dirs, size_t ndirs);
void registry_free(struct registry *r);
const struct skill *registry_find(const struct registry *r, const char *name);
/* Load one skill directory; never fails as a whole: see s->valid. */
void skill_load(struct skill *s, const char *parent, const char *dirname);
void skill_free(struct skill *s);
int skill_name_valid(const char *name);

/* policyd_decide.c */
struct decision {
	enum err_type err;      /* ERR_NONE: allowed */
	char reason[REASON_MAX_LEN];
	const char *rule;
	const struct skill *skill;
	const struct skill_cmd *cmd;
	uint64_t timeout_ms;
};

struct policy_env {
	const struct registry *reg;
	struct limits limits;
	const char *workroot;
};

void decide(const struct policy_env *pe, const struct msg_authz_req *req,
    struct decision *out);
/* Fill g (caller frees) for an allowed decision. */
void grant_build(const struct policy_env *pe, const struct msg_authz_req *req,
    const struct decision *d, struct grant *g);

#endif
