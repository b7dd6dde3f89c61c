/* quantity.c - resource.Quantity (k8s.io/apimachinery/pkg/api/resource), ported.
 *
 * Each qty holds the exact value as a normalized decimal (magnitude without
 * trailing zeros, times 10^exp). It also mirrors upstream's representation,
 * because a few results depend on it rather than on the value:
 *   big == 0: upstream holds int64Amount{value, scale} with scale == uscale, and
 *             value == +-limb * 10^(exp - uscale) fits in an int64;
 *   big == 1: upstream holds an inf.Dec whose scale is -uscale (unscaled value
 *             +-limb * 10^(exp - uscale)).
 * Invariant: for a non-zero qty, exp >= uscale. The representation decides
 * whether Add/Sub overflow into inf.Dec, how ScaledValue rounds negatives and
 * what an overflowing ScaledValue returns. Everything else is value-based.
 *
 * Decimal exponents are carried in int64, so exponent arithmetic cannot wrap
 * (upstream's int32 wraps only on absurd inputs such as "1e-2147483648").
 */
#include "core/quantity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fixed-capacity unsigned big integer, base 1e9 -------------------------------------- */

#define BASE 1000000000u
#define MAX_DIGITS (9 * QTY_LIMBS)

typedef struct {
    uint32_t d[QTY_LIMBS]; /* little-endian limbs */
    int n;                 /* limbs in use, top one non-zero; 0 for zero */
} bn;

static const uint32_t pow10_u32[10] = {1,      10,      100,      1000,      10000,
                                       100000, 1000000, 10000000, 100000000, 1000000000};

static void bn_trim(bn *a)
{
    while (a->n > 0 && a->d[a->n - 1] == 0)
        a->n--;
}

static void bn_set_u64(bn *a, uint64_t v)
{
    a->n = 0;
    while (v) {
        a->d[a->n++] = (uint32_t)(v % BASE);
        v /= BASE;
    }
}

/* False when a does not fit in a uint64. */
static bool bn_to_u64(const bn *a, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = a->n - 1; i >= 0; i--) {
        if (v > (UINT64_MAX - a->d[i]) / BASE) return false;
        v = v * BASE + a->d[i];
    }
    *out = v;
    return true;
}

/* a modulo 2^64: what Go's big.Int.Int64() keeps. */
static uint64_t bn_low64(const bn *a)
{
    uint64_t v = 0;
    for (int i = a->n - 1; i >= 0; i--)
        v = v * BASE + a->d[i];
    return v;
}

/* a = a * m + add. False on overflow (a is then garbage: callers work on copies). */
static bool bn_mul_add(bn *a, uint32_t m, uint32_t add)
{
    uint64_t carry = add;
    for (int i = 0; i < a->n; i++) {
        uint64_t t = (uint64_t)a->d[i] * m + carry;
        a->d[i] = (uint32_t)(t % BASE);
        carry = t / BASE;
    }
    while (carry) {
        if (a->n == QTY_LIMBS) return false;
        a->d[a->n++] = (uint32_t)(carry % BASE);
        carry /= BASE;
    }
    bn_trim(a);
    return true;
}

/* a /= m; returns the remainder. */
static uint32_t bn_div_small(bn *a, uint32_t m)
{
    uint64_t r = 0;
    for (int i = a->n - 1; i >= 0; i--) {
        uint64_t cur = r * BASE + a->d[i];
        a->d[i] = (uint32_t)(cur / m);
        r = cur % m;
    }
    bn_trim(a);
    return (uint32_t)r;
}

static int bn_digits(const bn *a)
{
    if (a->n == 0) return 0;
    int k = 1;
    while (k < 10 && a->d[a->n - 1] >= pow10_u32[k])
        k++;
    return 9 * (a->n - 1) + k;
}

static int bn_cmp(const bn *a, const bn *b)
{
    if (a->n != b->n) return a->n < b->n ? -1 : 1;
    for (int i = a->n - 1; i >= 0; i--)
        if (a->d[i] != b->d[i]) return a->d[i] < b->d[i] ? -1 : 1;
    return 0;
}

static bool bn_add(bn *a, const bn *b)
{
    int n = a->n > b->n ? a->n : b->n;
    uint32_t carry = 0;
    for (int i = 0; i < n; i++) {
        uint32_t s = (i < a->n ? a->d[i] : 0) + (i < b->n ? b->d[i] : 0) + carry;
        carry = s >= BASE;
        a->d[i] = carry ? s - BASE : s;
    }
    a->n = n;
    if (carry) {
        if (n == QTY_LIMBS) return false;
        a->d[a->n++] = 1;
    }
    return true;
}

/* a -= b; requires a >= b. */
static void bn_sub(bn *a, const bn *b)
{
    uint32_t borrow = 0;
    for (int i = 0; i < a->n; i++) {
        uint32_t sub = (i < b->n ? b->d[i] : 0) + borrow;
        borrow = a->d[i] < sub;
        a->d[i] = borrow ? a->d[i] + BASE - sub : a->d[i] - sub;
    }
    bn_trim(a);
}

/* a *= 10^k. False on overflow. */
static bool bn_shl10(bn *a, int64_t k)
{
    if (a->n == 0 || k == 0) return true;
    if (k < 0 || k > MAX_DIGITS || bn_digits(a) + k > MAX_DIGITS) return false;
    int limbs = (int)(k / 9);
    memmove(a->d + limbs, a->d, (size_t)a->n * sizeof(a->d[0]));
    memset(a->d, 0, (size_t)limbs * sizeof(a->d[0]));
    a->n += limbs;
    return bn_mul_add(a, pow10_u32[k % 9], 0);
}

/* a /= 10^k (truncating); *sticky |= (remainder != 0). */
static void bn_shr10(bn *a, int64_t k, bool *sticky)
{
    if (a->n == 0 || k <= 0) return;
    if (k >= bn_digits(a)) {
        *sticky = true;
        a->n = 0;
        return;
    }
    int limbs = (int)(k / 9);
    for (int i = 0; i < limbs; i++)
        if (a->d[i]) *sticky = true;
    memmove(a->d, a->d + limbs, (size_t)(a->n - limbs) * sizeof(a->d[0]));
    a->n -= limbs;
    if (bn_div_small(a, pow10_u32[k % 9])) *sticky = true;
}

/* Remove trailing decimal zeros; returns how many. */
static int bn_strip10(bn *a)
{
    if (a->n == 0) return 0;
    int limbs = 0;
    while (a->d[limbs] == 0)
        limbs++;
    memmove(a->d, a->d + limbs, (size_t)(a->n - limbs) * sizeof(a->d[0]));
    a->n -= limbs;
    int k = 0;
    while (a->d[0] % pow10_u32[k + 1] == 0)
        k++;
    if (k) bn_div_small(a, pow10_u32[k]);
    return 9 * limbs + k;
}

/* Decimal digits into out (no NUL); returns the count. "0" for zero. */
static size_t bn_to_str(const bn *a, char *out)
{
    if (a->n == 0) {
        out[0] = '0';
        return 1;
    }
    size_t len = (size_t)snprintf(out, 11, "%u", (unsigned)a->d[a->n - 1]);
    for (int i = a->n - 2; i >= 0; i--) {
        uint32_t v = a->d[i];
        for (int j = 8; j >= 0; j--) {
            out[len + (size_t)j] = (char)('0' + v % 10);
            v /= 10;
        }
        len += 9;
    }
    return len;
}

/* ---- exact signed decimals: +-m * 10^e ----------------------------------------------------- */

typedef struct {
    bn m;
    int64_t e;
    bool neg;
} dec;

static void dec_norm(dec *d)
{
    if (d->m.n == 0) {
        d->e = 0;
        d->neg = false;
        return;
    }
    d->e += bn_strip10(&d->m);
}

static dec dec_from_u64(uint64_t v, bool neg)
{
    dec d = {.neg = neg};
    bn_set_u64(&d.m, v);
    dec_norm(&d);
    return d;
}

static dec qty_dec(const qty *q)
{
    dec d = {.e = q->exp, .neg = q->neg};
    d.m.n = q->nlimb;
    memcpy(d.m.d, q->limb, sizeof(q->limb));
    return d;
}

static void qty_set_dec(qty *q, const dec *d)
{
    q->exp = d->e;
    q->nlimb = (uint8_t)d->m.n;
    memcpy(q->limb, d->m.d, sizeof(q->limb));
    q->neg = d->neg && d->m.n > 0;
}

static int dec_cmp_abs(const dec *a, const dec *b)
{
    if (a->m.n == 0 || b->m.n == 0) return (a->m.n != 0) - (b->m.n != 0);
    int64_t oa = bn_digits(&a->m) + a->e, ob = bn_digits(&b->m) + b->e;
    if (oa != ob) return oa < ob ? -1 : 1;
    /* Same order of magnitude: the one with the larger exponent has fewer digits, so
     * shifting it down to the other's exponent cannot overflow. */
    bn t;
    if (a->e > b->e) {
        t = a->m;
        bn_shl10(&t, a->e - b->e);
        return bn_cmp(&t, &b->m);
    }
    t = b->m;
    bn_shl10(&t, b->e - a->e);
    return bn_cmp(&a->m, &t);
}

static int dec_sign(const dec *d)
{
    return d->m.n == 0 ? 0 : d->neg ? -1 : 1;
}

static int dec_cmp(const dec *a, const dec *b)
{
    int sa = dec_sign(a), sb = dec_sign(b);
    if (sa != sb) return sa < sb ? -1 : 1;
    return sa * dec_cmp_abs(a, b);
}

/* r = a + b, exactly. QTY_ERR_RANGE when the aligned operands do not fit. */
static int dec_add(dec *r, const dec *a, const dec *b)
{
    if (b->m.n == 0) {
        *r = *a;
        return 0;
    }
    if (a->m.n == 0) {
        *r = *b;
        return 0;
    }
    int64_t e = a->e < b->e ? a->e : b->e;
    dec x = *a, y = *b;
    if (!bn_shl10(&x.m, a->e - e) || !bn_shl10(&y.m, b->e - e)) return QTY_ERR_RANGE;
    x.e = y.e = e;
    if (x.neg == y.neg) {
        if (!bn_add(&x.m, &y.m)) return QTY_ERR_RANGE;
    } else if (bn_cmp(&x.m, &y.m) >= 0) {
        bn_sub(&x.m, &y.m);
    } else {
        bn_sub(&y.m, &x.m);
        x = y;
    }
    dec_norm(&x);
    *r = x;
    return 0;
}

/* Round away from zero to a multiple of 10^scale (inf.RoundUp). Returns exactness. */
static bool dec_round_away(dec *d, int64_t scale)
{
    if (d->m.n == 0 || d->e >= scale) return true;
    bool sticky = false;
    bn_shr10(&d->m, scale - d->e, &sticky);
    d->e = scale;
    /* Cannot overflow: the shift dropped at least one digit. */
    if (sticky) bn_mul_add(&d->m, 1, 1);
    dec_norm(d);
    return !sticky;
}

/* The exact value as an int64; false when it is not an integer or does not fit. */
static bool dec_to_i64(const dec *d, int64_t *out)
{
    bn m = d->m;
    uint64_t u;
    if (d->e < 0 || !bn_shl10(&m, d->e) || !bn_to_u64(&m, &u)) return false;
    if (u > (d->neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) return false;
    *out = d->neg ? (int64_t)(0 - u) : (int64_t)u;
    return true;
}

/* ---- upstream int64Amount ---------------------------------------------------------------- */

/* Two's-complement helpers: Go wraps where C would have undefined behaviour. */
static int64_t i64_of_u64(uint64_t u)
{
    int64_t v;
    memcpy(&v, &u, sizeof(v));
    return v;
}

static uint64_t u64_of_i64(int64_t v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    return u;
}

static int64_t i64_neg_wrap(int64_t v)
{
    return i64_of_u64(0 - u64_of_i64(v));
}

/* Go's int64(x) of a big integer with magnitude low64 modulo 2^64 (big.Int.Int64). */
static int64_t i64_signed_wrap(uint64_t low64, bool neg)
{
    return i64_of_u64(neg ? 0 - low64 : low64);
}

static const int64_t pow10_i64[19] = {1,
                                      10,
                                      100,
                                      1000,
                                      10000,
                                      100000,
                                      1000000,
                                      10000000,
                                      100000000,
                                      1000000000,
                                      10000000000,
                                      100000000000,
                                      1000000000000,
                                      10000000000000,
                                      100000000000000,
                                      1000000000000000,
                                      10000000000000000,
                                      100000000000000000,
                                      1000000000000000000};

/* 10^k modulo 2^64. */
static uint64_t pow10_mod64(int64_t k)
{
    uint64_t r = 1;
    if (k >= 64) return 0; /* 10^64 is a multiple of 2^64 */
    while (k-- > 0)
        r *= 10;
    return r;
}

static void int_get(const qty *q, int64_t *v, int32_t *scale)
{
    *scale = q->uscale;
    if (q->nlimb == 0) {
        *v = 0;
        return;
    }
    uint64_t u = 0;
    dec d = qty_dec(q);
    bn_to_u64(&d.m, &u); /* invariant: fits */
    for (int64_t k = q->exp - q->uscale; k > 0; k--)
        u *= 10;
    *v = i64_signed_wrap(u, q->neg);
}

static void int_set(qty *q, int64_t v, int32_t scale)
{
    uint64_t u = v < 0 ? 0 - u64_of_i64(v) : (uint64_t)v;
    dec d = dec_from_u64(u, v < 0);
    if (u != 0) d.e += scale;
    qty_set_dec(q, &d);
    q->uscale = scale;
    q->big = 0;
}

/* int64Add: false on overflow. */
static bool i64_add(int64_t a, int64_t b, int64_t *c)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
    *c = a + b;
    return true;
}

#ifndef NDEBUG /* the reference for i64_pos_scale_fast, run by debug builds only */
/* positiveScaleInt64: base * 10^scale, false on overflow. */
static bool i64_pos_scale(int64_t base, int64_t scale, int64_t *out)
{
    int64_t v = base;
    for (int64_t i = 0; v != 0 && i < scale; i++) {
        if (v > INT64_MAX / 10 || v < INT64_MIN / 10) return false;
        v *= 10;
    }
    *out = v;
    return true;
}

#endif

/* ---- int64Amount fast paths --------------------------------------------------------------- */

/* int_get and int_set above (and i64_pos_scale, dec_combine, dec_cmp) are the reference:
 * they go through a dec and loops, a few hundred instructions on the hot path of every
 * Add. The fast versions give bit-for-bit the same qty, unused limbs included, with
 * plain uint64 arithmetic, and leave anything outside their range to the reference.
 * Debug builds (no NDEBUG) also run the reference for every qty_add, qty_sub, qty_cmp
 * and qty_from_int64 and abort on any difference (ref_check). */

static const uint64_t pow10_u64[20] = {1u,
                                       10u,
                                       100u,
                                       1000u,
                                       10000u,
                                       100000u,
                                       1000000u,
                                       10000000u,
                                       100000000u,
                                       1000000000u,
                                       10000000000u,
                                       100000000000u,
                                       1000000000000u,
                                       10000000000000u,
                                       100000000000000u,
                                       1000000000000000u,
                                       10000000000000000u,
                                       100000000000000000u,
                                       1000000000000000000u,
                                       10000000000000000000u};

/* INT64_MAX / 10^k: |v| * 10^k fits in an int64 iff |v| <= this. */
static const int64_t i64_max_div_pow10[19] = {INT64_MAX / 1,
                                              INT64_MAX / 10,
                                              INT64_MAX / 100,
                                              INT64_MAX / 1000,
                                              INT64_MAX / 10000,
                                              INT64_MAX / 100000,
                                              INT64_MAX / 1000000,
                                              INT64_MAX / 10000000,
                                              INT64_MAX / 100000000,
                                              INT64_MAX / 1000000000,
                                              INT64_MAX / 10000000000,
                                              INT64_MAX / 100000000000,
                                              INT64_MAX / 1000000000000,
                                              INT64_MAX / 10000000000000,
                                              INT64_MAX / 100000000000000,
                                              INT64_MAX / 1000000000000000,
                                              INT64_MAX / 10000000000000000,
                                              INT64_MAX / 100000000000000000,
                                              INT64_MAX / 1000000000000000000};

/* The magnitude of a qty with at most two limbs (below 10^18). */
static inline uint64_t small_mag(const qty *q)
{
    uint64_t u = q->nlimb > 0 ? q->limb[0] : 0;
    if (q->nlimb > 1) u += (uint64_t)q->limb[1] * BASE;
    return u;
}

/* int_get. The multiplication wraps modulo 2^64 exactly like int_get's loop of *10. */
static inline void int_get_fast(const qty *q, int64_t *v, int32_t *scale)
{
    if (q->nlimb > 2) { /* >= 10^18: rare, and bn_to_u64 may refuse it */
        int_get(q, v, scale);
        return;
    }
    *scale = q->uscale;
    if (q->nlimb == 0) {
        *v = 0;
        return;
    }
    uint64_t u = small_mag(q);
    int64_t k = q->exp - q->uscale;
    if (k > 0) u *= k < 20 ? pow10_u64[k] : pow10_mod64(k);
    *v = i64_signed_wrap(u, q->neg);
}

/* Limbs of v < 10^27 (any uint64): 0 to 3. */
static inline int u64_nlimb(uint64_t v)
{
    return v == 0 ? 0 : v < BASE ? 1 : v < (uint64_t)BASE * BASE ? 2 : 3;
}

/* d[0..n) = the base-1e9 limbs of v, zero-padded. */
static inline void u64_limbs(uint32_t *d, uint64_t v, int n)
{
    for (int i = 0; i < n; i++, v /= BASE)
        d[i] = (uint32_t)(v % BASE);
}

/* v's trailing decimal zeros (at most 19, v != 0) removed: 16 + 8 + 4 + 2 + 1. */
static inline int u64_strip10(uint64_t *v)
{
    int t = 0;
    if (*v % 10u != 0) return 0;
    if (*v >= 10000000000000000u && *v % 10000000000000000u == 0) *v /= 10000000000000000u, t += 16;
    if (*v >= 100000000u && *v % 100000000u == 0) *v /= 100000000u, t += 8;
    if (*v % 10000u == 0) *v /= 10000u, t += 4;
    if (*v % 100u == 0) *v /= 100u, t += 2;
    if (*v % 10u == 0) *v /= 10u, t += 1;
    return t;
}

/* Write v over d[0..w) (w at least v's limbs) and normalize it in place exactly as
 * dec_norm would, unused limbs included: bn_strip10 moves the limbs down by t / 9,
 * which leaves v's top t / 9 limbs where they were, and divides the rest by 10^(t % 9).
 * Returns the limbs in use; *t gets the stripped zeros (0 for v == 0). */
static inline int u64_store_norm(uint32_t *d, uint64_t v, int w, int *t)
{
    uint64_t s = v;
    *t = v ? u64_strip10(&s) : 0;
    if (*t >= 9) {
        u64_limbs(d, v, w);
        w = u64_nlimb(v) - *t / 9;
    }
    u64_limbs(d, s, w);
    return u64_nlimb(s);
}

/* int_set: the same qty, unused limbs included. */
static inline void int_set_fast(qty *q, int64_t v, int32_t scale)
{
    uint64_t u = v < 0 ? 0 - u64_of_i64(v) : (uint64_t)v;
    int t;
    memset(q->limb, 0, sizeof(q->limb));
    q->nlimb = (uint8_t)u64_store_norm(q->limb, u, u64_nlimb(u), &t);
    q->exp = u ? (int64_t)t + scale : 0;
    q->neg = v < 0;
    q->uscale = scale;
    q->big = 0;
}

/* positiveScaleInt64: base * 10^scale, false on overflow. A table instead of
 * upstream's loop (kept as i64_pos_scale, which debug builds compare with): the same
 * result and the same refusals (for scale >= 1 a product is a multiple of 10, so it
 * never equals INT64_MIN). */
static inline bool i64_pos_scale_fast(int64_t base, int64_t scale, int64_t *out)
{
    bool ok = true;
    if (base == 0 || scale <= 0) {
        *out = base;
    } else if (scale > 18 || base > i64_max_div_pow10[scale] || base < -i64_max_div_pow10[scale]) {
        ok = false;
    } else {
        *out = base * pow10_i64[scale];
    }
#ifndef NDEBUG
    int64_t ref = 0;
    if (i64_pos_scale(base, scale, &ref) != ok || (ok && ref != *out)) abort();
#endif
    return ok;
}

/* int64Amount.Add: false (and no change) when the result would overflow. Note the
 * aligned scale is the smaller *internal* scale, not the normalized exponent. */
static inline bool int_add(int64_t *av, int32_t *as, int64_t bv, int32_t bs)
{
    int64_t c;
    if (bv == 0) return true;
    if (*av == 0) {
        *av = bv;
        *as = bs;
        return true;
    }
    if (*as == bs) {
        if (!i64_add(*av, bv, &c)) return false;
    } else if (*as > bs) {
        if (!i64_pos_scale_fast(*av, (int64_t)*as - bs, &c) || !i64_add(c, bv, &c)) return false;
        *as = bs;
    } else {
        if (!i64_pos_scale_fast(bv, (int64_t)bs - *as, &c) || !i64_add(*av, c, &c)) return false;
    }
    *av = c;
    return true;
}

#ifndef NDEBUG
static bool qty_same(const qty *a, const qty *b)
{
    return a->exp == b->exp && memcmp(a->limb, b->limb, sizeof(a->limb)) == 0 &&
           a->uscale == b->uscale && a->nlimb == b->nlimb && a->neg == b->neg && a->big == b->big &&
           a->format == b->format;
}

/* Debug builds: a fast path disagreed with the reference. */
static void ref_check(bool ok, const char *what, const qty *a, const qty *b)
{
    if (ok) return;
    fprintf(stderr, "quantity.c: %s fast path differs from the reference\n", what);
    for (int i = 0; i < 2; i++) {
        const qty *q = i ? b : a;
        if (!q) continue;
        fprintf(stderr, "  exp %lld uscale %d nlimb %d neg %d big %d format %d limbs",
                (long long)q->exp, (int)q->uscale, q->nlimb, q->neg, q->big, q->format);
        for (int j = 0; j < QTY_LIMBS; j++)
            fprintf(stderr, " %u", (unsigned)q->limb[j]);
        fputc('\n', stderr);
    }
    abort();
}
#endif

/* ---- parsing ----------------------------------------------------------------------------- */

typedef struct {
    bool positive;
    const char *value; /* the numeric text handed to inf.Dec.SetString on the slow path */
    size_t value_len;
    const char *num; /* integer digits, leading zeros stripped; "0" if none */
    size_t num_len;
    const char *denom; /* fraction digits */
    size_t denom_len;
    const char *suffix;
    size_t suffix_len;
} scan_t;

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_suffix_char(char c)
{
    return c != '\0' && memchr("eEinumkKMGTP", c, 12) != NULL;
}

/* parseQuantityString, step by step (including its leniency: "", "-", "." and "k"
 * all reach the suffix with a zero numerator). */
static int scan_quantity(const char *s, size_t end, scan_t *o)
{
    size_t pos = 0, i;
    *o =
        (scan_t){.positive = true, .num = "0", .num_len = 1, .denom = "", .suffix = "", .value = s};
    if (pos < end && (s[0] == '-' || s[0] == '+')) {
        o->positive = s[0] == '+';
        pos++;
    }
    while (pos < end && s[pos] == '0')
        pos++;
    if (pos >= end) {
        o->value = "0";
        o->value_len = 1;
        return 0;
    }
    for (i = pos; i < end && is_digit(s[i]); i++)
        ;
    if (i > pos) {
        o->num = s + pos;
        o->num_len = i - pos;
    }
    pos = i;
    if (pos >= end) {
        o->value_len = end;
        return 0;
    }
    if (s[pos] == '.') {
        pos++;
        for (i = pos; i < end && is_digit(s[i]); i++)
            ;
        o->denom = s + pos;
        o->denom_len = i - pos;
        pos = i;
        if (pos >= end) {
            o->value_len = end;
            return 0;
        }
    }
    o->value_len = pos;
    o->suffix = s + pos;
    for (i = pos; i < end && is_suffix_char(s[i]); i++)
        ;
    if (i < end && (s[i] == '-' || s[i] == '+')) i++;
    while (i < end && is_digit(s[i]))
        i++;
    if (i < end) return QTY_ERR_FORMAT;
    o->suffix_len = end - pos;
    return 0;
}

/* strconv.ParseInt(s, 10, 64). */
static bool parse_int64(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == n) return false;
    uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < n; i++) {
        if (!is_digit(s[i])) return false;
        unsigned dgt = (unsigned)(s[i] - '0');
        if (v > (lim - dgt) / 10) return false;
        v = v * 10 + dgt;
    }
    *out = neg ? i64_of_u64(0 - v) : (int64_t)v;
    return true;
}

static const struct {
    const char *s;
    int32_t exp;
} dec_suffixes[] = {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0},   {"k", 3},
                    {"M", 6},  {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
static const char *const bin_suffixes[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

static bool suffix_is(const char *suf, size_t n, const char *want)
{
    return strlen(want) == n && memcmp(suf, want, n) == 0;
}

/* suffixHandler.interpret. */
static int interpret_suffix(const char *suf, size_t n, int *base, int32_t *exp, qty_format *f)
{
    for (size_t i = 0; i < sizeof(dec_suffixes) / sizeof(dec_suffixes[0]); i++)
        if (suffix_is(suf, n, dec_suffixes[i].s)) {
            *base = 10, *exp = dec_suffixes[i].exp, *f = QTY_DECIMAL_SI;
            return 0;
        }
    for (int i = 1; i <= 6; i++)
        if (suffix_is(suf, n, bin_suffixes[i])) {
            *base = 2, *exp = 10 * i, *f = QTY_BINARY_SI;
            return 0;
        }
    int64_t parsed;
    if (n > 1 && (suf[0] == 'e' || suf[0] == 'E') && parse_int64(suf + 1, n - 1, &parsed)) {
        /* Go's int32(parsed): keep the low 32 bits. */
        uint32_t low = (uint32_t)u64_of_i64(parsed);
        *base = 10,
        *exp = low <= INT32_MAX ? (int32_t)low : (int32_t)(low - 2147483648u) + INT32_MIN;
        *f = QTY_DECIMAL_EXPONENT;
        return 0;
    }
    return QTY_ERR_SUFFIX;
}

static char digit_at(const scan_t *sc, size_t i)
{
    return i < sc->num_len ? sc->num[i] : sc->denom[i - sc->num_len];
}

/* d = (num||denom) * 10^p. With `nano_cut`, digits below 10^-9 are dropped and *sticky
 * reports whether any was non-zero (inf.Dec.Round to Nano only needs that). */
static int dec_from_digits(const scan_t *sc, int64_t p, bool nano_cut, bool *sticky, dec *d)
{
    size_t len = sc->num_len + sc->denom_len, first = 0, last = len;
    *d = (dec){0};
    while (first < len && digit_at(sc, first) == '0')
        first++;
    if (first == len) return 0;
    if (nano_cut && p < -9) {
        uint64_t drop = (uint64_t)(-9 - p);
        size_t cut = drop >= len - first ? first : len - (size_t)drop;
        for (size_t i = cut; i < len; i++)
            if (digit_at(sc, i) != '0') *sticky = true;
        p += (int64_t)(len - cut);
        last = cut;
    }
    while (last > first && digit_at(sc, last - 1) == '0') {
        last--;
        p++;
    }
    if (last - first > MAX_DIGITS) return QTY_ERR_RANGE;
    for (size_t i = first; i < last; i++)
        bn_mul_add(&d->m, 10, (uint32_t)(digit_at(sc, i) - '0'));
    d->e = last > first ? p : 0;
    return 0;
}

static int32_t clamp_i32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : (int32_t)v;
}

/* The int64 fast path of ParseQuantity. Returns true when it applied. */
static bool parse_fast(const scan_t *sc, int base, int32_t exponent, qty_format f, qty *out)
{
    int64_t precision, scale = 0;
    int64_t mantissa = 1;
    int64_t digits = (int64_t)(sc->num_len + sc->denom_len);
    if (base == 10) {
        scale = exponent;
        precision = 18 - digits;
    } else if (exponent >= 0 && sc->denom_len == 0) {
        mantissa = (int64_t)1 << exponent;
        /* float32(exponent)*3/10 is exact for exponent in 10..60. */
        precision = 15 - (int64_t)sc->num_len - exponent * 3 / 10 - 1;
    } else {
        precision = -1;
    }
    if (precision < 0) return false;
    scale -= (int64_t)sc->denom_len;
    if (scale < -9) return false;
    int64_t value = 0;
    for (int64_t i = 0; i < digits; i++)
        value = value * 10 + (digit_at(sc, (size_t)i) - '0');
    if (value > INT64_MAX / mantissa) return false;
    value *= mantissa;
    int_set(out, sc->positive ? value : -value, (int32_t)scale);
    out->format = (uint8_t)f;
    return true;
}

/* The inf.Dec path of ParseQuantity: exact value, rounded up to nano, BinarySI capped. */
static int parse_slow(const scan_t *sc, int base, int32_t exponent, qty_format f, qty *out)
{
    bool has_digit = false, sticky = false;
    for (size_t i = 0; i < sc->value_len; i++)
        has_digit |= is_digit(sc->value[i]);
    if (!has_digit) return QTY_ERR_NUMERIC; /* inf.Dec.SetString: "no digits read" */
    dec d;
    int64_t p = (base == 10 ? exponent : 0) - (int64_t)sc->denom_len;
    int err = dec_from_digits(sc, p, base == 10, &sticky, &d);
    if (err) return err;
    for (int32_t k = 0; base == 2 && k < exponent; k += 10)
        if (!bn_mul_add(&d.m, 1024, 0)) return QTY_ERR_RANGE;
    dec_norm(&d);
    if (d.m.n == 0 && !sticky) {
        qty_set_dec(out, &d);
        out->uscale = clamp_i32(p); /* inf.Dec scale of a zero is left alone */
    } else {
        if (sticky) {
            dec ulp = dec_from_u64(1, false);
            ulp.e = -9;
            if (dec_add(&d, &d, &ulp) != 0) return QTY_ERR_RANGE;
        }
        dec_round_away(&d, -9);
        d.neg = !sc->positive;
        out->uscale = -9;
        dec max = dec_from_u64(INT64_MAX, d.neg), one = dec_from_u64(1, false);
        if (f == QTY_BINARY_SI && dec_cmp_abs(&d, &max) > 0) {
            d = max;
            out->uscale = 0;
        }
        if (f == QTY_BINARY_SI && dec_cmp_abs(&d, &one) < 0) f = QTY_DECIMAL_SI; /* 0 < |x| < 1 */
        qty_set_dec(out, &d);
    }
    out->big = 1;
    out->format = (uint8_t)f;
    return 0;
}

int qty_parse_len(const char *s, size_t len, qty *out)
{
    scan_t sc;
    int base, err;
    int32_t exponent;
    qty_format f;
    *out = qty_zero(QTY_DECIMAL_SI);
    if (len == 0) return QTY_ERR_FORMAT;
    if (len == 1 && s[0] == '0') return 0;
    if ((err = scan_quantity(s, len, &sc)) != 0) return err;
    if ((err = interpret_suffix(sc.suffix, sc.suffix_len, &base, &exponent, &f)) != 0) return err;
    if (parse_fast(&sc, base, exponent, f, out)) return 0;
    if ((err = parse_slow(&sc, base, exponent, f, out)) != 0) *out = qty_zero(QTY_DECIMAL_SI);
    return err;
}

int qty_parse(const char *s, qty *out)
{
    return qty_parse_len(s, s ? strlen(s) : 0, out);
}

/* Length of a UTF-8 white-space character (Go's unicode.IsSpace) at s, else 0. */
static size_t space_len(const unsigned char *s, size_t n)
{
    if (n >= 1 && (s[0] == ' ' || (s[0] >= '\t' && s[0] <= '\r'))) return 1;
    if (n >= 2 && s[0] == 0xC2 && (s[1] == 0x85 || s[1] == 0xA0)) return 2;
    if (n < 3) return 0;
    uint32_t c = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
    if ((s[0] & 0xF0) != 0xE0 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
        c == 0x205F || c == 0x3000)
        return 3;
    return 0;
}

/* Length of a white-space character ending at s[n-1], else 0. */
static size_t space_len_back(const unsigned char *s, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++)
        if (space_len(s + n - k, k) == k) return k;
    return 0;
}

int qty_from_json(const json_t *v, qty *out)
{
    char buf[64];
    if (!v || json_is_null(v)) {
        *out = qty_zero(QTY_DECIMAL_SI);
        return 0;
    }
    if (json_is_string(v)) {
        const unsigned char *s = (const unsigned char *)json_string_value(v);
        size_t n = json_string_length(v), k;
        while ((k = space_len(s, n)) != 0)
            s += k, n -= k;
        while ((k = space_len_back(s, n)) != 0)
            n -= k;
        return qty_parse_len((const char *)s, n, out);
    }
    if (json_is_integer(v)) {
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return qty_parse(buf, out);
    }
    if (json_is_real(v)) {
        /* jansson keeps only the double: use the shortest text that round-trips. */
        double x = json_real_value(v);
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof(buf), "%.*g", prec, x);
            if (strtod(buf, NULL) == x) break;
        }
        return qty_parse(buf, out);
    }
    *out = qty_zero(QTY_DECIMAL_SI);
    return QTY_ERR_FORMAT; /* true/false/object/array: not a quantity */
}

/* ---- construction, accessors ------------------------------------------------------------- */

int qty_to_small(const qty *q, qty_small *out)
{
    *out = (qty_small){0};
    if (q->big || q->nlimb > 2 || q->exp < INT16_MIN || q->exp > INT16_MAX ||
        q->uscale < INT16_MIN || q->uscale > INT16_MAX)
        return -1;
    qty clean = *q; /* (limbs past nlimb are stale after arithmetic: not the value) */
    for (size_t i = q->nlimb; i < QTY_LIMBS; i++)
        clean.limb[i] = 0;
    qty_small s = {(uint64_t)q->limb[0] + (q->nlimb > 1 ? (uint64_t)q->limb[1] * 1000000000u : 0),
                   (int16_t)q->exp,
                   (int16_t)q->uscale,
                   q->nlimb,
                   q->neg,
                   q->format,
                   1};
    qty back = qty_from_small(&s);
    if (memcmp(&back, &clean, sizeof back) != 0) return -1; /* (qty has no padding) */
    *out = s;
    return 0;
}

qty qty_from_small(const qty_small *s)
{
    qty q;
    memset(&q, 0, sizeof q);
    q.exp = s->exp;
    q.limb[0] = (uint32_t)(s->mag % 1000000000u);
    q.limb[1] = (uint32_t)(s->mag / 1000000000u);
    q.uscale = s->uscale;
    q.nlimb = s->nlimb;
    q.neg = s->neg;
    q.format = s->format;
    return q;
}

qty qty_zero(qty_format f)
{
    qty q;
    memset(&q, 0, sizeof(q));
    q.format = (uint8_t)f;
    return q;
}

qty qty_from_int64(int64_t v, int32_t scale, qty_format f)
{
    qty q = qty_zero(f);
    int_set_fast(&q, v, scale);
#ifndef NDEBUG
    qty ref = qty_zero(f);
    int_set(&ref, v, scale);
    ref_check(qty_same(&q, &ref), "qty_from_int64", &q, &ref);
#endif
    return q;
}

const char *qty_strerror(int err)
{
    switch (err) {
    case QTY_OK:
        return "";
#define X(name, code, msg)                                                                         \
    case name:                                                                                     \
        return msg;
        QTY_ERRORS(X)
#undef X
    }
    return "unknown error";
}

qty_format qty_get_format(const qty *q)
{
    return (qty_format)q->format;
}

bool qty_is_zero(const qty *q)
{
    return q->nlimb == 0;
}

int qty_sign(const qty *q)
{
    return q->nlimb == 0 ? 0 : q->neg ? -1 : 1;
}

static int cmp_ref(const qty *a, const qty *b)
{
    dec x = qty_dec(a), y = qty_dec(b);
    return dec_cmp(&x, &y);
}

/* Compare m * 10^d with n, for 1 <= m < 10^18, n < 10^18 and d > 0. */
static int cmp_shifted(uint64_t m, uint64_t d, uint64_t n)
{
    if (d >= 18 || m >= pow10_u64[18 - d]) return 1; /* m * 10^d >= 10^18 > n */
    m *= pow10_u64[d];
    return (m > n) - (m < n);
}

/* qty_cmp for magnitudes below 10^18; false when an operand is larger. */
static bool cmp_fast(const qty *a, const qty *b, int *out)
{
    if (a->nlimb > 2 || b->nlimb > 2) return false;
    int sa = qty_sign(a), sb = qty_sign(b);
    if (sa != sb) {
        *out = sa < sb ? -1 : 1;
        return true;
    }
    if (sa == 0) {
        *out = 0;
        return true;
    }
    uint64_t ma = small_mag(a), mb = small_mag(b);
    int c;
    if (a->exp == b->exp)
        c = (ma > mb) - (ma < mb);
    else if (a->exp > b->exp)
        c = cmp_shifted(ma, (uint64_t)a->exp - (uint64_t)b->exp, mb);
    else
        c = -cmp_shifted(mb, (uint64_t)b->exp - (uint64_t)a->exp, ma);
    *out = sa * c;
    return true;
}

int qty_cmp(const qty *a, const qty *b)
{
    int c;
    if (!cmp_fast(a, b, &c)) return cmp_ref(a, b);
#ifndef NDEBUG
    ref_check(c == cmp_ref(a, b), "qty_cmp", a, b);
#endif
    return c;
}

int qty_cmp_int64(const qty *a, int64_t b)
{
    qty y = qty_from_int64(b, 0, QTY_DECIMAL_SI);
    return qty_cmp(a, &y);
}

/* ---- arithmetic -------------------------------------------------------------------------- */

/* inf.Dec Add/Sub: exact, result scale is the larger of the two (uscale the smaller). */
static int dec_combine(qty *q, qty r, const qty *y, bool subtract)
{
    dec a = qty_dec(&r), b = qty_dec(y), res;
    if (subtract) b.neg = !b.neg;
    if (dec_add(&res, &a, &b) != 0) return QTY_ERR_RANGE;
    qty_set_dec(&r, &res);
    r.uscale = r.uscale < y->uscale ? r.uscale : y->uscale;
    r.big = 1;
    *q = r;
    return 0;
}

/* dec_combine for magnitudes below 10^18 whose aligned magnitudes stay below 10^18 (so
 * the exact result is below 2 * 10^18): the same qty, unused limbs included, which
 * means replaying what dec_add leaves in the limbs of the operand it works on (the
 * bn_* routines only write the limbs they use). False when it does not apply. */
static bool dec_combine_fast(qty *q, const qty *y, bool subtract)
{
    if (q->nlimb > 2 || y->nlimb > 2) return false;
    uint8_t yneg = subtract ? !y->neg : y->neg;
    int32_t uscale = q->uscale < y->uscale ? q->uscale : y->uscale;
    uint8_t format = q->nlimb == 0 ? y->format : q->format;
    if (y->nlimb == 0) {
        /* dec_add returns a: only the fields set at the end change */
    } else if (q->nlimb == 0) { /* dec_add returns b */
        memcpy(q->limb, y->limb, sizeof(q->limb));
        q->exp = y->exp;
        q->nlimb = y->nlimb;
        q->neg = yneg;
    } else {
        uint64_t x = small_mag(q), yv = small_mag(y), v;
        int64_t e = q->exp;
        /* Align to the smaller exponent; bn_shl10 writes exactly the limbs of its result. */
        if (q->exp > y->exp) {
            uint64_t k = (uint64_t)q->exp - (uint64_t)y->exp;
            if (k > 17 || x >= pow10_u64[18 - k]) return false;
            x *= pow10_u64[k];
            e = y->exp;
        } else if (q->exp < y->exp) {
            uint64_t k = (uint64_t)y->exp - (uint64_t)q->exp;
            if (k > 17 || yv >= pow10_u64[18 - k]) return false;
            yv *= pow10_u64[k];
        }
        uint32_t d[QTY_LIMBS];
        uint8_t neg = q->neg;
        int w, t;
        if (q->neg == yneg) { /* bn_add into a */
            v = x + yv;
            w = u64_nlimb(v);
            memcpy(d, q->limb, sizeof(d));
        } else if (x >= yv) { /* bn_sub into a: writes a's limbs, then trims */
            v = x - yv;
            w = u64_nlimb(x);
            memcpy(d, q->limb, sizeof(d));
        } else { /* bn_sub into b, which becomes the result */
            v = yv - x;
            w = u64_nlimb(yv);
            memcpy(d, y->limb, sizeof(d));
            neg = yneg;
        }
        q->nlimb = (uint8_t)u64_store_norm(d, v, w, &t);
        memcpy(q->limb, d, sizeof(d));
        q->exp = v ? e + t : 0;
        q->neg = neg; /* cleared below for a zero */
    }
    q->neg = q->neg && q->nlimb > 0;
    q->uscale = uscale;
    q->big = 1;
    q->format = format;
    return true;
}

#ifndef NDEBUG
/* Reference Add/Sub (int64Amount via int_get/int_add/int_set, else inf.Dec). */
static int combine_ref(qty *q, const qty *y, bool subtract)
{
    qty r = *q;
    if (qty_is_zero(&r)) r.format = y->format;
    if (!r.big && !y->big) {
        int64_t av, bv;
        int32_t as, bs;
        int_get(&r, &av, &as);
        int_get(y, &bv, &bs);
        /* int64Amount.Sub negates with Go's wrap: -MinInt64 stays MinInt64. */
        if (int_add(&av, &as, subtract ? i64_neg_wrap(bv) : bv, bs)) {
            int_set(&r, av, as);
            *q = r;
            return 0;
        }
    }
    return dec_combine(q, r, y, subtract);
}
#endif

/* Add/Sub: the int64Amount case in place (q may alias y), else inf.Dec as combine_ref. */
static int combine_fast(qty *q, const qty *y, bool subtract)
{
    if (!q->big && !y->big) {
        int64_t av, bv;
        int32_t as, bs;
        int_get_fast(q, &av, &as);
        int_get_fast(y, &bv, &bs);
        if (int_add(&av, &as, subtract ? i64_neg_wrap(bv) : bv, bs)) {
            if (q->nlimb == 0) q->format = y->format;
            int_set_fast(q, av, as);
            return 0;
        }
    }
    if (dec_combine_fast(q, y, subtract)) return 0;
    qty r = *q;
    if (qty_is_zero(&r)) r.format = y->format;
    return dec_combine(q, r, y, subtract);
}

static int combine(qty *q, const qty *y, bool subtract)
{
#ifndef NDEBUG
    qty ref = *q;
    int ref_err = combine_ref(&ref, y, subtract); /* before q changes: y may be q */
    int err = combine_fast(q, y, subtract);
    ref_check(err == ref_err && qty_same(q, &ref), subtract ? "qty_sub" : "qty_add", q, &ref);
    return err;
#else
    return combine_fast(q, y, subtract);
#endif
}

int qty_add(qty *q, const qty *y)
{
    return combine(q, y, false);
}

int qty_sub(qty *q, const qty *y)
{
    return combine(q, y, true);
}

void qty_neg(qty *q)
{
    if (qty_is_zero(q)) return;
    if (!q->big) {
        int64_t v;
        int32_t s;
        int_get(q, &v, &s);
        if (v == INT64_MIN) return; /* Go: -MinInt64 == MinInt64 */
    }
    q->neg = !q->neg;
}

bool qty_round_up(qty *q, int32_t scale)
{
    if (!q->big && q->uscale >= scale) return true;
    dec d = qty_dec(q);
    bool exact = dec_round_away(&d, scale);
    qty_set_dec(q, &d);
    q->uscale = scale;
    return exact;
}

/* ---- ScaledValue ------------------------------------------------------------------------- */

/* int64Amount.AsScaledInt64: round away from zero; 0 when the result overflows. */
static int64_t int_scaled_value(const qty *q, int32_t scale)
{
    dec d = qty_dec(q);
    int64_t v;
    dec_round_away(&d, scale);
    d.e -= scale;
    return dec_to_i64(&d, &v) ? v : 0;
}

/* scale_int.go scaledValue(unscaled, scale, newScale), with unscaled = +-m * 10^k.
 * Rounds up as "truncate, then +1 if inexact", so a negative -1.5 gives 0 (upstream
 * quirk); overflow wraps like Go's big.Int.Int64() and int64 arithmetic. */
static int64_t dec_scaled_value(const qty *q, int32_t scale)
{
    dec d = qty_dec(q);
    if (d.m.n == 0) return 0;
    int64_t k = d.e - q->uscale;
    int64_t dif = (int64_t)scale - q->uscale;
    int64_t u = i64_signed_wrap(bn_low64(&d.m) * pow10_mod64(k), d.neg);
    if (dif == 0) return u;
    if (dif < 0) {
        /* int64(math.Pow10(n)) for n > 18 is MinInt64 on amd64. */
        int64_t mul = -dif <= 18 ? pow10_i64[-dif] : INT64_MIN;
        return i64_of_u64(u64_of_i64(u) * u64_of_i64(mul));
    }
    bool below_max = d.neg;
    if (!d.neg && bn_digits(&d.m) + k <= 19) {
        uint64_t x = 0;
        bn_to_u64(&d.m, &x);
        x *= pow10_mod64(k); /* at most 19 digits: exact */
        below_max = x < (uint64_t)INT64_MAX;
    }
    if (below_max && dif < 19) {
        int64_t div = pow10_i64[dif], r = u / div;
        return u % div != 0 ? r + 1 : r;
    }
    /* big.Int DivMod (Euclidean, so floor for a positive divisor), then Int64() + 1. */
    bool sticky = false;
    uint64_t qlow;
    if (k >= dif) {
        qlow = bn_low64(&d.m) * pow10_mod64(k - dif);
    } else {
        bn_shr10(&d.m, dif - k, &sticky);
        qlow = bn_low64(&d.m);
        if (d.neg && sticky) qlow += 1;
    }
    uint64_t res = u64_of_i64(i64_signed_wrap(qlow, d.neg));
    return i64_of_u64(sticky ? res + 1 : res);
}

int64_t qty_scaled_value(const qty *q, int32_t scale)
{
    return q->big ? dec_scaled_value(q, scale) : int_scaled_value(q, scale);
}

int64_t qty_value(const qty *q)
{
    return qty_scaled_value(q, 0);
}

int64_t qty_milli_value(const qty *q)
{
    return qty_scaled_value(q, -3);
}

/* ---- canonical formatting (CanonicalizeBytes) -------------------------------------------- */

typedef struct {
    char b[QTY_STR_MAX];
    size_t n;
} sbuf;

static void sb_put(sbuf *sb, const char *s, size_t n)
{
    if (n > sizeof(sb->b) - 1 - sb->n)
        n = sizeof(sb->b) - 1 - sb->n; /* cannot happen: QTY_STR_MAX covers every output */
    memcpy(sb->b + sb->n, s, n);
    sb->n += n;
}

static void sb_digits(sbuf *sb, const dec *d)
{
    char tmp[MAX_DIGITS + 1];
    if (d->neg) sb_put(sb, "-", 1);
    sb_put(sb, tmp, bn_to_str(&d->m, tmp));
}

/* BinarySI: m * 1024^k with k in 0..6. False to fall back to DecimalSI: |x| < 1024,
 * not an integer, beyond Ei (as upstream PR #140459) or upstream's MinInt64 case. */
static bool format_binary(const qty *q, sbuf *sb)
{
    dec d = qty_dec(q), lim = dec_from_u64(1024, false);
    int k = 0;
    if (dec_cmp_abs(&d, &lim) < 0 || d.e < 0 || !bn_shl10(&d.m, d.e)) return false;
    if (!q->big) {
        int64_t v;
        int32_t s;
        int_get(q, &v, &s);
        /* removeInt64Factors cannot negate MinInt64, so upstream prints it in base 10. */
        if (v == INT64_MIN) return false;
    }
    d.e = 0;
    for (;;) {
        bn t = d.m;
        if (bn_div_small(&t, 1024) != 0) break;
        if (++k > 6) return false;
        d.m = t;
    }
    sb_digits(sb, &d);
    sb_put(sb, bin_suffixes[k], strlen(bin_suffixes[k]));
    return true;
}

static void format_decimal(const qty *q, qty_format f, sbuf *sb)
{
    dec d = qty_dec(q);
    char tmp[32];
    int64_t e = d.e;
    sb_digits(sb, &d);
    /* Lower the exponent to a multiple of 3 (mantissa x10 or x100). */
    int64_t adj = ((e % 3) + 3) % 3;
    sb_put(sb, "00", (size_t)adj);
    e -= adj;
    /* Keep the exponent parseable as int32 (upstream PR #142156). */
    while (e > INT32_MAX) {
        sb_put(sb, "000", 3);
        e -= 3;
    }
    if (f == QTY_DECIMAL_SI && e >= -9 && e <= 18) {
        const char *suf = dec_suffixes[(e + 9) / 3].s;
        sb_put(sb, suf, strlen(suf));
        return;
    }
    /* DecimalExponent, and DecimalSI beyond n..E (upstream PR #140459). */
    if (e != 0) sb_put(sb, tmp, (size_t)snprintf(tmp, sizeof(tmp), "e%lld", (long long)e));
}

size_t qty_format_str(const qty *q, char *buf, size_t n)
{
    sbuf sb = {.n = 0};
    qty_format f = (qty_format)q->format;
    if (f != QTY_DECIMAL_SI && f != QTY_BINARY_SI)
        f = QTY_DECIMAL_EXPONENT; /* unknown formats print as DecimalExponent */
    if (qty_is_zero(q))
        sb_put(&sb, "0", 1);
    else if (f != QTY_BINARY_SI || !format_binary(q, &sb))
        format_decimal(q, f == QTY_BINARY_SI ? QTY_DECIMAL_SI : f, &sb);
    if (n > 0) {
        size_t c = sb.n < n - 1 ? sb.n : n - 1;
        memcpy(buf, sb.b, c);
        buf[c] = '\0';
    }
    return sb.n;
}

json_t *qty_to_json(const qty *q)
{
    char buf[QTY_STR_MAX];
    size_t n = qty_format_str(q, buf, sizeof(buf));
    return json_stringn(buf, n);
}
