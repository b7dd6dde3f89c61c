/* test_pod_resize.c - pods/resize: which fields a resize may change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/pod_resize.h"
#include "testutil.h"

static json_t *pod(const char *resources)
{
    char buf[1024];
    snprintf(buf, sizeof buf,
             "{'metadata':{'name':'r'},'spec':{'containers':[{'name':'c','image':'nginx',"
             "'resources':%s},{'name':'d','image':'busybox','resources':%s}]}}",
             resources, resources);
    return J(buf);
}

static void test_resize_takes_resources_only(void **state)
{
    json_t *cur = pod("{'requests':{'cpu':'500m'},'limits':{'cpu':'1'}}");
    json_t *req = J("{'metadata':{'name':'r','labels':{'x':'y'}},'spec':{'nodeName':'n',"
                    "'containers':[{'name':'c','image':'evil','resources':{'requests':"
                    "{'cpu':'800m'},'limits':{'cpu':'1'}},'resizePolicy':[{'resourceName':"
                    "'cpu','restartPolicy':'NotRequired'}]}]}}");
    api_err e;
    api_err_init(&e);
    json_t *out = pod_resize_apply(cur, req, &e);
    assert_non_null(out);
    json_t *c = json_array_get(json_object_get(json_object_get(out, "spec"), "containers"), 0);
    assert_string_equal(json_string_value(json_object_get(c, "image")), "nginx");
    json_t *want = J("{'requests':{'cpu':'800m'},'limits':{'cpu':'1'}}");
    assert_true(json_equal(json_object_get(c, "resources"), want));
    assert_non_null(json_object_get(c, "resizePolicy"));
    /* container d was not named: unchanged; nothing outside containers moves */
    json_t *d = json_array_get(json_object_get(json_object_get(out, "spec"), "containers"), 1);
    assert_true(json_equal(
        d, json_array_get(json_object_get(json_object_get(cur, "spec"), "containers"), 1)));
    assert_null(json_object_get(json_object_get(out, "spec"), "nodeName"));
    assert_null(json_object_get(json_object_get(out, "metadata"), "labels"));
    json_decref(want);
    json_decref(out);
    json_decref(req);
    json_decref(cur);
}

static void expect_invalid(const char *cur_res, const char *req_res, const char *message)
{
    json_t *cur = pod(cur_res);
    char buf[512];
    snprintf(buf, sizeof buf, "{'spec':{'containers':[{'name':'c','resources':%s}]}}", req_res);
    json_t *req = J(buf);
    api_err e;
    api_err_init(&e);
    assert_null(pod_resize_apply(cur, req, &e));
    assert_int_equal(e.code, API_INVALID);
    assert_string_equal(e.message, message);
    api_err_clear(&e);
    json_decref(req);
    json_decref(cur);
}

static void test_resize_refusals(void **state)
{
    expect_invalid("{'requests':{'cpu':'1','ephemeral-storage':'1Gi'}}",
                   "{'requests':{'cpu':'1','ephemeral-storage':'2Gi'}}",
                   "Pod \"r\" is invalid: spec: Forbidden: only cpu and memory resources are "
                   "mutable");
    expect_invalid("{'requests':{'cpu':'1','memory':'1Gi'},'limits':{'cpu':'1','memory':'1Gi'}}",
                   "{'requests':{'cpu':'1','memory':'1Gi'},'limits':{'cpu':'2','memory':'1Gi'}}",
                   "Pod \"r\" is invalid: spec: Invalid value: \"Guaranteed\": Pod QOS Class may "
                   "not change as a result of resizing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_takes_resources_only),
        cmocka_unit_test(test_resize_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
