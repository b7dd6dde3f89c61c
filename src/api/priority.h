/* priority.h - PriorityClass validation and the Priority admission plugin.
 *
 * Ports pkg/apis/scheduling/validation (ValidatePriorityClass{,Update}),
 * the system classes of pkg/apis/scheduling/v1/helpers.go, and
 * plugin/pkg/admission/priority/admission.go as pure functions: callers
 * pass the PriorityClasses that exist; nothing here does I/O.
 *
 * Ownership: input objects are borrowed; priority_admit_pod and
 * priority_admit_pod_update modify only their `pod`. priority_system_classes
 * returns a new reference the caller owns. An api_err filled here owns its
 * details (api_err_clear frees them).
 */
#ifndef ALLOT_API_PRIORITY_H
#define ALLOT_API_PRIORITY_H

#include "api/status.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PRIORITY_HIGHEST_USER_DEFINABLE 1000000000
#define PRIORITY_SYSTEM_CRITICAL 2000000000 /* system-cluster-critical */
#define PRIORITY_SYSTEM_CLUSTER_CRITICAL "system-cluster-critical"
#define PRIORITY_SYSTEM_NODE_CRITICAL "system-node-critical" /* SYSTEM_CRITICAL + 1000 */
#define PRIORITY_SYSTEM_PREFIX "system-"

/* The kinds.h `validate` hook. Create: reserved system- names, the
 * user-definable maximum, preemptionPolicy; update (`old` non-NULL): value
 * and preemptionPolicy are immutable as well. */
void priorityclass_validate(const json_t *obj, const json_t *old, json_t *causes);

/* The Priority plugin's PriorityClass check (create, or update when
 * `update`): a class may set globalDefault only if no other class (among
 * `classes`, which may include the old copy of this one) already does.
 * Returns 0, or -1 with 403
 *   priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a is
 *   already marked as default. Only one default can exist */
int priority_check_global_default(const json_t *pc, bool update, const json_t *const *classes,
                                  size_t n, api_err *e);

/* The registry's refusal to delete a system class. Returns 0, or -1 with
 * upstream's 403, whose resource is (an upstream quirk) the class name:
 *   system-node-critical.scheduling.k8s.io "system-node-critical" is
 *   forbidden: this is a system priority class and cannot be deleted */
int priority_check_delete(const char *name, api_err *e);

/* Pod CREATE: resolve spec.priorityClassName (a class in `classes`, else a
 * system class, else 403 "no PriorityClass with name foo was found"), or
 * with no name the globalDefault class with the lowest value, else 0 and
 * PreemptLowerPriority. Sets spec.priority, spec.preemptionPolicy (when the
 * class has one) and spec.priorityClassName (the default class's name).
 * A pod that already carries a different priority or preemptionPolicy is
 * refused with upstream's 403. Returns 0 or -1. */
int priority_admit_pod(json_t *pod, const json_t *const *classes, size_t n, api_err *e);

/* Pod UPDATE: keep the priority and preemptionPolicy set at create when the
 * new object omits them (validation forbids changing them). */
void priority_admit_pod_update(json_t *pod, const json_t *old);

/* [system-node-critical, system-cluster-critical] as scheduling.k8s.io/v1
 * PriorityClass objects (defaulted: preemptionPolicy PreemptLowerPriority),
 * for bootstrapping. New reference; caller owns it. */
json_t *priority_system_classes(void);

#endif
