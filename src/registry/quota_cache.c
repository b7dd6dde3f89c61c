/* quota_cache.c - parsed quotas and status templates (see quota_cache.h). */
#include "registry/quota_cache.h"
#include "core/jdump.h"

#include "core/strmap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text of a quota with two holes, in text order: piece[0] hole piece[1]
 * hole piece[2]. used_first tells which value fills the first hole. */
struct quota_tpl {
    atomic_int refs;
    bool used_first;
    char *text; /* the pieces point into it */
    const char *piece[3];
    size_t piece_len[3];
};

typedef struct entry {
    store_obj *obj;
    json_t *json;
    quota_tpl *tpl; /* may be NULL */
} entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static strmap *entries; /* key -> entry* */

/* Placeholders for the two values; control characters, so that no quota's
 * own text can hold their escaped forms by accident more than once without
 * being caught (a template needs each exactly once). */
#define RV_MARK "\x01rv\x01"
#define RV_DUMP "\"\\u0001rv\\u0001\""
#define USED_MARK "\x01used\x01"
#define USED_DUMP "\"\\u0001used\\u0001\""

void quota_tpl_unref(quota_tpl *t)
{
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1) return;
    free(t->text);
    free(t);
}

static quota_tpl *tpl_ref(quota_tpl *t)
{
    if (t) atomic_fetch_add(&t->refs, 1);
    return t;
}

static const char *once(const char *text, const char *needle)
{
    const char *p = strstr(text, needle);
    return p && !strstr(p + 1, needle) ? p : NULL;
}

/* Render q with markers in place of the two values, and cut it there. */
static quota_tpl *tpl_build(const json_t *q)
{
    json_t *tq = json_copy((json_t *)q);
    json_t *st = json_copy(json_object_get(q, "status"));
    json_t *meta = json_copy(json_object_get(q, "metadata"));
    char *text = NULL;
    if (tq && st && meta && !json_object_set_new(meta, "resourceVersion", json_string(RV_MARK)) &&
        !json_object_set_new(st, "used", json_string(USED_MARK)) &&
        !json_object_set(tq, "metadata", meta) && !json_object_set(tq, "status", st))
        text = jdump(tq, NULL);
    json_decref(tq);
    json_decref(st);
    json_decref(meta);
    const char *rv = text ? once(text, RV_DUMP) : NULL, *used = text ? once(text, USED_DUMP) : NULL;
    quota_tpl *t = rv && used ? calloc(1, sizeof *t) : NULL;
    if (!t) {
        free(text);
        return NULL;
    }
    atomic_init(&t->refs, 1);
    t->text = text;
    t->used_first = used < rv;
    const char *a = t->used_first ? used : rv, *b = t->used_first ? rv : used;
    size_t alen = t->used_first ? strlen(USED_DUMP) : strlen(RV_DUMP);
    size_t blen = t->used_first ? strlen(RV_DUMP) : strlen(USED_DUMP);
    t->piece[0] = text;
    t->piece_len[0] = (size_t)(a - text);
    t->piece[1] = a + alen;
    t->piece_len[1] = (size_t)(b - (a + alen));
    t->piece[2] = b + blen;
    t->piece_len[2] = strlen(b + blen);
    return t;
}

static char *tpl_render(const quota_tpl *t, const char *rv, const char *used, size_t *len)
{
    const char *v[2] = {t->used_first ? used : rv, t->used_first ? rv : used};
    size_t vl[2] = {strlen(v[0]), strlen(v[1])};
    size_t n = t->piece_len[0] + vl[0] + t->piece_len[1] + vl[1] + t->piece_len[2];
    char *out = malloc(n + 1), *p = out;
    if (!out) return NULL;
    for (int i = 0; i < 3; i++) {
        memcpy(p, t->piece[i], t->piece_len[i]);
        p += t->piece_len[i];
        if (i < 2) {
            memcpy(p, v[i], vl[i]);
            p += vl[i];
        }
    }
    *p = '\0';
    *len = n;
    return out;
}

char *quota_cache_render(const char *key, const json_t *base, const json_t *q, size_t *len,
                         quota_tpl **tpl)
{
    *tpl = NULL;
    pthread_mutex_lock(&mu);
    entry *e = entries ? strmap_get(entries, key) : NULL;
    quota_tpl *t = e && e->json == base ? tpl_ref(e->tpl) : NULL;
    pthread_mutex_unlock(&mu);
    if (!t) t = tpl_build(q);
    const json_t *meta = json_object_get(q, "metadata");
    char *rv = json_dumps(json_object_get(meta, "resourceVersion"), JSON_ENCODE_ANY);
    char *used = json_dumps(json_object_get(json_object_get(q, "status"), "used"),
                            JSON_COMPACT | JSON_ENCODE_ANY);
    char *text = t && rv && used ? tpl_render(t, rv, used, len) : NULL;
    free(rv);
    free(used);
    if (!text) { /* no template (or out of memory): the plain way */
        quota_tpl_unref(t);
        text = jdump(q, NULL);
        if (text) *len = strlen(text);
        return text;
    }
#ifndef NDEBUG
    /* Debug builds (the test suite) prove every splice against jansson. */
    char *check = jdump(q, NULL);
    if (!check || strcmp(check, text) != 0) {
        fprintf(stderr, "quota template mismatch:\n%s\n%s\n", text, check ? check : "(null)");
        abort();
    }
    free(check);
#endif
    *tpl = t;
    return text;
}

static void entry_free(entry *e)
{
    if (!e) return;
    store_obj_unref(e->obj);
    json_decref(e->json);
    quota_tpl_unref(e->tpl);
    free(e);
}

void quota_cache_put(store_obj *o, json_t *json, quota_tpl *tpl)
{
    entry *e = malloc(sizeof *e);
    if (!e) {
        quota_tpl_unref(tpl);
        return;
    }
    store_obj_ref(o);
    *e = (entry){o, json_incref(json), tpl};
    void *old = NULL;
    pthread_mutex_lock(&mu);
    if (!entries) entries = strmap_new();
    entry *cur = entries ? strmap_get(entries, o->key) : NULL;
    if (cur && cur->obj->rv > o->rv)
        old = e; /* a reader parsed an older version: keep the newer entry */
    else if (!entries || strmap_put(entries, o->key, e, &old) != 0)
        old = e;
    pthread_mutex_unlock(&mu);
    entry_free(old);
}

void quota_cache_drop(const char *key)
{
    pthread_mutex_lock(&mu);
    entry *e = entries ? strmap_del(entries, key) : NULL;
    pthread_mutex_unlock(&mu);
    entry_free(e);
}

json_t *quota_obj_json(const store_obj *o)
{
    json_t *j = NULL;
    pthread_mutex_lock(&mu);
    entry *e = entries ? strmap_get(entries, o->key) : NULL;
    if (e && e->obj == o) j = json_incref(e->json);
    pthread_mutex_unlock(&mu);
    if (j) return j;
    j = store_obj_parse(o);
    if (j) quota_cache_put((store_obj *)o, j, NULL);
    return j;
}

void quota_cache_clear(void)
{
    pthread_mutex_lock(&mu);
    void *e;
    for (size_t it = 0; entries && strmap_next(entries, &it, NULL, &e);)
        entry_free(e);
    strmap_free(entries);
    entries = NULL;
    pthread_mutex_unlock(&mu);
}
