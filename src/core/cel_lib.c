/* cel_lib.c - the functions and operators of the supported CEL subset: one table,
 * used by the checker (signatures) and the evaluator (dispatch on runtime types).
 *
 * Semantics are the CEL standard definitions as cel-go implements them: int and uint
 * arithmetic is checked ("integer overflow", "unsigned integer overflow", "division by
 * zero", "modulus by zero"), double arithmetic is IEEE; comparisons across int, uint
 * and double are exact (Kubernetes enables cross-type numeric comparisons); strings
 * compare by code point; conversions follow Go's strconv. The quantity functions are
 * k8s.io/apiserver/pkg/cel/library/quantity.go's, on core/quantity.h arithmetic.
 */
#include "core/cel_impl.h"

#include "core/names.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ERR_INT_OVERFLOW "integer overflow"
#define ERR_UINT_OVERFLOW "unsigned integer overflow"

/* Cost of reading or writing n string bytes: cel-go's 0.1 per byte, rounded up. */
static uint64_t str_cost(size_t n)
{
    return (uint64_t)(n + 9) / 10;
}

static cel_val new_qty(cel_ctx *c, const qty *q)
{
    qty *d = cel_alloc(c, sizeof *d);
    if (!d) return (cel_val){.k = V_ERROR, .err = ""};
    *d = *q;
    return (cel_val){.k = V_QTY, .q = d};
}

static cel_val new_str(cel_ctx *c, const char *a, size_t an, const char *b, size_t bn)
{
    if (!cel_charge(c, str_cost(an + bn))) return (cel_val){.k = V_ERROR, .err = ""};
    char *p = cel_alloc(c, an + bn + 1);
    if (!p) return (cel_val){.k = V_ERROR, .err = ""};
    if (an) memcpy(p, a, an);
    if (bn) memcpy(p + an, b, bn);
    return (cel_val){.k = V_STRING, .s = {p, an + bn}};
}

static cel_val str_of(cel_ctx *c, const char *s)
{
    return new_str(c, s, strlen(s), NULL, 0);
}

/* ---- arithmetic ------------------------------------------------------------------------- */

static cel_val add_int(cel_ctx *c, const cel_val *a)
{
    int64_t r;
    if (__builtin_add_overflow(a[0].i, a[1].i, &r)) return cel_err(c, ERR_INT_OVERFLOW);
    return cel_int(r);
}

static cel_val sub_int(cel_ctx *c, const cel_val *a)
{
    int64_t r;
    if (__builtin_sub_overflow(a[0].i, a[1].i, &r)) return cel_err(c, ERR_INT_OVERFLOW);
    return cel_int(r);
}

static cel_val mul_int(cel_ctx *c, const cel_val *a)
{
    int64_t r;
    if (__builtin_mul_overflow(a[0].i, a[1].i, &r)) return cel_err(c, ERR_INT_OVERFLOW);
    return cel_int(r);
}

static cel_val div_int(cel_ctx *c, const cel_val *a)
{
    if (a[1].i == 0) return cel_err(c, "division by zero");
    if (a[0].i == INT64_MIN && a[1].i == -1) return cel_err(c, ERR_INT_OVERFLOW);
    return cel_int(a[0].i / a[1].i);
}

static cel_val mod_int(cel_ctx *c, const cel_val *a)
{
    if (a[1].i == 0) return cel_err(c, "modulus by zero");
    if (a[0].i == INT64_MIN && a[1].i == -1) return cel_err(c, ERR_INT_OVERFLOW);
    return cel_int(a[0].i % a[1].i);
}

static cel_val neg_int(cel_ctx *c, const cel_val *a)
{
    if (a[0].i == INT64_MIN) return cel_err(c, ERR_INT_OVERFLOW);
    return cel_int(-a[0].i);
}

static cel_val uint_val(uint64_t u)
{
    return (cel_val){.k = V_UINT, .u = u};
}

static cel_val add_uint(cel_ctx *c, const cel_val *a)
{
    uint64_t r;
    if (__builtin_add_overflow(a[0].u, a[1].u, &r)) return cel_err(c, ERR_UINT_OVERFLOW);
    return uint_val(r);
}

static cel_val sub_uint(cel_ctx *c, const cel_val *a)
{
    if (a[1].u > a[0].u) return cel_err(c, ERR_UINT_OVERFLOW);
    return uint_val(a[0].u - a[1].u);
}

static cel_val mul_uint(cel_ctx *c, const cel_val *a)
{
    uint64_t r;
    if (__builtin_mul_overflow(a[0].u, a[1].u, &r)) return cel_err(c, ERR_UINT_OVERFLOW);
    return uint_val(r);
}

static cel_val div_uint(cel_ctx *c, const cel_val *a)
{
    if (a[1].u == 0) return cel_err(c, "division by zero");
    return uint_val(a[0].u / a[1].u);
}

static cel_val mod_uint(cel_ctx *c, const cel_val *a)
{
    if (a[1].u == 0) return cel_err(c, "modulus by zero");
    return uint_val(a[0].u % a[1].u);
}

static cel_val dbl(double d)
{
    return (cel_val){.k = V_DOUBLE, .d = d};
}

static cel_val add_double(cel_ctx *c, const cel_val *a)
{
    return dbl(a[0].d + a[1].d);
}

static cel_val sub_double(cel_ctx *c, const cel_val *a)
{
    return dbl(a[0].d - a[1].d);
}

static cel_val mul_double(cel_ctx *c, const cel_val *a)
{
    return dbl(a[0].d * a[1].d);
}

static cel_val div_double(cel_ctx *c, const cel_val *a)
{
    return dbl(a[0].d / a[1].d);
}

static cel_val neg_double(cel_ctx *c, const cel_val *a)
{
    return dbl(-a[0].d);
}

static cel_val concat_str(cel_ctx *c, const cel_val *a)
{
    return new_str(c, a[0].s.p, a[0].s.n, a[1].s.p, a[1].s.n);
}

static cel_val concat_list(cel_ctx *c, const cel_val *a)
{
    size_t n0 = cel_list_len(&a[0]), n1 = cel_list_len(&a[1]);
    if (!cel_charge(c, n0 + n1)) return (cel_val){.k = V_ERROR, .err = ""};
    cel_list *l = cel_alloc(c, sizeof *l);
    cel_val *v = l ? cel_alloc(c, (n0 + n1) * sizeof *v) : NULL;
    if (!v) return (cel_val){.k = V_ERROR, .err = ""};
    for (size_t i = 0; i < n0; i++)
        v[i] = cel_list_at(&a[0], i);
    for (size_t i = 0; i < n1; i++)
        v[n0 + i] = cel_list_at(&a[1], i);
    l->n = n0 + n1;
    l->v = v;
    return (cel_val){.k = V_LIST, .l = l};
}

/* ---- logic, equality, ordering, membership ---------------------------------------------- */

static cel_val not_bool(cel_ctx *c, const cel_val *a)
{
    return cel_bool(!a[0].b);
}

/* What is left of the cost budget: equality stops walking there. */
static uint64_t budget_left(const cel_ctx *c)
{
    return c->cost < c->cost_limit ? c->cost_limit - c->cost : 0;
}

static cel_val equals(cel_ctx *c, const cel_val *a)
{
    uint64_t steps = 0;
    bool eq = cel_val_equal(&a[0], &a[1], &steps, budget_left(c));
    if (!cel_charge(c, steps)) return (cel_val){.k = V_ERROR, .err = ""};
    return cel_bool(eq);
}

static cel_val not_equals(cel_ctx *c, const cel_val *a)
{
    cel_val r = equals(c, a);
    if (r.k == V_BOOL) r.b = !r.b;
    return r;
}

/* Strings cost their length to compare; NaN compares false both ways. */
static int compare(cel_ctx *c, const cel_val *a)
{
    if (a[0].k == V_STRING) cel_charge(c, str_cost(a[0].s.n < a[1].s.n ? a[0].s.n : a[1].s.n));
    return cel_val_compare(&a[0], &a[1]);
}

static cel_val less(cel_ctx *c, const cel_val *a)
{
    return cel_bool(compare(c, a) == -1);
}

static cel_val less_eq(cel_ctx *c, const cel_val *a)
{
    int r = compare(c, a);
    return cel_bool(r == -1 || r == 0);
}

static cel_val greater(cel_ctx *c, const cel_val *a)
{
    return cel_bool(compare(c, a) == 1);
}

static cel_val greater_eq(cel_ctx *c, const cel_val *a)
{
    int r = compare(c, a);
    return cel_bool(r == 1 || r == 0);
}

static cel_val in_list(cel_ctx *c, const cel_val *a)
{
    uint64_t steps = 0, max = budget_left(c);
    bool found = false;
    for (size_t i = 0, n = cel_list_len(&a[1]); i < n && !found && steps <= max; i++) {
        cel_val e = cel_list_at(&a[1], i);
        found = cel_val_equal(&a[0], &e, &steps, max);
    }
    if (!cel_charge(c, steps)) return (cel_val){.k = V_ERROR, .err = ""};
    return cel_bool(found);
}

static cel_val in_map(cel_ctx *c, const cel_val *a)
{
    cel_val v;
    uint64_t cost = cel_map_lookup_cost(&a[1]) + (a[0].k == V_STRING ? str_cost(a[0].s.n) : 0);
    if (!cel_charge(c, cost)) return (cel_val){.k = V_ERROR, .err = ""};
    return cel_bool(cel_map_get(&a[1], &a[0], &v));
}

/* ---- size and strings ------------------------------------------------------------------- */

static cel_val size_str(cel_ctx *c, const cel_val *a)
{
    cel_charge(c, str_cost(a[0].s.n));
    return cel_int((int64_t)cel_utf8_len(a[0].s.p, a[0].s.n));
}

static cel_val size_list(cel_ctx *c, const cel_val *a)
{
    return cel_int((int64_t)cel_list_len(&a[0]));
}

static cel_val size_map(cel_ctx *c, const cel_val *a)
{
    return cel_int((int64_t)cel_map_len(&a[0]));
}

static cel_val contains(cel_ctx *c, const cel_val *a)
{
    cel_charge(c, str_cost(a[0].s.n) * (a[1].s.n ? 1 : 0) + str_cost(a[1].s.n));
    if (a[1].s.n == 0) return cel_bool(true);
    if (a[1].s.n > a[0].s.n) return cel_bool(false);
    return cel_bool(memmem(a[0].s.p, a[0].s.n, a[1].s.p, a[1].s.n) != NULL);
}

static cel_val starts_with(cel_ctx *c, const cel_val *a)
{
    cel_charge(c, str_cost(a[1].s.n));
    return cel_bool(a[1].s.n <= a[0].s.n && !memcmp(a[0].s.p, a[1].s.p, a[1].s.n));
}

static cel_val ends_with(cel_ctx *c, const cel_val *a)
{
    cel_charge(c, str_cost(a[1].s.n));
    size_t n = a[0].s.n, m = a[1].s.n;
    return cel_bool(m <= n && !memcmp(a[0].s.p + n - m, a[1].s.p, m));
}

/* ---- conversions ------------------------------------------------------------------------ */

/* Go's strconv error: `strconv.ParseInt: parsing "x": invalid syntax`. */
static cel_val strconv_err(cel_ctx *c, const char *fn, const cel_val *s, bool range)
{
    char *tmp = cel_alloc(c, s->s.n + 1);
    if (!tmp) return (cel_val){.k = V_ERROR, .err = ""};
    memcpy(tmp, s->s.p, s->s.n);
    char q[256];
    name_go_quote(tmp, q, sizeof q);
    return cel_err(c, "strconv.%s: parsing %s: %s", fn, q,
                   range ? "value out of range" : "invalid syntax");
}

/* Digits only, after an optional sign when `sign`: Go's base-10 syntax. */
static bool dec_syntax(const cel_val *s, bool sign)
{
    size_t i = sign && s->s.n && (s->s.p[0] == '+' || s->s.p[0] == '-') ? 1 : 0;
    if (i == s->s.n) return false;
    for (; i < s->s.n; i++)
        if (s->s.p[i] < '0' || s->s.p[i] > '9') return false;
    return true;
}

static cel_val int_of_string(cel_ctx *c, const cel_val *a)
{
    if (!dec_syntax(&a[0], true)) return strconv_err(c, "ParseInt", &a[0], false);
    char buf[32];
    if (a[0].s.n >= sizeof buf) return strconv_err(c, "ParseInt", &a[0], true);
    memcpy(buf, a[0].s.p, a[0].s.n);
    buf[a[0].s.n] = '\0';
    long long v;
    if (!name_parse_int64(buf, &v)) return strconv_err(c, "ParseInt", &a[0], true);
    return cel_int(v);
}

static cel_val uint_of_string(cel_ctx *c, const cel_val *a)
{
    if (!dec_syntax(&a[0], false)) return strconv_err(c, "ParseUint", &a[0], false);
    uint64_t v = 0;
    for (size_t i = 0; i < a[0].s.n; i++) {
        uint64_t d = (uint64_t)(a[0].s.p[i] - '0');
        if (v > (UINT64_MAX - d) / 10) return strconv_err(c, "ParseUint", &a[0], true);
        v = v * 10 + d;
    }
    return uint_val(v);
}

static bool is_inf_word(const char *s)
{
    if (*s == '+' || *s == '-') s++;
    return !strcasecmp(s, "inf") || !strcasecmp(s, "infinity");
}

static cel_val double_of_string(cel_ctx *c, const cel_val *a)
{
    char buf[512];
    if (a[0].s.n == 0 || a[0].s.n >= sizeof buf) return strconv_err(c, "ParseFloat", &a[0], false);
    memcpy(buf, a[0].s.p, a[0].s.n);
    buf[a[0].s.n] = '\0';
    char *end;
    /* strtod accepts more than Go: leading space and "nan(...)" */
    if (buf[0] == ' ' || (buf[0] >= '\t' && buf[0] <= '\r') || strchr(buf, '('))
        return strconv_err(c, "ParseFloat", &a[0], false);
    double d = strtod(buf, &end);
    if (*end || end == buf) return strconv_err(c, "ParseFloat", &a[0], false);
    if (isinf(d) && !is_inf_word(buf)) return strconv_err(c, "ParseFloat", &a[0], true);
    return dbl(d);
}

static cel_val int_of_uint(cel_ctx *c, const cel_val *a)
{
    if (a[0].u > INT64_MAX) return cel_err(c, ERR_INT_OVERFLOW);
    return cel_int((int64_t)a[0].u);
}

static cel_val int_of_double(cel_ctx *c, const cel_val *a)
{
    double d = a[0].d;
    if (isnan(d) || d <= -9223372036854775808.0 || d >= 9223372036854775808.0)
        return cel_err(c, ERR_INT_OVERFLOW);
    return cel_int((int64_t)d);
}

static cel_val uint_of_int(cel_ctx *c, const cel_val *a)
{
    if (a[0].i < 0) return cel_err(c, ERR_UINT_OVERFLOW);
    return uint_val((uint64_t)a[0].i);
}

static cel_val uint_of_double(cel_ctx *c, const cel_val *a)
{
    double d = a[0].d;
    if (isnan(d) || d < 0 || d >= 18446744073709551616.0) return cel_err(c, ERR_UINT_OVERFLOW);
    return uint_val((uint64_t)d);
}

static cel_val double_of_int(cel_ctx *c, const cel_val *a)
{
    return dbl((double)a[0].i);
}

static cel_val double_of_uint(cel_ctx *c, const cel_val *a)
{
    return dbl((double)a[0].u);
}

static cel_val identity(cel_ctx *c, const cel_val *a)
{
    return a[0];
}

static cel_val string_of_int(cel_ctx *c, const cel_val *a)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)a[0].i);
    return str_of(c, buf);
}

static cel_val string_of_uint(cel_ctx *c, const cel_val *a)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)a[0].u);
    return str_of(c, buf);
}

static cel_val string_of_double(cel_ctx *c, const cel_val *a)
{
    char buf[40];
    cel_format_double(a[0].d, buf, sizeof buf);
    return str_of(c, buf);
}

static cel_val string_of_bool(cel_ctx *c, const cel_val *a)
{
    return str_of(c, a[0].b ? "true" : "false");
}

/* strconv.ParseBool */
static cel_val bool_of_string(cel_ctx *c, const cel_val *a)
{
    static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (a[0].s.n == strlen(t[i]) && !memcmp(a[0].s.p, t[i], a[0].s.n)) return cel_bool(true);
        if (a[0].s.n == strlen(f[i]) && !memcmp(a[0].s.p, f[i], a[0].s.n)) return cel_bool(false);
    }
    return strconv_err(c, "ParseBool", &a[0], false);
}

/* ---- Kubernetes quantity library -------------------------------------------------------- */

static cel_val quantity(cel_ctx *c, const cel_val *a)
{
    qty q;
    cel_charge(c, 1 + str_cost(a[0].s.n));
    int rc = qty_parse_len(a[0].s.p, a[0].s.n, &q);
    if (rc) return cel_err(c, "%s", qty_strerror(rc));
    return new_qty(c, &q);
}

static cel_val is_quantity(cel_ctx *c, const cel_val *a)
{
    qty q;
    cel_charge(c, 1 + str_cost(a[0].s.n));
    return cel_bool(qty_parse_len(a[0].s.p, a[0].s.n, &q) == 0);
}

static cel_val q_sign(cel_ctx *c, const cel_val *a)
{
    return cel_int(qty_sign(a[0].q));
}

static cel_val q_greater(cel_ctx *c, const cel_val *a)
{
    return cel_bool(qty_cmp(a[0].q, a[1].q) == 1);
}

static cel_val q_less(cel_ctx *c, const cel_val *a)
{
    return cel_bool(qty_cmp(a[0].q, a[1].q) == -1);
}

static cel_val q_compare(cel_ctx *c, const cel_val *a)
{
    return cel_int(qty_cmp(a[0].q, a[1].q));
}

static cel_val q_arith(cel_ctx *c, const qty *x, const qty *y, bool sub)
{
    qty r = *x;
    int rc = sub ? qty_sub(&r, y) : qty_add(&r, y);
    if (rc) return cel_err(c, "%s", qty_strerror(rc));
    return new_qty(c, &r);
}

static cel_val q_add(cel_ctx *c, const cel_val *a)
{
    return q_arith(c, a[0].q, a[1].q, false);
}

static cel_val q_sub(cel_ctx *c, const cel_val *a)
{
    return q_arith(c, a[0].q, a[1].q, true);
}

/* An int operand is resource.NewQuantity(i, DecimalExponent), as upstream converts it. */
static cel_val q_add_int(cel_ctx *c, const cel_val *a)
{
    qty y = qty_from_int64(a[1].i, 0, QTY_DECIMAL_EXPONENT);
    return q_arith(c, a[0].q, &y, false);
}

static cel_val q_sub_int(cel_ctx *c, const cel_val *a)
{
    qty y = qty_from_int64(a[1].i, 0, QTY_DECIMAL_EXPONENT);
    return q_arith(c, a[0].q, &y, true);
}

/* Quantity.AsInt64. Upstream decides on its representation, not on the value: an
 * inf.Dec never converts, nor does an int64Amount with a negative scale (so "1000m" is
 * not an integer), while one with a positive scale does when the value fits. qty keeps
 * that representation in `big` and `uscale`, which quantity.h exposes only as struct
 * fields (there is no accessor yet), so this is the one place here that reads them. */
static bool q_as_int64(const qty *q, int64_t *out)
{
    if (q->big || q->uscale < 0) return false;
    if (qty_cmp_int64(q, INT64_MAX) > 0 || qty_cmp_int64(q, INT64_MIN) < 0) return false;
    *out = qty_value(q); /* exact: the value is an integer in range */
    return true;
}

static cel_val q_as_integer(cel_ctx *c, const cel_val *a)
{
    int64_t v;
    if (!q_as_int64(a[0].q, &v)) return cel_err(c, "cannot convert value to integer");
    return cel_int(v);
}

static cel_val q_is_integer(cel_ctx *c, const cel_val *a)
{
    int64_t v;
    return cel_bool(q_as_int64(a[0].q, &v));
}

/* AsApproximateFloat64: here the double nearest to the exact value (upstream multiplies
 * a rounded mantissa by a power of ten, so the last bit may differ). Built from the
 * magnitude limbs and exponent (see q_as_int64 on reading qty fields). */
static cel_val q_as_float(cel_ctx *c, const cel_val *a)
{
    const qty *q = a[0].q;
    if (q->nlimb == 0) return dbl(0);
    char buf[QTY_LIMBS * 9 + 32];
    size_t o = (size_t)snprintf(buf, sizeof buf, "%s%u", q->neg ? "-" : "", q->limb[q->nlimb - 1]);
    for (int i = q->nlimb - 2; i >= 0; i--)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%09u", q->limb[i]);
    snprintf(buf + o, sizeof buf - o, "e%lld", (long long)q->exp);
    return dbl(strtod(buf, NULL));
}

/* ---- the table -------------------------------------------------------------------------- */

#define OV(member, sig, fn)                                                                        \
    {                                                                                              \
        member, sig, fn                                                                            \
    }
#define FUNC(name, ...)                                                                            \
    {                                                                                              \
        name, (const cel_overload[]){__VA_ARGS__},                                                 \
            sizeof((const cel_overload[]){__VA_ARGS__}) / sizeof(cel_overload)                     \
    }
#define CMP_OVERLOADS(fn)                                                                          \
    OV(false, "ii>b", fn), OV(false, "iu>b", fn), OV(false, "id>b", fn), OV(false, "ui>b", fn),    \
        OV(false, "uu>b", fn), OV(false, "ud>b", fn), OV(false, "di>b", fn),                       \
        OV(false, "du>b", fn), OV(false, "dd>b", fn), OV(false, "ss>b", fn), OV(false, "bb>b", fn)

const cel_func cel_funcs[] = {
    FUNC("_+_", OV(false, "ii>i", add_int), OV(false, "uu>u", add_uint),
         OV(false, "dd>d", add_double), OV(false, "ss>s", concat_str),
         OV(false, "lAlA>lA", concat_list)),
    FUNC("_-_", OV(false, "ii>i", sub_int), OV(false, "uu>u", sub_uint),
         OV(false, "dd>d", sub_double)),
    FUNC("_*_", OV(false, "ii>i", mul_int), OV(false, "uu>u", mul_uint),
         OV(false, "dd>d", mul_double)),
    FUNC("_/_", OV(false, "ii>i", div_int), OV(false, "uu>u", div_uint),
         OV(false, "dd>d", div_double)),
    FUNC("_%_", OV(false, "ii>i", mod_int), OV(false, "uu>u", mod_uint)),
    FUNC("-_", OV(false, "i>i", neg_int), OV(false, "d>d", neg_double)),
    FUNC("!_", OV(false, "b>b", not_bool)),
    FUNC("_==_", OV(false, "AA>b", equals)),
    FUNC("_!=_", OV(false, "AA>b", not_equals)),
    FUNC("_<_", CMP_OVERLOADS(less)),
    FUNC("_<=_", CMP_OVERLOADS(less_eq)),
    FUNC("_>_", CMP_OVERLOADS(greater)),
    FUNC("_>=_", CMP_OVERLOADS(greater_eq)),
    FUNC("@in", OV(false, "AlA>b", in_list), OV(false, "AmAB>b", in_map)),
    FUNC("size", OV(false, "s>i", size_str), OV(false, "lA>i", size_list),
         OV(false, "mAB>i", size_map), OV(true, "s>i", size_str), OV(true, "lA>i", size_list),
         OV(true, "mAB>i", size_map)),
    FUNC("contains", OV(true, "ss>b", contains)),
    FUNC("startsWith", OV(true, "ss>b", starts_with)),
    FUNC("endsWith", OV(true, "ss>b", ends_with)),
    FUNC("int", OV(false, "i>i", identity), OV(false, "u>i", int_of_uint),
         OV(false, "d>i", int_of_double), OV(false, "s>i", int_of_string)),
    FUNC("uint", OV(false, "i>u", uint_of_int), OV(false, "u>u", identity),
         OV(false, "d>u", uint_of_double), OV(false, "s>u", uint_of_string)),
    FUNC("double", OV(false, "i>d", double_of_int), OV(false, "u>d", double_of_uint),
         OV(false, "d>d", identity), OV(false, "s>d", double_of_string)),
    FUNC("string", OV(false, "i>s", string_of_int), OV(false, "u>s", string_of_uint),
         OV(false, "d>s", string_of_double), OV(false, "s>s", identity),
         OV(false, "b>s", string_of_bool)),
    FUNC("bool", OV(false, "b>b", identity), OV(false, "s>b", bool_of_string)),
    FUNC("dyn", OV(false, "A>y", identity)),
    FUNC("quantity", OV(false, "s>q", quantity)),
    FUNC("isQuantity", OV(false, "s>b", is_quantity)),
    FUNC("sign", OV(false, "q>i", q_sign)),
    FUNC("isGreaterThan", OV(true, "qq>b", q_greater)),
    FUNC("isLessThan", OV(true, "qq>b", q_less)),
    FUNC("compareTo", OV(true, "qq>i", q_compare)),
    FUNC("add", OV(true, "qq>q", q_add), OV(true, "qi>q", q_add_int)),
    FUNC("sub", OV(true, "qq>q", q_sub), OV(true, "qi>q", q_sub_int)),
    FUNC("asInteger", OV(true, "q>i", q_as_integer)),
    FUNC("isInteger", OV(true, "q>b", q_is_integer)),
    FUNC("asApproximateFloat", OV(true, "q>d", q_as_float)),
};

const size_t cel_nfuncs = sizeof cel_funcs / sizeof cel_funcs[0];

int cel_func_lookup(const char *name)
{
    for (size_t i = 0; i < cel_nfuncs; i++)
        if (!strcmp(cel_funcs[i].name, name)) return (int)i;
    return -1;
}

bool cel_func_is_operator(const char *name)
{
    return name[0] == '_' || name[0] == '@' || !strcmp(name, "!_") || !strcmp(name, "-_");
}

static void skip_code(const char **s)
{
    char c = *(*s)++;
    if (c == 'l') skip_code(s);
    if (c == 'm') {
        skip_code(s);
        skip_code(s);
    }
}

int cel_sig_arity(const char *sig)
{
    int n = 0;
    while (*sig && *sig != '>') {
        skip_code(&sig);
        n++;
    }
    return n;
}
