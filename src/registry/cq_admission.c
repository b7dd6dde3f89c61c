/* cq_admission.c - CustomQuota and GlobalCustomQuota charged in the write's
 * transaction (see cq_admission.h, cq_books.h and docs/decisions.md).
 *
 * Every write of every kind asks the books of the quotas that may count it
 * (the CustomQuotas of its namespace and every GlobalCustomQuota whose
 * namespaces cover it, whose sources name its group/version/kind) what the
 * object counts for now, checks the increases against the limits in
 * Capsule's order (smallest limit first, global before namespaced on a tie,
 * then namespace and name), and, if none is exceeded, changes the books by
 * exactly that in the same transaction. So there is no reservation and no
 * window: a denial never leaves usage behind, a delete releases at once, and
 * a quota's usage equals a recount of the stored objects at every commit.
 *
 * Capsule's rules kept: UPDATE checks only increases and never denies a
 * status update; DELETE is never denied; a quota that counts nothing of
 * this kind costs two index lookups.
 *
 * An object a quota cannot fully evaluate (a value that is not a quantity,
 * a selector that cannot be evaluated: core/cquota.h's problems) is
 * counted as cq_object_usage counts it, exactly as a recount would, and
 * the books note it for the quota's Ready condition. Only the write that
 * brings the problem in is refused, with Capsule's text naming the quota,
 * the path and the value: a create, or an update of an object the quota
 * could read until then. An object that already had a problem (stored
 * before the quota, or by a status update, which is never refused) can
 * still be updated, relabelled, finalized and deleted; other objects never
 * notice. A missing value is 0 and no problem at all.
 *
 * This plugin runs last, after every other admission plugin: its changes to
 * the in-memory books are then undone only by a store failure (an aborted
 * transaction drops the books, and they are recounted).
 */
#include "registry/cq_admission.h"

#include "api/objects.h"
#include "core/jget.h"
#include "registry/cq_books.h"
#include "registry/explain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const api_kind *cq_kind, *gcq_kind;

static const char *meta(const json_t *o, const char *k)
{
    return jtext(json_object_get(o, "metadata"), k);
}

static int forbid(api_err *e, const api_kind *k, const char *name, const char *msg)
{
    api_err_set(e, API_FORBIDDEN, "%s%s%s \"%s\" is forbidden: %s", k->resource,
                *k->group ? "." : "", k->group, name, msg);
    api_err_details(e, name, k->group, k->resource);
    return -1;
}

static const char *type_name(const cq_book *b)
{
    return b->global ? "GlobalCustomQuota" : "CustomQuota";
}

static void fmt_qty(const qty *q, char *buf, size_t n)
{
    qty_format_str(q, buf, n);
}

/* ---- the quotas that may count an object ---- */

typedef struct match {
    ledger_entry *en;
    const cq_book *b;
    /* the object's claim in the books (what it counts for now: usage, and
     * net, its contribution to the total), or NULL */
    const cq_claim *claim;
    bool counts;   /* it counts the object as written */
    bool keep;     /* the books keep what they had for it (a status update that
                      could not be evaluated at all) */
    bool has_sum;  /* sum: the books' sum of nets with this write (check) */
    char *problem; /* the object's problem as written (core/cquota.h), or NULL */
    qty usage;     /* ... for this much */
    qty net;       /* ... contributing this much */
    qty sum;
} match;

/* What the quota counts the object for now, and its net (0 without a claim). */
static qty old_usage(const match *x)
{
    return x->claim ? cq_claim_usage(x->claim) : qty_zero(QTY_DECIMAL_SI);
}

static qty old_net(const match *x)
{
    return x->claim ? cq_claim_net(x->claim) : qty_zero(QTY_DECIMAL_SI);
}

typedef struct matches {
    match *v;
    size_t n, cap;
} matches;

static int add_match(matches *m, ledger_entry *en, api_err *e)
{
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 4;
        match *nv = realloc(m->v, nc * sizeof *nv);
        if (!nv) return api_err_set(e, API_INTERNAL, "out of memory");
        m->v = nv;
        m->cap = nc;
    }
    match *x = &m->v[m->n++]; /* (the rest is set by evaluate) */
    x->en = en;
    x->b = cq_book_value(en);
    x->problem = NULL;
    return 0;
}

/* The quotas under `prefix` whose sources name kind k and cover ns. */
static int collect(store_txn *t, const char *prefix, const api_kind *k, const char *ns, matches *m,
                   api_err *e)
{
    store_obj **objs = NULL;
    size_t n = 0;
    /* (borrowed: no reference taken and dropped on each quota; any order:
     * match_cmp decides) */
    if (store_txn_list_borrowed(t, prefix, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot read custom quotas");
    int rc = 0;
    if (m->n + n > m->cap) { /* (one allocation for the quotas listed) */
        match *nv = realloc(m->v, (m->n + n) * sizeof *nv);
        if (nv) m->v = nv, m->cap = m->n + n;
    }
    for (size_t i = 0; i < n; i++) {
        ledger_entry *en = rc == 0 ? cq_book_of(t, objs[i], e) : NULL;
        if (!en) {
            if (rc == 0) rc = -1;
            continue;
        }
        const cq_book *b = cq_book_value(en);
        /* (a CustomQuota listed under its namespace covers it) */
        if (cq_book_targets(b, k) && (!b->global || cq_book_covers(b, ns)))
            rc = add_match(m, en, e);
    }
    free(objs);
    return rc;
}

/* Capsule's order: limit ascending, global before namespaced on equal
 * limits, then namespace and name. */
static int match_cmp(const void *pa, const void *pb)
{
    const cq_book *a = ((const match *)pa)->b, *b = ((const match *)pb)->b;
    int c = qty_cmp(cq_limit(a->q), cq_limit(b->q));
    if (!c) c = (int)b->global - (int)a->global;
    if (!c) c = strcmp(a->ns, b->ns);
    return c ? c : strcmp(a->name, b->name);
}

static int load_matches(store_txn *t, const api_kind *k, const char *ns, matches *m, api_err *e)
{
    char prefix[400];
    memset(m, 0, sizeof *m);
    int rc = 0;
    if (k->namespaced && *ns) {
        snprintf(prefix, sizeof prefix, CQ_PREFIX "%s/", ns);
        rc = collect(t, prefix, k, ns, m, e);
    }
    if (rc == 0) rc = collect(t, GCQ_PREFIX, k, k->namespaced ? ns : "", m, e);
    return rc;
}

/* ---- charging ---- */

static void gvk_of(const api_kind *k, char *buf, size_t n)
{
    cq_gvk_string(k->group, k->version, k->kind, buf, n);
}

/* What each quota counts the object for, as written (and as it counted it
 * before). A problem the write brings in refuses it (never a status
 * update); what cannot be evaluated at all (out of memory) refuses it too,
 * and on a status update leaves that quota's books as they were. */
static int evaluate_with(const api_kind *k, reg_op op, const char *sub, const json_t *obj,
                         const cq_ident *id, cq_cache *cache, matches *m, api_err *e)
{
    const match *bad = NULL; /* the first quota that refuses, in Capsule's order */
    char err[1400], bad_err[1400];
    bool status = !strcmp(sub, "status");
    for (size_t i = 0; i < m->n; i++) {
        match *x = &m->v[i];
        const cq_claim *c = op == REG_CREATE ? NULL : cq_book_claim_of(x->b, id); /* (a new uid) */
        bool problem = false;
        x->claim = c;
        x->has_sum = false;
        x->keep = false;
        if (cq_object_usage(x->b->q, k->group, k->version, k->kind, obj, cache, &x->counts,
                            &x->usage, &x->net, &problem, err, sizeof err) != 0) {
            if (status) {
                x->keep = true;
                x->counts = c != NULL;
                x->usage = old_usage(x);
                x->net = old_net(x);
                continue;
            }
        } else if (!problem) {
            continue;
        } else {
            /* (as the books keep it: the same text is the same problem) */
            if (!(x->problem = strndup(err, cq_problem_len(err))))
                return api_err_set(e, API_INTERNAL, "out of memory");
            /* a create brings it in; an update, if the quota could read the
             * object until now */
            if (status || (op != REG_CREATE && cq_book_problem_of(x->b, id))) continue;
        }
        if (!bad || match_cmp(x, bad) < 0) {
            bad = x;
            snprintf(bad_err, sizeof bad_err, "%s", err);
        }
    }
    if (!bad) return 0;
    char gvk[600];
    gvk_of(k, gvk, sizeof gvk);
    return api_err_set(e, API_FORBIDDEN,
                       "%s resource %s/%s (%s) cannot be admitted because %scustom quota usage "
                       "could not be calculated: %s \"%s\" %s",
                       op == REG_CREATE ? "creating" : "updating", meta(obj, "namespace"),
                       meta(obj, "name"), gvk, op == REG_CREATE ? "" : "new ", type_name(bad->b),
                       bad->b->name, bad_err);
}

static int evaluate(const api_kind *k, reg_op op, const char *sub, const json_t *obj, matches *m,
                    api_err *e)
{
    cq_ident id;
    cq_ident_of(&id, k->group, k->version, k->kind, obj);
    cq_cache *cache = cq_cache_new(); /* (NULL: no cache) */
    int rc = evaluate_with(k, op, sub, obj, &id, cache, m, e);
    cq_cache_free(cache);
    cq_ident_done(&id);
    return rc;
}

/* Capsule's words for quota x refusing a write that would take its sum to
 * `next`. */
static void exceeds_text(const match *x, const qty *next, reg_op op, char *buf, size_t n)
{
    qty none = qty_zero(QTY_DECIMAL_SI);
    cq_exceeds_text(buf, n, op == REG_CREATE, x->b->global, x->b->name, &x->usage, next,
                    cq_limit(x->b->q), &none);
}

/* The first quota, in Capsule's order, that the increase would take past
 * its limit (never on a status update). */
static int check(const api_kind *k, reg_op op, const char *sub, const json_t *obj, matches *m,
                 api_err *e)
{
    if (!strcmp(sub, "status")) return 0;
    const match *x = NULL;
    qty next;
    for (size_t i = 0; i < m->n; i++) {
        match *y = &m->v[i];
        qty was = old_net(y);
        if (!y->counts || qty_cmp(&y->net, &was) <= 0) continue;
        /* the books' sum with this write, kept for apply */
        y->sum = y->b->sum;
        if ((y->claim && qty_sub(&y->sum, &was) != 0) || qty_add(&y->sum, &y->net) != 0)
            return api_err_set(e, API_FORBIDDEN, "custom quota usage beyond supported precision");
        y->has_sum = true;
        qty n = qty_sign(&y->sum) < 0 ? qty_zero(QTY_DECIMAL_SI) : y->sum;
        if (qty_cmp(&n, cq_limit(y->b->q)) > 0 && (!x || match_cmp(y, x) < 0)) {
            x = y;
            next = n;
        }
    }
    if (x) {
        char msg[800];
        exceeds_text(x, &next, op, msg, sizeof msg);
        return forbid(e, k, meta(obj, "name"), msg);
    }
    return 0;
}

/* ---- explanations (registry/explain.h) ---- */

/* One entry per quota that counts (or counted) the object: its sum now, what
 * the write adds to it and the sum it would have, against its limit. */
static void explain(reg_explain *xp, reg_op op, const char *sub, const matches *m)
{
    for (size_t i = 0; i < m->n; i++) {
        const match *x = &m->v[i];
        if (!x->counts && !x->claim) continue;
        json_t *en =
            reg_explain_entry(xp, type_name(x->b), x->b->global ? NULL : x->b->ns, x->b->name);
        if (!en) return;
        qty was = old_net(x), add = x->counts ? x->net : qty_zero(QTY_DECIMAL_SI);
        qty now = qty_sign(&x->b->sum) < 0 ? qty_zero(QTY_DECIMAL_SI) : x->b->sum;
        qty delta = add, after = x->b->sum;
        if (qty_sub(&delta, &was) != 0 || qty_add(&after, &delta) != 0) continue;
        if (qty_sign(&after) < 0) after = qty_zero(QTY_DECIMAL_SI);
        char h[QTY_STR_MAX], u[QTY_STR_MAX], r[QTY_STR_MAX], a[QTY_STR_MAX];
        fmt_qty(cq_limit(x->b->q), h, sizeof h);
        fmt_qty(&now, u, sizeof u);
        fmt_qty(&delta, r, sizeof r);
        fmt_qty(&after, a, sizeof a);
        bool over =
            strcmp(sub, "status") && qty_sign(&delta) > 0 && qty_cmp(&after, cq_limit(x->b->q)) > 0;
        reg_explain_row(en, "usage", h, u, r, a, over);
        if (over) {
            char msg[800];
            exceeds_text(x, &after, op, msg, sizeof msg);
            reg_explain_deny(en, msg);
        }
    }
}

/* The books take what was decided. */
static int apply(store_txn *t, const api_kind *k, const json_t *obj, const matches *m, api_err *e)
{
    cq_ident id;
    cq_ident_of(&id, k->group, k->version, k->kind, obj);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < m->n; i++) {
        const match *x = &m->v[i];
        if (x->keep) continue;
        qty ou = old_usage(x), on = old_net(x);
        bool same = (x->claim != NULL) == x->counts &&
                    (!x->counts || (qty_cmp(&x->usage, &ou) == 0 && qty_cmp(&x->net, &on) == 0));
        const char *had = cq_book_problem_of(x->b, &id);
        bool same_problem =
            (had == NULL) == (x->problem == NULL) && (!had || !strcmp(had, x->problem));
        if (same && same_problem) continue;
        cq_book *b = cq_book_modify(t, x->en, e);
        if (!b)
            rc = -1;
        else if (!same && cq_book_set_from(b, &id, x->claim, x->counts, &x->usage, &x->net,
                                           x->has_sum ? &x->sum : NULL, e) != 0)
            rc = -1;
        else if (!same_problem && cq_book_note(b, &id, x->problem, e) != 0)
            rc = -1;
    }
    cq_ident_done(&id);
    return rc;
}

static void matches_free(matches *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].problem);
    free(m->v);
}

/* Charge the write (`dry_run`: decide only; the books are not touched, since
 * a transaction that aborts drops the books it changed and the next write
 * would recount them: a tenant's dry runs must not cost everyone a recount). */
static int charge(store_txn *t, const api_kind *k, reg_op op, const char *sub, const json_t *obj,
                  const json_t *old, bool dry_run, api_err *e)
{
    const json_t *it = op == REG_DELETE ? old : obj;
    matches m;
    if (load_matches(t, k, k->namespaced ? meta(it, "namespace") : "", &m, e) != 0) {
        matches_free(&m);
        return -1;
    }
    int rc = 0;
    if (m.n && op == REG_DELETE && !dry_run) {
        /* never denied: each quota lets the object go */
        cq_ident id;
        cq_ident_of(&id, k->group, k->version, k->kind, it);
        for (size_t i = 0; i < m.n; i++) {
            const match *x = &m.v[i];
            bool claim = cq_book_claim_of(x->b, &id), problem = cq_book_problem_of(x->b, &id);
            if (!claim && !problem) continue;
            cq_book *b = cq_book_modify(t, x->en, e);
            if (!b || (claim && cq_book_set(b, &id, false, NULL, NULL, e) != 0) ||
                (problem && cq_book_note(b, &id, NULL, e) != 0)) {
                rc = -1;
                break;
            }
        }
        cq_ident_done(&id);
    } else if (m.n && op != REG_DELETE) {
        rc = evaluate(k, op, sub, obj, &m, e);
        bool evaluated = rc == 0;
        if (rc == 0) rc = check(k, op, sub, obj, &m, e);
        reg_explain *xp = reg_explain_current();
        if (xp && evaluated) explain(xp, op, sub, &m);
        if (rc == 0 && !dry_run) rc = apply(t, k, obj, &m, e);
    }
    matches_free(&m);
    return rc;
}

/* ---- the quota objects themselves ---- */

static bool sources_changed(const json_t *a, const json_t *b)
{
    if (json_array_size(a) != json_array_size(b)) return true;
    const char *keys[] = {"apiVersion", "group", "version", "kind", "path", "op"};
    for (size_t i = 0; i < json_array_size(a); i++)
        for (size_t j = 0; j < sizeof keys / sizeof *keys; j++)
            if (strcmp(jtext(json_array_get(a, i), keys[j]), jtext(json_array_get(b, i), keys[j])))
                return true;
    return false;
}

/* The quota's status as it is written (a create, an update): what its
 * books will say, at once. */
static int quota_status(store_txn *t, const api_kind *k, reg_op op, json_t *obj, const json_t *old,
                        bool dry_run, api_err *e)
{
    if (dry_run || op == REG_DELETE) return 0;
    return cq_book_status_into(t, obj, k == gcq_kind, old ? json_object_get(old, "status") : NULL,
                               e);
}

static int admit_quota(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                       const json_t *old, bool dry_run, api_err *e)
{
    const char *name = meta(obj, "name");
    char key[768];
    api_kind_key(k, meta(obj, "namespace"), name, key, sizeof key);
    if (!strcmp(sub, "status"))
        return forbid(e, k, name, "the status of custom quotas is written by allot");
    if (*sub) return 0;
    if (op == REG_DELETE) {
        ledger_forget(t, key);
        return 0;
    }
    char err[1400];
    cq_quota *q = cq_compile(json_object_get(obj, "spec"), k == gcq_kind, err, sizeof err);
    cq_free(q);
    if (!q) return forbid(e, k, name, err);
    if (op != REG_UPDATE) return quota_status(t, k, op, obj, old, dry_run, e);
    store_obj *o = store_txn_get(t, key);
    ledger_entry *en = o ? cq_book_of(t, o, e) : NULL;
    if (o) store_obj_unref(o);
    if (!en) return o ? -1 : quota_status(t, k, op, obj, old, dry_run, e);
    const cq_book *b = cq_book_value(en);
    if (qty_sign(&b->used) <= 0) return quota_status(t, k, op, obj, old, dry_run, e);
    char used[64], lim[64], msg[600];
    fmt_qty(&b->used, used, sizeof used);
    const json_t *ns = json_object_get(obj, "spec"), *os = json_object_get(old, "spec");
    if (sources_changed(json_object_get(os, "sources"), json_object_get(ns, "sources"))) {
        snprintf(msg, sizeof msg,
                 "spec.sources cannot be changed while usage is recorded (usage: %s); create a "
                 "new %s instead",
                 used, k == gcq_kind ? "GlobalCustomQuota" : "CustomQuota");
        return forbid(e, k, name, msg);
    }
    qty nl;
    if (qty_from_json(json_object_get(ns, "limit"), &nl) == 0 && qty_cmp(&nl, &b->used) < 0) {
        fmt_qty(&nl, lim, sizeof lim);
        snprintf(msg, sizeof msg,
                 "spec.limit cannot be lowered below current usage (%s); requested limit: %s", used,
                 lim);
        return forbid(e, k, name, msg);
    }
    return quota_status(t, k, op, obj, old, dry_run, e);
}

/* A namespace created, relabelled or deleted may enter or leave global
 * quotas: their books are recounted (loaded again) after this write. */
static int admit_namespace(store_txn *t, reg_op op, const json_t *obj, const json_t *old,
                           api_err *e)
{
    const json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    bool leaving =
        op == REG_DELETE || json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp");
    if (old && !leaving) {
        const json_t *was = json_object_get(json_object_get(old, "metadata"), "labels");
        if (was == labels || json_equal(was, labels)) return 0;
    }
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_txn_list(t, GCQ_PREFIX, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot read custom quotas");
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        ledger_entry *en = rc == 0 ? cq_book_of(t, objs[i], e) : NULL;
        if (!en && rc == 0) rc = -1;
        if (en && cq_book_selection_changes(cq_book_value(en), meta(obj, "name"), labels, leaving))
            ledger_forget(t, objs[i]->key);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return rc;
}

static int cq_admit(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                    const json_t *old, bool dry_run, api_err *e)
{
    if ((k == cq_kind || k == gcq_kind) && admit_quota(t, k, op, sub, obj, old, dry_run, e) != 0)
        return -1;
    if (charge(t, k, op, sub, obj, old, dry_run, e) != 0) return -1;
    /* last: the books it drops must not be loaded again in this transaction
     * (they would read the namespace as it was) */
    if ((k->flags & API_KIND_NAMESPACE) && !*sub) return admit_namespace(t, op, obj, old, e);
    return 0;
}

/* At start, before serving: every quota's books loaded, and a status that
 * trails them after a restart written again (reads only render them). */
void cq_admission_restore(store *st)
{
    static const char *const prefixes[] = {CQ_PREFIX, GCQ_PREFIX, NULL};
    ledger_prepare_read(st, prefixes, cq_book_of, cq_book_verify);
}

static const reg_admission custom_quotas = {"CustomQuotas", cq_admit};

/* A kind was published or retired: sources that name it resolve anew. */
static void kinds_changed(store *st)
{
    size_t drift = 0;
    cq_books_resync(st, &drift);
}

int cq_admission_register(void)
{
    cq_kind = api_kind_find(CQ_GROUP, CQ_VERSION, "customquotas");
    gcq_kind = api_kind_find(CQ_GROUP, CQ_VERSION, "globalcustomquotas");
    if (!cq_kind || !gcq_kind || reg_read_view_register(cq_kind, cq_book_view) != 0 ||
        reg_read_view_register(gcq_kind, cq_book_view) != 0 ||
        reg_kinds_listener_register(kinds_changed) != 0)
        return -1;
    return reg_admission_register(&custom_quotas);
}
