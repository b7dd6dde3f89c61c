/* events.h - record core/v1 Events about objects, as client-go's recorder
 * does: one Event per (object, type, reason, message), its count raised on
 * repeats instead of a new object each time.
 *
 * Three ways to write one:
 *  - event_record: its own transaction, returns once durable;
 *  - event_write: inside the caller's transaction;
 *  - an event_recorder: events are queued and written in batches, many per
 *    transaction, by the recorder's thread - as client-go's broadcaster writes
 *    events asynchronously. For hot paths (the scheduler's Scheduled event per
 *    bind) where an Event a few milliseconds late is fine and a transaction
 *    (and an fsync wait) per Event is not.
 */
#ifndef ALLOT_REGISTRY_EVENTS_H
#define ALLOT_REGISTRY_EVENTS_H

#include "store/store.h"

#include <jansson.h>
#include <stdbool.h>

/* An Event about `involved` (borrowed): type "Normal" or "Warning", component
 * e.g. "default-scheduler", first/lastTimestamp now, count 1, named
 * "<object name>.<hash of uid, type, reason, message>" so that a repeat finds
 * the same Event. Its server-set metadata (uid, creationTimestamp) is set and
 * its metadata validated here, outside any transaction. NULL when `involved`
 * has no namespace, the name is invalid, or out of memory. Caller owns. */
json_t *event_new(const json_t *involved, const char *type, const char *reason, const char *message,
                  const char *component);

/* Write `ev` (from event_new; borrowed, its resourceVersion is set) in
 * transaction t, with the rest of reg_create's rules for an Event: the
 * namespace must exist and not be terminating. An Event of that name already
 * stored (or written earlier in t) is a repeat: its count is raised and its
 * lastTimestamp set instead. Events are exempt from quota (upstream's ignored
 * resources) and no admission plugin applies to them, which is why no
 * admission runs here.
 * 0 written, 1 not written (namespace missing or terminating, corrupt stored
 * Event), -1 the transaction failed (out of memory). */
int event_write(store_txn *t, json_t *ev);

/* event_new + event_write in a transaction of its own, durable on return.
 * Best effort: 0 or -1. */
int event_record(store *st, const json_t *involved, const char *type, const char *reason,
                 const char *message, const char *component);

/* ---- asynchronous recorder ---- */
typedef struct event_recorder event_recorder;

/* Starts the recorder's thread. NULL on error. */
event_recorder *event_recorder_start(store *st);
/* Queue `ev` (from event_new; ownership moves to the recorder). Never blocks
 * on the store. When the recorder is stopping, or EVENT_RECORDER_MAX_PENDING
 * Events already wait (the store cannot keep up), the Event is dropped and
 * counted, as client-go's broadcaster drops when its queue is full; false then.
 * A NULL ev (event_new failed) queues nothing and returns false. */
bool event_recorder_emit(event_recorder *r, json_t *ev);
/* Events dropped so far. */
unsigned long event_recorder_dropped(event_recorder *r);
/* Write every queued Event, then stop the thread and free r (NULL: no-op). */
void event_recorder_stop(event_recorder *r);

#define EVENT_RECORDER_MAX_PENDING 8192

#endif
