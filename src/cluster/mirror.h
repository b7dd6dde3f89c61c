/* mirror.h - a cluster's objects in allot's store (cluster mode).
 *
 * In cluster mode the truth is the cluster: allot writes only through its
 * API, and keeps what it needs to decide in a store of its own (memory
 * backend), fed by the cluster's watches. The mirror turns what the
 * reflectors (kube/kube.h) deliver into store_ingest batches, so the books
 * above (the ledger, pool and custom-quota books, the registry's dry runs
 * the webhooks answer with) read the cluster as they read a standalone
 * store.
 *
 * Revisions. Each collection's watch orders its own events by the cluster's
 * resourceVersion, but nothing orders the events of two collections against
 * each other, and upstream asks clients to treat resourceVersions as opaque.
 * So the mirror gives every change it takes in a revision of its own
 * (the store's next, in the order they arrive), writes it as the object's
 * metadata.resourceVersion as the store requires, and keeps the cluster's
 * resourceVersion beside it (mirror_cluster_rv): what a write back to the
 * cluster must carry as its precondition (compare-and-swap).
 *
 * Objects arrive in the version the cluster serves them; the mirror stores
 * them in their kind's storage version (api_kind_to_storage), as a write
 * through the registry would.
 *
 * Thread-safe: reflectors call in from their own threads; one mutex orders
 * their batches.
 */
#ifndef ALLOT_CLUSTER_MIRROR_H
#define ALLOT_CLUSTER_MIRROR_H

#include "api/kinds.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct mirror mirror;

/* A mirror feeding st (borrowed; it must outlive the mirror, and no local
 * write may be waiting for its backend while the mirror feeds it). */
mirror *mirror_new(store *st);
void mirror_free(mirror *m);

/* After a (re)list of kind k's collection at cluster resourceVersion
 * list_rv: make the store hold exactly `items` (objects of kind k as the
 * cluster serves them; borrowed) of that kind. Objects the cluster no
 * longer has are deleted, changed ones modified, unchanged ones (same
 * cluster resourceVersion) left alone. 0, or -1 with err (nothing was taken
 * in). */
int mirror_replace(mirror *m, const api_kind *k, const json_t *items, const char *list_rv,
                   char *err, size_t errlen);

/* One watch event of kind k's collection: type "ADDED", "MODIFIED" or
 * "DELETED"; obj borrowed. An event the mirror already has (same cluster
 * resourceVersion) is skipped; deleting an object it does not hold is a
 * no-op. 0, or -1 with err. */
int mirror_event(mirror *m, const api_kind *k, const char *type, const json_t *obj, char *err,
                 size_t errlen);

/* The object ns/name of the core (v1) kind `resource` as the mirror's
 * store st holds it (a new reference), or NULL. */
json_t *mirror_core_obj(store *st, const char *resource, const char *ns, const char *name);

/* The cluster's resourceVersion of the object under store key `key` as the
 * mirror holds it, into buf: false when the mirror holds no such object. */
bool mirror_cluster_rv(mirror *m, const char *key, char *buf, size_t n);

/* Wait (at most timeout_ms) until the mirror holds the object under `key`
 * at cluster resourceVersion `crv` or later, or no longer holds it (it was
 * deleted since): after a write of allot's own, so that a decision made
 * next reads what was written. "Later" compares resourceVersions as
 * integers (etcd's revisions, which is what every kube-apiserver serves);
 * anything else only when equal. false on timeout. */
bool mirror_wait_crv(mirror *m, const char *key, const char *crv, int64_t timeout_ms);

/* How far the collection of `resource` (a store resource: "pods",
 * "<plural>.<group>") has been taken in: the highest cluster
 * resourceVersion of its lists and events, as an integer (etcd's
 * revisions); 0 when none was, or they are not integers. Every change of
 * that collection at or below it is in the mirror. */
uint64_t mirror_progress(mirror *m, const char *resource);
/* Whether a list of that collection has been taken in. */
bool mirror_listed(mirror *m, const char *resource);

/* A cluster resourceVersion as that integer, or 0 (NULL, empty, or not a
 * decimal integer). */
uint64_t mirror_rv_value(const char *rv);

typedef struct mirror_stats {
    uint64_t replaces, events, ingested, skipped, failed;
} mirror_stats;
void mirror_get_stats(mirror *m, mirror_stats *out);

#endif
