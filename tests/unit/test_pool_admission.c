/* test_pool_admission.c - ResourcePools decided in the write's transaction
 * (registry/pool_admission.c), through the registry on a memory store with
 * allotd's admission plugins: a claim binds or waits in its own write, the
 * namespace's capsule-pool-<pool> quota and the pool's status change with
 * it, nothing in use can be deleted or shrunk, freed capacity goes to the
 * waiting claims at once, and a refused or dry-run write changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/patch.h"
#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "registry/quota_ledger.h"
#include "teststore.h"

#define G "capsule.clastix.io", "v1beta2"

#define kind test_kind /* teststore.h */

static int create(store *st, const api_kind *k, const char *ns, const char *obj, bool dry,
                  char *msg, size_t n)
{
    json_t *o = J(obj), *out = NULL;
    api_err e;
    api_err_init(&e);
    int rc = reg_create(st, k, ns, o, dry, &out, &e);
    snprintf(msg, n, "%s", rc == 0 ? "" : e.message);
    int code = rc == 0 ? 201 : api_errcode_http(e.code);
    json_decref(out);
    json_decref(o);
    api_err_clear(&e);
    return code;
}

static int update(store *st, const api_kind *k, const char *ns, const char *name, const char *sub,
                  const char *p, char *msg, size_t n)
{
    return reg_merge(st, k, ns, name, sub, p, false, msg, n);
}

static int del(store *st, const api_kind *k, const char *ns, const char *name, char *msg, size_t n)
{
    reg_delete_opts o = {.grace_seconds = 0};
    json_t *out = NULL;
    bool gone = false;
    api_err e;
    api_err_init(&e);
    int rc = reg_delete(st, k, ns, name, &o, &out, &gone, &e);
    snprintf(msg, n, "%s", rc == 0 ? "" : e.message);
    int code = rc == 0 ? 200 : api_errcode_http(e.code);
    json_decref(out);
    api_err_clear(&e);
    return code;
}

/* A string at a dotted path of stored object `key` ("" when absent). */
static void at(store *st, const char *key, const char *path, char *buf, size_t n)
{
    /* as a client reads it: statuses kept ahead of the store rendered */
    store_obj *o = store_get(st, key);
    const api_kind *k = o ? api_kind_for_key(key) : NULL;
    if (k) reg_read_views(st, k, &o, 1);
    json_t *obj = o ? store_obj_parse(o) : NULL;
    const json_t *v = obj ? api_json_path(obj, path) : NULL;
    char *s = v && !json_is_string(v)
                  ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY)
                  : NULL;
    snprintf(buf, n, "%s", s ? s : json_is_string(v) ? json_string_value(v) : "");
    free(s);
    json_decref(obj);
    if (o) store_obj_unref(o);
}

static void expect_at(store *st, const char *key, const char *path, const char *want)
{
    char got[2048];
    at(st, key, path, got, sizeof got);
    if (strcmp(got, want) != 0) fail_msg("%s %s: got [%s], want [%s]", key, path, got, want);
}

/* The claim's condition `type` as "status/reason". */
static void expect_cond(store *st, const char *ns, const char *name, const char *type,
                        const char *want)
{
    char key[256], conds[4096], got[256] = "";
    snprintf(key, sizeof key, "resourcepoolclaims.capsule.clastix.io/%s/%s", ns, name);
    at(st, key, "status.conditions", conds, sizeof conds);
    json_t *a = json_loads(conds, 0, NULL);
    size_t i;
    json_t *c;
    json_array_foreach(a, i, c) if (!strcmp(json_string_value(json_object_get(c, "type")), type))
        snprintf(got, sizeof got, "%s/%s", json_string_value(json_object_get(c, "status")),
                 json_string_value(json_object_get(c, "reason")));
    json_decref(a);
    if (strcmp(got, want) != 0) fail_msg("%s %s: got [%s], want [%s]", key, type, got, want);
}

/* The books of quota ns/q: the ledger equals a recount of the store. */
static void expect_books(store *st, const char *ns, const char *q)
{
    char k[256];
    snprintf(k, sizeof k, "resourcequotas/%s/%s", ns, q);
    store_txn *t = store_begin(st);
    store_obj *o = store_txn_get(t, k);
    assert_non_null(o);
    json_t *quota = store_obj_parse(o), *count = NULL;
    assert_int_equal(quota_recount_in_txn(t, quota, &count), 0);
    rlist *held = quota_ledger_read_txn(t, o), *want = rl_new();
    assert_int_equal(rl_from_json(count, want, NULL), 0);
    assert_true(rl_equal(held, want));
    rl_free(held);
    rl_free(want);
    json_decref(count);
    json_decref(quota);
    store_obj_unref(o);
    store_abort(t);
}

#define POOL(name, hard, extra)                                                                    \
    "{'metadata':{'name':'" name "'},'spec':{'quota':{'hard':" hard                                \
    "},'selectors':[{'matchLabels':{'team':'a'}}]" extra "}}"
#define CLAIM(name, pool, claim)                                                                   \
    "{'metadata':{'name':'" name "'},'spec':{'pool':'" pool "','claim':" claim "}}"
#define RQ(ns) "resourcequotas/" ns "/capsule-pool-p"
#define PKEY "resourcepools.capsule.clastix.io//p"

static store *setup(void)
{
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'n1','labels':{'team':'a'}}}");
    create_core(st, "namespaces", "", "{'metadata':{'name':'n2','labels':{'team':'a'}}}");
    create_core(st, "namespaces", "", "{'metadata':{'name':'other'}}");
    return st;
}

static void test_bind_queue_and_books(void **state)
{
    (void)state;
    store *st = setup();
    const api_kind *pools = kind(G, "resourcepools"), *claims = kind(G, "resourcepoolclaims");
    char msg[sizeof((api_err *)0)->message];
    assert_int_equal(
        create(st, pools, "", POOL("p", "{'requests.cpu':'2'}", ""), false, msg, sizeof msg), 201);
    expect_at(st, RQ("n1"), "spec.hard", "{}");
    expect_at(st, PKEY, "status.namespaces", "[\"n1\",\"n2\"]");
    assert_int_equal(
        create(st, claims, "n1", CLAIM("c1", "p", "{'requests.cpu':'1'}"), false, msg, sizeof msg),
        201);
    expect_cond(st, "n1", "c1", "Exhausted", "False/NoExhaustions");
    expect_cond(st, "n1", "c1", "Bound", "False/Unused");
    expect_at(st, RQ("n1"), "spec.hard", "{\"requests.cpu\":\"1\"}");
    expect_at(st, PKEY, "status.allocation.available", "{\"requests.cpu\":\"1\"}");
    /* too big: waits, with Capsule's message, and charges nothing */
    assert_int_equal(
        create(st, claims, "n2", CLAIM("c2", "p", "{'requests.cpu':'2'}"), false, msg, sizeof msg),
        201);
    expect_cond(st, "n2", "c2", "Exhausted", "True/PoolExhausted");
    expect_at(st, RQ("n2"), "spec.hard", "{}");
    expect_at(st, PKEY, "status.exhaustions",
              "{\"requests.cpu\":{\"available\":\"1\",\"requesting\":\"2\"}}");
    /* a pod uses the claim: it cannot be deleted or changed */
    create_core(
        st, "pods", "n1",
        "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'x','resources':"
        "{'requests':{'cpu':'500m'}}}]}}");
    expect_books(st, "n1", "capsule-pool-p");
    assert_int_equal(del(st, claims, "n1", "c1", msg, sizeof msg), 403);
    assert_string_equal(msg, "resourcepoolclaims.capsule.clastix.io \"c1\" is forbidden: cannot "
                             "delete the pool while claim is used in resourcepool p");
    assert_int_equal(update(st, claims, "n1", "c1", "", "{'spec':{'claim':{'requests.cpu':'2'}}}",
                            msg, sizeof msg),
                     403);
    /* the pool may not drop below what is claimed; growing it binds c2 */
    assert_int_equal(update(st, pools, "", "p", "",
                            "{'spec':{'quota':{'hard':{'requests.cpu':'500m'}}}}", msg, sizeof msg),
                     403);
    assert_string_equal(msg, "resourcepools.capsule.clastix.io \"p\" is forbidden: can not reduce "
                             "requests.cpu usage to 500m because quantity 1 is claimed . Remove "
                             "corresponding claims or keep the resources in the pool");
    assert_int_equal(update(st, pools, "", "p", "",
                            "{'spec':{'quota':{'hard':{'requests.cpu':'3'}}}}", msg, sizeof msg),
                     200);
    expect_cond(st, "n2", "c2", "Exhausted", "False/NoExhaustions");
    expect_at(st, RQ("n2"), "spec.hard", "{\"requests.cpu\":\"2\"}");
    expect_at(st, PKEY, "status.allocation.available", "{\"requests.cpu\":\"0\"}");
    /* once the pod is gone, the claim goes, and a waiting claim takes its place
     * in the same write */
    assert_int_equal(
        create(st, claims, "n2", CLAIM("c3", "p", "{'requests.cpu':'1'}"), false, msg, sizeof msg),
        201);
    expect_cond(st, "n2", "c3", "Exhausted", "True/PoolExhausted");
    assert_int_equal(del(st, kind("", "v1", "pods"), "n1", "p", msg, sizeof msg), 200);
    assert_int_equal(del(st, claims, "n1", "c1", msg, sizeof msg), 200);
    expect_cond(st, "n2", "c3", "Exhausted", "False/NoExhaustions");
    expect_at(st, RQ("n1"), "spec.hard", "{}");
    expect_at(st, RQ("n2"), "spec.hard", "{\"requests.cpu\":\"3\"}");
    expect_books(st, "n2", "capsule-pool-p");
    store_close(st);
}

static void test_refusals_change_nothing(void **state)
{
    (void)state;
    store *st = setup();
    const api_kind *pools = kind(G, "resourcepools"), *claims = kind(G, "resourcepoolclaims");
    char msg[sizeof((api_err *)0)->message];
    assert_int_equal(
        create(st, pools, "", POOL("p", "{'requests.cpu':'2'}", ""), false, msg, sizeof msg), 201);
    int64_t rev = store_revision(st);
    /* a claim for what the pool does not hold */
    assert_int_equal(create(st, claims, "n1", CLAIM("c", "p", "{'requests.memory':'1Gi'}"), false,
                            msg, sizeof msg),
                     403);
    assert_string_equal(msg, "resourcepoolclaims.capsule.clastix.io \"c\" is forbidden: resource "
                             "requests.memory is not available in pool p");
    /* a dry run decides and writes nothing */
    assert_int_equal(
        create(st, claims, "n1", CLAIM("c", "p", "{'requests.cpu':'1'}"), true, msg, sizeof msg),
        201);
    assert_int_equal(store_revision(st), rev);
    /* the books of pools and claims are allot's: no client writes a status */
    assert_int_equal(
        create(st, claims, "n1", CLAIM("c", "p", "{'requests.cpu':'1'}"), false, msg, sizeof msg),
        201);
    rev = store_revision(st);
    assert_int_equal(update(st, claims, "n1", "c", "status",
                            "{'status':{'conditions':[{'type':'Exhausted','status':'False'}]}}",
                            msg, sizeof msg),
                     403);
    assert_int_equal(
        update(st, pools, "", "p", "status", "{'status':{'claimCount':0}}", msg, sizeof msg), 403);
    assert_int_equal(store_revision(st), rev);
    /* a claim in a namespace the pool does not select waits, unbound */
    assert_int_equal(create(st, claims, "other", CLAIM("c", "p", "{'requests.cpu':'1'}"), false,
                            msg, sizeof msg),
                     201);
    expect_cond(st, "other", "c", "Ready", "False/Failed");
    expect_at(st, PKEY, "status.allocation.used", "{\"requests.cpu\":\"1\"}");
    store_close(st);
}

static void test_claim_before_pool_and_pool_delete(void **state)
{
    (void)state;
    store *st = setup();
    const api_kind *pools = kind(G, "resourcepools"), *claims = kind(G, "resourcepoolclaims");
    char msg[sizeof((api_err *)0)->message];
    assert_int_equal(
        create(st, claims, "n1", CLAIM("c", "p", "{'requests.cpu':'1'}"), false, msg, sizeof msg),
        201);
    expect_cond(st, "n1", "c", "Ready", "False/Failed");
    assert_int_equal(create(st, pools, "",
                            POOL("p", "{'requests.cpu':'2'}", ",'defaults':{'pods':'3'}"), false,
                            msg, sizeof msg),
                     201);
    expect_cond(st, "n1", "c", "Exhausted", "False/NoExhaustions");
    expect_at(st, RQ("n1"), "spec.hard", "{\"pods\":\"3\",\"requests.cpu\":\"1\"}");
    expect_at(st, RQ("n2"), "spec.hard", "{\"pods\":\"3\"}");
    assert_int_equal(del(st, pools, "", "p", msg, sizeof msg), 200);
    expect_at(st, RQ("n1"), "metadata.name", "");
    expect_at(st, RQ("n2"), "metadata.name", "");
    expect_cond(st, "n1", "c", "Ready", "False/Failed");
    /* auto-assign: a claim without a pool goes to one that can take it */
    assert_int_equal(
        create(st, pools, "", POOL("p", "{'requests.cpu':'2'}", ""), false, msg, sizeof msg), 201);
    assert_int_equal(
        create(st, claims, "n2", CLAIM("auto", "", "{'requests.cpu':'1'}"), false, msg, sizeof msg),
        201);
    expect_at(st, "resourcepoolclaims.capsule.clastix.io/n2/auto", "spec.pool", "p");
    expect_cond(st, "n2", "auto", "Exhausted", "False/NoExhaustions");
    store_close(st);
}

/* Namespaces enter and leave a pool with their labels, in the relabel's own
 * write; one whose claim is in use cannot leave. */
static void test_namespace_relabel(void **state)
{
    (void)state;
    store *st = setup();
    const api_kind *pools = kind(G, "resourcepools"), *claims = kind(G, "resourcepoolclaims");
    const api_kind *nss = kind("", "v1", "namespaces");
    char msg[sizeof((api_err *)0)->message];
    assert_int_equal(
        create(st, pools, "", POOL("p", "{'requests.cpu':'2'}", ""), false, msg, sizeof msg), 201);
    assert_int_equal(
        create(st, claims, "n2", CLAIM("c", "p", "{'requests.cpu':'1'}"), false, msg, sizeof msg),
        201);
    create_core(
        st, "pods", "n2",
        "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c','image':'x','resources':"
        "{'requests':{'cpu':'500m'}}}]}}");
    assert_int_equal(
        update(st, nss, "", "n2", "", "{'metadata':{'labels':{'team':'b'}}}", msg, sizeof msg),
        403);
    assert_string_equal(msg,
                        "namespaces \"n2\" is forbidden: namespace cannot leave resourcepool p "
                        "while claim c is in use");
    assert_int_equal(del(st, kind("", "v1", "pods"), "n2", "p", msg, sizeof msg), 200);
    assert_int_equal(
        update(st, nss, "", "n2", "", "{'metadata':{'labels':{'team':'b'}}}", msg, sizeof msg),
        200);
    expect_at(st, RQ("n2"), "metadata.name", "");
    expect_cond(st, "n2", "c", "Ready", "False/Failed");
    expect_at(st, PKEY, "status.namespaces", "[\"n1\"]");
    expect_at(st, PKEY, "status.allocation.used", "{\"requests.cpu\":\"0\"}");
    /* back in: the claim binds again; a new namespace gets its quota */
    assert_int_equal(
        update(st, nss, "", "n2", "", "{'metadata':{'labels':{'team':'a'}}}", msg, sizeof msg),
        200);
    expect_cond(st, "n2", "c", "Exhausted", "False/NoExhaustions");
    expect_at(st, RQ("n2"), "spec.hard", "{\"requests.cpu\":\"1\"}");
    create_core(st, "namespaces", "", "{'metadata':{'name':'n3','labels':{'team':'a'}}}");
    expect_at(st, RQ("n3"), "spec.hard", "{}");
    expect_at(st, PKEY, "status.namespaces", "[\"n1\",\"n2\",\"n3\"]");
    store_close(st);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_queue_and_books),
        cmocka_unit_test(test_refusals_change_nothing),
        cmocka_unit_test(test_claim_before_pool_and_pool_delete),
        cmocka_unit_test(test_namespace_relabel),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    quota_admission_cleanup();
    return rc;
}
