/* test_table.c - server-side Table output against upstream printers.go
 * (v1.32) and duration.HumanDuration: for each served kind a representative
 * object and the cells upstream prints for it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/kinds.h"
#include "api/table.h"

#include <stdlib.h>
#include <string.h>

/* 2023-11-14T22:13:20Z; the T_* stamps are that long before it. */
#define NOW 1700000000
#define T_10S "2023-11-14T22:13:10Z"
#define T_5M "2023-11-14T22:08:20Z"
#define T_3H "2023-11-14T19:13:20Z"
#define T_2D "2023-11-12T22:13:20Z"

/* JSON written with single quotes (none of the texts here needs one). */
static json_t *J(const char *s)
{
    char *d = strdup(s);
    for (char *p = d; *p; p++)
        if (*p == '\'') *p = '"';
    json_error_t err;
    json_t *v = json_loads(d, JSON_DECODE_ANY, &err);
    if (!v) fail_msg("bad test JSON (%s): %s", err.text, d);
    free(d);
    return v;
}

static const api_kind *kind(const char *group, const char *resource)
{
    const api_kind *k = api_kind_find(group, "v1", resource);
    assert_non_null(k);
    return k;
}

/* Build a one-row Table of `obj` and return it (caller decrefs). */
static json_t *table1(const char *group, const char *resource, const char *obj, const char *include)
{
    json_t *items = json_array();
    json_array_append_new(items, J(obj));
    json_t *t = table_build(kind(group, resource), items, include, NOW, NULL);
    json_decref(items);
    assert_non_null(t);
    return t;
}

static void assert_json_eq(const json_t *got, const json_t *want)
{
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
        char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
        fail_msg("got  %s\nwant %s", g, w);
    }
}

/* The single row's cells equal `want` (a JSON array, single-quoted). */
static void expect_cells(const char *group, const char *resource, const char *obj, const char *want)
{
    json_t *t = table1(group, resource, obj, "None");
    json_t *w = J(want);
    json_t *cells = json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells");
    assert_json_eq(cells, w);
    assert_int_equal(json_array_size(cells),
                     json_array_size(json_object_get(t, "columnDefinitions")));
    json_decref(w);
    json_decref(t);
}

/* The column names, and which are priority 1, of a resource's table. */
static void expect_columns(const char *group, const char *resource, const char *names,
                           const char *wide)
{
    json_t *t = table1(group, resource, "{'metadata':{'name':'x'}}", NULL);
    json_t *got = json_array(), *got_wide = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(t, "columnDefinitions"), i, c)
    {
        json_array_append(got, json_object_get(c, "name"));
        if (json_integer_value(json_object_get(c, "priority")) == 1)
            json_array_append(got_wide, json_object_get(c, "name"));
    }
    json_t *w = J(names), *ww = J(wide);
    assert_json_eq(got, w);
    assert_json_eq(got_wide, ww);
    json_decref(w);
    json_decref(ww);
    json_decref(got);
    json_decref(got_wide);
    json_decref(t);
}

/* ---- HumanDuration ---- */

static void test_human_duration(void **state)
{
    static const struct {
        int64_t s;
        const char *want;
    } v[] = {
        {-2, "<invalid>"},     {-1, "0s"},         {0, "0s"},         {59, "59s"},
        {60, "60s"},           {119, "119s"},      {120, "2m"},       {123, "2m3s"},
        {599, "9m59s"},        {600, "10m"},       {659, "10m"},      {10799, "179m"},
        {10800, "3h"},         {10860, "3h1m"},    {28799, "7h59m"},  {28800, "8h"},
        {172799, "47h"},       {172800, "2d"},     {183600, "2d3h"},  {691199, "7d23h"},
        {691200, "8d"},        {63071999, "729d"}, {63072000, "2y"},  {63331200, "2y3d"},
        {252287999, "7y364d"}, {252288000, "8y"},  {292464000, "9y"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        assert_string_equal(table_human_duration(v[i].s, buf, sizeof buf), v[i].want);
}

static void test_parse_time(void **state)
{
    int64_t t = 0;
    json_t *v = json_string("2023-11-14T22:13:20Z");
    assert_true(table_parse_time(v, &t));
    assert_int_equal(t, NOW);
    json_decref(v);
    v = json_string("2023-11-14T23:13:20.123456+01:00");
    assert_true(table_parse_time(v, &t));
    assert_int_equal(t, NOW);
    json_decref(v);
    v = json_string("1970-01-01T00:00:00Z");
    assert_true(table_parse_time(v, &t));
    assert_int_equal(t, 0);
    json_decref(v);
    const char *bad[] = {"0001-01-01T00:00:00Z",
                         "2023-11-14 22:13:20Z",
                         "2023-11-14T22:13:20",
                         "2023-13-14T22:13:20Z",
                         "yesterday",
                         ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        v = json_string(bad[i]);
        assert_false(table_parse_time(v, &t));
        json_decref(v);
    }
    assert_false(table_parse_time(NULL, &t));
}

/* ---- the Table frame ---- */

static void test_frame_and_include_object(void **state)
{
    const char *pod = "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p','namespace':'ns',"
                      "'uid':'u1','creationTimestamp':'" T_5M "'},'spec':{'containers':[{}]}}";
    json_t *t = table1("", "pods", pod, NULL);
    assert_string_equal(json_string_value(json_object_get(t, "kind")), "Table");
    assert_string_equal(json_string_value(json_object_get(t, "apiVersion")), "meta.k8s.io/v1");
    json_t *col0 = json_array_get(json_object_get(t, "columnDefinitions"), 0);
    json_t *want = J("{'name':'Name','type':'string','format':'name','priority':0}");
    json_object_set(want, "description", json_object_get(col0, "description"));
    assert_json_eq(col0, want);
    json_decref(want);
    json_t *obj = json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object");
    want = J("{'kind':'PartialObjectMetadata','apiVersion':'meta.k8s.io/v1','metadata':"
             "{'name':'p','namespace':'ns','uid':'u1','creationTimestamp':'" T_5M "'}}");
    assert_json_eq(obj, want);
    json_decref(want);
    json_decref(t);

    t = table1("", "pods", pod, "None");
    assert_true(
        json_is_null(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object")));
    json_decref(t);

    t = table1("", "pods", pod, "Object");
    want = J(pod);
    assert_json_eq(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object"), want);
    json_decref(want);
    json_decref(t);

    /* Object without apiVersion/kind gets them from the kind row. */
    t = table1("apps", "deployments", "{'metadata':{'name':'d'}}", "Object");
    json_t *o = json_object_get(json_array_get(json_object_get(t, "rows"), 0), "object");
    assert_string_equal(json_string_value(json_object_get(o, "apiVersion")), "apps/v1");
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "Deployment");
    json_decref(t);

    assert_true(table_include_object_valid(NULL));
    assert_true(table_include_object_valid("Metadata"));
    assert_true(table_include_object_valid("None"));
    assert_true(table_include_object_valid("Object"));
    assert_false(table_include_object_valid("metadata"));
}

static void test_list_meta_and_empty(void **state)
{
    json_t *items = json_array();
    json_t *lm = J("{'resourceVersion':'42','continue':'abc','remainingItemCount':7}");
    json_t *t = table_build(kind("", "configmaps"), items, "Metadata", NOW, lm);
    json_t *want = J("{'resourceVersion':'42','continue':'abc','remainingItemCount':7}");
    assert_json_eq(json_object_get(t, "metadata"), want);
    assert_true(json_is_array(json_object_get(t, "rows")));
    assert_int_equal(json_array_size(json_object_get(t, "rows")), 0);
    json_decref(want);
    json_decref(t);
    json_decref(lm);

    lm = J("{'resourceVersion':'42','continue':''}");
    t = table_build(kind("", "configmaps"), NULL, NULL, NOW, lm);
    want = J("{'resourceVersion':'42'}");
    assert_json_eq(json_object_get(t, "metadata"), want);
    json_decref(want);
    json_decref(t);
    json_decref(lm);

    t = table_build(kind("", "configmaps"), items, NULL, NOW, NULL);
    assert_int_equal(json_object_size(json_object_get(t, "metadata")), 0);
    json_decref(t);
    json_decref(items);
}

/* Every served kind: one cell per column, for a bare object and a name-only one. */
static void test_every_kind_shape(void **state)
{
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        json_t *items = J("[{}, {'metadata':{'name':'x'}}, {'metadata':{'name':'y',"
                          "'creationTimestamp':'" T_3H "'},'spec':null,'status':[]}]");
        json_t *t = table_build(k, items, "Metadata", NOW, NULL);
        size_t ncols = json_array_size(json_object_get(t, "columnDefinitions")), r;
        json_t *row;
        assert_true(ncols >= 2);
        json_array_foreach(json_object_get(t, "rows"), r, row)
        {
            assert_int_equal(json_array_size(json_object_get(row, "cells")), ncols);
        }
        assert_int_equal(json_array_size(json_object_get(t, "rows")), 3);
        json_decref(t);
        json_decref(items);
    }
}

/* ---- pods ---- */

#define POD_META(name) "'metadata':{'name':'" name "','creationTimestamp':'" T_5M "'}"

static void test_pod_columns(void **state)
{
    expect_columns("", "pods",
                   "['Name','Ready','Status','Restarts','Age','IP','Node','Nominated Node',"
                   "'Readiness Gates']",
                   "['IP','Node','Nominated Node','Readiness Gates']");
}

static void test_pod_running(void **state)
{
    expect_cells(
        "", "pods",
        "{" POD_META("web") ",'spec':{'nodeName':'node-1','containers':[{'name':'a'},"
                            "{'name':'b'}]},'status':{'phase':'Running','podIP':'10.0.0.5',"
                            "'conditions':[{'type':'Ready','status':'True'}],"
                            "'containerStatuses':[{'name':'a','ready':true,'restartCount':0,"
                            "'state':{'running':{}}},{'name':'b','ready':true,'restartCount':1,"
                            "'state':{'running':{}},'lastState':{'terminated':{'exitCode':1,"
                            "'finishedAt':'" T_5M "'}}}]}}",
        "['web','2/2','Running','1 (5m ago)','5m','10.0.0.5','node-1','<none>','<none>']");
    /* podIPs wins over podIP; restarts without a known time have no "(ago)". */
    expect_cells(
        "", "pods",
        "{" POD_META("web") ",'spec':{'containers':[{'name':'a'}]},'status':{'phase':"
                            "'Running','podIP':'10.0.0.5','podIPs':[{'ip':'fd00::5'}],"
                            "'containerStatuses':[{'name':'a','ready':false,'restartCount':3,"
                            "'state':{'running':{}}}]}}",
        "['web','0/1','Running','3','5m','fd00::5','<none>','<none>','<none>']");
}

static void test_pod_pending(void **state)
{
    expect_cells("", "pods",
                 "{'metadata':{'name':'p','creationTimestamp':'" T_10S "'},"
                 "'spec':{'containers':[{'name':'a'}]},'status':{'phase':'Pending'}}",
                 "['p','0/1','Pending','0','10s','<none>','<none>','<none>','<none>']");
    expect_cells(
        "", "pods",
        "{" POD_META("p") ",'spec':{'nodeName':'n','containers':[{'name':'a'}]},'status':"
                          "{'phase':'Pending','containerStatuses':[{'name':'a','ready':false,"
                          "'restartCount':0,'state':{'waiting':{'reason':"
                          "'ContainerCreating'}}}]}}",
        "['p','0/1','ContainerCreating','0','5m','<none>','n','<none>','<none>']");
    expect_cells("", "pods",
                 "{" POD_META("p") ",'spec':{'containers':[{'name':'a'}]},'status':{'phase':"
                                   "'Running','containerStatuses':[{'name':'a','restartCount':4,"
                                   "'state':{'waiting':{'reason':'CrashLoopBackOff'}},'lastState':"
                                   "{'terminated':{'exitCode':1,'finishedAt':'" T_10S "'}}}]}}",
                 "['p','0/1','CrashLoopBackOff','4 (10s ago)','5m','<none>','<none>','<none>',"
                 "'<none>']");
}

static void test_pod_scheduling_gated(void **state)
{
    expect_cells("", "pods",
                 "{" POD_META("g") ",'spec':{'schedulingGates':[{'name':'wait'}],'containers':"
                                   "[{'name':'a'}]},'status':{'phase':'Pending'}}",
                 "['g','0/1','SchedulingGated','0','5m','<none>','<none>','<none>','<none>']");
    expect_cells(
        "", "pods",
        "{" POD_META("g") ",'spec':{'containers':[{'name':'a'}]},'status':{'phase':"
                          "'Pending','conditions':[{'type':'PodScheduled','status':'False',"
                          "'reason':'SchedulingGated'}]}}",
        "['g','0/1','SchedulingGated','0','5m','<none>','<none>','<none>','<none>']");
    expect_cells(
        "", "pods",
        "{" POD_META("u") ",'spec':{'containers':[{'name':'a'}]},'status':{'phase':"
                          "'Pending','conditions':[{'type':'PodScheduled','status':'False',"
                          "'reason':'Unschedulable'}]}}",
        "['u','0/1','Pending','0','5m','<none>','<none>','<none>','<none>']");
}

static void test_pod_terminating(void **state)
{
    expect_cells(
        "", "pods",
        "{'metadata':{'name':'t','creationTimestamp':'" T_2D "','deletionTimestamp':'" T_10S
        "'},'spec':{'nodeName':'n','containers':[{'name':'a'}]},'status':{'phase':"
        "'Running','containerStatuses':[{'name':'a','ready':true,'state':{'running':{}}}]}}",
        "['t','1/1','Terminating','0','2d','<none>','n','<none>','<none>']");
    /* A finished pod being deleted keeps its phase; a lost node reads Unknown. */
    expect_cells("", "pods",
                 "{'metadata':{'name':'t','creationTimestamp':'" T_2D
                 "','deletionTimestamp':'" T_10S
                 "'},'spec':{'containers':[{'name':'a'}]},'status':{'phase':'Succeeded'}}",
                 "['t','0/1','Succeeded','0','2d','<none>','<none>','<none>','<none>']");
    expect_cells("", "pods",
                 "{'metadata':{'name':'t','creationTimestamp':'" T_2D
                 "','deletionTimestamp':'" T_10S
                 "'},'spec':{'containers':[{'name':'a'}]},'status':{'phase':'Running',"
                 "'reason':'NodeLost'}}",
                 "['t','0/1','Unknown','0','2d','<none>','<none>','<none>','<none>']");
}

static void test_pod_completed(void **state)
{
    const char *pod = "{" POD_META(
        "job-x") ",'spec':{'nodeName':'n','containers':[{'name':'a'}]},'status':{"
                 "'phase':'Succeeded','podIP':'10.0.0.9','containerStatuses':[{'name':"
                 "'a','ready':false,'restartCount':0,'state':{'terminated':{'exitCode':"
                 "0,'reason':'Completed'}}}]}}";
    expect_cells("", "pods", pod,
                 "['job-x','0/1','Completed','0','5m','10.0.0.9','n','<none>','<none>']");
    json_t *t = table1("", "pods", pod, NULL);
    json_t *want = J("[{'type':'Completed','status':'True','reason':'Succeeded',"
                     "'message':'The pod has completed successfully.'}]");
    assert_json_eq(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "conditions"),
                   want);
    json_decref(want);
    json_decref(t);
    /* Terminated without a reason: the signal, else the exit code. */
    expect_cells(
        "", "pods",
        "{" POD_META("f") ",'spec':{'containers':[{'name':'a'}]},'status':{'phase':"
                          "'Failed','containerStatuses':[{'name':'a','state':{'terminated':"
                          "{'exitCode':137,'signal':9}}}]}}",
        "['f','0/1','Signal:9','0','5m','<none>','<none>','<none>','<none>']");
    expect_cells(
        "", "pods",
        "{" POD_META("f") ",'spec':{'containers':[{'name':'a'}]},'status':{'phase':"
                          "'Failed','containerStatuses':[{'name':'a','state':{'terminated':"
                          "{'exitCode':2}}}]}}",
        "['f','0/1','ExitCode:2','0','5m','<none>','<none>','<none>','<none>']");
    /* Completed with a container still running: Running if the pod is Ready. */
    expect_cells(
        "", "pods",
        "{" POD_META("m") ",'spec':{'containers':[{'name':'a'},{'name':'b'}]},'status':{"
                          "'phase':'Running','conditions':[{'type':'Ready','status':'False'}],"
                          "'containerStatuses':[{'name':'a','ready':true,'state':{'running':"
                          "{}}},{'name':'b','state':{'terminated':{'exitCode':0,'reason':"
                          "'Completed'}}}]}}",
        "['m','1/2','NotReady','0','5m','<none>','<none>','<none>','<none>']");
}

static void test_pod_init(void **state)
{
    expect_cells("", "pods",
                 "{" POD_META("i") ",'spec':{'initContainers':[{'name':'i1'},{'name':'i2'}],"
                                   "'containers':[{'name':'a'}]},'status':{'phase':'Pending',"
                                   "'initContainerStatuses':[{'name':'i1','state':{'terminated':"
                                   "{'exitCode':0,'reason':'Completed'}}},{'name':'i2','state':"
                                   "{'running':{}}}]}}",
                 "['i','0/1','Init:1/2','0','5m','<none>','<none>','<none>','<none>']");
    expect_cells(
        "", "pods",
        "{" POD_META("i") ",'spec':{'initContainers':[{'name':'i1'}],'containers':[{'name':"
                          "'a'}]},'status':{'phase':'Pending','initContainerStatuses':[{"
                          "'name':'i1','restartCount':2,'state':{'waiting':{'reason':"
                          "'CrashLoopBackOff'}},'lastState':{'terminated':{'exitCode':1,"
                          "'finishedAt':'" T_3H "'}}}]}}",
        "['i','0/1','Init:CrashLoopBackOff','2 (3h ago)','5m','<none>','<none>','<none>',"
        "'<none>']");
    expect_cells(
        "", "pods",
        "{" POD_META("i") ",'spec':{'initContainers':[{'name':'i1'}],'containers':[{'name':"
                          "'a'}]},'status':{'phase':'Pending','initContainerStatuses':[{"
                          "'name':'i1','state':{'terminated':{'exitCode':1}}}]}}",
        "['i','0/1','Init:ExitCode:1','0','5m','<none>','<none>','<none>','<none>']");
    /* PodInitializing is not a reason: the init counter shows instead. */
    expect_cells(
        "", "pods",
        "{" POD_META("i") ",'spec':{'initContainers':[{'name':'i1'}],'containers':[{'name':"
                          "'a'}]},'status':{'phase':'Pending','initContainerStatuses':[{"
                          "'name':'i1','state':{'waiting':{'reason':'PodInitializing'}}}]}}",
        "['i','0/1','Init:0/1','0','5m','<none>','<none>','<none>','<none>']");
    /* A started sidecar counts in READY and TOTAL and does not block. */
    expect_cells(
        "", "pods",
        "{" POD_META("s") ",'spec':{'initContainers':[{'name':'side','restartPolicy':"
                          "'Always'}],'containers':[{'name':'a'}]},'status':{'phase':"
                          "'Running','initContainerStatuses':[{'name':'side','started':true,"
                          "'ready':true,'restartCount':1,'state':{'running':{}}}],"
                          "'containerStatuses':[{'name':'a','ready':true,'state':{'running':"
                          "{}}}]}}",
        "['s','2/2','Running','1','5m','<none>','<none>','<none>','<none>']");
}

static void test_pod_readiness_gates(void **state)
{
    expect_cells(
        "", "pods",
        "{" POD_META("r") ",'spec':{'readinessGates':[{'conditionType':'x/a'},"
                          "{'conditionType':'x/b'}],'containers':[{'name':'a'}]},'status':{"
                          "'phase':'Running','nominatedNodeName':'n2','conditions':[{'type':"
                          "'x/a','status':'True'},{'type':'x/b','status':'False'}]}}",
        "['r','0/1','Running','0','5m','<none>','<none>','n2','1/2']");
}

/* ---- the other kinds ---- */

static void test_namespace(void **state)
{
    expect_columns("", "namespaces", "['Name','Status','Age']", "[]");
    expect_cells("", "namespaces",
                 "{'metadata':{'name':'default','creationTimestamp':'" T_2D "'},'status':{'phase':"
                 "'Active'}}",
                 "['default','Active','2d']");
    /* No creationTimestamp: <unknown>, as for a zero metav1.Time. */
    expect_cells("", "namespaces", "{'metadata':{'name':'x'}}", "['x','','<unknown>']");
}

static void test_node(void **state)
{
    expect_columns("", "nodes",
                   "['Name','Status','Roles','Age','Version','Internal-IP','External-IP',"
                   "'OS-Image','Kernel-Version','Container-Runtime']",
                   "['Internal-IP','External-IP','OS-Image','Kernel-Version','Container-Runtime']");
    expect_cells("", "nodes",
                 "{'metadata':{'name':'n1','creationTimestamp':'" T_2D "','labels':{"
                 "'node-role.kubernetes.io/control-plane':'','kubernetes.io/role':'infra',"
                 "'node-role.kubernetes.io/':''}},'spec':{'unschedulable':true},'status':{"
                 "'conditions':[{'type':'MemoryPressure','status':'False'},{'type':'Ready',"
                 "'status':'True'}],'addresses':[{'type':'Hostname','address':'n1'},{'type':"
                 "'InternalIP','address':'10.0.0.1'}],'nodeInfo':{'kubeletVersion':'v1.30.0',"
                 "'osImage':'Debian GNU/Linux 12'}}}",
                 "['n1','Ready,SchedulingDisabled','control-plane,infra','2d','v1.30.0',"
                 "'10.0.0.1','<none>','Debian GNU/Linux 12','<unknown>','<unknown>']");
    expect_cells("", "nodes",
                 "{'metadata':{'name':'n2','creationTimestamp':'" T_3H "'},'status':{"
                 "'conditions':[{'type':'Ready','status':'Unknown'}]}}",
                 "['n2','NotReady','<none>','3h','','<none>','<none>','<unknown>','<unknown>',"
                 "'<unknown>']");
    expect_cells("", "nodes", "{'metadata':{'name':'n3','creationTimestamp':'" T_3H "'}}",
                 "['n3','Unknown','<none>','3h','','<none>','<none>','<unknown>','<unknown>',"
                 "'<unknown>']");
}

static void test_resourcequota(void **state)
{
    expect_columns("", "resourcequotas", "['Name','Request','Limit','Age']", "[]");
    /* spec §7.1: the columns' descriptions, as upstream's printer declares them. */
    json_t *t = table1("", "resourcequotas", "{'metadata':{'name':'x'}}", NULL);
    json_t *cols = json_object_get(t, "columnDefinitions");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(cols, 1), "description")),
        "Request represents a minimum amount of cpu/memory that a container may consume.");
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(cols, 2), "description")),
        "Limits control the maximum amount of cpu/memory that a container may use independent of "
        "contention on the node.");
    json_decref(t);
    /* spec §7.1's example, plus a hard key with no usage yet ("0"). */
    expect_cells("", "resourcequotas",
                 "{'metadata':{'name':'q','creationTimestamp':'" T_5M "'},'spec':{'hard':{"
                 "'pods':'10'}},'status':{'hard':{'requests.cpu':'1500m','limits.cpu':'2',"
                 "'pods':'10','count/configmaps':'5','limits.memory':'1Gi'},'used':{"
                 "'requests.cpu':'375m','limits.cpu':'500m','pods':'3','limits.memory':'0'}}}",
                 "['q','count/configmaps: 0/5, pods: 3/10, requests.cpu: 375m/1500m',"
                 "'limits.cpu: 500m/2, limits.memory: 0/1Gi','5m']");
    /* Not yet counted by the controller: both columns blank. */
    expect_cells("", "resourcequotas",
                 "{'metadata':{'name':'q','creationTimestamp':'" T_10S "'},'spec':{'hard':{"
                 "'pods':'10'}}}",
                 "['q','','','10s']");
    /* "limits" alone is not "limits.<x>": it goes to REQUEST. */
    expect_cells("", "resourcequotas",
                 "{'metadata':{'name':'q','creationTimestamp':'" T_10S "'},'status':{'hard':{"
                 "'limits':'1'},'used':{'limits':'1'}}}",
                 "['q','limits: 1/1','','10s']");
}

static void test_limitrange_default_table(void **state)
{
    json_t *t =
        table1("", "limitranges",
               "{'metadata':{'name':'lr','creationTimestamp':'2023-11-14T23:08:20+01:00'}}", NULL);
    json_t *cols = json_object_get(t, "columnDefinitions");
    assert_int_equal(json_array_size(cols), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 1), "name")),
                        "Created At");
    assert_string_equal(json_string_value(json_object_get(json_array_get(cols, 1), "type")),
                        "date");
    json_decref(t);
    expect_cells("", "limitranges",
                 "{'metadata':{'name':'lr','creationTimestamp':'2023-11-14T23:08:20+01:00'}}",
                 "['lr','" T_5M "']");
    expect_cells("", "limitranges", "{'metadata':{'name':'lr'}}", "['lr','0001-01-01T00:00:00Z']");
}

static void test_service(void **state)
{
    expect_columns("", "services",
                   "['Name','Type','Cluster-IP','External-IP','Port(s)','Age','Selector']",
                   "['Selector']");
    expect_cells("", "services",
                 "{'metadata':{'name':'web','creationTimestamp':'" T_5M "'},'spec':{'type':"
                 "'NodePort','clusterIP':'10.96.0.10','clusterIPs':['10.96.0.10'],'ports':[{"
                 "'port':80,'targetPort':8080,'nodePort':30080,'protocol':'TCP'}],'selector':{"
                 "'tier':'fe','app':'web'}}}",
                 "['web','NodePort','10.96.0.10','<none>','80:30080/TCP','5m','app=web,tier=fe']");
    expect_cells("", "services",
                 "{'metadata':{'name':'db','creationTimestamp':'" T_5M "'},'spec':{'type':"
                 "'ClusterIP','clusterIP':'None','ports':[{'port':5432},{'port':53,'protocol':"
                 "'UDP'}]}}",
                 "['db','ClusterIP','None','<none>','5432/TCP,53/UDP','5m','<none>']");
    expect_cells("", "services",
                 "{'metadata':{'name':'lb','creationTimestamp':'" T_5M "'},'spec':{'type':"
                 "'LoadBalancer','clusterIPs':['10.96.0.11'],'externalIPs':['192.0.2.9'],"
                 "'ports':[{'port':443,'nodePort':31443,'protocol':'TCP'}]},'status':{"
                 "'loadBalancer':{'ingress':[{'ip':'203.0.113.7'},{'hostname':'lb.example.com'},"
                 "{'ip':'203.0.113.7'}]}}}",
                 "['lb','LoadBalancer','10.96.0.11','203.0.113.7,lb.example.com,192.0.2.9',"
                 "'443:31443/TCP','5m','<none>']");
    expect_cells("", "services",
                 "{'metadata':{'name':'lb','creationTimestamp':'" T_5M "'},'spec':{'type':"
                 "'LoadBalancer','clusterIPs':['10.96.0.11'],'ports':[{'port':443,'nodePort':"
                 "31443,'protocol':'TCP'}]}}",
                 "['lb','LoadBalancer','10.96.0.11','<pending>','443:31443/TCP','5m','<none>']");
    expect_cells("", "services",
                 "{'metadata':{'name':'ext','creationTimestamp':'" T_5M "'},'spec':{'type':"
                 "'ExternalName','externalName':'example.com'}}",
                 "['ext','ExternalName','<none>','example.com','<none>','5m','<none>']");
}

/* printEndpoints / formatEndpoints: ip:port per address and port, three at
 * most and " + N more..."; a subset without ports lists bare addresses. */
static void test_endpoints(void **state)
{
    expect_columns("", "endpoints", "['Name','Endpoints','Age']", "[]");
    expect_cells("", "endpoints",
                 "{'metadata':{'name':'kubernetes','creationTimestamp':'" T_5M "'},'subsets':[{"
                 "'addresses':[{'ip':'10.0.0.1'}],'ports':[{'name':'https','port':6443}]}]}",
                 "['kubernetes','10.0.0.1:6443','5m']");
    expect_cells("", "endpoints", "{'metadata':{'name':'e','creationTimestamp':'" T_5M "'}}",
                 "['e','<none>','5m']");
    expect_cells("", "endpoints",
                 "{'metadata':{'name':'e','creationTimestamp':'" T_5M "'},'subsets':[{"
                 "'addresses':[{'ip':'10.0.0.1'},{'ip':'fd00::2'}],'ports':[{'port':80},{"
                 "'port':443}]},{'addresses':[{'ip':'10.0.0.3'}]}]}",
                 "['e','10.0.0.1:80,[fd00::2]:80,10.0.0.1:443 + 2 more...','5m']");
}

/* printEndpointSlice: ports by number (else name, else *), every address,
 * three of each at most; <unset> for none. */
static void test_endpointslice(void **state)
{
    expect_columns("discovery.k8s.io", "endpointslices",
                   "['Name','AddressType','Ports','Endpoints','Age']", "[]");
    expect_cells("discovery.k8s.io", "endpointslices",
                 "{'metadata':{'name':'kubernetes','creationTimestamp':'" T_5M "'},'addressType':"
                 "'IPv4','endpoints':[{'addresses':['10.0.0.1']}],'ports':[{'name':'https',"
                 "'port':6443}]}",
                 "['kubernetes','IPv4','6443','10.0.0.1','5m']");
    expect_cells("discovery.k8s.io", "endpointslices",
                 "{'metadata':{'name':'s','creationTimestamp':'" T_5M "'},'addressType':'IPv4',"
                 "'endpoints':[{'addresses':['10.0.0.1','10.0.0.2']},{'addresses':['10.0.0.3',"
                 "'10.0.0.4','10.0.0.5']}],'ports':[{'name':'web'},{}]}",
                 "['s','IPv4','web,*','10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...','5m']");
    expect_cells("discovery.k8s.io", "endpointslices",
                 "{'metadata':{'name':'e','creationTimestamp':'" T_5M "'},'addressType':'FQDN'}",
                 "['e','FQDN','<unset>','<unset>','5m']");
}

static void test_pvc(void **state)
{
    expect_columns("", "persistentvolumeclaims",
                   "['Name','Status','Volume','Capacity','Access Modes','StorageClass',"
                   "'VolumeAttributesClass','Age','VolumeMode']",
                   "['VolumeMode']");
    expect_cells("", "persistentvolumeclaims",
                 "{'metadata':{'name':'data','creationTimestamp':'" T_5M "'},'spec':{"
                 "'storageClassName':'standard','volumeName':'pv-1','volumeMode':'Filesystem',"
                 "'resources':{'requests':{'storage':'1Gi'}}},'status':{'phase':'Bound',"
                 "'accessModes':['ReadWriteMany','ReadWriteOnce','ReadWriteOnce'],'capacity':{"
                 "'storage':'2Gi'}}}",
                 "['data','Bound','pv-1','2Gi','RWO,RWX','standard','<unset>','5m','Filesystem']");
    expect_cells("", "persistentvolumeclaims",
                 "{'metadata':{'name':'data','creationTimestamp':'" T_5M "','annotations':{"
                 "'volume.beta.kubernetes.io/storage-class':'beta'},'deletionTimestamp':'" T_10S
                 "'},'spec':{'storageClassName':'standard','resources':{'requests':{'storage':"
                 "'1Gi'}}},'status':{'phase':'Pending'}}",
                 "['data','Terminating','','','','beta','<unset>','5m','<unset>']");
}

static void test_configmap_secret_serviceaccount(void **state)
{
    expect_columns("", "configmaps", "['Name','Data','Age']", "[]");
    expect_cells("", "configmaps",
                 "{'metadata':{'name':'cm','creationTimestamp':'" T_2D "'},'data':{'a':'1','b':"
                 "'2'},'binaryData':{'c':'AA=='}}",
                 "['cm',3,'2d']");
    expect_columns("", "secrets", "['Name','Type','Data','Age']", "[]");
    expect_cells("", "secrets",
                 "{'metadata':{'name':'s','creationTimestamp':'" T_5M "'},'type':'Opaque','data':{"
                 "'user':'YQ==','pass':'Yg=='}}",
                 "['s','Opaque',2,'5m']");
    expect_cells("", "secrets",
                 "{'metadata':{'name':'tls','creationTimestamp':'" T_5M "'},'type':"
                 "'kubernetes.io/tls'}",
                 "['tls','kubernetes.io/tls',0,'5m']");
    expect_columns("", "serviceaccounts", "['Name','Secrets','Age']", "[]");
    expect_cells("", "serviceaccounts",
                 "{'metadata':{'name':'default','creationTimestamp':'" T_2D "'},'secrets':[{"
                 "'name':'tok'}]}",
                 "['default',1,'2d']");
    expect_cells("", "serviceaccounts",
                 "{'metadata':{'name':'default','creationTimestamp':'" T_2D "'}}",
                 "['default',0,'2d']");
}

static void test_replication_controller(void **state)
{
    expect_columns("", "replicationcontrollers",
                   "['Name','Desired','Current','Ready','Age','Containers','Images','Selector']",
                   "['Containers','Images','Selector']");
    expect_cells("", "replicationcontrollers",
                 "{'metadata':{'name':'rc','creationTimestamp':'" T_5M "'},'spec':{'replicas':3,"
                 "'selector':{'app':'web'},'template':{'spec':{'containers':[{'name':'c','image':"
                 "'img:1'},{'name':'d','image':'img:2'}]}}},'status':{'replicas':3,"
                 "'readyReplicas':2}}",
                 "['rc',3,3,2,'5m','c,d','img:1,img:2','app=web']");
}

static void test_replicaset(void **state)
{
    expect_columns("apps", "replicasets",
                   "['Name','Desired','Current','Ready','Age','Containers','Images','Selector']",
                   "['Containers','Images','Selector']");
    expect_cells("apps", "replicasets",
                 "{'metadata':{'name':'rs','creationTimestamp':'" T_5M "'},'spec':{'replicas':2,"
                 "'selector':{'matchLabels':{'app':'web'},'matchExpressions':[{'key':'tier',"
                 "'operator':'In','values':['b','a']},{'key':'env','operator':'Exists'},{'key':"
                 "'zz','operator':'NotIn','values':['x']},{'key':'canary','operator':"
                 "'DoesNotExist'}]},'template':{'spec':{'containers':[{'name':'c','image':"
                 "'nginx'}]}}},'status':{'replicas':2}}",
                 "['rs',2,2,0,'5m','c','nginx','app=web,!canary,env,tier in (a,b),zz notin (x)']");
    expect_cells("apps", "replicasets",
                 "{'metadata':{'name':'rs','creationTimestamp':'" T_5M "'},'spec':{'selector':{}}}",
                 "['rs',1,0,0,'5m','','','<none>']");
}

static void test_deployment(void **state)
{
    expect_columns(
        "apps", "deployments",
        "['Name','Ready','Up-to-date','Available','Age','Containers','Images','Selector']",
        "['Containers','Images','Selector']");
    expect_cells("apps", "deployments",
                 "{'metadata':{'name':'web','creationTimestamp':'" T_3H "'},'spec':{'replicas':3,"
                 "'selector':{'matchLabels':{'app':'web'}},'template':{'spec':{'containers':[{"
                 "'name':'nginx','image':'nginx:1.25'}]}}},'status':{'replicas':3,"
                 "'updatedReplicas':3,'readyReplicas':2,'availableReplicas':2}}",
                 "['web','2/3',3,2,'3h','nginx','nginx:1.25','app=web']");
    /* An empty selector prints "" here (LabelSelectorAsSelector, not FormatLabelSelector). */
    expect_cells("apps", "deployments",
                 "{'metadata':{'name':'d','creationTimestamp':'" T_3H "'},'spec':{'replicas':0}}",
                 "['d','0/0',0,0,'3h','','','']");
}

static void test_statefulset(void **state)
{
    expect_columns("apps", "statefulsets", "['Name','Ready','Age','Containers','Images']",
                   "['Containers','Images']");
    expect_cells("apps", "statefulsets",
                 "{'metadata':{'name':'db','creationTimestamp':'" T_5M "'},'spec':{'replicas':3,"
                 "'template':{'spec':{'containers':[{'name':'pg','image':'postgres:16'}]}}},"
                 "'status':{'replicas':3,'readyReplicas':1}}",
                 "['db','1/3','5m','pg','postgres:16']");
}

static void test_daemonset(void **state)
{
    expect_columns("apps", "daemonsets",
                   "['Name','Desired','Current','Ready','Up-to-date','Available','Node Selector',"
                   "'Age','Containers','Images','Selector']",
                   "['Containers','Images','Selector']");
    expect_cells("apps", "daemonsets",
                 "{'metadata':{'name':'agent','creationTimestamp':'" T_5M "'},'spec':{"
                 "'selector':{'matchLabels':{'app':'agent'}},'template':{'spec':{'nodeSelector':{"
                 "'kubernetes.io/os':'linux'},'containers':[{'name':'a','image':'agent:1'}]}}},"
                 "'status':{'desiredNumberScheduled':3,'currentNumberScheduled':3,"
                 "'numberReady':2,'updatedNumberScheduled':3,'numberAvailable':2}}",
                 "['agent',3,3,2,3,2,'kubernetes.io/os=linux','5m','a','agent:1','app=agent']");
    expect_cells("apps", "daemonsets",
                 "{'metadata':{'name':'agent','creationTimestamp':'" T_5M "'},'spec':{"
                 "'selector':{'matchLabels':{'app':'agent'}}}}",
                 "['agent',0,0,0,0,0,'<none>','5m','','','app=agent']");
}

static void test_event(void **state)
{
    expect_columns("", "events",
                   "['Last Seen','Type','Reason','Object','Subobject','Source','Message',"
                   "'First Seen','Count','Name']",
                   "['Subobject','Source','First Seen','Count','Name']");
    expect_cells("", "events",
                 "{'metadata':{'name':'web.1799','creationTimestamp':'" T_2D "'},"
                 "'involvedObject':{'kind':'Pod','name':'web','fieldPath':'spec.containers{c}'},"
                 "'reason':'Pulled','message':' Pulled image nginx\\n','type':'Normal','source':{"
                 "'component':'kubelet','host':'node-1'},'firstTimestamp':'" T_2D "',"
                 "'lastTimestamp':'" T_5M "','count':4}",
                 "['5m','Normal','Pulled','pod/web','spec.containers{c}','kubelet, node-1',"
                 "'Pulled image nginx','2d',4,'web.1799']");
    /* events.k8s.io-style: eventTime only, no count, reporting controller. */
    expect_cells("", "events",
                 "{'metadata':{'name':'e2','creationTimestamp':'" T_10S "'},'involvedObject':{"
                 "'kind':'ResourceQuota'},'reason':'Exceeded','message':'over','type':'Warning',"
                 "'eventTime':'2023-11-14T22:13:10.123456Z','reportingComponent':'allot-quota'}",
                 "['10s','Warning','Exceeded','resourcequota','','allot-quota','over','10s',1,"
                 "'e2']");
    /* A series: last seen and count come from it. */
    expect_cells("", "events",
                 "{'metadata':{'name':'e3'},'involvedObject':{'kind':'Node','name':'n1'},"
                 "'reason':'R','type':'Normal','eventTime':'" T_2D "','series':{'count':9,"
                 "'lastObservedTime':'" T_3H "'},'reportingComponent':'c','reportingInstance':"
                 "'i'}",
                 "['3h','Normal','R','node/n1','','c, i','','2d',9,'e3']");
    /* Nothing known: <unknown> in both time columns. */
    expect_cells("", "events", "{'metadata':{'name':'e4'}}",
                 "['<unknown>','','','','','','','<unknown>',1,'e4']");
}

static void test_priorityclass(void **state)
{
    expect_columns("scheduling.k8s.io", "priorityclasses",
                   "['Name','Value','Global-Default','Age','PreemptionPolicy']", "[]");
    expect_cells("scheduling.k8s.io", "priorityclasses",
                 "{'metadata':{'name':'high','creationTimestamp':'" T_2D "'},'value':1000000,"
                 "'globalDefault':true,'preemptionPolicy':'PreemptLowerPriority'}",
                 "['high',1000000,true,'2d','PreemptLowerPriority']");
    expect_cells("scheduling.k8s.io", "priorityclasses",
                 "{'metadata':{'name':'low','creationTimestamp':'" T_2D "'},'value':-5}",
                 "['low',-5,false,'2d','']");
}

static void test_storageclass(void **state)
{
    expect_columns("storage.k8s.io", "storageclasses",
                   "['Name','Provisioner','ReclaimPolicy','VolumeBindingMode',"
                   "'AllowVolumeExpansion','Age']",
                   "[]");
    expect_cells("storage.k8s.io", "storageclasses",
                 "{'metadata':{'name':'standard','creationTimestamp':'" T_2D "','annotations':{"
                 "'storageclass.kubernetes.io/is-default-class':'true'}},'provisioner':"
                 "'rancher.io/local-path','reclaimPolicy':'Retain','volumeBindingMode':"
                 "'WaitForFirstConsumer','allowVolumeExpansion':true}",
                 "['standard (default)','rancher.io/local-path','Retain','WaitForFirstConsumer',"
                 "true,'2d']");
    expect_cells("storage.k8s.io", "storageclasses",
                 "{'metadata':{'name':'slow','creationTimestamp':'" T_2D "','annotations':{"
                 "'storageclass.beta.kubernetes.io/is-default-class':'false'}},'provisioner':"
                 "'x'}",
                 "['slow','x','Delete','Immediate',false,'2d']");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_human_duration),
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_frame_and_include_object),
        cmocka_unit_test(test_list_meta_and_empty),
        cmocka_unit_test(test_every_kind_shape),
        cmocka_unit_test(test_pod_columns),
        cmocka_unit_test(test_pod_running),
        cmocka_unit_test(test_pod_pending),
        cmocka_unit_test(test_pod_scheduling_gated),
        cmocka_unit_test(test_pod_terminating),
        cmocka_unit_test(test_pod_completed),
        cmocka_unit_test(test_pod_init),
        cmocka_unit_test(test_pod_readiness_gates),
        cmocka_unit_test(test_namespace),
        cmocka_unit_test(test_node),
        cmocka_unit_test(test_resourcequota),
        cmocka_unit_test(test_limitrange_default_table),
        cmocka_unit_test(test_service),
        cmocka_unit_test(test_endpoints),
        cmocka_unit_test(test_endpointslice),
        cmocka_unit_test(test_pvc),
        cmocka_unit_test(test_configmap_secret_serviceaccount),
        cmocka_unit_test(test_replication_controller),
        cmocka_unit_test(test_replicaset),
        cmocka_unit_test(test_deployment),
        cmocka_unit_test(test_statefulset),
        cmocka_unit_test(test_daemonset),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_priorityclass),
        cmocka_unit_test(test_storageclass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
