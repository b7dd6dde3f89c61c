/* metrics_util.h - what the gauges rendered from stored objects at scrape
 * time share (metrics_pools.c, metrics_custom_quotas.c): a walk over a
 * kind's stored objects, quantities as floats (MilliValue()/1000) and
 * conditions as 1 or 0. The exposition itself is core/promtext.h. */
#ifndef ALLOT_SERVER_METRICS_UTIL_H
#define ALLOT_SERVER_METRICS_UTIL_H

#include "api/kinds.h"
#include "core/promtext.h"
#include "store/store.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Call fn on every stored object of kind k, parsed (NULL k: nothing; an
 * object that does not parse is skipped). */
typedef void (*metrics_object_fn)(metrics_scrape *sc, const store_obj *o, json_t *obj);
void metrics_for_each(store *st, metrics_scrape *sc, const api_kind *k, metrics_object_fn fn);

/* MilliValue() of the quantity v (a JSON string) in *out; -1 when v is
 * absent or does not parse. */
int metrics_milli_of(const json_t *v, int64_t *out);

/* obj[key] when it is a string, else NULL. */
const char *metrics_str_at(const json_t *obj, const char *key);

/* 1 when condition `type` in status.conditions is True, 0 when it is there
 * with another status, -1 when there is none. */
int metrics_condition(const json_t *status, const char *type);

#endif
