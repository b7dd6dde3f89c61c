/* test_pod_validation.c - pod create, update, status and resize validation,
 * with upstream's messages as vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/objects.h"
#include "api/pod_validation.h"
#include "api/status.h"
#include "teststore.h"

#define INV "FieldValueInvalid"
#define REQ "FieldValueRequired"
#define FORB "FieldValueForbidden"
#define DUP "FieldValueDuplicate"
#define NOTSUP "FieldValueNotSupported"

/* A defaulted pod, as the registry validates it. */
static json_t *pod(const char *spec)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "{'metadata':{'name':'p','namespace':'d'},'spec':%s}", spec);
    json_t *p = J(buf);
    pod_defaults(p);
    return p;
}

/* A pod with one container "c" whose resources are `res`. */
static json_t *pod_res(const char *res)
{
    char buf[2048];
    snprintf(buf, sizeof buf, "{'containers':[{'name':'c','image':'nginx','resources':%s}]}", res);
    return pod(buf);
}

static json_t *create_causes(json_t *p)
{
    json_t *causes = json_array();
    pod_validate_create(p, causes);
    json_decref(p);
    return causes;
}

static void expect_none(json_t *causes)
{
    if (json_array_size(causes)) {
        char *s = json_dumps(causes, JSON_COMPACT);
        fail_msg("unexpected causes: %s", s);
    }
    json_decref(causes);
}

/* Exactly one cause. */
static void expect_one(json_t *causes, const char *reason, const char *field, const char *msg)
{
    if (json_array_size(causes) != 1) {
        char *s = json_dumps(causes, JSON_COMPACT);
        fail_msg("want one cause, got: %s", s);
    }
    expect_cause(causes, 0, reason, field, msg);
    json_decref(causes);
}

/* ---- create: resources ---- */

static void test_negative_quantities(void **state)
{
    (void)state;
    expect_one(create_causes(pod_res("{'requests':{'cpu':'-1'}}")), INV,
               "spec.containers[0].resources.requests[cpu]",
               "Invalid value: \"-1\": must be greater than or equal to 0");
    expect_one(create_causes(pod_res("{'requests':{'memory':'-100'}}")), INV,
               "spec.containers[0].resources.requests[memory]",
               "Invalid value: \"-100\": must be greater than or equal to 0");
    /* a limit copied into the missing request: both are reported */
    json_t *c = create_causes(pod_res("{'limits':{'cpu':'-100'}}"));
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, INV, "spec.containers[0].resources.limits[cpu]",
                 "Invalid value: \"-100\": must be greater than or equal to 0");
    expect_cause(c, 1, INV, "spec.containers[0].resources.requests[cpu]",
                 "Invalid value: \"-100\": must be greater than or equal to 0");
    json_decref(c);
}

static void test_request_above_limit(void **state)
{
    (void)state;
    expect_one(create_causes(pod_res("{'requests':{'cpu':'2'},'limits':{'cpu':'1'}}")), INV,
               "spec.containers[0].resources.requests",
               "Invalid value: \"2\": must be less than or equal to cpu limit of 1");
    /* cpu in Gi is only a large number; above the limit it is refused */
    expect_one(create_causes(pod_res("{'requests':{'cpu':'1Gi'},'limits':{'cpu':'1'}}")), INV,
               "spec.containers[0].resources.requests",
               "Invalid value: \"1Gi\": must be less than or equal to cpu limit of 1");
    expect_one(create_causes(pod_res("{'requests':{'memory':'2Gi'},'limits':{'memory':'1Gi'}}")),
               INV, "spec.containers[0].resources.requests",
               "Invalid value: \"2Gi\": must be less than or equal to memory limit of 1Gi");
    /* compared by value, printed canonically */
    expect_none(create_causes(pod_res("{'requests':{'cpu':'1000m'},'limits':{'cpu':'1'}}")));
    expect_none(create_causes(pod_res("{'requests':{'cpu':'500m'},'limits':{'cpu':'1'}}")));
}

static void test_extended_resources(void **state)
{
    (void)state;
    /* fractional: the limit, and the request defaulted from it */
    json_t *c = create_causes(pod_res("{'limits':{'nvidia.com/gpu':'500m'}}"));
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, INV, "spec.containers[0].resources.limits[nvidia.com/gpu]",
                 "Invalid value: \"500m\": must be an integer");
    expect_cause(c, 1, INV, "spec.containers[0].resources.requests[nvidia.com/gpu]",
                 "Invalid value: \"500m\": must be an integer");
    json_decref(c);
    expect_one(create_causes(pod_res("{'requests':{'nvidia.com/gpu':'1'},"
                                     "'limits':{'nvidia.com/gpu':'2'}}")),
               INV, "spec.containers[0].resources.requests",
               "Invalid value: \"1\": must be equal to nvidia.com/gpu limit of 2");
    expect_one(create_causes(pod_res("{'requests':{'nvidia.com/gpu':'1'}}")), REQ,
               "spec.containers[0].resources.limits",
               "Required value: Limit must be set for non overcommitable resources");
    expect_none(create_causes(pod_res("{'limits':{'nvidia.com/gpu':'2'}}")));
    /* a native name with a domain may be overcommitted and fractional */
    expect_none(create_causes(pod_res("{'requests':{'kubernetes.io/foo':'500m'}}")));
}

static void test_hugepages(void **state)
{
    (void)state;
    expect_none(create_causes(pod_res("{'limits':{'hugepages-2Mi':'4Mi','memory':'1Gi'}}")));
    json_t *c = create_causes(pod_res("{'limits':{'hugepages-2Mi':'3Mi','memory':'1Gi'}}"));
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, INV, "spec.containers[0].resources.limits[hugepages-2Mi]",
                 "Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi");
    expect_cause(c, 1, INV, "spec.containers[0].resources.requests[hugepages-2Mi]",
                 "Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi");
    json_decref(c);
    expect_one(create_causes(pod_res("{'limits':{'hugepages-2Mi':'4Mi'}}")), FORB,
               "spec.containers[0].resources", "Forbidden: HugePages require cpu or memory");
    expect_one(create_causes(pod_res("{'requests':{'hugepages-2Mi':'2Mi','cpu':'1'},"
                                     "'limits':{'hugepages-2Mi':'4Mi'}}")),
               INV, "spec.containers[0].resources.requests",
               "Invalid value: \"2Mi\": must be equal to hugepages-2Mi limit of 4Mi");
}

static void test_resource_names(void **state)
{
    (void)state;
    json_t *c = create_causes(pod_res("{'requests':{'foo':'1'}}"));
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, INV, "spec.containers[0].resources.requests[foo]",
                 "Invalid value: \"foo\": must be a standard resource type or fully qualified");
    expect_cause(c, 1, INV, "spec.containers[0].resources.requests[foo]",
                 "Invalid value: \"foo\": must be a standard resource for containers");
    json_decref(c);
    expect_one(create_causes(pod_res("{'requests':{'requests.cpu':'1'}}")), INV,
               "spec.containers[0].resources.requests[requests.cpu]",
               "Invalid value: \"requests.cpu\": must be a standard resource for containers");
    expect_one(create_causes(pod_res("{'requests':{'pods':'1'}}")), INV,
               "spec.containers[0].resources.requests[pods]",
               "Invalid value: \"pods\": must be a standard resource for containers");
}

static void test_unparsable_quantities(void **state)
{
    (void)state;
    static const char *const bad[] = {"'abc'", "'1.2.3'", "{}", "[]", "true", "'  '", NULL};
    for (const char *const *b = bad; *b; b++) {
        char res[128];
        snprintf(res, sizeof res, "{'requests':{'cpu':%s}}", *b);
        json_t *c = create_causes(pod_res(res));
        assert_int_equal(json_array_size(c), 1);
        const json_t *cause = json_array_get(c, 0);
        assert_string_equal(json_string_value(json_object_get(cause, "field")),
                            "spec.containers[0].resources.requests[cpu]");
        assert_string_equal(json_string_value(json_object_get(cause, "reason")), INV);
        json_decref(c);
    }
    expect_one(create_causes(pod_res("{'requests':{'cpu':'abc'}}")), INV,
               "spec.containers[0].resources.requests[cpu]",
               "Invalid value: \"abc\": quantities must match the regular expression "
               "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    /* a bad limit is reported once; the request against it is not compared */
    json_t *c = create_causes(pod_res("{'requests':{'cpu':'1'},'limits':{'cpu':'x'}}"));
    assert_int_equal(json_array_size(c), 1);
    json_decref(c);
    /* resources of the wrong shape do not crash */
    expect_none(create_causes(pod_res("{'requests':'cpu'}")));
    expect_none(create_causes(pod_res("[]")));
}

static void test_other_lists(void **state)
{
    (void)state;
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'initContainers':[{'name':'i','image':'x','resources':"
                                 "{'requests':{'cpu':'2'},'limits':{'cpu':'1'}}}]}")),
               INV, "spec.initContainers[0].resources.requests",
               "Invalid value: \"2\": must be less than or equal to cpu limit of 1");
    json_t *c = create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                  "'ephemeralContainers':[{'name':'e','image':'x','resources':"
                                  "{'requests':{'cpu':'-1'}}}]}"));
    assert_int_equal(json_array_size(c), 3);
    expect_cause(c, 0, INV, "spec.ephemeralContainers[0].resources.requests[cpu]",
                 "Invalid value: \"-1\": must be greater than or equal to 0");
    expect_cause(c, 1, FORB, "spec.ephemeralContainers[0].resources",
                 "Forbidden: cannot be set for an Ephemeral Container");
    expect_cause(c, 2, FORB, "spec.ephemeralContainers", "Forbidden: cannot be set on create");
    json_decref(c);
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'overhead':{'cpu':'-1'}}")),
               INV, "spec.overhead.limits[cpu]",
               "Invalid value: \"-1\": must be greater than or equal to 0");
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'overhead':{'nvidia.com/gpu':'500m'}}")),
               INV, "spec.overhead.limits[nvidia.com/gpu]",
               "Invalid value: \"500m\": must be an integer");
    expect_none(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                  "'overhead':{'cpu':'250m','memory':'120Mi'}}")));
}

static void test_pod_level_resources(void **state)
{
    (void)state;
    const char *ctr = "'containers':[{'name':'c','image':'x','resources':{'requests':"
                      "{'cpu':'1'},'limits':{'cpu':'2'}}}]";
    char buf[1024];
    snprintf(buf, sizeof buf, "{%s,'resources':{'requests':{'cpu':'500m'},'limits':{'cpu':'4'}}}",
             ctr);
    expect_one(create_causes(pod(buf)), INV, "spec.resources.requests[cpu]",
               "Invalid value: \"500m\": must be greater than or equal to aggregate container "
               "requests of 1");
    snprintf(buf, sizeof buf, "{%s,'resources':{'requests':{'cpu':'1'},'limits':{'cpu':'1500m'}}}",
             ctr);
    expect_one(create_causes(pod(buf)), INV, "spec.resources.containers[0][cpu].limits",
               "Invalid value: \"2\": must be less than or equal to pod limits of 1500m");
    snprintf(buf, sizeof buf, "{%s,'resources':{'requests':{'cpu':'3'},'limits':{'cpu':'2'}}}",
             ctr);
    expect_one(create_causes(pod(buf)), INV, "spec.resources.requests",
               "Invalid value: \"3\": must be less than or equal to cpu limit of 2");
    snprintf(buf, sizeof buf, "{%s,'resources':{'requests':{'ephemeral-storage':'1Gi'}}}", ctr);
    expect_one(create_causes(pod(buf)), NOTSUP, "spec.resources.requests[ephemeral-storage]",
               "Unsupported value: \"ephemeral-storage\": supported values: \"cpu\", \"memory\"");
    snprintf(buf, sizeof buf, "{%s,'resources':{'claims':[{'name':'x'}]}}", ctr);
    expect_one(create_causes(pod(buf)), FORB, "spec.resources.claims",
               "Forbidden: claims cannot be set for Resources at pod-level");
    snprintf(buf, sizeof buf, "{%s,'resources':{'requests':{'cpu':'1'},'limits':{'cpu':'2'}}}",
             ctr);
    expect_none(create_causes(pod(buf)));
    /* init containers: the max of each init container (plus earlier sidecars) */
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x','resources':"
                                 "{'requests':{'cpu':'1'}}}],'initContainers':[{'name':'i',"
                                 "'image':'x','resources':{'requests':{'cpu':'3'}}}],"
                                 "'resources':{'requests':{'cpu':'2'}}}")),
               INV, "spec.resources.requests[cpu]",
               "Invalid value: \"2\": must be greater than or equal to aggregate container "
               "requests of 3");
}

/* ---- create: structure ---- */

static void test_structure(void **state)
{
    (void)state;
    expect_one(create_causes(pod("{}")), REQ, "spec.containers", "Required value");
    expect_one(create_causes(pod("{'containers':[]}")), REQ, "spec.containers", "Required value");
    json_t *c = create_causes(pod("{'containers':[{'image':''}]}"));
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, REQ, "spec.containers[0].name", "Required value");
    expect_cause(c, 1, REQ, "spec.containers[0].image", "Required value");
    json_decref(c);
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'},"
                                 "{'name':'c','image':'y'}]}")),
               DUP, "spec.containers[1].name", "Duplicate value: \"c\"");
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'initContainers':[{'name':'c','image':'y'}]}")),
               DUP, "spec.initContainers[0].name", "Duplicate value: \"c\"");
    c = create_causes(pod("{'containers':[{'name':'Bad_Name','image':'x'}]}"));
    assert_int_equal(json_array_size(c), 1);
    expect_cause(c, 0, INV, "spec.containers[0].name",
                 "Invalid value: \"Bad_Name\": a lowercase RFC 1123 label must consist of lower "
                 "case alphanumeric characters or '-', and must start and end with an "
                 "alphanumeric character (e.g. 'my-name' or '123-abc', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
    json_decref(c);
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':' nginx'}]}")), INV,
               "spec.containers[0].image",
               "Invalid value: \" nginx\": must not have leading or trailing whitespace");
}

static void test_scheduling_fields(void **state)
{
    (void)state;
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'activeDeadlineSeconds':0}")),
               INV, "spec.activeDeadlineSeconds",
               "Invalid value: 0: must be between 1 and 2147483647, inclusive");
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],'nodeName':'n',"
                                 "'schedulingGates':[{'name':'a'}]}")),
               FORB, "spec.nodeName",
               "Forbidden: cannot be set until all schedulingGates have been cleared");
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'schedulingGates':[{'name':'a'},{'name':'a'}]}")),
               DUP, "spec.schedulingGates[1]", "Duplicate value: \"a\"");
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'tolerations':[{'key':'k','operator':'Bogus'}]}")),
               NOTSUP, "spec.tolerations[0].operator",
               "Unsupported value: \"Bogus\": supported values: \"Equal\", \"Exists\"");
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'tolerations':[{'operator':'Equal','value':'v'}]}")),
               INV, "spec.tolerations[0].operator",
               "Invalid value: \"Equal\": operator must be Exists when `key` is empty, which "
               "means \"match all values and all keys\"");
    expect_one(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                 "'tolerations':[{'key':'k','effect':'NoSchedule',"
                                 "'tolerationSeconds':5}]}")),
               INV, "spec.tolerations[0].effect",
               "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when "
               "`tolerationSeconds` is set");
    expect_none(create_causes(pod("{'containers':[{'name':'c','image':'x'}],"
                                  "'activeDeadlineSeconds':30,'schedulingGates':[{'name':"
                                  "'example.com/a'}],'tolerations':[{'operator':'Exists'}]}")));
}

/* ---- ValidatePodUpdate ---- */

static const char *const BASE =
    "{'nodeName':'n1','containers':[{'name':'c','image':'nginx','resources':{'requests':"
    "{'cpu':'1','memory':'1Gi'},'limits':{'cpu':'2'}}}],'tolerations':[{'key':'a',"
    "'operator':'Exists','effect':'NoExecute','tolerationSeconds':10}],"
    "'schedulingGates':[{'name':'g1'},{'name':'g2'}]}";

static json_t *update_causes(json_t *nw, json_t *old, const char *sub)
{
    json_t *causes = json_array();
    pod_validate_update(nw, old, sub, causes);
    json_decref(nw);
    json_decref(old);
    return causes;
}

static json_t *spec_of(json_t *p)
{
    return json_object_get(p, "spec");
}

static json_t *ctr0(json_t *p)
{
    return json_array_get(json_object_get(spec_of(p), "containers"), 0);
}

static json_t *req0(json_t *p)
{
    return json_object_get(json_object_get(ctr0(p), "resources"), "requests");
}

/* One cause: `spec: Forbidden: pod updates may not change ...\nchanged: <changed>`. */
static void expect_forbidden_update(json_t *causes, const char *changed)
{
    char msg[2048];
    snprintf(msg, sizeof msg, "Forbidden: %s\nchanged: %s", POD_MSG_UPDATE_FORBIDDEN, changed);
    expect_one(causes, FORB, "spec", msg);
}

static void test_update_resources_forbidden(void **state)
{
    (void)state;
    json_t *old = pod(BASE), *nw = pod(BASE);
    json_object_set_new(req0(nw), "cpu", json_string("2"));
    expect_forbidden_update(update_causes(nw, old, ""),
                            "spec.containers[0].resources.requests[cpu]");
    /* past the limit too: the new spec is validated first, as upstream */
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(req0(nw), "cpu", json_string("100"));
    json_t *c = update_causes(nw, old, "");
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, INV, "spec.containers[0].resources.requests",
                 "Invalid value: \"100\": must be less than or equal to cpu limit of 2");
    assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "field")), "spec");
    json_decref(c);
    /* $patch: replace without requests: cpu defaults to its limit, memory is gone */
    old = pod(BASE);
    nw = pod(BASE);
    json_object_del(json_object_get(ctr0(nw), "resources"), "requests");
    pod_defaults(nw);
    expect_forbidden_update(update_causes(nw, old, ""),
                            "spec.containers[0].resources.requests[cpu], "
                            "spec.containers[0].resources.requests[memory]");
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(nw), "overhead", J("{'cpu':'1'}"));
    expect_forbidden_update(update_causes(nw, old, ""), "spec.overhead[cpu]");
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(nw), "nodeName", json_string("n2"));
    expect_forbidden_update(update_causes(nw, old, ""), "spec.nodeName");
    /* several changes: the first three are named */
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(nw), "nodeName", json_string("n2"));
    json_object_set_new(spec_of(nw), "hostNetwork", json_true());
    json_object_set_new(spec_of(nw), "priority", json_integer(5));
    json_object_set_new(spec_of(nw), "restartPolicy", json_string("Never"));
    c = update_causes(nw, old, "");
    assert_int_equal(json_array_size(c), 1);
    const char *msg = json_string_value(json_object_get(json_array_get(c, 0), "message"));
    assert_non_null(strstr(msg, ", and 1 more"));
    json_decref(c);
}

static void test_update_containers_added(void **state)
{
    (void)state;
    json_t *old = pod(BASE), *nw = pod(BASE);
    json_array_append_new(json_object_get(spec_of(nw), "containers"),
                          J("{'name':'d','image':'x'}"));
    expect_one(update_causes(nw, old, ""), FORB, "spec.containers",
               "Forbidden: pod updates may not add or remove containers");
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(nw), "initContainers", J("[{'name':'i','image':'x'}]"));
    pod_defaults(nw);
    expect_one(update_causes(nw, old, ""), FORB, "spec.initContainers",
               "Forbidden: pod updates may not add or remove containers");
}

static void test_update_allowed(void **state)
{
    (void)state;
    /* images, a new toleration, a changed tolerationSeconds, a removed gate */
    json_t *old = pod(BASE), *nw = pod(BASE);
    json_object_set_new(ctr0(nw), "image", json_string("nginx:2"));
    json_t *tol = json_array_get(json_object_get(spec_of(nw), "tolerations"), 0);
    json_object_set_new(tol, "tolerationSeconds", json_integer(20));
    json_array_append_new(json_object_get(spec_of(nw), "tolerations"),
                          J("{'key':'b','operator':'Exists'}"));
    json_array_remove(json_object_get(spec_of(nw), "schedulingGates"), 0);
    json_object_set_new(spec_of(nw), "activeDeadlineSeconds", json_integer(60));
    expect_none(update_causes(nw, old, ""));
    /* the same quantity written differently is no change */
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(req0(nw), "cpu", json_string("1000m"));
    expect_none(update_causes(nw, old, ""));
    /* empty lists and maps equal absent ones; zero values of omitempty fields too */
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(nw), "volumes", json_array());
    json_object_set_new(spec_of(nw), "nodeSelector", json_object());
    json_object_set_new(spec_of(nw), "hostNetwork", json_false());
    json_object_set_new(spec_of(nw), "hostname", json_string(""));
    expect_none(update_causes(nw, old, ""));
    /* metadata only: a stored pod is not revalidated */
    old = pod_res("{'requests':{'cpu':'2'},'limits':{'cpu':'1'}}");
    nw = json_deep_copy(old);
    json_object_set_new(json_object_get(nw, "metadata"), "labels", J("{'a':'b'}"));
    expect_none(update_causes(nw, old, ""));
    /* ... also when it was stored without a default allot now sets */
    old = pod_res("{'requests':{'cpu':'2'},'limits':{'cpu':'1'}}");
    json_object_del(spec_of(old), "enableServiceLinks");
    nw = json_deep_copy(old);
    pod_defaults(nw);
    json_object_set_new(json_object_get(nw, "metadata"), "finalizers", J("[]"));
    expect_none(update_causes(nw, old, ""));
    /* a pod stored without a default allot now sets */
    old = pod(BASE);
    json_object_del(spec_of(old), "enableServiceLinks");
    nw = pod(BASE);
    expect_none(update_causes(nw, old, ""));
}

static void test_update_active_deadline(void **state)
{
    (void)state;
    json_t *old = pod(BASE), *nw = pod(BASE);
    json_object_set_new(spec_of(old), "activeDeadlineSeconds", json_integer(60));
    json_object_set_new(spec_of(nw), "activeDeadlineSeconds", json_integer(30));
    expect_none(update_causes(nw, old, ""));
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(old), "activeDeadlineSeconds", json_integer(60));
    json_object_set_new(spec_of(nw), "activeDeadlineSeconds", json_integer(61));
    expect_one(update_causes(nw, old, ""), INV, "spec.activeDeadlineSeconds",
               "Invalid value: 61: must be less than or equal to previous value");
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(old), "activeDeadlineSeconds", json_integer(60));
    expect_one(update_causes(nw, old, ""), INV, "spec.activeDeadlineSeconds",
               "Invalid value: null: must not update from a positive integer to nil value");
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(nw), "activeDeadlineSeconds", json_integer(-5));
    json_t *c = update_causes(nw, old, "");
    /* the spec rule (1..) and the update rule (0..), as upstream */
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, INV, "spec.activeDeadlineSeconds",
                 "Invalid value: -5: must be between 1 and 2147483647, inclusive");
    expect_cause(c, 1, INV, "spec.activeDeadlineSeconds",
                 "Invalid value: -5: must be between 0 and 2147483647, inclusive");
    json_decref(c);
}

static void test_update_tolerations_gates_grace(void **state)
{
    (void)state;
    json_t *old = pod(BASE), *nw = pod(BASE);
    json_t *tol = json_array_get(json_object_get(spec_of(nw), "tolerations"), 0);
    json_object_set_new(tol, "key", json_string("z"));
    expect_one(update_causes(nw, old, ""), FORB, "spec.tolerations",
               "Forbidden: existing toleration can not be modified except its "
               "tolerationSeconds");
    old = pod(BASE);
    nw = pod(BASE);
    json_array_append_new(json_object_get(spec_of(nw), "schedulingGates"), J("{'name':'g3'}"));
    expect_one(update_causes(nw, old, ""), FORB, "spec.schedulingGates[2].name",
               "Forbidden: only deletion is allowed, but found new scheduling gate 'g3'");
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(old), "terminationGracePeriodSeconds", json_integer(-1));
    json_object_set_new(spec_of(nw), "terminationGracePeriodSeconds", json_integer(1));
    expect_none(update_causes(nw, old, ""));
    old = pod(BASE);
    nw = pod(BASE);
    json_object_set_new(spec_of(nw), "terminationGracePeriodSeconds", json_integer(1));
    expect_forbidden_update(update_causes(nw, old, ""), "spec.terminationGracePeriodSeconds");
}

static void test_update_unknown_sub_is_strict(void **state)
{
    (void)state;
    json_t *old = pod(BASE), *nw = pod(BASE);
    json_object_set_new(req0(nw), "cpu", json_string("2"));
    expect_forbidden_update(update_causes(nw, old, "scale"),
                            "spec.containers[0].resources.requests[cpu]");
}

/* ---- binding and status ---- */

static void test_binding_and_status(void **state)
{
    (void)state;
    json_t *old = pod_res("{}"), *nw = pod_res("{}");
    json_object_set_new(spec_of(nw), "nodeName", json_string("n1"));
    expect_none(update_causes(nw, old, "binding"));
    old = pod_res("{}");
    nw = pod_res("{}");
    json_t *st = json_object_get(nw, "status");
    json_object_set_new(st, "phase", json_string("Running"));
    json_object_set_new(st, "containerStatuses",
                        J("[{'name':'c','allocatedResources':{'cpu':'1'},'resources':"
                          "{'requests':{'cpu':'1'}}}]"));
    expect_none(update_causes(nw, old, "status"));
    old = pod_res("{}");
    nw = pod_res("{}");
    json_object_set_new(json_object_get(nw, "status"), "qosClass", json_string("Guaranteed"));
    expect_one(update_causes(nw, old, "status"), INV, "status.qosClass",
               "Invalid value: \"Guaranteed\": field is immutable");
    old = pod_res("{}");
    nw = pod_res("{}");
    json_object_del(json_object_get(nw, "status"), "qosClass"); /* backfilled upstream */
    expect_none(update_causes(nw, old, "status"));
    old = pod_res("{}");
    nw = pod_res("{}");
    json_object_set_new(json_object_get(nw, "status"), "containerStatuses",
                        J("[{'name':'c','allocatedResources':{'cpu':'-1','memory':'zz'}}]"));
    json_t *c = update_causes(nw, old, "status");
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, INV, "status.containerStatuses[0].allocatedResources[cpu]",
                 "Invalid value: \"-1\": must be greater than or equal to 0");
    assert_string_equal(json_string_value(json_object_get(json_array_get(c, 1), "field")),
                        "status.containerStatuses[0].allocatedResources[memory]");
    json_decref(c);
    old = pod_res("{}");
    nw = pod_res("{}");
    json_object_set_new(spec_of(nw), "nodeName", json_string("n9"));
    expect_one(update_causes(nw, old, "status"), FORB, "status.nodeName",
               "Forbidden: may not be changed directly");
    /* a pod stored without a class (before the status path defaulted it)
     * takes its spec's, the one quota reads for it, and no other */
    old = pod_res("{'requests':{'cpu':'1'}}");
    nw = pod_res("{'requests':{'cpu':'1'}}");
    json_object_del(json_object_get(old, "status"), "qosClass");
    expect_none(update_causes(nw, old, "status"));
    old = pod_res("{'requests':{'cpu':'1'}}");
    nw = pod_res("{'requests':{'cpu':'1'}}");
    json_object_set_new(json_object_get(old, "status"), "qosClass", json_string(""));
    json_object_set_new(json_object_get(nw, "status"), "qosClass", json_string("BestEffort"));
    expect_one(update_causes(nw, old, "status"), INV, "status.qosClass",
               "Invalid value: \"BestEffort\": field is immutable");
}

/* ---- status.qosClass: ComputePodQOS at create, kept after ---- */

static const char *qos_of(const json_t *p)
{
    return json_string_value(json_object_get(json_object_get(p, "status"), "qosClass"));
}

static void expect_qos(const char *res, const char *want)
{
    json_t *p = pod_res(res);
    if (strcmp(qos_of(p), want) != 0) fail_msg("%s: %s, want %s", res, qos_of(p), want);
    json_decref(p);
}

static void test_qos_class(void **state)
{
    (void)state;
    expect_qos("{}", "BestEffort");
    /* zero values do not count (upstream counts positive quantities only) */
    expect_qos("{'requests':{'cpu':'0'}}", "BestEffort");
    expect_qos("{'limits':{'cpu':'0','memory':'0'}}", "BestEffort");
    expect_qos("{'requests':{'ephemeral-storage':'1Gi'}}", "BestEffort");
    expect_qos("{'requests':{'cpu':'100m'}}", "Burstable");
    expect_qos("{'limits':{'cpu':'1','memory':'1Gi'}}", "Guaranteed");
    expect_qos("{'requests':{'cpu':'1000m','memory':'1Gi'},'limits':{'cpu':'1','memory':'1Gi'}}",
               "Guaranteed");
    expect_qos("{'requests':{'cpu':'500m'},'limits':{'cpu':'1','memory':'1Gi'}}", "Burstable");
    /* init containers count; summed requests against summed limits */
    json_t *p = pod("{'containers':[{'name':'c','image':'x','resources':{'limits':{'cpu':'1',"
                    "'memory':'1Gi'}}}],'initContainers':[{'name':'i','image':'x','resources':{"
                    "'requests':{'cpu':'1'}}}]}");
    assert_string_equal(qos_of(p), "Burstable");
    /* kept once set: an update does not derive it again */
    json_array_clear(json_object_get(spec_of(p), "initContainers"));
    pod_defaults(p);
    assert_string_equal(qos_of(p), "Burstable");
    assert_string_equal(pod_qos_class(p), "Guaranteed"); /* the spec's, status aside */
    /* empty counts as absent */
    json_object_set_new(json_object_get(p, "status"), "qosClass", json_string(""));
    pod_defaults(p);
    assert_string_equal(qos_of(p), "Guaranteed");
    json_decref(p);
}

/* ---- resize ---- */

static void test_resize(void **state)
{
    (void)state;
    const char *res = "{'requests':{'cpu':'500m','memory':'1Gi'},'limits':{'cpu':'1'}}";
    json_t *old = pod_res(res), *nw = pod_res(res);
    json_object_set_new(req0(nw), "cpu", json_string("800m"));
    expect_none(update_causes(nw, old, "resize"));
    old = pod_res(res);
    nw = pod_res(res);
    json_object_set_new(req0(nw), "cpu", json_string("100"));
    expect_one(update_causes(nw, old, "resize"), INV, "spec.containers[0].resources.requests",
               "Invalid value: \"100\": must be less than or equal to cpu limit of 1");
    old = pod_res(res);
    nw = pod_res(res);
    json_object_set_new(req0(nw), "cpu", json_string("-1"));
    expect_one(update_causes(nw, old, "resize"), INV, "spec.containers[0].resources.requests[cpu]",
               "Invalid value: \"-1\": must be greater than or equal to 0");
    old = pod_res(res);
    nw = pod_res(res);
    json_object_del(req0(nw), "memory");
    expect_one(update_causes(nw, old, "resize"), FORB, "spec.containers[0].resources.requests",
               "Forbidden: resource requests cannot be removed");
    old = pod_res(res);
    nw = pod_res(res);
    json_object_set_new(spec_of(nw), "nodeName", json_string("elsewhere"));
    expect_one(update_causes(nw, old, "resize"), FORB, "spec",
               "Forbidden: only cpu and memory resources are mutable");
    old = pod("{'containers':[{'name':'c','image':'x'}],'resources':{'requests':{'cpu':'1'}}}");
    nw = json_deep_copy(old);
    expect_one(update_causes(nw, old, "resize"), FORB, "",
               "Forbidden: pods with pod-level resources cannot be resized");
    const char *init = "{'containers':[{'name':'c','image':'x'}],'initContainers':[{'name':'i',"
                       "'image':'x','resources':{'requests':{'cpu':'1'}}}]}";
    old = pod(init);
    nw = pod(init);
    json_object_set_new(
        json_object_get(
            json_object_get(json_array_get(json_object_get(spec_of(nw), "initContainers"), 0),
                            "resources"),
            "requests"),
        "cpu", json_string("2"));
    expect_one(update_causes(nw, old, "resize"), FORB, "spec",
               "Forbidden: resources for non-sidecar init containers are immutable");
}

/* The resize path keeps the stored status; ValidatePodResize compares the
 * stored class with the resized spec's and shows the stored one. */
static json_t *resized(const char *from, const char *to)
{
    json_t *old = pod_res(from), *nw = pod_res(to);
    json_object_set(json_object_get(nw, "status"), "qosClass",
                    json_object_get(json_object_get(old, "status"), "qosClass"));
    json_t *causes = update_causes(nw, old, "resize");
    return causes;
}

#define QOS_MSG(cls)                                                                               \
    "Invalid value: \"" cls "\": Pod QOS Class may not change as a result of resizing"

static void test_resize_qos(void **state)
{
    (void)state;
    expect_one(resized("{}", "{'requests':{'cpu':'100m'}}"), INV, "spec", QOS_MSG("BestEffort"));
    expect_one(resized("{}", "{'limits':{'memory':'1Gi'}}"), INV, "spec", QOS_MSG("BestEffort"));
    const char *g = "{'limits':{'cpu':'1','memory':'1Gi'}}";
    expect_one(resized(g, "{'requests':{'cpu':'500m','memory':'1Gi'},'limits':{'cpu':'1',"
                          "'memory':'1Gi'}}"),
               INV, "spec", QOS_MSG("Guaranteed"));
    expect_one(resized("{'requests':{'cpu':'500m','memory':'1Gi'},'limits':{'cpu':'1',"
                       "'memory':'1Gi'}}",
                       g),
               INV, "spec", QOS_MSG("Burstable"));
    expect_none(resized(g, "{'limits':{'cpu':'2','memory':'2Gi'}}"));
    expect_none(resized("{'requests':{'cpu':'1'}}", "{'requests':{'cpu':'2','memory':'1Gi'}}"));
    /* a zero request keeps a pod BestEffort, as upstream */
    expect_none(resized("{}", "{'requests':{'cpu':'0'}}"));
    /* the stored class decides, not the stored spec's (upstream's GetPodQOS) */
    json_t *old = pod_res("{'requests':{'cpu':'1'}}"), *nw = pod_res("{'requests':{'cpu':'2'}}");
    json_object_set_new(json_object_get(old, "status"), "qosClass", json_string("BestEffort"));
    json_object_set_new(json_object_get(nw, "status"), "qosClass", json_string("BestEffort"));
    expect_one(update_causes(nw, old, "resize"), INV, "spec", QOS_MSG("BestEffort"));
    /* stored without a class: the stored spec's */
    old = pod_res("{'requests':{'cpu':'1'}}");
    nw = pod_res("{'requests':{'cpu':'2'}}");
    json_object_del(json_object_get(old, "status"), "qosClass");
    expect_none(update_causes(nw, old, "resize"));
    /* in upstream's order: the spec's own causes, the class, removals, then
     * what else changed */
    json_t *c = resized("{}", "{'requests':{'cpu':'2'},'limits':{'cpu':'1'}}");
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, INV, "spec.containers[0].resources.requests",
                 "Invalid value: \"2\": must be less than or equal to cpu limit of 1");
    expect_cause(c, 1, INV, "spec", QOS_MSG("BestEffort"));
    json_decref(c);
    c = resized("{'requests':{'cpu':'500m','memory':'1Gi','ephemeral-storage':'1Gi'},'limits':{"
                "'cpu':'1','memory':'1Gi'}}",
                "{'limits':{'cpu':'1','memory':'1Gi'}}");
    assert_int_equal(json_array_size(c), 3);
    expect_cause(c, 0, INV, "spec", QOS_MSG("Burstable"));
    expect_cause(c, 1, FORB, "spec.containers[0].resources.requests",
                 "Forbidden: resource requests cannot be removed");
    expect_cause(c, 2, FORB, "spec", "Forbidden: only cpu and memory resources are mutable");
    json_decref(c);
}

static void test_resize_other_resources(void **state)
{
    (void)state;
    expect_one(resized("{'requests':{'cpu':'1','ephemeral-storage':'1Gi'}}",
                       "{'requests':{'cpu':'1','ephemeral-storage':'2Gi'}}"),
               FORB, "spec", "Forbidden: only cpu and memory resources are mutable");
    /* added to a list that had none: refused here (upstream lets it through) */
    expect_one(
        resized("{'limits':{'cpu':'1'}}", "{'limits':{'cpu':'1','ephemeral-storage':'1Gi'}}"), FORB,
        "spec", "Forbidden: only cpu and memory resources are mutable");
    /* equal by value */
    expect_none(resized("{'requests':{'cpu':'1','ephemeral-storage':'1Gi'}}",
                        "{'requests':{'cpu':'2','ephemeral-storage':'1024Mi'}}"));
    /* a sidecar: its own message; removals checked before containers' */
    const char *sidecar =
        "{'containers':[{'name':'c','image':'x','resources':{'requests':{'cpu':'1'}}}],"
        "'initContainers':[{'name':'i','image':'x','restartPolicy':'Always','resources':{"
        "'requests':{'cpu':'1','ephemeral-storage':'1Gi'}}}]}";
    json_t *old = pod(sidecar), *nw = pod(sidecar);
    json_t *ireq = json_object_get(
        json_object_get(json_array_get(json_object_get(spec_of(nw), "initContainers"), 0),
                        "resources"),
        "requests");
    json_object_set_new(ireq, "ephemeral-storage", json_string("2Gi"));
    json_object_set_new(ireq, "cpu", json_string("2"));
    json_object_del(req0(nw), "cpu");
    json_t *c = update_causes(nw, old, "resize");
    assert_int_equal(json_array_size(c), 2);
    expect_cause(c, 0, FORB, "spec.containers[0].resources.requests",
                 "Forbidden: resource requests cannot be removed");
    expect_cause(c, 1, FORB, "spec",
                 "Forbidden: only cpu and memory resources for sidecar containers are mutable");
    json_decref(c);
}

/* ---- through the registry: the hooks are wired to the Pod kind ---- */

typedef struct set_ctx {
    const char *path; /* "cpu" request value to write, or NULL to change nodeName */
    const char *value;
} set_ctx;

static json_t *set_request(const json_t *cur, void *ctx, api_err *e)
{
    (void)e;
    set_ctx *s = ctx;
    json_t *p = json_deep_copy(cur);
    if (s->path)
        json_object_set_new(req0(p), s->path, json_string(s->value));
    else
        json_object_set_new(spec_of(p), "nodeName", json_string(s->value));
    return p;
}

static void expect_update(store *st, const char *sub, set_ctx *s, api_errcode code,
                          const char *message)
{
    const api_kind *k = api_kind_find("", "v1", "pods");
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    int rc = reg_update(st, k, "d", "p", sub, set_request, s, false, &out, &e);
    json_decref(out);
    assert_int_equal(e.code, code);
    assert_int_equal(rc, code == API_OK ? 0 : -1);
    if (message) assert_string_equal(e.message, message);
    api_err_clear(&e);
}

static void test_registry(void **state)
{
    (void)state;
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'d'}}");
    create_core(st, "pods", "d",
                "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'x',"
                "'resources':{'requests':{'cpu':'1'},'limits':{'cpu':'2'}}}]}}");
    set_ctx up = {"cpu", "100"};
    char want[2048];
    snprintf(want, sizeof want,
             "Pod \"p\" is invalid: [spec.containers[0].resources.requests: Invalid value: "
             "\"100\": must be less than or equal to cpu limit of 2, spec: Forbidden: %s\n"
             "changed: spec.containers[0].resources.requests[cpu]]",
             POD_MSG_UPDATE_FORBIDDEN);
    expect_update(st, "", &up, API_INVALID, want);
    expect_update(st, "resize", &up, API_INVALID,
                  "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: "
                  "\"100\": must be less than or equal to cpu limit of 2");
    set_ctx ok = {"cpu", "1500m"};
    expect_update(st, "resize", &ok, API_OK, NULL);
    set_ctx node = {NULL, "n1"};
    expect_update(st, "", &node, API_INVALID, NULL);
    expect_update(st, "status", &node, API_OK, NULL); /* spec is kept from the stored pod */
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    assert_int_equal(reg_bind(st, "d", "p", "n1", false, &out, &e), 0);
    assert_string_equal(json_string_value(json_object_get(spec_of(out), "nodeName")), "n1");
    json_decref(out);
    api_err_clear(&e);

    const api_kind *k = api_kind_find("", "v1", "pods");
    json_t *bad = J("{'metadata':{'name':'q'},'spec':{'containers':[{'name':'c','image':'x',"
                    "'resources':{'limits':{'nvidia.com/gpu':'500m'}}}]}}");
    assert_int_equal(reg_create(st, k, "d", bad, false, &out, &e), -1);
    assert_int_equal(e.code, API_INVALID);
    assert_string_equal(e.message,
                        "Pod \"q\" is invalid: [spec.containers[0].resources.limits[nvidia.com/"
                        "gpu]: Invalid value: \"500m\": must be an integer, spec.containers[0]."
                        "resources.requests[nvidia.com/gpu]: Invalid value: \"500m\": must be an "
                        "integer]");
    api_err_clear(&e);
    json_decref(bad);
    store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_negative_quantities),
        cmocka_unit_test(test_request_above_limit),
        cmocka_unit_test(test_extended_resources),
        cmocka_unit_test(test_hugepages),
        cmocka_unit_test(test_resource_names),
        cmocka_unit_test(test_unparsable_quantities),
        cmocka_unit_test(test_other_lists),
        cmocka_unit_test(test_pod_level_resources),
        cmocka_unit_test(test_structure),
        cmocka_unit_test(test_scheduling_fields),
        cmocka_unit_test(test_update_resources_forbidden),
        cmocka_unit_test(test_update_containers_added),
        cmocka_unit_test(test_update_allowed),
        cmocka_unit_test(test_update_active_deadline),
        cmocka_unit_test(test_update_tolerations_gates_grace),
        cmocka_unit_test(test_update_unknown_sub_is_strict),
        cmocka_unit_test(test_binding_and_status),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_resize_qos),
        cmocka_unit_test(test_resize_other_resources),
        cmocka_unit_test(test_qos_class),
        cmocka_unit_test(test_registry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
