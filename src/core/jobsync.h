/* jobsync.h - what a Job's controller should do next, decided from the Job's
 * spec and the pods it counted: upstream's syncJob decisions
 * (pkg/controller/job/job_controller.go) for NonIndexed Jobs, without I/O.
 *
 * In order, as upstream:
 *  1. A Job with a Complete or Failed condition is done: nothing.
 *  2. Failure: more failed pods than spec.backoffLimit (BackoffLimitExceeded,
 *     "Job has reached the specified backoff limit"), or
 *     activeDeadlineSeconds elapsed since status.startTime
 *     (DeadlineExceeded, "Job was active longer than specified deadline"):
 *     the FailureTarget condition, every active pod deleted, and Failed once
 *     none is left.
 *  3. Success: completions set and succeeded >= completions, or no
 *     completions and some pod succeeded with none active: the
 *     SuccessCriteriaMet condition (CompletionsReached), remaining active
 *     pods deleted, and Complete once none is left.
 *  4. Suspended: every active pod deleted.
 *  5. Otherwise active pods are brought to min(parallelism, completions -
 *     succeeded) (no completions: parallelism until a pod succeeds, then
 *     no new pods), creating at most JOB_BURST per sync, but not while a
 *     failed pod's backoff lasts: 10 s doubling per failure since the last
 *     success, at most 10 minutes (upstream's DefaultJobPodFailureBackOff
 *     and MaxJobPodFailureBackOff).
 */
#ifndef ALLOT_CORE_JOBSYNC_H
#define ALLOT_CORE_JOBSYNC_H

#include <stdbool.h>
#include <stdint.h>

#define JOB_BURST 500
#define JOB_BACKOFF_BASE_MS 10000
#define JOB_BACKOFF_MAX_MS (10 * 60 * 1000)
#define JOB_DEFAULT_BACKOFF_LIMIT 6

#define JOB_REASON_BACKOFF "BackoffLimitExceeded"
#define JOB_MSG_BACKOFF "Job has reached the specified backoff limit"
#define JOB_REASON_DEADLINE "DeadlineExceeded"
#define JOB_MSG_DEADLINE "Job was active longer than specified deadline"
#define JOB_REASON_COMPLETIONS "CompletionsReached"
#define JOB_MSG_COMPLETIONS "Reached expected number of succeeded pods"

typedef struct job_in {
    int32_t parallelism;
    int32_t completions;     /* -1: not set */
    int32_t backoff_limit;   /* defaulted */
    int64_t active_deadline; /* seconds; -1: not set */
    bool suspend;
    bool finished;       /* a Complete or Failed condition is True */
    bool failure_target; /* FailureTarget True already: its reason below */
    const char *failure_reason;
    bool success_criteria;          /* SuccessCriteriaMet True already */
    int64_t start_time;             /* Unix seconds; -1: not started */
    int64_t now;                    /* Unix seconds */
    int32_t active;                 /* pods neither terminal nor being deleted */
    int32_t terminating;            /* pods being deleted, not yet gone */
    int32_t succeeded, failed;      /* counted and uncounted */
    int32_t failures_since_success; /* for the backoff */
    int64_t last_failure_ms;        /* any monotonic clock, with now_ms */
    int64_t now_ms;
} job_in;

typedef enum { JOB_RUNNING, JOB_FAILING, JOB_SUCCEEDING } job_state;

typedef struct job_out {
    job_state state;
    const char *reason; /* FailureTarget/Failed, or SuccessCriteriaMet/Complete */
    const char *message;
    bool set_target; /* add FailureTarget or SuccessCriteriaMet now */
    bool set_final;  /* add Failed or Complete now (no pod left active or terminating) */
    int32_t create;  /* pods to create now */
    int32_t remove;  /* active pods to delete now (the not-ready first) */
    int64_t wake_ms; /* > 0: sync again this many ms from now (backoff, deadline) */
} job_out;

void job_decide(const job_in *in, job_out *out);

/* Upstream's pod failure backoff for n failures since the last success (0: none). */
int64_t job_backoff_ms(int32_t n);

#endif
