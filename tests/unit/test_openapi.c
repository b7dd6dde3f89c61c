/* test_openapi.c - the OpenAPI v3 and v2 schemas generated from the typed
 * tables (schema.h) and their descriptions (schema_docs.c): types, $refs,
 * required fields, enums, strategic merge markers, and that every document
 * is closed (every $ref resolves). What `kubectl explain` and client-side
 * apply read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/kinds.h"
#include "api/openapi.h"
#include "api/patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORE "io.k8s.api.core.v1."
#define META "io.k8s.apimachinery.pkg.apis.meta.v1."
#define QUANTITY "io.k8s.apimachinery.pkg.api.resource.Quantity"
#define V3REF "#/components/schemas/"
#define V2REF "#/definitions/"

/* A kind without a typed table, as a registered custom resource would be. */
static const api_kind gizmo = {.group = "example.org",
                               .version = "v1",
                               .kind = "Gizmo",
                               .resource = "gizmos",
                               .singular = "gizmo",
                               .namespaced = true};

static json_t *core_v3, *v2;

static int setup(void **state)
{
    (void)state;
    if (api_kind_register(&gizmo)) return -1;
    core_v3 = openapi_v3_group_version("", "v1");
    v2 = openapi_v2();
    return core_v3 && v2 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(core_v3);
    json_decref(v2);
    return 0;
}

/* ---- helpers ---- */

static json_t *schemas_of(json_t *doc)
{
    json_t *s = json_object_get(json_object_get(doc, "components"), "schemas");
    return s ? s : json_object_get(doc, "definitions");
}

static json_t *schema(json_t *doc, const char *name)
{
    json_t *s = json_object_get(schemas_of(doc), name);
    if (!s) fail_msg("no schema %s", name);
    return s;
}

static json_t *prop(json_t *sch, const char *field)
{
    json_t *p = json_object_get(json_object_get(sch, "properties"), field);
    if (!p) fail_msg("no property %s", field);
    return p;
}

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s) fail_msg("no string %s", key);
    return s;
}

/* The schema name a value refers to: "$ref", or v3's single-element allOf. */
static const char *ref_name(json_t *v)
{
    json_t *all = json_object_get(v, "allOf");
    if (all) {
        assert_int_equal(json_array_size(all), 1);
        v = json_array_get(all, 0);
    }
    const char *ref = json_string_value(json_object_get(v, "$ref"));
    if (!ref) return NULL;
    const char *hash = strrchr(ref, '/');
    return hash ? hash + 1 : ref;
}

static void assert_ref(json_t *v, const char *name)
{
    const char *got = ref_name(v);
    if (!got || strcmp(got, name) != 0) fail_msg("$ref %s, want %s", got ? got : "(none)", name);
}

static bool has_string(json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0) return true;
    }
    return false;
}

static void assert_described(json_t *v, const char *what)
{
    const char *d = json_string_value(json_object_get(v, "description"));
    if (!d || !*d) fail_msg("%s has no description", what);
}

/* ---- types ---- */

static void test_containers_array_of_container(void **state)
{
    (void)state;
    json_t *c = prop(schema(core_v3, CORE "PodSpec"), "containers");
    assert_string_equal(str(c, "type"), "array");
    json_t *items = json_object_get(c, "items");
    assert_ref(items, CORE "Container");
    /* upstream's default: {}, only where {} is valid: Container requires a name */
    assert_null(json_object_get(items, "default"));
    assert_true(json_is_object(
        json_object_get(prop(schema(core_v3, CORE "Container"), "resources"), "default")));
    json_t *ref0 = json_array_get(json_object_get(items, "allOf"), 0);
    assert_string_equal(str(ref0, "$ref"), V3REF CORE "Container");
    assert_described(c, "PodSpec.containers");
    assert_true(
        has_string(json_object_get(schema(core_v3, CORE "PodSpec"), "required"), "containers"));

    json_t *c2 = prop(schema(v2, CORE "PodSpec"), "containers");
    assert_string_equal(str(json_object_get(c2, "items"), "$ref"), V2REF CORE "Container");
}

static void test_resources_map_of_quantity(void **state)
{
    (void)state;
    json_t *res = prop(schema(core_v3, CORE "Container"), "resources");
    assert_ref(res, CORE "ResourceRequirements");
    assert_described(res, "Container.resources");
    json_t *rr = schema(core_v3, CORE "ResourceRequirements");
    assert_described(rr, "ResourceRequirements");
    for (const char *const *f = (const char *const[]){"limits", "requests", NULL}; *f; f++) {
        json_t *p = prop(rr, *f);
        assert_string_equal(str(p, "type"), "object");
        assert_string_equal(str(json_object_get(p, "additionalProperties"), "$ref"),
                            V3REF QUANTITY);
        assert_described(p, *f);
    }
    json_t *claims = prop(rr, "claims");
    assert_string_equal(str(claims, "type"), "array");
    assert_ref(json_object_get(claims, "items"), CORE "ResourceClaim");
    assert_true(
        has_string(json_object_get(schema(core_v3, CORE "ResourceClaim"), "required"), "name"));
    /* v3 spells Quantity as upstream (oneOf, so explain names it); v2 as a string. */
    json_t *q3 = schema(core_v3, QUANTITY);
    assert_int_equal(json_array_size(json_object_get(q3, "oneOf")), 2);
    assert_described(q3, "Quantity");
    assert_string_equal(str(schema(v2, QUANTITY), "type"), "string");
    assert_string_equal(str(json_object_get(prop(schema(v2, CORE "ResourceRequirements"), "limits"),
                                            "additionalProperties"),
                            "$ref"),
                        V2REF QUANTITY);
    /* A single quantity is a reference too. */
    assert_ref(prop(schema(core_v3, CORE "EmptyDirVolumeSource"), "sizeLimit"), QUANTITY);
}

static void test_scalars(void **state)
{
    (void)state;
    json_t *cp = schema(core_v3, CORE "ContainerPort");
    assert_string_equal(str(prop(cp, "containerPort"), "type"), "integer");
    assert_string_equal(str(prop(cp, "containerPort"), "format"), "int32");
    json_t *om = schema(core_v3, META "ObjectMeta");
    assert_string_equal(str(prop(om, "generation"), "format"), "int64");
    assert_string_equal(str(prop(om, "name"), "type"), "string");
    assert_string_equal(str(prop(om, "labels"), "type"), "object");
    assert_string_equal(str(json_object_get(prop(om, "labels"), "additionalProperties"), "type"),
                        "string");
    assert_string_equal(str(prop(om, "finalizers"), "type"), "array");
    assert_string_equal(str(json_object_get(prop(om, "finalizers"), "items"), "type"), "string");
    assert_string_equal(str(prop(schema(core_v3, CORE "Container"), "tty"), "type"), "boolean");
    assert_ref(prop(om, "creationTimestamp"), META "Time");
    assert_string_equal(str(schema(core_v3, META "Time"), "format"), "date-time");
    assert_ref(prop(schema(core_v3, CORE "Event"), "eventTime"), META "MicroTime");
    assert_string_equal(str(schema(core_v3, META "MicroTime"), "format"), "date-time");
    assert_ref(prop(schema(core_v3, CORE "ServicePort"), "targetPort"),
               "io.k8s.apimachinery.pkg.util.intstr.IntOrString");
    assert_string_equal(str(schema(v2, "io.k8s.apimachinery.pkg.util.intstr.IntOrString"), "type"),
                        "string");
    assert_string_equal(
        str(schema(core_v3, "io.k8s.apimachinery.pkg.util.intstr.IntOrString"), "format"),
        "int-or-string");
    json_t *data = prop(schema(core_v3, CORE "Secret"), "data");
    assert_string_equal(str(json_object_get(data, "additionalProperties"), "format"), "byte");
    assert_ref(prop(schema(core_v3, META "ManagedFieldsEntry"), "fieldsV1"), META "FieldsV1");
    assert_string_equal(str(schema(core_v3, META "FieldsV1"), "type"), "object");
    /* ObjectMeta is described field by field now, not left open. */
    assert_null(json_object_get(om, "x-kubernetes-preserve-unknown-fields"));
    assert_ref(json_object_get(prop(om, "ownerReferences"), "items"), META "OwnerReference");
}

/* Inlined types merge their fields (and required ones) into the parent. */
static void test_inline(void **state)
{
    (void)state;
    json_t *ec = schema(core_v3, CORE "EphemeralContainer");
    assert_non_null(prop(ec, "targetContainerName"));
    assert_non_null(prop(ec, "image"));
    assert_described(prop(ec, "image"), "EphemeralContainer.image");
    assert_true(has_string(json_object_get(ec, "required"), "name"));
    json_t *vol = schema(core_v3, CORE "Volume");
    assert_ref(prop(vol, "configMap"), CORE "ConfigMapVolumeSource");
    assert_non_null(prop(schema(core_v3, CORE "ConfigMapVolumeSource"), "name"));
    assert_non_null(prop(schema(core_v3, CORE "Probe"), "httpGet"));
}

static void test_kinds(void **state)
{
    (void)state;
    json_t *pod = schema(core_v3, CORE "Pod");
    json_t *gvk = json_array_get(json_object_get(pod, "x-kubernetes-group-version-kind"), 0);
    assert_string_equal(str(gvk, "kind"), "Pod");
    assert_string_equal(str(gvk, "version"), "v1");
    assert_string_equal(str(gvk, "group"), "");
    assert_string_equal(str(prop(pod, "apiVersion"), "type"), "string");
    assert_string_equal(str(prop(pod, "kind"), "type"), "string");
    assert_ref(prop(pod, "metadata"), META "ObjectMeta");
    assert_ref(prop(pod, "spec"), CORE "PodSpec");
    assert_ref(prop(pod, "status"), CORE "PodStatus");
    assert_null(json_object_get(pod, "x-kubernetes-preserve-unknown-fields"));
    /* Nested types are not kinds. */
    assert_null(
        json_object_get(schema(core_v3, CORE "PodSpec"), "x-kubernetes-group-version-kind"));
    assert_null(json_object_get(json_object_get(schema(core_v3, CORE "PodSpec"), "properties"),
                                "apiVersion"));
    json_t *status = schema(core_v3, META "Status");
    assert_non_null(json_object_get(status, "x-kubernetes-group-version-kind"));
    assert_ref(prop(status, "details"), META "StatusDetails");
    assert_non_null(prop(schema(core_v3, META "DeleteOptions"), "propagationPolicy"));
    assert_non_null(schema(core_v3, META "Patch"));
    assert_ref(json_object_get(prop(schema(core_v3, CORE "PodList"), "items"), "items"),
               CORE "Pod");

    /* A kind without a typed table keeps an open schema and no strategic patch. */
    json_t *d = openapi_v3_group_version("example.org", "v1");
    json_t *g = schema(d, "org.example.v1.Gizmo");
    assert_true(json_is_true(json_object_get(g, "x-kubernetes-preserve-unknown-fields")));
    json_t *patch = json_object_get(
        json_object_get(json_object_get(d, "paths"),
                        "/apis/example.org/v1/namespaces/{namespace}/gizmos/{name}"),
        "patch");
    json_t *content = json_object_get(json_object_get(patch, "requestBody"), "content");
    assert_non_null(json_object_get(content, "application/merge-patch+json"));
    assert_null(json_object_get(content, "application/strategic-merge-patch+json"));
    json_decref(d);
}

/* ---- descriptions, required fields, enums ---- */

/* Every property of a schema has a description. */
static void assert_all_described(json_t *doc, const char *name)
{
    json_t *s = schema(doc, name);
    assert_described(s, name);
    const char *f;
    json_t *p;
    json_object_foreach(json_object_get(s, "properties"), f, p)
    {
        char what[300];
        snprintf(what, sizeof what, "%s.%s", name, f);
        assert_described(p, what);
    }
}

/* Maps of messages (schema.h SCH_MAP_SM): Capsule's pool status. v3 and v2
 * both name the value type by $ref; a map of lists holds an array of them. */
static void test_map_of_messages(void **state)
{
    (void)state;
    static const char *const pkg = "io.clastix.capsule.v1beta2.";
    char name[128];
    json_t *d = openapi_v3_group_version("capsule.clastix.io", "v1beta2");
    json_t *docs[] = {d, v2};
    for (size_t i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "%sResourcePoolStatus", pkg);
        json_t *st = schema(docs[i], name);
        json_t *claims = prop(st, "claims"), *exh = prop(st, "exhaustions");
        assert_string_equal(str(claims, "type"), "object");
        json_t *vals = json_object_get(claims, "additionalProperties");
        assert_string_equal(str(vals, "type"), "array");
        snprintf(name, sizeof name, "%sResourcePoolClaimsItem", pkg);
        assert_ref(json_object_get(vals, "items"), name);
        assert_non_null(schema(docs[i], name));
        snprintf(name, sizeof name, "%sPoolExhaustionResource", pkg);
        assert_ref(json_object_get(exh, "additionalProperties"), name);
        assert_all_described(docs[i], name);
    }
    json_decref(d);
}

/* Every served kind with a typed table: the kind, its fields, and the fields
 * of the types its spec and status are. */
static void test_kinds_described(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        json_t *d = openapi_v3_group_version(k->group, k->version);
        bool found = false;
        const char *name;
        json_t *s;
        json_object_foreach(schemas_of(d), name, s)
        {
            json_t *g = json_array_get(json_object_get(s, "x-kubernetes-group-version-kind"), 0);
            if (!g || strcmp(str(g, "kind"), k->kind) != 0 ||
                strcmp(str(g, "group"), k->group) != 0 || strcmp(str(g, "version"), k->version))
                continue;
            found = true;
            if (json_is_true(json_object_get(s, "x-kubernetes-preserve-unknown-fields")))
                break; /* a kind with no typed table */
            assert_all_described(d, name);
            for (const char *const *f = (const char *const[]){"spec", "status", NULL}; *f; f++) {
                json_t *p = json_object_get(json_object_get(s, "properties"), *f);
                const char *ref = p ? ref_name(p) : NULL;
                if (ref) assert_all_described(d, ref);
            }
            checked++;
            break;
        }
        if (!found) fail_msg("no schema for kind %s", k->kind);
        json_decref(d);
    }
    assert_true(checked >= 15);
}

static void test_depth_described(void **state)
{
    (void)state;
    static const char *const chain[] = {
        META "ObjectMeta",
        CORE "Pod",
        CORE "PodSpec",
        CORE "Container",
        CORE "ResourceRequirements",
        CORE "ResourceClaim",
        CORE "ContainerPort",
        CORE "EnvVar",
        CORE "ResourceQuota",
        CORE "ResourceQuotaSpec",
        CORE "ScopeSelector",
        CORE "ScopedResourceSelectorRequirement",
        CORE "ResourceQuotaStatus",
        CORE "LimitRange",
        CORE "LimitRangeSpec",
        CORE "LimitRangeItem",
        CORE "PersistentVolumeClaimSpec",
        CORE "ServiceSpec",
        CORE "ServicePort",
        NULL,
    };
    for (const char *const *n = chain; *n; n++) {
        assert_all_described(core_v3, *n);
        assert_all_described(v2, *n);
    }
    assert_all_described(core_v3, QUANTITY);
}

static void assert_enum(json_t *p, const char *csv)
{
    json_t *e = json_object_get(p, "enum");
    char buf[512];
    size_t o = 0, i;
    json_t *v;
    buf[0] = '\0';
    json_array_foreach(e, i, v)
    {
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "," : "", json_string_value(v));
    }
    assert_string_equal(buf, csv);
}

static void test_required_and_enums(void **state)
{
    (void)state;
    json_t *req = schema(core_v3, CORE "ScopedResourceSelectorRequirement");
    json_t *r = json_object_get(req, "required");
    assert_int_equal(json_array_size(r), 2);
    assert_true(has_string(r, "scopeName"));
    assert_true(has_string(r, "operator"));
    const char *scopes = "Terminating,NotTerminating,BestEffort,NotBestEffort,PriorityClass,"
                         "CrossNamespacePodAffinity,VolumeAttributesClass";
    assert_enum(prop(req, "scopeName"), scopes);
    assert_enum(prop(req, "operator"), "In,NotIn,Exists,DoesNotExist");
    assert_null(json_object_get(prop(req, "values"), "enum"));
    /* A list of enum values carries the enum on its items. */
    json_t *sc = prop(schema(core_v3, CORE "ResourceQuotaSpec"), "scopes");
    assert_string_equal(str(sc, "type"), "array");
    assert_enum(json_object_get(sc, "items"), scopes);
    assert_null(json_object_get(sc, "enum"));

    assert_true(has_string(json_object_get(schema(core_v3, CORE "Container"), "required"), "name"));
    assert_enum(prop(schema(core_v3, CORE "Container"), "imagePullPolicy"),
                "Always,IfNotPresent,Never");
    assert_enum(prop(schema(core_v3, CORE "ServiceSpec"), "type"),
                "ClusterIP,ExternalName,LoadBalancer,NodePort");
    assert_enum(prop(schema(v2, CORE "PodSpec"), "restartPolicy"), "Always,Never,OnFailure");
    assert_true(
        has_string(json_object_get(schema(core_v3, CORE "LimitRangeItem"), "required"), "type"));
    assert_true(
        has_string(json_object_get(schema(core_v3, CORE "ServicePort"), "required"), "port"));
    /* Types with no required field carry no empty list. */
    assert_null(json_object_get(schema(core_v3, CORE "ResourceRequirements"), "required"));
}

/* ---- strategic merge markers ---- */

static void assert_merge(json_t *p, const char *key)
{
    assert_string_equal(str(p, "x-kubernetes-patch-strategy"), "merge");
    if (key)
        assert_string_equal(str(p, "x-kubernetes-patch-merge-key"), key);
    else
        assert_null(json_object_get(p, "x-kubernetes-patch-merge-key"));
}

static void test_patch_markers(void **state)
{
    (void)state;
    json_t *spec = schema(core_v3, CORE "PodSpec"), *c = schema(core_v3, CORE "Container");
    assert_merge(prop(spec, "containers"), "name");
    assert_merge(prop(spec, "initContainers"), "name");
    assert_merge(prop(spec, "volumes"), "name");
    assert_merge(prop(c, "env"), "name");
    assert_merge(prop(c, "ports"), "containerPort");
    assert_merge(prop(c, "volumeMounts"), "mountPath");
    assert_merge(prop(schema(core_v3, META "ObjectMeta"), "finalizers"), NULL);
    assert_merge(prop(schema(core_v3, META "ObjectMeta"), "ownerReferences"), "uid");
    assert_merge(prop(schema(core_v3, CORE "ServiceSpec"), "ports"), "port");
    assert_merge(prop(schema(core_v3, CORE "PodStatus"), "conditions"), "type");
    assert_merge(prop(schema(v2, CORE "PodSpec"), "containers"), "name");
    /* Atomic lists carry no marker. */
    assert_null(json_object_get(prop(c, "args"), "x-kubernetes-patch-strategy"));
    assert_null(json_object_get(prop(spec, "tolerations"), "x-kubernetes-patch-strategy"));
    assert_null(json_object_get(prop(schema(core_v3, CORE "ResourceQuotaSpec"), "scopes"),
                                "x-kubernetes-patch-strategy"));

    /* The table behind them. */
    assert_string_equal(patch_merge_key("Pod", "spec.containers"), "name");
    assert_string_equal(patch_merge_key("Deployment", "spec.template.spec.containers[].env"),
                        "name");
    assert_string_equal(patch_merge_key("Pod", "metadata.finalizers"), "");
    assert_string_equal(patch_merge_key("Service", "spec.ports"), "port");
    assert_null(patch_merge_key("Pod", "spec.ports"));
    assert_null(patch_merge_key("Pod", "spec.containers[].args"));
    assert_null(patch_merge_key("Gizmo", "spec.containers"));

    /* Built-in kinds advertise strategic merge patch on every PATCH. */
    json_t *paths = json_object_get(core_v3, "paths");
    json_t *content = json_object_get(
        json_object_get(json_object_get(json_object_get(paths, "/api/v1/namespaces/{namespace}/"
                                                               "resourcequotas/{name}/status"),
                                        "patch"),
                        "requestBody"),
        "content");
    assert_non_null(json_object_get(content, "application/strategic-merge-patch+json"));
}

/* ---- closed documents ---- */

/* Walk a document: every "$ref" resolves, every property has a type, a
 * $ref (v3: in a one-element allOf) or a oneOf, and every array its items. */
static void check_node(json_t *node, json_t *schemas, const char *prefix, size_t *refs)
{
    const char *key;
    json_t *val;
    size_t i;
    if (json_is_array(node)) {
        json_array_foreach(node, i, val) check_node(val, schemas, prefix, refs);
        return;
    }
    if (!json_is_object(node)) return;
    json_object_foreach(node, key, val)
    {
        if (strcmp(key, "$ref") == 0) {
            const char *ref = json_string_value(val);
            assert_non_null(ref);
            if (strncmp(ref, prefix, strlen(prefix)) != 0) fail_msg("foreign $ref %s", ref);
            if (!json_object_get(schemas, ref + strlen(prefix))) fail_msg("dangling $ref %s", ref);
            (*refs)++;
        } else if (strcmp(key, "properties") == 0 && json_is_object(val)) {
            const char *f;
            json_t *p;
            json_object_foreach(val, f, p)
            {
                bool typed = json_object_get(p, "type") || json_object_get(p, "$ref") ||
                             json_object_get(p, "allOf") || json_object_get(p, "oneOf");
                if (!typed) fail_msg("property %s has no type", f);
                if (json_is_string(json_object_get(p, "type")) &&
                    strcmp(str(p, "type"), "array") == 0 && !json_object_get(p, "items"))
                    fail_msg("array %s has no items", f);
            }
            check_node(val, schemas, prefix, refs);
        } else {
            check_node(val, schemas, prefix, refs);
        }
    }
}

static void test_refs_resolve(void **state)
{
    (void)state;
    size_t docs = 0, refs = 0;
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        json_t *d = openapi_v3_group_version(k->group, k->version);
        check_node(d, schemas_of(d), V3REF, &refs);
        json_decref(d);
        docs++;
    }
    check_node(v2, schemas_of(v2), V2REF, &refs);
    assert_true(docs > 5);
    assert_true(refs > 1000);
    /* Every schema of a document is used or is a kind: nothing dangling the
     * other way round is required, but the types the paths need are there. */
    assert_non_null(schema(v2, "io.k8s.api.apps.v1.DeploymentSpec"));
    assert_non_null(schema(v2, "io.k8s.api.storage.v1.StorageClass"));
}

/* Documents are built once and handed out as copies: equal, independent. */
static void test_cached_copies(void **state)
{
    (void)state;
    json_t *a = openapi_v3_group_version("", "v1"), *b = openapi_v3_group_version("", "v1");
    assert_true(a != b);
    assert_true(json_equal(a, b));
    json_object_del(a, "paths");
    json_t *c = openapi_v3_group_version("", "v1");
    assert_non_null(json_object_get(c, "paths"));
    json_decref(a);
    json_decref(b);
    json_decref(c);
    char h1[65], h2[65];
    assert_int_equal(openapi_v3_hash("", "v1", h1), 0);
    assert_int_equal(openapi_v3_hash("", "v1", h2), 0);
    assert_string_equal(h1, h2);
}

/* Registering a kind drops the cache: a new group version appears. */
static void test_cache_follows_registry(void **state)
{
    (void)state;
    static const api_kind late = {.group = "late.example.org",
                                  .version = "v1",
                                  .kind = "Late",
                                  .resource = "lates",
                                  .singular = "late"};
    char h[65];
    assert_int_equal(openapi_v3_hash("late.example.org", "v1", h), -1);
    assert_int_equal(api_kind_register(&late), 0);
    assert_int_equal(openapi_v3_hash("late.example.org", "v1", h), 0);
    json_t *d = openapi_v2();
    assert_non_null(json_object_get(schemas_of(d), "org.example.late.v1.Late"));
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_containers_array_of_container),
        cmocka_unit_test(test_resources_map_of_quantity),
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_inline),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_kinds_described),
        cmocka_unit_test(test_map_of_messages),
        cmocka_unit_test(test_depth_described),
        cmocka_unit_test(test_required_and_enums),
        cmocka_unit_test(test_patch_markers),
        cmocka_unit_test(test_refs_resolve),
        cmocka_unit_test(test_cached_copies),
        cmocka_unit_test(test_cache_follows_registry),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
