/*
 * skillenv.h: what loading a skill needs of the daemon config, set from
 * its built-in defaults: the system paths programs must lie in, and the
 * interpreters by extension.
 */
#ifndef SB_TEST_SKILLENV_H
#define SB_TEST_SKILLENV_H

#include "../../lib/config.h"
#include "../../policyd/policyd.h"
#include "../../policyd/policyd_exec.h"

static inline void
skillenv_defaults(void)
{
	struct config c;

	config_defaults(&c, "/");
	exec_system_paths(c.sys_paths, c.nsys_paths);
	cmds_interpreters(c.interp_exts, c.interp_progs, c.ninterps);
	config_free(&c);
}

#endif
