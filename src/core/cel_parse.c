/* cel_parse.c - the CEL recursive-descent parser (the grammar of the CEL language
 * definition; tokens from cel_lex.c), with macro expansion.
 *
 * The AST it builds is the one cel-go's parser would: operators become calls of
 * "_+_", "_==_", "@in", "!_", "-_" ...; chains of && and || are balanced trees (so
 * their depth is logarithmic); even runs of ! or - cancel out; a - directly before an
 * int or double literal is part of the literal (so -9223372036854775808 is valid);
 * has(), all, exists, exists_one, map and filter become N_HAS and N_COMP nodes.
 *
 * Limits, both cel-go's: an expression nested more than CEL_MAX_DEPTH times
 * (parentheses, arguments, list elements...) fails with "expression recursion limit
 * exceeded: 250", and an AST taller than CEL_MAX_DEPTH (e.g. a chain of 300 '+') with
 * "max recursion depth exceeded". Everything the evaluator and checker recurse over is
 * therefore at most CEL_MAX_DEPTH deep.
 */
#include "core/cel_lex.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    cel_program *p;
    const char *src;
    cel_lexer lx;
    cel_token tok; /* the current token */
    cel_issue *is;
    int depth; /* nesting of the Expr rule */
} parser;

#define EXPECTING_PRIMARY                                                                          \
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, "       \
    "STRING, BYTES, IDENTIFIER}"

static const char *const reserved[] = {
    "as",  "break", "const",   "continue",  "else",   "for", "function", "if",    "import",
    "let", "loop",  "package", "namespace", "return", "var", "void",     "while", NULL,
};

/* ---- errors ----------------------------------------------------------------------------- */

static void *fail(parser *ps, uint32_t pos, const char *fmt, const char *arg)
{
    if (!ps->is->set) cel_issue_set(ps->is, pos, fmt, arg);
    return NULL;
}

/* The offending text, as ANTLR quotes it. */
static const char *tok_text(const parser *ps, const cel_token *t, char *buf, size_t n)
{
    if (t->k == K_EOF) return "<EOF>";
    size_t len = t->len < 40 ? t->len : 40;
    snprintf(buf, n, "%.*s", (int)len, ps->src + t->pos);
    return buf;
}

static void *syntax(parser *ps, const char *fmt)
{
    char buf[64];
    return fail(ps, ps->tok.pos, fmt, tok_text(ps, &ps->tok, buf, sizeof buf));
}

static bool next(parser *ps)
{
    return cel_lex(&ps->lx, &ps->tok);
}

/* ---- node construction ------------------------------------------------------------------ */

static cel_node *node(parser *ps, cel_nkind kind, uint32_t pos)
{
    cel_node *nd = cel_arena_alloc(&ps->p->arena, sizeof *nd);
    if (!nd) return fail(ps, pos, "%s", "out of memory");
    nd->kind = (uint8_t)kind;
    nd->pos = pos;
    nd->height = 1;
    return nd;
}

/* Record a child's height; false when the AST gets too tall. */
static bool grow(parser *ps, cel_node *parent, const cel_node *child)
{
    if (child && child->height + 1 > parent->height) parent->height = (uint16_t)(child->height + 1);
    if (parent->height > CEL_MAX_DEPTH) {
        fail(ps, parent->pos, "%s", "max recursion depth exceeded");
        return false;
    }
    return true;
}

static cel_node *call(parser *ps, uint32_t pos, const char *name, bool member, size_t n,
                      cel_node **args)
{
    cel_node *c = node(ps, N_CALL, pos);
    if (!c) return NULL;
    c->call.name = name;
    c->call.fn = cel_func_lookup(name);
    c->call.member = member;
    c->call.n = (uint8_t)n;
    c->call.args = args;
    for (size_t i = 0; i < n; i++)
        if (!grow(ps, c, args[i])) return NULL;
    return c;
}

static cel_node *call2(parser *ps, uint32_t pos, const char *name, cel_node *a, cel_node *b)
{
    cel_node **args = cel_arena_alloc(&ps->p->arena, 2 * sizeof *args);
    if (!args) return fail(ps, pos, "%s", "out of memory");
    args[0] = a;
    args[1] = b;
    return call(ps, pos, name, false, b ? 2 : 1, args);
}

static cel_node *op_node(parser *ps, cel_nkind kind, uint32_t pos, cel_node *a, cel_node *b,
                         cel_node *c)
{
    cel_node *nd = node(ps, kind, pos);
    if (!nd) return NULL;
    nd->op.a = a;
    nd->op.b = b;
    nd->op.c = c;
    if (!grow(ps, nd, a) || !grow(ps, nd, b) || !grow(ps, nd, c)) return NULL;
    return nd;
}

/* A growable array of nodes (malloc'd), moved into the arena when complete. */
typedef struct nvec {
    cel_node **v;
    size_t n, cap;
} nvec;

static bool nvec_push(parser *ps, nvec *v, cel_node *nd)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        cel_node **p = realloc(v->v, cap * sizeof *p);
        if (!p) return fail(ps, nd->pos, "%s", "out of memory");
        v->v = p;
        v->cap = cap;
    }
    v->v[v->n++] = nd;
    return true;
}

static cel_node **nvec_take(parser *ps, nvec *v)
{
    cel_node **a = cel_arena_alloc(&ps->p->arena, (v->n ? v->n : 1) * sizeof *a);
    if (a && v->n) memcpy(a, v->v, v->n * sizeof *a);
    free(v->v);
    v->v = NULL;
    if (!a) fail(ps, ps->tok.pos, "%s", "out of memory");
    return a;
}

/* ---- grammar ---------------------------------------------------------------------------- */

static cel_node *parse_expr(parser *ps);

static bool expect(parser *ps, cel_tok_kind k, const char *what)
{
    if (ps->tok.k == k) return next(ps);
    char fmt[80];
    snprintf(fmt, sizeof fmt, "Syntax error: mismatched input '%%s' expecting %s", what);
    syntax(ps, fmt);
    return false;
}

/* Comma-separated expressions up to `close` (consumed). `trailing` allows "a, b,". */
static bool parse_list(parser *ps, cel_tok_kind close, const char *close_text, bool trailing,
                       nvec *out)
{
    while (ps->tok.k != close) {
        cel_node *e = parse_expr(ps);
        if (!e || !nvec_push(ps, out, e)) return false;
        if (ps->tok.k != K_COMMA) break;
        if (!next(ps)) return false;
        if (!trailing && ps->tok.k == close) {
            syntax(ps, "Syntax error: mismatched input '%s' expecting " EXPECTING_PRIMARY);
            return false;
        }
    }
    return expect(ps, close, close_text);
}

static cel_node *parse_args(parser *ps, uint32_t pos, const char *name, cel_node *target)
{
    nvec args = {0};
    if ((target && !nvec_push(ps, &args, target)) ||
        !parse_list(ps, K_RPAREN, "')'", false, &args)) {
        free(args.v);
        return NULL;
    }
    if (args.n > 255) {
        free(args.v);
        return fail(ps, pos, "%s", "Syntax error: too many arguments");
    }
    size_t n = args.n;
    cel_node **a = nvec_take(ps, &args);
    return a ? call(ps, pos, name, target != NULL, n, a) : NULL;
}

/* has(m.f) and the comprehension macros; anything else stays a call. */
static cel_node *expand_macro(parser *ps, cel_node *c)
{
    const char *name = c->call.name;
    cel_node **a = c->call.args;
    if (!c->call.member) {
        if (strcmp(name, "has") || c->call.n != 1) return c;
        if (a[0]->kind != N_SELECT)
            return fail(ps, a[0]->pos, "%s", "invalid argument to has() macro");
        a[0]->kind = N_HAS;
        a[0]->pos = c->pos;
        return a[0];
    }
    static const struct {
        const char *name;
        uint8_t nargs;
        cel_macro m;
    } macros[] = {
        {"all", 3, M_ALL},       {"exists", 3, M_EXISTS}, {"exists_one", 3, M_EXISTS_ONE},
        {"filter", 3, M_FILTER}, {"map", 3, M_MAP},       {"map", 4, M_MAP_FILTER},
    };
    for (size_t i = 0; i < sizeof macros / sizeof macros[0]; i++) {
        if (strcmp(name, macros[i].name) || c->call.n != macros[i].nargs) continue;
        if (a[1]->kind != N_IDENT)
            return fail(ps, a[1]->pos, "%s", "argument must be a simple name");
        c->kind = N_COMP;
        cel_node *range = a[0], *var = a[1], *x = a[2], *y = c->call.n == 4 ? a[3] : NULL;
        c->comp.macro = (uint8_t)macros[i].m;
        c->comp.var = var->id.name;
        c->comp.range = range;
        c->comp.pred = macros[i].m == M_MAP ? NULL : x;
        c->comp.xform = macros[i].m == M_MAP ? x : y;
        return c;
    }
    return c;
}

static bool is_reserved(const char *w)
{
    for (size_t i = 0; reserved[i]; i++)
        if (!strcmp(w, reserved[i])) return true;
    return false;
}

static cel_node *parse_ident(parser *ps)
{
    cel_token t = ps->tok;
    char *name = cel_arena_strndup(&ps->p->arena, ps->src + t.pos, t.len);
    if (!name) return fail(ps, t.pos, "%s", "out of memory");
    if (is_reserved(name)) return fail(ps, t.pos, "reserved identifier: %s", name);
    if (!next(ps)) return NULL;
    if (ps->tok.k == K_LPAREN) {
        uint32_t pos = ps->tok.pos;
        if (!next(ps)) return NULL;
        cel_node *c = parse_args(ps, pos, name, NULL);
        return c ? expand_macro(ps, c) : NULL;
    }
    cel_node *id = node(ps, N_IDENT, t.pos);
    if (id) id->id.name = name;
    return id;
}

static cel_node *literal(parser *ps, cel_val v)
{
    cel_node *nd = node(ps, N_LIT, ps->tok.pos);
    if (!nd) return NULL;
    nd->lit = v;
    return next(ps) ? nd : NULL;
}

/* An int or double literal, negated when `neg` (the '-' at `pos` is part of it). */
static cel_node *number(parser *ps, bool neg, uint32_t pos)
{
    cel_token t = ps->tok;
    cel_val v = {0};
    if (t.k == K_DOUBLE) {
        if (t.range) return fail(ps, pos, "%s", "invalid double literal");
        v = (cel_val){.k = V_DOUBLE, .d = neg ? -t.d : t.d};
    } else if (t.k == K_UINT) {
        if (t.range) return fail(ps, pos, "%s", "invalid uint literal");
        v = (cel_val){.k = V_UINT, .u = t.u};
    } else {
        uint64_t lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        if (t.range || t.u > lim) return fail(ps, pos, "%s", "invalid int literal");
        v = cel_int(neg ? (int64_t)(0 - t.u) : (int64_t)t.u);
    }
    cel_node *nd = literal(ps, v);
    if (nd) nd->pos = pos;
    return nd;
}

static cel_node *parse_map(parser *ps, uint32_t pos)
{
    nvec keys = {0}, vals = {0};
    bool ok = true;
    while (ok && ps->tok.k != K_RBRACE) {
        cel_node *k = parse_expr(ps), *v = NULL;
        ok = k && nvec_push(ps, &keys, k) && expect(ps, K_COLON, "':'") && (v = parse_expr(ps)) &&
             nvec_push(ps, &vals, v);
        if (!ok || ps->tok.k != K_COMMA) break;
        ok = next(ps);
    }
    ok = ok && expect(ps, K_RBRACE, "'}'");
    cel_node *m = ok ? node(ps, N_MAP, pos) : NULL;
    for (size_t i = 0; m && i < keys.n; i++)
        if (!grow(ps, m, keys.v[i]) || !grow(ps, m, vals.v[i])) m = NULL;
    if (!m) {
        free(keys.v);
        free(vals.v);
        return NULL;
    }
    m->map.n = keys.n;
    m->map.keys = nvec_take(ps, &keys);
    m->map.vals = nvec_take(ps, &vals);
    return m->map.keys && m->map.vals ? m : NULL;
}

static cel_node *parse_list_literal(parser *ps, uint32_t pos)
{
    nvec items = {0};
    if (!parse_list(ps, K_RBRACK, "']'", true, &items)) {
        free(items.v);
        return NULL;
    }
    cel_node *l = node(ps, N_LIST, pos);
    for (size_t i = 0; l && i < items.n; i++)
        if (!grow(ps, l, items.v[i])) l = NULL;
    if (!l) {
        free(items.v);
        return NULL;
    }
    l->list.n = items.n;
    l->list.items = nvec_take(ps, &items);
    return l->list.items ? l : NULL;
}

static cel_node *parse_primary(parser *ps)
{
    uint32_t pos = ps->tok.pos;
    switch (ps->tok.k) {
    case K_DOT: /* a leading dot names the root scope: the same variables here */
        if (!next(ps)) return NULL;
        if (ps->tok.k != K_IDENT)
            return syntax(ps, "Syntax error: mismatched input '%s' expecting IDENTIFIER");
        return parse_ident(ps);
    case K_IDENT:
        return parse_ident(ps);
    case K_LPAREN: {
        if (!next(ps)) return NULL;
        cel_node *e = parse_expr(ps);
        return e && expect(ps, K_RPAREN, "')'") ? e : NULL;
    }
    case K_LBRACK:
        return next(ps) ? parse_list_literal(ps, pos) : NULL;
    case K_LBRACE:
        return next(ps) ? parse_map(ps, pos) : NULL;
    case K_INT:
    case K_UINT:
    case K_DOUBLE:
        return number(ps, false, pos);
    case K_STRING:
        return literal(ps, (cel_val){.k = V_STRING, .s = {ps->tok.s, ps->tok.sn}});
    case K_TRUE:
    case K_FALSE:
        return literal(ps, cel_bool(ps->tok.k == K_TRUE));
    case K_NULL:
        return literal(ps, (cel_val){.k = V_NULL});
    default:
        return syntax(ps, "Syntax error: mismatched input '%s' expecting " EXPECTING_PRIMARY);
    }
}

/* Selections, indexing and member calls after a primary. */
static cel_node *parse_suffixes(parser *ps, cel_node *x)
{
    while (x && (ps->tok.k == K_DOT || ps->tok.k == K_LBRACK)) {
        uint32_t pos = ps->tok.pos;
        if (ps->tok.k == K_LBRACK) {
            if (!next(ps)) return NULL;
            cel_node *i = parse_expr(ps);
            if (!i || !expect(ps, K_RBRACK, "']'")) return NULL;
            cel_node *nd = node(ps, N_INDEX, pos);
            if (!nd) return NULL;
            nd->idx.x = x;
            nd->idx.index = i;
            x = grow(ps, nd, x) && grow(ps, nd, i) ? nd : NULL;
            continue;
        }
        if (!next(ps)) return NULL;
        if (ps->tok.k != K_IDENT)
            return syntax(ps, "Syntax error: mismatched input '%s' expecting IDENTIFIER");
        char *name = cel_arena_strndup(&ps->p->arena, ps->src + ps->tok.pos, ps->tok.len);
        if (!name) return fail(ps, pos, "%s", "out of memory");
        if (!next(ps)) return NULL;
        if (ps->tok.k == K_LPAREN) {
            uint32_t cpos = ps->tok.pos;
            if (!next(ps)) return NULL;
            cel_node *c = parse_args(ps, cpos, name, x);
            x = c ? expand_macro(ps, c) : NULL;
            continue;
        }
        cel_node *nd = node(ps, N_SELECT, pos);
        if (!nd) return NULL;
        nd->sel.x = x;
        nd->sel.field = name;
        x = grow(ps, nd, x) ? nd : NULL;
    }
    return x;
}

static cel_node *parse_unary(parser *ps)
{
    cel_tok_kind k = ps->tok.k;
    uint32_t pos = ps->tok.pos;
    if (k != K_NOT && k != K_MINUS) return parse_suffixes(ps, parse_primary(ps));
    int count = 0;
    while (ps->tok.k == k) {
        count++;
        if (!next(ps)) return NULL;
    }
    cel_node *m;
    if (k == K_MINUS && count == 1 && (ps->tok.k == K_INT || ps->tok.k == K_DOUBLE))
        return parse_suffixes(ps, number(ps, true, pos));
    m = parse_suffixes(ps, parse_primary(ps));
    if (!m || count % 2 == 0) return m;
    return call2(ps, pos, k == K_NOT ? "!_" : "-_", m, NULL);
}

static cel_node *parse_binary_level(parser *ps, int level);

/* Operators by precedence level, tightest last; && and || are handled apart. */
static const struct {
    cel_tok_kind k;
    const char *fn;
    int level;
} binops[] = {
    {K_EQ, "_==_", 0},   {K_NE, "_!=_", 0},  {K_LT, "_<_", 0},    {K_LE, "_<=_", 0},
    {K_GT, "_>_", 0},    {K_GE, "_>=_", 0},  {K_IN, "@in", 0},    {K_PLUS, "_+_", 1},
    {K_MINUS, "_-_", 1}, {K_STAR, "_*_", 2}, {K_SLASH, "_/_", 2}, {K_PERCENT, "_%_", 2},
};

static const char *binop_at(cel_tok_kind k, int level)
{
    for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
        if (binops[i].k == k && binops[i].level == level) return binops[i].fn;
    return NULL;
}

static cel_node *parse_binary_level(parser *ps, int level)
{
    cel_node *l = level > 2 ? parse_unary(ps) : parse_binary_level(ps, level + 1);
    const char *fn;
    while (l && level <= 2 && (fn = binop_at(ps->tok.k, level))) {
        uint32_t pos = ps->tok.pos;
        if (!next(ps)) return NULL;
        cel_node *r = parse_binary_level(ps, level + 1);
        l = r ? call2(ps, pos, fn, l, r) : NULL;
    }
    return l;
}

/* cel-go's balancer: a chain of && (or ||) as a tree of logarithmic depth. */
static cel_node *balance(parser *ps, cel_nkind kind, cel_node **t, uint32_t *pos, size_t lo,
                         size_t hi)
{
    if (lo == hi) return t[lo];
    size_t mid = (lo + hi + 1) / 2;
    cel_node *l = balance(ps, kind, t, pos, lo, mid - 1);
    cel_node *r = l ? balance(ps, kind, t, pos, mid, hi) : NULL;
    return r ? op_node(ps, kind, pos[mid - 1], l, r, NULL) : NULL;
}

static cel_node *parse_logical(parser *ps, bool is_or)
{
    cel_tok_kind k = is_or ? K_OR : K_AND;
    cel_node *first = is_or ? parse_logical(ps, false) : parse_binary_level(ps, 0);
    if (!first || ps->tok.k != k) return first;
    nvec terms = {0};
    uint32_t *pos = NULL;
    size_t npos = 0;
    bool ok = nvec_push(ps, &terms, first);
    while (ok && ps->tok.k == k) {
        uint32_t *np = realloc(pos, (npos + 1) * sizeof *np);
        if (!np) {
            ok = fail(ps, ps->tok.pos, "%s", "out of memory") != NULL;
            break;
        }
        pos = np;
        pos[npos++] = ps->tok.pos;
        cel_node *t = NULL;
        ok = next(ps) && (t = is_or ? parse_logical(ps, false) : parse_binary_level(ps, 0)) &&
             nvec_push(ps, &terms, t);
    }
    cel_node *r = ok ? balance(ps, is_or ? N_OR : N_AND, terms.v, pos, 0, terms.n - 1) : NULL;
    free(terms.v);
    free(pos);
    return r;
}

static cel_node *parse_expr(parser *ps)
{
    if (ps->depth >= CEL_MAX_DEPTH) {
        char msg[64];
        snprintf(msg, sizeof msg, "expression recursion limit exceeded: %d", CEL_MAX_DEPTH);
        return fail(ps, ps->tok.pos, "%s", msg);
    }
    ps->depth++;
    cel_node *c = parse_logical(ps, true);
    if (c && ps->tok.k == K_QUESTION) {
        uint32_t pos = ps->tok.pos;
        cel_node *t = NULL, *f = NULL;
        if (next(ps) && (t = parse_logical(ps, true)) && expect(ps, K_COLON, "':'") &&
            (f = parse_expr(ps)))
            c = op_node(ps, N_COND, pos, c, t, f);
        else
            c = NULL;
    }
    ps->depth--;
    return c;
}

int cel_parse(cel_program *p, cel_issue *is)
{
    parser ps = {.p = p,
                 .src = p->src,
                 .lx = {.arena = &p->arena, .src = p->src, .n = p->srclen, .is = is},
                 .is = is};
    if (!next(&ps)) return -1;
    cel_node *root = parse_expr(&ps);
    if (!root) return -1;
    if (ps.tok.k != K_EOF) {
        syntax(&ps, "Syntax error: extraneous input '%s' expecting <EOF>");
        return -1;
    }
    p->root = root;
    return 0;
}
