/* kinds.c - the table of served kinds (see kinds.h). */
#include "api/kinds.h"

#include "api/apps_validation.h"
#include "api/batch_kinds.h"
#include "api/config_validation.h"
#include "api/core_validation.h"
#include "api/crd.h"
#include "api/custom_quota_kinds.h"
#include "api/discovery_kinds.h"
#include "api/limitrange.h"
#include "api/objects.h"
#include "api/pod_validation.h"
#include "api/pool_kinds.h"
#include "api/priority.h"
#include "api/rbac_kinds.h"
#include "api/rq_validation.h"
#include "api/schema.h"
#include "api/validation.h"
#include "core/dbuf.h"
#include "core/sched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static const api_field pod_fields[] = {
    {"spec.nodeName", "spec.nodeName", NULL},
    {"spec.restartPolicy", "spec.restartPolicy", NULL},
    {"spec.schedulerName", "spec.schedulerName", NULL},
    {"spec.serviceAccountName", "spec.serviceAccountName", NULL},
    {"spec.hostNetwork", "spec.hostNetwork", "false"},
    {"status.phase", "status.phase", NULL},
    {"status.podIP", "status.podIP", NULL},
    {"status.nominatedNodeName", "status.nominatedNodeName", NULL},
    /* An allot extension (upstream has no such field): the ResourceQuota a
     * pod waits on under deferred quota, read from the PodScheduled condition
     * the scheduler writes; "" for every other pod. `status.pendingOnQuota!=`
     * selects every pod waiting on quota. */
    {"status.pendingOnQuota", NULL, NULL, sched_pod_pending_quota},
    {NULL, NULL, NULL},
};
static const api_field event_fields[] = {
    {"involvedObject.kind", "involvedObject.kind", NULL},
    {"involvedObject.namespace", "involvedObject.namespace", NULL},
    {"involvedObject.name", "involvedObject.name", NULL},
    {"involvedObject.uid", "involvedObject.uid", NULL},
    {"involvedObject.apiVersion", "involvedObject.apiVersion", NULL},
    {"involvedObject.resourceVersion", "involvedObject.resourceVersion", NULL},
    {"involvedObject.fieldPath", "involvedObject.fieldPath", NULL},
    {"reason", "reason", NULL},
    {"reportingComponent", "reportingComponent", NULL},
    {"source", "source.component", NULL},
    {"type", "type", NULL},
    {NULL, NULL, NULL},
};
static const api_field secret_fields[] = {{"type", "type", NULL}, {NULL, NULL, NULL}};
static const api_field namespace_fields[] = {{"status.phase", "status.phase", NULL},
                                             {NULL, NULL, NULL}};
static const api_field node_fields[] = {{"spec.unschedulable", "spec.unschedulable", "false"},
                                        {NULL, NULL, NULL}};
static const api_field replicas_fields[] = {{"status.replicas", "status.replicas", "0"},
                                            {NULL, NULL, NULL}};

/* upstream's Job field selector: status.successful */
static const api_field job_fields[] = {{"status.successful", "status.succeeded", "0"},
                                       {NULL, NULL, NULL}};

#define CORE "", "v1"
static const api_kind builtin[] = {
    {CORE, "Namespace", "namespaces", "namespace", "ns", NULL, false, API_SUB_STATUS,
     API_NAME_LABEL, namespace_fields, namespace_defaults, namespace_validate, NULL,
     namespace_validate_update,
     API_KIND_NO_GENERATION | API_KIND_DELETE_RETURNS_OBJECT | API_KIND_NAMESPACE},
    {CORE, "Pod", "pods", "pod", "po", "all", true,
     API_SUB_STATUS | API_SUB_BINDING | API_SUB_RESIZE | API_SUB_LOG, API_NAME_SUBDOMAIN,
     pod_fields, pod_defaults, pod_validate, NULL, pod_validate_update,
     API_KIND_GRACEFUL | API_KIND_DELETE_RETURNS_OBJECT},
    {CORE, "Node", "nodes", "node", "no", NULL, false, API_SUB_STATUS, API_NAME_SUBDOMAIN,
     node_fields, NULL, node_validate, NULL, node_validate_update,
     API_KIND_STATUS_ON_CREATE | API_KIND_NO_GENERATION},
    {CORE, "ResourceQuota", "resourcequotas", "resourcequota", "quota", NULL, true, API_SUB_STATUS,
     API_NAME_SUBDOMAIN, NULL, NULL, resourcequota_validate, resourcequota_warnings,
     resourcequota_validate_update},
    {CORE, "LimitRange", "limitranges", "limitrange", "limits", NULL, true, 0, API_NAME_SUBDOMAIN,
     NULL, NULL, limitrange_validate},
    {CORE, "Service", "services", "service", "svc", "all", true, API_SUB_STATUS, API_NAME_DNS1035,
     NULL, service_defaults, service_validate, NULL, service_validate_update},
    {CORE, "Endpoints", "endpoints", "endpoints", "ep", NULL, true, 0, API_NAME_SUBDOMAIN, NULL,
     endpoints_defaults, endpoints_validate},
    {CORE, "PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", "pvc", NULL,
     true, API_SUB_STATUS, API_NAME_SUBDOMAIN, NULL, pvc_defaults, pvc_validate, NULL,
     pvc_validate_update},
    {CORE, "ConfigMap", "configmaps", "configmap", "cm", NULL, true, 0, API_NAME_SUBDOMAIN, NULL,
     NULL, configmap_validate},
    {CORE, "Secret", "secrets", "secret", NULL, NULL, true, 0, API_NAME_SUBDOMAIN, secret_fields,
     secret_defaults, secret_validate},
    {CORE, "ReplicationController", "replicationcontrollers", "replicationcontroller", "rc", "all",
     true, API_SUB_STATUS | API_SUB_SCALE, API_NAME_SUBDOMAIN, replicas_fields,
     replicationcontroller_defaults, replicationcontroller_validate},
    {CORE, "ServiceAccount", "serviceaccounts", "serviceaccount", "sa", NULL, true, API_SUB_TOKEN,
     API_NAME_SUBDOMAIN, NULL, NULL, NULL},
    {CORE, "Event", "events", "event", "ev", NULL, true, 0, API_NAME_PATH, event_fields, NULL,
     NULL},
    {"scheduling.k8s.io", "v1", "PriorityClass", "priorityclasses", "priorityclass", "pc", NULL,
     false, 0, API_NAME_SUBDOMAIN, NULL, priorityclass_defaults, priorityclass_validate},
    {DISCOVERY_GROUP, DISCOVERY_VERSION, "EndpointSlice", "endpointslices", "endpointslice", NULL,
     NULL, true, 0, API_NAME_SUBDOMAIN, NULL, endpointslice_defaults, endpointslice_validate, NULL,
     endpointslice_validate_update},
    {"storage.k8s.io", "v1", "StorageClass", "storageclasses", "storageclass", "sc", NULL, false, 0,
     API_NAME_SUBDOMAIN, NULL, storageclass_defaults, NULL},
    /* apps/v1 (api/apps_validation.h): the selector is immutable. */
    {"apps", "v1", "Deployment", "deployments", "deployment", "deploy", "all", true,
     API_SUB_STATUS | API_SUB_SCALE, API_NAME_SUBDOMAIN, NULL, deployment_defaults,
     deployment_validate, NULL, apps_validate_update},
    {"apps", "v1", "ReplicaSet", "replicasets", "replicaset", "rs", "all", true,
     API_SUB_STATUS | API_SUB_SCALE, API_NAME_SUBDOMAIN, replicas_fields, replicas_defaults,
     replicaset_validate, NULL, apps_validate_update},
    {"apps", "v1", "StatefulSet", "statefulsets", "statefulset", "sts", "all", true,
     API_SUB_STATUS | API_SUB_SCALE, API_NAME_SUBDOMAIN, NULL, statefulset_defaults,
     statefulset_validate, NULL, apps_validate_update},
    {"apps", "v1", "DaemonSet", "daemonsets", "daemonset", "ds", "all", true, API_SUB_STATUS,
     API_NAME_SUBDOMAIN, NULL, daemonset_defaults, daemonset_validate, NULL, apps_validate_update},
    /* batch/v1 (api/batch_kinds.h) */
    {"batch", "v1", "Job", "jobs", "job", NULL, "all", true, API_SUB_STATUS, API_NAME_SUBDOMAIN,
     job_fields, job_defaults, job_validate, NULL, job_validate_update},
    {"batch", "v1", "CronJob", "cronjobs", "cronjob", "cj", "all", true, API_SUB_STATUS,
     API_NAME_SUBDOMAIN, NULL, cronjob_defaults, cronjob_validate},
    /* Capsule's CRDs (api/pool_kinds.h): custom resources, named as DNS subdomains. */
    {POOL_GROUP, POOL_VERSION, "ResourcePool", "resourcepools", "resourcepool", "quotapool", NULL,
     false, API_SUB_STATUS, API_NAME_SUBDOMAIN, NULL, resourcepool_defaults, resourcepool_validate},
    {POOL_GROUP, POOL_VERSION, "ResourcePoolClaim", "resourcepoolclaims", "resourcepoolclaim", NULL,
     NULL, true, API_SUB_STATUS, API_NAME_SUBDOMAIN, NULL, resourcepoolclaim_defaults,
     resourcepoolclaim_validate},
    {CQ_GROUP, CQ_VERSION, "CustomQuota", "customquotas", "customquota", "cq", NULL, true,
     API_SUB_STATUS, API_NAME_SUBDOMAIN, NULL, customquota_defaults, customquota_validate},
    {CQ_GROUP, CQ_VERSION, "GlobalCustomQuota", "globalcustomquotas", "globalcustomquota", "gcq",
     NULL, false, API_SUB_STATUS, API_NAME_SUBDOMAIN, NULL, globalcustomquota_defaults,
     globalcustomquota_validate},
    /* rbac.authorization.k8s.io (api/rbac_kinds.h): names are path segments. */
    {RBAC_GROUP, RBAC_VERSION, "Role", "roles", "role", NULL, NULL, true, 0, API_NAME_PATH, NULL,
     NULL, role_validate, NULL, NULL, API_KIND_NO_GENERATION},
    {RBAC_GROUP, RBAC_VERSION, "RoleBinding", "rolebindings", "rolebinding", NULL, NULL, true, 0,
     API_NAME_PATH, NULL, rolebinding_defaults, rolebinding_validate, NULL,
     rbac_binding_validate_update, API_KIND_NO_GENERATION},
    {RBAC_GROUP, RBAC_VERSION, "ClusterRole", "clusterroles", "clusterrole", NULL, NULL, false, 0,
     API_NAME_PATH, NULL, NULL, clusterrole_validate, NULL, NULL, API_KIND_NO_GENERATION},
    {RBAC_GROUP, RBAC_VERSION, "ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding",
     NULL, NULL, false, 0, API_NAME_PATH, NULL, clusterrolebinding_defaults,
     clusterrolebinding_validate, NULL, rbac_binding_validate_update, API_KIND_NO_GENERATION},
    /* apiextensions.k8s.io (api/crd.h): a delete adds the cleanup finalizer. */
    {CRD_GROUP, CRD_VERSION, "CustomResourceDefinition", CRD_RESOURCE, "customresourcedefinition",
     "crd,crds", NULL, false, API_SUB_STATUS, API_NAME_SUBDOMAIN, NULL, crd_defaults, crd_validate,
     crd_warnings, crd_validate_update, 0, .on_delete = crd_on_delete},
};
#undef CORE

#define NBUILTIN (sizeof builtin / sizeof *builtin)

/* Slots after the built-in rows. A slot is written once with a row and then
 * only replaced (never emptied), and nslots only grows, so every index below
 * api_kind_count() names a row for the rest of the process. Writers take
 * publish_mu; readers take nothing (acquire loads pairing with the release
 * stores below). */
#define MAX_SLOTS 16384 /* kinds defined at run time, over the life of the process */
static _Atomic(const api_kind *) slots[MAX_SLOTS];
static atomic_size_t nslots;
static atomic_uint generation;
static pthread_mutex_t publish_mu = PTHREAD_MUTEX_INITIALIZER;

size_t api_kind_count(void)
{
    return NBUILTIN + atomic_load_explicit(&nslots, memory_order_acquire);
}

const api_kind *api_kind_at(size_t i)
{
    if (i < NBUILTIN) return &builtin[i];
    i -= NBUILTIN;
    return i < atomic_load_explicit(&nslots, memory_order_acquire)
               ? atomic_load_explicit(&slots[i], memory_order_acquire)
               : NULL;
}

static bool same_gvr(const api_kind *a, const api_kind *b)
{
    return !strcmp(a->group, b->group) && !strcmp(a->version, b->version) &&
           !strcmp(a->resource, b->resource);
}

int api_kind_publish(const api_kind *k, const api_kind **old)
{
    if (old) *old = NULL;
    for (size_t i = 0; i < NBUILTIN; i++)
        if (same_gvr(&builtin[i], k)) return -1;
    pthread_mutex_lock(&publish_mu);
    size_t n = atomic_load_explicit(&nslots, memory_order_relaxed), i = 0;
    while (i < n && !same_gvr(atomic_load_explicit(&slots[i], memory_order_relaxed), k))
        i++;
    int rc = 0;
    if (i < n) {
        const api_kind *prev = atomic_exchange_explicit(&slots[i], k, memory_order_acq_rel);
        if (old) *old = prev;
    } else if (n == MAX_SLOTS) {
        rc = -1;
    } else {
        /* the row first, then the count that makes it visible */
        atomic_store_explicit(&slots[n], k, memory_order_release);
        atomic_store_explicit(&nslots, n + 1, memory_order_release);
    }
    if (rc == 0) atomic_fetch_add_explicit(&generation, 1, memory_order_acq_rel);
    pthread_mutex_unlock(&publish_mu);
    return rc;
}

void api_kind_forget_runtime(void)
{
    pthread_mutex_lock(&publish_mu);
    size_t n = atomic_load_explicit(&nslots, memory_order_relaxed), kept = 0;
    for (size_t i = 0; i < n; i++) {
        const api_kind *k = atomic_load_explicit(&slots[i], memory_order_relaxed);
        if (!(k->flags & API_KIND_RUNTIME))
            atomic_store_explicit(&slots[kept++], k, memory_order_relaxed);
    }
    atomic_store_explicit(&nslots, kept, memory_order_release);
    atomic_fetch_add_explicit(&generation, 1, memory_order_acq_rel);
    pthread_mutex_unlock(&publish_mu);
}

int api_kind_register(const api_kind *k)
{
    return api_kind_publish(k, NULL);
}

unsigned api_kind_generation(void)
{
    return atomic_load_explicit(&generation, memory_order_acquire);
}

bool api_kind_served(const api_kind *k)
{
    return !(k->flags & API_KIND_UNSERVED);
}

bool api_kind_primary(const api_kind *k)
{
    return !(k->flags & API_KIND_SECONDARY);
}

const api_kind *api_kind_find(const char *group, const char *version, const char *resource)
{
    size_t n = api_kind_count();
    for (size_t i = 0; i < n; i++) {
        const api_kind *k = api_kind_at(i);
        if (api_kind_served(k) && strcmp(k->group, group) == 0 &&
            strcmp(k->version, version) == 0 && strcmp(k->resource, resource) == 0)
            return k;
    }
    return NULL;
}

const api_kind *api_kind_current(const api_kind *k)
{
    if (!(k->flags & API_KIND_RUNTIME)) return k;
    return api_kind_find(k->group, k->version, k->resource);
}

const api_kind *api_kind_by_kind(const char *api_version, const char *kind)
{
    char av[256];
    size_t n = api_kind_count();
    for (size_t i = 0; i < n; i++) {
        const api_kind *k = api_kind_at(i);
        if (!api_kind_served(k) || strcmp(k->kind, kind) != 0) continue;
        api_kind_api_version(k, av, sizeof av);
        if (strcmp(av, api_version) == 0) return k;
    }
    return NULL;
}

void api_kind_list_kind(const api_kind *k, char *buf, size_t n)
{
    if (k->list_kind)
        snprintf(buf, n, "%s", k->list_kind);
    else
        snprintf(buf, n, "%sList", k->kind);
}

void api_kind_api_version(const api_kind *k, char *buf, size_t n)
{
    if (*k->group)
        snprintf(buf, n, "%s/%s", k->group, k->version);
    else
        snprintf(buf, n, "%s", k->version);
}

void api_kind_store_resource(const api_kind *k, char *buf, size_t n)
{
    if (*k->group)
        snprintf(buf, n, "%s.%s", k->resource, k->group);
    else
        snprintf(buf, n, "%s", k->resource);
}

const api_kind *api_kind_for_key(const char *key)
{
    const char *slash = strchr(key, '/');
    size_t n = slash ? (size_t)(slash - key) : strlen(key);
    size_t nk = api_kind_count();
    for (size_t i = 0; i < nk; i++) {
        const api_kind *k = api_kind_at(i);
        if (!api_kind_primary(k)) continue;
        size_t rl = strlen(k->resource);
        /* "<resource>" for the core group, "<resource>.<group>" otherwise */
        if (rl > n || strncmp(key, k->resource, rl) != 0) continue;
        if (!*k->group ? rl == n
                       : n == rl + 1 + strlen(k->group) && key[rl] == '.' &&
                             strncmp(key + rl + 1, k->group, n - rl - 1) == 0)
            return k;
    }
    return NULL;
}

int api_kind_path(const api_kind *k, const char *ns, const char *name, const char *sub, char *buf,
                  size_t n)
{
    int len = snprintf(buf, n, "%s%s/%s%s%s/%s%s%s%s%s", *k->group ? "/apis/" : "/api", k->group,
                       k->version, *ns ? "/namespaces/" : "", ns, k->resource, *name ? "/" : "",
                       name, *sub ? "/" : "", sub);
    return len < 0 || (size_t)len >= n ? -1 : len;
}

int api_kind_key(const api_kind *k, const char *ns, const char *name, char *buf, size_t n)
{
    char res[256];
    api_kind_store_resource(k, res, sizeof res);
    int len = snprintf(buf, n, "%s/%s/%s", res, k->namespaced && ns ? ns : "", name ? name : "");
    return len < 0 || (size_t)len >= n ? -1 : len;
}

json_t *api_json_path(const json_t *obj, const char *dotted)
{
    char seg[256];
    const json_t *cur = obj;
    while (cur && *dotted) {
        const char *dot = strchr(dotted, '.');
        size_t len = dot ? (size_t)(dot - dotted) : strlen(dotted);
        if (len >= sizeof seg) return NULL;
        memcpy(seg, dotted, len);
        seg[len] = '\0';
        cur = json_object_get(cur, seg);
        dotted += len + (dot ? 1 : 0);
    }
    return (json_t *)cur;
}

static void field_value(const json_t *v, const char *dflt, char *buf, size_t n)
{
    if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "true" : "false");
    else if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else
        snprintf(buf, n, "%s", dflt ? dflt : "");
}

static int pack(dbuf *b, const char *label, const char *val)
{
    return dbuf_add(b, label, strlen(label) + 1) | dbuf_add(b, val, strlen(val) + 1);
}

static int pack_json(dbuf *b, const char *label, const json_t *v, const char *dflt)
{
    char val[1024];
    field_value(v, dflt, val, sizeof val);
    return pack(b, label, val);
}

static int pack_field(dbuf *b, const api_field *af, const json_t *obj)
{
    if (!af->derive) return pack_json(b, af->label, api_json_path(obj, af->path), af->dflt);
    char val[1024];
    af->derive(obj, val, sizeof val);
    return pack(b, af->label, val);
}

char *api_kind_fields_packed(const api_kind *k, const json_t *obj)
{
    dbuf b;
    dbuf_init(&b, 1 << 20);
    const json_t *meta = json_object_get(obj, "metadata");
    int rc = pack_json(&b, "metadata.name", json_object_get(meta, "name"), NULL);
    if (k->namespaced)
        rc |= pack_json(&b, "metadata.namespace", json_object_get(meta, "namespace"), NULL);
    for (const api_field *af = k->fields; af && af->label; af++)
        rc |= pack_field(&b, af, obj);
    rc |= dbuf_add(&b, "", 1);
    if (rc != 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_take(&b, NULL);
}

json_t *api_fields_unpack(const char *packed)
{
    json_t *f = json_object();
    while (packed && *packed) {
        const char *val = packed + strlen(packed) + 1;
        json_object_set_new(f, packed, json_string(val));
        packed = val + strlen(val) + 1;
    }
    return f;
}

const char *api_fields_get(const char *packed, const char *label)
{
    while (packed && *packed) {
        const char *val = packed + strlen(packed) + 1;
        if (!strcmp(packed, label)) return val;
        packed = val + strlen(val) + 1;
    }
    return NULL;
}

bool api_kind_has_field(const api_kind *k, const char *label)
{
    if (strcmp(label, "metadata.name") == 0 || strcmp(label, "metadata.namespace") == 0)
        return true;
    for (const api_field *af = k->fields; af && af->label; af++)
        if (strcmp(af->label, label) == 0) return true;
    return false;
}

const sch_msg *api_kind_schema(const api_kind *k)
{
    char av[256];
    api_kind_api_version(k, av, sizeof av);
    return sch_kind(av, k->kind);
}

int api_kind_name_rule(const api_kind *k)
{
    switch (k->name_rule) {
    case API_NAME_LABEL:
        return VAL_NAME_LABEL;
    case API_NAME_DNS1035:
        return VAL_NAME_DNS1035;
    case API_NAME_PATH:
        return VAL_NAME_PATH_SEGMENT;
    default:
        return VAL_NAME_SUBDOMAIN;
    }
}

/* ---- hooks ---- */

void api_kind_defaults(const api_kind *k, json_t *obj)
{
    if (k->defaults) k->defaults(obj);
    if (k->defaults_row) k->defaults_row(k, obj);
}

void api_kind_validate(const api_kind *k, const json_t *obj, const json_t *old, json_t *causes)
{
    if (k->validate) k->validate(obj, old, causes);
    if (k->validate_row) k->validate_row(k, obj, old, causes);
}

int api_kind_decode(const api_kind *k, json_t *obj, tc_mode mode, tc_result *r)
{
    memset(r, 0, sizeof *r);
    if (k->decode_row) return k->decode_row(k, obj, r);
    const sch_msg *m = api_kind_schema(k);
    return m ? tc_decode_mode(m, obj, mode, r) : 0;
}

/* Set obj's apiVersion to <group>/<version> when it says otherwise. */
static void set_api_version(const api_kind *k, const char *version, json_t *obj)
{
    char av[256];
    if (*k->group)
        snprintf(av, sizeof av, "%s/%s", k->group, version);
    else
        snprintf(av, sizeof av, "%s", version);
    const char *have = json_string_value(json_object_get(obj, "apiVersion"));
    if (!have || strcmp(have, av) != 0) json_object_set_new(obj, "apiVersion", json_string(av));
}

void api_kind_to_storage(const api_kind *k, json_t *obj)
{
    if (k->storage_version) set_api_version(k, k->storage_version, obj);
}

void api_kind_to_version(const api_kind *k, json_t *obj)
{
    if (k->flags & API_KIND_CONVERTS) set_api_version(k, k->version, obj);
    if ((k->flags & API_KIND_READ_DEFAULTS) && k->defaults_row) k->defaults_row(k, obj);
}

bool api_kind_rewrites_reads(const api_kind *k)
{
    return (k->flags & (API_KIND_CONVERTS | API_KIND_READ_DEFAULTS)) != 0;
}

const api_kind *api_kind_storage_row(const api_kind *k)
{
    if (api_kind_primary(k)) return k;
    size_t n = api_kind_count();
    for (size_t i = 0; i < n; i++) {
        const api_kind *r = api_kind_at(i);
        if (api_kind_primary(r) && !strcmp(r->group, k->group) && !strcmp(r->resource, k->resource))
            return r;
    }
    return k; /* retired: no storage row left */
}
