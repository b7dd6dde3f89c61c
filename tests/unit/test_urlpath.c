/* test_urlpath.c - raw request paths split on '/' first, then each segment
 * percent-decoded on its own, with malformed escapes and control bytes refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/urlpath.h"

#define MAXSEG 10

static char segs[MAXSEG][URLPATH_SEG_MAX];

/* Split `raw`, require URLPATH_OK and exactly the segments given (NULL-ended). */
static void splits(const char *raw, ...)
{
    int n = -1;
    memset(segs, 0x55, sizeof segs);
    urlpath_status st = urlpath_split(raw, segs, MAXSEG, &n);
    if (st != URLPATH_OK) fail_msg("%s: status %d", raw, (int)st);
    va_list ap;
    va_start(ap, raw);
    int i = 0;
    for (const char *want; (want = va_arg(ap, const char *)); i++) {
        if (i >= n) fail_msg("%s: %d segments, want more", raw, n);
        if (strcmp(segs[i], want))
            fail_msg("%s: segment %d is [%s], want [%s]", raw, i, segs[i], want);
    }
    va_end(ap);
    if (i != n) fail_msg("%s: %d segments, want %d", raw, n, i);
}

static void refuses(const char *raw, urlpath_status want)
{
    int n = -7;
    urlpath_status st = urlpath_split(raw, segs, MAXSEG, &n);
    if (st != want) fail_msg("%s: status %d, want %d", raw, (int)st, (int)want);
    assert_int_equal(n, -7); /* untouched on failure */
}

static void test_plain_paths(void **state)
{
    splits("/api/v1/namespaces/default/pods/a", "api", "v1", "namespaces", "default", "pods", "a",
           NULL);
    splits("/", NULL);
    splits("", NULL);
    splits("/api/v1/", "api", "v1", NULL);                 /* trailing slash */
    splits("//api///v1//pods", "api", "v1", "pods", NULL); /* empty segments skipped */
    splits("api/v1", "api", "v1", NULL);
    splits("/a+b/c", "a+b", "c", NULL); /* '+' is literal in a path */
}

static void test_query_is_not_path(void **state)
{
    splits("/api/v1/pods?labelSelector=a%3Db&x=%00", "api", "v1", "pods", NULL);
    splits("/api/v1/pods/?watch=1", "api", "v1", "pods", NULL);
    splits("/?", NULL);
    assert_int_equal(urlpath_path_len("/a/b?c/d"), 4);
    assert_int_equal(urlpath_path_len("/a/b"), 4);
    refuses("/a%zz?x=1", URLPATH_BAD_ESCAPE);
}

static void test_escapes_decode_per_segment(void **state)
{
    /* %2f and %2F stay inside their segment: a name that cannot exist */
    splits("/api/v1/namespaces/default/pods/a%2fb", "api", "v1", "namespaces", "default", "pods",
           "a/b", NULL);
    splits("/api/v1/namespaces/default%2Fpods/x", "api", "v1", "namespaces", "default/pods", "x",
           NULL);
    splits("/%2F", "/", NULL);
    splits("/%2f%2f/a", "//", "a", NULL);
    /* %25 is a literal '%', decoded once */
    splits("/a%25/b%2541", "a%", "b%41", NULL);
    splits("/%61%70%69/v1", "api", "v1", NULL);
    /* '?' and '#' encoded are part of the segment */
    splits("/a%3Fb/c%23d", "a?b", "c#d", NULL);
    /* space and high bytes are not control characters */
    splits("/a%20b", "a b", NULL);
}

static void test_utf8(void **state)
{
    splits("/caf%C3%A9/%E2%9C%93", "caf\xc3\xa9", "\xe2\x9c\x93", NULL);
    splits("/caf\xc3\xa9", "caf\xc3\xa9", NULL); /* raw UTF-8 bytes pass as they are */
    splits("/%FF%FE", "\xff\xfe", NULL);         /* not UTF-8: still just a name */
}

static void test_malformed_escapes(void **state)
{
    const char *bad[] = {"/a%",      "/a%2", "/a%zz", "/a%2g/b", "/%g0",     "/a%%41",    "/ok/%/x",
                         "/a/b/c%4", "/%-1", "/% 1",  "/a%2",    "/x%0\x01", "/a%2/?q=1", NULL};
    for (const char **b = bad; *b; b++)
        refuses(*b, URLPATH_BAD_ESCAPE);
}

static void test_control_bytes(void **state)
{
    refuses("/api/v1/namespaces/nul1%00/configmaps/x", URLPATH_CONTROL);
    refuses("/api/v1/namespaces/default/pods/a%00b", URLPATH_CONTROL);
    refuses("/a%0a", URLPATH_CONTROL);
    refuses("/a%0D%0A", URLPATH_CONTROL);
    refuses("/a%1f", URLPATH_CONTROL);
    refuses("/a%1F", URLPATH_CONTROL);
    refuses("/a%7f", URLPATH_CONTROL);
    refuses("/a%09b", URLPATH_CONTROL);
    refuses("/a\tb", URLPATH_CONTROL); /* raw bytes too */
    refuses("/a\x7f", URLPATH_CONTROL);
    refuses("/a\x01", URLPATH_CONTROL);
    /* 0x20 and 0x80 are the neighbours that pass */
    splits("/%20%80", " \x80", NULL);
}

static void test_limits(void **state)
{
    /* more segments than routing takes: no route (404), not an error */
    refuses("/1/2/3/4/5/6/7/8/9/10/11", URLPATH_NO_ROUTE);
    splits("/1/2/3/4/5/6/7/8/9/10", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", NULL);
    /* ... but a bad byte past the limit is still reported as such */
    refuses("/1/2/3/4/5/6/7/8/9/10/11/%00", URLPATH_CONTROL);
    refuses("/1/2/3/4/5/6/7/8/9/10/11/%zz", URLPATH_BAD_ESCAPE);

    /* segment length is the decoded length: 255 fits, 256 does not */
    char raw[4 * URLPATH_SEG_MAX];
    raw[0] = '/';
    memset(raw + 1, 'a', 255);
    raw[256] = '\0';
    int n = 0;
    assert_int_equal(urlpath_split(raw, segs, MAXSEG, &n), URLPATH_OK);
    assert_int_equal(n, 1);
    assert_int_equal(strlen(segs[0]), 255);
    strcat(raw, "a");
    refuses(raw, URLPATH_NO_ROUTE);
    /* 255 bytes written as 765 escapes still fit */
    raw[0] = '/';
    for (int i = 0; i < 255; i++)
        memcpy(raw + 1 + 3 * i, "%41", 3);
    raw[1 + 3 * 255] = '\0';
    assert_int_equal(urlpath_split(raw, segs, MAXSEG, &n), URLPATH_OK);
    assert_int_equal(strlen(segs[0]), 255);
    assert_int_equal(segs[0][254], 'A');
}

static void test_very_long_input(void **state)
{
    size_t len = 1 << 20;
    char *raw = malloc(len + 1);
    assert_non_null(raw);
    for (size_t i = 0; i < len; i++)
        raw[i] = i % 2 ? 'x' : '/';
    raw[len] = '\0';
    refuses(raw, URLPATH_NO_ROUTE); /* 512 Ki segments */
    raw[len - 1] = '%';
    refuses(raw, URLPATH_BAD_ESCAPE);
    memset(raw, 'b', len);
    raw[0] = '/';
    refuses(raw, URLPATH_NO_ROUTE); /* one huge segment */
    free(raw);
}

static void test_decode_segment(void **state)
{
    char out[8];
    size_t d = 99;
    assert_int_equal(urlpath_decode_segment("a%2Fb", 5, out, sizeof out, &d), URLPATH_OK);
    assert_string_equal(out, "a/b");
    assert_int_equal(d, 3);
    /* only `len` bytes are read: the escape is cut short */
    assert_int_equal(urlpath_decode_segment("a%2Fb", 2, out, sizeof out, &d), URLPATH_BAD_ESCAPE);
    assert_int_equal(urlpath_decode_segment("a%2Fb", 3, out, sizeof out, &d), URLPATH_BAD_ESCAPE);
    /* check only */
    assert_int_equal(urlpath_decode_segment("%41%42", 6, NULL, 0, &d), URLPATH_OK);
    assert_int_equal(d, 2);
    /* too long for out: NUL-terminated, reported */
    assert_int_equal(urlpath_decode_segment("abcdefgh", 8, out, sizeof out, &d), URLPATH_NO_ROUTE);
    assert_int_equal(strlen(out), 7);
    assert_int_equal(urlpath_decode_segment("abcdefg", 7, out, sizeof out, &d), URLPATH_OK);
    assert_string_equal(out, "abcdefg");
    /* a bad byte wins over length */
    assert_int_equal(urlpath_decode_segment("abcdefgh%00", 11, out, sizeof out, &d),
                     URLPATH_CONTROL);
    assert_int_equal(urlpath_decode_segment("", 0, out, sizeof out, &d), URLPATH_OK);
    assert_string_equal(out, "");
}

static void test_messages(void **state)
{
    assert_string_equal(urlpath_message(URLPATH_OK), "");
    assert_non_null(strstr(urlpath_message(URLPATH_BAD_ESCAPE), "escape"));
    assert_non_null(strstr(urlpath_message(URLPATH_CONTROL), "control character"));
}

static void test_log_escape(void **state)
{
    char out[64];
    urlpath_log_escape("/api/v1/pods/a%00b?labelSelector=x", out, sizeof out);
    assert_string_equal(out, "/api/v1/pods/a%00b");
    urlpath_log_escape("/a\"b\\c d\x01\x7f\xc3\xa9", out, sizeof out);
    assert_string_equal(out, "/a%22b%5Cc%20d%01%7F%C3%A9");
    urlpath_log_escape("", out, sizeof out);
    assert_string_equal(out, "");
    /* cut at whole bytes, never inside an escape */
    char small[6];
    urlpath_log_escape("/ab\"cd", small, sizeof small);
    assert_string_equal(small, "/ab");
    urlpath_log_escape("/abcdefgh", small, sizeof small);
    assert_string_equal(small, "/abcd");
    char one[1];
    urlpath_log_escape("/x", one, sizeof one);
    assert_string_equal(one, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_paths),
        cmocka_unit_test(test_query_is_not_path),
        cmocka_unit_test(test_escapes_decode_per_segment),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_malformed_escapes),
        cmocka_unit_test(test_control_bytes),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_very_long_input),
        cmocka_unit_test(test_decode_segment),
        cmocka_unit_test(test_messages),
        cmocka_unit_test(test_log_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
