/* test_utf8.c - utf8_cut: never inside a character, never more than asked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/utf8.h"

#include <string.h>

static void test_cut(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t n, want;
    } v[] = {
        {"", 0, 0},
        {"abc", 3, 3},
        {"abc", 2, 2},
        {"a\xc3\xa9", 3, 3},         /* é whole */
        {"a\xc3\xa9", 2, 1},         /* é's lead only */
        {"a\xe2\x82\xac", 4, 4},     /* € whole */
        {"a\xe2\x82\xac", 3, 1},     /* € cut after 2 of 3 */
        {"a\xe2\x82\xac", 2, 1},     /* € cut after 1 of 3 */
        {"\xf0\x9f\x98\x80z", 4, 4}, /* 😀 whole */
        {"\xf0\x9f\x98\x80z", 3, 0}, /* 😀 cut */
        {"\xf0\x9f\x98\x80z", 5, 5},
        {"a\x80\x80", 3, 3},                /* stray continuations: left alone */
        {"\xc3\xa9\xc3\xa9\xc3\xa9", 5, 4}, /* ééé at 5 bytes: éé */
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        assert_int_equal(utf8_cut(v[i].s, v[i].n), v[i].want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_cut)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
