/*
 * cli_policy.c: `skillctl policy check`, an offline lint of policy files
 * and skill directories with policyd's own parsers, so what passes here
 * is what the daemon accepts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/config.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../policyd/policyd.h"
#include "../policyd/policyd_exec.h"
#include "../policyd/policyd_match.h"
#include "cli.h"

void
cli_skill_env(const struct config *c)
{
	struct config defaults;
	char **prot;
	size_t nprot;

	if (c == NULL) {
		config_defaults(&defaults, "/");
		exec_system_paths(defaults.sys_paths, defaults.nsys_paths);
		cmds_interpreters(defaults.interp_exts, defaults.interp_progs,
		    defaults.ninterps);
		config_free(&defaults);
		return;
	}
	exec_system_paths(c->sys_paths, c->nsys_paths);
	cmds_interpreters(c->interp_exts, c->interp_progs, c->ninterps);
	/* what policyd would refuse: the daemon's own paths */
	prot = config_protected(c, &nprot);
	perms_protect(prot, nprot);
	strarr_free(prot, nprot);
}

/* Each file in order; an error is reported and the next file checked. */
static int
check_policy_dir(const char *dir, struct policy *pol)
{
	struct error e;
	char **names, *path;
	size_t n, i;
	int bad = 0;

	memset(pol, 0, sizeof(*pol));
	if (policy_files(dir, &names, &n, &e) == -1) {
		printf("%s\n", e.msg);
		return 1;
	}
	for (i = 0; i < n; i++) {
		xasprintf(&path, "%s/%s", dir, names[i]);
		if (policy_load_file(pol, path, path, &e) == -1) {
			printf("%s\n", e.msg);
			bad = 1;
		}
		free(path);
	}
	strarr_free(names, n);
	return bad;
}

/* Invalid skills are errors; a skill's warnings, and enabled names with
 * no skill, are warnings. */
static int
check_skills(char **dirs, size_t ndirs, const struct policy *pol)
{
	struct registry reg;
	size_t i, j;
	int bad = 0, found;

	if (registry_load(&reg, dirs, ndirs) == -1) {
		printf("skills: loading took longer than %d ms\n",
		    REGISTRY_BUDGET_MS);
		return 1;
	}
	for (i = 0; i < reg.n; i++) {
		if (!reg.skills[i].valid) {
			printf("skill %s: %s\n", reg.skills[i].name,
			    reg.skills[i].error);
			bad = 1;
		}
		for (j = 0; j < reg.skills[i].nwarnings; j++)
			printf("warning: skill %s: %s\n", reg.skills[i].name,
			    reg.skills[i].warnings[j]);
	}
	for (i = 0; i < pol->nenabled; i++) {
		for (found = 0, j = 0; j < reg.n; j++)
			found |=
			    glob_match(pol->enabled[i], reg.skills[j].name);
		if (!found)
			printf("warning: skills.enabled \"%s\" matches no "
			       "skill\n",
			    pol->enabled[i]);
	}
	registry_free(&reg);
	return bad;
}

int
cli_policy_check(int argc, char **argv)
{
	struct config cfg;
	struct policy pol;
	struct error e;
	char **dirs;
	size_t ndirs = 0;
	int bad, i, from_config = argc >= 2 && strcmp(argv[0], "-f") == 0;

	log_init("skillctl", 1, -1); /* quiet: findings go to stdout */
	memset(&cfg, 0, sizeof(cfg));
	if (from_config) {
		if (config_load(&cfg, argv[1], &e) == -1) {
			printf("%s\n", e.msg);
			return 1;
		}
		cli_skill_env(&cfg);
		bad = check_policy_dir(cfg.policy_dir, &pol);
		bad |= check_skills(cfg.skills_dirs, cfg.nskills_dirs, &pol);
		config_free(&cfg);
	} else {
		cli_skill_env(NULL);
		bad = check_policy_dir(
		    argc > 0 ? argv[0] : CLI_POLICY_DIR_DEV, &pol);
		dirs = xcalloc((size_t)argc + 1, sizeof(char *));
		for (i = 1; i < argc; i++)
			dirs[ndirs++] = argv[i];
		if (ndirs > 0)
			bad |= check_skills(dirs, ndirs, &pol);
		free(dirs);
	}
	if (!bad)
		printf("policy OK: %zu files, %zu principals, %zu rules\n",
		    pol.nfiles, pol.npr, pol.nrules);
	policy_free(&pol);
	return bad ? 1 : 0;
}
