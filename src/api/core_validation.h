/* core_validation.h - upstream validation of Service, PersistentVolumeClaim,
 * Namespace and Node, and the JSON shape checks the kind validators share.
 *
 * Ports the parts of pkg/apis/core/validation/validation.go that allot can
 * honour: ValidateService / ValidateServiceUpdate, ValidatePersistentVolumeClaim
 * / ...Update / ...StatusUpdate, ValidateNamespace / ...Update / ...StatusUpdate
 * / ...FinalizeUpdate and ValidateNode / ValidateNodeUpdate, with upstream's
 * field paths and texts. Rules that only hold after a default allot does not
 * apply (a Service's allocated clusterIP, nodePorts, healthCheckNodePort,
 * externalTrafficPolicy, allocateLoadBalancerNodePorts, sessionAffinityConfig)
 * are checked when the field is given and not required when it is absent.
 *
 * Upstream decodes every body into Go types first, so a field of the wrong JSON
 * type or a quantity that does not parse never reaches its validation (400).
 * Here they are causes like any other (422), so that nothing a client sends can
 * reach code that assumes the shape: see cv_type_check and cv_quantity.
 *
 * Inputs are borrowed and never modified; causes are appended to a JSON array
 * the caller owns (status.h ferr_add). Functions return the causes they added.
 */
#ifndef ALLOT_API_CORE_VALIDATION_H
#define ALLOT_API_CORE_VALIDATION_H

#include "core/quantity.h"

#include <jansson.h>
#include <stdbool.h>

/* The JSON type a field must have. */
typedef enum { CV_OBJECT, CV_ARRAY, CV_STRING, CV_INTEGER, CV_BOOLEAN } cv_type;

/* allot only (upstream fails decoding): when `v` is present and not null but
 * of another type, one FieldValueTypeInvalid cause at `field`, e.g.
 *   spec.hard: Invalid value: ["cpu"]: must be of type object
 * Returns 1 then, else 0. */
int cv_type_check(const json_t *v, cv_type t, const char *field, json_t *causes);

/* Parse a quantity (status.h: string, number or null). On failure one Invalid
 * cause with resource.Quantity's text ("quantities must match the regular
 * expression ...") and 1; else *out is set and 0. `out` may be NULL. */
int cv_quantity(const json_t *v, const char *field, qty *out, json_t *causes);

/* The ResourceLists the quota evaluators read from an object of
 * group/resource (pods: every container's, init container's and pod-level
 * requests/limits, overhead, container statuses' resources and
 * allocatedResources; PVCs: spec.resources.requests, status.allocatedResources):
 * wrong types and quantities that do not parse, as causes. What admission
 * reports when an object's quota usage cannot be evaluated. */
int cv_quota_quantities(const char *group, const char *resource, const json_t *obj, json_t *causes);

/* ---- the kinds.h hooks ----
 * `validate` runs on create (old NULL) and on every update; `validate_update`
 * on every update, told the subresource written ("" for the object). */
void service_validate(const json_t *obj, const json_t *old, json_t *causes);
void service_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes);
/* ValidateServiceClusterIPsRelatedFields alone (clusterIP and clusterIPs in
 * step, the IPs, ipFamilies, ipFamilyPolicy): what the cluster IP allocator
 * checks before it reads them. Returns the causes added. */
int service_validate_cluster_ips(const json_t *obj, json_t *causes);
void endpoints_validate(const json_t *obj, const json_t *old, json_t *causes);
void pvc_validate(const json_t *obj, const json_t *old, json_t *causes);
void pvc_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes);
void namespace_validate(const json_t *obj, const json_t *old, json_t *causes);
void namespace_validate_update(const json_t *obj, const json_t *old, const char *sub,
                               json_t *causes);
void node_validate(const json_t *obj, const json_t *old, json_t *causes);
void node_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes);

/* ---- network syntax (k8s.io/utils/net, the "sloppy" parsers) ---- */

/* ParseIPSloppy: dotted IPv4 (leading zeros allowed) or IPv6. Returns 4 or 6
 * (an IPv4-mapped IPv6 address is 4, as Go's To4 says), 0 when invalid.
 * `addr` (16 bytes, may be NULL) receives the address, IPv4 as ::ffff:a.b.c.d. */
int cv_parse_ip(const char *s, unsigned char *addr);
/* ParseCIDRSloppy: "<ip>/<prefix>". Returns the family (4 or 6) or 0. */
int cv_parse_cidr(const char *s);
/* ValidateEndpointIP for a valid address of an Endpoints or EndpointSlice:
 * unspecified, link-local and link-local multicast refused, with upstream's
 * texts; loopback accepted (allotd's own default/kubernetes names 127.0.0.1
 * when it serves there; docs/decisions.md). Returns the causes added. */
int cv_endpoint_ip(const char *ip, const char *field, json_t *causes);

#endif
