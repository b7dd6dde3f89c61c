/* crd_gen.c - allot's Capsule kinds as CustomResourceDefinitions (see
 * crd_gen.h). The schema is the kind's OpenAPI v3 schema, made structural
 * here; nothing about the kinds' fields is written in this file. */
#include "api/crd_gen.h"

#include "api/crd.h"
#include "api/openapi.h"
#include "api/table.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define REF_PREFIX "#/components/schemas/"
/* resource.Quantity's schema name, and the pattern upstream's generators
 * (controller-gen) give a Quantity in a CRD: its serialised syntax. */
#define QUANTITY_NAME "io.k8s.apimachinery.pkg.api.resource.Quantity"
#define QUANTITY_PATTERN                                                                           \
    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+("   \
    "\\.[0-9]*)?)|(\\.[0-9]+))))?$"
/* Deeper than any of the kinds' types nest; a guard against a cycle. */
#define MAX_DEPTH 32

typedef struct conv {
    const json_t *schemas;
    char *err;
    size_t errlen;
} conv;

static json_t *fail(conv *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static json_t *fail(conv *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    return NULL;
}

static json_t *node(conv *c, const json_t *n, int depth);

/* Keys copied as they are: what a structural schema may say of a node. */
static const char *const copied[] = {
    "type",    "format",    "description", "enum",     "required", "pattern",  "minimum",
    "maximum", "minLength", "maxLength",   "minItems", "maxItems", "nullable", NULL};
/* Keys dropped: defaults (allot defaults in code, and upstream's `default:
 * {}` on nested structs would make the API server write empty objects that
 * standalone allot does not), the group-version-kind kubectl explain finds
 * kinds by, and strategic merge markers, which CRDs do not take. */
static const char *const dropped[] = {"default", "x-kubernetes-group-version-kind",
                                      "x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key",
                                      NULL};

static bool in(const char *const *list, const char *key)
{
    for (; *list; list++)
        if (!strcmp(*list, key)) return true;
    return false;
}

/* A union of scalar types (upstream's v3 spelling of Quantity and
 * IntOrString: oneOf [{type: string}, {type: number}]): in a CRD, an
 * int-or-string. */
static bool scalar_union(const json_t *one_of)
{
    if (!json_is_array(one_of) || json_array_size(one_of) == 0) return false;
    size_t i;
    const json_t *b;
    json_array_foreach(one_of, i, b)
    {
        const char *t = json_string_value(json_object_get(b, "type"));
        if (json_object_size(b) != 1 || !t ||
            (strcmp(t, "string") && strcmp(t, "integer") && strcmp(t, "number")))
            return false;
    }
    return true;
}

static json_t *int_or_string(void)
{
    return json_pack("{s:[{s:s},{s:s}], s:b}", "anyOf", "type", "integer", "type", "string",
                     "x-kubernetes-int-or-string", 1);
}

/* A $ref: the schema it names, inlined. A Quantity takes its pattern, and
 * a scalar leaves its long type description behind (the field using it
 * has its own). */
static json_t *ref(conv *c, const char *target, int depth)
{
    if (strncmp(target, REF_PREFIX, strlen(REF_PREFIX)))
        return fail(c, "$ref %s is not a components.schemas reference", target);
    const char *name = target + strlen(REF_PREFIX);
    const json_t *t = json_object_get(c->schemas, name);
    if (!t) return fail(c, "$ref to %s, which the document does not define", name);
    json_t *out = node(c, t, depth + 1);
    if (!out) return NULL;
    if (json_object_get(out, "x-kubernetes-int-or-string")) {
        json_object_del(out, "description");
        if (!strcmp(name, QUANTITY_NAME))
            json_object_set_new(out, "pattern", json_string(QUANTITY_PATTERN));
    }
    return out;
}

/* allOf with one member: upstream's wrapping of a $ref so that a field's
 * description can sit beside it. The member, with the siblings over it. */
static json_t *all_of(conv *c, const json_t *n, int depth)
{
    const json_t *all = json_object_get(n, "allOf");
    if (!json_is_array(all) || json_array_size(all) != 1)
        return fail(c, "allOf with other than one member");
    json_t *out = node(c, json_array_get(all, 0), depth + 1);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)n, key, v)
    {
        if (!out) break;
        if (!strcmp(key, "allOf") || in(dropped, key)) continue;
        if (!in(copied, key)) {
            json_decref(out);
            return fail(c, "allOf beside \"%s\"", key);
        }
        json_object_set(out, key, (json_t *)v);
    }
    return out;
}

/* properties, items, additionalProperties: each value converted. */
static int children(conv *c, const char *key, const json_t *v, json_t *out, int depth)
{
    if (!strcmp(key, "properties")) {
        json_t *props = json_object();
        json_object_set_new(out, "properties", props);
        const char *name;
        const json_t *p;
        json_object_foreach((json_t *)v, name, p)
        {
            json_t *s = node(c, p, depth + 1);
            if (!s) return -1;
            json_object_set_new(props, name, s);
        }
        return 0;
    }
    if (json_is_boolean(v)) { /* additionalProperties: true is an open map */
        if (json_is_true(v))
            json_object_set_new(out, "x-kubernetes-preserve-unknown-fields", json_true());
        return 0;
    }
    json_t *s = node(c, v, depth + 1);
    if (!s) return -1;
    json_object_set_new(out, key, s);
    return 0;
}

static json_t *node(conv *c, const json_t *n, int depth)
{
    if (depth > MAX_DEPTH) return fail(c, "schema nests deeper than %d", MAX_DEPTH);
    if (!json_is_object(n)) return fail(c, "a schema node that is not an object");
    const char *target = json_string_value(json_object_get(n, "$ref"));
    if (target) return ref(c, target, depth);
    if (json_object_get(n, "allOf")) return all_of(c, n, depth);
    json_t *out = json_object();
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)n, key, v)
    {
        if (in(dropped, key)) continue;
        if (!strcmp(key, "oneOf") && scalar_union(v)) {
            json_decref(out);
            out = int_or_string();
            const json_t *d = json_object_get(n, "description");
            if (d) json_object_set(out, "description", (json_t *)d);
            return out;
        }
        if (!strcmp(key, "format") && !strcmp(json_string_value(v), "int-or-string")) continue;
        if (in(copied, key) || !strcmp(key, "x-kubernetes-preserve-unknown-fields")) {
            json_object_set(out, key, (json_t *)v);
        } else if (!strcmp(key, "properties") || !strcmp(key, "items") ||
                   !strcmp(key, "additionalProperties")) {
            if (children(c, key, v, out, depth) != 0) goto fail;
        } else {
            fail(c, "schema keyword \"%s\" has no structural form here", key);
            goto fail;
        }
    }
    const char *type = json_string_value(json_object_get(out, "type"));
    if (!type) {
        fail(c, "schema node without a type");
        goto fail;
    }
    /* An object the typed tables leave open (RawExtension): any fields. */
    if (!strcmp(type, "object") && !json_object_get(out, "properties") &&
        !json_object_get(out, "additionalProperties"))
        json_object_set_new(out, "x-kubernetes-preserve-unknown-fields", json_true());
    return out;
fail:
    json_decref(out);
    return NULL;
}

json_t *crd_gen_structural(const json_t *n, const json_t *schemas, char *err, size_t errlen)
{
    conv c = {schemas, err, errlen};
    return node(&c, n, 0);
}

/* ---- the definition ---- */

static int add_spec_defaults(const api_kind *k, json_t *schema, char *err, size_t errlen);

/* The schema of kind k in its group version's OpenAPI v3 document: the one
 * kubectl explain finds by x-kubernetes-group-version-kind. */
static json_t *kind_schema(const api_kind *k, char *err, size_t errlen)
{
    json_t *doc = openapi_v3_group_version(k->group, k->version), *out = NULL;
    const json_t *schemas = json_object_get(json_object_get(doc, "components"), "schemas");
    const char *name;
    const json_t *s;
    json_object_foreach((json_t *)schemas, name, s)
    {
        const json_t *gvk =
            json_array_get(json_object_get(s, "x-kubernetes-group-version-kind"), 0);
        const char *g = json_string_value(json_object_get(gvk, "group"));
        const char *v = json_string_value(json_object_get(gvk, "version"));
        const char *kd = json_string_value(json_object_get(gvk, "kind"));
        if (!g || !v || !kd || strcmp(g, k->group) || strcmp(v, k->version) || strcmp(kd, k->kind))
            continue;
        if (!json_object_get(s, "properties")) break; /* an open schema: no typed table */
        out = crd_gen_structural(s, schemas, err, errlen);
        if (!out) goto done;
        /* Metadata is the API server's: ObjectMeta is not described by CRDs. */
        json_object_set_new(json_object_get(out, "properties"), "metadata",
                            json_pack("{s:s}", "type", "object"));
        if (add_spec_defaults(k, out, err, errlen) != 0) {
            json_decref(out);
            out = NULL;
        }
        goto done;
    }
    snprintf(err, errlen, "%s/%s %s: no typed schema in the OpenAPI document", k->group, k->version,
             k->kind);
done:
    json_decref(doc);
    return out;
}

/* A defaulted field is no longer required: the API server fills it in
 * before it checks, and kubectl 1.20's client-side validation (of the
 * published OpenAPI, which keeps `required` but not what defaults imply)
 * would refuse an object that leaves it out ("missing required field
 * \"options\""), as seed 003's custom quotas do. */
static void drop_required(json_t *schema, const char *field)
{
    json_t *req = json_object_get(schema, "required");
    size_t i;
    json_t *r;
    json_array_foreach(req, i, r)
    {
        if (strcmp(json_string_value(r), field)) continue;
        json_array_remove(req, i);
        break;
    }
    if (req && json_array_size(req) == 0) json_object_del(schema, "required");
}

/* What allot's defaulting of kind k (api_kind_defaults, the code the
 * standalone server runs) writes into an empty spec becomes the schema's
 * default of each field it writes, so that the cluster's API server fills
 * in what allot would (and a required field allot defaults, such as a
 * CustomQuota's options, may be left out as standalone allows). Defaults
 * that depend on other fields (a pool's defaultsZero, a source's op and
 * apiVersion) are not static: allot's mutating webhook writes them. */
static int add_spec_defaults(const api_kind *k, json_t *schema, char *err, size_t errlen)
{
    json_t *spec_schema = json_object_get(json_object_get(schema, "properties"), "spec");
    json_t *props = json_object_get(spec_schema, "properties");
    json_t *obj = json_pack("{s:{s:s, s:s}, s:{}}", "metadata", "name", "x", "namespace",
                            k->namespaced ? "default" : "", "spec");
    if (!obj) {
        snprintf(err, errlen, "%s: out of memory", k->kind);
        return -1;
    }
    if (!k->namespaced) json_object_del(json_object_get(obj, "metadata"), "namespace");
    api_kind_defaults(k, obj);
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(obj, "spec"), key, v)
    {
        json_t *p = json_object_get(props, key);
        if (!p) {
            snprintf(err, errlen, "%s: defaulting writes spec.%s, which the schema lacks", k->kind,
                     key);
            json_decref(obj);
            return -1;
        }
        /* A default of "" is left out: a kube-apiserver 1.20 built with Go
         * >= 1.16 (as scripts/kube-build.sh builds it) validates an empty
         * string as null and refuses the definition (kubernetes#99804,
         * go-openapi/validate#137). Such a field (a claim's pool) is the
         * mutating webhook's, which runs before the schema's required
         * check. */
        if (json_is_string(v) && json_string_length(v) == 0) continue;
        json_object_set(p, "default", v);
        drop_required(spec_schema, key);
    }
    json_decref(obj);
    return 0;
}

/* "a,b" as ["a", "b"]; NULL for none. */
static json_t *csv_array(const char *csv)
{
    if (!csv || !*csv) return NULL;
    json_t *arr = json_array();
    for (const char *p = csv; *p;) {
        size_t len = strcspn(p, ",");
        if (len) json_array_append_new(arr, json_stringn(p, len));
        p += len + (p[len] == ',');
    }
    return arr;
}

static json_t *names(const api_kind *k)
{
    char list_kind[256];
    api_kind_list_kind(k, list_kind, sizeof list_kind);
    json_t *n = json_pack("{s:s, s:s, s:s, s:s}", "kind", k->kind, "listKind", list_kind, "plural",
                          k->resource, "singular", k->singular);
    json_t *shorts = csv_array(k->short_names), *cats = csv_array(k->categories);
    if (shorts) json_object_set_new(n, "shortNames", shorts);
    if (cats) json_object_set_new(n, "categories", cats);
    return n;
}

static json_t *subresources(const api_kind *k)
{
    json_t *s = json_object();
    if (k->subresources & API_SUB_STATUS) json_object_set_new(s, "status", json_object());
    /* None of Capsule's kinds scales; a kind that did would need its
     * replicas paths here (api_scale_paths). */
    return s;
}

json_t *crd_gen(const api_kind *k, char *err, size_t errlen)
{
    json_t *schema = kind_schema(k, err, errlen);
    if (!schema) return NULL;
    json_t *cols = table_crd_columns(k->group, k->resource);
    if (!cols) {
        snprintf(err, errlen, "%s/%s %s: no printer columns with JSONPaths", k->group, k->version,
                 k->kind);
        json_decref(schema);
        return NULL;
    }
    char name[300];
    snprintf(name, sizeof name, "%s.%s", k->resource, k->group);
    json_t *version = json_pack("{s:s, s:b, s:b, s:{s:o}, s:o, s:o}", "name", k->version, "served",
                                1, "storage", 1, "schema", "openAPIV3Schema", schema,
                                "subresources", subresources(k), "additionalPrinterColumns", cols);
    json_t *crd = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s, s:o, s:s, s:[o]}}", "apiVersion",
                            CRD_GROUP "/" CRD_VERSION, "kind", "CustomResourceDefinition",
                            "metadata", "name", name, "labels", "app.kubernetes.io/part-of",
                            "allot", "spec", "group", k->group, "names", names(k), "scope",
                            k->namespaced ? "Namespaced" : "Cluster", "versions", version);
    if (!crd) snprintf(err, errlen, "%s: out of memory", k->kind);
    return crd;
}

json_t *crd_gen_all(char *err, size_t errlen)
{
    json_t *items = json_array();
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        if (strcmp(k->group, CRD_GEN_GROUP) || !api_kind_served(k) || (k->flags & API_KIND_RUNTIME))
            continue;
        json_t *crd = crd_gen(k, err, errlen);
        if (!crd) {
            json_decref(items);
            return NULL;
        }
        json_array_append_new(items, crd);
    }
    return json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "List", "items", items);
}
