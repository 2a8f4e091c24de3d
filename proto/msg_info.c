/*
 * msg_info.c: the broker <-> policyd messages of skill_info
 * (SKILL_INFO_REQ, SKILL_INFO_ANS): a skill's instructions, commands,
 * permissions and reference files as one caller may see them.
 */
#include "msg.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "frame.h"

#define REFS_PREFIX "references/"
#define SHA256_HEX 64

/* The wire names of enum info_omit, as the client reply spells them. */
const char *
info_omit_name(enum info_omit o)
{
	static const char *const names[INFO_OMIT__COUNT] = {
	    "", "too_large", "not_text", "unreadable", "reply_full"};

	return (unsigned)o < INFO_OMIT__COUNT ? names[o] : "";
}

/* The broker asks for the caller it names; policyd decides what it sees. */
void
msg_skill_info_req_enc(struct mp_enc *m, const struct msg_skill_info_req *r)
{
	msg_begin(m, MSG_SKILL_INFO_REQ);
	enc_kuint(m, "ref", r->ref);
	enc_kuint(m, "uid", r->uid);
	enc_kuint(m, "gid", r->gid);
	enc_kstr(m, "skill", r->skill);
	enc_kbool(m, "references", r->references);
	enc_kuint(m, "max_bytes", r->max_bytes);
	msg_end(m);
}

/* policyd takes a request only with a name and a usable budget. */
int
msg_skill_info_req_dec(
    const struct mp_doc *d, struct msg_skill_info_req *r, struct error *e)
{
	static const char *const keys[] = {
	    "t", "ref", "uid", "gid", "skill", "references", "max_bytes", NULL};
	const msgpack_object *o = d->root;

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &r->ref, e) ||
	    mp_uint(o, "uid", 1, UINT32_MAX, &r->uid, e) ||
	    mp_uint(o, "gid", 1, UINT32_MAX, &r->gid, e) ||
	    mp_str(o, "skill", 1, NAME_MAX_LEN, &r->skill, e) ||
	    mp_bool(o, "references", 1, &r->references, e) ||
	    mp_uint(o, "max_bytes", 1, FRAME_MAX_DEFAULT, &r->max_bytes, e))
		goto bad;
	if (*r->skill == '\0' || r->max_bytes < SKILL_INFO_MIN_BYTES) {
		error_set(e, ERR_BAD_REQUEST,
		    "an empty skill name, or max_bytes under %d",
		    SKILL_INFO_MIN_BYTES);
		goto bad;
	}
	return 0;
bad:
	msg_skill_info_req_free(r);
	return -1;
}

/* Whatever the decoder kept. */
void
msg_skill_info_req_free(struct msg_skill_info_req *r)
{
	free(r->skill);
	memset(r, 0, sizeof(*r));
}

/* A raw map field, or {} when there is none (an error answer). */
static void
info_enc_rawmap(struct mp_enc *m, const char *key, const uint8_t *p, size_t n)
{
	enc_key(m, key);
	if (n > 0)
		enc_raw(m, p, n);
	else {
		enc_map_open(m);
		enc_map_close(m);
	}
}

/* Every field, always: the decoder requires them all. */
void
msg_skill_info_ans_enc(struct mp_enc *m, const struct msg_skill_info_ans *a)
{
	const struct msg_info_ref *f;
	size_t i;

	msg_begin(m, MSG_SKILL_INFO_ANS);
	enc_kuint(m, "ref", a->ref);
	enc_kuint(m, "err", a->err);
	enc_kstr(m, "message", a->message ? a->message : "");
	enc_kstr(m, "name", a->name ? a->name : "");
	enc_kstr(m, "description", a->description ? a->description : "");
	info_enc_rawmap(m, "frontmatter", a->frontmatter, a->frontmatter_len);
	enc_kstr(m, "body", a->body ? a->body : "");
	enc_key(m, "commands");
	enc_array(m, a->ncommands);
	for (i = 0; i < a->ncommands; i++) {
		enc_map_open(m);
		enc_kstr(m, "name", a->commands[i].name);
		enc_kstr(m, "description", a->commands[i].description);
		enc_kbool(m, "allowed", a->commands[i].allowed);
		enc_kbool(m, "ask", a->commands[i].ask);
		enc_map_close(m);
	}
	info_enc_rawmap(m, "permissions", a->permissions, a->permissions_len);
	enc_key(m, "references");
	enc_array(m, a->nrefs);
	for (i = 0; i < a->nrefs; i++) {
		f = &a->refs[i];
		enc_map_open(m);
		enc_kstr(m, "path", f->path);
		enc_kuint(m, "size_bytes", f->size);
		enc_kstr(m, "sha256", f->sha256);
		enc_kstr(m, "text", f->text ? f->text : "");
		enc_kuint(m, "text_omitted", f->omitted);
		enc_map_close(m);
	}
	enc_kbool(m, "references_truncated", a->refs_truncated);
	msg_end(m);
}

/* Strings, arrays and maps only: what a YAML frontmatter becomes. */
static int
info_plain(const msgpack_object *o)
{
	uint32_t i;

	switch (o->type) {
	case MSGPACK_OBJECT_STR:
		return 1;
	case MSGPACK_OBJECT_ARRAY:
		for (i = 0; i < o->via.array.size; i++)
			if (!info_plain(&o->via.array.ptr[i]))
				return 0;
		return 1;
	case MSGPACK_OBJECT_MAP:
		for (i = 0; i < o->via.map.size; i++)
			if (!info_plain(&o->via.map.ptr[i].val))
				return 0;
		return 1;
	default:
		return 0;
	}
}

/* One command: a plain name, its description, whether it may run. */
static int
info_cmd_dec(const msgpack_object *o, struct msg_info_cmd *c, struct error *e)
{
	static const char *const keys[] = {
	    "name", "description", "allowed", "ask", NULL};

	if (o->type != MSGPACK_OBJECT_MAP)
		return error_set(e, ERR_BAD_REQUEST, "a command is not a map");
	if (mp_only_keys(o, keys, e) ||
	    mp_str(o, "name", 1, COMMAND_MAX_LEN, &c->name, e) ||
	    mp_str(o, "description", 1, SKILL_DESC_MAX, &c->description, e) ||
	    mp_bool(o, "allowed", 1, &c->allowed, e) ||
	    mp_bool(o, "ask", 1, &c->ask, e))
		return -1;
	if (c->allowed && c->ask)
		return error_set(
		    e, ERR_BAD_REQUEST, "a command both allowed and asked");
	if (!command_name_valid(c->name, COMMAND_MAX_LEN))
		return error_set(e, ERR_BAD_REQUEST, "malformed command name");
	return 0;
}

/* "" or 64 lowercase hex digits. */
static int
info_sha256_valid(const char *s)
{
	size_t n = strlen(s);

	return n == 0 ||
	       (n == SHA256_HEX && strspn(s, "0123456789abcdef") == n);
}

/* references/NAME: one file directly in references/, never ".." */
static int
info_path_valid(const char *p)
{
	const char *name = p + strlen(REFS_PREFIX);

	return strncmp(p, REFS_PREFIX, strlen(REFS_PREFIX)) == 0 &&
	       *name != '\0' && strchr(name, '/') == NULL &&
	       strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* One reference: a text only with nothing omitted, never past its size. */
static int
info_ref_dec(const msgpack_object *o, struct msg_info_ref *f, struct error *e)
{
	static const char *const keys[] = {
	    "path", "size_bytes", "sha256", "text", "text_omitted", NULL};

	if (o->type != MSGPACK_OBJECT_MAP)
		return error_set(
		    e, ERR_BAD_REQUEST, "a reference is not a map");
	if (mp_only_keys(o, keys, e) ||
	    mp_str(o, "path", 1, strlen(REFS_PREFIX) + SKILL_INFO_NAME_MAX,
	        &f->path, e) ||
	    mp_uint(o, "size_bytes", 1, INT64_MAX, &f->size, e) ||
	    mp_str(o, "sha256", 1, SHA256_HEX, &f->sha256, e) ||
	    mp_str(o, "text", 1, SKILL_INFO_TEXT_MAX, &f->text, e) ||
	    mp_uint(o, "text_omitted", 1, INFO_OMIT__COUNT - 1, &f->omitted, e))
		return -1;
	if (!info_path_valid(f->path))
		return error_set(e, ERR_BAD_REQUEST,
		    "a reference path is not references/NAME");
	if (!info_sha256_valid(f->sha256))
		return error_set(e, ERR_BAD_REQUEST, "malformed sha256");
	if (*f->text != '\0' &&
	    (f->omitted != INFO_OMIT_NONE || strlen(f->text) > f->size))
		return error_set(
		    e, ERR_BAD_REQUEST, "a reference text it cannot have");
	return 0;
}

/* The array at key, of at most max items; NULL (e set) if it is not. */
static const msgpack_object *
info_array(
    const msgpack_object *o, const char *key, size_t max, struct error *e)
{
	const msgpack_object *arr = mp_get(o, key);

	if (arr == NULL || arr->type != MSGPACK_OBJECT_ARRAY ||
	    arr->via.array.size > max) {
		error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" must be an array of at most %zu", key, max);
		return NULL;
	}
	return arr;
}

/* At most COMMANDS_MAX commands; a failure leaves ncommands to free. */
static int
info_cmds_dec(
    const msgpack_object *o, struct msg_skill_info_ans *a, struct error *e)
{
	const msgpack_object *arr;
	uint32_t i;

	if ((arr = info_array(o, "commands", COMMANDS_MAX, e)) == NULL)
		return -1;
	a->commands = xcalloc(arr->via.array.size + 1, sizeof(*a->commands));
	for (i = 0; i < arr->via.array.size; i++) {
		a->ncommands++;
		if (info_cmd_dec(&arr->via.array.ptr[i], &a->commands[i], e))
			return -1;
	}
	return 0;
}

/* At most SKILL_INFO_REFS_MAX files; a failure leaves nrefs to free. */
static int
info_refs_dec(
    const msgpack_object *o, struct msg_skill_info_ans *a, struct error *e)
{
	const msgpack_object *arr;
	uint32_t i;

	if ((arr = info_array(o, "references", SKILL_INFO_REFS_MAX, e)) == NULL)
		return -1;
	a->refs = xcalloc(arr->via.array.size + 1, sizeof(*a->refs));
	for (i = 0; i < arr->via.array.size; i++) {
		a->nrefs++;
		if (info_ref_dec(&arr->via.array.ptr[i], &a->refs[i], e))
			return -1;
	}
	return 0;
}

/* Sorted by path, each once. */
static int
info_refs_sorted(const struct msg_skill_info_ans *a)
{
	size_t i;

	for (i = 1; i < a->nrefs; i++)
		if (strcmp(a->refs[i - 1].path, a->refs[i].path) >= 0)
			return 0;
	return 1;
}

/* The broker passes the skill on to a client: every field is checked. */
int
msg_skill_info_ans_dec(
    const struct mp_doc *d, struct msg_skill_info_ans *a, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "err", "message", "name",
	    "description", "frontmatter", "body", "commands", "permissions",
	    "references", "references_truncated", NULL};
	const msgpack_object *o = d->root, *fm = NULL;

	memset(a, 0, sizeof(*a));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &a->ref, e) ||
	    mp_uint(o, "err", 1, ERR__COUNT - 1, &a->err, e) ||
	    mp_str(o, "message", 1, REASON_MAX_LEN, &a->message, e) ||
	    mp_str(o, "name", 1, NAME_MAX_LEN, &a->name, e) ||
	    mp_str(o, "description", 1, SKILL_DESC_MAX, &a->description, e) ||
	    mp_submap(o, "frontmatter", 1, &fm, e) ||
	    mp_rawmap(o, "frontmatter", SKILL_INFO_FM_MAX, &a->frontmatter,
	        &a->frontmatter_len, e) ||
	    mp_str(o, "body", 1, SKILL_INFO_BODY_MAX, &a->body, e) ||
	    info_cmds_dec(o, a, e) ||
	    mp_rawmap(o, "permissions", SKILL_INFO_PERMS_MAX, &a->permissions,
	        &a->permissions_len, e) ||
	    info_refs_dec(o, a, e) ||
	    mp_bool(o, "references_truncated", 1, &a->refs_truncated, e))
		goto bad;
	if (!info_plain(fm)) {
		error_set(e, ERR_BAD_REQUEST,
		    "field \"frontmatter\" holds more than strings, arrays "
		    "and maps");
		goto bad;
	}
	if (a->err != ERR_NONE ? *a->message == '\0'
	                       : !ident_valid(a->name, NAME_MAX_LEN)) {
		error_set(e, ERR_BAD_REQUEST,
		    "an error without a message, or a skill without a name");
		goto bad;
	}
	if (!info_refs_sorted(a)) {
		error_set(e, ERR_BAD_REQUEST, "references not sorted by path");
		goto bad;
	}
	return 0;
bad:
	msg_skill_info_ans_free(a);
	return -1;
}

/* Whatever the decoder kept, the answer of an error too. */
void
msg_skill_info_ans_free(struct msg_skill_info_ans *a)
{
	size_t i;

	free(a->message);
	free(a->name);
	free(a->description);
	free(a->body);
	free(a->frontmatter);
	free(a->permissions);
	for (i = 0; i < a->ncommands; i++) {
		free(a->commands[i].name);
		free(a->commands[i].description);
	}
	free(a->commands);
	for (i = 0; i < a->nrefs; i++) {
		free(a->refs[i].path);
		free(a->refs[i].sha256);
		free(a->refs[i].text);
	}
	free(a->refs);
	memset(a, 0, sizeof(*a));
}
