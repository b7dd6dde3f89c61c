/* test_rbac.c - core/rbac.h: RuleAllows and Covers with upstream's vectors,
 * the snapshot authorizer (reasons, RoleBinding -> ClusterRole scoping,
 * ServiceAccounts, groups, missing roles), aggregation, RulesFor and the
 * SelfSubjectRulesReview shape, escalation checks, the 403 texts and the
 * bootstrap roles (tenant admin/edit/view, system:masters, components). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/rbac.h"
#include "testutil.h"

#include <stdio.h>
#include <string.h>

/* Rules from JSON written with single quotes. */
static rbac_rules R(const char *json)
{
    rbac_rules r = {0};
    json_t *j = J(json);
    assert_int_equal(rbac_rules_add_json(&r, j), 0);
    json_decref(j);
    return r;
}

static rbac_attrs res_attrs(const char *verb, const char *group, const char *res, const char *sub,
                            const char *name, const char *ns)
{
    rbac_attrs a = {{"alice", NULL, 0}, verb, true, group, res, sub, name, ns, NULL};
    return a;
}

static bool allows(const char *rule_json, const rbac_attrs *a)
{
    rbac_rules r = R(rule_json);
    bool ok = rbac_rule_allows(&r.v[0], a);
    rbac_rules_cleanup(&r);
    return ok;
}

/* ---- RuleAllows (rbac_test.go TestRuleMatches, evaluation helpers) ---- */

static void test_rule_allows(void **state)
{
    (void)state;
    rbac_attrs a = res_attrs("get", "", "pods", "", "p1", "ns");
    assert_true(allows("[{'verbs':['*'],'apiGroups':['*'],'resources':['*']}]", &a));
    assert_true(allows("[{'verbs':['get'],'apiGroups':[''],'resources':['pods']}]", &a));
    assert_false(allows("[{'verbs':['list'],'apiGroups':[''],'resources':['pods']}]", &a));
    assert_false(allows("[{'verbs':['get'],'apiGroups':['apps'],'resources':['pods']}]", &a));
    assert_false(allows("[{'verbs':['get'],'apiGroups':[''],'resources':['nodes']}]", &a));
    /* resourceNames: empty = all, else exact */
    assert_true(allows("[{'verbs':['get'],'apiGroups':[''],'resources':['pods'],"
                       "'resourceNames':['p1']}]",
                       &a));
    assert_false(allows("[{'verbs':['get'],'apiGroups':[''],'resources':['pods'],"
                        "'resourceNames':['p2']}]",
                        &a));
    rbac_attrs list = res_attrs("list", "", "pods", "", "", "ns");
    assert_false(allows("[{'verbs':['list'],'apiGroups':[''],'resources':['pods'],"
                        "'resourceNames':['p1']}]",
                        &list));
    /* subresources: the combined name or "*" + "/sub"; the bare resource does not match */
    rbac_attrs bind = res_attrs("create", "", "pods", "binding", "p1", "ns");
    assert_true(
        allows("[{'verbs':['create'],'apiGroups':[''],'resources':['pods/binding']}]", &bind));
    assert_true(allows("[{'verbs':['create'],'apiGroups':[''],'resources':['*/binding']}]", &bind));
    assert_false(allows("[{'verbs':['create'],'apiGroups':[''],'resources':['pods']}]", &bind));
    assert_false(allows("[{'verbs':['create'],'apiGroups':[''],'resources':['*/bind']}]", &bind));
    assert_false(allows("[{'verbs':['create'],'apiGroups':[''],'resources':['pods/*']}]", &bind));
    /* a "*" + "/status" rule does not match the resource itself */
    assert_false(allows("[{'verbs':['get'],'apiGroups':[''],'resources':['*/status']}]", &a));
}

static void test_rule_allows_nonresource(void **state)
{
    (void)state;
    rbac_attrs a = {{"alice", NULL, 0}, "get", false, NULL, NULL, NULL, NULL, NULL, "/apis/v1"};
    assert_true(allows("[{'verbs':['get'],'nonResourceURLs':['*']}]", &a));
    assert_true(allows("[{'verbs':['get'],'nonResourceURLs':['/apis/v1']}]", &a));
    assert_true(allows("[{'verbs':['get'],'nonResourceURLs':['/apis/*']}]", &a));
    assert_true(allows("[{'verbs':['get'],'nonResourceURLs':['/ap*']}]", &a));
    assert_false(allows("[{'verbs':['get'],'nonResourceURLs':['/apis']}]", &a));
    assert_false(allows("[{'verbs':['post'],'nonResourceURLs':['*']}]", &a));
    /* resource rules never match a non-resource request */
    assert_false(allows("[{'verbs':['*'],'apiGroups':['*'],'resources':['*']}]", &a));
}

/* ---- Covers (policy_comparator_test.go) ---- */

static void covers_case(const char *owner, const char *servant, bool want, const char *uncovered)
{
    rbac_rules o = R(owner), s = R(servant), u = {0};
    assert_int_equal(rbac_covers(&o, &s, &u), want);
    json_t *got = rbac_rules_to_json(&u), *exp = J(uncovered);
    assert_json_eq(got, exp);
    json_decref(got);
    json_decref(exp);
    rbac_rules_cleanup(&o);
    rbac_rules_cleanup(&s);
    rbac_rules_cleanup(&u);
}

static void test_covers(void **state)
{
    (void)state;
    covers_case("[{'apiGroups':['v1'],'verbs':['get'],'resources':['builds']}]",
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['builds']}]", true, "[]");
    covers_case("[{'apiGroups':['v1'],'verbs':['get'],'resources':['*/scale']}]",
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['foo/scale']}]", true, "[]");
    covers_case("[{'apiGroups':['v1'],'verbs':['delete'],'resources':['deployments']},"
                "{'apiGroups':['v1'],'verbs':['delete'],'resources':['builds']},"
                "{'apiGroups':['v1'],'verbs':['update'],'resources':['builds','deployments']}]",
                "[{'apiGroups':['v1'],'verbs':['delete','update'],"
                "'resources':['builds','deployments']}]",
                true, "[]");
    covers_case("[{'apiGroups':['group1','group2'],'verbs':['delete','update'],"
                "'resources':['builds','deployments']}]",
                "[{'apiGroups':['group1'],'verbs':['delete'],'resources':['deployments']},"
                "{'apiGroups':['group2'],'verbs':['update'],'resources':['builds','deployments']}]",
                true, "[]");
    covers_case("[{'apiGroups':['v1'],'verbs':['delete','update'],"
                "'resources':['builds','deployments']},"
                "{'apiGroups':['v1'],'verbs':['delete'],'resources':['pods']}]",
                "[{'apiGroups':['v1'],'verbs':['delete','update'],"
                "'resources':['builds','deployments','pods']}]",
                false, "[{'apiGroups':['v1'],'verbs':['update'],'resources':['pods']}]");
    covers_case("[{'apiGroups':['*'],'verbs':['get'],'resources':['roles']}]",
                "[{'apiGroups':['group1','group2'],'verbs':['get'],'resources':['roles']}]", true,
                "[]");
    covers_case("[{'apiGroups':['dummy-group'],'verbs':['get'],'resources':['roles']}]",
                "[{'apiGroups':['*'],'verbs':['get'],'resources':['roles']}]", false,
                "[{'apiGroups':['*'],'verbs':['get'],'resources':['roles']}]");
    covers_case("[{'apiGroups':['v1'],'verbs':['*'],'resources':['roles']}]",
                "[{'apiGroups':['v1'],'verbs':['watch','list'],'resources':['roles']}]", true,
                "[]");
    covers_case("[{'apiGroups':['v1'],'verbs':['get','list','watch','create','update','delete',"
                "'exec'],'resources':['roles']}]",
                "[{'apiGroups':['v1'],'verbs':['*'],'resources':['roles']}]", false,
                "[{'apiGroups':['v1'],'verbs':['*'],'resources':['roles']}]");
    covers_case("[{'apiGroups':['v1'],'verbs':['get'],'resources':['*']}]",
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['resourcegroup:deployments']}]",
                true, "[]");
    covers_case("[{'apiGroups':['v1'],'verbs':['get'],'resources':['roles',"
                "'resourcegroup:deployments']}]",
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['*']}]", false,
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['*']}]");
    covers_case("[{'apiGroups':['v1'],'verbs':['get'],'resources':['pods'],'resourceNames':[]}]",
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['pods'],"
                "'resourceNames':['foo','bar']}]",
                true, "[]");
    covers_case("[{'apiGroups':['v1'],'verbs':['get'],'resources':['pods'],"
                "'resourceNames':['foo','bar']}]",
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['pods'],'resourceNames':[]}]",
                false, "[{'apiGroups':['v1'],'verbs':['get'],'resources':['pods']}]");
    covers_case("[{'nonResourceURLs':['/apis'],'verbs':['*']}]",
                "[{'nonResourceURLs':['/apis'],'verbs':['*']}]", true, "[]");
    covers_case("[{'nonResourceURLs':['*'],'verbs':['*']}]",
                "[{'nonResourceURLs':['/apis','/apis/v1','/'],'verbs':['*']}]", true, "[]");
    covers_case("[{'nonResourceURLs':['/apis/*'],'verbs':['*']}]",
                "[{'nonResourceURLs':['/apis','/apis/v1'],'verbs':['get']}]", false,
                "[{'nonResourceURLs':['/apis'],'verbs':['get']}]");
    covers_case("[{'nonResourceURLs':['/apis/*'],'verbs':['*']}]",
                "[{'nonResourceURLs':['/apis/v1/foo','/apis/v1'],'verbs':['get']}]", true, "[]");
    covers_case("[{'apiGroups':['v1'],'verbs':['get'],'resources':['builds'],"
                "'nonResourceURLs':['/apis']}]",
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['builds'],"
                "'nonResourceURLs':['/apis']}]",
                true, "[]");
    covers_case("[{'apiGroups':['v1'],'verbs':['get'],'resources':['builds']}]",
                "[{'apiGroups':['v1'],'verbs':['get'],'resources':['builds'],"
                "'nonResourceURLs':['/apis']}]",
                false, "[{'nonResourceURLs':['/apis'],'verbs':['get']}]");
}

/* TestNonResourceURLCovers, through one-URL rules. */
static void test_url_covers(void **state)
{
    (void)state;
    static const struct {
        const char *owner, *req;
        bool want;
    } c[] = {
        {"*", "", true},
        {"*", "/", true},
        {"*", "/api", true},
        {"/*", "", false},
        {"/*", "/", true},
        {"/*", "/foo", true},
        {"/api", "/api", true},
        {"/apis", "/api", false},
        {"/api/v1", "/api", false},
        {"/api/v1", "/api/v1", true},
        {"/api/*", "/api/v1", true},
        {"/api/*", "/api", false},
        {"/api/*/*", "/api/v1", false},
        {"/*/v1/*", "/api/v1", false},
    };
    char o[128], s[128];
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        snprintf(o, sizeof o, "[{'verbs':['get'],'nonResourceURLs':['%s']}]", c[i].owner);
        snprintf(s, sizeof s, "[{'verbs':['get'],'nonResourceURLs':['%s']}]", c[i].req);
        rbac_rules ro = R(o), rs = R(s);
        if (rbac_covers(&ro, &rs, NULL) != c[i].want)
            fail_msg("covers(%s, %s) != %d", c[i].owner, c[i].req, c[i].want);
        rbac_rules_cleanup(&ro);
        rbac_rules_cleanup(&rs);
    }
}

static void test_compact_string(void **state)
{
    (void)state;
    rbac_rules r = R("[{'verbs':['get','list'],'apiGroups':[''],'resources':['pods'],"
                     "'resourceNames':['a']},{'verbs':['get'],'nonResourceURLs':['/x']}]");
    char buf[256];
    rbac_rule_compact_string(&r.v[0], buf, sizeof buf);
    assert_string_equal(buf, "{APIGroups:[\"\"], Resources:[\"pods\"], ResourceNames:[\"a\"], "
                             "Verbs:[\"get\" \"list\"]}");
    rbac_rule_compact_string(&r.v[1], buf, sizeof buf);
    assert_string_equal(buf, "{NonResourceURLs:[\"/x\"], Verbs:[\"get\"]}");
    rbac_rules_cleanup(&r);
}

/* ---- the authorizer ---- */

static rbac_snapshot *snap(const char *roles, const char *croles, const char *rbs, const char *crbs)
{
    json_t *a = J(roles), *b = J(croles), *c = J(rbs), *d = J(crbs);
    rbac_snapshot *s = rbac_snapshot_new(a, b, c, d);
    assert_non_null(s);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
    return s;
}

#define POD_READER                                                                                 \
    "{'metadata':{'name':'pod-reader'},'rules':[{'verbs':['get','list'],'apiGroups':[''],"         \
    "'resources':['pods']}]}"

static void test_authorize_cluster_binding(void **state)
{
    (void)state;
    rbac_snapshot *s = snap("[]", "[" POD_READER "]", "[]",
                            "[{'metadata':{'name':'readers'},'roleRef':{'apiGroup':'"
                            "rbac.authorization.k8s.io','kind':'ClusterRole','name':'pod-reader'},"
                            "'subjects':[{'kind':'Group','name':'devs'},{'kind':'User',"
                            "'name':'alice'}]}]");
    char reason[512];
    rbac_attrs a = res_attrs("get", "", "pods", "", "p", "ns1");
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_ALLOW);
    assert_string_equal(reason, "RBAC: allowed by ClusterRoleBinding \"readers\" of ClusterRole "
                                "\"pod-reader\" to User \"alice\"");
    /* the first subject that applies is the one named */
    const char *groups[] = {"devs"};
    a.user.groups = groups;
    a.user.ngroups = 1;
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_ALLOW);
    assert_string_equal(reason, "RBAC: allowed by ClusterRoleBinding \"readers\" of ClusterRole "
                                "\"pod-reader\" to Group \"devs\"");
    a.verb = "delete";
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_DENY);
    assert_string_equal(reason, "");
    a.verb = "get";
    a.user.name = "bob";
    a.user.ngroups = 0;
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_DENY);
    rbac_snapshot_free(s);
}

static void test_rolebinding_scopes_clusterrole(void **state)
{
    (void)state;
    rbac_snapshot *s =
        snap("[{'metadata':{'name':'cm','namespace':'t1'},'rules':[{'verbs':['get'],"
             "'apiGroups':[''],'resources':['configmaps']}]}]",
             "[" POD_READER "]",
             "[{'metadata':{'name':'rb','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
             "'name':'pod-reader'},'subjects':[{'kind':'User','name':'alice'}]},"
             "{'metadata':{'name':'rb2','namespace':'t1'},'roleRef':{'kind':'Role','name':'cm'},"
             "'subjects':[{'kind':'User','name':'alice'}]}]",
             "[]");
    char reason[512];
    rbac_attrs a = res_attrs("get", "", "pods", "", "p", "t1");
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_ALLOW);
    assert_string_equal(reason, "RBAC: allowed by RoleBinding \"rb/t1\" of ClusterRole "
                                "\"pod-reader\" to User \"alice\"");
    a.ns = "t2"; /* the ClusterRole's rules apply only in the binding's namespace */
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_DENY);
    a.ns = ""; /* nor at the cluster scope */
    a.verb = "list";
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_DENY);
    rbac_attrs cm = res_attrs("get", "", "configmaps", "", "c", "t1");
    assert_int_equal(rbac_authorize(s, &cm, reason, sizeof reason), RBAC_ALLOW);
    assert_string_equal(reason,
                        "RBAC: allowed by RoleBinding \"rb2/t1\" of Role \"cm\" to User \"alice\"");
    rbac_snapshot_free(s);
}

static void test_service_accounts(void **state)
{
    (void)state;
    rbac_snapshot *s =
        snap("[]", "[" POD_READER "]",
             "[{'metadata':{'name':'local','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
             "'name':'pod-reader'},'subjects':[{'kind':'ServiceAccount','name':'bot'}]}]",
             "[{'metadata':{'name':'nons'},'roleRef':{'kind':'ClusterRole','name':'pod-reader'},"
             "'subjects':[{'kind':'ServiceAccount','name':'orphan'}]},"
             "{'metadata':{'name':'all-sa'},'roleRef':{'kind':'ClusterRole','name':'pod-reader'},"
             "'subjects':[{'kind':'Group','name':'system:serviceaccounts:t9'}]}]");
    char user[128], reason[512];
    assert_int_equal(rbac_sa_username("t1", "bot", user, sizeof user), 0);
    assert_string_equal(user, "system:serviceaccount:t1:bot");
    rbac_attrs a = res_attrs("get", "", "pods", "", "p", "t1");
    a.user.name = user;
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_ALLOW);
    assert_string_equal(reason, "RBAC: allowed by RoleBinding \"local/t1\" of ClusterRole "
                                "\"pod-reader\" to ServiceAccount \"bot/t1\"");
    /* the same SA name in another namespace is another user */
    rbac_sa_username("t2", "bot", user, sizeof user);
    a.ns = "t1";
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_DENY);
    /* a ClusterRoleBinding SA subject without a namespace applies to nobody */
    rbac_sa_username("default", "orphan", user, sizeof user);
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_DENY);
    /* the authenticator's SA groups */
    const char *groups[] = {"system:serviceaccounts", "system:serviceaccounts:t9",
                            "system:authenticated"};
    rbac_sa_username("t9", "x", user, sizeof user);
    a.user.groups = groups;
    a.user.ngroups = 3;
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_ALLOW);
    assert_string_equal(reason, "RBAC: allowed by ClusterRoleBinding \"all-sa\" of ClusterRole "
                                "\"pod-reader\" to Group \"system:serviceaccounts:t9\"");
    rbac_snapshot_free(s);
}

static void test_missing_roles(void **state)
{
    (void)state;
    rbac_snapshot *s =
        snap("[]", "[" POD_READER "]",
             "[{'metadata':{'name':'rb','namespace':'t1'},'roleRef':{'kind':'Role','name':'gone'},"
             "'subjects':[{'kind':'User','name':'alice'}]}]",
             "[{'metadata':{'name':'c1'},'roleRef':{'kind':'ClusterRole','name':'nope'},"
             "'subjects':[{'kind':'User','name':'alice'}]},"
             "{'metadata':{'name':'c2'},'roleRef':{'kind':'ClusterRole','name':'pod-reader'},"
             "'subjects':[{'kind':'User','name':'alice'}]}]");
    char reason[512];
    rbac_attrs a = res_attrs("delete", "", "pods", "", "p", "t1");
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_DENY);
    assert_string_equal(reason, "RBAC: [clusterrole.rbac.authorization.k8s.io \"nope\" not found, "
                                "role.rbac.authorization.k8s.io \"gone\" not found]");
    a.ns = "";
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_DENY);
    assert_string_equal(reason, "RBAC: clusterrole.rbac.authorization.k8s.io \"nope\" not found");
    /* a missing role hides nothing another binding grants */
    a.verb = "get";
    assert_int_equal(rbac_authorize(s, &a, reason, sizeof reason), RBAC_ALLOW);
    rbac_snapshot_free(s);
}

/* ---- aggregation ---- */

static void test_aggregation(void **state)
{
    (void)state;
    json_t *all =
        J("[{'metadata':{'name':'agg'},'aggregationRule':{'clusterRoleSelectors':[{'matchLabels':"
          "{'a':'1'}}]},'rules':[{'verbs':['stale'],'apiGroups':[''],'resources':['x']}]},"
          "{'metadata':{'name':'z','labels':{'a':'1'}},'rules':[{'verbs':['get'],'apiGroups':[''],"
          "'resources':['pods']},{'verbs':['list'],'apiGroups':[''],'resources':['pods']}]},"
          "{'metadata':{'name':'b','labels':{'a':'1'}},'rules':[{'verbs':['list'],"
          "'apiGroups':[''],'resources':['pods']}]},"
          "{'metadata':{'name':'other','labels':{'a':'2'}},'rules':[{'verbs':['*'],"
          "'apiGroups':['*'],'resources':['*']}]}]");
    json_t *rules = rbac_aggregate_rules(json_array_get(all, 0), all);
    json_t *want = J("[{'verbs':['list'],'apiGroups':[''],'resources':['pods']},"
                     "{'verbs':['get'],'apiGroups':[''],'resources':['pods']}]");
    assert_json_eq(rules, want); /* by name (b, z), duplicates once, own rules ignored */
    assert_null(rbac_aggregate_rules(json_array_get(all, 1), all));
    json_decref(rules);
    json_decref(want);
    /* the snapshot uses the aggregated rules */
    json_t *crbs = J("[{'metadata':{'name':'x'},'roleRef':{'kind':'ClusterRole','name':'agg'},"
                     "'subjects':[{'kind':'User','name':'alice'}]}]");
    rbac_snapshot *s = rbac_snapshot_new(NULL, all, NULL, crbs);
    rbac_attrs a = res_attrs("get", "", "pods", "", "p", "ns");
    assert_int_equal(rbac_authorize(s, &a, NULL, 0), RBAC_ALLOW);
    a.verb = "stale";
    a.resource = "x";
    assert_int_equal(rbac_authorize(s, &a, NULL, 0), RBAC_DENY);
    rbac_snapshot_free(s);
    json_decref(crbs);
    json_decref(all);
}

/* ---- RulesFor and the review ---- */

static void test_rules_for(void **state)
{
    (void)state;
    rbac_snapshot *s =
        snap("[]",
             "[" POD_READER ",{'metadata':{'name':'d'},'rules':[{'verbs':['get'],"
             "'nonResourceURLs':['/api','/api/*']}]}]",
             "[{'metadata':{'name':'rb','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
             "'name':'pod-reader'},'subjects':[{'kind':'User','name':'alice'}]},"
             "{'metadata':{'name':'rb2','namespace':'t1'},'roleRef':{'kind':'Role','name':'gone'},"
             "'subjects':[{'kind':'User','name':'alice'}]}]",
             "[{'metadata':{'name':'d'},'roleRef':{'kind':'ClusterRole','name':'d'},"
             "'subjects':[{'kind':'Group','name':'system:authenticated'}]}]");
    const char *groups[] = {"system:authenticated"};
    rbac_user u = {"alice", groups, 1};
    rbac_rules r = {0};
    char err[256];
    assert_int_equal(rbac_rules_for(s, &u, "t1", &r, err, sizeof err), 0);
    assert_int_equal(r.n, 2);
    assert_string_equal(err, "role.rbac.authorization.k8s.io \"gone\" not found");
    json_t *review = rbac_rules_review(&r, err);
    json_t *want =
        J("{'resourceRules':[{'verbs':['get','list'],'apiGroups':[''],'resources':['pods']}],"
          "'nonResourceRules':[{'verbs':['get'],'nonResourceURLs':['/api','/api/*']}],"
          "'incomplete':false,'evaluationError':'role.rbac.authorization.k8s.io \\'gone\\' not "
          "found'}");
    json_object_set_new(want, "evaluationError",
                        json_string("role.rbac.authorization.k8s.io \"gone\" not found"));
    assert_json_eq(review, want);
    json_decref(review);
    json_decref(want);
    rbac_rules_cleanup(&r);
    assert_int_equal(rbac_rules_for(s, &u, "t2", &r, err, sizeof err), 0);
    assert_int_equal(r.n, 1);
    assert_string_equal(err, "");
    rbac_rules_cleanup(&r);
    rbac_snapshot_free(s);
}

/* ---- escalation ---- */

static void test_escalation(void **state)
{
    (void)state;
    rbac_snapshot *s =
        snap("[]",
             "[" POD_READER ",{'metadata':{'name':'big'},'rules':[{'verbs':['*'],'apiGroups':[''],"
             "'resources':['pods','secrets']}]}]",
             "[{'metadata':{'name':'rb','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
             "'name':'pod-reader'},'subjects':[{'kind':'User','name':'alice'}]}]",
             "[]");
    const char *groups[] = {"g1", "system:authenticated"};
    rbac_user u = {"alice", groups, 2};
    char msg[1024];
    json_t *ok = J("{'metadata':{'name':'r'},'rules':[{'verbs':['get'],'apiGroups':[''],"
                   "'resources':['pods']}]}");
    assert_int_equal(rbac_check_role_write(s, &u, "t1", "roles", ok, msg, sizeof msg), 0);
    json_t *bad = J("{'metadata':{'name':'r'},'rules':[{'verbs':['get','create','delete'],"
                    "'apiGroups':[''],'resources':['pods']}]}");
    assert_int_equal(rbac_check_role_write(s, &u, "t1", "roles", bad, msg, sizeof msg), -1);
    assert_string_equal(msg, "user \"alice\" (groups=[\"g1\" \"system:authenticated\"]) is "
                             "attempting to grant RBAC permissions not currently held:\n"
                             "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"create\" "
                             "\"delete\"]}");
    /* outside the namespace of its binding alice holds nothing */
    assert_int_equal(rbac_check_role_write(s, &u, "t2", "roles", ok, msg, sizeof msg), -1);
    /* system:masters may */
    const char *masters[] = {"system:masters"};
    rbac_user root = {"root", masters, 1};
    assert_int_equal(rbac_check_role_write(s, &root, "t1", "roles", bad, msg, sizeof msg), 0);
    /* bindings: holding the role's rules, or not */
    json_t *ref_small = J("{'apiGroup':'rbac.authorization.k8s.io','kind':'ClusterRole',"
                          "'name':'pod-reader'}");
    json_t *ref_big = J("{'apiGroup':'rbac.authorization.k8s.io','kind':'ClusterRole',"
                        "'name':'big'}");
    json_t *ref_gone = J("{'apiGroup':'rbac.authorization.k8s.io','kind':'Role','name':'gone'}");
    assert_int_equal(rbac_check_binding_write(s, &u, "t1", ref_small, msg, sizeof msg), 0);
    assert_int_equal(rbac_check_binding_write(s, &u, "t1", ref_big, msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"*\"]}"));
    assert_int_equal(rbac_check_binding_write(s, &u, "t1", ref_gone, msg, sizeof msg), -1);
    assert_string_equal(msg, "role.rbac.authorization.k8s.io \"gone\" not found");
    json_decref(ok);
    json_decref(bad);
    json_decref(ref_small);
    json_decref(ref_big);
    json_decref(ref_gone);
    rbac_snapshot_free(s);
}

static void test_escalate_and_bind_verbs(void **state)
{
    (void)state;
    rbac_snapshot *s = snap(
        "[]",
        "[{'metadata':{'name':'binder'},'rules':[{'verbs':['bind'],'apiGroups':["
        "'rbac.authorization.k8s.io'],'resources':['clusterroles'],'resourceNames':['admin']},"
        "{'verbs':['escalate'],'apiGroups':['rbac.authorization.k8s.io'],'resources':['roles']}]}]",
        "[{'metadata':{'name':'rb','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
        "'name':'binder'},'subjects':[{'kind':'User','name':'alice'}]}]",
        "[]");
    rbac_user u = {"alice", NULL, 0};
    char msg[1024];
    json_t *admin = J("{'kind':'ClusterRole','name':'admin'}");
    json_t *edit = J("{'kind':'ClusterRole','name':'edit'}");
    json_t *role = J("{'metadata':{'name':'r'},'rules':[{'verbs':['*'],'apiGroups':['*'],"
                     "'resources':['*']}]}");
    assert_int_equal(rbac_check_binding_write(s, &u, "t1", admin, msg, sizeof msg), 0);
    assert_int_equal(rbac_check_binding_write(s, &u, "t1", edit, msg, sizeof msg), -1);
    assert_string_equal(msg, "clusterrole.rbac.authorization.k8s.io \"edit\" not found");
    assert_int_equal(rbac_check_binding_write(s, &u, "t2", admin, msg, sizeof msg), -1);
    assert_int_equal(rbac_check_role_write(s, &u, "t1", "roles", role, msg, sizeof msg), 0);
    json_object_set_new(role, "aggregationRule", J("{'clusterRoleSelectors':[{}]}"));
    assert_int_equal(rbac_check_role_write(s, &u, "", "clusterroles", role, msg, sizeof msg), -1);
    assert_string_equal(msg, "user \"alice\" (groups=[]) is attempting to grant RBAC permissions "
                             "not currently held:\n"
                             "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}");
    json_decref(admin);
    json_decref(edit);
    json_decref(role);
    rbac_snapshot_free(s);
}

/* ---- 403 texts ---- */

static void test_forbidden_messages(void **state)
{
    (void)state;
    char buf[512];
    rbac_attrs a = res_attrs("get", "", "pods", "", "p1", "t1");
    rbac_forbidden_message(&a, "", buf, sizeof buf);
    assert_string_equal(buf, "pods \"p1\" is forbidden: User \"alice\" cannot get resource "
                             "\"pods\" in API group \"\" in the namespace \"t1\"");
    a = res_attrs("list", "apps", "deployments", "", "", "");
    rbac_forbidden_message(&a, NULL, buf, sizeof buf);
    assert_string_equal(buf, "deployments.apps is forbidden: User \"alice\" cannot list resource "
                             "\"deployments\" in API group \"apps\" at the cluster scope");
    a = res_attrs("create", "", "pods", "binding", "p1", "t1");
    rbac_forbidden_message(&a, NULL, buf, sizeof buf);
    assert_string_equal(buf, "pods \"p1\" is forbidden: User \"alice\" cannot create resource "
                             "\"pods/binding\" in API group \"\" in the namespace \"t1\"");
    rbac_attrs nr = {{"x", NULL, 0}, "get", false, NULL, NULL, NULL, NULL, NULL, "/metrics"};
    rbac_forbidden_message(&nr, NULL, buf, sizeof buf);
    assert_string_equal(buf, "forbidden: User \"x\" cannot get path \"/metrics\"");
    a = res_attrs("delete", "", "pods", "", "p1", "t1");
    rbac_forbidden_message(&a, "RBAC: role.rbac.authorization.k8s.io \"r\" not found", buf,
                           sizeof buf);
    assert_string_equal(buf, "pods \"p1\" is forbidden: User \"alice\" cannot delete resource "
                             "\"pods\" in API group \"\" in the namespace \"t1\": RBAC: "
                             "role.rbac.authorization.k8s.io \"r\" not found");
}

/* ---- bootstrap policy ---- */

typedef struct defaults {
    json_t *objs;
    rbac_snapshot *s;
} defaults;

static const json_t *find_default(const json_t *objs, const char *kind, const char *name)
{
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o)
    {
        if (strcmp(json_string_value(json_object_get(o, "kind")), kind) == 0 &&
            strcmp(json_string_value(json_object_get(json_object_get(o, "metadata"), "name")),
                   name) == 0)
            return o;
    }
    return NULL;
}

static int defaults_setup(void **state)
{
    defaults *d = calloc(1, sizeof *d);
    d->objs = rbac_default_objects();
    json_t *crs = json_array(), *crbs = json_array(),
           *rbs =
               J("[{'metadata':{'name':'t-admin','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
                 "'name':'admin'},'subjects':[{'kind':'User','name':'tom'}]},"
                 "{'metadata':{'name':'t-view','namespace':'t1'},'roleRef':{'kind':'ClusterRole',"
                 "'name':'view'},'subjects':[{'kind':'User','name':'vic'}]}]");
    size_t i;
    json_t *o;
    json_array_foreach(d->objs, i, o)
    {
        bool role = strcmp(json_string_value(json_object_get(o, "kind")), "ClusterRole") == 0;
        json_array_append(role ? crs : crbs, o);
    }
    d->s = rbac_snapshot_new(NULL, crs, rbs, crbs);
    json_decref(crs);
    json_decref(crbs);
    json_decref(rbs);
    *state = d;
    return d->s ? 0 : -1;
}

static int defaults_teardown(void **state)
{
    defaults *d = *state;
    rbac_snapshot_free(d->s);
    json_decref(d->objs);
    free(d);
    return 0;
}

static rbac_decision can(const defaults *d, const char *user, const char *group, const char *verb,
                         const char *api_group, const char *res, const char *sub, const char *ns)
{
    const char *groups[] = {"system:authenticated", group};
    rbac_attrs a = {{user, groups, group ? 2 : 1}, verb, true, api_group, res, sub, "", ns, NULL};
    return rbac_authorize(d->s, &a, NULL, 0);
}

static void test_default_tenant_admin(void **state)
{
    const defaults *d = *state;
    assert_int_equal(can(d, "tom", NULL, "create", "", "pods", "", "t1"), RBAC_ALLOW);
    assert_int_equal(can(d, "tom", NULL, "create", "", "pods", "", "t2"), RBAC_DENY);
    assert_int_equal(can(d, "tom", NULL, "get", "", "resourcequotas", "", "t1"), RBAC_ALLOW);
    assert_int_equal(can(d, "tom", NULL, "update", "", "resourcequotas", "", "t1"), RBAC_DENY);
    assert_int_equal(can(d, "tom", NULL, "update", "", "resourcequotas", "status", "t1"),
                     RBAC_DENY);
    assert_int_equal(can(d, "tom", NULL, "create", "", "pods", "binding", "t1"), RBAC_DENY);
    assert_int_equal(can(d, "tom", NULL, "get", "", "secrets", "", "t1"), RBAC_ALLOW);
    assert_int_equal(
        can(d, "tom", NULL, "create", "rbac.authorization.k8s.io", "rolebindings", "", "t1"),
        RBAC_ALLOW);
    const char *capsule = "capsule.clastix.io";
    assert_int_equal(can(d, "tom", NULL, "list", capsule, "resourcepoolclaims", "", "t1"),
                     RBAC_ALLOW);
    assert_int_equal(can(d, "tom", NULL, "create", capsule, "resourcepoolclaims", "", "t1"),
                     RBAC_ALLOW);
    assert_int_equal(can(d, "tom", NULL, "delete", capsule, "resourcepoolclaims", "", "t1"),
                     RBAC_ALLOW);
    assert_int_equal(can(d, "tom", NULL, "get", capsule, "customquotas", "", "t1"), RBAC_ALLOW);
    assert_int_equal(can(d, "tom", NULL, "update", capsule, "customquotas", "", "t1"), RBAC_DENY);
    assert_int_equal(can(d, "tom", NULL, "update", capsule, "resourcepoolclaims", "status", "t1"),
                     RBAC_DENY);
    assert_int_equal(can(d, "tom", NULL, "create", capsule, "resourcepools", "", ""), RBAC_DENY);
    assert_int_equal(can(d, "tom", NULL, "create", capsule, "globalcustomquotas", "", ""),
                     RBAC_DENY);
    assert_int_equal(can(d, "tom", NULL, "list", "", "nodes", "", ""), RBAC_DENY);
}

static void test_default_view(void **state)
{
    const defaults *d = *state;
    assert_int_equal(can(d, "vic", NULL, "list", "", "pods", "", "t1"), RBAC_ALLOW);
    assert_int_equal(can(d, "vic", NULL, "get", "", "secrets", "", "t1"), RBAC_DENY);
    assert_int_equal(can(d, "vic", NULL, "create", "", "pods", "", "t1"), RBAC_DENY);
    assert_int_equal(can(d, "vic", NULL, "watch", "capsule.clastix.io", "customquotas", "", "t1"),
                     RBAC_ALLOW);
    assert_int_equal(can(d, "vic", NULL, "get", "", "resourcequotas", "", "t1"), RBAC_ALLOW);
}

static void test_default_masters_and_public(void **state)
{
    const defaults *d = *state;
    char reason[256];
    const char *groups[] = {"system:masters", "system:authenticated"};
    rbac_attrs a = {
        {"admin", groups, 2}, "deletecollection", true, "x.io", "anything", "", "", "", NULL};
    assert_int_equal(rbac_authorize(d->s, &a, reason, sizeof reason), RBAC_ALLOW);
    assert_string_equal(reason, "RBAC: allowed by ClusterRoleBinding \"cluster-admin\" of "
                                "ClusterRole \"cluster-admin\" to Group \"system:masters\"");
    rbac_attrs m = {{"admin", groups, 2}, "get", false, NULL, NULL, NULL, NULL, NULL, "/metrics"};
    assert_int_equal(rbac_authorize(d->s, &m, NULL, 0), RBAC_ALLOW);
    const char *anon[] = {"system:unauthenticated"};
    rbac_attrs h = {
        {"system:anonymous", anon, 1}, "get", false, NULL, NULL, NULL, NULL, NULL, "/healthz"};
    assert_int_equal(rbac_authorize(d->s, &h, NULL, 0), RBAC_ALLOW);
    h.path = "/apis";
    assert_int_equal(rbac_authorize(d->s, &h, NULL, 0), RBAC_DENY);
    rbac_attrs disc = {{"tom", groups + 1, 1}, "get", false, NULL, NULL, NULL, NULL, NULL,
                       "/apis/apps/v1"};
    assert_int_equal(rbac_authorize(d->s, &disc, NULL, 0), RBAC_ALLOW);
    disc.path = "/metrics";
    assert_int_equal(rbac_authorize(d->s, &disc, NULL, 0), RBAC_DENY);
    assert_int_equal(
        can(d, "tom", NULL, "create", "authorization.k8s.io", "selfsubjectrulesreviews", "", ""),
        RBAC_ALLOW);
}

static void test_default_components(void **state)
{
    const defaults *d = *state;
    const char *sched = "system:kube-scheduler";
    assert_int_equal(can(d, sched, NULL, "create", "", "pods", "binding", "t1"), RBAC_ALLOW);
    assert_int_equal(can(d, sched, NULL, "update", "", "pods", "status", "t1"), RBAC_ALLOW);
    assert_int_equal(can(d, sched, NULL, "watch", "", "nodes", "", ""), RBAC_ALLOW);
    assert_int_equal(can(d, sched, NULL, "create", "", "pods", "", "t1"), RBAC_DENY);
    assert_int_equal(can(d, sched, NULL, "get", "", "secrets", "", "t1"), RBAC_DENY);
    assert_int_equal(can(d, "system:node:n1", "system:nodes", "update", "", "pods", "status", "t1"),
                     RBAC_ALLOW);
    assert_int_equal(can(d, "system:node:n1", "system:nodes", "delete", "", "secrets", "", "t1"),
                     RBAC_DENY);
    const char *gc = "system:serviceaccount:kube-system:generic-garbage-collector";
    assert_int_equal(can(d, gc, NULL, "delete", "apps", "replicasets", "", "t1"), RBAC_ALLOW);
    assert_int_equal(can(d, gc, NULL, "create", "", "pods", "", "t1"), RBAC_DENY);
    const char *rq = "system:serviceaccount:kube-system:resourcequota-controller";
    assert_int_equal(can(d, rq, NULL, "update", "", "resourcequotas", "status", "t1"), RBAC_ALLOW);
    assert_int_equal(can(d, rq, NULL, "update", "", "resourcequotas", "", "t1"), RBAC_DENY);
    const char *ns = "system:serviceaccount:kube-system:namespace-controller";
    assert_int_equal(can(d, ns, NULL, "update", "", "namespaces", "finalize", ""), RBAC_ALLOW);
    assert_int_equal(can(d, ns, NULL, "create", "", "pods", "", "t1"), RBAC_DENY);
}

static void test_default_objects_shape(void **state)
{
    const defaults *d = *state;
    const json_t *admin = find_default(d->objs, "ClusterRole", "admin");
    assert_non_null(admin);
    json_t *want = J("{'clusterRoleSelectors':[{'matchLabels':{"
                     "'rbac.authorization.k8s.io/aggregate-to-admin':'true'}}]}");
    assert_json_eq(json_object_get(admin, "aggregationRule"), want);
    json_decref(want);
    assert_true(json_array_size(json_object_get(admin, "rules")) > 5);
    const json_t *edit = find_default(d->objs, "ClusterRole", "edit");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(edit, "metadata"), "labels"),
                            "rbac.authorization.k8s.io/aggregate-to-admin")),
                        "true");
    const json_t *crb = find_default(d->objs, "ClusterRoleBinding", "system:public-info-viewer");
    want = J("[{'kind':'Group','apiGroup':'rbac.authorization.k8s.io','name':"
             "'system:authenticated'},{'kind':'Group','apiGroup':'rbac.authorization.k8s.io',"
             "'name':'system:unauthenticated'}]");
    assert_json_eq(json_object_get(crb, "subjects"), want);
    json_decref(want);
    assert_null(find_default(d->objs, "ClusterRoleBinding", "admin"));
    assert_true(rbac_snapshot_binding_count(d->s) >= 9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_allows),
        cmocka_unit_test(test_rule_allows_nonresource),
        cmocka_unit_test(test_covers),
        cmocka_unit_test(test_url_covers),
        cmocka_unit_test(test_compact_string),
        cmocka_unit_test(test_authorize_cluster_binding),
        cmocka_unit_test(test_rolebinding_scopes_clusterrole),
        cmocka_unit_test(test_service_accounts),
        cmocka_unit_test(test_missing_roles),
        cmocka_unit_test(test_aggregation),
        cmocka_unit_test(test_rules_for),
        cmocka_unit_test(test_escalation),
        cmocka_unit_test(test_escalate_and_bind_verbs),
        cmocka_unit_test(test_forbidden_messages),
        cmocka_unit_test_setup_teardown(test_default_tenant_admin, defaults_setup,
                                        defaults_teardown),
        cmocka_unit_test_setup_teardown(test_default_view, defaults_setup, defaults_teardown),
        cmocka_unit_test_setup_teardown(test_default_masters_and_public, defaults_setup,
                                        defaults_teardown),
        cmocka_unit_test_setup_teardown(test_default_components, defaults_setup, defaults_teardown),
        cmocka_unit_test_setup_teardown(test_default_objects_shape, defaults_setup,
                                        defaults_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
