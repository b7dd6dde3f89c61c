/* test_limitrange.c - LimitRange validation (ValidateLimitRange) and the
 * LimitRanger admission functions: defaulting with its annotation, and the
 * 403 texts for min/max/ratio on containers, pods and PVCs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include "api/limitrange.h"
#include "api/status.h"

#include <stdlib.h>
#include <string.h>

static json_t *load(const char *s)
{
    json_error_t err;
    json_t *j = json_loads(s, 0, &err);
    if (!j) print_error("bad json: %s: %s\n", err.text, s);
    assert_non_null(j);
    return j;
}

/* ---- validation ---- */

static json_t *validate(const char *limits)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "{\"metadata\":{\"name\":\"lr\"},\"spec\":{\"limits\":%s}}", limits);
    json_t *lr = load(buf), *causes = json_array();
    limitrange_validate(lr, NULL, causes);
    json_decref(lr);
    return causes;
}

static void expect_one(const char *limits, const char *reason, const char *field, const char *msg)
{
    json_t *c = validate(limits);
    if (json_array_size(c) != 1) {
        char *s = json_dumps(c, 0);
        print_error("causes: %s\n", s);
        free(s);
    }
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, reason, field, msg);
    json_decref(c);
}

static void expect_valid(const char *limits)
{
    json_t *c = validate(limits);
    if (json_array_size(c)) {
        char *s = json_dumps(c, 0);
        print_error("causes: %s\n", s);
        free(s);
    }
    assert_int_equal(json_array_size(c), 0);
    json_decref(c);
}

static void test_validate_ok(void **state)
{
    (void)state;
    expect_valid("[{\"type\":\"Container\",\"min\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"},"
                 "\"max\":{\"cpu\":\"2\",\"memory\":\"1Gi\"},\"default\":{\"cpu\":\"1\"},"
                 "\"defaultRequest\":{\"cpu\":\"500m\"},\"maxLimitRequestRatio\":{\"cpu\":\"4\"}},"
                 "{\"type\":\"Pod\",\"max\":{\"cpu\":\"4\"}},"
                 "{\"type\":\"PersistentVolumeClaim\",\"min\":{\"storage\":\"1Gi\"}}]");
    expect_valid("[]");
    /* equal bounds and ratio exactly max/min are fine */
    expect_valid("[{\"type\":\"Container\",\"min\":{\"cpu\":\"1\"},\"max\":{\"cpu\":\"2\"},"
                 "\"maxLimitRequestRatio\":{\"cpu\":\"2\"},\"default\":{\"cpu\":\"2\"},"
                 "\"defaultRequest\":{\"cpu\":\"1\"}}]");
}

static void test_validate_order_rules(void **state)
{
    (void)state;
    expect_one("[{\"type\":\"Container\",\"min\":{\"cpu\":\"2\"},\"max\":{\"cpu\":\"1\"}}]",
               "FieldValueInvalid", "spec.limits[0].min[cpu]",
               "Invalid value: \"2\": min value 2 is greater than max value 1");
    expect_one("[{\"type\":\"Container\",\"min\":{\"cpu\":\"100m\"},\"defaultRequest\":{\"cpu\":"
               "\"50m\"}}]",
               "FieldValueInvalid", "spec.limits[0].defaultRequest[cpu]",
               "Invalid value: \"50m\": min value 100m is greater than default request value 50m");
    expect_one("[{\"type\":\"Container\",\"max\":{\"memory\":\"1Gi\"},\"defaultRequest\":{"
               "\"memory\":\"2Gi\"}}]",
               "FieldValueInvalid", "spec.limits[0].defaultRequest[memory]",
               "Invalid value: \"2Gi\": default request value 2Gi is greater than max value 1Gi");
    expect_one("[{\"type\":\"Container\",\"default\":{\"cpu\":\"1\"},\"defaultRequest\":{\"cpu\":"
               "\"1500m\"}}]",
               "FieldValueInvalid", "spec.limits[0].defaultRequest[cpu]",
               "Invalid value: \"1500m\": default request value 1500m is greater than default "
               "limit value 1");
    /* upstream shows min, then max, as the bad value of spec...default[k] */
    expect_one("[{\"type\":\"Container\",\"min\":{\"cpu\":\"1\"},\"default\":{\"cpu\":\"500m\"}}]",
               "FieldValueInvalid", "spec.limits[0].default[cpu]",
               "Invalid value: \"1\": min value 1 is greater than default value 500m");
    expect_one("[{\"type\":\"Container\",\"max\":{\"cpu\":\"1\"},\"default\":{\"cpu\":\"2\"}}]",
               "FieldValueInvalid", "spec.limits[0].default[cpu]",
               "Invalid value: \"1\": default value 2 is greater than max value 1");
}

static void test_validate_ratio(void **state)
{
    (void)state;
    expect_one("[{\"type\":\"Container\",\"maxLimitRequestRatio\":{\"cpu\":\"500m\"}}]",
               "FieldValueInvalid", "spec.limits[0].maxLimitRequestRatio[cpu]",
               "Invalid value: \"500m\": ratio 500m is less than 1");
    expect_one("[{\"type\":\"Container\",\"min\":{\"cpu\":\"1\"},\"max\":{\"cpu\":\"2\"},"
               "\"maxLimitRequestRatio\":{\"cpu\":\"3\"}}]",
               "FieldValueInvalid", "spec.limits[0].maxLimitRequestRatio[cpu]",
               "Invalid value: \"3\": ratio 3 is greater than max/min = 2.000000");
    expect_one("[{\"type\":\"Pod\",\"min\":{\"memory\":\"3Gi\"},\"max\":{\"memory\":\"4Gi\"},"
               "\"maxLimitRequestRatio\":{\"memory\":\"1500m\"}}]",
               "FieldValueInvalid", "spec.limits[0].maxLimitRequestRatio[memory]",
               "Invalid value: \"1500m\": ratio 1500m is greater than max/min = 1.333333");
}

static void test_validate_types(void **state)
{
    (void)state;
    expect_one("[{\"type\":\"Pod\",\"max\":{\"cpu\":\"1\"},\"default\":{\"cpu\":\"1\"}}]",
               "FieldValueForbidden", "spec.limits[0].default",
               "Forbidden: may not be specified when `type` is 'Pod'");
    expect_one("[{\"type\":\"Pod\",\"defaultRequest\":{\"cpu\":\"1\"}}]", "FieldValueForbidden",
               "spec.limits[0].defaultRequest",
               "Forbidden: may not be specified when `type` is 'Pod'");
    expect_one("[{\"type\":\"Container\"},{\"type\":\"Container\"}]", "FieldValueDuplicate",
               "spec.limits[1].type", "Duplicate value: \"Container\"");
    expect_one("[{\"type\":\"Foo\"}]", "FieldValueInvalid", "spec.limits[0].type",
               "Invalid value: \"Foo\": must be a standard limit type or fully qualified");
    expect_valid("[{\"type\":\"example.com/Foo\"}]");
    expect_one("[{\"type\":\"PersistentVolumeClaim\",\"max\":{\"requests.storage\":\"1Gi\"}}]",
               "FieldValueRequired", "spec.limits[0].limits",
               "Required value: either minimum or maximum storage value is required, but neither "
               "was provided");
}

static void test_validate_resource_names(void **state)
{
    (void)state;
    expect_one("[{\"type\":\"Container\",\"max\":{\"pods\":\"1\"}}]", "FieldValueInvalid",
               "spec.limits[0].max[pods]",
               "Invalid value: \"pods\": must be a standard resource for containers");
    expect_valid(
        "[{\"type\":\"Container\",\"max\":{\"hugepages-2Mi\":\"1Gi\",\"ephemeral-storage\":"
        "\"1Gi\",\"example.com/gpu\":\"2\"}}]");
    /* non-container types take any standard resource name */
    expect_valid("[{\"type\":\"PersistentVolumeClaim\",\"max\":{\"storage\":\"10Gi\"},\"min\":{"
                 "\"storage\":\"1Gi\"}}]");
    expect_one("[{\"type\":\"PersistentVolumeClaim\",\"max\":{\"storage\":\"1Gi\",\"foo\":\"1\"}}]",
               "FieldValueInvalid", "spec.limits[0].max[foo]",
               "Invalid value: \"foo\": must be a standard resource type or fully qualified");
    /* resources that cannot overcommit need default == defaultRequest */
    expect_one("[{\"type\":\"Container\",\"default\":{\"example.com/gpu\":\"2\"},"
               "\"defaultRequest\":{\"example.com/gpu\":\"1\"}}]",
               "FieldValueInvalid", "spec.limits[0].defaultRequest[example.com/gpu]",
               "Invalid value: \"1\": default value 2 must equal to defaultRequest value 1 in "
               "example.com/gpu");
}

/* Values that are no quantity, and (allot only; upstream refuses them when it
 * decodes the body) JSON of the wrong type: one cause each, nothing stored. */
static void test_validate_bad_json(void **state)
{
    (void)state;
    expect_one("[{\"type\":\"Container\",\"max\":{\"cpu\":\"abc\"}}]", "FieldValueInvalid",
               "spec.limits[0].max[cpu]",
               "Invalid value: \"abc\": quantities must match the regular expression "
               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    expect_one("{}", "FieldValueTypeInvalid", "spec.limits",
               "Invalid value: {}: must be of type array");
    expect_one("[7]", "FieldValueTypeInvalid", "spec.limits[0]",
               "Invalid value: 7: must be of type object");
    expect_one("[{\"type\":[\"Pod\"]}]", "FieldValueTypeInvalid", "spec.limits[0].type",
               "Invalid value: [\"Pod\"]: must be of type string");
    expect_one("[{\"type\":\"Container\",\"min\":[\"cpu\"]}]", "FieldValueTypeInvalid",
               "spec.limits[0].min", "Invalid value: [\"cpu\"]: must be of type object");
    expect_one("[{\"type\":\"Pod\",\"default\":\"1\"}]", "FieldValueTypeInvalid",
               "spec.limits[0].default", "Invalid value: \"1\": must be of type object");
    json_t *lr = load("{\"spec\":[]}"), *c = json_array();
    limitrange_validate(lr, NULL, c);
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, "FieldValueTypeInvalid", "spec",
                 "Invalid value: []: must be of type object");
    json_decref(c);
    json_decref(lr);
    /* min 0: max/min is +Inf in Go, so no ratio is too large */
    expect_valid("[{\"type\":\"Container\",\"min\":{\"cpu\":\"0\"},\"max\":{\"cpu\":\"1\"},"
                 "\"maxLimitRequestRatio\":{\"cpu\":\"100\"}}]");
}

/* ---- defaulting ---- */

static const char *annotation(const json_t *pod)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(pod, "metadata"), "annotations"), LIMITRANGE_ANNOTATION));
}

static const char *res(const json_t *pod, const char *list, size_t i, const char *which,
                       const char *name)
{
    const json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"), list), i);
    return json_string_value(
        json_object_get(json_object_get(json_object_get(c, "resources"), which), name));
}

#define DEFAULTS_LR                                                                                \
    "{\"spec\":{\"limits\":[{\"type\":\"Container\",\"default\":{\"cpu\":\"0.5\",\"memory\":"      \
    "\"512Mi\"},\"defaultRequest\":{\"cpu\":\"100m\",\"memory\":\"256Mi\"}}]}}"

static void test_default_pod(void **state)
{
    (void)state;
    json_t *lr = load(DEFAULTS_LR);
    json_t *pod = load("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":"
                       "\"nginx\"}]}}");
    const json_t *lrs[] = {lr};
    assert_int_equal(limitrange_default_pod(pod, lrs, 1), 4);
    assert_string_equal(annotation(pod), "LimitRanger plugin set: cpu, memory request for "
                                         "container nginx; cpu, memory limit for container nginx");
    assert_string_equal(res(pod, "containers", 0, "requests", "cpu"), "100m");
    assert_string_equal(res(pod, "containers", 0, "requests", "memory"), "256Mi");
    assert_string_equal(res(pod, "containers", 0, "limits", "cpu"), "500m"); /* canonical */
    assert_string_equal(res(pod, "containers", 0, "limits", "memory"), "512Mi");
    json_decref(pod);
    json_decref(lr);
}

static void test_default_partial_and_init(void **state)
{
    (void)state;
    json_t *lr = load(DEFAULTS_LR);
    json_t *pod = load(
        "{\"metadata\":{\"name\":\"x\",\"annotations\":{\"a\":\"b\"}},\"spec\":{"
        "\"initContainers\":[{\"name\":\"init\",\"resources\":{\"requests\":{\"cpu\":\"1\","
        "\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}],"
        "\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{\"cpu\":\"2\"},\"requests\":{"
        "\"cpu\":\"2\"}}},{\"name\":\"b\",\"resources\":{\"requests\":{\"memory\":\"1Gi\"}}}]}}");
    const json_t *lrs[] = {lr};
    assert_int_equal(limitrange_default_pod(pod, lrs, 1), 5);
    assert_string_equal(annotation(pod),
                        "LimitRanger plugin set: memory request for container a; memory limit for "
                        "container a; cpu request for container b; cpu, memory limit for "
                        "container b");
    assert_string_equal(res(pod, "containers", 0, "limits", "cpu"), "2");
    assert_string_equal(res(pod, "containers", 1, "requests", "memory"), "1Gi");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(pod, "metadata"), "annotations"), "a")),
                        "b");
    json_decref(pod);

    pod = load("{\"spec\":{\"initContainers\":[{\"name\":\"init\"}],\"containers\":[{\"name\":"
               "\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1\"},\"limits\":{"
               "\"cpu\":\"1\",\"memory\":\"1\"}}}]}}");
    assert_int_equal(limitrange_default_pod(pod, lrs, 1), 4);
    assert_string_equal(annotation(pod),
                        "LimitRanger plugin set: cpu, memory request for init container init; "
                        "cpu, memory limit for init container init");
    json_decref(pod);
    json_decref(lr);
}

static void test_default_nothing(void **state)
{
    (void)state;
    json_t *lr = load("{\"spec\":{\"limits\":[{\"type\":\"Container\",\"max\":{\"cpu\":\"1\"}},"
                      "{\"type\":\"Pod\",\"max\":{\"cpu\":\"1\"}}]}}");
    json_t *pod = load("{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    const json_t *lrs[] = {lr};
    assert_int_equal(limitrange_default_pod(pod, lrs, 1), 0);
    assert_null(json_object_get(pod, "metadata"));
    assert_null(json_object_get(
        json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
        "resources"));
    assert_int_equal(limitrange_default_pod(pod, NULL, 0), 0);
    json_decref(pod);
    json_decref(lr);
}

static void test_default_two_limitranges(void **state)
{
    (void)state;
    json_t *a = load("{\"spec\":{\"limits\":[{\"type\":\"Container\",\"defaultRequest\":{\"cpu\":"
                     "\"100m\"}}]}}");
    json_t *b = load("{\"spec\":{\"limits\":[{\"type\":\"Container\",\"defaultRequest\":{\"cpu\":"
                     "\"200m\",\"memory\":\"1Gi\"}}]}}");
    json_t *pod = load("{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    const json_t *lrs[] = {a, b};
    assert_int_equal(limitrange_default_pod(pod, lrs, 2), 2);
    /* the first range wins cpu; the last one that set something writes the annotation */
    assert_string_equal(res(pod, "containers", 0, "requests", "cpu"), "100m");
    assert_string_equal(annotation(pod), "LimitRanger plugin set: memory request for container c");
    json_decref(pod);
    json_decref(a);
    json_decref(b);
}

/* ---- enforcement ---- */

static void expect_pod_forbidden(const char *lrjson, const char *podjson, const char *msg)
{
    json_t *lr = load(lrjson), *pod = load(podjson);
    const json_t *lrs[] = {lr};
    api_err e;
    api_err_init(&e);
    assert_int_equal(limitrange_validate_pod(pod, lrs, 1, &e), -1);
    assert_int_equal(api_errcode_http(e.code), 403);
    assert_string_equal(api_errcode_reason(e.code), "Forbidden");
    assert_string_equal(e.message, msg);
    assert_string_equal(json_string_value(json_object_get(e.details, "kind")), "pods");
    api_err_clear(&e);
    json_decref(lr);
    json_decref(pod);
}

static void expect_pod_ok(const char *lrjson, const char *podjson)
{
    json_t *lr = load(lrjson), *pod = load(podjson);
    const json_t *lrs[] = {lr};
    api_err e;
    api_err_init(&e);
    int rc = limitrange_validate_pod(pod, lrs, 1, &e);
    if (rc) print_error("%s\n", e.message);
    assert_int_equal(rc, 0);
    api_err_clear(&e);
    json_decref(lr);
    json_decref(pod);
}

#define CPOD(res)                                                                                  \
    "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":" res  \
    "}]}}"
#define CLR(item) "{\"spec\":{\"limits\":[{\"type\":\"Container\"," item "}]}}"

static void test_container_min_max(void **state)
{
    (void)state;
    expect_pod_forbidden(CLR("\"min\":{\"cpu\":\"100m\"}"),
                         CPOD("{\"requests\":{\"cpu\":\"50m\"}}"),
                         "pods \"x\" is forbidden: minimum cpu usage per Container is 100m, but "
                         "request is 50m");
    expect_pod_forbidden(
        CLR("\"min\":{\"cpu\":\"100m\"},\"max\":{\"memory\":\"1Gi\"}"),
        CPOD("{\"requests\":{\"cpu\":\"50m\",\"memory\":\"1Gi\"},\"limits\":{\"memory\":\"2Gi\"}}"),
        "pods \"x\" is forbidden: [minimum cpu usage per Container is 100m, but request is 50m, "
        "maximum memory usage per Container is 1Gi, but limit is 2Gi]");
    expect_pod_forbidden(CLR("\"min\":{\"cpu\":\"100m\"}"), CPOD("{}"),
                         "pods \"x\" is forbidden: minimum cpu usage per Container is 100m.  No "
                         "request is specified");
    expect_pod_forbidden(CLR("\"min\":{\"cpu\":\"100m\"}"),
                         CPOD("{\"requests\":{\"cpu\":\"200m\"},\"limits\":{\"cpu\":\"0.05\"}}"),
                         "pods \"x\" is forbidden: minimum cpu usage per Container is 100m, but "
                         "limit is 50m");
    expect_pod_forbidden(CLR("\"max\":{\"memory\":\"1Gi\"}"),
                         CPOD("{\"requests\":{\"memory\":\"512Mi\"}}"),
                         "pods \"x\" is forbidden: maximum memory usage per Container is 1Gi.  No "
                         "limit is specified");
    expect_pod_forbidden(
        CLR("\"max\":{\"memory\":\"1Gi\"}"),
        CPOD("{\"requests\":{\"memory\":\"2Gi\"},\"limits\":{\"memory\":\"1Gi\"}}"),
        "pods \"x\" is forbidden: maximum memory usage per Container is 1Gi, but "
        "request is 2Gi");
    expect_pod_ok(CLR("\"min\":{\"cpu\":\"100m\"},\"max\":{\"cpu\":\"1\"}"),
                  CPOD("{\"requests\":{\"cpu\":\"100m\"},\"limits\":{\"cpu\":\"1\"}}"));
}

static void test_container_ratio(void **state)
{
    (void)state;
    expect_pod_forbidden(CLR("\"maxLimitRequestRatio\":{\"cpu\":\"2\"}"),
                         CPOD("{\"requests\":{\"cpu\":\"100m\"},\"limits\":{\"cpu\":\"500m\"}}"),
                         "pods \"x\" is forbidden: cpu max limit to request ratio per Container is "
                         "2, but provided ratio is 5.000000");
    expect_pod_forbidden(CLR("\"maxLimitRequestRatio\":{\"cpu\":\"2\"}"),
                         CPOD("{\"limits\":{\"cpu\":\"500m\"}}"),
                         "pods \"x\" is forbidden: cpu max limit to request ratio per Container is "
                         "2, but no request is specified or request is 0");
    expect_pod_forbidden(CLR("\"maxLimitRequestRatio\":{\"memory\":\"1500m\"}"),
                         CPOD("{\"requests\":{\"memory\":\"1Gi\"}}"),
                         "pods \"x\" is forbidden: memory max limit to request ratio per Container "
                         "is 1500m, but no limit is specified or limit is 0");
    expect_pod_ok(CLR("\"maxLimitRequestRatio\":{\"cpu\":\"2\"}"),
                  CPOD("{\"requests\":{\"cpu\":\"250m\"},\"limits\":{\"cpu\":\"500m\"}}"));
}

static void test_init_containers_and_dedup(void **state)
{
    (void)state;
    /* the same message for two containers is listed once, without brackets */
    expect_pod_forbidden(
        CLR("\"min\":{\"cpu\":\"100m\"}"),
        "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"a\"},"
        "{\"name\":\"b\"}],\"initContainers\":[{\"name\":\"i\",\"resources\":{"
        "\"requests\":{\"cpu\":\"10m\"}}}]}}",
        "pods \"x\" is forbidden: [minimum cpu usage per Container is 100m.  No "
        "request is specified, minimum cpu usage per Container is 100m, but "
        "request is 10m]");
}

#define PLR(item) "{\"spec\":{\"limits\":[{\"type\":\"Pod\"," item "}]}}"

static void test_pod_limits(void **state)
{
    (void)state;
    const char *two = "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":["
                      "{\"name\":\"a\",\"resources\":{\"requests\":{\"cpu\":\"300m\"},\"limits\":{"
                      "\"cpu\":\"300m\"}}},{\"name\":\"b\",\"resources\":{\"requests\":{\"cpu\":"
                      "\"300m\"},\"limits\":{\"cpu\":\"300m\"}}}]}}";
    expect_pod_forbidden(PLR("\"max\":{\"cpu\":\"500m\"}"), two,
                         "pods \"x\" is forbidden: maximum cpu usage per Pod is 500m, but limit is "
                         "600m");
    expect_pod_ok(PLR("\"max\":{\"cpu\":\"600m\"}"), two);
    /* init containers raise the pod's need to their own maximum */
    expect_pod_forbidden(PLR("\"max\":{\"memory\":\"1Gi\"}"),
                         "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"initContainers\":[{\"name\":"
                         "\"i\",\"resources\":{\"limits\":{\"memory\":\"2Gi\"}}}],\"containers\":[{"
                         "\"name\":\"a\",\"resources\":{\"limits\":{\"memory\":\"512Mi\"}}}]}}",
                         "pods \"x\" is forbidden: maximum memory usage per Pod is 1Gi, but limit "
                         "is 2Gi");
    /* sidecars (restartPolicy Always) add to the containers' sum */
    expect_pod_forbidden(PLR("\"max\":{\"memory\":\"1Gi\"}"),
                         "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"initContainers\":[{\"name\":"
                         "\"s\",\"restartPolicy\":\"Always\",\"resources\":{\"limits\":{\"memory\":"
                         "\"768Mi\"}}}],\"containers\":[{\"name\":\"a\",\"resources\":{\"limits\":{"
                         "\"memory\":\"512Mi\"}}}]}}",
                         "pods \"x\" is forbidden: maximum memory usage per Pod is 1Gi, but limit "
                         "is 1280Mi");
    expect_pod_forbidden(PLR("\"min\":{\"cpu\":\"1\"}"), two,
                         "pods \"x\" is forbidden: minimum cpu usage per Pod is 1, but request is "
                         "600m");
    expect_pod_forbidden(
        PLR("\"maxLimitRequestRatio\":{\"cpu\":\"2\"}"),
        "{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"a\","
        "\"resources\":{\"requests\":{\"cpu\":\"100m\"},\"limits\":{\"cpu\":"
        "\"300m\"}}}]}}",
        "pods \"x\" is forbidden: cpu max limit to request ratio per Pod is 2, but "
        "provided ratio is 3.000000");
}

static void test_pod_name_fallback_and_order(void **state)
{
    (void)state;
    expect_pod_forbidden(CLR("\"min\":{\"cpu\":\"1\"}"),
                         "{\"metadata\":{\"generateName\":\"web-\"},\"spec\":{\"containers\":[{"
                         "\"name\":\"c\"}]}}",
                         "pods \"web-\" is forbidden: minimum cpu usage per Container is 1.  No "
                         "request is specified");
    expect_pod_forbidden(CLR("\"min\":{\"cpu\":\"1\"}"),
                         "{\"spec\":{\"containers\":[{\"name\":\"c\"}]}}",
                         "pods \"Unknown\" is forbidden: minimum cpu usage per Container is 1.  No "
                         "request is specified");
    /* several LimitRanges: the first violated one is reported */
    json_t *a = load(CLR("\"max\":{\"cpu\":\"10\"}")), *b = load(CLR("\"max\":{\"cpu\":\"1\"}"));
    json_t *pod = load(CPOD("{\"limits\":{\"cpu\":\"2\"}}"));
    const json_t *lrs[] = {a, b};
    api_err e;
    api_err_init(&e);
    assert_int_equal(limitrange_validate_pod(pod, lrs, 2, &e), -1);
    assert_string_equal(e.message, "pods \"x\" is forbidden: maximum cpu usage per Container is 1, "
                                   "but limit is 2");
    api_err_clear(&e);
    json_decref(a);
    json_decref(b);
    json_decref(pod);
}

static void test_default_then_validate(void **state)
{
    (void)state;
    json_t *lr = load("{\"spec\":{\"limits\":[{\"type\":\"Container\",\"min\":{\"cpu\":\"100m\"},"
                      "\"max\":{\"cpu\":\"1\"},\"default\":{\"cpu\":\"500m\"},\"defaultRequest\":{"
                      "\"cpu\":\"200m\"}}]}}");
    json_t *pod =
        load("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}");
    const json_t *lrs[] = {lr};
    api_err e;
    api_err_init(&e);
    assert_int_equal(limitrange_default_pod(pod, lrs, 1), 2);
    assert_int_equal(limitrange_validate_pod(pod, lrs, 1, &e), 0);
    api_err_clear(&e);
    json_decref(lr);
    json_decref(pod);
}

/* ---- PVCs ---- */

static void expect_pvc(const char *lrjson, const char *pvcjson, const char *msg)
{
    json_t *lr = load(lrjson), *pvc = load(pvcjson);
    const json_t *lrs[] = {lr};
    api_err e;
    api_err_init(&e);
    int rc = limitrange_validate_pvc(pvc, lrs, 1, &e);
    if (msg) {
        assert_int_equal(rc, -1);
        assert_int_equal(api_errcode_http(e.code), 403);
        assert_string_equal(e.message, msg);
        assert_string_equal(json_string_value(json_object_get(e.details, "kind")),
                            "persistentvolumeclaims");
    } else {
        assert_int_equal(rc, 0);
    }
    api_err_clear(&e);
    json_decref(lr);
    json_decref(pvc);
}

#define PVC_LR                                                                                     \
    "{\"spec\":{\"limits\":[{\"type\":\"PersistentVolumeClaim\",\"min\":{\"storage\":\"1Gi\"},"    \
    "\"max\":{\"storage\":\"10Gi\"}},{\"type\":\"Container\",\"min\":{\"cpu\":\"1\"}}]}}"
#define PVC(req) "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"resources\":{\"requests\":" req "}}}"

static void test_pvc(void **state)
{
    (void)state;
    expect_pvc(PVC_LR, PVC("{\"storage\":\"500Mi\"}"),
               "persistentvolumeclaims \"c\" is forbidden: minimum storage usage per "
               "PersistentVolumeClaim is 1Gi, but request is 500Mi");
    expect_pvc(PVC_LR, PVC("{\"storage\":\"20Gi\"}"),
               "persistentvolumeclaims \"c\" is forbidden: maximum storage usage per "
               "PersistentVolumeClaim is 10Gi, but request is 20Gi");
    expect_pvc(PVC_LR, PVC("{}"),
               "persistentvolumeclaims \"c\" is forbidden: [minimum storage usage per "
               "PersistentVolumeClaim is 1Gi.  No request is specified, maximum storage usage per "
               "PersistentVolumeClaim is 10Gi.  No request is specified]");
    expect_pvc(PVC_LR, PVC("{\"storage\":\"5Gi\"}"), NULL);
    /* limits are not user input for PVCs */
    expect_pvc(PVC_LR,
               "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"resources\":{\"requests\":{\"storage\":"
               "\"5Gi\"},\"limits\":{\"storage\":\"100Gi\"}}}}",
               NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_ok),
        cmocka_unit_test(test_validate_order_rules),
        cmocka_unit_test(test_validate_ratio),
        cmocka_unit_test(test_validate_types),
        cmocka_unit_test(test_validate_resource_names),
        cmocka_unit_test(test_validate_bad_json),
        cmocka_unit_test(test_default_pod),
        cmocka_unit_test(test_default_partial_and_init),
        cmocka_unit_test(test_default_nothing),
        cmocka_unit_test(test_default_two_limitranges),
        cmocka_unit_test(test_container_min_max),
        cmocka_unit_test(test_container_ratio),
        cmocka_unit_test(test_init_containers_and_dedup),
        cmocka_unit_test(test_pod_limits),
        cmocka_unit_test(test_pod_name_fallback_and_order),
        cmocka_unit_test(test_default_then_validate),
        cmocka_unit_test(test_pvc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
