/*
 * policyd_rate.c: a fixed table of token buckets. Tokens are kept in
 * thousandths so refill is exact integer arithmetic; when the table is
 * full the least recently used bucket is reused.
 */
#include <string.h>

#include "../proto/msg.h"
#include "policyd_rate.h"

struct bucket {
	uint64_t uid;
	char skill[NAME_MAX_LEN + 1];
	uint64_t milli_tokens, last_ms;
	int used;
};

static struct bucket buckets[RATE_BUCKETS];

void
rate_reset(void)
{
	memset(buckets, 0, sizeof(buckets));
}

static struct bucket *
bucket_get(uint64_t uid, const char *skill, uint64_t burst, uint64_t now_ms)
{
	struct bucket *b, *oldest = &buckets[0];
	size_t i;

	for (i = 0; i < RATE_BUCKETS; i++) {
		b = &buckets[i];
		if (b->used && b->uid == uid && strcmp(b->skill, skill) == 0)
			return b;
		if (!b->used || (oldest->used && b->last_ms < oldest->last_ms))
			oldest = b;
	}
	b = oldest;
	memset(b, 0, sizeof(*b));
	b->used = 1;
	b->uid = uid;
	strncpy(b->skill, skill, NAME_MAX_LEN);
	b->milli_tokens = burst * 1000;
	b->last_ms = now_ms;
	return b;
}

int
rate_take(uint64_t uid, const char *skill, uint64_t per_minute, uint64_t burst,
    uint64_t now_ms)
{
	struct bucket *b;
	uint64_t elapsed, refill, cap = burst * 1000;

	if (per_minute == 0)
		return 1;
	b = bucket_get(uid, skill, burst, now_ms);
	elapsed = now_ms > b->last_ms ? now_ms - b->last_ms : 0;
	/* per_minute tokens per 60000 ms, in thousandths of a token */
	refill = elapsed * per_minute / 60;
	b->milli_tokens =
	    b->milli_tokens + refill > cap ? cap : b->milli_tokens + refill;
	b->last_ms = now_ms;
	if (b->milli_tokens < 1000)
		return 0;
	b->milli_tokens -= 1000;
	return 1;
}
