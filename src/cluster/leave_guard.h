/* leave_guard.h - a namespace leaves a pool only at a version of its
 * capsule-pool quota whose usage the decision read (cluster mode;
 * docs/cluster-mode.md, "Exact decisions").
 *
 * The webhook's dry run refuses a relabel that takes a namespace out of a
 * pool while one of its claims there is in use (standalone's rule and
 * text), judged on the mirror. That alone is not exact: the cluster's own
 * quota admission may charge a pod to capsule-pool-<pool> between that
 * answer and the relabel's commit, and the pod would leave with the
 * namespace, using a claim that is then released. So before the webhook
 * allows such a relabel, the guard freezes the quota on the API server:
 * its status.hard (what quota admission enforces) lowered to what is used,
 * with the resourceVersion whose status.used it read as precondition (a
 * pod charged in between conflicts, and the freeze is made again), then
 * its spec.hard the same (the quota controller copies spec into status),
 * with a hold (annotation LEAVE_HOLD_KEY) that keeps the pool writer from
 * raising it while the relabel is in flight. Nothing more can be charged
 * there; once the mirror holds the frozen version the webhook decides
 * again, on exactly the usage that will leave (which can only fall).
 *
 * The hold is active while the namespace is at the version the relabel
 * was decided on, for at most LEAVE_HOLD_S (beyond the API server's 60 s
 * request timeout): a relabel never committed gives the quota back then,
 * or at once when the second decision refuses (leave_guard_undo).
 */
#ifndef ALLOT_CLUSTER_LEAVE_GUARD_H
#define ALLOT_CLUSTER_LEAVE_GUARD_H

#include "api/admission_review.h"
#include "api/status.h"
#include "cluster/mirror.h"
#include "core/rlist.h"
#include "kube/kube.h"
#include "store/store.h"

#include <jansson.h>
#include <stdint.h>

#define LEAVE_HOLD_KEY "leave.allot.dev/hold"
#define LEAVE_HOLD_S 90

/* Called for an allowed review: 0 (not a namespace leaving a pool with a
 * quota there: nothing to guard), 1 (the quotas it leaves are frozen and
 * the mirror st holds them: decide again), or -1 with e (409/500/503: the
 * review is refused, the client retries). */
int leave_guard(kube_client *kc, store *st, mirror *m, const ar_request *r, api_err *e);

/* The second decision refused r: give back the quotas it froze (their
 * holds removed, at the version written; the pool writer restores their
 * hard at its next round). */
void leave_guard_undo(kube_client *kc, store *st, const ar_request *r);

/* The pool writer's side: whether quota `q` (as mirror m holds it)
 * carries an active hold at time now (unix seconds): 0 with *cap the
 * frozen hard (caller frees) or NULL when none is active; -1 when out of
 * memory. */
int leave_hold_cap(mirror *m, const json_t *q, int64_t now, rlist **cap);

#endif
