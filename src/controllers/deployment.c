/* deployment.c - the Deployment controller, as upstream's
 * pkg/controller/deployment (sync.go, rolling.go, recreate.go, progress.go).
 *
 * A Deployment owns ReplicaSets named <deployment>-<pod-template-hash>, one
 * per template it has had (core/rollout.h: the hash of the template without
 * empty members, and the collision count). The ReplicaSet whose template
 * equals the Deployment's (ignoring the hash label) is the new one; the others
 * are old. A sync (syncDeployment):
 *  - claims ReplicaSets (adopts orphans its selector matches, releases owned
 *    ones it no longer matches);
 *  - being deleted: status only; paused: proportional scaling and history
 *    cleanup only, with Progressing Unknown DeploymentPaused;
 *  - a scaling event (an active set's desired-replicas annotation differs
 *    from spec.replicas): scale() - the whole difference to the only active
 *    set, or shared in proportion (rollout.h ro_proportional);
 *  - RollingUpdate: the new set scaled up within maxSurge, then old sets
 *    down within maxUnavailable (unhealthy replicas first); Recreate: old
 *    sets to 0, then, once none of their pods runs, the new set to replicas;
 *  - the revision (deployment.kubernetes.io/revision on the sets and the
 *    Deployment, max of the old ones + 1, revision-history on a set rolled
 *    back to), desired-replicas and max-replicas annotations, and the
 *    Deployment's other annotations copied to its new set;
 *  - status: replicas, updatedReplicas, readyReplicas, availableReplicas,
 *    unavailableReplicas from the sets' statuses; Available
 *    (MinimumReplicasAvailable / MinimumReplicasUnavailable), Progressing
 *    (NewReplicaSetCreated, FoundNewReplicaSet, ReplicaSetUpdated,
 *    NewReplicaSetAvailable, ProgressDeadlineExceeded) and the ReplicaFailure
 *    of its sets (the new one first), with upstream's reasons and messages;
 *  - revisionHistoryLimit: old sets beyond it, scaled to 0 and settled, are
 *    deleted, lowest revision first, once the rollout is complete.
 * Events (ScalingReplicaSet "Scaled up replica set <rs> from 1 to 3") are
 * recorded on the Deployment as upstream's deployment-controller does.
 *
 * Caches as the replicaset controller's: Deployments by key and uid,
 * ReplicaSets by key and by owner uid, and per ReplicaSet the number of its
 * pods not yet terminal (Recreate waits for them, terminating ones
 * included). Writes go through the registry with the cached version's
 * fields as preconditions (a set whose spec.replicas moved meanwhile is not
 * scaled on stale numbers: the sync is retried); what a write returns
 * replaces the cache entry at once.
 */
#include "controllers/controllers.h"
#include "core/jdump.h"
#include "controllers/podcontrol.h"
#include "controllers/workq.h"

#include "core/evfilter.h"
#include "core/jget.h"
#include "core/jsontext.h"
#include "core/rfc3339.h"
#include "core/rollout.h"
#include "core/selector.h"
#include "core/strmap.h"
#include "registry/events.h"
#include "registry/registry.h"
#include "util/log.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define COMPONENT "deployment-controller"
#define UID_MAX 64
#define ANN_REVISION "deployment.kubernetes.io/revision"
#define ANN_REVISION_HISTORY "deployment.kubernetes.io/revision-history"
#define ANN_DESIRED "deployment.kubernetes.io/desired-replicas"
#define ANN_MAX "deployment.kubernetes.io/max-replicas"
#define ANN_LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
#define ANN_ROLLBACK_TO "deprecated.deployment.rollback.to"
#define REV_HISTORY_MAX 2000 /* maxRevHistoryLengthInChars */
#define BACKOFF_BASE_MS 1000
#define BACKOFF_MAX_MS 60000

/* ---- caches ---- */

typedef struct drs drs;
typedef struct rslist {
    drs **v;
    size_t n, cap;
} rslist;

/* A ReplicaSet. */
struct drs {
    char *key, *ns, *name;
    char uid[UID_MAX];
    json_t *obj; /* owned */
    int64_t rv;
    char parent[UID_MAX]; /* controllerRef uid, "" when none */
    rslist *list;         /* by_parent[parent], or orphans[ns] */
    size_t idx;
};

/* A Deployment. */
typedef struct dep {
    char *key, *ns, *name;
    char uid[UID_MAX];
    json_t *obj; /* owned */
    int64_t rv;
    int failures;      /* syncs failed in a row: the backoff of its due time in dctl.q */
    int64_t status_at; /* its status last written (monotonic ms): CTRL_STATUS_PACE_MS */
} dep;

typedef struct dpod {
    char *key;
    char owner[UID_MAX]; /* controllerRef uid */
    bool live;           /* not Succeeded or Failed */
    int64_t rv;
} dpod;

/* A ReplicaSet's pods not yet terminal (terminating ones included). */
typedef struct live {
    char uid[UID_MAX]; /* the key of dctl.live */
    int n;
} live;

typedef struct dctl {
    store *st;
    const atomic_bool *stop;
    const api_kind *d_kind, *rs_kind;
    char d_prefix[128], rs_prefix[128];
    event_recorder *rec;
    evfilter *filter;  /* client-go's spam filter for our Events */
    strmap *deps;      /* key -> dep */
    strmap *deps_uid;  /* uid -> dep */
    strmap *sets;      /* key -> drs */
    strmap *by_parent; /* uid -> rslist */
    strmap *orphans;   /* ns -> rslist */
    strmap *pods;      /* key -> dpod */
    strmap *live;      /* ReplicaSet uid -> live */
    strmap *sets_uid;  /* uid -> drs */
    workq *q;          /* deployment keys to sync, and when (monotonic ms: progress
                        * deadline, retry) */
} dctl;

/* ---- helpers ---- */

static const char *ann(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(jget(o, "metadata", "annotations"), k));
}

static int64_t ts_ms(const char *s)
{
    int64_t sec, nsec;
    if (!s || !rfc3339_parse(s, &sec, &nsec)) return 0;
    return sec * 1000 + nsec / 1000000;
}

static void now_str(char *buf, size_t n)
{
    rfc3339_format(clock_wall_ms() / 1000, buf, n);
}

static void copy_uid(char dst[UID_MAX], const char *src)
{
    snprintf(dst, UID_MAX, "%s", src ? src : "");
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static const json_t *controller_ref(const json_t *obj)
{
    size_t i;
    json_t *r;
    json_array_foreach(jget(obj, "metadata", "ownerReferences"), i, r)
    {
        if (json_is_true(json_object_get(r, "controller"))) return r;
    }
    return NULL;
}

static int32_t i32(const json_t *v, int32_t dflt)
{
    return json_is_integer(v) ? (int32_t)json_integer_value(v) : dflt;
}

/* An annotation as an int64: the number, or dflt when absent or bad. */
static int64_t ann_int(const json_t *o, const char *k, int64_t dflt)
{
    const char *s = ann(o, k);
    if (!s || !*s) return dflt;
    char *end;
    long long v = strtoll(s, &end, 10);
    return *end ? dflt : v;
}

static int32_t rs_replicas(const drs *r)
{
    return i32(jget(r->obj, "spec", "replicas"), 1);
}

static int32_t rs_status(const drs *r, const char *f)
{
    return i32(jget(r->obj, "status", f), 0);
}

static int32_t d_replicas(const json_t *d)
{
    return i32(jget(d, "spec", "replicas"), 1);
}

static bool is_rolling(const json_t *d)
{
    const json_t *st = jget(d, "spec", "strategy");
    const char *type = json_string_value(json_object_get(st, "type"));
    return !type || !strcmp(type, "RollingUpdate");
}

static ro_deploy deploy_of(const json_t *d)
{
    ro_deploy r;
    const json_t *ru = json_object_get(jget(d, "spec", "strategy"), "rollingUpdate");
    ro_deploy_init(&r, d_replicas(d), is_rolling(d), json_object_get(ru, "maxSurge"),
                   json_object_get(ru, "maxUnavailable"));
    return r;
}

/* HasProgressDeadline: set and not MaxInt32. */
static bool has_deadline(const json_t *d)
{
    const json_t *p = jget(d, "spec", "progressDeadlineSeconds");
    return json_is_integer(p) && json_integer_value(p) != 2147483647;
}

/* ---- ReplicaSet lists ---- */

static rslist *rslist_get(strmap *m, const char *key, bool create)
{
    rslist *l = strmap_get(m, key);
    if (l || !create) return l;
    size_t klen = strlen(key) + 1;
    char *mem = calloc(1, sizeof(rslist) + klen);
    if (!mem) return NULL;
    l = (rslist *)mem;
    memcpy(mem + sizeof(rslist), key, klen);
    if (strmap_put(m, mem + sizeof(rslist), l, NULL) != 0) {
        free(mem);
        return NULL;
    }
    return l;
}

static void rs_unlist(drs *r)
{
    rslist *l = r->list;
    if (!l) return;
    l->v[r->idx] = l->v[--l->n];
    l->v[r->idx]->idx = r->idx;
    r->list = NULL;
}

static void rs_list_in(dctl *c, drs *r)
{
    rs_unlist(r);
    rslist *l = *r->parent ? rslist_get(c->by_parent, r->parent, true)
                           : rslist_get(c->orphans, r->ns, true);
    if (!l) return;
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 4;
        drs **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv) return;
        l->v = nv;
        l->cap = nc;
    }
    r->list = l;
    r->idx = l->n;
    l->v[l->n++] = r;
}

static void rs_free(drs *r)
{
    if (!r) return;
    rs_unlist(r);
    json_decref(r->obj);
    free(r->key);
    free(r->ns);
    free(r->name);
    free(r);
}

static void rslists_free(strmap *m)
{
    void *v;
    for (size_t it = 0; m && strmap_next(m, &it, NULL, &v);) {
        free(((rslist *)v)->v);
        free(v);
    }
    strmap_free(m);
}

/* The cache takes obj (a new reference is kept) for key at revision rv. */
static drs *rs_put(dctl *c, const char *key, const char *ns, const char *name, json_t *obj,
                   int64_t rv)
{
    drs *r = strmap_get(c->sets, key);
    if (r && r->rv >= rv) return r;
    const char *uid = jstr(obj, "metadata", "uid");
    if (!r) {
        if (!(r = calloc(1, sizeof *r)) || !(r->key = strdup(key)) || !(r->ns = strdup(ns)) ||
            !(r->name = strdup(name)) || strmap_put(c->sets, r->key, r, NULL) != 0) {
            if (r) {
                free(r->key);
                free(r->ns);
                free(r->name);
                free(r);
            }
            return NULL;
        }
    }
    if (*r->uid && strmap_get(c->sets_uid, r->uid) == r) strmap_del(c->sets_uid, r->uid);
    copy_uid(r->uid, uid);
    if (*r->uid) strmap_put(c->sets_uid, r->uid, r, NULL);
    json_decref(r->obj);
    r->obj = json_incref(obj);
    r->rv = rv;
    const json_t *ref = controller_ref(obj);
    copy_uid(r->parent, ref ? json_string_value(json_object_get(ref, "uid")) : NULL);
    rs_list_in(c, r);
    return r;
}

/* The revision of a stored object: its metadata.resourceVersion. */
static int64_t rv_of(const json_t *obj)
{
    const char *rv = jstr(obj, "metadata", "resourceVersion");
    return rv ? strtoll(rv, NULL, 10) : 0;
}

static void mark_key(dctl *c, const char *key)
{
    workq_mark(c->q, key);
}

static dep *dep_by_uid(dctl *c, const char *uid)
{
    return *uid ? strmap_get(c->deps_uid, uid) : NULL;
}

/* Deployments of namespace ns whose selector matches labels (an orphan set
 * they may adopt). */
static void mark_selecting(dctl *c, const char *ns, const json_t *labels)
{
    void *v;
    for (size_t it = 0; strmap_next(c->deps, &it, NULL, &v);) {
        dep *d = v;
        if (strcmp(d->ns, ns) != 0) continue;
        char err[256];
        sel_t *s = sel_from_json(jget(d->obj, "spec", "selector"), err, sizeof err);
        if (s && !sel_empty(s) && sel_matches(s, labels)) mark_key(c, d->key);
        sel_free(s);
    }
}

/* ---- events ---- */

static void dep_free(dep *d)
{
    if (!d) return;
    json_decref(d->obj);
    free(d->key);
    free(d->ns);
    free(d->name);
    free(d);
}

/* The Deployment without what its own status writes change. */
static bool same_but_status(const json_t *a, const json_t *b)
{
    const char *keys[] = {"spec", NULL};
    for (size_t i = 0; keys[i]; i++)
        if (!json_equal(json_object_get(a, keys[i]) ? json_object_get(a, keys[i]) : json_null(),
                        json_object_get(b, keys[i]) ? json_object_get(b, keys[i]) : json_null()))
            return false;
    const char *meta[] = {"annotations",     "labels", "deletionTimestamp",
                          "ownerReferences", "uid",    NULL};
    for (size_t i = 0; meta[i]; i++) {
        const json_t *x = jget(a, "metadata", meta[i]), *y = jget(b, "metadata", meta[i]);
        if (!json_equal(x ? x : json_null(), y ? y : json_null())) return false;
    }
    return true;
}

static void dep_seen(dctl *c, const store_obj *o)
{
    dep *d = strmap_get(c->deps, o->key);
    if (d && d->rv >= o->rv) return;
    json_t *obj = store_obj_parse(o);
    if (!obj) return;
    const char *uid = jstr(obj, "metadata", "uid");
    if (d && uid && strcmp(d->uid, uid) != 0) {
        workq_forget(c->q, d->key);
        strmap_del(c->deps_uid, d->uid);
        strmap_del(c->deps, d->key);
        dep_free(d);
        d = NULL;
    }
    bool changed = true;
    if (!d) {
        if (!(d = calloc(1, sizeof *d)) || !(d->key = strdup(o->key)) || !(d->ns = strdup(o->ns)) ||
            !(d->name = strdup(o->name)) || strmap_put(c->deps, d->key, d, NULL) != 0) {
            if (d) {
                free(d->key);
                free(d->ns);
                free(d->name);
                free(d);
            }
            json_decref(obj);
            return;
        }
        copy_uid(d->uid, uid);
        strmap_put(c->deps_uid, d->uid, d, NULL);
    } else {
        changed = !same_but_status(d->obj, obj);
    }
    json_decref(d->obj);
    d->obj = obj;
    d->rv = o->rv;
    if (changed) {
        d->failures = 0;
        mark_key(c, d->key);
    }
}

static void dep_gone(dctl *c, const char *key, int64_t rv)
{
    dep *d = strmap_get(c->deps, key);
    if (!d || d->rv > rv) return;
    workq_forget(c->q, d->key);
    strmap_del(c->deps_uid, d->uid);
    strmap_del(c->deps, key);
    dep_free(d);
}

static void rs_seen(dctl *c, const store_obj *o)
{
    drs *old = strmap_get(c->sets, o->key);
    if (old && old->rv >= o->rv) return;
    char was[UID_MAX] = "";
    if (old) copy_uid(was, old->parent);
    json_t *obj = store_obj_parse(o);
    if (!obj) return;
    drs *r = rs_put(c, o->key, o->ns, o->name, obj, o->rv);
    json_decref(obj);
    if (!r) return;
    dep *d = dep_by_uid(c, r->parent);
    if (d) mark_key(c, d->key);
    dep *w = dep_by_uid(c, was);
    if (w && w != d) mark_key(c, w->key);
    if (!*r->parent) mark_selecting(c, r->ns, jget(r->obj, "metadata", "labels"));
}

static void rs_gone(dctl *c, const char *key, int64_t rv)
{
    drs *r = strmap_get(c->sets, key);
    if (!r || r->rv > rv) return;
    dep *d = dep_by_uid(c, r->parent);
    if (d) mark_key(c, d->key);
    if (strmap_get(c->sets_uid, r->uid) == r) strmap_del(c->sets_uid, r->uid);
    strmap_del(c->sets, key);
    rs_free(r);
}

/* The controllerRef uid and phase of a stored pod, read from its text
 * (core/jsontext.h): a pod event costs no parse here. 0, or -1 when the text
 * cannot tell (the caller parses). */
static int pod_facts(const store_obj *o, char owner[UID_MAX], bool *live)
{
    jt_val top = jt_text(o->json, o->len), meta, refs, status, phase;
    owner[0] = '\0';
    *live = true;
    int r = jt_member(top, "metadata", 8, &meta);
    if (r < 0) return -1;
    if (r == 1 && (r = jt_member(meta, "ownerReferences", 15, &refs)) < 0) return -1;
    if (r == 1) {
        jt_val e;
        const char *it = NULL;
        int n;
        while ((n = jt_next(refs, &it, &e)) > 0) {
            jt_val ctl, uid;
            int has = jt_member(e, "controller", 10, &ctl);
            if (has < 0) return -1;
            if (has == 0 || jt_kind(ctl) != 't') continue;
            const char *s;
            size_t len;
            if (jt_member(e, "uid", 3, &uid) != 1 || jt_string(uid, &s, &len) != 0 ||
                len >= UID_MAX)
                return -1;
            memcpy(owner, s, len);
            owner[len] = '\0';
        }
        if (n < 0) return -1;
    }
    r = jt_member(top, "status", 6, &status);
    if (r < 0) return -1;
    if (r == 1 && (r = jt_member(status, "phase", 5, &phase)) < 0) return -1;
    if (r == 1) {
        const char *s;
        size_t len;
        if (jt_string(phase, &s, &len) != 0) return -1;
        *live =
            !((len == 9 && !memcmp(s, "Succeeded", 9)) || (len == 6 && !memcmp(s, "Failed", 6)));
    }
    return 0;
}

static void live_add(dctl *c, const char *uid, int d)
{
    if (!*uid) return;
    live *l = strmap_get(c->live, uid);
    if (!l) {
        if (d <= 0 || !(l = calloc(1, sizeof *l))) return;
        copy_uid(l->uid, uid);
        if (strmap_put(c->live, l->uid, l, NULL) != 0) {
            free(l);
            return;
        }
    }
    l->n += d;
    if (l->n <= 0) {
        strmap_del(c->live, l->uid);
        free(l);
    }
}

static int live_count(dctl *c, const char *uid)
{
    live *l = strmap_get(c->live, uid);
    return l ? l->n : 0;
}

/* Recreate waits for an old set's pods: a change of their count wakes the
 * Deployment. */
static void pod_changed(dctl *c, const char *owner)
{
    drs *r = strmap_get(c->sets_uid, owner);
    dep *d = r ? dep_by_uid(c, r->parent) : NULL;
    if (d && !is_rolling(d->obj)) mark_key(c, d->key);
}

static void pod_seen(dctl *c, const store_obj *o, bool gone)
{
    dpod *p = strmap_get(c->pods, o->key);
    if (p && p->rv > o->rv) return;
    char owner[UID_MAX];
    bool live = false;
    if (!gone && pod_facts(o, owner, &live) != 0) {
        json_t *pod = store_obj_parse(o);
        const json_t *ref = controller_ref(pod);
        copy_uid(owner, ref ? json_string_value(json_object_get(ref, "uid")) : NULL);
        const char *phase = jstr(pod, "status", "phase");
        live = !(phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed")));
        json_decref(pod);
    }
    if (p) {
        if (p->live) live_add(c, p->owner, -1);
        bool moved = gone || strcmp(p->owner, owner) != 0 || p->live != live;
        if (moved && p->live && *p->owner) pod_changed(c, p->owner);
    }
    if (gone) {
        if (p) {
            strmap_del(c->pods, p->key);
            free(p->key);
            free(p);
        }
        return;
    }
    if (!p) {
        if (!(p = calloc(1, sizeof *p)) || !(p->key = strdup(o->key)) ||
            strmap_put(c->pods, p->key, p, NULL) != 0) {
            if (p) free(p->key);
            free(p);
            return;
        }
    }
    copy_uid(p->owner, owner);
    p->live = live;
    p->rv = o->rv;
    if (live) live_add(c, owner, 1);
}

/* ReplicaSets, Deployments, and the pods that have or had an owner (or are
 * deleted): a pod without owner references counts for no ReplicaSet, and
 * most pods of a busy cluster (created, bound, started on their own) then
 * never wake this thread. Read from the text, unparsed. */
static bool dc_takes(void *self, const store_event *ev)
{
    const dctl *c = self;
    const char *key = ev->obj->key;
    if (has_prefix(key, "pods/"))
        return ev->type == STORE_EV_DELETED || ctrl_meta_may_have(ev->obj, "ownerReferences") ||
               ctrl_meta_may_have(ev->prev, "ownerReferences");
    return has_prefix(key, c->rs_prefix) || has_prefix(key, c->d_prefix);
}

static void dc_event(void *self, const store_event *ev)
{
    dctl *c = self;
    const char *key = ev->obj->key;
    if (has_prefix(key, "pods/")) {
        pod_seen(c, ev->obj, ev->type == STORE_EV_DELETED);
    } else if (has_prefix(key, c->rs_prefix)) {
        if (ev->type == STORE_EV_DELETED)
            rs_gone(c, key, ev->rv);
        else
            rs_seen(c, ev->obj);
    } else if (has_prefix(key, c->d_prefix)) {
        if (ev->type == STORE_EV_DELETED)
            dep_gone(c, key, ev->rv);
        else
            dep_seen(c, ev->obj);
    }
}

/* ---- writes ---- */

static void record(dctl *c, const json_t *d, const char *type, const char *reason, const char *msg)
{
    const char *uid = jstr(d, "metadata", "uid");
    if (!evfilter_allow(c->filter, uid ? uid : "", clock_mono_ms())) return;
    event_recorder_emit(c->rec, event_new(d, type, reason, msg, COMPONENT));
}

/* The new ReplicaSet spec.replicas and annotations for scaleReplicaSet,
 * applied to the stored set if its uid and replicas are still the cached
 * ones. */
typedef struct scale_ctx {
    const char *uid;
    int32_t expect_replicas, replicas, desired, max;
    bool annotations;          /* set desired/max */
    json_t *extra_annotations; /* more to set (NULL: none) */
    int32_t min_ready;         /* >= 0: set spec.minReadySeconds */
} scale_ctx;

static json_t *scale_mutate(const json_t *cur, void *arg, api_err *e)
{
    scale_ctx *x = arg;
    const char *uid = jstr(cur, "metadata", "uid");
    if (!uid || strcmp(uid, x->uid) != 0 ||
        i32(jget(cur, "spec", "replicas"), 1) != x->expect_replicas) {
        api_err_set(e, API_CONFLICT, "the replica set changed");
        return NULL;
    }
    json_t *obj = jcopy(cur);
    if (!obj) {
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    json_t *spec = json_object_get(obj, "spec");
    json_object_set_new(spec, "replicas", json_integer(x->replicas));
    if (x->min_ready >= 0) {
        if (x->min_ready)
            json_object_set_new(spec, "minReadySeconds", json_integer(x->min_ready));
        else
            json_object_del(spec, "minReadySeconds");
    }
    json_t *meta = json_object_get(obj, "metadata");
    json_t *anns = json_object_get(meta, "annotations");
    if (!json_is_object(anns)) {
        anns = json_object();
        json_object_set_new(meta, "annotations", anns);
    }
    char buf[32];
    if (x->annotations) {
        snprintf(buf, sizeof buf, "%d", x->desired);
        json_object_set_new(anns, ANN_DESIRED, json_string(buf));
        snprintf(buf, sizeof buf, "%d", x->max);
        json_object_set_new(anns, ANN_MAX, json_string(buf));
    }
    if (x->extra_annotations) json_object_update(anns, x->extra_annotations);
    return obj;
}

/* Write a ReplicaSet change through the registry; the cache takes the result.
 * 0, or -1 (conflict or error: the sync is retried). */
static int rs_write(dctl *c, drs *r, scale_ctx *x)
{
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_update(c->st, c->rs_kind, r->ns, r->name, "", scale_mutate, x, false, &out, &e);
    if (rc == 0) {
        /* `out` may carry the set's status written meanwhile, whose own
         * (older) event will be ignored: look again */
        rs_put(c, r->key, r->ns, r->name, out, rv_of(out));
        json_decref(out);
        dep *d = dep_by_uid(c, r->parent);
        if (d) mark_key(c, d->key);
    } else if (e.code != API_CONFLICT && e.code != API_NOT_FOUND) {
        log_msg(LOG_WARN, "replica set update failed", "\"replicaset\":\"%s\",\"error\":\"%s\"",
                r->key, e.message);
    }
    api_err_clear(&e);
    return rc;
}

/* ReplicasAnnotationsNeedUpdate */
static bool replica_annotations_differ(const drs *r, int32_t desired, int32_t max)
{
    char a[32], b[32];
    snprintf(a, sizeof a, "%d", desired);
    snprintf(b, sizeof b, "%d", max);
    const char *have_d = ann(r->obj, ANN_DESIRED), *have_m = ann(r->obj, ANN_MAX);
    return !have_d || strcmp(have_d, a) || !have_m || strcmp(have_m, b);
}

/* scaleReplicaSet: size and replica annotations; a ScalingReplicaSet event
 * when the size changed. *scaled when it did. 0 or -1. */
static int scale_rs(dctl *c, const json_t *d, drs *r, int32_t to, bool *scaled)
{
    ro_deploy rd = deploy_of(d);
    int32_t desired = rd.replicas, max = rd.replicas + rd.max_surge;
    int32_t from = rs_replicas(r);
    *scaled = false;
    if (from == to && !replica_annotations_differ(r, desired, max)) return 0;
    scale_ctx x = {r->uid, from, to, desired, max, true, NULL, -1};
    if (rs_write(c, r, &x) != 0) return -1;
    if (from != to) {
        *scaled = true;
        char msg[512];
        snprintf(msg, sizeof msg, "Scaled %s replica set %s from %d to %d",
                 from < to ? "up" : "down", r->name, from, to);
        record(c, d, "Normal", "ScalingReplicaSet", msg);
    }
    return 0;
}

/* scaleReplicaSetAndRecordEvent: nothing when the size is already `to`. */
static int scale_rs_if(dctl *c, const json_t *d, drs *r, int32_t to, bool *scaled)
{
    *scaled = false;
    if (rs_replicas(r) == to) return 0;
    return scale_rs(c, d, r, to, scaled);
}

/* ---- conditions ---- */

static json_t *cond_get(json_t *status, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(status, "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type)) return c;
    }
    return NULL;
}

static void cond_remove(json_t *status, const char *type)
{
    json_t *conds = json_object_get(status, "conditions");
    for (size_t i = 0; i < json_array_size(conds);) {
        const char *t = json_string_value(json_object_get(json_array_get(conds, i), "type"));
        if (t && !strcmp(t, type))
            json_array_remove(conds, i);
        else
            i++;
    }
    if (conds && json_array_size(conds) == 0) json_object_del(status, "conditions");
}

static json_t *cond_new(const char *type, const char *status, const char *reason,
                        const char *message)
{
    char now[32];
    now_str(now, sizeof now);
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", type, "status", status,
                     "lastUpdateTime", now, "lastTransitionTime", now, "reason", reason, "message",
                     message);
}

/* SetDeploymentCondition (takes cond): nothing when one of that type has the
 * same status and reason; lastTransitionTime kept when the status is the
 * same; appended last. */
static void cond_set(json_t *status, json_t *cond)
{
    const char *type = json_string_value(json_object_get(cond, "type"));
    const char *st = json_string_value(json_object_get(cond, "status"));
    const char *reason = json_string_value(json_object_get(cond, "reason"));
    json_t *cur = cond_get(status, type);
    if (cur) {
        const char *cs = json_string_value(json_object_get(cur, "status"));
        const char *cr = json_string_value(json_object_get(cur, "reason"));
        if (cs && st && !strcmp(cs, st) && cr && reason && !strcmp(cr, reason)) {
            json_decref(cond);
            return;
        }
        if (cs && st && !strcmp(cs, st))
            json_object_set(cond, "lastTransitionTime", json_object_get(cur, "lastTransitionTime"));
    }
    cond_remove(status, type);
    json_t *conds = json_object_get(status, "conditions");
    if (!conds) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    json_array_append_new(conds, cond);
}

/* ---- the sync ---- */

/* One sync's view: the Deployment as it is being changed (a copy of the
 * cached object: annotations and status), its sets, and what to write. */
typedef struct view {
    dctl *c;
    dep *dp;
    json_t *d; /* working copy */
    drs **all; /* claimed sets */
    size_t n;
    drs *new_rs;    /* or NULL */
    bool ann_dirty; /* d's revision annotation changed */
    bool failed;    /* a write failed: retry with backoff */
} view;

static const char *d_name(const view *v)
{
    return v->dp->name;
}

/* claimReplicaSets: owned and matching, plus adopted orphans. */
typedef struct own_ctx {
    const char *uid;   /* the set's */
    const char *d_uid; /* the Deployment's */
    json_t *ref;       /* adopt: the controllerRef; release: NULL */
} own_ctx;

static json_t *own_mutate(const json_t *cur, void *arg, api_err *e)
{
    own_ctx *x = arg;
    const char *uid = jstr(cur, "metadata", "uid");
    if (!uid || strcmp(uid, x->uid) != 0) {
        api_err_set(e, API_NOT_FOUND, "replaced");
        return NULL;
    }
    if (x->ref && controller_ref(cur)) {
        api_err_set(e, API_CONFLICT, "already controlled");
        return NULL;
    }
    json_t *obj = jcopy(cur), *refs = json_array();
    if (!obj || !refs) {
        json_decref(obj);
        json_decref(refs);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    json_t *meta = json_object_get(obj, "metadata");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r)
    {
        const char *ru = json_string_value(json_object_get(r, "uid"));
        if (!x->ref && ru && !strcmp(ru, x->d_uid)) continue;
        json_array_append(refs, r);
    }
    if (x->ref) json_array_append(refs, x->ref);
    if (json_array_size(refs))
        json_object_set_new(meta, "ownerReferences", refs);
    else {
        json_decref(refs);
        json_object_del(meta, "ownerReferences");
    }
    return obj;
}

static int own(dctl *c, drs *r, const char *d_uid, json_t *ref)
{
    own_ctx x = {r->uid, d_uid, ref};
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_update(c->st, c->rs_kind, r->ns, r->name, "", own_mutate, &x, false, &out, &e);
    if (rc == 0) {
        rs_put(c, r->key, r->ns, r->name, out, rv_of(out));
        json_decref(out);
    }
    bool gone = rc != 0 && e.code == API_NOT_FOUND;
    api_err_clear(&e);
    return rc == 0 || gone ? 0 : -1;
}

static int add_rs(view *v, drs *r)
{
    drs **nv = realloc(v->all, (v->n + 1) * sizeof *nv);
    if (!nv) return -1;
    v->all = nv;
    v->all[v->n++] = r;
    return 0;
}

static int claim_sets(view *v)
{
    dctl *c = v->c;
    char err[256];
    sel_t *sel = sel_from_json(jget(v->d, "spec", "selector"), err, sizeof err);
    if (!sel) return -1;
    bool deleting = jget(v->d, "metadata", "deletionTimestamp") != NULL;
    int rc = 0;
    rslist *mine = strmap_get(c->by_parent, v->dp->uid);
    /* copy first: releasing moves a set to another list */
    size_t n = mine ? mine->n : 0;
    drs **owned = n ? malloc(n * sizeof *owned) : NULL;
    if (n && !owned) n = 0;
    if (owned) memcpy(owned, mine->v, n * sizeof *owned);
    for (size_t i = 0; i < n; i++) {
        drs *r = owned[i];
        if (sel_matches(sel, jget(r->obj, "metadata", "labels")))
            add_rs(v, r);
        else if (!deleting && own(c, r, v->dp->uid, NULL) != 0)
            rc = -1;
    }
    free(owned);
    rslist *orph = strmap_get(c->orphans, v->dp->ns);
    n = orph ? orph->n : 0;
    drs **cands = n ? malloc(n * sizeof *cands) : NULL;
    if (n && !cands) n = 0;
    if (cands) memcpy(cands, orph->v, n * sizeof *cands);
    json_t *ref = NULL;
    for (size_t i = 0; i < n && !deleting; i++) {
        drs *r = cands[i];
        if (jget(r->obj, "metadata", "deletionTimestamp") ||
            !sel_matches(sel, jget(r->obj, "metadata", "labels")))
            continue;
        if (!ref) {
            ref = json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion", "apps/v1", "kind",
                            "Deployment", "name", v->dp->name, "uid", v->dp->uid, "controller", 1,
                            "blockOwnerDeletion", 1);
        }
        if (own(c, r, v->dp->uid, ref) != 0)
            rc = -1;
        else if (!strcmp(r->parent, v->dp->uid))
            add_rs(v, r);
    }
    json_decref(ref);
    free(cands);
    sel_free(sel);
    return rc;
}

static int64_t rs_created(const drs *r)
{
    return ts_ms(jstr(r->obj, "metadata", "creationTimestamp"));
}

static bool rs_active(const drs *r)
{
    return r && rs_replicas(r) > 0;
}

/* FindNewReplicaSet: the oldest set whose template equals the Deployment's. */
static drs *find_new(view *v)
{
    drs *best = NULL;
    const json_t *tmpl = jget(v->d, "spec", "template");
    for (size_t i = 0; i < v->n; i++) {
        drs *r = v->all[i];
        if (!ro_template_equal(tmpl, jget(r->obj, "spec", "template"))) continue;
        if (!best || rs_created(r) < rs_created(best) ||
            (rs_created(r) == rs_created(best) && strcmp(r->name, best->name) < 0))
            best = r;
    }
    return best;
}

static int64_t max_old_revision(const view *v)
{
    int64_t m = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (v->all[i] == v->new_rs) continue;
        int64_t r = ann_int(v->all[i]->obj, ANN_REVISION, 0);
        if (r > m) m = r;
    }
    return m;
}

static bool skip_annotation(const char *k)
{
    return !strcmp(k, ANN_LAST_APPLIED) || !strcmp(k, ANN_REVISION) ||
           !strcmp(k, ANN_REVISION_HISTORY) || !strcmp(k, ANN_DESIRED) || !strcmp(k, ANN_MAX) ||
           !strcmp(k, ANN_ROLLBACK_TO);
}

/* SetNewReplicaSetAnnotations on a copy of the set's annotations (anns):
 * whether they changed. */
static bool new_rs_annotations(const json_t *d, json_t *anns, int64_t new_revision)
{
    bool changed = false;
    const char *k;
    json_t *val;
    json_object_foreach(json_object_get(json_object_get(d, "metadata"), "annotations"), k, val)
    {
        json_t *have = json_object_get(anns, k);
        if (skip_annotation(k) || (have && json_equal(have, val))) continue;
        json_object_set(anns, k, val);
        changed = true;
    }
    const char *old = json_string_value(json_object_get(anns, ANN_REVISION));
    char *end = NULL;
    long long old_rev = old && *old ? strtoll(old, &end, 10) : 0;
    if (old && *old && *end) return changed; /* not a number: left alone */
    if (old_rev < new_revision) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)new_revision);
        if (old && *old) { /* rolled back to: keep the old revisions for history */
            const char *hist = json_string_value(json_object_get(anns, ANN_REVISION_HISTORY));
            if (!hist || !*hist) {
                json_object_set_new(anns, ANN_REVISION_HISTORY, json_string(old));
            } else {
                size_t total = strlen(hist) + strlen(old) + 1;
                const char *start = hist;
                while (total > REV_HISTORY_MAX && *start) { /* drop the oldest */
                    const char *comma = strchr(start, ',');
                    size_t len = comma ? (size_t)(comma - start) : strlen(start);
                    total -= len + 1;
                    start = comma ? comma + 1 : start + len;
                }
                if (total <= REV_HISTORY_MAX) {
                    char *h = malloc(strlen(start) + strlen(old) + 2);
                    if (h) {
                        sprintf(h, "%s%s%s", start, *start ? "," : "", old);
                        json_object_set_new(anns, ANN_REVISION_HISTORY, json_string(h));
                        free(h);
                    }
                }
            }
        }
        json_object_set_new(anns, ANN_REVISION, json_string(buf));
        changed = true;
    }
    return changed;
}

/* SetDeploymentRevision on the working copy. */
static void set_d_revision(view *v, const char *rev)
{
    if (!rev) return;
    json_t *meta = json_object_get(v->d, "metadata");
    json_t *anns = json_object_get(meta, "annotations");
    const char *have = json_string_value(json_object_get(anns, ANN_REVISION));
    if (have && !strcmp(have, rev)) return;
    if (!json_is_object(anns)) {
        anns = json_object();
        json_object_set_new(meta, "annotations", anns);
    }
    json_object_set_new(anns, ANN_REVISION, json_string(rev));
    v->ann_dirty = true;
}

static json_t *status_of(view *v)
{
    json_t *st = json_object_get(v->d, "status");
    if (!json_is_object(st)) {
        st = json_object();
        json_object_set_new(v->d, "status", st);
    }
    return st;
}

/* Create the new ReplicaSet (getNewReplicaSet's second half). */
static drs *create_new(view *v, int64_t new_revision)
{
    dctl *c = v->c;
    json_t *st = status_of(v);
    const json_t *cc = json_object_get(st, "collisionCount");
    int64_t collision = json_is_integer(cc) ? json_integer_value(cc) : -1;
    char hash[16];
    if (ro_template_hash(jget(v->d, "spec", "template"), collision, hash) != 0) return NULL;
    json_t *tmpl = jcopy(jget(v->d, "spec", "template"));
    json_t *sel = jcopy(jget(v->d, "spec", "selector"));
    if (!tmpl || !sel) {
        json_decref(tmpl);
        json_decref(sel);
        return NULL;
    }
    json_t *tmeta = json_object_get(tmpl, "metadata");
    if (!json_is_object(tmeta)) {
        tmeta = json_object();
        json_object_set_new(tmpl, "metadata", tmeta);
    }
    json_t *tl = json_object_get(tmeta, "labels");
    if (!json_is_object(tl)) {
        tl = json_object();
        json_object_set_new(tmeta, "labels", tl);
    }
    json_object_set_new(tl, RO_HASH_LABEL, json_string(hash));
    json_t *ml = json_object_get(sel, "matchLabels");
    if (!json_is_object(ml)) {
        ml = json_object();
        json_object_set_new(sel, "matchLabels", ml);
    }
    json_object_set_new(ml, RO_HASH_LABEL, json_string(hash));
    char name[512];
    snprintf(name, sizeof name, "%s-%s", v->dp->name, hash);
    json_t *anns = json_object();
    new_rs_annotations(v->d, anns, new_revision);
    ro_deploy rd = deploy_of(v->d);
    char buf[32];
    snprintf(buf, sizeof buf, "%d", rd.replicas);
    json_object_set_new(anns, ANN_DESIRED, json_string(buf));
    snprintf(buf, sizeof buf, "%d", rd.replicas + rd.max_surge);
    json_object_set_new(anns, ANN_MAX, json_string(buf));
    /* NewRSNewReplicas with the new set (0 replicas) among the others */
    ro_rs *rs = calloc(v->n + 1, sizeof *rs);
    int32_t count = 0;
    if (rs) {
        for (size_t i = 0; i < v->n; i++)
            rs[i].replicas = rs_replicas(v->all[i]);
        count = ro_new_rs_replicas(&rd, rs, v->n + 1, &rs[v->n]);
        free(rs);
    }
    json_t *rsobj = json_pack(
        "{s:s, s:s, s:{s:s, s:s, s:O, s:o, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}, "
        "s:{s:i, s:o, s:o}}",
        "apiVersion", "apps/v1", "kind", "ReplicaSet", "metadata", "name", name, "namespace",
        v->dp->ns, "labels", tl, "annotations", anns, "ownerReferences", "apiVersion", "apps/v1",
        "kind", "Deployment", "name", v->dp->name, "uid", v->dp->uid, "controller", 1,
        "blockOwnerDeletion", 1, "spec", "replicas", count, "selector", sel, "template", tmpl);
    if (!rsobj) return NULL;
    int32_t mrs = i32(jget(v->d, "spec", "minReadySeconds"), 0);
    if (mrs)
        json_object_set_new(json_object_get(rsobj, "spec"), "minReadySeconds", json_integer(mrs));
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    drs *created = NULL;
    bool exists = false;
    if (reg_create(c->st, c->rs_kind, v->dp->ns, rsobj, false, &out, &e) == 0) {
        char key[768];
        api_kind_key(c->rs_kind, v->dp->ns, name, key, sizeof key);
        created = rs_put(c, key, v->dp->ns, name, out, rv_of(out));
        json_decref(out);
    } else if (e.code == API_ALREADY_EXISTS) {
        /* ours, with our template: the new set (a slow cache); else a hash
         * collision: count it and retry */
        char key[768];
        api_kind_key(c->rs_kind, v->dp->ns, name, key, sizeof key);
        store_obj *o = store_get(c->st, key);
        json_t *cur = o ? store_obj_parse(o) : NULL;
        const json_t *ref = cur ? controller_ref(cur) : NULL;
        const char *ru = ref ? json_string_value(json_object_get(ref, "uid")) : NULL;
        if (cur && ru && !strcmp(ru, v->dp->uid) &&
            ro_template_equal(jget(v->d, "spec", "template"), jget(cur, "spec", "template"))) {
            created = rs_put(c, key, v->dp->ns, name, cur, o->rv);
            exists = true;
        } else {
            json_object_set_new(st, "collisionCount",
                                json_integer(collision < 0 ? 1 : collision + 1));
            v->failed = true;
        }
        json_decref(cur);
        store_obj_unref(o);
    } else if (!podctl_namespace_terminating(&e)) {
        char msg[5200];
        snprintf(msg, sizeof msg, "Failed to create new replica set \"%s\": %s", name, e.message);
        if (has_deadline(v->d))
            cond_set(st, cond_new("Progressing", "False", "ReplicaSetCreateError", msg));
        record(c, v->d, "Warning", "ReplicaSetCreateError", msg);
        v->failed = true;
    } else {
        v->failed = true;
    }
    api_err_clear(&e);
    json_decref(rsobj);
    if (!created || exists) return created;
    if (count > 0) {
        char msg[600];
        snprintf(msg, sizeof msg, "Scaled up replica set %s from 0 to %d", name, count);
        record(c, v->d, "Normal", "ScalingReplicaSet", msg);
    }
    char rev[32];
    snprintf(rev, sizeof rev, "%lld", (long long)new_revision);
    set_d_revision(v, rev);
    if (has_deadline(v->d)) {
        char msg[600];
        snprintf(msg, sizeof msg, "Created new replica set \"%s\"", name);
        cond_set(st, cond_new("Progressing", "True", "NewReplicaSetCreated", msg));
    }
    return created;
}

/* getAllReplicaSetsAndSyncRevision: v->new_rs found (its annotations and
 * minReadySeconds brought up to date) or, with `create`, made. 0 or -1. */
static int sync_revision(view *v, bool create)
{
    dctl *c = v->c;
    v->new_rs = find_new(v);
    int64_t new_revision = max_old_revision(v) + 1;
    if (v->new_rs) {
        drs *r = v->new_rs;
        json_t *anns = jcopy(jget(r->obj, "metadata", "annotations"));
        if (!anns) anns = json_object();
        bool changed = new_rs_annotations(v->d, anns, new_revision);
        int32_t mrs = i32(jget(v->d, "spec", "minReadySeconds"), 0);
        bool mrs_changed = i32(jget(r->obj, "spec", "minReadySeconds"), 0) != mrs;
        if (changed || mrs_changed) {
            scale_ctx x = {r->uid, rs_replicas(r), rs_replicas(r), 0, 0, false, anns, mrs};
            int rc = rs_write(c, r, &x);
            json_decref(anns);
            if (rc != 0) v->failed = true;
            return rc; /* upstream returns here: the next sync goes on */
        }
        json_decref(anns);
        set_d_revision(v, ann(r->obj, ANN_REVISION));
        json_t *st = status_of(v);
        if (has_deadline(v->d) && !cond_get(st, "Progressing")) {
            char msg[600];
            snprintf(msg, sizeof msg, "Found new replica set \"%s\"", r->name);
            cond_set(st, cond_new("Progressing", "True", "FoundNewReplicaSet", msg));
        }
        return 0;
    }
    if (!create) return 0;
    v->new_rs = create_new(v, new_revision);
    if (v->new_rs) add_rs(v, v->new_rs);
    return v->new_rs ? 0 : -1;
}

/* ---- status ---- */

static void put_count(json_t *st, const char *k, int64_t n)
{
    if (n)
        json_object_set_new(st, k, json_integer(n));
    else
        json_object_del(st, k);
}

/* calculateStatus into the working status. */
static void calc_status(view *v)
{
    json_t *st = status_of(v);
    int64_t avail = 0, total = 0, actual = 0, ready = 0, updated = 0;
    for (size_t i = 0; i < v->n; i++) {
        const drs *r = v->all[i];
        avail += rs_status(r, "availableReplicas");
        total += rs_replicas(r);
        actual += rs_status(r, "replicas");
        ready += rs_status(r, "readyReplicas");
    }
    if (v->new_rs) updated = rs_status(v->new_rs, "replicas");
    int64_t unavailable = total - avail;
    if (unavailable < 0) unavailable = 0;
    put_count(st, "observedGeneration", json_integer_value(jget(v->d, "metadata", "generation")));
    put_count(st, "replicas", actual);
    put_count(st, "updatedReplicas", updated);
    put_count(st, "readyReplicas", ready);
    put_count(st, "availableReplicas", avail);
    put_count(st, "unavailableReplicas", unavailable);
    ro_deploy rd = deploy_of(v->d);
    if (avail >= (int64_t)rd.replicas - rd.max_unavailable)
        cond_set(st, cond_new("Available", "True", "MinimumReplicasAvailable",
                              "Deployment has minimum availability."));
    else
        cond_set(st, cond_new("Available", "False", "MinimumReplicasUnavailable",
                              "Deployment does not have minimum availability."));
}

static ro_dstatus dstatus(const json_t *st)
{
    return (ro_dstatus){i32(json_object_get(st, "replicas"), 0),
                        i32(json_object_get(st, "updatedReplicas"), 0),
                        i32(json_object_get(st, "readyReplicas"), 0),
                        i32(json_object_get(st, "availableReplicas"), 0),
                        json_integer_value(json_object_get(st, "observedGeneration"))};
}

/* syncRolloutStatus: progress conditions and the sets' ReplicaFailure, then
 * a requeue to check the deadline. The status before this sync is the stored
 * one (v->dp->obj). */
static void rollout_status(view *v)
{
    json_t *before = jcopy(status_of(v));
    calc_status(v);
    json_t *st = status_of(v);
    const json_t *d = v->d;
    int32_t replicas = d_replicas(d);
    int64_t gen = json_integer_value(jget(d, "metadata", "generation"));
    if (!has_deadline(d)) cond_remove(st, "Progressing");
    ro_dstatus old = dstatus(before), now = dstatus(st);
    json_t *cur = cond_get(before, "Progressing");
    const char *cur_reason = cur ? json_string_value(json_object_get(cur, "reason")) : NULL;
    bool complete_before =
        now.replicas == now.updated && cur_reason && !strcmp(cur_reason, "NewReplicaSetAvailable");
    char msg[600];
    if (has_deadline(d) && !complete_before) {
        if (ro_deploy_complete(replicas, gen, &now)) {
            if (v->new_rs)
                snprintf(msg, sizeof msg, "ReplicaSet \"%s\" has successfully progressed.",
                         v->new_rs->name);
            else
                snprintf(msg, sizeof msg, "Deployment \"%s\" has successfully progressed.",
                         d_name(v));
            cond_set(st, cond_new("Progressing", "True", "NewReplicaSetAvailable", msg));
        } else if (ro_deploy_progressing(&old, &now)) {
            if (v->new_rs)
                snprintf(msg, sizeof msg, "ReplicaSet \"%s\" is progressing.", v->new_rs->name);
            else
                snprintf(msg, sizeof msg, "Deployment \"%s\" is progressing.", d_name(v));
            json_t *cond = cond_new("Progressing", "True", "ReplicaSetUpdated", msg);
            json_t *c2 = cond_get(st, "Progressing");
            if (c2) {
                const char *cs = json_string_value(json_object_get(c2, "status"));
                if (cs && !strcmp(cs, "True"))
                    json_object_set(cond, "lastTransitionTime",
                                    json_object_get(c2, "lastTransitionTime"));
                cond_remove(st, "Progressing");
            }
            cond_set(st, cond);
        } else {
            /* DeploymentTimedOut */
            json_t *c2 = cond_get(st, "Progressing");
            const char *r2 = c2 ? json_string_value(json_object_get(c2, "reason")) : NULL;
            bool timed_out = false;
            if (c2 && r2 && strcmp(r2, "NewReplicaSetAvailable") != 0) {
                if (!strcmp(r2, "ProgressDeadlineExceeded"))
                    timed_out = true;
                else {
                    int64_t from = ts_ms(json_string_value(json_object_get(c2, "lastUpdateTime")));
                    int64_t deadline =
                        json_integer_value(jget(d, "spec", "progressDeadlineSeconds")) * 1000;
                    timed_out = from + deadline < clock_wall_ms();
                }
            }
            if (timed_out) {
                if (v->new_rs)
                    snprintf(msg, sizeof msg, "ReplicaSet \"%s\" has timed out progressing.",
                             v->new_rs->name);
                else
                    snprintf(msg, sizeof msg, "Deployment \"%s\" has timed out progressing.",
                             d_name(v));
                cond_set(st, cond_new("Progressing", "False", "ProgressDeadlineExceeded", msg));
            }
        }
    }
    /* getReplicaFailures: the new set's, else any old one's */
    json_t *failure = NULL;
    for (int pass = 0; pass < 2 && !failure; pass++)
        for (size_t i = 0; i < v->n && !failure; i++) {
            const drs *r = v->all[i];
            if (pass == 0 ? r != v->new_rs : r == v->new_rs) continue;
            size_t j;
            json_t *rc;
            json_array_foreach(jget(r->obj, "status", "conditions"), j, rc)
            {
                const char *t = json_string_value(json_object_get(rc, "type"));
                if (!t || strcmp(t, "ReplicaFailure") != 0) continue;
                const json_t *ltt = json_object_get(rc, "lastTransitionTime");
                failure =
                    json_pack("{s:s, s:O*, s:O*, s:O*, s:O*, s:O*}", "type", "ReplicaFailure",
                              "status", json_object_get(rc, "status"), "lastUpdateTime", ltt,
                              "lastTransitionTime", ltt, "reason", json_object_get(rc, "reason"),
                              "message", json_object_get(rc, "message"));
                break;
            }
        }
    if (failure)
        cond_set(st, failure);
    else
        cond_remove(st, "ReplicaFailure");
    /* requeueStuckDeployment */
    /* requeueStuckDeployment (upstream only when nothing changed, relying on
     * its own status write's event to sync again; here a status-only change
     * does not sync, so the check is booked on every sync) */
    json_t *pc = cond_get(st, "Progressing");
    if (has_deadline(d) && pc && !ro_deploy_complete(replicas, gen, &now)) {
        const char *r = json_string_value(json_object_get(pc, "reason"));
        if (r && strcmp(r, "ProgressDeadlineExceeded") != 0) {
            int64_t from = ts_ms(json_string_value(json_object_get(pc, "lastUpdateTime")));
            int64_t after = from +
                            json_integer_value(jget(d, "spec", "progressDeadlineSeconds")) * 1000 -
                            clock_wall_ms();
            workq_due(v->c->q, v->dp->key, clock_mono_ms() + (after < 1000 ? 1000 : after + 1000));
        }
    }
    json_decref(before);
}

/* ---- strategies ---- */

/* ro_rs views of sets (ids index into list). */
static ro_rs *ro_view(drs **list, size_t n)
{
    ro_rs *r = calloc(n ? n : 1, sizeof *r);
    for (size_t i = 0; r && i < n; i++) {
        const drs *s = list[i];
        r[i] = (ro_rs){.replicas = rs_replicas(s),
                       .available = rs_status(s, "availableReplicas"),
                       .created = rs_created(s),
                       .name = s->name,
                       .revision = ann_int(s->obj, ANN_REVISION, 0),
                       .max_replicas = (int32_t)ann_int(s->obj, ANN_MAX, -1),
                       .id = i};
    }
    return r;
}

/* The old sets (all but the new one); active ones only when `active`. */
static size_t olds(const view *v, drs **out, bool active)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->all[i] != v->new_rs && (!active || rs_active(v->all[i]))) out[n++] = v->all[i];
    return n;
}

/* cleanupDeployment: old sets beyond revisionHistoryLimit, lowest revision
 * first, if settled at 0 replicas. */
static void cleanup(view *v)
{
    const json_t *lim = jget(v->d, "spec", "revisionHistoryLimit");
    if (!json_is_integer(lim)) return;
    drs **old = malloc((v->n ? v->n : 1) * sizeof *old);
    if (!old) return;
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->all[i] != v->new_rs && !jget(v->all[i]->obj, "metadata", "deletionTimestamp"))
            old[n++] = v->all[i];
    int64_t diff = (int64_t)n - json_integer_value(lim);
    if (diff > 0) {
        ro_rs *r = ro_view(old, n);
        if (r) {
            ro_sort_by_revision(r, n);
            for (int64_t i = 0; i < diff; i++) {
                drs *s = old[r[i].id];
                if (rs_status(s, "replicas") != 0 || rs_replicas(s) != 0 ||
                    json_integer_value(jget(s->obj, "metadata", "generation")) >
                        json_integer_value(jget(s->obj, "status", "observedGeneration")))
                    continue;
                reg_delete_opts o = {.grace_seconds = -1, .pre_uid = s->uid};
                json_t *out = NULL;
                bool gone = false;
                api_err e;
                api_err_init(&e);
                if (reg_delete(v->c->st, v->c->rs_kind, s->ns, s->name, &o, &out, &gone, &e) != 0 &&
                    e.code != API_NOT_FOUND)
                    v->failed = true;
                json_decref(out);
                api_err_clear(&e);
            }
            free(r);
        }
    }
    free(old);
}

/* scale(): a scaling event or a paused Deployment. */
static int scale(view *v)
{
    const json_t *d = v->d;
    int32_t want = d_replicas(d);
    bool scaled;
    /* FindActiveOrLatest */
    size_t nactive = 0;
    drs *active = NULL, *newest_old = NULL;
    for (size_t i = 0; i < v->n; i++) {
        drs *r = v->all[i];
        if (rs_active(r)) {
            nactive++;
            active = r;
        }
        if (r != v->new_rs &&
            (!newest_old || rs_created(r) > rs_created(newest_old) ||
             (rs_created(r) == rs_created(newest_old) && strcmp(r->name, newest_old->name) > 0)))
            newest_old = r;
    }
    drs *aol = nactive == 1 ? active : nactive == 0 ? (v->new_rs ? v->new_rs : newest_old) : NULL;
    if (aol) {
        /* Upstream returns here when the set already has `want` replicas,
         * even if its desired-replicas annotation is stale: every sync is
         * then a scaling event and the rollout never starts
         * (kubernetes#138036). scale_rs rewrites a stale annotation. */
        return scale_rs(v->c, d, aol, want, &scaled);
    }
    /* IsSaturated: the new set is complete; old sets go to 0 */
    if (v->new_rs) {
        const char *desired = ann(v->new_rs->obj, ANN_DESIRED);
        if (rs_replicas(v->new_rs) == want && desired && atoi(desired) == want &&
            rs_status(v->new_rs, "availableReplicas") == want) {
            for (size_t i = 0; i < v->n; i++)
                if (v->all[i] != v->new_rs && rs_active(v->all[i]) &&
                    scale_rs_if(v->c, d, v->all[i], 0, &scaled) != 0)
                    return -1;
            return 0;
        }
    }
    if (!is_rolling(d) || v->n == 0) return 0;
    drs **act = malloc(v->n * sizeof *act);
    if (!act) return -1;
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++)
        if (rs_active(v->all[i])) act[n++] = v->all[i];
    ro_rs *r = n ? ro_view(act, n) : NULL;
    int rc = 0;
    if (r) {
        ro_deploy rd = deploy_of(d);
        ro_proportional(&rd, r, n, i32(jget(d, "status", "replicas"), 0));
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = scale_rs(v->c, d, act[r[i].id], r[i].target, &scaled);
        free(r);
    }
    free(act);
    return rc;
}

/* isScalingEvent: an active set was sized for another replicas count. */
static bool scaling_event(const view *v)
{
    int32_t want = d_replicas(v->d);
    for (size_t i = 0; i < v->n; i++) {
        const drs *r = v->all[i];
        if (!rs_active(r)) continue;
        const char *desired = ann(r->obj, ANN_DESIRED);
        if (!desired) continue;
        char *end;
        long long n = strtoll(desired, &end, 10);
        if (*end) continue;
        if (n != want) return true;
    }
    return false;
}

static int rolling(view *v)
{
    dctl *c = v->c;
    const json_t *d = v->d;
    if (sync_revision(v, true) != 0 || !v->new_rs) return -1;
    bool scaled = false;
    /* reconcileNewReplicaSet */
    int32_t want = d_replicas(d), have = rs_replicas(v->new_rs);
    if (have != want) {
        int32_t to = want;
        if (have < want) {
            ro_deploy rd = deploy_of(d);
            ro_rs *all = ro_view(v->all, v->n);
            if (!all) return -1;
            size_t ni = 0;
            for (size_t i = 0; i < v->n; i++)
                if (v->all[i] == v->new_rs) ni = i;
            to = ro_new_rs_replicas(&rd, all, v->n, &all[ni]);
            free(all);
        }
        if (scale_rs_if(c, d, v->new_rs, to, &scaled) != 0) return -1;
        if (scaled) {
            rollout_status(v);
            return 0;
        }
    }
    /* reconcileOldReplicaSets */
    drs **old = malloc((v->n ? v->n : 1) * sizeof *old);
    if (!old) return -1;
    size_t n = olds(v, old, true);
    ro_rs *r = ro_view(old, n);
    ro_rs nr = {.replicas = rs_replicas(v->new_rs),
                .available = rs_status(v->new_rs, "availableReplicas")};
    int rc = 0;
    if (r) {
        ro_deploy rd = deploy_of(d);
        int32_t down = ro_reconcile_old(&rd, r, n, &nr);
        for (size_t i = 0; i < n && rc == 0 && down > 0; i++) {
            bool s2;
            if (r[i].target != r[i].replicas)
                rc = scale_rs_if(c, d, old[r[i].id], r[i].target, &s2);
        }
        scaled = down > 0;
        free(r);
    }
    free(old);
    if (rc != 0) return -1;
    if (!scaled) {
        ro_dstatus st = dstatus(json_object_get(v->d, "status"));
        if (ro_deploy_complete(d_replicas(d), json_integer_value(jget(d, "metadata", "generation")),
                               &st))
            cleanup(v);
    }
    rollout_status(v);
    return 0;
}

/* The pods of old sets still running (Recreate waits for them). */
static bool old_pods_running(const view *v)
{
    for (size_t i = 0; i < v->n; i++) {
        const drs *r = v->all[i];
        if (r == v->new_rs) continue;
        if (rs_status(r, "replicas") > 0) return true;
        if (live_count(v->c, r->uid) > 0) return true;
    }
    return false;
}

static int recreate(view *v)
{
    dctl *c = v->c;
    const json_t *d = v->d;
    if (sync_revision(v, false) != 0) return -1;
    bool any = false, scaled;
    for (size_t i = 0; i < v->n; i++) {
        drs *r = v->all[i];
        if (r == v->new_rs || !rs_active(r)) continue;
        if (scale_rs_if(c, d, r, 0, &scaled) != 0) return -1;
        any |= scaled;
    }
    if (any || old_pods_running(v)) {
        rollout_status(v);
        return 0;
    }
    if (!v->new_rs && (sync_revision(v, true) != 0 || !v->new_rs)) return -1;
    if (scale_rs_if(c, d, v->new_rs, d_replicas(d), &scaled) != 0) return -1;
    ro_dstatus st = dstatus(json_object_get(v->d, "status"));
    if (ro_deploy_complete(d_replicas(d), json_integer_value(jget(d, "metadata", "generation")),
                           &st))
        cleanup(v);
    rollout_status(v);
    return 0;
}

/* ---- writing the Deployment ---- */

typedef struct d_ctx {
    const char *uid;
    const json_t *value; /* the revision annotation */
} d_ctx;

static json_t *ann_mutate(const json_t *cur, void *arg, api_err *e)
{
    d_ctx *x = arg;
    const char *uid = jstr(cur, "metadata", "uid");
    if (!uid || strcmp(uid, x->uid) != 0) {
        api_err_set(e, API_NOT_FOUND, "replaced");
        return NULL;
    }
    json_t *obj = jcopy(cur);
    json_t *meta = obj ? json_object_get(obj, "metadata") : NULL;
    json_t *anns = meta ? json_object_get(meta, "annotations") : NULL;
    if (!meta) {
        json_decref(obj);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    if (!json_is_object(anns)) {
        anns = json_object();
        json_object_set_new(meta, "annotations", anns);
    }
    json_object_set(anns, ANN_REVISION, (json_t *)x->value);
    return obj;
}

/* The cache takes what a write returned (its reference): it may hold a
 * spec changed meanwhile, whose own (older) event will be ignored, so any
 * change beyond status queues another sync. */
static void take_written(dctl *c, dep *dp, json_t *out)
{
    bool moved = !same_but_status(dp->obj, out);
    json_decref(dp->obj);
    dp->obj = out;
    dp->rv = rv_of(out);
    if (moved) mark_key(c, dp->key);
}

/* The working copy's revision annotation and status, where they differ from
 * the stored Deployment. */
static void write_back(view *v)
{
    dctl *c = v->c;
    dep *dp = v->dp;
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    const json_t *rev = json_object_get(jget(v->d, "metadata", "annotations"), ANN_REVISION);
    if (v->ann_dirty && rev) {
        d_ctx x = {dp->uid, rev};
        if (reg_update(c->st, c->d_kind, dp->ns, dp->name, "", ann_mutate, &x, false, &out, &e) ==
            0) {
            take_written(c, dp, out);
        } else {
            v->failed = true;
        }
        api_err_clear(&e);
    }
    const json_t *st = json_object_get(v->d, "status");
    int64_t now = clock_mono_ms();
    if (st && !json_equal(st, json_object_get(dp->obj, "status")) && dp->status_at &&
        now - dp->status_at < CTRL_STATUS_PACE_MS &&
        ctrl_status_counts_only(st, json_object_get(dp->obj, "status"))) {
        workq_due(c->q, dp->key, dp->status_at + CTRL_STATUS_PACE_MS); /* written then */
    } else if (st && !json_equal(st, json_object_get(dp->obj, "status"))) {
        dp->status_at = now;
        if (ctrl_write_status(c->st, c->d_kind, dp->ns, dp->name, dp->uid, st, &out, &e) == 0) {
            take_written(c, dp, out);
        } else if (e.code != API_NOT_FOUND) {
            v->failed = true;
        }
        api_err_clear(&e);
    }
}

/* checkPausedConditions */
static void paused_conditions(view *v)
{
    if (!has_deadline(v->d)) return;
    json_t *st = status_of(v);
    json_t *cur = cond_get(st, "Progressing");
    const char *reason = cur ? json_string_value(json_object_get(cur, "reason")) : NULL;
    if (reason && !strcmp(reason, "ProgressDeadlineExceeded")) return;
    bool paused = json_is_true(jget(v->d, "spec", "paused"));
    bool has_paused = reason && !strcmp(reason, "DeploymentPaused");
    if (paused && !has_paused)
        cond_set(st,
                 cond_new("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused"));
    else if (!paused && has_paused)
        cond_set(st,
                 cond_new("Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed"));
}

/* The sync of the Deployment of store key `key` (workq_sync_fn). */
static void sync_dep(void *self, const char *key)
{
    dctl *c = self;
    dep *dp = strmap_get(c->deps, key);
    if (!dp) return;
    view v = {.c = c, .dp = dp, .d = jcopy(dp->obj)};
    if (!v.d) return;
    char err[256];
    sel_t *sel = sel_from_json(jget(v.d, "spec", "selector"), err, sizeof err);
    bool everything = sel && sel_empty(sel);
    sel_free(sel);
    if (!sel || everything) {
        if (everything)
            record(c, v.d, "Warning", "SelectingAll",
                   "This deployment is selecting all pods. A non-empty selector is required.");
        json_decref(v.d);
        return;
    }
    if (claim_sets(&v) != 0) v.failed = true;
    if (!v.failed) {
        if (jget(v.d, "metadata", "deletionTimestamp")) {
            v.new_rs = find_new(&v); /* syncStatusOnly */
            calc_status(&v);
        } else {
            paused_conditions(&v);
            bool paused = json_is_true(jget(v.d, "spec", "paused"));
            if (paused || (sync_revision(&v, false) == 0 && scaling_event(&v))) {
                /* sync(): scale, clean up when paused, plain status */
                if (paused && sync_revision(&v, false) != 0) v.failed = true;
                if (!v.failed && scale(&v) != 0) v.failed = true;
                if (!v.failed && paused) cleanup(&v);
                if (!v.failed) calc_status(&v);
            } else if (!v.failed) {
                int rc = is_rolling(v.d) ? rolling(&v) : recreate(&v);
                if (rc != 0) v.failed = true;
            }
        }
    }
    write_back(&v);
    if (v.failed) {
        dp->failures++;
        workq_due(c->q, dp->key,
                  clock_mono_ms() + ro_backoff_ms(dp->failures, BACKOFF_BASE_MS, BACKOFF_MAX_MS));
    } else {
        dp->failures = 0;
    }
    free(v.all);
    json_decref(v.d);
}

/* Sync the queued Deployments and those due (after each batch of events and
 * at each tick); a sync may queue its Deployment again (its writes returned
 * objects newer than what it decided on): a few rounds here, the rest at the
 * next tick. */
static void dc_flush(void *self)
{
    dctl *c = self;
    workq_run(c->q, clock_mono_ms(), sync_dep, c, c->stop);
}

/* ---- relist and life ---- */

static void clear_caches(dctl *c)
{
    void *v;
    for (size_t it = 0; c->sets && strmap_next(c->sets, &it, NULL, &v);) {
        ((drs *)v)->list = NULL;
        rs_free(v);
    }
    strmap_free(c->sets);
    rslists_free(c->by_parent);
    rslists_free(c->orphans);
    for (size_t it = 0; c->pods && strmap_next(c->pods, &it, NULL, &v);) {
        free(((dpod *)v)->key);
        free(v);
    }
    strmap_free(c->pods);
    for (size_t it = 0; c->live && strmap_next(c->live, &it, NULL, &v);)
        free(v);
    strmap_free(c->live);
    strmap_free(c->sets_uid);
    c->sets_uid = strmap_new();
    c->sets = strmap_new();
    c->by_parent = strmap_new();
    c->orphans = strmap_new();
    c->pods = strmap_new();
    c->live = strmap_new();
}

static void relist(dctl *c, const char *prefix, int kind)
{
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_list(c->st, prefix, NULL, 0, &objs, &n, NULL, NULL) != 0) return;
    for (size_t i = 0; i < n; i++) {
        if (kind == 0)
            dep_seen(c, objs[i]);
        else if (kind == 1)
            rs_seen(c, objs[i]);
        else
            pod_seen(c, objs[i], false);
        store_obj_unref(objs[i]);
    }
    free(objs);
}

static void dc_resync(void *self)
{
    dctl *c = self;
    clear_caches(c);
    relist(c, c->d_prefix, 0);
    relist(c, c->rs_prefix, 1);
    relist(c, "pods/", 2);
    void *v;
    for (size_t it = 0; strmap_next(c->deps, &it, NULL, &v);)
        mark_key(c, ((dep *)v)->key);
    dc_flush(c);
}

static void dc_fini(void *self)
{
    dctl *c = self;
    if (!c) return;
    event_recorder_stop(c->rec);
    evfilter_free(c->filter);
    clear_caches(c);
    strmap_free(c->sets);
    rslists_free(c->by_parent);
    rslists_free(c->orphans);
    strmap_free(c->pods);
    strmap_free(c->live);
    strmap_free(c->sets_uid);
    void *v;
    for (size_t it = 0; c->deps && strmap_next(c->deps, &it, NULL, &v);)
        dep_free(v);
    strmap_free(c->deps);
    strmap_free(c->deps_uid);
    workq_free(c->q);
    free(c);
}

static void *dc_init(store *st, const atomic_bool *stop)
{
    dctl *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->st = st;
    c->stop = stop;
    c->d_kind = api_kind_find("apps", "v1", "deployments");
    c->rs_kind = api_kind_find("apps", "v1", "replicasets");
    if (!c->d_kind || !c->rs_kind) goto fail;
    api_kind_store_resource(c->d_kind, c->d_prefix, sizeof c->d_prefix - 1);
    strcat(c->d_prefix, "/");
    api_kind_store_resource(c->rs_kind, c->rs_prefix, sizeof c->rs_prefix - 1);
    strcat(c->rs_prefix, "/");
    c->rec = event_recorder_start(st);
    c->filter = evfilter_new(EVFILTER_BURST, EVFILTER_REFILL_MS, EVFILTER_MAX_KEYS);
    c->deps = strmap_new();
    c->deps_uid = strmap_new();
    c->sets = strmap_new();
    c->by_parent = strmap_new();
    c->orphans = strmap_new();
    c->pods = strmap_new();
    c->live = strmap_new();
    c->sets_uid = strmap_new();
    c->q = workq_new();
    if (!c->rec || !c->filter || !c->sets_uid || !c->deps || !c->deps_uid || !c->sets ||
        !c->by_parent || !c->orphans || !c->pods || !c->live || !c->q)
        goto fail;
    return c;
fail:
    dc_fini(c);
    return NULL;
}

static int dc_wait_ms(void *self)
{
    return ctrl_workq_wait_ms(((dctl *)self)->q, clock_mono_ms());
}

const ctrl_def ctrl_deployment_def = {"deployment", dc_init,  dc_fini,  dc_event,  dc_flush,
                                      dc_resync,    dc_flush, dc_takes, dc_wait_ms};
