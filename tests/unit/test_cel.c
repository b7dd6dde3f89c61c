/* test_cel.c - the CEL interpreter (core/cel.h) against CEL's documented semantics
 * (cel-spec langdef.md and its conformance suite's cases), the Kubernetes quantity
 * library's documented examples and unit tests (k8s.io/apiserver/pkg/cel/library),
 * Capsule's pkg/runtime/cel tests, the CEL vectors of the pools/custom-quota spec
 * (§6.4 N12, §6.6) and the matchConditions of seed 003; then type errors at compile
 * time and the limits (length, nesting, cost, memory).
 *
 * Each table test reports every mismatching row before failing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/cel.h"
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *const POD =
    "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p1','namespace':'ns',"
    "'labels':{'track':'yes'}},'spec':{'restartPolicy':'Always','containers':["
    "{'name':'main','image':'nginx:1.27.0','resources':{'requests':{'cpu':'100m',"
    "'memory':'1Gi'}}},{'name':'side','image':'busybox','resources':{'requests':"
    "{'cpu':'250m'}}}],'replicas':3,'ratio':0.5,'flag':true,'none':null}}";

static int failures;

__attribute__((format(printf, 1, 2))) static void bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    failures++;
}

static void done(void)
{
    int n = failures;
    failures = 0;
    if (n) fail_msg("%d row(s) failed", n);
}

/* Evaluate with CEL_EXPECT_ANY on `obj` (JSON with single quotes, or NULL for {}); the
 * result as compact JSON (caller frees), or NULL with the error in err. */
static char *eval_any(const char *expr, const char *obj, char *err, size_t n)
{
    cel_program *p = cel_compile(expr, CEL_EXPECT_ANY, err, n);
    if (!p) return NULL;
    json_t *o = J(obj ? obj : "{}"), *out = NULL;
    const json_t *vars[] = {o};
    char *s = NULL;
    if (cel_eval_json(p, vars, NULL, &out, err, n) == CEL_OK) {
        s = json_dumps(out, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
        json_decref(out);
    }
    json_decref(o);
    cel_free(p);
    return s;
}

typedef struct row {
    const char *expr, *want; /* want: compact JSON of the result */
} row;

static void run_rows(const row *rows, size_t n, const char *obj)
{
    char err[2048];
    for (size_t i = 0; i < n; i++) {
        char *got = eval_any(rows[i].expr, obj, err, sizeof err);
        if (!got)
            bad("%s: error %s, want %s", rows[i].expr, err, rows[i].want);
        else if (strcmp(got, rows[i].want))
            bad("%s: got %s, want %s", rows[i].expr, got, rows[i].want);
        free(got);
    }
}

/* Rows whose evaluation must fail with exactly `want` after Capsule's prefix. */
static void run_error_rows(const row *rows, size_t n, const char *obj)
{
    char err[2048];
    for (size_t i = 0; i < n; i++) {
        char *got = eval_any(rows[i].expr, obj, err, sizeof err);
        const char *colon = got ? NULL : strstr(err, "\": ");
        if (got)
            bad("%s: got %s, want error %s", rows[i].expr, got, rows[i].want);
        else if (!colon || strncmp(err, "evaluate CEL expression ", 24) ||
                 strcmp(colon + 3, rows[i].want))
            bad("%s: error %s, want %s", rows[i].expr, err, rows[i].want);
        free(got);
    }
}

/* ---- CEL language definition ------------------------------------------------------------ */

static void test_literals(void **state)
{
    static const row rows[] = {
        {"0", "0"},
        {"0u", "0"},
        {"0U", "0"},
        {"0.0", "0.0"},
        {"0e+0", "0.0"},
        {"''", "\"\""},
        {"\"\"", "\"\""},
        {"'\"\"'", "\"\\\"\\\"\""},
        {"'''x''x'''", "\"x''x\""},
        {"\"\\\"\"", "\"\\\"\""},
        {"\"\\\\\"", "\"\\\\\""},
        {"r\"\\\\\"", "\"\\\\\\\\\""},
        {"\"\\303\\277\"", "\"Ã¿\""},
        {"\"\\377\"", "\"ÿ\""},
        {"\"\\xFF\"", "\"ÿ\""},
        {"'\\u00e9\\U0001F600'", "\"é😀\""},
        {"'\\a\\b\\f\\n\\r\\t\\v\\'\\`\\?'", "\"\\u0007\\b\\f\\n\\r\\t\\u000B'`?\""},
        {"\"\"\"two\nlines\"\"\"", "\"two\\nlines\""},
        {"R'\\d+'", "\"\\\\d+\""},
        {"0x10", "16"},
        {"0x10u", "16"},
        {"0xFFFFFFFFFFFFFFFFu", "\"18446744073709551615\""},
        {"9223372036854775807", "9223372036854775807"},
        {"-9223372036854775808", "-9223372036854775808"},
        {"-0x8000000000000000", "-9223372036854775808"},
        {"1e3", "1000.0"},
        {".5", "0.5"},
        {"-2.5e-1", "-0.25"},
        {"true", "true"},
        {"null", "null"},
        {"[]", "[]"},
        {"{}", "{}"},
        {"[1, 2, 3,]", "[1,2,3]"},
        {"{'a': 1, 'b': [true],}", "{\"a\":1,\"b\":[true]}"},
        {"1 // a comment\n + 1", "2"},
        {"  \n\t1 + 1 \n", "2"},
    };
    run_rows(rows, N(rows), NULL);
    done();
}

static void test_arithmetic_and_precedence(void **state)
{
    static const row rows[] = {
        {"1 + 2 * 3", "7"},
        {"(1 + 2) * 3", "9"},
        {"2 - 3 - 4", "-5"},
        {"100 / 10 / 5", "2"},
        {"7 / 2", "3"},
        {"-7 / 2", "-3"},
        {"7 % 3", "1"},
        {"-7 % 3", "-1"},
        {"7u / 2u", "3"},
        {"7u % 2u", "1"},
        {"7.0 / 2.0", "3.5"},
        {"1.0 / 0.0", "\"Infinity\""},
        {"-1.0 / 0.0", "\"-Infinity\""},
        {"0.0 / 0.0", "\"NaN\""},
        {"-(1 + 2)", "-3"},
        {"- -3", "3"},
        {"--3", "3"},
        {"-(-3)", "3"},
        {"!!true", "true"},
        {"!true || true", "true"},
        {"true || false && false", "true"},
        {"(true || false) && false", "false"},
        {"1 < 2 == true", "true"},
        {"1 + 1 == 2 && 2 * 2 == 4", "true"},
        {"false ? 1 : true ? 2 : 3", "2"},
        {"true ? 1 : 2 + 10", "1"},
        {"'a' + 'b' + 'c'", "\"abc\""},
        {"[1] + [2, 3] + []", "[1,2,3]"},
        {"3 in [1, 2] || 2 in [1, 2]", "true"},
        {"1.5 + 1.5", "3.0"},
        {"2u * 3u", "6"},
    };
    run_rows(rows, N(rows), NULL);
    done();
}

/* Checked integer arithmetic (langdef "Overflow"; conformance integer_math). */
static void test_overflow_and_division(void **state)
{
    static const row errors[] = {
        {"9223372036854775807 + 1", "integer overflow"},
        {"-9223372036854775808 - 1", "integer overflow"},
        {"-(-9223372036854775808)", "integer overflow"},
        {"5000000000 * 5000000000", "integer overflow"},
        {"-9223372036854775808 / -1", "integer overflow"},
        {"-9223372036854775808 % -1", "integer overflow"},
        {"18446744073709551615u + 1u", "unsigned integer overflow"},
        {"0u - 1u", "unsigned integer overflow"},
        {"5000000000u * 5000000000u", "unsigned integer overflow"},
        {"1 / 0", "division by zero"},
        {"1 % 0", "modulus by zero"},
        {"1u / 0u", "division by zero"},
        {"1u % 0u", "modulus by zero"},
    };
    run_error_rows(errors, N(errors), NULL);
    static const row ok[] = {
        {"9223372036854775806 + 1", "9223372036854775807"},
        {"-9223372036854775807 - 1", "-9223372036854775808"},
        {"18446744073709551614u + 1u", "\"18446744073709551615\""},
    };
    run_rows(ok, N(ok), NULL);
    done();
}

/* Heterogeneous equality as cel-go implements it today: numeric values compare by value
 * across types at run time (the checker refuses 1 == 1.0 written with literals). */
static void test_equality(void **state)
{
    static const row rows[] = {
        {"1 == 1", "true"},
        {"2 == 3", "false"},
        {"dyn(1) == 1.0", "true"},
        {"dyn(1) == 2.0", "false"},
        {"dyn(1) == 1u", "true"},
        {"dyn(1.0) == 1u", "true"},
        {"dyn(1) != 2.0", "true"},
        {"dyn(9007199254740993) == 9007199254740992.0", "false"},
        {"dyn(-1) == 18446744073709551615u", "false"},
        {"dyn('1') == 1", "false"},
        {"dyn(1) != '1'", "true"},
        {"dyn(null) == null", "true"},
        {"dyn(0) == null", "false"},
        {"dyn(0.0 / 0.0) == 0.0 / 0.0", "false"},
        {"0.0 == -0.0", "true"},
        {"[1, 2] == [1, 2]", "true"},
        {"[1, 2] == [2, 1]", "false"},
        {"[1, 'a'] == [1, 'a']", "true"},
        {"dyn([1, 2]) == [1.0, 2u]", "true"},
        {"[[1], []] == [[1], []]", "true"},
        {"{'a': 1, 'b': 2} == {'b': 2, 'a': 1}", "true"},
        {"{'a': 1} != {'a': 2}", "true"},
        {"{'a': 1} == {'a': 1, 'b': 2}", "false"},
        {"dyn({1: 'x'}) == {1u: 'x'}", "true"},
        {"'abc' == 'abc'", "true"},
        {"'abc' != 'abd'", "true"},
        {"true != false", "true"},
    };
    run_rows(rows, N(rows), NULL);
    done();
}

static void test_ordering(void **state)
{
    static const row rows[] = {
        {"1 < 2", "true"},
        {"2 <= 2", "true"},
        {"3 > 2", "true"},
        {"2 >= 3", "false"},
        {"1 < 1.5", "true"},
        {"2.0 > 1", "true"},
        {"1u < 2", "true"},
        {"-1 < 1u", "true"},
        {"1u <= 1.0", "true"},
        {"9223372036854775807 < 9223372036854775808.0", "true"},
        {"18446744073709551615u > 9223372036854775807", "true"},
        {"0.0 / 0.0 < 1.0", "false"},
        {"0.0 / 0.0 >= 1.0", "false"},
        {"'a' < 'b'", "true"},
        {"'abc' < 'abd'", "true"},
        {"'ab' < 'abc'", "true"},
        {"'' < 'a'", "true"},
        {"'é' > 'z'", "true"},
        {"false < true", "true"},
        {"true <= true", "true"},
    };
    run_rows(rows, N(rows), NULL);
    done();
}

/* langdef "Logical Operators": commutative error absorption; ?: evaluates one branch. */
static void test_logic_and_errors(void **state)
{
    static const row rows[] = {
        {"false && 1 / 0 != 0", "false"},
        {"1 / 0 != 0 && false", "false"},
        {"true || 1 / 0 != 0", "true"},
        {"1 / 0 != 0 || true", "true"},
        {"true && true", "true"},
        {"true && false", "false"},
        {"false || false", "false"},
        {"false || true", "true"},
        {"true ? 1 : 1 / 0", "1"},
        {"false ? 1 / 0 : 2", "2"},
        {"(1 / 0 > 1 || true) && (false || 2 / 0 > 1 || true)", "true"},
        {"[1, 0].exists(x, 1 / x == 1)", "true"},
        {"[0, 1].exists(x, 1 / x == 1)", "true"},
        {"[0, 8].all(x, 4 / x > 2)", "false"},
        {"[8, 0].all(x, 4 / x > 2)", "false"},
        {"dyn(1) == 1 || dyn('a') + 1 == 2", "true"},
    };
    run_rows(rows, N(rows), NULL);
    static const row errors[] = {
        {"1 / 0 != 0 && true", "division by zero"},
        {"true && 1 / 0 != 0", "division by zero"},
        {"1 / 0 != 0 || false", "division by zero"},
        {"1 / 0 == 0 ? 1 : 2", "division by zero"},
        {"[1, 0].all(x, 4 / x > 1)", "division by zero"},
        {"[0, 1].all(x, 4 / x > 1)", "division by zero"},
        {"[1, 0].exists(x, 4 / x > 100)", "division by zero"},
        {"dyn('less filling') && dyn('tastes great')", "no such overload"},
        {"dyn(1) ? 1 : 2", "no such overload"},
        {"dyn('a') + 1", "no such overload"},
        {"dyn(1).startsWith('a')", "no such overload: startsWith(int, string)"},
        {"size(dyn(1))", "no such overload: size(int)"},
    };
    run_error_rows(errors, N(errors), NULL);
    done();
}

static void test_membership_size_strings(void **state)
{
    static const row rows[] = {
        {"2 in [1, 2, 3]", "true"},
        {"4 in [1, 2, 3]", "false"},
        {"dyn(2.0) in [1, 2, 3]", "true"},
        {"'a' in {'a': 1}", "true"},
        {"'b' in {'a': 1}", "false"},
        {"dyn(1) in {1u: 'x'}", "true"},
        {"'apple' in ['apple', 'banana']", "true"},
        {"[1] in [[1], [2]]", "true"},
        {"size('')", "0"},
        {"size('hello')", "5"},
        {"'héllo😀'.size()", "6"},
        {"size([1, 2, 3])", "3"},
        {"[1, 2].size()", "2"},
        {"{'a': 1, 'b': 2}.size()", "2"},
        {"size({})", "0"},
        {"'hello'.startsWith('he')", "true"},
        {"'hello'.startsWith('lo')", "false"},
        {"'hello'.endsWith('lo')", "true"},
        {"'hello'.endsWith('hello!')", "false"},
        {"'hello'.contains('ell')", "true"},
        {"'hello'.contains('')", "true"},
        {"''.contains('a')", "false"},
        {"'a' + 'b' == 'ab'", "true"},
    };
    run_rows(rows, N(rows), NULL);
    done();
}

/* langdef "Macros" with its examples, and has() ("Field Selection"). */
static void test_macros(void **state)
{
    static const row rows[] = {
        {"[1, 2, 3].map(n, n * n)", "[1,4,9]"},
        {"[1, 2, 3].filter(i, i % 2 > 0)", "[1,3]"},
        {"[1, 2, 3].filter(i, i > 5)", "[]"},
        {"[1, 2, 3].map(x, x > 1, x * 10)", "[20,30]"},
        {"[1, 2, 3].all(x, x > 0)", "true"},
        {"[1, 2, 3].all(x, x > 1)", "false"},
        {"[].all(x, x > 1)", "true"},
        {"[1, 2, 3].exists(x, x > 2)", "true"},
        {"[1, 2, 3].exists(x, x > 3)", "false"},
        {"[].exists(x, x > 1)", "false"},
        {"[1, 2, 3].exists_one(x, x > 2)", "true"},
        {"[1, 2, 3].exists_one(x, x > 1)", "false"},
        {"[1, 2, 3].exists_one(x, x > 3)", "false"},
        {"{'a': 1, 'b': 2}.all(k, k.size() == 1)", "true"},
        {"{'a': 1, 'b': 2}.exists(k, k == 'b')", "true"},
        {"{'a': 1, 'b': 2}.map(k, k + k)", "[\"aa\",\"bb\"]"},
        {"{'a': 1, 'b': 2}.filter(k, k != 'a')", "[\"b\"]"},
        {"[[1, 2], [3]].map(l, l.map(x, x * 2))", "[[2,4],[6]]"},
        {"[1, 2].map(x, [3, 4].map(y, x * y))", "[[3,4],[6,8]]"},
        {"[1, 2].map(x, [3].map(x, x))", "[[3],[3]]"},
        {"[1, 2, 3].map(x, x * 2).filter(x, x > 2).size()", "2"},
        {"[1, 2].exists(object, object == 2)", "true"},
        {"has({'a': 1}.a)", "true"},
        {"has({'a': 1}.b)", "false"},
        {"has({'a': null}.a)", "true"},
    };
    run_rows(rows, N(rows), NULL);
    static const row errors[] = {
        {"[1, 0].map(x, 1 / x)", "division by zero"},
        {"[0, 1].filter(x, 1 / x > 0)", "division by zero"},
        {"[0, 1].exists_one(x, 1 / x > 0)", "division by zero"},
        {"dyn(1).all(x, true)", "got 'int', expected iterable type"},
    };
    run_error_rows(errors, N(errors), NULL);
    done();
}

/* Selection, indexing and has() on a Kubernetes object (cel-go's attribute errors). */
static void test_field_selection(void **state)
{
    static const row rows[] = {
        {"object.metadata.name", "\"p1\""},
        {"object['metadata']['name']", "\"p1\""},
        {"object.metadata.labels.track == 'yes'", "true"},
        {"object.spec.containers[1].name", "\"side\""},
        {"object.spec.containers[1u].name", "\"side\""},
        {"object.spec.containers[dyn(1.0)].name", "\"side\""},
        {"object.spec.replicas", "3"},
        {"object.spec.replicas + 1", "4"},
        {"object.spec.ratio * 2.0", "1.0"},
        {"object.spec.flag && true", "true"},
        {"object.spec.none == null", "true"},
        {"has(object.spec)", "true"},
        {"has(object.spec.nodeName)", "false"},
        {"has(object.spec.none)", "true"},
        {"has(object.metadata.labels.track)", "true"},
        {"has(object.spec.replicas.x)", "false"},
        {"!has(object.status) || object.status.phase == 'Running'", "true"},
        {"'track' in object.metadata.labels", "true"},
        {"object.spec.containers.map(c, c.name)", "[\"main\",\"side\"]"},
        {"size(object.spec.containers)", "2"},
        {"object.spec.containers.exists(c, c.image == 'nginx:1.27.0')", "true"},
        {"object.spec.containers.all(c, has(c.resources.requests.cpu))", "true"},
        {"object.spec.containers.filter(c, 'memory' in c.resources.requests).size()", "1"},
        {"object.spec.ratio == 0.5", "true"},
        {"object.spec.replicas == 3.0", "true"},
    };
    run_rows(rows, N(rows), POD);
    static const row errors[] = {
        {"object.status.phase", "no such key: status"},
        {"has(object.status.phase)", "no such key: status"},
        {"object.spec.containers[2]", "index out of bounds: 2"},
        {"object.spec.containers[-1]", "index out of bounds: -1"},
        {"object.spec.containers[dyn(0.5)]", "unsupported index value 0.5 in list"},
        {"object.spec.containers['a']", "unsupported index type 'string' in list"},
        {"object.spec.containers.name", "unsupported index type 'string' in list"},
        {"object.metadata.labels['nope']", "no such key: nope"},
        {"object.spec.replicas.x", "no such key: x"},
        {"object.spec.replicas + 0.5", "no such overload"},
        {"{'a': 1}[dyn(2)]", "no such key: 2"},
        {"{1: 'a', 1u: 'b'}", "Failed with repeated key: 1"},
        {"{dyn(1.5): 1}", "unsupported key type: double"},
    };
    run_error_rows(errors, N(errors), POD);
    done();
}

/* A variable left unbound is an error only where it is read. */
static void test_unbound_variable(void **state)
{
    char err[512];
    bool b = false;
    cel_program *p = cel_compile("true || object.x", CEL_EXPECT_BOOL, err, sizeof err);
    assert_non_null(p);
    const json_t *none[] = {NULL};
    assert_int_equal(cel_eval_bool(p, none, NULL, &b, err, sizeof err), CEL_OK);
    assert_true(b);
    cel_free(p);
    p = cel_compile("object.x == 1", CEL_EXPECT_BOOL, err, sizeof err);
    assert_int_equal(cel_eval_bool(p, none, NULL, &b, err, sizeof err), CEL_ERR_EVAL);
    assert_string_equal(err,
                        "evaluate CEL expression \"object.x == 1\": no such attribute(s): object");
    cel_free(p);
}

static void test_conversions(void **state)
{
    static const row rows[] = {
        {"int('42')", "42"},
        {"int('-9223372036854775808')", "-9223372036854775808"},
        {"int(42u)", "42"},
        {"int(1.9)", "1"},
        {"int(-1.9)", "-1"},
        {"uint(42)", "42"},
        {"uint('42')", "42"},
        {"uint(2.5)", "2"},
        {"double(1)", "1.0"},
        {"double(1u)", "1.0"},
        {"double('1.5')", "1.5"},
        {"double('-1e3')", "-1000.0"},
        {"double('inf')", "\"Infinity\""},
        {"string(1)", "\"1\""},
        {"string(-1)", "\"-1\""},
        {"string(1u)", "\"1\""},
        {"string(1.5)", "\"1.5\""},
        {"string(1.0)", "\"1\""},
        {"string(123456.7)", "\"123456.7\""},
        {"string(1234567.0)", "\"1.234567e+06\""},
        {"string(0.0001)", "\"0.0001\""},
        {"string(0.00001)", "\"1e-05\""},
        {"string(1e100)", "\"1e+100\""},
        {"string(true)", "\"true\""},
        {"string('x')", "\"x\""},
        {"bool('true')", "true"},
        {"bool('F')", "false"},
        {"bool(true)", "true"},
        {"dyn([1, 'a'])", "[1,\"a\"]"},
        {"string(object.spec.replicas)", "\"3\""},
    };
    run_rows(rows, N(rows), POD);
    static const row errors[] = {
        {"int('x')", "strconv.ParseInt: parsing \"x\": invalid syntax"},
        {"int('9223372036854775808')",
         "strconv.ParseInt: parsing \"9223372036854775808\": value out of range"},
        {"int(' 1')", "strconv.ParseInt: parsing \" 1\": invalid syntax"},
        {"uint('-1')", "strconv.ParseUint: parsing \"-1\": invalid syntax"},
        {"double('1e999')", "strconv.ParseFloat: parsing \"1e999\": value out of range"},
        {"double('abc')", "strconv.ParseFloat: parsing \"abc\": invalid syntax"},
        {"bool('yes')", "strconv.ParseBool: parsing \"yes\": invalid syntax"},
        {"int(18446744073709551615u)", "integer overflow"},
        {"int(1e19)", "integer overflow"},
        {"int(-9223372036854775808.0)", "integer overflow"},
        {"int(0.0 / 0.0)", "integer overflow"},
        {"uint(-1)", "unsigned integer overflow"},
        {"uint(-0.5)", "unsigned integer overflow"},
    };
    run_error_rows(errors, N(errors), NULL);
    done();
}

/* ---- the Kubernetes quantity library ---------------------------------------------------- */

/* k8s.io/apiserver/pkg/cel/library quantity.go's documented examples and quantity_test.go
 * (mul, div and divInt, added after Kubernetes 1.34, are not supported: see below). */
static void test_quantity_library(void **state)
{
    static const row rows[] = {
        {"quantity('12Mi') == quantity('12582912')", "true"},
        {"string(quantity('1.5G').asInteger())", "\"1500000000\""},
        {"isQuantity('20')", "true"},
        {"isQuantity('20M')", "true"},
        {"isQuantity('20Mi')", "true"},
        {"isQuantity('20Mo')", "false"},
        {"isQuantity('10Mm')", "false"},
        {"isQuantity('1.3G')", "true"},
        {"isQuantity('1,3G')", "false"},
        {"isQuantity('10000k')", "true"},
        {"isQuantity('200K')", "false"},
        {"isQuantity('Three')", "false"},
        /* quantity.go's comment says false, but ParseQuantity reads a bare suffix as 0
         * (upstream's own test vector "Ki" -> 0), so the function returns true */
        {"isQuantity('Mi')", "true"},
        {"quantity('200M') == quantity('200M')", "true"},
        {"quantity('200M') == quantity('0.2G') && quantity('0.2G') == quantity('200M')", "true"},
        {"quantity('2M') == quantity('0.002G') && quantity('2000k') == quantity('2M') && "
         "quantity('0.002G') == quantity('2000k')",
         "true"},
        {"quantity('200M') == quantity('0.3G')", "false"},
        {"quantity('50M').isLessThan(quantity('50Mi'))", "true"},
        {"quantity('50M').isLessThan(quantity('100M'))", "true"},
        {"quantity('100M').isLessThan(quantity('50M'))", "false"},
        {"quantity('50Mi').isGreaterThan(quantity('50M'))", "true"},
        {"quantity('150Mi').isGreaterThan(quantity('100Mi'))", "true"},
        {"quantity('50M').isGreaterThan(quantity('100M'))", "false"},
        {"quantity('200M').compareTo(quantity('0.2G'))", "0"},
        {"quantity('50M').compareTo(quantity('50Mi'))", "-1"},
        {"quantity('50Mi').compareTo(quantity('50M'))", "1"},
        {"quantity('50k').add(quantity('20')) == quantity('50.02k')", "true"},
        {"quantity('50k').add(quantity('20k')) == quantity('70k')", "true"},
        {"quantity('50k').add(20) == quantity('50020')", "true"},
        {"quantity('50k').add(20).isLessThan(quantity('50020'))", "false"},
        {"quantity('50k').sub(quantity('20')) == quantity('49.98k')", "true"},
        {"quantity('50k').sub(quantity('20k')) == quantity('30k')", "true"},
        {"quantity('50k').sub(20) == quantity('49980')", "true"},
        {"quantity('50k').sub(20000) == quantity('30k')", "true"},
        {"quantity('50k').add(20).sub(quantity('100k')).asInteger()", "-49980"},
        {"quantity('50k').add(20).sub(quantity('100k')).sub(-50000).asInteger()", "20"},
        {"quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", "true"},
        {"quantity('50k').asInteger()", "50000"},
        {"quantity('50k').asInteger() == 50000", "true"},
        {"quantity('9999999999999999999999999999999999999G').isInteger()", "false"},
        {"quantity('50000000G').isInteger()", "true"},
        {"quantity('50k').isInteger()", "true"},
        {"quantity('50').isInteger()", "true"},
        {"quantity('1.5').isInteger()", "false"},
        {"quantity('50.703k').asApproximateFloat()", "50703.0"},
        {"quantity('50k').sub(20000).asApproximateFloat() == 30000.0", "true"},
        {"quantity('1Ki').asApproximateFloat()", "1024.0"},
        {"quantity('-1.5').asApproximateFloat()", "-1.5"},
        {"sign(quantity('-5'))", "-1"},
        {"sign(quantity('0'))", "0"},
        {"sign(quantity('5m'))", "1"},
        {"quantity('1Gi')", "\"1Gi\""},
        {"quantity('0.5')", "\"500m\""},
        {"[quantity('1'), quantity('2')].map(q, q.add(1))", "[\"2\",\"3\"]"},
        {"quantity('1') in [quantity('1000m')]", "true"},
    };
    run_rows(rows, N(rows), NULL);
    static const row errors[] = {
        {"quantity('10Mo')", "quantities must match the regular expression "
                             "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
        {"quantity('10Mm')", "unable to parse quantity's suffix"},
        {"quantity('200K')", "unable to parse quantity's suffix"},
        {"quantity('9999999999999999999999999999999999999G').asInteger()",
         "cannot convert value to integer"},
        {"quantity('1.5').asInteger()", "cannot convert value to integer"},
    };
    run_error_rows(errors, N(errors), NULL);
    done();
}

/* ---- Capsule's expressions, the spec's vectors and seed 003 ----------------------------- */

static bool eval_bool(const char *expr, const char *obj)
{
    char err[1024];
    cel_program *p = cel_compile(expr, CEL_EXPECT_BOOL, err, sizeof err);
    if (!p) fail_msg("%s: %s", expr, err);
    json_t *o = J(obj);
    const json_t *vars[] = {o};
    bool b = false;
    if (cel_eval_bool(p, vars, NULL, &b, err, sizeof err)) fail_msg("%s: %s", expr, err);
    json_decref(o);
    cel_free(p);
    return b;
}

static void expect_qty(const char *expr, const char *obj, const char *want)
{
    char err[1024], got[QTY_STR_MAX];
    cel_program *p = cel_compile(expr, CEL_EXPECT_QUANTITY, err, sizeof err);
    if (!p) fail_msg("%s: %s", expr, err);
    json_t *o = J(obj);
    const json_t *vars[] = {o};
    qty q;
    if (cel_eval_quantity(p, vars, NULL, &q, err, sizeof err)) fail_msg("%s: %s", expr, err);
    qty_format_str(&q, got, sizeof got);
    assert_string_equal(got, want);
    json_decref(o);
    cel_free(p);
}

/* pkg/runtime/cel/expression_test.go */
static void test_capsule_expression_tests(void **state)
{
    char err[1024];
    /* boolean evaluation */
    assert_true(eval_bool("object.spec.containers.exists(c, c.image == \"nginx:1.27.0\")",
                          "{'spec':{'containers':[{'name':'main','image':'nginx:1.27.0'}]}}"));
    /* a non-bool result is rejected */
    assert_null(cel_compile("object.metadata.name", CEL_EXPECT_BOOL, err, sizeof err));
    assert_string_equal(err, "compile CEL expression \"object.metadata.name\": expression must "
                             "evaluate to bool, got dyn");
    /* a single quantity */
    expect_qty("quantity(object.spec.resources.requests[\"storage\"])",
               "{'spec':{'resources':{'requests':{'storage':'2Gi'}}}}", "2Gi");
    /* a list is summed */
    expect_qty(
        "object.spec.containers.filter(c, has(c.resources) && has(c.resources.requests) "
        "&& \"cpu\" in c.resources.requests).map(c, quantity(c.resources.requests[\"cpu\"]))",
        "{'spec':{'containers':[{'resources':{'requests':{'cpu':'250m'}}},"
        "{'resources':{'requests':{'cpu':'500m'}}},{'name':'no-request'}]}}",
        "750m");
    /* an empty list is 0 (seed 003: missing values count 0; Capsule rejects it) */
    cel_program *p =
        cel_compile("object.spec.values.map(v, quantity(v))", CEL_EXPECT_QUANTITY, err, sizeof err);
    assert_non_null(p);
    json_t *o = J("{'spec':{'values':[]}}");
    const json_t *vars[] = {o};
    qty q = qty_from_int64(7, 0, QTY_DECIMAL_SI);
    assert_int_equal(cel_eval_quantity(p, vars, NULL, &q, err, sizeof err), CEL_OK);
    assert_int_equal(qty_sign(&q), 0);
    json_decref(o);
    cel_free(p);
    /* a string result is rejected */
    assert_null(cel_compile("string(object.spec.value)", CEL_EXPECT_QUANTITY, err, sizeof err));
    assert_string_equal(err, "compile CEL expression \"string(object.spec.value)\": expression "
                             "must evaluate to kubernetes.Quantity or list<kubernetes.Quantity>, "
                             "got string");
    /* extra variables */
    static const char *const vars2[] = {"object", "requester", "reviewer"};
    p = cel_compile_vars("requester.name == \"alice\" && \"admin\" in reviewer.groups",
                         CEL_EXPECT_BOOL, vars2, 3, err, sizeof err);
    assert_non_null(p);
    json_t *rq = J("{'name':'alice'}"), *rv = J("{'groups':['users','admin']}");
    const json_t *vals[] = {NULL, rq, rv};
    bool b = false;
    assert_int_equal(cel_eval_bool(p, vals, NULL, &b, err, sizeof err), CEL_OK);
    assert_true(b);
    json_decref(rq);
    json_decref(rv);
    cel_free(p);
    /* a string expression with its own variable */
    static const char *const self[] = {"object", "self"};
    p = cel_compile_vars("\"invalid subject \" + self.subjectName", CEL_EXPECT_STRING, self, 2, err,
                         sizeof err);
    assert_non_null(p);
    json_t *sv = J("{'subjectName':'runner'}"), *out = NULL;
    const json_t *svals[] = {NULL, sv};
    assert_int_equal(cel_eval_json(p, svals, NULL, &out, err, sizeof err), CEL_OK);
    assert_string_equal(json_string_value(out), "invalid subject runner");
    json_decref(out);
    json_decref(sv);
    cel_free(p);
}

/* Spec §6.4 N12 and §6.6: the usage and selector expressions of the CEL scenario. */
static void test_spec_vectors(void **state)
{
    const char *usage = "object.spec.containers.map(c, quantity(c.resources.requests[\"cpu\"]))";
    const char *selector = "object.spec.containers.exists(c, c.image == \"nginx:1.27.0\")";
    const char *pod1 = "{'spec':{'restartPolicy':'Always','containers':[{'name':'c',"
                       "'image':'nginx:1.27.0','resources':{'requests':{'cpu':'100m'}}}]}}";
    const char *pod2 = "{'spec':{'restartPolicy':'Always','containers':[{'name':'c',"
                       "'image':'nginx:1.26.0','resources':{'requests':{'cpu':'200m'}}}]}}";
    char err[512];
    cel_program *p = cel_compile(usage, CEL_EXPECT_QUANTITY, err, sizeof err);
    assert_non_null(p);
    assert_string_equal(cel_result_type(p), "list(kubernetes.Quantity)");
    cel_free(p);
    expect_qty(usage, pod1, "100m");
    expect_qty(usage, pod2, "200m");
    assert_true(eval_bool(selector, pod1));
    assert_false(eval_bool(selector, pod2));
    /* a pod without requests: the usage fails (and the object is skipped upstream) */
    p = cel_compile(usage, CEL_EXPECT_QUANTITY, err, sizeof err);
    json_t *o = J("{'spec':{'containers':[{'name':'c','image':'x'}]}}");
    const json_t *vars[] = {o};
    qty q;
    assert_int_equal(cel_eval_quantity(p, vars, NULL, &q, err, sizeof err), CEL_ERR_EVAL);
    assert_string_equal(err,
                        "evaluate CEL expression \"object.spec.containers.map(c, "
                        "quantity(c.resources.requests[\\\"cpu\\\"]))\": no such key: resources");
    json_decref(o);
    cel_free(p);
    /* §6.6: a CEL list sum, 250m + 500m */
    expect_qty("[quantity('250m'), quantity('500m')]", "{}", "750m");
    expect_qty("object.spec.containers.map(c, quantity(c.resources.requests.cpu))", POD, "350m");
}

/* Seed 003: the calculation webhook's matchConditions (variables object and request). */
static void test_seed_match_conditions(void **state)
{
    static const char *const conditions[] = {
        "!has(request.subResource) || request.subResource == \"\"",
        "request.resource.resource != \"events\"",
        "!(\"system:nodes\" in request.userInfo.groups)",
        "!(\"system:serviceaccounts:kube-system\" in request.userInfo.groups)",
    };
    static const struct {
        const char *request;
        bool want[4];
    } cases[] = {
        {"{'resource':{'group':'','version':'v1','resource':'pods'},'operation':'CREATE',"
         "'userInfo':{'username':'alice','groups':['system:authenticated']}}",
         {true, true, true, true}},
        {"{'resource':{'resource':'pods'},'subResource':'status',"
         "'userInfo':{'groups':['system:nodes','system:authenticated']}}",
         {false, true, false, true}},
        {"{'resource':{'resource':'events'},'subResource':'',"
         "'userInfo':{'groups':['system:serviceaccounts:kube-system']}}",
         {true, false, true, false}},
    };
    static const char *const vars[] = {"object", "request"};
    char err[512];
    for (size_t c = 0; c < N(conditions); c++) {
        cel_program *p = cel_compile_vars(conditions[c], CEL_EXPECT_BOOL, vars, 2, err, sizeof err);
        if (!p) fail_msg("%s: %s", conditions[c], err);
        cel_limits lim = {.cost = CEL_CONDITION_COST_LIMIT};
        for (size_t i = 0; i < N(cases); i++) {
            json_t *obj = J("{'kind':'Pod'}"), *req = J(cases[i].request);
            const json_t *vals[] = {obj, req};
            bool b = !cases[i].want[c];
            if (cel_eval_bool(p, vals, &lim, &b, err, sizeof err))
                bad("%s on case %zu: %s", conditions[c], i, err);
            else if (b != cases[i].want[c])
                bad("%s on case %zu: got %d", conditions[c], i, b);
            json_decref(obj);
            json_decref(req);
        }
        cel_free(p);
    }
    done();
}

/* ---- compile-time errors ---------------------------------------------------------------- */

typedef struct cerr_row {
    const char *expr;
    cel_expect expect;
    const char *want; /* the text after `compile CEL expression "...": ` */
} cerr_row;

static void run_compile_errors(const cerr_row *rows, size_t n)
{
    char err[4096];
    for (size_t i = 0; i < n; i++) {
        cel_program *p = cel_compile(rows[i].expr, rows[i].expect, err, sizeof err);
        const char *colon = strstr(err, "\": ");
        if (p)
            bad("%s: compiled, want %s", rows[i].expr, rows[i].want);
        else if (!colon || strcmp(colon + 3, rows[i].want))
            bad("%s:\n  got  %s\n  want %s", rows[i].expr, err, rows[i].want);
        cel_free(p);
    }
}

static void test_type_errors(void **state)
{
    static const cerr_row rows[] = {
        {"1 + 'a'", CEL_EXPECT_ANY,
         "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n"
         " | 1 + 'a'\n | ..^"},
        {"1 == 1.0", CEL_EXPECT_ANY,
         "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'\n"
         " | 1 == 1.0\n | ..^"},
        {"true ? 1 : 'a'", CEL_EXPECT_ANY,
         "ERROR: <input>:1:6: found no matching overload for '_?_:_' applied to '(bool, int, "
         "string)'\n | true ? 1 : 'a'\n | .....^"},
        {"quantity('1') < quantity('2')", CEL_EXPECT_ANY,
         "ERROR: <input>:1:15: found no matching overload for '_<_' applied to "
         "'(kubernetes.Quantity, kubernetes.Quantity)'\n | quantity('1') < quantity('2')\n"
         " | ..............^"},
        {"isQuantity([1, 2, 3])", CEL_EXPECT_ANY,
         "ERROR: <input>:1:11: found no matching overload for 'isQuantity' applied to "
         "'(list(int))'\n | isQuantity([1, 2, 3])\n | ..........^"},
        {"quantity('50k').add('20k')", CEL_EXPECT_ANY,
         "ERROR: <input>:1:20: found no matching overload for 'add' applied to "
         "'kubernetes.Quantity.(string)'\n | quantity('50k').add('20k')\n | ...................^"},
        {"quantity('1').sign()", CEL_EXPECT_ANY,
         "ERROR: <input>:1:19: found no matching overload for 'sign' applied to "
         "'kubernetes.Quantity.()'\n | quantity('1').sign()\n | ..................^"},
        {"quantity('50k').mul(2)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:20: undeclared reference to 'mul' (in container '')\n"
         " | quantity('50k').mul(2)\n | ...................^"},
        {"object.name.matches('a+')", CEL_EXPECT_ANY,
         "ERROR: <input>:1:20: undeclared reference to 'matches' (in container '')\n"
         " | object.name.matches('a+')\n | ...................^"},
        {"foo.bar", CEL_EXPECT_ANY,
         "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo.bar\n | ^"},
        {"size(1)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'\n"
         " | size(1)\n | ....^"},
        {"(1).a", CEL_EXPECT_ANY,
         "ERROR: <input>:1:4: type 'int' does not support field selection\n | (1).a\n | ...^"},
        {"'abc'[0]", CEL_EXPECT_ANY,
         "ERROR: <input>:1:6: found no matching overload for '_[_]' applied to '(string, int)'\n"
         " | 'abc'[0]\n | .....^"},
        {"true && 1", CEL_EXPECT_ANY,
         "ERROR: <input>:1:9: expected type 'bool' but found 'int'\n | true && 1\n | ........^"},
        {"[1].all(x, x)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:12: expected type 'bool' but found 'int'\n | [1].all(x, x)\n"
         " | ...........^"},
        {"[1].filter(x, x)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:15: found no matching overload for '_?_:_' applied to '(int, "
         "list(int), list(int))'\n | [1].filter(x, x)\n | ..............^"},
        {"(1).all(x, true)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:2: expression of type 'int' cannot be range of a comprehension (must "
         "be list, map, or dynamic)\n | (1).all(x, true)\n | .^"},
        {"[1].map(x, y)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:12: undeclared reference to 'y' (in container '')\n"
         " | [1].map(x, y)\n | ...........^"},
        {"-1u", CEL_EXPECT_ANY,
         "ERROR: <input>:1:1: found no matching overload for '-_' applied to '(uint)'\n"
         " | -1u\n | ^"},
        {"object.a == 1 &&\n  object.b + 'x' + 1", CEL_EXPECT_ANY,
         "ERROR: <input>:2:18: found no matching overload for '_+_' applied to '(string, int)'\n"
         " |   object.b + 'x' + 1\n | .................^"},
        {"'é' + 1", CEL_EXPECT_ANY,
         "ERROR: <input>:1:5: found no matching overload for '_+_' applied to '(string, int)'\n"
         " | 'é' + 1\n | .\xef\xbc\x8e..^"},
        /* the expected result types (Capsule's validateOutputType) */
        {"object.metadata.name", CEL_EXPECT_BOOL, "expression must evaluate to bool, got dyn"},
        {"1 + 1", CEL_EXPECT_BOOL, "expression must evaluate to bool, got int"},
        {"null", CEL_EXPECT_BOOL, "expression must evaluate to bool, got null_type"},
        {"object.spec.x", CEL_EXPECT_QUANTITY,
         "expression must evaluate to kubernetes.Quantity or list<kubernetes.Quantity>, got dyn"},
        {"object.l.map(x, x)", CEL_EXPECT_QUANTITY,
         "expression must evaluate to kubernetes.Quantity or list<kubernetes.Quantity>, got "
         "list(dyn)"},
        {"[]", CEL_EXPECT_QUANTITY,
         "expression must evaluate to kubernetes.Quantity or list<kubernetes.Quantity>, got "
         "list(dyn)"},
        {"[quantity('1'), object.x]", CEL_EXPECT_QUANTITY,
         "expression must evaluate to kubernetes.Quantity or list<kubernetes.Quantity>, got "
         "list(dyn)"},
        {"{'a': quantity('1')}", CEL_EXPECT_QUANTITY,
         "expression must evaluate to kubernetes.Quantity or list<kubernetes.Quantity>, got "
         "map(string, kubernetes.Quantity)"},
        {"quantity('1').asInteger()", CEL_EXPECT_STRING,
         "expression must evaluate to string, got int"},
    };
    run_compile_errors(rows, N(rows));
    /* ...and what does type-check to the expected kinds */
    static const struct {
        const char *expr;
        cel_expect expect;
        const char *type;
    } ok[] = {
        {"object.a ? true : object.b", CEL_EXPECT_BOOL, "bool"},
        {"object.a ? quantity('1') : object.b", CEL_EXPECT_QUANTITY, "kubernetes.Quantity"},
        {"quantity(object.spec.x)", CEL_EXPECT_QUANTITY, "kubernetes.Quantity"},
        {"object.l.map(x, quantity(x)).filter(q, q.sign() >= 0)", CEL_EXPECT_ANY, NULL},
        {"object.l.map(x, quantity(x)).filter(q, sign(q) >= 0)", CEL_EXPECT_QUANTITY,
         "list(kubernetes.Quantity)"},
        {"[quantity('1'), quantity('2')] + object.more", CEL_EXPECT_QUANTITY,
         "list(kubernetes.Quantity)"},
        {"quantity('1').add(object.n)", CEL_EXPECT_QUANTITY, "kubernetes.Quantity"},
        {"!object.flag", CEL_EXPECT_BOOL, "bool"},
        {"has(object.x)", CEL_EXPECT_BOOL, "bool"},
        {"object.x == 1", CEL_EXPECT_BOOL, "bool"},
        {"object.x.exists(y, y)", CEL_EXPECT_BOOL, "bool"},
        {"object.x + 1", CEL_EXPECT_ANY, "int"},
        {"object.x + object.y", CEL_EXPECT_ANY, "dyn"},
        {"[1, 'a']", CEL_EXPECT_ANY, "list(dyn)"},
        {"{'a': 1}", CEL_EXPECT_ANY, "map(string, int)"},
        {"'a' + object.s", CEL_EXPECT_STRING, "string"},
    };
    char err[1024];
    for (size_t i = 0; i < N(ok); i++) {
        cel_program *p = cel_compile(ok[i].expr, ok[i].expect, err, sizeof err);
        if (!p) {
            if (ok[i].type) bad("%s: %s", ok[i].expr, err);
            continue;
        }
        if (!ok[i].type)
            bad("%s: compiled to %s, want an error", ok[i].expr, cel_result_type(p));
        else if (strcmp(cel_result_type(p), ok[i].type))
            bad("%s: type %s, want %s", ok[i].expr, cel_result_type(p), ok[i].type);
        cel_free(p);
    }
    done();
}

static void test_syntax_errors(void **state)
{
    static const cerr_row rows[] = {
        {"1 +", CEL_EXPECT_ANY,
         "ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', "
         "'.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
         "IDENTIFIER}\n | 1 +\n | ...^"},
        {"1 2", CEL_EXPECT_ANY,
         "ERROR: <input>:1:3: Syntax error: extraneous input '2' expecting <EOF>\n | 1 2\n | ..^"},
        {"(1", CEL_EXPECT_ANY,
         "ERROR: <input>:1:3: Syntax error: mismatched input '<EOF>' expecting ')'\n | (1\n | ..^"},
        {"a = 1", CEL_EXPECT_ANY,
         "ERROR: <input>:1:3: Syntax error: token recognition error at: '='\n | a = 1\n | ..^"},
        {"'abc", CEL_EXPECT_ANY,
         "ERROR: <input>:1:1: Syntax error: token recognition error at: ''abc'\n | 'abc\n | ^"},
        {"'\\q'", CEL_EXPECT_ANY,
         "ERROR: <input>:1:1: Syntax error: token recognition error at: ''\\q'\n | '\\q'\n | ^"},
        {"b'abc'", CEL_EXPECT_ANY,
         "ERROR: <input>:1:1: Syntax error: bytes literals are not supported\n | b'abc'\n | ^"},
        {"9223372036854775808", CEL_EXPECT_ANY,
         "ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808\n | ^"},
        {"18446744073709551616u", CEL_EXPECT_ANY,
         "ERROR: <input>:1:1: invalid uint literal\n | 18446744073709551616u\n | ^"},
        {"1e999", CEL_EXPECT_ANY, "ERROR: <input>:1:1: invalid double literal\n | 1e999\n | ^"},
        {"while", CEL_EXPECT_ANY, "ERROR: <input>:1:1: reserved identifier: while\n | while\n | ^"},
        {"has(object)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:5: invalid argument to has() macro\n | has(object)\n | ....^"},
        {"[1].all(x.y, true)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:10: argument must be a simple name\n | [1].all(x.y, true)\n"
         " | .........^"},
        {"object.", CEL_EXPECT_ANY,
         "ERROR: <input>:1:8: Syntax error: mismatched input '<EOF>' expecting IDENTIFIER\n"
         " | object.\n | .......^"},
        {"f(1,)", CEL_EXPECT_ANY,
         "ERROR: <input>:1:5: Syntax error: mismatched input ')' expecting {'[', '{', '(', '.', "
         "'-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, "
         "IDENTIFIER}\n | f(1,)\n | ....^"},
        {"object.?a", CEL_EXPECT_ANY,
         "ERROR: <input>:1:8: Syntax error: mismatched input '?' expecting IDENTIFIER\n"
         " | object.?a\n | .......^"},
    };
    run_compile_errors(rows, N(rows));
    char err[256];
    assert_null(cel_compile("", CEL_EXPECT_BOOL, err, sizeof err));
    assert_string_equal(err, "CEL expression must not be empty");
    assert_null(cel_compile(" \n\t ", CEL_EXPECT_BOOL, err, sizeof err));
    assert_string_equal(err, "CEL expression must not be empty");
    done();
}

/* ---- limits ----------------------------------------------------------------------------- */

static char *repeat(const char *head, const char *unit, size_t times, const char *tail)
{
    size_t n = strlen(head) + strlen(unit) * times + strlen(tail);
    char *s = malloc(n + 1), *o = s;
    o += sprintf(o, "%s", head);
    for (size_t i = 0; i < times; i++)
        o += sprintf(o, "%s", unit);
    sprintf(o, "%s", tail);
    return s;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void test_length_and_nesting_limits(void **state)
{
    char err[8192];
    /* a 4 KB expression: an || chain of 120 comparisons, padded to exactly 4096 bytes by
     * a last comparison with a long string literal */
    char *head = repeat("object.metadata.name == 'x'", " || object.metadata.name == 'x'", 118,
                        " || object.metadata.name == 'p1'");
    size_t pad = CEL_MAX_EXPR_LEN - strlen(head) - strlen(" || object.metadata.name == ''");
    char *lit = repeat("", "p", pad, "");
    char *s = malloc(CEL_MAX_EXPR_LEN + 1);
    sprintf(s, "%s || object.metadata.name == '%s'", head, lit);
    size_t len = strlen(s);
    assert_int_equal(len, CEL_MAX_EXPR_LEN);
    assert_true(eval_bool(s, POD));
    free(head);
    free(lit);
    /* one byte more is refused, after trimming */
    char *t = malloc(len + 4);
    sprintf(t, "  %s ", s);
    cel_program *p = cel_compile(t, CEL_EXPECT_BOOL, err, sizeof err);
    assert_non_null(p); /* trimmed back to 4096 */
    cel_free(p);
    sprintf(t, "(%s)", s);
    assert_null(cel_compile(t, CEL_EXPECT_BOOL, err, sizeof err));
    assert_string_equal(err, "CEL expression exceeds max length of 4096");
    free(t);
    free(s);

    /* 1,000-deep parentheses: refused at depth 250, fast */
    s = repeat("", "(", 1000, "1");
    t = repeat(s, ")", 1000, "");
    assert_null(cel_compile(t, CEL_EXPECT_ANY, err, sizeof err));
    assert_non_null(strstr(err, "ERROR: <input>:1:251: expression recursion limit exceeded: 250"));
    free(s);
    free(t);
    /* 249 pairs (250 levels) still compile */
    s = repeat("", "(", CEL_MAX_DEPTH - 1, "1");
    t = repeat(s, ")", CEL_MAX_DEPTH - 1, "");
    p = cel_compile(t, CEL_EXPECT_ANY, err, sizeof err);
    assert_non_null(p);
    cel_free(p);
    free(s);
    free(t);
    /* nested lists and calls count as nesting too */
    s = repeat("", "[", 300, "");
    assert_null(cel_compile(s, CEL_EXPECT_ANY, err, sizeof err));
    assert_non_null(strstr(err, "expression recursion limit exceeded: 250"));
    free(s);
    s = repeat("", "size(", 300, "");
    assert_null(cel_compile(s, CEL_EXPECT_ANY, err, sizeof err));
    assert_non_null(strstr(err, "expression recursion limit exceeded: 250"));
    free(s);
    /* a left-deep chain taller than 250 nodes (cel-go: max recursion depth exceeded) */
    s = repeat("1", " + 1", 300, "");
    assert_null(cel_compile(s, CEL_EXPECT_ANY, err, sizeof err));
    assert_non_null(strstr(err, ": max recursion depth exceeded\n"));
    free(s);
    s = repeat("object", ".a", 300, "");
    assert_null(cel_compile(s, CEL_EXPECT_ANY, err, sizeof err));
    assert_non_null(strstr(err, ": max recursion depth exceeded\n"));
    free(s);
    /* while long && and || chains are balanced, as cel-go's parser does */
    s = repeat("true", " && true", 500, "");
    assert_true(eval_bool(s, "{}"));
    free(s);
    /* !!!! and ---- fold without nesting */
    s = repeat("", "!", 1001, "true");
    assert_false(eval_bool(s, "{}"));
    free(s);
}

static int eval_limited(const char *expr, const char *obj, const cel_limits *lim, char *err,
                        size_t n)
{
    cel_program *p = cel_compile(expr, CEL_EXPECT_ANY, err, n);
    if (!p) fail_msg("%s: %s", expr, err);
    json_t *o = J(obj), *out = NULL;
    const json_t *vars[] = {o};
    int rc = cel_eval_json(p, vars, lim, &out, err, n);
    json_decref(out);
    json_decref(o);
    cel_free(p);
    return rc;
}

#define COST_MSG "operation cancelled: actual cost limit exceeded"
#define MEM_MSG "operation cancelled: memory limit exceeded"

static void expect_limit(const char *expr, const char *obj, const cel_limits *lim, const char *msg)
{
    char err[8192];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = eval_limited(expr, obj, lim, err, sizeof err);
    double secs = seconds_since(&t0);
    if (rc != CEL_ERR_LIMIT || !strstr(err, msg))
        bad("%.60s...: rc %d, %s; want %s", expr, rc, err, msg);
    if (secs > 2.0) bad("%.60s...: took %.2fs to stop", expr, secs);
}

static void test_runtime_limits(void **state)
{
    const char *ten = "[1,2,3,4,5,6,7,8,9,10]";
    char buf[4096];
    /* a macro that would build a huge list: 10^7 elements */
    snprintf(buf, sizeof buf,
             "%s.map(a, %s.map(b, %s.map(c, %s.map(d, %s.map(e, %s.map(f, [a, b, c, d, e, f]))))))",
             ten, ten, ten, ten, ten, ten);
    expect_limit(buf, "{}", NULL, COST_MSG);
    /* exponential string growth: stopped by cost, or by memory with a large cost budget */
    const char *dbl = "['0123456789abcdef'].map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s)"
                      ".map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s)"
                      ".map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s)"
                      ".map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s)"
                      ".map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s)"
                      ".map(s, s + s).map(s, s + s).map(s, s + s).map(s, s + s)[0].size()";
    cel_limits big_memory = {.memory = 64 << 20};
    expect_limit(dbl, "{}", &big_memory, COST_MSG);
    expect_limit(dbl, "{}", NULL, MEM_MSG); /* the default 8 MiB go first */
    cel_limits big_cost = {.cost = UINT64_MAX / 2, .memory = 1 << 20};
    expect_limit(dbl, "{}", &big_cost, MEM_MSG);
    /* exponential time without space (langdef "Macro Performance") */
    snprintf(buf, sizeof buf, "%s",
             "[0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, "
             "[0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, "
             "[0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, "
             "[0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, [0,1].all(x, "
             "1 / 0 == 1))))))))))))))))))))))))");
    expect_limit(buf, "{}", NULL, COST_MSG);
    /* a large input scanned by nested macros */
    json_t *items = json_array();
    for (int i = 0; i < 5000; i++)
        json_array_append_new(items, json_integer(i));
    json_t *wrap = json_pack("{s:o}", "items", items);
    char *obj = json_dumps(wrap, 0);
    json_decref(wrap);
    for (char *c = obj; *c; c++)
        if (*c == '"') *c = '\'';
    expect_limit("object.items.all(x, object.items.exists(y, y == x + 1) || x == 4999)", obj, NULL,
                 COST_MSG);
    /* the same passes with a budget large enough */
    char err[1024];
    cel_limits lim = {.cost = 100000000};
    assert_int_equal(eval_limited("object.items.filter(x, x % 1000 == 0).size() == 5", obj, &lim,
                                  err, sizeof err),
                     CEL_OK);
    free(obj);
    /* lists share their elements: 28 doublings are a 2^28-leaf value built for almost
     * nothing; comparing it, searching it or turning it into JSON must stop as well */
    char *dag = repeat("[[1]]", ".map(a, [a, a])", 28, "");
    snprintf(buf, sizeof buf, "%s == %s", dag, dag);
    expect_limit(buf, "{}", NULL, COST_MSG);
    char *needle = repeat("[[1]]", ".map(a, [a, a])", 27, ""); /* found after 2^27 leaves */
    snprintf(buf, sizeof buf, "dyn(%s) in [%s]", needle, needle);
    expect_limit(buf, "{}", NULL, COST_MSG);
    free(needle);
    expect_limit(dag, "{}", NULL, MEM_MSG);
    free(dag);
    dag = repeat("[object]", ".map(a, [a, a])", 28, "");
    expect_limit(dag, "{'a':[1,2,3]}", NULL, MEM_MSG);
    free(dag);
    /* a tight budget stops even simple expressions, and matchConditions get 100000 */
    cel_limits tiny = {.cost = 5};
    expect_limit("[1, 2, 3].map(x, x * 2)", "{}", &tiny, COST_MSG);
    cel_limits cond = {.cost = CEL_CONDITION_COST_LIMIT};
    expect_limit("[1,2,3,4,5,6,7,8,9,10].map(a, [1,2,3,4,5,6,7,8,9,10].map(b, "
                 "[1,2,3,4,5,6,7,8,9,10].map(c, [1,2,3,4,5,6,7,8,9,10].map(d, a + b + c + d))))",
                 "{}", &cond, COST_MSG);
    /* the evaluation after a limit is clean: the program is reusable */
    assert_int_equal(
        eval_limited("[1, 2, 3].map(x, x * 2) == [2, 4, 6]", "{}", NULL, err, sizeof err), CEL_OK);
    done();
}

/* ---- API -------------------------------------------------------------------------------- */

static void test_api(void **state)
{
    char err[512];
    cel_program *p = cel_compile("quantity('1')", CEL_EXPECT_QUANTITY, err, sizeof err);
    assert_non_null(p);
    assert_string_equal(cel_source(p), "quantity('1')");
    bool b;
    assert_int_equal(cel_eval_bool(p, NULL, NULL, &b, err, sizeof err), CEL_ERR_USAGE);
    cel_free(p);
    p = cel_compile("  1 > 0  ", CEL_EXPECT_BOOL, err, sizeof err);
    assert_string_equal(cel_source(p), "1 > 0");
    qty q;
    assert_int_equal(cel_eval_quantity(p, NULL, NULL, &q, err, sizeof err), CEL_ERR_USAGE);
    assert_int_equal(cel_eval_bool(p, NULL, NULL, &b, err, sizeof err), CEL_OK);
    assert_true(b);
    cel_free(p);
    cel_free(NULL);
    /* CEL's JSON mapping of results */
    static const row rows[] = {
        {"18446744073709551615u", "\"18446744073709551615\""},
        {"9223372036854775807u", "9223372036854775807"},
        {"[quantity('1.5Gi'), 2.5, null]", "[\"1536Mi\",2.5,null]"},
        {"object", "{\"a\":[1,{\"b\":true}]}"},
        {"object.a", "[1,{\"b\":true}]"},
    };
    run_rows(rows, N(rows), "{'a':[1,{'b':true}]}");
    char *got = eval_any("{1: 'a'}", NULL, err, sizeof err);
    assert_null(got);
    assert_non_null(strstr(err, "result cannot be converted to JSON"));
    done();
}

/* A compiled program is immutable: many threads may evaluate it at once. */
typedef struct shared {
    const cel_program *p;
    const json_t *obj;
    int errors;
} shared;

static void *worker(void *arg)
{
    shared *s = arg;
    char err[256];
    for (int i = 0; i < 2000; i++) {
        qty q, want;
        const json_t *vars[] = {s->obj};
        qty_parse("350m", &want);
        if (cel_eval_quantity(s->p, vars, NULL, &q, err, sizeof err) || qty_cmp(&q, &want))
            __atomic_add_fetch(&s->errors, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

static void test_threads(void **state)
{
    char err[256];
    shared s = {.p =
                    cel_compile("object.spec.containers.map(c, quantity(c.resources.requests.cpu))",
                                CEL_EXPECT_QUANTITY, err, sizeof err),
                .obj = J(POD)};
    assert_non_null(s.p);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, &s), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(s.errors, 0);
    json_decref((json_t *)s.obj);
    cel_free((cel_program *)s.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_literals),
        cmocka_unit_test(test_arithmetic_and_precedence),
        cmocka_unit_test(test_overflow_and_division),
        cmocka_unit_test(test_equality),
        cmocka_unit_test(test_ordering),
        cmocka_unit_test(test_logic_and_errors),
        cmocka_unit_test(test_membership_size_strings),
        cmocka_unit_test(test_macros),
        cmocka_unit_test(test_field_selection),
        cmocka_unit_test(test_unbound_variable),
        cmocka_unit_test(test_conversions),
        cmocka_unit_test(test_quantity_library),
        cmocka_unit_test(test_capsule_expression_tests),
        cmocka_unit_test(test_spec_vectors),
        cmocka_unit_test(test_seed_match_conditions),
        cmocka_unit_test(test_type_errors),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_length_and_nesting_limits),
        cmocka_unit_test(test_runtime_limits),
        cmocka_unit_test(test_api),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
