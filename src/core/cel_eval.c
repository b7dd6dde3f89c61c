/* cel_eval.c - evaluation of a checked CEL AST.
 *
 * Errors are values (V_ERROR), as in CEL: most operations are strict and pass the
 * first error of their arguments on, but && and || absorb an error when the other side
 * decides the result (false && error == false, true || error == true, in either order),
 * and so do all() and exists(), which are expanded to && and || over the elements.
 * Exhausting the cost or memory budget is not a value: it sets ctx->abort, after which
 * every node returns at once and nothing absorbs it.
 *
 * Field selection and indexing follow cel-go's attribute resolution: a missing map key
 * is "no such key: k", a list index out of range "index out of bounds: i"; has() is
 * false for a missing key (and for a field of a scalar), an error only if the operand
 * itself is one.
 */
#include "core/cel_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void *cel_alloc(cel_ctx *c, size_t n)
{
    size_t rounded = ((n ? n : 1) + 15) & ~(size_t)15;
    if (rounded < n || c->arena.used + rounded > c->arena.limit) {
        c->abort = CEL_ERR_LIMIT;
        return NULL;
    }
    void *p = cel_arena_alloc(&c->arena, n);
    if (!p) c->abort = CEL_ERR_NOMEM;
    return p;
}

bool cel_charge(cel_ctx *c, uint64_t units)
{
    c->cost += units;
    if (c->cost > c->cost_limit || c->cost < units) {
        c->abort = CEL_ERR_LIMIT;
        return false;
    }
    return true;
}

cel_val cel_err(cel_ctx *c, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
    char *msg = cel_alloc(c, (size_t)n + 1);
    if (msg) memcpy(msg, buf, (size_t)n);
    return (cel_val){.k = V_ERROR, .err = msg ? msg : ""};
}

static const cel_val aborted = {.k = V_ERROR, .err = ""};

static cel_val no_such_key(cel_ctx *c, const cel_val *key)
{
    char k[256];
    cel_val_format_key(key, k, sizeof k);
    return cel_err(c, "no such key: %s", k);
}

/* ---- selection and indexing ------------------------------------------------------------- */

static cel_val eval_select(cel_ctx *c, const cel_node *n)
{
    cel_val x = cel_eval_node(c, n->sel.x);
    if (x.k == V_ERROR || !cel_charge(c, 1)) return c->abort ? aborted : x;
    bool has = n->kind == N_HAS;
    cel_val key = {.k = V_STRING, .s = {n->sel.field, strlen(n->sel.field)}}, v;
    if (x.k == V_MAP) {
        if (!cel_charge(c, cel_map_lookup_cost(&x) - 1)) return aborted;
        bool found = cel_map_get(&x, &key, &v);
        if (has) return cel_bool(found);
        return found ? v : no_such_key(c, &key);
    }
    if (x.k == V_LIST) return cel_err(c, "unsupported index type 'string' in list");
    return has ? cel_bool(false) : no_such_key(c, &key);
}

/* cel-go's IndexOrError: ints, uints and integral doubles index lists. */
static bool list_index(cel_ctx *c, const cel_val *i, int64_t *out, cel_val *err)
{
    char k[64];
    switch (i->k) {
    case V_INT:
        *out = i->i;
        return true;
    case V_UINT:
        if (i->u <= INT64_MAX) {
            *out = (int64_t)i->u;
            return true;
        }
        break;
    case V_DOUBLE:
        if (i->d >= -9223372036854775808.0 && i->d < 9223372036854775808.0 && i->d == trunc(i->d)) {
            *out = (int64_t)i->d;
            return true;
        }
        break;
    default:
        *err = cel_err(c, "unsupported index type '%s' in list", cel_val_type_name(i));
        return false;
    }
    cel_val_format_key(i, k, sizeof k);
    *err = cel_err(c, "unsupported index value %s in list", k);
    return false;
}

static cel_val eval_index(cel_ctx *c, const cel_node *n)
{
    cel_val x = cel_eval_node(c, n->idx.x);
    cel_val i = cel_eval_node(c, n->idx.index);
    if (c->abort || !cel_charge(c, 1)) return aborted;
    if (x.k == V_ERROR) return x;
    if (i.k == V_ERROR) return i;
    cel_val v;
    if (x.k == V_MAP) {
        if (!cel_charge(c, cel_map_lookup_cost(&x) - 1)) return aborted;
        return cel_map_get(&x, &i, &v) ? v : no_such_key(c, &i);
    }
    if (x.k != V_LIST) return no_such_key(c, &i);
    int64_t ix;
    if (!list_index(c, &i, &ix, &v)) return v;
    if (ix < 0 || (uint64_t)ix >= cel_list_len(&x)) {
        char k[64];
        cel_val_format_key(&i, k, sizeof k);
        return cel_err(c, "index out of bounds: %s", k);
    }
    return cel_list_at(&x, (size_t)ix);
}

/* ---- calls ------------------------------------------------------------------------------ */

/* Does the runtime type of v fit the next signature code? Consumes it. */
static bool rt_match(const char **s, const cel_val *v)
{
    static const char kinds[] = {
        [V_NULL] = 'z',   [V_BOOL] = 'b', [V_INT] = 'i',  [V_UINT] = 'u', [V_DOUBLE] = 'd',
        [V_STRING] = 's', [V_QTY] = 'q',  [V_LIST] = 'l', [V_MAP] = 'm',  [V_ERROR] = '!'};
    char c = *(*s)++;
    if (c == 'l' || c == 'm') { /* element types are not checked at run time */
        const char *rest = *s;
        int skip = c == 'l' ? 1 : 2;
        while (skip--) {
            char e = *rest++;
            if (e == 'l') skip += 1;
            if (e == 'm') skip += 2;
        }
        *s = rest;
    }
    return c == 'A' || c == 'B' || c == 'y' || kinds[v->k] == c;
}

static cel_val no_overload(cel_ctx *c, const char *name, const cel_val *args, size_t n)
{
    if (cel_func_is_operator(name)) return cel_err(c, "no such overload");
    char sig[256];
    size_t o = 0;
    for (size_t i = 0; i < n && o < sizeof sig; i++)
        o += (size_t)snprintf(sig + o, sizeof sig - o, "%s%s", i ? ", " : "",
                              cel_val_type_name(&args[i]));
    return cel_err(c, "no such overload: %s(%s)", name, n ? sig : "");
}

static cel_val dispatch(cel_ctx *c, const cel_node *n, const cel_val *args)
{
    const cel_func *f = &cel_funcs[n->call.fn];
    for (size_t o = 0; o < f->nov; o++) {
        const cel_overload *ov = &f->ov[o];
        if (ov->member != n->call.member || cel_sig_arity(ov->sig) != n->call.n) continue;
        const char *s = ov->sig;
        bool ok = true;
        for (size_t a = 0; ok && a < n->call.n; a++)
            ok = rt_match(&s, &args[a]);
        if (ok) return ov->impl(c, args);
    }
    return no_overload(c, f->name, args, n->call.n);
}

static cel_val eval_call(cel_ctx *c, const cel_node *n)
{
    /* Small argument lists stay on the stack: this frame recurses CEL_MAX_DEPTH deep. */
    cel_val local[4], *args = local;
    if (n->call.n > 4 && !(args = cel_alloc(c, n->call.n * sizeof *args))) return aborted;
    for (size_t i = 0; i < n->call.n; i++) {
        args[i] = cel_eval_node(c, n->call.args[i]);
        if (c->abort) return aborted;
    }
    if (!cel_charge(c, 1)) return aborted;
    for (size_t i = 0; i < n->call.n; i++)
        if (args[i].k == V_ERROR) return args[i];
    cel_val r = dispatch(c, n, args);
    return c->abort ? aborted : r;
}

/* ---- aggregates ------------------------------------------------------------------------- */

static cel_val eval_list(cel_ctx *c, const cel_node *n)
{
    if (!cel_charge(c, 10 + n->list.n)) return aborted;
    cel_list *l = cel_alloc(c, sizeof *l);
    cel_val *v = l ? cel_alloc(c, n->list.n * sizeof *v) : NULL;
    if (!v) return aborted;
    for (size_t i = 0; i < n->list.n; i++) {
        v[i] = cel_eval_node(c, n->list.items[i]);
        if (c->abort) return aborted;
    }
    for (size_t i = 0; i < n->list.n; i++)
        if (v[i].k == V_ERROR) return v[i];
    l->n = n->list.n;
    l->v = v;
    return (cel_val){.k = V_LIST, .l = l};
}

static bool valid_key(const cel_val *k)
{
    return k->k == V_INT || k->k == V_UINT || k->k == V_BOOL || k->k == V_STRING;
}

static cel_val eval_map(cel_ctx *c, const cel_node *n)
{
    size_t len = n->map.n;
    if (!cel_charge(c, 30 + len)) return aborted;
    cel_map *m = cel_alloc(c, sizeof *m);
    cel_val *k = m ? cel_alloc(c, len * sizeof *k) : NULL;
    cel_val *v = k ? cel_alloc(c, len * sizeof *v) : NULL;
    if (!v) return aborted;
    for (size_t i = 0; i < len; i++) {
        k[i] = cel_eval_node(c, n->map.keys[i]);
        v[i] = cel_eval_node(c, n->map.vals[i]);
        if (c->abort) return aborted;
    }
    for (size_t i = 0; i < len; i++) {
        if (k[i].k == V_ERROR) return k[i];
        if (v[i].k == V_ERROR) return v[i];
        if (!valid_key(&k[i]))
            return cel_err(c, "unsupported key type: %s", cel_val_type_name(&k[i]));
    }
    /* The spec makes repeated keys an error (cel-go lets the last one win). */
    m->n = 0;
    m->k = k;
    m->v = v;
    cel_val probe, mv = {.k = V_MAP, .m = m};
    for (size_t i = 0; i < len; i++) {
        if (!cel_charge(c, 1 + i / 8)) return aborted;
        if (cel_map_get(&mv, &k[i], &probe)) {
            char ks[128];
            cel_val_format_key(&k[i], ks, sizeof ks);
            return cel_err(c, "Failed with repeated key: %s", ks);
        }
        m->n++;
    }
    return mv;
}

/* ---- logic ------------------------------------------------------------------------------ */

/* a && b (is_or false) or a || b over evaluated operands, with error absorption. */
static cel_val logic(cel_ctx *c, cel_val a, cel_val b, bool is_or)
{
    if ((a.k == V_BOOL && a.b == is_or) || (b.k == V_BOOL && b.b == is_or)) return cel_bool(is_or);
    if (a.k == V_BOOL && b.k == V_BOOL) return cel_bool(!is_or);
    if (a.k == V_ERROR) return a;
    if (b.k == V_ERROR) return b;
    return cel_err(c, "no such overload");
}

static cel_val eval_logic(cel_ctx *c, const cel_node *n, bool is_or)
{
    cel_val a = cel_eval_node(c, n->op.a);
    if (c->abort) return aborted;
    if (a.k == V_BOOL && a.b == is_or) return a; /* short circuit */
    cel_val b = cel_eval_node(c, n->op.b);
    if (c->abort) return aborted;
    return logic(c, a, b, is_or);
}

static cel_val eval_cond(cel_ctx *c, const cel_node *n)
{
    cel_val k = cel_eval_node(c, n->op.a);
    if (c->abort || k.k == V_ERROR) return c->abort ? aborted : k;
    if (k.k != V_BOOL) return cel_err(c, "no such overload");
    return cel_eval_node(c, k.b ? n->op.b : n->op.c);
}

/* ---- comprehensions --------------------------------------------------------------------- */

typedef struct loop {
    cel_val range;
    size_t n, i;
    cel_map_iter it;
} loop;

static bool loop_next(loop *l, cel_val *elem)
{
    if (l->i >= l->n) return false;
    l->i++;
    if (l->range.k == V_LIST) {
        *elem = cel_list_at(&l->range, l->i - 1);
        return true;
    }
    cel_val v;
    return cel_map_next(&l->it, elem, &v);
}

/* all/exists: the accumulator folds with && / || and stops once it is decided. */
static cel_val fold_logic(cel_ctx *c, const cel_node *n, loop *l, bool is_or)
{
    cel_val accu = cel_bool(!is_or), e;
    while (!(accu.k == V_BOOL && accu.b == is_or) && loop_next(l, &e)) {
        c->slots[n->comp.slot] = e;
        if (!cel_charge(c, 1)) return aborted;
        cel_val p = cel_eval_node(c, n->comp.pred);
        if (c->abort) return aborted;
        accu = logic(c, accu, p, is_or);
    }
    return accu;
}

static cel_val fold_exists_one(cel_ctx *c, const cel_node *n, loop *l)
{
    int64_t count = 0;
    cel_val e;
    while (loop_next(l, &e)) {
        c->slots[n->comp.slot] = e;
        if (!cel_charge(c, 1)) return aborted;
        cel_val p = cel_eval_node(c, n->comp.pred);
        if (c->abort) return aborted;
        if (p.k == V_ERROR) return p;
        if (p.k != V_BOOL) return cel_err(c, "no such overload");
        count += p.b;
    }
    return cel_bool(count == 1);
}

/* map and filter: the elements kept (filter) or produced (map). */
static cel_val fold_list(cel_ctx *c, const cel_node *n, loop *l)
{
    cel_list *out = cel_alloc(c, sizeof *out);
    cel_val *v = out ? cel_alloc(c, l->n * sizeof *v) : NULL, e;
    if (!v) return aborted;
    size_t k = 0;
    while (loop_next(l, &e)) {
        c->slots[n->comp.slot] = e;
        if (!cel_charge(c, 1)) return aborted;
        if (n->comp.pred) {
            cel_val p = cel_eval_node(c, n->comp.pred);
            if (c->abort) return aborted;
            if (p.k == V_ERROR) return p;
            if (p.k != V_BOOL) return cel_err(c, "no such overload");
            if (!p.b) continue;
        }
        cel_val x = n->comp.xform ? cel_eval_node(c, n->comp.xform) : e;
        if (c->abort) return aborted;
        if (x.k == V_ERROR) return x;
        if (!cel_charge(c, 1)) return aborted;
        v[k++] = x;
    }
    out->n = k;
    out->v = v;
    return (cel_val){.k = V_LIST, .l = out};
}

static cel_val eval_comp(cel_ctx *c, const cel_node *n)
{
    loop l = {.range = cel_eval_node(c, n->comp.range)};
    if (c->abort || l.range.k == V_ERROR) return c->abort ? aborted : l.range;
    if (l.range.k == V_LIST) {
        l.n = cel_list_len(&l.range);
    } else if (l.range.k == V_MAP) {
        l.n = cel_map_len(&l.range);
        cel_map_iter_init(&l.it, &l.range);
    } else {
        return cel_err(c, "got '%s', expected iterable type", cel_val_type_name(&l.range));
    }
    switch ((cel_macro)n->comp.macro) {
    case M_ALL:
        return fold_logic(c, n, &l, false);
    case M_EXISTS:
        return fold_logic(c, n, &l, true);
    case M_EXISTS_ONE:
        return fold_exists_one(c, n, &l);
    default:
        return fold_list(c, n, &l);
    }
}

/* ---- dispatch on the node --------------------------------------------------------------- */

static cel_val eval_ident(cel_ctx *c, const cel_node *n)
{
    if (!cel_charge(c, 1)) return aborted;
    if (n->id.ref >= 0) return c->slots[n->id.ref];
    const json_t *v = c->vars ? c->vars[-n->id.ref - 1] : NULL;
    if (!v) return cel_err(c, "no such attribute(s): %s", n->id.name);
    return cel_from_json(v);
}

cel_val cel_eval_node(cel_ctx *c, const cel_node *n)
{
    if (c->abort) return aborted;
    switch ((cel_nkind)n->kind) {
    case N_LIT:
        return n->lit;
    case N_IDENT:
        return eval_ident(c, n);
    case N_SELECT:
    case N_HAS:
        return eval_select(c, n);
    case N_INDEX:
        return eval_index(c, n);
    case N_CALL:
        return eval_call(c, n);
    case N_LIST:
        return eval_list(c, n);
    case N_MAP:
        return eval_map(c, n);
    case N_AND:
        return eval_logic(c, n, false);
    case N_OR:
        return eval_logic(c, n, true);
    case N_COND:
        return eval_cond(c, n);
    case N_COMP:
        return eval_comp(c, n);
    }
    return cel_err(c, "invalid expression");
}
