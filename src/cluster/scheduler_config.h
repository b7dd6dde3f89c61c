/* scheduler_config.h - the KubeSchedulerConfiguration that makes
 * kube-scheduler ask allot before it binds a pod of a deferred namespace
 * (issue 29; docs/deferred-cluster.md). Pure: no I/O.
 *
 * One extender, allot, over HTTPS at the URL given:
 *   - filterVerb "filter" and bindVerb "bind": allot fails every node for
 *     a pod its quota cannot take yet (the pod stays Pending with the
 *     quota's message, never a capacity reason), and charges the quota in
 *     the same decision that binds the pod;
 *   - managedResources: only pods that request the extended resource
 *     SCHEDULER_MANAGED_RESOURCE (which allot gives the pods of deferred
 *     namespaces) are sent to allot, and ignoredByScheduler keeps that
 *     resource out of node fit (kubelets drop extended resources their
 *     node does not advertise): with allot down, only those pods wait;
 *   - ignorable false: a pod allot manages is never bound past its quota
 *     because allot could not be asked;
 *   - nodeCacheCapable true: allot decides quota, not nodes, so the
 *     scheduler sends node names only, not whole Node objects;
 *   - tlsConfig.caData: the CA that signed allot's serving certificate, so
 *     the scheduler verifies it (never insecure); certFile and keyFile: the
 *     client certificate (signed by allot's CA, `allotd tls`) the
 *     scheduler is known to allot by: the extender serves no anonymous
 *     caller, since its bind binds pods.
 */
#ifndef ALLOT_CLUSTER_SCHEDULER_CONFIG_H
#define ALLOT_CLUSTER_SCHEDULER_CONFIG_H

#include <jansson.h>
#include <stddef.h>

#define SCHEDULER_MANAGED_RESOURCE "quota.allot.dev/deferred"
#define SCHEDULER_FILTER_VERB "filter"
#define SCHEDULER_BIND_VERB "bind"
#define SCHEDULER_HTTP_TIMEOUT "5s"

/* The configuration for kube-scheduler's --config, in api_version
 * ("v1beta1": Kubernetes 1.19-1.22; "v1": 1.25 and later), reading its
 * cluster through `kubeconfig` (a path on the scheduler's host) and asking
 * the extender at extender_url (https://...) whose serving certificate
 * ca_pem signed, with the client certificate in the files cert_file and
 * key_file (paths on the scheduler's host; both NULL: none). A new object,
 * or NULL with err (an unknown version, a URL that is not https, one of
 * the two files without the other). */
json_t *scheduler_config(const char *api_version, const char *kubeconfig, const char *extender_url,
                         const char *ca_pem, const char *cert_file, const char *key_file,
                         char *err, size_t errlen);

#endif
