/* test_log.c - every log line is one JSON object whatever the strings in it
 * hold: quotes, backslashes, newlines, control bytes and invalid UTF-8 from a
 * client are escaped, never able to forge a member or a line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "util/log.h"

static size_t fmt(char *line, size_t cap, const char *msg, const char *kv, ...)
{
    va_list ap;
    va_start(ap, kv);
    size_t n = log_format(line, cap, LOG_INFO, msg, kv, ap);
    va_end(ap);
    return n;
}

/* The line is exactly one JSON object followed by one newline. */
static json_t *parse_line(const char *line, size_t n)
{
    assert_true(n >= 2);
    assert_int_equal(line[n - 1], '\n');
    assert_null(memchr(line, '\n', n - 1));
    json_error_t je;
    json_t *o = json_loadb(line, n - 1, JSON_REJECT_DUPLICATES, &je);
    if (!o) fail_msg("not JSON (%s): %.*s", je.text, (int)n, line);
    assert_true(json_is_object(o));
    return o;
}

static void test_escape_bytes(void **state)
{
    (void)state;
    char out[64];
    size_t n;
    log_escape("a\"b\\c\nd\x01\x7f", 9, out, sizeof out, &n);
    assert_int_equal(n, strlen("a\\\"b\\\\c\\nd\\u0001\\u007f"));
    assert_memory_equal(out, "a\\\"b\\\\c\\nd\\u0001\\u007f", n);
    /* valid UTF-8 passes; invalid bytes, overlongs and surrogates do not */
    log_escape("\xc3\xa9", 2, out, sizeof out, &n);
    assert_memory_equal(out, "\xc3\xa9", 2);
    assert_int_equal(n, 2);
    log_escape("\xff\xc0\xaf\xed\xa0\x80", 6, out, sizeof out, &n);
    assert_int_equal(n, 6 * 6);
    assert_memory_equal(out, "\\ufffd", 6);
    /* truncated multibyte sequence at the end */
    log_escape("x\xe2\x82", 3, out, sizeof out, &n);
    assert_memory_equal(out, "x\\ufffd\\ufffd", n);
    /* an escape never straddles the end of the buffer */
    log_escape("ab\n", 3, out, 3, &n);
    assert_int_equal(n, 2);
}

static void test_hostile_fields(void **state)
{
    (void)state;
    char line[2048];
    const char *path = "/api/v1/x\",\"level\":\"error\"}\n{\"forged\":\"1\\";
    size_t n = fmt(line, sizeof line, "request", "\"verb\":\"%s\",\"path\":\"%s\",\"code\":%d",
                   "GE\"T", path, 404);
    json_t *o = parse_line(line, n);
    assert_string_equal(json_string_value(json_object_get(o, "path")), path);
    assert_string_equal(json_string_value(json_object_get(o, "verb")), "GE\"T");
    assert_string_equal(json_string_value(json_object_get(o, "level")), "info");
    assert_int_equal(json_integer_value(json_object_get(o, "code")), 404);
    assert_null(json_object_get(o, "forged"));
    json_decref(o);

    /* invalid UTF-8 and every control byte */
    char bad[64];
    for (int i = 0; i < 32; i++)
        bad[i] = (char)(i + 1);
    memcpy(bad + 31, "\xff\xfe\x80", 4);
    n = fmt(line, sizeof line, "m\"sg\n", "\"e\":\"%s\"", bad);
    o = parse_line(line, n);
    assert_string_equal(json_string_value(json_object_get(o, "msg")), "m\"sg\n");
    const char *e = json_string_value(json_object_get(o, "e"));
    assert_non_null(strstr(e, "\xef\xbf\xbd")); /* U+FFFD */
    json_decref(o);
}

static void test_numbers_and_null(void **state)
{
    (void)state;
    char line[512];
    size_t n = fmt(line, sizeof line, "m",
                   "\"a\":%d,\"b\":%zu,\"c\":%lld,\"d\":%.6f,\"e\":%ld,\"f\":\"%s\",\"g\":\"%c\","
                   "\"h\":%u,\"p\":\"100%%\"",
                   -3, (size_t)7, (long long)-9000000000LL, 0.5, 12L, (const char *)NULL, 'q', 4u);
    json_t *o = parse_line(line, n);
    assert_int_equal(json_integer_value(json_object_get(o, "a")), -3);
    assert_int_equal(json_integer_value(json_object_get(o, "b")), 7);
    assert_int_equal(json_integer_value(json_object_get(o, "c")), -9000000000LL);
    assert_true(json_real_value(json_object_get(o, "d")) == 0.5);
    assert_int_equal(json_integer_value(json_object_get(o, "e")), 12);
    assert_string_equal(json_string_value(json_object_get(o, "f")), "(null)");
    assert_string_equal(json_string_value(json_object_get(o, "g")), "q");
    assert_int_equal(json_integer_value(json_object_get(o, "h")), 4);
    assert_string_equal(json_string_value(json_object_get(o, "p")), "100%");
    json_decref(o);
}

/* A line cut at its size limit is still one JSON object, wherever the cut
 * falls: inside a string, inside an escape, after a key or a comma. */
static void test_truncation_stays_json(void **state)
{
    (void)state;
    char big[600];
    for (size_t i = 0; i < sizeof big - 1; i++)
        big[i] = "a\"\\\n\x01\xc3\xa9"[i % 7];
    big[sizeof big - 1] = '\0';
    for (size_t cap = 128; cap < 700; cap++) {
        char *line = malloc(cap);
        size_t n = fmt(line, cap, "m", "\"a\":\"%s\",\"b\":%d,\"c\":\"%s\"", big, 5, big);
        assert_true(n <= cap);
        json_t *o = parse_line(line, n);
        json_decref(o);
        n = fmt(line, cap, "m", "\"x\":1,\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\":%d,\"z\":%d",
                12345, 6);
        o = parse_line(line, n);
        json_decref(o);
        free(line);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape_bytes),
        cmocka_unit_test(test_hostile_fields),
        cmocka_unit_test(test_numbers_and_null),
        cmocka_unit_test(test_truncation_stays_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
