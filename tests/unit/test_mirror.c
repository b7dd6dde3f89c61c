/* test_mirror.c - a cluster's objects taken into allot's store
 * (cluster/mirror.h): local revisions in arrival order, the cluster's kept
 * beside them, unchanged versions skipped, relists that delete what the
 * cluster no longer has, and the registry deciding on what was taken in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <time.h>

#include "api/admission_review.h"
#include "cluster/counted_kinds.h"
#include "cluster/cq_guard.h"
#include "cluster/leave_guard.h"
#include "cluster/mirror.h"
#include "cluster/reconcile.h"
#include "registry/admission.h"
#include "teststore.h"

#define CM(name, crv, val)                                                                         \
    "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'" name                              \
    "','namespace':'t','uid':'u-" name "','resourceVersion':'" crv "'},'data':{'v':'" val "'}}"

static const api_kind *cms(void)
{
    return test_kind("", "v1", "configmaps");
}

/* A list of kind k at cluster resourceVersion list_rv taken in. */
static int replace_at(mirror *m, const api_kind *k, const char *items, const char *list_rv)
{
    json_t *a = J(items);
    char err[256];
    int rc = mirror_replace(m, k, a, list_rv, err, sizeof err);
    json_decref(a);
    return rc;
}

static int replace(mirror *m, const api_kind *k, const char *items)
{
    return replace_at(m, k, items, "");
}

static int event(mirror *m, const api_kind *k, const char *type, const char *obj)
{
    json_t *o = J(obj);
    char err[256];
    int rc = mirror_event(m, k, type, o, err, sizeof err);
    json_decref(o);
    return rc;
}

/* The stored object under key: its local revision (text and store agree)
 * and data.v; -1 when absent. */
static long long stored(store *st, const char *key, char *val, size_t n)
{
    store_obj *o = store_get(st, key);
    if (!o) return -1;
    json_t *j = store_obj_parse(o);
    const char *rv =
        json_string_value(json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
    assert_non_null(rv);
    assert_int_equal(atoll(rv), o->rv);
    snprintf(val, n, "%s", json_string_value(json_object_get(json_object_get(j, "data"), "v")));
    long long r = o->rv;
    json_decref(j);
    store_obj_unref(o);
    return r;
}

static void expect_crv(mirror *m, const char *key, const char *want)
{
    char buf[64];
    bool have = mirror_cluster_rv(m, key, buf, sizeof buf);
    if (!want) {
        assert_false(have);
        return;
    }
    assert_true(have);
    assert_string_equal(buf, want);
}

static void test_list_events_and_relist(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    assert_non_null(m);
    int64_t r0 = store_revision(st);
    bool expired = false;
    store_watch *w = store_watch_open(st, "configmaps/", r0, &expired);
    assert_non_null(w);

    assert_int_equal(replace(m, cms(), "[" CM("a", "900", "1") "," CM("b", "901", "1") "]"), 0);
    char v[32];
    assert_int_equal(stored(st, "configmaps/t/a", v, sizeof v), r0 + 1);
    assert_int_equal(stored(st, "configmaps/t/b", v, sizeof v), r0 + 2);
    expect_crv(m, "configmaps/t/a", "900");

    /* the same version again (a watch resumed, a relist): nothing happens */
    assert_int_equal(event(m, cms(), "MODIFIED", CM("a", "900", "1")), 0);
    assert_int_equal(replace(m, cms(), "[" CM("a", "900", "1") "," CM("b", "901", "1") "]"), 0);
    assert_int_equal(store_revision(st), r0 + 2);

    /* a change: the next local revision, the cluster's kept beside it */
    assert_int_equal(event(m, cms(), "MODIFIED", CM("a", "905", "2")), 0);
    assert_int_equal(stored(st, "configmaps/t/a", v, sizeof v), r0 + 3);
    assert_string_equal(v, "2");
    expect_crv(m, "configmaps/t/a", "905");

    /* a delete; deleting what is not held changes nothing */
    assert_int_equal(event(m, cms(), "DELETED", CM("b", "906", "1")), 0);
    assert_int_equal(stored(st, "configmaps/t/b", v, sizeof v), -1);
    expect_crv(m, "configmaps/t/b", NULL);
    assert_int_equal(event(m, cms(), "DELETED", CM("b", "906", "1")), 0);
    assert_int_equal(store_revision(st), r0 + 4);

    /* a relist after a 410: what the cluster lost is deleted, what changed
     * is modified, in one batch */
    assert_int_equal(replace(m, cms(), "[" CM("c", "910", "3") "]"), 0);
    assert_int_equal(stored(st, "configmaps/t/a", v, sizeof v), -1);
    assert_int_equal(stored(st, "configmaps/t/c", v, sizeof v), r0 + 5);
    assert_int_equal(store_revision(st), r0 + 6);

    /* a watcher saw every change, in order, with local revisions */
    const char *want[][2] = {{"ADDED", "a"},   {"ADDED", "b"}, {"MODIFIED", "a"},
                             {"DELETED", "b"}, {"ADDED", "c"}, {"DELETED", "a"}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        store_event ev;
        assert_int_equal(store_watch_next(w, &ev, 1000), 1);
        const char *types[] = {"", "ADDED", "MODIFIED", "DELETED"};
        assert_string_equal(types[ev.type], want[i][0]);
        assert_string_equal(ev.obj->name, want[i][1]);
        store_obj_unref(ev.obj);
        store_obj_unref(ev.prev);
    }
    store_watch_close(w);

    mirror_stats s;
    mirror_get_stats(m, &s);
    assert_int_equal(s.ingested, 6);
    assert_true(s.skipped >= 3);
    mirror_free(m);
    store_close(st);
}

static void test_bad_objects_take_nothing(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    int64_t r0 = store_revision(st);
    /* no name; no resourceVersion; no namespace for a namespaced kind */
    assert_int_equal(replace(m, cms(), "[" CM("a", "1", "1") ",{'metadata':{'namespace':'t'}}]"),
                     -1);
    assert_int_equal(event(m, cms(), "ADDED", "{'metadata':{'name':'x','namespace':'t'}}"), -1);
    assert_int_equal(event(m, cms(), "ADDED", "{'metadata':{'name':'x','resourceVersion':'3'}}"),
                     -1);
    assert_int_equal(event(m, cms(), "BOOKMARK", CM("a", "1", "1")), -1);
    assert_int_equal(store_revision(st), r0);
    mirror_free(m);
    store_close(st);
}

/* The cluster as both tests below start from: namespace n1 (team=a) and
 * pool p (requests.cpu 2) selecting it, listed into the mirror. */
static void seed_pool(mirror *m)
{
    assert_int_equal(replace(m, test_kind("", "v1", "namespaces"),
                             "[{'apiVersion':'v1','kind':'Namespace','metadata':{'name':'n1',"
                             "'uid':'n1','resourceVersion':'10','labels':{'team':'a'}}}]"),
                     0);
    assert_int_equal(replace(m, test_kind("capsule.clastix.io", "v1beta2", "resourcepools"),
                             "[{'apiVersion':'capsule.clastix.io/v1beta2','kind':'ResourcePool',"
                             "'metadata':{'name':'p','uid':'p','resourceVersion':'11',"
                             "'creationTimestamp':'2026-12-07T10:00:00Z'},"
                             "'spec':{'quota':{'hard':{'requests.cpu':'2'}},"
                             "'selectors':[{'matchLabels':{'team':'a'}}]}}]"),
                     0);
}

/* The registry decides on what the mirror took in as on its own writes: a
 * pool and namespaces from the cluster, and a dry-run claim binds or waits
 * as standalone mode decides, writing nothing. */
static void test_registry_decides_on_the_mirror(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    const api_kind *claims = test_kind("capsule.clastix.io", "v1beta2", "resourcepoolclaims");
    seed_pool(m);
    int64_t r = store_revision(st);
    json_t *c = J("{'apiVersion':'capsule.clastix.io/v1beta2','kind':'ResourcePoolClaim',"
                  "'metadata':{'name':'c1','namespace':'n1'},"
                  "'spec':{'pool':'p','claim':{'requests.cpu':'1'}}}");
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    assert_int_equal(reg_create(st, claims, "n1", c, true, &out, &e), 0);
    const char *bound = NULL;
    size_t i;
    json_t *cond;
    json_array_foreach(json_object_get(json_object_get(out, "status"), "conditions"), i, cond)
    {
        if (!strcmp(json_string_value(json_object_get(cond, "type")), "Exhausted"))
            bound = json_string_value(json_object_get(cond, "status"));
    }
    assert_non_null(bound);
    assert_string_equal(bound, "False");
    json_decref(out);
    json_decref(c);
    api_err_clear(&e);
    assert_int_equal(store_revision(st), r); /* a dry run wrote nothing */
    mirror_free(m);
    store_close(st);
}

/* The reconciler's plan: a pool and a claim the cluster holds without
 * statuses become the pool's status (first: where the allocation is
 * recorded), the claim's, and the namespace's capsule-pool quota, each at
 * the cluster's resourceVersion of what was decided on; once the mirror
 * holds them as decided, nothing more. */
static void test_reconcile_plan(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    const api_kind *pools = test_kind("capsule.clastix.io", "v1beta2", "resourcepools");
    const api_kind *claims = test_kind("capsule.clastix.io", "v1beta2", "resourcepoolclaims");
    const api_kind *rqs = test_kind("", "v1", "resourcequotas");
    seed_pool(m);
    assert_int_equal(replace(m, claims,
                             "[{'apiVersion':'capsule.clastix.io/v1beta2','kind':"
                             "'ResourcePoolClaim','metadata':{'name':'c1','namespace':'n1',"
                             "'uid':'c1','resourceVersion':'12',"
                             "'creationTimestamp':'2026-12-07T10:00:01Z'},"
                             "'spec':{'pool':'p','claim':{'requests.cpu':'1'}}}]"),
                     0);
    int64_t r = store_revision(st);
    cw_list plan = {0};
    char err[256];
    assert_int_equal(reconcile_pool_plan(st, m, "p", &plan, NULL, err, sizeof err), 0);
    assert_int_equal(store_revision(st), r); /* planning writes nothing */
    assert_true(plan.n >= 3);
    assert_string_equal(plan.v[0].method, "PUT");
    assert_string_equal(plan.v[0].path, "/apis/capsule.clastix.io/v1beta2/resourcepools/p/status");
    json_t *pool = J(plan.v[0].body);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(pool, "metadata"), "resourceVersion")),
        "11");
    assert_non_null(json_object_get(pool, "status"));
    bool claim_put = false, rq_post = false;
    for (size_t i = 1; i < plan.n; i++) {
        json_t *b = J(plan.v[i].body);
        if (!strcmp(plan.v[i].path, "/apis/capsule.clastix.io/v1beta2/namespaces/n1/"
                                    "resourcepoolclaims/c1/status")) {
            assert_string_equal(plan.v[i].method, "PUT");
            assert_string_equal(json_string_value(json_object_get(json_object_get(b, "metadata"),
                                                                  "resourceVersion")),
                                "12");
            claim_put = true;
        } else if (!strcmp(plan.v[i].path, "/api/v1/namespaces/n1/resourcequotas")) {
            assert_string_equal(plan.v[i].method, "POST");
            json_t *hard = json_object_get(json_object_get(b, "spec"), "hard");
            assert_string_equal(json_string_value(json_object_get(hard, "requests.cpu")), "1");
            /* a create carries no identity the dry run made up */
            assert_null(json_object_get(json_object_get(b, "metadata"), "uid"));
            assert_null(json_object_get(json_object_get(b, "metadata"), "resourceVersion"));
            rq_post = true;
        }
        json_decref(b);
    }
    assert_true(claim_put);
    assert_true(rq_post);

    /* The cluster takes the writes; the mirror sees them come back: then
     * the plan is empty. */
    json_t *claim = NULL, *rq = NULL;
    for (size_t i = 0; i < plan.n; i++) {
        json_t *b = J(plan.v[i].body);
        json_t *meta = json_object_get(b, "metadata");
        json_object_set_new(meta, "resourceVersion", json_string("20"));
        if (strstr(plan.v[i].path, "resourcequotas")) {
            json_object_set_new(meta, "uid", json_string("rq1"));
            rq = b;
        } else if (strstr(plan.v[i].path, "resourcepoolclaims")) {
            claim = b;
        } else {
            char e2[256];
            assert_int_equal(mirror_event(m, pools, "MODIFIED", b, e2, sizeof e2), 0);
            json_decref(b);
        }
    }
    char e2[256];
    assert_int_equal(mirror_event(m, claims, "MODIFIED", claim, e2, sizeof e2), 0);
    assert_int_equal(mirror_event(m, rqs, "ADDED", rq, e2, sizeof e2), 0);
    json_decref(claim);
    json_decref(pool);
    cw_list_free(&plan);
    assert_int_equal(reconcile_pool_plan(st, m, "p", &plan, NULL, err, sizeof err), 0);
    for (size_t i = 0; i < plan.n; i++)
        print_message("still: %s %s %s\n", plan.v[i].method, plan.v[i].path, plan.v[i].body);
    assert_int_equal(plan.n, 0);
    cw_list_free(&plan);

    /* n1 on its way out of the pool (cluster/leave_guard.h): its quota
     * frozen at what was used (0) with a hold from its labels. While the
     * hold is active the writer keeps it (no write), and once it has
     * expired restores the books' hard and drops the hold. */
    json_t *meta = json_object_get(rq, "metadata");
    json_object_set_new(json_object_get(json_object_get(rq, "spec"), "hard"), "requests.cpu",
                        json_string("0"));
    json_object_set_new(meta, "resourceVersion", json_string("30"));
    char hold[256];
    snprintf(hold, sizeof hold,
             "{\"expires\":%lld,\"namespaceVersion\":\"10\",\"cap\":{\"requests.cpu\":\"0\"}}",
             (long long)time(NULL) + 60);
    json_object_set_new(meta, "annotations", json_pack("{s:s}", LEAVE_HOLD_KEY, hold));
    assert_int_equal(mirror_event(m, rqs, "MODIFIED", rq, e2, sizeof e2), 0);
    rlist *cap = NULL;
    assert_int_equal(leave_hold_cap(m, rq, (int64_t)time(NULL), &cap), 0);
    assert_non_null(cap);
    assert_true(rl_is_zero(cap));
    rl_free(cap);
    assert_int_equal(leave_hold_cap(m, rq, (int64_t)time(NULL) + 61, &cap), 0);
    assert_null(cap); /* expired */
    assert_int_equal(reconcile_pool_plan(st, m, "p", &plan, NULL, err, sizeof err), 0);
    for (size_t i = 0; i < plan.n; i++)
        assert_null(strstr(plan.v[i].path, "resourcequotas"));
    cw_list_free(&plan);
    /* a hold for another version of the namespace (it changed since): over */
    snprintf(hold, sizeof hold,
             "{\"expires\":%lld,\"namespaceVersion\":\"9\",\"cap\":{\"requests.cpu\":\"0\"}}",
             (long long)time(NULL) + 60);
    json_object_set_new(meta, "annotations", json_pack("{s:s}", LEAVE_HOLD_KEY, hold));
    json_object_set_new(meta, "resourceVersion", json_string("31"));
    assert_int_equal(mirror_event(m, rqs, "MODIFIED", rq, e2, sizeof e2), 0);
    assert_int_equal(leave_hold_cap(m, rq, (int64_t)time(NULL), &cap), 0);
    assert_null(cap);
    assert_int_equal(reconcile_pool_plan(st, m, "p", &plan, NULL, err, sizeof err), 0);
    bool restored = false;
    for (size_t i = 0; i < plan.n; i++) {
        if (!strstr(plan.v[i].path, "resourcequotas")) continue;
        json_t *b = J(plan.v[i].body);
        json_t *bm = json_object_get(b, "metadata");
        assert_string_equal(plan.v[i].method, "PUT");
        assert_string_equal(json_string_value(json_object_get(bm, "resourceVersion")), "31");
        assert_null(json_object_get(json_object_get(bm, "annotations"), LEAVE_HOLD_KEY));
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(json_object_get(b, "spec"), "hard"),
                                              "requests.cpu")),
            "1");
        restored = true;
        json_decref(b);
    }
    assert_true(restored);
    cw_list_free(&plan);
    json_decref(rq);
    mirror_free(m);
    store_close(st);
}

static bool never_gone(void *arg, const json_t *r)
{
    (void)arg;
    (void)r;
    return false;
}

/* Custom quotas' statuses: a quota the cluster holds without a status, and
 * the pods it counts, become one status write at the quota's cluster
 * resourceVersion, with the usage the books count; once the mirror holds
 * that status, nothing more; a pod more, a write again. */
static void test_cq_status_plan(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    const api_kind *cqs = test_kind("capsule.clastix.io", "v1beta2", "customquotas");
    const api_kind *pods = test_kind("", "v1", "pods");
    seed_pool(m);
    assert_int_equal(replace(m, cqs,
                             "[{'apiVersion':'capsule.clastix.io/v1beta2','kind':'CustomQuota',"
                             "'metadata':{'name':'q','namespace':'n1','uid':'q1',"
                             "'resourceVersion':'40','creationTimestamp':'2026-12-07T10:00:00Z'},"
                             "'spec':{'limit':'3','sources':[{'version':'v1','kind':'Pod',"
                             "'op':'count'}]}}]"),
                     0);
#define POD(n, rv)                                                                                 \
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'" n "','namespace':'n1','uid':'" n        \
    "','resourceVersion':'" rv "'},'spec':{'containers':[{'name':'c','image':'i'}]}}"
    assert_int_equal(replace(m, pods, "[" POD("a", "41") "," POD("b", "42") "]"), 0);
    int64_t r = store_revision(st);
    cw_list plan = {0};
    assert_int_equal(reconcile_cq_plan(st, m, NULL, NULL, &plan), 0);
    assert_int_equal(store_revision(st), r); /* planning writes nothing */
    assert_int_equal(plan.n, 1);
    assert_string_equal(plan.v[0].method, "PUT");
    assert_string_equal(plan.v[0].path,
                        "/apis/capsule.clastix.io/v1beta2/namespaces/n1/customquotas/q/status");
    json_t *q = J(plan.v[0].body);
    json_t *meta = json_object_get(q, "metadata");
    assert_string_equal(json_string_value(json_object_get(meta, "resourceVersion")), "40");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(q, "status"), "usage"), "used")),
                        "2");
    /* what it was counted through: the newest pod it counts */
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(q, "status"), "countedThrough"), "pods")),
        "42");
    cw_list_free(&plan);
    /* the cluster takes it; the mirror sees it come back */
    json_object_set_new(meta, "resourceVersion", json_string("43"));
    char err[256];
    assert_int_equal(mirror_event(m, cqs, "MODIFIED", q, err, sizeof err), 0);
    assert_int_equal(reconcile_cq_plan(st, m, NULL, NULL, &plan), 0);
    assert_int_equal(plan.n, 0);
    assert_int_equal(event(m, pods, "ADDED", POD("c", "44")), 0);
    assert_int_equal(reconcile_cq_plan(st, m, NULL, NULL, &plan), 0);
    assert_int_equal(plan.n, 1);
    json_t *q2 = J(plan.v[0].body);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(q2, "status"), "usage"), "used")),
                        "3");
    json_decref(q2);
    cw_list_free(&plan);

    /* Reservations (cluster/cq_guard.h) in the quota's status as the
     * cluster holds it: pod d's create, not in the mirror yet, is kept;
     * pod a's create, which the mirror holds, is settled; one expired goes;
     * an update of c decided at its version 44, which the mirror still
     * holds, is kept. The status written carries exactly those kept. */
    char res[1024];
    long long later = (long long)time(NULL) + 60;
    snprintf(res, sizeof res,
             "[{\"uid\":\"d\",\"namespace\":\"n1\",\"name\":\"d\",\"resource\":\"pods\","
             "\"usage\":\"1\",\"expires\":%lld},"
             "{\"uid\":\"a\",\"namespace\":\"n1\",\"name\":\"a\",\"resource\":\"pods\","
             "\"usage\":\"1\",\"expires\":%lld},"
             "{\"uid\":\"x\",\"namespace\":\"n1\",\"name\":\"x\",\"resource\":\"pods\","
             "\"usage\":\"1\",\"expires\":1},"
             "{\"uid\":\"c\",\"namespace\":\"n1\",\"name\":\"c\",\"resource\":\"pods\","
             "\"from\":\"44\",\"usage\":\"1\",\"expires\":%lld}]",
             later, later, later);
    json_t *rs = json_loads(res, 0, NULL);
    assert_non_null(rs);
    json_object_set_new(json_object_get(q, "status"), "reservations", rs);
    json_object_set_new(meta, "resourceVersion", json_string("45"));
    assert_int_equal(mirror_event(m, cqs, "MODIFIED", q, err, sizeof err), 0);
    assert_int_equal(reconcile_cq_plan(st, m, NULL, NULL, &plan), 0);
    assert_int_equal(plan.n, 1);
    json_t *q3 = J(plan.v[0].body);
    json_t *kept = json_object_get(json_object_get(q3, "status"), "reservations");
    assert_int_equal(json_array_size(kept), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(kept, 0), "uid")), "d");
    assert_string_equal(json_string_value(json_object_get(json_array_get(kept, 1), "uid")), "c");
    json_decref(q3);
    cw_list_free(&plan);
    /* the expired one stays while the cluster may still hold its object
     * (cq_reservation_gone: the mirror may not have taken it in yet) */
    assert_int_equal(reconcile_cq_plan(st, m, never_gone, NULL, &plan), 0);
    assert_int_equal(plan.n, 1);
    q3 = J(plan.v[0].body);
    kept = json_object_get(json_object_get(q3, "status"), "reservations");
    assert_int_equal(json_array_size(kept), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(kept, 1), "uid")), "x");
    json_decref(q3);
    cw_list_free(&plan);
    /* c's update commits (the mirror moves past 44): settled too */
    assert_int_equal(event(m, pods, "MODIFIED", POD("c", "46")), 0);
    assert_int_equal(reconcile_cq_plan(st, m, NULL, NULL, &plan), 0);
    assert_int_equal(plan.n, 1);
    q3 = J(plan.v[0].body);
    kept = json_object_get(json_object_get(q3, "status"), "reservations");
    assert_int_equal(json_array_size(kept), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(kept, 0), "uid")), "d");
    json_decref(q3);
    cw_list_free(&plan);
#undef POD
    json_decref(q);
    mirror_free(m);
    store_close(st);
}

/* A status counted by a replica whose watches were further on (its
 * countedThrough names a pod version this mirror has not taken in) is not
 * recounted here: the recount would miss pod c, which that replica had
 * already moved from reserved to used, and lower the usage under it. Once
 * the pods' watch delivers c (or anything later), it is. */
static void test_cq_status_waits_for_progress(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    const api_kind *cqs = test_kind("capsule.clastix.io", "v1beta2", "customquotas");
    const api_kind *pods = test_kind("", "v1", "pods");
    seed_pool(m);
#define POD(n, rv)                                                                                 \
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'" n "','namespace':'n1','uid':'" n        \
    "','resourceVersion':'" rv "'},'spec':{'containers':[{'name':'c','image':'i'}]}}"
    assert_int_equal(replace_at(m, pods, "[" POD("a", "41") "," POD("b", "42") "]", "45"), 0);
    assert_int_equal(mirror_progress(m, "pods"), 45);
    assert_int_equal(
        replace_at(m, cqs,
                   "[{'apiVersion':'capsule.clastix.io/v1beta2','kind':'CustomQuota',"
                   "'metadata':{'name':'q','namespace':'n1','uid':'q1',"
                   "'resourceVersion':'60','creationTimestamp':'2026-12-07T10:00:00Z'},"
                   "'spec':{'limit':'3','sources':[{'version':'v1','kind':'Pod',"
                   "'op':'count'}]},"
                   "'status':{'usage':{'used':'3','available':'0'},"
                   "'countedThrough':{'pods':'50'}}}]",
                   "60"),
        0);
    cw_list plan = {0};
    assert_int_equal(reconcile_cq_plan(st, m, NULL, NULL, &plan), 0);
    assert_int_equal(plan.n, 0); /* (a recount now would say 2) */
    /* another pod's event, still before 50: not yet */
    assert_int_equal(event(m, pods, "ADDED", POD("d", "48")), 0);
    assert_int_equal(reconcile_cq_plan(st, m, NULL, NULL, &plan), 0);
    assert_int_equal(plan.n, 0);
    assert_int_equal(event(m, pods, "ADDED", POD("c", "50")), 0);
    assert_int_equal(mirror_progress(m, "pods"), 50);
    assert_int_equal(reconcile_cq_plan(st, m, NULL, NULL, &plan), 0);
    assert_int_equal(plan.n, 1);
    json_t *q = J(plan.v[0].body), *qs = json_object_get(q, "status");
    assert_string_equal(json_string_value(json_object_get(json_object_get(qs, "usage"), "used")),
                        "4");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(qs, "countedThrough"), "pods")), "50");
    json_decref(q);
    cw_list_free(&plan);
    /* progress never goes back: a relist at an older version keeps it */
    assert_int_equal(replace_at(m, pods, "[" POD("a", "41") "]", "44"), 0);
    assert_int_equal(mirror_progress(m, "pods"), 50);
#undef POD
    mirror_free(m);
    store_close(st);
}

/* A pod create that a custom quota has room for but the namespace's
 * ResourceQuota (as the mirror holds it) has not is refused by the guard
 * with upstream's quota text, before any reservation (the guard is given
 * no cluster client: it must not reach for one). */
static void test_cq_guard_refuses_what_quota_will(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    seed_pool(m);
    assert_int_equal(replace(m, test_kind("capsule.clastix.io", "v1beta2", "customquotas"),
                             "[{'apiVersion':'capsule.clastix.io/v1beta2','kind':'CustomQuota',"
                             "'metadata':{'name':'q','namespace':'n1','uid':'q1',"
                             "'resourceVersion':'40','creationTimestamp':'2026-12-07T10:00:00Z'},"
                             "'spec':{'limit':'10','sources':[{'version':'v1','kind':'Pod',"
                             "'op':'count'}]}}]"),
                     0);
    assert_int_equal(replace(m, test_kind("", "v1", "resourcequotas"),
                             "[{'apiVersion':'v1','kind':'ResourceQuota','metadata':{"
                             "'name':'capsule-pool-p','namespace':'n1','uid':'r1',"
                             "'resourceVersion':'41'},'spec':{'hard':{'pods':'2'}},"
                             "'status':{'hard':{'pods':'2'},'used':{'pods':'2'}}}]"),
                     0);
    json_t *review =
        J("{'apiVersion':'admission.k8s.io/v1','kind':'AdmissionReview','request':{"
          "'uid':'r-1','kind':{'group':'','version':'v1','kind':'Pod'},"
          "'resource':{'group':'','version':'v1','resource':'pods'},"
          "'name':'p3','namespace':'n1','operation':'CREATE','userInfo':{'username':'u'},"
          "'object':{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p3','namespace':'n1',"
          "'uid':'p3'},'spec':{'containers':[{'name':'c','image':'i'}]}},"
          "'oldObject':null,'dryRun':false}}");
    char *text = json_dumps(review, JSON_COMPACT);
    ar_request r;
    api_err e;
    api_err_init(&e);
    assert_int_equal(ar_parse(text, strlen(text), &r, &e), 0);
    assert_int_equal(cq_guard(NULL, st, &r, &e), -1);
    assert_int_equal(api_errcode_http(e.code), 403);
    assert_string_equal(e.message, "pods \"p3\" is forbidden: exceeded quota: capsule-pool-p, "
                                   "requested: pods=1, used: pods=2, limited: pods=2");
    api_err_clear(&e);
    ar_request_free(&r);
    free(text);
    json_decref(review);
    mirror_free(m);
    store_close(st);
}

/* The kinds custom quotas count (cluster/counted_kinds.h): pods always
 * and first, then each kind a source names once, a kind allot does not
 * serve left out; the webhook rules name exactly those; a quota is
 * recounted only once the kinds it counts have been listed. */
static void test_counted_kinds(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    seed_pool(m);
    const char *cq = "{'apiVersion':'capsule.clastix.io/v1beta2','kind':'CustomQuota',"
                     "'metadata':{'name':'q','namespace':'n1','uid':'q1','resourceVersion':'40'},"
                     "'spec':{'limit':'3','sources':[{'version':'v1','kind':'ConfigMap',"
                     "'op':'count'},{'group':'example.com','version':'v1','kind':'Bucket',"
                     "'op':'count'}]}}";
    assert_int_equal(replace(m, test_kind("capsule.clastix.io", "v1beta2", "customquotas"),
                             "[" /* (a second source naming ConfigMap again) */
                             "{'apiVersion':'capsule.clastix.io/v1beta2','kind':'CustomQuota',"
                             "'metadata':{'name':'q','namespace':'n1','uid':'q1',"
                             "'resourceVersion':'40'},'spec':{'limit':'3','sources':["
                             "{'version':'v1','kind':'ConfigMap','op':'count'},"
                             "{'group':'example.com','version':'v1','kind':'Bucket','op':'count'},"
                             "{'version':'v1','kind':'ConfigMap','op':'count'}]}}]"),
                     0);
    assert_int_equal(
        replace(m, test_kind("capsule.clastix.io", "v1beta2", "globalcustomquotas"),
                "[{'apiVersion':'capsule.clastix.io/v1beta2','kind':'GlobalCustomQuota',"
                "'metadata':{'name':'g','uid':'g1','resourceVersion':'41'},"
                "'spec':{'limit':'3','sources':[{'group':'apps','version':'v1',"
                "'kind':'Deployment','op':'count'},{'version':'v1','kind':'Pod','op':'count'}]}}]"),
        0);
    const api_kind *kinds[8];
    size_t n = counted_kinds_of(st, kinds, 8);
    assert_int_equal(n, 3);
    assert_string_equal(kinds[0]->resource, "pods");
    assert_string_equal(kinds[1]->resource, "configmaps");
    assert_string_equal(kinds[2]->resource, "deployments");
    assert_int_equal(counted_kinds_of(st, kinds, 2), 2); /* (never past max) */
    json_t *rules = counted_kinds_rules(kinds, 3);
    json_t *want = J("[{'apiGroups':[''],'apiVersions':['v1'],'resources':['pods'],"
                     "'operations':['CREATE','UPDATE'],'scope':'Namespaced'},"
                     "{'apiGroups':[''],'apiVersions':['v1'],'resources':['configmaps'],"
                     "'operations':['CREATE','UPDATE'],'scope':'Namespaced'},"
                     "{'apiGroups':['apps'],'apiVersions':['v1'],'resources':['deployments'],"
                     "'operations':['CREATE','UPDATE'],'scope':'Namespaced'}]");
    assert_true(json_equal(rules, want));
    json_decref(want);
    json_decref(rules);
    json_t *q = J(cq);
    assert_false(counted_kinds_listed(m, q, false)); /* configmaps: never listed */
    assert_int_equal(event(m, cms(), "ADDED", CM("c1", "50", "1")), 0);
    assert_false(counted_kinds_listed(m, q, false)); /* an event is not a list */
    assert_int_equal(replace_at(m, cms(), "[" CM("c1", "50", "1") "]", "51"), 0);
    assert_true(counted_kinds_listed(m, q, false)); /* (Bucket: not served, nothing to list) */
    json_decref(q);
    mirror_free(m);
    store_close(st);
}

static mirror *waited;

static void *deliver(void *arg)
{
    (void)arg;
    char err[256];
    json_t *o = J(CM("w", "1002", "2"));
    mirror_event(waited, cms(), "MODIFIED", o, err, sizeof err);
    json_decref(o);
    return NULL;
}

/* mirror_wait_crv: a version held, or a later one, ends the wait at once;
 * one not yet held waits for the event that brings it (from another
 * thread) or times out; an object no longer held ends it too. */
static void test_wait_crv(void **state)
{
    (void)state;
    store *st = open_store();
    mirror *m = mirror_new(st);
    assert_int_equal(event(m, cms(), "ADDED", CM("w", "1000", "1")), 0);
    assert_true(mirror_wait_crv(m, "configmaps/t/w", "1000", 0));
    assert_true(mirror_wait_crv(m, "configmaps/t/w", "999", 0));
    assert_false(mirror_wait_crv(m, "configmaps/t/w", "1001", 20));
    assert_false(mirror_wait_crv(m, "configmaps/t/w", "x1", 20)); /* not an integer: equal only */
    waited = m;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, deliver, NULL), 0);
    assert_true(mirror_wait_crv(m, "configmaps/t/w", "1002", 10000));
    pthread_join(t, NULL);
    assert_true(mirror_wait_crv(m, "configmaps/t/gone", "5", 0));
    mirror_free(m);
    store_close(st);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_events_and_relist),
        cmocka_unit_test(test_bad_objects_take_nothing),
        cmocka_unit_test(test_registry_decides_on_the_mirror),
        cmocka_unit_test(test_reconcile_plan),
        cmocka_unit_test(test_wait_crv),
        cmocka_unit_test(test_cq_status_plan),
        cmocka_unit_test(test_cq_status_waits_for_progress),
        cmocka_unit_test(test_cq_guard_refuses_what_quota_will),
        cmocka_unit_test(test_counted_kinds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
