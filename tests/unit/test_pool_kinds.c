/* test_pool_kinds.c - Capsule's ResourcePool and ResourcePoolClaim as kinds
 * (api/pool_kinds.h): the rows of the kind table, defaulting (CRD defaults,
 * defaultsZero, the release annotation), validation with its messages,
 * typed decoding, the table columns and cells, discovery and OpenAPI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/discovery.h"
#include "api/kinds.h"
#include "api/openapi.h"
#include "api/pool_kinds.h"
#include "api/protobuf.h"
#include "api/schema.h"
#include "api/status.h"
#include "api/table.h"
#include "api/typecheck.h"
#include "testutil.h"

#define NOW 1700000000
#define T_5M "2023-11-14T22:08:20Z"
#define AV "capsule.clastix.io/v1beta2"

static const api_kind *pools(void)
{
    const api_kind *k = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepools");
    assert_non_null(k);
    return k;
}

static const api_kind *claims(void)
{
    const api_kind *k = api_kind_find(POOL_GROUP, POOL_VERSION, "resourcepoolclaims");
    assert_non_null(k);
    return k;
}

/* ---- the kind table ---- */

static void test_rows(void **state)
{
    (void)state;
    const api_kind *p = pools(), *c = claims();
    assert_string_equal(p->kind, "ResourcePool");
    assert_string_equal(p->singular, "resourcepool");
    assert_string_equal(p->short_names, "quotapool");
    assert_false(p->namespaced);
    assert_true(p->subresources & API_SUB_STATUS);
    assert_string_equal(c->kind, "ResourcePoolClaim");
    assert_string_equal(c->singular, "resourcepoolclaim");
    assert_null(c->short_names);
    assert_true(c->namespaced);
    assert_true(c->subresources & API_SUB_STATUS);
    assert_ptr_equal(api_kind_by_kind(AV, "ResourcePool"), p);
    assert_ptr_equal(api_kind_for_key("resourcepoolclaims.capsule.clastix.io/ns/a"), c);
    assert_non_null(api_kind_schema(p));
    assert_string_equal(api_kind_schema(c)->pkg, "io.clastix.capsule.v1beta2");
}

/* ---- defaulting ---- */

static void expect_defaults(const api_kind *k, const char *in, const char *want)
{
    json_t *o = J(in), *w = J(want);
    k->defaults(o);
    assert_json_eq(o, w);
    json_decref(o);
    json_decref(w);
}

#define CONFIG_FALSE "{'defaultsZero':false,'orderedQueue':false,'deleteBoundResources':false}"

static void test_pool_defaults(void **state)
{
    (void)state;
    /* the CRD's defaults: config {} and each flag false */
    expect_defaults(pools(), "{'spec':{'quota':{'hard':{'cpu':'2'}}}}",
                    "{'spec':{'quota':{'hard':{'cpu':'2'}},'config':" CONFIG_FALSE "}}");
    expect_defaults(pools(), "{'spec':{'config':{'orderedQueue':true}}}",
                    "{'spec':{'config':{'defaultsZero':false,'orderedQueue':true,"
                    "'deleteBoundResources':false}}}");
    /* no spec: nothing to default (validation says spec is required) */
    expect_defaults(pools(), "{'metadata':{'name':'a'}}", "{'metadata':{'name':'a'}}");
    /* defaultsZero: every hard resource missing from defaults is 0; given ones kept */
    expect_defaults(pools(),
                    "{'spec':{'config':{'defaultsZero':true},'defaults':{'count/"
                    "persistentvolumeclaims':'3','requests.cpu':'1'},'quota':{'hard':{'limits."
                    "cpu':'2','requests.cpu':'2','requests.storage':'5Gi'}}}}",
                    "{'spec':{'config':{'defaultsZero':true,'orderedQueue':false,"
                    "'deleteBoundResources':false},'defaults':{'count/persistentvolumeclaims':'3',"
                    "'requests.cpu':'1','limits.cpu':'0','requests.storage':'0'},'quota':{'hard':"
                    "{'limits.cpu':'2','requests.cpu':'2','requests.storage':'5Gi'}}}}");
    expect_defaults(pools(),
                    "{'spec':{'config':{'defaultsZero':true},'quota':{'hard':{'pods':'7'}}}}",
                    "{'spec':{'config':{'defaultsZero':true,'orderedQueue':false,"
                    "'deleteBoundResources':false},'defaults':{'pods':'0'},'quota':{'hard':"
                    "{'pods':'7'}}}}");
    /* defaultsZero false, or nothing in hard: defaults untouched */
    expect_defaults(pools(), "{'spec':{'config':{'defaultsZero':true},'quota':{}}}",
                    "{'spec':{'config':{'defaultsZero':true,'orderedQueue':false,"
                    "'deleteBoundResources':false},'quota':{}}}");
    expect_defaults(
        pools(), "{'spec':{'quota':{'hard':{'pods':'7'}},'defaults':{'cpu':'1'}}}",
        "{'spec':{'quota':{'hard':{'pods':'7'}},'defaults':{'cpu':'1'},'config':" CONFIG_FALSE
        "}}");
}

static void test_claim_defaults(void **state)
{
    (void)state;
    /* create (no resourceVersion): the release annotation goes, the others stay */
    expect_defaults(claims(),
                    "{'metadata':{'name':'c','annotations':{'projectcapsule.dev/release':'true',"
                    "'a':'b'}},'spec':{'pool':'p','claim':{'cpu':'1'}}}",
                    "{'metadata':{'name':'c','annotations':{'a':'b'}},'spec':{'pool':'p','claim':"
                    "{'cpu':'1'}}}");
    expect_defaults(claims(),
                    "{'metadata':{'name':'c','annotations':{'projectcapsule.dev/release':'x'}},"
                    "'spec':{'claim':{'cpu':'1'}}}",
                    "{'metadata':{'name':'c'},'spec':{'pool':'','claim':{'cpu':'1'}}}");
    /* no spec: the webhook's round trip writes spec.pool "" (claim stays missing) */
    expect_defaults(claims(), "{'metadata':{'name':'c'}}",
                    "{'metadata':{'name':'c'},'spec':{'pool':''}}");
    /* update: the annotation is the registry's to judge */
    expect_defaults(claims(),
                    "{'metadata':{'name':'c','resourceVersion':'5','annotations':{'projectcapsule."
                    "dev/release':'TRUE'}},'spec':{'pool':'p','claim':{}}}",
                    "{'metadata':{'name':'c','resourceVersion':'5','annotations':{'projectcapsule."
                    "dev/release':'TRUE'}},'spec':{'pool':'p','claim':{}}}");
}

static void test_release_helpers(void **state)
{
    (void)state;
    json_t *o = J("{'metadata':{'annotations':{'projectcapsule.dev/release':'TrUe'}}}");
    assert_true(pool_claim_release_requested(o));
    assert_true(pool_claim_strip_release(o));
    assert_false(pool_claim_release_requested(o));
    assert_false(pool_claim_strip_release(o));
    assert_null(json_object_get(json_object_get(o, "metadata"), "annotations"));
    json_decref(o);
    o = J("{'metadata':{'annotations':{'projectcapsule.dev/release':'yes'}}}");
    assert_false(pool_claim_release_requested(o));
    json_decref(o);
}

/* ---- validation ---- */

/* Validate `obj` as kind k; the causes, one "field: message" per line. */
static void expect_causes(const api_kind *k, const char *obj, const char *want)
{
    json_t *o = J(obj), *causes = json_array();
    k->validate(o, NULL, causes);
    char got[4096] = "";
    size_t i, off = 0;
    json_t *c;
    json_array_foreach(causes, i, c)
    {
        off += (size_t)snprintf(got + off, sizeof got - off, "%s%s: %s", i ? "\n" : "",
                                json_string_value(json_object_get(c, "field")),
                                json_string_value(json_object_get(c, "message")));
    }
    assert_string_equal(got, want);
    json_decref(causes);
    json_decref(o);
}

static void test_pool_validation(void **state)
{
    (void)state;
    const api_kind *p = pools();
    expect_causes(p,
                  "{'spec':{'quota':{'hard':{'limits.cpu':'2','requests.storage':'5Gi'}},"
                  "'selectors':[{'matchLabels':{'capsule.clastix.io/tenant':'solar'}},"
                  "{'matchExpressions':[{'key':'company.com/env','operator':'In','values':["
                  "'prod']}]}],'defaults':{'count/persistentvolumeclaims':'3'},'config':"
                  "{'defaultsZero':true}}}",
                  "");
    expect_causes(p, "{'metadata':{'name':'a'}}", "spec: Required value");
    expect_causes(p, "{'spec':{}}", "spec.quota: Required value");
    expect_causes(p, "{'spec':{'quota':{}}}", "");
    /* the quota spec as ResourceQuota validates it, under spec.quota */
    expect_causes(p, "{'spec':{'quota':{'hard':{'cpu':'-1','pods':'1.5','foo':'1'}}}}",
                  "spec.quota.hard[cpu]: Invalid value: \"-1\": must be greater than or equal "
                  "to 0\n"
                  "spec.quota.hard[foo]: Invalid value: \"foo\": must be a standard resource type "
                  "or fully qualified\n"
                  "spec.quota.hard[foo]: Invalid value: \"foo\": must be a standard resource for "
                  "quota\n"
                  "spec.quota.hard[pods]: Invalid value: \"1500m\": must be an integer");
    expect_causes(p,
                  "{'spec':{'quota':{'hard':{'pods':'1'},'scopes':['Nope'],'scopeSelector':"
                  "{'matchExpressions':[{'scopeName':'PriorityClass','operator':'In'}]}}}}",
                  "spec.quota.scopes: Invalid value: [\"Nope\"]: unsupported scope\n"
                  "spec.quota.scopeSelector.matchExpressions.values: Required value: must be at "
                  "least one value when `operator` is 'In' or 'NotIn' for scope selector");
    /* namespace selectors must parse */
    expect_causes(p,
                  "{'spec':{'quota':{},'selectors':[{'matchExpressions':[{'key':'a','operator':"
                  "'Equals','values':['x']}]},{'matchLabels':{'bad key!':'v'}},{'matchExpressions'"
                  ":[{'key':'b','operator':'In'}]}]}}",
                  "spec.selectors[0].matchExpressions[0].operator: Invalid value: \"Equals\": not "
                  "a valid selector operator\n"
                  "spec.selectors[1].matchLabels: Invalid value: \"bad key!\": name part must "
                  "consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                  "with an alphanumeric character (e.g. 'MyName' or 'my.name' or "
                  "'123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')\n"
                  "spec.selectors[2].matchExpressions[0].values: Required value: must be "
                  "specified when `operator` is 'In' or 'NotIn'");
    /* defaults: quota's resource names and non-negative amounts */
    expect_causes(p, "{'spec':{'quota':{},'defaults':{'requests.memory':'-1Gi','a/b/c':'1'}}}",
                  "spec.defaults[a/b/c]: Invalid value: \"a/b/c\": a qualified name must consist "
                  "of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex "
                  "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
                  "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')\n"
                  "spec.defaults[requests.memory]: Invalid value: \"-1Gi\": must be greater than "
                  "or equal to 0");
    /* shapes the typed decoder would refuse, should an object come another way */
    expect_causes(p, "{'spec':{'quota':[],'selectors':{},'config':{'orderedQueue':'yes'}}}",
                  "spec.selectors: Invalid value: {}: must be of type array\n"
                  "spec.quota: Invalid value: []: must be of type object\n"
                  "spec.config.orderedQueue: Invalid value: \"yes\": must be of type boolean");
}

static void test_claim_validation(void **state)
{
    (void)state;
    const api_kind *c = claims();
    expect_causes(c, "{'spec':{'pool':'','claim':{'requests.cpu':'2','requests.memory':'2Gi'}}}",
                  "");
    expect_causes(c, "{'spec':{'pool':'p','claim':{}}}", "");
    expect_causes(c, "{'spec':{'pool':'p'}}", "spec.claim: Required value");
    expect_causes(c, "{}", "spec.pool: Required value\nspec.claim: Required value");
    expect_causes(c, "{'spec':{'pool':'p','claim':{'pods':'-3','requests.cpu':'-100m','x':'1'}}}",
                  "spec.claim[pods]: Invalid value: \"-3\": must be greater than or equal to 0\n"
                  "spec.claim[requests.cpu]: Invalid value: \"-100m\": must be greater than or "
                  "equal to 0\n"
                  "spec.claim[x]: Invalid value: \"x\": must be a standard resource type or fully "
                  "qualified\n"
                  "spec.claim[x]: Invalid value: \"x\": must be a standard resource for quota");
    expect_causes(c, "{'spec':{'pool':1,'claim':{'pods':'1'}}}",
                  "spec.pool: Invalid value: 1: must be of type string");
}

/* The whole path a body takes: typed decoding, then defaults, then validation. */
static void test_typed_then_validated(void **state)
{
    (void)state;
    json_t *o = J("{'apiVersion':'" AV "','kind':'ResourcePool','metadata':{'name':'example'},"
                  "'spec':{'defaults':{'count/persistentvolumeclaims':3,'requests.storage':'0Gi'},"
                  "'config':{'defaultsZero':true},'quota':{'hard':{'limits.cpu':'2','limits."
                  "memory':'2Gi'}},'selectors':[{'matchLabels':{'capsule.clastix.io/tenant':"
                  "'example'}}],'nope':1}}");
    tc_result r;
    assert_int_equal(tc_decode(api_kind_schema(pools()), o, &r), 0);
    assert_int_equal(json_array_size(r.unknown), 1);
    assert_string_equal(json_string_value(json_array_get(r.unknown, 0)), "spec.nope");
    tc_result_clear(&r);
    pools()->defaults(o);
    json_t *causes = json_array();
    pools()->validate(o, NULL, causes);
    assert_int_equal(json_array_size(causes), 0);
    json_t *want = J("{'count/persistentvolumeclaims':'3','requests.storage':'0','limits.cpu':"
                     "'0','limits.memory':'0'}");
    assert_json_eq(json_object_get(json_object_get(o, "spec"), "defaults"), want);
    json_decref(want);
    json_decref(causes);
    json_decref(o);
    /* a claim amount that is no quantity never reaches validation */
    o = J("{'spec':{'pool':'p','claim':{'cpu':'lots'}}}");
    assert_int_equal(tc_decode(api_kind_schema(claims()), o, &r), -1);
    assert_non_null(strstr(r.error, "quantities must match the regular expression"));
    tc_result_clear(&r);
    json_decref(o);
}

/* ---- tables ---- */

static json_t *table1(const api_kind *k, const char *obj)
{
    json_t *items = json_array();
    json_array_append_new(items, J(obj));
    json_t *t = table_build(k, items, "None", NOW, NULL);
    json_decref(items);
    return t;
}

static void expect_table(const api_kind *k, const char *obj, const char *cols, const char *cells)
{
    json_t *t = table1(k, obj), *names = json_array(), *wc = J(cols), *wcells = J(cells);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(t, "columnDefinitions"), i, c)
    {
        json_array_append(names, json_object_get(c, "name"));
        /* only a claim's In Use is a wide (-o wide) column */
        bool wide = !strcmp(json_string_value(json_object_get(c, "name")), "In Use");
        assert_int_equal(json_integer_value(json_object_get(c, "priority")), wide ? 1 : 0);
    }
    assert_json_eq(names, wc);
    assert_json_eq(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"), wcells);
    json_decref(names);
    json_decref(wc);
    json_decref(wcells);
    json_decref(t);
}

#define POOL_COLS "['Name','Claims','Namespaces','Ready','Status','Age']"
#define CLAIM_COLS "['Name','Pool','Status','Reason','Message','Age','In Use']"

static void test_tables(void **state)
{
    (void)state;
    /* a new object: nothing in status, so null cells (kubectl prints them empty) */
    expect_table(pools(), "{'metadata':{'name':'solar','creationTimestamp':'" T_5M "'}}", POOL_COLS,
                 "['solar',null,null,null,null,'5m']");
    expect_table(pools(),
                 "{'metadata':{'name':'solar','creationTimestamp':'" T_5M "'},'status':"
                 "{'claimCount':2,'namespaceCount':3,'conditions':[{'type':'Exhausted','status':"
                 "'False','message':'no exhaustions'},{'type':'Ready','status':'True','message':"
                 "'reconciled'}]}}",
                 POOL_COLS, "['solar',2,3,'True','reconciled','5m']");
    expect_table(claims(), "{'metadata':{'name':'get-me-solar','creationTimestamp':'" T_5M "'}}",
                 CLAIM_COLS, "['get-me-solar',null,null,null,null,'5m',null]");
    /* the columns read status.condition, the claim's state in one condition */
    expect_table(claims(),
                 "{'metadata':{'name':'get-mem','creationTimestamp':'" T_5M "'},'status':"
                 "{'pool':{'name':'sampler','uid':'u'},'condition':{'type':'Bound','status':"
                 "'False','reason':'QueueExhausted','message':'requested: requests.memory=2Gi, "
                 "queued: requests.memory=1Gi'}}}",
                 CLAIM_COLS,
                 "['get-mem','sampler','Bound','QueueExhausted','requested: requests.memory=2Gi, "
                 "queued: requests.memory=1Gi','5m',null]");
    /* a claim stored without it: the same, from its conditions; wide: in use */
    expect_table(claims(),
                 "{'metadata':{'name':'get-me-solar','creationTimestamp':'" T_5M "'},'status':"
                 "{'pool':{'name':'solar-pool','uid':'u'},'conditions':[{'type':'Ready','status':"
                 "'True','message':'reconciled'},{'type':'Bound','status':'False','reason':"
                 "'Unused','message':'claim is unused'}]}}",
                 CLAIM_COLS,
                 "['get-me-solar','solar-pool','Bound','Succeeded','Claimed resources','5m',"
                 "'False']");
    expect_table(claims(),
                 "{'metadata':{'name':'get-me-cpu','creationTimestamp':'" T_5M "'},'status':"
                 "{'conditions':[{'type':'Ready','status':'False','reason':'Failed','message':"
                 "'ResourcePool.capsule.clastix.io \\\"sample\\\" not found'}]}}",
                 CLAIM_COLS,
                 "['get-me-cpu',null,'Assigned','Failed','ResourcePool.capsule.clastix.io "
                 "\\\"sample\\\" not found','5m',null]");
    expect_table(claims(),
                 "{'metadata':{'name':'get-me-cpu','creationTimestamp':'" T_5M "'},'status':"
                 "{'pool':{'name':'sampler','uid':'u'},'conditions':[{'type':'Ready','status':"
                 "'True','message':'reconciled'},{'type':'Exhausted','status':'True','reason':"
                 "'PoolExhausted','message':'requested: requests.memory=2Gi, available: "
                 "requests.memory=512Mi'},{'type':'Bound','status':'False','reason':'Failed',"
                 "'message':'claim causes exhaustions'}]}}",
                 CLAIM_COLS,
                 "['get-me-cpu','sampler','Bound','PoolExhausted','requested: requests.memory=2Gi, "
                 "available: requests.memory=512Mi','5m',null]");
    /* the Name column is the object name column; Age is a date, as for any CRD */
    json_t *t = table1(pools(), "{'metadata':{'name':'x'}}");
    json_t *defs = json_object_get(t, "columnDefinitions");
    assert_string_equal(json_string_value(json_object_get(json_array_get(defs, 0), "format")),
                        "name");
    assert_string_equal(json_string_value(json_object_get(json_array_get(defs, 1), "type")),
                        "integer");
    assert_string_equal(json_string_value(json_object_get(json_array_get(defs, 5), "type")),
                        "date");
    json_decref(t);
}

/* ---- discovery, OpenAPI, protobuf ---- */

static void test_discovery(void **state)
{
    (void)state;
    json_t *l = disc_resource_list(POOL_GROUP, POOL_VERSION);
    assert_non_null(l);
    size_t i;
    json_t *r;
    int seen = 0;
    json_array_foreach(json_object_get(l, "resources"), i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        if (strcmp(name, "resourcepools") == 0) {
            seen |= 1;
            assert_false(json_is_true(json_object_get(r, "namespaced")));
            assert_string_equal(
                json_string_value(json_array_get(json_object_get(r, "shortNames"), 0)),
                "quotapool");
        } else if (strcmp(name, "resourcepoolclaims") == 0) {
            seen |= 2;
            assert_true(json_is_true(json_object_get(r, "namespaced")));
        } else if (strcmp(name, "resourcepools/status") == 0 ||
                   strcmp(name, "resourcepoolclaims/status") == 0) {
            seen |= strcmp(name, "resourcepools/status") == 0 ? 4 : 8;
        }
    }
    assert_int_equal(seen, 15);
    json_decref(l);
}

static json_t *prop(json_t *schemas, const char *type, const char *field)
{
    json_t *s = json_object_get(schemas, type);
    assert_non_null(s);
    json_t *p = json_object_get(json_object_get(s, "properties"), field);
    assert_non_null(p);
    return p;
}

static void test_openapi(void **state)
{
    (void)state;
    json_t *d = openapi_v3_group_version(POOL_GROUP, POOL_VERSION);
    assert_non_null(d);
    json_t *sc = json_object_get(json_object_get(d, "components"), "schemas");
    json_t *pool = json_object_get(sc, "io.clastix.capsule.v1beta2.ResourcePool");
    assert_non_null(pool);
    assert_null(json_object_get(pool, "x-kubernetes-preserve-unknown-fields"));
    json_t *gvk = json_array_get(json_object_get(pool, "x-kubernetes-group-version-kind"), 0);
    assert_string_equal(json_string_value(json_object_get(gvk, "group")), POOL_GROUP);
    /* map of lists of items, map of messages */
    json_t *claims_p = prop(sc, "io.clastix.capsule.v1beta2.ResourcePoolStatus", "claims");
    json_t *want = J("{'type':'object','additionalProperties':{'type':'array','items':{'$ref':"
                     "'#/components/schemas/io.clastix.capsule.v1beta2.ResourcePoolClaimsItem'}},"
                     "'description':'The allocated claims, by namespace.'}");
    assert_json_eq(claims_p, want);
    json_decref(want);
    json_t *exh = prop(sc, "io.clastix.capsule.v1beta2.ResourcePoolStatus", "exhaustions");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(exh, "additionalProperties"), "$ref")),
        "#/components/schemas/io.clastix.capsule.v1beta2.PoolExhaustionResource");
    assert_non_null(json_object_get(sc, "io.clastix.capsule.v1beta2.ResourcePoolClaimsItem"));
    assert_non_null(json_object_get(sc, "io.k8s.api.core.v1.ResourceQuotaSpec"));
    /* required fields, as the CRDs have them */
    json_t *req = json_object_get(
        json_object_get(sc, "io.clastix.capsule.v1beta2.ResourcePoolClaimSpec"), "required");
    want = J("['pool','claim']");
    assert_json_eq(req, want);
    json_decref(want);
    /* custom resources: JSON and merge patches only */
    json_t *patch =
        json_object_get(json_object_get(json_object_get(d, "paths"),
                                        "/apis/capsule.clastix.io/v1beta2/resourcepools/{name}"),
                        "patch");
    json_t *content = json_object_get(json_object_get(patch, "requestBody"), "content");
    assert_non_null(json_object_get(content, "application/merge-patch+json"));
    assert_null(json_object_get(content, "application/strategic-merge-patch+json"));
    json_decref(d);
    /* v2 holds them too */
    d = openapi_v2();
    assert_non_null(json_object_get(json_object_get(d, "definitions"),
                                    "io.clastix.capsule.v1beta2.ResourcePoolClaim"));
    json_decref(d);
}

static void test_no_protobuf(void **state)
{
    (void)state;
    assert_false(pb_kind_known(AV, "ResourcePool"));
    assert_true(pb_kind_known("v1", "ResourceQuota"));
    api_err e;
    api_err_init(&e);
    assert_null(pb_decode_object(AV, "ResourcePoolClaim", "", 0, &e));
    assert_int_equal(e.code, API_BAD_REQUEST);
    assert_non_null(strstr(e.message, "no kind \"ResourcePoolClaim\" is registered"));
    api_err_clear(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_pool_defaults),
        cmocka_unit_test(test_claim_defaults),
        cmocka_unit_test(test_release_helpers),
        cmocka_unit_test(test_pool_validation),
        cmocka_unit_test(test_claim_validation),
        cmocka_unit_test(test_typed_then_validated),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_discovery),
        cmocka_unit_test(test_openapi),
        cmocka_unit_test(test_no_protobuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
