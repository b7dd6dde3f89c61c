/* promtext.h - Prometheus text exposition, built in memory: gauge families
 * whose samples are appended while objects are walked once and written
 * grouped, lines built whole before they are appended, label escaping and
 * Prometheus float spelling. Pure: no I/O, no store; used by the metrics of
 * the server and of the controllers (the scheduler's pending demand).
 */
#ifndef ALLOT_CORE_PROMTEXT_H
#define ALLOT_CORE_PROMTEXT_H

#include "core/dbuf.h"

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

/* A MilliValue() as the float Capsule exports (MilliValue()/1000). */
double metrics_float(int64_t milli);

/* part / whole * 100, or 0 when whole is not positive. */
double metrics_percent(int64_t part, int64_t whole);

/* v as the exposition spells it: the fewest significant digits that read
 * back as v, in plain decimals when its exponent is in [-5, 21), else in
 * exponent form; NaN, +Inf, -Inf. n is at least 32. */
void metrics_format_value(double v, char *buf, size_t n);

/* Append label value s with backslash, double quote and newline escaped. */
int metrics_add_label_value(dbuf *b, const char *s);

#endif
