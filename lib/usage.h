/*
 * usage.h: -h and -V for every program, from the one version of the
 * build (the Makefile's VERSION), and the word a helper of the master
 * gives to whoever runs it by hand.
 */
#ifndef SB_USAGE_H
#define SB_USAGE_H

/* The build's version, as -V prints it ("0.2.0"). */
const char *usage_version_string(void);
/* "NAME VERSION" on stdout (-V, --version). */
void usage_version(const char *name);
/* 1 if arg asks for help (-h, --help), or (usage_is_version) the version. */
int usage_is_help(const char *arg);
int usage_is_version(const char *arg);
/*
 * At the start of a helper skillbrokerd starts (name, its options as
 * "[-dv]", the fd of its channel to the master): -h or -V anywhere
 * before "--" is answered on stdout, exit 0; started by hand (chan_fd
 * is no socket), it says so on stderr and exits 2. Otherwise returns.
 */
void usage_helper(
    int argc, char **argv, const char *name, const char *opts, int chan_fd);

#endif
