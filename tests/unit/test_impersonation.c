/* test_impersonation.c - core/impersonation.h: the Impersonate-* headers read
 * as upstream's impersonation filter reads them (users, ServiceAccounts,
 * groups, extras with percent-encoded keys, uids), the user the request
 * becomes (system:authenticated / system:unauthenticated as upstream adds
 * them), upstream's 400 text, the authorization attributes and their 403
 * texts, and which default ClusterRoles may impersonate. Vectors from
 * k8s.io/apiserver/pkg/endpoints/filters/impersonation_test.go's cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/impersonation.h"
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#define N(h) (sizeof h / sizeof h[0])

/* The groups of m joined with ",". */
static const char *groups_of(const imp *m)
{
    static char buf[1024];
    buf[0] = '\0';
    for (size_t i = 0; i < m->ngroups; i++) {
        if (i) strcat(buf, ",");
        strcat(buf, m->groups[i]);
    }
    return buf;
}

static imp_result parse(const imp_header *h, size_t n, imp *m)
{
    char err[512];
    return imp_parse(h, n, m, err, sizeof err);
}

static void test_no_impersonation(void **state)
{
    (void)state;
    imp m;
    assert_int_equal(parse(NULL, 0, &m), IMP_NONE);
    imp_free(&m);
    imp_header other[] = {{"Authorization", "Bearer x"},
                          {"Impersonate", "alice"},
                          {"Impersonate-Users", "alice"},
                          {"Impersonate-User", ""}};
    assert_int_equal(parse(other, N(other), &m), IMP_NONE);
    assert_int_equal(m.nasks, 0);
    imp_free(&m);
    /* Header.Get: the first Impersonate-User decides, an empty one is none */
    imp_header first_empty[] = {{"Impersonate-User", ""}, {"Impersonate-User", "bob"}};
    assert_int_equal(parse(first_empty, 2, &m), IMP_NONE);
    imp_free(&m);
}

static void test_user(void **state)
{
    (void)state;
    imp m;
    imp_header h[] = {{"impersonate-user", "alice"}, {"IMPERSONATE-USER", "bob"}};
    assert_int_equal(parse(h, N(h), &m), IMP_ASKED);
    assert_int_equal(m.nasks, 1);
    assert_int_equal(m.asks[0].kind, IMP_USER);
    assert_string_equal(m.asks[0].name, "alice");
    assert_string_equal(m.asks[0].ns, "");
    assert_string_equal(m.user, "alice");
    assert_string_equal(m.uid, "");
    assert_string_equal(groups_of(&m), "system:authenticated");
    assert_int_equal(m.nextra, 0);
    imp_free(&m);
}

static void test_groups(void **state)
{
    (void)state;
    imp m;
    imp_header h[] = {{"Impersonate-User", "alice"},
                      {"Impersonate-Group", "devs"},
                      {"Accept", "*/*"},
                      {"Impersonate-Group", ""},
                      {"Impersonate-Group", "devs"}};
    assert_int_equal(parse(h, N(h), &m), IMP_ASKED);
    assert_int_equal(m.nasks, 4); /* a check per header, empty and repeated ones too */
    assert_int_equal(m.asks[1].kind, IMP_GROUP);
    assert_string_equal(m.asks[2].name, "");
    assert_string_equal(groups_of(&m), "devs,,devs,system:authenticated");
    imp_free(&m);
    /* a listed system:authenticated or system:unauthenticated: nothing added */
    imp_header ha[] = {{"Impersonate-User", "alice"},
                       {"Impersonate-Group", "system:authenticated"}};
    assert_int_equal(parse(ha, N(ha), &m), IMP_ASKED);
    assert_string_equal(groups_of(&m), "system:authenticated");
    imp_free(&m);
    imp_header hu[] = {{"Impersonate-User", "alice"},
                       {"Impersonate-Group", "system:unauthenticated"}};
    assert_int_equal(parse(hu, N(hu), &m), IMP_ASKED);
    assert_string_equal(groups_of(&m), "system:unauthenticated");
    imp_free(&m);
}

static void test_anonymous(void **state)
{
    (void)state;
    imp m;
    imp_header h[] = {{"Impersonate-User", "system:anonymous"}};
    assert_int_equal(parse(h, N(h), &m), IMP_ASKED);
    assert_string_equal(groups_of(&m), "system:unauthenticated");
    imp_free(&m);
    imp_header hg[] = {{"Impersonate-User", "system:anonymous"},
                       {"Impersonate-Group", "system:authenticated"}};
    assert_int_equal(parse(hg, N(hg), &m), IMP_ASKED);
    assert_string_equal(groups_of(&m), "system:authenticated,system:unauthenticated");
    imp_free(&m);
    imp_header hu[] = {{"Impersonate-User", "system:anonymous"},
                       {"Impersonate-Group", "system:unauthenticated"}};
    assert_int_equal(parse(hu, N(hu), &m), IMP_ASKED);
    assert_string_equal(groups_of(&m), "system:unauthenticated");
    imp_free(&m);
}

static void test_service_accounts(void **state)
{
    (void)state;
    imp m;
    imp_header h[] = {{"Impersonate-User", "system:serviceaccount:tenant-a:builder"}};
    assert_int_equal(parse(h, N(h), &m), IMP_ASKED);
    assert_int_equal(m.asks[0].kind, IMP_SERVICEACCOUNT);
    assert_string_equal(m.asks[0].ns, "tenant-a");
    assert_string_equal(m.asks[0].name, "builder");
    assert_string_equal(m.user, "system:serviceaccount:tenant-a:builder");
    assert_string_equal(groups_of(&m), "system:serviceaccounts,system:serviceaccounts:tenant-a,"
                                       "system:authenticated");
    imp_free(&m);
    /* with Impersonate-Group the groups are the ones given */
    imp_header hg[] = {{"Impersonate-User", "system:serviceaccount:ns:sa.dotted"},
                       {"Impersonate-Group", "g"}};
    assert_int_equal(parse(hg, N(hg), &m), IMP_ASKED);
    assert_int_equal(m.asks[0].kind, IMP_SERVICEACCOUNT);
    assert_string_equal(m.asks[0].name, "sa.dotted");
    assert_string_equal(groups_of(&m), "g,system:authenticated");
    imp_free(&m);
    /* SplitUsername refuses these: they are plain users */
    static const char *const users[] = {
        "system:serviceaccount:ns",    "system:serviceaccount:ns:sa:x",
        "system:serviceaccount::sa",   "system:serviceaccount:ns:",
        "system:serviceaccount:NS:sa", "system:serviceaccount:ns.dot:sa",
        "system:serviceaccount:ns:Sa", "system:serviceaccounts:ns:sa",
        "System:serviceaccount:ns:sa",
    };
    for (size_t i = 0; i < N(users); i++) {
        imp_header hu[] = {{"Impersonate-User", users[i]}};
        assert_int_equal(parse(hu, 1, &m), IMP_ASKED);
        if (m.asks[0].kind != IMP_USER) fail_msg("%s: not a user", users[i]);
        assert_string_equal(m.asks[0].name, users[i]);
        assert_string_equal(groups_of(&m), "system:authenticated");
        imp_free(&m);
    }
}

static void test_extras_and_uid(void **state)
{
    (void)state;
    imp m;
    imp_header h[] = {{"Impersonate-Uid", "1234"},
                      {"Impersonate-Extra-Scopes", "view"},
                      {"Impersonate-User", "alice"},
                      {"impersonate-extra-acme.com%2Fproject", "p1"},
                      {"Impersonate-Extra-scopes", "development"},
                      {"Impersonate-Extra-Bad%zz", "x"},
                      {"Impersonate-Extra-nul%00", "y"},
                      {"Impersonate-Extra-", "empty-key"},
                      {"Impersonate-Uid", "5678"}};
    assert_int_equal(parse(h, N(h), &m), IMP_ASKED);
    /* user, groups, extras (in header order), uid (the first) */
    assert_int_equal(m.nasks, 8);
    assert_int_equal(m.asks[0].kind, IMP_USER);
    static const char *const keys[] = {"scopes", "acme.com/project", "scopes",
                                       "bad%zz", "nul%00",           ""};
    static const char *const vals[] = {"view", "p1", "development", "x", "y", "empty-key"};
    for (size_t i = 0; i < 6; i++) {
        assert_int_equal(m.asks[1 + i].kind, IMP_EXTRA);
        assert_string_equal(m.asks[1 + i].key, keys[i]);
        assert_string_equal(m.asks[1 + i].name, vals[i]);
    }
    assert_int_equal(m.asks[7].kind, IMP_UID);
    assert_string_equal(m.asks[7].name, "1234");
    assert_string_equal(m.uid, "1234");
    /* extra: one key per name, values in order */
    assert_int_equal(m.nextra, 5);
    assert_string_equal(m.extra[0].key, "scopes");
    assert_int_equal(m.extra[0].nvalues, 2);
    assert_string_equal(m.extra[0].values[0], "view");
    assert_string_equal(m.extra[0].values[1], "development");
    assert_string_equal(m.extra[1].key, "acme.com/project");
    imp_free(&m);
}

static void test_unescape(void **state)
{
    (void)state;
    int nomem = 0;
    char *s = imp_unescape("a%2fb%41%e2%82%ac+", 18, &nomem);
    assert_string_equal(s, "a/bA\xe2\x82\xac+"); /* '+' stays (PathUnescape) */
    free(s);
    assert_null(imp_unescape("%", 1, &nomem));
    assert_null(imp_unescape("%4", 2, &nomem));
    assert_null(imp_unescape("%4g", 3, &nomem));
    assert_null(imp_unescape("%00", 3, &nomem)); /* (a C string cannot hold it) */
    assert_int_equal(nomem, 0);
    s = imp_unescape("%41%", 3, &nomem); /* only len bytes are read */
    assert_string_equal(s, "A");
    free(s);
}

static void test_utf8(void **state)
{
    (void)state;
    char *s = imp_valid_utf8("ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    assert_string_equal(s, "ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    free(s);
    /* lone continuation, overlong, surrogate, past U+10FFFF, truncated */
    s = imp_valid_utf8("\x80|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82");
    assert_string_equal(s, "\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf"
                           "\xbd|\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef"
                           "\xbf\xbd");
    free(s);
    imp m;
    imp_header h[] = {{"Impersonate-User", "al\xffice"}, {"Impersonate-Group", "\xfe"}};
    assert_int_equal(parse(h, N(h), &m), IMP_ASKED);
    assert_string_equal(m.user, "al\xef\xbf\xbdice");
    assert_string_equal(m.asks[0].name, "al\xef\xbf\xbdice");
    assert_string_equal(m.groups[0], "\xef\xbf\xbd");
    imp_free(&m);
}

/* Upstream's 400: fmt's %v of the ObjectReferences. */
static void test_without_user(void **state)
{
    (void)state;
    imp m;
    char err[512];
    imp_header h[] = {{"Impersonate-Group", "team-a"},
                      {"Impersonate-Extra-scopes", "view"},
                      {"Impersonate-Uid", "u1"}};
    assert_int_equal(imp_parse(h, N(h), &m, err, sizeof err), IMP_BAD);
    assert_string_equal(err, "requested [{Group  team-a    } {UserExtra  view  "
                             "authentication.k8s.io/v1  scopes} {UID  u1  "
                             "authentication.k8s.io/v1  }] without impersonating a user");
    assert_int_equal(m.nasks, 0);
    imp_free(&m);
    imp_header empty_user[] = {{"Impersonate-User", ""}, {"Impersonate-Group", "g"}};
    assert_int_equal(imp_parse(empty_user, 2, &m, err, sizeof err), IMP_BAD);
    assert_string_equal(err, "requested [{Group  g    }] without impersonating a user");
    imp_free(&m);
    imp_header uid_only[] = {{"Impersonate-Uid", "u"}};
    assert_int_equal(imp_parse(uid_only, 1, &m, err, sizeof err), IMP_BAD);
    imp_free(&m);
    /* a long text is cut on a character boundary */
    char big[600];
    memset(big, 0, sizeof big);
    for (size_t i = 0; i + 2 < 590; i += 2)
        memcpy(big + i, "\xc3\xa9", 2);
    imp_header longg[] = {{"Impersonate-Group", big}};
    char small[32];
    for (size_t n = 12; n < sizeof small; n++) {
        assert_int_equal(imp_parse(longg, 1, &m, small, n), IMP_BAD);
        char *v = imp_valid_utf8(small);
        assert_string_equal(v, small);
        assert_true(strlen(small) < n);
        free(v);
        imp_free(&m);
    }
}

/* The authorization attributes and the 403 texts of responsewriters.Forbidden. */
static void test_attrs_and_403(void **state)
{
    (void)state;
    imp m;
    imp_header h[] = {{"Impersonate-User", "system:serviceaccount:tenant-a:builder"},
                      {"Impersonate-Group", "devs"},
                      {"Impersonate-Extra-Scopes", "view"},
                      {"Impersonate-Uid", "1234"}};
    assert_int_equal(parse(h, N(h), &m), IMP_ASKED);
    rbac_user bob = {"bob", NULL, 0};
    static const char *const want[] = {
        "serviceaccounts \"builder\" is forbidden: User \"bob\" cannot impersonate resource "
        "\"serviceaccounts\" in API group \"\" in the namespace \"tenant-a\"",
        "groups \"devs\" is forbidden: User \"bob\" cannot impersonate resource \"groups\" in API "
        "group \"\" at the cluster scope",
        "userextras.authentication.k8s.io \"view\" is forbidden: User \"bob\" cannot impersonate "
        "resource \"userextras/scopes\" in API group \"authentication.k8s.io\" at the cluster scope",
        "uids.authentication.k8s.io \"1234\" is forbidden: User \"bob\" cannot impersonate "
        "resource \"uids\" in API group \"authentication.k8s.io\" at the cluster scope",
    };
    assert_int_equal(m.nasks, N(want));
    for (size_t i = 0; i < m.nasks; i++) {
        rbac_attrs a;
        imp_attrs(&m, i, bob, &a);
        assert_string_equal(a.verb, "impersonate");
        assert_true(a.resource_request);
        assert_string_equal(a.user.name, "bob");
        char msg[512];
        rbac_forbidden_message(&a, "", msg, sizeof msg);
        assert_string_equal(msg, want[i]);
    }
    imp_free(&m);
    imp_header hu[] = {{"Impersonate-User", "alice"}};
    assert_int_equal(parse(hu, 1, &m), IMP_ASKED);
    rbac_attrs a;
    imp_attrs(&m, 0, (rbac_user){"admin", NULL, 0}, &a);
    char msg[512];
    rbac_forbidden_message(&a, "", msg, sizeof msg);
    assert_string_equal(msg, "users \"alice\" is forbidden: User \"admin\" cannot impersonate "
                             "resource \"users\" in API group \"\" at the cluster scope");
    imp_free(&m);
}

/* RBAC decides the checks: resourceNames limit who may be impersonated. */
static void test_rbac_decides(void **state)
{
    (void)state;
    json_t *crs = J("[{'metadata':{'name':'imp-alice'},'rules':[{'verbs':['impersonate'],"
                    "'apiGroups':[''],'resources':['users'],'resourceNames':['alice']},"
                    "{'verbs':['impersonate'],'apiGroups':['authentication.k8s.io'],"
                    "'resources':['userextras/scopes'],'resourceNames':['view']}]}]");
    json_t *crbs = J("[{'metadata':{'name':'b'},'roleRef':{'kind':'ClusterRole','name':"
                     "'imp-alice'},'subjects':[{'kind':'User','name':'bob'}]}]");
    rbac_snapshot *s = rbac_snapshot_new(NULL, crs, NULL, crbs);
    assert_non_null(s);
    static const struct {
        const char *user, *extra;
        rbac_decision want[2];
    } cases[] = {
        {"alice", NULL, {RBAC_ALLOW}},
        {"carol", NULL, {RBAC_DENY}},
        {"alice", "view", {RBAC_ALLOW, RBAC_ALLOW}},
        {"alice", "edit", {RBAC_ALLOW, RBAC_DENY}},
    };
    for (size_t c = 0; c < N(cases); c++) {
        imp_header h[] = {{"Impersonate-User", cases[c].user},
                          {"Impersonate-Extra-scopes", cases[c].extra}};
        imp m;
        assert_int_equal(parse(h, cases[c].extra ? 2 : 1, &m), IMP_ASKED);
        for (size_t i = 0; i < m.nasks; i++) {
            rbac_attrs a;
            imp_attrs(&m, i, (rbac_user){"bob", NULL, 0}, &a);
            assert_int_equal(rbac_authorize(s, &a, NULL, 0), cases[c].want[i]);
            imp_attrs(&m, i, (rbac_user){"eve", NULL, 0}, &a);
            assert_int_equal(rbac_authorize(s, &a, NULL, 0), RBAC_DENY);
        }
        imp_free(&m);
    }
    rbac_snapshot_free(s);
    json_decref(crs);
    json_decref(crbs);
}

/* Which default ClusterRoles grant `impersonate`, as upstream's bootstrap
 * policy: cluster-admin (everything), and edit (so admin, through
 * aggregation) on serviceaccounts only. */
static void test_default_roles(void **state)
{
    (void)state;
    json_t *objs = rbac_default_objects();
    assert_non_null(objs);
    static const struct {
        const char *group, *resource;
    } targets[] = {{"", "users"},
                   {"", "groups"},
                   {"", "serviceaccounts"},
                   {"authentication.k8s.io", "uids"},
                   {"authentication.k8s.io", "userextras/scopes"}};
    size_t i;
    json_t *o;
    json_array_foreach(objs, i, o)
    {
        if (strcmp(json_string_value(json_object_get(o, "kind")), "ClusterRole") != 0) continue;
        const char *name =
            json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
        rbac_rules rules = {0};
        assert_int_equal(rbac_rules_add_json(&rules, json_object_get(o, "rules")), 0);
        for (size_t t = 0; t < N(targets); t++) {
            char res[64];
            snprintf(res, sizeof res, "%s", targets[t].resource);
            char *slash = strchr(res, '/');
            if (slash) *slash = '\0';
            rbac_attrs a = {{"u", NULL, 0},
                            "impersonate",
                            true,
                            targets[t].group,
                            res,
                            slash ? slash + 1 : "",
                            "x",
                            "ns",
                            ""};
            bool allowed = false;
            for (size_t r = 0; r < rules.n; r++)
                allowed |= rbac_rule_allows(&rules.v[r], &a);
            bool want = !strcmp(name, "cluster-admin") ||
                        (!strcmp(targets[t].resource, "serviceaccounts") &&
                         (!strcmp(name, "admin") || !strcmp(name, "edit") ||
                          !strcmp(name, "system:aggregate-to-edit")));
            if (allowed != want)
                fail_msg("%s: impersonate %s: %s", name, targets[t].resource,
                         allowed ? "allowed" : "denied");
        }
        rbac_rules_cleanup(&rules);
    }
    json_decref(objs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_impersonation), cmocka_unit_test(test_user),
        cmocka_unit_test(test_groups),           cmocka_unit_test(test_anonymous),
        cmocka_unit_test(test_service_accounts), cmocka_unit_test(test_extras_and_uid),
        cmocka_unit_test(test_unescape),         cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_without_user),     cmocka_unit_test(test_attrs_and_403),
        cmocka_unit_test(test_rbac_decides),     cmocka_unit_test(test_default_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
