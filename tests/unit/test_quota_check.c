/* test_quota_check.c - the admission decision (core/quota_check.c): every
 * vector of spec §8.1 (upstream admission_test.go) with its exact message, plus
 * the other CheckRequest branches of §4.3.
 *
 * quota_check returns the error text after upstream's
 * `<resource> "<name>" is forbidden: ` prefix, which the HTTP layer adds.
 * DryRun (A2, A3) is the caller's concern: the decision is the same and the
 * caller simply does not commit res.used. A13 (a quota in another namespace)
 * reduces to an empty quota list, since the caller passes the namespace's quotas.
 *
 * Every request is also decided by quota_check_views, on quotas prepared with
 * quota_prepare and status.used parsed into rlists (as the registry calls it),
 * and must get the same result: allowed, code, message and every new usage.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quota_check.h"

#define NOW 1700000000

/* A ResourceQuota named `name` in `test`, with status hard/used and extra spec. */
static char *Q(const char *name, const char *spec, const char *hard, const char *used)
{
    char *s;
    if (asprintf(&s,
                 "{'metadata':{'name':'%s','namespace':'test','resourceVersion':'1'},"
                 "'spec':{'hard':{%s}%s%s},'status':{'hard':{%s},'used':{%s}}}",
                 name, hard, *spec ? "," : "", spec, hard, used) < 0)
        abort();
    return s;
}

/* validPod(name, 1, requests, limits), with extra spec fields. */
static char *POD(const char *name, const char *spec, const char *req, const char *lim)
{
    char *s;
    if (asprintf(&s,
                 "{'metadata':{'name':'%s','namespace':'test'},'spec':{%s%s'containers':[{'name':"
                 "'','image':'foo:V0','resources':{'requests':{%s},'limits':{%s}}}]}}",
                 name, spec, *spec ? "," : "", req, lim) < 0)
        abort();
    return s;
}

#define MAXQ 10

typedef struct tcase {
    const char *group, *resource, *sub;
    quota_op op;
    char *obj, *old;
    char *quotas[MAXQ];
    const char *limited;
    const char *ns;
    bool deferred;
} tcase;

typedef struct want {
    bool allowed;
    int code;
    const char *message;
    const char *used[MAXQ]; /* compact JSON with single quotes, or NULL = unchanged */
} want;

static char *used_str(const json_t *u)
{
    char *s = json_dumps(u, JSON_SORT_KEYS | JSON_COMPACT);
    for (char *c = s; *c; c++)
        if (*c == '"') *c = '\'';
    return s;
}

static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* quota_check_views on the quotas of rq (prepared, used parsed) decides as
 * quota_check did: `json` is quota_check's result, `json_rc` its return. */
static void expect_views_agree(const char *id, const quota_request *rq, int json_rc,
                               const quota_result *json)
{
    size_t n = json_array_size(rq->quotas);
    quota_prepared **prep = calloc(n + 1, sizeof *prep);
    rlist **used = calloc(n + 1, sizeof *used);
    quota_view *views = calloc(n + 1, sizeof *views);
    for (size_t i = 0; i < n; i++) {
        const json_t *q = json_array_get(rq->quotas, i);
        char err[256];
        prep[i] = quota_prepare(q, err, sizeof err);
        used[i] = rl_new();
        /* A quota that does not prepare: quota_check must have refused with that text. */
        if (!prep[i]) {
            assert_int_equal(json_rc, QUOTA_EINVAL);
            if (!same_str(json->message, err)) fail_msg("%s: prepare: %s", id, err);
            goto done;
        }
        if (rl_from_json(json_object_get(json_object_get(q, "status"), "used"), used[i], NULL))
            goto done; /* views cannot hold it; quota_check refused (checked by its caller) */
        views[i] = (quota_view){prep[i], used[i]};
    }
    quota_result res;
    int rc = quota_check_views(rq, views, n, &res);
    if (rc != json_rc) fail_msg("%s: views rc %d, json rc %d", id, rc, json_rc);
    if (res.allowed != json->allowed || res.code != json->code ||
        !same_str(res.message, json->message))
        fail_msg("%s: views decided allowed=%d %d %s, json allowed=%d %d %s", id, res.allowed,
                 res.code, res.message ? res.message : "", json->allowed, json->code,
                 json->message ? json->message : "");
    assert_null(res.used);
    for (size_t i = 0; i < n; i++) {
        const json_t *want = json->used ? json->used[i] : NULL;
        json_t *got = res.next && res.next[i] ? rl_to_json(res.next[i]) : NULL;
        if (!(got ? want && json_equal(got, want) : !want)) {
            char *g = got ? used_str(got) : NULL, *w = want ? used_str(want) : NULL;
            fail_msg("%s: quota %zu: views used %s, json used %s", id, i, g ? g : "(unchanged)",
                     w ? w : "(unchanged)");
        }
        json_decref(got);
    }
    quota_result_cleanup(&res);
done:
    for (size_t i = 0; i < n; i++) {
        quota_prepared_free(prep[i]);
        rl_free(used[i]);
    }
    free(prep);
    free(used);
    free(views);
}

/* ---- explanations: what quota_request.explain is told agrees with the decision ---- */

#define MAXX 8
typedef struct told {
    size_t n;
    char *name[MAXX], *after[MAXX], *exceeded[MAXX];
} told;

static void tell(void *arg, const char *quota, const rlist *hard, const rlist *used,
                 const rlist *requested, const rlist *after, const char *exceeded)
{
    told *t = arg;
    assert_true(t->n < MAXX);
    assert_non_null(hard);
    for (size_t k = 0; k < rl_len(requested); k++) /* only names of hard */
        assert_true(rl_has(hard, rl_name(requested, k)));
    json_t *a = after ? rl_to_json(after) : NULL;
    t->name[t->n] = strdup(quota);
    t->after[t->n] = a ? used_str(a) : NULL;
    t->exceeded[t->n++] = exceeded ? strdup(exceeded) : NULL;
    json_decref(a);
}

/* Every vector again with an explanation: a denial for exceeding a quota is
 * that quota's explanation, word for word; an allowed request exceeds none;
 * a quota charged is told the usage it gets. */
static void expect_explained(const char *id, quota_request rq, const quota_result *res, size_t nq)
{
    told t = {0};
    rq.explain = tell;
    rq.explain_arg = &t;
    quota_result again;
    assert_int_equal(quota_check(&rq, &again), 0);
    assert_int_equal(again.allowed, res->allowed);
    const char *first = NULL;
    for (size_t i = 0; i < t.n; i++)
        if (t.exceeded[i] && !first) first = t.exceeded[i];
    if (res->allowed && first && strcmp(rq.subresource ? rq.subresource : "", "status"))
        fail_msg("%s: allowed, but explained as %s", id, first);
    if (!res->allowed && !strncmp(res->message, "exceeded quota: ", 16) &&
        (!first || strcmp(first, res->message)))
        fail_msg("%s: denied with %s, explained as %s", id, res->message, first ? first : "-");
    for (size_t i = 0; res->allowed && res->used && i < nq; i++) {
        if (!res->used[i]) continue;
        const char *qn = json_string_value(
            json_object_get(json_object_get(json_array_get(rq.quotas, i), "metadata"), "name"));
        char *want = used_str(res->used[i]);
        bool found = false;
        for (size_t j = 0; j < t.n; j++)
            if (!strcmp(t.name[j], qn ? qn : "")) {
                found = true;
                if (!t.after[j] || strcmp(t.after[j], want))
                    fail_msg("%s: %s charged %s, explained %s", id, qn, want,
                             t.after[j] ? t.after[j] : "-");
            }
        if (!found) fail_msg("%s: %s charged, not explained", id, qn);
        free(want);
    }
    for (size_t i = 0; i < t.n; i++) {
        free(t.name[i]);
        free(t.after[i]);
        free(t.exceeded[i]);
    }
    quota_result_cleanup(&again);
}

static void check(const char *id, tcase t, want w)
{
    json_t *quotas = json_array();
    size_t nq = 0;
    for (; nq < MAXQ && t.quotas[nq]; nq++)
        json_array_append_new(quotas, J(t.quotas[nq]));
    json_t *obj = t.obj ? J(t.obj) : NULL, *old = t.old ? J(t.old) : NULL;
    json_t *limited = t.limited ? J(t.limited) : NULL;
    quota_request rq = {.namespace_ = t.ns ? t.ns : "test",
                        .group = t.group ? t.group : "",
                        .resource = t.resource ? t.resource : "pods",
                        .subresource = t.sub,
                        .op = t.op,
                        .obj = obj,
                        .old = old,
                        .quotas = quotas,
                        .limited = limited,
                        .now = NOW,
                        .deferred = t.deferred};
    quota_result res;
    int rc = quota_check(&rq, &res);
    if (rc) fail_msg("%s: quota_check returned %d", id, rc);
    expect_views_agree(id, &rq, rc, &res);
    expect_explained(id, rq, &res, nq);
    if (res.allowed != w.allowed)
        fail_msg("%s: allowed=%d want %d (%s)", id, res.allowed, w.allowed,
                 res.message ? res.message : "");
    if (!w.allowed) {
        if (strcmp(res.message, w.message) != 0)
            fail_msg("%s: message\n got: %s\nwant: %s", id, res.message, w.message);
        if (res.code != (w.code ? w.code : 403)) fail_msg("%s: code %d", id, res.code);
    }
    for (size_t i = 0; i < nq; i++) {
        const json_t *u = res.used ? res.used[i] : NULL;
        char *got = u ? used_str(u) : NULL;
        if ((got == NULL) != (w.used[i] == NULL) || (got && strcmp(got, w.used[i]) != 0))
            fail_msg("%s: quota %zu used: got %s want %s", id, i, got ? got : "(unchanged)",
                     w.used[i] ? w.used[i] : "(unchanged)");
        free(got);
    }
    quota_result_cleanup(&res);
    for (size_t i = 0; i < MAXQ; i++)
        free(t.quotas[i]);
    free(t.obj);
    free(t.old);
    json_decref(quotas);
    json_decref(obj);
    json_decref(old);
    json_decref(limited);
}

#define HARD1 "'cpu':'3','memory':'100Gi','pods':'5'"
#define USED1 "'cpu':'1','memory':'50Gi','pods':'3'"

/* A1, A2 (dryRun: same decision, the caller does not write) */
static void test_a1_a2_admit(void **state)
{
    for (int i = 0; i < 2; i++)
        check(i ? "A2" : "A1",
              (tcase){.op = QUOTA_CREATE,
                      .obj = POD("allowed-pod", "", "'cpu':'100m','memory':'2Gi'", ""),
                      .quotas = {Q("quota", "", HARD1, USED1)}},
              (want){.allowed = true, .used = {"{'cpu':'1100m','memory':'52Gi','pods':'4'}"}});
}

static void test_a3_a4_a5_exceeded(void **state)
{
    check("A3",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("not-allowed-pod", "", "'cpu':'100m','memory':'60Gi'", ""),
                  .quotas = {Q("quota", "", HARD1, USED1)}},
          (want){.message = "exceeded quota: quota, requested: memory=60Gi, used: memory=50Gi, "
                            "limited: memory=100Gi"});
    check(
        "A4",
        (tcase){.op = QUOTA_CREATE,
                .obj = POD("not-allowed-pod", "", "'cpu':'3','memory':'2Gi'", ""),
                .quotas = {Q("quota", "", HARD1, USED1)}},
        (want){.message = "exceeded quota: quota, requested: cpu=3, used: cpu=1, limited: cpu=3"});
    check("A5",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("not-allowed-pod", "", "'cpu':'100m','memory':'2Gi'", ""),
                  .quotas = {Q("quota", "", "'memory':'2Gi'", "'memory':'1Gi'")}},
          (want){.message = "exceeded quota: quota, requested: memory=2Gi, used: memory=1Gi, "
                            "limited: memory=2Gi"});
    /* several keys over: sorted, comma-joined without spaces */
    check("multi",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", "'cpu':'3','memory':'60Gi'", ""),
                  .quotas = {Q("quota", "", HARD1, USED1)}},
          (want){.message = "exceeded quota: quota, requested: cpu=3,memory=60Gi, used: "
                            "cpu=1,memory=50Gi, limited: cpu=3,memory=100Gi"});
}

static void test_a6_a7_not_handled(void **state)
{
    check("A6",
          (tcase){.op = QUOTA_CREATE,
                  .sub = "subresource",
                  .obj = POD("p", "", "'cpu':'100m','memory':'2Gi'", ""),
                  .quotas = {Q("quota", "", "'memory':'2Gi'", "'memory':'1Gi'")}},
          (want){.allowed = true});
    check("A7",
          (tcase){.op = QUOTA_DELETE,
                  .obj = POD("p", "", "'cpu':'100m','memory':'2Gi'", ""),
                  .quotas = {Q("quota", "", "'memory':'2Gi'", "'memory':'2Gi'")}},
          (want){.allowed = true});
}

#define SVC_HARD "'services':'10','services.loadbalancers':'10','services.nodeports':'10'"
#define SVC_USED "'services':'1','services.loadbalancers':'1','services.nodeports':'0'"

static char *svc(const char *rv, const char *type, const char *ports)
{
    char *s;
    if (asprintf(&s,
                 "{'metadata':{'name':'service','namespace':'test','resourceVersion':'%s'},"
                 "'spec':{'type':'%s','ports':[%s]}}",
                 rv, type, ports) < 0)
        abort();
    return s;
}

static void test_a8_a9_service_update(void **state)
{
    check(
        "A8",
        (tcase){.resource = "services",
                .op = QUOTA_UPDATE,
                .obj = svc("1", "NodePort", "{'port':1234}"),
                .old = svc("1", "LoadBalancer", ""),
                .quotas = {Q("quota", "", SVC_HARD, SVC_USED)}},
        (want){.allowed = true,
               .used = {"{'services':'1','services.loadbalancers':'1','services.nodeports':'1'}"}});
    check(
        "A9",
        (tcase){.resource = "services",
                .op = QUOTA_UPDATE,
                .obj = svc("", "NodePort", "{'port':1234}"),
                .old = svc("", "LoadBalancer", ""),
                .quotas = {Q("quota", "", SVC_HARD, SVC_USED)}},
        (want){.allowed = true,
               .used = {"{'services':'2','services.loadbalancers':'1','services.nodeports':'1'}"}});
}

#define PVC_HARD "'persistentvolumeclaims':'3','requests.storage':'100Gi'"
#define PVC_USED "'persistentvolumeclaims':'1','requests.storage':'10Gi'"

static char *pvc(const char *rv, const char *size)
{
    char *s;
    if (asprintf(&s,
                 "{'metadata':{'name':'claim','namespace':'test','resourceVersion':'%s'},"
                 "'spec':{'resources':{'requests':{'storage':'%s'}}}}",
                 rv, size) < 0)
        abort();
    return s;
}

static void test_a10_a11_pvc_update(void **state)
{
    check("A10",
          (tcase){.resource = "persistentvolumeclaims",
                  .op = QUOTA_UPDATE,
                  .obj = pvc("1", "5Gi"),
                  .old = pvc("1", "10Gi"),
                  .quotas = {Q("quota", "", PVC_HARD, PVC_USED)}},
          (want){.allowed = true});
    check("A11",
          (tcase){.resource = "persistentvolumeclaims",
                  .op = QUOTA_UPDATE,
                  .obj = pvc("1", "15Gi"),
                  .old = pvc("1", "10Gi"),
                  .quotas = {Q("quota", "", PVC_HARD, PVC_USED)}},
          (want){.allowed = true,
                 .used = {"{'persistentvolumeclaims':'1','requests.storage':'15Gi'}"}});
}

static void test_a12_must_specify(void **state)
{
    check("A12",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("not-allowed-pod", "", "'cpu':'100m','memory':'2Gi'", "'cpu':'200m'"),
                  .quotas = {Q("quota", "",
                               "'cpu':'3','memory':'100Gi','limits.memory':'200Gi',"
                               "'pods':'5'",
                               "'cpu':'1','memory':'50Gi','limits.memory':'100Gi','pods':'3'")}},
          (want){.message = "failed quota: quota: must specify limits.memory for: "});
}

static void test_a13_other_namespace(void **state)
{
    check("A13", (tcase){.op = QUOTA_CREATE, .obj = POD("p", "", "'cpu':'100m'", "")},
          (want){.allowed = true});
}

static void test_a14_a15_a16_scopes(void **state)
{
    check(
        "A14",
        (tcase){.op = QUOTA_CREATE,
                .obj = POD("allowed-pod", "'activeDeadlineSeconds':30",
                           "'cpu':'100m','memory':'2Gi'", ""),
                .quotas = {Q("quota-non-terminating", "'scopes':['NotTerminating']", HARD1, USED1),
                           Q("quota-terminating", "'scopes':['Terminating']", HARD1, USED1)}},
        (want){.allowed = true, .used = {NULL, "{'cpu':'1100m','memory':'52Gi','pods':'4'}"}});
    check("A15",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("allowed-pod", "", "", ""),
                  .quotas = {Q("quota-besteffort", "'scopes':['BestEffort']", "'pods':'5'",
                               "'pods':'3'"),
                             Q("quota-not-besteffort", "'scopes':['NotBestEffort']", "'pods':'5'",
                               "'pods':'3'")}},
          (want){.allowed = true, .used = {"{'pods':'4'}", NULL}});
    check("A16",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("allowed-pod", "", "'cpu':'100m','memory':'1Gi'", ""),
                  .quotas = {Q("quota-besteffort", "'scopes':['BestEffort']", "'pods':'5'",
                               "'pods':'3'")}},
          (want){.allowed = true});
}

static void test_a17_no_namespace_on_object(void **state)
{
    check("A17",
          (tcase){.op = QUOTA_CREATE,
                  .obj = strdup("{'metadata':{'name':'p'},'spec':{'containers':[{}]}}"),
                  .quotas = {Q("quota", "", "'pods':'3'", "'pods':'1'")}},
          (want){.allowed = true, .used = {"{'pods':'2'}"}});
}

static void test_a18_a19_pvc_create(void **state)
{
    check("A18",
          (tcase){.resource = "persistentvolumeclaims",
                  .op = QUOTA_CREATE,
                  .obj = pvc("", "-1Gi"),
                  .quotas = {Q("quota", "", PVC_HARD, PVC_USED)}},
          (want){.message = "quota usage is negative for resource(s): requests.storage"});
    check("A19",
          (tcase){.resource = "persistentvolumeclaims",
                  .op = QUOTA_CREATE,
                  .obj = pvc("", "1Gi"),
                  .quotas = {Q("quota", "", PVC_HARD, PVC_USED)}},
          (want){.allowed = true,
                 .used = {"{'persistentvolumeclaims':'2','requests.storage':'11Gi'}"}});
}

static void test_a20_unrelated_exceeded(void **state)
{
    check("A20",
          (tcase){
              .op = QUOTA_CREATE,
              .obj = POD("allowed-pod", "", "", ""),
              .quotas = {Q("quota", "", "'services':'3','pods':'4'", "'services':'4','pods':'1'")}},
          (want){.allowed = true, .used = {"{'pods':'2','services':'4'}"}});
}

#define LIM_CPU "[{'resource':'pods','matchContains':['cpu']}]"
#define LIM_REQCPU "[{'resource':'pods','matchContains':['requests.cpu']}]"
#define REQ32 "'cpu':'3','memory':'2Gi'"

static void test_a21_to_a25_limited_resources(void **state)
{
    check("A21",
          (tcase){.op = QUOTA_CREATE, .obj = POD("p", "", "'cpu':'3'", ""), .limited = LIM_CPU},
          (want){.message = "insufficient quota to consume: cpu,requests.cpu"});
    check("A22",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", "'cpu':'3'", ""),
                  .limited = "[{'resource':'services','matchContains':['services']}]"},
          (want){.allowed = true});
    check("A23",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", REQ32, ""),
                  .limited = LIM_REQCPU,
                  .quotas = {Q("quota", "", "'requests.cpu':'10'", "'requests.cpu':'1'")}},
          (want){.allowed = true, .used = {"{'requests.cpu':'4'}"}});
    check("A24",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", REQ32, ""),
                  .limited = LIM_REQCPU,
                  .quotas = {Q("quota1", "", "'requests.cpu':'10'", "'requests.cpu':'1'"),
                             Q("quota2", "", "'memory':'10Gi'", "'memory':'1Gi'")}},
          (want){.allowed = true, .used = {"{'requests.cpu':'4'}", "{'memory':'3Gi'}"}});
    check("A25",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", REQ32, ""),
                  .limited = LIM_CPU,
                  .quotas = {Q("quota", "", "'memory':'10Gi'", "'memory':'1Gi'")}},
          (want){.message = "insufficient quota to consume: cpu,requests.cpu"});
}

#define PC_EXISTS "{'scopeName':'PriorityClass','operator':'Exists'}"
#define PC_QUOTA "'scopeSelector':{'matchExpressions':[" PC_EXISTS "]}"
#define FAKE_PC "'priorityClassName':'fake-priority'"

static void test_a26_to_a32_limited_scopes(void **state)
{
    check("A26",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", FAKE_PC, REQ32, ""),
                  .limited = "[{'resource':'pods','matchScopes':[" PC_EXISTS "]}]",
                  .quotas = {Q("quota", PC_QUOTA, "", "")}},
          (want){.allowed = true});
    check("A27",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", FAKE_PC, REQ32, ""),
                  .limited = "[{'resource':'pods','matchScopes':[" PC_EXISTS "],"
                             "'matchContains':['requests.cpu']}]",
                  .quotas = {Q("quota", PC_QUOTA, "", "")}},
          (want){.message = "insufficient quota to consume: requests.cpu"});
    check(
        "A28",
        (tcase){.op = QUOTA_CREATE,
                .obj = POD("p", FAKE_PC, REQ32, ""),
                .limited = "[{'resource':'pods','matchScopes':[" PC_EXISTS "]}]"},
        (want){.code = 500,
               .message = "insufficient quota to match these scopes: [{PriorityClass Exists []}]"});
    const char *be =
        "[{'resource':'pods','matchScopes':[{'scopeName':'BestEffort','operator':'Exists'}]}]";
    check("A29", (tcase){.op = QUOTA_CREATE, .obj = POD("p", "", "", ""), .limited = be},
          (want){.code = 500,
                 .message = "insufficient quota to match these scopes: [{BestEffort Exists []}]"});
    check("A30",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", "", ""),
                  .limited = be,
                  .quotas = {Q("quota-besteffort", "'scopes':['BestEffort']", "'pods':'5'",
                               "'pods':'3'")}},
          (want){.allowed = true, .used = {"{'pods':'4'}"}});
    const char *two =
        "[{'resource':'pods','matchScopes':[{'scopeName':'BestEffort','operator':'Exists'}]},"
        "{'resource':'pods','matchScopes':[{'scopeName':'PriorityClass','operator':'In',"
        "'values':['cluster-services']}]}]";
    check("A31",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", FAKE_PC, "'cpu':'100m','memory':'1Gi'", ""),
                  .limited = two},
          (want){.allowed = true});
    check("A32", (tcase){.op = QUOTA_CREATE, .obj = POD("p", FAKE_PC, "", ""), .limited = two},
          (want){.code = 500,
                 .message = "insufficient quota to match these scopes: [{BestEffort Exists []}]"});
}

/* ---- other §4.3 branches --------------------------------------------------------------------- */

static void test_status_unknown(void **state)
{
    check("status unknown",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", "'cpu':'1','memory':'1Gi'", ""),
                  .quotas = {Q("quota", "", "'cpu':'3','pods':'5','secrets':'1'", "'pods':'1'")}},
          (want){.message = "status unknown for quota: quota, resources: cpu,pods"});
}

static void test_empty_status_is_ignored(void **state)
{
    char *q = strdup("{'metadata':{'name':'quota'},'spec':{'hard':{'pods':'0'}}}");
    check("fresh quota", (tcase){.op = QUOTA_CREATE, .obj = POD("p", "", "", ""), .quotas = {q}},
          (want){.allowed = true});
}

static void test_update_without_old(void **state)
{
    check("no old",
          (tcase){.resource = "services",
                  .op = QUOTA_UPDATE,
                  .obj = svc("1", "ClusterIP", ""),
                  .quotas = {Q("quota", "", SVC_HARD, SVC_USED)}},
          (want){.message = "unable to get previous usage since prior version of object was not "
                            "found"});
}

/* A pod whose activeDeadlineSeconds is set moves into the Terminating quota,
 * which never charged it before: that quota gets the full usage. */
static void test_pod_scope_move(void **state)
{
    char *old = POD("p", "", "'cpu':'1'", ""),
         *new = POD("p", "'activeDeadlineSeconds':10", "'cpu':'1'", "");
    char *oldrv = NULL;
    if (asprintf(&oldrv, "%s", old) < 0) abort();
    free(old);
    /* give the old object a resourceVersion */
    char *p = strstr(oldrv, "'namespace':'test'");
    char *old2;
    if (asprintf(&old2, "%.*s'resourceVersion':'7',%s", (int)(p - oldrv), oldrv, p) < 0) abort();
    free(oldrv);
    check("scope move",
          (tcase){.op = QUOTA_UPDATE,
                  .obj = new,
                  .old = old2,
                  .quotas = {Q("all", "", "'cpu':'10','pods':'10'", "'cpu':'1','pods':'1'"),
                             Q("term", "'scopes':['Terminating']", "'cpu':'10','pods':'10'",
                               "'cpu':'0','pods':'0'")}},
          (want){.allowed = true, .used = {NULL, "{'cpu':'1','pods':'1'}"}});
}

static void test_pvc_status_skips_limit(void **state)
{
    char *old = pvc("1", "10Gi");
    char *new = strdup("{'metadata':{'name':'claim','namespace':'test','resourceVersion':'1'},"
                       "'spec':{'resources':{'requests':{'storage':'10Gi'}}},"
                       "'status':{'allocatedResources':{'storage':'200Gi'}}}");
    check("pvc status",
          (tcase){.resource = "persistentvolumeclaims",
                  .sub = "status",
                  .op = QUOTA_UPDATE,
                  .obj = new,
                  .old = old,
                  .quotas = {Q("quota", "", PVC_HARD, PVC_USED)}},
          (want){.allowed = true,
                 .used = {"{'persistentvolumeclaims':'1','requests.storage':'200Gi'}"}});
}

static void test_scope_error(void **state)
{
    check("scope error",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", "", ""),
                  .quotas = {Q("quota",
                               "'scopeSelector':{'matchExpressions':[{'scopeName':'PriorityClass',"
                               "'operator':'Gt','values':['1']}]}",
                               "'pods':'5'", "'pods':'1'")}},
          (want){.code = 500,
                 .message = "error matching scopes of quota quota, err: error on matching scope "
                            "{PriorityClass Gt [1]}: failed to parse and convert selector: \"Gt\" "
                            "is not a valid scope selector operator"});
}

static void test_count_and_fast_paths(void **state)
{
    check("count",
          (tcase){.resource = "configmaps",
                  .op = QUOTA_CREATE,
                  .obj = strdup("{}"),
                  .quotas = {Q("quota", "", "'configmaps':'2','count/configmaps':'2'",
                               "'configmaps':'2','count/configmaps':'1'")}},
          (want){.message = "exceeded quota: quota, requested: configmaps=1, used: configmaps=2, "
                            "limited: configmaps=2"});
    check("no namespace",
          (tcase){.op = QUOTA_CREATE,
                  .ns = "",
                  .obj = POD("p", "", "", ""),
                  .quotas = {Q("quota", "", "'pods':'0'", "'pods':'0'")}},
          (want){.allowed = true});
    check("ignored",
          (tcase){.resource = "events",
                  .op = QUOTA_CREATE,
                  .obj = strdup("{}"),
                  .quotas = {Q("quota", "", "'count/events':'0'", "'count/events':'0'")}},
          (want){.allowed = true});
    /* exactly at hard is allowed */
    check("equal",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD("p", "", "", ""),
                  .quotas = {Q("quota", "", "'pods':'2'", "'pods':'1'")}},
          (want){.allowed = true, .used = {"{'pods':'2'}"}});
}

/* Batching: the second request of a batch sees the first one's charge. */
static void test_batch_apply(void **state)
{
    char *qs = Q("quota", "", "'pods':'2'", "'pods':'1'");
    json_t *quotas = json_array(), *pod = J("{'spec':{}}");
    json_array_append_new(quotas, J(qs));
    free(qs);
    quota_request rq = {.namespace_ = "test",
                        .group = "",
                        .resource = "pods",
                        .op = QUOTA_CREATE,
                        .obj = pod,
                        .quotas = quotas,
                        .now = NOW};
    quota_result res;
    assert_int_equal(quota_check(&rq, &res), 0);
    assert_true(res.allowed);
    assert_int_equal(quota_apply_used(quotas, &res), 0);
    quota_result_cleanup(&res);
    assert_int_equal(quota_check(&rq, &res), 0);
    assert_false(res.allowed);
    assert_string_equal(res.message,
                        "exceeded quota: quota, requested: pods=1, used: pods=2, limited: pods=2");
    assert_null(res.used[0]);
    quota_result_cleanup(&res);
    json_decref(quotas);
    json_decref(pod);
}

/* ---- many quotas, scopes, and every kind of denial (each also through the views) ----------- */

/* A pod of two containers, "app" and "side", each with requests = limits. */
static char *POD2(const char *name, const char *spec)
{
    char *s;
    if (asprintf(&s,
                 "{'metadata':{'name':'%s','namespace':'test'},'spec':{%s%s'containers':["
                 "{'name':'app','resources':{'requests':{'cpu':'250m','memory':'256Mi'},"
                 "'limits':{'cpu':'250m','memory':'256Mi'}}},"
                 "{'name':'side','resources':{'requests':{'cpu':'50m','memory':'64Mi'},"
                 "'limits':{'cpu':'50m','memory':'64Mi'}}}]},"
                 "'status':{'phase':'Pending','qosClass':'Guaranteed'}}",
                 name, spec, *spec ? "," : "") < 0)
        abort();
    return s;
}

#define HARD10                                                                                     \
    "'pods':'100','requests.cpu':'10','requests.memory':'10Gi','limits.cpu':'10',"                 \
    "'limits.memory':'10Gi'"
#define USED10                                                                                     \
    "'pods':'1','requests.cpu':'1','requests.memory':'1Gi','limits.cpu':'1','limits.memory':'1Gi'"
#define NEW10                                                                                      \
    "{'limits.cpu':'1300m','limits.memory':'1344Mi','pods':'2','requests.cpu':'1300m',"            \
    "'requests.memory':'1344Mi'}"
#define PC_IN(v)                                                                                   \
    "'scopeSelector':{'matchExpressions':[{'scopeName':'PriorityClass','operator':'In',"           \
    "'values':['" v "']}]}"
#define PC_HIGH "'priorityClassName':'high'"

/* Ten quotas of every scope flavour: the pod is in all but `term` and `low`. */
static void ten_quotas(char **q, const char *hard_last)
{
    q[0] = Q("plain", "", HARD10, USED10);
    q[1] = Q("notterm", "'scopes':['NotTerminating','NotBestEffort']", HARD10, USED10);
    q[2] = Q("term", "'scopes':['Terminating']", HARD10, USED10);
    q[3] = Q("high", PC_IN("high"), HARD10, USED10);
    q[4] = Q("low", PC_IN("low"), HARD10, USED10);
    q[5] = Q("pc-exists",
             "'scopeSelector':{'matchExpressions':[{'scopeName':'PriorityClass',"
             "'operator':'Exists'}]}",
             HARD10, USED10);
    q[6] = Q("notin",
             "'scopes':['NotBestEffort'],'scopeSelector':{'matchExpressions':[{'scopeName':"
             "'PriorityClass','operator':'NotIn','values':['low']}]}",
             HARD10, USED10);
    q[7] = Q("pods-only", "", "'pods':'100'", "'pods':'1'");
    q[8] = Q("secrets", "", "'secrets':'10'", "'secrets':'1'");
    q[9] = Q("last", PC_IN("high"), hard_last, USED10);
}

static void test_ten_quotas(void **state)
{
    tcase t = {.op = QUOTA_CREATE, .obj = POD2("p", PC_HIGH)};
    ten_quotas(t.quotas, HARD10);
    check("ten", t,
          (want){.allowed = true,
                 .used = {NEW10, NEW10, NULL, NEW10, NULL, NEW10, NEW10, "{'pods':'2'}", NULL,
                          NEW10}});
    /* the last quota is full on memory: nothing is charged anywhere */
    t = (tcase){.op = QUOTA_CREATE, .obj = POD2("p", PC_HIGH)};
    ten_quotas(t.quotas, "'pods':'100','requests.cpu':'10','requests.memory':'1100Mi',"
                         "'limits.cpu':'10','limits.memory':'10Gi'");
    check("ten exceeded", t,
          (want){.message = "exceeded quota: last, requested: requests.memory=320Mi, used: "
                            "requests.memory=1Gi, limited: requests.memory=1100Mi"});
}

static void test_must_specify_containers(void **state)
{
    char *pod =
        strdup("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'b','resources':{'requests':"
               "{'cpu':'1'}}},{'name':'a'}],'initContainers':[{'name':'c','resources':{'limits':"
               "{'memory':'1Gi'}}}]}}");
    check("must specify",
          (tcase){.op = QUOTA_CREATE,
                  .obj = pod,
                  .quotas = {Q("plain", "", "'pods':'10'", "'pods':'1'"),
                             Q("q", "", "'requests.cpu':'10','limits.memory':'10Gi'",
                               "'requests.cpu':'1','limits.memory':'1Gi'")}},
          (want){.message = "failed quota: q: must specify limits.memory for: a,b; requests.cpu "
                            "for: a,c"});
}

static void test_scoped_denials(void **state)
{
    check("scoped status unknown",
          (tcase){
              .op = QUOTA_CREATE,
              .obj = POD2("p", PC_HIGH),
              .quotas = {Q("plain", "", HARD10, USED10),
                         Q("high", PC_IN("high"), "'pods':'5','requests.cpu':'5'", "'pods':'1'")}},
          (want){.message = "status unknown for quota: high, resources: pods,requests.cpu"});
    /* the only quota covering requests.cpu is scoped to another class */
    check("not covered",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD2("p", PC_HIGH),
                  .limited = LIM_REQCPU,
                  .quotas = {Q("low", PC_IN("low"), HARD10, USED10),
                             Q("pods", "", "'pods':'10'", "'pods':'1'")}},
          (want){.message = "insufficient quota to consume: requests.cpu"});
    check("covered by scope",
          (tcase){.op = QUOTA_CREATE,
                  .obj = POD2("p", PC_HIGH),
                  .limited = LIM_REQCPU,
                  .quotas = {Q("low", PC_IN("low"), HARD10, USED10),
                             Q("high", PC_IN("high"), HARD10, USED10)}},
          (want){.allowed = true, .used = {NULL, NEW10}});
}

/* An UPDATE moving a pod into Terminating: the quota that held it already and
 * still does is charged the difference (none), the Terminating one all of it. */
static void test_update_scoped(void **state)
{
    char *old = strdup("{'metadata':{'name':'p','resourceVersion':'3'},'spec':{"
                       "'priorityClassName':'high','containers':[{'resources':{'requests':{"
                       "'cpu':'1'}}}]}}");
    char *new = strdup("{'metadata':{'name':'p','resourceVersion':'3'},'spec':{"
                       "'priorityClassName':'high','activeDeadlineSeconds':5,'containers':[{"
                       "'resources':{'requests':{'cpu':'2'}}}]}}");
    check("update scoped",
          (tcase){
              .op = QUOTA_UPDATE,
              .obj = new,
              .old = old,
              .quotas = {Q("high", PC_IN("high"), "'cpu':'10','pods':'10'", "'cpu':'1','pods':'1'"),
                         Q("notterm", "'scopes':['NotTerminating']", "'cpu':'10','pods':'10'",
                           "'cpu':'1','pods':'1'"),
                         Q("term", "'scopes':['Terminating']", "'cpu':'10','pods':'10'",
                           "'cpu':'0','pods':'0'")}},
          (want){.allowed = true,
                 .used = {"{'cpu':'2','pods':'1'}", NULL, "{'cpu':'2','pods':'1'}"}});
}

/* Deferred namespace: an unassigned pod charges no compute, only its count. */
static void test_deferred(void **state)
{
    check("deferred",
          (tcase){.op = QUOTA_CREATE,
                  .deferred = true,
                  .obj = POD2("p", ""),
                  .quotas = {Q("plain", "", HARD10, USED10),
                             Q("notbe", "'scopes':['NotBestEffort']", HARD10, USED10)}},
          (want){.allowed = true,
                 .used = {"{'limits.cpu':'1','limits.memory':'1Gi','pods':'2','requests.cpu':'1',"
                          "'requests.memory':'1Gi'}",
                          "{'limits.cpu':'1','limits.memory':'1Gi','pods':'2','requests.cpu':'1',"
                          "'requests.memory':'1Gi'}"}});
}

/* Kinds other than pods, services and PVCs (their owned names are worked out
 * per request), and a PVC in a VolumeAttributesClass scope. */
static void test_other_kinds(void **state)
{
    check("apps count",
          (tcase){.group = "apps",
                  .resource = "deployments",
                  .op = QUOTA_CREATE,
                  .obj = strdup("{'metadata':{'name':'d'}}"),
                  .quotas = {Q("q", "", "'count/deployments.apps':'2','pods':'3'",
                               "'count/deployments.apps':'2','pods':'0'")}},
          (want){.message = "exceeded quota: q, requested: count/deployments.apps=1, used: "
                            "count/deployments.apps=2, limited: count/deployments.apps=2"});
    char *claim = strdup("{'metadata':{'name':'c'},'spec':{'volumeAttributesClassName':'gold',"
                         "'resources':{'requests':{'storage':'1Gi'}}}}");
    const char *vac = "'scopeSelector':{'matchExpressions':[{'scopeName':'VolumeAttributesClass',"
                      "'operator':'In','values':['gold']}]}";
    check("vac",
          (tcase){.resource = "persistentvolumeclaims",
                  .op = QUOTA_CREATE,
                  .obj = claim,
                  .quotas = {Q("gold", vac, PVC_HARD, PVC_USED), Q("all", "", PVC_HARD, PVC_USED),
                             Q("pods", "'scopes':['BestEffort']", "'pods':'1'", "'pods':'0'")}},
          (want){.allowed = true,
                 .used = {"{'persistentvolumeclaims':'2','requests.storage':'11Gi'}",
                          "{'persistentvolumeclaims':'2','requests.storage':'11Gi'}", NULL}});
}

/* A pod's resize from limits.cpu 500m to 1e400: the exact difference needs
 * more digits than a qty holds. A quota that does not charge limits.cpu is
 * not concerned (allowed, nothing changes; the same pod is allowed on
 * create); one that does refuses it as the create path refuses a usage it
 * cannot hold (403). It was "out of memory", a 500. */
static char *resized(const char *rv, const char *limit)
{
    char *s;
    if (asprintf(&s,
                 "{'metadata':{'name':'p','namespace':'test'%s%s%s},'spec':{'containers':[{"
                 "'name':'c','image':'x','resources':{'requests':{'cpu':'250m','memory':'1Gi'},"
                 "'limits':{'cpu':'%s','memory':'1Gi'}}}]}}",
                 *rv ? ",'resourceVersion':'" : "", rv, *rv ? "'" : "", limit) < 0)
        abort();
    return s;
}

static void test_update_beyond_precision(void **state)
{
    check("resize, quota without limits.cpu",
          (tcase){
              .sub = "resize",
              .op = QUOTA_UPDATE,
              .obj = resized("", "1e400"),
              .old = resized("7", "500m"),
              .quotas = {Q("cpu", "", "'cpu':'1','memory':'2Gi'", "'cpu':'250m','memory':'1Gi'")}},
          (want){.allowed = true});
    check("resize, quota with limits.cpu",
          (tcase){.sub = "resize",
                  .op = QUOTA_UPDATE,
                  .obj = resized("", "1e400"),
                  .old = resized("7", "500m"),
                  .quotas = {Q("cpu", "", "'cpu':'1'", "'cpu':'250m'"),
                             Q("lim", "", "'limits.cpu':'2'", "'limits.cpu':'500m'")}},
          (want){.message = "quota lim: the usage of limits.cpu would need more significant "
                            "digits than are supported"});
    /* The sum with what is used already, on create. */
    check("create",
          (tcase){.op = QUOTA_CREATE,
                  .obj = resized("", "1e70"),
                  .quotas = {Q("lim", "", "'limits.cpu':'2'", "'limits.cpu':'1m'")}},
          (want){.message = "quota lim: the usage of limits.cpu would need more significant "
                            "digits than are supported"});
}

/* The moves of usage CheckRequest does not check (status writes, terminal
 * phases, deletes, namespace mode flips): a key that rises must stay within
 * hard, a decrease always goes through. */
static rlist *RL(const char *s)
{
    json_t *j = J(s);
    rlist *l = rl_new();
    if (!l || rl_from_json(j, l, NULL) != 0) fail_msg("bad list %s", s);
    json_decref(j);
    return l;
}

static void expect_move(const char *id, const char *hard, const char *used, const char *before,
                        const char *after, int want_rc, const char *want)
{
    char *qs = Q("q", "", hard, used), *us = NULL;
    json_t *quota = J(qs);
    char err[256];
    quota_prepared *p = quota_prepare(quota, err, sizeof err);
    assert_non_null(p);
    if (asprintf(&us, "{%s}", used) < 0) abort();
    rlist *u = RL(us), *b = RL(before), *a = RL(after), *next = NULL;
    char *msg = NULL;
    int rc = quota_check_move(p, u, b, a, &next, &msg);
    if (rc != want_rc) fail_msg("%s: rc %d want %d (%s)", id, rc, want_rc, msg ? msg : "");
    if (rc == 1 && strcmp(msg, want) != 0) fail_msg("%s:\n got: %s\nwant: %s", id, msg, want);
    if (rc == 0) {
        json_t *got = next ? rl_to_json(next) : NULL;
        char *g = got ? used_str(got) : NULL;
        if (!same_str(g, want)) fail_msg("%s: next %s want %s", id, g ? g : "NULL", want);
        free(g);
        json_decref(got);
        /* quota_check_usage decides the same on the result */
        char *m2 = NULL;
        if (next) assert_int_equal(quota_check_usage(p, u, next, &m2), 0);
        free(m2);
    }
    free(msg);
    rl_free(next);
    rl_free(u);
    rl_free(b);
    rl_free(a);
    quota_prepared_free(p);
    json_decref(quota);
    free(qs);
    free(us);
}

static void test_check_move(void **state)
{
    /* A terminal pod made Running again: pods 1 back while 2 of 2 are used. */
    expect_move("rise over hard", "'pods':'2'", "'pods':'2'", "{}", "{'pods':'1'}", 1,
                "exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2");
    expect_move("rise to hard", "'pods':'2','cpu':'1'", "'pods':'1','cpu':'0'", "{}",
                "{'pods':'1','cpu':'1'}", 0, "{'cpu':'1','pods':'2'}");
    expect_move("allocated above spec", "'requests.cpu':'2'", "'requests.cpu':'100m'",
                "{'requests.cpu':'100m'}", "{'requests.cpu':'100'}", 1,
                "exceeded quota: q, requested: requests.cpu=99900m, used: requests.cpu=100m, "
                "limited: requests.cpu=2");
    /* A quota above its hard (hard lowered): a decrease goes through, a key
     * that does not rise is not compared, one that rises is. */
    expect_move("decrease above hard", "'pods':'1','cpu':'1'", "'pods':'3','cpu':'0'",
                "{'pods':'1'}", "{}", 0, "{'cpu':'0','pods':'2'}");
    expect_move("unrelated key above hard", "'pods':'1','cpu':'1'", "'pods':'3','cpu':'0'",
                "{'pods':'1'}", "{'pods':'1','cpu':'1'}", 0, "{'cpu':'1','pods':'3'}");
    expect_move("rise while above hard", "'pods':'1','cpu':'1'", "'pods':'3','cpu':'0'",
                "{'pods':'1'}", "{'pods':'2'}", 1,
                "exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=1");
    /* Beyond a qty's digits: a rise is refused, a fall left to the resync. */
    expect_move("rise beyond precision", "'limits.cpu':'2'", "'limits.cpu':'500m'",
                "{'limits.cpu':'500m'}", "{'limits.cpu':'1e400'}", 1,
                "quota q: the usage of limits.cpu would need more significant digits than are "
                "supported");
    expect_move("fall beyond precision", "'limits.cpu':'2e80'", "'limits.cpu':'1e70'",
                "{'limits.cpu':'1m'}", "{}", 0, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a1_a2_admit),
        cmocka_unit_test(test_a3_a4_a5_exceeded),
        cmocka_unit_test(test_a6_a7_not_handled),
        cmocka_unit_test(test_a8_a9_service_update),
        cmocka_unit_test(test_a10_a11_pvc_update),
        cmocka_unit_test(test_a12_must_specify),
        cmocka_unit_test(test_a13_other_namespace),
        cmocka_unit_test(test_a14_a15_a16_scopes),
        cmocka_unit_test(test_a17_no_namespace_on_object),
        cmocka_unit_test(test_a18_a19_pvc_create),
        cmocka_unit_test(test_a20_unrelated_exceeded),
        cmocka_unit_test(test_a21_to_a25_limited_resources),
        cmocka_unit_test(test_a26_to_a32_limited_scopes),
        cmocka_unit_test(test_status_unknown),
        cmocka_unit_test(test_empty_status_is_ignored),
        cmocka_unit_test(test_update_without_old),
        cmocka_unit_test(test_pod_scope_move),
        cmocka_unit_test(test_pvc_status_skips_limit),
        cmocka_unit_test(test_scope_error),
        cmocka_unit_test(test_count_and_fast_paths),
        cmocka_unit_test(test_batch_apply),
        cmocka_unit_test(test_ten_quotas),
        cmocka_unit_test(test_must_specify_containers),
        cmocka_unit_test(test_scoped_denials),
        cmocka_unit_test(test_update_scoped),
        cmocka_unit_test(test_deferred),
        cmocka_unit_test(test_other_kinds),
        cmocka_unit_test(test_update_beyond_precision),
        cmocka_unit_test(test_check_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
