/* test_quota_eval.c - resource lists (core/rlist.c) and the quota evaluators
 * (core/quota_eval.c): every pod-usage vector of spec §8.2, the sidecar vectors
 * of §2.2, QoS (§2.3), scopes (§2.4), constraints (§2.5), Handles (§2.6), the
 * recount (§2.7, §5), services (§3.1), PVCs (§3.2) and object counts (§3.3).
 *
 * Objects are written as JSON with single quotes (J() swaps them). Expected
 * usage is "name=value,..." in any order; it is compared numerically AND as
 * canonical text, so the quantity format (Mi vs plain bytes) is checked too.
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

#include "core/quota_eval.h"
#include "core/rlist.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define NOW 1700000000

static char *fmt(const rlist *l)
{
    dbuf b;
    dbuf_init(&b, 1 << 16);
    assert_int_equal(rl_format(l, &b), 0);
    dbuf_adds(&b, "");
    return b.p ? dbuf_take(&b, NULL) : strdup("");
}

static void expect_list(const char *what, const rlist *got, const char *want)
{
    rlist *w = L(want);
    char *gs = fmt(got), *ws = fmt(w);
    if (!rl_equal(got, w) || strcmp(gs, ws) != 0) fail_msg("%s: got %s, want %s", what, gs, ws);
    free(gs);
    free(ws);
    rl_free(w);
}

static void expect_usage_at(const char *group, const char *res, const char *obj, int64_t now,
                            const char *want)
{
    json_t *o = J(obj);
    rlist *u = rl_new();
    int rc = quota_usage(group, res, o, now, u);
    if (rc) fail_msg("usage of %s: %d", obj, rc);
    expect_list(obj, u, want);
    rl_free(u);
    json_decref(o);
}

static void expect_pod(const char *pod, const char *want)
{
    expect_usage_at("", "pods", pod, NOW, want);
}

/* ---- rlist ----------------------------------------------------------------------------------- */

static void test_rlist_ops(void **state)
{
    rlist *a = L("cpu=1,memory=1Gi,pods=3"), *b = L("cpu=100m,memory=2Gi,services=1");
    rlist *r = rl_add(a, b);
    expect_list("add", r, "cpu=1100m,memory=3Gi,pods=3,services=1");
    rl_free(r);
    r = rl_subtract(a, b);
    expect_list("subtract", r, "cpu=900m,memory=-1Gi,pods=3,services=-1");
    rl_free(r);
    r = rl_subtract_nonneg(a, b);
    expect_list("nonneg", r, "cpu=900m,memory=0,pods=3,services=0");
    rl_free(r);
    r = rl_mask(a, b);
    expect_list("mask", r, "cpu=1,memory=1Gi");
    rl_free(r);
    r = rl_less_than_or_equal(b, a);
    expect_list("le", r, "memory=2Gi");
    rl_free(r);
    rlist *neg = L("a=-1,b=0,c=1"), *n = rl_is_negative(neg);
    expect_list("negative", n, "a=-1");
    rl_free(n);
    n = rl_remove_zeros(neg);
    expect_list("remove zeros", n, "a=-1,c=1");
    rl_free(n);
    assert_false(rl_is_zero(neg));
    rlist *z = L("a=0,b=0Gi");
    assert_true(rl_is_zero(z));
    assert_true(rl_equal(a, a));
    assert_false(rl_equal(a, b));
    rlist *sub = L("cpu=0,pods=0"), *other = L("cpu=0,services=0");
    assert_true(rl_has_names(a, sub));
    assert_false(rl_has_names(a, other));
    assert_false(rl_has_names(sub, a));
    assert_true(rl_has_names(a, NULL));
    assert_false(rl_has_names(NULL, sub));
    rl_free(sub);
    rl_free(other);
    rl_free(z);
    rl_free(neg);
    rl_free(a);
    rl_free(b);
}

/* rl_add_masked against the upstream composition it replaces:
 * Add(a, Mask(b, mask)), Equals, and "some key of Mask(b, mask) is above mask". */
static void expect_add_masked(const rlist *a, const rlist *b, const rlist *mask)
{
    bool changed, exceeds;
    rlist *got = rl_add_masked(a, b, mask, &changed, &exceeds);
    rlist *req = rl_mask(b, mask), *want = rl_add(a, req);
    assert_non_null(got);
    assert_non_null(want);
    char *gs = fmt(got), *ws = fmt(want);
    if (strcmp(gs, ws) != 0) fail_msg("add_masked: got %s, want %s", gs, ws);
    assert_int_equal(changed, !rl_equal(want, a));
    bool over = false;
    for (size_t i = 0; i < rl_len(req); i++)
        over |= qty_cmp(rl_get(want, rl_name(req, i)), rl_get(mask, rl_name(req, i))) > 0;
    assert_int_equal(exceeds, over);
    free(gs);
    free(ws);
    rl_free(req);
    rl_free(want);
    rl_free(got);
}

static void test_rlist_add_masked(void **state)
{
    rlist *used = L("cpu=1,memory=1Gi,pods=3"), *hard = L("cpu=2,pods=3,services=5");
    rlist *delta = L("count/pods=1,cpu=500m,memory=64Mi,pods=1");
    bool changed, exceeds;
    rlist *r = rl_add_masked(used, delta, hard, &changed, &exceeds);
    expect_list("charge", r, "cpu=1500m,memory=1Gi,pods=4");
    assert_true(changed);
    assert_true(exceeds); /* pods 4 > 3; memory is not in hard, so not charged */
    rl_free(r);
    rlist *zero = L("cpu=0,services=0");
    r = rl_add_masked(used, zero, hard, &changed, &exceeds);
    expect_list("zero delta adds the missing key", r, "cpu=1,memory=1Gi,pods=3,services=0");
    assert_true(changed); /* a new key: Equals is false */
    assert_false(exceeds);
    rl_free(r);
    rlist *cpu0 = L("cpu=0");
    r = rl_add_masked(used, cpu0, hard, &changed, &exceeds);
    assert_false(changed);
    rl_free(r);
    r = rl_add_masked(NULL, NULL, NULL, &changed, &exceeds);
    assert_int_equal(rl_len(r), 0);
    assert_false(changed);
    rl_free(r);
    rl_free(cpu0);
    rl_free(zero);

    /* Names longer than the inline buffer, on every path (copy, set, del, merge). */
    const char *lng = "requests.example.com/a-very-long-extended-resource-name";
    rlist *l = L("cpu=1");
    qty one;
    assert_int_equal(qty_parse("1", &one), 0);
    assert_int_equal(rl_set(l, lng, &one), 0);
    rlist *c = rl_copy(l);
    rl_del(l, "cpu");
    assert_string_equal(rl_name(l, 0), lng);
    assert_string_equal(rl_name(c, 1), lng);
    rlist *lhard = L("cpu=10");
    assert_int_equal(rl_set(lhard, lng, &one), 0);
    expect_add_masked(c, c, lhard);
    rl_free(lhard);
    rl_free(c);
    rl_free(l);

    /* Random lists over a small name pool, against the composition. */
    static const char *const pool[] = {"cpu",
                                       "limits.cpu",
                                       "limits.memory",
                                       "memory",
                                       "pods",
                                       "requests.cpu",
                                       "requests.memory",
                                       "services",
                                       "requests.nvidia.com/gpu-with-a-long-name-xyz"};
    static const char *const vals[] = {"0", "1", "100m", "2", "3", "1Gi", "512Mi", "1500m"};
    unsigned seed = 12345;
    for (int round = 0; round < 3000; round++) {
        rlist *x[3];
        for (int w = 0; w < 3; w++) {
            x[w] = rl_new();
            for (size_t p = 0; p < N(pool); p++) {
                seed = seed * 1103515245u + 12345u;
                if ((seed >> 16) % 3 == 0) continue;
                qty q;
                assert_int_equal(qty_parse(vals[(seed >> 8) % N(vals)], &q), 0);
                assert_int_equal(rl_set(x[w], pool[p], &q), 0);
            }
        }
        expect_add_masked(x[0], x[1], x[2]);
        for (int w = 0; w < 3; w++)
            rl_free(x[w]);
    }
    rl_free(used);
    rl_free(hard);
    rl_free(delta);
}

static void test_rlist_json(void **state)
{
    json_t *in = J("{'memory':'1024Mi','cpu':'0.5','pods':10}");
    rlist *l = rl_new();
    assert_int_equal(rl_from_json(in, l, NULL), 0);
    json_t *out = rl_to_json(l);
    char *s = json_dumps(out, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "{\"cpu\":\"500m\",\"memory\":\"1Gi\",\"pods\":\"10\"}");
    assert_string_equal(rl_name(l, 0), "cpu"); /* sorted */
    const char *bad = NULL;
    json_t *badj = J("{'cpu':'1x'}");
    assert_true(rl_from_json(badj, l, &bad) < 0);
    assert_string_equal(bad, "cpu");
    dbuf b;
    dbuf_init(&b, 1024);
    assert_int_equal(rl_format_names(l, ",", &b), 0);
    assert_string_equal(b.p, "cpu,memory,pods");
    dbuf_free(&b);
    free(s);
    json_decref(badj);
    json_decref(out);
    json_decref(in);
    rl_free(l);
}

/* ---- §8.2 pod usage -------------------------------------------------------------------------- */

#define RES(req, lim) "'resources':{'requests':{" req "},'limits':{" lim "}}"

static const struct {
    const char *id, *pod, *want;
} pod_vectors[] = {
    {"P1", "{'spec':{'initContainers':[{" RES("'cpu':'1m'", "'cpu':'2m'") "}]}}",
     "pods=1,count/pods=1,requests.cpu=1m,limits.cpu=2m,cpu=1m"},
    {"P2", "{'spec':{'initContainers':[{" RES("'memory':'1m'", "'memory':'2m'") "}]}}",
     "pods=1,count/pods=1,requests.memory=1m,limits.memory=2m,memory=1m"},
    {"P3",
     "{'spec':{'initContainers':[{" RES("'ephemeral-storage':'32Mi'",
                                        "'ephemeral-storage':'64Mi'") "}]}}",
     "pods=1,count/pods=1,ephemeral-storage=32Mi,requests.ephemeral-storage=32Mi,"
     "limits.ephemeral-storage=64Mi"},
    {"P4", "{'spec':{'initContainers':[{" RES("'hugepages-2Mi':'100Mi'", "") "}]}}",
     "pods=1,count/pods=1,hugepages-2Mi=100Mi,requests.hugepages-2Mi=100Mi"},
    {"P5",
     "{'spec':{'initContainers':[{" RES("'example.com/dongle':'3'",
                                        "'example.com/dongle':'3'") "}]}}",
     "pods=1,count/pods=1,requests.example.com/dongle=3"},
    {"P6", "{'spec':{'containers':[{" RES("'cpu':'1m'", "'cpu':'2m'") "}]}}",
     "pods=1,count/pods=1,requests.cpu=1m,limits.cpu=2m,cpu=1m"},
    {"P7", "{'spec':{'containers':[{" RES("'memory':'1m'", "'memory':'2m'") "}]}}",
     "pods=1,count/pods=1,requests.memory=1m,limits.memory=2m,memory=1m"},
    {"P8",
     "{'spec':{'containers':[{" RES("'ephemeral-storage':'32Mi'",
                                    "'ephemeral-storage':'64Mi'") "}]}}",
     "pods=1,count/pods=1,ephemeral-storage=32Mi,requests.ephemeral-storage=32Mi,"
     "limits.ephemeral-storage=64Mi"},
    {"P9", "{'spec':{'containers':[{" RES("'hugepages-2Mi':'100Mi'", "") "}]}}",
     "pods=1,count/pods=1,hugepages-2Mi=100Mi,requests.hugepages-2Mi=100Mi"},
    {"P10",
     "{'spec':{'containers':[{" RES("'example.com/dongle':'3'", "'example.com/dongle':'3'") "}]}}",
     "pods=1,count/pods=1,requests.example.com/dongle=3"},
    {"P11",
     "{'spec':{'containers':[{" RES("'example.com/dongle':'3'",
                                    "'example.com/dongle':'3'") "}]},"
                                                                "'status':{'phase':'Succeeded'}}",
     "count/pods=1"},
    {"P12",
     "{'spec':{'initContainers':["
     "{" RES(
         "'cpu':'4','memory':'100M','example.com/dongle':'4'",
         "'cpu':'8','memory':'200M','example.com/dongle':'4'") "},"
                                                               "{" RES(
                                                                   "'cpu':'1','memory':'"
                                                                   "50M','example.com/"
                                                                   "dongle':'2'",
                                                                   "'cpu':'2','memory':'"
                                                                   "100M','example.com/"
                                                                   "dongle':'2'") "}],"
                                                                                  "'contain"
                                                                                  "ers':["
                                                                                  "{" RES(
                                                                                      "'cpu"
                                                                                      "':'"
                                                                                      "1','"
                                                                                      "memo"
                                                                                      "ry':"
                                                                                      "'50M"
                                                                                      "','"
                                                                                      "exam"
                                                                                      "ple."
                                                                                      "com/"
                                                                                      "dong"
                                                                                      "le':"
                                                                                      "'1'",
                                                                                      "'cpu"
                                                                                      "':'"
                                                                                      "2','"
                                                                                      "memo"
                                                                                      "ry':"
                                                                                      "'100"
                                                                                      "M','"
                                                                                      "exam"
                                                                                      "ple."
                                                                                      "com/"
                                                                                      "dong"
                                                                                      "le':"
                                                                                      "'1'") "},"
                                                                                             "{" RES(
                                                                                                 "'cpu':'2','memory':'25M','example.com/dongle':'2'",
                                                                                                 "'cpu':'5','memory':'50M','example.com/dongle':'2'") "}]}}",
     "pods=1,count/pods=1,requests.cpu=4,requests.memory=100M,limits.cpu=8,limits.memory=200M,"
     "cpu=4,memory=100M,requests.example.com/dongle=4"},
    /* P13/P14: NOW is 2023-11-14T22:13:20Z */
    {"P13",
     "{'metadata':{'deletionTimestamp':'2023-11-14T22:12:20Z','deletionGracePeriodSeconds':30},"
     "'spec':{'containers':[{" RES("'cpu':'1','memory':'50M'", "") "}]}}",
     "count/pods=1"},
    {"P14",
     "{'metadata':{'deletionTimestamp':'2023-11-14T22:13:20Z','deletionGracePeriodSeconds':30},"
     "'spec':{'containers':[{" RES("'cpu':'1'", "'cpu':'2'") "}]}}",
     "pods=1,count/pods=1,requests.cpu=1,limits.cpu=2,cpu=1"},
    {"P15", "{'spec':{'overhead':{'cpu':'1'},'containers':[{" RES("'cpu':'1'", "'cpu':'2'") "}]}}",
     "pods=1,count/pods=1,requests.cpu=2,limits.cpu=3,cpu=2"},
    {"P16", "{'spec':{'resources':{'requests':{'cpu':'1m'},'limits':{'cpu':'2m'}}}}",
     "pods=1,count/pods=1,requests.cpu=1m,limits.cpu=2m,cpu=1m"},
    {"P17", "{'spec':{'resources':{'requests':{'memory':'1Mi'},'limits':{'memory':'2Mi'}}}}",
     "pods=1,count/pods=1,requests.memory=1Mi,limits.memory=2Mi,memory=1Mi"},
    {"P18",
     "{'spec':{'resources':{'requests':{'memory':'1Mi'},'limits':{'memory':'2Mi'}},"
     "'containers':[{" RES("'ephemeral-storage':'32Mi'", "'ephemeral-storage':'64Mi'") "}]}}",
     "pods=1,count/pods=1,requests.memory=1Mi,limits.memory=2Mi,memory=1Mi,"
     "ephemeral-storage=32Mi,requests.ephemeral-storage=32Mi,limits.ephemeral-storage=64Mi"},
    {"P19",
     "{'spec':{'containers':[{'name':'c'," RES(
         "'memory':'200Mi'", "'memory':'400Mi'") "}]},"
                                                 "'status':{'containerStatuses':[{'name':'c','"
                                                 "resources':{'requests':{'memory':'150Mi'}}}]}}",
     "pods=1,count/pods=1,requests.memory=200Mi,limits.memory=400Mi,memory=200Mi"},
    {"P20",
     "{'spec':{'containers':[{'name':'c'," RES(
         "'cpu':'100m'", "'cpu':'200m'") "}]},"
                                         "'status':{'containerStatuses':[{'name':'c','resources':{'"
                                         "requests':{'cpu':'150m'}}}]}}",
     "pods=1,count/pods=1,requests.cpu=150m,limits.cpu=200m,cpu=150m"},
    {"P21",
     "{'spec':{'containers':[{'name':'c'," RES(
         "'cpu':'100m','memory':'200Mi'",
         "'cpu':'200m','memory':'400Mi'") "}]},"
                                          "'status':{'containerStatuses':[{'name':'c','resources':{"
                                          "'requests':"
                                          "{'cpu':'150m','memory':'250Mi'}}}]}}",
     "pods=1,count/pods=1,requests.cpu=150m,limits.cpu=200m,cpu=150m,"
     "requests.memory=250Mi,limits.memory=400Mi,memory=250Mi"},
    {"P22",
     "{'spec':{'containers':[{'name':'c'," RES(
         "'cpu':'100m'",
         "'cpu':'200m'") "}]},"
                         "'status':{'containerStatuses':[{'name':'c','resources':null}]}}",
     "pods=1,count/pods=1,requests.cpu=100m,limits.cpu=200m,cpu=100m"},
    /* beyond §8.2: allocatedResources wins when larger; Infeasible ignores spec */
    {"alloc",
     "{'spec':{'containers':[{'name':'c'," RES(
         "'cpu':'100m'", "") "}]},"
                             "'status':{'containerStatuses':[{'name':'c','resources':{},"
                             "'allocatedResources':{'cpu':'300m'}}]}}",
     "pods=1,count/pods=1,requests.cpu=300m,cpu=300m"},
    {"infeasible",
     "{'spec':{'containers':[{'name':'c'," RES(
         "'cpu':'2'",
         "") "}]},"
             "'status':{'conditions':[{'type':'PodResizePending','reason':'Infeasible'}],"
             "'containerStatuses':[{'name':'c','resources':{'requests':{'cpu':'1'}}}]}}",
     "pods=1,count/pods=1,requests.cpu=1,cpu=1"},
    {"failed", "{'spec':{'containers':[{" RES("'cpu':'1'", "") "}]},'status':{'phase':'Failed'}}",
     "count/pods=1"},
    {"limits-only-extended",
     "{'spec':{'containers':[{" RES("", "'example.com/dongle':'3','nvidia.com/gpu':'1'") "}]}}",
     "pods=1,count/pods=1"},
};

static void test_pod_usage_vectors(void **state)
{
    for (size_t i = 0; i < N(pod_vectors); i++)
        expect_pod(pod_vectors[i].pod, pod_vectors[i].want);
}

/* §2.2 sidecar vectors (component-helpers tests): requests.cpu of the pod. */
static const struct {
    const char *init, *want;
} sidecar_vectors[] = {
    {"{'restartPolicy':'Always'," RES("'cpu':'1'", "") "}", "2"},
    {"{" RES("'cpu':'5'", "") "},{'restartPolicy':'Always'," RES(
         "'cpu':'1'", "") "},"
                          "{'restartPolicy':'Always'," RES(
                              "'cpu':'2'", "") "},"
                                               "{'restartPolicy':'Always'," RES("'cpu':'3'",
                                                                                "") "}",
     "7"},
    {"{" RES("'cpu':'5'", "") "},{'restartPolicy':'Always'," RES(
         "'cpu':'1'", "") "},"
                          "{'restartPolicy':'Always'," RES("'cpu':'2'", "") "},{" RES(
                              "'cpu':'5'", "") "},"
                                               "{'restartPolicy':'Always'," RES("'cpu':'3'",
                                                                                "") "}",
     "8"},
};

static void test_sidecars(void **state)
{
    char buf[2048];
    for (size_t i = 0; i < N(sidecar_vectors); i++) {
        snprintf(buf, sizeof buf,
                 "{'spec':{'initContainers':[%s],'containers':[{" RES("'cpu':'1'", "") "}]}}",
                 sidecar_vectors[i].init);
        char want[64];
        snprintf(want, sizeof want, "cpu=%s", sidecar_vectors[i].want);
        json_t *pod = J(buf);
        rlist *r = rl_new();
        assert_int_equal(quota_pod_requests(pod, r), 0);
        expect_list(buf, r, want);
        rl_free(r);
        json_decref(pod);
    }
    /* sidecar 10, init 200, container 100 => 210 */
    json_t *pod = J("{'spec':{'initContainers':[{'restartPolicy':'Always'," RES(
        "'cpu':'10'", "") "},"
                          "{" RES("'cpu':'200'", "") "}],'containers':[{" RES("'cpu':'100'",
                                                                              "") "}]}}");
    rlist *r = rl_new();
    assert_int_equal(quota_pod_requests(pod, r), 0);
    expect_list("sidecar 210", r, "cpu=210");
    rl_free(r);
    json_decref(pod);
}

/* ---- QoS, scopes ----------------------------------------------------------------------------- */

static void test_qos(void **state)
{
    static const struct {
        const char *pod;
        quota_qos want;
    } v[] = {
        {"{'spec':{'containers':[{}]}}", QUOTA_QOS_BEST_EFFORT},
        {"{'spec':{'containers':[{" RES("'cpu':'0'", "'memory':'0'") "}]}}", QUOTA_QOS_BEST_EFFORT},
        {"{'spec':{'containers':[{" RES("'example.com/x':'1'", "") "}]}}", QUOTA_QOS_BEST_EFFORT},
        {"{'spec':{'containers':[{" RES("'cpu':'100m'", "") "}]}}", QUOTA_QOS_BURSTABLE},
        {"{'spec':{'containers':[{" RES("'cpu':'1','memory':'1Gi'",
                                        "'cpu':'1','memory':'1Gi'") "}]}}",
         QUOTA_QOS_GUARANTEED},
        {"{'spec':{'containers':[{" RES("'cpu':'1','memory':'1Gi'",
                                        "'cpu':'2','memory':'1Gi'") "}]}}",
         QUOTA_QOS_BURSTABLE},
        {"{'spec':{'containers':[{" RES("", "'cpu':'1'") "}]}}", QUOTA_QOS_BURSTABLE},
        {"{'spec':{'containers':[{" RES("'cpu':'1','memory':'1Gi'",
                                        "'cpu':'1','memory':'1Gi'") "},{}]}}",
         QUOTA_QOS_BURSTABLE},
        {"{'spec':{'containers':[{}]},'status':{'qosClass':'Guaranteed'}}", QUOTA_QOS_GUARANTEED},
        {"{'spec':{'resources':{'requests':{'cpu':'1','memory':'1Gi'},'limits':{'cpu':'1',"
         "'memory':'1Gi'}},'containers':[{}]}}",
         QUOTA_QOS_GUARANTEED},
    };
    for (size_t i = 0; i < N(v); i++) {
        json_t *p = J(v[i].pod);
        if (quota_pod_qos(p) != v[i].want) fail_msg("qos %s: got %d", v[i].pod, quota_pod_qos(p));
        json_decref(p);
    }
}

#define ALL_SCOPES                                                                                 \
    "[{'scopeName':'Terminating','operator':'Exists'},"                                            \
    "{'scopeName':'NotTerminating','operator':'Exists'},"                                          \
    "{'scopeName':'BestEffort','operator':'Exists'},"                                              \
    "{'scopeName':'NotBestEffort','operator':'Exists'},"                                           \
    "{'scopeName':'PriorityClass','operator':'In','values':['class1']},"                           \
    "{'scopeName':'CrossNamespacePodAffinity','operator':'Exists'}]"

static void expect_scopes(const char *pod, const char *sels, const char *want)
{
    json_t *p = J(pod), *s = J(sels), *out = json_array();
    char err[256];
    assert_int_equal(quota_matching_scopes("", "pods", p, s, out, err, sizeof err), 0);
    dbuf b;
    dbuf_init(&b, 4096);
    assert_int_equal(quota_format_scopes(out, &b), 0);
    if (strcmp(b.p, want) != 0) fail_msg("scopes of %s: got %s want %s", pod, b.p, want);
    dbuf_free(&b);
    json_decref(p);
    json_decref(s);
    json_decref(out);
}

/* TestPodEvaluatorMatchingScopes */
static void test_matching_scopes(void **state)
{
    expect_scopes("{'spec':{}}", ALL_SCOPES, "[{NotTerminating Exists []} {BestEffort Exists []}]");
    expect_scopes(
        "{'spec':{'priorityClassName':'class1'}}", ALL_SCOPES,
        "[{NotTerminating Exists []} {BestEffort Exists []} {PriorityClass In [class1]}]");
    expect_scopes("{'spec':{'containers':[{" RES("'cpu':'1','memory':'1Gi'", "") "}]}}", ALL_SCOPES,
                  "[{NotTerminating Exists []} {NotBestEffort Exists []}]");
    expect_scopes("{'spec':{'activeDeadlineSeconds':30}}", ALL_SCOPES,
                  "[{Terminating Exists []} {BestEffort Exists []}]");
    expect_scopes("{'spec':{'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuring"
                  "Execution':[{'namespaces':['ns1'],'topologyKey':'k'}]}}}}",
                  ALL_SCOPES,
                  "[{NotTerminating Exists []} {BestEffort Exists []} "
                  "{CrossNamespacePodAffinity Exists []}]");
    expect_scopes("{'spec':{'affinity':{'podAntiAffinity':{'preferredDuringSchedulingIgnored"
                  "DuringExecution':[{'weight':1,'podAffinityTerm':{'namespaceSelector':{}}}]}}}}",
                  ALL_SCOPES,
                  "[{NotTerminating Exists []} {BestEffort Exists []} "
                  "{CrossNamespacePodAffinity Exists []}]");
}

static void test_priority_class_operators(void **state)
{
    const char *hi = "{'spec':{'priorityClassName':'high'}}", *none = "{'spec':{}}";
    expect_scopes(hi, "[{'scopeName':'PriorityClass','operator':'NotIn','values':['low']}]",
                  "[{PriorityClass NotIn [low]}]");
    expect_scopes(none, "[{'scopeName':'PriorityClass','operator':'NotIn','values':['low']}]",
                  "[{PriorityClass NotIn [low]}]");
    expect_scopes(hi, "[{'scopeName':'PriorityClass','operator':'DoesNotExist'}]", "[]");
    expect_scopes(none, "[{'scopeName':'PriorityClass','operator':'DoesNotExist'}]",
                  "[{PriorityClass DoesNotExist []}]");
    expect_scopes(none, "[{'scopeName':'PriorityClass','operator':'Exists'}]", "[]");
    expect_scopes(hi, "[{'scopeName':'PriorityClass','operator':'In','values':['a','high']}]",
                  "[{PriorityClass In [a high]}]");
    /* an invalid requirement is an error, not a silent mismatch */
    json_t *p = J(hi), *s = J("[{'scopeName':'PriorityClass','operator':'Bad','values':['x']}]");
    json_t *out = json_array();
    char err[512];
    assert_int_equal(quota_matching_scopes("", "pods", p, s, out, err, sizeof err), -1);
    assert_string_equal(err, "error on matching scope {PriorityClass Bad [x]}: failed to parse and "
                             "convert selector: \"Bad\" is not a valid scope selector operator");
    json_decref(p);
    json_decref(s);
    json_decref(out);
}

static int matches_spec(const char *spec, const char *res, const char *obj)
{
    json_t *s = J(spec), *o = J(obj);
    char err[256];
    int m = quota_matches_scopes(s, "", res, o, err, sizeof err);
    json_decref(s);
    json_decref(o);
    return m;
}

static void test_quota_scopes(void **state)
{
    assert_int_equal(matches_spec("{}", "pods", "{}"), 1);
    assert_int_equal(matches_spec("{'scopes':['Terminating']}", "pods", "{}"), 0);
    assert_int_equal(matches_spec("{'scopes':['NotTerminating','BestEffort']}", "pods", "{}"), 1);
    assert_int_equal(
        matches_spec("{'scopes':['BestEffort'],'scopeSelector':{'matchExpressions':"
                     "[{'scopeName':'PriorityClass','operator':'In','values':['x']}]}}",
                     "pods", "{'spec':{'priorityClassName':'x'}}"),
        1);
    /* services and object counts match no scope */
    assert_int_equal(matches_spec("{'scopes':['NotTerminating']}", "services", "{}"), 0);
    assert_int_equal(matches_spec("{}", "services", "{}"), 1);
    /* PVC VolumeAttributesClass */
    const char *vac = "{'scopeSelector':{'matchExpressions':[{'scopeName':'VolumeAttributesClass',"
                      "'operator':'In','values':['gold']}]}}";
    assert_int_equal(
        matches_spec(vac, "persistentvolumeclaims",
                     "{'spec':{'volumeAttributesClassName':'silver'},'status':{"
                     "'modifyVolumeStatus':{'targetVolumeAttributesClassName':'gold'}}}"),
        1);
    assert_int_equal(matches_spec(vac, "persistentvolumeclaims", "{'spec':{}}"), 0);
    assert_int_equal(
        matches_spec("{'scopeSelector':{'matchExpressions':[{'scopeName':"
                     "'VolumeAttributesClass','operator':'NotIn','values':['gold']}]}}",
                     "persistentvolumeclaims", "{'spec':{}}"),
        1);
    assert_int_equal(matches_spec("{'scopeSelector':{'matchExpressions':[{'scopeName':"
                                  "'VolumeAttributesClass','operator':'Exists'}]}}",
                                  "persistentvolumeclaims",
                                  "{'status':{'currentVolumeAttributesClassName':'a'}}"),
                     1);
    assert_int_equal(matches_spec("{'scopes':['VolumeAttributesClass']}", "pods", "{}"), 0);
}

/* ---- constraints, handles -------------------------------------------------------------------- */

static void expect_constraints(const char *pod, const char *required, const char *want)
{
    json_t *p = J(pod);
    rlist *req = L(required);
    char err[512] = "";
    int rc = quota_constraints("", "pods", req, p, err, sizeof err);
    if (!want) {
        if (rc != 0) fail_msg("constraints %s: unexpected %s", pod, err);
    } else if (rc != 1 || strcmp(err, want) != 0) {
        fail_msg("constraints %s: got %d '%s' want '%s'", pod, rc, err, want);
    }
    rl_free(req);
    json_decref(p);
}

/* TestPodConstraintsFunc */
static void test_constraints(void **state)
{
    expect_constraints(
        "{'spec':{'initContainers':[{'name':'dummy'," RES("'cpu':'1m'", "'cpu':'2m'") "}]}}",
        "memory=0", "must specify memory for: dummy");
    expect_constraints("{'spec':{'initContainers':[{'name':'foo'," RES(
                           "'cpu':'1m'", "") "},"
                                             "{'name':'bar'," RES("'cpu':'1m'", "") "}]}}",
                       "memory=0", "must specify memory for: bar,foo");
    expect_constraints("{'spec':{'containers':[{'name':'foo'},{'name':'bar'}]}}", "memory=0,cpu=0",
                       "must specify cpu for: bar,foo; memory for: bar,foo");
    expect_constraints(
        "{'spec':{'resources':{'requests':{'cpu':'1'}},'containers':[{'name':'foo'}]}}", "cpu=0",
        NULL);
    expect_constraints(
        "{'spec':{'containers':[{'name':'foo'," RES("'cpu':'1','memory':'1Gi'", "") "}]}}",
        "cpu=0,memory=0", NULL);
    /* A12: limits.memory with an unnamed container */
    expect_constraints(
        "{'spec':{'containers':[{" RES("'cpu':'100m','memory':'2Gi'", "'cpu':'200m'") "}]}}",
        "cpu=0,memory=0,limits.memory=0,pods=0", "must specify limits.memory for: ");
    /* names outside the legacy set are never required */
    expect_constraints("{'spec':{'containers':[{'name':'a'}]}}", "pods=0,ephemeral-storage=0",
                       NULL);
}

/* TestPodEvaluatorHandles */
static void test_handles(void **state)
{
    json_t *p1 = J("{'spec':{'activeDeadlineSeconds':1}}"),
           *p2 = J("{'spec':{'activeDeadlineSeconds':2}}");
    json_t *pn = J("{'spec':{}}");
    assert_true(quota_handles("", "pods", QUOTA_CREATE, "", pn, NULL));
    assert_true(quota_handles("", "pods", QUOTA_UPDATE, "", pn, p1));
    assert_true(quota_handles("", "pods", QUOTA_UPDATE, "", p1, pn));
    assert_false(quota_handles("", "pods", QUOTA_UPDATE, "", p2, p1));
    assert_false(quota_handles("", "pods", QUOTA_UPDATE, "", pn, pn));
    assert_false(quota_handles("", "pods", QUOTA_DELETE, "", pn, NULL));
    assert_false(quota_handles("", "pods", QUOTA_CONNECT, "", pn, NULL));
    assert_false(quota_handles("", "pods", QUOTA_CREATE, "subresource", pn, NULL));
    assert_false(quota_handles("", "pods", QUOTA_UPDATE, "subresource", pn, pn));
    assert_true(quota_handles("", "pods", QUOTA_UPDATE, "resize", pn, pn));
    assert_true(quota_handles("", "services", QUOTA_UPDATE, "", pn, pn));
    assert_true(quota_handles("", "persistentvolumeclaims", QUOTA_UPDATE, "", pn, pn));
    assert_false(quota_handles("", "persistentvolumeclaims", QUOTA_UPDATE, "status", pn, pn));
    json_t *alloc = J("{'status':{'allocatedResources':{'storage':'2Gi'}}}");
    assert_true(quota_handles("", "persistentvolumeclaims", QUOTA_UPDATE, "status", alloc, pn));
    assert_true(quota_handles("apps", "deployments", QUOTA_CREATE, "", pn, NULL));
    assert_false(quota_handles("apps", "deployments", QUOTA_UPDATE, "", pn, pn));
    assert_false(quota_handles("", "configmaps", QUOTA_CREATE, "status", pn, NULL));
    assert_true(quota_ignored_resource("", "events"));
    assert_true(quota_ignored_resource("events.k8s.io", "events"));
    assert_true(quota_ignored_resource("authorization.k8s.io", "selfsubjectrulesreviews"));
    assert_false(quota_ignored_resource("", "pods"));
    json_decref(alloc);
    json_decref(p1);
    json_decref(p2);
    json_decref(pn);
}

/* ---- matching resources ---------------------------------------------------------------------- */

static void expect_matching(const char *group, const char *res, const char *names, const char *want)
{
    rlist *in = L(names), *out = rl_new();
    assert_int_equal(quota_matching_resources(group, res, in, out), 0);
    expect_list(res, out, want);
    rl_free(in);
    rl_free(out);
}

static void test_matching_resources(void **state)
{
    const char *all =
        "pods=0,cpu=0,memory=0,services=0,requests.nvidia.com/gpu=0,nvidia.com/gpu=0,"
        "limits.nvidia.com/gpu=0,hugepages-2Mi=0,requests.hugepages-1Gi=0,"
        "count/pods=0,count/deployments.apps=0,limits.ephemeral-storage=0,"
        "requests.storage=0,persistentvolumeclaims=0,"
        "gold.storageclass.storage.k8s.io/requests.storage=0,configmaps=0,"
        "count/configmaps=0,services.nodeports=0,count/services=0,"
        "requests.deviceclass.resource.kubernetes.io/gpu=0,requests.kubernetes.io/x=0";
    expect_matching("", "pods", all,
                    "pods=0,cpu=0,memory=0,requests.nvidia.com/gpu=0,hugepages-2Mi=0,"
                    "requests.hugepages-1Gi=0,count/pods=0,limits.ephemeral-storage=0,"
                    "requests.deviceclass.resource.kubernetes.io/gpu=0");
    expect_matching("", "services", all, "services=0,services.nodeports=0,count/services=0");
    expect_matching("", "persistentvolumeclaims", all,
                    "requests.storage=0,persistentvolumeclaims=0,"
                    "gold.storageclass.storage.k8s.io/requests.storage=0");
    expect_matching("", "configmaps", all, "configmaps=0,count/configmaps=0");
    expect_matching("apps", "deployments", all, "count/deployments.apps=0");
}

/* ---- services, PVCs, object counts ----------------------------------------------------------- */

static void test_service_usage(void **state)
{
    expect_usage_at("", "services", "{'spec':{'type':'ClusterIP','ports':[{},{}]}}", NOW,
                    "count/services=1,services=1,services.loadbalancers=0,services.nodeports=0");
    expect_usage_at("", "services", "{'spec':{'type':'NodePort','ports':[{},{}]}}", NOW,
                    "count/services=1,services=1,services.loadbalancers=0,services.nodeports=2");
    /* allocateLoadBalancerNodePorts false: only the ports asking for one by
     * number (upstream's portsWithNodePorts) */
    expect_usage_at("", "services",
                    "{'spec':{'type':'LoadBalancer','allocateLoadBalancerNodePorts':false,"
                    "'ports':[{},{'nodePort':30001},{}]}}",
                    NOW,
                    "count/services=1,services=1,services.loadbalancers=1,services.nodeports=1");
    expect_usage_at("", "services",
                    "{'spec':{'type':'LoadBalancer','allocateLoadBalancerNodePorts':true,"
                    "'ports':[{},{},{}]}}",
                    NOW,
                    "count/services=1,services=1,services.loadbalancers=1,services.nodeports=3");
    expect_usage_at("", "services", "{'spec':{'type':'LoadBalancer','ports':[{}]}}", NOW,
                    "count/services=1,services=1,services.loadbalancers=1,services.nodeports=1");
    expect_usage_at("", "services", "{'spec':{'type':'ExternalName'}}", NOW,
                    "count/services=1,services=1,services.loadbalancers=0,services.nodeports=0");
}

#define SC ".storageclass.storage.k8s.io/"

static void test_pvc_usage(void **state)
{
    expect_usage_at(
        "", "persistentvolumeclaims",
        "{'spec':{'storageClassName':'gold','resources':{'requests':{'storage':'10Gi'}}}}", NOW,
        "persistentvolumeclaims=1,count/persistentvolumeclaims=1,requests.storage=10Gi,"
        "gold" SC "persistentvolumeclaims=1,gold" SC "requests.storage=10Gi");
    expect_usage_at(
        "", "persistentvolumeclaims",
        "{'metadata':{'annotations':{'volume.beta.kubernetes.io/storage-class':'silver'}},"
        "'spec':{'storageClassName':'gold','resources':{'requests':{'storage':'1Gi'}}},"
        "'status':{'allocatedResources':{'storage':'2Gi'}}}",
        NOW,
        "persistentvolumeclaims=1,count/persistentvolumeclaims=1,requests.storage=2Gi,"
        "silver" SC "persistentvolumeclaims=1,silver" SC "requests.storage=2Gi");
    /* whole bytes: 1.5 rounds up to 2; no class => no class keys */
    expect_usage_at("", "persistentvolumeclaims",
                    "{'spec':{'resources':{'requests':{'storage':'1.5'}}}}", NOW,
                    "persistentvolumeclaims=1,count/persistentvolumeclaims=1,requests.storage=2");
    expect_usage_at("", "persistentvolumeclaims", "{'spec':{}}", NOW,
                    "persistentvolumeclaims=1,count/persistentvolumeclaims=1");
}

static void test_count_usage(void **state)
{
    expect_usage_at("apps", "deployments", "{}", NOW, "count/deployments.apps=1");
    expect_usage_at("", "configmaps", "{}", NOW, "count/configmaps=1,configmaps=1");
    expect_usage_at("", "secrets", "{}", NOW, "count/secrets=1,secrets=1");
    expect_usage_at("", "resourcequotas", "{}", NOW, "count/resourcequotas=1,resourcequotas=1");
    expect_usage_at("", "replicationcontrollers", "{}", NOW,
                    "count/replicationcontrollers=1,replicationcontrollers=1");
    expect_usage_at("", "endpoints", "{}", NOW, "count/endpoints=1");
    expect_usage_at("example.com", "widgets", "{}", NOW, "count/widgets.example.com=1");
}

/* ---- recount (§2.7 TestPodEvaluatorUsageStats, §5) ------------------------------------------- */

static char *recount(const char *quota, const char *pods)
{
    json_t *q = J(quota), *arr = J(pods);
    rlist *acc = rl_new();
    if (quota_recount_begin(q, "", "pods", acc) > 0) {
        size_t i;
        json_t *p;
        json_array_foreach(arr, i, p)
            assert_true(quota_recount_add(q, "", "pods", p, NOW, acc) >= 0);
    }
    json_t *used = quota_status_used_for(q, acc);
    char *s = json_dumps(used, JSON_SORT_KEYS | JSON_COMPACT);
    for (char *c = s; *c; c++)
        if (*c == '"') *c = '\'';
    json_decref(used);
    json_decref(q);
    json_decref(arr);
    rl_free(acc);
    return s;
}

static void expect_recount(const char *quota, const char *pods, const char *want)
{
    char *got = recount(quota, pods);
    if (strcmp(got, want) != 0) fail_msg("recount: got %s want %s", got, want);
    free(got);
}

#define CPU1 "'containers':[{" RES("'cpu':'1'", "'cpu':'1'") "}]"
#define HARD                                                                                       \
    "'hard':{'pods':'10','count/pods':'10','cpu':'10','requests.cpu':'10','limits.cpu':'10'}"

static void test_recount(void **state)
{
    const char *want_all =
        "{'count/pods':'2','cpu':'2','limits.cpu':'2','pods':'2','requests.cpu':'2'}";
    expect_recount("{'spec':{" HARD "}}", "[{'spec':{" CPU1 "}},{'spec':{" CPU1 "}}]", want_all);
    expect_recount("{'spec':{" HARD "}}",
                   "[{'spec':{" CPU1 "}},{'spec':{" CPU1 "},'status':{'phase':'Succeeded'}}]",
                   "{'count/pods':'2','cpu':'1','limits.cpu':'1','pods':'1','requests.cpu':'1'}");
    expect_recount("{'spec':{" HARD ",'scopeSelector':{'matchExpressions':[{'scopeName':"
                   "'PriorityClass','operator':'In','values':['high-priority']}]}}}",
                   "[{'spec':{'priorityClassName':'high-priority'," CPU1 "}},"
                   "{'spec':{'priorityClassName':'high-priority'," CPU1
                   "},'status':{'phase':'Succeeded'}},"
                   "{'spec':{'priorityClassName':'low-priority'," CPU1 "}}]",
                   "{'count/pods':'2','cpu':'1','limits.cpu':'1','pods':'1','requests.cpu':'1'}");
    expect_recount("{'spec':{'hard':{'count/pods':'10'},'scopes':['PriorityClass','BestEffort'],"
                   "'scopeSelector':{'matchExpressions':[{'scopeName':'PriorityClass','operator':"
                   "'In','values':['high-priority']}]}}}",
                   "[{'spec':{'priorityClassName':'high-priority'},'status':{'phase':'Failed'}}]",
                   "{'count/pods':'1'}");
    /* zeros for owned keys; a key no evaluator owns keeps its old value; stale keys dropped */
    expect_recount("{'spec':{'hard':{'pods':'5','example.com/foo':'3'}},'status':{'used':"
                   "{'example.com/foo':'1','secrets':'4'}}}",
                   "[]", "{'example.com/foo':'1','pods':'0'}");
}

/* ---- facts: the cached path agrees with the JSON path -----------------------------------------
 */

/* Every usage vector survives the facts' packing: a recount of one object on its
 * facts, with every usage key in hard, gives exactly quota_usage (values and
 * formats), including names outside the known tables (hugepages, extended
 * resources, storage classes, count/<res>.<group>). */
static void expect_facts_usage(const char *group, const char *res, const char *obj)
{
    json_t *o = J(obj);
    rlist *u = rl_new(), *acc = rl_new();
    assert_int_equal(quota_usage(group, res, o, NOW, u), 0);
    json_t *hard = rl_to_json(u);
    json_t *q = json_pack("{s:{s:o}}", "spec", "hard", hard);
    quota_recount_ctx *c = quota_recount_prepare(q, group, res);
    quota_facts *f = quota_facts_new(group, res, o, NOW);
    assert_non_null(c);
    assert_non_null(f);
    assert_true(quota_facts_size(f) < 512);
    assert_int_equal(quota_recount_add_facts(c, f, acc), 1);
    char *want = fmt(u);
    expect_list(obj, acc, want);
    free(want);
    quota_facts_free(f);
    quota_recount_ctx_free(c);
    json_decref(q);
    json_decref(o);
    rl_free(u);
    rl_free(acc);
}

static void test_facts_usage(void **state)
{
    for (size_t i = 0; i < N(pod_vectors); i++)
        expect_facts_usage("", "pods", pod_vectors[i].pod);
    expect_facts_usage("", "pods",
                       "{'spec':{'containers':[{" RES("'hugepages-2Mi':'4Mi','example.com/x':'2',"
                                                      "'cpu':'123456789012345678901234567m'",
                                                      "") "}]}}");
    expect_facts_usage("", "services", "{'spec':{'type':'NodePort','ports':[{},{}]}}");
    expect_facts_usage(
        "", "persistentvolumeclaims",
        "{'spec':{'storageClassName':'gold','resources':{'requests':{'storage':'10Gi'}}}}");
    expect_facts_usage("", "configmaps", "{}");
    expect_facts_usage("example.com", "widgets", "{}");
}

/* Objects and scope requirements of the scope tests above. */
static const char *const scope_objs[] = {
    "{'spec':{}}",
    "{'spec':{'priorityClassName':'class1'}}",
    "{'spec':{'priorityClassName':'high'}}",
    "{'spec':{'containers':[{" RES("'cpu':'1','memory':'1Gi'", "") "}]}}",
    "{'spec':{'activeDeadlineSeconds':30,'priorityClassName':'class1'}}",
    "{'spec':{'affinity':{'podAffinity':{'requiredDuringSchedulingIgnoredDuring"
    "Execution':[{'namespaces':['ns1'],'topologyKey':'k'}]}}}}",
    "{'spec':{'affinity':{'podAntiAffinity':{'preferredDuringSchedulingIgnored"
    "DuringExecution':[{'weight':1,'podAffinityTerm':{'namespaceSelector':{}}}]}}}}",
    "{'spec':{'volumeAttributesClassName':'silver'},'status':{"
    "'modifyVolumeStatus':{'targetVolumeAttributesClassName':'gold'}}}",
    "{'status':{'currentVolumeAttributesClassName':'a'}}",
    "{'spec':{'containers':[{" RES("'cpu':'bad'", "") "}],'priorityClassName':'high'}}",
};

static const char *const scope_reqs[] = {
    "{'scopeName':'Terminating','operator':'Exists'}",
    "{'scopeName':'NotTerminating','operator':'Exists'}",
    "{'scopeName':'BestEffort','operator':'Exists'}",
    "{'scopeName':'NotBestEffort','operator':'Exists'}",
    "{'scopeName':'CrossNamespacePodAffinity','operator':'Exists'}",
    "{'scopeName':'Terminating','operator':'Bogus'}",
    "{'scopeName':'PriorityClass','operator':'In','values':['class1','high']}",
    "{'scopeName':'PriorityClass','operator':'NotIn','values':['low']}",
    "{'scopeName':'PriorityClass','operator':'Exists'}",
    "{'scopeName':'PriorityClass','operator':'DoesNotExist'}",
    "{'scopeName':'PriorityClass','operator':'Bad','values':['x']}",
    "{'scopeName':'PriorityClass','operator':'In'}",
    "{'scopeName':'VolumeAttributesClass','operator':'In','values':['gold']}",
    "{'scopeName':'VolumeAttributesClass','operator':'NotIn','values':['gold']}",
    "{'scopeName':'VolumeAttributesClass','operator':'Exists'}",
};

/* One prepared context per requirement, reused over every object (twice, so
 * the memoised selector results are exercised), must agree with the JSON entry
 * points evaluated afresh per object, and with the pod helpers themselves. */
static void agree(const char *res, const char *req_text)
{
    json_t *req = J(req_text);
    json_t *q =
        json_pack("{s:{s:{s:s,s:s,s:s},s:{s:[O]}}}", "spec", "hard", "pods", "100", "requests.cpu",
                  "100", "persistentvolumeclaims", "100", "scopeSelector", "matchExpressions", req);
    json_t *spec = json_object_get(q, "spec"), *sels = json_pack("[O]", req);
    quota_recount_ctx *c = quota_recount_prepare(q, "", res);
    rlist *acc_facts = rl_new(), *acc_json = rl_new();
    char err[640], err2[640];
    for (size_t pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < N(scope_objs); i++) {
            json_t *o = J(scope_objs[i]), *out = json_array();
            quota_facts *f = quota_facts_new("", res, o, NOW);
            int m_facts = quota_recount_matches(c, f, err, sizeof err);
            int m_json = quota_matches_scopes(spec, "", res, o, err2, sizeof err2);
            int m_list = quota_matching_scopes("", res, o, sels, out, NULL, 0);
            if (m_facts != m_json || (m_list < 0 ? -1 : (int)json_array_size(out)) != m_json)
                fail_msg("%s %s on %s: facts %d json %d list %d", res, req_text, scope_objs[i],
                         m_facts, m_json, m_list);
            if (m_facts < 0) assert_string_equal(err, err2);
            const char *scope = json_string_value(json_object_get(req, "scopeName"));
            if (!strcmp(res, "pods") && !strcmp(scope, "Terminating"))
                assert_int_equal(m_facts, quota_pod_is_terminating(o));
            if (!strcmp(res, "pods") && !strcmp(scope, "BestEffort"))
                assert_int_equal(m_facts, quota_pod_qos(o) == QUOTA_QOS_BEST_EFFORT);
            int a = quota_recount_add_facts(c, f, acc_facts);
            int b = quota_recount_add(q, "", res, o, NOW, acc_json);
            assert_int_equal(a, b);
            assert_true(rl_equal(acc_facts, acc_json));
            quota_facts_free(f);
            json_decref(o);
            json_decref(out);
        }
    }
    quota_recount_ctx_free(c);
    rl_free(acc_facts);
    rl_free(acc_json);
    json_decref(sels);
    json_decref(q);
    json_decref(req);
}

static void test_facts_agree_with_json(void **state)
{
    for (size_t r = 0; r < N(scope_reqs); r++) {
        agree("pods", scope_reqs[r]);
        agree("persistentvolumeclaims", scope_reqs[r]);
        agree("services", scope_reqs[r]);
    }
}

/* Facts of one kind given to a context of another are refused. */
static void test_facts_kind_mismatch(void **state)
{
    json_t *q = J("{'spec':{'hard':{'pods':'1'}}}"), *o = J("{}");
    quota_recount_ctx *c = quota_recount_prepare(q, "", "pods");
    quota_facts *f = quota_facts_new("", "services", o, NOW);
    rlist *acc = rl_new();
    assert_int_equal(quota_recount_add_facts(c, f, acc), QUOTA_EINVAL);
    assert_int_equal(rl_len(acc), 0);
    rl_free(acc);
    quota_facts_free(f);
    quota_recount_ctx_free(c);
    json_decref(q);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rlist_ops),
        cmocka_unit_test(test_rlist_json),
        cmocka_unit_test(test_rlist_add_masked),
        cmocka_unit_test(test_pod_usage_vectors),
        cmocka_unit_test(test_sidecars),
        cmocka_unit_test(test_qos),
        cmocka_unit_test(test_matching_scopes),
        cmocka_unit_test(test_priority_class_operators),
        cmocka_unit_test(test_quota_scopes),
        cmocka_unit_test(test_constraints),
        cmocka_unit_test(test_handles),
        cmocka_unit_test(test_matching_resources),
        cmocka_unit_test(test_service_usage),
        cmocka_unit_test(test_pvc_usage),
        cmocka_unit_test(test_count_usage),
        cmocka_unit_test(test_recount),
        cmocka_unit_test(test_facts_usage),
        cmocka_unit_test(test_facts_agree_with_json),
        cmocka_unit_test(test_facts_kind_mismatch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
