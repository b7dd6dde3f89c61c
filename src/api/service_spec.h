/* service_spec.h - how a Service's linked fields are completed around the
 * allocation of its cluster IPs and node ports.
 *
 * Upstream's Service REST storage (pkg/registry/core/service/storage:
 * rest.go's beginCreate/beginUpdate, alloc.go's initIPFamilyFields) and
 * strategy (dropTypeDependentFields) infer what a client meant when it left
 * some of clusterIP, clusterIPs, ipFamilies, ipFamilyPolicy and the node
 * ports out: a PUT of the YAML a Service was created from keeps what the
 * server allocated, an old client's singular clusterIP fills the plural, a
 * type change away from NodePort drops the ports it no longer needs. This
 * module is those rules, for a cluster with one IP family (its
 * --service-cluster-ip-range); the allocation itself, which needs the
 * cluster's books, is registry/svc_alloc.c's.
 *
 * Pure: objects in, objects changed in place, errors as Status (422 with
 * upstream's field errors). `old` is NULL on create.
 */
#ifndef ALLOT_API_SERVICE_SPEC_H
#define ALLOT_API_SERVICE_SPEC_H

#include "api/status.h"

#include <jansson.h>
#include <stdbool.h>

/* What a Service's type asks for. */
bool svcspec_needs_cluster_ip(const json_t *svc); /* every type but ExternalName */
bool svcspec_needs_node_ports(const json_t *svc); /* NodePort, LoadBalancer */
bool svcspec_needs_hc_node_port(
    const json_t *svc); /* LoadBalancer with externalTrafficPolicy Local */
bool svcspec_allocates_node_ports(const json_t *svc); /* NodePort, or LoadBalancer unless
                                                         allocateLoadBalancerNodePorts is false */
/* spec.clusterIPs[0] is "None". */
bool svcspec_headless(const json_t *svc);

/* normalizeClusterIPs: clusterIP and clusterIPs brought in step. */
void svcspec_normalize_ips(json_t *svc, const json_t *old);

/* patchAllocatedValues (update): the clusterIP(s), node ports and health
 * check node port the client left out are taken from the stored Service. */
void svcspec_patch_allocated(json_t *svc, const json_t *old);

/* initIPFamilyFields: ipFamilyPolicy and ipFamilies defaulted (or, on an
 * update, adopted) for a cluster serving `family` ("IPv4" or "IPv6") alone,
 * and checked against it. 0, or -1 with a 422 in e. */
int svcspec_init_families(json_t *svc, const json_t *old, const char *family, api_err *e);

/* dropTypeDependentFields (update): what the new type no longer uses, when
 * the client did not change it too: cluster IPs and IP families (to
 * ExternalName), node ports (to ClusterIP or ExternalName), the health check
 * node port, allocateLoadBalancerNodePorts, loadBalancerClass,
 * externalTrafficPolicy, and a load balancer's status. */
void svcspec_drop_type_dependent(json_t *svc, const json_t *old);

#endif
