/* webhook_cmd.h - `allotd webhook-config [--ca FILE] [--namespace NS]`: the
 * ValidatingWebhookConfiguration of an in-cluster allotd (the Service
 * allot in NS) as YAML, built by cluster_webhook_config, the function
 * allotd uses when it installs the configuration itself, so the manifests
 * and the code never drift. Without --ca the caBundle is left out:
 * deploy/cluster/webhook.yaml is that output, and the CA is patched in
 * per cluster (`kubectl patch validatingwebhookconfiguration allot.dev -p
 * "$(allotd webhook-config --ca ca.crt)"`), which a later `kubectl apply
 * -k` leaves alone because the manifest does not name the field. */
#ifndef ALLOT_SERVER_WEBHOOK_CMD_H
#define ALLOT_SERVER_WEBHOOK_CMD_H

/* argv[0] is "webhook-config". Returns the process exit code: 0, 1 when the
 * CA cannot be read or is not a certificate, 2 on a usage error. */
int webhook_cmd_main(int argc, char **argv);

#endif
