/* gc.c - the garbage collector: metadata.ownerReferences.
 *
 * Upstream's garbage collector (pkg/controller/garbagecollector), without its
 * in-memory graph: dependents are found by scanning (find_dependents, the one
 * place that does it, so an owner-uid index can replace it), and owners are
 * looked up in the store when needed.
 *  - An object whose owners are all gone (absent, or replaced by a new object
 *    with another uid) is deleted, Background unless it already carries the
 *    orphan or foregroundDeletion finalizer. An object with an owner still
 *    present keeps living; references to the vanished owners are removed.
 *  - Foreground: an owner with deletionTimestamp and the "foregroundDeletion"
 *    finalizer has its dependents deleted; once no dependent that blocks it
 *    (ownerReference.blockOwnerDeletion) remains, the finalizer goes and the
 *    registry removes the owner.
 *    A dependent whose owner waits and which has dependents of its own goes
 *    Foreground too; when one of those is itself deleting its dependents
 *    (a circle of owners), its blocking references are unblocked first.
 *  - Orphan: an owner with deletionTimestamp and the "orphan" finalizer has
 *    its references removed from every dependent, then the finalizer goes.
 * Every write goes through the registry, with the dependent's uid as a
 * precondition, so a dependent replaced meanwhile is never touched.
 */
#include "controllers/controllers.h"
#include "core/jdump.h"

#include "core/strmap.h"
#include "registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINALIZER_ORPHAN "orphan"
#define FINALIZER_FOREGROUND "foregroundDeletion"

typedef struct gc_ctrl {
    store *st;
    const atomic_bool *stop;
    ctrl_set deleted; /* "<uid>/<ns>" of owners deleted ("" ns: cluster-scoped) */
    ctrl_set check;   /* keys of dependents whose owners may be gone */
    ctrl_set owners;  /* keys of owners that may be deleting in Foreground or Orphan mode */
    /* While a flush checks dependents: each owner's state, looked up once
     * ("<key>\n<uid>" -> owner_state + 1; keys owned). 10,000 new pods of one
     * ReplicaSet read and parse it once, not 10,000 times. NULL otherwise. */
    strmap *owner_cache;
} gc_ctrl;

typedef struct gc_dep {
    const api_kind *k;
    store_obj *o; /* a reference */
    json_t *obj;  /* parsed */
} gc_dep;

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static const json_t *owner_refs(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
}

static bool being_deleted(const json_t *obj)
{
    return json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") != NULL;
}

static const json_t *ref_to(const json_t *obj, const char *uid)
{
    size_t i;
    json_t *ref;
    json_array_foreach(owner_refs(obj), i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (u && strcmp(u, uid) == 0) return ref;
    }
    return NULL;
}

static void deps_free(gc_dep *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        store_obj_unref(d[i].o);
        json_decref(d[i].obj);
    }
    free(d);
}

/* Whether obj has a reference to any uid of the set (a json object's keys). */
static bool refers_to_any(const json_t *obj, const json_t *uids)
{
    size_t i;
    json_t *ref;
    json_array_foreach(owner_refs(obj), i, ref)
    {
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (u && json_object_get(uids, u)) return true;
    }
    return false;
}

/* Scan one key prefix for objects referring to `uids`; append them to *d. */
static void scan_prefix(const api_kind *k, store *st, const char *prefix, const json_t *uids,
                        gc_dep **d, size_t *n, size_t *cap)
{
    store_obj **objs = NULL;
    size_t cnt = 0;
    int64_t rev;
    bool more;
    /* Objects that cannot match are skipped unparsed: a uid is unique text. */
    const char *needle = "\"ownerReferences\"";
    if (json_object_size(uids) == 1)
        needle = json_object_iter_key(json_object_iter((json_t *)uids));
    if (store_list(st, prefix, NULL, 0, &objs, &cnt, &rev, &more) != 0) return;
    for (size_t i = 0; i < cnt; i++) {
        json_t *obj = NULL;
        if (strstr(objs[i]->json, needle)) obj = store_obj_parse(objs[i]);
        if (!obj || !refers_to_any(obj, uids)) {
            json_decref(obj);
            store_obj_unref(objs[i]);
            continue;
        }
        if (*n == *cap) {
            size_t nc = *cap ? 2 * *cap : 8;
            gc_dep *nd = realloc(*d, nc * sizeof *nd);
            if (!nd) {
                json_decref(obj);
                store_obj_unref(objs[i]);
                continue;
            }
            *d = nd;
            *cap = nc;
        }
        (*d)[(*n)++] = (gc_dep){k, objs[i], obj};
    }
    free(objs);
}

/* Objects whose ownerReferences name any of `uids` (a json object's keys):
 * in namespace ns for namespaced owners, anywhere for cluster-scoped ones
 * (ns ""). The only place that finds dependents; an index by owner uid can
 * replace this scan. Taking a set lets one scan serve a batch of deletions. */
static size_t find_dependents(store *st, const json_t *uids, const char *ns, gc_dep **out)
{
    char prefix[512], res[256];
    size_t n = 0, cap = 0;
    *out = NULL;
    size_t nk = api_kind_count();
    for (size_t i = 0; i < nk; i++) {
        const api_kind *k = api_kind_at(i);
        if ((*ns && !k->namespaced) || !api_kind_primary(k)) continue;
        api_kind_store_resource(k, res, sizeof res);
        if (*ns)
            snprintf(prefix, sizeof prefix, "%s/%s/", res, ns);
        else
            snprintf(prefix, sizeof prefix, "%s/", res);
        scan_prefix(k, st, prefix, uids, out, &n, &cap);
    }
    return n;
}

static size_t dependents_of(store *st, const char *uid, const char *ns, gc_dep **out)
{
    json_t *uids = json_pack("{s:b}", uid, 1);
    size_t n = find_dependents(st, uids, ns, out);
    json_decref(uids);
    return n;
}

/* ---- owners ---- */

typedef enum { OWNER_SOLID, OWNER_WAITING, OWNER_DANGLING } owner_state;

/* Store key of the owner a reference names, for a dependent in dep_ns. */
static const api_kind *owner_key(const json_t *ref, const char *dep_ns, char *key, size_t n)
{
    const char *av = json_string_value(json_object_get(ref, "apiVersion"));
    const char *kind = json_string_value(json_object_get(ref, "kind"));
    const char *name = json_string_value(json_object_get(ref, "name"));
    const api_kind *k = av && kind && name ? api_kind_by_kind(av, kind) : NULL;
    /* a cluster-scoped dependent cannot have a namespaced owner */
    if (!k || (k->namespaced && !*dep_ns)) return NULL;
    if (api_kind_key(k, k->namespaced ? dep_ns : "", name, key, n) < 0) return NULL;
    return k;
}

/* Upstream's classification: solid (present), waiting (present, deleting its
 * dependents in Foreground), dangling (absent, or another object by that name).
 * A reference we cannot resolve counts as solid: never collect on a guess. */
static owner_state owner_lookup(store *st, const json_t *ref, const char *dep_ns)
{
    char key[768];
    if (!owner_key(ref, dep_ns, key, sizeof key)) return OWNER_SOLID;
    store_obj *o = store_get(st, key);
    if (!o) return OWNER_DANGLING;
    json_t *owner = store_obj_parse(o);
    store_obj_unref(o);
    if (!owner) return OWNER_SOLID;
    const char *uid = meta_str(owner, "uid");
    const char *want = json_string_value(json_object_get(ref, "uid"));
    owner_state s = OWNER_SOLID;
    if (!uid || !want || strcmp(uid, want) != 0)
        s = OWNER_DANGLING;
    else if (being_deleted(owner) && ctrl_has_finalizer(owner, FINALIZER_FOREGROUND))
        s = OWNER_WAITING;
    json_decref(owner);
    return s;
}

/* owner_lookup through the flush's cache, when there is one. */
static owner_state owner_state_of(gc_ctrl *g, const json_t *ref, const char *dep_ns)
{
    const char *uid = json_string_value(json_object_get(ref, "uid"));
    char key[768], ck[900];
    if (!g->owner_cache || !uid || !owner_key(ref, dep_ns, key, sizeof key))
        return owner_lookup(g->st, ref, dep_ns);
    snprintf(ck, sizeof ck, "%s\n%s", key, uid);
    intptr_t v = (intptr_t)strmap_get(g->owner_cache, ck);
    if (v) return (owner_state)(v - 1);
    owner_state s = owner_lookup(g->st, ref, dep_ns);
    char *k = strdup(ck);
    if (k && strmap_put(g->owner_cache, k, (void *)(intptr_t)(s + 1), NULL) != 0) free(k);
    return s;
}

static void owner_cache_drop(gc_ctrl *g)
{
    const char *k;
    for (size_t it = 0; g->owner_cache && strmap_next(g->owner_cache, &it, &k, NULL);)
        free((char *)k);
    strmap_free(g->owner_cache);
    g->owner_cache = NULL;
}

/* ---- writes ---- */

typedef struct unown {
    const char *dep_uid;
    const json_t *uids; /* owner uids whose references go */
} unown;

static bool in_list(const json_t *list, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) if (strcmp(json_string_value(v), s) == 0) return true;
    return false;
}

static json_t *drop_owner_refs(const json_t *cur, void *ctx, api_err *e)
{
    const unown *u = ctx;
    const char *uid = meta_str(cur, "uid");
    if (!uid || strcmp(uid, u->dep_uid) != 0) {
        api_err_set(e, API_CONFLICT, "object was replaced");
        return NULL;
    }
    json_t *nw = jcopy(cur);
    json_t *meta = json_object_get(nw, "metadata");
    json_t *refs = json_object_get(meta, "ownerReferences");
    for (size_t i = json_array_size(refs); i-- > 0;) {
        const char *ru = json_string_value(json_object_get(json_array_get(refs, i), "uid"));
        if (ru && in_list(u->uids, ru)) json_array_remove(refs, i);
    }
    if (json_array_size(refs) == 0) json_object_del(meta, "ownerReferences");
    return nw;
}

/* Remove the references to `uids` from a dependent. 0, or -1 (kept). */
static int unown_dependent(gc_ctrl *g, const gc_dep *d, const json_t *uids)
{
    unown u = {meta_str(d->obj, "uid"), uids};
    if (!u.dep_uid) return -1;
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc =
        reg_update(g->st, d->k, d->o->ns, d->o->name, "", drop_owner_refs, &u, false, &out, &e);
    if (rc != 0 && e.code == API_NOT_FOUND) rc = 0;
    json_decref(out);
    api_err_clear(&e);
    return rc;
}

static json_t *unblock_owner_refs(const json_t *cur, void *ctx, api_err *e)
{
    const char *dep_uid = ctx;
    const char *uid = meta_str(cur, "uid");
    if (!uid || strcmp(uid, dep_uid) != 0) {
        api_err_set(e, API_CONFLICT, "object was replaced");
        return NULL;
    }
    json_t *nw = jcopy(cur);
    size_t i;
    json_t *ref;
    json_array_foreach(owner_refs(nw), i, ref)
    {
        if (json_is_true(json_object_get(ref, "blockOwnerDeletion")))
            json_object_set_new(ref, "blockOwnerDeletion", json_false());
    }
    return nw;
}

/* upstream's unblockOwnerReferences: every reference of the dependent that
 * blocks its owner's deletion stops blocking it. 0, or -1 (kept). */
static int unblock_dependent(gc_ctrl *g, const gc_dep *d)
{
    const char *uid = meta_str(d->obj, "uid");
    if (!uid) return -1;
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_update(g->st, d->k, d->o->ns, d->o->name, "", unblock_owner_refs, (void *)uid,
                        false, &out, &e);
    json_decref(out);
    api_err_clear(&e);
    return rc;
}

static bool deleting_dependents(const json_t *obj)
{
    return being_deleted(obj) && ctrl_has_finalizer(obj, FINALIZER_FOREGROUND);
}

/* Delete a dependent; true when it is gone (or was already). */
static bool delete_dependent(gc_ctrl *g, const gc_dep *d, const char *policy)
{
    reg_delete_opts opts = {
        .grace_seconds = -1, .propagation = policy, .pre_uid = meta_str(d->obj, "uid")};
    json_t *out = NULL;
    bool gone = false;
    api_err e;
    api_err_init(&e);
    if (reg_delete(g->st, d->k, d->o->ns, d->o->name, &opts, &out, &gone, &e) != 0)
        gone = e.code == API_NOT_FOUND || e.code == API_CONFLICT;
    json_decref(out);
    api_err_clear(&e);
    return gone;
}

/* upstream attemptToDeleteItem: collect the dependent if no owner is solid.
 * Returns true when the dependent no longer waits on anything here: it is
 * gone, or its references to vanished or waiting owners were removed. */
static bool attempt_delete(gc_ctrl *g, const gc_dep *d)
{
    if (being_deleted(d->obj)) {
        if (ctrl_has_finalizer(d->obj, FINALIZER_FOREGROUND)) ctrl_set_add(&g->owners, d->o->key);
        return false;
    }
    size_t solid = 0, waiting = 0, i;
    json_t *gone_uids = json_array(), *ref;
    json_array_foreach(owner_refs(d->obj), i, ref)
    {
        owner_state s = owner_state_of(g, ref, d->o->ns);
        const char *u = json_string_value(json_object_get(ref, "uid"));
        if (s == OWNER_SOLID)
            solid++;
        else if (u)
            json_array_append_new(gone_uids, json_string(u));
        waiting += s == OWNER_WAITING;
    }
    bool done = false;
    if (solid) {
        /* Another owner keeps it alive: only forget the ones that went. */
        done = json_array_size(gone_uids) && unown_dependent(g, d, gone_uids) == 0;
    } else if (json_array_size(gone_uids)) {
        const char *policy = "Background";
        gc_dep *sub = NULL;
        size_t nsub = 0;
        if (waiting) /* its owner waits: let its own dependents go first */
            nsub = dependents_of(g->st, meta_str(d->obj, "uid"), d->k->namespaced ? d->o->ns : "",
                                 &sub);
        /* A dependent of it that is itself deleting its dependents in
         * Foreground may be its owner's owner: a circle (pod1 <- pod2 <-
         * pod3 <- pod1) where each waits for the next. As upstream, its
         * references stop blocking their owners before it goes Foreground,
         * which breaks the circle; this may unblock more than a true circle
         * needs (upstream's detection has the same false positives). */
        for (size_t i = 0; i < nsub; i++) {
            if (!deleting_dependents(sub[i].obj)) continue;
            unblock_dependent(g, d);
            break;
        }
        deps_free(sub, nsub);
        if (nsub)
            policy = "Foreground";
        else if (ctrl_has_finalizer(d->obj, FINALIZER_ORPHAN))
            policy = "Orphan";
        else if (ctrl_has_finalizer(d->obj, FINALIZER_FOREGROUND))
            policy = "Foreground";
        done = delete_dependent(g, d, policy);
    }
    json_decref(gone_uids);
    return done;
}

/* ---- owners being deleted ---- */

static void foreground_owner(gc_ctrl *g, const api_kind *k, const store_obj *o, const char *uid)
{
    gc_dep *deps = NULL;
    size_t n = dependents_of(g->st, uid, k->namespaced ? o->ns : "", &deps);
    size_t blocking = 0;
    for (size_t i = 0; i < n && !atomic_load(g->stop); i++) {
        bool done = attempt_delete(g, &deps[i]);
        if (!done && json_is_true(json_object_get(ref_to(deps[i].obj, uid), "blockOwnerDeletion")))
            blocking++;
    }
    deps_free(deps, n);
    if (!blocking && !atomic_load(g->stop))
        ctrl_remove_finalizer(g->st, k, o->ns, o->name, uid, FINALIZER_FOREGROUND);
}

static void orphan_owner(gc_ctrl *g, const api_kind *k, const store_obj *o, const char *uid)
{
    gc_dep *deps = NULL;
    size_t n = dependents_of(g->st, uid, k->namespaced ? o->ns : "", &deps);
    json_t *uids = json_pack("[s]", uid);
    size_t failed = 0;
    for (size_t i = 0; i < n && !atomic_load(g->stop); i++)
        failed += unown_dependent(g, &deps[i], uids) != 0;
    json_decref(uids);
    deps_free(deps, n);
    if (!failed && !atomic_load(g->stop))
        ctrl_remove_finalizer(g->st, k, o->ns, o->name, uid, FINALIZER_ORPHAN);
}

static void process_owner(gc_ctrl *g, const char *key)
{
    const api_kind *k = api_kind_for_key(key);
    store_obj *o = k ? store_get(g->st, key) : NULL;
    json_t *obj = o ? store_obj_parse(o) : NULL;
    const char *uid = meta_str(obj, "uid");
    if (obj && uid && being_deleted(obj)) {
        if (ctrl_has_finalizer(obj, FINALIZER_FOREGROUND))
            foreground_owner(g, k, o, uid);
        else if (ctrl_has_finalizer(obj, FINALIZER_ORPHAN))
            orphan_owner(g, k, o, uid);
    }
    json_decref(obj);
    store_obj_unref(o);
}

/* Owners are gone: collect what they owned, one scan per namespace. */
static void owners_deleted(gc_ctrl *g)
{
    json_t *by_ns = json_object(); /* {ns: {uid: true}} */
    for (size_t i = 0; i < g->deleted.n; i++) {
        char *slash = strchr(g->deleted.v[i], '/');
        if (!slash) continue;
        *slash = '\0'; /* entries are ours and cleared after the flush */
        json_t *set = json_object_get(by_ns, slash + 1);
        if (!set) json_object_set_new(by_ns, slash + 1, set = json_object());
        json_object_set_new(set, g->deleted.v[i], json_true());
    }
    const char *ns;
    json_t *uids;
    json_object_foreach(by_ns, ns, uids)
    {
        gc_dep *deps = NULL;
        size_t n = atomic_load(g->stop) ? 0 : find_dependents(g->st, uids, ns, &deps);
        for (size_t i = 0; i < n && !atomic_load(g->stop); i++)
            attempt_delete(g, &deps[i]);
        deps_free(deps, n);
    }
    json_decref(by_ns);
}

/* What attempt_delete reads of a dependent. */
static const char *const DEPENDENT_PARTS[] = {"metadata.uid", "metadata.ownerReferences",
                                              "metadata.deletionTimestamp", "metadata.finalizers",
                                              NULL};

static void check_dependent(gc_ctrl *g, const char *key)
{
    gc_dep d = {api_kind_for_key(key), NULL, NULL};
    if (d.k) d.o = store_get(g->st, key);
    if (d.o) d.obj = store_obj_view_parts(d.o, DEPENDENT_PARTS);
    if (d.obj && json_array_size(owner_refs(d.obj))) attempt_delete(g, &d);
    json_decref(d.obj);
    store_obj_unref(d.o);
}

/* ---- events ---- */

/* Owners named by obj's references may be waiting for it (Foreground). */
static void recheck_owners(gc_ctrl *g, const json_t *obj, const char *ns)
{
    char key[768];
    size_t i;
    json_t *ref;
    json_array_foreach(owner_refs(obj), i, ref)
    {
        if (owner_key(ref, ns, key, sizeof key)) ctrl_set_add(&g->owners, key);
    }
}

static bool mentions(const store_obj *o, const char *s)
{
    return o && strstr(o->json, s) != NULL;
}

/* Whether two versions' owner references are the same text (then they are
 * the same references; different text, or text that cannot tell, is
 * compared parsed). */
static bool same_owner_text(const store_obj *a, const store_obj *b)
{
    jt_val va, vb;
    if (ctrl_meta_member(a, "ownerReferences", &va) != 1 ||
        ctrl_meta_member(b, "ownerReferences", &vb) != 1)
        return false;
    const char *ea = jt_skip(va), *eb = jt_skip(vb);
    return ea && eb && ea - va.p == eb - vb.p && !memcmp(va.p, vb.p, (size_t)(ea - va.p));
}

/* The events gc_event acts on: deletions, objects being deleted (their
 * owners' finalizers), and objects that have or had owner references. Most
 * writes (a pod created, bound, started, without owners) are none of these
 * and never wake the collector: read from the text, unparsed, on the
 * store's writer thread. */
static bool gc_takes(void *self, const store_event *ev)
{
    (void)self;
    return ev->type == STORE_EV_DELETED || ctrl_meta_may_have(ev->obj, "deletionTimestamp") ||
           ctrl_meta_may_have(ev->obj, "ownerReferences") ||
           ctrl_meta_may_have(ev->prev, "ownerReferences");
}

static void gc_event(void *self, const store_event *ev)
{
    gc_ctrl *g = self;
    const store_obj *o = ev->obj;
    if (ev->type == STORE_EV_DELETED) {
        json_t *obj = store_obj_parse(o);
        const api_kind *k = api_kind_for_key(o->key);
        const char *uid = meta_str(obj, "uid");
        if (k && uid) {
            char entry[768];
            snprintf(entry, sizeof entry, "%s/%s", uid, k->namespaced ? o->ns : "");
            ctrl_set_add(&g->deleted, entry);
        }
        recheck_owners(g, obj, o->ns);
        json_decref(obj);
        return;
    }
    if (ctrl_meta_may_have(o, "deletionTimestamp") &&
        (mentions(o, "\"" FINALIZER_FOREGROUND "\"") || mentions(o, "\"" FINALIZER_ORPHAN "\"")))
        ctrl_set_add(&g->owners, o->key);
    if (!ctrl_meta_may_have(o, "ownerReferences") &&
        !ctrl_meta_may_have(ev->prev, "ownerReferences"))
        return;
    if (!ev->prev) { /* new: check_dependent parses it, with its references */
        ctrl_set_add(&g->check, o->key);
        return;
    }
    if (same_owner_text(o, ev->prev)) return; /* most writes: references untouched */
    json_t *obj = store_obj_parse(o), *prev = ev->prev ? store_obj_parse(ev->prev) : NULL;
    if (!json_equal(owner_refs(obj), owner_refs(prev))) {
        if (json_array_size(owner_refs(obj))) ctrl_set_add(&g->check, o->key);
        recheck_owners(g, prev, o->ns); /* a reference removed may unblock its owner */
    }
    json_decref(obj);
    json_decref(prev);
}

static void gc_flush(void *self)
{
    gc_ctrl *g = self;
    owners_deleted(g);
    /* the owners' states are read once for the whole batch: one that changes
     * meanwhile sends an event, and the next flush looks again */
    g->owner_cache = g->check.n > 1 ? strmap_new() : NULL;
    for (size_t i = 0; i < g->check.n && !atomic_load(g->stop); i++)
        check_dependent(g, g->check.v[i]);
    owner_cache_drop(g);
    /* attempt_delete may add owners, so index, never cache, n */
    for (size_t i = 0; i < g->owners.n && !atomic_load(g->stop); i++)
        process_owner(g, g->owners.v[i]);
    ctrl_set_clear(&g->deleted);
    ctrl_set_clear(&g->check);
    ctrl_set_clear(&g->owners);
}

/* Everything: dependents with dangling owners (their owner went while we were
 * not watching) and owners mid-way through Foreground or Orphan deletion. */
static void gc_resync(void *self)
{
    gc_ctrl *g = self;
    char prefix[300];
    for (size_t i = 0; i < api_kind_count() && !atomic_load(g->stop); i++) {
        if (!api_kind_primary(api_kind_at(i))) continue;
        api_kind_store_resource(api_kind_at(i), prefix, sizeof prefix - 1);
        strcat(prefix, "/");
        store_obj **objs = NULL;
        size_t n = 0;
        int64_t rev;
        bool more;
        if (store_list(g->st, prefix, NULL, 0, &objs, &n, &rev, &more) != 0) continue;
        for (size_t j = 0; j < n; j++) {
            store_event ev = {STORE_EV_ADDED, objs[j]->rv, objs[j], NULL};
            gc_event(g, &ev);
            store_obj_unref(objs[j]);
        }
        free(objs);
    }
    gc_flush(g);
}

static void *gc_init(store *st, const atomic_bool *stop)
{
    gc_ctrl *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->st = st;
    g->stop = stop;
    return g;
}

static void gc_fini(void *self)
{
    gc_ctrl *g = self;
    ctrl_set_free(&g->deleted);
    ctrl_set_free(&g->check);
    ctrl_set_free(&g->owners);
    free(g);
}

const ctrl_def ctrl_gc_def = {"garbage-collector", gc_init, gc_fini, gc_event, gc_flush,
                              gc_resync,           NULL,    gc_takes};
