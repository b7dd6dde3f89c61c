/* reconcile.h - what the books decide on the mirror, as writes to the
 * cluster (cluster mode's reconciler; the leader runs it).
 *
 * The decision is standalone mode's own: the registry reconciles a pool
 * in full (its claims bound or queued in Capsule's order, each selected
 * namespace's capsule-pool-<pool> ResourceQuota), run as a dry run on the
 * mirror with its would-be writes captured (store_capture_aborts). Each
 * becomes a write to the cluster carrying the cluster's resourceVersion of
 * the version decided on, so a write decided on a stale mirror fails with
 * 409 instead of overwriting (docs/cluster-mode.md). Objects the cluster
 * already holds as decided produce no write, so the reconciler settles.
 */
#ifndef ALLOT_CLUSTER_RECONCILE_H
#define ALLOT_CLUSTER_RECONCILE_H

#include "cluster/mirror.h"
#include "store/store.h"

#include <jansson.h>

#include <stddef.h>

typedef struct cluster_write {
    char method[8]; /* "POST", "PUT" or "DELETE" */
    char path[600]; /* the API path written */
    char *body;     /* JSON (malloc'd), or NULL */
    char key[512];  /* the mirror's key of the object */
} cluster_write;

typedef struct cw_list {
    cluster_write *v;
    size_t n, cap;
} cw_list;

void cw_list_free(cw_list *l);
/* A new write at the end of l (zeroed), or NULL when out of memory. */
cluster_write *cw_list_add(cw_list *l);
struct api_kind;
/* What the cluster is sent for obj of kind k: in k's version, without
 * managedFields, at the cluster's resourceVersion crv (NULL: a create,
 * without the identity the dry run made up). Caller frees; NULL on OOM. */
char *cw_body(const struct api_kind *k, const json_t *obj, const char *crv);

/* The writes that bring pool `name`, its claims and its namespaces' quotas
 * in the cluster to what the books decide on st (the mirror m feeds), the
 * pool's status first: it is where an allocation is recorded, so it must
 * commit before the quota that hands the allocation out. Appended to out.
 * 0, or -1 with err (the pool is not in the mirror, or the decision
 * failed). The namespaces the pool selects, as decided, are added to
 * `selected` (an object used as a set) when it is not NULL. */
int reconcile_pool_plan(store *st, mirror *m, const char *name, cw_list *out, json_t *selected,
                        char *err, size_t errlen);

/* The status writes that bring every CustomQuota and GlobalCustomQuota in
 * the cluster to what a full recount of the objects the mirror holds gives
 * on st (the mirror m feeds): usage, claims, targets, namespaces, Ready,
 * as standalone writes them, each at the cluster's resourceVersion of the
 * quota version counted on. A reservation past its expiry whose object the
 * mirror does not hold is dropped when gone(gone_arg, reservation) says
 * the object is surely not in the cluster (cq_reservation_gone; NULL: it
 * is dropped). Appended to out. 0, or -1. Not inside a store transaction
 * (gone may ask the cluster). */
int reconcile_cq_plan(store *st, mirror *m, bool (*gone)(void *arg, const json_t *reservation),
                      void *gone_arg, cw_list *out);

/* The label allot keeps on every namespace some pool selects, so that its
 * webhooks can be scoped to them (docs/cluster-mode.md, "Safe failure"). */
#define POOLED_LABEL "allot.dev/pooled"

/* The label writes that make POOLED_LABEL mark exactly the namespaces of
 * `selected` among those st holds (merge patches: a label is the same
 * whoever writes it). Appended to out. 0 or -1. */
int reconcile_pooled_labels(store *st, const json_t *selected, cw_list *out);

/* The label allot keeps on every namespace some custom quota covers (a
 * CustomQuota's own, those a GlobalCustomQuota selects), so that the
 * webhook on the kinds they count is scoped to them. */
#define COUNTED_LABEL "allot.dev/counted"

/* The label writes that make COUNTED_LABEL mark exactly those namespaces.
 * Appended to out. 0 or -1. */
int reconcile_counted_labels(store *st, cw_list *out);

#endif
