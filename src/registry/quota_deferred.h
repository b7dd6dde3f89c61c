/* quota_deferred.h - deferred ResourceQuota (spec deferred-quota.md): the
 * namespace mode, the scheduler's quota PreFilter, and the bind re-check. */
#ifndef ALLOT_REGISTRY_QUOTA_DEFERRED_H
#define ALLOT_REGISTRY_QUOTA_DEFERRED_H

#include "core/dbuf.h"
#include "core/rlist.h"
#include "registry/quota_ledger.h"
#include "registry/registry.h"

#define DEFERRED_MODE_LABEL "quota.allot.dev/mode"

/* Whether compute quota is deferred in namespace ns: the DeferredResourceQuota
 * gate is on and the namespace is not labelled quota.allot.dev/mode=admission. */
bool quota_ns_deferred(store_txn *t, store *st, const char *ns);
/* The same rule for a Namespace object (NULL: a namespace not stored). */
bool quota_ns_obj_deferred(const json_t *ns);

/* A pod the scheduler has assumed and is binding: its store key and its
 * deferred usage. */
typedef struct quota_assumed {
    const char *key;
    const rlist *deferred;
} quota_assumed;

/* The scheduler's quota PreFilter for an unassigned pod in a deferred
 * namespace: its deferred usage against every matching quota, with used =
 * stored usage + the usage of pods assumed, not yet bound. Two ways to count
 * the assumed pods:
 *  - pods NULL: `assumed` (the sum of their deferred usage; NULL: none) is
 *    added to every quota. Cheap, but a pod whose bind has committed while the
 *    caller still holds it as assumed counts twice: an over-estimate;
 *  - else the `npods` pods themselves, read after the quotas: a pod assigned
 *    (or gone) at a revision no later than a quota's version is in that
 *    quota's stored usage already and is not added again. Exact, but for a pod
 *    written again after its bind, which still counts twice.
 * 0 fits (*deferred = the pod's deferred usage, caller frees; NULL outside
 * deferred namespaces), 1 blocked (msg holds the condition message for
 * `nnodes` nodes, `quota` the blocking quota's name, and *demand - unless
 * demand is NULL - what the pod would add to that quota: its deferred usage
 * masked to the quota's hard names, caller frees), -1 error. *deferred and
 * *demand are NULL whenever they are not set as above. */
int quota_deferred_prefilter(store *st, const json_t *pod, const rlist *assumed,
                             const quota_assumed *pods, size_t npods, size_t nnodes,
                             rlist **deferred, dbuf *msg, char *quota, size_t quota_len,
                             rlist **demand);

/* The bind re-check, inside the binding transaction: the pod's deferred usage
 * against the namespace's `n` quotas as the transaction sees them. On success
 * new_used[i] is quotas[i]'s new usage to stage (NULL: unchanged; caller
 * frees); on "exceeded quota" a 403 in upstream's words and nothing to stage. */
int quota_deferred_bind(const ql_view *quotas, size_t n, const json_t *pod, rlist **new_used,
                        api_err *e);

/* What the bind would charge, for an explanation (registry/explain.h): for
 * each of the `n` quotas the pod's deferred usage concerns, row(arg, i, hard,
 * used, want, after) with want = that usage masked to quota i's hard and
 * after = used + want (past hard where the bind would fail). 0, or -1 out of
 * memory. */
typedef void (*quota_deferred_row_fn)(void *arg, size_t i, const rlist *hard, const rlist *used,
                                      const rlist *want, const rlist *after);
int quota_deferred_each(const ql_view *quotas, size_t n, const json_t *pod,
                        quota_deferred_row_fn row, void *arg);

#endif
