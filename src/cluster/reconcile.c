/* reconcile.c - the books' decisions as writes to the cluster (see
 * reconcile.h). */
#include "cluster/reconcile.h"

#include "api/kinds.h"
#include "cluster/counted_kinds.h"
#include "cluster/cq_guard.h"
#include "cluster/leave_guard.h"
#include "cluster/quota_rw.h"
#include "cluster/release_guard.h"
#include "core/rlist.h"
#include "core/jdump.h"
#include "registry/cq_books.h"
#include "registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_GROUP "capsule.clastix.io"
#define POOL_VERSION "v1beta2"

void cw_list_free(cw_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].body);
    free(l->v);
    memset(l, 0, sizeof *l);
}

cluster_write *cw_list_add(cw_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        cluster_write *v = realloc(l->v, cap * sizeof *v);
        if (!v) return NULL;
        l->v = v;
        l->cap = cap;
    }
    cluster_write *w = &l->v[l->n++];
    memset(w, 0, sizeof *w);
    return w;
}

/* One would-be write of the dry run, the last for its key. */
typedef struct captured {
    store_ev_type type;
    store_obj *obj;
} captured;

typedef struct capture {
    captured *v;
    size_t n, cap;
    bool failed;
} capture;

static void on_capture(void *arg, store_ev_type type, const store_obj *obj)
{
    capture *c = arg;
    for (size_t i = 0; i < c->n; i++)
        if (!strcmp(c->v[i].obj->key, obj->key)) {
            store_obj_unref(c->v[i].obj);
            store_obj_ref((store_obj *)obj);
            c->v[i] = (captured){type, (store_obj *)obj};
            return;
        }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        captured *v = realloc(c->v, cap * sizeof *v);
        if (!v) {
            c->failed = true;
            return;
        }
        c->v = v;
        c->cap = cap;
    }
    store_obj_ref((store_obj *)obj);
    c->v[c->n++] = (captured){type, (store_obj *)obj};
}

static json_t *identity(const json_t *cur, void *ctx, api_err *e)
{
    (void)ctx;
    json_t *o = jcopy(cur);
    if (!o) api_err_set(e, API_INTERNAL, "out of memory");
    return o;
}

/* The served row of stored object key's kind: capsule kinds at v1beta2,
 * the core group at v1. NULL for a kind the reconciler does not write. */
static const api_kind *served_kind(const char *key)
{
    if (!strncmp(key, "resourcequotas/", 15)) return api_kind_find("", "v1", "resourcequotas");
    if (!strncmp(key, "resourcepoolclaims." POOL_GROUP "/", 19 + sizeof POOL_GROUP))
        return api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepoolclaims");
    if (!strncmp(key, "resourcepools." POOL_GROUP "/", 14 + sizeof POOL_GROUP))
        return api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepools");
    return NULL;
}

static const char *meta_str(const json_t *o, const char *f)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), f));
}

/* What the cluster is sent: obj in k's version, without what the API
 * server owns (managedFields: it records its own), at the cluster's
 * resourceVersion crv (NULL for a create, which also drops the identity
 * the dry run made up). */
char *cw_body(const api_kind *k, const json_t *obj, const char *crv)
{
    json_t *o = jcopy(obj);
    if (!o) return NULL;
    api_kind_to_version(k, o);
    json_t *meta = json_object_get(o, "metadata");
    json_object_del(meta, "managedFields");
    if (crv) {
        json_object_set_new(meta, "resourceVersion", json_string(crv));
    } else {
        static const char *const made_up[] = {"resourceVersion", "uid", "creationTimestamp",
                                              "generation", "selfLink"};
        for (size_t i = 0; i < sizeof made_up / sizeof *made_up; i++)
            json_object_del(meta, made_up[i]);
    }
    char *t = jdump(o, NULL);
    json_decref(o);
    return t;
}

/* Whether the cluster already holds `want` as the reconciler would write it:
 * the member it writes (`status` for pools and claims, `spec` and the
 * labels for quotas) equal in the mirror's version. */
static bool already(store *st, const char *key, const json_t *want, bool quota)
{
    store_obj *o = store_get(st, key);
    if (!o) return false;
    json_t *cur = store_obj_parse(o);
    store_obj_unref(o);
    const json_t *cm = json_object_get(cur, "metadata"), *wm = json_object_get(want, "metadata");
    bool same =
        quota
            ? json_equal(json_object_get(cur, "spec"), json_object_get(want, "spec")) &&
                  json_equal(json_object_get(cm, "labels"), json_object_get(wm, "labels")) &&
                  json_equal(json_object_get(cm, "annotations"), json_object_get(wm, "annotations"))
            : json_equal(json_object_get(cur, "status"), json_object_get(want, "status"));
    json_decref(cur);
    return same;
}

/* A capsule-pool quota as the books decide it (want, changed in place),
 * less what claims being released keep back (cluster/release_guard.h):
 * their holds, recorded on the quota the cluster holds, are kept while
 * they are in flight and dropped after. 0 or -1. */
static int keep_holds(store *st, mirror *m, const char *key, json_t *want)
{
    store_obj *o = store_get(st, key);
    json_t *cur = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    json_t *wm = json_object_get(want, "metadata"), *wa = json_object_get(wm, "annotations");
    /* the books' version carries the holds it was copied with, or none */
    const char *k;
    json_t *v, *tmp;
    json_object_foreach_safe(wa, tmp, k, v)
    {
        if (!strncmp(k, RELEASE_HOLD_PREFIX, strlen(RELEASE_HOLD_PREFIX)) ||
            !strcmp(k, LEAVE_HOLD_KEY))
            json_object_del(wa, k);
    }
    int64_t now = (int64_t)time(NULL);
    rlist *held = cur ? release_holds(st, cur, now) : rl_new();
    int rc = held ? 0 : -1;
    if (rc == 0 && !rl_is_zero(held)) {
        json_t *hard = json_object_get(json_object_get(want, "spec"), "hard");
        rlist *h = rl_new(), *m = NULL, *nh = NULL;
        const char *bad;
        rc = h && rl_from_json(hard, h, &bad) == 0 && (m = rl_mask(held, h)) &&
                     (nh = rl_subtract_nonneg(h, m))
                 ? 0
                 : -1;
        if (rc == 0)
            rc = json_object_set_new(json_object_get(want, "spec"), "hard", rl_to_json(nh));
        if (rc == 0 && !json_is_object(wa)) {
            wa = json_object();
            rc = json_object_set_new(wm, "annotations", wa);
        }
        json_object_foreach(json_object_get(json_object_get(cur, "metadata"), "annotations"), k, v)
        {
            if (rc == 0 && !strncmp(k, RELEASE_HOLD_PREFIX, strlen(RELEASE_HOLD_PREFIX)))
                rc = json_object_set(wa, k, v);
        }
        rl_free(h);
        rl_free(m);
        rl_free(nh);
    }
    /* a namespace leaving the pool: its quota stays frozen (at most what
     * was used when the relabel was decided: cluster/leave_guard.h) */
    rlist *cap = NULL;
    if (rc == 0 && cur && leave_hold_cap(m, cur, now, &cap) != 0) rc = -1;
    if (rc == 0 && cap) {
        json_t *spec = json_object_get(want, "spec");
        rlist *h = quota_rw_list(want, "spec", "hard"), *nh = h ? quota_rw_min(h, cap) : NULL;
        if (!nh || json_object_set_new(spec, "hard", rl_to_json(nh)) != 0) rc = -1;
        if (rc == 0 && !json_is_object(wa)) {
            wa = json_object();
            rc = json_object_set_new(wm, "annotations", wa);
        }
        if (rc == 0)
            rc = json_object_set(
                wa, LEAVE_HOLD_KEY,
                json_object_get(json_object_get(json_object_get(cur, "metadata"), "annotations"),
                                LEAVE_HOLD_KEY));
        rl_free(h);
        rl_free(nh);
        rl_free(cap);
    }
    if (json_is_object(wa) && !json_object_size(wa)) json_object_del(wm, "annotations");
    rl_free(held);
    json_decref(cur);
    return rc;
}

static int plan_write(store *st, const char *key, const api_kind *k, bool quota, bool held,
                      const char *crv, store_ev_type type, const json_t *obj, cw_list *out);

/* The write of one decided object (obj, at mirror key `key`). */
static int plan_one(store *st, mirror *m, const char *key, store_ev_type type, const json_t *obj,
                    cw_list *out)
{
    const api_kind *k = served_kind(key);
    if (!k) return 0; /* (nothing else is the reconciler's to write) */
    bool quota = !strncmp(key, "resourcequotas/", 15);
    char crv[64];
    bool held = mirror_cluster_rv(m, key, crv, sizeof crv);
    json_t *adj = NULL;
    if (quota && type != STORE_EV_DELETED) {
        if (!(adj = jcopy(obj)) || keep_holds(st, m, key, adj) != 0) {
            json_decref(adj);
            return -1;
        }
        obj = adj;
    }
    int rc = plan_write(st, key, k, quota, held, crv, type, obj, out);
    json_decref(adj);
    return rc;
}

/* plan_one's write, obj as it is to be written. */
static int plan_write(store *st, const char *key, const api_kind *k, bool quota, bool held,
                      const char *crv, store_ev_type type, const json_t *obj, cw_list *out)
{
    if (type != STORE_EV_DELETED && held && already(st, key, obj, quota)) return 0;
    if (type == STORE_EV_DELETED && !held) return 0;
    if (!quota && !held) return 0; /* a pool or claim the cluster no longer has */
    const char *ns = k->namespaced ? meta_str(obj, "namespace") : "", *name = meta_str(obj, "name");
    if (!ns || !name) return -1;
    cluster_write *w = cw_list_add(out);
    if (!w) return -1;
    snprintf(w->key, sizeof w->key, "%s", key);
    if (type == STORE_EV_DELETED) {
        snprintf(w->method, sizeof w->method, "DELETE");
        api_kind_path(k, ns, name, "", w->path, sizeof w->path);
        json_t *opts = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "DeleteOptions",
                                 "preconditions", "resourceVersion", crv);
        w->body = opts ? jdump(opts, NULL) : NULL;
        json_decref(opts);
    } else if (!held) {
        snprintf(w->method, sizeof w->method, "POST");
        api_kind_path(k, ns, "", "", w->path, sizeof w->path);
        w->body = cw_body(k, obj, NULL);
    } else {
        snprintf(w->method, sizeof w->method, "PUT");
        api_kind_path(k, ns, name, quota ? "" : "status", w->path, sizeof w->path);
        w->body = cw_body(k, obj, crv);
    }
    if (!w->body) {
        out->n--;
        return -1;
    }
    return 0;
}

/* For each capsule-pool-<pool> quota the mirror holds that carries a hold
 * no longer in flight and that this plan (from `first` on) does not write
 * already: a write of it without those holds, its hard as it is. 0 or -1. */
static int drop_stale_holds(store *st, mirror *m, const char *pool, size_t first, cw_list *out)
{
    char want[300];
    snprintf(want, sizeof want, "capsule-pool-%s", pool);
    store_obj **objs = NULL;
    size_t n = 0;
    int64_t rev;
    bool more;
    if (store_list(st, "resourcequotas/", NULL, 0, &objs, &n, &rev, &more) != 0) return -1;
    int rc = 0;
    int64_t now = (int64_t)time(NULL);
    for (size_t i = 0; i < n; i++) {
        bool planned = false;
        for (size_t j = first; j < out->n; j++)
            planned |= !strcmp(out->v[j].key, objs[i]->key);
        json_t *q =
            rc == 0 && !planned && !strcmp(objs[i]->name, want) ? store_obj_parse(objs[i]) : NULL;
        json_t *ann = json_object_get(json_object_get(q, "metadata"), "annotations");
        size_t holds = 0;
        const char *k;
        json_t *v, *tmp;
        json_object_foreach(ann, k, v)
        {
            holds += !strncmp(k, RELEASE_HOLD_PREFIX, strlen(RELEASE_HOLD_PREFIX));
        }
        if (holds) {
            /* keep the active ones (their amounts are what the hard keeps
             * back now), drop the rest */
            json_t *keep = json_deep_copy(q);
            json_t *kann = json_object_get(json_object_get(keep, "metadata"), "annotations");
            size_t dropped = 0;
            json_object_foreach_safe(kann, tmp, k, v)
            {
                if (strncmp(k, RELEASE_HOLD_PREFIX, strlen(RELEASE_HOLD_PREFIX))) continue;
                json_t *one = json_object();
                json_object_set(one, k, v);
                json_t *probe = json_pack("{s:{s:s, s:O}}", "metadata", "namespace", objs[i]->ns,
                                          "annotations", one);
                rlist *held = probe ? release_holds(st, probe, now) : NULL;
                if (held && rl_is_zero(held)) {
                    json_object_del(kann, k);
                    dropped++;
                }
                rl_free(held);
                json_decref(probe);
                json_decref(one);
            }
            /* (plan_write, not plan_one: this hard is already what the
             * active holds leave, not the books' to lower again) */
            char crv[64];
            if (dropped && keep && mirror_cluster_rv(m, objs[i]->key, crv, sizeof crv))
                rc = plan_write(st, objs[i]->key, served_kind(objs[i]->key), true, true, crv,
                                STORE_EV_MODIFIED, keep, out);
            json_decref(keep);
        }
        json_decref(q);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return rc;
}

int reconcile_pool_plan(store *st, mirror *m, const char *name, cw_list *out, json_t *selected,
                        char *err, size_t errlen)
{
    if (errlen) *err = '\0';
    size_t first = out->n;
    const api_kind *pools = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepools");
    if (!pools) return snprintf(err, errlen, "no resourcepools kind"), -1;
    capture c = {0};
    json_t *decided = NULL;
    api_err e;
    api_err_init(&e);
    store_capture_aborts(on_capture, &c);
    int rc = reg_update(st, pools, "", name, "", identity, NULL, true, &decided, &e);
    store_capture_aborts(NULL, NULL);
    if (rc != 0 || c.failed) {
        snprintf(err, errlen, "%s", rc != 0 ? e.message : "out of memory");
        rc = -1;
    }
    api_err_clear(&e);
    /* The pool's status first (the dry run hands the pool back rather than
     * writing it), then what it hands out. */
    char key[512];
    size_t i;
    json_t *ns;
    json_array_foreach(json_object_get(json_object_get(decided, "status"), "namespaces"), i, ns)
    {
        if (rc == 0 && selected && json_is_string(ns) &&
            json_object_set(selected, json_string_value(ns), json_true()) != 0)
            rc = -1;
    }
    if (rc == 0 && api_kind_key(pools, "", name, key, sizeof key) > 0) {
        api_kind_to_storage(pools, decided);
        rc = plan_one(st, m, key, STORE_EV_MODIFIED, decided, out);
    }
    for (size_t i = 0; rc == 0 && i < c.n; i++) {
        json_t *o = store_obj_parse(c.v[i].obj);
        rc = o ? plan_one(st, m, c.v[i].obj->key, c.v[i].type, o, out) : -1;
        json_decref(o);
    }
    /* Holds whose claim is gone (deleted, or changed) leave with it, also
     * on a quota the books did not change (cluster/release_guard.h: no
     * reservation outlives its object). */
    if (rc == 0) rc = drop_stale_holds(st, m, name, first, out);
    /* Quotas last: a namespace is handed capacity only after the claims
     * it comes from are recorded bound (pool_sync stops at the first write
     * that fails, so a claim deleted meanwhile never raises a quota). A
     * stable partition of what this call appended. */
    size_t added = out->n - first;
    cluster_write *tmp = rc == 0 && added > 1 ? malloc(added * sizeof *tmp) : NULL;
    if (tmp) {
        size_t k = 0;
        for (int quota = 0; quota < 2; quota++)
            for (size_t i = first; i < out->n; i++)
                if ((strncmp(out->v[i].key, "resourcequotas/", 15) == 0) == quota)
                    tmp[k++] = out->v[i];
        memcpy(out->v + first, tmp, added * sizeof *tmp);
        free(tmp);
    } else if (rc == 0 && added > 1) {
        rc = -1;
    }
    if (rc != 0 && !*err) snprintf(err, errlen, "out of memory");
    for (size_t i = 0; i < c.n; i++)
        store_obj_unref(c.v[i].obj);
    free(c.v);
    json_decref(decided);
    return rc;
}

/* The label writes that make `label` (value "true") mark exactly the
 * namespaces of `selected` among those st holds. 0 or -1. */
static int label_namespaces(store *st, const char *label, const json_t *selected, cw_list *out);

int reconcile_pooled_labels(store *st, const json_t *selected, cw_list *out)
{
    return label_namespaces(st, POOLED_LABEL, selected, out);
}

int reconcile_counted_labels(store *st, cw_list *out)
{
    json_t *covered = json_object();
    store_obj **ns = NULL, **qs = NULL;
    size_t nn = 0, nq = 0;
    int64_t rev;
    bool more;
    int rc = covered && store_list(st, "namespaces/", NULL, 0, &ns, &nn, &rev, &more) == 0 ? 0 : -1;
    /* a CustomQuota covers its own namespace */
    if (rc == 0 && store_list(st, CQ_PREFIX, NULL, 0, &qs, &nq, &rev, &more) != 0) rc = -1;
    for (size_t i = 0; i < nq; i++) {
        if (rc == 0 && json_object_set(covered, qs[i]->ns, json_true()) != 0) rc = -1;
        store_obj_unref(qs[i]);
    }
    free(qs);
    qs = NULL;
    nq = 0;
    /* a GlobalCustomQuota the namespaces it selects */
    if (rc == 0 && store_list(st, GCQ_PREFIX, NULL, 0, &qs, &nq, &rev, &more) != 0) rc = -1;
    for (size_t i = 0; i < nq; i++) {
        json_t *q = rc == 0 ? store_obj_parse(qs[i]) : NULL;
        char err[256];
        cq_quota *c = q ? cq_compile(json_object_get(q, "spec"), true, err, sizeof err) : NULL;
        for (size_t j = 0; c && rc == 0 && j < nn; j++) {
            json_t *o =
                store_obj_parse_parts(ns[j], (const char *const[]){"metadata.labels", NULL});
            const json_t *labels = json_object_get(json_object_get(o, "metadata"), "labels");
            if ((cq_all_namespaces(c) || cq_selects_namespace(c, labels)) &&
                json_object_set(covered, ns[j]->name, json_true()) != 0)
                rc = -1;
            json_decref(o);
        }
        cq_free(c);
        json_decref(q);
        store_obj_unref(qs[i]);
    }
    free(qs);
    for (size_t j = 0; j < nn; j++)
        store_obj_unref(ns[j]);
    free(ns);
    if (rc == 0) rc = label_namespaces(st, COUNTED_LABEL, covered, out);
    json_decref(covered);
    return rc;
}

static int label_namespaces(store *st, const char *label, const json_t *selected, cw_list *out)
{
    store_obj **objs = NULL;
    size_t n = 0;
    int64_t rev;
    bool more;
    if (store_list(st, "namespaces/", NULL, 0, &objs, &n, &rev, &more) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *labels =
            rc == 0 ? store_obj_parse_parts(objs[i], (const char *const[]){"metadata.labels", NULL})
                    : NULL;
        const char *have = json_string_value(
            json_object_get(json_object_get(json_object_get(labels, "metadata"), "labels"), label));
        bool want = json_object_get(selected, objs[i]->name) != NULL;
        bool is = have && !strcmp(have, "true");
        json_decref(labels);
        if (rc != 0 || want == is) {
            store_obj_unref(objs[i]);
            continue;
        }
        cluster_write *w = cw_list_add(out);
        if (!w) {
            rc = -1;
        } else {
            snprintf(w->method, sizeof w->method, "PATCH");
            snprintf(w->path, sizeof w->path, "/api/v1/namespaces/%s", objs[i]->name);
            snprintf(w->key, sizeof w->key, "%s", objs[i]->key);
            json_t *patch = json_pack("{s:{s:{s:o}}}", "metadata", "labels", label,
                                      want ? json_string("true") : json_null());
            w->body = patch ? jdump(patch, NULL) : NULL;
            json_decref(patch);
            if (!w->body) {
                out->n--;
                rc = -1;
            }
        }
        store_obj_unref(objs[i]);
    }
    free(objs);
    return rc;
}

/* A custom quota's status as the cluster can take it: an empty `group`
 * (the core group) left out of its targets and claims. Kubernetes 1.20
 * refuses "" there (status.targets.group: Invalid value: "null",
 * kubernetes#99804, as in the quotas' own sources: docs/cluster-mode.md);
 * absent is the same group. */
static void drop_empty_groups(json_t *status)
{
    static const char *const lists[] = {"targets", "claims"};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(status, lists[l]), i, v)
        {
            const char *g = json_string_value(json_object_get(v, "group"));
            if (g && !*g) json_object_del(v, "group");
        }
    }
}

typedef struct settle_ctx {
    store *st;
    mirror *m;
    bool (*gone)(void *arg, const json_t *r);
    void *gone_arg;
} settle_ctx;

/* Whether an expired reservation's object is surely not in the cluster
 * (the caller's check; without one, expired is gone). */
static bool expired_gone(void *arg, const json_t *r)
{
    settle_ctx *c = arg;
    return !c->gone || c->gone(c->gone_arg, r);
}

/* Whether the mirror shows reservation r's object as counted: the object
 * with its uid, for an update at another version than the one it was
 * decided on (cluster/cq_guard.h). Not inside a store transaction (it asks
 * the mirror). */
static bool settled(void *arg, const json_t *r)
{
    settle_ctx *c = arg;
    const char *res = json_string_value(json_object_get(r, "resource"));
    const char *ns = json_string_value(json_object_get(r, "namespace"));
    const char *name = json_string_value(json_object_get(r, "name"));
    const char *uid = json_string_value(json_object_get(r, "uid"));
    const char *from = json_string_value(json_object_get(r, "from"));
    char key[700], crv[64];
    if (!res || !name || !uid) return true; /* not one of allot's: holds nothing */
    snprintf(key, sizeof key, "%s/%s/%s", res, ns ? ns : "", name);
    store_obj *o = store_get(c->st, key);
    json_t *obj = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    bool same = obj && !strcmp(meta_str(obj, "uid") ? meta_str(obj, "uid") : "", uid);
    json_decref(obj);
    if (!same) return false;
    return !from || !*from || !mirror_cluster_rv(c->m, key, crv, sizeof crv) || strcmp(crv, from);
}

/* Raise marks[resource] to cluster resourceVersion `crv` (integers). */
static int mark(json_t *marks, const char *resource, const char *crv)
{
    uint64_t v = mirror_rv_value(crv);
    if (!v || v <= mirror_rv_value(json_string_value(json_object_get(marks, resource)))) return 0;
    return json_object_set_new(marks, resource, json_string(crv));
}

/* What a custom quota's status was counted through (its countedThrough):
 * per store resource, the highest cluster resourceVersion among the
 * objects it counts (status.claims) and, for a global quota, the
 * namespaces it selects (status.namespaces), as the mirror holds them.
 * Each is the version of a change the collection's watch delivers, so any
 * replica's mirror reaches it (docs/cluster-mode.md, "Custom quotas'
 * statuses"). A new object, or NULL. Not inside a store transaction. */
static json_t *counted_through(mirror *m, const json_t *status)
{
    json_t *marks = json_object(), *c;
    char key[700], crv[64], av[300], res[256];
    size_t i;
    json_array_foreach(json_object_get(status, "claims"), i, c)
    {
        const char *g = json_string_value(json_object_get(c, "group"));
        const char *v = json_string_value(json_object_get(c, "version"));
        const char *kind = json_string_value(json_object_get(c, "kind"));
        const char *ns = json_string_value(json_object_get(c, "namespace"));
        const char *name = json_string_value(json_object_get(c, "name"));
        snprintf(av, sizeof av, "%s%s%s", g ? g : "", g && *g ? "/" : "", v ? v : "");
        const api_kind *k = v && kind && name ? api_kind_by_kind(av, kind) : NULL;
        if (!k || api_kind_key(k, k->namespaced && ns ? ns : "", name, key, sizeof key) < 0 ||
            !mirror_cluster_rv(m, key, crv, sizeof crv))
            continue; /* (gone since: counted no more) */
        api_kind_store_resource(k, res, sizeof res);
        if (marks && mark(marks, res, crv) != 0) json_decref(marks), marks = NULL;
    }
    const api_kind *nsk = api_kind_find("", "v1", "namespaces");
    json_array_foreach(json_object_get(status, "namespaces"), i, c)
    {
        const char *name = json_string_value(c);
        if (!nsk || !name || api_kind_key(nsk, "", name, key, sizeof key) < 0 ||
            !mirror_cluster_rv(m, key, crv, sizeof crv))
            continue;
        api_kind_store_resource(nsk, res, sizeof res);
        if (marks && mark(marks, res, crv) != 0) json_decref(marks), marks = NULL;
    }
    return marks;
}

/* Whether the mirror has taken in every collection through the marks of
 * quota status `status` (see counted_through). */
static bool caught_up(mirror *m, const json_t *status)
{
    const char *res;
    json_t *v;
    json_object_foreach(json_object_get(status, "countedThrough"), res, v)
    {
        if (mirror_progress(m, res) < mirror_rv_value(json_string_value(v))) return false;
    }
    return true;
}

int reconcile_cq_plan(store *st, mirror *m, bool (*gone)(void *arg, const json_t *reservation),
                      void *gone_arg, cw_list *out)
{
    static const char *const prefixes[] = {CQ_PREFIX, GCQ_PREFIX};
    static const char *const resources[] = {"customquotas", "globalcustomquotas"};
    int rc = 0;
    for (size_t r = 0; rc == 0 && r < 2; r++) {
        const api_kind *k = api_kind_find(POOL_GROUP, POOL_VERSION, resources[r]);
        store_obj **objs = NULL;
        size_t n = 0;
        int64_t rev;
        bool more;
        if (!k || store_list(st, prefixes[r], NULL, 0, &objs, &n, &rev, &more) != 0) return -1;
        /* What asks the mirror comes before and after the transaction: the
         * mirror takes its lock before the store's (mirror_event), so
         * asking it from inside one could deadlock. A version that moves
         * on meanwhile only makes the write conflict, and it is planned
         * again. */
        char(*crv)[64] = n ? calloc(n, sizeof *crv) : NULL;
        json_t **kept = n ? calloc(n, sizeof *kept) : NULL,
               **want = n ? calloc(n, sizeof *want) : NULL;
        if (n && (!crv || !kept || !want)) rc = -1;
        settle_ctx sc = {st, m, gone, gone_arg};
        int64_t now = (int64_t)time(NULL);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            json_t *cur = store_obj_parse(objs[i]);
            if (!cur) {
                rc = -1;
                break;
            }
            /* Counted by a replica whose watches were further on: wait
             * until this mirror has taken in what that count saw, or the
             * recount could miss an object already moved from reserved to
             * used, and lower the usage under a pod that holds it. Nor
             * before every kind it counts has been listed (a kind a quota
             * just named is watched from then on). */
            if (caught_up(m, json_object_get(cur, "status")) && counted_kinds_listed(m, cur, r) &&
                mirror_cluster_rv(m, objs[i]->key, crv[i], sizeof crv[i])) {
                /* the reservations still in flight (cluster/cq_guard.h) */
                if (!(kept[i] = cq_reservations_kept(cur, now, settled, expired_gone, &sc)))
                    rc = -1;
            }
            json_decref(cur);
        }
        /* a read-only transaction: the recount sees one revision */
        store_txn *t = rc == 0 && n ? store_begin(st) : NULL;
        if (n && !t) rc = -1;
        for (size_t i = 0; rc == 0 && i < n; i++) {
            api_err e;
            api_err_init(&e);
            /* the books recounted, not the ledger's: nothing follows what
             * the mirror takes in */
            want[i] = kept[i] ? cq_book_recount_view(t, objs[i], &e) : NULL;
            api_err_clear(&e);
        }
        if (t) store_abort(t);
        for (size_t i = 0; i < n; i++) {
            json_t *ws = json_object_get(want[i], "status");
            if (rc == 0 && ws) {
                drop_empty_groups(ws);
                if (json_array_size(kept[i])) json_object_set(ws, "reservations", kept[i]);
                json_t *marks = counted_through(m, ws);
                if (!marks) rc = -1;
                if (json_object_size(marks)) json_object_set(ws, "countedThrough", marks);
                json_decref(marks);
            }
            json_t *cur = rc == 0 && ws ? store_obj_parse(objs[i]) : NULL;
            bool same = cur && json_equal(json_object_get(cur, "status"), ws);
            json_decref(cur);
            if (rc == 0 && ws && !same) {
                cluster_write *w = cw_list_add(out);
                if (!w) {
                    rc = -1;
                } else {
                    snprintf(w->method, sizeof w->method, "PUT");
                    snprintf(w->key, sizeof w->key, "%s", objs[i]->key);
                    api_kind_path(k, objs[i]->ns, objs[i]->name, "status", w->path, sizeof w->path);
                    if (!(w->body = cw_body(k, want[i], crv[i]))) {
                        out->n--;
                        rc = -1;
                    }
                }
            }
            json_decref(want[i]);
            json_decref(kept[i]);
            store_obj_unref(objs[i]);
        }
        free(want);
        free(kept);
        free(crv);
        free(objs);
    }
    return rc;
}
