/*
 * cli_info.c: `skillctl info SKILL`: a skill_info reply for people. The
 * text is the skill author's: terminal controls in it are shown as "?"
 * (newlines and tabs stay); --json gives it as it came.
 */
#include "cli.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/xmalloc.h"

#define INFO_FIELD_MAX CLI_REPLY_MAX

/* Multi-line text: cli_put_safe, but newlines and tabs are kept. */
static void
info_put_text(FILE *out, const char *s)
{
	const char *nl;
	char *line;

	while (*s != '\0') {
		nl = s + strcspn(s, "\n\t");
		line = xstrndup(s, (size_t)(nl - s));
		cli_put_safe(out, line);
		free(line);
		if (*nl == '\0')
			break;
		fputc(*nl, out);
		s = nl + 1;
	}
}

/* "  LABEL: a, b" for a list of strings at key of map (absent: "-"). */
static int
info_list(const msgpack_object *map, const char *key, const char *label,
    FILE *out, struct error *e)
{
	char **v = NULL;
	size_t n = 0, i;

	if (map != NULL &&
	    mp_strarr(map, key, 0, 65536, INFO_FIELD_MAX, &v, &n, e) == -1)
		return -1;
	fprintf(out, "  %s: ", label);
	for (i = 0; i < n; i++) {
		if (i > 0)
			fputs(", ", out);
		cli_put_safe(out, v[i]);
	}
	fputs(n == 0 ? "-\n" : "\n", out);
	strarr_free(v, n);
	return 0;
}

/* The permissions this caller would be granted. */
static int
info_permissions(const msgpack_object *skill, FILE *out, struct error *e)
{
	const msgpack_object *p = NULL, *fs = NULL, *net = NULL;

	if (mp_submap(skill, "permissions", 1, &p, e) == -1 ||
	    mp_submap(p, "fs", 0, &fs, e) == -1 ||
	    mp_submap(p, "network", 0, &net, e) == -1)
		return -1;
	fputs("permissions (for you, beyond reading $SKILL_DIR and using "
	      "$WORK_DIR):\n",
	    out);
	return info_list(fs, "read", "fs.read", out, e) ||
	               info_list(fs, "write", "fs.write", out, e) ||
	               info_list(net, "allow", "network", out, e) ||
	               info_list(p, "exec", "exec", out, e) ||
	               info_list(p, "env", "env", out, e)
	           ? -1
	           : 0;
}

/* One line per command: name, whether you may run it, what it does. */
static int
info_commands(const msgpack_object *skill, FILE *out, struct error *e)
{
	const msgpack_object *arr = mp_get(skill, "commands");
	char *name = NULL, *desc = NULL;
	uint32_t i;
	int allowed = 0, ask = 0;

	if (arr == NULL || arr->type != MSGPACK_OBJECT_ARRAY)
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"commands\" must be an array");
	fputs("commands:\n", out);
	for (i = 0; i < arr->via.array.size; i++) {
		const msgpack_object *c = &arr->via.array.ptr[i];
		if (c->type != MSGPACK_OBJECT_MAP ||
		    mp_str(c, "name", 1, INFO_FIELD_MAX, &name, e) == -1 ||
		    mp_str(c, "description", 0, INFO_FIELD_MAX, &desc, e) ==
		        -1 ||
		    mp_bool(c, "allowed", 0, &allowed, e) == -1 ||
		    mp_bool(c, "ask", 0, &ask, e) == -1) {
			free(name);
			return error_set(e, ERR_BAD_REQUEST, "a bad command");
		}
		fputs("  ", out);
		cli_put_safe(out, name);
		fputs(allowed ? "\tallowed"
		      : ask   ? "\tasks first"
		              : "\tnot allowed",
		    out);
		if (desc != NULL && *desc != '\0') {
			fputc('\t', out);
			cli_put_safe(out, desc);
		}
		fputc('\n', out);
		free(name);
		free(desc);
		name = desc = NULL;
	}
	return 0;
}

/* One reference: path, size, sha256, and why it has no text. */
static int
info_ref_line(const msgpack_object *f, FILE *out, struct error *e)
{
	char *path = NULL, *sha = NULL, *why = NULL;
	uint64_t size = 0;
	int r = -1;

	if (f->type != MSGPACK_OBJECT_MAP) {
		error_set(e, ERR_BAD_REQUEST, "a reference is not a map");
		return -1;
	}
	if (mp_str(f, "path", 1, INFO_FIELD_MAX, &path, e) == -1 ||
	    mp_uint(f, "size_bytes", 1, UINT64_MAX, &size, e) == -1 ||
	    mp_str(f, "sha256", 0, INFO_FIELD_MAX, &sha, e) == -1 ||
	    mp_str(f, "text_omitted", 0, INFO_FIELD_MAX, &why, e) == -1)
		goto out;
	fputs("  ", out);
	cli_put_safe(out, path);
	fprintf(out, "\t%" PRIu64 " bytes\t", size);
	cli_put_safe(out, sha != NULL && *sha != '\0' ? sha : "(not hashed)");
	if (why != NULL) {
		fputs("\tno text: ", out);
		cli_put_safe(out, why);
	}
	fputc('\n', out);
	r = 0;
out:
	free(path);
	free(sha);
	free(why);
	return r;
}

/* The reference list, then each text that came, under its path. */
static int
info_references(const msgpack_object *skill, FILE *out, struct error *e)
{
	const msgpack_object *arr = mp_get(skill, "references");
	char *path = NULL, *text = NULL;
	int trunc = 0;
	uint32_t i;

	if (arr == NULL || arr->type != MSGPACK_OBJECT_ARRAY ||
	    mp_bool(skill, "references_truncated", 0, &trunc, e) == -1)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"references\" must be an array");
	fputs(arr->via.array.size == 0 ? "references: -\n" : "references:\n",
	    out);
	for (i = 0; i < arr->via.array.size; i++)
		if (info_ref_line(&arr->via.array.ptr[i], out, e) == -1)
			return -1;
	if (trunc)
		fputs("  (more files in references/ than listed)\n", out);
	for (i = 0; i < arr->via.array.size; i++) {
		const msgpack_object *f = &arr->via.array.ptr[i];
		if (mp_str(f, "text", 0, INFO_FIELD_MAX, &text, e) == -1)
			return -1;
		if (text == NULL)
			continue;
		(void)mp_str(f, "path", 1, INFO_FIELD_MAX, &path, e);
		fputs("\n--- ", out);
		cli_put_safe(out, path != NULL ? path : "?");
		fputs(" ---\n", out);
		info_put_text(out, text);
		if (*text != '\0' && text[strlen(text) - 1] != '\n')
			fputc('\n', out);
		free(path);
		free(text);
		path = text = NULL;
	}
	return 0;
}

/* Who the skill is, what you may run, its instructions, its files. */
int
cli_info_print(const msgpack_object *reply, FILE *out, struct error *e)
{
	const msgpack_object *skill = NULL;
	char *name = NULL, *desc = NULL, *body = NULL;
	int r = -1;

	if (mp_submap(reply, "skill", 1, &skill, e) == -1 ||
	    mp_str(skill, "name", 1, INFO_FIELD_MAX, &name, e) == -1 ||
	    mp_str(skill, "description", 0, INFO_FIELD_MAX, &desc, e) == -1 ||
	    mp_str(skill, "body", 0, INFO_FIELD_MAX, &body, e) == -1)
		goto out;
	cli_put_safe(out, name);
	fputs(": ", out);
	cli_put_safe(out, desc != NULL ? desc : "");
	fputc('\n', out);
	if (info_commands(skill, out, e) == -1 ||
	    info_permissions(skill, out, e) == -1)
		goto out;
	fputs("\n--- SKILL.md ---\n", out);
	info_put_text(out, body != NULL ? body : "");
	if (body != NULL && *body != '\0' && body[strlen(body) - 1] != '\n')
		fputc('\n', out);
	fputc('\n', out);
	r = info_references(skill, out, e);
out:
	free(name);
	free(desc);
	free(body);
	return r;
}
