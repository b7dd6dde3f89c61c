/* replicaset.c - the ReplicaSet and ReplicationController controller, as
 * upstream's pkg/controller/replicaset (which also runs ReplicationControllers).
 *
 * Each set keeps spec.replicas active pods: pods whose controllerRef is the
 * set and whose labels match its selector. A sync (syncReplicaSet):
 *  1. claims pods (ControllerRefManager): owned pods that no longer match are
 *     released (their ownerReference removed), active orphans that match are
 *     adopted (a controllerRef added), after re-reading the set to be sure it
 *     is not being deleted;
 *  2. when its expectations are satisfied (podcontrol.h) and it is not being
 *     deleted, manages replicas: creates the missing pods in slow-start
 *     batches, or deletes the extra ones ranked as upstream's getPodsToDelete,
 *     at most PODCTL_BURST (500) per sync;
 *  3. writes status (replicas, fullyLabeledReplicas, readyReplicas,
 *     availableReplicas, observedGeneration) and the ReplicaFailure condition
 *     (reason FailedCreate or FailedDelete, the error's message): set when a
 *     sync's creates or deletes fail, removed when one succeeds;
 *  4. requeues: after a failure with the owner's backoff (1 s doubling to
 *     60 s); with minReadySeconds, when the next ready pod becomes available.
 * A set whose creates quota refused is also woken when a ResourceQuota of its
 * namespace frees room (core/rollout.h ro_quota_freer): raising a quota or
 * deleting a pod brings the missing pods without waiting out the backoff,
 * and a set at its quota tries one pod per freed room, not a storm.
 *
 * The controller follows every store event on its one thread (controllers.h)
 * and keeps caches as upstream's informers do: each pod's facts (labels,
 * controllerRef, phase, readiness, node...) indexed by owner uid, orphans by
 * namespace, sets by key, uid and namespace. An event older than what the
 * cache holds (a replay after a relist) is ignored. A sync reads only the
 * set's own pods, so 10,000 pods of one set cost one pass per sync. Creates
 * and deletes run in parallel on podcontrol's workers while this thread
 * waits; the events they cause are read after.
 */
#include "controllers/controllers.h"
#include "core/jdump.h"
#include "controllers/podcontrol.h"
#include "controllers/workq.h"

#include "core/jget.h"
#include "core/rfc3339.h"
#include "core/rollout.h"
#include "core/selector.h"
#include "core/strmap.h"
#include "registry/registry.h"
#include "util/log.h"
#include "util/clock.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DELETION_COST "controller.kubernetes.io/pod-deletion-cost"
#define WORKERS 16
#define UID_MAX 64

typedef struct rpod rpod;
typedef struct podlist {
    rpod **v;
    size_t n, cap;
} podlist;

/* A pod as the controller sees it. */
struct rpod {
    char *key;       /* "pods/<ns>/<name>" (the key of rsc.pods) */
    char *ns, *name; /* owned */
    char uid[UID_MAX];
    json_t *labels;      /* owned reference (NULL: none) */
    char owner[UID_MAX]; /* controllerRef uid, "" when none */
    bool terminal;       /* Succeeded or Failed */
    bool deleting;       /* metadata.deletionTimestamp */
    char *node;          /* spec.nodeName, or NULL */
    int phase;           /* podPhaseToOrdinal */
    bool ready;
    int64_t ready_since, created; /* ms since the epoch, 0 unknown */
    int32_t restarts, sidecar_restarts, cost;
    int64_t rv;
    /* Whether its labels match a set's selector, and carry all its template's
     * labels, as computed for the set with serial `for_set` at generation
     * `for_gen` (0: not computed; reset when the labels change): a sync of a
     * set with 10,000 pods compares no labels for pods it has seen. */
    uint64_t for_set;
    int64_t for_gen;
    bool matches, full;
    podlist *list; /* the list it is in: by_owner[owner] or orphans[ns] */
    size_t idx;
};

typedef struct rset rset;
typedef struct setlist {
    rset **v;
    size_t n, cap;
    atomic_int *bucket; /* rsc.ns_bucket of its namespace: counts the sets listed here */
} setlist;

/* Orphan pods matter only in namespaces with a set (which may adopt them):
 * rsc_takes skips the others' pod events unparsed, on the store's writer
 * thread, where it may take no lock: namespaces are counted in buckets of
 * atomics by a hash of their name (a bucket shared by two namespaces only
 * takes more events than needed). */
#define NS_BUCKETS 4096

static unsigned ns_bucket_of(const char *ns)
{
    unsigned h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)ns; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h % NS_BUCKETS;
}

/* A ReplicaSet or ReplicationController. */
struct rset {
    char *key; /* store key (the key of rsc.sets, and of its expectations) */
    char *ns, *name;
    bool rc;
    uint64_t serial; /* unique for the life of the controller (rpod.for_set) */
    char uid[UID_MAX];
    json_t *obj; /* the latest version seen (owned) */
    int64_t rv, generation;
    sel_t *sel; /* NULL: selects nothing */
    int32_t replicas, min_ready;
    char parent[UID_MAX]; /* its controllerRef's uid (a Deployment), "" when none */
    bool deleting;
    /* sync state (when it is synced again: its due time in rsc.q) */
    int64_t retry_at;  /* after a failure: no manage before (monotonic ms), unless woken */
    int64_t status_at; /* its status last written (monotonic ms): CTRL_STATUS_PACE_MS */
    bool woken;        /* room may have been freed since the failure: try once */
    char *fail_msg;    /* the last manage error (ReplicaFailure), NULL: none */
    const char *fail_reason;
    bool quota_wait; /* that error was admission's 403: room freed in the namespace wakes it */
    setlist *nslist; /* its namespace's list, and its place there */
    size_t nsidx;
};

typedef struct rsc {
    store *st;
    const atomic_bool *stop;
    const api_kind *rs_kind, *rc_kind, *pod_kind;
    char rs_prefix[128], rc_prefix[128];
    podctl *pc_rs, *pc_rc;
    strmap *sets;     /* key -> rset */
    strmap *by_uid;   /* uid -> rset */
    strmap *ns_sets;  /* namespace -> setlist */
    strmap *pods;     /* key -> rpod */
    strmap *by_owner; /* controllerRef uid -> podlist */
    strmap *orphans;  /* namespace -> podlist (pods without a controllerRef) */
    workq *q;         /* keys of sets to sync, and when (monotonic ms) */
    uint64_t serials; /* the last rset.serial given */
    /* Sets listed per namespace bucket (setlist.bucket), and whether every
     * pod event is taken anyway (a set could not be listed: out of memory). */
    atomic_int ns_bucket[NS_BUCKETS];
    atomic_bool take_all;
    bool resyncing; /* rsc_resync lists every pod after the sets */
} rsc;

/* ---- small helpers ---- */

static int64_t ts_ms(const char *s)
{
    int64_t sec, nsec;
    if (!s || !rfc3339_parse(s, &sec, &nsec)) return 0;
    return sec * 1000 + nsec / 1000000;
}

/* The controllerRef of obj (the ownerReference with controller: true). */
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

static void copy_uid(char dst[UID_MAX], const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= UID_MAX) n = UID_MAX - 1;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

static podlist *list_get(strmap *m, const char *key, bool create)
{
    podlist *l = strmap_get(m, key);
    if (l || !create) return l;
    /* the map keys by a copy kept in front of the list */
    size_t klen = strlen(key) + 1;
    char *mem = calloc(1, sizeof(podlist) + klen);
    if (!mem) return NULL;
    l = (podlist *)mem;
    char *k = mem + sizeof(podlist);
    memcpy(k, key, klen);
    if (strmap_put(m, k, l, NULL) != 0) {
        free(mem);
        return NULL;
    }
    return l;
}

static void list_add(podlist *l, rpod *p)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 8;
        rpod **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv) return; /* not listed: p->list stays NULL, the next relist fixes it */
        l->v = nv;
        l->cap = nc;
    }
    p->list = l;
    p->idx = l->n;
    l->v[l->n++] = p;
}

static void list_remove(rpod *p)
{
    podlist *l = p->list;
    if (!l) return;
    l->v[p->idx] = l->v[--l->n];
    l->v[p->idx]->idx = p->idx;
    p->list = NULL;
}

static void lists_free(strmap *m)
{
    void *v;
    for (size_t it = 0; m && strmap_next(m, &it, NULL, &v);) {
        free(((podlist *)v)->v);
        free(v);
    }
    strmap_free(m);
}

/* ---- pods ---- */

static void pod_free(rpod *p)
{
    if (!p) return;
    list_remove(p);
    json_decref(p->labels);
    free(p->key);
    free(p->ns);
    free(p->name);
    free(p->node);
    free(p);
}

static int phase_ordinal(const char *phase)
{
    if (!phase) return 0;
    if (!strcmp(phase, "Unknown")) return 1;
    if (!strcmp(phase, "Running")) return 2;
    return 0;
}

/* The highest restartCount in a status list; of restartable init containers
 * only when `sidecars` (spec.initContainers with restartPolicy Always). */
static int32_t max_restarts(const json_t *pod, const char *list, bool sidecars)
{
    int32_t m = 0;
    size_t i;
    json_t *cs;
    json_array_foreach(jget(pod, "status", list), i, cs)
    {
        if (sidecars) {
            const char *name = json_string_value(json_object_get(cs, "name"));
            bool restartable = false;
            size_t j;
            json_t *c;
            json_array_foreach(jget(pod, "spec", "initContainers"), j, c)
            {
                const char *cn = json_string_value(json_object_get(c, "name"));
                const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
                if (cn && name && !strcmp(cn, name) && rp && !strcmp(rp, "Always"))
                    restartable = true;
            }
            if (!restartable) continue;
        }
        json_int_t r = json_integer_value(json_object_get(cs, "restartCount"));
        if (r > m) m = (int32_t)r;
    }
    return m;
}

/* What pod_read reads of a pod: a pod event parses only these (its
 * managedFields and spec are most of its text). */
static const char *const POD_PARTS[] = {"metadata.uid",
                                        "metadata.ownerReferences",
                                        "metadata.labels",
                                        "metadata.annotations",
                                        "metadata.creationTimestamp",
                                        "metadata.deletionTimestamp",
                                        "spec.nodeName",
                                        "spec.initContainers",
                                        "status",
                                        NULL};

/* Fill p's facts from the parsed pod (POD_PARTS of it at least). */
static void pod_read(rpod *p, const json_t *pod)
{
    copy_uid(p->uid, jstr(pod, "metadata", "uid"));
    const json_t *ref = controller_ref(pod);
    copy_uid(p->owner, ref ? json_string_value(json_object_get(ref, "uid")) : NULL);
    const json_t *labels = jget(pod, "metadata", "labels");
    if (!json_equal(labels ? labels : json_null(), p->labels ? p->labels : json_null()))
        p->for_set = 0;
    json_decref(p->labels);
    p->labels = json_incref((json_t *)labels);
    const char *phase = jstr(pod, "status", "phase");
    p->terminal = phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
    p->deleting = jget(pod, "metadata", "deletionTimestamp") != NULL;
    free(p->node);
    const char *node = jstr(pod, "spec", "nodeName");
    p->node = node && *node ? strdup(node) : NULL;
    p->phase = phase_ordinal(phase);
    p->ready = false;
    p->ready_since = 0;
    size_t i;
    json_t *c;
    json_array_foreach(jget(pod, "status", "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *st = json_string_value(json_object_get(c, "status"));
        if (type && !strcmp(type, "Ready") && st && !strcmp(st, "True")) {
            p->ready = true;
            p->ready_since = ts_ms(json_string_value(json_object_get(c, "lastTransitionTime")));
        }
    }
    p->created = ts_ms(jstr(pod, "metadata", "creationTimestamp"));
    p->restarts = max_restarts(pod, "containerStatuses", false);
    p->sidecar_restarts = max_restarts(pod, "initContainerStatuses", true);
    const json_t *ann = jget(pod, "metadata", "annotations");
    const char *cs = json_string_value(json_object_get(ann, DELETION_COST));
    p->cost = 0;
    if (cs) {
        char *end;
        long v = strtol(cs, &end, 10);
        if (*cs && !*end && v >= INT32_MIN && v <= INT32_MAX) p->cost = (int32_t)v;
    }
}

static bool pod_active(const rpod *p)
{
    return !p->terminal && !p->deleting;
}

/* Put p in the list its owner (or its namespace, as an orphan) says. */
static void pod_index(rsc *c, rpod *p)
{
    list_remove(p);
    podlist *l =
        *p->owner ? list_get(c->by_owner, p->owner, true) : list_get(c->orphans, p->ns, true);
    if (l) list_add(l, p);
}

/* ---- sets ---- */

static rset *set_by_owner(rsc *c, const char *uid)
{
    return *uid ? strmap_get(c->by_uid, uid) : NULL;
}

static podctl *pc_of(rsc *c, const rset *s)
{
    return s->rc ? c->pc_rc : c->pc_rs;
}

static void mark(rsc *c, rset *s)
{
    if (s) workq_mark(c->q, s->key);
}

/* Sync s again at `at` (monotonic ms), replacing a due time it had (earlier or later). */
static void requeue_at(rsc *c, rset *s, int64_t at)
{
    workq_forget(c->q, s->key);
    workq_due(c->q, s->key, at);
}

static void set_unlist(rset *s)
{
    setlist *l = s->nslist;
    if (!l) return;
    atomic_fetch_sub(l->bucket, 1);
    l->v[s->nsidx] = l->v[--l->n];
    l->v[s->nsidx]->nsidx = s->nsidx;
    s->nslist = NULL;
}

static void set_free(rset *s)
{
    if (!s) return;
    set_unlist(s);
    json_decref(s->obj);
    sel_free(s->sel);
    free(s->fail_msg);
    free(s->key);
    free(s->ns);
    free(s->name);
    free(s);
}

static setlist *ns_list(rsc *c, const char *ns)
{
    setlist *l = strmap_get(c->ns_sets, ns);
    if (l) return l;
    size_t klen = strlen(ns) + 1;
    char *mem = calloc(1, sizeof(setlist) + klen);
    if (!mem) return NULL;
    l = (setlist *)mem;
    l->bucket = &c->ns_bucket[ns_bucket_of(ns)];
    memcpy(mem + sizeof(setlist), ns, klen);
    if (strmap_put(c->ns_sets, mem + sizeof(setlist), l, NULL) != 0) {
        free(mem);
        return NULL;
    }
    return l;
}

/* The set's selector: a LabelSelector for ReplicaSets, a plain map for
 * ReplicationControllers. */
static sel_t *selector_of(const json_t *obj, bool rc)
{
    const json_t *s = jget(obj, "spec", "selector");
    char err[256];
    if (!rc) return sel_from_json(s, err, sizeof err);
    if (json_object_size(s) == 0) return NULL;
    json_t *ls = json_pack("{s:O}", "matchLabels", s);
    sel_t *sel = ls ? sel_from_json(ls, err, sizeof err) : NULL;
    json_decref(ls);
    return sel;
}

/* Take obj (a reference is kept) as the set's latest version at revision
 * rv; queue a sync unless only its status moved (upstream enqueues every
 * update; a change of status alone is mostly our own write). `known`: the set
 * had a version before. */
static void set_apply(rsc *c, rset *s, json_t *obj, int64_t rv, bool known)
{
    bool changed = true;
    if (known) {
        const json_t *old = s->obj;
        const char *meta[] = {"deletionTimestamp", "ownerReferences"};
        changed = json_integer_value(jget(obj, "metadata", "generation")) != s->generation;
        for (size_t i = 0; i < 2 && !changed; i++) {
            const json_t *a = jget(obj, "metadata", meta[i]), *b = jget(old, "metadata", meta[i]);
            changed = !json_equal(a ? a : json_null(), b ? b : json_null());
        }
    }
    json_decref(s->obj);
    s->obj = obj;
    s->rv = rv;
    s->generation = json_integer_value(jget(obj, "metadata", "generation"));
    sel_free(s->sel);
    s->sel = selector_of(obj, s->rc);
    const json_t *r = jget(obj, "spec", "replicas");
    s->replicas = json_is_integer(r) ? (int32_t)json_integer_value(r) : 1;
    s->min_ready = (int32_t)json_integer_value(jget(obj, "spec", "minReadySeconds"));
    const json_t *ref = controller_ref(obj);
    copy_uid(s->parent, ref ? json_string_value(json_object_get(ref, "uid")) : NULL);
    s->deleting = jget(obj, "metadata", "deletionTimestamp") != NULL;
    if (changed) {
        podctl_backoff_reset(pc_of(c, s), s->key); /* a new spec: try at once */
        workq_forget(c->q, s->key);
        s->retry_at = 0;
        mark(c, s);
    }
}

static void relist_ns_pods(rsc *c, const char *ns);

/* A set added or changed: its cache entry. */
static void set_seen(rsc *c, const store_obj *o, bool rc)
{
    json_t *obj = store_obj_parse(o);
    if (!obj) return;
    rset *s = strmap_get(c->sets, o->key);
    const char *uid = jstr(obj, "metadata", "uid");
    if (s && s->rv >= o->rv) {
        json_decref(obj);
        return;
    }
    if (s && uid && strcmp(s->uid, uid) != 0) { /* replaced by another object of that name */
        podctl_forget(pc_of(c, s), s->key);
        strmap_del(c->by_uid, s->uid);
        strmap_del(c->sets, s->key);
        set_free(s);
        s = NULL;
    }
    bool fresh_set = !s;
    if (!s) {
        if (!(s = calloc(1, sizeof *s)) || !(s->key = strdup(o->key)) || !(s->ns = strdup(o->ns)) ||
            !(s->name = strdup(o->name)) || strmap_put(c->sets, s->key, s, NULL) != 0) {
            if (s) {
                free(s->key);
                free(s->ns);
                free(s->name);
                free(s);
            }
            json_decref(obj);
            return;
        }
        s->rc = rc;
        s->serial = ++c->serials;
        copy_uid(s->uid, uid);
        strmap_put(c->by_uid, s->uid, s, NULL);
        setlist *l = ns_list(c, s->ns);
        if (l) {
            if (l->n == l->cap) {
                size_t nc = l->cap ? 2 * l->cap : 8;
                rset **nv = realloc(l->v, nc * sizeof *nv);
                if (nv) {
                    l->v = nv;
                    l->cap = nc;
                }
            }
            if (l->n < l->cap) {
                /* Counted before the namespace's pods are read again: an
                 * orphan's event published from here on is taken, and the
                 * list below sees any skipped before. */
                atomic_fetch_add(l->bucket, 1);
                s->nslist = l;
                s->nsidx = l->n;
                l->v[l->n++] = s;
                if (l->n == 1 && !c->resyncing) relist_ns_pods(c, s->ns);
            }
        }
        if (!s->nslist) atomic_store(&c->take_all, true);
    }
    set_apply(c, s, obj, o->rv, !fresh_set);
}

static void set_gone(rsc *c, const char *key, int64_t rv)
{
    rset *s = strmap_get(c->sets, key);
    if (!s || s->rv > rv) return;
    podctl_forget(pc_of(c, s), s->key);
    workq_forget(c->q, s->key);
    strmap_del(c->by_uid, s->uid);
    strmap_del(c->sets, key);
    set_free(s);
}

/* ---- pod events ---- */

/* Sets in p's namespace whose selector matches p: an orphan they may adopt. */
static void mark_matching(rsc *c, const rpod *p)
{
    setlist *l = strmap_get(c->ns_sets, p->ns);
    for (size_t i = 0; l && i < l->n; i++)
        if (l->v[i]->sel && sel_matches(l->v[i]->sel, p->labels)) mark(c, l->v[i]);
}

/* Room for pods may have been freed in namespace ns (a pod removed or
 * finished, a quota raised): the sets waiting on quota there try again. */
static void wake_quota_waiters(rsc *c, const char *ns)
{
    setlist *l = strmap_get(c->ns_sets, ns);
    for (size_t i = 0; l && i < l->n; i++)
        if (l->v[i]->quota_wait) {
            l->v[i]->woken = true;
            mark(c, l->v[i]);
        }
}

static void pod_seen(rsc *c, const store_obj *o)
{
    rpod *p = strmap_get(c->pods, o->key);
    if (p && p->rv >= o->rv) return; /* a replay of what the cache holds */
    json_t *pod = store_obj_view_parts(o, POD_PARTS);
    if (!pod) return;
    bool fresh =
        !p || strcmp(p->uid, jstr(pod, "metadata", "uid") ? jstr(pod, "metadata", "uid") : "");
    char old_owner[UID_MAX] = "";
    json_t *old_labels = NULL;
    if (!p) {
        if (!(p = calloc(1, sizeof *p)) || !(p->key = strdup(o->key)) || !(p->ns = strdup(o->ns)) ||
            !(p->name = strdup(o->name)) || strmap_put(c->pods, p->key, p, NULL) != 0) {
            if (p) {
                free(p->key);
                free(p->ns);
                free(p->name);
                free(p);
            }
            json_decref(pod);
            return;
        }
    } else if (!fresh) {
        copy_uid(old_owner, p->owner);
        old_labels = json_incref(p->labels);
    }
    bool was_terminal = !fresh && p->terminal;
    pod_read(p, pod);
    if (p->terminal && !was_terminal && !fresh) wake_quota_waiters(c, p->ns);
    p->rv = o->rv;
    json_decref(pod);
    pod_index(c, p);
    rset *s = set_by_owner(c, p->owner);
    if (s) {
        /* addPod: a creation observed; one marked for deletion counts as
         * deleted (upstream's deletePod on such an add or update) */
        if (fresh) podctl_creation_observed(pc_of(c, s), s->key);
        if (p->deleting) podctl_deletion_observed(pc_of(c, s), s->key, p->key);
        mark(c, s);
    }
    if (!fresh && strcmp(old_owner, p->owner) != 0) {
        rset *was = set_by_owner(c, old_owner);
        if (was) mark(c, was);
    }
    /* an orphan: the sets that may adopt it (on add, or when its labels or
     * owner change) */
    if (!*p->owner && pod_active(p) &&
        (fresh || *old_owner ||
         !json_equal(old_labels ? old_labels : json_null(), p->labels ? p->labels : json_null())))
        mark_matching(c, p);
    json_decref(old_labels);
}

static void pod_gone(rsc *c, const char *key, int64_t rv)
{
    rpod *p = strmap_get(c->pods, key);
    if (!p || p->rv > rv) return;
    rset *s = set_by_owner(c, p->owner);
    if (s) {
        podctl_deletion_observed(pc_of(c, s), s->key, p->key);
        mark(c, s);
    }
    wake_quota_waiters(c, p->ns);
    strmap_del(c->pods, key);
    pod_free(p);
}

/* Whether a set of namespace ns waits for room in its quotas. */
static bool quota_waiters(rsc *c, const char *ns)
{
    setlist *l = strmap_get(c->ns_sets, ns);
    for (size_t i = 0; l && i < l->n; i++)
        if (l->v[i]->quota_wait) return true;
    return false;
}

/* A quota of namespace ns moved: wake the sets it refused, if it freed room.
 * (Quotas change ten times a second while pods come and go: they are parsed
 * only when a set of their namespace waits for room.) */
static void quota_seen(rsc *c, const store_event *ev)
{
    if (!quota_waiters(c, ev->obj->ns)) return;
    bool freer = ev->type == STORE_EV_DELETED;
    if (!freer && ev->type == STORE_EV_MODIFIED && ev->prev) {
        json_t *before = store_obj_parse(ev->prev), *after = store_obj_parse(ev->obj);
        freer = ro_quota_freer(before, after);
        json_decref(before);
        json_decref(after);
    }
    if (freer) wake_quota_waiters(c, ev->obj->ns);
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Pods, ReplicaSets, ReplicationControllers and quotas (room freed). */
/* Sets, quotas, and the pods that have or had an owner, are deleted, or
 * are in a namespace with a set (an orphan it may adopt): a pod made on its
 * own elsewhere never wakes this thread. */
static bool rsc_takes(void *self, const store_event *ev)
{
    rsc *c = self;
    const char *key = ev->obj->key;
    if (has_prefix(key, "pods/"))
        return ev->type == STORE_EV_DELETED || atomic_load(&c->take_all) ||
               atomic_load(&c->ns_bucket[ns_bucket_of(ev->obj->ns)]) > 0 ||
               ctrl_meta_may_have(ev->obj, "ownerReferences") ||
               ctrl_meta_may_have(ev->prev, "ownerReferences");
    return has_prefix(key, c->rs_prefix) || has_prefix(key, c->rc_prefix) ||
           has_prefix(key, "resourcequotas/");
}

static void rsc_event(void *self, const store_event *ev)
{
    rsc *c = self;
    const char *key = ev->obj->key;
    if (has_prefix(key, "pods/")) {
        if (ev->type == STORE_EV_DELETED)
            pod_gone(c, key, ev->rv);
        else
            pod_seen(c, ev->obj);
    } else if (has_prefix(key, c->rs_prefix) || has_prefix(key, c->rc_prefix)) {
        if (ev->type == STORE_EV_DELETED)
            set_gone(c, key, ev->rv);
        else
            set_seen(c, ev->obj, has_prefix(key, c->rc_prefix));
    } else if (has_prefix(key, "resourcequotas/")) {
        quota_seen(c, ev);
    }
}

/* ---- claiming pods ---- */

typedef struct claim_ctx {
    const char *pod_uid;
    const char *set_uid;
    json_t *ref; /* adopt: the controllerRef to add; release: NULL */
} claim_ctx;

static json_t *claim_mutate(const json_t *cur, void *arg, api_err *e)
{
    claim_ctx *x = arg;
    const char *uid = jstr(cur, "metadata", "uid");
    if (!uid || strcmp(uid, x->pod_uid) != 0) {
        api_err_set(e, API_NOT_FOUND, "pod replaced");
        return NULL;
    }
    const json_t *cref = controller_ref(cur);
    if (x->ref && cref) { /* someone else claimed it first */
        api_err_set(e, API_CONFLICT, "pod already has a controller");
        return NULL;
    }
    json_t *pod = jcopy(cur);
    json_t *meta = pod ? json_object_get(pod, "metadata") : NULL;
    json_t *refs = json_array();
    if (!pod || !refs) {
        json_decref(pod);
        json_decref(refs);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(meta, "ownerReferences"), i, r)
    {
        const char *ru = json_string_value(json_object_get(r, "uid"));
        if (!x->ref && ru && !strcmp(ru, x->set_uid)) continue; /* released */
        json_array_append(refs, r);
    }
    if (x->ref) json_array_append(refs, x->ref);
    if (json_array_size(refs))
        json_object_set_new(meta, "ownerReferences", refs);
    else {
        json_decref(refs);
        json_object_del(meta, "ownerReferences");
    }
    return pod;
}

/* Adopt (ref given) or release pod p. 0, or -1 with e set (NotFound: gone). */
static int claim(rsc *c, const rpod *p, const char *set_uid, json_t *ref, api_err *e)
{
    claim_ctx x = {p->uid, set_uid, ref};
    json_t *out = NULL;
    int rc = reg_update(c->st, c->pod_kind, p->ns, p->name, "", claim_mutate, &x, false, &out, e);
    json_decref(out);
    return rc;
}

/* RecheckDeletionTimestamp: the set as stored now is the one we know and is
 * not being deleted. */
static bool can_adopt(rsc *c, const rset *s)
{
    store_obj *o = store_get(c->st, s->key);
    json_t *cur = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    const char *uid = jstr(cur, "metadata", "uid");
    bool ok = cur && uid && !strcmp(uid, s->uid) && !jget(cur, "metadata", "deletionTimestamp");
    json_decref(cur);
    return ok;
}

static bool labels_superset(const json_t *have, const json_t *want);

/* Whether p's labels match s's selector (and, in *full, carry every label of
 * its template), from p's cache when it was computed for this set and
 * generation. */
static bool pod_matches(const rset *s, rpod *p, bool *full)
{
    if (p->for_set != s->serial || p->for_gen != s->generation) {
        p->matches = s->sel && sel_matches(s->sel, p->labels);
        p->full =
            labels_superset(p->labels, jget(s->obj, "spec", "template", "metadata", "labels"));
        p->for_set = s->serial;
        p->for_gen = s->generation;
    }
    if (full) *full = p->full;
    return p->matches;
}

typedef struct podvec {
    rpod **v;
    size_t n, cap;
} podvec;

static int vec_add(podvec *v, rpod *p)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? 2 * v->cap : 64;
        rpod **nv = realloc(v->v, nc * sizeof *nv);
        if (!nv) return -1;
        v->v = nv;
        v->cap = nc;
    }
    v->v[v->n++] = p;
    return 0;
}

/* claimPods over the set's active pods: the ones it controls and that match,
 * into out. 0, or -1 with e set (an adoption or release failed). */
static int claim_pods(rsc *c, rset *s, podvec *out, api_err *e)
{
    podlist *own = strmap_get(c->by_owner, s->uid);
    int rc = 0;
    podvec release = {0};
    for (size_t i = 0; own && i < own->n; i++) {
        rpod *p = own->v[i];
        if (!pod_active(p)) continue;
        if (pod_matches(s, p, NULL)) {
            if (vec_add(out, p) != 0) return api_err_set(e, API_INTERNAL, "out of memory");
        } else if (!s->deleting) {
            vec_add(&release, p);
        }
    }
    for (size_t i = 0; i < release.n && rc == 0; i++) {
        api_err_clear(e);
        if (claim(c, release.v[i], s->uid, NULL, e) != 0 && e->code != API_NOT_FOUND) rc = -1;
    }
    free(release.v);
    if (rc != 0 || s->deleting || !s->sel) return rc;
    podlist *orph = strmap_get(c->orphans, s->ns);
    podvec adopt = {0};
    for (size_t i = 0; orph && i < orph->n; i++)
        if (pod_active(orph->v[i]) && sel_matches(s->sel, orph->v[i]->labels))
            vec_add(&adopt, orph->v[i]);
    if (adopt.n && can_adopt(c, s)) {
        json_t *ref = podctl_controller_ref(s->obj);
        for (size_t i = 0; ref && i < adopt.n && rc == 0; i++) {
            api_err_clear(e);
            if (claim(c, adopt.v[i], s->uid, ref, e) == 0)
                vec_add(out, adopt.v[i]);
            else if (e->code != API_NOT_FOUND)
                rc = -1;
        }
        json_decref(ref);
    }
    free(adopt.v);
    if (rc == 0) api_err_clear(e);
    return rc;
}

/* ---- managing replicas ---- */

typedef struct create_ctx {
    podctl *pc;
    const json_t *owner;
    json_t *pod;
    atomic_int skipped; /* namespace terminating: no pod, and no error */
} create_ctx;

static int create_one(void *arg, size_t i, api_err *e)
{
    create_ctx *x = arg;
    (void)i;
    if (podctl_create_pod(x->pc, x->owner, x->pod, NULL, e) == 0) return 0;
    if (podctl_namespace_terminating(e)) {
        atomic_fetch_add(&x->skipped, 1);
        api_err_clear(e);
        return 0;
    }
    return -1;
}

typedef struct delete_ctx {
    podctl *pc;
    const json_t *owner;
    const char *set_key;
    rpod **victims;
} delete_ctx;

static int delete_one(void *arg, size_t i, api_err *e)
{
    delete_ctx *x = arg;
    rpod *p = x->victims[i];
    if (podctl_delete_pod(x->pc, x->owner, p->ns, p->name, p->uid, e) == 0) return 0;
    podctl_deletion_observed(x->pc, x->set_key, p->key);
    if (e->code == API_NOT_FOUND) {
        api_err_clear(e);
        return 0;
    }
    return -1;
}

/* getIndirectlyRelatedPods' node counts: active pods of the set and of every
 * set with the same controller (a Deployment's other ReplicaSets), by node. */
static strmap *node_counts(rsc *c, const rset *s)
{
    strmap *m = strmap_new();
    if (!m) return NULL;
    setlist *l = strmap_get(c->ns_sets, s->ns);
    for (size_t i = 0; l && i < l->n; i++) {
        const rset *o = l->v[i];
        if (o != s && (!*s->parent || strcmp(o->parent, s->parent) != 0)) continue;
        podlist *pl = strmap_get(c->by_owner, o->uid);
        for (size_t j = 0; pl && j < pl->n; j++) {
            const rpod *p = pl->v[j];
            if (!pod_active(p)) continue;
            const char *node = p->node ? p->node : "";
            intptr_t n = (intptr_t)strmap_get(m, node);
            strmap_put(m, node, (void *)(n + 1), NULL); /* keys live in the pods */
        }
    }
    return m;
}

/* manageReplicas: 0, or -1 with e set (the ReplicaFailure message). */
static int manage(rsc *c, rset *s, podvec *pods, api_err *e)
{
    podctl *pc = pc_of(c, s);
    int64_t diff = (int64_t)pods->n - s->replicas;
    if (diff < 0) {
        size_t want = (size_t)(-diff > PODCTL_BURST ? PODCTL_BURST : -diff);
        json_t *tmpl = json_object_get(json_object_get(s->obj, "spec"), "template");
        create_ctx x = {pc, s->obj, podctl_pod_from_template(tmpl, s->obj, NULL, e), 0};
        if (!x.pod) return -1;
        podctl_expect_creations(pc, s->key, (int)want);
        size_t ok = podctl_slow_start(pc, want, 1, create_one, &x, e);
        /* creations that were not made will never be observed */
        size_t made = ok - (size_t)atomic_load(&x.skipped);
        for (size_t i = made; i < want; i++)
            podctl_creation_observed(pc, s->key);
        json_decref(x.pod);
        return ok == want ? 0 : -1;
    }
    if (diff > 0) {
        size_t n = (size_t)(diff > PODCTL_BURST ? PODCTL_BURST : diff);
        rpod **victims = malloc(n * sizeof *victims);
        const char **keys = malloc(n * sizeof *keys);
        if (!victims || !keys) {
            free(victims);
            free(keys);
            return api_err_set(e, API_INTERNAL, "out of memory");
        }
        if (n < pods->n) { /* getPodsToDelete: rank unless every pod goes */
            ro_pod *rank = malloc(pods->n * sizeof *rank);
            strmap *nodes = node_counts(c, s);
            int64_t now = clock_wall_ms();
            for (size_t i = 0; rank && i < pods->n; i++) {
                const rpod *p = pods->v[i];
                rank[i] = (ro_pod){
                    .assigned = p->node != NULL,
                    .phase = p->phase,
                    .ready = p->ready,
                    .ready_since = p->ready_since,
                    .deletion_cost = p->cost,
                    .rank =
                        nodes ? (int32_t)(intptr_t)strmap_get(nodes, p->node ? p->node : "") : 0,
                    .restarts = p->restarts,
                    .sidecar_restarts = p->sidecar_restarts,
                    .created = p->created,
                    .uid = p->uid,
                    .id = i};
            }
            if (rank) {
                ro_rank_for_deletion(rank, pods->n, now);
                for (size_t i = 0; i < n; i++)
                    victims[i] = pods->v[rank[i].id];
            } else {
                memcpy(victims, pods->v, n * sizeof *victims);
            }
            free(rank);
            strmap_free(nodes);
        } else {
            memcpy(victims, pods->v, n * sizeof *victims);
        }
        for (size_t i = 0; i < n; i++)
            keys[i] = victims[i]->key;
        podctl_expect_deletions(pc, s->key, keys, n);
        delete_ctx x = {pc, s->obj, s->key, victims};
        size_t ok = podctl_parallel(pc, n, delete_one, &x, e);
        free(victims);
        free(keys);
        return ok == n ? 0 : -1;
    }
    return 0;
}

/* ---- status ---- */

static bool labels_superset(const json_t *have, const json_t *want)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)want, k, v)
    {
        const char *hv = json_string_value(json_object_get(have, k));
        if (!hv || !json_is_string(v) || strcmp(hv, json_string_value(v)) != 0) return false;
    }
    return true;
}

static void put_count(json_t *status, const char *key, int64_t n, bool keep_zero)
{
    if (n || keep_zero) json_object_set_new(status, key, json_integer(n));
}

/* calculateStatus. *next_available: when (wall ms) the next ready pod turns
 * available (0: none pending). Caller owns the result. */
static json_t *calc_status(const rset *s, podvec *pods, bool managed, const char *err,
                           const char *reason, int64_t now, int64_t *next_available)
{
    int64_t full = 0, ready = 0, avail = 0;
    *next_available = 0;
    for (size_t i = 0; i < pods->n; i++) {
        rpod *p = pods->v[i];
        bool fl = false;
        pod_matches(s, p, &fl);
        if (fl) full++;
        if (!p->ready) continue;
        ready++;
        if (ro_pod_available(true, p->ready_since, s->min_ready, now))
            avail++;
        else if (p->ready_since) {
            int64_t at = ro_available_at(p->ready_since, s->min_ready);
            if (!*next_available || at < *next_available) *next_available = at;
        }
    }
    json_t *st = json_object();
    if (!st) return NULL;
    put_count(st, "replicas", (int64_t)pods->n, true);
    put_count(st, "fullyLabeledReplicas", full, false);
    put_count(st, "readyReplicas", ready, false);
    put_count(st, "availableReplicas", avail, false);
    put_count(st, "observedGeneration", s->generation, false);
    /* conditions: ReplicaFailure set when this sync's manage failed and none
     * is there, removed when it succeeded; others kept as they are */
    json_t *conds = json_array();
    const json_t *have = NULL;
    size_t i;
    json_t *cnd;
    json_array_foreach(jget(s->obj, "status", "conditions"), i, cnd)
    {
        const char *type = json_string_value(json_object_get(cnd, "type"));
        if (type && !strcmp(type, "ReplicaFailure")) {
            have = cnd;
            continue;
        }
        json_array_append(conds, cnd);
    }
    if (err && have) {
        json_array_append(conds, (json_t *)have);
    } else if (err) {
        char ts[32];
        rfc3339_format(now / 1000, ts, sizeof ts);
        json_array_append_new(
            conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "ReplicaFailure", "status",
                             "True", "lastTransitionTime", ts, "reason", reason, "message", err));
    } else if (have && !managed) { /* no manage this time: as it was */
        json_array_append(conds, (json_t *)have);
    }
    if (json_array_size(conds))
        json_object_set_new(st, "conditions", conds);
    else
        json_decref(conds);
    return st;
}

static void write_status(rsc *c, rset *s, json_t *status)
{
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    const api_kind *k = s->rc ? c->rc_kind : c->rs_kind;
    if (ctrl_write_status(c->st, k, s->ns, s->name, s->uid, status, &out, &e) == 0) {
        /* the cache takes what was written: a sync before its event arrives
         * must not write it again */
        const char *rv = jstr(out, "metadata", "resourceVersion");
        /* `out` may hold a spec written meanwhile (its event, older than
         * this write, will be ignored): set_apply queues a sync for it */
        set_apply(c, s, out, rv ? strtoll(rv, NULL, 10) : s->rv, true);
    } else if (e.code != API_NOT_FOUND && e.code != API_CONFLICT) {
        log_msg(LOG_WARN, "replicaset status write failed", "\"set\":\"%s\",\"error\":\"%s\"",
                s->key, e.message);
    }
    api_err_clear(&e);
}

/* ---- the sync ---- */

static void set_failure(rset *s, const api_err *e, const char *reason)
{
    free(s->fail_msg);
    s->fail_msg = strdup(e->message);
    s->fail_reason = reason;
    /* an admission refusal (ResourceQuota, a pool, a custom quota): room
     * freed in the namespace may let the next one through */
    s->quota_wait = e->code == API_FORBIDDEN;
}

/* The sync of the set of store key `key` (workq_sync_fn). */
static void sync_set(void *self, const char *key)
{
    rsc *c = self;
    rset *s = strmap_get(c->sets, key);
    if (!s) return;
    podctl *pc = pc_of(c, s);
    int64_t mono = clock_mono_ms();
    bool needs = podctl_satisfied(pc, s->key);
    podvec pods = {0};
    api_err e;
    api_err_init(&e);
    if (claim_pods(c, s, &pods, &e) != 0) {
        requeue_at(c, s, mono + podctl_backoff_failure(pc, s->key));
        log_msg(LOG_WARN, "claiming pods failed", "\"set\":\"%s\",\"error\":\"%s\"", s->key,
                e.message);
        api_err_clear(&e);
        free(pods.v);
        return;
    }
    /* Backing off after a failure: the set's own pod events do not make it
     * try again before its time, only room freed in its namespace does. */
    bool managed = needs && !s->deleting && (!s->retry_at || mono >= s->retry_at || s->woken);
    if (managed) {
        s->woken = false;
        int64_t diff = (int64_t)pods.n - s->replicas;
        if (manage(c, s, &pods, &e) != 0) {
            set_failure(s, &e, diff < 0 ? "FailedCreate" : "FailedDelete");
            s->retry_at = mono + podctl_backoff_failure(pc, s->key);
            requeue_at(c, s, s->retry_at);
        } else {
            free(s->fail_msg);
            s->fail_msg = NULL;
            s->quota_wait = false;
            podctl_backoff_reset(pc, s->key);
            s->retry_at = 0;
            workq_forget(c->q, s->key);
        }
    }
    api_err_clear(&e);
    int64_t now = clock_wall_ms(), next_avail = 0;
    json_t *status =
        calc_status(s, &pods, managed, managed ? s->fail_msg : NULL,
                    s->fail_reason ? s->fail_reason : "FailedCreate", now, &next_avail);
    free(pods.v);
    if (status && !json_equal(status, json_object_get(s->obj, "status"))) {
        if (s->status_at && mono - s->status_at < CTRL_STATUS_PACE_MS &&
            ctrl_status_counts_only(status, json_object_get(s->obj, "status"))) {
            workq_due(c->q, s->key, s->status_at + CTRL_STATUS_PACE_MS);
        } else {
            write_status(c, s, status);
            s->status_at = mono;
        }
    }
    json_decref(status);
    /* minReadySeconds: come back when the next ready pod becomes available */
    if (next_avail && !s->fail_msg) workq_due(c->q, s->key, mono + (next_avail - now));
}

/* Sync the queued sets and those due (after each batch of events and at
 * each tick); a sync may queue more (a write that returned a spec changed
 * meanwhile): a few rounds here, the rest at the next tick. */
static void rsc_flush(void *self)
{
    rsc *c = self;
    workq_run(c->q, clock_mono_ms(), sync_set, c, c->stop);
}

/* ---- relist ---- */

static void clear_caches(rsc *c)
{
    void *v;
    for (size_t it = 0; c->pods && strmap_next(c->pods, &it, NULL, &v);) {
        ((rpod *)v)->list = NULL; /* the lists go below */
        pod_free(v);
    }
    strmap_free(c->pods);
    lists_free(c->by_owner);
    lists_free(c->orphans);
    c->pods = strmap_new();
    c->by_owner = strmap_new();
    c->orphans = strmap_new();
}

static void relist(rsc *c, const char *prefix, int kind)
{
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_list(c->st, prefix, NULL, 0, &objs, &n, NULL, NULL) != 0) return;
    for (size_t i = 0; i < n; i++) {
        if (kind == 0)
            pod_seen(c, objs[i]);
        else
            set_seen(c, objs[i], kind == 2);
        store_obj_unref(objs[i]);
    }
    free(objs);
}

/* The pods of namespace ns read again: it has its first set, and its
 * orphans' events were skipped until now (rsc_takes). */
static void relist_ns_pods(rsc *c, const char *ns)
{
    char prefix[320];
    if ((size_t)snprintf(prefix, sizeof prefix, "pods/%s/", ns) >= sizeof prefix) return;
    relist(c, prefix, 0);
}

/* Every set and pod read again (at start, and every CTRL_RESYNC_SECONDS or
 * after the watch fell behind): nothing of ours is in flight while this
 * thread is here, so the store holds every pod we made and expectations can
 * start over. Sets keep their failure and backoff. */
static void rsc_resync(void *self)
{
    rsc *c = self;
    clear_caches(c);
    podctl_forget_all_expectations(c->pc_rs);
    podctl_forget_all_expectations(c->pc_rc);
    c->resyncing = true; /* every pod is read below */
    relist(c, c->rs_prefix, 1);
    relist(c, c->rc_prefix, 2);
    c->resyncing = false;
    relist(c, "pods/", 0);
    void *v;
    for (size_t it = 0; strmap_next(c->sets, &it, NULL, &v);)
        mark(c, v);
    rsc_flush(c);
}

/* ---- life ---- */

static void rsc_fini(void *self)
{
    rsc *c = self;
    if (!c) return;
    podctl_free(c->pc_rs);
    podctl_free(c->pc_rc);
    clear_caches(c);
    strmap_free(c->pods);
    lists_free(c->by_owner);
    lists_free(c->orphans);
    void *v;
    for (size_t it = 0; c->sets && strmap_next(c->sets, &it, NULL, &v);) {
        ((rset *)v)->nslist = NULL;
        set_free(v);
    }
    strmap_free(c->sets);
    strmap_free(c->by_uid);
    for (size_t it = 0; c->ns_sets && strmap_next(c->ns_sets, &it, NULL, &v);) {
        free(((setlist *)v)->v);
        free(v);
    }
    strmap_free(c->ns_sets);
    workq_free(c->q);
    free(c);
}

static void *rsc_init(store *st, const atomic_bool *stop)
{
    rsc *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->st = st;
    c->stop = stop;
    c->rs_kind = api_kind_find("apps", "v1", "replicasets");
    c->rc_kind = api_kind_find("", "v1", "replicationcontrollers");
    c->pod_kind = api_kind_find("", "v1", "pods");
    char err[256];
    if (!c->rs_kind || !c->rc_kind || !c->pod_kind) goto fail;
    api_kind_store_resource(c->rs_kind, c->rs_prefix, sizeof c->rs_prefix - 1);
    strcat(c->rs_prefix, "/");
    api_kind_store_resource(c->rc_kind, c->rc_prefix, sizeof c->rc_prefix - 1);
    strcat(c->rc_prefix, "/");
    c->pc_rs = podctl_new(st, "replicaset-controller", WORKERS, err, sizeof err);
    c->pc_rc = podctl_new(st, "replication-controller", 4, err, sizeof err);
    c->sets = strmap_new();
    c->by_uid = strmap_new();
    c->ns_sets = strmap_new();
    c->pods = strmap_new();
    c->by_owner = strmap_new();
    c->orphans = strmap_new();
    c->q = workq_new();
    if (!c->pc_rs || !c->pc_rc || !c->sets || !c->by_uid || !c->ns_sets || !c->pods ||
        !c->by_owner || !c->orphans || !c->q)
        goto fail;
    return c;
fail:
    rsc_fini(c);
    return NULL;
}

static int rsc_wait_ms(void *self)
{
    return ctrl_workq_wait_ms(((rsc *)self)->q, clock_mono_ms());
}

const ctrl_def ctrl_replicaset_def = {"replicaset", rsc_init,  rsc_fini,  rsc_event,  rsc_flush,
                                      rsc_resync,   rsc_flush, rsc_takes, rsc_wait_ms};
