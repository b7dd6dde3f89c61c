/* pool.c - ResourcePool decisions (see pool.h for the model).
 *
 * A state keeps every claim of the pool in a hash map by "namespace/uid",
 * the waiting ones also in an array sorted by claim order, and each one in
 * its namespace's list. The used totals are one rlist.
 *
 * Every operation runs as plan-then-commit so that it is atomic: the change
 * and the settling of the waiting claims are worked out in "plan" fields of
 * the entries they touch and in double-buffered lists (totals, exhaustions),
 * everything that can fail happens there, and the commit only moves
 * pointers. Structural changes made before planning (a new entry in the map,
 * an entry inserted into the waiting array with reserved room, a request
 * swapped in) are undone by plan_abort.
 */
#include "core/pool.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dbuf.h"
#include "core/strmap.h"

#define P_REMOVED (-1) /* planned outcome: the claim leaves the pool */
#define MSG_MAX (1u << 20)

typedef struct nsb nsb;
typedef struct pentry pentry;

struct pentry {
    pool_status st;
    char *strs; /* "ns\0name\0uid\0": st.namespace_, st.name, st.uid point into it */
    char *key;  /* "ns/uid" */
    rlist *request;
    rlist *stored; /* bound: the allocation; NULL when waiting */
    char *message; /* waiting: the message; NULL when bound */
    rlist *shown;  /* waiting: the values the message shows (available or queued) */
    nsb *ns;
    pentry *nprev, *nnext;
    /* plan (valid while mark == the state's epoch) */
    uint64_t mark;
    int p_out;      /* planned outcome, or P_REMOVED */
    bool p_new;     /* added by this operation (in the map and its namespace list) */
    bool p_waitins; /* inserted into the waiting array by this operation */
    bool p_dirty;   /* its message must be written again */
    bool p_setstored, p_setmsg;
    rlist *p_stored, *p_shown, *p_oldreq;
    char *p_message;
    size_t p_didx; /* its record in the delta, or SIZE_MAX */
};

struct nsb {
    char *name;
    pentry *head;
    size_t n;
};

struct pool_state {
    strmap *by_key; /* "ns/uid" -> pentry */
    strmap *by_ns;  /* ns -> nsb */
    pentry **wait;  /* the waiting claims in claim order */
    size_t nwait, capwait;
    size_t nbound;
    rlist *total, *total_next;
    rlist *exh_req, *exh_avail, *exh_req_next, *exh_avail_next;
    /* plan */
    uint64_t epoch;
    pentry **touched;
    size_t ntouched, captouched;
    rlist *keys, *shown; /* scratch */
};

/* ---- order ---- */

static int order_cmp(int64_t ta, const char *na, const char *nsa, const char *ua, int64_t tb,
                     const char *nb, const char *nsb_, const char *ub)
{
    if (ta != tb) return ta < tb ? -1 : 1;
    int c = strcmp(na, nb);
    if (!c) c = strcmp(nsa, nsb_);
    if (!c) c = strcmp(ua, ub);
    return c < 0 ? -1 : c > 0;
}

int pool_claim_cmp(const pool_claim *a, const pool_claim *b)
{
    return order_cmp(a->created, a->name, a->namespace_, a->uid, b->created, b->name, b->namespace_,
                     b->uid);
}

static int entry_cmp(const pentry *a, const pentry *b)
{
    return order_cmp(a->st.created, a->st.name, a->st.namespace_, a->st.uid, b->st.created,
                     b->st.name, b->st.namespace_, b->st.uid);
}

static int entry_qcmp(const void *a, const void *b)
{
    return entry_cmp(*(pentry *const *)a, *(pentry *const *)b);
}

static int status_qcmp(const void *a, const void *b)
{
    const pool_status *x = *(const pool_status *const *)a, *y = *(const pool_status *const *)b;
    return order_cmp(x->created, x->name, x->namespace_, x->uid, y->created, y->name, y->namespace_,
                     y->uid);
}

/* ---- quantities ---- */

/* Equal as printed: same names, values and formats (zeros print "0" whatever their format). */
static bool same_print(const rlist *a, const rlist *b)
{
    if (rl_len(a) != rl_len(b)) return false;
    for (size_t i = 0; i < rl_len(a); i++) {
        const qty *x = rl_qty(a, i), *y = rl_qty(b, i);
        if (strcmp(rl_name(a, i), rl_name(b, i)) || qty_cmp(x, y)) return false;
        if (!qty_is_zero(x) && qty_get_format(x) != qty_get_format(y)) return false;
    }
    return true;
}

/* Numerically equal, a missing key counting as 0. */
static bool num_equal0(const rlist *a, const rlist *b)
{
    for (int pass = 0; pass < 2; pass++) {
        const rlist *x = pass ? b : a, *y = pass ? a : b;
        for (size_t i = 0; i < rl_len(x); i++) {
            const qty *o = rl_get(y, rl_name(x, i));
            if (o ? qty_cmp(rl_qty(x, i), o) != 0 : !qty_is_zero(rl_qty(x, i))) return false;
        }
    }
    return true;
}

/* max(0, hard - (total - old)) for resource r; old may be NULL. */
static int avail_of(const qty *h, const rlist *total, const rlist *old, const char *r, qty *out)
{
    qty a = *h;
    const qty *t = rl_get(total, r), *o = old ? rl_get(old, r) : NULL;
    int rc = t ? qty_sub(&a, t) : 0;
    if (!rc && o) rc = qty_add(&a, o);
    if (rc) return rc;
    *out = qty_sign(&a) > 0 ? a : qty_zero(QTY_DECIMAL_SI);
    return 0;
}

/* v with format f (the value is unchanged; it prints in f). */
static int with_format(const qty *v, qty_format f, qty *out)
{
    qty one = qty_from_int64(1, 0, f), r = one;
    int rc = qty_add(&r, v);
    if (!rc) rc = qty_sub(&r, &one);
    if (!rc) *out = r;
    return rc;
}

/* dst -= src, in place (a key missing from dst is inserted negated). */
static int sub_from(rlist *dst, const rlist *src)
{
    for (size_t i = 0; i < rl_len(src); i++) {
        qty n = *rl_qty(src, i);
        qty_neg(&n);
        int rc = rl_add_qty(dst, rl_name(src, i), &n);
        if (rc) return rc;
    }
    return 0;
}

/* dst = src, reusing dst's storage. */
static int copy_into(rlist *dst, const rlist *src)
{
    rl_clear(dst);
    return rl_add_to(dst, src);
}

/* The fit rule: each resource of req fits when the pool holds it and
 * req <= max(0, hard - (total - old)). *fits: all fit. `ex` (may be NULL)
 * receives the resources that do not fit with the available amount. */
static int fit(const rlist *req, const rlist *hard, const rlist *total, const rlist *old, rlist *ex,
               bool *fits)
{
    *fits = true;
    for (size_t i = 0; i < rl_len(req); i++) {
        const char *r = rl_name(req, i);
        const qty *h = rl_get(hard, r);
        qty a = qty_zero(QTY_DECIMAL_SI);
        if (h) {
            int rc = avail_of(h, total, old, r, &a);
            if (rc) return rc;
            if (qty_cmp(rl_qty(req, i), &a) <= 0) continue;
        }
        *fits = false;
        if (!ex) return 0;
        int rc = rl_set(ex, r, &a);
        if (rc) return rc;
    }
    return 0;
}

/* The resources req asks a non-zero amount of that are keys of `queue`;
 * `out` (may be NULL) receives them with queue's value. */
static int queued_on(const rlist *req, const rlist *queue, rlist *out, bool *any)
{
    *any = false;
    for (size_t i = 0; i < rl_len(req); i++) {
        const qty *v = rl_get(queue, rl_name(req, i));
        if (!v || qty_sign(rl_qty(req, i)) <= 0) continue;
        *any = true;
        if (!out) return 0;
        int rc = rl_set(out, rl_name(req, i), v);
        if (rc) return rc;
    }
    return 0;
}

static int has_negative(const rlist *l)
{
    for (size_t i = 0; i < rl_len(l); i++)
        if (qty_sign(rl_qty(l, i)) < 0) return 1;
    return 0;
}

/* ---- messages ---- */

static int msgf(char **msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A malloc'd message: POOL_DENIED, or POOL_ENOMEM. */
static int msgf(char **msg, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !(*msg = malloc((size_t)n + 1))) return POOL_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(*msg, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return POOL_DENIED;
}

/* "requested: r=q, <what>: r=v" for every resource of shown, "; "-joined. */
static int exhaustion_message(const rlist *req, const rlist *shown, const char *what, char **out)
{
    dbuf b;
    dbuf_init(&b, MSG_MAX);
    for (size_t i = 0; i < rl_len(shown); i++) {
        char q[QTY_STR_MAX], v[QTY_STR_MAX];
        const char *r = rl_name(shown, i);
        const qty *rq = rl_get(req, r);
        qty z = qty_zero(QTY_DECIMAL_SI);
        qty_format_str(rq ? rq : &z, q, sizeof q);
        qty_format_str(rl_qty(shown, i), v, sizeof v);
        if (dbuf_printf(&b, "%srequested: %s=%s, %s: %s=%s", i ? "; " : "", r, q, what, r, v)) {
            dbuf_free(&b);
            return POOL_ENOMEM;
        }
    }
    /* (dbuf_take of an empty buffer does not terminate it) */
    *out = b.len ? dbuf_take(&b, NULL) : strdup("");
    return *out ? 0 : POOL_ENOMEM;
}

/* ---- entries, namespaces, the waiting array ---- */

static char *join_key(const char *ns, const char *uid, char *buf, size_t len)
{
    size_t ln = strlen(ns), lu = strlen(uid);
    char *k = ln + lu + 2 <= len ? buf : malloc(ln + lu + 2);
    if (!k) return NULL;
    memcpy(k, ns, ln);
    k[ln] = '/';
    memcpy(k + ln + 1, uid, lu + 1);
    return k;
}

/* 0 (with *out NULL when absent) or POOL_ENOMEM. */
static int find_entry(const pool_state *s, const char *ns, const char *uid, pentry **out)
{
    char buf[256];
    char *k = join_key(ns, uid, buf, sizeof buf);
    if (!k) return POOL_ENOMEM;
    *out = strmap_get(s->by_key, k);
    if (k != buf) free(k);
    return 0;
}

static void entry_sync(pentry *e)
{
    e->st.request = e->request;
    e->st.allocated = e->stored;
    e->st.message = e->message;
}

static void entry_free(pentry *e)
{
    if (!e) return;
    free(e->strs);
    free(e->key);
    rl_free(e->request);
    rl_free(e->stored);
    rl_free(e->shown);
    free(e->message);
    free(e);
}

static int claim_ok(const pool_claim *c)
{
    if (!c || !c->namespace_ || !c->name || !c->uid) return POOL_EINVAL;
    return has_negative(c->request) ? POOL_EINVAL : 0;
}

static pentry *entry_new(const pool_claim *c)
{
    pentry *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    size_t ln = strlen(c->namespace_), lm = strlen(c->name), lu = strlen(c->uid);
    e->strs = malloc(ln + lm + lu + 3);
    e->key = join_key(c->namespace_, c->uid, NULL, 0);
    e->request = c->request ? rl_copy(c->request) : rl_new();
    if (!e->strs || !e->key || !e->request) {
        entry_free(e);
        return NULL;
    }
    memcpy(e->strs, c->namespace_, ln + 1);
    memcpy(e->strs + ln + 1, c->name, lm + 1);
    memcpy(e->strs + ln + lm + 2, c->uid, lu + 1);
    e->st.namespace_ = e->strs;
    e->st.name = e->strs + ln + 1;
    e->st.uid = e->strs + ln + lm + 2;
    e->st.created = c->created;
    e->st.outcome = POOL_NONE;
    e->p_didx = SIZE_MAX;
    entry_sync(e);
    return e;
}

static nsb *ns_get(const pool_state *s, const char *ns)
{
    return strmap_get(s->by_ns, ns);
}

static nsb *ns_get_or_create(pool_state *s, const char *ns)
{
    nsb *b = ns_get(s, ns);
    if (b) return b;
    if (!(b = calloc(1, sizeof *b)) || !(b->name = strdup(ns)) ||
        strmap_put(s->by_ns, b->name, b, NULL)) {
        if (b) free(b->name);
        free(b);
        return NULL;
    }
    return b;
}

static void ns_drop_if_empty(pool_state *s, nsb *b)
{
    if (b->n) return;
    strmap_del(s->by_ns, b->name);
    free(b->name);
    free(b);
}

static void ns_link(nsb *b, pentry *e)
{
    e->ns = b;
    e->nprev = NULL;
    e->nnext = b->head;
    if (b->head) b->head->nprev = e;
    b->head = e;
    b->n++;
}

static void ns_unlink(pentry *e)
{
    nsb *b = e->ns;
    if (e->nprev)
        e->nprev->nnext = e->nnext;
    else
        b->head = e->nnext;
    if (e->nnext) e->nnext->nprev = e->nprev;
    b->n--;
    e->nprev = e->nnext = NULL;
}

static int wait_reserve(pool_state *s, size_t extra)
{
    if (s->nwait + extra <= s->capwait) return 0;
    size_t cap = s->capwait ? s->capwait * 2 : 16;
    while (cap < s->nwait + extra)
        cap *= 2;
    pentry **w = realloc(s->wait, cap * sizeof *w);
    if (!w) return POOL_ENOMEM;
    s->wait = w;
    s->capwait = cap;
    return 0;
}

/* Insert in claim order; room must be reserved. */
static void wait_insert(pool_state *s, pentry *e)
{
    size_t lo = 0, hi = s->nwait;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (entry_cmp(s->wait[mid], e) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(&s->wait[lo + 1], &s->wait[lo], (s->nwait - lo) * sizeof *s->wait);
    s->wait[lo] = e;
    s->nwait++;
}

static void wait_remove(pool_state *s, pentry *e)
{
    for (size_t i = 0; i < s->nwait; i++) {
        if (s->wait[i] != e) continue;
        memmove(&s->wait[i], &s->wait[i + 1], (s->nwait - i - 1) * sizeof *s->wait);
        s->nwait--;
        return;
    }
}

/* ---- state ---- */

static void swap_lists(rlist **a, rlist **b)
{
    rlist *t = *a;
    *a = *b;
    *b = t;
}

pool_state *pool_state_new(void)
{
    pool_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->by_key = strmap_new();
    s->by_ns = strmap_new();
    s->total = rl_new();
    s->total_next = rl_new();
    s->exh_req = rl_new();
    s->exh_avail = rl_new();
    s->exh_req_next = rl_new();
    s->exh_avail_next = rl_new();
    s->keys = rl_new();
    s->shown = rl_new();
    if (!s->by_key || !s->by_ns || !s->total || !s->total_next || !s->exh_req || !s->exh_avail ||
        !s->exh_req_next || !s->exh_avail_next || !s->keys || !s->shown) {
        pool_state_free(s);
        return NULL;
    }
    return s;
}

void pool_state_free(pool_state *s)
{
    if (!s) return;
    const char *k;
    void *v;
    for (size_t it = 0; s->by_key && strmap_next(s->by_key, &it, &k, &v);)
        entry_free(v);
    for (size_t it = 0; s->by_ns && strmap_next(s->by_ns, &it, &k, &v);) {
        free(((nsb *)v)->name);
        free(v);
    }
    strmap_free(s->by_key);
    strmap_free(s->by_ns);
    free(s->wait);
    free(s->touched);
    rl_free(s->total);
    rl_free(s->total_next);
    rl_free(s->exh_req);
    rl_free(s->exh_avail);
    rl_free(s->exh_req_next);
    rl_free(s->exh_avail_next);
    rl_free(s->keys);
    rl_free(s->shown);
    free(s);
}

const pool_status *pool_state_get(const pool_state *s, const char *ns, const char *uid)
{
    pentry *e = NULL;
    if (!s || !ns || !uid || find_entry(s, ns, uid, &e)) return NULL;
    return e ? &e->st : NULL;
}

size_t pool_state_count(const pool_state *s)
{
    return strmap_count(s->by_key);
}

size_t pool_state_nbound(const pool_state *s)
{
    return s->nbound;
}

int pool_state_list(const pool_state *s, bool bound_only, const pool_status ***out, size_t *n)
{
    size_t cap = bound_only ? s->nbound : strmap_count(s->by_key), m = 0;
    *out = NULL;
    *n = 0;
    if (!cap) return 0;
    const pool_status **a = malloc(cap * sizeof *a);
    if (!a) return POOL_ENOMEM;
    const char *k;
    void *v;
    for (size_t it = 0; strmap_next(s->by_key, &it, &k, &v);) {
        pentry *e = v;
        if (!bound_only || e->stored) a[m++] = &e->st;
    }
    qsort(a, m, sizeof *a, status_qcmp);
    *out = a;
    *n = m;
    return 0;
}

static int ns_bound(const pool_state *s, const char *ns, pentry ***out, size_t *n);

int pool_state_namespaces(const pool_state *s, const char ***out, size_t *n)
{
    size_t cap = strmap_count(s->by_ns), m = 0;
    *out = NULL;
    *n = 0;
    if (!cap) return 0;
    const char **a = malloc(cap * sizeof *a);
    if (!a) return POOL_ENOMEM;
    void *v;
    for (size_t it = 0; strmap_next(s->by_ns, &it, NULL, &v);)
        a[m++] = ((const nsb *)v)->name;
    *out = a;
    *n = m;
    return 0;
}

int pool_state_bound_in(const pool_state *s, const char *ns, const pool_status ***out, size_t *n)
{
    pentry **bound;
    size_t m;
    *out = NULL;
    *n = 0;
    int rc = ns_bound(s, ns, &bound, &m);
    const pool_status **a = !rc && m ? malloc(m * sizeof *a) : NULL;
    if (!rc && m && !a) rc = POOL_ENOMEM;
    for (size_t i = 0; a && i < m; i++)
        a[i] = &bound[i]->st;
    free(bound);
    if (a) {
        *out = a;
        *n = m;
    }
    return rc;
}

int pool_state_seed_bound(pool_state *s, const pool_claim *c)
{
    pentry *e = NULL;
    nsb *b = NULL;
    rlist *total = NULL;
    int rc = claim_ok(c);
    if (!rc) rc = find_entry(s, c->namespace_, c->uid, &e);
    if (rc) return rc;
    if (e) return POOL_EINVAL;
    if (!(e = entry_new(c)) || !(e->stored = rl_copy(e->request)) ||
        !(total = rl_add(s->total, e->stored)) || strmap_put(s->by_key, e->key, e, NULL)) {
        rl_free(total);
        entry_free(e);
        return POOL_ENOMEM; /* (or a sum out of range) */
    }
    if (!(b = ns_get_or_create(s, c->namespace_))) {
        strmap_del(s->by_key, e->key);
        rl_free(total);
        entry_free(e);
        return POOL_ENOMEM;
    }
    ns_link(b, e);
    swap_lists(&s->total, &total);
    rl_free(total);
    e->st.outcome = POOL_BOUND;
    entry_sync(e);
    s->nbound++;
    return 0;
}

/* ---- the delta ---- */

void pool_delta_init(pool_delta *d)
{
    memset(d, 0, sizeof *d);
}

void pool_delta_cleanup(pool_delta *d)
{
    for (size_t i = 0; i < d->nclaims; i++)
        free(d->claims[i].key_);
    for (size_t i = 0; i < d->nnamespaces; i++)
        free(d->namespaces[i]);
    free(d->claims);
    free(d->namespaces);
    strmap_free(d->seen_c);
    strmap_free(d->seen_n);
    memset(d, 0, sizeof *d);
}

/* The record of claim (key = "ns/uid"), appended with `before` when new. */
static int delta_claim(pool_delta *d, const char *key, const pool_status *st, pool_outcome before,
                       size_t *idx)
{
    if (!d->seen_c && !(d->seen_c = strmap_new())) return POOL_ENOMEM;
    void *v = strmap_get(d->seen_c, key);
    if (v) {
        *idx = (size_t)(uintptr_t)v - 1;
        return 0;
    }
    if (d->nclaims == d->capc) {
        size_t cap = d->capc ? d->capc * 2 : 16;
        pool_change *c = realloc(d->claims, cap * sizeof *c);
        if (!c) return POOL_ENOMEM;
        d->claims = c;
        d->capc = cap;
    }
    size_t lk = strlen(key), ln = strlen(st->namespace_), lm = strlen(st->name),
           lu = strlen(st->uid);
    char *buf = malloc(lk + ln + lm + lu + 4);
    if (!buf) return POOL_ENOMEM;
    pool_change *c = &d->claims[d->nclaims];
    memcpy(buf, key, lk + 1);
    c->namespace_ = memcpy(buf + lk + 1, st->namespace_, ln + 1);
    c->name = memcpy(buf + lk + ln + 2, st->name, lm + 1);
    c->uid = memcpy(buf + lk + ln + lm + 3, st->uid, lu + 1);
    c->key_ = buf;
    c->before = c->after = before;
    if (strmap_put(d->seen_c, buf, (void *)(uintptr_t)(d->nclaims + 1), NULL)) {
        free(buf);
        return POOL_ENOMEM;
    }
    *idx = d->nclaims++;
    return 0;
}

static int delta_ns(pool_delta *d, const char *ns)
{
    if (!d->seen_n && !(d->seen_n = strmap_new())) return POOL_ENOMEM;
    if (strmap_get(d->seen_n, ns)) return 0;
    if (d->nnamespaces == d->capn) {
        size_t cap = d->capn ? d->capn * 2 : 16;
        char **a = realloc(d->namespaces, cap * sizeof *a);
        if (!a) return POOL_ENOMEM;
        d->namespaces = a;
        d->capn = cap;
    }
    char *dup = strdup(ns);
    if (!dup || strmap_put(d->seen_n, dup, dup, NULL)) {
        free(dup);
        return POOL_ENOMEM;
    }
    d->namespaces[d->nnamespaces++] = dup;
    return 0;
}

/* Drop the records appended since (nc, nn). */
static void delta_rollback(pool_delta *d, size_t nc, size_t nn)
{
    while (d->nclaims > nc) {
        pool_change *c = &d->claims[--d->nclaims];
        strmap_del(d->seen_c, c->key_);
        free(c->key_);
    }
    while (d->nnamespaces > nn) {
        char *ns = d->namespaces[--d->nnamespaces];
        strmap_del(d->seen_n, ns);
        free(ns);
    }
}

/* ---- plan ---- */

static void plan_clear(pentry *e)
{
    e->p_new = e->p_waitins = e->p_dirty = e->p_setstored = e->p_setmsg = false;
    e->p_stored = e->p_shown = e->p_oldreq = NULL;
    e->p_message = NULL;
    e->p_didx = SIZE_MAX;
}

static int plan_begin(pool_state *s)
{
    s->epoch++;
    s->ntouched = 0;
    return copy_into(s->total_next, s->total);
}

/* Put e in the plan (once per operation). */
static int touch(pool_state *s, pentry *e)
{
    if (e->mark == s->epoch) return 0;
    if (s->ntouched == s->captouched) {
        size_t cap = s->captouched ? s->captouched * 2 : 16;
        pentry **t = realloc(s->touched, cap * sizeof *t);
        if (!t) return POOL_ENOMEM;
        s->touched = t;
        s->captouched = cap;
    }
    plan_clear(e);
    e->mark = s->epoch;
    e->p_out = e->st.outcome;
    s->touched[s->ntouched++] = e;
    return 0;
}

static bool planned(const pool_state *s, const pentry *e)
{
    return e->mark == s->epoch;
}

/* In the waiting array and still waiting in the plan. */
static bool waiting(const pool_state *s, const pentry *e)
{
    return !planned(s, e) || (e->p_out != P_REMOVED && e->p_out != POOL_BOUND);
}

static void plan_set_stored(pentry *e, rlist *stored)
{
    rl_free(e->p_stored);
    e->p_stored = stored;
    e->p_setstored = true;
}

static void plan_set_msg(pentry *e, char *msg, rlist *shown)
{
    free(e->p_message);
    rl_free(e->p_shown);
    e->p_message = msg;
    e->p_shown = shown;
    e->p_setmsg = true;
}

/* Bind a waiting claim with its request. */
static int plan_bind(pool_state *s, pentry *e)
{
    int rc = touch(s, e);
    if (rc) return rc;
    rlist *st = rl_copy(e->request);
    if (!st) return POOL_ENOMEM;
    if ((rc = rl_add_to(s->total_next, e->request))) {
        rl_free(st);
        return rc;
    }
    plan_set_stored(e, st);
    plan_set_msg(e, NULL, NULL);
    e->p_out = POOL_BOUND;
    return 0;
}

/* e (touched) leaves the pool. */
static int plan_remove(pool_state *s, pentry *e)
{
    int rc = e->stored ? sub_from(s->total_next, e->stored) : 0;
    if (!rc) e->p_out = P_REMOVED;
    return rc;
}

/* e (touched, bound) has a new request in place: fit it with its old amounts
 * excluded; it keeps its allocation with the new amounts or starts waiting. */
static int plan_resize(pool_state *s, const pool_view *pool, pentry *e)
{
    bool ok;
    int rc = fit(e->request, pool->hard, s->total_next, e->stored, NULL, &ok);
    if (!rc) rc = sub_from(s->total_next, e->stored);
    if (rc) return rc;
    if (ok) {
        rlist *st = rl_copy(e->request);
        if (!st) return POOL_ENOMEM;
        if ((rc = rl_add_to(s->total_next, e->request))) {
            rl_free(st);
            return rc;
        }
        plan_set_stored(e, st);
        e->p_out = POOL_BOUND;
        return 0;
    }
    if ((rc = wait_reserve(s, 1))) return rc;
    plan_set_stored(e, NULL);
    wait_insert(s, e);
    e->p_waitins = e->p_dirty = true;
    e->p_out = POOL_EXHAUSTED;
    return 0;
}

/* One pass over the waiting claims (step 2): bind what fits and is not queued. */
static int decide_pass(pool_state *s, const pool_view *pool, bool *bound_any)
{
    rlist *ex = pool->ordered_queue ? s->shown : NULL;
    int rc = 0;
    *bound_any = false;
    rl_clear(s->keys);
    for (size_t i = 0; !rc && i < s->nwait; i++) {
        pentry *e = s->wait[i];
        bool q = false, ok;
        if (!waiting(s, e)) continue;
        if (ex) {
            queued_on(e->request, s->keys, NULL, &q);
            if (q) continue;
            rl_clear(ex);
        }
        if ((rc = fit(e->request, pool->hard, s->total_next, NULL, ex, &ok))) break;
        if (ok) {
            rc = plan_bind(s, e);
            *bound_any = true;
            continue;
        }
        for (size_t k = 0; !rc && ex && k < rl_len(ex); k++)
            rc = rl_add_name(s->keys, rl_name(ex, k));
    }
    return rc;
}

/* The outcome of one waiting claim against the final totals (step 3). */
static int evaluate_one(pool_state *s, const pool_view *pool, pentry *e)
{
    rlist *sh = s->shown, *req_sum = s->exh_req_next;
    bool q = false, ok;
    int rc, out;
    rl_clear(sh);
    if (pool->ordered_queue && (rc = queued_on(e->request, req_sum, sh, &q))) return rc;
    if (q) {
        out = POOL_QUEUED;
    } else {
        if ((rc = fit(e->request, pool->hard, s->total_next, NULL, sh, &ok))) return rc;
        if (ok) return POOL_EINVAL; /* cannot happen: the last decide pass bound nothing */
        out = POOL_EXHAUSTED;
        for (size_t i = 0; i < rl_len(sh); i++) {
            const char *r = rl_name(sh, i);
            if ((rc = rl_add_qty(req_sum, r, rl_get(e->request, r))) ||
                (rc = rl_set(s->exh_avail_next, r, rl_qty(sh, i))))
                return rc;
        }
    }
    bool dirty = planned(s, e) && e->p_dirty;
    if (!dirty && (int)e->st.outcome == out && same_print(e->shown, sh)) {
        if (planned(s, e)) e->p_out = out;
        return 0;
    }
    char *msg = NULL;
    rlist *shown = NULL;
    if ((rc = touch(s, e)) ||
        (rc = exhaustion_message(e->request, sh, q ? "queued" : "available", &msg)))
        return rc;
    if (!(shown = rl_copy(sh))) {
        free(msg);
        return POOL_ENOMEM;
    }
    plan_set_msg(e, msg, shown);
    e->p_out = out;
    return 0;
}

/* Steps 2 and 3 over the waiting claims. */
static int settle(pool_state *s, const pool_view *pool)
{
    bool any = true;
    int rc = 0;
    while (!rc && any)
        rc = decide_pass(s, pool, &any);
    rl_clear(s->exh_req_next);
    rl_clear(s->exh_avail_next);
    for (size_t i = 0; !rc && i < s->nwait; i++)
        if (waiting(s, s->wait[i])) rc = evaluate_one(s, pool, s->wait[i]);
    return rc;
}

static void plan_abort(pool_state *s)
{
    for (size_t i = s->ntouched; i-- > 0;) {
        pentry *e = s->touched[i];
        rl_free(e->p_stored);
        rl_free(e->p_shown);
        free(e->p_message);
        if (e->p_oldreq) {
            rl_free(e->request);
            e->request = e->p_oldreq;
        }
        if (e->p_waitins) wait_remove(s, e);
        if (e->p_new) {
            nsb *b = e->ns;
            ns_unlink(e);
            ns_drop_if_empty(s, b);
            strmap_del(s->by_key, e->key);
            entry_free(e);
            continue;
        }
        plan_clear(e);
        e->mark = 0;
        entry_sync(e);
    }
    s->ntouched = 0;
}

static bool stored_changes(const pentry *e)
{
    return e->p_setstored || (e->p_out == P_REMOVED && e->stored);
}

/* Record the plan's changes in d (before the commit, which cannot fail). */
static int delta_prepare(pool_state *s, pool_delta *d)
{
    size_t nc = d->nclaims, nn = d->nnamespaces;
    int rc = 0;
    for (size_t i = 0; !rc && i < s->ntouched; i++) {
        pentry *e = s->touched[i];
        if (!e->p_new && e->p_out != P_REMOVED && !e->p_setstored && !e->p_setmsg &&
            e->p_out == (int)e->st.outcome)
            continue;
        rc = delta_claim(d, e->key, &e->st, e->p_new ? POOL_NONE : e->st.outcome, &e->p_didx);
        if (!rc && stored_changes(e)) rc = delta_ns(d, e->st.namespace_);
    }
    if (rc) delta_rollback(d, nc, nn);
    return rc;
}

static void commit_entry(pool_state *s, pentry *e)
{
    if (e->p_out == P_REMOVED) {
        nsb *b = e->ns;
        if (e->stored) s->nbound--;
        ns_unlink(e);
        ns_drop_if_empty(s, b);
        strmap_del(s->by_key, e->key);
        rl_free(e->p_oldreq);
        entry_free(e);
        return;
    }
    if (e->p_setstored) {
        s->nbound = s->nbound + (e->p_stored != NULL) - (e->stored != NULL);
        rl_free(e->stored);
        e->stored = e->p_stored;
    }
    if (e->p_setmsg) {
        free(e->message);
        rl_free(e->shown);
        e->message = e->p_message;
        e->shown = e->p_shown;
    }
    rl_free(e->p_oldreq);
    e->st.outcome = (pool_outcome)e->p_out;
    plan_clear(e);
    entry_sync(e);
}

static void plan_commit(pool_state *s, pool_delta *d)
{
    if (d) {
        d->allocation |= !num_equal0(s->total, s->total_next);
        d->exhaustions |= !same_print(s->exh_req, s->exh_req_next) ||
                          !same_print(s->exh_avail, s->exh_avail_next);
        for (size_t i = 0; i < s->ntouched; i++) {
            pentry *e = s->touched[i];
            if (e->p_didx != SIZE_MAX)
                d->claims[e->p_didx].after = e->p_out == P_REMOVED ? POOL_NONE : e->p_out;
        }
    }
    size_t j = 0;
    for (size_t i = 0; i < s->nwait; i++)
        if (waiting(s, s->wait[i])) s->wait[j++] = s->wait[i];
    s->nwait = j;
    for (size_t i = 0; i < s->ntouched; i++)
        commit_entry(s, s->touched[i]);
    s->ntouched = 0;
    swap_lists(&s->total, &s->total_next);
    swap_lists(&s->exh_req, &s->exh_req_next);
    swap_lists(&s->exh_avail, &s->exh_avail_next);
}

/* Settle, record, commit; on an error the caller aborts. */
static int settle_commit(pool_state *s, const pool_view *pool, pool_delta *d)
{
    int rc = settle(s, pool);
    if (!rc && d) rc = delta_prepare(s, d);
    if (!rc) plan_commit(s, d);
    return rc;
}

static int finish(pool_state *s, const pool_view *pool, pool_delta *d, int rc)
{
    if (!rc) rc = settle_commit(s, pool, d);
    if (rc) plan_abort(s);
    return rc;
}

/* ---- incremental operations ---- */

static int add_new(pool_state *s, const pool_view *pool, const pool_claim *c, pool_delta *d)
{
    pentry *e = entry_new(c);
    nsb *b = NULL;
    int rc = plan_begin(s);
    if (!e) rc = POOL_ENOMEM;
    if (!rc) rc = wait_reserve(s, 1);
    if (!rc) rc = touch(s, e);
    if (rc) {
        entry_free(e);
        return rc;
    }
    if (strmap_put(s->by_key, e->key, e, NULL) || !(b = ns_get_or_create(s, c->namespace_))) {
        strmap_del(s->by_key, e->key);
        s->ntouched--;
        entry_free(e);
        return POOL_ENOMEM;
    }
    ns_link(b, e);
    wait_insert(s, e);
    e->p_new = e->p_waitins = e->p_dirty = true;
    e->p_out = POOL_EXHAUSTED;
    return finish(s, pool, d, 0);
}

/* A known claim's new request. */
static int change_request(pool_state *s, const pool_view *pool, pentry *e, const rlist *req,
                          pool_delta *d)
{
    rlist *nr = rl_copy(req);
    int rc = nr ? plan_begin(s) : POOL_ENOMEM;
    if (!rc) rc = touch(s, e);
    if (rc) {
        rl_free(nr);
        return rc;
    }
    e->p_oldreq = e->request;
    e->request = nr;
    if (e->stored)
        rc = plan_resize(s, pool, e);
    else
        e->p_dirty = true;
    return finish(s, pool, d, rc);
}

int pool_apply_claim(pool_state *s, const pool_view *pool, const pool_claim *c, pool_delta *d)
{
    pentry *e = NULL;
    int rc = claim_ok(c);
    if (!rc && c->released) return pool_remove_claim(s, pool, c->namespace_, c->uid, d);
    if (!rc) rc = find_entry(s, c->namespace_, c->uid, &e);
    if (rc) return rc;
    if (!e) return add_new(s, pool, c, d);
    const rlist *req = c->request;
    if (same_print(e->request, req)) return 0;
    if (e->stored && rl_equal(e->stored, req)) {
        /* The same amounts written differently: nothing to decide. */
        rlist *nr = rl_copy(req);
        if (!nr) return POOL_ENOMEM;
        rl_free(e->request);
        e->request = nr;
        entry_sync(e);
        return 0;
    }
    return change_request(s, pool, e, req, d);
}

int pool_remove_claim(pool_state *s, const pool_view *pool, const char *ns, const char *uid,
                      pool_delta *d)
{
    pentry *e = NULL;
    int rc = ns && uid ? find_entry(s, ns, uid, &e) : POOL_EINVAL;
    if (rc || !e) return rc;
    if (!(rc = plan_begin(s)) && !(rc = touch(s, e))) rc = plan_remove(s, e);
    return finish(s, pool, d, rc);
}

int pool_remove_namespace(pool_state *s, const pool_view *pool, const char *ns, pool_delta *d)
{
    nsb *b = ns ? ns_get(s, ns) : NULL;
    if (!b) return ns ? 0 : POOL_EINVAL;
    int rc = plan_begin(s);
    for (pentry *e = b->head; !rc && e; e = e->nnext)
        if (!(rc = touch(s, e))) rc = plan_remove(s, e);
    return finish(s, pool, d, rc);
}

int pool_apply_pool(pool_state *s, const pool_view *pool, pool_delta *d)
{
    return finish(s, pool, d, plan_begin(s));
}

/* ---- full reconcile ---- */

/* Enter claim c into the new state n, bound with prev's stored amounts if it had them. */
static int rebuild_add(pool_state *n, const pool_state *prev, const pool_claim *c)
{
    pentry *e = NULL, *pe = NULL;
    nsb *b;
    int rc = find_entry(n, c->namespace_, c->uid, &e);
    if (!rc && prev) rc = find_entry(prev, c->namespace_, c->uid, &pe);
    if (rc) return rc;
    if (e) return POOL_EINVAL; /* the same claim twice */
    if (!(e = entry_new(c))) return POOL_ENOMEM;
    if (pe && pe->stored && !(e->stored = rl_copy(pe->stored))) rc = POOL_ENOMEM;
    if (!rc && !e->stored) rc = wait_reserve(n, 1);
    if (!rc && strmap_put(n->by_key, e->key, e, NULL)) rc = POOL_ENOMEM;
    if (rc) {
        entry_free(e);
        return rc;
    }
    if (!(b = ns_get_or_create(n, c->namespace_))) {
        strmap_del(n->by_key, e->key);
        entry_free(e);
        return POOL_ENOMEM;
    }
    ns_link(b, e);
    if (!e->stored) {
        n->wait[n->nwait++] = e; /* sorted afterwards */
        return 0;
    }
    e->st.outcome = POOL_BOUND;
    entry_sync(e);
    n->nbound++;
    return rl_add_to(n->total, e->stored);
}

/* Step 1 for one bound claim whose request differs from its stored amounts. */
static int rebuild_resize(pool_state *n, const pool_view *pool, pentry *e)
{
    bool ok;
    int rc = fit(e->request, pool->hard, n->total, e->stored, NULL, &ok);
    if (!rc) rc = ok ? 0 : wait_reserve(n, 1);
    if (!rc) rc = sub_from(n->total, e->stored);
    if (rc) return rc;
    rl_free(e->stored);
    e->stored = NULL;
    if (ok) {
        if (!(e->stored = rl_copy(e->request))) {
            /* the state is being rebuilt and is discarded on error */
            n->nbound--;
            return POOL_ENOMEM;
        }
        entry_sync(e);
        return rl_add_to(n->total, e->stored);
    }
    n->nbound--;
    e->st.outcome = POOL_NONE;
    entry_sync(e);
    wait_insert(n, e);
    return 0;
}

static int rebuild_resizes(pool_state *n, const pool_view *pool)
{
    const pool_status **bound;
    size_t m;
    int rc = pool_state_list(n, true, &bound, &m);
    for (size_t i = 0; !rc && i < m; i++) {
        pentry *e = (pentry *)((char *)bound[i] - offsetof(pentry, st));
        if (!rl_equal(e->stored, e->request)) rc = rebuild_resize(n, pool, e);
    }
    free(bound);
    return rc;
}

static bool same_stored(const rlist *a, const rlist *b)
{
    return (!a && !b) || (a && b && same_print(a, b));
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Record in d what differs between prev and n. */
static int diff_one(pool_delta *d, const pentry *pe, const pentry *e)
{
    const pentry *x = e ? e : pe;
    size_t idx;
    if (pe && e && pe->st.outcome == e->st.outcome && same_stored(pe->stored, e->stored) &&
        same_str(pe->message, e->message))
        return 0;
    int rc = delta_claim(d, x->key, &x->st, pe ? pe->st.outcome : POOL_NONE, &idx);
    if (rc) return rc;
    d->claims[idx].after = e ? e->st.outcome : POOL_NONE;
    bool ns_changed = !same_stored(pe ? pe->stored : NULL, e ? e->stored : NULL);
    return ns_changed ? delta_ns(d, x->st.namespace_) : 0;
}

static int diff(const pool_state *prev, const pool_state *n, pool_delta *d)
{
    size_t nc = d->nclaims, nn = d->nnamespaces;
    const char *k;
    void *v;
    int rc = 0;
    for (size_t it = 0; !rc && strmap_next(n->by_key, &it, &k, &v);)
        rc = diff_one(d, prev ? strmap_get(prev->by_key, k) : NULL, v);
    for (size_t it = 0; !rc && prev && strmap_next(prev->by_key, &it, &k, &v);)
        if (!strmap_get(n->by_key, k)) rc = diff_one(d, v, NULL);
    if (rc) {
        delta_rollback(d, nc, nn);
        return rc;
    }
    d->allocation |= !num_equal0(prev ? prev->total : NULL, n->total);
    d->exhaustions |= !same_print(prev ? prev->exh_req : NULL, n->exh_req) ||
                      !same_print(prev ? prev->exh_avail : NULL, n->exh_avail);
    return 0;
}

int pool_reconcile(const pool_view *pool, const pool_state *prev, const pool_claim *claims,
                   size_t n, pool_state **out, pool_delta *d)
{
    pool_state *ns = pool_state_new();
    int rc = ns ? 0 : POOL_ENOMEM;
    *out = NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        rc = claim_ok(&claims[i]);
        if (!rc && !claims[i].released) rc = rebuild_add(ns, prev, &claims[i]);
    }
    if (!rc) {
        if (ns->nwait) qsort(ns->wait, ns->nwait, sizeof *ns->wait, entry_qcmp);
        rc = rebuild_resizes(ns, pool);
    }
    if (!rc && !(rc = plan_begin(ns)) && (rc = settle_commit(ns, pool, NULL))) plan_abort(ns);
    if (!rc && d) rc = diff(prev, ns, d);
    if (rc) {
        pool_state_free(ns);
        return rc;
    }
    *out = ns;
    return 0;
}

/* ---- outputs ---- */

int pool_allocation(const pool_state *s, const pool_view *pool, rlist *used, rlist *available)
{
    const rlist *hard = pool->hard;
    int rc = 0;
    if (used) rl_clear(used);
    if (available) rl_clear(available);
    for (size_t i = 0; !rc && i < rl_len(hard); i++) {
        const char *r = rl_name(hard, i);
        const qty *h = rl_qty(hard, i), *t = rl_get(s->total, r);
        qty u = qty_zero(QTY_DECIMAL_SI), a;
        if (used && t) rc = with_format(t, qty_get_format(h), &u);
        if (!rc && used) rc = rl_set(used, r, &u);
        if (!rc && available) rc = avail_of(h, s->total, NULL, r, &a);
        if (!rc && available) rc = rl_set(available, r, &a);
    }
    for (size_t i = 0; !rc && used && i < rl_len(s->total); i++) {
        const qty *t = rl_qty(s->total, i);
        qty u;
        if (rl_has(hard, rl_name(s->total, i)) || qty_is_zero(t)) continue;
        if (!(rc = with_format(t, QTY_DECIMAL_SI, &u))) rc = rl_set(used, rl_name(s->total, i), &u);
    }
    return rc;
}

const rlist *pool_exhaustions_requesting(const pool_state *s)
{
    return s->exh_req;
}

const rlist *pool_exhaustions_available(const pool_state *s)
{
    return s->exh_avail;
}

/* The bound entries of namespace ns in claim order (malloc'd; NULL when none). */
static int ns_bound(const pool_state *s, const char *ns, pentry ***out, size_t *n)
{
    nsb *b = ns_get(s, ns);
    *out = NULL;
    *n = 0;
    if (!b) return 0;
    pentry **a = malloc(b->n * sizeof *a);
    if (!a) return POOL_ENOMEM;
    for (pentry *e = b->head; e; e = e->nnext)
        if (e->stored) a[(*n)++] = e;
    if (!*n) { /* claims that all wait */
        free(a);
        return 0;
    }
    qsort(a, *n, sizeof *a, entry_qcmp);
    *out = a;
    return 0;
}

int pool_rq_hard(const pool_state *s, const pool_view *pool, const char *ns, rlist *out)
{
    pentry **bound;
    size_t m;
    rlist *sum = rl_new();
    int rc = sum ? ns_bound(s, ns, &bound, &m) : POOL_ENOMEM;
    if (rc) {
        rl_free(sum);
        return rc;
    }
    for (size_t i = 0; !rc && i < m; i++)
        rc = rl_add_to(sum, bound[i]->stored);
    free(bound);
    rl_clear(out);
    for (size_t i = 0; !rc && i < rl_len(sum); i++)
        if (!qty_is_zero(rl_qty(sum, i))) rc = rl_set(out, rl_name(sum, i), rl_qty(sum, i));
    rl_free(sum);
    if (!rc) rc = rl_add_to(out, pool->defaults);
    for (size_t i = 0; !rc && pool->defaults_zero && i < rl_len(pool->hard); i++)
        if (!rl_has(pool->defaults, rl_name(pool->hard, i)))
            rc = rl_add_name(out, rl_name(pool->hard, i));
    return rc;
}

/* ---- in use ---- */

static int claim_ptr_qcmp(const void *a, const void *b)
{
    return pool_claim_cmp(*(const pool_claim *const *)a, *(const pool_claim *const *)b);
}

/* Σ_res min(rem, claim) over the resources where both are positive. */
static int coverage_score(const rlist *rem, const rlist *claim, qty *score)
{
    *score = qty_zero(QTY_DECIMAL_SI);
    for (size_t i = 0; i < rl_len(claim); i++) {
        const qty *c = rl_qty(claim, i), *r = rl_get(rem, rl_name(claim, i));
        if (!r || qty_sign(r) <= 0 || qty_sign(c) <= 0) continue;
        int rc = qty_add(score, qty_cmp(r, c) < 0 ? r : c);
        if (rc) return rc;
    }
    return 0;
}

/* rem -= claim on rem's keys, clamped at 0. */
static int cover(rlist *rem, const rlist *claim)
{
    for (size_t i = 0; i < rl_len(rem); i++) {
        const qty *c = rl_get(claim, rl_name(rem, i));
        qty v = *rl_qty(rem, i);
        if (!c) continue;
        int rc = qty_sub(&v, c);
        if (rc) return rc;
        if (qty_sign(&v) <= 0) v = qty_zero(QTY_DECIMAL_SI);
        if ((rc = rl_set(rem, rl_name(rem, i), &v))) return rc;
    }
    return 0;
}

/* The index (into ord) of the best unselected claim; *score its score. */
static int best_claim(const rlist *rem, const pool_claim **ord, size_t n, const pool_claim *base,
                      const bool *selected, size_t *best, qty *best_score)
{
    bool have = false;
    for (size_t k = 0; k < n; k++) {
        qty sc;
        if (selected[ord[k] - base]) continue;
        int rc = coverage_score(rem, ord[k]->request, &sc);
        if (rc) return rc;
        if (!have || qty_cmp(&sc, best_score) > 0) {
            *best = k;
            *best_score = sc;
            have = true;
        }
    }
    if (!have) *best_score = qty_zero(QTY_DECIMAL_SI);
    return 0;
}

int pool_select_covering(const rlist *used, const rlist *hard, const pool_claim *claims, size_t n,
                         bool *selected)
{
    for (size_t i = 0; i < n; i++)
        selected[i] = false;
    if (!n) return 0;
    rlist *rem = hard ? rl_mask(used, hard) : rl_copy(used);
    const pool_claim **ord = malloc(n * sizeof *ord);
    int rc = rem && ord ? 0 : POOL_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++)
        ord[i] = &claims[i];
    if (!rc) qsort(ord, n, sizeof *ord, claim_ptr_qcmp);
    while (!rc && !rl_is_zero(rem)) {
        size_t best = 0;
        qty score;
        if ((rc = best_claim(rem, ord, n, claims, selected, &best, &score)) ||
            qty_sign(&score) <= 0)
            break;
        selected[ord[best] - claims] = true;
        rc = cover(rem, ord[best]->request);
    }
    free(ord);
    rl_free(rem);
    return rc;
}

int pool_in_use(const pool_state *s, const pool_view *pool, const char *ns, const rlist *rq_used,
                const pool_status ***out, size_t *n)
{
    pentry **bound = NULL;
    size_t m = 0, k = 0;
    *out = NULL;
    *n = 0;
    int rc = ns_bound(s, ns, &bound, &m);
    if (rc || !m) return rc;
    pool_claim *views = calloc(m, sizeof *views);
    bool *sel = calloc(m, sizeof *sel);
    const pool_status **res = calloc(m, sizeof *res);
    rlist *u = pool->defaults ? rl_subtract_nonneg(rq_used, pool->defaults) : rl_copy(rq_used);
    rc = views && sel && res && u ? 0 : POOL_ENOMEM;
    for (size_t i = 0; !rc && i < m; i++)
        views[i] = (pool_claim){bound[i]->st.namespace_, bound[i]->st.name, bound[i]->st.uid,
                                bound[i]->st.created,    bound[i]->stored,  false};
    if (!rc) rc = pool_select_covering(u, pool->hard, views, m, sel);
    for (size_t i = 0; !rc && i < m; i++)
        if (sel[i]) res[k++] = &bound[i]->st;
    free(views);
    free(sel);
    free(bound);
    rl_free(u);
    if (rc || !k) {
        free(res);
        return rc;
    }
    *out = res;
    *n = k;
    return 0;
}

int pool_claim_in_use(const pool_state *s, const pool_view *pool, const char *ns, const char *uid,
                      const rlist *rq_used, bool *in_use)
{
    const pool_status **used;
    size_t n;
    *in_use = false;
    int rc = pool_in_use(s, pool, ns, rq_used, &used, &n);
    for (size_t i = 0; !rc && i < n; i++)
        if (!strcmp(used[i]->uid, uid)) *in_use = true;
    free(used);
    return rc;
}

/* ---- admission ---- */

int pool_check_hard_update(const rlist *old_hard, const rlist *new_hard, const rlist *claimed,
                           char **msg)
{
    *msg = NULL;
    if (old_hard && rl_equal(old_hard, (new_hard))) return POOL_OK;
    for (size_t i = 0; i < rl_len(claimed); i++) {
        const char *r = rl_name(claimed, i);
        const qty *q = rl_qty(claimed, i), *h = rl_get(new_hard, r);
        char qs[QTY_STR_MAX], hs[QTY_STR_MAX];
        if (!h && qty_is_zero(q)) continue;
        if (h && qty_cmp(h, q) >= 0) continue;
        qty_format_str(q, qs, sizeof qs);
        if (!h)
            return msgf(msg,
                        "can not remove resource %s as it is still being allocated. Remove "
                        "corresponding claims or keep the resources in the pool",
                        r);
        qty_format_str(h, hs, sizeof hs);
        return msgf(msg,
                    "can not reduce %s usage to %s because quantity %s is claimed . Remove "
                    "corresponding claims or keep the resources in the pool",
                    r, hs, qs);
    }
    return POOL_OK;
}

int pool_check_claim_delete(bool in_use, const char *pool, char **msg)
{
    *msg = NULL;
    if (!in_use) return POOL_OK;
    return msgf(msg, "cannot delete the pool while claim is used in resourcepool %s",
                pool ? pool : "");
}

int pool_release_hard(const rlist *hard, const rlist *used, const rlist *give, const char *pool,
                      rlist **out, char **msg)
{
    *out = NULL;
    *msg = NULL;
    /* (a resource the quota does not limit stays unlimited) */
    rlist *g = rl_mask(give, hard), *h = g ? rl_subtract_nonneg(hard, g) : NULL;
    rl_free(g);
    if (!h) return POOL_ENOMEM;
    for (size_t i = 0; i < rl_len(give); i++) {
        const char *r = rl_name(give, i);
        const qty *u = rl_get(used, r), *nh = rl_get(h, r);
        if (u && !qty_is_zero(u) && (!nh || qty_cmp(u, nh) > 0)) {
            rl_free(h);
            return pool_check_claim_delete(true, pool, msg);
        }
    }
    *out = h;
    return POOL_OK;
}

int pool_check_claim_update(bool in_use, const char *pool, const char *old_spec_pool,
                            const char *new_spec_pool, const rlist *old_claim,
                            const rlist *new_claim, char **msg)
{
    *msg = NULL;
    if (!in_use) return POOL_OK;
    bool same_pool =
        !strcmp(old_spec_pool ? old_spec_pool : "", new_spec_pool ? new_spec_pool : "");
    if (same_pool && rl_equal(old_claim, new_claim)) return POOL_OK;
    return msgf(msg,
                "cannot change the requested resources while claim is allocated to a "
                "resourcepool %s",
                pool ? pool : "");
}

int pool_check_claim_resources(const char *pool, const rlist *hard, const rlist *request,
                               char **msg)
{
    *msg = NULL;
    for (size_t i = 0; i < rl_len(request); i++)
        if (!rl_has(hard, rl_name(request, i)))
            return msgf(msg, "resource %s is not available in pool %s", rl_name(request, i),
                        pool ? pool : "");
    return POOL_OK;
}

int pool_defaults_zero(const rlist *hard, rlist *defaults)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < rl_len(hard); i++)
        rc = rl_add_name(defaults, rl_name(hard, i));
    return rc;
}

/* Everything claimed is available (a missing available counts as 0). */
static bool allocatable(const rlist *request, const rlist *available)
{
    for (size_t i = 0; i < rl_len(request); i++) {
        const qty *q = rl_qty(request, i), *a = rl_get(available, rl_name(request, i));
        if (a ? qty_cmp(a, q) < 0 : qty_sign(q) > 0) return false;
    }
    return true;
}

long pool_auto_assign(const rlist *request, const pool_candidate *pools, size_t n)
{
    long best = -1;
    bool best_alloc = false;
    for (size_t i = 0; i < n; i++) {
        if (!pools[i].name || !rl_has_names(pools[i].hard, request)) continue;
        bool alloc = allocatable(request, pools[i].available);
        if (best < 0 || (alloc && !best_alloc) ||
            (alloc == best_alloc && strcmp(pools[i].name, pools[best].name) < 0)) {
            best = (long)i;
            best_alloc = alloc;
        }
    }
    return best;
}

bool pool_disassociate_drops_owner(const pool_view *pool, bool released)
{
    return !pool->delete_bound_resources || released;
}
