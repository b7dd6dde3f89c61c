/* pool_books.c - a ResourcePool's books on the ledger (see pool_books.h). */
#include "registry/pool_books.h"
#include "core/jdump.h"

#include "api/objects.h"
#include "core/rfc3339.h"
#include "core/selector.h"
#include "registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ---- */

const json_t *pb_get(const json_t *o, const char *k)
{
    return json_object_get(o, k);
}

const char *pb_str(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

const char *pb_meta(const json_t *obj, const char *k)
{
    return pb_str(pb_get(obj, "metadata"), k);
}

int64_t pb_queued_since(const json_t *obj)
{
    int64_t sec = 0, nsec = 0;
    const char *rel = pb_str(pb_get(obj, "status"), "releasedAt");
    if (*rel && rfc3339_parse(rel, &sec, &nsec)) return sec;
    if (!rfc3339_parse(pb_meta(obj, "creationTimestamp"), &sec, &nsec)) return 0;
    return sec;
}

void pb_set_rv(json_t *obj, int64_t rv)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)rv);
    json_t *meta = json_object_get(obj, "metadata");
    if (json_is_object(meta)) json_object_set_new(meta, "resourceVersion", json_string(buf));
}

int pb_put(store_txn *t, const char *key, json_t *obj, api_err *e)
{
    pb_set_rv(obj, store_txn_rev(t));
    if (store_txn_put(t, key, obj, NULL) != 0)
        return api_err_set(e, API_INTERNAL, "store write failed");
    return 0;
}

rlist *pb_rl(const json_t *v)
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
bool pb_bound_to(const json_t *c, const char *uid)
{
    const json_t *st = pb_get(c, "status");
    if (!*uid || strcmp(pb_str(pb_get(st, "pool"), "uid"), uid) != 0) return false;
    const json_t *ex = cond_get(st, "Exhausted");
    return ex && !strcmp(pb_str(ex, "status"), "False");
}

/* ---- a pool's inputs ---- */

void pb_ctx_free(pb_ctx *pc)
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
    return pb_get(pb_get(ns, "metadata"), "deletionTimestamp") ||
           !strcmp(pb_str(pb_get(ns, "status"), "phase"), "Terminating");
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

bool pb_selects_ns(const json_t *pool, const json_t *ns)
{
    return !pb_get(pb_get(pool, "metadata"), "deletionTimestamp") && !ns_terminating(ns) &&
           selects(pb_get(pb_get(pool, "spec"), "selectors"),
                   pb_get(pb_get(ns, "metadata"), "labels"));
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The namespaces the pool selects: stored ones, with `ns_new` (a namespace
 * being written, NULL for none) in place of its stored version. */
static int load_namespaces(store_txn *t, pb_ctx *pc, const json_t *ns_new, api_err *e)
{
    store_obj **objs = NULL;
    size_t n = 0, m = 0;
    if (store_txn_list(t, "namespaces//", &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list namespaces");
    const json_t *sels = pb_get(pb_get(pc->pool, "spec"), "selectors");
    bool deleting = pb_get(pb_get(pc->pool, "metadata"), "deletionTimestamp") != NULL;
    const char *new_name = ns_new ? pb_meta(ns_new, "name") : NULL;
    json_t **docs = calloc(n + 1, sizeof *docs);
    const char **names = calloc(n + 1, sizeof *names);
    int rc = docs && names ? 0 : api_err_set(e, API_INTERNAL, "out of memory");
    bool new_seen = false;
    for (size_t i = 0; i < n; i++) {
        json_t *ns = rc == 0 ? store_obj_doc(objs[i]) : NULL;
        store_obj_unref(objs[i]);
        if (!ns) continue;
        docs[i] = ns;
        if (new_name && !strcmp(pb_meta(ns, "name"), new_name)) {
            new_seen = true;
            continue;
        }
        if (!deleting && !ns_terminating(ns) &&
            selects(sels, pb_get(pb_get(ns, "metadata"), "labels")))
            names[m++] = pb_meta(ns, "name");
    }
    free(objs);
    (void)new_seen;
    if (rc == 0 && ns_new && !deleting && !ns_terminating(ns_new) &&
        selects(sels, pb_get(pb_get(ns_new, "metadata"), "labels")))
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

bool pb_ns_selected(const pb_ctx *pc, const char *ns)
{
    size_t i;
    json_t *v;
    json_array_foreach(pc->namespaces, i, v) if (!strcmp(json_string_value(v), ns)) return true;
    return false;
}

static int add_claim(pb_ctx *pc, json_t *obj, const json_t *stored, bool self, api_err *e)
{
    if (pc->n == pc->cap) {
        size_t nc = pc->cap ? pc->cap * 2 : 16;
        pb_claim *nv = realloc(pc->claims, nc * sizeof *nv);
        if (!nv) return api_err_set(e, API_INTERNAL, "out of memory");
        pc->claims = nv;
        pc->cap = nc;
    }
    pb_claim *r = &pc->claims[pc->n];
    memset(r, 0, sizeof *r);
    r->obj = json_incref(obj);
    r->self = self;
    pc->n++;
    if (!(r->req = pb_rl(pb_get(pb_get(obj, "spec"), "claim"))))
        return api_err_set(e, API_INTERNAL, "out of memory");
    if (stored && pb_bound_to(stored, pc->uid) &&
        !(r->stored_req = pb_rl(pb_get(pb_get(stored, "spec"), "claim"))))
        return api_err_set(e, API_INTERNAL, "out of memory");
    const json_t *meta = pb_get(obj, "metadata");
    r->pc = (pool_claim){pb_str(meta, "namespace"),
                         pb_str(meta, "name"),
                         pb_str(meta, "uid"),
                         pb_queued_since(obj),
                         r->req,
                         false};
    r->selected = pb_ns_selected(pc, r->pc.namespace_);
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
int pb_load_claims(store_txn *t, pb_ctx *pc, json_t *self, const json_t *self_old, bool self_gone,
                   api_err *e)
{
    store_obj **objs = NULL;
    size_t n = 0;
    int rc = 0;
    if (store_txn_list(t, PB_CLAIMS_PREFIX, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list claims");
    const char *self_uid = self ? pb_meta(self, "uid") : "";
    bool self_seen = false;
    for (size_t i = 0; i < n; i++) {
        json_t *c = rc == 0 ? store_obj_doc(objs[i]) : NULL;
        store_obj_unref(objs[i]);
        if (!c) continue;
        bool is_self = *self_uid && !strcmp(pb_meta(c, "uid"), self_uid);
        if (is_self) {
            self_seen = true;
            if (!self_gone && !strcmp(pb_str(pb_get(self, "spec"), "pool"), pc->name))
                rc = add_claim(pc, self, c, true, e);
        } else if (!strcmp(pb_str(pb_get(c, "spec"), "pool"), pc->name) ||
                   pb_bound_to(c, pc->uid)) {
            rc = add_claim(pc, c, c, false, e); /* shared, read only: copied to be written */
        }
        json_decref(c);
    }
    free(objs);
    if (rc == 0 && self && !self_seen && !self_gone &&
        !strcmp(pb_str(pb_get(self, "spec"), "pool"), pc->name))
        rc = add_claim(pc, self, self_old, true, e);
    return rc;
}

int pb_load_pool(store_txn *t, json_t *pool, pb_ctx *pc, const json_t *ns_new, api_err *e)
{
    memset(pc, 0, sizeof *pc);
    pc->pool = json_incref(pool);
    pc->name = pb_meta(pool, "name");
    pc->uid = pb_meta(pool, "uid");
    const json_t *spec = pb_get(pool, "spec"), *cfg = pb_get(spec, "config");
    pc->hard = pb_rl(pb_get(pb_get(spec, "quota"), "hard"));
    pc->defaults = pb_rl(pb_get(spec, "defaults"));
    if (!pc->hard || !pc->defaults) return api_err_set(e, API_INTERNAL, "out of memory");
    pc->view = (pool_view){pc->name,
                           pc->hard,
                           pc->defaults,
                           json_is_true(pb_get(cfg, "defaultsZero")),
                           json_is_true(pb_get(cfg, "orderedQueue")),
                           json_is_true(pb_get(cfg, "deleteBoundResources"))};
    return load_namespaces(t, pc, ns_new, e);
}

/* The state of the claims as stored: their bound claims with stored amounts. */
pool_state *pb_stored_state(const pb_ctx *pc, api_err *e)
{
    pool_state *s = pool_state_new();
    for (size_t i = 0; s && i < pc->n; i++) {
        const pb_claim *r = &pc->claims[i];
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
/* ---- the pool's status ---- */

json_t *pb_status_json(const json_t *pool, const pool_view *view, json_t *namespaces,
                       const pool_state *st, const char *now, const json_t *old_status)
{
    rlist *used = rl_new(), *avail = rl_new();
    /* everything is rendered anew but the conditions, whose
     * lastTransitionTime is kept while their status holds */
    json_t *status = json_object(), *conds = jcopy(pb_get(old_status, "conditions"));
    if (status && json_is_array(conds)) json_object_set(status, "conditions", conds);
    json_decref(conds);
    if (!used || !avail || !status || pool_allocation(st, view, used, avail) != POOL_OK) {
        rl_free(used);
        rl_free(avail);
        json_decref(status);
        return NULL;
    }
    json_int_t gen = json_integer_value(pb_get(pb_get(pool, "metadata"), "generation"));
    json_object_set_new(status, "observedGeneration", json_integer(gen));
    json_object_set(status, "namespaces", namespaces);
    json_object_set_new(status, "namespaceCount",
                        json_integer((json_int_t)json_array_size(namespaces)));
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
                        json_pack("{s:o, s:o, s:o}", "hard", rl_to_json(view->hard), "used",
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
    cond_set(status, "Ready", "True", "Succeeded", "reconciled", gen, now);
    cond_set(status, "Exhausted", exhausted ? "True" : "False",
             exhausted ? "PoolExhausted" : "NoExhaustions",
             exhausted ? "Pool has exhaustions" : "no exhaustions", gen, now);
    rl_free(used);
    rl_free(avail);
    return status;
}

/* ---- the books ---- */

static void book_free(void *v)
{
    pool_book *b = v;
    if (!b) return;
    pool_state_free(b->state);
    strmap_free(b->selected);
    json_decref(b->namespaces);
    rl_free(b->hard);
    rl_free(b->defaults);
    json_decref(b->pool);
    json_decref(b->last_status);
    free(b);
}

/* The books of stored pool o: a full reconcile of its stored claims, as the
 * claim writes left them (the incremental operations reach the same state,
 * core/pool.h). */
static void *book_load(store_txn *t, store_obj *o, api_err *e)
{
    json_t *pool = store_obj_parse(o);
    pool_book *b = calloc(1, sizeof *b);
    pb_ctx pc;
    memset(&pc, 0, sizeof pc);
    int rc = pool && b ? 0 : api_err_set(e, API_INTERNAL, "out of memory");
    if (rc == 0) rc = pb_load_pool(t, pool, &pc, NULL, e);
    if (rc == 0) rc = pb_load_claims(t, &pc, NULL, NULL, false, e);
    pool_state *prev = rc == 0 ? pb_stored_state(&pc, e) : NULL;
    pool_claim *cs = prev ? calloc(pc.n ? pc.n : 1, sizeof *cs) : NULL;
    size_t m = 0;
    if (rc == 0 && (!prev || !cs)) rc = prev ? api_err_set(e, API_INTERNAL, "out of memory") : -1;
    for (size_t i = 0; rc == 0 && i < pc.n; i++)
        if (!pc.claims[i].why) cs[m++] = pc.claims[i].pc;
    if (rc == 0 && pool_reconcile(&pc.view, prev, cs, m, &b->state, NULL) != POOL_OK)
        rc = api_err_set(e, API_INTERNAL, "resourcepool %s: its claims cannot be accounted",
                         pc.name ? pc.name : "");
    free(cs);
    pool_state_free(prev);
    if (rc == 0 && !(b->selected = strmap_new()))
        rc = api_err_set(e, API_INTERNAL, "out of memory");
    size_t i;
    json_t *v;
    json_array_foreach(pc.namespaces, i, v)
    {
        if (rc == 0 && strmap_put(b->selected, json_string_value(v), (void *)1, NULL) != 0)
            rc = api_err_set(e, API_INTERNAL, "out of memory");
    }
    if (rc == 0) {
        /* the books take what they keep from the loader */
        b->pool = json_incref(pool);
        b->name = pb_meta(pool, "name");
        b->uid = pb_meta(pool, "uid");
        b->hard = pc.hard;
        b->defaults = pc.defaults;
        pc.hard = pc.defaults = NULL;
        b->view = pc.view;
        b->view.name = b->name;
        b->view.hard = b->hard;
        b->view.defaults = b->defaults;
        b->namespaces = json_incref(pc.namespaces);
        b->last_status = json_incref((json_t *)pb_get(pool, "status"));
    }
    pb_ctx_free(&pc);
    json_decref(pool);
    if (rc != 0) {
        book_free(b);
        return NULL;
    }
    return b;
}

/* The stored pool `cur` with the books' status; *same when it is what is
 * stored. NULL when out of memory. */
static json_t *with_status(pool_book *b, const json_t *cur, bool *same)
{
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *status =
        pb_status_json(b->pool, &b->view, b->namespaces, b->state, now, b->last_status);
    return ledger_with_status(cur, status, &b->last_status, same);
}

/* The pool written again with the books' status, as a derived write: the
 * status is a function of the stored claims, loaded again after a restart.
 * The object is the books' copy of it: versions written since they were
 * loaded differ from it only in status and resourceVersion. */
static store_obj *book_write(store_txn *t, store_obj *o, const void *val)
{
    pool_book *b = (pool_book *)val; /* (last_status: a cache of what was written) */
    json_t *nw = with_status(b, b->pool, NULL);
    store_obj *out = nw ? ledger_put_derived(t, o->key, nw) : NULL;
    json_decref(nw);
    return out;
}

/* A pool's status lists every bound claim: with thousands of claims a
 * version costs milliseconds to render and megabytes to store, so the
 * flusher writes one at most once a second (readers always get the books'
 * status: pool reads sync first). */
#define POOL_STATUS_MIN_FLUSH_MS 1000

static const ledger_ops book_ops = {
    "resourcepool", book_load, NULL, book_free, book_write, true, POOL_STATUS_MIN_FLUSH_MS};

ledger_entry *pool_book_of(store_txn *t, store_obj *o, api_err *e)
{
    return ledger_current(t, &book_ops, o, e);
}

int pool_book_find(store_txn *t, const char *name, ledger_entry **en, api_err *e)
{
    char key[768];
    *en = NULL;
    if (!*name) return 0;
    snprintf(key, sizeof key, PB_POOLS_PREFIX "%s", name);
    store_obj *o = store_txn_get(t, key);
    if (!o) return 0;
    *en = pool_book_of(t, o, e);
    store_obj_unref(o);
    return *en ? 0 : -1;
}

pool_book *pool_book_modify(store_txn *t, ledger_entry *en, api_err *e)
{
    return ledger_modify(t, en, e);
}

bool pool_book_selects(const pool_book *b, const char *ns)
{
    return strmap_get(b->selected, ns) != NULL;
}

json_t *pool_book_view(store_txn *t, store_obj *o, store_obj *cur)
{
    api_err e;
    api_err_init(&e);
    ledger_entry *en = pool_book_of(t, cur, &e);
    api_err_clear(&e);
    if (!en) return NULL;
    json_t *served = store_obj_parse(o);
    bool same = false;
    json_t *nw = served ? with_status((pool_book *)ledger_value(en), served, &same) : NULL;
    json_decref(served);
    if (same) {
        json_decref(nw);
        return NULL;
    }
    return nw;
}

int pool_book_verify(store_txn *t, ledger_entry *en, api_err *e)
{
    pool_book *b = (pool_book *)ledger_value(en); /* (verified, last_status: caches) */
    if (b->verified) return 0;
    json_t *cur = store_obj_parse(ledger_obj(en));
    bool same = false;
    json_t *nw = cur ? with_status(b, cur, &same) : NULL;
    json_decref(nw);
    json_decref(cur);
    if (!nw) return api_err_set(e, API_INTERNAL, "out of memory");
    if (!same && ledger_write(t, en, e) != 0) return -1;
    b->verified = true;
    return 0;
}
