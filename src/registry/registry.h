/* registry.h - Kubernetes object semantics on top of the store.
 *
 * Create, update, delete as the API server defines them: server-set
 * metadata (uid, creationTimestamp, generation, resourceVersion), defaulting,
 * validation, admission, optimistic concurrency, finalizers and graceful
 * deletion, namespace lifecycle. The HTTP handlers and the controllers both
 * go through here, so every write obeys the same rules.
 *
 * Each call is one store transaction: admission (e.g. quota) reads and
 * writes inside the same transaction as the object, so a charge and the
 * object it charges for commit together or not at all.
 */
#ifndef ALLOT_REGISTRY_REGISTRY_H
#define ALLOT_REGISTRY_REGISTRY_H

#include "api/kinds.h"
#include "api/status.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>

typedef enum { REG_CREATE, REG_UPDATE, REG_DELETE } reg_op;

/* An admission plugin: runs inside the write transaction, after defaulting
 * and validation. It may modify `obj` (mutating) and write other objects
 * through the transaction (e.g. quota status). Returns 0 or -1 with `e` set. */
typedef struct reg_admission {
    const char *name;
    int (*admit)(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                 const json_t *old, bool dry_run, api_err *e);
} reg_admission;

/* Plugins run in registration order; register before serving. */
int reg_admission_register(const reg_admission *a);

/* The admission decisions so far: fn(plugin "", "allowed", reason "", n) for
 * the writes every plugin allowed, then fn(plugin, "denied", reason, n) for
 * each plugin and Status reason that refused any (dry runs included). */
typedef void (*reg_decision_fn)(void *arg, const char *plugin, const char *result,
                                const char *reason, unsigned long n);
void reg_admission_decisions(reg_decision_fn fn, void *arg);

/* An index plugin: what a kind logic keeps per stored object beside labels and
 * fields (store_index.ext; e.g. quota's usage facts), computed by the store's
 * indexer from every object as written or loaded. Register before the store
 * opens (it indexes what it loads). */
typedef void (*reg_index_fn)(const api_kind *k, const json_t *obj, store_index *out);
int reg_index_register(reg_index_fn fn);

/* A read view of kind k, for values kept ahead of the store (a status
 * written behind by a ledger, a condition that follows other objects): o
 * (the version readers see, durable) as readers are served it, rendered from
 * what is in memory (a new object, o's key and resourceVersion), or NULL to
 * serve it as stored. It runs in a transaction t that writes nothing
 * (store_begin ... store_abort); `cur` is the version t sees (o, or a newer
 * one not durable yet, e.g. a status the ledger just wrote), the one the
 * books are kept for. Reads never write. Register before serving. */
typedef json_t *(*reg_view_fn)(store_txn *t, store_obj *o, store_obj *cur);
int reg_read_view_register(const api_kind *k, reg_view_fn view);

/* A kind's write hook (upstream's BeginCreate, BeginUpdate and AfterDelete
 * storage hooks): runs inside the write's transaction, on every create,
 * update and removal of an object of kind k, before admission. On a create
 * or update it runs before the object is validated, and may complete it (a
 * Service's allocated cluster IP); it may keep state that commits or rolls
 * back with t (store_txn_on_end), dry runs included (they abort). op
 * REG_DELETE: the object is being removed (obj its last version, old NULL).
 * `sub` is the subresource written ("" for the object). 0, or -1 with e set:
 * the write fails with e. Validation of a hooked kind's objects moves inside
 * the writer lock (after the hook). Register before the store serves writes. */
typedef int (*reg_write_hook_fn)(void *arg, store_txn *t, reg_op op, const char *sub, json_t *obj,
                                 const json_t *old, bool dry_run, api_err *e);
int reg_write_hook_register(const api_kind *k, reg_write_hook_fn fn, void *arg);

/* A listener for changes of the kind table: what resolved kinds by name
 * (custom quotas' sources: "no matches for kind") looks again. Called by
 * whoever publishes or retires kinds defined at run time (the
 * CustomResourceDefinition controller), on its thread, outside any
 * transaction. Register before serving. */
int reg_kinds_listener_register(void (*changed)(store *st));
void reg_kinds_changed(store *st);

/* Store indexer for store_open: labels and selector fields per object, and
 * the index plugins' part. */
void reg_indexer(const char *key, const json_t *obj, store_index *out);

/* Who writes, as metadata.managedFields records it (api/fieldmanager.h).
 * Every write through the registry is recorded: the writer's fields become
 * its own, under `manager` (operation Update, the subresource written). */
typedef struct reg_writer {
    const char *manager; /* the field manager: fieldManager, or the client's user agent */
    /* The mutation is a server-side apply (fm_apply): it has recorded the
     * managedFields itself, and an absent object is created by it (the
     * mutation gets cur NULL; reg_update_as says *created). */
    bool apply;
    /* When given: the version written (a reference, or NULL when nothing was
     * written or the kind serves another version than it stores), whose
     * text is exactly the object handed back, for a response sent without
     * serialising it again. */
    store_obj **stored;
} reg_writer;

/* allot's own components (controllers, node agent, scheduler) write as
 * manager "allotd". */
extern const reg_writer REG_WRITER_ALLOTD;

/* Create `obj` (borrowed; copied) in namespace ns ("" for cluster scope).
 * On success *out is the stored object (caller owns). reg_create writes as
 * REG_WRITER_ALLOTD. */
int reg_create(store *st, const api_kind *k, const char *ns, const json_t *obj, bool dry_run,
               json_t **out, api_err *e);
int reg_create_as(store *st, const api_kind *k, const char *ns, const json_t *obj,
                  const reg_writer *w, bool dry_run, json_t **out, api_err *e);

/* Compute the desired object from the current one (borrowed). Returns a new
 * object, or NULL with e set. */
typedef json_t *(*reg_mutate_fn)(const json_t *cur, void *ctx, api_err *e);

/* Update (PUT, PATCH, status writes). `sub` is "" or "status". The mutation
 * runs inside the transaction, so it always sees the latest object; a
 * resourceVersion in the result is a precondition (409 Conflict). reg_update
 * writes as REG_WRITER_ALLOTD; with w->apply an absent object is created
 * from fn(NULL) (*created true; created may be NULL otherwise). */
int reg_update(store *st, const api_kind *k, const char *ns, const char *name, const char *sub,
               reg_mutate_fn fn, void *ctx, bool dry_run, json_t **out, api_err *e);
int reg_update_as(store *st, const api_kind *k, const char *ns, const char *name, const char *sub,
                  reg_mutate_fn fn, void *ctx, const reg_writer *w, bool dry_run, json_t **out,
                  bool *created, api_err *e);

typedef struct reg_delete_opts {
    bool dry_run;
    long long grace_seconds; /* -1 when not given */
    const char *propagation; /* "Orphan" | "Background" | "Foreground" | NULL */
    const char *pre_uid;     /* preconditions, or NULL */
    const char *pre_rv;
} reg_delete_opts;

/* Delete. *out is the object: as removed (*gone true) or as marked for
 * deletion with deletionTimestamp (finalizers pending, *gone false). */
int reg_delete(store *st, const api_kind *k, const char *ns, const char *name,
               const reg_delete_opts *o, json_t **out, bool *gone, api_err *e);

/* Bind a pod to a node (pods/binding): sets spec.nodeName and the PodScheduled
 * condition in one transaction, through admission (the quota re-check of
 * deferred quota runs there, with subresource "binding"). 409 if the pod is
 * already bound or being deleted. *out (may be NULL) gets the bound pod. */
int reg_bind(store *st, const char *ns, const char *name, const char *node, bool dry_run,
             json_t **out, api_err *e);

/* While set on a thread, its dry runs are asked for a verdict only
 * (allowed, or refused and why), not for the object as it would be: an
 * admission plugin may then skip what only shapes the result, such as a
 * claim's binding, whose books a dry run would change and, aborting, drop
 * (the next write reloads them: O(claims) per review). For the admission
 * webhook (server/webhook.c). */
void reg_set_verdict_only(bool on);
bool reg_verdict_only(void);

/* With a node agent (or kubelets), deleting a running pod bound to a node is
 * graceful: it gets deletionTimestamp and the node's agent removes it once it
 * has stopped. Without one, deletion is immediate. Set once at startup. */
void reg_set_graceful_pod_deletion(bool on);

/* Objects of kind k (read from the store: durable) as readers are served
 * them: each objs[i] whose kind has a read view and whose stored version is
 * still the current one is replaced by its view (store_obj_view), when the
 * view differs. Writes nothing. */
void reg_read_views(store *st, const api_kind *k, store_obj **objs, size_t n);

/* Fetch and parse one object as readers are served it (reg_read_views);
 * NULL (and 404 in e) if absent. */
json_t *reg_get(store *st, const api_kind *k, const char *ns, const char *name, api_err *e);

/* Helpers shared with controllers. */
void reg_new_uid(char out[37]);
void reg_now_rfc3339(char *buf, size_t n);

#endif
