/* test_quantity.c - resource.Quantity vectors (spec §1.5) and arithmetic (core/quantity.c).
 *
 * allot always prints the canonical form, so where upstream echoes a cached input
 * (spec §1.3 "parse-string caching") the expected value below is the canonical one
 * and the row says "cached". Each table test reports every mismatching row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "core/quantity.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *str(const qty *q, char *buf)
{
    qty_format_str(q, buf, QTY_STR_MAX);
    return buf;
}

static qty P(const char *s)
{
    qty q;
    int err = qty_parse(s, &q);
    if (err) fail_msg("parse %s: %s", s, qty_strerror(err));
    return q;
}

/* ---- parse -> canonical String() ------------------------------------------------------------ */

static const struct {
    const char *in, *want;
} parse_vectors[] = {
    /* §1.5 rows 1-53 */
    {"1Gi", "1Gi"},
    {"1024Mi", "1Gi"},
    {"300Mi", "300Mi"},
    {"307200Ki", "300Mi"},
    {"6Ki", "6Ki"},
    {"1001Gi", "1001Gi"},
    {"1025024Mi", "1001Gi"},
    {"1Ti", "1Ti"},
    {"1024Gi", "1Ti"},
    {"5", "5"},
    {"5000m", "5"},
    {"500m", "500m"},
    {"0.5", "500m"},
    {"1G", "1G"},
    {"1000M", "1G"},
    {"0.001T", "1G"},
    {"1m", "1m"},
    {"1000u", "1m"},
    {"80m", "80m"},
    {"1080m", "1080m"},
    {"1.08", "1080m"},
    {"1080000000n", "1080m"},
    {"300M", "300M"},
    {"1T", "1T"},
    {"1234567M", "1234567M"},
    {"1234567m", "1234567m"},
    {"3k", "3k"},
    {"1025", "1025"},
    {"0", "0"},
    {"00", "0"},
    {"1e9", "1e9"},
    {".001e12", "1e9"},
    {"1e-3", "1e-3"},
    {"0.001e0", "1e-3"},
    {"1e-9", "1e-9"},
    {"1000e-12", "1e-9"},
    {"80e-3", "80e-3"},
    {"300e6", "300e6"},
    {"1e12", "1e12"},
    {"1e3", "1e3"},
    {"3e3", "3e3"},
    {"1n", "1n"},
    {"80n", "80n"},
    {"1080n", "1080n"},
    {"1u", "1u"},
    {"80u", "80u"},
    {"1080u", "1080u"},
    {"1Ki", "1Ki"},
    {"1Mi", "1Mi"},
    {".001Ki", "1024m"},
    {".000001Ki", "1024u"},
    {".000000001Ki", "1024n"},
    {".000000000001Ki", "2n"},
    /* row 54 (negated ParseEmit) */
    {"-1Ki", "-1Ki"},
    {"-1024Mi", "-1Gi"},
    {"-.001Ki", "-1024m"},
    {"-.000000000001Ki", "-2n"},
    /* rows 55-78 (TestParseQuantity: beyond int64, never capped) */
    {"-999999999999999999", "-999999999999999999"},
    {"999999999999999999.0", "999999999999999999"},
    {"999999999999999999.1", "999999999999999999100m"},
    {"9999999999999999999", "9999999999999999999"},
    {"1E", "1E"},
    {"-1E", "-1E"},
    {"1000000000000000000", "1E"},
    {"1.0E", "1E"},
    {"1000000000000000000.0", "1E"},
    {"9999999999999999999000m", "9999999999999999999"},
    {"9999999999999999999.1", "9999999999999999999100m"},
    {"1.0000000000000000001E", "1000000000000000000100m"},
    {"1.000000000000000001E", "1000000000000000001"},
    {"10E", "10E"},
    {"-10E", "-10E"},
    {"10000000000000000000", "10E"},
    {"10.0E", "10E"},
    {"10000000000000000000000m", "10E"},
    {"10.0000000000000000001E", "10000000000000000000100m"},
    {"10.000000000000000001E", "10000000000000000001"},
    {"-9223372036854775809", "-9223372036854775809"},
    {"9223372036854775806000m", "9223372036854775806"},
    {"-9223372036854775808.1", "-9223372036854775808100m"},
    {"9223372036854775807000m", "9223372036854775807"},
    {"9223372036854775808", "9223372036854775808"},
    {"9223372036854775808.1", "9223372036854775808100m"},
    /* rows 89-114 (derived) */
    {"8Ki", "8Ki"},
    {"50k", "50k"},
    {"40T", "40T"},
    {"300T", "300T"},
    {"100.035k", "100035"}, /* cached upstream: "100.035k" */
    {"0.0005k", "500m"},
    {"0.00050k", "500m"},
    {"0.005", "5m"},
    {"0.05", "50m"},
    {"0.001", "1m"},
    {".001", "1m"},
    {"10.035M", "10035k"}, /* cached upstream: "10.035M" */
    {"1.2e3", "1200"},
    {"1.3E+6", "1300e3"},
    {"1.40e9", "1400e6"},
    {"1.53E12", "1530e9"},
    {"1.6e15", "1600e12"},
    {"1.7E18", "1700e15"},
    {"1e14", "100e12"},
    {"1e13", "10e12"},
    {"1E6", "1e6"},   /* cached upstream: "1E6" */
    {"1E-3", "1e-3"}, /* cached upstream: "1E-3" */
    {"1E12", "1e12"}, /* cached upstream: "1E12" */
    {"0.5e0", "500e-3"},
    {"0.5e-1", "50e-3"},
    {"0.5e-2", "5e-3"},
    {"0.5e-9", "1e-9"},
    {"9.01", "9010m"},
    {"-9.01", "-9010m"},
    {"8.1k", "8100"},
    {"7.123456M", "7123456"},       /* cached upstream: "7.123456M" */
    {"6.987654321G", "6987654321"}, /* cached upstream: "6.987654321G" */
    {"5.444T", "5444G"},            /* cached upstream: "5.444T" */
    {"40.1T", "40100G"},
    {"300.2T", "300200G"},
    {"2.5P", "2500T"},
    {"1.01E", "1010P"},
    {"3.001n", "4n"},
    {"0.9n", "1n"},
    {"0.0000000001", "1n"},
    {"0.00000012345", "124n"},
    {"-0.0000000001", "-1n"},
    {"1.1E-9", "2e-9"},
    {"12E", "12E"},
    {"9Ei", "9223372036854775807"},
    {"9223372036854775807Ki", "9223372036854775807"},
    {"100.035Ki", "102435840m"},
    {"0.5Mi", "512Ki"},
    {"0.05Gi", "53687091200m"},
    {"0.025Ti", "27487790694400m"},
    {"1.", "1"},   /* cached upstream: "1." */
    {"1.G", "1G"}, /* cached upstream: "1.G" */
    {".0001k", "100m"},
    {"0n", "0"},
    {"0u", "0"},
    {"0m", "0"},
    {"0Ki", "0"},
    {"0k", "0"},
    {"0Mi", "0"},
    {"0G", "0"},
    {"0Ti", "0"},
    {"1.500", "1500m"}, /* cached upstream: "1.500" */
    {"1.001", "1001m"}, /* cached upstream: "1.001" */
    {"+1", "1"},        /* cached upstream: "+1" */
    {"01", "1"},        /* cached upstream: "01" */
    {"1000E", "1e21"},  /* upstream <= 1.35: "1"; PR #140459: "1e21" */
    /* more: exponent-form fallback, scanner leniency, binary, big exponents */
    {"5000E", "5e21"},
    {"1000000E", "1e24"},
    {"1000000000000000000000", "1e21"},
    {"1e-12", "1e-9"},
    {"0.1m", "100u"},
    {"1.5Gi", "1536Mi"},
    {"1Ei", "1Ei"},
    {"1024Pi", "1Ei"},
    {"8Ei", "9223372036854775807"},
    {"-9Ei", "-9223372036854775807"},
    {".5Ki", "512"},
    {"1023", "1023"},
    {"-", "0"},
    {"+", "0"},
    {".", "0"},
    {"-.", "0"},
    {"-0", "0"},
    {"000.000", "0"},
    {"k", "0"},
    {"Ki", "0"},
    {"e3", "0"},
    {"0e-10", "0"},
    {"1e+3", "1e3"},
    {"1e003", "1e3"},
    {"1e4294967297", "10"},                  /* Go's int32(ParseInt(..)) keeps the low 32 bits */
    {"1000e2147483647", "10000e2147483646"}, /* exponent kept within int32 (PR #142156) */
    {"123456789012345678901234567890", "123456789012345678901234567890"},
    {"0.000000000000000000000000000000000000000000000000000000000000000000000000000000000001",
     "1n"},
};

static void test_parse_vectors(void **state)
{
    char buf[QTY_STR_MAX];
    int failures = 0;
    for (size_t i = 0; i < N(parse_vectors); i++) {
        qty q;
        int err = qty_parse(parse_vectors[i].in, &q);
        if (err || strcmp(str(&q, buf), parse_vectors[i].want) != 0) {
            print_error("parse %-24s -> %s (err %d), want %s\n", parse_vectors[i].in,
                        err ? "-" : buf, err, parse_vectors[i].want);
            failures++;
            continue;
        }
        /* Canonical output parses back to the same value. */
        qty back;
        if (qty_parse(buf, &back) != 0 || qty_cmp(&q, &back) != 0) {
            print_error("round trip %s -> %s changed the value\n", parse_vectors[i].in, buf);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* ---- invalid input ------------------------------------------------------------------------ */

static const struct {
    const char *in;
    int err;
} invalid_vectors[] = {
    /* §1.1 invalid examples */
    {"1.1.M", QTY_ERR_FORMAT},
    {"1+1.0M", QTY_ERR_FORMAT},
    {"0.1mi", QTY_ERR_SUFFIX},
    {"0.1am", QTY_ERR_FORMAT},
    {"aoeu", QTY_ERR_FORMAT},
    {".5i", QTY_ERR_SUFFIX},
    {"1i", QTY_ERR_SUFFIX},
    {"-3.01i", QTY_ERR_SUFFIX},
    {"-3.01e-", QTY_ERR_SUFFIX},
    {" 1", QTY_ERR_FORMAT},
    {"1 ", QTY_ERR_FORMAT},
    {"", QTY_ERR_FORMAT},
    {"Non-Numeric", QTY_ERR_FORMAT},
    /* derived from the scanner */
    {"1e", QTY_ERR_SUFFIX},
    {"1ee3", QTY_ERR_SUFFIX},
    {"1Ki1", QTY_ERR_SUFFIX},
    {"1KI", QTY_ERR_FORMAT},
    {"1K", QTY_ERR_SUFFIX},
    {"1e99999999999999999999", QTY_ERR_SUFFIX},
    {"1-", QTY_ERR_SUFFIX},
    {"--1", QTY_ERR_SUFFIX},
    {"1e3.5", QTY_ERR_FORMAT},
    {"1.0.0", QTY_ERR_FORMAT},
    {"1,5", QTY_ERR_FORMAT},
    {"0x10", QTY_ERR_FORMAT},
    {".e-10", QTY_ERR_NUMERIC}, /* inf.Dec path with no digits */
    {"e-10", QTY_ERR_NUMERIC},
    {"-e-10", QTY_ERR_NUMERIC},
    /* allot's precision limit (upstream has none) */
    {"1234567890123456789012345678901234567890123456789012345678901234567890123", QTY_ERR_RANGE},
    {"1e70000000000000000000000000000000000000000000000000000000000000000000000000001",
     QTY_ERR_SUFFIX},
};

static void test_invalid_vectors(void **state)
{
    int failures = 0;
    for (size_t i = 0; i < N(invalid_vectors); i++) {
        qty q = qty_from_int64(7, 0, QTY_BINARY_SI);
        int err = qty_parse(invalid_vectors[i].in, &q);
        if (err != invalid_vectors[i].err || !qty_is_zero(&q)) {
            print_error("parse \"%s\" -> %d, want %d\n", invalid_vectors[i].in, err,
                        invalid_vectors[i].err);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    assert_int_equal(qty_parse_len("1\0", 2, &(qty){0}), QTY_ERR_FORMAT); /* embedded NUL */
    assert_int_equal(qty_parse(NULL, &(qty){0}), QTY_ERR_FORMAT);
}

static void test_strerror(void **state)
{
    assert_string_equal(qty_strerror(QTY_ERR_FORMAT),
                        "quantities must match the regular expression "
                        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
    assert_string_equal(qty_strerror(QTY_ERR_NUMERIC), "unable to parse numeric part of quantity");
    assert_string_equal(qty_strerror(QTY_ERR_SUFFIX), "unable to parse quantity's suffix");
    assert_string_equal(qty_strerror(0), "");
    assert_string_equal(qty_strerror(12345), "unknown error");
}

/* ---- constructors (rows 79-85, 88) -------------------------------------------------------- */

static const struct {
    int64_t v;
    int32_t scale;
    int format;
    const char *want;
} ctor_vectors[] = {
    {1, 0, QTY_DECIMAL_SI, "1"},
    {1000, 0, QTY_DECIMAL_SI, "1k"},
    {1234000, 0, QTY_DECIMAL_SI, "1234k"},
    {1024, 0, QTY_BINARY_SI, "1Ki"},
    {1048576, 0, QTY_BINARY_SI, "1Mi"},
    {1000000, 0, 99, "1e6"}, /* invalid format prints as DecimalExponent */
    {1, -3, QTY_DECIMAL_SI, "1m"},
    {1000, -3, QTY_DECIMAL_SI, "1"},
    {1234000, -3, QTY_DECIMAL_SI, "1234"},
    {1024, -3, QTY_BINARY_SI, "1024m"},
    {1048576, -3, QTY_BINARY_SI, "1048576m"},
    {1000000, -3, 99, "1e3"},
    {1, -9, QTY_DECIMAL_SI, "1n"},
    {1000, -9, QTY_DECIMAL_SI, "1u"},
    {1, -6, QTY_DECIMAL_SI, "1u"},
    {1000, -6, QTY_DECIMAL_SI, "1m"},
    {1, -3, QTY_DECIMAL_SI, "1m"},
    {1000, -3, QTY_DECIMAL_SI, "1"},
    {0, -9, QTY_DECIMAL_SI, "0"},
    {5LL * 1024 * 1024 * 1024, 0, QTY_BINARY_SI, "5Gi"},
    {5000000000LL, 0, QTY_DECIMAL_SI, "5G"},
    {5300, -3, QTY_DECIMAL_SI, "5300m"},
    /* beyond the SI table: exponent form (PR #140459) */
    {1, -12, QTY_DECIMAL_EXPONENT, "1e-12"},
    {1, -12, QTY_DECIMAL_SI, "1e-12"},
    {1, 21, QTY_DECIMAL_SI, "1e21"},
    {INT64_MIN, 0, QTY_DECIMAL_SI, "-9223372036854775808"},
    /* int64-backed MinInt64 is printed in base 10 by upstream too */
    {INT64_MIN, 0, QTY_BINARY_SI, "-9223372036854775808"},
    {-1024, 0, QTY_BINARY_SI, "-1Ki"},
    {-1023, 0, QTY_BINARY_SI, "-1023"},
};

static void test_ctor_vectors(void **state)
{
    char buf[QTY_STR_MAX];
    int failures = 0;
    for (size_t i = 0; i < N(ctor_vectors); i++) {
        qty q = qty_from_int64(ctor_vectors[i].v, ctor_vectors[i].scale,
                               (qty_format)ctor_vectors[i].format);
        if (strcmp(str(&q, buf), ctor_vectors[i].want) != 0) {
            print_error("ctor %lld e%d -> %s, want %s\n", (long long)ctor_vectors[i].v,
                        ctor_vectors[i].scale, buf, ctor_vectors[i].want);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* ---- JSON (rows 86-87) -------------------------------------------------------------------- */

static const struct {
    const char *json;
    int err;
    const char *want;
} json_vectors[] = {
    {"\" 1\"", 0, "1"},
    {"\"1 \"", 0, "1"},
    {"1", 0, "1"},
    {" 1", 0, "1"},
    {"1 ", 0, "1"},
    {"10", 0, "10"},
    {"-1", 0, "-1"},
    {" -1", 0, "-1"},
    {"null", 0, "0"},
    {"\"1Gi\"", 0, "1Gi"},
    {"\"\\t500m\\n\"", 0, "500m"},
    {"\"\\u00a01\\u3000\"", 0, "1"}, /* TrimSpace trims Unicode spaces too */
    {"1.5", 0, "1500m"},
    {"-0.25", 0, "-250m"},
    {"1e21", 0, "1e21"},
    {"\"\"", QTY_ERR_FORMAT, "0"},
    {"\"  \"", QTY_ERR_FORMAT, "0"},
    {"\"abc\"", QTY_ERR_FORMAT, "0"},
    {"\"1x\"", QTY_ERR_FORMAT, "0"},
    {"\"1Gb\"", QTY_ERR_FORMAT, "0"},
    {"\"1Ki1\"", QTY_ERR_SUFFIX, "0"},
    {"true", QTY_ERR_FORMAT, "0"},
    {"{}", QTY_ERR_FORMAT, "0"},
    {"[]", QTY_ERR_FORMAT, "0"},
    {"\"1\\u0000\"", QTY_ERR_FORMAT, "0"},
};

static void test_json_vectors(void **state)
{
    char buf[QTY_STR_MAX];
    int failures = 0;
    for (size_t i = 0; i < N(json_vectors); i++) {
        json_error_t jerr;
        json_t *v = json_loads(json_vectors[i].json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        qty q;
        assert_non_null(v);
        int err = qty_from_json(v, &q);
        if (err != json_vectors[i].err || strcmp(str(&q, buf), json_vectors[i].want) != 0) {
            print_error("json %s -> %s (err %d), want %s (err %d)\n", json_vectors[i].json, buf,
                        err, json_vectors[i].want, json_vectors[i].err);
            failures++;
        }
        json_decref(v);
    }
    assert_int_equal(failures, 0);

    qty q;
    assert_int_equal(qty_from_json(NULL, &q), 0);
    assert_true(qty_is_zero(&q));
    q = P("1.5Gi");
    json_t *j = qty_to_json(&q);
    assert_string_equal(json_string_value(j), "1536Mi");
    json_decref(j);
}

/* ---- Cmp ---------------------------------------------------------------------------------- */

static const struct {
    const char *a, *b;
    int want;
} cmp_vectors[] = {
    {"10000T", "100Gi", 1},
    {"100m", "50m", 1},
    {"1", "1000m", 0},
    {"-1", "0", -1},
    {"1Ki", "1024", 0},
    {"10E", "9223372036854775807", 1},
    {"-10E", "-9999999999999999999", -1},
    {"1000E", "999999999999999999999", 1},
    {"0", "0Ki", 0},
    {"1n", "0", 1},
    {"-1n", "0", -1},
    {"1.5", "1500m", 0},
    {"1e-9", "1n", 0},
    {"9223372036854775808", "9223372036854775807", 1},
    {"1e100", "1e99", 1},
    {"1e100", "10e99", 0},
    {"-1e100", "1", -1},
    {"1.0000000001", "1000000001n", 0},
    {"999999999999999999.1", "999999999999999999100m", 0},
    {"1Ei", "1152921504606846976", 0},
    {"1Mi", "1M", 1},
    {"999m", "1", -1},
    {"-999m", "-1", 1},
};

static void test_cmp_vectors(void **state)
{
    int failures = 0;
    for (size_t i = 0; i < N(cmp_vectors); i++) {
        qty a = P(cmp_vectors[i].a), b = P(cmp_vectors[i].b);
        int got = qty_cmp(&a, &b), rev = qty_cmp(&b, &a);
        if (got != cmp_vectors[i].want || rev != -cmp_vectors[i].want) {
            print_error("cmp(%s, %s) = %d/%d, want %d\n", cmp_vectors[i].a, cmp_vectors[i].b, got,
                        rev, cmp_vectors[i].want);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    qty k = P("1Ki");
    assert_int_equal(qty_cmp_int64(&k, 1024), 0);
    assert_int_equal(qty_cmp_int64(&k, 1025), -1);
    assert_int_equal(qty_cmp_int64(&k, INT64_MIN), 1);
}

/* ---- Add / Sub ---------------------------------------------------------------------------- */

static const struct {
    const char *a;
    char op;
    const char *b, *want;
} arith_vectors[] = {
    {"0", '+', "1Gi", "1Gi"}, /* a zero receiver adopts the operand's format */
    {"1", '+', "1Ki", "1025"},
    {"1Ki", '+', "1", "1025"},
    {"1Ki", '+', "1Ki", "2Ki"},
    {"1Gi", '+', "1Gi", "2Gi"},
    {"512Mi", '+', "512Mi", "1Gi"},
    {"1", '+', "1023", "1024"}, /* DecimalSI stays DecimalSI */
    {"10E", '+', "10E", "20E"},
    {"1E", '+', "1E", "2E"},
    {"9E", '+', "9E", "18E"},
    {"9223372036854775807", '+', "1", "9223372036854775808"},
    {"9Ei", '+', "9Ei", "18446744073709551614"},
    {"4Ei", '+', "4Ei", "8Ei"},
    {"8Ei", '+', "1", "8Ei"}, /* capped at 2^63-1, then +1 is exactly 8Ei */
    {"1000E", '+', "1n", "1000000000000000000000000000001n"},
    {"1000E", '+', "1000E", "2e21"},
    {"1000E", '-', "1000E", "0"},
    {"1", '-', "2", "-1"},
    {"100m", '-', "1", "-900m"},
    {"1Gi", '-', "2Gi", "-1Gi"},
    {"0", '-', "1Gi", "-1Gi"}, /* Sub adopts the format of a zero receiver too */
    {"1Gi", '-', "1Gi", "0"},
    {"500m", '+', "500m", "1"},
    {"1.5", '+', "1.5", "3"},
    {"1", '+', "1n", "1000000001n"},
    {"1m", '-', "1n", "999999n"},
    {"999999999999999999", '+', "1", "1E"},
    {"-9223372036854775808", '-', "1", "-9223372036854775809"},
    {"-9223372036854775807", '-', "1", "-9223372036854775808"},
    {"1e100", '+', "1e100", "20e99"},
    {"100Gi", '+', "100Gi", "200Gi"},
    {"1.5Gi", '-', "512Mi", "1Gi"},
    {"-1", '+', "1", "0"},
    {"10000T", '-', "100Gi", "9999892625817600"},
    {"1Ki", '-', "1n", "1023999999999n"}, /* BinarySI with a fraction prints DecimalSI */
    {"-5E", '-', "5E", "-10E"},
    {"20E", '-', "30E", "-10E"},
    {"99999999999999999999E", '+', "99999999999999999999E", "199999999999999999998E"},
};

static void test_arith_vectors(void **state)
{
    char buf[QTY_STR_MAX];
    int failures = 0;
    for (size_t i = 0; i < N(arith_vectors); i++) {
        qty a = P(arith_vectors[i].a), b = P(arith_vectors[i].b);
        int err = arith_vectors[i].op == '+' ? qty_add(&a, &b) : qty_sub(&a, &b);
        if (err || strcmp(str(&a, buf), arith_vectors[i].want) != 0) {
            print_error("%s %c %s = %s (err %d), want %s\n", arith_vectors[i].a,
                        arith_vectors[i].op, arith_vectors[i].b, buf, err, arith_vectors[i].want);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

static void test_arith_edges(void **state)
{
    char buf[QTY_STR_MAX];
    qty sum = qty_zero(QTY_DECIMAL_SI), m = P("1m");

    /* 1000 x 1m == 1, and int64 sums stay exact past int64 */
    for (int i = 0; i < 1000; i++)
        assert_int_equal(qty_add(&sum, &m), 0);
    assert_string_equal(str(&sum, buf), "1");
    assert_int_equal(qty_milli_value(&sum), 1000);

    sum = qty_zero(QTY_DECIMAL_SI);
    qty e = P("9E");
    for (int i = 0; i < 100; i++)
        qty_add(&sum, &e);
    assert_string_equal(str(&sum, buf), "900E");
    for (int i = 0; i < 250; i++)
        qty_sub(&sum, &e);
    assert_string_equal(str(&sum, buf), "-1350E");

    /* A zero left by Sub keeps its format until something is added to it. */
    qty g = P("1Gi"), one = P("1");
    qty_sub(&g, &g);
    assert_int_equal(qty_get_format(&g), QTY_BINARY_SI);
    qty_add(&g, &one);
    assert_string_equal(str(&g, buf), "1");
    assert_int_equal(qty_get_format(&g), QTY_DECIMAL_SI);

    /* More than 72 significant digits: refused, receiver unchanged. */
    qty big = P("1e100");
    assert_int_equal(qty_add(&big, &one), QTY_ERR_RANGE);
    assert_int_equal(qty_sub(&big, &one), QTY_ERR_RANGE);
    assert_string_equal(str(&big, buf), "10e99");

    /* Neg */
    qty k = P("1Ki");
    qty_neg(&k);
    assert_string_equal(str(&k, buf), "-1Ki");
    qty_neg(&k);
    assert_string_equal(str(&k, buf), "1Ki");
    qty z = qty_zero(QTY_DECIMAL_SI);
    qty_neg(&z);
    assert_string_equal(str(&z, buf), "0");
    assert_int_equal(qty_sign(&z), 0);
    qty x = P("-10E");
    qty_neg(&x);
    assert_string_equal(str(&x, buf), "10E");
    assert_int_equal(qty_sign(&x), 1);

    /* Upstream int64 wrap quirks: -MinInt64 == MinInt64 for int64-backed values. */
    qty mn = qty_from_int64(INT64_MIN, 0, QTY_DECIMAL_SI);
    qty_neg(&mn);
    assert_string_equal(str(&mn, buf), "-9223372036854775808");
    qty r = qty_zero(QTY_DECIMAL_SI);
    qty_sub(&r, &mn);
    assert_string_equal(str(&r, buf), "-9223372036854775808");
    /* ... while inf.Dec-backed values negate exactly, and print -8Ei in BinarySI. */
    qty d = P("-4Ei"), d2 = P("-4Ei");
    qty_add(&d, &d2);
    assert_string_equal(str(&d, buf), "-8Ei");
    qty_neg(&d);
    assert_string_equal(str(&d, buf), "8Ei");

    /* BinarySI beyond Ei falls back to DecimalSI (PR #140459). */
    qty ei = qty_zero(QTY_DECIMAL_SI), ei4 = P("4Ei");
    for (int i = 0; i < 256; i++) /* 2^70; parsing "1024Ei" would cap it */
        qty_add(&ei, &ei4);
    assert_string_equal(str(&ei, buf), "1180591620717411303424");

    /* Parse formats */
    assert_int_equal(qty_get_format(&(qty){0}), QTY_DECIMAL_SI);
    qty f;
    qty_parse("1Ki", &f);
    assert_int_equal(qty_get_format(&f), QTY_BINARY_SI);
    qty_parse("1e3", &f);
    assert_int_equal(qty_get_format(&f), QTY_DECIMAL_EXPONENT);
    qty_parse(".000000000001Ki", &f);
    assert_int_equal(qty_get_format(&f), QTY_DECIMAL_SI);
    qty_parse(".5Ki", &f);
    assert_int_equal(qty_get_format(&f), QTY_BINARY_SI);
    qty_parse("0Ki", &f);
    assert_int_equal(qty_get_format(&f), QTY_BINARY_SI);

    /* Truncated output behaves like snprintf. */
    char small[4];
    qty t = P("123456");
    assert_int_equal(qty_format_str(&t, small, sizeof(small)), 6);
    assert_string_equal(small, "123");
}

/* ---- Value / MilliValue ------------------------------------------------------------------- */

static const struct {
    const char *in;
    int64_t value, milli;
} value_vectors[] = {
    {"5Gi", 5368709120LL, 5368709120000LL},
    {"5G", 5000000000LL, 5000000000000LL},
    {"5300m", 6, 5300},
    {"5.4", 6, 5400},
    {"1.5", 2, 1500},
    {"-1.5", -2, -1500}, /* int64-backed: away from zero */
    {"100m", 1, 100},
    {"-100m", -1, -100},
    {"1n", 1, 1},
    {"-1n", -1, -1},
    {"0", 0, 0},
    {"1Ki", 1024, 1024000},
    {"1E", 1000000000000000000LL, 0}, /* int64-backed overflow gives 0 */
    {"10E", 0, 0},
    {"1.50000000000", 2, 1500},
    {"-1.50000000000", 0, -1500}, /* inf.Dec-backed: truncate then +1 (upstream quirk) */
    {"-0.50000000000", 1, -500},
    {"9223372036854775807", INT64_MAX, -1000}, /* inf.Dec overflow wraps */
    {"9Ei", INT64_MAX, -1000},
    {"12345678901234567890", -6101065172474983726LL, 4807115922877858896LL},
    {"1.0000000001", 2, 1001},
    {"0.0000000001", 1, 1},
};

static void test_value_vectors(void **state)
{
    int failures = 0;
    for (size_t i = 0; i < N(value_vectors); i++) {
        qty q = P(value_vectors[i].in);
        int64_t v = qty_value(&q), m = qty_milli_value(&q);
        if (v != value_vectors[i].value || m != value_vectors[i].milli) {
            print_error("%s: Value %lld MilliValue %lld, want %lld %lld\n", value_vectors[i].in,
                        (long long)v, (long long)m, (long long)value_vectors[i].value,
                        (long long)value_vectors[i].milli);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
    qty s = qty_from_int64(1, 2, QTY_DECIMAL_SI);
    assert_int_equal(qty_scaled_value(&s, -2), 10000);
}

/* ---- RoundUp ------------------------------------------------------------------------------ */

static const struct {
    const char *in;
    int32_t scale;
    const char *want;
    bool exact;
} round_vectors[] = {
    {"1.5", 0, "2", false},
    {"-1.5", 0, "-2", false},
    {"1500m", 0, "2", false},
    {"1", 0, "1", true},
    {"123456789n", -3, "124m", false},
    {"1.0000000001", 0, "2", false},
    {"1k", 3, "1k", true},
    {"1001", 3, "2k", false},
    {"-1001", 3, "-2k", false},
    {"0", 3, "0", true},
    {"5", 3, "1k", false},
    {"12345678901234567890.5", 0, "12345678901234567891", false},
};

static void test_round_vectors(void **state)
{
    char buf[QTY_STR_MAX];
    int failures = 0;
    for (size_t i = 0; i < N(round_vectors); i++) {
        qty q = P(round_vectors[i].in);
        bool exact = qty_round_up(&q, round_vectors[i].scale);
        if (exact != round_vectors[i].exact || strcmp(str(&q, buf), round_vectors[i].want) != 0) {
            print_error("RoundUp(%s, %d) = %s exact %d, want %s %d\n", round_vectors[i].in,
                        round_vectors[i].scale, buf, exact, round_vectors[i].want,
                        round_vectors[i].exact);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

/* ---- randomized differential test ---------------------------------------------------------- */

/* Add, Sub and Cmp have fast paths; debug builds (the ASan CI build) re-run the reference
 * code inside every call and abort on any difference in any field. This drives them
 * with many varied operands (fixed seed) and checks algebraic properties on top. */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rnd(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static unsigned rnd_below(unsigned n)
{
    return (unsigned)(rnd() % n);
}

static uint64_t pow10_mod(unsigned k)
{
    uint64_t p = 1;
    while (k--)
        p *= 10;
    return p;
}

static void put_digits(char *buf, size_t *len, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        buf[(*len)++] = (char)('0' + rnd_below(10));
}

/* A random quantity: mostly the shapes seen in pod specs, plus the edges. */
static qty random_qty(void)
{
    /* edges, space-separated */
    static const char special[] =
        "0 1 -1 9223372036854775807 9223372036854775808 -9223372036854775808 "
        "-9223372036854775809 18446744073709551615 18446744073709551616 8E 9E -9E 10E "
        "8Ei 7Ei 4Ei -8Ei 1E 999999999999999999 1000000000000000000 1999999999999999999 "
        "9223372036854775807m 9223372036854775807n -9223372036854775808n 0.123456789123 "
        "-0.123456789123 1n -1n 1e-9 1e-10 1e18 1e19 -1e19 1e100 1e-100 100Ti 1Pi 1023Pi "
        "10m 100m 16Mi 1Gi 100000 1000000000 5E-2 1e3 0.5 1.5Gi "
        "12345678901234567890123456789 1.000000001 999999999n 1000000000n "
        "4611686018427387904 0Ki 0e5 -0 1Ei";
    static const char *const suffix[] = {"",   "",   "",   "k",  "M",  "G",  "T",  "P",
                                         "E",  "m",  "m",  "u",  "n",  "Ki", "Mi", "Gi",
                                         "Ti", "Pi", "Ei", "Mi", "Gi", "e3", "E-2"};
    char buf[96];
    size_t len = 0;
    qty q;
    unsigned kind = rnd_below(16);
    if (kind == 0) {
        const char *p = special;
        unsigned n = 1;
        for (const char *c = special; *c; c++)
            n += *c == ' ';
        for (unsigned k = rnd_below(n); k > 0; k--)
            p = strchr(p, ' ') + 1;
        len = strcspn(p, " ");
        memcpy(buf, p, len);
        buf[len] = '\0';
        q = P(buf);
    } else if (kind == 1) {
        int64_t v = (int64_t)rnd();
        switch (rnd_below(5)) {
        case 0:
            v = rnd_below(2) ? INT64_MIN + (int64_t)rnd_below(3)
                             : INT64_MAX - (int64_t)rnd_below(3);
            break;
        case 1:
            v %= 100000;
            break;
        case 2:
            v %= 1000000000000LL;
            break;
        default:
            v = (v % 1000) * (int64_t)pow10_mod(rnd_below(16)); /* fits */
            break;
        }
        q = qty_from_int64(v, (int32_t)rnd_below(31) - 15, (qty_format)rnd_below(3));
    } else {
        unsigned r = rnd_below(10);
        if (rnd_below(4) == 0) buf[len++] = '-';
        /* integer digits: usually few, sometimes up to 22 */
        unsigned ni = r < 6 ? 1 + rnd_below(4) : r < 9 ? rnd_below(12) : rnd_below(23);
        if (ni && rnd_below(8) == 0) buf[len++] = '0'; /* a leading zero */
        put_digits(buf, &len, ni);
        if (ni && rnd_below(4) == 0) { /* trailing zeros, up to whole limbs of them */
            unsigned nz = 1 + rnd_below(20);
            memset(buf + len, '0', nz);
            len += nz;
        }
        if (rnd_below(5) == 0) { /* fraction: mostly short, sometimes beyond nano */
            buf[len++] = '.';
            put_digits(buf, &len, rnd_below(3) ? 1 + rnd_below(4) : rnd_below(16));
        }
        if (len == 0 || (len == 1 && buf[0] == '-')) buf[len++] = '7';
        if (rnd_below(6) == 0) {
            len += (size_t)sprintf(buf + len, "%c%d", rnd_below(2) ? 'e' : 'E',
                                   (int)rnd_below(41) - 20);
        } else {
            const char *suf = suffix[rnd_below(N(suffix))];
            memcpy(buf + len, suf, strlen(suf));
            len += strlen(suf);
        }
        buf[len] = '\0';
        if (qty_parse(buf, &q) != 0) q = P("3");
    }
    return q;
}

/* int64Amount.Sub negates with Go's wrap, so subtracting an int64-backed MinInt64 adds it. */
static bool is_min_int64(const qty *q)
{
    qty m = qty_from_int64(INT64_MIN, q->uscale, QTY_DECIMAL_SI);
    return !q->big && qty_cmp(q, &m) == 0;
}

static void test_random_differential(void **state)
{
    enum { CASES = 200000, POOL = 512 };
    static qty pool[POOL];
    qty zero = qty_zero(QTY_DECIMAL_SI);
    char b1[QTY_STR_MAX], b2[QTY_STR_MAX];
    /* Coverage counters: each kind of operand pair must show up often. */
    long int_int = 0, to_big = 0, with_big = 0, ranges = 0, zeros = 0, stale_limbs = 0;

    for (int i = 0; i < POOL; i++)
        pool[i] = random_qty();
    for (int i = 0; i < CASES; i++) {
        qty a = rnd_below(4) ? random_qty() : pool[rnd_below(POOL)], b;
        switch (rnd_below(16)) {
        case 0: /* equal values, maybe in another representation */
            b = a;
            break;
        case 1:
            b = a;
            qty_neg(&b);
            break;
        case 2:
            b = qty_zero((qty_format)rnd_below(3));
            break;
        case 3:
        case 4:
        case 5:
            b = pool[rnd_below(POOL)];
            break;
        default:
            b = random_qty();
            break;
        }

        /* Cmp: a total order, antisymmetric and reflexive */
        int c = qty_cmp(&a, &b), rc = qty_cmp(&b, &a);
        if (c < -1 || c > 1 || rc != -c || qty_cmp(&a, &a) != 0)
            fail_msg("cmp(%s, %s) = %d, reverse %d", str(&a, b1), str(&b, b2), c, rc);
        if (qty_cmp(&a, &zero) != qty_sign(&a)) fail_msg("cmp(%s, 0)", str(&a, b1));

        /* Add: cmp(a + b, a) is the sign of b, and Sub of b gives a back */
        qty s = a;
        int err = qty_add(&s, &b);
        if (err == QTY_ERR_RANGE) {
            ranges++;
            if (memcmp(&s, &a, sizeof(s)) != 0) fail_msg("failed Add changed %s", str(&a, b1));
        } else {
            assert_int_equal(err, 0);
            int_int += !a.big && !b.big && !s.big;
            to_big += !a.big && !b.big && s.big;
            with_big += a.big || b.big;
            zeros += qty_is_zero(&s);
            for (int k = s.nlimb; k < QTY_LIMBS; k++)
                stale_limbs += s.limb[k] != 0;
            if (qty_cmp(&s, &a) != qty_sign(&b))
                fail_msg("%s + %s = %s", str(&a, b1), str(&b, b2), str(&s, (char[QTY_STR_MAX]){0}));
            qty t = s;
            if (qty_sub(&t, &b) == 0 && !is_min_int64(&b) && qty_cmp(&t, &a) != 0)
                fail_msg("%s + %s - b = %s", str(&a, b1), str(&b, b2),
                         str(&t, (char[QTY_STR_MAX]){0}));
            if (rnd_below(4) == 0) pool[rnd_below(POOL)] = s;
        }

        /* Sub: the sign of a - b is cmp(a, b) */
        qty d = a;
        if (qty_sub(&d, &b) == 0) {
            if (!is_min_int64(&b) && qty_sign(&d) != c)
                fail_msg("%s - %s = %s", str(&a, b1), str(&b, b2), str(&d, (char[QTY_STR_MAX]){0}));
            for (int k = d.nlimb; k < QTY_LIMBS; k++)
                stale_limbs += d.limb[k] != 0;
            if (rnd_below(4) == 0) pool[rnd_below(POOL)] = d;
        }

        /* Aliased operands: x + x, then x - x is zero */
        qty x = a;
        if (qty_add(&x, &x) == 0 && qty_cmp(&x, &a) != qty_sign(&a))
            fail_msg("%s + itself", str(&a, b1));
        x = a;
        assert_int_equal(qty_sub(&x, &x), 0);
        assert_true(qty_is_zero(&x));
    }
    print_message("random: %d cases; int64 sums %ld, into inf.Dec %ld, with inf.Dec %ld, "
                  "zero %ld, range %ld, stale limbs %ld\n",
                  CASES, int_int, to_big, with_big, zeros, ranges, stale_limbs);
    assert_true(int_int > CASES / 10);
    assert_true(to_big > 1000);
    assert_true(with_big > CASES / 10);
    assert_true(zeros > 1000);
    assert_true(ranges > 100);
    assert_true(stale_limbs > 1000);
}

/* qty_small: every quantity that fits comes back bit for bit; those that
 * do not (19+ digits, huge exponents, inf.Dec-backed) are refused. */
static void test_small(void **state)
{
    (void)state;
    const char *fit[] = {"0", "1", "100m", "-5", "1Gi", "16Mi", "1.5", "999999999999999999",
                         "12345678901234567n", "1e3", "1E300", "0.000001", "-7Ki", "1.25k"};
    for (size_t i = 0; i < sizeof fit / sizeof *fit; i++) {
        qty q, back;
        qty_small s;
        assert_int_equal(qty_parse(fit[i], &q), 0);
        assert_int_equal(qty_to_small(&q, &s), 0);
        assert_int_equal(s.small, 1);
        back = qty_from_small(&s);
        assert_memory_equal(&back, &q, sizeof q);
        /* and after arithmetic, which may leave a different scale and stale
         * limbs: the same value comes back */
        qty sum = q;
        if (qty_add(&sum, &q) == 0 && qty_to_small(&sum, &s) == 0) {
            back = qty_from_small(&s);
            assert_int_equal(qty_cmp(&back, &sum), 0);
            char x[QTY_STR_MAX], y[QTY_STR_MAX];
            qty_format_str(&back, x, sizeof x);
            qty_format_str(&sum, y, sizeof y);
            assert_string_equal(x, y);
        }
    }
    const char *big[] = {"1234567890123456789", "9223372036854775807000", "1e40000", "4Ei"};
    for (size_t i = 0; i < sizeof big / sizeof *big; i++) {
        qty q;
        qty_small s = {.small = 1};
        if (qty_parse(big[i], &q) != 0) continue;
        assert_int_equal(qty_to_small(&q, &s), -1);
        assert_int_equal(s.small, 0);
    }
    qty q = qty_zero(QTY_BINARY_SI);
    qty_small s;
    assert_int_equal(qty_to_small(&q, &s), 0);
    qty back = qty_from_small(&s);
    assert_memory_equal(&back, &q, sizeof q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_vectors),
        cmocka_unit_test(test_invalid_vectors),
        cmocka_unit_test(test_strerror),
        cmocka_unit_test(test_ctor_vectors),
        cmocka_unit_test(test_json_vectors),
        cmocka_unit_test(test_cmp_vectors),
        cmocka_unit_test(test_arith_vectors),
        cmocka_unit_test(test_arith_edges),
        cmocka_unit_test(test_value_vectors),
        cmocka_unit_test(test_round_vectors),
        cmocka_unit_test(test_random_differential),
        cmocka_unit_test(test_small),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
