/* test_strmap.c - core/strmap.h: the map against a reference (a sorted
 * array), through puts, replaces, deletes (tombstones) and growth, and the
 * hash's spread over keys that differ in one byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/strmap.h"

#define NKEYS 5000

static char keys[NKEYS][64];

static void make_keys(void)
{
    for (int i = 0; i < NKEYS; i++) /* shaped like store keys: long shared prefixes */
        snprintf(keys[i], sizeof keys[i], "pods/tenant-%d/pod-%07d", i % 7, i);
}

static void test_reference(void **state)
{
    (void)state;
    make_keys();
    strmap *m = strmap_new();
    assert_non_null(m);
    int live[NKEYS] = {0}; /* reference: value+1 of key i, 0 when absent */
    uint64_t x = 88172645463325252ULL;
    for (int step = 0; step < 200000; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
        int i = (int)(x % NKEYS), op = (int)((x >> 32) % 3);
        void *old = (void *)1;
        if (op < 2) {
            assert_int_equal(strmap_put(m, keys[i], (void *)(intptr_t)(step + 1), &old), 0);
            assert_ptr_equal(old, live[i] ? (void *)(intptr_t)live[i] : NULL);
            live[i] = step + 1;
        } else {
            void *v = strmap_del(m, keys[i]);
            assert_ptr_equal(v, live[i] ? (void *)(intptr_t)live[i] : NULL);
            live[i] = 0;
        }
        if (step % 20000 == 0) {
            size_t n = 0;
            for (int k = 0; k < NKEYS; k++) {
                n += live[k] != 0;
                assert_ptr_equal(strmap_get(m, keys[k]), live[k] ? (void *)(intptr_t)live[k] : NULL);
            }
            assert_int_equal(strmap_count(m), n);
        }
    }
    size_t seen = 0;
    const char *k;
    void *v;
    for (size_t it = 0; strmap_next(m, &it, &k, &v);) {
        int i = atoi(strrchr(k, '-') + 1);
        assert_ptr_equal(v, (void *)(intptr_t)live[i]);
        seen++;
    }
    assert_int_equal(seen, strmap_count(m));
    strmap_free(m);
}

/* Keys that differ only in one byte, at any position or length, land in
 * different slots: the low bits (which pick the slot) spread. */
static void test_hash_spread(void **state)
{
    (void)state;
    enum { BUCKETS = 1024 };
    for (size_t len = 1; len <= 40; len += 3) {
        static unsigned hits[BUCKETS];
        memset(hits, 0, sizeof hits);
        char s[64];
        memset(s, 'a', len);
        s[len] = 0;
        unsigned n = 0, worst = 0;
        for (size_t pos = 0; pos < len; pos++)
            for (int c = 32; c < 127; c++) {
                if (c == 'a') continue; /* (that is s itself) */
                n++;
                char t[64];
                memcpy(t, s, len + 1);
                t[pos] = (char)c;
                unsigned b = (unsigned)(strmap_hash(t) & (BUCKETS - 1));
                if (++hits[b] > worst) worst = hits[b];
            }
        /* n up to 3,800 keys in 1,024 buckets, up to 3.7 a bucket: a random
         * hash's fullest bucket holds about 11 then, and 5 at n = 1,000; a hash
         * that one-byte changes do not spread (a byte sum) piles len keys or
         * more into one */
        assert_true(worst <= 8 + 3 * n / BUCKETS);
    }
    assert_int_not_equal(strmap_hash(""), strmap_hash("a"));
    assert_int_not_equal(strmap_hash("abcdefgh"), strmap_hash("abcdefgh\x01"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_hash_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
