/* test_cron.c - core/cron (standard schedules, next times) and core/tz
 * (TZif zones), against robfig/cron v3's documented semantics. The DST
 * cases read America/New_York and Europe/Berlin from the system tz
 * database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "core/cron.h"
#include "core/tz.h"

static int64_t utc(int y, int mo, int d, int h, int mi)
{
    return tz_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60;
}

static cron_sched parse_ok(const char *spec)
{
    cron_sched s;
    char err[256] = "";
    if (cron_parse(spec, &s, err, sizeof err) != 0) fail_msg("%s: %s", spec, err);
    return s;
}

static void parse_err(const char *spec, const char *want)
{
    cron_sched s;
    char err[256] = "";
    if (cron_parse(spec, &s, err, sizeof err) == 0) fail_msg("%s: accepted", spec);
    if (strcmp(err, want)) fail_msg("%s: got [%s], want [%s]", spec, err, want);
}

static void next_is(const char *spec, const tz_zone *z, int64_t from, int64_t want)
{
    cron_sched s = parse_ok(spec);
    int64_t got = cron_next(&s, z, from);
    if (got != want)
        fail_msg("%s after %lld: got %lld, want %lld", spec, (long long)from, (long long)got,
                 (long long)want);
}

static void test_parse_fields(void **state)
{
    (void)state;
    cron_sched s = parse_ok("*/15 9-17 1,15 JAN-mar mon-FRI");
    assert_int_equal(s.minute, (1ULL << 0) | (1ULL << 15) | (1ULL << 30) | (1ULL << 45));
    assert_int_equal(s.hour, 0x3fe00); /* 9..17 */
    assert_int_equal(s.dom, (1u << 1) | (1u << 15));
    assert_int_equal(s.month, (1u << 1) | (1u << 2) | (1u << 3));
    assert_int_equal(s.dow, 0x3e);
    assert_false(s.dom_star);
    assert_false(s.dow_star);
    s = parse_ok("5/20 * * * ?");
    assert_int_equal(s.minute, (1ULL << 5) | (1ULL << 25) | (1ULL << 45));
    assert_true(s.dom_star);
    assert_true(s.dow_star);
    s = parse_ok("0 0 */2 * *"); /* a step > 1: not a star for the day rule */
    assert_false(s.dom_star);
    s = parse_ok("@hourly");
    assert_int_equal(s.minute, 1);
    assert_int_equal(s.hour, 0xffffff);
    s = parse_ok("@weekly");
    assert_int_equal(s.dow, 1);
    assert_true(s.dom_star);
    s = parse_ok("CRON_TZ=UTC 0 0 * * *"); /* skipped here; the API refuses it */
    assert_int_equal(s.minute, 1);
}

static void test_parse_errors(void **state)
{
    (void)state;
    parse_err("", "empty spec string");
    parse_err("* * * *", "expected exactly 5 fields, found 4: [* * * *]");
    parse_err("* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]");
    parse_err("60 * * * *", "end of range (60) above maximum (59): 60");
    parse_err("* * 0 * *", "beginning of range (0) below minimum (1): 0");
    parse_err("* * * * 7", "end of range (7) above maximum (6): 7");
    parse_err("5-3 * * * *", "beginning of range (5) beyond end of range (3): 5-3");
    parse_err("*/0 * * * *", "step of range should be a positive number: */0");
    parse_err("x * * * *",
              "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax");
    parse_err("1-2-3 * * * *", "too many hyphens: 1-2-3");
    parse_err("1/2/3 * * * *", "too many slashes: 1/2/3");
    parse_err("@every 5m", "unrecognized descriptor: @every 5m");
    parse_err("* * * foo *",
              "failed to parse int from foo: strconv.Atoi: parsing \"foo\": invalid syntax");
}

static void test_next_utc(void **state)
{
    (void)state;
    int64_t t = utc(2024, 5, 10, 12, 34) + 17;
    next_is("* * * * *", NULL, t, utc(2024, 5, 10, 12, 35));
    next_is("* * * * *", NULL, utc(2024, 5, 10, 12, 35),
            utc(2024, 5, 10, 12, 36)); /* strictly after */
    next_is("*/1 * * * *", NULL, t, utc(2024, 5, 10, 12, 35));
    next_is("0 * * * *", NULL, t, utc(2024, 5, 10, 13, 0));
    next_is("30 2 * * *", NULL, t, utc(2024, 5, 11, 2, 30));
    next_is("0 0 1 * *", NULL, t, utc(2024, 6, 1, 0, 0));
    next_is("@yearly", NULL, t, utc(2025, 1, 1, 0, 0));
    next_is("0 0 29 2 *", NULL, t, utc(2028, 2, 29, 0, 0));
    next_is("0 0 30 2 *", NULL, t, -1);                      /* never */
    next_is("0 9 * * MON", NULL, t, utc(2024, 5, 13, 9, 0)); /* 2024-05-10 is a Friday */
    /* day of month OR day of week when both are restricted */
    next_is("0 0 13 * 5", NULL, utc(2024, 5, 11, 0, 0), utc(2024, 5, 13, 0, 0));
    next_is("0 0 13 * 5", NULL, utc(2024, 5, 13, 0, 0), utc(2024, 5, 17, 0, 0));
    /* AND when one is a star */
    next_is("0 0 * * 5", NULL, utc(2024, 5, 11, 0, 0), utc(2024, 5, 17, 0, 0));
    next_is("0 0 13 * *", NULL, utc(2024, 5, 13, 0, 0), utc(2024, 6, 13, 0, 0));
    /* a star with step 1 stays a star (robfig clears it only for a step
     * above 1): AND */
    next_is("0 0 13 * */1", NULL, utc(2024, 5, 11, 0, 0), utc(2024, 5, 13, 0, 0));
    next_is("0 12 * 2 *", NULL, utc(2024, 12, 31, 23, 59), utc(2025, 2, 1, 12, 0));
}

static void test_dst(void **state)
{
    (void)state;
    char err[128];
    tz_zone *ny = tz_load(NULL, "America/New_York", err, sizeof err);
    tz_zone *be = tz_load(NULL, "Europe/Berlin", err, sizeof err);
    if (!ny || !be) fail_msg("tz database: %s", err);
    assert_int_equal(tz_offset(ny, utc(2012, 1, 1, 0, 0)), -5 * 3600);
    assert_int_equal(tz_offset(ny, utc(2012, 7, 1, 0, 0)), -4 * 3600);
    assert_int_equal(tz_offset(be, utc(2050, 7, 1, 0, 0)), 2 * 3600); /* the footer's rule */
    assert_int_equal(tz_offset(be, utc(2050, 12, 1, 0, 0)), 1 * 3600);
    /* robfig: 2:30 does not happen on 2012-03-11 in New York: next year's */
    next_is("30 2 11 Mar *", ny, utc(2012, 3, 11, 5, 0), utc(2013, 3, 11, 6, 30));
    /* every hour across the gap: 01:00 EST, then 03:00 EDT */
    next_is("0 * * * *", ny, utc(2012, 3, 11, 6, 30), utc(2012, 3, 11, 7, 0));
    /* the repeated hour happens twice: 01:30 EDT, then 01:30 EST */
    next_is("30 1 4 Nov *", ny, utc(2012, 11, 4, 4, 0), utc(2012, 11, 4, 5, 30));
    next_is("30 1 4 Nov *", ny, utc(2012, 11, 4, 5, 45), utc(2012, 11, 4, 6, 30));
    /* daily at midnight in Berlin, either side of the March change */
    next_is("0 0 * * *", be, utc(2024, 3, 30, 12, 0), utc(2024, 3, 30, 23, 0));
    next_is("0 0 * * *", be, utc(2024, 3, 31, 12, 0), utc(2024, 3, 31, 22, 0));
    /* a wall time in the gap resolves to the end of the gap */
    assert_int_equal(tz_from_local(ny, 2012, 3, 11, 2, 30), utc(2012, 3, 11, 7, 0));
    /* a repeated wall time resolves to its first occurrence */
    assert_int_equal(tz_from_local(ny, 2012, 11, 4, 1, 30), utc(2012, 11, 4, 5, 30));
    tz_free(ny);
    tz_free(be);
}

static void test_zone_names(void **state)
{
    (void)state;
    char err[128];
    assert_true(tz_name_valid("America/Argentina/Buenos_Aires"));
    assert_true(tz_name_valid("Etc/GMT+5"));
    assert_false(tz_name_valid("../etc/passwd"));
    assert_false(tz_name_valid("America/./New_York"));
    assert_false(tz_name_valid("-x"));
    assert_false(tz_name_valid(""));
    assert_null(tz_load(NULL, "Mars/Olympus", err, sizeof err));
    assert_string_equal(err, "unknown time zone Mars/Olympus");
    tz_zone *u = tz_load(NULL, "UTC", err, sizeof err);
    assert_non_null(u);
    assert_int_equal(tz_offset(u, 1700000000), 0);
    tz_free(u);
    static const unsigned char junk[] = "TZif2 not really";
    assert_null(tz_parse(junk, sizeof junk, err, sizeof err));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_fields), cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_next_utc),     cmocka_unit_test(test_dst),
        cmocka_unit_test(test_zone_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
