/* test_validation.c - upstream name/ObjectMeta validators: the valid/invalid
 * tables of util/validation/validation_test.go and api/validation, and the
 * exact cause texts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "api/status.h"
#include "api/validation.h"

#include <stdlib.h>
#include <string.h>

#define SUBDOMAIN_MSG                                                                              \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "   \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
#define LABEL_MSG                                                                                  \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "   \
    "must start and end with an alphanumeric character (e.g. 'my-name' or '123-abc', regex used "  \
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
#define DNS1035_MSG                                                                                \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "   \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name' or 'abc-123', "  \
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
#define QNAME_MSG                                                                                  \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "    \
    "alphanumeric character (e.g. 'MyName' or 'my.name' or '123-abc', regex used for validation "  \
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define LABEL_VALUE_MSG                                                                            \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "    \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue' or 'my_value' or " \
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"

typedef int (*str_validator)(const char *, const char *, json_t *);

static char *rep(char c, size_t n, const char *tail)
{
    char *s = malloc(n + strlen(tail) + 1);
    memset(s, c, n);
    strcpy(s + n, tail);
    return s;
}

static void expect_valid(str_validator fn, const char *v)
{
    json_t *c = json_array();
    if (fn(v, "f", c) != 0) {
        char *d = json_dumps(c, 0);
        fail_msg("expected valid %s: %s", v, d);
    }
    json_decref(c);
}

static void expect_invalid(str_validator fn, const char *v)
{
    json_t *c = json_array();
    int n = fn(v, "f", c);
    if (n == 0 || (size_t)n != json_array_size(c)) fail_msg("expected invalid '%s'", v);
    json_decref(c);
}

static void check_table(str_validator fn, const char **good, size_t ng, const char **bad, size_t nb)
{
    for (size_t i = 0; i < ng; i++)
        expect_valid(fn, good[i]);
    for (size_t i = 0; i < nb; i++)
        expect_invalid(fn, bad[i]);
}

#define TABLE(fn, good, bad)                                                                       \
    check_table(fn, good, sizeof good / sizeof *good, bad, sizeof bad / sizeof *bad)

/* Cause i of a list: "<field>: <message>" as api_err_invalid joins them. */
static void expect_cause(const json_t *causes, size_t i, const char *field, const char *msg,
                         const char *reason)
{
    json_t *c = json_array_get(causes, i);
    if (!c)
        fail_msg("no cause %zu (have %zu), want %s: %s", i, json_array_size(causes), field, msg);
    assert_string_equal(json_string_value(json_object_get(c, "field")), field);
    assert_string_equal(json_string_value(json_object_get(c, "message")), msg);
    if (reason) assert_string_equal(json_string_value(json_object_get(c, "reason")), reason);
}

/* ---- upstream tables ---- */

static void test_dns1123_label(void **state)
{
    char *a63 = rep('a', 63, ""), *a64 = rep('a', 64, "");
    const char *good[] = {"a",  "ab",  "abc", "a1",  "a-1",        "a--1--2--b", "0",
                          "01", "012", "1a",  "1-a", "1--a--b--2", a63};
    const char *bad[] = {"",    "A",  "ABC", "aBc", "A1",  "A-1", "1-A", "-",   "a-",
                         "-a",  "1-", "-1",  "_",   "a_",  "_a",  "a_b", "1_",  "_1",
                         "1_2", ".",  "a.",  ".a",  "a.b", "1.",  ".1",  "1.2", " ",
                         "a ",  " a", "a b", "1 ",  " 1",  "1 2", a64};
    TABLE(val_dns1123_label, good, bad);

    json_t *c = json_array();
    assert_int_equal(val_dns1123_label("a.b", "metadata.namespace", c), 1);
    expect_cause(c, 0, "metadata.namespace", "Invalid value: \"a.b\": must not contain dots",
                 "FieldValueInvalid");
    assert_int_equal(val_dns1123_label("A_b", "f", c), 1);
    expect_cause(c, 1, "f", "Invalid value: \"A_b\": " LABEL_MSG, NULL);
    assert_int_equal(val_dns1123_label(a64, "f", c), 1);
    char want[200];
    snprintf(want, sizeof want, "Invalid value: \"%s\": must be no more than 63 characters", a64);
    expect_cause(c, 2, "f", want, NULL);
    json_decref(c);
    free(a63);
    free(a64);
}

static void test_dns1123_subdomain(void **state)
{
    char *a253 = rep('a', 253, ""), *a254 = rep('a', 254, "");
    const char *good[] = {"a",
                          "ab",
                          "abc",
                          "a1",
                          "a-1",
                          "a--1--2--b",
                          "0",
                          "01",
                          "012",
                          "1a",
                          "1-a",
                          "1--a--b--2",
                          "a.a",
                          "ab.a",
                          "abc.a",
                          "a1.a",
                          "a-1.a",
                          "a--1--2--b.a",
                          "a.1",
                          "ab.1",
                          "abc.1",
                          "a1.1",
                          "a-1.1",
                          "a--1--2--b.1",
                          "0.a",
                          "01.a",
                          "012.a",
                          "1a.a",
                          "1-a.a",
                          "0.1",
                          "01.1",
                          "012.1",
                          "1a.1",
                          "1-a.1",
                          "1--a--b--2.1",
                          "a.b.c.d.e",
                          "aa.bb.cc.dd.ee",
                          "1.2.3.4.5",
                          "11.22.33.44.55",
                          a253};
    const char *bad[] = {"",
                         "A",
                         "ABC",
                         "aBc",
                         "A1",
                         "A-1",
                         "1-A",
                         "-",
                         "a-",
                         "-a",
                         "1-",
                         "-1",
                         "_",
                         "a_",
                         "_a",
                         "a_b",
                         "1_",
                         "_1",
                         "1_2",
                         ".",
                         "a.",
                         ".a",
                         "a..b",
                         "1.",
                         ".1",
                         "1..2",
                         " ",
                         "a ",
                         " a",
                         "a b",
                         "1 ",
                         " 1",
                         "1 2",
                         "A.a",
                         "aB.a",
                         "ab.A",
                         "A1.a",
                         "a1.A",
                         "A.1",
                         "aB.1",
                         "A1.1",
                         "1A.1",
                         "0.A",
                         "01.A",
                         "012.A",
                         "1A.a",
                         "1a.A",
                         "A.B.C.D.E",
                         "AA.BB.CC.DD.EE",
                         "a.B.c.d.e",
                         "aa.bB.cc.dd.ee",
                         "a@b",
                         "a,b",
                         "a_b",
                         "a;b",
                         "a:b",
                         "a%b",
                         "a?b",
                         "a$b",
                         a254};
    TABLE(val_dns1123_subdomain, good, bad);

    json_t *c = json_array();
    assert_int_equal(val_dns1123_subdomain("Example.com", "metadata.name", c), 1);
    expect_cause(c, 0, "metadata.name", "Invalid value: \"Example.com\": " SUBDOMAIN_MSG,
                 "FieldValueInvalid");
    char *long_bad = rep('a', 254, "-");
    assert_int_equal(val_dns1123_subdomain(long_bad, "f", c), 2);
    json_decref(c);
    free(long_bad);
    free(a253);
    free(a254);
}

static void test_dns1035_label(void **state)
{
    char *a63 = rep('a', 63, ""), *a64 = rep('a', 64, "");
    const char *good[] = {"a", "ab", "abc", "a1", "a-1", "a--1--2--b", a63};
    const char *bad[] = {"0",  "01",  "012", "1a", "1-a", "1--a--b--2", "",   "A",  "ABC", "aBc",
                         "A1", "A-1", "1-A", "-",  "a-",  "-a",         "1-", "-1", "_",   "a_",
                         "_a", "a_b", "1_",  "_1", "1_2", ".",          "a.", ".a", "a.b", "1.",
                         ".1", "1.2", " ",   "a ", " a",  "a b",        "1 ", " 1", "1 2", a64};
    TABLE(val_dns1035_label, good, bad);
    json_t *c = json_array();
    val_dns1035_label("1abc", "metadata.name", c);
    expect_cause(c, 0, "metadata.name", "Invalid value: \"1abc\": " DNS1035_MSG, NULL);
    json_decref(c);
    free(a63);
    free(a64);
}

static void test_qualified_name(void **state)
{
    char *a63 = rep('a', 63, ""), *a64 = rep('a', 64, "");
    char *long_ok =
        rep('a', 253, "/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    char *long_bad = rep('a', 254, "/abc");
    const char *good[] = {"simple",
                          "now-with-dashes",
                          "1-starts-with-num",
                          "1234",
                          "simple/simple",
                          "now-with-dashes/simple",
                          "now-with-dashes/now-with-dashes",
                          "now.with.dots/simple",
                          "now-with.dashes-and.dots/simple",
                          "1-num.2-num/3-num",
                          "1234/5678",
                          "1.2.3.4/5678",
                          "Uppercase_Is_OK_123",
                          "example.com/Uppercase_Is_OK_123",
                          "requests.storage-foo",
                          a63,
                          long_ok};
    const char *bad[] = {"nospecialchars%^=@",
                         "cantendwithadash-",
                         "-cantstartwithadash-",
                         "only/one/slash",
                         "Example.com/abc",
                         "example_com/abc",
                         "example.com/",
                         "/simple",
                         a64,
                         long_bad};
    TABLE(val_qualified_name, good, bad);

    json_t *c = json_array();
    assert_int_equal(val_qualified_name("only/one/slash", "f", c), 1);
    expect_cause(c, 0, "f",
                 "Invalid value: \"only/one/slash\": a qualified name " QNAME_MSG
                 " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                 NULL);
    assert_int_equal(val_qualified_name("example.com/", "f", c), 2);
    expect_cause(c, 1, "f", "Invalid value: \"example.com/\": name part must be non-empty", NULL);
    expect_cause(c, 2, "f", "Invalid value: \"example.com/\": name part " QNAME_MSG, NULL);
    assert_int_equal(val_qualified_name("/simple", "f", c), 1);
    expect_cause(c, 3, "f", "Invalid value: \"/simple\": prefix part must be non-empty", NULL);
    assert_int_equal(val_qualified_name("Example.com/abc", "f", c), 1);
    expect_cause(c, 4, "f", "Invalid value: \"Example.com/abc\": prefix part " SUBDOMAIN_MSG, NULL);
    assert_int_equal(val_qualified_name(long_bad, "f", c), 1);
    assert_int_equal(val_qualified_name(a64, "f", c), 1);
    char want[200];
    snprintf(want, sizeof want,
             "Invalid value: \"%s\": name part must be no more than 63 characters", a64);
    expect_cause(c, 6, "f", want, NULL);
    json_decref(c);
    free(a63);
    free(a64);
    free(long_ok);
    free(long_bad);
}

static void test_label_value(void **state)
{
    char *a63 = rep('a', 63, ""), *a64 = rep('a', 64, "");
    const char *good[] = {
        "simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234", a63, ""};
    const char *bad[] = {"nospecialchars%^=@",      "Tama-nui-te-r\xc4\x81.is.M\xc4\x81ori.sun",
                         "\\backslashes\\are\\bad", "-starts-with-dash",
                         "ends-with-dash-",         ".starts.with.dot",
                         "ends.with.dot.",          a64};
    TABLE(val_label_value, good, bad);
    json_t *c = json_array();
    val_label_value("-x", "metadata.labels", c);
    expect_cause(c, 0, "metadata.labels", "Invalid value: \"-x\": " LABEL_VALUE_MSG, NULL);
    json_decref(c);
    free(a63);
    free(a64);
}

static void test_name_kinds(void **state)
{
    json_t *c = json_array();
    /* path segment names */
    assert_int_equal(val_name("a/b%c", VAL_NAME_PATH_SEGMENT, false, "metadata.name", c), 2);
    expect_cause(c, 0, "metadata.name", "Invalid value: \"a/b%c\": may not contain '/'", NULL);
    expect_cause(c, 1, "metadata.name", "Invalid value: \"a/b%c\": may not contain '%'", NULL);
    assert_int_equal(val_name("..", VAL_NAME_PATH_SEGMENT, false, "metadata.name", c), 1);
    expect_cause(c, 2, "metadata.name", "Invalid value: \"..\": may not be '..'", NULL);
    assert_int_equal(val_name(".", VAL_NAME_PATH_SEGMENT, false, "metadata.name", c), 1);
    assert_int_equal(val_name("..", VAL_NAME_PATH_SEGMENT, true, "f", c), 0);
    assert_int_equal(val_name("Any_Thing:ok", VAL_NAME_PATH_SEGMENT, false, "f", c), 0);
    json_array_clear(c);
    /* generateName prefixes: maskTrailingDash */
    assert_int_equal(val_name("b-", VAL_NAME_SUBDOMAIN, true, "f", c), 0);
    assert_int_equal(val_name("foo-", VAL_NAME_LABEL, true, "f", c), 0);
    assert_int_equal(val_name("foo-", VAL_NAME_DNS1035, true, "f", c), 0);
    assert_int_equal(val_name("foo-", VAL_NAME_SUBDOMAIN, false, "f", c), 1);
    assert_int_equal(val_name("-", VAL_NAME_SUBDOMAIN, true, "f", c), 1);
    assert_int_equal(val_name("a_-", VAL_NAME_SUBDOMAIN, true, "f", c), 0); /* "a_" -> "aa" */
    assert_int_equal(val_name("Foo-", VAL_NAME_SUBDOMAIN, true, "metadata.generateName", c), 1);
    expect_cause(c, 2, "metadata.generateName", "Invalid value: \"Foo-\": " SUBDOMAIN_MSG, NULL);
    json_decref(c);
}

/* ---- ObjectMeta ---- */

static json_t *J(const char *s)
{
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    if (!j) fail_msg("bad json %s: %s", s, e.text);
    return j;
}

static void test_object_meta_valid(void **state)
{
    json_t *c = json_array();
    json_t *m = J("{\"name\":\"web-1\",\"namespace\":\"default\",\"generateName\":\"web-\","
                  "\"labels\":{\"app\":\"web\",\"example.com/tier\":\"\"},"
                  "\"annotations\":{\"Example.COM/Note\":\"anything: goes\"},"
                  "\"finalizers\":[\"example.com/cleanup\",\"orphan\"],"
                  "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
                  "\"name\":\"rs\",\"uid\":\"u1\",\"controller\":true}],"
                  "\"managedFields\":[{\"manager\":\"kubectl\",\"operation\":\"Update\","
                  "\"fieldsType\":\"FieldsV1\"}],\"generation\":1}");
    assert_int_equal(val_object_meta(m, true, VAL_NAME_SUBDOMAIN, c), 0);
    assert_int_equal(json_array_size(c), 0);
    json_decref(m);
    m = J("{\"name\":\"kube-system\"}");
    assert_int_equal(val_object_meta(m, false, VAL_NAME_LABEL, c), 0);
    json_decref(m);
    json_decref(c);
}

static void test_object_meta_required(void **state)
{
    json_t *c = json_array();
    json_t *m = J("{}");
    assert_int_equal(val_object_meta(m, true, VAL_NAME_SUBDOMAIN, c), 2);
    expect_cause(c, 0, "metadata.name", "Required value: name or generateName is required",
                 "FieldValueRequired");
    expect_cause(c, 1, "metadata.namespace", "Required value", "FieldValueRequired");
    json_decref(m);

    /* the 422 message a client sees */
    api_err e;
    api_err_init(&e);
    api_err_invalid(&e, "", "ConfigMap", "", c);
    assert_string_equal(e.message, "ConfigMap \"\" is invalid: [metadata.name: Required value: "
                                   "name or generateName is required, metadata.namespace: "
                                   "Required value]");
    api_err_clear(&e);
}

static void test_object_meta_invalid(void **state)
{
    json_t *c = json_array();
    json_t *m = J("{\"name\":\"Bad_Name\",\"namespace\":\"ns\",\"generation\":-1}");
    assert_int_equal(val_object_meta(m, false, VAL_NAME_SUBDOMAIN, c), 3);
    expect_cause(c, 0, "metadata.name", "Invalid value: \"Bad_Name\": " SUBDOMAIN_MSG, NULL);
    expect_cause(c, 1, "metadata.namespace", "Forbidden: not allowed on this type",
                 "FieldValueForbidden");
    expect_cause(c, 2, "metadata.generation",
                 "Invalid value: -1: must be greater than or equal to 0", NULL);
    json_decref(m);

    json_array_clear(c);
    m = J("{\"name\":\"a\",\"namespace\":\"Bad.NS\"}");
    assert_int_equal(val_object_meta(m, true, VAL_NAME_SUBDOMAIN, c), 1);
    expect_cause(c, 0, "metadata.namespace", "Invalid value: \"Bad.NS\": " LABEL_MSG, NULL);
    json_decref(m);

    /* single-error 422 message, as `kubectl create configmap Bad_Name` shows */
    json_array_clear(c);
    m = J("{\"name\":\"Bad_Name\",\"namespace\":\"default\"}");
    val_object_meta(m, true, VAL_NAME_SUBDOMAIN, c);
    api_err e;
    api_err_init(&e);
    api_err_invalid(&e, "", "ConfigMap", "Bad_Name", c);
    assert_string_equal(e.message, "ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid "
                                   "value: \"Bad_Name\": " SUBDOMAIN_MSG);
    api_err_clear(&e);
    json_decref(m);
}

static void test_object_meta_labels_annotations(void **state)
{
    json_t *c = json_array();
    json_t *m = J("{\"name\":\"a\",\"labels\":{\"-bad\":\"ok\",\"good\":\"bad value\"},"
                  "\"annotations\":{\"a/b/c\":\"x\"}}");
    assert_int_equal(val_object_meta(m, false, VAL_NAME_SUBDOMAIN, c), 3);
    expect_cause(c, 0, "metadata.labels", "Invalid value: \"-bad\": name part " QNAME_MSG, NULL);
    expect_cause(c, 1, "metadata.labels", "Invalid value: \"bad value\": " LABEL_VALUE_MSG, NULL);
    expect_cause(c, 2, "metadata.annotations",
                 "Invalid value: \"a/b/c\": a qualified name " QNAME_MSG
                 " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                 NULL);
    json_decref(m);

    /* total annotation size: exactly 256 KiB passes, one byte more fails */
    json_array_clear(c);
    char *big = rep('x', VAL_ANNOTATIONS_MAX_BYTES - 1, "");
    json_t *ann = json_pack("{s:s}", "k", big);
    assert_int_equal(val_annotations(ann, "metadata.annotations", c), 0);
    json_object_set_new(ann, "k2", json_string(""));
    assert_int_equal(val_annotations(ann, "metadata.annotations", c), 1);
    expect_cause(c, 0, "metadata.annotations", "Too long: must have at most 262144 bytes",
                 "FieldValueTooLong");
    json_decref(ann);
    free(big);
    json_decref(c);
}

static void test_object_meta_finalizers_owners(void **state)
{
    json_t *c = json_array();
    json_t *m = J("{\"name\":\"a\",\"finalizers\":[\"orphan\",\"foregroundDeletion\",\"x/y/z\"]}");
    assert_int_equal(val_object_meta(m, false, VAL_NAME_SUBDOMAIN, c), 2);
    expect_cause(c, 0, "metadata.finalizers",
                 "Invalid value: \"x/y/z\": a qualified name " QNAME_MSG
                 " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                 NULL);
    expect_cause(c, 1, "metadata.finalizers",
                 "Invalid value: []string{\"orphan\", \"foregroundDeletion\", \"x/y/z\"}: "
                 "finalizer orphan and foregroundDeletion cannot be both set",
                 "FieldValueInvalid");
    json_decref(m);

    json_array_clear(c);
    m = J("{\"name\":\"a\",\"ownerReferences\":[{\"apiVersion\":\"apps/\"},"
          "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"u\"},"
          "{\"apiVersion\":\"v1\",\"kind\":\"A\",\"name\":\"a\",\"uid\":\"1\",\"controller\":true},"
          "{\"apiVersion\":\"v1\",\"kind\":\"B\",\"name\":\"b\",\"uid\":\"2\",\"controller\":true}]"
          "}");
    assert_int_equal(val_object_meta(m, false, VAL_NAME_SUBDOMAIN, c), 6);
    expect_cause(c, 0, "metadata.ownerReferences.apiVersion",
                 "Invalid value: \"apps/\": version must not be empty", NULL);
    expect_cause(c, 1, "metadata.ownerReferences.kind", "Invalid value: \"\": must not be empty",
                 NULL);
    expect_cause(c, 2, "metadata.ownerReferences.name", "Invalid value: \"\": must not be empty",
                 NULL);
    expect_cause(c, 3, "metadata.ownerReferences.uid", "Invalid value: \"\": must not be empty",
                 NULL);
    expect_cause(c, 4, "metadata.ownerReferences",
                 "Invalid value: &OwnerReference{Kind:Event,Name:e,UID:u,APIVersion:v1,"
                 "Controller:nil,BlockOwnerDeletion:nil,}: /v1, Kind=Event is disallowed from "
                 "being an owner",
                 NULL);
    const char *msg = json_string_value(json_object_get(json_array_get(c, 5), "message"));
    assert_non_null(strstr(msg, ": Only one reference can have Controller set to true. Found "
                                "\"true\" in references for A/a and B/b"));
    json_decref(m);
    json_decref(c);
}

static void test_label_selector_validation(void **state)
{
    json_t *c = json_array();
    json_t *ls = J("{\"matchLabels\":{\"a\":\"-\"},\"matchExpressions\":["
                   "{\"key\":\"k\",\"operator\":\"In\"},"
                   "{\"key\":\"k\",\"operator\":\"Exists\",\"values\":[\"v\"]},"
                   "{\"key\":\"-k\",\"operator\":\"Bogus\",\"values\":[\"-v\"]}]}");
    assert_int_equal(val_label_selector(ls, "spec.selector", c), 6);
    expect_cause(c, 0, "spec.selector.matchLabels", "Invalid value: \"-\": " LABEL_VALUE_MSG, NULL);
    expect_cause(c, 1, "spec.selector.matchExpressions[0].values",
                 "Required value: must be specified when `operator` is 'In' or 'NotIn'", NULL);
    expect_cause(c, 2, "spec.selector.matchExpressions[1].values",
                 "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                 NULL);
    expect_cause(c, 3, "spec.selector.matchExpressions[2].operator",
                 "Invalid value: \"Bogus\": not a valid selector operator", NULL);
    expect_cause(c, 4, "spec.selector.matchExpressions[2].key",
                 "Invalid value: \"-k\": name part " QNAME_MSG, NULL);
    expect_cause(c, 5, "spec.selector.matchExpressions[2].values[0]",
                 "Invalid value: \"-v\": " LABEL_VALUE_MSG, NULL);
    assert_int_equal(val_label_selector(NULL, "spec.selector", c), 0);
    json_decref(ls);
    json_decref(c);
}

/* ---- update ---- */

static void test_object_meta_update(void **state)
{
    json_t *c = json_array();
    json_t *old = J("{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"5\","
                    "\"generation\":3,\"creationTimestamp\":\"2024-01-01T00:00:00Z\"}");
    json_t *same = json_deep_copy(old);
    assert_int_equal(val_object_meta_update(same, old, c), 0);
    json_decref(same);

    json_t *nw =
        J("{\"name\":\"b\",\"namespace\":\"other\",\"uid\":\"u2\",\"generation\":2,"
          "\"creationTimestamp\":\"2024-01-02T03:04:05Z\","
          "\"deletionTimestamp\":\"2024-02-01T00:00:00Z\",\"deletionGracePeriodSeconds\":30}");
    assert_int_equal(val_object_meta_update(nw, old, c), 8);
    expect_cause(c, 0, "metadata.resourceVersion",
                 "Invalid value: \"\": must be specified for an update", NULL);
    expect_cause(c, 1, "metadata.generation", "Invalid value: 2: must not be decremented", NULL);
    expect_cause(c, 2, "metadata.name", "Invalid value: \"b\": field is immutable", NULL);
    expect_cause(c, 3, "metadata.namespace", "Invalid value: \"other\": field is immutable", NULL);
    expect_cause(c, 4, "metadata.uid", "Invalid value: \"u2\": field is immutable", NULL);
    expect_cause(c, 5, "metadata.creationTimestamp",
                 "Invalid value: 2024-01-02 03:04:05 +0000 UTC: field is immutable", NULL);
    expect_cause(c, 6, "metadata.deletionTimestamp",
                 "Invalid value: 2024-02-01 00:00:00 +0000 UTC: field is immutable", NULL);
    expect_cause(c, 7, "metadata.deletionGracePeriodSeconds",
                 "Invalid value: 30: field is immutable", NULL);
    json_decref(nw);
    json_decref(old);

    /* clearing a set deletionTimestamp shows null */
    json_array_clear(c);
    old = J(
        "{\"name\":\"a\",\"resourceVersion\":\"1\",\"deletionTimestamp\":\"2024-02-01T00:00:00Z\","
        "\"finalizers\":[\"a.io/x\"]}");
    nw = J("{\"name\":\"a\",\"resourceVersion\":\"1\",\"finalizers\":[\"z.io/b\",\"a.io/x\","
           "\"b.io/c\",\"z.io/b\"]}");
    assert_int_equal(val_object_meta_update(nw, old, c), 2);
    expect_cause(c, 0, "metadata.finalizers",
                 "Forbidden: no new finalizers can be added if the object is being deleted, found "
                 "new finalizers []string{\"b.io/c\", \"z.io/b\"}",
                 "FieldValueForbidden");
    expect_cause(c, 1, "metadata.deletionTimestamp", "Invalid value: null: field is immutable",
                 NULL);
    json_decref(nw);
    json_decref(old);

    /* the new object's labels are validated too */
    json_array_clear(c);
    old = J("{\"name\":\"a\",\"resourceVersion\":\"1\"}");
    nw = J("{\"name\":\"a\",\"resourceVersion\":\"1\",\"labels\":{\"k\":\"-\"}}");
    assert_int_equal(val_object_meta_update(nw, old, c), 1);
    expect_cause(c, 0, "metadata.labels", "Invalid value: \"-\": " LABEL_VALUE_MSG, NULL);
    json_decref(nw);
    json_decref(old);
    json_decref(c);
}

static void test_generate_name(void **state)
{
    char out[80];
    assert_int_equal(val_generate_name("web-", "x7k2q", out, sizeof out), 0);
    assert_string_equal(out, "web-x7k2q");
    char *base = rep('a', 70, "");
    assert_int_equal(val_generate_name(base, "bcdfg", out, sizeof out), 0);
    assert_int_equal(strlen(out), 63);
    assert_string_equal(out + 58, "bcdfg");
    assert_int_equal(val_generate_name(base, "bcdfg", out, 10), -1);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dns1123_label),
        cmocka_unit_test(test_dns1123_subdomain),
        cmocka_unit_test(test_dns1035_label),
        cmocka_unit_test(test_qualified_name),
        cmocka_unit_test(test_label_value),
        cmocka_unit_test(test_name_kinds),
        cmocka_unit_test(test_object_meta_valid),
        cmocka_unit_test(test_object_meta_required),
        cmocka_unit_test(test_object_meta_invalid),
        cmocka_unit_test(test_object_meta_labels_annotations),
        cmocka_unit_test(test_object_meta_finalizers_owners),
        cmocka_unit_test(test_label_selector_validation),
        cmocka_unit_test(test_object_meta_update),
        cmocka_unit_test(test_generate_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
