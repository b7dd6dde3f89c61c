/* quota_check.c - upstream's CheckRequest, step by step in upstream's order
 * (spec §4.3): limited scopes, limited names, pertinent quotas (constraints,
 * usage stats), object usage and UPDATE delta, coverage checks, then the charge
 * against each pertinent quota. Message texts live in the MSG_* table below.
 *
 * Cost: the registry runs this inside the store's writer lock for every
 * create, against every quota of the namespace, so work is done as seldom as
 * its inputs change: per stored quota version in quota_prepare (hard, scope
 * selectors, the names each common kind owns); per request, once, whatever
 * depends only on the object (its usage, scope facts, "must specify" walk,
 * the delta); per quota only the comparisons. quota_check (JSON) prepares its
 * quotas per call and then runs the very same steps.
 */
#include "core/quota_check.h"
#include "core/jdump.h"

#include "core/deferred.h"
#include "core/jget.h"

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
#define MSG_BAD_STATUS "quota %s: invalid quantity in status for %s"
/* allot only: a usage more precise than a qty holds (core/quantity.h; upstream
 * is unbounded). A denial of the quota's policy, not a server fault: 403. */
#define MSG_TOO_PRECISE                                                                            \
    "quota %s: the usage of %s would need more significant digits than are supported"

#define ERRLEN 1024

/* The kinds nearly every checked request is of (core group). A prepared quota
 * keeps, for each, the hard names that kind's evaluator owns; any other kind
 * works them out per request (a prepared quota is shared read-only, so it
 * cannot learn kinds as they come). */
static const char *const fixed_kinds[] = {"pods", "services", "persistentvolumeclaims"};
#define NFIXED (sizeof fixed_kinds / sizeof fixed_kinds[0])

struct quota_prepared {
    json_t *json; /* a reference */
    const char *name;
    rlist *hard;
    quota_scopes *scopes;
    rlist *owned[NFIXED];  /* MatchingResources(hard) per fixed kind; NULL: not kept */
    unsigned must[NFIXED]; /* quota_must_specify_mask(owned[k]) */
};

typedef struct qinfo {
    const quota_prepared *p;
    const rlist *used;       /* borrowed from a view, or own_used */
    const rlist *restricted; /* the hard names this kind owns: p->owned[..] or own_restricted */
    unsigned must;           /* quota_must_specify_mask(restricted) */
    const rlist *delta;      /* the ctx's delta_full or delta_sub */
    quota_prepared *own_prep;
    rlist *own_used, *own_restricted;
    bool interesting;
} qinfo;

typedef struct ctx {
    const quota_request *rq;
    quota_result *res;
    size_t n;
    qinfo *qs;
    int fixed; /* index into fixed_kinds of the request's kind, or -1 */
    /* limitedResources only (NULL without it): */
    json_t *limited_scopes, *restricted_scopes;
    rlist *limited_names, *covered;
    /* Per request, built on first use: */
    const rlist *usage; /* quota_usage of the object: rq->usage or own_usage (the deferred
                           mask applied in object_usage) */
    rlist *own_usage;
    int usage_rc;
    quota_scope_subject *subj, *old_subj;
    quota_cfacts *cfacts;
    rlist *prev, *delta_full, *delta_sub;
    rlist *inexact; /* names whose delta_sub value stands in for a difference a qty cannot
                       hold (see subtract_prev); NULL: none */
} ctx;

enum { DONE = 1 }; /* a step decided the request (allowed or denied) */

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

/* ---- prepared quotas ------------------------------------------------------------------------- */

/* `by_kind`: also keep the names each fixed kind owns (worth it for a quota
 * that serves many requests; quota_check prepares per call and skips it). */
static quota_prepared *prepare(const json_t *quota, bool by_kind, char *err, size_t errlen)
{
    quota_prepared *p = calloc(1, sizeof *p);
    const char *bad = "";
    if (errlen) *err = '\0';
    if (!p) return NULL;
    p->json = json_incref((json_t *)quota);
    p->name = jtext(quota, "metadata", "name");
    int rc = (p->hard = rl_new()) ? rl_from_json(jget(quota, "status", "hard"), p->hard, &bad)
                                  : RL_ENOMEM;
    if (rc && rc != RL_ENOMEM) snprintf(err, errlen, MSG_BAD_STATUS, p->name, bad);
    if (!rc && !(p->scopes = quota_scopes_new(jget(quota, "spec")))) rc = RL_ENOMEM;
    for (size_t k = 0; by_kind && !rc && k < NFIXED; k++) {
        p->owned[k] = rl_new();
        rc = p->owned[k] ? quota_matching_resources("", fixed_kinds[k], p->hard, p->owned[k])
                         : QUOTA_ENOMEM;
        p->must[k] = quota_must_specify_mask(p->owned[k]);
    }
    if (rc) {
        quota_prepared_free(p);
        return NULL;
    }
    return p;
}

quota_prepared *quota_prepare(const json_t *quota, char *err, size_t errlen)
{
    return prepare(quota, true, err, errlen);
}

void quota_prepared_free(quota_prepared *p)
{
    if (!p) return;
    rl_free(p->hard);
    quota_scopes_free(p->scopes);
    for (size_t k = 0; k < NFIXED; k++)
        rl_free(p->owned[k]);
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

/* ---- setup ----------------------------------------------------------------------------------- */

/* quota_check: prepare rq->quotas[i] and parse its status.used, as a view would
 * carry them. */
static int load_quota(ctx *c, size_t i)
{
    qinfo *qi = &c->qs[i];
    const json_t *q = json_array_get(c->rq->quotas, i);
    const char *bad = "";
    char err[ERRLEN];
    if (!(qi->p = qi->own_prep = prepare(q, false, err, sizeof err)))
        return *err ? (deny(c, 500, "%s", err), QUOTA_EINVAL) : QUOTA_ENOMEM;
    if (!(qi->used = qi->own_used = rl_new())) return QUOTA_ENOMEM;
    int rc = rl_from_json(jget(q, "status", "used"), qi->own_used, &bad);
    if (rc == RL_ENOMEM) return QUOTA_ENOMEM;
    if (rc) {
        deny(c, 500, MSG_BAD_STATUS, qi->p->name, bad);
        return QUOTA_EINVAL;
    }
    return 0;
}

static int fixed_index(const char *group, const char *resource)
{
    if (group && *group) return -1;
    for (size_t k = 0; k < NFIXED; k++)
        if (strcmp(resource, fixed_kinds[k]) == 0) return (int)k;
    return -1;
}

static int fixed_kind(const quota_request *rq)
{
    return fixed_index(rq->group, rq->resource);
}

int quota_prepared_matches(const quota_prepared *p, const char *group, const char *resource,
                           quota_scope_subject *subj, char *err, size_t n)
{
    int m = quota_scopes_len(p->scopes) ? quota_scopes_matches(p->scopes, subj, err, n) : 1;
    if (m < 0) return -1;
    int k = fixed_index(group, resource);
    bool owned = false;
    if (k >= 0 && p->owned[k])
        owned = rl_len(p->owned[k]) > 0;
    else
        for (size_t i = 0; i < rl_len(p->hard) && !owned; i++)
            owned = quota_owns(group, resource, rl_name(p->hard, i));
    return owned && m;
}

static int setup(ctx *c, const quota_view *views)
{
    size_t slots = c->n ? c->n : 1;
    c->fixed = fixed_kind(c->rq);
    c->qs = calloc(slots, sizeof(qinfo));
    if (views)
        c->res->next = calloc(slots, sizeof(rlist *));
    else
        c->res->used = calloc(slots, sizeof(json_t *));
    c->res->nquotas = c->n;
    if (!c->qs || (!c->res->used && !c->res->next)) return QUOTA_ENOMEM;
    if (json_array_size(c->rq->limited)) {
        c->limited_scopes = json_array();
        c->restricted_scopes = json_array();
        c->limited_names = rl_new();
        if (!c->limited_scopes || !c->restricted_scopes || !c->limited_names) return QUOTA_ENOMEM;
    }
    for (size_t i = 0; i < c->n; i++) {
        if (views) {
            c->qs[i].p = views[i].prep;
            c->qs[i].used = views[i].used;
            continue;
        }
        int rc = load_quota(c, i);
        if (rc) return rc;
    }
    return 0;
}

static void teardown(ctx *c)
{
    for (size_t i = 0; c->qs && i < c->n; i++) {
        quota_prepared_free(c->qs[i].own_prep);
        rl_free(c->qs[i].own_used);
        rl_free(c->qs[i].own_restricted);
    }
    free(c->qs);
    json_decref(c->limited_scopes);
    json_decref(c->restricted_scopes);
    rl_free(c->limited_names);
    rl_free(c->covered);
    rl_free(c->own_usage);
    quota_scope_subject_free(c->subj);
    quota_scope_subject_free(c->old_subj);
    quota_cfacts_free(c->cfacts);
    rl_free(c->prev);
    rl_free(c->delta_full);
    rl_free(c->delta_sub);
    rl_free(c->inexact);
}

/* ---- the object, once per request ------------------------------------------------------------ */

/* The object's usage (quota_usage; without the deferred mask). NULL when out
 * of memory; a usage error is in c->usage_rc. */
static const rlist *usage_of(ctx *c)
{
    const quota_request *rq = c->rq;
    if (c->usage) return c->usage;
    if (rq->usage) {
        c->usage_rc = rq->usage_rc;
        return c->usage = rq->usage;
    }
    if ((c->own_usage = rl_new()))
        c->usage_rc = quota_usage(rq->group, rq->resource, rq->obj, rq->now, c->own_usage);
    return c->usage = c->own_usage;
}

static quota_scope_subject *subject_of(ctx *c, bool old)
{
    const quota_request *rq = c->rq;
    quota_scope_subject **s = old ? &c->old_subj : &c->subj;
    if (!*s) *s = quota_scope_subject_new(rq->group, rq->resource, old ? rq->old : rq->obj);
    return *s;
}

static const quota_cfacts *cfacts_of(ctx *c)
{
    const quota_request *rq = c->rq;
    if (!c->cfacts) c->cfacts = quota_cfacts_new(rq->group, rq->resource, rq->obj);
    return c->cfacts;
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
        if (quota_matching_scopes(rq->group, rq->resource, rq->obj, jget(lr, "matchScopes"),
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
    const rlist *u;
    int rc = 0;
    size_t i;
    const json_t *lr;
    json_array_foreach(rq->limited, i, lr)
    {
        if (rc || !streq(jtext(lr, "apiGroup", NULL), rq->group) ||
            !streq(jtext(lr, "resource", NULL), rq->resource))
            continue;
        if (!(u = usage_of(c))) return QUOTA_ENOMEM;
        rc = c->usage_rc;
        for (size_t k = 0; !rc && k < rl_len(u); k++) {
            if (qty_sign(rl_qty(u, k)) > 0 &&
                contains_any(rl_name(u, k), jget(lr, "matchContains")))
                rc = rl_add_name(c->limited_names, rl_name(u, k)) ? QUOTA_ENOMEM : 0;
        }
    }
    return rc;
}

/* ---- pertinent quotas ------------------------------------------------------------------------ */

/* hasUsageStats: every hard key the evaluator owns has a used value. */
static bool has_usage_stats(const qinfo *qi)
{
    return rl_has_names(qi->used, qi->restricted);
}

/* After a quota matched: constraints, usage stats, then it is interesting. */
static int admit_quota(ctx *c, qinfo *qi)
{
    const quota_cfacts *cf = cfacts_of(c);
    char err[ERRLEN];
    int rc = cf ? quota_cfacts_check_mask(cf, qi->must, err, sizeof err) : QUOTA_ENOMEM;
    if (rc < 0) return rc;
    if (rc) return deny(c, 403, MSG_CONSTRAINT, qi->p->name, err);
    if (!has_usage_stats(qi)) {
        char *names = render(qi->restricted, true);
        rc = names ? deny(c, 403, MSG_STATUS_UNKNOWN, qi->p->name, names) : QUOTA_ENOMEM;
        free(names);
        return rc;
    }
    qi->interesting = true;
    /* What the quotas cover matters only against limited names. */
    if (!rl_len(c->limited_names)) return 0;
    if (!c->covered && !(c->covered = rl_new())) return QUOTA_ENOMEM;
    return rl_add_to(c->covered, qi->restricted) ? QUOTA_ENOMEM : 0;
}

/* MatchingResources(hard) for the request's kind: kept by the prepared quota
 * for a fixed kind, else worked out now. */
static int restrict_quota(ctx *c, qinfo *qi)
{
    const quota_request *rq = c->rq;
    if (c->fixed >= 0 && qi->p->owned[c->fixed]) {
        qi->restricted = qi->p->owned[c->fixed];
        qi->must = qi->p->must[c->fixed];
        return 0;
    }
    if (!(qi->own_restricted = rl_new())) return QUOTA_ENOMEM;
    qi->restricted = qi->own_restricted;
    int rc = quota_matching_resources(rq->group, rq->resource, qi->p->hard, qi->own_restricted);
    qi->must = quota_must_specify_mask(qi->own_restricted);
    return rc;
}

/* The scopes first (their matches are collected, and an error denies, even for
 * a quota this kind does not concern), then Matches: the quota owns some hard
 * name of this kind and the object is inside every scope. */
static int scan_quota(ctx *c, qinfo *qi)
{
    size_t nscopes = quota_scopes_len(qi->p->scopes);
    int matched = 0;
    if (nscopes) {
        quota_scope_subject *subj = subject_of(c, false);
        char err[ERRLEN];
        if (!subj) return QUOTA_ENOMEM;
        matched = quota_scopes_matching(qi->p->scopes, subj, c->restricted_scopes, err, sizeof err);
        if (matched == QUOTA_ENOMEM) return matched;
        if (matched < 0) return deny(c, 500, MSG_SCOPE_ERR, qi->p->name, err);
    }
    int rc = restrict_quota(c, qi);
    if (rc || !rl_len(qi->restricted) || (size_t)matched < nscopes) return rc;
    return admit_quota(c, qi);
}

/* ---- usage and delta ------------------------------------------------------------------------- */

static bool any_negative(const rlist *l)
{
    for (size_t k = 0; k < rl_len(l); k++)
        if (qty_sign(rl_qty(l, k)) < 0) return true;
    return false;
}

static int object_usage(ctx *c)
{
    const quota_request *rq = c->rq;
    if (!usage_of(c)) return QUOTA_ENOMEM;
    if (c->usage_rc) return c->usage_rc;
    if (rq->deferred) { /* a borrowed usage is copied before it is masked */
        if (!c->own_usage && !(c->own_usage = rl_copy(c->usage))) return QUOTA_ENOMEM;
        quota_deferred_mask(rq->group, rq->resource, rq->obj, c->own_usage);
        c->usage = c->own_usage;
    }
    if (!any_negative(c->usage)) return 0;
    rlist *neg = rl_is_negative(c->usage);
    char *names = neg ? render(neg, true) : NULL;
    int rc = names ? deny(c, 403, MSG_NEGATIVE, names) : QUOTA_ENOMEM;
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
    if (!*jtext(rq->old, "metadata", "resourceVersion")) return 0;
    if (!(c->prev = rl_new())) return QUOTA_ENOMEM;
    int rc = quota_usage(rq->group, rq->resource, rq->old, rq->now, c->prev);
    if (!rc && rq->deferred) quota_deferred_mask(rq->group, rq->resource, rq->old, c->prev);
    return rc;
}

/* usage - prev, never below 0 (SubtractWithNonNegativeResult). The exact
 * difference of two quantities can need more digits than a qty holds (a
 * resize of limits.cpu from 250m to 1e400), which rl_subtract_nonneg refuses.
 * Then, key by key: such a key's delta is the new usage itself (not exact,
 * but positive, as the true difference is) and its name goes to c->inexact;
 * only a quota that charges that key needs the exact value (charge refuses
 * it there), every other quota masks it away. */
static rlist *subtract_prev(ctx *c)
{
    rlist *d = rl_subtract_nonneg(c->usage, c->prev);
    if (d) return d;
    if (!(d = rl_new()) || (!c->inexact && !(c->inexact = rl_new()))) goto fail;
    for (size_t k = 0; k < rl_len(c->usage); k++) {
        const char *name = rl_name(c->usage, k);
        const qty *p = rl_get(c->prev, name);
        qty x = *rl_qty(c->usage, k);
        if (p && qty_cmp(&x, p) <= 0) {
            x = qty_zero(QTY_DECIMAL_SI);
        } else if (p && qty_sub(&x, p) != 0) {
            x = *rl_qty(c->usage, k);
            if (rl_add_name(c->inexact, name)) goto fail;
        }
        if (rl_set(d, name, &x)) goto fail;
    }
    return d; /* keys only in prev would be 0: RemoveZeros drops them anyway */
fail:
    rl_free(d);
    return NULL;
}

/* The non-zero part of `usage`, minus the previous usage (never below 0) when
 * `sub_prev`. The same for every quota that takes it, so made once (owned by
 * the ctx); NULL when out of memory. */
static const rlist *delta_of(ctx *c, bool sub_prev)
{
    rlist **slot = sub_prev ? &c->delta_sub : &c->delta_full;
    if (*slot) return *slot;
    rlist *d = sub_prev ? subtract_prev(c) : rl_copy(c->usage);
    *slot = d ? rl_remove_zeros(d) : NULL;
    rl_free(d);
    return *slot;
}

/* Whether the stored object was inside quota qi (which the new one matched,
 * so it owns some of this kind's names): then only the difference is charged. */
static int old_matched(ctx *c, const qinfo *qi, char *err, size_t n)
{
    if (!quota_scopes_len(qi->p->scopes)) return 1;
    quota_scope_subject *subj = subject_of(c, true);
    if (!subj) {
        snprintf(err, n, "out of memory");
        return -1;
    }
    return quota_scopes_matches(qi->p->scopes, subj, err, n);
}

static char *exceeded_text(const qinfo *qi, const rlist *nu);

/* Each quota the request concerns, told to rq->explain (see quota_request):
 * what charge() would decide for it alone. Best effort: a quota whose
 * verdict cannot be worked out (out of memory, a usage too precise) is told
 * with after NULL. */
static void explain_all(ctx *c)
{
    for (size_t i = 0; c->rq->explain && i < c->n; i++) {
        const qinfo *qi = &c->qs[i];
        if (!qi->interesting) continue;
        bool changed, over;
        rlist *req = rl_mask(qi->delta, qi->p->hard);
        rlist *nu = req ? rl_add_masked(qi->used, qi->delta, qi->p->hard, &changed, &over) : NULL;
        bool check = !streq(c->rq->subresource, "status");
        char *msg = nu && check && over ? exceeded_text(qi, nu) : NULL;
        c->rq->explain(c->rq->explain_arg, qi->p->name, qi->p->hard, qi->used, req, nu, msg);
        free(msg);
        rl_free(nu);
        rl_free(req);
    }
}

/* Per quota: the old object's usage is subtracted only for quotas that also
 * matched the old object; a quota the object newly falls into gets it all.
 * Returns DONE (allowed, nothing to charge) when every delta is empty. */
static int compute_deltas(ctx *c)
{
    char err[ERRLEN];
    bool any = false, interesting = false;
    for (size_t i = 0; i < c->n; i++) {
        qinfo *qi = &c->qs[i];
        if (!qi->interesting) continue;
        int m = c->prev ? old_matched(c, qi, err, sizeof err) : 0;
        if (m < 0) return deny(c, 500, "%s", err);
        if (!(qi->delta = delta_of(c, m > 0))) return QUOTA_ENOMEM;
        any |= rl_len(qi->delta) > 0;
        interesting = true;
    }
    if (!interesting) {
        const rlist *d = delta_of(c, c->prev != NULL);
        if (!d) return QUOTA_ENOMEM;
        any = rl_len(d) > 0;
    }
    explain_all(c);
    return any ? 0 : DONE;
}

/* ---- coverage and charge --------------------------------------------------------------------- */

static int check_coverage(ctx *c)
{
    if (!rl_len(c->limited_names)) return 0;
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
    json_t *unc;
    size_t i, j;
    const json_t *ls, *rs;
    if (!json_array_size(c->limited_scopes)) return 0;
    if (!(unc = json_array())) return QUOTA_ENOMEM;
    json_array_foreach(c->limited_scopes, i, ls)
    {
        bool covered = false;
        json_array_foreach(c->restricted_scopes, j, rs)
        {
            covered |= streq(jtext(ls, "scopeName", NULL), jtext(rs, "scopeName", NULL));
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

/* The denial, from the new usage `nu`: requested = delta masked to hard, and
 * the requested names whose new usage is over hard. Only run on a denial, so
 * it is written with the plain list operations, as upstream. */
/* Upstream's "exceeded quota: ..." text for quota qi at new usage nu: the
 * keys this request raises past hard. NULL when out of memory. */
static char *exceeded_text(const qinfo *qi, const rlist *nu)
{
    const rlist *hard = qi->p->hard;
    rlist *req = rl_mask(qi->delta, hard), *masked = req ? rl_mask(nu, req) : NULL;
    rlist *over = masked ? rl_less_than_or_equal(masked, hard) : NULL;
    rlist *r = over ? rl_mask(req, over) : NULL, *u = r ? rl_mask(qi->used, over) : NULL;
    rlist *h = u ? rl_mask(hard, over) : NULL;
    char *rs = h ? render(r, false) : NULL, *us = h ? render(u, false) : NULL;
    char *hs = h ? render(h, false) : NULL, *msg = NULL;
    if (rs && us && hs && asprintf(&msg, MSG_EXCEEDED, qi->p->name, rs, us, hs) < 0) msg = NULL;
    free(rs);
    free(us);
    free(hs);
    rl_free(req);
    rl_free(masked);
    rl_free(over);
    rl_free(r);
    rl_free(u);
    rl_free(h);
    return msg;
}

static int exceeded(ctx *c, const qinfo *qi, const rlist *nu)
{
    char *msg = exceeded_text(qi, nu);
    int rc = msg ? deny(c, 403, "%s", msg) : QUOTA_ENOMEM;
    free(msg);
    return rc;
}

/* The first key of `delta` that `hard` has whose used + delta needs more
 * digits than a qty holds, or that stands for an inexact difference; NULL. */
static const char *too_precise(const ctx *c, const rlist *used, const rlist *delta,
                               const rlist *hard)
{
    for (size_t k = 0; k < rl_len(delta); k++) {
        const char *name = rl_name(delta, k);
        if (!rl_has(hard, name)) continue;
        if (c->inexact && rl_has(c->inexact, name)) return name;
        const qty *u = rl_get(used, name);
        qty x = u ? *u : qty_zero(QTY_DECIMAL_SI);
        if (qty_add(&x, rl_qty(delta, k)) == QTY_ERR_RANGE) return name;
    }
    return NULL;
}

/* requested = delta masked to hard; new used = used + requested; only the
 * requested keys are compared with hard (an unrelated key already over its hard
 * does not block). `status` subresource requests update usage unchecked here,
 * as upstream; allot checks their exact move (quota_check_move) instead. */
static int charge(ctx *c, size_t i)
{
    qinfo *qi = &c->qs[i];
    bool changed, over;
    const char *imprecise = c->inexact ? too_precise(c, qi->used, qi->delta, qi->p->hard) : NULL;
    if (imprecise) return deny(c, 403, MSG_TOO_PRECISE, qi->p->name, imprecise);
    rlist *nu = rl_add_masked(qi->used, qi->delta, qi->p->hard, &changed, &over);
    if (!nu && (imprecise = too_precise(c, qi->used, qi->delta, qi->p->hard)))
        return deny(c, 403, MSG_TOO_PRECISE, qi->p->name, imprecise);
    int rc = nu ? 0 : QUOTA_ENOMEM;
    bool check = !streq(c->rq->subresource, "status");
    if (!rc && check && over) rc = exceeded(c, qi, nu);
    if (!rc && changed) {
        if (c->res->next) {
            c->res->next[i] = nu;
            nu = NULL;
        } else if (!(c->res->used[i] = rl_to_json(nu))) {
            rc = QUOTA_ENOMEM;
        }
    }
    rl_free(nu);
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
static int run(ctx *c, const quota_view *views)
{
    int rc = setup(c, views);
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
    ctx c = {.rq = rq, .res = res, .n = n};
    int rc = run(&c, views);
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
        if (json_object_set_new(st, "used", jcopy(res->used[i]))) return QUOTA_ENOMEM;
    }
    return 0;
}

/* ---- exact moves (allot only) ---------------------------------------------------------------- */

/* `from`'s values at the keys of `names` (absent: 0), less `minus`'s values
 * there when minus is given. NULL when out of memory, or when a difference
 * needs more digits than a qty holds (*range then names its key). */
static rlist *at_names(const rlist *from, const rlist *minus, const rlist *names,
                       const char **range)
{
    rlist *r = rl_new();
    for (size_t k = 0; r && k < rl_len(names); k++) {
        const char *name = rl_name(names, k);
        const qty *v = rl_get(from, name), *m = minus ? rl_get(minus, name) : NULL;
        qty x = v ? *v : qty_zero(QTY_DECIMAL_SI);
        if (m && qty_sub(&x, m) != 0) {
            *range = name;
            rl_free(r);
            return NULL;
        }
        if (rl_set(r, name, &x)) {
            rl_free(r);
            return NULL;
        }
    }
    return r;
}

int quota_check_usage(const quota_prepared *p, const rlist *used, const rlist *nu, char **msg)
{
    *msg = NULL;
    rlist *over = NULL;
    const qty zero = qty_zero(QTY_DECIMAL_SI);
    for (size_t k = 0; k < rl_len(nu); k++) {
        const char *name = rl_name(nu, k);
        const qty *u = rl_get(used, name), *h = rl_get(p->hard, name);
        if (!h || qty_cmp(rl_qty(nu, k), u ? u : &zero) <= 0 || qty_cmp(rl_qty(nu, k), h) <= 0)
            continue; /* not limited, not rising, or within hard */
        if ((!over && !(over = rl_new())) || rl_add_name(over, name)) {
            rl_free(over);
            return QUOTA_ENOMEM;
        }
    }
    if (!over) return 0;
    const char *range = NULL;
    rlist *r = at_names(nu, used, over, &range);
    rlist *u = r ? at_names(used, NULL, over, &range) : NULL;
    rlist *h = u ? at_names(p->hard, NULL, over, &range) : NULL;
    char *rs = h ? render(r, false) : NULL, *us = h ? render(u, false) : NULL;
    char *hs = h ? render(h, false) : NULL;
    int rc = 1;
    if (range)
        rc = asprintf(msg, MSG_TOO_PRECISE, p->name, range) < 0 ? QUOTA_ENOMEM : 1;
    else if (!rs || !us || !hs || asprintf(msg, MSG_EXCEEDED, p->name, rs, us, hs) < 0)
        rc = QUOTA_ENOMEM;
    if (rc == QUOTA_ENOMEM) *msg = NULL;
    free(rs);
    free(us);
    free(hs);
    rl_free(r);
    rl_free(u);
    rl_free(h);
    rl_free(over);
    return rc;
}

/* x = max(0, x - b) + a (b, a NULL: 0), as rl_subtract_nonneg then rl_add
 * compute it. 0, or QTY_ERR_RANGE with x unspecified. */
static int move_one(qty *x, const qty *b, const qty *a)
{
    if (b && qty_cmp(x, b) <= 0)
        *x = qty_zero(QTY_DECIMAL_SI);
    else if (b && qty_sub(x, b) != 0)
        return QTY_ERR_RANGE;
    return a ? qty_add(x, a) : 0;
}

/* One key of a move into nu (the key's old value stays on QTY_ERR_RANGE). */
static int move_key(rlist *nu, const rlist *used, const char *name, const qty *b, const qty *a)
{
    const qty *u = rl_get(used, name);
    qty x = u ? *u : qty_zero(QTY_DECIMAL_SI);
    if (move_one(&x, b, a) != 0) return QTY_ERR_RANGE;
    return rl_set(nu, name, &x) ? QUOTA_ENOMEM : 0;
}

int quota_check_move(const quota_prepared *p, const rlist *used, const rlist *before,
                     const rlist *after, rlist **next, char **msg)
{
    *next = NULL;
    *msg = NULL;
    rlist *nu = rl_copy(used);
    const char *lost = NULL; /* a key whose new value a qty cannot hold */
    bool rises = false;
    int rc = nu ? 0 : QUOTA_ENOMEM;
    for (size_t k = 0; !rc && k < rl_len(after); k++) {
        const char *name = rl_name(after, k);
        const qty *a = rl_qty(after, k), *b = rl_get(before, name);
        rc = move_key(nu, used, name, b, a);
        if (rc == QTY_ERR_RANGE) {
            rc = 0;
            lost = name;
            rises = b ? qty_cmp(a, b) > 0 : qty_sign(a) > 0;
            if (rises) break;
        }
    }
    for (size_t k = 0; !rc && !rises && k < rl_len(before); k++) {
        const char *name = rl_name(before, k);
        if (rl_has(after, name)) continue;
        rc = move_key(nu, used, name, rl_qty(before, k), NULL);
        if (rc == QTY_ERR_RANGE) {
            rc = 0;
            lost = name;
        }
    }
    if (!rc && rises) {
        rc = asprintf(msg, MSG_TOO_PRECISE, p->name, lost) < 0 ? QUOTA_ENOMEM : 1;
        if (rc == QUOTA_ENOMEM) *msg = NULL;
    }
    /* The keys that could be moved are checked even when another one is lost. */
    if (!rc) rc = quota_check_usage(p, used, nu, msg);
    if (!rc && !lost) {
        *next = nu;
        nu = NULL;
    }
    rl_free(nu);
    return rc;
}
