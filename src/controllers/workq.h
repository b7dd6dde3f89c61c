/* workq.h - a keyed work queue with due times, for the workload controllers.
 *
 * What each controller needs between its events and its syncs: keys (store
 * keys of the objects to sync) queued once however often they are marked,
 * and keys due at a time (a backoff, minReadySeconds, a progress deadline, a
 * schedule). Due times sit in a min-heap with each key's place indexed, so a
 * run looks at the due keys only, never at every object: with 10,000
 * ReplicaSets an idle tick costs nothing. Marking, a due time and forgetting
 * one are O(log n) at most.
 *
 * Pure: no I/O, no threads, no clock. Times are whatever int64 the caller
 * passes (monotonic ms for most controllers, wall-clock ms for CronJobs);
 * the queue only compares them. Not thread-safe: one controller thread.
 *
 * Memory: the queue owns copies of the keys. When memory runs out, a mark or
 * a due time is dropped (the controllers' periodic resync, every
 * CTRL_RESYNC_SECONDS, marks every object again), as ctrl_set_add drops an
 * add.
 */
#ifndef ALLOT_CONTROLLERS_WORKQ_H
#define ALLOT_CONTROLLERS_WORKQ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The rounds of syncs one workq_run makes at most: a sync may mark keys
 * again (its own, after a write returned a newer object); what is marked
 * after the last round waits for the next run. */
#define WORKQ_ROUNDS 3

typedef struct workq workq;

/* A sync of one key. `key` stays valid for the call (even if the sync
 * forgets it); the sync may call workq_mark, workq_due and workq_forget on
 * the queue, but not workq_run or workq_free. */
typedef void (*workq_sync_fn)(void *arg, const char *key);

/* An empty queue, or NULL when out of memory. */
workq *workq_new(void);
/* Free the queue and its keys; NULL is fine. */
void workq_free(workq *q);

/* Queue key for the next run. A key already queued keeps its place: the
 * order is that of first marks. */
void workq_mark(workq *q, const char *key);
/* Queue key at the first run whose now_ms is at least at_ms. A key already
 * due keeps the earlier of the two times (a later one does not replace an
 * earlier one). Independent of workq_mark: a key may be queued and due. */
void workq_due(workq *q, const char *key, int64_t at_ms);
/* Drop key's due time, if any (its object is gone, or a sync decided anew).
 * A mark already queued stays (the sync finds the object gone). */
void workq_forget(workq *q, const char *key);

/* Queue every key due at now_ms (earliest first), then run up to
 * WORKQ_ROUNDS rounds of sync over the queued keys: each round syncs the keys
 * queued when it starts, in order; a key marked during a round, before its
 * own sync in that round has started, is synced once in that round; marked
 * after (by its own sync, say), it is synced in the next round. `stop` (NULL:
 * never) is checked before each sync: once true, the run returns with the
 * keys not synced still queued. Returns whether keys remain queued. */
bool workq_run(workq *q, int64_t now_ms, workq_sync_fn sync, void *arg, const atomic_bool *stop);

/* The number of keys queued (marked or due and moved, not yet synced). */
size_t workq_queued(const workq *q);
/* The earliest due time: true and *at_ms, or false when no key is due. */
bool workq_next_due(const workq *q, int64_t *at_ms);

#endif
