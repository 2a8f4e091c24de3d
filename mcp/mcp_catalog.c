/*
 * mcp_catalog.c: the skills as the caller sees them. The skills reply
 * names every registered skill and its commands; skill_info, asked per
 * skill, says which commands this caller may run and gives the
 * instructions. A command skill_info allows is a listed tool; the other
 * commands of registered skills get names too, so a call of one reaches
 * the broker and comes back with the broker's reason (permission_denied,
 * approval needed), never a guess of ours. A visible skill's
 * instructions are a resource.
 */
#include "mcp.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

/* An empty catalog. */
void
mcp_catalog_init(struct mcp_catalog *c)
{
	memset(c, 0, sizeof(*c));
}

/* Free a catalog and everything in it. */
void
mcp_catalog_free(struct mcp_catalog *c)
{
	struct mcp_skill *k;
	size_t i, j;

	for (i = 0; i < c->nskills; i++) {
		k = &c->skills[i];
		free(k->name);
		free(k->description);
		free(k->body);
		for (j = 0; j < k->ncommands; j++) {
			free(k->commands[j]);
			free(k->command_desc[j]);
		}
		free(k->commands);
		free(k->command_desc);
		free(k->allowed);
		free(k->ask);
	}
	free(c->skills);
	for (i = 0; i < c->ntools; i++) {
		free(c->tools[i].skill);
		free(c->tools[i].command);
		free(c->tools[i].description);
	}
	free(c->tools);
	memset(c, 0, sizeof(*c));
}

/* Room for one more command of k. */
static size_t
mcp_catalog_grow(struct mcp_skill *k, const char *command)
{
	size_t n = k->ncommands;

	k->commands = xreallocarray(k->commands, n + 1, sizeof(*k->commands));
	k->command_desc =
	    xreallocarray(k->command_desc, n + 1, sizeof(*k->command_desc));
	k->allowed = xreallocarray(k->allowed, n + 1, sizeof(*k->allowed));
	k->ask = xreallocarray(k->ask, n + 1, sizeof(*k->ask));
	k->commands[n] = xstrdup(command);
	k->command_desc[n] = xstrdup("");
	k->allowed[n] = 0;
	k->ask[n] = 0;
	k->ncommands++;
	return n;
}

/* A skill of the skills reply, its commands not yet decided. */
size_t
mcp_catalog_add(struct mcp_catalog *c, const char *name,
    const char *description, const char *const *commands, size_t n)
{
	struct mcp_skill *k;
	size_t i;

	c->skills =
	    xreallocarray(c->skills, c->nskills + 1, sizeof(*c->skills));
	k = &c->skills[c->nskills];
	memset(k, 0, sizeof(*k));
	k->name = xstrdup(name);
	k->description = xstrdup(description ? description : "");
	for (i = 0; i < n; i++)
		(void)mcp_catalog_grow(k, commands[i]);
	return c->nskills++;
}

/* skill_info answered for skill i: it is visible, with these instructions. */
void
mcp_catalog_body(struct mcp_catalog *c, size_t i, const char *body)
{
	struct mcp_skill *k = &c->skills[i];

	free(k->body);
	k->body = xstrdup(body ? body : "");
	k->visible = 1;
}

/* What skill_info says of one command of skill i. */
void
mcp_catalog_command(struct mcp_catalog *c, size_t i, const char *command,
    const char *description, int allowed, int ask)
{
	struct mcp_skill *k = &c->skills[i];
	size_t j;

	for (j = 0; j < k->ncommands; j++)
		if (strcmp(k->commands[j], command) == 0)
			break;
	if (j == k->ncommands)
		j = mcp_catalog_grow(k, command);
	free(k->command_desc[j]);
	k->command_desc[j] = xstrdup(description ? description : "");
	k->allowed[j] = allowed;
	k->ask[j] = ask;
}

/* Compare tools by name, for the lookup. */
static int
mcp_catalog_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mcp_tool *)a)->name,
	    ((const struct mcp_tool *)b)->name);
}

/* Name every command, sort the names for the lookup. */
void
mcp_catalog_finish(struct mcp_catalog *c)
{
	struct mcp_skill *k;
	struct mcp_tool *t;
	size_t i, j, n = 0, o;

	for (i = 0; i < c->nskills; i++)
		n += c->skills[i].ncommands;
	c->tools = xcalloc(n + 1, sizeof(*c->tools));
	for (i = 0; i < c->nskills; i++) {
		k = &c->skills[i];
		for (j = 0; j < k->ncommands; j++) {
			t = &c->tools[c->ntools];
			(void)mcp_name_encode(k->name, k->commands[j], t->name);
			t->skill = xstrdup(k->name);
			t->command = xstrdup(k->commands[j]);
			t->description = xstrdup(k->command_desc[j]);
			t->listed = k->visible && (k->allowed[j] || k->ask[j]);
			t->ask = k->ask[j];
			t->skill_index = i;
			c->ntools++;
		}
	}
	/* sorted by name; a name met twice (cannot happen but by a hash
	 * collision) keeps its first pair only */
	qsort(c->tools, c->ntools, sizeof(*c->tools), mcp_catalog_cmp);
	for (i = 1, o = 1; i < c->ntools; i++) {
		if (strcmp(c->tools[i].name, c->tools[o - 1].name) == 0) {
			log_warnx("tool name %s: two commands map to it; "
			          "%s %s is left out",
			    c->tools[i].name, c->tools[i].skill,
			    c->tools[i].command);
			free(c->tools[i].skill);
			free(c->tools[i].command);
			free(c->tools[i].description);
			continue;
		}
		c->tools[o++] = c->tools[i];
	}
	if (c->ntools > 0)
		c->ntools = o;
	c->built_ms = now_mono_ms();
}

/* The tool of a name, listed or not; NULL for none. */
const struct mcp_tool *
mcp_catalog_find(const struct mcp_catalog *c, const char *name)
{
	struct mcp_tool key;

	if (c->ntools == 0 || strlen(name) > MCP_TOOL_NAME_MAX)
		return NULL;
	memset(&key, 0, sizeof(key));
	memcpy(key.name, name, strlen(name) + 1);
	return bsearch(
	    &key, c->tools, c->ntools, sizeof(*c->tools), mcp_catalog_cmp);
}

/* A skill of the catalog by its name; NULL for none. */
const struct mcp_skill *
mcp_catalog_skill(const struct mcp_catalog *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nskills; i++)
		if (strcmp(c->skills[i].name, name) == 0)
			return &c->skills[i];
	return NULL;
}

/* One tool as tools/list shows it. */
static json_t *
mcp_catalog_tool(const struct mcp_catalog *c, const struct mcp_tool *t)
{
	const struct mcp_skill *k = &c->skills[t->skill_index];
	char *title, *desc;
	json_t *o;

	(void)xasprintf(&title, "%s: %s", t->skill, t->command);
	(void)xasprintf(&desc, "%s%sCommand \"%s\" of skill \"%s\"%s%s.%s",
	    k->description, *k->description ? "\n\n" : "", t->command, t->skill,
	    *t->description ? ": " : "", t->description,
	    t->ask ? " The policy asks a human to approve each call." : "");
	o = json_object();
	json_object_set_new(o, "name", json_string(t->name));
	json_object_set_new(o, "title", mcp_text_json(title, strlen(title)));
	json_object_set_new(
	    o, "description", mcp_text_json(desc, strlen(desc)));
	json_object_set_new(o, "inputSchema", mcp_args_schema());
	free(title);
	free(desc);
	return o;
}

/* Tools in the order of the skills reply (sorted by skill name), then
 * each skill's commands as skill_info gives them. */
json_t *
mcp_catalog_tools(const struct mcp_catalog *c)
{
	char name[MCP_TOOL_NAME_MAX + 1];
	const struct mcp_tool *t;
	json_t *a = json_array();
	size_t i, j;

	for (i = 0; i < c->nskills; i++)
		for (j = 0; j < c->skills[i].ncommands; j++) {
			(void)mcp_name_encode(
			    c->skills[i].name, c->skills[i].commands[j], name);
			t = mcp_catalog_find(c, name);
			if (t != NULL && t->listed && t->skill_index == i)
				json_array_append_new(
				    a, mcp_catalog_tool(c, t));
		}
	return a;
}

/* skill://NAME/SKILL.md (the caller frees it). */
char *
mcp_catalog_uri(const char *skill)
{
	char *uri;

	(void)xasprintf(&uri, "%s%s%s", MCP_URI_PREFIX, skill, MCP_URI_SUFFIX);
	return uri;
}

/* The skill a resource URI names, checked as a skill name. */
int
mcp_catalog_uri_skill(const char *uri, char *name, size_t len)
{
	size_t n, pre = strlen(MCP_URI_PREFIX), suf = strlen(MCP_URI_SUFFIX);
	size_t i;

	n = strlen(uri);
	if (n <= pre + suf || strncmp(uri, MCP_URI_PREFIX, pre) != 0 ||
	    strcmp(uri + n - suf, MCP_URI_SUFFIX) != 0)
		return -1;
	n -= pre + suf;
	if (n > MCP_SKILL_NAME_MAX || n + 1 > len)
		return -1;
	for (i = 0; i < n; i++) {
		char ch = uri[pre + i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
		        ch == '-'))
			return -1;
	}
	memcpy(name, uri + pre, n);
	name[n] = '\0';
	return 0;
}

/* resources/list's resources: each visible skill's SKILL.md. */
json_t *
mcp_catalog_resources(const struct mcp_catalog *c)
{
	const struct mcp_skill *k;
	json_t *a = json_array(), *o;
	char *uri;
	size_t i;

	for (i = 0; i < c->nskills; i++) {
		k = &c->skills[i];
		if (!k->visible)
			continue;
		uri = mcp_catalog_uri(k->name);
		o = json_object();
		json_object_set_new(o, "uri", mcp_text_json(uri, strlen(uri)));
		json_object_set_new(
		    o, "name", mcp_text_json(k->name, strlen(k->name)));
		json_object_set_new(
		    o, "title", mcp_text_json(k->name, strlen(k->name)));
		json_object_set_new(o, "description",
		    mcp_text_json(k->description, strlen(k->description)));
		json_object_set_new(
		    o, "mimeType", json_string("text/markdown"));
		json_object_set_new(
		    o, "size", json_integer((json_int_t)strlen(k->body)));
		json_array_append_new(a, o);
		free(uri);
	}
	return a;
}
