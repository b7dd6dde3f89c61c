/* quota_admission.c - ResourceQuota admission and accounting, inside the write
 * transaction.
 *
 * INVARIANT (at every commit): for every quota q and key r in q's hard,
 *   used(q)[r] == sum over stored objects o matching q of usage(o)[r],
 * where used(q) is the ledger's (quota_ledger.h), which commits with the
 * transaction and which q's stored status.used follows. It holds because every
 * write that can change a usage goes through here in the same transaction as
 * the write itself:
 *  - create/update that upstream evaluates: quota_check decides (upstream's
 *    order and words) and its new used values are staged with the object;
 *  - update that upstream does not evaluate (e.g. a pod turning terminal, a
 *    status write) and delete: usage moves by the exact difference, and a key
 *    that rises is checked against hard like a charge (release);
 *  - a quota's own create/update: its status is recounted from the store;
 *  - a namespace's quota mode change: its quotas are recounted under the new
 *    mode (namespace_mode).
 * Pod usage is evaluated with now = 0 everywhere (admission and recount), so a
 * time-dependent rule cannot make the charge and the release disagree.
 * The decisions themselves are pure (core/quota_check.c, core/quota_eval.c).
 */
#include "registry/quota_admission.h"
#include "core/jdump.h"

#include "api/core_validation.h"
#include "api/pool_kinds.h"
#include "api/yaml.h"
#include "core/deferred.h"
#include "core/quota_check.h"
#include "registry/explain.h"
#include "registry/quota_cache.h"
#include "registry/quota_deferred.h"
#include "registry/quota_ledger.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUOTA_NOW 0 /* see the invariant above */

/* ResourceQuotaConfiguration.limitedResources, set once at startup. */
static json_t *limited_resources;

static bool is_quota_kind(const api_kind *k)
{
    return !*k->group && !strcmp(k->resource, "resourcequotas");
}

static const char *meta_str(const json_t *obj, const char *f)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), f));
}

/* ---- the per-object facts cache ----
 * Every stored object of a kind quota evaluates carries its quota_facts in
 * idx.ext, computed by the store's indexer from the object as written (or as
 * loaded), with QUOTA_NOW: what the recount would compute from the JSON, kept
 * so that a recount never parses it. ext_free doubles as the type tag. */
static void facts_free(void *f)
{
    quota_facts_free(f);
}

/* The facts of the object admission just charged, handed to the indexer of
 * the same transaction so that the object's usage is computed once per write,
 * not once for the check and again for the index. The object is matched by
 * pointer; nothing between admission and the put changes what facts depend on
 * (debug builds recompute and compare). Under the writer lock, like the whole
 * transaction; the end hook drops what was not taken. */
static struct {
    store_txn *txn;
    const json_t *obj;
    quota_facts *facts;
} handoff;

static void handoff_drop(void *arg, int64_t rev, bool committed)
{
    (void)arg;
    (void)rev;
    (void)committed;
    quota_facts_free(handoff.facts);
    handoff.facts = NULL;
    handoff.obj = NULL;
    handoff.txn = NULL;
}

/* Takes f (NULL allowed: nothing is handed over). */
static void handoff_set(store_txn *t, const json_t *obj, quota_facts *f)
{
    if (handoff.txn != t) {
        if (!f || store_txn_on_end(t, handoff_drop, NULL) != 0) {
            quota_facts_free(f); /* the indexer computes them again */
            return;
        }
        handoff.txn = t;
    }
    quota_facts_free(handoff.facts);
    handoff.facts = f;
    handoff.obj = f ? obj : NULL;
}

static quota_facts *handoff_take(const json_t *obj)
{
    if (!handoff.facts || handoff.obj != obj) return NULL;
    quota_facts *f = handoff.facts;
    handoff.facts = NULL;
    handoff.obj = NULL;
    return f;
}

void quota_index(const api_kind *k, const json_t *obj, store_index *out)
{
    if (!k->namespaced || quota_ignored_resource(k->group, k->resource)) return;
    quota_facts *f = handoff_take(obj);
#ifndef NDEBUG
    if (f) {
        quota_facts *fresh = quota_facts_new(k->group, k->resource, obj, QUOTA_NOW);
        if (fresh && !quota_facts_equal(f, fresh)) abort(); /* the object changed after admission */
        quota_facts_free(fresh);
    }
#endif
    out->ext = f ? f : quota_facts_new(k->group, k->resource, obj, QUOTA_NOW);
    out->ext_free = out->ext ? facts_free : NULL;
}

static const quota_facts *cached_facts(const store_obj *o)
{
    return o->idx.ext_free == facts_free ? o->idx.ext : NULL;
}

/* Add the objects of kind k under prefix to acc (cached facts, else parsed). */
/* Whether a stored pod is assigned, from its selector fields (no parsing). */
static bool assigned(const store_obj *o)
{
    for (const char *p = o->idx.fields; p && *p;) {
        const char *val = p + strlen(p) + 1;
        if (!strcmp(p, "spec.nodeName")) return *val != '\0';
        p = val + strlen(val) + 1;
    }
    return false;
}

/* Deferred namespaces: an unassigned pod's compute usage goes to `held`,
 * which the caller takes back out (core/deferred.c's rule). */
static int recount_kind(store_txn *t, const char *prefix, quota_recount_ctx *c, const api_kind *k,
                        rlist *acc, rlist *held)
{
    store_obj **objs = NULL;
    size_t n = 0;
    bool pods = held && !*k->group && !strcmp(k->resource, "pods");
    if (store_txn_list(t, prefix, &objs, &n) != 0) return -1;
    for (size_t j = 0; j < n; j++) {
        const quota_facts *f = cached_facts(objs[j]);
        quota_facts *parsed = NULL;
        if (!f) {
            json_t *o = store_obj_parse(objs[j]);
            f = parsed = o ? quota_facts_new(k->group, k->resource, o, QUOTA_NOW) : NULL;
            json_decref(o);
        }
        if (f) quota_recount_add_facts(c, f, pods && !assigned(objs[j]) ? held : acc);
        quota_facts_free(parsed);
        store_obj_unref(objs[j]);
    }
    free(objs);
    return 0;
}

/* The recount with the namespace's mode given: a namespace write recounts
 * under the mode it is about to store. */
static int recount(store_txn *t, const json_t *quota, bool deferred, json_t **used)
{
    const char *ns = meta_str(quota, "namespace");
    rlist *acc = rl_new(), *held = deferred ? rl_new() : NULL;
    int rc = acc && ns ? 0 : -1;
    char res[256], prefix[600];
    size_t nk = api_kind_count();
    for (size_t i = 0; i < nk && rc == 0; i++) {
        const api_kind *k = api_kind_at(i);
        /* each resource once (another version's row holds the same objects) */
        if (!k->namespaced || !api_kind_primary(k) ||
            quota_recount_begin(quota, k->group, k->resource, acc) <= 0)
            continue;
        api_kind_store_resource(k, res, sizeof res);
        snprintf(prefix, sizeof prefix, "%s/%s/", res, ns);
        quota_recount_ctx *c = quota_recount_prepare(quota, k->group, k->resource);
        rc = c ? recount_kind(t, prefix, c, k, acc, held) : -1;
        quota_recount_ctx_free(c);
    }
    if (rc == 0 && held) { /* unassigned pods still count, but not their compute */
        rlist *deferred = quota_deferred_only(held),
              *kept = deferred ? rl_subtract(held, deferred) : NULL;
        rc = kept && rl_add_to(acc, kept) == 0 ? 0 : -1;
        rl_free(deferred);
        rl_free(kept);
    }
    *used = rc == 0 ? quota_status_used_for(quota, acc) : NULL;
    rl_free(acc);
    rl_free(held);
    return *used ? 0 : -1;
}

int quota_recount_in_txn(store_txn *t, const json_t *quota, json_t **used)
{
    return recount(t, quota, quota_ns_deferred(t, NULL, meta_str(quota, "namespace")), used);
}

/* One object as every quota of its namespace sees it: its usage (with the
 * deferred mask) and its scope facts, worked out once. An absent object (the
 * new side of a delete) charges nothing. */
typedef struct quota_side {
    rlist *usage; /* NULL: no object */
    quota_scope_subject *subj;
} quota_side;

/* s must be zeroed; side_cleanup it whatever this returns. */
static int side_init(quota_side *s, const api_kind *k, const json_t *obj, bool deferred)
{
    if (!obj) return 0;
    if (!(s->usage = rl_new()) || !(s->subj = quota_scope_subject_new(k->group, k->resource, obj)))
        return -1;
    /* An object whose usage does not evaluate charges nothing (the recount agrees). */
    if (quota_usage(k->group, k->resource, obj, QUOTA_NOW, s->usage) != 0) rl_clear(s->usage);
    if (deferred) quota_deferred_mask(k->group, k->resource, obj, s->usage);
    return 0;
}

static void side_cleanup(quota_side *s)
{
    rl_free(s->usage);
    quota_scope_subject_free(s->subj);
}

/* What quota p charges for the side's object: its usage masked to p's hard
 * when p matches the object (Matches), else nothing. NULL on OOM. */
static rlist *contribution(const quota_prepared *p, const api_kind *k, const quota_side *s)
{
    char err[256];
    if (!s->usage ||
        quota_prepared_matches(p, k->group, k->resource, s->subj, err, sizeof err) != 1)
        return rl_new();
    return rl_mask(s->usage, quota_prepared_hard(p));
}

/* A quota written by a client: status.hard mirrors spec.hard, and status.used
 * is recounted now, so the quota is enforced from the moment it exists. */
static int fill_own_status(store_txn *t, json_t *quota, reg_op op, api_err *e)
{
    json_t *hard = json_object_get(json_object_get(quota, "spec"), "hard");
    json_t *status = json_object();
    json_object_set_new(status, "hard", hard ? jcopy(hard) : json_object());
    json_t *old_status = json_object_get(quota, "status");
    json_t *old_used = json_object_get(old_status, "used");
    if (old_used) json_object_set(status, "used", old_used);
    json_object_set_new(quota, "status", status);
    json_t *used = NULL;
    if (quota_recount_in_txn(t, quota, &used) != 0)
        return api_err_set(e, API_INTERNAL, "cannot recount quota");
    json_object_set_new(status, "used", used);
    if (op != REG_CREATE) return 0;
    /* A new quota is not in the store yet, but it counts itself (resourcequotas),
     * as upstream's recount, run after the create, does. */
    const api_kind *k = api_kind_find("", "v1", "resourcequotas");
    char err[512];
    quota_prepared *p = quota_prepare(quota, err, sizeof err);
    rlist *cur = rl_new(), *self = NULL;
    quota_side side = {0};
    const char *bad = NULL;
    int rc =
        p && cur && rl_from_json(used, cur, &bad) == 0 ? side_init(&side, k, quota, false) : -1;
    if (rc == 0) self = contribution(p, k, &side);
    side_cleanup(&side);
    if (!self || rl_add_to(cur, self) != 0) rc = -1;
    if (rc == 0 && rl_len(self)) json_object_set_new(status, "used", rl_to_json(cur));
    quota_prepared_free(p);
    rl_free(self);
    rl_free(cur);
    return rc == 0 ? 0 : api_err_set(e, API_INTERNAL, "cannot count quota");
}

/* A denial. quota_check's plain errors (upstream's code 500: a quota whose
 * scopes do not evaluate, limitedResources scopes no quota covers) come from
 * the namespace's quota objects, not from the server: the request is refused
 * by that policy, so allot answers 403 with upstream's text. Only running out
 * of memory is a server error. */
static void forbidden(api_err *e, const api_kind *k, const json_t *obj, const quota_result *res)
{
    const char *name = meta_str(obj, "name");
    if (!name) name = meta_str(obj, "generateName");
    if (res->code == 500 && (!res->message || !strcmp(res->message, "out of memory"))) {
        api_err_set(e, API_INTERNAL, "%s", res->message ? res->message : "quota check failed");
        return;
    }
    char gr[200];
    if (*k->group)
        snprintf(gr, sizeof gr, "%s.%s", k->resource, k->group);
    else
        snprintf(gr, sizeof gr, "%s", k->resource);
    api_err_set(e, API_FORBIDDEN, "%s \"%s\" is forbidden: %s", gr, name ? name : "",
                res->message ? res->message : "");
    api_err_details(e, name, k->group, k->resource);
}

/* Move usage from what `old` charged to what `nw` charges (nw NULL on
 * delete): the exact difference, per quota, staged unless dry_run. A key that
 * rises is checked against hard (quota_check_move), whatever the write: a
 * pod's phase back from Succeeded/Failed or its containerStatuses' allocated
 * resources through pods/status, a PVC's status.allocatedResources, and the
 * rise of an UPDATE CheckRequest has just allowed (which it allows again: the
 * same increase against the same usage). A decrease is never refused. */
static int release(store_txn *t, const api_kind *k, const ql_view *qs, size_t n, const json_t *old,
                   const json_t *nw, bool deferred, bool dry_run, api_err *e)
{
    quota_side was = {0}, is = {0};
    int rc =
        side_init(&was, k, old, deferred) == 0 && side_init(&is, k, nw, deferred) == 0 ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rlist *before = contribution(qs[i].prep, k, &was),
              *after = contribution(qs[i].prep, k, &is), *next = NULL;
        char *msg = NULL;
        rc = before && after ? 0 : -1;
        if (rc == 0 && !rl_equal(before, after)) {
            int m = quota_check_move(qs[i].prep, qs[i].used, before, after, &next, &msg);
            if (m == 1) {
                forbidden(e, k, nw ? nw : old, &(quota_result){.code = 403, .message = msg});
                rc = -1;
            } else if (m != 0) {
                rc = -1;
            } else if (next && !dry_run) {
                rc = quota_ledger_set(t, &qs[i], next, e);
                next = NULL;
            }
            /* next NULL: a usage this quota cannot hold exactly (a recount
             * that met one leaves it out too); left for the controller's resync */
        }
        rl_free(next);
        free(msg);
        rl_free(before);
        rl_free(after);
    }
    side_cleanup(&was);
    side_cleanup(&is);
    if (rc != 0) return e->code ? -1 : api_err_set(e, API_INTERNAL, "quota accounting failed");
    return 0;
}

/* pods/binding in a deferred namespace: the atomic re-check. The pod's compute
 * usage is charged now, in the transaction that assigns it, or the bind is
 * refused; nothing else can commit in between. */
static int charge_binding(store_txn *t, const ql_view *qs, size_t n, const json_t *pod,
                          bool dry_run, api_err *e)
{
    rlist **used = calloc(n ? n : 1, sizeof *used);
    int rc = used ? quota_deferred_bind(qs, n, pod, used, e)
                  : api_err_set(e, API_INTERNAL, "out of memory");
    for (size_t i = 0; used && i < n; i++) {
        if (rc == 0 && used[i] && !dry_run)
            rc = quota_ledger_set(t, &qs[i], used[i], e);
        else
            rl_free(used[i]);
    }
    free(used);
    return rc;
}

/* The request's object holds a resource list or quantity the quota
 * evaluators cannot read (upstream's decoding would have refused it, 400):
 * 422 with the fields at fault, as validation reports them. */
static int unevaluable(api_err *e, const api_kind *k, const json_t *obj)
{
    json_t *causes = json_array();
    const char *name = meta_str(obj, "name");
    if (causes && cv_quota_quantities(k->group, k->resource, obj, causes) > 0)
        return api_err_invalid(e, k->group, k->kind, name, causes);
    json_decref(causes);
    return api_err_set(e, API_BAD_REQUEST,
                       "%s \"%s\" is invalid: its quota usage cannot be evaluated", k->kind,
                       name ? name : "");
}

/* An UPDATE whose stored object's usage does not evaluate (stored before
 * validation refused such values): that object charged nothing (release and
 * the recount agree), so the new one is charged in full, as on a create. The
 * check sees the stored object without its resourceVersion, quota_check's
 * sign for exactly that. */
static int check_unevaluable_old(quota_request *rq, const quota_view *views, size_t n,
                                 quota_result *res)
{
    json_t *old = json_copy((json_t *)rq->old);
    json_t *meta = old ? json_copy(json_object_get(old, "metadata")) : NULL;
    if (!meta || json_object_set_new(old, "metadata", meta) != 0) {
        json_decref(old);
        memset(res, 0, sizeof *res);
        return QUOTA_ENOMEM;
    }
    json_object_del(meta, "resourceVersion");
    const json_t *stored = rq->old;
    rq->old = old;
    int rc = quota_check_views(rq, views, n, res);
    rq->old = stored;
    json_decref(old);
    return rc;
}

/* ---- explanations (registry/explain.h) ---- */

typedef struct explain_ctx {
    reg_explain *x;
    const char *ns;
    const ql_view *qs;
    size_t n;
} explain_ctx;

static void qty_text(const rlist *l, const char *name, char buf[QTY_STR_MAX])
{
    const qty *q = l ? rl_get(l, name) : NULL;
    qty z = qty_zero(QTY_DECIMAL_SI);
    qty_format_str(q ? q : &z, buf, QTY_STR_MAX);
}

/* quota_request.explain: one entry per quota, a row per name of hard the
 * request changes. A quota a ResourcePool keeps says which pool. */
static void explain_quota(void *arg, const char *quota, const rlist *hard, const rlist *used,
                          const rlist *requested, const rlist *after, const char *exceeded)
{
    explain_ctx *c = arg;
    json_t *en = reg_explain_entry(c->x, "ResourceQuota", c->ns, quota);
    if (!en) return;
    for (size_t i = 0; i < c->n; i++) {
        const json_t *q = quota_prepared_json(c->qs[i].prep);
        if (strcmp(quota_prepared_name(c->qs[i].prep), quota)) continue;
        const char *pool = json_string_value(
            json_object_get(json_object_get(json_object_get(q, "metadata"), "labels"), POOL_LABEL));
        if (pool) json_object_set_new(en, "pool", json_string(pool));
        break;
    }
    for (size_t i = 0; i < rl_len(requested); i++) {
        const char *name = rl_name(requested, i);
        char h[QTY_STR_MAX], u[QTY_STR_MAX], r[QTY_STR_MAX], a[QTY_STR_MAX];
        qty_text(hard, name, h);
        qty_text(used, name, u);
        qty_format_str(rl_qty(requested, i), r, sizeof r);
        qty_text(after, name, a);
        const qty *nq = after ? rl_get(after, name) : NULL, *hq = rl_get(hard, name);
        bool over =
            exceeded && nq && hq && qty_sign(rl_qty(requested, i)) > 0 && qty_cmp(nq, hq) > 0;
        reg_explain_row(en, name, h, u, r, after ? a : NULL, over);
    }
    if (exceeded) reg_explain_deny(en, exceeded);
}

/* quota_deferred_each: the compute usage the bind would charge to quota i,
 * as rows of its entry (" (exceeded)" where the bind would find it over). */
static void explain_deferred_row(void *arg, size_t i, const rlist *hard, const rlist *used,
                                 const rlist *want, const rlist *after)
{
    explain_ctx *c = arg;
    const char *quota = quota_prepared_name(c->qs[i].prep);
    json_t *en = reg_explain_find(c->x, "ResourceQuota", c->ns, quota);
    if (!en) en = reg_explain_entry(c->x, "ResourceQuota", c->ns, quota);
    for (size_t k = 0; en && k < rl_len(want); k++) {
        const char *name = rl_name(want, k);
        char h[QTY_STR_MAX], u[QTY_STR_MAX], r[QTY_STR_MAX], a[QTY_STR_MAX];
        qty_text(hard, name, h);
        qty_text(used, name, u);
        qty_format_str(rl_qty(want, k), r, sizeof r);
        qty_text(after, name, a);
        const qty *nq = rl_get(after, name), *hq = rl_get(hard, name);
        reg_explain_row(en, name, h, u, r, a, nq && hq && qty_cmp(nq, hq) > 0);
    }
}

/* Under deferred quota a pod is admitted whatever its compute quota and
 * waits Pending while the quota cannot hold it: an explanation shows what
 * the bind would charge to each quota, and says which quota would hold the
 * pod, with its own words, as the bind's re-check would put them now. */
static void explain_deferred(const ql_view *qs, size_t n, const json_t *obj)
{
    reg_explain *x = reg_explain_current();
    if (!x || !json_object_get(obj, "spec") ||
        !json_object_get(json_object_get(obj, "spec"), "containers"))
        return; /* (not a pod) */
    explain_ctx xc = {x, meta_str(obj, "namespace"), qs, n};
    quota_deferred_each(qs, n, obj, explain_deferred_row, &xc);
    rlist **used = calloc(n ? n : 1, sizeof *used);
    api_err e;
    api_err_init(&e);
    if (used && quota_deferred_bind(qs, n, obj, used, &e) != 0 && e.code == API_FORBIDDEN) {
        const char *why = strstr(e.message, "exceeded quota: ");
        char name[256] = "";
        if (why) sscanf(why, "exceeded quota: %255[^,]", name);
        json_t *en = reg_explain_find(x, "ResourceQuota", meta_str(obj, "namespace"), name);
        if (en)
            json_object_set_new(en, "outcome",
                                json_sprintf("would wait Pending: %s", why ? why : e.message));
    }
    for (size_t i = 0; used && i < n; i++)
        rl_free(used[i]);
    free(used);
    api_err_clear(&e);
}

static int check_and_charge(store_txn *t, const api_kind *k, reg_op op, const char *sub,
                            const ql_view *qs, size_t n, const json_t *obj, const json_t *old,
                            bool deferred, bool dry_run, api_err *e)
{
    const char *ns = meta_str(obj, "namespace");
    quota_request rq = {.namespace_ = ns,
                        .group = k->group,
                        .resource = k->resource,
                        .subresource = sub,
                        .op = op == REG_CREATE ? QUOTA_CREATE : QUOTA_UPDATE,
                        .obj = obj,
                        .old = old,
                        .limited = limited_resources,
                        .deferred = deferred,
                        .now = QUOTA_NOW};
    explain_ctx xc = {reg_explain_current(), ns, qs, n};
    if (xc.x) {
        rq.explain = explain_quota;
        rq.explain_arg = &xc;
    }
    /* The object's usage, once: for the check, then for the store's index. */
    rlist *usage = rl_new();
    quota_view *views = usage ? calloc(n ? n : 1, sizeof *views) : NULL;
    if (!views) {
        rl_free(usage);
        return api_err_set(e, API_INTERNAL, "out of memory");
    }
    rq.usage = usage;
    rq.usage_rc = quota_usage(k->group, k->resource, obj, QUOTA_NOW, usage);
    for (size_t i = 0; i < n; i++)
        views[i] = (quota_view){qs[i].prep, qs[i].used};
    quota_result res;
    int rc = quota_check_views(&rq, views, n, &res);
    if (rc == QUOTA_EINVAL && !res.message && rq.usage_rc == 0 && old) {
        quota_result_cleanup(&res);
        rc = check_unevaluable_old(&rq, views, n, &res);
    }
    free(views);
    if (rc == 0 && res.allowed && !dry_run)
        handoff_set(t, obj, quota_facts_of_usage(k->group, k->resource, obj, usage, rq.usage_rc));
    rl_free(usage);
    if (rc == QUOTA_ENOMEM || (rc != 0 && !res.message)) {
        quota_result_cleanup(&res);
        if (rc == QUOTA_EINVAL && rq.usage_rc == QUOTA_EINVAL) return unevaluable(e, k, obj);
        return api_err_set(e, API_INTERNAL,
                           rc == QUOTA_ENOMEM ? "out of memory" : "quota check failed");
    }
    if (rc != 0 || !res.allowed) {
        if (rc != 0) res.code = 500;
        forbidden(e, k, obj, &res);
        quota_result_cleanup(&res);
        return -1;
    }
    /* Upstream charges an UPDATE's increase and never credits a decrease in
     * admission (its controller recomputes later). Here used must equal the
     * recount at every commit, so an allowed UPDATE moves usage by the exact
     * difference: the increase just checked, and any decrease. A `status`
     * write's increase, which upstream charges unchecked, is checked there. */
    if (op == REG_UPDATE) rc = release(t, k, qs, n, old, obj, deferred, dry_run, e);
    for (size_t i = 0; op != REG_UPDATE && !dry_run && i < res.nquotas && rc == 0; i++) {
        if (!res.next[i]) continue;
        rc = quota_ledger_set(t, &qs[i], res.next[i], e);
        res.next[i] = NULL;
    }
    quota_result_cleanup(&res);
    return rc;
}

/* ---- a namespace's quota mode ----
 * Relabelling a namespace's quota.allot.dev/mode (deferred <-> admission)
 * changes what its unassigned pods charge (core/deferred.h): their cpu and
 * memory start counting in admission mode and stop in deferred mode. So every
 * quota of the namespace is recounted under the mode being stored, in the
 * transaction that stores it. The flip to deferred only lowers usage. The
 * flip to admission may raise it and, like every write that raises usage, is
 * refused (403, upstream's "exceeded quota" text) when a key would rise above
 * its hard: in admission mode nothing holds unassigned pods back from being
 * bound, so the pods the quota cannot hold would run, not just be counted.
 * (Lowering hard below usage, allowed, starts nothing.) docs/decisions.md. */

/* The refusal of the flip to admission mode: upstream's 403 shape, naming
 * the quota, why (the pods waiting on it would be charged), the usual
 * exceeded-quota detail, and what to do. */
static void mode_refused(api_err *e, const api_kind *k, const json_t *ns_obj, const ql_view *v,
                         char *exceeded)
{
    const char *ns = meta_str(ns_obj, "name"), *q = quota_prepared_name(v->prep);
    char *text = NULL;
    if (asprintf(&text,
                 "cannot set %s=admission: the pods waiting on ResourceQuota \"%s\" under "
                 "deferred quota would be charged to it at once and exceed it (%s); delete "
                 "those pods or wait until they are scheduled (kubectl get pods -n %s "
                 "--field-selector status.pendingOnQuota=%s), or raise the quota's hard, then "
                 "set the label again",
                 DEFERRED_MODE_LABEL, q, exceeded, ns ? ns : "", q) < 0)
        text = NULL;
    forbidden(e, k, ns_obj, &(quota_result){.code = 403, .message = text ? text : exceeded});
    free(text);
}

/* Quota v recounted as if the namespace's mode were `deferred`, checked and
 * staged (not when dry_run). */
static int recount_for_mode(store_txn *t, const api_kind *k, const json_t *ns_obj, const ql_view *v,
                            bool deferred, bool dry_run, api_err *e)
{
    json_t *quota = quota_obj_json(v->obj), *used = NULL;
    rlist *next = rl_new();
    char *msg = NULL;
    const char *bad = NULL;
    int rc = quota && next && recount(t, quota, deferred, &used) == 0 &&
                     rl_from_json(used, next, &bad) == 0
                 ? 0
                 : api_err_set(e, API_INTERNAL, "cannot recount quota");
    if (rc == 0 && !rl_equal(next, v->used)) {
        int m = quota_check_usage(v->prep, v->used, next, &msg);
        if (m == 1) {
            mode_refused(e, k, ns_obj, v, msg);
            rc = -1;
        } else if (m != 0) {
            rc = api_err_set(e, API_INTERNAL, "out of memory");
        } else if (!dry_run) {
            rc = quota_ledger_set(t, v, next, e);
            next = NULL;
        }
    }
    free(msg);
    rl_free(next);
    json_decref(used);
    json_decref(quota);
    return rc;
}

/* A write of Namespace `obj` (its stored version `old`): when it changes the
 * quota mode, the namespace's quotas follow in this transaction. A namespace
 * not stored counts as deferred, as quota_ns_deferred reads it. */
static int namespace_mode(store_txn *t, const api_kind *k, reg_op op, const json_t *obj,
                          const json_t *old, bool dry_run, api_err *e)
{
    bool was = quota_ns_obj_deferred(op == REG_CREATE ? NULL : old);
    bool is = quota_ns_obj_deferred(op == REG_DELETE ? NULL : obj);
    const char *ns = meta_str(obj, "name");
    if (was == is || !ns || !*ns) return 0;
    ql_view *qs = NULL;
    size_t n = 0;
    if (quota_ledger_load(t, ns, &qs, &n, e) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = recount_for_mode(t, k, obj, &qs[i], is, dry_run, e);
    free(qs);
    return rc;
}

static int quota_admit(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                       const json_t *old, bool dry_run, api_err *e)
{
    if (k->flags & API_KIND_NAMESPACE) return namespace_mode(t, k, op, obj, old, dry_run, e);
    if (!k->namespaced || quota_ignored_resource(k->group, k->resource)) return 0;
    const char *ns = meta_str(obj, "namespace");
    if (!ns || !*ns) return 0;
    ql_view *qs = NULL;
    size_t n = 0;
    if (quota_ledger_load(t, ns, &qs, &n, e) != 0) return -1;
    int rc = 0;
    bool deferred = quota_ns_deferred(t, NULL, ns);
    /* limitedResources must be covered by a quota: checked even with none. */
    if (n > 0 || json_array_size(limited_resources) > 0) {
        quota_op qop = op == REG_CREATE ? QUOTA_CREATE : QUOTA_UPDATE;
        if (op == REG_DELETE)
            rc = dry_run ? 0 : release(t, k, qs, n, obj, NULL, deferred, false, e);
        else if (!strcmp(sub, "binding"))
            rc = deferred ? charge_binding(t, qs, n, obj, dry_run, e) : 0;
        else if (quota_handles(k->group, k->resource, qop, sub, obj, old))
            rc = check_and_charge(t, k, op, sub, qs, n, obj, old, deferred, dry_run, e);
        else if (op == REG_UPDATE) /* a dry run too: a rise may be refused */
            rc = release(t, k, qs, n, old, obj, deferred, dry_run, e);
        if (rc == 0 && deferred && op == REG_CREATE && !*sub) explain_deferred(qs, n, obj);
    }
    free(qs);
    if (rc == 0 && is_quota_kind(k) && op == REG_DELETE && !dry_run) {
        char key[600];
        snprintf(key, sizeof key, "resourcequotas/%s/%s", ns, meta_str(obj, "name") ?: "");
        quota_ledger_forget(t, key);
        quota_cache_drop(key);
    }
    /* Last, a quota written by a client gets its status from the store. */
    if (rc == 0 && is_quota_kind(k) && op != REG_DELETE) rc = fill_own_status(t, obj, op, e);
    return rc;
}

static const reg_admission resource_quota = {"ResourceQuota", quota_admit};

/* The configuration file as JSON: JSON or YAML, as upstream accepts both. */
static json_t *load_config(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 > cap) {
            char *nt = cap < (1u << 24) ? realloc(text, cap = len + 65536) : NULL;
            if (!nt) {
                free(text);
                fclose(f);
                snprintf(err, errlen, "%s: too large or out of memory", path);
                return NULL;
            }
            text = nt;
        }
        got = fread(text + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    json_t *cfg = json_loadb(text, len, 0, NULL);
    if (!cfg) {
        char why[256];
        cfg = yaml_to_json(text, len, why, sizeof why);
        if (!cfg) snprintf(err, errlen, "%s: %s", path, why);
    }
    free(text);
    return cfg;
}

int quota_admission_configure(const char *path, char *err, size_t errlen)
{
    json_t *cfg = load_config(path, err, errlen);
    if (!cfg) return -1;
    const char *kind = json_string_value(json_object_get(cfg, "kind"));
    if (!kind || strcmp(kind, "AdmissionConfiguration")) {
        snprintf(err, errlen, "%s: kind must be AdmissionConfiguration", path);
        json_decref(cfg);
        return -1;
    }
    size_t i;
    json_t *plugin;
    json_array_foreach(json_object_get(cfg, "plugins"), i, plugin)
    {
        const char *name = json_string_value(json_object_get(plugin, "name"));
        if (!name || strcmp(name, "ResourceQuota")) continue;
        json_t *conf = json_object_get(plugin, "configuration");
        json_t *lr = json_object_get(conf, "limitedResources");
        if (lr && !json_is_array(lr)) {
            snprintf(err, errlen, "%s: limitedResources must be a list", path);
            json_decref(cfg);
            return -1;
        }
        json_decref(limited_resources);
        limited_resources = lr ? json_incref(lr) : NULL;
    }
    json_decref(cfg);
    return 0;
}

void quota_admission_cleanup(void)
{
    json_decref(limited_resources);
    limited_resources = NULL;
    quota_ledger_clear();
    quota_cache_clear();
}

/* reg_view_fn: the quota with the usage its books hold, when its stored
 * status.used trails them (the ledger writes it behind, at most 100 ms
 * later); NULL to serve it as stored. Readers always see current usage and
 * never write. */
static json_t *quota_read_view(store_txn *t, store_obj *o, store_obj *cur)
{
    rlist *used = quota_ledger_read_txn(t, cur);
    json_t *q = used ? quota_obj_json(o) : NULL, *u = used ? rl_to_json(used) : NULL, *out = NULL;
    rl_free(used);
    const json_t *stored = json_object_get(json_object_get(q, "status"), "used");
    if (q && u && !json_equal(stored ? stored : json_object(), u) &&
        (out = jcopy(q))) { /* (q is shared, read-only: quota_cache.h) */
        json_t *status = json_object_get(out, "status");
        if (!json_is_object(status)) json_object_set_new(out, "status", status = json_object());
        json_object_set(status, "used", u);
    }
    json_decref(u);
    json_decref(q);
    return out;
}

int quota_admission_register(void)
{
    const api_kind *quotas = api_kind_find("", "v1", "resourcequotas");
    if (reg_index_register(quota_index) != 0 || !quotas ||
        reg_read_view_register(quotas, quota_read_view) != 0)
        return -1;
    return reg_admission_register(&resource_quota);
}
