/* test_idxmap.c - core/idxmap.h used as cq_books uses it: an array of
 * elements kept dense (a removal moves the last element into the hole),
 * indexed by the string each holds; checked after every step against a
 * linear search of the array, through growth, tombstones and hash tags
 * that collide. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/idxmap.h"
#include "core/strmap.h"

#define NKEYS 3000

static char keys[NKEYS][48];
static const char *arr[NKEYS]; /* the dense array: element = its key */
static size_t n;

static bool eq(const void *ctx, uint32_t pos, const void *key)
{
    (void)ctx;
    return pos < n && strcmp(arr[pos], key) == 0;
}

/* A hash whose 32-bit tag collides for every key with the same i % 5: the
 * index must fall back to comparing keys. */
static uint64_t weak_hash(const char *k)
{
    return (uint64_t)(strmap_hash(k) % 5);
}

static int64_t linear(const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(arr[i], k)) return (int64_t)i;
    return -1;
}

static void run(uint64_t (*hash)(const char *), int steps)
{
    idxmap m = {0};
    n = 0;
    uint64_t x = 88172645463325252ULL;
    for (int step = 0; step < steps; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const char *k = keys[x % NKEYS];
        int64_t at = linear(k);
        if ((x >> 40) % 3 != 0) { /* add if absent */
            if (at < 0) {
                assert_int_equal(idxmap_add(&m, hash(k), (uint32_t)n), 0);
                arr[n++] = k;
            }
        } else if (at >= 0) { /* remove: the last element moves into the hole */
            assert_int_equal(idxmap_del(&m, hash(k), k, eq, NULL), 0);
            if ((size_t)at != n - 1) {
                arr[at] = arr[n - 1];
                idxmap_move(&m, hash(arr[at]), arr[at], eq, NULL, (uint32_t)at);
            }
            n--;
        } else {
            assert_int_equal(idxmap_del(&m, hash(k), k, eq, NULL), -1);
        }
        assert_int_equal(idxmap_count(&m), n);
        if (step % 97 == 0)
            for (size_t i = 0; i < NKEYS; i += 7)
                assert_int_equal(idxmap_find(&m, hash(keys[i]), keys[i], eq, NULL),
                                 linear(keys[i]));
    }
    for (size_t i = 0; i < NKEYS; i++)
        assert_int_equal(idxmap_find(&m, hash(keys[i]), keys[i], eq, NULL), linear(keys[i]));
    /* at most half full, tombstones included */
    assert_true((m.used + m.dead) * 2 <= m.cap);
    idxmap_free(&m);
    assert_null(m.slots);
}

static uint64_t good_hash(const char *k)
{
    return strmap_hash(k);
}

static void test_reference(void **state)
{
    (void)state;
    run(good_hash, 60000);
}

static void test_colliding_tags(void **state)
{
    (void)state;
    run(weak_hash, 8000);
}

static void test_empty(void **state)
{
    (void)state;
    idxmap m = {0};
    n = 0;
    assert_int_equal(idxmap_find(&m, 1, "a", eq, NULL), -1);
    assert_int_equal(idxmap_del(&m, 1, "a", eq, NULL), -1);
    idxmap_move(&m, 1, "a", eq, NULL, 0); /* absent: nothing */
    assert_int_equal(idxmap_add(&m, 1, UINT32_MAX), -1);
    assert_int_equal(idxmap_count(&m), 0);
    idxmap_free(&m);
}

int main(void)
{
    for (int i = 0; i < NKEYS; i++) /* shaped like uids */
        snprintf(keys[i], sizeof keys[i], "%08x-5fb3-4775-b556-%012d", i * 2654435761u, i);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_colliding_tags),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
