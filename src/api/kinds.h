/* kinds.h - the registry of served kinds.
 *
 * Every served resource is one api_kind row: its names for discovery, its
 * scope, its subresources and its hooks (defaulting, validation, selector
 * fields). Handlers, discovery, OpenAPI and table printing all read this
 * table, so adding a kind is adding a row (api_kind_register for kinds
 * defined elsewhere, e.g. capsule.clastix.io).
 *
 * Rows are immutable. The built-in rows are static; kinds defined while
 * serving (CustomResourceDefinitions, api/crd_kinds.h) are published into
 * slots that never move: api_kind_at(i) names the same slot for the life of
 * the process, and api_kind_count() only grows, so a reader may iterate with
 * `for (i = 0; i < api_kind_count(); i++) api_kind_at(i)` on any thread while
 * kinds are published. A change publishes a new row into the slot with a
 * release store (readers load with acquire); the row it replaces stays valid
 * until the process exits (a reader may still hold it: a watch holds its
 * row for its whole life), and its owner frees it then. A removed kind keeps
 * its slot with a row marked API_KIND_UNSERVED.
 */
#ifndef ALLOT_API_KINDS_H
#define ALLOT_API_KINDS_H

#include "api/typecheck.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum {
    API_SUB_STATUS = 1 << 0,  /* status subresource: main resource ignores status */
    API_SUB_BINDING = 1 << 1, /* pods/binding */
    API_SUB_SCALE = 1 << 2,   /* scale subresource */
    API_SUB_RESIZE = 1 << 3,  /* pods/resize: in-place change of container resources */
    API_SUB_TOKEN = 1 << 4,   /* serviceaccounts/token: the TokenRequest API (create only) */
    API_SUB_LOG = 1 << 5,     /* pods/log: get only (server/podlog.c) */
};

/* What the generic registry and REST paths do differently for a kind, said
 * once here instead of by resource name where it happens. */
enum {
    API_KIND_STATUS_ON_CREATE = 1 << 0, /* a created object keeps the status it was given (nodes) */
    API_KIND_NO_GENERATION = 1 << 1,    /* no metadata.generation (namespaces, nodes) */
    API_KIND_GRACEFUL = 1 << 2,         /* deleted gracefully once on a node (pods) */
    API_KIND_DELETE_RETURNS_OBJECT = 1 << 3, /* DELETE answers the object, not a Status */
    API_KIND_NAMESPACE =
        1 << 4, /* the Namespace kind: lifecycle phases, emptied by its controller */
    /* Not served (a removed custom kind, or a version its definition does
     * not serve): lookups, discovery and OpenAPI skip the row. */
    API_KIND_UNSERVED = 1 << 5,
    /* Another row holds the same stored objects (another version of the
     * resource, or a removed kind): loops over stored objects (quota
     * recounts, metrics, controllers) skip it, so each resource is visited
     * once. api_kind_for_key never answers it. */
    API_KIND_SECONDARY = 1 << 6,
    /* Its definition is being deleted: creates are refused (405). */
    API_KIND_TERMINATING = 1 << 7,
    /* No Go types: strategic merge patches are refused (415), as upstream
     * refuses them for custom resources. */
    API_KIND_NO_STRATEGIC = 1 << 8,
    /* metadata.generation from 1 on create, bumped by any change outside
     * metadata (with a status subresource, status is the stored one, so
     * only spec and the other fields count): upstream's custom resources. */
    API_KIND_GENERATION_ALL = 1 << 9,
    /* Defined while serving: its row may be replaced or retired at any
     * time; a create checks in its transaction that the kind is still
     * served and not terminating (api_kind_current). */
    API_KIND_RUNTIME = 1 << 10,
    /* Objects may be stored under another version of the resource:
     * responses set apiVersion to the row's (api_kind_to_version). */
    API_KIND_CONVERTS = 1 << 11,
    /* Objects read from storage get the kind's defaults (defaults_row):
     * upstream defaults custom resources when it decodes them from
     * storage, so an object stored before a default was added reads with
     * it. Set only for schemas with defaults, so other kinds' reads keep
     * splicing stored JSON unparsed. */
    API_KIND_READ_DEFAULTS = 1 << 13,
};

typedef enum {
    API_NAME_SUBDOMAIN, /* DNS-1123 subdomain (most kinds) */
    API_NAME_LABEL,     /* DNS-1123 label (namespaces) */
    API_NAME_DNS1035,   /* DNS-1035 label (services) */
    API_NAME_PATH,      /* path segment only (nodes, events, priorityclasses) */
} api_name_rule;

/* A field-selector label and where its value lives in the object: at a path,
 * or - for a value no single field holds - computed by `derive`. */
typedef struct api_field {
    const char *label; /* "spec.nodeName" */
    const char *path;  /* dotted path, usually equal to label (unused with derive) */
    const char *dflt;  /* value when absent (e.g. "false"), or NULL for "" */
    /* Optional: the value derived from the whole object, written to buf
     * (NUL-terminated, at most n - 1 bytes; "" for none). Pure: it sees only
     * the object, as the index is computed on every write and at load. */
    void (*derive)(const json_t *obj, char *buf, size_t n);
} api_field;

/* A column of a kind's Table output given as data (a CRD's
 * additionalPrinterColumns), after the Name column; api/table.c prints it as
 * upstream's CRD table convertor does. */
typedef struct api_column {
    const char *name;
    const char *type;   /* integer, number, string, boolean, date */
    const char *format; /* "" or an OpenAPI format */
    const char *description;
    int priority;
    const struct jp_expr *path; /* "{<jsonPath>}" compiled (core/jsonpath.h) */
} api_column;

/* Where the scale subresource reads and writes: dotted paths without the
 * leading '.' ("spec.replicas"). A kind without (NULL) uses spec.replicas,
 * status.replicas and spec.selector (a LabelSelector, or a bare map). */
typedef struct api_scale_paths {
    const char *spec_replicas;
    const char *status_replicas;
    const char *label_selector; /* a string (serialized selector), or NULL */
} api_scale_paths;

typedef struct api_kind api_kind;
struct api_kind {
    const char *group;       /* "" for core */
    const char *version;     /* "v1" */
    const char *kind;        /* "Pod" */
    const char *resource;    /* "pods" */
    const char *singular;    /* "pod" */
    const char *short_names; /* comma-separated, e.g. "po" (NULL: none) */
    const char *categories;  /* comma-separated, e.g. "all" */
    bool namespaced;
    unsigned subresources;
    api_name_rule name_rule;
    const api_field *fields; /* extra field-selector labels, {NULL} terminated, or NULL */

    /* Hooks; NULL means nothing to do. `old` is NULL on create. */
    void (*defaults)(json_t *obj);
    void (*validate)(const json_t *obj, const json_t *old, json_t *causes);
    /* Upstream's WarningsOnCreate: appends warning texts (JSON strings) for a
     * valid object about to be created. */
    void (*warnings_on_create)(const json_t *obj, json_t *warnings);
    /* Upstream's ValidateUpdate for the transition old -> obj, run on every
     * update after `validate`: what may change, and how. `sub` is the
     * subresource written ("" for the object itself, "status", "binding",
     * "resize", "scale"). */
    void (*validate_update)(const json_t *obj, const json_t *old, const char *sub, json_t *causes);
    unsigned flags; /* API_KIND_* */
    /* Called when a delete first marks the object (before its finalizers
     * decide whether it goes at once); it may add finalizers and set status
     * (upstream's CustomResourceDefinition REST adds its cleanup finalizer
     * and the Terminating condition). `now` is RFC 3339. */
    void (*on_delete)(json_t *obj, const char *now);

    /* ---- what kinds defined at run time carry (api/crd_kinds.c) ---- */
    const char *list_kind;       /* NULL: "<kind>List" */
    const char *storage_version; /* stored as <group>/<storage_version>; NULL: this version */
    const api_scale_paths *scale;
    const api_column *columns; /* NULL: the kind's own printer (api/table.c) */
    size_t ncolumns;
    const json_t *openapi_schema; /* openAPIV3Schema for the OpenAPI documents, or NULL */
    /* Hooks that need the row itself (its compiled schema is in `data`),
     * run after the row-less ones above. decode_row stands in for the typed
     * decoding of kinds with Go types (api/typecheck.h): 0, or -1 with
     * r->error; unknown fields pruned into r->unknown. */
    void (*defaults_row)(const api_kind *k, json_t *obj);
    void (*validate_row)(const api_kind *k, const json_t *obj, const json_t *old, json_t *causes);
    int (*decode_row)(const api_kind *k, json_t *obj, tc_result *r);
    const void *data;

    /* Server-side apply's schema (core/fieldset.h): which of the kind's
     * lists are atomic, sets, or keyed by which fields, which maps are
     * atomic, which fields a struct declares; apply merges, prunes and
     * tracks managedFields by it (api/fieldmanager.h). NULL (every built-in
     * kind): the typed definition says (api/schema.h: sch_field.list,
     * SCH_ATOM, sch_msg.atomic), and a kind without one is untyped: every
     * list atomic, every map granular, as upstream's deduced schema. A
     * custom resource points it at an fs_schema over its structural schema
     * (x-kubernetes-list-type, -list-map-keys, -map-type; properties are
     * its declared fields), with apply_root the object's root type there
     * (fs_type {apply_root, 0}). Both must outlive the kind. */
    const struct fs_schema *apply_schema;
    const void *apply_root;
};

size_t api_kind_count(void);
const api_kind *api_kind_at(size_t i);
/* By URL parts; version must match. NULL if not served. */
const api_kind *api_kind_find(const char *group, const char *version, const char *resource);
/* By apiVersion ("v1", "apps/v1") and kind ("Pod"). */
const api_kind *api_kind_by_kind(const char *api_version, const char *kind);
/* Add a kind at startup (before serving). The row must outlive the process. */
int api_kind_register(const api_kind *k);

/* Publish a row (the row must stay valid until the process exits): into the
 * slot of its group/version/resource, or a new slot. *old (may be NULL) gets
 * the row it replaced, or NULL. -1 when the row would replace a built-in
 * row or the table is full. Thread-safe; readers see it at once. */
int api_kind_publish(const api_kind *k, const api_kind **old);
/* Drop every API_KIND_RUNTIME row from the table (compacting the slots).
 * Only when no reader can remain: at exit, or between tests. */
void api_kind_forget_runtime(void);
/* Bumped by every publication: documents built from the table (OpenAPI)
 * are rebuilt when it moves. */
unsigned api_kind_generation(void);
/* Whether a row is served (not API_KIND_UNSERVED). */
bool api_kind_served(const api_kind *k);
/* Whether loops over stored objects visit this row (not API_KIND_SECONDARY). */
bool api_kind_primary(const api_kind *k);
/* The row now published for k's group/version/resource, or NULL when it is
 * no longer served. */
const api_kind *api_kind_current(const api_kind *k);
/* "BucketList": the list kind of k. */
void api_kind_list_kind(const api_kind *k, char *buf, size_t n);

/* Hooks, in order (the row-less one, then the row's): defaulting, and
 * validation of the object (`old` NULL on create). */
void api_kind_defaults(const api_kind *k, json_t *obj);
void api_kind_validate(const api_kind *k, const json_t *obj, const json_t *old, json_t *causes);
/* Typed decoding of a body (or a patch result) of kind k in place: the typed
 * table's (api/typecheck.h, in `mode`) or the row's decode_row; 0 for a kind
 * with neither. r is set either way (tc_result_clear it). */
int api_kind_decode(const api_kind *k, json_t *obj, tc_mode mode, tc_result *r);
/* Objects of a kind whose rows share storage are stored in one version:
 * to_storage sets obj's apiVersion to the storage version's, to_version to
 * k's own (a CRD's conversion strategy None). No-ops for other kinds. */
void api_kind_to_storage(const api_kind *k, json_t *obj);
/* to_version is also where an object read leaves storage: a kind with
 * API_KIND_READ_DEFAULTS gets its defaults there. */
void api_kind_to_version(const api_kind *k, json_t *obj);
/* Whether api_kind_to_version may change a stored object (then a reader
 * must parse it rather than send the stored text). */
bool api_kind_rewrites_reads(const api_kind *k);
/* The row of k's resource objects are stored under (the storage version's,
 * served or not): k itself unless k is API_KIND_SECONDARY. What admission
 * sees, with the object in the storage version, so that every plugin
 * (custom quotas key objects by group/version/kind) sees one identity
 * whichever version a client wrote through. */
const api_kind *api_kind_storage_row(const api_kind *k);

/* "v1" or "apps/v1". */
void api_kind_api_version(const api_kind *k, char *buf, size_t n);
/* Store resource name: "pods", "deployments.apps". */
void api_kind_store_resource(const api_kind *k, char *buf, size_t n);
/* The REST path of object ns/name of kind k ("" ns: across namespaces or
 * cluster scope; "" name: the collection) with subresource sub ("" none):
 * "/api/v1/namespaces/ns/pods/name/status". Returns length or -1. */
int api_kind_path(const api_kind *k, const char *ns, const char *name, const char *sub, char *buf,
                  size_t n);
/* Store key "<resource>/<ns>/<name>" (ns "" for cluster scope); returns length or -1. */
int api_kind_key(const api_kind *k, const char *ns, const char *name, char *buf, size_t n);
/* The kind a store key ("<resource>[.<group>]/<ns>/<name>") belongs to, or NULL. */
const api_kind *api_kind_for_key(const char *key);
/* Field-selector values, metadata.name/namespace included, packed as
 * "label\0value\0label\0value\0\0" (one allocation, a few hundred bytes: this
 * is kept for every stored object). Caller frees. */
char *api_kind_fields_packed(const api_kind *k, const json_t *obj);
/* The packed form as a flat {label: value} object (caller owns). */
json_t *api_fields_unpack(const char *packed);
/* One label's value in the packed form, or NULL when it has none. */
const char *api_fields_get(const char *packed, const char *label);
/* Whether a field-selector label is supported for this kind. */
bool api_kind_has_field(const api_kind *k, const char *label);

/* The kind's typed definition (api/schema.h), or NULL for a kind without one
 * (its bodies are stored as given). */
const struct sch_msg *api_kind_schema(const api_kind *k);

/* The kind's name rule as val_object_meta takes it (VAL_NAME_*). */
int api_kind_name_rule(const api_kind *k);

/* Dotted-path lookup ("spec.nodeName"); NULL when absent. Borrowed reference. */
json_t *api_json_path(const json_t *obj, const char *dotted);

#endif
