/*
 * config.h: the daemon configuration (etc/skillbroker.yaml). Relative
 * paths are resolved against the directory of the config file. Only the
 * master reads it; each child gets the few settings it needs on argv.
 */
#ifndef SB_CONFIG_H
#define SB_CONFIG_H

#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct limits {
	uint64_t timeout_ms, max_timeout_ms, output_bytes, memory_mb, pids,
	    fsize_mb, nofile;
};

struct config {
	char *path;            /* absolute path of the config file */
	char *socket;
	char **skills_dirs;
	size_t nskills_dirs;
	char *policy_dir;
	char *state_dir;
	char *audit_path;
	char *privsep_user;
	uid_t privsep_uid;
	gid_t privsep_gid;
	uint32_t worker_uid_first, worker_uid_last;
	uint64_t max_frame_bytes;
	uint64_t max_clients;
	struct limits limits;
};

int config_load(struct config *c, const char *path, struct error *e);
void config_free(struct config *c);
/* Resolve the privsep user (name or number) into uid/gid. */
int config_resolve_user(struct config *c, struct error *e);

#endif
