/* objects.c - upstream defaulting for the built-in kinds.
 *
 * Mirrors k8s.io/kubernetes/pkg/apis/core/v1/defaults.go (and apps, storage,
 * scheduling) for the fields kubectl prints and quota reads. Pod defaulting
 * must match upstream exactly: quota arithmetic depends on the copy of a
 * container's limits into its missing requests.
 */
#include "api/objects.h"

#include "api/pod_validation.h"

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

static void container_defaults(json_t *c)
{
    if (!json_is_object(c)) return;
    json_default_new(c, "terminationMessagePath", json_string("/dev/termination-log"));
    json_default_new(c, "terminationMessagePolicy", json_string("File"));
    json_default_new(c, "imagePullPolicy",
                     json_string(pull_policy(json_string_value(json_object_get(c, "image")))));
    json_t *res = json_object_ensure(c, "resources");
    json_t *limits = json_object_get(res, "limits");
    if (json_is_object(limits) && json_object_size(limits) > 0) {
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
        if (json_is_object(p)) json_default_new(p, "protocol", json_string("TCP"));
    }
}

static void containers_defaults(json_t *list)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) container_defaults(c);
}

/* QoS over regular and init containers, cpu and memory only (qos.go). */
const char *pod_qos_class(const json_t *pod)
{
    const json_t *spec = json_object_get(pod, "spec");
    const char *lists[] = {"containers", "initContainers"};
    int any = 0, guaranteed = 1;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            json_t *res = json_object_get(c, "resources");
            json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
            const char *names[] = {"cpu", "memory"};
            for (int n = 0; n < 2; n++) {
                json_t *r = json_object_get(req, names[n]), *m = json_object_get(lim, names[n]);
                if (r || m) any = 1;
                if (!m) guaranteed = 0;
                /* Quantities are compared as written here; quota code compares them
                 * numerically, but after defaulting a missing request equals the limit. */
                else if (r && !json_equal(r, m))
                    guaranteed = 0;
            }
        }
    }
    if (!any) return "BestEffort";
    return guaranteed ? "Guaranteed" : "Burstable";
}

void pod_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "restartPolicy", json_string("Always"));
    json_default_new(spec, "dnsPolicy", json_string("ClusterFirst"));
    json_default_new(spec, "terminationGracePeriodSeconds", json_integer(30));
    json_default_new(spec, "schedulerName", json_string("default-scheduler"));
    json_default_new(spec, "securityContext", json_object());
    json_default_new(spec, "enableServiceLinks", json_true());
    json_default_new(spec, "serviceAccountName", json_string("default"));
    json_default_new(spec, "serviceAccount",
                     json_incref(json_object_get(spec, "serviceAccountName")));
    json_default_new(spec, "preemptionPolicy", json_string("PreemptLowerPriority"));
    containers_defaults(json_object_get(spec, "containers"));
    containers_defaults(json_object_get(spec, "initContainers"));
    json_t *status = json_object_ensure(obj, "status");
    json_default_new(status, "phase", json_string("Pending"));
    json_object_set_new(status, "qosClass", json_string(pod_qos_class(obj)));
}

void service_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "type", json_string("ClusterIP"));
    json_default_new(spec, "sessionAffinity", json_string("None"));
    json_default_new(spec, "internalTrafficPolicy", json_string("Cluster"));
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

void pvc_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "volumeMode", json_string("Filesystem"));
    json_t *status = json_object_ensure(obj, "status");
    json_default_new(status, "phase", json_string("Pending"));
}

void secret_defaults(json_t *obj)
{
    json_default_new(obj, "type", json_string("Opaque"));
}

void replicas_defaults(json_t *obj)
{
    json_default_new(json_object_ensure(obj, "spec"), "replicas", json_integer(1));
}

void deployment_defaults(json_t *obj)
{
    json_t *spec = json_object_ensure(obj, "spec");
    json_default_new(spec, "replicas", json_integer(1));
    json_default_new(spec, "revisionHistoryLimit", json_integer(10));
    json_default_new(spec, "progressDeadlineSeconds", json_integer(600));
    json_default_new(spec, "strategy",
                     json_pack("{s:s, s:{s:s, s:s}}", "type", "RollingUpdate", "rollingUpdate",
                               "maxUnavailable", "25%", "maxSurge", "25%"));
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
