/* test_admission_review.c - the AdmissionReview protocol
 * (api/admission_review.h) with upstream's example reviews ("Dynamic
 * Admission Control"), its strict checks, and the webhook's decision
 * (server/webhook.h) on a memory store: dry runs through the registry that
 * answer with standalone's texts and write nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/admission_review.h"
#include "core/b64.h"
#include "registry/admission.h"
#include "server/webhook.h"
#include "teststore.h"

/* Upstream's example request (an UPDATE of deployments/scale). */
static const char *const EXAMPLE =
    "{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{"
    "'uid':'705ab4f5-6393-11e8-b7cc-42010a800002',"
    "'kind':{'group':'autoscaling','version':'v1','kind':'Scale'},"
    "'resource':{'group':'apps','version':'v1','resource':'deployments'},"
    "'subResource':'scale',"
    "'requestKind':{'group':'autoscaling','version':'v1','kind':'Scale'},"
    "'requestResource':{'group':'apps','version':'v1','resource':'deployments'},"
    "'requestSubResource':'scale','name':'my-deployment','namespace':'my-namespace',"
    "'operation':'UPDATE','userInfo':{'username':'admin','uid':'014fbff9a07c',"
    "'groups':['system:authenticated','my-admin-group'],'extra':{'some-key':['some-value1',"
    "'some-value2']}},"
    "'object':{'apiVersion':'autoscaling/v1','kind':'Scale'},"
    "'oldObject':{'apiVersion':'autoscaling/v1','kind':'Scale'},"
    "'options':{'apiVersion':'meta.k8s.io/v1','kind':'UpdateOptions'},'dryRun':false}}";

/* s in J() notation as text (caller frees). */
static char *text_of(const char *s)
{
    json_t *v = J(s);
    char *t = json_dumps(v, JSON_COMPACT);
    json_decref(v);
    return t;
}

static int parse(const char *s, ar_request *r, api_err *e)
{
    char *t = text_of(s);
    api_err_init(e);
    int rc = ar_parse(t, strlen(t), r, e);
    free(t);
    return rc;
}

static void test_upstream_example(void **state)
{
    (void)state;
    ar_request r;
    api_err e;
    assert_int_equal(parse(EXAMPLE, &r, &e), 0);
    assert_string_equal(r.api_version, AR_V1);
    assert_string_equal(r.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_string_equal(r.kind.group, "autoscaling");
    assert_string_equal(r.kind.name, "Scale");
    assert_string_equal(r.resource.group, "apps");
    assert_string_equal(r.resource.version, "v1");
    assert_string_equal(r.resource.name, "deployments");
    assert_string_equal(r.request_resource.name, "deployments");
    assert_string_equal(r.sub_resource, "scale");
    assert_string_equal(r.name, "my-deployment");
    assert_string_equal(r.namespace_, "my-namespace");
    assert_int_equal(r.op, AR_UPDATE);
    assert_string_equal(r.username, "admin");
    assert_non_null(r.object);
    assert_non_null(r.old_object);
    assert_non_null(r.options);
    assert_false(r.dry_run);

    /* allowed: uid echoed, nothing else */
    ar_answer a = {.allowed = true};
    json_t *got = ar_response(&r, &a);
    json_t *want = J("{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','response':"
                     "{'uid':'705ab4f5-6393-11e8-b7cc-42010a800002','allowed':true}}");
    assert_json_eq(got, want);
    json_decref(got);
    json_decref(want);

    /* denied: the Status as AdmissionResponse.result carries it */
    api_err d;
    api_err_init(&d);
    api_err_set(&d, API_FORBIDDEN, "pods \"p\" is forbidden: exceeded quota: q");
    api_err_details(&d, "p", "", "pods");
    json_t *warnings = J("['w1']");
    a = (ar_answer){.allowed = false, .denial = &d, .warnings = warnings};
    got = ar_response(&r, &a);
    want = J("{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','response':"
             "{'uid':'705ab4f5-6393-11e8-b7cc-42010a800002','allowed':false,"
             "'status':{'metadata':{},'status':'Failure','message':'pods \\\"p\\\" is forbidden: "
             "exceeded quota: q','reason':'Forbidden','details':{'name':'p','kind':'pods'},"
             "'code':403},'warnings':['w1']}}");
    assert_json_eq(got, want);
    json_decref(got);
    json_decref(want);
    json_decref(warnings);
    api_err_clear(&d);
    ar_request_free(&r);
}

/* v1beta1 is read alike and answered in v1beta1; a patch is base64 JSONPatch. */
static void test_v1beta1_and_patch(void **state)
{
    (void)state;
    ar_request r;
    api_err e;
    assert_int_equal(
        parse("{'apiVersion':'admission.k8s.io/v1beta1','kind':'AdmissionReview','request':{"
              "'uid':'u','kind':{'group':'','version':'v1','kind':'Pod'},"
              "'resource':{'group':'','version':'v1','resource':'pods'},'namespace':'n',"
              "'operation':'CREATE','userInfo':{},'object':{'kind':'Pod'},'dryRun':true}}",
              &r, &e),
        0);
    assert_int_equal(r.op, AR_CREATE);
    assert_true(r.dry_run);
    assert_string_equal(r.name, "");
    assert_string_equal(r.sub_resource, "");
    assert_null(r.old_object);
    /* no requestKind: the kind itself */
    assert_string_equal(r.request_kind.name, "Pod");
    json_t *patch = J("[{'op':'add','path':'/spec/replicas','value':3}]");
    ar_answer a = {.allowed = true, .patch = patch};
    json_t *got = ar_response(&r, &a);
    json_t *resp = json_object_get(got, "response");
    assert_string_equal(json_string_value(json_object_get(got, "apiVersion")), AR_V1BETA1);
    assert_string_equal(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
    const char *b = json_string_value(json_object_get(resp, "patch"));
    assert_non_null(b);
    long n = b64_decoded_len(b, strlen(b));
    assert_true(n > 0);
    unsigned char *raw = malloc((size_t)n + 1);
    assert_int_equal(b64_decode(b, strlen(b), raw), n);
    json_t *back = json_loadb((const char *)raw, (size_t)n, 0, NULL);
    assert_json_eq(back, patch);
    json_decref(back);
    free(raw);
    json_decref(got);
    json_decref(patch);
    ar_request_free(&r);
}

#define HEAD "{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{"
#define GVKR                                                                                       \
    "'kind':{'group':'','version':'v1','kind':'Pod'},"                                             \
    "'resource':{'group':'','version':'v1','resource':'pods'},"

static void expect_bad(const char *body, const char *msg)
{
    ar_request r;
    api_err e;
    if (parse(body, &r, &e) == 0) fail_msg("accepted: %s", body);
    assert_int_equal(e.code, API_BAD_REQUEST);
    assert_null(r.root);
    if (strcmp(e.message, msg) != 0) fail_msg("%s\n got  %s\n want %s", body, e.message, msg);
    api_err_clear(&e);
}

static void test_malformed(void **state)
{
    (void)state;
    expect_bad("[1]", "AdmissionReview is invalid: not a JSON object");
    expect_bad("{'kind':'AdmissionReview'}", "AdmissionReview is invalid: review.apiVersion: "
                                             "Required value");
    expect_bad("{'apiVersion':'admission.k8s.io/v1','kind':'Pod'}",
               "AdmissionReview is invalid: kind: Unsupported value: \"Pod\": supported values: "
               "\"AdmissionReview\"");
    expect_bad("{'apiVersion':'v1','kind':'AdmissionReview'}",
               "AdmissionReview is invalid: apiVersion: Unsupported value: \"v1\": supported "
               "values: \"admission.k8s.io/v1\", \"admission.k8s.io/v1beta1\"");
    expect_bad("{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview'}",
               "AdmissionReview is invalid: request: Required value");
    expect_bad("{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':[]}",
               "AdmissionReview is invalid: review.request: Invalid value: must be an object");
    expect_bad(HEAD GVKR "'operation':'CREATE','object':{}}}",
               "AdmissionReview is invalid: request.uid: Required value");
    expect_bad(HEAD "'uid':'',"
                    "'operation':'CREATE'}}",
               "AdmissionReview is invalid: request.uid: Required value");
    expect_bad(HEAD "'uid':7}}",
               "AdmissionReview is invalid: request.uid: Invalid value: scalar: must be a string");
    expect_bad(HEAD "'uid':'u','resource':{'version':'v1','resource':'pods'}}}",
               "AdmissionReview is invalid: request.kind: Required value");
    expect_bad(HEAD "'uid':'u','kind':{'group':'','version':'v1','kind':'Pod'},"
                    "'resource':{'group':'','resource':'pods'}}}",
               "AdmissionReview is invalid: request.resource.version: Required value");
    expect_bad(HEAD "'uid':'u'," GVKR "'operation':'PATCH'}}",
               "AdmissionReview is invalid: request.operation: Unsupported value: \"PATCH\": "
               "supported values: \"CREATE\", \"UPDATE\", \"DELETE\", \"CONNECT\"");
    expect_bad(HEAD "'uid':'u'," GVKR "'operation':'CREATE'}}",
               "AdmissionReview is invalid: request.object: Required value: for operation CREATE");
    expect_bad(HEAD "'uid':'u'," GVKR "'operation':'DELETE'}}",
               "AdmissionReview is invalid: request.name: Required value: for operation DELETE");
    expect_bad(HEAD "'uid':'u'," GVKR "'operation':'CREATE','object':'x'}}",
               "AdmissionReview is invalid: request.object: Invalid value: must be an object");
    expect_bad(HEAD "'uid':'u'," GVKR "'operation':'CREATE','object':{},'dryRun':'yes'}}",
               "AdmissionReview is invalid: request.dryRun: Invalid value: must be a boolean");
    expect_bad(HEAD "'uid':'u'," GVKR "'operation':'CREATE','object':{},'userInfo':[]}}",
               "AdmissionReview is invalid: request.userInfo: Invalid value: must be an object");
    ar_request r;
    api_err e;
    /* a NUL in a string is refused (C would cut the uid there) */
    const char nul[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                       "\"request\":{\"uid\":\"u\\u0000v\"}}";
    api_err_init(&e);
    assert_int_equal(ar_parse(nul, strlen(nul), &r, &e), -1);
    assert_int_equal(e.code, API_BAD_REQUEST);
    api_err_clear(&e);
    /* duplicate keys are refused, as a second uid would be ambiguous */
    const char dup[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"apiVersion\":\"x\"}";
    api_err_init(&e);
    assert_int_equal(ar_parse(dup, strlen(dup), &r, &e), -1);
    assert_int_equal(e.code, API_BAD_REQUEST);
    api_err_clear(&e);
    /* bounded: a long uid, and a body beyond AR_MAX_BODY (not read) */
    char big[512];
    snprintf(big, sizeof big, HEAD "'uid':'%0*d'}}", AR_MAX_UID + 1, 0);
    expect_bad(big, "AdmissionReview is invalid: request.uid: Too long: must have at most 128 "
                    "bytes");
    api_err_init(&e);
    assert_int_equal(ar_parse("{}", (size_t)AR_MAX_BODY + 1, &r, &e), -1);
    assert_int_equal(e.code, API_TOO_LARGE);
    api_err_clear(&e);
    api_err_init(&e);
    assert_int_equal(ar_parse(NULL, 0, &r, &e), -1);
    assert_int_equal(e.code, API_BAD_REQUEST);
    api_err_clear(&e);
}

/* ---- the decision on a store ---- */

#define CLAIMS_GVR "'group':'capsule.clastix.io','version':'v1beta2'"

/* webhook_review of s (J() notation): the HTTP code, and the response. */
static int review(store *st, const char *s, json_t **out)
{
    char *t = text_of(s), *resp = NULL;
    size_t len = 0;
    int code = webhook_review(st, NULL, t, strlen(t), &resp, &len);
    assert_non_null(resp);
    assert_int_equal(strlen(resp), len);
    *out = json_loadb(resp, len, 0, NULL);
    assert_non_null(*out);
    free(resp);
    free(t);
    return code;
}

static const char *resp_str(const json_t *r, const char *path)
{
    return json_string_value(api_json_path(r, path));
}

static void test_decision(void **state)
{
    (void)state;
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'n1','labels':{'team':'a'}}}");
    const api_kind *pools = test_kind("capsule.clastix.io", "v1beta2", "resourcepools");
    json_t *pool = J("{'metadata':{'name':'p'},'spec':{'quota':{'hard':{'requests.cpu':'2'}},"
                     "'selectors':[{'matchLabels':{'team':'a'}}]}}"),
           *out = NULL;
    api_err e;
    api_err_init(&e);
    assert_int_equal(reg_create(st, pools, "", pool, false, &out, &e), 0);
    json_decref(out);
    json_decref(pool);
    int64_t rev = store_revision(st);
    json_t *r;

    /* a claim the pool can hold: allowed, nothing written */
    assert_int_equal(
        review(st,
               HEAD "'uid':'a1','kind':{" CLAIMS_GVR ",'kind':'ResourcePoolClaim'},'resource':{"
                    "" CLAIMS_GVR ",'resource':'resourcepoolclaims'},'namespace':'n1','name':'c',"
                    "'operation':'CREATE','object':{'apiVersion':'capsule.clastix.io/v1beta2',"
                    "'kind':'ResourcePoolClaim','metadata':{'name':'c','namespace':'n1',"
                    "'resourceVersion':'77'},'spec':{'pool':'p','claim':{'requests.cpu':'1'}}}}}",
               &r),
        200);
    assert_string_equal(resp_str(r, "response.uid"), "a1");
    assert_true(json_is_true(api_json_path(r, "response.allowed")));
    json_decref(r);
    /* one for a resource the pool lacks: standalone's 403 */
    assert_int_equal(
        review(st,
               HEAD "'uid':'a2','kind':{" CLAIMS_GVR ",'kind':'ResourcePoolClaim'},'resource':{"
                    "" CLAIMS_GVR ",'resource':'resourcepoolclaims'},'namespace':'n1','name':'c',"
                    "'operation':'CREATE','object':{'apiVersion':'capsule.clastix.io/v1beta2',"
                    "'kind':'ResourcePoolClaim','metadata':{'name':'c','namespace':'n1'},"
                    "'spec':{'pool':'p','claim':{'requests.memory':'1Gi'}}}}}",
               &r),
        200);
    assert_true(json_is_false(api_json_path(r, "response.allowed")));
    assert_string_equal(resp_str(r, "response.status.message"),
                        "resourcepoolclaims.capsule.clastix.io \"c\" is forbidden: resource "
                        "requests.memory is not available in pool p");
    assert_string_equal(resp_str(r, "response.status.reason"), "Forbidden");
    assert_int_equal(json_integer_value(api_json_path(r, "response.status.code")), 403);
    json_decref(r);
    /* a namespace allot does not hold: NotFound, as a create would be */
    assert_int_equal(review(st,
                            HEAD "'uid':'a3'," GVKR "'namespace':'nope','operation':'CREATE',"
                                 "'object':{'apiVersion':'v1','kind':'Pod','metadata':{'name':'x'},"
                                 "'spec':{'containers':[{'name':'c','image':'i'}]}}}}",
                            &r),
                     200);
    assert_true(json_is_false(api_json_path(r, "response.allowed")));
    assert_int_equal(json_integer_value(api_json_path(r, "response.status.code")), 404);
    json_decref(r);
    /* kinds allot does not serve, scale, CONNECT: allowed */
    assert_int_equal(review(st,
                            HEAD "'uid':'a4','kind':{'group':'x.io','version':'v1','kind':'W'},"
                                 "'resource':{'group':'x.io','version':'v1','resource':'ws'},"
                                 "'operation':'CREATE','object':{}}}",
                            &r),
                     200);
    assert_true(json_is_true(api_json_path(r, "response.allowed")));
    json_decref(r);
    assert_int_equal(review(st,
                            HEAD "'uid':'a5'," GVKR "'namespace':'n1','name':'x',"
                                 "'operation':'CONNECT','object':{}}}",
                            &r),
                     200);
    assert_true(json_is_true(api_json_path(r, "response.allowed")));
    json_decref(r);
    /* a delete of what allot does not hold: allowed */
    assert_int_equal(review(st,
                            HEAD "'uid':'a6'," GVKR "'namespace':'n1','name':'gone',"
                                 "'operation':'DELETE'}}",
                            &r),
                     200);
    assert_true(json_is_true(api_json_path(r, "response.allowed")));
    json_decref(r);
    /* a malformed review: a 400 Status */
    assert_int_equal(review(st, "{'apiVersion':'admission.k8s.io/v1'}", &r), 400);
    assert_string_equal(resp_str(r, "kind"), "Status");
    json_decref(r);
    assert_int_equal(store_revision(st), rev);
    store_close(st);
}

/* ---- the mutating webhook ---- */

/* A mutate hook: a patch for pod "p", a refusal for pod "no". */
static int mutate_hook(void *arg, const ar_request *r, json_t **patch, api_err *e)
{
    (void)arg;
    if (!strcmp(r->name, "no")) return api_err_set(e, API_FORBIDDEN, "pods \"no\" is forbidden");
    *patch =
        json_pack("[{s:s, s:s, s:s}]", "op", "add", "path", "/metadata/labels/x", "value", "y");
    return 0;
}

static json_t *mutate(const webhook_guard *g, const char *name, int *code)
{
    char s[512], *resp = NULL;
    snprintf(s, sizeof s,
             HEAD "'uid':'u1','name':'%s','namespace':'ns'," GVKR "'operation':'CREATE',"
                  "'userInfo':{'username':'a'},'object':{'metadata':{'name':'%s'}}}}",
             name, name);
    char *t = text_of(s);
    size_t len = 0;
    *code = webhook_mutate(g, t, strlen(t), &resp, &len);
    json_t *out = json_loadb(resp, len, 0, NULL);
    free(resp);
    free(t);
    return out;
}

static void test_mutate(void **state)
{
    (void)state;
    webhook_guard g = {.mutate = mutate_hook};
    int code;
    json_t *out = mutate(&g, "p", &code);
    assert_int_equal(code, 200);
    assert_true(json_is_true(api_json_path(out, "response.allowed")));
    assert_string_equal(json_string_value(api_json_path(out, "response.patchType")), "JSONPatch");
    assert_non_null(api_json_path(out, "response.patch"));
    json_decref(out);
    out = mutate(&g, "no", &code);
    assert_int_equal(code, 200);
    assert_true(json_is_false(api_json_path(out, "response.allowed")));
    assert_int_equal(json_integer_value(api_json_path(out, "response.status.code")), 403);
    json_decref(out);
    /* no hook: allowed, unchanged */
    out = mutate(NULL, "p", &code);
    assert_true(json_is_true(api_json_path(out, "response.allowed")));
    assert_null(api_json_path(out, "response.patch"));
    json_decref(out);
    /* unreadable: a Status */
    char *resp = NULL;
    size_t len;
    assert_int_equal(webhook_mutate(&g, "{", 1, &resp, &len), 400);
    free(resp);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream_example), cmocka_unit_test(test_v1beta1_and_patch),
        cmocka_unit_test(test_malformed),        cmocka_unit_test(test_decision),
        cmocka_unit_test(test_mutate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
