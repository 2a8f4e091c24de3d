/*
 * cli_skill.c: `skillctl skill check` and `skillctl skill init`, the
 * tools of a skill's author. check loads one skill directory offline
 * with policyd's own loader (as `policy check` does), so what passes
 * here is what the daemon accepts, and prints what it found as a
 * compiler does (DIR/FILE:LINE: error: ...). init writes a skeleton
 * that check passes without a warning.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/config.h"
#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../policyd/policyd.h"
#include "cli.h"

#define SCRIPTS_LOOK_MAX 64 /* entries of scripts/ that check looks at */

static const char skill_synopsis[] =
    "usage: skillctl skill check [-f CONFIG] [--json] DIR\n"
    "       skillctl skill init [-d PARENT] NAME\n";

static const char skill_help[] =
    "\n"
    "check loads the skill directory DIR as policyd would, with the\n"
    "daemon config's system paths and interpreters (-f CONFIG, else the\n"
    "defaults), and prints each error and warning as DIR/FILE:LINE: then\n"
    "what the skill is: its commands and what runs each, where its\n"
    "blocks live, its permissions and limits. --json prints one JSON\n"
    "object instead. Exit status: 0 valid (warnings allowed), 1 invalid,\n"
    "2 usage error.\n"
    "\n"
    "init creates PARENT/NAME (PARENT defaults to .): a SKILL.md, a\n"
    "skill.yaml, scripts/run.py and references/README.md, a skeleton\n"
    "that check passes. NAME must be an Agent Skills name: 1-64 of a-z,\n"
    "0-9 and single hyphens inside. It never writes over anything. Exit\n"
    "status: 0 created, 1 not created (PARENT/NAME exists, or an error),\n"
    "2 usage error (a bad NAME).\n";

/* `skill ... -h`: the synopsis and the help, on stdout. */
int
cli_skill_help(void)
{
	fputs(skill_synopsis, stdout);
	fputs(skill_help, stdout);
	return CLI_EXIT_OK;
}

/* A usage error: why, then the synopsis, on stderr; the exit status. */
int
cli_skill_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("skillctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fputs(skill_synopsis, stderr);
	return CLI_EXIT_USAGE;
}

int
cli_is_help(const char *a)
{
	return strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0;
}

/* A byte of a file name in a loader message ("references/forms.md"). */
static int
file_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
	       c == '/';
}

/*
 * Split a loader message "FILE:LINE: why" or "FILE: why" (FILE relative
 * to the skill, with a "."); one without that prefix is about dflt,
 * line 0 (none).
 */
static const char *
msg_split(const char *msg, const char *dflt, char *file, size_t len,
    unsigned long *line)
{
	const char *p = msg, *q;
	int dot = 0;

	for (; file_byte(*p); p++)
		dot |= *p == '.';
	*line = 0;
	if (p > msg && dot && *p == ':' && (size_t)(p - msg) < len) {
		q = p + 1;
		while (*q >= '0' && *q <= '9')
			*line = *line * 10 + (unsigned long)(*q++ - '0');
		if (q > p + 1 && q[0] == ':' && q[1] == ' ' && *line > 0) {
			snprintf(file, len, "%.*s", (int)(p - msg), msg);
			return q + 2;
		}
		*line = 0;
		if (p[1] == ' ') {
			snprintf(file, len, "%.*s", (int)(p - msg), msg);
			return p + 2;
		}
	}
	snprintf(file, len, "%s", dflt);
	return msg;
}

/*
 * One finding, as "DIR/FILE:LINE: KIND: why". One without a file is
 * about the manifest when the loader got that far (a permission of
 * skill.yaml), else about SKILL.md.
 */
static void
finding_print(
    const struct skill *s, const char *dir, const char *kind, const char *msg)
{
	char file[PATH_MAX];
	unsigned long line;
	const char *why =
	    msg_split(msg, s->manifest != NULL ? s->manifest : "SKILL.md", file,
	        sizeof(file), &line);

	cli_put_safe(stdout, dir);
	if (dir[strlen(dir) - 1] != '/')
		fputc('/', stdout);
	cli_put_safe(stdout, file);
	if (line > 0)
		printf(":%lu", line);
	printf(": %s: ", kind);
	cli_put_safe(stdout, why);
	fputc('\n', stdout);
}

/* 1 when rel is a command's path, or a word of a finding (named by the
 * instructions, and warned of already). */
static int
skill_names(const struct skill *s, const char *rel)
{
	size_t i, n = strlen(rel);
	const char *p;

	for (i = 0; i < s->ncmds; i++)
		if (strcmp(s->cmds[i].path, rel) == 0)
			return 1;
	for (i = 0; i < s->nwarnings; i++)
		for (p = s->warnings[i]; (p = strstr(p, rel)) != NULL; p += n)
			if ((p == s->warnings[i] || !file_byte(p[-1])) &&
			    !file_byte(p[n]))
				return 1;
	return 0;
}

/*
 * A skill whose commands come from its instructions: warn of each file
 * of scripts/ that would run (an interpreter's extension, or an execute
 * bit) but that nothing names, the typo or forgotten line an author
 * would want to hear of. Bounded: SCRIPTS_LOOK_MAX entries, regular
 * files only, no symlink followed, no subdirectory entered; names
 * starting with "." or "_" (__init__.py, _util.py) are taken for
 * helpers.
 */
static void
check_unnamed(struct skill *s)
{
	struct dirent *de;
	struct stat st;
	size_t seen = 0;
	const char *ip;
	char *rel;
	int dfd, fd;
	DIR *d;

	if (s->ncmds == COMMANDS_MAX) /* the loader said the rest are not */
		return;
	if ((dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return;
	fd = openat(dfd, "scripts",
	    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd == -1) /* none, or a symlink: nothing to say */
		return;
	if ((d = fdopendir(fd)) == NULL) {
		close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++seen > SCRIPTS_LOOK_MAX)
			break;
		if (de->d_name[0] == '.' || de->d_name[0] == '_' ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
		    !S_ISREG(st.st_mode) ||
		    (cmds_interp_for(de->d_name) == NULL &&
		        (st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0))
			continue;
		xasprintf(&rel, "scripts/%s", de->d_name);
		ip = cmds_interp_for(rel);
		if (!skill_names(s, rel))
			skill_warn(s,
			    "%s: not named by the instructions, so it is no "
			    "command: name it in SKILL.md (\"%s%s%s\"), or "
			    "declare commands in skill.yaml",
			    rel, ip != NULL ? ip : "", ip != NULL ? " " : "",
			    rel);
		free(rel);
	}
	closedir(d);
}

/* The permissions and limits a skill declares, as text. */
static void
summary_perms(const struct skill *s)
{
	const struct plimits *l = &s->limits;
	size_t i, total = 0;
	int k;

	for (k = 0; k < PERM__COUNT; k++)
		total += s->perms.n[k];
	if (total == 0)
		printf("  permissions: none beyond the baseline (read the "
		       "skill and /work, write /work)\n");
	else
		printf("  permissions:\n");
	for (k = 0; k < PERM__COUNT; k++) {
		if (s->perms.n[k] == 0)
			continue;
		printf("    %s: ", perms_kind_label((enum perm_kind)k));
		for (i = 0; i < s->perms.n[k]; i++) {
			fputs(i > 0 ? ", " : "", stdout);
			cli_put_safe(stdout, s->perms.v[k][i]);
		}
		fputc('\n', stdout);
	}
	if (l->timeout_ms == 0 && l->memory_mb == 0 && l->pids == 0 &&
	    l->output_bytes == 0)
		return;
	printf("  limits:");
	if (l->timeout_ms > 0)
		printf(" timeout_ms %" PRIu64, l->timeout_ms);
	if (l->memory_mb > 0)
		printf(" memory_mb %" PRIu64, l->memory_mb);
	if (l->pids > 0)
		printf(" pids %" PRIu64, l->pids);
	if (l->output_bytes > 0)
		printf(" output_bytes %" PRIu64, l->output_bytes);
	fputc('\n', stdout);
}

/* What the skill is: its commands and what runs each, and the rest. */
static void
summary_print(const struct skill *s)
{
	const struct skill_cmd *c;
	size_t i, w = 0;

	printf("skill ");
	cli_put_safe(stdout, s->name);
	printf(": %s", s->valid ? "valid" : "invalid");
	if (s->nwarnings > 0)
		printf(", %zu warning%s", s->nwarnings,
		    s->nwarnings == 1 ? "" : "s");
	fputc('\n', stdout);
	if (!s->valid)
		return;
	printf("  manifest: %s\n", s->manifest);
	if (s->ncmds == 0)
		printf("  commands: none (its instructions name no script that "
		       "runs)\n");
	else
		printf("  commands:\n");
	for (i = 0; i < s->ncmds; i++) /* the width of declared names */
		if (strcmp(s->cmds[i].name, s->cmds[i].path) != 0 &&
		    strlen(s->cmds[i].name) > w)
			w = strlen(s->cmds[i].name);
	for (i = 0; i < s->ncmds; i++) {
		c = &s->cmds[i];
		printf("    ");
		if (strcmp(c->name, c->path) != 0) {
			cli_put_safe(stdout, c->name);
			printf("%*s", (int)(w - strlen(c->name) + 2), "");
		}
		cli_put_safe(stdout, c->path);
		printf("  (");
		cli_put_safe(stdout,
		    c->interpreter != NULL ? c->interpreter : "runs itself");
		printf(", cwd %s)\n",
		    c->cwd == GRANT_CWD_SKILL ? "skill" : "work");
	}
	summary_perms(s);
}

/* A JSON string of s, whatever its bytes (jansson takes UTF-8 only). */
static json_t *
jstr(const char *s)
{
	json_t *j;
	char *esc;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	esc = utf8_escape(s);
	j = json_string(esc);
	free(esc);
	return j;
}

/* --json: {valid, name, description, error, warnings, commands,
 * manifest, permissions, limits}, one line. */
static int
summary_json(const struct skill *s)
{
	json_t *j = json_object(), *a, *o, *p;
	const struct plimits *l = &s->limits;
	size_t i;
	int k, r;

	json_object_set_new(j, "valid", json_boolean(s->valid));
	json_object_set_new(j, "name", jstr(s->name));
	json_object_set_new(j, "description", jstr(s->description));
	json_object_set_new(j, "error", jstr(s->valid ? NULL : s->error));
	a = json_array();
	for (i = 0; i < s->nwarnings; i++)
		json_array_append_new(a, jstr(s->warnings[i]));
	json_object_set_new(j, "warnings", a);
	a = json_array();
	for (i = 0; s->valid && i < s->ncmds; i++) {
		o = json_object();
		json_object_set_new(o, "name", jstr(s->cmds[i].name));
		json_object_set_new(o, "path", jstr(s->cmds[i].path));
		json_object_set_new(
		    o, "interpreter", jstr(s->cmds[i].interpreter));
		json_object_set_new(o, "cwd",
		    json_string(
		        s->cmds[i].cwd == GRANT_CWD_SKILL ? "skill" : "work"));
		json_array_append_new(a, o);
	}
	json_object_set_new(j, "commands", a);
	json_object_set_new(j, "manifest", jstr(s->manifest));
	p = json_object();
	for (k = 0; k < PERM__COUNT; k++) {
		a = json_array();
		for (i = 0; i < s->perms.n[k]; i++)
			json_array_append_new(a, jstr(s->perms.v[k][i]));
		json_object_set_new(p, perms_kind_label((enum perm_kind)k), a);
	}
	json_object_set_new(j, "permissions", p);
	o = json_object();
	if (l->timeout_ms > 0)
		json_object_set_new(
		    o, "timeout_ms", json_integer((json_int_t)l->timeout_ms));
	if (l->memory_mb > 0)
		json_object_set_new(
		    o, "memory_mb", json_integer((json_int_t)l->memory_mb));
	if (l->pids > 0)
		json_object_set_new(
		    o, "pids", json_integer((json_int_t)l->pids));
	if (l->output_bytes > 0)
		json_object_set_new(o, "output_bytes",
		    json_integer((json_int_t)l->output_bytes));
	json_object_set_new(j, "limits", o);
	r = json_dumpf(j, stdout, JSON_COMPACT);
	json_decref(j);
	if (r == 0)
		fputc('\n', stdout);
	return r;
}

/*
 * The parent and the name of the skill directory shown (a path without
 * trailing slashes), as policyd would scan them: as written, so that a
 * symlinked skill directory is refused here as there; by realpath only
 * when the last component is "." or "..". -1 (errno) on error.
 */
static int
skill_split(const char *shown, char **parent, char **base)
{
	const char *slash = strrchr(shown, '/'), *b;
	char *path;

	b = slash != NULL ? slash + 1 : shown;
	if (strcmp(b, ".") == 0 || strcmp(b, "..") == 0 || *b == '\0') {
		if ((path = realpath(shown, NULL)) == NULL)
			return -1;
	} else
		path = xstrdup(shown);
	if ((slash = strrchr(path, '/')) == NULL) {
		*parent = xstrdup(".");
		*base = xstrdup(path);
	} else {
		*parent = slash == path
		              ? xstrdup("/")
		              : xstrndup(path, (size_t)(slash - path));
		*base = xstrdup(slash + 1);
	}
	free(path);
	return 0;
}

/* Load dir as policyd would, add the author's checks, and report. */
static int
check_dir(const char *dir, int json)
{
	struct skill s;
	char *shown, *parent, *base;
	size_t i, n;

	shown = xstrdup(dir);
	for (n = strlen(shown); n > 1 && shown[n - 1] == '/'; n--)
		shown[n - 1] = '\0';
	if (skill_split(shown, &parent, &base) == -1) {
		fprintf(stderr, "skillctl: %s: %s\n", shown, strerror(errno));
		free(shown);
		return 1;
	}
	if (*base == '\0') { /* "/" */
		free(parent);
		free(base);
		free(shown);
		return cli_skill_usage("skill check: / is no skill directory");
	}
	skill_load(&s, parent, base);
	if (s.valid && !s.declared)
		check_unnamed(&s);
	n = s.valid ? CLI_EXIT_OK : 1;
	if (json) {
		if (summary_json(&s) == -1) {
			fprintf(stderr, "skillctl: cannot encode JSON\n");
			n = CLI_EXIT_PROTO;
		}
	} else {
		if (!s.valid)
			finding_print(&s, shown, "error", s.error);
		for (i = 0; i < s.nwarnings; i++)
			finding_print(&s, shown, "warning", s.warnings[i]);
		summary_print(&s);
	}
	skill_free(&s);
	free(parent);
	free(base);
	free(shown);
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(
		    stderr, "skillctl: writing output: %s\n", strerror(errno));
		return CLI_EXIT_PROTO;
	}
	return (int)n;
}

/* skill check [-f CONFIG] [--json] DIR */
static int
skill_check(int argc, char **argv)
{
	struct config cfg;
	struct stat st;
	struct error e;
	const char *config = NULL, *dir = NULL;
	int i, json = 0, ended = 0;

	for (i = 0; i < argc; i++) {
		if (!ended && cli_is_help(argv[i]))
			return cli_skill_help();
		if (!ended && strcmp(argv[i], "--") == 0)
			ended = 1;
		else if (!ended && strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (!ended && strcmp(argv[i], "-f") == 0) {
			if (++i == argc)
				return cli_skill_usage("-f needs a CONFIG");
			config = argv[i];
		} else if (!ended && argv[i][0] == '-' && argv[i][1] != '\0')
			return cli_skill_usage(
			    "skill check: unknown option \"%s\"", argv[i]);
		else if (dir != NULL)
			return cli_skill_usage(
			    "skill check takes one DIR, not also \"%s\"",
			    argv[i]);
		else
			dir = argv[i];
	}
	if (dir == NULL)
		return cli_skill_usage("skill check needs a DIR");
	if (stat(dir, &st) == -1)
		return cli_skill_usage("skill check: %s: not a directory: %s",
		    dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cli_skill_usage("skill check: %s: not a directory", dir);
	log_init("skillctl", 1, -1); /* quiet: findings go to stdout */
	memset(&cfg, 0, sizeof(cfg));
	if (config != NULL) {
		if (config_load(&cfg, config, &e) == -1) {
			fprintf(stderr, "skillctl: %s\n", e.msg);
			return 1;
		}
		cli_skill_env(&cfg);
		config_free(&cfg);
	} else
		cli_skill_env(NULL);
	return check_dir(dir, json);
}

int
cli_skill(int argc, char **argv)
{
	if (argc < 1)
		return cli_skill_usage("skill wants the subcommand \"check\" "
		                       "or \"init\"");
	if (cli_is_help(argv[0]))
		return cli_skill_help();
	if (strcmp(argv[0], "check") == 0)
		return skill_check(argc - 1, argv + 1);
	if (strcmp(argv[0], "init") == 0)
		return cli_skill_init(argc - 1, argv + 1);
	return cli_skill_usage("skill wants the subcommand \"check\" or "
	                       "\"init\", not \"%s\"",
	    argv[0]);
}
