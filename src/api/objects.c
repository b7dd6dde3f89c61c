/* objects.c - upstream defaulting for the built-in kinds.
 *
 * Mirrors k8s.io/kubernetes/pkg/apis/core/v1/defaults.go (and apps, storage,
 * scheduling) for the fields kubectl prints and quota reads. Pod defaulting
 * must match upstream exactly: quota arithmetic depends on the copy of a
 * container's limits into its missing requests.
 */
#include "api/objects.h"
#include "core/jdump.h"

#include "api/config_validation.h"
#include "api/pod_validation.h"
#include "core/quota_eval.h"

#include <stdbool.h>
#include <string.h>

json_t *json_object_ensure(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_object(v)) {
        v = json_object();
        json_object_set_new(obj, key, v);
    }
    return v;
}

void json_default_new(json_t *obj, const char *key, json_t *value)
{
    if (json_object_get(obj, key) && !json_is_null(json_object_get(obj, key)))
        json_decref(value);
    else
        json_object_set_new(obj, key, value);
}

void namespace_defaults(json_t *obj)
{
    json_t *meta = json_object_ensure(obj, "metadata");
    json_t *name = json_object_get(meta, "name");
    /* NamespaceDefaultLabelName: the name is always mirrored into a label. */
    if (json_is_string(name))
        json_object_set(json_object_ensure(meta, "labels"), "kubernetes.io/metadata.name", name);
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "finalizers", json_pack("[s]", "kubernetes"));
    json_t *status = json_object_ensure(obj, "status");
    json_default_new(status, "phase", json_string("Active"));
}

/* imagePullPolicy: Always for ":latest" or untagged images, else IfNotPresent. */
static const char *pull_policy(const char *image)
{
    if (!image) return "IfNotPresent";
    if (strchr(image, '@')) return "IfNotPresent";
    const char *slash = strrchr(image, '/');
    const char *colon = strrchr(slash ? slash : image, ':');
    if (!colon || strcmp(colon + 1, "latest") == 0) return "Always";
    return "IfNotPresent";
}

/* json_default_new's test, made before the default is built: pods are
 * defaulted on every write, and their fields are nearly always set. */
static bool is_set(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return v && !json_is_null(v);
}

static void default_string(json_t *obj, const char *key, const char *value)
{
    if (!is_set(obj, key)) json_object_set_new(obj, key, json_string(value));
}

/* SetDefaults_Container (and, for a pod's containers, SetDefaults_Pod's copy
 * of limits into missing requests: pods only, templates keep what they say). */
static void container_defaults(json_t *c, bool copy_limits)
{
    if (!json_is_object(c)) return;
    default_string(c, "terminationMessagePath", "/dev/termination-log");
    default_string(c, "terminationMessagePolicy", "File");
    if (!is_set(c, "imagePullPolicy"))
        json_object_set_new(
            c, "imagePullPolicy",
            json_string(pull_policy(json_string_value(json_object_get(c, "image")))));
    json_t *res = json_object_ensure(c, "resources");
    json_t *limits = json_object_get(res, "limits");
    if (copy_limits && json_is_object(limits) && json_object_size(limits) > 0) {
        /* SetDefaults_Pod: limits fill in missing requests. */
        json_t *req = json_object_ensure(res, "requests");
        const char *k;
        json_t *v;
        json_object_foreach(limits, k, v)
        {
            if (!json_object_get(req, k)) json_object_set(req, k, v);
        }
    }
    json_t *ports = json_object_get(c, "ports");
    size_t i;
    json_t *p;
    json_array_foreach(ports, i, p)
    {
        if (json_is_object(p)) default_string(p, "protocol", "TCP");
    }
}

static void containers_defaults(json_t *list, bool copy_limits)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) container_defaults(c, copy_limits);
}

/* SetDefaults_PodSpec: what a pod's spec and every pod template's get. */
static void pod_spec_defaults(json_t *spec, bool pod)
{
    default_string(spec, "restartPolicy", "Always");
    default_string(spec, "dnsPolicy", "ClusterFirst");
    if (!is_set(spec, "terminationGracePeriodSeconds"))
        json_object_set_new(spec, "terminationGracePeriodSeconds", json_integer(30));
    default_string(spec, "schedulerName", "default-scheduler");
    if (!is_set(spec, "securityContext"))
        json_object_set_new(spec, "securityContext", json_object());
    containers_defaults(json_object_get(spec, "containers"), pod);
    containers_defaults(json_object_get(spec, "initContainers"), pod);
}

void pod_template_defaults(json_t *tmpl)
{
    if (json_is_object(tmpl)) pod_spec_defaults(json_object_ensure(tmpl, "spec"), false);
}

/* Upstream's ComputePodQOS (pkg/apis/core/helper/qos), from the spec alone:
 * quota's own computation (core/quota_eval.h: positive cpu and memory values
 * only, summed requests against summed limits, pod-level resources when set),
 * so the class stored at create is the one quota derives. quota_pod_qos is
 * GetPodQOS and reads status.qosClass first, so a pod that has one is given to
 * it as a view of its spec alone (one small object; NULL when that cannot be
 * allocated). A pod without one (every create) costs no allocation. */
const char *pod_qos_class(const json_t *pod)
{
    static const char *const names[] = {"BestEffort", "Burstable", "Guaranteed"};
    if (!json_string_length(json_object_get(json_object_get(pod, "status"), "qosClass")))
        return names[quota_pod_qos(pod)];
    json_t *view = json_object(), *spec = json_object_get(pod, "spec");
    if (!view || (spec && json_object_set(view, "spec", spec) != 0)) {
        json_decref(view);
        return NULL;
    }
    quota_qos q = quota_pod_qos(view);
    json_decref(view);
    return names[q];
}

void pod_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    pod_spec_defaults(spec, true);
    if (!is_set(spec, "enableServiceLinks"))
        json_object_set_new(spec, "enableServiceLinks", json_true());
    default_string(spec, "serviceAccountName", "default");
    if (!is_set(spec, "serviceAccount"))
        json_object_set(spec, "serviceAccount", json_object_get(spec, "serviceAccountName"));
    default_string(spec, "preemptionPolicy", "PreemptLowerPriority");
    json_t *status = json_object_ensure(obj, "status");
    default_string(status, "phase", "Pending");
    /* Upstream derives status.qosClass once, in PrepareForCreate, and keeps it
     * on every update ("the Pod QoS is immutable"); the pods/status strategy
     * backfills an empty one. Here: filled only when absent. A create starts
     * without status (the registry drops it), so it gets the spec's class; an
     * update keeps the stored one (main resource, resize, status with one). */
    if (!json_string_length(json_object_get(status, "qosClass")))
        json_object_set_new(status, "qosClass", json_string(pod_qos_class(obj)));
}

/* SetDefaults_Service (the cluster IPs, families and node ports are the
 * allocator's: registry/svc_alloc.c). */
void service_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "type", json_string("ClusterIP"));
    json_default_new(spec, "sessionAffinity", json_string("None"));
    const char *type = json_string_value(json_object_get(spec, "type"));
    bool np = type && (!strcmp(type, "NodePort") || !strcmp(type, "LoadBalancer"));
    bool lb = type && !strcmp(type, "LoadBalancer");
    if (np || (type && !strcmp(type, "ClusterIP")))
        json_default_new(spec, "internalTrafficPolicy", json_string("Cluster"));
    /* externally accessible: node ports, or external IPs */
    if (np || (type && !strcmp(type, "ClusterIP") &&
               json_array_size(json_object_get(spec, "externalIPs")) > 0))
        json_default_new(spec, "externalTrafficPolicy", json_string("Cluster"));
    if (lb) json_default_new(spec, "allocateLoadBalancerNodePorts", json_true());
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p)
    {
        if (!json_is_object(p)) continue;
        json_default_new(p, "protocol", json_string("TCP"));
        json_t *port = json_object_get(p, "port");
        if (port) json_default_new(p, "targetPort", json_incref(port));
    }
    json_t *status = json_object_ensure(obj, "status");
    json_object_ensure(status, "loadBalancer");
}

/* SetDefaults_Endpoints: a port's protocol is TCP. */
void endpoints_defaults(json_t *obj)
{
    size_t i, j;
    json_t *ss, *p;
    json_array_foreach(json_object_get(obj, "subsets"), i, ss)
    {
        json_array_foreach(json_object_get(ss, "ports"), j, p)
        {
            if (json_is_object(p)) json_default_new(p, "protocol", json_string("TCP"));
        }
    }
}

void pvc_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "volumeMode", json_string("Filesystem"));
    json_t *status = json_object_ensure(obj, "status");
    json_default_new(status, "phase", json_string("Pending"));
}

void secret_defaults(json_t *obj)
{
    secret_merge_string_data(obj);
    json_default_new(obj, "type", json_string("Opaque"));
}

void replicas_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "replicas", json_integer(1));
    pod_template_defaults(json_object_get(spec, "template"));
}

/* SetDefaults_ReplicationController: the selector, and the object's labels,
 * default to the template's labels. */
void replicationcontroller_defaults(json_t *obj)
{
    replicas_defaults(obj);
    json_t *spec = json_object_get(obj, "spec");
    json_t *labels =
        json_object_get(json_object_get(json_object_get(spec, "template"), "metadata"), "labels");
    if (!json_is_object(labels)) return;
    if (json_object_size(json_object_get(spec, "selector")) == 0)
        json_object_set_new(spec, "selector", jcopy(labels));
    json_t *meta = json_object_ensure(obj, "metadata");
    if (json_object_size(json_object_get(meta, "labels")) == 0)
        json_object_set_new(meta, "labels", jcopy(labels));
}

/* Default `key` of a strategy object: {type, rollingUpdate{...}} with the
 * rolling update's values when the type is (or defaults to) rolling. */
static void rolling_defaults(json_t *spec, const char *key, const char *rolling,
                             const char *const *names, const json_t *const *values)
{
    json_t *st = json_object_ensure(spec, key);
    default_string(st, "type", rolling);
    const char *type = json_string_value(json_object_get(st, "type"));
    if (!type || strcmp(type, rolling) != 0) return;
    json_t *ru = json_object_ensure(st, "rollingUpdate");
    for (size_t i = 0; names[i]; i++)
        json_default_new(ru, names[i], jcopy(values[i]));
}

void deployment_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "replicas", json_integer(1));
    json_default_new(spec, "revisionHistoryLimit", json_integer(10));
    json_default_new(spec, "progressDeadlineSeconds", json_integer(600));
    json_t *pct = json_string("25%");
    const char *const names[] = {"maxUnavailable", "maxSurge", NULL};
    const json_t *const values[] = {pct, pct};
    rolling_defaults(spec, "strategy", "RollingUpdate", names, values);
    json_decref(pct);
    pod_template_defaults(json_object_get(spec, "template"));
}

void statefulset_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "replicas", json_integer(1));
    default_string(spec, "podManagementPolicy", "OrderedReady");
    json_default_new(spec, "revisionHistoryLimit", json_integer(10));
    json_t *zero = json_integer(0);
    const char *const names[] = {"partition", NULL};
    const json_t *const values[] = {zero};
    rolling_defaults(spec, "updateStrategy", "RollingUpdate", names, values);
    json_decref(zero);
    json_t *ret = json_object_ensure(spec, "persistentVolumeClaimRetentionPolicy");
    default_string(ret, "whenDeleted", "Retain");
    default_string(ret, "whenScaled", "Retain");
    pod_template_defaults(json_object_get(spec, "template"));
}

void daemonset_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "revisionHistoryLimit", json_integer(10));
    json_t *one = json_integer(1), *zero = json_integer(0);
    const char *const names[] = {"maxUnavailable", "maxSurge", NULL};
    const json_t *const values[] = {one, zero};
    rolling_defaults(spec, "updateStrategy", "RollingUpdate", names, values);
    json_decref(one);
    json_decref(zero);
    pod_template_defaults(json_object_get(spec, "template"));
}

void priorityclass_defaults(json_t *obj)
{
    json_default_new(obj, "preemptionPolicy", json_string("PreemptLowerPriority"));
}

void storageclass_defaults(json_t *obj)
{
    json_default_new(obj, "reclaimPolicy", json_string("Delete"));
    json_default_new(obj, "volumeBindingMode", json_string("Immediate"));
}

/* ValidatePodCreate (api/pod_validation.h). Updates are validated by the
 * validate_update hook, which knows the subresource written (a status write
 * or a binding does not revalidate the spec, as upstream). */
void pod_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    if (!old) pod_validate_create(obj, causes);
}
