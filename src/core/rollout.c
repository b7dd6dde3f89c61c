/* rollout.c - pure decisions of the workload controllers (see rollout.h). */
#include "core/rollout.h"

size_t ro_batch_size(size_t prev, size_t initial, size_t remaining)
{
    size_t want = prev ? 2 * prev : (initial ? initial : 1);
    return want < remaining ? want : remaining;
}

int64_t ro_backoff_ms(int failures, int64_t base, int64_t max)
{
    if (failures < 1) return 0;
    int64_t d = base;
    for (int i = 1; i < failures && d < max; i++)
        d *= 2;
    return d < max ? d : max;
}
