/* test_rq_validation.c - ResourceQuota validation (spec section 6): every
 * message with its exact text, field path and reason, and the resource-name
 * and scope predicates of helpers.go. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "api/rq_validation.h"
#include "api/status.h"

#include <stdlib.h>
#include <string.h>

#define QNAME_PARTS_MSG                                                                            \
    "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start "   \
    "and end with an alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex used " \
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "          \
    "subdomain prefix and '/' (e.g. 'example.com/MyName')"

/* Validate `json` (a ResourceQuota) against `old_json` (NULL: create) as the
 * registry does: the validate hook, then on update validate_update for `sub`. */
static json_t *run_sub(const char *json, const char *old_json, const char *sub)
{
    json_error_t err;
    json_t *obj = json_loads(json, 0, &err);
    assert_non_null(obj);
    json_t *old = old_json ? json_loads(old_json, 0, &err) : NULL;
    if (old_json) assert_non_null(old);
    json_t *causes = json_array();
    resourcequota_validate(obj, old, causes);
    if (old) resourcequota_validate_update(obj, old, sub, causes);
    json_decref(obj);
    json_decref(old);
    return causes;
}

static json_t *run(const char *json, const char *old_json)
{
    return run_sub(json, old_json, "");
}

/* Exactly one FieldValueInvalid cause. */
static void expect_one(const char *json, const char *field, const char *msg)
{
    json_t *c = run(json, NULL);
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, "FieldValueInvalid", field, msg);
    json_decref(c);
}

static void expect_none(const char *json, const char *old)
{
    json_t *c = run(json, old);
    if (json_array_size(c)) {
        char *s = json_dumps(c, 0);
        print_error("unexpected causes: %s\n", s);
        free(s);
    }
    assert_int_equal(json_array_size(c), 0);
    json_decref(c);
}

static void test_valid_names(void **state)
{
    (void)state;
    expect_none("{\"spec\":{\"hard\":{\"cpu\":\"10\",\"memory\":\"1Gi\",\"pods\":\"10\","
                "\"requests.cpu\":\"500m\",\"limits.memory\":\"2Gi\",\"ephemeral-storage\":\"1Gi\","
                "\"requests.storage\":\"10Gi\",\"persistentvolumeclaims\":\"4\","
                "\"services.nodeports\":\"2\",\"services.loadbalancers\":\"0\","
                "\"resourcequotas\":\"1\",\"secrets\":\"10\",\"configmaps\":\"10\","
                "\"replicationcontrollers\":\"20\",\"services\":\"5\","
                "\"hugepages-2Mi\":\"1Gi\",\"requests.hugepages-1Gi\":\"2Gi\","
                "\"count/deployments.apps\":\"5\",\"requests.nvidia.com/gpu\":\"500m\","
                "\"gold.storageclass.storage.k8s.io/requests.storage\":\"10Gi\"}}}",
                NULL);
    expect_none("{\"spec\":{}}", NULL);
    expect_none("{}", NULL);
}

static void test_unknown_name_two_causes(void **state)
{
    (void)state;
    json_t *c = run("{\"spec\":{\"hard\":{\"foo\":\"1\"}}}", NULL);
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, "FieldValueInvalid", "spec.hard[foo]",
                 "Invalid value: \"foo\": must be a standard resource type or fully qualified");
    expect_cause(c, 1, "FieldValueInvalid", "spec.hard[foo]",
                 "Invalid value: \"foo\": must be a standard resource for quota");
    json_decref(c);
}

static void test_storage_not_quota(void **state)
{
    (void)state;
    expect_one("{\"spec\":{\"hard\":{\"storage\":\"1Gi\"}}}", "spec.hard[storage]",
               "Invalid value: \"storage\": must be a standard resource for quota");
}

static void test_unqualified_name(void **state)
{
    (void)state;
    /* IsQualifiedName fails, then (no '/') the quota-name check adds its own. */
    json_t *c = run("{\"spec\":{\"hard\":{\"-bad\":\"1\"}}}", NULL);
    assert_int_equal(json_array_size(c), 2);
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(c, 0), "message")),
                           "Invalid value: \"-bad\": name part must consist of"));
    expect_cause(c, 1, "FieldValueInvalid", "spec.hard[-bad]",
                 "Invalid value: \"-bad\": must be a standard resource for quota");
    json_decref(c);
    /* more than one '/': the qualified-name message only */
    expect_one("{\"spec\":{\"hard\":{\"a/b/c\":\"1\"}}}", "spec.hard[a/b/c]",
               "Invalid value: \"a/b/c\": " QNAME_PARTS_MSG);
}

static void test_negative(void **state)
{
    (void)state;
    expect_one("{\"spec\":{\"hard\":{\"cpu\":\"-1\"}}}", "spec.hard[cpu]",
               "Invalid value: \"-1\": must be greater than or equal to 0");
    /* canonical form is printed, not the input */
    expect_one("{\"spec\":{\"hard\":{\"memory\":\"-1024Mi\"}}}", "spec.hard[memory]",
               "Invalid value: \"-1Gi\": must be greater than or equal to 0");
    /* negative and fractional integer resource: both causes */
    json_t *c = run("{\"spec\":{\"hard\":{\"pods\":\"-500m\"}}}", NULL);
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, "FieldValueInvalid", "spec.hard[pods]",
                 "Invalid value: \"-500m\": must be greater than or equal to 0");
    expect_cause(c, 1, "FieldValueInvalid", "spec.hard[pods]",
                 "Invalid value: \"-500m\": must be an integer");
    json_decref(c);
    expect_none("{\"spec\":{\"hard\":{\"cpu\":\"0\"}}}", NULL);
}

static void test_integer_resources(void **state)
{
    (void)state;
    static const char *const ints[] = {
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    };
    char json[256], field[128];
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        snprintf(json, sizeof json, "{\"spec\":{\"hard\":{\"%s\":\"1500m\"}}}", ints[i]);
        snprintf(field, sizeof field, "spec.hard[%s]", ints[i]);
        expect_one(json, field, "Invalid value: \"1500m\": must be an integer");
        snprintf(json, sizeof json, "{\"spec\":{\"hard\":{\"%s\":\"2\"}}}", ints[i]);
        expect_none(json, NULL);
    }
    /* extended resources are integers; requests.<ext> and native names are not */
    expect_one("{\"spec\":{\"hard\":{\"example.com/foo\":\"500m\"}}}", "spec.hard[example.com/foo]",
               "Invalid value: \"500m\": must be an integer");
    /* upstream quirk: count/pods is an "extended" name, so it must be whole too */
    expect_one("{\"spec\":{\"hard\":{\"count/pods\":\"1500m\"}}}", "spec.hard[count/pods]",
               "Invalid value: \"1500m\": must be an integer");
    expect_none("{\"spec\":{\"hard\":{\"requests.example.com/foo\":\"500m\",\"cpu\":\"1500m\","
                "\"kubernetes.io/foo\":\"500m\",\"memory\":\"1.5\"}}}",
                NULL);
    /* integral values in other notations are accepted */
    expect_none("{\"spec\":{\"hard\":{\"pods\":\"1k\",\"secrets\":\"2000m\"}}}", NULL);
}

static void test_unparsable_value(void **state)
{
    (void)state;
    expect_one("{\"spec\":{\"hard\":{\"cpu\":\"abc\"}}}", "spec.hard[cpu]",
               "Invalid value: \"abc\": quantities must match the regular expression "
               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

static void test_scopes_unsupported(void **state)
{
    (void)state;
    expect_one("{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopes\":[\"Foo\"]}}", "spec.scopes",
               "Invalid value: [\"Foo\"]: unsupported scope");
    /* an unknown scope accepts any resource: no "applied to resource" cause */
    json_t *c =
        run("{\"spec\":{\"hard\":{\"cpu\":\"1\",\"storage\":\"1\"},\"scopes\":[\"Foo\"]}}", NULL);
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, "FieldValueInvalid", "spec.hard[storage]",
                 "Invalid value: \"storage\": must be a standard resource for quota");
    expect_cause(c, 1, "FieldValueInvalid", "spec.scopes",
                 "Invalid value: [\"Foo\"]: unsupported scope");
    json_decref(c);
}

static void test_scope_applied_to_resource(void **state)
{
    (void)state;
    expect_one("{\"spec\":{\"hard\":{\"pods\":\"1\",\"cpu\":\"1\"},\"scopes\":[\"BestEffort\"]}}",
               "spec.scopes",
               "Invalid value: [\"BestEffort\"]: unsupported scope applied to resource");
    /* one cause per offending key */
    json_t *c = run("{\"spec\":{\"hard\":{\"cpu\":\"1\",\"memory\":\"1\"},\"scopes\":["
                    "\"BestEffort\"]}}",
                    NULL);
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 1, "FieldValueInvalid", "spec.scopes",
                 "Invalid value: [\"BestEffort\"]: unsupported scope applied to resource");
    json_decref(c);
    /* ephemeral-storage and hugepages are not pod-scope resources */
    expect_one("{\"spec\":{\"hard\":{\"ephemeral-storage\":\"1Gi\"},\"scopes\":[\"Terminating\"]}}",
               "spec.scopes",
               "Invalid value: [\"Terminating\"]: unsupported scope applied to resource");
    expect_one("{\"spec\":{\"hard\":{\"requests.hugepages-2Mi\":\"1Gi\"},\"scopes\":["
               "\"NotBestEffort\"]}}",
               "spec.scopes",
               "Invalid value: [\"NotBestEffort\"]: unsupported scope applied to resource");
    /* names with '/' are never rejected here */
    expect_none("{\"spec\":{\"hard\":{\"count/pods\":\"1\",\"example.com/gpu\":\"1\"},"
                "\"scopes\":[\"BestEffort\"]}}",
                NULL);
    expect_none("{\"spec\":{\"hard\":{\"pods\":\"1\",\"cpu\":\"1\",\"memory\":\"1\","
                "\"requests.cpu\":\"1\",\"requests.memory\":\"1\",\"limits.cpu\":\"1\","
                "\"limits.memory\":\"1\"},\"scopes\":[\"NotTerminating\",\"PriorityClass\","
                "\"CrossNamespacePodAffinity\",\"NotBestEffort\"]}}",
                NULL);
    expect_none("{\"spec\":{\"hard\":{\"persistentvolumeclaims\":\"1\",\"requests.storage\":"
                "\"1Gi\"},\"scopes\":[\"VolumeAttributesClass\"]}}",
                NULL);
    expect_one("{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopes\":[\"VolumeAttributesClass\"]}}",
               "spec.scopes",
               "Invalid value: [\"VolumeAttributesClass\"]: unsupported scope applied to resource");
}

static void test_scopes_conflicting(void **state)
{
    (void)state;
    expect_one(
        "{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopes\":[\"BestEffort\",\"NotBestEffort\"]}}",
        "spec.scopes", "Invalid value: [\"BestEffort\",\"NotBestEffort\"]: conflicting scopes");
    expect_one("{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopes\":[\"Terminating\","
               "\"NotTerminating\"]}}",
               "spec.scopes",
               "Invalid value: [\"Terminating\",\"NotTerminating\"]: conflicting scopes");
    /* duplicates are not an error upstream */
    expect_none("{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopes\":[\"BestEffort\",\"BestEffort\"]}}",
                NULL);
}

#define SEL_PATH "spec.scopeSelector.matchExpressions"

static void test_selector_scope_name(void **state)
{
    (void)state;
    expect_one("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"Foo\","
               "\"operator\":\"Exists\"}]}}}",
               SEL_PATH ".scopeName", "Invalid value: \"Foo\": unsupported scope");
}

static void test_selector_applied_to_resource(void **state)
{
    (void)state;
    expect_one("{\"spec\":{\"hard\":{\"cpu\":\"1\"},\"scopeSelector\":{\"matchExpressions\":[{"
               "\"scopeName\":\"BestEffort\",\"operator\":\"Exists\"}]}}}",
               SEL_PATH,
               "Invalid value: {\"matchExpressions\":[{\"scopeName\":\"BestEffort\",\"operator\":"
               "\"Exists\"}]}: unsupported scope applied to resource");
}

static void test_selector_operator_exists_only(void **state)
{
    (void)state;
    static const char *const scopes[] = {"Terminating", "NotTerminating", "BestEffort",
                                         "NotBestEffort", "CrossNamespacePodAffinity"};
    char json[256];
    for (size_t i = 0; i < 5; i++) {
        snprintf(json, sizeof json,
                 "{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"%s\","
                 "\"operator\":\"In\",\"values\":[\"x\"]}]}}}",
                 scopes[i]);
        expect_one(json, SEL_PATH ".operator", "Invalid value: \"In\": " RQ_MSG_OP_EXISTS);
        snprintf(json, sizeof json,
                 "{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"%s\","
                 "\"operator\":\"Exists\"}]}}}",
                 scopes[i]);
        expect_none(json, NULL);
    }
    expect_one("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"BestEffort\","
               "\"operator\":\"DoesNotExist\"}]}}}",
               SEL_PATH ".operator",
               "Invalid value: \"DoesNotExist\": must be 'Exists' when scope is any of "
               "ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, "
               "ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or "
               "ResourceQuotaScopeCrossNamespacePodAffinity");
}

static void test_selector_values(void **state)
{
    (void)state;
    json_t *c = run("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                    "\"PriorityClass\",\"operator\":\"In\"}]}}}",
                    NULL);
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, "FieldValueRequired", SEL_PATH ".values",
                 "Required value: must be at least one value when `operator` is 'In' or 'NotIn' "
                 "for scope selector");
    json_decref(c);
    c = run("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
            "\"PriorityClass\",\"operator\":\"NotIn\",\"values\":[]}]}}}",
            NULL);
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, "FieldValueRequired", SEL_PATH ".values",
                 "Required value: " RQ_MSG_VALUES_REQUIRED);
    json_decref(c);
    expect_one("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
               "\"PriorityClass\",\"operator\":\"Exists\",\"values\":[\"a\"]}]}}}",
               SEL_PATH ".values",
               "Invalid value: [\"a\"]: must be no value when `operator` is 'Exist' or "
               "'DoesNotExist' for scope selector");
    expect_one("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
               "\"PriorityClass\",\"operator\":\"DoesNotExist\",\"values\":[\"a\",\"b\"]}]}}}",
               SEL_PATH ".values", "Invalid value: [\"a\",\"b\"]: " RQ_MSG_VALUES_FORBIDDEN);
    expect_none("{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopeSelector\":{\"matchExpressions\":[{"
                "\"scopeName\":\"PriorityClass\",\"operator\":\"In\",\"values\":[\"high\"]},{"
                "\"scopeName\":\"PriorityClass\",\"operator\":\"NotIn\",\"values\":[\"low\"]},{"
                "\"scopeName\":\"PriorityClass\",\"operator\":\"DoesNotExist\"}]}}}",
                NULL);
    /* Values are not checked as label values here (only when matched). */
    expect_none("{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopeSelector\":{\"matchExpressions\":[{"
                "\"scopeName\":\"PriorityClass\",\"operator\":\"In\",\"values\":[\"not a "
                "label!\"]}]}}}",
                NULL);
}

static void test_selector_bad_operator(void **state)
{
    (void)state;
    expect_one("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
               "\"PriorityClass\",\"operator\":\"Foo\"}]}}}",
               SEL_PATH ".operator", "Invalid value: \"Foo\": not a valid selector operator");
    /* a pod scope with a bad operator gets both operator causes */
    json_t *c = run("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                    "\"BestEffort\",\"operator\":\"Gt\"}]}}}",
                    NULL);
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, "FieldValueInvalid", SEL_PATH ".operator",
                 "Invalid value: \"Gt\": " RQ_MSG_OP_EXISTS);
    expect_cause(c, 1, "FieldValueInvalid", SEL_PATH ".operator",
                 "Invalid value: \"Gt\": not a valid selector operator");
    json_decref(c);
}

static void test_selector_conflicting(void **state)
{
    (void)state;
    /* upstream prints spec.scopes (here absent: null) as the value */
    expect_one("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"BestEffort\","
               "\"operator\":\"Exists\"},{\"scopeName\":\"NotBestEffort\",\"operator\":"
               "\"Exists\"}]}}}",
               SEL_PATH, "Invalid value: null: conflicting scopes");
    expect_one("{\"spec\":{\"scopes\":[\"PriorityClass\"],\"scopeSelector\":{\"matchExpressions\":["
               "{\"scopeName\":\"Terminating\",\"operator\":\"Exists\"},{\"scopeName\":"
               "\"NotTerminating\",\"operator\":\"Exists\"}]}}}",
               SEL_PATH, "Invalid value: [\"PriorityClass\"]: conflicting scopes");
}

static void test_update_scopes_immutable(void **state)
{
    (void)state;
    const char *old = "{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopes\":[\"Terminating\","
                      "\"BestEffort\"]}}";
    json_t *c = run("{\"spec\":{\"hard\":{\"pods\":\"1\"},\"scopes\":[\"NotTerminating\"]}}", old);
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, "FieldValueInvalid", "spec.scopes",
                 "Invalid value: [\"NotTerminating\"]: field is immutable");
    json_decref(c);
    c = run("{\"spec\":{\"hard\":{\"pods\":\"1\"}}}", old);
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, "FieldValueInvalid", "spec.scopes",
                 "Invalid value: null: field is immutable");
    json_decref(c);
    /* same set in another order, a changed hard and a changed selector are fine */
    expect_none("{\"spec\":{\"hard\":{\"pods\":\"5\"},\"scopes\":[\"BestEffort\",\"Terminating\"],"
                "\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":\"PriorityClass\","
                "\"operator\":\"Exists\"}]}}}",
                old);
    expect_none("{\"spec\":{\"hard\":{\"pods\":\"5\"}}}", "{\"spec\":{\"scopes\":[]}}");
}

/* The status subresource does not compare scopes (upstream's
 * ValidateResourceQuotaStatusUpdate; the registry keeps the stored spec). */
static void test_status_update_ignores_spec(void **state)
{
    (void)state;
    const char *old = "{\"spec\":{\"scopes\":[\"BestEffort\"]}}";
    json_t *c = run_sub("{\"spec\":{\"scopes\":[\"NotBestEffort\"]},\"status\":{\"used\":{"
                        "\"pods\":\"-1\"}}}",
                        old, "status");
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, "FieldValueInvalid", "status.used[pods]",
                 "Invalid value: \"-1\": must be greater than or equal to 0");
    json_decref(c);
}

/* allot only: JSON of the wrong type is refused (upstream: 400 at decoding),
 * one cause, and nothing else is read from the object. */
static void expect_type(const char *json, const char *field, const char *msg)
{
    json_t *c = run(json, NULL);
    if (json_array_size(c) != 1) {
        char *d = json_dumps(c, 0);
        fail_msg("%s: %s", json, d);
    }
    expect_cause(c, 0, "FieldValueTypeInvalid", field, msg);
    json_decref(c);
}

static void test_wrong_types(void **state)
{
    (void)state;
    expect_type("{\"spec\":[1]}", "spec", "Invalid value: [1]: must be of type object");
    expect_type("{\"spec\":{\"hard\":[1,2]}}", "spec.hard",
                "Invalid value: [1,2]: must be of type object");
    expect_type("{\"spec\":{\"hard\":\"cpu\"}}", "spec.hard",
                "Invalid value: \"cpu\": must be of type object");
    expect_type("{\"spec\":{\"scopes\":\"BestEffort\"}}", "spec.scopes",
                "Invalid value: \"BestEffort\": must be of type array");
    expect_type("{\"spec\":{\"scopes\":[7]}}", "spec.scopes[0]",
                "Invalid value: 7: must be of type string");
    expect_type("{\"spec\":{\"scopeSelector\":[]}}", "spec.scopeSelector",
                "Invalid value: []: must be of type object");
    expect_type("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":{}}}}",
                "spec.scopeSelector.matchExpressions", "Invalid value: {}: must be of type array");
    expect_type("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                "\"PriorityClass\",\"operator\":\"In\",\"values\":[1]}]}}}",
                "spec.scopeSelector.matchExpressions[0].values[0]",
                "Invalid value: 1: must be of type string");
    expect_type("{\"spec\":{\"scopeSelector\":{\"matchExpressions\":[{\"scopeName\":"
                "true,\"operator\":\"Exists\"}]}}}",
                "spec.scopeSelector.matchExpressions[0].scopeName",
                "Invalid value: true: must be of type string");
    expect_type("{\"status\":{\"used\":[]}}", "status.used",
                "Invalid value: []: must be of type object");
    /* a value that is no quantity: the parser's text, as for "abc" */
    expect_one("{\"spec\":{\"hard\":{\"cpu\":{}}}}", "spec.hard[cpu]",
               "Invalid value: {}: quantities must match the regular expression "
               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
}

static void test_status(void **state)
{
    (void)state;
    json_t *c = run("{\"spec\":{\"hard\":{\"pods\":\"1\"}},\"status\":{\"hard\":{\"pods\":\"-1\"},"
                    "\"used\":{\"foo\":\"1\",\"services\":\"0.5\"}}}",
                    NULL);
    assert_int_equal(json_array_size(c), 4);
    expect_cause(c, 0, "FieldValueInvalid", "status.hard[pods]",
                 "Invalid value: \"-1\": must be greater than or equal to 0");
    expect_cause(c, 1, "FieldValueInvalid", "status.used[foo]",
                 "Invalid value: \"foo\": " RQ_MSG_NOT_STANDARD);
    expect_cause(c, 2, "FieldValueInvalid", "status.used[foo]",
                 "Invalid value: \"foo\": " RQ_MSG_NOT_QUOTA);
    expect_cause(c, 3, "FieldValueInvalid", "status.used[services]",
                 "Invalid value: \"500m\": must be an integer");
    json_decref(c);
}

static void test_envelope(void **state)
{
    (void)state;
    json_t *c = run("{\"spec\":{\"hard\":{\"foo\":\"1\"}}}", NULL);
    api_err e;
    api_err_init(&e);
    assert_int_equal(api_err_invalid(&e, "", "ResourceQuota", "q", c), -1);
    assert_int_equal(api_errcode_http(e.code), 422);
    assert_string_equal(api_errcode_reason(e.code), "Invalid");
    assert_string_equal(e.message,
                        "ResourceQuota \"q\" is invalid: [spec.hard[foo]: Invalid value: \"foo\": "
                        "must be a standard resource type or fully qualified, spec.hard[foo]: "
                        "Invalid value: \"foo\": must be a standard resource for quota]");
    assert_int_equal(json_array_size(json_object_get(e.details, "causes")), 2);
    api_err_clear(&e);
}

static void test_predicates(void **state)
{
    (void)state;
    assert_true(rq_is_standard_resource_name("storage"));
    assert_false(rq_is_standard_quota_resource_name("storage"));
    assert_true(rq_is_standard_quota_resource_name("requests.hugepages-2Mi"));
    assert_false(rq_is_standard_quota_resource_name("limits.hugepages-2Mi"));
    assert_true(rq_is_extended_resource_name("example.com/gpu"));
    assert_false(rq_is_extended_resource_name("requests.example.com/gpu"));
    assert_false(rq_is_extended_resource_name("kubernetes.io/foo"));
    assert_false(rq_is_extended_resource_name("cpu"));
    assert_true(rq_is_integer_resource_name("count/pods"));
    assert_false(rq_is_integer_resource_name("cpu"));
    assert_true(rq_is_native_resource("cpu"));
    assert_true(rq_is_native_resource("foo.kubernetes.io/bar"));
    assert_false(rq_is_overcommit_allowed("hugepages-2Mi"));
    assert_false(rq_is_overcommit_allowed("example.com/gpu"));
    assert_true(rq_is_overcommit_allowed("cpu"));
    assert_true(rq_is_standard_container_resource_name("hugepages-1Gi"));
    assert_false(rq_is_standard_container_resource_name("pods"));
    assert_true(rq_scope_valid_for_resource("BestEffort", "pods"));
    assert_false(rq_scope_valid_for_resource("BestEffort", "cpu"));
    assert_true(rq_scope_valid_for_resource("Unknown", "anything"));
    assert_true(rq_is_standard_scope("CrossNamespacePodAffinity"));
    assert_false(rq_is_standard_scope("bestEffort"));
}

/* strategy.go WarningsOnCreate. */
static void expect_warnings(const char *hard, const char *want)
{
    char obj[1024];
    snprintf(obj, sizeof obj, "{\"spec\":{\"hard\":%s}}", hard);
    json_t *o = J(obj), *w = json_array();
    resourcequota_warnings(o, w);
    char got[2048] = "";
    size_t i;
    json_t *v;
    json_array_foreach(w, i, v)
    {
        if (i) strcat(got, "|");
        strcat(got, json_string_value(v));
    }
    if (strcmp(got, want)) fail_msg("warnings for %s: got '%s', want '%s'", hard, got, want);
    json_decref(w);
    json_decref(o);
}

static void test_warnings_on_create(void **state)
{
    (void)state;
    expect_warnings("{'requests.cpu':'2','limits.cpu':'1'}",
                    "ResourceQuota requests.cpu (2) should be less than limits.cpu (1)");
    expect_warnings("{'requests.cpu':'1','limits.cpu':'1'}", ""); /* equal is fine */
    expect_warnings("{'requests.cpu':'500m','limits.cpu':'1'}", "");
    expect_warnings("{'requests.cpu':'2'}", "");
    /* bare cpu/memory stand for the request when requests.X is absent */
    expect_warnings("{'cpu':'3','limits.cpu':'2'}",
                    "ResourceQuota cpu (3) should be less than limits.cpu (2)");
    expect_warnings("{'cpu':'3','requests.cpu':'1','limits.cpu':'2'}", "");
    /* canonical values, and every known resource in upstream's order */
    expect_warnings("{'requests.memory':'2048Mi','limits.memory':'1Gi','requests.storage':'2Ti',"
                    "'limits.storage':'1Ti','requests.ephemeral-storage':'2G',"
                    "'limits.ephemeral-storage':'1G','requests.cpu':'1500m','limits.cpu':'1'}",
                    "ResourceQuota requests.cpu (1500m) should be less than limits.cpu (1)|"
                    "ResourceQuota requests.memory (2Gi) should be less than limits.memory (1Gi)|"
                    "ResourceQuota requests.storage (2Ti) should be less than limits.storage "
                    "(1Ti)|"
                    "ResourceQuota requests.ephemeral-storage (2G) should be less than "
                    "limits.ephemeral-storage (1G)");
    /* bare storage is not a request name; other resources are not compared */
    expect_warnings("{'storage':'2Ti','limits.storage':'1Ti','requests.nvidia.com/gpu':'2',"
                    "'limits.nvidia.com/gpu':'1'}",
                    "");
    expect_warnings("{'requests.cpu':'bad','limits.cpu':'1'}", ""); /* validation reports it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_names),
        cmocka_unit_test(test_unknown_name_two_causes),
        cmocka_unit_test(test_storage_not_quota),
        cmocka_unit_test(test_unqualified_name),
        cmocka_unit_test(test_negative),
        cmocka_unit_test(test_integer_resources),
        cmocka_unit_test(test_unparsable_value),
        cmocka_unit_test(test_scopes_unsupported),
        cmocka_unit_test(test_scope_applied_to_resource),
        cmocka_unit_test(test_scopes_conflicting),
        cmocka_unit_test(test_selector_scope_name),
        cmocka_unit_test(test_selector_applied_to_resource),
        cmocka_unit_test(test_selector_operator_exists_only),
        cmocka_unit_test(test_selector_values),
        cmocka_unit_test(test_selector_bad_operator),
        cmocka_unit_test(test_selector_conflicting),
        cmocka_unit_test(test_update_scopes_immutable),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_status_update_ignores_spec),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_predicates),
        cmocka_unit_test(test_warnings_on_create),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
