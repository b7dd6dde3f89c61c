/* custom_quota_kinds.h - Capsule's CustomQuota and GlobalCustomQuota
 * (capsule.clastix.io/v1beta2): the kinds.h hooks that need no other object.
 *
 * Defaulting is what the CRD schema's defaults do, plus allot's reading of a
 * source's group and version (seed 003 writes sources as `group: ""`,
 * `version: v1`, `kind: Pod`; Capsule's type only has apiVersion):
 *   - spec.options is {emitMetricPerClaimUsage: false} when absent, and the
 *     flag false when the options leave it out;
 *   - a source's op is "add" when absent;
 *   - a source with version and no apiVersion gets apiVersion = version
 *     (group "") or group/version; one with apiVersion and no group/version
 *     gets both from it; one with none of the three is core v1 (Capsule's
 *     reading of an empty apiVersion), written out. Nothing is filled when
 *     the given parts disagree: validation reports that.
 *
 * Validation is the CRD schema's (required fields, kind minLength 1, the op
 * enum, cel maxLength 4096, selector lists maxItems 64 of 1-4096 characters)
 * and its CEL rule on each source, with the apiserver's field errors; the
 * webhook's `limit > 0` with Capsule's text; and, stricter than Capsule
 * (docs/decisions.md "Custom quotas"): source paths with the rules Capsule's
 * controller applies when it compiles them, label selectors that parse, at
 * least one source, group/version/apiVersion that agree. Compiling the
 * JSONPaths and CEL expressions is the registry's (core/jsonpath.h,
 * core/cel.h): the places are marked below in custom_quota_kinds.c.
 *
 * Causes are appended to `causes` (status.h); inputs are borrowed and, for
 * validation, never modified. Pure: no I/O.
 */
#ifndef ALLOT_API_CUSTOM_QUOTA_KINDS_H
#define ALLOT_API_CUSTOM_QUOTA_KINDS_H

#include <jansson.h>

#define CQ_GROUP "capsule.clastix.io"
#define CQ_VERSION "v1beta2"

/* CRD limits (Capsule's kubebuilder markers and pkg/runtime/jsonpath). */
#define CQ_CEL_MAX 4096         /* a source's cel, a selector's expressions: characters */
#define CQ_SELECTOR_ITEMS 64    /* fieldSelectors and celExpressions: items */
#define CQ_SOURCE_PATH_MAX 1024 /* a source's path after trimming: bytes */

/* Capsule's words (data, so tests can hold them). */
#define CQ_MSG_LIMIT "invalid spec.limit: quantity must not be negative or 0: \"%s\""
#define CQ_MSG_SOURCE_RULE                                                                         \
    "path and cel must be empty when op is 'count'; otherwise exactly one of path or cel must "    \
    "be set and non-empty"

/* kinds.h hooks of customquotas. */
void customquota_defaults(json_t *obj);
void customquota_validate(const json_t *obj, const json_t *old, json_t *causes);

/* kinds.h hooks of globalcustomquotas: the CustomQuota spec plus
 * spec.namespaceSelectors. */
void globalcustomquota_defaults(json_t *obj);
void globalcustomquota_validate(const json_t *obj, const json_t *old, json_t *causes);

#endif
