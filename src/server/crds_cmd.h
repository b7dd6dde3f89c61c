/* crds_cmd.h - `allotd crds [--output yaml|json]`: the CustomResourceDefinitions
 * of allot's Capsule kinds (api/crd_gen.h) on stdout, for a cluster's own
 * API server (`allotd crds | kubectl apply -f -`; deploy/cluster/crds.yaml
 * is its output). */
#ifndef ALLOT_SERVER_CRDS_CMD_H
#define ALLOT_SERVER_CRDS_CMD_H

/* argv[0] is "crds". Returns the process exit code: 0, 1 when a definition
 * cannot be generated or written, 2 on a usage error. */
int crds_cmd_main(int argc, char **argv);

#endif
