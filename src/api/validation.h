/* validation.h - ObjectMeta and name validation with upstream's messages.
 *
 * Ports k8s.io/apimachinery/pkg/api/validation (ValidateObjectMeta,
 * ValidateObjectMetaUpdate, annotations, finalizers, owner references) and
 * meta/v1/validation (labels, LabelSelector). The string rules themselves
 * live in core/names.h; this layer turns their messages into field errors.
 *
 * Every function appends causes to `causes` (a JSON array the caller owns,
 * see ferr_add in status.h) and returns how many it appended, so 0 means
 * valid. Inputs are borrowed and never modified. Nothing is allocated that
 * the caller must free, except what lands in `causes`.
 */
#ifndef ALLOT_API_VALIDATION_H
#define ALLOT_API_VALIDATION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Which upstream ValidateNameFunc a kind uses for metadata.name. */
enum {
    VAL_NAME_SUBDOMAIN,    /* NameIsDNSSubdomain: most kinds */
    VAL_NAME_LABEL,        /* NameIsDNSLabel: namespaces, ... */
    VAL_NAME_DNS1035,      /* NameIsDNS1035Label: services */
    VAL_NAME_PATH_SEGMENT, /* path.ValidatePathSegmentName: CRs, RBAC, ... */
};

#define VAL_ANNOTATIONS_MAX_BYTES (256 * 1024) /* TotalAnnotationSizeLimitB */
#define VAL_FIELD_IMMUTABLE "field is immutable"

/* ---- single strings: append one Invalid cause per upstream message ---- */
int val_dns1123_subdomain(const char *v, const char *field, json_t *causes);
int val_dns1123_label(const char *v, const char *field, json_t *causes);
int val_dns1035_label(const char *v, const char *field, json_t *causes);
int val_qualified_name(const char *v, const char *field, json_t *causes);
int val_label_value(const char *v, const char *field, json_t *causes);
/* ValidateNamespaceName (a DNS-1123 label) */
int val_namespace_name(const char *v, const char *field, json_t *causes);
/* The kind's name rule; `prefix` true validates a generateName (a trailing
 * '-' is allowed, as upstream's maskTrailingDash). */
int val_name(const char *v, int name_kind, bool prefix, const char *field, json_t *causes);

/* ---- maps and lists; `field` is the path of the map itself ---- */
int val_labels(const json_t *labels, const char *field, json_t *causes);
int val_annotations(const json_t *annotations, const char *field, json_t *causes);
int val_finalizers(const json_t *finalizers, const char *field, json_t *causes);
int val_owner_references(const json_t *refs, const char *field, json_t *causes);
/* metav1 ValidateLabelSelector (NULL/null selector is valid). */
int val_label_selector(const json_t *ls, const char *field, json_t *causes);

/* ValidateObjectMeta for a create. Call after name generation (as upstream
 * does): when generateName is set the server must already have filled name
 * (see val_generate_name); an empty name is "name or generateName is
 * required". Paths are "metadata.name", "metadata.namespace", ... */
int val_object_meta(const json_t *meta, bool namespaced, int name_kind, json_t *causes);

/* ValidateObjectMetaUpdate: resourceVersion required, generation not
 * decremented, name/namespace/uid/creationTimestamp/deletionTimestamp/
 * deletionGracePeriodSeconds immutable, no new finalizers while deleting,
 * then labels/annotations/ownerReferences/managedFields of the new object.
 * Like upstream's BeforeUpdate, the caller should first copy system fields
 * the client may omit (uid, creationTimestamp) from old into new. */
int val_object_meta_update(const json_t *newm, const json_t *oldm, json_t *causes);

/* names.SimpleNameGenerator: base cut to 58 bytes, then the caller's random
 * 5-character suffix (drawn from VAL_NAME_SUFFIX_ALPHABET; core code takes
 * randomness as input). Writes into out; returns 0, or -1 if it does not fit. */
#define VAL_NAME_SUFFIX_ALPHABET "bcdfghjklmnpqrstvwxz2456789"
#define VAL_NAME_SUFFIX_LEN 5
int val_generate_name(const char *base, const char *suffix, char *out, size_t n);

/* An Invalid cause whose value is a []string upstream prints with %#v:
 *   spec.clusterIPs: Invalid value: []string{"10.0.0.1"}: <detail>
 * (`list`'s non-string members print as ""). */
void val_invalid_strings(json_t *causes, const char *field, const json_t *list, const char *detail);

#endif
