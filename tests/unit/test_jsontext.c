/* test_jsontext.c - core/jsontext.h: members, elements and strings found in
 * JSON text (escapes, nesting, white space, malformed and cut text), and the
 * text paths built on it against the parsed ones they stand in for:
 * jp_quantity_sum_text against jp_quantity_sum and cq_object_usage_text
 * against cq_object_usage, over documents as the store writes them
 * (json_dumps) and as written by hand. The rule: the text path answers
 * exactly what the parsed path answers, or declines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/cquota.h"
#include "core/jsonpath.h"
#include "core/jsontext.h"

static jt_val val(const char *s)
{
    return jt_text(s, strlen(s));
}

/* The text of member key of s, or "<absent>", "<declined>". */
static char *member(const char *s, const char *key)
{
    static char buf[256];
    jt_val v;
    int r = jt_member(val(s), key, strlen(key), &v);
    if (r <= 0) return r == 0 ? "<absent>" : "<declined>";
    /* a member is bounded by its object: print its first value only */
    json_t *j =
        json_loadb(v.p, (size_t)(v.end - v.p), JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, NULL);
    char *d = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    snprintf(buf, sizeof buf, "%s", d ? d : "<bad>");
    free(d);
    json_decref(j);
    return buf;
}

static void test_members(void **state)
{
    (void)state;
    const char *doc = "{\"a\":1,\"s\":\"x}\\\"{[\",\"o\":{\"a\":[1,{\"b\":\"]\"}],\"c\":null},"
                      "\"t\":true,\"n\":-1.5e3,\"last\":{}}";
    assert_string_equal(member(doc, "a"), "1");
    assert_string_equal(member(doc, "s"), "\"x}\\\"{[\"");
    assert_string_equal(member(doc, "o"), "{\"a\":[1,{\"b\":\"]\"}],\"c\":null}");
    assert_string_equal(member(doc, "t"), "true");
    assert_string_equal(member(doc, "n"), "-1500.0");
    assert_string_equal(member(doc, "last"), "{}");
    assert_string_equal(member(doc, "c"), "<absent>"); /* (only o has a c) */
    assert_string_equal(member(doc, ""), "<absent>");
    assert_string_equal(member("{}", "a"), "<absent>");
    assert_string_equal(member(" \n{ \"a\" :\t[ ] , \"b\" : 2 }", "b"), "2");
    /* a key with an escape may spell the key sought: "absent" is unsure */
    assert_string_equal(member("{\"\\u0061\":1}", "a"), "<declined>");
    assert_string_equal(member("{\"a\\\"\":1,\"b\":2}", "b"), "2");
    assert_string_equal(member("{\"a\\\"\":1,\"b\":2}", "c"), "<declined>");
    /* not an object */
    assert_string_equal(member("[1]", "a"), "<declined>");
    assert_string_equal(member("\"a\"", "a"), "<declined>");
    assert_string_equal(member("", "a"), "<declined>");
}

static void test_malformed(void **state)
{
    (void)state;
    /* cut anywhere, a malformed text is declined or answered, never read
     * outside its bounds (ASan checks: each cut is a fresh allocation) */
    const char *doc = "{\"a\":{\"b\":[1,\"x\\\"y\",{\"c\":\"d\"}]},\"e\":\"f\",\"g\":[[],{}]}";
    size_t n = strlen(doc);
    for (size_t cut = 0; cut <= n; cut++) {
        char *t = malloc(cut ? cut : 1);
        memcpy(t, doc, cut);
        jt_val v = jt_text(t, cut), m, el;
        const char *keys[] = {"a", "e", "g", "zz"};
        for (size_t k = 0; k < 4; k++)
            if (jt_member(v, keys[k], strlen(keys[k]), &m) == 1) {
                jt_val b;
                if (jt_member(m, "b", 1, &b) == 1)
                    for (const char *it = NULL; jt_next(b, &it, &el) > 0;) {
                        const char *s;
                        size_t sn;
                        (void)jt_string(el, &s, &sn);
                    }
                for (const char *it = NULL; jt_next(m, &it, &el) > 0;)
                    ;
            }
        if (cut < n) assert_int_not_equal(jt_member(v, "zz", 2, &m), 0);
        free(t);
    }
    jt_val m;
    assert_int_equal(jt_member(val("{\"a\" 1}"), "a", 1, &m), -1);
    assert_int_equal(jt_member(val("{\"a\":1 \"b\":2}"), "b", 1, &m), -1);
    assert_int_equal(jt_member(val("{\"a\":}"), "b", 1, &m), -1);
    assert_int_equal(jt_member(val("{\"a\":1,}"), "b", 1, &m), -1);
    assert_int_equal(jt_member(val("{\"a\":[1,2}"), "b", 1, &m), -1);
}

static void test_elements_and_strings(void **state)
{
    (void)state;
    jt_val v = val("[ \"a\" , {\"x\":[1,2]},[[]],\"b\\\"\", 3 ]"), el;
    const char *got[8];
    size_t n = 0;
    int r;
    for (const char *it = NULL; (r = jt_next(v, &it, &el)) > 0;)
        got[n++] = el.p;
    assert_int_equal(r, 0);
    assert_int_equal(n, 5);
    assert_int_equal(*got[0], '"');
    assert_int_equal(*got[1], '{');
    assert_int_equal(*got[2], '[');
    assert_int_equal(*got[4], '3');
    const char *s;
    size_t sn;
    assert_int_equal(jt_string((jt_val){got[0], v.end}, &s, &sn), 0);
    assert_int_equal(sn, 1);
    assert_memory_equal(s, "a", 1);
    assert_int_equal(jt_string((jt_val){got[3], v.end}, &s, &sn), -1); /* an escape */
    assert_int_equal(jt_string((jt_val){got[4], v.end}, &s, &sn), -1); /* a number */
    const char *it = NULL;
    assert_int_equal(jt_next(val("[]"), &it, &el), 0);
    it = NULL;
    assert_int_equal(jt_next(val("{}"), &it, &el), -1);
    it = NULL;
    assert_int_equal(jt_next(val("[1 2]"), &it, &el), 1);
    assert_int_equal(jt_next(val("[1 2]"), &it, &el), -1);
}

/* The documents the differential tests read, as written (hand-made text:
 * white space, escapes) and as the store writes them (json_dumps). */
static const char *const docs[] = {
    "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"100m\"}}},"
    "{\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}}",
    "{\"spec\":{\"containers\":[{\"resources\":{}},{\"name\":\"x\"}]}}",
    "{\"spec\":{\"containers\":null}}",
    "{\"spec\":{\"containers\":{\"resources\":1}}}",
    "{\"spec\":{\"containers\":[1,\"a\",null,[{\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]]}}",
    "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1 2\"}}}]}}",
    "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"\"}}}]}}",
    "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":5}}}]}}",
    "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"abc\"}}}]}}",
    "{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"1\\u0030m\"}}}]}}",
    "{\"sp\\u0065c\":{\"size\":\"5Gi\"},\"spec\":{\"size\":\"1Gi\"}}",
    "{ \"spec\" : { \"size\" : \"10Gi\" , \"containers\" : [ ] } , \"status\" : { } }",
    "{\"spec\":{\"size\":\"1e3\",\"a b\":{\"c\":\"2\"}}}",
    "{\"metadata\":{\"name\":\"x\"},\"spec\":[]}",
    "[]",
    "\"spec\"",
    "{\"spec\":{\"size\":\"9223372036854775807\"},\"x\":\"}\"}",
};

static const char *const paths[] = {
    ".spec.containers[*].resources.requests.cpu",
    ".spec.size",
    ".spec['a b'].c",
    ".spec.containers[*]",
    ".spec",
    ".spec.containers[0].resources.requests.cpu", /* not a plain chain: declined */
    "..size",                                     /* recursive descent: declined */
};

/* Each document as written and as json_dumps writes it. */
static char *variant(size_t d, int dumped)
{
    if (!dumped) return strdup(docs[d]);
    json_t *j = json_loads(docs[d], JSON_DECODE_ANY, NULL);
    char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    return s;
}

static void test_sum_text_matches_parsed(void **state)
{
    (void)state;
    size_t answered = 0, declined = 0;
    for (size_t p = 0; p < sizeof paths / sizeof *paths; p++) {
        char err[512];
        int code;
        jp_expr *e = jp_compile_source_path(paths[p], &code, err, sizeof err);
        assert_non_null(e);
        for (size_t d = 0; d < sizeof docs / sizeof *docs; d++)
            for (int dumped = 0; dumped < 2; dumped++) {
                char *text = variant(d, dumped);
                assert_non_null(text);
                json_t *obj = json_loads(text, JSON_DECODE_ANY, NULL);
                assert_non_null(obj);
                qty ts, ps;
                if (jp_quantity_sum_text(e, text, strlen(text), &ts) == 0) {
                    answered++;
                    assert_int_equal(jp_quantity_sum(e, obj, &ps, err, sizeof err), 0);
                    assert_int_equal(qty_cmp(&ts, &ps), 0);
                    char a[64], b[64];
                    qty_format_str(&ts, a, sizeof a);
                    qty_format_str(&ps, b, sizeof b);
                    assert_string_equal(a, b);
                } else {
                    declined++;
                }
                json_decref(obj);
                free(text);
            }
        jp_free(e);
    }
    /* both sides exercised: the common documents answered, the odd declined */
    assert_true(answered >= 10);
    assert_true(declined >= 10);
}

static void test_usage_text_matches_parsed(void **state)
{
    (void)state;
    const char *specs[] = {
        "{\"limit\":\"10\",\"sources\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"op\":\"count\"}]}",
        "{\"limit\":\"10\",\"sources\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"op\":\"add\","
        "\"path\":\".spec.containers[*].resources.requests.cpu\"},{\"apiVersion\":\"v1\","
        "\"kind\":\"Pod\",\"op\":\"sub\",\"path\":\".spec.size\"},{\"apiVersion\":\"v1\","
        "\"kind\":\"Pod\",\"op\":\"count\"}]}",
        "{\"limit\":\"10\",\"sources\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"op\":\"sub\","
        "\"path\":\".spec.size\"}]}",
        "{\"limit\":\"10\",\"sources\":[{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"op\":"
        "\"count\"}]}",
        /* needs the parsed object: declined */
        "{\"limit\":\"10\",\"sources\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"op\":\"count\"}],"
        "\"scopeSelectors\":[{\"matchLabels\":{\"a\":\"b\"}}]}",
        "{\"limit\":\"10\",\"sources\":[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"op\":\"add\","
        "\"cel\":\"quantity('1')\"}]}",
    };
    size_t answered = 0;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        char err[1024];
        json_t *spec = json_loads(specs[i], 0, NULL);
        cq_quota *q = cq_compile(spec, false, err, sizeof err);
        assert_non_null(q);
        for (size_t d = 0; d < sizeof docs / sizeof *docs; d++) {
            char *text = variant(d, 1);
            json_t *obj = json_loads(text, JSON_DECODE_ANY, NULL);
            bool tm, pm, problem = true;
            qty tu, tn, pu, pn;
            if (cq_object_usage_text(q, "", "v1", "Pod", text, strlen(text), &tm, &tu, &tn) == 0) {
                answered++;
                assert_int_equal(cq_object_usage(q, "", "v1", "Pod", obj, NULL, &pm, &pu, &pn,
                                                 &problem, err, sizeof err),
                                 0);
                assert_false(problem);
                assert_int_equal(tm, pm);
                assert_int_equal(qty_cmp(&tu, &pu), 0);
                assert_int_equal(qty_cmp(&tn, &pn), 0);
            } else {
                assert_true(i >= 1); /* a count of Pods always answers */
            }
            json_decref(obj);
            free(text);
        }
        cq_free(q);
        json_decref(spec);
    }
    assert_true(answered >= 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_members),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_elements_and_strings),
        cmocka_unit_test(test_sum_text_matches_parsed),
        cmocka_unit_test(test_usage_text_matches_parsed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
