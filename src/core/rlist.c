/* rlist.c - resource lists: a sorted array of (name, qty).
 *
 * Lists are small (a quota rarely has more than a dozen keys), so a sorted
 * array with binary search beats a hash map and gives upstream's sorted
 * message order for free. The operations follow resources.go one to one.
 *
 * Names shorter than RL_INLINE bytes (nearly all: "requests.cpu",
 * "count/deployments.apps") live inside their entry, so copying a list, which
 * admission does per quota per request, is two allocations, not one per name.
 * A name therefore moves with its entry: rl_name is valid only until the list
 * changes (rlist.h says so).
 */
#include "core/rlist.h"

#include <stdlib.h>
#include <string.h>

#define RL_INLINE 32

typedef struct rl_entry {
    char *heap; /* the name when it does not fit `inl`, else NULL */
    qty q;
    char inl[RL_INLINE];
} rl_entry;

static const char *ename(const rl_entry *e)
{
    return e->heap ? e->heap : e->inl;
}

/* 0 or RL_ENOMEM (e untouched on failure). */
static int ename_set(rl_entry *e, const char *name)
{
    size_t len = strlen(name);
    if (len < RL_INLINE) {
        memcpy(e->inl, name, len + 1);
        e->heap = NULL;
        return 0;
    }
    char *dup = strdup(name);
    if (!dup) return RL_ENOMEM;
    e->heap = dup;
    return 0;
}

struct rlist {
    size_t n, cap;
    rl_entry *e;
};

rlist *rl_new(void)
{
    return calloc(1, sizeof(rlist));
}

void rl_clear(rlist *l)
{
    if (!l) return;
    for (size_t i = 0; i < l->n; i++)
        free(l->e[i].heap);
    l->n = 0;
}

void rl_free(rlist *l)
{
    if (!l) return;
    rl_clear(l);
    free(l->e);
    free(l);
}

size_t rl_len(const rlist *l)
{
    return l ? l->n : 0;
}

const char *rl_name(const rlist *l, size_t i)
{
    return ename(&l->e[i]);
}

const qty *rl_qty(const rlist *l, size_t i)
{
    return &l->e[i].q;
}

/* Index of `name`, or -(insertion point) - 1 when absent. */
static long find(const rlist *l, const char *name)
{
    size_t lo = 0, hi = l ? l->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(ename(&l->e[mid]), name);
        if (c == 0) return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

const qty *rl_get(const rlist *l, const char *name)
{
    long i = find(l, name);
    return i >= 0 ? &l->e[i].q : NULL;
}

bool rl_has(const rlist *l, const char *name)
{
    return find(l, name) >= 0;
}

static int grow(rlist *l)
{
    if (l->n < l->cap) return 0;
    size_t cap = l->cap ? l->cap * 2 : 8;
    rl_entry *e = realloc(l->e, cap * sizeof(*e));
    if (!e) return RL_ENOMEM;
    l->e = e;
    l->cap = cap;
    return 0;
}

int rl_set(rlist *l, const char *name, const qty *q)
{
    long i = find(l, name);
    if (i >= 0) {
        l->e[i].q = *q;
        return 0;
    }
    size_t at = (size_t)(-i - 1);
    rl_entry ne;
    if (ename_set(&ne, name)) return RL_ENOMEM;
    if (grow(l)) {
        free(ne.heap);
        return RL_ENOMEM;
    }
    ne.q = *q;
    memmove(&l->e[at + 1], &l->e[at], (l->n - at) * sizeof(rl_entry));
    l->e[at] = ne;
    l->n++;
    return 0;
}

int rl_add_name(rlist *l, const char *name)
{
    if (rl_has(l, name)) return 0;
    qty z = qty_zero(QTY_DECIMAL_SI);
    return rl_set(l, name, &z);
}

void rl_del(rlist *l, const char *name)
{
    long i = find(l, name);
    if (i < 0) return;
    free(l->e[i].heap);
    memmove(&l->e[i], &l->e[i + 1], (l->n - (size_t)i - 1) * sizeof(rl_entry));
    l->n--;
}

/* The entries are already sorted and unique: copied in order, into an array
 * of exactly their number (a copy is often made per request, e.g. the new
 * usage of a quota). */
rlist *rl_copy(const rlist *l)
{
    rlist *c = rl_new();
    size_t n = rl_len(l);
    if (!c || !n) return c;
    if (!(c->e = malloc(n * sizeof *c->e))) goto fail;
    c->cap = n;
    for (; c->n < n; c->n++) {
        c->e[c->n] = l->e[c->n];
        if (l->e[c->n].heap && !(c->e[c->n].heap = strdup(l->e[c->n].heap))) goto fail;
    }
    return c;
fail:
    rl_free(c);
    return NULL;
}

int rl_add_qty(rlist *l, const char *name, const qty *q)
{
    long j = find(l, name);
    return j >= 0 ? qty_add(&l->e[j].q, q) : rl_set(l, name, q);
}

int rl_add_to(rlist *dst, const rlist *b)
{
    for (size_t i = 0; i < rl_len(b); i++) {
        int rc = rl_add_qty(dst, ename(&b->e[i]), &b->e[i].q);
        if (rc) return rc;
    }
    return 0;
}

rlist *rl_add(const rlist *a, const rlist *b)
{
    rlist *r = rl_copy(a);
    if (r && rl_add_to(r, b)) {
        rl_free(r);
        return NULL;
    }
    return r;
}

/* The next entry of b, from *j on, whose name is a key of mask (*k walks mask
 * alongside); nb when none is left. */
static size_t next_masked(const rlist *b, size_t *j, const rlist *mask, size_t *k)
{
    for (; *j < b->n; (*j)++) {
        const char *name = ename(&b->e[*j]);
        int c = -1;
        while (*k < mask->n && (c = strcmp(ename(&mask->e[*k]), name)) < 0)
            (*k)++;
        if (*k < mask->n && c == 0) return *j;
    }
    return b->n;
}

rlist *rl_add_masked(const rlist *a, const rlist *b, const rlist *mask, bool *changed,
                     bool *exceeds)
{
    static const rlist empty;
    if (!a) a = &empty;
    if (!b) b = &empty;
    if (!mask) mask = &empty;
    *changed = *exceeds = false;
    rlist *r = rl_new();
    /* At most every key of a plus those of b that mask has. */
    size_t cap = a->n + (b->n < mask->n ? b->n : mask->n);
    if (!r || (cap && !(r->e = malloc(cap * sizeof *r->e)))) goto fail;
    r->cap = cap;
    size_t i = 0, j = 0, k = 0;
    size_t jm = next_masked(b, &j, mask, &k);
    while (i < a->n || jm < b->n) {
        int c = i == a->n ? 1 : jm == b->n ? -1 : strcmp(ename(&a->e[i]), ename(&b->e[jm]));
        const rl_entry *src = c <= 0 ? &a->e[i] : &b->e[jm];
        rl_entry *dst = &r->e[r->n];
        *dst = *src;
        if (src->heap && !(dst->heap = strdup(src->heap))) goto fail;
        r->n++;
        if (c >= 0) { /* a key of b (and of mask): added */
            if (c == 0 && qty_add(&dst->q, &b->e[jm].q)) goto fail;
            *changed |= c > 0 || !qty_is_zero(&b->e[jm].q);
            *exceeds |= qty_cmp(&dst->q, &mask->e[k].q) > 0;
            j++;
            jm = next_masked(b, &j, mask, &k);
        }
        if (c <= 0) i++;
    }
    return r;
fail:
    rl_free(r);
    return NULL;
}

/* a - b over the union of keys; `nonneg` clamps each value at 0. */
static rlist *subtract(const rlist *a, const rlist *b, bool nonneg)
{
    rlist *r = rl_copy(a);
    if (!r) return NULL;
    qty zero = qty_zero(QTY_DECIMAL_SI);
    for (size_t i = 0; i < rl_len(b); i++) {
        long j = find(r, ename(&b->e[i]));
        qty v = j >= 0 ? r->e[j].q : zero;
        if (qty_sub(&v, &b->e[i].q)) goto fail;
        if (nonneg && qty_sign(&v) <= 0) v = zero;
        if (rl_set(r, ename(&b->e[i]), &v)) goto fail;
    }
    if (nonneg) {
        for (size_t i = 0; i < r->n; i++)
            if (qty_sign(&r->e[i].q) <= 0) r->e[i].q = zero;
    }
    return r;
fail:
    rl_free(r);
    return NULL;
}

rlist *rl_subtract(const rlist *a, const rlist *b)
{
    return subtract(a, b, false);
}

rlist *rl_subtract_nonneg(const rlist *a, const rlist *b)
{
    return subtract(a, b, true);
}

/* The entries of l for which keep(entry, ctx) holds. */
static rlist *filter(const rlist *l, bool (*keep)(const rl_entry *, const void *), const void *ctx)
{
    rlist *r = rl_new();
    if (!r) return NULL;
    for (size_t i = 0; i < rl_len(l); i++) {
        if (keep(&l->e[i], ctx) && rl_set(r, ename(&l->e[i]), &l->e[i].q)) {
            rl_free(r);
            return NULL;
        }
    }
    return r;
}

static bool in_names(const rl_entry *e, const void *names)
{
    return rl_has(names, ename(e));
}

static bool nonzero(const rl_entry *e, const void *ctx)
{
    return !qty_is_zero(&e->q);
}

static bool negative(const rl_entry *e, const void *ctx)
{
    return qty_sign(&e->q) < 0;
}

static bool exceeds(const rl_entry *e, const void *b)
{
    const qty *other = rl_get(b, ename(e));
    return other && qty_cmp(&e->q, other) > 0;
}

rlist *rl_mask(const rlist *l, const rlist *names)
{
    return filter(l, in_names, names);
}

rlist *rl_remove_zeros(const rlist *l)
{
    return filter(l, nonzero, NULL);
}

rlist *rl_less_than_or_equal(const rlist *a, const rlist *b)
{
    return filter(a, exceeds, b);
}

rlist *rl_is_negative(const rlist *l)
{
    return filter(l, negative, NULL);
}

bool rl_is_zero(const rlist *l)
{
    for (size_t i = 0; i < rl_len(l); i++)
        if (!qty_is_zero(&l->e[i].q)) return false;
    return true;
}

bool rl_same_names(const rlist *a, const rlist *b)
{
    if (rl_len(a) != rl_len(b)) return false;
    for (size_t i = 0; i < rl_len(a); i++)
        if (strcmp(ename(&a->e[i]), ename(&b->e[i])) != 0) return false;
    return true;
}

bool rl_has_names(const rlist *l, const rlist *names)
{
    size_t i = 0;
    for (size_t k = 0; k < rl_len(names); k++) {
        const char *want = ename(&names->e[k]);
        int c = -1;
        while (i < rl_len(l) && (c = strcmp(ename(&l->e[i]), want)) < 0)
            i++;
        if (c != 0) return false;
    }
    return true;
}

bool rl_equal(const rlist *a, const rlist *b)
{
    if (!rl_same_names(a, b)) return false;
    for (size_t i = 0; i < rl_len(a); i++)
        if (qty_cmp(&a->e[i].q, &b->e[i].q) != 0) return false;
    return true;
}

int rl_from_json(const json_t *obj, rlist *out, const char **bad)
{
    const char *k;
    json_t *v;
    if (!obj || json_is_null(obj)) return 0;
    if (!json_is_object(obj)) return RL_EINVAL;
    json_object_foreach((json_t *)obj, k, v)
    {
        qty q;
        int rc = qty_from_json(v, &q);
        if (!rc) rc = rl_set(out, k, &q);
        if (rc) {
            if (bad) *bad = k;
            return rc;
        }
    }
    return 0;
}

json_t *rl_to_json(const rlist *l)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < rl_len(l); i++) {
        if (json_object_set_new(o, ename(&l->e[i]), qty_to_json(&l->e[i].q))) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

int rl_format_names(const rlist *l, const char *sep, dbuf *out)
{
    for (size_t i = 0; i < rl_len(l); i++) {
        if ((i && dbuf_adds(out, sep)) || dbuf_adds(out, ename(&l->e[i]))) return RL_ENOMEM;
    }
    return 0;
}

int rl_format(const rlist *l, dbuf *out)
{
    char v[QTY_STR_MAX];
    for (size_t i = 0; i < rl_len(l); i++) {
        qty_format_str(&l->e[i].q, v, sizeof v);
        if (dbuf_printf(out, "%s%s=%s", i ? "," : "", ename(&l->e[i]), v)) return RL_ENOMEM;
    }
    return 0;
}
