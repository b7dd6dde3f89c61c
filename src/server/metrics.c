/* metrics.c - request counters and latency histograms, plus store gauges read
 * at scrape time. Series are few (verb x resource x code), kept in a map under
 * one mutex: a request costs one lock and a lookup. */
#include "server/metrics.h"

#include "api/kinds.h"
#include "controllers/quota.h"
#include "controllers/scheduler.h"
#include "core/dbuf.h"
#include "core/quantity.h"
#include "core/strmap.h"
#include "registry/ledger.h"
#include "registry/quota_ledger.h"
#include "registry/registry.h"
#include "server/metrics_custom_quotas.h"
#include "server/metrics_pools.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS 13
static const double buckets[NBUCKETS] = {.001, .0025, .005, .01, .025, .05, .1,
                                         .25,  .5,    1,    2.5, 5,    10};

typedef struct series {
    char *key; /* "verb\x1fresource\x1fcode" */
    char verb[24], resource[128];
    int code;
    unsigned long long count;
} series;

typedef struct hist {
    char *key; /* "verb\x1fresource" */
    char verb[24], resource[128];
    unsigned long long counts[NBUCKETS + 1];
    double sum;
} hist;

struct metrics {
    pthread_mutex_t mu;
    strmap *requests, *latency;
    long watches;
};

metrics *metrics_new(void)
{
    metrics *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    pthread_mutex_init(&m->mu, NULL);
    m->requests = strmap_new();
    m->latency = strmap_new();
    if (!m->requests || !m->latency) {
        metrics_free(m);
        return NULL;
    }
    return m;
}

static void free_map(strmap *map)
{
    if (!map) return;
    void *v;
    for (size_t it = 0; strmap_next(map, &it, NULL, &v);) {
        free(*(char **)v); /* both structs start with their key */
        free(v);
    }
    strmap_free(map);
}

void metrics_free(metrics *m)
{
    if (!m) return;
    free_map(m->requests);
    free_map(m->latency);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void metrics_request(metrics *m, const char *verb, const char *resource, int code, double seconds)
{
    if (!m) return;
    char key[256];
    snprintf(key, sizeof key, "%s\x1f%s\x1f%d", verb, resource, code);
    pthread_mutex_lock(&m->mu);
    series *s = strmap_get(m->requests, key);
    if (!s && (s = calloc(1, sizeof *s))) {
        s->key = strdup(key);
        snprintf(s->verb, sizeof s->verb, "%s", verb);
        snprintf(s->resource, sizeof s->resource, "%s", resource);
        s->code = code;
        if (!s->key || strmap_put(m->requests, s->key, s, NULL) != 0) {
            free(s->key);
            free(s);
            s = NULL;
        }
    }
    if (s) s->count++;
    snprintf(key, sizeof key, "%s\x1f%s", verb, resource);
    hist *h = strmap_get(m->latency, key);
    if (!h && (h = calloc(1, sizeof *h))) {
        h->key = strdup(key);
        snprintf(h->verb, sizeof h->verb, "%s", verb);
        snprintf(h->resource, sizeof h->resource, "%s", resource);
        if (!h->key || strmap_put(m->latency, h->key, h, NULL) != 0) {
            free(h->key);
            free(h);
            h = NULL;
        }
    }
    if (h) {
        for (int i = 0; i < NBUCKETS; i++)
            if (seconds <= buckets[i]) h->counts[i]++;
        h->counts[NBUCKETS]++;
        h->sum += seconds;
    }
    pthread_mutex_unlock(&m->mu);
}

void metrics_watch_delta(metrics *m, int delta)
{
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->watches += delta;
    pthread_mutex_unlock(&m->mu);
}

long metrics_watches(metrics *m)
{
    if (!m) return 0;
    pthread_mutex_lock(&m->mu);
    long n = m->watches;
    pthread_mutex_unlock(&m->mu);
    return n;
}

static void render_requests(metrics *m, dbuf *b)
{
    dbuf_adds(b, "# HELP apiserver_request_total Requests by verb, resource and HTTP code.\n"
                 "# TYPE apiserver_request_total counter\n");
    void *v;
    for (size_t it = 0; strmap_next(m->requests, &it, NULL, &v);) {
        series *s = v;
        dbuf_printf(b, "apiserver_request_total{verb=\"%s\",resource=\"%s\",code=\"%d\"} %llu\n",
                    s->verb, s->resource, s->code, s->count);
    }
    dbuf_adds(b, "# HELP apiserver_request_duration_seconds Request latency.\n"
                 "# TYPE apiserver_request_duration_seconds histogram\n");
    for (size_t it = 0; strmap_next(m->latency, &it, NULL, &v);) {
        hist *h = v;
        for (int i = 0; i < NBUCKETS; i++)
            dbuf_printf(b,
                        "apiserver_request_duration_seconds_bucket{verb=\"%s\",resource=\"%s\","
                        "le=\"%g\"} %llu\n",
                        h->verb, h->resource, buckets[i], h->counts[i]);
        dbuf_printf(b,
                    "apiserver_request_duration_seconds_bucket{verb=\"%s\",resource=\"%s\","
                    "le=\"+Inf\"} %llu\n",
                    h->verb, h->resource, h->counts[NBUCKETS]);
        dbuf_printf(b, "apiserver_request_duration_seconds_sum{verb=\"%s\",resource=\"%s\"} %.6f\n",
                    h->verb, h->resource, h->sum);
        dbuf_printf(b,
                    "apiserver_request_duration_seconds_count{verb=\"%s\",resource=\"%s\"} %llu\n",
                    h->verb, h->resource, h->counts[NBUCKETS]);
    }
}

static void render_store(store *st, dbuf *b)
{
    store_stats ss;
    store_get_stats(st, &ss);
    dbuf_adds(b, "# HELP allot_store_commit_duration_seconds Durable batch commit latency.\n"
                 "# TYPE allot_store_commit_duration_seconds histogram\n");
    for (int i = 0; i < 11; i++)
        dbuf_printf(b, "allot_store_commit_duration_seconds_bucket{le=\"%g\"} %llu\n",
                    store_commit_buckets[i], (unsigned long long)ss.commit_hist[i]);
    dbuf_printf(b, "allot_store_commit_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                (unsigned long long)ss.commit_hist[11]);
    dbuf_printf(b, "allot_store_commit_duration_seconds_sum %.6f\n", ss.commit_seconds_sum);
    dbuf_printf(b, "allot_store_commit_duration_seconds_count %llu\n",
                (unsigned long long)ss.batches);
    dbuf_printf(
        b,
        "# HELP allot_store_batch_size Transactions' writes per durable batch.\n"
        "# TYPE allot_store_batch_size summary\n"
        "allot_store_batch_size_sum %llu\nallot_store_batch_size_count %llu\n"
        "# HELP allot_store_transactions_total Committed transactions.\n"
        "# TYPE allot_store_transactions_total counter\n"
        "allot_store_transactions_total %llu\n"
        "# HELP allot_store_revision Current store revision.\n"
        "# TYPE allot_store_revision gauge\nallot_store_revision %lld\n"
        "# HELP allot_store_derived_writes_total Derived writes committed (quota status).\n"
        "# TYPE allot_store_derived_writes_total counter\n"
        "allot_store_derived_writes_total %llu\n"
        "# HELP allot_store_derived_flushed_total Derived values persisted after coalescing.\n"
        "# TYPE allot_store_derived_flushed_total counter\n"
        "allot_store_derived_flushed_total %llu\n",
        (unsigned long long)ss.batch_ops, (unsigned long long)ss.batches,
        (unsigned long long)ss.commits, (long long)store_revision(st),
        (unsigned long long)ss.derived_writes, (unsigned long long)ss.derived_flushed);
    dbuf_adds(b, "# HELP allot_objects Stored objects by resource.\n# TYPE allot_objects gauge\n");
    char res[256];
    size_t nk = api_kind_count();
    for (size_t i = 0; i < nk; i++) {
        if (!api_kind_primary(api_kind_at(i))) continue; /* one line per resource */
        api_kind_store_resource(api_kind_at(i), res, sizeof res);
        dbuf_printf(b, "allot_objects{resource=\"%s\"} %zu\n", res, store_count(st, res));
    }
}

static void render_quota_values(dbuf *b, const char *ns, const char *name, const char *type,
                                const json_t *list)
{
    const char *res;
    json_t *v;
    json_object_foreach((json_t *)list, res, v)
    {
        qty q;
        if (qty_from_json(v, &q) != 0) continue;
        /* Prometheus wants a float; milli-precision is enough for cpu. */
        dbuf_printf(b,
                    "allot_resourcequota{namespace=\"%s\",resourcequota=\"%s\",resource=\"%s\","
                    "type=\"%s\"} %.3f\n",
                    ns, name, res, type, (double)qty_milli_value(&q) / 1000.0);
    }
}

/* Per-quota hard and used, as kube-state-metrics' kube_resourcequota. */
static void render_quotas(store *st, dbuf *b)
{
    store_obj **objs = NULL;
    size_t n = 0;
    dbuf_printf(b,
                "# HELP allot_quota_drift_corrections_total Recounts that disagreed with the "
                "stored usage (should stay 0).\n"
                "# TYPE allot_quota_drift_corrections_total counter\n"
                "allot_quota_drift_corrections_total %llu\n"
                "# HELP allot_quota_resyncs_total Completed full quota recounts.\n"
                "# TYPE allot_quota_resyncs_total counter\n"
                "allot_quota_resyncs_total %llu\n",
                quota_controller_drift_total(), quota_controller_resyncs_total());
    dbuf_adds(b, "# HELP allot_resourcequota ResourceQuota hard limits and usage.\n"
                 "# TYPE allot_resourcequota gauge\n");
    quota_ledger_stats ls;
    quota_ledger_get_stats(&ls);
    dbuf_printf(b,
                "# HELP allot_quota_ledger_dirty Quotas whose stored status trails the ledger.\n"
                "# TYPE allot_quota_ledger_dirty gauge\n"
                "allot_quota_ledger_dirty %zu\n"
                "# HELP allot_quota_status_versions_total Quota status versions written from the "
                "ledger.\n"
                "# TYPE allot_quota_status_versions_total counter\n"
                "allot_quota_status_versions_total %llu\n",
                ls.dirty, ls.versions);
    quota_ledger_sync(st); /* the values below are then the ledger's */
    if (store_list(st, "resourcequotas/", NULL, 0, &objs, &n, NULL, NULL) != 0) return;
    for (size_t i = 0; i < n; i++) {
        json_t *q = store_obj_parse(objs[i]);
        json_t *status = json_object_get(q, "status");
        render_quota_values(b, objs[i]->ns, objs[i]->name, "hard", json_object_get(status, "hard"));
        render_quota_values(b, objs[i]->ns, objs[i]->name, "used", json_object_get(status, "used"));
        json_decref(q);
        store_obj_unref(objs[i]);
    }
    free(objs);
}

static void render_load(void *arg, const char *kind, const double *le,
                        const unsigned long *cumulative, size_t nle, unsigned long count,
                        double sum)
{
    dbuf *b = arg;
    for (size_t i = 0; i < nle; i++)
        dbuf_printf(b, "allot_recount_duration_seconds_bucket{kind=\"%s\",le=\"%g\"} %lu\n", kind,
                    le[i], cumulative[i]);
    dbuf_printf(b, "allot_recount_duration_seconds_bucket{kind=\"%s\",le=\"+Inf\"} %lu\n", kind,
                count);
    dbuf_printf(b, "allot_recount_duration_seconds_sum{kind=\"%s\"} %.6f\n", kind, sum);
    dbuf_printf(b, "allot_recount_duration_seconds_count{kind=\"%s\"} %lu\n", kind, count);
}

static void render_decision(void *arg, const char *plugin, const char *result, const char *reason,
                            unsigned long n)
{
    dbuf_printf(arg,
                "allot_admission_decisions_total{plugin=\"%s\",result=\"%s\",reason=\"%s\"} "
                "%lu\n",
                plugin, result, reason, n);
}

char *metrics_render(metrics *m, store *st, size_t *len)
{
    dbuf b;
    dbuf_init(&b, (size_t)16 << 20);
    pthread_mutex_lock(&m->mu);
    render_requests(m, &b);
    dbuf_adds(&b, "# HELP allot_admission_decisions_total Writes admitted by every admission "
                  "plugin (result allowed), and refused, by the plugin that refused and the "
                  "Status reason (result denied). Dry runs included.\n"
                  "# TYPE allot_admission_decisions_total counter\n");
    reg_admission_decisions(render_decision, &b);
    dbuf_adds(&b, "# HELP allot_recount_duration_seconds Recounts of a quota-like object's value "
                  "from the store (a custom quota's usage and claims, a pool's allocation, a "
                  "quota's usage), by kind.\n"
                  "# TYPE allot_recount_duration_seconds histogram\n");
    ledger_load_stats(render_load, &b);
    dbuf_printf(&b,
                "# HELP allot_watches Open watch streams.\n# TYPE allot_watches gauge\n"
                "allot_watches %ld\n",
                m->watches);
    pthread_mutex_unlock(&m->mu);
    render_store(st, &b);
    render_quotas(st, &b);
    metrics_render_pools(st, &b);
    metrics_render_custom_quotas(st, &b);
    scheduler_render_metrics(&b);
    return dbuf_take(&b, len);
}
