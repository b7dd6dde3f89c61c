/* metrics_custom_quotas.c - Capsule's CustomQuota and GlobalCustomQuota
 * gauges, read from the stored quotas at scrape time (shared spec
 * capsule-pools-and-custom-quotas.md §5; Capsule's customquota_recorder.go
 * and global_customquota_recorder.go).
 *
 * Everything comes from the quotas as stored, after the kinds' read hook
 * serves them (reg_read_views: statuses rendered from the books): spec.limit,
 * spec.options.emitMetricPerClaimUsage, status.usage.{used,available},
 * status.claims and status.conditions. Nothing is kept between scrapes, so
 * a deleted quota, or a claim that went, has no series any more.
 *
 * A CustomQuota's series carry custom_quota and target_namespace (the
 * quota's namespace); a GlobalCustomQuota's carry custom_quota only, except
 * its per-claim series, whose target_namespace is the claim's namespace
 * ("" for a cluster-scoped object), as Capsule's. Values are quantities as
 * floats (MilliValue()/1000); the usage percentage is used/limit*100, 0
 * when the limit is not positive; the Ready condition is 1 (True) or 0, and
 * no series when the quota has none. status.usage.used absent reads 0 (Go's
 * zero Quantity); available absent is max(limit - used, 0). A quantity that
 * does not parse drops the series that need it.
 *
 * Labels are written sorted by name, as Capsule's (client_golang sorts a
 * series' label pairs), so a scrape reads as seed 003 prints it:
 * `capsule_global_custom_quota_condition{condition="Ready",custom_quota="cpu-limits"} 1`.
 *
 * The Ready series is 0 while the quota is not Ready, whatever the reason
 * (it cannot count, or it cannot read some objects: registry/cq_books.c).
 *
 * Per-claim series (emitMetricPerClaimUsage: true) are one per label set.
 * The books key claims by uid and only allot writes the status, so two
 * claims should never share one; should they, the last one's value is the
 * series' (as Capsule's Set() in claim order leaves it) rather than a
 * duplicate sample, which would make Prometheus refuse the whole scrape.
 */
#include "server/metrics_custom_quotas.h"

#include "api/kinds.h"
#include "registry/registry.h"
#include "server/metrics_util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GROUP "capsule.clastix.io"
#define VERSION "v1beta2"

/* The CustomQuota families, then the GlobalCustomQuota ones in the same
 * order (GLOBAL + f), as Capsule's recorders list them. */
enum {
    CQ_CONDITION,
    CQ_USAGE,
    CQ_USAGE_PCT,
    CQ_LIMIT,
    CQ_AVAILABLE,
    CQ_ITEM_USAGE,
    GLOBAL,
    NFAMILIES = 2 * GLOBAL
};

_Static_assert(NFAMILIES <= METRICS_FAMILIES_MAX, "metrics_scrape holds the families");

static const metrics_family families[NFAMILIES] = {
    [CQ_CONDITION] = {"capsule_custom_quota_condition",
                      "A CustomQuota condition (Ready): 1 when True, else 0."},
    [CQ_USAGE] = {"capsule_custom_quota_resource_usage",
                  "Usage counted by a CustomQuota (status.usage.used)."},
    [CQ_USAGE_PCT] = {"capsule_custom_quota_resource_usage_percentage",
                      "Usage counted by a CustomQuota in percent of its limit (0 when the "
                      "limit is not positive)."},
    [CQ_LIMIT] = {"capsule_custom_quota_resource_limit", "Limit of a CustomQuota (spec.limit)."},
    [CQ_AVAILABLE] = {"capsule_custom_quota_resource_available",
                      "What a CustomQuota can still admit (status.usage.available)."},
    [CQ_ITEM_USAGE] = {"capsule_custom_quota_resource_item_usage",
                       "Usage of one object counted by a CustomQuota (status.claims; only with "
                       "spec.options.emitMetricPerClaimUsage)."},
    [GLOBAL + CQ_CONDITION] = {"capsule_global_custom_quota_condition",
                               "A GlobalCustomQuota condition (Ready): 1 when True, else 0."},
    [GLOBAL + CQ_USAGE] = {"capsule_global_custom_quota_resource_usage",
                           "Usage counted by a GlobalCustomQuota (status.usage.used)."},
    [GLOBAL + CQ_USAGE_PCT] = {"capsule_global_custom_quota_resource_usage_percentage",
                               "Usage counted by a GlobalCustomQuota in percent of its limit (0 "
                               "when the limit is not positive)."},
    [GLOBAL + CQ_LIMIT] = {"capsule_global_custom_quota_resource_limit",
                           "Limit of a GlobalCustomQuota (spec.limit)."},
    [GLOBAL + CQ_AVAILABLE] = {"capsule_global_custom_quota_resource_available",
                               "What a GlobalCustomQuota can still admit "
                               "(status.usage.available)."},
    [GLOBAL + CQ_ITEM_USAGE] = {"capsule_global_custom_quota_resource_item_usage",
                                "Usage of one object counted by a GlobalCustomQuota "
                                "(status.claims; only with "
                                "spec.options.emitMetricPerClaimUsage)."},
};

/* ---- per-claim series ---- */

typedef struct item {
    const char *name, *kind, *group, *ns; /* borrowed from the quota's JSON */
    const json_t *usage;
    size_t index; /* in status.claims */
} item;

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* By label set, then by position in status.claims. */
static int item_cmp(const void *a, const void *b)
{
    const item *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (!c) c = strcmp(x->kind, y->kind);
    if (!c) c = strcmp(x->group, y->group);
    if (!c) c = strcmp(x->ns, y->ns);
    if (!c) c = (x->index > y->index) - (x->index < y->index);
    return c;
}

static bool same_labels(const item *x, const item *y)
{
    return !strcmp(x->name, y->name) && !strcmp(x->kind, y->kind) && !strcmp(x->group, y->group) &&
           !strcmp(x->ns, y->ns);
}

/* One series per claim label set (the last claim's value); a failed
 * allocation drops this quota's per-claim series. */
static void render_items(metrics_scrape *sc, bool global, const char *quota, const char *ns,
                         const json_t *claims)
{
    size_t n = json_array_size(claims);
    item *v = n ? malloc(n * sizeof *v) : NULL;
    if (!v) return;
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(claims, i);
        v[i] = (item){or_empty(metrics_str_at(c, "name")), or_empty(metrics_str_at(c, "kind")),
                      or_empty(metrics_str_at(c, "group")),
                      /* a CustomQuota's label is its own namespace */
                      global ? or_empty(metrics_str_at(c, "namespace")) : ns,
                      json_object_get(c, "usage"), i};
    }
    qsort(v, n, sizeof *v, item_cmp);
    for (size_t i = 0; i < n; i++) {
        int64_t m;
        if (i + 1 < n && same_labels(&v[i], &v[i + 1])) continue; /* a later one wins */
        if (metrics_milli_of(v[i].usage, &m) != 0) continue;
        /* (sorted by label name; a CustomQuota's target_namespace is its own) */
        const char *l[] = {
            "custom_quota",     quota,   "group", v[i].group, "kind", v[i].kind, "name", v[i].name,
            "target_namespace", v[i].ns, NULL};
        metrics_sample(sc, (global ? GLOBAL : 0) + CQ_ITEM_USAGE, l, metrics_float(m));
    }
    free(v);
}

/* ---- quotas ---- */

/* Every series of one quota (a GlobalCustomQuota's when global; ns is then
 * unused but by the per-claim series, which take the claim's). */
static void render_quota(metrics_scrape *sc, bool global, const char *quota, const char *ns,
                         json_t *obj)
{
    const int base = global ? GLOBAL : 0;
    const char *l[] = {"custom_quota", quota, global ? NULL : "target_namespace", ns, NULL};
    json_t *spec = json_object_get(obj, "spec"), *status = json_object_get(obj, "status");

    int ready = metrics_condition(status, "Ready");
    if (ready >= 0) {
        const char *lc[] = {"condition", "Ready", "custom_quota", quota, "target_namespace",
                            ns,          NULL};
        const char *gc[] = {"condition", "Ready", "custom_quota", quota, NULL};
        metrics_sample(sc, base + CQ_CONDITION, global ? gc : lc, ready);
    }

    json_t *usage = json_object_get(status, "usage");
    json_t *uv = json_object_get(usage, "used");
    int64_t used = 0, limit, avail;
    bool has_used = !uv || metrics_milli_of(uv, &used) == 0; /* absent: 0 */
    bool has_limit = metrics_milli_of(json_object_get(spec, "limit"), &limit) == 0;
    bool has_avail = metrics_milli_of(json_object_get(usage, "available"), &avail) == 0;
    if (!has_avail && !json_object_get(usage, "available") && has_used && has_limit) {
        avail = limit > used ? limit - used : 0;
        has_avail = true;
    }
    if (has_used) metrics_sample(sc, base + CQ_USAGE, l, metrics_float(used));
    if (has_used && has_limit)
        metrics_sample(sc, base + CQ_USAGE_PCT, l, metrics_percent(used, limit));
    if (has_limit) metrics_sample(sc, base + CQ_LIMIT, l, metrics_float(limit));
    if (has_avail) metrics_sample(sc, base + CQ_AVAILABLE, l, metrics_float(avail));

    json_t *options = json_object_get(spec, "options");
    if (json_is_true(json_object_get(options, "emitMetricPerClaimUsage")))
        render_items(sc, global, quota, ns, json_object_get(status, "claims"));
}

static void render_cq(metrics_scrape *sc, const store_obj *o, json_t *obj)
{
    render_quota(sc, false, o->name, o->ns, obj);
}

static void render_gcq(metrics_scrape *sc, const store_obj *o, json_t *obj)
{
    render_quota(sc, true, o->name, "", obj);
}

void metrics_render_custom_quotas(store *st, dbuf *b)
{
    const api_kind *cqs = api_kind_find(GROUP, VERSION, "customquotas");
    const api_kind *gcqs = api_kind_find(GROUP, VERSION, "globalcustomquotas");
    /* statuses are written behind the books: bring them up to date */
    metrics_scrape sc;
    metrics_scrape_init(&sc, families, NFAMILIES);
    metrics_for_each(st, &sc, cqs, render_cq);
    metrics_for_each(st, &sc, gcqs, render_gcq);
    metrics_scrape_write(&sc, b);
    metrics_scrape_free(&sc);
}
