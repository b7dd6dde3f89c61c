/* test_pod_resize.c - pods/resize: which fields a resize may change, the
 * defaults and QoS rule it goes through in the registry, and what the
 * registry's other pod update paths keep of status.qosClass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/pod_resize.h"
#include "teststore.h"

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
    /* the result shares nothing with the request: defaulting it next must not
     * write into the caller's objects */
    json_t *rc = json_array_get(json_object_get(json_object_get(req, "spec"), "containers"), 0);
    assert_ptr_not_equal(json_object_get(c, "resources"), json_object_get(rc, "resources"));
    json_decref(want);
    json_decref(out);
    json_decref(req);
    json_decref(cur);
}

/* The merge refuses nothing: what a resize may change is validated after
 * defaulting, by the pods' validate_update hook (test_pod_validation.c). */
static void test_resize_merges_what_validation_judges(void **state)
{
    json_t *cur = pod("{}");
    json_t *req = J("{'spec':{'containers':[{'name':'c','resources':{'requests':{'cpu':'1',"
                    "'ephemeral-storage':'1Gi'}}}]}}");
    api_err e;
    api_err_init(&e);
    json_t *out = pod_resize_apply(cur, req, &e);
    assert_non_null(out);
    assert_int_equal(e.code, API_OK);
    json_decref(out);
    json_decref(req);
    json_decref(cur);
}

/* ---- through the registry ---- */

static const api_kind *pods(void)
{
    return api_kind_find("", "v1", "pods");
}

/* A pod "p" in namespace "d" with containers given as the JSON of a list. */
static store *store_with_pod(const char *containers)
{
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'d'}}");
    char buf[2048];
    snprintf(buf, sizeof buf, "{'metadata':{'name':'p'},'spec':{'containers':%s}}", containers);
    create_core(st, "pods", "d", buf);
    return st;
}

static json_t *replace_with(const json_t *cur, void *ctx, api_err *e)
{
    (void)cur;
    (void)e;
    return json_deep_copy(ctx);
}

/* Write `body` (J() notation) to pods/p/<sub> as a PUT would; the stored
 * result, or NULL with *e set. */
static json_t *update(store *st, const char *sub, const char *body, api_err *e)
{
    json_t *b = J(body), *out = NULL;
    api_err_init(e);
    int rc = reg_update(st, pods(), "d", "p", sub, replace_with, b, false, &out, e);
    json_decref(b);
    assert_int_equal(rc == 0, out != NULL);
    return out;
}

static json_t *stored(store *st)
{
    api_err e;
    api_err_init(&e);
    json_t *p = reg_get(st, pods(), "d", "p", &e);
    assert_non_null(p);
    return p;
}

static const char *qos_of(const json_t *p)
{
    return json_string_value(json_object_get(json_object_get(p, "status"), "qosClass"));
}

static json_t *resources_of(const json_t *p, size_t i)
{
    return json_object_get(
        json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), i), "resources");
}

/* H4: a resized limit fills its missing request, as upstream's defaulting of
 * the decoded request does. */
static void test_resize_is_defaulted(void **state)
{
    store *st = store_with_pod("[{'name':'c','image':'x'},{'name':'d','image':'x','resources':"
                               "{'requests':{'cpu':'100m'}}}]");
    api_err e;
    json_t *out =
        update(st, "resize",
               "{'spec':{'containers':[{'name':'c','resources':{'limits':{'cpu':'1'}}}]}}", &e);
    assert_non_null(out);
    json_decref(out);
    json_t *p = stored(st);
    json_t *want = J("{'requests':{'cpu':'1'},'limits':{'cpu':'1'}}");
    assert_true(json_equal(resources_of(p, 0), want));
    json_decref(p);
    /* a request dropped by the request comes back from its limit: not removed */
    out = update(st, "resize",
                 "{'spec':{'containers':[{'name':'d','resources':{'limits':{'cpu':'1'}}}]}}", &e);
    assert_non_null(out);
    json_decref(out);
    p = stored(st);
    assert_true(json_equal(resources_of(p, 1), want));
    assert_string_equal(qos_of(p), "Burstable");
    json_decref(p);
    json_decref(want);
    store_close(st);
}

static void expect_resize_refused(const char *containers, const char *resize, const char *message)
{
    store *st = store_with_pod(containers);
    json_t *before = stored(st);
    api_err e;
    char body[1024];
    snprintf(body, sizeof body, "{'spec':{'containers':%s}}", resize);
    assert_null(update(st, "resize", body, &e));
    assert_int_equal(e.code, API_INVALID);
    assert_string_equal(e.message, message);
    api_err_clear(&e);
    json_t *after = stored(st);
    assert_true(json_equal(before, after));
    json_decref(before);
    json_decref(after);
    store_close(st);
}

/* H3: upstream's ValidatePodResize refuses a QoS class change, judged on the
 * defaulted result. */
static void test_resize_keeps_qos_class(void **state)
{
    expect_resize_refused("[{'name':'c','image':'x'}]",
                          "[{'name':'c','resources':{'requests':{'cpu':'100m'}}}]",
                          "Pod \"p\" is invalid: spec: Invalid value: \"BestEffort\": Pod QOS "
                          "Class may not change as a result of resizing");
    /* a limit alone defaults its request: Burstable too */
    expect_resize_refused("[{'name':'c','image':'x'}]",
                          "[{'name':'c','resources':{'limits':{'memory':'1Gi'}}}]",
                          "Pod \"p\" is invalid: spec: Invalid value: \"BestEffort\": Pod QOS "
                          "Class may not change as a result of resizing");
    const char *guaranteed =
        "[{'name':'c','image':'x','resources':{'limits':{'cpu':'1','memory':'1Gi'}}}]";
    expect_resize_refused(guaranteed,
                          "[{'name':'c','resources':{'requests':{'cpu':'500m','memory':'1Gi'},"
                          "'limits':{'cpu':'1','memory':'1Gi'}}}]",
                          "Pod \"p\" is invalid: spec: Invalid value: \"Guaranteed\": Pod QOS "
                          "Class may not change as a result of resizing");
    expect_resize_refused(
        "[{'name':'c','image':'x','resources':{'requests':{'cpu':'500m','memory':'1Gi'},"
        "'limits':{'cpu':'1','memory':'1Gi'}}}]",
        "[{'name':'c','resources':{'requests':{'cpu':'1','memory':'1Gi'},'limits':{'cpu':'1',"
        "'memory':'1Gi'}}}]",
        "Pod \"p\" is invalid: spec: Invalid value: \"Burstable\": Pod QOS Class may not change "
        "as a result of resizing");
    /* with a spec error, both are reported, the spec's first (upstream's order) */
    expect_resize_refused(
        "[{'name':'c','image':'x'}]",
        "[{'name':'c','resources':{'requests':{'cpu':'2'},'limits':{'cpu':'1'}}}]",
        "Pod \"p\" is invalid: [spec.containers[0].resources.requests: Invalid "
        "value: \"2\": must be less than or equal to cpu limit of 1, spec: "
        "Invalid value: \"BestEffort\": Pod QOS Class may not change as a result "
        "of resizing]");
    /* a resource other than cpu or memory: refused after defaulting */
    expect_resize_refused("[{'name':'c','image':'x','resources':{'requests':{'cpu':'1',"
                          "'ephemeral-storage':'1Gi'}}}]",
                          "[{'name':'c','resources':{'requests':{'cpu':'1','ephemeral-storage':"
                          "'2Gi'}}}]",
                          "Pod \"p\" is invalid: spec: Forbidden: only cpu and memory resources "
                          "are mutable");
    /* the same class: allowed, both values move */
    store *st = store_with_pod(guaranteed);
    api_err e;
    json_t *out = update(st, "resize",
                         "{'spec':{'containers':[{'name':'c','resources':{'limits':{'cpu':'2',"
                         "'memory':'2Gi'},'requests':{'cpu':'2','memory':'2Gi'}}}]}}",
                         &e);
    assert_non_null(out);
    assert_string_equal(qos_of(out), "Guaranteed");
    json_decref(out);
    /* a limit-only resize of a Guaranteed pod whose requests default to it */
    out = update(st, "resize",
                 "{'spec':{'containers':[{'name':'c','resources':{'limits':{'cpu':'3',"
                 "'memory':'2Gi'}}}]}}",
                 &e);
    assert_non_null(out);
    json_t *want = J("{'requests':{'cpu':'3','memory':'2Gi'},'limits':{'cpu':'3','memory':'2Gi'}}");
    assert_true(json_equal(resources_of(out, 0), want));
    json_decref(want);
    json_decref(out);
    store_close(st);
}

/* ---- status.qosClass on the other update paths ---- */

/* Records what admission sees of a pod update: the class of `old` and of the
 * new object. */
static struct {
    bool on;
    char old_qos[32], new_qos[32];
} seen;

static int record_admit(store_txn *t, const api_kind *k, reg_op op, const char *sub, json_t *obj,
                        const json_t *old, bool dry_run, api_err *e)
{
    (void)t, (void)sub, (void)dry_run, (void)e;
    if (!seen.on || op != REG_UPDATE || strcmp(k->resource, "pods") != 0) return 0;
    const char *a = qos_of(old), *b = qos_of(obj);
    snprintf(seen.old_qos, sizeof seen.old_qos, "%s", a ? a : "(absent)");
    snprintf(seen.new_qos, sizeof seen.new_qos, "%s", b ? b : "(absent)");
    return 0;
}

static const reg_admission recorder = {"test-recorder", record_admit};

/* Store p as given (no defaults, no admission): a pod written before a rule. */
static void put_raw(store *st, const char *obj)
{
    json_t *o = J(obj);
    store_txn *t = store_begin(st);
    assert_non_null(t);
    json_object_set_new(json_object_get(o, "metadata"), "resourceVersion",
                        json_sprintf("%lld", (long long)store_txn_rev(t)));
    assert_int_equal(store_txn_put(t, "pods/d/p", o, NULL), 0);
    assert_int_equal(store_commit(t), 0);
    json_decref(o);
}

#define LEGACY_POD(status)                                                                         \
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p','namespace':'d','uid':'u'},"           \
    "'spec':{'containers':[{'name':'c','image':'x','imagePullPolicy':'Always',"                    \
    "'terminationMessagePath':'/dev/termination-log','terminationMessagePolicy':'File',"           \
    "'resources':{'requests':{'cpu':'1'}}}],'restartPolicy':'Always','dnsPolicy':"                 \
    "'ClusterFirst','terminationGracePeriodSeconds':30,'schedulerName':'default-scheduler',"       \
    "'securityContext':{},'enableServiceLinks':true,'serviceAccountName':'default',"               \
    "'serviceAccount':'default','preemptionPolicy':'PreemptLowerPriority'},'status':" status "}"

/* H5: a main-resource update keeps the stored status.qosClass (upstream
 * derives it only at create), and defaulting the new object never writes
 * into the stored one admission compares against. */
static void test_main_update_keeps_qos_class(void **state)
{
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'d'}}");
    /* stored BestEffort while the spec is Burstable (a pod resized across
     * classes before the rule existed) */
    put_raw(st, LEGACY_POD("{'phase':'Pending','qosClass':'BestEffort'}"));
    seen.on = true;
    api_err e;
    json_t *out = update(st, "", LEGACY_POD("{}"), &e);
    assert_non_null(out);
    assert_string_equal(seen.old_qos, "BestEffort");
    assert_string_equal(seen.new_qos, "BestEffort");
    assert_string_equal(qos_of(out), "BestEffort");
    json_decref(out);
    /* stored without one: the new object gets the spec's, the stored one
     * admission sees is left as it is */
    put_raw(st, LEGACY_POD("{'phase':'Pending'}"));
    out = update(st, "", LEGACY_POD("{}"), &e);
    assert_non_null(out);
    assert_string_equal(seen.old_qos, "(absent)");
    assert_string_equal(seen.new_qos, "Burstable");
    json_decref(out);
    seen.on = false;
    store_close(st);
}

/* H6: a pods/status write that leaves qosClass out keeps the class. */
static void test_status_write_keeps_qos_class(void **state)
{
    store *st = store_with_pod("[{'name':'c','image':'x','resources':{'limits':{'cpu':'1',"
                               "'memory':'1Gi'}}}]");
    api_err e;
    json_t *out = update(st, "status", "{'status':{'phase':'Running'}}", &e);
    assert_non_null(out);
    assert_string_equal(qos_of(out), "Guaranteed");
    json_decref(out);
    json_t *p = stored(st);
    assert_string_equal(qos_of(p), "Guaranteed");
    assert_string_equal(json_string_value(json_object_get(json_object_get(p, "status"), "phase")),
                        "Running");
    json_decref(p);
    /* an explicit change is still refused */
    assert_null(update(st, "status", "{'status':{'phase':'Running','qosClass':'BestEffort'}}", &e));
    assert_string_equal(e.message, "Pod \"p\" is invalid: status.qosClass: Invalid value: "
                                   "\"BestEffort\": field is immutable");
    api_err_clear(&e);
    store_close(st);
    /* a pod stored without one (before this rule) gets its spec's class, the
     * one quota already read for it */
    st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'d'}}");
    put_raw(st, LEGACY_POD("{'phase':'Pending'}"));
    out = update(st, "status", "{'status':{'phase':'Running'}}", &e);
    assert_non_null(out);
    assert_string_equal(qos_of(out), "Burstable");
    json_decref(out);
    assert_null(update(st, "status", "{'status':{'phase':'Running','qosClass':'Guaranteed'}}", &e));
    api_err_clear(&e);
    store_close(st);
}

/* The status path runs every kind's defaults: what they fill is what an
 * absent field means (namespace Active, PVC Pending, service loadBalancer). */
static void test_status_defaults_other_kinds(void **state)
{
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'d'}}");
    create_core(st, "persistentvolumeclaims", "d",
                "{'metadata':{'name':'v'},'spec':{'accessModes':['ReadWriteOnce'],'resources':{"
                "'requests':{'storage':'1Gi'}}}}");
    create_core(st, "services", "d", "{'metadata':{'name':'s'},'spec':{'ports':[{'port':80}]}}");
    static const struct {
        const char *resource, *ns, *name, *field, *want;
    } cases[] = {
        {"namespaces", "", "d", "phase", "Active"},
        {"persistentvolumeclaims", "d", "v", "phase", "Pending"},
        {"services", "d", "s", "loadBalancer", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const api_kind *k = api_kind_find("", "v1", cases[i].resource);
        json_t *body = J("{'status':{}}"), *out = NULL;
        api_err e;
        api_err_init(&e);
        json_t *before = reg_get(st, k, cases[i].ns, cases[i].name, &e);
        assert_non_null(before);
        assert_int_equal(reg_update(st, k, cases[i].ns, cases[i].name, "status", replace_with, body,
                                    false, &out, &e),
                         0);
        json_t *v = json_object_get(json_object_get(out, "status"), cases[i].field);
        assert_non_null(v);
        if (cases[i].want) assert_string_equal(json_string_value(v), cases[i].want);
        /* nothing but status moved */
        json_object_del(before, "status");
        json_object_del(out, "status");
        json_object_del(json_object_get(before, "metadata"), "resourceVersion");
        json_object_del(json_object_get(out, "metadata"), "resourceVersion");
        assert_true(json_equal(before, out));
        json_decref(before);
        json_decref(out);
        json_decref(body);
    }
    store_close(st);
}

int main(void)
{
    reg_admission_register(&recorder);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_takes_resources_only),
        cmocka_unit_test(test_resize_merges_what_validation_judges),
        cmocka_unit_test(test_resize_is_defaulted),
        cmocka_unit_test(test_resize_keeps_qos_class),
        cmocka_unit_test(test_main_update_keeps_qos_class),
        cmocka_unit_test(test_status_write_keeps_qos_class),
        cmocka_unit_test(test_status_defaults_other_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
