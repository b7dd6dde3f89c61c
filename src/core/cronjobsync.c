/* cronjobsync.c - a CronJob's decisions (see cronjobsync.h). */
#include "core/cronjobsync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cj_due_times(const cron_sched *s, const tz_zone *z, int64_t earliest, int64_t now, int64_t sds,
                  cj_due *out)
{
    memset(out, 0, sizeof *out);
    out->scheduled = -1;
    if (sds >= 0 && now - sds > earliest) earliest = now - sds;
    for (int64_t t = cron_next(s, z, earliest); t >= 0 && t <= now; t = cron_next(s, z, t)) {
        out->scheduled = t;
        if (++out->missed > CRONJOB_MISSED_MAX) {
            /* upstream stops counting here; the most recent one still runs */
            int64_t last = t;
            for (int64_t u = cron_next(s, z, t); u >= 0 && u <= now; u = cron_next(s, z, u))
                last = u;
            out->scheduled = last;
            break;
        }
    }
    out->next = cron_next(s, z, now);
    out->too_late = out->scheduled >= 0 && sds >= 0 && out->scheduled + sds < now;
}

cj_action cj_concurrency(const char *policy, size_t active)
{
    if (active == 0 || !policy) return CJ_RUN;
    if (!strcmp(policy, "Forbid")) return CJ_SKIP;
    if (!strcmp(policy, "Replace")) return CJ_REPLACE;
    return CJ_RUN;
}

void cj_job_name(const char *cronjob, int64_t scheduled, char *buf, size_t n)
{
    int64_t m = scheduled / 60 - (scheduled < 0 && scheduled % 60 ? 1 : 0);
    snprintf(buf, n, "%s-%lld", cronjob, (long long)m);
}

static int by_start(const void *a, const void *b)
{
    const cj_job *x = *(const cj_job *const *)a, *y = *(const cj_job *const *)b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

size_t cj_history(cj_job *jobs, size_t n, int32_t succeeded_limit, int32_t failed_limit)
{
    size_t marked = 0;
    cj_job **v = calloc(n ? n : 1, sizeof *v);
    if (!v) return 0;
    for (int pass = 0; pass < 2; pass++) {
        bool ok = pass == 0;
        int32_t limit = ok ? succeeded_limit : failed_limit;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (jobs[i].finished && jobs[i].succeeded == ok) v[k++] = &jobs[i];
        if (limit < 0 || k <= (size_t)limit) continue;
        qsort(v, k, sizeof *v, by_start);
        for (size_t i = 0; i < k - (size_t)limit; i++) {
            v[i]->remove = true;
            marked++;
        }
    }
    free(v);
    return marked;
}
