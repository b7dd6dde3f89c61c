/* expect.c - controller expectations (see expect.h). */
#include "core/expect.h"

#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

typedef struct record {
    char *owner; /* the key of expect_set.owners */
    int add, del;
    int64_t at;
    strmap *pods; /* pod key -> the key itself (owned): deletions expected, or NULL */
} record;

struct expect_set {
    strmap *owners; /* owner -> record */
    int64_t ttl_ms;
};

static void pods_free(strmap *m)
{
    if (!m) return;
    void *v;
    for (size_t it = 0; strmap_next(m, &it, NULL, &v);)
        free(v);
    strmap_free(m);
}

static void record_free(record *r)
{
    if (!r) return;
    pods_free(r->pods);
    free(r->owner);
    free(r);
}

expect_set *expect_new(int64_t ttl_ms)
{
    expect_set *s = calloc(1, sizeof *s);
    if (!s || !(s->owners = strmap_new())) {
        free(s);
        return NULL;
    }
    s->ttl_ms = ttl_ms;
    return s;
}

void expect_clear(expect_set *s)
{
    if (!s) return;
    void *v;
    for (size_t it = 0; strmap_next(s->owners, &it, NULL, &v);)
        record_free(v);
    strmap_free(s->owners);
    s->owners = strmap_new(); /* NULL when out of memory: every lookup then finds nothing */
}

void expect_free(expect_set *s)
{
    if (!s) return;
    void *v;
    for (size_t it = 0; s->owners && strmap_next(s->owners, &it, NULL, &v);)
        record_free(v);
    strmap_free(s->owners);
    free(s);
}

/* A fresh record for owner, replacing any (NULL when out of memory, in
 * which case the owner has no record at all: upstream's "satisfied"). */
static record *fresh(expect_set *s, const char *owner, int64_t now)
{
    if (!s->owners) return NULL;
    record_free(strmap_del(s->owners, owner));
    record *r = calloc(1, sizeof *r);
    if (!r || !(r->owner = strdup(owner))) {
        free(r);
        return NULL;
    }
    r->at = now;
    if (strmap_put(s->owners, r->owner, r, NULL) != 0) {
        record_free(r);
        return NULL;
    }
    return r;
}

int expect_creations(expect_set *s, const char *owner, int n, int64_t now)
{
    record *r = fresh(s, owner, now);
    if (!r) return -1;
    r->add = n;
    return 0;
}

int expect_deletions(expect_set *s, const char *owner, const char *const *pods, size_t n,
                     int64_t now)
{
    record *r = fresh(s, owner, now);
    if (!r) return -1;
    if (n && !(r->pods = strmap_new())) goto oom;
    for (size_t i = 0; i < n; i++) {
        if (strmap_get(r->pods, pods[i])) continue; /* a set: duplicates count once */
        char *k = strdup(pods[i]);
        if (!k || strmap_put(r->pods, k, k, NULL) != 0) {
            free(k);
            goto oom;
        }
        r->del++;
    }
    return 0;
oom:
    record_free(strmap_del(s->owners, owner));
    return -1;
}

void expect_creation_observed(expect_set *s, const char *owner)
{
    record *r = s->owners ? strmap_get(s->owners, owner) : NULL;
    if (r) r->add--;
}

void expect_deletion_observed(expect_set *s, const char *owner, const char *pod)
{
    record *r = s->owners ? strmap_get(s->owners, owner) : NULL;
    if (!r || !r->pods) return;
    char *k = strmap_del(r->pods, pod);
    if (!k) return;
    free(k);
    r->del--;
}

bool expect_satisfied(const expect_set *s, const char *owner, int64_t now)
{
    const record *r = s->owners ? strmap_get(s->owners, owner) : NULL;
    if (!r) return true;
    if (r->add <= 0 && r->del <= 0) return true;
    return now - r->at > s->ttl_ms;
}

void expect_pending(const expect_set *s, const char *owner, int *add, int *del)
{
    const record *r = s->owners ? strmap_get(s->owners, owner) : NULL;
    *add = r ? r->add : 0;
    *del = r ? r->del : 0;
}

void expect_forget(expect_set *s, const char *owner)
{
    if (s->owners) record_free(strmap_del(s->owners, owner));
}

size_t expect_count(const expect_set *s)
{
    return s->owners ? strmap_count(s->owners) : 0;
}
