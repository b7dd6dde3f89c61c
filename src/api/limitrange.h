/* limitrange.h - LimitRange validation and the LimitRanger admission plugin.
 *
 * limitrange_validate ports ValidateLimitRange (pkg/apis/core/validation).
 * The admission half ports plugin/pkg/admission/limitranger/admission.go as
 * pure functions: the caller fetches the namespace's LimitRanges and passes
 * them in; nothing here does I/O or keeps state.
 *
 * Admission order, as upstream: pod defaulting (objects.c) first, then
 * limitrange_default_pod (mutating phase), later limitrange_validate_pod
 * (validating phase). The caller skips pod UPDATEs other than `resize`, any
 * other subresource, and objects whose old copy is being deleted.
 *
 * Ownership: LimitRange, pod and PVC objects are borrowed; only
 * limitrange_default_pod modifies its pod. An api_err filled here owns its
 * details (api_err_clear frees them).
 */
#ifndef ALLOT_API_LIMITRANGE_H
#define ALLOT_API_LIMITRANGE_H

#include "api/status.h"

#include <jansson.h>
#include <stddef.h>

#define LIMITRANGE_ANNOTATION "kubernetes.io/limit-ranger"

/* The kinds.h `validate` hook (spec.limits; metadata is checked by the
 * registry). `old` is unused: upstream validates updates the same way, so
 * LimitRange needs no validate_update. allot only: a field of the wrong JSON
 * type (spec.limits not a list, an item's min not a map, ...) is a
 * FieldValueTypeInvalid cause where upstream's decoding refuses the body. */
void limitrange_validate(const json_t *obj, const json_t *old, json_t *causes);

/* PodMutateLimitFunc for each LimitRange in turn: the Container items'
 * default (limits) and defaultRequest (requests) fill the resources a
 * container or init container lacks, and the kubernetes.io/limit-ranger
 * annotation records what was set ("LimitRanger plugin set: cpu, memory
 * request for container nginx; cpu limit for init container init").
 * Each LimitRange that sets something rewrites the annotation, so the last
 * one wins, as upstream. Returns the number of values set (0: unchanged). */
int limitrange_default_pod(json_t *pod, const json_t *const *limitranges, size_t n);

/* PodValidateLimitFunc: Container items' min/max/maxLimitRequestRatio per
 * container and init container, Pod items' against the pod's effective
 * requests/limits. Returns 0, or -1 with a 403 Forbidden for the first
 * LimitRange violated, e.g.
 *   pods "x" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, ...]
 * (one message: no brackets; repeated messages are listed once). */
int limitrange_validate_pod(const json_t *pod, const json_t *const *limitranges, size_t n,
                            api_err *e);

/* PersistentVolumeClaimValidateLimitFunc: PersistentVolumeClaim items' min and
 * max against spec.resources.requests. Same error shape as pods
 * ("persistentvolumeclaims "x" is forbidden: ..."). */
int limitrange_validate_pvc(const json_t *pvc, const json_t *const *limitranges, size_t n,
                            api_err *e);

#endif
