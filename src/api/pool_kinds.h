/* pool_kinds.h - Capsule's ResourcePool and ResourcePoolClaim
 * (capsule.clastix.io/v1beta2): the kinds.h hooks that need no other object.
 *
 * Defaulting is what the CRD schema's defaults and Capsule's mutating
 * webhooks do to the object alone:
 *   - a pool's spec.config gets defaultsZero, orderedQueue and
 *     deleteBoundResources = false where absent (CRD defaults);
 *   - with defaultsZero, every resource of spec.quota.hard missing from
 *     spec.defaults gets a default of "0" (pool webhook, create and update);
 *   - a claim's spec.pool is "" when absent (the webhook's typed round trip
 *     writes the field, which has no omitempty), and on create its release
 *     annotation is removed (claim webhook).
 * The rest of the claim webhook (keeping the release annotation on update,
 * assigning a pool to a claim without one) and the update rules of both
 * validating webhooks need the pool and the namespace's quota: the registry
 * decides them, with Capsule's messages.
 *
 * Validation is the CRD schema's required fields plus what a pool or a claim
 * must satisfy to become a ResourceQuota: the quota spec as ResourceQuota's
 * own validation sees it, namespace selectors that parse, resource names
 * quota accepts and quantities that are not negative. Causes are appended
 * to `causes` (status.h); inputs are borrowed and, for validation, never
 * modified. Pure: no I/O.
 */
#ifndef ALLOT_API_POOL_KINDS_H
#define ALLOT_API_POOL_KINDS_H

#include <jansson.h>
#include <stdbool.h>

#define POOL_GROUP "capsule.clastix.io"
/* The label naming the pool on the ResourceQuota it keeps in each namespace. */
#define POOL_LABEL "projectcapsule.dev/pool"
#define POOL_VERSION "v1beta2"
/* Capsule's release annotation: a claim asks to be released when its value
 * is "true", case-insensitively (pkg/api/meta/annotations.go). */
#define POOL_RELEASE_ANNOTATION "projectcapsule.dev/release"

/* kinds.h hooks of resourcepools. */
void resourcepool_defaults(json_t *obj);
void resourcepool_validate(const json_t *obj, const json_t *old, json_t *causes);

/* kinds.h hooks of resourcepoolclaims. The defaults hook tells a create by
 * its missing metadata.resourceVersion (the registry removes it before
 * defaulting a create; every update carries the stored one). */
void resourcepoolclaim_defaults(json_t *obj);
void resourcepoolclaim_validate(const json_t *obj, const json_t *old, json_t *causes);

/* Remove the release annotation (and an annotations map it leaves empty).
 * Returns whether it was there. */
bool pool_claim_strip_release(json_t *obj);

/* Whether the claim carries the release annotation with value "true" in any
 * case. */
bool pool_claim_release_requested(const json_t *obj);

/* A claim's state in one condition, as Capsule's claim listing prints it
 * (its CRD's columns Status, Reason and Message read status.condition):
 *   Assigned False <Ready's reason> <Ready's message>: in no pool, and why
 *            (ResourcePool.capsule.clastix.io "x" not found, ...);
 *   Bound False PoolExhausted|QueueExhausted <message>: waiting in the
 *            pool's queue (the Exhausted condition);
 *   Bound True Succeeded "Claimed resources": its resources are allocated.
 * Read from the claim's Ready, Exhausted and Bound conditions (strings
 * borrowed from `status`); false when they say nothing yet. */
typedef struct pool_claim_state {
    const char *type, *status, *reason, *message;
} pool_claim_state;
bool pool_claim_summary(const json_t *status, pool_claim_state *out);

#endif
