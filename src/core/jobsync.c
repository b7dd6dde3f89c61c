/* jobsync.c - a Job's next step (see jobsync.h). */
#include "core/jobsync.h"

#include <string.h>

int64_t job_backoff_ms(int32_t n)
{
    if (n <= 0) return 0;
    int64_t d = JOB_BACKOFF_BASE_MS;
    for (int32_t i = 1; i < n && d < JOB_BACKOFF_MAX_MS; i++)
        d *= 2;
    return d < JOB_BACKOFF_MAX_MS ? d : JOB_BACKOFF_MAX_MS;
}

static void wake_at(job_out *out, int64_t ms)
{
    if (ms <= 0) ms = 1;
    if (out->wake_ms == 0 || ms < out->wake_ms) out->wake_ms = ms;
}

/* Stop everything: target condition first, final once nothing runs. */
static void ending(const job_in *in, job_out *out, bool target_already)
{
    out->set_target = !target_already;
    out->remove = in->active;
    out->set_final = in->active == 0 && in->terminating == 0;
}

void job_decide(const job_in *in, job_out *out)
{
    memset(out, 0, sizeof *out);
    out->state = JOB_RUNNING;
    if (in->finished) return;

    /* 2. failure */
    const char *reason = NULL, *message = NULL;
    if (in->failure_target) {
        reason = in->failure_reason && !strcmp(in->failure_reason, JOB_REASON_DEADLINE)
                     ? JOB_REASON_DEADLINE
                     : JOB_REASON_BACKOFF;
    } else if (!in->success_criteria && in->failed > in->backoff_limit) {
        reason = JOB_REASON_BACKOFF;
    } else if (!in->success_criteria && !in->suspend && in->active_deadline >= 0 &&
               in->start_time >= 0) {
        int64_t left = in->start_time + in->active_deadline - in->now;
        if (left <= 0)
            reason = JOB_REASON_DEADLINE;
        else
            wake_at(out, left * 1000);
    }
    if (reason) {
        message = !strcmp(reason, JOB_REASON_DEADLINE) ? JOB_MSG_DEADLINE : JOB_MSG_BACKOFF;
        out->state = JOB_FAILING;
        out->reason = reason;
        out->message = message;
        out->wake_ms = 0;
        ending(in, out, in->failure_target);
        return;
    }

    /* 3. success */
    bool done =
        in->success_criteria || (in->completions >= 0 ? in->succeeded >= in->completions
                                                      : in->succeeded > 0 && in->active == 0);
    if (done) {
        out->state = JOB_SUCCEEDING;
        out->reason = JOB_REASON_COMPLETIONS;
        out->message = JOB_MSG_COMPLETIONS;
        out->wake_ms = 0;
        ending(in, out, in->success_criteria);
        return;
    }

    /* 4. suspended */
    if (in->suspend) {
        out->wake_ms = 0;
        out->remove = in->active;
        return;
    }

    /* 5. active pods */
    int32_t want;
    if (in->completions >= 0) {
        want = in->completions - in->succeeded;
        if (want > in->parallelism) want = in->parallelism;
    } else {
        want = in->succeeded > 0 ? in->active : in->parallelism;
    }
    if (want < 0) want = 0;
    if (in->active > want) {
        out->remove = in->active - want;
        return;
    }
    int32_t diff = want - in->active;
    if (diff > JOB_BURST) diff = JOB_BURST;
    if (diff > 0 && in->failures_since_success > 0) {
        int64_t left =
            in->last_failure_ms + job_backoff_ms(in->failures_since_success) - in->now_ms;
        if (left > 0) {
            wake_at(out, left);
            return;
        }
    }
    out->create = diff;
}
