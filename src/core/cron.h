/* cron.h - standard cron schedules, as upstream's CronJob reads them
 * (github.com/robfig/cron/v3 ParseStandard and SpecSchedule.Next).
 *
 * Five fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12
 * or JAN-DEC), day of week (0-6 or SUN-SAT; 7 is refused, as upstream).
 * Each field is a comma list of `*`, `?`, `N`, `N-M`, each with an optional
 * `/step` (`N/step` means N-max/step). Names are case-insensitive.
 * Descriptors: @yearly @annually @monthly @weekly @daily @midnight @hourly
 * (`@every` is not supported). A leading `TZ=<zone> ` or `CRON_TZ=<zone> `
 * is skipped (the API refuses it: a CronJob names its zone in timeZone).
 *
 * Day of month and day of week: when either field starts with `*` or `?`
 * (without a step above 1) a day must match both; when both are
 * restricted, either may match (the classic cron OR rule).
 *
 * Next times are computed on the local wall clock of a zone (core/tz.h),
 * as robfig does: a wall time skipped by a DST change does not happen
 * that day; a wall time repeated by one happens twice.
 *
 * Pure: no I/O, no clock, no globals, no allocation.
 */
#ifndef ALLOT_CORE_CRON_H
#define ALLOT_CORE_CRON_H

#include "core/tz.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cron_sched {
    uint64_t minute; /* bit n: minute n */
    uint32_t hour;
    uint32_t dom;   /* bits 1..31 */
    uint16_t month; /* bits 1..12 */
    uint8_t dow;    /* bits 0..6 */
    bool dom_star, dow_star;
} cron_sched;

/* Parse `spec`. 0, or -1 with robfig's message in err ("expected exactly 5
 * fields, found 4: [* * * *]", "end of range (60) above maximum (59): 60",
 * "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid
 * syntax", "unrecognized descriptor: @foo", "empty spec string"). */
int cron_parse(const char *spec, cron_sched *out, char *err, size_t errlen);

/* The first schedule time strictly after Unix time t (whole minutes), on
 * the wall clock of z (NULL: UTC); -1 when none within five years
 * ("0 0 30 2 *"). */
int64_t cron_next(const cron_sched *s, const tz_zone *z, int64_t t);

#endif
