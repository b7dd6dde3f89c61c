/* test_svcrange.c - core/bitalloc.h and core/svcrange.h: the bitmap and its
 * static band (upstream's randomScanStrategyWithOffset: dynamic values come
 * from above the band until it is full), exhaustion and release, and the
 * ranges' parsing, offsets and static band sizes (upstream's
 * calculateRangeOffset vectors: a /24 keeps 16, a /12 256; 30000-32767
 * keeps 86). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/bitalloc.h"
#include "core/svcrange.h"

/* A small xorshift: the tests' randomness, reproducible. */
static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void test_set_clear_count(void **state)
{
    (void)state;
    bitalloc *b = ba_new(130, 0);
    assert_non_null(b);
    assert_int_equal(ba_max(b), 130);
    assert_true(ba_set(b, 0));
    assert_true(ba_set(b, 64));
    assert_true(ba_set(b, 129));
    assert_false(ba_set(b, 64));  /* already set */
    assert_false(ba_set(b, 130)); /* out of range */
    assert_int_equal(ba_count(b), 3);
    assert_true(ba_has(b, 129));
    assert_false(ba_has(b, 128));
    assert_false(ba_has(b, 1000));
    ba_clear(b, 64);
    ba_clear(b, 64); /* clear again: nothing */
    ba_clear(b, 999);
    assert_int_equal(ba_count(b), 2);
    assert_false(ba_has(b, 64));
    ba_free(b);
    assert_null(ba_new(1u << 25, 0)); /* too large */
}

/* Every offset handed out once, the band's last; then full; a release
 * makes exactly that offset the next one. */
static void test_exhaust_band_last(void **state)
{
    (void)state;
    const uint32_t max = 200, band = 20;
    bitalloc *b = ba_new(max, band);
    bool seen[200] = {false};
    uint32_t off;
    for (uint32_t i = 0; i < max; i++) {
        assert_true(ba_next(b, next_rand(), &off));
        assert_true(off < max);
        assert_false(seen[off]);
        seen[off] = true;
        /* the first max - band come from above the band */
        if (i < max - band)
            assert_true(off >= band);
        else
            assert_true(off < band);
    }
    assert_int_equal(ba_count(b), max);
    assert_false(ba_next(b, next_rand(), &off));
    ba_clear(b, 7);
    assert_true(ba_next(b, next_rand(), &off));
    assert_int_equal(off, 7);
    assert_false(ba_next(b, next_rand(), &off));
    ba_free(b);
}

/* Values set by number (static allocations) are never handed out again. */
static void test_next_skips_set(void **state)
{
    (void)state;
    bitalloc *b = ba_new(1000, 0);
    for (uint32_t i = 0; i < 1000; i += 2)
        assert_true(ba_set(b, i));
    uint32_t off;
    for (int i = 0; i < 500; i++) {
        assert_true(ba_next(b, next_rand(), &off));
        assert_int_equal(off % 2, 1);
    }
    assert_false(ba_next(b, next_rand(), &off));
    ba_free(b);
}

/* A band as large as the map is no band (upstream: offset < max). */
static void test_band_clamped(void **state)
{
    (void)state;
    bitalloc *b = ba_new(10, 10);
    uint32_t off;
    for (int i = 0; i < 10; i++)
        assert_true(ba_next(b, next_rand(), &off));
    assert_false(ba_next(b, next_rand(), &off));
    ba_free(b);
    b = ba_new(0, 0);
    assert_false(ba_next(b, 1, &off));
    ba_free(b);
}

static void test_iprange_parse(void **state)
{
    (void)state;
    svc_iprange r;
    char err[256];
    assert_int_equal(ipr_parse("10.96.0.0/12", "--r", &r, err, sizeof err), 0);
    assert_string_equal(r.cidr, "10.96.0.0/12");
    assert_string_equal(ipr_family(&r), "IPv4");
    assert_int_equal(r.max, (1u << 20) - 2);
    assert_int_equal(r.band, 256);
    /* host bits masked off, as upstream's ParseCIDR */
    assert_int_equal(ipr_parse("10.0.0.77/24", "--r", &r, err, sizeof err), 0);
    assert_string_equal(r.cidr, "10.0.0.0/24");
    assert_int_equal(r.max, 254);
    assert_int_equal(r.band, 16);
    assert_int_equal(ipr_parse("192.168.1.0/28", "--r", &r, err, sizeof err), 0);
    assert_int_equal(r.max, 14);
    assert_int_equal(r.band, 0); /* 16 addresses: no band */
    assert_int_equal(ipr_parse("fd00:10:96::/112", "--r", &r, err, sizeof err), 0);
    assert_string_equal(ipr_family(&r), "IPv6");
    assert_string_equal(r.cidr, "fd00:10:96::/112");
    assert_int_equal(r.max, 65535);
    assert_int_equal(r.band, 256);
    assert_int_equal(ipr_parse("fd00::/108", "--r", &r, err, sizeof err), 0);
    assert_int_equal(r.max, 65535); /* capped, as upstream */

    assert_int_equal(ipr_parse("10.0.0.0/8", "--service-cluster-ip-range", &r, err, sizeof err),
                     -1);
    assert_string_equal(err, "specified --service-cluster-ip-range is too large; for 32-bit "
                             "addresses, the mask must be >= 12");
    assert_int_equal(ipr_parse("fd00::/64", "--r", &r, err, sizeof err), -1);
    assert_string_equal(
        err, "specified --r is too large; for 128-bit addresses, the mask must be >= 108");
    assert_int_equal(ipr_parse("10.0.0.0/31", "--r", &r, err, sizeof err), -1);
    assert_int_equal(ipr_parse("10.0.0.0", "--r", &r, err, sizeof err), -1);
    assert_int_equal(ipr_parse("10.0.0.0/33", "--r", &r, err, sizeof err), -1);
    assert_int_equal(ipr_parse("10.0.0.0/+2", "--r", &r, err, sizeof err), -1);
    assert_int_equal(ipr_parse("10.0.0.300/24", "--r", &r, err, sizeof err), -1);
    assert_int_equal(ipr_parse("10.96.0.0/12,fd00::/112", "--r", &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "dual-stack"));
    assert_int_equal(ipr_parse(NULL, "--r", &r, err, sizeof err), -1);
}

static void test_iprange_offsets(void **state)
{
    (void)state;
    svc_iprange r;
    char err[256], buf[64];
    uint32_t off = 99;
    assert_int_equal(ipr_parse("10.96.0.0/12", "--r", &r, err, sizeof err), 0);
    assert_int_equal(ipr_offset(&r, "10.96.0.1", &off), IPR_IN);
    assert_int_equal(off, 0);
    assert_int_equal(ipr_offset(&r, "10.96.1.0", &off), IPR_IN);
    assert_int_equal(off, 255);
    assert_int_equal(ipr_offset(&r, "10.111.255.254", &off), IPR_IN);
    assert_int_equal(off, r.max - 1);
    assert_int_equal(ipr_offset(&r, "10.96.0.0", &off), IPR_OUT);      /* network */
    assert_int_equal(ipr_offset(&r, "10.111.255.255", &off), IPR_OUT); /* broadcast */
    assert_int_equal(ipr_offset(&r, "10.112.0.1", &off), IPR_OUT);
    assert_int_equal(ipr_offset(&r, "1.1.1.1", &off), IPR_OUT);
    assert_int_equal(ipr_offset(&r, "fd00::1", &off), IPR_BAD);
    assert_int_equal(ipr_offset(&r, "None", &off), IPR_BAD);
    assert_int_equal(ipr_offset(&r, NULL, &off), IPR_BAD);
    ipr_format(&r, 0, buf, sizeof buf);
    assert_string_equal(buf, "10.96.0.1");
    ipr_format(&r, 255, buf, sizeof buf);
    assert_string_equal(buf, "10.96.1.0");
    ipr_format(&r, r.max - 1, buf, sizeof buf);
    assert_string_equal(buf, "10.111.255.254");
    /* every offset of a small range round-trips */
    assert_int_equal(ipr_parse("172.16.5.64/27", "--r", &r, err, sizeof err), 0);
    for (uint32_t i = 0; i < r.max; i++) {
        ipr_format(&r, i, buf, sizeof buf);
        assert_int_equal(ipr_offset(&r, buf, &off), IPR_IN);
        assert_int_equal(off, i);
    }
    assert_int_equal(ipr_parse("fd00:10:96::/112", "--r", &r, err, sizeof err), 0);
    assert_int_equal(ipr_offset(&r, "fd00:10:96::a", &off), IPR_IN);
    assert_int_equal(off, 9);
    ipr_format(&r, 9, buf, sizeof buf);
    assert_string_equal(buf, "fd00:10:96::a");
    assert_int_equal(ipr_offset(&r, "fd00:10:96::", &off), IPR_OUT);
    assert_int_equal(ipr_offset(&r, "fd00:10:97::1", &off), IPR_OUT);
    assert_int_equal(ipr_offset(&r, "10.96.0.1", &off), IPR_BAD);
}

static void test_portrange(void **state)
{
    (void)state;
    svc_portrange r;
    char err[256];
    uint32_t off;
    assert_int_equal(portr_parse("30000-32767", "--p", &r, err, sizeof err), 0);
    assert_int_equal(r.base, 30000);
    assert_int_equal(r.size, 2768);
    assert_int_equal(r.band, 86);
    assert_string_equal(r.text, "30000-32767");
    assert_true(portr_offset(&r, 30000, &off));
    assert_int_equal(off, 0);
    assert_true(portr_offset(&r, 32767, &off));
    assert_int_equal(off, 2767);
    assert_false(portr_offset(&r, 29999, &off));
    assert_false(portr_offset(&r, 32768, &off));
    assert_false(portr_offset(&r, -1, &off));
    assert_int_equal(portr_parse(" 30000+9 ", "--p", &r, err, sizeof err), 0);
    assert_string_equal(r.text, "30000-30009");
    assert_int_equal(r.band, 0);
    assert_int_equal(portr_parse("8080", "--p", &r, err, sizeof err), 0);
    assert_int_equal(r.size, 1);
    assert_int_equal(portr_parse("1-65535", "--p", &r, err, sizeof err), 0);
    assert_int_equal(r.band, 128);
    assert_int_equal(portr_parse("30000-20000", "--p", &r, err, sizeof err), -1);
    assert_string_equal(err, "--p: end port cannot be less than start port: 30000-20000");
    assert_int_equal(portr_parse("30000-70000", "--p", &r, err, sizeof err), -1);
    assert_int_equal(portr_parse("a-b", "--p", &r, err, sizeof err), -1);
    assert_int_equal(portr_parse("1-2+3", "--p", &r, err, sizeof err), -1);
    assert_int_equal(portr_parse("", "--p", &r, err, sizeof err), -1);
    assert_int_equal(portr_parse("-5", "--p", &r, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_clear_count), cmocka_unit_test(test_exhaust_band_last),
        cmocka_unit_test(test_next_skips_set),  cmocka_unit_test(test_band_clamped),
        cmocka_unit_test(test_iprange_parse),   cmocka_unit_test(test_iprange_offsets),
        cmocka_unit_test(test_portrange),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
