/* policyd_policy.c: load and validate the admin policy files. */
#include <dirent.h>
#include <errno.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../lib/ydoc.h"
#include "../proto/msg.h"
#include "policyd_match.h"
#include "policyd_policy.h"

static int
id_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A list of ids, sorted so that principal_matches can bisect it. */
static int
uint_list(struct ydoc *y, struct ynode *n, uint64_t **out, size_t *count,
    struct error *e)
{
	size_t i;

	if (yexpect(y, n, YNODE_SEQ, "uids/gids", e))
		return -1;
	if (n->n > 1024)
		return yerr(y, n, e, "more than 1024 ids");
	*out = xcalloc(n->n + 1, sizeof(uint64_t));
	*count = 0;
	for (i = 0; i < n->n; i++)
		if (yuint(y, n->items[i], 0, 4294967294U, &(*out)[(*count)++],
		        e) == -1)
			return -1;
	qsort(*out, *count, sizeof(uint64_t), id_cmp);
	return 0;
}

/* The principals by name: a balanced tree (tsearch), so defining n
 * principals and resolving every rule's names costs O(n log n). */
struct prkey {
	const char *name;
	size_t idx;
};

static int
prkey_cmp(const void *a, const void *b)
{
	return strcmp(
	    ((const struct prkey *)a)->name, ((const struct prkey *)b)->name);
}

/* The index of the principal called name, or -1. */
static int
principal_find(const struct policy *p, const char *name, size_t *idx)
{
	struct prkey k = {name, 0};
	struct prkey *const *found;

	if ((found = tfind(&k, &p->prindex, prkey_cmp)) == NULL)
		return -1;
	*idx = (*found)->idx;
	return 0;
}

static int
parse_principal(struct ydoc *y, struct ynode *k, struct ynode *v,
    struct policy *p, struct error *e)
{
	static const char *const keys[] = {"uids", "gids", "admin", NULL};
	struct principal *pr;
	struct prkey *key, *const *slot;
	const char *name, *adm;
	struct ynode *n;

	if (yscalar(y, k, &name, e))
		return -1;
	if (!ident_valid(name, 64))
		return yerr(y, k, e, "bad principal name \"%s\"", name);
	if (yexpect(y, v, YNODE_MAP, "a principal", e) ||
	    ymap_only(y, v, keys, e))
		return -1;
	if (p->npr == p->prcap) {
		p->prcap = p->prcap ? 2 * p->prcap : 16;
		p->pr = xreallocarray(p->pr, p->prcap, sizeof(*p->pr));
	}
	pr = &p->pr[p->npr];
	memset(pr, 0, sizeof(*pr));
	pr->name = xstrdup(name);
	key = xmalloc(sizeof(*key));
	key->name = pr->name;
	key->idx = p->npr++;
	if ((slot = tsearch(key, &p->prindex, prkey_cmp)) == NULL)
		fatalx("out of memory");
	if (*slot != key) {
		free(key);
		return yerr(y, k, e, "principal \"%s\" defined twice", name);
	}
	if (((n = ymap_get(y, v, "uids")) &&
	        uint_list(y, n, &pr->uids, &pr->nuids, e)) ||
	    ((n = ymap_get(y, v, "gids")) &&
	        uint_list(y, n, &pr->gids, &pr->ngids, e)))
		return -1;
	if (pr->nuids == 0 && pr->ngids == 0)
		return yerr(
		    y, v, e, "principal \"%s\" names no uid or gid", name);
	if ((n = ymap_get(y, v, "admin")) != NULL) {
		if (yscalar(y, n, &adm, e))
			return -1;
		if (strcmp(adm, "true") != 0 && strcmp(adm, "false") != 0)
			return yerr(y, n, e, "admin must be true or false");
		pr->admin = strcmp(adm, "true") == 0;
	}
	return 0;
}

static int
parse_principals(
    struct ydoc *y, struct ynode *n, struct policy *p, struct error *e)
{
	size_t i;

	if (yexpect(y, n, YNODE_MAP, "principals", e))
		return -1;
	for (i = 0; i < n->n; i++)
		if (parse_principal(
		        y, n->pairs[i].key, n->pairs[i].value, p, e) == -1)
			return -1;
	return 0;
}

/* Append a list of strings to *v. */
static int
append_list(
    struct ydoc *y, struct ynode *n, char ***v, size_t *count, struct error *e)
{
	char **items;
	size_t num, i;

	if (ystrlist(y, n, 1024, &items, &num, e) == -1)
		return -1;
	*v = xreallocarray(*v, *count + num + 1, sizeof(char *));
	for (i = 0; i < num; i++)
		(*v)[(*count)++] = items[i];
	(*v)[*count] = NULL;
	free(items);
	return 0;
}

static int
parse_skills(struct ydoc *y, struct ynode *n, struct policy *p, struct error *e)
{
	static const char *const keys[] = {"enabled", NULL};
	struct ynode *en;

	if (yexpect(y, n, YNODE_MAP, "skills", e) || ymap_only(y, n, keys, e))
		return -1;
	if ((en = ymap_get(y, n, "enabled")) != NULL)
		return append_list(y, en, &p->enabled, &p->nenabled, e);
	return 0;
}

static int
parse_action(struct ydoc *y, struct ynode *n, enum action *a, struct error *e)
{
	const char *s;

	if (n == NULL)
		return yerr(y, n, e, "rule needs an action");
	if (yscalar(y, n, &s, e))
		return -1;
	if (strcmp(s, "allow") == 0)
		*a = ACT_ALLOW;
	else if (strcmp(s, "ask") == 0)
		*a = ACT_ASK;
	else if (strcmp(s, "deny") == 0)
		*a = ACT_DENY;
	else
		return yerr(y, n, e, "action must be allow, ask or deny");
	return 0;
}

static int
parse_rate(struct ydoc *y, struct ynode *n, struct rate *r, struct error *e)
{
	static const char *const keys[] = {"per_minute", "burst", NULL};
	struct ynode *v;

	if (yexpect(y, n, YNODE_MAP, "rate", e) || ymap_only(y, n, keys, e))
		return -1;
	if ((v = ymap_get(y, n, "per_minute")) == NULL)
		return yerr(y, n, e, "rate needs per_minute");
	if (yuint(y, v, 1, 1000000, &r->per_minute, e) ||
	    ((v = ymap_get(y, n, "burst")) &&
	        yuint(y, v, 1, 1000000, &r->burst, e)))
		return -1;
	if (r->burst == 0)
		r->burst = r->per_minute;
	return 0;
}

/* Every principal a rule names must exist ("*" means anyone): each is
 * resolved to its index once, here. */
static int
check_rule_refs(struct ydoc *y, struct ynode *n, const struct policy *p,
    struct rule *r, struct error *e)
{
	size_t i;

	r->who = xcalloc(r->nprincipals + 1, sizeof(*r->who));
	for (i = 0; i < r->nprincipals; i++) {
		if (strcmp(r->principals[i], "*") == 0)
			r->who[i] = POLICY_ANYONE;
		else if (principal_find(p, r->principals[i], &r->who[i]) == -1)
			return yerr(y, n, e,
			    "rule \"%s\": unknown principal "
			    "\"%s\" (define it under principals: first)",
			    r->name, r->principals[i]);
	}
	for (i = 0; i < r->nphases; i++)
		if (strcmp(r->phases[i], "execution") != 0 &&
		    strcmp(r->phases[i], "planning") != 0)
			return yerr(y, n, e,
			    "rule \"%s\": unknown phase \"%s\"", r->name,
			    r->phases[i]);
	return 0;
}

static int
parse_rule(struct ydoc *y, struct ynode *n, const char *fname, struct policy *p,
    struct error *e)
{
	static const char *const keys[] = {"name", "principals", "skills",
	    "commands", "phases", "action", "ceiling", "limits", "rate", NULL};
	struct rule *r;
	struct ynode *v;
	const char *name;

	if (yexpect(y, n, YNODE_MAP, "a rule", e) || ymap_only(y, n, keys, e))
		return -1;
	if ((v = ymap_get(y, n, "name")) == NULL || yscalar(y, v, &name, e))
		return yerr(y, n, e, "rule needs a name");
	if (p->nrules == POLICY_RULES_MAX)
		return yerr(y, n, e, "more than %d rules", POLICY_RULES_MAX);
	if (p->nrules == p->rulecap) { /* doubled: loading n rules is O(n) */
		p->rulecap = p->rulecap ? 2 * p->rulecap : 16;
		p->rules =
		    xreallocarray(p->rules, p->rulecap, sizeof(*p->rules));
	}
	r = &p->rules[p->nrules++];
	memset(r, 0, sizeof(*r));
	r->name = xstrdup(name);
	xasprintf(&r->where, "%s:%u", fname, ynode_line(y, n));
	if ((v = ymap_get(y, n, "principals")) == NULL)
		return yerr(y, n, e, "rule \"%s\" needs principals", name);
	if (append_list(y, v, &r->principals, &r->nprincipals, e) ||
	    ((v = ymap_get(y, n, "skills")) == NULL
	            ? yerr(y, n, e, "rule \"%s\" needs skills", name)
	            : append_list(y, v, &r->skills, &r->nskills, e)) ||
	    ((v = ymap_get(y, n, "commands")) &&
	        append_list(y, v, &r->commands, &r->ncommands, e)) ||
	    ((v = ymap_get(y, n, "phases")) &&
	        append_list(y, v, &r->phases, &r->nphases, e)) ||
	    ((v = ymap_get(y, n, "action")) == NULL
	            ? yerr(y, n, e, "rule \"%s\" needs an action", name)
	            : parse_action(y, v, &r->action, e)) ||
	    ((v = ymap_get(y, n, "ceiling")) &&
	        perms_parse(y, v, 1, &r->ceiling, e)) ||
	    ((v = ymap_get(y, n, "limits")) &&
	        plimits_parse(y, v, &r->limits, e)) ||
	    ((v = ymap_get(y, n, "rate")) && parse_rate(y, v, &r->rate, e)))
		return -1;
	/* Empty or absent lists take the defaults ("commands: []" has left
	 * an array of its own to free). */
	if (r->ncommands == 0) {
		free(r->commands);
		r->commands = xcalloc(2, sizeof(char *));
		r->commands[r->ncommands++] = xstrdup("*");
	}
	if (r->nphases == 0) {
		free(r->phases);
		r->phases = xcalloc(2, sizeof(char *));
		r->phases[r->nphases++] = xstrdup("execution");
	}
	return check_rule_refs(y, n, p, r, e);
}

static int
parse_rules(struct ydoc *y, struct ynode *n, const char *fname,
    struct policy *p, struct error *e)
{
	size_t i;

	if (yexpect(y, n, YNODE_SEQ, "rules", e))
		return -1;
	for (i = 0; i < n->n; i++)
		if (parse_rule(y, n->items[i], fname, p, e) == -1)
			return -1;
	return 0;
}

/* One loaded file into p. */
static int
policy_parse(
    struct ydoc *y, const char *name, struct policy *p, struct error *e)
{
	static const char *const keys[] = {
	    "principals", "skills", "rules", NULL};
	struct ynode *r = ydoc_root(y), *n;

	if (yexpect(y, r, YNODE_MAP, "a policy file", e) == 0 &&
	    ymap_only(y, r, keys, e) == 0 &&
	    (!(n = ymap_get(y, r, "principals")) ||
	        parse_principals(y, n, p, e) == 0) &&
	    (!(n = ymap_get(y, r, "skills")) ||
	        parse_skills(y, n, p, e) == 0) &&
	    (!(n = ymap_get(y, r, "rules")) ||
	        parse_rules(y, n, name, p, e) == 0))
		return 0;
	return -1;
}

int
policy_load_text(struct policy *p, const char *name, const char *text,
    size_t len, uint64_t deadline_ns, struct error *e)
{
	struct yopts o = {name, YDOC_MAX_BYTES, 0, deadline_ns};
	struct ydoc y;
	int rc;

	if (ydoc_load_buf_opt(&y, text, len, &o, e) == -1)
		rc = y.empty ? 0 : -1; /* only comments: an empty file */
	else
		rc = policy_parse(&y, name, p, e);
	ydoc_free(&y);
	p->nfiles++;
	return rc;
}

int
policy_load_file_by(struct policy *p, const char *path, const char *name,
    uint64_t deadline_ns, struct error *e)
{
	struct yopts o = {name, YDOC_MAX_BYTES, 0, deadline_ns};
	struct ydoc y;
	int rc;

	if (ydoc_load_file_opt(&y, path, &o, e) == -1)
		rc = y.empty ? 0 : -1; /* only comments: an empty file */
	else
		rc = policy_parse(&y, name, p, e);
	ydoc_free(&y);
	p->nfiles++;
	return rc;
}

int
policy_load_file(
    struct policy *p, const char *path, const char *name, struct error *e)
{
	return policy_load_file_by(p, path, name, 0, e);
}

static int
yaml_name(const char *name)
{
	size_t l = strlen(name);

	return name[0] != '.' && l > 5 && strcmp(name + l - 5, ".yaml") == 0;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The policy files of dir, in the order they are read: every *.yaml not
 * starting with '.', sorted bytewise; at most POLICY_FILES_MAX, among at
 * most POLICY_DIR_ENTRIES_MAX entries. Nothing is opened here. *names
 * is a NULL-terminated array (free with strarr_free).
 */
int
policy_files(const char *dir, char ***names, size_t *count, struct error *e)
{
	struct dirent *de;
	size_t seen = 0, n = 0;
	char **v;
	DIR *d;

	*names = NULL;
	*count = 0;
	if ((d = opendir(dir)) == NULL)
		return error_set(
		    e, ERR_BAD_REQUEST, "%s: %s", dir, strerror(errno));
	v = xcalloc(POLICY_FILES_MAX + 2, sizeof(char *));
	while ((de = readdir(d)) != NULL) {
		if (++seen > POLICY_DIR_ENTRIES_MAX) {
			error_set(e, ERR_BAD_REQUEST,
			    "%s: more than %d entries", dir,
			    POLICY_DIR_ENTRIES_MAX);
			goto fail;
		}
		if (!yaml_name(de->d_name))
			continue;
		if (n == POLICY_FILES_MAX) {
			error_set(e, ERR_BAD_REQUEST, "%s: more than %d files",
			    dir, POLICY_FILES_MAX);
			goto fail;
		}
		v[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), name_cmp);
	*names = v;
	*count = n;
	return 0;
fail:
	closedir(d);
	strarr_free(v, n);
	return -1;
}

/*
 * All files or none: an error anywhere leaves *p empty. The whole
 * directory shares one time budget, POLICY_BUDGET_MS.
 */
int
policy_load(struct policy *p, const char *dir, struct error *e)
{
	uint64_t deadline = ydoc_deadline(POLICY_BUDGET_MS);
	char **names, *path;
	size_t n, i;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (policy_files(dir, &names, &n, e) == -1)
		return -1;
	for (i = 0; i < n && rc == 0; i++) {
		if (now_mono_ns() > deadline) {
			rc = error_set(e, ERR_BAD_REQUEST,
			    "%s: loading the policy took longer than %d ms "
			    "(stopped before %s)",
			    dir, POLICY_BUDGET_MS, names[i]);
			break;
		}
		xasprintf(&path, "%s/%s", dir, names[i]);
		rc = policy_load_file_by(p, path, names[i], deadline, e);
		free(path);
	}
	strarr_free(names, n);
	if (rc == -1)
		policy_free(p);
	return rc;
}

static void
rule_free(struct rule *r)
{
	free(r->name);
	free(r->where);
	strarr_free(r->principals, r->nprincipals);
	strarr_free(r->skills, r->nskills);
	strarr_free(r->commands, r->ncommands);
	strarr_free(r->phases, r->nphases);
	free(r->who);
	perms_free(&r->ceiling);
}

void
policy_free(struct policy *p)
{
	size_t i;

	for (i = 0; i < p->npr; i++) {
		free(p->pr[i].name);
		free(p->pr[i].uids);
		free(p->pr[i].gids);
	}
	free(p->pr);
	tdestroy(p->prindex, free);
	strarr_free(p->enabled, p->nenabled);
	for (i = 0; i < p->nrules; i++)
		rule_free(&p->rules[i]);
	free(p->rules);
	memset(p, 0, sizeof(*p));
}

int
principal_matches(const struct principal *pr, uint64_t uid, uint64_t gid)
{
	return (pr->nuids > 0 && bsearch(&uid, pr->uids, pr->nuids,
	                             sizeof(uint64_t), id_cmp) != NULL) ||
	       (pr->ngids > 0 && bsearch(&gid, pr->gids, pr->ngids,
	                             sizeof(uint64_t), id_cmp) != NULL);
}

int
policy_skill_enabled(const struct policy *p, const char *skill)
{
	size_t i;

	for (i = 0; i < p->nenabled; i++)
		if (glob_match(p->enabled[i], skill))
			return 1;
	return 0;
}

int
policy_is_admin(const struct policy *p, uint64_t uid, uint64_t gid)
{
	size_t i;

	for (i = 0; i < p->npr; i++)
		if (p->pr[i].admin && principal_matches(&p->pr[i], uid, gid))
			return 1;
	return 0;
}

/*
 * The uids and gids of the admin principals, for the broker (ADMINS): at
 * most ADMINS_MAX of each; beyond that, no more are admins there (logged).
 */
void
policy_admins(const struct policy *p, struct msg_admins *a)
{
	size_t i, k, lost = 0;

	memset(a, 0, sizeof(*a));
	a->uids = xcalloc(ADMINS_MAX, sizeof(*a->uids));
	a->gids = xcalloc(ADMINS_MAX, sizeof(*a->gids));
	for (i = 0; i < p->npr; i++) {
		if (!p->pr[i].admin)
			continue;
		for (k = 0; k < p->pr[i].nuids; k++)
			if (a->nuids < ADMINS_MAX)
				a->uids[a->nuids++] = p->pr[i].uids[k];
			else
				lost++;
		for (k = 0; k < p->pr[i].ngids; k++)
			if (a->ngids < ADMINS_MAX)
				a->gids[a->ngids++] = p->pr[i].gids[k];
			else
				lost++;
	}
	if (lost > 0)
		log_warnx("%zu admin uids or gids beyond %d: the broker keeps "
		          "no reserve for them",
		    lost, ADMINS_MAX);
}
