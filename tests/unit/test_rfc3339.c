/* test_rfc3339.c - RFC 3339 timestamps to and from Unix time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/rfc3339.h"

static void parses(const char *s, int64_t sec, int64_t nsec)
{
    int64_t got = -1, ns = -1;
    if (!rfc3339_parse(s, &got, &ns)) fail_msg("%s: not parsed", s);
    if (got != sec || ns != nsec)
        fail_msg("%s: got %lld.%09lld, want %lld.%09lld", s, (long long)got, (long long)ns,
                 (long long)sec, (long long)nsec);
}

static void test_parse(void **state)
{
    parses("1970-01-01T00:00:00Z", 0, 0);
    parses("2024-02-29T12:34:56Z", 1709210096, 0);
    parses("2024-02-29t12:34:56z", 1709210096, 0);
    parses("2024-02-29T14:34:56+02:00", 1709210096, 0);
    parses("2024-02-29T10:04:56-02:30", 1709210096, 0);
    parses("2024-02-29T12:34:56.5Z", 1709210096, 500000000);
    parses("2024-02-29T12:34:56.123456789123Z", 1709210096, 123456789);
    parses("0001-01-01T00:00:00Z", -62135596800LL, 0); /* Go's zero time */
    parses("1969-12-31T23:59:59Z", -1, 0);
    const char *bad[] = {"",
                         "2024-02-29",
                         "2024-02-29 12:34:56Z",
                         "2024-13-01T00:00:00Z",
                         "2024-02-29T24:00:00Z",
                         "2024-02-29T12:60:00Z",
                         "2024-02-29T12:34:60Z",
                         "2024-02-29T12:34:56",
                         "2024-02-29T12:34:56.Z",
                         "2024-02-29T12:34:56+0200",
                         "2024-02-29T12:34:56Zjunk",
                         NULL};
    int64_t t;
    for (const char **b = bad; *b; b++)
        if (rfc3339_parse(*b, &t, NULL)) fail_msg("%s: parsed", *b);
}

static void test_format_round_trip(void **state)
{
    char buf[64];
    rfc3339_format(1709210096, buf, sizeof buf);
    assert_string_equal(buf, "2024-02-29T12:34:56Z");
    rfc3339_format(-1, buf, sizeof buf);
    assert_string_equal(buf, "1969-12-31T23:59:59Z");
    for (int64_t t = -62135596800LL; t < 253402300799LL; t += 86400LL * 367 + 3671) {
        int64_t back;
        rfc3339_format(t, buf, sizeof buf);
        assert_true(rfc3339_parse(buf, &back, NULL));
        assert_true(back == t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_format_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
