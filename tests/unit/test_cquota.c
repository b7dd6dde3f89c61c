/* test_cquota.c - core/cquota: a custom quota's spec compiled and an
 * object's usage, with the vectors of the shared spec §2 and §6.6. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/cquota.h"
#include "testutil.h"

static cq_quota *compile(const char *spec, bool global)
{
    char err[1024];
    json_t *j = J(spec);
    cq_quota *q = cq_compile(j, global, err, sizeof err);
    json_decref(j);
    if (!q) fail_msg("compile %s: %s", spec, err);
    return q;
}

static void expect_compile_error(const char *spec, const char *want)
{
    char err[1024] = "";
    json_t *j = J(spec);
    cq_quota *q = cq_compile(j, false, err, sizeof err);
    json_decref(j);
    if (q) fail_msg("compiled: %s", spec);
    if (!strstr(err, want)) fail_msg("error [%s] lacks [%s]", err, want);
}

/* The usage of pod `obj` as "matched/usage net N[; problem: ...]" or
 * "error: ...". */
static void usage_of(const cq_quota *q, const char *obj, char *out, size_t n)
{
    json_t *o = J(obj);
    bool matched = false, problem = true;
    qty u, net;
    char err[1024] = "x", buf[64], nb[64];
    if (cq_object_usage(q, "", "v1", "Pod", o, NULL, &matched, &u, &net, &problem, err,
                        sizeof err) != 0) {
        snprintf(out, n, "error: %s", err);
    } else {
        qty_format_str(&u, buf, sizeof buf);
        qty_format_str(&net, nb, sizeof nb);
        if (!problem && *err) fail_msg("no problem, but err [%s]", err);
        snprintf(out, n, "%s/%s net %s%s%s", matched ? "counted" : "not counted", buf, nb,
                 problem ? "; problem: " : "", problem ? err : "");
    }
    json_decref(o);
}

static void expect_usage(const cq_quota *q, const char *obj, const char *want)
{
    char got[1200];
    usage_of(q, obj, got, sizeof got);
    if (strncmp(got, want, strlen(want)) != 0) fail_msg("%s: got [%s], want [%s]", obj, got, want);
}

/* ... exactly */
static void expect_usage_is(const cq_quota *q, const char *obj, const char *want)
{
    char got[1200];
    usage_of(q, obj, got, sizeof got);
    if (strcmp(got, want) != 0) fail_msg("%s: got [%s], want [%s]", obj, got, want);
}

#define POD(labels, cpu1, cpu2)                                                                    \
    "{'metadata':{'name':'p','namespace':'n','uid':'u1','labels':" labels "},"                     \
    "'spec':{'restartPolicy':'Always','containers':["                                              \
    "{'name':'main','image':'nginx:1.27.0','resources':{'requests':{'cpu':'" cpu1 "'}}},"          \
    "{'name':'side','image':'busybox','resources':{'requests':{'cpu':'" cpu2 "'}}}]}}"

static void test_count_add_sub(void **state)
{
    (void)state;
    cq_quota *q = compile("{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod','op':'count'},"
                          "{'apiVersion':'v1','kind':'Pod','op':'sub','path':'.spec.containers[0]"
                          ".resources.requests.cpu'}]}",
                          false);
    /* one claim with the net usage: count + sub 500m -> 500m */
    expect_usage(q, POD("{}", "500m", "0"), "counted/500m net 500m");
    /* the claim is clamped at 0 after each step; the net contribution is not */
    expect_usage(q, POD("{}", "3", "0"), "counted/0 net -2");
    cq_free(q);
    /* [sub, add]: the sub runs first on 0 and is lost per object */
    q = compile("{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod','op':'sub','path':"
                "'.spec.containers[1].resources.requests.cpu'},{'apiVersion':'v1','kind':'Pod',"
                "'path':'.spec.containers[*].resources.requests.cpu'}]}",
                false);
    expect_usage(q, POD("{}", "100m", "200m"), "counted/300m net 100m");
    cq_free(q);
    /* only sub sources apply: counted with 0 (Capsule's claim with usage 0) */
    q = compile("{'limit':'10Gi','sources':[{'apiVersion':'v1','kind':'Pod','op':'sub','path':"
                "'.spec.containers[0].resources.requests.cpu'}]}",
                false);
    expect_usage(q, POD("{}", "1", "0"), "counted/0 net -1");
    cq_free(q);
}

static void test_paths_and_cel(void **state)
{
    (void)state;
    /* [*] sums: 100m + 200m */
    cq_quota *q = compile("{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod','path':"
                          "'.spec.containers[*].resources.requests.cpu'}]}",
                          false);
    expect_usage(q, POD("{}", "100m", "200m"), "counted/300m");
    cq_free(q);
    /* a missing field is 0, not an error (seed 003; Capsule's code errs, §0.5) */
    q = compile("{'limit':'10Gi','sources':[{'apiVersion':'v1','kind':'Pod','path':"
                "'.spec.volumes[*].emptyDir.sizeLimit'}]}",
                false);
    expect_usage_is(q, POD("{}", "1", "1"), "counted/0 net 0");
    cq_free(q);
    /* a CEL list is summed: 250m + 500m = 750m (§6.6) */
    q = compile("{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod','cel':"
                "'object.spec.containers.map(c, quantity(c.resources.requests[\\\"cpu\\\"]))'}]}",
                false);
    expect_usage(q, POD("{}", "250m", "500m"), "counted/750m");
    cq_free(q);
}

static void test_selectors(void **state)
{
    (void)state;
    /* label AND field AND CEL within an entry (§6.6 mixed JSONPath + CEL) */
    cq_quota *q = compile(
        "{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod','op':'count','selectors':[{"
        "'matchLabels':{'track':'yes'},'fieldSelectors':['.spec.restartPolicy=Always'],"
        "'celExpressions':['object.spec.containers.exists(c, c.image == \\\"nginx:1.27.0\\\")']}]}]}",
        false);
    expect_usage(q, POD("{'track':'yes'}", "1", "1"), "counted/1");
    expect_usage(q, POD("{'track':'no'}", "1", "1"), "not counted/0");
    cq_free(q);
    /* entries are ORed; a filter on a single value filters it (seed 003's
     * LoadBalancer example) */
    q = compile(
        "{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod','op':'count','selectors':["
        "{'fieldSelectors':['.spec.restartPolicy[?(@==\\\"Always\\\")]']},"
        "{'matchLabels':{'tier':'web'}}]}]}",
        false);
    expect_usage(q, POD("{'tier':'web'}", "1", "1"), "counted/1");
    expect_usage(q, POD("{}", "1", "1"), "counted/1");
    cq_free(q);
    q = compile(
        "{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod','op':'count','selectors':["
        "{'fieldSelectors':['.spec.containers[?(@.name > 1)]']}]}]}",
        false);
    /* an entry that cannot be evaluated (a string compared with a number)
     * does not select, and is the object's problem */
    expect_usage_is(q, POD("{}", "1", "1"),
                    "not counted/0 net 0; problem: source path \"\" cel \"\" op \"count\" "
                    "selectors: execute usage jsonpath: incompatible types for comparison");
    cq_free(q);
    /* || and && commute over what cannot be evaluated: another entry that
     * holds selects, a part that is false rejects, and neither is a problem */
    q = compile(
        "{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod','op':'count','selectors':["
        "{'fieldSelectors':['.spec.containers[?(@.name > 1)]']},"
        "{'matchLabels':{'tier':'web'}}]}]}",
        false);
    expect_usage_is(q, POD("{'tier':'web'}", "1", "1"), "counted/1 net 1");
    cq_free(q);
    q = compile(
        "{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod','op':'count','selectors':["
        "{'fieldSelectors':['.spec.containers[?(@.name > 1)]','.spec.restartPolicy=Never'],"
        "'celExpressions':['object.spec.nothing == 1']}]}]}",
        false);
    expect_usage_is(q, POD("{}", "1", "1"), "not counted/0 net 0");
    cq_free(q);
    /* a field selector's index past the end is missing: no match, no error */
    q = compile(
        "{'limit':'10','sources':[{'apiVersion':'v1','kind':'Pod','op':'count','selectors':["
        "{'fieldSelectors':['.spec.containers[3].name']}]}]}",
        false);
    expect_usage_is(q, POD("{}", "1", "1"), "not counted/0 net 0");
    cq_free(q);
    /* scope selectors: object labels, ORed; empty matches all */
    q = compile(
        "{'limit':'10','scopeSelectors':[{'matchLabels':{'a':'1'}},{'matchLabels':{'b':'1'}}],"
        "'sources':[{'apiVersion':'v1','kind':'Pod','op':'count'}]}",
        false);
    expect_usage(q, POD("{'b':'1'}", "1", "1"), "counted/1");
    expect_usage(q, POD("{'c':'1'}", "1", "1"), "not counted/0");
    cq_free(q);
}

/* Seed 003: "Missing fields are treated as zero"; several values sum; a
 * value that is there but is not a quantity counts 0 for its source and is
 * the object's problem (the others still count). */
static void test_missing_and_unreadable(void **state)
{
    (void)state;
    /* seed 003's cpu-limits */
    cq_quota *q = compile("{'limit':'5','sources':[{'apiVersion':'v1','kind':'Pod','op':'add',"
                          "'path':'.spec.containers[*].resources.limits.cpu'},{'apiVersion':'v1',"
                          "'kind':'Pod','op':'add','path':'.spec.initContainers[*].resources."
                          "limits.cpu'}]}",
                          true);
#define LIMITS(c) "{'name':'c','image':'nginx','resources':{'limits':{'cpu':'" c "'}}}"
    /* the seed's nginx pod: one container, no initContainers: 250m */
    expect_usage_is(q, "{'spec':{'containers':[" LIMITS("250m") "]}}", "counted/250m net 250m");
    /* no limits at all (a missing member), no containers' resources */
    expect_usage_is(q, "{'spec':{'containers':[{'name':'c','image':'nginx'}]}}", "counted/0 net 0");
    expect_usage_is(q, "{'spec':{'containers':[{'name':'c','resources':{}}]}}", "counted/0 net 0");
    /* an empty list under [*], a null list, no spec */
    expect_usage_is(q, "{'spec':{'containers':[],'initContainers':[]}}", "counted/0 net 0");
    expect_usage_is(q, "{'spec':{'containers':null,'initContainers':null}}", "counted/0 net 0");
    expect_usage_is(q, "{'metadata':{'name':'p'}}", "counted/0 net 0");
    /* null and empty values are missing too */
    expect_usage_is(
        q, "{'spec':{'containers':[{'resources':{'limits':{'cpu':null}}}," LIMITS("") "]}}",
        "counted/0 net 0");
    /* several containers sum, with the init containers: 250m + 500m + 1 */
    expect_usage_is(q,
                    "{'spec':{'containers':[" LIMITS("250m") "," LIMITS(
                        "500m") "],"
                                "'initContainers':[" LIMITS("1") "]}}",
                    "counted/1750m net 1750m");
    /* a value that is not a quantity: 0 for that source, the other counts */
    expect_usage_is(
        q, "{'spec':{'containers':[" LIMITS("250m") "],'initContainers':[" LIMITS("abc") "]}}",
        "counted/250m net 250m; problem: source path \".spec.initContainers[*].resources.limits."
        "cpu\" cel \"\" op \"add\" did not resolve to a valid quantity: invalid quantity \"abc\": "
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    /* ... also when another container's value reads (the whole source is 0) */
    expect_usage(
        q, "{'spec':{'containers':[" LIMITS("250m") "," LIMITS("abc") "]}}",
        "counted/0 net 0; problem: source path \".spec.containers[*].resources.limits.cpu\"");
    /* the first problem is the one named */
    expect_usage(q, "{'spec':{'containers':[" LIMITS("x") "],'initContainers':[" LIMITS("y") "]}}",
                 "counted/0 net 0; problem: source path \".spec.containers[*].resources.limits."
                 "cpu\" cel \"\" op \"add\" did not resolve to a valid quantity: invalid quantity "
                 "\"x\"");
    /* a value of the wrong shape: an object, a boolean; a list where an
     * object was expected is walked past (nothing) */
    expect_usage(q, "{'spec':{'containers':[{'resources':{'limits':{'cpu':{'a':1}}}}]}}",
                 "counted/0 net 0; problem: source path \".spec.containers[*].resources.limits."
                 "cpu\" cel \"\" op \"add\" did not resolve to a valid quantity: invalid quantity "
                 "\"{\\\"a\\\":1}\"");
    expect_usage(q, "{'spec':{'containers':[{'resources':{'limits':{'cpu':true}}}]}}",
                 "counted/0 net 0; problem: source path");
    expect_usage_is(q, "{'spec':{'containers':[{'resources':{'limits':['1']}}]}}",
                    "counted/0 net 0");
    /* a path that cannot walk the object ([*] of a string) */
    expect_usage(q, "{'spec':{'containers':'none'}}",
                 "counted/0 net 0; problem: source path \".spec.containers[*].resources.limits."
                 "cpu\" cel \"\" op \"add\" did not resolve to a valid quantity: execute usage "
                 "jsonpath: string is not array or slice");
    cq_free(q);
#undef LIMITS
    /* a filter that matches nothing; an index past the end; a slice past it */
    q = compile(
        "{'limit':'5','sources':[{'apiVersion':'v1','kind':'Pod','path':"
        "'.spec.containers[?(@.name==\\\"side\\\")].resources.requests.cpu'},"
        "{'apiVersion':'v1','kind':'Pod','path':'.spec.containers[5].resources.requests.cpu'},"
        "{'apiVersion':'v1','kind':'Pod','path':'.spec.containers[-7].resources.requests.cpu'},"
        "{'apiVersion':'v1','kind':'Pod','path':'.spec.containers[1:9].resources.requests.cpu'}]}",
        false);
    expect_usage_is(
        q, "{'spec':{'containers':[{'name':'main','resources':{'requests':{'cpu':'1'}}}]}}",
        "counted/0 net 0");
    expect_usage_is(q, POD("{}", "100m", "200m"), "counted/400m net 400m"); /* side, twice */
    cq_free(q);
    /* sub of a value that cannot be read takes nothing */
    q = compile(
        "{'limit':'5','sources':[{'apiVersion':'v1','kind':'Pod','op':'count'},{'apiVersion':"
        "'v1','kind':'Pod','op':'sub','path':'.metadata.annotations.discount'}]}",
        false);
    expect_usage_is(q, "{'metadata':{'annotations':{'discount':'1'}}}", "counted/0 net 0");
    expect_usage_is(q, "{'metadata':{}}", "counted/1 net 1");
    expect_usage(q, "{'metadata':{'annotations':{'discount':'lots'}}}",
                 "counted/1 net 1; problem: source path \".metadata.annotations.discount\"");
    cq_free(q);
    /* CEL: an empty list is 0; an expression that fails is the problem */
    q = compile(
        "{'limit':'5','sources':[{'apiVersion':'v1','kind':'Pod','cel':"
        "'object.spec.containers.filter(c, has(c.resources) && has(c.resources.limits)).map(c, "
        "quantity(c.resources.limits[\\\"cpu\\\"]))'}]}",
        false);
    expect_usage_is(q, "{'spec':{'containers':[{'name':'c'}]}}", "counted/0 net 0");
    expect_usage(q, "{'spec':{'containers':[{'name':'c','resources':{'limits':{'memory':'1'}}}]}}",
                 "counted/0 net 0; problem: source path \"\" cel \"object.spec.containers");
    cq_free(q);
}

static void test_gvk(void **state)
{
    (void)state;
    /* group/version fields (seed 003) and apiVersion name the same kind */
    cq_quota *q =
        compile("{'limit':'6','sources':[{'group':'','version':'v1','kind':'Pod',"
                "'op':'count'},{'apiVersion':'apps/v1','kind':'Deployment','op':'count'}]}",
                true);
    assert_true(cq_targets(q, "", "v1", "Pod"));
    assert_true(cq_targets(q, "apps", "v1", "Deployment"));
    assert_false(cq_targets(q, "", "v1", "Service"));
    assert_false(cq_targets(q, "apps", "v1beta1", "Deployment"));
    assert_true(cq_all_namespaces(q));
    cq_free(q);
    q = compile("{'limit':'6','namespaceSelectors':[{'matchLabels':{'t':'solar'}}],'sources':["
                "{'apiVersion':'v1','kind':'Pod','op':'count'}]}",
                true);
    json_t *yes = J("{'t':'solar'}"), *no = J("{'t':'wind'}");
    assert_false(cq_all_namespaces(q));
    assert_true(cq_selects_namespace(q, yes));
    assert_false(cq_selects_namespace(q, no));
    json_decref(yes);
    json_decref(no);
    cq_free(q);
    char g[64], v[64];
    cq_split_api_version("objectbucket.io/v1alpha1", g, sizeof g, v, sizeof v);
    assert_string_equal(g, "objectbucket.io");
    assert_string_equal(v, "v1alpha1");
    cq_split_api_version("v1", g, sizeof g, v, sizeof v);
    assert_string_equal(g, "");
    assert_string_equal(v, "v1");
}

static void test_compile_errors(void **state)
{
    (void)state;
    expect_compile_error("{'limit':'0','sources':[]}",
                         "invalid spec.limit: quantity must not be negative or 0: \"0\"");
    expect_compile_error("{'limit':'-1','sources':[]}",
                         "invalid spec.limit: quantity must not be negative or 0: \"-1\"");
    expect_compile_error("{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod','op':'count',"
                         "'path':'.a'}]}",
                         "path and cel must be empty when op is 'count'; otherwise exactly one of "
                         "path or cel must be set and non-empty");
    expect_compile_error("{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod'}]}",
                         "path and cel must be empty when op is 'count'");
    expect_compile_error(
        "{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod','cel':'object.x +'}]}",
        "invalid CEL expression: spec.sources[0].cel: ");
    expect_compile_error(
        "{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod','cel':'1 == 1'}]}",
        "invalid CEL expression: spec.sources[0].cel: ");
    expect_compile_error(
        "{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod','op':'count',"
        "'selectors':[{'celExpressions':['object.metadata.name']}]}]}",
        "invalid CEL expression: spec.sources[0].selectors[0].celExpressions[0]: ");
    expect_compile_error(
        "{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod','path':'spec.x'}]}",
        "invalid path: spec.sources[0].path: sourcePath must start with '.'");
    expect_compile_error("{'limit':'1','sources':[{'apiVersion':'v1','kind':'Pod','op':'mul',"
                         "'path':'.a'}]}",
                         "unsupported operation \"mul\"");
}

static void test_percentage(void **state)
{
    (void)state;
    qty used, lim;
    qty_parse("2", &used);
    qty_parse("8", &lim);
    assert_true(cq_usage_percentage(&used, &lim) == 25.0);
    qty_parse("250m", &used);
    qty_parse("1", &lim);
    assert_true(cq_usage_percentage(&used, &lim) == 25.0);
    qty_parse("0", &lim);
    assert_true(cq_usage_percentage(&used, &lim) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_add_sub),
        cmocka_unit_test(test_paths_and_cel),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_gvk),
        cmocka_unit_test(test_compile_errors),
        cmocka_unit_test(test_percentage),
        cmocka_unit_test(test_missing_and_unreadable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
