/* quota_check.c - upstream's CheckRequest, step by step in upstream's order
 * (spec §4.3): limited scopes, limited names, pertinent quotas (constraints,
 * usage stats), object usage and UPDATE delta, coverage checks, then the charge
 * against each pertinent quota. Message texts live in the MSG_* table below.
 */
#include "core/quota_check.h"

#include "core/deferred.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upstream's texts (admission/plugin/resourcequota/controller.go). */
#define MSG_SCOPE_ERR "error matching scopes of quota %s, err: %s"
#define MSG_CONSTRAINT "failed quota: %s: %s"
#define MSG_STATUS_UNKNOWN "status unknown for quota: %s, resources: %s"
#define MSG_NEGATIVE "quota usage is negative for resource(s): %s"
#define MSG_NO_PREVIOUS "unable to get previous usage since prior version of object was not found"
#define MSG_NOT_COVERED "insufficient quota to consume: %s"
#define MSG_SCOPES_NOT_COVERED "insufficient quota to match these scopes: %s"
#define MSG_EXCEEDED "exceeded quota: %s, requested: %s, used: %s, limited: %s"

#define ERRLEN 1024

typedef struct qinfo {
    const json_t *spec;
    const char *name;
    const rlist *hard, *used; /* borrowed from a view, or own_* */
    rlist *own_hard, *own_used, *delta;
    bool interesting;
} qinfo;

struct quota_prepared {
    json_t *json; /* a reference */
    const char *name;
    rlist *hard;
};

typedef struct ctx {
    const quota_request *rq;
    quota_result *res;
    const quota_view *views; /* quota_check_views; NULL: rq->quotas */
    size_t n;
    qinfo *qs;
    json_t *limited_scopes, *restricted_scopes;
    rlist *limited_names, *covered, *usage, *prev;
} ctx;

enum { DONE = 1 }; /* a step decided the request (allowed or denied) */

static const json_t *jget(const json_t *o, const char *a, const char *b)
{
    o = json_is_object(o) ? json_object_get(o, a) : NULL;
    return b && json_is_object(o) ? json_object_get(o, b) : (b ? NULL : o);
}

static const char *jstr(const json_t *o, const char *a, const char *b)
{
    const char *s = json_string_value(jget(o, a, b));
    return s ? s : "";
}

static bool streq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Record a denial (or, for QUOTA_EINVAL, an error description). Returns DONE. */
static int deny(ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int deny(ctx *c, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(c->res->message);
    if (vasprintf(&c->res->message, fmt, ap) < 0) c->res->message = NULL;
    va_end(ap);
    c->res->allowed = false;
    c->res->code = code;
    return c->res->message ? DONE : QUOTA_ENOMEM;
}

/* Render an rlist with rl_format or rl_format_names into a malloc'd string. */
static char *render(const rlist *l, bool names_only)
{
    dbuf b;
    dbuf_init(&b, 1 << 20);
    int rc = names_only ? rl_format_names(l, ",", &b) : rl_format(l, &b);
    if (rc || dbuf_adds(&b, "")) {
        dbuf_free(&b);
        return NULL;
    }
    return b.p ? dbuf_take(&b, NULL) : strdup("");
}

/* ---- setup ----------------------------------------------------------------------------------- */

static int load_quota(ctx *c, size_t i)
{
    qinfo *qi = &c->qs[i];
    if (c->views) {
        const quota_prepared *p = c->views[i].prep;
        qi->spec = jget(p->json, "spec", NULL);
        qi->name = p->name;
        qi->hard = p->hard;
        qi->used = c->views[i].used;
        return 0;
    }
    const json_t *q = json_array_get(c->rq->quotas, i);
    const char *bad = "";
    qi->spec = jget(q, "spec", NULL);
    qi->name = jstr(q, "metadata", "name");
    qi->hard = qi->own_hard = rl_new();
    qi->used = qi->own_used = rl_new();
    if (!qi->own_hard || !qi->own_used) return QUOTA_ENOMEM;
    int rc = rl_from_json(jget(q, "status", "hard"), qi->own_hard, &bad);
    if (!rc) rc = rl_from_json(jget(q, "status", "used"), qi->own_used, &bad);
    if (rc == RL_ENOMEM) return QUOTA_ENOMEM;
    if (rc) {
        deny(c, 500, "quota %s: invalid quantity in status for %s", qi->name, bad);
        return QUOTA_EINVAL;
    }
    return 0;
}

static int setup(ctx *c)
{
    size_t slots = c->n ? c->n : 1;
    c->qs = calloc(slots, sizeof(qinfo));
    if (c->views)
        c->res->next = calloc(slots, sizeof(rlist *));
    else
        c->res->used = calloc(slots, sizeof(json_t *));
    c->res->nquotas = c->n;
    c->limited_scopes = json_array();
    c->restricted_scopes = json_array();
    c->limited_names = rl_new();
    c->covered = rl_new();
    c->usage = rl_new();
    if (!c->qs || (!c->res->used && !c->res->next) || !c->limited_scopes || !c->restricted_scopes ||
        !c->limited_names || !c->covered || !c->usage)
        return QUOTA_ENOMEM;
    for (size_t i = 0; i < c->n; i++) {
        int rc = load_quota(c, i);
        if (rc) return rc;
    }
    return 0;
}

static void teardown(ctx *c)
{
    for (size_t i = 0; c->qs && i < c->n; i++) {
        rl_free(c->qs[i].own_hard);
        rl_free(c->qs[i].own_used);
        rl_free(c->qs[i].delta);
    }
    free(c->qs);
    json_decref(c->limited_scopes);
    json_decref(c->restricted_scopes);
    rl_free(c->limited_names);
    rl_free(c->covered);
    rl_free(c->usage);
    rl_free(c->prev);
}

/* ---- limitedResources (§4.6) ----------------------------------------------------------------- */

/* getMatchedLimitedScopes. Upstream lets the request through unchecked when a
 * configured scope fails to evaluate, so an error here allows (DONE). */
static int match_limited_scopes(ctx *c)
{
    const quota_request *rq = c->rq;
    size_t i;
    const json_t *lr;
    char err[ERRLEN];
    json_array_foreach(rq->limited, i, lr)
    {
        if (quota_matching_scopes(rq->group, rq->resource, rq->obj, jget(lr, "matchScopes", NULL),
                                  c->limited_scopes, err, sizeof err))
            return DONE;
    }
    return 0;
}

static bool contains_any(const char *name, const json_t *subs)
{
    size_t i;
    const json_t *s;
    json_array_foreach(subs, i, s)
    {
        if (json_is_string(s) && strstr(name, json_string_value(s))) return true;
    }
    return false;
}

/* limitedByDefault over the entries for this group/resource: consumed (> 0)
 * usage names containing one of the matchContains substrings. */
static int limited_names(ctx *c)
{
    const quota_request *rq = c->rq;
    rlist *u = NULL;
    int rc = 0;
    size_t i;
    const json_t *lr;
    json_array_foreach(rq->limited, i, lr)
    {
        if (rc || !streq(jstr(lr, "apiGroup", NULL), rq->group) ||
            !streq(jstr(lr, "resource", NULL), rq->resource))
            continue;
        if (!u && !(u = rl_new())) return QUOTA_ENOMEM;
        if (rl_len(u) == 0) rc = quota_usage(rq->group, rq->resource, rq->obj, rq->now, u);
        for (size_t k = 0; !rc && k < rl_len(u); k++) {
            if (qty_sign(rl_qty(u, k)) > 0 &&
                contains_any(rl_name(u, k), jget(lr, "matchContains", NULL)))
                rc = rl_add_name(c->limited_names, rl_name(u, k)) ? QUOTA_ENOMEM : 0;
        }
    }
    rl_free(u);
    return rc;
}

/* ---- pertinent quotas ------------------------------------------------------------------------ */

/* hasUsageStats: every hard key the evaluator owns has a used value. */
static bool has_usage_stats(const qinfo *qi, const rlist *restricted)
{
    for (size_t k = 0; k < rl_len(qi->hard); k++) {
        const char *name = rl_name(qi->hard, k);
        if (rl_has(restricted, name) && !rl_has(qi->used, name)) return false;
    }
    return true;
}

/* After a quota matched: constraints, usage stats, then it is interesting. */
static int admit_quota(ctx *c, qinfo *qi, const rlist *restricted)
{
    const quota_request *rq = c->rq;
    char err[ERRLEN];
    int rc = quota_constraints(rq->group, rq->resource, restricted, rq->obj, err, sizeof err);
    if (rc < 0) return rc;
    if (rc) return deny(c, 403, MSG_CONSTRAINT, qi->name, err);
    if (!has_usage_stats(qi, restricted)) {
        char *names = render(restricted, true);
        rc = names ? deny(c, 403, MSG_STATUS_UNKNOWN, qi->name, names) : QUOTA_ENOMEM;
        free(names);
        return rc;
    }
    qi->interesting = true;
    return rl_add_to(c->covered, restricted) ? QUOTA_ENOMEM : 0;
}

static int scan_quota(ctx *c, qinfo *qi)
{
    const quota_request *rq = c->rq;
    char err[ERRLEN];
    json_t *sels = quota_scope_selectors(qi->spec);
    if (!sels) return QUOTA_ENOMEM;
    int rc = quota_matching_scopes(rq->group, rq->resource, rq->obj, sels, c->restricted_scopes,
                                   err, sizeof err);
    json_decref(sels);
    if (rc == QUOTA_ENOMEM) return rc;
    if (rc) return deny(c, 500, MSG_SCOPE_ERR, qi->name, err);
    int m = quota_matches(qi->spec, qi->hard, rq->group, rq->resource, rq->obj, err, sizeof err);
    if (m < 0) return deny(c, 500, "%s", err);
    if (!m) return 0;
    rlist *restricted = rl_new();
    rc = restricted ? quota_matching_resources(rq->group, rq->resource, qi->hard, restricted)
                    : QUOTA_ENOMEM;
    if (!rc) rc = admit_quota(c, qi, restricted);
    rl_free(restricted);
    return rc;
}

/* ---- usage and delta ------------------------------------------------------------------------- */

static int object_usage(ctx *c)
{
    const quota_request *rq = c->rq;
    int rc = quota_usage(rq->group, rq->resource, rq->obj, rq->now, c->usage);
    if (rc) return rc;
    if (rq->deferred) quota_deferred_mask(rq->group, rq->resource, rq->obj, c->usage);
    rlist *neg = rl_is_negative(c->usage);
    char *names = neg ? render(neg, true) : NULL;
    if (names && rl_len(neg)) rc = deny(c, 403, MSG_NEGATIVE, names);
    if (!names) rc = QUOTA_ENOMEM;
    free(names);
    rl_free(neg);
    return rc;
}

/* UPDATE: the usage of the stored object, when its state is known (it has a
 * resourceVersion; an empty one is a create-on-update, charged in full). */
static int previous_usage(ctx *c)
{
    const quota_request *rq = c->rq;
    if (rq->op != QUOTA_UPDATE) return 0;
    if (!rq->old) return deny(c, 403, MSG_NO_PREVIOUS);
    if (!*jstr(rq->old, "metadata", "resourceVersion")) return 0;
    if (!(c->prev = rl_new())) return QUOTA_ENOMEM;
    int rc = quota_usage(rq->group, rq->resource, rq->old, rq->now, c->prev);
    if (!rc && rq->deferred) quota_deferred_mask(rq->group, rq->resource, rq->old, c->prev);
    return rc;
}

/* The non-zero part of `usage`, minus the previous usage (never below 0) when
 * `sub_prev`. */
static rlist *delta_of(ctx *c, bool sub_prev)
{
    rlist *d = sub_prev ? rl_subtract_nonneg(c->usage, c->prev) : rl_copy(c->usage);
    rlist *nz = d ? rl_remove_zeros(d) : NULL;
    rl_free(d);
    return nz;
}

/* Per quota: the old object's usage is subtracted only for quotas that also
 * matched the old object; a quota the object newly falls into gets it all.
 * Returns DONE (allowed, nothing to charge) when every delta is empty. */
static int compute_deltas(ctx *c)
{
    const quota_request *rq = c->rq;
    char err[ERRLEN];
    bool any = false, interesting = false;
    for (size_t i = 0; i < c->n; i++) {
        qinfo *qi = &c->qs[i];
        if (!qi->interesting) continue;
        int m = 0;
        if (c->prev)
            m = quota_matches(qi->spec, qi->hard, rq->group, rq->resource, rq->old, err,
                              sizeof err);
        if (m < 0) return deny(c, 500, "%s", err);
        if (!(qi->delta = delta_of(c, m > 0))) return QUOTA_ENOMEM;
        any |= rl_len(qi->delta) > 0;
        interesting = true;
    }
    if (!interesting) {
        rlist *d = delta_of(c, c->prev != NULL);
        if (!d) return QUOTA_ENOMEM;
        any = rl_len(d) > 0;
        rl_free(d);
    }
    return any ? 0 : DONE;
}

/* ---- coverage and charge --------------------------------------------------------------------- */

static int check_coverage(ctx *c)
{
    rlist *uncovered = rl_copy(c->limited_names);
    if (!uncovered) return QUOTA_ENOMEM;
    for (size_t i = 0; i < rl_len(c->covered); i++)
        rl_del(uncovered, rl_name(c->covered, i));
    int rc = 0;
    if (rl_len(uncovered)) {
        char *names = render(uncovered, true);
        rc = names ? deny(c, 403, MSG_NOT_COVERED, names) : QUOTA_ENOMEM;
        free(names);
    }
    rl_free(uncovered);
    return rc;
}

/* UncoveredQuotaScopes: limited scopes whose scopeName no quota's scopes matched. */
static int check_scope_coverage(ctx *c)
{
    json_t *unc = json_array();
    size_t i, j;
    const json_t *ls, *rs;
    if (!unc) return QUOTA_ENOMEM;
    json_array_foreach(c->limited_scopes, i, ls)
    {
        bool covered = false;
        json_array_foreach(c->restricted_scopes, j, rs)
        {
            covered |= streq(jstr(ls, "scopeName", NULL), jstr(rs, "scopeName", NULL));
        }
        if (!covered && json_array_append(unc, (json_t *)ls)) break;
    }
    int rc = 0;
    if (json_array_size(unc)) {
        dbuf b;
        dbuf_init(&b, 1 << 20);
        rc = quota_format_scopes(unc, &b) || dbuf_adds(&b, "")
                 ? QUOTA_ENOMEM
                 : deny(c, 500, MSG_SCOPES_NOT_COVERED, b.p);
        dbuf_free(&b);
    }
    json_decref(unc);
    return rc;
}

static int exceeded(ctx *c, const qinfo *qi, const rlist *requested, const rlist *over)
{
    rlist *r = rl_mask(requested, over), *u = rl_mask(qi->used, over), *h = rl_mask(qi->hard, over);
    char *rs = r ? render(r, false) : NULL, *us = u ? render(u, false) : NULL;
    char *hs = h ? render(h, false) : NULL;
    int rc = rs && us && hs ? deny(c, 403, MSG_EXCEEDED, qi->name, rs, us, hs) : QUOTA_ENOMEM;
    free(rs);
    free(us);
    free(hs);
    rl_free(r);
    rl_free(u);
    rl_free(h);
    return rc;
}

/* requested = delta masked to hard; new used = used + requested; only the
 * requested keys are compared with hard (an unrelated key already over its hard
 * does not block). `status` subresource requests update usage unchecked. */
static int charge(ctx *c, size_t i)
{
    qinfo *qi = &c->qs[i];
    rlist *req = rl_mask(qi->delta, qi->hard);
    rlist *nu = req ? rl_add(qi->used, req) : NULL;
    rlist *masked = nu ? rl_mask(nu, req) : NULL;
    rlist *over = masked ? rl_less_than_or_equal(masked, qi->hard) : NULL;
    int rc = over ? 0 : QUOTA_ENOMEM;
    bool check = !streq(c->rq->subresource, "status");
    if (!rc && check && rl_len(over)) rc = exceeded(c, qi, req, over);
    if (!rc && !rl_equal(nu, qi->used)) {
        if (c->res->next) {
            c->res->next[i] = nu;
            nu = NULL;
        } else if (!(c->res->used[i] = rl_to_json(nu))) {
            rc = QUOTA_ENOMEM;
        }
    }
    rl_free(req);
    rl_free(nu);
    rl_free(masked);
    rl_free(over);
    return rc;
}

static int charge_all(ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        if (!c->qs[i].interesting || rl_len(c->qs[i].delta) == 0) continue;
        int rc = charge(c, i);
        if (rc) return rc;
    }
    return 0;
}

/* ---- entry ----------------------------------------------------------------------------------- */

static bool fast_allow(const quota_request *rq, size_t nquotas)
{
    if (!rq->namespace_ || !*rq->namespace_) return true;
    if (rq->op != QUOTA_CREATE && rq->op != QUOTA_UPDATE) return true;
    if (quota_ignored_resource(rq->group, rq->resource)) return true;
    if (nquotas == 0 && json_array_size(rq->limited) == 0) return true;
    return !quota_handles(rq->group, rq->resource, rq->op, rq->subresource, rq->obj, rq->old);
}

/* CheckRequest's steps in upstream order; each returns 0 to go on, DONE when
 * it decided, or a QUOTA_* error. */
static int run(ctx *c)
{
    int rc = setup(c);
    if (!rc) rc = match_limited_scopes(c);
    if (!rc) rc = limited_names(c);
    for (size_t i = 0; !rc && i < c->n; i++)
        rc = scan_quota(c, &c->qs[i]);
    if (!rc) rc = object_usage(c);
    if (!rc) rc = previous_usage(c);
    if (!rc) rc = compute_deltas(c);
    if (!rc) rc = check_coverage(c);
    if (!rc) rc = check_scope_coverage(c);
    if (!rc) rc = charge_all(c);
    return rc;
}

static void drop_used(quota_result *res)
{
    for (size_t i = 0; res->used && i < res->nquotas; i++) {
        json_decref(res->used[i]);
        res->used[i] = NULL;
    }
    for (size_t i = 0; res->next && i < res->nquotas; i++) {
        rl_free(res->next[i]);
        res->next[i] = NULL;
    }
}

static int check(const quota_request *rq, const quota_view *views, size_t n, quota_result *res)
{
    memset(res, 0, sizeof *res);
    res->allowed = true;
    if (fast_allow(rq, n)) return 0;
    ctx c = {.rq = rq, .res = res, .views = views, .n = n};
    int rc = run(&c);
    teardown(&c);
    if (!res->allowed || rc < 0) drop_used(res);
    if (rc == QUOTA_ENOMEM) res->allowed = false;
    return rc < 0 ? rc : 0;
}

int quota_check(const quota_request *rq, quota_result *res)
{
    return check(rq, NULL, json_array_size(rq->quotas), res);
}

int quota_check_views(const quota_request *rq, const quota_view *quotas, size_t n,
                      quota_result *res)
{
    return check(rq, quotas, n, res);
}

void quota_result_cleanup(quota_result *res)
{
    drop_used(res);
    free(res->used);
    free(res->next);
    free(res->message);
    memset(res, 0, sizeof *res);
}

int quota_apply_used(json_t *quotas, const quota_result *res)
{
    for (size_t i = 0; i < res->nquotas && res->used; i++) {
        json_t *q = json_array_get(quotas, i), *st;
        if (!res->used[i] || !q) continue;
        st = json_object_get(q, "status");
        if (!st && json_object_set_new(q, "status", st = json_object())) return QUOTA_ENOMEM;
        if (json_object_set_new(st, "used", json_deep_copy(res->used[i]))) return QUOTA_ENOMEM;
    }
    return 0;
}

/* ---- prepared quotas ------------------------------------------------------------------------- */

quota_prepared *quota_prepare(const json_t *quota, char *err, size_t errlen)
{
    quota_prepared *p = calloc(1, sizeof *p);
    const char *bad = "";
    if (errlen) *err = '\0';
    if (!p || !(p->hard = rl_new())) {
        free(p);
        return NULL;
    }
    p->json = json_incref((json_t *)quota);
    p->name = jstr(quota, "metadata", "name");
    int rc = rl_from_json(jget(quota, "status", "hard"), p->hard, &bad);
    if (rc) {
        if (rc != RL_ENOMEM)
            snprintf(err, errlen, "quota %s: invalid quantity in status for %s", p->name, bad);
        quota_prepared_free(p);
        return NULL;
    }
    return p;
}

void quota_prepared_free(quota_prepared *p)
{
    if (!p) return;
    rl_free(p->hard);
    json_decref(p->json);
    free(p);
}

const char *quota_prepared_name(const quota_prepared *p)
{
    return p->name;
}

const rlist *quota_prepared_hard(const quota_prepared *p)
{
    return p->hard;
}

const json_t *quota_prepared_json(const quota_prepared *p)
{
    return p->json;
}
