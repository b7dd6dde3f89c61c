/* pool_admission.c - ResourcePools decided in the write's transaction (see
 * pool_admission.h and docs/pools.md).
 *
 * A write of a claim or a pool reconciles the pool it touches, inside the
 * same store transaction: the decisions are core/pool.c's, made on the
 * claims as stored plus the one being written; the outcome is written at
 * once: the claim's status (the object being written is changed in place,
 * others are rewritten), the pool's status and the ResourceQuota
 * capsule-pool-<pool> of every selected namespace. So a claim binds in the
 * transaction that allocates it, and nothing in use can be deleted or
 * changed: "in use" is read from the namespace quota's usage in the ledger
 * at that moment.
 *
 * The truth a reconcile starts from is the stored claims: a claim is bound
 * to a pool when its status says so (status.pool.uid is the pool's and its
 * Exhausted condition is False), for its stored spec.claim. Client writes of
 * the status subresource of claims and pools are refused, so only this file
 * writes that truth.
 *
 * This first version reconciles a pool from all of its claims on every
 * write (O(claims of the pool)); docs/pools.md has the plan to keep the
 * state in the ledger instead.
 */
#include "registry/pool_admission.h"

#include "api/objects.h"
#include "api/pool_kinds.h"
#include "core/pool.h"
#include "core/rfc3339.h"
#include "core/selector.h"
#include "registry/quota_admission.h"
#include "registry/quota_ledger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLAIMS_PREFIX "resourcepoolclaims." POOL_GROUP "/"
#define POOLS_PREFIX "resourcepools." POOL_GROUP "//"
#define RQ_PREFIX "capsule-pool-"
#define POOL_LABEL "projectcapsule.dev/pool"
#define MANAGED_LABEL "projectcapsule.dev/managed-by"

static const api_kind *claims_kind, *pools_kind;

/* ---- small helpers ---- */

static const json_t *jget(const json_t *o, const char *k)
{
    return json_object_get(o, k);
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static const char *meta_str(const json_t *obj, const char *k)
{
    return jstr(jget(obj, "metadata"), k);
}

static int64_t created_of(const json_t *obj)
{
    int64_t sec = 0, nsec = 0;
    if (!rfc3339_parse(meta_str(obj, "creationTimestamp"), &sec, &nsec)) return 0;
    return sec;
}

static void set_rv(json_t *obj, int64_t rv)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)rv);
    json_t *meta = json_object_get(obj, "metadata");
    if (json_is_object(meta)) json_object_set_new(meta, "resourceVersion", json_string(buf));
}

static int put(store_txn *t, const char *key, json_t *obj, api_err *e)
{
    set_rv(obj, store_txn_rev(t));
    if (store_txn_put(t, key, obj, NULL) != 0)
        return api_err_set(e, API_INTERNAL, "store write failed");
    return 0;
}

/* The condition of `type` in a conditions array (borrowed), or NULL. */
static const json_t *cond_of(const json_t *status, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(jget(status, "conditions"), i,
                       c) if (!strcmp(jstr(c, "type"), type)) return c;
    return NULL;
}

/* Set condition `type` in status.conditions, keeping lastTransitionTime when
 * the status does not change. */
static void set_cond(json_t *status, const char *type, const char *st, const char *reason,
                     const char *msg, json_int_t gen, const char *now)
{
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    const json_t *old = cond_of(status, type);
    const char *ltt = old && !strcmp(jstr(old, "status"), st) && *jstr(old, "lastTransitionTime")
                          ? jstr(old, "lastTransitionTime")
                          : now;
    json_t *c =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "type", type, "status", st, "reason", reason,
                  "message", msg, "lastTransitionTime", ltt, "observedGeneration", gen);
    size_t i;
    json_t *x;
    json_array_foreach(conds, i, x) if (!strcmp(jstr(x, "type"), type))
    {
        json_array_set_new(conds, i, c);
        return;
    }
    json_array_append_new(conds, c);
}

static void del_cond(json_t *status, const char *type)
{
    json_t *conds = json_object_get(status, "conditions");
    size_t i;
    json_t *x;
    json_array_foreach(conds, i, x) if (!strcmp(jstr(x, "type"), type))
    {
        json_array_remove(conds, i);
        return;
    }
}

static rlist *rl_of(const json_t *v)
{
    rlist *l = rl_new();
    const char *bad = NULL;
    if (l && json_is_object(v) && rl_from_json(v, l, &bad) != 0) {
        rl_free(l);
        return NULL;
    }
    return l;
}

/* Whether stored claim `c` is bound to the pool with uid `uid`. */
static bool bound_to(const json_t *c, const char *uid)
{
    const json_t *st = jget(c, "status");
    if (!*uid || strcmp(jstr(jget(st, "pool"), "uid"), uid) != 0) return false;
    const json_t *ex = cond_of(st, "Exhausted");
    return ex && !strcmp(jstr(ex, "status"), "False");
}

/* ---- a pool's inputs ---- */

typedef struct claim_rec {
    json_t *obj;       /* the claim as it will be stored (a reference); self: the admitted object */
    rlist *req;        /* spec.claim */
    rlist *stored_req; /* spec.claim of the stored version when bound to this pool, else NULL */
    pool_claim pc;
    bool self;
    bool selected; /* in a selected namespace */
    char *why;     /* not in the pool: the Ready=False message */
} claim_rec;

typedef struct pool_ctx {
    json_t *pool; /* as it will be stored (a reference) */
    const char *name, *uid;
    rlist *hard, *defaults;
    pool_view view;
    json_t *namespaces; /* sorted array of selected namespace names */
    claim_rec *claims;
    size_t n, cap;
} pool_ctx;

static void ctx_free(pool_ctx *pc)
{
    for (size_t i = 0; i < pc->n; i++) {
        json_decref(pc->claims[i].obj);
        rl_free(pc->claims[i].req);
        rl_free(pc->claims[i].stored_req);
        free(pc->claims[i].why);
    }
    free(pc->claims);
    rl_free(pc->hard);
    rl_free(pc->defaults);
    json_decref(pc->namespaces);
    json_decref(pc->pool);
    memset(pc, 0, sizeof *pc);
}

static bool ns_terminating(const json_t *ns)
{
    return jget(jget(ns, "metadata"), "deletionTimestamp") ||
           !strcmp(jstr(jget(ns, "status"), "phase"), "Terminating");
}

static bool selects(const json_t *selectors, const json_t *labels)
{
    if (json_array_size(selectors) == 0) return true; /* an empty list matches everything */
    size_t i;
    json_t *s;
    char err[256];
    json_array_foreach(selectors, i, s)
    {
        sel_t *sel = sel_from_json(s, err, sizeof err);
        bool m = sel && sel_matches(sel, labels);
        sel_free(sel);
        if (m) return true;
    }
    return false;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The namespaces the pool selects: stored ones, with `ns_new` (a namespace
 * being written, NULL for none) in place of its stored version. */
static int load_namespaces(store_txn *t, pool_ctx *pc, const json_t *ns_new, api_err *e)
{
    store_obj **objs = NULL;
    size_t n = 0, m = 0;
    if (store_txn_list(t, "namespaces//", &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list namespaces");
    const json_t *sels = jget(jget(pc->pool, "spec"), "selectors");
    bool deleting = jget(jget(pc->pool, "metadata"), "deletionTimestamp") != NULL;
    const char *new_name = ns_new ? meta_str(ns_new, "name") : NULL;
    json_t **docs = calloc(n + 1, sizeof *docs);
    const char **names = calloc(n + 1, sizeof *names);
    int rc = docs && names ? 0 : api_err_set(e, API_INTERNAL, "out of memory");
    bool new_seen = false;
    for (size_t i = 0; i < n; i++) {
        json_t *ns = rc == 0 ? store_obj_doc(objs[i]) : NULL;
        store_obj_unref(objs[i]);
        if (!ns) continue;
        docs[i] = ns;
        if (new_name && !strcmp(meta_str(ns, "name"), new_name)) {
            new_seen = true;
            continue;
        }
        if (!deleting && !ns_terminating(ns) && selects(sels, jget(jget(ns, "metadata"), "labels")))
            names[m++] = meta_str(ns, "name");
    }
    free(objs);
    (void)new_seen;
    if (rc == 0 && ns_new && !deleting && !ns_terminating(ns_new) &&
        selects(sels, jget(jget(ns_new, "metadata"), "labels")))
        names[m++] = new_name;
    pc->namespaces = rc == 0 ? json_array() : NULL;
    if (rc == 0 && !pc->namespaces) rc = api_err_set(e, API_INTERNAL, "out of memory");
    if (rc == 0) {
        qsort(names, m, sizeof *names, cmp_name);
        for (size_t i = 0; i < m; i++)
            json_array_append_new(pc->namespaces, json_string(names[i]));
    }
    for (size_t i = 0; docs && i < n; i++)
        json_decref(docs[i]);
    free(docs);
    free(names);
    return rc;
}

static bool ns_selected(const pool_ctx *pc, const char *ns)
{
    size_t i;
    json_t *v;
    json_array_foreach(pc->namespaces, i, v) if (!strcmp(json_string_value(v), ns)) return true;
    return false;
}

static int add_claim(pool_ctx *pc, json_t *obj, const json_t *stored, bool self, api_err *e)
{
    if (pc->n == pc->cap) {
        size_t nc = pc->cap ? pc->cap * 2 : 16;
        claim_rec *nv = realloc(pc->claims, nc * sizeof *nv);
        if (!nv) return api_err_set(e, API_INTERNAL, "out of memory");
        pc->claims = nv;
        pc->cap = nc;
    }
    claim_rec *r = &pc->claims[pc->n];
    memset(r, 0, sizeof *r);
    r->obj = json_incref(obj);
    r->self = self;
    pc->n++;
    if (!(r->req = rl_of(jget(jget(obj, "spec"), "claim"))))
        return api_err_set(e, API_INTERNAL, "out of memory");
    if (stored && bound_to(stored, pc->uid) &&
        !(r->stored_req = rl_of(jget(jget(stored, "spec"), "claim"))))
        return api_err_set(e, API_INTERNAL, "out of memory");
    const json_t *meta = jget(obj, "metadata");
    r->pc = (pool_claim){jstr(meta, "namespace"),
                         jstr(meta, "name"),
                         jstr(meta, "uid"),
                         created_of(obj),
                         r->req,
                         false};
    r->selected = ns_selected(pc, r->pc.namespace_);
    char *msg = NULL;
    if (!r->selected) {
        r->why = strdup("resourcepool not available");
    } else if (pool_check_claim_resources(pc->name, pc->hard, r->req, &msg) == POOL_DENIED) {
        r->why = msg;
        msg = NULL;
    }
    free(msg);
    return 0;
}

/* The claims whose spec.pool names this pool, as stored, with the claim
 * being written (self, NULL for none) in place of its stored version, or
 * left out when `self_gone`. */
static int load_claims(store_txn *t, pool_ctx *pc, json_t *self, const json_t *self_old,
                       bool self_gone, api_err *e)
{
    store_obj **objs = NULL;
    size_t n = 0;
    int rc = 0;
    if (store_txn_list(t, CLAIMS_PREFIX, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list claims");
    const char *self_uid = self ? meta_str(self, "uid") : "";
    bool self_seen = false;
    for (size_t i = 0; i < n; i++) {
        json_t *c = rc == 0 ? store_obj_doc(objs[i]) : NULL;
        store_obj_unref(objs[i]);
        if (!c) continue;
        bool is_self = *self_uid && !strcmp(meta_str(c, "uid"), self_uid);
        if (is_self) {
            self_seen = true;
            if (!self_gone && !strcmp(jstr(jget(self, "spec"), "pool"), pc->name))
                rc = add_claim(pc, self, c, true, e);
        } else if (!strcmp(jstr(jget(c, "spec"), "pool"), pc->name) || bound_to(c, pc->uid)) {
            rc = add_claim(pc, c, c, false, e); /* shared, read only: copied to be written */
        }
        json_decref(c);
    }
    free(objs);
    if (rc == 0 && self && !self_seen && !self_gone &&
        !strcmp(jstr(jget(self, "spec"), "pool"), pc->name))
        rc = add_claim(pc, self, self_old, true, e);
    return rc;
}

static int load_pool(store_txn *t, json_t *pool, pool_ctx *pc, const json_t *ns_new, api_err *e)
{
    memset(pc, 0, sizeof *pc);
    pc->pool = json_incref(pool);
    pc->name = meta_str(pool, "name");
    pc->uid = meta_str(pool, "uid");
    const json_t *spec = jget(pool, "spec"), *cfg = jget(spec, "config");
    pc->hard = rl_of(jget(jget(spec, "quota"), "hard"));
    pc->defaults = rl_of(jget(spec, "defaults"));
    if (!pc->hard || !pc->defaults) return api_err_set(e, API_INTERNAL, "out of memory");
    pc->view = (pool_view){pc->name,
                           pc->hard,
                           pc->defaults,
                           json_is_true(jget(cfg, "defaultsZero")),
                           json_is_true(jget(cfg, "orderedQueue")),
                           json_is_true(jget(cfg, "deleteBoundResources"))};
    return load_namespaces(t, pc, ns_new, e);
}

/* The state of the claims as stored: their bound claims with stored amounts. */
static pool_state *stored_state(const pool_ctx *pc, api_err *e)
{
    pool_state *s = pool_state_new();
    for (size_t i = 0; s && i < pc->n; i++) {
        const claim_rec *r = &pc->claims[i];
        if (!r->stored_req) continue;
        pool_claim c = r->pc;
        c.request = r->stored_req;
        if (pool_state_seed_bound(s, &c) != POOL_OK) {
            pool_state_free(s);
            s = NULL;
        }
    }
    if (!s) api_err_set(e, API_INTERNAL, "pool accounting failed");
    return s;
}

/* ---- the namespace quotas ---- */

static void rq_key(const pool_ctx *pc, const char *ns, char *buf, size_t n)
{
    snprintf(buf, n, "resourcequotas/%s/" RQ_PREFIX "%s", ns, pc->name);
}

/* status.used of the namespace's pool quota as the ledger holds it now (an
 * empty list when there is no quota). Caller frees. */
static rlist *rq_used(store_txn *t, const pool_ctx *pc, const char *ns)
{
    char key[768];
    rq_key(pc, ns, key, sizeof key);
    store_obj *o = store_txn_get(t, key);
    rlist *used = o ? quota_ledger_read_txn(t, o) : rl_new();
    if (o) store_obj_unref(o);
    return used;
}

static json_t *new_rq(const pool_ctx *pc, const char *ns, const char *now)
{
    char name[512];
    snprintf(name, sizeof name, RQ_PREFIX "%s", pc->name);
    char uid[37];
    reg_new_uid(uid);
    json_t *rq = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:I, s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}}",
        "apiVersion", "v1", "kind", "ResourceQuota", "metadata", "name", name, "namespace", ns,
        "uid", uid, "creationTimestamp", now, "generation", (json_int_t)1, "labels", POOL_LABEL,
        pc->name, MANAGED_LABEL, "controller", "ownerReferences", "apiVersion",
        POOL_GROUP "/" POOL_VERSION, "kind", "ResourcePool", "name", pc->name, "uid", pc->uid,
        "controller", 1, "blockOwnerDeletion", 1);
    return rq;
}

/* Write namespace ns's quota with spec.hard = hard (and the pool's scopes),
 * creating it if needed, with its usage recounted (only when it changes). */
static int write_rq(store_txn *t, const pool_ctx *pc, const char *ns, const rlist *hard,
                    const char *now, api_err *e)
{
    char key[768];
    rq_key(pc, ns, key, sizeof key);
    store_obj *o = store_txn_get(t, key);
    json_t *rq = o ? store_obj_parse(o) : new_rq(pc, ns, now);
    json_t *used = NULL;
    json_t *want = rl_to_json(hard);
    int rc = rq && want ? 0 : api_err_set(e, API_INTERNAL, "out of memory");
    if (rc == 0) {
        json_t *spec = json_object_ensure(rq, "spec");
        const json_t *q = jget(jget(pc->pool, "spec"), "quota");
        bool same = o && json_equal(jget(spec, "hard"), want) &&
                    json_equal(jget(spec, "scopes"), jget(q, "scopes")) &&
                    json_equal(jget(spec, "scopeSelector"), jget(q, "scopeSelector"));
        if (!same) {
            json_object_set(spec, "hard", want);
            const char *keys[] = {"scopes", "scopeSelector"};
            for (int i = 0; i < 2; i++) {
                if (jget(q, keys[i]))
                    json_object_set(spec, keys[i], (json_t *)jget(q, keys[i]));
                else
                    json_object_del(spec, keys[i]);
            }
            if (o) {
                json_t *meta = json_object_get(rq, "metadata");
                json_object_set_new(
                    meta, "generation",
                    json_integer(json_integer_value(json_object_get(meta, "generation")) + 1));
            }
            if (!used)
                rc = quota_recount_in_txn(t, rq, &used) == 0
                         ? 0
                         : api_err_set(e, API_INTERNAL, "cannot count quota usage");
            if (rc == 0) {
                json_object_set_new(rq, "status",
                                    json_pack("{s:O, s:O}", "hard", want, "used", used));
                rc = put(t, key, rq, e);
            }
        }
    }
    json_decref(want);
    json_decref(used);
    json_decref(rq);
    if (o) store_obj_unref(o);
    return rc;
}

static int delete_rq(store_txn *t, const pool_ctx *pc, const char *ns, api_err *e)
{
    char key[768];
    rq_key(pc, ns, key, sizeof key);
    store_obj *o = store_txn_get(t, key);
    if (!o) return 0;
    json_t *last = store_obj_parse(o);
    store_obj_unref(o);
    int rc = last ? 0 : api_err_set(e, API_INTERNAL, "stored object is corrupt");
    if (rc == 0) {
        set_rv(last, store_txn_rev(t));
        if (store_txn_delete(t, key, last) != 0)
            rc = api_err_set(e, API_INTERNAL, "store delete failed");
        else
            quota_ledger_forget(t, key);
    }
    json_decref(last);
    return rc;
}

/* ---- writing the outcome ---- */

static void claim_key(const json_t *c, char *buf, size_t n)
{
    snprintf(buf, n, CLAIMS_PREFIX "%s/%s", meta_str(c, "namespace"), meta_str(c, "name"));
}

/* The claim's status for its outcome. */
static int claim_status(store_txn *t, const pool_ctx *pc, const pool_state *st, claim_rec *r,
                        const char *now, api_err *e)
{
    json_t *status = json_object_get(r->obj, "status");
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(r->obj, "status", status);
    }
    json_int_t gen = json_integer_value(jget(jget(r->obj, "metadata"), "generation"));
    json_object_set_new(status, "observedGeneration", json_integer(gen));
    json_object_del(status, "condition");
    const pool_status *ps = r->why ? NULL : pool_state_get(st, r->pc.namespace_, r->pc.uid);
    if (!ps) {
        json_object_del(status, "pool");
        set_cond(status, "Ready", "False", "Failed", r->why ? r->why : "resourcepool not available",
                 gen, now);
        del_cond(status, "Bound");
        del_cond(status, "Exhausted");
        return 0;
    }
    json_object_set_new(status, "pool", json_pack("{s:s, s:s}", "name", pc->name, "uid", pc->uid));
    set_cond(status, "Ready", "True", "Succeeded", "reconciled", gen, now);
    if (ps->outcome == POOL_BOUND) {
        set_cond(status, "Exhausted", "False", "NoExhaustions", "resource claimable from pool", gen,
                 now);
        rlist *used = rq_used(t, pc, r->pc.namespace_);
        bool in_use = false;
        if (!used || pool_claim_in_use(st, &pc->view, r->pc.namespace_, r->pc.uid, used, &in_use) !=
                         POOL_OK) {
            rl_free(used);
            return api_err_set(e, API_INTERNAL, "pool accounting failed");
        }
        rl_free(used);
        set_cond(status, "Bound", in_use ? "True" : "False", in_use ? "InUse" : "Unused",
                 in_use ? "claim is used" : "claim is unused", gen, now);
    } else {
        set_cond(status, "Exhausted", "True",
                 ps->outcome == POOL_QUEUED ? "QueueExhausted" : "PoolExhausted",
                 ps->message ? ps->message : "", gen, now);
        set_cond(status, "Bound", "False", "Failed", "claim causes exhaustions", gen, now);
    }
    return 0;
}

static json_t *pool_status_json(const pool_ctx *pc, const pool_state *st, const char *now,
                                const json_t *old_status)
{
    rlist *used = rl_new(), *avail = rl_new();
    json_t *status = json_is_object(old_status) ? json_deep_copy(old_status) : json_object();
    if (!used || !avail || !status || pool_allocation(st, &pc->view, used, avail) != POOL_OK) {
        rl_free(used);
        rl_free(avail);
        json_decref(status);
        return NULL;
    }
    json_int_t gen = json_integer_value(jget(jget(pc->pool, "metadata"), "generation"));
    json_object_set_new(status, "observedGeneration", json_integer(gen));
    json_object_set(status, "namespaces", pc->namespaces);
    json_object_set_new(status, "namespaceCount",
                        json_integer((json_int_t)json_array_size(pc->namespaces)));
    json_object_set_new(status, "claimCount", json_integer((json_int_t)pool_state_nbound(st)));
    json_t *claims = json_object();
    const pool_status **all = NULL;
    size_t n = 0;
    if (pool_state_list(st, true, &all, &n) == POOL_OK) {
        for (size_t i = 0; i < n; i++) {
            json_t *list = json_object_get(claims, all[i]->namespace_);
            if (!list) {
                list = json_array();
                json_object_set_new(claims, all[i]->namespace_, list);
            }
            json_array_append_new(list,
                                  json_pack("{s:s, s:s, s:s, s:o}", "uid", all[i]->uid, "name",
                                            all[i]->name, "namespace", all[i]->namespace_, "claims",
                                            rl_to_json(all[i]->allocated)));
        }
    }
    free(all);
    json_object_set_new(status, "claims", claims);
    json_object_set_new(status, "allocation",
                        json_pack("{s:o, s:o, s:o}", "hard", rl_to_json(pc->hard), "used",
                                  rl_to_json(used), "available", rl_to_json(avail)));
    json_t *ex = json_object();
    const rlist *req = pool_exhaustions_requesting(st), *av = pool_exhaustions_available(st);
    json_t *reqj = req ? rl_to_json(req) : NULL, *avj = av ? rl_to_json(av) : NULL;
    const char *k;
    json_t *v;
    json_object_foreach(reqj, k, v)
    {
        json_t *a = json_object_get(avj, k);
        json_object_set_new(
            ex, k, json_pack("{s:O, s:O}", "requesting", v, "available", a ? a : json_string("0")));
    }
    json_decref(reqj);
    json_decref(avj);
    bool exhausted = json_object_size(ex) > 0;
    json_object_set_new(status, "exhaustions", ex);
    set_cond(status, "Ready", "True", "Succeeded", "reconciled", gen, now);
    set_cond(status, "Exhausted", exhausted ? "True" : "False",
             exhausted ? "PoolExhausted" : "NoExhaustions",
             exhausted ? "Pool has exhaustions" : "no exhaustions", gen, now);
    rl_free(used);
    rl_free(avail);
    return status;
}

/* Reconcile the pool of `pc` and write everything it decides. The pool
 * object itself is written only when `write_pool` (else the caller stores
 * pc->pool, the object being admitted). With `all` (the pool's spec or
 * namespaces changed) every claim and namespace quota is checked, else only
 * what the decision changed and the quota of `self_ns` (the namespace of
 * the claim written, which a removal may not report). `old_namespaces`: the namespaces the
 * pool selected before (their quotas go when no longer selected). */
static bool in_delta(const pool_delta *d, const claim_rec *r)
{
    for (size_t i = 0; i < d->nclaims; i++)
        if (!strcmp(d->claims[i].uid, r->pc.uid) &&
            !strcmp(d->claims[i].namespace_, r->pc.namespace_))
            return true;
    return false;
}

static bool ns_in_delta(const pool_delta *d, const char *ns)
{
    for (size_t i = 0; i < d->nnamespaces; i++)
        if (!strcmp(d->namespaces[i], ns)) return true;
    return false;
}

/* Write claim r's status for its outcome, when it differs from the stored
 * one. */
static int write_claim(store_txn *t, const pool_ctx *pc, const pool_state *st, claim_rec *r,
                       const char *now, api_err *e)
{
    char key[768];
    if (r->self) return claim_status(t, pc, st, r, now, e);
    json_t *stored = r->obj, *copy = json_deep_copy(stored);
    if (!copy) return api_err_set(e, API_INTERNAL, "out of memory");
    r->obj = copy;
    int rc = claim_status(t, pc, st, r, now, e);
    if (rc == 0 && !json_equal(jget(stored, "status"), jget(copy, "status"))) {
        claim_key(copy, key, sizeof key);
        rc = put(t, key, copy, e);
    }
    json_decref(stored);
    return rc;
}

static int reconcile_write(store_txn *t, pool_ctx *pc, const json_t *old_namespaces,
                           bool write_pool, bool all, const char *self_ns, api_err *e)
{
    char now[32], key[768];
    reg_now_rfc3339(now, sizeof now);
    pool_state *prev = stored_state(pc, e), *st = NULL;
    if (!prev) return -1;
    pool_claim *cs = calloc(pc->n ? pc->n : 1, sizeof *cs);
    size_t m = 0;
    for (size_t i = 0; cs && i < pc->n; i++)
        if (!pc->claims[i].why) cs[m++] = pc->claims[i].pc;
    pool_delta d;
    pool_delta_init(&d);
    int rc = cs && pool_reconcile(&pc->view, prev, cs, m, &st, &d) == POOL_OK
                 ? 0
                 : api_err_set(e, API_FORBIDDEN,
                               "resourcepools \"%s\": the claims cannot be "
                               "accounted (amounts beyond supported precision)",
                               pc->name);
    free(cs);
    pool_state_free(prev);
    /* Only claims whose outcome or message changed, the claim being written
     * and claims outside the pool are written; their Bound condition is kept
     * current before reads (refresh_bound). */
    for (size_t i = 0; rc == 0 && i < pc->n; i++) {
        claim_rec *r = &pc->claims[i];
        if (r->self || r->why || all || in_delta(&d, r)) rc = write_claim(t, pc, st, r, now, e);
    }
    rlist *hard = rl_new();
    size_t i;
    json_t *v;
    json_array_foreach(pc->namespaces, i, v)
    {
        if (rc != 0) break;
        if (!all && !ns_in_delta(&d, json_string_value(v)) &&
            !(self_ns && !strcmp(self_ns, json_string_value(v))))
            continue;
        rc = hard && pool_rq_hard(st, &pc->view, json_string_value(v), hard) == POOL_OK
                 ? write_rq(t, pc, json_string_value(v), hard, now, e)
                 : api_err_set(e, API_INTERNAL, "out of memory");
    }
    rl_free(hard);
    json_array_foreach(old_namespaces, i, v)
    {
        if (rc == 0 && !ns_selected(pc, json_string_value(v)))
            rc = delete_rq(t, pc, json_string_value(v), e);
    }
    if (rc == 0) {
        json_t *status = pool_status_json(pc, st, now, jget(pc->pool, "status"));
        if (!status)
            rc = api_err_set(e, API_INTERNAL, "out of memory");
        else
            json_object_set_new(pc->pool, "status", status);
    }
    if (rc == 0 && write_pool) {
        snprintf(key, sizeof key, POOLS_PREFIX "%s", pc->name);
        rc = put(t, key, pc->pool, e);
    }
    pool_state_free(st);
    pool_delta_cleanup(&d);
    return rc;
}

/* ---- admission ---- */

static json_t *get_pool(store_txn *t, const char *name)
{
    char key[768];
    snprintf(key, sizeof key, POOLS_PREFIX "%s", name);
    store_obj *o = store_txn_get(t, key);
    json_t *p = o ? store_obj_parse(o) : NULL;
    if (o) store_obj_unref(o);
    return p;
}

static int forbid(api_err *e, const api_kind *k, const char *name, const char *msg)
{
    api_err_set(e, API_FORBIDDEN, "%s%s%s \"%s\" is forbidden: %s", k->resource,
                *k->group ? "." : "", k->group, name, msg);
    api_err_details(e, name, k->group, k->resource);
    return -1;
}

/* Whether claim `c` (stored) is in use in its pool now. */
static int claim_in_use(store_txn *t, const json_t *c, bool *in_use, api_err *e)
{
    *in_use = false;
    const char *pname = jstr(jget(jget(c, "status"), "pool"), "name");
    json_t *pool = *pname ? get_pool(t, pname) : NULL;
    if (!pool || !bound_to(c, meta_str(pool, "uid"))) {
        json_decref(pool);
        return 0;
    }
    pool_ctx pc;
    int rc = load_pool(t, pool, &pc, NULL, e);
    json_decref(pool);
    if (rc == 0) rc = load_claims(t, &pc, NULL, NULL, false, e);
    pool_state *s = rc == 0 ? stored_state(&pc, e) : NULL;
    const char *ns = meta_str(c, "namespace");
    rlist *used = s ? rq_used(t, &pc, ns) : NULL;
    if (s &&
        (!used || pool_claim_in_use(s, &pc.view, ns, meta_str(c, "uid"), used, in_use) != POOL_OK))
        rc = api_err_set(e, API_INTERNAL, "pool accounting failed");
    rl_free(used);
    pool_state_free(s);
    ctx_free(&pc);
    return s ? rc : -1;
}

/* Capsule's auto-assign: among the pools selecting the claim's namespace
 * whose hard holds every claimed resource, one where all of it is available
 * first, ties by name. */
static int auto_assign(store_txn *t, json_t *claim, api_err *e)
{
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_txn_list(t, POOLS_PREFIX, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list pools");
    pool_candidate *cand = calloc(n ? n : 1, sizeof *cand);
    pool_ctx *ctx = calloc(n ? n : 1, sizeof *ctx);
    rlist **avail = calloc(n ? n : 1, sizeof *avail);
    rlist *req = rl_of(jget(jget(claim, "spec"), "claim"));
    size_t m = 0;
    int rc = cand && ctx && avail && req ? 0 : api_err_set(e, API_INTERNAL, "out of memory");
    const char *ns = meta_str(claim, "namespace");
    for (size_t i = 0; i < n; i++) {
        json_t *p = rc == 0 ? store_obj_parse(objs[i]) : NULL;
        store_obj_unref(objs[i]);
        if (!p) continue;
        pool_ctx *pc = &ctx[m];
        rc = load_pool(t, p, pc, NULL, e);
        json_decref(p);
        if (rc == 0 && ns_selected(pc, ns)) rc = load_claims(t, pc, NULL, NULL, false, e);
        if (rc == 0 && ns_selected(pc, ns)) {
            pool_state *s = stored_state(pc, e);
            rlist *used = rl_new();
            avail[m] = rl_new();
            if (!s || !used || !avail[m] ||
                pool_allocation(s, &pc->view, used, avail[m]) != POOL_OK)
                rc = api_err_set(e, API_INTERNAL, "pool accounting failed");
            rl_free(used);
            pool_state_free(s);
            cand[m] = (pool_candidate){pc->name, pc->hard, avail[m]};
            m++;
        } else {
            ctx_free(pc);
        }
    }
    free(objs);
    long pick = rc == 0 ? pool_auto_assign(req, cand, m) : -1;
    if (pick >= 0)
        json_object_set_new(json_object_get(claim, "spec"), "pool", json_string(cand[pick].name));
    for (size_t i = 0; i < m; i++) {
        ctx_free(&ctx[i]);
        rl_free(avail[i]);
    }
    free(cand);
    free(ctx);
    free(avail);
    rl_free(req);
    return rc;
}

/* Reconcile pool `name` (if it exists) after a write of claim `self`. */
static int reconcile_named(store_txn *t, const char *name, json_t *self, const json_t *self_old,
                           bool self_gone, api_err *e)
{
    json_t *pool = *name ? get_pool(t, name) : NULL;
    if (!pool) return 0;
    pool_ctx pc;
    json_t *old_ns = json_incref((json_t *)jget(jget(pool, "status"), "namespaces"));
    int rc = load_pool(t, pool, &pc, NULL, e);
    json_decref(pool);
    if (rc == 0) rc = load_claims(t, &pc, self, self_old, self_gone, e);
    if (rc == 0) rc = reconcile_write(t, &pc, old_ns, true, false, meta_str(self, "namespace"), e);
    json_decref(old_ns);
    ctx_free(&pc);
    return rc;
}

static int admit_claim(store_txn *t, const api_kind *k, reg_op op, json_t *obj, const json_t *old,
                       api_err *e)
{
    const char *name = meta_str(obj, "name");
    const char *old_pool = old ? jstr(jget(jget(old, "status"), "pool"), "name") : "";
    bool in_use = false;
    if (old && op != REG_CREATE && claim_in_use(t, old, &in_use, e) != 0) return -1;
    char *msg = NULL;
    if (op == REG_DELETE) {
        if (pool_check_claim_delete(in_use, old_pool, &msg) == POOL_DENIED) {
            forbid(e, k, name, msg);
            free(msg);
            return -1;
        }
        return reconcile_named(t, old_pool, obj, old, true, e);
    }
    if (op == REG_UPDATE) {
        rlist *oc = rl_of(jget(jget(old, "spec"), "claim")),
              *nc = rl_of(jget(jget(obj, "spec"), "claim"));
        int d = oc && nc
                    ? pool_check_claim_update(in_use, old_pool, jstr(jget(old, "spec"), "pool"),
                                              jstr(jget(obj, "spec"), "pool"), oc, nc, &msg)
                    : POOL_ENOMEM;
        rl_free(oc);
        rl_free(nc);
        if (d == POOL_DENIED) {
            forbid(e, k, name, msg);
            free(msg);
            return -1;
        }
        if (d != POOL_OK) return api_err_set(e, API_INTERNAL, "out of memory");
        if (in_use && pool_claim_release_requested(obj)) {
            char why[600];
            snprintf(why, sizeof why,
                     "cannot release the claim while it is used in resourcepool %s", old_pool);
            return forbid(e, k, name, why);
        }
    }
    pool_claim_strip_release(obj); /* releases are not implemented yet: never kept */
    json_t *spec = json_object_get(obj, "spec");
    if (json_is_object(spec) && !*jstr(spec, "pool") && auto_assign(t, obj, e) != 0) return -1;
    const char *pname = jstr(jget(obj, "spec"), "pool");
    json_t *pool = *pname ? get_pool(t, pname) : NULL;
    int rc = 0;
    if (!pool) {
        /* Capsule's claim controller: the claim waits with Ready=False; it
         * binds when its pool is created. */
        char now[32], why[600];
        reg_now_rfc3339(now, sizeof now);
        json_t *status = json_object();
        json_object_set_new(obj, "status", status);
        if (*pname)
            snprintf(why, sizeof why, "resourcepools.%s \"%s\" not found", POOL_GROUP, pname);
        else
            snprintf(why, sizeof why, "no pool reference was defined");
        set_cond(status, "Ready", "False", "Failed", why,
                 json_integer_value(jget(jget(obj, "metadata"), "generation")), now);
    } else {
        /* A claim for resources its pool does not hold is refused. */
        rlist *hard = rl_of(jget(jget(jget(pool, "spec"), "quota"), "hard"));
        rlist *req = rl_of(jget(jget(obj, "spec"), "claim"));
        int d = hard && req ? pool_check_claim_resources(pname, hard, req, &msg) : POOL_ENOMEM;
        rl_free(hard);
        rl_free(req);
        json_decref(pool);
        if (d == POOL_DENIED) {
            forbid(e, k, name, msg);
            free(msg);
            return -1;
        }
        if (d != POOL_OK) return api_err_set(e, API_INTERNAL, "out of memory");
        rc = reconcile_named(t, pname, obj, old, false, e);
    }
    /* moved to another pool: the old one lets it go */
    if (rc == 0 && *old_pool && strcmp(old_pool, pname) != 0)
        rc = reconcile_named(t, old_pool, obj, old, true, e);
    return rc;
}

static int admit_pool(store_txn *t, const api_kind *k, reg_op op, json_t *obj, const json_t *old,
                      api_err *e)
{
    pool_ctx pc;
    char *msg = NULL;
    int rc;
    if (op == REG_UPDATE) {
        /* Capsule's pool webhook: hard may not drop below what is claimed. */
        if (load_pool(t, (json_t *)old, &pc, NULL, e) != 0) {
            ctx_free(&pc);
            return -1;
        }
        rc = load_claims(t, &pc, NULL, NULL, false, e);
        pool_state *s = rc == 0 ? stored_state(&pc, e) : NULL;
        rlist *used = rl_new(), *avail = rl_new();
        rlist *nh = rl_of(jget(jget(jget(obj, "spec"), "quota"), "hard"));
        int d = s && used && avail && nh && pool_allocation(s, &pc.view, used, avail) == POOL_OK
                    ? pool_check_hard_update(pc.hard, nh, used, &msg)
                    : POOL_ENOMEM;
        rl_free(used);
        rl_free(avail);
        rl_free(nh);
        pool_state_free(s);
        ctx_free(&pc);
        if (d == POOL_DENIED) {
            forbid(e, k, meta_str(obj, "name"), msg);
            free(msg);
            return -1;
        }
        if (d != POOL_OK || rc != 0)
            return rc != 0 ? -1 : api_err_set(e, API_INTERNAL, "pool accounting failed");
    }
    json_t *old_ns = old ? json_incref((json_t *)jget(jget(old, "status"), "namespaces")) : NULL;
    if (op == REG_DELETE) {
        /* Everything goes: the namespaces' quotas, the claims' binding (or
         * the claims, with deleteBoundResources). Claims in use hold it. */
        rc = load_pool(t, obj, &pc, NULL, e);
        if (rc == 0) rc = load_claims(t, &pc, NULL, NULL, false, e);
        pool_state *s = rc == 0 ? stored_state(&pc, e) : NULL;
        for (size_t i = 0; s && rc == 0 && i < pc.n; i++) {
            claim_rec *r = &pc.claims[i];
            if (!r->stored_req) continue;
            rlist *used = rq_used(t, &pc, r->pc.namespace_);
            bool in_use = false;
            if (!used || pool_claim_in_use(s, &pc.view, r->pc.namespace_, r->pc.uid, used,
                                           &in_use) != POOL_OK)
                rc = api_err_set(e, API_INTERNAL, "pool accounting failed");
            rl_free(used);
            if (rc == 0 && in_use) {
                char why[700];
                snprintf(why, sizeof why, "claim %s/%s is in use", r->pc.namespace_, r->pc.name);
                rc = forbid(e, k, pc.name, why);
            }
        }
        if (!s && rc == 0) rc = -1;
        pool_state_free(s);
        char key[768], now[32];
        reg_now_rfc3339(now, sizeof now);
        for (size_t i = 0; rc == 0 && i < pc.n; i++) {
            claim_rec *r = &pc.claims[i];
            claim_key(r->obj, key, sizeof key);
            if (pc.view.delete_bound_resources) {
                set_rv(r->obj, store_txn_rev(t));
                if (store_txn_delete(t, key, r->obj) != 0)
                    rc = api_err_set(e, API_INTERNAL, "store delete failed");
                continue;
            }
            json_t *status = json_object();
            json_object_set_new(r->obj, "status", status);
            char why[600];
            snprintf(why, sizeof why, "resourcepools.%s \"%s\" not found", POOL_GROUP, pc.name);
            set_cond(status, "Ready", "False", "Failed", why,
                     json_integer_value(jget(jget(r->obj, "metadata"), "generation")), now);
            rc = put(t, key, r->obj, e);
        }
        size_t i;
        json_t *v;
        json_array_foreach(old_ns, i, v) if (rc == 0) rc =
            delete_rq(t, &pc, json_string_value(v), e);
        json_array_foreach(pc.namespaces, i, v) if (rc == 0) rc =
            delete_rq(t, &pc, json_string_value(v), e);
    } else {
        rc = load_pool(t, obj, &pc, NULL, e);
        if (rc == 0) rc = load_claims(t, &pc, NULL, NULL, false, e);
        if (rc == 0) rc = reconcile_write(t, &pc, old_ns, false, true, NULL, e);
    }
    json_decref(old_ns);
    ctx_free(&pc);
    return rc;
}

/* A namespace created or relabelled enters or leaves pools: each pool is
 * reconciled with the namespace as written. A namespace cannot leave a pool
 * while one of its claims there is in use (that would release it). */
static int admit_namespace(store_txn *t, const api_kind *k, reg_op op, const json_t *obj,
                           const json_t *old, api_err *e)
{
    if (op == REG_DELETE) return 0; /* its quotas and claims go with it */
    if (old &&
        json_equal(jget(jget(old, "metadata"), "labels"), jget(jget(obj, "metadata"), "labels")))
        return 0;
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_txn_list(t, POOLS_PREFIX, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list pools");
    const char *ns = meta_str(obj, "name");
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *pool = rc == 0 ? store_obj_parse(objs[i]) : NULL;
        store_obj_unref(objs[i]);
        if (!pool) continue;
        json_t *old_ns = json_incref((json_t *)jget(jget(pool, "status"), "namespaces"));
        pool_ctx pc;
        rc = load_pool(t, pool, &pc, obj, e);
        json_decref(pool);
        bool was = false;
        size_t j;
        json_t *v;
        json_array_foreach(old_ns, j, v) was |= !strcmp(json_string_value(v), ns);
        bool is = rc == 0 && ns_selected(&pc, ns);
        if (rc == 0 && was != is) rc = load_claims(t, &pc, NULL, NULL, false, e);
        if (rc == 0 && was && !is) {
            pool_state *s = stored_state(&pc, e);
            rlist *used = s ? rq_used(t, &pc, ns) : NULL;
            for (size_t c = 0; s && used && rc == 0 && c < pc.n; c++) {
                const claim_rec *r = &pc.claims[c];
                bool in_use = false;
                if (!r->stored_req || strcmp(r->pc.namespace_, ns) != 0) continue;
                if (pool_claim_in_use(s, &pc.view, ns, r->pc.uid, used, &in_use) != POOL_OK)
                    rc = api_err_set(e, API_INTERNAL, "pool accounting failed");
                else if (in_use) {
                    char why[700];
                    snprintf(why, sizeof why,
                             "namespace cannot leave resourcepool %s while claim %s is in use",
                             pc.name, r->pc.name);
                    rc = forbid(e, k, ns, why);
                }
            }
            if (rc == 0 && (!s || !used))
                rc = api_err_set(e, API_INTERNAL, "pool accounting failed");
            rl_free(used);
            pool_state_free(s);
        }
        if (rc == 0 && was != is) rc = reconcile_write(t, &pc, old_ns, true, true, NULL, e);
        json_decref(old_ns);
        ctx_free(&pc);
    }
    free(objs);
    return rc;
}

static int pool_admit(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                      const json_t *old, bool dry_run, api_err *e)
{
    (void)dry_run; /* everything is in the transaction, which a dry run aborts */
    if ((k->flags & API_KIND_NAMESPACE) && !*sub) return admit_namespace(t, k, op, obj, old, e);
    if (k != claims_kind && k != pools_kind) return 0;
    if (!strcmp(sub, "status")) {
        /* The statuses are the pool's books: only allot writes them. */
        return forbid(e, k, meta_str(obj, "name"),
                      "the status of pools and claims is written by allot");
    }
    if (*sub) return 0;
    return k == claims_kind ? admit_claim(t, k, op, obj, old, e)
                            : admit_pool(t, k, op, obj, old, e);
}

/* ---- the Bound condition, kept current for readers ----
 * Whether a bound claim is in use changes with its namespace's quota usage,
 * i.e. with pod writes, which do not reconcile pools. Before claims are read,
 * every bound claim whose Bound condition no longer says what the usage says
 * is rewritten, in one transaction (as the quota ledger brings quota status
 * up to date before quotas are read). */
static int refresh_pool(store_txn *t, json_t *pool, bool *changed, api_err *e)
{
    pool_ctx pc;
    char now[32], key[768];
    reg_now_rfc3339(now, sizeof now);
    int rc = load_pool(t, pool, &pc, NULL, e);
    if (rc == 0) rc = load_claims(t, &pc, NULL, NULL, false, e);
    pool_state *s = rc == 0 ? stored_state(&pc, e) : NULL;
    for (size_t i = 0; s && rc == 0 && i < pc.n; i++) {
        claim_rec *r = &pc.claims[i];
        if (!r->stored_req || r->why) continue;
        rlist *used = rq_used(t, &pc, r->pc.namespace_);
        bool in_use = false;
        if (!used ||
            pool_claim_in_use(s, &pc.view, r->pc.namespace_, r->pc.uid, used, &in_use) != POOL_OK)
            rc = api_err_set(e, API_INTERNAL, "pool accounting failed");
        rl_free(used);
        json_t *status = json_object_get(r->obj, "status");
        const json_t *b = cond_of(status, "Bound");
        if (rc != 0 || (b && !strcmp(jstr(b, "status"), in_use ? "True" : "False"))) continue;
        json_int_t gen = json_integer_value(jget(jget(r->obj, "metadata"), "generation"));
        set_cond(status, "Bound", in_use ? "True" : "False", in_use ? "InUse" : "Unused",
                 in_use ? "claim is used" : "claim is unused", gen, now);
        claim_key(r->obj, key, sizeof key);
        rc = put(t, key, r->obj, e);
        *changed = true;
    }
    if (!s && rc == 0) rc = -1;
    pool_state_free(s);
    ctx_free(&pc);
    return rc;
}

static void refresh_bound(store *st)
{
    store_txn *t = store_begin(st);
    if (!t) return;
    store_obj **objs = NULL;
    size_t n = 0;
    bool changed = false;
    api_err e;
    api_err_init(&e);
    int rc = store_txn_list(t, POOLS_PREFIX, &objs, &n);
    for (size_t i = 0; i < n; i++) {
        json_t *p = rc == 0 ? store_obj_parse(objs[i]) : NULL;
        store_obj_unref(objs[i]);
        if (p) rc = refresh_pool(t, p, &changed, &e);
        json_decref(p);
    }
    free(objs);
    api_err_clear(&e);
    /* best effort: on failure readers see the condition last written */
    if (rc == 0 && changed)
        store_commit(t);
    else
        store_abort(t);
}

static const reg_admission pools = {"ResourcePools", pool_admit};

int pool_admission_register(void)
{
    claims_kind = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepoolclaims");
    pools_kind = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepools");
    if (!claims_kind || !pools_kind || reg_read_hook_register(claims_kind, refresh_bound) != 0)
        return -1;
    return reg_admission_register(&pools);
}
