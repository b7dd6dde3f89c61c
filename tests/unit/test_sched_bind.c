/* test_sched_bind.c - the scheduler's bind path on a memory store: stored-JSON
 * member scanning (sched_json_member), Events written inside a transaction
 * and by the asynchronous recorder (registry/events.c), and the scheduler
 * binding pods against deferred quota (controllers/scheduler.c), also when
 * the store refuses a bind's batch.
 *
 * Waits are event-driven: a store watch wakes the test on every write, with
 * an overall deadline; no fixed sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/features.h"
#include "controllers/scheduler.h"
#include "registry/admission.h"
#include "registry/events.h"
#include "registry/quota_ledger.h"
#include "registry/registry.h"
#include "testutil.h"
#include "teststore.h"

#define DEADLINE_S 20

/* ---- fixtures ---- */

static json_t *get(store *st, const char *key)
{
    store_obj *o = store_get(st, key);
    json_t *j = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    return j;
}

static const char *path_str(const json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

/* Events in namespace ns with this reason about object `name` (and this
 * message, unless NULL); *count gets the count of the last one found. */
static int events_about(store *st, const char *ns, const char *reason, const char *name,
                        const char *message, json_int_t *count)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, "events/%s/", ns);
    store_obj **objs = NULL;
    size_t n = 0;
    assert_int_equal(store_list(st, prefix, NULL, 0, &objs, &n, NULL, NULL), 0);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *ev = store_obj_parse(objs[i]);
        const char *r = json_string_value(json_object_get(ev, "reason"));
        const char *m = json_string_value(json_object_get(ev, "message"));
        if (r && !strcmp(r, reason) && !strcmp(path_str(ev, "involvedObject", "name"), name) &&
            (!message || (m && !strcmp(m, message)))) {
            found++;
            if (count) *count = json_integer_value(json_object_get(ev, "count"));
        }
        json_decref(ev);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return found;
}

/* Wait until pred(st, arg) holds, waking on every store write; fails the test
 * after DEADLINE_S. */
typedef bool (*pred_fn)(store *st, void *arg);

static void wait_until(store *st, pred_fn pred, void *arg, const char *what)
{
    bool expired = false;
    store_watch *w = store_watch_open(st, "", store_revision(st), &expired);
    assert_non_null(w);
    time_t end = time(NULL) + DEADLINE_S;
    while (!pred(st, arg)) {
        if (time(NULL) > end) {
            store_watch_close(w);
            fail_msg("timed out waiting for %s", what);
        }
        store_event ev;
        if (store_watch_next(w, &ev, 200) == 1) {
            store_obj_unref(ev.obj);
            store_obj_unref(ev.prev);
        }
    }
    store_watch_close(w);
}

/* ---- sched_json_member ---- */

static void expect_member(const char *json, const char *name, int rc, const char *want)
{
    const char *v = NULL;
    size_t n = 0;
    assert_int_equal(sched_json_member(json, strlen(json), name, &v, &n), rc);
    if (rc == 1) {
        char got[256];
        snprintf(got, sizeof got, "%.*s", (int)n, v);
        assert_string_equal(got, want);
    }
}

static void test_json_member(void **state)
{
    const char *pod =
        "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"labels\":{\"spec\":\"x}\"}},"
        "\"spec\":{\"priority\":7,\"c\":[{\"n\":\"q\\\"}\"},[1,2]]},\"status\":{}}";
    expect_member(pod, "kind", 1, "\"Pod\"");
    expect_member(pod, "spec", 1, "{\"priority\":7,\"c\":[{\"n\":\"q\\\"}\"},[1,2]]}");
    expect_member(pod, "status", 1, "{}");
    expect_member(pod, "generation", 0, NULL); /* nested keys are not top-level */
    expect_member(" { \"a\" : 12 , \"b\" : true } ", "b", 1, "true");
    expect_member("{\"a\":12,\"b\":null}", "a", 1, "12");
    expect_member("{}", "a", 0, NULL);
    expect_member("{\"a\":\"unterminated}", "a", -1, NULL);
    expect_member("{\"a\":{\"b\":1}", "b", -1, NULL); /* the object never closes */
    expect_member("[1,2]", "a", -1, NULL);
    expect_member("{\"sp\\u0065c\":1}", "spec", -1, NULL); /* escaped key: unknown */
    expect_member("{\"a\":\"\\\\\"}", "a", 1, "\"\\\\\"");
}

/* ---- events ---- */

static json_t *involved(const char *ns, const char *name, const char *uid)
{
    char buf[512];
    snprintf(buf, sizeof buf,
             "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'%s','namespace':'%s',"
             "'uid':'%s','resourceVersion':'9'}}",
             name, ns, uid);
    return J(buf);
}

static void test_event_create_and_repeat(void **state)
{
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'e'}}");
    json_t *pod = involved("e", "p", "u-1");
    assert_int_equal(event_record(st, pod, "Warning", "FailedScheduling", "no room", "sched"), 0);
    assert_int_equal(event_record(st, pod, "Warning", "FailedScheduling", "no room", "sched"), 0);
    json_int_t count = 0;
    assert_int_equal(events_about(st, "e", "FailedScheduling", "p", NULL, &count), 1);
    assert_int_equal(count, 2);

    /* Repeats inside one transaction see each other. */
    json_t *a = event_new(pod, "Normal", "Scheduled", "to n1", "sched");
    json_t *b = event_new(pod, "Normal", "Scheduled", "to n1", "sched");
    store_txn *t = store_begin(st);
    assert_int_equal(event_write(t, a), 0);
    assert_int_equal(event_write(t, b), 0);
    assert_int_equal(store_commit(t), 0);
    assert_int_equal(events_about(st, "e", "Scheduled", "p", NULL, &count), 1);
    assert_int_equal(count, 2);
    json_decref(a);
    json_decref(b);

    /* The stored Event carries what reg_create would have set. */
    store_obj **objs = NULL;
    size_t n = 0;
    assert_int_equal(store_list(st, "events/e/", NULL, 0, &objs, &n, NULL, NULL), 0);
    assert_int_equal(n, 2);
    for (size_t i = 0; i < n; i++) {
        json_t *ev = store_obj_parse(objs[i]);
        assert_non_null(path_str(ev, "metadata", "uid"));
        assert_non_null(path_str(ev, "metadata", "creationTimestamp"));
        char rv[32];
        snprintf(rv, sizeof rv, "%lld", (long long)objs[i]->rv);
        assert_string_equal(path_str(ev, "metadata", "resourceVersion"), rv);
        assert_string_equal(path_str(ev, "involvedObject", "uid"), "u-1");
        json_decref(ev);
        store_obj_unref(objs[i]);
    }
    free(objs);
    json_decref(pod);
    store_close(st);
}

static void test_event_needs_open_namespace(void **state)
{
    store *st = open_store();
    json_t *pod = involved("gone", "p", "u-2");
    assert_int_equal(event_record(st, pod, "Normal", "Scheduled", "x", "sched"), -1);
    json_decref(pod);

    create_core(st, "namespaces", "", "{'metadata':{'name':'t'}}");
    reg_delete_opts o = {.grace_seconds = -1};
    json_t *out = NULL;
    bool gone = false;
    api_err e;
    api_err_init(&e);
    /* No namespace controller runs: the namespace stays Terminating. */
    assert_int_equal(
        reg_delete(st, api_kind_find("", "v1", "namespaces"), "", "t", &o, &out, &gone, &e), 0);
    json_decref(out);
    pod = involved("t", "p", "u-3");
    assert_int_equal(event_record(st, pod, "Normal", "Scheduled", "x", "sched"), -1);
    assert_int_equal(events_about(st, "t", "Scheduled", "p", NULL, NULL), 0);
    json_decref(pod);
    store_close(st);
}

static void test_recorder_writes_everything_by_stop(void **state)
{
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'r'}}");
    event_recorder *r = event_recorder_start(st);
    assert_non_null(r);
    enum { N = 600 }; /* more than one batch */
    for (int i = 0; i < N; i++) {
        char name[32], uid[32];
        snprintf(name, sizeof name, "p%d", i);
        snprintf(uid, sizeof uid, "u%d", i);
        json_t *pod = involved("r", name, uid);
        assert_true(event_recorder_emit(r, event_new(pod, "Normal", "Scheduled", "ok", "s")));
        json_decref(pod);
    }
    assert_false(event_recorder_emit(r, NULL));
    event_recorder_stop(r);
    assert_int_equal(store_count(st, "events"), N);
    store_close(st);
}

/* ---- the scheduler ---- */

static int count_bound(store *st, const char *ns, int npods)
{
    int bound = 0;
    for (int i = 0; i < npods; i++) {
        char key[64];
        snprintf(key, sizeof key, "pods/%s/p%d", ns, i);
        json_t *p = get(st, key);
        const char *node = path_str(p, "spec", "nodeName");
        if (node && *node) bound++;
        json_decref(p);
    }
    return bound;
}

static const char *scheduled_message(const json_t *pod)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type && !strcmp(type, "PodScheduled"))
            return json_string_value(json_object_get(c, "message"));
    }
    return NULL;
}

#define P4_MESSAGE                                                                                 \
    "0/1 nodes are available: quota exceeded: q, requested: requests.cpu=500m, used: "             \
    "requests.cpu=2, limited: requests.cpu=2. preemption: 0/1 nodes are available: 1 Preemption "  \
    "is not helpful for scheduling."

/* Settled: four bound, and p4's condition and latest FailedScheduling event
 * carry the exact usage (a verdict reached while binds were in flight may
 * have counted one twice; it is redone once they finish). */
static bool quota_case_settled(store *st, void *arg)
{
    json_t *p4 = get(st, "pods/a/p4");
    const char *msg = scheduled_message(p4);
    bool blocked = msg && !strcmp(msg, P4_MESSAGE);
    json_decref(p4);
    return blocked && count_bound(st, "a", 4) == 4 &&
           events_about(st, "a", "FailedScheduling", "p4", P4_MESSAGE, NULL) == 1;
}

/* The stored quota at key has status.used requests.cpu `want`. */
static void assert_cpu_used(store *st, const char *key, const char *want)
{
    json_t *q = get(st, key);
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(q, "status"), "used"), "requests.cpu")),
                        want);
    json_decref(q);
}

/* Node n1 (8 cpu), namespace ns with quota q of `cpu` requests.cpu, and
 * pods p0..p<n-1> of 500m each, none bound. */
static void seed_quota_ns(store *st, const char *ns, const char *cpu, int n)
{
    char obj[256];
    create_core(st, "nodes", "",
                "{'metadata':{'name':'n1'},'status':{'allocatable':{'cpu':'8','memory':'64Gi',"
                "'pods':'110'}}}");
    snprintf(obj, sizeof obj, "{'metadata':{'name':'%s'}}", ns);
    create_core(st, "namespaces", "", obj);
    snprintf(obj, sizeof obj, "{'metadata':{'name':'q'},'spec':{'hard':{'requests.cpu':'%s'}}}",
             cpu);
    create_core(st, "resourcequotas", ns, obj);
    for (int i = 0; i < n; i++) {
        snprintf(obj, sizeof obj,
                 "{'metadata':{'name':'p%d'},'spec':{'containers':[{'name':'c','image':'x',"
                 "'resources':{'requests':{'cpu':'500m'}}}]}}",
                 i);
        create_core(st, "pods", ns, obj);
    }
}

/* Four of five pods fit the deferred quota: they are bound and charged, each
 * with its Scheduled event; the fifth waits with the PreFilter's message. */
static void test_scheduler_binds_within_quota(void **state)
{
    store *st = open_store();
    seed_quota_ns(st, "a", "2", 5);
    char err[256];
    scheduler *s = scheduler_start(st, err, sizeof err);
    assert_non_null(s);
    wait_until(st, quota_case_settled, NULL, "4 pods bound, p4 blocked on quota");
    scheduler_stop(s); /* writes the Scheduled events still queued */

    assert_int_equal(quota_ledger_sync(st), 0);
    assert_cpu_used(st, "resourcequotas/a/q", "2");
    for (int i = 0; i < 4; i++) {
        char name[16], want[64];
        snprintf(name, sizeof name, "p%d", i);
        snprintf(want, sizeof want, "Successfully assigned a/p%d to n1", i);
        assert_int_equal(events_about(st, "a", "Scheduled", name, NULL, NULL), 1);
        assert_int_equal(events_about(st, "a", "Scheduled", name, want, NULL), 1);
    }
    json_t *p4 = get(st, "pods/a/p4");
    assert_null(path_str(p4, "spec", "nodeName"));
    json_decref(p4);
    store_close(st);
}

static bool resize_case_settled(store *st, void *arg)
{
    json_t *b = get(st, "pods/r/p1");
    const char *msg = scheduled_message(b);
    bool settled = msg && strstr(msg, "Insufficient cpu");
    json_decref(b);
    return settled;
}

static bool first_bound(store *st, void *arg)
{
    return count_bound(st, "r", 1) == 1;
}

static json_t *resize_to_2(const json_t *cur, void *ctx, api_err *e)
{
    json_t *p = json_deep_copy(cur);
    json_t *c = json_array_get(json_object_get(json_object_get(p, "spec"), "containers"), 0);
    json_object_set_new(json_object_get(json_object_get(c, "resources"), "requests"), "cpu",
                        json_string("2"));
    json_object_set_new(json_object_get(json_object_get(c, "resources"), "limits"), "cpu",
                        json_string("2"));
    return p;
}

/* A bound pod resized up takes its new requests on its node: a pod that would
 * have fit beside the old size does not fit. */
static void test_scheduler_follows_resize(void **state)
{
    store *st = open_store();
    create_core(st, "nodes", "",
                "{'metadata':{'name':'n1'},'status':{'allocatable':{'cpu':'2','memory':'64Gi',"
                "'pods':'110'}}}");
    create_core(st, "namespaces", "", "{'metadata':{'name':'r'}}");
    const char *pod = "{'metadata':{'name':'p%d'},'spec':{'containers':[{'name':'c','image':'x',"
                      "'resources':{'requests':{'cpu':'1'},'limits':{'cpu':'1'}}}]}}";
    char buf[256];
    snprintf(buf, sizeof buf, pod, 0);
    create_core(st, "pods", "r", buf);
    char err[256];
    scheduler *s = scheduler_start(st, err, sizeof err);
    assert_non_null(s);
    wait_until(st, first_bound, NULL, "p0 bound");
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    if (reg_update(st, api_kind_find("", "v1", "pods"), "r", "p0", "resize", resize_to_2, NULL,
                   false, &out, &e) != 0)
        fail_msg("resize: %s", e.message);
    json_decref(out);
    snprintf(buf, sizeof buf, pod, 1);
    create_core(st, "pods", "r", buf);
    wait_until(st, resize_case_settled, NULL, "p1 unschedulable");
    scheduler_stop(s);
    assert_int_equal(count_bound(st, "r", 2), 1);
    store_close(st);
}

/* ---- a bind whose batch the store refuses ---- */

/* The memory backend, refusing the first batch that binds pods/f/p0. */
typedef struct refusing_be {
    store_backend inner;
    int refused;
} refusing_be;

static int refusing_load(void *impl, void *ctx,
                         void (*on_object)(void *, const char *, int64_t, const char *, size_t),
                         void (*on_event)(void *, const store_op *), int64_t *rev, char *err,
                         size_t errlen)
{
    refusing_be *r = impl;
    return r->inner.load(r->inner.impl, ctx, on_object, on_event, rev, err, errlen);
}

static int refusing_write(void *impl, const store_op *ops, size_t n, int64_t rev, char *err,
                          size_t errlen)
{
    refusing_be *r = impl;
    for (size_t i = 0; i < n && !r->refused; i++)
        if (!strcmp(ops[i].key, "pods/f/p0") && ops[i].json &&
            strstr(ops[i].json, "\"nodeName\"")) {
            r->refused++;
            snprintf(err, errlen, "refused by the test");
            return -1;
        }
    return r->inner.write_batch(r->inner.impl, ops, n, rev, err, errlen);
}

static void refusing_compact(void *impl, int64_t rv)
{
    refusing_be *r = impl;
    if (r->inner.compact) r->inner.compact(r->inner.impl, rv);
}

static void refusing_close(void *impl)
{
    refusing_be *r = impl;
    if (r->inner.close) r->inner.close(r->inner.impl);
}

static bool refused_case_settled(store *st, void *arg)
{
    return count_bound(st, "f", 2) == 2 &&
           events_about(st, "f", "Scheduled", "p0", NULL, NULL) == 1 &&
           events_about(st, "f", "Scheduled", "p1", NULL, NULL) == 1;
}

/* The bind of p0 commits but its batch is refused: it is not reported
 * scheduled, its assumed quota usage is forgotten (the quota has room for
 * exactly both pods, so a leak would block it), and it is bound on retry. */
static void test_scheduler_bind_refused_by_store(void **state)
{
    refusing_be r = {0};
    store_memory_backend(&r.inner);
    store_backend be = {&r, refusing_load, refusing_write, refusing_compact, refusing_close};
    char err[256];
    store *st = store_open(&be, reg_indexer, NULL, err, sizeof err);
    assert_non_null(st);
    /* as in allotd: its reset forgets the charges of the refused batch */
    assert_int_equal(quota_ledger_start(st, QUOTA_LEDGER_FLUSH_MS), 0);
    seed_quota_ns(st, "f", "1", 2);
    unsigned long long scheduled = scheduler_stats.scheduled;
    scheduler *s = scheduler_start(st, err, sizeof err);
    assert_non_null(s);
    wait_until(st, refused_case_settled, NULL, "p0 and p1 bound, once each");
    scheduler_stop(s);
    quota_ledger_stop();
    assert_int_equal(r.refused, 1);
    assert_int_equal(scheduler_stats.scheduled - scheduled, 2);
    assert_int_equal(events_about(st, "f", "Scheduled", "p0", NULL, NULL), 1);
    assert_int_equal(quota_ledger_sync(st), 0);
    assert_cpu_used(st, "resourcequotas/f/q", "1");
    store_close(st);
}

int main(void)
{
    char err[256];
    if (features_parse("DeferredResourceQuota=true", err, sizeof err) != 0 ||
        admission_register_defaults() != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_member),
        cmocka_unit_test(test_event_create_and_repeat),
        cmocka_unit_test(test_event_needs_open_namespace),
        cmocka_unit_test(test_recorder_writes_everything_by_stop),
        cmocka_unit_test(test_scheduler_binds_within_quota),
        cmocka_unit_test(test_scheduler_follows_resize),
        cmocka_unit_test(test_scheduler_bind_refused_by_store),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
