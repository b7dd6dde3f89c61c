/* rbac_kinds.h - Role, ClusterRole, RoleBinding and ClusterRoleBinding
 * (rbac.authorization.k8s.io/v1): the kinds.h hooks.
 *
 * Defaulting is upstream's pkg/apis/rbac/v1/defaults.go: a binding's
 * roleRef.apiGroup is rbac.authorization.k8s.io when empty, and a User or
 * Group subject's apiGroup too (a ServiceAccount's stays "").
 *
 * Validation is pkg/apis/rbac/validation with its field errors: rules need
 * verbs; nonResourceURLs only in ClusterRoles and never with resources;
 * resource rules need apiGroups and resources, and resourceNames only one
 * resource; an aggregationRule needs selectors that are valid label
 * selectors; roleRef.apiGroup must be rbac.authorization.k8s.io, roleRef.kind
 * Role or ClusterRole (ClusterRoleBindings: ClusterRole only), roleRef.name a
 * path segment, and roleRef never changes on update ("cannot change
 * roleRef"); subjects are User/Group (apiGroup rbac.authorization.k8s.io) or
 * ServiceAccount (apiGroup "", a DNS subdomain name, and in
 * ClusterRoleBindings a namespace). Object names are path segments
 * (API_NAME_PATH in the kind rows), checked with the rest of metadata by the
 * registry.
 *
 * Who may write these objects (escalation, bind) is core/rbac.h's
 * rbac_check_role_write / rbac_check_binding_write, for the request path.
 *
 * Causes are appended to `causes` (status.h); inputs are borrowed and, for
 * validation, never modified. Pure: no I/O.
 */
#ifndef ALLOT_API_RBAC_KINDS_H
#define ALLOT_API_RBAC_KINDS_H

#include <jansson.h>

#include "core/rbac.h" /* RBAC_GROUP, RBAC_VERSION */

void role_validate(const json_t *obj, const json_t *old, json_t *causes);
void clusterrole_validate(const json_t *obj, const json_t *old, json_t *causes);

void rolebinding_defaults(json_t *obj);
void rolebinding_validate(const json_t *obj, const json_t *old, json_t *causes);
void clusterrolebinding_defaults(json_t *obj);
void clusterrolebinding_validate(const json_t *obj, const json_t *old, json_t *causes);
/* Both binding kinds: roleRef is immutable. */
void rbac_binding_validate_update(const json_t *obj, const json_t *old, const char *sub,
                                  json_t *causes);

#endif
