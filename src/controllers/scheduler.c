/* scheduler.c - allot's built-in scheduler (schedulerName "default-scheduler").
 *
 * One thread, as upstream's assume-then-bind: the scheduling thread picks a
 * node, records the pod as assumed in its caches (node usage, and the
 * namespace's deferred quota usage) and performs the bind, reg_bind, whose
 * transaction re-checks quota against the stored usage and charges it
 * atomically. A failed bind undoes the assumption and requeues the pod.
 *
 * A bind holds no thread while its write goes to disk, as a request in the
 * HTTP layer: its commit does not wait (store_defer_durability), and the
 * store's writer hands the job back (store_when_durable: on_bind_durable) on
 * a list under jobs_mu once the batch is durable or refused; the scheduling
 * thread applies it (finish_job) between pods. Until then the pod stays
 * assumed. The 32 bind workers this replaced cost 4 context switches per bind
 * (a wake for the job, a sleep and a wake for durability, the hand-back).
 * The scheduling thread sleeps on its own condition variable, which both its
 * store watch (a notify watch) and the durability callback signal.
 *
 * Only the scheduling thread touches the caches and the queue (under mu, which
 * /metrics also takes). The store's writer never takes mu. The Scheduled
 * event goes to an event_recorder, which writes events in batches: a
 * transaction (and an fsync wait) per event would cost as much as the bind
 * itself.
 *
 * The queue is event-driven: pods enter it when created or changed, and pods
 * blocked on quota are retried when usage in their namespace drops (a pod
 * deleted, finished or unbound) or a quota there changes - never only on a
 * timer. Pods no node fits are parked, as in upstream's unschedulablePods:
 * they are not retried until an event may let them fit (a node added or
 * changed, room freed on a node: sched_event_unparks), once per loop turn
 * however many such events came, and no sooner than their backoff (1 s
 * doubling to 10 s) ends; a pod parked SCHED_PARK_MAX_MS is retried once
 * anyway. An idle queue of parked pods costs nothing. Ordering: priority,
 * then age (sched_queue_cmp). Errors back off 1 s doubling to 10 s.
 *
 * Pure decisions live in core/sched.c (filters, scoring, messages) and in
 * registry/quota_deferred.c (the quota PreFilter, sharing admission's rules).
 */
#include "controllers/scheduler.h"
#include "core/jdump.h"

#include "api/objects.h"
#include "core/dbuf.h"
#include "core/deferred.h"
#include "core/jget.h"
#include "core/quota_eval.h"
#include "core/sched.h"
#include "core/strmap.h"
#include "registry/events.h"
#include "registry/quota_deferred.h"
#include "registry/registry.h"
#include "util/log.h"
#include "core/promtext.h"
#include "util/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Longest wait of the scheduling thread: events, bind results, stop and the
 * next due time end it sooner. */
#define IDLE_WAIT_MS 1000
#define BATCH 2048
#define BLOCKED_RETRY_MS 30000 /* safety net; retries are event-driven */
#define COMPONENT "default-scheduler"

typedef struct qentry { /* a pod waiting to be scheduled */
    char *key;
    int64_t priority, created; /* queue order keys, from the pod */
    uint64_t spec;             /* spec_hash: a spec change is worth a retry, a status one not */
    int attempts;
    int64_t next_ms;
    bool blocked;           /* on quota: waits for an event in its namespace */
    bool gated;             /* blocked by scheduling gates (also `blocked`) */
    bool recheck;           /* blocked while binds were in flight in its namespace */
    bool in_flight;         /* assumed, binding */
    char quota[128];        /* the quota blocking it, when blocked on quota */
    rlist *demand;          /* and what it would add to that quota (owned; NULL
                             * unless blocked on quota): quota_deferred_prefilter's */
    unsigned long msg_hash; /* last condition written, to avoid rewrites */
    bool parked;            /* no node fits: waits for an event (see the header comment) */
    int64_t parked_at;      /* when parked (mono ms): retried SCHED_PARK_MAX_MS later */
    int64_t backoff_end;    /* an un-park makes it due no sooner (mono ms) */
    struct qentry *park_prev, *park_next; /* scheduler.parked_*, oldest first */
} qentry;

typedef struct ncache { /* a node and the requests of pods on it */
    char *name;
    json_t *node;
    rlist *alloc; /* status.allocatable, parsed once per node update */
    rlist *requested, *nonzero;
    int pods;
    size_t slot; /* its entry in scheduler.nvec, when that is current */
} ncache;

typedef struct placed { /* a pod counted on a node */
    char *key;
    char *node;
    rlist *req, *nonzero;
    uint64_t spec; /* spec_hash of the version the requests were read from */
    bool assumed;  /* placed by the scheduler, read from the unbound version:
                    * the bound version's spec is not known yet */
} placed;

/* Pods assumed (being bound) in one namespace, with their deferred usage:
 * the quota PreFilter adds it to the stored usage. */
typedef struct assumed_pod {
    char *key;
    rlist *deferred;
} assumed_pod;

typedef struct assumed_ns {
    char *ns;   /* the key of scheduler.assumed */
    rlist *sum; /* of every pod's deferred usage */
    assumed_pod *v;
    size_t n, cap;
    size_t rechecks; /* pods blocked meanwhile (qentry.recheck), or fewer */
} assumed_ns;

typedef struct bind_job {
    struct scheduler *s;
    char *key, *ns, *name, *node;
    double t0;
    json_t *pod;           /* the bound pod (for its Scheduled event), or NULL */
    api_errcode result;    /* API_OK bound (once durable), else why not */
    struct bind_job *next; /* on scheduler.done */
} bind_job;

struct scheduler {
    store *st;
    pthread_t thread;
    atomic_bool stop;
    pthread_mutex_t jobs_mu; /* the fields up to mu only: never waits on mu */
    pthread_cond_t cv;       /* the scheduling thread's wait (CLOCK_MONOTONIC) */
    bool kick;               /* the watch has events (its notify came) */
    size_t binding;          /* binds committed, waiting for durability */
    bind_job *done_head;     /* bound or failed, for the scheduling thread, */
    bind_job *done_tail;     /* in the order they finished */
    event_recorder *events;  /* Scheduled events (see the header comment) */
    pthread_mutex_t mu;      /* everything below */
    strmap *queue;           /* pod key -> qentry */
    strmap *nodes;           /* node name -> ncache */
    sched_node *nvec;        /* the nodes as sched_pick takes them, kept in step with */
    size_t nvec_len;         /* `nodes` (node_sync); rebuilt only when a node comes */
    bool nvec_stale;         /* or goes */
    strmap *placed;          /* pod key -> placed */
    strmap *assumed;         /* namespace -> assumed_ns */
    int64_t earliest;        /* no queued pod is due before this (mono ms) */
    size_t next_start;       /* where the next node search begins */
    qentry *parked_head;     /* the parked pods, in the order they were parked (so */
    qentry *parked_tail;     /* the oldest is first: the flush looks at the head) */
    size_t nparked;
    bool unpark; /* an event that un-parks came: un-park at the end of the loop turn */
};

sched_stats scheduler_stats;
static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;

static void stat_attempt(const char *result, double secs)
{
    pthread_mutex_lock(&stats_mu);
    if (!strcmp(result, "scheduled"))
        scheduler_stats.scheduled++;
    else if (!strcmp(result, "unschedulable"))
        scheduler_stats.unschedulable++;
    else if (!strcmp(result, "quota"))
        scheduler_stats.quota_blocked++;
    else
        scheduler_stats.errors++;
    if (secs >= 0) {
        for (int i = 0; i < SCHED_NBUCKETS; i++)
            if (secs <= sched_latency_buckets[i]) scheduler_stats.latency[i]++;
        scheduler_stats.latency[SCHED_NBUCKETS]++;
        scheduler_stats.latency_sum += secs;
    }
    pthread_mutex_unlock(&stats_mu);
}

const double sched_latency_buckets[SCHED_NBUCKETS] = {.001, .005, .01, .05, .1, .5, 1, 5, 10};

static unsigned long hash_str(const char *s)
{
    return strmap_hash(s);
}

static void split_key(const char *key, char *ns, size_t nn, char *name, size_t n)
{
    const char *p = strchr(key, '/') + 1, *q = strchr(p, '/');
    snprintf(ns, nn, "%.*s", (int)(q - p), p);
    snprintf(name, n, "%s", q + 1);
}

/* ---- reading stored objects without parsing them ----
 * Stored JSON is json_dumps output. Finding a member's text is a scan, far
 * cheaper than parsing the whole object, for the few fields some events need. */

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* p at a '"': past the closing quote, or NULL when unterminated. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\') {
            if (++p == end) return NULL; /* the escaped character is skipped */
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Past one JSON value at p, or NULL when it does not scan. Nesting is counted,
 * not checked: this only finds where a value of well-formed JSON ends. */
static const char *skip_value(const char *p, const char *end)
{
    if (p >= end) return NULL;
    if (*p == '"') return skip_string(p, end);
    if (*p != '{' && *p != '[') { /* number, true, false, null */
        while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' &&
               *p != '\t' && *p != '\r')
            p++;
        return p;
    }
    for (int depth = 0; p < end;) {
        if (*p == '"') {
            if (!(p = skip_string(p, end))) return NULL;
            continue;
        }
        if (*p == '{' || *p == '[')
            depth++;
        else if ((*p == '}' || *p == ']') && --depth == 0)
            return p + 1;
        p++;
    }
    return NULL;
}

int sched_json_member(const char *json, size_t len, const char *name, const char **v, size_t *vlen)
{
    const char *end = json + len, *p = skip_ws(json, end);
    size_t nlen = strlen(name);
    if (p >= end || *p != '{') return -1;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') return 0;
    for (;;) {
        if (p >= end || *p != '"') return -1;
        const char *k = p + 1;
        if (!(p = skip_string(p, end))) return -1;
        size_t klen = (size_t)(p - 1 - k);
        if (memchr(k, '\\', klen)) return -1;
        p = skip_ws(p, end);
        if (p >= end || *p != ':') return -1;
        const char *vs = skip_ws(p + 1, end);
        if (!(p = skip_value(vs, end))) return -1;
        if (klen == nlen && !memcmp(k, name, nlen)) {
            *v = vs;
            *vlen = (size_t)(p - vs);
            return 1;
        }
        p = skip_ws(p, end);
        if (p < end && *p == '}') return 0;
        if (p >= end || *p != ',') return -1;
        p = skip_ws(p + 1, end);
    }
}

/* Whether a write changed an object's top-level "spec", compared as stored
 * text: equal text is an equal spec; a spec that differs only in form (or
 * text that does not scan) counts as changed, which costs a retry, never a
 * missed wake-up. */
static bool spec_changed(const store_obj *prev, const store_obj *cur)
{
    const char *a = NULL, *b = NULL;
    size_t alen = 0, blen = 0;
    int ra = sched_json_member(prev->json, prev->len, "spec", &a, &alen);
    int rb = sched_json_member(cur->json, cur->len, "spec", &b, &blen);
    if (ra < 0 || rb < 0 || ra != rb) return true;
    return ra == 1 && (alen != blen || memcmp(a, b, alen) != 0);
}

/* A hash (FNV-1a) of the stored text of an object's spec, or of its whole text
 * when that does not scan. Two versions with the same spec text hash equal;
 * status writes leave it alone; any spec change (a resize, a gate removed)
 * moves it, though pods/resize does not raise metadata.generation. */
static uint64_t spec_hash(const store_obj *o)
{
    const char *v;
    size_t n;
    if (sched_json_member(o->json, o->len, "spec", &v, &n) != 1) {
        v = o->json;
        n = o->len;
    }
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)v[i]) * 1099511628211ULL;
    return h;
}

/* ---- caches (callers hold mu) ---- */

static void ncache_free(ncache *nc)
{
    if (!nc) return;
    free(nc->name);
    json_decref(nc->node);
    rl_free(nc->alloc);
    rl_free(nc->requested);
    rl_free(nc->nonzero);
    free(nc);
}

/* After any change to nc: its sched_pick entry follows. */
static void node_sync(scheduler *s, const ncache *nc)
{
    if (s->nvec_stale || nc->slot >= s->nvec_len) return;
    s->nvec[nc->slot] = (sched_node){nc->node, nc->requested, nc->nonzero, nc->pods, nc->alloc};
    sched_node_prepare(&s->nvec[nc->slot]);
}

static void placed_free(placed *p)
{
    if (!p) return;
    free(p->key);
    free(p->node);
    rl_free(p->req);
    rl_free(p->nonzero);
    free(p);
}

static void unplace(scheduler *s, const char *key)
{
    placed *p = strmap_del(s->placed, key);
    if (!p) return;
    ncache *nc = strmap_get(s->nodes, p->node);
    if (nc) {
        rlist *a = rl_subtract(nc->requested, p->req), *b = rl_subtract(nc->nonzero, p->nonzero);
        if (a && b) {
            rl_free(nc->requested);
            rl_free(nc->nonzero);
            nc->requested = a;
            nc->nonzero = b;
        } else {
            rl_free(a);
            rl_free(b);
        }
        nc->pods--;
        node_sync(s, nc);
    }
    placed_free(p);
}

/* Whether the pod is counted on `node` with the requests of the version whose
 * spec hashes to `spec` (and was `assumed`, read before the bind). */
static bool placed_on(scheduler *s, const char *key, const char *node, uint64_t spec, bool assumed)
{
    placed *p = strmap_get(s->placed, key);
    return p && p->spec == spec && p->assumed == assumed && !strcmp(p->node, node);
}

/* Count the pod on the node with its requests `req` and `nonzero` (taken),
 * read from the version whose spec hashes to `spec`. */
static void place_lists(scheduler *s, const char *key, const char *node, rlist *req, rlist *nonzero,
                        uint64_t spec, bool assumed)
{
    if (placed_on(s, key, node, spec, assumed)) {
        rl_free(req);
        rl_free(nonzero);
        return;
    }
    unplace(s, key);
    placed *p = calloc(1, sizeof *p);
    if (!p) {
        rl_free(req);
        rl_free(nonzero);
        return;
    }
    p->key = strdup(key);
    p->node = strdup(node);
    p->req = req;
    p->nonzero = nonzero;
    p->spec = spec;
    p->assumed = assumed;
    if (!p->key || !p->node || !p->req || !p->nonzero ||
        strmap_put(s->placed, p->key, p, NULL) != 0) {
        placed_free(p);
        return;
    }
    ncache *nc = strmap_get(s->nodes, node);
    if (nc) {
        rl_add_to(nc->requested, p->req);
        rl_add_to(nc->nonzero, p->nonzero);
        nc->pods++;
        node_sync(s, nc);
    }
}

/* The pod's requests, as sched_pick sums them: quota_pod_requests and the
 * scoring form. 0, or -1 with nothing to free. */
static int pod_lists(const json_t *pod, rlist **req, rlist **nonzero)
{
    *req = rl_new();
    *nonzero = rl_new();
    if (*req && *nonzero && quota_pod_requests(pod, *req) == 0 &&
        sched_pod_nonzero_requests(pod, *nonzero) == 0)
        return 0;
    rl_free(*req);
    rl_free(*nonzero);
    *req = *nonzero = NULL;
    return -1;
}

/* Count the stored pod `o` (parsed: pod) on its node. */
static void place(scheduler *s, const store_obj *o, const char *node, const json_t *pod)
{
    rlist *req, *nonzero;
    uint64_t spec = spec_hash(o);
    if (placed_on(s, o->key, node, spec, false) || pod_lists(pod, &req, &nonzero) != 0) return;
    place_lists(s, o->key, node, req, nonzero, spec, false);
}

static rlist *parse_allocatable(const json_t *node)
{
    rlist *a = rl_new();
    const char *bad = NULL;
    if (a &&
        rl_from_json(json_object_get(json_object_get(node, "status"), "allocatable"), a, &bad)) {
        rl_free(a);
        return NULL; /* sched.c then parses (and reports) it itself */
    }
    return a;
}

static void node_upsert(scheduler *s, const char *name, json_t *node)
{
    ncache *nc = strmap_get(s->nodes, name);
    if (nc) {
        json_decref(nc->node);
        nc->node = node;
        rl_free(nc->alloc);
        nc->alloc = parse_allocatable(node);
        node_sync(s, nc);
        return;
    }
    nc = calloc(1, sizeof *nc);
    if (!nc || !(nc->name = strdup(name)) || !(nc->requested = rl_new()) ||
        !(nc->nonzero = rl_new()) || strmap_put(s->nodes, nc->name, nc, NULL) != 0) {
        json_decref(node);
        ncache_free(nc);
        return;
    }
    nc->node = node;
    nc->alloc = parse_allocatable(node);
    s->nvec_stale = true;
    /* Pods already counted against this node name (bound before it appeared). */
    void *v;
    for (size_t it = 0; strmap_next(s->placed, &it, NULL, &v);) {
        placed *p = v;
        if (strcmp(p->node, name)) continue;
        rl_add_to(nc->requested, p->req);
        rl_add_to(nc->nonzero, p->nonzero);
        nc->pods++;
    }
}

/* q leaves the parked pods (if it is one). */
static void park_unlink(scheduler *s, qentry *q)
{
    if (!q->parked) return;
    if (q->park_prev)
        q->park_prev->park_next = q->park_next;
    else
        s->parked_head = q->park_next;
    if (q->park_next)
        q->park_next->park_prev = q->park_prev;
    else
        s->parked_tail = q->park_prev;
    q->park_prev = q->park_next = NULL;
    q->parked = false;
    s->nparked--;
}

/* When q is next due. Every change of a queued pod's due time goes through
 * here, so that `earliest` lets schedule_batch skip scanning a queue in which
 * nothing is due (e.g. every pod assumed and binding). A parked pod given a
 * due time is parked no more. */
static void set_due(scheduler *s, qentry *q, int64_t ms)
{
    park_unlink(s, q);
    q->next_ms = ms;
    if (ms < s->earliest) s->earliest = ms;
}

/* No node fits q: it waits for an event that may change that (or the flush),
 * with no due time, so schedule_batch neither scans nor retries it. Its
 * backoff still grows: an un-park honours it. */
static void park(scheduler *s, qentry *q)
{
    int64_t now = clock_mono_ms();
    park_unlink(s, q);
    q->backoff_end = now + sched_backoff_ms(++q->attempts);
    q->next_ms = INT64_MAX; /* not set_due: `earliest` stays as it is */
    q->parked = true;
    q->parked_at = now;
    q->park_prev = s->parked_tail;
    q->park_next = NULL;
    if (s->parked_tail)
        s->parked_tail->park_next = q;
    else
        s->parked_head = q;
    s->parked_tail = q;
    s->nparked++;
}

/* A cluster event: when it may let a parked pod fit, the parked pods come
 * back at the end of this loop turn (unpark_all), once for all its events. */
static void cluster_event(scheduler *s, sched_event ev)
{
    if (sched_event_unparks(ev)) s->unpark = true;
}

/* Every parked pod is due again, each when its backoff ends. */
static void unpark_all(scheduler *s)
{
    if (!s->unpark) return;
    s->unpark = false;
    int64_t now = clock_mono_ms();
    while (s->parked_head) {
        qentry *q = s->parked_head;
        set_due(s, q, sched_unpark_due(now, q->backoff_end));
    }
}

/* Pods parked SCHED_PARK_MAX_MS are retried once (upstream's
 * flushUnschedulablePodsLeftover): a missed event cannot strand a pod. The
 * list is in parking order: only its head is looked at while nothing expires. */
static void flush_parked(scheduler *s)
{
    int64_t now = clock_mono_ms();
    while (s->parked_head && sched_park_expired(s->parked_head->parked_at, now))
        set_due(s, s->parked_head, now);
}

/* q no longer waits on a quota: forget which one, and its demand (every
 * path that clears `blocked` or stops a pod waiting on quota comes here). */
static void quota_unblock(qentry *q)
{
    q->quota[0] = '\0';
    rl_free(q->demand);
    q->demand = NULL;
}

/* Only keys are kept per waiting pod (10^5 parsed pods would cost GiBs);
 * the pod is read from the store when its turn comes. */
static void set_pod(qentry *q, const store_obj *o, const json_t *pod)
{
    sched_queue_keys(pod, &q->priority, &q->created);
    q->spec = spec_hash(o);
}

/* Queue the stored pod `o` (parsed, or its pending_view: pod). */
static void queue_add(scheduler *s, const store_obj *o, const json_t *pod)
{
    const char *key = o->key;
    qentry *q = strmap_get(s->queue, key);
    if (q) {
        /* A spec change (gates removed, resources edited) is worth a retry now;
         * a status change - often our own condition write - changes nothing. */
        uint64_t before = q->spec;
        set_pod(q, o, pod);
        if (q->spec != before && !q->in_flight) {
            q->blocked = false;
            q->gated = false;
            quota_unblock(q);
            set_due(s, q, 0);
        }
        return;
    }
    q = calloc(1, sizeof *q);
    if (!q || !(q->key = strdup(key)) || strmap_put(s->queue, q->key, q, NULL) != 0) {
        if (q) free(q->key);
        free(q);
        return;
    }
    set_pod(q, o, pod);
    set_due(s, q, clock_mono_ms());
}

static void qentry_free(qentry *q)
{
    free(q->key);
    rl_free(q->demand);
    free(q);
}

static void queue_del(scheduler *s, const char *key)
{
    qentry *q = strmap_del(s->queue, key);
    if (!q) return;
    park_unlink(s, q);
    qentry_free(q);
}

/* The namespace's quota-blocked pods go first in line again: all of them
 * (usage dropped there), or with `rechecks_only` those blocked while binds
 * were in flight there (the binds just finished). */
static void wake_blocked(scheduler *s, const char *ns, bool rechecks_only)
{
    char prefix[320];
    size_t plen = (size_t)snprintf(prefix, sizeof prefix, "pods/%s/", ns);
    void *v;
    for (size_t it = 0; strmap_next(s->queue, &it, NULL, &v);) {
        qentry *q = v;
        if (q->blocked && (q->recheck || !rechecks_only) && !strncmp(q->key, prefix, plen)) {
            q->blocked = q->recheck = false;
            q->gated = false;
            quota_unblock(q);
            set_due(s, q, 0);
        }
    }
}

static bool terminal(const json_t *pod)
{
    const char *phase = jstr(pod, "status", "phase");
    return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

/* ---- events in ---- */

/* A selector field of a stored object, from its index (packed "label\0value\0"
 * pairs): no parsing. NULL when absent. */
static const char *obj_field(const store_obj *o, const char *label)
{
    for (const char *p = o->idx.fields; p && *p;) {
        const char *val = p + strlen(p) + 1;
        if (!strcmp(p, label)) return val;
        p = val + strlen(val) + 1;
    }
    return NULL;
}

/* Whether a pod write leaves everything the scheduler knows as it is: the pod
 * is assigned, not finished, and counted on that node with the requests of
 * this spec - the case of every bind (ours or a client's, once we have seen
 * it) and of the status writes that follow. Decided from the index and a scan
 * of the text, so the pod is not parsed. A pod we assumed was counted with the
 * requests of its unbound version: the bind of exactly that version (`prev`)
 * confirms them, and its spec becomes the one to compare with. */
static bool still_placed(scheduler *s, const store_event *ev)
{
    const store_obj *o = ev->obj;
    const char *node = obj_field(o, "spec.nodeName"), *phase = obj_field(o, "status.phase");
    if (!node || !*node || !phase || !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
        return false;
    placed *p = strmap_get(s->placed, o->key);
    if (!p || strcmp(p->node, node)) return false;
    uint64_t spec = spec_hash(o);
    if (!p->assumed) return p->spec == spec;
    if (!ev->prev || spec_hash(ev->prev) != p->spec) return false; /* changed before the bind */
    p->spec = spec;
    p->assumed = false;
    return true;
}

/* What the queue needs of an unassigned pod, without parsing it whole: its
 * metadata (small: parsed), spec.priority, and from the index spec.nodeName,
 * spec.schedulerName and status.phase - all that on_pod reads of a pod that is
 * not assigned. The whole pod is parsed when its turn comes. At a restart
 * with 10,000 pending pods this halves the initial sync. NULL when the pod is
 * assigned or the text does not scan: parse it then. */
static json_t *pending_view(const store_obj *o)
{
    const char *node = obj_field(o, "spec.nodeName"), *sn = obj_field(o, "spec.schedulerName");
    const char *phase = obj_field(o, "status.phase"), *mt, *st, *pt;
    size_t ml, sl, pl;
    if (!node || *node || !sn || !phase ||
        sched_json_member(o->json, o->len, "metadata", &mt, &ml) != 1 ||
        sched_json_member(o->json, o->len, "spec", &st, &sl) != 1)
        return NULL;
    int has_prio = sched_json_member(st, sl, "priority", &pt, &pl);
    if (has_prio < 0) return NULL;
    json_t *meta = json_loadb(mt, ml, 0, NULL);
    json_t *prio = has_prio ? json_loadb(pt, pl, JSON_DECODE_ANY, NULL) : NULL;
    if (!json_is_object(meta) || (has_prio && !prio)) {
        json_decref(meta);
        json_decref(prio);
        return NULL;
    }
    return json_pack("{s:o, s:{s:s, s:s, s:o*}, s:{s:s}}", "metadata", meta, "spec",
                     "schedulerName", sn, "nodeName", "", "priority", prio, "status", "phase",
                     phase);
}

static void on_pod(scheduler *s, const store_event *ev)
{
    const char *key = ev->obj->key;
    if (ev->type == STORE_EV_MODIFIED && still_placed(s, ev)) {
        /* What the full path below does for such a pod: it is no longer ours to
         * schedule (an assigned pod), unless its bind is still being finished. */
        qentry *q = strmap_get(s->queue, key);
        if (q && !q->in_flight) queue_del(s, key);
        return;
    }
    json_t *pod = NULL;
    if (ev->type != STORE_EV_DELETED && !(pod = pending_view(ev->obj)))
        pod = store_obj_view_sans(ev->obj, "metadata.managedFields");
    const char *node = pod ? jstr(pod, "spec", "nodeName") : NULL;
    bool counts = pod && node && *node && !terminal(pod);
    placed *p = strmap_get(s->placed, key);
    bool was = p != NULL;
    if (counts && p)
        /* still on a node, but its requests may have changed (a resize):
         * still_placed let through every write that leaves them as they are,
         * but for the binds of pods that changed meanwhile (rare) */
        cluster_event(s, SCHED_EV_POD_RESIZED);
    else if (counts)
        cluster_event(s, SCHED_EV_POD_ASSIGNED);
    else if (was)
        cluster_event(s, SCHED_EV_POD_FREED);
    if (counts)
        place(s, ev->obj, node, pod);
    else
        unplace(s, key);
    if (pod && sched_pod_ours(pod) && !terminal(pod))
        queue_add(s, ev->obj, pod);
    else if (!(pod && strmap_get(s->queue, key) &&
               ((qentry *)strmap_get(s->queue, key))->in_flight))
        queue_del(s, key);
    /* A pod leaving a node, finishing or going away frees quota and room. */
    if ((was && !counts) || ev->type == STORE_EV_DELETED) wake_blocked(s, ev->obj->ns, false);
    json_decref(pod);
}

static void on_node(scheduler *s, const store_event *ev)
{
    if (ev->type == STORE_EV_DELETED) {
        ncache *nc = strmap_del(s->nodes, ev->obj->name);
        ncache_free(nc);
        s->nvec_stale = true;
        return;
    }
    json_t *node = store_obj_parse(ev->obj);
    if (!node) { /* out of memory or bad text: retry rather than strand a pod */
        cluster_event(s, SCHED_EV_NODE_UPDATED);
        return;
    }
    /* A new node, or one changed in what the filters read, may fit what did
     * not fit before; a status heartbeat does not. Nodes often arrive in
     * bursts: the parked pods come back once per loop turn, not per node. */
    ncache *nc = strmap_get(s->nodes, ev->obj->name);
    if (!nc)
        cluster_event(s, SCHED_EV_NODE_ADDED);
    else if (sched_node_update_unparks(nc->node, node))
        cluster_event(s, SCHED_EV_NODE_UPDATED);
    node_upsert(s, ev->obj->name, node);
}

static void on_quota(scheduler *s, const store_event *ev)
{
    /* Usage drops arrive as pod events (deleted, finished, unbound); a quota
     * event matters only when its limits change or it goes away. Status writes
     * (a charge on every bind) never unblock anything, and are compared
     * without parsing either version. */
    if (ev->type == STORE_EV_MODIFIED && ev->prev && !spec_changed(ev->prev, ev->obj)) return;
    cluster_event(s, SCHED_EV_QUOTA_CHANGED);
    wake_blocked(s, ev->obj->ns, false);
}

static void handle_event(scheduler *s, const store_event *ev)
{
    const char *k = ev->obj->key;
    if (!strncmp(k, "pods/", 5))
        on_pod(s, ev);
    else if (!strncmp(k, "nodes/", 6))
        on_node(s, ev);
    else if (!strncmp(k, "resourcequotas/", 15))
        on_quota(s, ev);
}

static void initial_sync(scheduler *s)
{
    const char *prefixes[] = {"nodes/", "pods/"};
    for (int p = 0; p < 2; p++) {
        store_obj **objs = NULL;
        size_t n = 0;
        if (store_list(s->st, prefixes[p], NULL, 0, &objs, &n, NULL, NULL) != 0) continue;
        for (size_t i = 0; i < n; i++) {
            store_event ev = {STORE_EV_ADDED, objs[i]->rv, objs[i], NULL};
            handle_event(s, &ev);
            store_obj_unref(objs[i]);
        }
        free(objs);
    }
}

/* ---- pod status ---- */

typedef struct cond_ctx {
    const char *uid, *reason, *message;
} cond_ctx;

static json_t *mutate_condition(const json_t *cur, void *ctx, api_err *e)
{
    cond_ctx *c = ctx;
    const char *uid = jstr(cur, "metadata", "uid");
    const char *node = jstr(cur, "spec", "nodeName");
    if (!uid || strcmp(uid, c->uid) || (node && *node)) {
        api_err_set(e, API_CONFLICT, "pod changed");
        return NULL;
    }
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *pod = jcopy(cur);
    json_t *status = json_object_ensure(pod, "status");
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    size_t i;
    json_t *cd;
    json_array_foreach(conds, i,
                       cd) if (!strcmp(json_string_value(json_object_get(cd, "type")) ?: "",
                                       SCHED_COND_SCHEDULED)) break;
    json_t *cond =
        json_pack("{s:s, s:s, s:n, s:s, s:s}", "type", SCHED_COND_SCHEDULED, "status", "False",
                  "lastProbeTime", "lastTransitionTime", now, "reason", c->reason);
    if (c->message) json_object_set_new(cond, "message", json_string(c->message));
    if (i < json_array_size(conds))
        json_array_set_new(conds, i, cond);
    else
        json_array_append_new(conds, cond);
    return pod;
}

/* PodScheduled=False with reason/message, and (for Unschedulable) a
 * FailedScheduling event; written only when the message changes. */
static void report_unschedulable(scheduler *s, qentry *q, const json_t *pod, const char *reason,
                                 const char *message)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s|%s", reason, message ? message : "");
    unsigned long h = hash_str(buf);
    if (q->msg_hash == h) return;
    q->msg_hash = h;
    char ns[256], name[256];
    split_key(q->key, ns, sizeof ns, name, sizeof name);
    cond_ctx c = {jstr(pod, "metadata", "uid"), reason, message};
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    pthread_mutex_unlock(&s->mu);
    if (reg_update(s->st, api_kind_find("", "v1", "pods"), ns, name, "status", mutate_condition, &c,
                   false, &out, &e) == 0)
        json_decref(out);
    api_err_clear(&e);
    if (message && strcmp(reason, "SchedulingGated"))
        event_record(s->st, pod, "Warning", "FailedScheduling", message, COMPONENT);
    pthread_mutex_lock(&s->mu);
}

/* ---- scheduling one pod (holds mu) ---- */

/* The nodes for sched_pick (owned by s), or NULL (out of memory). Rebuilt
 * only after a node came or went: at a thousand nodes, rebuilding per pod
 * cost as much as the quota PreFilter. */
static const sched_node *node_array(scheduler *s, size_t *n)
{
    if (!s->nvec_stale && s->nvec) {
        *n = s->nvec_len;
        return s->nvec;
    }
    size_t cap = strmap_count(s->nodes), k = 0;
    sched_node *v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v) return NULL;
    void *val;
    for (size_t it = 0; strmap_next(s->nodes, &it, NULL, &val);) {
        ncache *nc = val;
        nc->slot = k;
        v[k] = (sched_node){nc->node, nc->requested, nc->nonzero, nc->pods, nc->alloc};
        sched_node_prepare(&v[k++]);
    }
    free(s->nvec);
    s->nvec = v;
    s->nvec_len = *n = k;
    s->nvec_stale = false;
    return v;
}

static void job_free(bind_job *j)
{
    if (!j) return;
    free(j->key);
    free(j->ns);
    free(j->name);
    free(j->node);
    json_decref(j->pod);
    free(j);
}

/* ---- bind results coming back (callers hold jobs_mu) ---- */

static void done_push(scheduler *s, bind_job *j)
{
    j->next = NULL;
    if (s->done_tail)
        s->done_tail->next = j;
    else
        s->done_head = j;
    s->done_tail = j;
}

static bind_job *done_pop(scheduler *s)
{
    bind_job *j = s->done_head;
    if (j && !(s->done_head = j->next)) s->done_tail = NULL;
    return j;
}

/* store_when_durable's callback, on the store's writer thread: the job goes
 * back to the scheduling thread, which is woken. Calls nothing of the store
 * and never waits on mu. */
static void on_bind_durable(void *arg, bool ok)
{
    bind_job *j = arg;
    scheduler *s = j->s;
    if (!ok) j->result = API_INTERNAL; /* its batch was refused: nothing of it was published */
    pthread_mutex_lock(&s->jobs_mu);
    s->binding--;
    done_push(s, j);
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->jobs_mu);
}

/* The scheduling thread's watch has events to poll (the store's writer
 * thread, under the store's lock). */
static void on_watch_notify(void *arg)
{
    scheduler *s = arg;
    pthread_mutex_lock(&s->jobs_mu);
    s->kick = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->jobs_mu);
}

/* ---- assumed quota usage (holds mu) ---- */

static void assumed_ns_free(assumed_ns *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->n; i++) {
        free(a->v[i].key);
        rl_free(a->v[i].deferred);
    }
    free(a->v);
    rl_free(a->sum);
    free(a->ns);
    free(a);
}

/* Pod `key` is being bound: its deferred usage counts in its namespace until
 * assumed_release. 0, or -1 (out of memory) with nothing counted. */
static int assume_usage(scheduler *s, const char *ns, const char *key, const rlist *deferred)
{
    assumed_ns *a = strmap_get(s->assumed, ns);
    if (!a) {
        a = calloc(1, sizeof *a);
        if (!a || !(a->ns = strdup(ns)) || !(a->sum = rl_new()) ||
            strmap_put(s->assumed, a->ns, a, NULL) != 0) {
            assumed_ns_free(a);
            return -1;
        }
    }
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 8;
        assumed_pod *nv = realloc(a->v, nc * sizeof *nv);
        if (!nv) return -1;
        a->v = nv;
        a->cap = nc;
    }
    assumed_pod p = {strdup(key), rl_copy(deferred)};
    if (!p.key || !p.deferred || rl_add_to(a->sum, deferred) != 0) {
        free(p.key);
        rl_free(p.deferred);
        return -1;
    }
    a->v[a->n++] = p;
    return 0;
}

/* Pod `key`'s bind finished (or was abandoned): its usage is no longer assumed. */
static void assumed_release(scheduler *s, const char *ns, const char *key)
{
    assumed_ns *a = strmap_get(s->assumed, ns);
    size_t i = 0;
    while (a && i < a->n && strcmp(a->v[i].key, key))
        i++;
    if (!a || i == a->n) return;
    rlist *left = rl_subtract_nonneg(a->sum, a->v[i].deferred);
    if (left) { /* else (out of memory) the sum over-estimates: safe */
        rl_free(a->sum);
        a->sum = left;
    }
    free(a->v[i].key);
    rl_free(a->v[i].deferred);
    a->v[i] = a->v[--a->n];
    if (a->n) return;
    /* Nothing in flight here any more. Pods blocked meanwhile counted those
     * binds as assumed: if one failed (or, rarely, was counted twice: see
     * quota_deferred_prefilter), they may fit now, so they try again. */
    if (a->rechecks) wake_blocked(s, ns, true);
    strmap_del(s->assumed, ns);
    assumed_ns_free(a);
}

static void start_bind(scheduler *s, bind_job *j);

/* Schedule the stored pod `o` (parsed: pod). */
static void schedule_one(scheduler *s, qentry *q, const store_obj *o, json_t *pod)
{
    double t0 = clock_mono_s();
    char ns[256], name[256];
    split_key(q->key, ns, sizeof ns, name, sizeof name);
    if (sched_pod_gated(pod)) {
        q->blocked = true; /* a spec change (gate removed) requeues it: */
        q->gated = true;   /* the timer is a safety net, as the flush of parked pods */
        quota_unblock(q);
        set_due(s, q, clock_mono_ms() + SCHED_PARK_MAX_MS);
        report_unschedulable(s, q, pod, "SchedulingGated",
                             "Scheduling is blocked due to non-empty scheduling gates");
        return;
    }
    size_t n = 0;
    const sched_node *nodes = node_array(s, &n);
    dbuf msg;
    dbuf_init(&msg, 1 << 16);
    rlist *deferred = NULL, *demand = NULL;
    sched_pod *sp = NULL;
    assumed_ns *an = strmap_get(s->assumed, ns);
    int rc = nodes ? quota_deferred_prefilter(s->st, pod, an ? an->sum : NULL, NULL, 0, n,
                                              &deferred, &msg, q->quota, sizeof q->quota, &demand)
                   : -1;
    quota_assumed *pods = rc == 1 && an ? malloc(an->n * sizeof *pods) : NULL;
    if (pods) {
        /* Rejected with the sum, which counts twice a pod whose bind has
         * committed but whose result is not applied yet: decide, and word the
         * message, on each pod's state in the store instead. Fitting pods (the
         * common case) never pay for this. */
        for (size_t i = 0; i < an->n; i++)
            pods[i] = (quota_assumed){an->v[i].key, an->v[i].deferred};
        dbuf_free(&msg);
        dbuf_init(&msg, 1 << 16);
        rl_free(demand);
        rc = quota_deferred_prefilter(s->st, pod, NULL, pods, an->n, n, &deferred, &msg, q->quota,
                                      sizeof q->quota, &demand);
        free(pods);
    }
    if (rc == 1) {
        q->blocked = true;
        q->gated = false;
        q->recheck = an && an->n;
        if (q->recheck) an->rechecks++;
        rl_free(q->demand); /* from its previous attempt, when the retry timer ran it */
        q->demand = demand;
        demand = NULL;
        set_due(s, q, clock_mono_ms() + BLOCKED_RETRY_MS);
        stat_attempt("quota", clock_mono_s() - t0);
        report_unschedulable(s, q, pod, SCHED_REASON_UNSCHEDULABLE, msg.p);
        goto out;
    }
    /* Not (or no longer) waiting on quota: a pod the retry timer ran while
     * blocked is now waiting on nodes at most, and node events may wake it. */
    q->blocked = q->recheck = false;
    q->gated = false;
    quota_unblock(q);
    if (rc < 0) {
        stat_attempt("error", -1);
        set_due(s, q, clock_mono_ms() + sched_backoff_ms(++q->attempts));
        goto out;
    }
    size_t chosen = 0;
    /* Upstream's minFeasibleNodesToFind: score 100 fitting nodes, rotating
     * where the search starts so the cluster fills evenly. */
    sched_sample sample = {s->next_start, 100, 0};
    /* The pod's requests are computed once, for the pick and for the assume. */
    rc = sched_pod_new(pod, &sp);
    if (rc == 0) rc = sched_pick_pod(sp, nodes, n, &sample, &chosen, &msg);
    s->next_start += sample.examined;
    rlist *req = NULL, *nonzero = NULL;
    if (rc == 0) sched_pod_take_lists(sp, &req, &nonzero);
    if (rc != 0) {
        stat_attempt(rc == 1 ? "unschedulable" : "error", clock_mono_s() - t0);
        if (rc == 1)
            park(s, q);
        else
            set_due(s, q, clock_mono_ms() + sched_backoff_ms(++q->attempts));
        if (rc == 1) report_unschedulable(s, q, pod, SCHED_REASON_UNSCHEDULABLE, msg.p);
        goto out;
    }
    /* Assume: count the pod on the node and its deferred usage in the namespace. */
    const char *node =
        json_string_value(json_object_get(json_object_get(nodes[chosen].node, "metadata"), "name"));
    place_lists(s, q->key, node, req, nonzero, spec_hash(o), true);
    q->in_flight = true;
    bind_job *job = calloc(1, sizeof *job);
    if (job)
        *job = (bind_job){s,  strdup(q->key), strdup(ns), strdup(name), strdup(node),
                          t0, NULL,           API_OK,     NULL};
    if ((deferred && assume_usage(s, ns, q->key, deferred) != 0) || !job || !job->key || !job->ns ||
        !job->name || !job->node) {
        /* out of memory: undo the assumption, retry later */
        assumed_release(s, ns, q->key);
        unplace(s, q->key);
        q->in_flight = false;
        set_due(s, q, clock_mono_ms() + sched_backoff_ms(++q->attempts));
        job_free(job);
        goto out;
    }
    start_bind(s, job); /* q may be gone after this (its bind was refused at once) */
out:
    sched_pod_free(sp);
    rl_free(deferred);
    rl_free(demand); /* NULL unless blocked, and then q owns it */
    dbuf_free(&msg);
}

/* Ready entries, best first. */
typedef struct cand {
    qentry *q;
    char *key; /* q may be freed while mu is released: check it is still queued */
    json_t *pod;
} cand;

/* sched_queue_cmp's order on precomputed keys: priority, age, then key. */
static int cand_cmp(const void *a, const void *b)
{
    const qentry *x = ((const cand *)a)->q, *y = ((const cand *)b)->q;
    if (x->priority != y->priority) return x->priority > y->priority ? -1 : 1;
    if (x->created != y->created) return x->created < y->created ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* ---- bind results (scheduling thread, holds mu) ---- */

static void finish_job(scheduler *s, const bind_job *j)
{
    assumed_release(s, j->ns, j->key);
    qentry *q = strmap_get(s->queue, j->key);
    if (j->result == API_OK) {
        queue_del(s, j->key);
        return;
    }
    /* Undo the assumption - unless the pod's event has already placed it
     * where someone else bound it (a client's pods/binding won the race). */
    placed *p = strmap_get(s->placed, j->key);
    if (p && p->assumed && !strcmp(p->node, j->node)) {
        unplace(s, j->key);
        cluster_event(s, SCHED_EV_BIND_FAILED); /* its room is free again */
    }
    if (!q) return;
    q->in_flight = false;
    if (j->result == API_FORBIDDEN) {
        /* The re-check found the quota full: wait for usage to drop. Which
         * quota is not known here (the PreFilter passed), so the pod is not
         * counted as pending on one until its next attempt says. */
        q->blocked = true;
        q->gated = false;
        q->recheck = false;
        quota_unblock(q);
        set_due(s, q, clock_mono_ms() + BLOCKED_RETRY_MS);
    } else {
        set_due(s, q, clock_mono_ms() + sched_backoff_ms(++q->attempts));
    }
}

/* The stats and the Scheduled event of a finished bind: only a durable one
 * counts as scheduled. */
static void bind_tell(scheduler *s, const bind_job *j)
{
    if (j->result == API_OK) {
        stat_attempt("scheduled", clock_mono_s() - j->t0);
        char msg[1024];
        snprintf(msg, sizeof msg, "Successfully assigned %s/%s to %s", j->ns, j->name, j->node);
        event_recorder_emit(s->events, event_new(j->pod, "Normal", "Scheduled", msg, COMPONENT));
    } else if (j->result == API_FORBIDDEN) {
        pthread_mutex_lock(&stats_mu);
        scheduler_stats.bind_rejected++;
        pthread_mutex_unlock(&stats_mu);
    }
}

/* A bind's result, once it is known: refused at once, or its write durable
 * (or refused by the store). Frees j. */
static void bind_finished(scheduler *s, bind_job *j)
{
    bind_tell(s, j);
    finish_job(s, j);
    job_free(j);
}

/* Bind j's pod (holds mu, released around the transaction as for a condition
 * write). The commit does not wait for the disk: the store's writer hands
 * the job back once it is durable (on_bind_durable) and apply_done finishes
 * it; a bind refused at once (conflict, quota, pod gone) finishes now. */
static void start_bind(scheduler *s, bind_job *j)
{
    api_err e;
    api_err_init(&e);
    pthread_mutex_unlock(&s->mu);
    store_defer_durability(true);
    bool ok = reg_bind(s->st, j->ns, j->name, j->node, false, &j->pod, &e) == 0;
    int64_t rev = store_deferred_rev();
    store_defer_durability(false);
    j->result = ok ? API_OK : e.code ? e.code : API_INTERNAL;
    api_err_clear(&e);
    int r = 0;
    if (ok && rev > 0) {
        /* counted before the callback can come */
        pthread_mutex_lock(&s->jobs_mu);
        s->binding++;
        pthread_mutex_unlock(&s->jobs_mu);
        r = store_when_durable(s->st, rev, on_bind_durable, j);
        if (r != 1) {
            pthread_mutex_lock(&s->jobs_mu);
            s->binding--;
            pthread_mutex_unlock(&s->jobs_mu);
        }
        if (r == 2 || (r < 0 && store_wait_durable(s->st, rev) != 0)) /* (r < 0: out of memory) */
            j->result = API_INTERNAL;
    }
    pthread_mutex_lock(&s->mu);
    if (r != 1) bind_finished(s, j);
}

/* Apply the results the store's writer handed back, in the order they came. */
static void apply_done(scheduler *s)
{
    for (;;) {
        pthread_mutex_lock(&s->jobs_mu);
        bind_job *j = done_pop(s);
        pthread_mutex_unlock(&s->jobs_mu);
        if (!j) return;
        bind_finished(s, j);
    }
}

static void schedule_batch(scheduler *s)
{
    int64_t now = clock_mono_ms();
    size_t cap = strmap_count(s->queue), n = 0;
    if (!cap) s->earliest = INT64_MAX; /* until set_due queues one */
    if (!cap || now < s->earliest) return;
    cand *c = calloc(cap, sizeof *c);
    if (!c) return;
    int64_t later = INT64_MAX; /* the first due time of the pods not due now */
    void *v;
    for (size_t it = 0; strmap_next(s->queue, &it, NULL, &v) && n < cap;) {
        qentry *q = v;
        if (q->in_flight) continue;
        if (q->next_ms > now) {
            if (q->next_ms < later) later = q->next_ms;
            continue;
        }
        c[n++] = (cand){q, strdup(q->key), NULL};
    }
    s->earliest = later; /* set_due lowers it for every pod handled below */
    qsort(c, n, sizeof *c, cand_cmp);
    for (size_t i = 0; i < n; i++) {
        bool queued = c[i].key && strmap_get(s->queue, c[i].key) == c[i].q;
        if (queued && i < BATCH && !atomic_load(&s->stop)) {
            store_obj *o = store_get(s->st, c[i].key);
            c[i].pod = o ? store_obj_parse_sans(o, "metadata.managedFields") : NULL;
            const char *node = c[i].pod ? jstr(c[i].pod, "spec", "nodeName") : NULL;
            if (c[i].pod && sched_pod_ours(c[i].pod) && !(node && *node))
                schedule_one(s, c[i].q, o, c[i].pod);
            else /* bound, gone or not ours: the store is ahead of the events; an event
                  * queues it again should it become ours */
                queue_del(s, c[i].key);
            store_obj_unref(o);
        }
        /* A pod left due (past BATCH) keeps the queue due. */
        queued = c[i].key && strmap_get(s->queue, c[i].key) == c[i].q;
        if (queued && !c[i].q->in_flight && c[i].q->next_ms < s->earliest)
            s->earliest = c[i].q->next_ms;
        json_decref(c[i].pod); /* every candidate, also when stopping mid-batch */
        free(c[i].key);
        apply_done(s);
        /* /metrics reads the queue under mu: let it in between pods. */
        pthread_mutex_unlock(&s->mu);
        pthread_mutex_lock(&s->mu);
    }
    free(c);
}

/* ---- main loop ---- */

/* The events the scheduler reads (handle_event): the others never wake it. */
static bool watch_filter(void *arg, const store_event *ev)
{
    (void)arg;
    const char *k = ev->obj->key;
    return !strncmp(k, "pods/", 5) || !strncmp(k, "nodes/", 6) ||
           !strncmp(k, "resourcequotas/", 15);
}

static store_watch *open_watch(scheduler *s)
{
    bool expired = false;
    return store_watch_open_notify(s->st, "", store_revision(s->st), watch_filter, NULL,
                                   on_watch_notify, s, &expired);
}

static void *run(void *arg)
{
    scheduler *s = arg;
    pthread_setname_np(pthread_self(), "scheduler");
    store_watch *w = open_watch(s);
    pthread_mutex_lock(&s->mu);
    initial_sync(s);
    pthread_mutex_unlock(&s->mu);
    while (!atomic_load(&s->stop)) {
        /* Events first: a poll that finds none arms the watch, whose notify
         * then ends the wait below. */
        store_event ev;
        int rc = -1, n = 0;
        pthread_mutex_lock(&s->mu);
        while (w && n < 4096 && (rc = store_watch_poll(w, &ev)) == 1) {
            handle_event(s, &ev);
            store_obj_unref(ev.obj);
            store_obj_unref(ev.prev);
            n++;
        }
        bool more = rc == 1; /* not armed: poll again before waiting */
        if (rc < 0 && !atomic_load(&s->stop)) {
            store_watch_close(w);
            w = open_watch(s);
            initial_sync(s);
            s->unpark = true; /* events were missed: a parked pod may fit now */
            more = w != NULL;
        }
        apply_done(s);
        unpark_all(s);
        flush_parked(s);
        schedule_batch(s);
        /* Wait while no pod is due (e.g. after the initial sync, or until the
         * next backoff ends or the oldest parked pod is flushed), for events,
         * bind results or stop. An idle scheduler wakes once a second. */
        int64_t until = more || s->unpark ? 0 : s->earliest;
        if (s->parked_head && s->parked_head->parked_at + SCHED_PARK_MAX_MS < until)
            until = s->parked_head->parked_at + SCHED_PARK_MAX_MS;
        pthread_mutex_unlock(&s->mu);
        int64_t wait = until - clock_mono_ms();
        wait = wait < 0 ? 0 : wait > IDLE_WAIT_MS ? IDLE_WAIT_MS : wait;
        struct timespec deadline = clock_deadline(CLOCK_MONOTONIC, wait);
        pthread_mutex_lock(&s->jobs_mu);
        while (wait > 0 && !s->kick && !s->done_head && !atomic_load(&s->stop))
            if (pthread_cond_timedwait(&s->cv, &s->jobs_mu, &deadline) != 0) break;
        s->kick = false;
        pthread_mutex_unlock(&s->jobs_mu);
    }
    store_watch_close(w);
    return NULL;
}

static scheduler *running; /* for metrics; one scheduler per process */

/* The pods waiting on one quota: how many, and the sum of their demand. */
typedef struct pending_sum {
    char *key; /* "<ns>\x1f<quota>", its key in the sums */
    char *ns, *quota;
    long pods;
    rlist *demand;
    bool partial; /* a sum failed (out of memory): the demand is not reported */
} pending_sum;

static void pending_sum_free(pending_sum *p)
{
    if (!p) return;
    free(p->key);
    free(p->ns);
    free(p->quota);
    rl_free(p->demand);
    free(p);
}

/* The queues of allot_scheduler_pending_pods (upstream's scheduler_pending_pods,
 * with pods waiting on quota apart). */
enum { PQ_ACTIVE, PQ_BACKOFF, PQ_UNSCHEDULABLE, PQ_GATED, PQ_QUOTA, PQ_N };
static const char *const pq_names[PQ_N] = {"active", "backoff", "unschedulable", "gated", "quota"};

/* Which queue a pod not being bound is in. */
static int pending_queue(const qentry *q, int64_t now)
{
    if (q->parked) return PQ_UNSCHEDULABLE;
    if (q->gated) return PQ_GATED;
    if (q->blocked) return PQ_QUOTA;
    return q->next_ms <= now ? PQ_ACTIVE : PQ_BACKOFF;
}

/* Sum the blocked entries per (namespace, quota) into sums (key -> owned
 * pending_sum), and count the pods per queue into queues[PQ_N]. Holds mu,
 * briefly: one pass over the queue and a list addition per pod waiting on
 * quota; the text is written after mu is released. A quota whose sum cannot
 * be made (out of memory) is left out. */
static void sum_pending(scheduler *s, strmap *sums, double *queues)
{
    pthread_mutex_lock(&s->mu);
    int64_t now = clock_mono_ms();
    void *v;
    for (size_t it = 0; strmap_next(s->queue, &it, NULL, &v);) {
        qentry *q = v;
        if (!q->in_flight) queues[pending_queue(q, now)]++;
        if (!q->blocked || !q->quota[0]) continue;
        char ns[256], name[256], k[512];
        split_key(q->key, ns, sizeof ns, name, sizeof name);
        snprintf(k, sizeof k, "%s\x1f%s", ns, q->quota);
        pending_sum *p = strmap_get(sums, k);
        if (!p) {
            p = calloc(1, sizeof *p);
            if (!p || !(p->key = strdup(k)) || !(p->ns = strdup(ns)) ||
                !(p->quota = strdup(q->quota)) || !(p->demand = rl_new()) ||
                strmap_put(sums, p->key, p, NULL) != 0) {
                pending_sum_free(p);
                continue;
            }
        }
        p->pods++;
        /* rl_add_to may leave part of a sum behind when it fails */
        if (q->demand && !p->partial && rl_add_to(p->demand, q->demand) != 0) p->partial = true;
    }
    pthread_mutex_unlock(&s->mu);
}

/* allot_pods_pending_on_quota and allot_pods_pending_demand: what waits on
 * each quota (deferred quota), the demand per resource the quota's hard
 * names, in base units (cpu in cores, memory in bytes: MilliValue()/1000 as
 * every quantity gauge); and allot_scheduler_pending_pods, the pods per
 * queue. Every family is written (HELP and TYPE) even with no scheduler or
 * nothing waiting. */
static void render_pending(scheduler *s, dbuf *b)
{
    static const metrics_family families[] = {
        {"allot_pods_pending_on_quota", "Pods waiting for quota, by namespace and quota."},
        {"allot_pods_pending_demand",
         "What the pods waiting for quota would add to it, by namespace, quota and resource "
         "(cpu in cores, memory in bytes)."},
        {"allot_scheduler_pending_pods",
         "Pods waiting to be scheduled, by queue: active (due), backoff, unschedulable (no node "
         "fits: retried when a node or room comes), gated, quota (waiting for quota)."},
    };
    metrics_scrape sc;
    metrics_scrape_init(&sc, families, sizeof families / sizeof *families);
    strmap *sums = s ? strmap_new() : NULL;
    double queues[PQ_N] = {0};
    if (sums) sum_pending(s, sums, queues);
    for (int i = 0; s && i < PQ_N; i++) {
        const char *labels[] = {"queue", pq_names[i], NULL};
        metrics_sample(&sc, 2, labels, queues[i]);
    }
    void *v;
    for (size_t it = 0; sums && strmap_next(sums, &it, NULL, &v);) {
        pending_sum *p = v;
        const char *labels[] = {"namespace", p->ns, "resourcequota", p->quota, NULL, NULL, NULL};
        metrics_sample(&sc, 0, labels, (double)p->pods);
        labels[4] = "resource";
        for (size_t i = 0; !p->partial && i < rl_len(p->demand); i++) {
            labels[5] = rl_name(p->demand, i);
            metrics_sample(&sc, 1, labels, metrics_float(qty_milli_value(rl_qty(p->demand, i))));
        }
        pending_sum_free(p); /* as scheduler_stop: the walk reads no key */
    }
    strmap_free(sums);
    metrics_scrape_write(&sc, b);
    metrics_scrape_free(&sc);
}

void scheduler_render_metrics(dbuf *b)
{
    pthread_mutex_lock(&stats_mu);
    sched_stats st = scheduler_stats;
    pthread_mutex_unlock(&stats_mu);
    dbuf_printf(
        b,
        "# HELP allot_scheduler_attempts_total Scheduling attempts by result.\n"
        "# TYPE allot_scheduler_attempts_total counter\n"
        "allot_scheduler_attempts_total{result=\"scheduled\"} %llu\n"
        "allot_scheduler_attempts_total{result=\"unschedulable\"} %llu\n"
        "allot_scheduler_attempts_total{result=\"quota_exceeded\"} %llu\n"
        "allot_scheduler_attempts_total{result=\"error\"} %llu\n"
        "# HELP allot_scheduler_binds_rejected_total Binds refused by the atomic quota re-check.\n"
        "# TYPE allot_scheduler_binds_rejected_total counter\n"
        "allot_scheduler_binds_rejected_total %llu\n"
        "# HELP allot_scheduler_attempt_duration_seconds From dequeue to bound or rejected.\n"
        "# TYPE allot_scheduler_attempt_duration_seconds histogram\n",
        st.scheduled, st.unschedulable, st.quota_blocked, st.errors, st.bind_rejected);
    for (int i = 0; i < SCHED_NBUCKETS; i++)
        dbuf_printf(b, "allot_scheduler_attempt_duration_seconds_bucket{le=\"%g\"} %llu\n",
                    sched_latency_buckets[i], st.latency[i]);
    dbuf_printf(b,
                "allot_scheduler_attempt_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
                "allot_scheduler_attempt_duration_seconds_sum %.6f\n"
                "allot_scheduler_attempt_duration_seconds_count %llu\n",
                st.latency[SCHED_NBUCKETS], st.latency_sum, st.latency[SCHED_NBUCKETS]);
    scheduler *s = running;
    if (s)
        dbuf_printf(b,
                    "# HELP allot_scheduler_events_dropped_total Scheduled events not written: "
                    "too many waiting (the store could not keep up).\n"
                    "# TYPE allot_scheduler_events_dropped_total counter\n"
                    "allot_scheduler_events_dropped_total %lu\n",
                    event_recorder_dropped(s->events));
    render_pending(s, b);
}

scheduler *scheduler_start(store *st, char *err, size_t errlen)
{
    scheduler *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    s->st = st;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->jobs_mu, NULL);
    clock_cond_init(&s->cv);
    s->queue = strmap_new();
    s->nodes = strmap_new();
    s->placed = strmap_new();
    s->assumed = strmap_new();
    if (!s->queue || !s->nodes || !s->placed || !s->assumed) goto oom;
    s->events = event_recorder_start(st);
    if (!s->events) goto oom;
    if (pthread_create(&s->thread, NULL, run, s) != 0) {
        snprintf(err, errlen, "cannot start scheduler");
        scheduler_stop(s);
        return NULL;
    }
    running = s;
    return s;
oom:
    snprintf(err, errlen, "out of memory");
    if (s) {
        event_recorder_stop(s->events);
        strmap_free(s->queue);
        strmap_free(s->nodes);
        strmap_free(s->placed);
        strmap_free(s->assumed);
        free(s);
    }
    return NULL;
}

void scheduler_stop(scheduler *s)
{
    if (!s) return;
    running = NULL;
    atomic_store(&s->stop, true);
    pthread_mutex_lock(&s->jobs_mu); /* the scheduling thread may wait IDLE_WAIT_MS */
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->jobs_mu);
    pthread_join(s->thread, NULL);
    /* Binds committed: their callbacks hold s until they come (the store
     * makes every write durable, or fails it, before it closes). Those bound
     * still get their Scheduled event; the caches are about to go. */
    pthread_mutex_lock(&s->jobs_mu);
    while (s->binding)
        pthread_cond_wait(&s->cv, &s->jobs_mu);
    pthread_mutex_unlock(&s->jobs_mu);
    for (bind_job *j; (j = done_pop(s));) {
        bind_tell(s, j);
        job_free(j);
    }
    event_recorder_stop(s->events); /* after the binds: writes what they emitted */
    void *v;
    for (size_t it = 0; strmap_next(s->queue, &it, NULL, &v);)
        qentry_free(v);
    for (size_t it = 0; strmap_next(s->nodes, &it, NULL, &v);)
        ncache_free(v);
    for (size_t it = 0; strmap_next(s->placed, &it, NULL, &v);)
        placed_free(v);
    for (size_t it = 0; strmap_next(s->assumed, &it, NULL, &v);)
        assumed_ns_free(v);
    strmap_free(s->queue);
    strmap_free(s->nodes);
    strmap_free(s->placed);
    strmap_free(s->assumed);
    free(s->nvec);
    pthread_mutex_destroy(&s->jobs_mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
