/* metrics_pools.c - Capsule's pool and claim gauges, read from the stored
 * ResourcePools and ResourcePoolClaims at scrape time (shared spec
 * capsule-pools-and-custom-quotas.md §5).
 *
 * Everything comes from the objects as stored, after the kinds' read hooks
 * serve them (reg_read_views, rendered from the books): a pool's
 * status.allocation.{hard,used,available}, status.exhaustions,
 * status.claims and status.conditions; a claim's spec.claim, spec.pool,
 * status.pool and status.conditions. Nothing is kept between scrapes, so a
 * deleted pool, claim or namespace simply has no series any more (Capsule
 * has to delete series, and its namespace cleanup matches a label the
 * series do not have, §1.8: there is nothing of that here).
 *
 * Values are quantities as floats (MilliValue()/1000); conditions are 1
 * (True) or 0, and a condition the object does not have has no series.
 * The exposition text groups the samples of a family, so samples are
 * collected per family while the objects are walked once, and each line is
 * built whole in a scratch buffer before it is appended: a failed
 * allocation drops that series, never half a line (metrics_util.h has
 * what the scrape-time families share). */
#include "server/metrics_pools.h"

#include "api/kinds.h"
#include "api/pool_kinds.h"
#include "core/quantity.h"
#include "registry/registry.h"
#include "server/metrics_util.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    POOL_RESOURCE,
    POOL_LIMIT,
    POOL_USAGE,
    POOL_AVAILABLE,
    POOL_USAGE_PCT,
    POOL_EXHAUSTION,
    POOL_EXHAUSTION_PCT,
    POOL_NS_USAGE,
    POOL_NS_USAGE_PCT,
    POOL_CONDITION,
    CLAIM_CONDITION,
    CLAIM_RESOURCE,
    CLAIM_POOL,
    NFAMILIES
};

_Static_assert(NFAMILIES <= METRICS_FAMILIES_MAX, "metrics_scrape holds the families");

static const metrics_family families[NFAMILIES] = {
    [POOL_RESOURCE] = {"capsule_pool_resource",
                       "1 for each resource in a ResourcePool's status.allocation.hard."},
    [POOL_LIMIT] = {"capsule_pool_limit", "Hard amount of a resource in a ResourcePool."},
    [POOL_USAGE] = {"capsule_pool_usage",
                    "Amount of a resource held by the claims bound to a ResourcePool."},
    [POOL_AVAILABLE] = {"capsule_pool_available",
                        "Amount of a resource a ResourcePool can still give to claims."},
    [POOL_USAGE_PCT] = {"capsule_pool_usage_percentage",
                        "Claimed amount of a resource in percent of the ResourcePool's hard "
                        "(0 when hard is 0)."},
    [POOL_EXHAUSTION] = {"capsule_pool_exhaustion",
                         "Amount of a resource requested by the claims that wait on a "
                         "ResourcePool (exhausted)."},
    [POOL_EXHAUSTION_PCT] = {"capsule_pool_exhaustion_percentage",
                             "By how much the waiting claims' requests exceed what the "
                             "ResourcePool has available, in percent of available (only when "
                             "available > 0 and requesting > available)."},
    [POOL_NS_USAGE] = {"capsule_pool_namespace_usage",
                       "Amount of a resource held by the claims of one namespace bound to a "
                       "ResourcePool."},
    [POOL_NS_USAGE_PCT] = {"capsule_pool_namespace_usage_percentage",
                           "Amount of a resource held by one namespace's bound claims in percent "
                           "of the ResourcePool's hard (0 when hard is 0)."},
    [POOL_CONDITION] = {"capsule_pool_condition",
                        "A ResourcePool condition (Ready, Exhausted): 1 when True, else 0."},
    [CLAIM_CONDITION] = {"capsule_claim_condition",
                         "A ResourcePoolClaim condition (Ready, Exhausted, Bound): 1 when True, "
                         "else 0."},
    [CLAIM_RESOURCE] = {"capsule_claim_resource",
                        "Amount of a resource a ResourcePoolClaim asks for (spec.claim)."},
    [CLAIM_POOL] = {"capsule_claim_pool",
                    "1 for the ResourcePool of a ResourcePoolClaim (status.pool.name, else "
                    "spec.pool)."},
};

/* ---- pools ---- */

/* limit, usage, available and usage percentage of every hard resource. */
static void pool_resources(metrics_scrape *sc, const char *pool, json_t *alloc)
{
    json_t *used = json_object_get(alloc, "used"), *avail = json_object_get(alloc, "available");
    const char *res;
    json_t *hv;
    json_object_foreach(json_object_get(alloc, "hard"), res, hv)
    {
        int64_t h, u = 0, a;
        if (metrics_milli_of(hv, &h) != 0) continue;
        const char *l[] = {"pool", pool, "resource", res, NULL};
        metrics_sample(sc, POOL_RESOURCE, l, 1);
        metrics_sample(sc, POOL_LIMIT, l, metrics_float(h));
        json_t *uv = json_object_get(used, res); /* absent: nothing claimed */
        if (uv && metrics_milli_of(uv, &u) != 0) continue;
        if (metrics_milli_of(json_object_get(avail, res), &a) != 0) a = h > u ? h - u : 0;
        metrics_sample(sc, POOL_USAGE, l, metrics_float(u));
        metrics_sample(sc, POOL_AVAILABLE, l, metrics_float(a));
        metrics_sample(sc, POOL_USAGE_PCT, l, metrics_percent(u, h));
    }
}

/* status.exhaustions: what the waiting claims request, and by how much that
 * exceeds what is available. */
static void pool_exhaustions(metrics_scrape *sc, const char *pool, json_t *exhaustions)
{
    const char *res;
    json_t *ex;
    json_object_foreach(exhaustions, res, ex)
    {
        int64_t req, avail;
        if (metrics_milli_of(json_object_get(ex, "requesting"), &req) != 0) continue;
        const char *l[] = {"pool", pool, "resource", res, NULL};
        metrics_sample(sc, POOL_EXHAUSTION, l, metrics_float(req));
        if (metrics_milli_of(json_object_get(ex, "available"), &avail) == 0 && avail > 0 &&
            req > avail)
            metrics_sample(sc, POOL_EXHAUSTION_PCT, l,
                           (double)(req - avail) / (double)avail * 100.0);
    }
}

/* Per-resource sums of one namespace's bound claims, summed exactly. */
typedef struct res_sum {
    const char *res; /* borrowed from the pool's JSON */
    qty sum;
    bool bad; /* the sum overflowed: no series */
} res_sum;

typedef struct sums {
    res_sum *v;
    size_t n, cap;
} sums;

static int sums_add(sums *s, const char *res, const qty *q)
{
    for (size_t i = 0; i < s->n; i++) {
        if (strcmp(s->v[i].res, res)) continue;
        if (!s->v[i].bad && qty_add(&s->v[i].sum, q) != 0) s->v[i].bad = true;
        return 0;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        res_sum *v = realloc(s->v, cap * sizeof *v);
        if (!v) return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (res_sum){.res = res, .sum = *q};
    return 0;
}

/* Sum status.claims[ns][*].claims per resource; -1 on a failed allocation. */
static int sum_namespace(json_t *list, sums *s)
{
    size_t i;
    json_t *claim;
    json_array_foreach(list, i, claim)
    {
        const char *res;
        json_t *v;
        json_object_foreach(json_object_get(claim, "claims"), res, v)
        {
            qty q;
            if (qty_from_json(v, &q) == 0 && sums_add(s, res, &q) != 0) return -1;
        }
    }
    return 0;
}

/* Usage of one namespace, and its percentage of hard for hard resources. */
static void pool_namespace(metrics_scrape *sc, const char *pool, const char *ns, json_t *list,
                           json_t *hard)
{
    sums s = {0};
    if (sum_namespace(list, &s) == 0) {
        for (size_t i = 0; i < s.n; i++) {
            if (s.v[i].bad) continue;
            const char *l[] = {"pool", pool, "target_namespace", ns, "resource", s.v[i].res, NULL};
            int64_t u = qty_milli_value(&s.v[i].sum), h;
            metrics_sample(sc, POOL_NS_USAGE, l, metrics_float(u));
            if (metrics_milli_of(json_object_get(hard, s.v[i].res), &h) == 0)
                metrics_sample(sc, POOL_NS_USAGE_PCT, l, metrics_percent(u, h));
        }
    }
    free(s.v);
}

static void render_pool(metrics_scrape *sc, const store_obj *o, json_t *pool)
{
    static const char *const types[] = {"Ready", "Exhausted"};
    json_t *status = json_object_get(pool, "status");
    json_t *alloc = json_object_get(status, "allocation");
    pool_resources(sc, o->name, alloc);
    pool_exhaustions(sc, o->name, json_object_get(status, "exhaustions"));
    const char *ns;
    json_t *list;
    json_object_foreach(json_object_get(status, "claims"), ns, list)
        pool_namespace(sc, o->name, ns, list, json_object_get(alloc, "hard"));
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        int v = metrics_condition(status, types[i]);
        const char *l[] = {"pool", o->name, "condition", types[i], NULL};
        if (v >= 0) metrics_sample(sc, POOL_CONDITION, l, v);
    }
}

/* ---- claims ---- */

/* Capsule's GetPool(): status.pool.name, else spec.pool. */
static const char *claim_pool(const json_t *claim)
{
    const char *p =
        metrics_str_at(json_object_get(json_object_get(claim, "status"), "pool"), "name");
    if (p && *p) return p;
    p = metrics_str_at(json_object_get(claim, "spec"), "pool");
    return p ? p : "";
}

static void render_claim(metrics_scrape *sc, const store_obj *o, json_t *claim)
{
    static const char *const types[] = {"Ready", "Exhausted", "Bound"};
    json_t *status = json_object_get(claim, "status");
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        int v = metrics_condition(status, types[i]);
        const char *l[] = {"name", o->name, "target_namespace", o->ns, "condition", types[i], NULL};
        if (v >= 0) metrics_sample(sc, CLAIM_CONDITION, l, v);
    }
    const char *res;
    json_t *qv;
    json_object_foreach(json_object_get(json_object_get(claim, "spec"), "claim"), res, qv)
    {
        int64_t m;
        const char *l[] = {"name", o->name, "target_namespace", o->ns, "resource", res, NULL};
        if (metrics_milli_of(qv, &m) == 0) metrics_sample(sc, CLAIM_RESOURCE, l, metrics_float(m));
    }
    const char *l[] = {"name", o->name, "target_namespace", o->ns, "pool", claim_pool(claim), NULL};
    metrics_sample(sc, CLAIM_POOL, l, 1);
}

void metrics_render_pools(store *st, dbuf *b)
{
    const api_kind *pools = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepools");
    const api_kind *claims = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepoolclaims");
    /* pool status may trail its ledger, claims' Bound their quota's usage */
    metrics_scrape sc;
    metrics_scrape_init(&sc, families, NFAMILIES);
    metrics_for_each(st, &sc, pools, render_pool);
    metrics_for_each(st, &sc, claims, render_claim);
    metrics_scrape_write(&sc, b);
    metrics_scrape_free(&sc);
}
