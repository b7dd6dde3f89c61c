/* metrics_util.h - the building blocks of the gauges rendered from stored
 * objects at scrape time (metrics_pools.c, metrics_custom_quotas.c):
 * families whose samples are collected while the objects are walked once
 * and appended grouped, lines built whole before they are appended, label
 * escaping, Prometheus float spelling, quantities as floats
 * (MilliValue()/1000) and conditions as 1 or 0. */
#ifndef ALLOT_SERVER_METRICS_UTIL_H
#define ALLOT_SERVER_METRICS_UTIL_H

#include "api/kinds.h"
#include "core/dbuf.h"
#include "store/store.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define METRICS_FAMILIES_MAX 16

typedef struct metrics_family {
    const char *name, *help;
} metrics_family;

/* One scrape of a set of gauge families: the samples of each family, and a
 * scratch buffer for the line being built. */
typedef struct metrics_scrape {
    const metrics_family *families;
    size_t n;
    dbuf fam[METRICS_FAMILIES_MAX];
    dbuf line;
} metrics_scrape;

/* families[0..n) (n at most METRICS_FAMILIES_MAX) must outlive the scrape.
 * Allocates nothing. */
void metrics_scrape_init(metrics_scrape *sc, const metrics_family *families, size_t n);

/* Append one sample of family f: labels are NULL-terminated name, value
 * pairs (a NULL value reads ""). The line is built whole first, so it is
 * appended entirely or, when an allocation fails, not at all. */
void metrics_sample(metrics_scrape *sc, size_t f, const char *const *labels, double v);

/* Append every family to b (# HELP, # TYPE gauge, then its samples), in
 * the order given to metrics_scrape_init. */
void metrics_scrape_write(const metrics_scrape *sc, dbuf *b);

void metrics_scrape_free(metrics_scrape *sc);

/* Call fn on every stored object of kind k, parsed (NULL k: nothing; an
 * object that does not parse is skipped). */
typedef void (*metrics_object_fn)(metrics_scrape *sc, const store_obj *o, json_t *obj);
void metrics_for_each(store *st, metrics_scrape *sc, const api_kind *k, metrics_object_fn fn);

/* MilliValue() of the quantity v (a JSON string) in *out; -1 when v is
 * absent or does not parse. */
int metrics_milli_of(const json_t *v, int64_t *out);

/* A MilliValue() as the float Capsule exports (MilliValue()/1000). */
double metrics_float(int64_t milli);

/* part / whole * 100, or 0 when whole is not positive. */
double metrics_percent(int64_t part, int64_t whole);

/* obj[key] when it is a string, else NULL. */
const char *metrics_str_at(const json_t *obj, const char *key);

/* 1 when condition `type` in status.conditions is True, 0 when it is there
 * with another status, -1 when there is none. */
int metrics_condition(const json_t *status, const char *type);

/* v as the exposition spells it: the fewest significant digits that read
 * back as v, in plain decimals when its exponent is in [-5, 21), else in
 * exponent form; NaN, +Inf, -Inf. n is at least 32. */
void metrics_format_value(double v, char *buf, size_t n);

/* Append label value s with backslash, double quote and newline escaped. */
int metrics_add_label_value(dbuf *b, const char *s);

#endif
