/*
 * policyd_policy.h: the admin policy: principals (by uid/gid from
 * SO_PEERCRED), enabled skills, and rules. Loaded from every *.yaml of
 * the policy directory in lexical order, all or nothing.
 */
#ifndef SB_POLICYD_POLICY_H
#define SB_POLICYD_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"
#include "policyd_perm.h"

#define POLICY_FILES_MAX 256
#define POLICY_RULES_MAX 16384
#define POLICY_DIR_ENTRIES_MAX 4096 /* entries of policy_dir looked at */
#define POLICY_BUDGET_MS 2000       /* to load every file of policy_dir */
#define POLICY_ANYONE ((size_t)-1)  /* "*" in a rule's principals */

enum action { ACT_ALLOW, ACT_ASK, ACT_DENY };

struct principal {
	char *name;
	uint64_t *uids, *gids; /* sorted */
	size_t nuids, ngids;
	int admin;
};

struct rate {
	uint64_t per_minute, burst; /* per_minute 0: unlimited */
};

struct rule {
	char *name;
	char *where; /* "file:line" */
	char **principals, **skills, **commands, **phases;
	size_t nprincipals, nskills, ncommands, nphases;
	size_t
	    *who; /* index in policy.pr of each principal, or POLICY_ANYONE */
	enum action action;
	struct perms ceiling;
	struct plimits limits;
	struct rate rate;
};

struct policy {
	struct principal *pr;
	size_t npr, prcap;
	void *prindex; /* tsearch tree of the principals by name */
	char **enabled;
	size_t nenabled;
	struct rule *rules;
	size_t nrules, rulecap;
	size_t nfiles;
};

int policy_load(struct policy *p, const char *dir, struct error *e);
/* The policy files of dir, in reading order (names relative to dir). */
int policy_files(
    const char *dir, char ***names, size_t *count, struct error *e);
/* Parse one file into p (merging); name is used in file:line. */
int policy_load_file(
    struct policy *p, const char *path, const char *name, struct error *e);
/* The same, parsing stopped at deadline_ns (now_mono_ns(); 0: the
 * loader's default budget). */
int policy_load_file_by(struct policy *p, const char *path, const char *name,
    uint64_t deadline_ns, struct error *e);
/* The same on text already read: what a policy file's bytes go
 * through (the fuzz harness). */
int policy_load_text(struct policy *p, const char *name, const char *text,
    size_t len, uint64_t deadline_ns, struct error *e);
void policy_free(struct policy *p);
int principal_matches(const struct principal *pr, uint64_t uid, uint64_t gid);
int policy_skill_enabled(const struct policy *p, const char *skill);
/* 1 if some principal matching uid/gid is marked admin. */
int policy_is_admin(const struct policy *p, uint64_t uid, uint64_t gid);
struct msg_admins;
void policy_admins(const struct policy *p, struct msg_admins *a);

#endif
