/* test_jdump.c - core/jdump.h: jdump writes exactly jansson's compact text
 * and jcopy makes exactly jansson's deep copy, for hand-picked values
 * (escapes, UTF-8, NUL in strings and keys, numbers at their limits, empty
 * and nested containers, member order) and for 20,000 random trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/jdump.h"

/* jdump(v) is json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY), NULL and all;
 * jcopy(v) equals v and writes the same text. */
static void check(const json_t *v)
{
    char *theirs = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    size_t n = 0;
    char *ours = jdump(v, &n);
    if (!theirs) {
        assert_null(ours);
        return;
    }
    assert_non_null(ours);
    assert_string_equal(ours, theirs);
    assert_int_equal(n, strlen(theirs));
    json_t *c = jcopy(v);
    assert_non_null(c);
    assert_true(json_equal(c, v));
    char *again = jdump(c, NULL);
    assert_string_equal(again, theirs);
    free(again);
    json_decref(c);
    free(theirs);
    free(ours);
}

static void check_text(const char *text)
{
    json_error_t err;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!v) fail_msg("%s: %s", text, err.text);
    check(v);
    json_decref(v);
}

static void test_vectors(void **state)
{
    (void)state;
    check_text("{}");
    check_text("[]");
    check_text("{\"a\":{},\"b\":[],\"c\":[{}],\"d\":[[[]]]}");
    check_text("\"plain\"");
    check_text("\"\\\" \\\\ / \\b \\f \\n \\r \\t \\u0001 \\u001f \\u007f\"");
    check_text("\"caf\\u00e9 \\u20ac \\ud83d\\ude00 \\u2028\"");
    check_text("\"nul\\u0000inside\"");
    check_text("{\"\\u00e9\":2,\"\":3}");
    json_t *nulkey = json_object(); /* (jansson's parser refuses a NUL in a key; setn makes one) */
    json_object_setn_new(nulkey, "k\0ey", 4, json_integer(1));
    char *theirs = json_dumps(nulkey, JSON_COMPACT), *ours = jdump(nulkey, NULL);
    assert_string_equal(ours, theirs); /* (json_equal cannot compare such keys) */
    json_t *c = jcopy(nulkey);
    char *copied = jdump(c, NULL);
    assert_string_equal(copied, theirs);
    free(theirs);
    free(ours);
    free(copied);
    json_decref(c);
    json_decref(nulkey);
    check_text("[0,1,-1,9223372036854775807,-9223372036854775808,1.5,-0.0,1e300,2.5e-300,3.0]");
    check_text("[true,false,null]");
    /* member order is insertion order, not sorted */
    check_text("{\"z\":1,\"a\":2,\"m\":{\"y\":1,\"b\":2}}");
    /* a pod, managedFields and all */
    check_text(
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"managedFields\":"
        "[{\"manager\":\"kubectl\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{"
        "\"f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:image\":{}}}}}}]},"
        "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}],\"priority\":0}}");
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    static const char *const bad[] = {"\xff",     "\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                                      "\xe2\x82", "a\x80z",   "\xc3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *s = json_stringn_nocheck(bad[i], strlen(bad[i]));
        assert_null(jdump(s, NULL)); /* as json_dumps: not valid UTF-8 */
        check(s);
        json_t *o = json_object();
        json_object_set_new(o, "x", json_incref(s));
        assert_null(jdump(o, NULL));
        json_decref(o);
        json_decref(s);
    }
}

/* ---- random trees ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static void rand_bytes(char *buf, size_t n)
{
    static const char *const pieces[] = {"a",
                                         "Z",
                                         "0",
                                         " ",
                                         "\"",
                                         "\\",
                                         "/",
                                         "\n",
                                         "\t",
                                         "\x01",
                                         "\x1f",
                                         "\x7f",
                                         "\xc3\xa9",
                                         "\xe2\x82\xac",
                                         "\xf0\x9f\x98\x80",
                                         "k:{\"name\":\"c\"}",
                                         "f:",
                                         "."};
    size_t len = 0;
    while (len + 16 < n && rnd() % 5) {
        const char *p = pieces[rnd() % (sizeof pieces / sizeof *pieces)];
        memcpy(buf + len, p, strlen(p));
        len += strlen(p);
    }
    buf[len] = '\0';
}

static json_t *rand_value(int depth)
{
    char buf[128];
    switch (depth > 5 ? rnd() % 5 : rnd() % 8) {
    case 0:
        return json_null();
    case 1:
        return rnd() % 2 ? json_true() : json_false();
    case 2:
        /* (unsigned: a shift into the sign bit is undefined) */
        return json_integer((json_int_t)(((uint64_t)rnd() << 32 | rnd()) >> (rnd() % 64)));
    case 3:
        return json_real((double)(int32_t)rnd() / (double)(rnd() % 1000 + 1));
    case 4:
        rand_bytes(buf, sizeof buf);
        return json_string(buf);
    case 5:
    case 6: {
        json_t *o = json_object();
        for (unsigned n = rnd() % 6; n; n--) {
            rand_bytes(buf, 24);
            json_object_set_new(o, buf, rand_value(depth + 1));
        }
        return o;
    }
    default: {
        json_t *a = json_array();
        for (unsigned n = rnd() % 6; n; n--)
            json_array_append_new(a, rand_value(depth + 1));
        return a;
    }
    }
}

static void test_random_trees(void **state)
{
    (void)state;
    for (int i = 0; i < 20000; i++) {
        json_t *v = rand_value(0);
        check(v);
        json_decref(v);
    }
}

/* Values deeper than the bound fail rather than recurse without end. */
static void test_depth(void **state)
{
    (void)state;
    json_t *root = json_array(), *cur = root;
    for (int i = 0; i < JDUMP_MAX_DEPTH + 10; i++) {
        json_t *next = json_array();
        json_array_append_new(cur, next);
        cur = next;
    }
    assert_null(jdump(root, NULL));
    assert_null(jcopy(root));
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
