/* kubesvc.c - the `kubernetes` Service in namespace default, and its
 * Endpoints and EndpointSlice.
 *
 * Every cluster has them: kube-apiserver's kubernetesservice controller
 * creates the Service (cluster IP the range's first address, port 443 named
 * https to the apiserver's port, labels component=apiserver and
 * provider=kubernetes) and puts its ports and type back when they are
 * changed, and its endpoint reconciler keeps the Endpoints listing the
 * apiservers (label endpointslice.kubernetes.io/skip-mirror=true) and the
 * EndpointSlice of the same name (label kubernetes.io/service-name) in step.
 * allotd is one apiserver, reached at the address and port it serves on.
 *
 * Writes go through reg_create/reg_update like any client's (admission and
 * quota apply). One thread follows the three objects through a filtered store
 * watch and puts them back at once when they are deleted or changed, and
 * checks them every KUBESVC_INTERVAL_MS besides, as upstream's loop does.
 */
#include "controllers/kubesvc.h"
#include "core/jdump.h"

#include "api/discovery_kinds.h"
#include "api/kinds.h"
#include "registry/registry.h"
#include "util/log.h"
#include "util/clock.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WAIT_MS 100 /* pace of retrying a watch that cannot open */
#define SKIP_MIRROR_LABEL "endpointslice.kubernetes.io/skip-mirror"

struct kubesvc {
    store *st;
    char *service_ip, *address;
    int port;
    const api_kind *svc_kind, *ep_kind, *slice_kind;
    char svc_key[128], ep_key[128], slice_key[160]; /* set before the watch opens, read-only */
    pthread_t thread;
    atomic_bool stop;
    char last_error[256]; /* the thread's: a failure is logged when it changes */
};

/* ---- what they should be ---- */

static json_t *desired_ports(const kubesvc *k)
{
    return json_pack("[{s:s, s:s, s:i, s:i}]", "name", KUBESVC_PORT_NAME, "protocol", "TCP", "port",
                     KUBESVC_PORT, "targetPort", k->port);
}

static json_t *desired_subsets(const kubesvc *k)
{
    return json_pack("[{s:[{s:s}], s:[{s:s, s:i, s:s}]}]", "addresses", "ip", k->address, "ports",
                     "name", KUBESVC_PORT_NAME, "port", k->port, "protocol", "TCP");
}

/* endpointSliceFromEndpoints: one ready endpoint, the Endpoints' ports. */
static const char *address_type(const kubesvc *k)
{
    return strchr(k->address, ':') ? "IPv6" : "IPv4";
}

static json_t *desired_slice_endpoints(const kubesvc *k)
{
    return json_pack("[{s:[s], s:{s:b}}]", "addresses", k->address, "conditions", "ready", 1);
}

static json_t *desired_slice_ports(const kubesvc *k)
{
    return json_pack("[{s:s, s:s, s:i}]", "name", KUBESVC_PORT_NAME, "protocol", "TCP", "port",
                     k->port);
}

static json_t *new_slice(const kubesvc *k)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:s, s:o, s:o}", "apiVersion",
                     DISCOVERY_GROUP "/" DISCOVERY_VERSION, "kind", "EndpointSlice", "metadata",
                     "name", KUBESVC_NAME, "namespace", KUBESVC_NAMESPACE, "labels",
                     DISCOVERY_SERVICE_NAME_LABEL, KUBESVC_NAME, "addressType", address_type(k),
                     "endpoints", desired_slice_endpoints(k), "ports", desired_slice_ports(k));
}

static json_t *new_service(const kubesvc *k)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, s:{s:o, s:s, s:[s], s:s, s:s}}",
                     "apiVersion", "v1", "kind", "Service", "metadata", "name", KUBESVC_NAME,
                     "namespace", KUBESVC_NAMESPACE, "labels", "component", "apiserver", "provider",
                     "kubernetes", "spec", "ports", desired_ports(k), "clusterIP", k->service_ip,
                     "clusterIPs", k->service_ip, "sessionAffinity", "None", "type", "ClusterIP");
}

static json_t *new_endpoints(const kubesvc *k)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:o}", "apiVersion", "v1", "kind",
                     "Endpoints", "metadata", "name", KUBESVC_NAME, "namespace", KUBESVC_NAMESPACE,
                     "labels", SKIP_MIRROR_LABEL, "true", "subsets", desired_subsets(k));
}

static bool str_is(const json_t *v, const char *want)
{
    const char *s = json_string_value(v);
    return s && !strcmp(s, want);
}

/* checkServiceFormat: the type and every port exactly as upstream makes them. */
static bool service_current(const kubesvc *k, const json_t *svc)
{
    const json_t *spec = json_object_get(svc, "spec");
    json_t *want = desired_ports(k);
    bool ok = want && json_equal(json_object_get(spec, "ports"), want) &&
              str_is(json_object_get(spec, "type"), "ClusterIP");
    json_decref(want);
    return ok;
}

static bool endpoints_current(const kubesvc *k, const json_t *ep)
{
    json_t *want = desired_subsets(k);
    const json_t *labels = json_object_get(json_object_get(ep, "metadata"), "labels");
    bool ok = want && json_equal(json_object_get(ep, "subsets"), want) &&
              str_is(json_object_get(labels, SKIP_MIRROR_LABEL), "true");
    json_decref(want);
    return ok;
}

static bool slice_current(const kubesvc *k, const json_t *es)
{
    json_t *eps = desired_slice_endpoints(k), *ports = desired_slice_ports(k);
    const json_t *labels = json_object_get(json_object_get(es, "metadata"), "labels");
    bool ok = eps && ports && json_equal(json_object_get(es, "endpoints"), eps) &&
              json_equal(json_object_get(es, "ports"), ports) &&
              str_is(json_object_get(es, "addressType"), address_type(k)) &&
              str_is(json_object_get(labels, DISCOVERY_SERVICE_NAME_LABEL), KUBESVC_NAME);
    json_decref(eps);
    json_decref(ports);
    return ok;
}

/* reg_update mutations: ports and type back (a Service turned ExternalName
 * and back asks for its own address again); subsets and label back. */
static json_t *restore_service(const json_t *cur, void *ctx, api_err *e)
{
    const kubesvc *k = ctx;
    json_t *svc = jcopy(cur), *spec = svc ? json_object_get(svc, "spec") : NULL;
    if (!json_is_object(spec)) {
        json_decref(svc);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    json_object_set_new(spec, "ports", desired_ports(k));
    json_object_set_new(spec, "type", json_string("ClusterIP"));
    if (!json_string_value(json_object_get(spec, "clusterIP"))) {
        json_object_set_new(spec, "clusterIP", json_string(k->service_ip));
        json_object_set_new(spec, "clusterIPs", json_pack("[s]", k->service_ip));
    }
    return svc;
}

static json_t *restore_endpoints(const json_t *cur, void *ctx, api_err *e)
{
    const kubesvc *k = ctx;
    json_t *ep = jcopy(cur);
    if (!ep) {
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    json_object_set_new(ep, "subsets", desired_subsets(k));
    json_t *meta = json_object_get(ep, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    json_object_set_new(labels, SKIP_MIRROR_LABEL, json_string("true"));
    return ep;
}

static json_t *restore_slice(const json_t *cur, void *ctx, api_err *e)
{
    const kubesvc *k = ctx;
    json_t *es = jcopy(cur);
    if (!es) {
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    json_object_set_new(es, "endpoints", desired_slice_endpoints(k));
    json_object_set_new(es, "ports", desired_slice_ports(k));
    json_t *meta = json_object_get(es, "metadata");
    json_t *labels = json_object_get(meta, "labels");
    if (!json_is_object(labels)) {
        labels = json_object();
        json_object_set_new(meta, "labels", labels);
    }
    json_object_set_new(labels, DISCOVERY_SERVICE_NAME_LABEL, json_string(KUBESVC_NAME));
    return es;
}

/* ---- one pass ---- */

static json_t *get_obj(kubesvc *k, const char *key)
{
    store_obj *o = store_get(k->st, key);
    json_t *obj = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    return obj;
}

/* Create `want` (taken) or bring the stored object back with `fix`. */
static int ensure(kubesvc *k, const api_kind *kind, const char *key, json_t *want,
                  bool (*current)(const kubesvc *, const json_t *), reg_mutate_fn fix, api_err *e)
{
    json_t *cur = get_obj(k, key), *out = NULL;
    int rc = 0;
    if (!cur) {
        rc = want ? reg_create(k->st, kind, KUBESVC_NAMESPACE, want, false, &out, e)
                  : api_err_set(e, API_INTERNAL, "out of memory");
        if (rc != 0 && e->code == API_ALREADY_EXISTS) rc = 0; /* raced: checked next pass */
    } else if (!current(k, cur)) {
        rc = reg_update(k->st, kind, KUBESVC_NAMESPACE, KUBESVC_NAME, "", fix, k, false, &out, e);
        if (rc != 0 && e->code == API_NOT_FOUND) rc = 0; /* deleted meanwhile: its event */
    }
    json_decref(want);
    json_decref(cur);
    json_decref(out);
    return rc;
}

/* The slice; one whose address type is not the advertised address's (the
 * field is immutable) is deleted first, then made again. */
static int ensure_slice(kubesvc *k, api_err *e)
{
    json_t *cur = get_obj(k, k->slice_key);
    bool wrong_type = cur && !str_is(json_object_get(cur, "addressType"), address_type(k));
    json_decref(cur);
    if (wrong_type) {
        reg_delete_opts o = {.grace_seconds = -1};
        json_t *out = NULL;
        bool gone = false;
        int rc =
            reg_delete(k->st, k->slice_kind, KUBESVC_NAMESPACE, KUBESVC_NAME, &o, &out, &gone, e);
        json_decref(out);
        if (rc != 0 && e->code != API_NOT_FOUND) return -1;
        api_err_clear(e);
        api_err_init(e);
    }
    return ensure(k, k->slice_kind, k->slice_key, new_slice(k), slice_current, restore_slice, e);
}

static int sync_once(kubesvc *k, char *err, size_t n)
{
    api_err e;
    api_err_init(&e);
    int rc =
        ensure(k, k->svc_kind, k->svc_key, new_service(k), service_current, restore_service, &e);
    if (rc == 0)
        rc = ensure(k, k->ep_kind, k->ep_key, new_endpoints(k), endpoints_current,
                    restore_endpoints, &e);
    if (rc == 0) rc = ensure_slice(k, &e);
    if (rc != 0) snprintf(err, n, "%.200s", e.message);
    api_err_clear(&e);
    return rc;
}

/* ---- the thread ---- */

static bool watch_filter(void *arg, const store_event *ev)
{
    const kubesvc *k = arg;
    return !strcmp(ev->obj->key, k->svc_key) || !strcmp(ev->obj->key, k->ep_key) ||
           !strcmp(ev->obj->key, k->slice_key);
}

static void sync_and_log(kubesvc *k)
{
    char err[256] = "";
    if (sync_once(k, err, sizeof err) != 0 && strcmp(err, k->last_error) != 0)
        log_msg(LOG_WARN, "cannot reconcile the kubernetes service", "\"error\":\"%s\"", err);
    snprintf(k->last_error, sizeof k->last_error, "%s", err);
}

static void *run(void *arg)
{
    kubesvc *k = arg;
    pthread_setname_np(pthread_self(), "kubernetes-svc");
    bool expired = false;
    store_watch *w = NULL;
    int64_t due = 0;
    while (!atomic_load(&k->stop)) {
        if (!w) {
            w = store_watch_open_filtered(k->st, "", store_revision(k->st), watch_filter, k,
                                          &expired);
            due = 0; /* after the watch opens: a change after this pass is an event */
        }
        store_event ev;
        int64_t left = due - clock_mono_ms(); /* the next periodic check */
        int rc = w ? store_watch_next(w, &ev, left < 0 ? 0 : left > 60000 ? 60000 : (int)left) : -1;
        bool changed = false;
        while (rc == 1) {
            changed = true;
            store_obj_unref(ev.obj);
            store_obj_unref(ev.prev);
            rc = store_watch_next(w, &ev, 0);
        }
        if (rc < 0) {
            store_watch_close(w);
            w = NULL;
            if (!atomic_load(&k->stop)) {
                struct timespec ts = {0, WAIT_MS * 1000000L};
                nanosleep(&ts, NULL); /* pacing a failing open, not synchronisation */
            }
            continue;
        }
        int64_t now = clock_mono_ms();
        if (changed || now >= due) {
            sync_and_log(k);
            due = now + KUBESVC_INTERVAL_MS;
        }
    }
    store_watch_close(w);
    return NULL;
}

kubesvc *kubesvc_start(store *st, const kubesvc_config *cfg, char *err, size_t errlen)
{
    kubesvc *k = calloc(1, sizeof *k);
    if (!k || !(k->service_ip = strdup(cfg->service_ip)) || !(k->address = strdup(cfg->address))) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    k->st = st;
    k->port = cfg->port;
    atomic_init(&k->stop, false);
    k->svc_kind = api_kind_find("", "v1", "services");
    k->ep_kind = api_kind_find("", "v1", "endpoints");
    k->slice_kind = api_kind_find(DISCOVERY_GROUP, DISCOVERY_VERSION, "endpointslices");
    if (!k->svc_kind || !k->ep_kind || !k->slice_kind ||
        api_kind_key(k->slice_kind, KUBESVC_NAMESPACE, KUBESVC_NAME, k->slice_key,
                     sizeof k->slice_key) < 0 ||
        api_kind_key(k->svc_kind, KUBESVC_NAMESPACE, KUBESVC_NAME, k->svc_key, sizeof k->svc_key) <
            0 ||
        api_kind_key(k->ep_kind, KUBESVC_NAMESPACE, KUBESVC_NAME, k->ep_key, sizeof k->ep_key) <
            0) {
        snprintf(err, errlen, "kubernetes service: its kinds are not served");
        goto fail;
    }
    /* Now, so that a served cluster has them; a refusal (a quota in default)
     * is retried by the thread. */
    sync_and_log(k);
    if (pthread_create(&k->thread, NULL, run, k) != 0) {
        snprintf(err, errlen, "cannot start the kubernetes service controller");
        goto fail;
    }
    return k;
fail:
    if (k) {
        free(k->service_ip);
        free(k->address);
    }
    free(k);
    return NULL;
}

void kubesvc_stop(kubesvc *k)
{
    if (!k) return;
    atomic_store(&k->stop, true);
    store_watch_wake_all(k->st); /* its wait may be long */
    pthread_join(k->thread, NULL);
    free(k->service_ip);
    free(k->address);
    free(k);
}
