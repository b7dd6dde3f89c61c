/* schema.h - the typed definition of every served kind.
 *
 * One table per upstream Go type (a "message"): each field's JSON name, its
 * protobuf field number, its type and whether it repeats. This one definition
 * drives every place that needs to know a kind's shape:
 *   - decoding of protobuf bodies (protobuf.c),
 *   - typed decoding of JSON bodies and patch results: wrong types refused
 *     with upstream's texts, unknown fields pruned (and reported for
 *     fieldValidation), quantities in canonical form (typecheck.h),
 *   - the OpenAPI v2 and v3 documents that `kubectl explain` reads, with the
 *     descriptions of schema_docs.c (openapi.c).
 * Pure data and lookups: no I/O, no state.
 */
#ifndef ALLOT_API_SCHEMA_H
#define ALLOT_API_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    SCH_STRING,
    SCH_BYTES, /* []byte: a base64 string in JSON */
    SCH_BOOL,
    SCH_INT32,
    SCH_INT64,
    SCH_MSG,       /* nested object of type `msg` */
    SCH_INLINE,    /* embedded type whose fields merge into the parent (json:",inline") */
    SCH_MAP_SS,    /* map[string]string */
    SCH_MAP_SB,    /* map[string][]byte: base64 values */
    SCH_MAP_SQ,    /* v1.ResourceList: map[string]resource.Quantity */
    SCH_QUANTITY,  /* resource.Quantity: a string (or number) in canonical form */
    SCH_INTORSTR,  /* intstr.IntOrString: an int32 or a string */
    SCH_TIME,      /* metav1.Time: RFC 3339, seconds */
    SCH_MICROTIME, /* metav1.MicroTime: RFC 3339 with microseconds */
    SCH_RAWJSON,   /* runtime.RawExtension, metav1.FieldsV1: any JSON */
    SCH_MAP_SM,    /* map[string]<msg>: values are objects of type `msg` (lists of them with
                      SCH_VREP). Only custom kinds have these: never sent as protobuf. */
} sch_type;

enum {
    SCH_REP = 1 << 0,  /* repeated: a JSON array of the type */
    SCH_KEEP = 1 << 1, /* keep a zero value that is present (pointer or non-omitempty field) */
    SCH_VREP = 1 << 2, /* SCH_MAP_SM: each map value is a JSON array of `msg` (SCH_REP keeps
                          meaning "the field itself is an array") */
    SCH_ATOM = 1 << 3, /* a map replaced whole by server-side apply (+mapType=atomic) */
    SCH_VAL = 1 << 4,  /* always present in Go where its parent is: a SCH_MSG of value type
                          (not a pointer), a slice without omitempty */
};

typedef struct sch_msg sch_msg;

/* How server-side apply merges a repeated field, from upstream's markers
 * (+listType, +listMapKey, and +patchMergeKey where no listType is given).
 * A field without one is atomic: replaced whole. */
typedef struct sch_list {
    size_t n;                /* 0: a set of scalars; else the keys of a keyed list */
    const char *keys[3];     /* the key fields */
    const char *defaults[3]; /* the key of an item that omits one (OpenAPI default), or NULL */
} sch_list;

typedef struct sch_field {
    uint32_t num;       /* protobuf field number */
    const char *json;   /* JSON name; NULL for SCH_INLINE */
    uint8_t type;       /* sch_type */
    uint8_t flags;      /* SCH_REP, SCH_KEEP, SCH_VREP, SCH_ATOM, SCH_VAL */
    const sch_msg *msg; /* SCH_MSG, SCH_INLINE, SCH_MAP_SM */
    const sch_list *list; /* SCH_REP: a set or keyed list; NULL: atomic */
} sch_field;

struct sch_msg {
    const char *name; /* Go type name: "PodSpec" */
    const char *pkg;  /* OpenAPI package: "io.k8s.api.core.v1" */
    const sch_field *fields;
    size_t n;
    bool atomic; /* +structType=atomic: server-side apply replaces it whole */
};

/* The message of a top-level kind by apiVersion ("v1", "apps/v1") and kind,
 * or NULL. DeleteOptions and Status match any apiVersion. */
const sch_msg *sch_kind(const char *api_version, const char *kind);

/* Field by JSON name, looking through inlined types; NULL if the type has
 * none. */
const sch_field *sch_field_find(const sch_msg *m, const char *json);

/* Go's reflect name of a field's type as encoding/json prints it in
 * "cannot unmarshal ... of type X": "string", "int32", "v1.PodSpec",
 * "[]v1.Container", "map[string]string", "v1.ResourceList",
 * "map[string][]v1beta2.ResourcePoolClaimsItem". With `elem`, the type of one
 * element of a repeated field or one value of a map. */
void sch_go_type(const sch_field *f, bool elem, char *buf, size_t n);

/* Every message reachable from the top-level kinds, once each, for the
 * OpenAPI documents. Returns how many; *out is a static array. */
size_t sch_all_msgs(const sch_msg *const **out);

/* ---- documentation (schema_docs.c) ----
 * Descriptions in our own words, and the OpenAPI-only facts upstream's
 * generated documents carry: required fields and enum values. */
typedef struct sch_doc {
    const char *msg;   /* Go type name: "ResourceRequirements" */
    const char *field; /* JSON name, or NULL for the type itself */
    const char *desc;
    const char *enums; /* "Always|OnFailure|Never", or NULL */
    bool required;
} sch_doc;

/* The doc of a type (field NULL) or of one of its fields; NULL if none. */
const sch_doc *sch_doc_find(const char *msg, const char *field);

#endif
