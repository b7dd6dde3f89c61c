/* test_priority.c - PriorityClass validation and Priority admission:
 * resolution (named, system, globalDefault, none), upstream's 403 texts, the
 * system classes, and the update/delete rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "api/priority.h"
#include "api/status.h"

#include <stdlib.h>
#include <string.h>

static json_t *load(const char *s)
{
    json_error_t err;
    json_t *j = json_loads(s, 0, &err);
    assert_non_null(j);
    return j;
}

static json_t *pc(const char *name, long long value, bool global, const char *pp)
{
    json_t *o = json_pack("{s:{s:s}, s:I, s:b}", "metadata", "name", name, "value",
                          (json_int_t)value, "globalDefault", global);
    if (pp) json_object_set_new(o, "preemptionPolicy", json_string(pp));
    return o;
}

static json_t *validate(const json_t *obj, const json_t *old)
{
    json_t *causes = json_array();
    priorityclass_validate(obj, old, causes);
    return causes;
}

static void expect_one(json_t *obj, const json_t *old, const char *reason, const char *field,
                       const char *msg)
{
    json_t *c = validate(obj, old);
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, reason, field, msg);
    json_decref(c);
    json_decref(obj);
}

static void expect_valid(json_t *obj, const json_t *old)
{
    json_t *c = validate(obj, old);
    assert_int_equal(json_array_size(c), 0);
    json_decref(c);
    json_decref(obj);
}

/* ---- PriorityClass validation ---- */

static void test_validate_values(void **state)
{
    (void)state;
    expect_valid(pc("high", 1000000000, false, "PreemptLowerPriority"), NULL);
    expect_valid(pc("neg", -5, true, "Never"), NULL);
    expect_one(pc("too-high", 1000000001, false, NULL), NULL, "FieldValueForbidden", "value",
               "Forbidden: maximum allowed value of a user defined priority is 1000000000");
    expect_one(load("{\"metadata\":{\"name\":\"big\"},\"value\":4294967296}"), NULL,
               "FieldValueInvalid", "value", "Invalid value: 4294967296: must be a 32-bit integer");
}

static void test_validate_system_names(void **state)
{
    (void)state;
    expect_valid(pc("system-node-critical", 2000001000, false, NULL), NULL);
    expect_valid(pc("system-cluster-critical", 2000000000, false, NULL), NULL);
    expect_one(pc("system-foo", 5, false, NULL), NULL, "FieldValueForbidden", "metadata.name",
               "Forbidden: priority class names with 'system-' prefix are reserved for system use "
               "only. error: system-foo is not a known system priority class");
    expect_one(pc("system-node-critical", 5, false, NULL), NULL, "FieldValueForbidden",
               "metadata.name",
               "Forbidden: priority class names with 'system-' prefix are reserved for system use "
               "only. error: value of system-node-critical PriorityClass must be 2000001000");
    expect_one(pc("system-cluster-critical", 2000000000, true, NULL), NULL, "FieldValueForbidden",
               "metadata.name",
               "Forbidden: priority class names with 'system-' prefix are reserved for system use "
               "only. error: globalDefault of system-cluster-critical PriorityClass must be false");
}

static void test_validate_preemption_policy(void **state)
{
    (void)state;
    expect_one(pc("a", 1, false, "Sometimes"), NULL, "FieldValueNotSupported", "preemptionPolicy",
               "Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", "
               "\"Never\"");
    expect_one(pc("a", 1, false, ""), NULL, "FieldValueRequired", "preemptionPolicy",
               "Required value");
}

static void test_validate_update(void **state)
{
    (void)state;
    json_t *old = pc("a", 10, false, "PreemptLowerPriority");
    expect_valid(pc("a", 10, true, "PreemptLowerPriority"), old);
    expect_one(pc("a", 11, false, "PreemptLowerPriority"), old, "FieldValueForbidden", "value",
               "Forbidden: may not be changed in an update.");
    expect_one(pc("a", 10, false, "Never"), old, "FieldValueInvalid", "preemptionPolicy",
               "Invalid value: \"Never\": field is immutable");
    expect_one(pc("a", 10, false, NULL), old, "FieldValueInvalid", "preemptionPolicy",
               "Invalid value: null: field is immutable");
    json_decref(old);
}

static void test_global_default(void **state)
{
    (void)state;
    json_t *a = pc("a", 10, true, NULL), *b = pc("b", 20, true, NULL), *c = pc("c", 5, false, NULL);
    const json_t *classes[] = {a, c};
    api_err e;
    api_err_init(&e);
    assert_int_equal(priority_check_global_default(b, false, classes, 2, &e), -1);
    assert_int_equal(api_errcode_http(e.code), 403);
    assert_string_equal(e.message, "priorityclasses.scheduling.k8s.io \"b\" is forbidden: "
                                   "PriorityClass a is already marked as default. Only one "
                                   "default can exist");
    assert_string_equal(json_string_value(json_object_get(e.details, "group")),
                        "scheduling.k8s.io");
    api_err_clear(&e);
    /* updating the default class itself is fine; marking another one is not */
    assert_int_equal(priority_check_global_default(a, true, classes, 2, &e), 0);
    assert_int_equal(priority_check_global_default(b, true, classes, 2, &e), -1);
    api_err_clear(&e);
    /* no default yet, or not a default: allowed */
    const json_t *only_c[] = {c};
    assert_int_equal(priority_check_global_default(b, false, only_c, 1, &e), 0);
    assert_int_equal(priority_check_global_default(c, false, classes, 2, &e), 0);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_delete_system(void **state)
{
    (void)state;
    api_err e;
    api_err_init(&e);
    assert_int_equal(priority_check_delete("system-node-critical", &e), -1);
    assert_string_equal(e.message, "system-node-critical.scheduling.k8s.io "
                                   "\"system-node-critical\" is forbidden: this is a system "
                                   "priority class and cannot be deleted");
    api_err_clear(&e);
    assert_int_equal(priority_check_delete("high", &e), 0);
}

static void test_system_classes(void **state)
{
    (void)state;
    json_t *list = priority_system_classes();
    assert_int_equal(json_array_size(list), 2);
    json_t *n = json_array_get(list, 0), *c = json_array_get(list, 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(n, "metadata"), "name")),
                        "system-node-critical");
    assert_int_equal(json_integer_value(json_object_get(n, "value")), 2000001000);
    assert_string_equal(json_string_value(json_object_get(c, "description")),
                        "Used for system critical pods that must run in the cluster, but can be "
                        "moved to another node if necessary.");
    assert_int_equal(json_integer_value(json_object_get(c, "value")), 2000000000);
    assert_string_equal(json_string_value(json_object_get(c, "apiVersion")),
                        "scheduling.k8s.io/v1");
    assert_string_equal(json_string_value(json_object_get(c, "preemptionPolicy")),
                        "PreemptLowerPriority");
    assert_true(json_is_false(json_object_get(c, "globalDefault")));
    /* they pass their own validation */
    json_t *causes = json_array();
    priorityclass_validate(n, NULL, causes);
    priorityclass_validate(c, NULL, causes);
    assert_int_equal(json_array_size(causes), 0);
    json_decref(causes);
    json_decref(list);
}

/* ---- pod admission ---- */

static json_int_t spec_int(const json_t *pod, const char *k)
{
    return json_integer_value(json_object_get(json_object_get(pod, "spec"), k));
}

static const char *spec_str(const json_t *pod, const char *k)
{
    return json_string_value(json_object_get(json_object_get(pod, "spec"), k));
}

static void test_admit_named(void **state)
{
    (void)state;
    json_t *high = pc("high", 1000, false, "Never"), *dflt = pc("dflt", 7, true, NULL);
    const json_t *classes[] = {high, dflt};
    json_t *pod = load("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priorityClassName\":\"high\","
                       "\"containers\":[]}}");
    api_err e;
    api_err_init(&e);
    assert_int_equal(priority_admit_pod(pod, classes, 2, &e), 0);
    assert_int_equal(spec_int(pod, "priority"), 1000);
    assert_string_equal(spec_str(pod, "preemptionPolicy"), "Never");
    assert_string_equal(spec_str(pod, "priorityClassName"), "high");
    json_decref(pod);
    /* a class without preemptionPolicy leaves the pod's alone */
    json_t *bare = load("{\"metadata\":{\"name\":\"bare\"},\"value\":3}");
    const json_t *c2[] = {bare};
    pod = load("{\"spec\":{\"priorityClassName\":\"bare\"}}");
    assert_int_equal(priority_admit_pod(pod, c2, 1, &e), 0);
    assert_int_equal(spec_int(pod, "priority"), 3);
    assert_null(json_object_get(json_object_get(pod, "spec"), "preemptionPolicy"));
    json_decref(pod);
    json_decref(bare);
    json_decref(high);
    json_decref(dflt);
}

static void test_admit_system(void **state)
{
    (void)state;
    api_err e;
    api_err_init(&e);
    json_t *pod = load("{\"metadata\":{\"name\":\"x\",\"namespace\":\"default\"},\"spec\":{"
                       "\"priorityClassName\":\"system-cluster-critical\"}}");
    assert_int_equal(priority_admit_pod(pod, NULL, 0, &e), 0);
    assert_int_equal(spec_int(pod, "priority"), 2000000000);
    assert_string_equal(spec_str(pod, "preemptionPolicy"), "PreemptLowerPriority");
    json_decref(pod);
    pod = load("{\"spec\":{\"priorityClassName\":\"system-node-critical\"}}");
    assert_int_equal(priority_admit_pod(pod, NULL, 0, &e), 0);
    assert_int_equal(spec_int(pod, "priority"), 2000001000);
    json_decref(pod);
}

static void test_admit_default(void **state)
{
    (void)state;
    json_t *a = pc("a", 100, true, "Never"), *b = pc("b", 50, true, "PreemptLowerPriority"),
           *c = pc("c", 10, false, NULL);
    api_err e;
    api_err_init(&e);
    /* several defaults (a race): the lowest value wins */
    const json_t *classes[] = {a, b, c};
    json_t *pod = load("{\"spec\":{}}");
    assert_int_equal(priority_admit_pod(pod, classes, 3, &e), 0);
    assert_int_equal(spec_int(pod, "priority"), 50);
    assert_string_equal(spec_str(pod, "priorityClassName"), "b");
    assert_string_equal(spec_str(pod, "preemptionPolicy"), "PreemptLowerPriority");
    json_decref(pod);
    /* no default class: 0, PreemptLowerPriority, no class name */
    const json_t *none[] = {c};
    pod = load("{\"spec\":{\"priorityClassName\":\"\"}}");
    assert_int_equal(priority_admit_pod(pod, none, 1, &e), 0);
    assert_int_equal(spec_int(pod, "priority"), 0);
    assert_string_equal(spec_str(pod, "preemptionPolicy"), "PreemptLowerPriority");
    assert_string_equal(spec_str(pod, "priorityClassName"), "");
    json_decref(pod);
    pod = load("{}");
    assert_int_equal(priority_admit_pod(pod, NULL, 0, &e), 0);
    assert_int_equal(spec_int(pod, "priority"), 0);
    assert_null(json_object_get(json_object_get(pod, "spec"), "priorityClassName"));
    json_decref(pod);
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void expect_forbidden(const char *podjson, const json_t *const *classes, size_t n,
                             const char *msg)
{
    json_t *pod = load(podjson);
    api_err e;
    api_err_init(&e);
    assert_int_equal(priority_admit_pod(pod, classes, n, &e), -1);
    assert_int_equal(api_errcode_http(e.code), 403);
    assert_string_equal(api_errcode_reason(e.code), "Forbidden");
    assert_string_equal(e.message, msg);
    assert_string_equal(json_string_value(json_object_get(e.details, "kind")), "pods");
    api_err_clear(&e);
    json_decref(pod);
}

static void test_admit_errors(void **state)
{
    (void)state;
    json_t *high = pc("high", 1000, false, "PreemptLowerPriority");
    const json_t *classes[] = {high};
    expect_forbidden("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priorityClassName\":\"foo\"}}",
                     classes, 1,
                     "pods \"x\" is forbidden: no PriorityClass with name foo was found");
    expect_forbidden("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priorityClassName\":\"high\","
                     "\"priority\":5}}",
                     classes, 1,
                     "pods \"x\" is forbidden: the integer value of priority (5) must not be "
                     "provided in pod spec; priority admission controller computed 1000 from the "
                     "given PriorityClass name");
    expect_forbidden("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"priority\":2}}", NULL, 0,
                     "pods \"x\" is forbidden: the integer value of priority (2) must not be "
                     "provided in pod spec; priority admission controller computed 0 from the "
                     "given PriorityClass name");
    expect_forbidden("{\"metadata\":{\"generateName\":\"w-\"},\"spec\":{\"priorityClassName\":"
                     "\"high\",\"preemptionPolicy\":\"Never\"}}",
                     classes, 1,
                     "pods \"w-\" is forbidden: the string value of PreemptionPolicy (Never) must "
                     "not be provided in pod spec; priority admission controller computed "
                     "PreemptLowerPriority from the given PriorityClass name");
    /* a matching priority and policy are accepted */
    json_t *pod = load("{\"spec\":{\"priorityClassName\":\"high\",\"priority\":1000,"
                       "\"preemptionPolicy\":\"PreemptLowerPriority\"}}");
    api_err e;
    api_err_init(&e);
    assert_int_equal(priority_admit_pod(pod, classes, 1, &e), 0);
    json_decref(pod);
    json_decref(high);
}

static void test_admit_update(void **state)
{
    (void)state;
    json_t *old = load("{\"spec\":{\"priority\":1000,\"preemptionPolicy\":\"Never\"}}");
    json_t *pod = load("{\"spec\":{\"containers\":[]}}");
    priority_admit_pod_update(pod, old);
    assert_int_equal(spec_int(pod, "priority"), 1000);
    assert_string_equal(spec_str(pod, "preemptionPolicy"), "Never");
    json_decref(pod);
    /* values the client sent are left for validation to judge */
    pod = load("{\"spec\":{\"priority\":5}}");
    priority_admit_pod_update(pod, old);
    assert_int_equal(spec_int(pod, "priority"), 5);
    json_decref(pod);
    json_decref(old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_values),
        cmocka_unit_test(test_validate_system_names),
        cmocka_unit_test(test_validate_preemption_policy),
        cmocka_unit_test(test_validate_update),
        cmocka_unit_test(test_global_default),
        cmocka_unit_test(test_delete_system),
        cmocka_unit_test(test_system_classes),
        cmocka_unit_test(test_admit_named),
        cmocka_unit_test(test_admit_system),
        cmocka_unit_test(test_admit_default),
        cmocka_unit_test(test_admit_errors),
        cmocka_unit_test(test_admit_update),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
