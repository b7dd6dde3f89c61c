/* watch.h - the watch stream of a Kubernetes API server, decoded.
 *
 * A watch response (GET ...?watch=1) is a stream of JSON objects, one per
 * event, {"type":"ADDED","object":{...}}; upstream writes each with Go's
 * json.Encoder, so a newline follows each one, but the decoder does not rely
 * on it: it finds each top-level object by its braces (strings and escapes
 * understood), so events split across chunks, several in one chunk and
 * objects with no newline between them all decode the same.
 *
 * Bounds: one event's text may not exceed `max_event` bytes (16 MiB by
 * default, well above the 3 MiB an object may have in etcd's default
 * request limit); past it, or on text that is not an event (not JSON, not an
 * object, no known type, no object), the decoder fails and stays failed
 * until reset: a watch stream that went wrong once is not resynchronised,
 * the caller drops the connection and resumes from its last resourceVersion.
 *
 * Also here, as pure policy of a reflector: whether an ERROR's Status means
 * "your resourceVersion is too old" (relist), and the capped, jittered
 * exponential backoff between reconnects.
 *
 * Pure: no I/O, no threads, no clock.
 */
#ifndef ALLOT_KUBE_WATCH_H
#define ALLOT_KUBE_WATCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define KUBE_WATCH_MAX_EVENT ((size_t)16 << 20)

typedef enum {
    KUBE_EV_ADDED,
    KUBE_EV_MODIFIED,
    KUBE_EV_DELETED,
    KUBE_EV_BOOKMARK,
    KUBE_EV_ERROR,
} kube_ev_type;

typedef struct kube_watch_event {
    kube_ev_type type;
    const char *type_name; /* "ADDED", ... as sent */
    json_t *object;        /* borrowed: valid during the callback only */
    const char *rv;        /* object.metadata.resourceVersion, or NULL */
    long code;             /* ERROR: the Status's code, else 0 */
} kube_watch_event;

/* Return 0 to go on, anything else to stop decoding (kube_watch_feed then
 * returns 1 and keeps the unread bytes; a later feed goes on from there). */
typedef int (*kube_watch_fn)(void *arg, const kube_watch_event *ev);

typedef struct kube_watch_decoder {
    char *buf; /* bytes of the object being read, and what follows it */
    size_t len, cap;
    size_t scan;  /* bytes of buf already scanned */
    size_t start; /* where the current object starts (valid when depth > 0) */
    int depth;    /* brace/bracket depth at `scan` */
    bool in_str, esc;
    bool failed;
    size_t max_event;
} kube_watch_decoder;

/* max_event 0 means KUBE_WATCH_MAX_EVENT. */
void kube_watch_init(kube_watch_decoder *d, size_t max_event);
void kube_watch_reset(kube_watch_decoder *d); /* drop buffered bytes and a failure */
void kube_watch_cleanup(kube_watch_decoder *d);

/* Take n more bytes of the stream and call fn for every event they
 * complete, in order. 0 when all were consumed (an incomplete event stays
 * buffered), 1 when fn asked to stop, -1 with a message in err on malformed
 * text, an event over the bound, or no memory (the decoder is then failed:
 * every later feed returns -1 until kube_watch_reset). */
int kube_watch_feed(kube_watch_decoder *d, const char *p, size_t n, kube_watch_fn fn, void *arg,
                    char *err, size_t errlen);

/* Whether bytes of an unfinished event are buffered (a stream that ends
 * now ended mid-event). */
bool kube_watch_pending(const kube_watch_decoder *d);

/* A Status (an ERROR event's object, or an error response's body) saying
 * the resourceVersion asked for is gone: code 410, reason Expired or Gone,
 * or the "too old resource version" message older servers send. */
bool kube_status_expired(const json_t *status);

/* Milliseconds to wait before reconnect number `attempt` (0 first): base
 * doubled per attempt, capped at cap, then scaled into [1/2, 1] of that by
 * r01 (a uniform random number in [0, 1)) so that many clients restarting at
 * once spread out. */
long kube_backoff_ms(unsigned attempt, long base, long cap, double r01);

#endif
