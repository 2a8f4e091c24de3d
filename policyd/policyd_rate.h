/* policyd_rate.h: token buckets per (principal uid, skill). */
#ifndef SB_POLICYD_RATE_H
#define SB_POLICYD_RATE_H

#include <stdint.h>

#define RATE_BUCKETS 4096

/*
 * Take one token for (uid, skill) from a bucket of burst tokens that
 * refills per_minute tokens a minute; 1 if allowed, 0 if rate limited.
 * now_ms is a monotonic clock (injected for tests).
 */
int rate_take(uint64_t uid, const char *skill, uint64_t per_minute,
    uint64_t burst, uint64_t now_ms);
void rate_reset(void);

#endif
