/* quota_deferred.c - deferred ResourceQuota: namespace mode, the scheduler's
 * quota PreFilter and the atomic bind re-check (see quota_deferred.h).
 *
 * Both checks use the same evaluator and scope rules as admission
 * (core/quota_eval.c) and the same deferred rule (core/deferred.c); they only
 * differ in what "used" is: the PreFilter adds the usage of pods assumed by the
 * scheduler, the re-check reads the quota inside the binding transaction.
 */
#include "registry/quota_deferred.h"

#include "api/features.h"
#include "core/deferred.h"
#include "core/quota_eval.h"
#include "core/sched.h"
#include "registry/quota_admission.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *meta_str(const json_t *obj, const char *f)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), f));
}

/* The one rule of the mode: deferred unless the gate is off or the
 * namespace's labels say quota.allot.dev/mode=admission (a namespace not
 * stored is deferred). `labels` may be NULL. */
static bool mode_deferred(const json_t *labels)
{
    if (!feature_enabled(FEATURE_DEFERRED_RESOURCE_QUOTA)) return false;
    const char *mode = json_string_value(json_object_get(labels, DEFERRED_MODE_LABEL));
    return !mode || strcmp(mode, "admission") != 0;
}

bool quota_ns_deferred(store_txn *t, store *st, const char *ns)
{
    if (!feature_enabled(FEATURE_DEFERRED_RESOURCE_QUOTA) || !ns || !*ns) return false;
    char key[320];
    snprintf(key, sizeof key, "namespaces//%s", ns);
    store_obj *o = t ? store_txn_get(t, key) : store_get(st, key);
    if (!o) return true;
    bool deferred = mode_deferred(o->idx.labels);
    store_obj_unref(o);
    return deferred;
}

bool quota_ns_obj_deferred(const json_t *ns)
{
    return mode_deferred(json_object_get(json_object_get(ns, "metadata"), "labels"));
}

static rlist *list_of(const json_t *q, const char *field)
{
    rlist *l = rl_new();
    const char *bad = NULL;
    if (l && rl_from_json(json_object_get(json_object_get(q, "status"), field), l, &bad) != 0) {
        rl_free(l);
        return NULL;
    }
    return l;
}

/* The pod's deferred usage that quota q tracks: empty when q does not match
 * the pod or tracks none of it. */
static rlist *tracked(const json_t *q, const json_t *pod, const rlist *deferred, const rlist *hard)
{
    char err[256];
    if (quota_matches(json_object_get(q, "spec"), hard, "", "pods", pod, err, sizeof err) != 1)
        return rl_new();
    return rl_mask(deferred, hard);
}

/* Names over hard when `add` joins `used`; NULL on error. */
static rlist *over_limit(const rlist *used, const rlist *add, const rlist *hard, rlist **total)
{
    *total = rl_add(used, add);
    if (!*total) return NULL;
    rlist *m = rl_mask(*total, add);
    rlist *over = m ? rl_less_than_or_equal(m, hard) : NULL;
    rl_free(m);
    return over;
}

/* The pod's deferred (compute) usage; NULL only when out of memory. A pod
 * whose usage does not evaluate (stored before validation refused its values)
 * charges nothing, as in admission and the recount: an empty list. */
static rlist *pod_deferred(const json_t *pod)
{
    rlist *u = rl_new();
    int rc = u ? quota_usage("", "pods", pod, 0, u) : QUOTA_ENOMEM;
    if (rc == QUOTA_ENOMEM) {
        rl_free(u);
        return NULL;
    }
    if (rc != 0) rl_clear(u);
    rlist *d = quota_deferred_only(u);
    rl_free(u);
    return d;
}

/* The revision at which a stored pod was last written if it is assigned to a
 * node, 0 if it is not, -1 if it is gone. From the index: no parsing. */
static int64_t bound_at(store_txn *t, const char *key)
{
    store_obj *o = store_txn_get(t, key);
    if (!o) return -1;
    int64_t rv = 0;
    for (const char *p = o->idx.fields; p && *p;) {
        const char *val = p + strlen(p) + 1;
        if (!strcmp(p, "spec.nodeName")) rv = *val ? o->rv : 0;
        p = val + strlen(val) + 1;
    }
    store_obj_unref(o);
    return rv;
}

/* A quota's usage (exact as of revision `as_of`) plus what of the assumed pods
 * it does not count yet (see quota_deferred.h). seen[j] is bound_at of
 * pods[j], read after the usage. */
static rlist *base_usage(int64_t as_of, const rlist *used, const rlist *assumed,
                         const quota_assumed *pods, const int64_t *seen, size_t npods)
{
    if (!pods) return assumed ? rl_add(used, assumed) : rl_copy(used);
    rlist *base = rl_copy(used);
    for (size_t j = 0; base && j < npods; j++) {
        /* Gone: its usage is in no quota (released, or never charged). Bound
         * at or before `as_of`: its charge is in `used`. */
        if (seen[j] < 0 || (seen[j] > 0 && seen[j] <= as_of)) continue;
        if (rl_add_to(base, pods[j].deferred) != 0) {
            rl_free(base);
            base = NULL;
        }
    }
    return base;
}

int quota_deferred_prefilter(store *st, const json_t *pod, const rlist *assumed,
                             const quota_assumed *pods, size_t npods, size_t nnodes,
                             rlist **deferred, dbuf *msg, char *quota, size_t quota_len,
                             rlist **demand)
{
    const char *ns = meta_str(pod, "namespace");
    *deferred = NULL;
    if (demand) *demand = NULL;
    if (!quota_ns_deferred(NULL, st, ns)) return 0;
    rlist *d = pod_deferred(pod);
    if (!d) return -1;
    char prefix[320];
    snprintf(prefix, sizeof prefix, "resourcequotas/%s/", ns);
    /* The usage (the ledger's) and whether each assumed pod is bound are read
     * in one transaction that writes nothing: both as of every commit so far
     * (the ledger is ahead of what readers see, so the pods must be read as
     * transactions see them, not as readers do). A bind that commits after
     * it counts as assumed. */
    store_txn *t = store_begin(st);
    if (!t) {
        rl_free(d);
        return -1;
    }
    int64_t now_rev = store_txn_rev(t) - 1;
    store_obj **objs = NULL;
    size_t n = 0;
    int rc = store_txn_list(t, prefix, &objs, &n) ? -1 : 0;
    rlist *blocked_on = NULL; /* the blocking quota's `want` */
    rlist **usage = calloc(n ? n : 1, sizeof *usage);
    int64_t *as_of = calloc(n ? n : 1, sizeof *as_of);
    if (!usage || !as_of) rc = -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!(usage[i] = quota_ledger_read_txn(t, objs[i]))) rc = -1;
        as_of[i] = now_rev;
    }
    int64_t *seen = pods ? malloc((npods ? npods : 1) * sizeof *seen) : NULL;
    if (pods && !seen) rc = -1;
    for (size_t j = 0; seen && j < npods; j++)
        seen[j] = bound_at(t, pods[j].key);
    store_abort(t); /* reads never write */
    for (size_t i = 0; i < n; i++) {
        /* Shared and read-only: admission keeps stored quotas parsed. */
        json_t *q = rc == 0 ? quota_obj_json(objs[i]) : NULL;
        rlist *hard = q ? list_of(q, "hard") : NULL, *used = q ? usage[i] : NULL;
        rlist *want = hard ? tracked(q, pod, d, hard) : NULL, *base = NULL, *total = NULL;
        rlist *over = NULL;
        if (q && (!hard || !used || !want)) rc = -1;
        if (rc == 0 && rl_len(want) > 0) {
            base = base_usage(as_of[i], used, assumed, pods, seen, npods);
            over = base ? over_limit(base, want, hard, &total) : NULL;
            if (!over) rc = -1;
        }
        if (rc == 0 && over && rl_len(over) > 0) {
            rlist *r = rl_mask(want, over), *u = rl_mask(base, over), *h = rl_mask(hard, over);
            for (size_t k = 0; u && k < rl_len(over); k++) /* nothing used yet prints as 0 */
                if (!rl_has(u, rl_name(over, k))) rl_add_name(u, rl_name(over, k));
            rc = r && u && h && sched_quota_message_rl(msg, nnodes, objs[i]->name, r, u, h) == 0
                     ? 1
                     : -1;
            snprintf(quota, quota_len, "%s", objs[i]->name);
            blocked_on = want;
            want = NULL;
            rl_free(r);
            rl_free(u);
            rl_free(h);
        }
        rl_free(hard);
        rl_free(want);
        rl_free(base);
        rl_free(total);
        rl_free(over);
        json_decref(q);
        store_obj_unref(objs[i]);
    }
    for (size_t i = 0; usage && i < n; i++)
        rl_free(usage[i]);
    free(usage);
    free(as_of);
    free(objs);
    free(seen);
    if (rc == 0)
        *deferred = d;
    else
        rl_free(d);
    if (rc == 1 && demand)
        *demand = blocked_on;
    else
        rl_free(blocked_on);
    return rc;
}

static void exceeded(api_err *e, const json_t *pod, const char *quota, const rlist *r,
                     const rlist *u, const rlist *h)
{
    dbuf rs, us, hs;
    dbuf_init(&rs, 4096);
    dbuf_init(&us, 4096);
    dbuf_init(&hs, 4096);
    rl_format(r, &rs);
    rl_format(u, &us);
    rl_format(h, &hs);
    const char *name = meta_str(pod, "name");
    api_err_set(
        e, API_FORBIDDEN,
        "pods \"%s\" is forbidden: exceeded quota: %s, requested: %s, used: %s, limited: %s",
        name ? name : "", quota, rs.p ? rs.p : "", us.p ? us.p : "", hs.p ? hs.p : "");
    api_err_details(e, name, "", "pods");
    dbuf_free(&rs);
    dbuf_free(&us);
    dbuf_free(&hs);
}

int quota_deferred_bind(const ql_view *quotas, size_t n, const json_t *pod, rlist **new_used,
                        api_err *e)
{
    rlist *d = pod_deferred(pod);
    quota_scope_subject *subj = d ? quota_scope_subject_new("", "pods", pod) : NULL;
    if (!subj) {
        rl_free(d);
        return api_err_set(e, API_INTERNAL, "out of memory");
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        new_used[i] = NULL;
        if (rc) continue;
        const quota_prepared *p = quotas[i].prep;
        const rlist *hard = quota_prepared_hard(p), *used = quotas[i].used;
        char err[256];
        rlist *want = quota_prepared_matches(p, "", "pods", subj, err, sizeof err) == 1
                          ? rl_mask(d, hard)
                          : rl_new(),
              *total = NULL, *over = NULL;
        if (!want) rc = api_err_set(e, API_INTERNAL, "cannot read quota");
        if (rc == 0 && rl_len(want) > 0) {
            over = over_limit(used, want, hard, &total);
            if (!over) {
                rc = api_err_set(e, API_INTERNAL, "out of memory");
            } else if (rl_len(over) > 0) {
                rlist *r = rl_mask(want, over), *u = rl_mask(used, over), *h = rl_mask(hard, over);
                for (size_t k = 0; u && k < rl_len(over); k++)
                    if (!rl_has(u, rl_name(over, k))) rl_add_name(u, rl_name(over, k));
                exceeded(e, pod, quota_prepared_name(quotas[i].prep), r, u, h);
                rl_free(r);
                rl_free(u);
                rl_free(h);
                rc = -1;
            } else {
                new_used[i] = total;
                total = NULL;
            }
        }
        rl_free(want);
        rl_free(total);
        rl_free(over);
    }
    rl_free(d);
    quota_scope_subject_free(subj);
    if (rc != 0)
        for (size_t k = 0; k < n; k++) {
            rl_free(new_used[k]);
            new_used[k] = NULL;
        }
    return rc;
}

int quota_deferred_each(const ql_view *quotas, size_t n, const json_t *pod,
                        quota_deferred_row_fn row, void *arg)
{
    rlist *d = pod_deferred(pod);
    quota_scope_subject *subj = d ? quota_scope_subject_new("", "pods", pod) : NULL;
    int rc = subj ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const quota_prepared *p = quotas[i].prep;
        const rlist *hard = quota_prepared_hard(p);
        char err[256];
        if (quota_prepared_matches(p, "", "pods", subj, err, sizeof err) != 1) continue;
        rlist *want = rl_mask(d, hard), *after = want ? rl_add(quotas[i].used, want) : NULL;
        if (!after)
            rc = -1;
        else if (rl_len(want) > 0)
            row(arg, i, hard, quotas[i].used, want, after);
        rl_free(want);
        rl_free(after);
    }
    rl_free(d);
    quota_scope_subject_free(subj);
    return rc;
}
