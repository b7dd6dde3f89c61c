/* bitalloc.h - a bitmap of allocated offsets 0..max-1, and upstream's way of
 * choosing a free one.
 *
 * The allocation map behind a Service IP range or a node port range
 * (upstream's pkg/registry/core/service/allocator): one bit per offset, a
 * count of the set bits, and the "random scan with offset" strategy of
 * KEP-3070 (IPs) and KEP-3668 (node ports): the first `band` offsets are a
 * static band that dynamic allocation uses only once the rest is full, so
 * that values users ask for by number rarely collide with ones the server
 * chose.
 *
 * INVARIANT: count == the number of set bits, at every return.
 * Pure: no I/O, no clock, no globals; randomness comes in as an argument.
 * Not thread-safe (the caller serializes: allot's store transactions).
 */
#ifndef ALLOT_CORE_BITALLOC_H
#define ALLOT_CORE_BITALLOC_H

#include <stdbool.h>
#include <stdint.h>

typedef struct bitalloc bitalloc;

/* A map of `max` offsets (at most 2^24), none set, whose first `band`
 * (< max, or 0) offsets dynamic allocation keeps for last. NULL when out of
 * memory or max is too large. */
bitalloc *ba_new(uint32_t max, uint32_t band);
void ba_free(bitalloc *b);

uint32_t ba_max(const bitalloc *b);
uint32_t ba_count(const bitalloc *b); /* offsets set */

bool ba_has(const bitalloc *b, uint32_t off); /* false when off >= max */
/* Set off: true, or false when it was already set or is >= max. */
bool ba_set(bitalloc *b, uint32_t off);
/* Clear off (a no-op when clear or >= max). */
void ba_clear(bitalloc *b, uint32_t off);

/* Choose a clear offset, set it, and put it in *off: a random one of the
 * offsets above the band (scanning forward from a random start, wrapping),
 * else one of the band's the same way. `rnd` is 64 random bits. false when
 * every offset is set. */
bool ba_next(bitalloc *b, uint64_t rnd, uint32_t *off);

#endif
