/* fuzz_quantity.c - libFuzzer target for resource.Quantity (core/quantity.h).
 *
 * Input: one or two quantity texts separated by a NUL byte (the second
 * defaults to the first). Each text is parsed as ParseQuantity does, as a
 * JSON string (UnmarshalJSON trims Unicode space) and, when it is valid JSON
 * such as a bare number, as that JSON value. Nothing may crash, and these
 * contracts must hold (a failure calls abort()):
 *   - a parse error leaves zero and is one of QTY_ERR_*; qty_strerror has text;
 *   - a parsed quantity formats to a string that parses to an equal quantity,
 *     and formatting is canonical (the re-parsed value prints the same text,
 *     or, when the format changed, text that is then a fixed point);
 *     so does any sum or difference, except a BinarySI one beyond +-MaxInt64,
 *     which ParseQuantity caps (as upstream does);
 *   - qty_format_str returns the full length for any buffer size and writes
 *     a NUL-terminated prefix of the full text;
 *   - qty_cmp is antisymmetric and agrees with qty_sign, negation twice is
 *     the identity (negating an int64-backed MinInt64 leaves it, as Go's
 *     Neg does), a - a is zero;
 *   - when a + b does not overflow: b + a gives the same value and
 *     (a + b) - b == a; likewise (a - b) + b == a (except for b an
 *     int64-backed MinInt64, which Go's Sub adds: see neg_wraps);
 *   - RoundUp reports exactness truthfully and never moves toward zero;
 *   - a value built with qty_from_int64 compares equal to its int64.
 * The debug build also runs quantity.c's own fast-path/reference checks.
 */
#include "core/quantity.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT 256

static void check(int ok)
{
    if (!ok) abort();
}

static void check_err(int rc, const qty *q)
{
    if (rc == QTY_OK) return;
    check(rc == QTY_ERR_FORMAT || rc == QTY_ERR_NUMERIC || rc == QTY_ERR_SUFFIX ||
          rc == QTY_ERR_RANGE);
    check(qty_is_zero(q));
    check(strlen(qty_strerror(rc)) > 0);
}

/* Format q, check the snprintf-like contract, reparse, compare. */
static void round_trip(const qty *q)
{
    char s[QTY_STR_MAX], t[QTY_STR_MAX], small[8];
    size_t n = qty_format_str(q, s, sizeof s);
    check(n < sizeof s && strlen(s) == n && n > 0);
    for (size_t k = 0; k < sizeof small; k += 1 + n % 4) { /* a few sizes, cheaply */
        memset(small, 'x', sizeof small);
        check(qty_format_str(q, small, k) == n);
        if (k > 0) {
            size_t w = n < k - 1 ? n : k - 1;
            check(small[w] == '\0' && memcmp(small, s, w) == 0);
        }
    }
    qty r;
    int rc = qty_parse(s, &r);
    check(rc == QTY_OK);
    if (qty_get_format(&r) == QTY_BINARY_SI &&
        (qty_cmp_int64(q, INT64_MAX) > 0 || qty_cmp_int64(q, -INT64_MAX) < 0)) {
        /* ParseQuantity caps BinarySI at +-MaxInt64 (upstream): a sum can
         * print what no parse gives back */
        check(qty_cmp_int64(&r, qty_sign(q) * INT64_MAX) == 0);
        return;
    }
    check(qty_cmp(q, &r) == 0 && qty_cmp(&r, q) == 0);
    check(qty_sign(q) == qty_sign(&r));
    size_t m = qty_format_str(&r, t, sizeof t);
    if (qty_get_format(&r) == qty_get_format(q)) {
        check(m == n && memcmp(s, t, n) == 0);
    } else {
        /* a BinarySI value printed without a suffix reads back as DecimalSI
         * (upstream too); from there on the text is a fixed point */
        char u[QTY_STR_MAX];
        qty r2;
        check(qty_parse(t, &r2) == QTY_OK && qty_cmp(&r2, q) == 0);
        check(qty_get_format(&r2) == qty_get_format(&r));
        check(qty_format_str(&r2, u, sizeof u) == m && memcmp(t, u, m) == 0);
    }

    json_t *j = qty_to_json(q);
    check(j && json_is_string(j) && strcmp(json_string_value(j), s) == 0);
    rc = qty_from_json(j, &r);
    check(rc == QTY_OK && qty_cmp(q, &r) == 0);
    json_decref(j);
}

static void unary(const qty *q)
{
    check(qty_cmp(q, q) == 0);
    int sign = qty_sign(q);
    check(sign >= -1 && sign <= 1 && (sign == 0) == qty_is_zero(q));
    qty z = qty_zero(QTY_DECIMAL_SI);
    check(qty_cmp(q, &z) == sign && qty_cmp(&z, q) == -sign);
    check(qty_cmp_int64(q, 0) == sign);
    qty_format f = qty_get_format(q);
    check(f == QTY_DECIMAL_SI || f == QTY_BINARY_SI || f == QTY_DECIMAL_EXPONENT);

    qty n = *q;
    qty_neg(&n);
    if (qty_cmp(&n, q) == 0 && sign < 0) {
        check(!q->big); /* Go's -MinInt64 == MinInt64: MinInt64 * 10^scale, int64Amount */
    } else {
        check(qty_sign(&n) == -sign && qty_cmp(&n, q) == (sign ? -sign : 0));
        qty_neg(&n);
        check(qty_cmp(&n, q) == 0);
    }

    qty d = *q;
    check(qty_sub(&d, q) == QTY_OK && qty_is_zero(&d));

    static const int32_t scales[] = {-12, -6, -3, 0, 9, 19};
    for (size_t i = 0; i < sizeof scales / sizeof *scales; i++) {
        (void)qty_scaled_value(q, scales[i]);
        qty u = *q;
        bool exact = qty_round_up(&u, scales[i]);
        int c = qty_cmp(&u, q);
        if (exact) check(c == 0);
        /* away from zero: never smaller in magnitude */
        if (sign > 0) check(c >= 0);
        if (sign < 0) check(c <= 0);
        if (sign == 0) check(qty_is_zero(&u));
    }
    (void)qty_value(q);
    (void)qty_milli_value(q);
    round_trip(q);
}

/* Go's int64Amount.Sub adds -b.value, so subtracting an int64-backed
 * MinInt64 (at any scale) adds it instead, and upstream's Sub is not Add's
 * inverse there; allot mirrors that. */
static bool neg_wraps(const qty *b)
{
    qty n = *b;
    qty_neg(&n);
    return !qty_is_zero(b) && qty_cmp(&n, b) == 0;
}

static void binary(const qty *a, const qty *b)
{
    bool wrap = neg_wraps(b);
    int ab = qty_cmp(a, b), ba = qty_cmp(b, a);
    check(ab >= -1 && ab <= 1 && ab == -ba);

    qty s = *a;
    if (qty_add(&s, b) == QTY_OK) {
        qty s2 = *b;
        check(qty_add(&s2, a) == QTY_OK);
        check(qty_cmp(&s, &s2) == 0);
        qty back = s;
        if (qty_sub(&back, b) == QTY_OK && !wrap) check(qty_cmp(&back, a) == 0);
        round_trip(&s);
    } else {
        check(qty_cmp(&s, a) == 0); /* unchanged on QTY_ERR_RANGE */
    }
    qty d = *a;
    if (qty_sub(&d, b) == QTY_OK) {
        qty back = d;
        if (qty_add(&back, b) == QTY_OK && !wrap) check(qty_cmp(&back, a) == 0);
        /* a - b and b - a are opposite */
        qty e = *b;
        if (qty_sub(&e, a) == QTY_OK && !wrap && !neg_wraps(a)) {
            int es = qty_sign(&e);
            qty_neg(&e);
            if (qty_sign(&e) == -es) check(qty_cmp(&d, &e) == 0); /* unless MinInt64 */
        }
        round_trip(&d);
    } else {
        check(qty_cmp(&d, a) == 0);
    }
}

/* Parse `s` every way a quantity reaches allot; returns whether *out holds
 * the ParseQuantity result. */
static bool parse_all(const char *s, size_t n, qty *out)
{
    qty q;
    int rc = qty_parse_len(s, n, out);
    check_err(rc, out);
    if (rc == QTY_OK) unary(out);

    json_t *js = json_stringn_nocheck(s, n);
    if (js) {
        int rj = qty_from_json(js, &q);
        check_err(rj, &q);
        /* without surrounding space the two parsers agree */
        if (rc == QTY_OK) check(rj == QTY_OK && qty_cmp(&q, out) == 0);
        else if (rj == QTY_OK) unary(&q);
        json_decref(js);
    }
    json_t *jv = json_loadb(s, n, JSON_DECODE_ANY, NULL);
    if (jv) {
        int rj = qty_from_json(jv, &q);
        check_err(rj, &q);
        if (rj == QTY_OK) unary(&q);
        json_decref(jv);
    }
    return rc == QTY_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_INPUT) return 0;
    const char *s = (const char *)data;
    const uint8_t *nul = memchr(data, 0, size);
    size_t alen = nul ? (size_t)(nul - data) : size;
    const char *b = nul ? s + alen + 1 : s;
    size_t blen = nul ? size - alen - 1 : size;

    qty qa, qb;
    bool oka = parse_all(s, alen, &qa);
    bool okb = nul ? parse_all(b, blen, &qb) : (qb = qa, oka);
    if (oka && okb) binary(&qa, &qb);

    /* NewScaledQuantity from the raw bytes */
    if (size >= 9) {
        int64_t v;
        memcpy(&v, data + size - 9, sizeof v);
        int32_t scale = (int8_t)data[size - 1];
        qty_format f = (qty_format)(data[0] % 3);
        qty q = qty_from_int64(v, 0, f);
        check(qty_cmp_int64(&q, v) == 0);
        check(qty_value(&q) == v);
        if (v != INT64_MIN) {
            check(qty_cmp_int64(&q, v + (v < INT64_MAX)) <= 0);
            check(qty_cmp_int64(&q, v - 1) > 0);
        }
        unary(&q);
        q = qty_from_int64(v, scale, f);
        (void)qty_scaled_value(&q, scale);
        /* below nano, String() rounds up to 1n (upstream): no round trip */
        if (scale >= -9) {
            unary(&q);
            if (oka) binary(&qa, &q);
        }
    }
    return 0;
}
