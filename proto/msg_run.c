/*
 * msg_run.c: running a granted call: RUN and its answers RUN_STARTED and
 * RUN_EXITED (broker <-> master), and FILES, the list of what the call
 * wrote, which the worker sends the broker once the skill is gone.
 */
#include "msg.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

void
msg_run_enc(struct mp_enc *m, const struct msg_run *r)
{
	msg_begin(m, MSG_RUN);
	enc_kuint(m, "ref", r->ref);
	enc_kstr(m, "grant_id", r->grant_id);
	msg_end(m);
}

int
msg_run_dec(const struct mp_doc *d, struct msg_run *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "grant_id", NULL};

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_uint(d->root, "ref", 1, UINT64_MAX, &r->ref, e) ||
	    mp_str(d->root, "grant_id", 1, GRANT_ID_LEN, &r->grant_id, e))
		goto bad;
	if (!grant_id_valid(r->grant_id)) {
		error_set(e, ERR_BAD_REQUEST, "malformed grant id");
		goto bad;
	}
	return 0;
bad:
	msg_run_free(r);
	return -1;
}

void
msg_run_free(struct msg_run *r)
{
	free(r->grant_id);
	memset(r, 0, sizeof(*r));
}

void
msg_cancel_enc(struct mp_enc *m, const struct msg_cancel *c)
{
	msg_begin(m, MSG_CANCEL);
	enc_kstr(m, "grant_id", c->grant_id);
	msg_end(m);
}

int
msg_cancel_dec(const struct mp_doc *d, struct msg_cancel *c, struct error *e)
{
	static const char *const keys[] = {"t", "grant_id", NULL};

	memset(c, 0, sizeof(*c));
	if (mp_only_keys(d->root, keys, e) ||
	    mp_str(d->root, "grant_id", 1, GRANT_ID_LEN, &c->grant_id, e))
		goto bad;
	if (!grant_id_valid(c->grant_id)) {
		error_set(e, ERR_BAD_REQUEST, "malformed grant id");
		goto bad;
	}
	return 0;
bad:
	msg_cancel_free(c);
	return -1;
}

void
msg_cancel_free(struct msg_cancel *c)
{
	free(c->grant_id);
	memset(c, 0, sizeof(*c));
}

void
msg_run_started_enc(struct mp_enc *m, const struct msg_run_started *r)
{
	msg_begin(m, MSG_RUN_STARTED);
	enc_kuint(m, "ref", r->ref);
	enc_kint(m, "pid", r->pid);
	msg_end(m);
}

int
msg_run_started_dec(
    const struct mp_doc *d, struct msg_run_started *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "pid", NULL};

	memset(r, 0, sizeof(*r));
	return mp_only_keys(d->root, keys, e) ||
	               mp_uint(d->root, "ref", 1, UINT64_MAX, &r->ref, e) ||
	               mp_int(d->root, "pid", 1, 1, INT32_MAX, &r->pid, e)
	           ? -1
	           : 0;
}

void
msg_run_exited_enc(struct mp_enc *m, const struct msg_run_exited *r)
{
	msg_begin(m, MSG_RUN_EXITED);
	enc_kuint(m, "ref", r->ref);
	enc_kbool(m, "started", r->started);
	enc_kint(m, "exit_code", r->exit_code);
	enc_kint(m, "signal", r->signal);
	enc_kuint(m, "limit", r->limit);
	enc_kuint(m, "duration_ms", r->duration_ms);
	enc_kuint(m, "cpu_ms", r->cpu_ms);
	enc_kuint(m, "max_rss_kb", r->max_rss_kb);
	enc_kuint(m, "err", r->err);
	enc_kstr(m, "message", r->message ? r->message : "");
	msg_end(m);
}

int
msg_run_exited_dec(
    const struct mp_doc *d, struct msg_run_exited *r, struct error *e)
{
	static const char *const keys[] = {"t", "ref", "started", "exit_code",
	    "signal", "limit", "duration_ms", "cpu_ms", "max_rss_kb", "err",
	    "message", NULL};
	const msgpack_object *o = d->root;

	memset(r, 0, sizeof(*r));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "ref", 1, UINT64_MAX, &r->ref, e) ||
	    mp_bool(o, "started", 1, &r->started, e) ||
	    mp_int(o, "exit_code", 1, -1, 255, &r->exit_code, e) ||
	    mp_int(o, "signal", 1, 0, 128, &r->signal, e) ||
	    mp_uint(o, "limit", 1, LIMIT__COUNT - 1, &r->limit, e) ||
	    mp_uint(o, "duration_ms", 1, UINT64_MAX, &r->duration_ms, e) ||
	    mp_uint(o, "cpu_ms", 1, UINT64_MAX, &r->cpu_ms, e) ||
	    mp_uint(o, "max_rss_kb", 1, UINT64_MAX, &r->max_rss_kb, e) ||
	    mp_uint(o, "err", 1, ERR__COUNT - 1, &r->err, e) ||
	    mp_str(o, "message", 1, REASON_MAX_LEN, &r->message, e)) {
		msg_run_exited_free(r);
		return -1;
	}
	return 0;
}

void
msg_run_exited_free(struct msg_run_exited *r)
{
	free(r->message);
	memset(r, 0, sizeof(*r));
}

/*
 * How a call ended, in RUN_EXITED's terms: from what ran (x->started,
 * exit_code, signal, and limit when the wall clock ended it), what its
 * cgroup saw, and why the master failed it, if it did (fail).
 */
void
run_exited_settle(struct msg_run_exited *x, int oom, int pids_hit,
    enum err_type fail, const char *failmsg)
{
	static const char *const why[LIMIT__COUNT] = {"",
	    "the wall-clock timeout ended the skill",
	    "the memory limit ended the skill", "the process limit was reached",
	    "CPU time limit reached", "file size limit reached"};

	if (x->limit == LIMIT_NONE)
		x->limit = x->signal == SIGXCPU   ? LIMIT_CPU
		           : x->signal == SIGXFSZ ? LIMIT_FSIZE
		           : oom                  ? LIMIT_MEMORY
		           : pids_hit && (x->exit_code != 0 || x->signal != 0)
		               ? LIMIT_PIDS
		               : LIMIT_NONE;
	x->err = x->limit == LIMIT_NONE      ? ERR_NONE
	         : x->limit == LIMIT_TIMEOUT ? ERR_TIMEOUT
	                                     : ERR_RESOURCE_LIMIT;
	x->message = (char *)why[x->limit];
	if (fail != ERR_NONE || !x->started) {
		x->limit = LIMIT_NONE;
		x->err = fail != ERR_NONE ? fail : ERR_SANDBOX_FAILED;
		x->message = fail != ERR_NONE
		                 ? (char *)failmsg
		                 : "the worker exited during sandbox setup";
	}
}

void
msg_files_enc(struct mp_enc *m, const struct msg_files *f)
{
	size_t i;

	msg_begin(m, MSG_FILES);
	enc_kuint(m, "found", f->found);
	enc_kbool(m, "complete", f->complete);
	enc_key(m, "files");
	enc_array(m, f->nfiles);
	for (i = 0; i < f->nfiles; i++) {
		enc_map_open(m);
		enc_kstr(m, "path", f->files[i].path);
		enc_kuint(m, "size_bytes", f->files[i].size);
		enc_kstr(m, "sha256", f->files[i].sha256);
		enc_map_close(m);
	}
	msg_end(m);
}

/* One {path, size_bytes, sha256}: a path the skill sees, a hex digest. */
static int
written_dec(const msgpack_object *it, struct written *w, struct error *e)
{
	static const char *const keys[] = {
	    "path", "size_bytes", "sha256", NULL};
	size_t n;

	if (it->type != MSGPACK_OBJECT_MAP)
		return error_set(e, ERR_BAD_REQUEST, "a file is not a map");
	if (mp_only_keys(it, keys, e) ||
	    mp_str(it, "path", 1, PATH_MAX_LEN, &w->path, e) ||
	    mp_uint(it, "size_bytes", 1, UINT64_MAX, &w->size, e) ||
	    mp_str(it, "sha256", 1, 64, &w->sha256, e))
		return -1;
	/* No "." or ".." component, so none leads out of /work or /data. */
	if ((strncmp(w->path, "/work/", 6) != 0 &&
	        strncmp(w->path, "/data/", 6) != 0) ||
	    path_has_dot(w->path))
		return error_set(
		    e, ERR_BAD_REQUEST, "a file outside /work, /data");
	n = strlen(w->sha256); /* "" when the file was not hashed */
	if (n != 0 && (n != 64 || !hex_lower_n(w->sha256, 64)))
		return error_set(e, ERR_BAD_REQUEST, "a malformed sha256");
	return 0;
}

int
msg_files_dec(const struct mp_doc *d, struct msg_files *f, struct error *e)
{
	static const char *const keys[] = {
	    "t", "found", "complete", "files", NULL};
	const msgpack_object *o = d->root, *arr;
	uint32_t i;

	memset(f, 0, sizeof(*f));
	if (mp_only_keys(o, keys, e) ||
	    mp_uint(o, "found", 1, UINT64_MAX, &f->found, e) ||
	    mp_bool(o, "complete", 1, &f->complete, e))
		goto bad;
	arr = mp_get(o, "files");
	if (arr == NULL || arr->type != MSGPACK_OBJECT_ARRAY ||
	    arr->via.array.size > FILES_WRITTEN_MAX) {
		error_set(e, ERR_BAD_REQUEST,
		    "field \"files\" must be an array of at most %d",
		    FILES_WRITTEN_MAX);
		goto bad;
	}
	if (arr->via.array.size > f->found) {
		error_set(e, ERR_BAD_REQUEST,
		    "field \"files\" lists more than \"found\"");
		goto bad;
	}
	f->files = xcalloc(arr->via.array.size + 1, sizeof(*f->files));
	for (i = 0; i < arr->via.array.size; i++) {
		f->nfiles++;
		if (written_dec(&arr->via.array.ptr[i], &f->files[i], e))
			goto bad;
	}
	return 0;
bad:
	msg_files_free(f);
	return -1;
}

void
msg_files_free(struct msg_files *f)
{
	size_t i;

	for (i = 0; i < f->nfiles; i++) {
		free(f->files[i].path);
		free(f->files[i].sha256);
	}
	free(f->files);
	memset(f, 0, sizeof(*f));
}
