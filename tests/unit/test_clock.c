/* test_clock.c - util/clock: monotonic time does not go back, the units
 * agree, and deadlines are normalized and as far ahead as asked. */
#include "util/clock.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static int64_t ts_ms(struct timespec ts)
{
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void test_monotonic_never_goes_back(void **state)
{
    (void)state;
    int64_t prev = clock_mono_ms();
    double prev_s = clock_mono_s();
    for (int i = 0; i < 100000; i++) {
        int64_t now = clock_mono_ms();
        double now_s = clock_mono_s();
        assert_true(now >= prev);
        assert_true(now_s >= prev_s);
        prev = now;
        prev_s = now_s;
    }
}

static void test_units_agree(void **state)
{
    (void)state;
    /* the same clock read in ms and in s: within a millisecond or two */
    int64_t ms = clock_mono_ms();
    double s = clock_mono_s();
    assert_true(s * 1000.0 >= (double)ms - 1.0);
    assert_true(s * 1000.0 <= (double)ms + 1000.0);
    /* the wall clock is after 2020-01-01 and in milliseconds */
    assert_true(clock_wall_ms() > INT64_C(1577836800000));
}

static void test_deadline(void **state)
{
    (void)state;
    const int64_t asks[] = {0, 1, 250, 999, 1000, 1001, 1999, 2500, 86400000, -5};
    for (size_t i = 0; i < sizeof asks / sizeof asks[0]; i++) {
        int64_t want = asks[i] > 0 ? asks[i] : 0;
        int64_t before = clock_mono_ms();
        struct timespec d = clock_deadline(CLOCK_MONOTONIC, asks[i]);
        int64_t after = clock_mono_ms();
        assert_true(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L);
        assert_true(ts_ms(d) >= before + want);
        assert_true(ts_ms(d) <= after + want);
    }
    struct timespec w = clock_deadline(CLOCK_REALTIME, 1500);
    assert_true(w.tv_nsec >= 0 && w.tv_nsec < 1000000000L);
    assert_true(ts_ms(w) >= clock_wall_ms() + 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monotonic_never_goes_back),
        cmocka_unit_test(test_units_agree),
        cmocka_unit_test(test_deadline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
