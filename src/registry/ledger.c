/* ledger.c - derived values in memory, committed with transactions (see
 * ledger.h).
 *
 * Published state: `entries` (key -> entry), changed only under the store's
 * writer lock and, for readers outside it, under `mu`. A transaction works on
 * `staged` copies (copy on write) and the store's end hook publishes them when
 * it commits. One transaction runs at a time, so one staging area suffices.
 *
 * A change is the hot path (a quota charge: one per quota per create): its
 * staged copy borrows the key of the published entry it was copied from (its
 * origin), and is published by swapping its value into the origin, in place. Only a copy with
 * another stored version (a rebuild, a flush) or a delete replaces the entry
 * in the map. An origin outlives its copies: the published entry of a key is
 * replaced during a transaction only when nothing of that key is staged.
 *
 * In-place kinds (ops->in_place) are not copied: a transaction changes the
 * published value and `touched` remembers it; at commit the entry turns dirty,
 * at abort it is dropped from `entries` and loaded again by its next user. A
 * value loaded in a transaction (which may read that transaction's own writes)
 * after it wrote is touched too, so that an abort drops it.
 */
#include "registry/ledger.h"

#include "core/strmap.h"
#include "util/clock.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ledger_entry {
    char *key;
    unsigned long hash;          /* strmap_hash(key) */
    bool own_key;                /* else borrowed from origin */
    struct ledger_entry *origin; /* staged copy of a published entry: that entry, else NULL */
    store_obj *obj;              /* the stored version (a reference) */
    const ledger_ops *ops;
    void *val;   /* the current value */
    int64_t rv;  /* val is exact as of this revision */
    bool dirty;  /* val is ahead of obj's status */
    bool gone;   /* staged only: the object is deleted */
    bool staged; /* in the staging area (else published, or about to be freed) */
    /* in-place kinds, published entries a transaction holds (in `touched`): */
    bool touched;
    bool modified;      /* changed by ledger_modify */
    bool loaded;        /* loaded after the transaction wrote (may hold its writes) */
    store_obj *pending; /* written by a flush: the version to adopt at commit */
    int64_t written_ms; /* when the flusher last wrote it (monotonic) */
};
typedef struct ledger_entry entry;

static struct {
    pthread_mutex_t mu;
    strmap *entries;
    size_t ndirty;
    unsigned long long versions;
    /* staging: touched only by the writer-lock holder */
    store_txn *txn;
    entry **staged;
    size_t nstaged, cap;
    entry **touched;
    size_t ntouched, tcap;
    /* the flusher */
    store *st;
    pthread_t thread;
    pthread_cond_t wake;
    bool running, stop;
    bool flusher_idle; /* waiting for a first dirty entry (under mu) */
    unsigned flush_ms;
} L = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- entries --------------------------------------------------------------------------------- */

/* A published entry is remembered by its stored version (o->above), so that
 * ledger_current finds it without hashing the key; whatever stops being an
 * entry's version, or frees the entry, forgets it there. */
static void unhint(entry *en)
{
    if (en->obj && en->obj->above == en) en->obj->above = NULL;
}

static void entry_free(entry *en)
{
    if (!en) return;
    unhint(en);
    if (en->own_key) free(en->key);
    if (en->obj) store_obj_unref(en->obj);
    if (en->val) en->ops->free(en->val);
    free(en);
}

static entry *entry_new(const char *key)
{
    entry *en = calloc(1, sizeof *en);
    if (en && !(en->key = strdup(key))) {
        free(en);
        return NULL;
    }
    if (en) {
        en->own_key = true;
        en->hash = strmap_hash(key);
    }
    return en;
}

/* ---- load timing ---- */

static const double load_le[LEDGER_LOAD_BUCKETS] = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5};

typedef struct load_hist {
    const ledger_ops *ops;
    _Atomic unsigned long n[LEDGER_LOAD_BUCKETS + 1]; /* per bucket, the last above all */
    _Atomic unsigned long usec;
} load_hist;

#define MAX_KINDS 8
static load_hist hists[MAX_KINDS];
static _Atomic size_t nhists; /* (appended by the writer-lock holder; read by anyone) */

static void time_load(const ledger_ops *ops, double t0)
{
    double s = clock_mono_s() - t0;
    size_t n = atomic_load(&nhists), i = 0;
    while (i < n && hists[i].ops != ops)
        i++;
    if (i == n) {
        if (n == MAX_KINDS) return;
        hists[n].ops = ops;
        atomic_store(&nhists, n + 1); /* (after ops: readers see it set) */
    }
    size_t k = 0;
    while (k < LEDGER_LOAD_BUCKETS && s > load_le[k])
        k++;
    atomic_fetch_add_explicit(&hists[i].n[k], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&hists[i].usec, (unsigned long)(s * 1e6), memory_order_relaxed);
}

void ledger_load_stats(ledger_load_fn fn, void *arg)
{
    size_t n = atomic_load(&nhists);
    for (size_t i = 0; i < n; i++) {
        unsigned long cum[LEDGER_LOAD_BUCKETS], c = 0;
        for (size_t k = 0; k < LEDGER_LOAD_BUCKETS; k++)
            cum[k] = c += atomic_load_explicit(&hists[i].n[k], memory_order_relaxed);
        c += atomic_load_explicit(&hists[i].n[LEDGER_LOAD_BUCKETS], memory_order_relaxed);
        fn(arg, hists[i].ops->name, load_le, cum, LEDGER_LOAD_BUCKETS, c,
           (double)atomic_load_explicit(&hists[i].usec, memory_order_relaxed) / 1e6);
    }
}

/* An entry for stored version o: the value it carries. */
static entry *entry_from(store_txn *t, const ledger_ops *ops, store_obj *o, api_err *e)
{
    entry *en = entry_new(o->key);
    if (!en) {
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    en->ops = ops;
    double t0 = clock_mono_s();
    en->val = ops->load(t, o, e);
    time_load(ops, t0);
    if (!en->val) {
        entry_free(en);
        return NULL;
    }
    store_obj_ref(o);
    en->obj = o;
    en->rv = o->rv;
    return en;
}

/* ---- staging --------------------------------------------------------------------------------- */

static void set_dirty(entry *en, bool dirty)
{
    if (en->dirty != dirty) L.ndirty += dirty ? 1 : (size_t)-1;
    en->dirty = dirty;
}

/* The end of a transaction for the in-place entries it held: committed,
 * they take its changes; aborted, they are dropped (under mu). */
static void end_touched(int64_t rev, bool committed)
{
    for (size_t i = 0; i < L.ntouched; i++) {
        entry *en = L.touched[i];
        store_obj *nw = en->pending;
        bool modified = en->modified, drop = en->modified || en->loaded;
        en->touched = en->modified = en->loaded = false;
        en->pending = NULL;
        if (!committed && nw) store_obj_unref(nw);
        if (!committed && !drop) continue; /* only a write of its status was lost */
        if (!committed) {
            if (strmap_get(L.entries, en->key) == en) strmap_del(L.entries, en->key);
            set_dirty(en, false);
            entry_free(en);
            continue;
        }
        if (nw) {
            unhint(en);
            store_obj_unref(en->obj);
            en->obj = nw;
            set_dirty(en, false);
        }
        if (modified) {
            en->rv = rev;
            set_dirty(en, true);
        }
    }
    L.ntouched = 0;
}

/* The store's end hook: publish the staged entries, or drop them. */
static void on_txn_end(void *arg, int64_t rev, bool committed)
{
    (void)arg;
    bool lock = committed || L.ntouched > 0;
    if (lock) pthread_mutex_lock(&L.mu);
    end_touched(rev, committed); /* first: a staged entry may replace a touched one */
    for (size_t i = 0; i < L.nstaged; i++) {
        entry *st = L.staged[i];
        if (!committed) {
            entry_free(st);
            continue;
        }
        entry *org = st->origin;
        if (!st->gone && org && org->obj == st->obj) {
            assert(strmap_get(L.entries, st->key) == org);
            void *prev = org->val;
            org->val = st->val;
            st->val = prev;
            org->rv = st->rv;
            set_dirty(org, st->dirty);
            entry_free(st);
            continue;
        }
        if (!st->own_key && !(st->key = strdup(st->key))) abort(); /* as below */
        st->own_key = true;
        st->origin = NULL;
        st->staged = false;
        entry *old = strmap_get(L.entries, st->key);
        if (old) set_dirty(old, false);
        if (st->gone) {
            strmap_del(L.entries, st->key);
            entry_free(st);
        } else if (strmap_put(L.entries, st->key, st, NULL) != 0) {
            /* The transaction has committed: losing its charges would break the
             * invariant silently. As the store does, out of memory here is fatal. */
            abort();
        } else {
            bool dirty = st->dirty;
            st->dirty = false;
            set_dirty(st, dirty);
        }
        entry_free(old);
    }
    /* Only an idle flusher needs waking: one inside its interval writes
     * whatever turned dirty meanwhile when the interval ends. Signalling it on
     * every charge cost a futex wake and a context switch per create. */
    bool wake = committed && L.ndirty > 0 && L.flusher_idle;
    if (wake) L.flusher_idle = false;
    if (lock) pthread_mutex_unlock(&L.mu);
    L.nstaged = 0;
    L.txn = NULL;
    if (wake && L.running) pthread_cond_signal(&L.wake);
}

static entry *staged_find(const char *key, unsigned long hash)
{
    for (size_t i = 0; i < L.nstaged; i++)
        if (L.staged[i]->hash == hash && !strcmp(L.staged[i]->key, key)) return L.staged[i];
    return NULL;
}

static entry *staged_get(store_txn *t, const char *key)
{
    if (L.txn != t || L.nstaged == 0) return NULL;
    return staged_find(key, strmap_hash(key));
}

/* The end hook is installed once per transaction. */
static int bind_txn(store_txn *t)
{
    if (L.txn == t) return 0;
    if (L.nstaged || L.ntouched || store_txn_on_end(t, on_txn_end, NULL) != 0) return -1;
    L.txn = t;
    return 0;
}

/* Remember published in-place entry en as held by t. */
static int touch(store_txn *t, entry *en)
{
    if (bind_txn(t) != 0) return -1;
    if (en->touched) return 0;
    if (L.ntouched == L.tcap) {
        size_t nc = L.tcap ? L.tcap * 2 : 8;
        entry **nv = realloc(L.touched, nc * sizeof *nv);
        if (!nv) return -1;
        L.touched = nv;
        L.tcap = nc;
    }
    en->touched = true;
    L.touched[L.ntouched++] = en;
    return 0;
}

/* Put `en` in t's staging area (replacing a staged entry of the same key).
 * Takes en, also on failure. */
static int stage(store_txn *t, entry *en)
{
    if (bind_txn(t) != 0) {
        entry_free(en);
        return -1;
    }
    for (size_t i = 0; i < L.nstaged; i++) {
        if (L.staged[i]->hash == en->hash && !strcmp(L.staged[i]->key, en->key)) {
            entry_free(L.staged[i]);
            en->staged = true;
            L.staged[i] = en;
            return 0;
        }
    }
    if (L.nstaged == L.cap) {
        size_t nc = L.cap ? L.cap * 2 : 16;
        entry **nv = realloc(L.staged, nc * sizeof *nv);
        if (!nv) {
            entry_free(en);
            return -1;
        }
        L.staged = nv;
        L.cap = nc;
    }
    en->staged = true;
    L.staged[L.nstaged++] = en;
    return 0;
}

/* A staged copy of `en` with a new value (takes `val`). It borrows the key of
 * the published entry it descends from; a copy of an entry staged with a key
 * of its own (a rebuild) owns a copy of the key. */
static entry *copy_with(const entry *en, void *val)
{
    entry *c = calloc(1, sizeof *c);
    entry *origin = en->own_key && !en->origin && !en->staged ? (entry *)en : en->origin;
    if (c && origin) {
        c->key = origin->key;
    } else if (c && (c->key = strdup(en->key))) {
        c->own_key = true;
    } else {
        free(c);
        en->ops->free(val);
        return NULL;
    }
    c->hash = en->hash;
    c->origin = origin;
    store_obj_ref(en->obj);
    c->obj = en->obj;
    c->ops = en->ops;
    c->val = val;
    c->rv = en->rv;
    c->dirty = en->dirty;
    return c;
}

/* The entry transaction t sees for stored version o, rebuilt if o is newer
 * than what the ledger holds. A rebuild from a committed version is published
 * at once (it only mirrors the store); from a version t wrote, it is staged. */
ledger_entry *ledger_current(store_txn *t, const ledger_ops *ops, store_obj *o, api_err *e)
{
    if (!L.entries) {
        pthread_mutex_lock(&L.mu);
        L.entries = strmap_new();
        pthread_mutex_unlock(&L.mu);
        if (!L.entries) {
            api_err_set(e, API_INTERNAL, "out of memory");
            return NULL;
        }
    }
    entry *en = o->above; /* (a published entry: only staged ones come first) */
    if (en && en->obj == o && (L.txn != t || L.nstaged == 0)) return en;
    en = staged_get(t, o->key);
    if (!en && (en = strmap_get(L.entries, o->key)) && en->obj == o) o->above = en;
    if (en && en->obj == o) return en;
    entry *fresh = entry_from(t, ops, o, e);
    if (!fresh) return NULL;
    entry *old = strmap_get(L.entries, o->key);
    if (o->rv == store_txn_rev(t) || staged_get(t, o->key) || (old && old->touched))
        return stage(t, fresh) == 0 ? fresh : NULL;
    /* An in-place value loaded after t wrote may have read t's own writes:
     * an abort drops it. */
    if (ops->in_place && store_txn_writes(t) > 0) {
        if (touch(t, fresh) != 0) {
            entry_free(fresh);
            api_err_set(e, API_INTERNAL, "out of memory");
            return NULL;
        }
        fresh->loaded = true;
    }
    pthread_mutex_lock(&L.mu);
    int rc = strmap_put(L.entries, fresh->key, fresh, NULL);
    if (rc == 0 && old) {
        set_dirty(old, false);
        entry_free(old);
    }
    pthread_mutex_unlock(&L.mu);
    if (rc != 0) {
        if (fresh->touched) L.ntouched--; /* it was the last one touched */
        entry_free(fresh);
        api_err_set(e, API_INTERNAL, "out of memory");
        return NULL;
    }
    o->above = fresh;
    return fresh;
}

/* ---- the transaction's API ------------------------------------------------------------------- */

const void *ledger_value(const ledger_entry *en)
{
    return en->val;
}

store_obj *ledger_obj(const ledger_entry *en)
{
    return en->obj;
}

const char *ledger_key(const ledger_entry *en)
{
    return en->key;
}

int ledger_set(store_txn *t, const ledger_entry *en, void *val, api_err *e)
{
    entry *c = copy_with(en, val);
    if (c) {
        c->rv = store_txn_rev(t);
        c->dirty = true;
    }
    if (!c || stage(t, c) != 0)
        return api_err_set(e, API_INTERNAL, "%s accounting failed", en->ops->name);
    return 0;
}

void *ledger_modify(store_txn *t, ledger_entry *en, api_err *e)
{
    if (!en->ops->in_place) {
        api_err_set(e, API_INTERNAL, "%s accounting failed", en->ops->name);
        return NULL;
    }
    if (en->staged) {
        en->rv = store_txn_rev(t);
        en->dirty = true;
        return en->val;
    }
    if (touch(t, en) != 0) {
        api_err_set(e, API_INTERNAL, "%s accounting failed", en->ops->name);
        return NULL;
    }
    en->modified = true;
    return en->val;
}

json_t *ledger_with_status(const json_t *cur, json_t *status, json_t **last, bool *same)
{
    json_t *nw = status ? json_copy((json_t *)cur) : NULL;
    if (same) *same = status && json_equal(status, json_object_get(cur, "status"));
    if (nw) {
        json_object_set(nw, "status", status);
        json_decref(*last);
        *last = json_incref(status);
    }
    json_decref(status);
    return nw;
}

store_obj *ledger_put_derived(store_txn *t, const char *key, json_t *obj)
{
    json_t *m = json_copy(json_object_get(obj, "metadata"));
    char rv[32];
    snprintf(rv, sizeof rv, "%lld", (long long)store_txn_rev(t));
    if (!m) return NULL;
    if (json_object_set_new(m, "resourceVersion", json_string(rv)) != 0) {
        json_decref(m);
        return NULL;
    }
    if (json_object_set_new(obj, "metadata", m) != 0) return NULL; /* (takes m) */
    return store_txn_put_derived(t, key, obj, NULL) == 0 ? store_txn_get(t, key) : NULL;
}

void ledger_forget(store_txn *t, const char *key)
{
    entry *en = entry_new(key);
    if (!en) return; /* the entry stays, unused: it is never matched again */
    en->gone = true;
    stage(t, en);
}

void *ledger_read(const ledger_ops *ops, const store_obj *o, int64_t *rv)
{
    pthread_mutex_lock(&L.mu);
    entry *en = L.entries ? strmap_get(L.entries, o->key) : NULL;
    void *val = en && en->obj == o && en->ops == ops && !ops->in_place ? ops->copy(en->val) : NULL;
    if (val) *rv = en->rv;
    pthread_mutex_unlock(&L.mu);
    return val;
}

/* ---- writing versions ------------------------------------------------------------------------ */

/* Write every dirty entry that still is what the ledger holds; a dirty entry
 * whose object was rewritten or deleted meanwhile is rebuilt (or forgotten) by
 * its next reader, so it is only marked clean. */
/* Write en's value as its object's status in t: adopted (in-place kinds) or
 * staged (others) at commit. 0 or -1. */
static int write_entry(store_txn *t, entry *en, store_obj *o)
{
    store_obj *nw = en->ops->write(t, o, en->val);
    if (!nw) return -1;
    if (nw == o) { /* the stored status already says it */
        store_obj_unref(nw);
        pthread_mutex_lock(&L.mu);
        set_dirty(en, false);
        pthread_mutex_unlock(&L.mu);
        return 0;
    }
    if (en->ops->in_place) {
        if (touch(t, en) != 0) {
            store_obj_unref(nw);
            return -1;
        }
        if (en->pending) store_obj_unref(en->pending);
        en->pending = nw; /* adopted at commit (end_touched) */
        return 0;
    }
    void *val = en->ops->copy(en->val);
    entry *c = val ? copy_with(en, val) : NULL;
    if (!c) {
        store_obj_unref(nw);
        return -1;
    }
    store_obj_unref(c->obj);
    c->obj = nw;
    c->dirty = false;
    return stage(t, c);
}

/* Write every dirty entry that still is what the ledger holds (from the
 * flusher, `paced`: not those written less than their min_flush_ms ago); a
 * dirty entry whose object was rewritten or deleted meanwhile is rebuilt (or
 * forgotten) by its next reader, so it is only marked clean. */
/* Writes of derived statuses share the store with client writes: one
 * transaction writes what it can in this long, then commits, so a client's
 * write waits for at most one slice, not for every status (a thousand custom
 * quotas with thousands of claims each take a second or more). */
#define FLUSH_SLICE_MS 4

/* Write the entries due in t, until the slice is used up (*more set). */
static int flush_in(store_txn *t, bool paced, size_t *written, bool *more)
{
    int rc = 0;
    void *v;
    int64_t now = clock_mono_ms();
    *written = 0;
    *more = false;
    for (size_t it = 0; rc == 0 && strmap_next(L.entries, &it, NULL, &v);) {
        entry *en = v;
        if (!en->dirty) continue;
        if (paced && now - en->written_ms < (int64_t)en->ops->min_flush_ms) continue;
        if (*written && clock_mono_ms() - now >= FLUSH_SLICE_MS) {
            *more = true;
            break;
        }
        store_obj *o = store_txn_get(t, en->key);
        if (o == en->obj) {
            rc = write_entry(t, en, o);
            if (rc == 0) (*written)++;
            en->written_ms = now;
        } else {
            /* Not staged: this transaction may write nothing, and the entry is
             * rebuilt by its next reader whether or not it commits. */
            pthread_mutex_lock(&L.mu);
            set_dirty(en, false);
            pthread_mutex_unlock(&L.mu);
        }
        if (o) store_obj_unref(o);
    }
    return rc;
}

int ledger_write(store_txn *t, ledger_entry *en, api_err *e)
{
    if (en->staged || write_entry(t, en, en->obj) != 0)
        return api_err_set(e, API_INTERNAL, "%s status cannot be written", en->ops->name);
    return 0;
}

static int sync_paced(store *st, bool paced)
{
    bool more = true;
    while (more) {
        pthread_mutex_lock(&L.mu);
        bool dirty = L.ndirty > 0;
        pthread_mutex_unlock(&L.mu);
        if (!dirty) return 0;
        store_txn *t = store_begin(st);
        if (!t) return -1;
        size_t written = 0;
        more = false;
        int rc = L.entries ? flush_in(t, paced, &written, &more) : 0;
        if (rc != 0) {
            store_abort(t);
            return -1;
        }
        if (store_commit(t) != 0) return -1;
        pthread_mutex_lock(&L.mu);
        L.versions += written;
        pthread_mutex_unlock(&L.mu);
    }
    return 0;
}

int ledger_sync(store *st)
{
    return sync_paced(st, false);
}

void ledger_prepare_read(store *st, const char *const *prefixes, ledger_of_fn of,
                         ledger_verify_fn verify)
{
    store_txn *t = store_begin(st);
    if (!t) return;
    api_err e;
    api_err_init(&e);
    int rc = 0;
    for (size_t p = 0; prefixes[p] && rc == 0; p++) {
        store_obj **objs = NULL;
        size_t n = 0;
        rc = store_txn_list(t, prefixes[p], &objs, &n);
        for (size_t i = 0; i < n; i++) {
            ledger_entry *en = rc == 0 ? of(t, objs[i], &e) : NULL;
            store_obj_unref(objs[i]);
            if (rc == 0) rc = en ? verify(t, en, &e) : -1;
        }
        free(objs);
    }
    api_err_clear(&e);
    if (rc == 0)
        store_commit(t); /* (ends as aborted when it wrote nothing) */
    else
        store_abort(t);
    ledger_sync(st);
}

/* ---- the flusher ----------------------------------------------------------------------------- */

static void (*flushed_hooks[4])(store *st);
static size_t nflushed_hooks;

int ledger_on_flushed(void (*fn)(store *st))
{
    for (size_t i = 0; i < nflushed_hooks; i++)
        if (flushed_hooks[i] == fn) return 0;
    if (nflushed_hooks == sizeof flushed_hooks / sizeof *flushed_hooks) return -1;
    flushed_hooks[nflushed_hooks++] = fn;
    return 0;
}

/* Waits for a dirty entry, then flush_ms more (the changes of that interval
 * share one version), then writes. */
static void *flusher_main(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "ledger");
    pthread_mutex_lock(&L.mu);
    while (!L.stop) {
        if (L.ndirty == 0) {
            L.flusher_idle = true;
            pthread_cond_wait(&L.wake, &L.mu);
            continue;
        }
        L.flusher_idle = false;
        struct timespec due;
        due = clock_deadline(CLOCK_MONOTONIC, L.flush_ms);
        while (!L.stop && pthread_cond_timedwait(&L.wake, &L.mu, &due) != ETIMEDOUT) {
        }
        pthread_mutex_unlock(&L.mu);
        sync_paced(L.st, true);
        for (size_t i = 0; i < nflushed_hooks; i++)
            flushed_hooks[i](L.st);
        pthread_mutex_lock(&L.mu);
    }
    pthread_mutex_unlock(&L.mu);
    ledger_sync(L.st); /* what is left, before the store closes */
    return NULL;
}

/* store_on_reset: a batch the backend refused was undone; what transactions
 * published here since may include its charges. Every value is loaded
 * again (ops->load, a recount) by its next user. No transaction is open. */
static void ledger_reset(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&L.mu);
    void *v;
    for (size_t it = 0; L.entries && strmap_next(L.entries, &it, NULL, &v);)
        entry_free(v);
    strmap_free(L.entries);
    L.entries = strmap_new(); /* (NULL when out of memory: the code below copes) */
    L.ndirty = 0;
    pthread_mutex_unlock(&L.mu);
}

int ledger_start(store *st, unsigned flush_ms)
{
    if (L.running) return -1;
    if (store_on_reset(st, ledger_reset, NULL) != 0) return -1;
    clock_cond_init(&L.wake);
    L.st = st;
    L.flush_ms = flush_ms ? flush_ms : 1;
    L.stop = false;
    if (pthread_create(&L.thread, NULL, flusher_main, NULL) != 0) return -1;
    L.running = true;
    return 0;
}

void ledger_stop(void)
{
    if (!L.running) return;
    pthread_mutex_lock(&L.mu);
    L.stop = true;
    pthread_cond_signal(&L.wake);
    pthread_mutex_unlock(&L.mu);
    pthread_join(L.thread, NULL);
    store_sync(L.st); /* (its writes did not wait for the disk: they have now) */
    pthread_cond_destroy(&L.wake);
    L.running = false;
}

void ledger_get_stats(ledger_stats *out)
{
    pthread_mutex_lock(&L.mu);
    out->entries = L.entries ? strmap_count(L.entries) : 0;
    out->dirty = L.ndirty;
    out->versions = L.versions;
    pthread_mutex_unlock(&L.mu);
}

void ledger_clear(void)
{
    pthread_mutex_lock(&L.mu);
    void *v;
    for (size_t it = 0; L.entries && strmap_next(L.entries, &it, NULL, &v);)
        entry_free(v);
    strmap_free(L.entries);
    L.entries = NULL;
    L.ndirty = 0;
    pthread_mutex_unlock(&L.mu);
    free(L.staged);
    L.staged = NULL;
    L.nstaged = L.cap = 0;
    free(L.touched);
    L.touched = NULL;
    L.ntouched = L.tcap = 0;
}
