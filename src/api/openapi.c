/* openapi.c - OpenAPI v3 and Swagger 2.0 documents (see openapi.h).
 *
 * One walk over the registry produces both formats: `oa_fmt` says which one
 * is being written (where "$ref"s point, how parameters, bodies and
 * responses are spelled). Paths, operations and their query parameters
 * follow kube-apiserver 1.32; operations exist only for the verbs discovery
 * advertises (disc_verbs, disc_subresources), so the two never disagree.
 */
#include "api/openapi.h"
#include "core/jdump.h"

#include "api/discovery.h"
#include "api/kinds.h"
#include "api/openapi_pb.h"
#include "api/patch.h"
#include "api/schema.h"

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META "io.k8s.apimachinery.pkg.apis.meta.v1."

typedef struct oa_fmt {
    bool v3;
    const char *ref; /* "#/components/schemas/" or "#/definitions/" */
} oa_fmt;

static const oa_fmt FMT_V3 = {true, "#/components/schemas/"};
static const oa_fmt FMT_V2 = {false, "#/definitions/"};

/* ---- Names ---------------------------------------------------------------- */

/* Schema package as upstream names it: io.k8s.api.<first label> for built-in
 * groups ("" is core), reversed domain for everything else (as for CRDs). */
static void schema_pkg(const char *group, char *buf, size_t n)
{
    size_t glen = strlen(group);
    bool builtin =
        !*group || !strchr(group, '.') || (glen > 7 && strcmp(group + glen - 7, ".k8s.io") == 0);
    if (!*group) {
        snprintf(buf, n, "io.k8s.api.core");
    } else if (builtin) {
        snprintf(buf, n, "io.k8s.api.%.*s", (int)strcspn(group, "."), group);
    } else {
        size_t o = 0;
        buf[0] = '\0';
        for (size_t end = glen; end > 0 && o < n;) {
            size_t start = end;
            while (start > 0 && group[start - 1] != '.')
                start--;
            o += (size_t)snprintf(buf + o, n - o, "%s%.*s", o ? "." : "", (int)(end - start),
                                  group + start);
            end = start ? start - 1 : 0;
        }
    }
}

static void schema_name(const char *group, const char *version, const char *kind,
                        const char *suffix, char *buf, size_t n)
{
    char pkg[256];
    schema_pkg(group, pkg, sizeof pkg);
    snprintf(buf, n, "%s.%s.%s%s", pkg, version, kind, suffix);
}

/* operationId stem ("CoreV1", "AppsV1", "CapsuleClastixIoV1beta2") and tag
 * ("core_v1", "apps_v1", "capsuleClastixIo_v1beta2"), as upstream spells them. */
static void group_camel(const char *group, bool upper_first, char *buf, size_t n)
{
    const char *g = *group ? group : "core";
    size_t glen = strlen(g);
    if (glen > 7 && strcmp(g + glen - 7, ".k8s.io") == 0) glen = strcspn(g, ".");
    size_t o = 0;
    bool up = upper_first;
    for (size_t i = 0; i < glen && o + 1 < n; i++) {
        if (g[i] == '.' || g[i] == '-') {
            up = true;
            continue;
        }
        buf[o++] = up ? (char)toupper((unsigned char)g[i]) : g[i];
        up = false;
    }
    buf[o] = '\0';
}

static void op_stem(const char *group, const char *version, char *buf, size_t n)
{
    char g[128];
    group_camel(group, true, g, sizeof g);
    snprintf(buf, n, "%s%c%s", g, toupper((unsigned char)version[0]), version + 1);
}

static void op_tag(const char *group, const char *version, char *buf, size_t n)
{
    char g[128];
    group_camel(group, false, g, sizeof g);
    snprintf(buf, n, "%s_%s", g, version);
}

static json_t *ref_to(const oa_fmt *f, const char *schema)
{
    return json_pack("{s:o}", "$ref", json_sprintf("%s%s", f->ref, schema));
}

/* A property referring to another schema: v3 wraps the $ref in allOf so it can
 * carry a description, as upstream does; v2 uses the $ref directly. */
static json_t *ref_property(const oa_fmt *f, const char *schema, const char *desc)
{
    json_t *p = f->v3 ? json_pack("{s:[o], s:{}}", "allOf", ref_to(f, schema), "default")
                      : ref_to(f, schema);
    json_object_set_new(p, "description", json_string(desc));
    return p;
}

static json_t *gvk_object(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "kind", kind, "version", version);
}

/* ---- Parameters ----------------------------------------------------------- */

typedef struct oa_param {
    const char *name;
    const char *in;
    const char *type;
    const char *desc;
} oa_param;

/* Descriptions are shortened from upstream's; names, places and types are exact. */
static const oa_param params[] = {
    {"name", "path", "string", "name of the object"},
    {"namespace", "path", "string", "object name and auth scope, such as for teams and projects"},
    {"pretty", "query", "string", "If 'true', then the output is pretty printed."},
    {"allowWatchBookmarks", "query", "boolean",
     "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."},
    {"continue", "query", "string",
     "The continue option should be set when retrieving more results from the server."},
    {"dryRun", "query", "string",
     "When present, indicates that modifications should not be persisted. Valid values are: - All"},
    {"fieldManager", "query", "string",
     "fieldManager is a name associated with the actor or entity that is making these changes."},
    {"fieldSelector", "query", "string",
     "A selector to restrict the list of returned objects by their fields. Defaults to "
     "everything."},
    {"fieldValidation", "query", "string",
     "fieldValidation instructs the server on how to handle objects in the request containing "
     "unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict"},
    {"force", "query", "boolean", "Force is going to \"force\" Apply requests."},
    {"gracePeriodSeconds", "query", "integer",
     "The duration in seconds before the object should be deleted."},
    {"ignoreStoreReadErrorWithClusterBreakingPotential", "query", "boolean",
     "if set to true, it will trigger an unsafe deletion of the resource in case the normal "
     "deletion flow fails with a corrupt object error."},
    {"labelSelector", "query", "string",
     "A selector to restrict the list of returned objects by their labels. Defaults to "
     "everything."},
    {"limit", "query", "integer",
     "limit is a maximum number of responses to return for a list call."},
    {"orphanDependents", "query", "boolean", "Deprecated: please use the PropagationPolicy."},
    {"propagationPolicy", "query", "string",
     "Whether and how garbage collection will be performed. Orphan, Background or Foreground."},
    {"resourceVersion", "query", "string",
     "resourceVersion sets a constraint on what resource versions a request may be served from."},
    {"resourceVersionMatch", "query", "string",
     "resourceVersionMatch determines how resourceVersion is applied to list calls."},
    {"sendInitialEvents", "query", "boolean",
     "`sendInitialEvents=true` may be set together with `watch=true`."},
    {"timeoutSeconds", "query", "integer", "Timeout for the list/watch call."},
    {"watch", "query", "boolean",
     "Watch for changes to the described resources and return them as a stream of add, update, and "
     "remove notifications."},
};

static json_t *param_json(const oa_fmt *f, const char *name)
{
    const oa_param *p = NULL;
    for (size_t i = 0; i < sizeof params / sizeof *params && !p; i++)
        if (strcmp(params[i].name, name) == 0) p = &params[i];
    if (!p) return NULL;
    json_t *j = json_pack("{s:s, s:s, s:s}", "name", p->name, "in", p->in, "description", p->desc);
    json_t *type = json_pack("{s:s, s:b}", "type", p->type, "uniqueItems", 1);
    if (f->v3) {
        json_object_set_new(j, "schema", type);
    } else {
        json_object_update(j, type);
        json_decref(type);
    }
    if (strcmp(p->in, "path") == 0) json_object_set_new(j, "required", json_true());
    return j;
}

static json_t *param_list(const oa_fmt *f, const char *const *names)
{
    json_t *arr = json_array();
    for (; names && *names; names++)
        json_array_append_new(arr, param_json(f, *names));
    return arr;
}

static const char *const q_list[] = {"allowWatchBookmarks",
                                     "continue",
                                     "fieldSelector",
                                     "labelSelector",
                                     "limit",
                                     "resourceVersion",
                                     "resourceVersionMatch",
                                     "sendInitialEvents",
                                     "timeoutSeconds",
                                     "watch",
                                     NULL};
static const char *const q_write[] = {"dryRun", "fieldManager", "fieldValidation", NULL};
/* kubectl --validate=strict looks for fieldValidation here (see openapi.h). */
static const char *const q_patch[] = {"dryRun", "fieldManager", "fieldValidation", "force", NULL};
static const char *const q_delete[] = {
    "dryRun",           "gracePeriodSeconds", "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents", "propagationPolicy",  NULL};
static const char *const q_delete_collection[] = {
    "continue",
    "dryRun",
    "fieldSelector",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "labelSelector",
    "limit",
    "orphanDependents",
    "propagationPolicy",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    NULL};

/* ---- Operations ------------------------------------------------------------ */

typedef enum { BODY_NONE, BODY_OBJECT, BODY_PATCH, BODY_DELETE } oa_body;
typedef enum { RESP_OBJECT, RESP_LIST, RESP_STATUS } oa_resp;

typedef struct oa_op {
    const char *method;  /* path item key */
    const char *action;  /* x-kubernetes-action */
    const char *verb;    /* discovery verb that must be served */
    const char *id_verb; /* operationId prefix */
    const char *desc;    /* printf format taking the kind */
    oa_body body;
    oa_resp resp;
    const char *const *query;
    const char *codes; /* success codes, e.g. "200,201" */
} oa_op;

static const oa_op op_list = {
    "get",     "list",    "list", "list", "list or watch objects of kind %s",
    BODY_NONE, RESP_LIST, q_list, "200"};
static const oa_op op_create = {"post",      "post",      "create", "create",     "create %s",
                                BODY_OBJECT, RESP_OBJECT, q_write,  "200,201,202"};
static const oa_op op_delete_collection = {
    "delete",    "deletecollection", "deletecollection",  "delete", "delete collection of %s",
    BODY_DELETE, RESP_STATUS,        q_delete_collection, "200"};
static const oa_op op_read = {"get",     "get",       "get", "read", "read the specified %s",
                              BODY_NONE, RESP_OBJECT, NULL,  "200"};
static const oa_op op_replace = {
    "put",       "put",       "update", "replace", "replace the specified %s",
    BODY_OBJECT, RESP_OBJECT, q_write,  "200,201"};
static const oa_op op_patch = {
    "patch",    "patch",     "patch", "patch",  "partially update the specified %s",
    BODY_PATCH, RESP_OBJECT, q_patch, "200,201"};
static const oa_op op_delete = {"delete",    "delete",    "delete", "delete", "delete a %s",
                                BODY_DELETE, RESP_STATUS, q_delete, "200,202"};

/* What one path's operations are about. */
typedef struct oa_target {
    const api_kind *k;
    const char *group, *version, *kind; /* the GVK the operations carry */
    const char *id_tail;                /* operationId after the stem, e.g. "NamespacedPod" */
} oa_target;

static const char *code_text(const char *code)
{
    return strcmp(code, "201") == 0 ? "Created" : strcmp(code, "202") == 0 ? "Accepted" : "OK";
}

static json_t *responses(const oa_fmt *f, const oa_op *op, const oa_target *t)
{
    char schema[512];
    if (op->resp == RESP_STATUS)
        snprintf(schema, sizeof schema, META "Status");
    else
        schema_name(t->group, t->version, t->kind, op->resp == RESP_LIST ? "List" : "", schema,
                    sizeof schema);
    json_t *r = json_object();
    for (const char *c = op->codes; *c; c += strspn(c, ",")) {
        char code[4] = {0};
        memcpy(code, c, 3);
        c += strcspn(c, ",");
        json_t *resp = json_pack("{s:s}", "description", code_text(code));
        if (f->v3)
            json_object_set_new(resp, "content",
                                json_pack("{s:{s:o}, s:{s:o}}", "application/json", "schema",
                                          ref_to(f, schema), "application/yaml", "schema",
                                          ref_to(f, schema)));
        else
            json_object_set_new(resp, "schema", ref_to(f, schema));
        json_object_set_new(r, code, resp);
    }
    json_object_set_new(r, "401", json_pack("{s:s}", "description", "Unauthorized"));
    return r;
}

/* Body media types. Strategic merge patch is advertised for the built-in
 * kinds patch.c merges strategically and whose schemas carry the merge
 * markers (see openapi.h): kubectl apply then computes its patches from
 * these documents. Custom kinds get JSON and merge patches only. */
static const char *const patch_types[] = {PATCH_CT_JSON, PATCH_CT_MERGE, NULL};
static const char *const smp_patch_types[] = {PATCH_CT_JSON, PATCH_CT_MERGE, PATCH_CT_STRATEGIC,
                                              NULL};
static const char *const object_types[] = {"*/*", NULL};

static const sch_msg *kind_msg(const char *g, const char *v, const char *kind);

static const char *const *body_types(const oa_op *op, const oa_target *t)
{
    if (op->body != BODY_PATCH) return object_types;
    bool smp = patch_kind_is_builtin(t->kind) && kind_msg(t->group, t->version, t->kind);
    return smp ? smp_patch_types : patch_types;
}

static json_t *string_array(const char *const *s)
{
    json_t *arr = json_array();
    for (; *s; s++)
        json_array_append_new(arr, json_string(*s));
    return arr;
}

static void body_schema(const oa_op *op, const oa_target *t, char *buf, size_t n)
{
    if (op->body == BODY_PATCH)
        snprintf(buf, n, META "Patch");
    else if (op->body == BODY_DELETE)
        snprintf(buf, n, META "DeleteOptions");
    else
        schema_name(t->group, t->version, t->kind, "", buf, n);
}

static void add_body_v3(json_t *o, const oa_op *op, const oa_target *t)
{
    char schema[512];
    body_schema(op, t, schema, sizeof schema);
    json_t *content = json_object();
    for (const char *const *ct = body_types(op, t); *ct; ct++)
        json_object_set_new(content, *ct, json_pack("{s:o}", "schema", ref_to(&FMT_V3, schema)));
    json_object_set_new(
        o, "requestBody",
        json_pack("{s:o, s:b}", "content", content, "required", op->body != BODY_DELETE));
}

static void add_body_v2(json_t *o, const oa_op *op, const oa_target *t)
{
    char schema[512];
    body_schema(op, t, schema, sizeof schema);
    json_t *body = json_pack("{s:s, s:s, s:b, s:o}", "name", "body", "in", "body", "required",
                             op->body != BODY_DELETE, "schema", ref_to(&FMT_V2, schema));
    json_array_append_new(json_object_get(o, "parameters"), body);
    json_object_set_new(o, "consumes", string_array(body_types(op, t)));
}

static json_t *operation(const oa_fmt *f, const oa_op *op, const oa_target *t)
{
    char desc[256], stem[256], id[640], tag[256];
    snprintf(desc, sizeof desc, op->desc, t->kind);
    op_stem(t->k->group, t->k->version, stem, sizeof stem);
    op_tag(t->k->group, t->k->version, tag, sizeof tag);
    snprintf(id, sizeof id, "%s%s%s%s", op->id_verb, stem,
             op == &op_delete_collection ? "Collection" : "", t->id_tail);
    json_t *o = json_pack("{s:[s], s:s, s:s, s:o}", "tags", tag, "description", desc, "operationId",
                          id, "parameters", param_list(f, op->query));
    if (!f->v3) {
        json_object_set_new(o, "produces",
                            json_pack("[s, s]", "application/json", "application/yaml"));
        json_object_set_new(o, "schemes", json_pack("[s]", "https"));
    }
    if (op->body != BODY_NONE) (f->v3 ? add_body_v3 : add_body_v2)(o, op, t);
    json_object_set_new(o, "responses", responses(f, op, t));
    json_object_set_new(o, "x-kubernetes-action", json_string(op->action));
    json_object_set_new(o, "x-kubernetes-group-version-kind",
                        gvk_object(t->group, t->version, t->kind));
    return o;
}

/* ---- Paths ------------------------------------------------------------------ */

static void add_op(json_t *item, const oa_fmt *f, const oa_op *op, const oa_target *t)
{
    json_object_set_new(item, op->method, operation(f, op, t));
}

static json_t *path_item(const oa_fmt *f, bool with_name, bool with_ns)
{
    const char *names[4] = {NULL};
    size_t n = 0;
    if (with_name) names[n++] = "name";
    if (with_ns) names[n++] = "namespace";
    names[n] = "pretty";
    return json_pack("{s:o}", "parameters", param_list(f, names));
}

static void gv_prefix(const api_kind *k, char *buf, size_t n)
{
    if (*k->group)
        snprintf(buf, n, "/apis/%s/%s", k->group, k->version);
    else
        snprintf(buf, n, "/api/%s", k->version);
}

static void add_main_paths(json_t *paths, const oa_fmt *f, const api_kind *k)
{
    char pre[256], coll[512], item[600], tail[256];
    gv_prefix(k, pre, sizeof pre);
    snprintf(coll, sizeof coll, "%s%s/%s", pre, k->namespaced ? "/namespaces/{namespace}" : "",
             k->resource);
    snprintf(item, sizeof item, "%s/{name}", coll);
    snprintf(tail, sizeof tail, "%s%s", k->namespaced ? "Namespaced" : "", k->kind);
    oa_target t = {k, k->group, k->version, k->kind, tail};

    json_t *c = path_item(f, false, k->namespaced);
    if (disc_has_verb(k, "list")) add_op(c, f, &op_list, &t);
    if (disc_has_verb(k, "create")) add_op(c, f, &op_create, &t);
    if (disc_has_verb(k, "deletecollection")) add_op(c, f, &op_delete_collection, &t);
    json_object_set_new(paths, coll, c);

    json_t *i = path_item(f, true, k->namespaced);
    if (disc_has_verb(k, "get")) add_op(i, f, &op_read, &t);
    if (disc_has_verb(k, "update")) add_op(i, f, &op_replace, &t);
    if (disc_has_verb(k, "patch")) add_op(i, f, &op_patch, &t);
    if (disc_has_verb(k, "delete")) add_op(i, f, &op_delete, &t);
    json_object_set_new(paths, item, i);

    if (k->namespaced && disc_has_verb(k, "list")) {
        char all[512], all_tail[256];
        snprintf(all, sizeof all, "%s/%s", pre, k->resource);
        snprintf(all_tail, sizeof all_tail, "%sForAllNamespaces", k->kind);
        oa_target ta = {k, k->group, k->version, k->kind, all_tail};
        json_t *a = path_item(f, false, false);
        add_op(a, f, &op_list, &ta);
        json_object_set_new(paths, all, a);
    }
}

static bool sub_has(const disc_sub *s, const char *verb)
{
    for (const char *const *v = s->verbs; *v; v++)
        if (strcmp(*v, verb) == 0) return true;
    return false;
}

static void add_sub_path(json_t *paths, const oa_fmt *f, const api_kind *k, const disc_sub *s)
{
    char pre[256], path[700], tail[256];
    gv_prefix(k, pre, sizeof pre);
    snprintf(path, sizeof path, "%s%s/%s/{name}/%s", pre,
             k->namespaced ? "/namespaces/{namespace}" : "", k->resource, s->name);
    snprintf(tail, sizeof tail, "%s%s%c%s", k->namespaced ? "Namespaced" : "", k->kind,
             toupper((unsigned char)s->name[0]), s->name + 1);
    oa_target t = {k, s->group, s->version, s->kind, tail};
    json_t *p = path_item(f, true, k->namespaced);
    if (sub_has(s, "get")) add_op(p, f, &op_read, &t);
    if (sub_has(s, "update")) add_op(p, f, &op_replace, &t);
    if (sub_has(s, "patch")) add_op(p, f, &op_patch, &t);
    if (sub_has(s, "create")) add_op(p, f, &op_create, &t);
    json_object_set_new(paths, path, p);
}

/* ---- Schemas ----------------------------------------------------------------
 *
 * One schema per message of the typed tables (schema.h), named
 * "<pkg>.<Name>" as upstream names its Go types, with the descriptions,
 * required fields and enum values of schema_docs.c. Messages refer to each
 * other by $ref; a document holds every message reachable from its kinds. */

#define QUANTITY "io.k8s.apimachinery.pkg.api.resource.Quantity"
#define INTORSTR "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
#define RAWEXT "io.k8s.apimachinery.pkg.runtime.RawExtension"

/* Their first words are upstream's (clients such as upstream's e2e specs
 * match `kubectl explain` against them); the rest is ours. */
static const char *const desc_api_version =
    "APIVersion defines the versioned schema of this representation of an object, as "
    "\"group/version\" (\"v1\" for the core group). The server converts objects to it on the "
    "way out.";
static const char *const desc_kind =
    "Kind is a string value representing the REST resource this object represents, in "
    "CamelCase (\"Pod\"). Written by clients, checked by the server; it cannot be changed.";

static json_t *typed(const char *type, const char *format)
{
    json_t *j = json_pack("{s:s}", "type", type);
    if (format) json_object_set_new(j, "format", json_string(format));
    return j;
}

static json_t *string_prop(const char *desc)
{
    return json_pack("{s:s, s:s}", "type", "string", "description", desc);
}

static void msg_name(const sch_msg *m, char *buf, size_t n)
{
    snprintf(buf, n, "%s.%s", m->pkg, m->name);
}

/* A value that is another schema. v3 wraps the $ref in allOf so siblings
 * (description, default) are allowed, as upstream does; `dflt` adds upstream's
 * `default: {}` for nested objects (only where {} is a valid value of the
 * target, so the document validates). v2 puts siblings next to the $ref. */
static json_t *ref_value(const oa_fmt *f, const char *schema, bool dflt)
{
    if (!f->v3) return ref_to(f, schema);
    json_t *p = json_pack("{s:[o]}", "allOf", ref_to(f, schema));
    if (dflt) json_object_set_new(p, "default", json_object());
    return p;
}

/* Whether `m` (or a type it inlines) has a required field: then {} is not
 * a valid value of it. */
static bool has_required(const sch_msg *m)
{
    for (size_t i = 0; i < m->n; i++) {
        const sch_field *fd = &m->fields[i];
        if (fd->type == SCH_INLINE) {
            if (has_required(fd->msg)) return true;
            continue;
        }
        const sch_doc *doc = sch_doc_find(m->name, fd->json);
        if (doc && doc->required) return true;
    }
    return false;
}

/* The named schema a scalar type refers to, or NULL when it is inline. */
static const char *scalar_ref(const sch_field *fd)
{
    switch (fd->type) {
    case SCH_QUANTITY:
        return QUANTITY;
    case SCH_INTORSTR:
        return INTORSTR;
    case SCH_TIME:
        return META "Time";
    case SCH_MICROTIME:
        return META "MicroTime";
    case SCH_RAWJSON:
        return strcmp(fd->json, "fieldsV1") == 0 ? META "FieldsV1" : RAWEXT;
    default:
        return NULL;
    }
}

static json_t *map_of(json_t *value)
{
    return json_pack("{s:s, s:o}", "type", "object", "additionalProperties", value);
}

/* The schema of one value of a field: the field itself, or one element when
 * it repeats. */
static json_t *value_schema(const oa_fmt *f, const sch_field *fd)
{
    char name[256];
    const char *ref = scalar_ref(fd);
    if (ref) return ref_value(f, ref, false);
    switch (fd->type) {
    case SCH_BYTES:
        return typed("string", "byte");
    case SCH_BOOL:
        return typed("boolean", NULL);
    case SCH_INT32:
        return typed("integer", "int32");
    case SCH_INT64:
        return typed("integer", "int64");
    case SCH_MSG:
        msg_name(fd->msg, name, sizeof name);
        return ref_value(f, name, !has_required(fd->msg));
    case SCH_MAP_SS:
        return map_of(typed("string", NULL));
    case SCH_MAP_SB:
        return map_of(typed("string", "byte"));
    case SCH_MAP_SQ:
        return map_of(ref_to(f, QUANTITY));
    case SCH_MAP_SM:
        msg_name(fd->msg, name, sizeof name);
        if (fd->flags & SCH_VREP)
            return map_of(json_pack("{s:s, s:o}", "type", "array", "items", ref_to(f, name)));
        return map_of(ref_to(f, name));
    default:
        return typed("string", NULL);
    }
}

static json_t *enum_list(const char *enums)
{
    json_t *arr = json_array();
    for (const char *p = enums; *p;) {
        size_t len = strcspn(p, "|");
        json_array_append_new(arr, json_stringn(p, len));
        p += len + (p[len] == '|');
    }
    return arr;
}

/* ---- Strategic merge markers
 *
 * patch.c knows merge lists by field path within a kind; the documents
 * carry them per type, as upstream's struct tags do. A walk from every
 * served kind through its types finds each list's path and asks patch.c;
 * a type reached on several paths takes the first merge key found. */

typedef struct oa_marker {
    const sch_msg *msg;
    const char *field;
    const char *key; /* "" for a set of primitives */
} oa_marker;

#define OA_MAX_MARKERS 128
static oa_marker markers[OA_MAX_MARKERS];
static size_t nmarkers;
static pthread_once_t markers_once = PTHREAD_ONCE_INIT;

static const oa_marker *marker_find(const sch_msg *m, const char *field)
{
    for (size_t i = 0; i < nmarkers; i++)
        if (markers[i].msg == m && strcmp(markers[i].field, field) == 0) return &markers[i];
    return NULL;
}

static void marker_add(const sch_msg *m, const char *field, const char *key)
{
    if (marker_find(m, field) || nmarkers == OA_MAX_MARKERS) return;
    markers[nmarkers++] = (oa_marker){m, field, key};
}

/* Visit the fields of `m`, whose values sit at path[0..len). */
static void walk_markers(const char *kind, const sch_msg *m, char *path, size_t len, size_t cap)
{
    for (size_t i = 0; i < m->n; i++) {
        const sch_field *fd = &m->fields[i];
        if (fd->type == SCH_INLINE) {
            walk_markers(kind, fd->msg, path, len, cap);
            continue;
        }
        int n = snprintf(path + len, cap - len, "%s%s%s", len ? "." : "", fd->json,
                         fd->flags & SCH_REP ? "[]" : "");
        if (n < 0 || (size_t)n >= cap - len) continue;
        size_t end = len + (size_t)n;
        if (fd->flags & SCH_REP) {
            path[end - 2] = '\0'; /* the list itself, without "[]" */
            const char *key = patch_merge_key(kind, path);
            if (key) marker_add(m, fd->json, key);
            path[end - 2] = '[';
        }
        if (fd->msg) walk_markers(kind, fd->msg, path, end, cap);
        path[len] = '\0';
    }
}

static void api_version_of(const char *group, const char *version, char *buf, size_t n)
{
    if (*group)
        snprintf(buf, n, "%s/%s", group, version);
    else
        snprintf(buf, n, "%s", version);
}

static void collect_markers(void)
{
    char path[1024] = "", av[256];
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        api_version_of(k->group, k->version, av, sizeof av);
        const sch_msg *m = sch_kind(av, k->kind);
        if (m) walk_markers(k->kind, m, path, 0, sizeof path);
    }
}

static void add_markers(json_t *p, const sch_msg *owner, const sch_field *fd)
{
    pthread_once(&markers_once, collect_markers);
    const oa_marker *mk = marker_find(owner, fd->json);
    if (!mk) return;
    if (*mk->key) json_object_set_new(p, "x-kubernetes-patch-merge-key", json_string(mk->key));
    json_object_set_new(p, "x-kubernetes-patch-strategy", json_string("merge"));
}

/* The property of field `fd` of message `owner` (its own type, not the
 * type that inlines it). */
static json_t *field_schema(const oa_fmt *f, const sch_msg *owner, const sch_field *fd)
{
    const sch_doc *doc = sch_doc_find(owner->name, fd->json);
    json_t *value = value_schema(f, fd);
    if (doc && doc->enums) json_object_set_new(value, "enum", enum_list(doc->enums));
    json_t *p = value;
    if (fd->flags & SCH_REP) {
        p = json_pack("{s:s, s:o}", "type", "array", "items", value);
        add_markers(p, owner, fd);
    }
    if (doc && doc->desc) json_object_set_new(p, "description", json_string(doc->desc));
    return p;
}

/* Properties and required fields of `m`, inlined types merged in. */
static void add_fields(const oa_fmt *f, const sch_msg *m, json_t *props, json_t *req)
{
    for (size_t i = 0; i < m->n; i++) {
        const sch_field *fd = &m->fields[i];
        if (fd->type == SCH_INLINE) {
            add_fields(f, fd->msg, props, req);
            continue;
        }
        json_object_set_new(props, fd->json, field_schema(f, m, fd));
        const sch_doc *doc = sch_doc_find(m->name, fd->json);
        if (doc && doc->required) json_array_append_new(req, json_string(fd->json));
    }
}

static void set_desc(json_t *schema, const char *type_name)
{
    const sch_doc *doc = sch_doc_find(type_name, NULL);
    if (doc && doc->desc) json_object_set_new(schema, "description", json_string(doc->desc));
}

static json_t *msg_schema(const oa_fmt *f, const sch_msg *m)
{
    json_t *props = json_object(), *req = json_array();
    add_fields(f, m, props, req);
    json_t *s = json_pack("{s:s, s:o}", "type", "object", "properties", props);
    set_desc(s, m->name);
    if (json_array_size(req))
        json_object_set_new(s, "required", req);
    else
        json_decref(req);
    return s;
}

/* One of several types, for v3 (kubectl explain then shows the schema's name). */
static json_t *one_of(const char *a, const char *b)
{
    return json_pack("{s:[{s:s}, {s:s}]}", "oneOf", "type", a, "type", b);
}

/* The named schema of a scalar type: Quantity, IntOrString, Time, ... As
 * upstream, v3 spells the two union types with oneOf, v2 as strings. */
static json_t *scalar_schema(const oa_fmt *f, const char *name)
{
    const char *short_name = strrchr(name, '.') + 1;
    json_t *s;
    if (strcmp(name, INTORSTR) == 0) {
        s = f->v3 ? one_of("integer", "string") : typed("string", NULL);
        json_object_set_new(s, "format", json_string("int-or-string"));
    } else if (strcmp(name, QUANTITY) == 0) {
        s = f->v3 ? one_of("string", "number") : typed("string", NULL);
    } else if (strcmp(name, META "Time") == 0 || strcmp(name, META "MicroTime") == 0) {
        s = typed("string", "date-time");
    } else {
        s = typed("object", NULL);
    }
    set_desc(s, short_name);
    return s;
}

/* Add `m` and every message it reaches, once each. */
static void add_msg_tree(json_t *schemas, const oa_fmt *f, const sch_msg *m)
{
    char name[256];
    msg_name(m, name, sizeof name);
    if (json_object_get(schemas, name)) return;
    json_object_set_new(schemas, name, msg_schema(f, m));
    for (size_t i = 0; i < m->n; i++) {
        const sch_field *fd = &m->fields[i];
        const char *ref = scalar_ref(fd);
        if (fd->msg)
            add_msg_tree(schemas, f, fd->msg);
        else if (ref && !json_object_get(schemas, ref))
            json_object_set_new(schemas, ref, scalar_schema(f, ref));
        else if (fd->type == SCH_MAP_SQ && !json_object_get(schemas, QUANTITY))
            json_object_set_new(schemas, QUANTITY, scalar_schema(f, QUANTITY));
    }
}

/* Make a message schema a top-level kind: TypeMeta's apiVersion and kind,
 * and the GVK kubectl finds it by. */
static void mark_kind(json_t *schema, const char *g, const char *v, const char *kind)
{
    json_t *props = json_object_get(schema, "properties");
    if (!json_object_get(props, "apiVersion")) {
        json_object_set_new(props, "apiVersion", string_prop(desc_api_version));
        json_object_set_new(props, "kind", string_prop(desc_kind));
    }
    json_t *gvks = json_object_get(schema, "x-kubernetes-group-version-kind");
    if (!gvks) {
        gvks = json_array();
        json_object_set_new(schema, "x-kubernetes-group-version-kind", gvks);
    }
    size_t i;
    json_t *e;
    json_array_foreach(gvks, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "group")), g) == 0 &&
            strcmp(json_string_value(json_object_get(e, "version")), v) == 0 &&
            strcmp(json_string_value(json_object_get(e, "kind")), kind) == 0)
            return;
    }
    json_array_append_new(gvks, gvk_object(g, v, kind));
}

/* The typed message of a kind, if its schema name is the one the paths
 * use; NULL for kinds with no typed table (registered custom kinds). */
static const sch_msg *kind_msg(const char *g, const char *v, const char *kind)
{
    char av[256], want[512], have[512];
    api_version_of(g, v, av, sizeof av);
    const sch_msg *m = sch_kind(av, kind);
    if (!m) return NULL;
    schema_name(g, v, kind, "", want, sizeof want);
    msg_name(m, have, sizeof have);
    return strcmp(want, have) == 0 ? m : NULL;
}

static json_t *open_object(const char *desc)
{
    return json_pack("{s:s, s:s, s:b}", "type", "object", "description", desc,
                     "x-kubernetes-preserve-unknown-fields", 1);
}

/* The schema of a kind with no typed table: the envelope is described, the
 * body is left open. */
static json_t *open_kind_schema(const oa_fmt *f, const char *g, const char *v, const char *kind)
{
    json_t *props =
        json_pack("{s:o, s:o, s:o, s:o, s:o}", "apiVersion", string_prop(desc_api_version), "kind",
                  string_prop(desc_kind), "metadata",
                  ref_property(f, META "ObjectMeta", "Standard object's metadata."), "spec",
                  open_object("Desired state; not described by allot's OpenAPI."), "status",
                  open_object("Observed state; not described by allot's OpenAPI."));
    char desc[256];
    snprintf(desc, sizeof desc,
             "%s as served by allot; fields other than apiVersion, kind and "
             "metadata are not described.",
             kind);
    return json_pack("{s:s, s:s, s:o, s:b, s:[o]}", "description", desc, "type", "object",
                     "properties", props, "x-kubernetes-preserve-unknown-fields", 1,
                     "x-kubernetes-group-version-kind", gvk_object(g, v, kind));
}

static json_t *list_schema(const oa_fmt *f, const char *g, const char *v, const char *kind)
{
    char item[512], list_kind[256], desc[300];
    const sch_msg *m = kind_msg(g, v, kind);
    schema_name(g, v, kind, "", item, sizeof item);
    snprintf(list_kind, sizeof list_kind, "%sList", kind);
    snprintf(desc, sizeof desc, "%s is a list of %s objects.", list_kind, kind);
    json_t *items =
        json_pack("{s:s, s:s, s:o}", "type", "array", "description", "The objects of the list.",
                  "items", ref_value(f, item, !m || !has_required(m)));
    json_t *props = json_pack(
        "{s:o, s:o, s:o, s:o}", "apiVersion", string_prop(desc_api_version), "items", items, "kind",
        string_prop(desc_kind), "metadata",
        ref_property(f, META "ListMeta", "The list's metadata: resourceVersion and continue."));
    return json_pack("{s:s, s:s, s:o, s:[s], s:[o]}", "description", desc, "type", "object",
                     "properties", props, "required", "items", "x-kubernetes-group-version-kind",
                     gvk_object(g, v, list_kind));
}

static void add_kind_schemas(json_t *schemas, const oa_fmt *f, const char *g, const char *v,
                             const char *kind, bool with_list)
{
    char name[512];
    schema_name(g, v, kind, "", name, sizeof name);
    const sch_msg *m = kind_msg(g, v, kind);
    if (m) {
        add_msg_tree(schemas, f, m);
        mark_kind(json_object_get(schemas, name), g, v, kind);
    } else {
        json_object_set_new(schemas, name, open_kind_schema(f, g, v, kind));
    }
    if (!with_list) return;
    schema_name(g, v, kind, "List", name, sizeof name);
    json_object_set_new(schemas, name, list_schema(f, g, v, kind));
}

/* A message by its schema name ("io.k8s...v1.ObjectMeta"); NULL if none. */
static const sch_msg *msg_by_name(const char *name)
{
    const sch_msg *const *all;
    size_t n = sch_all_msgs(&all);
    char have[256];
    for (size_t i = 0; i < n; i++) {
        msg_name(all[i], have, sizeof have);
        if (strcmp(have, name) == 0) return all[i];
    }
    return NULL;
}

/* A kind of meta/v1 that every group version serves (Status, DeleteOptions). */
static void add_meta_kind(json_t *schemas, const oa_fmt *f, const char *kind)
{
    const sch_msg *m = sch_kind("v1", kind);
    char name[256];
    msg_name(m, name, sizeof name);
    add_msg_tree(schemas, f, m);
    mark_kind(json_object_get(schemas, name), "", "v1", kind);
}

/* Schemas every document refers to: metadata, Status, DeleteOptions, Patch. */
static void add_meta_schemas(json_t *schemas, const oa_fmt *f)
{
    add_meta_kind(schemas, f, "Status");
    add_meta_kind(schemas, f, "DeleteOptions");
    add_msg_tree(schemas, f, msg_by_name(META "ObjectMeta"));
    json_t *patch = json_pack("{s:s}", "type", "object");
    set_desc(patch, "Patch");
    json_object_set_new(schemas, META "Patch", patch);
}

/* ---- Documents ------------------------------------------------------------- */

static bool is_true_member(const json_t *s, const char *key)
{
    return json_is_true(json_object_get(s, key));
}

static bool type_is(const json_t *s, const char *type)
{
    const char *t = json_string_value(json_object_get(s, "type"));
    return t && strcmp(t, type) == 0;
}

/* apiextensions' ToStructuralOpenAPIV2 on one node and below, for the
 * Swagger 2.0 document (kubectl's client-side validation reads it), and
 * the defaults pruned as upstream prunes them from /openapi/v2:
 *   - no allOf, anyOf, oneOf or not;
 *   - a nullable node loses its type, items and properties (an untyped
 *     value), and stops being required by its parent;
 *   - x-kubernetes-preserve-unknown-fields: no items or properties, and no
 *     type object (kubectl would refuse the unknown fields);
 *   - an array left without items loses its type.
 * The parent is rewritten before its children, as upstream's visitor does,
 * so a property's nullable is read before the property is rewritten. */
static void v2_node(json_t *s)
{
    if (!json_is_object(s)) return;
    static const char *const dropped[] = {"allOf", "anyOf", "oneOf", "not", "default", NULL};
    for (const char *const *d = dropped; *d; d++)
        json_object_del(s, *d);
    json_t *props = json_object_get(s, "properties");
    json_t *req = json_object_get(s, "required");
    const char *key;
    json_t *v;
    json_object_foreach(props, key, v)
    {
        if (!is_true_member(v, "nullable") || !json_is_array(req)) continue;
        for (size_t i = json_array_size(req); i-- > 0;)
            if (json_is_string(json_array_get(req, i)) &&
                !strcmp(json_string_value(json_array_get(req, i)), key))
                json_array_remove(req, i);
    }
    if (is_true_member(json_object_get(s, "additionalProperties"), "nullable"))
        json_object_del(s, "required");
    if (json_is_array(json_object_get(s, "required")) &&
        json_array_size(json_object_get(s, "required")) == 0)
        json_object_del(s, "required");
    if (is_true_member(s, "nullable")) {
        json_object_del(s, "type");
        json_object_del(s, "nullable");
        json_object_del(s, "items");
        json_object_del(s, "properties");
    }
    bool preserve = is_true_member(s, "x-kubernetes-preserve-unknown-fields");
    if (preserve) {
        json_object_del(s, "items");
        json_object_del(s, "properties");
    }
    if (!json_object_get(s, "items") && type_is(s, "array")) json_object_del(s, "type");
    if (preserve && type_is(s, "object")) json_object_del(s, "type");
    json_object_foreach(json_object_get(s, "properties"), key, v) v2_node(v);
    v2_node(json_object_get(s, "items"));
    v2_node(json_object_get(s, "additionalProperties"));
}

/* The schema of a kind defined at run time: its openAPIV3Schema with the
 * envelope upstream adds (apiVersion, kind, metadata as ObjectMeta) and the
 * GVK kubectl finds it by. In v2, as upstream's builder: a schema that
 * preserves unknown fields at its root is published as a bare
 * {"type":"object"} (with no envelope: kubectl would refuse any other
 * field), any other through v2_node. */
static void add_custom_schemas(json_t *schemas, const oa_fmt *f, const api_kind *k)
{
    char name[512];
    json_t *s = jcopy(k->openapi_schema);
    if (!json_is_object(s)) {
        json_decref(s);
        return;
    }
    if (!f->v3 && is_true_member(s, "x-kubernetes-preserve-unknown-fields")) {
        json_decref(s);
        s = json_pack("{s:s, s:[o]}", "type", "object", "x-kubernetes-group-version-kind",
                      gvk_object(k->group, k->version, k->kind));
        schema_name(k->group, k->version, k->kind, "", name, sizeof name);
        json_object_set_new(schemas, name, s);
        schema_name(k->group, k->version, k->kind, "List", name, sizeof name);
        json_object_set_new(schemas, name, list_schema(f, k->group, k->version, k->kind));
        return;
    }
    if (!f->v3) v2_node(s);
    json_t *props = json_object_get(s, "properties");
    if (!json_is_object(props)) {
        props = json_object();
        json_object_set_new(s, "properties", props);
    }
    json_object_set_new(props, "apiVersion", string_prop(desc_api_version));
    json_object_set_new(props, "kind", string_prop(desc_kind));
    json_object_set_new(props, "metadata",
                        ref_property(f, META "ObjectMeta", "Standard object's metadata."));
    json_object_set_new(s, "x-kubernetes-group-version-kind",
                        json_pack("[o]", gvk_object(k->group, k->version, k->kind)));
    schema_name(k->group, k->version, k->kind, "", name, sizeof name);
    json_object_set_new(schemas, name, s);
    schema_name(k->group, k->version, k->kind, "List", name, sizeof name);
    json_object_set_new(schemas, name, list_schema(f, k->group, k->version, k->kind));
}

/* Add paths and schemas of one kind to a document under construction. */
static void add_kind(json_t *paths, json_t *schemas, const oa_fmt *f, const api_kind *k)
{
    add_main_paths(paths, f, k);
    if (k->openapi_schema)
        add_custom_schemas(schemas, f, k);
    else
        add_kind_schemas(schemas, f, k->group, k->version, k->kind, true);
    disc_sub subs[DISC_MAX_SUBS];
    size_t ns = disc_subresources(k, subs);
    for (size_t i = 0; i < ns; i++) {
        add_sub_path(paths, f, k, &subs[i]);
        if (subs[i].own_gv || strcmp(subs[i].kind, k->kind) != 0)
            add_kind_schemas(schemas, f, subs[i].group, subs[i].version, subs[i].kind, false);
    }
}

static bool kind_in_gv(const api_kind *k, const char *group, const char *version)
{
    return strcmp(k->group, group) == 0 && strcmp(k->version, version) == 0;
}

static json_t *build_v3(const char *group, const char *version)
{
    json_t *paths = json_object(), *schemas = json_object();
    size_t served = 0, nk = api_kind_count();
    for (size_t i = 0; i < nk; i++) {
        const api_kind *k = api_kind_at(i);
        if (!api_kind_served(k) || !kind_in_gv(k, group, version)) continue;
        add_kind(paths, schemas, &FMT_V3, k);
        served++;
    }
    if (!served) {
        json_decref(paths);
        json_decref(schemas);
        return NULL;
    }
    add_meta_schemas(schemas, &FMT_V3);
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o, s:{s:{s:s, s:s}}}, s:[{s:[]}]}", "openapi",
                     "3.0.0", "info", "title", "Kubernetes", "version", DISC_GIT_VERSION, "paths",
                     paths, "components", "schemas", schemas, "securitySchemes", "BearerToken",
                     "type", "http", "scheme", "bearer", "security", "BearerToken");
}

static void hex_upper(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int doc_hash(const json_t *doc, char out[65])
{
    char *text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
    if (!text) return -1;
    unsigned char digest[32];
    disc_sha256(text, strlen(text), digest);
    free(text);
    hex_upper(digest, sizeof digest, out);
    return 0;
}

/* ---- Cache -----------------------------------------------------------------
 *
 * The documents depend only on the registry, which is complete once serving
 * starts, yet kubectl fetches the root (every group version's hash) and a
 * group version on most commands. Each served group version's document and
 * hash, and the v2 document, are built once and handed out as deep copies;
 * a publication in the kind table (api_kind_generation) drops them all. Group versions
 * that are not served are not cached (clients choose those names). */

typedef struct oa_entry {
    char gv[300]; /* "group/version" */
    json_t *doc;
    char hash[65];
} oa_entry;

#define OA_CACHE_MAX 64
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static oa_entry cache[OA_CACHE_MAX];
static size_t ncache;
static unsigned cache_gen;
static bool cache_valid;
static json_t *cache_v2;
static unsigned char *cache_v2pb; /* the v2 document as protobuf (openapi_v2_pb) */
static size_t cache_v2pb_len;

static void cache_clear_locked(void)
{
    for (size_t i = 0; i < ncache; i++)
        json_decref(cache[i].doc);
    ncache = 0;
    json_decref(cache_v2);
    cache_v2 = NULL;
    free(cache_v2pb);
    cache_v2pb = NULL;
}

/* Under cache_mu: forget everything if the registry changed. */
static void cache_check_locked(void)
{
    unsigned gen = api_kind_generation();
    if (cache_valid && cache_gen == gen) return;
    cache_clear_locked();
    cache_gen = gen;
    cache_valid = true;
}

/* Under cache_mu: the entry of a served group version, built on first use;
 * NULL if it is not served. An empty hash means hashing failed. */
static const oa_entry *cache_get_locked(const char *group, const char *version)
{
    char gv[300];
    snprintf(gv, sizeof gv, "%s/%s", group, version);
    cache_check_locked();
    for (size_t i = 0; i < ncache; i++)
        if (strcmp(cache[i].gv, gv) == 0) return &cache[i];
    json_t *doc = build_v3(group, version);
    if (!doc) return NULL;
    if (ncache == OA_CACHE_MAX) cache_clear_locked(); /* more served group versions than expected */
    oa_entry *e = &cache[ncache++];
    snprintf(e->gv, sizeof e->gv, "%s", gv);
    e->doc = doc;
    if (doc_hash(doc, e->hash) != 0) e->hash[0] = '\0';
    return e;
}

json_t *openapi_v3_group_version(const char *group, const char *version)
{
    pthread_mutex_lock(&cache_mu);
    const oa_entry *e = cache_get_locked(group, version);
    json_t *doc = e ? jcopy(e->doc) : NULL;
    pthread_mutex_unlock(&cache_mu);
    return doc;
}

int openapi_v3_hash(const char *group, const char *version, char out[65])
{
    pthread_mutex_lock(&cache_mu);
    const oa_entry *e = cache_get_locked(group, version);
    int rc = e && e->hash[0] ? 0 : -1;
    if (rc == 0) memcpy(out, e->hash, 65);
    pthread_mutex_unlock(&cache_mu);
    return rc;
}

/* True the first time (group, version) is seen while walking the registry. */
static bool first_of_gv(size_t idx)
{
    const api_kind *k = api_kind_at(idx);
    if (!api_kind_served(k)) return false;
    for (size_t i = 0; i < idx; i++)
        if (api_kind_served(api_kind_at(i)) && kind_in_gv(api_kind_at(i), k->group, k->version))
            return false;
    return true;
}

json_t *openapi_v3_root(void)
{
    json_t *paths = json_object();
    size_t nk = api_kind_count();
    for (size_t i = 0; i < nk; i++) {
        const api_kind *k = api_kind_at(i);
        char key[300], url[450], hash[65];
        if (!first_of_gv(i) || openapi_v3_hash(k->group, k->version, hash) != 0) continue;
        if (*k->group)
            snprintf(key, sizeof key, "apis/%s/%s", k->group, k->version);
        else
            snprintf(key, sizeof key, "api/%s", k->version);
        snprintf(url, sizeof url, "/openapi/v3/%s?hash=%s", key, hash);
        json_object_set_new(paths, key, json_pack("{s:s}", "serverRelativeURL", url));
    }
    return json_pack("{s:o}", "paths", paths);
}

static json_t *build_v2(void)
{
    json_t *paths = json_object(), *defs = json_object();
    size_t nk = api_kind_count();
    for (size_t i = 0; i < nk; i++)
        if (api_kind_served(api_kind_at(i))) add_kind(paths, defs, &FMT_V2, api_kind_at(i));
    add_meta_schemas(defs, &FMT_V2);
    return json_pack("{s:s, s:{s:s, s:s}, s:o, s:o, s:{s:{s:s, s:s, s:s, s:s}}, s:[{s:[]}]}",
                     "swagger", "2.0", "info", "title", "Kubernetes", "version", DISC_GIT_VERSION,
                     "paths", paths, "definitions", defs, "securityDefinitions", "BearerToken",
                     "type", "apiKey", "name", "authorization", "in", "header", "description",
                     "Bearer Token authentication", "security", "BearerToken");
}

json_t *openapi_v2(void)
{
    pthread_mutex_lock(&cache_mu);
    cache_check_locked();
    if (!cache_v2) cache_v2 = build_v2();
    json_t *doc = jcopy(cache_v2);
    pthread_mutex_unlock(&cache_mu);
    return doc;
}

/* Add to `want` (and `queue`) the definitions `s` refers to, at any depth. */
static void refs_of(const json_t *s, json_t *want, json_t *queue, unsigned depth)
{
    static const char prefix[] = "#/definitions/";
    if (depth > 128) return;
    if (json_is_array(s)) {
        size_t i;
        json_t *e;
        json_array_foreach(s, i, e) refs_of(e, want, queue, depth + 1);
        return;
    }
    if (!json_is_object(s)) return;
    const char *ref = json_string_value(json_object_get(s, "$ref"));
    if (ref && !strncmp(ref, prefix, sizeof prefix - 1) &&
        !json_object_get(want, ref + sizeof prefix - 1)) {
        json_object_set_new(want, ref + sizeof prefix - 1, json_true());
        json_array_append_new(queue, json_string(ref + sizeof prefix - 1));
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)s, k, v) refs_of(v, want, queue, depth + 1);
}

/* The v2 document's definitions of the kinds CustomResourceDefinitions
 * define, and of what they refer to (ObjectMeta and its parts, ListMeta):
 * what a client reading v2 as protobuf gets (see openapi.h). */
static json_t *custom_definitions(const json_t *v2)
{
    const json_t *defs = json_object_get(v2, "definitions");
    json_t *want = json_object(), *queue = json_array(), *out = json_object();
    char name[512];
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        if (!k->openapi_schema || !api_kind_served(k)) continue;
        for (int list = 0; list < 2; list++) {
            schema_name(k->group, k->version, k->kind, list ? "List" : "", name, sizeof name);
            if (json_object_get(want, name)) continue;
            json_object_set_new(want, name, json_true());
            json_array_append_new(queue, json_string(name));
        }
    }
    for (size_t i = 0; i < json_array_size(queue); i++) {
        const char *n = json_string_value(json_array_get(queue, i));
        json_t *d = json_object_get(defs, n);
        if (!d) continue;
        json_object_set(out, n, d);
        refs_of(d, want, queue, 0);
    }
    json_decref(want);
    json_decref(queue);
    return out;
}

static void v2pb_build_locked(void)
{
    if (!cache_v2) cache_v2 = build_v2();
    json_t *doc =
        json_pack("{s:s, s:O, s:o}", "swagger", "2.0", "info", json_object_get(cache_v2, "info"),
                  "definitions", custom_definitions(cache_v2));
    cache_v2pb = doc ? oapb_encode(doc, &cache_v2pb_len) : NULL;
    json_decref(doc);
}

unsigned char *openapi_v2_pb(size_t *len)
{
    pthread_mutex_lock(&cache_mu);
    cache_check_locked();
    if (!cache_v2pb) v2pb_build_locked();
    unsigned char *copy = cache_v2pb ? malloc(cache_v2pb_len ? cache_v2pb_len : 1) : NULL;
    if (copy) memcpy(copy, cache_v2pb, cache_v2pb_len);
    *len = copy ? cache_v2pb_len : 0;
    pthread_mutex_unlock(&cache_mu);
    return copy;
}
