/* batch_kinds.h - batch/v1 Job and CronJob: defaulting and validation as
 * upstream's (pkg/apis/batch/v1/defaults.go, pkg/registry/batch/job/
 * strategy.go generateSelector, pkg/apis/batch/validation), for the kind
 * table's hooks.
 *
 * Jobs: parallelism and completions 1 when neither is set, parallelism 1,
 * backoffLimit 6, completionMode NonIndexed, suspend false,
 * podReplacementPolicy TerminatingOrFailed; unless spec.manualSelector, the
 * template gets the labels batch.kubernetes.io/controller-uid and
 * batch.kubernetes.io/job-name (and the legacy controller-uid, job-name)
 * and the selector matches the uid; the Job's own labels default to its
 * template's. Template pod specs get the pod spec defaults.
 * CronJobs: concurrencyPolicy Allow, suspend false, history limits 3 and 1;
 * schedule parsed by core/cron.h (TZ in it refused), timeZone checked
 * against the system tz database (core/tz.h).
 */
#ifndef ALLOT_API_BATCH_KINDS_H
#define ALLOT_API_BATCH_KINDS_H

#include <jansson.h>

#define JOB_LABEL_CONTROLLER_UID "batch.kubernetes.io/controller-uid"
#define JOB_LABEL_JOB_NAME "batch.kubernetes.io/job-name"
#define JOB_LABEL_LEGACY_UID "controller-uid"
#define JOB_LABEL_LEGACY_NAME "job-name"
#define JOB_TRACKING_FINALIZER "batch.kubernetes.io/job-tracking"
#define CRONJOB_SCHEDULED_ANNOTATION "batch.kubernetes.io/cronjob-scheduled-timestamp"
#define CRONJOB_NAME_MAX 52

void job_defaults(json_t *obj);
void job_validate(const json_t *obj, const json_t *old, json_t *causes);
void job_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes);

void cronjob_defaults(json_t *obj);
void cronjob_validate(const json_t *obj, const json_t *old, json_t *causes);

#endif
