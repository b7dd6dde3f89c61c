/* ledger.h - values derived from stored objects, kept in memory and changed
 * only by committed transactions; each object's derived status written
 * behind them.
 *
 * One mechanism for every quota-like kind: a kind keeps, per stored object of
 * its own (a ResourceQuota, later a pool or a custom quota), a value (its
 * usage, its allocation) that transactions change far more often than it is
 * worth rewriting the object. The ledger holds these values; the kind
 * supplies a small vtable (ledger_ops) saying how a value is loaded from a
 * stored version, copied, freed and written back as the object's status.
 *
 * INVARIANTS
 *  - Transactional: a transaction's values are staged and published by the
 *    store's end hook at commit, under the writer lock, or dropped on abort.
 *    Every transaction reads the values of every transaction before it.
 *  - Every stored status is exact at its own resourceVersion: versions are
 *    written from the ledger in a transaction of their own, as derived writes
 *    (store.h). A version written by anyone else (a client, a recount) carries
 *    its own value, which the ledger then adopts (ops->load).
 *  - Readers are never served a stale status: a kind's read hook calls
 *    ledger_sync first; watchers see a version at most flush_ms late.
 * Used under the store's writer lock, except ledger_read, _sync, _start,
 * _stop and _get_stats, which any thread may call.
 */
#ifndef ALLOT_REGISTRY_LEDGER_H
#define ALLOT_REGISTRY_LEDGER_H

#include "api/status.h"
#include "store/store.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ledger_ops {
    const char *name;
    /* The value of stored version o, as transaction t sees the store (a kind
     * may derive it from other objects, read in t); NULL with e set (500 in e
     * when the stored status cannot be read). */
    void *(*load)(store_txn *t, store_obj *o, api_err *e);
    /* An independent copy of a value; NULL when out of memory. NULL for an
     * in-place kind. */
    void *(*copy)(const void *val);
    void (*free)(void *val);
    /* Write o again with val as its status, in t, as a derived write. Returns
     * the new version (a reference), o itself (a reference) when its stored
     * status already says val, or NULL. */
    store_obj *(*write)(store_txn *t, store_obj *o, const void *val);
    /* In place: a value too large to copy per transaction (a pool's claims).
     * A transaction changes the published value itself (ledger_modify); if
     * the transaction aborts, the value is dropped and loaded again (ops->load)
     * by its next user. ledger_set and ledger_read do not apply. */
    bool in_place;
    /* The flusher writes an entry at most once per this many ms (0: every
     * flush interval); readers' ledger_sync writes it whenever it trails. For
     * values whose status is large (a pool's lists every claim). */
    unsigned min_flush_ms;
} ledger_ops;

typedef struct ledger_entry ledger_entry;

/* The entry transaction t sees for stored version o, rebuilt (ops->load) if o
 * is newer than what the ledger holds. Valid until t ends or ledger_set
 * changes that key. NULL with e set. */
ledger_entry *ledger_current(store_txn *t, const ledger_ops *ops, store_obj *o, api_err *e);

const void *ledger_value(const ledger_entry *en);
store_obj *ledger_obj(const ledger_entry *en); /* the stored version (borrowed) */
const char *ledger_key(const ledger_entry *en);

/* Stage en's new value in t (takes val, also on failure); its status now
 * trails the stored one. -1 with e set. */
int ledger_set(store_txn *t, const ledger_entry *en, void *val, api_err *e);

/* In-place kinds: the value of en, to be changed by t (in place). At commit
 * its status trails the stored one; at abort the value is dropped. NULL with
 * e set. */
void *ledger_modify(store_txn *t, ledger_entry *en, api_err *e);

/* Write en's value as its object's status now, in t (a published entry of
 * the version t sees). -1 with e set. */
int ledger_write(store_txn *t, ledger_entry *en, api_err *e);

/* For a kind's derived status: `cur` (an object) with `status` (taken) as
 * its status, a shallow copy; *same (if given) when cur's status already is
 * it; *last (the kind's cache of the status last written) is replaced by a
 * reference to it. NULL when status is NULL or out of memory. */
json_t *ledger_with_status(const json_t *cur, json_t *status, json_t **last, bool *same);

/* For a kind's ops->write: store `obj` (the object with its new status; its
 * metadata is copied, not changed) at key in t as a derived write, with t's
 * revision as its resourceVersion. The new version (a reference), or NULL. */
store_obj *ledger_put_derived(store_txn *t, const char *key, json_t *obj);

/* For a kind's read hook: every object stored under each of `prefixes`
 * (NULL-terminated) has its entry loaded (`of`) and checked (`verify`: a
 * status that trails after a restart is written again) in one transaction;
 * then every trailing status is written (ledger_sync). Best effort. */
typedef ledger_entry *(*ledger_of_fn)(store_txn *t, store_obj *o, api_err *e);
typedef int (*ledger_verify_fn)(store_txn *t, ledger_entry *en, api_err *e);
void ledger_prepare_read(store *st, const char *const *prefixes, ledger_of_fn of,
                         ledger_verify_fn verify);

/* The object `key` is deleted in t. */
void ledger_forget(store_txn *t, const char *key);

/* A copy (ops->copy) of the value of stored version o as of now, and the
 * revision *rv at which it is exact; NULL when the ledger does not hold that
 * version (the caller reads the stored status), or for in-place kinds. Any
 * thread. */
void *ledger_read(const ledger_ops *ops, const store_obj *o, int64_t *rv);

/* Write every entry whose stored status trails its value, now, in one
 * transaction. 0 or -1. Any thread (not inside a transaction). */
int ledger_sync(store *st);

/* Work the flusher does after each flush (background upkeep that follows
 * the books, e.g. claims' Bound conditions): fn(st) on its thread, outside
 * any transaction. At most 4; register before ledger_start. */
int ledger_on_flushed(void (*fn)(store *st));

/* The flusher: writes trailing statuses at most flush_ms late. */
int ledger_start(store *st, unsigned flush_ms);
void ledger_stop(void);

typedef struct ledger_stats {
    size_t entries, dirty;
    unsigned long long versions; /* versions written by the ledger */
} ledger_stats;
void ledger_get_stats(ledger_stats *out);

/* Loads timed, per kind (ops->name): a load is a recount (a custom quota's
 * books, a pool's allocation), done when a value is first needed or its
 * object changed. fn gets the bucket upper bounds (seconds), the cumulative
 * count at or below each, then the count and sum of all. Any thread. */
#define LEDGER_LOAD_BUCKETS 8
typedef void (*ledger_load_fn)(void *arg, const char *kind, const double *le,
                               const unsigned long *cumulative, size_t nle, unsigned long count,
                               double sum_seconds);
void ledger_load_stats(ledger_load_fn fn, void *arg);

/* Drop everything (shutdown; no transaction may be open). */
void ledger_clear(void);

#endif
