/* pool_sync.h - the cluster's pools, claims and capsule-pool-* quotas kept
 * as the books decide, and its custom quotas' statuses as the books count
 * (cluster mode; the leader's work).
 *
 * A thread watches the mirror; when a pool, claim, namespace or quota
 * changes (or every POOL_SYNC_RESYNC_MS), and this replica leads and the
 * mirror is synced, it plans each pool (cluster/reconcile.h) and writes the
 * plan to the cluster in its order: the pool's status first, then what it
 * hands out. When anything a custom quota may count changes, it writes
 * the statuses of those whose books differ from what the cluster holds
 * (reconcile_cq_plan). Every write is a compare-and-swap; a conflict means the mirror
 * is behind, and the write is planned again from the newer version when the
 * mirror's watch brings it.
 */
#ifndef ALLOT_CLUSTER_POOL_SYNC_H
#define ALLOT_CLUSTER_POOL_SYNC_H

#include "cluster/leader.h"
#include "cluster/mirror.h"
#include "kube/kube.h"
#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>

#define POOL_SYNC_RESYNC_MS 30000

typedef struct pool_sync pool_sync;

typedef struct pool_sync_stats {
    uint64_t rounds, writes, conflicts, failures;
} pool_sync_stats;

/* Start keeping the pools of the mirror st (fed by m) in the cluster kc
 * writes to, while leader_is(l) and ready(arg). NULL with err. */
pool_sync *pool_sync_start(store *st, mirror *m, kube_client *kc, leader *l,
                           bool (*ready)(void *arg), void *arg, char *err, size_t errlen);
/* Look again now (leadership or readiness changed). Any thread. */
void pool_sync_kick(pool_sync *p);
void pool_sync_get_stats(pool_sync *p, pool_sync_stats *out);
void pool_sync_stop(pool_sync *p);

#endif
