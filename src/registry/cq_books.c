/* cq_books.c - custom quota books on the ledger (see cq_books.h). */
#include "registry/cq_books.h"
#include "core/jdump.h"

#include "api/kinds.h"
#include "core/dbuf.h"
#include "core/jget.h"
#include "core/jsontext.h"
#include "core/selector.h"
#include "registry/conditions.h"
#include "registry/registry.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *meta(const json_t *o, const char *k)
{
    return jtext(json_object_get(o, "metadata"), k);
}

void cq_gvk_string(const char *group, const char *version, const char *kind, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s, Kind=%s", group, version, kind);
}

/* ---- claims ---- */

void cq_ident_of(cq_ident *id, const char *group, const char *version, const char *kind,
                 const json_t *obj)
{
    const json_t *m = json_object_get(obj, "metadata");
    *id = (cq_ident){group, version, kind, jtext(m, "uid"), jtext(m, "namespace"), jtext(m, "name"),
                     0,     NULL};
    id->uid_hash = strmap_hash(id->uid);
}

static void obj_release(cq_obj *o)
{
    if (o && atomic_fetch_sub(&o->refs, 1) == 1) {
        free(atomic_load(&o->json));
        free(o); /* one allocation: the strings follow */
    }
}

void cq_ident_done(cq_ident *id)
{
    obj_release(id->obj);
    id->obj = NULL;
}

/* id's shared object, made on first use; a new reference, or NULL. */
static cq_obj *ident_obj(cq_ident *id)
{
    if (!id->obj) {
        const char *s[6] = {id->uid, id->group, id->version, id->kind, id->ns, id->name};
        size_t len[6], total = sizeof(cq_obj);
        for (int i = 0; i < 6; i++)
            total += (len[i] = strlen(s[i]) + 1);
        cq_obj *o = malloc(total);
        if (!o) return NULL;
        char *p = (char *)(o + 1);
        const char **dst[6] = {&o->uid, &o->group, &o->version, &o->kind, &o->ns, &o->name};
        for (int i = 0; i < 6; i++) {
            memcpy(p, s[i], len[i]);
            *dst[i] = p;
            p += len[i];
        }
        o->uid_hash = id->uid_hash;
        atomic_init(&o->refs, 1);
        atomic_init(&o->json, NULL);
        id->obj = o;
    }
    atomic_fetch_add(&id->obj->refs, 1);
    return id->obj;
}

/* idxmap_eq: claim pos is the claim of object uid. */
static bool claim_is(const void *ctx, uint32_t pos, const void *uid)
{
    const cq_book *b = ctx;
    return pos < b->nclaims && !strcmp(b->claimv[pos].obj->uid, uid);
}

const cq_claim *cq_book_claim(const cq_book *b, const char *uid)
{
    int64_t i = idxmap_find(&b->claims, strmap_hash(uid), uid, claim_is, b);
    return i >= 0 ? &b->claimv[i] : NULL;
}

const cq_claim *cq_book_claim_of(const cq_book *b, const cq_ident *id)
{
    int64_t i = idxmap_find(&b->claims, id->uid_hash, id->uid, claim_is, b);
    return i >= 0 ? &b->claimv[i] : NULL;
}

static void problems_free(strmap *m)
{
    const char *k;
    void *v;
    for (size_t it = 0; m && strmap_next(m, &it, &k, &v);) {
        cq_problem *p = v;
        obj_release(p->obj);
        free(p);
    }
    strmap_free(m);
}

static void book_free(void *v)
{
    cq_book *b = v;
    if (!b) return;
    problems_free(b->problems);
    for (size_t i = 0; i < b->nclaims; i++) {
        obj_release(b->claimv[i].obj);
        free(b->claimv[i].big);
    }
    free(b->claimv);
    idxmap_free(&b->claims);
    strmap_free(b->selected);
    if (b->kinds != b->kind_in) free(b->kinds);
    json_decref(b->namespaces);
    cq_free(b->q);
    free(b->error);
    json_decref(b->quota);
    json_decref(b->last_status);
    free(b);
}

int cq_book_set(cq_book *b, cq_ident *id, bool matched, const qty *usage, const qty *net,
                api_err *e)
{
    return cq_book_set_from(b, id, cq_book_claim_of(b, id), matched, usage, net, NULL, e);
}

/* c's amounts: 0, or -1 when out of memory (c unchanged). */
static int claim_amounts(cq_claim *c, const qty *usage, const qty *net)
{
    qty_small u, n;
    if (qty_to_small(usage, &u) == 0 && qty_to_small(net, &n) == 0) {
        free(c->big);
        c->big = NULL;
        c->usage = u;
        c->net = n;
        return 0;
    }
    qty *big = c->big ? c->big : malloc(2 * sizeof *big);
    if (!big) return -1;
    big[0] = *usage;
    big[1] = *net;
    c->big = big;
    return 0;
}

/* Append a claim on id's object. 0 or -1 (out of memory). */
static int claim_add(cq_book *b, cq_ident *id, const qty *usage, const qty *net)
{
    if (b->nclaims == b->claimcap) {
        size_t nc = b->claimcap ? b->claimcap * 2 : 8;
        cq_claim *nv = realloc(b->claimv, nc * sizeof *nv);
        if (!nv) return -1;
        b->claimv = nv;
        b->claimcap = nc;
    }
    cq_claim c = {0};
    if (claim_amounts(&c, usage, net) != 0) return -1;
    cq_obj *o = ident_obj(id);
    if (!o) {
        free(c.big);
        return -1;
    }
    if (b->nclaims >= UINT32_MAX - 1 ||
        idxmap_add(&b->claims, o->uid_hash, (uint32_t)b->nclaims) != 0) {
        obj_release(o);
        free(c.big);
        return -1;
    }
    c.obj = o;
    b->claimv[b->nclaims++] = c;
    return 0;
}

/* Remove claim c: the last claim takes its place. */
static void claim_remove(cq_book *b, const cq_claim *c)
{
    size_t i = (size_t)(c - b->claimv), last = b->nclaims - 1;
    cq_obj *o = b->claimv[i].obj, *moved = b->claimv[last].obj;
    free(b->claimv[i].big);
    idxmap_del(&b->claims, o->uid_hash, o->uid, claim_is, b);
    if (i != last) { /* (found at last, then moved: claimv is still whole) */
        idxmap_move(&b->claims, moved->uid_hash, moved->uid, claim_is, b, (uint32_t)i);
        b->claimv[i] = b->claimv[last];
    }
    b->nclaims--;
    obj_release(o);
}

int cq_book_set_from(cq_book *b, cq_ident *id, const cq_claim *old, bool matched, const qty *usage,
                     const qty *net, const qty *next_sum, api_err *e)
{
    qty sum = next_sum ? *next_sum : b->sum;
    qty was = old ? cq_claim_net(old) : qty_zero(QTY_DECIMAL_SI);
    if (!next_sum && ((old && qty_sub(&sum, &was) != 0) || (matched && qty_add(&sum, net) != 0)))
        return api_err_set(e, API_FORBIDDEN, "custom quota usage beyond supported precision");
    if (matched && old) {
        cq_claim *c = &b->claimv[old - b->claimv]; /* (the same object: same names) */
        if (claim_amounts(c, usage, net) != 0) return api_err_set(e, API_INTERNAL, "out of memory");
    } else if (matched) {
        if (claim_add(b, id, usage, net) != 0) return api_err_set(e, API_INTERNAL, "out of memory");
    } else if (old) {
        claim_remove(b, old);
    }
    b->sum = sum;
    b->used = qty_sign(&sum) < 0 ? qty_zero(qty_get_format(&sum)) : sum;
    return 0;
}

/* ---- problems ---- */

const char *cq_book_problem_of(const cq_book *b, const cq_ident *id)
{
    if (!b->problems || strmap_count(b->problems) == 0) return NULL;
    const cq_problem *p = strmap_get_h(b->problems, id->uid, id->uid_hash);
    return p ? p->msg : NULL;
}

int cq_book_note(cq_book *b, cq_ident *id, const char *problem, api_err *e)
{
    if (!problem) {
        cq_problem *old = b->problems ? strmap_del(b->problems, id->uid) : NULL;
        if (old) {
            obj_release(old->obj);
            free(old);
        }
        return 0;
    }
    if (!b->problems && !(b->problems = strmap_new()))
        return api_err_set(e, API_INTERNAL, "out of memory");
    size_t n = cq_problem_len(problem);
    cq_problem *p = malloc(sizeof *p + n + 1);
    cq_obj *o = p ? ident_obj(id) : NULL;
    if (!o) {
        free(p);
        return api_err_set(e, API_INTERNAL, "out of memory");
    }
    p->obj = o;
    memcpy(p->msg, problem, n);
    p->msg[n] = '\0';
    void *old = NULL;
    if (strmap_put_h(b->problems, o->uid, o->uid_hash, p, &old) != 0) {
        obj_release(o);
        free(p);
        return api_err_set(e, API_INTERNAL, "out of memory");
    }
    if (old) {
        obj_release(((cq_problem *)old)->obj);
        free(old);
    }
    return 0;
}

/* At most this many objects are named in a Ready message (a quota may
 * count 100,000 objects that all fail alike); the rest are counted. */
#define CQ_NAMED_MAX 3

static int problem_cmp(const void *a, const void *b)
{
    const cq_obj *x = (*(const cq_problem *const *)a)->obj,
                 *y = (*(const cq_problem *const *)b)->obj;
    int c = strcmp(x->ns, y->ns);
    if (!c) c = strcmp(x->kind, y->kind);
    if (!c) c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->uid, y->uid);
}

/* "get usage from <ns>/<name> (<gvk>) <problem>" (Capsule's rebuild error)
 * for one object. */
static void problem_line(dbuf *out, const cq_obj *o, const char *msg)
{
    char gvk[600];
    cq_gvk_string(o->group, o->version, o->kind, gvk, sizeof gvk);
    dbuf_printf(out, "get usage from %s/%s (%s) %s", o->ns, o->name, gvk, msg);
}

/* The Ready message part for the objects the books cannot fully evaluate:
 * how many, what that means, then the first few by namespace, kind and
 * name. NULL when there are none (or out of memory). */
static char *problems_text(const cq_book *b)
{
    size_t n = cq_book_nproblems(b), k = 0;
    if (!n) return NULL;
    const cq_problem **v = malloc(n * sizeof *v);
    if (!v) return NULL;
    const char *key;
    void *val;
    for (size_t it = 0; k < n && strmap_next(b->problems, &it, &key, &val);)
        v[k++] = val;
    qsort(v, k, sizeof *v, problem_cmp);
    dbuf out;
    dbuf_init(&out, 64 * 1024);
    dbuf_printf(&out,
                "%zu object%s with values this quota cannot read (a value that is not a "
                "quantity counts 0, a selector that cannot be evaluated does not select): ",
                n, n == 1 ? "" : "s");
    for (size_t i = 0; i < k && i < CQ_NAMED_MAX; i++) {
        if (i) dbuf_adds(&out, "; ");
        problem_line(&out, v[i]->obj, v[i]->msg);
    }
    if (k > CQ_NAMED_MAX) dbuf_printf(&out, "; and %zu more", k - CQ_NAMED_MAX);
    free(v);
    size_t len;
    char *text = dbuf_take(&out, &len);
    dbuf_free(&out);
    return text;
}

/* ---- loading: Capsule's rebuild ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* A global quota's namespaces: "*" for all, or the selected ones sorted. */
static int load_namespaces(store_txn *t, cq_book *b, api_err *e)
{
    if (!b->q || cq_all_namespaces(b->q)) {
        b->namespaces = json_pack("[s]", "*");
        return b->namespaces ? 0 : api_err_set(e, API_INTERNAL, "out of memory");
    }
    store_obj **objs = NULL;
    size_t n = 0;
    if (store_txn_list(t, "namespaces//", &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list namespaces");
    b->namespaces = json_array();
    b->selected = strmap_new();
    int rc = b->namespaces && b->selected ? 0 : api_err_set(e, API_INTERNAL, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *ns = rc == 0 ? store_obj_doc(objs[i]) : NULL;
        const json_t *m = json_object_get(ns, "metadata");
        /* A namespace being deleted has left the selection (admission's
         * `leaving`): its final removal writes no namespace admission sees. */
        if (ns && !json_object_get(m, "deletionTimestamp") &&
            cq_selects_namespace(b->q, json_object_get(m, "labels")))
            json_array_append_new(b->namespaces, json_string(meta(ns, "name")));
        json_decref(ns);
        store_obj_unref(objs[i]);
    }
    free(objs);
    if (rc != 0) return rc;
    /* jansson arrays cannot be sorted in place: copy out, sort, copy back */
    size_t m = json_array_size(b->namespaces);
    json_t **v = m ? malloc(m * sizeof *v) : NULL;
    if (m && !v) return api_err_set(e, API_INTERNAL, "out of memory");
    for (size_t i = 0; i < m; i++)
        v[i] = json_incref(json_array_get(b->namespaces, i));
    if (m) qsort(v, m, sizeof *v, cmp_str);
    json_array_clear(b->namespaces);
    for (size_t i = 0; i < m; i++)
        json_array_append_new(b->namespaces, v[i]);
    free(v);
    size_t i;
    json_t *x;
    json_array_foreach(b->namespaces, i,
                       x) if (strmap_put(b->selected, json_string_value(x), (void *)1, NULL) != 0)
        rc = api_err_set(e, API_INTERNAL, "out of memory");
    return rc;
}

bool cq_book_covers(const cq_book *b, const char *ns)
{
    if (!b->global) return !strcmp(ns, b->ns);
    if (!b->selected) return true;
    return *ns && strmap_get(b->selected, ns) != NULL;
}

/* Append an error to the Ready=False message ("; "-joined). */
static void add_error(cq_book *b, const char *msg)
{
    size_t old = b->error ? strlen(b->error) : 0;
    char *nw = realloc(b->error, old + strlen(msg) + 3);
    if (!nw) return;
    if (old) memcpy(nw + old, "; ", 2), old += 2;
    strcpy(nw + old, msg);
    b->error = nw;
}

/* The api kind of source i, or NULL with the error recorded. */
static const api_kind *source_kind(cq_book *b, size_t i)
{
    const char *g, *v, *k;
    char av[300], gvk[600], msg[1800];
    cq_source_gvk(b->q, i, &g, &v, &k);
    snprintf(av, sizeof av, "%s%s%s", g, *g ? "/" : "", v);
    const api_kind *kind = api_kind_by_kind(av, k);
    cq_gvk_string(g, v, k, gvk, sizeof gvk);
    if (!kind) {
        snprintf(msg, sizeof msg,
                 "failed to resolve REST mapping for %s: no matches for kind \"%s\" in version "
                 "\"%s\"",
                 gvk, k, av);
        add_error(b, msg);
    } else if (!b->global && !kind->namespaced) {
        snprintf(msg, sizeof msg, "GVK %s is not namespaced", gvk);
        add_error(b, msg);
        kind = NULL;
    }
    return kind;
}

/* An object that could not be counted, and why. */
typedef struct count_err {
    const char *key; /* borrowed from the listed object */
    char *msg;
} count_err;

static int err_cmp(const void *a, const void *b)
{
    return strcmp(((const count_err *)a)->key, ((const count_err *)b)->key);
}

/* One listed object counted from its stored text, unparsed (a recount of
 * 100,000 pods was 9 parts JSON parse in 10, and kept every parse): 1 when
 * the text cannot tell (the quota needs more than plain paths, the object
 * is being deleted, a value has an escape, any error): count_one parses. */
static int count_text(cq_book *b, const api_kind *k, store_obj *so, int *rc, api_err *e)
{
    jt_val doc = jt_text(so->json, so->len), m, uidv, gone;
    const char *u;
    size_t n;
    char uid[128];
    if (jt_member(doc, "metadata", 8, &m) != 1 || jt_member(m, "uid", 3, &uidv) != 1 ||
        jt_string(uidv, &u, &n) != 0 || n >= sizeof uid ||
        jt_member(m, "deletionTimestamp", 17, &gone) != 0)
        return 1;
    bool matched;
    qty usage, net;
    if (cq_object_usage_text(b->q, k->group, k->version, k->kind, so->json, so->len, &matched,
                             &usage, &net) != 0)
        return 1;
    *rc = 0;
    if (!matched) return 0;
    memcpy(uid, u, n);
    uid[n] = '\0';
    /* (each object listed once: it has no claim yet) */
    cq_ident id = {k->group, k->version, k->kind, uid, so->ns, so->name, strmap_hash(uid), NULL};
    *rc = cq_book_set_from(b, &id, NULL, true, &usage, &net, NULL, e);
    cq_ident_done(&id);
    return 0;
}

/* One listed object: counted (with its problem, if any), or its error
 * appended to errs. 0 or -1. */
static int count_one(cq_book *b, const api_kind *k, store_obj *so, count_err **errs, size_t *nerr,
                     api_err *e)
{
    int done;
    if (count_text(b, k, so, &done, e) == 0) return done;
    json_t *obj = store_obj_doc(so);
    if (!obj) return api_err_set(e, API_INTERNAL, "out of memory");
    const json_t *m = json_object_get(obj, "metadata");
    bool going = json_object_get(m, "deletionTimestamp") &&
                 json_array_size(json_object_get(m, "finalizers")) == 0;
    bool matched = false, problem = false;
    qty usage, net;
    char err[1400], msg[2100], gvk[600];
    int rc = 0;
    if (going) {
        /* not counted: on its way out */
    } else if (cq_object_usage(b->q, k->group, k->version, k->kind, obj, NULL, &matched, &usage,
                               &net, &problem, err, sizeof err) != 0) {
        cq_gvk_string(k->group, k->version, k->kind, gvk, sizeof gvk);
        snprintf(msg, sizeof msg, "get usage from %s/%s (%s): %s", so->ns, so->name, gvk, err);
        count_err *nv = realloc(*errs, (*nerr + 1) * sizeof *nv);
        char *dup = nv ? strdup(msg) : NULL;
        if (nv) *errs = nv;
        if (dup)
            nv[(*nerr)++] = (count_err){so->key, dup};
        else
            rc = api_err_set(e, API_INTERNAL, "out of memory");
    } else if (matched || problem) {
        /* (each object listed once: it has no claim yet) */
        const char *uid = jtext(m, "uid");
        cq_ident id = {k->group, k->version, k->kind,          uid,
                       so->ns,   so->name,   strmap_hash(uid), NULL};
        if (matched) rc = cq_book_set_from(b, &id, NULL, true, &usage, &net, NULL, e);
        if (rc == 0 && problem) rc = cq_book_note(b, &id, err, e);
        cq_ident_done(&id);
    }
    json_decref(obj);
    return rc;
}

/* Count every stored object of kind k the quota covers. The listing is in
 * no order (sorting 100,000 keys is a tenth of a recount); the objects
 * that cannot be counted are reported in key order. */
static int count_kind(store_txn *t, cq_book *b, const api_kind *k, api_err *e)
{
    char prefix[600], res[300];
    api_kind_store_resource(k, res, sizeof res);
    if (!b->global)
        snprintf(prefix, sizeof prefix, "%s/%s/", res, b->ns);
    else
        snprintf(prefix, sizeof prefix, "%s/", res);
    store_obj **objs = NULL;
    size_t n = 0, nerr = 0;
    count_err *errs = NULL;
    if (store_txn_list_any(t, prefix, &objs, &n) != 0)
        return api_err_set(e, API_INTERNAL, "cannot list %s", k->resource);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (cq_book_covers(b, k->namespaced ? objs[i]->ns : ""))
            rc = count_one(b, k, objs[i], &errs, &nerr, e);
    if (nerr) qsort(errs, nerr, sizeof *errs, err_cmp);
    for (size_t i = 0; i < nerr; i++) {
        if (i < CQ_NAMED_MAX) add_error(b, errs[i].msg);
        free(errs[i].msg);
    }
    if (nerr > CQ_NAMED_MAX) {
        char more[96];
        snprintf(more, sizeof more, "and %zu more %s objects", nerr - CQ_NAMED_MAX, k->kind);
        add_error(b, more);
    }
    free(errs);
    for (size_t i = 0; i < n; i++)
        store_obj_unref(objs[i]);
    free(objs);
    return rc;
}

/* The books of quota version `quota` (a reference, taken) as t sees the
 * store: Capsule's rebuild. NULL with e set. */
static cq_book *book_build(store_txn *t, json_t *quota, bool global, api_err *e)
{
    cq_book *b = calloc(1, sizeof *b);
    if (!b || !quota) {
        json_decref(quota);
        book_free(b);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    b->quota = quota;
    b->name = meta(quota, "name");
    b->ns = meta(quota, "namespace");
    b->global = global;
    b->used = b->sum = qty_zero(QTY_DECIMAL_SI);
    b->last_status = json_incref(json_object_get(quota, "status"));
    char err[1200];
    b->q = cq_compile(json_object_get(quota, "spec"), b->global, err, sizeof err);
    if (!b->q) add_error(b, err);
    int rc = b->global ? load_namespaces(t, b, e) : 0;
    /* each kind once, though several sources name it */
    for (size_t i = 0; rc == 0 && b->q && i < cq_nsources(b->q); i++) {
        const api_kind *k = source_kind(b, i);
        bool seen = false;
        for (size_t j = 0; k && j < i; j++) {
            const char *g, *v, *kk;
            cq_source_gvk(b->q, j, &g, &v, &kk);
            seen |= !strcmp(g, k->group) && !strcmp(v, k->version) && !strcmp(kk, k->kind);
        }
        if (k && !seen) {
            size_t nin = sizeof b->kind_in / sizeof *b->kind_in;
            size_t sz = (b->nkinds + 1) * sizeof(const api_kind *);
            const api_kind **nv = b->nkinds < nin    ? b->kind_in
                                  : b->nkinds == nin ? malloc(sz)
                                                     : realloc(b->kinds, sz);
            if (!nv) {
                rc = api_err_set(e, API_INTERNAL, "out of memory");
                break;
            }
            if (b->nkinds == nin) memcpy(nv, b->kind_in, sizeof b->kind_in);
            b->kinds = nv;
            b->kinds[b->nkinds++] = k;
            rc = count_kind(t, b, k, e);
        }
    }
    if (rc != 0) {
        book_free(b);
        return NULL;
    }
    return b;
}

static void *book_load(store_txn *t, store_obj *o, api_err *e)
{
    return book_build(t, store_obj_parse(o), !strncmp(o->key, GCQ_PREFIX, strlen(GCQ_PREFIX)), e);
}

/* ---- the status ---- */

static int claim_cmp(const void *a, const void *b)
{
    const cq_obj *x = (*(const cq_claim *const *)a)->obj, *y = (*(const cq_claim *const *)b)->obj;
    int c = strcmp(x->ns, y->ns);
    if (!c) c = strcmp(x->kind, y->kind);
    if (!c) c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->uid, y->uid);
}

/* The claims, sorted as Capsule lists them; NULL when n is 0 or out of
 * memory (*n 0 then). */
static const cq_claim **sorted_claims(const cq_book *b, size_t *n)
{
    *n = b->nclaims;
    const cq_claim **v = *n ? malloc(*n * sizeof *v) : NULL;
    if (!v) {
        *n = 0;
        return NULL;
    }
    for (size_t i = 0; i < *n; i++)
        v[i] = &b->claimv[i];
    qsort(v, *n, sizeof *v, claim_cmp);
    return v;
}

static json_t *claims_json(const cq_book *b)
{
    size_t n;
    const cq_claim **v = sorted_claims(b, &n);
    json_t *out = json_array();
    if ((b->nclaims && !v) || !out) {
        free(v);
        json_decref(out);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const cq_obj *o = v[i]->obj;
        qty u = cq_claim_usage(v[i]);
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:o}", "group",
                                             o->group, "version", o->version, "kind", o->kind,
                                             "name", o->name, "namespace", o->ns, "uid", o->uid,
                                             "usage", qty_to_json(&u)));
    }
    free(v);
    return out;
}

/* o's status.claims entry without the usage and the closing brace (as
 * claims_json renders it), made once per object. */
static const char *obj_json(cq_obj *o)
{
    char *cur = atomic_load(&o->json);
    if (cur) return cur;
    json_t *j =
        json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "group", o->group, "version", o->version,
                  "kind", o->kind, "name", o->name, "namespace", o->ns, "uid", o->uid);
    char *text = j ? jdump(j, NULL) : NULL;
    json_decref(j);
    if (!text) return NULL;
    text[strlen(text) - 1] = 0; /* the closing brace */
    if (atomic_compare_exchange_strong(&o->json, &cur, text)) return text;
    free(text); /* another thread made it first */
    return cur;
}

/* claims_json as JSON text, appended to out: a status write renders every
 * claim, and a quota may count many thousands of objects. 0 or -1. */
static int claims_text(const cq_book *b, dbuf *out)
{
    size_t n;
    const cq_claim **v = sorted_claims(b, &n);
    if (b->nclaims && !v) return -1;
    int rc = dbuf_add(out, "[", 1);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char q[QTY_STR_MAX];
        const char *head = obj_json(v[i]->obj);
        qty u = cq_claim_usage(v[i]);
        size_t qn = qty_format_str(&u, q, sizeof q);
        rc = head ? 0 : -1;
        if (rc == 0 && i) rc = dbuf_add(out, ",", 1);
        if (rc == 0) rc = dbuf_adds(out, head);
        if (rc == 0) rc = dbuf_add(out, ",\"usage\":\"", 10);
        if (rc == 0) rc = dbuf_add(out, q, qn);
        if (rc == 0) rc = dbuf_add(out, "\"}", 2);
    }
    free(v);
    return rc == 0 ? dbuf_add(out, "]", 1) : -1;
}

/* The status; with `claims` false, without status.claims (book_write adds
 * them as text, last). */
static json_t *status_json(const cq_book *b, const char *now, bool claims)
{
    json_t *st = json_object();
    json_t *conds = jcopy(json_object_get(b->last_status, "conditions"));
    if (st && json_is_array(conds)) json_object_set(st, "conditions", conds);
    json_decref(conds);
    if (!st) return NULL;
    json_int_t gen =
        json_integer_value(json_object_get(json_object_get(b->quota, "metadata"), "generation"));
    json_object_set_new(st, "observedGeneration", json_integer(gen));
    qty avail = b->q ? *cq_limit(b->q) : qty_zero(QTY_DECIMAL_SI);
    if (qty_sub(&avail, &b->used) != 0 || qty_sign(&avail) < 0) avail = qty_zero(QTY_DECIMAL_SI);
    json_object_set_new(
        st, "usage",
        json_pack("{s:o, s:o}", "used", qty_to_json(&b->used), "available", qty_to_json(&avail)));
    json_t *cl = claims ? claims_json(b) : NULL, *targets = json_array();
    if (cl) json_object_set_new(st, "claims", cl);
    for (size_t i = 0; targets && b->q && i < cq_nsources(b->q); i++) {
        const char *g, *v, *k;
        char av[300];
        cq_source_gvk(b->q, i, &g, &v, &k);
        snprintf(av, sizeof av, "%s%s%s", g, *g ? "/" : "", v);
        const api_kind *kind = api_kind_by_kind(av, k);
        json_array_append_new(targets, cq_target_json(b->q, i,
                                                      !kind              ? ""
                                                      : kind->namespaced ? "namespace"
                                                                         : "root"));
    }
    if (targets) json_object_set_new(st, "targets", targets);
    if (b->global && b->namespaces) json_object_set(st, "namespaces", b->namespaces);
    /* Ready=False says what a platform engineer can act on: a quota that
     * cannot count (Failed: a source kind not served, a spec that does not
     * compile), or objects it cannot fully read (UnreadableValues: each
     * named, counted as cq_object_usage counts it); a missing value is 0
     * and no reason to be not ready. */
    char *problems = problems_text(b);
    if (b->error && problems) {
        dbuf msg;
        dbuf_init(&msg, 128 * 1024);
        dbuf_printf(&msg, "%s; %s", b->error, problems);
        size_t len;
        char *text = dbuf_take(&msg, &len);
        cond_set(st, "Ready", "False", "Failed", text ? text : b->error, gen, now);
        free(text);
        dbuf_free(&msg);
    } else if (b->error) {
        cond_set(st, "Ready", "False", "Failed", b->error, gen, now);
    } else if (problems) {
        cond_set(st, "Ready", "False", "UnreadableValues", problems, gen, now);
    } else if (cq_book_nproblems(b)) { /* (out of memory rendering them) */
        cond_set(st, "Ready", "False", "UnreadableValues", "objects with unreadable values", gen,
                 now);
    } else {
        cond_set(st, "Ready", "True", "Succeeded", "reconciled", gen, now);
    }
    free(problems);
    return st;
}

int cq_book_status_into(store_txn *t, json_t *quota, bool global, const json_t *old_status,
                        api_err *e)
{
    json_t *copy = json_copy(quota); /* (the books read its metadata and spec) */
    if (copy) json_object_del(copy, "status");
    if (copy && old_status) json_object_set(copy, "status", (json_t *)old_status);
    cq_book *b = book_build(t, copy, global, e);
    if (!b) return -1;
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    json_t *st = status_json(b, now, true);
    book_free(b);
    if (!st || json_object_set_new(quota, "status", st) != 0)
        return api_err_set(e, API_INTERNAL, "out of memory");
    return 0;
}

/* The stored quota `cur` with the books' status (a new object; *same when
 * it is what is stored, if `same` is given). */
static json_t *with_status(cq_book *b, const json_t *cur, bool *same)
{
    char now[32];
    reg_now_rfc3339(now, sizeof now);
    return ledger_with_status(cur, status_json(b, now, true), &b->last_status, same);
}

/* The quota with the books' status, as JSON text: the object without
 * status, then the status without claims, then the claims (claims_text). */
static char *quota_text(const json_t *obj, const json_t *st, const cq_book *b, size_t *len)
{
    char *head = jdump(obj, NULL), *stext = jdump(st, NULL);
    dbuf out;
    dbuf_init(&out, SIZE_MAX / 2); /* (bounded by the claims: the store holds them) */
    size_t hn = head ? strlen(head) : 0, sn = stext ? strlen(stext) : 0;
    /* both end in '}'; the status has keys (observedGeneration at least) */
    int rc = hn > 2 && sn > 2 ? 0 : -1;
    if (rc == 0) rc = dbuf_add(&out, head, hn - 1);
    if (rc == 0) rc = dbuf_adds(&out, ",\"status\":");
    if (rc == 0) rc = dbuf_add(&out, stext, sn - 1);
    if (rc == 0) rc = dbuf_adds(&out, ",\"claims\":");
    if (rc == 0) rc = claims_text(b, &out);
    if (rc == 0) rc = dbuf_add(&out, "}}", 2);
    free(head);
    free(stext);
    if (rc != 0) {
        dbuf_free(&out);
        return NULL;
    }
    return dbuf_take(&out, len);
}

static store_obj *book_write(store_txn *t, store_obj *o, const void *val)
{
    cq_book *b = (cq_book *)val; /* (last_status: a cache of what was written) */
    char now[32], rv[32];
    reg_now_rfc3339(now, sizeof now);
    snprintf(rv, sizeof rv, "%lld", (long long)store_txn_rev(t));
    json_t *st = status_json(b, now, false), *obj = json_copy(b->quota);
    json_t *m = obj ? json_copy(json_object_get(obj, "metadata")) : NULL;
    int rc = st && m && !json_object_set_new(m, "resourceVersion", json_string(rv)) &&
                     !json_object_set(obj, "metadata", m)
                 ? 0
                 : -1;
    if (rc == 0) json_object_del(obj, "status");
    size_t len = 0;
    char *text = rc == 0 ? quota_text(obj, st, b, &len) : NULL;
    /* (the indexer reads labels and the like: the status without claims will do) */
    if (text) rc = json_object_set(obj, "status", st);
    store_obj *out = text && rc == 0 && store_txn_put_derived_text(t, o->key, obj, text, len) == 0
                         ? store_txn_get(t, o->key)
                         : NULL;
    if (text && rc != 0) free(text);
    if (out) {
        json_decref(b->last_status);
        b->last_status = json_incref(st);
    }
    json_decref(m);
    json_decref(obj);
    json_decref(st);
    return out;
}

/* Claims list every counted object, and one pod may be counted by a
 * hundred quotas: rewriting each quota's status per flush interval would
 * render and store a hundred times the pods' own volume. The flusher writes a
 * quota's status at most every 10 s; reads of the quotas always sync first,
 * so clients are never served a stale status, only watchers see it late. */
#define CQ_STATUS_MIN_FLUSH_MS 10000

static const ledger_ops book_ops = {
    "customquota", book_load, NULL, book_free, book_write, true, CQ_STATUS_MIN_FLUSH_MS};

ledger_entry *cq_book_of(store_txn *t, store_obj *o, api_err *e)
{
    return ledger_current(t, &book_ops, o, e);
}

cq_book *cq_book_modify(store_txn *t, ledger_entry *en, api_err *e)
{
    return ledger_modify(t, en, e);
}

json_t *cq_book_view(store_txn *t, store_obj *o, store_obj *cur)
{
    api_err e;
    api_err_init(&e);
    ledger_entry *en = cq_book_of(t, cur, &e);
    api_err_clear(&e);
    if (!en) return NULL;
    json_t *served = store_obj_parse(o);
    bool same = false;
    json_t *nw = served ? with_status((cq_book *)ledger_value(en), served, &same) : NULL;
    json_decref(served);
    if (same) {
        json_decref(nw);
        return NULL;
    }
    return nw;
}

json_t *cq_book_recount_view(store_txn *t, store_obj *o, api_err *e)
{
    cq_book *b = book_load(t, o, e);
    if (!b) return NULL;
    json_t *cur = store_obj_parse(o);
    json_t *nw = cur ? with_status(b, cur, NULL) : NULL;
    if (!nw) api_err_set(e, API_INTERNAL, "out of memory");
    json_decref(cur);
    book_free(b);
    return nw;
}

int cq_book_verify(store_txn *t, ledger_entry *en, api_err *e)
{
    cq_book *b = (cq_book *)ledger_value(en); /* (verified, last_status: caches) */
    if (b->verified) return 0;
    json_t *cur = store_obj_parse(ledger_obj(en));
    bool same = false;
    json_t *nw = cur ? with_status(b, cur, &same) : NULL;
    json_decref(nw);
    json_decref(cur);
    if (!nw) return api_err_set(e, API_INTERNAL, "out of memory");
    if (!same && ledger_write(t, en, e) != 0) return -1;
    b->verified = true;
    return 0;
}

bool cq_book_selection_changes(const cq_book *b, const char *ns, const json_t *labels, bool leaving)
{
    if (!b->global || !b->q || cq_all_namespaces(b->q)) return false;
    bool was = strmap_get(b->selected, ns) != NULL;
    bool is = !leaving && cq_selects_namespace(b->q, labels);
    return was != is;
}

/* ---- resync ---- */

static bool same_books(const cq_book *a, const cq_book *b)
{
    if (qty_cmp(&a->used, &b->used) != 0 || a->nclaims != b->nclaims ||
        cq_book_nproblems(a) != cq_book_nproblems(b))
        return false;
    const char *key;
    void *val;
    for (size_t it = 0; a->problems && strmap_next(a->problems, &it, &key, &val);) {
        const cq_problem *o = b->problems ? strmap_get(b->problems, key) : NULL;
        if (!o || strcmp(o->msg, ((const cq_problem *)val)->msg)) return false;
    }
    for (size_t i = 0; i < a->nclaims; i++) {
        const cq_claim *x = &a->claimv[i], *o = cq_book_claim(b, x->obj->uid);
        if (!o) return false;
        qty ou = cq_claim_usage(o), xu = cq_claim_usage(x), on = cq_claim_net(o),
            xn = cq_claim_net(x);
        if (qty_cmp(&ou, &xu) != 0 || qty_cmp(&on, &xn) != 0) return false;
    }
    return true;
}

#define SWAP(T, x, y)                                                                              \
    do {                                                                                           \
        T tmp_ = (x);                                                                              \
        (x) = (y);                                                                                 \
        (y) = tmp_;                                                                                \
    } while (0)

/* Swap the accounted contents of two books (the caches stay). */
static void swap_books(cq_book *a, cq_book *b)
{
    SWAP(qty, a->used, b->used);
    SWAP(qty, a->sum, b->sum);
    SWAP(cq_claim *, a->claimv, b->claimv);
    SWAP(size_t, a->nclaims, b->nclaims);
    SWAP(size_t, a->claimcap, b->claimcap);
    SWAP(idxmap, a->claims, b->claims);
    SWAP(char *, a->error, b->error);
    SWAP(strmap *, a->problems, b->problems);
}

static bool same_error(const cq_book *a, const cq_book *b)
{
    return (!a->error && !b->error) || (a->error && b->error && !strcmp(a->error, b->error));
}

int cq_books_resync(store *st, size_t *drift)
{
    *drift = 0;
    store_txn *t = store_begin(st);
    if (!t) return -1;
    const char *prefixes[] = {CQ_PREFIX, GCQ_PREFIX};
    api_err e;
    api_err_init(&e);
    int rc = 0;
    bool changed = false;
    for (int p = 0; p < 2 && rc == 0; p++) {
        store_obj **objs = NULL;
        size_t n = 0;
        rc = store_txn_list(t, prefixes[p], &objs, &n);
        for (size_t i = 0; i < n; i++) {
            ledger_entry *en = rc == 0 ? cq_book_of(t, objs[i], &e) : NULL;
            cq_book *fresh = en ? book_load(t, objs[i], &e) : NULL;
            if (!fresh && rc == 0) rc = -1;
            bool usage = fresh && !same_books(cq_book_value(en), fresh);
            /* a source kind that appeared or went (a CRD) changes only the
             * error: adopted, not drift */
            if (fresh && (usage || !same_error(cq_book_value(en), fresh))) {
                cq_book *cur = cq_book_modify(t, en, &e);
                if (cur) {
                    swap_books(cur, fresh);
                    *drift += usage;
                    changed = true;
                } else {
                    rc = -1;
                }
            }
            book_free(fresh);
            store_obj_unref(objs[i]);
        }
        free(objs);
    }
    api_err_clear(&e);
    if (rc == 0 && changed)
        rc = store_commit(t);
    else
        store_abort(t);
    return rc;
}
