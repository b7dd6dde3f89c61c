/* scheduler.h - the built-in scheduler (see scheduler.c). */
#ifndef ALLOT_CONTROLLERS_SCHEDULER_H
#define ALLOT_CONTROLLERS_SCHEDULER_H

#include "core/dbuf.h"
#include "store/store.h"

#include <stdint.h>

typedef struct scheduler scheduler;

scheduler *scheduler_start(store *st, char *err, size_t errlen);
void scheduler_stop(scheduler *s);

#define SCHED_NBUCKETS 9
extern const double sched_latency_buckets[SCHED_NBUCKETS];

/* Counters for /metrics (read under no lock: monotonic, approximate reads are fine). */
typedef struct sched_stats {
    unsigned long long scheduled, unschedulable, quota_blocked, errors, bind_rejected;
    unsigned long long latency[SCHED_NBUCKETS + 1];
    double latency_sum;
} sched_stats;
extern sched_stats scheduler_stats;

/* Scheduler metrics in Prometheus text format, appended to b. */
void scheduler_render_metrics(dbuf *b);

/* The text of top-level member `name` of the JSON object in json[0..len), as
 * stored (json_dumps output), found by scanning rather than parsing: 1 found
 * (*v, *vlen: the value's text), 0 absent, -1 the text does not scan or a key
 * holds an escape (json_dumps never escapes the keys looked for, so such a key
 * is reported as unknown rather than as absent). Exposed for tests. */
int sched_json_member(const char *json, size_t len, const char *name, const char **v, size_t *vlen);

#endif
