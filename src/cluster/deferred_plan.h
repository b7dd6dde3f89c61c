/* deferred_plan.h - the leader's recount of deferred quota books
 * (core/deferred_book.h; the binds that reserve: cluster/extender.h).
 *
 * For every ResourceQuota the mirror holds with deferred limits, the book
 * as a recount of the mirror's pods gives it: `used` the charge of the
 * namespace's bound, non-terminal pods; each reservation kept until the
 * mirror shows its pod bound (then `used` holds it) or deleted (gone from
 * a mirror that has taken in the version the bind was decided on), or,
 * past its expiry, gone(gone_arg, reservation) says the cluster does not
 * hold it bound;
 * `countedThrough` the highest pod resourceVersion counted. A book counted
 * by a replica whose pod watch was further on is recounted only once this
 * mirror has taken in as much (mirror_progress), so a new leader never
 * lowers `used` under a pod whose reservation is already settled. Each
 * write is a PUT at the cluster's resourceVersion of the quota counted on:
 * a bind's reservation made meanwhile makes it conflict, and it is planned
 * again.
 */
#ifndef ALLOT_CLUSTER_DEFERRED_PLAN_H
#define ALLOT_CLUSTER_DEFERRED_PLAN_H

#include "cluster/mirror.h"
#include "cluster/reconcile.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>

/* The book writes, appended to out. For every quota with more room than
 * its book left (usage or reservations down, a limit up),
 * freed[namespace][quota] (freed an
 * object; NULL: not asked) is the room it has left after them (its limit
 * less what is used and reserved): waiting pods may fit now. 0, or -1
 * (out of memory). Not inside a store transaction (gone may ask the
 * cluster). */
int reconcile_dq_plan(store *st, mirror *m, bool (*gone)(void *arg, const json_t *reservation),
                      void *gone_arg, cw_list *out, json_t *freed);

/* The annotation a wake-up writes on a waiting pod: kube-scheduler
 * retries an Unschedulable pod at once when it is updated, where it would
 * otherwise wait for a cluster event or its minute-long flush. */
#define DQ_WAKE_ANNOTATION "quota.allot.dev/retry"

/* The wake-up of namespace ns: a merge patch of DQ_WAKE_ANNOTATION (value
 * `stamp`) on its pods waiting Unschedulable, highest priority then oldest
 * first, as many as the room of `rooms` (quota name -> room left, from
 * reconcile_dq_plan's freed) takes in that order, at most `max`: no
 * thundering herd of pods that cannot fit. Appended to out. 0 or -1. */
int reconcile_dq_wake(store *st, mirror *m, const char *ns, const json_t *rooms, size_t max,
                      int64_t stamp, cw_list *out);

#endif
