/* scheduler_cmd.h - `allotd scheduler-config --kubeconfig FILE
 * --extender-url URL --ca FILE [--api-version v1beta1|v1]`: the
 * KubeSchedulerConfiguration for kube-scheduler's --config with allot as
 * its extender (cluster/scheduler_config.h says what is chosen and why),
 * as YAML, the choices explained in comments above it. */
#ifndef ALLOT_SERVER_SCHEDULER_CMD_H
#define ALLOT_SERVER_SCHEDULER_CMD_H

/* argv[0] is "scheduler-config". Returns the process exit code: 0, 1 when
 * the CA cannot be read or is not a certificate, 2 on a usage error. */
int scheduler_cmd_main(int argc, char **argv);

#endif
