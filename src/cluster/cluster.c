/* cluster.c - cluster mode (see cluster.h and docs/cluster-mode.md). */
#include "cluster/cluster.h"

#include "api/crd_gen.h"
#include "api/kinds.h"
#include "cluster/counted_kinds.h"
#include "cluster/cq_guard.h"
#include "cluster/extender.h"
#include "cluster/leader.h"
#include "cluster/leave_guard.h"
#include "cluster/mirror.h"
#include "cluster/pool_sync.h"
#include "cluster/reconcile.h"
#include "cluster/release_guard.h"
#include "cluster/scheduler_config.h"
#include "core/b64.h"
#include "core/deferred_book.h"
#include "core/jdump.h"
#include "registry/registry.h"
#include "kube/kube.h"
#include "util/clock.h"
#include "util/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The path the webhooks are served at (server/webhook.c). */
#define WEBHOOK_PATH "/admission/v1/validate"
#define MUTATE_PATH "/admission/v1/mutate"
#define WEBHOOK_CONFIG_NAME "allot.dev"
/* The Lease the replicas elect a writer through, in allot's namespace. */
#define LEASE_NAME "allot"
/* How long the API server waits for an answer: short, so that a replica
 * that is gone costs a tenant write little (upstream's default is 10 s). */
#define WEBHOOK_TIMEOUT_S 5
#define REQUEST_TIMEOUT_MS 30000
/* How long a review waits for the mirror to hold the version it changes
 * (the watch brings it in milliseconds; a review has WEBHOOK_TIMEOUT_S). */
#define CATCH_UP_MS 2000

/* What allot's decisions read, as the cluster serves it. */
static const struct {
    const char *group, *version, *resource;
} watched[] = {
    {"", "v1", "namespaces"},
    {"", "v1", "resourcequotas"},
    {"", "v1", "pods"},
    {"", "v1", "limitranges"},
    {"capsule.clastix.io", "v1beta2", "resourcepools"},
    {"capsule.clastix.io", "v1beta2", "resourcepoolclaims"},
    {"capsule.clastix.io", "v1beta2", "customquotas"},
    {"capsule.clastix.io", "v1beta2", "globalcustomquotas"},
};
#define NWATCHED (sizeof watched / sizeof *watched)

/* One watched collection: what its reflector calls back with. */
typedef struct feed {
    cluster *c;
    const api_kind *k;
    kube_reflector *r;
} feed;

struct cluster {
    store *st;
    mirror *m;
    kube_client *kc;
    /* Out of the cluster: what is installed, retried until it is (the
     * installer thread; its own copies of the options it needs). */
    char *webhook_address, *ca_pem, *own_namespace;
    pthread_t installer;
    bool has_installer;
    pthread_mutex_t mu; /* stop, for the installer's waits */
    pthread_cond_t cv;
    bool stop;
    atomic_bool installed;
    /* watched[]'s, then the kinds custom quotas count (counted_kinds adds
     * them, on its thread; nfeeds grows only) */
    feed feeds[NWATCHED + COUNTED_KINDS_MAX];
    _Atomic size_t nfeeds;
    _Atomic(counted_kinds *) ck;
    leader *lead;
    _Atomic(pool_sync *) ps;
};

static void feed_replace(void *arg, json_t *items, const char *rv)
{
    feed *f = arg;
    char err[256];
    if (mirror_replace(f->c->m, f->k, items, rv, err, sizeof err) != 0)
        log_msg(LOG_ERROR, "cannot take in a cluster list", "\"resource\":\"%s\",\"error\":\"%s\"",
                f->k->resource, err);
    else
        log_msg(LOG_DEBUG, "cluster list taken in",
                "\"resource\":\"%s\",\"items\":%zu,\"resourceVersion\":\"%s\"", f->k->resource,
                json_array_size(items), rv ? rv : "");
}

static void feed_event(void *arg, const char *type, json_t *obj)
{
    feed *f = arg;
    char err[256];
    if (mirror_event(f->c->m, f->k, type, obj, err, sizeof err) != 0)
        log_msg(LOG_ERROR, "cannot take in a cluster event",
                "\"resource\":\"%s\",\"type\":\"%s\",\"error\":\"%s\"", f->k->resource, type, err);
}

static const kube_reflector_ops feed_ops = {feed_replace, feed_event};

/* Create obj at collection path `coll`, or replace the object of that name
 * (its current resourceVersion as precondition). 0 or -1 with err. */
static int apply_object(kube_client *kc, const char *coll, json_t *obj, char *err, size_t errlen)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    char *body = jdump(obj, NULL), *resp = NULL, path[512];
    long status = 0;
    if (!body || !name) return snprintf(err, errlen, "out of memory"), -1;
    int rc =
        kube_request(kc, "POST", coll, body, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err, errlen);
    if (rc == 0 && status == 409) {
        /* There already: replace it, at the version read. */
        free(resp);
        resp = NULL;
        snprintf(path, sizeof path, "%s/%s", coll, name);
        rc = kube_request(kc, "GET", path, NULL, NULL, REQUEST_TIMEOUT_MS, &status, &resp, err,
                          errlen);
        json_t *cur = rc == 0 && status == 200 ? json_loads(resp ? resp : "", 0, NULL) : NULL;
        const char *rv =
            json_string_value(json_object_get(json_object_get(cur, "metadata"), "resourceVersion"));
        if (rv) {
            json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion",
                                json_string(rv));
            free(body);
            body = jdump(obj, NULL);
            free(resp);
            resp = NULL;
            rc = body ? kube_request(kc, "PUT", path, body, NULL, REQUEST_TIMEOUT_MS, &status,
                                     &resp, err, errlen)
                      : -1;
        }
        json_decref(cur);
    }
    if (rc == 0 && (status < 200 || status > 299)) {
        snprintf(err, errlen, "%s %s: HTTP %ld: %.200s", coll, name, status, resp ? resp : "");
        rc = -1;
    }
    free(resp);
    free(body);
    return rc;
}

/* A webhook's clientConfig: url, or (NULL) the Service allot in
 * own_namespace at `path`, with ca_pem as its caBundle. New, or NULL. */
static json_t *webhook_client(const char *url, const char *path, const char *ca_pem,
                              const char *own_namespace)
{
    size_t calen = ca_pem ? strlen(ca_pem) : 0;
    char *ca64 = malloc(b64_encoded_len(calen) + 1);
    if (!ca64) return NULL;
    b64_encode((const unsigned char *)(ca_pem ? ca_pem : ""), calen, ca64);
    json_t *client = url ? json_pack("{s:s, s:s}", "url", url, "caBundle", ca64)
                         : json_pack("{s:{s:s, s:s, s:s}, s:s}", "service", "namespace",
                                     own_namespace ? own_namespace : "allot-system", "name",
                                     "allot", "path", path, "caBundle", ca64);
    free(ca64);
    return client;
}

/* The namespaceSelector that skips kube-system, the other system
 * namespaces and allot's own: allot being down must not stop what heals
 * the cluster. The label is set by the API server from 1.21 (on 1.20, by
 * allot: see docs/cluster-mode.md). New, or NULL. */
static json_t *not_system(const char *own_namespace)
{
    json_t *skip = json_pack("[s,s,s,s]", "kube-system", "kube-public", "kube-node-lease",
                             own_namespace ? own_namespace : "allot-system");
    return json_pack("{s:[{s:s, s:s, s:o}]}", "matchExpressions", "key",
                     "kubernetes.io/metadata.name", "operator", "NotIn", "values", skip);
}

/* The configuration object `kind` allot.dev holding `hooks`. New, or NULL. */
static json_t *webhook_config_object(const char *kind, json_t *hooks)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:O}", "apiVersion",
                     "admissionregistration.k8s.io/v1", "kind", kind, "metadata", "name",
                     WEBHOOK_CONFIG_NAME, "labels", "app.kubernetes.io/managed-by", "allot",
                     "webhooks", hooks);
}

json_t *cluster_webhook_config(const char *url, const char *ca_pem, const char *own_namespace)
{
    json_t *client = webhook_client(url, WEBHOOK_PATH, ca_pem, own_namespace);
    json_t *ns_sel = not_system(own_namespace);
    /* Claims and namespace updates: only in namespaces some pool selects
     * (marked by the pool writer, cluster/reconcile.h), so that allot down
     * stops no write outside any tenant's selection. */
    json_t *pooled = json_deep_copy(ns_sel);
    if (pooled)
        json_object_set_new(pooled, "matchLabels", json_pack("{s:s}", POOLED_LABEL, "true"));
    /* What custom quotas count: only in namespaces some quota covers (also
     * marked by the writer). */
    json_t *counted = json_deep_copy(ns_sel);
    if (counted)
        json_object_set_new(counted, "matchLabels", json_pack("{s:s}", COUNTED_LABEL, "true"));
    json_t *hooks = json_array();
    static const struct {
        const char *name, *group, *resource, *scope;
    } rules[] = {
        {"resourcepoolclaims.allot.dev", "capsule.clastix.io", "resourcepoolclaims", "Namespaced"},
        {"resourcepools.allot.dev", "capsule.clastix.io", "resourcepools", "Cluster"},
        {"customquotas.allot.dev", "capsule.clastix.io", "customquotas", "Namespaced"},
        {"globalcustomquotas.allot.dev", "capsule.clastix.io", "globalcustomquotas", "Cluster"},
        {"namespaces.allot.dev", "", "namespaces", "Cluster"},
        /* what custom quotas count: pods, and the kinds counted_kinds adds */
        {COUNTED_WEBHOOK, "", "pods", "Namespaced"},
    };
    for (size_t i = 0;
         client && ns_sel && pooled && counted && hooks && i < sizeof rules / sizeof *rules; i++) {
        bool ns = !strcmp(rules[i].resource, "namespaces");
        bool count = !strcmp(rules[i].resource, "pods");
        /* (the counted kinds' rules: pods until counted_kinds adds more) */
        const api_kind *pods = count ? api_kind_find("", "v1", "pods") : NULL;
        json_t *h = json_pack(
            "{s:s, s:O, s:o, s:s, s:s, s:i, s:[s,s], s:s}", "name", rules[i].name, "clientConfig",
            client, "rules",
            count ? counted_kinds_rules(&pods, pods ? 1 : 0)
                  : json_pack("[{s:[s], s:[s], s:[s], s:o, s:s}]", "apiGroups", rules[i].group,
                              "apiVersions", *rules[i].group ? "v1beta2" : "v1", "resources",
                              rules[i].resource, "operations",
                              ns ? json_pack("[s]", "UPDATE")
                                 : json_pack("[s,s,s]", "CREATE", "UPDATE", "DELETE"),
                              "scope", rules[i].scope),
            "failurePolicy", "Fail", "sideEffects", "NoneOnDryRun", "timeoutSeconds",
            WEBHOOK_TIMEOUT_S, "admissionReviewVersions", "v1", "v1beta1", "matchPolicy",
            "Equivalent");
        if (!h) continue;
        /* A namespaced rule is scoped by its namespace; a namespace update
         * by the namespace itself (its own labels). */
        bool claims = !strcmp(rules[i].resource, "resourcepoolclaims");
        if (!strcmp(rules[i].scope, "Namespaced"))
            json_object_set(h, "namespaceSelector", claims ? pooled : count ? counted : ns_sel);
        else if (ns)
            json_object_set(h, "objectSelector", pooled);
        json_array_append_new(hooks, h);
    }
    json_t *cfg = client && ns_sel && pooled && counted && hooks
                      ? webhook_config_object("ValidatingWebhookConfiguration", hooks)
                      : NULL;
    json_decref(client);
    json_decref(ns_sel);
    json_decref(pooled);
    json_decref(counted);
    json_decref(hooks);
    return cfg;
}

json_t *cluster_mutating_webhook_config(const char *url, const char *ca_pem,
                                        const char *own_namespace)
{
    json_t *client = webhook_client(url, MUTATE_PATH, ca_pem, own_namespace);
    /* Only namespaces labelled for deferred quota, never a system one
     * (docs/deferred-cluster.md): allot down stops no write elsewhere. */
    json_t *sel = not_system(own_namespace);
    if (sel)
        json_object_set_new(sel, "matchLabels",
                            json_pack("{s:s}", DQ_MODE_LABEL, DQ_MODE_DEFERRED));
    static const struct {
        const char *name, *resource;
        bool update;
    } rules[] = {
        {"pods.deferred.allot.dev", "pods", false},
        {"resourcequotas.deferred.allot.dev", "resourcequotas", true},
    };
    json_t *hooks = json_array();
    for (size_t i = 0; client && sel && hooks && i < sizeof rules / sizeof *rules; i++) {
        json_t *h = json_pack(
            "{s:s, s:O, s:[{s:[s], s:[s], s:[s], s:o, s:s}], s:s, s:s, s:i, s:[s,s], s:s, s:s, "
            "s:O}",
            "name", rules[i].name, "clientConfig", client, "rules", "apiGroups", "", "apiVersions",
            "v1", "resources", rules[i].resource, "operations",
            rules[i].update ? json_pack("[s,s]", "CREATE", "UPDATE") : json_pack("[s]", "CREATE"),
            "scope", "Namespaced", "failurePolicy", "Fail", "sideEffects", "None", "timeoutSeconds",
            WEBHOOK_TIMEOUT_S, "admissionReviewVersions", "v1", "v1beta1", "matchPolicy",
            "Equivalent", "reinvocationPolicy", "Never", "namespaceSelector", sel);
        if (h) json_array_append_new(hooks, h);
    }
    json_t *cfg = client && sel && hooks
                      ? webhook_config_object("MutatingWebhookConfiguration", hooks)
                      : NULL;
    json_decref(client);
    json_decref(sel);
    json_decref(hooks);
    return cfg;
}

/* On Kubernetes before 1.21 the API server does not label namespaces with
 * their names; the webhooks' selectors need it on the namespaces they must
 * never be sent (a merge patch: idempotent, harmless on newer clusters). */
static void label_system_namespaces(kube_client *kc, const char *own)
{
    const char *names[] = {"kube-system", "kube-public", "kube-node-lease", own};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (!names[i]) continue;
        char path[300], body[400], err[256], *resp = NULL;
        long status = 0;
        snprintf(path, sizeof path, "/api/v1/namespaces/%s", names[i]);
        snprintf(body, sizeof body,
                 "{\"metadata\":{\"labels\":{\"kubernetes.io/metadata.name\":\"%s\"}}}", names[i]);
        if (kube_request(kc, "PATCH", path, body, "application/merge-patch+json",
                         REQUEST_TIMEOUT_MS, &status, &resp, err, sizeof err) != 0 ||
            (status != 200 && status != 404))
            log_msg(LOG_WARN, "cannot label a system namespace",
                    "\"namespace\":\"%s\",\"status\":%ld", names[i], status);
        free(resp);
    }
}

/* Out of the cluster: the CRDs and the webhook configuration, pointing at
 * this allotd. */
static int install(cluster *c, char *err, size_t errlen)
{
    json_t *crds = crd_gen_all(err, errlen);
    if (!crds) return -1;
    int rc = 0;
    size_t i;
    json_t *crd;
    json_array_foreach(json_object_get(crds, "items"), i, crd)
    {
        if (rc == 0)
            rc = apply_object(c->kc, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd,
                              err, errlen);
    }
    json_decref(crds);
    if (rc != 0) return -1;
    /* allot's own namespace holds its Lease. */
    char nsbody[400], *resp = NULL;
    long status = 0;
    snprintf(nsbody, sizeof nsbody,
             "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}",
             c->own_namespace);
    if (kube_request(c->kc, "POST", "/api/v1/namespaces", nsbody, NULL, REQUEST_TIMEOUT_MS, &status,
                     &resp, err, errlen) != 0 ||
        (status != 201 && status != 409)) {
        free(resp);
        if (status) snprintf(err, errlen, "cannot create namespace: HTTP %ld", status);
        return -1;
    }
    free(resp);
    label_system_namespaces(c->kc, c->own_namespace);
    char url[400];
    snprintf(url, sizeof url, "https://%s%s", c->webhook_address, WEBHOOK_PATH);
    json_t *cfg = cluster_webhook_config(url, c->ca_pem, c->own_namespace);
    rc = cfg ? apply_object(c->kc,
                            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                            cfg, err, errlen)
             : (snprintf(err, errlen, "out of memory"), -1);
    json_decref(cfg);
    if (rc != 0) return rc;
    snprintf(url, sizeof url, "https://%s%s", c->webhook_address, MUTATE_PATH);
    cfg = cluster_mutating_webhook_config(url, c->ca_pem, c->own_namespace);
    rc = cfg ? apply_object(c->kc,
                            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                            cfg, err, errlen)
             : (snprintf(err, errlen, "out of memory"), -1);
    json_decref(cfg);
    return rc;
}

static void on_leading(void *arg, bool leading)
{
    cluster *c = arg;
    (void)leading;
    pool_sync_kick(atomic_load(&c->ps));
}

static bool synced_arg(void *arg)
{
    return cluster_synced(arg);
}

/* Install until it is done, backing off (1 s doubling to 30 s) while the
 * cluster cannot be reached: allotd serves (not ready) meanwhile, as a
 * replica in the cluster waits for its API server. */
static void *install_loop(void *arg)
{
    cluster *c = arg;
    int64_t wait_ms = 1000;
    for (;;) {
        char err[512];
        if (install(c, err, sizeof err) == 0) {
            atomic_store(&c->installed, true);
            /* (the install wrote the counted webhook's first rules) */
            counted_kinds_kick(atomic_load(&c->ck));
            log_msg(LOG_INFO, "CRDs and webhooks installed", "\"webhookAddress\":\"%s\"",
                    c->webhook_address);
            return NULL;
        }
        log_msg(LOG_WARN, "cannot install the CRDs and webhooks yet",
                "\"error\":\"%s\",\"retryMs\":%lld", err, (long long)wait_ms);
        pthread_mutex_lock(&c->mu);
        struct timespec due = clock_deadline(CLOCK_MONOTONIC, wait_ms);
        while (!c->stop && pthread_cond_timedwait(&c->cv, &c->mu, &due) == 0) {
        }
        bool stop = c->stop;
        pthread_mutex_unlock(&c->mu);
        if (stop) return NULL;
        wait_ms = wait_ms * 2 > 30000 ? 30000 : wait_ms * 2;
    }
}

/* Start feeding kind k's collection into the mirror. 0 or -1. Under c->mu
 * (nfeeds grows only; readers see each feed whole before it is counted). */
static int start_feed(cluster *c, const api_kind *k, char *err, size_t errlen)
{
    size_t n = atomic_load(&c->nfeeds);
    if (n == sizeof c->feeds / sizeof *c->feeds) return snprintf(err, errlen, "too many kinds"), -1;
    feed *f = &c->feeds[n];
    *f = (feed){.c = c, .k = k};
    char path[256];
    api_kind_path(k, "", "", "", path, sizeof path);
    if (!(f->r = kube_reflector_start(c->kc, path, NULL, &feed_ops, f, err, errlen))) return -1;
    atomic_store(&c->nfeeds, n + 1);
    return 0;
}

/* counted_kinds' watch: a reflector for k, unless one runs already. */
static int watch_kind(void *arg, const api_kind *k)
{
    cluster *c = arg;
    char err[256];
    pthread_mutex_lock(&c->mu);
    size_t n = atomic_load(&c->nfeeds), i = 0;
    while (i < n && c->feeds[i].k != k)
        i++;
    int rc = i < n ? 0 : start_feed(c, k, err, sizeof err);
    pthread_mutex_unlock(&c->mu);
    if (rc != 0)
        log_msg(LOG_WARN, "cannot watch a kind custom quotas count",
                "\"resource\":\"%s\",\"error\":\"%s\"", k->resource, err);
    return rc;
}

cluster *cluster_start(store *st, const cluster_opts *o, char *err, size_t errlen)
{
    kube_config kcfg = {0};
    if (kube_config_load(o->kubeconfig, &kcfg, err, errlen) != 0) return NULL;
    cluster *c = calloc(1, sizeof *c);
    if (!c) {
        kube_config_free(&kcfg);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->st = st;
    pthread_mutex_init(&c->mu, NULL);
    clock_cond_init(&c->cv);
    c->kc = kube_client_new(&kcfg, err, errlen);
    kube_config_free(&kcfg);
    if (!c->kc) goto fail;
    if (!(c->m = mirror_new(st))) goto oom;
    c->own_namespace = strdup(o->own_namespace ? o->own_namespace : "allot-system");
    if (!c->own_namespace) goto oom;
    if (!o->webhook_address) {
        atomic_store(&c->installed, true); /* (the manifests did) */
    } else {
        if (!(c->webhook_address = strdup(o->webhook_address)) ||
            !(c->ca_pem = strdup(o->ca_pem ? o->ca_pem : "")))
            goto oom;
        if (pthread_create(&c->installer, NULL, install_loop, c) != 0) {
            snprintf(err, errlen, "cannot start the installer");
            goto fail;
        }
        c->has_installer = true;
    }
    for (size_t i = 0; i < NWATCHED; i++) {
        const api_kind *k =
            api_kind_find(watched[i].group, watched[i].version, watched[i].resource);
        if (!k) {
            snprintf(err, errlen, "no kind %s", watched[i].resource);
            goto fail;
        }
        pthread_mutex_lock(&c->mu);
        int rc = start_feed(c, k, err, errlen);
        pthread_mutex_unlock(&c->mu);
        if (rc != 0) goto fail;
    }
    counted_kinds *ck = counted_kinds_start(st, c->kc, watch_kind, c, err, errlen);
    if (!ck) goto fail;
    atomic_store(&c->ck, ck);
    /* One replica writes what the books decide: the Lease's holder. */
    char identity[254], host[200] = "allotd", uid[37];
    gethostname(host, sizeof host - 1);
    reg_new_uid(uid);
    snprintf(identity, sizeof identity, "%.200s_%.36s", host, uid);
    if (!(c->lead = leader_start(c->kc, c->own_namespace, LEASE_NAME, identity, on_leading, c, err,
                                 errlen)))
        goto fail;
    pool_sync *ps = pool_sync_start(st, c->m, c->kc, c->lead, synced_arg, c, err, errlen);
    if (!ps) goto fail;
    atomic_store(&c->ps, ps);
    log_msg(LOG_INFO, "cluster mode started", "\"watched\":%zu,\"identity\":\"%s\"", NWATCHED,
            identity);
    return c;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    cluster_stop(c);
    return NULL;
}

int cluster_admit_guard(cluster *c, const struct ar_request *r, api_err *e)
{
    int rc = release_guard(c->kc, r, e);
    if (rc == 0) rc = leave_guard(c->kc, c->st, c->m, r, e);
    return rc == 0 ? cq_guard(c->kc, c->st, r, e) : rc;
}

int cluster_admit_mutate(cluster *c, const struct ar_request *r, json_t **patch, api_err *e)
{
    (void)c;
    *patch = NULL;
    /* (the configuration sends only deferred namespaces' creates of pods
     * and writes of quotas: its namespaceSelector) */
    if (*r->resource.group || *r->sub_resource || !r->object) return 0;
    if (!strcmp(r->resource.name, "pods") && r->op == AR_CREATE) {
        const char *node =
            json_string_value(json_object_get(json_object_get(r->object, "spec"), "nodeName"));
        if (node && *node) /* it would never meet the scheduler, so never allot's bind */
            return api_err_set(e, API_FORBIDDEN,
                               "pods \"%s\" is forbidden: namespace %s is under deferred quota "
                               "(%s=%s): a pod must be scheduled, not created on a node",
                               r->name, r->namespace_, DQ_MODE_LABEL, DQ_MODE_DEFERRED);
        *patch = dq_pod_patch(r->object, SCHEDULER_MANAGED_RESOURCE);
    } else if (!strcmp(r->resource.name, "resourcequotas") &&
               (r->op == AR_CREATE || r->op == AR_UPDATE)) {
        *patch = dq_quota_patch(r->object, r->op == AR_UPDATE ? r->old_object : NULL);
    }
    return 0;
}

int cluster_extender_filter(cluster *c, const char *body, size_t len, char **out)
{
    return extender_filter(c->kc, c->st, body, len, out);
}

int cluster_extender_bind(cluster *c, const char *body, size_t len, char **out)
{
    return extender_bind(c->kc, c->st, body, len, out);
}

bool cluster_admit_dry_runs(const struct ar_request *r)
{
    return !strcmp(r->resource.group, "capsule.clastix.io") ||
           (!*r->resource.group && !strcmp(r->resource.name, "namespaces"));
}

int cluster_admit_catch_up(cluster *c, const struct ar_request *r, api_err *e)
{
    if ((r->op != AR_UPDATE && r->op != AR_DELETE) || !r->old_object) return 0;
    const api_kind *k = api_kind_find(r->resource.group, r->resource.version, r->resource.name);
    const char *rv = json_string_value(
        json_object_get(json_object_get(r->old_object, "metadata"), "resourceVersion"));
    char key[700];
    if (!k || !rv || !*rv || !*r->name ||
        api_kind_key(k, k->namespaced ? r->namespace_ : "", r->name, key, sizeof key) < 0)
        return 0;
    if (mirror_wait_crv(c->m, key, rv, CATCH_UP_MS)) return 0;
    return api_err_set(e, API_UNAVAILABLE,
                       "allot has not seen %s \"%s\" at resourceVersion %s yet; try again",
                       r->resource.name, r->name, rv);
}

void cluster_admit_undo(cluster *c, const struct ar_request *r)
{
    leave_guard_undo(c->kc, c->st, r);
}

bool cluster_synced(const cluster *c)
{
    if (!atomic_load(&((cluster *)c)->installed)) return false;
    /* (the kinds custom quotas count come later: a quota is recounted only
     * once they are listed, cluster/counted_kinds.h) */
    if (atomic_load(&((cluster *)c)->nfeeds) < NWATCHED) return false;
    for (size_t i = 0; i < NWATCHED; i++)
        if (!kube_reflector_synced(c->feeds[i].r)) return false;
    return true;
}

void cluster_stop(cluster *c)
{
    if (!c) return;
    if (c->has_installer) {
        pthread_mutex_lock(&c->mu);
        c->stop = true;
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->installer, NULL);
    }
    /* (the leader's last on_change, at its stop, must find no writer) */
    pool_sync_stop(atomic_exchange(&c->ps, NULL));
    leader_stop(c->lead);                              /* (gives the Lease up) */
    counted_kinds_stop(atomic_exchange(&c->ck, NULL)); /* (before the feeds: it adds to them) */
    for (size_t i = 0; i < atomic_load(&c->nfeeds); i++)
        kube_reflector_stop(c->feeds[i].r);
    mirror_free(c->m);
    kube_client_free(c->kc);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c->webhook_address);
    free(c->ca_pem);
    free(c->own_namespace);
    free(c);
}
