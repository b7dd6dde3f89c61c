/* quota_ledger.c - ResourceQuota usage on the ledger (see quota_ledger.h):
 * the value of a quota is its prepared spec and its used list; its derived
 * status is status.used. */
#include "registry/quota_ledger.h"

#include "registry/ledger.h"
#include "registry/quota_cache.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* A quota_prepared shared by a value and its copies: it depends only on the
 * stored version the value was loaded from. */
typedef struct prep_ref {
    atomic_int refs;
    quota_prepared *p;
} prep_ref;

typedef struct qval {
    prep_ref *prep;
    rlist *used;
} qval;

static void prep_unref(prep_ref *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1) {
        quota_prepared_free(r->p);
        free(r);
    }
}

static void qval_free(void *v)
{
    qval *q = v;
    if (!q) return;
    prep_unref(q->prep);
    rl_free(q->used);
    free(q);
}

/* A value sharing `prep` with a new used list (takes used). */
static qval *qval_with(prep_ref *prep, rlist *used)
{
    qval *q = used ? malloc(sizeof *q) : NULL;
    if (!q) {
        rl_free(used);
        return NULL;
    }
    atomic_fetch_add(&prep->refs, 1);
    q->prep = prep;
    q->used = used;
    return q;
}

static void *qval_copy(const void *v)
{
    const qval *q = v;
    return qval_with(q->prep, rl_copy(q->used));
}

static void *qval_load(store_txn *t, store_obj *o, api_err *e)
{
    (void)t;
    char err[512];
    const char *bad = NULL;
    json_t *q = quota_obj_json(o);
    qval *v = calloc(1, sizeof *v);
    if (!q || !v || !(v->used = rl_new()) || !(v->prep = calloc(1, sizeof *v->prep))) goto oom;
    atomic_init(&v->prep->refs, 1);
    v->prep->p = quota_prepare(q, err, sizeof err);
    if (!v->prep->p) {
        if (!*err) goto oom;
        api_err_set(e, API_INTERNAL, "%s", err);
        goto fail;
    }
    int rc = rl_from_json(json_object_get(json_object_get(q, "status"), "used"), v->used, &bad);
    if (rc == RL_ENOMEM) goto oom;
    if (rc) {
        api_err_set(e, API_INTERNAL, "quota %s: invalid quantity in status for %s", o->name,
                    bad ? bad : "");
        goto fail;
    }
    json_decref(q);
    return v;
oom:
    api_err_set(e, API_INTERNAL, "out of memory");
fail:
    json_decref(q);
    qval_free(v);
    return NULL;
}

/* Write quota `o` again with status.used = used, in t, as a derived write:
 * status.used is a function of the stored objects, so the store may persist
 * it coalesced, and allotd recounts before serving after a restart. Returns
 * the new version (a reference) or NULL. */
static store_obj *qval_write(store_txn *t, store_obj *o, const void *val)
{
    char rv[32];
    const qval *qv = val;
    json_t *quota = quota_obj_json(o), *used = rl_to_json(qv->used);
    if (!quota || !used) {
        json_decref(quota);
        json_decref(used);
        return NULL;
    }
    /* `quota` is shared (quota_cache.h): change shallow copies of the three
     * objects on the path to what changes, keep every other node shared. */
    const json_t *old_status = json_object_get(quota, "status");
    json_t *q = json_copy(quota);
    json_t *status = json_is_object(old_status) ? json_copy((json_t *)old_status) : json_object();
    json_t *meta = json_copy(json_object_get(quota, "metadata"));
    snprintf(rv, sizeof rv, "%lld", (long long)store_txn_rev(t));
    int rc = q && status && meta && !json_object_set(status, "used", used) &&
                     !json_object_set_new(meta, "resourceVersion", json_string(rv)) &&
                     !json_object_set(q, "status", status) && !json_object_set(q, "metadata", meta)
                 ? 0
                 : -1;
    quota_tpl *tpl = NULL;
    size_t len = 0;
    char *text = rc == 0 ? quota_cache_render(o->key, quota, q, &len, &tpl) : NULL;
    if (text) rc = store_txn_put_derived_text(t, o->key, q, text, len);
    store_obj *nw = text && rc == 0 ? store_txn_get(t, o->key) : NULL;
    if (nw)
        quota_cache_put(nw, q, tpl);
    else
        quota_tpl_unref(tpl);
    json_decref(q);
    json_decref(status);
    json_decref(meta);
    json_decref(used);
    json_decref(quota);
    return nw;
}

static const ledger_ops quota_ops = {"quota",    qval_load, qval_copy, qval_free,
                                     qval_write, false,     0};

static ql_view view_of(ledger_entry *en)
{
    const qval *v = ledger_value(en);
    return (ql_view){ledger_key(en), ledger_obj(en), v->prep->p, v->used, en};
}

int quota_ledger_load(store_txn *t, const char *ns, ql_view **views, size_t *n, api_err *e)
{
    char prefix[320];
    store_obj **objs = NULL;
    size_t cnt = 0;
    *views = NULL;
    *n = 0;
    snprintf(prefix, sizeof prefix, "resourcequotas/%s/", ns);
    if (store_txn_list(t, prefix, &objs, &cnt) != 0)
        return api_err_set(e, API_INTERNAL, "cannot read quotas");
    ql_view *v = cnt ? calloc(cnt, sizeof *v) : NULL;
    int rc = cnt && !v ? api_err_set(e, API_INTERNAL, "out of memory") : 0;
    for (size_t i = 0; i < cnt; i++) {
        ledger_entry *en = rc == 0 ? ledger_current(t, &quota_ops, objs[i], e) : NULL;
        if (!en && rc == 0) rc = -1;
        /* Entries hold their own reference to obj: the view borrows it. */
        if (en) v[i] = view_of(en);
        store_obj_unref(objs[i]);
    }
    free(objs);
    if (rc != 0) {
        free(v);
        return -1;
    }
    *views = v;
    *n = cnt;
    return 0;
}

int quota_ledger_set(store_txn *t, const ql_view *v, rlist *used, api_err *e)
{
    const qval *cur = ledger_value(v->entry);
    qval *nv = qval_with(cur->prep, used);
    if (!nv) return api_err_set(e, API_INTERNAL, "quota accounting failed");
    return ledger_set(t, v->entry, nv, e);
}

void quota_ledger_forget(store_txn *t, const char *key)
{
    ledger_forget(t, key);
}

rlist *quota_ledger_read_txn(store_txn *t, const store_obj *o)
{
    api_err e;
    api_err_init(&e);
    ledger_entry *en = ledger_current(t, &quota_ops, (store_obj *)o, &e);
    api_err_clear(&e);
    return en ? rl_copy(((const qval *)ledger_value(en))->used) : NULL;
}

rlist *quota_ledger_read(const store_obj *o, int64_t *rv)
{
    qval *v = ledger_read(&quota_ops, o, rv);
    if (v) {
        rlist *used = v->used;
        v->used = NULL;
        qval_free(v);
        return used;
    }
    /* Not in the ledger, or the ledger trails the store: the stored version. */
    json_t *q = quota_obj_json(o);
    const char *bad = NULL;
    rlist *used = q ? rl_new() : NULL;
    if (used &&
        rl_from_json(json_object_get(json_object_get(q, "status"), "used"), used, &bad) != 0) {
        rl_free(used);
        used = NULL;
    }
    json_decref(q);
    *rv = o->rv;
    return used;
}

int quota_ledger_sync(store *st)
{
    return ledger_sync(st);
}

int quota_ledger_start(store *st, unsigned flush_ms)
{
    return ledger_start(st, flush_ms);
}

void quota_ledger_stop(void)
{
    ledger_stop();
}

void quota_ledger_get_stats(quota_ledger_stats *out)
{
    ledger_stats s;
    ledger_get_stats(&s);
    out->quotas = s.entries;
    out->dirty = s.dirty;
    out->versions = s.versions;
}

void quota_ledger_clear(void)
{
    ledger_clear();
}
