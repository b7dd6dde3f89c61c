/* test_selector.c - label/field selectors against upstream's tables
 * (k8s.io/apimachinery/pkg/labels/selector_test.go, fields/selector_test.go)
 * and upstream error texts, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/names.h"
#include "core/selector.h"

#include <stdlib.h>
#include <string.h>

#define QNAME_MSG                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex used for validation "  \
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LABEL_VALUE_MSG                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue' or 'my_value' or " \
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define SUBDOMAIN_MSG                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

/* Parse, expect success, return String() (caller frees). */
static char *restring(const char *in)
{
    char err[1024] = "";
    sel_t *s = sel_parse_labels(in, err, sizeof err);
    if (!s) fail_msg("Parse(%s) failed: %s", in, err);
    char *out = sel_to_string(s);
    sel_free(s);
    return out;
}

static void expect_restring(const char *in, const char *want)
{
    char *got = restring(in);
    assert_string_equal(got, want);
    free(got);
}

static void expect_label_error(const char *in, const char *want)
{
    char err[4096] = "";
    sel_t *s = sel_parse_labels(in, err, sizeof err);
    if (s) fail_msg("Parse(%s) succeeded, want error %s", in, want);
    assert_string_equal(err, want);
}

static json_t *labels_of(const char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    assert_non_null(j);
    return j;
}

static void expect_match(const char *sel, const char *labels, bool want)
{
    char err[1024];
    sel_t *s = sel_parse_labels(sel, err, sizeof err);
    if (!s) fail_msg("Parse(%s): %s", sel, err);
    json_t *l = labels_of(labels);
    if (sel_matches(s, l) != want) fail_msg("%s vs %s: want %d", sel, labels, want);
    json_decref(l);
    sel_free(s);
}

/* TestSelectorParse: good strings re-string to themselves minus spaces. */
static void test_parse_good(void **state)
{
    static const char *good[] = {
        "x=a,y=b,z=c", "", "x!=a,y=b", "x=", "x= ", "x=,z= ", "x= ,z= ", "!x", "x>1", "x>1,z<5"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char want[64];
        size_t o = 0;
        for (const char *p = good[i]; *p; p++)
            if (*p != ' ') want[o++] = *p;
        want[o] = '\0';
        expect_restring(good[i], want);
    }
}

static void test_parse_bad(void **state)
{
    expect_label_error("x=a||y=b", "unable to parse requirement: values[0][x]: Invalid value: "
                                   "\"a||y\": " LABEL_VALUE_MSG);
    expect_label_error("x==a==b", "found '==', expected: ',' or 'end of string'");
    expect_label_error("!x=a", "found '=', expected: ',' or 'end of string'");
    expect_label_error("x<a", "unable to parse requirement: values[0]: Invalid value: \"a\": for "
                              "'Gt', 'Lt' operators, the value must be an integer");
}

static void test_deterministic(void **state)
{
    char *a = restring("x=a,a=x"), *b = restring("a=x,x=a");
    assert_string_equal(a, b);
    assert_string_equal(a, "a=x,x=a");
    free(a);
    free(b);
}

/* TestSelectorMatches */
static void test_matches(void **state)
{
    expect_match("", "{\"x\":\"y\"}", true);
    expect_match("x=y", "{\"x\":\"y\"}", true);
    expect_match("x=y,z=w", "{\"x\":\"y\",\"z\":\"w\"}", true);
    expect_match("x!=y,z!=w", "{\"x\":\"z\",\"z\":\"a\"}", true);
    expect_match("notin=in", "{\"notin\":\"in\"}", true);
    expect_match("x", "{\"x\":\"z\"}", true);
    expect_match("!x", "{\"y\":\"z\"}", true);
    expect_match("x>1", "{\"x\":\"2\"}", true);
    expect_match("x<1", "{\"x\":\"0\"}", true);
    expect_match("x=z", "{}", false);
    expect_match("x=y", "{\"x\":\"z\"}", false);
    expect_match("x=y,z=w", "{\"x\":\"w\",\"z\":\"w\"}", false);
    expect_match("x!=y,z!=w", "{\"x\":\"z\",\"z\":\"w\"}", false);
    expect_match("x", "{\"y\":\"z\"}", false);
    expect_match("!x", "{\"x\":\"z\"}", false);
    expect_match("x>1", "{\"x\":\"0\"}", false);
    expect_match("x<1", "{\"x\":\"2\"}", false);
    const char *set = "{\"foo\":\"bar\",\"baz\":\"blah\"}";
    expect_match("foo=bar", set, true);
    expect_match("baz=blah", set, true);
    expect_match("foo=bar,baz=blah", set, true);
    expect_match("foo=blah", set, false);
    expect_match("baz=bar", set, false);
    expect_match("foo=bar,foobar=bar,baz=blah", set, false);
    /* set-based, and a non-integer label never satisfies Gt */
    expect_match("x in (a,b)", "{\"x\":\"b\"}", true);
    expect_match("x notin (a,b)", "{}", true);
    expect_match("x notin (a,b)", "{\"x\":\"a\"}", false);
    expect_match("z>1", "{\"z\":\"v2\"}", false);
    expect_match("x=", "{\"x\":\"\"}", true);
}

/* TestSetSelectorParser: valid inputs and their canonical strings. */
static void test_set_parser_valid(void **state)
{
    static const char *cases[][2] = {
        {"", ""},
        {"\rx", "x"},
        {"this-is-a-dns.domain.com/key-with-dash", "this-is-a-dns.domain.com/key-with-dash"},
        {"this-is-another-dns.domain.com/key-with-dash in (so,what)",
         "this-is-another-dns.domain.com/key-with-dash in (so,what)"},
        {"0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)",
         "0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)"},
        {"foo  in\t (abc)", "foo in (abc)"},
        {"x notin\n (abc)", "x notin (abc)"},
        {"x  notin\t\t\t(abc,def)", "x notin (abc,def)"},
        {"x in (abc,def)", "x in (abc,def)"},
        {"x in (abc,)", "x in (,abc)"},
        {"x in ()", "x in ()"},
        {"x notin (abc,,def),bar,z in (),w", "bar,w,x notin (,abc,def),z in ()"},
        {"x,y in (a)", "x,y in (a)"},
        {"x=a", "x=a"},
        {"x>1", "x>1"},
        {"x<7", "x<7"},
        {"x=a,y!=b", "x=a,y!=b"},
        {"x=a,y!=b,z in (h,i,j)", "x=a,y!=b,z in (h,i,j)"},
        {"x notin ( )", "x notin ()"},
        {"x notin (, a)", "x notin (,a)"},
        {"a ", "a"},
        {"a in (x,y,notin, z,in)", "a in (in,notin,x,y,z)"},
        {"x in (b,a,b)", "x in (a,b)"},
        {"x==a", "x==a"},
        {"in=notin", "in=notin"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_restring(cases[i][0], cases[i][1]);
}

static void test_set_parser_invalid(void **state)
{
    expect_label_error("x,,y", "found ',', expected: identifier after ','");
    expect_label_error(",x,y", "found ',', expected: !, identifier, or 'end of string'");
    expect_label_error("x nott in (y)", "unable to parse requirement: found 'nott', expected: in, "
                                        "notin, =, ==, !=, gt, lt");
    expect_label_error("a in (xyz),", "found '', expected: identifier after ','");
    expect_label_error("a in (xyz)b notin ()", "found 'b', expected: ',' or 'end of string'");
    expect_label_error("a in (xyz abc)",
                       "unable to parse requirement: found 'abc', expected: ',' or ')'");
    expect_label_error("a notin(",
                       "unable to parse requirement: found '', expected: ',', ')' or identifier");
    expect_label_error("a (", "unable to parse requirement: found '(', expected: in, notin, =, ==, "
                              "!=, gt, lt");
    expect_label_error("(", "found '(', expected: !, identifier, or 'end of string'");
    expect_label_error("app=foo bar", "found 'bar', expected: ',' or 'end of string'");
    expect_label_error("x in a", "unable to parse requirement: found 'a' expected: '('");
    expect_label_error("x in (a,=)", "unable to parse requirement: found '=', expected: ',', or "
                                     "identifier");
    expect_label_error("x=(", "unable to parse requirement: found '(', expected: identifier");
    expect_label_error("!", "unable to parse requirement: found '', expected: identifier");
}

static void test_key_errors(void **state)
{
    expect_label_error("x/y/z=a",
                       "unable to parse requirement: <nil>: Invalid value: \"x/y/z\": a qualified "
                       "name " QNAME_MSG " with an optional DNS subdomain prefix and '/' (e.g. "
                       "'example.com/MyName')");
    expect_label_error("-a", "unable to parse requirement: <nil>: Invalid value: \"-a\": name "
                             "part " QNAME_MSG);
    expect_label_error("Example.com/a", "unable to parse requirement: <nil>: Invalid value: "
                                        "\"Example.com/a\": prefix part " SUBDOMAIN_MSG);
    expect_label_error("/a", "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix "
                             "part must be non-empty");
    /* several messages join with "; " */
    expect_label_error("a/-", "unable to parse requirement: <nil>: Invalid value: \"a/-\": name "
                              "part " QNAME_MSG);
    char key[80];
    memset(key, 'a', 64);
    strcpy(key + 64, "=b");
    expect_label_error(key, "unable to parse requirement: <nil>: Invalid value: "
                            "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": "
                            "name part must be no more than 63 characters");
    expect_label_error("a/", "unable to parse requirement: <nil>: Invalid value: \"a/\": name part "
                             "must be non-empty; name part " QNAME_MSG);
    /* a too-long value gives two messages for one field error */
    char v[90] = "x=";
    memset(v + 2, 'b', 64);
    v[66] = '-';
    v[67] = '\0';
    expect_label_error(v, "unable to parse requirement: values[0][x]: Invalid value: "
                          "\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-\": "
                          "must be no more than 63 characters; " LABEL_VALUE_MSG);
    /* Go quoting of control characters in the offending value */
    expect_label_error("x=a\x01", "unable to parse requirement: values[0][x]: Invalid value: "
                                  "\"a\\x01\": " LABEL_VALUE_MSG);
}

/* ---- metav1.LabelSelector ---- */

static sel_t *from_json(const char *js, char *err, size_t n)
{
    json_t *j = json_loads(js, JSON_DECODE_ANY, NULL);
    assert_non_null(j);
    sel_t *s = sel_from_json(j, err, n);
    json_decref(j);
    return s;
}

static void expect_json_error(const char *js, const char *want)
{
    char err[4096] = "";
    sel_t *s = from_json(js, err, sizeof err);
    if (s) fail_msg("%s: want error %s", js, want);
    assert_string_equal(err, want);
}

static void test_label_selector_json(void **state)
{
    char err[1024] = "";
    json_t *l = labels_of("{\"x\":\"foo\",\"y\":\"baz\"}");

    sel_t *s = sel_from_json(NULL, err, sizeof err);
    assert_true(sel_matches_nothing(s));
    assert_false(sel_matches(s, l));
    sel_free(s);
    s = from_json("null", err, sizeof err);
    assert_false(sel_matches(s, l));
    sel_free(s);

    s = from_json("{}", err, sizeof err);
    assert_true(sel_empty(s));
    assert_true(sel_matches(s, l));
    sel_free(s);

    /* TestRequirementSelectorMatching rows, as LabelSelector objects */
    static const struct {
        const char *sel, *labels;
        bool match;
    } rows[] = {
        {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[\"foo\"]},"
         "{\"key\":\"y\",\"operator\":\"NotIn\",\"values\":[\"alpha\"]}]}",
         "{\"x\":\"foo\",\"y\":\"baz\"}", true},
        {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[\"foo\"]},"
         "{\"key\":\"y\",\"operator\":\"In\",\"values\":[\"alpha\"]}]}",
         "{\"x\":\"foo\",\"y\":\"baz\"}", false},
        {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"NotIn\",\"values\":[\"\"]},"
         "{\"key\":\"y\",\"operator\":\"Exists\"}]}",
         "{\"y\":\"\"}", true},
        {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"DoesNotExist\"},"
         "{\"key\":\"y\",\"operator\":\"Exists\"}]}",
         "{\"y\":\"\"}", true},
        {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"NotIn\",\"values\":[\"\"]},"
         "{\"key\":\"y\",\"operator\":\"DoesNotExist\"}]}",
         "{\"y\":\"\"}", false},
        {"{\"matchExpressions\":[{\"key\":\"x\",\"operator\":\"In\",\"values\":[\"\"]}]}",
         "{\"y\":\"baz\"}", false},
        {"{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"tier\","
         "\"operator\":\"In\",\"values\":[\"b\",\"a\"]}]}",
         "{\"app\":\"web\",\"tier\":\"a\"}", true},
        {"{\"matchLabels\":{\"app\":\"web\"}}", "{\"app\":\"db\"}", false},
        {"{\"matchLabels\":{\"app\":\"web\"}}", "{}", false},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        s = from_json(rows[i].sel, err, sizeof err);
        if (!s) fail_msg("%s: %s", rows[i].sel, err);
        json_t *lab = labels_of(rows[i].labels);
        if (sel_matches(s, lab) != rows[i].match) fail_msg("row %zu", i);
        json_decref(lab);
        sel_free(s);
    }

    /* String(): sorted by key, values sorted in output only */
    s = from_json("{\"matchLabels\":{\"b\":\"1\"},\"matchExpressions\":[{\"key\":\"a\","
                  "\"operator\":\"NotIn\",\"values\":[\"z\",\"y\"]}]}",
                  err, sizeof err);
    char *str = sel_to_string(s);
    assert_string_equal(str, "a notin (y,z),b=1");
    assert_string_equal(sel_req_value(s, 0, 0), "z");
    free(str);
    sel_free(s);
    json_decref(l);
}

static void test_label_selector_json_errors(void **state)
{
    expect_json_error("{\"matchExpressions\":[{\"key\":\"name\",\"operator\":\"Seriously\"}]}",
                      "\"Seriously\" is not a valid label selector operator");
    expect_json_error("{\"matchExpressions\":[{\"key\":\"name\"}]}",
                      "\"\" is not a valid label selector operator");
    expect_json_error(
        "{\"matchExpressions\":[{\"key\":\"name\",\"operator\":\"In\",\"values\":[]}]}",
        "values: Invalid value: []string(nil): for 'in', 'notin' operators, values "
        "set can't be empty");
    expect_json_error("{\"matchExpressions\":[{\"key\":\"k\",\"operator\":\"Exists\",\"values\":"
                      "[\"a\",\"b\"]}]}",
                      "values: Invalid value: []string{\"a\", \"b\"}: values set must be empty for "
                      "exists and does not exist");
    expect_json_error("{\"matchLabels\":{\"k\":\"v v\"}}",
                      "values[0][k]: Invalid value: \"v v\": " LABEL_VALUE_MSG);
    expect_json_error("{\"matchExpressions\":[{\"key\":\"-k\",\"operator\":\"In\"}]}",
                      "[key: Invalid value: \"-k\": name part " QNAME_MSG
                      ", values: Invalid value: []string(nil): for 'in', 'notin' operators, "
                      "values set can't be empty]");
}

/* ---- field selectors ---- */

static void expect_fields_error(const char *in, const char *want)
{
    char err[1024] = "";
    sel_t *s = sel_parse_fields(in, err, sizeof err);
    if (s) fail_msg("fields %s: want error %s", in, want);
    assert_string_equal(err, want);
}

static void expect_fields_string(const char *in, const char *want)
{
    char err[1024] = "";
    sel_t *s = sel_parse_fields(in, err, sizeof err);
    if (!s) fail_msg("fields %s: %s", in, err);
    char *got = sel_to_string(s);
    assert_string_equal(got, want);
    free(got);
    sel_free(s);
}

static void test_fields_parse(void **state)
{
    expect_fields_string("x=a,y=b,z=c", "x=a,y=b,z=c");
    expect_fields_string("", "");
    expect_fields_string("x!=a,y=b", "x!=a,y=b");
    expect_fields_string("x=a\\=b", "x=a\\=b");
    expect_fields_string("x=a\\,b", "x=a\\,b");
    expect_fields_string("x=a\\\\b", "x=a\\\\b");
    expect_fields_string("x==a", "x=a");
    expect_fields_string("z=1,a=2", "a=2,z=1");
    expect_fields_string("x=", "x=");
    expect_fields_string("=", "");
    expect_fields_string("a=b,,c=d", "a=b,c=d");
    expect_fields_string("status.phase = Running", "status.phase = Running");

    expect_fields_error("x=a||y=b", "invalid field selector: unescaped character in value: 61");
    expect_fields_error("x==a==b", "invalid field selector: unescaped character in value: 61");
    expect_fields_error("x=a,b", "invalid selector: 'x=a,b'; can't understand 'b'");
    expect_fields_error("x in (a)", "invalid selector: 'x in (a)'; can't understand 'x in (a)'");
    expect_fields_error("x in (a,b,c)", "invalid selector: 'x in (a,b,c)'; can't understand 'b'");
    expect_fields_error("x", "invalid selector: 'x'; can't understand 'x'");
    expect_fields_error("x=a\\", "invalid field selector: invalid escape sequence: \\");
    expect_fields_error("x=a\\b", "invalid field selector: invalid escape sequence: \\b");
    expect_fields_error("x=\\\xc3\xa9", "invalid field selector: invalid escape sequence: "
                                        "\\\xc3\xa9");
}

/* sel_field_get over the same flat object (strings; true as "true"). */
static const char *get_field(void *arg, const char *key)
{
    const json_t *v = json_object_get(arg, key);
    return json_is_true(v) ? "true" : json_string_value(v);
}

static void test_fields_match(void **state)
{
    char err[256];
    json_t *f = labels_of("{\"metadata.name\":\"a,b\",\"spec.nodeName\":\"n1\","
                          "\"spec.unschedulable\":true}");
    static const struct {
        const char *sel;
        bool match;
    } rows[] = {
        {"", true},
        {"metadata.name=a\\,b", true},
        {"metadata.name!=a\\,b", false},
        {"spec.nodeName=n1,metadata.name==a\\,b", true},
        {"spec.nodeName=n2", false},
        {"spec.nodeName!=n2", true},
        {"status.phase=", true}, /* missing reads as "" */
        {"status.phase!=Running", true},
        {"status.phase=Running", false},
        {"spec.unschedulable=true", true},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sel_t *s = sel_parse_fields(rows[i].sel, err, sizeof err);
        if (!s) fail_msg("%s: %s", rows[i].sel, err);
        if (sel_matches_fields(s, f) != rows[i].match) fail_msg("row %zu: %s", i, rows[i].sel);
        if (sel_matches_fields_get(s, get_field, f) != rows[i].match)
            fail_msg("row %zu (get): %s", i, rows[i].sel);
        sel_free(s);
    }
    json_decref(f);
}

static void test_fields_supported_and_requires(void **state)
{
    char err[256] = "";
    static const char *const supported[] = {"metadata.name", "metadata.namespace", NULL};
    sel_t *s = sel_parse_fields("metadata.name=a,spec.foo=b", err, sizeof err);
    assert_non_null(s);
    assert_false(sel_fields_supported(s, supported, err, sizeof err));
    assert_string_equal(err, "field label not supported: spec.foo");
    const char *v = NULL;
    assert_true(sel_fields_requires(s, "metadata.name", &v));
    assert_string_equal(v, "a");
    assert_false(sel_fields_requires(s, "metadata.namespace", &v));
    sel_free(s);

    s = sel_parse_fields("metadata.namespace!=x,metadata.name==y", err, sizeof err);
    assert_true(sel_fields_supported(s, supported, err, sizeof err));
    assert_false(sel_fields_requires(s, "metadata.namespace", &v));
    assert_true(sel_fields_requires(s, "metadata.name", &v));
    assert_string_equal(v, "y");
    assert_int_equal(sel_count(s), 2);
    assert_string_equal(sel_key(s, 0), "metadata.name");
    assert_int_equal(sel_req_op(s, 1), SEL_NOT_EQUALS);
    sel_free(s);
}

static void test_label_requires(void **state)
{
    char err[256];
    const char *v;
    sel_t *s = sel_parse_labels("a in (x),b=y,c in (p,q),d!=z", err, sizeof err);
    assert_non_null(s);
    assert_true(sel_requires(s, "a", &v));
    assert_string_equal(v, "x");
    assert_true(sel_requires(s, "b", &v));
    assert_string_equal(v, "y");
    assert_false(sel_requires(s, "c", &v));
    assert_false(sel_requires(s, "d", &v));
    assert_false(sel_requires(s, "e", &v));
    sel_free(s);
}

/* The string round-trips: parse(String(s)) gives the same String(). */
static void test_round_trip(void **state)
{
    static const char *in[] = {"x notin (abc,,def),bar,z in (),w", "a>1,!b,c==d,e!=f",
                               "k8s.io/app in (web, db)"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        char *a = restring(in[i]);
        char *b = restring(a);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    char err[64];
    sel_t *s = sel_parse_fields("a=x\\,y\\=z\\\\,b!=", err, sizeof err);
    char *str = sel_to_string(s);
    sel_t *s2 = sel_parse_fields(str, err, sizeof err);
    char *str2 = sel_to_string(s2);
    assert_string_equal(str, str2);
    assert_string_equal(sel_req_value(s2, 0, 0), "x,y=z\\");
    free(str);
    free(str2);
    sel_free(s);
    sel_free(s2);
}

static void test_names_go_quote(void **state)
{
    char buf[64];
    assert_string_equal(name_go_quote("a\"b\\c\n\t\x7f", buf, sizeof buf),
                        "\"a\\\"b\\\\c\\n\\t\\x7f\"");
    assert_string_equal(name_go_quote("r\xc4\x81", buf, sizeof buf), "\"r\xc4\x81\"");
    long long v;
    assert_true(name_parse_int64("+12", &v));
    assert_int_equal(v, 12);
    assert_true(name_parse_int64("-9223372036854775808", &v));
    assert_false(name_parse_int64("9223372036854775808", &v));
    assert_false(name_parse_int64("1_000", &v));
    assert_false(name_parse_int64("", &v));
    assert_false(name_parse_int64(" 1", &v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_bad),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_matches),
        cmocka_unit_test(test_set_parser_valid),
        cmocka_unit_test(test_set_parser_invalid),
        cmocka_unit_test(test_key_errors),
        cmocka_unit_test(test_label_selector_json),
        cmocka_unit_test(test_label_selector_json_errors),
        cmocka_unit_test(test_fields_parse),
        cmocka_unit_test(test_fields_match),
        cmocka_unit_test(test_fields_supported_and_requires),
        cmocka_unit_test(test_label_requires),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_names_go_quote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
