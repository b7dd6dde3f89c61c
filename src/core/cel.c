/* cel.c - the public face of the CEL interpreter (see cel.h): compile (trim, length
 * check, parse, type-check, result-type check) and evaluate with budgets, with
 * Capsule's pkg/runtime/cel error texts around cel-go's.
 */
#include "core/cel_impl.h"

#include "core/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Plenty for the AST of a 4096-byte expression; a bound all the same. */
#define PROGRAM_ARENA_LIMIT (16u << 20)

void cel_issue_set(cel_issue *is, uint32_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    is->set = true;
    is->pos = pos;
    vsnprintf(is->msg, sizeof is->msg, fmt, ap);
    va_end(ap);
}

/* "<prefix>\"<src>\"" into buf, Go-quoted; returns the length written. */
static size_t put_quoted(char *buf, size_t n, const char *prefix, const char *src)
{
    if (!n) return 0;
    int o = snprintf(buf, n, "%s", prefix);
    size_t off = o < 0 ? 0 : (size_t)o < n ? (size_t)o : n - 1;
    name_go_quote(src, buf + off, n - off);
    return off + strlen(buf + off);
}

/* ---- compile errors in cel-go's display format ------------------------------------------ */

/* "ERROR: <input>:L:C: msg\n | <line>\n | ....^" (wide characters get wide dots). */
static void display_issue(const char *src, size_t len, const cel_issue *is, char *buf, size_t n)
{
    size_t pos = is->pos <= len ? is->pos : len, line = 1, start = 0;
    for (size_t i = 0; i < pos; i++)
        if (src[i] == '\n') line++, start = i + 1;
    size_t end = start;
    while (end < len && src[end] != '\n')
        end++;
    size_t col = cel_utf8_len(src + start, pos - start); /* cel-go counts code points */
    size_t o = (size_t)snprintf(buf, n, "ERROR: <input>:%zu:%zu: %s\n | ", line, col + 1, is->msg);
    for (size_t i = start; i < end && o + 1 < n; i++)
        buf[o++] = src[i] == '\t' ? ' ' : src[i];
    if (o + 4 < n) o += (size_t)snprintf(buf + o, n - o, "\n | ");
    for (size_t i = start; i < pos && o + 4 < n; i++) {
        unsigned char ch = (unsigned char)src[i];
        if ((ch & 0xC0) == 0x80) continue;
        o += (size_t)snprintf(buf + o, n - o, "%s", ch >= 0x80 ? "\xef\xbc\x8e" : ".");
    }
    bool wide = pos < len && (unsigned char)src[pos] >= 0x80;
    if (o < n) snprintf(buf + o, n - o, "%s", wide ? "\xef\xbc\xbe" : "^");
    if (o >= n && n) buf[n - 1] = '\0';
}

static void compile_error(const cel_program *p, const char *msg, char *err, size_t errlen)
{
    size_t o = put_quoted(err, errlen, "compile CEL expression ", p->src);
    if (o < errlen) snprintf(err + o, errlen - o, ": %s", msg);
}

/* ---- compile ---------------------------------------------------------------------------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Capsule's validateOutputType. */
static bool check_result(cel_program *p, char *msg, size_t n)
{
    const cel_type *t = p->root->type;
    char ts[128];
    cel_type_format(t, true, ts, sizeof ts);
    switch (p->expect) {
    case CEL_EXPECT_BOOL:
        if (t->k == T_BOOL) return true;
        snprintf(msg, n, "expression must evaluate to bool, got %s", ts);
        return false;
    case CEL_EXPECT_QUANTITY:
        if (t->k == T_QTY || (t->k == T_LIST && t->p[0]->k == T_QTY)) return true;
        snprintf(
            msg, n,
            "expression must evaluate to kubernetes.Quantity or list<kubernetes.Quantity>, got %s",
            ts);
        return false;
    case CEL_EXPECT_STRING:
        if (t->k == T_STRING) return true;
        snprintf(msg, n, "expression must evaluate to string, got %s", ts);
        return false;
    case CEL_EXPECT_ANY:
        return true;
    }
    snprintf(msg, n, "unsupported CEL result type");
    return false;
}

static cel_program *program_new(const char *src, size_t len, cel_expect expect,
                                const char *const *vars, size_t nvars)
{
    cel_program *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    cel_arena_init(&p->arena, PROGRAM_ARENA_LIMIT);
    p->expect = expect;
    p->srclen = len;
    p->src = cel_arena_strndup(&p->arena, src, len);
    p->vars = cel_arena_alloc(&p->arena, (nvars + 1) * sizeof *p->vars);
    if (!p->src || !p->vars) {
        cel_free(p);
        return NULL;
    }
    for (size_t i = 0; i < nvars; i++) {
        p->vars[i] = cel_arena_strndup(&p->arena, vars[i], strlen(vars[i]));
        if (!p->vars[i]) {
            cel_free(p);
            return NULL;
        }
    }
    p->nvars = nvars;
    return p;
}

cel_program *cel_compile_vars(const char *src, cel_expect expect, const char *const *vars,
                              size_t nvars, char *err, size_t errlen)
{
    size_t len = src ? strlen(src) : 0;
    const char *s = src;
    while (len && is_space(*s))
        s++, len--;
    while (len && is_space(s[len - 1]))
        len--;
    if (len == 0) {
        snprintf(err, errlen, "CEL expression must not be empty");
        return NULL;
    }
    if (len > CEL_MAX_EXPR_LEN) {
        snprintf(err, errlen, "CEL expression exceeds max length of %d", CEL_MAX_EXPR_LEN);
        return NULL;
    }
    for (size_t i = 0; i < nvars; i++)
        if (!vars || !vars[i]) {
            snprintf(err, errlen, "CEL variable must not be empty");
            return NULL;
        }
    cel_program *p = program_new(s, len, expect, vars, nvars);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    cel_issue is = {0};
    char msg[2048];
    if (cel_parse(p, &is) || cel_check(p, &is)) {
        display_issue(p->src, p->srclen, &is, msg, sizeof msg);
        compile_error(p, msg, err, errlen);
        cel_free(p);
        return NULL;
    }
    if (!check_result(p, msg, sizeof msg)) {
        compile_error(p, msg, err, errlen);
        cel_free(p);
        return NULL;
    }
    cel_type_format(p->root->type, true, p->type_str, sizeof p->type_str);
    return p;
}

cel_program *cel_compile(const char *src, cel_expect expect, char *err, size_t errlen)
{
    static const char *const object[] = {"object"};
    return cel_compile_vars(src, expect, object, 1, err, errlen);
}

void cel_free(cel_program *p)
{
    if (!p) return;
    cel_arena_free(&p->arena);
    free(p);
}

const char *cel_source(const cel_program *p)
{
    return p->src;
}

const char *cel_result_type(const cel_program *p)
{
    return p->type_str;
}

/* ---- evaluate --------------------------------------------------------------------------- */

static void eval_error(const cel_program *p, const char *msg, char *err, size_t errlen)
{
    size_t o = put_quoted(err, errlen, "evaluate CEL expression ", p->src);
    if (o < errlen) snprintf(err + o, errlen - o, ": %s", msg);
}

/* Evaluate into *out; on success the caller must cel_arena_free(&c->arena) once done
 * with *out (it may point into the arena). On failure the arena is already freed. */
static int run(const cel_program *p, const json_t *const *vars, const cel_limits *lim, cel_ctx *c,
               cel_val *out, char *err, size_t errlen)
{
    *c = (cel_ctx){.vars = vars, .cost_limit = CEL_DEFAULT_COST_LIMIT};
    cel_arena_init(&c->arena, CEL_DEFAULT_MEMORY_LIMIT);
    if (lim && lim->cost) c->cost_limit = lim->cost;
    if (lim && lim->memory) c->arena.limit = lim->memory;
    c->slots = p->nslots ? cel_alloc(c, (size_t)p->nslots * sizeof *c->slots) : NULL;
    cel_val v = c->abort ? (cel_val){.k = V_ERROR, .err = ""} : cel_eval_node(c, p->root);
    int rc = CEL_OK;
    if (c->abort == CEL_ERR_LIMIT) {
        eval_error(p,
                   c->cost > c->cost_limit ? "operation cancelled: actual cost limit exceeded"
                                           : "operation cancelled: memory limit exceeded",
                   err, errlen);
        rc = CEL_ERR_LIMIT;
    } else if (c->abort) {
        eval_error(p, "out of memory", err, errlen);
        rc = CEL_ERR_NOMEM;
    } else if (v.k == V_ERROR) {
        eval_error(p, v.err, err, errlen);
        rc = CEL_ERR_EVAL;
    }
    if (rc) cel_arena_free(&c->arena);
    *out = v;
    return rc;
}

int cel_eval_bool(const cel_program *p, const json_t *const *vars, const cel_limits *lim, bool *out,
                  char *err, size_t errlen)
{
    if (!p || p->expect != CEL_EXPECT_BOOL) {
        snprintf(err, errlen, "compiled CEL expression does not return bool");
        return CEL_ERR_USAGE;
    }
    cel_ctx c;
    cel_val v;
    int rc = run(p, vars, lim, &c, &v, err, errlen);
    if (rc) return rc;
    if (v.k == V_BOOL) {
        *out = v.b;
    } else { /* unreachable for a checked bool program */
        size_t o = put_quoted(err, errlen, "CEL expression ", p->src);
        if (o < errlen)
            snprintf(err + o, errlen - o, " returned %s, expected bool", cel_val_type_name(&v));
        rc = CEL_ERR_EVAL;
    }
    cel_arena_free(&c.arena);
    return rc;
}

/* "CEL expression \"<src>\"<what>", Capsule's texts for results of the wrong shape. */
static int shape_error(const cel_program *p, const char *what, char *err, size_t errlen)
{
    size_t o = put_quoted(err, errlen, "CEL expression ", p->src);
    if (o < errlen) snprintf(err + o, errlen - o, "%s", what);
    return CEL_ERR_EVAL;
}

/* Capsule's EvaluateQuantity: a quantity, or the exact sum of a list of them. An empty
 * list is 0, where Capsule fails ("returned an empty quantity list"): seed 003's rule that
 * a missing value counts 0, as for a source path's `[*]` over an empty list
 * (docs/custom-quotas.md). (A list(kubernetes.Quantity) program can still meet other
 * elements at run time, in `[quantity('1')] + object.more` for instance.) */
static int sum_quantities(const cel_program *p, const cel_val *v, qty *out, char *err,
                          size_t errlen)
{
    if (v->k == V_QTY) {
        *out = *v->q;
        return CEL_OK;
    }
    if (v->k != V_LIST)
        return shape_error(p,
                           " returned a non-quantity, expected kubernetes.Quantity or "
                           "list<kubernetes.Quantity>",
                           err, errlen);
    size_t n = cel_list_len(v);
    qty total = qty_zero(QTY_DECIMAL_SI);
    for (size_t i = 0; i < n; i++) {
        cel_val e = cel_list_at(v, i);
        if (e.k != V_QTY)
            return shape_error(p,
                               " returned a list containing a non-quantity, expected "
                               "kubernetes.Quantity",
                               err, errlen);
        if (qty_add(&total, e.q))
            return shape_error(p, " returned quantities whose sum is out of range", err, errlen);
    }
    *out = total;
    return CEL_OK;
}

int cel_eval_quantity(const cel_program *p, const json_t *const *vars, const cel_limits *lim,
                      qty *out, char *err, size_t errlen)
{
    if (!p || p->expect != CEL_EXPECT_QUANTITY) {
        snprintf(err, errlen, "compiled CEL expression does not return a quantity");
        return CEL_ERR_USAGE;
    }
    cel_ctx c;
    cel_val v;
    int rc = run(p, vars, lim, &c, &v, err, errlen);
    if (rc) return rc;
    rc = sum_quantities(p, &v, out, err, errlen);
    cel_arena_free(&c.arena);
    return rc;
}

int cel_eval_json(const cel_program *p, const json_t *const *vars, const cel_limits *lim,
                  json_t **out, char *err, size_t errlen)
{
    if (!p) {
        snprintf(err, errlen, "compiled CEL expression is nil");
        return CEL_ERR_USAGE;
    }
    cel_ctx c;
    cel_val v;
    int rc = run(p, vars, lim, &c, &v, err, errlen);
    if (rc) return rc;
    size_t budget = c.arena.limit; /* the result may be as large as the values built */
    *out = cel_to_json(&v, &budget);
    if (!*out && budget == 0) {
        eval_error(p, "operation cancelled: memory limit exceeded", err, errlen);
        rc = CEL_ERR_LIMIT;
    } else if (!*out) {
        eval_error(p, "result cannot be converted to JSON", err, errlen);
        rc = CEL_ERR_EVAL;
    }
    cel_arena_free(&c.arena);
    return rc;
}
