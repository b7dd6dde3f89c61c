/* metrics.h - Prometheus metrics for allotd (text exposition format 0.0.4). */
#ifndef ALLOT_SERVER_METRICS_H
#define ALLOT_SERVER_METRICS_H

#include "store/store.h"

#include <stddef.h>

typedef struct metrics metrics;

metrics *metrics_new(void);
void metrics_free(metrics *m);
/* One finished request. */
void metrics_request(metrics *m, const char *verb, const char *resource, int code, double seconds);
void metrics_watch_delta(metrics *m, int delta);
long metrics_watches(metrics *m); /* watch streams open now */
/* The whole exposition (caller frees). */
char *metrics_render(metrics *m, store *st, size_t *len);

#endif
