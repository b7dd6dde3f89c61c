/* objects.h - per-kind defaulting and validation hooks (upstream SetDefaults_*),
 * plus helpers common to every object. All functions edit `obj` in place. */
#ifndef ALLOT_API_OBJECTS_H
#define ALLOT_API_OBJECTS_H

#include <jansson.h>

void namespace_defaults(json_t *obj);
void pod_defaults(json_t *obj);
void pod_validate(const json_t *obj, const json_t *old, json_t *causes);
void service_defaults(json_t *obj);
void endpoints_defaults(json_t *obj);
void pvc_defaults(json_t *obj);
void secret_defaults(json_t *obj);
void replicas_defaults(json_t *obj); /* ReplicaSet */
void replicationcontroller_defaults(json_t *obj);
void deployment_defaults(json_t *obj);
void statefulset_defaults(json_t *obj);
void daemonset_defaults(json_t *obj);
/* SetDefaults_PodSpec for a PodTemplateSpec's spec (every workload's
 * template): restartPolicy, dnsPolicy, grace period, scheduler, security
 * context, container defaults. The pod-only defaults (service account,
 * service links, preemption policy, requests from limits) come when a pod
 * is made from it. NULL or a non-object is left alone. */
void pod_template_defaults(json_t *tmpl);
void priorityclass_defaults(json_t *obj);
void storageclass_defaults(json_t *obj);

/* The pod's QoS class ("BestEffort", "Burstable", "Guaranteed"): upstream's
 * ComputePodQOS from spec (status.qosClass is not read); NULL when out of
 * memory. */
const char *pod_qos_class(const json_t *pod);

/* Get obj[key], creating an empty object there when absent or not an object. */
json_t *json_object_ensure(json_t *obj, const char *key);
/* Set obj[key] = value unless key is present (steals value). */
void json_default_new(json_t *obj, const char *key, json_t *value);

#endif
