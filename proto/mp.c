/* mp.c: strict msgpack decoder and encoder helpers. */
#include "mp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/log.h"
#include "../lib/util.h"
#include "../lib/xmalloc.h"

/* msgpack-c's parser stack holds 32 levels; nothing nests deeper. */
#define MP_MAX_NEST 32

const struct mp_limits mp_limits_default = {
    .max_depth = 6,
    .max_str = 1024 * 1024,
    .max_elems = 4096,
    .max_key = 64,
};

/* Maps up to this size check duplicate keys pairwise, larger by sorting. */
/* Up to this many keys, each is compared with those before it (at most
 * 2016 comparisons, each a length check first); more are sorted. */
#define MP_SMALL_MAP 64

static int
key_eq(const msgpack_object *a, const msgpack_object *b)
{
	return a->via.str.size == b->via.str.size &&
	       memcmp(a->via.str.ptr, b->via.str.ptr, a->via.str.size) == 0;
}

static int
dup_key(const msgpack_object *k, struct error *e)
{
	return error_set(e, ERR_BAD_REQUEST, "duplicate key \"%.*s\"",
	    (int)k->via.str.size, k->via.str.ptr);
}

static int
key_cmp(const void *a, const void *b)
{
	const msgpack_object *x = *(const msgpack_object *const *)a;
	const msgpack_object *y = *(const msgpack_object *const *)b;
	size_t n = x->via.str.size < y->via.str.size ? x->via.str.size
	                                             : y->via.str.size;
	int r = memcmp(x->via.str.ptr, y->via.str.ptr, n);

	if (r != 0)
		return r;
	return x->via.str.size < y->via.str.size
	           ? -1
	           : x->via.str.size > y->via.str.size;
}

/* O(n log n) duplicate-key check, so a big map cannot cost n^2. */
static int
mp_unique_keys(const msgpack_object *o, struct error *e)
{
	const msgpack_object **keys;
	uint32_t i;
	int r = 0;

	keys = xcalloc(o->via.map.size, sizeof(*keys));
	for (i = 0; i < o->via.map.size; i++)
		keys[i] = &o->via.map.ptr[i].key;
	qsort(keys, o->via.map.size, sizeof(*keys), key_cmp);
	for (i = 1; i < o->via.map.size && r == 0; i++)
		if (key_eq(keys[i - 1], keys[i]))
			r = dup_key(keys[i], e);
	free(keys);
	return r;
}

/* Walk one object, enforcing types, bounds, UTF-8 and unique keys. */
static int
mp_check(const msgpack_object *o, unsigned depth, const struct mp_limits *lim,
    struct error *e)
{
	uint32_t i, j;

	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
	case MSGPACK_OBJECT_BOOLEAN:
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return 0;
	case MSGPACK_OBJECT_STR:
		if (o->via.str.size > lim->max_str)
			return error_set(e, ERR_BAD_REQUEST, "string too long");
		if (!utf8_valid(o->via.str.ptr, o->via.str.size))
			return error_set(
			    e, ERR_BAD_REQUEST, "invalid UTF-8, or a NUL byte");
		return 0;
	case MSGPACK_OBJECT_BIN:
		if (o->via.bin.size > lim->max_str)
			return error_set(e, ERR_BAD_REQUEST, "binary too long");
		return 0;
	case MSGPACK_OBJECT_ARRAY:
		if (depth >= lim->max_depth)
			return error_set(
			    e, ERR_BAD_REQUEST, "nesting too deep");
		if (o->via.array.size > lim->max_elems)
			return error_set(e, ERR_BAD_REQUEST, "array too long");
		for (i = 0; i < o->via.array.size; i++)
			if (mp_check(&o->via.array.ptr[i], depth + 1, lim, e))
				return -1;
		return 0;
	case MSGPACK_OBJECT_MAP:
		if (depth >= lim->max_depth)
			return error_set(
			    e, ERR_BAD_REQUEST, "nesting too deep");
		if (o->via.map.size > lim->max_elems)
			return error_set(e, ERR_BAD_REQUEST, "map too large");
		for (i = 0; i < o->via.map.size; i++) {
			const msgpack_object *k = &o->via.map.ptr[i].key;
			if (k->type != MSGPACK_OBJECT_STR ||
			    k->via.str.size == 0 ||
			    k->via.str.size > lim->max_key ||
			    !utf8_valid(k->via.str.ptr, k->via.str.size))
				return error_set(e, ERR_BAD_REQUEST,
				    "map key must be a short string");
			if (o->via.map.size <= MP_SMALL_MAP)
				for (j = 0; j < i; j++)
					if (key_eq(&o->via.map.ptr[j].key, k))
						return dup_key(k, e);
			if (mp_check(&o->via.map.ptr[i].val, depth + 1, lim, e))
				return -1;
		}
		return o->via.map.size > MP_SMALL_MAP ? mp_unique_keys(o, e)
		                                      : 0;
	default:
		return error_set(e, ERR_BAD_REQUEST,
		    "unsupported msgpack type (float or ext)");
	}
}

/* Read an n-byte big-endian length at p. */
static uint64_t
mp_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	while (n-- > 0)
		v = (v << 8) | *p++;
	return v;
}

/*
 * msgpack-c allocates a container's slots as soon as it reads the
 * header, so five bytes could ask for gigabytes. Walk the raw bytes
 * first and check every declared length against the limits and
 * against the bytes that are left.
 */
static int
mp_prescan(
    const uint8_t *p, size_t len, const struct mp_limits *lim, struct error *e)
{
	/* payload bytes of float32/64, uint8..64, int8..64 (0xca..0xd3) */
	static const uint8_t fixed[10] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
	uint64_t left[MP_MAX_NEST + 1], n, skip;
	size_t off = 0, hl;
	unsigned sp = 1;
	uint8_t b;
	int is_map;

	left[0] = 1; /* the root object */
	while (sp > 0) {
		if (left[sp - 1] == 0) {
			sp--;
			continue;
		}
		left[sp - 1]--;
		if (off >= len)
			return error_set(
			    e, ERR_BAD_REQUEST, "truncated msgpack");
		b = p[off++];
		hl = skip = 0;
		n = 0;
		is_map = -1;
		if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 ||
		    b == 0xc3)
			continue;
		if (b <= 0x8f) {
			is_map = 1;
			n = b & 0x0f;
		} else if (b <= 0x9f) {
			is_map = 0;
			n = b & 0x0f;
		} else if (b <= 0xbf)
			skip = b & 0x1f;
		else if (b == 0xc1)
			return error_set(
			    e, ERR_BAD_REQUEST, "malformed msgpack");
		else if (b >= 0xc4 && b <= 0xc6) /* bin 8/16/32 */
			hl = (size_t)1 << (b - 0xc4);
		else if (b >= 0xc7 && b <= 0xc9) { /* ext: len, type, data */
			hl = (size_t)1 << (b - 0xc7);
			skip = 1;
		} else if (b >= 0xca && b <= 0xd3) /* float, uint, int */
			skip = fixed[b - 0xca];
		else if (b >= 0xd4 && b <= 0xd8) /* fixext: type, data */
			skip = 1 + ((uint64_t)1 << (b - 0xd4));
		else if (b >= 0xd9 && b <= 0xdb) /* str 8/16/32 */
			hl = (size_t)1 << (b - 0xd9);
		else if (b == 0xdc || b == 0xdd) { /* array 16/32 */
			is_map = 0;
			hl = b == 0xdc ? 2 : 4;
		} else { /* map 16/32 */
			is_map = 1;
			hl = b == 0xde ? 2 : 4;
		}
		if (hl > len - off)
			return error_set(
			    e, ERR_BAD_REQUEST, "truncated msgpack");
		if (is_map == -1) {
			skip += mp_be(p + off, hl);
			off += hl;
			if (skip > len - off)
				return error_set(
				    e, ERR_BAD_REQUEST, "truncated msgpack");
			off += (size_t)skip;
			continue;
		}
		if (hl > 0)
			n = mp_be(p + off, hl);
		off += hl;
		if (sp > lim->max_depth || sp > MP_MAX_NEST)
			return error_set(
			    e, ERR_BAD_REQUEST, "nesting too deep");
		if (n > lim->max_elems)
			return error_set(e, ERR_BAD_REQUEST, "%s",
			    is_map ? "map too large" : "array too long");
		if (is_map)
			n *= 2;
		/* Every item takes at least one byte. */
		if (n > len - off)
			return error_set(
			    e, ERR_BAD_REQUEST, "truncated msgpack");
		left[sp++] = n;
	}
	return 0;
}

/*
 * A daemon's roles keep the zones of freed documents and the buffers of
 * freed encoders for the next message (each is a large allocation, after
 * which glibc consolidates its free lists). The client library keeps
 * none: its connections may be used by different threads.
 */
#define MP_SLOTS 4
#ifdef SB_LIBRARY
#define MP_KEEPS 0
#else
#define MP_KEEPS 1
#endif

/*
 * What is kept is poisoned under AddressSanitizer until it is taken
 * again, so a use of a freed document or encoder still fails there
 * rather than reading the next message.
 */
#if defined(__SANITIZE_ADDRESS__)
#define MP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MP_ASAN 1
#endif
#endif
#ifdef MP_ASAN
#include <sanitizer/asan_interface.h>
#define MP_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define MP_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define MP_POISON(p, n) ((void)(p), (void)(n))
#define MP_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* Zones, cleared to their first chunk. */
static msgpack_zone *mp_zones[MP_SLOTS];
static size_t mp_nzones;

/* A kept zone, or a new one. */
static msgpack_zone *
mp_zone_get(void)
{
	msgpack_zone *z;

	if (mp_nzones > 0) {
		z = mp_zones[--mp_nzones];
		MP_UNPOISON(z->chunk_list.ptr, z->chunk_list.free);
		return z;
	}
	if ((z = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE)) == NULL)
		fatalx("msgpack_zone_new failed");
	return z;
}

/* A freed document's zone: kept if there is room, else freed. */
static void
mp_zone_put(msgpack_zone *z)
{
	if (!MP_KEEPS || mp_nzones == MP_SLOTS) {
		msgpack_zone_free(z);
		return;
	}
	msgpack_zone_clear(z); /* frees every chunk but the first */
	MP_POISON(z->chunk_list.ptr, z->chunk_list.free);
	mp_zones[mp_nzones++] = z;
}

int
mp_decode(struct mp_doc *d, const uint8_t *buf, size_t len,
    const struct mp_limits *lim, struct error *e)
{
	size_t off = 0;
	msgpack_unpack_return r;
	char *copy;

	memset(d, 0, sizeof(*d));
	if (lim == NULL)
		lim = &mp_limits_default;
	if (len == 0)
		return error_set(e, ERR_BAD_REQUEST, "empty message");
	if (mp_prescan(buf, len, lim, e) == -1)
		return -1;
	d->up.zone = mp_zone_get();
	d->live = 1;
	/*
	 * msgpack-c points str and bin objects into the input buffer, which
	 * callers reuse (chan_next compacts its read buffer): decode a
	 * private copy in the document's zone.
	 */
	if ((copy = msgpack_zone_malloc_no_align(d->up.zone, len)) == NULL)
		fatalx("msgpack_zone_malloc failed");
	memcpy(copy, buf, len);
	/* (msgpack-c calls this one obsolete; the newer API makes a zone
	 * of its own for every message) */
	r = msgpack_unpack(copy, len, &off, d->up.zone, &d->up.data);
	if (r == MSGPACK_UNPACK_NOMEM_ERROR) /* counts were bounded above */
		fatalx("msgpack_unpack: out of memory");
	if (r == MSGPACK_UNPACK_EXTRA_BYTES) {
		mp_doc_free(d);
		return error_set(e, ERR_BAD_REQUEST,
		    "%zu trailing bytes after message", len - off);
	}
	if (r != MSGPACK_UNPACK_SUCCESS) {
		mp_doc_free(d);
		return error_set(e, ERR_BAD_REQUEST, "%s",
		    r == MSGPACK_UNPACK_CONTINUE ? "truncated msgpack"
		                                 : "malformed msgpack");
	}
	if (d->up.data.type != MSGPACK_OBJECT_MAP) {
		mp_doc_free(d);
		return error_set(e, ERR_BAD_REQUEST, "message is not a map");
	}
	if (mp_check(&d->up.data, 0, lim, e) == -1) {
		mp_doc_free(d);
		return -1;
	}
	d->root = &d->up.data;
	return 0;
}

/* The document moves; from is left as mp_doc_free leaves one. */
void
mp_doc_take(struct mp_doc *to, const struct mp_doc *from)
{
	struct mp_doc *f = (struct mp_doc *)from; /* the peer's own */

	*to = *f;
	if (to->root != NULL)
		to->root = &to->up.data;
	f->live = 0;
	f->root = NULL;
}

void
mp_doc_free(struct mp_doc *d)
{
	if (d->live) /* a live document has its zone */
		mp_zone_put(d->up.zone);
	d->up.zone = NULL;
	d->live = 0;
	d->root = NULL;
}

const msgpack_object *
mp_get(const msgpack_object *map, const char *key)
{
	size_t klen = strlen(key);
	uint32_t i;

	if (map == NULL || map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
		    memcmp(k->via.str.ptr, key, klen) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

/* Reject any key not listed: nothing in a message goes unread. */
int
mp_only_keys(
    const msgpack_object *map, const char *const *allowed, struct error *e)
{
	uint32_t i;
	size_t j;

	for (i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		int found = 0;
		/* strncmp stops at an allowed name's end; the NUL after
		 * the key's length says the lengths are equal (mp_check
		 * took keys of one byte or more, none of them NUL) */
		for (j = 0; allowed[j] != NULL && !found; j++)
			found = allowed[j][0] == k->via.str.ptr[0] &&
			        strncmp(allowed[j], k->via.str.ptr,
			            k->via.str.size) == 0 &&
			        allowed[j][k->via.str.size] == '\0';
		if (!found)
			return error_set(e, ERR_BAD_REQUEST,
			    "unknown field \"%.*s\"", (int)k->via.str.size,
			    k->via.str.ptr);
	}
	return 0;
}

/* Look up key; -1 with an error if required and absent, 1 if absent. */
static int
mp_field(const msgpack_object *map, const char *key, int required,
    const msgpack_object **out, struct error *e)
{
	*out = mp_get(map, key);
	if (*out == NULL || (*out)->type == MSGPACK_OBJECT_NIL) {
		*out = NULL;
		if (required)
			return error_set(
			    e, ERR_BAD_REQUEST, "missing field \"%s\"", key);
		return 1;
	}
	return 0;
}

int
mp_str(const msgpack_object *map, const char *key, int required, size_t maxlen,
    char **out, struct error *e)
{
	const msgpack_object *o;
	int r;

	if ((r = mp_field(map, key, required, &o, e)) != 0)
		return r == 1 ? 0 : -1;
	if (o->type != MSGPACK_OBJECT_STR)
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" must be a string", key);
	if (o->via.str.size > maxlen)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" longer than %zu bytes", key, maxlen);
	if (!utf8_valid(o->via.str.ptr, o->via.str.size))
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" is not valid UTF-8", key);
	free(*out);
	*out = xstrndup(o->via.str.ptr, o->via.str.size);
	return 0;
}

int
mp_uint(const msgpack_object *map, const char *key, int required, uint64_t max,
    uint64_t *out, struct error *e)
{
	const msgpack_object *o;
	int r;

	if ((r = mp_field(map, key, required, &o, e)) != 0)
		return r == 1 ? 0 : -1;
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" must be a non-negative integer", key);
	if (o->via.u64 > max)
		return error_set(e, ERR_BAD_REQUEST, "field \"%s\" above %llu",
		    key, (unsigned long long)max);
	*out = o->via.u64;
	return 0;
}

int
mp_int(const msgpack_object *map, const char *key, int required, int64_t min,
    int64_t max, int64_t *out, struct error *e)
{
	const msgpack_object *o;
	int64_t v;
	int r;

	if ((r = mp_field(map, key, required, &o, e)) != 0)
		return r == 1 ? 0 : -1;
	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		if (o->via.u64 > (uint64_t)INT64_MAX)
			return error_set(e, ERR_BAD_REQUEST,
			    "field \"%s\" out of range", key);
		v = (int64_t)o->via.u64;
	} else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
		v = o->via.i64;
	else
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" must be an integer", key);
	if (v < min || v > max)
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" out of range", key);
	*out = v;
	return 0;
}

int
mp_bool(const msgpack_object *map, const char *key, int required, int *out,
    struct error *e)
{
	const msgpack_object *o;
	int r;

	if ((r = mp_field(map, key, required, &o, e)) != 0)
		return r == 1 ? 0 : -1;
	if (o->type != MSGPACK_OBJECT_BOOLEAN)
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" must be a boolean", key);
	*out = o->via.boolean ? 1 : 0;
	return 0;
}

/* Binary payload; a str is accepted too, for clients without bin. */
int
mp_bin(const msgpack_object *map, const char *key, int required, size_t maxlen,
    uint8_t **out, size_t *outlen, struct error *e)
{
	const msgpack_object *o;
	const char *p;
	size_t len;
	int r;

	if ((r = mp_field(map, key, required, &o, e)) != 0)
		return r == 1 ? 0 : -1;
	if (o->type == MSGPACK_OBJECT_BIN) {
		p = o->via.bin.ptr;
		len = o->via.bin.size;
	} else if (o->type == MSGPACK_OBJECT_STR) {
		p = o->via.str.ptr;
		len = o->via.str.size;
	} else
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" must be binary", key);
	if (len > maxlen)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" longer than %zu bytes", key, maxlen);
	free(*out);
	*out = xmalloc(len + 1);
	memcpy(*out, p, len);
	(*out)[len] = 0;
	*outlen = len;
	return 0;
}

int
mp_strarr(const msgpack_object *map, const char *key, int required, size_t maxn,
    size_t maxlen, char ***out, size_t *n, struct error *e)
{
	const msgpack_object *o, *it;
	char **v;
	uint32_t i;
	int r;

	if ((r = mp_field(map, key, required, &o, e)) != 0)
		return r == 1 ? 0 : -1;
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" must be an array of strings", key);
	if (o->via.array.size > maxn)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" has more than %zu items", key, maxn);
	for (i = 0; i < o->via.array.size; i++) {
		it = &o->via.array.ptr[i];
		if (it->type != MSGPACK_OBJECT_STR)
			return error_set(e, ERR_BAD_REQUEST,
			    "field \"%s\" must be an array of strings", key);
		if (it->via.str.size > maxlen)
			return error_set(e, ERR_BAD_REQUEST,
			    "an item of \"%s\" is longer than %zu bytes", key,
			    maxlen);
		if (!utf8_valid(it->via.str.ptr, it->via.str.size))
			return error_set(e, ERR_BAD_REQUEST,
			    "an item of \"%s\" is not valid UTF-8", key);
	}
	v = xcalloc(o->via.array.size + 1, sizeof(*v));
	for (i = 0; i < o->via.array.size; i++)
		v[i] = xstrndup(o->via.array.ptr[i].via.str.ptr,
		    o->via.array.ptr[i].via.str.size);
	strarr_free(*out, *n);
	*out = v;
	*n = o->via.array.size;
	return 0;
}

int
mp_uintarr(const msgpack_object *map, const char *key, int required,
    size_t maxn, uint64_t max, uint64_t **out, size_t *n, struct error *e)
{
	const msgpack_object *o, *it;
	uint64_t *v;
	uint32_t i;
	int r;

	if ((r = mp_field(map, key, required, &o, e)) != 0)
		return r == 1 ? 0 : -1;
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" must be an array of integers", key);
	if (o->via.array.size > maxn)
		return error_set(e, ERR_BAD_REQUEST,
		    "field \"%s\" has more than %zu items", key, maxn);
	for (i = 0; i < o->via.array.size; i++) {
		it = &o->via.array.ptr[i];
		if (it->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
		    it->via.u64 > max)
			return error_set(e, ERR_BAD_REQUEST,
			    "an item of \"%s\" is not an integer in 0..%llu",
			    key, (unsigned long long)max);
	}
	v = xcalloc(o->via.array.size + 1, sizeof(*v));
	for (i = 0; i < o->via.array.size; i++)
		v[i] = o->via.array.ptr[i].via.u64;
	free(*out);
	*out = v;
	*n = o->via.array.size;
	return 0;
}

int
mp_keyword(const msgpack_object *map, const char *key, const char *const *names,
    int *out, struct error *e)
{
	char *s = NULL;
	int i;

	if (mp_str(map, key, 1, 32, &s, e) == -1)
		return -1;
	for (i = 0; names[i] != NULL && strcmp(names[i], s) != 0; i++)
		;
	*out = names[i] != NULL ? i : -1;
	free(s);
	if (*out < 0)
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\": unknown keyword", key);
	return 0;
}

int
mp_submap(const msgpack_object *map, const char *key, int required,
    const msgpack_object **out, struct error *e)
{
	const msgpack_object *o;
	int r;

	if ((r = mp_field(map, key, required, &o, e)) != 0)
		return r == 1 ? 0 : -1;
	if (o->type != MSGPACK_OBJECT_MAP)
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" must be a map", key);
	*out = o;
	return 0;
}

/* A submap kept as its own msgpack bytes, to pass it on as it is. */
int
mp_rawmap(const msgpack_object *map, const char *key, size_t max, uint8_t **out,
    size_t *len, struct error *e)
{
	const msgpack_object *o = NULL;
	struct mp_enc m;

	if (mp_submap(map, key, 1, &o, e) == -1)
		return -1;
	/* The scratch copy is bounded by the message it comes from. */
	enc_init(&m);
	enc_obj(&m, o);
	if (m.sb.size > max) {
		enc_free(&m);
		return error_set(
		    e, ERR_BAD_REQUEST, "field \"%s\" too large", key);
	}
	*out = xmalloc(m.sb.size);
	memcpy(*out, m.sb.data, m.sb.size);
	*len = m.sb.size;
	enc_free(&m);
	return 0;
}

/* Encoding. msgpack-c only fails on allocation, which is fatal here. */
#define ENC(x)                                                                 \
	do {                                                                   \
		if ((x) != 0)                                                  \
			fatalx("msgpack encode failed");                       \
	} while (0)

/* A counted map's header is reserved at its widest (map32), then shrunk. */
#define MAP32_HDR 5

/* Encoders' buffers (above mp_decode): one that grew past this is freed. */
#define ENC_KEEP_MAX (64 * 1024)
static struct {
	char *data;
	size_t alloc;
} enc_kept[MP_SLOTS];
static size_t enc_nkept;

void
enc_init(struct mp_enc *e)
{
	memset(e, 0, sizeof(*e));
	msgpack_sbuffer_init(&e->sb);
	if (enc_nkept > 0) {
		enc_nkept--;
		e->sb.data = enc_kept[enc_nkept].data;
		e->sb.alloc = enc_kept[enc_nkept].alloc;
		MP_UNPOISON(e->sb.data, e->sb.alloc);
	}
	msgpack_packer_init(&e->pk, &e->sb, msgpack_sbuffer_write);
}

void
enc_free(struct mp_enc *e)
{
	if (e->sb.data != NULL && e->sb.alloc <= ENC_KEEP_MAX && MP_KEEPS &&
	    enc_nkept < MP_SLOTS) {
		enc_kept[enc_nkept].data = e->sb.data;
		enc_kept[enc_nkept].alloc = e->sb.alloc;
		enc_nkept++;
		MP_POISON(e->sb.data, e->sb.alloc);
	} else
		msgpack_sbuffer_destroy(&e->sb);
	e->sb.data = NULL;
	e->sb.size = e->sb.alloc = 0;
}

/* Open a map whose entries enc_key counts; enc_map_close writes the size. */
void
enc_map_open(struct mp_enc *e)
{
	static const char hdr[MAP32_HDR] = {(char)0xdf, 0, 0, 0, 0};

	if (e->depth == MP_ENC_DEPTH)
		fatalx("maps nested deeper than %d", MP_ENC_DEPTH);
	e->open[e->depth] = e->sb.size;
	e->count[e->depth++] = 0;
	ENC(msgpack_sbuffer_write(&e->sb, hdr, sizeof(hdr)));
}

/* Write the open map's size in the smallest header that holds it. */
void
enc_map_close(struct mp_enc *e)
{
	size_t off, body, hlen;
	uint32_t n;
	uint8_t *p;

	if (e->depth == 0)
		fatalx("no open map to close");
	off = e->open[--e->depth];
	n = e->count[e->depth];
	p = (uint8_t *)e->sb.data + off;
	body = e->sb.size - off - MAP32_HDR;
	hlen = n < 16 ? 1 : n <= UINT16_MAX ? 3 : MAP32_HDR;
	if (hlen == 1)
		p[0] = (uint8_t)(0x80 | n);
	else if (hlen == 3) {
		p[0] = 0xde;
		p[1] = (uint8_t)(n >> 8);
		p[2] = (uint8_t)n;
	} else {
		p[1] = (uint8_t)(n >> 24);
		p[2] = (uint8_t)(n >> 16);
		p[3] = (uint8_t)(n >> 8);
		p[4] = (uint8_t)n;
	}
	if (hlen < MAP32_HDR) {
		memmove(p + hlen, p + MAP32_HDR, body);
		e->sb.size -= MAP32_HDR - hlen;
	}
}

/*
 * A key of the innermost open map: one more entry in it. (Outside any
 * open map nothing is counted: tests write maps with chosen counts.)
 */
void
enc_keyn(struct mp_enc *e, const char *k, size_t len)
{
	if (e->depth > 0 && e->count[e->depth - 1]++ == UINT32_MAX)
		fatalx("map too large");
	enc_strn(e, k, len);
}

void
enc_key(struct mp_enc *e, const char *k)
{
	enc_keyn(e, k, strlen(k));
}

/* 1 when every map opened was closed: the message is whole. */
int
enc_complete(const struct mp_enc *e)
{
	return e->depth == 0;
}

void
enc_array(struct mp_enc *e, size_t n)
{
	ENC(msgpack_pack_array(&e->pk, n));
}
void
enc_uint(struct mp_enc *e, uint64_t v)
{
	ENC(msgpack_pack_uint64(&e->pk, v));
}
void
enc_int(struct mp_enc *e, int64_t v)
{
	ENC(msgpack_pack_int64(&e->pk, v));
}
void
enc_nil(struct mp_enc *e)
{
	ENC(msgpack_pack_nil(&e->pk));
}
void
enc_obj(struct mp_enc *e, const msgpack_object *o)
{
	ENC(msgpack_pack_object(&e->pk, *o));
}

/* Bytes that already are one encoded msgpack object. */
void
enc_raw(struct mp_enc *e, const void *p, size_t len)
{
	ENC(msgpack_sbuffer_write(&e->sb, p, len));
}

void
enc_bool(struct mp_enc *e, int v)
{
	ENC(v ? msgpack_pack_true(&e->pk) : msgpack_pack_false(&e->pk));
}

void
enc_strn(struct mp_enc *e, const char *s, size_t len)
{
	ENC(msgpack_pack_str(&e->pk, len));
	ENC(msgpack_pack_str_body(&e->pk, s, len));
}

void
enc_str(struct mp_enc *e, const char *s)
{
	enc_strn(e, s ? s : "", s ? strlen(s) : 0);
}

void
enc_bin(struct mp_enc *e, const void *p, size_t len)
{
	ENC(msgpack_pack_bin(&e->pk, len));
	ENC(msgpack_pack_bin_body(&e->pk, p, len));
}

void
enc_kstr(struct mp_enc *e, const char *k, const char *v)
{
	enc_key(e, k);
	enc_str(e, v);
}
void
enc_kuint(struct mp_enc *e, const char *k, uint64_t v)
{
	enc_key(e, k);
	enc_uint(e, v);
}
void
enc_kint(struct mp_enc *e, const char *k, int64_t v)
{
	enc_key(e, k);
	enc_int(e, v);
}
void
enc_kbool(struct mp_enc *e, const char *k, int v)
{
	enc_key(e, k);
	enc_bool(e, v);
}
void
enc_kbin(struct mp_enc *e, const char *k, const void *p, size_t len)
{
	enc_key(e, k);
	enc_bin(e, p, len);
}

/* An id as ECS wants it: a decimal string (keyword), not a number. */
void
enc_kuintstr(struct mp_enc *e, const char *k, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	enc_kstr(e, k, buf);
}

void
enc_kstrarr(struct mp_enc *e, const char *k, char *const *v, size_t n)
{
	size_t i;

	enc_key(e, k);
	enc_array(e, n);
	for (i = 0; i < n; i++)
		enc_str(e, v[i]);
}
