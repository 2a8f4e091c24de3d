/* policyd.h: the skill registry and the decisions made on it. */
#ifndef SB_POLICYD_H
#define SB_POLICYD_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/config.h"
#include "../lib/error.h"
#include "../proto/msg.h"
#include "policyd_perm.h"
#include "policyd_policy.h"

#define SKILL_MD_MAX (256 * 1024) /* SKILL.md, and skill.yaml */
#define SKILLS_MAX 1024
#define SKILLS_DIR_ENTRIES_MAX 4096 /* entries of a skills dir looked at */
#define REGISTRY_BUDGET_MS 3000     /* to load every skill */
#define COMMANDS_MAX 64
#define SKILL_CMD_DESC_MAX 1024 /* bytes of a command's description */
/* The Agent Skills specification's bounds, in characters (code points). */
#define SKILL_NAME_CHARS 64
#define SKILL_DESC_CHARS 1024 /* SKILL_DESC_MAX bytes hold 4 each */
#define SKILL_COMPAT_CHARS 500

struct skill_cmd {
	char *name;        /* declared, or the path of a script named by the
	                      instructions */
	char *path;        /* relative to the skill dir, contained in it */
	char *description; /* NULL: none declared */
	char *interpreter; /* NULL: the entry runs itself ("#!" or ELF); else
	                      a program name or absolute path that reads it */
	enum grant_cwd cwd;
};

struct skill {
	char *name;
	char *description;
	char *dir; /* realpath of the skill directory */
	int valid;
	char *error; /* why it is invalid */
	struct skill_cmd *cmds;
	size_t ncmds;
	struct perms perms; /* declared; empty = the minimal sandbox */
	struct plimits limits;
	char *manifest; /* "SKILL.md" or "skill.yaml": where blocks live */
	int declared;   /* a commands block; else the instructions' scripts */
	/* What loads but deserves a word: "file:line: why", at most
	 * SKILL_WARNINGS_MAX of at most SKILL_WARNING_MAX bytes. */
	char **warnings;
	size_t nwarnings;
};

struct registry {
	struct skill *skills;
	size_t n;
	int sorted; /* by name, once loaded: registry_find bisects */
};

/* policyd_skill.c */
/* Load every skill of dirs; -1 (and r empty) once REGISTRY_BUDGET_MS,
 * or deadline_ns (now_mono_ns()), has passed. */
int registry_load(struct registry *r, char *const *dirs, size_t ndirs);
int registry_load_by(struct registry *r, char *const *dirs, size_t ndirs,
    uint64_t deadline_ns, struct error *e);
void registry_free(struct registry *r);
const struct skill *registry_find(const struct registry *r, const char *name);
/* Load one skill directory; never fails as a whole: see s->valid. */
void skill_load(struct skill *s, const char *parent, const char *dirname);
/* The same, parsing stopped at deadline_ns (0: the loader's default). */
void skill_load_by(struct skill *s, const char *parent, const char *dirname,
    uint64_t deadline_ns);
void skill_free(struct skill *s);
/*
 * Split SKILL.md text (NUL-terminated, len bytes) into its frontmatter
 * (between the first line "---" and the next) and the body after it.
 * -1 when there is no frontmatter.
 */
int skill_md_split(const char *md, size_t len, const char **fm, size_t *flen,
    const char **body);

/* policyd_spec.c: the frontmatter as the Agent Skills specification
 * and its reference validator (skills-ref) say; docs/skills.md */
/* 1..64 of a-z, 0-9 and single inner hyphens. */
int skill_name_valid(const char *name);
/* Why name is no skill name, in the validator's words and order (buf
 * holds it when it names the name); NULL when it is one. */
const char *spec_name_why(const char *name, char *buf, size_t len);
/* Record a warning on s (bounded; UTF-8 kept whole when cut). */
void skill_warn(struct skill *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Its keys: an unknown one is an error, our own blocks a warning. */
int spec_keys(
    struct skill *s, struct ydoc *y, struct ynode *root, struct error *e);
/* name (equal to dname), description and compatibility; sets
 * s->name and s->description. */
int spec_fields(struct skill *s, struct ydoc *y, struct ynode *root,
    const char *dname, struct error *e);
/* Characters (code points) of valid UTF-8 s. */
size_t spec_chars(const char *s);

/* policyd_cmds.c: a skill's commands, and what runs each */
/* The interpreters by extension (".py" -> "python3"), from the config. */
void cmds_interpreters(char *const *exts, char *const *progs, size_t n);
/* The interpreter the table names for path's extension, or NULL. */
const char *cmds_interp_for(const char *path);
/* The commands block n; each entry resolved and checked runnable. */
int cmds_declared(
    struct skill *s, struct ydoc *y, struct ynode *n, struct error *e);
/* No block: the scripts named by body (starting on SKILL.md's line) and
 * by the markdown files it names, sorted by path. */
int cmds_from_instructions(struct skill *s, const char *body, unsigned line,
    uint64_t deadline_ns, struct error *e);

/* policyd_tools.c: allowed-tools, mapped to permissions or warned of */
void tools_parse(struct skill *s, struct ydoc *y, struct ynode *n);

/* policyd_decide.c */
#define MATCHED_MAX 16

struct decision {
	enum err_type err; /* ERR_NONE: allowed */
	char reason[REASON_MAX_LEN];
	const struct rule *matched[MATCHED_MAX]; /* deciding rule first */
	size_t nmatched;
	const char *builtin; /* a gate that decided before any rule */
	const struct skill *skill;
	const struct skill_cmd *cmd;
	struct plimits limits; /* effective */
	int ask; /* an ask rule decided: approval_denied until a human says yes
	          */
	char **programs; /* what the call may execute (policyd_exec.c) */
	size_t nprograms;
	char *interpreter; /* the real path of the entry's, or NULL */
};

struct index;

struct policy_env {
	const struct registry *reg;
	const struct policy *pol;
	const struct index *index; /* pol's rules by name; NULL: scanned */
	struct limits limits;      /* daemon defaults and maxima */
	uint64_t net;              /* worker.network: enum net_mode */
};

void decide(const struct policy_env *pe, const struct msg_authz_req *req,
    uint64_t now_ms, struct decision *out);
/*
 * May the caller see a skill that has no commands (skill_info serves its
 * instructions)? As its calls would be weighed, with no command to
 * match: registered, valid, enabled, no deny or ask rule and an allow
 * rule that apply to the caller, the skill and req's phase.
 */
int decide_sees(const struct policy_env *pe, const struct msg_authz_req *req);
/* What a decision holds (its programs). */
void decision_free(struct decision *d);
/* "file:line name" for each matched rule, or the builtin gate. */
char **decision_rules(const struct decision *d, size_t *n);
/* The effective permissions and limits, as a msgpack map. */
void decision_effective_enc(struct mp_enc *m, const struct decision *d);
/* The effective permissions alone ({} for a denial, or no decision). */
void decision_permissions_enc(struct mp_enc *m, const struct decision *d);
/* Fill g (caller frees) for an allowed decision. */
void grant_build(const struct policy_env *pe, const struct msg_authz_req *req,
    const struct decision *d, struct grant *g);

/* policyd_info.c: skill_info, a skill as one caller may see it */
/*
 * Fill a (caller frees) for req, within req->max_bytes encoded; -1 (e
 * set, a empty) when the caller may not run the skill (unknown_skill,
 * as for a skill that does not exist), when its files cannot be read
 * (internal), or when the answer cannot fit (resource_limit).
 */
int info_build(const struct policy_env *pe,
    const struct msg_skill_info_req *req, struct msg_skill_info_ans *a,
    struct error *e);

#endif
