/* scheduler_config.c - kube-scheduler's configuration with allot as its
 * extender (see scheduler_config.h). */
#include "cluster/scheduler_config.h"

#include "core/b64.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *scheduler_config(const char *api_version, const char *kubeconfig, const char *extender_url,
                         const char *ca_pem, const char *cert_file, const char *key_file,
                         char *err, size_t errlen)
{
    const char *group = "kubescheduler.config.k8s.io";
    if (strcmp(api_version, "v1beta1") && strcmp(api_version, "v1")) {
        snprintf(err, errlen, "unknown --api-version %s (v1beta1 or v1)", api_version);
        return NULL;
    }
    if (strncmp(extender_url, "https://", 8) || !extender_url[8]) {
        snprintf(err, errlen, "the extender URL must be https:// (got %s)", extender_url);
        return NULL;
    }
    if (!cert_file != !key_file || (cert_file && (!*cert_file || !*key_file))) {
        snprintf(err, errlen, "a client certificate needs both its files (--client-cert, "
                              "--client-key)");
        return NULL;
    }
    if (!*kubeconfig) {
        snprintf(err, errlen, "no kubeconfig");
        return NULL;
    }
    size_t calen = strlen(ca_pem);
    char *ca64 = malloc(b64_encoded_len(calen) + 1);
    if (!ca64) return snprintf(err, errlen, "out of memory"), NULL;
    b64_encode((const unsigned char *)ca_pem, calen, ca64);
    char av[64];
    snprintf(av, sizeof av, "%s/%s", group, api_version);
    json_t *cfg = json_pack(
        "{s:s, s:s, s:{s:s}, s:[{s:s, s:s, s:s, s:b, s:{s:s}, s:s, s:b, s:[{s:s, s:b}], s:b}]}",
        "apiVersion", av, "kind", "KubeSchedulerConfiguration", "clientConnection", "kubeconfig",
        kubeconfig, "extenders", "urlPrefix", extender_url, "filterVerb", SCHEDULER_FILTER_VERB,
        "bindVerb", SCHEDULER_BIND_VERB, "enableHTTPS", 1, "tlsConfig", "caData", ca64,
        "httpTimeout", SCHEDULER_HTTP_TIMEOUT, "nodeCacheCapable", 1, "managedResources", "name",
        SCHEDULER_MANAGED_RESOURCE, "ignoredByScheduler", 1, "ignorable", 0);
    free(ca64);
    /* who the scheduler is to allot: allot's extender serves no anonymous
     * caller (the bind binds pods) */
    json_t *tls = json_object_get(json_array_get(json_object_get(cfg, "extenders"), 0),
                                  "tlsConfig");
    if (tls && cert_file &&
        (json_object_set_new(tls, "certFile", json_string(cert_file)) != 0 ||
         json_object_set_new(tls, "keyFile", json_string(key_file)) != 0)) {
        json_decref(cfg);
        cfg = NULL;
    }
    if (!cfg) snprintf(err, errlen, "out of memory");
    return cfg;
}
