/*
 * policyd_spec.c: a SKILL.md frontmatter checked as the Agent Skills
 * specification (agentskills.io/specification) says, with the rules and
 * the words of its reference validator (skills-ref, validator.py), each
 * message followed by our "SKILL.md:line". Where we differ, and why:
 * docs/skills.md#spec-conformance.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../lib/ydoc.h"
#include "policyd.h"

/* Agent Skills names: 1..64 of a-z, 0-9 and single inner hyphens. */
int
skill_name_valid(const char *name)
{
	size_t i, len = strlen(name);

	if (len == 0 || len > 64 || name[0] == '-' || name[len - 1] == '-')
		return 0;
	for (i = 0; i < len; i++) {
		if (!((name[i] >= 'a' && name[i] <= 'z') ||
		        (name[i] >= '0' && name[i] <= '9') || name[i] == '-'))
			return 0;
		if (name[i] == '-' && name[i + 1] == '-')
			return 0;
	}
	return 1;
}

void
skill_warn(struct skill *s, const char *fmt, ...)
{
	char buf[SKILL_WARNING_MAX];
	va_list ap;

	if (s->nwarnings == SKILL_WARNINGS_MAX)
		return;
	va_start(ap, fmt);
	if (vsnprintf(buf, sizeof(buf), fmt, ap) >= (int)sizeof(buf))
		utf8_trim(buf);
	va_end(ap);
	if (s->nwarnings == SKILL_WARNINGS_MAX - 1)
		snprintf(buf, sizeof(buf),
		    "more than %d warnings: the rest are not kept",
		    SKILL_WARNINGS_MAX - 1);
	s->warnings =
	    xreallocarray(s->warnings, s->nwarnings + 1, sizeof(*s->warnings));
	s->warnings[s->nwarnings++] = xstrdup(buf);
}

/* The validator's ALLOWED_FIELDS, and its words for them (sorted). */
static const char *const spec_allowed[] = {"name", "description", "license",
    "allowed-tools", "metadata", "compatibility", NULL};
#define SPEC_ALLOWED_TEXT                                                      \
	"['allowed-tools', 'compatibility', 'description', 'license', "        \
	"'metadata', 'name']"
/* Ours, read from SKILL.md too, though the sidecar is their place. */
static const char *const spec_ours[] = {
    "commands", "permissions", "limits", NULL};

static int
in_list(const char *const *list, const char *s)
{
	for (; *list != NULL; list++)
		if (strcmp(*list, s) == 0)
			return 1;
	return 0;
}

size_t
spec_chars(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "a, b, c": the keys of r (sorted) in list (ours=1) or in neither. */
static size_t
spec_unexpected(
    struct ynode *r, int ours, char *buf, size_t len, struct ynode **first)
{
	const char **keys = xcalloc(r->n + 1, sizeof(*keys));
	size_t i, n = 0, off = 0;
	const char *k;

	*first = NULL;
	for (i = 0; i < r->n; i++) {
		if (r->pairs[i].key->type != YNODE_SCALAR)
			continue;
		k = r->pairs[i].key->str;
		if (in_list(spec_allowed, k) || in_list(spec_ours, k) != ours)
			continue;
		if (*first == NULL)
			*first = r->pairs[i].key;
		keys[n++] = k;
	}
	qsort(keys, n, sizeof(*keys), key_cmp);
	buf[0] = '\0';
	for (i = 0; i < n && off < len; i++) {
		int w = snprintf(
		    buf + off, len - off, "%s%s", i > 0 ? ", " : "", keys[i]);
		off += w > 0 ? (size_t)w : 0;
	}
	if (off >= len)
		utf8_trim(buf);
	free(keys);
	return n;
}

/*
 * validator.py _validate_metadata_fields: "Unexpected fields in
 * frontmatter: ... Only [...] are allowed." An unknown key is an error;
 * commands, permissions and limits load, with that same message as a
 * warning that points to skill.yaml.
 */
int
spec_keys(struct skill *s, struct ydoc *y, struct ynode *r, struct error *e)
{
	char keys[SKILL_WARNING_MAX / 2];
	struct ynode *at;

	if (spec_unexpected(r, 1, keys, sizeof(keys), &at) > 0)
		skill_warn(s,
		    "%s:%u: Unexpected fields in frontmatter: %s. Only %s are "
		    "allowed. skillbroker reads commands, permissions and "
		    "limits here too, but the Agent Skills validator refuses "
		    "them: move them to skill.yaml beside SKILL.md",
		    y->name, ynode_line(y, at), keys, SPEC_ALLOWED_TEXT);
	if (spec_unexpected(r, 0, keys, sizeof(keys), &at) > 0)
		return yerr(y, at, e,
		    "Unexpected fields in frontmatter: %s. Only %s are "
		    "allowed.",
		    keys, SPEC_ALLOWED_TEXT);
	return 0;
}

/*
 * A string field, as the validator takes it: 1 with *v for a scalar,
 * 0 for a list or a mapping, -1 (e set) for a scalar holding a NUL.
 */
static int
spec_string(struct ydoc *y, struct ynode *n, const char **v, struct error *e)
{
	*v = NULL;
	if (n == NULL || n->type != YNODE_SCALAR)
		return 0;
	return yscalar(y, n, v, e) == -1 ? -1 : 1;
}

/* Python's str.strip() of an ASCII-whitespace-padded name, into buf. */
static int
spec_strip(const char *v, char *buf, size_t len)
{
	size_t a = 0, b = strlen(v);

	while (a < b && strchr(" \t\n\r\f\v", v[a]) != NULL)
		a++;
	while (b > a && strchr(" \t\n\r\f\v", v[b - 1]) != NULL)
		b--;
	if (b - a >= len)
		return -1;
	memcpy(buf, v + a, b - a);
	buf[b - a] = '\0';
	return 0;
}

/*
 * validator.py _validate_name, in its order, the first failure only.
 * The spec: "Must be 1-64 characters; may only contain unicode lowercase
 * alphanumeric characters (a-z, 0-9) and hyphens (-); must not start or
 * end with a hyphen; must not contain consecutive hyphens; must match
 * the parent directory name". We take a-z and 0-9 as the spec lists
 * them; the validator would also take other Unicode letters (after NFKC).
 */
const char *
spec_name_why(const char *name, char *buf, size_t len)
{
	const char *p;
	size_t chars;

	if (skill_name_valid(name))
		return NULL;
	if (*name == '\0')
		return "Field 'name' must be a non-empty string";
	if (!utf8_valid(name, strlen(name)))
		return "Skill name contains invalid characters (not UTF-8). "
		       "Only a-z, 0-9 and hyphens are allowed";
	if ((chars = spec_chars(name)) > SKILL_NAME_CHARS) {
		snprintf(buf, len,
		    "Skill name '%s' exceeds %d character limit (%zu chars)",
		    name, SKILL_NAME_CHARS, chars);
		return buf;
	}
	for (p = name; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z') {
			snprintf(buf, len, "Skill name '%s' must be lowercase",
			    name);
			return buf;
		}
	if (name[0] == '-' || name[strlen(name) - 1] == '-')
		return "Skill name cannot start or end with a hyphen";
	if (strstr(name, "--") != NULL)
		return "Skill name cannot contain consecutive hyphens";
	for (p = name; *p != '\0' && (unsigned char)*p < 0x80; p++)
		;
	snprintf(buf, len,
	    *p != '\0' ? "Skill name '%s' contains invalid characters. Only "
	                 "a-z, 0-9 and hyphens are allowed here: skillbroker "
	                 "takes no letter beyond a-z (docs/skills.md)"
	               : "Skill name '%s' contains invalid characters. Only "
	                 "letters, digits, and hyphens are allowed.",
	    name);
	return buf;
}

static int
spec_name(struct ydoc *y, struct ynode *n, const char *dname, char *name,
    size_t len, struct error *e)
{
	char buf[ERROR_MSG_MAX];
	const char *v, *why;
	int r;

	if ((r = spec_string(y, n, &v, e)) == -1)
		return -1;
	if (r == 1 && spec_strip(v, name, len) == -1) /* too long to hold */
		return yerr(y, n, e,
		    "Skill name exceeds %d character limit (%zu chars)",
		    SKILL_NAME_CHARS, spec_chars(v));
	if (r == 0)
		*name = '\0';
	if ((why = spec_name_why(name, buf, sizeof(buf))) != NULL)
		return yerr(y, n, e, "%s", why);
	if (strcmp(name, dname) != 0)
		return yerr(y, n, e,
		    "Directory name '%s' must match skill name '%s'", dname,
		    name);
	return 0;
}

int
spec_fields(struct skill *s, struct ydoc *y, struct ynode *r, const char *dname,
    struct error *e)
{
	char name[SKILL_NAME_CHARS * 4 + 1];
	struct ynode *n;
	const char *v;
	size_t chars;
	int str;

	if ((n = ymap_get(y, r, "name")) == NULL)
		return yerr(
		    y, r, e, "Missing required field in frontmatter: name");
	if (spec_name(y, n, dname, name, sizeof(name), e) == -1)
		return -1;
	free(s->name);
	s->name = xstrdup(name);
	/* _validate_description: non-empty after strip, 1024 characters */
	if ((n = ymap_get(y, r, "description")) == NULL)
		return yerr(y, r, e,
		    "Missing required field in frontmatter: description");
	if ((str = spec_string(y, n, &v, e)) == -1)
		return -1;
	if (str == 0 || v[strspn(v, " \t\n\r\f\v")] == '\0')
		return yerr(
		    y, n, e, "Field 'description' must be a non-empty string");
	if ((chars = spec_chars(v)) > SKILL_DESC_CHARS)
		return yerr(y, n, e,
		    "Description exceeds %d character limit (%zu chars)",
		    SKILL_DESC_CHARS, chars);
	s->description = xstrdup(v);
	/* _validate_compatibility: a string of at most 500 characters */
	if ((n = ymap_get(y, r, "compatibility")) == NULL)
		return 0;
	if ((str = spec_string(y, n, &v, e)) == -1)
		return -1;
	if (str == 0)
		return yerr(y, n, e, "Field 'compatibility' must be a string");
	if ((chars = spec_chars(v)) > SKILL_COMPAT_CHARS)
		return yerr(y, n, e,
		    "Compatibility exceeds %d character limit (%zu chars)",
		    SKILL_COMPAT_CHARS, chars);
	return 0;
}
