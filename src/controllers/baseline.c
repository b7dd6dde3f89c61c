/* baseline.c - the objects upstream puts in every namespace.
 *
 * kube-controller-manager's serviceaccount controller creates ServiceAccount
 * "default" in every active namespace, and its root-ca-cert-publisher the
 * ConfigMap "kube-root-ca.crt" holding the cluster CA; both recreate them when
 * they are deleted, and the publisher puts the CA back when the data drifts.
 * Quotas on real clusters count them (a `count/configmaps: 2` quota admits one
 * ConfigMap of the tenant's own), so allotd does the same.
 *
 * Writes go through reg_create/reg_update like any client's: admission and
 * quota apply, and a quota that refuses the object leaves the namespace
 * without it, as upstream. Such a namespace is retried with an exponential
 * back-off (upstream's workqueue rate limiter), and at once when a
 * ResourceQuota in it changes, so raising the quota brings the object in
 * promptly. Terminating namespaces are left alone; the registry refuses
 * creates in them inside its own transaction, so a create racing the
 * namespace's deletion cannot keep it from finishing.
 *
 * One thread: follows namespace, ServiceAccount, ConfigMap and ResourceQuota
 * events through a filtered store watch, keeps the namespaces to sync with
 * the time each is due, and syncs every namespace at start (and whenever the
 * watch has to be reopened).
 */
#include "controllers/baseline.h"
#include "core/jdump.h"

#include "api/kinds.h"
#include "api/objects.h"
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
#define BACKOFF_FIRST_MS 100
#define BACKOFF_MAX_MS 30000

/* Upstream's annotation on kube-root-ca.crt (rootcacertpublisher/publisher.go). */
#define CA_DESCRIPTION_ANNOTATION "kubernetes.io/description"
#define CA_DESCRIPTION                                                                             \
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "      \
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "      \
    "guaranteed across distributions of Kubernetes clusters."

/* A namespace waiting for a sync. */
typedef struct pending {
    char *ns;           /* owned; the map's key */
    int64_t due_ms;     /* monotonic */
    int64_t backoff_ms; /* 0 until a sync fails; the wait after the next failure */
} pending;

/* The watched kinds: their store resource ("configmaps") and key prefix. */
enum { K_NS, K_SA, K_CM, K_QUOTA, K_COUNT };

struct baseline {
    store *st;
    char *ca_pem; /* owned */
    pthread_t thread;
    atomic_bool stop;
    const api_kind *kind[K_COUNT];
    char prefix[K_COUNT][128]; /* "configmaps/"; set before the watch opens, then read-only */
    strmap *pending;           /* ns -> pending* */
};

/* Which watched kind a key belongs to, or -1. */
static int key_kind(const baseline *b, const char *key)
{
    for (int i = 0; i < K_COUNT; i++)
        if (strncmp(key, b->prefix[i], strlen(b->prefix[i])) == 0) return i;
    return -1;
}

/* Watch filter: runs under the store's lock, reads only the event and b's
 * read-only prefixes. */
static bool watch_filter(void *arg, const store_event *ev)
{
    return key_kind(arg, ev->obj->key) >= 0;
}

/* ---- the queue ---- */

/* Sync ns at `due` (monotonic ms) or earlier if it already waits for sooner. */
static void enqueue(baseline *b, const char *ns, int64_t due)
{
    pending *p = strmap_get(b->pending, ns);
    if (p) {
        if (due < p->due_ms) p->due_ms = due;
        return;
    }
    p = calloc(1, sizeof *p);
    if (!p || !(p->ns = strdup(ns)) || strmap_put(b->pending, p->ns, p, NULL) != 0) {
        /* dropped: the namespace's next event or the next watch reopen syncs it */
        if (p) free(p->ns);
        free(p);
        return;
    }
    p->due_ms = due;
}

static void forget(baseline *b, const char *ns)
{
    pending *p = strmap_del(b->pending, ns);
    if (!p) return;
    free(p->ns);
    free(p);
}

/* ---- one namespace ---- */

typedef enum { SYNC_DONE, SYNC_RETRY } sync_result;

/* The stored object at (kind, ns, name), parsed; NULL if absent. */
static json_t *get_obj(baseline *b, int kind, const char *ns, const char *name)
{
    char key[600];
    if (api_kind_key(b->kind[kind], ns, name, key, sizeof key) < 0) return NULL;
    store_obj *o = store_get(b->st, key);
    json_t *obj = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    return obj;
}

static json_t *ca_data(const baseline *b)
{
    return json_pack("{s:s}", BASELINE_CA_KEY, b->ca_pem);
}

/* Create obj (borrowed) in ns. A create that lost a race to another writer
 * is fine; refusals (quota, a namespace turning terminating) are retried. */
static sync_result create(baseline *b, int kind, const char *ns, const json_t *obj)
{
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    sync_result r = SYNC_DONE;
    if (reg_create(b->st, b->kind[kind], ns, obj, false, &out, &e) != 0 &&
        e.code != API_ALREADY_EXISTS) {
        log_msg(LOG_DEBUG, "namespace baseline: create refused",
                "\"namespace\":\"%s\",\"resource\":\"%s\",\"error\":\"%s\"", ns,
                b->kind[kind]->resource, e.message);
        r = SYNC_RETRY;
    }
    json_decref(out);
    api_err_clear(&e);
    return r;
}

static sync_result ensure_sa(baseline *b, const char *ns)
{
    json_t *cur = get_obj(b, K_SA, ns, BASELINE_SA_NAME);
    if (cur) {
        json_decref(cur);
        return SYNC_DONE;
    }
    json_t *sa = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "ServiceAccount",
                           "metadata", "name", BASELINE_SA_NAME, "namespace", ns);
    sync_result r = sa ? create(b, K_SA, ns, sa) : SYNC_RETRY;
    json_decref(sa);
    return r;
}

/* Whether cm carries the CA and upstream's description (the publisher's test:
 * data equal and the annotation non-empty). */
static bool cm_current(const baseline *b, const json_t *cm)
{
    json_t *want = ca_data(b);
    const json_t *ann = json_object_get(json_object_get(cm, "metadata"), "annotations");
    const char *desc = json_string_value(json_object_get(ann, CA_DESCRIPTION_ANNOTATION));
    bool ok = want && json_equal(json_object_get(cm, "data"), want) && desc && *desc;
    json_decref(want);
    return ok;
}

/* reg_update mutation: the CA back in data, the description in place. */
static json_t *restore_cm(const json_t *cur, void *ctx, api_err *e)
{
    const baseline *b = ctx;
    json_t *cm = jcopy(cur);
    json_t *data = ca_data(b);
    if (!cm || !data) {
        json_decref(cm);
        json_decref(data);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    json_object_set_new(cm, "data", data);
    json_object_del(cm, "binaryData");
    json_t *meta = json_object_ensure(cm, "metadata");
    json_t *ann = json_object_ensure(meta, "annotations");
    json_object_set_new(ann, CA_DESCRIPTION_ANNOTATION, json_string(CA_DESCRIPTION));
    return cm;
}

static sync_result ensure_ca(baseline *b, const char *ns)
{
    json_t *cur = get_obj(b, K_CM, ns, BASELINE_CA_CONFIGMAP);
    if (cur) {
        bool ok = cm_current(b, cur);
        json_decref(cur);
        if (ok) return SYNC_DONE;
        api_err e;
        api_err_init(&e);
        json_t *out = NULL;
        sync_result r = SYNC_DONE;
        if (reg_update(b->st, b->kind[K_CM], ns, BASELINE_CA_CONFIGMAP, "", restore_cm, b, false,
                       &out, &e) != 0 &&
            e.code != API_NOT_FOUND) /* deleted meanwhile: its event brings us back */
            r = SYNC_RETRY;
        json_decref(out);
        api_err_clear(&e);
        return r;
    }
    json_t *cm =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:o}", "apiVersion", "v1", "kind", "ConfigMap",
                  "metadata", "name", BASELINE_CA_CONFIGMAP, "namespace", ns, "annotations",
                  CA_DESCRIPTION_ANNOTATION, CA_DESCRIPTION, "data", ca_data(b));
    sync_result r = cm ? create(b, K_CM, ns, cm) : SYNC_RETRY;
    json_decref(cm);
    return r;
}

static sync_result sync_ns(baseline *b, const char *ns)
{
    json_t *nsobj = get_obj(b, K_NS, "", ns);
    /* Gone, or terminating: upstream's controllers skip namespaces that are
     * not active, and the namespace controller is emptying this one. */
    bool skip = !nsobj || json_object_get(json_object_get(nsobj, "metadata"), "deletionTimestamp");
    json_decref(nsobj);
    if (skip) return SYNC_DONE;
    sync_result sa = ensure_sa(b, ns);
    sync_result ca = ensure_ca(b, ns);
    return sa == SYNC_DONE && ca == SYNC_DONE ? SYNC_DONE : SYNC_RETRY;
}

/* ---- events and the loop ---- */

static void on_event(baseline *b, const store_event *ev)
{
    const store_obj *o = ev->obj;
    int64_t now = clock_mono_ms();
    switch (key_kind(b, o->key)) {
    case K_NS:
        if (ev->type == STORE_EV_DELETED)
            forget(b, o->name);
        else
            enqueue(b, o->name, now);
        break;
    case K_SA: /* upstream recreates on delete only */
        if (ev->type == STORE_EV_DELETED && strcmp(o->name, BASELINE_SA_NAME) == 0)
            enqueue(b, o->ns, now);
        break;
    case K_CM: /* deleted, or changed (drift) */
        if (strcmp(o->name, BASELINE_CA_CONFIGMAP) == 0) enqueue(b, o->ns, now);
        break;
    case K_QUOTA: {
        /* A namespace a quota held back is retried at once when its quotas
         * change (raised, or deleted); the back-off stays for the next miss. */
        pending *p = strmap_get(b->pending, o->ns);
        if (p) p->due_ms = now;
        break;
    }
    default:
        break;
    }
}

/* Every namespace: at start, and when the watch had to be reopened. */
static void enqueue_all(baseline *b)
{
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_list(b->st, b->prefix[K_NS], NULL, 0, &objs, &n, NULL, NULL) != 0) return;
    int64_t now = clock_mono_ms();
    for (size_t i = 0; i < n; i++) {
        enqueue(b, objs[i]->name, now);
        store_obj_unref(objs[i]);
    }
    free(objs);
}

static void run_due(baseline *b)
{
    int64_t now = clock_mono_ms();
    const char *k;
    void *v;
    /* Collect the due names first: a sync's writes do not touch the map
     * (events come through the watch), but keep the walk and the work apart. */
    size_t cap = strmap_count(b->pending), n = 0;
    char **due = calloc(cap ? cap : 1, sizeof *due);
    if (!due) return;
    for (size_t it = 0; strmap_next(b->pending, &it, &k, &v);)
        if (((pending *)v)->due_ms <= now && n < cap) due[n++] = strdup(k);
    for (size_t i = 0; i < n && !atomic_load(&b->stop); i++) {
        if (!due[i]) continue;
        pending *p = strmap_get(b->pending, due[i]);
        if (p && sync_ns(b, due[i]) == SYNC_DONE) {
            forget(b, due[i]);
        } else if (p) {
            p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : BACKOFF_FIRST_MS;
            if (p->backoff_ms > BACKOFF_MAX_MS) p->backoff_ms = BACKOFF_MAX_MS;
            p->due_ms = clock_mono_ms() + p->backoff_ms;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(due[i]);
    free(due);
}

/* How long the thread may wait for events: until the first namespace
 * due for a retry, or (-1) until an event comes. */
static int wait_ms(baseline *b)
{
    int64_t first = INT64_MAX;
    void *v;
    for (size_t it = 0; strmap_next(b->pending, &it, NULL, &v);)
        if (((pending *)v)->due_ms < first) first = ((pending *)v)->due_ms;
    if (first == INT64_MAX) return -1;
    int64_t ms = first - clock_mono_ms();
    return ms < 0 ? 0 : ms > INT32_MAX ? INT32_MAX : (int)ms;
}

static store_watch *open_watch(baseline *b)
{
    bool expired = false;
    store_watch *w =
        store_watch_open_filtered(b->st, "", store_revision(b->st), watch_filter, b, &expired);
    enqueue_all(b); /* after the watch opens: a change after the list is still an event */
    return w;
}

static void *run(void *arg)
{
    baseline *b = arg;
    pthread_setname_np(pthread_self(), "ns-baseline");
    store_watch *w = open_watch(b);
    while (!atomic_load(&b->stop)) {
        store_event ev;
        int rc = w ? store_watch_next(w, &ev, wait_ms(b)) : -1;
        while (rc == 1) {
            on_event(b, &ev);
            store_obj_unref(ev.obj);
            store_obj_unref(ev.prev);
            rc = atomic_load(&b->stop) ? 0 : store_watch_next(w, &ev, 0);
        }
        if (rc < 0 && !atomic_load(&b->stop)) {
            /* Fell behind the history or could not open: start over. */
            store_watch_close(w);
            w = open_watch(b);
            if (!w) {
                struct timespec ts = {0, WAIT_MS * 1000000L};
                nanosleep(&ts, NULL); /* pacing a failing open, not synchronisation */
            }
        }
        run_due(b);
    }
    store_watch_close(w);
    return NULL;
}

baseline *baseline_start(store *st, const char *ca_pem, char *err, size_t errlen)
{
    static const char *const resources[K_COUNT] = {"namespaces", "serviceaccounts", "configmaps",
                                                   "resourcequotas"};
    baseline *b = calloc(1, sizeof *b);
    if (!b || !(b->pending = strmap_new()) || !(b->ca_pem = strdup(ca_pem ? ca_pem : ""))) {
        if (b) strmap_free(b->pending);
        free(b);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->st = st;
    atomic_init(&b->stop, false);
    for (int i = 0; i < K_COUNT; i++) {
        b->kind[i] = api_kind_find("", "v1", resources[i]);
        if (!b->kind[i]) {
            snprintf(err, errlen, "namespace baseline: kind %s not registered", resources[i]);
            goto fail;
        }
        api_kind_store_resource(b->kind[i], b->prefix[i], sizeof b->prefix[i] - 1);
        strcat(b->prefix[i], "/");
    }
    if (pthread_create(&b->thread, NULL, run, b) != 0) {
        snprintf(err, errlen, "cannot start the namespace baseline controller");
        goto fail;
    }
    return b;
fail:
    strmap_free(b->pending);
    free(b->ca_pem);
    free(b);
    return NULL;
}

void baseline_stop(baseline *b)
{
    if (!b) return;
    atomic_store(&b->stop, true);
    store_watch_wake_all(b->st); /* its wait has no timeout */
    pthread_join(b->thread, NULL);
    void *v;
    for (size_t it = 0; strmap_next(b->pending, &it, NULL, &v);) {
        free(((pending *)v)->ns);
        free(v);
    }
    strmap_free(b->pending);
    free(b->ca_pem);
    free(b);
}
