/* sched.h - the pure core of allot's scheduler: a kube-scheduler subset.
 *
 * What upstream's default profile does for the plugins allot implements, in
 * upstream's order and wording:
 *   filters  NodeUnschedulable, TaintToleration, NodeAffinity (with its PreFilter
 *            node-name shortcut), NodeResourcesFit;
 *   score    NodeResourcesFit LeastAllocated (cpu and memory, weight 1 each);
 *   errors   FitError ("0/N nodes are available: ...") with the DefaultPreemption
 *            PostFilter suffix, for a scheduler that never preempts (see sched.c);
 *   queue    PrioritySort order and the pod backoff of the default queue.
 * Ties between equally scored nodes go to the smallest node name (upstream picks
 * at random), so a schedule is reproducible.
 *
 * The pod's requests are quota_pod_requests (quota_eval.h): the one place that
 * computes what a pod requests. Nothing here defaults objects; pass them as the
 * API server stores them.
 *
 * Ownership: every JSON object and rlist argument is borrowed and never kept,
 * except the pod a sched_pod borrows for its lifetime.
 * Output goes to caller-owned buffers (a char array or a dbuf, appended to).
 * Pure: no I/O, no clocks, no threads, no globals.
 *
 * Errors: SCHED_ENOMEM (allocation or dbuf ceiling) or SCHED_EINVAL (an object
 * field that does not parse, e.g. a bad quantity).
 */
#ifndef ALLOT_CORE_SCHED_H
#define ALLOT_CORE_SCHED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dbuf.h"
#include "core/rlist.h"

enum { SCHED_OK = 0, SCHED_ENOMEM = -50, SCHED_EINVAL = -51 };

/* A filter outcome: upstream's Status codes. Unresolvable failures are those no
 * preemption could fix (they decide the preemption suffix of the FitError). */
typedef enum {
    SCHED_FIT = 0,
    SCHED_UNSCHEDULABLE = 1, /* Unschedulable */
    SCHED_UNRESOLVABLE = 2,  /* UnschedulableAndUnresolvable */
} sched_code;

/* What the filters and the score read of a node, derived once from the other
 * sched_node fields by sched_node_prepare so that a pick, which looks at up to
 * every node for every pod, does no JSON lookups or quantity conversions per
 * node. Amounts are the scheduler's integers: milli-cores for cpu, Value()
 * for the rest. Pointers are borrowed from sched_node.node. */
typedef struct sched_node_prep {
    bool ready;                    /* the fields below hold; false (zeroed): derived on every use */
    bool amounts;                  /* the amounts hold (only when sched_node.allocatable is set) */
    bool unschedulable;            /* spec.unschedulable */
    const char *name;              /* metadata.name, "" when absent */
    const json_t *labels, *taints; /* metadata.labels, spec.taints, or NULL */
    int64_t alloc_cpu, alloc_memory, alloc_storage, alloc_pods; /* allocatable */
    int64_t req_cpu, req_memory, req_storage;                   /* requested */
    int64_t score_cpu, score_memory; /* nonzero (or requested when NULL) */
} sched_node_prep;

/* One candidate node and what is already bound to it (upstream's NodeInfo). */
typedef struct sched_node {
    const json_t *node;       /* the v1 Node */
    const rlist *requested;   /* sum of quota_pod_requests of its pods; NULL = none */
    const rlist *nonzero;     /* sum of sched_pod_nonzero_requests of its pods, for
                               * scoring; NULL = use `requested` */
    int pods;                 /* number of pods bound to it */
    const rlist *allocatable; /* status.allocatable parsed once by the caller, or NULL
                               * (then parsed from `node` on every use) */
    sched_node_prep prep;     /* optional: sched_node_prepare; zeroed = not used */
} sched_node;

/* Fill n->prep from n's other fields. Call it again whenever any of them, or
 * the content of the lists they point to, changes: a stale prep gives stale
 * decisions. Never fails (what it cannot derive is derived on use instead). */
void sched_node_prepare(sched_node *n);

/* Upstream's texts (filter reasons and message parts), held in one place. */
#define SCHED_MSG_UNSCHEDULABLE "node(s) were unschedulable"
#define SCHED_MSG_AFFINITY "node(s) didn't match Pod's node affinity/selector"
#define SCHED_MSG_AFFINITY_PREFILTER "node(s) didn't satisfy plugin(s) [NodeAffinity]"
#define SCHED_MSG_AFFINITY_CONFLICT "pod affinity terms conflict"
#define SCHED_MSG_TAINT "node(s) had untolerated taint {%s: %s}"
#define SCHED_MSG_TOO_MANY_PODS "Too many pods"
#define SCHED_MSG_INSUFFICIENT "Insufficient %s"
#define SCHED_MSG_NO_NODES "no nodes available to schedule pods"
#define SCHED_MSG_NOT_HELPFUL "Preemption is not helpful for scheduling"
#define SCHED_MSG_NO_VICTIMS "No preemption victims found for incoming pod"
#define SCHED_MSG_NOT_ELIGIBLE "not eligible due to preemptionPolicy=Never."

/* Scoring defaults for containers without a request (schedutil.DefaultMilliCPURequest
 * and DefaultMemoryRequest). */
#define SCHED_DEFAULT_MILLI_CPU 100
#define SCHED_DEFAULT_MEMORY (200LL * 1024 * 1024)

/* Whether the built-in scheduler handles the pod at all: spec.schedulerName empty
 * or "default-scheduler", spec.nodeName empty, not being deleted. */
bool sched_pod_ours(const json_t *pod);
/* spec.schedulingGates is non-empty (the pod stays SchedulingGated). */
bool sched_pod_gated(const json_t *pod);

/* The pod's requests as scoring sees them: quota_pod_requests of the pod with
 * each container (and init container) that has no cpu / memory request counted
 * at 100m / 200Mi (upstream's NonMissingContainerRequests). Sum this over a
 * node's pods for sched_node.nonzero. `out` is cleared first. */
int sched_pod_nonzero_requests(const json_t *pod, rlist *out);

/* Run every filter on one node, in upstream's order, stopping at the first that
 * fails. `pod_req` is quota_pod_requests(pod). Returns SCHED_FIT,
 * SCHED_UNSCHEDULABLE or SCHED_UNRESOLVABLE (the reasons, joined by ", " as
 * Status.Message() does, in `reason`, truncated to len-1), or a negative error.
 * The NodeAffinity PreFilter shortcut is not applied here (see sched_pick). */
int sched_filter(const json_t *pod, const rlist *pod_req, const sched_node *n, char *reason,
                 size_t len);

/* Least-allocated score in [0, 100] of a node that passed the filters (upstream's
 * leastResourceScorer over cpu and memory with the pod's non-zero requests
 * added). `pod_nonzero` is sched_pod_nonzero_requests(pod). <0 on error. */
int sched_score(const rlist *pod_nonzero, const sched_node *n);

/* A pod prepared for a pick: its requests and non-zero requests computed once,
 * its tolerations, nodeSelector, required node affinity and NodeAffinity
 * PreFilter compiled once, for all nodes. Borrows `pod` (strings inside it are
 * referenced): the pod must outlive the sched_pod and not change meanwhile.
 * sched_pod_new returns 0 with *out set (free with sched_pod_free), or
 * SCHED_ENOMEM / SCHED_EINVAL (a request that does not parse) with *out NULL. */
typedef struct sched_pod sched_pod;
int sched_pod_new(const json_t *pod, sched_pod **out);
void sched_pod_free(sched_pod *sp);
/* quota_pod_requests and sched_pod_nonzero_requests of the pod (owned by sp). */
const rlist *sched_pod_requests(const sched_pod *sp);
const rlist *sched_pod_nonzero(const sched_pod *sp);
/* Hand both lists to the caller (who rl_frees them); sp then has none, and
 * must not be picked with again. */
void sched_pod_take_lists(sched_pod *sp, rlist **requests, rlist **nonzero);

/* Filter and score all nodes: on success *chosen is the index of the node to
 * bind and 0 is returned. When no node fits, 1 is returned and the FitError text
 * (with its preemption suffix) is appended to fit_error, e.g.
 * `0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are
 * available: 3 No preemption victims found for incoming pod.`
 * Negative on error (fit_error may then hold a partial message). */
/* Upstream's numFeasibleNodesToFind: stop once this many nodes fit (scoring
 * only those), starting at node `start` and wrapping; every node is examined
 * when fewer fit, so a FitError always covers all n. 0 = examine all. */
typedef struct sched_sample {
    size_t start;
    size_t max_feasible;
    size_t examined; /* out: nodes examined */
} sched_sample;
int sched_pick_sampled(const json_t *pod, const sched_node *nodes, size_t n, sched_sample *sample,
                       size_t *chosen, dbuf *fit_error);

int sched_pick(const json_t *pod, const sched_node *nodes, size_t n, size_t *chosen,
               dbuf *fit_error);
/* sched_pick_sampled for a prepared pod (the same decisions and texts). The
 * pick itself allocates nothing unless no node fits; nodes whose prep is
 * ready (sched_node_prepare) cost a few integer compares each. */
int sched_pick_pod(const sched_pod *sp, const sched_node *nodes, size_t n, sched_sample *sample,
                   size_t *chosen, dbuf *fit_error);

/* The quota PreFilter rejection (spec "Scheduling", step 2), appended to out:
 * `0/N nodes are available: quota exceeded: <quota>, requested: <r>, used: <u>,
 * limited: <h>. preemption: 0/N nodes are available: N Preemption is not helpful
 * for scheduling.` The strings are the admission message's pieces (rl_format).
 * 0 or SCHED_ENOMEM. The _rl form formats the three lists itself. */
int sched_quota_message(dbuf *out, size_t nnodes, const char *quota, const char *requested,
                        const char *used, const char *limited);
int sched_quota_message_rl(dbuf *out, size_t nnodes, const char *quota, const rlist *requested,
                           const rlist *used, const rlist *limited);

/* The condition the scheduler writes on a pod it cannot place (type, and the
 * reason of a pod that waits on quota or on nodes). */
#define SCHED_COND_SCHEDULED "PodScheduled"
#define SCHED_REASON_UNSCHEDULABLE "Unschedulable"

/* The quota a sched_quota_message names (nnodes >= 1): 1 with *name and *len
 * the quota's name inside msg, or 0 when msg is not such a message - a
 * FitError, SCHED_MSG_NO_NODES, or any text that merely mentions quota. The
 * message is read with the pieces sched_quota_message writes it with. */
int sched_quota_message_quota(const char *msg, const char **name, size_t *len);

/* The ResourceQuota an unscheduled pod waits on, from its PodScheduled
 * condition (status False, reason Unschedulable, a sched_quota_message), into
 * buf (truncated to n - 1 bytes); "" for every other pod. What the field
 * selector status.pendingOnQuota reads (api/kinds.c). */
void sched_pod_pending_quota(const json_t *pod, char *buf, size_t n);

/* Queue order (PrioritySort): <0 when a goes first. Higher spec.priority first
 * (absent = 0), then the earlier metadata.creationTimestamp (RFC 3339; a missing
 * or unparsable one sorts last), then namespace, then name. */
int sched_queue_cmp(const json_t *a, const json_t *b);
/* The same order's keys, for callers that sort many pods: compare priority
 * descending, then created ascending (nanoseconds; INT64_MAX when unknown). */
void sched_queue_keys(const json_t *pod, int64_t *priority, int64_t *created_ns);

/* Backoff before retrying a pod after `attempts` failed attempts: 0 for none,
 * then 1 s doubling to at most 10 s (podInitialBackoffSeconds,
 * podMaxBackoffSeconds). In milliseconds. */
int64_t sched_backoff_ms(int attempts);

/* ---- the unschedulable pods (upstream's unschedulablePods) ----
 * A pod no node fits is parked: it is not retried on a timer but when an
 * event may let it fit (sched_event_unparks), no sooner than its backoff
 * ends (sched_unpark_due), or when it has been parked SCHED_PARK_MAX_MS
 * (podMaxInUnschedulablePodsDuration: a missed event cannot strand it). Its
 * own spec changing retries it at once. Pods blocked on quota or errors are
 * not parked: quota has its own wake-ups, errors their backoff. */
#define SCHED_PARK_MAX_MS (5 * 60 * 1000)

/* The cluster events the scheduler follows (upstream's ClusterEvents). */
typedef enum {
    SCHED_EV_NODE_ADDED,
    SCHED_EV_NODE_UPDATED, /* see sched_node_update_unparks */
    SCHED_EV_NODE_DELETED,
    SCHED_EV_POD_ASSIGNED,  /* a pod counted on a node (bound, or assumed) */
    SCHED_EV_POD_FREED,     /* an assigned pod deleted, finished or unbound */
    SCHED_EV_POD_RESIZED,   /* an assigned pod's spec (so perhaps its requests) changed */
    SCHED_EV_BIND_FAILED,   /* an assumed pod's bind failed: its room is free again */
    SCHED_EV_QUOTA_CHANGED, /* a ResourceQuota's spec changed: wakes quota-blocked pods only */
} sched_event;

/* Whether the event may let a parked pod fit: room freed, or a node added or
 * changed (for SCHED_EV_NODE_UPDATED only when sched_node_update_unparks says
 * so). Events that only take room or nodes away never un-park. */
bool sched_event_unparks(sched_event ev);

/* Whether a node update from `old` to `cur` (v1 Nodes) may let a pod fit that
 * did not: what the filters and the fit read changed in the permissive
 * direction - status.allocatable or metadata.labels changed, a NoSchedule or
 * NoExecute taint removed or changed, spec.unschedulable cleared. Status
 * heartbeats and conditions never un-park. A NULL old is a new node (true). */
bool sched_node_update_unparks(const json_t *old, const json_t *cur);

/* When a pod parked with its backoff ending at `backoff_end` is due once an
 * event un-parks it at `now`: not before its backoff ends, so that a burst of
 * events does not retry every parked pod at once. */
int64_t sched_unpark_due(int64_t now, int64_t backoff_end);

/* Whether a pod parked at `parked_at` is flushed (retried once) at `now`. */
bool sched_park_expired(int64_t parked_at, int64_t now);

#endif
