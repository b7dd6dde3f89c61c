/* podcontrol.h - how a workload controller makes and removes pods: upstream's
 * PodControlInterface, ControllerExpectations, slowStartBatch and per-owner
 * backoff (pkg/controller/controller_utils.go, replica_set.go), in one place
 * for every controller that owns pods (ReplicaSet, ReplicationController,
 * Job).
 *
 * The rules it keeps for its callers:
 *  - Pods are created and deleted through the registry (reg_create,
 *    reg_delete), as any client's: validation, LimitRange defaults, the
 *    ResourceQuota check, pools and custom quotas apply; a refusal is the
 *    client's 403 with its exact message. There is no side door.
 *  - Every create or delete records an Event on the owner, with upstream's
 *    reasons and texts (source component as given to podctl_new):
 *        Normal  SuccessfulCreate  "Created pod: <name>"
 *        Warning FailedCreate      "Error creating: <the API error's message>"
 *                                  (e.g. `Error creating: pods "web-x7k2p" is
 *                                  forbidden: exceeded quota: q, requested:
 *                                  pods=1, used: pods=3, limited: pods=3`)
 *        Normal  SuccessfulDelete  "Deleted pod: <name>"
 *        Warning FailedDelete      "Error deleting: <message>"
 *    except, as upstream, no FailedCreate when the namespace is terminating
 *    and no FailedDelete when the pod is already gone. Events are written
 *    asynchronously in batches (registry/events.h's recorder): a burst of 500
 *    creates does not wait on 500 Event transactions. They pass client-go's
 *    spam filter (core/evfilter.h): at most 25 per owner, then one per 5
 *    minutes, so a 10,000-pod scale-up records 25 SuccessfulCreate Events.
 *  - Expectations (core/expect.h) are kept per owner key under a lock, so a
 *    controller may observe from any thread. The caller's protocol, as
 *    upstream's: expect (creations: a count; deletions: the pod keys) BEFORE
 *    acting; observe every pod ADDED (creation) and every pod deleted or
 *    marked for deletion (deletion) owned by the owner; creations that were
 *    not made (a failed create, or the rest of a batch skipped after one)
 *    are observed by the caller at once; sync (manage replicas) only when
 *    satisfied.
 *  - Slow start (podctl_slow_start): count calls in batches of 1, 2, 4, ...
 *    (upstream's slowStartBatch with SlowStartInitialBatchSize 1), each batch
 *    run in parallel on the podctl's worker threads, stopping after the first
 *    batch that had an error: a controller at its quota tries one pod, not
 *    500.
 *  - Backoff per owner (podctl_backoff_*): after a failed sync the owner
 *    waits 1 s, doubling per consecutive failure to 60 s; a success resets
 *    it. The caller decides what may wake an owner early (a freed quota).
 *
 * Threads: podctl_new starts `workers` threads for the batches and one event
 * recorder thread; podctl_free joins them. Every function is thread-safe.
 * Ownership: functions returning json_t* return a new reference the caller
 * owns; arguments are borrowed.
 */
#ifndef ALLOT_CONTROLLERS_PODCONTROL_H
#define ALLOT_CONTROLLERS_PODCONTROL_H

#include "api/status.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct podctl podctl;

/* Upstream's BurstReplicas: at most this many creations or deletions per sync. */
#define PODCTL_BURST 500
#define PODCTL_BACKOFF_BASE_MS 1000
#define PODCTL_BACKOFF_MAX_MS 60000

/* A podctl writing through store st, its Events from `component`
 * ("replicaset-controller"; copied), with `workers` threads for batches
 * (1..64). NULL with err set on failure. */
podctl *podctl_new(store *st, const char *component, int workers, char *err, size_t errlen);
/* Write the queued Events, stop the threads, free (NULL is fine). */
void podctl_free(podctl *pc);

/* ---- pods ---- */

/* A controllerRef to `owner` (a stored object: apiVersion, kind,
 * metadata.name, metadata.uid): {apiVersion, kind, name, uid,
 * controller: true, blockOwnerDeletion: true}. NULL when owner lacks one. */
json_t *podctl_controller_ref(const json_t *owner);

/* The pod upstream's GetPodFromTemplate makes from a PodTemplateSpec for
 * owner: template labels, annotations and finalizers copied, its spec
 * copied, generateName `generate_name` (NULL: "<owner name>-", or the bare
 * name when that is not a valid prefix), the owner's namespace and a
 * controllerRef to it. NULL with e set (422-like API_INVALID "unable to
 * create pods, no labels" when the template has none; API_INTERNAL when out
 * of memory). The caller may change the result (a Job adds its labels)
 * before podctl_create_pod. */
json_t *podctl_pod_from_template(const json_t *tmpl, const json_t *owner, const char *generate_name,
                                 api_err *e);

/* Create `pod` (borrowed) for `owner` through the registry and record
 * SuccessfulCreate or FailedCreate on the owner. 0 (*created, when not
 * NULL, gets the stored pod: caller owns), or -1 with e set to the API
 * error. */
int podctl_create_pod(podctl *pc, const json_t *owner, const json_t *pod, json_t **created,
                      api_err *e);

/* Delete pod ns/name if its uid is still `uid` (NULL: any), through the
 * registry (graceful for a running pod with a node agent), recording
 * SuccessfulDelete or FailedDelete on the owner. 0, or -1 with e set
 * (API_NOT_FOUND when it is already gone: no Event then). */
int podctl_delete_pod(podctl *pc, const json_t *owner, const char *ns, const char *name,
                      const char *uid, api_err *e);

/* Whether e is the refusal of a namespace being deleted (upstream's
 * NamespaceTerminatingCause): controllers treat it as nothing to do. */
bool podctl_namespace_terminating(const api_err *e);

/* ---- batches ---- */

/* One call of a batch: item i of count; 0, or -1 with e set. Runs on a
 * worker thread (or the caller's): must be thread-safe. */
typedef int (*podctl_fn)(void *ctx, size_t i, api_err *e);

/* slowStartBatch: fn for i = 0 .. count-1 in batches of initial (>= 1), then
 * doubling, each batch in parallel; stops after a batch with an error. The
 * number of calls that succeeded; the first error (in batch order of
 * completion) is copied to *first_err when not NULL. Returns when every
 * call started has finished. */
size_t podctl_slow_start(podctl *pc, size_t count, size_t initial, podctl_fn fn, void *ctx,
                         api_err *first_err);

/* fn for every i in parallel (upstream's deletes: one goroutine each).
 * The number that succeeded; the first error to *first_err. */
size_t podctl_parallel(podctl *pc, size_t count, podctl_fn fn, void *ctx, api_err *first_err);

/* ---- expectations (core/expect.h), per owner key ---- */

void podctl_expect_creations(podctl *pc, const char *owner, int n);
void podctl_expect_deletions(podctl *pc, const char *owner, const char *const *pod_keys, size_t n);
void podctl_creation_observed(podctl *pc, const char *owner);
void podctl_deletion_observed(podctl *pc, const char *owner, const char *pod_key);
bool podctl_satisfied(podctl *pc, const char *owner);
void podctl_forget(podctl *pc, const char *owner); /* expectations and backoff */
/* Every owner's expectations forgotten: after the caller rebuilt its cache
 * from a fresh list while none of its creates or deletes was in flight. */
void podctl_forget_all_expectations(podctl *pc);

/* ---- backoff, per owner key ---- */

/* A failed sync: the delay (ms) before the owner should be tried again. */
int64_t podctl_backoff_failure(podctl *pc, const char *owner);
/* A successful sync: no more waiting. */
void podctl_backoff_reset(podctl *pc, const char *owner);
/* Consecutive failures so far (0: not backing off). */
int podctl_backoff_failures(podctl *pc, const char *owner);

#endif
