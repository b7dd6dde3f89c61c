/* cel_check.c - static type checking, after cel-go's checker.
 *
 * Every node gets a type; identifiers are resolved to a variable or a comprehension
 * slot. The rules are cel-go's for the types this interpreter knows:
 *   - variables are dyn, so most of a Kubernetes expression is dyn; dyn is assignable
 *     to and from anything, and a call whose arguments are dyn takes the result type
 *     its matching overloads agree on (quantity(object.x) is kubernetes.Quantity,
 *     object.x + object.y is dyn);
 *   - type parameters bind to the first argument that uses them (1 == 'a' and
 *     true ? 1 : 'a' are errors, 1 == 1.0 too: numeric equality across types is only
 *     decided at run time, for dyn values);
 *   - list and map literals take the most general element type (dyn when mixed);
 *   - selecting a field of a non-map type, calling an undeclared function and ranging
 *     over a non-collection are errors.
 * Checking goes on after an error (the node's type acts as dyn) and the error with the
 * lowest source position is kept, as cel-go displays its sorted issue list.
 */
#include "core/cel_impl.h"

#include <stdio.h>
#include <string.h>

typedef struct scope_var {
    const char *name;
    const cel_type *t;
} scope_var;

typedef struct checker {
    cel_program *p;
    cel_issue *is;
    scope_var scope[CEL_MAX_DEPTH];
    int nscope;
} checker;

typedef struct binding {
    const cel_type *A, *B;
} binding;

__attribute__((format(printf, 3, 4))) static void report(checker *ck, uint32_t pos, const char *fmt,
                                                         ...)
{
    if (ck->is->set && ck->is->pos <= pos) return;
    va_list ap;
    va_start(ap, fmt);
    ck->is->set = true;
    ck->is->pos = pos;
    vsnprintf(ck->is->msg, sizeof ck->is->msg, fmt, ap);
    va_end(ap);
}

/* The program arena is exhausted (an absurd expression): report it at the start. */
static const cel_type *oom(checker *ck)
{
    report(ck, 0, "out of memory");
    return &cel_t_error;
}

static const cel_type *check(checker *ck, cel_node *n);

/* ---- type relations --------------------------------------------------------------------- */

static bool assignable(const cel_type *a, const cel_type *b)
{
    if (cel_type_is_dynlike(a) || cel_type_is_dynlike(b)) return true;
    if (a->k != b->k) return false;
    if (a->k == T_LIST) return assignable(a->p[0], b->p[0]);
    if (a->k == T_MAP) return assignable(a->p[0], b->p[0]) && assignable(a->p[1], b->p[1]);
    return true;
}

/* Binding semantics: `a` stays, except that free type variables in it take b's type. */
static const cel_type *refine(checker *ck, const cel_type *a, const cel_type *b)
{
    if (a->k == T_FREE) return b;
    if (a->k == T_LIST && b->k == T_LIST) {
        const cel_type *e = refine(ck, a->p[0], b->p[0]);
        if (!e) return NULL;
        return e == a->p[0] ? a : cel_type_list(&ck->p->arena, e);
    }
    if (a->k == T_MAP && b->k == T_MAP) {
        const cel_type *k = refine(ck, a->p[0], b->p[0]), *v = refine(ck, a->p[1], b->p[1]);
        if (!k || !v) return NULL;
        return k == a->p[0] && v == a->p[1] ? a : cel_type_map(&ck->p->arena, k, v);
    }
    return a;
}

/* cel-go's mostGeneral, for the elements of aggregate literals. */
static const cel_type *most_general(checker *ck, const cel_type *a, const cel_type *b)
{
    if (a->k == T_DYN || a->k == T_ERROR || b->k == T_FREE) return a;
    if (b->k == T_DYN || b->k == T_ERROR || a->k == T_FREE) return b;
    if (a->k == T_LIST && b->k == T_LIST) {
        const cel_type *e = most_general(ck, a->p[0], b->p[0]);
        return e ? cel_type_list(&ck->p->arena, e) : NULL;
    }
    if (a->k == T_MAP && b->k == T_MAP) {
        const cel_type *k = most_general(ck, a->p[0], b->p[0]);
        const cel_type *v = most_general(ck, a->p[1], b->p[1]);
        return k && v ? cel_type_map(&ck->p->arena, k, v) : NULL;
    }
    return a;
}

static const cel_type *join(checker *ck, const cel_type *prev, const cel_type *cur)
{
    if (!prev) return cur;
    if (!assignable(prev, cur)) return &cel_t_dyn; /* mixed literals are dyn in cel-go */
    return most_general(ck, prev, cur);
}

/* ---- overload resolution ---------------------------------------------------------------- */

static const cel_type *prim_of(char c)
{
    switch (c) {
    case 'i':
        return &cel_t_int;
    case 'u':
        return &cel_t_uint;
    case 'd':
        return &cel_t_double;
    case 's':
        return &cel_t_string;
    case 'b':
        return &cel_t_bool;
    case 'q':
        return &cel_t_qty;
    case 'z':
        return &cel_t_null;
    default:
        return &cel_t_dyn;
    }
}

static void skip_sig(const char **s)
{
    char c = *(*s)++;
    if (c == 'l') skip_sig(s);
    if (c == 'm') {
        skip_sig(s);
        skip_sig(s);
    }
}

/* Does type t fit the next signature type in *s? Consumes it; binds A and B. */
static bool sig_match(checker *ck, const char **s, const cel_type *t, binding *bd)
{
    char c = **s;
    if (c == 'A' || c == 'B') {
        (*s)++;
        const cel_type **slot = c == 'A' ? &bd->A : &bd->B;
        if (!*slot) {
            *slot = t;
            return true;
        }
        if (!assignable(*slot, t)) return false;
        *slot = refine(ck, *slot, t);
        return *slot != NULL;
    }
    if (c == 'y') {
        (*s)++;
        return true;
    }
    if (c == 'l' || c == 'm') {
        (*s)++;
        if (cel_type_is_dynlike(t)) { /* dyn fits; the parameters stay unbound */
            skip_sig(s);
            if (c == 'm') skip_sig(s);
            return true;
        }
        if (t->k != (c == 'l' ? T_LIST : T_MAP)) {
            skip_sig(s);
            if (c == 'm') skip_sig(s);
            return false;
        }
        bool ok = sig_match(ck, s, t->p[0], bd);
        if (c == 'm') ok = sig_match(ck, s, t->p[1], bd) && ok;
        return ok;
    }
    (*s)++;
    return cel_type_is_dynlike(t) || t->k == prim_of(c)->k;
}

static const cel_type *sig_type(checker *ck, const char **s, const binding *bd)
{
    char c = *(*s)++;
    if (c == 'A' || c == 'B') {
        const cel_type *t = c == 'A' ? bd->A : bd->B;
        return t ? t : &cel_t_dyn;
    }
    if (c == 'l') {
        const cel_type *e = sig_type(ck, s, bd);
        return e ? cel_type_list(&ck->p->arena, e) : NULL;
    }
    if (c == 'm') {
        const cel_type *k = sig_type(ck, s, bd), *v = k ? sig_type(ck, s, bd) : NULL;
        return v ? cel_type_map(&ck->p->arena, k, v) : NULL;
    }
    return prim_of(c);
}

/* "(int, string)" or, for a member call, "string.(int)", as cel-go prints signatures. */
static void format_args(const cel_type *const *args, size_t n, bool member, char *buf, size_t len)
{
    size_t o = 0;
    char t[128];
    buf[0] = '\0';
    for (size_t i = 0; i < n && o < len; i++) {
        cel_type_format(args[i], false, t, sizeof t);
        const char *pre = member ? (i == 0 ? "" : i == 1 ? "(" : ", ") : (i == 0 ? "(" : ", ");
        o += (size_t)snprintf(buf + o, len - o, "%s%s%s", pre, t, member && i == 0 ? "." : "");
    }
    if (o < len) snprintf(buf + o, len - o, "%s", n == 0 || (member && n == 1) ? "()" : ")");
}

static const cel_type *resolve(checker *ck, uint32_t pos, const char *name, const cel_overload *ov,
                               size_t nov, bool member, const cel_type *const *args, size_t n)
{
    const cel_type *result = NULL;
    for (size_t i = 0; i < nov; i++) {
        if (ov[i].member != member || cel_sig_arity(ov[i].sig) != (int)n) continue;
        binding bd = {0};
        const char *s = ov[i].sig;
        bool ok = true;
        for (size_t a = 0; a < n; a++)
            ok = sig_match(ck, &s, args[a], &bd) && ok;
        if (!ok) continue;
        s++; /* '>' */
        const cel_type *rt = sig_type(ck, &s, &bd);
        if (!rt) return oom(ck);
        if (!result)
            result = rt;
        else if (result->k != T_DYN && !cel_type_exact(rt, result))
            result = &cel_t_dyn;
    }
    if (result) return result;
    char sig[256];
    format_args(args, n, member, sig, sizeof sig);
    report(ck, pos, "found no matching overload for '%s' applied to '%s'", name, sig);
    return &cel_t_error;
}

/* ---- nodes ------------------------------------------------------------------------------ */

static const cel_type *check_lit(const cel_node *n)
{
    switch ((cel_vkind)n->lit.k) {
    case V_BOOL:
        return &cel_t_bool;
    case V_INT:
        return &cel_t_int;
    case V_UINT:
        return &cel_t_uint;
    case V_DOUBLE:
        return &cel_t_double;
    case V_STRING:
        return &cel_t_string;
    default:
        return &cel_t_null;
    }
}

static const cel_type *check_ident(checker *ck, cel_node *n)
{
    for (int i = ck->nscope - 1; i >= 0; i--)
        if (!strcmp(ck->scope[i].name, n->id.name)) {
            n->id.ref = i;
            return ck->scope[i].t;
        }
    for (size_t i = 0; i < ck->p->nvars; i++)
        if (!strcmp(ck->p->vars[i], n->id.name)) {
            n->id.ref = -(int)i - 1;
            return &cel_t_dyn;
        }
    report(ck, n->pos, "undeclared reference to '%s' (in container '')", n->id.name);
    return &cel_t_error;
}

static const cel_type *check_select(checker *ck, cel_node *n)
{
    const cel_type *t = check(ck, n->sel.x), *r = &cel_t_dyn;
    if (t->k == T_MAP) {
        r = t->p[1];
    } else if (!cel_type_is_dynlike(t)) {
        char ts[128];
        cel_type_format(t, false, ts, sizeof ts);
        report(ck, n->pos, "type '%s' does not support field selection", ts);
    }
    return n->kind == N_HAS ? &cel_t_bool : r;
}

static const cel_type *check_index(checker *ck, cel_node *n)
{
    static const cel_overload index_ov[] = {{false, "lAi>A", NULL}, {false, "mABA>B", NULL}};
    const cel_type *args[2] = {check(ck, n->idx.x), check(ck, n->idx.index)};
    return resolve(ck, n->pos, "_[_]", index_ov, 2, false, args, 2);
}

static const cel_type *check_call(checker *ck, cel_node *n)
{
    /* In the arena, not on the stack: this frame recurses up to CEL_MAX_DEPTH times. */
    const cel_type **args = cel_arena_alloc(&ck->p->arena, (n->call.n + 1u) * sizeof *args);
    if (!args) return oom(ck);
    for (size_t i = 0; i < n->call.n; i++)
        args[i] = check(ck, n->call.args[i]);
    if (n->call.fn < 0) {
        report(ck, n->pos, "undeclared reference to '%s' (in container '')", n->call.name);
        return &cel_t_error;
    }
    const cel_func *f = &cel_funcs[n->call.fn];
    return resolve(ck, n->pos, f->name, f->ov, f->nov, n->call.member, args, n->call.n);
}

static const cel_type *check_list(checker *ck, cel_node *n)
{
    const cel_type *e = NULL;
    for (size_t i = 0; i < n->list.n; i++) {
        e = join(ck, e, check(ck, n->list.items[i]));
        if (!e) return oom(ck);
    }
    const cel_type *t = cel_type_list(&ck->p->arena, e ? e : &cel_t_free);
    return t ? t : oom(ck);
}

static const cel_type *check_map(checker *ck, cel_node *n)
{
    const cel_type *k = NULL, *v = NULL;
    for (size_t i = 0; i < n->map.n; i++) {
        k = join(ck, k, check(ck, n->map.keys[i]));
        v = k ? join(ck, v, check(ck, n->map.vals[i])) : NULL;
        if (!k || !v) return oom(ck);
    }
    const cel_type *t = cel_type_map(&ck->p->arena, k ? k : &cel_t_free, v ? v : &cel_t_free);
    return t ? t : oom(ck);
}

/* The operands of && and || must be bool (cel-go's logical-operator check). */
static void expect_bool(checker *ck, const cel_node *x, const cel_type *t)
{
    if (assignable(&cel_t_bool, t)) return;
    char ts[128];
    cel_type_format(t, false, ts, sizeof ts);
    report(ck, x->pos, "expected type 'bool' but found '%s'", ts);
}

static const cel_type *check_cond(checker *ck, cel_node *n)
{
    static const cel_overload cond_ov[] = {{false, "bAA>A", NULL}};
    const cel_type *args[3] = {check(ck, n->op.a), check(ck, n->op.b), check(ck, n->op.c)};
    return resolve(ck, n->pos, "_?_:_", cond_ov, 1, false, args, 3);
}

/* The predicate of a comprehension, as the expanded loop step would check it. */
static void check_pred(checker *ck, cel_node *n, const cel_type *pred, const cel_type *elem)
{
    static const cel_overload cond_ov[] = {{false, "bAA>A", NULL}};
    if (n->comp.macro == M_ALL || n->comp.macro == M_EXISTS) {
        expect_bool(ck, n->comp.pred, pred);
        return;
    }
    if (assignable(&cel_t_bool, pred)) return;
    const cel_type *accu =
        n->comp.macro == M_EXISTS_ONE ? &cel_t_int : cel_type_list(&ck->p->arena, elem);
    if (!accu) {
        oom(ck);
        return;
    }
    const cel_type *args[3] = {pred, accu, accu};
    resolve(ck, n->comp.pred->pos, "_?_:_", cond_ov, 1, false, args, 3);
}

static const cel_type *check_comp(checker *ck, cel_node *n)
{
    const cel_type *range = check(ck, n->comp.range), *var = &cel_t_dyn;
    if (range->k == T_LIST || range->k == T_MAP) {
        var = range->p[0];
    } else if (!cel_type_is_dynlike(range)) {
        char ts[128];
        cel_type_format(range, false, ts, sizeof ts);
        report(ck, n->comp.range->pos,
               "expression of type '%s' cannot be range of a comprehension (must be list, map, "
               "or dynamic)",
               ts);
    }
    int slot = ck->nscope++;
    n->comp.slot = slot;
    if (ck->nscope > ck->p->nslots) ck->p->nslots = ck->nscope;
    ck->scope[slot] = (scope_var){n->comp.var, var};
    const cel_type *pred = n->comp.pred ? check(ck, n->comp.pred) : NULL;
    const cel_type *xf = n->comp.xform ? check(ck, n->comp.xform) : NULL;
    ck->nscope--;
    if (pred) check_pred(ck, n, pred, n->comp.macro == M_FILTER ? var : xf);
    switch ((cel_macro)n->comp.macro) {
    case M_MAP:
    case M_MAP_FILTER:
        return cel_type_list(&ck->p->arena, xf);
    case M_FILTER:
        return cel_type_list(&ck->p->arena, var);
    default:
        return &cel_t_bool;
    }
}

static const cel_type *check(checker *ck, cel_node *n)
{
    const cel_type *t = &cel_t_error;
    switch ((cel_nkind)n->kind) {
    case N_LIT:
        t = check_lit(n);
        break;
    case N_IDENT:
        t = check_ident(ck, n);
        break;
    case N_SELECT:
    case N_HAS:
        t = check_select(ck, n);
        break;
    case N_INDEX:
        t = check_index(ck, n);
        break;
    case N_CALL:
        t = check_call(ck, n);
        break;
    case N_LIST:
        t = check_list(ck, n);
        break;
    case N_MAP:
        t = check_map(ck, n);
        break;
    case N_AND:
    case N_OR:
        expect_bool(ck, n->op.a, check(ck, n->op.a));
        expect_bool(ck, n->op.b, check(ck, n->op.b));
        t = &cel_t_bool;
        break;
    case N_COND:
        t = check_cond(ck, n);
        break;
    case N_COMP:
        t = check_comp(ck, n);
        break;
    }
    if (!t) t = oom(ck);
    n->type = t;
    return t;
}

int cel_check(cel_program *p, cel_issue *is)
{
    checker ck = {.p = p, .is = is};
    check(&ck, p->root);
    return is->set ? -1 : 0;
}
