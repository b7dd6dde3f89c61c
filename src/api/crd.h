/* crd.h - the CustomResourceDefinition kind (apiextensions.k8s.io/v1):
 * defaulting, validation with upstream's field paths and messages, the
 * cleanup finalizer a delete adds, the conditions, and the naming
 * controller's decision (which names a CRD may serve, given the names other
 * definitions of its group and the built-in kinds already hold).
 *
 * What a CRD serves once accepted (rows in the kind table, their hooks) is
 * api/crd_kinds.h; the controller that drives both is controllers/crd.c.
 *
 * Pure: objects in, field errors or new values out; no I/O, no clock (times
 * come in as RFC 3339 strings), no globals. Inputs are borrowed; what a
 * function returns is the caller's.
 */
#ifndef ALLOT_API_CRD_H
#define ALLOT_API_CRD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CRD_GROUP "apiextensions.k8s.io"
#define CRD_VERSION "v1"
#define CRD_RESOURCE "customresourcedefinitions"
/* Upstream's finalizer: the definition goes once its objects are gone. */
#define CRD_CLEANUP_FINALIZER "customresourcecleanup.apiextensions.k8s.io"
/* Groups whose definitions need an approval annotation (validateAPIApproval). */
#define CRD_APPROVAL_ANNOTATION "api-approved.kubernetes.io"
/* Upstream's bound on selectableFields per version. */
#define CRD_MAX_SELECTABLE_FIELDS 8

/* ---- the kind's hooks (api/kinds.h) ---- */

/* SetDefaults: conversion strategy None, names.singular (lower-cased kind)
 * and names.listKind (<kind>List), and status.storedVersions holding the
 * storage version (the strategy's PrepareForCreate/Update: every write). */
void crd_defaults(json_t *obj);
/* ValidateCustomResourceDefinition: metadata.name is <plural>.<group>, the
 * group, scope, names, versions (exactly one storage version, unique
 * DNS-1035 names, at least one served), each version's schema (required,
 * structural: core/jsonschema.h's js_compile, its errors prefixed
 * "spec.versions[i].schema."), subresources (scale paths), printer columns,
 * selectable fields, conversion (strategy None only), acceptedNames and
 * storedVersions. */
void crd_validate(const json_t *obj, const json_t *old, json_t *causes);
/* ValidateCustomResourceDefinitionUpdate: group and names.plural always
 * immutable; scope and names.kind once the definition is Established. */
void crd_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes);
/* Warnings for a definition about to be created: schemas holding
 * x-kubernetes-validations (CEL rules), which allotd accepts but does not
 * enforce (docs/crds.md), one per version. */
void crd_warnings(const json_t *obj, json_t *warnings);
/* A delete adds CRD_CLEANUP_FINALIZER and the Terminating condition
 * (InstanceDeletionPending), as upstream's CRD REST Delete does. */
void crd_on_delete(json_t *obj, const char *now);

/* ---- reading a definition ---- */

/* The storage version's name, or NULL (borrowed from crd). */
const char *crd_storage_version(const json_t *crd);
/* The version entry called `name` in spec.versions, or NULL (borrowed). */
const json_t *crd_version(const json_t *crd, const char *name);
/* Whether the definition's objects are namespaced (scope Namespaced). */
bool crd_namespaced(const json_t *crd);

/* ---- conditions (status.conditions) ---- */

/* The condition of that type, or NULL (borrowed). */
const json_t *crd_condition(const json_t *crd, const char *type);
bool crd_condition_true(const json_t *crd, const char *type);
/* Set a condition; lastTransitionTime moves only when the status changes
 * (SetCRDCondition). Returns whether anything changed. */
bool crd_set_condition(json_t *crd, const char *type, const char *status, const char *reason,
                       const char *message, const char *now);

/* ---- the naming controller ---- */

/* Names other definitions of the group have accepted, and the built-in
 * kinds of the group hold: two sets (JSON objects used as sets of keys):
 * resource names (plural, singular, short names) and kinds (kind, list
 * kind). crd_taken_add adds a names object ({plural, singular, shortNames,
 * kind, listKind}) to them. */
void crd_taken_add(const json_t *names, json_t *resources, json_t *kinds);

typedef struct crd_naming {
    json_t *accepted;   /* the new status.acceptedNames (owned) */
    bool ok;            /* NamesAccepted True */
    const char *reason; /* NoConflicts, PluralConflict, SingularConflict, ShortNamesConflict,
                           KindConflict or ListKindConflict (static) */
    char message[1200]; /* "no conflicts found" or `"x" is already in use` */
} crd_naming;

/* calculateNamesAndConditions: each requested name is taken when it equals
 * the accepted one or nobody else holds it; a conflict keeps the accepted
 * name and sets NamesAccepted False with upstream's reason and message (the
 * last conflicting name decides, as upstream's checks run in order).
 * 0, or -1 when out of memory. Clear with crd_naming_clear. */
int crd_naming_compute(const json_t *crd, const json_t *resources, const json_t *kinds,
                       crd_naming *out);
void crd_naming_clear(crd_naming *n);

#endif
