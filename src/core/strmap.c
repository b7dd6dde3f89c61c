/* strmap.c - open-addressing hash map with linear probing and tombstones. */
#include "core/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TOMBSTONE ((const char *)&tombstone_marker)
static const char tombstone_marker;

typedef struct {
    const char *key; /* NULL = empty, TOMBSTONE = deleted */
    void *value;
    unsigned long hash;
} slot;

struct strmap {
    slot *slots;
    size_t cap;  /* power of two */
    size_t used; /* live entries */
    size_t dead; /* tombstones */
};

unsigned long strmap_hash(const char *s)
{
    /* Eight bytes a step (keys are 30 to 100 bytes: a byte-at-a-time hash
     * was a third of a lookup), then a final avalanche, since the low bits
     * pick the slot. Not a keyed hash: keys come from stored names, and the
     * tables only ever hold what the server stores. */
    size_t n = strlen(s);
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n, w;
    for (; n >= 8; n -= 8, s += 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    w = 0;
    memcpy(&w, s, n);
    h ^= w; /* then MurmurHash3's 64-bit finalizer */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (unsigned long)h;
}

strmap *strmap_new(void)
{
    strmap *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->cap = 16;
    m->slots = calloc(m->cap, sizeof *m->slots);
    if (!m->slots) {
        free(m);
        return NULL;
    }
    return m;
}

void strmap_free(strmap *m)
{
    if (!m) return;
    free(m->slots);
    free(m);
}

size_t strmap_count(const strmap *m)
{
    return m->used;
}

static slot *find(const strmap *m, const char *key, unsigned long h)
{
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        slot *s = &m->slots[i];
        if (!s->key) return NULL;
        if (s->key != TOMBSTONE && s->hash == h && strcmp(s->key, key) == 0) return s;
    }
}

void *strmap_get(const strmap *m, const char *key)
{
    return strmap_get_h(m, key, strmap_hash(key));
}

void *strmap_get_h(const strmap *m, const char *key, unsigned long h)
{
    slot *s = find(m, key, h);
    return s ? s->value : NULL;
}

static int grow(strmap *m)
{
    size_t ncap = m->used * 4 >= m->cap ? m->cap * 2 : m->cap; /* rehash drops tombstones */
    slot *ns = calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < m->cap; i++) {
        slot *s = &m->slots[i];
        if (!s->key || s->key == TOMBSTONE) continue;
        size_t j = s->hash & (ncap - 1);
        while (ns[j].key)
            j = (j + 1) & (ncap - 1);
        ns[j] = *s;
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    m->dead = 0;
    return 0;
}

int strmap_put(strmap *m, const char *key, void *value, void **old)
{
    return strmap_put_h(m, key, strmap_hash(key), value, old);
}

int strmap_put_h(strmap *m, const char *key, unsigned long h, void *value, void **old)
{
    slot *s = find(m, key, h);
    if (old) *old = NULL;
    if (s) {
        if (old) *old = s->value;
        s->key = key;
        s->value = value;
        return 0;
    }
    if ((m->used + m->dead + 1) * 4 > m->cap * 3 && grow(m) != 0) return -1;
    size_t mask = m->cap - 1, i = h & mask;
    while (m->slots[i].key && m->slots[i].key != TOMBSTONE)
        i = (i + 1) & mask;
    if (m->slots[i].key == TOMBSTONE) m->dead--;
    m->slots[i] = (slot){key, value, h};
    m->used++;
    return 0;
}

void *strmap_del(strmap *m, const char *key)
{
    slot *s = find(m, key, strmap_hash(key));
    if (!s) return NULL;
    void *v = s->value;
    s->key = TOMBSTONE;
    s->value = NULL;
    m->used--;
    m->dead++;
    return v;
}

int strmap_next(const strmap *m, size_t *it, const char **key, void **value)
{
    for (; *it < m->cap; (*it)++) {
        slot *s = &m->slots[*it];
        if (s->key && s->key != TOMBSTONE) {
            if (key) *key = s->key;
            if (value) *value = s->value;
            (*it)++;
            return 1;
        }
    }
    return 0;
}
