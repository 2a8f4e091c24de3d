/* usage.c: -h and -V for every program, and helpers run by hand. */
#include "usage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Every program reports the Makefile's VERSION, compiled in here. */
const char *
usage_version_string(void)
{
	return SB_VERSION;
}

/* -V: one line a packager or a bug report can quote. */
void
usage_version(const char *name)
{
	printf("%s %s\n", name, usage_version_string());
}

/* The spellings of help every program takes. */
int
usage_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

/* The spellings of the version every program takes. */
int
usage_is_version(const char *arg)
{
	return strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0;
}

/*
 * A helper's options are the master's to give: a person who runs one
 * gets help, the version, or the hint to start skillbrokerd instead,
 * never a silent exit with the reason in syslog.
 */
void
usage_helper(
    int argc, char **argv, const char *name, const char *opts, int chan_fd)
{
	struct stat st;
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (usage_is_help(argv[i])) {
			printf("usage: %s %s\n"
			       "\n"
			       "A helper of skillbrokerd(8), which starts it "
			       "with its channel on fd %d;\n"
			       "it is not run by hand. Start the daemon: "
			       "skillbrokerd -f CONFIG.\n"
			       "\n"
			       "%s"
			       "  -v            debug logs\n"
			       "  -h, --help    this help\n"
			       "  -V, --version the version\n",
			    name, opts, chan_fd,
			    strchr(opts, 'd') != NULL
			        ? "  -d            log to stderr, not syslog\n"
			        : "");
			exit(0);
		}
		if (usage_is_version(argv[i])) {
			usage_version(name);
			exit(0);
		}
	}
	if (fstat(chan_fd, &st) == -1 || !S_ISSOCK(st.st_mode)) {
		fprintf(stderr,
		    "%s: started by skillbrokerd(8) only (fd %d is not its "
		    "channel); start the daemon: skillbrokerd -f CONFIG\n",
		    name, chan_fd);
		exit(2);
	}
}
