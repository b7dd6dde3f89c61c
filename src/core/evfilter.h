/* evfilter.h - client-go's EventSourceObjectSpamFilter: at most `burst`
 * Events about one object from one source, then one more per 1/qps seconds
 * (a token bucket per key; client-go's defaults are a burst of 25 and one
 * per 300 s). A controller making 10,000 pods for one ReplicaSet records 25
 * SuccessfulCreate Events, not 10,000, as on a real cluster.
 *
 * Keys are the caller's (source and object uid). At most `max_keys` buckets
 * are kept (client-go: an LRU of 4096); past that, every bucket is dropped
 * and counting starts over - a rarely reached bound, coarser than an LRU.
 * Time is the caller's (monotonic ms), so this is pure. Not thread-safe. */
#ifndef ALLOT_CORE_EVFILTER_H
#define ALLOT_CORE_EVFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVFILTER_BURST 25
#define EVFILTER_REFILL_MS (300 * 1000) /* one token per 300 s */
#define EVFILTER_MAX_KEYS 4096

typedef struct evfilter evfilter;

/* NULL when out of memory. */
evfilter *evfilter_new(int burst, int64_t refill_ms, size_t max_keys);
void evfilter_free(evfilter *f); /* NULL is fine */
/* Whether an Event for key may be recorded at time now (takes a token). */
bool evfilter_allow(evfilter *f, const char *key, int64_t now);

#endif
