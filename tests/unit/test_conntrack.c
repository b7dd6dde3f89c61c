/* test_conntrack.c - server/conntrack.h: over a bound the OLDEST waiting
 * connection gives way, never the new one (idle connections from an address
 * cannot lock out its next client); deadlines hand back the oldest first;
 * a connection that presented a request leaves the books. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "server/conntrack.h"

static void test_oldest_of_address_gives_way(void **state)
{
    (void)state;
    conntrack *t = conntrack_new(3, 100, 10);
    ct_entry e[6] = {{0}};
    for (int i = 0; i < 3; i++)
        assert_null(conntrack_add(t, &e[i], "127.0.0.1", i));
    /* a fourth from the same address: the first gives way */
    assert_ptr_equal(conntrack_add(t, &e[3], "127.0.0.1", 3), &e[0]);
    assert_true(e[0].evicted);
    assert_false(e[3].evicted);
    assert_int_equal(conntrack_waiting_from(t, "127.0.0.1"), 3);
    /* another address is not affected */
    assert_null(conntrack_add(t, &e[4], "10.0.0.1", 4));
    assert_int_equal(conntrack_waiting(t), 4);
    /* the evicted one closing, then the new one presenting its request */
    conntrack_remove(t, &e[0]);
    conntrack_remove(t, &e[3]);
    conntrack_remove(t, &e[3]); /* (idempotent) */
    assert_int_equal(conntrack_waiting_from(t, "127.0.0.1"), 2);
    /* the next over the bound is the oldest still waiting: e[1] */
    assert_null(conntrack_add(t, &e[5], "127.0.0.1", 5));
    ct_entry x = {0};
    assert_ptr_equal(conntrack_add(t, &x, "127.0.0.1", 6), &e[1]);
    conntrack_free(t);
}

static void test_total_bound(void **state)
{
    (void)state;
    conntrack *t = conntrack_new(10, 2, 10);
    ct_entry e[3] = {{0}};
    assert_null(conntrack_add(t, &e[0], "a", 0));
    assert_null(conntrack_add(t, &e[1], "b", 1));
    assert_ptr_equal(conntrack_add(t, &e[2], "c", 2), &e[0]);
    assert_int_equal(conntrack_waiting(t), 2);
    assert_int_equal(conntrack_waiting_from(t, "a"), 0);
    conntrack_free(t);
}

static void test_deadlines(void **state)
{
    (void)state;
    conntrack *t = conntrack_new(10, 10, 10);
    ct_entry e[3] = {{0}};
    double at;
    assert_false(conntrack_next_deadline(t, &at));
    conntrack_add(t, &e[0], "a", 1);
    conntrack_add(t, &e[1], "a", 2);
    conntrack_add(t, &e[2], "b", 5);
    assert_true(conntrack_next_deadline(t, &at));
    assert_true(at == 11);
    assert_null(conntrack_expired(t, 10.5));
    /* e[1] presented its request: only e[0] expires at 12 */
    conntrack_remove(t, &e[1]);
    assert_ptr_equal(conntrack_expired(t, 12), &e[0]);
    assert_null(conntrack_expired(t, 12));
    assert_true(conntrack_next_deadline(t, &at) && at == 15);
    assert_ptr_equal(conntrack_expired(t, 15), &e[2]);
    assert_false(conntrack_next_deadline(t, &at));
    assert_int_equal(conntrack_waiting(t), 0);
    conntrack_free(t);
}

/* 1,100 idle connections from one address, then a real client: the client
 * is never the one that gives way, and at most the bound stay waiting. */
static void test_idle_flood(void **state)
{
    (void)state;
    enum { N = 1100, BOUND = 256 };
    conntrack *t = conntrack_new(BOUND, 4096, 10);
    static ct_entry idle[N];
    size_t evicted = 0;
    for (int i = 0; i < N; i++) {
        ct_entry *out = conntrack_add(t, &idle[i], "127.0.0.1", i * 0.001);
        if (out) {
            assert_true(out >= idle && out < idle + i); /* an older one */
            conntrack_remove(t, out);                   /* (shut down, closed) */
            evicted++;
        }
    }
    assert_int_equal(evicted, N - BOUND);
    ct_entry client = {0};
    ct_entry *out = conntrack_add(t, &client, "127.0.0.1", 2);
    assert_non_null(out);
    assert_ptr_not_equal(out, &client);
    assert_false(client.evicted);
    conntrack_remove(t, out);
    conntrack_remove(t, &client); /* it presented its request */
    assert_int_equal(conntrack_waiting_from(t, "127.0.0.1"), BOUND - 1);
    conntrack_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oldest_of_address_gives_way),
        cmocka_unit_test(test_total_bound),
        cmocka_unit_test(test_deadlines),
        cmocka_unit_test(test_idle_flood),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
