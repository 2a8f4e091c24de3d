/*
 * master_grant.c: grants the master received from policyd. The master
 * runs only what is here; each grant is taken once, and expires unused.
 */
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "master.h"

#define GRANT_MAX 1024
#define GRANT_TTL_MS 30000

struct stored_grant {
	struct grant g;
	uint64_t expires;
	int used;
};

static struct stored_grant store[GRANT_MAX];
static uint64_t grant_ttl_ms = GRANT_TTL_MS;

/* ttl_ms 0 keeps the default; tests shorten it to watch grants expire. */
void
grant_store_init(uint64_t ttl_ms)
{
	memset(store, 0, sizeof(store));
	grant_ttl_ms = ttl_ms ? ttl_ms : GRANT_TTL_MS;
}

/* Drop grants whose time has passed. */
static void
grant_store_expire(void)
{
	uint64_t now = now_mono_ms();
	int i;

	for (i = 0; i < GRANT_MAX; i++)
		if (store[i].used && store[i].expires <= now) {
			log_info("grant %s for %s expired unused",
			    store[i].g.grant_id, store[i].g.skill);
			grant_free(&store[i].g);
			store[i].used = 0;
		}
}

/* 1 if a component of path is "." or "..". */
static int
dot_component(const char *path)
{
	const char *c;

	for (c = path; (c = strchr(c, '.')) != NULL; c++)
		if ((c == path || c[-1] == '/') &&
		    (c[1] == '\0' || c[1] == '/' ||
		        (c[1] == '.' && (c[2] == '\0' || c[2] == '/'))))
			return 1;
	return 0;
}

/*
 * Is path strictly below state_dir/sub/ (one level only when single)?
 */
static int
under_state(const char *path, const char *sub, int single)
{
	char *root;
	size_t n;
	int ok;

	xasprintf(&root, "%s/%s/", M->cfg.state_dir, sub);
	n = strlen(root);
	ok = strncmp(path, root, n) == 0 && path[n] != '\0' &&
	     (!single || strchr(path + n, '/') == NULL);
	free(root);
	return ok;
}

/* The master's own checks on a grant, whatever policyd said. */
static int
grant_sane(const struct grant *g, struct error *e)
{
	if (strstr(g->entry, "..") != NULL || strstr(g->skill_dir, "/..") ||
	    strstr(g->work_dir, "/..") || strstr(g->data_dir, "/..") ||
	    dot_component(g->skill_dir) || dot_component(g->work_dir) ||
	    dot_component(g->data_dir))
		return error_set(
		    e, ERR_INTERNAL, "grant path has \".\" or \"..\"");
	if (!under_state(g->work_dir, "work", 0) ||
	    !under_state(g->data_dir, "data", 1))
		return error_set(e, ERR_INTERNAL,
		    "grant work or data dir outside the state directory");
	if (g->timeout_ms == 0 || g->timeout_ms > M->cfg.limits.max_timeout_ms)
		return error_set(e, ERR_INTERNAL, "grant timeout out of range");
	return 0;
}

/* Take ownership of *g (zeroed on success). */
int
grant_store_add(struct grant *g, struct error *e)
{
	int i;

	grant_store_expire();
	if (grant_sane(g, e) == -1)
		return -1;
	for (i = 0; i < GRANT_MAX; i++)
		if (store[i].used &&
		    strcmp(store[i].g.grant_id, g->grant_id) == 0)
			return error_set(e, ERR_INTERNAL, "duplicate grant id");
	for (i = 0; i < GRANT_MAX; i++)
		if (!store[i].used) {
			store[i].g = *g;
			memset(g, 0, sizeof(*g));
			store[i].expires = now_mono_ms() + grant_ttl_ms;
			store[i].used = 1;
			return 0;
		}
	return error_set(e, ERR_OVERLOADED, "too many outstanding grants");
}

/* Remove and return the grant with this id; NULL if unknown or expired. */
struct grant *
grant_store_take(const char *id)
{
	struct grant *g;
	int i;

	grant_store_expire();
	if (!grant_id_valid(id))
		return NULL;
	for (i = 0; i < GRANT_MAX; i++)
		if (store[i].used && strcmp(store[i].g.grant_id, id) == 0) {
			g = xmalloc(sizeof(*g));
			*g = store[i].g;
			memset(&store[i], 0, sizeof(store[i]));
			return g;
		}
	return NULL;
}

void
grant_store_clear(void)
{
	int i;

	for (i = 0; i < GRANT_MAX; i++)
		if (store[i].used) {
			grant_free(&store[i].g);
			store[i].used = 0;
		}
}
