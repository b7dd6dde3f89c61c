/* test_quota_client_errors.c - no client data reaches the quota code as a 500.
 *
 * Each case was an HTTP 500 (API_INTERNAL) before: a quota whose spec.hard is
 * a list or a string ("cannot recount quota"), an object whose quantities the
 * evaluators cannot read ("quota check failed"), a stored object that cannot
 * be evaluated any more, a quota whose scope selector does not evaluate and
 * limitedResources scopes no quota covers (upstream's plain errors), a bind
 * of a pod whose usage does not evaluate ("cannot evaluate pod usage"), and
 * usage sums beyond the digits a qty holds ("quota check failed", "quota
 * accounting failed").
 * Requests go through the registry on a memory store with the admission
 * plugins registered, as allotd runs them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <unistd.h>

#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "registry/quota_deferred.h"
#include "registry/quota_ledger.h"
#include "teststore.h"

#define QTY_MSG                                                                                    \
    "quantities must match the regular expression "                                                \
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"

/* A kind's row without its validation hooks: what admission sees of an
 * object no validator looked at (or one stored before validation existed). */
static api_kind unvalidated(const char *resource)
{
    api_kind k = *api_kind_find("", "v1", resource);
    k.validate = NULL;
    k.validate_update = NULL;
    return k;
}

/* Create; returns the HTTP code and copies the message. */
static int create_as(store *st, const api_kind *k, const char *ns, const char *obj, char *msg,
                     size_t n)
{
    json_t *o = J(obj), *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_create(st, k, ns, o, false, &out, &e);
    int code = rc == 0 ? 201 : api_errcode_http(e.code);
    snprintf(msg, n, "%s", rc == 0 ? "" : e.message);
    json_decref(out);
    json_decref(o);
    api_err_clear(&e);
    return code;
}

static int create_msg(store *st, const char *resource, const char *ns, const char *obj, char *msg,
                      size_t n)
{
    return create_as(st, api_kind_find("", "v1", resource), ns, obj, msg, n);
}

static store *open_ns(void)
{
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'q'}}");
    return st;
}

/* status.used[key] of quota q/name as the ledger has it, canonical. */
static void expect_used(store *st, const char *name, const char *key, const char *want)
{
    char k[256];
    assert_int_equal(quota_ledger_sync(st), 0);
    snprintf(k, sizeof k, "resourcequotas/q/%s", name);
    store_obj *o = store_get(st, k);
    assert_non_null(o);
    json_t *quota = store_obj_parse(o);
    const char *got = json_string_value(
        json_object_get(json_object_get(json_object_get(quota, "status"), "used"), key));
    if (!got || strcmp(got, want) != 0) fail_msg("used[%s] = %s, want %s", key, got, want);
    json_decref(quota);
    store_obj_unref(o);
}

static void test_quota_hard_of_wrong_type(void **state)
{
    (void)state;
    store *st = open_ns();
    char msg[sizeof ((api_err *)0)->message];
    assert_int_equal(create_msg(st, "resourcequotas", "q",
                                "{'metadata':{'name':'a'},'spec':{'hard':[1,2]}}", msg, sizeof msg),
                     422);
    assert_string_equal(msg, "ResourceQuota \"a\" is invalid: spec.hard: Invalid value: [1,2]: "
                             "must be of type object");
    assert_int_equal(create_msg(st, "resourcequotas", "q",
                                "{'metadata':{'name':'b'},'spec':{'hard':'cpu'}}", msg, sizeof msg),
                     422);
    assert_string_equal(msg, "ResourceQuota \"b\" is invalid: spec.hard: Invalid value: \"cpu\": "
                             "must be of type object");
    assert_int_equal(create_msg(st, "resourcequotas", "q",
                                "{'metadata':{'name':'c'},'spec':{'hard':{'pods':'1'},"
                                "'scopes':'BestEffort'}}",
                                msg, sizeof msg),
                     422);
    assert_string_equal(msg, "ResourceQuota \"c\" is invalid: spec.scopes: Invalid value: "
                             "\"BestEffort\": must be of type array");
    store_close(st);
}

/* An object admission cannot evaluate is a 422 naming the field, not a 500. */
static void test_unevaluable_object_is_invalid(void **state)
{
    (void)state;
    store *st = open_ns();
    create_core(
        st, "resourcequotas", "q",
        "{'metadata':{'name':'qq'},'spec':{'hard':{'cpu':'10','requests.storage':'10Gi'}}}");
    api_kind pods = unvalidated("pods"), pvcs = unvalidated("persistentvolumeclaims");
    char msg[sizeof ((api_err *)0)->message];
    assert_int_equal(create_as(st, &pods, "q",
                               "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':"
                               "'i','resources':{'requests':{'cpu':'abc'}}}]}}",
                               msg, sizeof msg),
                     422);
    assert_string_equal(msg, "Pod \"p\" is invalid: spec.containers[0].resources.requests[cpu]: "
                             "Invalid value: \"abc\": " QTY_MSG);
    assert_int_equal(create_as(st, &pods, "q",
                               "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':"
                               "'i','resources':{'requests':[1]}}]}}",
                               msg, sizeof msg),
                     422);
    assert_string_equal(msg, "Pod \"p\" is invalid: spec.containers[0].resources.requests: "
                             "Invalid value: [1]: must be of type object");
    assert_int_equal(create_as(st, &pvcs, "q",
                               "{'metadata':{'name':'v'},'spec':{'accessModes':['ReadWriteOnce'],"
                               "'resources':{'requests':{'storage':'1x'}}}}",
                               msg, sizeof msg),
                     422);
    assert_string_equal(msg, "PersistentVolumeClaim \"v\" is invalid: "
                             "spec.resources.requests[storage]: Invalid value: \"1x\": " QTY_MSG);
    expect_used(st, "qq", "cpu", "0");
    store_close(st);
}

static json_t *set_storage(const json_t *cur, void *ctx, api_err *e)
{
    (void)e;
    json_t *nw = json_deep_copy(cur);
    json_t *req =
        json_object_get(json_object_get(json_object_get(nw, "spec"), "resources"), "requests");
    json_object_set_new(req, "storage", json_string(ctx));
    return nw;
}

/* A stored claim whose request does not parse charged nothing; an update
 * that gives it a valid request is charged in full (was a 500). */
static void test_update_of_unevaluable_stored_object(void **state)
{
    (void)state;
    store *st = open_ns();
    api_kind pvcs = unvalidated("persistentvolumeclaims");
    char msg[sizeof ((api_err *)0)->message];
    assert_int_equal(create_as(st, &pvcs, "q",
                               "{'metadata':{'name':'v'},'spec':{'accessModes':['ReadWriteOnce'],"
                               "'resources':{'requests':{'storage':'1x'}}}}",
                               msg, sizeof msg),
                     201);
    create_core(st, "resourcequotas", "q",
                "{'metadata':{'name':'qq'},'spec':{'hard':{'requests.storage':'10Gi'}}}");
    expect_used(st, "qq", "requests.storage", "0");
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    if (reg_update(st, &pvcs, "q", "v", "", set_storage, "2Gi", false, &out, &e) != 0)
        fail_msg("update: %d %s", api_errcode_http(e.code), e.message);
    json_decref(out);
    api_err_clear(&e);
    expect_used(st, "qq", "requests.storage", "2Gi");
    store_close(st);
}

/* A quota whose scope selector does not evaluate refuses requests with
 * upstream's text, as 403 (upstream: a plain error, 500). */
static void test_scope_error_is_forbidden(void **state)
{
    (void)state;
    store *st = open_ns();
    create_core(st, "resourcequotas", "q",
                "{'metadata':{'name':'sel'},'spec':{'hard':{'pods':'10'},'scopeSelector':{"
                "'matchExpressions':[{'scopeName':'PriorityClass','operator':'In','values':['bad "
                "value!']}]}}}");
    char msg[sizeof ((api_err *)0)->message];
    assert_int_equal(create_msg(st, "pods", "q",
                                "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c',"
                                "'image':'i'}]}}",
                                msg, sizeof msg),
                     403);
    const char *want = "pods \"p\" is forbidden: error matching scopes of quota sel, err: ";
    if (strncmp(msg, want, strlen(want)) != 0) fail_msg("got %s", msg);
    store_close(st);
}

/* limitedResources scopes that no quota covers: 403 with upstream's text. */
static void test_uncovered_limited_scopes_are_forbidden(void **state)
{
    (void)state;
    char path[] = "/tmp/allot-test-admission-XXXXXX", err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *cfg =
        "{\"apiVersion\":\"apiserver.config.k8s.io/v1\",\"kind\":"
        "\"AdmissionConfiguration\",\"plugins\":[{\"name\":\"ResourceQuota\","
        "\"configuration\":{\"limitedResources\":[{\"resource\":\"pods\","
        "\"matchScopes\":[{\"scopeName\":\"BestEffort\",\"operator\":\"Exists\"}]}]}}]}";
    assert_int_equal(write(fd, cfg, strlen(cfg)), (ssize_t)strlen(cfg));
    close(fd);
    int rc = quota_admission_configure(path, err, sizeof err);
    unlink(path);
    if (rc != 0) fail_msg("configure: %s", err);
    store *st = open_ns();
    char msg[sizeof ((api_err *)0)->message];
    assert_int_equal(create_msg(st, "pods", "q",
                                "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c',"
                                "'image':'i'}]}}",
                                msg, sizeof msg),
                     403);
    assert_string_equal(msg, "pods \"p\" is forbidden: insufficient quota to match these scopes: "
                             "[{BestEffort Exists []}]");
    store_close(st);
    quota_admission_cleanup();
}

/* The bind re-check of a pod whose usage does not evaluate charges nothing
 * (as admission and the recount), where it was a 500. */
static void test_bind_of_unevaluable_pod(void **state)
{
    (void)state;
    store *st = open_ns();
    create_core(st, "resourcequotas", "q",
                "{'metadata':{'name':'qq'},'spec':{'hard':{'cpu':'1'}}}");
    json_t *pod = J("{'metadata':{'name':'p','namespace':'q'},'spec':{'containers':[{'name':'c',"
                    "'resources':{'requests':{'cpu':'abc'}}}]}}");
    store_txn *t = store_begin(st);
    ql_view *qs = NULL;
    size_t n = 0;
    api_err e;
    api_err_init(&e);
    assert_int_equal(quota_ledger_load(t, "q", &qs, &n, &e), 0);
    assert_int_equal(n, 1);
    rlist *used[1] = {NULL};
    if (quota_deferred_bind(qs, n, pod, used, &e) != 0) fail_msg("bind: %s", e.message);
    assert_null(used[0]);
    free(qs);
    store_abort(t);
    api_err_clear(&e);
    json_decref(pod);
    store_close(st);
}

static int delete_pod(store *st, const char *name)
{
    reg_delete_opts d = {.grace_seconds = -1};
    json_t *out = NULL;
    bool gone;
    api_err e;
    api_err_init(&e);
    int rc = reg_delete(st, api_kind_find("", "v1", "pods"), "q", name, &d, &out, &gone, &e);
    int code = rc == 0 ? 200 : api_errcode_http(e.code);
    json_decref(out);
    api_err_clear(&e);
    return code;
}

#define POD_CPU(name, cpu)                                                                         \
    "{'metadata':{'name':'" name "'},'spec':{'containers':[{'name':'c','image':'i',"               \
    "'resources':{'requests':{'cpu':'" cpu "'}}}]}}"

/* Sums beyond the 72 significant digits a qty holds: admission refuses the
 * request (403, was a 500); a release the quota cannot hold exactly (a pod
 * the recount could not add either) leaves it for the resync (was a 500). */
static void test_usage_beyond_range(void **state)
{
    (void)state;
    store *st = open_ns();
    create_core(st, "pods", "q", POD_CPU("big", "1e70"));
    create_core(st, "pods", "q", POD_CPU("milli", "1m"));
    create_core(st, "resourcequotas", "q",
                "{'metadata':{'name':'qq'},'spec':{'hard':{'cpu':'3e70'}}}");
    expect_used(st, "qq", "cpu", "10e69");
    char msg[sizeof ((api_err *)0)->message];
    assert_int_equal(create_msg(st, "pods", "q", POD_CPU("more", "1m"), msg, sizeof msg), 403);
    assert_string_equal(msg, "pods \"more\" is forbidden: quota qq: the usage of cpu would need "
                             "more significant digits than are supported");
    assert_int_equal(delete_pod(st, "milli"), 200);
    assert_int_equal(delete_pod(st, "big"), 200);
    expect_used(st, "qq", "cpu", "0");
    store_close(st);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quota_hard_of_wrong_type),
        cmocka_unit_test(test_unevaluable_object_is_invalid),
        cmocka_unit_test(test_update_of_unevaluable_stored_object),
        cmocka_unit_test(test_scope_error_is_forbidden),
        cmocka_unit_test(test_uncovered_limited_scopes_are_forbidden),
        cmocka_unit_test(test_bind_of_unevaluable_pod),
        cmocka_unit_test(test_usage_beyond_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
