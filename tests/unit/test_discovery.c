/* test_discovery.c - discovery and OpenAPI documents: upstream shapes, and the
 * checks kubectl 1.32 makes on them (QueryParamVerifierV3, patch type lookup). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/discovery.h"
#include "api/kinds.h"
#include "api/openapi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kinds registered once for the whole suite: a CRD-like group served at two
 * versions, to exercise preferred-version order and reversed-domain names. */
static const api_kind widget_v1beta1 = {.group = "example.com",
                                        .version = "v1beta1",
                                        .kind = "Widget",
                                        .resource = "widgets",
                                        .singular = "widget",
                                        .short_names = "wd",
                                        .categories = "all",
                                        .namespaced = true,
                                        .subresources = API_SUB_STATUS};
static const api_kind widget_v1 = {.group = "example.com",
                                   .version = "v1",
                                   .kind = "Widget",
                                   .resource = "widgets",
                                   .singular = "widget",
                                   .short_names = "wd,wdg",
                                   .namespaced = true,
                                   .subresources = API_SUB_STATUS};
static const api_kind gadget_v1 = {.group = "example.com",
                                   .version = "v1",
                                   .kind = "Gadget",
                                   .resource = "gadgets",
                                   .singular = "gadget"};

static int setup_suite(void **state)
{
    (void)state;
    if (api_kind_register(&widget_v1beta1) || api_kind_register(&widget_v1) ||
        api_kind_register(&gadget_v1))
        return -1;
    return 0;
}

/* ---- helpers ---- */

static json_t *find_by(json_t *arr, const char *key, const char *value)
{
    size_t i;
    json_t *it;
    json_array_foreach(arr, i, it)
    {
        if (json_is_string(json_object_get(it, key)) &&
            strcmp(json_string_value(json_object_get(it, key)), value) == 0)
            return it;
    }
    return NULL;
}

/* Compare a JSON array of strings with a comma-separated list. */
static void assert_strings(json_t *arr, const char *csv)
{
    char buf[512];
    size_t o = 0, i;
    json_t *it;
    assert_true(json_is_array(arr));
    buf[0] = '\0';
    json_array_foreach(arr, i, it)
    {
        assert_true(json_is_string(it));
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "," : "", json_string_value(it));
    }
    assert_string_equal(buf, csv);
}

static const char *str(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

static json_t *resource(const char *group, const char *version, const char *name)
{
    json_t *list = disc_resource_list(group, version);
    assert_non_null(list);
    json_t *row = json_incref(find_by(json_object_get(list, "resources"), "name", name));
    json_decref(list);
    if (!row) fail_msg("no resource row %s in %s/%s", name, group, version);
    return row;
}

/* ---- legacy discovery ---- */

static void test_core_versions(void **state)
{
    (void)state;
    json_t *d = disc_core_versions("10.0.0.1:6443");
    assert_string_equal(str(d, "kind"), "APIVersions");
    assert_null(json_object_get(d, "apiVersion"));
    assert_strings(json_object_get(d, "versions"), "v1");
    json_t *cidr = json_array_get(json_object_get(d, "serverAddressByClientCIDRs"), 0);
    assert_string_equal(str(cidr, "clientCIDR"), "0.0.0.0/0");
    assert_string_equal(str(cidr, "serverAddress"), "10.0.0.1:6443");
    json_decref(d);
}

static void test_pods_row(void **state)
{
    (void)state;
    json_t *r = resource("", "v1", "pods");
    assert_string_equal(str(r, "singularName"), "pod");
    assert_string_equal(str(r, "kind"), "Pod");
    assert_true(json_is_true(json_object_get(r, "namespaced")));
    assert_strings(json_object_get(r, "verbs"),
                   "create,delete,deletecollection,get,list,patch,update,watch");
    assert_strings(json_object_get(r, "shortNames"), "po");
    assert_strings(json_object_get(r, "categories"), "all");
    /* Upstream's value for core/v1 Pod. */
    assert_string_equal(str(r, "storageVersionHash"), "xPOwRZ+Yhw8=");
    assert_null(json_object_get(r, "group"));
    json_decref(r);
}

static void test_pods_subresources(void **state)
{
    (void)state;
    json_t *b = resource("", "v1", "pods/binding");
    assert_string_equal(str(b, "kind"), "Binding");
    assert_string_equal(str(b, "singularName"), "");
    assert_true(json_is_true(json_object_get(b, "namespaced")));
    assert_strings(json_object_get(b, "verbs"), "create");
    assert_null(json_object_get(b, "storageVersionHash"));
    assert_null(json_object_get(b, "group"));
    json_decref(b);

    json_t *s = resource("", "v1", "pods/status");
    assert_string_equal(str(s, "kind"), "Pod");
    assert_strings(json_object_get(s, "verbs"), "get,patch,update");
    json_decref(s);
}

static void test_scale_subresource(void **state)
{
    (void)state;
    json_t *s = resource("apps", "v1", "deployments/scale");
    assert_string_equal(str(s, "group"), "autoscaling");
    assert_string_equal(str(s, "version"), "v1");
    assert_string_equal(str(s, "kind"), "Scale");
    assert_strings(json_object_get(s, "verbs"), "get,patch,update");
    json_decref(s);
}

static void test_namespaces_row(void **state)
{
    (void)state;
    json_t *r = resource("", "v1", "namespaces");
    assert_false(json_is_true(json_object_get(r, "namespaced")));
    assert_strings(json_object_get(r, "verbs"), "create,delete,get,list,patch,update,watch");
    assert_strings(json_object_get(r, "shortNames"), "ns");
    assert_null(json_object_get(r, "categories"));
    json_decref(r);
}

static void test_resource_list_shape(void **state)
{
    (void)state;
    json_t *l = disc_resource_list("apps", "v1");
    assert_string_equal(str(l, "kind"), "APIResourceList");
    assert_string_equal(str(l, "apiVersion"), "v1");
    assert_string_equal(str(l, "groupVersion"), "apps/v1");
    json_decref(l);

    l = disc_resource_list("", "v1");
    assert_string_equal(str(l, "groupVersion"), "v1");
    /* Rows are sorted by name, subresources right after their parent. */
    json_t *rows = json_object_get(l, "resources"), *it;
    size_t i;
    const char *prev = "";
    json_array_foreach(rows, i, it)
    {
        assert_true(strcmp(prev, str(it, "name")) < 0);
        prev = str(it, "name");
    }
    json_decref(l);

    assert_null(disc_resource_list("apps", "v2"));
    assert_null(disc_resource_list("nope.io", "v1"));
}

static void test_storage_version_hash(void **state)
{
    (void)state;
    char h[13];
    disc_storage_version_hash(api_kind_find("apps", "v1", "deployments"), h);
    assert_string_equal(h, "8aSe+NMegvE=");
    disc_storage_version_hash(api_kind_find("", "v1", "namespaces"), h);
    assert_int_equal(strlen(h), 12);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *in, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqr"
         "lmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        unsigned char d[32];
        char hex[65];
        disc_sha256(v[i].in, strlen(v[i].in), d);
        for (int j = 0; j < 32; j++)
            snprintf(hex + 2 * j, 3, "%02x", d[j]);
        assert_string_equal(hex, v[i].hex);
    }
}

/* The review APIs are served (POST) though never stored: listed as upstream
 * lists them, verb create only, no short names, in their groups. */
static void test_review_resources(void **state)
{
    (void)state;
    json_t *gl = disc_group_list();
    assert_non_null(find_by(json_object_get(gl, "groups"), "name", "authentication.k8s.io"));
    assert_non_null(find_by(json_object_get(gl, "groups"), "name", "authorization.k8s.io"));
    assert_non_null(find_by(json_object_get(gl, "groups"), "name", "allot.dev"));
    json_decref(gl);
    json_t *l = disc_resource_list("authorization.k8s.io", "v1");
    json_t *rows = json_object_get(l, "resources");
    assert_int_equal(json_array_size(rows), 4);
    static const char *const names[] = {"localsubjectaccessreviews", "selfsubjectaccessreviews",
                                        "selfsubjectrulesreviews", "subjectaccessreviews"};
    for (size_t i = 0; i < 4; i++) {
        json_t *r = json_array_get(rows, i);
        assert_string_equal(str(r, "name"), names[i]);
        assert_int_equal(json_is_true(json_object_get(r, "namespaced")), i == 0);
        json_t *verbs = json_object_get(r, "verbs");
        assert_int_equal(json_array_size(verbs), 1);
        assert_string_equal(json_string_value(json_array_get(verbs, 0)), "create");
        assert_null(json_object_get(r, "shortNames"));
    }
    assert_string_equal(str(json_array_get(rows, 1), "kind"), "SelfSubjectAccessReview");
    assert_string_equal(str(json_array_get(rows, 1), "singularName"), "selfsubjectaccessreview");
    json_decref(l);
    l = disc_resource_list("authentication.k8s.io", "v1");
    rows = json_object_get(l, "resources");
    assert_int_equal(json_array_size(rows), 2);
    assert_string_equal(str(json_array_get(rows, 0), "name"), "selfsubjectreviews");
    assert_string_equal(str(json_array_get(rows, 1), "name"), "tokenreviews");
    json_decref(l);
    l = disc_resource_list("allot.dev", "v1");
    assert_string_equal(str(json_array_get(json_object_get(l, "resources"), 0), "kind"),
                        "QuotaReview");
    json_decref(l);
    /* aggregated discovery carries them too */
    json_t *agg = disc_aggregated(false);
    json_t *items = json_object_get(agg, "items"), *authn = NULL;
    for (size_t i = 0; i < json_array_size(items); i++)
        if (!strcmp(str(json_object_get(json_array_get(items, i), "metadata"), "name"),
                    "authentication.k8s.io"))
            authn = json_array_get(items, i);
    assert_non_null(authn);
    json_t *res =
        json_object_get(json_array_get(json_object_get(authn, "versions"), 0), "resources");
    json_t *tr = find_by(res, "resource", "tokenreviews");
    assert_non_null(tr);
    assert_string_equal(str(tr, "scope"), "Cluster");
    assert_string_equal(str(json_object_get(tr, "responseKind"), "kind"), "TokenReview");
    json_decref(agg);
}

static void test_group_list(void **state)
{
    (void)state;
    json_t *l = disc_group_list();
    assert_string_equal(str(l, "kind"), "APIGroupList");
    assert_string_equal(str(l, "apiVersion"), "v1");
    json_t *groups = json_object_get(l, "groups");
    assert_null(find_by(groups, "name", ""));
    /* Upstream priority: apps before storage before scheduling; CRD-like last. */
    assert_string_equal(str(json_array_get(groups, 0), "name"), "apps");
    json_t *last = json_array_get(groups, json_array_size(groups) - 1);
    assert_string_equal(str(last, "name"), "example.com");

    json_t *apps = find_by(groups, "name", "apps");
    json_t *pref = json_object_get(apps, "preferredVersion");
    assert_string_equal(str(pref, "groupVersion"), "apps/v1");
    assert_string_equal(str(pref, "version"), "v1");

    json_t *ex = json_object_get(last, "versions");
    assert_int_equal(json_array_size(ex), 2);
    assert_string_equal(str(json_array_get(ex, 0), "groupVersion"), "example.com/v1");
    assert_string_equal(str(json_array_get(ex, 1), "groupVersion"), "example.com/v1beta1");
    assert_string_equal(str(json_object_get(last, "preferredVersion"), "version"), "v1");
    json_decref(l);
}

static void test_group(void **state)
{
    (void)state;
    json_t *g = disc_group("apps");
    assert_string_equal(str(g, "kind"), "APIGroup");
    assert_string_equal(str(g, "apiVersion"), "v1");
    assert_string_equal(str(g, "name"), "apps");
    assert_string_equal(str(json_object_get(g, "preferredVersion"), "groupVersion"), "apps/v1");
    json_decref(g);
    assert_null(disc_group(""));
    assert_null(disc_group("nope.io"));
}

static void test_version_order(void **state)
{
    (void)state;
    assert_true(disc_version_cmp("v1", "v1beta1") < 0);
    assert_true(disc_version_cmp("v2", "v1") < 0);
    assert_true(disc_version_cmp("v1beta2", "v1beta1") < 0);
    assert_true(disc_version_cmp("v2beta1", "v1beta2") < 0);
    assert_true(disc_version_cmp("v1beta1", "v1alpha3") < 0);
    assert_true(disc_version_cmp("v1alpha1", "foo") < 0);
    assert_true(disc_version_cmp("bar", "foo") < 0);
    assert_int_equal(disc_version_cmp("v1", "v1"), 0);
}

static void test_version(void **state)
{
    (void)state;
    json_t *v = disc_version();
    assert_string_equal(str(v, "major"), "1");
    assert_string_equal(str(v, "minor"), "32");
    assert_string_equal(str(v, "gitVersion"), "v1.32.0+allot");
    str(v, "gitCommit");
    str(v, "buildDate");
    assert_true(strncmp(str(v, "platform"), "linux/", 6) == 0);
    json_decref(v);
}

/* ---- aggregated discovery ---- */

static void test_aggregated_core(void **state)
{
    (void)state;
    json_t *d = disc_aggregated(true);
    assert_string_equal(str(d, "kind"), "APIGroupDiscoveryList");
    assert_string_equal(str(d, "apiVersion"), "apidiscovery.k8s.io/v2");
    json_t *items = json_object_get(d, "items");
    assert_int_equal(json_array_size(items), 1);
    json_t *core = json_array_get(items, 0);
    assert_null(json_object_get(json_object_get(core, "metadata"), "name"));
    json_t *v1 = json_array_get(json_object_get(core, "versions"), 0);
    assert_string_equal(str(v1, "version"), "v1");
    assert_string_equal(str(v1, "freshness"), "Current");

    json_t *pods = find_by(json_object_get(v1, "resources"), "resource", "pods");
    assert_non_null(pods);
    assert_string_equal(str(pods, "scope"), "Namespaced");
    assert_string_equal(str(pods, "singularResource"), "pod");
    json_t *rk = json_object_get(pods, "responseKind");
    assert_string_equal(str(rk, "kind"), "Pod");
    assert_string_equal(str(rk, "group"), "");
    assert_string_equal(str(rk, "version"), "");
    assert_strings(json_object_get(pods, "verbs"),
                   "create,delete,deletecollection,get,list,patch,update,watch");
    assert_strings(json_object_get(pods, "shortNames"), "po");
    assert_strings(json_object_get(pods, "categories"), "all");
    json_t *subs = json_object_get(pods, "subresources");
    json_t *binding = find_by(subs, "subresource", "binding");
    assert_string_equal(str(json_object_get(binding, "responseKind"), "kind"), "Binding");
    assert_strings(json_object_get(binding, "verbs"), "create");
    assert_non_null(find_by(subs, "subresource", "status"));

    json_t *ns = find_by(json_object_get(v1, "resources"), "resource", "namespaces");
    assert_string_equal(str(ns, "scope"), "Cluster");
    json_t *cm = find_by(json_object_get(v1, "resources"), "resource", "configmaps");
    assert_null(json_object_get(cm, "subresources"));
    json_decref(d);

    d = disc_aggregated_as(true, true);
    assert_string_equal(str(d, "apiVersion"), "apidiscovery.k8s.io/v2beta1");
    json_decref(d);
}

static void test_aggregated_apis(void **state)
{
    (void)state;
    json_t *d = disc_aggregated(false);
    json_t *items = json_object_get(d, "items");
    json_t *apps = json_array_get(items, 0);
    assert_string_equal(str(json_object_get(apps, "metadata"), "name"), "apps");
    json_t *v1 = json_array_get(json_object_get(apps, "versions"), 0);
    json_t *deploy = find_by(json_object_get(v1, "resources"), "resource", "deployments");
    json_t *scale = find_by(json_object_get(deploy, "subresources"), "subresource", "scale");
    json_t *rk = json_object_get(scale, "responseKind");
    assert_string_equal(str(rk, "group"), "autoscaling");
    assert_string_equal(str(rk, "version"), "v1");
    assert_string_equal(str(rk, "kind"), "Scale");

    /* No core group here; every non-core group once. */
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        assert_non_null(json_object_get(json_object_get(it, "metadata"), "name"));
    }
    json_decref(d);
}

/* ---- OpenAPI ---- */

/* Every "$ref" in `node` must name a schema in `schemas` under `prefix`. */
static void check_refs(json_t *node, json_t *schemas, const char *prefix)
{
    const char *key;
    json_t *val;
    size_t i;
    if (json_is_array(node)) {
        json_array_foreach(node, i, val) check_refs(val, schemas, prefix);
        return;
    }
    if (!json_is_object(node)) return;
    json_object_foreach(node, key, val)
    {
        if (strcmp(key, "$ref") == 0) {
            const char *ref = json_string_value(val);
            assert_non_null(ref);
            assert_true(strncmp(ref, prefix, strlen(prefix)) == 0);
            if (!json_object_get(schemas, ref + strlen(prefix))) fail_msg("dangling $ref %s", ref);
        } else {
            check_refs(val, schemas, prefix);
        }
    }
}

static bool has_param(json_t *op, const char *name, const char *in)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(op, "parameters"), i, p)
    {
        if (strcmp(str(p, "name"), name) == 0 && strcmp(str(p, "in"), in) == 0) return true;
    }
    return false;
}

static bool gvk_is(json_t *gvk, const char *g, const char *v, const char *k)
{
    return json_is_object(gvk) && strcmp(str(gvk, "group"), g) == 0 &&
           strcmp(str(gvk, "version"), v) == 0 && strcmp(str(gvk, "kind"), k) == 0;
}

static void test_v3_root(void **state)
{
    (void)state;
    json_t *r = openapi_v3_root();
    json_t *paths = json_object_get(r, "paths");
    json_t *core = json_object_get(paths, "api/v1");
    json_t *apps = json_object_get(paths, "apis/apps/v1");
    assert_non_null(core);
    assert_non_null(apps);
    assert_non_null(json_object_get(paths, "apis/example.com/v1beta1"));
    const char *url = str(core, "serverRelativeURL");
    const char *want = "/openapi/v3/api/v1?hash=";
    assert_true(strncmp(url, want, strlen(want)) == 0);
    assert_int_equal(strlen(url + strlen(want)), 64);
    char hash[65];
    assert_int_equal(openapi_v3_hash("", "v1", hash), 0);
    assert_string_equal(url + strlen(want), hash);
    assert_true(strncmp(str(apps, "serverRelativeURL"), "/openapi/v3/apis/apps/v1?hash=", 30) == 0);
    assert_int_equal(openapi_v3_hash("nope.io", "v1", hash), -1);
    json_decref(r);
}

static void test_v3_pod_patch(void **state)
{
    (void)state;
    json_t *d = openapi_v3_group_version("", "v1");
    assert_non_null(d);
    assert_string_equal(str(d, "openapi"), "3.0.0");
    json_t *item =
        json_object_get(json_object_get(d, "paths"), "/api/v1/namespaces/{namespace}/pods/{name}");
    json_t *patch = json_object_get(item, "patch");
    assert_non_null(patch);
    assert_true(has_param(patch, "fieldValidation", "query"));
    assert_true(has_param(patch, "dryRun", "query"));
    assert_true(has_param(patch, "fieldManager", "query"));
    assert_true(has_param(patch, "force", "query"));
    assert_true(has_param(item, "name", "path"));
    assert_true(has_param(item, "namespace", "path"));
    assert_true(gvk_is(json_object_get(patch, "x-kubernetes-group-version-kind"), "", "v1", "Pod"));
    assert_string_equal(str(patch, "x-kubernetes-action"), "patch");
    assert_string_equal(str(patch, "operationId"), "patchCoreV1NamespacedPod");
    json_t *content = json_object_get(json_object_get(patch, "requestBody"), "content");
    assert_non_null(json_object_get(content, "application/merge-patch+json"));
    /* Built-in kinds: kubectl apply computes strategic patches from the schemas' markers. */
    assert_non_null(json_object_get(content, "application/strategic-merge-patch+json"));

    json_t *paths = json_object_get(d, "paths");
    json_t *coll = json_object_get(paths, "/api/v1/namespaces/{namespace}/pods");
    assert_string_equal(str(json_object_get(coll, "post"), "operationId"),
                        "createCoreV1NamespacedPod");
    assert_true(has_param(json_object_get(coll, "post"), "fieldValidation", "query"));
    assert_string_equal(str(json_object_get(coll, "delete"), "x-kubernetes-action"),
                        "deletecollection");
    assert_non_null(json_object_get(json_object_get(paths, "/api/v1/pods"), "get"));
    json_t *binding = json_object_get(paths, "/api/v1/namespaces/{namespace}/pods/{name}/binding");
    assert_true(
        gvk_is(json_object_get(json_object_get(binding, "post"), "x-kubernetes-group-version-kind"),
               "", "v1", "Binding"));
    /* namespaces have no deletecollection, nodes are cluster-scoped. */
    assert_null(json_object_get(json_object_get(paths, "/api/v1/namespaces"), "delete"));
    assert_non_null(json_object_get(paths, "/api/v1/nodes/{name}/status"));
    json_decref(d);
}

/* What kubectl's supportsQueryParamV3 does, for every served kind: the first
 * PATCH whose GVK matches decides, in random order, so all of them must carry
 * fieldValidation, and at least one must exist. */
static void test_v3_field_validation_everywhere(void **state)
{
    (void)state;
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        json_t *d = openapi_v3_group_version(k->group, k->version);
        assert_non_null(d);
        const char *path;
        json_t *item;
        int matched = 0;
        json_object_foreach(json_object_get(d, "paths"), path, item)
        {
            json_t *patch = json_object_get(item, "patch");
            if (!patch) continue;
            json_t *gvk = json_object_get(patch, "x-kubernetes-group-version-kind");
            assert_true(json_is_object(gvk));
            if (!gvk_is(gvk, k->group, k->version, k->kind)) continue;
            matched++;
            if (!has_param(patch, "fieldValidation", "query"))
                fail_msg("PATCH %s lacks fieldValidation", path);
        }
        if (!matched) fail_msg("no PATCH operation for %s", k->kind);
        json_decref(d);
    }
}

static void test_v3_schemas(void **state)
{
    (void)state;
    json_t *d = openapi_v3_group_version("apps", "v1");
    json_t *schemas = json_object_get(json_object_get(d, "components"), "schemas");
    json_t *dep = json_object_get(schemas, "io.k8s.api.apps.v1.Deployment");
    assert_non_null(dep);
    assert_string_equal(str(dep, "type"), "object");
    json_t *gvks = json_object_get(dep, "x-kubernetes-group-version-kind");
    assert_int_equal(json_array_size(gvks), 1);
    assert_true(gvk_is(json_array_get(gvks, 0), "apps", "v1", "Deployment"));
    json_t *props = json_object_get(dep, "properties");
    for (const char *const *p =
             (const char *const[]){"apiVersion", "kind", "metadata", "spec", "status", NULL};
         *p; p++)
        assert_non_null(json_object_get(props, *p));
    assert_non_null(json_object_get(schemas, "io.k8s.api.apps.v1.DeploymentList"));
    assert_non_null(json_object_get(schemas, "io.k8s.api.autoscaling.v1.Scale"));
    check_refs(d, schemas, "#/components/schemas/");
    json_t *scale =
        json_object_get(json_object_get(json_object_get(d, "paths"),
                                        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}/"
                                        "scale"),
                        "patch");
    assert_true(gvk_is(json_object_get(scale, "x-kubernetes-group-version-kind"), "autoscaling",
                       "v1", "Scale"));
    json_decref(d);

    d = openapi_v3_group_version("example.com", "v1");
    schemas = json_object_get(json_object_get(d, "components"), "schemas");
    assert_non_null(json_object_get(schemas, "com.example.v1.Widget"));
    json_t *gadgets = json_object_get(json_object_get(d, "paths"), "/apis/example.com/v1/gadgets");
    assert_string_equal(str(json_object_get(gadgets, "get"), "operationId"),
                        "listExampleComV1Gadget");
    json_t *tags = json_object_get(json_object_get(gadgets, "get"), "tags");
    assert_string_equal(json_string_value(json_array_get(tags, 0)), "exampleCom_v1");
    check_refs(d, schemas, "#/components/schemas/");
    json_decref(d);

    assert_null(openapi_v3_group_version("apps", "v2"));
}

static void test_v3_operation_ids_unique(void **state)
{
    (void)state;
    json_t *d = openapi_v3_group_version("", "v1");
    json_t *seen = json_object();
    const char *path, *method;
    json_t *item, *op;
    json_object_foreach(json_object_get(d, "paths"), path, item)
    {
        json_object_foreach(item, method, op)
        {
            if (strcmp(method, "parameters") == 0) continue;
            const char *id = str(op, "operationId");
            if (json_object_get(seen, id)) fail_msg("duplicate operationId %s", id);
            json_object_set_new(seen, id, json_true());
        }
    }
    json_decref(seen);
    json_decref(d);
}

static void test_v3_hash_stable(void **state)
{
    (void)state;
    char a[65], b[65], c[65];
    assert_int_equal(openapi_v3_hash("apps", "v1", a), 0);
    assert_int_equal(openapi_v3_hash("apps", "v1", b), 0);
    assert_int_equal(openapi_v3_hash("", "v1", c), 0);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
}

static void test_v2(void **state)
{
    (void)state;
    json_t *d = openapi_v2();
    assert_string_equal(str(d, "swagger"), "2.0");
    json_t *defs = json_object_get(d, "definitions");
    json_t *pod = json_object_get(defs, "io.k8s.api.core.v1.Pod");
    assert_true(gvk_is(json_array_get(json_object_get(pod, "x-kubernetes-group-version-kind"), 0),
                       "", "v1", "Pod"));
    json_t *patch = json_object_get(json_object_get(json_object_get(d, "paths"),
                                                    "/apis/apps/v1/namespaces/{namespace}/"
                                                    "deployments/{name}"),
                                    "patch");
    assert_true(has_param(patch, "fieldValidation", "query"));
    assert_true(has_param(patch, "body", "body"));
    assert_strings(json_object_get(patch, "consumes"),
                   "application/json-patch+json,application/merge-patch+json,"
                   "application/strategic-merge-patch+json");
    /* v2 parameters carry their type inline. */
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(patch, "parameters"), i, p)
    {
        if (strcmp(str(p, "in"), "query") == 0) assert_non_null(json_object_get(p, "type"));
    }
    check_refs(d, defs, "#/definitions/");
    json_decref(d);
}

/* Store keys map back to their kind: core and grouped resources, and no
 * match on a prefix of another resource's name. */
static void test_kind_for_key(void **state)
{
    char key[256];
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        assert_true(api_kind_key(k, "ns", "x", key, sizeof key) > 0);
        const api_kind *got = api_kind_for_key(key); /* versions share a store resource */
        assert_non_null(got);
        assert_string_equal(got->group, k->group);
        assert_string_equal(got->resource, k->resource);
    }
    assert_string_equal(api_kind_for_key("deployments.apps/ns/x")->kind, "Deployment");
    assert_null(api_kind_for_key("pod/ns/x"));
    assert_null(api_kind_for_key("pods.apps/ns/x"));
    assert_null(api_kind_for_key("deployments/ns/x"));
    assert_null(api_kind_for_key("deployments.app/ns/x"));
}

/* REST paths of objects, collections and subresources, core and grouped,
 * namespaced and not; a buffer too small is an error, not a cut path. */
static void test_kind_path(void **state)
{
    (void)state;
    char p[128];
    const api_kind *pods = api_kind_find("", "v1", "pods"),
                   *dep = api_kind_find("apps", "v1", "deployments");
    const api_kind *ns = api_kind_find("", "v1", "namespaces");
    assert_true(api_kind_path(pods, "t", "a", "status", p, sizeof p) > 0);
    assert_string_equal(p, "/api/v1/namespaces/t/pods/a/status");
    assert_true(api_kind_path(pods, "", "", "", p, sizeof p) > 0);
    assert_string_equal(p, "/api/v1/pods");
    assert_true(api_kind_path(dep, "t", "", "", p, sizeof p) > 0);
    assert_string_equal(p, "/apis/apps/v1/namespaces/t/deployments");
    assert_true(api_kind_path(dep, "t", "d", "scale", p, sizeof p) > 0);
    assert_string_equal(p, "/apis/apps/v1/namespaces/t/deployments/d/scale");
    assert_true(api_kind_path(ns, "", "x", "", p, sizeof p) > 0);
    assert_string_equal(p, "/api/v1/namespaces/x");
    assert_int_equal(api_kind_path(pods, "t", "a", "", p, 10), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_versions),
        cmocka_unit_test(test_pods_row),
        cmocka_unit_test(test_pods_subresources),
        cmocka_unit_test(test_scale_subresource),
        cmocka_unit_test(test_namespaces_row),
        cmocka_unit_test(test_resource_list_shape),
        cmocka_unit_test(test_storage_version_hash),
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_group_list),
        cmocka_unit_test(test_review_resources),
        cmocka_unit_test(test_group),
        cmocka_unit_test(test_version_order),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_aggregated_core),
        cmocka_unit_test(test_aggregated_apis),
        cmocka_unit_test(test_v3_root),
        cmocka_unit_test(test_v3_pod_patch),
        cmocka_unit_test(test_v3_field_validation_everywhere),
        cmocka_unit_test(test_v3_schemas),
        cmocka_unit_test(test_v3_operation_ids_unique),
        cmocka_unit_test(test_v3_hash_stable),
        cmocka_unit_test(test_v2),
        cmocka_unit_test(test_kind_for_key),
        cmocka_unit_test(test_kind_path),
    };
    return cmocka_run_group_tests(tests, setup_suite, NULL);
}
