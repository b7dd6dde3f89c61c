/* pool_admission.c - ResourcePools decided in the write's transaction (see
 * pool_admission.h, pool_books.h and docs/pools.md).
 *
 * A claim write is decided on the pool's books (pool_books.h), in memory:
 * the claim enters, is resized in, or leaves the pool (core/pool.c's
 * incremental operations), and what that decides is written at once, in the
 * same store transaction: the claim's own status (the object being admitted
 * is changed in place), the status of any other claim whose outcome changed
 * (queued claims that now bind), and the ResourceQuota capsule-pool-<pool>
 * of every namespace whose bound claims changed. The pool's status is
 * written behind, from the books. So a claim binds in the transaction that
 * allocates it, and nothing in use can be deleted, changed or released: "in
 * use" is read from the namespace quota's usage in the ledger at that
 * moment.
 *
 * Writes of the pool itself and namespace relabels change which namespaces
 * and claims the pool holds: they reconcile the pool in full from the stored
 * claims (pb_ctx), write every claim and quota that changes, and the books
 * are loaded again from what they wrote.
 */
#include "registry/pool_admission.h"
#include "core/jdump.h"

#include "api/objects.h"
#include "api/pool_kinds.h"
#include "core/pool.h"
#include "registry/events.h"
#include "registry/explain.h"
#include "registry/pool_books.h"
#include "registry/quota_admission.h"
#include "registry/quota_cache.h"
#include "registry/quota_ledger.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RQ_PREFIX "capsule-pool-"
#define MANAGED_LABEL "projectcapsule.dev/managed-by"

static const api_kind *claims_kind, *pools_kind;

static int oom(api_err *e)
{
    return api_err_set(e, API_INTERNAL, "out of memory");
}

/* The error for a pool operation that failed (nothing was changed). */
static int pool_failed(api_err *e, int prc, const char *pool)
{
    if (prc == POOL_ENOMEM) return oom(e);
    return api_err_set(e, API_FORBIDDEN,
                       "resourcepools \"%s\": the claims cannot be accounted (amounts beyond "
                       "supported precision)",
                       pool);
}

/* ---- the namespace quotas ---- */

static void rq_key(const char *pool, const char *ns, char *buf, size_t n)
{
    snprintf(buf, n, "resourcequotas/%s/" RQ_PREFIX "%s", ns, pool);
}

/* status.used of the namespace's pool quota as the ledger holds it now (an
 * empty list when there is no quota). Caller frees. */
static rlist *rq_used(store_txn *t, const char *pool, const char *ns)
{
    char key[768];
    rq_key(pool, ns, key, sizeof key);
    store_obj *o = store_txn_get(t, key);
    rlist *used = o ? quota_ledger_read_txn(t, o) : rl_new();
    if (o) store_obj_unref(o);
    return used;
}

static json_t *new_rq(const json_t *pool, const char *ns, const char *now)
{
    char name[512];
    const char *pname = pb_meta(pool, "name");
    snprintf(name, sizeof name, RQ_PREFIX "%s", pname);
    char uid[37];
    reg_new_uid(uid);
    return json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:s, s:s, s:I, s:{s:s, s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}}",
        "apiVersion", "v1", "kind", "ResourceQuota", "metadata", "name", name, "namespace", ns,
        "uid", uid, "creationTimestamp", now, "generation", (json_int_t)1, "labels", POOL_LABEL,
        pname, MANAGED_LABEL, "controller", "ownerReferences", "apiVersion",
        POOL_GROUP "/" POOL_VERSION, "kind", "ResourcePool", "name", pname, "uid",
        pb_meta(pool, "uid"), "controller", 1, "blockOwnerDeletion", 1);
}

/* json_equal, with two absent values equal (json_equal says no). */
static bool same_json(const json_t *a, const json_t *b)
{
    return a == b || json_equal(a, b);
}

static bool same_names(const json_t *a, const json_t *b)
{
    if (json_object_size(a) != json_object_size(b)) return false;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v) if (!json_object_get(b, k)) return false;
    return true;
}

/* Write namespace ns's quota for pool `pool` with spec.hard = hard (and the
 * pool's scopes), creating it if needed, when that changes it. Its usage is
 * recounted when the resources or scopes it counts change, else carried
 * from the ledger (a hard limit changed counts nothing anew). The stored
 * quota is read from the quota cache (shared, never changed: the nodes on
 * the path to what changes are copied) and the new version cached as
 * written, so neither this write nor the ledger's next load parses it. */
static int write_rq(store_txn *t, const json_t *pool, const char *ns, const rlist *hard,
                    const char *now, api_err *e)
{
    char key[768];
    rq_key(pb_meta(pool, "name"), ns, key, sizeof key);
    store_obj *o = store_txn_get(t, key);
    json_t *cur = o ? quota_obj_json(o) : NULL;
    json_t *want = rl_to_json(hard);
    int rc = want && (!o || cur) ? 0 : oom(e);
    const json_t *spec = pb_get(cur, "spec"), *q = pb_get(pb_get(pool, "spec"), "quota");
    bool same_scopes = same_json(pb_get(spec, "scopes"), pb_get(q, "scopes")) &&
                       same_json(pb_get(spec, "scopeSelector"), pb_get(q, "scopeSelector"));
    if (rc != 0 || (o && same_scopes && same_json(pb_get(spec, "hard"), want))) {
        json_decref(want);
        json_decref(cur);
        if (o) store_obj_unref(o);
        return rc;
    }
    json_t *rq = o ? json_copy(cur) : new_rq(pool, ns, now);
    json_t *nspec = o ? json_copy((json_t *)spec) : json_object();
    json_t *meta = o ? json_copy((json_t *)pb_get(cur, "metadata")) : NULL;
    json_t *used = NULL;
    if (!rq || !nspec || (o && !meta)) rc = oom(e);
    if (rc == 0) {
        json_object_set(nspec, "hard", want);
        const char *keys[] = {"scopes", "scopeSelector"};
        for (int i = 0; i < 2; i++) {
            if (pb_get(q, keys[i]))
                json_object_set(nspec, keys[i], (json_t *)pb_get(q, keys[i]));
            else
                json_object_del(nspec, keys[i]);
        }
        json_object_set(rq, "spec", nspec);
        if (meta) {
            json_object_set_new(meta, "generation",
                                json_integer(json_integer_value(pb_get(meta, "generation")) + 1));
            json_object_set(rq, "metadata", meta);
        }
        if (!o || !same_scopes || !same_names(pb_get(spec, "hard"), want)) {
            if (quota_recount_in_txn(t, rq, &used) != 0)
                rc = api_err_set(e, API_INTERNAL, "cannot count quota usage");
        } else {
            rlist *u = quota_ledger_read_txn(t, o);
            used = u ? rl_to_json(u) : NULL;
            rl_free(u);
            if (!used) rc = oom(e);
        }
    }
    if (rc == 0) {
        json_object_set_new(rq, "status", json_pack("{s:O, s:O}", "hard", want, "used", used));
        rc = pb_put(t, key, rq, e);
    }
    store_obj *nw = rc == 0 ? store_txn_get(t, key) : NULL;
    if (nw) {
        quota_cache_put(nw, rq, NULL);
        store_obj_unref(nw);
    }
    json_decref(used);
    json_decref(meta);
    json_decref(nspec);
    json_decref(rq);
    json_decref(want);
    json_decref(cur);
    if (o) store_obj_unref(o);
    return rc;
}

static int delete_rq(store_txn *t, const char *pool, const char *ns, api_err *e)
{
    char key[768];
    rq_key(pool, ns, key, sizeof key);
    store_obj *o = store_txn_get(t, key);
    if (!o) return 0;
    json_t *last = store_obj_parse(o);
    store_obj_unref(o);
    int rc = last ? 0 : api_err_set(e, API_INTERNAL, "stored object is corrupt");
    if (rc == 0) {
        pb_set_rv(last, store_txn_rev(t));
        if (store_txn_delete(t, key, last) != 0)
            rc = api_err_set(e, API_INTERNAL, "store delete failed");
        else
            quota_ledger_forget(t, key);
    }
    json_decref(last);
    return rc;
}

/* ---- kept current for readers ----
 * Whether a bound claim is in use changes with its namespace's quota usage,
 * i.e. with pod writes, which do not touch pools. Before claims are read,
 * the Bound condition of the bound claims of every namespace whose set of
 * claims in use is not what was last checked is brought up to date, in one
 * transaction. `checked` maps "<pool uid>/<namespace>" to the uids in use
 * then, as one malloc'd "<key>\0<uids>" (which owns the map's key). A write
 * that changes a namespace's claims forgets its entry (their Bound
 * conditions were written with it). */
static strmap *checked;
static pthread_mutex_t checked_mu = PTHREAD_MUTEX_INITIALIZER; /* (a failed commit clears it) */

static void checked_key(const char *pool_uid, const char *ns, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", pool_uid, ns);
}

static void checked_forget_all(void)
{
    void *v;
    pthread_mutex_lock(&checked_mu);
    for (size_t it = 0; checked && strmap_next(checked, &it, NULL, &v);)
        free(v);
    strmap_free(checked);
    checked = NULL;
    pthread_mutex_unlock(&checked_mu);
}

/* Namespace ns of pool `uid` is to be checked again. */
static void checked_forget(const char *uid, const char *ns)
{
    char key[768];
    checked_key(uid, ns, key, sizeof key);
    pthread_mutex_lock(&checked_mu);
    free(checked ? strmap_del(checked, key) : NULL);
    pthread_mutex_unlock(&checked_mu);
}

/* ---- events ----
 * As Capsule's claim controller: an Event whenever a claim's condition
 * changes (reason and message the condition's, action Reconciled), and one
 * when a claim leaves its pool (Disassociated). Capsule types every event of
 * a False condition as a Warning, so a claim bound and unused warns twice;
 * here a Warning is what needs attention: Ready=False, Exhausted=True. The
 * Events of a transaction are emitted when it commits (and dropped if it
 * aborts), to an asynchronous recorder: a claim write does not wait for them. */
#define EVENT_COMPONENT "allot-resourcepools"

static event_recorder *recorder;
static struct {
    store_txn *txn; /* the transaction the pending Events belong to */
    json_t **v;
    size_t n, cap;
} pending; /* under the store's writer lock */

static void events_end(void *arg, int64_t rev, bool committed)
{
    (void)arg;
    (void)rev;
    for (size_t i = 0; i < pending.n; i++) {
        if (committed)
            event_recorder_emit(recorder, pending.v[i]);
        else
            json_decref(pending.v[i]);
    }
    pending.n = 0;
    pending.txn = NULL;
}

static void event_add(store_txn *t, const json_t *claim, bool warning, const char *reason,
                      const char *msg)
{
    if (!recorder) return;
    if (pending.txn != t) {
        if (pending.n || store_txn_on_end(t, events_end, NULL) != 0) return; /* best effort */
        pending.txn = t;
    }
    if (pending.n == pending.cap) {
        size_t nc = pending.cap ? pending.cap * 2 : 8;
        json_t **nv = realloc(pending.v, nc * sizeof *nv);
        if (!nv) return;
        pending.v = nv;
        pending.cap = nc;
    }
    json_t *ev = event_new(claim, warning ? "Warning" : "Normal", reason, msg, EVENT_COMPONENT);
    if (ev) pending.v[pending.n++] = ev;
}

/* Events for what changed in `claim`'s status since `old` (its status before,
 * NULL for none; not shared with the claim's). A claim that binds when it is
 * created gets none: its three conditions are routine (Capsule records three
 * Events, two of them Warnings, for every claim; writing them tripled the
 * cost of a claim write). Nor does Ready=True/Succeeded, for the same reason. */
static void claim_events(store_txn *t, const json_t *claim, const json_t *old)
{
    if (!recorder) return;
    const json_t *status = pb_get(claim, "status"), *before = pb_get(old, "conditions");
    if (pb_get(old, "pool") && !pb_get(status, "pool"))
        event_add(t, claim, false, "Disassociated", "claim is disassociated from the pool");
    const json_t *ex = cond_get(status, "Exhausted");
    if (!json_array_size(before) && ex && !strcmp(pb_str(ex, "status"), "False")) return;
    size_t i;
    json_t *c;
    json_array_foreach(pb_get(status, "conditions"), i, c)
    {
        const char *type = pb_str(c, "type"), *st = pb_str(c, "status");
        const json_t *was = NULL;
        size_t j;
        json_t *b;
        json_array_foreach(before, j, b) if (!strcmp(pb_str(b, "type"), type)) was = b;
        if (was && !strcmp(pb_str(was, "status"), st) &&
            !strcmp(pb_str(was, "reason"), pb_str(c, "reason")) &&
            !strcmp(pb_str(was, "message"), pb_str(c, "message")))
            continue;
        bool warn = (!strcmp(type, "Ready") && !strcmp(st, "False")) ||
                    (!strcmp(type, "Exhausted") && !strcmp(st, "True"));
        if (!strcmp(type, "Ready") && !warn) continue;
        event_add(t, claim, warn, pb_str(c, "reason"), pb_str(c, "message"));
    }
}

int pool_admission_start_events(store *st)
{
    if (recorder) return 0;
    recorder = event_recorder_start(st);
    return recorder ? 0 : -1;
}

void pool_admission_stop_events(void)
{
    event_recorder_stop(recorder);
    recorder = NULL;
    free(pending.v);
    pending.v = NULL;
    pending.cap = 0;
}

/* ---- claim statuses ---- */

static void claim_key(const char *ns, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, PB_CLAIMS_PREFIX "%s/%s", ns, name);
}

static json_t *status_of(json_t *claim)
{
    json_t *status = json_object_get(claim, "status");
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(claim, "status", status);
    }
    return status;
}

static json_int_t gen_of(const json_t *claim)
{
    return json_integer_value(pb_get(pb_get(claim, "metadata"), "generation"));
}

/* status.condition: the claim's conditions in one, as Capsule's listing
 * columns print it (api/pool_kinds.h). */
static void summarize(json_t *status, json_int_t gen, const char *now)
{
    pool_claim_state s;
    if (pool_claim_summary(status, &s))
        cond_set_one(status, "condition", s.type, s.status, s.reason, s.message, gen, now);
}

/* ---- the claim's reference to its pool ----
 * As Capsule's claim controller: a claim assigned to a pool (status.pool set:
 * bound or waiting in its queue) carries a plain ("loose": not controller,
 * no blockOwnerDeletion) ownerReference to it, and no other to a
 * ResourcePool; a claim outside any pool carries none. It changes in the
 * transaction that changes status.pool. A deleted pool therefore never
 * leaves claims for the garbage collector: with deleteBoundResources its
 * claims go in the pool's delete, without it they lose the reference there
 * (Capsule's disassociation) and stay, Ready=False. docs/pools.md. */

static bool is_pool_ref(const json_t *ref)
{
    const char *av = pb_str(ref, "apiVersion");
    return !strcmp(pb_str(ref, "kind"), "ResourcePool") &&
           !strncmp(av, POOL_GROUP "/", strlen(POOL_GROUP "/"));
}

/* Drop every ResourcePool reference but the one to `uid` (NULL: all). True
 * when the one to uid is there. */
static bool drop_pool_refs(json_t *claim, const char *uid)
{
    json_t *meta = json_object_get(claim, "metadata");
    json_t *refs = json_object_get(meta, "ownerReferences");
    bool kept = false;
    for (size_t i = json_array_size(refs); i-- > 0;) {
        json_t *r = json_array_get(refs, i);
        if (!is_pool_ref(r)) continue;
        if (uid && !kept && !strcmp(pb_str(r, "uid"), uid) && !json_object_get(r, "controller") &&
            !json_object_get(r, "blockOwnerDeletion")) {
            kept = true;
            continue;
        }
        json_array_remove(refs, i);
    }
    if (refs && !json_array_size(refs)) json_object_del(meta, "ownerReferences");
    return kept;
}

static void set_pool_ref(json_t *claim, const json_t *pool)
{
    if (drop_pool_refs(claim, pb_meta(pool, "uid"))) return;
    json_t *meta = json_object_get(claim, "metadata");
    json_t *refs = json_object_get(meta, "ownerReferences");
    if (!json_is_array(refs)) {
        refs = json_array();
        json_object_set_new(meta, "ownerReferences", refs);
    }
    json_array_append_new(refs,
                          json_pack("{s:s, s:s, s:s, s:s}", "apiVersion",
                                    POOL_GROUP "/" POOL_VERSION, "kind", "ResourcePool", "name",
                                    pb_meta(pool, "name"), "uid", pb_meta(pool, "uid")));
}

/* A claim outside any pool: Ready=False with `why`. */
static void status_out(json_t *claim, const char *why, const char *now)
{
    drop_pool_refs(claim, NULL);
    json_t *status = status_of(claim);
    json_int_t gen = gen_of(claim);
    json_object_set_new(status, "observedGeneration", json_integer(gen));
    json_object_del(status, "pool");
    cond_set(status, "Ready", "False", "Failed", why, gen, now);
    cond_del(status, "Bound");
    cond_del(status, "Exhausted");
    summarize(status, gen, now);
}

/* The claim's status for its outcome in pool `pool` (state st); `why` set:
 * it is not in the pool, for that reason. */
static int claim_status(store_txn *t, const json_t *pool, const pool_view *view,
                        const pool_state *st, json_t *claim, const char *why, const char *now,
                        api_err *e)
{
    const json_t *meta = pb_get(claim, "metadata");
    const char *ns = pb_str(meta, "namespace"), *uid = pb_str(meta, "uid");
    const pool_status *ps = why ? NULL : pool_state_get(st, ns, uid);
    if (!ps) {
        status_out(claim, why ? why : "resourcepool not available", now);
        return 0;
    }
    json_t *status = status_of(claim);
    json_int_t gen = gen_of(claim);
    json_object_set_new(status, "observedGeneration", json_integer(gen));
    json_object_set_new(
        status, "pool",
        json_pack("{s:s, s:s}", "name", pb_meta(pool, "name"), "uid", pb_meta(pool, "uid")));
    set_pool_ref(claim, pool);
    cond_set(status, "Ready", "True", "Succeeded", "reconciled", gen, now);
    if (ps->outcome == POOL_BOUND) {
        cond_set(status, "Exhausted", "False", "NoExhaustions", "resource claimable from pool", gen,
                 now);
        rlist *used = rq_used(t, pb_meta(pool, "name"), ns);
        bool in_use = false;
        if (!used || pool_claim_in_use(st, view, ns, uid, used, &in_use) != POOL_OK) {
            rl_free(used);
            return api_err_set(e, API_INTERNAL, "pool accounting failed");
        }
        rl_free(used);
        cond_set(status, "Bound", in_use ? "True" : "False", in_use ? "InUse" : "Unused",
                 in_use ? "claim is used" : "claim is unused", gen, now);
    } else {
        cond_set(status, "Exhausted", "True",
                 ps->outcome == POOL_QUEUED ? "QueueExhausted" : "PoolExhausted",
                 ps->message ? ps->message : "", gen, now);
        cond_set(status, "Bound", "False", "Failed", "claim causes exhaustions", gen, now);
    }
    summarize(status, gen, now);
    return 0;
}

/* Write stored claim `claim` (borrowed; copied) again with its status for
 * its outcome, when that differs from the stored one. */
static int rewrite_claim(store_txn *t, const json_t *pool, const pool_view *view,
                         const pool_state *st, const json_t *claim, const char *why,
                         const char *now, api_err *e)
{
    char key[768];
    json_t *copy = jcopy(claim);
    if (!copy) return oom(e);
    int rc = claim_status(t, pool, view, st, copy, why, now, e);
    if (rc == 0 && (!same_json(pb_get(claim, "status"), pb_get(copy, "status")) ||
                    !same_json(pb_get(pb_get(claim, "metadata"), "ownerReferences"),
                               pb_get(pb_get(copy, "metadata"), "ownerReferences")))) {
        claim_key(pb_meta(copy, "namespace"), pb_meta(copy, "name"), key, sizeof key);
        rc = pb_put(t, key, copy, e);
        if (rc == 0) claim_events(t, copy, pb_get(claim, "status"));
    }
    json_decref(copy);
    return rc;
}

/* ---- a claim write, on the books ---- */

/* Write what delta d decided in pool book b, but the claim (self_ns,
 * self_uid) being written: the other claims whose outcome or message
 * changed, and the quota of every namespace whose bound claims changed, and
 * of self_ns. */
static int write_delta(store_txn *t, const pool_book *b, const pool_delta *d, const char *self_ns,
                       const char *self_uid, api_err *e)
{
    char now[32], key[768];
    reg_now_rfc3339(now, sizeof now);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < d->nclaims; i++) {
        const pool_change *c = &d->claims[i];
        if (!strcmp(c->uid, self_uid) && !strcmp(c->namespace_, self_ns)) continue;
        claim_key(c->namespace_, c->name, key, sizeof key);
        store_obj *o = store_txn_get(t, key);
        json_t *claim = o ? store_obj_parse(o) : NULL;
        if (o) store_obj_unref(o);
        if (claim) rc = rewrite_claim(t, b->pool, &b->view, b->state, claim, NULL, now, e);
        json_decref(claim);
    }
    rlist *hard = rl_new();
    if (!hard && rc == 0) rc = oom(e);
    bool self_done = false;
    for (size_t i = 0; rc == 0 && i <= d->nnamespaces; i++) {
        const char *ns = i < d->nnamespaces ? d->namespaces[i] : self_ns;
        if (i == d->nnamespaces && (self_done || !*self_ns)) break;
        self_done |= !strcmp(ns, self_ns);
        checked_forget(b->uid, ns); /* its claims in use may be others now */
        if (!pool_book_selects(b, ns)) continue;
        int prc = pool_rq_hard(b->state, &b->view, ns, hard);
        rc = prc == POOL_OK ? write_rq(t, b->pool, ns, hard, now, e) : pool_failed(e, prc, b->name);
    }
    rl_free(hard);
    return rc;
}

/* Claim (ns, uid) leaves the pool of books en (a no-op when it is not in
 * it); what that decides for others is written. */
static int book_leave(store_txn *t, ledger_entry *en, const char *ns, const char *uid, api_err *e)
{
    const pool_book *cur = pool_book_value(en);
    if (!pool_state_get(cur->state, ns, uid)) return 0;
    pool_book *b = pool_book_modify(t, en, e);
    if (!b) return -1;
    pool_delta d;
    pool_delta_init(&d);
    int prc = pool_remove_claim(b->state, &b->view, ns, uid, &d);
    int rc = prc == POOL_OK ? write_delta(t, b, &d, ns, uid, e) : pool_failed(e, prc, b->name);
    pool_delta_cleanup(&d);
    return rc;
}

/* Claim `claim` (being written) enters the pool of books en, or is resized
 * in it; its status and what the decision changes for others are written. */
static int book_enter(store_txn *t, ledger_entry *en, json_t *claim, api_err *e)
{
    char now[32];
    const json_t *meta = pb_get(claim, "metadata");
    const char *ns = pb_str(meta, "namespace"), *uid = pb_str(meta, "uid");
    rlist *req = pb_rl(pb_get(pb_get(claim, "spec"), "claim"));
    if (!req) return oom(e);
    pool_claim c = {ns, pb_str(meta, "name"), uid, pb_queued_since(claim), req, false};
    /* A write that changes nothing the books hold (labels, a re-apply) does
     * not touch them: an aborted transaction (a no-op update, a dry run)
     * drops the books it changed, and the next write would reload them. */
    const pool_book *cur = pool_book_value(en);
    const pool_status *ps = pool_state_get(cur->state, ns, uid);
    if (ps && ps->created == c.created && rl_equal(ps->request, req)) {
        rl_free(req);
        reg_now_rfc3339(now, sizeof now);
        return claim_status(t, cur->pool, &cur->view, cur->state, claim, NULL, now, e);
    }
    pool_book *b = pool_book_modify(t, en, e);
    if (!b) {
        rl_free(req);
        return -1;
    }
    pool_delta d;
    pool_delta_init(&d);
    int prc = pool_apply_claim(b->state, &b->view, &c, &d);
    rl_free(req);
    int rc = prc == POOL_OK ? write_delta(t, b, &d, ns, uid, e) : pool_failed(e, prc, b->name);
    pool_delta_cleanup(&d);
    if (rc == 0) {
        reg_now_rfc3339(now, sizeof now);
        rc = claim_status(t, b->pool, &b->view, b->state, claim, NULL, now, e);
    }
    return rc;
}

/* ---- full reconciles (pool and namespace writes) ---- */

static bool in_delta(const pool_delta *d, const pb_claim *r)
{
    for (size_t i = 0; i < d->nclaims; i++)
        if (!strcmp(d->claims[i].uid, r->pc.uid) &&
            !strcmp(d->claims[i].namespace_, r->pc.namespace_))
            return true;
    return false;
}

/* Reconcile the pool of `pc` from its stored claims and write everything it
 * decides: every claim whose status changes,
 * every selected namespace's quota, and the quotas of namespaces in
 * `old_namespaces` it no longer selects are deleted. The pool's status is
 * set in pc->pool, which is stored here when `write_pool` (else the caller
 * stores it: the object being admitted). */
static int reconcile_write(store_txn *t, pb_ctx *pc, const json_t *old_namespaces, bool write_pool,
                           api_err *e)
{
    char now[32], key[768];
    checked_forget_all();
    reg_now_rfc3339(now, sizeof now);
    pool_state *prev = pb_stored_state(pc, e), *st = NULL;
    if (!prev) return -1;
    pool_claim *cs = calloc(pc->n ? pc->n : 1, sizeof *cs);
    size_t m = 0;
    for (size_t i = 0; cs && i < pc->n; i++)
        if (!pc->claims[i].why) cs[m++] = pc->claims[i].pc;
    pool_delta d;
    pool_delta_init(&d);
    int prc = cs ? pool_reconcile(&pc->view, prev, cs, m, &st, &d) : POOL_ENOMEM;
    int rc = prc == POOL_OK ? 0 : pool_failed(e, prc, pc->name);
    free(cs);
    pool_state_free(prev);
    for (size_t i = 0; rc == 0 && i < pc->n; i++) {
        pb_claim *r = &pc->claims[i];
        rc = rewrite_claim(t, pc->pool, &pc->view, st, r->obj, r->why, now, e);
    }
    rlist *hard = rl_new();
    size_t i;
    json_t *v;
    json_array_foreach(pc->namespaces, i, v)
    {
        if (rc != 0) break;
        prc = hard ? pool_rq_hard(st, &pc->view, json_string_value(v), hard) : POOL_ENOMEM;
        rc = prc == POOL_OK ? write_rq(t, pc->pool, json_string_value(v), hard, now, e)
                            : pool_failed(e, prc, pc->name);
    }
    rl_free(hard);
    json_array_foreach(old_namespaces, i, v)
    {
        if (rc == 0 && !pb_ns_selected(pc, json_string_value(v)))
            rc = delete_rq(t, pc->name, json_string_value(v), e);
    }
    if (rc == 0) {
        json_t *status = pb_status_json(pc->pool, &pc->view, pc->namespaces, st, now,
                                        pb_get(pc->pool, "status"));
        if (!status)
            rc = oom(e);
        else
            json_object_set_new(pc->pool, "status", status);
    }
    if (rc == 0 && write_pool) {
        snprintf(key, sizeof key, PB_POOLS_PREFIX "%s", pc->name);
        rc = pb_put(t, key, pc->pool, e);
    }
    pool_state_free(st);
    pool_delta_cleanup(&d);
    (void)in_delta;
    return rc;
}

/* ---- admission ---- */

static int forbid(api_err *e, const api_kind *k, const char *name, const char *msg)
{
    api_err_set(e, API_FORBIDDEN, "%s%s%s \"%s\" is forbidden: %s", k->resource,
                *k->group ? "." : "", k->group, name, msg);
    api_err_details(e, name, k->group, k->resource);
    return -1;
}

/* A pool check that did not pass: 403 with its message (taken) when it
 * denied, else 500. */
static int refuse(api_err *e, const api_kind *k, const char *name, int d, char *msg)
{
    if (d == POOL_DENIED) forbid(e, k, name, msg);
    free(msg);
    return d == POOL_DENIED ? -1 : api_err_set(e, API_INTERNAL, "pool accounting failed");
}

/* Whether stored claim c is in use in its pool now. */
static int claim_in_use(store_txn *t, const json_t *c, bool *in_use, api_err *e)
{
    *in_use = false;
    ledger_entry *en;
    if (pool_book_find(t, pb_str(pb_get(pb_get(c, "status"), "pool"), "name"), &en, e) != 0)
        return -1;
    const pool_book *b = en ? pool_book_value(en) : NULL;
    if (!b || !pb_bound_to(c, b->uid)) return 0;
    const char *ns = pb_meta(c, "namespace");
    rlist *used = rq_used(t, b->name, ns);
    int rc = used && pool_claim_in_use(b->state, &b->view, ns, pb_meta(c, "uid"), used, in_use) ==
                         POOL_OK
                 ? 0
                 : api_err_set(e, API_INTERNAL, "pool accounting failed");
    rl_free(used);
    return rc;
}

/* Capsule's auto-assign: among the pools selecting the claim's namespace
 * whose hard holds every claimed resource, one where all of it is available
 * first, ties by name. */
static int auto_assign(store_txn *t, json_t *claim, api_err *e)
{
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_txn_list(t, PB_POOLS_PREFIX, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list pools");
    pool_candidate *cand = calloc(n ? n : 1, sizeof *cand);
    rlist **avail = calloc(n ? n : 1, sizeof *avail);
    rlist *req = pb_rl(pb_get(pb_get(claim, "spec"), "claim"));
    size_t m = 0;
    int rc = cand && avail && req ? 0 : oom(e);
    const char *ns = pb_meta(claim, "namespace");
    for (size_t i = 0; i < n; i++) {
        ledger_entry *en = rc == 0 ? pool_book_of(t, objs[i], e) : NULL;
        store_obj_unref(objs[i]);
        if (!en && rc == 0) rc = -1;
        const pool_book *b = en ? pool_book_value(en) : NULL;
        if (!b || !pool_book_selects(b, ns)) continue;
        if (!(avail[m] = rl_new()) ||
            pool_allocation(b->state, &b->view, NULL, avail[m]) != POOL_OK)
            rc = api_err_set(e, API_INTERNAL, "pool accounting failed");
        cand[m] = (pool_candidate){b->name, b->hard, avail[m]};
        m++;
    }
    free(objs);
    long pick = rc == 0 ? pool_auto_assign(req, cand, m) : -1;
    if (pick >= 0)
        json_object_set_new(json_object_get(claim, "spec"), "pool", json_string(cand[pick].name));
    for (size_t i = 0; i < m; i++)
        rl_free(avail[i]);
    free(cand);
    free(avail);
    rl_free(req);
    return rc;
}

/* The claim (ns, uid) leaves pool `name`'s books, if it is there. */
static int leave_named(store_txn *t, const char *name, const char *ns, const char *uid, api_err *e)
{
    ledger_entry *en;
    if (pool_book_find(t, name, &en, e) != 0) return -1;
    return en ? book_leave(t, en, ns, uid, e) : 0;
}

/* The pools a stored claim may be in: its status.pool and its spec.pool. */
static int leave_old(store_txn *t, const json_t *old, const char *except, api_err *e)
{
    const char *ns = pb_meta(old, "namespace"), *uid = pb_meta(old, "uid");
    const char *a = pb_str(pb_get(pb_get(old, "status"), "pool"), "name");
    const char *b = pb_str(pb_get(old, "spec"), "pool");
    int rc = 0;
    if (*a && strcmp(a, except) != 0) rc = leave_named(t, a, ns, uid, e);
    if (rc == 0 && *b && strcmp(b, a) != 0 && strcmp(b, except) != 0)
        rc = leave_named(t, b, ns, uid, e);
    return rc;
}

/* A claim created or changed: it enters its pool, is resized in it, moves,
 * is released (and queued again), or waits outside any pool. */
/* The pool's entry in an explanation (registry/explain.h): per claimed
 * resource, the pool's allocation before the claim, and with it, against its
 * hard; the outcome is the claim's (Bound, or why it waits in the queue). A
 * claim is never refused for want of room: it queues. */
static void explain_claim(reg_explain *xp, const pool_book *b, const rlist *before,
                          const json_t *claim)
{
    json_t *en = reg_explain_entry(xp, "ResourcePool", NULL, b->name);
    rlist *req = en ? pb_rl(pb_get(pb_get(claim, "spec"), "claim")) : NULL;
    for (size_t i = 0; req && i < rl_len(req); i++) {
        const char *name = rl_name(req, i);
        const qty *h = rl_get(b->hard, name), *u = rl_get(before, name);
        qty after = u ? *u : qty_zero(QTY_DECIMAL_SI);
        char hs[QTY_STR_MAX] = "", us[QTY_STR_MAX], rs[QTY_STR_MAX], as[QTY_STR_MAX];
        if (h) qty_format_str(h, hs, sizeof hs);
        qty_format_str(&after, us, sizeof us);
        qty_format_str(rl_qty(req, i), rs, sizeof rs);
        bool fits = qty_add(&after, rl_qty(req, i)) == 0;
        qty_format_str(&after, as, sizeof as);
        reg_explain_row(en, name, h ? hs : NULL, us, rs, fits ? as : NULL,
                        !h || !fits || qty_cmp(&after, h) > 0);
    }
    rl_free(req);
    if (!en) return;
    const json_t *status = pb_get(claim, "status"), *bound = cond_get(status, "Bound"),
                 *ex = cond_get(status, "Exhausted");
    if (bound &&
        (!strcmp(pb_str(bound, "reason"), "Unused") || !strcmp(pb_str(bound, "reason"), "InUse")))
        json_object_set_new(en, "outcome", json_string("Bound"));
    else
        json_object_set_new(en, "outcome",
                            json_sprintf("Queued: %s", ex ? pb_str(ex, "message") : "not bound"));
}

static int claim_write(store_txn *t, const api_kind *k, json_t *obj, const json_t *old,
                       bool release, api_err *e)
{
    char now[32], why[600];
    char *msg = NULL;
    reg_now_rfc3339(now, sizeof now);
    const char *name = pb_meta(obj, "name"), *ns = pb_meta(obj, "namespace");
    const char *uid = pb_meta(obj, "uid");
    json_t *spec = json_object_get(obj, "spec");
    if (json_is_object(spec) && !*pb_str(spec, "pool") && auto_assign(t, obj, e) != 0) return -1;
    const char *pname = pb_str(pb_get(obj, "spec"), "pool");
    /* Released: the claim lets go of what it holds (waiting claims take it
     * first) and queues again behind them, from now. */
    /* (A verdict-only dry run leaves the books alone: what follows a check
     * that may refuse only shapes the claim's status.) */
    bool verdict = reg_verdict_only();
    if (old && !verdict && leave_old(t, old, release ? "" : pname, e) != 0) return -1;
    if (release) {
        const char *from = pb_str(pb_get(pb_get(old, "status"), "pool"), "name");
        json_object_set_new(status_of(obj), "releasedAt", json_string(now));
        snprintf(why, sizeof why, "claim released from resourcepool %s and queued again",
                 *from ? from : pname);
        event_add(t, obj, false, "Released", why);
    }
    ledger_entry *en;
    if (pool_book_find(t, pname, &en, e) != 0) return -1;
    const pool_book *b = en ? pool_book_value(en) : NULL;
    if (!b) {
        /* Capsule's claim controller: the claim waits with Ready=False; it
         * binds when its pool is created. */
        if (*pname)
            snprintf(why, sizeof why, "ResourcePool.%s \"%s\" not found", POOL_GROUP, pname);
        else
            snprintf(why, sizeof why, "no pool reference was defined");
        status_out(obj, why, now);
        return 0;
    }
    /* A claim for resources its pool does not hold is refused. */
    rlist *req = pb_rl(pb_get(pb_get(obj, "spec"), "claim"));
    int d = req ? pool_check_claim_resources(pname, b->hard, req, &msg) : POOL_ENOMEM;
    rl_free(req);
    if (d != POOL_OK) return refuse(e, k, name, d, msg);
    if (verdict) return 0;
    if (!pool_book_selects(b, ns)) {
        status_out(obj, "resourcepool not available", now);
        return book_leave(t, en, ns, uid, e);
    }
    reg_explain *xp = reg_explain_current();
    rlist *before = xp ? rl_new() : NULL;
    if (before && pool_allocation(b->state, &b->view, before, NULL) != POOL_OK) {
        rl_free(before);
        before = NULL;
    }
    int rc = book_enter(t, en, obj, e);
    if (rc == 0 && before) explain_claim(xp, pool_book_value(en), before, obj);
    rl_free(before);
    return rc;
}

static int admit_claim(store_txn *t, const api_kind *k, reg_op op, json_t *obj, const json_t *old,
                       api_err *e)
{
    const char *name = pb_meta(obj, "name");
    const char *old_pool = old ? pb_str(pb_get(pb_get(old, "status"), "pool"), "name") : "";
    bool in_use = false;
    if (old && op != REG_CREATE && claim_in_use(t, old, &in_use, e) != 0) return -1;
    char *msg = NULL;
    if (op == REG_DELETE) {
        int d = pool_check_claim_delete(in_use, old_pool, &msg);
        if (d != POOL_OK) return refuse(e, k, name, d, msg);
        return reg_verdict_only() ? 0 : leave_old(t, old, "", e);
    }
    bool release = false;
    if (op == REG_UPDATE) {
        rlist *oc = pb_rl(pb_get(pb_get(old, "spec"), "claim")),
              *nc = pb_rl(pb_get(pb_get(obj, "spec"), "claim"));
        int d = oc && nc
                    ? pool_check_claim_update(in_use, old_pool, pb_str(pb_get(old, "spec"), "pool"),
                                              pb_str(pb_get(obj, "spec"), "pool"), oc, nc, &msg)
                    : POOL_ENOMEM;
        rl_free(oc);
        rl_free(nc);
        if (d != POOL_OK) return refuse(e, k, name, d, msg);
        release = pool_claim_release_requested(obj);
        if (in_use && release) {
            char why[600];
            snprintf(why, sizeof why,
                     "cannot release the claim while it is used in resourcepool %s", old_pool);
            return forbid(e, k, name, why);
        }
    }
    /* The annotation is an action: done (or refused) here, never kept. */
    pool_claim_strip_release(obj);
    json_t *before = jcopy(pb_get(obj, "status"));
    int rc = claim_write(t, k, obj, old, release, e);
    if (rc == 0) claim_events(t, obj, before);
    json_decref(before);
    return rc;
}

/* The pool hard may not drop below what is claimed (Capsule's pool webhook). */
static int check_hard(store_txn *t, const api_kind *k, const json_t *obj, api_err *e)
{
    ledger_entry *en;
    if (pool_book_find(t, pb_meta(obj, "name"), &en, e) != 0) return -1;
    if (!en) return 0;
    const pool_book *b = pool_book_value(en);
    char *msg = NULL;
    rlist *used = rl_new(), *nh = pb_rl(pb_get(pb_get(pb_get(obj, "spec"), "quota"), "hard"));
    int d = used && nh && pool_allocation(b->state, &b->view, used, NULL) == POOL_OK
                ? pool_check_hard_update(b->hard, nh, used, &msg)
                : POOL_ENOMEM;
    rl_free(used);
    rl_free(nh);
    return d == POOL_OK ? 0 : refuse(e, k, pb_meta(obj, "name"), d, msg);
}

/* A pool deleted: the namespaces' quotas go, and the claims' binding (or
 * the claims, with deleteBoundResources). Claims in use hold it. */
static int pool_gone(store_txn *t, const api_kind *k, json_t *obj, const json_t *old_ns, api_err *e)
{
    pb_ctx pc;
    char key[768], now[32], why[700];
    reg_now_rfc3339(now, sizeof now);
    int rc = pb_load_pool(t, obj, &pc, NULL, e);
    if (rc == 0) rc = pb_load_claims(t, &pc, NULL, NULL, false, e);
    pool_state *s = rc == 0 ? pb_stored_state(&pc, e) : NULL;
    if (!s && rc == 0) rc = -1;
    for (size_t i = 0; s && rc == 0 && i < pc.n; i++) {
        pb_claim *r = &pc.claims[i];
        if (!r->stored_req) continue;
        rlist *used = rq_used(t, pc.name, r->pc.namespace_);
        bool in_use = false;
        if (!used ||
            pool_claim_in_use(s, &pc.view, r->pc.namespace_, r->pc.uid, used, &in_use) != POOL_OK)
            rc = api_err_set(e, API_INTERNAL, "pool accounting failed");
        rl_free(used);
        if (rc == 0 && in_use) {
            snprintf(why, sizeof why, "claim %s/%s is in use", r->pc.namespace_, r->pc.name);
            rc = forbid(e, k, pc.name, why);
        }
    }
    pool_state_free(s);
    for (size_t i = 0; rc == 0 && i < pc.n; i++) {
        pb_claim *r = &pc.claims[i];
        claim_key(r->pc.namespace_, r->pc.name, key, sizeof key);
        if (pc.view.delete_bound_resources) {
            pb_set_rv(r->obj, store_txn_rev(t));
            if (store_txn_delete(t, key, r->obj) != 0)
                rc = api_err_set(e, API_INTERNAL, "store delete failed");
            continue;
        }
        snprintf(why, sizeof why, "ResourcePool.%s \"%s\" not found", POOL_GROUP, pc.name);
        json_t *c = jcopy(r->obj);
        if (!c) rc = oom(e);
        if (c) status_out(c, why, now);
        if (c) rc = pb_put(t, key, c, e);
        json_decref(c);
    }
    size_t i;
    json_t *v;
    json_array_foreach(old_ns, i, v) if (rc == 0) rc =
        delete_rq(t, pc.name, json_string_value(v), e);
    json_array_foreach(pc.namespaces, i, v) if (rc == 0) rc =
        delete_rq(t, pc.name, json_string_value(v), e);
    snprintf(key, sizeof key, PB_POOLS_PREFIX "%s", pc.name);
    if (rc == 0) ledger_forget(t, key);
    pb_ctx_free(&pc);
    return rc;
}

static int admit_pool(store_txn *t, const api_kind *k, reg_op op, json_t *obj, const json_t *old,
                      api_err *e)
{
    if (op == REG_UPDATE && check_hard(t, k, obj, e) != 0) return -1;
    json_t *old_ns =
        old ? json_incref((json_t *)pb_get(pb_get(old, "status"), "namespaces")) : NULL;
    int rc;
    if (op == REG_DELETE) {
        rc = pool_gone(t, k, obj, old_ns, e);
    } else {
        pb_ctx pc;
        rc = pb_load_pool(t, obj, &pc, NULL, e);
        if (rc == 0) rc = pb_load_claims(t, &pc, NULL, NULL, false, e);
        if (rc == 0) rc = reconcile_write(t, &pc, old_ns, false, e);
        pb_ctx_free(&pc);
    }
    json_decref(old_ns);
    return rc;
}

/* A namespace created or relabelled enters or leaves pools: each pool is
 * reconciled with the namespace as written. A namespace cannot leave a pool
 * while one of its claims there is in use (that would release it). */
static int admit_namespace(store_txn *t, const api_kind *k, reg_op op, const json_t *obj,
                           const json_t *old, api_err *e)
{
    /* A namespace being deleted leaves its pools (its pods go too: no claim
     * holds it); one relabelled may enter or leave them. */
    bool leaving = op == REG_DELETE || pb_get(pb_get(obj, "metadata"), "deletionTimestamp");
    if (old && !leaving &&
        same_json(pb_get(pb_get(old, "metadata"), "labels"),
                  pb_get(pb_get(obj, "metadata"), "labels")))
        return 0;
    json_t *gone = NULL; /* a namespace deleted at once: as one being deleted */
    if (op == REG_DELETE && !pb_get(pb_get(obj, "metadata"), "deletionTimestamp")) {
        if (!(gone = jcopy(obj))) return oom(e);
        json_object_set_new(json_object_ensure(gone, "metadata"), "deletionTimestamp",
                            json_string("1970-01-01T00:00:00Z"));
        obj = gone;
    }
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_txn_list(t, PB_POOLS_PREFIX, &objs, &n) != 0) {
        json_decref(gone);
        return api_err_set(e, API_INTERNAL, "cannot list pools");
    }
    const char *ns = pb_meta(obj, "name");
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        /* the books say whether the pool selects it now: most writes change
         * nothing, and cost no parse of the pool */
        ledger_entry *en = rc == 0 ? pool_book_of(t, objs[i], e) : NULL;
        const pool_book *bk = en ? pool_book_value(en) : NULL;
        bool was = bk && pool_book_selects(bk, ns), is = bk && pb_selects_ns(bk->pool, obj);
        json_t *pool = bk && was != is ? store_obj_parse(objs[i]) : NULL;
        store_obj_unref(objs[i]);
        if (rc == 0 && !bk) rc = -1;
        if (rc == 0 && was != is && !pool) rc = oom(e);
        if (!pool) continue;
        json_t *old_ns = json_incref(bk->namespaces);
        pb_ctx pc;
        rc = pb_load_pool(t, pool, &pc, obj, e);
        json_decref(pool);
        if (rc == 0) rc = pb_load_claims(t, &pc, NULL, NULL, false, e);
        if (rc == 0 && was && !is && !leaving) {
            pool_state *s = pb_stored_state(&pc, e);
            rlist *used = s ? rq_used(t, pc.name, ns) : NULL;
            for (size_t c = 0; s && used && rc == 0 && c < pc.n; c++) {
                const pb_claim *r = &pc.claims[c];
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
        if (rc == 0 && was != is) rc = reconcile_write(t, &pc, old_ns, true, e);
        json_decref(old_ns);
        pb_ctx_free(&pc);
    }
    free(objs);
    json_decref(gone);
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
        return forbid(e, k, pb_meta(obj, "name"),
                      "the status of pools and claims is written by allot");
    }
    if (*sub) return 0;
    return k == claims_kind ? admit_claim(t, k, op, obj, old, e)
                            : admit_pool(t, k, op, obj, old, e);
}

/* The uids of the claims of ns in use in pool b, as one string (malloc'd),
 * and *bound, *nbound the bound claims of ns (caller frees the array). */
static char *in_use_sig(store_txn *t, const pool_book *b, const char *ns,
                        const pool_status ***bound, size_t *nbound, const pool_status ***inuse,
                        size_t *ninuse)
{
    *bound = *inuse = NULL;
    *nbound = *ninuse = 0;
    rlist *used = rq_used(t, b->name, ns);
    if (!used || pool_state_bound_in(b->state, ns, bound, nbound) != POOL_OK ||
        pool_in_use(b->state, &b->view, ns, used, inuse, ninuse) != POOL_OK) {
        rl_free(used);
        return NULL;
    }
    rl_free(used);
    size_t len = 1;
    for (size_t i = 0; i < *ninuse; i++)
        len += strlen((*inuse)[i]->uid) + 1;
    char *sig = malloc(len), *p = sig;
    for (size_t i = 0; sig && i < *ninuse; i++)
        p += sprintf(p, "%s,", (*inuse)[i]->uid);
    if (sig) *p = '\0';
    return sig;
}

/* Bring the Bound condition of pool b's claims in namespace ns up to date. */
static int refresh_ns(store_txn *t, const pool_book *b, const char *ns, const char *now,
                      bool *changed, api_err *e)
{
    char key[768];
    const pool_status **bound, **inuse;
    size_t nb, ni;
    char *sig = in_use_sig(t, b, ns, &bound, &nb, &inuse, &ni);
    int rc = sig ? 0 : api_err_set(e, API_INTERNAL, "pool accounting failed");
    checked_key(b->uid, ns, key, sizeof key);
    pthread_mutex_lock(&checked_mu);
    const char *was = rc == 0 && checked ? strmap_get(checked, key) : NULL;
    bool same = was && !strcmp(was + strlen(was) + 1, sig);
    pthread_mutex_unlock(&checked_mu);
    if (rc == 0 && !same) {
        for (size_t i = 0; rc == 0 && i < nb; i++) {
            bool use = false;
            for (size_t j = 0; j < ni; j++)
                use |= inuse[j] == bound[i];
            char ck[768];
            claim_key(ns, bound[i]->name, ck, sizeof ck);
            store_obj *o = store_txn_get(t, ck);
            json_t *c = o ? store_obj_parse(o) : NULL;
            if (o) store_obj_unref(o);
            json_t *status = c ? json_object_get(c, "status") : NULL;
            const json_t *cond = cond_get(status, "Bound");
            if (!c || !json_is_object(status) ||
                (cond && !strcmp(pb_str(cond, "status"), use ? "True" : "False"))) {
                json_decref(c);
                continue;
            }
            cond_set(status, "Bound", use ? "True" : "False", use ? "InUse" : "Unused",
                     use ? "claim is used" : "claim is unused", gen_of(c), now);
            rc = pb_put(t, ck, c, e);
            *changed = true;
            json_decref(c);
        }
        /* the entry: "<key>\0<sig>", which owns the map's key */
        size_t kl = strlen(key) + 1, sl = strlen(sig) + 1;
        char *entry = rc == 0 ? malloc(kl + sl) : NULL, *old = NULL;
        if (entry) {
            memcpy(entry, key, kl);
            memcpy(entry + kl, sig, sl);
        }
        pthread_mutex_lock(&checked_mu);
        if (rc == 0 && (!entry || (!checked && !(checked = strmap_new())) ||
                        strmap_put(checked, entry, entry, (void **)&old) != 0)) {
            free(entry);
            rc = oom(e);
        }
        pthread_mutex_unlock(&checked_mu);
        free(old);
    }
    free(sig);
    free(bound);
    free(inuse);
    return rc;
}

static void refresh_bound(store *st)
{
    store_txn *t = store_begin(st);
    if (!t) return;
    store_obj **objs = NULL;
    size_t n = 0;
    bool changed = false;
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    api_err e;
    api_err_init(&e);
    int rc = store_txn_list(t, PB_POOLS_PREFIX, &objs, &n);
    for (size_t i = 0; i < n; i++) {
        ledger_entry *en = rc == 0 ? pool_book_of(t, objs[i], &e) : NULL;
        store_obj_unref(objs[i]);
        if (!en) {
            rc = -1;
            continue;
        }
        const pool_book *b = pool_book_value(en);
        const char **names = NULL;
        size_t m = 0;
        if (pool_state_namespaces(b->state, &names, &m) != POOL_OK) rc = -1;
        for (size_t j = 0; rc == 0 && j < m; j++)
            rc = refresh_ns(t, b, names[j], now, &changed, &e);
        free(names);
    }
    free(objs);
    api_err_clear(&e);
    /* best effort: on failure readers see the condition last written */
    if (rc == 0 && changed)
        rc = store_commit(t);
    else
        store_abort(t);
    if (rc != 0) checked_forget_all(); /* what was checked was not written */
}

/* At start, before serving: the books of every pool loaded, a status that
 * trails them after a restart written again, and the claims' Bound
 * conditions brought up to date (reads only render them). */
void pool_admission_restore(store *st)
{
    static const char *const prefixes[] = {PB_POOLS_PREFIX, NULL};
    ledger_prepare_read(st, prefixes, pool_book_of, pool_book_verify);
    refresh_bound(st);
}

/* reg_view_fn of claims: a bound claim with the Bound condition its pool's
 * books say now (whether pods of its namespace use it follows the
 * namespace's quota usage, which pod writes change without touching the
 * claim); the stored one is brought up to date behind (refresh_bound, after
 * the ledger's flushes). NULL to serve it as stored. */
static json_t *claim_view(store_txn *t, store_obj *o, store_obj *cur)
{
    (void)cur; /* (the pool's books are read by name) */
    json_t *c = store_obj_parse(o), *out = NULL;
    json_t *status = c ? json_object_get(c, "status") : NULL;
    const char *pool = pb_str(pb_get(status, "pool"), "name"), *uid = pb_meta(c, "uid");
    ledger_entry *en = NULL;
    api_err e;
    api_err_init(&e);
    if (json_is_object(status) && *pool && *uid && pool_book_find(t, pool, &en, &e) == 0 && en) {
        const pool_book *b = pool_book_value(en);
        const pool_status **bound, **inuse;
        size_t nb, ni;
        char *sig = in_use_sig(t, b, o->ns, &bound, &nb, &inuse, &ni);
        bool is_bound = false, use = false;
        for (size_t i = 0; sig && i < nb; i++)
            is_bound |= !strcmp(bound[i]->uid, uid);
        for (size_t i = 0; sig && i < ni; i++)
            use |= !strcmp(inuse[i]->uid, uid);
        const json_t *cond = cond_get(status, "Bound");
        if (sig && is_bound && cond && strcmp(pb_str(cond, "status"), use ? "True" : "False")) {
            char now[32];
            reg_now_rfc3339(now, sizeof now);
            cond_set(status, "Bound", use ? "True" : "False", use ? "InUse" : "Unused",
                     use ? "claim is used" : "claim is unused", gen_of(c), now);
            out = json_incref(c);
        }
        free(sig);
        free(bound);
        free(inuse);
    }
    api_err_clear(&e);
    json_decref(c);
    return out;
}

static const reg_admission pools = {"ResourcePools", pool_admit};

int pool_admission_register(void)
{
    claims_kind = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepoolclaims");
    pools_kind = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepools");
    if (!claims_kind || !pools_kind || reg_read_view_register(claims_kind, claim_view) != 0 ||
        reg_read_view_register(pools_kind, pool_book_view) != 0 ||
        ledger_on_flushed(refresh_bound) != 0)
        return -1;
    return reg_admission_register(&pools);
}
