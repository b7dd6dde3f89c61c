/* test_inflight.c - server/inflight.h: a user never holds more seats than
 * the limit, one user's seats are not another's, and seats come back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdatomic.h>
#include <pthread.h>

#include <cmocka.h>

#include "server/inflight.h"

static void test_limit_per_user(void **state)
{
    (void)state;
    inflight *f = inflight_new(3);
    assert_non_null(f);
    for (int i = 0; i < 3; i++)
        assert_true(inflight_enter(f, "alice"));
    assert_false(inflight_enter(f, "alice"));
    assert_int_equal(inflight_count(f, "alice"), 3);
    /* bob, and a name that hashes anywhere, have their own seats */
    assert_true(inflight_enter(f, "bob"));
    assert_true(inflight_enter(f, "system:serviceaccount:tenant-a:alice"));
    inflight_leave(f, "alice");
    assert_true(inflight_enter(f, "alice"));
    for (int i = 0; i < 3; i++)
        inflight_leave(f, "alice");
    assert_int_equal(inflight_count(f, "alice"), 0);
    inflight_leave(f, "alice"); /* (one too many: ignored) */
    assert_int_equal(inflight_count(f, "alice"), 0);
    inflight_leave(f, "bob");
    inflight_leave(f, "system:serviceaccount:tenant-a:alice");
    inflight_free(f);
}

enum { THREADS = 8, ROUNDS = 20000, LIMIT = 3 };
static atomic_int held[2], over, refused;

typedef struct arg {
    inflight *f;
    const char *name;
    int who;
} arg;

static void *worker(void *p)
{
    arg *a = p;
    for (int i = 0; i < ROUNDS; i++) {
        if (!inflight_enter(a->f, a->name)) {
            atomic_fetch_add(&refused, 1);
            continue;
        }
        if (atomic_fetch_add(&held[a->who], 1) + 1 > LIMIT) atomic_fetch_add(&over, 1);
        atomic_fetch_sub(&held[a->who], 1);
        inflight_leave(a->f, a->name);
    }
    return NULL;
}

/* Property: under contention, the seats held by one user never exceed the
 * limit, and every seat comes back. */
static void test_contention(void **state)
{
    (void)state;
    inflight *f = inflight_new(LIMIT);
    pthread_t th[THREADS];
    arg a[THREADS];
    for (int i = 0; i < THREADS; i++) {
        a[i] = (arg){f, i % 2 ? "alice" : "bob", i % 2};
        assert_int_equal(pthread_create(&th[i], NULL, worker, &a[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&over), 0);
    assert_int_equal(inflight_count(f, "alice"), 0);
    assert_int_equal(inflight_count(f, "bob"), 0);
    print_message("refused %d of %d\n", atomic_load(&refused), THREADS * ROUNDS);
    inflight_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limit_per_user),
        cmocka_unit_test(test_contention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
