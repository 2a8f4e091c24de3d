/*
 * test_policy_info.c: skill_info as policyd builds it. A caller sees a
 * skill only when some rule lets it run some command (else the answer
 * is the one a skill that does not exist gets); the SKILL.md body and
 * frontmatter, the commands with their descriptions, and the caller's
 * permissions come back; references/ is read as hostile: links, FIFOs,
 * devices, subdirectories and odd names are never listed or opened,
 * sizes, hashes and texts are bounded, and the whole answer fits the
 * budget the broker gives. Every answer built must pass the broker's
 * strict decoder.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "tmptree.h"
#include "../../lib/util.h"
#include "skillenv.h"
#include "../../policyd/policyd.h"
#include "../../policyd/policyd_exec.h"
#include "../../policyd/policyd_rate.h"

#define BIG (1024 * 1024)

static char root[64];
static char skills[128], poldir[128];
static struct registry reg;
static struct policy pol;
static struct policy_env pe;
static int loaded;
static char *const sys_usr[] = {"/usr"};

static int
setup(void **state)
{
	(void)state;
	snprintf(root, sizeof(root), "/tmp/sb-test-info.XXXXXX");
	if (mkdtemp(root) == NULL)
		return -1;
	snprintf(skills, sizeof(skills), "%s/skills", root);
	snprintf(poldir, sizeof(poldir), "%s/policy", root);
	if (mkdir(skills, 0755) == -1 || mkdir(poldir, 0755) == -1)
		return -1;
	memset(&pe, 0, sizeof(pe));
	pe.limits.timeout_ms = 8000;
	pe.limits.max_timeout_ms = 20000;
	pe.limits.output_bytes = 65536;
	exec_system_paths(sys_usr, 1); /* where the skills' sh lies */
	rate_reset();
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	alarm(0);
	if (loaded) {
		registry_free(&reg);
		policy_free(&pol);
		loaded = 0;
	}
	tmptree_rm(root);
	return 0;
}

/* root/rel, made with its parent directories. */
static const char *
at(const char *rel)
{
	static char path[4][PATH_MAX];
	static int k;
	char *slash;

	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", root, rel);
	for (slash = path[k] + strlen(root) + 1; (slash = strchr(slash, '/'));
	     slash++) {
		*slash = '\0';
		mkdir(path[k], 0755);
		*slash = '/';
	}
	return path[k];
}

static void
put_n(const char *rel, const char *text, size_t len, mode_t mode)
{
	const char *path = at(rel);
	FILE *f;

	if ((f = fopen(path, "w")) == NULL)
		fail_msg("cannot write %s", path);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void
put(const char *rel, const char *text)
{
	put_n(rel, text, strlen(text), 0644);
}

/* A sparse file of size bytes (nothing read to make it). */
static void
sparse(const char *rel, off_t size)
{
	int fd = open(at(rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, size), 0);
	close(fd);
}

/* skills/NAME with two commands, save (described) and list. */
static void
skill(const char *name, const char *extra_frontmatter, const char *body)
{
	char rel[256], md[8192];

	snprintf(md, sizeof(md),
	    "---\nname: %s\ndescription: The %s skill.\n"
	    "metadata: { author: me, tags: [a, b] }\n"
	    "commands:\n"
	    "  save: { path: scripts/run.sh, description: Saves a note. }\n"
	    "  list: scripts/run.sh\n"
	    "permissions:\n  exec: [sh]\n  env: [TZ]\n"
	    "%s---\n%s",
	    name, name, extra_frontmatter, body);
	snprintf(rel, sizeof(rel), "skills/%s/SKILL.md", name);
	put(rel, md);
	snprintf(rel, sizeof(rel), "skills/%s/scripts/run.sh", name);
	put_n(rel, "#!/bin/sh\n", 10, 0755);
}

/* uid 1000 may save in notes, and run anything of "open"; uid 2000 is
 * denied notes; 3000 has an ask rule only; 4000 may plan only. */
static const char policy_yaml[] =
    "principals:\n"
    "  alice: { uids: [1000] }\n"
    "  mallory: { uids: [2000] }\n"
    "  asker: { uids: [3000] }\n"
    "  planner: { uids: [4000] }\n"
    "skills:\n"
    "  enabled: [notes, open, bad, deep, longkey, hostile, many, bodyless, "
    "broken, prose]\n"
    "rules:\n"
    "  - name: alice-saves\n"
    "    principals: [alice, mallory]\n"
    "    skills: [notes]\n"
    "    commands: [save]\n"
    "    action: allow\n"
    "    ceiling: { exec: [sh], env: [TZ] }\n"
    "  - name: no-mallory\n"
    "    principals: [mallory]\n"
    "    skills: [notes]\n"
    "    action: deny\n"
    "  - name: ask-first\n"
    "    principals: [asker]\n"
    "    skills: [notes]\n"
    "    action: ask\n"
    "    ceiling: { exec: [sh], env: [TZ] }\n"
    "  - name: plan-only\n"
    "    principals: [planner]\n"
    "    skills: [notes]\n"
    "    phases: [planning]\n"
    "    action: allow\n"
    "    ceiling: { exec: [sh], env: [TZ] }\n"
    "  - name: anything-else\n"
    "    principals: [alice]\n"
    "    skills: [open, bad, deep, longkey, hostile, many, bodyless, "
    "disabled, broken, prose]\n"
    "    action: allow\n"
    "    ceiling: { exec: [sh], env: [TZ] }\n"
    "  - name: prose-readers\n"
    "    principals: [mallory, asker]\n"
    "    skills: [prose]\n"
    "    commands: [none-such]\n"
    "    action: allow\n"
    "  - name: no-mallory-prose\n"
    "    principals: [mallory]\n"
    "    skills: [prose]\n"
    "    action: deny\n"
    "  - name: ask-prose\n"
    "    principals: [asker]\n"
    "    skills: [prose]\n"
    "    commands: [none-such]\n"
    "    action: ask\n";

static void
load(void)
{
	char *dirs[1] = {skills};
	struct error e;

	put("policy/10.yaml", policy_yaml);
	memset(&e, 0, sizeof(e));
	if (policy_load(&pol, poldir, &e) != 0)
		fail_msg("test policy refused: %s", e.msg);
	registry_load(&reg, dirs, 1);
	pe.reg = &reg;
	pe.pol = &pol;
	loaded = 1;
}

static struct msg_skill_info_req
req(uint64_t uid, const char *name, int refs)
{
	struct msg_skill_info_req r;

	memset(&r, 0, sizeof(r));
	r.ref = 7;
	r.uid = uid;
	r.gid = uid;
	r.skill = (char *)name;
	r.references = refs;
	r.max_bytes = BIG - 512;
	return r;
}

/* Build; the answer must fit its budget and pass the strict decoder. */
static int
build(const struct msg_skill_info_req *r, struct msg_skill_info_ans *a,
    struct error *e)
{
	struct msg_skill_info_ans back;
	struct mp_enc m;
	struct mp_doc d;
	struct error de;

	memset(e, 0, sizeof(*e));
	if (info_build(&pe, r, a, e) == -1) {
		assert_null(a->name);
		assert_null(a->refs);
		return -1;
	}
	enc_init(&m);
	msg_skill_info_ans_enc(&m, a);
	if (m.sb.size > r->max_bytes)
		fail_msg("answer of %zu bytes, budget %llu", m.sb.size,
		    (unsigned long long)r->max_bytes);
	if (mp_decode(&d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &de) !=
	        0 ||
	    msg_skill_info_ans_dec(&d, &back, &de) != 0)
		fail_msg("the broker would refuse the answer: %s", de.msg);
	msg_skill_info_ans_free(&back);
	mp_doc_free(&d);
	enc_free(&m);
	return 0;
}

/* Expect the answer a caller gets for a skill it may not see. */
static void
hidden(uint64_t uid, const char *name)
{
	struct msg_skill_info_req r = req(uid, name, 1);
	struct msg_skill_info_ans a;
	struct error e;
	char want[128];

	assert_int_equal(build(&r, &a, &e), -1);
	if (e.type != ERR_UNKNOWN_SKILL)
		fail_msg("uid %llu, %s: %s (%s)", (unsigned long long)uid, name,
		    err_type_name(e.type), e.msg);
	snprintf(want, sizeof(want), "no skill \"%s\" that this caller may run",
	    name);
	assert_string_equal(e.msg, want);
}

static const struct msg_info_ref *
find_ref(const struct msg_skill_info_ans *a, const char *path)
{
	size_t i;

	for (i = 0; i < a->nrefs; i++)
		if (strcmp(a->refs[i].path, path) == 0)
			return &a->refs[i];
	return NULL;
}

/* Hex SHA-256 of len bytes, for comparing. */
static void
sha256_hex(const void *p, size_t len, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	assert_int_equal(EVP_Digest(p, len, md, &n, EVP_sha256(), NULL), 1);
	hex_encode(md, n, out);
}

/* The frontmatter map's value at key, as msgpack. */
static const msgpack_object *
fm_get(const struct msg_skill_info_ans *a, struct mp_doc *d, const char *key)
{
	struct mp_enc m;
	struct error e;

	/* Wrap the raw map in a message-shaped map to decode it. */
	enc_init(&m);
	enc_map_open(&m);
	enc_key(&m, "fm");
	enc_raw(&m, a->frontmatter, a->frontmatter_len);
	enc_map_close(&m);
	assert_int_equal(
	    mp_decode(d, (const uint8_t *)m.sb.data, m.sb.size, NULL, &e), 0);
	enc_free(&m);
	return mp_get(mp_get(d->root, "fm"), key);
}

static void
test_visible_skill(void **state)
{
	struct msg_skill_info_req r;
	struct msg_skill_info_ans a;
	const struct msg_info_ref *f;
	const msgpack_object *o;
	struct mp_doc d;
	struct error e;
	char hex[65];

	(void)state;
	skill("notes", "",
	    "# notes\n\nSave one note per call; see references/format.md.\n");
	put("skills/notes/references/format.md", "Notes are plain text.\n");
	put("skills/notes/references/b-second.txt", "second\n");
	put_n("skills/notes/references/empty", "", 0, 0644);
	load();

	r = req(1000, "notes", 0);
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.ref, 7);
	assert_int_equal(a.err, ERR_NONE);
	assert_string_equal(a.message, "");
	assert_string_equal(a.name, "notes");
	assert_string_equal(a.description, "The notes skill.");
	assert_string_equal(a.body,
	    "# notes\n\nSave one note per call; see references/format.md.\n");
	/* Commands in their declared order, each with what this caller may. */
	assert_int_equal(a.ncommands, 2);
	assert_string_equal(a.commands[0].name, "save");
	assert_string_equal(a.commands[0].description, "Saves a note.");
	assert_int_equal(a.commands[0].allowed, 1);
	assert_string_equal(a.commands[1].name, "list");
	assert_string_equal(a.commands[1].description, "");
	assert_int_equal(a.commands[1].allowed, 0);
	/* The permissions the allowed command would be granted. */
	assert_true(a.permissions_len > 0);
	assert_non_null(memmem(a.permissions, a.permissions_len,
	    "\xa4"
	    "exec\x91\xa2sh",
	    9));
	assert_non_null(memmem(a.permissions, a.permissions_len,
	    "\xa3"
	    "env\x91\xa2TZ",
	    8));
	/* The frontmatter as strings, lists and maps. */
	o = fm_get(&a, &d, "metadata");
	assert_non_null(o);
	assert_int_equal(o->type, MSGPACK_OBJECT_MAP);
	o = mp_get(o, "tags");
	assert_int_equal(o->type, MSGPACK_OBJECT_ARRAY);
	assert_int_equal(o->via.array.size, 2);
	mp_doc_free(&d);
	o = fm_get(&a, &d, "name");
	assert_int_equal(o->type, MSGPACK_OBJECT_STR);
	mp_doc_free(&d);
	/* references/ sorted by name, sized and hashed; no text unasked. */
	assert_int_equal(a.nrefs, 3);
	assert_int_equal(a.refs_truncated, 0);
	assert_string_equal(a.refs[0].path, "references/b-second.txt");
	assert_string_equal(a.refs[1].path, "references/empty");
	assert_string_equal(a.refs[2].path, "references/format.md");
	f = &a.refs[2];
	assert_int_equal(f->size, 22);
	sha256_hex("Notes are plain text.\n", 22, hex);
	assert_string_equal(f->sha256, hex);
	assert_string_equal(f->text, "");
	assert_int_equal(f->omitted, INFO_OMIT_NONE);
	sha256_hex("", 0, hex);
	assert_string_equal(a.refs[1].sha256, hex);
	msg_skill_info_ans_free(&a);

	/* Asked for: the texts, an empty file's too. */
	r = req(1000, "notes", 1);
	assert_int_equal(build(&r, &a, &e), 0);
	f = find_ref(&a, "references/format.md");
	assert_string_equal(f->text, "Notes are plain text.\n");
	assert_int_equal(f->omitted, INFO_OMIT_NONE);
	f = find_ref(&a, "references/empty");
	assert_string_equal(f->text, "");
	assert_int_equal(f->omitted, INFO_OMIT_NONE);
	msg_skill_info_ans_free(&a);
}

/* Existence does not leak: a caller that may run nothing of a skill
 * gets exactly what a skill that does not exist gets. */
/*
 * A skill of instructions only (no commands) is served to whom an allow
 * rule for the skill applies, its command globs aside (there is no
 * command), with its body and references and no permissions; a deny or
 * an ask rule, no rule, or planning only hide it as they hide others.
 */
static void
test_instructions_only(void **state)
{
	struct msg_skill_info_req r = req(1000, "prose", 1);
	struct msg_skill_info_ans a;
	struct error e;

	(void)state;
	put("skills/prose/SKILL.md", "---\nname: prose\ndescription: Style "
	                             "rules.\n---\n# Prose\n\nWrite short "
	                             "sentences; see references/tone.md.\n");
	put("skills/prose/references/tone.md", "Be plain.\n");
	load();
	assert_int_equal(build(&r, &a, &e), 0);
	assert_string_equal(a.name, "prose");
	assert_int_equal(a.ncommands, 0);
	assert_non_null(strstr(a.body, "Write short sentences"));
	assert_non_null(find_ref(&a, "references/tone.md"));
	assert_int_equal(a.permissions_len, 1); /* {} */
	assert_int_equal(a.permissions[0], 0x80);
	msg_skill_info_ans_free(&a);
	hidden(2000, "prose"); /* an allow rule, and a deny rule: deny */
	hidden(3000, "prose"); /* an allow rule, and an ask rule: ask */
	hidden(5000, "prose"); /* no rule at all */
}

/* An ask rule shows the skill: its commands run once a human says yes,
 * and the permissions are what the approved call would get. */
static void
test_asked_skill(void **state)
{
	struct msg_skill_info_req r = req(3000, "notes", 0);
	struct msg_skill_info_ans a;
	struct error e;

	(void)state;
	skill("notes", "", "# notes\n");
	load();
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.ncommands, 2);
	assert_int_equal(a.commands[0].allowed, 0);
	assert_int_equal(a.commands[0].ask, 1);
	assert_int_equal(a.commands[1].ask, 1);
	assert_non_null(memmem(a.permissions, a.permissions_len,
	    "\xa4"
	    "exec",
	    5));
	msg_skill_info_ans_free(&a);
	/* alice may run save at once: not asked */
	r = req(1000, "notes", 0);
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.commands[0].allowed, 1);
	assert_int_equal(a.commands[0].ask, 0);
	assert_int_equal(a.commands[1].ask, 0);
	msg_skill_info_ans_free(&a);
}

static void
test_hidden_skills(void **state)
{
	(void)state;
	skill("notes", "", "# notes\n");
	skill("disabled", "", "# never enabled\n");
	skill("broken", "", "# broken\n");
	unlink(at("skills/broken/scripts/run.sh"));
	load();
	hidden(1000, "no-such-skill");
	hidden(1000, "NOTES");
	hidden(5000, "notes");    /* no rule at all */
	hidden(2000, "notes");    /* allowed, but a deny rule beats it */
	hidden(4000, "notes");    /* planning only: nothing ever runs */
	hidden(1000, "disabled"); /* a rule, but not enabled */
	hidden(1000, "broken");   /* invalid: never runs */
}

/* references/ as a hostile skill author would make it. */
static void
test_hostile_references(void **state)
{
	struct msg_skill_info_req r;
	struct msg_skill_info_ans a;
	const struct msg_info_ref *f;
	struct error e;
	char big[70 * 1024], name[128];
	struct timespec t0, t1;
	uint64_t ns;
	int i;

	(void)state;
	skill("hostile", "", "# hostile\n");
	put("outside/secret.txt", "secret\n");
	put("skills/hostile/references/ok.md", "fine\n");
	assert_int_equal(
	    mkfifo(at("skills/hostile/references/fifo.md"), 0644), 0);
	assert_int_equal(symlink(at("outside/secret.txt"),
	                     at("skills/hostile/references/link.md")),
	    0);
	assert_int_equal(
	    symlink("nowhere", at("skills/hostile/references/dangling.md")), 0);
	/* A device node, where the test may make one. */
	if (mknod(at("skills/hostile/references/null"), S_IFCHR | 0644,
	        makedev(1, 3)) != 0)
		put("skills/hostile/references/sub/null", "");
	put("skills/hostile/references/.hidden", "hidden\n");
	put("skills/hostile/references/sub/deeper.md", "deeper\n");
	strcpy(name, "skills/hostile/references/");
	for (i = 0; i < 20; i++)
		strcat(name, "d/");
	put(strcat(name, "leaf.md"), "x\n");
	put("skills/hostile/references/bad-\xff-name.md", "x\n");
	sparse("skills/hostile/references/huge.bin", (off_t)1 << 40);
	memset(big, 'a', sizeof(big));
	put_n("skills/hostile/references/long.md", big, sizeof(big), 0644);
	put_n("skills/hostile/references/nul.bin", "a\0b", 3, 0644);
	put_n("skills/hostile/references/latin1.txt", "caf\xe9\n", 5, 0644);
	load();

	alarm(20); /* a FIFO opened for reading would hang here */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = req(1000, "hostile", 1);
	assert_int_equal(build(&r, &a, &e), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	alarm(0);
	ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ULL +
	     (uint64_t)t1.tv_nsec - (uint64_t)t0.tv_nsec;
	if (ns > 2000000000ULL)
		fail_msg("took %llu ms", (unsigned long long)(ns / 1000000));
	/* Only the regular files directly in references/, UTF-8 named. */
	assert_int_equal(a.nrefs, 5);
	assert_string_equal(a.refs[0].path, "references/huge.bin");
	assert_string_equal(a.refs[1].path, "references/latin1.txt");
	assert_string_equal(a.refs[2].path, "references/long.md");
	assert_string_equal(a.refs[3].path, "references/nul.bin");
	assert_string_equal(a.refs[4].path, "references/ok.md");
	assert_int_equal(a.refs_truncated, 0);
	/* 1 TiB: listed by size, never read. */
	f = &a.refs[0];
	assert_true(f->size == 1ULL << 40);
	assert_string_equal(f->sha256, "");
	assert_int_equal(f->omitted, INFO_OMIT_TOO_LARGE);
	/* Over 64 KiB: hashed, no text. */
	f = &a.refs[2];
	assert_int_equal(f->size, sizeof(big));
	assert_int_equal(strlen(f->sha256), 64);
	assert_int_equal(f->omitted, INFO_OMIT_TOO_LARGE);
	assert_string_equal(f->text, "");
	assert_int_equal(a.refs[1].omitted, INFO_OMIT_NOT_TEXT);
	assert_int_equal(strlen(a.refs[1].sha256), 64);
	assert_int_equal(a.refs[3].omitted, INFO_OMIT_NOT_TEXT);
	assert_string_equal(a.refs[4].text, "fine\n");
	msg_skill_info_ans_free(&a);
}

/* A references/ that is a symlink (to a directory outside the skill)
 * lists nothing; so does one that is a file, and none at all. */
static void
test_references_not_a_dir(void **state)
{
	struct msg_skill_info_req r = req(1000, "hostile", 1);
	struct msg_skill_info_ans a;
	struct error e;

	(void)state;
	skill("hostile", "", "# hostile\n");
	skill("open", "", "# open\n");
	skill("bodyless", "", "");
	put("outside/secret.txt", "secret\n");
	assert_int_equal(
	    symlink(at("outside"), at("skills/hostile/references")), 0);
	put("skills/open/references", "a file, not a directory\n");
	load();
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.nrefs, 0);
	assert_int_equal(a.refs_truncated, 0);
	msg_skill_info_ans_free(&a);
	r.skill = "open";
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.nrefs, 0);
	msg_skill_info_ans_free(&a);
	r.skill = "bodyless";
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.nrefs, 0);
	assert_string_equal(a.body, "");
	msg_skill_info_ans_free(&a);
}

/* Counts: at most 256 listed, 4096 entries looked at; sorted. */
static void
test_many_references(void **state)
{
	struct msg_skill_info_req r = req(1000, "many", 0);
	struct msg_skill_info_ans a;
	struct error e;
	char rel[128];
	int i;

	(void)state;
	skill("many", "", "# many\n");
	for (i = 0; i < 300; i++) {
		snprintf(
		    rel, sizeof(rel), "skills/many/references/f%03d", 299 - i);
		put(rel, "x");
	}
	load();
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.nrefs, SKILL_INFO_REFS_MAX);
	assert_int_equal(a.refs_truncated, 1);
	assert_string_equal(a.refs[0].path, "references/f000");
	assert_string_equal(a.refs[255].path, "references/f255");
	msg_skill_info_ans_free(&a);

	for (i = 300; i < 4200; i++) {
		snprintf(rel, sizeof(rel), "skills/many/references/f%04d", i);
		put(rel, "");
	}
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.nrefs, SKILL_INFO_REFS_MAX);
	assert_int_equal(a.refs_truncated, 1);
	msg_skill_info_ans_free(&a);
}

/* Hashing is bounded: 8 MiB a file, 16 MiB an answer. */
static void
test_hash_budget(void **state)
{
	struct msg_skill_info_req r = req(1000, "many", 0);
	struct msg_skill_info_ans a;
	struct error e;

	(void)state;
	skill("many", "", "# many\n");
	sparse("skills/many/references/a", 6 << 20);
	sparse("skills/many/references/b", 6 << 20);
	sparse("skills/many/references/c", 6 << 20);
	sparse("skills/many/references/d", (8 << 20) + 1);
	put("skills/many/references/e", "small\n");
	load();
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.nrefs, 5);
	assert_int_equal(strlen(a.refs[0].sha256), 64);
	assert_int_equal(strlen(a.refs[1].sha256), 64);
	assert_string_equal(a.refs[2].sha256, ""); /* over the budget */
	assert_string_equal(a.refs[3].sha256, ""); /* over 8 MiB */
	assert_int_equal(strlen(a.refs[4].sha256), 64);
	assert_true(a.refs[3].size == (8 << 20) + 1);
	msg_skill_info_ans_free(&a);
}

/* The whole answer fits max_bytes: texts stop first (reply_full), then
 * the listing; a SKILL.md that cannot fit at all is resource_limit. */
static void
test_reply_budget(void **state)
{
	struct msg_skill_info_req r = req(1000, "many", 1);
	struct msg_skill_info_ans a;
	struct error e;
	char text[3000], rel[64];
	size_t i, with_text = 0, full = 0;

	(void)state;
	memset(text, 'b', 600);
	memcpy(text, "# many\n", 7);
	text[600] = '\0';
	skill("many", "", text);
	memset(text, 't', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	for (i = 0; i < 20; i++) {
		snprintf(rel, sizeof(rel), "skills/many/references/r%02zu", i);
		put(rel, text);
	}
	load();
	r.max_bytes = 16 * 1024;
	assert_int_equal(build(&r, &a, &e), 0);
	assert_int_equal(a.nrefs, 20);
	assert_int_equal(a.refs_truncated, 0);
	for (i = 0; i < a.nrefs; i++) {
		if (a.refs[i].omitted == INFO_OMIT_NONE) {
			assert_int_equal(strlen(a.refs[i].text), 2999);
			assert_int_equal(full, 0); /* texts stop, in order */
			with_text++;
		} else {
			assert_int_equal(
			    a.refs[i].omitted, INFO_OMIT_REPLY_FULL);
			assert_int_equal(strlen(a.refs[i].sha256), 64);
			full++;
		}
	}
	assert_true(with_text >= 2 && full >= 10);
	msg_skill_info_ans_free(&a);

	r.max_bytes = 2048; /* room for a few entries only */
	assert_int_equal(build(&r, &a, &e), 0);
	assert_true(a.nrefs > 0 && a.nrefs < 20);
	assert_int_equal(a.refs_truncated, 1);
	msg_skill_info_ans_free(&a);

	r.max_bytes = SKILL_INFO_MIN_BYTES; /* not even SKILL.md */
	assert_int_equal(build(&r, &a, &e), -1);
	assert_int_equal(e.type, ERR_RESOURCE_LIMIT);
	if (strstr(e.msg, "max_frame_bytes") == NULL)
		fail_msg("%s", e.msg);
}

/* What policyd cannot pass on is an error that says why. */
static void
test_bad_skill_md(void **state)
{
	struct msg_skill_info_req r;
	struct msg_skill_info_ans a;
	struct error e;
	char deep[256];

	(void)state;
	skill("bad", "", "# bad\n");
	snprintf(deep, sizeof(deep),
	    "license: { a: { b: { c: { d: { e: x } } } } }\n");
	skill("deep", deep, "# deep\n");
	skill("longkey",
	    "license: { "
	    "k12345678901234567890123456789012345678901234567890123456789012345"
	    "6"
	    ": x }\n",
	    "# longkey\n");
	skill("open", "license: { a: { b: { c: { d: x } } } }\n", "# open\n");
	load();

	r = req(1000, "deep", 0);
	assert_int_equal(build(&r, &a, &e), -1);
	assert_int_equal(e.type, ERR_RESOURCE_LIMIT);
	if (strstr(e.msg, "SKILL.md:11: frontmatter nested deeper") == NULL)
		fail_msg("%s", e.msg);
	r.skill = "longkey";
	assert_int_equal(build(&r, &a, &e), -1);
	assert_int_equal(e.type, ERR_RESOURCE_LIMIT);
	if (strstr(e.msg, "key empty or over 64 bytes") == NULL)
		fail_msg("%s", e.msg);
	r.skill = "open"; /* five levels: the most that is carried */
	assert_int_equal(build(&r, &a, &e), 0);
	msg_skill_info_ans_free(&a);

	/* Changed since it was loaded: a FIFO now (never opened), a body
	 * that is not UTF-8, no frontmatter. */
	r.skill = "bad";
	unlink(at("skills/bad/SKILL.md"));
	assert_int_equal(mkfifo(at("skills/bad/SKILL.md"), 0644), 0);
	alarm(10);
	assert_int_equal(build(&r, &a, &e), -1);
	alarm(0);
	assert_int_equal(e.type, ERR_INTERNAL);
	if (strstr(e.msg, "SKILL.md: a FIFO, not a regular file") == NULL)
		fail_msg("%s", e.msg);
	unlink(at("skills/bad/SKILL.md"));
	put("skills/bad/SKILL.md", "---\nname: bad\n---\nbody \xff\n");
	assert_int_equal(build(&r, &a, &e), -1);
	assert_int_equal(e.type, ERR_INTERNAL);
	if (strstr(e.msg, "not UTF-8") == NULL)
		fail_msg("%s", e.msg);
	put("skills/bad/SKILL.md", "no frontmatter\n");
	assert_int_equal(build(&r, &a, &e), -1);
	assert_int_equal(e.type, ERR_INTERNAL);
	unlink(at("skills/bad/SKILL.md"));
	assert_int_equal(
	    symlink(at("skills/open/SKILL.md"), at("skills/bad/SKILL.md")), 0);
	assert_int_equal(build(&r, &a, &e), -1);
	if (strstr(e.msg, "symbolic link") == NULL)
		fail_msg("%s", e.msg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(test_visible_skill),
	    T(test_hidden_skills),
	    T(test_asked_skill),
	    T(test_instructions_only),
	    T(test_hostile_references),
	    T(test_references_not_a_dir),
	    T(test_many_references),
	    T(test_hash_budget),
	    T(test_reply_budget),
	    T(test_bad_skill_md),
#undef T
	};

	skillenv_defaults();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
