/* cel_value.c - the arena, static types and runtime values of the CEL interpreter.
 *
 * Values follow the CEL language definition as cel-go implements it today:
 * equality is heterogeneous (values of different types are unequal, never an error;
 * int, uint and double compare by numeric value, so dyn(1) == 1.0), NaN equals
 * nothing, and map keys match across numeric types ({1: 'a'}[1.0] finds 'a').
 * Quantities are equal when their values are (Quantity.Equal is Cmp == 0).
 */
#include "core/cel_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ------------------------------------------------------------------------------ */

struct cel_chunk {
    cel_chunk *next;
    size_t cap, off, pad; /* 32-byte header keeps data 16-byte aligned */
    unsigned char data[];
};

#define CHUNK_MIN 1024
#define CHUNK_MAX (64 * 1024)

void cel_arena_init(cel_arena *a, size_t limit)
{
    a->head = NULL;
    a->used = 0;
    a->limit = limit;
}

void cel_arena_free(cel_arena *a)
{
    cel_chunk *c = a->head;
    while (c) {
        cel_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used = 0;
}

void *cel_arena_alloc(cel_arena *a, size_t n)
{
    if (n == 0) n = 1;
    if (n > a->limit) return NULL;
    n = (n + 15) & ~(size_t)15;
    if (a->used + n > a->limit) return NULL;
    cel_chunk *c = a->head;
    if (!c || c->cap - c->off < n) {
        size_t cap = c ? c->cap * 2 : CHUNK_MIN;
        if (cap > CHUNK_MAX) cap = CHUNK_MAX;
        if (cap < n) cap = n;
        cel_chunk *nc = calloc(1, sizeof *nc + cap);
        if (!nc) return NULL;
        nc->cap = cap;
        nc->next = c;
        a->head = c = nc;
    }
    void *p = c->data + c->off;
    c->off += n;
    a->used += n;
    return p;
}

char *cel_arena_strndup(cel_arena *a, const char *s, size_t n)
{
    char *d = cel_arena_alloc(a, n + 1);
    if (d && n) memcpy(d, s, n);
    return d;
}

/* ---- static types ----------------------------------------------------------------------- */

const cel_type cel_t_error = {T_ERROR, {0}}, cel_t_dyn = {T_DYN, {0}}, cel_t_free = {T_FREE, {0}},
               cel_t_null = {T_NULL, {0}}, cel_t_bool = {T_BOOL, {0}}, cel_t_int = {T_INT, {0}},
               cel_t_uint = {T_UINT, {0}}, cel_t_double = {T_DOUBLE, {0}},
               cel_t_string = {T_STRING, {0}}, cel_t_qty = {T_QTY, {0}};

const cel_type *cel_type_list(cel_arena *a, const cel_type *elem)
{
    cel_type *t = cel_arena_alloc(a, sizeof *t);
    if (!t) return NULL;
    t->k = T_LIST;
    t->p[0] = elem;
    return t;
}

const cel_type *cel_type_map(cel_arena *a, const cel_type *k, const cel_type *v)
{
    cel_type *t = cel_arena_alloc(a, sizeof *t);
    if (!t) return NULL;
    t->k = T_MAP;
    t->p[0] = k;
    t->p[1] = v;
    return t;
}

bool cel_type_is_dynlike(const cel_type *t)
{
    return t->k == T_DYN || t->k == T_ERROR || t->k == T_FREE;
}

/* IsExactType after substitution: free type variables count as dyn. */
bool cel_type_exact(const cel_type *a, const cel_type *b)
{
    cel_tkind ka = a->k == T_FREE ? T_DYN : a->k, kb = b->k == T_FREE ? T_DYN : b->k;
    if (ka != kb) return false;
    if (ka == T_LIST) return cel_type_exact(a->p[0], b->p[0]);
    if (ka == T_MAP) return cel_type_exact(a->p[0], b->p[0]) && cel_type_exact(a->p[1], b->p[1]);
    return true;
}

static const char *prim_name(cel_tkind k, bool go_string)
{
    switch (k) {
    case T_ERROR:
        return "!error!";
    case T_DYN:
    case T_FREE:
        return "dyn";
    case T_NULL:
        return go_string ? "null_type" : "null";
    case T_BOOL:
        return "bool";
    case T_INT:
        return "int";
    case T_UINT:
        return "uint";
    case T_DOUBLE:
        return "double";
    case T_STRING:
        return "string";
    case T_QTY:
        return "kubernetes.Quantity";
    case T_LIST:
        return "list";
    case T_MAP:
        return "map";
    }
    return "?";
}

static void type_fmt(const cel_type *t, bool go_string, char *buf, size_t n, size_t *o)
{
    const char *name = prim_name(t->k, go_string);
    *o += (size_t)snprintf(buf + (*o < n ? *o : n), *o < n ? n - *o : 0, "%s", name);
    if (t->k != T_LIST && t->k != T_MAP) return;
    *o += (size_t)snprintf(buf + (*o < n ? *o : n), *o < n ? n - *o : 0, "(");
    type_fmt(t->p[0], go_string, buf, n, o);
    if (t->k == T_MAP) {
        *o += (size_t)snprintf(buf + (*o < n ? *o : n), *o < n ? n - *o : 0, ", ");
        type_fmt(t->p[1], go_string, buf, n, o);
    }
    *o += (size_t)snprintf(buf + (*o < n ? *o : n), *o < n ? n - *o : 0, ")");
}

void cel_type_format(const cel_type *t, bool go_string, char *buf, size_t n)
{
    size_t o = 0;
    if (!n) return;
    buf[0] = '\0';
    type_fmt(t, go_string, buf, n, &o);
}

/* ---- JSON <-> values -------------------------------------------------------------------- */

cel_val cel_from_json(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return (cel_val){.k = V_MAP, .json = 1, .j = j};
    case JSON_ARRAY:
        return (cel_val){.k = V_LIST, .json = 1, .j = j};
    case JSON_STRING:
        return (cel_val){.k = V_STRING, .s = {json_string_value(j), json_string_length(j)}};
    case JSON_INTEGER:
        return (cel_val){.k = V_INT, .i = (int64_t)json_integer_value(j)};
    case JSON_REAL:
        return (cel_val){.k = V_DOUBLE, .d = json_real_value(j)};
    case JSON_TRUE:
        return cel_bool(true);
    case JSON_FALSE:
        return cel_bool(false);
    case JSON_NULL:
        break;
    }
    return (cel_val){.k = V_NULL};
}

static json_t *list_to_json(const cel_val *v, size_t *budget)
{
    json_t *a = json_array();
    for (size_t i = 0, n = cel_list_len(v); a && i < n; i++) {
        cel_val e = cel_list_at(v, i);
        json_t *je = cel_to_json(&e, budget);
        if (!je || json_array_append_new(a, je)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *map_to_json(const cel_val *v, size_t *budget)
{
    json_t *o = json_object();
    cel_map_iter it;
    cel_val k, e;
    cel_map_iter_init(&it, v);
    while (o && cel_map_next(&it, &k, &e)) {
        json_t *je = k.k == V_STRING ? cel_to_json(&e, budget) : NULL; /* only string keys map */
        if (!je || json_object_setn_new(o, k.s.p, k.s.n, je)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static json_t *double_to_json(double d)
{
    if (isnan(d)) return json_string("NaN");
    if (isinf(d)) return json_string(d > 0 ? "Infinity" : "-Infinity");
    return json_real(d);
}

/* What a JSON node costs against the budget: a rough size of jansson's allocation. */
static bool spend(size_t *budget, size_t bytes)
{
    bytes += 64;
    if (*budget < bytes) {
        *budget = 0;
        return false;
    }
    *budget -= bytes;
    return true;
}

json_t *cel_to_json(const cel_val *v, size_t *budget)
{
    char buf[QTY_STR_MAX];
    if (!spend(budget, v->k == V_STRING ? v->s.n : 0)) return NULL;
    switch ((cel_vkind)v->k) {
    case V_NULL:
        return json_null();
    case V_BOOL:
        return json_boolean(v->b);
    case V_INT:
        return json_integer((json_int_t)v->i);
    case V_UINT:
        if (v->u <= INT64_MAX) return json_integer((json_int_t)v->u);
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->u);
        return json_string(buf);
    case V_DOUBLE:
        return double_to_json(v->d);
    case V_STRING:
        return json_stringn(v->s.p, v->s.n);
    case V_QTY:
        qty_format_str(v->q, buf, sizeof buf);
        return json_string(buf);
    case V_LIST: /* JSON-backed ones too: the input may be shared many times over */
        return list_to_json(v, budget);
    case V_MAP:
        return map_to_json(v, budget);
    case V_ERROR:
        break;
    }
    return NULL;
}

/* ---- lists and maps --------------------------------------------------------------------- */

size_t cel_list_len(const cel_val *l)
{
    return l->json ? json_array_size(l->j) : l->l->n;
}

cel_val cel_list_at(const cel_val *l, size_t i)
{
    return l->json ? cel_from_json(json_array_get(l->j, i)) : l->l->v[i];
}

size_t cel_map_len(const cel_val *m)
{
    return m->json ? json_object_size(m->j) : m->m->n;
}

/* Map keys are int, uint, bool or string; numeric keys match across types. */
static bool key_equal(const cel_val *a, const cel_val *b)
{
    bool an = a->k == V_INT || a->k == V_UINT || a->k == V_DOUBLE;
    bool bn = b->k == V_INT || b->k == V_UINT || b->k == V_DOUBLE;
    if (an && bn) return cel_val_compare(a, b) == 0;
    if (a->k != b->k) return false;
    if (a->k == V_BOOL) return a->b == b->b;
    if (a->k == V_STRING) return a->s.n == b->s.n && memcmp(a->s.p, b->s.p, a->s.n) == 0;
    return false;
}

bool cel_map_get(const cel_val *m, const cel_val *key, cel_val *out)
{
    if (m->json) {
        if (key->k != V_STRING) return false;
        const json_t *v = json_object_getn(m->j, key->s.p, key->s.n);
        if (!v) return false;
        *out = cel_from_json(v);
        return true;
    }
    for (size_t i = 0; i < m->m->n; i++)
        if (key_equal(&m->m->k[i], key)) {
            *out = m->m->v[i];
            return true;
        }
    return false;
}

uint64_t cel_map_lookup_cost(const cel_val *m)
{
    return m->json ? 1 : 1 + m->m->n / 8;
}

void cel_map_iter_init(cel_map_iter *it, const cel_val *m)
{
    it->m = m;
    it->i = 0;
    it->it = m->json ? json_object_iter((json_t *)m->j) : NULL;
}

bool cel_map_next(cel_map_iter *it, cel_val *key, cel_val *val)
{
    if (it->m->json) {
        if (!it->it) return false;
        const char *k = json_object_iter_key(it->it);
        *key = (cel_val){.k = V_STRING, .s = {k, json_object_iter_key_len(it->it)}};
        *val = cel_from_json(json_object_iter_value(it->it));
        it->it = json_object_iter_next((json_t *)it->m->j, it->it);
        return true;
    }
    if (it->i >= it->m->m->n) return false;
    *key = it->m->m->k[it->i];
    *val = it->m->m->v[it->i];
    it->i++;
    return true;
}

/* ---- comparison ------------------------------------------------------------------------- */

static int cmp3(int64_t a, int64_t b)
{
    return a < b ? -1 : a > b;
}

static int cmp_int_uint(int64_t i, uint64_t u)
{
    if (i < 0) return -1;
    return (uint64_t)i < u ? -1 : (uint64_t)i > u;
}

/* Exact int/double ordering (no rounding of the int); 2 for NaN. */
static int cmp_int_double(int64_t i, double d)
{
    if (isnan(d)) return 2;
    if (d >= 9223372036854775808.0) return -1;
    if (d < -9223372036854775808.0) return 1;
    int64_t t = (int64_t)d; /* in range: truncates toward zero */
    if (i != t) return cmp3(i, t);
    double frac = d - (double)t;
    return frac > 0 ? -1 : frac < 0;
}

static int cmp_uint_double(uint64_t u, double d)
{
    if (isnan(d)) return 2;
    if (d < 0) return 1;
    if (d >= 18446744073709551616.0) return -1;
    uint64_t t = (uint64_t)d;
    if (u != t) return u < t ? -1 : 1;
    double frac = d - (double)t;
    return frac > 0 ? -1 : 0;
}

static int cmp_numeric(const cel_val *a, const cel_val *b)
{
    switch (a->k * 16 + b->k) {
    case V_INT * 16 + V_INT:
        return cmp3(a->i, b->i);
    case V_INT * 16 + V_UINT:
        return cmp_int_uint(a->i, b->u);
    case V_INT * 16 + V_DOUBLE:
        return cmp_int_double(a->i, b->d);
    case V_UINT * 16 + V_INT:
        return -cmp_int_uint(b->i, a->u);
    case V_UINT * 16 + V_UINT:
        return a->u < b->u ? -1 : a->u > b->u;
    case V_UINT * 16 + V_DOUBLE:
        return cmp_uint_double(a->u, b->d);
    case V_DOUBLE * 16 + V_INT: {
        int r = cmp_int_double(b->i, a->d);
        return r == 2 ? 2 : -r;
    }
    case V_DOUBLE * 16 + V_UINT: {
        int r = cmp_uint_double(b->u, a->d);
        return r == 2 ? 2 : -r;
    }
    case V_DOUBLE * 16 + V_DOUBLE:
        if (isnan(a->d) || isnan(b->d)) return 2;
        return a->d < b->d ? -1 : a->d > b->d;
    }
    return 3;
}

static bool is_num(const cel_val *v)
{
    return v->k == V_INT || v->k == V_UINT || v->k == V_DOUBLE;
}

int cel_val_compare(const cel_val *a, const cel_val *b)
{
    if (is_num(a) && is_num(b)) return cmp_numeric(a, b);
    if (a->k != b->k) return 3;
    if (a->k == V_BOOL) return (int)a->b - (int)b->b;
    if (a->k == V_STRING) { /* UTF-8 byte order is code point order */
        size_t n = a->s.n < b->s.n ? a->s.n : b->s.n;
        int r = n ? memcmp(a->s.p, b->s.p, n) : 0;
        if (r) return r < 0 ? -1 : 1;
        return a->s.n < b->s.n ? -1 : a->s.n > b->s.n;
    }
    return 3;
}

/* ---- equality --------------------------------------------------------------------------- */

static bool list_equal(const cel_val *a, const cel_val *b, uint64_t *steps, uint64_t max)
{
    size_t n = cel_list_len(a);
    if (n != cel_list_len(b)) return false;
    for (size_t i = 0; i < n; i++) {
        cel_val x = cel_list_at(a, i), y = cel_list_at(b, i);
        if (!cel_val_equal(&x, &y, steps, max)) return false;
    }
    return true;
}

static bool map_equal(const cel_val *a, const cel_val *b, uint64_t *steps, uint64_t max)
{
    if (cel_map_len(a) != cel_map_len(b)) return false;
    cel_map_iter it;
    cel_val k, v, w;
    cel_map_iter_init(&it, a);
    while (cel_map_next(&it, &k, &v)) {
        *steps += cel_map_lookup_cost(b) - 1;
        if (!cel_map_get(b, &k, &w) || !cel_val_equal(&v, &w, steps, max)) return false;
    }
    return true;
}

bool cel_val_equal(const cel_val *a, const cel_val *b, uint64_t *steps, uint64_t max)
{
    if (++*steps > max) return false;
    if (is_num(a) && is_num(b)) return cmp_numeric(a, b) == 0;
    if (a->k != b->k) return false;
    switch ((cel_vkind)a->k) {
    case V_NULL:
        return true;
    case V_BOOL:
        return a->b == b->b;
    case V_STRING:
        *steps += a->s.n / 10;
        return a->s.n == b->s.n && memcmp(a->s.p, b->s.p, a->s.n) == 0;
    case V_QTY:
        return qty_cmp(a->q, b->q) == 0;
    case V_LIST:
        return list_equal(a, b, steps, max);
    case V_MAP:
        return map_equal(a, b, steps, max);
    default:
        return false;
    }
}

const char *cel_val_type_name(const cel_val *v)
{
    static const char *const names[] = {
        [V_NULL] = "null_type",
        [V_BOOL] = "bool",
        [V_INT] = "int",
        [V_UINT] = "uint",
        [V_DOUBLE] = "double",
        [V_STRING] = "string",
        [V_QTY] = "kubernetes.Quantity",
        [V_LIST] = "list",
        [V_MAP] = "map",
        [V_ERROR] = "error",
    };
    return v->k <= V_ERROR ? names[v->k] : "?";
}

/* ---- formatting ------------------------------------------------------------------------- */

/* Shortest decimal digits that read back as d (d finite, > 0): digits into dig (no dot),
 * returns their count and sets *dp, the decimal point position (value = 0.dig * 10^dp). */
static int shortest_digits(double d, char *dig, int *dp)
{
    char tmp[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) != d && prec < 17) continue;
        int nd = 0;
        const char *p = tmp;
        for (; *p && *p != 'e'; p++)
            if (*p >= '0' && *p <= '9') dig[nd++] = *p;
        while (nd > 1 && dig[nd - 1] == '0')
            nd--;
        *dp = atoi(p + 1) + 1;
        return nd;
    }
    return 0;
}

void cel_format_double(double d, char *buf, size_t n)
{
    if (isnan(d)) {
        snprintf(buf, n, "NaN");
        return;
    }
    if (isinf(d)) {
        snprintf(buf, n, d > 0 ? "+Inf" : "-Inf");
        return;
    }
    const char *sign = signbit(d) ? "-" : "";
    if (d == 0) {
        snprintf(buf, n, "%s0", sign);
        return;
    }
    char dig[24];
    int dp, nd = shortest_digits(fabs(d), dig, &dp);
    int exp = dp - 1;
    if (exp < -4 || exp >= 6) { /* strconv: shortest 'g' decides with precision 6 */
        snprintf(buf, n, "%s%c%s%.*se%c%02d", sign, dig[0], nd > 1 ? "." : "", nd - 1, dig + 1,
                 exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
        return;
    }
    char out[64];
    size_t o = 0;
    if (dp <= 0) {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -dp; i++)
            out[o++] = '0';
        memcpy(out + o, dig, (size_t)nd);
        o += (size_t)nd;
    } else {
        for (int i = 0; i < dp; i++)
            out[o++] = i < nd ? dig[i] : '0';
        if (nd > dp) {
            out[o++] = '.';
            memcpy(out + o, dig + dp, (size_t)(nd - dp));
            o += (size_t)(nd - dp);
        }
    }
    out[o] = '\0';
    snprintf(buf, n, "%s%s", sign, out);
}

void cel_val_format_key(const cel_val *v, char *buf, size_t n)
{
    switch ((cel_vkind)v->k) {
    case V_INT:
        snprintf(buf, n, "%lld", (long long)v->i);
        return;
    case V_UINT:
        snprintf(buf, n, "%llu", (unsigned long long)v->u);
        return;
    case V_DOUBLE:
        cel_format_double(v->d, buf, n);
        return;
    case V_BOOL:
        snprintf(buf, n, "%s", v->b ? "true" : "false");
        return;
    case V_STRING:
        snprintf(buf, n, "%.*s", v->s.n > 200 ? 200 : (int)v->s.n, v->s.p);
        return;
    case V_NULL:
        snprintf(buf, n, "null");
        return;
    default:
        snprintf(buf, n, "%s", cel_val_type_name(v));
    }
}

size_t cel_utf8_len(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
    return c;
}
