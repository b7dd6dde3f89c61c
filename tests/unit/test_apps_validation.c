/* test_apps_validation.c - the workload kinds through the registry: their
 * defaults (strategy, template, RC selector from the template's labels) and
 * upstream's validation messages (selector required and not empty, labels
 * matching it, restartPolicy Always, strategy values, the immutable apps/v1
 * selector), so no stored object can make a controller loop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "teststore.h"

static store *st;

static int setup(void **state)
{
    (void)state;
    st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'team'}}");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    store_close(st);
    return 0;
}

/* Create `obj` (J notation) of group/resource in team: the stored object, or
 * NULL with the message in msg. */
static json_t *try_create(const char *group, const char *resource, const char *obj, char *msg,
                          size_t n)
{
    const api_kind *k = test_kind(group, group[0] ? "v1" : "v1", resource);
    json_t *o = J(obj), *out = NULL;
    api_err e;
    api_err_init(&e);
    msg[0] = '\0';
    if (reg_create(st, k, "team", o, false, &out, &e) != 0) snprintf(msg, n, "%s", e.message);
    api_err_clear(&e);
    json_decref(o);
    return out;
}

#define TEMPLATE                                                                                   \
    "'template':{'metadata':{'labels':{'app':'web'}},'spec':{'containers':[{"                      \
    "'name':'c','image':'nginx'}]}}"

static void expect_refused(const char *group, const char *resource, const char *obj,
                           const char *want)
{
    char msg[4096];
    json_t *out = try_create(group, resource, obj, msg, sizeof msg);
    if (out) fail_msg("%s created: %s", resource, obj);
    if (!strstr(msg, want)) fail_msg("got  %s\nwant %s", msg, want);
}

static void test_deployment(void **state)
{
    (void)state;
    char msg[4096];
    json_t *d = try_create("apps", "deployments",
                           "{'metadata':{'name':'web'},'spec':{'selector':{'matchLabels':{'app':"
                           "'web'}}," TEMPLATE "}}",
                           msg, sizeof msg);
    if (!d) fail_msg("%s", msg);
    json_t *want = J("{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':'25%',"
                     "'maxSurge':'25%'}}");
    assert_json_eq(json_object_get(json_object_get(d, "spec"), "strategy"), want);
    json_decref(want);
    /* the template is defaulted as upstream's SetObjectDefaults_Deployment does */
    json_t *tspec =
        json_object_get(json_object_get(json_object_get(d, "spec"), "template"), "spec");
    assert_string_equal(json_string_value(json_object_get(tspec, "restartPolicy")), "Always");
    assert_string_equal(json_string_value(json_object_get(tspec, "dnsPolicy")), "ClusterFirst");
    assert_null(json_object_get(tspec, "serviceAccountName")); /* a pod's, not a template's */
    json_decref(d);

    expect_refused(
        "apps", "deployments",
        "{'metadata':{'name':'a'},'spec':{'selector':{'matchLabels':{'app':'other'}}," TEMPLATE
        "}}",
        "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":"
        "\"web\"}: `selector` does not match template `labels`");
    expect_refused("apps", "deployments", "{'metadata':{'name':'b'},'spec':{" TEMPLATE "}}",
                   "spec.selector: Required value");
    expect_refused("apps", "deployments",
                   "{'metadata':{'name':'c'},'spec':{'selector':{}," TEMPLATE "}}",
                   "empty selector is invalid for deployment");
    expect_refused("apps", "deployments",
                   "{'metadata':{'name':'d'},'spec':{'selector':{'matchLabels':{'app':'web'}},"
                   "'strategy':{'rollingUpdate':{'maxSurge':0,'maxUnavailable':0}}," TEMPLATE "}}",
                   "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 "
                   "when `maxSurge` is 0");
    expect_refused("apps", "deployments",
                   "{'metadata':{'name':'e'},'spec':{'selector':{'matchLabels':{'app':'web'}},"
                   "'strategy':{'type':'Recreate','rollingUpdate':{}}," TEMPLATE "}}",
                   "spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy "
                   "`type` is 'Recreate'");
    expect_refused("apps", "deployments",
                   "{'metadata':{'name':'f'},'spec':{'selector':{'matchLabels':{'app':'web'}},"
                   "'strategy':{'rollingUpdate':{'maxSurge':'x'}}," TEMPLATE "}}",
                   "spec.strategy.rollingUpdate.maxSurge: Invalid value: \"x\": a valid percent "
                   "string must be");
    expect_refused("apps", "deployments",
                   "{'metadata':{'name':'g'},'spec':{'replicas':-1,'selector':{'matchLabels':{"
                   "'app':'web'}}," TEMPLATE "}}",
                   "spec.replicas: Invalid value: -1: must be greater than or equal to 0");
    expect_refused("apps", "deployments",
                   "{'metadata':{'name':'h'},'spec':{'minReadySeconds':600,'selector':{"
                   "'matchLabels':{'app':'web'}}," TEMPLATE "}}",
                   "spec.progressDeadlineSeconds: Invalid value: 600: must be greater than "
                   "minReadySeconds");
    expect_refused("apps", "deployments",
                   "{'metadata':{'name':'i'},'spec':{'selector':{'matchLabels':{'app':'web'}},"
                   "'template':{'metadata':{'labels':{'app':'web'}},'spec':{'restartPolicy':"
                   "'Never','containers':[{'name':'c','image':'nginx'}]}}}}",
                   "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported "
                   "values: \"Always\"");
    /* the pod spec is a pod's: a container without an image */
    expect_refused("apps", "deployments",
                   "{'metadata':{'name':'j'},'spec':{'selector':{'matchLabels':{'app':'web'}},"
                   "'template':{'metadata':{'labels':{'app':'web'}},'spec':{'containers':[{"
                   "'name':'c'}]}}}}",
                   "spec.template.spec.containers[0].image: Required value");
}

static void test_selector_immutable(void **state)
{
    (void)state;
    char msg[4096];
    json_t *rs = try_create("apps", "replicasets",
                            "{'metadata':{'name':'web'},'spec':{'selector':{'matchLabels':{"
                            "'app':'web'}}," TEMPLATE "}}",
                            msg, sizeof msg);
    if (!rs) fail_msg("%s", msg);
    json_decref(rs);
    int code = reg_merge(st, test_kind("apps", "v1", "replicasets"), "team", "web", "",
                         "{'spec':{'selector':{'matchLabels':{'app':'web','x':'y'}},'template':{"
                         "'metadata':{'labels':{'x':'y'}}}}}",
                         false, msg, sizeof msg);
    assert_int_equal(code, 422);
    assert_non_null(strstr(msg, "spec.selector: Invalid value: "));
    assert_non_null(strstr(msg, "field is immutable"));
    /* scaling is fine */
    code = reg_merge(st, test_kind("apps", "v1", "replicasets"), "team", "web", "",
                     "{'spec':{'replicas':4}}", false, msg, sizeof msg);
    assert_int_equal(code, 200);
}

static void test_replication_controller(void **state)
{
    (void)state;
    char msg[4096];
    /* the selector and the object's labels default to the template's labels */
    json_t *rc = try_create("", "replicationcontrollers",
                            "{'metadata':{'name':'rc'},'spec':{" TEMPLATE "}}", msg, sizeof msg);
    if (!rc) fail_msg("%s", msg);
    json_t *want = J("{'app':'web'}");
    assert_json_eq(json_object_get(json_object_get(rc, "spec"), "selector"), want);
    assert_json_eq(json_object_get(json_object_get(rc, "metadata"), "labels"), want);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(rc, "spec"), "replicas")),
                     1);
    json_decref(want);
    json_decref(rc);
    expect_refused("", "replicationcontrollers",
                   "{'metadata':{'name':'b'},'spec':{'selector':{'app':'x'}," TEMPLATE "}}",
                   "`selector` does not match template `labels`");
    expect_refused("", "replicationcontrollers",
                   "{'metadata':{'name':'c'},'spec':{'template':{'spec':{'containers':[{"
                   "'name':'c','image':'nginx'}]}}}}",
                   "spec.selector: Required value");
    expect_refused("", "replicationcontrollers",
                   "{'metadata':{'name':'d'},'spec':{'template':{'metadata':{'labels':{'a':'b'}},"
                   "'spec':{'activeDeadlineSeconds':5,'containers':[{'name':'c','image':'n'}]}}}}",
                   "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds "
                   "in ReplicationController is not Supported");
}

static void test_statefulset_daemonset(void **state)
{
    (void)state;
    char msg[4096];
    json_t *sts = try_create("apps", "statefulsets",
                             "{'metadata':{'name':'db'},'spec':{'serviceName':'db','selector':{"
                             "'matchLabels':{'app':'web'}}," TEMPLATE "}}",
                             msg, sizeof msg);
    if (!sts) fail_msg("%s", msg);
    json_t *want = J("{'replicas':1,'podManagementPolicy':'OrderedReady','revisionHistoryLimit':10,"
                     "'updateStrategy':{'type':'RollingUpdate','rollingUpdate':{'partition':0}},"
                     "'persistentVolumeClaimRetentionPolicy':{'whenDeleted':'Retain','whenScaled':"
                     "'Retain'}}");
    json_t *spec = json_object_get(sts, "spec");
    const char *k;
    json_t *v;
    json_object_foreach(want, k, v) assert_json_eq(json_object_get(spec, k), v);
    json_decref(want);
    json_decref(sts);
    json_t *ds = try_create("apps", "daemonsets",
                            "{'metadata':{'name':'agent'},'spec':{'selector':{'matchLabels':{"
                            "'app':'web'}}," TEMPLATE "}}",
                            msg, sizeof msg);
    if (!ds) fail_msg("%s", msg);
    want = J("{'type':'RollingUpdate','rollingUpdate':{'maxUnavailable':1,'maxSurge':0}}");
    assert_json_eq(json_object_get(json_object_get(ds, "spec"), "updateStrategy"), want);
    json_decref(want);
    json_decref(ds);
    expect_refused("apps", "statefulsets",
                   "{'metadata':{'name':'x'},'spec':{'selector':{}," TEMPLATE "}}",
                   "empty selector is invalid for statefulset");
    expect_refused("apps", "daemonsets",
                   "{'metadata':{'name':'x'},'spec':{'selector':{'matchLabels':{'a':'b'}}," TEMPLATE
                   "}}",
                   "`selector` does not match template `labels`");
    expect_refused("apps", "statefulsets",
                   "{'metadata':{'name':'y'},'spec':{'podManagementPolicy':'Whenever','selector':{"
                   "'matchLabels':{'app':'web'}}," TEMPLATE "}}",
                   "spec.podManagementPolicy: Unsupported value: \"Whenever\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_deployment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_selector_immutable, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replication_controller, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statefulset_daemonset, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
