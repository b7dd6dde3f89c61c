/* scheduler_cmd.c - `allotd scheduler-config` (see scheduler_cmd.h). */
#include "server/scheduler_cmd.h"

#include "cluster/scheduler_config.h"
#include "server/cmd_io.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "allotd scheduler-config"

static void scheduler_usage(FILE *f)
{
    fputs("usage: allotd scheduler-config --kubeconfig FILE --extender-url URL --ca FILE\n"
          "                               [--client-cert FILE --client-key FILE]\n"
          "                               [--api-version v1beta1|v1]\n"
          "Print the KubeSchedulerConfiguration for kube-scheduler's --config with allot as\n"
          "its extender: FILE the kubeconfig kube-scheduler reads its cluster with, URL\n"
          "allot's extender (https://.../scheduler), --ca the CA of allot's serving\n"
          "certificate, --client-cert/--client-key the paths (on the scheduler's host) of\n"
          "the client certificate kube-scheduler presents (allotd tls writes scheduler.crt\n"
          "and scheduler.key; allot's extender refuses an anonymous caller).\n"
          "--api-version v1beta1 (the default) for Kubernetes 1.19 to 1.22, v1 for 1.25\n"
          "and later.\n",
          f);
}

/* Why each choice, above the YAML (kept with the configuration it
 * explains; docs/deferred-cluster.md says more). */
static const char HEADER[] =
    "# kube-scheduler's configuration with allot as its extender (allotd scheduler-config).\n"
    "# - managedResources: only pods requesting " SCHEDULER_MANAGED_RESOURCE " (allot gives it to\n"
    "#   the pods of deferred namespaces) are sent to allot; ignoredByScheduler keeps it out\n"
    "#   of node fit. With allot down only those pods wait; nothing else is affected.\n"
    "# - ignorable: false: a pod allot manages is never bound past its quota because\n"
    "#   allot could not be asked.\n"
    "# - nodeCacheCapable: true: allot decides quota, not nodes; node names suffice.\n"
    "# - bindVerb: allot charges the quota and binds the pod in one decision.\n"
    "# - tlsConfig.caData: allot's serving certificate is verified, never skipped;\n"
    "#   certFile/keyFile: the scheduler's client certificate (allot's extender binds\n"
    "#   pods, so it serves no anonymous caller).\n";

int scheduler_cmd_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"kubeconfig", required_argument, NULL, 'k'},
        {"extender-url", required_argument, NULL, 'u'},
        {"ca", required_argument, NULL, 'c'},
        {"api-version", required_argument, NULL, 'a'},
        {"client-cert", required_argument, NULL, 'C'},
        {"client-key", required_argument, NULL, 'K'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *kubeconfig = NULL, *url = NULL, *ca_path = NULL, *version = "v1beta1";
    const char *cert = NULL, *key = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "k:u:c:a:C:K:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'k':
            kubeconfig = optarg;
            break;
        case 'u':
            url = optarg;
            break;
        case 'c':
            ca_path = optarg;
            break;
        case 'a':
            version = optarg;
            break;
        case 'C':
            cert = optarg;
            break;
        case 'K':
            key = optarg;
            break;
        case 'h':
            scheduler_usage(stdout);
            return 0;
        default:
            scheduler_usage(stderr);
            return 2;
        }
    }
    if (optind < argc || !kubeconfig || !url || !ca_path) {
        scheduler_usage(stderr);
        return 2;
    }
    char err[256], *ca = NULL;
    json_t *cfg = NULL;
    int rc = 2;
    /* (the arguments first: a usage error says so before any file is read) */
    if (!(cfg = scheduler_config(version, kubeconfig, url, "", cert, key, err, sizeof err))) {
        fprintf(stderr, CMD ": %s\n", err);
        goto out;
    }
    json_decref(cfg);
    cfg = NULL;
    rc = 1;
    if (!(ca = ca_pem_read(CMD, ca_path))) goto out;
    if (!(cfg = scheduler_config(version, kubeconfig, url, ca, cert, key, err, sizeof err))) {
        fprintf(stderr, CMD ": %s\n", err);
        goto out;
    }
    rc = cmd_print_yaml(CMD, HEADER, cfg);
out:
    json_decref(cfg);
    free(ca);
    return rc;
}
