/* test_lease.c - leader election on a Lease (core/lease.h), as client-go's
 * leaderelection decides it: terms measured on the candidate's own clock
 * from the last change of the record, never from the holder's timestamps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/lease.h"
#include "testutil.h"

#define LEASE(holder, renew, dur, trans)                                                           \
    "{'apiVersion':'coordination.k8s.io/v1','kind':'Lease','metadata':{'name':'allot',"            \
    "'namespace':'allot-system','resourceVersion':'77'},'spec':{'holderIdentity':'" holder         \
    "','renewTime':'" renew "','leaseDurationSeconds':" dur ",'leaseTransitions':" trans           \
    ",'acquireTime':'2026-12-07T10:00:00.000000Z'}}"

static void test_create_when_absent(void **state)
{
    (void)state;
    lease_observer ob = {0};
    assert_int_equal(lease_decide(&ob, NULL, "a", 15, 1000), LEASE_CREATE);
    json_t *l = lease_write(LEASE_CREATE, NULL, "allot-system", "allot", "a", 15,
                            "2026-12-07T10:00:01.000000Z");
    json_t *want = J("{'apiVersion':'coordination.k8s.io/v1','kind':'Lease','metadata':{'name':"
                     "'allot','namespace':'allot-system'},'spec':{'holderIdentity':'a',"
                     "'leaseDurationSeconds':15,'leaseTransitions':0,"
                     "'acquireTime':'2026-12-07T10:00:01.000000Z',"
                     "'renewTime':'2026-12-07T10:00:01.000000Z'}}");
    assert_json_eq(l, want);
    json_decref(want);
    json_decref(l);
}

static void test_wait_then_take_an_expired_term(void **state)
{
    (void)state;
    lease_observer ob = {0};
    json_t *cur = J(LEASE("b", "2026-12-07T10:00:00.000000Z", "15", "3"));
    /* b's term runs 15 s from when we first saw its record, whatever its
     * renewTime says (b's clock is not ours) */
    assert_int_equal(lease_decide(&ob, cur, "a", 10, 100000), LEASE_WAIT);
    assert_int_equal(lease_decide(&ob, cur, "a", 10, 114999), LEASE_WAIT);
    assert_int_equal(lease_decide(&ob, cur, "a", 10, 115000), LEASE_ACQUIRE);
    json_t *l = lease_write(LEASE_ACQUIRE, cur, NULL, NULL, "a", 10, "2026-12-07T10:05:00.000000Z");
    json_t *spec = json_object_get(l, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), "a");
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 4);
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseDurationSeconds")), 10);
    assert_string_equal(json_string_value(json_object_get(spec, "acquireTime")),
                        "2026-12-07T10:05:00.000000Z");
    /* the precondition: the version read */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(l, "metadata"), "resourceVersion")),
        "77");
    json_decref(l);
    json_decref(cur);
}

static void test_a_renewal_restarts_the_term(void **state)
{
    (void)state;
    lease_observer ob = {0};
    json_t *t0 = J(LEASE("b", "2026-12-07T10:00:00.000000Z", "15", "3"));
    json_t *t1 = J(LEASE("b", "2026-12-07T10:00:10.000000Z", "15", "3"));
    assert_int_equal(lease_decide(&ob, t0, "a", 15, 0), LEASE_WAIT);
    assert_int_equal(lease_decide(&ob, t1, "a", 15, 10000), LEASE_WAIT);
    /* 15 s after the first sight, but only 5 s after the renewal */
    assert_int_equal(lease_decide(&ob, t1, "a", 15, 15000), LEASE_WAIT);
    assert_int_equal(lease_decide(&ob, t1, "a", 15, 25000), LEASE_ACQUIRE);
    json_decref(t0);
    json_decref(t1);
}

static void test_holder_renews_and_empty_is_free(void **state)
{
    (void)state;
    lease_observer ob = {0};
    json_t *mine = J(LEASE("a", "2026-12-07T10:00:00.000000Z", "15", "2"));
    assert_int_equal(lease_decide(&ob, mine, "a", 15, 0), LEASE_RENEW);
    json_t *l = lease_write(LEASE_RENEW, mine, NULL, NULL, "a", 15, "2026-12-07T10:00:02.000000Z");
    json_t *spec = json_object_get(l, "spec");
    /* a renewal keeps the term's start and its count */
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 2);
    assert_string_equal(json_string_value(json_object_get(spec, "acquireTime")),
                        "2026-12-07T10:00:00.000000Z");
    assert_string_equal(json_string_value(json_object_get(spec, "renewTime")),
                        "2026-12-07T10:00:02.000000Z");
    json_decref(l);
    /* a released Lease (no holder) is taken at once, without a transition
     * counted against a holder */
    lease_observer ob2 = {0};
    json_t *freed = J(LEASE("", "2026-12-07T10:00:00.000000Z", "15", "2"));
    assert_int_equal(lease_decide(&ob2, freed, "a", 15, 0), LEASE_ACQUIRE);
    l = lease_write(LEASE_ACQUIRE, freed, NULL, NULL, "a", 15, "2026-12-07T10:00:03.000000Z");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(l, "spec"), "leaseTransitions")), 2);
    json_decref(l);
    json_decref(freed);
    json_decref(mine);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_when_absent),
        cmocka_unit_test(test_wait_then_take_an_expired_term),
        cmocka_unit_test(test_a_renewal_restarts_the_term),
        cmocka_unit_test(test_holder_renews_and_empty_is_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
