/* selector.c - label and field selectors (see selector.h).
 *
 * The label parser is a faithful port of labels.Parse's lexer and
 * recursive-descent parser, including its quirks ("x in (,a)" is {"", a},
 * "!x=a" fails after the requirement, 'in'/'notin' are plain identifiers in
 * value position), because clients see its error texts verbatim.
 * Invariant: a finished sel_t has its requirements sorted by key (stable),
 * and label-string requirements have sorted, de-duplicated values.
 */
#include "core/selector.h"

#include "core/names.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum sel_kind { KIND_LABELS, KIND_FIELDS };

struct req {
    char *key;
    sel_op op;
    char **vals;
    size_t nvals;
};

struct sel {
    enum sel_kind kind;
    bool nothing;
    struct req *reqs;
    size_t n, cap;
};

/* ---- small helpers ---- */

static char *xstrndup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

__attribute__((format(printf, 3, 4))) static void seterr(char *buf, size_t n, const char *fmt, ...)
{
    if (!buf || n == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

/* A growable string; `oom` latches so callers check once at the end. */
typedef struct {
    char *s;
    size_t len, cap;
    bool oom;
} sbuf;

static void sb_addn(sbuf *b, const char *s, size_t n)
{
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 64;
        while (nc < b->len + n + 1)
            nc *= 2;
        char *p = realloc(b->s, nc);
        if (!p) {
            b->oom = true;
            return;
        }
        b->s = p;
        b->cap = nc;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void sb_add(sbuf *b, const char *s)
{
    sb_addn(b, s, strlen(s));
}

static void sb_quote(sbuf *b, const char *s)
{
    size_t n = strlen(s) * 4 + 3;
    char *q = malloc(n);
    if (!q) {
        b->oom = true;
        return;
    }
    sb_add(b, name_go_quote(s, q, n));
    free(q);
}

/* Detach the string (never NULL unless out of memory). */
static char *sb_take(sbuf *b)
{
    if (b->oom) {
        free(b->s);
        return NULL;
    }
    if (!b->s) return calloc(1, 1);
    return b->s;
}

/* ---- the selector object ---- */

static sel_t *sel_new(enum sel_kind kind)
{
    sel_t *s = calloc(1, sizeof *s);
    if (s) s->kind = kind;
    return s;
}

static void req_clear(struct req *r)
{
    free(r->key);
    for (size_t i = 0; i < r->nvals; i++)
        free(r->vals[i]);
    free(r->vals);
}

void sel_free(sel_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n; i++)
        req_clear(&s->reqs[i]);
    free(s->reqs);
    free(s);
}

/* Takes ownership of r's strings, also on failure. */
static int sel_push(sel_t *s, struct req *r)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4;
        struct req *p = realloc(s->reqs, nc * sizeof *p);
        if (!p) {
            req_clear(r);
            return -1;
        }
        s->reqs = p;
        s->cap = nc;
    }
    s->reqs[s->n++] = *r;
    return 0;
}

/* Stable insertion sort by key (upstream: sort.Sort(ByKey)). */
static void sel_sort(sel_t *s)
{
    for (size_t i = 1; i < s->n; i++) {
        struct req r = s->reqs[i];
        size_t j = i;
        while (j > 0 && strcmp(s->reqs[j - 1].key, r.key) > 0) {
            s->reqs[j] = s->reqs[j - 1];
            j--;
        }
        s->reqs[j] = r;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- a string set (sets.String: sorted, unique) ---- */

typedef struct {
    char **v;
    size_t n, cap;
} strset;

static int set_insert(strset *s, const char *str, size_t len)
{
    char *d = xstrndup(str, len);
    if (!d) return -1;
    size_t i = 0;
    while (i < s->n && strcmp(s->v[i], d) < 0)
        i++;
    if (i < s->n && strcmp(s->v[i], d) == 0) {
        free(d);
        return 0;
    }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4;
        char **p = realloc(s->v, nc * sizeof *p);
        if (!p) {
            free(d);
            return -1;
        }
        s->v = p;
        s->cap = nc;
    }
    memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof *s->v);
    s->v[i] = d;
    s->n++;
    return 0;
}

static void set_free(strset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* ---- NewRequirement: validation with an aggregated error ---- */

/* utilerrors.Aggregate: distinct messages; one prints bare, several as
 * "[a, b]". Field errors here have no path root, hence "values[0][k]". */
typedef struct {
    sbuf out;
    int count;
    char **seen;
} agg;

static void agg_add(agg *a, const char *msg)
{
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->seen[i], msg) == 0) return;
    char **p = realloc(a->seen, (size_t)(a->count + 1) * sizeof *p);
    char *d = xstrndup(msg, strlen(msg));
    if (!p || !d) {
        free(d);
        if (p) a->seen = p;
        a->out.oom = true;
        return;
    }
    a->seen = p;
    a->seen[a->count++] = d;
}

static void agg_done(agg *a, char *errbuf, size_t n)
{
    if (a->count == 1) {
        seterr(errbuf, n, "%s", a->seen[0]);
    } else if (a->count > 1) {
        sbuf b = {0};
        sb_add(&b, "[");
        for (int i = 0; i < a->count; i++) {
            if (i) sb_add(&b, ", ");
            sb_add(&b, a->seen[i]);
        }
        sb_add(&b, "]");
        seterr(errbuf, n, "%s", b.oom ? "out of memory" : b.s);
        free(b.s);
    }
    for (int i = 0; i < a->count; i++)
        free(a->seen[i]);
    free(a->seen);
    free(a->out.s);
}

/* Go's %#v of a []string; `nil` distinguishes []string(nil). */
static void go_string_slice(sbuf *b, char *const *v, size_t n, bool nil)
{
    if (nil) {
        sb_add(b, "[]string(nil)");
        return;
    }
    sb_add(b, "[]string{");
    for (size_t i = 0; i < n; i++) {
        if (i) sb_add(b, ", ");
        sb_quote(b, v[i]);
    }
    sb_add(b, "}");
}

static void add_invalid(agg *a, const char *path, const char *quoted_or_raw, const char *detail)
{
    sbuf b = {0};
    sb_add(&b, path);
    sb_add(&b, ": Invalid value: ");
    sb_add(&b, quoted_or_raw);
    sb_add(&b, ": ");
    sb_add(&b, detail);
    if (b.oom)
        a->out.oom = true;
    else
        agg_add(a, b.s);
    free(b.s);
}

static void add_invalid_str(agg *a, const char *path, const char *value, const char *detail)
{
    sbuf q = {0};
    sb_quote(&q, value);
    add_invalid(a, path, q.oom ? "" : q.s, detail);
    free(q.s);
}

static void add_invalid_vals(agg *a, char *const *v, size_t n, const char *detail)
{
    sbuf q = {0};
    go_string_slice(&q, v, n, n == 0);
    add_invalid(a, "values", q.oom ? "" : q.s, detail);
    free(q.s);
}

static void check_label_key(agg *a, const char *path, const char *key)
{
    name_msgs m = {0};
    if (name_qualified(key, &m)) {
        char joined[NAME_MSGS_MAX * (NAME_MSG_LEN + 2)];
        name_msgs_join(&m, "; ", joined, sizeof joined);
        add_invalid_str(a, path, key, joined);
    }
}

/* Returns 0 if valid, else -1 with the aggregate in errbuf. Does not take
 * ownership of anything. */
static int new_requirement(const char *key, sel_op op, char *const *vals, size_t nvals,
                           char *errbuf, size_t n)
{
    agg a = {0};
    check_label_key(&a, "key", key);
    switch (op) {
    case SEL_IN:
    case SEL_NOT_IN:
        if (nvals == 0)
            add_invalid_vals(&a, vals, nvals,
                             "for 'in', 'notin' operators, values set can't be empty");
        break;
    case SEL_EQUALS:
    case SEL_DOUBLE_EQUALS:
    case SEL_NOT_EQUALS:
        if (nvals != 1)
            add_invalid_vals(&a, vals, nvals,
                             "exact-match compatibility requires one single value");
        break;
    case SEL_EXISTS:
    case SEL_DOES_NOT_EXIST:
        if (nvals != 0)
            add_invalid_vals(&a, vals, nvals,
                             "values set must be empty for exists and does not exist");
        break;
    case SEL_GT:
    case SEL_LT:
        if (nvals != 1)
            add_invalid_vals(&a, vals, nvals,
                             "for 'Gt', 'Lt' operators, exactly one value is required");
        for (size_t i = 0; i < nvals; i++) {
            long long dummy;
            char path[32];
            if (name_parse_int64(vals[i], &dummy)) continue;
            snprintf(path, sizeof path, "values[%zu]", i);
            add_invalid_str(&a, path, vals[i],
                            "for 'Gt', 'Lt' operators, the value must be an integer");
        }
        break;
    }
    for (size_t i = 0; i < nvals; i++) {
        name_msgs m = {0};
        if (!name_label_value(vals[i], &m)) continue;
        char joined[NAME_MSGS_MAX * (NAME_MSG_LEN + 2)];
        name_msgs_join(&m, "; ", joined, sizeof joined);
        sbuf path = {0};
        char idx[32];
        snprintf(idx, sizeof idx, "values[%zu][", i);
        sb_add(&path, idx);
        sb_add(&path, key);
        sb_add(&path, "]");
        add_invalid_str(&a, path.oom ? "values" : path.s, vals[i], joined);
        free(path.s);
    }
    int bad = a.count > 0 || a.out.oom;
    if (a.out.oom && a.count == 0) seterr(errbuf, n, "out of memory");
    agg_done(&a, errbuf, n);
    return bad ? -1 : 0;
}

/* ---- label selector lexer (labels.Lexer) ---- */

enum tok {
    T_ERROR,
    T_EOS,
    T_CPAR,
    T_COMMA,
    T_NOT,
    T_DEQ,
    T_EQ,
    T_GT,
    T_ID,
    T_IN,
    T_LT,
    T_NEQ,
    T_NOTIN,
    T_OPAR,
};

struct item {
    enum tok t;
    char *lit;
};

static const struct {
    const char *s;
    enum tok t;
} string2token[] = {
    {")", T_CPAR}, {",", T_COMMA}, {"!", T_NOT},  {"==", T_DEQ},      {"=", T_EQ},   {">", T_GT},
    {"in", T_IN},  {"<", T_LT},    {"!=", T_NEQ}, {"notin", T_NOTIN}, {"(", T_OPAR},
};

static enum tok lookup_token(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof string2token / sizeof string2token[0]; i++)
        if (strlen(string2token[i].s) == n && memcmp(string2token[i].s, s, n) == 0)
            return string2token[i].t;
    return T_ERROR;
}

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
    return strchr("=!(),><", c) != NULL && c != '\0';
}

/* One token starting at *pos; lit is malloc'd (NULL on OOM). */
static struct item lex(const char *s, size_t *pos)
{
    struct item it = {T_EOS, NULL};
    while (is_ws(s[*pos]))
        (*pos)++;
    size_t start = *pos;
    if (s[start] == '\0') {
        it.lit = xstrndup("", 0);
    } else if (is_special(s[start])) {
        /* Longest special-symbol run that is still a token. */
        size_t len = 0;
        enum tok last = T_ERROR;
        size_t last_len = 0;
        while (is_special(s[start + len])) {
            len++;
            enum tok t = lookup_token(s + start, len);
            if (t != T_ERROR) {
                last = t;
                last_len = len;
            } else if (last != T_ERROR) {
                break;
            }
        }
        if (last == T_ERROR) {
            /* Unreachable with today's token table (every single special
             * character is a token); kept for parity with upstream. */
            it.t = T_ERROR;
            it.lit = xstrndup(s + start, len);
            *pos = start + len;
        } else {
            it.t = last;
            it.lit = xstrndup(s + start, last_len);
            *pos = start + last_len;
        }
    } else {
        size_t len = 0;
        while (s[start + len] && !is_special(s[start + len]) && !is_ws(s[start + len]))
            len++;
        it.lit = xstrndup(s + start, len);
        it.t = lookup_token(s + start, len) == T_ERROR ? T_ID : lookup_token(s + start, len);
        *pos = start + len;
    }
    return it;
}

/* ---- label selector parser (labels.Parser) ---- */

enum ctx { CTX_KEY_AND_OP, CTX_VALUES };

struct parser {
    struct item *items;
    size_t n, pos;
    char *err; /* errbuf of the caller */
    size_t errn;
};

static enum tok ctx_tok(enum tok t, enum ctx c)
{
    if (c == CTX_VALUES && (t == T_IN || t == T_NOTIN)) return T_ID;
    return t;
}

static enum tok lookahead(struct parser *p, enum ctx c, const char **lit)
{
    struct item *it = &p->items[p->pos];
    if (lit) *lit = it->lit;
    return ctx_tok(it->t, c);
}

static enum tok consume(struct parser *p, enum ctx c, const char **lit)
{
    enum tok t = lookahead(p, c, lit);
    if (p->pos + 1 < p->n) p->pos++; /* never step past the EOS item */
    return t;
}

static int scan_all(struct parser *p, const char *s)
{
    size_t pos = 0, cap = 0;
    for (;;) {
        if (p->n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            struct item *it = realloc(p->items, nc * sizeof *it);
            if (!it) return -1;
            p->items = it;
            cap = nc;
        }
        struct item it = lex(s, &pos);
        if (!it.lit) return -1;
        p->items[p->n++] = it;
        if (it.t == T_EOS) return 0;
    }
}

static int perr(struct parser *p, const char *fmt, const char *lit)
{
    seterr(p->err, p->errn, fmt, lit);
    return -1;
}

static int parse_identifiers_list(struct parser *p, strset *set)
{
    for (;;) {
        const char *lit, *lit2;
        enum tok t = consume(p, CTX_VALUES, &lit);
        if (t == T_ID) {
            if (set_insert(set, lit, strlen(lit))) return perr(p, "%s", "out of memory");
            enum tok t2 = lookahead(p, CTX_VALUES, &lit2);
            if (t2 == T_COMMA) continue;
            if (t2 == T_CPAR) return 0;
            return perr(p, "found '%s', expected: ',' or ')'", lit2);
        } else if (t == T_COMMA) {
            if (set->n == 0 && set_insert(set, "", 0)) return perr(p, "%s", "out of memory");
            enum tok t2 = lookahead(p, CTX_VALUES, NULL);
            if (t2 == T_CPAR) {
                if (set_insert(set, "", 0)) return perr(p, "%s", "out of memory");
                return 0;
            }
            if (t2 == T_COMMA && set_insert(set, "", 0)) return perr(p, "%s", "out of memory");
        } else {
            return perr(p, "found '%s', expected: ',', or identifier", lit);
        }
    }
}

static int parse_values(struct parser *p, strset *set)
{
    const char *lit;
    if (consume(p, CTX_VALUES, &lit) != T_OPAR) return perr(p, "found '%s' expected: '('", lit);
    enum tok t = lookahead(p, CTX_VALUES, &lit);
    if (t == T_ID || t == T_COMMA) {
        if (parse_identifiers_list(p, set)) return -1;
        /* parse_identifiers_list only succeeds in front of ')' */
        if (consume(p, CTX_VALUES, NULL) != T_CPAR)
            return perr(p, "found '%s', expected: ')'", lit);
        return 0;
    }
    if (t == T_CPAR) {
        consume(p, CTX_VALUES, NULL);
        return set_insert(set, "", 0) ? perr(p, "%s", "out of memory") : 0;
    }
    return perr(p, "found '%s', expected: ',', ')' or identifier", lit);
}

static int parse_exact_value(struct parser *p, strset *set)
{
    const char *lit;
    enum tok t = lookahead(p, CTX_VALUES, NULL);
    if (t == T_EOS || t == T_COMMA)
        return set_insert(set, "", 0) ? perr(p, "%s", "out of memory") : 0;
    if (consume(p, CTX_VALUES, &lit) == T_ID)
        return set_insert(set, lit, strlen(lit)) ? perr(p, "%s", "out of memory") : 0;
    return perr(p, "found '%s', expected: identifier", lit);
}

static int parse_operator(struct parser *p, sel_op *op)
{
    const char *lit;
    switch (consume(p, CTX_KEY_AND_OP, &lit)) {
    case T_IN:
        *op = SEL_IN;
        return 0;
    case T_EQ:
        *op = SEL_EQUALS;
        return 0;
    case T_DEQ:
        *op = SEL_DOUBLE_EQUALS;
        return 0;
    case T_GT:
        *op = SEL_GT;
        return 0;
    case T_LT:
        *op = SEL_LT;
        return 0;
    case T_NOTIN:
        *op = SEL_NOT_IN;
        return 0;
    case T_NEQ:
        *op = SEL_NOT_EQUALS;
        return 0;
    default:
        return perr(p, "found '%s', expected: in, notin, =, ==, !=, gt, lt", lit);
    }
}

/* parseKeyAndInferOperator; *op = -1 when an operator must follow. */
static int parse_key(struct parser *p, const char **key, int *op)
{
    const char *lit;
    enum tok t = consume(p, CTX_VALUES, &lit);
    *op = -1;
    if (t == T_NOT) {
        *op = SEL_DOES_NOT_EXIST;
        t = consume(p, CTX_VALUES, &lit);
    }
    if (t != T_ID) return perr(p, "found '%s', expected: identifier", lit);
    agg a = {0};
    check_label_key(&a, "<nil>", lit);
    if (a.count) {
        agg_done(&a, p->err, p->errn);
        return -1;
    }
    agg_done(&a, NULL, 0);
    enum tok next = lookahead(p, CTX_VALUES, NULL);
    if ((next == T_EOS || next == T_COMMA) && *op != SEL_DOES_NOT_EXIST) *op = SEL_EXISTS;
    *key = lit;
    return 0;
}

static int parse_requirement(struct parser *p, sel_t *s)
{
    const char *key;
    int iop;
    strset set = {0};
    if (parse_key(p, &key, &iop)) return -1;
    sel_op op = (sel_op)iop;
    if (iop < 0) {
        if (parse_operator(p, &op)) return -1;
        int rc =
            (op == SEL_IN || op == SEL_NOT_IN) ? parse_values(p, &set) : parse_exact_value(p, &set);
        if (rc) goto fail;
    }
    if (new_requirement(key, op, set.v, set.n, p->err, p->errn)) goto fail;
    char *k = xstrndup(key, strlen(key));
    if (!k) {
        perr(p, "%s", "out of memory");
        goto fail;
    }
    struct req r = {k, op, set.v, set.n};
    if (sel_push(s, &r)) return perr(p, "%s", "out of memory"); /* sel_push freed r */
    return 0;
fail:
    set_free(&set);
    return -1;
}

static int parse_all(struct parser *p, sel_t *s)
{
    char inner[2048];
    for (;;) {
        const char *lit;
        enum tok t = lookahead(p, CTX_VALUES, &lit);
        if (t == T_EOS) return 0;
        if (t != T_ID && t != T_NOT)
            return perr(p, "found '%s', expected: !, identifier, or 'end of string'", lit);
        char *outer = p->err;
        size_t outern = p->errn;
        p->err = inner;
        p->errn = sizeof inner;
        inner[0] = '\0';
        int rc = parse_requirement(p, s);
        p->err = outer;
        p->errn = outern;
        if (rc) {
            seterr(outer, outern, "unable to parse requirement: %s", inner);
            return -1;
        }
        t = consume(p, CTX_VALUES, &lit);
        if (t == T_EOS) return 0;
        if (t != T_COMMA) return perr(p, "found '%s', expected: ',' or 'end of string'", lit);
        t = lookahead(p, CTX_VALUES, &lit);
        if (t != T_ID && t != T_NOT)
            return perr(p, "found '%s', expected: identifier after ','", lit);
    }
}

sel_t *sel_parse_labels(const char *str, char *errbuf, size_t n)
{
    struct parser p = {.err = errbuf, .errn = n};
    sel_t *s = sel_new(KIND_LABELS);
    if (!s) goto oom;
    if (scan_all(&p, str ? str : "")) goto oom;
    if (parse_all(&p, s)) goto fail;
    sel_sort(s);
    goto done;
oom:
    seterr(errbuf, n, "out of memory");
fail:
    sel_free(s);
    s = NULL;
done:
    for (size_t i = 0; i < p.n; i++)
        free(p.items[i].lit);
    free(p.items);
    return s;
}

/* ---- metav1.LabelSelector ---- */

/* Copy a JSON array of strings; on failure *n counts the copies made so
 * far, so req_clear frees exactly those. Non-strings read as "". */
static int json_strings(const json_t *arr, char ***out, size_t *n)
{
    size_t want = json_array_size(arr);
    *out = NULL;
    *n = 0;
    if (want == 0) return 0;
    *out = calloc(want, sizeof **out);
    if (!*out) return -1;
    for (size_t i = 0; i < want; i++) {
        const char *v = json_string_value(json_array_get(arr, i));
        char *d = xstrndup(v ? v : "", v ? strlen(v) : 0);
        if (!d) return -1;
        (*out)[(*n)++] = d;
    }
    return 0;
}

static int add_expression(sel_t *s, const json_t *expr, char *errbuf, size_t n)
{
    static const struct {
        const char *name;
        sel_op op;
    } ops[] = {{"In", SEL_IN},
               {"NotIn", SEL_NOT_IN},
               {"Exists", SEL_EXISTS},
               {"DoesNotExist", SEL_DOES_NOT_EXIST}};
    const char *key = json_string_value(json_object_get(expr, "key"));
    const char *opname = json_string_value(json_object_get(expr, "operator"));
    struct req r = {0};
    size_t i;
    for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (opname && strcmp(opname, ops[i].name) == 0) break;
    if (i == sizeof ops / sizeof ops[0]) {
        char q[256];
        seterr(errbuf, n, "%s is not a valid label selector operator",
               name_go_quote(opname ? opname : "", q, sizeof q));
        return -1;
    }
    r.op = ops[i].op;
    r.key = xstrndup(key ? key : "", key ? strlen(key) : 0);
    if (!r.key || json_strings(json_object_get(expr, "values"), &r.vals, &r.nvals)) {
        seterr(errbuf, n, "out of memory");
        goto fail;
    }
    if (new_requirement(r.key, r.op, r.vals, r.nvals, errbuf, n)) goto fail;
    return sel_push(s, &r) ? (seterr(errbuf, n, "out of memory"), -1) : 0;
fail:
    req_clear(&r);
    return -1;
}

static int add_match_label(sel_t *s, const char *k, const json_t *v, char *errbuf, size_t n)
{
    const char *val = json_string_value(v);
    struct req r = {0};
    r.op = SEL_EQUALS;
    r.key = xstrndup(k, strlen(k));
    r.vals = calloc(1, sizeof *r.vals);
    if (r.vals) {
        r.nvals = 1;
        r.vals[0] = xstrndup(val ? val : "", val ? strlen(val) : 0);
    }
    if (!r.key || !r.vals || !r.vals[0]) {
        seterr(errbuf, n, "out of memory");
        goto fail;
    }
    if (new_requirement(r.key, r.op, r.vals, r.nvals, errbuf, n)) goto fail;
    return sel_push(s, &r) ? (seterr(errbuf, n, "out of memory"), -1) : 0;
fail:
    req_clear(&r);
    return -1;
}

sel_t *sel_from_json(const json_t *ls, char *errbuf, size_t n)
{
    sel_t *s = sel_new(KIND_LABELS);
    if (!s) {
        seterr(errbuf, n, "out of memory");
        return NULL;
    }
    if (!ls || json_is_null(ls)) {
        s->nothing = true;
        return s;
    }
    const json_t *ml = json_object_get(ls, "matchLabels");
    const json_t *me = json_object_get(ls, "matchExpressions");
    const char *k;
    json_t *v;
    size_t i;
    json_object_foreach((json_t *)ml, k, v)
    {
        if (add_match_label(s, k, v, errbuf, n)) goto fail;
    }
    json_array_foreach(me, i, v)
    {
        if (add_expression(s, v, errbuf, n)) goto fail;
    }
    sel_sort(s);
    return s;
fail:
    sel_free(s);
    return NULL;
}

/* ---- field selectors (fields.ParseSelector) ---- */

static size_t utf8_len(const unsigned char *p)
{
    size_t n = 1;
    if (*p >= 0xC0)
        while (p[n] >= 0x80 && p[n] < 0xC0 && n < 4)
            n++;
    return n;
}

/* UnescapeValue into a fresh string; NULL + errbuf on error. */
static char *unescape_value(const char *s, char *errbuf, size_t n)
{
    size_t len = strlen(s), o = 0;
    char *out = malloc(len + 1);
    if (!out) {
        seterr(errbuf, n, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '\\') {
            if (i + 1 == len) {
                seterr(errbuf, n, "invalid field selector: invalid escape sequence: \\");
                goto fail;
            }
            char d = s[++i];
            if (d != '\\' && d != ',' && d != '=') {
                size_t ul = utf8_len((const unsigned char *)s + i);
                seterr(errbuf, n, "invalid field selector: invalid escape sequence: \\%.*s",
                       (int)ul, s + i);
                goto fail;
            }
            out[o++] = d;
        } else if (c == ',' || c == '=') {
            /* Go prints the rune with %v: its code point in decimal. */
            seterr(errbuf, n, "invalid field selector: unescaped character in value: %d", c);
            goto fail;
        } else {
            out[o++] = c;
        }
    }
    out[o] = '\0';
    return out;
fail:
    free(out);
    return NULL;
}

/* splitTerms: split on ',' not preceded by an escaping backslash. */
static int split_terms(const char *s, char ***terms, size_t *nterms)
{
    size_t cap = 1, start = 0;
    bool slash = false;
    *nterms = 0;
    *terms = NULL;
    if (!*s) return 0;
    for (const char *c = s; *c; c++)
        if (*c == ',') cap++;
    *terms = calloc(cap, sizeof **terms);
    if (!*terms) return -1;
    for (size_t i = 0;; i++) {
        if (s[i] == '\0' || (!slash && s[i] == ',')) {
            char *t = xstrndup(s + start, i - start);
            if (!t) return -1;
            (*terms)[(*nterms)++] = t;
            if (s[i] == '\0') break;
            start = i + 1;
            continue;
        }
        slash = !slash && s[i] == '\\';
    }
    return 0;
}

/* splitTerm: the first position where "!=", "==" or "=" starts. */
static bool split_term(const char *t, size_t *lhs_len, sel_op *op, const char **rhs)
{
    for (size_t i = 0; t[i]; i++) {
        if (strncmp(t + i, "!=", 2) == 0) {
            *op = SEL_NOT_EQUALS;
            *rhs = t + i + 2;
        } else if (strncmp(t + i, "==", 2) == 0 || t[i] == '=') {
            /* upstream turns both into the same hasTerm */
            *op = SEL_EQUALS;
            *rhs = t + i + (t[i + 1] == '=' ? 2 : 1);
        } else {
            continue;
        }
        *lhs_len = i;
        return true;
    }
    return false;
}

static int add_field_term(sel_t *s, const char *sel, const char *part, char *errbuf, size_t n)
{
    size_t lhs_len;
    sel_op op;
    const char *rhs;
    if (!split_term(part, &lhs_len, &op, &rhs)) {
        seterr(errbuf, n, "invalid selector: '%s'; can't understand '%s'", sel, part);
        return -1;
    }
    char *val = unescape_value(rhs, errbuf, n);
    if (!val) return -1;
    if (lhs_len == 0 && *val == '\0') { /* Transform turns "=" into Everything */
        free(val);
        return 0;
    }
    struct req r = {xstrndup(part, lhs_len), op, calloc(1, sizeof(char *)), 1};
    if (!r.key || !r.vals) {
        free(r.key);
        free(r.vals);
        free(val);
        seterr(errbuf, n, "out of memory");
        return -1;
    }
    r.vals[0] = val;
    return sel_push(s, &r) ? (seterr(errbuf, n, "out of memory"), -1) : 0;
}

sel_t *sel_parse_fields(const char *str, char *errbuf, size_t n)
{
    char **parts = NULL;
    size_t np = 0;
    sel_t *s = sel_new(KIND_FIELDS);
    if (!str) str = "";
    if (!s || split_terms(str, &parts, &np)) {
        seterr(errbuf, n, "out of memory");
        goto fail;
    }
    if (np) qsort(parts, np, sizeof *parts, cmp_str);
    for (size_t i = 0; i < np; i++) {
        if (*parts[i] == '\0') continue;
        if (add_field_term(s, str, parts[i], errbuf, n)) goto fail;
    }
    goto done;
fail:
    sel_free(s);
    s = NULL;
done:
    for (size_t i = 0; i < np; i++)
        free(parts[i]);
    free(parts);
    return s;
}

/* ---- matching ---- */

static bool has_value(const struct req *r, const char *v)
{
    for (size_t i = 0; i < r->nvals; i++)
        if (strcmp(r->vals[i], v) == 0) return true;
    return false;
}

static bool req_matches(const struct req *r, const json_t *labels)
{
    const char *v = json_string_value(json_object_get(labels, r->key));
    long long lv, rv;
    switch (r->op) {
    case SEL_IN:
    case SEL_EQUALS:
    case SEL_DOUBLE_EQUALS:
        return v && has_value(r, v);
    case SEL_NOT_IN:
    case SEL_NOT_EQUALS:
        return !v || !has_value(r, v);
    case SEL_EXISTS:
        return v != NULL;
    case SEL_DOES_NOT_EXIST:
        return v == NULL;
    case SEL_GT:
    case SEL_LT:
        if (!v || !name_parse_int64(v, &lv) || r->nvals != 1) return false;
        if (!name_parse_int64(r->vals[0], &rv)) return false;
        return r->op == SEL_GT ? lv > rv : lv < rv;
    }
    return false;
}

bool sel_matches(const sel_t *s, const json_t *labels)
{
    if (!s || s->nothing) return false;
    if (s->kind == KIND_FIELDS) return sel_matches_fields(s, labels);
    for (size_t i = 0; i < s->n; i++)
        if (!req_matches(&s->reqs[i], labels)) return false;
    return true;
}

/* Fields.Get: missing reads as "". */
static const char *field_get(const json_t *fields, const char *k, char *tmp, size_t n)
{
    const json_t *v = json_object_get(fields, k);
    if (json_is_string(v)) return json_string_value(v);
    if (json_is_boolean(v)) return json_is_true(v) ? "true" : "false";
    if (json_is_integer(v)) {
        snprintf(tmp, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return tmp;
    }
    return "";
}

bool sel_matches_fields_get(const sel_t *s, sel_field_get get, void *arg)
{
    if (!s || s->nothing) return false;
    if (s->kind == KIND_LABELS) return false; /* (a label selector reads labels, not fields) */
    for (size_t i = 0; i < s->n; i++) {
        const char *v = get(arg, s->reqs[i].key);
        bool eq = strcmp(v ? v : "", s->reqs[i].vals[0]) == 0;
        if (eq != (s->reqs[i].op == SEL_EQUALS)) return false;
    }
    return true;
}

bool sel_matches_fields(const sel_t *s, const json_t *fields)
{
    if (!s || s->nothing) return false;
    if (s->kind == KIND_LABELS) return sel_matches(s, fields);
    for (size_t i = 0; i < s->n; i++) {
        char tmp[32];
        const char *v = field_get(fields, s->reqs[i].key, tmp, sizeof tmp);
        bool eq = strcmp(v, s->reqs[i].vals[0]) == 0;
        if (eq != (s->reqs[i].op == SEL_EQUALS)) return false;
    }
    return true;
}

bool sel_fields_supported(const sel_t *s, const char *const *supported, char *errbuf, size_t n)
{
    for (size_t i = 0; s && i < s->n; i++) {
        const char *const *p = supported;
        while (p && *p && strcmp(*p, s->reqs[i].key) != 0)
            p++;
        if (!p || !*p) {
            seterr(errbuf, n, "field label not supported: %s", s->reqs[i].key);
            return false;
        }
    }
    return true;
}

/* ---- inspection ---- */

bool sel_empty(const sel_t *s)
{
    return s && !s->nothing && s->n == 0;
}

bool sel_matches_nothing(const sel_t *s)
{
    return !s || s->nothing;
}

size_t sel_count(const sel_t *s)
{
    return s ? s->n : 0;
}

const char *sel_key(const sel_t *s, size_t i)
{
    return s && i < s->n ? s->reqs[i].key : NULL;
}

sel_op sel_req_op(const sel_t *s, size_t i)
{
    return s && i < s->n ? s->reqs[i].op : SEL_EXISTS;
}

size_t sel_req_nvalues(const sel_t *s, size_t i)
{
    return s && i < s->n ? s->reqs[i].nvals : 0;
}

const char *sel_req_value(const sel_t *s, size_t i, size_t j)
{
    return s && i < s->n && j < s->reqs[i].nvals ? s->reqs[i].vals[j] : NULL;
}

bool sel_requires(const sel_t *s, const char *key, const char **value)
{
    for (size_t i = 0; s && !s->nothing && i < s->n; i++) {
        const struct req *r = &s->reqs[i];
        if (strcmp(r->key, key) != 0) continue;
        bool exact = r->op == SEL_EQUALS || r->op == SEL_DOUBLE_EQUALS ||
                     (s->kind == KIND_LABELS && r->op == SEL_IN);
        if (exact && r->nvals == 1) {
            if (value) *value = r->vals[0];
            return true;
        }
        if (s->kind == KIND_LABELS) return false; /* labels: first match decides */
    }
    return false;
}

/* ---- String() ---- */

static void field_escape(sbuf *b, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == ',' || *v == '=') sb_addn(b, "\\", 1);
        sb_addn(b, v, 1);
    }
}

static void label_req_string(sbuf *b, const struct req *r)
{
    static const char *const opstr[] = {
        [SEL_IN] = " in ",       [SEL_NOT_IN] = " notin ",
        [SEL_EQUALS] = "=",      [SEL_DOUBLE_EQUALS] = "==",
        [SEL_NOT_EQUALS] = "!=", [SEL_GT] = ">",
        [SEL_LT] = "<",
    };
    if (r->op == SEL_DOES_NOT_EXIST) sb_add(b, "!");
    sb_add(b, r->key);
    if (r->op == SEL_EXISTS || r->op == SEL_DOES_NOT_EXIST) return;
    bool set = r->op == SEL_IN || r->op == SEL_NOT_IN;
    sb_add(b, opstr[r->op]);
    if (set) sb_add(b, "(");
    /* values print sorted without reordering the selector itself */
    char **sorted = malloc((r->nvals ? r->nvals : 1) * sizeof *sorted);
    if (!sorted) {
        b->oom = true;
        return;
    }
    if (r->nvals) {
        memcpy(sorted, r->vals, r->nvals * sizeof *sorted);
        qsort(sorted, r->nvals, sizeof *sorted, cmp_str);
    }
    for (size_t j = 0; j < r->nvals; j++) {
        if (j) sb_add(b, ",");
        sb_add(b, sorted[j]);
    }
    free(sorted);
    if (set) sb_add(b, ")");
}

char *sel_to_string(const sel_t *s)
{
    sbuf b = {0};
    for (size_t i = 0; s && !s->nothing && i < s->n; i++) {
        const struct req *r = &s->reqs[i];
        if (i) sb_add(&b, ",");
        if (s->kind == KIND_LABELS) {
            label_req_string(&b, r);
            continue;
        }
        sb_add(&b, r->key);
        sb_add(&b, r->op == SEL_NOT_EQUALS ? "!=" : "=");
        field_escape(&b, r->vals[0]);
    }
    return sb_take(&b);
}
