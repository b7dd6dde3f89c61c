/* pool_sync.c - the books' pool decisions written to the cluster (see
 * pool_sync.h). */
#include "cluster/pool_sync.h"

#include "cluster/cq_guard.h"
#include "cluster/deferred_plan.h"
#include "cluster/extender.h"

#include "cluster/reconcile.h"
#include "util/clock.h"
#include "util/log.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOLS_PREFIX "resourcepools.capsule.clastix.io//"
#define REQUEST_TIMEOUT_MS 10000
/* After a round that could not finish, or between rounds under a stream of
 * changes (every pod a quota counts changes its status): what coalesces. A
 * round holds the mirror's writer lock while it decides (the webhooks'
 * dry runs wait for it) and costs in proportion to the claims of its
 * pools, so rounds are spaced at least GAP_FACTOR times their own length
 * apart: the writer takes at most about a fifth of the time, and more
 * changes are decided per round as pools grow. */
#define RETRY_MS 1000
/* At most so many waiting pods woken per namespace at once, when its
 * deferred quota frees room (as many as fit in it, below this). */
#define DQ_WAKE_MAX 64
#define MIN_GAP_MS 200
#define MAX_GAP_MS 5000
#define GAP_FACTOR 4

struct pool_sync {
    store *st;
    mirror *m;
    kube_client *kc;
    leader *l;
    bool (*ready)(void *arg);
    void *ready_arg;
    pthread_t thread;
    atomic_bool stop, kicked;
    pthread_mutex_t mu; /* stats */
    pool_sync_stats stats;
};

/* Whether a change of key can change what a pool decides. */
static bool relevant(const char *key)
{
    return !strncmp(key, "resourcepools.", 14) || !strncmp(key, "resourcepoolclaims.", 19) ||
           !strncmp(key, "namespaces/", 11) || !strncmp(key, "resourcequotas/", 15);
}

/* Whether a change of key can change what a custom quota counts: the
 * quotas, namespaces (a global quota's selection) and every other kind the
 * mirror holds (what the quotas count), not the pools' own objects. */
static bool counted(const char *key)
{
    return !strncmp(key, "namespaces/", 11) ||
           (strncmp(key, "resourcepools.", 14) && strncmp(key, "resourcepoolclaims.", 19) &&
            strncmp(key, "resourcequotas/", 15));
}

/* Whether the mirror holds namespace NS of quota key "resourcequotas/NS/..."
 * at the version the API server has now (a quorum read). */
static bool namespace_current(pool_sync *p, const char *key)
{
    const char *ns = key + 15, *slash = strchr(ns, '/');
    char name[256], nskey[300], have[64], path[300], err[256], *resp = NULL;
    if (!slash || (size_t)(slash - ns) >= sizeof name) return false;
    memcpy(name, ns, (size_t)(slash - ns));
    name[slash - ns] = '\0';
    snprintf(nskey, sizeof nskey, "namespaces//%s", name);
    snprintf(path, sizeof path, "/api/v1/namespaces/%s", name);
    long status = 0;
    bool held = mirror_cluster_rv(p->m, nskey, have, sizeof have);
    if (kube_request(p->kc, "GET", path, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                     sizeof err) != 0) {
        free(resp);
        return false;
    }
    json_t *o = status == 200 ? json_loads(resp ? resp : "", 0, NULL) : NULL;
    free(resp);
    const char *rv =
        json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
    bool same = status == 404 ? !held : held && rv && !strcmp(rv, have);
    json_decref(o);
    return same;
}

/* Write one pool's plan, in order. false when it did not all go through
 * (a conflict: the mirror is behind; or a failure): plan again later. */
static bool apply(pool_sync *p, const cw_list *plan)
{
    bool ok = true;
    for (size_t i = 0; i < plan->n; i++) {
        const cluster_write *w = &plan->v[i];
        char err[256], *resp = NULL;
        long status = 0;
        if (!strcmp(w->method, "DELETE") && !strncmp(w->key, "resourcequotas/", 15) &&
            !namespace_current(p, w->key)) {
            /* Deleting a quota lifts every limit on its namespace: only on
             * a mirror that is current for that namespace (it may be back
             * in the pool's selection since). */
            ok = false;
            break;
        }
        const char *ct = !strcmp(w->method, "PATCH") ? "application/merge-patch+json" : NULL;
        int rc = kube_request(p->kc, w->method, w->path, w->body, ct, REQUEST_TIMEOUT_MS, &status,
                              &resp, err, sizeof err);
        bool done = rc == 0 && ((status >= 200 && status <= 299) ||
                                (status == 404 && !strcmp(w->method, "DELETE")));
        pthread_mutex_lock(&p->mu);
        if (done)
            p->stats.writes++;
        else if (status == 409)
            p->stats.conflicts++;
        else
            p->stats.failures++;
        pthread_mutex_unlock(&p->mu);
        if (!done && status != 409) {
            /* the API server's Status message says why */
            json_t *st = rc == 0 && resp ? json_loads(resp, 0, NULL) : NULL;
            const char *why = rc == 0 ? json_string_value(json_object_get(st, "message")) : err;
            log_msg(LOG_WARN, "cannot write a decision to the cluster",
                    "\"method\":\"%s\",\"path\":\"%s\",\"status\":%ld,\"error\":\"%s\"", w->method,
                    w->path, status, why ? why : "");
            json_decref(st);
        }
        free(resp);
        if (!done) {
            /* Nothing is handed out that is not recorded first (the pool's
             * status, then the claims' statuses, then the quotas): the
             * rest is planned again from a newer mirror. */
            ok = false;
            break;
        }
    }
    return ok;
}

/* reconcile_cq_plan's check of an expired reservation: asked of the
 * cluster, for an object the mirror may not have taken in yet. */
static bool reservation_gone(void *arg, const json_t *r)
{
    pool_sync *p = arg;
    return cq_reservation_gone(p->kc, r);
}

/* Write every custom quota's status as its books count it. false when
 * any needs another round. */
static bool round_cq(pool_sync *p)
{
    cw_list plan = {0};
    bool ok = leader_is(p->l) && reconcile_cq_plan(p->st, p->m, reservation_gone, p, &plan) == 0;
    /* (each write stands alone: one conflict does not stop the others) */
    for (size_t i = 0; i < plan.n; i++) {
        cw_list one = {.v = &plan.v[i], .n = 1, .cap = 1};
        ok &= apply(p, &one);
    }
    cw_list_free(&plan);
    /* the namespaces the quotas cover, marked for the webhook's scope */
    cw_list labels = {0};
    if (leader_is(p->l) && reconcile_counted_labels(p->st, &labels) == 0) {
        if (labels.n) ok &= apply(p, &labels);
    } else {
        ok = false;
    }
    cw_list_free(&labels);
    return ok;
}

/* The leader's check of an expired bind reservation (cluster/extender.h). */
static bool bind_gone(void *arg, const json_t *r)
{
    pool_sync *p = arg;
    return dq_reservation_gone(p->kc, r);
}

/* Whether a change of key can change a deferred quota's book: its quota,
 * a pod (bound, finished, gone) or a namespace (its mode). */
static bool deferred_input(const char *key)
{
    return !strncmp(key, "pods/", 5) || !strncmp(key, "resourcequotas/", 15) ||
           !strncmp(key, "namespaces/", 11);
}

/* Write every deferred quota's book as the recount gives it, then wake the
 * waiting pods that fit in the room each namespace's quotas freed. false when
 * any needs another round. */
static bool round_dq(pool_sync *p)
{
    cw_list plan = {0};
    json_t *freed = json_object();
    bool ok =
        freed && leader_is(p->l) && reconcile_dq_plan(p->st, p->m, bind_gone, p, &plan, freed) == 0;
    for (size_t i = 0; i < plan.n; i++) {
        cw_list one = {.v = &plan.v[i], .n = 1, .cap = 1};
        ok &= apply(p, &one);
    }
    cw_list_free(&plan);
    const char *ns;
    json_t *v;
    json_object_foreach(freed, ns, v)
    {
        cw_list wake = {0};
        if (reconcile_dq_wake(p->st, p->m, ns, v, DQ_WAKE_MAX, clock_wall_ms(), &wake) == 0) {
            for (size_t i = 0; i < wake.n; i++) {
                cw_list one = {.v = &wake.v[i], .n = 1, .cap = 1};
                apply(p, &one); /* (a pod gone since needs no wake-up) */
            }
            log_msg(LOG_INFO, "deferred quota freed room: waiting pods woken",
                    "\"namespace\":\"%s\",\"woken\":%zu", ns, wake.n);
        }
        cw_list_free(&wake);
    }
    json_decref(freed);
    return ok;
}

/* Plan and write every pool. false when any needs another round. */
static bool round_all(pool_sync *p)
{
    store_obj **pools = NULL;
    size_t n = 0;
    int64_t rev;
    bool more, ok = true;
    json_t *selected = json_object();
    if (!selected || store_list(p->st, POOLS_PREFIX, NULL, 0, &pools, &n, &rev, &more) != 0) {
        json_decref(selected);
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        cw_list plan = {0};
        char err[256];
        if (leader_is(p->l) && reconcile_pool_plan(p->st, p->m, pools[i]->name, &plan, selected,
                                                   err, sizeof err) == 0) {
            if (plan.n) ok &= apply(p, &plan);
        } else {
            ok = false;
        }
        cw_list_free(&plan);
        store_obj_unref(pools[i]);
    }
    free(pools);
    /* Only once every pool was decided: a namespace is unmarked only when
     * no pool selects it. */
    cw_list labels = {0};
    if (ok && leader_is(p->l) && reconcile_pooled_labels(p->st, selected, &labels) == 0 && labels.n)
        ok &= apply(p, &labels);
    cw_list_free(&labels);
    json_decref(selected);
    pthread_mutex_lock(&p->mu);
    p->stats.rounds++;
    pthread_mutex_unlock(&p->mu);
    return ok;
}

static void *run(void *arg)
{
    pool_sync *p = arg;
    bool expired = false, dirty = true, cq_dirty = true, dq_dirty = true;
    store_watch *w = store_watch_open(p->st, "", store_revision(p->st), &expired);
    int64_t next_resync = clock_mono_ms() + POOL_SYNC_RESYNC_MS, last_round = 0, gap = MIN_GAP_MS;
    while (!atomic_load(&p->stop)) {
        int64_t now = clock_mono_ms();
        bool can = leader_is(p->l) && p->ready(p->ready_arg);
        if ((dirty || cq_dirty || dq_dirty) && can && now - last_round >= gap) {
            if (dirty) dirty = !round_all(p);
            if (cq_dirty) cq_dirty = !round_cq(p);
            if (dq_dirty) dq_dirty = !round_dq(p);
            last_round = clock_mono_ms();
            gap = (last_round - now) * GAP_FACTOR;
            gap = gap < MIN_GAP_MS ? MIN_GAP_MS : gap > MAX_GAP_MS ? MAX_GAP_MS : gap;
            now = last_round;
        }
        /* Sleep until something changes; only a round left to retry, or a
         * mirror still filling, wakes it sooner. */
        int64_t timeout = next_resync - now;
        bool any = dirty || cq_dirty || dq_dirty;
        if (any && can) timeout = RETRY_MS;
        if (!p->ready(p->ready_arg)) timeout = RETRY_MS;
        if (any && can && now - last_round < gap) timeout = gap - (now - last_round);
        if (timeout < 0) timeout = 0;
        store_event ev;
        int rc = w ? store_watch_next(w, &ev, (int)timeout) : 0;
        if (rc == 1) {
            if (relevant(ev.obj->key)) dirty = true;
            if (counted(ev.obj->key)) cq_dirty = true;
            if (deferred_input(ev.obj->key)) dq_dirty = true;
            store_obj_unref(ev.obj);
            store_obj_unref(ev.prev);
            /* take what else has come without sleeping again */
            continue;
        }
        if (rc < 0 || !w) {
            /* Fell behind the mirror's history: start again from now. */
            store_watch_close(w);
            w = store_watch_open(p->st, "", store_revision(p->st), &expired);
            dirty = cq_dirty = dq_dirty = true;
        }
        if (atomic_exchange(&p->kicked, false)) dirty = cq_dirty = dq_dirty = true;
        if (clock_mono_ms() >= next_resync) {
            dirty = cq_dirty = dq_dirty = true;
            next_resync = clock_mono_ms() + POOL_SYNC_RESYNC_MS;
        }
    }
    store_watch_close(w);
    return NULL;
}

pool_sync *pool_sync_start(store *st, mirror *m, kube_client *kc, leader *l,
                           bool (*ready)(void *arg), void *arg, char *err, size_t errlen)
{
    pool_sync *p = calloc(1, sizeof *p);
    if (!p) return snprintf(err, errlen, "out of memory"), NULL;
    *p = (pool_sync){.st = st, .m = m, .kc = kc, .l = l, .ready = ready, .ready_arg = arg};
    pthread_mutex_init(&p->mu, NULL);
    if (pthread_create(&p->thread, NULL, run, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        snprintf(err, errlen, "cannot start the pool writer");
        return NULL;
    }
    return p;
}

void pool_sync_kick(pool_sync *p)
{
    if (!p) return;
    atomic_store(&p->kicked, true);
    store_watch_wake_all(p->st);
}

void pool_sync_get_stats(pool_sync *p, pool_sync_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->stats;
    pthread_mutex_unlock(&p->mu);
}

void pool_sync_stop(pool_sync *p)
{
    if (!p) return;
    atomic_store(&p->stop, true);
    store_watch_wake_all(p->st);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
