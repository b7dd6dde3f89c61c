/* test_patch.c - merge patch (RFC 7386), JSON patch (RFC 6902) and
 * strategic merge patch as kubectl sends it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/patch.h"

static json_t *J(const char *s)
{
    json_error_t e;
    json_t *v = json_loads(s, JSON_DECODE_ANY, &e);
    if (!v) fail_msg("bad test JSON %s: %s", s, e.text);
    return v;
}

static void check_json(const json_t *got, const char *want)
{
    json_t *w = J(want);
    if (!got || !json_equal(got, w)) {
        char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : strdup("(null)");
        char *ws = json_dumps(w, JSON_ENCODE_ANY | JSON_COMPACT);
        print_error("got  %s\nwant %s\n", g, ws);
        free(g);
        free(ws);
        json_decref(w);
        fail();
    }
    json_decref(w);
}

/* ---- RFC 7386 ---- */

static void merge_case(const char *orig, const char *patch, const char *want)
{
    json_t *o = J(orig), *p = J(patch);
    char *before = json_dumps(o, JSON_ENCODE_ANY | JSON_COMPACT);
    json_t *r = patch_merge(o, p);
    check_json(r, want);
    char *after = json_dumps(o, JSON_ENCODE_ANY | JSON_COMPACT);
    assert_string_equal(before, after); /* input untouched */
    free(before);
    free(after);
    json_decref(o);
    json_decref(p);
    json_decref(r);
}

static void test_merge_rfc7386_appendix_a(void **state)
{
    (void)state;
    merge_case("{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    merge_case("{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
    merge_case("{\"a\":\"b\"}", "{\"a\":null}", "{}");
    merge_case("{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
    merge_case("{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
    merge_case("{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
    merge_case("{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}",
               "{\"a\":{\"b\":\"d\"}}");
    merge_case("{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
    merge_case("[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]");
    merge_case("{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]");
    merge_case("{\"a\":\"foo\"}", "null", "null");
    merge_case("{\"a\":\"foo\"}", "\"bar\"", "\"bar\"");
    merge_case("{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
    merge_case("[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}");
    merge_case("{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}");
}

static void test_merge_rfc7386_section3(void **state)
{
    (void)state;
    merge_case("{\"title\":\"Goodbye!\",\"author\":{\"givenName\":\"John\",\"familyName\":\"Doe\"},"
               "\"tags\":[\"example\",\"sample\"],\"content\":\"This will be unchanged\"}",
               "{\"title\":\"Hello!\",\"phoneNumber\":\"+01-123-456-7890\","
               "\"author\":{\"familyName\":null},\"tags\":[\"example\"]}",
               "{\"title\":\"Hello!\",\"author\":{\"givenName\":\"John\"},\"tags\":[\"example\"],"
               "\"content\":\"This will be unchanged\",\"phoneNumber\":\"+01-123-456-7890\"}");
}

static void test_merge_result_is_independent(void **state)
{
    (void)state;
    json_t *o = J("{\"a\":{\"b\":1}}"), *p = J("{\"c\":{\"d\":2}}");
    json_t *r = patch_merge(o, p);
    json_object_set_new(json_object_get(r, "a"), "b", json_integer(9));
    json_object_set_new(json_object_get(r, "c"), "d", json_integer(9));
    check_json(o, "{\"a\":{\"b\":1}}");
    check_json(p, "{\"c\":{\"d\":2}}");
    json_decref(o);
    json_decref(p);
    json_decref(r);
}

/* ---- RFC 6902 ---- */

static void jp_ok(const char *doc, const char *ops, const char *want)
{
    api_err e;
    api_err_init(&e);
    json_t *d = J(doc), *o = J(ops);
    json_t *r = patch_json(d, o, &e);
    if (!r) fail_msg("unexpected error %d: %s", e.code, e.message);
    check_json(r, want);
    check_json(d, doc);
    json_decref(d);
    json_decref(o);
    json_decref(r);
    api_err_clear(&e);
}

/* Returns the error code; `cause` (if given) must be the 422 cause text. */
static api_errcode jp_fail(const char *doc, const char *ops, const char *cause)
{
    api_err e;
    api_err_init(&e);
    json_t *d = J(doc), *o = J(ops);
    json_t *r = patch_json(d, o, &e);
    assert_null(r);
    api_errcode code = e.code;
    if (cause) {
        assert_int_equal(code, API_INVALID);
        assert_string_equal(e.message,
                            "the server rejected our request due to an error in our request");
        json_t *c = json_array_get(json_object_get(e.details, "causes"), 0);
        assert_string_equal(json_string_value(json_object_get(c, "message")), cause);
        assert_string_equal(json_string_value(json_object_get(c, "reason")),
                            "UnexpectedServerResponse");
    }
    check_json(d, doc);
    json_decref(d);
    json_decref(o);
    api_err_clear(&e);
    return code;
}

static void test_json_rfc6902_a1_to_a8(void **state)
{
    (void)state;
    /* A.1 adding an object member */
    jp_ok("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\"}]",
          "{\"baz\":\"qux\",\"foo\":\"bar\"}");
    /* A.2 adding an array element */
    jp_ok("{\"foo\":[\"bar\",\"baz\"]}", "[{\"op\":\"add\",\"path\":\"/foo/1\",\"value\":\"qux\"}]",
          "{\"foo\":[\"bar\",\"qux\",\"baz\"]}");
    /* A.3 removing an object member */
    jp_ok("{\"baz\":\"qux\",\"foo\":\"bar\"}", "[{\"op\":\"remove\",\"path\":\"/baz\"}]",
          "{\"foo\":\"bar\"}");
    /* A.4 removing an array element */
    jp_ok("{\"foo\":[\"bar\",\"qux\",\"baz\"]}", "[{\"op\":\"remove\",\"path\":\"/foo/1\"}]",
          "{\"foo\":[\"bar\",\"baz\"]}");
    /* A.5 replacing a value */
    jp_ok("{\"baz\":\"qux\",\"foo\":\"bar\"}",
          "[{\"op\":\"replace\",\"path\":\"/baz\",\"value\":\"boo\"}]",
          "{\"baz\":\"boo\",\"foo\":\"bar\"}");
    /* A.6 moving a value */
    jp_ok("{\"foo\":{\"bar\":\"baz\",\"waldo\":\"fred\"},\"qux\":{\"corge\":\"grault\"}}",
          "[{\"op\":\"move\",\"from\":\"/foo/waldo\",\"path\":\"/qux/thud\"}]",
          "{\"foo\":{\"bar\":\"baz\"},\"qux\":{\"corge\":\"grault\",\"thud\":\"fred\"}}");
    /* A.7 moving an array element */
    jp_ok("{\"foo\":[\"all\",\"grass\",\"cows\",\"eat\"]}",
          "[{\"op\":\"move\",\"from\":\"/foo/1\",\"path\":\"/foo/3\"}]",
          "{\"foo\":[\"all\",\"cows\",\"eat\",\"grass\"]}");
    /* A.8 testing a value: success */
    jp_ok("{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}",
          "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"qux\"},"
          "{\"op\":\"test\",\"path\":\"/foo/1\",\"value\":2}]",
          "{\"baz\":\"qux\",\"foo\":[\"a\",2,\"c\"]}");
}

static void test_json_rfc6902_a9_to_a16(void **state)
{
    (void)state;
    /* A.9 testing a value: error */
    jp_fail("{\"baz\":\"qux\"}", "[{\"op\":\"test\",\"path\":\"/baz\",\"value\":\"bar\"}]",
            "testing value /baz failed: test failed");
    /* A.10 adding a nested member object */
    jp_ok("{\"foo\":\"bar\"}",
          "[{\"op\":\"add\",\"path\":\"/child\",\"value\":{\"grandchild\":{}}}]",
          "{\"foo\":\"bar\",\"child\":{\"grandchild\":{}}}");
    /* A.11 ignoring unrecognized elements */
    jp_ok("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"xyz\":123}]",
          "{\"foo\":\"bar\",\"baz\":\"qux\"}");
    /* A.12 adding to a nonexistent target */
    jp_fail("{\"foo\":\"bar\"}", "[{\"op\":\"add\",\"path\":\"/baz/bat\",\"value\":\"qux\"}]",
            "add operation does not apply: doc is missing path: \"/baz/bat\"");
    /* A.13 (invalid document, duplicate "op") is in test_apply_json_duplicate_op. */
    /* A.14 ~ escape ordering */
    jp_ok("{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":10}]",
          "{\"/\":9,\"~1\":10}");
    /* A.15 comparing strings and numbers */
    jp_fail("{\"/\":9,\"~1\":10}", "[{\"op\":\"test\",\"path\":\"/~01\",\"value\":\"10\"}]",
            "testing value /~01 failed: test failed");
    /* A.16 adding an array value */
    jp_ok("{\"foo\":[\"bar\"]}",
          "[{\"op\":\"add\",\"path\":\"/foo/-\",\"value\":[\"abc\",\"def\"]}]",
          "{\"foo\":[\"bar\",[\"abc\",\"def\"]]}");
}

static void test_json_more_ops(void **state)
{
    (void)state;
    /* copy, escaped "/" in a key, test with 1 == 1.0, replace the root */
    jp_ok("{\"a\":{\"x\":[1]},\"b\":{}}", "[{\"op\":\"copy\",\"from\":\"/a/x\",\"path\":\"/b/y\"}]",
          "{\"a\":{\"x\":[1]},\"b\":{\"y\":[1]}}");
    jp_ok("{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"x\"}}}",
          "[{\"op\":\"replace\",\"path\":\"/metadata/labels/app.kubernetes.io~1name\","
          "\"value\":\"y\"}]",
          "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"y\"}}}");
    jp_ok("{\"n\":1}", "[{\"op\":\"test\",\"path\":\"/n\",\"value\":1.0}]", "{\"n\":1}");
    jp_ok("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{\"b\":2}}]", "{\"b\":2}");
    jp_ok("{\"a\":[1,2]}", "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":3}]", "{\"a\":[1,2,3]}");
    jp_ok("{\"a\":1}", "[{\"op\":\"add\",\"path\":\"/n\",\"value\":null}]", "{\"a\":1,\"n\":null}");
    jp_ok("{\"a\":{\"b\":1}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a\"}]",
          "{\"a\":{\"b\":1}}");
    jp_ok("{\"a\":1}", "[]", "{\"a\":1}");
    /* later operations see earlier ones */
    jp_ok("{}",
          "[{\"op\":\"add\",\"path\":\"/l\",\"value\":[]},"
          "{\"op\":\"add\",\"path\":\"/l/-\",\"value\":\"x\"},"
          "{\"op\":\"add\",\"path\":\"/l/0\",\"value\":\"w\"}]",
          "{\"l\":[\"w\",\"x\"]}");
}

static void test_json_errors(void **state)
{
    (void)state;
    jp_fail("{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/b\"}]",
            "remove operation does not apply: doc is missing path: \"/b\"");
    jp_fail("{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":2}]",
            "replace operation does not apply: doc is missing key: /b");
    jp_fail("{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/2\",\"value\":2}]", NULL);
    jp_fail("{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/01\",\"value\":2}]", NULL);
    jp_fail("{\"a\":[1]}", "[{\"op\":\"remove\",\"path\":\"/a/-\"}]", NULL);
    jp_fail("{\"a\":{}}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/a/b\"}]", NULL);
    jp_fail("{\"a\":1}", "[{\"op\":\"copy\",\"from\":\"/x\",\"path\":\"/b\"}]",
            "copy operation does not apply: doc is missing from path: /x");
    /* failure after a success: nothing applies (orig checked in jp_fail) */
    jp_fail("{\"a\":1}",
            "[{\"op\":\"add\",\"path\":\"/b\",\"value\":2},{\"op\":\"test\",\"path\":\"/b\","
            "\"value\":3}]",
            "testing value /b failed: test failed");
    /* malformed documents are 400 */
    assert_int_equal(jp_fail("{}", "{\"op\":\"add\"}", NULL), API_BAD_REQUEST);
    assert_int_equal(jp_fail("{}", "[1]", NULL), API_BAD_REQUEST);
    assert_int_equal(jp_fail("{}", "[{\"op\":\"frob\",\"path\":\"/a\"}]", NULL), API_BAD_REQUEST);
    assert_int_equal(jp_fail("{}", "[{\"path\":\"/a\"}]", NULL), API_BAD_REQUEST);
    assert_int_equal(jp_fail("{}", "[{\"op\":\"add\",\"value\":1}]", NULL), API_BAD_REQUEST);
    assert_int_equal(jp_fail("{}", "[{\"op\":\"add\",\"path\":\"/a\"}]", NULL), API_BAD_REQUEST);
    assert_int_equal(jp_fail("{}", "[{\"op\":\"add\",\"path\":\"a\",\"value\":1}]", NULL),
                     API_BAD_REQUEST);
    assert_int_equal(jp_fail("{}", "[{\"op\":\"add\",\"path\":\"/a~2\",\"value\":1}]", NULL),
                     API_BAD_REQUEST);
    assert_int_equal(jp_fail("{}", "[{\"op\":\"move\",\"path\":\"/a\"}]", NULL), API_BAD_REQUEST);
    /* the 400 is decided before anything applies, even after valid ops */
    assert_int_equal(
        jp_fail("{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/a\"},{\"op\":\"x\"}]", NULL),
        API_BAD_REQUEST);
}

/* ---- strategic merge patch ---- */

static json_t *smp(const char *orig, const char *patch, const char *kind, api_err *e)
{
    json_t *o = J(orig), *p = J(patch);
    char *before = json_dumps(o, JSON_COMPACT), *pbefore = json_dumps(p, JSON_COMPACT);
    json_t *r = patch_strategic(o, p, kind, e);
    char *after = json_dumps(o, JSON_COMPACT), *pafter = json_dumps(p, JSON_COMPACT);
    assert_string_equal(before, after);
    assert_string_equal(pbefore, pafter);
    assert_int_equal(o->refcount, 1);
    assert_int_equal(p->refcount, 1);
    free(before);
    free(after);
    free(pbefore);
    free(pafter);
    json_decref(o);
    json_decref(p);
    return r;
}

static void smp_ok(const char *kind, const char *orig, const char *patch, const char *want)
{
    api_err e;
    api_err_init(&e);
    json_t *r = smp(orig, patch, kind, &e);
    if (!r) fail_msg("unexpected error %d: %s", e.code, e.message);
    check_json(r, want);
    json_decref(r);
    api_err_clear(&e);
}

static void smp_err(const char *kind, const char *orig, const char *patch, api_errcode code,
                    const char *substr)
{
    api_err e;
    api_err_init(&e);
    json_t *r = smp(orig, patch, kind, &e);
    assert_null(r);
    assert_int_equal(e.code, code);
    if (substr && !strstr(e.message, substr))
        fail_msg("message \"%s\" lacks \"%s\"", e.message, substr);
    api_err_clear(&e);
}

#define DEPLOY                                                                                     \
    "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","          \
    "\"labels\":{\"app\":\"web\"}},\"spec\":{\"replicas\":1,\"template\":{\"spec\":{"              \
    "\"containers\":[{\"name\":\"app\",\"image\":\"nginx:1.0\",\"ports\":[{\"containerPort\":80}]" \
    ","                                                                                            \
    "\"env\":[{\"name\":\"A\",\"value\":\"1\"}],\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}," \
    "{\"name\":\"sidecar\",\"image\":\"busybox\"}],"                                               \
    "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}}}}"

static void test_smp_kubectl_apply_image(void **state)
{
    (void)state;
    /* kubectl apply: 3-way patch with $setElementOrder and a changed image */
    api_err e;
    api_err_init(&e);
    json_t *r = smp(DEPLOY,
                    "{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
                    "last-applied-configuration\":\"{}\"}},\"spec\":{\"template\":{\"spec\":{"
                    "\"$setElementOrder/containers\":[{\"name\":\"app\"},{\"name\":\"sidecar\"}],"
                    "\"containers\":[{\"image\":\"nginx:1.1\",\"name\":\"app\"}]}}}}",
                    "Deployment", &e);
    assert_non_null(r);
    json_t *cs = json_object_get(
        json_object_get(json_object_get(json_object_get(r, "spec"), "template"), "spec"),
        "containers");
    check_json(cs, "[{\"name\":\"app\",\"image\":\"nginx:1.1\",\"ports\":[{\"containerPort\":80}],"
                   "\"env\":[{\"name\":\"A\",\"value\":\"1\"}],"
                   "\"resources\":{\"requests\":{\"cpu\":\"100m\"}}},"
                   "{\"name\":\"sidecar\",\"image\":\"busybox\"}]");
    check_json(json_object_get(r, "metadata"),
               "{\"name\":\"web\",\"labels\":{\"app\":\"web\"},\"annotations\":{"
               "\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"}}");
    json_decref(r);
    api_err_clear(&e);
}

static void test_smp_set_element_order(void **state)
{
    (void)state;
    /* a new container placed where the order list says */
    smp_ok("Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"c\"}]}}",
           "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"},{\"name\":\"b\"},"
           "{\"name\":\"c\"}],\"containers\":[{\"name\":\"b\",\"image\":\"x\"}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"image\":\"x\"},"
           "{\"name\":\"c\"}]}}");
    /* reorder only */
    smp_ok("Pod",
           "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}}",
           "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},{\"name\":\"b\"},"
           "{\"name\":\"a\"}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"c\"},{\"name\":\"b\"},{\"name\":\"a\"}]}}");
    /* server-only items keep their live position among the ordered ones */
    smp_ok("Pod",
           "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"s\"},{\"name\":\"c\"}]}}",
           "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"},{\"name\":\"c\"}],"
           "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"s\"},{\"name\":\"c\","
           "\"image\":\"i\"}]}}");
    /* primitive list (upstream "merge lists of scalars" case) */
    smp_ok("Pod", "{\"metadata\":{\"finalizers\":[\"1\",\"2\",\"4\"]}}",
           "{\"metadata\":{\"$setElementOrder/finalizers\":[\"1\",\"2\",\"3\"],"
           "\"finalizers\":[\"3\"]}}",
           "{\"metadata\":{\"finalizers\":[\"1\",\"2\",\"3\",\"4\"]}}");
    /* kubectl set env: 2-way patch adds B after A */
    smp_ok(
        "Pod",
        "{\"spec\":{\"containers\":[{\"name\":\"app\",\"env\":[{\"name\":\"A\",\"value\":\"1\"}]}]}"
        "}",
        "{\"spec\":{\"containers\":[{\"$setElementOrder/env\":[{\"name\":\"A\"},{\"name\":\"B\"}],"
        "\"env\":[{\"name\":\"B\",\"value\":\"2\"}],\"name\":\"app\"}]}}",
        "{\"spec\":{\"containers\":[{\"name\":\"app\",\"env\":[{\"name\":\"A\",\"value\":\"1\"},"
        "{\"name\":\"B\",\"value\":\"2\"}]}]}}");
    /* the list is absent in the live object */
    smp_ok("Pod", "{\"spec\":{}}",
           "{\"spec\":{\"$setElementOrder/volumes\":[{\"name\":\"b\"},{\"name\":\"a\"}],"
           "\"volumes\":[{\"name\":\"b\",\"emptyDir\":{}},{\"name\":\"a\",\"emptyDir\":{},"
           "\"x\":null}]}}",
           "{\"spec\":{\"volumes\":[{\"name\":\"b\",\"emptyDir\":{}},{\"name\":\"a\","
           "\"emptyDir\":{}}]}}");
    /* patch list out of order with the order list */
    smp_err("Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
            "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"a\"},{\"name\":\"b\"}],"
            "\"containers\":[{\"name\":\"b\"},{\"name\":\"a\"}]}}",
            API_BAD_REQUEST, "doesn't match $setElementOrder list");
}

static void test_smp_labels_and_scale(void **state)
{
    (void)state;
    /* kubectl label a=1 b- ; kubectl annotate */
    smp_ok("Pod", "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"0\",\"b\":\"2\"}}}",
           "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":null,\"c\":\"3\"},"
           "\"annotations\":{\"note\":\"x\"}}}",
           "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"1\",\"c\":\"3\"},"
           "\"annotations\":{\"note\":\"x\"}}}");
    /* null for a key that is not there: nothing to do, nothing stored */
    smp_ok("Pod", "{\"metadata\":{}}", "{\"metadata\":{\"labels\":{\"z\":null}}}",
           "{\"metadata\":{\"labels\":{}}}");
    /* kubectl scale */
    smp_ok("Deployment", "{\"spec\":{\"replicas\":1,\"selector\":{}}}",
           "{\"spec\":{\"replicas\":3}}", "{\"spec\":{\"replicas\":3,\"selector\":{}}}");
}

static void test_smp_finalizers(void **state)
{
    (void)state;
    /* set union; upstream puts patch-only items ahead of live-only ones */
    smp_ok("ConfigMap", "{\"metadata\":{\"finalizers\":[\"x/a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"x/b\",\"x/a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"x/b\",\"x/a\"]}}");
    smp_ok("ConfigMap", "{\"metadata\":{\"finalizers\":[\"x/a\"]}}",
           "{\"metadata\":{\"finalizers\":[\"x/b\"]}}",
           "{\"metadata\":{\"finalizers\":[\"x/b\",\"x/a\"]}}");
    smp_ok("ConfigMap", "{\"metadata\":{\"finalizers\":[\"1\",\"2\"]}}",
           "{\"metadata\":{\"finalizers\":[\"2\",\"3\"]}}",
           "{\"metadata\":{\"finalizers\":[\"1\",\"2\",\"3\"]}}");
    /* $deleteFromPrimitiveList */
    smp_ok("ConfigMap", "{\"metadata\":{\"finalizers\":[\"a\",\"b\",\"c\",\"b\"]}}",
           "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"b\"]}}",
           "{\"metadata\":{\"finalizers\":[\"a\",\"c\"]}}");
    /* kubectl apply removing "1" and adding "3" */
    smp_ok("ConfigMap", "{\"metadata\":{\"finalizers\":[\"1\",\"2\"]}}",
           "{\"metadata\":{\"$setElementOrder/finalizers\":[\"2\",\"3\"],"
           "\"$deleteFromPrimitiveList/finalizers\":[\"1\"],\"finalizers\":[\"3\"]}}",
           "{\"metadata\":{\"finalizers\":[\"2\",\"3\"]}}");
    /* null clears the list */
    smp_ok("ConfigMap", "{\"metadata\":{\"finalizers\":[\"a\"]}}",
           "{\"metadata\":{\"finalizers\":null}}", "{\"metadata\":{}}");
    smp_err("ConfigMap", "{\"metadata\":{\"finalizers\":[\"a\"]}}",
            "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":\"a\"}}", API_BAD_REQUEST,
            "invalid patch format of primitive list");
}

static void test_smp_patch_delete_and_replace(void **state)
{
    (void)state;
    /* $patch: delete of a container */
    smp_ok("Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"a\",\"$patch\":\"delete\"}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"b\"}]}}");
    /* $patch: replace element: the list becomes the other elements */
    smp_ok(
        "Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}",
        "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"},{\"$patch\":\"replace\"}]}}",
        "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}");
    /* $patch: replace in a map */
    smp_ok("Pod", "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}",
           "{\"metadata\":{\"labels\":{\"$patch\":\"replace\",\"z\":\"1\"}}}",
           "{\"metadata\":{\"labels\":{\"z\":\"1\"}}}");
    /* $patch: delete in a map leaves it empty */
    smp_ok("Pod", "{\"metadata\":{\"labels\":{\"a\":\"1\"}}}",
           "{\"metadata\":{\"labels\":{\"$patch\":\"delete\"}}}", "{\"metadata\":{\"labels\":{}}}");
    /* ... or absent when there was nothing */
    smp_ok("Pod", "{\"metadata\":{}}", "{\"metadata\":{\"labels\":{\"$patch\":\"delete\"}}}",
           "{\"metadata\":{}}");
    /* $patch: merge is the default */
    smp_ok("Pod", "{\"metadata\":{\"labels\":{\"a\":\"1\"}}}",
           "{\"metadata\":{\"labels\":{\"$patch\":\"merge\",\"b\":\"2\"}}}",
           "{\"metadata\":{\"labels\":{\"a\":\"1\",\"b\":\"2\"}}}");
    smp_ok("Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\"}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"a\",\"$patch\":\"merge\",\"tty\":true}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"a\",\"image\":\"1\",\"tty\":true}]}}");
    /* the whole object */
    smp_ok("Pod", "{\"a\":1,\"b\":{\"c\":2}}", "{\"$patch\":\"replace\",\"d\":3}", "{\"d\":3}");
    smp_err("Pod", "{\"metadata\":{}}", "{\"metadata\":{\"$patch\":\"frob\"}}", API_BAD_REQUEST,
            "unknown patch type: \"frob\"");
    smp_err("Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
            "{\"spec\":{\"containers\":[{\"$patch\":\"delete\"}]}}", API_BAD_REQUEST,
            "does not contain declared merge key: name");
}

static void test_smp_retain_keys(void **state)
{
    (void)state;
    smp_ok(
        "Deployment",
        "{\"spec\":{\"strategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":1}}}}",
        "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"type\":\"Recreate\"}}}",
        "{\"spec\":{\"strategy\":{\"type\":\"Recreate\"}}}");
    smp_ok("Pod", "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]}}",
           "{\"spec\":{\"volumes\":[{\"$retainKeys\":[\"name\",\"hostPath\"],\"name\":\"v\","
           "\"hostPath\":{\"path\":\"/x\"}}]}}",
           "{\"spec\":{\"volumes\":[{\"name\":\"v\",\"hostPath\":{\"path\":\"/x\"}}]}}");
    smp_err("Deployment", "{\"spec\":{\"strategy\":{}}}",
            "{\"spec\":{\"strategy\":{\"$retainKeys\":[\"type\"],\"other\":1}}}", API_BAD_REQUEST,
            "invalid patch format of retainKeys");
}

static void test_smp_merge_keys(void **state)
{
    (void)state;
    /* kubectl set image / set resources: container fields merge */
    smp_ok(
        "Deployment", DEPLOY,
        "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\","
        "\"resources\":{\"limits\":{\"cpu\":\"200m\"}},\"env\":[{\"name\":\"A\",\"value\":\"9\"}]}]"
        "}}}}",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\","
        "\"labels\":{\"app\":\"web\"}},\"spec\":{\"replicas\":1,\"template\":{\"spec\":{"
        "\"containers\":[{\"name\":\"app\",\"image\":\"nginx:1.0\",\"ports\":[{\"containerPort\":"
        "80}],"
        "\"env\":[{\"name\":\"A\",\"value\":\"9\"}],\"resources\":{\"requests\":{\"cpu\":\"100m\"},"
        "\"limits\":{\"cpu\":\"200m\"}}},{\"name\":\"sidecar\",\"image\":\"busybox\"}],"
        "\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\"}]}}}}");
    /* container ports by containerPort; env valueFrom replaced by value */
    smp_ok(
        "Pod",
        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,\"name\":"
        "\"h\"}],"
        "\"env\":[{\"name\":\"E\",\"valueFrom\":{\"fieldRef\":{}}}]}]}}",
        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,"
        "\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"E\",\"value\":\"v\",\"valueFrom\":null}]}]}}",
        "{\"spec\":{\"containers\":[{\"name\":\"a\",\"ports\":[{\"containerPort\":80,\"name\":"
        "\"h\","
        "\"protocol\":\"TCP\"}],\"env\":[{\"name\":\"E\",\"value\":\"v\"}]}]}}");
    /* Service ports by port */
    smp_ok("Service", "{\"spec\":{\"ports\":[{\"port\":80,\"name\":\"http\"},{\"port\":443}]}}",
           "{\"spec\":{\"ports\":[{\"port\":80,\"targetPort\":8080}]}}",
           "{\"spec\":{\"ports\":[{\"port\":80,\"name\":\"http\",\"targetPort\":8080},{\"port\":"
           "443}]}}");
    /* status conditions by type; ownerReferences by uid */
    smp_ok("Pod",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\",\"name\":\"rs\"}]},"
           "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"},"
           "{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\",\"controller\":true}]},"
           "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
           "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"u1\",\"name\":\"rs\",\"controller\":"
           "true}]},"
           "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
           "{\"type\":\"PodScheduled\",\"status\":\"True\"}]}}");
    /* a template in a CronJob: the suffix rule still finds containers */
    smp_ok("CronJob",
           "{\"spec\":{\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{\"containers\":["
           "{\"name\":\"a\",\"image\":\"1\"},{\"name\":\"b\",\"image\":\"1\"}]}}}}}}",
           "{\"spec\":{\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{\"containers\":["
           "{\"name\":\"b\",\"image\":\"2\"}]}}}}}}",
           "{\"spec\":{\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{\"containers\":["
           "{\"name\":\"a\",\"image\":\"1\"},{\"name\":\"b\",\"image\":\"2\"}]}}}}}}");
    smp_err("Pod", "{\"spec\":{\"containers\":[{\"name\":\"a\"}]}}",
            "{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}", API_BAD_REQUEST,
            "map: {\"image\":\"x\"} does not contain declared merge key: name");
    smp_err("Pod", "{\"spec\":{\"volumes\":[{\"name\":\"a\"}]}}", "{\"spec\":{\"volumes\":[[1]]}}",
            API_INVALID, NULL);
}

static void test_smp_atomic_lists_and_types(void **state)
{
    (void)state;
    /* tolerations, args, command, envFrom replace */
    smp_ok("Pod",
           "{\"spec\":{\"tolerations\":[{\"key\":\"a\"}],\"containers\":[{\"name\":\"c\","
           "\"args\":[\"1\",\"2\"],\"envFrom\":[{\"configMapRef\":{\"name\":\"x\"}}]}]}}",
           "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}],\"containers\":[{\"name\":\"c\","
           "\"args\":[\"3\"],\"envFrom\":[{\"secretRef\":{\"name\":\"y\"}}]}]}}",
           "{\"spec\":{\"tolerations\":[{\"key\":\"b\"}],\"containers\":[{\"name\":\"c\","
           "\"args\":[\"3\"],\"envFrom\":[{\"secretRef\":{\"name\":\"y\"}}]}]}}");
    /* type change replaces; nulls inside new values are dropped */
    smp_ok("Pod", "{\"spec\":{\"x\":{\"a\":1},\"y\":[1]}}",
           "{\"spec\":{\"x\":[1],\"y\":{\"b\":null,\"c\":{\"d\":null,\"e\":1}}}}",
           "{\"spec\":{\"x\":[1],\"y\":{\"c\":{\"e\":1}}}}");
    /* new list elements are stored without directives */
    smp_ok("Pod", "{\"spec\":{\"containers\":[]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"n\",\"env\":[{\"name\":\"E\"}],"
           "\"$setElementOrder/env\":[{\"name\":\"E\"}],\"stdin\":null}]}}",
           "{\"spec\":{\"containers\":[{\"name\":\"n\",\"env\":[{\"name\":\"E\"}]}]}}");
}

static void test_smp_merge_list_limit(void **state)
{
    (void)state;
    /* quadratic merges are bounded: 5001 finalizers is refused, 100 is fine */
    json_t *o = J("{\"metadata\":{\"finalizers\":[\"keep\"]}}");
    json_t *p = J("{\"metadata\":{\"finalizers\":[]}}");
    json_t *l = json_object_get(json_object_get(p, "metadata"), "finalizers");
    for (int i = 0; i < 5000; i++) {
        char b[32];
        snprintf(b, sizeof b, "f%d", i);
        json_array_append_new(l, json_string(b));
    }
    api_err e;
    api_err_init(&e);
    assert_null(patch_strategic(o, p, "Pod", &e));
    assert_int_equal(e.code, API_TOO_LARGE);
    assert_non_null(strstr(e.message, "metadata.finalizers"));
    api_err_clear(&e);
    while (json_array_size(l) > 100)
        json_array_remove(l, json_array_size(l) - 1);
    json_t *r = patch_strategic(o, p, "Pod", &e);
    assert_int_equal(json_array_size(json_object_get(json_object_get(r, "metadata"), "finalizers")),
                     101);
    json_decref(r);
    json_decref(o);
    json_decref(p);
}

static void test_smp_unknown_kind_is_merge_patch(void **state)
{
    (void)state;
    assert_true(patch_kind_is_builtin("Deployment"));
    assert_false(patch_kind_is_builtin("Widget"));
    assert_false(patch_kind_is_builtin(NULL));
    const char *orig = "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}";
    const char *patch = "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"x\"}]}}";
    const char *want = "{\"spec\":{\"containers\":[{\"name\":\"b\",\"image\":\"x\"}]}}";
    smp_ok("Widget", orig, patch, want);
    smp_ok(NULL, orig, patch, want);
    smp_ok("Pod", orig, patch,
           "{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"image\":\"x\"}]}}");
}

/* ---- dispatch ---- */

static json_t *apply(const char *ct, const char *orig, const char *body, const char *kind,
                     api_err *e)
{
    json_t *o = J(orig);
    json_t *r = patch_apply(ct, o, body, strlen(body), kind, e);
    json_decref(o);
    return r;
}

static void apply_err(const char *ct, const char *body, api_errcode code, const char *msg)
{
    api_err e;
    api_err_init(&e);
    json_t *r = apply(ct, "{\"a\":1}", body, "Pod", &e);
    assert_null(r);
    assert_int_equal(e.code, code);
    if (msg) assert_string_equal(e.message, msg);
    api_err_clear(&e);
}

static void test_apply_dispatch(void **state)
{
    (void)state;
    api_err e;
    api_err_init(&e);
    json_t *r = apply("application/merge-patch+json; charset=utf-8", "{\"a\":1,\"l\":[1]}",
                      "{\"b\":2,\"l\":[2]}", "Pod", &e);
    check_json(r, "{\"a\":1,\"b\":2,\"l\":[2]}");
    json_decref(r);
    r = apply("application/json-patch+json", "{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/a\"}]",
              "Pod", &e);
    check_json(r, "{}");
    json_decref(r);
    r = apply("Application/Strategic-Merge-Patch+JSON", "{\"metadata\":{\"finalizers\":[\"a\"]}}",
              "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}", "Pod", &e);
    check_json(r, "{\"metadata\":{\"finalizers\":[\"a\",\"b\"]}}");
    json_decref(r);
    /* a body that is not NUL-terminated */
    json_t *o = J("{\"a\":1}");
    r = patch_apply(PATCH_CT_MERGE, o, "{\"a\":2}garbage", 7, "Pod", &e);
    check_json(r, "{\"a\":2}");
    json_decref(r);
    json_decref(o);
    api_err_clear(&e);
}

static void test_apply_errors(void **state)
{
    (void)state;
    apply_err("text/plain", "{}", API_UNSUPPORTED_MEDIA,
              "the body of the request was in an unknown format - accepted media types include: "
              "application/json-patch+json, application/merge-patch+json, "
              "application/apply-patch+yaml, application/strategic-merge-patch+json");
    apply_err(NULL, "{}", API_UNSUPPORTED_MEDIA, NULL);
    /* server-side apply is served, but not as a patch of this module */
    apply_err("application/apply-patch+yaml", "{}", API_UNSUPPORTED_MEDIA, NULL);
    api_err e;
    api_err_init(&e);
    assert_int_equal(patch_check_type("application/apply-patch+yaml; charset=utf-8", &e), 0);
    assert_true(patch_is_apply("Application/Apply-Patch+YAML"));
    assert_false(patch_is_apply(PATCH_CT_MERGE));
    api_err_clear(&e);
    apply_err(PATCH_CT_MERGE, "{\"a\":", API_BAD_REQUEST, NULL);
    apply_err(PATCH_CT_STRATEGIC, "", API_BAD_REQUEST, NULL);
    apply_err(PATCH_CT_JSON, "nope", API_BAD_REQUEST, NULL);
    apply_err(PATCH_CT_MERGE, "[1]", API_BAD_REQUEST,
              "json: cannot unmarshal array into Go value of type map[string]interface {}");
    apply_err(PATCH_CT_STRATEGIC, "\"x\"", API_BAD_REQUEST, NULL);
    apply_err(PATCH_CT_JSON, "{\"op\":\"add\"}", API_BAD_REQUEST,
              "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
    apply_err(PATCH_CT_JSON, "[{\"op\":\"test\",\"path\":\"/a\",\"value\":2}]", API_INVALID,
              "the server rejected our request due to an error in our request");
    /* the result must still be an object */
    apply_err(PATCH_CT_JSON, "[{\"op\":\"replace\",\"path\":\"\",\"value\":1}]", API_INVALID, NULL);
}

static void test_apply_json_duplicate_op(void **state)
{
    (void)state;
    /* RFC 6902 A.13: an invalid JSON patch document */
    apply_err(PATCH_CT_JSON,
              "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"op\":\"remove\"}]",
              API_BAD_REQUEST, NULL);
}

static void test_apply_too_many_ops(void **state)
{
    (void)state;
    const char *op = "{\"op\":\"test\",\"path\":\"/a\",\"value\":1},";
    size_t n = PATCH_MAX_JSON_OPS + 1, ol = strlen(op);
    char *body = malloc(n * ol + 2), *w = body;
    *w++ = '[';
    for (size_t i = 0; i < n; i++, w += ol)
        memcpy(w, op, ol);
    w[-1] = ']';
    *w = '\0';
    apply_err(PATCH_CT_JSON, body, API_TOO_LARGE,
              "The allowed maximum operations in a JSON patch is 10000, got 10001");
    free(body);
}

/* The amplifying patch of issue 12: one add, then copies of
 * /metadata/annotations into itself, each doubling it. Stops at the copy
 * bound (422, upstream's message) long before it costs anything. */
static void test_json_copy_amplification_bounded(void **state)
{
    (void)state;
    char big[1200];
    memset(big, 'v', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    size_t cap = 64 * 1024;
    char *body = malloc(cap), *w = body;
    w +=
        sprintf(w, "[{\"op\":\"add\",\"path\":\"/metadata/annotations/x0\",\"value\":\"%s\"}", big);
    for (int i = 1; i <= 41; i++)
        w += sprintf(w,
                     ",{\"op\":\"copy\",\"from\":\"/metadata/annotations\","
                     "\"path\":\"/metadata/annotations/x%d\"}",
                     i);
    strcpy(w, "]");
    api_err e;
    api_err_init(&e);
    json_t *o = J("{\"metadata\":{\"name\":\"c\",\"annotations\":{}}}");
    json_t *r = patch_apply(PATCH_CT_JSON, o, body, strlen(body), "ConfigMap", &e);
    assert_null(r);
    assert_int_equal(e.code, API_INVALID);
    json_t *c = json_array_get(json_object_get(e.details, "causes"), 0);
    const char *cause = json_string_value(json_object_get(c, "message"));
    assert_non_null(strstr(cause, "Unable to complete the copy, the accumulated size increase of "
                                  "copy is "));
    assert_non_null(strstr(cause, ", exceeding the limit 3145728"));
    api_err_clear(&e);
    json_decref(o);
    free(body);
}

/* Copies up to the bound apply; one byte more does not. The accounting is
 * the compact JSON size of each copied value, summed over the patch. */
static void test_json_copy_limit_exact(void **state)
{
    (void)state;
    /* a string value of n bytes dumps as n + 2 (its quotes) */
    size_t n = PATCH_MAX_COPY_BYTES / 2 - 2;
    char *v = malloc(n + 1);
    memset(v, 'a', n);
    v[n] = '\0';
    json_t *doc = json_pack("{s:s}", "a", v);
    json_t *ops = J("[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/b\"},"
                    "{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"}]");
    api_err e;
    api_err_init(&e);
    json_t *r = patch_json(doc, ops, &e); /* exactly 3 MiB copied */
    assert_non_null(r);
    json_decref(r);
    json_decref(ops);
    ops = J("[{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/b\"},"
            "{\"op\":\"copy\",\"from\":\"/a\",\"path\":\"/c\"},"
            "{\"op\":\"copy\",\"from\":\"/d\",\"path\":\"/e\"}]");
    json_object_set_new(doc, "d", json_integer(7)); /* "7": one byte more */
    r = patch_json(doc, ops, &e);
    assert_null(r);
    assert_int_equal(e.code, API_INVALID);
    json_t *c = json_array_get(json_object_get(e.details, "causes"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "message")),
                        "Unable to complete the copy, the accumulated size increase of copy is "
                        "3145729, exceeding the limit 3145728");
    api_err_clear(&e);
    json_decref(ops);
    json_decref(doc);
    free(v);
}

/* Merge and strategic patches add at most their body, but a stored object
 * plus a body can still pass the body limit: the result is bounded too. */
static void test_result_size_bounded(void **state)
{
    (void)state;
    size_t n = 2 * 1024 * 1024;
    char *v = malloc(n + 1);
    memset(v, 'a', n);
    v[n] = '\0';
    json_t *orig = json_pack("{s:{s:s}, s:{s:s}}", "metadata", "name", "c", "data", "a", v);
    char *body = malloc(n + 64);
    sprintf(body, "{\"data\":{\"b\":\"%s\"}}", v);
    const char *cts[] = {PATCH_CT_MERGE, PATCH_CT_STRATEGIC};
    for (size_t i = 0; i < 2; i++) {
        api_err e;
        api_err_init(&e);
        json_t *r = patch_apply(cts[i], orig, body, strlen(body), "ConfigMap", &e);
        assert_null(r);
        assert_int_equal(e.code, API_TOO_LARGE);
        assert_string_equal(e.message, "Request entity too large: limit is 3145728");
        api_err_clear(&e);
    }
    /* the same through a JSON patch add */
    sprintf(body, "[{\"op\":\"add\",\"path\":\"/data/b\",\"value\":\"%s\"}]", v);
    api_err e;
    api_err_init(&e);
    assert_null(patch_apply(PATCH_CT_JSON, orig, body, strlen(body), "ConfigMap", &e));
    assert_int_equal(e.code, API_TOO_LARGE);
    api_err_clear(&e);
    /* under the bound it applies */
    sprintf(body, "{\"data\":{\"b\":\"small\"}}");
    json_t *r = patch_apply(PATCH_CT_MERGE, orig, body, strlen(body), "ConfigMap", &e);
    assert_non_null(r);
    json_decref(r);
    json_decref(orig);
    free(body);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_rfc7386_appendix_a),
        cmocka_unit_test(test_merge_rfc7386_section3),
        cmocka_unit_test(test_merge_result_is_independent),
        cmocka_unit_test(test_json_rfc6902_a1_to_a8),
        cmocka_unit_test(test_json_rfc6902_a9_to_a16),
        cmocka_unit_test(test_json_more_ops),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_smp_kubectl_apply_image),
        cmocka_unit_test(test_smp_set_element_order),
        cmocka_unit_test(test_smp_labels_and_scale),
        cmocka_unit_test(test_smp_finalizers),
        cmocka_unit_test(test_smp_patch_delete_and_replace),
        cmocka_unit_test(test_smp_retain_keys),
        cmocka_unit_test(test_smp_merge_keys),
        cmocka_unit_test(test_smp_atomic_lists_and_types),
        cmocka_unit_test(test_smp_merge_list_limit),
        cmocka_unit_test(test_smp_unknown_kind_is_merge_patch),
        cmocka_unit_test(test_apply_dispatch),
        cmocka_unit_test(test_apply_errors),
        cmocka_unit_test(test_apply_json_duplicate_op),
        cmocka_unit_test(test_apply_too_many_ops),
        cmocka_unit_test(test_json_copy_amplification_bounded),
        cmocka_unit_test(test_json_copy_limit_exact),
        cmocka_unit_test(test_result_size_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
