/* pool.h - Capsule ResourcePools and ResourcePoolClaims: the decision core.
 *
 * Reference: shared spec capsule-pools-and-custom-quotas.md §1 (Capsule v0.14
 * pool_controller.go, claim_*.go, utils.go). Pure: no I/O, no clocks, no
 * globals, no JSON. Quantities are exact (core/quantity.h) and resource lists
 * are core/rlist.h lists.
 *
 * ---- The model ----
 * A pool_state holds one pool's claims: every claim the registry has made
 * active in the pool (its `status.pool.uid` is the pool's, its namespace is
 * selected, it is not released), each either BOUND (it holds an allocation,
 * the amounts stored when it bound: sticky) or waiting (EXHAUSTED =
 * PoolExhausted, QUEUED = QueueExhausted, with Capsule's message).
 *
 * The result of a reconcile is defined from (pool spec, previous bound set
 * with stored amounts, active claims) as follows, claims ordered by
 * (creationTimestamp, name, namespace, uid):
 *  1. Bound claims, in order: a claim no longer active is dropped
 *     (disassociated). One whose request equals its stored amounts keeps them.
 *     A resized one is fitted against the pool with its own old amounts
 *     excluded: it fits -> it keeps its allocation with the new amounts; it
 *     does not -> it loses its allocation and waits (PoolExhausted).
 *  2. Waiting claims, in order, in passes: a claim is QUEUED when the pool has
 *     orderedQueue and it requests a non-zero amount of a resource some
 *     earlier EXHAUSTED claim of this pass is exhausted on; else it binds if
 *     it fits (the used totals grow at once); else it is EXHAUSTED on the
 *     resources that do not fit. Passes repeat until one binds nothing.
 *  3. That last pass is the outcome: its messages and status.exhaustions are
 *     computed against the final totals (so every `available:` a message
 *     shows is the pool's status.allocation.available).
 * This is what Capsule's controller converges to when it re-reconciles until
 * nothing changes (spec §6.2 P3 step 5), with one deliberate difference:
 * bound claims are settled before waiting claims, so capacity freed by a
 * shrink or a failed resize goes to the oldest waiting claim first.
 *
 * Fit: a resource missing from the pool's hard never fits; otherwise a
 * request fits when request <= available, available = max(0, hard - used).
 * A request of 0 therefore always fits a resource the pool holds.
 *
 * allot's choices where Capsule is accidental (docs/decisions.md):
 *  - available is clamped at 0 and hard is never modified (capsule#1977);
 *  - a request of 0 fits (Capsule: exhausted when available is 0) and is
 *    never queued (Capsule: queued if the resource is in the queue);
 *  - a resize of a bound claim is only fitted, not queued (as Capsule);
 *  - messages list resources in name order (Capsule: map order for
 *    QueueExhausted); amounts print canonically; allocation used/available
 *    print in the format of the pool's hard for that resource, RQ hard sums
 *    in claim order;
 *  - "in use" subtracts the pool's defaults from the namespace's usage first;
 *  - auto-assign picks deterministically: allocatable first, then pool name;
 *  - admission reports the first offending resource in name order.
 *
 * ---- Full and incremental ----
 * pool_reconcile computes the above from scratch: O(n log n) for n claims,
 * plus one O(waiting) pass per pass of step 2. Use it to build a pool's state
 * from stored objects (startup, recovery, a pool created or re-created, or
 * whenever the caller is not sure its in-memory state matches the store).
 *
 * The incremental operations (pool_apply_claim, pool_remove_claim,
 * pool_remove_namespace, pool_apply_pool) give exactly the result of
 * pool_reconcile(pool, state-before, active-claims-after), for ANY single
 * change, whatever the claim's place in the order: they apply the change to
 * the bound set (step 1 for that one claim only) and re-run steps 2-3 over
 * the waiting claims. Cost: O(resources) for the change, plus O(waiting x
 * resources) per pass. When nothing waits (the common case) an operation is
 * O(resources + log n). They are valid on any state produced by
 * pool_reconcile or by earlier incremental operations, as long as the pool
 * view passed in is the pool as it is now (after a pool spec change, call
 * pool_apply_pool once before anything else).
 *
 * Every operation is atomic: on an error the state is exactly as it was
 * (the caller aborts its transaction) and the delta is as it was.
 *
 * Ownership: views (pool_view, pool_claim) and their lists are borrowed and
 * copied in. pool_status pointers and the strings/lists they hold are
 * borrowed from the state and valid until its next modification. Returned
 * messages (char **msg) are malloc'd and owned by the caller.
 * Not thread-safe: the registry calls into one pool's state under its
 * transaction lock.
 */
#ifndef ALLOT_CORE_POOL_H
#define ALLOT_CORE_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/quantity.h"
#include "core/rlist.h"

enum {
    POOL_OK = 0,
    POOL_DENIED = 1,             /* admission: the request is refused, *msg says why */
    POOL_ENOMEM = RL_ENOMEM,     /* out of memory */
    POOL_ERANGE = QTY_ERR_RANGE, /* a sum needs more digits than a qty holds */
    POOL_EINVAL = -40,           /* bad input: negative amount, duplicate claim, NULL name */
};

/* The pool, as its spec says now. hard NULL = empty; defaults NULL = none. */
typedef struct pool_view {
    const char *name;
    const rlist *hard;           /* spec.quota.hard */
    const rlist *defaults;       /* spec.defaults (as stored, i.e. after pool_defaults_zero) */
    bool defaults_zero;          /* spec.config.defaultsZero */
    bool ordered_queue;          /* spec.config.orderedQueue */
    bool delete_bound_resources; /* spec.config.deleteBoundResources (pool_disassociate_drops_owner)
                                  */
} pool_view;

/* One claim. (namespace_, uid) identifies it; created and name never change
 * for a uid. request NULL = empty. Amounts must not be negative. */
typedef struct pool_claim {
    const char *namespace_;
    const char *name;
    const char *uid;
    int64_t created;      /* metadata.creationTimestamp, Unix seconds */
    const rlist *request; /* spec.claim */
    bool released;        /* the release annotation triggers: the claim is not active */
} pool_claim;

typedef enum {
    POOL_NONE = 0,      /* not (or no longer) in the pool */
    POOL_BOUND = 1,     /* holds an allocation: Exhausted=False/NoExhaustions */
    POOL_EXHAUSTED = 2, /* waits: Exhausted=True/PoolExhausted */
    POOL_QUEUED = 3,    /* waits: Exhausted=True/QueueExhausted (orderedQueue) */
} pool_outcome;

/* A claim's place in the pool (borrowed from the state). */
typedef struct pool_status {
    const char *namespace_, *name, *uid;
    int64_t created;
    pool_outcome outcome;
    const rlist *request;   /* spec.claim as last applied */
    const rlist *allocated; /* POOL_BOUND: the stored amounts (status.claims[].claims); else NULL */
    const char *message;    /* waiting: the Exhausted condition's message; bound: NULL */
} pool_status;

typedef struct pool_state pool_state;

/* ---- what changed (for the registry's writes) ----
 * Operations append to a delta (which may be NULL); one delta may collect
 * several operations. A claim appears once: `before` is its outcome before
 * the first operation, `after` its outcome after the last (POOL_NONE: it left
 * the pool; if it was POOL_BOUND it is to be disassociated). A claim whose
 * message or allocation changed but not its outcome is listed too. */
typedef struct pool_change {
    const char *namespace_, *name, *uid; /* owned by the delta */
    pool_outcome before, after;
    char *key_; /* private */
} pool_change;

typedef struct pool_delta {
    pool_change *claims;
    size_t nclaims;
    char **namespaces; /* namespaces whose bound claims changed (their RQ hard may differ) */
    size_t nnamespaces;
    bool allocation;  /* the used totals (status.allocation.used/available) changed */
    bool exhaustions; /* status.exhaustions changed */
    /* private */
    size_t capc, capn;
    struct strmap *seen_c, *seen_n;
} pool_delta;

void pool_delta_init(pool_delta *d);
void pool_delta_cleanup(pool_delta *d); /* frees everything; the delta may be re-initialised */

/* ---- order ---- */
/* (creationTimestamp, name, namespace, uid) ascending: a total order. */
int pool_claim_cmp(const pool_claim *a, const pool_claim *b);

/* ---- state ---- */
pool_state *pool_state_new(void);
void pool_state_free(pool_state *s);
/* Seed a bound claim with its stored amounts (pool.status.claims), to build
 * the `prev` of a pool_reconcile from stored objects: `c->request` is taken
 * as the stored allocation, and no decision is made. */
int pool_state_seed_bound(pool_state *s, const pool_claim *c);

const pool_status *pool_state_get(const pool_state *s, const char *ns, const char *uid);
size_t pool_state_count(const pool_state *s);  /* claims in the pool */
size_t pool_state_nbound(const pool_state *s); /* status.claimCount */
/* The claims (bound only, or all) in claim order: a malloc'd array of
 * borrowed statuses, caller free()s it (NULL with *n 0 when there are none). */
int pool_state_list(const pool_state *s, bool bound_only, const pool_status ***out, size_t *n);

/* The namespaces that have claims in the pool (names borrowed from the
 * state), in no order: a malloc'd array, caller free()s it. */
int pool_state_namespaces(const pool_state *s, const char ***out, size_t *n);
/* The bound claims of namespace ns in claim order (as pool_state_list). */
int pool_state_bound_in(const pool_state *s, const char *ns, const pool_status ***out, size_t *n);

/* status.allocation: used = Σ stored amounts, with every hard key (0 when
 * unclaimed); available = max(0, hard - used) for the hard keys only. Values
 * print in the format of the pool's hard for that resource. Both lists are
 * cleared first; either may be NULL. */
int pool_allocation(const pool_state *s, const pool_view *pool, rlist *used, rlist *available);
/* status.exhaustions: resource -> requesting (Σ requests of the EXHAUSTED
 * claims exhausted on it) and available (as the messages show it). */
const rlist *pool_exhaustions_requesting(const pool_state *s);
const rlist *pool_exhaustions_available(const pool_state *s);
/* spec.hard of ResourceQuota capsule-pool-<pool> in namespace ns (§1.5): the
 * bound claims of ns summed per resource (in claim order), zero sums dropped,
 * plus every key of defaults (and, with defaultsZero, 0 for every hard key
 * missing from defaults). `out` is cleared first. */
int pool_rq_hard(const pool_state *s, const pool_view *pool, const char *ns, rlist *out);

/* ---- full reconcile ----
 * claims: the claims indexed to the pool (status.pool.uid == pool uid) whose
 * namespace is selected; released ones are dropped here. prev: the state to
 * start from (its bound claims and stored amounts; NULL = none). *out: a new
 * state. d (may be NULL): what differs from prev. */
int pool_reconcile(const pool_view *pool, const pool_state *prev, const pool_claim *claims,
                   size_t n, pool_state **out, pool_delta *d);

/* ---- incremental operations (same results as pool_reconcile) ---- */
/* A claim created, assigned to the pool, (re)selected, or whose spec.claim
 * changed: adds it or applies the resize. A released claim is removed. */
int pool_apply_claim(pool_state *s, const pool_view *pool, const pool_claim *c, pool_delta *d);
/* A claim deleted, released, moved away, or whose status.pool.uid no longer
 * matches: it leaves the pool (no-op when unknown). */
int pool_remove_claim(pool_state *s, const pool_view *pool, const char *ns, const char *uid,
                      pool_delta *d);
/* A namespace no longer selected (or deleting): all its claims leave. */
int pool_remove_namespace(pool_state *s, const pool_view *pool, const char *ns, pool_delta *d);
/* The pool's spec changed (hard, orderedQueue): waiting claims are settled
 * again. Bound claims are sticky; admit hard changes with
 * pool_check_hard_update first. A change of defaults changes every selected
 * namespace's RQ hard: the delta does not list those. */
int pool_apply_pool(pool_state *s, const pool_view *pool, pool_delta *d);

/* ---- in use (§1.4 step 11) ----
 * selectClaimsCoveringUsageGreedy: used restricted to the keys of `hard`
 * (NULL: no restriction); claims sorted by pool_claim_cmp; repeatedly pick
 * the claim with the strictly highest score Σ_res min(remaining, claim)
 * (exact; ties to the first in order), subtract it (clamped at 0), stop when
 * the best score is 0. selected[i] tells whether claims[i] was picked. */
int pool_select_covering(const rlist *used, const rlist *hard, const pool_claim *claims, size_t n,
                         bool *selected);
/* The bound claims of namespace ns that are in use, given rq_used = status.used
 * of the namespace's capsule-pool-<pool> quota: pool_select_covering over
 * max(0, rq_used - defaults) (usage the defaults cover pins no claim).
 * *out: malloc'd array of borrowed statuses in claim order (caller free()s). */
int pool_in_use(const pool_state *s, const pool_view *pool, const char *ns, const rlist *rq_used,
                const pool_status ***out, size_t *n);
/* Cluster mode's release of `give` (what a bound claim gives, or the part
 * a shrink gives back) from a namespace's capsule-pool-<pool> quota whose
 * spec.hard is `hard` and status.used `used`, read at one version: *out
 * (caller frees) is the hard to write back at that version, hard - give
 * for give's resources (clamped at 0), when every used amount still fits;
 * else POOL_DENIED via pool_check_claim_delete's text (the claim is in
 * use) and *out NULL. POOL_ENOMEM when out of memory. */
int pool_release_hard(const rlist *hard, const rlist *used, const rlist *give, const char *pool,
                      rlist **out, char **msg);
/* Whether the claim (ns, uid) is in use (false when it is not bound). */
int pool_claim_in_use(const pool_state *s, const pool_view *pool, const char *ns, const char *uid,
                      const rlist *rq_used, bool *in_use);

/* ---- admission (§1.2): POOL_OK (allowed, *msg NULL), POOL_DENIED (*msg
 * set, Capsule's text), or an error ---- */
/* Pool UPDATE: spec.quota.hard from old_hard to new_hard while `claimed`
 * (pool_allocation's used) is allocated. Unchanged hard (numerically) is
 * always allowed. The first offending resource in name order is reported. */
int pool_check_hard_update(const rlist *old_hard, const rlist *new_hard, const rlist *claimed,
                           char **msg);
/* Claim DELETE; `pool` is the claim's status.pool.name. */
int pool_check_claim_delete(bool in_use, const char *pool, char **msg);
/* Claim UPDATE: denied while in use if spec.pool or spec.claim (numerically)
 * changes. */
int pool_check_claim_update(bool in_use, const char *pool, const char *old_spec_pool,
                            const char *new_spec_pool, const rlist *old_claim,
                            const rlist *new_claim, char **msg);
/* Claim controller (§1.3 step 5): every claimed resource must be in the pool's
 * hard: `resource <res> is not available in pool <pool>` (first in name order). */
int pool_check_claim_resources(const char *pool, const rlist *hard, const rlist *request,
                               char **msg);

/* Pool mutating webhook with defaultsZero: 0 for every hard key missing from
 * defaults (existing values kept). */
int pool_defaults_zero(const rlist *hard, rlist *defaults);

/* Claim mutating webhook auto-assign: one candidate pool (its status.namespaces
 * holds the claim's namespace) with its allocation hard and available. */
typedef struct pool_candidate {
    const char *name;
    const rlist *hard;
    const rlist *available;
} pool_candidate;
/* The index of the pool to assign, or -1 when none can take the claim: the
 * pools whose hard has every claimed resource; among them those where
 * everything claimed is available come first; ties by pool name. */
long pool_auto_assign(const rlist *request, const pool_candidate *pools, size_t n);

/* Disassociation (§1.6): whether the pool ownerReference (and the release
 * annotation) is removed from the claim. */
bool pool_disassociate_drops_owner(const pool_view *pool, bool released);

#endif
