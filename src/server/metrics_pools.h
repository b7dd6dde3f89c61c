/* metrics_pools.h - Capsule's ResourcePool and ResourcePoolClaim gauges
 * (capsule_pool_*, capsule_claim_*), rendered at scrape time from the stored
 * pools and claims (shared spec capsule-pools-and-custom-quotas.md §5). */
#ifndef ALLOT_SERVER_METRICS_POOLS_H
#define ALLOT_SERVER_METRICS_POOLS_H

#include "core/dbuf.h"
#include "store/store.h"

/* Append every capsule_pool_* and capsule_claim_* family to b (each with its
 * # HELP and # TYPE lines, samples grouped by family). A series whose value
 * or line cannot be built (unparsable quantity, failed allocation) is left
 * out; nothing is ever written half. */
void metrics_render_pools(store *st, dbuf *b);

#endif
