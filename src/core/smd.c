/* smd.c - structured merge-diff over jansson values (see smd.h). */
#include "core/smd.h"
#include "core/jdump.h"

#include "core/fieldset_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sctx {
    const fs_schema *sch;
    fs_limits lim;
    size_t nodes;
    int code;
    char *err;
    size_t errlen;
} sctx;

static void sctx_init(sctx *c, const fs_schema *sch, const fs_limits *lim, char *err, size_t n)
{
    fs_limits d = {FS_DEFAULT_MAX_DEPTH, FS_DEFAULT_MAX_NODES, FS_DEFAULT_MAX_TEXT};
    c->sch = sch ? sch : &fs_untyped;
    c->lim = d;
    if (lim && lim->max_depth) c->lim.max_depth = lim->max_depth;
    if (lim && lim->max_nodes) c->lim.max_nodes = lim->max_nodes;
    c->nodes = 0;
    c->code = 0;
    c->err = err;
    c->errlen = n;
    if (err && n) err[0] = '\0';
}

static int fail(sctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(sctx *c, int code, const char *fmt, ...)
{
    if (c->code) return c->code;
    c->code = code;
    if (c->err && c->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->err, c->errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* One more node visited; false past the limit (c->code set). */
static bool count(sctx *c)
{
    if (++c->nodes <= c->lim.max_nodes) return true;
    fail(c, FS_ERR_LIMIT, "object has too many fields");
    return false;
}

static bool too_deep(sctx *c, unsigned depth)
{
    if (depth <= c->lim.max_depth) return false;
    fail(c, FS_ERR_LIMIT, "object nested too deeply");
    return true;
}

static const fs_type untyped = {NULL, 0};

static fs_type field_type(sctx *c, fs_type t, const char *name, unsigned *flags)
{
    *flags = 0;
    return c->sch->field(c->sch, t, name, flags);
}

static fs_list_info shape(sctx *c, fs_type t, bool is_list)
{
    fs_list_info li = {is_list ? FS_LIST_ATOMIC : FS_LIST_MAP, NULL, 0, NULL};
    c->sch->shape(c->sch, t, is_list, &li);
    return li;
}

static bool empty_container(const json_t *v)
{
    return !v || (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

/* A deep copy, counted against the limits (an aliased YAML subtree is
 * shared in the input and expands here). */
static json_t *copy(sctx *c, const json_t *v, unsigned depth)
{
    if (too_deep(c, depth) || !count(c)) return NULL;
    json_t *out = NULL;
    if (json_is_object(v)) {
        out = json_object();
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            json_t *cx = out ? copy(c, x, depth + 1) : NULL;
            if (!cx || json_object_set_new(out, k, cx)) {
                json_decref(out);
                return NULL;
            }
        }
    } else if (json_is_array(v)) {
        out = json_array();
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
        {
            json_t *cx = out ? copy(c, x, depth + 1) : NULL;
            if (!cx || json_array_append_new(out, cx)) {
                json_decref(out);
                return NULL;
            }
        }
    } else {
        out = jcopy(v); /* a scalar */
    }
    if (!out) fail(c, FS_ERR_NOMEM, "out of memory");
    return out;
}

/* ---- list items by path element ---- */

typedef struct litem {
    fs_node pe;
    const json_t *v;
    size_t order;
    bool dup; /* a later item under the same element */
} litem;

typedef struct lindex {
    litem *items; /* in list order */
    litem **sorted;
    size_t n;
} lindex;

static void lindex_free(lindex *x)
{
    for (size_t i = 0; x->items && i < x->n; i++)
        json_decref(x->items[i].pe.val);
    free(x->items);
    free(x->sorted);
    memset(x, 0, sizeof *x);
}

static int litem_cmp_q(const void *a, const void *b)
{
    const litem *x = *(litem *const *)a, *y = *(litem *const *)b;
    int r = fsi_pe_cmp(&x->pe, &y->pe);
    return r ? r : x->order < y->order ? -1 : x->order > y->order;
}

/* Index the items of arr. 0; 1 when an item cannot be keyed; -1 with
 * c->code set. *dups says whether an element repeats. */
static int lindex_build(sctx *c, const json_t *arr, const fs_list_info *li, lindex *x, bool *dups)
{
    size_t n = json_array_size(arr);
    memset(x, 0, sizeof *x);
    *dups = false;
    x->items = calloc(n ? n : 1, sizeof *x->items);
    x->sorted = calloc(n ? n : 1, sizeof *x->sorted);
    if (!x->items || !x->sorted) {
        lindex_free(x);
        return fail(c, FS_ERR_NOMEM, "out of memory"), -1;
    }
    for (size_t i = 0; i < n; i++) {
        litem *it = &x->items[i];
        it->v = json_array_get(arr, i);
        it->order = i;
        int r = fsi_item_pe(it->v, li, &it->pe);
        x->n = i + (r == 0);
        if (r < 0) {
            lindex_free(x);
            return fail(c, FS_ERR_NOMEM, "out of memory"), -1;
        }
        if (r > 0) {
            lindex_free(x);
            return 1;
        }
        x->sorted[i] = it;
    }
    qsort(x->sorted, n, sizeof *x->sorted, litem_cmp_q);
    for (size_t i = 1; i < n; i++)
        if (fsi_pe_cmp(&x->sorted[i - 1]->pe, &x->sorted[i]->pe) == 0) {
            x->sorted[i]->dup = true;
            *dups = true;
        }
    return 0;
}

/* The first item under element e, or NULL. */
static litem *lindex_find(const lindex *x, const fs_node *e)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = fsi_pe_cmp(&x->sorted[mid]->pe, e);
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < x->n && fsi_pe_cmp(&x->sorted[lo]->pe, e) == 0 ? x->sorted[lo] : NULL;
}

/* The printed element, for messages. */
static void pe_describe(const fs_node *pe, char *buf, size_t n)
{
    char *s = jdump(pe->val, NULL);
    snprintf(buf, n, "%s", s ? s : "?");
    free(s);
}

/* ---- merge ---- */

static json_t *merge(sctx *c, const json_t *l, const json_t *r, fs_type t, unsigned depth);

static int merge_append(sctx *c, json_t *out, const json_t *l, const json_t *r, fs_type it,
                        unsigned depth)
{
    json_t *v = merge(c, l, r, it, depth);
    if (!v || json_array_append_new(out, v)) return fail(c, FS_ERR_NOMEM, "out of memory");
    return 0;
}

/* lhs-only item: it, and its repeats (kept in place after it). */
static int keep_lhs_item(sctx *c, json_t *out, const lindex *L, const litem *li, fs_type it,
                         unsigned depth)
{
    if (merge_append(c, out, li->v, NULL, it, depth)) return -1;
    for (size_t k = li->order + 1; k < L->n; k++)
        if (L->items[k].dup && fsi_pe_cmp(&L->items[k].pe, &li->pe) == 0 &&
            merge_append(c, out, L->items[k].v, NULL, it, depth))
            return -1;
    return 0;
}

/* upstream's visitListItems order: live items in their order; an applied
 * item both hold is taken where the applied order reaches it; new applied
 * items go before the next shared one. */
static json_t *merge_keyed(sctx *c, const lindex *L, const lindex *R, fs_type it, unsigned depth)
{
    json_t *out = json_array();
    litem **shared = calloc(R->n ? R->n : 1, sizeof *shared);
    size_t nshared = 0, si = 0;
    if (!out || !shared) goto nomem;
    for (size_t i = 0; i < R->n; i++)
        if (lindex_find(L, &R->items[i].pe)) shared[nshared++] = &R->items[i];
    const litem *next = si < nshared ? shared[si++] : NULL;
    size_t lI = 0, rI = 0;
    while (lI < L->n || rI < R->n) {
        if (lI < L->n && L->items[lI].dup) { /* emitted with its first */
            lI++;
            continue;
        }
        const litem *lp = lI < L->n ? &L->items[lI] : NULL;
        const litem *rp = rI < R->n ? &R->items[rI] : NULL;
        if (lp && rp) {
            if (fsi_pe_cmp(&lp->pe, &rp->pe) == 0) {
                if (merge_append(c, out, lp->v, rp->v, it, depth)) goto fail;
                lI++, rI++;
                next = si < nshared ? shared[si++] : NULL;
                continue;
            }
            if (lindex_find(R, &lp->pe) && next && fsi_pe_cmp(&next->pe, &lp->pe) != 0) {
                lI++; /* shared, taken later in the applied order */
                continue;
            }
        }
        if (lp && !lindex_find(R, &lp->pe)) {
            if (keep_lhs_item(c, out, L, lp, it, depth)) goto fail;
            lI++;
            continue;
        }
        if (rp) {
            const litem *m = lindex_find(L, &rp->pe);
            if (merge_append(c, out, m ? m->v : NULL, rp->v, it, depth)) goto fail;
            rI++;
            if (next && fsi_pe_cmp(&next->pe, &rp->pe) == 0)
                next = si < nshared ? shared[si++] : NULL;
            continue;
        }
        lI++; /* a shared live item whose applied twin is behind us */
    }
    free(shared);
    return out;
nomem:
    fail(c, FS_ERR_NOMEM, "out of memory");
fail:
    free(shared);
    json_decref(out);
    return NULL;
}

static json_t *merge_list(sctx *c, const json_t *l, const json_t *r, fs_type t, unsigned depth)
{
    fs_list_info li = shape(c, t, true);
    if (li.type == FS_LIST_ATOMIC || (empty_container(l) && empty_container(r)))
        return copy(c, r, depth);
    lindex L, R;
    bool ldups, rdups;
    int lr = lindex_build(c, l, &li, &L, &ldups);
    if (lr < 0) return NULL;
    if (lr > 0) return copy(c, r, depth); /* a stored list that cannot be keyed: atomic */
    int rr = lindex_build(c, r, &li, &R, &rdups);
    json_t *out = NULL;
    char what[256];
    if (rr > 0) {
        fail(c, FS_ERR_INVALID, "associative list with keys has an element that %s",
             li.type == FS_LIST_MAP ? "omits a key field or is not a map" : "cannot be keyed");
    } else if (rr == 0 && rdups) {
        for (size_t i = 1; i < R.n; i++)
            if (R.sorted[i]->dup) {
                pe_describe(&R.sorted[i]->pe, what, sizeof what);
                break;
            }
        fail(c, FS_ERR_INVALID, "duplicate entries for key %s", what);
    } else if (rr == 0) {
        fs_type it = li.type == FS_LIST_MAP ? c->sch->items(c->sch, t) : untyped;
        out = merge_keyed(c, &L, &R, it, depth + 1);
    }
    lindex_free(&L);
    lindex_free(&R);
    return out;
}

static json_t *merge_map(sctx *c, const json_t *l, const json_t *r, fs_type t, unsigned depth)
{
    fs_list_info li = shape(c, t, false);
    if (li.type == FS_LIST_ATOMIC || (empty_container(l) && empty_container(r)))
        return copy(c, r, depth);
    json_t *out = json_object();
    if (!out) return fail(c, FS_ERR_NOMEM, "out of memory"), NULL;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)l, k, x)
    {
        unsigned fl;
        json_t *v = merge(c, x, json_object_get(r, k), field_type(c, t, k, &fl), depth + 1);
        if (!v || json_object_set_new(out, k, v)) goto fail;
    }
    json_object_foreach((json_t *)r, k, x)
    {
        if (json_object_get(l, k)) continue;
        unsigned fl;
        json_t *v = merge(c, NULL, x, field_type(c, t, k, &fl), depth + 1);
        if (!v || json_object_set_new(out, k, v)) goto fail;
    }
    return out;
fail:
    fail(c, FS_ERR_NOMEM, "out of memory");
    json_decref(out);
    return NULL;
}

static json_t *merge(sctx *c, const json_t *l, const json_t *r, fs_type t, unsigned depth)
{
    if (!r) return copy(c, l, depth);
    if (!l) return copy(c, r, depth);
    if (too_deep(c, depth) || !count(c)) return NULL;
    if (json_is_object(l) && json_is_object(r)) return merge_map(c, l, r, t, depth);
    if (json_is_array(l) && json_is_array(r)) return merge_list(c, l, r, t, depth);
    return copy(c, r, depth);
}

json_t *smd_merge(const json_t *live, const json_t *config, const fs_schema *sch, fs_type root,
                  const fs_limits *lim, int *code, char *err, size_t errlen)
{
    sctx c;
    sctx_init(&c, sch, lim, err, errlen);
    json_t *out = NULL;
    if (!json_is_object(config) || (live && !json_is_object(live)))
        fail(&c, FS_ERR_INVALID, "not an object");
    else
        out = live ? merge(&c, live, config, root, 0) : copy(&c, config, 0);
    if (c.code) {
        json_decref(out);
        out = NULL;
    }
    if (code) *code = c.code;
    return out;
}

/* ---- compare ---- */

/* A path being walked, whose nodes in the three result sets are made only
 * when something below them is inserted: each element is met once per
 * parent in a walk, so a node is appended without a search, and every
 * level is sorted at the end. */
typedef struct lpath {
    struct lpath *up; /* NULL: the root */
    const fs_node *pe;
    fs_node *made[3];
} lpath;

enum { ADDED, REMOVED, MODIFIED };

typedef struct cmpctx {
    sctx *c;
    fs_set *sets[3];
    json_t *empty, *empty_list; /* what an unset FS_FIELD_VALUE field is: read only */
} cmpctx;

static fs_node *lpath_node(cmpctx *x, lpath *p, int which)
{
    if (p->made[which]) return p->made[which];
    if (!p->up) return p->made[which] = &x->sets[which]->root;
    fs_node *parent = lpath_node(x, p->up, which);
    if (!parent) return NULL;
    if (!count(x->c)) return NULL;
    fs_node *n = fsi_node_pe_copy(p->pe);
    if (!n || fsi_kids_push(parent, n)) {
        fsi_node_free(n);
        fail(x->c, FS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return p->made[which] = n;
}

static int insert(cmpctx *x, lpath *p, int which)
{
    if (!p->up) return 0; /* nobody owns the whole object */
    fs_node *n = lpath_node(x, p, which);
    if (!n) return x->c->code ? x->c->code : FS_ERR_NOMEM;
    n->member = true;
    return 0;
}

static int cmp(cmpctx *x, const json_t *l, const json_t *r, fs_type t, lpath *p, unsigned depth);

static int leaf(cmpctx *x, const json_t *l, const json_t *r, lpath *p)
{
    if (!l) return insert(x, p, ADDED);
    if (!r) return insert(x, p, REMOVED);
    return fsi_val_cmp(l, r) ? insert(x, p, MODIFIED) : 0;
}

/* A child of the maps l and r (either may be absent). */
static int cmp_child(cmpctx *x, const json_t *l, const json_t *r, fs_type t, const char *k,
                     lpath *p, unsigned depth)
{
    unsigned fl;
    fs_type ft = field_type(x->c, t, k, &fl);
    const json_t *lv = json_object_get(l, k), *rv = json_object_get(r, k);
    if (fl & FS_FIELD_VALUE) { /* Go always has it where its parent is: empty when unset */
        if (!lv && l) lv = json_is_array(rv) ? x->empty_list : json_is_object(rv) ? x->empty : NULL;
        if (!rv && r) rv = json_is_array(lv) ? x->empty_list : json_is_object(lv) ? x->empty : NULL;
    }
    fs_node pe = {.kind = PE_FIELD, .name = (char *)k};
    lpath child = {p, &pe, {NULL, NULL, NULL}};
    return cmp(x, lv, rv, ft, &child, depth + 1);
}

static int cmp_map(cmpctx *x, const json_t *l, const json_t *r, fs_type t, lpath *p, unsigned depth)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)l, k, v)
    {
        if (cmp_child(x, l, r, t, k, p, depth)) return x->c->code;
    }
    json_object_foreach((json_t *)r, k, v)
    {
        if (!json_object_get(l, k) && cmp_child(x, l, r, t, k, p, depth)) return x->c->code;
    }
    return 0;
}

static int cmp_list(cmpctx *x, const json_t *l, const json_t *r, fs_type t, const fs_list_info *li,
                    lpath *p, unsigned depth)
{
    lindex L = {0}, R = {0};
    bool dups;
    int lr = l ? lindex_build(x->c, l, li, &L, &dups) : 0;
    int rr = lr == 0 && r ? lindex_build(x->c, r, li, &R, &dups) : 0;
    if (lr < 0 || rr < 0) {
        lindex_free(&L);
        return x->c->code;
    }
    if (lr > 0 || rr > 0) { /* cannot be keyed: compared as one value */
        lindex_free(&L);
        lindex_free(&R);
        return leaf(x, l, r, p);
    }
    fs_type it = li->type == FS_LIST_MAP ? x->c->sch->items(x->c->sch, t) : untyped;
    int rc = 0;
    for (size_t i = 0; !rc && i < L.n; i++) {
        if (L.items[i].dup) continue;
        const litem *m = lindex_find(&R, &L.items[i].pe);
        lpath child = {p, &L.items[i].pe, {NULL, NULL, NULL}};
        rc = cmp(x, L.items[i].v, m ? m->v : NULL, it, &child, depth + 1);
    }
    for (size_t i = 0; !rc && i < R.n; i++) {
        if (R.items[i].dup || lindex_find(&L, &R.items[i].pe)) continue;
        lpath child = {p, &R.items[i].pe, {NULL, NULL, NULL}};
        rc = cmp(x, NULL, R.items[i].v, it, &child, depth + 1);
    }
    lindex_free(&L);
    lindex_free(&R);
    return rc;
}

static int cmp(cmpctx *x, const json_t *l, const json_t *r, fs_type t, lpath *p, unsigned depth)
{
    if (too_deep(x->c, depth) || !count(x->c)) return x->c->code;
    bool maps = (!l || json_is_object(l)) && (!r || json_is_object(r));
    bool lists = (!l || json_is_array(l)) && (!r || json_is_array(r));
    int rc;
    if (maps || lists) {
        fs_list_info li = shape(x->c, t, lists);
        if ((p->up && li.type == FS_LIST_ATOMIC) || (empty_container(l) && empty_container(r)))
            return leaf(x, l, r, p);
        rc = maps ? cmp_map(x, l, r, t, p, depth) : cmp_list(x, l, r, t, &li, p, depth);
        if (rc) return rc;
        if (!l) return insert(x, p, ADDED);
        if (!r) return insert(x, p, REMOVED);
        return 0;
    }
    return leaf(x, l, r, p);
}

static int sort_all(fs_node *n)
{
    if (fsi_finish_level(n)) return -1;
    for (size_t i = 0; i < n->nkids; i++)
        if (sort_all(n->kids[i])) return -1;
    return 0;
}

void smd_diff_free(smd_diff *d)
{
    if (!d) return;
    fs_free(d->added);
    fs_free(d->removed);
    fs_free(d->modified);
    d->added = d->removed = d->modified = NULL;
}

int smd_compare(const json_t *lhs, const json_t *rhs, const fs_schema *sch, fs_type root,
                const fs_limits *lim, smd_diff *out, char *err, size_t errlen)
{
    sctx c;
    sctx_init(&c, sch, lim, err, errlen);
    cmpctx x = {&c, {fs_new(), fs_new(), fs_new()}, json_object(), json_array()};
    lpath top = {NULL, NULL, {NULL, NULL, NULL}};
    out->added = out->removed = out->modified = NULL;
    if (!x.sets[0] || !x.sets[1] || !x.sets[2] || !x.empty || !x.empty_list)
        fail(&c, FS_ERR_NOMEM, "out of memory");
    else if ((lhs && !json_is_object(lhs)) || (rhs && !json_is_object(rhs)))
        fail(&c, FS_ERR_INVALID, "not an object");
    else if (!cmp(&x, lhs ? lhs : x.empty, rhs ? rhs : x.empty, root, &top, 0))
        for (int i = 0; i < 3; i++)
            if (sort_all(&x.sets[i]->root)) fail(&c, FS_ERR_NOMEM, "out of memory");
    json_decref(x.empty);
    json_decref(x.empty_list);
    if (c.code) {
        for (int i = 0; i < 3; i++)
            fs_free(x.sets[i]);
        return c.code;
    }
    out->added = x.sets[ADDED];
    out->removed = x.sets[REMOVED];
    out->modified = x.sets[MODIFIED];
    return FS_OK;
}

/* ---- remove ---- */

static json_t *rm(sctx *c, const json_t *v, const fs_node *n, fs_type t, unsigned depth,
                  const fs_list_info *keyed);

/* A child's value after removal; NULL with *drop when it goes. `keyed`:
 * the child is an item of that keyed list. */
static json_t *rm_child(sctx *c, const json_t *v, const fs_node *kid, fs_type t, unsigned depth,
                        const fs_list_info *keyed, bool *drop)
{
    *drop = false;
    if (kid && kid->member) {
        *drop = true;
        return NULL;
    }
    if (!kid || kid->nkids == 0) return copy(c, v, depth);
    json_t *out = rm(c, v, kid, t, depth, keyed);
    if (out && empty_container(out) && !empty_container(v)) {
        json_decref(out);
        *drop = true;
        return NULL;
    }
    return out;
}

static bool is_key(const fs_list_info *keyed, const char *k)
{
    for (size_t i = 0; keyed && i < keyed->nkeys; i++)
        if (!strcmp(keyed->keys[i], k)) return true;
    return false;
}

/* v without what n holds. An item of a keyed list keeps its key fields: an
 * item goes whole or not at all (a set that would take only its key, as
 * entries that do not match their object may say, leaves it). */
static json_t *rm(sctx *c, const json_t *v, const fs_node *n, fs_type t, unsigned depth,
                  const fs_list_info *keyed)
{
    bool is_list = json_is_array(v);
    if ((!json_is_object(v) && !is_list) || shape(c, t, is_list).type == FS_LIST_ATOMIC)
        return copy(c, v, depth);
    if (too_deep(c, depth) || !count(c)) return NULL;
    if (!is_list) {
        json_t *out = json_object();
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
        {
            fs_node probe = {.kind = PE_FIELD, .name = (char *)k};
            unsigned fl;
            bool drop;
            const fs_node *kid = is_key(keyed, k) ? NULL : fsi_find_kid(n, &probe);
            json_t *cv =
                out ? rm_child(c, x, kid, field_type(c, t, k, &fl), depth + 1, NULL, &drop) : NULL;
            if (!out || (!cv && !drop) || (cv && json_object_set_new(out, k, cv))) {
                json_decref(out);
                return fail(c, FS_ERR_NOMEM, "out of memory"), NULL;
            }
        }
        return out;
    }
    fs_list_info li = shape(c, t, true);
    lindex L;
    bool dups;
    int lr = lindex_build(c, v, &li, &L, &dups);
    if (lr < 0) return NULL;
    if (lr > 0) return copy(c, v, depth);
    fs_type it = li.type == FS_LIST_MAP ? c->sch->items(c->sch, t) : untyped;
    json_t *out = json_array();
    for (size_t i = 0; out && i < L.n; i++) {
        bool drop;
        json_t *cv = rm_child(c, L.items[i].v, fsi_find_kid(n, &L.items[i].pe), it, depth + 1,
                              li.type == FS_LIST_MAP ? &li : NULL, &drop);
        if ((!cv && !drop) || (cv && json_array_append_new(out, cv))) {
            json_decref(out);
            out = NULL;
        }
    }
    lindex_free(&L);
    if (!out) fail(c, FS_ERR_NOMEM, "out of memory");
    return out;
}

json_t *smd_remove(const json_t *obj, const fs_set *items, const fs_schema *sch, fs_type root,
                   const fs_limits *lim)
{
    sctx c;
    sctx_init(&c, sch, lim, NULL, 0);
    if (!items || items->root.nkids == 0) return copy(&c, obj, 0);
    return json_is_object(obj) ? rm(&c, obj, &items->root, root, 0, NULL) : copy(&c, obj, 0);
}

/* ---- named fields ---- */

static int named(const fs_schema *sch, const fs_node *in, fs_node *out, fs_type t)
{
    for (size_t i = 0; i < in->nkids; i++) {
        const fs_node *k = in->kids[i];
        fs_node *o = fsi_node_pe_copy(k);
        if (!o || fsi_kids_push(out, o)) {
            fsi_node_free(o);
            return -1;
        }
        o->member = k->member;
        unsigned fl = 0;
        fs_type ct = k->kind == PE_FIELD ? sch->field(sch, t, k->name, &fl) : sch->items(sch, t);
        if (k->kind == PE_FIELD && k->nkids && (fl & FS_FIELD_NAMED)) o->member = true;
        if (named(sch, k, o, ct)) return -1;
    }
    return 0;
}

fs_set *smd_named_members(const fs_set *s, const fs_schema *sch, fs_type root)
{
    fs_set *out = fs_new();
    if (!out || !s) return out;
    if (named(sch ? sch : &fs_untyped, &s->root, &out->root, root)) {
        fs_free(out);
        return NULL;
    }
    return out;
}

bool smd_equal(const json_t *a, const json_t *b)
{
    if (!a || !b) return a == b;
    return fsi_val_cmp(a, b) == 0;
}
