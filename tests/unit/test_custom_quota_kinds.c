/* test_custom_quota_kinds.c - Capsule's CustomQuota and GlobalCustomQuota as
 * kinds (api/custom_quota_kinds.h): the rows of the kind table, defaulting
 * (options, op, a source's group/version/apiVersion), every validation
 * message, seed 003's examples accepted verbatim (YAML through the typed
 * decoder, the defaults and validation), the table columns and cells,
 * discovery and OpenAPI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/custom_quota_kinds.h"
#include "api/discovery.h"
#include "api/kinds.h"
#include "api/openapi.h"
#include "api/protobuf.h"
#include "api/schema.h"
#include "api/status.h"
#include "api/table.h"
#include "api/typecheck.h"
#include "api/yaml.h"
#include "testutil.h"

#include <stdio.h>

#define NOW 1700000000
#define T_5M "2023-11-14T22:08:20Z"
#define AV "capsule.clastix.io/v1beta2"
#define PKG "io.clastix.capsule.v1beta2."

static const api_kind *cqs(void)
{
    const api_kind *k = api_kind_find(CQ_GROUP, CQ_VERSION, "customquotas");
    assert_non_null(k);
    return k;
}

static const api_kind *gcqs(void)
{
    const api_kind *k = api_kind_find(CQ_GROUP, CQ_VERSION, "globalcustomquotas");
    assert_non_null(k);
    return k;
}

/* ---- the kind table ---- */

static void test_rows(void **state)
{
    (void)state;
    const api_kind *c = cqs(), *g = gcqs();
    assert_string_equal(c->kind, "CustomQuota");
    assert_string_equal(c->singular, "customquota");
    assert_string_equal(c->short_names, "cq");
    assert_null(c->categories);
    assert_true(c->namespaced);
    assert_true(c->subresources & API_SUB_STATUS);
    assert_string_equal(g->kind, "GlobalCustomQuota");
    assert_string_equal(g->singular, "globalcustomquota");
    assert_string_equal(g->short_names, "gcq");
    assert_false(g->namespaced);
    assert_true(g->subresources & API_SUB_STATUS);
    assert_ptr_equal(api_kind_by_kind(AV, "CustomQuota"), c);
    assert_ptr_equal(api_kind_by_kind(AV, "GlobalCustomQuota"), g);
    assert_null(api_kind_by_kind(AV, "ClusterCustomQuota")); /* the old docs' name */
    assert_ptr_equal(api_kind_for_key("customquotas.capsule.clastix.io/ns/a"), c);
    assert_ptr_equal(api_kind_for_key("globalcustomquotas.capsule.clastix.io//a"), g);
    assert_string_equal(api_kind_schema(c)->pkg, "io.clastix.capsule.v1beta2");
    assert_string_equal(api_kind_schema(g)->name, "GlobalCustomQuota");
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

/* A spec with one source `src` (JSON members), before and after. */
static void expect_source(const char *src, const char *want)
{
    char in[1024], out[1024];
    snprintf(in, sizeof in, "{'spec':{'limit':'1','sources':[{%s}]}}", src);
    snprintf(out, sizeof out,
             "{'spec':{'limit':'1','options':{'emitMetricPerClaimUsage':false},'sources':[{%s}]}}",
             want);
    expect_defaults(cqs(), in, out);
    expect_defaults(gcqs(), in, out);
}

static void test_defaults_options(void **state)
{
    (void)state;
    /* the CRD's options default, and the flag's */
    expect_defaults(cqs(), "{'spec':{'limit':'3'}}",
                    "{'spec':{'limit':'3','options':{'emitMetricPerClaimUsage':false}}}");
    expect_defaults(cqs(), "{'spec':{'options':{}}}",
                    "{'spec':{'options':{'emitMetricPerClaimUsage':false}}}");
    expect_defaults(gcqs(), "{'spec':{'options':{'emitMetricPerClaimUsage':true}}}",
                    "{'spec':{'options':{'emitMetricPerClaimUsage':true}}}");
    /* no spec: nothing to default (validation says spec is required) */
    expect_defaults(cqs(), "{'metadata':{'name':'a'}}", "{'metadata':{'name':'a'}}");
    expect_defaults(gcqs(), "{'spec':[]}", "{'spec':[]}");
}

static void test_defaults_sources(void **state)
{
    (void)state;
    /* op add when absent; a given op kept */
    expect_source(
        "'apiVersion':'v1','kind':'Pod','path':'.a'",
        "'apiVersion':'v1','group':'','version':'v1','kind':'Pod','path':'.a','op':'add'");
    expect_source("'apiVersion':'v1','kind':'Pod','op':'count'",
                  "'apiVersion':'v1','group':'','version':'v1','kind':'Pod','op':'count'");
    /* seed 003's spelling: group and version give apiVersion */
    expect_source("'group':'','kind':'Pod','op':'count','version':'v1'",
                  "'apiVersion':'v1','group':'','version':'v1','kind':'Pod','op':'count'");
    expect_source("'kind':'Pod','op':'count','version':'v1'",
                  "'apiVersion':'v1','group':'','version':'v1','kind':'Pod','op':'count'");
    expect_source("'group':'apps','version':'v1','kind':'Deployment','op':'count'",
                  "'apiVersion':'apps/v1','group':'apps','version':'v1','kind':'Deployment',"
                  "'op':'count'");
    expect_source("'apiVersion':'','group':'batch','version':'v1','kind':'CronJob','op':'count'",
                  "'apiVersion':'batch/v1','group':'batch','version':'v1','kind':'CronJob',"
                  "'op':'count'");
    /* Capsule's spelling: apiVersion gives group and version */
    expect_source("'apiVersion':'objectbucket.io/v1alpha1','kind':'ObjectBucketClaim','op':'add',"
                  "'path':'.spec.additionalConfig.maxSize'",
                  "'apiVersion':'objectbucket.io/v1alpha1','group':'objectbucket.io','version':"
                  "'v1alpha1','kind':'ObjectBucketClaim','op':'add','path':'.spec."
                  "additionalConfig.maxSize'");
    expect_source("'apiVersion':'apps/v1','group':'apps','kind':'Deployment','op':'count'",
                  "'apiVersion':'apps/v1','group':'apps','version':'v1','kind':'Deployment',"
                  "'op':'count'");
    expect_source("'apiVersion':'apps/v1','group':'','version':'','kind':'D','op':'count'",
                  "'apiVersion':'apps/v1','group':'apps','version':'v1','kind':'D','op':'count'");
    /* none of the three: Capsule's empty apiVersion, core v1, written out */
    expect_source("'kind':'Pod','op':'count'",
                  "'apiVersion':'v1','group':'','version':'v1','kind':'Pod','op':'count'");
    /* both forms given: nothing filled, whether or not they agree */
    expect_source("'apiVersion':'apps/v1','group':'','version':'v1','kind':'D','op':'count'",
                  "'apiVersion':'apps/v1','group':'','version':'v1','kind':'D','op':'count'");
    expect_source("'apiVersion':'apps/v1','group':'batch','kind':'D','op':'count'",
                  "'apiVersion':'apps/v1','group':'batch','kind':'D','op':'count'");
    /* a group without version or apiVersion, a malformed apiVersion: left to validation */
    expect_source("'group':'apps','kind':'D','op':'count'",
                  "'group':'apps','kind':'D','op':'count'");
    expect_source("'apiVersion':'a/b/c','kind':'D','op':'count'",
                  "'apiVersion':'a/b/c','kind':'D','op':'count'");
    /* a source of the wrong type is left alone */
    expect_defaults(cqs(), "{'spec':{'options':{},'sources':[1]}}",
                    "{'spec':{'options':{'emitMetricPerClaimUsage':false},'sources':[1]}}");
}

/* ---- validation ---- */

/* Validate `obj` as kind k; the causes, one "field: message" per line. */
static void expect_causes(const api_kind *k, const char *obj, const char *want)
{
    json_t *o = J(obj), *causes = json_array();
    k->validate(o, NULL, causes);
    char got[16384] = "";
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

#define OPTS "'options':{'emitMetricPerClaimUsage':false}"
#define POD "'apiVersion':'v1','group':'','version':'v1','kind':'Pod'"
#define COUNT "{" POD ",'op':'count'}"

/* A CustomQuota whose one source is `src`; expect `want` from both kinds. */
static void expect_source_causes(const char *src, const char *want)
{
    char obj[16384];
    snprintf(obj, sizeof obj, "{'spec':{'limit':'3'," OPTS ",'sources':[%s]}}", src);
    expect_causes(cqs(), obj, want);
    expect_causes(gcqs(), obj, want);
}

/* One cause at `field` whose message ends with `tail`, from a one-source quota. */
static void expect_one_cause(const char *src, const char *field, const char *tail)
{
    char obj[4096];
    snprintf(obj, sizeof obj, "{'spec':{'limit':'3'," OPTS ",'sources':[%s]}}", src);
    json_t *o = J(obj), *causes = json_array();
    cqs()->validate(o, NULL, causes);
    assert_int_equal(json_array_size(causes), 1);
    json_t *c = json_array_get(causes, 0);
    const char *msg = json_string_value(json_object_get(c, "message"));
    assert_string_equal(json_string_value(json_object_get(c, "field")), field);
    assert_true(strlen(msg) >= strlen(tail));
    assert_string_equal(msg + strlen(msg) - strlen(tail), tail);
    json_decref(causes);
    json_decref(o);
}

static void test_valid(void **state)
{
    (void)state;
    expect_causes(cqs(), "{'spec':{'limit':'3'," OPTS ",'sources':[" COUNT "]}}", "");
    expect_causes(gcqs(),
                  "{'spec':{'limit':'500Gi'," OPTS ",'namespaceSelectors':[{'matchLabels':{"
                  "'capsule.clastix.io/tenant':'solar'}},{}],'scopeSelectors':[{'matchExpressions'"
                  ":[{'key':'team','operator':'In','values':['a']}]}],'sources':[{" POD ",'op':"
                  "'add','path':'.spec.containers[*].resources.limits.cpu','selectors':[{"
                  "'matchLabels':{'a':'b'},'fieldSelectors':['.status.phase'],'celExpressions':["
                  "'object.metadata.name.size() > 0']}]},{" POD ",'op':'sub','cel':'object.spec.x'"
                  "}]}}",
                  "");
    /* a validation run without defaults: op absent reads as add */
    expect_causes(cqs(), "{'spec':{'limit':'3'," OPTS ",'sources':[{" POD ",'path':'.a'}]}}", "");
}

static void test_spec_messages(void **state)
{
    (void)state;
    expect_causes(cqs(), "{'metadata':{'name':'a'}}", "spec: Required value");
    expect_causes(gcqs(), "{}", "spec: Required value");
    expect_causes(cqs(), "{'spec':{}}",
                  "spec.limit: Required value\nspec.sources: Required value\n"
                  "spec.options: Required value");
    expect_causes(cqs(), "{'spec':{'limit':'1'," OPTS ",'sources':[]}}",
                  "spec.sources: Required value: at least one source is required");
    /* Capsule's webhook: the limit must be more than 0 (canonical quantity quoted) */
    expect_causes(cqs(), "{'spec':{'limit':'0'," OPTS ",'sources':[" COUNT "]}}",
                  "spec.limit: Invalid value: \"0\": invalid spec.limit: quantity must not be "
                  "negative or 0: \"0\"");
    expect_causes(gcqs(), "{'spec':{'limit':'-1'," OPTS ",'sources':[" COUNT "]}}",
                  "spec.limit: Invalid value: \"-1\": invalid spec.limit: quantity must not be "
                  "negative or 0: \"-1\"");
    expect_causes(cqs(), "{'spec':{'limit':'-500m'," OPTS ",'sources':[" COUNT "]}}",
                  "spec.limit: Invalid value: \"-500m\": invalid spec.limit: quantity must not be "
                  "negative or 0: \"-500m\"");
    expect_causes(cqs(), "{'spec':{'limit':'1m'," OPTS ",'sources':[" COUNT "]}}", "");
    /* label selectors must parse */
    expect_causes(cqs(),
                  "{'spec':{'limit':'1'," OPTS ",'sources':[" COUNT "],'scopeSelectors':[{"
                  "'matchExpressions':[{'key':'a','operator':'Equals','values':['x']}]}]}}",
                  "spec.scopeSelectors[0].matchExpressions[0].operator: Invalid value: \"Equals\": "
                  "not a valid selector operator");
    expect_causes(gcqs(),
                  "{'spec':{'limit':'1'," OPTS ",'sources':[" COUNT "],'namespaceSelectors':[{},"
                  "{'matchExpressions':[{'key':'b','operator':'Exists','values':['x']}]}]}}",
                  "spec.namespaceSelectors[1].matchExpressions[0].values: Forbidden: may not be "
                  "specified when `operator` is 'Exists' or 'DoesNotExist'");
    /* shapes the typed decoder refuses first, should an object come another way */
    expect_causes(cqs(), "{'spec':{'limit':'x','options':[],'sources':{},'scopeSelectors':[1]}}",
                  "spec.limit: Invalid value: \"x\": quantities must match the regular expression "
                  "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'\n"
                  "spec.sources: Invalid value: {}: must be of type array\n"
                  "spec.options: Invalid value: []: must be of type object\n"
                  "spec.scopeSelectors[0]: Invalid value: 1: must be of type object");
    expect_causes(cqs(),
                  "{'spec':{'limit':'1','options':{'emitMetricPerClaimUsage':'yes'},'sources':["
                  "2]}}",
                  "spec.sources[0]: Invalid value: 2: must be of type object\n"
                  "spec.options.emitMetricPerClaimUsage: Invalid value: \"yes\": must be of type "
                  "boolean");
}

#define RULE                                                                                       \
    "Invalid value: \"object\": path and cel must be empty when op is 'count'; otherwise exactly " \
    "one of path or cel must be set and non-empty"

static void test_source_messages(void **state)
{
    (void)state;
    /* kind: required, at least one character */
    expect_source_causes("{'apiVersion':'v1','op':'count'}",
                         "spec.sources[0].kind: Required value");
    expect_source_causes("{'apiVersion':'v1','kind':'','op':'count'}",
                         "spec.sources[0].kind: Invalid value: \"\": spec.sources[0].kind in body "
                         "should be at least 1 chars long");
    /* the op enum */
    expect_source_causes("{" POD ",'op':'mul','path':'.a'}",
                         "spec.sources[0].op: Unsupported value: \"mul\": supported values: "
                         "\"add\", \"sub\", \"count\"");
    expect_source_causes("{" POD ",'op':'','path':'.a'}",
                         "spec.sources[0].op: Unsupported value: \"\": supported values: \"add\", "
                         "\"sub\", \"count\"");
    /* the CRD's rule on a source */
    expect_source_causes("{" POD ",'op':'count','path':'.a'}", "spec.sources[0]: " RULE);
    expect_source_causes("{" POD ",'op':'count','cel':'1'}", "spec.sources[0]: " RULE);
    expect_source_causes("{" POD ",'op':'count','path':'','cel':''}", "");
    expect_source_causes("{" POD ",'op':'add'}", "spec.sources[0]: " RULE);
    expect_source_causes("{" POD ",'op':'sub','path':'','cel':''}", "spec.sources[0]: " RULE);
    expect_source_causes("{" POD ",'op':'add','path':'.a','cel':'x'}", "spec.sources[0]: " RULE);
    expect_source_causes("{" POD ",'op':'sub','cel':'x'}", "");
    expect_source_causes(COUNT ",{" POD ",'op':'add'}", "spec.sources[1]: " RULE);
}

/* A string of n copies of c, for the length limits. */
static char *repeat(char c, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);
    char *s = malloc(p + n + 1);
    assert_non_null(s);
    memcpy(s, prefix, p);
    memset(s + p, c, n);
    s[p + n] = '\0';
    return s;
}

static void test_path_messages(void **state)
{
    (void)state;
    /* Capsule's source path rules, on the trimmed path */
    expect_source_causes("{" POD ",'op':'add','path':'  '}",
                         "spec.sources[0].path: Invalid value: \"  \": sourcePath must not be "
                         "empty");
    expect_source_causes("{" POD ",'op':'add','path':'spec.cpu'}",
                         "spec.sources[0].path: Invalid value: \"spec.cpu\": sourcePath must start "
                         "with '.'");
    expect_source_causes("{" POD ",'op':'add','path':' .spec.cpu '}", "");
    /* (status.c prints the value without Go's %q escapes: only the text is held here) */
    expect_one_cause("{" POD ",'op':'add','path':'.spec\\t.cpu'}", "spec.sources[0].path",
                     "sourcePath must not contain control whitespace");
    expect_one_cause("{" POD ",'op':'add','path':'.spec\\r\\n.cpu'}", "spec.sources[0].path",
                     "sourcePath must not contain control whitespace");
    expect_source_causes("{" POD ",'op':'add','path':'.a}{.b'}",
                         "spec.sources[0].path: Invalid value: \".a}{.b\": sourcePath must not "
                         "contain curly braces");
    /* 1024 bytes is the most */
    char *p = repeat('a', CQ_SOURCE_PATH_MAX - 1, "."), obj[2048], want[2200];
    snprintf(obj, sizeof obj, "{" POD ",'op':'add','path':'%s'}", p);
    expect_source_causes(obj, "");
    free(p);
    p = repeat('a', CQ_SOURCE_PATH_MAX, ".");
    snprintf(obj, sizeof obj, "{" POD ",'op':'add','path':'%s'}", p);
    snprintf(want, sizeof want,
             "spec.sources[0].path: Invalid value: \"%s\": sourcePath exceeds max length of 1024",
             p);
    expect_source_causes(obj, want);
    free(p);
}

static void test_cel_and_selector_messages(void **state)
{
    (void)state;
    char obj[16384];
    /* cel: 4096 characters, counted as characters */
    char *c = repeat('1', CQ_CEL_MAX, "");
    snprintf(obj, sizeof obj, "{" POD ",'op':'add','cel':'%s'}", c);
    expect_source_causes(obj, "");
    free(c);
    c = repeat('1', CQ_CEL_MAX + 1, "");
    snprintf(obj, sizeof obj, "{" POD ",'op':'add','cel':'%s'}", c);
    expect_source_causes(obj, "spec.sources[0].cel: Too long: may not be more than 4096 bytes");
    free(c);
    c = repeat('1', CQ_CEL_MAX - 1, "\xc3\xa9"); /* 4096 characters, 4097 bytes */
    assert_int_equal(strlen(c), CQ_CEL_MAX + 1);
    snprintf(obj, sizeof obj, "{" POD ",'op':'add','cel':'%s'}", c);
    expect_source_causes(obj, "");
    free(c);
    /* a selector's label part must parse */
    expect_source_causes("{" POD ",'op':'count','selectors':[{'matchLabels':{'bad key!':'x'}}]}",
                         "spec.sources[0].selectors[0].matchLabels: Invalid value: \"bad key!\": "
                         "name part must consist of alphanumeric characters, '-', '_' or '.', and "
                         "must start and end with an alphanumeric character (e.g. 'MyName' or "
                         "'my.name' or '123-abc', regex used for validation is "
                         "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
    /* fieldSelectors and celExpressions: at most 64, each 1-4096 characters */
    for (const char *const *f = (const char *const[]){"fieldSelectors", "celExpressions", NULL}; *f;
         f++) {
        size_t off =
            (size_t)snprintf(obj, sizeof obj, "{" POD ",'op':'count','selectors':[{},{'%s':[", *f);
        for (int i = 0; i < CQ_SELECTOR_ITEMS + 1; i++)
            off += (size_t)snprintf(obj + off, sizeof obj - off, "%s'x'", i ? "," : "");
        snprintf(obj + off, sizeof obj - off, "]}]}");
        char want[1024];
        snprintf(want, sizeof want,
                 "spec.sources[0].selectors[1].%s: Too many: 65: must have at most 64 items", *f);
        expect_source_causes(obj, want);
        c = repeat('x', CQ_CEL_MAX + 1, "");
        snprintf(obj, sizeof obj, "{" POD ",'op':'count','selectors':[{'%s':['','ok','%s']}]}", *f,
                 c);
        free(c);
        snprintf(want, sizeof want,
                 "spec.sources[0].selectors[0].%s[0]: Invalid value: \"\": "
                 "spec.sources[0].selectors[0].%s[0] in body should be at least 1 chars long\n"
                 "spec.sources[0].selectors[0].%s[2]: Too long: may not be more than 4096 bytes",
                 *f, *f, *f);
        expect_source_causes(obj, want);
    }
    /* the reason of a Too many cause is upstream's */
    json_t *exprs = json_array();
    for (int i = 0; i < CQ_SELECTOR_ITEMS + 2; i++)
        json_array_append_new(exprs, json_string("true"));
    json_t *o = J("{'spec':{'limit':'1'," OPTS ",'sources':[{" POD ",'op':'count','selectors':[{}]"
                  "}]}}");
    json_t *sources = json_object_get(json_object_get(o, "spec"), "sources");
    json_t *sel = json_array_get(json_object_get(json_array_get(sources, 0), "selectors"), 0);
    json_object_set_new(sel, "celExpressions", exprs);
    json_t *causes = json_array();
    cqs()->validate(o, NULL, causes);
    assert_int_equal(json_array_size(causes), 1);
    expect_cause(causes, 0, "FieldValueTooMany", "spec.sources[0].selectors[0].celExpressions",
                 "Too many: 66: must have at most 64 items");
    json_decref(causes);
    json_decref(o);
}

static void test_gvk_messages(void **state)
{
    (void)state;
    expect_source_causes("{'apiVersion':'a/b/c','kind':'X','op':'count'}",
                         "spec.sources[0].apiVersion: Invalid value: \"a/b/c\": must be <version> "
                         "or <group>/<version>");
    expect_source_causes("{'apiVersion':'/v1','kind':'X','op':'count'}",
                         "spec.sources[0].apiVersion: Invalid value: \"/v1\": must be <version> "
                         "or <group>/<version>");
    expect_source_causes("{'apiVersion':'apps/','kind':'X','op':'count'}",
                         "spec.sources[0].apiVersion: Invalid value: \"apps/\": must be <version> "
                         "or <group>/<version>");
    /* both forms, disagreeing: a 422 naming both */
    expect_source_causes(
        "{'apiVersion':'apps/v1','group':'','version':'v1','kind':'X','op':'count'}",
        "spec.sources[0].apiVersion: Invalid value: \"apps/v1\": does not match "
        "group \"\" and version \"v1\"; set apiVersion, or group and version, or "
        "all three alike");
    expect_source_causes("{'apiVersion':'v1','version':'v2','kind':'X','op':'count'}",
                         "spec.sources[0].apiVersion: Invalid value: \"v1\": does not match group "
                         "\"\" and version \"v2\"; set apiVersion, or group and version, or all "
                         "three alike");
    expect_source_causes("{'apiVersion':'apps/v1','group':'batch','kind':'X','op':'count'}",
                         "spec.sources[0].apiVersion: Invalid value: \"apps/v1\": does not match "
                         "group \"batch\"; set apiVersion, or group and version, or all three "
                         "alike");
    /* agreeing, in every spelling */
    expect_source_causes("{'apiVersion':'apps/v1','group':'apps','version':'v1','kind':'X','op':"
                         "'count'}",
                         "");
    expect_source_causes("{'apiVersion':'apps/v1','group':'apps','kind':'X','op':'count'}", "");
    expect_source_causes("{'group':'','version':'v1','kind':'Pod','op':'count'}", "");
    expect_source_causes("{'kind':'Pod','op':'count'}", "");
    /* a group alone names no version */
    expect_source_causes("{'group':'apps','kind':'X','op':'count'}",
                         "spec.sources[0].version: Required value: with group \"apps\", when "
                         "apiVersion is not set");
}

/* ---- seed 003, "Custom Quotas": every full example, verbatim ---- */

static const char *const seed_cqs[] = {
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: CustomQuota\n"
    "metadata:\n"
    "  name: pod-count-limit\n"
    "  namespace: solar-test\n"
    "spec:\n"
    "  limit: 3\n"
    "  sources:\n"
    "  - group: \"\"\n"
    "    kind: Pod\n"
    "    op: count\n"
    "    version: v1\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: CustomQuota\n"
    "metadata:\n"
    "  name: object-bucket-claim-storage\n"
    "  namespace: solar-test\n"
    "spec:\n"
    "  limit: \"500Gi\"\n"
    "  scopeSelectors:\n"
    "    - matchLabels:\n"
    "        objectbucket.io/storage-class: gold\n"
    "  sources:\n"
    "    - apiVersion: objectbucket.io/v1alpha1\n"
    "      kind: ObjectBucketClaim\n"
    "      op: add\n"
    "      path: .spec.additionalConfig.maxSize\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: CustomQuota\n"
    "metadata:\n"
    "  name: pvc-storage-limit\n"
    "  namespace: team-a\n"
    "spec:\n"
    "  limit: \"200Gi\"\n"
    "  scopeSelectors:\n"
    "    - matchLabels:\n"
    "        team: platform\n"
    "  sources:\n"
    "    - apiVersion: v1\n"
    "      kind: PersistentVolumeClaim\n"
    "      op: add\n"
    "      path: .spec.resources.requests.storage\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: CustomQuota\n"
    "metadata:\n"
    "  name: namespace-loadbalancers\n"
    "  namespace: team-a\n"
    "spec:\n"
    "  limit: 2\n"
    "  sources:\n"
    "    - apiVersion: v1\n"
    "      kind: Service\n"
    "      op: count\n"
    "      selectors:\n"
    "        - fieldSelectors:\n"
    "            - '.spec.type[?(@==\"LoadBalancer\")]'\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: CustomQuota\n"
    "metadata:\n"
    "  name: pod-memory-requests\n"
    "  namespace: team-a\n"
    "spec:\n"
    "  limit: 16Gi\n"
    "  sources:\n"
    "    - apiVersion: v1\n"
    "      kind: Pod\n"
    "      op: add\n"
    "      path: .spec.containers[*].resources.requests.memory\n"
    "    - apiVersion: v1\n"
    "      kind: Pod\n"
    "      op: add\n"
    "      path: .spec.initContainers[*].resources.requests.memory\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: CustomQuota\n"
    "metadata:\n"
    "  name: sql-instances\n"
    "  namespace: team-a\n"
    "spec:\n"
    "  limit: 3\n"
    "  sources:\n"
    "    - apiVersion: database.gcp.upbound.io/v1beta1\n"
    "      kind: SQLDatabaseInstance\n"
    "      op: count\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: CustomQuota\n"
    "metadata:\n"
    "  name: suspended-cronjobs\n"
    "  namespace: team-a\n"
    "spec:\n"
    "  limit: 5\n"
    "  sources:\n"
    "    - apiVersion: batch/v1\n"
    "      kind: CronJob\n"
    "      op: count\n"
    "      selectors:\n"
    "        - fieldSelectors:\n"
    "            - '.spec.suspend'\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: CustomQuota\n"
    "metadata:\n"
    "  name: pod-count-limit\n"
    "  namespace: wind-test\n"
    "spec:\n"
    "  limit: 3\n"
    "  options:\n"
    "    emitMetricPerClaimUsage: false\n"
    "  sources:\n"
    "  - apiVersion: \"v1\"\n"
    "    kind: Pod\n"
    "    op: count\n"
    "status:\n"
    "  claims:\n"
    "  - group: \"\"\n"
    "    kind: Pod\n"
    "    name: nginx-deployment-77bc6bd484-4qm4h\n"
    "    namespace: wind-test\n"
    "    uid: c6df70ce-f483-4b02-af65-c8c150d22ed2\n"
    "    usage: \"1\"\n"
    "    version: v1\n"
    "  - group: \"\"\n"
    "    kind: Pod\n"
    "    name: nginx-deployment-77bc6bd484-f8qcv\n"
    "    namespace: wind-test\n"
    "    uid: eeae006b-5ce8-442b-b6c3-f208387545a7\n"
    "    usage: \"1\"\n"
    "    version: v1\n"
    "  conditions:\n"
    "  - lastTransitionTime: \"2026-04-23T09:21:29Z\"\n"
    "    message: reconciled\n"
    "    reason: Succeeded\n"
    "    status: \"True\"\n"
    "    type: Ready\n"
    "  targets:\n"
    "  - group: \"\"\n"
    "    kind: Pod\n"
    "    op: count\n"
    "    scope: namespace\n"
    "    version: v1\n"
    "  usage:\n"
    "    available: \"0\"\n"
    "    used: \"3\"\n",
};

static const char *const seed_gcqs[] = {
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: GlobalCustomQuota\n"
    "metadata:\n"
    "  name: pod-count-limit\n"
    "spec:\n"
    "  limit: 6\n"
    "  namespaceSelectors:\n"
    "  - matchLabels:\n"
    "      capsule.clastix.io/tenant: solar\n"
    "  sources:\n"
    "  - group: \"\"\n"
    "    kind: Pod\n"
    "    op: count\n"
    "    version: v1\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: GlobalCustomQuota\n"
    "metadata:\n"
    "  name: object-bucket-claim-storage\n"
    "spec:\n"
    "  limit: \"500Gi\"\n"
    "  namespaceSelectors:\n"
    "    - matchLabels:\n"
    "        capsule.clastix.io/tenant: solar\n"
    "  sources:\n"
    "    - apiVersion: objectbucket.io/v1alpha1\n"
    "      kind: ObjectBucketClaim\n"
    "      op: add\n"
    "      path: .spec.additionalConfig.maxSize\n"
    "status:\n"
    "  conditions:\n"
    "  - lastTransitionTime: \"2026-04-17T08:13:17Z\"\n"
    "    message: reconciled\n"
    "    reason: Succeeded\n"
    "    status: \"True\"\n"
    "    type: Ready\n"
    "  namespaces:\n"
    "  - solar-prod\n"
    "  targets:\n"
    "    - version: v1alpha1\n"
    "      kind: ObjectBucketClaim\n"
    "      group: objectbucket.io\n"
    "      op: add\n"
    "      path: .spec.additionalConfig.maxSize\n"
    "  usage:\n"
    "    available: \"500Gi\"\n"
    "    used: \"0\"\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: GlobalCustomQuota\n"
    "metadata:\n"
    "  name: object-bucket-claim-storage\n"
    "spec:\n"
    "  limit: \"500Gi\"\n"
    "  namespaceSelectors:\n"
    "    - matchLabels:\n"
    "        capsule.clastix.io/tenant: solar\n"
    "  scopeSelectors:\n"
    "    - matchLabels:\n"
    "        objectbucket.io/storage-class: gold\n"
    "  sources:\n"
    "    - apiVersion: objectbucket.io/v1alpha1\n"
    "      kind: ObjectBucketClaim\n"
    "      op: add\n"
    "      path: .spec.additionalConfig.maxSize\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: GlobalCustomQuota\n"
    "metadata:\n"
    "  name: customer-a-loadbalancers\n"
    "spec:\n"
    "  limit: 3\n"
    "  namespaceSelectors:\n"
    "    - matchLabels:\n"
    "        customer: a\n"
    "  sources:\n"
    "    - apiVersion: v1\n"
    "      kind: Service\n"
    "      op: count\n"
    "      selectors:\n"
    "        - fieldSelectors:\n"
    "            - '.spec.type[?(@==\"LoadBalancer\")]'\n",
    "---\n"
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: GlobalCustomQuota\n"
    "metadata:\n"
    "  name: solar-storage-aggregate\n"
    "spec:\n"
    "  limit: 5Gi\n"
    "  namespaceSelectors:\n"
    "  - matchLabels:\n"
    "      capsule.clastix.io/tenant: solar\n"
    "  sources:\n"
    "    - apiVersion: v1\n"
    "      kind: Pod\n"
    "      op: add\n"
    "      path: \".spec.volumes[*].ephemeral.volumeClaimTemplate.spec.resources.requests."
    "storage\"\n"
    "    - apiVersion: v1\n"
    "      kind: PersistentVolumeClaim\n"
    "      op: add\n"
    "      path: \".spec.resources.requests.storage\"\n"
    "      selectors:\n"
    "        - fieldSelectors:\n"
    "            - '.spec.accessModes[?(@==\"ReadWriteOnce\")]'\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: GlobalCustomQuota\n"
    "metadata:\n"
    "  name: tenant-crossplane-buckets\n"
    "spec:\n"
    "  limit: 5\n"
    "  namespaceSelectors:\n"
    "    - matchLabels:\n"
    "        capsule.clastix.io/tenant: solar\n"
    "  sources:\n"
    "    - apiVersion: s3.aws.upbound.io/v1beta1\n"
    "      kind: Bucket\n"
    "      op: count\n",
    "apiVersion: capsule.clastix.io/v1beta2\n"
    "kind: GlobalCustomQuota\n"
    "metadata:\n"
    "  name: cpu-limits\n"
    "spec:\n"
    "  limit: 5\n"
    "  namespaceSelectors:\n"
    "  - matchLabels:\n"
    "      capsule.clastix.io/tenant: solar\n"
    "  sources:\n"
    "  - apiVersion: v1\n"
    "    kind: Pod\n"
    "    op: add\n"
    "    path: .spec.containers[*].resources.limits.cpu\n"
    "  - apiVersion: v1\n"
    "    kind: Pod\n"
    "    op: add\n"
    "    path: .spec.initContainers[*].resources.limits.cpu\n"
    "status:\n"
    "  claims:\n"
    "  - group: \"\"\n"
    "    kind: Pod\n"
    "    name: nginx-deployment-6ff89574f8-299zf\n"
    "    namespace: solar-test\n"
    "    uid: f7ff7d7c-7128-4f44-ad13-3c44882420f8\n"
    "    usage: 250m\n"
    "    version: v1\n"
    "  conditions:\n"
    "  - lastTransitionTime: \"2026-04-17T08:29:15Z\"\n"
    "    message: reconciled\n"
    "    reason: Succeeded\n"
    "    status: \"True\"\n"
    "    type: Ready\n"
    "  namespaces:\n"
    "  - solar-prod\n"
    "  - solar-test\n"
    "  targets:\n"
    "  - group: \"\"\n"
    "    kind: Pod\n"
    "    op: add\n"
    "    path: .spec.containers[*].resources.limits.cpu\n"
    "    scope: namespace\n"
    "    version: v1\n"
    "  usage:\n"
    "    available: 3500m\n"
    "    used: 1500m\n",
};

/* The path a body takes: YAML, the typed decoding (strict: nothing unknown),
 * the defaults, validation. Returns the object (caller owns). */
static json_t *admit(const api_kind *k, const char *yaml)
{
    char err[256];
    json_t *o = yaml_to_json(yaml, strlen(yaml), err, sizeof err);
    if (!o) fail_msg("yaml: %s", err);
    tc_result r;
    if (tc_decode(api_kind_schema(k), o, &r) != 0) fail_msg("decode: %s", r.error);
    if (json_array_size(r.unknown))
        fail_msg("unknown field %s", json_string_value(json_array_get(r.unknown, 0)));
    tc_result_clear(&r);
    k->defaults(o);
    json_t *causes = json_array();
    k->validate(o, NULL, causes);
    if (json_array_size(causes))
        fail_msg("%s", json_string_value(json_object_get(json_array_get(causes, 0), "message")));
    json_decref(causes);
    return o;
}

static void test_seed_examples(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof seed_cqs / sizeof *seed_cqs; i++)
        json_decref(admit(cqs(), seed_cqs[i]));
    for (size_t i = 0; i < sizeof seed_gcqs / sizeof *seed_gcqs; i++)
        json_decref(admit(gcqs(), seed_gcqs[i]));
    /* what the first ones are stored as: limit canonical, the target in both forms */
    json_t *o = admit(cqs(), seed_cqs[0]);
    json_t *want = J("{'limit':'3','options':{'emitMetricPerClaimUsage':false},'sources':[{"
                     "'apiVersion':'v1','group':'','version':'v1','kind':'Pod','op':'count'}]}");
    assert_json_eq(json_object_get(o, "spec"), want);
    json_decref(want);
    json_decref(o);
    o = admit(gcqs(), seed_gcqs[2]);
    want = J("{'apiVersion':'objectbucket.io/v1alpha1','group':'objectbucket.io','version':"
             "'v1alpha1','kind':'ObjectBucketClaim','op':'add','path':'.spec.additionalConfig."
             "maxSize'}");
    assert_json_eq(json_array_get(json_object_get(json_object_get(o, "spec"), "sources"), 0), want);
    json_decref(want);
    json_decref(o);
}

/* The seed's fragments (a spec alone) are accepted once they are an object:
 * the count and add examples, label and field selectors. */
static void test_seed_fragments(void **state)
{
    (void)state;
    static const char *const specs[] = {
        "spec:\n"
        "  sources:\n"
        "    - apiVersion: v1\n"
        "      kind: Pod\n"
        "      op: count\n"
        "    - apiVersion: v1\n"
        "      kind: PersistentVolumeClaim\n"
        "      op: count\n",
        "spec:\n"
        "  sources:\n"
        "    - apiVersion: v1\n"
        "      kind: PersistentVolumeClaim\n"
        "      op: add\n"
        "      path: .spec.resources.requests.storage\n",
        "spec:\n"
        "  sources:\n"
        "    - apiVersion: v1\n"
        "      kind: PersistentVolumeClaim\n"
        "      op: add\n"
        "      path: .spec.resources.requests.storage\n"
        "      selectors:\n"
        "        - fieldSelectors:\n"
        "          - '.spec.accessModes[?(@==\"ReadWriteOnce\")]'\n"
        "          - '.status.phase'\n",
    };
    char yaml[2048];
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        snprintf(yaml, sizeof yaml,
                 "apiVersion: capsule.clastix.io/v1beta2\nkind: CustomQuota\nmetadata:\n  name: "
                 "f\n%s  limit: 10\n",
                 specs[i]);
        json_decref(admit(cqs(), yaml));
    }
}

/* What the seed shows that is not accepted: its LabelSelectors snippet
 * writes matchLabels as a list (the typed decoder's 400, as a CRD server's
 * schema refuses it), and the old ClusterCustomQuota example has a
 * spec.selectors GlobalCustomQuota does not have. */
static void test_seed_not_accepted(void **state)
{
    (void)state;
    json_t *o = J("{'spec':{'limit':'1','sources':[{'apiVersion':'v1','kind':"
                  "'PersistentVolumeClaim','op':'add','path':'.spec.resources.requests.storage',"
                  "'selectors':[{'matchLabels':[{'key':'team','operator':'In','values':["
                  "'platform','dev']}]}]}]}}");
    tc_result r;
    assert_int_equal(tc_decode(api_kind_schema(cqs()), o, &r), -1);
    assert_non_null(strstr(r.error, "cannot unmarshal array into Go struct field"));
    assert_non_null(strstr(r.error, "matchLabels of type map[string]string"));
    tc_result_clear(&r);
    json_decref(o);
    o = J("{'spec':{'limit':'500Gi','sources':[],'selectors':[{'matchLabels':{'a':'b'}}]}}");
    assert_int_equal(tc_decode(api_kind_schema(gcqs()), o, &r), 0);
    assert_int_equal(json_array_size(r.unknown), 1);
    assert_string_equal(json_string_value(json_array_get(r.unknown, 0)), "spec.selectors");
    tc_result_clear(&r);
    json_decref(o);
    /* a CustomQuota has no namespaceSelectors; a GlobalCustomQuota's status has namespaces */
    o = J("{'spec':{'namespaceSelectors':[]},'status':{'namespaces':['*']}}");
    assert_int_equal(tc_decode(api_kind_schema(cqs()), o, &r), 0);
    json_t *want = J("['spec.namespaceSelectors','status.namespaces']");
    assert_json_eq(r.unknown, want);
    json_decref(want);
    tc_result_clear(&r);
    json_decref(o);
}

/* ---- tables ---- */

static void expect_table(const api_kind *k, const char *obj, const char *cells)
{
    json_t *items = json_array();
    json_array_append_new(items, J(obj));
    json_t *t = table_build(k, items, "None", NOW, NULL);
    json_decref(items);
    json_t *names = json_array(), *types = json_array(),
           *wc = J("['Name','Limit','Used',"
                   "'Available','Ready','Status',"
                   "'Age']"),
           *wt = J("['string','string','string','string','string','string','date']"),
           *wcells = J(cells);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(t, "columnDefinitions"), i, c)
    {
        json_array_append(names, json_object_get(c, "name"));
        json_array_append(types, json_object_get(c, "type"));
        assert_int_equal(json_integer_value(json_object_get(c, "priority")), 0);
    }
    assert_json_eq(names, wc);
    assert_json_eq(types, wt);
    assert_json_eq(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"), wcells);
    json_decref(names);
    json_decref(types);
    json_decref(wc);
    json_decref(wt);
    json_decref(wcells);
    json_decref(t);
}

static void test_tables(void **state)
{
    (void)state;
    /* not yet reconciled: status cells null (kubectl prints them empty) */
    expect_table(cqs(),
                 "{'metadata':{'name':'pod-count-limit','creationTimestamp':'" T_5M "'},'spec':{"
                 "'limit':'3'}}",
                 "['pod-count-limit','3',null,null,null,null,'5m']");
    expect_table(gcqs(),
                 "{'metadata':{'name':'cpu-limits','creationTimestamp':'" T_5M "'},'spec':{"
                 "'limit':'5'},'status':{'usage':{'used':'1500m','available':'3500m'},"
                 "'conditions':[{'type':'Other','status':'False'},{'type':'Ready','status':'True',"
                 "'message':'reconciled'}]}}",
                 "['cpu-limits','5','1500m','3500m','True','reconciled','5m']");
    expect_table(gcqs(), "{'metadata':{'name':'x','creationTimestamp':'" T_5M "'}}",
                 "['x',null,null,null,null,null,'5m']");
    /* not ready: the reason, not the message (every error, joined) */
    expect_table(gcqs(),
                 "{'metadata':{'name':'broken','creationTimestamp':'" T_5M "'},'spec':{"
                 "'limit':'5'},'status':{'usage':{'used':'0','available':'5'},'conditions':[{"
                 "'type':'Ready','status':'False','reason':'Failed','message':'get usage from "
                 "a/p1 (/v1, Kind=Pod) path \\\".spec.x\\\" cel \\\"\\\" op \\\"add\\\": "
                 "quantity path did not resolve to any value; get usage from a/p2 ...'}]}}",
                 "['broken','5','0','5','False','Failed','5m']");
}

/* ---- discovery, OpenAPI, protobuf ---- */

static void test_discovery(void **state)
{
    (void)state;
    json_t *l = disc_resource_list(CQ_GROUP, CQ_VERSION);
    assert_non_null(l);
    size_t i;
    json_t *r;
    int seen = 0;
    json_array_foreach(json_object_get(l, "resources"), i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        const char *sn = json_string_value(json_array_get(json_object_get(r, "shortNames"), 0));
        if (strcmp(name, "customquotas") == 0) {
            seen |= 1;
            assert_true(json_is_true(json_object_get(r, "namespaced")));
            assert_string_equal(sn, "cq");
            assert_string_equal(json_string_value(json_object_get(r, "kind")), "CustomQuota");
        } else if (strcmp(name, "globalcustomquotas") == 0) {
            seen |= 2;
            assert_false(json_is_true(json_object_get(r, "namespaced")));
            assert_string_equal(sn, "gcq");
        } else if (strcmp(name, "customquotas/status") == 0) {
            seen |= 4;
        } else if (strcmp(name, "globalcustomquotas/status") == 0) {
            seen |= 8;
        }
    }
    assert_int_equal(seen, 15);
    json_decref(l);
}

static json_t *schema_of(json_t *d, const char *name)
{
    json_t *s = json_object_get(json_object_get(json_object_get(d, "components"), "schemas"), name);
    if (!s) fail_msg("no schema %s", name);
    return s;
}

static json_t *prop(json_t *schema, const char *field)
{
    json_t *p = json_object_get(json_object_get(schema, "properties"), field);
    if (!p) fail_msg("no property %s", field);
    return p;
}

static void test_openapi(void **state)
{
    (void)state;
    json_t *d = openapi_v3_group_version(CQ_GROUP, CQ_VERSION);
    assert_non_null(d);
    json_t *cq = schema_of(d, PKG "CustomQuota");
    assert_null(json_object_get(cq, "x-kubernetes-preserve-unknown-fields"));
    json_t *gvk = json_array_get(json_object_get(cq, "x-kubernetes-group-version-kind"), 0);
    assert_string_equal(json_string_value(json_object_get(gvk, "kind")), "CustomQuota");
    /* required fields as the CRD has them; the global spec inlines the CustomQuota spec */
    json_t *want = J("['limit','sources','options']");
    assert_json_eq(json_object_get(schema_of(d, PKG "CustomQuotaSpec"), "required"), want);
    assert_json_eq(json_object_get(schema_of(d, PKG "GlobalCustomQuotaSpec"), "required"), want);
    json_decref(want);
    json_t *gspec = schema_of(d, PKG "GlobalCustomQuotaSpec");
    prop(gspec, "limit");
    prop(gspec, "namespaceSelectors");
    want = J("['kind']");
    assert_json_eq(json_object_get(schema_of(d, PKG "CustomQuotaSpecSource"), "required"), want);
    json_decref(want);
    /* the op enum; a selector with fields inlines the label selector */
    want = J("['add','sub','count']");
    assert_json_eq(json_object_get(prop(schema_of(d, PKG "CustomQuotaSpecSource"), "op"), "enum"),
                   want);
    json_decref(want);
    json_t *swf = schema_of(d, PKG "SelectorWithFields");
    prop(swf, "matchLabels");
    prop(swf, "matchExpressions");
    assert_string_equal(json_string_value(json_object_get(prop(swf, "celExpressions"), "type")),
                        "array");
    prop(schema_of(d, PKG "GlobalCustomQuotaStatus"), "namespaces");
    prop(schema_of(d, PKG "GlobalCustomQuotaStatus"), "usage");
    /* custom resources: JSON and merge patches only */
    json_t *patch = json_object_get(
        json_object_get(json_object_get(d, "paths"),
                        "/apis/capsule.clastix.io/v1beta2/namespaces/{namespace}/customquotas/"
                        "{name}"),
        "patch");
    json_t *content = json_object_get(json_object_get(patch, "requestBody"), "content");
    assert_non_null(json_object_get(content, "application/merge-patch+json"));
    assert_null(json_object_get(content, "application/strategic-merge-patch+json"));
    json_decref(d);
    d = openapi_v2();
    assert_non_null(json_object_get(json_object_get(d, "definitions"), PKG "GlobalCustomQuota"));
    json_decref(d);
}

static void test_no_protobuf(void **state)
{
    (void)state;
    assert_false(pb_kind_known(AV, "CustomQuota"));
    assert_false(pb_kind_known(AV, "GlobalCustomQuota"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_defaults_options),
        cmocka_unit_test(test_defaults_sources),
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_spec_messages),
        cmocka_unit_test(test_source_messages),
        cmocka_unit_test(test_path_messages),
        cmocka_unit_test(test_cel_and_selector_messages),
        cmocka_unit_test(test_gvk_messages),
        cmocka_unit_test(test_seed_examples),
        cmocka_unit_test(test_seed_fragments),
        cmocka_unit_test(test_seed_not_accepted),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_discovery),
        cmocka_unit_test(test_openapi),
        cmocka_unit_test(test_no_protobuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
