/* leader.h - one allotd replica at a time leads, through a
 * coordination.k8s.io/v1 Lease in the cluster (core/lease.h decides).
 *
 * What only one replica may do (expiring reservations, binding queued
 * claims, keeping the capsule-pool-* quotas in step) runs while
 * leader_is() says so. The holder counts itself leader only until its last
 * renewal plus LEADER_RENEW_DEADLINE_S, shorter than the lease's duration,
 * so it stops before another replica may take over; and every write it
 * makes is a compare-and-swap, so one that is late still cannot overwrite.
 */
#ifndef ALLOT_CLUSTER_LEADER_H
#define ALLOT_CLUSTER_LEADER_H

#include "kube/kube.h"

#include <stdbool.h>
#include <stddef.h>

/* client-go's defaults for controllers. */
#define LEADER_LEASE_DURATION_S 15
#define LEADER_RENEW_DEADLINE_S 10
#define LEADER_RETRY_PERIOD_MS 2000

typedef struct leader leader;

/* Campaign for Lease ns/name as `identity` (copied) on its own thread;
 * on_change(arg, leading), if given, is called on that thread whenever
 * this replica starts or stops leading. NULL with err. */
leader *leader_start(kube_client *kc, const char *ns, const char *name, const char *identity,
                     void (*on_change)(void *arg, bool leading), void *arg, char *err,
                     size_t errlen);
/* This replica leads now. Any thread. */
bool leader_is(const leader *l);
/* Stop campaigning; a holder releases the Lease (empty holder) so another
 * replica takes over at once rather than after the lease's duration. */
void leader_stop(leader *l);

#endif
