/* nodeagent.h - the stand-in kubelet for stored nodes (see nodeagent.c). */
#ifndef ALLOT_CONTROLLERS_NODEAGENT_H
#define ALLOT_CONTROLLERS_NODEAGENT_H

#include "store/store.h"

#include <stdint.h>

typedef struct node_agent node_agent;

/* How the agent runs pods. */
#define NODEAGENT_JOB_RUN_MS 10000 /* default of --node-agent-job-run-duration */
typedef struct nodeagent_opts {
    /* A pod a Job controls that has no allot.dev/run-duration annotation
     * succeeds this long after it started (`kubectl create job` cannot set
     * the annotation); 0: such pods run until stopped, as other pods. */
    int64_t job_run_ms;
} nodeagent_opts;

/* Start the agent's thread (o NULL: the defaults). */
node_agent *nodeagent_start(store *st, const nodeagent_opts *o, char *err, size_t errlen);
void nodeagent_stop(node_agent *a);

/* Simulated nodes for the agent to run pods on (a first run has no kubelet):
 * nodes NODEAGENT_SIM_PREFIX1 .. N with NODEAGENT_SIM_CPU cores, NODEAGENT_SIM_MEMORY
 * and NODEAGENT_SIM_PODS pods each, created through the registry where absent
 * (an existing node of that name is left as it is). 0, or -1 with err set. */
#define NODEAGENT_SIM_PREFIX "allot-node-"
#define NODEAGENT_SIM_CPU "4"
#define NODEAGENT_SIM_MEMORY "16Gi"
#define NODEAGENT_SIM_PODS "110"
#define NODEAGENT_SIM_MAX 1000
int nodeagent_ensure_nodes(store *st, int n, char *err, size_t errlen);

/* Go's time.ParseDuration for h, m, s and ms units ("1m30s", "1.5s");
 * milliseconds, or -1 when malformed. */
int64_t nodeagent_parse_duration_ms(const char *s);

#endif
