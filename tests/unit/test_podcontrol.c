/* test_podcontrol.c - core/expect.h (upstream's ControllerExpectations and
 * UID-tracking deletions) and controllers/podcontrol.h: pods made from a
 * template, created through the registry so quota refuses them with its
 * exact message and a FailedCreate Event on the owner, slow-start batches
 * stopping at the first error, and per-owner backoff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controllers/podcontrol.h"
#include "core/evfilter.h"
#include "core/expect.h"
#include "core/rollout.h"
#include "registry/admission.h"
#include "teststore.h"

/* ---- expectations ---- */

static void test_expect_creations(void **state)
{
    (void)state;
    expect_set *s = expect_new(1000);
    assert_non_null(s);
    assert_true(expect_satisfied(s, "rs/a", 0)); /* no record */
    assert_int_equal(expect_creations(s, "rs/a", 3, 0), 0);
    assert_false(expect_satisfied(s, "rs/a", 10));
    expect_creation_observed(s, "rs/a");
    expect_creation_observed(s, "rs/a");
    assert_false(expect_satisfied(s, "rs/a", 10));
    expect_creation_observed(s, "rs/a");
    assert_true(expect_satisfied(s, "rs/a", 10));
    /* more observed than expected stays satisfied (add <= 0) */
    expect_creation_observed(s, "rs/a");
    assert_true(expect_satisfied(s, "rs/a", 10));
    /* another owner is independent; observing an unknown owner is harmless */
    expect_creation_observed(s, "rs/zzz");
    assert_int_equal(expect_count(s), 1);
    /* expiry: past the TTL an unfulfilled record is satisfied */
    assert_int_equal(expect_creations(s, "rs/b", 2, 100), 0);
    assert_false(expect_satisfied(s, "rs/b", 1100));
    assert_true(expect_satisfied(s, "rs/b", 1101));
    /* setting replaces */
    assert_int_equal(expect_creations(s, "rs/b", 1, 2000), 0);
    int add, del;
    expect_pending(s, "rs/b", &add, &del);
    assert_int_equal(add, 1);
    assert_int_equal(del, 0);
    expect_forget(s, "rs/b");
    assert_true(expect_satisfied(s, "rs/b", 2000));
    expect_free(s);
}

static void test_expect_deletions_tracked_by_key(void **state)
{
    (void)state;
    expect_set *s = expect_new(EXPECT_TTL_MS);
    const char *pods[] = {"pods/ns/a", "pods/ns/b", "pods/ns/a"};
    assert_int_equal(expect_deletions(s, "rs/x", pods, 3, 0), 0);
    int add, del;
    expect_pending(s, "rs/x", &add, &del);
    assert_int_equal(del, 2);                         /* a set: the duplicate counts once */
    expect_deletion_observed(s, "rs/x", "pods/ns/c"); /* not one we asked for */
    expect_deletion_observed(s, "rs/x", "pods/ns/a");
    expect_deletion_observed(s, "rs/x", "pods/ns/a"); /* once only */
    assert_false(expect_satisfied(s, "rs/x", 1));
    expect_deletion_observed(s, "rs/x", "pods/ns/b");
    assert_true(expect_satisfied(s, "rs/x", 1));
    /* deletions replace creations */
    assert_int_equal(expect_creations(s, "rs/x", 5, 2), 0);
    assert_int_equal(expect_deletions(s, "rs/x", pods, 1, 3), 0);
    expect_pending(s, "rs/x", &add, &del);
    assert_int_equal(add, 0);
    assert_int_equal(del, 1);
    expect_clear(s);
    assert_int_equal(expect_count(s), 0);
    assert_true(expect_satisfied(s, "rs/x", 3));
    expect_free(s);
}

static void test_batch_sizes_and_backoff(void **state)
{
    (void)state;
    /* slowStartBatch(500, 1): 1 2 4 ... 128, then the 245 left */
    size_t size = 0, done = 0, sizes[16], n = 0;
    while ((size = ro_batch_size(size, 1, 500 - done)) > 0) {
        sizes[n++] = size;
        done += size;
    }
    assert_int_equal(n, 9);
    assert_int_equal(sizes[0], 1);
    assert_int_equal(sizes[7], 128);
    assert_int_equal(sizes[8], 245);
    assert_int_equal(ro_batch_size(0, 1, 0), 0);
    assert_int_equal(ro_batch_size(0, 4, 3), 3);
    assert_int_equal(ro_backoff_ms(0, 1000, 60000), 0);
    assert_int_equal(ro_backoff_ms(1, 1000, 60000), 1000);
    assert_int_equal(ro_backoff_ms(3, 1000, 60000), 4000);
    assert_int_equal(ro_backoff_ms(7, 1000, 60000), 60000);
    assert_int_equal(ro_backoff_ms(1000, 1000, 60000), 60000);
}

/* client-go's spam filter: a burst of 25 per key, then one per 300 s */
static void test_event_spam_filter(void **state)
{
    (void)state;
    evfilter *f = evfilter_new(EVFILTER_BURST, EVFILTER_REFILL_MS, 3);
    assert_non_null(f);
    for (int i = 0; i < 25; i++)
        assert_true(evfilter_allow(f, "rs-a", 1000));
    assert_false(evfilter_allow(f, "rs-a", 1000));
    assert_true(evfilter_allow(f, "rs-b", 1000)); /* another object: its own bucket */
    assert_false(evfilter_allow(f, "rs-a", 1000 + 299 * 1000));
    assert_true(evfilter_allow(f, "rs-a", 1000 + 300 * 1000)); /* one token back */
    assert_false(evfilter_allow(f, "rs-a", 1000 + 300 * 1000));
    /* past max_keys every bucket starts over (a bound, not an LRU) */
    assert_true(evfilter_allow(f, "rs-c", 2000));
    assert_true(evfilter_allow(f, "rs-d", 2000));
    assert_true(evfilter_allow(f, "rs-a", 2000));
    evfilter_free(f);
}

/* ---- podcontrol ---- */

static store *st;

static int setup(void **state)
{
    (void)state;
    st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'team'}}");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    store_close(st);
    return 0;
}

#define OWNER                                                                                      \
    "{'apiVersion':'apps/v1','kind':'ReplicaSet','metadata':{'name':'web','namespace':'team',"     \
    "'uid':'11111111-2222-3333-4444-555555555555','resourceVersion':'7'}}"
#define TEMPLATE                                                                                   \
    "{'metadata':{'labels':{'app':'web'},'annotations':{'a':'b'}},"                                \
    "'spec':{'containers':[{'name':'c','image':'nginx'}]}}"

static void test_pod_from_template(void **state)
{
    (void)state;
    json_t *owner = J(OWNER), *tmpl = J(TEMPLATE);
    api_err e;
    api_err_init(&e);
    json_t *pod = podctl_pod_from_template(tmpl, owner, NULL, &e);
    assert_non_null(pod);
    json_t *want = J("{'apiVersion':'v1','kind':'Pod','metadata':{'generateName':'web-',"
                     "'namespace':'team','labels':{'app':'web'},'annotations':{'a':'b'},"
                     "'ownerReferences':[{'apiVersion':'apps/v1','kind':'ReplicaSet','name':'web',"
                     "'uid':'11111111-2222-3333-4444-555555555555','controller':true,"
                     "'blockOwnerDeletion':true}]},"
                     "'spec':{'containers':[{'name':'c','image':'nginx'}]}}");
    assert_json_eq(pod, want);
    json_decref(want);
    json_decref(pod);
    /* no labels: upstream's refusal, before any request */
    json_t *bare = J("{'spec':{'containers':[{'name':'c','image':'nginx'}]}}");
    assert_null(podctl_pod_from_template(bare, owner, NULL, &e));
    assert_string_equal(e.message, "unable to create pods, no labels");
    api_err_clear(&e);
    json_decref(bare);
    json_decref(owner);
    json_decref(tmpl);
}

typedef struct create_ctx {
    podctl *pc;
    json_t *owner, *pod;
} create_ctx;

static int create_one(void *arg, size_t i, api_err *e)
{
    create_ctx *c = arg;
    (void)i;
    return podctl_create_pod(c->pc, c->owner, c->pod, NULL, e);
}

/* Events about the owner with `reason`: how many, and the first's message. */
static size_t events_with(const char *reason, char *msg, size_t n)
{
    store_obj **objs = NULL;
    size_t cnt = 0, found = 0;
    assert_int_equal(store_list(st, "events/team/", NULL, 0, &objs, &cnt, NULL, NULL), 0);
    for (size_t i = 0; i < cnt; i++) {
        json_t *ev = store_obj_parse(objs[i]);
        const char *r = json_string_value(json_object_get(ev, "reason"));
        if (r && !strcmp(r, reason)) {
            if (!found && msg)
                snprintf(msg, n, "%s", json_string_value(json_object_get(ev, "message")));
            found += (size_t)json_integer_value(json_object_get(ev, "count"));
        }
        json_decref(ev);
        store_obj_unref(objs[i]);
    }
    free(objs);
    return found;
}

static void test_slow_start_stops_at_quota(void **state)
{
    (void)state;
    create_core(st, "resourcequotas", "team",
                "{'metadata':{'name':'q'},'spec':{'hard':{'pods':'3'}}}");
    char err[256];
    podctl *pc = podctl_new(st, "replicaset-controller", 4, err, sizeof err);
    assert_non_null(pc);
    json_t *owner = J(OWNER), *tmpl = J(TEMPLATE);
    api_err e;
    api_err_init(&e);
    create_ctx c = {pc, owner, podctl_pod_from_template(tmpl, owner, NULL, &e)};
    assert_non_null(c.pod);
    /* 5 wanted, 3 allowed: batches 1 (ok), 2 (ok), 2 (both refused): stop */
    size_t ok = podctl_slow_start(pc, 5, 1, create_one, &c, &e);
    assert_int_equal(ok, 3);
    assert_int_equal(e.code, API_FORBIDDEN);
    assert_non_null(strstr(e.message, "is forbidden: exceeded quota: q, requested: pods=1, "
                                      "used: pods=3, limited: pods=3"));
    assert_true(!strncmp(e.message, "pods \"web-", 10));
    char first[4200];
    snprintf(first, sizeof first, "Error creating: %s", e.message);
    api_err_clear(&e);
    /* a second try stops at its first batch of one */
    ok = podctl_slow_start(pc, 2, 1, create_one, &c, &e);
    assert_int_equal(ok, 0);
    api_err_clear(&e);
    podctl_free(pc); /* writes the queued Events */
    char msg[4096];
    assert_int_equal(events_with("SuccessfulCreate", msg, sizeof msg), 3);
    assert_true(!strncmp(msg, "Created pod: web-", 17));
    assert_int_equal(events_with("FailedCreate", NULL, 0), 3);
    /* one of them is the first error, word for word */
    store_obj **objs = NULL;
    size_t cnt = 0;
    bool seen = false;
    assert_int_equal(store_list(st, "events/team/", NULL, 0, &objs, &cnt, NULL, NULL), 0);
    for (size_t i = 0; i < cnt; i++) {
        json_t *ev = store_obj_parse(objs[i]);
        const char *m = json_string_value(json_object_get(ev, "message"));
        const char *type = json_string_value(json_object_get(ev, "type"));
        if (m && !strcmp(m, first)) {
            seen = true;
            assert_string_equal(type, "Warning");
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(ev, "source"), "component")),
                "replicaset-controller");
            assert_string_equal(
                json_string_value(json_object_get(json_object_get(ev, "involvedObject"), "kind")),
                "ReplicaSet");
        }
        json_decref(ev);
        store_obj_unref(objs[i]);
    }
    free(objs);
    assert_true(seen);
    json_decref(c.pod);
    json_decref(owner);
    json_decref(tmpl);
}

typedef struct count_ctx {
    pthread_mutex_t mu;
    size_t calls, fail_from;
    bool seen[64];
} count_ctx;

static int counted(void *arg, size_t i, api_err *e)
{
    count_ctx *c = arg;
    pthread_mutex_lock(&c->mu);
    c->calls++;
    c->seen[i] = true;
    pthread_mutex_unlock(&c->mu);
    if (i >= c->fail_from) return api_err_set(e, API_INTERNAL, "call %zu failed", i);
    return 0;
}

static void test_batches_and_parallel(void **state)
{
    (void)state;
    char err[256];
    podctl *pc = podctl_new(st, "test", 3, err, sizeof err);
    assert_non_null(pc);
    count_ctx c = {PTHREAD_MUTEX_INITIALIZER, 0, 1000, {0}};
    api_err e;
    api_err_init(&e);
    assert_int_equal(podctl_slow_start(pc, 40, 1, counted, &c, &e), 40);
    assert_int_equal(c.calls, 40);
    for (int i = 0; i < 40; i++)
        assert_true(c.seen[i]);
    assert_int_equal(e.code, API_OK);
    /* a failure in the batch 8..15 stops there: 1+2+4 ok, then 8 run */
    memset(&c.seen, 0, sizeof c.seen);
    c.calls = 0;
    c.fail_from = 10;
    assert_int_equal(podctl_slow_start(pc, 40, 1, counted, &c, &e), 10);
    assert_int_equal(c.calls, 15);
    assert_int_equal(e.code, API_INTERNAL);
    api_err_clear(&e);
    /* parallel: every call runs */
    c.calls = 0;
    assert_int_equal(podctl_parallel(pc, 30, counted, &c, &e), 10);
    assert_int_equal(c.calls, 30);
    api_err_clear(&e);
    /* backoff per owner */
    assert_int_equal(podctl_backoff_failure(pc, "a"), 1000);
    assert_int_equal(podctl_backoff_failure(pc, "a"), 2000);
    assert_int_equal(podctl_backoff_failure(pc, "b"), 1000);
    assert_int_equal(podctl_backoff_failures(pc, "a"), 2);
    podctl_backoff_reset(pc, "a");
    assert_int_equal(podctl_backoff_failures(pc, "a"), 0);
    /* expectations through the lock */
    podctl_expect_creations(pc, "a", 1);
    assert_false(podctl_satisfied(pc, "a"));
    podctl_creation_observed(pc, "a");
    assert_true(podctl_satisfied(pc, "a"));
    podctl_free(pc);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expect_creations),
        cmocka_unit_test(test_expect_deletions_tracked_by_key),
        cmocka_unit_test(test_batch_sizes_and_backoff),
        cmocka_unit_test(test_event_spam_filter),
        cmocka_unit_test_setup_teardown(test_pod_from_template, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slow_start_stops_at_quota, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batches_and_parallel, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
