/* test_sched.c - the scheduler core (core/sched.c): every filter with upstream's
 * exact reasons, toleration and node-affinity rules, least-allocated scoring,
 * the FitError text with its preemption suffix, the quota PreFilter message,
 * queue order and backoff, and which events un-park an unschedulable pod.
 *
 * Objects are written as JSON with single quotes (J() swaps them).
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
#include "core/sched.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* A node: name, allocatable JSON, extra spec JSON (may be ""), labels JSON. */
static json_t *node(const char *name, const char *alloc, const char *spec, const char *labels)
{
    char buf[4096];
    snprintf(buf, sizeof buf,
             "{'metadata':{'name':'%s','labels':{%s}},'spec':{%s},"
             "'status':{'allocatable':{%s}}}",
             name, labels, spec, alloc);
    return J(buf);
}

#define ALLOC "'cpu':'2','memory':'4Gi','pods':'10'"

/* A pod with one container requesting `req` (JSON members) and extra spec members. */
static json_t *pod(const char *req, const char *spec)
{
    char buf[4096];
    snprintf(buf, sizeof buf,
             "{'metadata':{'name':'p','namespace':'ns'},'spec':{%s%s'containers':"
             "[{'name':'c','resources':{'requests':{%s}}}]}}",
             spec, *spec ? "," : "", req);
    return J(buf);
}

/* status.allocatable of a node parsed, or NULL when it does not parse. */
static rlist *parsed_alloc(const json_t *n)
{
    rlist *a = rl_new();
    if (rl_from_json(json_object_get(json_object_get(n, "status"), "allocatable"), a, NULL)) {
        rl_free(a);
        return NULL;
    }
    return a;
}

/* sched_filter with requested = used (rlist spec), pods = npods. The node is
 * also given prepared (sched_node_prepare), with and without a parsed
 * allocatable: every form must agree. */
static int filt(const json_t *p, const json_t *n, const char *used, int npods, char *reason)
{
    rlist *req = rl_new(), *u = L(used), *alloc = parsed_alloc(n);
    assert_int_equal(quota_pod_requests(p, req), 0);
    sched_node sn = {n, u, NULL, npods};
    int rc = sched_filter(p, req, &sn, reason, 512);
    sched_node forms[2] = {{n, u, NULL, npods}, {n, u, NULL, npods, alloc}};
    for (size_t i = 0; i < 2; i++) {
        char again[512];
        sched_node_prepare(&forms[i]);
        assert_true(forms[i].prep.ready);
        assert_int_equal(forms[i].prep.amounts, forms[i].allocatable != NULL);
        assert_int_equal(sched_filter(p, req, &forms[i], again, sizeof again), rc);
        assert_string_equal(again, reason);
    }
    rl_free(alloc);
    rl_free(req);
    rl_free(u);
    return rc;
}

static void expect_filter(const char *preq, const char *pspec, const char *nspec,
                          const char *labels, const char *alloc, const char *used, int npods,
                          int code, const char *reason)
{
    json_t *p = pod(preq, pspec), *n = node("n1", alloc, nspec, labels);
    char got[512];
    int rc = filt(p, n, used, npods, got);
    if (rc != code || strcmp(got, reason) != 0)
        fail_msg("pod {%s} spec {%s} node {%s} labels {%s}: got %d '%s', want %d '%s'", preq, pspec,
                 nspec, labels, rc, got, code, reason);
    json_decref(p);
    json_decref(n);
}

/* ---- NodeUnschedulable ---- */

static void test_unschedulable(void **s)
{
    const char *u = "'unschedulable':true";
    expect_filter("", "", u, "", ALLOC, "", 0, SCHED_UNRESOLVABLE, "node(s) were unschedulable");
    expect_filter("", "", "'unschedulable':false", "", ALLOC, "", 0, SCHED_FIT, "");
    expect_filter("",
                  "'tolerations':[{'key':'node.kubernetes.io/unschedulable','operator':"
                  "'Exists','effect':'NoSchedule'}]",
                  u, "", ALLOC, "", 0, SCHED_FIT, "");
    expect_filter("", "'tolerations':[{'operator':'Exists'}]", u, "", ALLOC, "", 0, SCHED_FIT, "");
    /* Equal with an empty value matches the taint's empty value. */
    expect_filter("", "'tolerations':[{'key':'node.kubernetes.io/unschedulable'}]", u, "", ALLOC,
                  "", 0, SCHED_FIT, "");
    expect_filter("",
                  "'tolerations':[{'key':'node.kubernetes.io/unschedulable','operator':"
                  "'Exists','effect':'NoExecute'}]",
                  u, "", ALLOC, "", 0, SCHED_UNRESOLVABLE, "node(s) were unschedulable");
}

/* ---- TaintToleration ---- */

#define TAINT "'taints':[{'key':'dedicated','value':'gpu','effect':'NoSchedule'}]"
#define TAINT_MSG "node(s) had untolerated taint {dedicated: gpu}"

static void taint_case(const char *tols, int code)
{
    char spec[512];
    snprintf(spec, sizeof spec, "'tolerations':[%s]", tols);
    expect_filter("", spec, TAINT, "", ALLOC, "", 0, code, code ? TAINT_MSG : "");
}

static void test_taints(void **s)
{
    expect_filter("", "", TAINT, "", ALLOC, "", 0, SCHED_UNRESOLVABLE, TAINT_MSG);
    taint_case("{'key':'dedicated','operator':'Equal','value':'gpu','effect':'NoSchedule'}", 0);
    taint_case("{'key':'dedicated','value':'gpu'}", 0); /* "" operator = Equal, "" effect = all */
    taint_case("{'key':'dedicated','operator':'Equal','value':'cpu'}", SCHED_UNRESOLVABLE);
    taint_case("{'key':'dedicated','operator':'Exists'}", 0);
    taint_case("{'operator':'Exists'}", 0); /* empty key + Exists: everything */
    taint_case("{'operator':'Exists','effect':'NoSchedule'}", 0);
    taint_case("{'operator':'Exists','effect':'NoExecute'}", SCHED_UNRESOLVABLE);
    taint_case("{'key':'other','operator':'Exists'}", SCHED_UNRESOLVABLE);
    taint_case("{'key':'dedicated','operator':'Bogus','value':'gpu'}", SCHED_UNRESOLVABLE);
    /* An empty key matches any key whatever the operator (API validation only
     * allows it with Exists; ToleratesTaint does not check). */
    taint_case("{'operator':'Equal','value':'gpu'}", 0);
    taint_case("{'operator':'Equal','value':'cpu'}", SCHED_UNRESOLVABLE);

    /* PreferNoSchedule never blocks; NoExecute does; the first untolerated names it. */
    expect_filter("", "", "'taints':[{'key':'a','value':'1','effect':'PreferNoSchedule'}]", "",
                  ALLOC, "", 0, SCHED_FIT, "");
    expect_filter("", "",
                  "'taints':[{'key':'a','effect':'PreferNoSchedule'},{'key':'b','value':'2',"
                  "'effect':'NoExecute'},{'key':'c','value':'3','effect':'NoSchedule'}]",
                  "", ALLOC, "", 0, SCHED_UNRESOLVABLE, "node(s) had untolerated taint {b: 2}");
    expect_filter("", "'tolerations':[{'key':'b','operator':'Exists','effect':'NoExecute'}]",
                  "'taints':[{'key':'b','value':'2','effect':'NoExecute'},{'key':'c',"
                  "'effect':'NoSchedule'}]",
                  "", ALLOC, "", 0, SCHED_UNRESOLVABLE, "node(s) had untolerated taint {c: }");
}

/* ---- NodeAffinity ---- */

#define AFF_MSG "node(s) didn't match Pod's node affinity/selector"

/* Pod with required terms (JSON array body) against a node with `labels`. */
static void aff_case(const char *terms, const char *labels, int match)
{
    char spec[2048];
    snprintf(spec, sizeof spec,
             "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
             "{'nodeSelectorTerms':[%s]}}}",
             terms);
    expect_filter("", spec, "", labels, ALLOC, "", 0, match ? SCHED_FIT : SCHED_UNRESOLVABLE,
                  match ? "" : AFF_MSG);
}

#define EXPR(k, op, vals) "{'matchExpressions':[{'key':'" k "','operator':'" op "'" vals "}]}"
#define VALS(...) ",'values':[" __VA_ARGS__ "]"

static void test_node_selector(void **s)
{
    expect_filter("", "'nodeSelector':{'zone':'a'}", "", "'zone':'a','x':'y'", ALLOC, "", 0,
                  SCHED_FIT, "");
    expect_filter("", "'nodeSelector':{'zone':'a','x':'y'}", "", "'zone':'a'", ALLOC, "", 0,
                  SCHED_UNRESOLVABLE, AFF_MSG);
    expect_filter("", "'nodeSelector':{'zone':'b'}", "", "'zone':'a'", ALLOC, "", 0,
                  SCHED_UNRESOLVABLE, AFF_MSG);
    expect_filter("", "'nodeSelector':{'zone':''}", "", "", ALLOC, "", 0, SCHED_UNRESOLVABLE,
                  AFF_MSG);
    /* nodeSelector AND affinity. */
    expect_filter("",
                  "'nodeSelector':{'zone':'a'},'affinity':{'nodeAffinity':{"
                  "'requiredDuringSchedulingIgnoredDuringExecution':{'nodeSelectorTerms':["
                  "{'matchExpressions':[{'key':'disk','operator':'Exists'}]}]}}}",
                  "", "'zone':'a'", ALLOC, "", 0, SCHED_UNRESOLVABLE, AFF_MSG);
}

static void test_affinity_operators(void **s)
{
    aff_case(EXPR("zone", "In", VALS("'a','b'")), "'zone':'b'", 1);
    aff_case(EXPR("zone", "In", VALS("'a','b'")), "'zone':'c'", 0);
    aff_case(EXPR("zone", "In", VALS("'a'")), "", 0);
    aff_case(EXPR("zone", "NotIn", VALS("'a'")), "'zone':'b'", 1);
    aff_case(EXPR("zone", "NotIn", VALS("'a'")), "'zone':'a'", 0);
    aff_case(EXPR("zone", "NotIn", VALS("'a'")), "", 1); /* absent key: not in */
    aff_case(EXPR("gpu", "Exists", ""), "'gpu':''", 1);
    aff_case(EXPR("gpu", "Exists", ""), "", 0);
    aff_case(EXPR("gpu", "DoesNotExist", ""), "", 1);
    aff_case(EXPR("gpu", "DoesNotExist", ""), "'gpu':'x'", 0);
    aff_case(EXPR("cores", "Gt", VALS("'8'")), "'cores':'16'", 1);
    aff_case(EXPR("cores", "Gt", VALS("'8'")), "'cores':'8'", 0);
    aff_case(EXPR("cores", "Gt", VALS("'-1'")), "'cores':'0'", 1);
    aff_case(EXPR("cores", "Lt", VALS("'8'")), "'cores':'7'", 1);
    aff_case(EXPR("cores", "Lt", VALS("'8'")), "'cores':'8'", 0);
    aff_case(EXPR("cores", "Lt", VALS("'8'")), "", 0);
    aff_case(EXPR("cores", "Gt", VALS("'8'")), "'cores':'many'", 0); /* label not an int */
    aff_case(EXPR("cores", "Gt", VALS("'8'")), "'cores':'1e3'", 0);
    aff_case(EXPR("cores", "Gt", VALS("'8'")), "'cores':'99999999999999999999'", 0);
    /* Unparsable requirements drop the whole term. */
    aff_case(EXPR("cores", "Gt", VALS("'x'")), "'cores':'16'", 0);
    aff_case(EXPR("cores", "Gt", VALS("'1','2'")), "'cores':'16'", 0);
    aff_case(EXPR("zone", "In", VALS("")), "'zone':'a'", 0);
    aff_case(EXPR("zone", "Exists", VALS("'a'")), "'zone':'a'", 0);
    aff_case(EXPR("zone", "Equals", VALS("'a'")), "'zone':'a'", 0);
    /* ... but not the other terms. */
    aff_case(EXPR("zone", "Bogus", "") "," EXPR("zone", "In", VALS("'a'")), "'zone':'a'", 1);
    /* Terms are ORed, expressions within a term ANDed. */
    aff_case(EXPR("zone", "In", VALS("'x'")) "," EXPR("zone", "In", VALS("'a'")), "'zone':'a'", 1);
    aff_case("{'matchExpressions':[{'key':'zone','operator':'In','values':['a']},"
             "{'key':'gpu','operator':'Exists'}]}",
             "'zone':'a'", 0);
    aff_case("{'matchExpressions':[{'key':'zone','operator':'In','values':['a']},"
             "{'key':'gpu','operator':'Exists'}]}",
             "'zone':'a','gpu':'1'", 1);
    /* An empty term selects nothing; no terms at all select nothing. */
    aff_case("{}", "'zone':'a'", 0);
    aff_case("{'matchExpressions':[]}", "'zone':'a'", 0);
    aff_case("", "'zone':'a'", 0);
}

static void test_affinity_fields(void **s)
{
    /* Filter-level matchFields (sched_filter skips the PreFilter shortcut). */
    aff_case("{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1']}]}", "", 1);
    aff_case("{'matchFields':[{'key':'metadata.name','operator':'In','values':['n2']}]}", "", 0);
    aff_case("{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['n2']}]}", "", 1);
    aff_case("{'matchFields':[{'key':'metadata.name','operator':'NotIn','values':['n1']}]}", "", 0);
    /* In needs exactly one value; other operators are refused. */
    aff_case("{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1','n2']}]}", "",
             0);
    aff_case("{'matchFields':[{'key':'metadata.name','operator':'Exists'}]}", "", 0);
    /* Unknown field reads as "". */
    aff_case("{'matchFields':[{'key':'spec.x','operator':'NotIn','values':['a']}]}", "", 1);
    /* Fields AND expressions. */
    aff_case("{'matchFields':[{'key':'metadata.name','operator':'In','values':['n1']}],"
             "'matchExpressions':[{'key':'zone','operator':'In','values':['a']}]}",
             "'zone':'b'", 0);
}

/* ---- NodeResourcesFit ---- */

static void test_fit(void **s)
{
    const char *al = "'cpu':'2','memory':'4Gi','pods':'10','ephemeral-storage':'10Gi',"
                     "'example.com/gpu':'1','hugepages-2Mi':'4Mi'";
    expect_filter("'cpu':'500m','memory':'1Gi'", "", "", "", al, "cpu=1500m,memory=3Gi", 3,
                  SCHED_FIT, "");
    expect_filter("'cpu':'501m'", "", "", "", al, "cpu=1500m", 3, SCHED_UNSCHEDULABLE,
                  "Insufficient cpu");
    /* More than the whole node: unresolvable. */
    expect_filter("'cpu':'3'", "", "", "", al, "", 0, SCHED_UNRESOLVABLE, "Insufficient cpu");
    expect_filter("'cpu':'1','memory':'2Gi'", "", "", "", al, "cpu=1500m,memory=3Gi", 0,
                  SCHED_UNSCHEDULABLE, "Insufficient cpu, Insufficient memory");
    expect_filter("'ephemeral-storage':'11Gi'", "", "", "", al, "", 0, SCHED_UNRESOLVABLE,
                  "Insufficient ephemeral-storage");
    expect_filter("'example.com/gpu':'1'", "", "", "", al, "example.com/gpu=1", 0,
                  SCHED_UNSCHEDULABLE, "Insufficient example.com/gpu");
    expect_filter("'example.com/fpga':'1'", "", "", "", al, "", 0, SCHED_UNRESOLVABLE,
                  "Insufficient example.com/fpga");
    expect_filter("'hugepages-2Mi':'6Mi'", "", "", "", al, "", 0, SCHED_UNRESOLVABLE,
                  "Insufficient hugepages-2Mi");
    /* Names the scheduler does not fit, and zero requests, are ignored. */
    expect_filter("'foo':'5','example.com/gpu':'0'", "", "", "", al, "example.com/gpu=1", 0,
                  SCHED_FIT, "");
    /* Pod count: checked even for a pod that requests nothing. */
    expect_filter("", "", "", "", al, "", 9, SCHED_FIT, "");
    expect_filter("", "", "", "", al, "", 10, SCHED_UNSCHEDULABLE, "Too many pods");
    expect_filter("'cpu':'3'", "", "", "", al, "", 10, SCHED_UNRESOLVABLE,
                  "Too many pods, Insufficient cpu");
    expect_filter("", "", "", "", "'cpu':'1'", "", 0, SCHED_UNSCHEDULABLE, "Too many pods");
    /* Over-committed nodes: nothing left, the pod's request still decides. */
    expect_filter("'cpu':'1m'", "", "", "", al, "cpu=3", 0, SCHED_UNSCHEDULABLE,
                  "Insufficient cpu");
    /* Fractions: MilliValue rounds up (0.1m -> 1m). */
    expect_filter("'cpu':'0.1m'", "", "", "", al, "cpu=1999m", 0, SCHED_FIT, "");
    expect_filter("'cpu':'0.1m'", "", "", "", al, "cpu=2", 0, SCHED_UNSCHEDULABLE,
                  "Insufficient cpu");
}

static void test_filter_order_and_errors(void **s)
{
    /* The first failing plugin wins: unschedulable before taints before affinity. */
    expect_filter("'cpu':'9'", "'nodeSelector':{'a':'b'}", "'unschedulable':true," TAINT, "", ALLOC,
                  "", 0, SCHED_UNRESOLVABLE, "node(s) were unschedulable");
    expect_filter("'cpu':'9'", "'nodeSelector':{'a':'b'}", TAINT, "", ALLOC, "", 0,
                  SCHED_UNRESOLVABLE, TAINT_MSG);
    expect_filter("'cpu':'9'", "'nodeSelector':{'a':'b'}", "", "", ALLOC, "", 0, SCHED_UNRESOLVABLE,
                  AFF_MSG);
    /* A bad allocatable quantity is an error, not a reason. */
    json_t *p = pod("'cpu':'1'", ""), *n = node("n1", "'cpu':'lots'", "", "");
    char r[64];
    assert_int_equal(filt(p, n, "", 0, r), SCHED_EINVAL);
    /* Reasons are truncated to the buffer, never overflowed. */
    json_decref(n);
    n = node("n1", ALLOC, TAINT, "");
    rlist *req = rl_new();
    sched_node sn = {n, NULL, NULL, 0};
    assert_int_equal(sched_filter(p, req, &sn, r, 10), SCHED_UNRESOLVABLE);
    assert_string_equal(r, "node(s) h");
    assert_int_equal(sched_filter(p, req, &sn, NULL, 0), SCHED_UNRESOLVABLE);
    rl_free(req);
    json_decref(p);
    json_decref(n);
}

/* ---- scoring and sched_pick ---- */

static void test_nonzero_requests(void **s)
{
    json_t *p = J("{'spec':{'containers':[{'name':'a'},{'name':'b','resources':{'requests':"
                  "{'cpu':'0'}}},{'name':'c','resources':{'requests':{'memory':'1Gi'}}}],"
                  "'initContainers':[{'name':'i','resources':{'requests':{'cpu':'1'}}}],"
                  "'overhead':{'cpu':'10m'}}}");
    /* containers: cpu 100m + 0 + 100m = 200m, memory 200Mi + 200Mi + 1Gi; init:
     * cpu 1, memory 200Mi; the max, plus overhead. */
    rlist *l = rl_new(), *want = L("cpu=1010m,memory=1493172224");
    assert_int_equal(sched_pod_nonzero_requests(p, l), 0);
    assert_true(rl_equal(l, want));
    /* The pod object is not modified. */
    assert_null(json_object_get(
        json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0), "resources"));
    rl_free(l);
    rl_free(want);
    json_decref(p);
}

static void test_nonzero_requests_odd_shapes(void **s)
{
    /* Entries that are not objects are left alone; a null resources or a
     * non-object requests is replaced: the same as quota_pod_requests of the
     * pod written with the defaults. The pod is not modified. */
    json_t *p = J("{'spec':{'containers':[7,{'name':'a','resources':null},{'name':'b',"
                  "'resources':{'requests':'x','limits':{'cpu':'2'}}}]}}");
    json_t *d = J("{'spec':{'containers':[7,{'name':'a','resources':{'requests':{'cpu':'100m',"
                  "'memory':'200Mi'}}},{'name':'b','resources':{'requests':{'cpu':'100m',"
                  "'memory':'200Mi'},'limits':{'cpu':'2'}}}]}}");
    rlist *l = rl_new(), *want = rl_new();
    assert_int_equal(sched_pod_nonzero_requests(p, l), 0);
    assert_int_equal(quota_pod_requests(d, want), 0);
    assert_true(rl_equal(l, want));
    json_t *res = json_object_get(
        json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 2), "resources");
    assert_string_equal(json_string_value(json_object_get(res, "requests")), "x");
    json_decref(p);
    json_decref(d);
    /* A pod without a spec requests what quota_pod_requests says. */
    p = J("{'metadata':{'name':'p'}}");
    assert_int_equal(sched_pod_nonzero_requests(p, l), 0);
    assert_int_equal(quota_pod_requests(p, want), 0);
    assert_true(rl_equal(l, want));
    rl_free(l);
    rl_free(want);
    json_decref(p);
}

static void test_pod_prepared(void **s)
{
    json_t *p = pod("'cpu':'250m','example.com/gpu':'1'", "");
    sched_pod *sp = NULL;
    assert_int_equal(sched_pod_new(p, &sp), 0);
    rlist *req = rl_new(), *nz = rl_new();
    assert_int_equal(quota_pod_requests(p, req), 0);
    assert_int_equal(sched_pod_nonzero_requests(p, nz), 0);
    assert_true(rl_equal(sched_pod_requests(sp), req));
    assert_true(rl_equal(sched_pod_nonzero(sp), nz));
    /* The lists can be handed over; sp then holds none. */
    rlist *treq, *tnz;
    sched_pod_take_lists(sp, &treq, &tnz);
    assert_true(rl_equal(treq, req));
    assert_true(rl_equal(tnz, nz));
    assert_null(sched_pod_requests(sp));
    assert_null(sched_pod_nonzero(sp));
    sched_pod_free(sp);
    rl_free(treq);
    rl_free(tnz);
    rl_free(req);
    rl_free(nz);
    json_decref(p);
    /* A request that does not parse. */
    p = pod("'cpu':'lots'", "");
    sp = (sched_pod *)p; /* any non-NULL value: the call must reset it */
    assert_int_equal(sched_pod_new(p, &sp), SCHED_EINVAL);
    assert_null(sp);
    sched_pod_free(NULL);
    json_decref(p);
}

static void test_node_prepare(void **s)
{
    json_t *n =
        node("a", "'cpu':'4','memory':'8Gi','pods':'10','ephemeral-storage':'1Gi'",
             "'unschedulable':true,'taints':[{'key':'k','effect':'NoSchedule'}]", "'zone':'z'");
    rlist *alloc = parsed_alloc(n), *req = L("cpu=1500m,memory=1Gi"), *nz = L("cpu=2,memory=2Gi");
    sched_node sn = {n, req, NULL, 3, alloc};
    sched_node_prepare(&sn);
    const sched_node_prep *pp = &sn.prep;
    assert_true(pp->ready && pp->amounts && pp->unschedulable);
    assert_string_equal(pp->name, "a");
    assert_string_equal(json_string_value(json_object_get(pp->labels, "zone")), "z");
    assert_int_equal(json_array_size(pp->taints), 1);
    assert_int_equal(pp->alloc_cpu, 4000);
    assert_int_equal(pp->alloc_memory, 8LL << 30);
    assert_int_equal(pp->alloc_storage, 1LL << 30);
    assert_int_equal(pp->alloc_pods, 10);
    assert_int_equal(pp->req_cpu, 1500);
    assert_int_equal(pp->req_memory, 1LL << 30);
    assert_int_equal(pp->req_storage, 0);
    assert_int_equal(pp->score_cpu, 1500); /* no nonzero: requested scores */
    sn.nonzero = nz;
    sched_node_prepare(&sn); /* again after a change */
    assert_int_equal(pp->score_cpu, 2000);
    assert_int_equal(pp->score_memory, 2LL << 30);
    /* Without a parsed allocatable only the JSON half is kept. */
    sn.allocatable = NULL;
    sched_node_prepare(&sn);
    assert_true(pp->ready);
    assert_false(pp->amounts);
    json_decref(n);

    /* An allocatable that does not parse is still reported by the pick. */
    n = node("b", "'cpu':'x'", "", "");
    sched_node bad = {n, NULL, NULL, 0};
    sched_node_prepare(&bad);
    json_t *p = pod("'cpu':'1'", "");
    size_t chosen;
    dbuf b;
    dbuf_init(&b, 1 << 16);
    assert_int_equal(sched_pick(p, &bad, 1, &chosen, &b), SCHED_EINVAL);
    sched_pod *sp;
    assert_int_equal(sched_pod_new(p, &sp), 0);
    assert_int_equal(sched_pick_pod(sp, &bad, 1, NULL, &chosen, &b), SCHED_EINVAL);
    sched_pod_free(sp);
    dbuf_free(&b);
    json_decref(p);
    json_decref(n);
    rl_free(alloc);
    rl_free(req);
    rl_free(nz);
}

/* The sampled search gives the same node, count of examined nodes and
 * FitError whether or not the pod and the nodes are prepared. */
static void test_pick_sampled_prepared(void **s)
{
    enum { NN = 10 };
    json_t *nj[NN];
    rlist *used[NN];
    sched_node plain[NN], prep[NN];
    for (int i = 0; i < NN; i++) {
        char name[8], u[32];
        snprintf(name, sizeof name, "n%d", i);
        snprintf(u, sizeof u, "cpu=%dm,memory=%dMi", (i * 7 % 10) * 200, i * 100);
        nj[i] = node(name, ALLOC, "", "");
        used[i] = L(u);
        plain[i] = (sched_node){nj[i], used[i], NULL, i % 3};
        prep[i] = (sched_node){nj[i], used[i], NULL, i % 3, parsed_alloc(nj[i])};
        sched_node_prepare(&prep[i]);
    }
    const char *reqs[] = {"'cpu':'100m'", "'cpu':'1'", "'cpu':'1500m','memory':'1Gi'", "'cpu':'5'"};
    for (size_t r = 0; r < N(reqs); r++) {
        json_t *p = pod(reqs[r], "");
        for (size_t start = 0; start < 12; start += 5) {
            for (size_t maxf = 0; maxf < 4; maxf++) {
                sched_sample a = {start, maxf, 0}, b = {start, maxf, 0};
                size_t ca = 99, cb = 99;
                dbuf ma, mb;
                dbuf_init(&ma, 1 << 16);
                dbuf_init(&mb, 1 << 16);
                int ra = sched_pick_sampled(p, plain, NN, &a, &ca, &ma);
                sched_pod *sp;
                assert_int_equal(sched_pod_new(p, &sp), 0);
                int rb = sched_pick_pod(sp, prep, NN, &b, &cb, &mb);
                sched_pod_free(sp);
                assert_int_equal(ra, rb);
                assert_int_equal(ca, cb);
                assert_int_equal(a.examined, b.examined);
                assert_int_equal(dbuf_adds(&ma, ""), 0);
                assert_int_equal(dbuf_adds(&mb, ""), 0);
                assert_string_equal(ma.p, mb.p);
                dbuf_free(&ma);
                dbuf_free(&mb);
            }
        }
        json_decref(p);
    }
    for (int i = 0; i < NN; i++) {
        rl_free((rlist *)prep[i].allocatable);
        rl_free(used[i]);
        json_decref(nj[i]);
    }
}

static void test_score(void **s)
{
    json_t *n = node("a", "'cpu':'4','memory':'8Gi','pods':'10'", "", "");
    rlist *pz = L("cpu=1,memory=2Gi"), *used = L("cpu=1,memory=2Gi");
    sched_node sn = {n, NULL, NULL, 0};
    assert_int_equal(sched_score(pz, &sn), 75); /* (3/4 + 6/8) * 100 / 2 */
    sn.requested = used;
    assert_int_equal(sched_score(pz, &sn), 50);
    rlist *nz = L("cpu=2");
    sn.nonzero = nz;                            /* nonzero wins over requested */
    assert_int_equal(sched_score(pz, &sn), 50); /* cpu 25, memory 75 */
    rl_free(nz);
    nz = L("cpu=4");
    sn.nonzero = nz;
    assert_int_equal(sched_score(pz, &sn), 37); /* over-committed cpu scores 0: (0 + 75) / 2 */
    json_decref(n);
    /* A node without memory scores on cpu alone; without both, 0. */
    n = node("b", "'cpu':'4','pods':'10'", "", "");
    sched_node sb = {n, NULL, NULL, 0};
    assert_int_equal(sched_score(pz, &sb), 75);
    json_decref(n);
    n = node("c", "'pods':'10'", "", "");
    sched_node sc = {n, NULL, NULL, 0};
    assert_int_equal(sched_score(pz, &sc), 0);
    json_decref(n);
    rl_free(nz);
    rl_free(pz);
    rl_free(used);
}

/* sched_pick_pod on a prepared pod and prepared copies of the nodes (with
 * their allocatable parsed, when it parses): the same answer as sched_pick. */
static void expect_prepared_same(const json_t *p, const sched_node *nodes, size_t n, int rc,
                                 size_t chosen, const char *msg)
{
    sched_node *v = calloc(n ? n : 1, sizeof *v);
    rlist **allocs = calloc(n ? n : 1, sizeof *allocs);
    assert_non_null(v);
    assert_non_null(allocs);
    for (size_t i = 0; i < n; i++) {
        v[i] = nodes[i];
        if (!v[i].allocatable) v[i].allocatable = allocs[i] = parsed_alloc(v[i].node);
        sched_node_prepare(&v[i]);
    }
    sched_pod *sp;
    int prc = sched_pod_new(p, &sp);
    size_t got = 99;
    dbuf b;
    dbuf_init(&b, 1 << 16);
    if (prc == 0) prc = sched_pick_pod(sp, v, n, NULL, &got, &b);
    assert_int_equal(prc, rc);
    if (rc == 0) assert_int_equal(got, chosen);
    assert_int_equal(dbuf_adds(&b, ""), 0);
    assert_string_equal(b.p, msg);
    dbuf_free(&b);
    sched_pod_free(sp);
    for (size_t i = 0; i < n; i++)
        rl_free(allocs[i]);
    free(allocs);
    free(v);
}

static int pick(const json_t *p, const sched_node *nodes, size_t n, size_t *chosen, char **msg)
{
    dbuf b;
    dbuf_init(&b, 1 << 16);
    int rc = sched_pick(p, nodes, n, chosen, &b);
    dbuf_adds(&b, "");
    *msg = dbuf_take(&b, NULL);
    expect_prepared_same(p, nodes, n, rc, rc == 0 ? *chosen : 0, *msg);
    return rc;
}

static void test_pick_least_allocated(void **s)
{
    json_t *na = node("a", "'cpu':'4','memory':'8Gi','pods':'10'", "", "");
    json_t *nb = node("b", "'cpu':'4','memory':'8Gi','pods':'10'", "", "");
    json_t *nc = node("c", "'cpu':'4','memory':'8Gi','pods':'10'", "", "");
    rlist *ua = L("cpu=2,memory=1Gi"), *ub = L("cpu=1,memory=1Gi"), *uc = L("cpu=1,memory=4Gi");
    sched_node nodes[] = {{na, ua, NULL, 1}, {nb, ub, NULL, 1}, {nc, uc, NULL, 1}};
    json_t *p = pod("'cpu':'1','memory':'1Gi'", "");
    size_t chosen = 99;
    char *msg;
    assert_int_equal(pick(p, nodes, 3, &chosen, &msg), 0);
    assert_int_equal(chosen, 1);
    assert_string_equal(msg, "");
    free(msg);
    /* Ties go to the smallest name, wherever it sits in the array. */
    sched_node tie[] = {{nc, ub, NULL, 1}, {nb, ub, NULL, 1}, {na, ub, NULL, 1}};
    assert_int_equal(pick(p, tie, 3, &chosen, &msg), 0);
    assert_int_equal(chosen, 2);
    free(msg);
    /* Infeasible nodes are never chosen, however empty. */
    rlist *full = L("cpu=4");
    sched_node some[] = {{na, full, NULL, 0}, {nb, ua, NULL, 1}};
    assert_int_equal(pick(p, some, 2, &chosen, &msg), 0);
    assert_int_equal(chosen, 1);
    free(msg);
    /* A pod without requests scores with 100m / 200Mi: node b (more free memory
     * relative to its size) beats c. */
    json_t *bare = pod("", "");
    sched_node two[] = {{nc, uc, NULL, 1}, {nb, ub, NULL, 1}};
    assert_int_equal(pick(bare, two, 2, &chosen, &msg), 0);
    assert_int_equal(chosen, 1);
    free(msg);
    rl_free(full);
    rl_free(ua);
    rl_free(ub);
    rl_free(uc);
    json_decref(bare);
    json_decref(p);
    json_decref(na);
    json_decref(nb);
    json_decref(nc);
}

static void expect_pick_fail(const json_t *p, const sched_node *nodes, size_t n, const char *want)
{
    size_t chosen = 99;
    char *msg;
    assert_int_equal(pick(p, nodes, n, &chosen, &msg), 1);
    assert_int_equal(chosen, 99);
    assert_string_equal(msg, want);
    free(msg);
}

static void test_fit_error_one_node(void **s)
{
    json_t *n = node("a", ALLOC, "", "");
    rlist *used = L("cpu=1500m");
    sched_node nodes[] = {{n, used, NULL, 1}};
    json_t *p = pod("'cpu':'1'", "");
    expect_pick_fail(p, nodes, 1,
                     "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                     "available: 1 No preemption victims found for incoming pod.");
    json_decref(p);
    p = pod("'cpu':'3'", "");
    expect_pick_fail(p, nodes, 1,
                     "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are "
                     "available: 1 Preemption is not helpful for scheduling.");
    json_decref(p);
    p = pod("'cpu':'1'", "'preemptionPolicy':'Never'");
    expect_pick_fail(p, nodes, 1,
                     "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due "
                     "to preemptionPolicy=Never.");
    json_decref(p);
    p = pod("", "'nodeSelector':{'disk':'ssd'}");
    expect_pick_fail(p, nodes, 1,
                     "0/1 nodes are available: 1 node(s) didn't match Pod's node "
                     "affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is "
                     "not helpful for scheduling.");
    json_decref(p);
    json_decref(n);
    rl_free(used);
}

static void test_fit_error_three_nodes(void **s)
{
    json_t *na = node("a", ALLOC, "'unschedulable':true", "");
    json_t *nb = node("b", ALLOC, "'taints':[{'key':'k','value':'v','effect':'NoExecute'}]", "");
    json_t *nc = node("c", ALLOC, "", "");
    rlist *used = L("cpu=1500m,memory=3Gi");
    sched_node nodes[] = {{na, NULL, NULL, 0}, {nb, NULL, NULL, 0}, {nc, used, NULL, 2}};
    json_t *p = pod("'cpu':'1','memory':'2Gi'", "");
    expect_pick_fail(p, nodes, 3,
                     "0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 "
                     "node(s) had untolerated taint {k: v}, 1 node(s) were unschedulable. "
                     "preemption: 0/3 nodes are available: 1 No preemption victims found for "
                     "incoming pod, 2 Preemption is not helpful for scheduling.");
    json_decref(p);
    /* Same reason on several nodes is counted once per node. */
    sched_node same[] = {{nc, used, NULL, 2}, {nc, used, NULL, 2}, {nc, used, NULL, 2}};
    p = pod("'cpu':'1'", "");
    expect_pick_fail(p, same, 3,
                     "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are "
                     "available: 3 No preemption victims found for incoming pod.");
    json_decref(p);
    json_decref(na);
    json_decref(nb);
    json_decref(nc);
    rl_free(used);
}

static void test_fit_error_sorts_as_strings(void **s)
{
    /* Upstream sorts "count reason" strings: "10 node(s)..." before "2 Insufficient". */
    json_t *u = node("u", ALLOC, "'unschedulable':true", "");
    json_t *f = node("f", ALLOC, "", "");
    sched_node nodes[12];
    for (size_t i = 0; i < 12; i++)
        nodes[i] = (sched_node){i < 10 ? u : f, NULL, NULL, 0};
    json_t *p = pod("'cpu':'3'", "");
    expect_pick_fail(p, nodes, 12,
                     "0/12 nodes are available: 10 node(s) were unschedulable, 2 Insufficient "
                     "cpu. preemption: 0/12 nodes are available: 12 Preemption is not helpful "
                     "for scheduling.");
    json_decref(p);
    json_decref(u);
    json_decref(f);
}

static void test_affinity_prefilter(void **s)
{
    json_t *na = node("a", ALLOC, "", ""), *nb = node("b", ALLOC, "", "");
    json_t *nc = node("c", ALLOC, "", "");
    rlist *used = L("cpu=2");
    sched_node nodes[] = {{na, NULL, NULL, 0}, {nb, used, NULL, 0}, {nc, NULL, NULL, 0}};
    const char *pin = "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution'"
                      ":{'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':"
                      "'In','values':['%s']}]}]}}}";
    char spec[512];
    snprintf(spec, sizeof spec, pin, "b");
    json_t *p = pod("'cpu':'1'", spec);
    expect_pick_fail(p, nodes, 3,
                     "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy "
                     "plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 1 No "
                     "preemption victims found for incoming pod, 2 Preemption is not helpful for "
                     "scheduling.");
    json_decref(p);
    /* Pinned to a node that fits. */
    snprintf(spec, sizeof spec, pin, "c");
    p = pod("'cpu':'1'", spec);
    size_t chosen;
    char *msg;
    assert_int_equal(pick(p, nodes, 3, &chosen, &msg), 0);
    assert_int_equal(chosen, 2);
    free(msg);
    json_decref(p);
    /* Conflicting name requirements: the PreFilter rejects the pod outright. */
    p = pod("", "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
                "'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'In',"
                "'values':['a']},{'key':'metadata.name','operator':'In','values':['b']}]}]}}}");
    expect_pick_fail(p, nodes, 3,
                     "0/3 nodes are available: pod affinity terms conflict. preemption: 0/3 nodes "
                     "are available: 3 Preemption is not helpful for scheduling.");
    json_decref(p);
    /* A term without a name requirement lifts the shortcut (terms are ORed). */
    p = pod("", "'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':{"
                "'nodeSelectorTerms':[{'matchFields':[{'key':'metadata.name','operator':'In',"
                "'values':['zz']}]},{'matchExpressions':[{'key':'x','operator':'Exists'}]}]}}}");
    expect_pick_fail(p, nodes, 3,
                     "0/3 nodes are available: 3 node(s) didn't match Pod's node "
                     "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is "
                     "not helpful for scheduling.");
    json_decref(p);
    json_decref(na);
    json_decref(nb);
    json_decref(nc);
    rl_free(used);
}

static void test_no_nodes(void **s)
{
    json_t *p = pod("", "");
    expect_pick_fail(p, NULL, 0, "no nodes available to schedule pods");
    json_decref(p);
}

/* ---- quota message ---- */

static void test_quota_message(void **s)
{
    dbuf b;
    dbuf_init(&b, 1 << 16);
    assert_int_equal(sched_quota_message(&b, 3, "q", "cpu=1", "cpu=2", "cpu=2"), 0);
    assert_string_equal(b.p, "0/3 nodes are available: quota exceeded: q, requested: cpu=1, "
                             "used: cpu=2, limited: cpu=2. preemption: 0/3 nodes are available: "
                             "3 Preemption is not helpful for scheduling.");
    dbuf_free(&b);
    rlist *r = L("memory=1Gi,cpu=500m"), *u = L("cpu=1500m,memory=1024Mi"),
          *h = L("cpu=2,memory=2Gi");
    assert_int_equal(sched_quota_message_rl(&b, 1, "compute", r, u, h), 0);
    assert_string_equal(b.p, "0/1 nodes are available: quota exceeded: compute, requested: "
                             "cpu=500m,memory=1Gi, used: cpu=1500m,memory=1Gi, limited: "
                             "cpu=2,memory=2Gi. preemption: 0/1 nodes are available: 1 "
                             "Preemption is not helpful for scheduling.");
    dbuf_free(&b);
    assert_int_equal(sched_quota_message(&b, 0, "q", "cpu=1", "cpu=2", "cpu=2"), 0);
    assert_string_equal(b.p, "no nodes available to schedule pods");
    dbuf_free(&b);
    /* The dbuf ceiling is an error, not a truncated message. */
    dbuf_init(&b, 20);
    assert_int_equal(sched_quota_message(&b, 3, "q", "cpu=1", "cpu=2", "cpu=2"), SCHED_ENOMEM);
    dbuf_free(&b);
    rl_free(r);
    rl_free(u);
    rl_free(h);
}

/* ---- queue ---- */

static json_t *qpod(const char *name, const char *prio, const char *ts)
{
    char buf[512];
    snprintf(buf, sizeof buf, "{'metadata':{'name':'%s','namespace':'ns'%s%s%s},'spec':{%s%s}}",
             name, ts ? ",'creationTimestamp':'" : "", ts ? ts : "", ts ? "'" : "",
             prio ? "'priority':" : "", prio ? prio : "");
    return J(buf);
}

static int qsort_cmp(const void *a, const void *b)
{
    return sched_queue_cmp(*(json_t *const *)a, *(json_t *const *)b);
}

static void test_queue_order(void **s)
{
    json_t *pods[] = {
        qpod("e", NULL, "2024-01-01T00:00:00Z"),       /* priority 0 */
        qpod("d", "0", "2024-01-01T00:00:00Z"),        /* same as e: by name */
        qpod("c", "-5", "2023-01-01T00:00:00Z"),       /* lowest priority, however old */
        qpod("b", "1000", "2024-06-01T00:00:00Z"),     /* highest priority */
        qpod("a", "0", "2024-01-01T00:59:59.5+01:00"), /* = 23:59:59.5Z the day before */
        qpod("f", "0", NULL),                          /* no timestamp: last of its priority */
        qpod("g", "0", "2023-12-31T23:59:59.25Z"),     /* before a by the fraction */
    };
    qsort(pods, N(pods), sizeof pods[0], qsort_cmp);
    const char *want[] = {"b", "g", "a", "d", "e", "f", "c"};
    for (size_t i = 0; i < N(pods); i++) {
        const char *got =
            json_string_value(json_object_get(json_object_get(pods[i], "metadata"), "name"));
        assert_string_equal(got, want[i]);
    }
    assert_int_equal(sched_queue_cmp(pods[0], pods[0]), 0);
    for (size_t i = 0; i < N(pods); i++)
        json_decref(pods[i]);
}

static void test_backoff(void **s)
{
    const int64_t want[] = {0, 1000, 2000, 4000, 8000, 10000, 10000};
    for (int i = 0; i < (int)N(want); i++)
        assert_int_equal(sched_backoff_ms(i), want[i]);
    assert_int_equal(sched_backoff_ms(-1), 0);
    assert_int_equal(sched_backoff_ms(1000000), 10000);
}

static void test_pod_ours_gated(void **s)
{
    json_t *p = J("{'metadata':{'name':'p'},'spec':{}}");
    assert_true(sched_pod_ours(p));
    assert_false(sched_pod_gated(p));
    json_decref(p);
    p = J("{'metadata':{'name':'p'},'spec':{'schedulerName':'default-scheduler',"
          "'schedulingGates':[{'name':'g'}]}}");
    assert_true(sched_pod_ours(p));
    assert_true(sched_pod_gated(p));
    json_decref(p);
    p = J("{'metadata':{'name':'p'},'spec':{'schedulerName':'other'}}");
    assert_false(sched_pod_ours(p));
    json_decref(p);
    p = J("{'metadata':{'name':'p'},'spec':{'nodeName':'n1'}}");
    assert_false(sched_pod_ours(p));
    json_decref(p);
    p = J("{'metadata':{'name':'p','deletionTimestamp':'2024-01-01T00:00:00Z'},'spec':{}}");
    assert_false(sched_pod_ours(p));
    json_decref(p);
}

static void test_event_unparks(void **s)
{
    /* room or nodes that may fit: un-park */
    assert_true(sched_event_unparks(SCHED_EV_NODE_ADDED));
    assert_true(sched_event_unparks(SCHED_EV_NODE_UPDATED));
    assert_true(sched_event_unparks(SCHED_EV_POD_FREED));
    assert_true(sched_event_unparks(SCHED_EV_POD_RESIZED));
    assert_true(sched_event_unparks(SCHED_EV_BIND_FAILED));
    /* room or nodes taken away, or quota (its own wake-ups): stay parked */
    assert_false(sched_event_unparks(SCHED_EV_NODE_DELETED));
    assert_false(sched_event_unparks(SCHED_EV_POD_ASSIGNED));
    assert_false(sched_event_unparks(SCHED_EV_QUOTA_CHANGED));
    assert_true(sched_event_unparks((sched_event)99)); /* unknown: retry rather than strand */
}

/* Whether the node update from a to b un-parks; a and b are J() texts. */
static bool node_unparks(const char *a, const char *b)
{
    json_t *x = a ? J(a) : NULL, *y = J(b);
    bool r = sched_node_update_unparks(x, y);
    json_decref(x);
    json_decref(y);
    return r;
}

static void test_node_update_unparks(void **s)
{
#define BASE "'metadata':{'name':'n','labels':{'zone':'a'}},'status':{'allocatable':{'cpu':'2'}"
    const char *plain = "{" BASE ",'conditions':[{'type':'Ready','status':'False'}]}}";
    /* a new node */
    assert_true(node_unparks(NULL, plain));
    /* heartbeat and condition changes: no */
    assert_false(node_unparks(plain, plain));
    assert_false(node_unparks(plain, "{" BASE ",'conditions':[{'type':'Ready','status':'True',"
                                     "'lastHeartbeatTime':'2024-01-01T00:00:00Z'}]}}"));
    assert_false(node_unparks(plain, "{" BASE "},'spec':{'taints':[]}}"));
    /* allocatable changed */
    assert_true(node_unparks(plain, "{'metadata':{'name':'n','labels':{'zone':'a'}},"
                                    "'status':{'allocatable':{'cpu':'4'}}}"));
    assert_true(node_unparks(plain, "{'metadata':{'name':'n','labels':{'zone':'a'}},"
                                    "'status':{'allocatable':{'cpu':'2','pods':'10'}}}"));
    /* labels changed, added or removed */
    assert_true(node_unparks(plain, "{'metadata':{'name':'n','labels':{'zone':'b'}},"
                                    "'status':{'allocatable':{'cpu':'2'}}}"));
    assert_true(
        node_unparks(plain, "{'metadata':{'name':'n'},'status':{'allocatable':{'cpu':'2'}}}"));
    assert_false(
        node_unparks("{'metadata':{'name':'n'}}", "{'metadata':{'name':'n','labels':{}}}"));
    /* cordon: no; uncordon: yes */
    const char *cordoned = "{" BASE "},'spec':{'unschedulable':true}}";
    assert_false(node_unparks(plain, cordoned));
    assert_true(node_unparks(cordoned, plain));
    assert_true(node_unparks(cordoned, "{" BASE "},'spec':{'unschedulable':false}}"));
    /* taints: added no; a filtering one removed or changed yes; PreferNoSchedule no */
    const char *tainted = "{" BASE "},'spec':{'taints':[{'key':'k','value':'v','effect':"
                          "'NoSchedule'},{'key':'p','effect':'PreferNoSchedule'}]}}";
    assert_false(node_unparks(plain, tainted));
    assert_true(node_unparks(tainted, plain));
    assert_true(node_unparks(tainted, "{" BASE "},'spec':{'taints':[{'key':'k','value':'w',"
                                      "'effect':'NoSchedule'}]}}"));
    assert_true(node_unparks(tainted, "{" BASE "},'spec':{'taints':[{'key':'k','value':'v',"
                                      "'effect':'NoExecute'}]}}"));
    assert_false(node_unparks(tainted, "{" BASE "},'spec':{'taints':[{'key':'k','value':'v',"
                                       "'effect':'NoSchedule','timeAdded':'2024-01-01T00:00:00Z'"
                                       "}]}}"));
    assert_false(node_unparks(tainted, "{" BASE "},'spec':{'taints':[{'key':'k','value':'v',"
                                       "'effect':'NoSchedule'}]}}"));
#undef BASE
}

static void test_unpark_timing(void **s)
{
    /* un-parked: due at once when its backoff is over, else when it ends */
    assert_int_equal(sched_unpark_due(5000, 0), 5000);
    assert_int_equal(sched_unpark_due(5000, 5000), 5000);
    assert_int_equal(sched_unpark_due(5000, 9000), 9000);
    /* the flush: after SCHED_PARK_MAX_MS (5 minutes), not before */
    assert_int_equal(SCHED_PARK_MAX_MS, 300000);
    assert_false(sched_park_expired(1000, 1000));
    assert_false(sched_park_expired(1000, 1000 + SCHED_PARK_MAX_MS - 1));
    assert_true(sched_park_expired(1000, 1000 + SCHED_PARK_MAX_MS));
    assert_true(sched_park_expired(1000, 1000 + 10 * SCHED_PARK_MAX_MS));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unschedulable),
        cmocka_unit_test(test_taints),
        cmocka_unit_test(test_node_selector),
        cmocka_unit_test(test_affinity_operators),
        cmocka_unit_test(test_affinity_fields),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_filter_order_and_errors),
        cmocka_unit_test(test_nonzero_requests),
        cmocka_unit_test(test_nonzero_requests_odd_shapes),
        cmocka_unit_test(test_pod_prepared),
        cmocka_unit_test(test_node_prepare),
        cmocka_unit_test(test_pick_sampled_prepared),
        cmocka_unit_test(test_score),
        cmocka_unit_test(test_pick_least_allocated),
        cmocka_unit_test(test_fit_error_one_node),
        cmocka_unit_test(test_fit_error_three_nodes),
        cmocka_unit_test(test_fit_error_sorts_as_strings),
        cmocka_unit_test(test_affinity_prefilter),
        cmocka_unit_test(test_no_nodes),
        cmocka_unit_test(test_quota_message),
        cmocka_unit_test(test_queue_order),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_pod_ours_gated),
        cmocka_unit_test(test_event_unparks),
        cmocka_unit_test(test_node_update_unparks),
        cmocka_unit_test(test_unpark_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
