/* rfc3339.h - RFC 3339 timestamps (metav1.Time) to and from Unix time, with
 * proleptic Gregorian day arithmetic (H. Hinnant's civil-days algorithms).
 * Pure: no clock, no locale, no time zone database. */
#ifndef ALLOT_CORE_RFC3339_H
#define ALLOT_CORE_RFC3339_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Days since 1970-01-01 of a civil date, and back. */
int64_t rfc3339_days_from_civil(int64_t y, unsigned m, unsigned d);
void rfc3339_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d);

/* "YYYY-MM-DDThh:mm:ss[.frac](Z|+hh:mm|-hh:mm)", 'T' and 'Z' in either case,
 * to seconds since the epoch and the fraction's nanoseconds (nsec may be
 * NULL). False for anything else, or a field out of range. */
bool rfc3339_parse(const char *s, int64_t *sec, int64_t *nsec);

/* Seconds since the epoch as "YYYY-MM-DDThh:mm:ssZ" (time.RFC3339 in UTC). */
void rfc3339_format(int64_t sec, char *buf, size_t n);

#endif
