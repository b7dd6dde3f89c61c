/* cronjobsync.h - a CronJob's decisions, without I/O: upstream's
 * pkg/controller/cronjob (cronjob_controllerv2.go, utils.go).
 *
 *  - which schedule time is due: the most recent schedule time t with
 *    earliest < t <= now, where earliest is status.lastScheduleTime (or the
 *    CronJob's creation) and, with startingDeadlineSeconds, at least
 *    now - startingDeadlineSeconds; a due time older than the deadline is
 *    missed (MissSchedule), not run; more than 100 missed times are
 *    reported (TooManyMissedTimes) as upstream;
 *  - what concurrencyPolicy says with jobs still active: Allow runs,
 *    Forbid skips (JobAlreadyActive), Replace deletes them first;
 *  - the Job's name: "<cronjob>-<scheduled time in minutes since epoch>";
 *  - which finished Jobs the history limits remove: per kind (succeeded,
 *    failed), the oldest (by start time, then name) beyond the limit.
 */
#ifndef ALLOT_CORE_CRONJOBSYNC_H
#define ALLOT_CORE_CRONJOBSYNC_H

#include "core/cron.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CRONJOB_MISSED_MAX 100

typedef struct cj_due {
    int64_t scheduled; /* the due time, or -1 */
    int64_t next;      /* the first schedule time after now (-1: none) */
    int missed;        /* schedule times in (earliest, now] (capped at MISSED_MAX + 1) */
    bool too_late;     /* scheduled + startingDeadlineSeconds < now */
} cj_due;

/* sds < 0: no startingDeadlineSeconds. */
void cj_due_times(const cron_sched *s, const tz_zone *z, int64_t earliest, int64_t now, int64_t sds,
                  cj_due *out);

typedef enum { CJ_RUN, CJ_SKIP, CJ_REPLACE } cj_action;
/* policy "Allow" | "Forbid" | "Replace" (anything else: Allow). */
cj_action cj_concurrency(const char *policy, size_t active);

/* "<name>-<minutes>" into buf. */
void cj_job_name(const char *cronjob, int64_t scheduled, char *buf, size_t n);

typedef struct cj_job {
    const char *name;
    int64_t start; /* status.startTime, else creation; Unix seconds */
    bool finished;
    bool succeeded; /* finished with Complete (else Failed) */
    bool remove;    /* out: delete it */
} cj_job;

/* Marks `remove` on finished jobs beyond the limits (< 0: no limit);
 * returns how many were marked. Reorders nothing. */
size_t cj_history(cj_job *jobs, size_t n, int32_t succeeded_limit, int32_t failed_limit);

#endif
