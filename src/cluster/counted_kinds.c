/* counted_kinds.c - the kinds custom quotas count, watched and sent to the
 * webhook as quotas name them (see counted_kinds.h). */
#include "cluster/counted_kinds.h"

#include "api/crd_kinds.h"
#include "core/cquota.h"
#include "core/jdump.h"
#include "registry/cq_books.h"
#include "util/clock.h"
#include "util/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETRY_MS 2000
/* Quotas' statuses change often (every recount written): look again at
 * most this often for them. */
#define MIN_GAP_MS 1000
#define REQUEST_TIMEOUT_MS 10000
#define CRDS_PATH "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#define CONFIG_PATH                                                                                \
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/" COUNTED_WEBHOOK_CONFIG

/* The kind source i of q names, when allot serves it. */
static const api_kind *source_kind(const cq_quota *q, size_t i)
{
    const char *g, *v, *k;
    char av[300];
    cq_source_gvk(q, i, &g, &v, &k);
    snprintf(av, sizeof av, "%s%s%s", g, *g ? "/" : "", v);
    return api_kind_by_kind(av, k);
}

static cq_quota *compile(const json_t *quota, bool global)
{
    char err[256];
    return cq_compile(json_object_get(quota, "spec"), global, err, sizeof err);
}

/* fn(arg, q, s) for each source s of each custom quota q of st (the
 * mirror), in the order listed: CustomQuotas, then GlobalCustomQuotas. A
 * spec that does not compile has no source. */
static void each_source(store *st, void (*fn)(void *arg, const cq_quota *q, size_t s), void *arg)
{
    static const char *const prefixes[] = {CQ_PREFIX, GCQ_PREFIX};
    for (int g = 0; g < 2; g++) {
        store_obj **objs = NULL;
        size_t m = 0;
        int64_t rev;
        bool more;
        if (store_list(st, prefixes[g], NULL, 0, &objs, &m, &rev, &more) != 0) continue;
        for (size_t i = 0; i < m; i++) {
            json_t *quota = store_obj_parse(objs[i]);
            cq_quota *q = quota ? compile(quota, g) : NULL;
            for (size_t s = 0; q && s < cq_nsources(q); s++)
                fn(arg, q, s);
            cq_free(q);
            json_decref(quota);
            store_obj_unref(objs[i]);
        }
        free(objs);
    }
}

typedef struct kind_list {
    const api_kind **v;
    size_t n, max;
} kind_list;

static void add_kind(void *arg, const cq_quota *q, size_t s)
{
    kind_list *l = arg;
    const api_kind *k = source_kind(q, s);
    size_t j = 0;
    while (k && j < l->n && l->v[j] != k)
        j++;
    if (k && j == l->n && l->n < l->max) l->v[l->n++] = k;
}

size_t counted_kinds_of(store *st, const api_kind **out, size_t max)
{
    kind_list l = {out, 0, max};
    const api_kind *pods = api_kind_find("", "v1", "pods");
    if (pods && max) out[l.n++] = pods;
    each_source(st, add_kind, &l);
    return l.n;
}

json_t *counted_kinds_rules(const api_kind *const *kinds, size_t n)
{
    json_t *rules = json_array();
    for (size_t i = 0; rules && i < n; i++) {
        const api_kind *k = kinds[i];
        json_t *rule =
            json_pack("{s:[s], s:[s], s:[s], s:[s,s], s:s}", "apiGroups", k->group, "apiVersions",
                      k->version, "resources", k->resource, "operations", "CREATE", "UPDATE",
                      "scope", k->namespaced ? "Namespaced" : "Cluster");
        if (!rule || json_array_append_new(rules, rule) != 0) {
            json_decref(rules);
            rules = NULL;
        }
    }
    return rules;
}

bool counted_kinds_listed(mirror *m, const json_t *quota, bool global)
{
    cq_quota *q = compile(quota, global);
    bool ok = true;
    char res[256];
    for (size_t s = 0; ok && q && s < cq_nsources(q); s++) {
        const api_kind *k = source_kind(q, s);
        if (!k) continue;
        api_kind_store_resource(k, res, sizeof res);
        ok = mirror_listed(m, res);
    }
    cq_free(q);
    return ok;
}

struct counted_kinds {
    store *st;
    kube_client *kc;
    int (*watch)(void *arg, const api_kind *k);
    void *arg;
    pthread_t thread;
    pthread_mutex_t mu; /* stop, changed */
    pthread_cond_t cv;
    bool stop, changed, forced;
    /* the thread's own: the kinds watch() took, the rules last written or
     * found in the cluster */
    const api_kind *watched[COUNTED_KINDS_MAX];
    size_t nwatched;
    json_t *synced;
    int64_t crds_listed; /* when the cluster's CRDs were last read (mono ms) */
};

/* A custom quota changed: look again. On the publishing thread, under the
 * store's lock (store_observe): only a flag and a signal. */
static void on_event(void *arg, const store_event *ev)
{
    counted_kinds *ck = arg;
    const char *key = ev->obj->key;
    if (strncmp(key, CQ_PREFIX, strlen(CQ_PREFIX)) && strncmp(key, GCQ_PREFIX, strlen(GCQ_PREFIX)))
        return;
    pthread_mutex_lock(&ck->mu);
    ck->changed = true;
    pthread_cond_signal(&ck->cv);
    pthread_mutex_unlock(&ck->mu);
}

/* COUNTED_WEBHOOK's rules in the cluster made `rules`, at the version
 * read (compare-and-swap). 0 (done, or no such webhook to keep), or -1:
 * try again (not installed yet, a conflict, the cluster not reachable). */
static int sync_rules(counted_kinds *ck, json_t *rules)
{
    char err[256], *resp = NULL;
    long status = 0;
    if (kube_request(ck->kc, "GET", CONFIG_PATH, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp,
                     err, sizeof err) != 0 ||
        status != 200) {
        log_msg(LOG_DEBUG, "cannot read the webhook configuration yet",
                "\"status\":%ld,\"error\":\"%s\"", status, status ? "" : err);
        free(resp);
        return -1;
    }
    json_t *cfg = json_loads(resp, 0, NULL), *hook = NULL, *h;
    free(resp);
    resp = NULL;
    size_t i;
    json_array_foreach(json_object_get(cfg, "webhooks"), i, h)
    {
        const char *name = json_string_value(json_object_get(h, "name"));
        if (name && !strcmp(name, COUNTED_WEBHOOK)) hook = h;
    }
    int rc = 0;
    if (hook && !json_equal(json_object_get(hook, "rules"), rules)) {
        json_object_set(hook, "rules", rules);
        char *body = jdump(cfg, NULL);
        status = 0;
        if (!body || kube_request(ck->kc, "PUT", CONFIG_PATH, body, NULL, REQUEST_TIMEOUT_MS,
                                  &status, &resp, err, sizeof err) != 0)
            status = 0;
        free(body);
        free(resp);
        if (status >= 200 && status <= 299) {
            log_msg(LOG_INFO, "webhook rules follow the counted kinds", "\"kinds\":%zu",
                    json_array_size(rules));
        } else {
            log_msg(status == 409 ? LOG_DEBUG : LOG_WARN, "cannot update the webhook rules",
                    "\"status\":%ld", status);
            rc = -1;
        }
    }
    json_decref(cfg);
    return rc;
}

static void add_unknown(void *arg, const cq_quota *q, size_t s)
{
    const char *g, *v, *k;
    char gk[300];
    if (source_kind(q, s)) return;
    cq_source_gvk(q, s, &g, &v, &k);
    snprintf(gk, sizeof gk, "%s/%s", g, k);
    json_object_set_new(arg, gk, json_true());
}

/* The kinds the sources of the mirror's custom quotas name that allot
 * does not serve (yet), as a set of "<group>/<kind>": a new object, or NULL
 * when out of memory. */
static json_t *unknown_kinds(store *st)
{
    json_t *set = json_object();
    if (set) each_source(st, add_unknown, set);
    return set;
}

/* A source may name a kind of one of the cluster's own CRDs (seed 003's
 * ObjectBucketClaim): allot serves it once the definition is published to
 * its kind table, as standalone publishes a CRD written to it
 * (api/crd_kinds.h). The cluster's CRDs are read when a quota names a kind
 * allot does not serve, at most every COUNTED_KINDS_RESYNC_MS (a quota
 * naming a kind no CRD defines is not worth a list a round), and the
 * definitions of the kinds named are published. 0, or -1:
 * the list failed (try again soon). */
static int publish_cluster_crds(counted_kinds *ck)
{
    int64_t now = clock_mono_ms();
    if (ck->crds_listed && now - ck->crds_listed < COUNTED_KINDS_RESYNC_MS) return 0;
    json_t *unknown = unknown_kinds(ck->st);
    if (!json_object_size(unknown)) {
        json_decref(unknown);
        return 0;
    }
    char err[256], gk[300], *resp = NULL;
    long status = 0;
    if (kube_request(ck->kc, "GET", CRDS_PATH, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                     sizeof err) != 0 ||
        status != 200) {
        log_msg(LOG_WARN, "cannot list the cluster's CRDs", "\"status\":%ld,\"error\":\"%s\"",
                status, status ? "" : err);
        free(resp);
        json_decref(unknown);
        return -1;
    }
    ck->crds_listed = now;
    json_t *list = json_loads(resp, 0, NULL), *crd;
    free(resp);
    size_t i;
    json_array_foreach(json_object_get(list, "items"), i, crd)
    {
        /* the definitions of kinds a quota names, accepted (allot's own
         * kinds are served already, so never named here) */
        json_t *spec = json_object_get(crd, "spec");
        const char *group = json_string_value(json_object_get(spec, "group"));
        const char *kind =
            json_string_value(json_object_get(json_object_get(spec, "names"), "kind"));
        snprintf(gk, sizeof gk, "%s/%s", group ? group : "", kind ? kind : "");
        if (!json_object_get(json_object_get(crd, "status"), "acceptedNames") ||
            !json_object_get(unknown, gk))
            continue;
        int rc = crd_kinds_publish(crd, false, err, sizeof err);
        if (rc < 0)
            log_msg(
                LOG_WARN, "cannot serve a cluster CRD's kind", "\"crd\":\"%s\",\"error\":\"%s\"",
                json_string_value(json_object_get(json_object_get(crd, "metadata"), "name")), err);
        else if (rc > 0)
            log_msg(LOG_INFO, "serving a cluster CRD's kind", "\"crd\":\"%s\"",
                    json_string_value(json_object_get(json_object_get(crd, "metadata"), "name")));
    }
    json_decref(list);
    json_decref(unknown);
    return 0;
}

/* One look: start what is not watched yet, and keep the rules: read the
 * configuration when they changed or `force`. 0, or -1: something to try
 * again soon. */
static int round_once(counted_kinds *ck, bool force)
{
    const api_kind *kinds[COUNTED_KINDS_MAX];
    int rc = publish_cluster_crds(ck);
    size_t n = counted_kinds_of(ck->st, kinds, COUNTED_KINDS_MAX);
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < ck->nwatched && ck->watched[j] != kinds[i])
            j++;
        if (j < ck->nwatched) continue;
        if (ck->watch(ck->arg, kinds[i]) == 0) {
            ck->watched[ck->nwatched++] = kinds[i];
            log_msg(LOG_INFO, "watching a kind custom quotas count", "\"resource\":\"%s\"",
                    kinds[i]->resource);
        } else {
            rc = -1;
        }
    }
    json_t *rules = counted_kinds_rules(kinds, n);
    if (!rules) return -1;
    if (force || !ck->synced || !json_equal(ck->synced, rules)) {
        json_decref(ck->synced);
        ck->synced = NULL;
        if (sync_rules(ck, rules) == 0)
            ck->synced = json_incref(rules);
        else
            rc = -1;
    }
    json_decref(rules);
    return rc;
}

static void *run(void *arg)
{
    counted_kinds *ck = arg;
    int64_t last = clock_mono_ms() - MIN_GAP_MS, due = 0, retry = RETRY_MS;
    for (;;) {
        pthread_mutex_lock(&ck->mu);
        bool go = false;
        while (!ck->stop) {
            int64_t now = clock_mono_ms(), until = due;
            if ((go = ck->forced || now >= due || (ck->changed && now - last >= MIN_GAP_MS))) break;
            if (ck->changed && last + MIN_GAP_MS < until) until = last + MIN_GAP_MS;
            struct timespec ts = clock_deadline(CLOCK_MONOTONIC, until - now);
            pthread_cond_timedwait(&ck->cv, &ck->mu, &ts);
        }
        bool stop = ck->stop, force = ck->forced || clock_mono_ms() >= due;
        ck->changed = ck->forced = false;
        pthread_mutex_unlock(&ck->mu);
        if (stop) break;
        int rc = round_once(ck, force);
        last = clock_mono_ms();
        /* a failure is tried again soon, then less often, up to the
         * resync (a configuration not installed, CRDs allot may not list:
         * not a poll every 2 s) */
        due = last + (rc == 0 ? COUNTED_KINDS_RESYNC_MS : retry);
        retry = rc == 0 ? RETRY_MS : retry * 2;
        if (retry > COUNTED_KINDS_RESYNC_MS) retry = COUNTED_KINDS_RESYNC_MS;
    }
    return NULL;
}

counted_kinds *counted_kinds_start(store *st, kube_client *kc,
                                   int (*watch)(void *arg, const api_kind *k), void *arg, char *err,
                                   size_t errlen)
{
    counted_kinds *ck = calloc(1, sizeof *ck);
    if (!ck) return snprintf(err, errlen, "out of memory"), NULL;
    ck->st = st;
    ck->kc = kc;
    ck->watch = watch;
    ck->arg = arg;
    pthread_mutex_init(&ck->mu, NULL);
    if (clock_cond_init(&ck->cv) != 0) {
        pthread_mutex_destroy(&ck->mu);
        free(ck);
        return snprintf(err, errlen, "out of memory"), NULL;
    }
    if (store_observe(st, on_event, ck) != 0) {
        snprintf(err, errlen, "cannot observe the mirror's custom quotas");
        goto fail;
    }
    if (pthread_create(&ck->thread, NULL, run, ck) != 0) {
        snprintf(err, errlen, "cannot start the counted kinds' thread");
        goto fail;
    }
    return ck;
fail:
    store_unobserve(st, on_event, ck);
    pthread_cond_destroy(&ck->cv);
    pthread_mutex_destroy(&ck->mu);
    free(ck);
    return NULL;
}

void counted_kinds_kick(counted_kinds *ck)
{
    if (!ck) return;
    pthread_mutex_lock(&ck->mu);
    ck->forced = true;
    pthread_cond_signal(&ck->cv);
    pthread_mutex_unlock(&ck->mu);
}

void counted_kinds_stop(counted_kinds *ck)
{
    if (!ck) return;
    pthread_mutex_lock(&ck->mu);
    ck->stop = true;
    pthread_cond_signal(&ck->cv);
    pthread_mutex_unlock(&ck->mu);
    pthread_join(ck->thread, NULL);
    store_unobserve(ck->st, on_event, ck);
    json_decref(ck->synced);
    pthread_cond_destroy(&ck->cv);
    pthread_mutex_destroy(&ck->mu);
    free(ck);
}
