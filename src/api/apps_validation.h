/* apps_validation.h - validation of the workload kinds with upstream's
 * messages (pkg/apis/apps/validation, and core's ReplicationController):
 * Deployment, ReplicaSet, StatefulSet, DaemonSet and ReplicationController.
 *
 * What a controller relies on is checked here, so that no stored object can
 * make it loop: a selector is required and not empty, the template's labels
 * match it (else every pod made would be one the set does not count, and it
 * would make pods forever), the template's restartPolicy is Always, replicas
 * are not negative, the Deployment's strategy resolves (maxSurge and
 * maxUnavailable are ints or percentages, not both 0) and its progress
 * deadline exceeds minReadySeconds. The template's pod spec is validated as
 * a pod's (api/pod_validation.h) under spec.template.spec. The apps/v1
 * selector is immutable (as upstream's strategies decide for every version
 * but extensions/v1beta1).
 *
 * Inputs are borrowed; causes are appended to the caller's array. Pure.
 */
#ifndef ALLOT_API_APPS_VALIDATION_H
#define ALLOT_API_APPS_VALIDATION_H

#include <jansson.h>

void deployment_validate(const json_t *obj, const json_t *old, json_t *causes);
void replicaset_validate(const json_t *obj, const json_t *old, json_t *causes);
void statefulset_validate(const json_t *obj, const json_t *old, json_t *causes);
void daemonset_validate(const json_t *obj, const json_t *old, json_t *causes);
void replicationcontroller_validate(const json_t *obj, const json_t *old, json_t *causes);

/* validate_update of the apps/v1 kinds: spec.selector is immutable. */
void apps_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes);

#endif
