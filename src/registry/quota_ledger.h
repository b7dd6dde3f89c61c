/* quota_ledger.h - every ResourceQuota's usage, in memory, changed only by
 * committed transactions; the quota objects' status.used written behind it.
 *
 * Why: a charge used to write a new version of every quota it touched, inside
 * the writer lock: with 10 quotas in a namespace, one pod create made 10 quota
 * versions, 10 watch events and 10 JSON renders. The ledger makes a charge a
 * few additions in memory, and writes each changed quota's status at most once
 * per flush interval (and at once before a client reads quotas).
 *
 * INVARIANTS
 *  - Transactional: a transaction's charges are staged and published by the
 *    store's end hook at commit, under the writer lock, or dropped on abort.
 *    Every transaction therefore reads the usage of every transaction before it.
 *  - Exact: for every quota, the ledger's used equals what the stored objects
 *    charge, at every commit (quota_admission.c keeps it so).
 *  - Every stored status.used is exact at its own resourceVersion: versions are
 *    written from the ledger in a transaction of their own. A quota version
 *    written by anyone else (a client's update, the recount) carries a recount,
 *    which the ledger then adopts.
 *  - Clients never see a stale status: reads of resourcequotas call
 *    quota_ledger_sync first; watchers see a version at most flush_ms late.
 * Used under the store's writer lock, except quota_ledger_read, _sync, _start,
 * _stop and _stats, which any thread may call.
 */
#ifndef ALLOT_REGISTRY_QUOTA_LEDGER_H
#define ALLOT_REGISTRY_QUOTA_LEDGER_H

#include "api/status.h"
#include "core/quota_check.h"
#include "store/store.h"

/* One quota as a transaction sees it. Valid until the transaction ends or
 * quota_ledger_set changes that quota. */
typedef struct ql_view {
    const char *key;
    store_obj *obj; /* the stored version (borrowed) */
    const quota_prepared *prep;
    const rlist *used;          /* current usage (may be ahead of obj's status.used) */
    struct ledger_entry *entry; /* the ledger's own (ledger.h) */
} ql_view;

/* The quotas of namespace `ns` in transaction t, sorted by key. *views is
 * malloc'd (the caller frees the array). -1 with e set on error (a quota whose
 * status.hard does not parse: 500 in upstream's words). */
int quota_ledger_load(store_txn *t, const char *ns, ql_view **views, size_t *n, api_err *e);

/* Stage quota v's new usage in t (takes `used`, also on failure). */
int quota_ledger_set(store_txn *t, const ql_view *v, rlist *used, api_err *e);

/* Quota `key` is deleted in t. */
void quota_ledger_forget(store_txn *t, const char *key);

/* The usage of stored quota `o` as of now (a copy; caller frees), and the
 * revision *rv at which it is exact: every charge committed at or before *rv
 * is in it. NULL on error. Any thread. */
rlist *quota_ledger_read(const store_obj *o, int64_t *rv);

/* The same inside a transaction (sees its staged changes). */
rlist *quota_ledger_read_txn(store_txn *t, const store_obj *o);

/* Write every quota whose stored status trails the ledger, now, in one
 * transaction. 0 or -1. Any thread (not inside a transaction). */
int quota_ledger_sync(store *st);

/* The flusher: writes trailing quota statuses at most flush_ms late. 100 ms
 * is what allotd uses: the same bound as the store's derived writes, and at
 * most 10 versions a second of a busy quota for its watchers. */
#define QUOTA_LEDGER_FLUSH_MS 100
/* The flusher: writes trailing quota statuses at most flush_ms late. */
int quota_ledger_start(store *st, unsigned flush_ms);
void quota_ledger_stop(void);

typedef struct quota_ledger_stats {
    size_t quotas, dirty;
    unsigned long long versions; /* quota versions written by the ledger */
} quota_ledger_stats;
void quota_ledger_get_stats(quota_ledger_stats *out);

/* Drop everything (shutdown; no transaction may be open). */
void quota_ledger_clear(void);

#endif
