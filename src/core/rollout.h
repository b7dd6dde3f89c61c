/* rollout.h - the pure decisions of the workload controllers, as upstream's
 * pkg/controller (controller_utils.go, replicaset, deployment/util) takes
 * them: slow-start batch sizes, backoff, int-or-percent fenceposts, the
 * rolling-update arithmetic, proportional scaling, the ranking of pods to
 * delete, and the pod-template hash.
 *
 * Pure: no I/O, no clock (time is passed in), no globals; the structs are
 * the caller's and nothing borrowed is kept.
 */
#ifndef ALLOT_CORE_ROLLOUT_H
#define ALLOT_CORE_ROLLOUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- batches and backoff ---- */

/* slowStartBatch's next batch: min(2 * prev, remaining), or
 * min(initial, remaining) for the first (prev 0). 0 when nothing remains. */
size_t ro_batch_size(size_t prev, size_t initial, size_t remaining);

/* Delay before retry number `failures` (>= 1): base * 2^(failures-1),
 * at most max. */
int64_t ro_backoff_ms(int failures, int64_t base, int64_t max);

#endif
