/* test_rbac_policy.c - core/rbac.h's bootstrap policy against upstream's
 * vectors (bootstrappolicy/testdata/cluster-roles.yaml and
 * cluster-role-bindings.yaml of kube-apiserver 1.28+: the aggregated tenant
 * roles and their pieces, system:monitoring and its binding, the names of
 * every default role), what the tenant roles allow (workloads, pods/log,
 * /metrics), and the reconciliation of roles stored by an older build. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/rbac.h"
#include "testutil.h"

#include <stdio.h>
#include <string.h>

static const json_t *find(const json_t *objs, const char *kind, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o)
    {
        if (!strcmp(json_string_value(json_object_get(o, "kind")), kind) &&
            !strcmp(json_string_value(json_object_get(json_object_get(o, "metadata"), "name")),
                    name))
            return o;
    }
    return NULL;
}

/* Upstream's rules of one role, as its testdata prints them (lists sorted). */
static void expect_rules(const json_t *objs, const char *name, const char *want_json)
{
    const json_t *role = find(objs, "ClusterRole", name);
    if (!role) fail_msg("no default ClusterRole %s", name);
    json_t *want = J(want_json);
    assert_json_eq(json_object_get(role, "rules"), want);
    json_decref(want);
}

#define RW "'create','delete','deletecollection','get','list','patch','update','watch'"
#define W "'create','delete','deletecollection','patch','update'"
#define R3 "'get','list','watch'"

static void test_upstream_aggregate_pieces(void **state)
{
    (void)state;
    json_t *objs = rbac_default_objects();
    expect_rules(objs, "system:aggregate-to-admin",
                 "[{'apiGroups':['authorization.k8s.io'],'resources':['localsubjectaccessreviews'],"
                 "'verbs':['create']},"
                 "{'apiGroups':['rbac.authorization.k8s.io'],'resources':['rolebindings','roles'],"
                 "'verbs':[" RW "]}]");
    expect_rules(
        objs, "system:aggregate-to-edit",
        "[{'apiGroups':[''],'resources':['pods/attach','pods/exec','pods/portforward','pods/proxy',"
        "'secrets','services/proxy'],'verbs':[" R3 "]},"
        "{'apiGroups':[''],'resources':['serviceaccounts'],'verbs':['impersonate']},"
        "{'apiGroups':[''],'resources':['pods','pods/attach','pods/exec','pods/portforward',"
        "'pods/proxy'],'verbs':[" W "]},"
        "{'apiGroups':[''],'resources':['pods/eviction'],'verbs':['create']},"
        "{'apiGroups':[''],'resources':['configmaps','events','persistentvolumeclaims',"
        "'replicationcontrollers','replicationcontrollers/scale','secrets','serviceaccounts',"
        "'services','services/proxy'],'verbs':[" W "]},"
        "{'apiGroups':[''],'resources':['serviceaccounts/token'],'verbs':['create']},"
        "{'apiGroups':['apps'],'resources':['daemonsets','deployments','deployments/rollback',"
        "'deployments/scale','replicasets','replicasets/scale','statefulsets',"
        "'statefulsets/scale'],'verbs':[" W "]},"
        "{'apiGroups':['autoscaling'],'resources':['horizontalpodautoscalers'],'verbs':[" W "]},"
        "{'apiGroups':['batch'],'resources':['cronjobs','jobs'],'verbs':[" W "]},"
        "{'apiGroups':['extensions'],'resources':['daemonsets','deployments',"
        "'deployments/rollback','deployments/scale','ingresses','networkpolicies','replicasets',"
        "'replicasets/scale','replicationcontrollers/scale'],'verbs':[" W "]},"
        "{'apiGroups':['policy'],'resources':['poddisruptionbudgets'],'verbs':[" W "]},"
        "{'apiGroups':['networking.k8s.io'],'resources':['ingresses','networkpolicies'],"
        "'verbs':[" W "]},"
        "{'apiGroups':['coordination.k8s.io'],'resources':['leases'],'verbs':[" RW "]}]");
    expect_rules(
        objs, "system:aggregate-to-view",
        "[{'apiGroups':[''],'resources':['configmaps','endpoints','persistentvolumeclaims',"
        "'persistentvolumeclaims/status','pods','replicationcontrollers',"
        "'replicationcontrollers/scale','serviceaccounts','services','services/status'],"
        "'verbs':[" R3 "]},"
        "{'apiGroups':[''],'resources':['bindings','events','limitranges','namespaces/status',"
        "'pods/log','pods/status','replicationcontrollers/status','resourcequotas',"
        "'resourcequotas/status'],'verbs':[" R3 "]},"
        "{'apiGroups':[''],'resources':['namespaces'],'verbs':[" R3 "]},"
        "{'apiGroups':['discovery.k8s.io'],'resources':['endpointslices'],'verbs':[" R3 "]},"
        "{'apiGroups':['apps'],'resources':['controllerrevisions','daemonsets',"
        "'daemonsets/status','deployments','deployments/scale','deployments/status','replicasets',"
        "'replicasets/scale','replicasets/status','statefulsets','statefulsets/scale',"
        "'statefulsets/status'],'verbs':[" R3 "]},"
        "{'apiGroups':['autoscaling'],'resources':['horizontalpodautoscalers',"
        "'horizontalpodautoscalers/status'],'verbs':[" R3 "]},"
        "{'apiGroups':['batch'],'resources':['cronjobs','cronjobs/status','jobs','jobs/status'],"
        "'verbs':[" R3 "]},"
        "{'apiGroups':['extensions'],'resources':['daemonsets','daemonsets/status','deployments',"
        "'deployments/scale','deployments/status','ingresses','ingresses/status',"
        "'networkpolicies','replicasets','replicasets/scale','replicasets/status',"
        "'replicationcontrollers/scale'],'verbs':[" R3 "]},"
        "{'apiGroups':['policy'],'resources':['poddisruptionbudgets',"
        "'poddisruptionbudgets/status'],'verbs':[" R3 "]},"
        "{'apiGroups':['networking.k8s.io'],'resources':['ingresses','ingresses/status',"
        "'networkpolicies'],'verbs':[" R3 "]}]");
    /* the aggregated roles: upstream's selectors and labels */
    const char *agg[][3] = {
        {"admin", "admin", NULL}, {"edit", "edit", "admin"}, {"view", "view", "edit"}};
    for (size_t i = 0; i < 3; i++) {
        const json_t *r = find(objs, "ClusterRole", agg[i][0]);
        char want[256];
        snprintf(want, sizeof want,
                 "{'clusterRoleSelectors':[{'matchLabels':{"
                 "'rbac.authorization.k8s.io/aggregate-to-%s':'true'}}]}",
                 agg[i][1]);
        json_t *w = J(want);
        assert_json_eq(json_object_get(r, "aggregationRule"), w);
        json_decref(w);
        const json_t *labels = json_object_get(json_object_get(r, "metadata"), "labels");
        assert_string_equal(
            json_string_value(json_object_get(labels, "kubernetes.io/bootstrapping")),
            "rbac-defaults");
        if (agg[i][2]) {
            snprintf(want, sizeof want, "rbac.authorization.k8s.io/aggregate-to-%s", agg[i][2]);
            assert_string_equal(json_string_value(json_object_get(labels, want)), "true");
        } else {
            assert_int_equal(json_object_size(labels), 1);
        }
    }
    json_decref(objs);
}

static void test_upstream_monitoring_and_discovery(void **state)
{
    (void)state;
    json_t *objs = rbac_default_objects();
    expect_rules(objs, "system:monitoring",
                 "[{'nonResourceURLs':['/healthz','/healthz/*','/livez','/livez/*','/metrics',"
                 "'/metrics/slis','/readyz','/readyz/*'],'verbs':['get']}]");
    expect_rules(objs, "system:discovery",
                 "[{'nonResourceURLs':['/api','/api/*','/apis','/apis/*','/healthz','/livez',"
                 "'/openapi','/openapi/*','/readyz','/version','/version/'],'verbs':['get']}]");
    expect_rules(objs, "system:public-info-viewer",
                 "[{'nonResourceURLs':['/healthz','/livez','/readyz','/version','/version/'],"
                 "'verbs':['get']}]");
    expect_rules(objs, "system:basic-user",
                 "[{'apiGroups':['authorization.k8s.io'],'resources':['selfsubjectaccessreviews',"
                 "'selfsubjectrulesreviews'],'verbs':['create']},"
                 "{'apiGroups':['authentication.k8s.io'],'resources':['selfsubjectreviews'],"
                 "'verbs':['create']}]");
    expect_rules(objs, "system:auth-delegator",
                 "[{'apiGroups':['authentication.k8s.io'],'resources':['tokenreviews'],"
                 "'verbs':['create']},{'apiGroups':['authorization.k8s.io'],"
                 "'resources':['subjectaccessreviews'],'verbs':['create']}]");
    const json_t *b = find(objs, "ClusterRoleBinding", "system:monitoring");
    assert_non_null(b);
    json_t *want = J("{'roleRef':{'apiGroup':'rbac.authorization.k8s.io','kind':'ClusterRole',"
                     "'name':'system:monitoring'},'subjects':[{'apiGroup':"
                     "'rbac.authorization.k8s.io','kind':'Group','name':'system:monitoring'}]}");
    json_t *got = json_pack("{s:O, s:O}", "roleRef", json_object_get(b, "roleRef"), "subjects",
                            json_object_get(b, "subjects"));
    assert_json_eq(got, want);
    json_decref(got);
    json_decref(want);
    /* upstream binds system:discovery and system:basic-user to authenticated users only */
    want = J("[{'apiGroup':'rbac.authorization.k8s.io','kind':'Group','name':"
             "'system:authenticated'}]");
    assert_json_eq(
        json_object_get(find(objs, "ClusterRoleBinding", "system:discovery"), "subjects"), want);
    json_decref(want);
    json_decref(objs);
}

/* Every ClusterRole and ClusterRoleBinding upstream bootstraps exists here
 * (cluster-roles.yaml, cluster-role-bindings.yaml plus system:monitoring's). */
static void test_upstream_names(void **state)
{
    (void)state;
    static const char *const roles[] = {
        "admin",
        "cluster-admin",
        "edit",
        "system:aggregate-to-admin",
        "system:aggregate-to-edit",
        "system:aggregate-to-view",
        "system:auth-delegator",
        "system:basic-user",
        "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
        "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
        "system:certificates.k8s.io:kube-apiserver-client-approver",
        "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
        "system:certificates.k8s.io:kubelet-serving-approver",
        "system:certificates.k8s.io:legacy-unknown-approver",
        "system:discovery",
        "system:heapster",
        "system:kube-aggregator",
        "system:kube-controller-manager",
        "system:kube-dns",
        "system:kube-scheduler",
        "system:kubelet-api-admin",
        "system:monitoring",
        "system:node",
        "system:node-bootstrapper",
        "system:node-problem-detector",
        "system:node-proxier",
        "system:persistent-volume-provisioner",
        "system:public-info-viewer",
        "system:service-account-issuer-discovery",
        "system:volume-scheduler",
        "view",
    };
    static const char *const bindings[] = {
        "cluster-admin",
        "system:basic-user",
        "system:discovery",
        "system:kube-controller-manager",
        "system:kube-dns",
        "system:kube-scheduler",
        "system:monitoring",
        "system:node",
        "system:node-proxier",
        "system:public-info-viewer",
        "system:service-account-issuer-discovery",
        "system:volume-scheduler",
    };
    json_t *objs = rbac_default_objects();
    for (size_t i = 0; i < sizeof roles / sizeof *roles; i++)
        if (!find(objs, "ClusterRole", roles[i])) fail_msg("missing ClusterRole %s", roles[i]);
    for (size_t i = 0; i < sizeof bindings / sizeof *bindings; i++)
        if (!find(objs, "ClusterRoleBinding", bindings[i]))
            fail_msg("missing ClusterRoleBinding %s", bindings[i]);
    /* every default is annotated for reconciliation */
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o)
    {
        const json_t *ann = json_object_get(json_object_get(o, "metadata"), "annotations");
        assert_string_equal(
            json_string_value(json_object_get(ann, "rbac.authorization.kubernetes.io/autoupdate")),
            "true");
    }
    json_decref(objs);
}

/* ---- what the defaults allow ---- */

typedef struct fixture {
    json_t *objs;
    rbac_snapshot *s;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->objs = rbac_default_objects();
    json_t *crs = json_array(), *crbs = json_array();
    json_t *rbs = J("[{'metadata':{'name':'a','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
                    "'name':'admin'},'subjects':[{'kind':'User','name':'ann'}]},"
                    "{'metadata':{'name':'e','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
                    "'name':'edit'},'subjects':[{'kind':'User','name':'ed'}]},"
                    "{'metadata':{'name':'v','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
                    "'name':'view'},'subjects':[{'kind':'User','name':'vic'}]}]");
    size_t i;
    json_t *o;
    json_array_foreach(f->objs, i, o)
    {
        bool role = !strcmp(json_string_value(json_object_get(o, "kind")), "ClusterRole");
        json_array_append(role ? crs : crbs, o);
    }
    f->s = rbac_snapshot_new(NULL, crs, rbs, crbs);
    json_decref(crs);
    json_decref(crbs);
    json_decref(rbs);
    *state = f;
    return f->s ? 0 : -1;
}

static int teardown(void **state)
{
    fixture *f = *state;
    rbac_snapshot_free(f->s);
    json_decref(f->objs);
    free(f);
    return 0;
}

static bool can(const fixture *f, const char *user, const char *verb, const char *group,
                const char *res, const char *sub)
{
    const char *groups[] = {"system:authenticated"};
    rbac_attrs a = {{user, groups, 1}, verb, true, group, res, sub, "", "t1", NULL};
    return rbac_authorize(f->s, &a, NULL, 0) == RBAC_ALLOW;
}

static void test_tenant_workloads(void **state)
{
    const fixture *f = *state;
    static const char *const writers[] = {"ann", "ed"};
    for (size_t i = 0; i < 2; i++) {
        const char *u = writers[i];
        assert_true(can(f, u, "create", "batch", "jobs", ""));
        assert_true(can(f, u, "create", "batch", "cronjobs", ""));
        assert_true(can(f, u, "delete", "batch", "jobs", ""));
        assert_true(can(f, u, "create", "apps", "statefulsets", ""));
        assert_true(can(f, u, "patch", "apps", "statefulsets", "scale"));
        assert_true(can(f, u, "create", "apps", "daemonsets", ""));
        assert_true(can(f, u, "get", "", "pods", "log"));
        assert_true(can(f, u, "create", "capsule.clastix.io", "resourcepoolclaims", ""));
        assert_false(can(f, u, "update", "batch", "jobs", "status"));
        assert_false(can(f, u, "update", "", "resourcequotas", ""));
        assert_false(can(f, u, "create", "", "limitranges", ""));
        assert_false(can(f, u, "create", "", "pods", "binding"));
        assert_false(can(f, u, "update", "capsule.clastix.io", "customquotas", ""));
    }
    assert_true(can(f, "ann", "create", "rbac.authorization.k8s.io", "rolebindings", ""));
    assert_false(can(f, "ed", "create", "rbac.authorization.k8s.io", "rolebindings", ""));
    /* view reads workloads and logs, writes nothing, never reads secrets */
    assert_true(can(f, "vic", "get", "batch", "jobs", ""));
    assert_true(can(f, "vic", "list", "batch", "cronjobs", ""));
    assert_true(can(f, "vic", "get", "apps", "statefulsets", ""));
    assert_true(can(f, "vic", "watch", "apps", "daemonsets", ""));
    assert_true(can(f, "vic", "get", "", "pods", "log"));
    assert_true(can(f, "vic", "get", "capsule.clastix.io", "resourcepoolclaims", ""));
    assert_false(can(f, "vic", "create", "batch", "jobs", ""));
    assert_false(can(f, "vic", "create", "apps", "statefulsets", ""));
    assert_false(can(f, "vic", "get", "", "secrets", ""));
    assert_false(can(f, "vic", "create", "capsule.clastix.io", "resourcepoolclaims", ""));
}

static void test_monitoring(void **state)
{
    const fixture *f = *state;
    const char *mon[] = {"system:authenticated", "system:monitoring"};
    const char *plain[] = {"system:authenticated"};
    static const char *const allowed[] = {"/metrics", "/metrics/slis", "/livez/ping",
                                          "/readyz/etcd", "/healthz/log"};
    for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
        rbac_attrs a = {{"prom", mon, 2}, "get", false, NULL, NULL, NULL, NULL, NULL, allowed[i]};
        assert_int_equal(rbac_authorize(f->s, &a, NULL, 0), RBAC_ALLOW);
        a.user = (rbac_user){"bob", plain, 1};
        assert_int_equal(rbac_authorize(f->s, &a, NULL, 0), RBAC_DENY);
    }
    rbac_attrs a = {{"prom", mon, 2}, "get", false, NULL, NULL, NULL, NULL, NULL, "/metrics/x"};
    assert_int_equal(rbac_authorize(f->s, &a, NULL, 0), RBAC_DENY);
    a.verb = "post";
    a.path = "/metrics";
    assert_int_equal(rbac_authorize(f->s, &a, NULL, 0), RBAC_DENY);
}

/* ---- reconciliation ---- */

static json_t *default_of(const char *kind, const char *name)
{
    json_t *objs = rbac_default_objects();
    json_t *d = json_deep_copy(find(objs, kind, name));
    json_decref(objs);
    return d;
}

static void test_reconcile_unchanged(void **state)
{
    (void)state;
    json_t *objs = rbac_default_objects();
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o)
    {
        rbac_reconcile_op op;
        json_t *stored = json_deep_copy(o);
        json_object_set_new(json_object_get(stored, "metadata"), "resourceVersion",
                            json_string("7"));
        assert_null(rbac_reconcile(stored, o, &op));
        assert_int_equal(op, RBAC_RECONCILE_NONE);
        json_decref(stored);
    }
    json_decref(objs);
}

/* An older build stored system:aggregate-to-edit without batch, apps
 * statefulsets...; an administrator added a rule of their own. */
static void test_reconcile_adds_missing_keeps_extra(void **state)
{
    (void)state;
    json_t *def = default_of("ClusterRole", "system:aggregate-to-edit");
    json_t *stored = J("{'apiVersion':'rbac.authorization.k8s.io/v1','kind':'ClusterRole',"
                       "'metadata':{'name':'system:aggregate-to-edit','resourceVersion':'12',"
                       "'labels':{'rbac.authorization.k8s.io/aggregate-to-edit':'true',"
                       "'team':'x'},'annotations':{'rbac.authorization.kubernetes.io/"
                       "autoupdate':'true'}},"
                       "'rules':[{'apiGroups':[''],'resources':['pods/eviction'],"
                       "'verbs':['create']},"
                       "{'apiGroups':['example.com'],'resources':['widgets'],'verbs':['*']}]}");
    rbac_reconcile_op op;
    json_t *out = rbac_reconcile(stored, def, &op);
    assert_int_equal(op, RBAC_RECONCILE_UPDATE);
    assert_non_null(out);
    const json_t *rules = json_object_get(out, "rules");
    /* the stored rules first, as they were */
    json_t *first = J("{'apiGroups':[''],'resources':['pods/eviction'],'verbs':['create']}");
    assert_json_eq(json_array_get(rules, 0), first);
    json_decref(first);
    json_t *extra = J("{'apiGroups':['example.com'],'resources':['widgets'],'verbs':['*']}");
    assert_json_eq(json_array_get(rules, 1), extra);
    json_decref(extra);
    /* then every default rule not covered: all of them but pods/eviction's */
    assert_int_equal(json_array_size(rules),
                     2 + json_array_size(json_object_get(def, "rules")) - 1);
    rbac_rules have = {0}, want = {0};
    assert_int_equal(rbac_rules_add_json(&have, rules), 0);
    assert_int_equal(rbac_rules_add_json(&want, json_object_get(def, "rules")), 0);
    assert_true(rbac_covers(&have, &want, NULL));
    rbac_rules_cleanup(&have);
    rbac_rules_cleanup(&want);
    /* labels and annotations merged; the stored ones kept; the resourceVersion kept */
    const json_t *labels = json_object_get(json_object_get(out, "metadata"), "labels");
    assert_string_equal(json_string_value(json_object_get(labels, "team")), "x");
    assert_string_equal(json_string_value(json_object_get(labels, "kubernetes.io/bootstrapping")),
                        "rbac-defaults");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(out, "metadata"), "resourceVersion")),
        "12");
    json_decref(out);
    /* reconciling the result again changes nothing */
    json_t *again = rbac_reconcile(out = rbac_reconcile(stored, def, &op), def, &op);
    assert_null(again);
    assert_int_equal(op, RBAC_RECONCILE_NONE);
    json_decref(out);
    json_decref(stored);
    json_decref(def);
}

static void test_reconcile_protected(void **state)
{
    (void)state;
    json_t *def = default_of("ClusterRole", "system:aggregate-to-view");
    json_t *stored = J("{'kind':'ClusterRole','metadata':{'name':'system:aggregate-to-view',"
                       "'annotations':{'rbac.authorization.kubernetes.io/autoupdate':'false'}},"
                       "'rules':[]}");
    rbac_reconcile_op op;
    assert_null(rbac_reconcile(stored, def, &op));
    assert_int_equal(op, RBAC_RECONCILE_PROTECTED);
    json_decref(stored);
    json_decref(def);
}

static void test_reconcile_aggregated(void **state)
{
    (void)state;
    json_t *def = default_of("ClusterRole", "admin");
    /* rules are the aggregation's: not compared; a selector of the user's is kept */
    json_t *stored = J("{'kind':'ClusterRole','metadata':{'name':'admin','labels':{"
                       "'kubernetes.io/bootstrapping':'rbac-defaults'},'annotations':{"
                       "'rbac.authorization.kubernetes.io/autoupdate':'true'}},"
                       "'aggregationRule':{'clusterRoleSelectors':[{'matchLabels':{'x':'y'}}]},"
                       "'rules':[{'apiGroups':[''],'resources':['pods'],'verbs':['get']}]}");
    rbac_reconcile_op op;
    json_t *out = rbac_reconcile(stored, def, &op);
    assert_int_equal(op, RBAC_RECONCILE_UPDATE);
    json_t *want = J("{'clusterRoleSelectors':[{'matchLabels':{'x':'y'}},{'matchLabels':{"
                     "'rbac.authorization.k8s.io/aggregate-to-admin':'true'}}]}");
    assert_json_eq(json_object_get(out, "aggregationRule"), want);
    json_decref(want);
    assert_int_equal(json_array_size(json_object_get(out, "rules")), 1);
    json_decref(out);
    json_decref(stored);
    /* a role the default does not aggregate loses its aggregationRule */
    def = (json_decref(def), default_of("ClusterRole", "system:monitoring"));
    stored = json_deep_copy(def);
    json_object_set_new(stored, "aggregationRule", J("{'clusterRoleSelectors':[]}"));
    out = rbac_reconcile(stored, def, &op);
    assert_int_equal(op, RBAC_RECONCILE_UPDATE);
    assert_null(json_object_get(out, "aggregationRule"));
    json_decref(out);
    json_decref(stored);
    json_decref(def);
}

static void test_reconcile_bindings(void **state)
{
    (void)state;
    json_t *def = default_of("ClusterRoleBinding", "system:public-info-viewer");
    json_t *stored = J("{'kind':'ClusterRoleBinding','metadata':{'name':"
                       "'system:public-info-viewer'},'roleRef':{'apiGroup':"
                       "'rbac.authorization.k8s.io','kind':'ClusterRole','name':"
                       "'system:public-info-viewer'},'subjects':[{'kind':'User','name':'carl',"
                       "'apiGroup':'rbac.authorization.k8s.io'},{'kind':'Group','name':"
                       "'system:authenticated','apiGroup':'rbac.authorization.k8s.io'}]}");
    rbac_reconcile_op op;
    json_t *out = rbac_reconcile(stored, def, &op);
    assert_int_equal(op, RBAC_RECONCILE_UPDATE);
    json_t *want = J("[{'kind':'User','name':'carl','apiGroup':'rbac.authorization.k8s.io'},"
                     "{'kind':'Group','name':'system:authenticated','apiGroup':"
                     "'rbac.authorization.k8s.io'},{'kind':'Group','name':"
                     "'system:unauthenticated','apiGroup':'rbac.authorization.k8s.io'}]");
    assert_json_eq(json_object_get(out, "subjects"), want);
    json_decref(want);
    json_decref(out);
    /* another roleRef: recreated with the default's, subjects kept */
    json_object_set_new(stored, "roleRef",
                        J("{'apiGroup':'rbac.authorization.k8s.io','kind':'ClusterRole',"
                          "'name':'view'}"));
    out = rbac_reconcile(stored, def, &op);
    assert_int_equal(op, RBAC_RECONCILE_RECREATE);
    assert_json_eq(json_object_get(out, "roleRef"), json_object_get(def, "roleRef"));
    assert_int_equal(json_array_size(json_object_get(out, "subjects")), 3);
    json_decref(out);
    json_decref(stored);
    json_decref(def);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream_aggregate_pieces),
        cmocka_unit_test(test_upstream_monitoring_and_discovery),
        cmocka_unit_test(test_upstream_names),
        cmocka_unit_test_setup_teardown(test_tenant_workloads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitoring, setup, teardown),
        cmocka_unit_test(test_reconcile_unchanged),
        cmocka_unit_test(test_reconcile_adds_missing_keeps_extra),
        cmocka_unit_test(test_reconcile_protected),
        cmocka_unit_test(test_reconcile_aggregated),
        cmocka_unit_test(test_reconcile_bindings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
