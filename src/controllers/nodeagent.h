/* nodeagent.h - the stand-in kubelet for stored nodes (see nodeagent.c). */
#ifndef ALLOT_CONTROLLERS_NODEAGENT_H
#define ALLOT_CONTROLLERS_NODEAGENT_H

#include "store/store.h"

#include <stdint.h>

typedef struct node_agent node_agent;

node_agent *nodeagent_start(store *st, char *err, size_t errlen);
void nodeagent_stop(node_agent *a);

/* Go's time.ParseDuration for h, m, s and ms units ("1m30s", "1.5s");
 * milliseconds, or -1 when malformed. */
int64_t nodeagent_parse_duration_ms(const char *s);

#endif
