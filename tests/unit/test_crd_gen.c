/* test_crd_gen.c - allot's Capsule kinds as CustomResourceDefinitions
 * (api/crd_gen.h): names and scope as the kind table has them, structural
 * schemas that allot's own CRD validation (upstream's rules) accepts, the
 * status subresource, defaults from allot's defaulting, and printer columns
 * whose JSONPaths print, for seed 003's objects, the cells the standalone
 * printers print. Also the YAML stream `allotd crds` writes (api/yaml_emit.h)
 * reads back as the same values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "testutil.h"

#include "api/crd.h"
#include "api/crd_gen.h"
#include "api/kinds.h"
#include "api/table.h"
#include "api/yaml.h"
#include "api/yaml_emit.h"
#include "core/jsonpath.h"

#include <stdio.h>

static json_t *all_crds(void)
{
    char err[512] = "";
    json_t *list = crd_gen_all(err, sizeof err);
    if (!list) fail_msg("crd_gen_all: %s", err);
    return list;
}

static const json_t *crd_named(const json_t *list, const char *plural)
{
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(list, "items"), i, c)
    {
        if (!strcmp(json_string_value(json_object_get(
                        json_object_get(json_object_get(c, "spec"), "names"), "plural")),
                    plural))
            return c;
    }
    fail_msg("no CRD for %s", plural);
    return NULL;
}

static const json_t *version0(const json_t *crd)
{
    return json_array_get(json_object_get(json_object_get(crd, "spec"), "versions"), 0);
}

static const json_t *root_schema(const json_t *crd)
{
    return json_object_get(json_object_get(version0(crd), "schema"), "openAPIV3Schema");
}

static void test_names_and_scope(void **state)
{
    (void)state;
    json_t *list = all_crds();
    assert_string_equal(json_string_value(json_object_get(list, "kind")), "List");
    assert_int_equal(json_array_size(json_object_get(list, "items")), 4);
    struct {
        const char *plural, *kind, *scope;
        const char *names; /* the names object, short names and categories as discovery */
    } want[] = {
        {"resourcepools", "ResourcePool", "Cluster",
         "{'kind':'ResourcePool','listKind':'ResourcePoolList','plural':'resourcepools',"
         "'singular':'resourcepool','shortNames':['quotapool']}"},
        {"resourcepoolclaims", "ResourcePoolClaim", "Namespaced",
         "{'kind':'ResourcePoolClaim','listKind':'ResourcePoolClaimList',"
         "'plural':'resourcepoolclaims','singular':'resourcepoolclaim'}"},
        {"customquotas", "CustomQuota", "Namespaced",
         "{'kind':'CustomQuota','listKind':'CustomQuotaList','plural':'customquotas',"
         "'singular':'customquota','shortNames':['cq']}"},
        {"globalcustomquotas", "GlobalCustomQuota", "Cluster",
         "{'kind':'GlobalCustomQuota','listKind':'GlobalCustomQuotaList',"
         "'plural':'globalcustomquotas','singular':'globalcustomquota','shortNames':['gcq']}"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const json_t *c = json_array_get(json_object_get(list, "items"), i), *spec;
        char name[128];
        snprintf(name, sizeof name, "%s.capsule.clastix.io", want[i].plural);
        assert_string_equal(json_string_value(json_object_get(c, "apiVersion")),
                            "apiextensions.k8s.io/v1");
        assert_string_equal(json_string_value(json_object_get(c, "kind")),
                            "CustomResourceDefinition");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(c, "metadata"), "name")), name);
        spec = json_object_get(c, "spec");
        assert_string_equal(json_string_value(json_object_get(spec, "group")),
                            "capsule.clastix.io");
        assert_string_equal(json_string_value(json_object_get(spec, "scope")), want[i].scope);
        json_t *names = J(want[i].names);
        assert_json_eq(json_object_get(spec, "names"), names);
        json_decref(names);
        /* The kind table agrees (the source of the names). */
        const api_kind *k = api_kind_by_kind("capsule.clastix.io/v1beta2", want[i].kind);
        assert_non_null(k);
        assert_int_equal(k->namespaced, !strcmp(want[i].scope, "Namespaced"));
        const json_t *v = version0(c);
        assert_string_equal(json_string_value(json_object_get(v, "name")), "v1beta2");
        assert_true(json_is_true(json_object_get(v, "served")));
        assert_true(json_is_true(json_object_get(v, "storage")));
        json_t *sub = J("{'status':{}}");
        assert_json_eq(json_object_get(v, "subresources"), sub);
        json_decref(sub);
    }
    json_decref(list);
}

/* Every node has a type, or is an int-or-string; no $ref, allOf or oneOf;
 * anyOf only as an int-or-string's [integer, string]. */
static void check_structural(const json_t *n, const char *path)
{
    char sub[1024];
    assert_true(json_is_object(n));
    const bool ios = json_is_true(json_object_get(n, "x-kubernetes-int-or-string"));
    if (!ios && !json_is_string(json_object_get(n, "type"))) fail_msg("%s: no type", path);
    if (json_object_get(n, "$ref") || json_object_get(n, "allOf") || json_object_get(n, "oneOf"))
        fail_msg("%s: $ref, allOf or oneOf", path);
    if (json_object_get(n, "anyOf")) {
        json_t *want = J("[{'type':'integer'},{'type':'string'}]");
        if (!ios) fail_msg("%s: anyOf without x-kubernetes-int-or-string", path);
        assert_json_eq(json_object_get(n, "anyOf"), want);
        json_decref(want);
    }
    const json_t *props = json_object_get(n, "properties"), *v;
    const char *key;
    json_object_foreach((json_t *)props, key, v)
    {
        snprintf(sub, sizeof sub, "%s.%s", path, key);
        check_structural(v, sub);
    }
    if ((v = json_object_get(n, "items"))) {
        snprintf(sub, sizeof sub, "%s[]", path);
        check_structural(v, sub);
    }
    if ((v = json_object_get(n, "additionalProperties"))) {
        snprintf(sub, sizeof sub, "%s{}", path);
        check_structural(v, sub);
    }
    /* Only the open objects (none in these kinds but metadata, which the
     * API server owns) preserve unknown fields. */
    if (json_object_get(n, "x-kubernetes-preserve-unknown-fields"))
        fail_msg("%s: preserves unknown fields", path);
}

static void test_structural(void **state)
{
    (void)state;
    json_t *list = all_crds();
    size_t i;
    const json_t *c;
    json_array_foreach(json_object_get(list, "items"), i, c)
    {
        const json_t *root = root_schema(c);
        check_structural(root, "");
        json_t *meta = J("{'type':'object'}");
        assert_json_eq(json_object_get(json_object_get(root, "properties"), "metadata"), meta);
        json_decref(meta);
        /* allot's own CRD validation: upstream's rules, structural included. */
        json_t *copy = json_deep_copy(c), *causes = json_array();
        crd_defaults(copy);
        crd_validate(copy, NULL, causes);
        if (json_array_size(causes)) {
            char *t = json_dumps(causes, JSON_COMPACT);
            fail_msg("%s", t);
        }
        json_decref(causes);
        json_decref(copy);
    }
    json_decref(list);
}

static const json_t *prop(const json_t *schema, const char *dotted)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", dotted);
    const json_t *n = schema;
    for (char *save = NULL, *t = strtok_r(buf, ".", &save); t; t = strtok_r(NULL, ".", &save))
        n = json_object_get(json_object_get(n, "properties"), t);
    return n;
}

static bool required(const json_t *schema, const char *field)
{
    size_t i;
    const json_t *r;
    json_array_foreach(json_object_get(schema, "required"), i, r)
    {
        if (!strcmp(json_string_value(r), field)) return true;
    }
    return false;
}

static void test_schema_from_typed_tables(void **state)
{
    (void)state;
    json_t *list = all_crds();
    const json_t *pool = root_schema(crd_named(list, "resourcepools"));
    const json_t *cq = root_schema(crd_named(list, "customquotas"));
    const json_t *gcq = root_schema(crd_named(list, "globalcustomquotas"));
    /* Quantities: int-or-string with resource.Quantity's syntax. */
    const json_t *hard = json_object_get(prop(pool, "spec.quota.hard"), "additionalProperties");
    assert_true(json_is_true(json_object_get(hard, "x-kubernetes-int-or-string")));
    assert_non_null(json_object_get(hard, "pattern"));
    assert_true(
        json_is_true(json_object_get(prop(cq, "spec.limit"), "x-kubernetes-int-or-string")));
    /* Defaults are what allot's defaulting writes into an empty spec, and a
     * defaulted field is no longer required; others stay required. */
    json_t *want = J("{'defaultsZero':false,'orderedQueue':false,'deleteBoundResources':false}");
    assert_json_eq(json_object_get(prop(pool, "spec.config"), "default"), want);
    json_decref(want);
    want = J("{'emitMetricPerClaimUsage':false}");
    assert_json_eq(json_object_get(prop(cq, "spec.options"), "default"), want);
    assert_json_eq(json_object_get(prop(gcq, "spec.options"), "default"), want);
    json_decref(want);
    assert_false(required(prop(cq, "spec"), "options"));
    assert_true(required(prop(cq, "spec"), "limit"));
    assert_true(required(prop(cq, "spec"), "sources"));
    assert_true(required(prop(pool, "spec"), "quota"));
    assert_null(json_object_get(prop(pool, "spec.quota"), "default"));
    /* Enums, and the global kind's inlined spec and its own fields. */
    json_t *ops = J("['add','sub','count']");
    const json_t *source = json_object_get(prop(cq, "spec.sources"), "items");
    assert_json_eq(json_object_get(prop(source, "op"), "enum"), ops);
    json_decref(ops);
    assert_non_null(prop(gcq, "spec.namespaceSelectors"));
    assert_non_null(prop(gcq, "spec.sources"));
    assert_non_null(prop(gcq, "status.namespaces"));
    /* A map of claims per namespace: arrays of objects. */
    const json_t *claims = json_object_get(prop(pool, "status.claims"), "additionalProperties");
    assert_string_equal(json_string_value(json_object_get(claims, "type")), "array");
    json_decref(list);
}

/* The conversion refuses what it has no structural form for. */
static void test_structural_refuses(void **state)
{
    (void)state;
    char err[256];
    json_t *schemas =
        J("{'A':{'type':'object','properties':{'x':{'$ref':'#/components/schemas/B'}}}}");
    json_t *n = J("{'$ref':'#/components/schemas/A'}");
    assert_null(crd_gen_structural(n, schemas, err, sizeof err));
    assert_non_null(strstr(err, "B"));
    json_decref(n);
    n = J("{'type':'object','not':{}}");
    assert_null(crd_gen_structural(n, schemas, err, sizeof err));
    assert_non_null(strstr(err, "not"));
    json_decref(n);
    n = J("{'description':'no type'}");
    assert_null(crd_gen_structural(n, schemas, err, sizeof err));
    json_decref(n);
    /* An open object keeps unknown fields; a scalar union is an int-or-string. */
    n = J("{'type':'object','properties':{'raw':{'type':'object'},"
          "'q':{'oneOf':[{'type':'string'},{'type':'number'}],'description':'d'}}}");
    json_t *got = crd_gen_structural(n, schemas, err, sizeof err);
    json_t *want =
        J("{'type':'object','properties':{'raw':{'type':'object',"
          "'x-kubernetes-preserve-unknown-fields':true},'q':{'anyOf':[{'type':'integer'},"
          "{'type':'string'}],'x-kubernetes-int-or-string':true,'description':'d'}}}");
    assert_json_eq(got, want);
    json_decref(want);
    json_decref(got);
    json_decref(n);
    json_decref(schemas);
}

/* ---- printer columns ---- */

/* A copy of kind k's row whose columns are the CRD's additionalPrinterColumns,
 * compiled as a CRD's are: what table.c prints for a CRD-defined kind. */
typedef struct crd_row {
    api_kind k;
    api_column cols[16];
    char texts[16][256];
} crd_row;

static void crd_row_init(crd_row *r, const api_kind *k, const json_t *crd)
{
    const json_t *cols = json_object_get(version0(crd), "additionalPrinterColumns");
    r->k = *k;
    r->k.ncolumns = json_array_size(cols);
    r->k.columns = r->cols;
    assert_true(r->k.ncolumns <= 16);
    for (size_t i = 0; i < r->k.ncolumns; i++) {
        const json_t *c = json_array_get(cols, i);
        char err[256];
        snprintf(r->texts[i], sizeof r->texts[i], "{%s}",
                 json_string_value(json_object_get(c, "jsonPath")));
        jp_limits lim = jp_default_limits();
        r->cols[i] = (api_column){
            json_string_value(json_object_get(c, "name")),
            json_string_value(json_object_get(c, "type")),
            "",
            json_string_value(json_object_get(c, "description")),
            (int)json_integer_value(json_object_get(c, "priority")),
            jp_compile(r->texts[i], &lim, err, sizeof err),
        };
        if (!r->cols[i].path) fail_msg("%s: %s", r->texts[i], err);
    }
}

static void crd_row_free(crd_row *r)
{
    for (size_t i = 0; i < r->k.ncolumns; i++)
        jp_free((jp_expr *)r->cols[i].path);
}

/* Same column names and cells, for `obj`, from the standalone printer and
 * from the CRD's columns; every cell found (none null). */
static void same_table(const char *kind, const json_t *crd, const char *obj_json)
{
    const api_kind *k = api_kind_by_kind("capsule.clastix.io/v1beta2", kind);
    assert_non_null(k);
    crd_row r;
    crd_row_init(&r, k, crd);
    json_t *items = json_pack("[o]", J(obj_json));
    const int64_t now = 1776413597; /* 2026-04-17T08:13:17Z + 3600 s */
    json_t *std = table_build(k, items, "None", now, NULL);
    json_t *dat = table_build(&r.k, items, "None", now, NULL);
    const json_t *sc = json_object_get(std, "columnDefinitions"),
                 *dc = json_object_get(dat, "columnDefinitions");
    assert_int_equal(json_array_size(sc), json_array_size(dc));
    for (size_t i = 0; i < json_array_size(sc); i++) {
        const json_t *a = json_array_get(sc, i), *b = json_array_get(dc, i);
        assert_string_equal(json_string_value(json_object_get(a, "name")),
                            json_string_value(json_object_get(b, "name")));
        assert_int_equal(json_integer_value(json_object_get(a, "priority")),
                         json_integer_value(json_object_get(b, "priority")));
    }
    const json_t *scells =
        json_object_get(json_array_get(json_object_get(std, "rows"), 0), "cells");
    const json_t *dcells =
        json_object_get(json_array_get(json_object_get(dat, "rows"), 0), "cells");
    assert_json_eq(dcells, scells);
    size_t i;
    const json_t *cell;
    json_array_foreach(dcells, i, cell)
    {
        if (json_is_null(cell)) fail_msg("%s: column %zu found nothing", kind, i);
    }
    json_decref(std);
    json_decref(dat);
    json_decref(items);
    crd_row_free(&r);
}

#define READY_TRUE                                                                                 \
    "{'type':'Ready','status':'True','reason':'Succeeded','message':'reconciled',"                 \
    "'lastTransitionTime':'2026-04-17T08:13:17Z'}"

static void test_columns_as_standalone(void **state)
{
    (void)state;
    json_t *list = all_crds();
    same_table("ResourcePool", crd_named(list, "resourcepools"),
               "{'apiVersion':'capsule.clastix.io/v1beta2','kind':'ResourcePool',"
               "'metadata':{'name':'solar','creationTimestamp':'2026-04-17T08:13:17Z'},"
               "'spec':{'quota':{'hard':{'limits.cpu':'2','limits.memory':'2Gi'}},"
               "'selectors':[{'matchLabels':{'capsule.clastix.io/tenant':'solar'}}]},"
               "'status':{'claimCount':1,'namespaceCount':2,'namespaces':['solar-prod',"
               "'solar-test'],'conditions':[" READY_TRUE "]}}");
    same_table("ResourcePoolClaim", crd_named(list, "resourcepoolclaims"),
               "{'apiVersion':'capsule.clastix.io/v1beta2','kind':'ResourcePoolClaim',"
               "'metadata':{'name':'get-me-cpu','namespace':'solar-test',"
               "'creationTimestamp':'2026-04-17T08:13:17Z'},"
               "'spec':{'pool':'sample','claim':{'requests.cpu':'2','requests.memory':'2Gi'}},"
               "'status':{'pool':{'name':'sample','uid':'u'},'condition':{'type':'Bound',"
               "'status':'True','reason':'Succeeded','message':'Claimed resources',"
               "'lastTransitionTime':'2026-04-17T08:13:17Z'},'conditions':[{'type':'Bound',"
               "'status':'True','reason':'InUse','message':'in use',"
               "'lastTransitionTime':'2026-04-17T08:13:17Z'}]}}");
    same_table("CustomQuota", crd_named(list, "customquotas"),
               "{'apiVersion':'capsule.clastix.io/v1beta2','kind':'CustomQuota',"
               "'metadata':{'name':'pod-count-limit','namespace':'solar-test',"
               "'creationTimestamp':'2026-04-17T08:13:17Z'},"
               "'spec':{'limit':'3','sources':[{'group':'','kind':'Pod','op':'count',"
               "'version':'v1'}]},'status':{'usage':{'used':'1','available':'2'},"
               "'conditions':[" READY_TRUE "]}}");
    /* Seed 003's `kubectl get globalcustomquota ... -o yaml`. */
    same_table("GlobalCustomQuota", crd_named(list, "globalcustomquotas"),
               "{'apiVersion':'capsule.clastix.io/v1beta2','kind':'GlobalCustomQuota',"
               "'metadata':{'name':'object-bucket-claim-storage',"
               "'creationTimestamp':'2026-04-17T08:13:17Z'},"
               "'spec':{'limit':'500Gi','namespaceSelectors':[{'matchLabels':"
               "{'capsule.clastix.io/tenant':'solar'}}],'sources':[{'apiVersion':"
               "'objectbucket.io/v1alpha1','kind':'ObjectBucketClaim','op':'add',"
               "'path':'.spec.additionalConfig.maxSize'}]},"
               "'status':{'conditions':[" READY_TRUE "],'namespaces':['solar-prod'],"
               "'targets':[{'version':'v1alpha1','kind':'ObjectBucketClaim','group':"
               "'objectbucket.io','op':'add','path':'.spec.additionalConfig.maxSize'}],"
               "'usage':{'available':'500Gi','used':'0'}}}");
    json_decref(list);
}

/* ---- the YAML stream ---- */

/* The documents of a stream, split at its "---" lines, each parsed. */
static json_t *read_stream(const char *text)
{
    json_t *docs = json_array();
    const char *p = text;
    while (p && *p) {
        if (strncmp(p, "---", 3)) fail_msg("document does not start with ---: %.40s", p);
        const char *next = strstr(p + 3, "\n---");
        size_t n = next ? (size_t)(next + 1 - p) : strlen(p);
        char err[256];
        json_t *d = yaml_to_json(p, n, err, sizeof err);
        if (!d) fail_msg("%s", err);
        json_array_append_new(docs, d);
        p = next ? next + 1 : NULL;
    }
    return docs;
}

static void test_yaml_round_trip(void **state)
{
    (void)state;
    json_t *list = all_crds();
    size_t len;
    char *text = yaml_emit_stream(json_object_get(list, "items"), &len);
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    json_t *back = read_stream(text);
    assert_json_eq(back, json_object_get(list, "items"));
    json_decref(back);
    free(text);
    json_decref(list);

    /* Strings that would read back as something else stay strings. */
    json_t *docs = J("[{'a':'true','b':'','c':'1.5','d':'null','e':'a: b','f':'- x','g':'#h',"
                     "'h':'two\\nlines\\n','i':'~','j':'0x1F','k':'yes','l':' lead',"
                     "'m':[1,-2,true,false,null,{}],'n':[],'o':'\\u00e9t\\u00e9','p':2.5}]");
    text = yaml_emit_stream(docs, NULL);
    assert_non_null(text);
    back = read_stream(text);
    assert_json_eq(back, docs);
    json_decref(back);
    free(text);
    json_decref(docs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_scope),          cmocka_unit_test(test_structural),
        cmocka_unit_test(test_schema_from_typed_tables), cmocka_unit_test(test_structural_refuses),
        cmocka_unit_test(test_columns_as_standalone),    cmocka_unit_test(test_yaml_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
