/* quota.c - the ResourceQuota controller: periodic full recount.
 *
 * Admission keeps status.used exact at every commit (registry/quota_admission.c),
 * so a recount is a check, not the mechanism: it runs every sync period, each
 * quota in its own transaction, reading the store as of that transaction (never
 * a stale cache, the cause of kubernetes#123434). If the stored usage differs,
 * that is drift: it is logged, counted and corrected to the recount.
 */
#include "controllers/quota.h"
#include "core/jdump.h"

#include "registry/cq_books.h"

#include "registry/quota_admission.h"
#include "registry/quota_ledger.h"
#include "util/log.h"
#include "util/clock.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct quota_controller {
    store *st;
    int period_s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    bool stop;
};

static atomic_ullong drift_total, resyncs_total;

unsigned long long quota_controller_drift_total(void)
{
    return atomic_load(&drift_total);
}

unsigned long long quota_controller_resyncs_total(void)
{
    return atomic_load(&resyncs_total);
}

/* Recount one quota in a transaction; *changed set when status was rewritten.
 * A difference counts as drift unless `restoring` (startup: a stored status
 * may trail the pods after a crash, by design - store.h's derived writes). */
static int resync_one(store *st, const char *key, bool restoring, bool *changed)
{
    *changed = false;
    store_txn *t = store_begin(st);
    if (!t) return -1;
    store_obj *o = store_txn_get(t, key);
    json_t *q = o ? store_obj_parse(o) : NULL;
    /* What admission holds now: the ledger's usage, which the stored status
     * may trail by a flush interval. */
    rlist *ledger = q ? quota_ledger_read_txn(t, o) : NULL;
    json_t *held = ledger ? rl_to_json(ledger) : NULL;
    rl_free(ledger);
    if (o) store_obj_unref(o);
    json_t *used = NULL;
    int rc = 0;
    if (!q) goto done; /* deleted meanwhile */
    if (!held || quota_recount_in_txn(t, q, &used) != 0) {
        rc = -1;
        goto done;
    }
    json_t *status = json_object_get(q, "status");
    json_t *hard = json_object_get(json_object_get(q, "spec"), "hard");
    bool drift = !json_equal(held, used);
    bool same_used = !drift && json_equal(json_object_get(status, "used"), used);
    bool same_hard = json_equal(json_object_get(status, "hard"), hard);
    if (same_used && same_hard) goto done;
    if (drift && !restoring) {
        char *was = jdump(held, NULL);
        char *now = jdump(used, NULL);
        log_msg(LOG_WARN, "quota usage drift corrected",
                "\"quota\":\"%s\",\"stored\":%s,\"recount\":%s", key, was ? was : "null",
                now ? now : "null");
        free(was);
        free(now);
        atomic_fetch_add(&drift_total, 1);
    }
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(q, "status", status);
    }
    json_object_set(status, "used", used);
    if (hard) json_object_set(status, "hard", hard);
    char rv[32];
    snprintf(rv, sizeof rv, "%lld", (long long)store_txn_rev(t));
    json_object_set_new(json_object_get(q, "metadata"), "resourceVersion", json_string(rv));
    rc = store_txn_put(t, key, q, NULL);
    *changed = rc == 0;
done:
    json_decref(q);
    json_decref(held);
    json_decref(used);
    if (rc == 0) return store_commit(t);
    store_abort(t);
    return rc;
}

static int resync_all(store *st, bool restoring, size_t *corrected)
{
    store_obj **objs = NULL;
    size_t n = 0;
    int rc = 0;
    if (corrected) *corrected = 0;
    if (store_list(st, "resourcequotas/", NULL, 0, &objs, &n, NULL, NULL) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        bool changed = false;
        if (resync_one(st, objs[i]->key, restoring, &changed) != 0) rc = -1;
        if (changed && corrected) (*corrected)++;
        store_obj_unref(objs[i]);
    }
    free(objs);
    if (rc == 0) atomic_fetch_add(&resyncs_total, 1);
    return rc;
}

int quota_controller_resync(store *st, size_t *corrected)
{
    return resync_all(st, false, corrected);
}

int quota_controller_restore(store *st, size_t *corrected)
{
    return resync_all(st, true, corrected);
}

/* Custom quotas are recounted every this many periods. */
#define CQ_RESYNC_EVERY 12

static void *run(void *arg)
{
    quota_controller *c = arg;
    pthread_setname_np(pthread_self(), "quota-ctl");
    size_t corrected = 0; /* the first recount ran before serving (allotd.c) */
    unsigned long rounds = 0;
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        struct timespec deadline = clock_deadline(CLOCK_MONOTONIC, (int64_t)c->period_s * 1000);
        while (!c->stop && pthread_cond_timedwait(&c->wake, &c->mu, &deadline) != ETIMEDOUT) {
        }
        if (c->stop) break;
        pthread_mutex_unlock(&c->mu);
        if (quota_controller_resync(c->st, &corrected) != 0)
            log_msg(LOG_ERROR, "quota resync failed", NULL);
        /* custom quotas: an hour at the default period (a recount parses
         * every object a quota targets) */
        size_t drift = 0;
        if (++rounds % CQ_RESYNC_EVERY == 0 && cq_books_resync(c->st, &drift) != 0)
            log_msg(LOG_ERROR, "custom quota resync failed", NULL);
        else if (drift)
            log_msg(LOG_WARN, "custom quota usage drift corrected", "\"quotas\":%zu", drift);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

quota_controller *quota_controller_start(store *st, int period_s, char *err, size_t errlen)
{
    quota_controller *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->st = st;
    c->period_s = period_s > 0 ? period_s : 300;
    pthread_mutex_init(&c->mu, NULL);
    clock_cond_init(&c->wake);
    if (pthread_create(&c->thread, NULL, run, c) != 0) {
        snprintf(err, errlen, "cannot start quota controller");
        free(c);
        return NULL;
    }
    return c;
}

void quota_controller_stop(quota_controller *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    c->stop = true;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
