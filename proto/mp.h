/*
 * mp.h: strict msgpack decoding and small encoding helpers on msgpack-c.
 * A decoded document is one map, fully consumed, within depth and size
 * bounds, with unique string keys and valid UTF-8 everywhere.
 */
#ifndef SB_MP_H
#define SB_MP_H

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/error.h"
#include "../lib/util.h" /* strarr_free */

struct mp_limits {
	unsigned max_depth; /* nesting of maps/arrays, root map = 1 */
	size_t max_str;     /* bytes in any one str or bin */
	size_t max_elems;   /* entries in any one array or map */
	size_t max_key;     /* bytes in a map key */
};

extern const struct mp_limits mp_limits_default;

struct mp_doc {
	msgpack_unpacked up;
	const msgpack_object *root; /* always a map once decoded */
	int live;
};

int mp_decode(struct mp_doc *d, const uint8_t *buf, size_t len,
    const struct mp_limits *lim, struct error *e);
void mp_doc_free(struct mp_doc *d);
/*
 * A handler keeps the document it was given (a peer's, which the peer
 * frees once the handler returns): to owns it now, from is left empty.
 * from must point to a document that is not itself const.
 */
void mp_doc_take(struct mp_doc *to, const struct mp_doc *from);

/* Field accessors on a map. required=0 leaves *out untouched if absent. */
const msgpack_object *mp_get(const msgpack_object *map, const char *key);
int mp_only_keys(
    const msgpack_object *map, const char *const *allowed, struct error *e);
int mp_str(const msgpack_object *map, const char *key, int required,
    size_t maxlen, char **out, struct error *e);
int mp_uint(const msgpack_object *map, const char *key, int required,
    uint64_t max, uint64_t *out, struct error *e);
int mp_int(const msgpack_object *map, const char *key, int required,
    int64_t min, int64_t max, int64_t *out, struct error *e);
int mp_bool(const msgpack_object *map, const char *key, int required, int *out,
    struct error *e);
int mp_bin(const msgpack_object *map, const char *key, int required,
    size_t maxlen, uint8_t **out, size_t *outlen, struct error *e);
int mp_strarr(const msgpack_object *map, const char *key, int required,
    size_t maxn, size_t maxlen, char ***out, size_t *n, struct error *e);
/* An array of at most maxn unsigned integers, each at most max. */
int mp_uintarr(const msgpack_object *map, const char *key, int required,
    size_t maxn, uint64_t max, uint64_t **out, size_t *n, struct error *e);
/* A required keyword: its index in the NULL-ended names. */
int mp_keyword(const msgpack_object *map, const char *key,
    const char *const *names, int *out, struct error *e);
int mp_submap(const msgpack_object *map, const char *key, int required,
    const msgpack_object **out, struct error *e);
/* The required submap at key, as msgpack bytes of at most max (new). */
int mp_rawmap(const msgpack_object *map, const char *key, size_t max,
    uint8_t **out, size_t *len, struct error *e);

/*
 * Encoding: a growable buffer and packer; allocation failure is fatal.
 * Maps count their own entries: enc_map_open, then each entry starts
 * with enc_key (the enc_k* helpers do), then enc_map_close writes the
 * size. No caller counts a map by hand.
 */
#define MP_ENC_DEPTH 16

struct mp_enc {
	msgpack_sbuffer sb;
	msgpack_packer pk;
	size_t open[MP_ENC_DEPTH];    /* offset of each open map's header */
	uint32_t count[MP_ENC_DEPTH]; /* entries so far in each open map */
	int depth;
};

void enc_init(struct mp_enc *e);
void enc_free(struct mp_enc *e);
void enc_map_open(struct mp_enc *e);
void enc_map_close(struct mp_enc *e);
void enc_key(struct mp_enc *e, const char *k);
void enc_keyn(struct mp_enc *e, const char *k, size_t len);
int enc_complete(const struct mp_enc *e);
void enc_array(struct mp_enc *e, size_t n);
void enc_str(struct mp_enc *e, const char *s);
void enc_strn(struct mp_enc *e, const char *s, size_t len);
void enc_bin(struct mp_enc *e, const void *p, size_t len);
void enc_uint(struct mp_enc *e, uint64_t v);
void enc_int(struct mp_enc *e, int64_t v);
void enc_bool(struct mp_enc *e, int v);
void enc_nil(struct mp_enc *e);
void enc_obj(struct mp_enc *e, const msgpack_object *o);
void enc_raw(struct mp_enc *e, const void *p, size_t len);
void enc_kstr(struct mp_enc *e, const char *k, const char *v);
void enc_kuint(struct mp_enc *e, const char *k, uint64_t v);
void enc_kint(struct mp_enc *e, const char *k, int64_t v);
void enc_kbool(struct mp_enc *e, const char *k, int v);
void enc_kbin(struct mp_enc *e, const char *k, const void *p, size_t len);
void enc_kstrarr(struct mp_enc *e, const char *k, char *const *v, size_t n);
void enc_kuintstr(struct mp_enc *e, const char *k, uint64_t v);

#endif
