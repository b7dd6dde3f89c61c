/* authz.h - authorization on the request path: upstream RBAC (core/rbac.h)
 * over the stored Roles, ClusterRoles, RoleBindings and ClusterRoleBindings,
 * and the review APIs that ask it (kubectl auth can-i, can-i --list,
 * whoami).
 *
 * The decision is taken on a snapshot of the four kinds. A write of any of
 * them bumps a generation when its transaction commits (an admission
 * plugin's end hook, so the request after the commit already sees it); the
 * next request that finds the snapshot older rebuilds it, once, and
 * requests in flight keep the snapshot they took (reference-counted).
 *
 * Members of system:masters are allowed everything without a lookup, as
 * upstream's privileged-group authorizer does. Role and binding writes are
 * checked for escalation (rbac_check_role_write / rbac_check_binding_write)
 * before the registry sees them.
 *
 * At start, authz_bootstrap writes upstream's default ClusterRoles and
 * ClusterRoleBindings that are missing (rbac_default_objects), and brings
 * back to the default those annotated rbac.authorization.kubernetes.io/
 * autoupdate: "true" whose rules or subjects were changed, as upstream's
 * bootstrap reconciliation does.
 */
#ifndef ALLOT_SERVER_AUTHZ_H
#define ALLOT_SERVER_AUTHZ_H

#include "api/kinds.h"
#include "core/rbac.h"
#include "server/server.h"

/* Register the admission plugin that tracks RBAC writes. Once, with the
 * other admission plugins (before the store opens). 0 or -1. */
int authz_init(void);
void authz_cleanup(void);

/* Decide on st's objects from now on, and write the missing or changed
 * bootstrap objects. Before serving. 0, or -1 with err set. */
int authz_bootstrap(store *st, char *err, size_t n);

/* The attributes of request rq (its user; verb and path for a non-resource
 * request). */
rbac_user authz_user(const req *rq);

/* Decide request rq (a: what it asks): 0 allowed, or -1 with the 403 set on
 * rs. The attributes, decision and reason are kept on rq for the audit log. */
int authz_request(req *rq, const rbac_attrs *a, resp *rs);

/* Decide attributes that are not the request's own (an impersonation's
 * checks): 0 allowed, or -1 with upstream's 403 set on rs. Nothing is
 * recorded on the request. */
int authz_check(const rbac_attrs *a, resp *rs);

/* A resource request's attributes from its method and route parts. */
void authz_resource_attrs(const req *rq, const api_kind *k, const char *ns, const char *name,
                          const char *sub, bool watch, rbac_attrs *a);

/* Escalation checks for writes of the RBAC kinds (a no-op for other kinds),
 * on the object as it would be stored: 0, or -1 with the 403 in e. */
int authz_check_write(const req *rq, const api_kind *k, const char *ns, const json_t *obj,
                      api_err *e);

/* A review's reply ({group}/v1 kind): the request's metadata and spec, and
 * `status` (taken). */
json_t *authz_review_reply(const json_t *in, const char *group, const char *kind, json_t *status);

/* The review APIs (POST only): authorization.k8s.io/v1 selfsubjectaccessreviews,
 * subjectaccessreviews, selfsubjectrulesreviews, localsubjectaccessreviews
 * (`ns` the namespace of the URL; NULL for the others) and
 * authentication.k8s.io/v1 selfsubjectreviews. True when the request was one
 * of them (rs filled). */
bool authz_serve_review(req *rq, resp *rs, const char *group, const char *version,
                        const char *resource, const char *ns);

#endif
