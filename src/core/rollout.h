/* rollout.h - the pure decisions of the workload controllers, as upstream's
 * pkg/controller takes them (controller_utils.go, replicaset/replica_set.go,
 * deployment/rolling.go, sync.go, progress.go and deployment/util):
 * slow-start batch sizes, backoff, int-or-percent fenceposts, the rolling
 * update's arithmetic, proportional scaling, Deployment progress, the ranking
 * of pods to delete, availability, and the pod-template hash.
 *
 * Pure: no I/O, no clock (time is passed in, milliseconds since the epoch
 * where upstream compares metav1.Times), no globals; the structs are the
 * caller's and nothing borrowed is kept.
 */
#ifndef ALLOT_CORE_ROLLOUT_H
#define ALLOT_CORE_ROLLOUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- batches and backoff ---- */

/* slowStartBatch's next batch: min(2 * prev, remaining), or
 * min(initial, remaining) for the first (prev 0). 0 when nothing remains. */
size_t ro_batch_size(size_t prev, size_t initial, size_t remaining);

/* Delay before retry number `failures` (>= 1): base * 2^(failures-1),
 * at most max; 0 for failures < 1. */
int64_t ro_backoff_ms(int failures, int64_t base, int64_t max);

/* ---- int or percent ---- */

/* intstr.GetScaledValueFromIntOrPercent: v an integer (itself) or a string
 * "<n>%" (n% of total, rounded up or down). NULL (absent) is 0. 0, or -1 when
 * v is neither (a string without '%' or with a bad number). */
int ro_scaled_value(const json_t *v, int32_t total, bool round_up, int32_t *out);

/* ResolveFenceposts: maxSurge rounded up, maxUnavailable rounded down, of
 * `desired`; when both come to 0, maxUnavailable is 1 (surge might be
 * impossible, e.g. at a quota). Absent values are 0. 0 or -1 as above. */
int ro_fenceposts(const json_t *max_surge, const json_t *max_unavailable, int32_t desired,
                  int32_t *surge, int32_t *unavailable);

/* ---- Deployments ---- */

/* A Deployment as the arithmetic sees it. */
typedef struct ro_deploy {
    int32_t replicas; /* spec.replicas */
    bool rolling;     /* strategy RollingUpdate (else Recreate) */
    /* upstream's MaxSurge(d) and MaxUnavailable(d): 0 unless rolling (and
     * maxUnavailable 0 when replicas is 0, at most replicas) */
    int32_t max_surge, max_unavailable;
} ro_deploy;

/* Fill d from the spec's values (strategy.rollingUpdate members, borrowed).
 * 0, or -1 when a value is not an int or percent (d then has 0 and 0:
 * validation refuses such specs, so this is a stored object of an older
 * rule). */
int ro_deploy_init(ro_deploy *d, int32_t replicas, bool rolling, const json_t *max_surge,
                   const json_t *max_unavailable);

/* A ReplicaSet of a Deployment. `id` is the caller's (functions that sort
 * move elements). */
typedef struct ro_rs {
    int32_t replicas;     /* spec.replicas */
    int32_t available;    /* status.availableReplicas */
    int64_t created;      /* creationTimestamp, ms */
    const char *name;     /* the tie-break of equal creation times */
    int64_t revision;     /* deployment.kubernetes.io/revision (0 when none) */
    int32_t max_replicas; /* deployment.kubernetes.io/max-replicas, -1 when none */
    int32_t target;       /* out: the spec.replicas decided */
    size_t id;
} ro_rs;

/* NewRSNewReplicas: the new ReplicaSet's size for the next step. `all`
 * holds every ReplicaSet (the new one included). */
int32_t ro_new_rs_replicas(const ro_deploy *d, const ro_rs *all, size_t n, const ro_rs *new_rs);

/* reconcileOldReplicaSets: olds (every old ReplicaSet with replicas > 0) get
 * their targets - first cleanupUnhealthyReplicas (unavailable replicas of
 * the oldest first), then scaleDownOldReplicaSetsForRollingUpdate (down to
 * the minimum available) - within maxUnavailable. olds is sorted by
 * creation (oldest first). Returns the total scaled down (0: nothing to do;
 * every target is then its replicas). */
int32_t ro_reconcile_old(const ro_deploy *d, ro_rs *olds, size_t n, const ro_rs *new_rs);

/* The proportional part of upstream's scale(): the active ReplicaSets (new
 * and old, replicas > 0) share the difference between the allowed size
 * (replicas + maxSurge, or 0) and their sum, in proportion to their size
 * from the max-replicas annotation (`status_replicas`, the Deployment's
 * status.replicas, when a set has none), the largest first (newer first when
 * scaling up, older first when down), leftovers to the first. rs is sorted
 * in that order; each gets its target. */
void ro_proportional(const ro_deploy *d, ro_rs *rs, size_t n, int32_t status_replicas);

/* Sort by creation, oldest first (ties by name): ReplicaSetsByCreationTimestamp. */
void ro_sort_by_creation(ro_rs *rs, size_t n);
/* Sort by revision, lowest first (ties by creation): ReplicaSetsByRevision. */
void ro_sort_by_revision(ro_rs *rs, size_t n);

/* The status numbers of a Deployment the progress checks read. */
typedef struct ro_dstatus {
    int32_t replicas, updated, ready, available;
    int64_t observed_generation;
} ro_dstatus;

/* DeploymentComplete: every replica updated and available, generation observed. */
bool ro_deploy_complete(int32_t spec_replicas, int64_t generation, const ro_dstatus *s);
/* DeploymentProgressing: more updated, fewer old, more ready or more available than before. */
bool ro_deploy_progressing(const ro_dstatus *before, const ro_dstatus *now);

/* ---- pods ---- */

/* A pod as the ranking sees it (ActivePodsWithRanks). */
typedef struct ro_pod {
    bool assigned;         /* spec.nodeName set */
    int phase;             /* podPhaseToOrdinal: Pending 0, Unknown 1, Running 2 */
    bool ready;            /* the Ready condition is True */
    int64_t ready_since;   /* its lastTransitionTime, ms (0: unknown) */
    int32_t deletion_cost; /* controller.kubernetes.io/pod-deletion-cost (0 when absent or bad) */
    int32_t rank;          /* active pods of related owners on the same node */
    int32_t restarts;      /* the highest restartCount of its containers */
    int32_t sidecar_restarts; /* the same for restartable init containers */
    int64_t created;          /* creationTimestamp, ms (0: unknown) */
    const char *uid;          /* the last tie-break of times in one log2 bucket */
    size_t id;                /* the caller's */
} ro_pod;

/* Whether a should be deleted before b at time now (ActivePodsWithRanks.Less
 * with PodDeletionCost and LogarithmicScaleDown on, as 1.32's defaults):
 * unassigned, then pending (< unknown < running), not ready, lower deletion
 * cost, more doubled up, ready more recently (by log2 buckets of time
 * since), more restarts, created more recently (log2 buckets). */
bool ro_pod_delete_before(const ro_pod *a, const ro_pod *b, int64_t now);
/* Sort pods so the first `diff` are upstream's getPodsToDelete (the whole
 * array ordered; ties kept deterministic by id). */
void ro_rank_for_deletion(ro_pod *pods, size_t n, int64_t now);

/* podutil.IsPodAvailable: ready, for at least min_ready seconds
 * (minReadySeconds 0: as soon as ready). */
bool ro_pod_available(bool ready, int64_t ready_since, int32_t min_ready, int64_t now);
/* When a pod ready since ready_since becomes available (ms), for a requeue. */
int64_t ro_available_at(int64_t ready_since, int32_t min_ready);

/* ---- quota ---- */

/* Whether a ResourceQuota's change from `before` to `after` may let a
 * refused create through: a hard limit raised or removed (spec.hard), or
 * usage lowered (status.used), for any resource. A controller whose creates
 * the quota refused tries again then, rather than only on its backoff
 * timer. NULL before (a new quota): false. */
bool ro_quota_freer(const json_t *before, const json_t *after);

/* ---- the pod-template hash ---- */

#define RO_HASH_LABEL "pod-template-hash"

/* The template as compared and hashed: a copy without null members and
 * empty objects and arrays (Go's zero values that omitempty drops, and
 * creationTimestamp: null), and without the pod-template-hash label. Caller
 * owns; NULL when out of memory. */
json_t *ro_template_normal(const json_t *tmpl);
/* EqualIgnoreHash: the two templates' normal forms are equal. */
bool ro_template_equal(const json_t *a, const json_t *b);
/* ComputeHash: FNV-32a over the normal form (compact, keys sorted), then the
 * collision count's 4 little-endian bytes (collision < 0: none), printed in
 * decimal and each digit mapped to upstream's SafeEncodeString alphabet
 * ("bcdfghjklmnpqrstvwxz2456789"). out holds up to 10 characters. 0, or -1
 * when out of memory. (Upstream hashes Go's struct dump, so the values differ
 * from a real cluster's; the form and use are the same.) */
int ro_template_hash(const json_t *tmpl, int64_t collision, char out[16]);

#endif
