/* namespace.c - the namespace lifecycle controller, and the runner every
 * controller shares.
 *
 * A deleted namespace stays (deletionTimestamp, phase Terminating; the registry
 * refuses new content in it) until this controller has deleted everything in it,
 * through reg_delete with Background propagation so that finalizers hold objects
 * back as they would for any client. While content remains, status.conditions
 * say what and which finalizers, worded as upstream's namespace controller words
 * them. Once nothing remains, one store transaction checks again that nothing
 * remains, drops the "kubernetes" spec finalizer and removes the namespace: the
 * registry refuses creates in a terminating namespace inside its own
 * transaction, so nothing can slip in between the check and the delete.
 *
 * The runner (bottom of this file) lives here because the controllers have no
 * file of their own yet; it belongs in a controllers.c when there is one.
 */
#include "controllers/controllers.h"
#include "core/jdump.h"

#include "core/jget.h"
#include "core/strmap.h"

#include "api/objects.h"
#include "registry/registry.h"
#include "util/log.h"
#include "util/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- helpers shared by the controllers ---- */

bool ctrl_has_finalizer(const json_t *obj, const char *f)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "finalizers"), i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), f) == 0) return true;
    }
    return false;
}

typedef struct unfinalize {
    const char *uid, *finalizer;
} unfinalize;

static json_t *drop_finalizer(const json_t *cur, void *ctx, api_err *e)
{
    const unfinalize *u = ctx;
    const json_t *meta = json_object_get(cur, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    if (u->uid && (!uid || strcmp(uid, u->uid) != 0)) {
        api_err_set(e, API_CONFLICT, "object was replaced");
        return NULL;
    }
    json_t *nw = jcopy(cur);
    json_t *list = json_object_get(json_object_get(nw, "metadata"), "finalizers");
    for (size_t i = json_array_size(list); i-- > 0;) {
        const char *s = json_string_value(json_array_get(list, i));
        if (s && strcmp(s, u->finalizer) == 0) json_array_remove(list, i);
    }
    return nw;
}

int ctrl_remove_finalizer(store *st, const api_kind *k, const char *ns, const char *name,
                          const char *uid, const char *f)
{
    unfinalize u = {uid, f};
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_update(st, k, ns, name, "", drop_finalizer, &u, false, &out, &e);
    json_decref(out);
    api_err_clear(&e);
    return rc;
}

/* Whether cur is still the object a sync read (the same uid): a mutation of
 * a status refuses an object deleted and created again under its name. */
static bool same_uid(const json_t *cur, const char *uid)
{
    const char *now = jstr(cur, "metadata", "uid");
    return now && uid && strcmp(now, uid) == 0;
}

typedef struct status_write {
    const char *uid;
    const json_t *status;
} status_write;

static json_t *put_status(const json_t *cur, void *ctx, api_err *e)
{
    const status_write *w = ctx;
    if (!same_uid(cur, w->uid)) {
        api_err_set(e, API_NOT_FOUND, "replaced");
        return NULL;
    }
    /* (a shallow copy: the registry builds the stored object from it) */
    json_t *obj = json_copy((json_t *)cur);
    if (!obj || json_object_set(obj, "status", (json_t *)w->status) != 0) {
        json_decref(obj);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    return obj;
}

int ctrl_write_status(store *st, const api_kind *k, const char *ns, const char *name,
                      const char *uid, const json_t *status, json_t **out, api_err *e)
{
    status_write w = {uid, status};
    *out = NULL;
    return reg_update(st, k, ns, name, "status", put_status, &w, false, out, e) == 0 ? 0 : -1;
}

int ctrl_meta_member(const store_obj *o, const char *key, jt_val *v)
{
    jt_val m;
    int r = o ? jt_member(jt_text(o->json, o->len), "metadata", 8, &m) : 0;
    return r == 1 ? jt_member(m, key, strlen(key), v) : r;
}

int ctrl_workq_wait_ms(const workq *q, int64_t now_ms)
{
    int64_t at;
    if (workq_queued(q)) return 0;
    if (!workq_next_due(q, &at)) return -1;
    return at <= now_ms ? 0 : at - now_ms > INT32_MAX ? INT32_MAX : (int)(at - now_ms);
}

bool ctrl_meta_may_have(const store_obj *o, const char *key)
{
    jt_val v;
    return ctrl_meta_member(o, key, &v) != 0;
}

bool ctrl_may_be_owned_by(const store_obj *o, const char *kind)
{
    jt_val refs, ref, k;
    int r = ctrl_meta_member(o, "ownerReferences", &refs);
    if (r <= 0) return r < 0;
    size_t klen = strlen(kind);
    for (const char *it = NULL; (r = jt_next(refs, &it, &ref)) > 0;) {
        const char *s;
        size_t n;
        int m = jt_member(ref, "kind", 4, &k);
        if (m < 0 || (m == 1 && jt_string(k, &s, &n) != 0)) return true;
        if (m == 1 && n == klen && !memcmp(s, kind, n)) return true;
    }
    return r < 0;
}

static bool counts_only_of(const json_t *a, const json_t *b)
{
    const char *k;
    json_t *va;
    json_object_foreach((json_t *)a, k, va)
    {
        json_t *vb = json_object_get(b, k);
        if (!json_equal(va, vb) && (!json_is_integer(va) || (vb && !json_is_integer(vb))))
            return false;
    }
    return true;
}

bool ctrl_status_counts_only(const json_t *a, const json_t *b)
{
    if (a && !json_is_object(a)) return false;
    if (b && !json_is_object(b)) return false;
    return counts_only_of(a, b) && counts_only_of(b, a);
}

#define CTRL_SET_INDEX_AT 32

void ctrl_set_add(ctrl_set *s, const char *str)
{
    if (s->idx) {
        if (strmap_get(s->idx, str)) return;
    } else {
        for (size_t i = 0; i < s->n; i++)
            if (strcmp(s->v[i], str) == 0) return;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v) return; /* dropped: the periodic resync picks it up */
        s->v = v;
        s->cap = cap;
    }
    char *dup = strdup(str);
    if (!dup) return;
    s->v[s->n++] = dup;
    if (!s->idx && s->n > CTRL_SET_INDEX_AT && (s->idx = strmap_new())) {
        for (size_t i = 0; i < s->n; i++)
            if (strmap_put(s->idx, s->v[i], s->v[i], NULL) != 0) {
                strmap_free(s->idx); /* without the index: linear again */
                s->idx = NULL;
                break;
            }
    } else if (s->idx && strmap_put(s->idx, dup, dup, NULL) != 0) {
        strmap_free(s->idx);
        s->idx = NULL;
    }
}

void ctrl_set_clear(ctrl_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
    strmap_free(s->idx);
    s->idx = NULL;
}

void ctrl_set_free(ctrl_set *s)
{
    ctrl_set_clear(s);
    free(s->v);
    s->v = NULL;
    s->cap = 0;
}

int ctrl_mark_listed(store *st, const char *prefix, workq *q)
{
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_list(st, prefix, NULL, 0, &objs, &n, NULL, NULL) != 0) return -1;
    for (size_t i = 0; i < n; i++) {
        workq_mark(q, objs[i]->key);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return 0;
}

/* ---- namespace conditions (upstream namespace/deletion/status_condition_utils.go) ---- */

static const struct {
    const char *type, *ok_reason, *ok_message;
} ns_conditions[] = {
    {"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered",
     "All resources successfully discovered"},
    {"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
     "All legacy kube types successfully parsed"},
    {"NamespaceDeletionContentFailure", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"},
    {"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
    {"NamespaceFinalizersRemaining", "ContentHasNoFinalizers",
     "All content-preserving finalizers finished"},
};
#define NS_NCOND (sizeof ns_conditions / sizeof *ns_conditions)

/* What a deletion pass left behind. */
typedef struct ns_tally {
    json_t *resources;  /* {"pods.": count} (upstream prints resource.group) */
    json_t *finalizers; /* {"example.com/f": count} */
    json_t *errors;     /* [message] of deletes that failed */
} ns_tally;

static void tally_add(json_t *counts, const char *key)
{
    json_int_t n = json_integer_value(json_object_get(counts, key));
    json_object_set_new(counts, key, json_integer(n + 1));
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "<key><sep><n><suffix>" for each entry, sorted, joined with ", " (Go's
 * sort.Strings then strings.Join). Caller frees. */
static char *join_counts(const json_t *counts, const char *fmt)
{
    size_t n = json_object_size(counts), i = 0, len = 1;
    char **v = calloc(n ? n : 1, sizeof *v);
    const char *key;
    json_t *val;
    if (!v) return NULL;
    json_object_foreach((json_t *)counts, key, val)
    {
        if (asprintf(&v[i], fmt, key, (long long)json_integer_value(val)) < 0) v[i] = NULL;
        len += v[i] ? strlen(v[i]) + 2 : 0;
        i++;
    }
    qsort(v, n, sizeof *v, cmp_str);
    char *out = malloc(len);
    if (out) *out = '\0';
    for (i = 0; i < n; i++) {
        if (out && v[i]) {
            if (*out) strcat(out, ", ");
            strcat(out, v[i]);
        }
        free(v[i]);
    }
    free(v);
    return out;
}

/* The failing conditions for a tally: {type: {reason, message}}. */
static json_t *ns_failing(const ns_tally *t)
{
    json_t *f = json_object();
    size_t nerr = json_array_size(t->errors);
    if (nerr) {
        /* utilerrors.Aggregate prints one error bare, several as "[a, b]". */
        char *list = jdump(t->errors, NULL);
        char msg[2048];
        if (nerr == 1)
            snprintf(msg, sizeof msg, "Failed to delete all resource types, 1 remaining: %s",
                     json_string_value(json_array_get(t->errors, 0)));
        else
            snprintf(msg, sizeof msg, "Failed to delete all resource types, %zu remaining: %s",
                     nerr, list ? list : "");
        free(list);
        json_object_set_new(
            f, "NamespaceDeletionContentFailure",
            json_pack("{s:s, s:s}", "reason", "ContentDeletionFailed", "message", msg));
    }
    if (json_object_size(t->resources)) {
        char *s = join_counts(t->resources, "%s has %lld resource instances");
        char msg[2048];
        snprintf(msg, sizeof msg, "Some resources are remaining: %s", s ? s : "");
        free(s);
        json_object_set_new(
            f, "NamespaceContentRemaining",
            json_pack("{s:s, s:s}", "reason", "SomeResourcesRemain", "message", msg));
    }
    if (json_object_size(t->finalizers)) {
        char *s = join_counts(t->finalizers, "%s in %lld resource instances");
        char msg[2048];
        snprintf(msg, sizeof msg, "Some content in the namespace has finalizers remaining: %s",
                 s ? s : "");
        free(s);
        json_object_set_new(
            f, "NamespaceFinalizersRemaining",
            json_pack("{s:s, s:s}", "reason", "SomeFinalizersRemain", "message", msg));
    }
    return f;
}

static json_t *find_condition(json_t *conds, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0) return c;
    }
    return NULL;
}

static bool set_str(json_t *obj, const char *key, const char *val)
{
    const char *cur = json_string_value(json_object_get(obj, key));
    if (cur && strcmp(cur, val) == 0) return false;
    json_object_set_new(obj, key, json_string(val));
    return true;
}

/* upstream updateConditions: every condition type present, True when failing,
 * False with the "ok" reason otherwise; lastTransitionTime moves only when the
 * status flips. Returns whether anything changed. */
static bool ns_update_conditions(json_t *nsobj, const json_t *failing, const char *now)
{
    json_t *status = json_object_ensure(nsobj, "status");
    json_t *conds = json_object_get(status, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(status, "conditions", conds);
    }
    bool changed = false;
    for (size_t i = 0; i < NS_NCOND; i++) {
        const json_t *bad = json_object_get(failing, ns_conditions[i].type);
        const char *st = bad ? "True" : "False";
        const char *reason =
            bad ? json_string_value(json_object_get(bad, "reason")) : ns_conditions[i].ok_reason;
        const char *msg =
            bad ? json_string_value(json_object_get(bad, "message")) : ns_conditions[i].ok_message;
        json_t *c = find_condition(conds, ns_conditions[i].type);
        if (!c) {
            json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type",
                                                   ns_conditions[i].type, "status", st,
                                                   "lastTransitionTime", now, "reason", reason,
                                                   "message", msg));
            changed = true;
            continue;
        }
        if (set_str(c, "status", st)) {
            json_object_set_new(c, "lastTransitionTime", json_string(now));
            changed = true;
        }
        changed |= set_str(c, "reason", reason);
        changed |= set_str(c, "message", msg);
    }
    return changed;
}

/* ---- the controller ---- */

typedef struct ns_ctrl {
    store *st;
    const atomic_bool *stop;
    const api_kind *nskind;
    ctrl_set dirty;  /* namespaces to look at after this batch of events */
    ctrl_set retry;  /* namespaces whose content could not all be deleted */
    double retry_at; /* when retry joins dirty (monotonic s), 0: none */
} ns_ctrl;

#define NS_RETRY_SECONDS 10.0 /* a failed deletion is tried again this much later */

static bool has_deletion_timestamp(const json_t *obj)
{
    return jget(obj, "metadata", "deletionTimestamp") != NULL;
}

static const char *meta_str(const json_t *obj, const char *field)
{
    return jstr(obj, "metadata", field);
}

static void count_remaining(ns_tally *t, const api_kind *k, const json_t *obj)
{
    char res[300];
    snprintf(res, sizeof res, "%s.%s", k->resource, k->group);
    tally_add(t->resources, res);
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "finalizers"), i, f)
    {
        if (json_is_string(f)) tally_add(t->finalizers, json_string_value(f));
    }
}

/* Delete one object found in the namespace; tally it if it stays. */
static void delete_one(ns_ctrl *c, const api_kind *k, const char *ns, store_obj *o, ns_tally *t)
{
    json_t *obj = store_obj_parse(o);
    if (!obj) return;
    if (!has_deletion_timestamp(obj)) {
        reg_delete_opts opts = {
            .grace_seconds = -1, .propagation = "Background", .pre_uid = meta_str(obj, "uid")};
        json_t *out = NULL;
        bool gone = false;
        api_err e;
        api_err_init(&e);
        if (reg_delete(c->st, k, ns, o->name, &opts, &out, &gone, &e) == 0) {
            json_decref(obj);
            obj = out;
        } else if (e.code == API_NOT_FOUND || e.code == API_CONFLICT) {
            gone = true; /* deleted, or replaced, meanwhile: the next pass sees it */
        } else {
            json_array_append_new(t->errors, json_string(e.message));
        }
        api_err_clear(&e);
        if (gone) {
            json_decref(obj);
            return;
        }
    }
    count_remaining(t, k, obj);
    json_decref(obj);
}

/* Delete every namespaced object in ns; tally what stays. */
static void delete_content(ns_ctrl *c, const char *ns, ns_tally *t)
{
    char prefix[512], res[256];
    for (size_t i = 0; i < api_kind_count() && !atomic_load(c->stop); i++) {
        const api_kind *k = api_kind_at(i);
        if (!k->namespaced || !api_kind_primary(k)) continue;
        api_kind_store_resource(k, res, sizeof res);
        snprintf(prefix, sizeof prefix, "%s/%s/", res, ns);
        store_obj **objs = NULL;
        size_t n = 0;
        int64_t rev;
        bool more;
        if (store_list(c->st, prefix, NULL, 0, &objs, &n, &rev, &more) != 0) {
            json_array_append_new(t->errors, json_string("store list failed"));
            continue;
        }
        for (size_t j = 0; j < n; j++) {
            if (!atomic_load(c->stop)) delete_one(c, k, ns, objs[j], t);
            store_obj_unref(objs[j]);
        }
        free(objs);
    }
}

static bool txn_ns_empty(store_txn *t, const char *ns)
{
    char prefix[512], res[256];
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        if (!k->namespaced || !api_kind_primary(k)) continue;
        api_kind_store_resource(k, res, sizeof res);
        snprintf(prefix, sizeof prefix, "%s/%s/", res, ns);
        store_obj **objs = NULL;
        size_t n = 0;
        if (store_txn_list(t, prefix, &objs, &n) != 0) return false;
        for (size_t j = 0; j < n; j++)
            store_obj_unref(objs[j]);
        free(objs);
        if (n) return false;
    }
    return true;
}

static void drop_string(json_t *list, const char *s)
{
    for (size_t i = json_array_size(list); i-- > 0;) {
        const char *v = json_string_value(json_array_get(list, i));
        if (v && strcmp(v, s) == 0) json_array_remove(list, i);
    }
}

/* The last step, in one transaction: nothing left in ns (checked again under
 * the write lock), so drop our spec finalizer and delete the namespace unless
 * other finalizers still hold it. */
static void finalize_namespace(ns_ctrl *c, const char *ns, const char *uid)
{
    char key[512], rv[32], now[32];
    api_kind_key(c->nskind, "", ns, key, sizeof key);
    store_txn *t = store_begin(c->st);
    if (!t) return;
    json_t *cur = NULL, *failing = NULL;
    store_obj *o = store_txn_get(t, key);
    if (o) cur = store_obj_parse(o);
    store_obj_unref(o);
    const char *curuid = cur ? meta_str(cur, "uid") : NULL;
    if (!curuid || strcmp(curuid, uid) != 0 || !has_deletion_timestamp(cur) || !txn_ns_empty(t, ns))
        goto abort;
    json_t *before = jcopy(cur);
    json_t *spec_f = json_object_get(json_object_get(cur, "spec"), "finalizers");
    drop_string(spec_f, "kubernetes");
    failing = json_object();
    reg_now_rfc3339(now, sizeof now);
    ns_update_conditions(cur, failing, now);
    snprintf(rv, sizeof rv, "%lld", (long long)store_txn_rev(t));
    bool unchanged = json_equal(before, cur);
    json_decref(before);
    json_object_set_new(json_object_get(cur, "metadata"), "resourceVersion", json_string(rv));
    int rc;
    if (json_array_size(spec_f) == 0 &&
        json_array_size(json_object_get(json_object_get(cur, "metadata"), "finalizers")) == 0)
        rc = store_txn_delete(t, key, cur);
    else if (!unchanged)
        rc = store_txn_put(t, key, cur, NULL);
    else
        goto abort;
    if (rc != 0) goto abort;
    store_commit(t);
    json_decref(cur);
    json_decref(failing);
    return;
abort:
    store_abort(t);
    json_decref(cur);
    json_decref(failing);
}

typedef struct cond_ctx {
    const json_t *failing;
    const char *uid;
} cond_ctx;

static json_t *set_conditions(const json_t *cur, void *ctx, api_err *e)
{
    const cond_ctx *cc = ctx;
    if (!same_uid(cur, cc->uid)) {
        api_err_set(e, API_CONFLICT, "namespace was replaced");
        return NULL;
    }
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *nw = jcopy(cur);
    if (!nw) {
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    ns_update_conditions(nw, cc->failing, now);
    return nw;
}

static void sync_namespace(ns_ctrl *c, const char *ns)
{
    api_err e;
    api_err_init(&e);
    json_t *nsobj = reg_get(c->st, c->nskind, "", ns, &e);
    api_err_clear(&e);
    if (!nsobj || !has_deletion_timestamp(nsobj)) {
        json_decref(nsobj);
        return;
    }
    char uid[64];
    snprintf(uid, sizeof uid, "%s", meta_str(nsobj, "uid") ? meta_str(nsobj, "uid") : "");
    ns_tally t = {json_object(), json_object(), json_array()};
    delete_content(c, ns, &t);
    if (atomic_load(c->stop)) goto out;
    if (json_object_size(t.resources) == 0 && json_array_size(t.errors) == 0) {
        finalize_namespace(c, ns, uid);
        goto out;
    }
    /* Content remains: say so; its deletion events bring us back, and a
     * deletion that failed is tried again in a while. */
    if (json_array_size(t.errors)) {
        ctrl_set_add(&c->retry, ns);
        if (!c->retry_at) c->retry_at = clock_mono_s() + NS_RETRY_SECONDS;
    }
    json_t *failing = ns_failing(&t);
    json_t *probe = jcopy(nsobj);
    if (ns_update_conditions(probe, failing, "")) {
        cond_ctx cc = {failing, uid};
        json_t *out = NULL;
        api_err_init(&e);
        reg_update(c->st, c->nskind, "", ns, "status", set_conditions, &cc, false, &out, &e);
        json_decref(out);
        api_err_clear(&e);
    }
    json_decref(probe);
    json_decref(failing);
out:
    json_decref(t.resources);
    json_decref(t.finalizers);
    json_decref(t.errors);
    json_decref(nsobj);
}

static void *ns_init(store *st, const atomic_bool *stop)
{
    ns_ctrl *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->st = st;
    c->stop = stop;
    c->nskind = api_kind_find("", "v1", "namespaces");
    return c;
}

static void ns_fini(void *self)
{
    ns_ctrl *c = self;
    ctrl_set_free(&c->dirty);
    ctrl_set_free(&c->retry);
    free(c);
}

static void ns_event(void *self, const store_event *ev)
{
    ns_ctrl *c = self;
    const store_obj *o = ev->obj;
    if (strncmp(o->key, "namespaces/", 11) == 0) {
        /* any change to a terminating namespace (e.g. a finalizer removed) */
        if (ev->type != STORE_EV_DELETED && ctrl_meta_may_have(o, "deletionTimestamp"))
            ctrl_set_add(&c->dirty, o->name);
        return;
    }
    if (!*o->ns) return;
    /* Content that went away, or lost one of several finalizers, may be what
     * a terminating namespace waits for; sync checks whether it terminates. */
    if (ev->type == STORE_EV_DELETED ||
        (ev->type == STORE_EV_MODIFIED && ctrl_meta_may_have(o, "deletionTimestamp")))
        ctrl_set_add(&c->dirty, o->ns);
}

/* What ns_event looks at: namespaces, deletions, and changes to objects
 * being deleted. */
static bool ns_takes(void *self, const store_event *ev)
{
    (void)self;
    const store_obj *o = ev->obj;
    if (strncmp(o->key, "namespaces/", 11) == 0) return true;
    return *o->ns && (ev->type == STORE_EV_DELETED || (ev->type == STORE_EV_MODIFIED &&
                                                       ctrl_meta_may_have(o, "deletionTimestamp")));
}

static void ns_flush(void *self)
{
    ns_ctrl *c = self;
    for (size_t i = 0; i < c->dirty.n && !atomic_load(c->stop); i++)
        sync_namespace(c, c->dirty.v[i]);
    ctrl_set_clear(&c->dirty);
}

static void ns_tick(void *self)
{
    ns_ctrl *c = self;
    if (!c->retry.n || clock_mono_s() < c->retry_at) return;
    for (size_t i = 0; i < c->retry.n; i++)
        ctrl_set_add(&c->dirty, c->retry.v[i]);
    ctrl_set_clear(&c->retry);
    c->retry_at = 0;
    ns_flush(c);
}

static int ns_wait_ms(void *self)
{
    const ns_ctrl *c = self;
    if (!c->retry.n) return -1;
    double left = c->retry_at - clock_mono_s();
    return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

static void ns_resync(void *self)
{
    ns_ctrl *c = self;
    char prefix[300];
    api_kind_store_resource(c->nskind, prefix, sizeof prefix - 1);
    strcat(prefix, "/");
    store_obj **objs = NULL;
    size_t n = 0;
    int64_t rev;
    bool more;
    if (store_list(c->st, prefix, NULL, 0, &objs, &n, &rev, &more) != 0) return;
    for (size_t i = 0; i < n; i++) {
        if (ctrl_meta_may_have(objs[i], "deletionTimestamp"))
            ctrl_set_add(&c->dirty, objs[i]->name);
        store_obj_unref(objs[i]);
    }
    free(objs);
    ns_flush(c);
}

const ctrl_def ctrl_namespace_def = {"namespace", ns_init, ns_fini,  ns_event,  ns_flush,
                                     ns_resync,   ns_tick, ns_takes, ns_wait_ms};

/* ---- the runner ---- */

#define CTRL_BATCH 1000 /* events handled before a flush */

typedef struct ctrl_thread {
    controllers *c;
    const ctrl_def *def;
    void *self;
    pthread_t tid;
    bool running;
} ctrl_thread;

static const ctrl_def *const all_defs[] = {&ctrl_namespace_def,  &ctrl_gc_def,
                                           &ctrl_replicaset_def, &ctrl_deployment_def,
                                           &ctrl_job_def,        &ctrl_cronjob_def};
#define NCTRL (sizeof all_defs / sizeof *all_defs)

struct controllers {
    store *st;
    atomic_bool stop;
    pthread_mutex_t mu; /* with cv: bounded back-off waits that stop cuts short */
    pthread_cond_t cv;
    ctrl_thread t[NCTRL];
};

/* Wait up to CTRL_WAIT_MS (after a store error), or until stop. */
static void backoff(controllers *c)
{
    struct timespec ts = clock_deadline(CLOCK_REALTIME, CTRL_WAIT_MS);
    pthread_mutex_lock(&c->mu);
    if (!atomic_load(&c->stop)) pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    pthread_mutex_unlock(&c->mu);
}

/* Handle the event in hand and whatever else is already queued, then flush.
 * Returns the last store_watch_next result (-1: the watch is lost). */
static int run_batch(ctrl_thread *ct, store_watch *w, store_event *ev)
{
    int rc = 1;
    for (size_t n = 0; rc == 1; n++) {
        ct->def->event(ct->self, ev);
        store_obj_unref(ev->obj);
        store_obj_unref(ev->prev);
        if (n + 1 == CTRL_BATCH || atomic_load(&ct->c->stop)) break;
        rc = store_watch_next(w, ev, 0);
    }
    ct->def->flush(ct->self);
    return rc;
}

static void *ctrl_main(void *arg)
{
    ctrl_thread *ct = arg;
    controllers *c = ct->c;
    char name[16]; /* the thread shows as its controller in top -H and perf */
    snprintf(name, sizeof name, "%s", ct->def->name);
    pthread_setname_np(pthread_self(), name);
    store_watch *w = NULL;
    double next_resync = 0;
    while (!atomic_load(&c->stop)) {
        if (!w) {
            /* Watch first, then rescan: a change after the rescan read is
             * still seen as an event. */
            bool expired;
            w = ct->def->takes ? store_watch_open_filtered(c->st, "", store_revision(c->st),
                                                           ct->def->takes, ct->self, &expired)
                               : store_watch_open(c->st, "", store_revision(c->st), &expired);
            if (!w) {
                backoff(c);
                continue;
            }
            next_resync = 0;
        }
        if (clock_mono_s() >= next_resync) {
            double t0 = clock_mono_s();
            ct->def->resync(ct->self);
            next_resync = clock_mono_s() + CTRL_RESYNC_SECONDS;
            log_msg(LOG_DEBUG, "controller resync", "\"controller\":\"%s\",\"ms\":%d",
                    ct->def->name, (int)((next_resync - CTRL_RESYNC_SECONDS - t0) * 1000));
        }
        /* Sleep until an event, the tick's next work or the resync. */
        double until_resync = next_resync - clock_mono_s();
        int wait = until_resync <= 0 ? 0 : (int)(until_resync * 1000) + 1;
        if (ct->def->tick) {
            int t = ct->def->wait_ms ? ct->def->wait_ms(ct->self) : CTRL_WAIT_MS;
            if (t >= 0 && t < wait) wait = t;
        }
        store_event ev;
        int rc = store_watch_next(w, &ev, wait);
        if (rc == 1) rc = run_batch(ct, w, &ev);
        if (ct->def->tick && !atomic_load(&c->stop)) ct->def->tick(ct->self);
        if (rc < 0) { /* fell out of history or store closing: start over */
            store_watch_close(w);
            w = NULL;
            backoff(c);
        }
    }
    store_watch_close(w);
    return NULL;
}

controllers *controllers_start(store *st, char *err, size_t errlen)
{
    controllers *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->st = st;
    atomic_init(&c->stop, false);
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    for (size_t i = 0; i < NCTRL; i++) {
        ctrl_thread *ct = &c->t[i];
        ct->c = c;
        ct->def = all_defs[i];
        ct->self = ct->def->init(st, &c->stop);
        if (!ct->self) {
            snprintf(err, errlen, "%s controller: out of memory", ct->def->name);
            goto fail;
        }
        if (pthread_create(&ct->tid, NULL, ctrl_main, ct) != 0) {
            snprintf(err, errlen, "%s controller: cannot start thread", ct->def->name);
            goto fail;
        }
        ct->running = true;
    }
    return c;
fail:
    controllers_stop(c);
    return NULL;
}

void controllers_stop(controllers *c)
{
    if (!c) return;
    atomic_store(&c->stop, true);
    pthread_mutex_lock(&c->mu);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    store_watch_wake_all(c->st);
    for (size_t i = 0; i < NCTRL; i++) {
        ctrl_thread *ct = &c->t[i];
        if (ct->running) pthread_join(ct->tid, NULL);
        if (ct->self) ct->def->fini(ct->self);
    }
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}
