/* events.c - Event recording with count-based deduplication (see events.h). */
#include "registry/events.h"

#include "api/objects.h"
#include "api/validation.h"
#include "registry/registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Events written per transaction by the recorder: a batch holds the write
 * lock while it is built (tens of microseconds per Event), so it is bounded
 * to keep other writers' waits short. */
#define RECORDER_BATCH 256

static const char *meta_str(const json_t *obj, const char *f)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), f));
}

/* Deterministic name per (object, reason, message), like the recorder's
 * "<name>.<hash>", so repeats find the same Event. */
static void event_name(const json_t *obj, const char *type, const char *reason, const char *message,
                       char *buf, size_t n)
{
    unsigned long long h = 1469598103934665603ULL;
    const char *parts[] = {meta_str(obj, "uid"), type, reason, message};
    for (size_t i = 0; i < 4; i++)
        for (const char *p = parts[i] ? parts[i] : ""; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    snprintf(buf, n, "%s.%016llx", meta_str(obj, "name") ? meta_str(obj, "name") : "x", h);
}

/* Everything reg_create would set or check that does not depend on the store
 * is done here, before any transaction: server-set metadata (uid,
 * creationTimestamp) as prepare_create sets it, and the metadata validated
 * with the events kind's name rule (path segment). */
json_t *event_new(const json_t *involved, const char *type, const char *reason, const char *message,
                  const char *component)
{
    const char *ns = meta_str(involved, "namespace");
    if (!ns) return NULL;
    char name[300], now[32], uid[37];
    event_name(involved, type, reason, message, name, sizeof name);
    reg_now_rfc3339(now, sizeof now);
    reg_new_uid(uid);
    const char *iuid = meta_str(involved, "uid"), *rv = meta_str(involved, "resourceVersion");
    json_t *ev = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s}, s:{s:O*, s:s, s:s, s:s, s:O*, s:s}, s:s, s:s, s:s, "
        "s:{s:s}, s:s, s:s, s:i, s:s, s:s}",
        "apiVersion", "v1", "kind", "Event", "metadata", "name", name, "namespace", ns, "uid", uid,
        "creationTimestamp", now, "involvedObject", "kind", json_object_get(involved, "kind"),
        "namespace", ns, "name", meta_str(involved, "name"), "uid", iuid ? iuid : "", "apiVersion",
        json_object_get(involved, "apiVersion"), "resourceVersion", rv ? rv : "", "type", type,
        "reason", reason, "message", message, "source", "component", component, "firstTimestamp",
        now, "lastTimestamp", now, "count", 1, "reportingComponent", component, "reportingInstance",
        component);
    json_t *causes = json_array();
    bool valid =
        ev && causes &&
        val_object_meta(json_object_get(ev, "metadata"), true, VAL_NAME_PATH_SEGMENT, causes) == 0;
    json_decref(causes);
    if (valid) return ev;
    json_decref(ev);
    return NULL;
}

/* NamespaceLifecycle as reg_create applies it: content may be created only in
 * a namespace that exists and is not being deleted. */
static bool namespace_open(store_txn *t, const char *ns)
{
    char key[320];
    snprintf(key, sizeof key, "namespaces//%s", ns);
    store_obj *o = store_txn_get(t, key);
    json_t *nsobj = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    if (!nsobj) return false;
    const char *phase =
        json_string_value(json_object_get(json_object_get(nsobj, "status"), "phase"));
    bool open = !json_object_get(json_object_get(nsobj, "metadata"), "deletionTimestamp") &&
                !(phase && !strcmp(phase, "Terminating"));
    json_decref(nsobj);
    return open;
}

/* The stored Event `cur` seen again: count + 1, lastTimestamp of the repeat. */
static json_t *bumped(const store_obj *cur, const json_t *ev)
{
    json_t *obj = store_obj_parse(cur);
    if (!obj) return NULL;
    json_int_t count = json_integer_value(json_object_get(obj, "count"));
    if (json_object_set_new(obj, "count", json_integer(count + 1)) != 0 ||
        json_object_set(obj, "lastTimestamp", json_object_get(ev, "lastTimestamp")) != 0) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

int event_write(store_txn *t, json_t *ev)
{
    const api_kind *k = api_kind_find("", "v1", "events");
    const char *ns = meta_str(ev, "namespace"), *name = meta_str(ev, "name");
    char key[768], rv[32];
    if (!k || !ns || !name || api_kind_key(k, ns, name, key, sizeof key) < 0) return 1;
    if (!namespace_open(t, ns)) return 1;
    store_obj *cur = store_txn_get(t, key);
    json_t *obj = cur ? bumped(cur, ev) : json_incref(ev);
    store_obj_unref(cur);
    if (!obj) return 1;
    snprintf(rv, sizeof rv, "%lld", (long long)store_txn_rev(t));
    int rc = json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion",
                                 json_string(rv)) == 0 &&
                     store_txn_put(t, key, obj, NULL) == 0
                 ? 0
                 : -1;
    json_decref(obj);
    return rc;
}

int event_record(store *st, const json_t *involved, const char *type, const char *reason,
                 const char *message, const char *component)
{
    json_t *ev = event_new(involved, type, reason, message, component);
    store_txn *t = ev ? store_begin(st) : NULL;
    int rc = t ? event_write(t, ev) : -1;
    if (rc == 0)
        rc = store_commit(t);
    else
        store_abort(t);
    json_decref(ev);
    return rc == 0 ? 0 : -1;
}

/* ---- asynchronous recorder ---- */

struct event_recorder {
    store *st;
    pthread_t thread;
    pthread_mutex_t mu; /* everything below */
    pthread_cond_t cv;  /* pending became non-empty, or stopping */
    json_t **pending;
    size_t n, cap;
    bool stopping;
    unsigned long dropped;
};

/* One transaction for up to RECORDER_BATCH Events. An Event refused by
 * event_write (its namespace went away) is skipped; the others still go. */
static void write_batch(event_recorder *r, json_t **evs, size_t n)
{
    store_txn *t = store_begin(r->st);
    int rc = t ? 0 : -1;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && event_write(t, evs[i]) < 0) rc = -1;
        json_decref(evs[i]);
    }
    if (rc == 0)
        rc = store_commit(t);
    else
        store_abort(t);
    if (rc != 0) { /* out of memory or the store is closing: best effort, as every event */
        pthread_mutex_lock(&r->mu);
        r->dropped += n;
        pthread_mutex_unlock(&r->mu);
    }
}

static void *recorder_main(void *arg)
{
    event_recorder *r = arg;
    pthread_setname_np(pthread_self(), "event-recorder");
    json_t **batch = NULL;
    size_t cap = 0;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        while (!r->n && !r->stopping)
            pthread_cond_wait(&r->cv, &r->mu);
        if (!r->n) break; /* stopping, and everything queued is written */
        /* Swap the queue out: emitters keep queueing while this batch is written. */
        json_t **taken = r->pending;
        size_t n = r->n, taken_cap = r->cap;
        r->pending = batch;
        r->cap = cap;
        r->n = 0;
        batch = taken;
        cap = taken_cap;
        pthread_mutex_unlock(&r->mu);
        for (size_t i = 0; i < n; i += RECORDER_BATCH)
            write_batch(r, batch + i, n - i < RECORDER_BATCH ? n - i : RECORDER_BATCH);
        pthread_mutex_lock(&r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    free(batch);
    return NULL;
}

event_recorder *event_recorder_start(store *st)
{
    event_recorder *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->st = st;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    if (pthread_create(&r->thread, NULL, recorder_main, r) != 0) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
        free(r);
        return NULL;
    }
    return r;
}

bool event_recorder_emit(event_recorder *r, json_t *ev)
{
    if (!ev) return false;
    pthread_mutex_lock(&r->mu);
    bool take = !r->stopping && r->n < EVENT_RECORDER_MAX_PENDING;
    if (take && r->n == r->cap) {
        size_t nc = r->cap ? r->cap * 2 : 64;
        json_t **np = realloc(r->pending, nc * sizeof *np);
        if (np) {
            r->pending = np;
            r->cap = nc;
        } else {
            take = false;
        }
    }
    if (take) {
        r->pending[r->n++] = ev;
        if (r->n == 1) pthread_cond_signal(&r->cv); /* the thread waits only when empty */
    } else {
        r->dropped++;
    }
    pthread_mutex_unlock(&r->mu);
    if (!take) json_decref(ev);
    return take;
}

unsigned long event_recorder_dropped(event_recorder *r)
{
    pthread_mutex_lock(&r->mu);
    unsigned long d = r->dropped;
    pthread_mutex_unlock(&r->mu);
    return d;
}

void event_recorder_stop(event_recorder *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stopping = true;
    pthread_cond_signal(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    store_sync(r->st); /* (its writes did not wait for the disk: they have now) */
    free(r->pending);  /* empty: the thread wrote everything before it returned */
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->cv);
    free(r);
}
