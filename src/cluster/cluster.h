/* cluster.h - cluster mode: allot's books kept for an existing Kubernetes
 * cluster (issue 28; docs/cluster-mode.md).
 *
 * The cluster is the truth. allotd lists and watches what its decisions
 * read (namespaces, quotas, pods, pools, claims, custom quotas) into a
 * mirror (cluster/mirror.h) in a memory store, where the same registry,
 * ledger and pure core as standalone mode decide; it writes only through
 * the cluster's API. Out of the cluster (development), it installs its
 * CustomResourceDefinitions and a ValidatingWebhookConfiguration pointing
 * at itself.
 */
#ifndef ALLOT_CLUSTER_CLUSTER_H
#define ALLOT_CLUSTER_CLUSTER_H

#include "api/status.h"
#include "store/store.h"

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>

typedef struct cluster_opts {
    const char *kubeconfig;      /* NULL: the in-cluster config (ServiceAccount) */
    const char *webhook_address; /* "host:port" the cluster reaches allotd at: install
                                    the CRDs and webhooks pointing there; NULL: the
                                    manifests installed them (deploy/cluster) */
    const char *ca_pem;          /* allot's CA (the webhook's caBundle) */
    const char *own_namespace;   /* allot's own namespace, never sent to its webhooks */
} cluster_opts;

typedef struct cluster cluster;

/* Connect, install what webhook_address asks for, and start keeping st (a
 * memory store nobody else writes) in step with the cluster. Returns at
 * once: the caches fill in the background (cluster_synced). NULL with err. */
cluster *cluster_start(store *st, const cluster_opts *o, char *err, size_t errlen);
/* The webhook's check after its dry run allows a review
 * (cluster/release_guard.h, cluster/leave_guard.h): 0, 1 (decide again:
 * a quota the review leaves is frozen), or -1 with e; and what undoes the
 * freeze when the second decision refuses. */
struct ar_request;
/* Before the webhook decides an update or delete: wait (bounded) until the
 * mirror holds the object at the version the review changes (the API
 * server commits it only on top of that version), so the decision reads
 * at least what the write will replace: 0, or -1 with e (503, retryable)
 * when the mirror has not caught up in time. */
int cluster_admit_catch_up(cluster *c, const struct ar_request *r, api_err *e);
int cluster_admit_guard(cluster *c, const struct ar_request *r, api_err *e);
/* Whether standalone's dry run decides r: allot's own kinds and namespace
 * updates. What custom quotas count (pods) is decided by the cluster's own
 * admission and allot's guard only (cluster/cq_guard.h): the mirror's
 * books do not follow the cluster's writes. */
bool cluster_admit_dry_runs(const struct ar_request *r);
void cluster_admit_undo(cluster *c, const struct ar_request *r);
/* The mutating webhook (deferred quota, docs/deferred-cluster.md): a
 * pod created in a deferred namespace gets the extended resource that
 * sends it to allot's extender (one created on a node is refused: it would
 * never be charged); a ResourceQuota's deferred limits move into the
 * annotation allot holds them in (core/deferred_book.h). 0 with *patch
 * (NULL: none), or -1 with e. */
int cluster_admit_mutate(cluster *c, const struct ar_request *r, json_t **patch, api_err *e);
/* kube-scheduler's extender calls (cluster/extender.h). */
int cluster_extender_filter(cluster *c, const char *body, size_t len, char **out);
int cluster_extender_bind(cluster *c, const char *body, size_t len, char **out);
/* Every watched collection has been listed once (readiness). */
bool cluster_synced(const cluster *c);
void cluster_stop(cluster *c);

/* The ValidatingWebhookConfiguration allot installs (or the manifests
 * carry) for a webhook served at url (NULL: the Service allot/allot in
 * own_namespace) with CA bundle ca_pem: pure, for tests and `allotd
 * webhook-config`. Caller owns. */
json_t *cluster_webhook_config(const char *url, const char *ca_pem, const char *own_namespace);
/* The MutatingWebhookConfiguration allot.dev, the same way: its webhooks
 * on pods and ResourceQuotas of namespaces labelled for deferred quota. */
json_t *cluster_mutating_webhook_config(const char *url, const char *ca_pem,
                                        const char *own_namespace);

#endif
