/* test_audit.c - server/audit.h: upstream's example audit policy (the
 * Kubernetes "Auditing" page) decided rule by rule, bodies that are never
 * logged, the Event lines (fields, escaping) and the log file's mode. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/audit.h"
#include "testutil.h"

/* From kubernetes.io/docs/tasks/debug/debug-cluster/audit/ (audit-policy.yaml). */
static const char *const POLICY =
    "apiVersion: audit.k8s.io/v1\n"
    "kind: Policy\n"
    "omitStages:\n"
    "  - \"RequestReceived\"\n"
    "rules:\n"
    "  - level: RequestResponse\n"
    "    resources:\n"
    "    - group: \"\"\n"
    "      resources: [\"pods\"]\n"
    "  - level: Metadata\n"
    "    resources:\n"
    "    - group: \"\"\n"
    "      resources: [\"pods/log\", \"pods/status\"]\n"
    "  - level: None\n"
    "    resources:\n"
    "    - group: \"\"\n"
    "      resources: [\"configmaps\"]\n"
    "      resourceNames: [\"controller-leader\"]\n"
    "  - level: None\n"
    "    users: [\"system:kube-proxy\"]\n"
    "    verbs: [\"watch\"]\n"
    "    resources:\n"
    "    - group: \"\"\n"
    "      resources: [\"endpoints\", \"services\"]\n"
    "  - level: None\n"
    "    userGroups: [\"system:authenticated\"]\n"
    "    nonResourceURLs:\n"
    "    - \"/api*\"\n"
    "    - \"/version\"\n"
    "  - level: Request\n"
    "    resources:\n"
    "    - group: \"\"\n"
    "      resources: [\"configmaps\"]\n"
    "    namespaces: [\"kube-system\"]\n"
    "  - level: Metadata\n"
    "    resources:\n"
    "    - group: \"\"\n"
    "      resources: [\"secrets\", \"configmaps\"]\n"
    "  - level: Request\n"
    "    resources:\n"
    "    - group: \"\"\n"
    "    - group: \"extensions\"\n"
    "  - level: Metadata\n"
    "    omitStages:\n"
    "      - \"RequestReceived\"\n";

static const char *const AUTHENTICATED[] = {"system:authenticated"};

static audit_attrs res(const char *user, const char *verb, const char *group, const char *resource,
                       const char *sub, const char *ns, const char *name)
{
    return (audit_attrs){user,   "u1",     AUTHENTICATED, 1,    verb, true, group, "v1",
                         resource, sub,    ns,            name, "/x", "127.0.0.1", "kubectl/v1"};
}

static audit_attrs url(const char *path)
{
    return (audit_attrs){"alice", "u1", AUTHENTICATED, 1,  "get", false, "", "", "", "",
                         "",      "",   path,          "127.0.0.1", ""};
}

static void test_upstream_example(void **state)
{
    (void)state;
    char err[256];
    audit_policy *p = audit_policy_parse(POLICY, strlen(POLICY), err, sizeof err);
    assert_non_null(p);
    struct {
        audit_attrs a;
        audit_level want;
    } cases[] = {
        {res("alice", "create", "", "pods", "", "default", "web"), AUDIT_REQUEST_RESPONSE},
        {res("alice", "get", "", "pods", "log", "default", "web"), AUDIT_METADATA},
        {res("alice", "update", "", "pods", "status", "default", "web"), AUDIT_METADATA},
        /* "pods" matches no subresource: pods/binding falls to the core Request rule */
        {res("alice", "create", "", "pods", "binding", "default", "web"), AUDIT_REQUEST},
        {res("alice", "update", "", "configmaps", "", "default", "controller-leader"), AUDIT_NONE},
        {res("system:kube-proxy", "watch", "", "services", "", "default", ""), AUDIT_NONE},
        {res("system:kube-proxy", "list", "", "services", "", "default", ""), AUDIT_REQUEST},
        {url("/api/v1"), AUDIT_NONE},
        {url("/apis"), AUDIT_NONE},
        {url("/version"), AUDIT_NONE},
        {url("/versions"), AUDIT_METADATA},
        {url("/metrics"), AUDIT_METADATA},
        {res("alice", "update", "", "configmaps", "", "kube-system", "c"), AUDIT_REQUEST},
        {res("alice", "update", "", "configmaps", "", "default", "c"), AUDIT_METADATA},
        {res("alice", "get", "", "secrets", "", "kube-system", "s"), AUDIT_METADATA},
        {res("alice", "create", "", "namespaces", "", "", "n"), AUDIT_REQUEST},
        {res("alice", "create", "apps", "deployments", "", "default", "d"), AUDIT_METADATA},
        {res("alice", "create", "extensions", "ingresses", "", "default", "i"), AUDIT_REQUEST},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned omit = 0;
        audit_level l = audit_policy_level(p, &cases[i].a, &omit);
        if (l != cases[i].want)
            fail_msg("case %zu (%s %s/%s %s): level %d, want %d", i, cases[i].a.verb,
                     cases[i].a.resource, cases[i].a.subresource, cases[i].a.path, l,
                     cases[i].want);
        assert_true(omit & AUDIT_STAGE_RECEIVED);
    }
    audit_policy_free(p);
}

/* Wildcard rules (any resource, any resource's status, any subresource of
 * events), and bodies that are never logged. */
static void test_wildcards_and_secrets(void **state)
{
    (void)state;
    const char *text = "{\"kind\":\"Policy\",\"rules\":["
                       "{\"level\":\"Metadata\",\"resources\":[{\"group\":\"\",\"resources\":"
                       "[\"*/status\"]}]},"
                       "{\"level\":\"None\",\"resources\":[{\"group\":\"\",\"resources\":"
                       "[\"events/*\"]}]},"
                       "{\"level\":\"RequestResponse\",\"resources\":[{\"group\":\"*\"},"
                       "{\"group\":\"\",\"resources\":[\"*\"]},{\"group\":"
                       "\"authentication.k8s.io\"}]}]}";
    char err[256];
    audit_policy *p = audit_policy_parse(text, strlen(text), err, sizeof err);
    assert_non_null(p);
    audit_attrs a = res("bob", "update", "", "pods", "status", "ns", "p");
    assert_int_equal(audit_policy_level(p, &a, NULL), AUDIT_METADATA);
    a = res("bob", "create", "", "events", "", "ns", "e");
    assert_int_equal(audit_policy_level(p, &a, NULL), AUDIT_NONE);
    a = res("bob", "create", "", "pods", "", "ns", "p");
    assert_int_equal(audit_policy_level(p, &a, NULL), AUDIT_REQUEST_RESPONSE);
    /* a group named "*" is not a wildcard upstream */
    a = res("bob", "create", "apps", "deployments", "", "ns", "d");
    assert_int_equal(audit_policy_level(p, &a, NULL), AUDIT_NONE);
    /* whatever the policy says, no credentials in the log */
    a = res("bob", "create", "", "secrets", "", "ns", "s");
    assert_int_equal(audit_policy_level(p, &a, NULL), AUDIT_METADATA);
    a = res("bob", "create", "", "serviceaccounts", "token", "ns", "sa");
    assert_int_equal(audit_policy_level(p, &a, NULL), AUDIT_METADATA);
    a = res("bob", "create", "authentication.k8s.io", "tokenreviews", "", "", "");
    assert_int_equal(audit_policy_level(p, &a, NULL), AUDIT_METADATA);
    audit_policy_free(p);
}

static void test_bad_policies(void **state)
{
    (void)state;
    const char *bad[][2] = {
        {"kind: Policy\nrules:\n- level: Everything\n", "rules[0].level: Unsupported value"},
        {"kind: Policy\nrules: 3\n", "rules: expected a list"},
        {"kind: Nope\nrules: []\n", "kind: expected \"Policy\""},
        {"kind: Policy\nrules:\n- level: None\n  users: x\n", "rules[0].users: expected a list"},
        {"kind: Policy\nomitStages: [Later]\nrules: []\n", "omitStages[0]: Unsupported value"},
        {"kind: Policy\nrules:\n- level: None\n  namespaces: [a]\n  nonResourceURLs: [/x]\n",
         "cannot apply to both"},
        {"kind: [\n", "line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[256] = "";
        audit_policy *p = audit_policy_parse(bad[i][0], strlen(bad[i][0]), err, sizeof err);
        if (p || !strstr(err, bad[i][1]))
            fail_msg("policy %zu: %s, error [%s], want [%s]", i, p ? "accepted" : "refused", err,
                     bad[i][1]);
    }
}

static json_t *line_json(const audit_event *ev, const audit_attrs *a, unsigned stage)
{
    size_t len = 0;
    char *line = audit_event_line(ev, a, stage, &len);
    if (!line) return NULL;
    assert_int_equal(strlen(line), len);
    assert_int_equal(line[len - 1], '\n');
    assert_null(memchr(line, '\n', len - 1)); /* one line, whatever the input */
    json_error_t je;
    json_t *j = json_loadb(line, len, 0, &je);
    assert_non_null(j);
    free(line);
    return j;
}

static void test_event_lines(void **state)
{
    (void)state;
    audit_policy *p = audit_policy_default();
    const char *groups[] = {"system:masters", "system:authenticated"};
    audit_attrs a = {"admin", "admin", groups, 2, "create", true, "", "v1", "configmaps", "",
                     "default", "c1", "/api/v1/namespaces/default/configmaps?x=\n\"}{\xff",
                     "127.0.0.1", "kubectl/v1.31.0"};
    audit_event ev;
    audit_event_begin(&ev, p, &a);
    assert_int_equal(ev.level, AUDIT_METADATA);
    json_t *body = json_pack("{s:{s:s}}", "data", "k", "v");
    ev.request = body;
    json_t *j = line_json(&ev, &a, AUDIT_STAGE_RECEIVED);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "stage")), "RequestReceived");
    assert_null(json_object_get(j, "responseStatus"));
    json_decref(j);
    ev.code = 403;
    ev.message = "configmaps is forbidden";
    ev.decision = "forbid";
    ev.reason = "";
    j = line_json(&ev, &a, AUDIT_STAGE_COMPLETE);
    assert_string_equal(json_string_value(json_object_get(j, "apiVersion")), "audit.k8s.io/v1");
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "Event");
    assert_string_equal(json_string_value(json_object_get(j, "level")), "Metadata");
    assert_string_equal(json_string_value(json_object_get(j, "auditID")), ev.id);
    assert_string_equal(json_string_value(json_object_get(j, "stage")), "ResponseComplete");
    assert_string_equal(json_string_value(json_object_get(j, "verb")), "create");
    /* the path's newline and quote stay inside the string; 0xff is U+FFFD */
    assert_string_equal(json_string_value(json_object_get(j, "requestURI")),
                        "/api/v1/namespaces/default/configmaps?x=\n\"}{\xef\xbf\xbd");
    const json_t *u = json_object_get(j, "user");
    assert_string_equal(json_string_value(json_object_get(u, "username")), "admin");
    assert_int_equal(json_array_size(json_object_get(u, "groups")), 2);
    const json_t *ref = json_object_get(j, "objectRef");
    assert_string_equal(json_string_value(json_object_get(ref, "resource")), "configmaps");
    assert_string_equal(json_string_value(json_object_get(ref, "namespace")), "default");
    assert_string_equal(json_string_value(json_object_get(ref, "name")), "c1");
    const json_t *rs = json_object_get(j, "responseStatus");
    assert_int_equal(json_integer_value(json_object_get(rs, "code")), 403);
    assert_string_equal(json_string_value(json_object_get(rs, "status")), "Failure");
    assert_null(json_object_get(j, "requestObject")); /* Metadata: no bodies */
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "annotations"),
                                                          "authorization.k8s.io/decision")),
                        "forbid");
    assert_non_null(json_object_get(j, "requestReceivedTimestamp"));
    assert_non_null(json_object_get(j, "stageTimestamp"));
    json_decref(j);
    /* Request level: the body is there */
    ev.level = AUDIT_REQUEST;
    j = line_json(&ev, &a, AUDIT_STAGE_COMPLETE);
    assert_true(json_equal(json_object_get(j, "requestObject"), body));
    assert_null(json_object_get(j, "responseObject"));
    json_decref(j);
    /* None and omitted stages write nothing */
    ev.omit = AUDIT_STAGE_RECEIVED;
    size_t len;
    assert_null(audit_event_line(&ev, &a, AUDIT_STAGE_RECEIVED, &len));
    ev.level = AUDIT_NONE;
    assert_null(audit_event_line(&ev, &a, AUDIT_STAGE_COMPLETE, &len));
    json_decref(body);
    audit_policy_free(p);
}

/* impersonatedUser beside user (audit.LogImpersonatedUser): the policy
 * decides on the authenticated user; the Event names both. */
static void test_impersonated_user(void **state)
{
    (void)state;
    const char *text = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n"
                       "- level: None\n  users: [\"alice\"]\n- level: Metadata\n";
    char err[256];
    audit_policy *p = audit_policy_parse(text, strlen(text), err, sizeof err);
    assert_non_null(p);
    const char *groups[] = {"system:masters", "system:authenticated"};
    const char *igroups[] = {"devs", "system:authenticated"};
    const char *scopes[] = {"view", "de\"v"};
    const auth_extra extra[] = {{"scopes", scopes, 2}, {"acme.com/project", scopes, 1}};
    const auth_user alice = {"alice", "1234", igroups, 2, extra, 2};
    audit_attrs a = {.user = "admin",
                     .uid = "admin",
                     .groups = groups,
                     .ngroups = 2,
                     .verb = "list",
                     .resource_request = true,
                     .api_version = "v1",
                     .resource = "secrets",
                     .ns = "tenant-b",
                     .impersonated = &alice};
    audit_event ev;
    audit_event_begin(&ev, p, &a); /* the rule for alice does not apply: admin sent it */
    assert_int_equal(ev.level, AUDIT_METADATA);
    ev.code = 403;
    json_t *j = line_json(&ev, &a, AUDIT_STAGE_COMPLETE);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "user"), "username")),
                        "admin");
    json_t *want = J("{'username':'alice','uid':'1234','groups':['devs','system:authenticated'],"
                     "'extra':{'scopes':['view','de\\'v'],'acme.com/project':['view']}}");
    assert_json_eq(json_object_get(j, "impersonatedUser"), want);
    json_decref(want);
    json_decref(j);
    /* empty members are left out, as upstream's omitempty */
    const auth_user bare = {"bob", "", NULL, 0, NULL, 0};
    a.impersonated = &bare;
    j = line_json(&ev, &a, AUDIT_STAGE_COMPLETE);
    want = J("{'username':'bob'}");
    assert_json_eq(json_object_get(j, "impersonatedUser"), want);
    json_decref(want);
    json_decref(j);
    a.impersonated = NULL;
    j = line_json(&ev, &a, AUDIT_STAGE_COMPLETE);
    assert_null(json_object_get(j, "impersonatedUser"));
    json_decref(j);
    audit_policy_free(p);
}

static void test_log_file(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_audit.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/audit.log", dir);
    FILE *f = fopen(path, "w"); /* exists, world-readable */
    assert_non_null(f);
    fputs("old\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0644), 0);
    char err[256];
    audit_log *l = audit_log_open(path, err, sizeof err);
    assert_non_null(l);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    audit_policy *p = audit_policy_default();
    audit_attrs a = url("/metrics");
    audit_event ev;
    audit_event_begin(&ev, p, &a);
    ev.code = 200;
    assert_int_equal(audit_log_stage(l, &ev, &a, AUDIT_STAGE_RECEIVED), 0);
    assert_int_equal(audit_log_stage(l, &ev, &a, AUDIT_STAGE_COMPLETE), 0);
    audit_log_close(l);
    char buf[4096];
    f = fopen(path, "r");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    assert_int_equal(strncmp(buf, "old\n{", 5), 0); /* appended */
    int lines = 0;
    for (char *c = buf; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 3);
    assert_null(strstr(buf, "objectRef")); /* a non-resource request */
    assert_non_null(audit_log_open("/nonexistent-dir/audit.log", err, sizeof err) ? NULL : err);
    unlink(path);
    rmdir(dir);
    audit_policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_upstream_example),
        cmocka_unit_test(test_wildcards_and_secrets),
        cmocka_unit_test(test_bad_policies),
        cmocka_unit_test(test_event_lines),
        cmocka_unit_test(test_impersonated_user),
        cmocka_unit_test(test_log_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
