/* test_pool.c - the ResourcePool decision core (core/pool.c): the unit examples
 * of spec §6.3, the allocation / exhaustion / queue / RQ-hard outcomes of the
 * e2e scenarios P1-P5, P9, C1-C4 of §6.1-§6.2 computed through the API,
 * Capsule's admission messages, allot's quirk choices, atomicity on error,
 * and a randomized property test: the incremental operations give exactly
 * the full reconcile's result, allocation never exceeds hard, available is
 * never negative, the result is settled, and deltas list every change.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/dbuf.h"
#include "core/pool.h"
#include "core/rlist.h"

#define LC "limits.cpu"
#define LM "limits.memory"
#define RC "requests.cpu"
#define RM "requests.memory"
#define HARD4 LC "=2," LM "=2Gi," RC "=2," RM "=2Gi"

/* ---- fixtures ---- */

/* rl_format of a list (malloc'd). */
static char *fmt(const rlist *l)
{
    dbuf b;
    dbuf_init(&b, 1 << 20);
    assert_int_equal(rl_format(l, &b), 0);
    return b.len ? dbuf_take(&b, NULL) : strdup(""); /* dbuf_take of nothing is not terminated */
}

static void expect_rl(const rlist *l, const char *want)
{
    char *got = fmt(l);
    assert_string_equal(got, want);
    free(got);
}

/* A pool and its claims, as the registry would hold them. */
#define MAXC 256
typedef struct tclaim {
    char ns[32], name[32], uid[32];
    int64_t ts;
    rlist *req;
} tclaim;

typedef struct world {
    char name[32];
    rlist *hard, *defaults;
    bool ordered, dzero, dbr;
    tclaim c[MAXC];
    size_t n;
    pool_state *s; /* the incremental state */
} world;

static pool_view view(const world *w)
{
    return (pool_view){w->name, w->hard, w->defaults, w->dzero, w->ordered, w->dbr};
}

static void w_init(world *w, const char *hard)
{
    memset(w, 0, sizeof *w);
    strcpy(w->name, "pool");
    w->hard = L(hard);
    w->s = pool_state_new();
    assert_non_null(w->s);
}

static void w_free(world *w)
{
    for (size_t i = 0; i < w->n; i++)
        rl_free(w->c[i].req);
    rl_free(w->hard);
    rl_free(w->defaults);
    pool_state_free(w->s);
}

static pool_claim as_claim(const tclaim *t)
{
    return (pool_claim){t->ns, t->name, t->uid, t->ts, t->req, false};
}

static pool_claim *claims_of(const world *w)
{
    pool_claim *a = calloc(w->n + 1, sizeof *a);
    for (size_t i = 0; i < w->n; i++)
        a[i] = as_claim(&w->c[i]);
    return a;
}

static tclaim *w_find(world *w, const char *ns, const char *name)
{
    for (size_t i = 0; i < w->n; i++)
        if (!strcmp(w->c[i].ns, ns) && !strcmp(w->c[i].name, name)) return &w->c[i];
    return NULL;
}

static void w_forget(world *w, tclaim *t)
{
    rl_free(t->req);
    *t = w->c[--w->n];
}

/* Claims printed as "ns/name:OUTCOME[alloc]{message}" lines, in claim order. */
static char *dump(const pool_state *s)
{
    static const char *out[] = {"NONE", "BOUND", "EXHAUSTED", "QUEUED"};
    const pool_status **a;
    size_t n;
    dbuf b;
    dbuf_init(&b, 1 << 24);
    assert_int_equal(pool_state_list(s, false, &a, &n), 0);
    for (size_t i = 0; i < n; i++) {
        char *al = a[i]->allocated ? fmt(a[i]->allocated) : NULL;
        dbuf_printf(&b, "%s/%s/%s:%s[%s]{%s}\n", a[i]->namespace_, a[i]->name, a[i]->uid,
                    out[a[i]->outcome], al ? al : "-", a[i]->message ? a[i]->message : "-");
        free(al);
    }
    free(a);
    return b.len ? dbuf_take(&b, NULL) : strdup("");
}

/* Everything observable of a state: claims, allocation, exhaustions, RQ hard per namespace. */
static char *observe(const pool_state *s, const pool_view *p, const world *w)
{
    rlist *u = rl_new(), *a = rl_new(), *rq = rl_new();
    dbuf b;
    dbuf_init(&b, 1 << 24);
    char *d = dump(s);
    assert_int_equal(pool_allocation(s, p, u, a), 0);
    char *us = fmt(u), *as = fmt(a), *er = fmt(pool_exhaustions_requesting(s)),
         *ea = fmt(pool_exhaustions_available(s));
    dbuf_printf(&b, "%snbound=%zu count=%zu\nused=%s\navail=%s\nexh=%s / %s\n", d,
                pool_state_nbound(s), pool_state_count(s), us, as, er, ea);
    for (int i = 0; i < 6; i++) {
        char ns[16];
        snprintf(ns, sizeof ns, "ns-%d", i);
        assert_int_equal(pool_rq_hard(s, p, ns, rq), 0);
        char *r = fmt(rq);
        dbuf_printf(&b, "rq %s: %s\n", ns, r);
        free(r);
    }
    (void)w;
    free(d);
    free(us);
    free(as);
    free(er);
    free(ea);
    rl_free(u);
    rl_free(a);
    rl_free(rq);
    return dbuf_take(&b, NULL);
}

/* The full reconcile of w from prev. */
static pool_state *full(const world *w, const pool_state *prev)
{
    pool_claim *cl = claims_of(w);
    pool_view p = view(w);
    pool_state *out = NULL;
    assert_int_equal(pool_reconcile(&p, prev, cl, w->n, &out, NULL), 0);
    free(cl);
    return out;
}

/* The incremental state equals the full reconcile from `before` (the state
 * before the operation), and reconciling it again changes nothing. */
static void check_against_full(const world *w, const pool_state *before)
{
    pool_view p = view(w);
    pool_state *f = full(w, before), *again = full(w, f);
    char *si = observe(w->s, &p, w), *sf = observe(f, &p, w), *sa = observe(again, &p, w);
    if (strcmp(si, sf)) fail_msg("incremental:\n%s\nfull:\n%s", si, sf);
    if (strcmp(sf, sa)) fail_msg("not settled:\n%s\nagain:\n%s", sf, sa);
    free(si);
    free(sf);
    free(sa);
    pool_state_free(f);
    pool_state_free(again);
}

/* Add a claim to the world and apply it incrementally (checked against the full path). */
static tclaim *add(world *w, const char *ns, const char *name, int64_t ts, const char *req)
{
    tclaim *t = &w->c[w->n++];
    snprintf(t->ns, sizeof t->ns, "%s", ns);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->uid, sizeof t->uid, "uid-%s-%s", ns, name);
    t->ts = ts;
    t->req = L(req);
    w->n--; /* the state before the claim: a full reconcile of it, which is equal */
    pool_state *before = full(w, w->s);
    w->n++;
    pool_claim c = as_claim(t);
    pool_view p = view(w);
    assert_int_equal(pool_apply_claim(w->s, &p, &c, NULL), 0);
    check_against_full(w, before);
    pool_state_free(before);
    return t;
}

/* A snapshot of the incremental state (a full reconcile of it, which is equal). */
static pool_state *snap(const world *w)
{
    return full(w, w->s);
}

static void resize(world *w, const char *ns, const char *name, const char *req)
{
    tclaim *t = w_find(w, ns, name);
    pool_state *before = snap(w);
    rl_free(t->req);
    t->req = L(req);
    pool_claim c = as_claim(t);
    pool_view p = view(w);
    assert_int_equal(pool_apply_claim(w->s, &p, &c, NULL), 0);
    check_against_full(w, before);
    pool_state_free(before);
}

static void release(world *w, const char *ns, const char *name)
{
    tclaim *t = w_find(w, ns, name);
    pool_state *before = snap(w);
    pool_claim c = as_claim(t);
    c.released = true;
    pool_view p = view(w);
    assert_int_equal(pool_apply_claim(w->s, &p, &c, NULL), 0);
    w_forget(w, t);
    check_against_full(w, before);
    pool_state_free(before);
}

static void drop_ns(world *w, const char *ns)
{
    pool_state *before = snap(w);
    pool_view p = view(w);
    assert_int_equal(pool_remove_namespace(w->s, &p, ns, NULL), 0);
    for (size_t i = w->n; i-- > 0;)
        if (!strcmp(w->c[i].ns, ns)) w_forget(w, &w->c[i]);
    check_against_full(w, before);
    pool_state_free(before);
}

/* Change the pool's hard (after admission) and settle. Returns the admission verdict. */
static int set_hard(world *w, const char *hard, char **msg)
{
    pool_view p = view(w);
    rlist *used = rl_new(), *nh = L(hard);
    assert_int_equal(pool_allocation(w->s, &p, used, NULL), 0);
    int rc = pool_check_hard_update(w->hard, nh, used, msg);
    rl_free(used);
    if (rc != POOL_OK) {
        rl_free(nh);
        return rc;
    }
    pool_state *before = snap(w);
    rl_free(w->hard);
    w->hard = nh;
    p = view(w);
    assert_int_equal(pool_apply_pool(w->s, &p, NULL), 0);
    check_against_full(w, before);
    pool_state_free(before);
    return rc;
}

static const pool_status *st(const world *w, const char *ns, const char *name)
{
    char uid[80];
    snprintf(uid, sizeof uid, "uid-%s-%s", ns, name);
    return pool_state_get(w->s, ns, uid);
}

static void expect_alloc(const world *w, const char *used, const char *avail)
{
    pool_view p = view(w);
    rlist *u = rl_new(), *a = rl_new();
    assert_int_equal(pool_allocation(w->s, &p, u, a), 0);
    expect_rl(u, used);
    expect_rl(a, avail);
    rl_free(u);
    rl_free(a);
}

static void expect_rq(const world *w, const char *ns, const char *want)
{
    pool_view p = view(w);
    rlist *rq = rl_new();
    assert_int_equal(pool_rq_hard(w->s, &p, ns, rq), 0);
    expect_rl(rq, want);
    rl_free(rq);
}

static void expect_claim(const world *w, const char *ns, const char *name, pool_outcome o,
                         const char *msg)
{
    const pool_status *s = st(w, ns, name);
    assert_non_null(s);
    assert_int_equal(s->outcome, o);
    if (msg)
        assert_string_equal(s->message, msg);
    else
        assert_null(s->message);
    if (o == POOL_BOUND)
        assert_non_null(s->allocated);
    else
        assert_null(s->allocated);
}

/* ---- §1.4 ordering and the greedy in-use selection (§6.3 utils_test.go) ---- */

static void test_order(void **state)
{
    (void)state;
    pool_claim a = {"b", "x", "1", 10, NULL, false}, b = {"a", "x", "2", 10, NULL, false},
               c = {"a", "y", "3", 9, NULL, false}, d = {"a", "x", "0", 10, NULL, false};
    assert_true(pool_claim_cmp(&c, &a) < 0); /* older first */
    assert_true(pool_claim_cmp(&b, &a) < 0); /* same ts, same name: namespace */
    assert_true(pool_claim_cmp(&d, &b) < 0); /* then uid: a total order */
    assert_int_equal(pool_claim_cmp(&a, &a), 0);
    pool_claim e = {"z", "a", "9", 10, NULL, false};
    assert_true(pool_claim_cmp(&e, &b) < 0); /* name before namespace */
}

/* selected as a string of 0/1 in input order */
static void expect_select(const char *used, const char *hard, pool_claim *cl, size_t n,
                          const char *want)
{
    rlist *u = L(used), *h = hard ? L(hard) : NULL;
    bool sel[8];
    char got[9] = {0};
    assert_int_equal(pool_select_covering(u, h, cl, n, sel), 0);
    for (size_t i = 0; i < n; i++)
        got[i] = sel[i] ? '1' : '0';
    assert_string_equal(got, want);
    rl_free(u);
    rl_free(h);
}

static void test_greedy_examples(void **state)
{
    (void)state;
    rlist *small = L("cpu=500m"), *big = L("cpu=2"), *one = L("cpu=1"), *q = L("cpu=250m");
    /* used 900m; small (newer) and big (older) -> {big} */
    pool_claim c1[] = {{"ns", "small", "u1", 20, small, false},
                       {"ns", "big", "u2", 10, big, false}};
    expect_select("cpu=900m", NULL, c1, 2, "01");
    /* used 1500m; c1 = 1, c2 = 1, c3 = 250m -> {c1, c2} */
    pool_claim c2[] = {{"ns", "c1", "u1", 10, one, false},
                       {"ns", "c2", "u2", 11, one, false},
                       {"ns", "c3", "u3", 12, q, false}};
    expect_select("cpu=1500m", NULL, c2, 3, "110");
    /* used cpu 500m + memory 256Mi; a cpu-only claim of 1 -> {cpu-only} */
    pool_claim c3[] = {{"ns", "cpu-only", "u1", 10, one, false}};
    expect_select("cpu=500m,memory=256Mi", NULL, c3, 1, "1");
    /* equal claims with the same ts: smallest name, then smallest namespace */
    pool_claim c4[] = {{"ns-b", "b", "u1", 10, one, false},
                       {"ns-b", "a", "u2", 10, one, false},
                       {"ns-a", "a", "u3", 10, one, false}};
    expect_select("cpu=1", NULL, c4, 3, "001");
    rl_free(small);
    rl_free(big);
    rl_free(one);
    rl_free(q);
}

/* resourceListAllZero (nil, empty, explicit zeros) and filterResourceListByKeys. */
static void test_greedy_zero_and_filter(void **state)
{
    (void)state;
    rlist *one = L("cpu=1");
    pool_claim c[] = {{"ns", "a", "u1", 10, one, false}};
    bool sel[1] = {true};
    assert_int_equal(pool_select_covering(NULL, NULL, c, 1, sel), 0);
    assert_false(sel[0]);
    expect_select("cpu=0,memory=0", NULL, c, 1, "0");
    /* no claims */
    rlist *u = L("cpu=1");
    assert_int_equal(pool_select_covering(u, NULL, NULL, 0, NULL), 0);
    rl_free(u);
    /* used outside the pool's hard keys does not count */
    expect_select("cpu=1", "memory=1Gi", c, 1, "0");
    expect_select("cpu=1,memory=1Gi", "cpu=4", c, 1, "1");
    /* filterResourceListByKeys = rl_mask: the intersection */
    rlist *l = L("a=1,b=2,c=3"), *k = L("b=0,c=0,d=0"), *m = rl_mask(l, k);
    expect_rl(m, "b=2,c=3");
    rl_free(l);
    rl_free(k);
    rl_free(m);
    rl_free(one);
}

/* Greedy scores are exact: 1Gi + 1m beats 1Gi. */
static void test_greedy_exact(void **state)
{
    (void)state;
    rlist *a = L("memory=1Gi"), *b = L("memory=1Gi,cpu=1m");
    pool_claim c[] = {{"ns", "a", "u1", 1, a, false}, {"ns", "b", "u2", 2, b, false}};
    expect_select("memory=1Gi,cpu=1", NULL, c, 2, "01");
    rl_free(a);
    rl_free(b);
}

/* ---- §6.3 pool unit examples ---- */

/* Resize fit, pool hard cpu 10, claim 5. */
static void test_resize_fit(void **state)
{
    (void)state;
    world w;
    w_init(&w, "cpu=10");
    add(&w, "ns-0", "c", 1, "cpu=5");
    resize(&w, "ns-0", "c", "cpu=10"); /* fits */
    expect_claim(&w, "ns-0", "c", POOL_BOUND, NULL);
    expect_alloc(&w, "cpu=10", "cpu=0");
    resize(&w, "ns-0", "c", "cpu=5");
    resize(&w, "ns-0", "c", "cpu=55"); /* one exhaustion: available 10, requesting 55 */
    expect_claim(&w, "ns-0", "c", POOL_EXHAUSTED, "requested: cpu=55, available: cpu=10");
    expect_rl(pool_exhaustions_requesting(w.s), "cpu=55");
    expect_rl(pool_exhaustions_available(w.s), "cpu=10");
    expect_alloc(&w, "cpu=0", "cpu=10");
    w_free(&w);

    /* with another claim of 4, resize 5 -> 7: exhausted, available 6 */
    w_init(&w, "cpu=10");
    add(&w, "ns-0", "c", 1, "cpu=5");
    add(&w, "ns-0", "other", 2, "cpu=4");
    resize(&w, "ns-0", "c", "cpu=7");
    expect_claim(&w, "ns-0", "c", POOL_EXHAUSTED, "requested: cpu=7, available: cpu=6");
    expect_rl(pool_exhaustions_available(w.s), "cpu=6");
    expect_rl(pool_exhaustions_requesting(w.s), "cpu=7");
    w_free(&w);
}

/* CalculateClaimedResources, CanClaimFromPool, GetResourceQuotaHardResources,
 * GetClaimFromStatus, Add/Remove claim, AssignClaims. */
static void test_pool_funcs(void **state)
{
    (void)state;
    world w;
    w_init(&w, LC "=2");
    add(&w, "ns-0", "c", 1, LC "=1");
    expect_alloc(&w, LC "=1", LC "=1");
    w_free(&w);

    w_init(&w, LM "=1Gi");
    add(&w, "ns-0", "half", 1, LM "=512Mi");
    add(&w, "ns-0", "big", 2, LM "=1Gi"); /* 1 error */
    expect_claim(&w, "ns-0", "big", POOL_EXHAUSTED,
                 "requested: limits.memory=1Gi, available: limits.memory=512Mi");
    add(&w, "ns-0", "fits", 3, LM "=500Mi"); /* 0 errors */
    expect_claim(&w, "ns-0", "fits", POOL_BOUND, NULL);
    /* GetClaimFromStatus: by uid and namespace */
    assert_non_null(pool_state_get(w.s, "ns-0", "uid-ns-0-half"));
    assert_null(pool_state_get(w.s, "ns-1", "uid-ns-0-half"));
    assert_null(pool_state_get(w.s, "ns-0", "nope"));
    assert_int_equal(pool_state_nbound(w.s), 2); /* AssignClaims counts 2 */
    release(&w, "ns-0", "half");                 /* RemoveClaimFromStatus */
    assert_null(pool_state_get(w.s, "ns-0", "uid-ns-0-half"));
    assert_int_equal(pool_state_nbound(w.s), 1);
    w_free(&w);

    /* GetResourceQuotaHardResources: default lc 1 + claim 1 -> 2 */
    w_init(&w, LC "=4");
    w.defaults = L(LC "=1");
    add(&w, "ns-0", "c", 1, LC "=1");
    expect_rq(&w, "ns-0", LC "=2");
    expect_rq(&w, "ns-1", LC "=1");
    w_free(&w);
}

/* ---- §6.2 scenarios ---- */

/* P1 Defaults. */
static void test_p1_defaults(void **state)
{
    (void)state;
    world w;
    w_init(&w, HARD4);
    expect_alloc(&w, LC "=0," LM "=0," RC "=0," RM "=0", HARD4);
    for (int i = 0; i < 3; i++)
        expect_rq(&w, (const char *[]){"ns-1", "ns-2", "ns-3"}[i], "");
    /* claims without a pool: auto-assigned to the only candidate */
    pool_view p = view(&w);
    rlist *avail = rl_new(), *req = L(LM "=128Mi");
    assert_int_equal(pool_allocation(w.s, &p, NULL, avail), 0);
    pool_candidate cand = {"defaults-pool", w.hard, avail};
    assert_int_equal(pool_auto_assign(req, &cand, 1), 0);
    rl_free(avail);
    rl_free(req);
    add(&w, "ns-1", "simple-1", 1, LM "=128Mi");
    add(&w, "ns-2", "simple-2", 2, LM "=512Mi");
    add(&w, "ns-3", "simple-3", 3, LM "=10Gi");
    expect_claim(&w, "ns-1", "simple-1", POOL_BOUND, NULL);
    expect_claim(&w, "ns-2", "simple-2", POOL_BOUND, NULL);
    expect_claim(&w, "ns-3", "simple-3", POOL_EXHAUSTED,
                 "requested: limits.memory=10Gi, available: limits.memory=1408Mi");
    expect_alloc(&w, LC "=0," LM "=640Mi," RC "=0," RM "=0",
                 LC "=2," LM "=1408Mi," RC "=2," RM "=2Gi");
    expect_rq(&w, "ns-1", LM "=128Mi");
    expect_rq(&w, "ns-2", LM "=512Mi");
    expect_rq(&w, "ns-3", "");
    /* defaults: the allocation is unchanged, the RQs gain them */
    pool_state *before = snap(&w);
    w.defaults = L(LC "=1," LM "=1Gi," RC "=1," RM "=1Gi,requests.storage=5Gi");
    p = view(&w);
    pool_delta d;
    pool_delta_init(&d);
    assert_int_equal(pool_apply_pool(w.s, &p, &d), 0);
    assert_false(d.allocation);
    assert_int_equal(d.nclaims, 0);
    pool_delta_cleanup(&d);
    check_against_full(&w, before);
    pool_state_free(before);
    expect_alloc(&w, LC "=0," LM "=640Mi," RC "=0," RM "=0",
                 LC "=2," LM "=1408Mi," RC "=2," RM "=2Gi");
    expect_rq(&w, "ns-1", LC "=1," LM "=1152Mi," RC "=1," RM "=1Gi,requests.storage=5Gi");
    expect_rq(&w, "ns-2", LC "=1," LM "=1536Mi," RC "=1," RM "=1Gi,requests.storage=5Gi");
    expect_rq(&w, "ns-3", LC "=1," LM "=1Gi," RC "=1," RM "=1Gi,requests.storage=5Gi");
    /* ns-2 no longer selected: simple-2 disassociated */
    drop_ns(&w, "ns-2");
    assert_int_equal(pool_state_nbound(w.s), 1);
    assert_null(st(&w, "ns-2", "simple-2"));
    expect_alloc(&w, LC "=0," LM "=128Mi," RC "=0," RM "=0",
                 LC "=2," LM "=1920Mi," RC "=2," RM "=2Gi");
    expect_claim(&w, "ns-3", "simple-3", POOL_EXHAUSTED,
                 "requested: limits.memory=10Gi, available: limits.memory=1920Mi");
    drop_ns(&w, "ns-3");
    assert_int_equal(pool_state_nbound(w.s), 1);
    assert_int_equal(pool_state_count(w.s), 1);
    w_free(&w);
}

/* P2 DefaultsZero. */
static void test_p2_defaults_zero(void **state)
{
    (void)state;
    world w;
    w_init(&w, HARD4);
    w.dzero = true;
    w.defaults = rl_new();
    assert_int_equal(pool_defaults_zero(w.hard, w.defaults), 0);
    expect_rl(w.defaults, LC "=0," LM "=0," RC "=0," RM "=0");
    expect_rq(&w, "ns-1", LC "=0," LM "=0," RC "=0," RM "=0");
    /* existing defaults are kept; keys outside hard too */
    rlist *d = L(LM "=1Gi,count/persistentvolumeclaims=3");
    assert_int_equal(pool_defaults_zero(w.hard, d), 0);
    expect_rl(d, "count/persistentvolumeclaims=3," LC "=0," LM "=1Gi," RC "=0," RM "=0");
    rl_free(d);
    /* defaultsZero also applies when the stored defaults lack a hard key */
    rl_free(w.defaults);
    w.defaults = L("count/persistentvolumeclaims=3");
    add(&w, "ns-1", "c", 1, RC "=1");
    expect_rq(&w, "ns-1", "count/persistentvolumeclaims=3," LC "=0," LM "=0," RC "=1," RM "=0");
    w_free(&w);
}

/* P3 Unordered scheduling. */
static void test_p3_unordered(void **state)
{
    (void)state;
    world w;
    w_init(&w, HARD4);
    add(&w, "ns-1", "simple-1", 1, LM "=128Mi");
    expect_alloc(&w, LC "=0," LM "=128Mi," RC "=0," RM "=0",
                 LC "=2," LM "=1920Mi," RC "=2," RM "=2Gi");
    expect_rq(&w, "ns-1", LM "=128Mi");
    add(&w, "ns-1", "simple-2", 2, RC "=4");
    expect_claim(&w, "ns-1", "simple-2", POOL_EXHAUSTED,
                 "requested: requests.cpu=4, available: requests.cpu=2");
    add(&w, "ns-2", "simple-3", 3, RM "=1Gi");
    expect_claim(&w, "ns-2", "simple-3", POOL_BOUND, NULL);
    expect_alloc(&w, LC "=0," LM "=128Mi," RC "=0," RM "=1Gi",
                 LC "=2," LM "=1920Mi," RC "=2," RM "=1Gi");
    add(&w, "ns-2", "simple-4", 4, RC "=2"); /* bound despite the older exhausted claim */
    expect_claim(&w, "ns-2", "simple-4", POOL_BOUND, NULL);
    expect_alloc(&w, LC "=0," LM "=128Mi," RC "=2," RM "=1Gi",
                 LC "=2," LM "=1920Mi," RC "=0," RM "=1Gi");
    expect_claim(&w, "ns-1", "simple-2", POOL_EXHAUSTED,
                 "requested: requests.cpu=4, available: requests.cpu=0");
    expect_rl(pool_exhaustions_requesting(w.s), RC "=4");
    expect_rl(pool_exhaustions_available(w.s), RC "=0");
    w_free(&w);
}

/* P4 Claim resize, with the in-use guard. */
static void test_p4_resize(void **state)
{
    (void)state;
    world w;
    w_init(&w, RC "=10");
    add(&w, "ns-1", "resize", 1, RC "=5");
    expect_alloc(&w, RC "=5", RC "=5");
    resize(&w, "ns-1", "resize", RC "=8");
    expect_claim(&w, "ns-1", "resize", POOL_BOUND, NULL);
    expect_alloc(&w, RC "=8", RC "=2");
    resize(&w, "ns-1", "resize", RC "=55");
    expect_claim(&w, "ns-1", "resize", POOL_EXHAUSTED,
                 "requested: requests.cpu=55, available: requests.cpu=10");
    assert_int_equal(pool_state_nbound(w.s), 0);
    expect_alloc(&w, RC "=0", RC "=10");
    resize(&w, "ns-1", "resize", RC "=8");
    expect_claim(&w, "ns-1", "resize", POOL_BOUND, NULL);
    /* unused while nothing runs */
    pool_view p = view(&w);
    rlist *used = L(RC "=0");
    bool in_use = true;
    assert_int_equal(pool_claim_in_use(w.s, &p, "ns-1", "uid-ns-1-resize", used, &in_use), 0);
    assert_false(in_use);
    rl_free(used);
    /* a pod requesting cpu 100m: in use; a resize to 9 is denied */
    used = L(RC "=100m,limits.cpu=200m");
    assert_int_equal(pool_claim_in_use(w.s, &p, "ns-1", "uid-ns-1-resize", used, &in_use), 0);
    assert_true(in_use);
    rlist *old = L(RC "=8"), *nw = L(RC "=9");
    char *msg;
    assert_int_equal(pool_check_claim_update(in_use, "pool", "pool", "pool", old, nw, &msg),
                     POOL_DENIED);
    assert_string_equal(msg, "cannot change the requested resources while claim is allocated to "
                             "a resourcepool pool");
    free(msg);
    expect_alloc(&w, RC "=8", RC "=2");
    rl_free(used);
    rl_free(old);
    rl_free(nw);
    w_free(&w);
}

/* P5 Ordered scheduling. */
static void test_p5_ordered(void **state)
{
    (void)state;
    world w;
    w_init(&w, HARD4);
    w.ordered = true;
    add(&w, "ns-1", "simple-1", 1, LM "=512Mi");
    add(&w, "ns-2", "simple-1", 1, RM "=750Mi");
    expect_alloc(&w, LC "=0," LM "=512Mi," RC "=0," RM "=750Mi",
                 LC "=2," LM "=1536Mi," RC "=2," RM "=1298Mi");
    add(&w, "ns-2", "simple-2", 2, RC "=4");
    expect_claim(&w, "ns-2", "simple-2", POOL_EXHAUSTED,
                 "requested: requests.cpu=4, available: requests.cpu=2");
    add(&w, "ns-1", "simple-3", 3, LC "=4"); /* limits.cpu was not queued yet */
    expect_claim(&w, "ns-1", "simple-3", POOL_EXHAUSTED,
                 "requested: limits.cpu=4, available: limits.cpu=2");
    add(&w, "ns-2", "simple-4", 4, LC "=2," RC "=2");
    expect_claim(&w, "ns-2", "simple-4", POOL_QUEUED,
                 "requested: limits.cpu=2, queued: limits.cpu=4; "
                 "requested: requests.cpu=2, queued: requests.cpu=4");
    expect_rq(&w, "ns-1", LM "=512Mi");
    expect_rq(&w, "ns-2", RM "=750Mi");
    expect_rl(pool_exhaustions_requesting(w.s), LC "=4," RC "=4");
    expect_rl(pool_exhaustions_available(w.s), LC "=2," RC "=2");
    char *msg = NULL;
    assert_int_equal(set_hard(&w, LC "=4," LM "=2Gi," RC "=4," RM "=2Gi", &msg), POOL_OK);
    assert_null(msg);
    expect_alloc(&w, LC "=4," LM "=512Mi," RC "=4," RM "=750Mi",
                 LC "=0," LM "=1536Mi," RC "=0," RM "=1298Mi");
    expect_claim(&w, "ns-2", "simple-2", POOL_BOUND, NULL);
    expect_claim(&w, "ns-1", "simple-3", POOL_BOUND, NULL);
    expect_rq(&w, "ns-1", LC "=4," LM "=512Mi");
    expect_rq(&w, "ns-2", RC "=4," RM "=750Mi");
    expect_claim(&w, "ns-2", "simple-4", POOL_EXHAUSTED,
                 "requested: limits.cpu=2, available: limits.cpu=0; "
                 "requested: requests.cpu=2, available: requests.cpu=0");
    w_free(&w);
}

/* P9 Admission guards on the pool's hard. */
static void test_p9_admission(void **state)
{
    (void)state;
    world w;
    char *msg = NULL;
    w_init(&w, HARD4);
    w.dzero = true;
    w.defaults = rl_new();
    assert_int_equal(pool_defaults_zero(w.hard, w.defaults), 0);
    add(&w, "ns-1", "mem-req", 1, RM "=512Mi");
    add(&w, "ns-1", "mem-lim", 2, LM "=1Gi");
    expect_alloc(&w, LC "=0," LM "=1Gi," RC "=0," RM "=512Mi",
                 LC "=2," LM "=1Gi," RC "=2," RM "=1536Mi");
    assert_int_equal(set_hard(&w, LC "=4," LM "=4Gi," RC "=2," RM "=2Gi", &msg), POOL_OK);
    expect_alloc(&w, LC "=0," LM "=1Gi," RC "=0," RM "=512Mi",
                 LC "=4," LM "=3Gi," RC "=2," RM "=1536Mi");
    assert_int_equal(set_hard(&w, HARD4, &msg), POOL_OK);
    assert_int_equal(set_hard(&w, LC "=2," LM "=10Mi," RC "=0.5," RM "=128Mi", &msg), POOL_DENIED);
    assert_string_equal(msg, "can not reduce limits.memory usage to 10Mi because quantity 1Gi "
                             "is claimed . Remove corresponding claims or keep the resources "
                             "in the pool");
    free(msg);
    assert_int_equal(set_hard(&w, LM "=2Gi," RM "=2Gi", &msg), POOL_OK);
    expect_alloc(&w, LM "=1Gi," RM "=512Mi", LM "=1Gi," RM "=1536Mi");
    assert_int_equal(set_hard(&w, LM "=1Gi," RM "=512Mi", &msg), POOL_OK);
    expect_alloc(&w, LM "=1Gi," RM "=512Mi", LM "=0," RM "=0");
    assert_int_equal(set_hard(&w, LM "=0," RM "=0", &msg), POOL_DENIED);
    assert_string_equal(msg, "can not reduce limits.memory usage to 0 because quantity 1Gi is "
                             "claimed . Remove corresponding claims or keep the resources in "
                             "the pool");
    free(msg);
    assert_int_equal(set_hard(&w, RC "=1", &msg), POOL_DENIED);
    assert_string_equal(msg, "can not remove resource limits.memory as it is still being "
                             "allocated. Remove corresponding claims or keep the resources in "
                             "the pool");
    free(msg);
    /* an unchanged hard is not checked at all */
    rlist *h = L(LM "=1Gi," RM "=512Mi"), *used = L(LM "=5Gi");
    assert_int_equal(pool_check_hard_update(h, h, used, &msg), POOL_OK);
    assert_null(msg);
    rl_free(h);
    rl_free(used);
    w_free(&w);
}

/* ---- §6.1 claim scenarios ---- */

/* C1: claims of all four resources = 0 bind; C3: release; C2: the in-use guards. */
static void test_c1_c2_c3_claims(void **state)
{
    (void)state;
    world w;
    w_init(&w, HARD4);
    add(&w, "ns-1", "zero", 1, LC "=0," LM "=0," RC "=0," RM "=0");
    add(&w, "ns-2", "zero", 1, LC "=0," LM "=0," RC "=0," RM "=0");
    expect_claim(&w, "ns-1", "zero", POOL_BOUND, NULL);
    expect_claim(&w, "ns-2", "zero", POOL_BOUND, NULL);
    expect_rq(&w, "ns-1", ""); /* zero sums are dropped */
    add(&w, "ns-1", "admission", 2, LC "=1," LM "=1Gi," RC "=1," RM "=1Gi");
    pool_view p = view(&w);
    rlist *used = L(RC "=10m," RM "=16Mi," LC "=20m," LM "=32Mi");
    bool in_use;
    assert_int_equal(pool_claim_in_use(w.s, &p, "ns-1", "uid-ns-1-admission", used, &in_use), 0);
    assert_true(in_use);
    assert_int_equal(pool_claim_in_use(w.s, &p, "ns-1", "uid-ns-1-zero", used, &in_use), 0);
    assert_false(in_use); /* a zero claim covers nothing */
    const pool_status **inuse;
    size_t n;
    assert_int_equal(pool_in_use(w.s, &p, "ns-1", used, &inuse, &n), 0);
    assert_int_equal(n, 1);
    assert_string_equal(inuse[0]->name, "admission");
    free(inuse);
    char *msg;
    assert_int_equal(pool_check_claim_delete(true, "pool", &msg), POOL_DENIED);
    assert_string_equal(msg, "cannot delete the pool while claim is used in resourcepool pool");
    free(msg);
    assert_int_equal(pool_check_claim_delete(false, "pool", &msg), POOL_OK);
    rlist *a = L(LC "=1"), *a2 = L(LC "=1000m"), *b = L(LC "=2");
    assert_int_equal(pool_check_claim_update(true, "pool", "pool", "some-random-pool", a, a, &msg),
                     POOL_DENIED);
    free(msg);
    assert_int_equal(pool_check_claim_update(true, "pool", "pool", "pool", a, b, &msg),
                     POOL_DENIED);
    free(msg);
    /* the same amounts written differently are no change */
    assert_int_equal(pool_check_claim_update(true, "pool", "pool", "pool", a, a2, &msg), POOL_OK);
    assert_int_equal(pool_check_claim_update(false, "pool", "pool", "x", a, b, &msg), POOL_OK);
    rl_free(a);
    rl_free(a2);
    rl_free(b);
    /* usage the defaults cover pins no claim (allot choice) */
    w.defaults = L(RC "=1," RM "=1Gi," LC "=1," LM "=1Gi");
    p = view(&w);
    assert_int_equal(pool_claim_in_use(w.s, &p, "ns-1", "uid-ns-1-admission", used, &in_use), 0);
    assert_false(in_use);
    rl_free(w.defaults);
    w.defaults = NULL;
    rl_free(used);
    /* C3: release of a bound claim: it leaves the pool, then may be updated */
    pool_delta d;
    pool_delta_init(&d);
    tclaim *t = w_find(&w, "ns-1", "admission");
    pool_claim c = as_claim(t);
    c.released = true;
    p = view(&w);
    assert_int_equal(pool_apply_claim(w.s, &p, &c, &d), 0);
    assert_int_equal(d.nclaims, 1);
    assert_int_equal(d.claims[0].before, POOL_BOUND);
    assert_int_equal(d.claims[0].after, POOL_NONE);
    assert_string_equal(d.claims[0].name, "admission");
    assert_int_equal(d.nnamespaces, 1);
    assert_string_equal(d.namespaces[0], "ns-1");
    assert_true(d.allocation);
    pool_delta_cleanup(&d);
    assert_null(st(&w, "ns-1", "admission"));
    w_forget(&w, t);
    /* disassociation keeps the owner reference only with deleteBoundResources */
    assert_true(pool_disassociate_drops_owner(&p, false));
    w.dbr = true;
    p = view(&w);
    assert_false(pool_disassociate_drops_owner(&p, false));
    assert_true(pool_disassociate_drops_owner(&p, true));
    w_free(&w);
}

/* C4 auto-assign, the claim controller's resource check, and allot's pick. */
static void test_c4_auto_assign(void **state)
{
    (void)state;
    rlist *h1 = L(LC "=2," RC "=2"), *h2 = L(LM "=2," RM "=2");
    pool_candidate pools[] = {{"test-auto-assign-1", h1, h1}, {"test-auto-assign-2", h2, h2}};
    rlist *r1 = L(LC "=1," RC "=1"), *r2 = L(LM "=1," RM "=1"), *r3 = L("requests.storage=1");
    assert_int_equal(pool_auto_assign(r1, pools, 2), 0);
    assert_int_equal(pool_auto_assign(r2, pools, 2), 1);
    assert_int_equal(pool_auto_assign(r3, pools, 2), -1);
    /* allot: allocatable first, then by name (Capsule: the last allocatable in list order) */
    rlist *full = L(LC "=0," RC "=0");
    pool_candidate many[] = {{"c", h1, h1}, {"a", h1, full}, {"b", h1, h1}};
    assert_int_equal(pool_auto_assign(r1, many, 3), 2); /* b: allocatable, before c */
    pool_candidate none[] = {{"z", h1, full}, {"y", h1, full}};
    assert_int_equal(pool_auto_assign(r1, none, 2), 1); /* none allocatable: by name */
    char *msg;
    assert_int_equal(pool_check_claim_resources("p", h1, r3, &msg), POOL_DENIED);
    assert_string_equal(msg, "resource requests.storage is not available in pool p");
    free(msg);
    assert_int_equal(pool_check_claim_resources("p", h1, r1, &msg), POOL_OK);
    rl_free(h1);
    rl_free(h2);
    rl_free(r1);
    rl_free(r2);
    rl_free(r3);
    rl_free(full);
}

/* ---- allot's choices ---- */

/* A zero request fits a resource the pool holds, and is never queued. */
static void test_zero_requests(void **state)
{
    (void)state;
    world w;
    w_init(&w, "cpu=1,memory=2Gi");
    w.ordered = true;
    add(&w, "ns-0", "all-cpu", 1, "cpu=1");
    add(&w, "ns-0", "cpu-zero", 2, "cpu=0,memory=1Gi"); /* Capsule: exhausted on cpu */
    expect_claim(&w, "ns-0", "cpu-zero", POOL_BOUND, NULL);
    add(&w, "ns-0", "wants-cpu", 3, "cpu=1");
    expect_claim(&w, "ns-0", "wants-cpu", POOL_EXHAUSTED, "requested: cpu=1, available: cpu=0");
    add(&w, "ns-0", "cpu-zero-2", 4, "cpu=0,memory=512Mi"); /* Capsule: queued on cpu */
    expect_claim(&w, "ns-0", "cpu-zero-2", POOL_BOUND, NULL);
    add(&w, "ns-0", "queued", 5, "cpu=1,memory=1Mi");
    expect_claim(&w, "ns-0", "queued", POOL_QUEUED, "requested: cpu=1, queued: cpu=1");
    /* a resource the pool does not hold never fits, whatever the amount */
    add(&w, "ns-0", "gpu", 6, "gpu=0");
    expect_claim(&w, "ns-0", "gpu", POOL_EXHAUSTED, "requested: gpu=0, available: gpu=0");
    w_free(&w);
}

/* Capacity freed by a shrink goes to the oldest waiting claim first. */
static void test_freed_capacity_to_oldest(void **state)
{
    (void)state;
    world w;
    w_init(&w, "cpu=10");
    add(&w, "ns-0", "c", 2, "cpu=8");
    add(&w, "ns-0", "x", 1, "cpu=6"); /* older than c: assigned later */
    add(&w, "ns-0", "y", 3, "cpu=6");
    expect_claim(&w, "ns-0", "x", POOL_EXHAUSTED, "requested: cpu=6, available: cpu=2");
    resize(&w, "ns-0", "c", "cpu=4");
    expect_claim(&w, "ns-0", "x", POOL_BOUND, NULL);
    expect_claim(&w, "ns-0", "y", POOL_EXHAUSTED, "requested: cpu=6, available: cpu=0");
    /* a release: the next waiting claim binds at once */
    release(&w, "ns-0", "x");
    expect_claim(&w, "ns-0", "y", POOL_BOUND, NULL);
    w_free(&w);
}

/* Settling runs passes until nothing binds: a claim queued only behind a
 * claim that is itself queued later binds (what Capsule converges to). */
static void test_settle_fixpoint(void **state)
{
    (void)state;
    world w;
    w_init(&w, "a=10,b=5,c=4");
    w.ordered = true;
    add(&w, "ns-0", "w", 1, "a=11,c=3");
    add(&w, "ns-0", "y", 2, "b=6,c=1");
    add(&w, "ns-0", "v", 3, "c=2");
    add(&w, "ns-0", "x", 4, "b=1");
    expect_claim(&w, "ns-0", "w", POOL_EXHAUSTED,
                 "requested: a=11, available: a=10; requested: c=3, available: c=2");
    expect_claim(&w, "ns-0", "y", POOL_QUEUED, "requested: c=1, queued: c=3");
    expect_claim(&w, "ns-0", "v", POOL_BOUND, NULL);
    expect_claim(&w, "ns-0", "x", POOL_BOUND, NULL);
    /* all at once, from nothing: the same */
    pool_state *f = full(&w, NULL);
    pool_view p = view(&w);
    char *a = observe(w.s, &p, &w), *b = observe(f, &p, &w);
    assert_string_equal(a, b);
    free(a);
    free(b);
    pool_state_free(f);
    w_free(&w);
}

/* Values print deterministically: used and available in the hard's format,
 * whatever order the claims bound in. */
static void test_formats(void **state)
{
    (void)state;
    world w;
    w_init(&w, "memory=4Gi,cpu=4");
    add(&w, "ns-0", "a", 2, "memory=1073741824,cpu=1000m");
    add(&w, "ns-0", "b", 1, "memory=512Mi,cpu=500m");
    expect_alloc(&w, "cpu=1500m,memory=1536Mi", "cpu=2500m,memory=2560Mi");
    /* summed in claim order (b, then a), not in bind order (a, then b: 1610612736) */
    expect_rq(&w, "ns-0", "cpu=1500m,memory=1536Mi");
    w_free(&w);
}

/* Seeding from a stored status: a full reconcile keeps the sticky allocations. */
static void test_seed_and_reconcile(void **state)
{
    (void)state;
    rlist *hard = L("cpu=4"), *five = L("cpu=5"), *one = L("cpu=1"), *two = L("cpu=2");
    pool_view p = {"pool", hard, NULL, false, false, false};
    pool_state *prev = pool_state_new();
    pool_claim big = {"ns-0", "big", "u1", 5, five, false};
    pool_claim small = {"ns-0", "small", "u2", 1, one, false};
    pool_claim gone = {"ns-1", "gone", "u3", 1, one, false};
    /* stored allocations exceed hard (e.g. written by an older controller): kept */
    assert_int_equal(pool_state_seed_bound(prev, &big), 0);
    assert_int_equal(pool_state_seed_bound(prev, &gone), 0);
    assert_int_equal(pool_state_seed_bound(prev, &big), POOL_EINVAL);
    pool_claim active[] = {big, small};
    pool_state *s;
    pool_delta d;
    pool_delta_init(&d);
    assert_int_equal(pool_reconcile(&p, prev, active, 2, &s, &d), 0);
    assert_int_equal(pool_state_get(s, "ns-0", "u1")->outcome, POOL_BOUND);
    assert_int_equal(pool_state_get(s, "ns-0", "u2")->outcome, POOL_EXHAUSTED);
    assert_string_equal(pool_state_get(s, "ns-0", "u2")->message,
                        "requested: cpu=1, available: cpu=0");
    assert_null(pool_state_get(s, "ns-1", "u3"));
    rlist *u = rl_new(), *a = rl_new();
    assert_int_equal(pool_allocation(s, &p, u, a), 0);
    expect_rl(u, "cpu=5");
    expect_rl(a, "cpu=0"); /* clamped, never negative */
    /* delta: small appeared, gone disassociated, big unchanged */
    assert_int_equal(d.nclaims, 2);
    for (size_t i = 0; i < d.nclaims; i++) {
        if (!strcmp(d.claims[i].uid, "u3")) {
            assert_int_equal(d.claims[i].before, POOL_BOUND);
            assert_int_equal(d.claims[i].after, POOL_NONE);
        } else {
            assert_string_equal(d.claims[i].uid, "u2");
            assert_int_equal(d.claims[i].after, POOL_EXHAUSTED);
        }
    }
    assert_int_equal(d.nnamespaces, 1);
    assert_string_equal(d.namespaces[0], "ns-1");
    pool_delta_cleanup(&d);
    /* duplicates and negative amounts are refused */
    pool_claim dup[] = {small, small};
    pool_state *bad = NULL;
    assert_int_equal(pool_reconcile(&p, NULL, dup, 2, &bad, NULL), POOL_EINVAL);
    assert_null(bad);
    rlist *neg = L("cpu=-1");
    pool_claim negc = {"ns-0", "neg", "u9", 1, neg, false};
    assert_int_equal(pool_apply_claim(s, &p, &negc, NULL), POOL_EINVAL);
    /* a shrink of the over-hard claim fits (its own amounts excluded) */
    pool_claim shrink = {"ns-0", "big", "u1", 5, two, false};
    assert_int_equal(pool_apply_claim(s, &p, &shrink, NULL), 0);
    assert_int_equal(pool_allocation(s, &p, u, a), 0);
    expect_rl(u, "cpu=3");
    assert_int_equal(pool_state_get(s, "ns-0", "u2")->outcome, POOL_BOUND);
    rl_free(neg);
    rl_free(u);
    rl_free(a);
    pool_state_free(s);
    pool_state_free(prev);
    rl_free(hard);
    rl_free(five);
    rl_free(one);
    rl_free(two);
}

/* An operation that fails leaves the state and the delta exactly as they were. */
static void test_atomic_on_error(void **state)
{
    (void)state;
    world w;
    w_init(&w, "cpu=1,memory=1Gi");
    add(&w, "ns-0", "bound", 1, "memory=512Mi");
    add(&w, "ns-0", "huge", 2, "cpu=1e70");
    pool_view p = view(&w);
    pool_delta d;
    pool_delta_init(&d);
    char *before = observe(w.s, &p, &w);
    /* the exhaustions' requesting sum 1e70 + 2000000001n needs more digits than a qty holds */
    rlist *tiny = L("cpu=2000000001n");
    pool_claim c = {"ns-1", "tiny", "u-tiny", 3, tiny, false};
    assert_int_equal(pool_apply_claim(w.s, &p, &c, &d), POOL_ERANGE);
    char *after = observe(w.s, &p, &w);
    assert_string_equal(before, after);
    assert_int_equal(d.nclaims, 0);
    assert_int_equal(d.nnamespaces, 0);
    free(after);
    /* the same for a resize of a bound claim, and a removal */
    pool_claim first = {"ns-1", "tiny", "u-tiny", 3, NULL, false};
    rlist *small = L("cpu=0");
    first.request = small;
    assert_int_equal(pool_apply_claim(w.s, &p, &first, &d), 0); /* binds */
    pool_delta_cleanup(&d);
    pool_delta_init(&d);
    free(before);
    before = observe(w.s, &p, &w);
    assert_int_equal(pool_apply_claim(w.s, &p, &c, &d), POOL_ERANGE); /* resize: 1n over */
    after = observe(w.s, &p, &w);
    assert_string_equal(before, after);
    assert_int_equal(d.nclaims, 0);
    free(after);
    free(before);
    pool_delta_cleanup(&d);
    rl_free(small);
    rl_free(tiny);
    w_free(&w);
}

/* ---- randomized: incremental == full reconcile ---- */

static uint64_t rng;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static const char *pick(const char *const *a, size_t n)
{
    return a[rnd((unsigned)n)];
}
#define PICK(a) pick(a, sizeof(a) / sizeof((a)[0]))

static void random_request(char *buf, size_t len)
{
    static const char *cpu[] = {"0", "500m", "1", "1000m", "2", "1500m", "3", "6"};
    static const char *mem[] = {"0", "128Mi", "512Mi", "1Gi", "1073741824", "2Gi", "750Mi"};
    static const char *gpu[] = {"1", "2", "0"};
    buf[0] = 0;
    unsigned m = 1 + rnd(7);
    if (m & 1) snprintf(buf + strlen(buf), len - strlen(buf), "cpu=%s,", PICK(cpu));
    if (m & 2) snprintf(buf + strlen(buf), len - strlen(buf), "memory=%s,", PICK(mem));
    if ((m & 4) && rnd(3) == 0)
        snprintf(buf + strlen(buf), len - strlen(buf), "gpu=%s,", PICK(gpu));
    if (!buf[0]) snprintf(buf, len, "cpu=%s,", PICK(cpu));
    buf[strlen(buf) - 1] = 0;
}

static void random_hard(char *buf, size_t len)
{
    static const char *cpu[] = {"2", "4", "6", "3500m", "10"};
    static const char *mem[] = {"2Gi", "4Gi", "3Gi", "1Gi"};
    snprintf(buf, len, "cpu=%s,memory=%s%s", PICK(cpu), PICK(mem), rnd(3) ? "" : ",gpu=2");
}

/* Snapshot of every claim's line (to check the delta lists each change). */
static char *claim_line(const pool_status *s)
{
    if (!s) return strdup("none");
    char *al = s->allocated ? fmt(s->allocated) : NULL, *r;
    size_t n = 64 + (al ? strlen(al) : 0) + (s->message ? strlen(s->message) : 0);
    r = malloc(n);
    snprintf(r, n, "%d[%s]{%s}", s->outcome, al ? al : "-", s->message ? s->message : "-");
    free(al);
    return r;
}

typedef struct ident {
    char ns[32], uid[32];
    char *line;
} ident;

/* The RQ hard of namespaces ns-0..ns-4, one line each. */
static char *rq_lines(const world *w)
{
    pool_view p = view(w);
    rlist *rq = rl_new();
    dbuf b;
    dbuf_init(&b, 1 << 20);
    for (int i = 0; i < 5; i++) {
        char ns[16];
        snprintf(ns, sizeof ns, "ns-%d", i);
        assert_int_equal(pool_rq_hard(w->s, &p, ns, rq), 0);
        char *r = fmt(rq);
        dbuf_printf(&b, "%s\n", r);
        free(r);
    }
    rl_free(rq);
    return dbuf_take(&b, NULL);
}

/* Every namespace whose RQ hard changed is in the delta. */
static void check_delta_ns(const char *before, const char *after, const pool_delta *d)
{
    for (int i = 0; i < 5; i++) {
        const char *eb = strchr(before, '\n'), *ea = strchr(after, '\n');
        char ns[16];
        bool listed = false;
        snprintf(ns, sizeof ns, "ns-%d", i);
        for (size_t k = 0; k < d->nnamespaces; k++)
            listed |= !strcmp(d->namespaces[k], ns);
        if ((eb - before != ea - after || memcmp(before, after, (size_t)(eb - before))) && !listed)
            fail_msg("the RQ hard of %s changed but it is not in the delta", ns);
        before = eb + 1;
        after = ea + 1;
    }
}

/* Lines of every claim now or before in the world. */
static size_t snapshot(const world *w, ident *ids, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < w->n && n < cap; i++, n++) {
        strcpy(ids[n].ns, w->c[i].ns);
        strcpy(ids[n].uid, w->c[i].uid);
        ids[n].line = claim_line(pool_state_get(w->s, w->c[i].ns, w->c[i].uid));
    }
    return n;
}

static bool in_delta(const pool_delta *d, const char *ns, const char *uid, pool_outcome *after)
{
    for (size_t i = 0; i < d->nclaims; i++)
        if (!strcmp(d->claims[i].namespace_, ns) && !strcmp(d->claims[i].uid, uid)) {
            *after = d->claims[i].after;
            return true;
        }
    return false;
}

/* Every claim whose line changed is in the delta, with its outcome now. */
static void check_delta(const world *w, ident *ids, size_t n, const pool_delta *d)
{
    for (size_t i = 0; i < n; i++) {
        const pool_status *s = pool_state_get(w->s, ids[i].ns, ids[i].uid);
        char *now = claim_line(s);
        pool_outcome after;
        if (strcmp(now, ids[i].line)) {
            if (!in_delta(d, ids[i].ns, ids[i].uid, &after))
                fail_msg("%s/%s changed (%s -> %s) but is not in the delta", ids[i].ns, ids[i].uid,
                         ids[i].line, now);
            assert_int_equal(after, s ? s->outcome : POOL_NONE);
        }
        free(now);
    }
    for (size_t i = 0; i < d->nclaims; i++) {
        const pool_status *s = pool_state_get(w->s, d->claims[i].namespace_, d->claims[i].uid);
        assert_int_equal(d->claims[i].after, s ? s->outcome : POOL_NONE);
    }
}

/* Allocation <= hard for every hard key, nothing used outside hard, available >= 0. */
static void check_invariants(const world *w)
{
    pool_view p = view(w);
    rlist *u = rl_new(), *a = rl_new();
    assert_int_equal(pool_allocation(w->s, &p, u, a), 0);
    for (size_t i = 0; i < rl_len(u); i++) {
        const qty *h = rl_get(w->hard, rl_name(u, i));
        if (h)
            assert_true(qty_cmp(rl_qty(u, i), h) <= 0);
        else
            assert_true(qty_is_zero(rl_qty(u, i)));
    }
    for (size_t i = 0; i < rl_len(a); i++)
        assert_true(qty_sign(rl_qty(a, i)) >= 0);
    /* the namespaces' claims add up to the pool's used */
    rlist *sum = rl_new();
    const pool_status **b;
    size_t n;
    assert_int_equal(pool_state_list(w->s, true, &b, &n), 0);
    assert_int_equal(n, pool_state_nbound(w->s));
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rl_add_to(sum, b[i]->allocated), 0);
    free(b);
    for (size_t i = 0; i < rl_len(sum); i++) {
        const qty *x = rl_get(u, rl_name(sum, i));
        if (x)
            assert_int_equal(qty_cmp(x, rl_qty(sum, i)), 0);
        else
            assert_true(qty_is_zero(rl_qty(sum, i)));
    }
    rl_free(sum);
    rl_free(u);
    rl_free(a);
}

static unsigned long st_ops, st_outcomes[4];

static void random_op(world *w, unsigned *uid_seq)
{
    static const char *names[] = {"a", "b", "c", "d"};
    char req[128], hard[128], ns[16];
    pool_state *before = snap(w);
    ident ids[MAXC];
    size_t nids = snapshot(w, ids, MAXC);
    pool_delta d;
    pool_delta_init(&d);
    pool_view p = view(w);
    unsigned op = rnd(100);
    int rc = 0;
    char *rq_before = rq_lines(w);
    if (op < 40 && w->n < MAXC - 1) { /* a new claim, anywhere in the order */
        tclaim *t = &w->c[w->n++];
        snprintf(t->ns, sizeof t->ns, "ns-%u", rnd(5));
        snprintf(t->name, sizeof t->name, "%s", PICK(names));
        snprintf(t->uid, sizeof t->uid, "u%u", (*uid_seq)++);
        t->ts = rnd(20);
        random_request(req, sizeof req);
        t->req = L(req);
        pool_claim c = as_claim(t);
        rc = pool_apply_claim(w->s, &p, &c, &d);
    } else if (op < 62 && w->n) { /* a resize (or the same spec again) */
        tclaim *t = &w->c[rnd((unsigned)w->n)];
        if (rnd(5)) {
            random_request(req, sizeof req);
            rl_free(t->req);
            t->req = L(req);
        }
        pool_claim c = as_claim(t);
        rc = pool_apply_claim(w->s, &p, &c, &d);
    } else if (op < 80 && w->n) { /* delete or release */
        tclaim *t = &w->c[rnd((unsigned)w->n)];
        pool_claim c = as_claim(t);
        c.released = true;
        rc = rnd(2) ? pool_apply_claim(w->s, &p, &c, &d)
                    : pool_remove_claim(w->s, &p, t->ns, t->uid, &d);
        w_forget(w, t);
    } else if (op < 84) { /* a namespace leaves */
        snprintf(ns, sizeof ns, "ns-%u", rnd(5));
        rc = pool_remove_namespace(w->s, &p, ns, &d);
        for (size_t i = w->n; i-- > 0;)
            if (!strcmp(w->c[i].ns, ns)) w_forget(w, &w->c[i]);
    } else if (op < 97) { /* a pool hard change, if admitted */
        rlist *used = rl_new(), *nh;
        char *msg = NULL;
        random_hard(hard, sizeof hard);
        nh = L(hard);
        assert_int_equal(pool_allocation(w->s, &p, used, NULL), 0);
        if (pool_check_hard_update(w->hard, nh, used, &msg) == POOL_OK) {
            rl_free(w->hard);
            w->hard = nh;
            p = view(w);
            rc = pool_apply_pool(w->s, &p, &d);
        } else {
            assert_non_null(msg);
            rl_free(nh);
        }
        free(msg);
        rl_free(used);
    } else { /* orderedQueue toggled */
        w->ordered = !w->ordered;
        p = view(w);
        rc = pool_apply_pool(w->s, &p, &d);
    }
    assert_int_equal(rc, 0);
    st_ops++;
    for (size_t i = 0; i < w->n; i++)
        st_outcomes[pool_state_get(w->s, w->c[i].ns, w->c[i].uid)->outcome]++;
    check_against_full(w, before);
    check_delta(w, ids, nids, &d);
    char *rq_after = rq_lines(w);
    if (op < 84) check_delta_ns(rq_before, rq_after, &d); /* a pool change rewrites every RQ */
    free(rq_before);
    free(rq_after);
    check_invariants(w);
    for (size_t i = 0; i < nids; i++)
        free(ids[i].line);
    pool_delta_cleanup(&d);
    pool_state_free(before);
}

static void test_random_incremental_equals_full(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        world w;
        char hard[128];
        unsigned uid_seq = 0;
        rng = seed * 0x9E3779B97F4A7C15ull;
        random_hard(hard, sizeof hard);
        w_init(&w, hard);
        w.ordered = rnd(2);
        if (rnd(2)) w.defaults = L("cpu=1,pods=3");
        w.dzero = rnd(2);
        for (int i = 0; i < 120; i++)
            random_op(&w, &uid_seq);
        w_free(&w);
    }
    print_message("random: %lu operations; claims seen bound %lu, exhausted %lu, queued %lu\n",
                  st_ops, st_outcomes[POOL_BOUND], st_outcomes[POOL_EXHAUSTED],
                  st_outcomes[POOL_QUEUED]);
}

/* ---- scale: 10,000 claims in 1,000 namespaces ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_bulk(void **state)
{
    (void)state;
    rlist *hard = L("requests.cpu=100k,requests.memory=100Ti"),
          *req = L("requests.cpu=2,requests.memory=4Gi");
    pool_view p = {"bulk", hard, NULL, false, true, false};
    pool_state *s = pool_state_new();
    pool_delta d;
    pool_delta_init(&d);
    double t0 = now_s();
    for (int i = 0; i < 10000; i++) {
        char ns[16], name[16], uid[16];
        snprintf(ns, sizeof ns, "ns-%d", i % 1000);
        snprintf(name, sizeof name, "c-%d", i / 1000);
        snprintf(uid, sizeof uid, "u-%d", i);
        pool_claim c = {ns, name, uid, i / 100, req, false};
        assert_int_equal(pool_apply_claim(s, &p, &c, &d), 0);
        pool_delta_cleanup(&d);
        pool_delta_init(&d);
    }
    double t1 = now_s();
    assert_int_equal(pool_state_nbound(s), 10000);
    rlist *rq = rl_new();
    assert_int_equal(pool_rq_hard(s, &p, "ns-7", rq), 0);
    expect_rl(rq, "requests.cpu=20,requests.memory=40Gi");
    print_message("bulk: 10000 claims bound in %.3f s (%.0f/s)\n", t1 - t0, 10000 / (t1 - t0));
    /* 2,000 more claims wait (the pool is full); each release binds the next one */
    rlist *fullhard = L("requests.cpu=20k,requests.memory=100Ti");
    p.hard = fullhard;
    assert_int_equal(pool_apply_pool(s, &p, NULL), 0);
    for (int i = 10000; i < 12000; i++) {
        char ns[16], name[16], uid[16];
        snprintf(ns, sizeof ns, "ns-%d", i % 1000);
        snprintf(name, sizeof name, "c-%d", i / 1000);
        snprintf(uid, sizeof uid, "u-%d", i);
        pool_claim c = {ns, name, uid, i / 100, req, false};
        assert_int_equal(pool_apply_claim(s, &p, &c, NULL), 0);
    }
    assert_int_equal(pool_state_nbound(s), 10000);
    double worst = 0;
    t0 = now_s();
    for (int i = 0; i < 100; i++) {
        char ns[16], uid[16];
        snprintf(ns, sizeof ns, "ns-%d", i % 1000);
        snprintf(uid, sizeof uid, "u-%d", i);
        double a = now_s();
        assert_int_equal(pool_remove_claim(s, &p, ns, uid, &d), 0);
        double b = now_s() - a;
        worst = b > worst ? b : worst;
        assert_int_equal(pool_state_nbound(s), 10000); /* the next waiting claim took its place */
        pool_delta_cleanup(&d);
        pool_delta_init(&d);
    }
    print_message("bulk: release -> next of 2000 waiting bound: mean %.2f ms, worst %.2f ms\n",
                  (now_s() - t0) * 10, worst * 1000);
    rl_free(fullhard);
    rl_free(rq);
    pool_state_free(s);
    rl_free(hard);
    rl_free(req);
}

/* Cluster mode's release: a claim's amounts leave the namespace quota's
 * hard only while what is used still fits; a resource the quota does not
 * limit stays unlimited. */
static void test_release_hard(void **state)
{
    (void)state;
    rlist *hard = L("requests.cpu=2,limits.cpu=2"), *out = NULL;
    char *msg = NULL;
    rlist *used = L("requests.cpu=1,limits.cpu=500m"),
          *give = L("requests.cpu=1,requests.memory=1Gi");
    assert_int_equal(pool_release_hard(hard, used, give, "solar", &out, &msg), POOL_OK);
    assert_null(msg);
    rlist *want = L("requests.cpu=1,limits.cpu=2");
    assert_true(rl_equal(out, want));
    rl_free(want);
    rl_free(out);
    rl_free(used);
    /* 1500m used of 2: giving back 1 would leave 1 < 1500m */
    used = L("requests.cpu=1500m");
    assert_int_equal(pool_release_hard(hard, used, give, "solar", &out, &msg), POOL_DENIED);
    assert_null(out);
    assert_string_equal(msg, "cannot delete the pool while claim is used in resourcepool solar");
    free(msg);
    rl_free(used);
    rl_free(give);
    rl_free(hard);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_greedy_examples),
        cmocka_unit_test(test_greedy_zero_and_filter),
        cmocka_unit_test(test_greedy_exact),
        cmocka_unit_test(test_resize_fit),
        cmocka_unit_test(test_pool_funcs),
        cmocka_unit_test(test_p1_defaults),
        cmocka_unit_test(test_p2_defaults_zero),
        cmocka_unit_test(test_p3_unordered),
        cmocka_unit_test(test_p4_resize),
        cmocka_unit_test(test_p5_ordered),
        cmocka_unit_test(test_p9_admission),
        cmocka_unit_test(test_c1_c2_c3_claims),
        cmocka_unit_test(test_c4_auto_assign),
        cmocka_unit_test(test_zero_requests),
        cmocka_unit_test(test_freed_capacity_to_oldest),
        cmocka_unit_test(test_settle_fixpoint),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_seed_and_reconcile),
        cmocka_unit_test(test_atomic_on_error),
        cmocka_unit_test(test_random_incremental_equals_full),
        cmocka_unit_test(test_bulk),
        cmocka_unit_test(test_release_hard),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
