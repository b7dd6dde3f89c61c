/* test_rbac_kinds.c - Role, ClusterRole, RoleBinding, ClusterRoleBinding as
 * kinds (api/rbac_kinds.h): the kind rows, upstream YAML through the typed
 * decoder, defaulting of apiGroups, every validation message, the roleRef
 * update rule, kubectl's columns and cells, and the bootstrap objects
 * accepted by the kinds' own validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "api/kinds.h"
#include "api/rbac_kinds.h"
#include "api/schema.h"
#include "api/table.h"
#include "api/typecheck.h"
#include "api/yaml.h"
#include "testutil.h"

#include <stdio.h>

#define NOW 1700000000
#define T_5M "2023-11-14T22:08:20Z"

static const api_kind *kind(const char *res)
{
    const api_kind *k = api_kind_find(RBAC_GROUP, "v1", res);
    assert_non_null(k);
    return k;
}

static void test_rows(void **state)
{
    (void)state;
    static const struct {
        const char *res, *kind, *singular;
        bool ns;
    } rows[] = {
        {"roles", "Role", "role", true},
        {"rolebindings", "RoleBinding", "rolebinding", true},
        {"clusterroles", "ClusterRole", "clusterrole", false},
        {"clusterrolebindings", "ClusterRoleBinding", "clusterrolebinding", false},
    };
    for (size_t i = 0; i < 4; i++) {
        const api_kind *k = kind(rows[i].res);
        assert_string_equal(k->kind, rows[i].kind);
        assert_string_equal(k->singular, rows[i].singular);
        assert_null(k->short_names);
        assert_int_equal(k->namespaced, rows[i].ns);
        assert_int_equal(k->subresources, 0);
        assert_int_equal(k->name_rule, API_NAME_PATH);
        assert_non_null(api_kind_schema(k));
        assert_ptr_equal(api_kind_by_kind("rbac.authorization.k8s.io/v1", rows[i].kind), k);
    }
}

/* YAML, typed decoding (nothing unknown), defaults, validation: the causes. */
static json_t *admit(const api_kind *k, const char *yaml, const json_t *old)
{
    char err[256];
    json_t *o = yaml_to_json(yaml, strlen(yaml), err, sizeof err);
    if (!o) fail_msg("yaml: %s", err);
    tc_result r;
    if (tc_decode(api_kind_schema(k), o, &r) != 0) fail_msg("decode: %s", r.error);
    if (json_array_size(r.unknown))
        fail_msg("unknown field %s", json_string_value(json_array_get(r.unknown, 0)));
    tc_result_clear(&r);
    if (k->defaults) k->defaults(o);
    json_t *causes = json_array();
    k->validate(o, old, causes);
    if (old && k->validate_update) k->validate_update(o, old, "", causes);
    json_object_set_new(o, "causes", causes);
    return o;
}

static void expect_valid(const api_kind *k, const char *yaml)
{
    json_t *o = admit(k, yaml, NULL);
    json_t *c = json_object_get(o, "causes");
    if (json_array_size(c))
        fail_msg("%s", json_string_value(json_object_get(json_array_get(c, 0), "message")));
    json_decref(o);
}

static void test_upstream_examples(void **state)
{
    (void)state;
    expect_valid(kind("roles"), "apiVersion: rbac.authorization.k8s.io/v1\n"
                                "kind: Role\n"
                                "metadata:\n  namespace: default\n  name: pod-reader\n"
                                "rules:\n- apiGroups: [\"\"]\n  resources: [\"pods\"]\n"
                                "  verbs: [\"get\", \"watch\", \"list\"]\n");
    expect_valid(kind("clusterroles"),
                 "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"
                 "metadata:\n  name: monitoring\n"
                 "aggregationRule:\n  clusterRoleSelectors:\n  - matchLabels:\n"
                 "      rbac.example.com/aggregate-to-monitoring: \"true\"\n"
                 "rules: []\n");
    expect_valid(kind("clusterroles"), "kind: ClusterRole\nmetadata:\n  name: health\n"
                                       "rules:\n- nonResourceURLs: [\"/healthz\", \"/healthz/*\"]\n"
                                       "  verbs: [\"get\", \"post\"]\n");
}

static void test_binding_defaults(void **state)
{
    (void)state;
    json_t *o = admit(kind("rolebindings"),
                      "kind: RoleBinding\nmetadata:\n  name: read-pods\n  namespace: default\n"
                      "subjects:\n- kind: User\n  name: jane\n- kind: Group\n  name: devs\n"
                      "- kind: ServiceAccount\n  name: bot\n"
                      "roleRef:\n  kind: Role\n  name: pod-reader\n",
                      NULL);
    json_t *want = J("{'subjects':[{'kind':'User','name':'jane','apiGroup':"
                     "'rbac.authorization.k8s.io'},{'kind':'Group','name':'devs','apiGroup':"
                     "'rbac.authorization.k8s.io'},{'kind':'ServiceAccount','name':'bot'}],"
                     "'roleRef':{'kind':'Role','name':'pod-reader','apiGroup':"
                     "'rbac.authorization.k8s.io'}}");
    assert_json_eq(json_object_get(o, "subjects"), json_object_get(want, "subjects"));
    assert_json_eq(json_object_get(o, "roleRef"), json_object_get(want, "roleRef"));
    assert_int_equal(json_array_size(json_object_get(o, "causes")), 0);
    json_decref(want);
    json_decref(o);
}

static void expect_causes(const api_kind *k, const char *json, const char *want)
{
    json_t *o = J(json), *causes = json_array(), *w = J(want);
    if (k->defaults) k->defaults(o);
    k->validate(o, NULL, causes);
    assert_json_eq(causes, w);
    json_decref(o);
    json_decref(causes);
    json_decref(w);
}

#define INV "FieldValueInvalid"
#define REQ "FieldValueRequired"
#define NS "FieldValueNotSupported"

static void test_rule_validation(void **state)
{
    (void)state;
    expect_causes(
        kind("roles"),
        "{'metadata':{'name':'r','namespace':'n'},'rules':[{'apiGroups':[''],'resources':['pods']},"
        "{'verbs':['get']},{'verbs':['get'],'nonResourceURLs':['/a','/b']},"
        "{'verbs':['get'],'apiGroups':[''],'resources':['pods','nodes'],'resourceNames':['x']}]}",
        "[{'reason':'" REQ "','field':'rules[0].verbs','message':'Required value: verbs must "
        "contain at least one value'},"
        "{'reason':'" REQ "','field':'rules[1].apiGroups','message':'Required value: resource "
        "rules must supply at least one api group'},"
        "{'reason':'" REQ "','field':'rules[1].resources','message':'Required value: resource "
        "rules must supply at least one resource'},"
        "{'reason':'" INV "','field':'rules[2].nonResourceURLs','message':'Invalid value: "
        "[]string{\\'/a\\', \\'/b\\'}: namespaced rules cannot apply to non-resource URLs'},"
        "{'reason':'" REQ "','field':'rules[3].resourceNames','message':'Required value: resource "
        "names cannot apply to multiple resources'}]");
    expect_causes(kind("clusterroles"),
                  "{'metadata':{'name':'r'},'rules':[{'verbs':['get'],'nonResourceURLs':['/a'],"
                  "'resources':['pods']}],'aggregationRule':{'clusterRoleSelectors':[]}}",
                  "[{'reason':'" INV "','field':'rules[0].nonResourceURLs','message':'Invalid "
                  "value: []string{\\'/a\\'}: rules cannot apply to both regular resources and "
                  "non-resource URLs'},"
                  "{'reason':'" REQ "','field':'aggregationRule.clusterRoleSelectors','message':"
                  "'Required value: at least one clusterRoleSelector required if "
                  "aggregationRule is non-nil'}]");
}

static json_t *causes_of(const api_kind *k, const char *json)
{
    json_t *o = J(json), *causes = json_array();
    if (k->defaults) k->defaults(o);
    k->validate(o, NULL, causes);
    json_decref(o);
    return causes;
}

static void test_binding_validation(void **state)
{
    (void)state;
    json_t *c = causes_of(
        kind("rolebindings"),
        "{'metadata':{'name':'b','namespace':'n'},'roleRef':{'apiGroup':'x.io','kind':'Pod',"
        "'name':'a/b'},'subjects':[{'kind':'User','name':''},{'kind':'ServiceAccount',"
        "'name':'Bad_Name','apiGroup':'v1'},{'kind':'Robot','name':'r2'},{'kind':'Group',"
        "'name':'g','apiGroup':'v1'}]}");
    assert_int_equal(json_array_size(c), 9);
    expect_cause(c, 0, NS, "roleRef.apiGroup",
                 "Unsupported value: \"x.io\": supported values: \"rbac.authorization.k8s.io\"");
    expect_cause(c, 1, NS, "roleRef.kind",
                 "Unsupported value: \"Pod\": supported values: \"Role\", \"ClusterRole\"");
    expect_cause(c, 2, INV, "roleRef.name", "Invalid value: \"a/b\": may not contain '/'");
    expect_cause(c, 3, REQ, "subjects[0].name", "Required value");
    expect_cause(c, 4, INV, "subjects[0].name", "Invalid value: \"\": user name cannot be empty");
    expect_cause(c, 5, INV, "subjects[1].name",
                 "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of "
                 "lower case alphanumeric characters, '-' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'example.com', regex used for validation is "
                 "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    expect_cause(c, 6, NS, "subjects[1].apiGroup",
                 "Unsupported value: \"v1\": supported values: \"\"");
    expect_cause(c, 7, NS, "subjects[2].kind",
                 "Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", "
                 "\"Group\"");
    expect_cause(c, 8, NS, "subjects[3].apiGroup",
                 "Unsupported value: \"v1\": supported values: \"rbac.authorization.k8s.io\"");
    json_decref(c);
    c = causes_of(kind("clusterrolebindings"),
                  "{'metadata':{'name':'b'},'roleRef':{'kind':'Role','name':''},"
                  "'subjects':[{'kind':'ServiceAccount','name':'sa'}]}");
    assert_int_equal(json_array_size(c), 3);
    expect_cause(c, 0, NS, "roleRef.kind",
                 "Unsupported value: \"Role\": supported values: \"ClusterRole\"");
    expect_cause(c, 1, REQ, "roleRef.name", "Required value");
    expect_cause(c, 2, REQ, "subjects[0].namespace", "Required value");
    json_decref(c);
}

static void test_roleref_immutable(void **state)
{
    (void)state;
    const api_kind *k = kind("clusterrolebindings");
    json_t *old = J("{'metadata':{'name':'b'},'roleRef':{'apiGroup':'rbac.authorization.k8s.io',"
                    "'kind':'ClusterRole','name':'view'}}");
    json_t *same = J("{'metadata':{'name':'b'},'roleRef':{'kind':'ClusterRole','name':'view'},"
                     "'subjects':[{'kind':'User','name':'u'}]}");
    json_t *changed = J("{'metadata':{'name':'b'},'roleRef':{'kind':'ClusterRole',"
                        "'name':'edit'}}");
    json_t *causes = json_array();
    k->defaults(same);
    k->validate_update(same, old, "", causes);
    assert_int_equal(json_array_size(causes), 0);
    k->defaults(changed);
    k->validate_update(changed, old, "", causes);
    json_t *want = J("[{'reason':'" INV "','field':'roleRef','message':'Invalid value: "
                     "rbac.RoleRef{APIGroup:\\'rbac.authorization.k8s.io\\', "
                     "Kind:\\'ClusterRole\\', Name:\\'edit\\'}: cannot change roleRef'}]");
    assert_json_eq(causes, want);
    json_decref(want);
    json_decref(causes);
    json_decref(old);
    json_decref(same);
    json_decref(changed);
}

static void expect_table(const api_kind *k, const char *obj, const char *cols, const char *cells)
{
    json_t *items = json_array();
    json_array_append_new(items, J(obj));
    json_t *t = table_build(k, items, "None", NOW, NULL);
    json_decref(items);
    json_t *names = json_array(), *wc = J(cols), *wcells = J(cells);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(t, "columnDefinitions"), i, c)
    {
        char n[64];
        snprintf(n, sizeof n, "%s%s", json_string_value(json_object_get(c, "name")),
                 json_integer_value(json_object_get(c, "priority")) ? "*" : "");
        json_array_append_new(names, json_string(n));
    }
    assert_json_eq(names, wc);
    assert_json_eq(json_object_get(json_array_get(json_object_get(t, "rows"), 0), "cells"), wcells);
    json_decref(names);
    json_decref(wc);
    json_decref(wcells);
    json_decref(t);
}

static void test_tables(void **state)
{
    (void)state;
    expect_table(kind("roles"),
                 "{'metadata':{'name':'r','namespace':'n','creationTimestamp':'" T_5M "'}}",
                 "['Name','Created At']", "['r','" T_5M "']");
    expect_table(kind("clusterroles"), "{'metadata':{'name':'c'}}", "['Name','Created At']",
                 "['c','0001-01-01T00:00:00Z']");
    expect_table(kind("clusterrolebindings"),
                 "{'metadata':{'name':'b','creationTimestamp':'" T_5M "'},'roleRef':{'kind':"
                 "'ClusterRole','name':'view'},'subjects':[{'kind':'User','name':'u1'},"
                 "{'kind':'ServiceAccount','name':'sa','namespace':'ns1'},{'kind':'User',"
                 "'name':'u2'},{'kind':'Group','name':'g'}]}",
                 "['Name','Role','Age','Users*','Groups*','ServiceAccounts*']",
                 "['b','ClusterRole/view','5m','u1, u2','g','ns1/sa']");
    expect_table(kind("rolebindings"),
                 "{'metadata':{'name':'b','namespace':'n','creationTimestamp':'" T_5M "'},"
                 "'roleRef':{'kind':'Role','name':'r'}}",
                 "['Name','Role','Age','Users*','Groups*','ServiceAccounts*']",
                 "['b','Role/r','5m','','','']");
}

/* The bootstrap objects pass the kinds' own decoding and validation. */
static void test_defaults_valid(void **state)
{
    (void)state;
    json_t *objs = rbac_default_objects();
    size_t i;
    json_t *o;
    assert_true(json_array_size(objs) > 20);
    json_array_foreach(objs, i, o)
    {
        const char *k = json_string_value(json_object_get(o, "kind"));
        const api_kind *ak = api_kind_by_kind("rbac.authorization.k8s.io/v1", k);
        assert_non_null(ak);
        json_t *copy = json_deep_copy(o), *causes = json_array();
        tc_result r;
        if (tc_decode(api_kind_schema(ak), copy, &r) != 0) fail_msg("decode: %s", r.error);
        assert_int_equal(json_array_size(r.unknown), 0);
        tc_result_clear(&r);
        ak->validate(copy, NULL, causes);
        if (json_array_size(causes))
            fail_msg("%s: %s", k,
                     json_string_value(json_object_get(json_array_get(causes, 0), "message")));
        json_decref(causes);
        json_decref(copy);
    }
    json_decref(objs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_upstream_examples),
        cmocka_unit_test(test_binding_defaults),
        cmocka_unit_test(test_rule_validation),
        cmocka_unit_test(test_binding_validation),
        cmocka_unit_test(test_roleref_immutable),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_defaults_valid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
