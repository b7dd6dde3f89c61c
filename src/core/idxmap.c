/* idxmap.c - a hash index of the elements of an array (idxmap.h). */
#include "core/idxmap.h"

#include <stdlib.h>

#define TOMB UINT64_C(0xffffffff00000000) /* low half 0, not empty */

static uint32_t tag_of(uint64_t hash)
{
    return (uint32_t)(hash >> 32) ^ (uint32_t)hash;
}

static bool live(uint64_t s)
{
    return (uint32_t)s != 0;
}

void idxmap_free(idxmap *m)
{
    free(m->slots);
    *m = (idxmap){0};
}

size_t idxmap_count(const idxmap *m)
{
    return m->used;
}

/* The slot holding `key`, or NULL. */
static uint64_t *slot_of(const idxmap *m, uint64_t hash, const void *key, idxmap_eq eq,
                         const void *ctx)
{
    if (!m->cap) return NULL;
    uint32_t tag = tag_of(hash);
    size_t mask = m->cap - 1;
    for (size_t i = tag & mask;; i = (i + 1) & mask) {
        uint64_t s = m->slots[i];
        if (!s) return NULL;
        if (live(s) && (uint32_t)(s >> 32) == tag && eq(ctx, (uint32_t)s - 1, key))
            return &m->slots[i];
    }
}

int64_t idxmap_find(const idxmap *m, uint64_t hash, const void *key, idxmap_eq eq, const void *ctx)
{
    const uint64_t *s = slot_of(m, hash, key, eq, ctx);
    return s ? (int64_t)(uint32_t)*s - 1 : -1;
}

/* Put live slot s in table v of cap slots (a free slot is sure to exist). */
static void place(uint64_t *v, size_t cap, uint64_t s)
{
    size_t mask = cap - 1;
    size_t i = (uint32_t)(s >> 32) & mask;
    while (live(v[i]))
        i = (i + 1) & mask;
    v[i] = s;
}

static int rehash(idxmap *m)
{
    size_t ncap = m->cap ? m->cap : 16;
    while ((m->used + 1) * 4 > ncap) /* a quarter full at most after it */
        ncap *= 2;
    uint64_t *v = calloc(ncap, sizeof *v);
    if (!v) return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (live(m->slots[i])) place(v, ncap, m->slots[i]);
    free(m->slots);
    m->slots = v;
    m->cap = ncap;
    m->dead = 0;
    return 0;
}

int idxmap_add(idxmap *m, uint64_t hash, uint32_t pos)
{
    if (pos == UINT32_MAX) return -1; /* (pos + 1 must fit) */
    if ((m->used + m->dead + 1) * 2 > m->cap && rehash(m) != 0) return -1;
    size_t mask = m->cap - 1;
    uint64_t s = (uint64_t)tag_of(hash) << 32 | (pos + 1);
    size_t i = (uint32_t)(s >> 32) & mask;
    while (live(m->slots[i]))
        i = (i + 1) & mask;
    if (m->slots[i] == TOMB) m->dead--;
    m->slots[i] = s;
    m->used++;
    return 0;
}

void idxmap_move(idxmap *m, uint64_t hash, const void *key, idxmap_eq eq, const void *ctx,
                 uint32_t pos)
{
    uint64_t *s = slot_of(m, hash, key, eq, ctx);
    if (s && pos != UINT32_MAX) *s = (*s & TOMB) | (pos + 1);
}

int idxmap_del(idxmap *m, uint64_t hash, const void *key, idxmap_eq eq, const void *ctx)
{
    uint64_t *s = slot_of(m, hash, key, eq, ctx);
    if (!s) return -1;
    *s = TOMB;
    m->used--;
    m->dead++;
    return 0;
}
