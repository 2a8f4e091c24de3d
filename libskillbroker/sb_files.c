/*
 * sb_files.c: a session file put or got whole, in chunks, every reply
 * checked against the bytes sent or assembled (size, sha256, offsets),
 * so a caller never takes a partial or changed file for the file.
 */
#include "sb_int.h"

#include <errno.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"
#include "../proto/frame.h"

#define SB_SHA_HEX 64

/* One transfer: the connection, what it names, the running sha256. */
struct sb_xfer {
	struct sb_client *c;
	const char *session, *path;
	EVP_MD_CTX *ctx;
	struct sb_reply *rep; /* the last reply */
	uint64_t off;         /* the bytes done */
	uint64_t size;        /* get: the file's size, from the first reply */
	char sha[SB_SHA_HEX + 1];
};

static int
sb_xfer_init(struct sb_xfer *x, struct sb_client *c, const char *session,
    const char *path)
{
	memset(x, 0, sizeof(*x));
	x->c = c;
	x->session = session;
	x->path = path;
	if (session == NULL || path == NULL ||
	    client_path_check(path, strlen(path), NULL) == -1)
		return sb_fail(c, SB_ERR_USAGE,
		    "a session file needs a "
		    "session and a relative path");
	if ((x->ctx = EVP_MD_CTX_new()) == NULL ||
	    !EVP_DigestInit_ex(x->ctx, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(x->ctx);
		x->ctx = NULL;
		return sb_fail(c, SB_ERR_INTERNAL, "cannot compute a sha256");
	}
	return 0;
}

/* The transfer's end: the last reply to *last (or freed). */
static void
sb_xfer_done(struct sb_xfer *x, struct sb_reply **last)
{
	EVP_MD_CTX_free(x->ctx);
	if (last != NULL)
		*last = x->rep;
	else
		sb_reply_free(x->rep);
}

/* A reply that breaks the protocol's promises: SB_ERR_PROTOCOL. */
static int
sb_xfer_bad(struct sb_xfer *x, const char *why)
{
	return sb_fail(
	    x->c, SB_ERR_PROTOCOL, "malformed reply to %s: %s", x->path, why);
}

/* Send req, its reply in x->rep; -1 unless it is an ok answer of its
 * own type that names x's path, size_bytes and a sha256 in *size, sha. */
static int
sb_xfer_call(struct sb_xfer *x, struct sb_req *req, uint64_t *size, char *sha)
{
	const char *t = creq_type_name(req->r.type), *p, *s;

	sb_reply_free(x->rep);
	x->rep = NULL;
	if (sb_call(x->c, req, &x->rep) == -1)
		return -1;
	if (!sb_reply_ok(x->rep))
		return sb_fail(x->c, x->rep->err, "%s: %s", x->rep->errtype,
		    x->rep->errmsg);
	if (strcmp(x->rep->type, t) != 0)
		return sb_xfer_bad(x, "the answer is of another type");
	if ((p = sb_reply_str(x->rep, "path")) == NULL ||
	    strcmp(p, x->path) != 0)
		return sb_xfer_bad(x, "it names another path");
	if (sb_reply_uint(x->rep, "size_bytes", size) == -1 ||
	    *size > INT64_MAX)
		return sb_xfer_bad(x, "no size_bytes");
	if ((s = sb_reply_str(x->rep, "sha256")) == NULL ||
	    strlen(s) != SB_SHA_HEX || !hex_lower_n(s, SB_SHA_HEX))
		return sb_xfer_bad(x, "a bad sha256");
	memcpy(sha, s, SB_SHA_HEX + 1);
	return 0;
}

/* The sha256 of the bytes that went through equals the broker's. */
static int
sb_xfer_check_sha(struct sb_xfer *x)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	char hex[SB_SHA_HEX + 1];
	unsigned int len = 0;

	if (!EVP_DigestFinal_ex(x->ctx, md, &len) || len != 32)
		return sb_fail(
		    x->c, SB_ERR_INTERNAL, "cannot compute a sha256");
	hex_encode(md, len, hex);
	if (strcmp(hex, x->sha) != 0)
		return sb_fail(x->c, SB_ERR_PROTOCOL,
		    "%s: the broker has sha256 %s, but the bytes that went "
		    "through have %s",
		    x->path, x->sha, hex);
	return 0;
}

/* Fill buf with up to max bytes of src: fewer only at its end. */
static ssize_t
sb_fill(sb_source src, void *arg, uint8_t *buf, size_t max)
{
	size_t have = 0;
	ssize_t n;

	while (have < max) {
		n = src(arg, buf + have, max - have);
		if (n == 0)
			break;
		if (n < -1 || (n > 0 && (size_t)n > max - have)) {
			errno = EINVAL; /* a source that broke its contract */
			return -1;
		}
		if (n == -1)
			return -1;
		have += (size_t)n;
	}
	return (ssize_t)have;
}

int
sb_put_from(struct sb_client *c, const char *session, const char *path,
    sb_source src, void *arg, uint64_t *done, struct sb_reply **last)
{
	struct sb_req *req = NULL;
	struct sb_xfer x;
	uint64_t chunk = 0, size = 0;
	uint8_t *buf = NULL;
	ssize_t n;
	int ret = -1;

	if (last != NULL)
		*last = NULL;
	if (sb_xfer_init(&x, c, session, path) == -1)
		return -1;
	sb_enter(c);
	if (c->hello == NULL ||
	    sb_reply_uint(
	        c->hello, "capabilities.limits.put_file_bytes", &chunk) == -1 ||
	    chunk == 0) {
		sb_fail(c, SB_ERR_UNSUPPORTED,
		    "the broker serves no put_file (its hello has no "
		    "limits.put_file_bytes)");
		goto out;
	}
	/* a put_file's data is at most a default frame, whatever hello says */
	if (chunk > FRAME_MAX_DEFAULT)
		chunk = FRAME_MAX_DEFAULT;
	buf = xmalloc((size_t)chunk);
	req = sb_req_new("put_file");
	if (sb_req_session(req, session) == -1 || sb_req_path(req, path) == -1)
		goto usage;
	for (;;) {
		if ((n = sb_fill(src, arg, buf, (size_t)chunk)) == -1) {
			sb_fail(c, SB_ERR_IO, "reading what to put: %s",
			    strerror(errno));
			goto out;
		}
		if (n == 0 && x.off > 0)
			break; /* the last chunk was a whole one */
		if (n > 0 && !EVP_DigestUpdate(x.ctx, buf, (size_t)n)) {
			sb_fail(c, SB_ERR_INTERNAL, "cannot compute a sha256");
			goto out;
		}
		if (sb_req_data(req, buf, (size_t)n) == -1 ||
		    sb_req_offset(req, x.off) == -1)
			goto usage;
		if (sb_xfer_call(&x, req, &size, x.sha) == -1)
			goto out;
		x.off += (uint64_t)n;
		if (size != x.off) {
			sb_fail(c, SB_ERR_PROTOCOL,
			    "%s is %" PRIu64 " bytes after %" PRIu64
			    " were put: another writer, or a broker that "
			    "lost bytes",
			    path, size, x.off);
			goto out;
		}
		if ((size_t)n < chunk)
			break;
	}
	ret = sb_xfer_check_sha(&x);
	goto out;
usage:
	sb_fail(c, SB_ERR_USAGE, "a bad session or path");
out:
	if (done != NULL)
		*done = x.off;
	sb_req_free(req);
	free(buf);
	sb_xfer_done(&x, last);
	return sb_leave(c) ? -1 : ret;
}

/* One get_file answer follows the ones before: the same file, the data
 * at the offset asked, eof exactly at its end. */
static int
sb_get_check(struct sb_xfer *x, uint64_t size, const char *sha,
    const void **data, size_t *n, int *eof)
{
	uint64_t off;

	if (sb_reply_uint(x->rep, "offset", &off) == -1 ||
	    sb_reply_bool(x->rep, "eof", eof) == -1 ||
	    (*data = sb_reply_bin(x->rep, "data", n)) == NULL)
		return sb_xfer_bad(x, "no offset, eof or data");
	if (x->sha[0] == '\0') { /* the first chunk */
		x->size = size;
		memcpy(x->sha, sha, SB_SHA_HEX + 1);
	}
	if (size != x->size || strcmp(sha, x->sha) != 0)
		return sb_fail(x->c, SB_ERR_PROTOCOL,
		    "%s changed while it was read (its size or sha256 "
		    "differ from one chunk to the next)",
		    x->path);
	if (off != x->off || *n > size - off || *eof != (off + *n == size) ||
	    (!*eof && *n == 0))
		return sb_fail(x->c, SB_ERR_PROTOCOL,
		    "malformed reply to %s: the chunk at %" PRIu64
		    " (%zu bytes of %" PRIu64 ", eof %d) does not follow "
		    "%" PRIu64,
		    x->path, off, *n, size, *eof, x->off);
	return 0;
}

int
sb_get_to(struct sb_client *c, const char *session, const char *path,
    sb_sink sink, void *arg, struct sb_reply **last)
{
	struct sb_req *req = NULL;
	struct sb_xfer x;
	char sha[SB_SHA_HEX + 1];
	const void *data = NULL;
	uint64_t size = 0;
	size_t n = 0;
	int eof = 0, ret = -1;

	if (last != NULL)
		*last = NULL;
	if (sb_xfer_init(&x, c, session, path) == -1)
		return -1;
	sb_enter(c);
	req = sb_req_new("get_file");
	if (sb_req_session(req, session) == -1 ||
	    sb_req_path(req, path) == -1) {
		sb_fail(c, SB_ERR_USAGE, "a bad session or path");
		goto out;
	}
	while (!eof) {
		(void)sb_req_offset(req, x.off);
		if (sb_xfer_call(&x, req, &size, sha) == -1 ||
		    sb_get_check(&x, size, sha, &data, &n, &eof) == -1)
			goto out;
		if (n > 0 && !EVP_DigestUpdate(x.ctx, data, n)) {
			sb_fail(c, SB_ERR_INTERNAL, "cannot compute a sha256");
			goto out;
		}
		if (sink(arg, data, n) == -1) {
			sb_fail(c, SB_ERR_IO, "writing what came: %s",
			    strerror(errno));
			goto out;
		}
		x.off += n;
	}
	ret = sb_xfer_check_sha(&x);
out:
	sb_req_free(req);
	sb_xfer_done(&x, last);
	return sb_leave(c) ? -1 : ret;
}

/* sb_put's source: a buffer. */
struct sb_mem {
	const uint8_t *p;
	size_t len, off, max;
	uint8_t *buf;
};

static ssize_t
sb_mem_read(void *arg, void *buf, size_t max)
{
	struct sb_mem *m = arg;
	size_t n = m->len - m->off < max ? m->len - m->off : max;

	memcpy(buf, m->p + m->off, n);
	m->off += n;
	return (ssize_t)n;
}

int
sb_put(struct sb_client *c, const char *session, const char *path,
    const void *data, size_t len, struct sb_reply **last)
{
	struct sb_mem m = {.p = data, .len = len};

	if (data == NULL && len > 0)
		return sb_fail(c, SB_ERR_USAGE, "sb_put: no data");
	return sb_put_from(c, session, path, sb_mem_read, &m, NULL, last);
}

/* sb_get's sink: a buffer that grows to at most max bytes. */
static int
sb_mem_write(void *arg, const void *data, size_t len)
{
	struct sb_mem *m = arg;

	if (len > m->max - m->len) {
		errno = EFBIG;
		return -1;
	}
	m->buf = xreallocarray(m->buf, m->len + len + 1, 1);
	memcpy(m->buf + m->len, data, len);
	m->len += len;
	return 0;
}

int
sb_get(struct sb_client *c, const char *session, const char *path, size_t max,
    void **data, size_t *len)
{
	struct sb_mem m = {.max = max};
	int ret;

	*data = NULL;
	*len = 0;
	sb_enter(c); /* c is read after sb_get_to */
	ret = sb_get_to(c, session, path, sb_mem_write, &m, NULL);
	if (ret == -1 && c->err == SB_ERR_IO)
		sb_fail(c, SB_ERR_USAGE, "%s is over %zu bytes", path, max);
	if (sb_leave(c))
		ret = -1;
	if (ret == -1) {
		free(m.buf);
		return -1;
	}
	*data = m.buf != NULL ? m.buf : xmalloc(1);
	*len = m.len;
	return 0;
}
