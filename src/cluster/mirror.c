/* mirror.c - a cluster's objects in allot's store (see mirror.h). */
#include "cluster/mirror.h"

#include "api/kinds.h"
#include "core/jdump.h"
#include "core/strmap.h"
#include "util/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mirror {
    store *st;
    pthread_mutex_t mu;   /* orders batches; guards crv and stats */
    pthread_cond_t taken; /* a batch was taken in (mirror_wait_crv) */
    /* store key -> the cluster's resourceVersion: each entry one block,
     * "key\0crv\0", which the map's key points into (it borrows keys). */
    strmap *crv;
    /* store resource ("pods", "<plural>.<group>") -> how far its
     * collection was taken in (a progress, which the key points into) */
    strmap *progress;
    mirror_stats stats;
};

mirror *mirror_new(store *st)
{
    mirror *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    if (!(m->crv = strmap_new()) || !(m->progress = strmap_new())) {
        strmap_free(m->crv);
        free(m);
        return NULL;
    }
    m->st = st;
    pthread_mutex_init(&m->mu, NULL);
    if (clock_cond_init(&m->taken) != 0) {
        pthread_mutex_destroy(&m->mu);
        strmap_free(m->crv);
        strmap_free(m->progress);
        free(m);
        return NULL;
    }
    return m;
}

void mirror_free(mirror *m)
{
    if (!m) return;
    void *v;
    for (size_t it = 0; strmap_next(m->crv, &it, NULL, &v);)
        free(v);
    strmap_free(m->crv);
    for (size_t it = 0; strmap_next(m->progress, &it, NULL, &v);)
        free(v);
    strmap_free(m->progress);
    pthread_cond_destroy(&m->taken);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* One change being taken in: its key, the cluster's resourceVersion, the
 * text to store (malloc'd; for a delete, the last value). */
typedef struct change {
    char key[512];
    char *crv;
    char *json;
    size_t len;
    bool deleted;
} change;

typedef struct batch {
    change *c;
    size_t n, cap;
} batch;

static void batch_free(batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->c[i].crv);
        free(b->c[i].json);
    }
    free(b->c);
}

static change *batch_add(batch *b)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        change *c = realloc(b->c, cap * sizeof *c);
        if (!c) return NULL;
        b->c = c;
        b->cap = cap;
    }
    change *c = &b->c[b->n++];
    memset(c, 0, sizeof *c);
    return c;
}

/* The cluster resourceVersion the mirror holds for key, or NULL. Under mu. */
static const char *crv_get(mirror *m, const char *key)
{
    const char *e = strmap_get(m->crv, key);
    return e ? e + strlen(e) + 1 : NULL;
}

static int crv_put(mirror *m, const char *key, const char *crv)
{
    size_t kl = strlen(key) + 1, cl = strlen(crv) + 1;
    char *e = malloc(kl + cl), *old = NULL;
    if (!e) return -1;
    memcpy(e, key, kl);
    memcpy(e + kl, crv, cl);
    if (strmap_put(m->crv, e, e, (void **)&old) != 0) {
        free(e);
        return -1;
    }
    free(old);
    return 0;
}

uint64_t mirror_rv_value(const char *rv)
{
    char *end;
    if (!rv || !*rv || *rv < '0' || *rv > '9') return 0;
    unsigned long long v = strtoull(rv, &end, 10);
    return *end ? 0 : (uint64_t)v;
}

/* How far one collection was taken in (mirror_progress, mirror_listed):
 * the map's key points at res. */
typedef struct progress {
    uint64_t rv;
    bool listed;
    char res[];
} progress;

/* Kind k's collection is taken in through cluster resourceVersion rv (by a
 * list when `listed`). Under mu. Out of memory only forgets progress (a
 * write waits longer). */
static void progress_put(mirror *m, const api_kind *k, const char *rv, bool listed)
{
    uint64_t v = mirror_rv_value(rv);
    char res[256];
    api_kind_store_resource(k, res, sizeof res);
    progress *cur = strmap_get(m->progress, res);
    if (!cur) {
        size_t rl = strlen(res) + 1;
        if (!(cur = calloc(1, sizeof *cur + rl))) return;
        memcpy(cur->res, res, rl);
        if (strmap_put(m->progress, cur->res, cur, NULL) != 0) {
            free(cur);
            return;
        }
    }
    if (v > cur->rv) cur->rv = v;
    cur->listed |= listed;
}

static const char *meta_str(const json_t *obj, const char *field)
{
    return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

/* The store key of cluster object obj of kind k, into c->key; -1 when it
 * has no name (or a namespace where one is needed). */
static int key_of(const api_kind *k, const json_t *obj, change *c)
{
    const char *name = meta_str(obj, "name"), *ns = k->namespaced ? meta_str(obj, "namespace") : "";
    if (!name || !*name || !ns || (k->namespaced && !*ns)) return -1;
    int n = api_kind_key(k, ns, name, c->key, sizeof c->key);
    return n < 0 || (size_t)n >= sizeof c->key ? -1 : 0;
}

/* Stage obj (a cluster object of kind k) as the next change of b, at the
 * store's revision after rev0 and the changes before it; *skip when the
 * mirror already holds that version (or, for a delete, holds nothing).
 * Under m->mu, which no other writer of the store bypasses. 0 or -1. */
static int stage(mirror *m, batch *b, int64_t rev0, const api_kind *k, const json_t *obj,
                 bool deleted, bool *skip)
{
    change tmp = {0};
    const char *crv = meta_str(obj, "resourceVersion");
    if (!json_is_object(obj) || !crv || key_of(k, obj, &tmp) != 0) return -1;
    const char *have = crv_get(m, tmp.key);
    *skip = deleted ? !have : have && !strcmp(have, crv);
    if (*skip) return 0;
    change *c = batch_add(b);
    if (!c) return -1;
    memcpy(c->key, tmp.key, sizeof c->key);
    c->deleted = deleted;
    c->crv = strdup(crv);
    if (deleted) {
        /* A delete carries the last value the store holds: what watchers
         * and the books saw, at the mirror's revision. */
        store_obj *o = store_get(m->st, c->key);
        c->json = o ? strndup(o->json, o->len) : NULL;
        c->len = o ? o->len : 0;
        store_obj_unref(o);
    } else {
        json_t *copy = jcopy(obj);
        char rv[32];
        snprintf(rv, sizeof rv, "%lld", (long long)(rev0 + (int64_t)b->n - 1));
        if (copy) {
            api_kind_to_storage(k, copy);
            json_object_set_new(json_object_get(copy, "metadata"), "resourceVersion",
                                json_string(rv));
            c->json = jdump(copy, &c->len);
            json_decref(copy);
        }
    }
    if (!c->crv || !c->json) return -1; /* (batch_free frees what c holds) */
    return 0;
}

/* Take b in, each change at the revision stage gave it. Under m->mu. */
static int apply(mirror *m, batch *b, int64_t rev0, char *err, size_t errlen)
{
    if (!b->n) return 0;
    store_op *ops = calloc(b->n, sizeof *ops);
    if (!ops) return snprintf(err, errlen, "out of memory"), -1;
    for (size_t i = 0; i < b->n; i++)
        ops[i] = (store_op){.type = b->c[i].deleted ? STORE_EV_DELETED : STORE_EV_MODIFIED,
                            .rv = rev0 + (int64_t)i,
                            .key = b->c[i].key,
                            .json = b->c[i].json,
                            .len = b->c[i].len};
    int rc = store_ingest(m->st, ops, b->n, err, errlen);
    free(ops);
    for (size_t i = 0; rc == 0 && i < b->n; i++) {
        change *c = &b->c[i];
        if (c->deleted) {
            free(strmap_del(m->crv, c->key));
        } else if (crv_put(m, c->key, c->crv) != 0) {
            /* Out of memory: the object is held without its cluster
             * revision; the next event of it is taken in again. */
            free(strmap_del(m->crv, c->key));
        }
    }
    if (rc == 0)
        m->stats.ingested += b->n;
    else
        m->stats.failed++;
    return rc;
}

int mirror_replace(mirror *m, const api_kind *k, const json_t *items, const char *list_rv,
                   char *err, size_t errlen)
{
    if (errlen) *err = '\0';
    if (!json_is_array(items)) return snprintf(err, errlen, "items is not a list"), -1;
    char prefix[256];
    api_kind_store_resource(k, prefix, sizeof prefix - 1);
    strcat(prefix, "/");
    batch b = {0};
    strmap *seen = strmap_new();
    int rc = seen ? 0 : -1;
    pthread_mutex_lock(&m->mu);
    int64_t rev0 = store_revision(m->st) + 1;
    m->stats.replaces++;
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        if (rc != 0) break;
        bool skip;
        change probe = {0};
        if (key_of(k, it, &probe) != 0 || stage(m, &b, rev0, k, it, false, &skip) != 0) {
            snprintf(err, errlen, "cannot take in item %zu of %s", i, prefix);
            rc = -1;
            break;
        }
        if (skip) m->stats.skipped++;
        char *dup = strdup(probe.key), *old = NULL;
        if (!dup || strmap_put(seen, dup, dup, (void **)&old) != 0) {
            free(dup);
            rc = -1;
        }
        free(old); /* (the same object listed twice: the last wins) */
    }
    /* What the store holds of this kind that the list no longer has. */
    store_obj **objs = NULL;
    size_t n = 0;
    int64_t rev;
    bool more;
    if (rc == 0 && store_list(m->st, prefix, NULL, 0, &objs, &n, &rev, &more) != 0) rc = -1;
    for (size_t j = 0; j < n; j++) {
        if (rc == 0 && !strmap_get(seen, objs[j]->key)) {
            change *c = batch_add(&b);
            if (!c || strlen(objs[j]->key) >= sizeof c->key ||
                !(c->json = strndup(objs[j]->json, objs[j]->len))) {
                rc = -1;
            } else {
                strcpy(c->key, objs[j]->key);
                c->len = objs[j]->len;
                c->deleted = true;
            }
            if (c && !c->crv && !(c->crv = strdup(""))) rc = -1;
        }
        store_obj_unref(objs[j]);
    }
    free(objs);
    if (rc == 0)
        rc = apply(m, &b, rev0, err, errlen);
    else if (!*err)
        snprintf(err, errlen, "out of memory");
    if (rc == 0) progress_put(m, k, list_rv, true);
    pthread_cond_broadcast(&m->taken);
    pthread_mutex_unlock(&m->mu);
    void *v;
    for (size_t it = 0; seen && strmap_next(seen, &it, NULL, &v);)
        free(v);
    strmap_free(seen);
    batch_free(&b);
    return rc;
}

int mirror_event(mirror *m, const api_kind *k, const char *type, const json_t *obj, char *err,
                 size_t errlen)
{
    bool deleted = !strcmp(type, "DELETED");
    if (!deleted && strcmp(type, "ADDED") && strcmp(type, "MODIFIED"))
        return snprintf(err, errlen, "unknown event type %s", type), -1;
    batch b = {0};
    bool skip = false;
    pthread_mutex_lock(&m->mu);
    int64_t rev0 = store_revision(m->st) + 1;
    m->stats.events++;
    int rc = stage(m, &b, rev0, k, obj, deleted, &skip);
    if (rc != 0)
        snprintf(err, errlen, "cannot take in a %s event", type);
    else if (skip)
        m->stats.skipped++;
    else
        rc = apply(m, &b, rev0, err, errlen);
    if (rc == 0) progress_put(m, k, meta_str(obj, "resourceVersion"), false);
    pthread_cond_broadcast(&m->taken);
    pthread_mutex_unlock(&m->mu);
    batch_free(&b);
    return rc;
}

bool mirror_cluster_rv(mirror *m, const char *key, char *buf, size_t n)
{
    pthread_mutex_lock(&m->mu);
    const char *v = crv_get(m, key);
    if (v) snprintf(buf, n, "%s", v);
    pthread_mutex_unlock(&m->mu);
    return v != NULL;
}

uint64_t mirror_progress(mirror *m, const char *resource)
{
    pthread_mutex_lock(&m->mu);
    const progress *p = strmap_get(m->progress, resource);
    uint64_t out = p ? p->rv : 0;
    pthread_mutex_unlock(&m->mu);
    return out;
}

bool mirror_listed(mirror *m, const char *resource)
{
    pthread_mutex_lock(&m->mu);
    const progress *p = strmap_get(m->progress, resource);
    bool out = p && p->listed;
    pthread_mutex_unlock(&m->mu);
    return out;
}

/* Whether the mirror's version `have` of an object is `want` or later:
 * the same text, or both integers and have >= want (see mirror.h). */
static bool reached(const char *have, const char *want)
{
    if (!strcmp(have, want)) return true;
    char *e1, *e2;
    unsigned long long h = strtoull(have, &e1, 10), w = strtoull(want, &e2, 10);
    return *have && *want && !*e1 && !*e2 && h >= w;
}

bool mirror_wait_crv(mirror *m, const char *key, const char *crv, int64_t timeout_ms)
{
    struct timespec dl = clock_deadline(CLOCK_MONOTONIC, timeout_ms);
    pthread_mutex_lock(&m->mu);
    bool ok;
    for (;;) {
        const char *v = crv_get(m, key);
        if ((ok = !v || reached(v, crv))) break;
        if (pthread_cond_timedwait(&m->taken, &m->mu, &dl) != 0) {
            v = crv_get(m, key);
            ok = !v || reached(v, crv);
            break;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return ok;
}

void mirror_get_stats(mirror *m, mirror_stats *out)
{
    pthread_mutex_lock(&m->mu);
    *out = m->stats;
    pthread_mutex_unlock(&m->mu);
}

json_t *mirror_core_obj(store *st, const char *resource, const char *ns, const char *name)
{
    const api_kind *k = api_kind_find("", "v1", resource);
    char key[700];
    if (!k || api_kind_key(k, ns, name, key, sizeof key) < 0) return NULL;
    store_obj *o = store_get(st, key);
    json_t *v = o ? store_obj_parse(o) : NULL;
    store_obj_unref(o);
    return v;
}
