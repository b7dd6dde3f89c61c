/* pool_books.h - a ResourcePool's books: what pool admission decides from.
 *
 * The books of a pool are its spec, the namespaces it selects and the state
 * of its claims (core/pool.h: which are bound, with their sticky amounts,
 * which wait, with Capsule's messages). They are a function of the stored
 * pool and the stored claims: a claim is bound when its status says so
 * (status.pool.uid is the pool's, Exhausted=False), and only allot writes
 * claim statuses, in the transaction that decides them.
 *
 * The books live on the ledger (registry/ledger.h) as an in-place kind: a
 * claim write changes them in memory, O(resources) when nothing waits,
 * instead of re-reading every claim of the pool; an aborted transaction
 * drops them and they are loaded again from the store (one full reconcile).
 * The pool's status is derived from them and written behind, at most a
 * flush interval late and before any client reads pools.
 *
 * This header also carries the small JSON helpers and the full loader
 * (pb_ctx: a pool and all its claims as stored) that pool admission shares
 * with the books. Used under the store's writer lock (inside transactions).
 */
#ifndef ALLOT_REGISTRY_POOL_BOOKS_H
#define ALLOT_REGISTRY_POOL_BOOKS_H

#include "api/pool_kinds.h"
#include "api/status.h"
#include "core/pool.h"
#include "core/strmap.h"
#include "registry/conditions.h"
#include "registry/ledger.h"
#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define PB_CLAIMS_PREFIX "resourcepoolclaims." POOL_GROUP "/"
#define PB_POOLS_PREFIX "resourcepools." POOL_GROUP "//"

/* ---- JSON helpers (borrowed results; "" for a missing string) ---- */
const json_t *pb_get(const json_t *o, const char *k);
const char *pb_str(const json_t *o, const char *k);
const char *pb_meta(const json_t *obj, const char *k);
/* A claim's place in its pool's queue (Unix seconds): when it was last
 * released (status.releasedAt), else its creationTimestamp. */
int64_t pb_queued_since(const json_t *obj);
void pb_set_rv(json_t *obj, int64_t rv);
/* Store obj at key in t with t's revision as its resourceVersion. */
int pb_put(store_txn *t, const char *key, json_t *obj, api_err *e);
rlist *pb_rl(const json_t *v); /* a resource list object as an rlist; NULL on error */
/* Whether stored claim c is bound to the pool with uid `uid`. */
bool pb_bound_to(const json_t *c, const char *uid);

/* ---- a pool and all its claims, as stored ---- */
typedef struct pb_claim {
    json_t *obj;       /* the claim as it will be stored (a reference); self: the admitted object */
    rlist *req;        /* spec.claim */
    rlist *stored_req; /* spec.claim of the stored version when bound to this pool, else NULL */
    pool_claim pc;
    bool self;
    bool selected; /* in a selected namespace */
    char *why;     /* not in the pool: the Ready=False message */
} pb_claim;

typedef struct pb_ctx {
    json_t *pool; /* as it will be stored (a reference) */
    const char *name, *uid;
    rlist *hard, *defaults;
    pool_view view;
    json_t *namespaces; /* sorted array of selected namespace names */
    pb_claim *claims;
    size_t n, cap;
} pb_ctx;

/* The pool and the namespaces it selects (ns_new, if not NULL, is a
 * namespace being written, in place of its stored version). */
int pb_load_pool(store_txn *t, json_t *pool, pb_ctx *pc, const json_t *ns_new, api_err *e);
/* The claims whose spec.pool names the pool or that are bound to it, with
 * `self` (the claim being written, may be NULL) in place of its stored
 * version, or left out when `self_gone`. */
int pb_load_claims(store_txn *t, pb_ctx *pc, json_t *self, const json_t *self_old, bool self_gone,
                   api_err *e);
bool pb_ns_selected(const pb_ctx *pc, const char *ns);
/* Whether pool `pool` selects namespace object `ns` (not terminating). */
bool pb_selects_ns(const json_t *pool, const json_t *ns);
/* The bound claims as stored, with their stored amounts. */
pool_state *pb_stored_state(const pb_ctx *pc, api_err *e);
void pb_ctx_free(pb_ctx *pc);

/* The pool's status for these books (a new object), from its old status. */
json_t *pb_status_json(const json_t *pool, const pool_view *view, json_t *namespaces,
                       const pool_state *st, const char *now, const json_t *old_status);

/* ---- the books ---- */
typedef struct pool_book {
    json_t *pool; /* the stored version they were loaded from (metadata and spec) */
    const char *name, *uid;
    rlist *hard, *defaults;
    pool_view view;
    json_t *namespaces; /* sorted array of the selected namespaces' names */
    strmap *selected;   /* the same, for lookups */
    pool_state *state;
    /* caches: */
    bool verified;       /* the stored status was checked against the books */
    json_t *last_status; /* the status last written (or loaded) */
} pool_book;

/* The books of pool `name` as t sees them: 0 with *en NULL when there is no
 * such pool; -1 with e set on error. */
int pool_book_find(store_txn *t, const char *name, ledger_entry **en, api_err *e);
/* The books of stored pool version o. NULL with e set. */
ledger_entry *pool_book_of(store_txn *t, store_obj *o, api_err *e);
static inline const pool_book *pool_book_value(const ledger_entry *en)
{
    return ledger_value(en);
}
/* The books of en, to be changed by t (pool_apply_claim and friends); the
 * pool's status is written behind. NULL with e set. */
pool_book *pool_book_modify(store_txn *t, ledger_entry *en, api_err *e);
bool pool_book_selects(const pool_book *b, const char *ns);
/* A pool read for the first time since it was loaded has its stored status
 * checked (after a crash it may trail: it is a derived write); a status that
 * differs is written again. Call in t before clients read pools. */
/* reg_view_fn of pools: pool o with the status its books say, when its
 * stored status trails them; NULL to serve it as stored. */
json_t *pool_book_view(store_txn *t, store_obj *o, store_obj *cur);
int pool_book_verify(store_txn *t, ledger_entry *en, api_err *e);

#endif
