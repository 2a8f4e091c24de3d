/*
 * cli_skill_init.c: `skillctl skill init`, a skeleton of a skill that
 * `skill check` passes without a warning: SKILL.md, skill.yaml,
 * scripts/run.py and references/README.md, each made new (never over
 * anything), removed again if a later one cannot be made.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../policyd/policyd.h"
#include "cli.h"

#define INIT_FILES_MAX 8 /* what init creates, directories included */

/* The skeleton's files (%s: the skill's name); their order is init's. */
static const char init_skill_md[] =
    "---\n"
    "name: %s\n"
    "description: Prints its arguments and the files in its working "
    "directory. Replace this with what the skill does and when an agent "
    "should use it.\n"
    "---\n"
    "# %s\n"
    "\n"
    "Replace this text with the instructions an agent follows to use the\n"
    "skill: what it is for, what to give it, what comes back.\n"
    "\n"
    "## Usage\n"
    "\n"
    "Run `scripts/run.py` with the arguments the task needs:\n"
    "\n"
    "```sh\n"
    "python3 scripts/run.py ARG...\n"
    "```\n"
    "\n"
    "It prints its arguments and the files in its working directory, the\n"
    "session's work dir, where the files given to the session are.\n"
    "\n"
    "Every script these instructions name (here `scripts/run.py`) is a\n"
    "command of the skill, called by its path. What a command needs\n"
    "beyond the baseline goes in `skill.yaml`. Background that an agent\n"
    "reads only when it needs it goes in `references/README.md` and the\n"
    "files beside it.\n";

static const char init_skill_yaml[] =
    "# skill.yaml: the blocks skillbroker reads beside SKILL.md (the Agent\n"
    "# Skills validator refuses them in its frontmatter): commands,\n"
    "# permissions and limits.\n"
    "#\n"
    "# Without a commands block, the commands are the scripts SKILL.md\n"
    "# names (scripts/run.py, run by python3 in the session's work dir).\n"
    "# With one, only what it declares runs:\n"
    "#\n"
    "# commands:\n"
    "#   scripts/run.py:\n"
    "#     description: Prints its arguments and its work dir's files.\n"
    "#     cwd: work           # or skill: start in the skill's directory\n"
    "#\n"
    "# What the commands need beyond the baseline (read the skill and the\n"
    "# work dir, write the work dir); the policy's ceiling must cover it:\n"
    "#\n"
    "# permissions:\n"
    "#   fs: { read: [\"$DATA_DIR/**\"] }\n"
    "#   network: { allow: [\"api.example.com:443\"] }\n"
    "#   exec: [git]\n"
    "#   env: [TZ]\n"
    "\n"
    "limits:\n"
    "  timeout_ms: 10000\n"
    "  # memory_mb: 256\n"
    "  # pids: 64\n"
    "  # output_bytes: 1048576\n";

static const char init_run_py[] =
    "# The skeleton's one command: python3 scripts/run.py ARG...\n"
    "# It starts in the session's work dir ($WORK_DIR); the skill's own\n"
    "# files are under $SKILL_DIR. Standard library only.\n"
    "import os\n"
    "import sys\n"
    "\n"
    "\n"
    "def main(args):\n"
    "    print(\"arguments:\", \" \".join(args) if args else \"(none)\")\n"
    "    with os.scandir(\".\") as entries:\n"
    "        names = sorted(e.name for e in entries\n"
    "                       if e.is_file(follow_symlinks=False))\n"
    "    for name in names:\n"
    "        print(\"file:\", name)\n"
    "    return 0\n"
    "\n"
    "\n"
    "if __name__ == \"__main__\":\n"
    "    sys.exit(main(sys.argv[1:]))\n";

static const char init_readme[] =
    "Reference material for %s, read by an agent only when the "
    "instructions point here.\n";

/* What init makes under the skill's directory; text NULL: a directory. */
struct init_entry {
	const char *path;
	const char *text;
	const char *what;
};

/*
 * Make one entry under dfd, never over anything (O_EXCL, mkdirat), with
 * its mode set whatever the umask: an interpreter reads the script as
 * the worker's uid, so others must read it. -1 (errno) on error.
 */
static int
init_make(int dfd, const struct init_entry *en)
{
	int fd, r = 0, err = 0;

	if (en->text == NULL) {
		if (mkdirat(dfd, en->path, 0755) == -1 ||
		    (fd = openat(dfd, en->path,
		         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) ==
		        -1)
			return -1;
		if (fchmod(fd, 0755) == -1) {
			err = errno;
			r = -1;
		}
	} else {
		if ((fd = openat(dfd, en->path,
		         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		         0644)) == -1)
			return -1;
		if (fchmod(fd, 0644) == -1 ||
		    write_full(fd, en->text, strlen(en->text)) == -1) {
			err = errno;
			r = -1;
		}
	}
	if (close(fd) == -1 && r == 0) {
		err = errno;
		r = -1;
	}
	errno = err;
	return r;
}

/*
 * Make the skill directory name under pfd and its entries; on an error,
 * say so and remove what was made. 0 or -1.
 */
static int
init_tree(int pfd, const char *name, const char *shown,
    const struct init_entry *v, size_t n)
{
	size_t made = 0;
	int dfd = -1, left = 0;
	const char *bad = "";

	if (mkdirat(pfd, name, 0755) == -1) {
		if (errno == EEXIST)
			fprintf(stderr,
			    "skillctl: %s exists: nothing is written over\n",
			    shown);
		else
			fprintf(stderr, "skillctl: %s: %s\n", shown,
			    strerror(errno));
		return -1;
	}
	if ((dfd = openat(pfd, name,
	         O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 ||
	    fchmod(dfd, 0755) == -1)
		goto fail;
	for (; made < n; made++)
		if (init_make(dfd, &v[made]) == -1) {
			bad = v[made].path;
			goto fail;
		}
	if (close(dfd) == -1) {
		dfd = -1;
		goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "skillctl: %s%s%s: %s\n", shown, *bad ? "/" : "", bad,
	    strerror(errno));
	while (dfd != -1 && made-- > 0)
		left |= unlinkat(dfd, v[made].path,
		            v[made].text == NULL ? AT_REMOVEDIR : 0) == -1;
	if (dfd != -1)
		close(dfd);
	left |= unlinkat(pfd, name, AT_REMOVEDIR) == -1;
	if (left)
		fprintf(stderr, "skillctl: %s is left partly made: remove it\n",
		    shown);
	return -1;
}

/* skill init [-d PARENT] NAME */
int
cli_skill_init(int argc, char **argv)
{
	char why[512], *md, *readme, *shown, *parent_shown;
	const char *parent = ".", *name = NULL, *msg;
	struct init_entry v[INIT_FILES_MAX];
	size_t i, n = 0, plen;
	int pfd, ended = 0, r;

	for (i = 0; i < (size_t)argc; i++) {
		if (!ended && cli_is_help(argv[i]))
			return cli_skill_help();
		if (!ended && strcmp(argv[i], "--") == 0)
			ended = 1;
		else if (!ended && strcmp(argv[i], "-d") == 0) {
			if (++i == (size_t)argc)
				return cli_skill_usage("-d needs a PARENT");
			parent = argv[i];
		} else if (!ended && argv[i][0] == '-' && argv[i][1] != '\0')
			return cli_skill_usage(
			    "skill init: unknown option \"%s\"", argv[i]);
		else if (name != NULL)
			return cli_skill_usage(
			    "skill init takes one NAME, not also \"%s\"",
			    argv[i]);
		else
			name = argv[i];
	}
	if (name == NULL)
		return cli_skill_usage("skill init needs a NAME");
	if ((msg = spec_name_why(name, why, sizeof(why))) != NULL) {
		fputs("skillctl: ", stderr);
		cli_put_safe(stderr, msg);
		fputs(" (the Agent Skills name rules: 1-64 characters of a-z, "
		      "0-9 and hyphens, no hyphen first, last or doubled)\n",
		    stderr);
		return CLI_EXIT_USAGE;
	}
	if (*parent == '\0')
		return cli_skill_usage("skill init: PARENT is empty");
	for (plen = strlen(parent); plen > 1 && parent[plen - 1] == '/';)
		plen--;
	parent_shown = xstrndup(parent, plen);
	if (strcmp(parent_shown, ".") == 0)
		shown = xstrdup(name);
	else
		xasprintf(&shown, "%s%s%s", parent_shown,
		    strcmp(parent_shown, "/") == 0 ? "" : "/", name);
	xasprintf(&md, init_skill_md, name, name);
	xasprintf(&readme, init_readme, name);
	v[n++] = (struct init_entry){"scripts", NULL, NULL};
	v[n++] = (struct init_entry){"references", NULL, NULL};
	v[n++] = (struct init_entry){"SKILL.md", md,
	    "the instructions: replace the description and the text"};
	v[n++] = (struct init_entry){"skill.yaml", init_skill_yaml,
	    "limits, and commented examples of commands and permissions"};
	v[n++] = (struct init_entry){"scripts/run.py", init_run_py,
	    "the one command, named by SKILL.md"};
	v[n++] = (struct init_entry){"references/README.md", readme,
	    "what an agent reads when it needs it"};
	r = 1;
	if ((pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		fprintf(stderr, "skillctl: %s: %s\n", parent_shown,
		    strerror(errno));
	else {
		if (init_tree(pfd, name, shown, v, n) == 0)
			r = 0;
		close(pfd);
	}
	if (r == 0) {
		printf("created %s:\n", shown);
		for (i = 0; i < n; i++)
			if (v[i].text != NULL)
				printf("  %-22s %s\n", v[i].path, v[i].what);
		printf("next: skillctl skill check %s\n", shown);
	}
	free(md);
	free(readme);
	free(shown);
	free(parent_shown);
	return r;
}
