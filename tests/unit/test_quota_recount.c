/* test_quota_recount.c - the recount on cached facts (registry/quota_admission.c).
 *
 * Objects are created through the registry on a memory store, so the store's
 * indexer attaches each object's quota facts. The recount that reads those
 * facts must equal a recount that parses every object's JSON
 * (quota_recount_add), and both must equal the status.used admission kept:
 * "quota used == sum of charged objects, at every commit".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/quota_eval.h"
#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "registry/quota_ledger.h"

static json_t *J(const char *s)
{
    char *d = strdup(s);
    for (char *p = d; *p; p++)
        if (*p == '\'') *p = '"';
    json_error_t e;
    json_t *v = json_loads(d, 0, &e);
    if (!v) fail_msg("bad test JSON %s: %s", s, e.text);
    free(d);
    return v;
}

static void create(store *st, const char *group, const char *res, const char *ns, const char *obj)
{
    const api_kind *k = api_kind_find(group, "v1", res);
    assert_non_null(k);
    json_t *o = J(obj), *out = NULL;
    api_err e;
    api_err_init(&e);
    if (reg_create(st, k, ns, o, false, &out, &e) != 0) fail_msg("create %s: %s", obj, e.message);
    json_decref(out);
    json_decref(o);
}

/* The reference: every object parsed, quota_recount_add on its JSON. */
static json_t *recount_from_json(store_txn *t, const json_t *quota, const char *ns)
{
    rlist *acc = rl_new();
    char res[256], prefix[600];
    for (size_t i = 0; i < api_kind_count(); i++) {
        const api_kind *k = api_kind_at(i);
        if (!k->namespaced || quota_recount_begin(quota, k->group, k->resource, acc) <= 0) continue;
        api_kind_store_resource(k, res, sizeof res);
        snprintf(prefix, sizeof prefix, "%s/%s/", res, ns);
        store_obj **objs = NULL;
        size_t n = 0;
        assert_int_equal(store_txn_list(t, prefix, &objs, &n), 0);
        for (size_t j = 0; j < n; j++) {
            json_t *o = store_obj_parse(objs[j]);
            quota_recount_add(quota, k->group, k->resource, o, 0, acc);
            json_decref(o);
            store_obj_unref(objs[j]);
        }
        free(objs);
    }
    json_t *used = quota_status_used_for(quota, acc);
    rl_free(acc);
    return used;
}

static void check_quota(store *st, const char *name)
{
    char key[256];
    snprintf(key, sizeof key, "resourcequotas/q/%s", name);
    assert_int_equal(quota_ledger_sync(st), 0); /* the ledger's usage, written */
    store_txn *t = store_begin(st);
    store_obj *o = store_txn_get(t, key);
    assert_non_null(o);
    json_t *quota = store_obj_parse(o), *cached = NULL;
    assert_int_equal(quota_recount_in_txn(t, quota, &cached), 0);
    json_t *parsed = recount_from_json(t, quota, "q");
    json_t *kept = json_object_get(json_object_get(quota, "status"), "used");
    char *a = json_dumps(cached, JSON_SORT_KEYS | JSON_COMPACT);
    char *b = json_dumps(parsed, JSON_SORT_KEYS | JSON_COMPACT);
    char *c = json_dumps(kept, JSON_SORT_KEYS | JSON_COMPACT);
    if (!json_equal(cached, parsed) || !json_equal(cached, kept))
        fail_msg("%s: cached %s, parsed %s, kept by admission %s", name, a, b, c);
    free(a);
    free(b);
    free(c);
    json_decref(cached);
    json_decref(parsed);
    json_decref(quota);
    store_obj_unref(o);
    store_abort(t);
}

static bool has_facts(store *st, const char *key)
{
    store_obj *o = store_get(st, key);
    assert_non_null(o);
    bool has = o->idx.ext != NULL;
    store_obj_unref(o);
    return has;
}

/* A memory store with namespace q and priority class high. */
static store *open_ns_q(void)
{
    store_backend be;
    char err[256];
    store_memory_backend(&be);
    store *st = store_open(&be, reg_indexer, NULL, err, sizeof err);
    assert_non_null(st);
    create(st, "", "namespaces", "", "{'metadata':{'name':'q'}}");
    create(st, "scheduling.k8s.io", "priorityclasses", "",
           "{'metadata':{'name':'high'},'value':1000}");
    return st;
}

static void test_cached_recount_agrees(void **state)
{
    store *st = open_ns_q();
    create(st, "", "resourcequotas", "q",
           "{'metadata':{'name':'all'},'spec':{'hard':{'pods':'100','count/pods':'100',"
           "'configmaps':'100',"
           "'persistentvolumeclaims':'10','requests.storage':'1Ti','services':'10',"
           "'gold.storageclass.storage.k8s.io/requests.storage':'1Ti'}}}");
    create(st, "", "resourcequotas", "q",
           "{'metadata':{'name':'high'},'spec':{'hard':{'pods':'100','requests.cpu':'100','limits."
           "memory':'9Gi'},"
           "'scopeSelector':{'matchExpressions':[{'scopeName':'PriorityClass',"
           "'operator':'In','values':['high']}]}}}");
    create(st, "", "resourcequotas", "q",
           "{'metadata':{'name':'besteffort'},'spec':{'hard':{'pods':'100'},"
           "'scopes':['BestEffort','NotTerminating']}}");
    for (int i = 0; i < 12; i++) {
        char pod[512];
        snprintf(pod, sizeof pod,
                 "{'metadata':{'name':'p%d'},'spec':{%s%s'containers':[{'name':'c','image':'x'%s}]}"
                 "}",
                 i, i % 3 == 0 ? "'priorityClassName':'high'," : "",
                 i % 4 == 0 ? "'activeDeadlineSeconds':30," : "",
                 i % 2 || i % 3 == 0
                     ? ",'resources':{'requests':{'cpu':'250m'},'limits':{'memory':'1Gi'}}"
                     : "");
        create(st, "", "pods", "q", pod);
    }
    create(st, "", "configmaps", "q", "{'metadata':{'name':'cm'}}");
    create(st, "", "services", "q", "{'metadata':{'name':'s'},'spec':{'ports':[{'port':80}]}}");
    create(st, "", "persistentvolumeclaims", "q",
           "{'metadata':{'name':'v'},'spec':{'storageClassName':'gold','accessModes':"
           "['ReadWriteOnce'],'resources':{'requests':{'storage':'3Gi'}}}}");
    /* Facts are kept for what quota evaluates, and only for that. */
    assert_true(has_facts(st, "pods/q/p0"));
    assert_true(has_facts(st, "configmaps/q/cm"));
    assert_true(has_facts(st, "persistentvolumeclaims/q/v"));
    assert_false(has_facts(st, "namespaces//q"));
    assert_false(has_facts(st, "priorityclasses.scheduling.k8s.io//high"));
    check_quota(st, "all");
    check_quota(st, "high");
    check_quota(st, "besteffort");
    store_close(st);
}

/* reg_update's mutation: merge the JSON patch in ctx into the object. */
static json_t *merge(const json_t *cur, void *ctx, api_err *e)
{
    json_t *nw = json_deep_copy(cur), *patch = J(ctx);
    const char *k;
    json_t *v;
    json_object_foreach(patch, k, v)
    {
        json_t *into = json_object_get(nw, k);
        if (json_is_object(into) && json_is_object(v))
            json_object_update(into, v);
        else
            json_object_set(nw, k, v);
    }
    json_decref(patch);
    return nw;
}

static void update(store *st, const char *name, const char *sub, const char *patch)
{
    const api_kind *k = api_kind_find("", "v1", "pods");
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    if (reg_update(st, k, "q", name, sub, merge, (void *)patch, false, &out, &e) != 0)
        fail_msg("update %s %s: %s", name, patch, e.message);
    json_decref(out);
}

static void delete_pod(store *st, const char *name)
{
    const api_kind *k = api_kind_find("", "v1", "pods");
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    bool gone = false;
    reg_delete_opts opts = {.grace_seconds = 0};
    if (reg_delete(st, k, "q", name, &opts, &out, &gone, &e) != 0 || !gone)
        fail_msg("delete %s: %s", name, e.message ? e.message : "not gone");
    json_decref(out);
}

/* Updates and deletes move usage between scoped quotas exactly: after each
 * phase, every quota's kept usage equals a recount from the JSON. */
static void test_updates_and_deletes_agree(void **state)
{
    store *st = open_ns_q();
    static const char *const quotas[][2] = {
        {"terminating", "'scopes':['Terminating']"},
        {"longrunning", "'scopes':['NotTerminating']"},
        {"besteffort", "'scopes':['BestEffort']"},
        {"burstable", "'scopes':['NotBestEffort','NotTerminating']"},
        {"high", "'scopeSelector':{'matchExpressions':[{'scopeName':'PriorityClass',"
                 "'operator':'In','values':['high']}]}"},
        {"plain", "'scopes':[]"},
    };
    for (size_t i = 0; i < sizeof quotas / sizeof quotas[0]; i++) {
        char q[512];
        /* Only quotas no best-effort pod falls into track compute (must specify). */
        bool compute = !strcmp(quotas[i][0], "burstable") || !strcmp(quotas[i][0], "high");
        snprintf(q, sizeof q, "{'metadata':{'name':'%s'},'spec':{%s,'hard':{'pods':'100'%s}}}",
                 quotas[i][0], quotas[i][1],
                 compute ? ",'requests.cpu':'100','limits.memory':'90Gi'" : ",'count/pods':'100'");
        create(st, "", "resourcequotas", "q", q);
    }
    for (int i = 0; i < 12; i++) {
        char pod[512];
        snprintf(pod, sizeof pod,
                 "{'metadata':{'name':'p%d'},'spec':{%s'containers':[{'name':'c','image':'x'%s}]}}",
                 i, i % 3 == 0 ? "'priorityClassName':'high'," : "",
                 i % 2 || i % 3 == 0
                     ? ",'resources':{'requests':{'cpu':'250m'},'limits':{'memory':'1Gi'}}"
                     : "");
        create(st, "", "pods", "q", pod);
    }
    for (size_t i = 0; i < sizeof quotas / sizeof quotas[0]; i++)
        check_quota(st, quotas[i][0]);
    /* A label change moves nothing; activeDeadlineSeconds moves a pod into
     * Terminating (out of NotTerminating); a terminal pod releases. */
    for (int i = 0; i < 12; i++) {
        char name[8];
        snprintf(name, sizeof name, "p%d", i);
        if (i % 2 == 0) update(st, name, "", "{'metadata':{'labels':{'app':'x'}}}");
        if (i % 4 == 1) update(st, name, "", "{'spec':{'activeDeadlineSeconds':60}}");
        if (i % 4 == 3) update(st, name, "status", "{'status':{'phase':'Succeeded'}}");
    }
    for (size_t i = 0; i < sizeof quotas / sizeof quotas[0]; i++)
        check_quota(st, quotas[i][0]);
    for (int i = 0; i < 12; i += 3) {
        char name[8];
        snprintf(name, sizeof name, "p%d", i);
        delete_pod(st, name);
    }
    for (size_t i = 0; i < sizeof quotas / sizeof quotas[0]; i++)
        check_quota(st, quotas[i][0]);
    store_close(st);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cached_recount_agrees),
        cmocka_unit_test(test_updates_and_deletes_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
