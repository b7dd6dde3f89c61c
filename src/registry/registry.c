/* registry.c - create/update/delete with Kubernetes semantics (see registry.h). */
#include "registry/registry.h"
#include "core/jdump.h"

#include "api/fieldmanager.h"
#include "api/objects.h"
#include "api/pod_resize.h"
#include "api/validation.h"
#include "registry/explain.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define MAX_ADMISSION 16
static const reg_admission *admission[MAX_ADMISSION];
static size_t nadmission;

int reg_admission_register(const reg_admission *a)
{
    if (nadmission == MAX_ADMISSION) return -1;
    admission[nadmission++] = a;
    return 0;
}

#define MAX_INDEXERS 8
static reg_index_fn indexers[MAX_INDEXERS];
static size_t nindexers;

int reg_index_register(reg_index_fn fn)
{
    for (size_t i = 0; i < nindexers; i++)
        if (indexers[i] == fn) return 0;
    if (nindexers == MAX_INDEXERS) return -1;
    indexers[nindexers++] = fn;
    return 0;
}

#define MAX_READ_VIEWS 16
static struct {
    const api_kind *kind;
    reg_view_fn view;
} read_views[MAX_READ_VIEWS];
static size_t nread_views;

int reg_read_view_register(const api_kind *k, reg_view_fn view)
{
    for (size_t i = 0; i < nread_views; i++)
        if (read_views[i].kind == k && read_views[i].view == view) return 0;
    if (!k || nread_views == MAX_READ_VIEWS) return -1;
    read_views[nread_views].kind = k;
    read_views[nread_views++].view = view;
    return 0;
}

#define MAX_WRITE_HOOKS 8
static struct {
    const api_kind *kind;
    reg_write_hook_fn fn;
    void *arg;
} write_hooks[MAX_WRITE_HOOKS];
static size_t nwrite_hooks;

int reg_write_hook_register(const api_kind *k, reg_write_hook_fn fn, void *arg)
{
    if (!k || !fn || nwrite_hooks == MAX_WRITE_HOOKS) return -1;
    write_hooks[nwrite_hooks].kind = k;
    write_hooks[nwrite_hooks].fn = fn;
    write_hooks[nwrite_hooks++].arg = arg;
    return 0;
}

/* Whether k's objects are completed by a write hook (and so validated after it). */
static bool has_write_hook(const api_kind *k)
{
    const api_kind *row = api_kind_storage_row(k);
    for (size_t i = 0; i < nwrite_hooks; i++)
        if (write_hooks[i].kind == row) return true;
    return false;
}

static int run_write_hooks(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                           const json_t *old, bool dry_run, api_err *e)
{
    const api_kind *row = api_kind_storage_row(k);
    for (size_t i = 0; i < nwrite_hooks; i++)
        if (write_hooks[i].kind == row &&
            write_hooks[i].fn(write_hooks[i].arg, t, op, sub, obj, old, dry_run, e) != 0)
            return -1;
    return 0;
}

#define MAX_KIND_LISTENERS 8
static void (*kind_listeners[MAX_KIND_LISTENERS])(store *st);
static size_t nkind_listeners;

int reg_kinds_listener_register(void (*changed)(store *st))
{
    for (size_t i = 0; i < nkind_listeners; i++)
        if (kind_listeners[i] == changed) return 0;
    if (nkind_listeners == MAX_KIND_LISTENERS) return -1;
    kind_listeners[nkind_listeners++] = changed;
    return 0;
}

void reg_kinds_changed(store *st)
{
    for (size_t i = 0; i < nkind_listeners; i++)
        kind_listeners[i](st);
}

/* ---- small helpers ---- */

static void random_bytes(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t got = getrandom(p, n, 0);
        if (got <= 0) abort(); /* the kernel's CSPRNG does not fail once seeded */
        p += got;
        n -= (size_t)got;
    }
}

void reg_new_uid(char out[37])
{
    unsigned char b[16];
    random_bytes(b, sizeof b);
    b[6] = (b[6] & 0x0f) | 0x40; /* version 4 */
    b[8] = (b[8] & 0x3f) | 0x80; /* RFC 4122 variant */
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

void reg_now_rfc3339(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* generateName suffix: upstream's alphabet without vowels and confusables. */
static void random_suffix(char out[6])
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    unsigned char b[5];
    random_bytes(b, sizeof b);
    for (int i = 0; i < 5; i++)
        out[i] = alphabet[b[i] % (sizeof alphabet - 1)];
    out[5] = '\0';
}

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static void set_rv(json_t *obj, int64_t rv)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)rv);
    json_object_set_new(json_object_ensure(obj, "metadata"), "resourceVersion", json_string(buf));
}

void reg_indexer(const char *key, const json_t *obj, store_index *out)
{
    json_t *labels = json_object_get(json_object_get(obj, "metadata"), "labels");
    out->labels = json_is_object(labels) ? json_incref(labels) : NULL;
    const api_kind *k = api_kind_for_key(key);
    out->fields = k ? api_kind_fields_packed(k, obj) : NULL;
    for (size_t i = 0; k && i < nindexers; i++)
        indexers[i](k, obj, out);
}

static store_obj *txn_get_obj(store_txn *t, const api_kind *k, const char *ns, const char *name)
{
    char key[768];
    if (api_kind_key(k, ns, name, key, sizeof key) < 0) return NULL;
    return store_txn_get(t, key);
}

/* What etcd answers an object over its request limit; upstream passes it on
 * as a 500, allot as the 413 it is (docs/decisions.md). */
#define MSG_TOO_LARGE "etcdserver: request is too large"

/* Write obj at its key in t; *stored (when given and k serves what it
 * stores) gets the version written, whose text is obj's serialisation. An
 * object over the store's size limit is a 413; with shed_mf it is first
 * written again without metadata.managedFields, as upstream's create,
 * update and patch handlers do when storage finds the object too large
 * (not an apply's: the apply's record of what it owns is the point of it). */
static int put_obj(store_txn *t, const api_kind *k, const char *ns, const char *name, json_t *obj,
                   bool shed_mf, store_obj **stored, api_err *e)
{
    char key[768];
    set_rv(obj, store_txn_rev(t));
    if (api_kind_key(k, ns, name, key, sizeof key) < 0)
        return api_err_set(e, API_INTERNAL, "store write failed");
    int rc = store_txn_put(t, key, obj, NULL);
    json_t *meta = rc == STORE_TOO_LARGE && shed_mf ? json_object_get(obj, "metadata") : NULL;
    if (json_object_get(meta, "managedFields")) {
        json_object_del(meta, "managedFields");
        rc = store_txn_put(t, key, obj, NULL);
    }
    if (rc == STORE_TOO_LARGE) return api_err_set(e, API_TOO_LARGE, MSG_TOO_LARGE);
    if (rc != 0) return api_err_set(e, API_INTERNAL, "store write failed");
    if (stored && !(k->flags & API_KIND_CONVERTS)) *stored = store_txn_get(t, key);
    return 0;
}

static int commit(store_txn *t, api_err *e)
{
    if (store_commit(t) != 0) return api_err_set(e, API_INTERNAL, "store commit failed");
    return 0;
}

/* ---- namespace lifecycle (upstream NamespaceLifecycle admission) ---- */

static bool is_terminating(const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    if (json_object_get(meta, "deletionTimestamp")) return true;
    const char *phase = json_string_value(json_object_get(json_object_get(obj, "status"), "phase"));
    return phase && strcmp(phase, "Terminating") == 0;
}

static int namespace_admit(store_txn *t, const api_kind *k, const char *ns, const char *name,
                           api_err *e)
{
    char key[512];
    snprintf(key, sizeof key, "namespaces//%s", ns);
    store_obj *o = store_txn_get(t, key);
    if (!o) return api_err_not_found(e, "", "namespaces", ns);
    json_t *nsobj = store_obj_doc(o);
    store_obj_unref(o);
    bool terminating = nsobj && is_terminating(nsobj);
    json_decref(nsobj);
    if (!terminating) return 0;
    api_err_set(e, API_FORBIDDEN,
                "%s \"%s\" is forbidden: unable to create new content in namespace %s because it "
                "is being terminated",
                k->resource, name, ns);
    api_err_details(e, name, k->group, k->resource);
    json_object_set_new(e->details, "causes",
                        json_pack("[{s:s, s:s, s:s}]", "reason", "NamespaceTerminating", "message",
                                  "namespace is being terminated", "field", "metadata.namespace"));
    /* upstream's cause message names the namespace */
    char msg[300];
    snprintf(msg, sizeof msg, "namespace %s is being terminated", ns);
    json_object_set_new(json_array_get(json_object_get(e->details, "causes"), 0), "message",
                        json_string(msg));
    return -1;
}

/* Decisions: allowed (one count per write), denied per plugin and reason
 * (API_INTERNAL and the like included: a plugin that failed refused). */
static _Atomic unsigned long allowed;
static _Atomic unsigned long denied[MAX_ADMISSION][API_NCODES];

/* Plugins in order; the first denial decides. An explanation (explain.h)
 * runs the plugins after a denial too, so that each describes what applies;
 * their own errors are dropped (the write fails with the first). */
static int run_admission(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                         const json_t *old, bool dry_run, api_err *e)
{
    bool explaining = reg_explain_current() != NULL;
    for (size_t i = 0; i < nadmission; i++) {
        if (admission[i]->admit(t, k, op, sub, obj, old, dry_run, e) == 0) continue;
        int c = (int)e->code < API_NCODES ? (int)e->code : (int)API_INTERNAL;
        atomic_fetch_add_explicit(&denied[i][c], 1, memory_order_relaxed);
        for (size_t j = i + 1; explaining && j < nadmission; j++) {
            api_err ignored;
            api_err_init(&ignored);
            admission[j]->admit(t, k, op, sub, obj, old, dry_run, &ignored);
            api_err_clear(&ignored);
        }
        return -1;
    }
    atomic_fetch_add_explicit(&allowed, 1, memory_order_relaxed);
    return 0;
}

void reg_admission_decisions(reg_decision_fn fn, void *arg)
{
    fn(arg, "", "allowed", "", atomic_load_explicit(&allowed, memory_order_relaxed));
    for (size_t i = 0; i < nadmission; i++)
        for (int c = API_OK + 1; c < API_NCODES; c++) {
            unsigned long n = atomic_load_explicit(&denied[i][c], memory_order_relaxed);
            if (n) fn(arg, admission[i]->name, "denied", api_errcode_reason((api_errcode)c), n);
        }
}

/* ---- validation ---- */

static int validate(const api_kind *k, const json_t *obj, const json_t *old, const char *sub,
                    api_err *e)
{
    json_t *causes = json_array();
    const json_t *meta = json_object_get(obj, "metadata");
    val_object_meta(meta, k->namespaced, api_kind_name_rule(k), causes);
    if (old) val_object_meta_update(meta, json_object_get(old, "metadata"), causes);
    api_kind_validate(k, obj, old, causes);
    if (old && k->validate_update) k->validate_update(obj, old, sub, causes);
    if (json_array_size(causes) == 0) {
        json_decref(causes);
        return 0;
    }
    return api_err_invalid(e, k->group, k->kind, meta_str(obj, "name"), causes);
}

/* Kinds whose status is owned by the server and reset on create. */
static bool status_reset_on_create(const api_kind *k)
{
    return (k->subresources & API_SUB_STATUS) && !(k->flags & API_KIND_STATUS_ON_CREATE);
}

static bool tracks_generation(const api_kind *k)
{
    return ((k->subresources & API_SUB_STATUS) && !(k->flags & API_KIND_NO_GENERATION)) ||
           (k->flags & API_KIND_GENERATION_ALL);
}

static bool same_members(const json_t *a, const json_t *b, const char *skip);

/* Whether an update moves metadata.generation: a spec change, or for kinds
 * counting every change (custom resources), any change outside metadata. */
static bool generation_moves(const api_kind *k, const json_t *cur, const json_t *nw)
{
    if (k->flags & API_KIND_GENERATION_ALL) return !same_members(cur, nw, "metadata");
    return !json_equal(json_object_get(cur, "spec"), json_object_get(nw, "spec"));
}

/* A create of a kind defined at run time: the row the request resolved may
 * have been retired or marked terminating since (its definition deleted).
 * Checked inside the write's transaction, so a definition's cleanup, which
 * lists the objects left after it marked the kind terminating, sees every
 * create that got past this check. */
static int kind_accepts_creates(const api_kind *k, api_err *e)
{
    if (!(k->flags & API_KIND_RUNTIME)) return 0;
    const api_kind *cur = api_kind_current(k);
    if (!cur)
        return api_err_set(e, API_NOT_FOUND, "the server could not find the requested resource");
    if (!(cur->flags & API_KIND_TERMINATING) && !(k->flags & API_KIND_TERMINATING)) return 0;
    api_err_set(e, API_METHOD_NOT_ALLOWED,
                "create not allowed while custom resource definition is terminating");
    api_err_details(e, "", k->group, k->resource);
    return -1;
}

/* ---- create ---- */

static int prepare_create(const api_kind *k, const char *ns, json_t *obj, api_err *e)
{
    json_t *meta = json_object_ensure(obj, "metadata");
    const char *objns = json_string_value(json_object_get(meta, "namespace"));
    if (k->namespaced) {
        if (objns && *objns && strcmp(objns, ns) != 0)
            return api_err_set(e, API_BAD_REQUEST,
                               "the namespace of the provided object does not match the namespace "
                               "sent on the request");
        json_object_set_new(meta, "namespace", json_string(ns));
    } else {
        json_object_del(meta, "namespace");
    }
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    if (rv && *rv)
        return api_err_set(e, API_BAD_REQUEST,
                           "resourceVersion should not be set on objects to be created");
    char uid[37], ts[32];
    reg_new_uid(uid);
    reg_now_rfc3339(ts, sizeof ts);
    json_object_set_new(meta, "uid", json_string(uid));
    json_object_set_new(meta, "creationTimestamp", json_string(ts));
    json_object_del(meta, "deletionTimestamp");
    json_object_del(meta, "deletionGracePeriodSeconds");
    json_object_del(meta, "resourceVersion");
    json_object_del(meta, "selfLink");
    if (tracks_generation(k)) json_object_set_new(meta, "generation", json_integer(1));
    if (status_reset_on_create(k)) json_object_del(obj, "status");
    api_kind_defaults(k, obj);
    return 0;
}

const reg_writer REG_WRITER_ALLOTD = {"allotd", false, NULL};

/* managedFields of a write that is not an apply (api/fieldmanager.h); cur
 * NULL for a create. A pods/binding write is not recorded, as upstream's
 * binding storage writes around its field manager. */
static void track(const api_kind *k, const char *sub, const reg_writer *w, const json_t *cur,
                  json_t *nw)
{
    if (w->apply || !strcmp(sub, "binding")) return;
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    fm_write fw = {k, sub, w->manager ? w->manager : "", now};
    fm_update(&fw, cur, nw);
}

/* The part of a create that needs no lock: server fields, defaults, a name
 * for generateName, managedFields, validation. */
static int create_prepare(const api_kind *k, const char *ns, const reg_writer *w, json_t *obj,
                          bool *generated, api_err *e)
{
    if (prepare_create(k, ns, obj, e) != 0) return -1;
    json_t *meta = json_object_get(obj, "metadata");
    const char *gen = json_string_value(json_object_get(meta, "generateName"));
    *generated = !meta_str(obj, "name") && gen && *gen;
    if (*generated) { /* a placeholder so validation sees a name of the final length */
        char name[512], sfx[6];
        random_suffix(sfx);
        snprintf(name, sizeof name, "%s%s", gen, sfx);
        json_object_set_new(meta, "name", json_string(name));
    }
    track(k, "", w, NULL, obj);
    return has_write_hook(k) ? 0 : validate(k, obj, NULL, "", e); /* else in create_locked */
}

/* The part in the writer lock: namespace lifecycle, existence, admission
 * and the write; t is committed (aborted for a dry run) on success, left to
 * the caller to abort on failure. */
static int create_locked(store_txn *t, const api_kind *k, const char *ns, json_t *obj, bool shed_mf,
                         bool generated, bool dry_run, store_obj **stored, api_err *e)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *gen = json_string_value(json_object_get(meta, "generateName"));
    if (kind_accepts_creates(k, e) != 0) return -1;
    if (k->namespaced && namespace_admit(t, k, ns, meta_str(obj, "name"), e) != 0) return -1;
    for (int tries = 0;; tries++) {
        store_obj *existing = txn_get_obj(t, k, ns, meta_str(obj, "name"));
        if (!existing) break;
        store_obj_unref(existing);
        if (!generated || tries == 8)
            return api_err_already_exists(e, k->group, k->resource, meta_str(obj, "name"));
        char name[512], sfx[6];
        random_suffix(sfx);
        snprintf(name, sizeof name, "%s%s", gen, sfx);
        json_object_set_new(meta, "name", json_string(name));
    }
    if (has_write_hook(k) && (run_write_hooks(t, k, REG_CREATE, "", obj, NULL, dry_run, e) != 0 ||
                              validate(k, obj, NULL, "", e) != 0))
        return -1;
    /* admission sees the object as stored (api_kind_storage_row) */
    api_kind_to_storage(k, obj);
    if (run_admission(t, api_kind_storage_row(k), REG_CREATE, "", obj, NULL, dry_run, e) != 0)
        return -1;
    if (dry_run) {
        store_abort(t);
        api_kind_to_version(k, obj);
        return 0;
    }
    char name[512];
    snprintf(name, sizeof name, "%s", meta_str(obj, "name"));
    if (put_obj(t, k, ns, name, obj, shed_mf, stored, e) != 0) return -1;
    if (commit(t, e) != 0) return 1; /* t is gone, the write failed */
    api_kind_to_version(k, obj);
    return 0;
}

/* create_locked, then *out = obj (0), or obj freed and t ended (-1). */
static int create_in(store_txn *t, const api_kind *k, const char *ns, json_t *obj, bool shed_mf,
                     bool generated, bool dry_run, store_obj **stored, json_t **out, api_err *e)
{
    store_obj *o = NULL;
    int rc = create_locked(t, k, ns, obj, shed_mf, generated, dry_run, stored ? &o : NULL, e);
    if (rc == 0) {
        *out = obj;
        if (stored) *stored = o;
        return 0;
    }
    store_obj_unref(o);
    if (rc < 0) store_abort(t);
    json_decref(obj);
    return -1;
}

int reg_create_as(store *st, const api_kind *k, const char *ns, const json_t *in,
                  const reg_writer *w, bool dry_run, json_t **out, api_err *e)
{
    json_t *obj = jcopy(in);
    store_txn *t = NULL;
    bool generated;
    if (!obj) return api_err_set(e, API_INTERNAL, "out of memory");
    if (create_prepare(k, ns, w, obj, &generated, e) != 0) goto fail;
    t = store_begin(st);
    if (!t) {
        api_err_set(e, API_INTERNAL, "out of memory");
        goto fail;
    }
    return create_in(t, k, ns, obj, !w->apply, generated, dry_run, w->stored, out, e);
fail:
    store_abort(t);
    json_decref(obj);
    return -1;
}

int reg_create(store *st, const api_kind *k, const char *ns, const json_t *in, bool dry_run,
               json_t **out, api_err *e)
{
    return reg_create_as(st, k, ns, in, &REG_WRITER_ALLOTD, dry_run, out, e);
}

/* ---- update ---- */

static const char *const immutable_meta[] = {
    "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
    NULL};

/* The main resource (and subresources other than status and resize): the
 * object as sent, but for what the server owns. */
static int prepare_main(const api_kind *k, const char *ns, const char *name, const char *sub,
                        const json_t *cur, json_t *nw, api_err *e)
{
    json_t *meta = json_object_ensure(nw, "metadata");
    json_object_set_new(meta, "name", json_string(name));
    if (k->namespaced)
        json_object_set_new(meta, "namespace", json_string(ns));
    else
        json_object_del(meta, "namespace");
    const json_t *curmeta = json_object_get(cur, "metadata");
    for (const char *const *f = immutable_meta; *f; f++) {
        json_t *v = json_object_get(curmeta, *f); /* scalars: shared read-only */
        if (v)
            json_object_set(meta, *f, v);
        else
            json_object_del(meta, *f);
    }
    if ((k->subresources & API_SUB_STATUS) && !*sub) { /* main resource: status is not ours */
        /* A copy of the one level the kind's defaults write (members of
         * status: a pod's qosClass when absent): sharing cur's status, they
         * would change cur too, the stored pod admission compares against,
         * and quota would see no scope move. Nested values stay shared, read
         * only. */
        json_t *status = json_object_get(cur, "status");
        if (!status)
            json_object_del(nw, "status");
        else if (json_object_set_new(nw, "status", json_copy(status)) != 0)
            return api_err_set(e, API_INTERNAL, "out of memory");
    }
    if (tracks_generation(k) && generation_moves(k, cur, nw)) {
        json_int_t g = json_integer_value(json_object_get(curmeta, "generation"));
        json_object_set_new(meta, "generation", json_integer(g + 1));
    }
    return 0;
}

static int prepare_update(const api_kind *k, const char *ns, const char *name, const char *sub,
                          const reg_writer *w, const json_t *cur, json_t **pnew, api_err *e)
{
    json_t *nw = *pnew;
    json_t *meta = json_object_ensure(nw, "metadata");
    const char *nname = json_string_value(json_object_get(meta, "name"));
    if (nname && strcmp(nname, name) != 0)
        return api_err_set(e, API_BAD_REQUEST,
                           "the name of the object (%s) does not match the name on the URL (%s)",
                           nname, name);
    const char *nns = json_string_value(json_object_get(meta, "namespace"));
    if (k->namespaced && nns && *nns && strcmp(nns, ns) != 0)
        return api_err_set(e, API_BAD_REQUEST,
                           "the namespace of the provided object does not match the namespace "
                           "sent on the request");
    const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
    const char *currv = meta_str(cur, "resourceVersion");
    if (rv && *rv && (!currv || strcmp(rv, currv) != 0))
        return api_err_conflict(e, k->group, k->resource, name,
                                "the object has been modified; please apply your changes to the "
                                "latest version and try again");
    /* Unconditional update: the request applies to the stored version. */
    if ((!rv || !*rv) && currv) json_object_set_new(meta, "resourceVersion", json_string(currv));

    if (strcmp(sub, "resize") == 0) { /* container resources only (api/pod_resize.h) */
        json_t *resized = pod_resize_apply(cur, nw, e);
        if (!resized) return -1;
        json_decref(nw);
        *pnew = nw = resized;
    } else if (strcmp(sub, "status") == 0) {
        /* The status subresource changes status only. */
        json_t *merged = jcopy(cur);
        if (!merged) return api_err_set(e, API_INTERNAL, "out of memory");
        json_t *status = json_object_get(nw, "status");
        if (status)
            json_object_set(merged, "status", status);
        else
            json_object_del(merged, "status");
        json_t *mf = json_object_get(json_object_get(nw, "metadata"), "managedFields");
        if (w->apply && mf) /* what the apply recorded (other writes are tracked below) */
            json_object_set(json_object_ensure(merged, "metadata"), "managedFields", mf);
        json_decref(nw);
        *pnew = nw = merged;
    } else if (prepare_main(k, ns, name, sub, cur, nw, e) != 0) {
        return -1;
    }
    /* Upstream defaults every decoded body, a subresource's too, before its
     * strategy merges it with the stored object; here the merged object is
     * defaulted, on every path: a resized limit fills its missing request, a
     * status write that leaves out what the kind fills when absent (a pod's
     * qosClass) gets it again. Defaulting a stored part adds nothing (it was
     * defaulted when written), and nothing the defaults write is cur's. */
    api_kind_defaults(k, nw);
    return 0;
}

static bool finalizers_empty(const json_t *obj)
{
    return json_array_size(json_object_get(json_object_get(obj, "metadata"), "finalizers")) == 0;
}

/* Members of a and b equal, but for `skip` (NULL: none). */
static bool same_members(const json_t *a, const json_t *b, const char *skip)
{
    size_t na = json_object_size(a), nb = json_object_size(b);
    if (skip) {
        na -= json_object_get(a, skip) != NULL;
        nb -= json_object_get(b, skip) != NULL;
    }
    if (na != nb) return false;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        if (skip && !strcmp(k, skip)) continue;
        const json_t *w = json_object_get(b, k);
        if (!w || !json_equal(v, w)) return false;
    }
    return true;
}

/* Equal but for resourceVersion: an update that changes nothing is not written.
 * Compared in place: this runs inside the writer lock, on every update. */
static bool same_object(const json_t *a, const json_t *b)
{
    if (!json_is_object(a) || !json_is_object(b)) return json_equal(a, b);
    const json_t *ma = json_object_get(a, "metadata"), *mb = json_object_get(b, "metadata");
    if (json_is_object(ma) && json_is_object(mb)) {
        if (!same_members(ma, mb, "resourceVersion")) return false;
    } else if (!json_equal(ma, mb)) {
        return false;
    }
    return same_members(a, b, "metadata") &&
           (json_object_get(a, "metadata") != NULL) == (json_object_get(b, "metadata") != NULL);
}

/* Upstream's ShouldDeleteDuringUpdate: an update that removes the last
 * finalizer of an object being deleted deletes it. An update of an object that
 * had no finalizers (a pod in graceful deletion getting a status) does not. */
static bool deletes_during_update(const api_kind *k, const json_t *cur, const json_t *nw)
{
    return json_object_get(json_object_get(nw, "metadata"), "deletionTimestamp") &&
           json_object_get(json_object_get(cur, "metadata"), "deletionTimestamp") &&
           finalizers_empty(nw) && !finalizers_empty(cur) && !(k->flags & API_KIND_NAMESPACE);
}

static int delete_now(store_txn *t, const api_kind *k, const char *ns, const char *name,
                      json_t *last, api_err *e)
{
    char key[768];
    set_rv(last, store_txn_rev(t));
    if (api_kind_key(k, ns, name, key, sizeof key) < 0 || store_txn_delete(t, key, last) != 0)
        return api_err_set(e, API_INTERNAL, "store delete failed");
    return 0;
}

/* The part of an update that depends only on the stored object: parse it,
 * mutate it, default it, record its managedFields, validate the result. 0
 * with *cur and *nw set. */
static int prepare_from(const store_obj *o, const api_kind *k, const char *ns, const char *name,
                        const char *sub, reg_mutate_fn fn, void *ctx, const reg_writer *w,
                        json_t **cur, json_t **nw, api_err *e)
{
    *nw = NULL;
    json_t *doc = store_obj_doc_cached(o); /* (a copy of a parse is cheaper than a parse) */
    *cur = doc ? jcopy(doc) : store_obj_parse(o);
    json_decref(doc);
    if (!*cur) return api_err_set(e, API_INTERNAL, "stored object is corrupt");
    api_kind_to_version(k, *cur); /* the mutation sees the object in the request's version */
    if (!(*nw = fn(*cur, ctx, e))) return -1;
    if (prepare_update(k, ns, name, sub, w, *cur, nw, e) != 0) return -1;
    track(k, sub, w, *cur, *nw);
    return has_write_hook(k) ? 0 : validate(k, *nw, *cur, sub, e); /* else after the hook */
}

/* An apply to an absent object creates it (upstream's patcher with
 * forceAllowCreate): the mutation's object, named by the URL, as a create
 * in this transaction. t is committed or aborted. */
static int apply_create(store_txn *t, const api_kind *k, const char *ns, const char *name,
                        reg_mutate_fn fn, void *ctx, const reg_writer *w, bool dry_run,
                        json_t **out, api_err *e)
{
    bool generated;
    json_t *obj = fn(NULL, ctx, e);
    if (!obj) goto fail;
    json_t *meta = json_object_ensure(obj, "metadata");
    const char *oname = json_string_value(json_object_get(meta, "name"));
    if (oname && strcmp(oname, name) != 0) {
        api_err_set(e, API_BAD_REQUEST,
                    "the name of the object (%s) does not match the name on the URL (%s)", oname,
                    name);
        goto fail;
    }
    json_object_set_new(meta, "name", json_string(name));
    json_object_del(meta, "generateName");
    if (create_prepare(k, ns, w, obj, &generated, e) != 0) goto fail;
    return create_in(t, k, ns, obj, !w->apply, false, dry_run, w->stored, out, e);
fail:
    store_abort(t);
    json_decref(obj);
    return -1;
}

int reg_update(store *st, const api_kind *k, const char *ns, const char *name, const char *sub,
               reg_mutate_fn fn, void *ctx, bool dry_run, json_t **out, api_err *e)
{
    return reg_update_as(st, k, ns, name, sub, fn, ctx, &REG_WRITER_ALLOTD, dry_run, out, NULL, e);
}

int reg_update_as(store *st, const api_kind *k, const char *ns, const char *name, const char *sub,
                  reg_mutate_fn fn, void *ctx, const reg_writer *w, bool dry_run, json_t **out,
                  bool *created, api_err *e)
{
    json_t *cur = NULL, *nw = NULL;
    sub = sub ? sub : "";
    if (created) *created = false;
    /* Optimistically, prepare the update before taking the writer lock, on
     * the version stored now: every writer waits for that lock, so work moved
     * out of it is throughput. If that version is still the stored one inside
     * the lock, only admission and the write remain; if it changed, or the
     * preparation failed, it is all done again inside the lock, so results and
     * errors are exactly those of a locked update (the mutations are pure). */
    char key[768];
    store_obj *seen = api_kind_key(k, ns, name, key, sizeof key) < 0 ? NULL : store_get(st, key);
    if (seen) {
        api_err pe;
        api_err_init(&pe);
        if (prepare_from(seen, k, ns, name, sub, fn, ctx, w, &cur, &nw, &pe) != 0) {
            json_decref(cur);
            json_decref(nw);
            cur = nw = NULL;
        }
        api_err_clear(&pe);
    }
    store_txn *t = store_begin(st);
    if (!t) {
        store_obj_unref(seen);
        json_decref(cur);
        json_decref(nw);
        return api_err_set(e, API_INTERNAL, "out of memory");
    }
    store_obj *o = txn_get_obj(t, k, ns, name);
    if (!o || o != seen || !nw) {
        json_decref(cur);
        json_decref(nw);
        cur = nw = NULL;
    }
    store_obj_unref(seen);
    if (!o && w->apply && !*sub) {
        if (apply_create(t, k, ns, name, fn, ctx, w, dry_run, out, e) != 0) return -1;
        if (created) *created = true;
        return 0;
    }
    if (!o) {
        api_err_not_found(e, k->group, k->resource, name);
        goto fail;
    }
    int prc = nw ? 0 : prepare_from(o, k, ns, name, sub, fn, ctx, w, &cur, &nw, e);
    store_obj_unref(o);
    if (prc != 0) goto fail;
    if (has_write_hook(k) && (run_write_hooks(t, k, REG_UPDATE, sub, nw, cur, dry_run, e) != 0 ||
                              validate(k, nw, cur, sub, e) != 0))
        goto fail;
    /* admission sees both versions as stored (api_kind_storage_row) */
    const api_kind *ak = api_kind_storage_row(k);
    api_kind_to_storage(k, cur);
    api_kind_to_storage(k, nw);
    if (run_admission(t, ak, REG_UPDATE, sub ? sub : "", nw, cur, dry_run, e) != 0) goto fail;
    if (dry_run || same_object(cur, nw)) {
        store_abort(t);
        json_decref(cur);
        api_kind_to_version(k, nw);
        *out = nw;
        return 0;
    }
    int rc;
    if (deletes_during_update(k, cur, nw)) {
        /* The last finalizer is gone: the object goes, and what it charged
         * to quota goes with it (admission so far saw an update). */
        rc = run_write_hooks(t, k, REG_DELETE, "", nw, NULL, false, e);
        if (rc == 0) rc = run_admission(t, ak, REG_DELETE, "", nw, nw, false, e);
        if (rc == 0) rc = delete_now(t, k, ns, name, nw, e);
    } else {
        rc = put_obj(t, k, ns, name, nw, !w->apply, w->stored, e);
    }
    if (rc != 0) goto fail;
    json_decref(cur);
    if (commit(t, e) != 0) {
        json_decref(nw);
        if (w->stored) {
            store_obj_unref(*w->stored);
            *w->stored = NULL;
        }
        return -1;
    }
    api_kind_to_version(k, nw);
    *out = nw;
    return 0;
fail:
    store_abort(t);
    json_decref(cur);
    json_decref(nw);
    return -1;
}

/* ---- delete ---- */

static void add_finalizer(json_t *meta, const char *f)
{
    json_t *list = json_object_get(meta, "finalizers");
    if (!json_is_array(list)) {
        list = json_array();
        json_object_set_new(meta, "finalizers", list);
    }
    size_t i;
    json_t *v;
    json_array_foreach(list, i,
                       v) if (json_is_string(v) && !strcmp(json_string_value(v), f)) return;
    json_array_append_new(list, json_string(f));
}

static int check_preconditions(const api_kind *k, const char *name, const json_t *cur,
                               const reg_delete_opts *o, api_err *e)
{
    char why[512];
    const char *uid = meta_str(cur, "uid"), *rv = meta_str(cur, "resourceVersion");
    if (o->pre_uid && (!uid || strcmp(o->pre_uid, uid) != 0)) {
        snprintf(why, sizeof why,
                 "Precondition failed: UID in precondition: %s, UID in object meta: %s", o->pre_uid,
                 uid ? uid : "");
        return api_err_conflict(e, k->group, k->resource, name, why);
    }
    if (o->pre_rv && (!rv || strcmp(o->pre_rv, rv) != 0)) {
        snprintf(why, sizeof why,
                 "Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in "
                 "object meta: %s",
                 o->pre_rv, rv ? rv : "");
        return api_err_conflict(e, k->group, k->resource, name, why);
    }
    return 0;
}

static _Thread_local bool verdict_only;

void reg_set_verdict_only(bool on)
{
    verdict_only = on;
}

bool reg_verdict_only(void)
{
    return verdict_only;
}

static bool graceful_pods;

void reg_set_graceful_pod_deletion(bool on)
{
    graceful_pods = on;
}

/* A running pod on a node is stopped by the node before it goes (upstream's
 * graceful deletion); an unscheduled or finished pod goes at once. */
static bool deletes_gracefully(const api_kind *k, const json_t *pod, const reg_delete_opts *o)
{
    if (!graceful_pods || !(k->flags & API_KIND_GRACEFUL) || o->grace_seconds == 0) return false;
    const json_t *spec = json_object_get(pod, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *phase = json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
    if (!node || !*node) return false;
    return !phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"));
}

static bool is_system_namespace(const char *name)
{
    return !strcmp(name, "default") || !strcmp(name, "kube-system") || !strcmp(name, "kube-public");
}

/* Admission of `marked` (the object with deletionTimestamp set) as an update
 * of its stored version. */
static int admit_marking(store_txn *t, const api_kind *k, const char *ns, const char *name,
                         json_t *marked, bool dry_run, api_err *e)
{
    store_obj *so = txn_get_obj(t, k, ns, name);
    json_t *old = so ? store_obj_parse(so) : NULL;
    if (so) store_obj_unref(so);
    if (!old) return api_err_set(e, API_INTERNAL, "stored object is corrupt");
    int rc = run_admission(t, k, REG_UPDATE, "", marked, old, dry_run, e);
    json_decref(old);
    return rc;
}

int reg_delete(store *st, const api_kind *k, const char *ns, const char *name,
               const reg_delete_opts *o, json_t **out, bool *gone, api_err *e)
{
    json_t *cur = NULL;
    store_txn *t = store_begin(st);
    if (!t) return api_err_set(e, API_INTERNAL, "out of memory");
    store_obj *so = txn_get_obj(t, k, ns, name);
    if (!so) {
        api_err_not_found(e, k->group, k->resource, name);
        goto fail;
    }
    cur = store_obj_parse(so);
    store_obj_unref(so);
    if (!cur) {
        api_err_set(e, API_INTERNAL, "stored object is corrupt");
        goto fail;
    }
    if (check_preconditions(k, name, cur, o, e) != 0) goto fail;
    json_t *meta = json_object_ensure(cur, "metadata");
    bool is_ns = k->flags & API_KIND_NAMESPACE;
    if (is_ns && is_system_namespace(name)) {
        api_err_set(e, API_FORBIDDEN,
                    "namespaces \"%s\" is forbidden: this namespace may not be deleted", name);
        api_err_details(e, name, "", "namespaces");
        goto fail;
    }
    bool marking = json_object_get(meta, "deletionTimestamp") == NULL;
    if (marking && k->on_delete) {
        char now[32];
        reg_now_rfc3339(now, sizeof now);
        k->on_delete(cur, now);
        meta = json_object_ensure(cur, "metadata");
    }
    if (o->propagation && marking) {
        if (!strcmp(o->propagation, "Orphan")) add_finalizer(meta, "orphan");
        if (!strcmp(o->propagation, "Foreground")) add_finalizer(meta, "foregroundDeletion");
    }
    bool graceful = deletes_gracefully(k, cur, o);
    *gone = !is_ns && !graceful && finalizers_empty(cur);
    if (!*gone) {
        /* Finalizers pending (or a namespace, which its controller empties first). */
        if (marking) {
            char ts[32];
            reg_now_rfc3339(ts, sizeof ts);
            json_object_set_new(meta, "deletionTimestamp", json_string(ts));
            long long grace = 0;
            if (graceful) {
                json_t *tgp =
                    json_object_get(json_object_get(cur, "spec"), "terminationGracePeriodSeconds");
                grace = o->grace_seconds > 0
                            ? o->grace_seconds
                            : (json_is_integer(tgp) ? json_integer_value(tgp) : 30);
            }
            json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(grace));
            if (is_ns)
                json_object_set_new(json_object_ensure(cur, "status"), "phase",
                                    json_string("Terminating"));
        }
        /* A namespace marked for deletion turns Terminating: admission sees
         * that change as the update it is (a namespace's pools let it go);
         * a dry run is admitted too, as upstream admits one. */
        if (marking && is_ns &&
            admit_marking(t, api_kind_storage_row(k), ns, name, cur, o->dry_run, e) != 0)
            goto fail;
        if (o->dry_run || !marking) {
            store_abort(t);
            api_kind_to_version(k, cur);
            *out = cur;
            return 0;
        }
        /* (a mark for deletion sheds managedFields too: upstream answers
         * 500 there, and an object must stay deletable) */
        if (put_obj(t, k, ns, name, cur, true, NULL, e) != 0) goto fail;
    } else {
        /* A dry run is admitted as the delete would be (upstream runs
         * validating admission before it skips the write): deleting a
         * claim in use is refused either way. Whatever admission staged
         * goes with the aborted transaction. */
        if (run_write_hooks(t, k, REG_DELETE, "", cur, NULL, o->dry_run, e) != 0 ||
            run_admission(t, api_kind_storage_row(k), REG_DELETE, "", cur, cur, o->dry_run, e) != 0)
            goto fail;
        if (o->dry_run) {
            store_abort(t);
            api_kind_to_version(k, cur);
            *out = cur;
            return 0;
        }
        if (delete_now(t, k, ns, name, cur, e) != 0) goto fail;
    }
    if (commit(t, e) != 0) {
        json_decref(cur);
        return -1;
    }
    api_kind_to_version(k, cur);
    *out = cur;
    return 0;
fail:
    store_abort(t);
    json_decref(cur);
    return -1;
}

void reg_read_views(store *st, const api_kind *k, store_obj **objs, size_t n)
{
    reg_view_fn view = NULL;
    for (size_t i = 0; i < nread_views && !view; i++)
        if (read_views[i].kind == k || read_views[i].kind == api_kind_storage_row(k))
            view = read_views[i].view;
    if (!view || !n) return;
    char res[256];
    api_kind_store_resource(k, res, sizeof res - 1);
    strcat(res, "/");
    size_t rlen = strlen(res);
    store_txn *t = store_begin(st); /* (the books are the writer lock's) */
    if (!t) return;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(objs[i]->key, res, rlen) != 0) continue; /* (not of kind k) */
        store_obj *cur = store_txn_get(t, objs[i]->key);
        json_t *v = cur ? view(t, objs[i], cur) : NULL; /* (deleted since: as stored) */
        store_obj_unref(cur);
        size_t len = 0;
        char *text = v ? jdump(v, &len) : NULL;
        json_decref(v);
        store_obj *vo = text ? store_obj_view(objs[i], text, len) : NULL;
        if (vo) {
            store_obj_unref(objs[i]);
            objs[i] = vo;
        }
    }
    store_abort(t); /* reads never write */
}

json_t *reg_get(store *st, const api_kind *k, const char *ns, const char *name, api_err *e)
{
    char key[768];
    if (api_kind_key(k, ns, name, key, sizeof key) < 0) {
        api_err_not_found(e, k->group, k->resource, name);
        return NULL;
    }
    store_obj *o = store_get(st, key);
    if (!o) {
        api_err_not_found(e, k->group, k->resource, name);
        return NULL;
    }
    reg_read_views(st, k, &o, 1);
    json_t *obj = store_obj_parse(o);
    store_obj_unref(o);
    if (!obj)
        api_err_set(e, API_INTERNAL, "stored object is corrupt");
    else
        api_kind_to_version(k, obj);
    return obj;
}
