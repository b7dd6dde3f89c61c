/* test_crd_kinds.c - the rows a CustomResourceDefinition serves
 * (api/crd_kinds.h) and the kind table they live in (api/kinds.h): rows
 * published and found by URL, kind and store key; the custom resource hooks
 * (metadata decoded as ObjectMeta, unknown fields pruned and reported,
 * defaults, validation in upstream's words, scale replicas rules); printer
 * columns in Table output (Age when none); several versions with one
 * storage version (secondary rows, apiVersion rewritten); retirement; and
 * readers iterating the table on other threads while definitions are
 * published and retired (every slot they see holds a row).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/crd.h"
#include "api/crd_kinds.h"
#include "api/kinds.h"
#include "api/openapi.h"
#include "api/table.h"

#include "testutil.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static const char *BUCKET =
    "{'metadata':{'name':'buckets.example.com'},"
    " 'spec':{'group':'example.com','scope':'Namespaced',"
    "  'names':{'plural':'buckets','kind':'Bucket','shortNames':['bk']},"
    "  'versions':[{'name':'v1','served':true,'storage':true,"
    "   'subresources':{'status':{},'scale':{'specReplicasPath':'.spec.replicas',"
    "    'statusReplicasPath':'.status.replicas','labelSelectorPath':'.status.selector'}},"
    "   'additionalPrinterColumns':["
    "    {'name':'Storage','type':'integer','jsonPath':'.spec.storageGB'},"
    "    {'name':'Region','type':'string','jsonPath':'.spec.region','priority':1},"
    "    {'name':'Made','type':'date','jsonPath':'.metadata.creationTimestamp'}],"
    "   'selectableFields':[{'jsonPath':'.spec.region'}],"
    "   'schema':{'openAPIV3Schema':{'type':'object','properties':{"
    "    'spec':{'type':'object','required':['region'],'properties':{"
    "     'storageGB':{'type':'integer','minimum':1,'default':10},"
    "     'region':{'type':'string'},'replicas':{'type':'integer'}}},"
    "    'status':{'type':'object','properties':{'replicas':{'type':'integer'},"
    "     'selector':{'type':'string'}}}}}}}]},"
    " 'status':{'acceptedNames':{'plural':'buckets','singular':'bucket','kind':'Bucket',"
    "  'listKind':'BucketList','shortNames':['bk']},'storedVersions':['v1']}}";

static json_t *definition(void)
{
    json_t *o = J(BUCKET);
    crd_defaults(o);
    return o;
}

static void publish(const json_t *crd)
{
    char err[512];
    if (crd_kinds_publish(crd, false, err, sizeof err) < 0) fail_msg("publish: %s", err);
}

static int teardown(void **st)
{
    (void)st;
    crd_kinds_cleanup();
    return 0;
}

static void test_rows(void **st)
{
    (void)st;
    json_t *crd = definition();
    char err[512];
    assert_int_equal(crd_kinds_publish(crd, false, err, sizeof err), 1);
    assert_int_equal(crd_kinds_publish(crd, false, err, sizeof err), 0); /* unchanged */
    const api_kind *k = api_kind_find("example.com", "v1", "buckets");
    assert_non_null(k);
    assert_ptr_equal(api_kind_by_kind("example.com/v1", "Bucket"), k);
    assert_ptr_equal(api_kind_for_key("buckets.example.com/ns/b"), k);
    assert_ptr_equal(api_kind_current(k), k);
    assert_true(k->namespaced);
    assert_string_equal(k->short_names, "bk");
    assert_true(k->subresources & API_SUB_STATUS);
    assert_true(k->subresources & API_SUB_SCALE);
    assert_string_equal(k->scale->spec_replicas, "spec.replicas");
    assert_true(k->flags & API_KIND_NO_STRATEGIC);
    assert_false(k->flags & (API_KIND_SECONDARY | API_KIND_CONVERTS | API_KIND_UNSERVED));
    assert_true(api_kind_has_field(k, "spec.region"));
    char lk[64];
    api_kind_list_kind(k, lk, sizeof lk);
    assert_string_equal(lk, "BucketList");
    assert_true(crd_kinds_served("example.com", "buckets"));

    /* a change republishes: the old row stays valid, the new one is found */
    unsigned gen = api_kind_generation();
    json_object_set_new(json_object_get(json_object_get(crd, "status"), "acceptedNames"),
                        "shortNames", J("['bk','bkt']"));
    assert_int_equal(crd_kinds_publish(crd, false, err, sizeof err), 1);
    const api_kind *k2 = api_kind_find("example.com", "v1", "buckets");
    assert_ptr_not_equal(k2, k);
    assert_string_equal(k2->short_names, "bk,bkt");
    assert_string_equal(k->short_names, "bk"); /* a reader holding the old row */
    assert_ptr_equal(api_kind_current(k), k2);
    assert_true(api_kind_generation() != gen);

    /* terminating: creates refused (the flag the registry reads) */
    assert_int_equal(crd_kinds_publish(crd, true, err, sizeof err), 1);
    assert_true(api_kind_find("example.com", "v1", "buckets")->flags & API_KIND_TERMINATING);

    crd_kinds_retire("example.com", "buckets");
    assert_null(api_kind_find("example.com", "v1", "buckets"));
    assert_null(api_kind_by_kind("example.com/v1", "Bucket"));
    assert_null(api_kind_for_key("buckets.example.com/ns/b"));
    assert_null(api_kind_current(k2));
    assert_false(crd_kinds_served("example.com", "buckets"));
    /* recreated: the same slot serves again */
    size_t n = api_kind_count();
    publish(crd);
    assert_int_equal(api_kind_count(), n);
    assert_non_null(api_kind_find("example.com", "v1", "buckets"));
    json_decref(crd);
}

static json_t *causes_of(const api_kind *k, const json_t *obj)
{
    json_t *causes = json_array();
    api_kind_validate(k, obj, NULL, causes);
    return causes;
}

static void test_hooks(void **st)
{
    (void)st;
    json_t *crd = definition();
    publish(crd);
    const api_kind *k = api_kind_find("example.com", "v1", "buckets");

    /* decode: metadata as ObjectMeta, unknown fields pruned and reported */
    json_t *o = J("{'apiVersion':'example.com/v1','kind':'Bucket',"
                  "'metadata':{'name':'b','labels':{'a':'b'},'nonsense':1},"
                  "'spec':{'region':'x','colour':'red'},'extra':true}");
    tc_result r;
    assert_int_equal(api_kind_decode(k, o, TC_JSON, &r), 0);
    json_t *want = J("['metadata.nonsense','spec.colour','extra']");
    assert_json_eq(r.unknown, want);
    json_decref(want);
    tc_result_clear(&r);
    want = J("{'apiVersion':'example.com/v1','kind':'Bucket','metadata':{'name':'b',"
             "'labels':{'a':'b'}},'spec':{'region':'x'}}");
    assert_json_eq(o, want);
    json_decref(want);
    json_decref(o);
    o = J("{'metadata':{'labels':[]},'spec':{}}");
    assert_int_equal(api_kind_decode(k, o, TC_JSON, &r), -1);
    assert_string_equal(r.error, "json: cannot unmarshal array into Go struct field "
                                 "ObjectMeta.metadata.labels of type map[string]string");
    tc_result_clear(&r);
    json_decref(o);

    /* defaults, then validation with upstream's paths and messages */
    o = J("{'metadata':{'name':'b'},'spec':{'region':'x'}}");
    api_kind_defaults(k, o);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "spec"), "storageGB")),
                     10);
    json_t *causes = causes_of(k, o);
    assert_int_equal(json_array_size(causes), 0);
    json_decref(causes);
    json_object_set_new(json_object_get(o, "spec"), "storageGB", json_string("ten"));
    json_object_set_new(json_object_get(o, "spec"), "replicas", json_integer(-1));
    causes = causes_of(k, o);
    expect_cause(causes, 0, "FieldValueTypeInvalid", "spec.storageGB",
                 "Invalid value: \"string\": spec.storageGB in body must be of type integer: "
                 "\"string\"");
    expect_cause(causes, 1, "FieldValueInvalid", ".spec.replicas",
                 "Invalid value: -1: should be a non-negative integer");
    json_decref(causes);
    json_object_del(json_object_get(o, "spec"), "region");
    json_object_set_new(json_object_get(o, "spec"), "storageGB", json_integer(5));
    json_object_del(json_object_get(o, "spec"), "replicas");
    causes = causes_of(k, o);
    expect_cause(causes, 0, "FieldValueRequired", "spec.region", "Required value");
    json_decref(causes);
    json_decref(o);
    json_decref(crd);
}

static void test_table(void **st)
{
    (void)st;
    json_t *crd = definition();
    publish(crd);
    const api_kind *k = api_kind_find("example.com", "v1", "buckets");
    json_t *items = J("[{'metadata':{'name':'b','creationTimestamp':'2026-01-01T00:00:00Z'},"
                      "'spec':{'storageGB':20,'region':'eu'}},"
                      "{'metadata':{'name':'c','creationTimestamp':'nonsense'},'spec':{}}]");
    json_t *t = table_build(k, items, "None", 1767225600 + 90, NULL);
    json_t *want = J("[{'name':'Name','type':'string','format':'name','priority':0},"
                     "{'name':'Storage','type':'integer','format':'','priority':0},"
                     "{'name':'Region','type':'string','format':'','priority':1},"
                     "{'name':'Made','type':'date','format':'','priority':0}]");
    json_t *defs = json_object_get(t, "columnDefinitions");
    size_t i;
    json_t *d;
    json_array_foreach(defs, i, d) json_object_del(d, "description");
    assert_json_eq(defs, want);
    json_decref(want);
    want = J("[['b',20,'eu','90s'],['c',null,null,'<invalid>']]");
    json_t *cells = json_array();
    json_array_foreach(json_object_get(t, "rows"), i, d)
        json_array_append(cells, json_object_get(d, "cells"));
    assert_json_eq(cells, want);
    json_decref(want);
    json_decref(cells);
    json_decref(t);

    /* no columns: upstream's Age */
    json_object_del(json_array_get(json_object_get(json_object_get(crd, "spec"), "versions"), 0),
                    "additionalPrinterColumns");
    publish(crd);
    k = api_kind_find("example.com", "v1", "buckets");
    t = table_build(k, items, "None", 1767225600 + 90, NULL);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(t, "columnDefinitions"), 1), "name")),
                        "Age");
    json_decref(t);
    json_decref(items);
    json_decref(crd);
}

static void test_versions(void **st)
{
    (void)st;
    json_t *crd = J("{'metadata':{'name':'gadgets.example.com'},"
                    " 'spec':{'group':'example.com','scope':'Cluster',"
                    "  'names':{'plural':'gadgets','kind':'Gadget'},"
                    "  'versions':["
                    "   {'name':'v1beta1','served':true,'storage':false,"
                    "    'schema':{'openAPIV3Schema':{'type':'object'}}},"
                    "   {'name':'v1','served':true,'storage':true,"
                    "    'schema':{'openAPIV3Schema':{'type':'object'}}},"
                    "   {'name':'v1alpha1','served':false,'storage':false,"
                    "    'schema':{'openAPIV3Schema':{'type':'object'}}}]},"
                    " 'status':{'acceptedNames':{'plural':'gadgets','singular':'gadget',"
                    "  'kind':'Gadget','listKind':'GadgetList'},'storedVersions':['v1']}}");
    publish(crd);
    const api_kind *beta = api_kind_find("example.com", "v1beta1", "gadgets");
    const api_kind *ga = api_kind_find("example.com", "v1", "gadgets");
    assert_non_null(beta);
    assert_non_null(ga);
    assert_null(api_kind_find("example.com", "v1alpha1", "gadgets")); /* not served */
    assert_true(beta->flags & API_KIND_SECONDARY);
    assert_false(ga->flags & API_KIND_SECONDARY);
    assert_true(beta->flags & API_KIND_CONVERTS);
    assert_ptr_equal(api_kind_for_key("gadgets.example.com//g"), ga);
    json_t *o = J("{'apiVersion':'example.com/v1beta1','kind':'Gadget'}");
    api_kind_to_storage(beta, o);
    assert_string_equal(json_string_value(json_object_get(o, "apiVersion")), "example.com/v1");
    api_kind_to_version(beta, o);
    assert_string_equal(json_string_value(json_object_get(o, "apiVersion")), "example.com/v1beta1");
    json_decref(o);

    /* a version dropped from the definition is retired */
    json_array_remove(json_object_get(json_object_get(crd, "spec"), "versions"), 0);
    publish(crd);
    assert_null(api_kind_find("example.com", "v1beta1", "gadgets"));
    assert_non_null(api_kind_find("example.com", "v1", "gadgets"));
    json_decref(crd);
}

/* ---- readers on other threads ---- */

static atomic_bool stop_readers;
static atomic_long reads;

static void *reader(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_readers)) {
        size_t n = api_kind_count();
        for (size_t i = 0; i < n; i++) {
            const api_kind *k = api_kind_at(i);
            if (!k || !k->resource || !k->group) abort(); /* a slot without a row */
            (void)strlen(k->kind);
        }
        api_kind_find("example.com", "v1", "things");
        api_kind_for_key("things.example.com/ns/x");
        atomic_fetch_add(&reads, 1);
    }
    return NULL;
}

static void test_concurrent_readers(void **st)
{
    (void)st;
    pthread_t th[3];
    atomic_store(&stop_readers, false);
    for (int i = 0; i < 3; i++)
        assert_int_equal(pthread_create(&th[i], NULL, reader, NULL), 0);
    /* the readers are running before the table changes (on a loaded
     * machine the 200 rounds could otherwise end before any reader ran) */
    while (atomic_load(&reads) == 0)
        sched_yield();
    char name[64], err[512];
    for (int round = 0; round < 200; round++) {
        /* new definitions (new slots), changes and removals */
        snprintf(name, sizeof name, "g%d.example.com", round % 20);
        json_t *crd =
            json_pack("{s:{s:s}, s:{s:s, s:s, s:{s:s, s:s}, s:[{s:s, s:b, s:b, s:{s:{s:s}}}]}, "
                      "s:{s:{s:s, s:s, s:s, s:s}}}",
                      "metadata", "name", name, "spec", "group", "example.com", "scope",
                      "Namespaced", "names", "plural", "things", "kind", "Thing", "versions",
                      "name", round % 3 ? "v1" : "v2", "served", 1, "storage", 1, "schema",
                      "openAPIV3Schema", "type", "object", "status", "acceptedNames", "plural",
                      name, "singular", "thing", "kind", "Thing", "listKind", "ThingList");
        json_object_set_new(json_object_get(json_object_get(crd, "spec"), "names"), "plural",
                            json_stringn(name, strcspn(name, ".")));
        json_object_set_new(json_object_get(json_object_get(crd, "status"), "acceptedNames"),
                            "plural", json_stringn(name, strcspn(name, ".")));
        if (crd_kinds_publish(crd, round % 2, err, sizeof err) < 0) fail_msg("%s", err);
        if (round % 7 == 0) {
            char plural[32];
            snprintf(plural, sizeof plural, "%.*s", (int)strcspn(name, "."), name);
            crd_kinds_retire("example.com", plural);
        }
        json_decref(crd);
    }
    atomic_store(&stop_readers, true);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    assert_true(atomic_load(&reads) > 0);
}

/* A schema with defaults defaults what is read too (upstream defaults what
 * it decodes from storage); a schema without leaves reads untouched, so
 * they are spliced unparsed. */
static void test_read_defaults(void **st)
{
    (void)st;
    json_t *crd = definition();
    publish(crd);
    const api_kind *k = api_kind_find("example.com", "v1", "buckets");
    assert_true(k->flags & API_KIND_READ_DEFAULTS);
    assert_true(api_kind_rewrites_reads(k));
    json_t *o = J("{'apiVersion':'example.com/v1','kind':'Bucket','metadata':{'name':'b'},"
                  "'spec':{'region':'x'}}");
    api_kind_to_version(k, o); /* an object stored before storageGB had its default */
    json_t *want = J("{'apiVersion':'example.com/v1','kind':'Bucket','metadata':{'name':'b'},"
                     "'spec':{'region':'x','storageGB':10}}");
    assert_json_eq(o, want);
    json_decref(want);
    json_decref(o);

    json_t *v = json_object_get(
        json_array_get(json_object_get(json_object_get(crd, "spec"), "versions"), 0), "schema");
    json_t *storage = json_object_get(
        json_object_get(json_object_get(json_object_get(v, "openAPIV3Schema"), "properties"),
                        "spec"),
        "properties");
    json_object_del(json_object_get(storage, "storageGB"), "default");
    publish(crd);
    k = api_kind_find("example.com", "v1", "buckets");
    assert_false(k->flags & API_KIND_READ_DEFAULTS);
    assert_false(api_kind_rewrites_reads(k));
    o = J("{'spec':{'region':'x'}}");
    api_kind_to_version(k, o);
    want = J("{'spec':{'region':'x'}}");
    assert_json_eq(o, want);
    json_decref(want);
    json_decref(o);
    json_decref(crd);
}

static const json_t *v2_definition(const json_t *doc, const char *name)
{
    return json_object_get(json_object_get(doc, "definitions"), name);
}

/* /openapi/v2 as apiextensions publishes it (ToStructuralOpenAPIV2, defaults
 * pruned; a root preserving unknown fields is a bare object), v3 as defined. */
static void test_openapi_v2(void **st)
{
    (void)st;
    json_t *crd =
        J("{'metadata':{'name':'things.example.com'},"
          " 'spec':{'group':'example.com','scope':'Namespaced',"
          "  'names':{'plural':'things','kind':'Thing'},"
          "  'versions':[{'name':'v1','served':true,'storage':true,"
          "   'schema':{'openAPIV3Schema':{'type':'object','properties':{"
          "    'spec':{'type':'object','required':['a','n'],'properties':{"
          "     'a':{'type':'string','default':'x','enum':['x','y']},"
          "     'n':{'type':'object','nullable':true,'properties':{'z':{'type':'string'}}},"
          "     'p':{'type':'object','x-kubernetes-preserve-unknown-fields':true,"
          "      'properties':{'k':{'type':'string'}}},"
          "     'l':{'type':'array','x-kubernetes-preserve-unknown-fields':true,"
          "      'items':{'type':'string'}},"
          "     'i':{'x-kubernetes-int-or-string':true,"
          "      'anyOf':[{'type':'integer'},{'type':'string'}]}}}}}}}]},"
          " 'status':{'acceptedNames':{'plural':'things','singular':'thing',"
          "  'kind':'Thing','listKind':'ThingList'},'storedVersions':['v1']}}");
    crd_defaults(crd);
    publish(crd);
    json_t *doc = openapi_v2();
    const json_t *d = v2_definition(doc, "com.example.v1.Thing");
    assert_non_null(d);
    json_t *spec = json_deep_copy(json_object_get(json_object_get(d, "properties"), "spec"));
    json_t *want = J("{'type':'object','required':['a'],'properties':{"
                     " 'a':{'type':'string','enum':['x','y']},"
                     " 'n':{},"
                     " 'p':{'x-kubernetes-preserve-unknown-fields':true},"
                     " 'l':{'x-kubernetes-preserve-unknown-fields':true},"
                     " 'i':{'x-kubernetes-int-or-string':true}}}");
    assert_json_eq(spec, want);
    json_decref(want);
    json_decref(spec);
    assert_non_null(json_object_get(json_object_get(d, "properties"), "metadata"));
    json_decref(doc);
    /* v3 keeps the schema as defined */
    doc = openapi_v3_group_version("example.com", "v1");
    const json_t *v3 = json_object_get(
        json_object_get(json_object_get(doc, "components"), "schemas"), "com.example.v1.Thing");
    const json_t *a = json_object_get(
        json_object_get(json_object_get(json_object_get(v3, "properties"), "spec"), "properties"),
        "a");
    assert_string_equal(json_string_value(json_object_get(a, "default")), "x");
    json_decref(doc);
    json_decref(crd);

    /* preserve-unknown-fields at the root: a bare object, with its GVK only */
    crd = J("{'metadata':{'name':'empties.example.com'},"
            " 'spec':{'group':'example.com','scope':'Namespaced',"
            "  'names':{'plural':'empties','kind':'Empty'},"
            "  'versions':[{'name':'v1','served':true,'storage':true,"
            "   'schema':{'openAPIV3Schema':{'type':'object',"
            "    'x-kubernetes-preserve-unknown-fields':true}}}]},"
            " 'status':{'acceptedNames':{'plural':'empties','singular':'empty',"
            "  'kind':'Empty','listKind':'EmptyList'},'storedVersions':['v1']}}");
    crd_defaults(crd);
    publish(crd);
    doc = openapi_v2();
    want = J("{'type':'object','x-kubernetes-group-version-kind':[{'group':'example.com',"
             "'version':'v1','kind':'Empty'}]}");
    assert_json_eq(v2_definition(doc, "com.example.v1.Empty"), want);
    json_decref(want);
    assert_non_null(v2_definition(doc, "com.example.v1.EmptyList"));
    json_decref(doc);
    json_decref(crd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_rows, teardown),
        cmocka_unit_test_teardown(test_hooks, teardown),
        cmocka_unit_test_teardown(test_table, teardown),
        cmocka_unit_test_teardown(test_versions, teardown),
        cmocka_unit_test_teardown(test_concurrent_readers, teardown),
        cmocka_unit_test_teardown(test_read_defaults, teardown),
        cmocka_unit_test_teardown(test_openapi_v2, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
