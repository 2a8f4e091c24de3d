/*
 * testenc.h: a map header with a count the test chooses, for inputs the
 * daemon's own encoder would never write (wrong counts, odd shapes).
 */
#ifndef SB_TESTENC_H
#define SB_TESTENC_H

#include "../../proto/mp.h"

static inline void
enc_map(struct mp_enc *e, size_t n)
{
	if (msgpack_pack_map(&e->pk, n) != 0)
		abort();
}

#endif
