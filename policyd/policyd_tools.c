/*
 * policyd_tools.c: a skill's allowed-tools, in Claude's permission rule
 * syntax ("Bash(git:*) Bash(git status) Read WebFetch(domain:x)"), read
 * as what the skill's commands need: Bash(PROG ...) is exec PROG,
 * WebFetch(domain:HOST) is network.allow HOST:443, the agent's file tools
 * are the baseline. Every other entry, and every mapping that is wider
 * than its rule, is a warning on the skill; nothing is dropped unsaid.
 * The mapping and why: docs/skills.md#allowed-tools.
 */
#include <stdio.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/ydoc.h"
#include "policyd.h"

#define TOOL_ENTRY_MAX 1024 /* bytes of one entry */
#define TOOL_SHOW_MAX 160   /* bytes of it quoted in a warning */

/* The agent's file tools: what the sandbox's baseline already gives. */
static const char *const tools_baseline[] = {"Read", "Write", "Edit",
    "MultiEdit", "Glob", "Grep", "LS", "NotebookEdit", "NotebookRead", NULL};

struct tools_at {
	struct skill *s;
	struct ydoc *y;
	struct ynode *n; /* the scalar the entry is in, for its line */
};

/* A warning naming the entry (cut to TOOL_SHOW_MAX bytes) and why. */
static void
tools_warn(const struct tools_at *at, const char *entry, const char *why)
{
	size_t show = utf8_cut(entry, TOOL_SHOW_MAX);

	skill_warn(at->s, "%s:%u: allowed-tools \"%.*s%s\": %s", at->y->name,
	    ynode_line(at->y, at->n), (int)show, entry,
	    entry[show] != '\0' ? "..." : "", why);
}

static int
is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* Bash(RULE): "PROG:*" and "PROG *" allow PROG with any arguments; any
 * other rule names one command line, which the exec allowlist widens
 * to the program. */
static void
tools_bash(const struct tools_at *at, const char *entry, char *rule)
{
	char why[SKILL_WARNING_MAX], *prog = rule, *rest;
	size_t len = strlen(rule);
	int any = 0;

	if (len >= 2 && strcmp(rule + len - 2, ":*") == 0) {
		rule[len - 2] = '\0';
		any = 1;
	}
	prog += strspn(prog, " ");
	rest = prog + strcspn(prog, " ");
	if (*rest != '\0')
		*rest++ = '\0';
	rest += strspn(rest, " ");
	if (*prog == '\0' || strchr(prog, '*') != NULL) {
		tools_warn(at, entry,
		    "no mapping: it names no one program (exec takes "
		    "program names: list them in skill.yaml permissions.exec)");
		return;
	}
	if (strchr(prog, '/') != NULL) {
		tools_warn(at, entry,
		    "no mapping: a path, not a program name (a script of the "
		    "skill is a command in skill.yaml; a system program is "
		    "named without its directory)");
		return;
	}
	if (!is_alnum(prog[0])) {
		tools_warn(at, entry, "no mapping: not a program name");
		return;
	}
	switch (perms_add(&at->s->perms, PERM_EXEC, prog)) {
	case -1:
		tools_warn(at, entry, "no mapping: not a program name");
		return;
	case -2:
		snprintf(why, sizeof(why),
		    "no mapping: exec already holds %d programs",
		    PERM_ITEMS_MAX);
		tools_warn(at, entry, why);
		return;
	}
	if ((any && *rest == '\0') || (!any && strcmp(rest, "*") == 0))
		return;
	snprintf(why, sizeof(why),
	    "mapped to exec %s, which allows the program, not one command "
	    "line: %s may run with any arguments",
	    prog, prog);
	tools_warn(at, entry, why);
}

/* WebFetch(domain:HOST): the agent fetches HTTPS from HOST. */
static void
tools_webfetch(const struct tools_at *at, const char *entry, const char *rule)
{
	char item[TOOL_ENTRY_MAX + 8];

	if (strncmp(rule, "domain:", 7) != 0 || rule[7] == '\0') {
		tools_warn(at, entry,
		    "no mapping: only WebFetch(domain:HOST) names a host "
		    "(list network.allow in skill.yaml)");
		return;
	}
	snprintf(item, sizeof(item), "%s:443", rule + 7);
	switch (perms_add(&at->s->perms, PERM_NETWORK, item)) {
	case -1:
		tools_warn(at, entry, "no mapping: not a host name");
		break;
	case -2:
		tools_warn(at, entry, "no mapping: network.allow is full");
		break;
	}
}

/* One entry: TOOL or TOOL(RULE). */
static void
tools_entry(const struct tools_at *at, const char *entry, size_t len)
{
	char buf[TOOL_ENTRY_MAX + 1], rule[TOOL_ENTRY_MAX + 1];
	size_t i, nlen;

	if (len > TOOL_ENTRY_MAX) {
		len = utf8_cut(entry, TOOL_SHOW_MAX);
		memcpy(buf, entry, len);
		buf[len] = '\0';
		tools_warn(at, buf, "no mapping: longer than 1024 bytes");
		return;
	}
	memcpy(buf, entry, len);
	buf[len] = '\0';
	nlen = strspn(buf, "abcdefghijklmnopqrstuvwxyz"
	                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	if (nlen == 0 || (buf[nlen] != '\0' && buf[nlen] != '(') ||
	    (buf[nlen] == '(' && buf[len - 1] != ')')) {
		tools_warn(
		    at, buf, "no mapping: neither a tool name nor TOOL(RULE)");
		return;
	}
	if (buf[nlen] == '\0') {
		for (i = 0; tools_baseline[i] != NULL; i++)
			if (strcmp(buf, tools_baseline[i]) == 0)
				return; /* the baseline: docs/skills.md */
		tools_warn(at, buf,
		    strcmp(buf, "Bash") == 0
		        ? "no mapping: any command line (exec takes program "
		          "names: list them in skill.yaml permissions.exec)"
		    : strcmp(buf, "WebFetch") == 0
		        ? "no mapping: any site (list network.allow in "
		          "skill.yaml)"
		        : "no mapping: a tool of the agent, not a permission "
		          "of the skill's commands");
		return;
	}
	memcpy(rule, buf + nlen + 1, len - nlen - 2);
	rule[len - nlen - 2] = '\0';
	buf[nlen] = '\0';
	if (strcmp(buf, "Bash") == 0) {
		buf[nlen] = '(';
		tools_bash(at, buf, rule);
	} else if (strcmp(buf, "WebFetch") == 0) {
		buf[nlen] = '(';
		tools_webfetch(at, buf, rule);
	} else {
		for (i = 0; tools_baseline[i] != NULL; i++)
			if (strcmp(buf, tools_baseline[i]) == 0)
				break;
		buf[nlen] = '(';
		tools_warn(at, buf,
		    tools_baseline[i] != NULL
		        ? "no mapping: a path rule of the agent's file tools; "
		          "commands read $SKILL_DIR and $WORK_DIR and write "
		          "$WORK_DIR (list more fs in skill.yaml)"
		        : "no mapping: a tool of the agent, not a permission "
		          "of the skill's commands");
	}
}

/*
 * The entries of one string: separated by spaces (the spec) or commas
 * (as Claude Code also writes them), outside parentheses, so that
 * "Bash(git status)" is one entry. An entry whose parentheses do not
 * balance is a warning.
 */
static void
tools_string(const struct tools_at *at, const char *v)
{
	const char *p = v, *start;
	int depth, bad;

	for (;;) {
		p += strspn(p, " \t\r\n,");
		if (*p == '\0')
			return;
		start = p;
		depth = bad = 0;
		for (; *p != '\0'; p++) {
			if (depth == 0 && strchr(" \t\r\n,", *p) != NULL)
				break;
			if (*p == '(')
				depth++;
			else if (*p == ')' && --depth < 0)
				bad = 1;
		}
		if (bad || depth != 0) {
			char show[TOOL_SHOW_MAX + 1];
			size_t n = (size_t)(p - start);

			if (n > TOOL_SHOW_MAX)
				n = utf8_cut(start, TOOL_SHOW_MAX);
			memcpy(show, start, n);
			show[n] = '\0';
			tools_warn(at, show,
			    "no mapping: its parentheses do not balance");
		} else
			tools_entry(at, start, (size_t)(p - start));
	}
}

void
tools_parse(struct skill *s, struct ydoc *y, struct ynode *n)
{
	struct tools_at at = {s, y, n};
	struct error e;
	const char *v;
	size_t i;

	if (n->type == YNODE_SEQ) {
		/* lists nest at most YDOC_MAX_DEPTH deep: the loader saw to it
		 */
		for (i = 0; i < n->n; i++)
			tools_parse(s, y, n->items[i]);
		return;
	}
	if (yscalar(y, n, &v, &e) == -1) {
		skill_warn(s,
		    "%s: not read: a space-separated string (or a "
		    "list) of tools",
		    e.msg);
		return;
	}
	tools_string(&at, v);
}
