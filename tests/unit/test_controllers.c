/* test_controllers.c - namespace lifecycle and garbage collection, driven
 * through the registry on a memory store with the controllers running.
 * Tests wait for the controllers with bounded polling (wait_for), never
 * with a fixed sleep. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controllers/controllers.h"
#include "registry/registry.h"
#include "teststore.h"

typedef struct fixture {
    store *st;
    controllers *ctl;
    const api_kind *ns, *pod, *cm, *rs;
} fixture;

static void start(fixture *f)
{
    char err[256];
    f->ctl = controllers_start(f->st, err, sizeof err);
    if (!f->ctl) fail_msg("controllers_start: %s", err);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->st = open_store();
    f->ns = api_kind_find("", "v1", "namespaces");
    f->pod = api_kind_find("", "v1", "pods");
    f->cm = api_kind_find("", "v1", "configmaps");
    /* The owner in these tests: a kind no controller acts on (a ReplicaSet
     * would have its controller make, adopt and release pods). */
    f->rs = api_kind_find("", "v1", "configmaps");
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    controllers_stop(f->ctl);
    store_close(f->st);
    free(f);
    return 0;
}

/* ---- helpers ---- */

/* Create (takes obj); the stored object's uid goes to uid when given. */
static void create(fixture *f, const api_kind *k, const char *ns, json_t *obj, char uid[64])
{
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    if (reg_create(f->st, k, ns, obj, false, &out, &e) != 0)
        fail_msg("create %s: %s", k->resource, e.message);
    if (uid)
        snprintf(uid, 64, "%s",
                 json_string_value(json_object_get(json_object_get(out, "metadata"), "uid")));
    json_decref(out);
    json_decref(obj);
}

static void create_ns(fixture *f, const char *name)
{
    create(f, f->ns, "", json_pack("{s:{s:s}}", "metadata", "name", name), NULL);
}

static json_t *pod_json(const char *name, json_t *meta_extra)
{
    json_t *p = json_pack("{s:{s:s}, s:{s:[{s:s, s:s}]}}", "metadata", "name", name, "spec",
                          "containers", "name", "c", "image", "nginx:1.25");
    if (meta_extra) {
        json_object_update(json_object_get(p, "metadata"), meta_extra);
        json_decref(meta_extra);
    }
    return p;
}

static json_t *owned_by(const char *kind_av, const char *kind, const char *name, const char *uid,
                        bool block)
{
    return json_pack("{s:[{s:s, s:s, s:s, s:s, s:b, s:b}]}", "ownerReferences", "apiVersion",
                     kind_av, "kind", kind, "name", name, "uid", uid, "controller", 1,
                     "blockOwnerDeletion", block);
}

static json_t *get(fixture *f, const api_kind *k, const char *ns, const char *name)
{
    api_err e;
    api_err_init(&e);
    json_t *o = reg_get(f->st, k, ns, name, &e);
    api_err_clear(&e);
    return o;
}

static bool exists(fixture *f, const api_kind *k, const char *ns, const char *name)
{
    json_t *o = get(f, k, ns, name);
    json_decref(o);
    return o != NULL;
}

static bool being_deleted(fixture *f, const api_kind *k, const char *ns, const char *name)
{
    json_t *o = get(f, k, ns, name);
    bool d = json_object_get(json_object_get(o, "metadata"), "deletionTimestamp") != NULL;
    json_decref(o);
    return d;
}

static void del(fixture *f, const api_kind *k, const char *ns, const char *name,
                const char *propagation)
{
    reg_delete_opts o = {.grace_seconds = -1, .propagation = propagation};
    json_t *out = NULL;
    bool gone;
    api_err e;
    api_err_init(&e);
    if (reg_delete(f->st, k, ns, name, &o, &out, &gone, &e) != 0)
        fail_msg("delete %s/%s: %s", k->resource, name, e.message);
    json_decref(out);
}

static json_t *clear_finalizers(const json_t *cur, void *ctx, api_err *e)
{
    json_t *nw = json_deep_copy(cur);
    json_object_del(json_object_get(nw, "metadata"), "finalizers");
    return nw;
}

static void unfinalize(fixture *f, const api_kind *k, const char *ns, const char *name)
{
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    if (reg_update(f->st, k, ns, name, "", clear_finalizers, NULL, false, &out, &e) != 0)
        fail_msg("update %s: %s", name, e.message);
    json_decref(out);
}

/* Bounded wait: poll `cond` every 10 ms for up to 5 s. */
#define WAIT_FOR(cond)                                                                             \
    do {                                                                                           \
        bool ok_ = false;                                                                          \
        for (int i_ = 0; i_ < 500 && !(ok_ = (cond)); i_++)                                        \
            nanosleep(&(struct timespec){0, 10000000L}, NULL);                                     \
        if (!ok_) fail_msg("timed out waiting for: %s", #cond);                                    \
    } while (0)

static const char *cond_field(const json_t *nsobj, const char *type, const char *field)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(nsobj, "status"), "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return json_string_value(json_object_get(c, field));
    }
    return NULL;
}

static bool ns_condition_is(fixture *f, const char *ns, const char *type, const char *message)
{
    json_t *o = get(f, f->ns, "", ns);
    const char *m = cond_field(o, type, "message");
    bool eq = m && strcmp(m, message) == 0;
    json_decref(o);
    return eq;
}

/* ---- namespace lifecycle ---- */

static void test_namespace_deletion_removes_content(void **state)
{
    fixture *f = *state;
    create_ns(f, "team");
    create_ns(f, "other");
    create(f, f->pod, "team", pod_json("p1", NULL), NULL);
    create(f, f->pod, "team", pod_json("p2", NULL), NULL);
    create(f, f->cm, "team", J("{\"metadata\":{\"name\":\"c1\"},\"data\":{\"k\":\"v\"}}"), NULL);
    create(f, f->cm, "other", J("{\"metadata\":{\"name\":\"c1\"}}"), NULL);
    start(f);

    del(f, f->ns, "", "team", NULL);
    WAIT_FOR(!exists(f, f->ns, "", "team"));
    assert_int_equal(store_count(f->st, "pods"), 0);
    assert_false(exists(f, f->cm, "team", "c1"));
    /* other namespaces are untouched */
    assert_true(exists(f, f->cm, "other", "c1"));
    assert_true(exists(f, f->ns, "", "other"));
}

static void test_namespace_waits_for_finalizers(void **state)
{
    fixture *f = *state;
    create_ns(f, "team");
    create(f, f->cm, "team",
           J("{\"metadata\":{\"name\":\"held\",\"finalizers\":[\"example.com/hold\"]}}"), NULL);
    create(f, f->pod, "team", pod_json("p1", NULL), NULL);
    start(f);

    del(f, f->ns, "", "team", NULL);
    WAIT_FOR(ns_condition_is(f, "team", "NamespaceFinalizersRemaining",
                             "Some content in the namespace has finalizers remaining: "
                             "example.com/hold in 1 resource instances"));
    assert_true(
        ns_condition_is(f, "team", "NamespaceContentRemaining",
                        "Some resources are remaining: configmaps. has 1 resource instances"));
    json_t *nsobj = get(f, f->ns, "", "team");
    assert_string_equal(cond_field(nsobj, "NamespaceContentRemaining", "status"), "True");
    assert_string_equal(cond_field(nsobj, "NamespaceContentRemaining", "reason"),
                        "SomeResourcesRemain");
    assert_string_equal(cond_field(nsobj, "NamespaceDeletionContentFailure", "status"), "False");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(nsobj, "status"), "phase")),
        "Terminating");
    json_decref(nsobj);
    assert_true(being_deleted(f, f->cm, "team", "held"));
    assert_false(exists(f, f->pod, "team", "p1"));

    /* new content is refused while terminating */
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    json_t *cm = J("{\"metadata\":{\"name\":\"late\"}}");
    assert_int_equal(reg_create(f->st, f->cm, "team", cm, false, &out, &e), -1);
    assert_int_equal(e.code, API_FORBIDDEN);
    api_err_clear(&e);
    json_decref(cm);

    unfinalize(f, f->cm, "team", "held");
    WAIT_FOR(!exists(f, f->ns, "", "team"));
    assert_false(exists(f, f->cm, "team", "held"));
}

/* A deletion begun while no controller ran is finished at start. */
static void test_namespace_deletion_resumes_at_start(void **state)
{
    fixture *f = *state;
    create_ns(f, "team");
    create(f, f->cm, "team", J("{\"metadata\":{\"name\":\"c1\"}}"), NULL);
    del(f, f->ns, "", "team", NULL);
    assert_true(being_deleted(f, f->ns, "", "team"));
    start(f);
    WAIT_FOR(!exists(f, f->ns, "", "team"));
    assert_false(exists(f, f->cm, "team", "c1"));
}

/* Many objects, half owned by a ConfigMap: both controllers delete at once
 * and the namespace still goes (within the bounded wait). */
static void test_namespace_many_objects(void **state)
{
    fixture *f = *state;
    char rs[64], name[32];
    create_ns(f, "big");
    create(f, f->rs, "big", json_pack("{s:{s:s}}", "metadata", "name", "web"), rs);
    for (int i = 0; i < 400; i++) {
        snprintf(name, sizeof name, "p%d", i);
        create(f, f->pod, "big",
               pod_json(name, i % 2 ? owned_by("v1", "ConfigMap", "web", rs, true) : NULL), NULL);
    }
    start(f);
    del(f, f->ns, "", "big", NULL);
    WAIT_FOR(!exists(f, f->ns, "", "big"));
    assert_int_equal(store_count(f->st, "pods"), 0);
}

/* ---- garbage collector ---- */

static void create_rs(fixture *f, const char *ns, const char *name, char uid[64])
{
    create(f, f->rs, ns, json_pack("{s:{s:s}}", "metadata", "name", name), uid);
}

static void test_gc_background(void **state)
{
    fixture *f = *state;
    char rs[64];
    create_ns(f, "team");
    create_rs(f, "team", "web", rs);
    create(f, f->pod, "team", pod_json("web-1", owned_by("v1", "ConfigMap", "web", rs, true)),
           NULL);
    create(f, f->pod, "team", pod_json("web-2", owned_by("v1", "ConfigMap", "web", rs, false)),
           NULL);
    create(f, f->pod, "team", pod_json("lonely", NULL), NULL);
    start(f);

    del(f, f->rs, "team", "web", "Background");
    WAIT_FOR(!exists(f, f->pod, "team", "web-1") && !exists(f, f->pod, "team", "web-2"));
    assert_false(exists(f, f->rs, "team", "web"));
    assert_true(exists(f, f->pod, "team", "lonely"));
}

/* A dependent with another live owner stays; only the dead reference goes. */
static void test_gc_keeps_dependent_with_live_owner(void **state)
{
    fixture *f = *state;
    char a[64], b[64];
    create_ns(f, "team");
    create_rs(f, "team", "a", a);
    create_rs(f, "team", "b", b);
    json_t *refs = json_pack("{s:[{s:s, s:s, s:s, s:s}, {s:s, s:s, s:s, s:s}]}", "ownerReferences",
                             "apiVersion", "v1", "kind", "ConfigMap", "name", "a", "uid", a,
                             "apiVersion", "v1", "kind", "ConfigMap", "name", "b", "uid", b);
    create(f, f->pod, "team", pod_json("shared", refs), NULL);
    start(f);

    del(f, f->rs, "team", "a", NULL);
    json_t *p = NULL;
    WAIT_FOR(
        (json_decref(p), p = get(f, f->pod, "team", "shared"),
         json_array_size(json_object_get(json_object_get(p, "metadata"), "ownerReferences")) == 1));
    json_t *ref =
        json_array_get(json_object_get(json_object_get(p, "metadata"), "ownerReferences"), 0);
    assert_string_equal(json_string_value(json_object_get(ref, "uid")), b);
    json_decref(p);

    del(f, f->rs, "team", "b", NULL);
    WAIT_FOR(!exists(f, f->pod, "team", "shared"));
}

static void test_gc_foreground(void **state)
{
    fixture *f = *state;
    char rs[64];
    create_ns(f, "team");
    create_rs(f, "team", "web", rs);
    json_t *meta = owned_by("v1", "ConfigMap", "web", rs, true);
    json_object_set_new(meta, "finalizers", json_pack("[s]", "example.com/hold"));
    create(f, f->pod, "team", pod_json("web-held", meta), NULL);
    create(f, f->pod, "team", pod_json("web-free", owned_by("v1", "ConfigMap", "web", rs, true)),
           NULL);
    start(f);

    del(f, f->rs, "team", "web", "Foreground");
    /* the free dependent goes; the held one is marked and blocks its owner */
    WAIT_FOR(!exists(f, f->pod, "team", "web-free") &&
             being_deleted(f, f->pod, "team", "web-held"));
    assert_true(being_deleted(f, f->rs, "team", "web"));
    json_t *o = get(f, f->rs, "team", "web");
    json_t *want = json_pack("[s]", "foregroundDeletion");
    assert_true(json_equal(json_object_get(json_object_get(o, "metadata"), "finalizers"), want));
    json_decref(want);
    json_decref(o);

    unfinalize(f, f->pod, "team", "web-held");
    WAIT_FOR(!exists(f, f->rs, "team", "web"));
    assert_false(exists(f, f->pod, "team", "web-held"));
}

/* blockOwnerDeletion false: the owner does not wait for that dependent. */
static void test_gc_foreground_nonblocking(void **state)
{
    fixture *f = *state;
    char rs[64];
    create_ns(f, "team");
    create_rs(f, "team", "web", rs);
    json_t *meta = owned_by("v1", "ConfigMap", "web", rs, false);
    json_object_set_new(meta, "finalizers", json_pack("[s]", "example.com/hold"));
    create(f, f->pod, "team", pod_json("web-held", meta), NULL);
    start(f);

    del(f, f->rs, "team", "web", "Foreground");
    WAIT_FOR(!exists(f, f->rs, "team", "web"));
    assert_true(being_deleted(f, f->pod, "team", "web-held"));
}

static void test_gc_orphan(void **state)
{
    fixture *f = *state;
    char rs[64];
    create_ns(f, "team");
    create_rs(f, "team", "web", rs);
    create(f, f->pod, "team", pod_json("web-1", owned_by("v1", "ConfigMap", "web", rs, true)),
           NULL);
    start(f);

    del(f, f->rs, "team", "web", "Orphan");
    WAIT_FOR(!exists(f, f->rs, "team", "web"));
    json_t *p = get(f, f->pod, "team", "web-1");
    assert_non_null(p);
    assert_null(json_object_get(json_object_get(p, "metadata"), "ownerReferences"));
    assert_null(json_object_get(json_object_get(p, "metadata"), "deletionTimestamp"));
    json_decref(p);
}

static json_t *set_refs(const json_t *cur, void *ctx, api_err *e)
{
    (void)e;
    json_t *nw = json_deep_copy(cur);
    json_object_update(json_object_get(nw, "metadata"), ctx);
    return nw;
}

/* Replace the ownerReferences of an object (`refs` as owned_by makes it). */
static void set_owner(fixture *f, const api_kind *k, const char *ns, const char *name, json_t *refs)
{
    json_t *out = NULL;
    api_err e;
    api_err_init(&e);
    if (reg_update(f->st, k, ns, name, "", set_refs, refs, false, &out, &e) != 0)
        fail_msg("update %s: %s", name, e.message);
    json_decref(out);
    json_decref(refs);
}

/* upstream's "should not be blocked by dependency circle": c1 owned by c3,
 * c2 by c1, c3 by c2, every reference blocking; c1 deleted in Foreground
 * takes all three (each would otherwise wait for the next forever). */
static void test_gc_dependency_circle(void **state)
{
    fixture *f = *state;
    char u1[64], u2[64], u3[64];
    create_ns(f, "team");
    create_rs(f, "team", "c1", u1);
    create_rs(f, "team", "c2", u2);
    create_rs(f, "team", "c3", u3);
    set_owner(f, f->rs, "team", "c1", owned_by("v1", "ConfigMap", "c3", u3, true));
    set_owner(f, f->rs, "team", "c2", owned_by("v1", "ConfigMap", "c1", u1, true));
    set_owner(f, f->rs, "team", "c3", owned_by("v1", "ConfigMap", "c2", u2, true));
    start(f);

    del(f, f->rs, "team", "c1", "Foreground");
    WAIT_FOR(!exists(f, f->rs, "team", "c1") && !exists(f, f->rs, "team", "c2") &&
             !exists(f, f->rs, "team", "c3"));
}

/* An owner deleted while no controller ran: its dependents go at start. */
static void test_gc_dangling_at_start(void **state)
{
    fixture *f = *state;
    char rs[64];
    create_ns(f, "team");
    create_rs(f, "team", "web", rs);
    create(f, f->pod, "team", pod_json("web-1", owned_by("v1", "ConfigMap", "web", rs, true)),
           NULL);
    create(f, f->pod, "team", pod_json("lonely", NULL), NULL);
    del(f, f->rs, "team", "web", NULL);
    start(f);
    WAIT_FOR(!exists(f, f->pod, "team", "web-1"));
    assert_true(exists(f, f->pod, "team", "lonely"));
}

/* A cluster-scoped owner: its dependents in every namespace go. */
static void test_gc_cluster_scoped_owner(void **state)
{
    fixture *f = *state;
    const api_kind *node = api_kind_find("", "v1", "nodes");
    char owner[64];
    create_ns(f, "a");
    create_ns(f, "b");
    create(f, node, "", json_pack("{s:{s:s}}", "metadata", "name", "n1"), owner);
    json_t *meta = owned_by("v1", "Node", "n1", owner, false);
    json_object_set_new(meta, "name", json_string("c1"));
    create(f, f->cm, "a", json_pack("{s:O}", "metadata", meta), NULL);
    create(f, f->cm, "b", json_pack("{s:O}", "metadata", meta), NULL);
    create(f, f->cm, "b", J("{\"metadata\":{\"name\":\"c2\"}}"), NULL);
    json_decref(meta);
    start(f);

    del(f, node, "", "n1", NULL);
    WAIT_FOR(!exists(f, f->cm, "a", "c1") && !exists(f, f->cm, "b", "c1"));
    assert_true(exists(f, f->cm, "b", "c2"));
}

/* Pacing a workload's status: only count changes may wait. */
static void test_status_counts_only(void **state)
{
    (void)state;
    json_t *a = json_pack("{s:i, s:i, s:[{s:s}]}", "replicas", 3, "observedGeneration", 2,
                          "conditions", "type", "Available");
    json_t *b = json_pack("{s:i, s:i, s:i, s:[{s:s}]}", "replicas", 5, "readyReplicas", 1,
                          "observedGeneration", 3, "conditions", "type", "Available");
    json_t *c = json_pack("{s:i, s:i, s:[{s:s}]}", "replicas", 3, "observedGeneration", 2,
                          "conditions", "type", "Progressing");
    json_t *d = json_pack("{s:i, s:s}", "replicas", 3, "observedGeneration", "2");
    assert_true(ctrl_status_counts_only(a, b));
    assert_true(ctrl_status_counts_only(b, a));
    assert_true(ctrl_status_counts_only(a, a));
    assert_false(ctrl_status_counts_only(a, c)); /* a condition changed */
    assert_false(ctrl_status_counts_only(a, d)); /* a count became something else */
    assert_false(ctrl_status_counts_only(d, a));
    assert_false(ctrl_status_counts_only(NULL, a)); /* conditions appear */
    json_t *counts = json_pack("{s:i}", "replicas", 1);
    assert_true(ctrl_status_counts_only(NULL, counts));
    json_decref(counts);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    json_decref(d);
}

/* ctrl_may_be_owned_by reads the owner kinds from the text. */
static void test_may_be_owned_by(void **state)
{
    (void)state;
    store_backend be;
    char err[256];
    store_memory_backend(&be);
    store *st = store_open(&be, NULL, NULL, err, sizeof err);
    assert_non_null(st);
    store_txn *t = store_begin(st);
    json_t *p1 = json_pack("{s:{s:s, s:[{s:s, s:s}]}}", "metadata", "name", "a", "ownerReferences",
                           "kind", "ReplicaSet", "name", "rs");
    json_t *p2 = json_pack("{s:{s:s, s:[{s:s}, {s:s}]}}", "metadata", "name", "b",
                           "ownerReferences", "kind", "ReplicaSet", "kind", "Job");
    json_t *p3 = json_pack("{s:{s:s}}", "metadata", "name", "c");
    assert_int_equal(store_txn_put(t, "pods/n/a", p1, NULL), 0);
    assert_int_equal(store_txn_put(t, "pods/n/b", p2, NULL), 0);
    assert_int_equal(store_txn_put(t, "pods/n/c", p3, NULL), 0);
    assert_int_equal(store_commit(t), 0);
    store_obj *a = store_get(st, "pods/n/a"), *b = store_get(st, "pods/n/b"),
              *c = store_get(st, "pods/n/c");
    assert_false(ctrl_may_be_owned_by(a, "Job"));
    assert_true(ctrl_may_be_owned_by(a, "ReplicaSet"));
    assert_true(ctrl_may_be_owned_by(b, "Job"));
    assert_false(ctrl_may_be_owned_by(b, "CronJob"));
    assert_false(ctrl_may_be_owned_by(c, "Job"));
    store_obj_unref(a);
    store_obj_unref(b);
    store_obj_unref(c);
    json_decref(p1);
    json_decref(p2);
    json_decref(p3);
    store_close(st);
}

static void test_stop_null(void **state)
{
    controllers_stop(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_namespace_deletion_removes_content, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_waits_for_finalizers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_deletion_resumes_at_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_namespace_many_objects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_background, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_keeps_dependent_with_live_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_foreground, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_foreground_nonblocking, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_orphan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_dependency_circle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_dangling_at_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gc_cluster_scoped_owner, setup, teardown),
        cmocka_unit_test(test_stop_null),
        cmocka_unit_test(test_status_counts_only),
        cmocka_unit_test(test_may_be_owned_by),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
