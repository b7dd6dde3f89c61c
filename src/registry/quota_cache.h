/* quota_cache.h - stored ResourceQuotas kept parsed, and their status
 * templates, for admission's hot path.
 *
 * Admission reads every quota of the namespace on every charged request, and
 * each charge writes a new version of each quota it charges. The cache keeps
 * the current version of each quota parsed (keyed by its store_obj: a held
 * reference pins the identity), and the version a charge builds is cached as
 * built: no parse and no deep copy, consecutive versions share every JSON node
 * but the few on the path to status.used.
 *
 * A charge changes only metadata.resourceVersion and status.used, so the rest
 * of the quota's JSON text is rendered once per quota (a template) and each
 * new version's text is spliced from it: exactly what json_dumps would write.
 *
 * Cached JSON is shared and read-only: never modify what quota_obj_json
 * returns. Thread-safe.
 */
#ifndef ALLOT_REGISTRY_QUOTA_CACHE_H
#define ALLOT_REGISTRY_QUOTA_CACHE_H

#include "store/store.h"

#include <jansson.h>

typedef struct quota_tpl quota_tpl;

/* The parsed JSON of a stored quota: a new reference, or NULL. */
json_t *quota_obj_json(const store_obj *o);

/* The compact JSON text of `q`, a new version of the cached quota `base` that
 * differs from it only in metadata.resourceVersion and status.used. Returns
 * malloc'd text (length in *len) and, in *tpl, the template used (a reference
 * for quota_cache_put); NULL when out of memory. */
char *quota_cache_render(const char *key, const json_t *base, const json_t *q, size_t *len,
                         quota_tpl **tpl);

/* Remember `json` as the parse of `o`, with `tpl` (a reference it takes; may
 * be NULL). Best effort: it is a cache. */
void quota_cache_put(store_obj *o, json_t *json, quota_tpl *tpl);

void quota_tpl_unref(quota_tpl *t);

/* Forget a deleted quota. */
void quota_cache_drop(const char *key);

/* Release everything (shutdown). */
void quota_cache_clear(void);

#endif
