/* mpjson.c: msgpack to JSON for skillctl --json and the audit log. */
#include "mpjson.h"

#include <openssl/evp.h>
#include <stdlib.h>

#include "../lib/util.h"
#include "../lib/xmalloc.h"

/* Binary data: a string when it is text, base64 otherwise. */
static json_t *
bin_to_json(const char *p, size_t len)
{
	json_t *obj;
	unsigned char *b64;
	size_t cap;

	if (utf8_valid(p, len))
		return json_stringn(p, len);
	cap = 4 * ((len + 2) / 3) + 1;
	b64 = xmalloc(cap);
	EVP_EncodeBlock(b64, (const unsigned char *)p, (int)len);
	obj = json_pack("{s:s}", "base64", (char *)b64);
	free(b64);
	return obj;
}

json_t *
mp_to_json(const msgpack_object *o)
{
	json_t *j;
	uint32_t i;

	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		return json_null();
	case MSGPACK_OBJECT_BOOLEAN:
		return json_boolean(o->via.boolean);
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		return json_integer(o->via.u64 > (uint64_t)INT64_MAX
		                        ? INT64_MAX
		                        : (json_int_t)o->via.u64);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		return json_integer(o->via.i64);
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		return json_real(o->via.f64);
	case MSGPACK_OBJECT_STR:
		return bin_to_json(o->via.str.ptr, o->via.str.size);
	case MSGPACK_OBJECT_BIN:
		return bin_to_json(o->via.bin.ptr, o->via.bin.size);
	case MSGPACK_OBJECT_ARRAY:
		j = json_array();
		for (i = 0; i < o->via.array.size; i++)
			json_array_append_new(
			    j, mp_to_json(&o->via.array.ptr[i]));
		return j;
	case MSGPACK_OBJECT_MAP:
		j = json_object();
		for (i = 0; i < o->via.map.size; i++) {
			const msgpack_object *k = &o->via.map.ptr[i].key;
			if (k->type != MSGPACK_OBJECT_STR)
				continue;
			json_object_setn_new(j, k->via.str.ptr, k->via.str.size,
			    mp_to_json(&o->via.map.ptr[i].val));
		}
		return j;
	default:
		return json_null();
	}
}
