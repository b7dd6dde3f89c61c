/* pool_admission.h - Capsule's ResourcePools and ResourcePoolClaims decided
 * in the write's transaction: binding, queueing, the pool's status and the
 * namespaces' capsule-pool-<pool> quotas (see pool_admission.c). */
#ifndef ALLOT_REGISTRY_POOL_ADMISSION_H
#define ALLOT_REGISTRY_POOL_ADMISSION_H

#include "registry/registry.h"

/* Register the plugin; it runs before ResourceQuota admission. */
int pool_admission_register(void);

/* At start, before serving (and before a new leader writes): load every
 * pool's books, write statuses and Bound conditions that trail them. */
void pool_admission_restore(store *st);

/* Events about claims (Capsule's): written by a recorder thread of their
 * own, started after the store opens and stopped before it closes. Without
 * it no Events are recorded. */
int pool_admission_start_events(store *st);
void pool_admission_stop_events(void);

#endif
