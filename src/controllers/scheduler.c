/* scheduler.c - allot's built-in scheduler (schedulerName "default-scheduler").
 *
 * One scheduling thread and a pool of bind workers, as upstream's
 * assume-then-bind: the scheduling thread picks a node, records the pod as
 * assumed in its caches (node usage, and the namespace's deferred quota usage)
 * and queues the binding; a worker performs reg_bind, whose transaction
 * re-checks quota against the stored usage and charges it atomically. A
 * failed bind undoes the assumption and requeues the pod.
 *
 * The queue is event-driven: pods enter it when created or changed, and pods
 * blocked on quota are retried when usage in their namespace drops (a pod
 * deleted, finished or unbound) or a quota there changes - never only on a
 * timer. Ordering: priority, then age (sched_queue_cmp). Failures back off
 * 1 s doubling to 10 s.
 *
 * Pure decisions live in core/sched.c (filters, scoring, messages) and in
 * registry/quota_admission.c (the quota PreFilter, sharing admission's rules).
 */
#include "controllers/scheduler.h"

#include "api/objects.h"
#include "core/dbuf.h"
#include "core/deferred.h"
#include "core/quota_eval.h"
#include "core/sched.h"
#include "core/strmap.h"
#include "registry/events.h"
#include "registry/quota_deferred.h"
#include "registry/registry.h"
#include "server/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIND_WORKERS 32
#define WAIT_MS 50
#define BATCH 2048
#define BLOCKED_RETRY_MS 30000 /* safety net; retries are event-driven */
#define COMPONENT "default-scheduler"
#define NODE_WAKE_MS 200

typedef struct qentry { /* a pod waiting to be scheduled */
    char *key;
    int64_t priority, created; /* queue order keys, from the pod */
    unsigned long spec_hash;   /* to tell a spec change from a status write */
    int attempts;
    int64_t next_ms;
    bool blocked;           /* on quota: waits for an event in its namespace */
    bool in_flight;         /* assumed, binding */
    char quota[128];        /* the quota blocking it, when blocked on quota */
    unsigned long msg_hash; /* last condition written, to avoid rewrites */
} qentry;

typedef struct ncache { /* a node and the requests of pods on it */
    char *name;
    json_t *node;
    rlist *alloc; /* status.allocatable, parsed once per node update */
    rlist *requested, *nonzero;
    int pods;
} ncache;

typedef struct placed { /* a pod counted on a node */
    char *key;
    char *node;
    rlist *req, *nonzero;
} placed;

typedef struct bind_job {
    char *key, *ns, *name, *node;
    rlist *deferred; /* assumed deferred usage in its namespace */
    double t0;
} bind_job;

struct scheduler {
    store *st;
    pthread_t thread, workers[BIND_WORKERS];
    atomic_bool stop;
    pthread_mutex_t jobs_mu; /* the bind job queue only: never waits on mu */
    pthread_cond_t jobs_cv;
    pthread_mutex_t mu; /* everything below but the jobs */
    strmap *queue;      /* pod key -> qentry */
    strmap *nodes;      /* node name -> ncache */
    strmap *placed;     /* pod key -> placed */
    strmap *assumed;    /* namespace -> rlist of deferred usage being bound */
    bind_job *jobs;
    size_t njobs, cap_jobs;
    size_t next_start; /* where the next node search begins */
    bool nodes_changed;
    int64_t last_node_wake;
};

sched_stats scheduler_stats;
static pthread_mutex_t stats_mu = PTHREAD_MUTEX_INITIALIZER;

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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

static const char *jstr(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

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
    }
    placed_free(p);
}

static void place(scheduler *s, const char *key, const char *node, const json_t *pod)
{
    placed *old = strmap_get(s->placed, key);
    if (old && !strcmp(old->node, node)) return;
    unplace(s, key);
    placed *p = calloc(1, sizeof *p);
    if (!p) return;
    p->key = strdup(key);
    p->node = strdup(node);
    p->req = rl_new();
    p->nonzero = rl_new();
    if (!p->key || !p->node || !p->req || !p->nonzero || quota_pod_requests(pod, p->req) != 0 ||
        sched_pod_nonzero_requests(pod, p->nonzero) != 0 ||
        strmap_put(s->placed, p->key, p, NULL) != 0) {
        placed_free(p);
        return;
    }
    ncache *nc = strmap_get(s->nodes, node);
    if (nc) {
        rl_add_to(nc->requested, p->req);
        rl_add_to(nc->nonzero, p->nonzero);
        nc->pods++;
    }
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

/* Only keys are kept per waiting pod (10^5 parsed pods would cost GiBs);
 * the pod is read from the store when its turn comes. */
static unsigned long spec_hash(const json_t *pod)
{
    char *text = json_dumps(json_object_get(pod, "spec"), JSON_COMPACT | JSON_SORT_KEYS);
    unsigned long h = text ? strmap_hash(text) : 0;
    free(text);
    return h;
}

static void set_pod(qentry *q, const json_t *pod)
{
    sched_queue_keys(pod, &q->priority, &q->created);
    q->spec_hash = spec_hash(pod);
}

static void queue_add(scheduler *s, const char *key, const json_t *pod)
{
    qentry *q = strmap_get(s->queue, key);
    if (q) {
        /* A spec change (gates removed, resources edited) is worth a retry now;
         * a status change - often our own condition write - changes nothing. */
        bool spec_changed = q->spec_hash != spec_hash(pod);
        set_pod(q, pod);
        if (spec_changed && !q->in_flight) {
            q->blocked = false;
            q->next_ms = 0;
        }
        return;
    }
    q = calloc(1, sizeof *q);
    if (!q || !(q->key = strdup(key)) || strmap_put(s->queue, q->key, q, NULL) != 0) {
        if (q) free(q->key);
        free(q);
        return;
    }
    set_pod(q, pod);
    q->next_ms = mono_ms();
}

static void qentry_free(qentry *q)
{
    free(q->key);
    free(q);
}

static void queue_del(scheduler *s, const char *key)
{
    qentry *q = strmap_del(s->queue, key);
    if (q) qentry_free(q);
}

/* Usage dropped in a namespace: its quota-blocked pods go first in line again. */
static void wake_namespace(scheduler *s, const char *ns)
{
    char prefix[320];
    size_t plen = (size_t)snprintf(prefix, sizeof prefix, "pods/%s/", ns);
    void *v;
    for (size_t it = 0; strmap_next(s->queue, &it, NULL, &v);) {
        qentry *q = v;
        if (q->blocked && !strncmp(q->key, prefix, plen)) {
            q->blocked = false;
            q->next_ms = 0;
        }
    }
}

static bool terminal(const json_t *pod)
{
    const char *phase = jstr(pod, "status", "phase");
    return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

/* ---- events in ---- */

static void on_pod(scheduler *s, const store_event *ev)
{
    const char *key = ev->obj->key;
    json_t *pod = ev->type == STORE_EV_DELETED ? NULL : store_obj_parse(ev->obj);
    const char *node = pod ? jstr(pod, "spec", "nodeName") : NULL;
    bool counts = pod && node && *node && !terminal(pod);
    bool was = strmap_get(s->placed, key) != NULL;
    if (counts)
        place(s, key, node, pod);
    else
        unplace(s, key);
    if (pod && sched_pod_ours(pod) && !terminal(pod))
        queue_add(s, key, pod);
    else if (!(pod && strmap_get(s->queue, key) &&
               ((qentry *)strmap_get(s->queue, key))->in_flight))
        queue_del(s, key);
    /* A pod leaving a node, finishing or going away frees quota and room. */
    if ((was && !counts) || ev->type == STORE_EV_DELETED) wake_namespace(s, ev->obj->ns);
    json_decref(pod);
}

static void on_node(scheduler *s, const store_event *ev)
{
    if (ev->type == STORE_EV_DELETED) {
        ncache *nc = strmap_del(s->nodes, ev->obj->name);
        ncache_free(nc);
        return;
    }
    json_t *node = store_obj_parse(ev->obj);
    if (node) node_upsert(s, ev->obj->name, node);
    s->nodes_changed = true; /* requeue, coalesced: see requeue_on_nodes */
}

/* A new or changed node may fit what did not fit before. Nodes often arrive in
 * bursts; waking every waiting pod once per burst, not once per node, keeps a
 * thousand node events from turning into a thousand retries of every pod. */
static void requeue_on_nodes(scheduler *s)
{
    int64_t now = mono_ms();
    if (!s->nodes_changed || now - s->last_node_wake < NODE_WAKE_MS) return;
    s->nodes_changed = false;
    s->last_node_wake = now;
    void *v;
    for (size_t it = 0; strmap_next(s->queue, &it, NULL, &v);) {
        qentry *q = v;
        if (!q->blocked && !q->in_flight) q->next_ms = 0;
    }
}

static void on_quota(scheduler *s, const store_event *ev)
{
    /* Only a change of hard (or removal) can unblock pods; status writes are
     * frequent and never do. */
    /* Usage drops arrive as pod events (deleted, finished, unbound); a quota
     * event matters only when its limits change or it goes away. */
    if (ev->type == STORE_EV_MODIFIED && ev->prev) {
        json_t *a = store_obj_parse(ev->obj), *b = store_obj_parse(ev->prev);
        bool same = json_equal(json_object_get(a, "spec"), json_object_get(b, "spec"));
        json_decref(a);
        json_decref(b);
        if (same) return;
    }
    wake_namespace(s, ev->obj->ns);
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
    json_t *pod = json_deep_copy(cur);
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
                                       "PodScheduled")) break;
    json_t *cond = json_pack("{s:s, s:s, s:n, s:s, s:s}", "type", "PodScheduled", "status", "False",
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

static size_t node_array(scheduler *s, sched_node **out)
{
    size_t n = strmap_count(s->nodes), k = 0;
    sched_node *v = calloc(n ? n : 1, sizeof *v);
    void *val;
    for (size_t it = 0; v && strmap_next(s->nodes, &it, NULL, &val);) {
        ncache *nc = val;
        v[k++] = (sched_node){nc->node, nc->requested, nc->nonzero, nc->pods, nc->alloc};
    }
    *out = v;
    return k;
}

static bool push_job(scheduler *s, bind_job job)
{
    pthread_mutex_lock(&s->jobs_mu);
    if (s->njobs == s->cap_jobs) {
        size_t nc = s->cap_jobs ? s->cap_jobs * 2 : 64;
        bind_job *nj = realloc(s->jobs, nc * sizeof *nj);
        if (!nj) {
            pthread_mutex_unlock(&s->jobs_mu);
            return false;
        }
        s->jobs = nj;
        s->cap_jobs = nc;
    }
    s->jobs[s->njobs++] = job;
    pthread_cond_signal(&s->jobs_cv);
    pthread_mutex_unlock(&s->jobs_mu);
    return true;
}

static rlist *assumed_for(scheduler *s, const char *ns)
{
    rlist *a = strmap_get(s->assumed, ns);
    if (a) return a;
    char *k = strdup(ns);
    a = rl_new();
    if (!k || !a || strmap_put(s->assumed, k, a, NULL) != 0) {
        free(k);
        rl_free(a);
        return NULL;
    }
    return a;
}

/* A bind finished (or was abandoned): its deferred usage is no longer assumed. */
static void assumed_release(scheduler *s, const char *ns, const rlist *deferred)
{
    rlist *a = strmap_get(s->assumed, ns);
    if (!a) return;
    rlist *left = rl_subtract_nonneg(a, deferred);
    if (!left) return;
    const char *key = NULL, *k;
    void *v;
    for (size_t it = 0; strmap_next(s->assumed, &it, &k, &v);)
        if (v == a) key = k;
    strmap_put(s->assumed, key, left, NULL); /* the key string stays, the list is new */
    rl_free(a);
}

static void schedule_one(scheduler *s, qentry *q, json_t *pod, size_t nnodes_hint)
{
    double t0 = mono_s();
    char ns[256], name[256];
    split_key(q->key, ns, sizeof ns, name, sizeof name);
    if (sched_pod_gated(pod)) {
        q->blocked = true; /* a spec change (gate removed) requeues it */
        report_unschedulable(s, q, pod, "SchedulingGated",
                             "Scheduling is blocked due to non-empty scheduling gates");
        return;
    }
    sched_node *nodes = NULL;
    size_t n = node_array(s, &nodes);
    dbuf msg;
    dbuf_init(&msg, 1 << 16);
    rlist *deferred = NULL;
    int rc = quota_deferred_prefilter(s->st, pod, strmap_get(s->assumed, ns), n, &deferred, &msg,
                                      q->quota, sizeof q->quota);
    if (rc == 1) {
        q->blocked = true;
        q->next_ms = mono_ms() + BLOCKED_RETRY_MS;
        stat_attempt("quota", mono_s() - t0);
        report_unschedulable(s, q, pod, "Unschedulable", msg.p);
        goto out;
    }
    q->quota[0] = '\0';
    if (rc < 0) {
        stat_attempt("error", -1);
        q->next_ms = mono_ms() + sched_backoff_ms(++q->attempts);
        goto out;
    }
    size_t chosen = 0;
    rlist *req = rl_new();
    /* Upstream's minFeasibleNodesToFind: score 100 fitting nodes, rotating
     * where the search starts so the cluster fills evenly. */
    sched_sample sample = {s->next_start, 100, 0};
    rc = req && quota_pod_requests(pod, req) == 0
             ? sched_pick_sampled(pod, nodes, n, &sample, &chosen, &msg)
             : -1;
    s->next_start += sample.examined;
    if (rc != 0) {
        stat_attempt(rc == 1 ? "unschedulable" : "error", mono_s() - t0);
        q->next_ms = mono_ms() + sched_backoff_ms(++q->attempts);
        if (rc == 1) report_unschedulable(s, q, pod, "Unschedulable", msg.p);
        rl_free(req);
        goto out;
    }
    rl_free(req);
    /* Assume: count the pod on the node and its deferred usage in the namespace. */
    const char *node =
        json_string_value(json_object_get(json_object_get(nodes[chosen].node, "metadata"), "name"));
    place(s, q->key, node, pod);
    rlist *a = deferred ? assumed_for(s, ns) : NULL;
    if (a) rl_add_to(a, deferred);
    q->in_flight = true;
    bind_job job = {strdup(q->key), strdup(ns), strdup(name), strdup(node), deferred, t0};
    deferred = NULL;
    if (!push_job(s, job)) { /* out of memory: undo the assumption, retry later */
        if (a) assumed_release(s, ns, job.deferred);
        unplace(s, q->key);
        q->in_flight = false;
        q->next_ms = mono_ms() + sched_backoff_ms(++q->attempts);
        free(job.key);
        free(job.ns);
        free(job.name);
        free(job.node);
        rl_free(job.deferred);
    }
out:
    rl_free(deferred);
    dbuf_free(&msg);
    free(nodes);
    (void)nnodes_hint;
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

static void schedule_batch(scheduler *s)
{
    int64_t now = mono_ms();
    size_t cap = strmap_count(s->queue), n = 0;
    if (!cap) return;
    cand *c = calloc(cap, sizeof *c);
    if (!c) return;
    void *v;
    for (size_t it = 0; strmap_next(s->queue, &it, NULL, &v) && n < cap;) {
        qentry *q = v;
        if (q->in_flight || q->next_ms > now) continue;
        c[n++] = (cand){q, strdup(q->key), NULL};
    }
    qsort(c, n, sizeof *c, cand_cmp);
    for (size_t i = 0; i < n; i++) {
        if (i < BATCH && !atomic_load(&s->stop) && strmap_get(s->queue, c[i].key) == c[i].q) {
            store_obj *o = store_get(s->st, c[i].key);
            c[i].pod = o ? store_obj_parse(o) : NULL;
            store_obj_unref(o);
            const char *node = c[i].pod ? jstr(c[i].pod, "spec", "nodeName") : NULL;
            if (c[i].pod && sched_pod_ours(c[i].pod) && !(node && *node))
                schedule_one(s, c[i].q, c[i].pod, 0);
        }
        json_decref(c[i].pod); /* every candidate, also when stopping mid-batch */
        free(c[i].key);
        /* Let bind workers finish (they need mu) between pods. */
        pthread_mutex_unlock(&s->mu);
        pthread_mutex_lock(&s->mu);
    }
    free(c);
}

/* ---- bind workers ---- */

static void finish_job(scheduler *s, bind_job *j, bool ok, const api_err *e)
{
    pthread_mutex_lock(&s->mu);
    if (j->deferred) assumed_release(s, j->ns, j->deferred);
    qentry *q = strmap_get(s->queue, j->key);
    if (ok) {
        queue_del(s, j->key);
    } else {
        unplace(s, j->key);
        if (q) {
            q->in_flight = false;
            if (e && e->code == API_FORBIDDEN) {
                q->blocked = true; /* the re-check found the quota full: wait for usage to drop */
                q->next_ms = mono_ms() + BLOCKED_RETRY_MS;
            } else {
                q->next_ms = mono_ms() + sched_backoff_ms(++q->attempts);
            }
        }
    }
    pthread_mutex_unlock(&s->mu);
}

static void *bind_worker(void *arg)
{
    scheduler *s = arg;
    pthread_setname_np(pthread_self(), "bind-worker");
    for (;;) {
        pthread_mutex_lock(&s->jobs_mu);
        while (!s->njobs && !atomic_load(&s->stop))
            pthread_cond_wait(&s->jobs_cv, &s->jobs_mu);
        if (!s->njobs) {
            pthread_mutex_unlock(&s->jobs_mu);
            return NULL;
        }
        bind_job j = s->jobs[--s->njobs];
        pthread_mutex_unlock(&s->jobs_mu);
        api_err e;
        api_err_init(&e);
        json_t *pod = NULL;
        bool ok = reg_bind(s->st, j.ns, j.name, j.node, false, &pod, &e) == 0;
        if (ok) {
            stat_attempt("scheduled", mono_s() - j.t0);
            char msg[1024];
            snprintf(msg, sizeof msg, "Successfully assigned %s/%s to %s", j.ns, j.name, j.node);
            event_record(s->st, pod, "Normal", "Scheduled", msg, COMPONENT);
        }
        json_decref(pod);
        if (!ok && e.code == API_FORBIDDEN) {
            pthread_mutex_lock(&stats_mu);
            scheduler_stats.bind_rejected++;
            pthread_mutex_unlock(&stats_mu);
        }
        finish_job(s, &j, ok, &e);
        api_err_clear(&e);
        free(j.key);
        free(j.ns);
        free(j.name);
        free(j.node);
        rl_free(j.deferred);
    }
}

/* ---- main loop ---- */

static void *run(void *arg)
{
    scheduler *s = arg;
    pthread_setname_np(pthread_self(), "scheduler");
    bool expired = false;
    store_watch *w = store_watch_open(s->st, "", store_revision(s->st), &expired);
    pthread_mutex_lock(&s->mu);
    initial_sync(s);
    pthread_mutex_unlock(&s->mu);
    while (!atomic_load(&s->stop)) {
        store_event ev;
        int rc = w ? store_watch_next(w, &ev, WAIT_MS) : -1;
        pthread_mutex_lock(&s->mu);
        for (int i = 0; rc == 1 && i < 4096; i++) {
            handle_event(s, &ev);
            store_obj_unref(ev.obj);
            store_obj_unref(ev.prev);
            rc = store_watch_next(w, &ev, 0);
        }
        if (rc == 1) {
            handle_event(s, &ev);
            store_obj_unref(ev.obj);
            store_obj_unref(ev.prev);
        }
        if (rc < 0 && !atomic_load(&s->stop)) {
            store_watch_close(w);
            w = store_watch_open(s->st, "", store_revision(s->st), &expired);
            initial_sync(s);
        }
        requeue_on_nodes(s);
        schedule_batch(s);
        pthread_mutex_unlock(&s->mu);
    }
    store_watch_close(w);
    return NULL;
}

static scheduler *running; /* for metrics; one scheduler per process */

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
    dbuf_printf(
        b,
        "allot_scheduler_attempt_duration_seconds_bucket{le=\"+Inf\"} %llu\n"
        "allot_scheduler_attempt_duration_seconds_sum %.6f\n"
        "allot_scheduler_attempt_duration_seconds_count %llu\n"
        "# HELP allot_pods_pending_on_quota Pods waiting for quota, by namespace and quota.\n"
        "# TYPE allot_pods_pending_on_quota gauge\n",
        st.latency[SCHED_NBUCKETS], st.latency_sum, st.latency[SCHED_NBUCKETS]);
    scheduler *s = running;
    if (!s) return;
    strmap *counts = strmap_new();
    pthread_mutex_lock(&s->mu);
    void *v;
    for (size_t it = 0; counts && strmap_next(s->queue, &it, NULL, &v);) {
        qentry *q = v;
        if (!q->blocked || !q->quota[0]) continue;
        char ns[256], name[256], k[512];
        split_key(q->key, ns, sizeof ns, name, sizeof name);
        snprintf(k, sizeof k, "%s\x1f%s", ns, q->quota);
        long *c = strmap_get(counts, k);
        if (!c) {
            char *kk = strdup(k);
            c = calloc(1, sizeof *c);
            if (!kk || !c || strmap_put(counts, kk, c, NULL) != 0) {
                free(kk);
                free(c);
                continue;
            }
        }
        (*c)++;
    }
    pthread_mutex_unlock(&s->mu);
    const char *k;
    for (size_t it = 0; counts && strmap_next(counts, &it, &k, &v);) {
        const char *sep = strchr(k, '\x1f');
        dbuf_printf(b, "allot_pods_pending_on_quota{namespace=\"%.*s\",resourcequota=\"%s\"} %ld\n",
                    (int)(sep - k), k, sep + 1, *(long *)v);
        free((char *)k);
        free(v);
    }
    strmap_free(counts);
}

scheduler *scheduler_start(store *st, char *err, size_t errlen)
{
    scheduler *s = calloc(1, sizeof *s);
    if (!s) goto oom;
    s->st = st;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->jobs_mu, NULL);
    pthread_cond_init(&s->jobs_cv, NULL);
    s->queue = strmap_new();
    s->nodes = strmap_new();
    s->placed = strmap_new();
    s->assumed = strmap_new();
    if (!s->queue || !s->nodes || !s->placed || !s->assumed) goto oom;
    for (int i = 0; i < BIND_WORKERS; i++)
        pthread_create(&s->workers[i], NULL, bind_worker, s);
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
    pthread_mutex_lock(&s->jobs_mu);
    pthread_cond_broadcast(&s->jobs_cv);
    pthread_mutex_unlock(&s->jobs_mu);
    pthread_join(s->thread, NULL);
    for (int i = 0; i < BIND_WORKERS; i++)
        pthread_join(s->workers[i], NULL);
    void *v;
    const char *k;
    for (size_t it = 0; strmap_next(s->queue, &it, NULL, &v);)
        qentry_free(v);
    for (size_t it = 0; strmap_next(s->nodes, &it, NULL, &v);)
        ncache_free(v);
    for (size_t it = 0; strmap_next(s->placed, &it, NULL, &v);)
        placed_free(v);
    for (size_t it = 0; strmap_next(s->assumed, &it, &k, &v);) {
        free((char *)k);
        rl_free(v);
    }
    strmap_free(s->queue);
    strmap_free(s->nodes);
    strmap_free(s->placed);
    strmap_free(s->assumed);
    for (size_t i = 0; i < s->njobs; i++) {
        free(s->jobs[i].key);
        free(s->jobs[i].ns);
        free(s->jobs[i].name);
        free(s->jobs[i].node);
        rl_free(s->jobs[i].deferred);
    }
    free(s->jobs);
    free(s);
}
