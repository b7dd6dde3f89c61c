/* webhook_cmd.c - `allotd webhook-config` (see webhook_cmd.h). */
#include "server/webhook_cmd.h"

#include "cluster/cluster.h"
#include "server/cmd_io.h"

#include <getopt.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void webhook_usage(FILE *f)
{
    fputs("usage: allotd webhook-config [--mutating] [--ca FILE] [--namespace NS]\n"
          "Print the ValidatingWebhookConfiguration allot.dev of an in-cluster allotd (the\n"
          "Service allot in NS, default allot-system) as YAML, with the CA certificate(s) in\n"
          "FILE as its caBundle; without --ca the caBundle is left out (deploy/cluster's\n"
          "manifest). --mutating: the MutatingWebhookConfiguration allot.dev instead (deferred\n"
          "quota's webhooks). Put the CA into an installed configuration with:\n"
          "  kubectl patch validatingwebhookconfiguration allot.dev \\\n"
          "      -p \"$(allotd webhook-config --ca ca.crt)\"\n"
          "  kubectl patch mutatingwebhookconfiguration allot.dev \\\n"
          "      -p \"$(allotd webhook-config --mutating --ca ca.crt)\"\n",
          f);
}

/* Leave every webhook's caBundle out (see webhook_cmd.h for why). */
static void drop_ca_bundles(json_t *cfg)
{
    size_t i;
    json_t *h;
    json_array_foreach(json_object_get(cfg, "webhooks"), i, h)
    {
        json_object_del(json_object_get(h, "clientConfig"), "caBundle");
    }
}

int webhook_cmd_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"ca", required_argument, NULL, 'c'},
        {"namespace", required_argument, NULL, 'n'},
        {"mutating", no_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *ca_path = NULL, *ns = "allot-system";
    bool mutating = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:n:mh", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            ca_path = optarg;
            break;
        case 'n':
            ns = optarg;
            break;
        case 'm':
            mutating = true;
            break;
        case 'h':
            webhook_usage(stdout);
            return 0;
        default:
            webhook_usage(stderr);
            return 2;
        }
    }
    if (optind < argc || !*ns) {
        webhook_usage(stderr);
        return 2;
    }
    char *ca = NULL;
    json_t *cfg = NULL;
    int rc = 1;
    if (ca_path && !(ca = ca_pem_read("allotd webhook-config", ca_path))) goto out;
    if (!(cfg = mutating ? cluster_mutating_webhook_config(NULL, ca, ns)
                         : cluster_webhook_config(NULL, ca, ns))) {
        fprintf(stderr, "allotd webhook-config: out of memory\n");
        goto out;
    }
    if (!ca) drop_ca_bundles(cfg);
    rc = cmd_print_yaml("allotd webhook-config", "", cfg);
out:
    json_decref(cfg);
    free(ca);
    return rc;
}
