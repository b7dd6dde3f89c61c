/* release_guard.h - a bound claim is released or shrunk only at a version
 * of its namespace's quota whose usage still fits without it (cluster
 * mode; docs/cluster-mode.md, "Exact decisions").
 *
 * The webhook's dry run says whether standalone allot would let a claim
 * go, from the mirror. That alone is not exact: the cluster's own quota
 * admission may charge a pod to capsule-pool-<pool> between that answer
 * and the writer lowering the quota. So before the webhook allows a bound
 * claim's delete (or a shrink of its spec.claim), the guard reads the
 * quota from the API server and lowers its status.hard (what quota
 * admission enforces) by what the claim gives, with the resourceVersion
 * whose status.used it checked as precondition: a pod charged in between
 * changes that version, the write conflicts, and the decision is made
 * again on the newer usage. Then it lowers spec.hard (which the quota
 * controller copies into status.hard when the spec changes) and records
 * the release on the quota (annotation RELEASE_HOLD_PREFIX<claim uid>) so
 * the pool writer does not hand the capacity back while the delete is in
 * flight; it holds
 * while the claim is still there as it was, for at most RELEASE_HOLD_S
 * (longer than the API server's 60 s request timeout: a write it never
 * commits gives the capacity back then).
 */
#ifndef ALLOT_CLUSTER_RELEASE_GUARD_H
#define ALLOT_CLUSTER_RELEASE_GUARD_H

#include "api/admission_review.h"
#include "api/status.h"
#include "core/rlist.h"
#include "kube/kube.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define RELEASE_HOLD_PREFIX "release.allot.dev/"
#define RELEASE_HOLD_S 90

/* Called for an allowed review: 0 (nothing to guard, or the release is
 * recorded), or -1 with e (403 in use; 409/500 when it could not be
 * recorded: the review is refused, the client retries). */
int release_guard(kube_client *kc, const ar_request *r, api_err *e);

/* The pool writer's side: the part of a capsule-pool quota's hard that
 * the holds recorded on `cur` (the quota as the mirror holds it) keep
 * back, as an rlist (caller frees; empty when none is active), given the
 * claims of its namespace in st and the time now (unix seconds). NULL when
 * out of memory. */
rlist *release_holds(store *st, const json_t *cur, int64_t now);

#endif
