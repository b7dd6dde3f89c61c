/* idxmap.h - a hash index of the elements of an array the caller keeps.
 *
 * For a large array searched by a key its elements hold (a custom quota's
 * claims, found by object uid): the index stores, per element, 32 bits of
 * its key's hash and its position, 8 bytes a slot, where a string map keeps
 * 24 (key, value, hash) and every quota of a namespace has one for each
 * pod. Open addressing, linear probing, tombstones; at most half full.
 * The keys stay in the array: a lookup compares a candidate's key (the
 * caller's `eq`) only when its 32 hash bits match.
 *
 * Positions are uint32_t (an array of at most 2^32 - 1 elements). Not
 * thread-safe. Pure: no I/O, no globals.
 */
#ifndef ALLOT_CORE_IDXMAP_H
#define ALLOT_CORE_IDXMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct idxmap {
    uint64_t *slots; /* 0 empty; (tag << 32) | (pos + 1) live; low half 0 otherwise: deleted */
    size_t cap;      /* a power of two, or 0 */
    size_t used, dead;
} idxmap;

/* Whether the element at `pos` has key `key` (the caller's types). */
typedef bool (*idxmap_eq)(const void *ctx, uint32_t pos, const void *key);

void idxmap_free(idxmap *m); /* (the struct itself is the caller's; zeroed) */
size_t idxmap_count(const idxmap *m);

/* The position of the element with `key` (hash: its full hash), or -1. */
int64_t idxmap_find(const idxmap *m, uint64_t hash, const void *key, idxmap_eq eq, const void *ctx);
/* Index a new element (its key must not be indexed yet). 0, or -1 when out
 * of memory (the index unchanged). */
int idxmap_add(idxmap *m, uint64_t hash, uint32_t pos);
/* The element with `key` moved to `pos` (it must be indexed). */
void idxmap_move(idxmap *m, uint64_t hash, const void *key, idxmap_eq eq, const void *ctx,
                 uint32_t pos);
/* Forget the element with `key`: 0, or -1 when it is not indexed. */
int idxmap_del(idxmap *m, uint64_t hash, const void *key, idxmap_eq eq, const void *ctx);

#endif
