/* crd.c - what apiextensions-apiserver's controllers do for
 * CustomResourceDefinitions:
 *   - naming: the names a definition asks for are accepted unless another
 *     definition of its group (or a built-in kind of the group) holds them
 *     (api/crd.h's crd_naming_compute): NamesAccepted, status.acceptedNames;
 *   - establishing: once its names are accepted, its kinds are published
 *     (api/crd_kinds.h) and then Established is set True, so a client that
 *     waited for Established finds the resource served;
 *   - finalizing: a deleted definition (the registry's delete added the
 *     cleanup finalizer, api/crd.h) stops taking creates, its objects are
 *     deleted through the registry (finalizers, quota and watches see them
 *     go as any delete), and once none is left (checked inside a store
 *     transaction, so no create in flight can slip past) the finalizer is
 *     removed; the definition goes and its kinds are retired.
 * Changes to a definition republish its kinds (schema, columns, versions).
 *
 * One thread: follows definition events through a filtered store watch,
 * keeps the definitions to sync with the time each is due (a failed sync is
 * retried with back-off, one waiting for objects to go with a short one),
 * and syncs every definition at start, every CTRL_RESYNC_SECONDS and when
 * the watch is reopened. Writes go through the registry only.
 */
#include "controllers/crd.h"
#include "core/jdump.h"

#include "api/crd.h"
#include "api/crd_kinds.h"
#include "api/kinds.h"
#include "api/objects.h"
#include "controllers/controllers.h"
#include "core/jget.h"
#include "core/strmap.h"
#include "registry/registry.h"
#include "util/log.h"
#include "util/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WAIT_MS 100 /* pace of retrying a watch that cannot open */
#define BACKOFF_FIRST_MS 50
#define BACKOFF_MAX_MS 5000
#define PREFIX CRD_RESOURCE "." CRD_GROUP "/"

typedef struct pending {
    char *name; /* owned; the map's key */
    int64_t due_ms;
    int64_t backoff_ms;
} pending;

/* What the controller remembers of each stored definition, so that a sync
 * does not parse every other definition of the group (operators install
 * hundreds, with schemas of hundreds of kilobytes): its accepted names as of
 * a stored version, and the stored version its last finished sync left. */
typedef struct known {
    char *name;         /* owned; the map's key */
    int64_t rv;         /* the version `accepted` was read from */
    json_t *accepted;   /* status.acceptedNames (owned) */
    int64_t settled_rv; /* stored version after the last finished sync, or 0 */
} known;

struct crd_ctrl {
    store *st;
    const api_kind *kind; /* the CustomResourceDefinition row */
    pthread_t thread;
    atomic_bool stop;
    strmap *pending; /* name -> pending* */
    strmap *known;   /* name -> known* */
    int64_t next_resync_ms;
};

typedef enum { SYNC_DONE, SYNC_RETRY } sync_result;

static const json_t *meta_of(const json_t *o)
{
    return json_object_get(o, "metadata");
}

/* ---- the queue ---- */

static void enqueue(crd_ctrl *c, const char *name, int64_t due)
{
    pending *p = strmap_get(c->pending, name);
    if (p) {
        if (due < p->due_ms) p->due_ms = due;
        return;
    }
    p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(name)) || strmap_put(c->pending, p->name, p, NULL) != 0) {
        if (p) free(p->name); /* dropped: the periodic resync brings it back */
        free(p);
        return;
    }
    p->due_ms = due;
}

static void forget(crd_ctrl *c, const char *name)
{
    pending *p = strmap_del(c->pending, name);
    if (!p) return;
    free(p->name);
    free(p);
}

/* Every stored definition, parsed (a JSON array; caller owns). Only before
 * serving: the controller reads definitions one at a time. */
static json_t *all_definitions(store *st)
{
    store_obj **objs = NULL;
    size_t n = 0;
    json_t *all = json_array();
    if (!all || store_list(st, PREFIX, NULL, 0, &objs, &n, NULL, NULL) != 0) return all;
    for (size_t i = 0; i < n; i++) {
        json_t *o = store_obj_parse(objs[i]);
        if (o) json_array_append_new(all, o);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return all;
}

/* The group of a definition named "<plural>.<group>" (validation makes the
 * name so). */
static const char *group_of_name(const char *name)
{
    const char *dot = strchr(name, '.');
    return dot ? dot + 1 : "";
}

static void known_free(known *k)
{
    if (!k) return;
    json_decref(k->accepted);
    free(k->name);
    free(k);
}

/* The entry of stored definition o, its accepted names read again when o is
 * newer than what the entry holds; NULL when out of memory. */
static known *known_of(crd_ctrl *c, const store_obj *o)
{
    known *k = strmap_get(c->known, o->name);
    if (!k) {
        if (!(k = calloc(1, sizeof *k)) || !(k->name = strdup(o->name)) ||
            strmap_put(c->known, k->name, k, NULL) != 0) {
            if (k) free(k->name);
            free(k);
            return NULL;
        }
    }
    if (k->rv != o->rv || !k->accepted) {
        json_t *obj = store_obj_parse(o);
        json_t *acc = json_object_get(json_object_get(obj, "status"), "acceptedNames");
        json_decref(k->accepted);
        k->accepted = json_is_object(acc) ? json_incref(acc) : json_object();
        k->rv = o->rv;
        json_decref(obj);
    }
    return k;
}

static void forget_known(crd_ctrl *c, const char *name)
{
    known_free(strmap_del(c->known, name));
}

/* Definitions to sync: all (`group` NULL), those of one group, or
 * (`unsettled`) only those changed since their last finished sync: the
 * periodic resync does not parse settled definitions again. */
static void enqueue_some(crd_ctrl *c, const char *group, bool unsettled)
{
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_list(c->st, PREFIX, NULL, 0, &objs, &n, NULL, NULL) != 0) return;
    int64_t now = clock_mono_ms();
    for (size_t i = 0; i < n; i++) {
        const known *k = strmap_get(c->known, objs[i]->name);
        bool settled = k && k->settled_rv == objs[i]->rv;
        if ((!group || !strcmp(group_of_name(objs[i]->name), group)) && !(unsettled && settled))
            enqueue(c, objs[i]->name, now);
        store_obj_unref(objs[i]);
    }
    free(objs);
}

static void enqueue_all(crd_ctrl *c)
{
    enqueue_some(c, NULL, false);
}

/* ---- naming ---- */

static void csv_take(const char *csv, json_t *set)
{
    while (csv && *csv) {
        size_t len = strcspn(csv, ",");
        json_t *k = json_stringn(csv, len);
        if (k && len) json_object_set_new(set, json_string_value(k), json_true());
        json_decref(k);
        csv += len + (csv[len] == ',');
    }
}

/* Names the built-in kinds of `group` hold. */
static void builtin_taken(const char *group, json_t *resources, json_t *kinds)
{
    size_t n = api_kind_count();
    char list[300];
    for (size_t i = 0; i < n; i++) {
        const api_kind *k = api_kind_at(i);
        if ((k->flags & API_KIND_RUNTIME) || !api_kind_served(k) || strcmp(k->group, group))
            continue;
        json_object_set_new(resources, k->resource, json_true());
        json_object_set_new(resources, k->singular, json_true());
        csv_take(k->short_names, resources);
        json_object_set_new(kinds, k->kind, json_true());
        api_kind_list_kind(k, list, sizeof list);
        json_object_set_new(kinds, list, json_true());
    }
}

/* The naming decision for `crd` against the group's other definitions
 * (their accepted names as remembered, read again when they changed). */
static int compute_naming(crd_ctrl *c, const json_t *crd, crd_naming *out)
{
    const char *group = jstr(json_object_get(crd, "spec"), "group") ?: "";
    const char *name = jstr(meta_of(crd), "name") ?: "";
    json_t *resources = json_object(), *kinds = json_object();
    store_obj **objs = NULL;
    size_t n = 0;
    int rc = resources && kinds && store_list(c->st, PREFIX, NULL, 0, &objs, &n, NULL, NULL) == 0
                 ? 0
                 : -1;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0 && strcmp(objs[i]->name, name) != 0 &&
            !strcmp(group_of_name(objs[i]->name), group)) {
            const known *k = known_of(c, objs[i]);
            if (k)
                crd_taken_add(k->accepted, resources, kinds);
            else
                rc = -1;
        }
        store_obj_unref(objs[i]);
    }
    free(objs);
    if (rc == 0) builtin_taken(group, resources, kinds);
    if (rc == 0) rc = crd_naming_compute(crd, resources, kinds, out);
    json_decref(resources);
    json_decref(kinds);
    return rc;
}

/* ---- status writes ---- */

/* What a status write sets: acceptedNames (when not NULL) and conditions. */
typedef struct status_change {
    const json_t *accepted;
    struct {
        const char *type, *status, *reason, *message;
    } cond[3];
    size_t ncond;
} status_change;

static void want(status_change *s, const char *type, const char *status, const char *reason,
                 const char *message)
{
    s->cond[s->ncond].type = type;
    s->cond[s->ncond].status = status;
    s->cond[s->ncond].reason = reason;
    s->cond[s->ncond++].message = message;
}

/* Apply s to crd; whether anything changed. */
static bool apply_status(json_t *crd, const status_change *s, const char *now)
{
    bool changed = false;
    json_t *st = json_object_get(crd, "status");
    if (!json_is_object(st)) json_object_set_new(crd, "status", st = json_object());
    if (s->accepted && !json_equal(json_object_get(st, "acceptedNames"), s->accepted)) {
        json_object_set_new(st, "acceptedNames", jcopy(s->accepted));
        changed = true;
    }
    for (size_t i = 0; i < s->ncond; i++)
        changed |= crd_set_condition(crd, s->cond[i].type, s->cond[i].status, s->cond[i].reason,
                                     s->cond[i].message, now);
    return changed;
}

static json_t *mutate_status(const json_t *cur, void *ctx, api_err *e)
{
    char now[32];
    json_t *nw = jcopy(cur);
    if (!nw) {
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    reg_now_rfc3339(now, sizeof now);
    apply_status(nw, ctx, now);
    return nw;
}

/* Write s to the stored definition when it changes anything. */
static sync_result write_status(crd_ctrl *c, const json_t *crd, const status_change *s)
{
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *probe = jcopy(crd);
    bool changed = probe && apply_status(probe, s, now);
    json_decref(probe);
    if (!changed) return SYNC_DONE;
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    const char *name = jstr(meta_of(crd), "name");
    int rc =
        reg_update(c->st, c->kind, "", name, "status", mutate_status, (void *)s, false, &out, &e);
    if (rc != 0 && e.code != API_NOT_FOUND)
        log_msg(LOG_WARN, "crd: status write failed", "\"name\":\"%s\",\"error\":\"%s\"", name,
                e.message);
    json_decref(out);
    api_err_clear(&e);
    return rc == 0 || e.code == API_NOT_FOUND ? SYNC_DONE : SYNC_RETRY;
}

/* ---- serving ---- */

/* `crd` with acceptedNames replaced (a new object). */
static json_t *with_names(const json_t *crd, const json_t *accepted)
{
    json_t *copy = jcopy(crd);
    if (copy && accepted)
        json_object_set_new(json_object_ensure(copy, "status"), "acceptedNames", jcopy(accepted));
    return copy;
}

static void store_prefix(const json_t *crd, char *buf, size_t n)
{
    const json_t *spec = json_object_get(crd, "spec");
    snprintf(buf, n, "%s.%s/", jstr(json_object_get(spec, "names"), "plural") ?: "",
             jstr(spec, "group") ?: "");
}

/* Publish the kinds of crd (served under its accepted names); objects
 * already stored are indexed anew when the rows changed, and what resolved
 * kinds by name is told (`notify`: not before serving, when nothing has
 * resolved anything yet). */
static int serve(store *st, const json_t *crd, bool terminating, bool notify)
{
    char err[1024], prefix[600];
    const char *name = jstr(meta_of(crd), "name");
    int rc = crd_kinds_publish(crd, terminating, err, sizeof err);
    if (rc < 0) {
        log_msg(LOG_ERROR, "crd: cannot serve", "\"name\":\"%s\",\"error\":\"%s\"", name ?: "",
                err);
        return -1;
    }
    if (rc == 1) {
        store_prefix(crd, prefix, sizeof prefix);
        if (store_reindex(st, prefix) != 0)
            log_msg(LOG_WARN, "crd: reindex failed", "\"name\":\"%s\"", name ?: "");
        if (notify) reg_kinds_changed(st);
    }
    return 0;
}

static bool names_complete(const json_t *accepted)
{
    const char *plural = jstr(accepted, "plural"), *kind = jstr(accepted, "kind");
    return plural && *plural && kind && *kind;
}

static void enqueue_group(crd_ctrl *c, const char *group);

static sync_result sync_active(crd_ctrl *c, const json_t *crd)
{
    crd_naming nm;
    if (compute_naming(c, crd, &nm) != 0) return SYNC_RETRY;
    status_change s = {.accepted = nm.accepted};
    want(&s, "NamesAccepted", nm.ok ? "True" : "False", nm.reason, nm.message);
    bool established = crd_condition_true(crd, "Established");
    json_t *served = with_names(crd, nm.accepted);
    sync_result r = SYNC_DONE;
    /* Served when its names are accepted, or it was established before (a
     * later conflict keeps the names it had, as upstream keeps serving). */
    if (served && (nm.ok || established) && names_complete(nm.accepted)) {
        if (serve(c->st, served, false, true) != 0)
            r = SYNC_RETRY;
        else if (!established)
            want(&s, "Established", "True", "InitialNamesAccepted",
                 "the initial names have been accepted");
    } else if (!established) {
        want(&s, "Established", "False", "NotAccepted", "not all names are accepted");
    }
    if (r == SYNC_DONE) r = write_status(c, crd, &s);
    /* names it took or gave up: the others of its group look again */
    const json_t *before = json_object_get(json_object_get(crd, "status"), "acceptedNames");
    if (r == SYNC_DONE && !json_equal(before, nm.accepted))
        enqueue_group(c, jstr(json_object_get(crd, "spec"), "group") ?: "");
    json_decref(served);
    crd_naming_clear(&nm);
    return r;
}

/* ---- finalizing ---- */

/* Delete every object of the definition's resource; how many remain (being
 * deleted, or refused), or -1 when the store cannot be read. */
static long delete_instances(crd_ctrl *c, const char *prefix)
{
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_list(c->st, prefix, NULL, 0, &objs, &n, NULL, NULL) != 0) return -1;
    long left = 0;
    for (size_t i = 0; i < n; i++) {
        const api_kind *k = api_kind_for_key(objs[i]->key);
        reg_delete_opts o = {false, -1, "Background", NULL, NULL};
        json_t *out = NULL;
        bool gone = false;
        api_err e;
        api_err_init(&e);
        if (!atomic_load(&c->stop) && k &&
            reg_delete(c->st, k, objs[i]->ns, objs[i]->name, &o, &out, &gone, &e) == 0 && gone) {
            json_decref(out);
        } else {
            json_decref(out);
            if (e.code != API_NOT_FOUND) left++;
        }
        api_err_clear(&e);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return left;
}

/* Whether no object is left under prefix, seen from inside a transaction:
 * every create that passed its "not terminating" check has committed. */
static bool none_left(store *st, const char *prefix)
{
    store_txn *t = store_begin(st);
    if (!t) return false;
    store_obj **objs = NULL;
    size_t n = 0;
    bool empty = store_txn_list(t, prefix, &objs, &n) == 0 && n == 0;
    for (size_t i = 0; i < n; i++)
        store_obj_unref(objs[i]);
    free(objs);
    store_abort(t);
    return empty;
}

static sync_result finalize(crd_ctrl *c, const json_t *crd)
{
    const char *name = jstr(meta_of(crd), "name");
    if (!ctrl_has_finalizer(crd, CRD_CLEANUP_FINALIZER)) return SYNC_DONE;
    status_change s = {0};
    if (crd_condition_true(crd, "Established")) {
        char prefix[600];
        store_prefix(crd, prefix, sizeof prefix);
        /* no more creates: the rows say terminating before anything is listed */
        if (names_complete(json_object_get(json_object_get(crd, "status"), "acceptedNames")) &&
            serve(c->st, crd, true, true) != 0)
            return SYNC_RETRY;
        want(&s, "Terminating", "True", "InstanceDeletionInProgress",
             "CustomResource deletion is in progress");
        if (write_status(c, crd, &s) != SYNC_DONE) return SYNC_RETRY;
        long left = delete_instances(c, prefix);
        if (left != 0 || !none_left(c->st, prefix)) {
            log_msg(LOG_DEBUG, "crd: waiting for objects to go", "\"name\":\"%s\",\"left\":%ld",
                    name, left);
            return SYNC_RETRY;
        }
        s.ncond = 0;
        want(&s, "Terminating", "False", "InstanceDeletionCompleted", "removed all instances");
    } else {
        want(&s, "Terminating", "False", "NeverEstablished", "resource was never established");
    }
    if (write_status(c, crd, &s) != SYNC_DONE) return SYNC_RETRY;
    if (ctrl_remove_finalizer(c->st, c->kind, "", name, jstr(meta_of(crd), "uid"),
                              CRD_CLEANUP_FINALIZER) != 0)
        return SYNC_RETRY;
    return SYNC_DONE;
}

/* ---- one definition ---- */

/* "<plural>.<group>" split at the first dot. */
static void split_name(const char *name, char *plural, size_t pn, const char **group)
{
    const char *dot = strchr(name, '.');
    size_t len = dot ? (size_t)(dot - name) : strlen(name);
    snprintf(plural, pn, "%.*s", (int)len, name);
    *group = dot ? dot + 1 : "";
}

/* After a definition goes, the others of its group may take its names. */
static void enqueue_group(crd_ctrl *c, const char *group)
{
    enqueue_some(c, group, false);
}

static sync_result sync_one(crd_ctrl *c, const char *name)
{
    char key[600], plural[300];
    const char *group;
    store_obj *o =
        api_kind_key(c->kind, "", name, key, sizeof key) < 0 ? NULL : store_get(c->st, key);
    json_t *crd = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    if (!crd) { /* gone: its kinds go too */
        forget_known(c, name);
        split_name(name, plural, sizeof plural, &group);
        if (crd_kinds_served(group, plural)) {
            crd_kinds_retire(group, plural);
            reg_kinds_changed(c->st);
            log_msg(LOG_INFO, "crd: no longer served", "\"name\":\"%s\"", name);
            enqueue_group(c, group);
        }
        return SYNC_DONE;
    }
    sync_result r =
        json_object_get(meta_of(crd), "deletionTimestamp") ? finalize(c, crd) : sync_active(c, crd);
    json_decref(crd);
    /* finished: the periodic resync skips it until it changes again */
    store_obj *now = r == SYNC_DONE ? store_get(c->st, key) : NULL;
    known *k = now ? known_of(c, now) : NULL;
    if (k) k->settled_rv = now->rv;
    store_obj_unref(now);
    return r;
}

/* ---- the loop ---- */

static bool watch_filter(void *arg, const store_event *ev)
{
    return strncmp(ev->obj->key, PREFIX, strlen(PREFIX)) == 0;
}

static void run_due(crd_ctrl *c)
{
    int64_t now = clock_mono_ms();
    const char *k;
    void *v;
    size_t cap = strmap_count(c->pending), n = 0;
    char **due = calloc(cap ? cap : 1, sizeof *due);
    if (!due) return;
    for (size_t it = 0; strmap_next(c->pending, &it, &k, &v);)
        if (((pending *)v)->due_ms <= now && n < cap) due[n++] = strdup(k);
    for (size_t i = 0; i < n && !atomic_load(&c->stop); i++) {
        pending *p = due[i] ? strmap_get(c->pending, due[i]) : NULL;
        if (!p) continue;
        if (sync_one(c, due[i]) == SYNC_DONE) {
            forget(c, due[i]);
        } else {
            p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : BACKOFF_FIRST_MS;
            if (p->backoff_ms > BACKOFF_MAX_MS) p->backoff_ms = BACKOFF_MAX_MS;
            p->due_ms = clock_mono_ms() + p->backoff_ms;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(due[i]);
    free(due);
}

static store_watch *open_watch(crd_ctrl *c)
{
    bool expired = false;
    store_watch *w =
        store_watch_open_filtered(c->st, PREFIX, store_revision(c->st), watch_filter, c, &expired);
    enqueue_all(c); /* after the watch opens: a change after the list is still an event */
    c->next_resync_ms = clock_mono_ms() + CTRL_RESYNC_SECONDS * 1000;
    return w;
}

/* How long the thread may wait for events: until the first definition due
 * for a retry, or the next resync. */
static int wait_ms(crd_ctrl *c)
{
    int64_t first = c->next_resync_ms;
    void *v;
    for (size_t it = 0; strmap_next(c->pending, &it, NULL, &v);)
        if (((pending *)v)->due_ms < first) first = ((pending *)v)->due_ms;
    int64_t ms = first - clock_mono_ms();
    return ms < 0 ? 0 : ms > INT32_MAX ? INT32_MAX : (int)ms;
}

static void *run(void *arg)
{
    crd_ctrl *c = arg;
    pthread_setname_np(pthread_self(), "crd");
    store_watch *w = open_watch(c);
    while (!atomic_load(&c->stop)) {
        store_event ev;
        int rc = w ? store_watch_next(w, &ev, wait_ms(c)) : -1;
        while (rc == 1) {
            enqueue(c, ev.obj->name, clock_mono_ms());
            store_obj_unref(ev.obj);
            store_obj_unref(ev.prev);
            rc = atomic_load(&c->stop) ? 0 : store_watch_next(w, &ev, 0);
        }
        if (rc < 0 && !atomic_load(&c->stop)) {
            store_watch_close(w);
            w = open_watch(c);
            if (!w) {
                struct timespec ts = {0, WAIT_MS * 1000000L};
                nanosleep(&ts, NULL); /* pacing a failing open, not synchronisation */
            }
        }
        if (clock_mono_ms() >= c->next_resync_ms) {
            enqueue_some(c, NULL, true);
            c->next_resync_ms = clock_mono_ms() + CTRL_RESYNC_SECONDS * 1000;
        }
        run_due(c);
    }
    store_watch_close(w);
    return NULL;
}

/* ---- start, restore, stop ---- */

int crd_controller_restore(store *st, char *err, size_t errlen)
{
    json_t *all = all_definitions(st);
    if (!all) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int served = 0;
    size_t i;
    json_t *d;
    json_array_foreach(all, i, d)
    {
        const json_t *acc = json_object_get(json_object_get(d, "status"), "acceptedNames");
        if (!names_complete(acc) ||
            (!crd_condition_true(d, "NamesAccepted") && !crd_condition_true(d, "Established")))
            continue;
        bool terminating = json_object_get(meta_of(d), "deletionTimestamp") != NULL;
        if (serve(st, d, terminating, false) == 0) served++;
    }
    json_decref(all);
    return served;
}

crd_ctrl *crd_controller_start(store *st, char *err, size_t errlen)
{
    crd_ctrl *c = calloc(1, sizeof *c);
    if (!c || !(c->pending = strmap_new()) || !(c->known = strmap_new())) {
        if (c) strmap_free(c->pending);
        free(c);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->st = st;
    atomic_init(&c->stop, false);
    c->kind = api_kind_find(CRD_GROUP, CRD_VERSION, CRD_RESOURCE);
    if (!c->kind || pthread_create(&c->thread, NULL, run, c) != 0) {
        snprintf(err, errlen, "cannot start the CustomResourceDefinition controller");
        strmap_free(c->pending);
        strmap_free(c->known);
        free(c);
        return NULL;
    }
    return c;
}

void crd_controller_stop(crd_ctrl *c)
{
    if (!c) return;
    atomic_store(&c->stop, true);
    store_watch_wake_all(c->st); /* its wait may be long */
    pthread_join(c->thread, NULL);
    void *v;
    for (size_t it = 0; strmap_next(c->pending, &it, NULL, &v);) {
        free(((pending *)v)->name);
        free(v);
    }
    strmap_free(c->pending);
    for (size_t it = 0; strmap_next(c->known, &it, NULL, &v);)
        known_free(v);
    strmap_free(c->known);
    free(c);
}
