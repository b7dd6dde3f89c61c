/* rq_validation.h - ResourceQuota validation with upstream's messages.
 *
 * Ports ValidateResourceQuota{,Update,StatusUpdate} from
 * pkg/apis/core/validation/validation.go and the resource-name helpers of
 * pkg/apis/core/helper/helpers.go (standard, quota, integer and extended
 * resource names; scopes and which resources each scope may limit). These
 * helpers are the one place allot decides those questions: the quota
 * evaluators and LimitRange validation call them too.
 *
 * Inputs are borrowed and never modified; causes are appended to a JSON
 * array the caller owns (see ferr_add in status.h). Nothing else allocates.
 */
#ifndef ALLOT_API_RQ_VALIDATION_H
#define ALLOT_API_RQ_VALIDATION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Upstream detail texts (validation.go constants). */
#define RQ_MSG_NEGATIVE "must be greater than or equal to 0"
#define RQ_MSG_NOT_INTEGER "must be an integer"
#define RQ_MSG_NOT_STANDARD "must be a standard resource type or fully qualified"
#define RQ_MSG_NOT_QUOTA "must be a standard resource for quota"
#define RQ_MSG_UNSUPPORTED_SCOPE "unsupported scope"
#define RQ_MSG_SCOPE_RESOURCE "unsupported scope applied to resource"
#define RQ_MSG_CONFLICTING "conflicting scopes"
#define RQ_MSG_IMMUTABLE "field is immutable"
/* 'Exists' since kubernetes#124053 (1.31); the spec (6.4) quotes the older 'Exist'. */
#define RQ_MSG_OP_EXISTS                                                                           \
    "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, "                        \
    "ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, "                             \
    "ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
#define RQ_MSG_VALUES_REQUIRED                                                                     \
    "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
#define RQ_MSG_VALUES_FORBIDDEN                                                                    \
    "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
#define RQ_MSG_BAD_OPERATOR "not a valid selector operator"

/* The kinds.h `validate` hook, for create and every update: spec
 * (ValidateResourceQuotaSpec) and status.hard/used (ValidateResourceQuotaStatus,
 * so it is also the status subresource's ValidateResourceQuotaStatusUpdate).
 * allot only: a field of the wrong JSON type (spec.hard as a list, scopes as a
 * string, ...) is a FieldValueTypeInvalid cause, and nothing else is checked,
 * where upstream's decoding would have refused the body. */
void resourcequota_validate(const json_t *obj, const json_t *old, json_t *causes);

/* The kinds.h `validate_update` hook (ValidateResourceQuotaUpdate): on the
 * object itself (sub ""), spec.scopes must be unchanged as a set,
 *   spec.scopes: Invalid value: ["BestEffort"]: field is immutable
 * spec.scopeSelector may change, as upstream. */
void resourcequota_validate_update(const json_t *obj, const json_t *old, const char *sub,
                                   json_t *causes);

/* The kinds.h `warnings_on_create` hook (strategy.go WarningsOnCreate): for
 * cpu, memory, storage and ephemeral-storage, a request hard (requests.X, or
 * bare cpu/memory) above the limit hard (limits.X) warns
 * "ResourceQuota requests.cpu (2) should be less than limits.cpu (1)". */
void resourcequota_warnings(const json_t *obj, json_t *warnings);

/* A ResourceList as quota sees it (spec.hard, status.hard, status.used):
 * each key through rq_validate_quota_resource_name, each value
 * non-negative and, for integer resources, whole. Keys are visited in
 * sorted order so the causes are deterministic (upstream ranges over a Go
 * map). `field` is the list's path ("spec.hard"); a list that is not a JSON
 * object is one FieldValueTypeInvalid cause. Returns causes added. */
int rq_validate_resource_list(const json_t *list, const char *field, json_t *causes);

/* ValidateResourceQuantityValue for resource `name` at `field`: >= 0, and
 * whole for integer resources. A value that does not parse would have failed
 * decoding upstream (400); here it is Invalid with the parser's message. */
int rq_validate_quantity_value(const char *name, const json_t *v, const char *field,
                               json_t *causes);

/* validateResourceName / ValidateResourceQuotaResourceName /
 * validateContainerResourceName for one key at path `field` ("spec.hard[cpu]"). */
int rq_validate_resource_name(const char *name, const char *field, json_t *causes);
int rq_validate_quota_resource_name(const char *name, const char *field, json_t *causes);
int rq_validate_container_resource_name(const char *name, const char *field, json_t *causes);

/* The keys of a JSON object in strcmp order, borrowed from `obj` (valid
 * while it is unchanged). Caller frees the array (not the strings). NULL
 * with *n == 0 for an empty or non-object `obj`, or when out of memory. */
const char **rq_sorted_keys(const json_t *obj, size_t *n);

/* helpers.go predicates. */
bool rq_is_standard_resource_name(const char *name);
bool rq_is_standard_quota_resource_name(const char *name);
bool rq_is_standard_container_resource_name(const char *name);
bool rq_is_integer_resource_name(const char *name);
bool rq_is_extended_resource_name(const char *name);
bool rq_is_native_resource(const char *name);
bool rq_is_hugepage_resource_name(const char *name);
bool rq_is_overcommit_allowed(const char *name);
bool rq_is_standard_scope(const char *scope);
bool rq_scope_valid_for_resource(const char *scope, const char *resource);

#endif
