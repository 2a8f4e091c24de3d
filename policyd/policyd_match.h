/*
 * policyd_match.h: the pattern languages of policies and manifests.
 *   glob:      '*' any run without '/', '**' any run, '?' one char
 *   name glob: '*' any run, '?' any char (command names, which may be
 *              a script's path)
 *   host:port: lib/hostport.h
 */
#ifndef SB_POLICYD_MATCH_H
#define SB_POLICYD_MATCH_H

#include <stddef.h>

#include "../lib/hostport.h"

int glob_match(const char *pat, const char *s);
int name_glob_match(const char *pat, const char *s);
/* Does pattern ceil allow everything pattern want may reach (as text)? */
int path_covers(const char *ceil, const char *want);

#endif
