/*
 * cli_audit.c: `skillctl audit verify`, an offline check of audit log
 * files with auditd's own line format (auditd/auditd_chain.c). It
 * checks every line's hash, the links of the chain (sequence and
 * audit.prev_hash) within each file and from file to file, that each
 * file starts with a header, and, given a head, that nothing was cut
 * off the end. It names the first bad event.sequence. A file logrotate
 * compressed (gzip) is read as it is, through zlib.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "../auditd/auditd.h"
#include "../lib/xmalloc.h"
#include "cli.h"

struct vfile {
	const char *path;
	uint64_t first, last, count;
	char first_prev[HASH_HEX_LEN + 1], last_hash[HASH_HEX_LEN + 1];
	char first_action[64];
	uint64_t bad_seq; /* 0: the file is good */
	unsigned long bad_line;
	char why[400];
	int head_found; /* 1 matched, -1 differs, 0 not seen */
	char head_seen[HASH_HEX_LEN + 1];
};

/* One line into buf (at most max bytes kept); -1 at EOF. */
static ssize_t
read_line(gzFile f, char *buf, size_t max, int *nl, size_t *total)
{
	size_t n = 0;
	int c;

	*nl = 0;
	*total = 0;
	while ((c = gzgetc(f)) != -1) {
		(*total)++;
		if (c == '\n') {
			*nl = 1;
			break;
		}
		if (n < max)
			buf[n++] = (char)c;
	}
	if (*total == 0)
		return -1;
	return (ssize_t)n;
}

/* Note the first problem of a file. */
static void
vbad(struct vfile *f, uint64_t seq, unsigned long line, const char *why)
{
	f->bad_seq = seq ? seq : 1;
	f->bad_line = line;
	snprintf(f->why, sizeof(f->why), "%s", why);
}

/* Where one line breaks the chain within its file; NULL when it does not. */
static const char *
vlink(struct vfile *f, const struct audit_line *ln, char *why, size_t len)
{
	if (f->count == 0) {
		if (!audit_is_header(ln->action))
			return "the first line is not a header record "
			       "(audit.created or audit.rotated)";
		if (strcmp(ln->action, "audit.created") == 0 &&
		    (ln->seq != 1 || strspn(ln->prev, "0") != HASH_HEX_LEN))
			return "audit.created must start the chain at "
			       "sequence 1";
		return NULL;
	}
	if (audit_is_header(ln->action))
		return "a header record in the middle of a file";
	if (ln->seq != f->last + 1) {
		snprintf(why, len,
		    "the line holds sequence %" PRIu64 " where "
		    "%" PRIu64 " belongs: a record was deleted, moved or "
		    "inserted",
		    ln->seq, f->last + 1);
		return why;
	}
	if (strcmp(ln->prev, f->last_hash) != 0)
		return "its audit.prev_hash is not the previous record's "
		       "event.hash: a record was replaced or inserted";
	return NULL;
}

/* Take one good line into the file's summary. */
static void
vtake(struct vfile *f, const struct audit_line *ln, const struct audit_head *h)
{
	if (f->count++ == 0) {
		f->first = ln->seq;
		memcpy(f->first_prev, ln->prev, sizeof(f->first_prev));
		snprintf(
		    f->first_action, sizeof(f->first_action), "%s", ln->action);
	}
	f->last = ln->seq;
	memcpy(f->last_hash, ln->hash, sizeof(f->last_hash));
	if (h != NULL && ln->seq == h->seq) {
		f->head_found = strcmp(ln->hash, h->hash) == 0 ? 1 : -1;
		memcpy(f->head_seen, ln->hash, sizeof(f->head_seen));
	}
}

/* The sequence a broken line claims, as a hint for the report; 0 if none. */
static uint64_t
seq_hint(const char *buf, size_t n)
{
	json_t *j, *seq;
	uint64_t v = 0;

	if ((j = json_loadb(buf, n, 0, NULL)) == NULL)
		return 0;
	seq = json_object_get(json_object_get(j, "event"), "sequence");
	if (json_is_integer(seq) && json_integer_value(seq) > 0)
		v = (uint64_t)json_integer_value(seq);
	json_decref(j);
	return v;
}

/* A bad first line still sorts by the sequence it claims. */
static void
vbad_first(struct vfile *f, const char *buf, size_t n, const char *why)
{
	f->first = seq_hint(buf, n);
	vbad(f, f->first, 1, why);
}

/* What zlib says went wrong reading f; NULL when nothing did. */
static const char *
gz_problem(gzFile f)
{
	const char *msg;
	int err;

	msg = gzerror(f, &err);
	if (err == Z_OK || err == Z_STREAM_END)
		return NULL;
	if (strncmp(msg, "<fd:", 4) == 0 && strstr(msg, ": ") != NULL)
		msg = strstr(msg, ": ") + 2; /* gzdopen's name for the file */
	return msg;
}

/*
 * Open a log file, plain or gzip (zlib reads a plain file as it is);
 * NULL with why set when it cannot be.
 */
static gzFile
vfile_open(const char *path, char *why, size_t len)
{
	gzFile gz;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1) {
		snprintf(why, len, "cannot open: %s", strerror(errno));
		return NULL;
	}
	if ((gz = gzdopen(fd, "rb")) == NULL) {
		snprintf(why, len, "cannot read: %s",
		    errno ? strerror(errno) : "out of memory");
		close(fd);
		return NULL;
	}
	if (gzbuffer(gz, 128 * 1024) == -1)
		snprintf(why, len, "cannot read: zlib's buffer");
	return gz;
}

/* Check every line of one file; stops at the first bad one. */
static void
vfile_scan(struct vfile *f, const struct audit_head *h)
{
	char *buf = xmalloc(AUDIT_LINE_MAX + 1), why[300];
	struct audit_line ln;
	unsigned long lineno = 0;
	const char *w, *gzw;
	struct error e;
	size_t total;
	ssize_t n;
	gzFile fp;
	int nl;

	if ((fp = vfile_open(f->path, why, sizeof(why))) == NULL) {
		vbad(f, 0, 0, why);
		free(buf);
		return;
	}
	while (f->bad_seq == 0 &&
	       (n = read_line(fp, buf, AUDIT_LINE_MAX, &nl, &total)) >= 0) {
		lineno++;
		if (!nl && (gzw = gz_problem(fp)) != NULL) {
			snprintf(why, sizeof(why),
			    "the compressed file is cut short or damaged "
			    "(gzip: %s)",
			    gzw);
			vbad(f, f->last + 1, lineno, why);
		} else if (!nl)
			vbad(f, f->last + 1, lineno,
			    "the last line has no "
			    "newline: a torn or cut record");
		else if (total > AUDIT_LINE_MAX)
			vbad(f, f->last + 1, lineno,
			    "a line longer than 32 KiB");
		else if (audit_line_check(buf, (size_t)n, &ln, &e) == -1) {
			if (f->count == 0)
				vbad_first(f, buf, (size_t)n, e.msg);
			else
				vbad(f, f->last + 1, lineno, e.msg);
		} else if ((w = vlink(f, &ln, why, sizeof(why))) != NULL)
			vbad(f, f->count ? f->last + 1 : ln.seq, lineno, w);
		else
			vtake(f, &ln, h);
	}
	if (f->bad_seq == 0 && (gzw = gz_problem(fp)) != NULL) {
		snprintf(why, sizeof(why), "read error: %s", gzw);
		vbad(f, f->last + 1, lineno, why);
	} else if (f->bad_seq == 0 && f->count == 0)
		vbad(f, 0, 0, "no records");
	if (gzclose_r(fp) != Z_OK && f->bad_seq == 0)
		vbad(f, f->last + 1, lineno,
		    "the compressed file is damaged (gzip)");
	free(buf);
}

/* Files in chain order: by their first sequence. */
static int
vfile_cmp(const void *a, const void *b)
{
	const struct vfile *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* The first problem, in chain order; 0 when the series is good. */
static int
vseries(struct vfile *v, size_t n, FILE *out, struct audit_verify *res)
{
	char why[400];
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0 &&
		    (v[i].first != v[i - 1].last + 1 ||
		        strcmp(v[i].first_prev, v[i - 1].last_hash) != 0)) {
			snprintf(why, sizeof(why),
			    "its header (sequence %" PRIu64
			    ") does not continue %s, which ends at "
			    "sequence %" PRIu64,
			    v[i].first, v[i - 1].path, v[i - 1].last);
			vbad(&v[i], v[i - 1].last + 1, 1, why);
		}
		if (v[i].bad_seq != 0) {
			fprintf(out, "%s:%lu: sequence %" PRIu64 ": %s\n",
			    v[i].path, v[i].bad_line, v[i].bad_seq, v[i].why);
			res->bad_seq = v[i].bad_seq;
			snprintf(res->why, sizeof(res->why), "%s", v[i].why);
			return -1;
		}
	}
	return 0;
}

/* The head must be in the series, with the same hash, or it was cut. */
static int
vhead(struct vfile *v, size_t n, const struct audit_head *h, FILE *out,
    struct audit_verify *res)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].head_found != 0) {
			if (v[i].head_found == 1)
				return 0;
			snprintf(res->why, sizeof(res->why),
			    "sequence %" PRIu64
			    " has hash %s but the head says %s: the log was "
			    "rewritten",
			    h->seq, v[i].head_seen, h->hash);
			res->bad_seq = h->seq;
			fprintf(out, "%s: %s\n", v[i].path, res->why);
			return -1;
		}
	if (h->seq > v[n - 1].last) {
		snprintf(res->why, sizeof(res->why),
		    "the log ends at "
		    "sequence %" PRIu64 " but the head is at %" PRIu64
		    ": sequences %" PRIu64 "..%" PRIu64 " are missing (the "
		    "tail was cut off)",
		    v[n - 1].last, h->seq, v[n - 1].last + 1, h->seq);
		res->bad_seq = v[n - 1].last + 1;
	} else {
		snprintf(res->why, sizeof(res->why),
		    "the head (sequence %" PRIu64
		    ") is before the first record given (%" PRIu64 ")",
		    h->seq, v[0].first);
		res->bad_seq = h->seq;
	}
	fprintf(out, "%s: %s\n", v[n - 1].path, res->why);
	return -1;
}

/* Verify files as one series; 0 when intact, res says where not. */
int
cli_audit_verify_files(char *const *files, size_t n,
    const struct audit_head *head, FILE *out, struct audit_verify *res)
{
	struct vfile *v = xcalloc(n, sizeof(*v));
	size_t i;
	int r;

	memset(res, 0, sizeof(*res));
	for (i = 0; i < n; i++) {
		v[i].path = files[i];
		vfile_scan(&v[i], head);
	}
	qsort(v, n, sizeof(*v), vfile_cmp);
	r = vseries(v, n, out, res);
	if (r == 0 && head != NULL)
		r = vhead(v, n, head, out, res);
	if (r == 0) {
		for (i = 0; i < n; i++)
			fprintf(out,
			    "%s: sequences %" PRIu64 "..%" PRIu64
			    ", chain intact\n",
			    v[i].path, v[i].first, v[i].last);
		if (strcmp(v[0].first_action, "audit.rotated") == 0)
			fprintf(out,
			    "the chain continues a file not given: "
			    "sequence %" PRIu64 ", hash %s\n",
			    v[0].first - 1, v[0].first_prev);
		res->records = v[n - 1].last - v[0].first + 1;
		res->head.seq = v[n - 1].last;
		memcpy(res->head.hash, v[n - 1].last_hash, HASH_HEX_LEN + 1);
		fprintf(out,
		    "verified: %" PRIu64 " records in %zu file%s%s; "
		    "head %" PRIu64 ":%s\n",
		    res->records, n, n == 1 ? "" : "s",
		    head ? ", the head matches" : "", res->head.seq,
		    res->head.hash);
	}
	free(v);
	return r;
}

/* --head FILE (the daemon's head file) or --head SEQ:HASH. */
static int
load_head(const char *arg, struct audit_head *h, struct error *e)
{
	char buf[2 * AUDIT_HEAD_SLOT];
	ssize_t n;
	int fd;

	if (audit_head_arg_dec(arg, h, e) == 0)
		return 0;
	if ((fd = open(arg, O_RDONLY | O_CLOEXEC)) == -1)
		return error_set(e, ERR_BAD_REQUEST,
		    "--head %s: neither "
		    "SEQ:HASH nor a readable file: %s",
		    arg, strerror(errno));
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return error_set(
		    e, ERR_BAD_REQUEST, "--head %s: %s", arg, strerror(errno));
	if (audit_head_file_dec(buf, (size_t)n, h, NULL, e) == -1)
		return error_set(
		    e, ERR_BAD_REQUEST, "--head %s: %s", arg, e->msg);
	return 0;
}

/* A usage error says what was wrong, then the synopsis; exit 2. */
static int
audit_usage(const char *why, const char *arg)
{
	fprintf(stderr, "skillctl: %s", why);
	if (arg != NULL)
		fprintf(stderr, " \"%s\"", arg);
	fputs("\nusage: skillctl audit verify [--head FILE|SEQ:HASH] FILE...\n"
	      "(skillctl -h for the options and exit statuses)\n",
	    stderr);
	return CLI_EXIT_USAGE;
}

/* `skillctl audit verify [--head FILE|SEQ:HASH] FILE...`: the exit status. */
int
cli_audit(int argc, char **argv)
{
	struct audit_head head, *hp = NULL;
	struct audit_verify res;
	struct error e;
	int i = 1;

	if (argc < 1 || strcmp(argv[0], "verify") != 0)
		return audit_usage(
		    "audit wants the subcommand \"verify\"", NULL);
	if (i + 1 < argc && strcmp(argv[i], "--head") == 0) {
		if (load_head(argv[i + 1], &head, &e) == -1) {
			fprintf(stderr, "skillctl: %s\n", e.msg);
			return CLI_EXIT_USAGE;
		}
		hp = &head;
		i += 2;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	else if (i < argc && argv[i][0] == '-')
		return strcmp(argv[i], "--head") == 0
		           ? audit_usage("--head needs FILE or SEQ:HASH", NULL)
		           : audit_usage(
		                 "audit verify: unknown option", argv[i]);
	if (i >= argc)
		return audit_usage("audit verify needs a FILE", NULL);
	if (cli_audit_verify_files(
	        argv + i, (size_t)(argc - i), hp, stdout, &res) == -1) {
		printf("first bad event.sequence: %" PRIu64 "\n", res.bad_seq);
		return 1;
	}
	return CLI_EXIT_OK;
}
