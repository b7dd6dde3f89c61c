/* test_workloads.c - the ReplicaSet and Deployment controllers through the
 * registry on a memory store with the controllers running and the
 * admission plugins registered (no scheduler or node agent: pods stay
 * unbound, so a deleted pod goes at once):
 *  - a ReplicaSet at a pods quota has what the quota allows, ReplicaFailure
 *    with the quota's message, the rest once the quota is raised (its
 *    change wakes the set), and scales down;
 *  - claims: a matching orphan is adopted, a pod relabelled away released;
 *  - a Deployment makes <name>-<hash> with the hash label and selector,
 *    revision 1, then a second set (revision 2) for a new template, the
 *    first scaled to 0; Recreate waits for the old pods.
 * Waits are bounded polls (WAIT_FOR), never fixed sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/controllers.h"
#include "registry/admission.h"
#include "teststore.h"

static store *st;
static controllers *ctl;

#define WAIT_FOR(cond)                                                                             \
    do {                                                                                           \
        bool ok_ = false;                                                                          \
        for (int i_ = 0; i_ < 1000 && !(ok_ = (cond)); i_++)                                       \
            nanosleep(&(struct timespec){0, 10000000L}, NULL);                                     \
        if (!ok_) fail_msg("timed out waiting for: %s", #cond);                                    \
    } while (0)

static int setup(void **state)
{
    (void)state;
    st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'team'}}");
    char err[256];
    ctl = controllers_start(st, err, sizeof err);
    if (!ctl) fail_msg("controllers_start: %s", err);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    controllers_stop(ctl);
    store_close(st);
    return 0;
}

static void create_apps(const char *resource, const char *obj)
{
    const api_kind *k = test_kind("apps", "v1", resource);
    json_t *o = J(obj), *out = NULL;
    api_err e;
    api_err_init(&e);
    if (reg_create(st, k, "team", o, false, &out, &e) != 0) fail_msg("create: %s", e.message);
    json_decref(out);
    json_decref(o);
}

static json_t *get(const char *group, const char *resource, const char *name)
{
    api_err e;
    api_err_init(&e);
    json_t *o = reg_get(st, test_kind(group, "v1", resource), "team", name, &e);
    api_err_clear(&e);
    return o;
}

/* Pods of team (not being deleted) with label app=<app>; owned by uid when
 * given. */
static size_t pods_of(const char *app, const char *uid)
{
    store_obj **objs = NULL;
    size_t n = 0, found = 0;
    if (store_list(st, "pods/team/", NULL, 0, &objs, &n, NULL, NULL) != 0) return 0;
    for (size_t i = 0; i < n; i++) {
        json_t *p = store_obj_parse(objs[i]);
        json_t *meta = json_object_get(p, "metadata");
        const char *a = json_string_value(json_object_get(json_object_get(meta, "labels"), "app"));
        const char *ou = json_string_value(
            json_object_get(json_array_get(json_object_get(meta, "ownerReferences"), 0), "uid"));
        if (a && !strcmp(a, app) && !json_object_get(meta, "deletionTimestamp") &&
            (!uid || (ou && !strcmp(ou, uid))))
            found++;
        json_decref(p);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return found;
}

static const char *str_at(const json_t *o, const char *a, const char *b, const char *c)
{
    return json_string_value(json_object_get(json_object_get(json_object_get(o, a), b), c));
}

/* The `field` of condition `type` of group/resource name ("" when none);
 * copied into buf. */
static const char *cond(const char *group, const char *resource, const char *name, const char *type,
                        const char *field, char *buf, size_t n)
{
    json_t *o = get(group, resource, name);
    size_t i;
    json_t *c;
    buf[0] = '\0';
    json_array_foreach(json_object_get(json_object_get(o, "status"), "conditions"), i, c)
    {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && !strcmp(t, type)) {
            const char *v = json_string_value(json_object_get(c, field));
            snprintf(buf, n, "%s", v ? v : "");
        }
    }
    json_decref(o);
    return buf;
}

static int64_t int_at(const char *group, const char *resource, const char *name, const char *a,
                      const char *b)
{
    json_t *o = get(group, resource, name);
    int64_t v = json_integer_value(json_object_get(json_object_get(o, a), b));
    json_decref(o);
    return v;
}

#define RS(name, replicas)                                                                         \
    "{'apiVersion':'apps/v1','kind':'ReplicaSet','metadata':{'name':'" name                        \
    "'},'spec':{'replicas':" #replicas ",'selector':{"                                             \
    "'matchLabels':{'app':'" name "'}},'template':{'metadata':{'labels':{'app':'" name "'}},"      \
    "'spec':{'containers':[{'name':'c','image':'nginx'}]}}}}"

static void test_replicaset_at_quota(void **state)
{
    (void)state;
    char buf[4096];
    create_core(st, "resourcequotas", "team",
                "{'metadata':{'name':'q'},'spec':{'hard':{'pods':'2'}}}");
    create_apps("replicasets", RS("web", 3));
    WAIT_FOR(
        !strcmp(cond("apps", "replicasets", "web", "ReplicaFailure", "reason", buf, sizeof buf),
                "FailedCreate"));
    if (pods_of("web", NULL) != 2)
        fail_msg("%zu pods: %s", pods_of("web", NULL),
                 cond("apps", "replicasets", "web", "ReplicaFailure", "message", buf, sizeof buf));
    cond("apps", "replicasets", "web", "ReplicaFailure", "message", buf, sizeof buf);
    assert_non_null(strstr(buf, "is forbidden: exceeded quota: q, requested: pods=1, used: "
                                "pods=2, limited: pods=2"));
    assert_true(!strncmp(buf, "pods \"web-", 10));
    WAIT_FOR(int_at("apps", "replicasets", "web", "status", "replicas") == 2);
    /* the quota raised: the set wakes at once (its backoff is 1 s and more) */
    char msg[1024];
    assert_int_equal(reg_merge(st, test_kind("", "v1", "resourcequotas"), "team", "q", "",
                               "{'spec':{'hard':{'pods':'5'}}}", false, msg, sizeof msg),
                     200);
    WAIT_FOR(pods_of("web", NULL) == 3);
    WAIT_FOR(!*cond("apps", "replicasets", "web", "ReplicaFailure", "reason", buf, sizeof buf));
    WAIT_FOR(int_at("apps", "replicasets", "web", "status", "replicas") == 3);
    assert_int_equal(pods_of("web", NULL), 3); /* never more */
    /* scale down */
    assert_int_equal(reg_merge(st, test_kind("apps", "v1", "replicasets"), "team", "web", "",
                               "{'spec':{'replicas':1}}", false, msg, sizeof msg),
                     200);
    WAIT_FOR(pods_of("web", NULL) == 1);
    WAIT_FOR(int_at("apps", "replicasets", "web", "status", "observedGeneration") == 2);
}

static bool owned(const char *pod)
{
    json_t *p = get("", "pods", pod);
    bool has = json_array_size(json_object_get(json_object_get(p, "metadata"), "ownerReferences"));
    json_decref(p);
    return has;
}

static void test_replicaset_claims(void **state)
{
    (void)state;
    create_core(st, "pods", "team",
                "{'metadata':{'name':'stray','labels':{'app':'web'}},'spec':{'containers':[{"
                "'name':'c','image':'nginx'}]}}");
    create_apps("replicasets", RS("web", 2));
    json_t *rs = get("apps", "replicasets", "web");
    char uid[64];
    snprintf(uid, sizeof uid, "%s",
             json_string_value(json_object_get(json_object_get(rs, "metadata"), "uid")));
    json_decref(rs);
    /* the orphan is adopted and counts: one pod made, not two */
    WAIT_FOR(pods_of("web", uid) == 2);
    json_t *p = get("", "pods", "stray");
    json_t *ref =
        json_array_get(json_object_get(json_object_get(p, "metadata"), "ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(ref, "kind")), "ReplicaSet");
    assert_true(json_is_true(json_object_get(ref, "controller")));
    json_decref(p);
    /* relabelled away: released, and replaced */
    char msg[1024];
    assert_int_equal(reg_merge(st, test_kind("", "v1", "pods"), "team", "stray", "",
                               "{'metadata':{'labels':{'app':'other'}}}", false, msg, sizeof msg),
                     200);
    WAIT_FOR(!owned("stray"));
    WAIT_FOR(pods_of("web", uid) == 2);
}

#define DEPLOY(name, image, strategy)                                                              \
    "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'" name                        \
    "'},'spec':{'replicas':2,'strategy':" strategy ",'selector':{"                                 \
    "'matchLabels':{'app':'" name "'}},'template':{'metadata':{'labels':{'app':'" name "'}},"      \
    "'spec':{'containers':[{'name':'c','image':'" image "'}]}}}}"

/* The ReplicaSets of team, as "name=replicas/revision" sorted by name, into buf. */
static const char *sets(char *buf, size_t n)
{
    store_obj **objs = NULL;
    size_t cnt = 0, used = 0;
    buf[0] = '\0';
    if (store_list(st, "replicasets.apps/team/", NULL, 0, &objs, &cnt, NULL, NULL) != 0) return buf;
    for (size_t i = 0; i < cnt; i++) {
        json_t *r = store_obj_parse(objs[i]);
        const char *rev = json_string_value(
            json_object_get(json_object_get(json_object_get(r, "metadata"), "annotations"),
                            "deployment.kubernetes.io/revision"));
        if (used < n)
            used +=
                (size_t)snprintf(buf + used, n - used, "%s%s=%lld/%s", i ? " " : "", objs[i]->name,
                                 (long long)json_integer_value(
                                     json_object_get(json_object_get(r, "spec"), "replicas")),
                                 rev ? rev : "-");
        json_decref(r);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return buf;
}

/* Whether Deployment name carries deployment.kubernetes.io/revision rev. */
static bool revision_is(const char *name, const char *rev)
{
    json_t *d = get("apps", "deployments", name);
    const char *r = str_at(d, "metadata", "annotations", "deployment.kubernetes.io/revision");
    bool is = r && !strcmp(r, rev);
    json_decref(d);
    return is;
}

static void test_deployment_rolls_out(void **state)
{
    (void)state;
    char buf[1024];
    /* pods never become ready here (no node agent): let all be unavailable */
    create_apps("deployments", DEPLOY("api", "nginx:1",
                                      "{'rollingUpdate':{'maxUnavailable':'100%','maxSurge':0}}"));
    WAIT_FOR(pods_of("api", NULL) == 2);
    sets(buf, sizeof buf);
    assert_true(!strncmp(buf, "api-", 4));
    assert_non_null(strstr(buf, "=2/1"));
    /* the set's pods can come before the Deployment's own write of its
     * revision (two controllers): wait for it */
    WAIT_FOR(revision_is("api", "1"));
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(strchr(buf, '=') - buf), buf);
    json_t *rs = get("apps", "replicasets", name);
    const char *hash = str_at(rs, "metadata", "labels", "pod-template-hash");
    assert_non_null(hash);
    assert_string_equal(name + 4, hash);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(json_object_get(rs, "spec"), "selector"),
                            "matchLabels"),
            "pod-template-hash")),
        hash);
    json_decref(rs);
    /* a new template: a second set at revision 2, the first scaled to 0 */
    char msg[1024];
    assert_int_equal(reg_merge(st, test_kind("apps", "v1", "deployments"), "team", "api", "",
                               "{'spec':{'template':{'spec':{'containers':[{'name':'c','image':"
                               "'nginx:2'}]}}}}",
                               false, msg, sizeof msg),
                     200);
    WAIT_FOR(strstr(sets(buf, sizeof buf), "=0/1") && strstr(buf, "=2/2"));
    WAIT_FOR(pods_of("api", NULL) == 2);
    WAIT_FOR(int_at("apps", "deployments", "api", "status", "updatedReplicas") == 2);
    cond("apps", "deployments", "api", "Available", "reason", buf, sizeof buf);
    assert_string_equal(buf, "MinimumReplicasAvailable"); /* 100% may be unavailable */
}

static void test_deployment_recreate(void **state)
{
    (void)state;
    char buf[1024], msg[1024];
    create_apps("deployments", DEPLOY("job", "a:1", "{'type':'Recreate'}"));
    WAIT_FOR(pods_of("job", NULL) == 2);
    assert_int_equal(reg_merge(st, test_kind("apps", "v1", "deployments"), "team", "job", "",
                               "{'spec':{'template':{'spec':{'containers':[{'name':'c','image':"
                               "'a:2'}]}}}}",
                               false, msg, sizeof msg),
                     200);
    WAIT_FOR(strstr(sets(buf, sizeof buf), "=0/1") && strstr(buf, "=2/2"));
    WAIT_FOR(pods_of("job", NULL) == 2);
    WAIT_FOR(int_at("apps", "deployments", "job", "status", "updatedReplicas") == 2);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_replicaset_at_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replicaset_claims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deployment_rolls_out, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deployment_recreate, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
