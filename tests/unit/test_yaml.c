/* test_yaml.c - YAML documents as JSON values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/yaml.h"
#include "testutil.h"

static void expect(const char *yaml, const char *json)
{
    char err[256] = "";
    json_t *got = yaml_to_json(yaml, strlen(yaml), err, sizeof err);
    if (!got) fail_msg("%s: %s", yaml, err);
    json_t *want = J(json);
    char *g = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
    if (!json_equal(got, want)) fail_msg("%s -> %s, want %s", yaml, g, json);
    free(g);
    json_decref(got);
    json_decref(want);
}

static void expect_error(const char *yaml, const char *part)
{
    char err[256] = "";
    json_t *got = yaml_to_json(yaml, strlen(yaml), err, sizeof err);
    assert_null(got);
    if (!strstr(err, part)) fail_msg("%s: error [%s] lacks [%s]", yaml, err, part);
}

/* Upstream's documented admission configuration for ResourceQuota. */
static void test_admission_configuration(void **state)
{
    expect("apiVersion: apiserver.config.k8s.io/v1\n"
           "kind: AdmissionConfiguration\n"
           "plugins:\n"
           "- name: \"ResourceQuota\"\n"
           "  configuration:\n"
           "    apiVersion: apiserver.config.k8s.io/v1\n"
           "    kind: ResourceQuotaConfiguration\n"
           "    limitedResources:\n"
           "    - resource: pods\n"
           "      matchScopes:\n"
           "      - scopeName: PriorityClass\n"
           "        operator: In\n"
           "        values: [\"cluster-services\"]\n",
           "{'apiVersion':'apiserver.config.k8s.io/v1','kind':'AdmissionConfiguration',"
           "'plugins':[{'name':'ResourceQuota','configuration':{'apiVersion':"
           "'apiserver.config.k8s.io/v1','kind':'ResourceQuotaConfiguration',"
           "'limitedResources':[{'resource':'pods','matchScopes':[{'scopeName':"
           "'PriorityClass','operator':'In','values':['cluster-services']}]}]}}]}");
}

static void test_scalars(void **state)
{
    expect("a: 1\nb: -2\nc: 1.5\nd: true\ne: no\nf: ~\ng:\nh: '1'\ni: \"true\"\nj: 1Gi\nk: 1e3\n"
           "l: !!str 7\nm: .inf\n",
           "{'a':1,'b':-2,'c':1.5,'d':true,'e':false,'f':null,'g':null,'h':'1','i':'true',"
           "'j':'1Gi','k':1000.0,'l':'7','m':'.inf'}");
    expect("[a, {b: c}, [1, 2]]", "['a',{'b':'c'},[1,2]]");
    expect("{\"json\": [1, \"x\"]}", "{'json':[1,'x']}"); /* JSON is YAML */
    expect("base: &b {x: 1}\nuse: *b\n", "{'base':{'x':1},'use':{'x':1}}");
    expect("first: 1\n---\nsecond: 2\n", "{'first':1}");
}

static void test_errors(void **state)
{
    expect_error("a: [1, 2\n", "line");
    expect_error("a: *nope\n", "unknown or recursive alias");
    expect_error("", "empty document");
    expect_error("&a [*a]\n", "recursive alias");
}

/* Found by fuzz/fuzz_yaml (out of memory in json_dumps): a mapping used as a
 * key was printed as its JSON text, whose escapes double with each level of
 * key inside a key; and aliases share values, so a short document names a
 * tree of billions of nodes. Both are refused, as go-yaml does. */
static void test_alias_bombs(void **state)
{
    (void)state;
    const char *laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                         "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                         "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                         "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                         "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                         "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                         "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                         "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
    expect_error(laughs, "document contains excessive aliasing");
    /* the same as a mapping key, which is printed as text */
    expect_error("a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                 "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                 "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                 "? [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
                 ": v\n",
                 "document contains excessive aliasing");
    /* keys in keys: each level's text escaped the one inside it, doubling */
    expect_error("? {? {? {a: 1}: b}: c}: d\n", "invalid map key: a mapping");
    expect_error("? [a, b]\n: c\n", "invalid map key: a sequence");
    expect("{1: a, true: b, ~: c}", "{\"1\": \"a\", \"true\": \"b\", \"null\": \"c\"}");
    /* ordinary reuse is fine, a large share of a small document included */
    expect("base: &b {cpu: 100m, memory: 1Gi}\nx: *b\nz: [*b, *b]\n",
           "{\"base\": {\"cpu\": \"100m\", \"memory\": \"1Gi\"},"
           " \"x\": {\"cpu\": \"100m\", \"memory\": \"1Gi\"},"
           " \"z\": [{\"cpu\": \"100m\", \"memory\": \"1Gi\"},"
           " {\"cpu\": \"100m\", \"memory\": \"1Gi\"}]}");
    const char *fanout = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                         "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                         "c: [*b, *b]\n";
    char err[256] = "";
    json_t *got = yaml_to_json(fanout, strlen(fanout), err, sizeof err);
    assert_non_null(got);
    assert_int_equal(json_array_size(json_object_get(got, "c")), 2);
    json_decref(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admission_configuration),
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_alias_bombs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
