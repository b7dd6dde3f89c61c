/* store.h - the object store: one interface for every backend.
 *
 * Objects are JSON documents under keys "<resource>/<namespace>/<name>"
 * (namespace empty for cluster-scoped kinds; resource qualified by group
 * for non-core kinds, e.g. "deployments.apps/ns/web"). One store-wide
 * revision orders every write; all writes of one transaction share it.
 *
 * Invariants this module keeps:
 *  - Transactions are serialized: a transaction sees every write committed
 *    before it, and nothing can commit between its reads and its writes.
 *    Quota admission relies on this to never pass a hard limit.
 *  - store_commit returns only once the backend has made the write durable.
 *    Watchers see an event only after it is durable, in revision order.
 *  - If the backend cannot persist a batch the process aborts: memory must
 *    never diverge from disk silently (the same rule as PostgreSQL's fsync panic).
 *
 * Objects handed out (store_obj) are immutable and reference counted;
 * every function returning one returns a new reference: store_obj_unref it.
 * Reads run under a shared lock and never touch the backend.
 */
#ifndef ALLOT_STORE_STORE_H
#define ALLOT_STORE_STORE_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct store store;
typedef struct store_txn store_txn;
typedef struct store_watch store_watch;

/* Derived data the layer above attaches to each object when it is written
 * or loaded: selector fields and an opaque per-object cache (e.g. quota usage). */
typedef struct store_index {
    json_t *labels; /* metadata.labels, owned (may be NULL) */
    char *fields;   /* packed "label\0value\0...\0" selector fields, owned (may be NULL) */
    void *ext;      /* owned; freed with ext_free */
    void (*ext_free)(void *);
} store_index;

typedef struct store_obj {
    atomic_int refs;
    int64_t rv;     /* revision that last wrote this object */
    char *key;      /* "pods/ns/name" */
    const char *ns; /* into nsname: namespace ("" when cluster-scoped) */
    const char *name;
    char *nsname; /* ns '\0' name */
    char *json;   /* compact JSON, metadata.resourceVersion == rv */
    size_t len;
    store_index idx;
    /* store_obj_doc's parse, kept while the store's budget for them allows
     * (under the store's doc lock; see store_obj_doc). */
    json_t *doc;
    struct store *s; /* the store whose doc cache holds doc */
    struct store_obj *doc_prev, *doc_next;
    atomic_bool doc_linked; /* in the cache (set under its lock, cleared last) */
    /* For the layer above (the registry's ledger keeps its entry for this
     * version here): read and written only by the writer-lock holder, never
     * by the store. */
    void *above;
} store_obj;

void store_obj_ref(store_obj *o);
void store_obj_unref(store_obj *o);
/* A version of o as a reader is served it but not stored (a view: o's key
 * and resourceVersion with another text, e.g. a status rendered from books
 * kept in memory): `text` (malloc'd, len bytes, NUL-terminated) is taken,
 * also on failure. Its index is o's labels and fields (what selectors
 * read). In no store: its parse is not cached. NULL when out of memory. */
store_obj *store_obj_view(const store_obj *o, char *text, size_t len);
/* Parse the stored JSON (caller owns the result). */
json_t *store_obj_parse(const store_obj *o);
/* Only the members named by `paths` (NULL-terminated; "status" for a whole
 * top-level member, "metadata.labels" for one inside one; at most two
 * levels), found in the text without parsing the rest: an object holding
 * those of them o has, at the same places. For readers that need a few
 * members of large objects (a pod's managedFields and spec are most of it).
 * When the text cannot tell (see core/jsontext.h), the whole object. NULL
 * when out of memory or o is not valid JSON. */
json_t *store_obj_parse_parts(const store_obj *o, const char *const *paths);
/* The object without member `path` ("metadata.managedFields": at most two
 * levels), whose text is skipped, not parsed: for readers of most of an
 * object but not of its largest member. The whole object when the text
 * cannot tell; NULL when out of memory or o is not valid JSON. */
json_t *store_obj_parse_sans(const store_obj *o, const char *path);
/* The stored JSON parsed once and shared: a new reference to a value every
 * caller shares and none may modify (jcopy it to change it: core/jdump.h). Each
 * version is parsed at most once while its parse stays in the store's doc
 * cache, which keeps the most recently parsed or written versions within a
 * byte budget (store_config.doc_cache_bytes): a version read by several
 * controllers after its write is parsed once, not once each. NULL if it
 * does not parse. */
json_t *store_obj_doc(store_obj *o);
/* The cached parse of o if there is one (a new reference), else NULL: for a
 * caller that would rather parse a part than the whole. */
json_t *store_obj_doc_cached(const store_obj *o);
/* A parse of o to read, never to change: its cached parse when it has one
 * (no parsing at all), else only what the reader needs parsed: the members
 * outside `path` (store_obj_parse_sans) or `paths` (store_obj_parse_parts).
 * For controllers reading every version of busy objects. */
json_t *store_obj_view_sans(const store_obj *o, const char *path);
json_t *store_obj_view_parts(const store_obj *o, const char *const *paths);

/* The layer above computes a store_index from a parsed object; the store calls
 * it when loading from disk. Must be pure and thread-safe. */
typedef void (*store_indexer)(const char *key, const json_t *obj, store_index *out);

/* ---- backend interface (persistence) ---- */
typedef enum { STORE_EV_ADDED = 1, STORE_EV_MODIFIED, STORE_EV_DELETED } store_ev_type;

/* One write as the backend sees it; also one retained watch event. */
typedef struct store_op {
    store_ev_type type;
    int64_t rv;
    const char *key;
    const char *json; /* new value, or the last value for DELETED */
    size_t len;
    bool no_history; /* a coalesced derived write: store the value, keep no event */
} store_op;

typedef struct store_backend {
    void *impl;
    /* Report every stored object, then every retained event (oldest first), and
     * the last revision. Called once, before anything else. */
    int (*load)(void *impl, void *ctx,
                void (*on_object)(void *ctx, const char *key, int64_t rv, const char *json,
                                  size_t len),
                void (*on_event)(void *ctx, const store_op *ev), int64_t *rev, char *err,
                size_t errlen);
    /* Persist ops (already in revision order) and the store revision `rev`
     * durably, in one transaction; n may be 0. 0 or -1. */
    int (*write_batch)(void *impl, const store_op *ops, size_t n, int64_t rev, char *err,
                       size_t errlen);
    /* Drop events older than rv (watch history); best effort. */
    void (*compact)(void *impl, int64_t rv);
    void (*close)(void *impl);
} store_backend;

/* SQLite backend in DIR/allot.db (WAL, synchronous=FULL). */
int store_sqlite_open(const char *dir, store_backend *out, char *err, size_t errlen);
/* Memory-only backend for tests: durable for the life of the process. */
void store_memory_backend(store_backend *out);

/* ---- the store ---- */
typedef struct store_config {
    size_t event_history;      /* events kept for watch resumption (default 25000) */
    unsigned derived_flush_ms; /* derived writes reach the disk at most this late (default 100) */
    size_t history_bytes;      /* event_history's events hold at most this many bytes of JSON
                                  (default 64 MiB; the newest event is kept whatever its size) */
    size_t doc_cache_bytes;    /* parsed objects kept (store_obj_doc), at most about this much
                                  memory (default 32 MiB) */
    size_t max_object_bytes;   /* the largest value store_txn_put stores, in bytes of compact
                                  JSON (default STORE_DEFAULT_MAX_OBJECT_BYTES) */
} store_config;

/* The object size limit: etcd's default --max-request-bytes, 1.5 MiB, the
 * bound every object of an upstream cluster lives under (docs/decisions.md).
 * Measured on the compact JSON the store keeps anyway, so checking it costs
 * a comparison. */
#define STORE_DEFAULT_MAX_OBJECT_BYTES ((size_t)1572864)
/* store_txn_put's answer for a value over the limit: nothing was written and
 * the transaction goes on as if the put had not been called. */
#define STORE_TOO_LARGE (-2)

/* Takes ownership of the backend (closed by store_close). NULL on error. */
store *store_open(store_backend *be, store_indexer indexer, const store_config *cfg, char *err,
                  size_t errlen);
void store_close(store *s);

int64_t store_revision(store *s);        /* last committed revision */
int64_t store_oldest_revision(store *s); /* oldest revision a watch may start after */

store_obj *store_get(store *s, const char *key);
size_t store_count(store *s, const char *resource);

/* Objects whose key starts with `prefix` ("pods/" or "pods/ns/"), sorted by key,
 * starting after `after_key` (NULL: from the start), at most `limit` (0: all).
 * *out is malloc'd (caller frees the array and unrefs each); *rev is the
 * revision the snapshot reflects; *more tells whether objects remain. */
int store_list(store *s, const char *prefix, const char *after_key, size_t limit, store_obj ***out,
               size_t *n, int64_t *rev, bool *more);

/* Recompute the index (the store_indexer's part) of every object under
 * `prefix`, as when they were loaded: for objects the layer above could not
 * index when the store opened (custom resources, whose kinds come from
 * stored definitions read after the load). Values, revisions and the watch
 * history are unchanged; the objects, and the retained events' values,
 * are replaced by copies with the new index (readers holding the old ones
 * keep them; `above` starts empty).
 * Takes the writer lock. 0, or -1 when out of memory (the objects not yet
 * replaced keep their old index). */
int store_reindex(store *s, const char *prefix);

/* Take in changes written elsewhere, as durable: an etcd follower's feed of
 * the leader's writes, a cluster's objects from its watches. ops[i].rv must
 * rise (each after the store's revision; one write's ops may share one);
 * ops[i].json is the new value, or the last one for a delete. Both indexes,
 * the history, watchers and observers see them as they see a durable
 * batch; ADDED or MODIFIED is decided by what the store holds. No local
 * write may be waiting for the disk (a follower or a mirror has none): -1
 * with err when one is, or an op cannot be taken (nothing is applied). */
int store_ingest(store *s, const store_op *ops, size_t n, char *err, size_t errlen);

/* Transactions. store_begin takes the store's write lock; commit or abort
 * releases it. Reads inside a transaction see its own writes. */
store_txn *store_begin(store *s);
int64_t store_txn_rev(store_txn *t);         /* the revision this transaction commits at */
size_t store_txn_writes(const store_txn *t); /* writes (puts and deletes) so far */
store_obj *store_txn_get(store_txn *t, const char *key);
/* List inside a transaction (sees own writes): same contract as store_list. */
int store_txn_list(store_txn *t, const char *prefix, store_obj ***out, size_t *n);
/* The same in no particular order (no sort: for callers that visit every
 * object anyway, on hot paths). */
int store_txn_list_any(store_txn *t, const char *prefix, store_obj ***out, size_t *n);
/* As store_txn_list_any without references: the objects are borrowed, valid
 * until t ends or writes a key under prefix (no other transaction can
 * commit meanwhile: t holds the writer lock). For a write's hot path,
 * which would otherwise take and drop a reference on every object. */
int store_txn_list_borrowed(store_txn *t, const char *prefix, store_obj ***out, size_t *n);
/* Put a new value (serialized now; `obj` stays the caller's). `idx` ownership
 * moves to the store (NULL: computed with the indexer). 0, -1 (out of
 * memory: the transaction can only abort), or STORE_TOO_LARGE when the text
 * is longer than max_object_bytes and than the value it replaces (an object
 * stored under a larger limit may still change as long as it does not
 * grow). Invariant: no put makes an object larger than the limit. */
int store_txn_put(store_txn *t, const char *key, const json_t *obj, store_index *idx);
/* A derived write: a value the layer above can recompute from other stored
 * objects (a quota's status.used is a sum over stored pods). No size limit:
 * the server writes it, summarising objects each under the limit (a custom
 * quota's status lists its claims, megabytes of them). It is visible,
 * ordered and watched exactly like store_txn_put, but the backend receives it
 * coalesced: only the newest value of a key, at most derived_flush_ms after it
 * committed, and with no persisted watch-history event. After a crash the
 * stored value may be older than what was served, so the layer above must
 * recompute derived values before it serves writes (the quota recount). */
int store_txn_put_derived(store_txn *t, const char *key, const json_t *obj, store_index *idx);
/* The same with the serialisation done by the caller: `text` (malloc'd, NUL
 * terminated, `len` bytes) must be exactly the compact JSON of `obj`; the store
 * takes it, also on failure. `obj` is used for the index. */
int store_txn_put_derived_text(store_txn *t, const char *key, const json_t *obj, char *text,
                               size_t len);
/* Delete; `last` is the object as it is removed (its resourceVersion set to the
 * transaction revision), delivered to watchers. */
int store_txn_delete(store_txn *t, const char *key, const json_t *last);
/* Called once when the transaction ends, still under the write lock (so the
 * next transaction sees whatever the hook publishes): committed is true once
 * the writes are applied (visible to readers), false on abort or a failed
 * commit (a transaction that wrote nothing ends as aborted). Lets the layer above keep in-memory
 * state that commits with the transaction. At most 8 per transaction; -1 when full. */
typedef void (*store_txn_end_fn)(void *arg, int64_t rev, bool committed);
int store_txn_on_end(store_txn *t, store_txn_end_fn fn, void *arg);
/* Apply, release the lock, wait until durable. Returns 0, or -1 (nothing applied). */
int store_commit(store_txn *t);

/* Durability without waiting. While a thread has it on, its store_commit
 * returns once the transaction is applied, without waiting for the disk,
 * and store_deferred_rev() is the highest revision it committed since; the
 * thread must see that revision durable (store_when_durable) before it tells
 * anyone the write happened. For the HTTP layer: a request's connection is
 * parked, holding no thread, until its writes are durable, and the writer
 * thread resumes it. Turning it on or off resets store_deferred_rev to 0. */
void store_defer_durability(bool on);
int64_t store_deferred_rev(void);
/* While set on a thread, the writes of every transaction that thread
 * aborts are handed to fn first, in order (type, key, the value: for a
 * delete the last one): what a dry run would have written. Cluster mode
 * turns a dry run's writes on its mirror into writes to the cluster. NULL
 * stops it. */
typedef void (*store_capture_fn)(void *arg, store_ev_type type, const store_obj *obj);
void store_capture_aborts(store_capture_fn fn, void *arg);
/* fn(arg, ok) once revision rev is durable (ok true), or its batch was
 * refused by the backend or the store closed without making it durable (ok
 * false): on the writer's thread with no store lock held; fn must not block.
 * 0 when rev is durable already (fn is not called), 2 when it failed already
 * (fn is not called), 1 when fn will be called, -1 when out of memory. */
int store_when_durable(store *s, int64_t rev, void (*fn)(void *arg, bool ok), void *arg);
/* Whether revision rev is durable; wait (blocking) until it is, or the store
 * closes: 0, or -1 when it closed without making rev durable. */
bool store_is_durable(store *s, int64_t rev);
/* Wait until every transaction committed before the call is durable (or
 * failed): for a component stopping after deferred writes. 0, or -1 when one
 * of them failed or the store closed. */
int store_sync(store *s);
int store_wait_durable(store *s, int64_t rev);
/* Whether rev's batch was refused by the backend (its transactions failed;
 * nothing of them was published): true with the backend's message in err. */
bool store_rev_failed(store *s, int64_t rev, char *err, size_t errlen);
/* fn(arg) runs (under the writer lock, before any further transaction) after
 * a batch the backend refused was undone: whatever the layer above derived
 * from transactions at their commit is to be derived again. At most 8. */
int store_on_reset(store *s, void (*fn)(void *arg), void *arg);
void store_abort(store_txn *t);

/* Watches over keys with `prefix`, from revision `after` exclusive.
 * Returns NULL with *expired set when `after` is older than the history. */
typedef struct store_event {
    store_ev_type type;
    int64_t rv;
    store_obj *obj;  /* new value, or last value for DELETED (a reference: unref it) */
    store_obj *prev; /* previous value for MODIFIED/DELETED, or NULL (a reference) */
} store_event;

store_watch *store_watch_open(store *s, const char *prefix, int64_t after, bool *expired);
/* The same, taking only the events under prefix that `filter` accepts (a
 * watch's selectors): the others never wake it. filter runs on the store's
 * writer thread, under its lock, and on the watcher's: it must be quick,
 * take no lock and read only the event and `arg` (which must outlive the
 * watch). */
typedef bool (*store_watch_filter)(void *arg, const store_event *ev);
store_watch *store_watch_open_filtered(store *s, const char *prefix, int64_t after,
                                       store_watch_filter filter, void *arg, bool *expired);
/* Next event: 1 got one, 0 timed out (or woken: store_watch_wake_all), -1
 * expired (fell out of history) or store closing. timeout_ms < 0: no
 * timeout, for a thread with nothing to do until an event comes or its
 * owner stops it (set its stop flag, then store_watch_wake_all). */
int store_watch_next(store_watch *w, store_event *ev, int timeout_ms);
/* A watch that never blocks a thread: store_watch_poll returns the next
 * event at once (1), or 0 when there is none yet: the watch is then armed,
 * and notify(notify_arg) is called once when an event it takes arrives (or
 * the store closes, or store_watch_wake_all), for the owner to poll again.
 * notify runs on the store's writer thread under the store's lock: it must
 * be quick and call nothing of the store. -1: expired or closing. */
store_watch *store_watch_open_notify(store *s, const char *prefix, int64_t after,
                                     store_watch_filter filter, void *arg,
                                     void (*notify)(void *arg), void *notify_arg, bool *expired);
int store_watch_poll(store_watch *w, store_event *ev);
int64_t store_watch_position(store_watch *w);
void store_watch_close(store_watch *w);

/* Derived state kept from the store's event stream: fn(arg, ev) is called
 * for every event as it is published (durable, or taken in from elsewhere),
 * in revision order, on the publishing thread under the store's lock: it
 * must be quick and call nothing of the store. The event's references are
 * the store's (take one to keep). At most 16; register before serving. */
typedef void (*store_observer_fn)(void *arg, const store_event *ev);
int store_observe(store *s, store_observer_fn fn, void *arg);
/* Stop telling fn(arg): once it returns, fn is not running and will not be
 * called with arg again. */
void store_unobserve(store *s, store_observer_fn fn, void *arg);
/* Wake every watcher (e.g. on shutdown): a store_watch_next waiting returns
 * 0 at once, for its caller to look at why; so does the next call of each
 * watch that was not waiting (a stop flag set just before is never missed). */
void store_watch_wake_all(store *s);
size_t store_watch_count(store *s);

/* Metrics. */
typedef struct store_stats {
    uint64_t commits, batches, batch_ops;
    uint64_t derived_writes;  /* store_txn_put_derived calls committed */
    uint64_t failed_batches;  /* batches the backend refused (their transactions failed) */
    uint64_t ingested;        /* changes taken in from elsewhere (store_ingest) */
    uint64_t derived_flushed; /* derived values written to the backend after coalescing */
    double commit_seconds_sum;
    uint64_t
        commit_hist[12]; /* cumulative le: .0005 .001 .0025 .005 .01 .025 .05 .1 .25 .5 1 +Inf */
} store_stats;
void store_get_stats(store *s, store_stats *out);
extern const double store_commit_buckets[11];

#endif
