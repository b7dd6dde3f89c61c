/* jsonschema.c - Kubernetes structural schemas (see jsonschema.h). */
#include "core/jsonschema.h"
#include "core/jdump.h"

#include "core/rfc3339.h"
#include "core/strmap.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    T_OBJECT = 1,
    T_ARRAY = 2,
    T_STRING = 4,
    T_INTEGER = 8,
    T_NUMBER = 16,
    T_BOOLEAN = 32,
};

enum { F_NONE, F_DATETIME, F_DATE, F_INT32, F_INT64, F_BYTE, F_UUID };

typedef struct js_node js_node;
struct js_node {
    unsigned types; /* one T_* bit, or 0 (any) */
    bool nullable, preserve, int_or_string, embedded;
    json_t *def;                             /* default (owned) */
    json_t *enumv;                           /* owned array or NULL */
    json_t *minimum, *maximum, *multiple_of; /* owned numbers or NULL */
    bool excl_min, excl_max;
    long long min_len, max_len, min_items, max_items, min_props, max_props; /* -1: none */
    char *pattern;
    regex_t re;
    bool has_re;
    int format;
    size_t nprops;
    char **pnames;
    js_node **props;
    strmap *pindex;
    js_node *addl; /* additionalProperties schema */
    bool addl_any; /* additionalProperties: true */
    size_t nreq;
    char **required;
    js_node *items;
    size_t nall, nany, none;
    js_node **all_of, **any_of, **one_of;
    js_node *not_;
};

struct js_schema {
    js_node *root;
    bool has_defaults;
};

/* ---------------------------------------------------------------- paths */

typedef struct {
    char *p;
    size_t len, cap;
    bool oom;
} pbuf;

static size_t pb_push(pbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t pb_push(pbuf *b, const char *fmt, ...)
{
    size_t old = b->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return old;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = (b->len + (size_t)n + 1) * 2;
        char *np = realloc(b->p, cap);
        if (!np) {
            b->oom = true;
            return old;
        }
        b->p = np;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return old;
}

static void pb_pop(pbuf *b, size_t len)
{
    b->len = len;
    if (b->p) b->p[len] = '\0';
}

static const char *pb_str(const pbuf *b)
{
    return b->p ? b->p : "";
}

/* a child field: "a" at the root, ".a" below */
static size_t pb_field(pbuf *b, const char *k)
{
    return pb_push(b, b->len ? ".%s" : "%s", k);
}

/* ---------------------------------------------------------------- errors */

void js_errors_free(js_errors *e)
{
    if (!e) return;
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].field);
        free(e->v[i].detail);
        json_decref(e->v[i].value);
    }
    free(e->v);
    memset(e, 0, sizeof *e);
}

static void add_err(js_errors *e, js_reason r, const char *field, json_t *value_stolen,
                    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void add_err(js_errors *e, js_reason r, const char *field, json_t *value_stolen,
                    const char *fmt, ...)
{
    if (e->n >= JS_MAX_ERRORS) {
        e->truncated = true;
        json_decref(value_stolen);
        return;
    }
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 8;
        js_error *nv = realloc(e->v, cap * sizeof *nv);
        if (!nv) {
            e->truncated = true;
            json_decref(value_stolen);
            return;
        }
        e->v = nv;
        e->cap = cap;
    }
    char *detail = NULL;
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&detail, fmt, ap) < 0) detail = NULL;
        va_end(ap);
    }
    char *f = strdup(field);
    if (!f || (fmt && !detail)) {
        free(f);
        free(detail);
        json_decref(value_stolen);
        e->truncated = true;
        return;
    }
    e->v[e->n++] = (js_error){r, f, value_stolen, detail};
}

/* ---------------------------------------------------------------- numbers */

/* Go's %v of a float64 (strconv 'g', shortest): %e form when exp < -4 || exp >= 6. */
static void gofloat(double d, char *buf, size_t n)
{
    if (isnan(d) || isinf(d)) {
        snprintf(buf, n, "%s", isnan(d) ? "NaN" : d > 0 ? "+Inf" : "-Inf");
        return;
    }
    char tmp[64];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d) break;
    }
    int exp = atoi(strchr(tmp, 'e') + 1);
    if (exp < -4 || exp >= 6) {
        /* Go writes e+06, e-07: at least two exponent digits, as C does */
        snprintf(buf, n, "%s", tmp);
        return;
    }
    int decimals = prec - 1 - exp;
    snprintf(buf, n, "%.*f", decimals > 0 ? decimals : 0, d);
}

static void fmt_num(const json_t *v, char *buf, size_t n)
{
    if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else
        gofloat(json_number_value(v), buf, n);
}

/* -1, 0, 1; integers compared exactly */
static int num_cmp(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b)) {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        return x < y ? -1 : x > y;
    }
    double x = json_number_value(a), y = json_number_value(b);
    return x < y ? -1 : x > y;
}

static bool is_integral(const json_t *v)
{
    if (json_is_integer(v)) return true;
    if (!json_is_real(v)) return false;
    double d = json_real_value(v);
    return isfinite(d) && d == floor(d);
}

/* ---------------------------------------------------------------- free */

static void node_free(js_node *n)
{
    if (!n) return;
    json_decref(n->def);
    json_decref(n->enumv);
    json_decref(n->minimum);
    json_decref(n->maximum);
    json_decref(n->multiple_of);
    free(n->pattern);
    if (n->has_re) regfree(&n->re);
    for (size_t i = 0; i < n->nprops; i++) {
        free(n->pnames[i]);
        node_free(n->props[i]);
    }
    free(n->pnames);
    free(n->props);
    strmap_free(n->pindex);
    node_free(n->addl);
    for (size_t i = 0; i < n->nreq; i++)
        free(n->required[i]);
    free(n->required);
    node_free(n->items);
    for (size_t i = 0; i < n->nall; i++)
        node_free(n->all_of[i]);
    for (size_t i = 0; i < n->nany; i++)
        node_free(n->any_of[i]);
    for (size_t i = 0; i < n->none; i++)
        node_free(n->one_of[i]);
    free(n->all_of);
    free(n->any_of);
    free(n->one_of);
    node_free(n->not_);
    free(n);
}

void js_free(js_schema *s)
{
    if (!s) return;
    node_free(s->root);
    free(s);
}

/* ---------------------------------------------------------------- compile */

typedef struct {
    char *err;
    size_t n;
    pbuf path;
    size_t nodes;
    bool failed;
    bool defaults; /* some node has a default */
} cctx;

static js_node *fail(cctx *c, js_node *n, const char *child, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static js_node *fail(cctx *c, js_node *n, const char *child, const char *fmt, ...)
{
    if (!c->failed && c->n) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(c->err, c->n, "%s%s%s: %s", pb_str(&c->path), child ? "." : "", child ? child : "",
                 msg);
    }
    c->failed = true;
    node_free(n);
    return NULL;
}

/* ECMA/RE2 shorthand classes to POSIX; NULL (with why) if unsupported. */
/* Where pattern p stacks one repetition on another ("a++", "a*{2}",
 * "a{2}{3}"; a single lazy "?" after one is fine), or NULL. Go's regexp,
 * which upstream validates patterns with, refuses them ("invalid nested
 * repetition operator"); glibc's regcomp accepts them and expands each
 * level, so a run of them takes memory exponential in its length. */
static const char *nested_repetition(const char *p, const char **what)
{
    *what = "invalid nested repetition operator";
    bool quant = false, lazy = false;
    for (const char *q = p; *q; q++) {
        if (*q == '\\') {
            if (q[1]) q++;
            quant = lazy = false;
        } else if (*q == '[') {
            const char *e = q + 1;
            if (*e == '^') e++;
            if (*e == ']') e++;
            while (*e && *e != ']')
                e += *e == '\\' && e[1] ? 2 : 1;
            if (!*e) {
                *what = "missing closing ]";
                return q;
            }
            q = e;
            quant = lazy = false;
        } else if (*q == '*' || *q == '+' || (*q == '{' && q[1] >= '0' && q[1] <= '9')) {
            if (quant) return q - (q > p ? 1 : 0);
            if (*q == '{')
                while (q[1] && *q != '}')
                    q++;
            quant = true;
            lazy = false;
        } else if (*q == '?') {
            if (quant && lazy) return q - 1;
            if (quant)
                lazy = true;
            else
                quant = true;
        } else {
            quant = lazy = false;
        }
    }
    return NULL;
}

/* What regcomp would make of POSIX ERE `re`, read as regcomp reads it
 * (inside brackets a backslash is literal and `]` closes): a repetition
 * stacked on another, or {m,n} bounds whose product passes 1000 (glibc
 * expands each level), is refused with why; NULL when fine. A check of the
 * pattern as its author wrote it can be misled by a difference between
 * the two syntaxes (`[a-z\\]+++`: an escaped `]` there, the end of the
 * class here); this one reads what is compiled. */
static const char *posix_costly(const char *re)
{
    double repeat = 1;
    bool quant = false;
    for (const char *q = re; *q; q++) {
        if (*q == '\\') {
            if (q[1]) q++;
            quant = false;
        } else if (*q == '[') {
            const char *e = q + 1;
            if (*e == '^') e++;
            if (*e == ']') e++;
            while (*e && *e != ']') {
                if (*e == '[' && (e[1] == ':' || e[1] == '.' || e[1] == '=')) {
                    const char *f = e + 2;
                    while (*f && !(f[0] == e[1] && f[1] == ']'))
                        f++;
                    if (!*f) return "missing closing ]";
                    e = f + 2;
                } else {
                    e++;
                }
            }
            if (!*e) return "missing closing ]";
            q = e;
            quant = false;
        } else if (*q == '*' || *q == '+' || *q == '?' ||
                   (*q == '{' && q[1] >= '0' && q[1] <= '9')) {
            if (quant) return "invalid nested repetition operator";
            if (*q == '{') {
                char *end;
                unsigned long a = strtoul(q + 1, &end, 10), b = a;
                if (*end == ',') b = strtoul(end + 1, &end, 10);
                repeat *= (double)(a > b ? a : b) + 1;
                if (repeat > 1000) return "repetition counts are too large";
                q = *end ? end : end - 1;
            }
            quant = true;
        } else {
            quant = false;
        }
    }
    return NULL;
}

static char *rewrite_pattern(const char *p, const char **why)
{
    size_t len = strlen(p);
    char *out = malloc(len * 12 + 1), *o = out;
    if (!out) {
        *why = "out of memory";
        return NULL;
    }
    bool br = false;
    double repeat = 1; /* product of the {m,n} bounds: glibc expands them */
    for (size_t i = 0; i < len; i++) {
        char ch = p[i];
        if (!br && (ch == '*' || ch == '+' || ch == '?' || ch == '}') &&
            (p[i + 1] == '*' || p[i + 1] == '+' || p[i + 1] == '?' || p[i + 1] == '{')) {
            free(out);
            *why = "invalid nested repetition operator"; /* RE2's words; glibc blows up */
            return NULL;
        }
        if (!br && ch == '{') {
            char *end;
            unsigned long a = strtoul(p + i + 1, &end, 10), b = a;
            if (*end == ',') b = strtoul(end + 1, &end, 10);
            repeat *= (double)(a > b ? a : b) + 1;
            if (repeat > 1000) {
                free(out);
                *why = "repetition counts are too large";
                return NULL;
            }
        }
        if (ch == '\\' && i + 1 < len) {
            char x = p[++i];
            const char *rep = NULL;
            if (x >= '1' && x <= '9') {
                free(out);
                *why = "back-references are not supported";
                return NULL;
            }
            if (!br) {
                switch (x) {
                case 'd':
                    rep = "[0-9]";
                    break;
                case 'D':
                    rep = "[^0-9]";
                    break;
                case 'w':
                    rep = "[A-Za-z0-9_]";
                    break;
                case 'W':
                    rep = "[^A-Za-z0-9_]";
                    break;
                case 's':
                    rep = "[[:space:]]";
                    break;
                case 'S':
                    rep = "[^[:space:]]";
                    break;
                default:
                    break;
                }
                if (rep) {
                    o += sprintf(o, "%s", rep);
                } else {
                    *o++ = '\\';
                    *o++ = x;
                }
            } else {
                switch (x) {
                case 'd':
                    rep = "0-9";
                    break;
                case 'w':
                    rep = "A-Za-z0-9_";
                    break;
                case 's':
                    rep = "[:space:]";
                    break;
                default:
                    break;
                }
                if (rep)
                    o += sprintf(o, "%s", rep);
                else if (x == ']' || x == '\\' || x == '^' || x == '-') {
                    *o++ = '\\';
                    *o++ = x;
                } else
                    *o++ = x;
            }
            continue;
        }
        if (!br && ch == '[') {
            br = true;
            *o++ = ch;
            if (p[i + 1] == '^') *o++ = p[++i];
            if (p[i + 1] == ']') *o++ = p[++i];
            continue;
        }
        if (br && ch == '[' && p[i + 1] == ':') { /* [:class:] */
            const char *end = strstr(p + i + 2, ":]");
            if (end) {
                size_t l = (size_t)(end + 2 - (p + i));
                memcpy(o, p + i, l);
                o += l;
                i += l - 1;
                continue;
            }
        }
        if (br && ch == ']') br = false;
        *o++ = ch;
    }
    *o = '\0';
    return out;
}

static const char *const FORBIDDEN_KEYS[][2] = {
    {"$ref", "$ref is not supported"},
    {"$schema", "$schema is not supported"},
    {"id", "id is not supported"},
    {"definitions", "definitions is not supported"},
    {"patternProperties", "patternProperties is not supported"},
    {"dependencies", "dependencies is not supported"},
    {"additionalItems", "additionalItems is not supported"},
};

static bool get_count(cctx *c, const json_t *j, const char *key, long long *out)
{
    *out = -1;
    const json_t *v = json_object_get(j, key);
    if (!v) return true;
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        fail(c, NULL, key, "Invalid value: must be a non-negative integer");
        return false;
    }
    *out = json_integer_value(v);
    return true;
}

static int validate_node(const js_node *n, const json_t *v, pbuf *path, unsigned depth,
                         js_errors *e);
static char *dump(const json_t *v);

enum { LVL_ROOT, LVL_PROP, LVL_ITEMS, LVL_ADDL, LVL_JUNCTOR };

static js_node *compile_node(cctx *c, const json_t *j, unsigned depth, int lvl);

static bool compile_list(cctx *c, const json_t *j, const char *key, js_node ***out, size_t *nout,
                         unsigned depth)
{
    const json_t *a = json_object_get(j, key);
    if (!a) return true;
    if (!json_is_array(a) || json_array_size(a) == 0) {
        fail(c, NULL, key, "Invalid value: must be a non-empty array of schemas");
        return false;
    }
    *out = calloc(json_array_size(a), sizeof **out);
    if (!*out) {
        fail(c, NULL, key, "out of memory");
        return false;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        size_t mark = pb_push(&c->path, ".%s[%zu]", key, i);
        js_node *sub = compile_node(c, json_array_get(a, i), depth + 1, LVL_JUNCTOR);
        pb_pop(&c->path, mark);
        if (!sub) return false;
        (*out)[(*nout)++] = sub;
    }
    return true;
}

static js_node *compile_node(cctx *c, const json_t *j, unsigned depth, int lvl)
{
    if (c->failed) return NULL;
    if (depth > JS_MAX_SCHEMA_DEPTH)
        return fail(c, NULL, NULL, "Forbidden: the schema is nested more than %u levels deep",
                    JS_MAX_SCHEMA_DEPTH);
    if (++c->nodes > JS_MAX_SCHEMA_NODES)
        return fail(c, NULL, NULL, "Forbidden: the schema has more than %u nodes",
                    JS_MAX_SCHEMA_NODES);
    if (!json_is_object(j)) return fail(c, NULL, NULL, "Invalid value: must be a schema object");
    js_node *n = calloc(1, sizeof *n);
    if (!n) return fail(c, NULL, NULL, "out of memory");
    n->min_len = n->max_len = n->min_items = n->max_items = n->min_props = n->max_props = -1;

    for (size_t i = 0; i < sizeof FORBIDDEN_KEYS / sizeof *FORBIDDEN_KEYS; i++)
        if (json_object_get(j, FORBIDDEN_KEYS[i][0]))
            return fail(c, n, FORBIDDEN_KEYS[i][0], "Forbidden: %s", FORBIDDEN_KEYS[i][1]);

    const json_t *v;
    if ((v = json_object_get(j, "x-kubernetes-preserve-unknown-fields"))) {
        if (!json_is_true(v))
            return fail(c, n, "x-kubernetes-preserve-unknown-fields",
                        "Invalid value: false: must be true or undefined");
        n->preserve = true;
    }
    n->int_or_string = json_is_true(json_object_get(j, "x-kubernetes-int-or-string"));
    n->embedded = json_is_true(json_object_get(j, "x-kubernetes-embedded-resource"));
    n->nullable = json_is_true(json_object_get(j, "nullable"));

    const char *type = "";
    if ((v = json_object_get(j, "type"))) {
        if (!json_is_string(v)) return fail(c, n, "type", "Invalid value: must be a string");
        type = json_string_value(v);
    }
    static const struct {
        const char *name;
        unsigned bit;
    } TYPES[] = {{"object", T_OBJECT},   {"array", T_ARRAY},   {"string", T_STRING},
                 {"integer", T_INTEGER}, {"number", T_NUMBER}, {"boolean", T_BOOLEAN}};
    if (*type) {
        for (size_t i = 0; i < sizeof TYPES / sizeof *TYPES; i++)
            if (!strcmp(type, TYPES[i].name)) n->types = TYPES[i].bit;
        if (!n->types)
            return fail(c, n, "type",
                        "Unsupported value: \"%.64s\": supported values: \"array\", \"boolean\", "
                        "\"integer\", \"number\", \"object\", \"string\"",
                        type);
    }
    if (lvl == LVL_ROOT && n->types != T_OBJECT)
        return fail(c, n, "type",
                    *type ? "Invalid value: \"%.64s\": must be object at the root"
                          : "Required value: must not be empty at the root%.0s",
                    type);
    if (n->int_or_string) {
        if (*type)
            return fail(c, n, "type",
                        "Invalid value: \"%.64s\": must be empty if x-kubernetes-int-or-string is "
                        "true",
                        type);
    } else if (!*type && !n->preserve && lvl != LVL_JUNCTOR) {
        return fail(c, n, "type", "Required value: must not be empty for specified %s",
                    lvl == LVL_ITEMS ? "array items" : "object fields");
    }
    if (n->embedded) {
        if (n->types != T_OBJECT)
            return fail(c, n, "type",
                        "Invalid value: \"%.64s\": must be object if "
                        "x-kubernetes-embedded-resource is true",
                        type);
        if (!n->preserve && !json_object_get(j, "properties"))
            return fail(c, n, "properties",
                        "Required value: must not be empty if x-kubernetes-embedded-resource is "
                        "true without x-kubernetes-preserve-unknown-fields");
    }
    if (json_is_true(json_object_get(j, "uniqueItems")))
        return fail(c, n, "uniqueItems",
                    "Forbidden: uniqueItems cannot be set to true since the runtime complexity "
                    "becomes quadratic");

    /* value validations */
    if ((v = json_object_get(j, "enum"))) {
        if (!json_is_array(v)) return fail(c, n, "enum", "Invalid value: must be an array");
        n->enumv = jcopy(v);
        if (!n->enumv) return fail(c, n, "enum", "out of memory");
    }
    struct {
        const char *key;
        json_t **dst;
    } nums[] = {
        {"minimum", &n->minimum}, {"maximum", &n->maximum}, {"multipleOf", &n->multiple_of}};
    for (size_t i = 0; i < 3; i++)
        if ((v = json_object_get(j, nums[i].key))) {
            if (!json_is_number(v))
                return fail(c, n, nums[i].key, "Invalid value: must be a number");
            if (i == 2 && json_number_value(v) <= 0)
                return fail(c, n, nums[i].key, "Invalid value: must be greater than zero");
            *nums[i].dst = json_incref((json_t *)v);
        }
    n->excl_min = json_is_true(json_object_get(j, "exclusiveMinimum"));
    n->excl_max = json_is_true(json_object_get(j, "exclusiveMaximum"));
    if (!get_count(c, j, "minLength", &n->min_len) || !get_count(c, j, "maxLength", &n->max_len) ||
        !get_count(c, j, "minItems", &n->min_items) ||
        !get_count(c, j, "maxItems", &n->max_items) ||
        !get_count(c, j, "minProperties", &n->min_props) ||
        !get_count(c, j, "maxProperties", &n->max_props)) {
        node_free(n);
        return NULL;
    }
    if ((v = json_object_get(j, "pattern"))) {
        if (!json_is_string(v)) return fail(c, n, "pattern", "Invalid value: must be a string");
        const char *p = json_string_value(v);
        if (json_string_length(v) > JS_MAX_PATTERN)
            return fail(c, n, "pattern", "Too long: may not be more than %u bytes", JS_MAX_PATTERN);
        const char *why = NULL, *what;
        const char *at = nested_repetition(p, &what);
        if (at)
            return fail(c, n, "pattern",
                        "Invalid value: \"%.200s\": error parsing regexp: %s: `%.*s`", p, what,
                        strcmp(what, "missing closing ]") ? 2 : 200, at);
        char *posix = rewrite_pattern(p, &why);
        if (!posix) return fail(c, n, "pattern", "Invalid value: \"%.200s\": %s", p, why);
        if ((why = posix_costly(posix))) {
            free(posix);
            return fail(c, n, "pattern", "Invalid value: \"%.200s\": %s", p, why);
        }
        int rc = regcomp(&n->re, posix, REG_EXTENDED | REG_NOSUB);
        free(posix);
        if (rc != 0) {
            char msg[128];
            regerror(rc, &n->re, msg, sizeof msg);
            return fail(c, n, "pattern", "Invalid value: \"%.200s\": %s", p, msg);
        }
        n->has_re = true;
        n->pattern = strdup(p);
        if (!n->pattern) return fail(c, n, "pattern", "out of memory");
    }
    if ((v = json_object_get(j, "format")) && json_is_string(v)) {
        const char *f = json_string_value(v);
        n->format = !strcmp(f, "date-time") ? F_DATETIME
                    : !strcmp(f, "date")    ? F_DATE
                    : !strcmp(f, "int32")   ? F_INT32
                    : !strcmp(f, "int64")   ? F_INT64
                    : !strcmp(f, "byte")    ? F_BYTE
                    : !strcmp(f, "uuid")    ? F_UUID
                                            : F_NONE;
    }

    /* object */
    const json_t *props = json_object_get(j, "properties");
    const json_t *addl = json_object_get(j, "additionalProperties");
    if (props && addl)
        return fail(c, n, "additionalProperties",
                    "Forbidden: additionalProperties and properties are mutual exclusive");
    if (props) {
        if (!json_is_object(props))
            return fail(c, n, "properties", "Invalid value: must be an object");
        size_t np = json_object_size(props);
        n->pnames = calloc(np ? np : 1, sizeof *n->pnames);
        n->props = calloc(np ? np : 1, sizeof *n->props);
        n->pindex = strmap_new();
        if (!n->pnames || !n->props || !n->pindex) return fail(c, n, NULL, "out of memory");
        const char *k;
        const json_t *pv;
        json_object_foreach((json_t *)props, k, pv)
        {
            size_t mark = pb_push(&c->path, ".properties[%s]", k);
            js_node *sub = compile_node(c, pv, depth + 1, LVL_PROP);
            pb_pop(&c->path, mark);
            if (!sub) {
                node_free(n);
                return NULL;
            }
            char *name = strdup(k);
            if (!name) {
                node_free(sub);
                return fail(c, n, NULL, "out of memory");
            }
            n->pnames[n->nprops] = name;
            n->props[n->nprops++] = sub;
            if (strmap_put(n->pindex, name, sub, NULL) < 0)
                return fail(c, n, NULL, "out of memory");
        }
    }
    if (addl) {
        if (json_is_false(addl))
            return fail(c, n, "additionalProperties",
                        "Forbidden: additionalProperties cannot be set to false");
        if (json_is_true(addl))
            n->addl_any = true;
        else {
            size_t mark = pb_push(&c->path, ".additionalProperties");
            n->addl = compile_node(c, addl, depth + 1, LVL_ADDL);
            pb_pop(&c->path, mark);
            if (!n->addl) {
                node_free(n);
                return NULL;
            }
        }
    }
    if ((v = json_object_get(j, "required"))) {
        if (!json_is_array(v)) return fail(c, n, "required", "Invalid value: must be an array");
        n->required = calloc(json_array_size(v) + 1, sizeof *n->required);
        if (!n->required) return fail(c, n, NULL, "out of memory");
        for (size_t i = 0; i < json_array_size(v); i++) {
            const json_t *r = json_array_get(v, i);
            if (!json_is_string(r)) return fail(c, n, "required", "Invalid value: must be strings");
            if (!(n->required[n->nreq++] = strdup(json_string_value(r))))
                return fail(c, n, NULL, "out of memory");
        }
    }
    /* array */
    if ((v = json_object_get(j, "items"))) {
        if (json_is_array(v))
            return fail(c, n, "items", "Forbidden: items must be a schema object and not an array");
        size_t mark = pb_push(&c->path, ".items");
        n->items = compile_node(c, v, depth + 1, LVL_ITEMS);
        pb_pop(&c->path, mark);
        if (!n->items) {
            node_free(n);
            return NULL;
        }
    } else if (n->types == T_ARRAY && lvl != LVL_JUNCTOR) {
        return fail(c, n, "items", "Required value: must be specified");
    }
    /* junctors: value validations only */
    if (!compile_list(c, j, "allOf", &n->all_of, &n->nall, depth) ||
        !compile_list(c, j, "anyOf", &n->any_of, &n->nany, depth) ||
        !compile_list(c, j, "oneOf", &n->one_of, &n->none, depth)) {
        node_free(n);
        return NULL;
    }
    if ((v = json_object_get(j, "not"))) {
        size_t mark = pb_push(&c->path, ".not");
        n->not_ = compile_node(c, v, depth + 1, LVL_JUNCTOR);
        pb_pop(&c->path, mark);
        if (!n->not_) {
            node_free(n);
            return NULL;
        }
    }

    /* the default must validate against its own node */
    if ((v = json_object_get(j, "default"))) {
        if (lvl == LVL_ROOT) return fail(c, n, "default", "Forbidden: must not be set at the root");
        js_errors e = {0};
        pbuf p = {0};
        pb_push(&p, "default");
        validate_node(n, v, &p, 1, &e);
        free(p.p);
        if (e.n) {
            char msg[400];
            char *val = e.v[0].value ? dump(e.v[0].value) : NULL;
            snprintf(msg, sizeof msg, "%.100s%s%.290s", val ? val : "", val ? ": " : "",
                     e.v[0].detail ? e.v[0].detail : "Required value");
            free(val);
            js_errors_free(&e);
            return fail(c, n, "default", "Invalid value: %s", msg);
        }
        js_errors_free(&e);
        n->def = jcopy(v);
        if (!n->def) return fail(c, n, "default", "out of memory");
        c->defaults = true;
    }
    if (c->path.oom) return fail(c, n, NULL, "out of memory");
    return n;
}

js_schema *js_compile(const json_t *schema, char *err, size_t n)
{
    cctx c = {.err = err, .n = n};
    if (err && n) err[0] = '\0';
    pb_push(&c.path, "openAPIV3Schema");
    js_node *root = compile_node(&c, schema, 0, LVL_ROOT);
    free(c.path.p);
    if (!root) return NULL;
    js_schema *s = malloc(sizeof *s);
    if (!s) {
        node_free(root);
        if (err && n) snprintf(err, n, "out of memory");
        return NULL;
    }
    s->root = root;
    s->has_defaults = c.defaults;
    return s;
}

bool js_has_defaults(const js_schema *s)
{
    return s && s->has_defaults;
}

/* ---------------------------------------------------------------- default */

static bool nonnullable_null(const json_t *v, const js_node *n)
{
    return json_is_null(v) && !n->nullable;
}

static int default_node(const js_node *n, json_t *v, unsigned depth)
{
    if (depth > JS_MAX_DEPTH || !n) return 0;
    int count = 0;
    if (json_is_object(v)) {
        for (size_t i = 0; i < n->nprops; i++) {
            const js_node *p = n->props[i];
            json_t *cur = json_object_get(v, n->pnames[i]);
            if (p->def && (!cur || nonnullable_null(cur, p))) {
                json_t *copy = jcopy(p->def);
                if (!copy || json_object_set_new(v, n->pnames[i], copy) < 0) return -1;
                count++;
            }
        }
        const char *k;
        json_t *cv;
        json_object_foreach(v, k, cv)
        {
            const js_node *p = n->pindex ? strmap_get(n->pindex, k) : n->addl;
            int r = p ? default_node(p, cv, depth + 1) : 0;
            if (r < 0) return -1;
            count += r;
        }
    } else if (json_is_array(v) && n->items) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            int r = default_node(n->items, json_array_get(v, i), depth + 1);
            if (r < 0) return -1;
            count += r;
        }
    }
    return count;
}

int js_default(const js_schema *s, json_t *obj)
{
    return s ? default_node(s->root, obj, 0) : 0;
}

/* ---------------------------------------------------------------- prune */

static int prune_node(const js_node *n, json_t *v, bool keep_meta, pbuf *path, json_t *pruned,
                      unsigned depth)
{
    if (depth > JS_MAX_DEPTH) return 0;
    int count = 0;
    if (json_is_object(v)) {
        if (n->embedded) keep_meta = true;
        const char *k;
        json_t *cv;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, cv)
        {
            if (keep_meta &&
                (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")))
                continue;
            const js_node *p = n->pindex ? strmap_get(n->pindex, k) : n->addl;
            size_t mark = pb_field(path, k);
            if (p) {
                int r = prune_node(p, cv, false, path, pruned, depth + 1);
                if (r < 0) return -1;
                count += r;
            } else if (!n->preserve && !n->addl_any) {
                if (pruned && json_array_append_new(pruned, json_string(pb_str(path))) < 0)
                    return -1;
                if (json_object_del(v, k) < 0) return -1;
                count++;
            }
            pb_pop(path, mark);
        }
    } else if (json_is_array(v) && n->items) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            size_t mark = pb_push(path, "[%zu]", i);
            int r = prune_node(n->items, json_array_get(v, i), false, path, pruned, depth + 1);
            pb_pop(path, mark);
            if (r < 0) return -1;
            count += r;
        }
    }
    return path->oom ? -1 : count;
}

int js_prune(const js_schema *s, json_t *obj, json_t *pruned)
{
    if (!s) return 0;
    pbuf p = {0};
    int r = prune_node(s->root, obj, true, &p, json_is_array(pruned) ? pruned : NULL, 0);
    free(p.p);
    return r;
}

/* ---------------------------------------------------------------- validate */

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "integer";
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "boolean";
    default:
        return "null";
    }
}

static bool type_ok(const js_node *n, const json_t *v)
{
    if (n->int_or_string) return json_is_string(v) || is_integral(v);
    switch (n->types) {
    case 0:
        return true;
    case T_OBJECT:
        return json_is_object(v);
    case T_ARRAY:
        return json_is_array(v);
    case T_STRING:
        return json_is_string(v);
    case T_INTEGER:
        return is_integral(v);
    case T_NUMBER:
        return json_is_number(v);
    case T_BOOLEAN:
        return json_is_boolean(v);
    default:
        return false;
    }
}

static const char *node_type(const js_node *n)
{
    if (n->int_or_string) return "integer,string";
    switch (n->types) {
    case T_OBJECT:
        return "object";
    case T_ARRAY:
        return "array";
    case T_STRING:
        return "string";
    case T_INTEGER:
        return "integer";
    case T_NUMBER:
        return "number";
    case T_BOOLEAN:
        return "boolean";
    default:
        return "";
    }
}

static bool enum_has(const json_t *en, const json_t *v)
{
    for (size_t i = 0; i < json_array_size(en); i++) {
        const json_t *e = json_array_get(en, i);
        if (json_is_number(e) && json_is_number(v) ? num_cmp(e, v) == 0 : json_equal(e, v))
            return true;
    }
    return false;
}

static size_t runes(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) n++;
    return n;
}

static bool is_base64(const char *s, size_t len)
{
    if (len % 4) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        bool pad = ch == '=' && i >= len - 2 && (i == len - 1 || s[len - 1] == '=');
        if (!(pad || (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
              (ch >= '0' && ch <= '9') || ch == '+' || ch == '/'))
            return false;
    }
    return true;
}

static bool is_uuid(const char *s, size_t len)
{
    if (len != 36) return false;
    for (size_t i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        char ch = s[i];
        if (dash ? ch != '-'
                 : !((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') ||
                     (ch >= 'A' && ch <= 'F')))
            return false;
    }
    return true;
}

static bool format_ok(int f, const json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        int64_t sec, nsec;
        switch (f) {
        case F_DATETIME:
            return strlen(s) == len && rfc3339_parse(s, &sec, &nsec);
        case F_DATE: {
            char buf[40];
            if (len != 10) return false;
            snprintf(buf, sizeof buf, "%sT00:00:00Z", s);
            return rfc3339_parse(buf, &sec, &nsec);
        }
        case F_BYTE:
            return is_base64(s, len);
        case F_UUID:
            return is_uuid(s, len);
        default:
            return true;
        }
    }
    if (json_is_number(v) && (f == F_INT32 || f == F_INT64)) {
        if (!is_integral(v)) return true; /* the type check reports it */
        double d = json_number_value(v);
        if (f == F_INT32) return d >= -2147483648.0 && d <= 2147483647.0;
        return json_is_integer(v) || (d >= -9223372036854775808.0 && d < 9223372036854775808.0);
    }
    return true;
}

static const char *format_name(int f)
{
    static const char *const names[] = {"", "date-time", "date", "int32", "int64", "byte", "uuid"};
    return names[f];
}

static char *dump(const json_t *v)
{
    if (json_is_string(v)) {
        /* strconv.Quote-like: JSON escaping is close enough */
        return json_dumps(v, JSON_ENCODE_ANY);
    }
    if (json_is_number(v)) {
        char buf[64];
        fmt_num(v, buf, sizeof buf);
        return strdup(buf);
    }
    return jdump(v, NULL);
}

/* the value's text in go-openapi's %q of a format error */
static void validate_object(const js_node *n, const json_t *v, pbuf *path, unsigned depth,
                            js_errors *e);

static int validate_node(const js_node *n, const json_t *v, pbuf *path, unsigned depth,
                         js_errors *e)
{
    size_t before = e->n;
    const char *f = pb_str(path);
    if (depth > JS_MAX_DEPTH) {
        add_err(e, JS_FORBIDDEN, f, NULL, "nesting deeper than %u levels", JS_MAX_DEPTH);
        return (int)(e->n - before);
    }
    if (json_is_null(v)) {
        if (n->nullable || (!n->types && !n->int_or_string)) return 0;
        add_err(e, JS_TYPE_INVALID, f, json_string("null"),
                "%s in body must be of type %s: \"null\"", f, node_type(n));
        return (int)(e->n - before);
    }
    if (!type_ok(n, v)) {
        add_err(e, JS_TYPE_INVALID, f, json_string(type_name(v)),
                "%s in body must be of type %s: \"%s\"", f, node_type(n), type_name(v));
        return (int)(e->n - before);
    }
    if (n->enumv && !enum_has(n->enumv, v)) {
        size_t cap = 64, len = 0;
        char *list = malloc(cap);
        for (size_t i = 0; list && i < json_array_size(n->enumv) && len < 4096; i++) {
            char *s = dump(json_array_get(n->enumv, i));
            if (!s) continue;
            size_t need = len + strlen(s) + 3;
            if (need > cap) {
                char *nl = realloc(list, need * 2);
                if (!nl) {
                    free(s);
                    break;
                }
                list = nl;
                cap = need * 2;
            }
            len += (size_t)sprintf(list + len, "%s%s", i ? ", " : "", s);
            free(s);
        }
        add_err(e, JS_NOT_SUPPORTED, f, jcopy(v), "supported values: %s", list ? list : "");
        free(list);
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v), r = runes(s, len);
        if (n->max_len >= 0 && r > (size_t)n->max_len)
            add_err(e, JS_TOO_LONG, f, jcopy(v), "may not be more than %lld bytes", n->max_len);
        if (n->min_len >= 0 && r < (size_t)n->min_len)
            add_err(e, JS_INVALID, f, jcopy(v), "%s in body should be at least %lld chars long", f,
                    n->min_len);
        if (n->has_re &&
            (len > JS_MAX_MATCH || strlen(s) != len || regexec(&n->re, s, 0, NULL, 0) != 0))
            add_err(e, JS_INVALID, f, jcopy(v), "%s in body should match '%s'", f, n->pattern);
    }
    if (n->format && !format_ok(n->format, v)) {
        char *s = json_is_string(v) ? strdup(json_string_value(v)) : dump(v);
        json_t *q = json_string(s ? s : "");
        char *qs = q ? json_dumps(q, JSON_ENCODE_ANY) : NULL;
        add_err(e, JS_TYPE_INVALID, f, jcopy(v), "%s in body must be of type %s: %s", f,
                format_name(n->format), qs ? qs : "\"\"");
        free(qs);
        json_decref(q);
        free(s);
    }
    if (json_is_number(v)) {
        char b[64];
        if (n->minimum) {
            int c = num_cmp(v, n->minimum);
            if (c < 0 || (c == 0 && n->excl_min)) {
                gofloat(json_number_value(n->minimum), b, sizeof b);
                add_err(e, JS_INVALID, f, jcopy(v), "%s in body should be greater than %s%s", f,
                        n->excl_min ? "" : "or equal to ", b);
            }
        }
        if (n->maximum) {
            int c = num_cmp(v, n->maximum);
            if (c > 0 || (c == 0 && n->excl_max)) {
                gofloat(json_number_value(n->maximum), b, sizeof b);
                add_err(e, JS_INVALID, f, jcopy(v), "%s in body should be less than %s%s", f,
                        n->excl_max ? "" : "or equal to ", b);
            }
        }
        if (n->multiple_of) {
            bool ok;
            if (json_is_integer(v) && json_is_integer(n->multiple_of))
                ok = json_integer_value(v) % json_integer_value(n->multiple_of) == 0;
            else {
                double q = json_number_value(v) / json_number_value(n->multiple_of);
                ok = isfinite(q) && q == floor(q);
            }
            if (!ok) {
                gofloat(json_number_value(n->multiple_of), b, sizeof b);
                add_err(e, JS_INVALID, f, jcopy(v), "%s in body should be a multiple of %s", f, b);
            }
        }
    }
    if (json_is_array(v)) {
        size_t sz = json_array_size(v);
        if (n->max_items >= 0 && sz > (size_t)n->max_items)
            add_err(e, JS_TOO_MANY, f, json_integer((json_int_t)sz), "must have at most %lld items",
                    n->max_items);
        if (n->min_items >= 0 && sz < (size_t)n->min_items)
            add_err(e, JS_INVALID, f, jcopy(v), "%s in body should have at least %lld items", f,
                    n->min_items);
        if (n->items)
            for (size_t i = 0; i < sz && !e->truncated; i++) {
                size_t mark = pb_push(path, "[%zu]", i);
                validate_node(n->items, json_array_get(v, i), path, depth + 1, e);
                pb_pop(path, mark);
                f = pb_str(path);
            }
    }
    if (json_is_object(v)) validate_object(n, v, path, depth, e);
    f = pb_str(path);

    /* junctors: errors of the branches are not reported, the junctor's is */
    if (n->nall || n->nany || n->none || n->not_) {
        js_errors sub = {0};
        bool ok = true;
        for (size_t i = 0; i < n->nall && ok; i++)
            ok = validate_node(n->all_of[i], v, path, depth + 1, &sub) == 0;
        if (!ok)
            add_err(e, JS_INVALID, f, jcopy(v), "%s in body must validate all the schemas (allOf)",
                    f);
        js_errors_free(&sub);
        ok = n->nany == 0;
        for (size_t i = 0; i < n->nany && !ok; i++) {
            ok = validate_node(n->any_of[i], v, path, depth + 1, &sub) == 0;
            js_errors_free(&sub);
        }
        if (!ok)
            add_err(e, JS_INVALID, f, jcopy(v),
                    "%s in body must validate at least one schema (anyOf)", f);
        size_t matched = 0;
        for (size_t i = 0; i < n->none; i++) {
            matched += validate_node(n->one_of[i], v, path, depth + 1, &sub) == 0;
            js_errors_free(&sub);
        }
        if (n->none && matched != 1)
            add_err(e, JS_INVALID, f, jcopy(v),
                    "%s in body must validate one and only one schema (oneOf)", f);
        if (n->not_ && validate_node(n->not_, v, path, depth + 1, &sub) == 0)
            add_err(e, JS_INVALID, f, jcopy(v), "%s in body must not validate the schema (not)", f);
        js_errors_free(&sub);
    }
    if (path->oom) e->truncated = true;
    return (int)(e->n - before);
}

static void validate_object(const js_node *n, const json_t *v, pbuf *path, unsigned depth,
                            js_errors *e)
{
    size_t sz = json_object_size(v);
    const char *f = pb_str(path);
    if (n->max_props >= 0 && sz > (size_t)n->max_props)
        add_err(e, JS_TOO_MANY, f, json_integer((json_int_t)sz), "must have at most %lld items",
                n->max_props);
    if (n->min_props >= 0 && sz < (size_t)n->min_props)
        add_err(e, JS_INVALID, f, jcopy(v), "%s in body should have at least %lld properties", f,
                n->min_props);
    for (size_t i = 0; i < n->nreq; i++)
        if (!json_object_get(v, n->required[i])) {
            size_t mark = pb_field(path, n->required[i]);
            add_err(e, JS_REQUIRED, pb_str(path), NULL, NULL);
            pb_pop(path, mark);
        }
    bool root = depth == 0;
    const char *k;
    json_t *cv;
    json_object_foreach((json_t *)v, k, cv)
    {
        if (e->truncated) break;
        if (root && (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")))
            continue;
        const js_node *p = n->pindex ? strmap_get(n->pindex, k) : n->addl;
        if (!p) continue;
        size_t mark = pb_field(path, k);
        validate_node(p, cv, path, depth + 1, e);
        pb_pop(path, mark);
    }
}

int js_validate(const js_schema *s, const json_t *obj, js_errors *errs)
{
    if (!s || !errs) return 0;
    pbuf p = {0};
    int r = validate_node(s->root, obj, &p, 0, errs);
    free(p.p);
    return r;
}
