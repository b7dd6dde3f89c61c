/* store.c - in-memory index, serialized transactions, group commit, watch history.
 *
 * Layout: one table per resource (strmap key -> store_obj). Transactions hold
 * `txn_lock` from begin to commit, so they run one at a time; that is what
 * makes check-then-write (quota) safe. Readers take `index_lock` shared and
 * never wait for the disk.
 *
 * Durability is group commit: a committing transaction applies its writes to
 * the index, queues them for the writer thread, releases `txn_lock` and waits
 * until the writer reports its revision durable. The writer persists whatever
 * has queued up in one backend transaction, so many concurrent commits share
 * one fsync. Watch events are published only after they are durable.
 */
#include "store/store.h"
#include "core/jdump.h"

#include "core/jsontext.h"
#include "core/strmap.h"
#include "util/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEFAULT_HISTORY 25000
#define DEFAULT_HISTORY_BYTES ((size_t)64 << 20)
#define DEFAULT_DERIVED_FLUSH_MS 100
#define DEFAULT_DOC_CACHE_BYTES ((size_t)32 << 20)

const double store_commit_buckets[11] = {.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1};

/* One resource's objects, split by namespace so that a namespace's list (its
 * quotas on every admission, its pods on a recount) never scans the others. */
typedef struct nstable {
    char *ns;     /* "" when cluster-scoped; the key of by_ns */
    strmap *objs; /* key -> store_obj* */
} nstable;

typedef struct rtable {
    char *resource;
    strmap *by_ns; /* namespace -> nstable* */
    size_t count;
} rtable;

/* A write waiting for the disk, with what watchers will need. */
typedef struct pending {
    store_ev_type type;
    store_obj *obj;  /* new value, or last value for DELETED */
    store_obj *prev; /* may be NULL */
    bool derived;    /* store_txn_put_derived: persisted coalesced */
} pending;

typedef struct pendq {
    pending *v;
    size_t n, cap;
} pendq;

struct store {
    store_backend be;
    store_indexer indexer;

    /* Two indexes of the same objects (each holds its references):
     *  - `latest`: what transactions read, every commit included, durable or
     *    not; changed only by the holder of txn_lock (commits, and the writer
     *    undoing a batch that failed);
     *  - `tables`: what readers and watchers see, changed when a batch is
     *    durable (under index_lock). Nothing is published before the backend
     *    has it: a batch the backend refuses is undone in `latest` and fails
     *    its transactions, and no reader ever saw it. */
    pthread_mutex_t txn_lock;    /* one transaction at a time */
    strmap *latest;              /* resource -> rtable* */
    int64_t latest_rev;          /* last revision committed (under txn_lock) */
    pthread_rwlock_t index_lock; /* tables and rev */
    strmap *tables;              /* resource -> rtable* */
    int64_t rev;                 /* last durable revision readers see */

    pthread_mutex_t mu;  /* everything below */
    pthread_cond_t work; /* writer: pending queue non-empty */
    pthread_cond_t done; /* durable revision advanced (committers) */
    /* Open watches, listed by the resource their prefix names ("pods/ns/"
     * is listed under "pods"), so a commit looks only at the watches of the
     * resources it wrote; watches of every resource (prefix "") in watch_all. */
    strmap *watch_by_res; /* resource -> store_watch* (first of a list) */
    store_watch *watch_all;
    unsigned long wake_gen; /* store_watch_wake_all calls: a woken watch returns */
    /* store_when_durable callbacks waiting for their revision (any order). */
    struct durable_waiter *waiters;
    size_t nwaiters, waiters_cap;
    pendq queue;
    strmap *unflushed; /* writer only: key -> newest derived store_obj not yet persisted */
    double derived_flush_s;
    int64_t durable_rev;
    int64_t queued_rev;
    /* Revisions committed whose batch the backend refused: never durable
     * (their transactions failed). Ranges, oldest first; failures are rare. */
    struct {
        int64_t lo, hi;
    } * failed;
    size_t nfailed, failed_cap;
    char failed_err[512]; /* the backend's last refusal, for the callers */
    /* Called (under txn_lock) after a refused batch was undone: what the
     * layer above derived from the transactions that failed is to be
     * derived again. */
    struct {
        void (*fn)(void *arg);
        void *arg;
    } resets[8];
    size_t nresets;
    /* Told every event as it is published, in order (store_observe). */
    struct {
        store_observer_fn fn;
        void *arg;
    } observers[16];
    size_t nobservers;
    bool closing;
    pthread_t writer;

    /* Watch history: a ring of events numbered by a global sequence. */
    store_event *ring;
    size_t ring_cap;
    uint64_t seq_first;    /* oldest sequence still in the ring */
    uint64_t seq_end;      /* next sequence to assign */
    int64_t history_start; /* a watch may start after any revision >= this */
    size_t watchers;
    uint64_t since_compact;
    size_t ring_bytes;          /* JSON bytes the ring's events hold (obj and prev) */
    size_t max_bytes;           /* ... at most this, and at least the newest event */
    size_t since_compact_bytes; /* event bytes written since the last compaction */
    size_t max_object;          /* store_config.max_object_bytes */

    store_stats stats;

    /* The doc cache (store_obj_doc): parsed objects, newest first. */
    pthread_mutex_t doc_mu;
    store_obj *doc_head, *doc_tail;
    size_t doc_bytes, doc_budget;
};

#define TXN_MAX_HOOKS 8

struct store_txn {
    store *s;
    int64_t rev;
    pending *w; /* write set, in order */
    size_t n, cap;
    int failed;
    struct {
        store_txn_end_fn fn;
        void *arg;
    } hooks[TXN_MAX_HOOKS];
    size_t nhooks;
};

typedef struct durable_waiter {
    int64_t rev;
    void (*fn)(void *arg, bool ok);
    void *arg;
} durable_waiter;

struct store_watch {
    store *s;
    char *prefix;
    size_t prefix_len;
    char *res; /* the list it is on: its prefix's resource, NULL for watch_all */
    uint64_t next_seq;
    int64_t position;
    store_watch_filter filter; /* or NULL: every event under prefix */
    void *filter_arg;
    /* Each watch waits on its own condition, signalled only when an event it
     * takes arrives (or the store closes): a commit wakes the watches it
     * concerns, not every one (a context switch each). Under s->mu. */
    pthread_cond_t cv;
    bool waiting;
    /* A notify watch (store_watch_open_notify) never blocks: armed by a
     * store_watch_poll that found nothing, it is told once by notify. */
    void (*notify)(void *arg);
    void *notify_arg;
    bool armed;
    /* Since it last waited with nothing left to read, no event it takes has
     * arrived: what the history dropped meanwhile was none of its business,
     * so it resumes at the oldest event kept rather than expiring. */
    bool clean;
    /* The store's wake_gen this watch has answered (store_watch_wake_all):
     * a wake while its owner was not waiting is answered by its next wait. */
    unsigned long wake_seen;
    store_watch *next, *prev_w;
};

/* ---- objects ---- */

void store_obj_ref(store_obj *o)
{
    atomic_fetch_add_explicit(&o->refs, 1, memory_order_relaxed);
}

static void index_clear(store_index *idx)
{
    json_decref(idx->labels);
    free(idx->fields);
    if (idx->ext && idx->ext_free) idx->ext_free(idx->ext);
    memset(idx, 0, sizeof *idx);
}

/* ---- the doc cache: parsed objects, shared, within a byte budget ---- */

/* What a parse of o is counted as: jansson's tree of a Kubernetes object
 * takes about 14 times its compact text (measured on a pod: 645 bytes of
 * text, 9,088 of tree; every object is a hash table). */
static size_t doc_cost(const store_obj *o)
{
    return o->len * 14 + 512;
}

/* Off the cache's list (under doc_mu); its doc is the caller's to drop. */
static json_t *doc_detach(store *s, store_obj *o)
{
    if (o->doc_prev)
        o->doc_prev->doc_next = o->doc_next;
    else
        s->doc_head = o->doc_next;
    if (o->doc_next)
        o->doc_next->doc_prev = o->doc_prev;
    else
        s->doc_tail = o->doc_prev;
    o->doc_prev = o->doc_next = NULL;
    s->doc_bytes -= doc_cost(o);
    json_t *d = o->doc;
    o->doc = NULL;
    /* last: once an unlocked reader sees it false, nothing touches o here */
    atomic_store_explicit(&o->doc_linked, false, memory_order_release);
    return d;
}

#define DOC_EVICT_MAX 16

/* Attach doc (a reference, taken) to o as its cached parse, newest first,
 * and detach the oldest past the budget into out (at most DOC_EVICT_MAX;
 * under doc_mu). Returns how many were detached. */
static size_t doc_attach(store *s, store_obj *o, json_t *doc, json_t **out)
{
    o->doc = doc;
    atomic_store(&o->doc_linked, true);
    o->doc_prev = NULL;
    o->doc_next = s->doc_head;
    if (s->doc_head) s->doc_head->doc_prev = o;
    s->doc_head = o;
    if (!s->doc_tail) s->doc_tail = o;
    s->doc_bytes += doc_cost(o);
    size_t n = 0;
    while (s->doc_bytes > s->doc_budget && s->doc_tail != o && n < DOC_EVICT_MAX)
        out[n++] = doc_detach(s, s->doc_tail);
    return n;
}

void store_obj_unref(store_obj *o)
{
    if (!o) return;
    if (atomic_fetch_sub_explicit(&o->refs, 1, memory_order_acq_rel) != 1) return;
    index_clear(&o->idx);
    json_t *doc = NULL;
    /* (an object never cached, or dropped from the cache, even after its
     * store closed, needs no lock: only the cache's eviction could be
     * looking at it, and it is done once doc_linked is false) */
    if (o->s && atomic_load_explicit(&o->doc_linked, memory_order_acquire)) {
        pthread_mutex_lock(&o->s->doc_mu);
        if (atomic_load(&o->doc_linked)) doc = doc_detach(o->s, o);
        pthread_mutex_unlock(&o->s->doc_mu);
    }
    json_decref(doc);
    free(o->key);
    free(o->nsname);
    free(o->json);
    free(o);
}

json_t *store_obj_doc_cached(const store_obj *o)
{
    json_t *d = NULL;
    if (!o->s) return NULL;
    pthread_mutex_lock(&o->s->doc_mu);
    if (o->doc) d = json_incref(o->doc);
    pthread_mutex_unlock(&o->s->doc_mu);
    return d;
}

json_t *store_obj_view_sans(const store_obj *o, const char *path)
{
    json_t *d = store_obj_doc_cached(o);
    return d ? d : store_obj_parse_sans(o, path);
}

json_t *store_obj_view_parts(const store_obj *o, const char *const *paths)
{
    json_t *d = store_obj_doc_cached(o);
    return d ? d : store_obj_parse_parts(o, paths);
}

/* Install doc as o's parse unless another thread did first: a new
 * reference to whichever o keeps. doc is taken. */
static json_t *doc_install(store_obj *o, json_t *doc)
{
    store *s = o->s;
    json_t *evicted[DOC_EVICT_MAX], *keep;
    size_t n = 0;
    pthread_mutex_lock(&s->doc_mu);
    if (o->doc) { /* another thread parsed it first: share theirs */
        keep = json_incref(o->doc);
        pthread_mutex_unlock(&s->doc_mu);
        json_decref(doc);
        return keep;
    }
    keep = json_incref(doc);
    n = doc_attach(s, o, doc, evicted);
    pthread_mutex_unlock(&s->doc_mu);
    for (size_t i = 0; i < n; i++)
        json_decref(evicted[i]);
    return keep;
}

json_t *store_obj_doc(store_obj *o)
{
    json_t *d = store_obj_doc_cached(o);
    if (d) return d;
    json_t *mine = store_obj_parse(o);
    if (!mine || !o->s) return mine;
    return doc_install(o, mine);
}

/* Drop every cached parse (closing). */
static void doc_clear(store *s)
{
    pthread_mutex_lock(&s->doc_mu);
    while (s->doc_head)
        json_decref(doc_detach(s, s->doc_head));
    pthread_mutex_unlock(&s->doc_mu);
}

json_t *store_obj_parse(const store_obj *o)
{
    return json_loadb(o->json, o->len, 0, NULL);
}

json_t *store_obj_parse_parts(const store_obj *o, const char *const *paths)
{
    jt_val top = jt_text(o->json, o->len);
    json_t *out = json_object();
    if (!out) return NULL;
    for (; *paths; paths++) {
        const char *dot = strchr(*paths, '.');
        size_t alen = dot ? (size_t)(dot - *paths) : strlen(*paths);
        jt_val v;
        int r = jt_member(top, *paths, alen, &v);
        if (r == 1 && dot) r = jt_member(v, dot + 1, strlen(dot + 1), &v);
        if (r < 0) goto whole;
        if (r == 0) continue;
        const char *end = jt_skip(v);
        json_t *val = end ? json_loadb(v.p, (size_t)(end - v.p), JSON_DECODE_ANY, NULL) : NULL;
        if (!val) goto whole;
        json_t *at = out;
        char up[64];
        if (dot) {
            if (alen >= sizeof up) {
                json_decref(val);
                goto whole;
            }
            memcpy(up, *paths, alen);
            up[alen] = '\0';
            at = json_object_get(out, up);
            if (!at && json_object_set_new(out, up, at = json_object()) != 0) at = NULL;
        }
        if (!at || json_object_set_new(at, dot ? dot + 1 : *paths, val) != 0) {
            json_decref(out);
            return NULL;
        }
    }
    return out;
whole: /* text jsontext declines: parse it all */
    json_decref(out);
    return store_obj_parse(o);
}

json_t *store_obj_parse_sans(const store_obj *o, const char *path)
{
    const char *dot = strchr(path, '.');
    jt_val v;
    int r =
        jt_member(jt_text(o->json, o->len), path, dot ? (size_t)(dot - path) : strlen(path), &v);
    if (r == 1 && dot) r = jt_member(v, dot + 1, strlen(dot + 1), &v);
    const char *end = r == 1 ? jt_skip(v) : NULL;
    if (!end) return store_obj_parse(o); /* absent, or the text cannot tell */
    /* the member's value replaced by null, parsed, the member dropped */
    size_t head = (size_t)(v.p - o->json), tail = o->len - (size_t)(end - o->json);
    char *text = malloc(head + 4 + tail);
    if (!text) return NULL;
    memcpy(text, o->json, head);
    memcpy(text + head, "null", 4);
    memcpy(text + head + 4, end, tail);
    json_t *obj = json_loadb(text, head + 4 + tail, 0, NULL);
    free(text);
    if (!obj) return NULL;
    if (dot) {
        char up[64];
        size_t alen = (size_t)(dot - path);
        if (alen < sizeof up) {
            memcpy(up, path, alen);
            up[alen] = '\0';
            json_object_del(json_object_get(obj, up), dot + 1);
        }
    } else {
        json_object_del(obj, path);
    }
    return obj;
}

/* Takes ownership of json and idx. */
static store_obj *obj_new(store *s, const char *key, int64_t rv, char *json, size_t len,
                          store_index *idx)
{
    store_obj *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->s = s;
    atomic_init(&o->refs, 1);
    o->rv = rv;
    o->key = strdup(key);
    const char *a = strchr(key, '/');
    const char *b = a ? strchr(a + 1, '/') : NULL;
    if (!o->key || !b) {
        free(o->key);
        free(o);
        return NULL;
    }
    size_t nslen = (size_t)(b - a - 1), namelen = strlen(b + 1);
    o->nsname = malloc(nslen + namelen + 2);
    if (!o->nsname) {
        free(o->key);
        free(o);
        return NULL;
    }
    memcpy(o->nsname, a + 1, nslen);
    o->nsname[nslen] = '\0';
    memcpy(o->nsname + nslen + 1, b + 1, namelen + 1);
    o->ns = o->nsname;
    o->name = o->nsname + nslen + 1;
    o->json = json;
    o->len = len;
    if (idx) o->idx = *idx;
    return o;
}

store_obj *store_obj_view(const store_obj *o, char *text, size_t len)
{
    store_index idx = {0};
    idx.labels = o->idx.labels ? json_incref(o->idx.labels) : NULL;
    if (o->idx.fields) {
        size_t n = 0; /* packed "label\0value\0...\0" */
        while (o->idx.fields[n])
            n += strlen(o->idx.fields + n) + 1;
        if ((idx.fields = malloc(n + 1))) memcpy(idx.fields, o->idx.fields, n + 1);
    }
    store_obj *v =
        (!o->idx.fields || idx.fields) ? obj_new(NULL, o->key, o->rv, text, len, &idx) : NULL;
    if (!v) {
        free(text);
        index_clear(&idx);
    }
    return v;
}

static store_obj *obj_from_text(store *s, const char *key, int64_t rv, const char *text, size_t len)
{
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, text, len);
    copy[len] = '\0';
    store_index idx = {0};
    if (s->indexer) {
        json_t *parsed = json_loadb(text, len, 0, NULL);
        if (parsed) s->indexer(key, parsed, &idx);
        json_decref(parsed);
    }
    store_obj *o = obj_new(s, key, rv, copy, len, &idx);
    if (!o) {
        free(copy);
        index_clear(&idx);
    }
    return o;
}

/* ---- tables ---- */

static size_t resource_len(const char *key)
{
    const char *slash = strchr(key, '/');
    return slash ? (size_t)(slash - key) : strlen(key);
}

static rtable *table_for(strmap *tables, const char *key, bool create)
{
    char res[256];
    size_t n = resource_len(key);
    if (n >= sizeof res) return NULL;
    memcpy(res, key, n);
    res[n] = '\0';
    rtable *t = strmap_get(tables, res);
    if (t || !create) return t;
    t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->resource = strdup(res);
    t->by_ns = strmap_new();
    if (!t->resource || !t->by_ns || strmap_put(tables, t->resource, t, NULL) != 0) {
        free(t->resource);
        strmap_free(t->by_ns);
        free(t);
        return NULL;
    }
    return t;
}

/* The namespace segment of "res/ns/..." into buf; false when the key holds no
 * complete one (no slash after it). */
static bool key_ns(const char *key, char *buf, size_t n)
{
    const char *a = strchr(key, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    if (!b || (size_t)(b - a - 1) >= n) return false;
    memcpy(buf, a + 1, (size_t)(b - a - 1));
    buf[b - a - 1] = '\0';
    return true;
}

static void nstable_free(nstable *n)
{
    strmap_free(n->objs);
    free(n->ns);
    free(n);
}

static strmap *ns_objs(rtable *t, const char *key, bool create)
{
    char ns[320];
    if (!key_ns(key, ns, sizeof ns)) return NULL;
    nstable *n = strmap_get(t->by_ns, ns);
    if (n || !create) return n ? n->objs : NULL;
    if (!(n = calloc(1, sizeof *n))) return NULL;
    n->ns = strdup(ns);
    n->objs = strmap_new();
    if (!n->ns || !n->objs || strmap_put(t->by_ns, n->ns, n, NULL) != 0) {
        nstable_free(n);
        return NULL;
    }
    return n->objs;
}

/* Replace (or remove, when o is NULL) the indexed object at key in one of
 * the store's two indexes (see struct store). */
static int index_set(strmap *tables, const char *key, store_obj *o)
{
    rtable *t = table_for(tables, key, o != NULL);
    strmap *m = t ? ns_objs(t, key, o != NULL) : NULL;
    if (!m) return o ? -1 : 0;
    void *old = NULL;
    if (o) {
        if (strmap_put(m, o->key, o, &old) != 0) return -1;
        store_obj_ref(o);
        t->count += old == NULL;
    } else {
        old = strmap_del(m, key);
        t->count -= old != NULL;
        if (strmap_count(m) == 0) { /* a deleted namespace leaves nothing behind */
            char ns[320];
            key_ns(key, ns, sizeof ns);
            nstable_free(strmap_del(t->by_ns, ns));
        }
    }
    store_obj_unref(old);
    return 0;
}

static store_obj *index_get(strmap *tables, const char *key)
{
    rtable *t = table_for(tables, key, false);
    strmap *m = t ? ns_objs(t, key, false) : NULL;
    return m ? strmap_get(m, key) : NULL;
}

/* ---- watch history ---- */

/* What an event keeps alive, counted as both of its values: a prev is often
 * the previous event's obj, so this over-counts by up to 2x, never under. */
static size_t event_bytes(const store_obj *obj, const store_obj *prev)
{
    return obj->len + (prev ? prev->len : 0);
}

static void ring_evict_oldest(store *s)
{
    store_event *old = &s->ring[s->seq_first % s->ring_cap];
    s->history_start = old->rv; /* watches must start at or after this */
    s->ring_bytes -= event_bytes(old->obj, old->prev);
    store_obj_unref(old->obj);
    store_obj_unref(old->prev);
    s->seq_first++;
}

/* The history is bounded by event count and by bytes: 600 updates of a
 * 900 KB object are 600 events but half a gigabyte. A watch resuming from
 * before what is kept gets 410 Gone (too old resource version). */
/* Whether watch w takes event e (under s->mu). */
static bool watch_takes(const store_watch *w, const store_event *e)
{
    return !strncmp(e->obj->key, w->prefix, w->prefix_len) &&
           (!w->filter || w->filter(w->filter_arg, e));
}

/* Tell a waiting or armed watch to look (under s->mu). */
static void watch_fire(store_watch *w)
{
    if (w->armed) {
        w->armed = false;
        w->notify(w->notify_arg);
    } else if (w->waiting) {
        pthread_cond_signal(&w->cv);
    }
}

static void fire_list(store_watch *w)
{
    for (; w; w = w->next)
        watch_fire(w);
}

/* The watches of event e's resource that take it: each is clean no more, and
 * woken if it waits for it. A clean watch busy elsewhere (neither waiting nor
 * armed) must lose `clean` too: else, should e fall out of the history before
 * it reads on, watch_take would skip e as none of its business. */
static void wake_for(store *s, store_watch *w, uint64_t q, const store_event *e)
{
    for (; w; w = w->next) {
        bool waits = w->waiting || w->armed;
        if ((!waits && !w->clean) || q < w->next_seq || !watch_takes(w, e)) continue;
        w->clean = false;
        if (waits) watch_fire(w);
    }
}

/* Wake the waiting watches that take any of the events from sequence
 * `from` on (under s->mu); all of them when `all` (closing, wake_all). */
static void wake_watches(store *s, uint64_t from, bool all)
{
    if (all) {
        void *v;
        for (size_t it = 0; strmap_next(s->watch_by_res, &it, NULL, &v);)
            fire_list(v);
        fire_list(s->watch_all);
        return;
    }
    if (from < s->seq_first) from = s->seq_first;
    char res[256];
    for (uint64_t q = from; q < s->seq_end; q++) {
        const store_event *e = &s->ring[q % s->ring_cap];
        size_t n = resource_len(e->obj->key);
        if (n < sizeof res) {
            memcpy(res, e->obj->key, n);
            res[n] = '\0';
            wake_for(s, strmap_get(s->watch_by_res, res), q, e);
        }
        wake_for(s, s->watch_all, q, e);
    }
}

static void ring_push(store *s, store_ev_type type, store_obj *obj, store_obj *prev)
{
    size_t n = event_bytes(obj, prev);
    while (s->seq_end - s->seq_first == s->ring_cap ||
           (s->seq_end > s->seq_first && s->ring_bytes + n > s->max_bytes))
        ring_evict_oldest(s);
    store_event *e = &s->ring[s->seq_end % s->ring_cap];
    e->type = type;
    e->rv = obj->rv;
    e->obj = obj;
    e->prev = prev;
    store_obj_ref(obj);
    if (prev) store_obj_ref(prev);
    s->ring_bytes += n;
    s->since_compact_bytes += n;
    s->seq_end++;
}

/* Drop from the backend the events the ring no longer holds. Caller holds
 * mu; it is released around the backend call (only the writer thread, or
 * open/close with no writer running, compacts). */
static void compact_backend(store *s)
{
    if (!s->be.compact || s->seq_end == s->seq_first) return;
    int64_t keep = s->ring[s->seq_first % s->ring_cap].rv;
    s->since_compact = 0;
    s->since_compact_bytes = 0;
    pthread_mutex_unlock(&s->mu);
    s->be.compact(s->be.impl, keep);
    pthread_mutex_lock(&s->mu);
}

/* First sequence whose revision is > after. Caller holds mu. */
static uint64_t ring_seek(store *s, int64_t after)
{
    uint64_t lo = s->seq_first, hi = s->seq_end;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (s->ring[mid % s->ring_cap].rv <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- loading ---- */

static void load_object(void *ctx, const char *key, int64_t rv, const char *json, size_t len)
{
    store *s = ctx;
    store_obj *o = obj_from_text(s, key, rv, json, len);
    if (!o) return;
    if (index_set(s->tables, key, o) != 0 || index_set(s->latest, key, o) != 0)
        fprintf(stderr, "{\"level\":\"error\",\"msg\":\"store: cannot index %s\"}\n", key);
    store_obj_unref(o);
}

static void load_event(void *ctx, const store_op *ev)
{
    store *s = ctx;
    if (s->seq_end == s->seq_first) s->history_start = ev->rv - 1;
    store_obj *cur = index_get(s->tables, ev->key);
    store_obj *o = NULL;
    if (cur && cur->rv == ev->rv) {
        o = cur; /* share the indexed object */
        store_obj_ref(o);
    } else {
        o = obj_from_text(s, ev->key, ev->rv, ev->json, ev->len);
    }
    if (!o) return;
    ring_push(s, ev->type, o, NULL); /* previous values are not persisted */
    store_obj_unref(o);
}

/* ---- writer thread ---- */

static void stats_observe(store *s, double secs, size_t ops)
{
    s->stats.batches++;
    s->stats.batch_ops += ops;
    s->stats.commit_seconds_sum += secs;
    for (int i = 0; i < 11; i++)
        if (secs <= store_commit_buckets[i]) s->stats.commit_hist[i]++;
    s->stats.commit_hist[11]++;
}

/* Derived writes wait in s->unflushed, newest value per key; a durable write
 * or delete of the same key supersedes the waiting value. */
static void unflushed_set(store *s, const char *key, store_obj *o)
{
    void *old = NULL;
    if (!o) {
        old = strmap_del(s->unflushed, key);
    } else {
        store_obj_ref(o);
        if (strmap_put(s->unflushed, key, o, &old) != 0)
            abort(); /* out of memory in the writer: memory and disk would part */
    }
    store_obj_unref(old);
}

static store_op op_of(const store_obj *o, store_ev_type type, bool no_history)
{
    return (store_op){type, o->rv, o->key, o->json, o->len, no_history};
}

static store_op *ops_reserve(store_op *ops, size_t *cap, size_t need)
{
    if (need <= *cap) return ops;
    *cap = need * 2;
    ops = realloc(ops, *cap * sizeof *ops);
    if (!ops) abort();
    return ops;
}

/* Tell the observers an event is published (under mu). */
static void observe(store *s, store_ev_type type, store_obj *obj, store_obj *prev)
{
    if (!s->nobservers) return;
    store_event ev = {type, obj->rv, obj, prev};
    for (size_t i = 0; i < s->nobservers; i++)
        s->observers[i].fn(s->observers[i].arg, &ev);
}

int store_observe(store *s, store_observer_fn fn, void *arg)
{
    pthread_mutex_lock(&s->mu);
    int rc = -1;
    if (s->nobservers < sizeof s->observers / sizeof *s->observers) {
        s->observers[s->nobservers].fn = fn;
        s->observers[s->nobservers++].arg = arg;
        rc = 0;
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void store_unobserve(store *s, store_observer_fn fn, void *arg)
{
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->nobservers; i++) {
        if (s->observers[i].fn != fn || s->observers[i].arg != arg) continue;
        memmove(&s->observers[i], &s->observers[i + 1],
                (s->nobservers - i - 1) * sizeof *s->observers);
        s->nobservers--;
        break;
    }
    pthread_mutex_unlock(&s->mu);
}

/* Whether revision rev belongs to a batch the backend refused (under mu). */
static bool rev_failed(const store *s, int64_t rev)
{
    for (size_t i = s->nfailed; i-- > 0;)
        if (rev >= s->failed[i].lo && rev <= s->failed[i].hi) return true;
    return false;
}

/* The backend refused `batch` (taken by the writer): undo it and every
 * transaction queued after it in the transactions' index, record their
 * revisions as failed, fail their waiters, and let the layer above derive
 * its state again. Takes txn_lock (no transaction may read what is undone)
 * and mu; called with neither held. */
static void fail_pending(store *s, pendq *batch, const char *err)
{
    pthread_mutex_lock(&s->txn_lock);
    pthread_mutex_lock(&s->mu);
    pendq later = s->queue;
    s->queue = (pendq){0};
    int64_t lo = INT64_MAX, hi = 0;
    /* newest first: each write puts back what it replaced */
    for (size_t k = 2; k-- > 0;) {
        pendq *q = k ? &later : batch;
        for (size_t i = q->n; i-- > 0;) {
            pending *p = &q->v[i];
            if (index_set(s->latest, p->obj->key, p->prev) != 0) abort(); /* (see commit) */
            if (p->obj->rv < lo) lo = p->obj->rv;
            if (p->obj->rv > hi) hi = p->obj->rv;
        }
    }
    if (hi) {
        if (s->nfailed == s->failed_cap) {
            size_t nc = s->failed_cap ? s->failed_cap * 2 : 8;
            void *nv = realloc(s->failed, nc * sizeof *s->failed);
            if (!nv) abort(); /* (a failure we could not record would be served as success) */
            s->failed = nv;
            s->failed_cap = nc;
        }
        s->failed[s->nfailed].lo = lo;
        s->failed[s->nfailed++].hi = hi;
    }
    snprintf(s->failed_err, sizeof s->failed_err, "%s", err);
    s->stats.failed_batches++;
    /* derived values waiting to be written may come from what failed: they
     * are derived again (the resets below) and written then */
    void *o;
    for (size_t it = 0; strmap_next(s->unflushed, &it, NULL, &o);)
        store_obj_unref(o);
    strmap_free(s->unflushed);
    if (!(s->unflushed = strmap_new())) abort();
    /* every waiter still waiting is one of these */
    durable_waiter *dead = s->waiters;
    size_t ndead = s->nwaiters;
    s->waiters = NULL;
    s->nwaiters = s->waiters_cap = 0;
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < s->nresets; i++)
        s->resets[i].fn(s->resets[i].arg);
    pthread_mutex_unlock(&s->txn_lock);
    fprintf(stderr,
            "{\"level\":\"error\",\"msg\":\"store: the backend refused a batch; its "
            "transactions failed\",\"revisions\":\"%lld-%lld\"}\n",
            (long long)lo, (long long)hi);
    pthread_cond_broadcast(&s->done);
    for (size_t i = 0; i < ndead; i++)
        dead[i].fn(dead[i].arg, false);
    free(dead);
    for (size_t k = 0; k < 2; k++) {
        pendq *q = k ? &later : batch;
        for (size_t i = 0; i < q->n; i++) {
            store_obj_unref(q->v[i].obj);
            store_obj_unref(q->v[i].prev);
        }
        q->n = 0;
    }
    free(later.v);
}

/* Move the waiters whose revision is durable into *out (grown as needed;
 * under s->mu). Out of memory leaves them waiting for the next batch. */
static size_t take_ready_waiters(store *s, durable_waiter **out, size_t *cap)
{
    size_t n = 0, keep = 0;
    for (size_t i = 0; i < s->nwaiters; i++) {
        durable_waiter *w = &s->waiters[i];
        if (w->rev <= s->durable_rev && n == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            durable_waiter *nv = realloc(*out, nc * sizeof *nv);
            if (nv) {
                *out = nv;
                *cap = nc;
            }
        }
        if (w->rev <= s->durable_rev && n < *cap)
            (*out)[n++] = *w;
        else
            s->waiters[keep++] = *w;
    }
    s->nwaiters = keep;
    return n;
}

static void *writer_main(void *arg)
{
    store *s = arg;
    pthread_setname_np(pthread_self(), "store-writer");
    pendq batch = {0};
    store_op *ops = NULL;
    size_t ops_cap = 0;
    durable_waiter *ready = NULL;
    size_t ready_cap = 0;
    char err[512];
    double last_flush = clock_mono_s();

    pthread_mutex_lock(&s->mu);
    for (;;) {
        bool waiting_derived = strmap_count(s->unflushed) > 0;
        while (s->queue.n == 0 && !s->closing) {
            if (!waiting_derived) {
                pthread_cond_wait(&s->work, &s->mu);
                continue;
            }
            double due = last_flush + s->derived_flush_s;
            if (clock_mono_s() >= due) break;
            struct timespec ts = {(time_t)due, (long)((due - (double)(time_t)due) * 1e9)};
            pthread_cond_timedwait(&s->work, &s->mu, &ts);
        }
        if (s->queue.n == 0 && s->closing && !waiting_derived) break;
        pendq tmp = s->queue; /* swap: committers keep queueing while we write */
        s->queue = batch;
        batch = tmp;
        int64_t rev = s->queued_rev;
        bool closing = s->closing;
        pthread_mutex_unlock(&s->mu);

        size_t n = 0;
        ops = ops_reserve(ops, &ops_cap, batch.n);
        for (size_t i = 0; i < batch.n; i++) {
            pending *p = &batch.v[i];
            if (p->derived) {
                unflushed_set(s, p->obj->key, p->obj);
                continue;
            }
            if (waiting_derived || strmap_count(s->unflushed)) unflushed_set(s, p->obj->key, NULL);
            ops[n++] = op_of(p->obj, p->type, false);
        }
        double t0 = clock_mono_s();
        size_t flushed = 0;
        if (strmap_count(s->unflushed) && (closing || t0 - last_flush >= s->derived_flush_s)) {
            ops = ops_reserve(ops, &ops_cap, n + strmap_count(s->unflushed));
            void *o;
            for (size_t it = 0; strmap_next(s->unflushed, &it, NULL, &o);)
                ops[n + flushed++] = op_of(o, STORE_EV_MODIFIED, true);
            n += flushed;
            last_flush = t0;
        }
        if (s->be.write_batch(s->be.impl, ops, n, rev, err, sizeof err) != 0) {
            /* Nothing of the batch was published: undo it, and everything
             * committed after it (which may have read it), and fail them. */
            fail_pending(s, &batch, err);
            pthread_mutex_lock(&s->mu);
            continue;
        }
        for (size_t i = n - flushed; i < n; i++)
            unflushed_set(s, ops[i].key, NULL);
        double secs = clock_mono_s() - t0;

        pthread_mutex_lock(&s->mu);
        s->stats.derived_flushed += flushed;
        if (batch.n == 0) continue; /* a flush of derived values only */
        stats_observe(s, secs, batch.n);
        /* Readers see the batch now: the index and the history change under
         * mu together, so a list at revision R and a watch from R (which
         * takes mu) never see an event twice or miss one. */
        pthread_rwlock_wrlock(&s->index_lock);
        for (size_t i = 0; i < batch.n; i++) {
            pending *p = &batch.v[i];
            /* (only a hash-table grow can fail: out of memory here is fatal,
             * as in Redis, rather than a half-updated index) */
            if (index_set(s->tables, p->obj->key, p->type == STORE_EV_DELETED ? NULL : p->obj) != 0)
                abort();
        }
        s->rev = batch.v[batch.n - 1].obj->rv;
        pthread_rwlock_unlock(&s->index_lock);
        uint64_t first_seq = s->seq_end;
        for (size_t i = 0; i < batch.n; i++) {
            pending *p = &batch.v[i];
            observe(s, p->type, p->obj, p->prev);
            ring_push(s, p->type, p->obj, p->prev);
            store_obj_unref(p->obj);
            store_obj_unref(p->prev);
        }
        s->durable_rev = batch.v[batch.n - 1].obj->rv;
        s->since_compact += batch.n;
        batch.n = 0;
        /* The watches are woken under the mutex (one may close, and free its
         * condition, as soon as it is released), the committers outside it:
         * a woken thread can take it at once instead of sleeping again on it.
         * The predicates changed under it above. */
        wake_watches(s, first_seq, false);
        size_t nready = take_ready_waiters(s, &ready, &ready_cap);
        pthread_mutex_unlock(&s->mu);
        pthread_cond_broadcast(&s->done);
        for (size_t i = 0; i < nready; i++)
            ready[i].fn(ready[i].arg, true);
        pthread_mutex_lock(&s->mu);
        /* By count and by bytes, so the backend's history (read back on
         * every start) stays within a quarter more than the ring's. */
        if (s->since_compact >= s->ring_cap / 4 || s->since_compact_bytes >= s->max_bytes / 4)
            compact_backend(s);
    }
    pthread_mutex_unlock(&s->mu);
    free(batch.v);
    free(ops);
    free(ready);
    return NULL;
}

/* ---- open / close ---- */

store *store_open(store_backend *be, store_indexer indexer, const store_config *cfg, char *err,
                  size_t errlen)
{
    store *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->be = *be;
    s->indexer = indexer;
    s->ring_cap = cfg && cfg->event_history ? cfg->event_history : DEFAULT_HISTORY;
    s->max_bytes = cfg && cfg->history_bytes ? cfg->history_bytes : DEFAULT_HISTORY_BYTES;
    s->doc_budget = cfg && cfg->doc_cache_bytes ? cfg->doc_cache_bytes : DEFAULT_DOC_CACHE_BYTES;
    pthread_mutex_init(&s->doc_mu, NULL);
    s->max_object =
        cfg && cfg->max_object_bytes ? cfg->max_object_bytes : STORE_DEFAULT_MAX_OBJECT_BYTES;
    s->derived_flush_s =
        (cfg && cfg->derived_flush_ms ? cfg->derived_flush_ms : DEFAULT_DERIVED_FLUSH_MS) / 1e3;
    s->ring = calloc(s->ring_cap, sizeof *s->ring);
    s->tables = strmap_new();
    s->latest = strmap_new();
    s->unflushed = strmap_new();
    s->watch_by_res = strmap_new();
    if (!s->ring || !s->tables || !s->latest || !s->unflushed || !s->watch_by_res) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    /* Transactions are short (microseconds); spinning briefly before sleeping
     * saves a context switch per contended commit under bursts. */
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&s->txn_lock, &ma);
    pthread_mutexattr_destroy(&ma);
    pthread_rwlock_init(&s->index_lock, NULL);
    pthread_mutex_init(&s->mu, NULL);
    clock_cond_init(&s->work);
    clock_cond_init(&s->done);

    int64_t rev = 0;
    s->history_start = -1;
    if (s->be.load(s->be.impl, s, load_object, load_event, &rev, err, errlen) != 0) goto fail;
    s->rev = s->latest_rev = s->durable_rev = s->queued_rev = rev;
    if (s->seq_end == s->seq_first) s->history_start = rev;
    /* What the load read but the ring did not keep (a smaller history than
     * the last run's, or a database from before the byte bound) is dropped
     * now, not read again at the next start. */
    pthread_mutex_lock(&s->mu);
    compact_backend(s);
    pthread_mutex_unlock(&s->mu);
    if (pthread_create(&s->writer, NULL, writer_main, s) != 0) {
        snprintf(err, errlen, "cannot start writer thread");
        goto fail;
    }
    return s;
fail:
    /* Partially loaded tables are released the same way as on close. */
    s->closing = true;
    store_close(s);
    return NULL;
}

static void tables_free(strmap *tables)
{
    if (!tables) return;
    const char *k;
    void *v;
    for (size_t it = 0; strmap_next(tables, &it, &k, &v);) {
        rtable *t = v;
        void *n, *o;
        for (size_t i = 0; strmap_next(t->by_ns, &i, NULL, &n);) {
            for (size_t j = 0; strmap_next(((nstable *)n)->objs, &j, NULL, &o);)
                store_obj_unref(o);
            nstable_free(n);
        }
        strmap_free(t->by_ns);
        free(t->resource);
        free(t);
    }
    strmap_free(tables);
}

void store_close(store *s)
{
    if (!s) return;
    bool started = !s->closing;
    pthread_mutex_lock(&s->mu);
    s->closing = true;
    pthread_cond_broadcast(&s->work);
    pthread_cond_broadcast(&s->done);
    wake_watches(s, s->seq_end, true);
    pthread_mutex_unlock(&s->mu);
    if (started) pthread_join(s->writer, NULL);
    if (started) { /* the next start reads back exactly the history kept */
        pthread_mutex_lock(&s->mu);
        compact_backend(s);
        pthread_mutex_unlock(&s->mu);
    }
    for (uint64_t q = s->seq_first; q < s->seq_end; q++) {
        store_obj_unref(s->ring[q % s->ring_cap].obj);
        store_obj_unref(s->ring[q % s->ring_cap].prev);
    }
    for (size_t i = 0; i < s->nwaiters; i++) /* (none: the writer made all durable) */
        s->waiters[i].fn(s->waiters[i].arg, s->waiters[i].rev <= s->durable_rev);
    free(s->waiters);
    free(s->failed);
    strmap_free(s->watch_by_res); /* (every watch is closed by now) */
    free(s->ring);
    free(s->queue.v);
    strmap_free(s->unflushed); /* the writer flushed it before exiting */
    doc_clear(s);              /* (objects freed from here on leave the cache alone) */
    tables_free(s->tables);
    tables_free(s->latest);
    if (s->be.close) s->be.close(s->be.impl);
    free(s);
}

/* ---- reads ---- */

int64_t store_revision(store *s)
{
    pthread_rwlock_rdlock(&s->index_lock);
    int64_t r = s->rev;
    pthread_rwlock_unlock(&s->index_lock);
    return r;
}

int64_t store_oldest_revision(store *s)
{
    pthread_mutex_lock(&s->mu);
    int64_t r = s->history_start;
    pthread_mutex_unlock(&s->mu);
    return r;
}

store_obj *store_get(store *s, const char *key)
{
    pthread_rwlock_rdlock(&s->index_lock);
    store_obj *o = index_get(s->tables, key);
    if (o) store_obj_ref(o);
    pthread_rwlock_unlock(&s->index_lock);
    return o;
}

size_t store_count(store *s, const char *resource)
{
    pthread_rwlock_rdlock(&s->index_lock);
    rtable *t = strmap_get(s->tables, resource);
    size_t n = t ? t->count : 0;
    pthread_rwlock_unlock(&s->index_lock);
    return n;
}

static int cmp_obj_key(const void *a, const void *b)
{
    return strcmp((*(store_obj *const *)a)->key, (*(store_obj *const *)b)->key);
}

/* Collect the objects under prefix (unsorted), references unless `borrow`.
 * `exact`: every key of m starts with prefix (m is the prefix's namespace
 * table), so no key is read. Caller holds a lock. */
static void collect_from(strmap *m, const char *prefix, size_t plen, bool exact, bool borrow,
                         store_obj **v, size_t *k)
{
    void *val;
    for (size_t it = 0; strmap_next(m, &it, NULL, &val);) {
        store_obj *o = val;
        if (!exact && strncmp(o->key, prefix, plen) != 0) continue;
        if (!borrow) store_obj_ref(o);
        v[(*k)++] = o;
    }
}

/* Collect from one of the two indexes (the caller holds what guards it). */
static int collect(strmap *tables, const char *prefix, bool borrow, store_obj ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    rtable *t = table_for(tables, prefix, false);
    if (!t) return 0;
    char ns[320];
    bool one_ns = key_ns(prefix, ns, sizeof ns);
    nstable *nt = one_ns ? strmap_get(t->by_ns, ns) : NULL;
    strmap *only = nt ? nt->objs : NULL;
    if (one_ns && !only) return 0;
    size_t plen = strlen(prefix), cap = only ? strmap_count(only) : t->count, k = 0;
    store_obj **v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) return -1;
    if (only) {
        /* "resource/ns/" names the whole table (key_ns stopped at its end) */
        bool exact =
            prefix[plen - 1] == '/' && strchr(strchr(prefix, '/') + 1, '/') == prefix + plen - 1;
        collect_from(only, prefix, plen, exact, borrow, v, &k);
    } else {
        void *n;
        for (size_t i = 0; strmap_next(t->by_ns, &i, NULL, &n);)
            collect_from(((nstable *)n)->objs, prefix, plen, false, borrow, v, &k);
    }
    *out = v;
    *n = k;
    return 0;
}

int store_list(store *s, const char *prefix, const char *after_key, size_t limit, store_obj ***out,
               size_t *n, int64_t *rev, bool *more)
{
    store_obj **v;
    size_t k;
    pthread_rwlock_rdlock(&s->index_lock);
    int rc = collect(s->tables, prefix, false, &v, &k);
    if (rev) *rev = s->rev;
    pthread_rwlock_unlock(&s->index_lock);
    if (rc != 0) return -1;
    if (k > 1) qsort(v, k, sizeof *v, cmp_obj_key);
    size_t start = 0;
    if (after_key)
        while (start < k && strcmp(v[start]->key, after_key) <= 0)
            store_obj_unref(v[start++]);
    size_t end = k;
    if (limit && k - start > limit) end = start + limit;
    for (size_t i = end; i < k; i++)
        store_obj_unref(v[i]);
    if (more) *more = end < k;
    if (start && end > start) memmove(v, v + start, (end - start) * sizeof *v);
    *out = v;
    *n = end - start;
    return 0;
}

/* A retained event's object under prefix replaced by one with the current
 * index: the indexed object when it is that version, else a copy. Caller
 * holds the writer lock and mu. 0, or -1 when out of memory (kept as is). */
static int reindex_event_obj(store *s, store_obj **p, const char *prefix, size_t plen)
{
    store_obj *o = *p;
    if (!o || strncmp(o->key, prefix, plen) != 0) return 0;
    store_obj *cur = index_get(s->tables, o->key), *nw = NULL;
    if (cur && cur->rv == o->rv) {
        store_obj_ref(cur);
        nw = cur;
    } else if (!(nw = obj_from_text(s, o->key, o->rv, o->json, o->len))) {
        return -1;
    }
    store_obj_unref(o);
    *p = nw;
    return 0;
}

/* Replace the objects under prefix in one index by copies indexed anew;
 * the readers' index is changed under index_lock. */
static int reindex_tables(store *s, strmap *tables, const char *prefix, bool readers)
{
    store_obj **v = NULL;
    size_t k = 0;
    int rc = collect(tables, prefix, true, &v, &k);
    for (size_t i = 0; rc == 0 && i < k; i++) {
        store_obj *o = obj_from_text(s, v[i]->key, v[i]->rv, v[i]->json, v[i]->len);
        if (!o) {
            rc = -1;
            break;
        }
        if (readers) pthread_rwlock_wrlock(&s->index_lock);
        int set = index_set(tables, o->key, o); /* drops the index's reference to v[i] */
        if (readers) pthread_rwlock_unlock(&s->index_lock);
        store_obj_unref(o);
        if (set != 0) rc = -1;
    }
    free(v);
    return rc;
}

int store_reindex(store *s, const char *prefix)
{
    store_txn *t = store_begin(s); /* no write can move the index meanwhile */
    if (!t) return -1;
    int rc = reindex_tables(s, s->latest, prefix, false);
    if (rc == 0) rc = reindex_tables(s, s->tables, prefix, true);
    /* the watch history too: a watch resuming from it filters on the index */
    size_t plen = strlen(prefix);
    pthread_mutex_lock(&s->mu);
    for (uint64_t q = s->seq_first; rc == 0 && q < s->seq_end; q++) {
        store_event *e = &s->ring[q % s->ring_cap];
        if (reindex_event_obj(s, &e->obj, prefix, plen) != 0 ||
            reindex_event_obj(s, &e->prev, prefix, plen) != 0)
            rc = -1;
    }
    pthread_mutex_unlock(&s->mu);
    store_abort(t);
    return rc;
}

/* ---- transactions ---- */

store_txn *store_begin(store *s)
{
    store_txn *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->s = s;
    pthread_mutex_lock(&s->txn_lock);
    t->rev = s->latest_rev + 1; /* only transactions move it, and we hold txn_lock */
    return t;
}

int64_t store_txn_rev(store_txn *t)
{
    return t->rev;
}

size_t store_txn_writes(const store_txn *t)
{
    return t->n;
}

static pending *txn_find(store_txn *t, const char *key)
{
    for (size_t i = t->n; i-- > 0;)
        if (strcmp(t->w[i].obj->key, key) == 0) return &t->w[i];
    return NULL;
}

store_obj *store_txn_get(store_txn *t, const char *key)
{
    pending *p = txn_find(t, key);
    store_obj *o;
    if (p)
        o = p->type == STORE_EV_DELETED ? NULL : p->obj;
    else
        o = index_get(t->s->latest, key); /* (the txn_lock holder's alone) */
    if (o) store_obj_ref(o);
    return o;
}

static int txn_list(store_txn *t, const char *prefix, bool sorted, bool borrow, store_obj ***out,
                    size_t *n);

int store_txn_list(store_txn *t, const char *prefix, store_obj ***out, size_t *n)
{
    return txn_list(t, prefix, true, false, out, n);
}

int store_txn_list_any(store_txn *t, const char *prefix, store_obj ***out, size_t *n)
{
    return txn_list(t, prefix, false, false, out, n);
}

int store_txn_list_borrowed(store_txn *t, const char *prefix, store_obj ***out, size_t *n)
{
    return txn_list(t, prefix, false, true, out, n);
}

static void unref_unless(store_obj *o, bool borrow)
{
    if (!borrow) store_obj_unref(o);
}

static int txn_list(store_txn *t, const char *prefix, bool sorted, bool borrow, store_obj ***out,
                    size_t *n)
{
    store_obj **v;
    size_t k;
    if (collect(t->s->latest, prefix, borrow, &v, &k) != 0) return -1;
    size_t plen = strlen(prefix);
    for (size_t i = 0; i < t->n; i++) {
        pending *p = &t->w[i];
        if (strncmp(p->obj->key, prefix, plen) != 0) continue;
        size_t j = 0;
        while (j < k && strcmp(v[j]->key, p->obj->key) != 0)
            j++;
        if (j < k) {
            unref_unless(v[j], borrow);
            v[j] = v[--k];
        }
        if (p->type == STORE_EV_DELETED) continue;
        store_obj **nv = realloc(v, (k + 1) * sizeof *v);
        if (!nv) {
            for (size_t q = 0; q < k; q++)
                unref_unless(v[q], borrow);
            free(v);
            return -1;
        }
        v = nv;
        if (!borrow) store_obj_ref(p->obj);
        v[k++] = p->obj;
    }
    if (sorted && k > 1) qsort(v, k, sizeof *v, cmp_obj_key);
    *out = v;
    *n = k;
    return 0;
}

static int txn_push(store_txn *t, store_ev_type type, store_obj *o, bool derived)
{
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 4;
        pending *nw = realloc(t->w, nc * sizeof *nw);
        if (!nw) return -1;
        t->w = nw;
        t->cap = nc;
    }
    t->w[t->n++] = (pending){type, o, NULL, derived};
    return 0;
}

static char *serialize(const json_t *obj, size_t *len)
{
    return jdump(obj, len);
}

/* Whether a value of len bytes at key may not be written: longer than the
 * limit and than the value it replaces. Called only past the limit. */
static bool too_large(store_txn *t, const char *key, size_t len)
{
    store_obj *cur = store_txn_get(t, key);
    bool grows = !cur || len > cur->len;
    store_obj_unref(cur);
    return grows;
}

/* `text`: the caller's serialisation of obj (ownership moves here), or NULL. */
static int txn_put(store_txn *t, const char *key, const json_t *obj, char *text, size_t len,
                   store_index *idx, bool derived)
{
    store_index local = {0};
    if (!text) text = serialize(obj, &len);
    if (!text) goto fail;
    /* The size limit, on the text every write makes anyway: one comparison
     * on the hot path. Derived values are the server's own summaries. */
    if (!derived && len > t->s->max_object && too_large(t, key, len)) {
        free(text);
        if (idx) index_clear(idx);
        return STORE_TOO_LARGE;
    }
    if (idx)
        local = *idx;
    else if (t->s->indexer)
        t->s->indexer(key, obj, &local);
    store_obj *o = obj_new(t->s, key, t->rev, text, len, &local);
    if (!o) goto fail;
    store_obj *cur = store_txn_get(t, key);
    store_ev_type type = cur ? STORE_EV_MODIFIED : STORE_EV_ADDED;
    store_obj_unref(cur);
    if (txn_push(t, type, o, derived) != 0) {
        store_obj_unref(o);
        t->failed = 1;
        return -1;
    }
    return 0;
fail:
    free(text);
    index_clear(idx ? idx : &local);
    t->failed = 1;
    return -1;
}

int store_txn_put(store_txn *t, const char *key, const json_t *obj, store_index *idx)
{
    return txn_put(t, key, obj, NULL, 0, idx, false);
}

int store_txn_put_derived(store_txn *t, const char *key, const json_t *obj, store_index *idx)
{
    return txn_put(t, key, obj, NULL, 0, idx, true);
}

int store_txn_put_derived_text(store_txn *t, const char *key, const json_t *obj, char *text,
                               size_t len)
{
    return txn_put(t, key, obj, text, len, NULL, true);
}

int store_txn_delete(store_txn *t, const char *key, const json_t *last)
{
    size_t len = 0;
    char *text = serialize(last, &len);
    store_index idx = {0};
    if (!text) goto fail;
    if (t->s->indexer) t->s->indexer(key, last, &idx);
    store_obj *o = obj_new(t->s, key, t->rev, text, len, &idx);
    if (!o) goto fail;
    if (txn_push(t, STORE_EV_DELETED, o, false) != 0) {
        store_obj_unref(o);
        goto fail_noidx;
    }
    return 0;
fail:
    free(text);
    index_clear(&idx);
fail_noidx:
    t->failed = 1;
    return -1;
}

static void txn_free(store_txn *t)
{
    for (size_t i = 0; i < t->n; i++) {
        store_obj_unref(t->w[i].obj);
        store_obj_unref(t->w[i].prev);
    }
    free(t->w);
    free(t);
}

int store_txn_on_end(store_txn *t, store_txn_end_fn fn, void *arg)
{
    if (t->nhooks == TXN_MAX_HOOKS) return -1;
    t->hooks[t->nhooks].fn = fn;
    t->hooks[t->nhooks++].arg = arg;
    return 0;
}

/* Still under txn_lock: the next transaction sees what the hooks publish. */
static void run_hooks(store_txn *t, bool committed)
{
    for (size_t i = 0; i < t->nhooks; i++)
        t->hooks[i].fn(t->hooks[i].arg, t->rev, committed);
    t->nhooks = 0;
}

static _Thread_local store_capture_fn capture_fn;
static _Thread_local void *capture_arg;

void store_capture_aborts(store_capture_fn fn, void *arg)
{
    capture_fn = fn;
    capture_arg = arg;
}

void store_abort(store_txn *t)
{
    if (!t) return;
    for (size_t i = 0; capture_fn && i < t->n; i++)
        capture_fn(capture_arg, t->w[i].type, t->w[i].obj);
    run_hooks(t, false);
    pthread_mutex_unlock(&t->s->txn_lock);
    txn_free(t);
}

static int queue_reserve(pendq *q, size_t extra)
{
    if (q->n + extra <= q->cap) return 0;
    size_t nc = (q->n + extra) * 2;
    pending *nv = realloc(q->v, nc * sizeof *nv);
    if (!nv) return -1;
    q->v = nv;
    q->cap = nc;
    return 0;
}

/* ---- durability ---- */

static _Thread_local bool defer_on;
static _Thread_local int64_t defer_rev;

void store_defer_durability(bool on)
{
    defer_on = on;
    defer_rev = 0;
}

int64_t store_deferred_rev(void)
{
    return defer_rev;
}

int store_when_durable(store *s, int64_t rev, void (*fn)(void *arg, bool ok), void *arg)
{
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    if (rev_failed(s, rev)) {
        rc = 2;
    } else if (s->durable_rev < rev) {
        rc = 1;
        if (s->nwaiters == s->waiters_cap) {
            size_t nc = s->waiters_cap ? s->waiters_cap * 2 : 64;
            durable_waiter *nv = realloc(s->waiters, nc * sizeof *nv);
            if (!nv) {
                rc = -1;
            } else {
                s->waiters = nv;
                s->waiters_cap = nc;
            }
        }
        if (rc == 1) s->waiters[s->nwaiters++] = (durable_waiter){rev, fn, arg};
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

bool store_is_durable(store *s, int64_t rev)
{
    pthread_mutex_lock(&s->mu);
    bool d = s->durable_rev >= rev && !rev_failed(s, rev);
    pthread_mutex_unlock(&s->mu);
    return d;
}

bool store_rev_failed(store *s, int64_t rev, char *err, size_t errlen)
{
    pthread_mutex_lock(&s->mu);
    bool f = rev_failed(s, rev);
    if (f && err) snprintf(err, errlen, "%s", s->failed_err);
    pthread_mutex_unlock(&s->mu);
    return f;
}

int store_wait_durable(store *s, int64_t rev)
{
    pthread_mutex_lock(&s->mu);
    while (s->durable_rev < rev && !rev_failed(s, rev) && !s->closing)
        pthread_cond_wait(&s->done, &s->mu);
    int rc = s->durable_rev >= rev && !rev_failed(s, rev) ? 0 : -1;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int store_sync(store *s)
{
    pthread_mutex_lock(&s->txn_lock);
    int64_t rev = s->latest_rev;
    pthread_mutex_unlock(&s->txn_lock);
    return store_wait_durable(s, rev);
}

int store_on_reset(store *s, void (*fn)(void *arg), void *arg)
{
    if (s->nresets == sizeof s->resets / sizeof *s->resets) return -1;
    s->resets[s->nresets].fn = fn;
    s->resets[s->nresets++].arg = arg;
    return 0;
}

int store_commit(store_txn *t)
{
    store *s = t->s;
    if (t->failed) {
        store_abort(t);
        return -1;
    }
    if (t->n == 0) { /* nothing written: no revision consumed */
        store_abort(t);
        return 0;
    }
    /* Make every allocation before touching the index, so that once it changes
     * nothing can fail. `mu` is held across the apply so the writer cannot swap
     * the queue between the reservation and the append (lock order: mu, then
     * index_lock; nothing takes them the other way round). */
    pthread_mutex_lock(&s->mu);
    int rc = queue_reserve(&s->queue, t->n);
    for (size_t i = 0; rc == 0 && i < t->n; i++)
        if (!table_for(s->latest, t->w[i].obj->key, true) ||
            !table_for(s->tables, t->w[i].obj->key, true))
            rc = -1;
    if (rc != 0) {
        pthread_mutex_unlock(&s->mu);
        store_abort(t);
        return -1;
    }
    /* Applied to the transactions' index only: readers see it once durable. */
    for (size_t i = 0; i < t->n; i++) {
        pending *p = &t->w[i];
        s->stats.derived_writes += p->derived;
        store_obj *cur = index_get(s->latest, p->obj->key);
        if (cur) store_obj_ref(cur);
        p->prev = cur;
        /* Only a hash-table grow can fail here; out of memory mid-apply is fatal,
         * as in Redis, rather than leaving the index half-updated. */
        if (index_set(s->latest, p->obj->key, p->type == STORE_EV_DELETED ? NULL : p->obj) != 0)
            abort();
    }
    s->latest_rev = t->rev;
    memcpy(s->queue.v + s->queue.n, t->w, t->n * sizeof *t->w);
    s->queue.n += t->n;
    s->queued_rev = t->rev;
    s->stats.commits++;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);

    /* The queue now owns the write set's references. */
    int64_t rev = t->rev;
    t->n = 0;
    run_hooks(t, true);
    pthread_mutex_unlock(&s->txn_lock);
    txn_free(t);

    if (defer_on) { /* the caller waits for durability its own way */
        if (rev > defer_rev) defer_rev = rev;
        return 0;
    }
    return store_wait_durable(s, rev);
}

/* ---- changes written elsewhere ---- */

int store_ingest(store *s, const store_op *ops, size_t n, char *err, size_t errlen)
{
    store_obj **objs = calloc(n ? n : 1, sizeof *objs);
    if (!objs) return snprintf(err, errlen, "out of memory"), -1;
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].key || !ops[i].json ||
            !(objs[i] = obj_from_text(s, ops[i].key, ops[i].rv, ops[i].json, ops[i].len))) {
            snprintf(err, errlen, "cannot take in %s", ops[i].key ? ops[i].key : "(no key)");
            for (size_t j = 0; j < i; j++)
                store_obj_unref(objs[j]);
            free(objs);
            return -1;
        }
    }
    pthread_mutex_lock(&s->txn_lock); /* (no transaction reads meanwhile) */
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    if (s->queue.n) {
        snprintf(err, errlen, "local writes are waiting for the disk");
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < n; i++)
        if (!table_for(s->latest, ops[i].key, true) || !table_for(s->tables, ops[i].key, true) ||
            ops[i].rv <= s->latest_rev) {
            snprintf(err, errlen, "%s at revision %lld: not after %lld", ops[i].key,
                     (long long)ops[i].rv, (long long)s->latest_rev);
            rc = -1;
        }
    if (rc != 0) {
        pthread_mutex_unlock(&s->mu);
        pthread_mutex_unlock(&s->txn_lock);
        for (size_t i = 0; i < n; i++)
            store_obj_unref(objs[i]);
        free(objs);
        return -1;
    }
    uint64_t first_seq = s->seq_end;
    pthread_rwlock_wrlock(&s->index_lock);
    for (size_t i = 0; i < n; i++) {
        store_obj *o = objs[i], *prev = index_get(s->latest, o->key);
        if (prev) store_obj_ref(prev);
        store_ev_type type = ops[i].type == STORE_EV_DELETED ? STORE_EV_DELETED
                             : prev                          ? STORE_EV_MODIFIED
                                                             : STORE_EV_ADDED;
        store_obj *now = type == STORE_EV_DELETED ? NULL : o;
        /* (as at a commit: out of memory mid-apply is fatal) */
        if (index_set(s->latest, o->key, now) != 0 || index_set(s->tables, o->key, now) != 0)
            abort();
        s->rev = s->latest_rev = s->durable_rev = s->queued_rev = o->rv;
        pthread_rwlock_unlock(&s->index_lock);
        observe(s, type, o, prev);
        ring_push(s, type, o, prev);
        pthread_rwlock_wrlock(&s->index_lock);
        store_obj_unref(prev);
        store_obj_unref(o);
    }
    pthread_rwlock_unlock(&s->index_lock);
    s->stats.ingested += n;
    wake_watches(s, first_seq, false);
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_unlock(&s->txn_lock);
    pthread_cond_broadcast(&s->done);
    free(objs);
    return 0;
}

/* ---- watches ---- */

static void watch_link(store *s, store_watch *w, store_watch *head)
{
    w->prev_w = NULL;
    w->next = head;
    if (head) head->prev_w = w;
}

static void watch_free_struct(store_watch *w)
{
    pthread_cond_destroy(&w->cv);
    free(w->prefix);
    free(w->res);
    free(w);
}

/* The resource a watch prefix names ("pods/ns/" -> "pods"), malloc'd; NULL
 * (listed with every resource's watches) for "" or a prefix without one. */
static char *prefix_resource(const char *prefix)
{
    const char *slash = strchr(prefix, '/');
    return slash && slash > prefix ? strndup(prefix, (size_t)(slash - prefix)) : NULL;
}

static store_watch *watch_open(store *s, const char *prefix, int64_t after,
                               store_watch_filter filter, void *arg, void (*notify)(void *),
                               void *notify_arg, bool *expired)
{
    *expired = false;
    store_watch *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->s = s;
    w->prefix = strdup(prefix);
    w->prefix_len = strlen(prefix);
    w->res = prefix_resource(prefix);
    w->filter = filter;
    w->filter_arg = arg;
    w->notify = notify;
    w->notify_arg = notify_arg;
    clock_cond_init(&w->cv);
    if (!w->prefix || (w->prefix_len && strchr(prefix, '/') > prefix && !w->res)) {
        watch_free_struct(w);
        return NULL;
    }
    pthread_mutex_lock(&s->mu);
    if (after < s->history_start) {
        pthread_mutex_unlock(&s->mu);
        *expired = true;
        watch_free_struct(w);
        return NULL;
    }
    if (w->res) {
        store_watch *head = strmap_get(s->watch_by_res, w->res);
        if (strmap_put(s->watch_by_res, w->res, w, NULL) != 0) {
            pthread_mutex_unlock(&s->mu);
            watch_free_struct(w);
            return NULL;
        }
        watch_link(s, w, head);
    } else {
        watch_link(s, w, s->watch_all);
        s->watch_all = w;
    }
    w->next_seq = ring_seek(s, after);
    w->position = after;
    w->wake_seen = s->wake_gen;
    s->watchers++;
    pthread_mutex_unlock(&s->mu);
    return w;
}

store_watch *store_watch_open(store *s, const char *prefix, int64_t after, bool *expired)
{
    return watch_open(s, prefix, after, NULL, NULL, NULL, NULL, expired);
}

store_watch *store_watch_open_filtered(store *s, const char *prefix, int64_t after,
                                       store_watch_filter filter, void *arg, bool *expired)
{
    return watch_open(s, prefix, after, filter, arg, NULL, NULL, expired);
}

store_watch *store_watch_open_notify(store *s, const char *prefix, int64_t after,
                                     store_watch_filter filter, void *arg,
                                     void (*notify)(void *arg), void *notify_arg, bool *expired)
{
    return watch_open(s, prefix, after, filter, arg, notify, notify_arg, expired);
}

/* The next event w takes, as far as the history goes (under s->mu): 1 with
 * *ev set (references taken), 0 when it has read everything, -1 when it fell
 * out of the history while events it takes were in what was dropped. */
static int watch_take(store *s, store_watch *w, store_event *ev)
{
    if (w->next_seq < s->seq_first) {
        if (!w->clean) return -1;
        w->next_seq = s->seq_first; /* nothing it takes was dropped */
    }
    while (w->next_seq < s->seq_end) {
        store_event *e = &s->ring[w->next_seq % s->ring_cap];
        w->next_seq++;
        w->position = e->rv;
        if (!watch_takes(w, e)) continue;
        *ev = *e;
        store_obj_ref(ev->obj);
        if (ev->prev) store_obj_ref(ev->prev);
        return 1;
    }
    if (s->durable_rev > w->position) w->position = s->durable_rev;
    w->clean = true; /* read to the end: what it misses from here wakes it */
    return 0;
}

int store_watch_next(store_watch *w, store_event *ev, int timeout_ms)
{
    store *s = w->s;
    struct timespec deadline = clock_deadline(CLOCK_MONOTONIC, timeout_ms < 0 ? 0 : timeout_ms);
    bool timed_out = false;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        int rc = watch_take(s, w, ev);
        if (rc != 0) {
            pthread_mutex_unlock(&s->mu);
            return rc;
        }
        if (s->closing) break;
        if (w->wake_seen != s->wake_gen) { /* woken for its caller to look: shutdown */
            w->wake_seen = s->wake_gen;
            timed_out = true;
        }
        if (timed_out) { /* (after passing what came meanwhile: position is current) */
            pthread_mutex_unlock(&s->mu);
            return 0;
        }
        w->waiting = true;
        if (timeout_ms < 0)
            pthread_cond_wait(&w->cv, &s->mu);
        else
            timed_out = pthread_cond_timedwait(&w->cv, &s->mu, &deadline) == ETIMEDOUT;
        w->waiting = false;
    }
    pthread_mutex_unlock(&s->mu);
    return -1;
}

int store_watch_poll(store_watch *w, store_event *ev)
{
    store *s = w->s;
    pthread_mutex_lock(&s->mu);
    int rc = watch_take(s, w, ev);
    if (rc == 0 && s->closing) rc = -1;
    w->armed = rc == 0 && w->notify;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int64_t store_watch_position(store_watch *w)
{
    pthread_mutex_lock(&w->s->mu);
    int64_t p = w->position;
    pthread_mutex_unlock(&w->s->mu);
    return p;
}

void store_watch_close(store_watch *w)
{
    if (!w) return;
    store *s = w->s;
    pthread_mutex_lock(&s->mu);
    s->watchers--;
    if (w->prev_w) {
        w->prev_w->next = w->next;
    } else if (w->res) {
        if (w->next)
            strmap_put(s->watch_by_res, w->next->res, w->next, NULL); /* (replaces: no alloc) */
        else
            strmap_del(s->watch_by_res, w->res);
    } else {
        s->watch_all = w->next;
    }
    if (w->next) w->next->prev_w = w->prev_w;
    pthread_mutex_unlock(&s->mu);
    watch_free_struct(w);
}

void store_watch_wake_all(store *s)
{
    pthread_mutex_lock(&s->mu);
    s->wake_gen++;
    wake_watches(s, s->seq_end, true);
    pthread_mutex_unlock(&s->mu);
}

size_t store_watch_count(store *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = s->watchers;
    pthread_mutex_unlock(&s->mu);
    return n;
}

void store_get_stats(store *s, store_stats *out)
{
    pthread_mutex_lock(&s->mu);
    *out = s->stats;
    pthread_mutex_unlock(&s->mu);
}

/* ---- memory backend ---- */

static int mem_load(void *impl, void *ctx,
                    void (*on_object)(void *, const char *, int64_t, const char *, size_t),
                    void (*on_event)(void *, const store_op *), int64_t *rev, char *err,
                    size_t errlen)
{
    *rev = 0;
    return 0;
}

static int mem_write(void *impl, const store_op *ops, size_t n, int64_t rev, char *err,
                     size_t errlen)
{
    return 0;
}

void store_memory_backend(store_backend *out)
{
    *out = (store_backend){NULL, mem_load, mem_write, NULL, NULL};
}
