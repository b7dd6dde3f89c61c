/* leader.c - campaigning for the Lease (see leader.h). */
#include "cluster/leader.h"

#include "core/jdump.h"
#include "core/lease.h"
#include "util/clock.h"
#include "util/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REQUEST_TIMEOUT_MS 5000

struct leader {
    kube_client *kc;
    char path[512], coll[300], ns[254], name[254], identity[254];
    void (*on_change)(void *arg, bool leading);
    void *arg;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    atomic_llong valid_until_ms; /* leading until then (monotonic); 0 not leading */
    bool leading;                /* as last told on_change (the thread's) */
    lease_observer ob;
};

/* Upstream's MicroTime: RFC 3339 in UTC with microseconds. */
static void now_micro(char *buf, size_t n)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char base[24];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%.19s.%06dZ", base, (int)(ts.tv_nsec / 1000 % 1000000));
}

bool leader_is(const leader *l)
{
    return l && clock_mono_ms() < atomic_load(&((leader *)l)->valid_until_ms);
}

static void tell(leader *l)
{
    bool now = leader_is(l);
    if (now == l->leading) return;
    l->leading = now;
    log_msg(LOG_INFO, now ? "leading" : "not leading", "\"lease\":\"%s/%s\",\"identity\":\"%s\"",
            l->ns, l->name, l->identity);
    if (l->on_change) l->on_change(l->arg, now);
}

/* One round: read the Lease, decide, write. */
static void round_once(leader *l)
{
    char err[256], now_rfc[40];
    char *resp = NULL;
    long status = 0;
    int64_t started = clock_mono_ms();
    if (kube_request(l->kc, "GET", l->path, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                     sizeof err) != 0 ||
        (status != 200 && status != 404)) {
        log_msg(LOG_WARN, "cannot read the lease", "\"status\":%ld", status);
        free(resp);
        return;
    }
    json_t *cur = status == 200 ? json_loads(resp ? resp : "", 0, NULL) : NULL;
    free(resp);
    resp = NULL;
    if (status == 200 && !cur) return;
    lease_action a =
        lease_decide(&l->ob, cur, l->identity, LEADER_LEASE_DURATION_S, clock_mono_ms());
    if (a != LEASE_WAIT) {
        now_micro(now_rfc, sizeof now_rfc);
        json_t *w =
            lease_write(a, cur, l->ns, l->name, l->identity, LEADER_LEASE_DURATION_S, now_rfc);
        char *body = w ? jdump(w, NULL) : NULL;
        json_decref(w);
        bool create = a == LEASE_CREATE;
        if (body &&
            kube_request(l->kc, create ? "POST" : "PUT", create ? l->coll : l->path, body, NULL,
                         REQUEST_TIMEOUT_MS, &status, &resp, err, sizeof err) == 0 &&
            (status == 200 || status == 201)) {
            /* Held from when this round began: the renewal is at least
             * that fresh. */
            atomic_store(&l->valid_until_ms, started + LEADER_RENEW_DEADLINE_S * 1000);
        } else if (status == 409) {
            /* Another replica wrote first: it holds the lease now. */
            atomic_store(&l->valid_until_ms, 0);
        }
        free(body);
        free(resp);
    }
    json_decref(cur);
}

static void *campaign(void *arg)
{
    leader *l = arg;
    pthread_mutex_lock(&l->mu);
    while (!l->stop) {
        pthread_mutex_unlock(&l->mu);
        round_once(l);
        tell(l);
        pthread_mutex_lock(&l->mu);
        struct timespec due = clock_deadline(CLOCK_MONOTONIC, LEADER_RETRY_PERIOD_MS);
        while (!l->stop && pthread_cond_timedwait(&l->cv, &l->mu, &due) == 0) {
        }
    }
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

leader *leader_start(kube_client *kc, const char *ns, const char *name, const char *identity,
                     void (*on_change)(void *arg, bool leading), void *arg, char *err,
                     size_t errlen)
{
    leader *l = calloc(1, sizeof *l);
    if (!l) return snprintf(err, errlen, "out of memory"), NULL;
    l->kc = kc;
    l->on_change = on_change;
    l->arg = arg;
    snprintf(l->ns, sizeof l->ns, "%s", ns);
    snprintf(l->name, sizeof l->name, "%s", name);
    snprintf(l->identity, sizeof l->identity, "%s", identity);
    snprintf(l->coll, sizeof l->coll, "/apis/coordination.k8s.io/v1/namespaces/%s/leases", ns);
    snprintf(l->path, sizeof l->path, "%s/%s", l->coll, name);
    pthread_mutex_init(&l->mu, NULL);
    clock_cond_init(&l->cv);
    if (pthread_create(&l->thread, NULL, campaign, l) != 0) {
        pthread_cond_destroy(&l->cv);
        pthread_mutex_destroy(&l->mu);
        free(l);
        snprintf(err, errlen, "cannot start the leader election thread");
        return NULL;
    }
    return l;
}

/* Give the Lease up: an empty holder, at the version we hold, so that the
 * next candidate takes it at once (client-go's ReleaseOnCancel). */
static void release(leader *l)
{
    char err[256], *resp = NULL;
    long status = 0;
    if (kube_request(l->kc, "GET", l->path, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                     sizeof err) != 0 ||
        status != 200) {
        free(resp);
        return;
    }
    json_t *cur = json_loads(resp ? resp : "", 0, NULL);
    free(resp);
    resp = NULL;
    json_t *spec = json_object_get(cur, "spec");
    const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
    if (holder && !strcmp(holder, l->identity)) {
        json_object_set_new(spec, "holderIdentity", json_string(""));
        char *body = jdump(cur, NULL);
        if (body)
            kube_request(l->kc, "PUT", l->path, body, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                         sizeof err);
        free(body);
        free(resp);
    }
    json_decref(cur);
}

void leader_stop(leader *l)
{
    if (!l) return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_signal(&l->cv);
    pthread_mutex_unlock(&l->mu);
    pthread_join(l->thread, NULL);
    bool was = leader_is(l);
    atomic_store(&l->valid_until_ms, 0);
    if (was) release(l);
    tell(l);
    pthread_cond_destroy(&l->cv);
    pthread_mutex_destroy(&l->mu);
    free(l);
}
