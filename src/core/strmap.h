/* strmap.h - a string-keyed hash map of void pointers (open addressing).
 *
 * The map copies nothing: keys must outlive their entry (callers usually
 * key an entry by a string the value itself owns). Not thread-safe.
 */
#ifndef ALLOT_CORE_STRMAP_H
#define ALLOT_CORE_STRMAP_H

#include <stddef.h>

typedef struct strmap strmap;

strmap *strmap_new(void);
void strmap_free(strmap *m);
size_t strmap_count(const strmap *m);
void *strmap_get(const strmap *m, const char *key);
/* Insert or replace. Returns 0, or -1 on allocation failure (map unchanged).
 * The replaced value, if any, is handed back through `old`. */
int strmap_put(strmap *m, const char *key, void *value, void **old);
/* The same with the key's strmap_hash given (a key looked up in many maps
 * is hashed once). */
void *strmap_get_h(const strmap *m, const char *key, unsigned long hash);
int strmap_put_h(strmap *m, const char *key, unsigned long hash, void *value, void **old);
/* Remove; returns the removed value or NULL. */
void *strmap_del(strmap *m, const char *key);

/* Iteration: `for (size_t it = 0; strmap_next(m, &it, &k, &v);)`. Not stable across writes. */
int strmap_next(const strmap *m, size_t *it, const char **key, void **value);

unsigned long strmap_hash(const char *s);

#endif
