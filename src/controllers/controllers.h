/* controllers.h - the in-process controllers that finish what the registry starts.
 *
 * The registry only marks things: a deleted namespace gets deletionTimestamp and
 * phase Terminating, an object deleted with Foreground or Orphan propagation
 * gets a finalizer. Two controllers do the rest, as kube-controller-manager does:
 *  - namespace (namespace.c): empties a terminating namespace, then removes it;
 *  - garbage collector (gc.c): follows metadata.ownerReferences (Background,
 *    Foreground and Orphan propagation).
 * and the workload controllers run what users ask of workloads:
 *  - replicaset (replicaset.c): ReplicaSets and ReplicationControllers keep
 *    their number of pods (making them through podcontrol.h);
 *  - deployment (deployment.c): Deployments roll out ReplicaSets.
 *
 * Each controller is one thread that follows every store event through a watch
 * and rescans everything at start and every CTRL_RESYNC_SECONDS, so a restart in
 * the middle of a deletion resumes. Controllers write only through the registry
 * (reg_create, reg_delete, reg_update), so finalizers, admission and quota apply
 * to them as to any client; the one exception is the namespace's own removal, which must check
 * emptiness and delete in a single store transaction.
 */
#ifndef ALLOT_CONTROLLERS_CONTROLLERS_H
#define ALLOT_CONTROLLERS_CONTROLLERS_H

#include "api/kinds.h"
#include "api/status.h"
#include "controllers/workq.h"
#include "core/jsontext.h"
#include "store/store.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct controllers controllers;

/* Start every controller on `st` (which must outlive controllers_stop).
 * NULL with a message in err on failure. */
controllers *controllers_start(store *st, char *err, size_t errlen);
/* Stop and join every controller thread and free everything; NULL is fine. */
void controllers_stop(controllers *c);

/* ---- internal: shared by the files of src/controllers only ---- */

/* Every controller lists everything again this often: a safety net (events
 * drive the work; failures have their own retries), whose cost grows with
 * the store (at 100,000 pods a relist parses each of them), so as rare as
 * the quota recount's. */
#define CTRL_RESYNC_SECONDS 300
/* A workload's status (ReplicaSet, Deployment) is written at most once per
 * this many ms: a change within it is written when it ends. Pods starting
 * one by one would otherwise write their set's status, and so their
 * Deployment's, once per pod (3 writes where there was 1). */
#define CTRL_STATUS_PACE_MS 100
/* Whether statuses a and b (objects, or NULL) differ only in integer
 * members (counts, observedGeneration): what the next sync computes again
 * from what it sees. Only such a change may wait for CTRL_STATUS_PACE_MS; a
 * condition may be set once, by the sync that saw its cause, and is
 * written at once. */
bool ctrl_status_counts_only(const json_t *a, const json_t *b);
#define CTRL_WAIT_MS 500

/* One controller as the runner drives it. The runner opens a watch on every key,
 * calls resync, then for each batch of events calls event once per event and
 * flush once after the batch (so work triggered by many events runs once).
 * tick (optional) runs after every wait for events, at least every
 * CTRL_WAIT_MS: for work due at a time rather than on an event (backoff,
 * minReadySeconds, progress deadlines). The workload controllers keep their
 * queued keys and due times in a workq (workq.h): their flush and tick are
 * one workq_run, which looks at the keys due, not at every object.
 * `stop` turns true at shutdown: long loops check it between items. */
typedef struct ctrl_def {
    const char *name;
    void *(*init)(store *st, const atomic_bool *stop);
    void (*fini)(void *self);
    void (*event)(void *self, const store_event *ev);
    void (*flush)(void *self);
    void (*resync)(void *self);
    void (*tick)(void *self); /* optional: Jobs' backoff, deadlines and TTL too */
    /* optional: the events this controller looks at (NULL: every one); the
     * others never wake its thread. Runs as a store_watch_filter (on the
     * store's writer thread too): it may read only the event and what init
     * set and never changes. */
    bool (*takes)(void *self, const store_event *ev);
    /* optional, with tick: how long until tick has work, in ms (0: now), or
     * -1 when only an event can give it some; the thread sleeps that long
     * (without it, tick runs every CTRL_WAIT_MS). */
    int (*wait_ms)(void *self);
} ctrl_def;

extern const ctrl_def ctrl_namespace_def;
extern const ctrl_def ctrl_gc_def;
/* ReplicaSets and ReplicationControllers (replicaset.c). */
extern const ctrl_def ctrl_replicaset_def;
/* Deployments (deployment.c). */
extern const ctrl_def ctrl_deployment_def;
extern const ctrl_def ctrl_job_def;     /* job.c */
extern const ctrl_def ctrl_cronjob_def; /* cronjob.c */

/* Whether metadata.finalizers of obj holds f. */
bool ctrl_has_finalizer(const json_t *obj, const char *f);
/* Remove finalizer f from the object if it still has uid `uid` (NULL: any).
 * The registry deletes the object when this empties the finalizers of an
 * object being deleted. 0, or -1 (including when the object is gone). */
int ctrl_remove_finalizer(store *st, const api_kind *k, const char *ns, const char *name,
                          const char *uid, const char *f);
/* Write `status` over the status of ns/name (its status subresource) if the
 * object still has uid `uid`: one replaced meanwhile is API_NOT_FOUND, as
 * one deleted. 0 with *out the object written (the caller's reference), or
 * -1 with e set. */
int ctrl_write_status(store *st, const api_kind *k, const char *ns, const char *name,
                      const char *uid, const json_t *status, json_t **out, api_err *e);

/* A set of strings (namespaces or keys to revisit after a batch of events),
 * in the order added. Past a few dozen members a hash index keeps adding
 * O(1) (a burst of 10,000 new pods is 10,000 adds). Zero-initialised is
 * empty; a set may be moved by copying the struct and zeroing the source. */
typedef struct ctrl_set {
    char **v;
    size_t n, cap;
    struct strmap *idx; /* member -> itself, once n passes CTRL_SET_INDEX_AT */
} ctrl_set;
void ctrl_set_add(ctrl_set *s, const char *str);
void ctrl_set_clear(ctrl_set *s); /* empties; keeps the array */
void ctrl_set_free(ctrl_set *s);

/* Queue in q (workq_mark) the key of every object stored under `prefix`: the
 * resync of a controller that reads its objects at their sync. 0, or -1 when
 * the store cannot list (nothing queued; the next resync tries again). */
int ctrl_mark_listed(store *st, const char *prefix, workq *q);
/* A ctrl_def.wait_ms for a controller whose timed work is all in q: 0 when
 * keys are queued, the time to its first due key from now_ms (the clock q's
 * times are on), or -1. */
int ctrl_workq_wait_ms(const workq *q, int64_t now_ms);

/* Member `key` of stored object o's metadata, found in its text unparsed
 * (core/jsontext.h: metadata comes first, where a search of the whole text
 * read, on every status write of a custom quota, each of its claims): 1
 * found (*v), 0 absent (or no o), -1 cannot tell. */
int ctrl_meta_member(const store_obj *o, const char *key, jt_val *v);
/* Whether o's metadata may have member key: true also when its text cannot
 * tell (the caller then reads the parsed object). */
bool ctrl_meta_may_have(const store_obj *o, const char *key);
/* Whether o's metadata.ownerReferences may name an owner of kind `kind`,
 * read from its text unparsed (a Job's controller skips the pods of
 * ReplicaSets without parsing them): false only when it surely does not. */
bool ctrl_may_be_owned_by(const store_obj *o, const char *kind);

#endif
