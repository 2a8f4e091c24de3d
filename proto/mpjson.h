/* mpjson.h: msgpack objects to JSON values (jansson). */
#ifndef SB_MPJSON_H
#define SB_MPJSON_H

#include <jansson.h>
#include <msgpack.h>

/*
 * Convert o to a new JSON value. bin becomes a string when it is valid
 * UTF-8, else {"base64": "..."}; map keys must be strings.
 */
json_t *mp_to_json(const msgpack_object *o);

#endif
