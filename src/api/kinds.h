/* kinds.h - the registry of served kinds.
 *
 * Every served resource is one api_kind row: its names for discovery, its
 * scope, its subresources and its hooks (defaulting, validation, selector
 * fields). Handlers, discovery, OpenAPI and table printing all read this
 * table, so adding a kind is adding a row (api_kind_register for kinds
 * defined elsewhere, e.g. capsule.clastix.io). Rows are static and immutable.
 */
#ifndef ALLOT_API_KINDS_H
#define ALLOT_API_KINDS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum {
    API_SUB_STATUS = 1 << 0,  /* status subresource: main resource ignores status */
    API_SUB_BINDING = 1 << 1, /* pods/binding */
    API_SUB_SCALE = 1 << 2,   /* scale subresource */
    API_SUB_RESIZE = 1 << 3,  /* pods/resize: in-place change of container resources */
    API_SUB_TOKEN = 1 << 4,   /* serviceaccounts/token: the TokenRequest API (create only) */
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

/* "v1" or "apps/v1". */
void api_kind_api_version(const api_kind *k, char *buf, size_t n);
/* Store resource name: "pods", "deployments.apps". */
void api_kind_store_resource(const api_kind *k, char *buf, size_t n);
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
