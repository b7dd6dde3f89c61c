/* tz.h - time zones from the system's tz database (TZif files, RFC 8536).
 *
 * What a CronJob's spec.timeZone needs: the UTC offset in force at an
 * instant, and the instants a local wall-clock time names. A zone is read
 * once from its TZif file (version 2+ 64-bit data; the POSIX TZ footer of
 * rules "M" form extends it past the last transition) and is immutable
 * after: share it between threads freely.
 *
 * tz_parse is pure (bytes in, zone out); tz_load reads the file. Names are
 * checked as upstream does before time.LoadLocation (no "." or ".." part,
 * no part starting with '-', only [A-Za-z0-9_.+-] characters).
 */
#ifndef ALLOT_CORE_TZ_H
#define ALLOT_CORE_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TZ_DIR "/usr/share/zoneinfo"

typedef struct tz_zone tz_zone;

/* The zone in a TZif image. NULL with err set when malformed / out of memory. */
tz_zone *tz_parse(const unsigned char *data, size_t len, char *err, size_t errlen);
/* The zone `name` ("Europe/Berlin", "UTC") under dir (NULL: TZ_DIR). NULL
 * with err set to Go's "unknown time zone <name>" when absent or invalid. */
tz_zone *tz_load(const char *dir, const char *name, char *err, size_t errlen);
/* UTC: no file needed; never NULL unless out of memory. */
tz_zone *tz_utc(void);
void tz_free(tz_zone *z); /* NULL is fine */

/* Whether `name` is shaped as a zone name may be (see above). */
bool tz_name_valid(const char *name);

/* Seconds east of UTC in force at Unix time t. */
int32_t tz_offset(const tz_zone *z, int64_t t);

/* Broken-down local time (Gregorian, proleptic). */
typedef struct tz_tm {
    int year, mon, mday; /* mon 1..12, mday 1..31 */
    int hour, min, sec;
    int wday; /* 0 = Sunday */
} tz_tm;

/* Local time of Unix time t in z (z NULL: UTC). */
void tz_local(const tz_zone *z, int64_t t, tz_tm *out);
/* The earliest instant whose local time in z is at or after the wall time
 * (y, mon, mday, hour, min, 0): the wall time itself when it exists (the
 * first of two in a repeated hour), else the end of the gap it falls in. */
int64_t tz_from_local(const tz_zone *z, int year, int mon, int mday, int hour, int min);

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian), and back. */
int64_t tz_days_from_civil(int y, int m, int d);
void tz_civil_from_days(int64_t z, int *y, int *m, int *d);

#endif
