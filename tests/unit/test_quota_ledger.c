/* test_quota_ledger.c - the quota ledger on a memory store: charges commit
 * with their transaction or not at all, the stored status follows the ledger
 * when synced, and a quota rewritten by someone else is adopted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "registry/admission.h"
#include "registry/quota_admission.h"
#include "registry/quota_ledger.h"
#include "registry/registry.h"
#include "testutil.h"
#include "teststore.h"

#define QKEY "resourcequotas/a/q"

static void pod(store *st, const char *name, const char *cpu)
{
    char obj[512];
    snprintf(obj, sizeof obj,
             "{'metadata':{'name':'%s'},'spec':{'containers':[{'name':'c','image':'x',"
             "'resources':{'requests':{'cpu':'%s'}}}]}}",
             name, cpu);
    create_core(st, "pods", "a", obj);
}

/* status.used[name] of the stored quota. */
static char *stored_used(store *st, const char *name)
{
    store_obj *o = store_get(st, QKEY);
    assert_non_null(o);
    json_t *q = store_obj_parse(o);
    const char *v = json_string_value(
        json_object_get(json_object_get(json_object_get(q, "status"), "used"), name));
    char *out = strdup(v ? v : "");
    json_decref(q);
    store_obj_unref(o);
    return out;
}

/* The ledger's usage[name] of the stored quota, and the revision it is exact at. */
static char *ledger_used(store *st, const char *name, int64_t *rv)
{
    store_obj *o = store_get(st, QKEY);
    assert_non_null(o);
    int64_t at = 0;
    rlist *u = quota_ledger_read(o, &at);
    assert_non_null(u);
    const qty *q = rl_get(u, name);
    char buf[QTY_STR_MAX] = "";
    if (q) qty_format_str(q, buf, sizeof buf);
    rl_free(u);
    store_obj_unref(o);
    if (rv) *rv = at;
    return strdup(buf);
}

static void expect_used(store *st, const char *ledger, const char *stored)
{
    char *l = ledger_used(st, "requests.cpu", NULL), *s = stored_used(st, "requests.cpu");
    assert_string_equal(l, ledger);
    assert_string_equal(s, stored);
    free(l);
    free(s);
}

static store *setup_ns(void)
{
    store *st = open_store();
    create_core(st, "namespaces", "", "{'metadata':{'name':'a'}}");
    create_core(st, "resourcequotas", "a",
                "{'metadata':{'name':'q'},'spec':{'hard':{'requests.cpu':'2','pods':'10'}}}");
    return st;
}

static void teardown_ns(store *st)
{
    quota_ledger_clear();
    store_close(st);
}

/* A charge is in the ledger at once; the stored status follows on sync, and
 * each version written from the ledger is exact at its own revision. */
static void test_charge_then_sync(void **state)
{
    (void)state;
    store *st = setup_ns();
    expect_used(st, "0", "0");
    pod(st, "p1", "500m");
    int64_t rv = 0;
    char *l = ledger_used(st, "requests.cpu", &rv);
    assert_string_equal(l, "500m");
    free(l);
    assert_int_equal(rv, store_revision(st)); /* the pod's transaction */
    expect_used(st, "500m", "0");             /* stored trails until a sync */
    quota_ledger_stats s;
    quota_ledger_get_stats(&s);
    assert_int_equal(s.dirty, 1);
    assert_int_equal(quota_ledger_sync(st), 0);
    expect_used(st, "500m", "500m");
    quota_ledger_get_stats(&s);
    assert_int_equal(s.dirty, 0);
    assert_int_equal(s.versions, 1);
    assert_int_equal(quota_ledger_sync(st), 0); /* nothing to do: no new version */
    quota_ledger_get_stats(&s);
    assert_int_equal(s.versions, 1);
    pod(st, "p2", "1");
    pod(st, "p3", "500m");
    expect_used(st, "2", "500m");
    teardown_ns(st);
}

/* The invariant holds between syncs too: the ledger denies what the stored
 * status alone would have let through. */
static void test_ledger_enforces_before_sync(void **state)
{
    (void)state;
    store *st = setup_ns();
    pod(st, "p1", "1500m");
    const api_kind *k = api_kind_find("", "v1", "pods");
    json_t *o = J("{'metadata':{'name':'p2'},'spec':{'containers':[{'name':'c','image':'x',"
                  "'resources':{'requests':{'cpu':'600m'}}}]}}"),
           *out = NULL;
    api_err e;
    api_err_init(&e);
    assert_int_not_equal(reg_create(st, k, "a", o, false, &out, &e), 0);
    assert_int_equal(e.code, API_FORBIDDEN);
    assert_non_null(strstr(e.message, "exceeded quota: q, requested: requests.cpu=600m, "
                                      "used: requests.cpu=1500m, limited: requests.cpu=2"));
    api_err_clear(&e);
    json_decref(o);
    expect_used(st, "1500m", "0");
    teardown_ns(st);
}

/* Stage `used` as quota q's usage in t; `before` (if not NULL): the
 * requests.cpu t sees before the charge. */
static void charge_in(store_txn *t, const char *used, const char *before)
{
    api_err e;
    api_err_init(&e);
    ql_view *v = NULL;
    size_t n = 0;
    assert_int_equal(quota_ledger_load(t, "a", &v, &n, &e), 0);
    assert_int_equal(n, 1);
    if (before) {
        char buf[QTY_STR_MAX];
        qty_format_str(rl_get(v[0].used, "requests.cpu"), buf, sizeof buf);
        assert_string_equal(buf, before);
    }
    assert_int_equal(quota_ledger_set(t, &v[0], L(used), &e), 0);
    free(v);
}

/* The requests.cpu usage of quota q as transaction t sees it. */
static void expect_txn_cpu(store_txn *t, const char *want)
{
    store_obj *o = store_txn_get(t, QKEY);
    rlist *in = quota_ledger_read_txn(t, o);
    char buf[QTY_STR_MAX];
    qty_format_str(rl_get(in, "requests.cpu"), buf, sizeof buf);
    assert_string_equal(buf, want);
    rl_free(in);
    store_obj_unref(o);
}

/* Write quota q again in t, as a client would, with status.used requests.cpu
 * set to `cpu`. */
static void rewrite_cpu(store_txn *t, const char *cpu)
{
    store_obj *o = store_txn_get(t, QKEY);
    json_t *q = store_obj_parse(o);
    store_obj_unref(o);
    json_object_set_new(json_object_get(json_object_get(q, "status"), "used"), "requests.cpu",
                        json_string(cpu));
    assert_int_equal(store_txn_put(t, QKEY, q, NULL), 0);
    json_decref(q);
}

/* Staged charges are dropped with the transaction that made them. */
static void test_abort_drops_charges(void **state)
{
    (void)state;
    store *st = setup_ns();
    pod(st, "p1", "500m");
    store_txn *t = store_begin(st);
    charge_in(t, "requests.cpu=2,pods=2", "500m");
    expect_txn_cpu(t, "2"); /* inside the transaction its own charge is visible... */
    store_abort(t);
    expect_used(st, "500m", "0"); /* ...and gone with it. */
    /* A transaction that writes nothing commits nothing either. */
    t = store_begin(st);
    charge_in(t, "requests.cpu=2,pods=2", NULL);
    assert_int_equal(store_commit(t), 0);
    expect_used(st, "500m", "0");
    teardown_ns(st);
}

/* A quota version written by someone else carries a recount: the ledger
 * adopts it, and a dirty entry it replaces is not written over it. */
static void test_rewritten_quota_is_adopted(void **state)
{
    (void)state;
    store *st = setup_ns();
    pod(st, "p1", "500m");
    assert_int_equal(quota_ledger_sync(st), 0);
    store_txn *t = store_begin(st);
    rewrite_cpu(t, "700m"); /* pretend drift in the stored object */
    assert_int_equal(store_commit(t), 0);
    expect_used(st, "700m", "700m"); /* adopted as stored */
    pod(st, "p2", "100m");
    expect_used(st, "800m", "700m");
    teardown_ns(st);
}

/* Something for a transaction to write, so that it commits. */
static void put_configmap(store_txn *t, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "configmaps/a/%s", name);
    json_t *cm = json_pack("{s:s,s:s,s:{s:s,s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                           "metadata", "name", name, "namespace", "a");
    assert_int_equal(store_txn_put(t, key, cm, NULL), 0);
    json_decref(cm);
}

/* Two charges of one quota in one transaction: the second is a copy of the
 * staged first; the commit publishes the last. */
static void test_two_charges_one_txn(void **state)
{
    (void)state;
    store *st = setup_ns();
    pod(st, "p1", "500m");
    store_txn *t = store_begin(st);
    charge_in(t, "requests.cpu=1,pods=2", "500m");
    charge_in(t, "requests.cpu=1500m,pods=3", "1"); /* sees the staged charge */
    put_configmap(t, "x");
    assert_int_equal(store_commit(t), 0);
    expect_used(st, "1500m", "0");
    quota_ledger_stats s;
    quota_ledger_get_stats(&s);
    assert_int_equal(s.quotas, 1);
    assert_int_equal(s.dirty, 1);
    assert_int_equal(quota_ledger_sync(st), 0);
    expect_used(st, "1500m", "1500m");
    teardown_ns(st);
}

/* A charge, then the quota rewritten in the same transaction: the rewrite's
 * status is adopted, and the entry that replaces the charged one keeps a key
 * of its own (the published entry it borrowed from is freed). */
static void test_charge_then_rewrite_in_txn(void **state)
{
    (void)state;
    store *st = setup_ns();
    pod(st, "p1", "500m");
    store_txn *t = store_begin(st);
    charge_in(t, "requests.cpu=1,pods=2", "500m");
    rewrite_cpu(t, "900m");
    expect_txn_cpu(t, "900m");
    assert_int_equal(store_commit(t), 0);
    expect_used(st, "900m", "900m");
    pod(st, "p2", "100m"); /* and it is charged in place from then on */
    expect_used(st, "1", "900m");
    teardown_ns(st);
}

/* A deleted quota leaves the ledger with its transaction. */
static void test_delete_forgets(void **state)
{
    (void)state;
    store *st = setup_ns();
    pod(st, "p1", "500m");
    quota_ledger_stats s;
    quota_ledger_get_stats(&s);
    assert_int_equal(s.quotas, 1);
    const api_kind *k = api_kind_find("", "v1", "resourcequotas");
    api_err e;
    api_err_init(&e);
    json_t *out = NULL;
    bool gone = false;
    reg_delete_opts opts = {.grace_seconds = -1};
    assert_int_equal(reg_delete(st, k, "a", "q", &opts, &out, &gone, &e), 0);
    assert_true(gone);
    json_decref(out);
    quota_ledger_get_stats(&s);
    assert_int_equal(s.quotas, 0);
    assert_int_equal(s.dirty, 0);
    assert_int_equal(quota_ledger_sync(st), 0);
    teardown_ns(st);
}

/* The flusher writes a charged quota's status by itself, as a watched version,
 * and quota_ledger_stop writes what is still pending. */
static void test_flusher_writes_behind(void **state)
{
    (void)state;
    store *st = setup_ns();
    bool expired = false;
    store_watch *w = store_watch_open(st, "resourcequotas/", store_revision(st), &expired);
    assert_non_null(w);
    assert_int_equal(quota_ledger_start(st, 10), 0);
    pod(st, "p1", "500m");
    /* Bounded wait for the version: the watch wakes us, no sleeping. */
    time_t end = time(NULL) + 20;
    bool seen = false;
    while (!seen && time(NULL) <= end) {
        store_event ev;
        if (store_watch_next(w, &ev, 200) != 1) continue;
        json_t *q = store_obj_parse(ev.obj);
        const char *cpu = json_string_value(
            json_object_get(json_object_get(json_object_get(q, "status"), "used"), "requests.cpu"));
        seen = cpu && !strcmp(cpu, "500m");
        json_decref(q);
        store_obj_unref(ev.obj);
        store_obj_unref(ev.prev);
    }
    store_watch_close(w);
    assert_true(seen);
    pod(st, "p2", "1");
    quota_ledger_stop();
    expect_used(st, "1500m", "1500m");
    teardown_ns(st);
}

int main(void)
{
    if (admission_register_defaults() != 0) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_charge_then_sync),
        cmocka_unit_test(test_ledger_enforces_before_sync),
        cmocka_unit_test(test_abort_drops_charges),
        cmocka_unit_test(test_rewritten_quota_is_adopted),
        cmocka_unit_test(test_two_charges_one_txn),
        cmocka_unit_test(test_charge_then_rewrite_in_txn),
        cmocka_unit_test(test_delete_forgets),
        cmocka_unit_test(test_flusher_writes_behind),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    quota_admission_cleanup();
    return rc;
}
