/* bitalloc.c - a bitmap allocator with a static band (see bitalloc.h). */
#include "core/bitalloc.h"

#include <stdlib.h>

#define BA_MAX_OFFSETS (1u << 24) /* a /8 of IPv4, far above any range allowed */
#define NONE UINT32_MAX

struct bitalloc {
    uint64_t *words;
    uint32_t max, band, count;
};

bitalloc *ba_new(uint32_t max, uint32_t band)
{
    if (max > BA_MAX_OFFSETS) return NULL;
    bitalloc *b = calloc(1, sizeof *b);
    size_t nwords = ((size_t)max + 63) / 64;
    if (!b || !(b->words = calloc(nwords ? nwords : 1, sizeof *b->words))) {
        free(b);
        return NULL;
    }
    b->max = max;
    b->band = band < max ? band : 0;
    return b;
}

void ba_free(bitalloc *b)
{
    if (!b) return;
    free(b->words);
    free(b);
}

uint32_t ba_max(const bitalloc *b)
{
    return b->max;
}

uint32_t ba_count(const bitalloc *b)
{
    return b->count;
}

bool ba_has(const bitalloc *b, uint32_t off)
{
    return off < b->max && (b->words[off / 64] >> (off % 64) & 1);
}

bool ba_set(bitalloc *b, uint32_t off)
{
    if (off >= b->max || ba_has(b, off)) return false;
    b->words[off / 64] |= (uint64_t)1 << (off % 64);
    b->count++;
    return true;
}

void ba_clear(bitalloc *b, uint32_t off)
{
    if (!ba_has(b, off)) return;
    b->words[off / 64] &= ~((uint64_t)1 << (off % 64));
    b->count--;
}

/* The first clear offset in [from, to), or NONE; a word at a time. */
static uint32_t first_clear(const bitalloc *b, uint32_t from, uint32_t to)
{
    while (from < to) {
        uint64_t free_bits = ~b->words[from / 64] >> (from % 64);
        if (free_bits) {
            uint32_t at = from + (uint32_t)__builtin_ctzll(free_bits);
            return at < to ? at : NONE;
        }
        from = (from / 64 + 1) * 64; /* the next word */
    }
    return NONE;
}

/* A clear offset of [lo, hi), scanning forward from lo + r % (hi - lo) and
 * wrapping (upstream's random scan), or NONE. */
static uint32_t scan(const bitalloc *b, uint32_t lo, uint32_t hi, uint32_t r)
{
    if (lo >= hi) return NONE;
    uint32_t start = lo + r % (hi - lo);
    uint32_t at = first_clear(b, start, hi);
    return at != NONE ? at : first_clear(b, lo, start);
}

bool ba_next(bitalloc *b, uint64_t rnd, uint32_t *off)
{
    if (b->count >= b->max) return false;
    uint32_t at = scan(b, b->band, b->max, (uint32_t)rnd);
    if (at == NONE) at = scan(b, 0, b->band, (uint32_t)(rnd >> 32));
    if (at == NONE) return false;
    ba_set(b, at);
    *off = at;
    return true;
}
