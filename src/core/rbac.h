/* rbac.h - Kubernetes RBAC (rbac.authorization.k8s.io/v1): rule matching, the
 * authorizer over a snapshot of roles and bindings, aggregation, rules for
 * SelfSubjectRulesReview, escalation checks, upstream's 403 text and the
 * bootstrap roles.
 *
 * Upstream's behaviour, rewritten: rule matching is pkg/apis/rbac/v1
 * evaluation_helpers.go and plugin/pkg/auth/authorizer/rbac/rbac.go
 * (RuleAllows); the resolver and its reason texts pkg/registry/rbac/validation
 * rule.go; Covers component-helpers/auth/rbac/validation; the 403 text
 * apiserver's responsewriters ForbiddenStatusError with NewForbidden.
 *
 * A snapshot is built once from the four lists of stored objects and is then
 * read-only: the request path may share one between threads and swap in a new
 * one when RBAC objects change. Bindings are indexed by subject, so
 * rbac_authorize costs O(bindings naming this user or one of its groups), not
 * O(all bindings). ClusterRoles with an aggregationRule use the aggregated
 * rules (rbac_aggregate_rules), whatever their stored rules say.
 *
 * Decisions: allow, or deny. Upstream's "no opinion" is a deny here: there is
 * no other authorizer behind RBAC.
 *
 * Ownership: inputs (JSON, attribute strings) are borrowed and never kept; a
 * snapshot copies what it needs. rbac_rules lists own their strings
 * (rbac_rules_cleanup). Functions returning json_t * return a new reference.
 *
 * Pure: no I/O, no globals, no clock. Layer: core (uses core/selector,
 * core/strmap, core/dbuf only).
 */
#ifndef ALLOT_CORE_RBAC_H
#define ALLOT_CORE_RBAC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define RBAC_GROUP "rbac.authorization.k8s.io"
#define RBAC_VERSION "v1"
#define RBAC_SYSTEM_MASTERS "system:masters" /* user.SystemPrivilegedGroup */
#define RBAC_AUTHENTICATED "system:authenticated"
#define RBAC_UNAUTHENTICATED "system:unauthenticated"
#define RBAC_SA_PREFIX "system:serviceaccount:" /* + <ns>:<name> */
#define RBAC_SA_GROUP "system:serviceaccounts"  /* every SA; + ":<ns>" for one namespace's */
#define RBAC_MONITORING "system:monitoring"     /* user.MonitoringGroup */

/* ---- rules ---- */

typedef struct rbac_strv {
    char **v;
    size_t n;
} rbac_strv;

/* A PolicyRule. An empty list is an absent one (upstream's nil slice). */
typedef struct rbac_rule {
    rbac_strv verbs, api_groups, resources, resource_names, non_resource_urls;
} rbac_rule;

/* A growable list of rules; zero-initialised (or rbac_rules_init) is empty. */
typedef struct rbac_rules {
    rbac_rule *v;
    size_t n, cap;
} rbac_rules;

void rbac_rules_init(rbac_rules *r);
void rbac_rules_cleanup(rbac_rules *r);
/* Append the PolicyRules of a JSON array (non-string list members and
 * non-object rules are skipped: validation refuses them before they are
 * stored). Returns 0, or -1 on allocation failure. */
int rbac_rules_add_json(rbac_rules *r, const json_t *rules);
/* Append a deep copy of one rule. 0 or -1. */
int rbac_rules_add(rbac_rules *r, const rbac_rule *rule);
/* The PolicyRule JSON array (empty lists left out, as upstream's omitempty;
 * verbs always present). */
json_t *rbac_rules_to_json(const rbac_rules *r);

/* ---- request attributes ---- */

/* Who asks: the authenticated user.Info (name and groups; the authenticator
 * adds system:authenticated, and system:serviceaccounts[:<ns>] for service
 * accounts, see rbac_sa_username). */
typedef struct rbac_user {
    const char *name;
    const char *const *groups;
    size_t ngroups;
} rbac_user;

/* authorizer.Attributes. Strings may be NULL for "". `verb` is the
 * authorization verb (get list watch create update patch delete
 * deletecollection, or escalate bind impersonate ...). For a resource request
 * `ns` is "" at the cluster scope; for a non-resource request only `verb` and
 * `path` count. */
typedef struct rbac_attrs {
    rbac_user user;
    const char *verb;
    bool resource_request;
    const char *api_group, *resource, *subresource, *name, *ns;
    const char *path;
} rbac_attrs;

/* RuleAllows: verb ("*"), group ("*"), resource ("*", "res/sub", or "*" + "/sub"),
 * resourceNames (none = all) for resource requests; verb and
 * nonResourceURLs (exact, "*", or a prefix ending in "*") otherwise. */
bool rbac_rule_allows(const rbac_rule *rule, const rbac_attrs *a);

/* "system:serviceaccount:<ns>:<name>" into buf; 0, or -1 if it does not fit. */
int rbac_sa_username(const char *ns, const char *name, char *buf, size_t n);

/* ---- the authorizer ---- */

typedef enum { RBAC_DENY = 0, RBAC_ALLOW = 1 } rbac_decision;

typedef struct rbac_snapshot rbac_snapshot;

/* Build from JSON arrays of Role, ClusterRole, RoleBinding and
 * ClusterRoleBinding objects (any may be NULL: none). Bindings keep their
 * order in the arrays, cluster bindings before namespaced ones as upstream
 * visits them, so the binding an allow names is deterministic. NULL on
 * allocation failure only: malformed objects contribute nothing. */
rbac_snapshot *rbac_snapshot_new(const json_t *roles, const json_t *cluster_roles,
                                 const json_t *role_bindings, const json_t *cluster_role_bindings);
void rbac_snapshot_free(rbac_snapshot *s);
size_t rbac_snapshot_binding_count(const rbac_snapshot *s);

/* Authorize one request. `reason` (may be NULL) receives upstream's reason:
 *   allow: RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "u"
 *          RBAC: allowed by RoleBinding "b/ns" of Role "r" to ServiceAccount "sa/ns"
 *   deny:  "" or, when a binding's role is missing,
 *          RBAC: clusterrole.rbac.authorization.k8s.io "r" not found
 *          (several distinct errors: "RBAC: [e1, e2]"). */
rbac_decision rbac_authorize(const rbac_snapshot *s, const rbac_attrs *a, char *reason, size_t n);

/* RulesFor: every rule the user holds in `ns` ("" = cluster bindings only),
 * appended to `out` in visiting order. Resolution errors (missing roles) are
 * written to err (may be NULL) as upstream's aggregate text without the
 * "RBAC: " prefix; "" when none. Returns 0, or -1 on allocation failure. */
int rbac_rules_for(const rbac_snapshot *s, const rbac_user *u, const char *ns, rbac_rules *out,
                   char *err, size_t errn);

/* SelfSubjectRulesReview status from RulesFor's result: {resourceRules:
 * [{verbs, apiGroups, resources, resourceNames}], nonResourceRules: [{verbs,
 * nonResourceURLs}], incomplete: false[, evaluationError]}, a rule with both
 * resources and URLs appearing in both lists, as upstream's RulesFor. */
json_t *rbac_rules_review(const rbac_rules *rules, const char *evaluation_error);

/* ---- aggregation ---- */

/* The rules of ClusterRole `role` under its aggregationRule: the union (no
 * duplicates, first occurrence kept) of the rules of every other ClusterRole
 * in `cluster_roles` matched by one of its clusterRoleSelectors, selectors in
 * order and matched roles by name, as upstream's clusterrole aggregation
 * controller writes them. A matched role that is itself aggregated
 * contributes its own aggregated rules (upstream reaches the same result
 * after several passes of its controller). NULL when `role` has no
 * aggregationRule (its rules are its own). */
json_t *rbac_aggregate_rules(const json_t *role, const json_t *cluster_roles);

/* ---- escalation (pkg/registry/rbac/validation, component-helpers) ---- */

/* Covers: whether `owner` covers every rule of `requested`, comparing the
 * requested rules broken down into one verb / group / resource / name / URL
 * each. The uncovered pieces are appended to `uncovered` (may be NULL). */
bool rbac_covers(const rbac_rules *owner, const rbac_rules *requested, rbac_rules *uncovered);
/* BreakdownRule: append the single-valued pieces of `rule` to `out`. 0/-1. */
int rbac_breakdown_rule(const rbac_rule *rule, rbac_rules *out);
/* CompactString of one rule: {APIGroups:["a"], Resources:["r"], Verbs:["get"]} */
void rbac_rule_compact_string(const rbac_rule *rule, char *buf, size_t n);

/* May user `u`, acting in namespace `ns` ("" for cluster-scoped objects),
 * write this Role or ClusterRole (`role`, the object; `resource` "roles" or
 * "clusterroles")? Upstream's order: a member of system:masters may; so may a
 * holder of the `escalate` verb on `resource` named as the object; otherwise
 * the user's own rules in `ns` must cover the object's rules
 * (ConfirmNoEscalation), and an aggregationRule needs full authority (every
 * verb on everything). Returns 0 if allowed, else -1 with upstream's text:
 *   user "u" (groups=["g1" "g2"]) is attempting to grant RBAC permissions not
 *   currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["create"]}
 *   must have cluster-admin privileges to use the aggregationRule
 * The 403 wraps it: rbac_forbidden_text(resource, RBAC_GROUP, name, msg). */
int rbac_check_role_write(const rbac_snapshot *s, const rbac_user *u, const char *ns,
                          const char *resource, const json_t *role, char *msg, size_t n);

/* May user `u` write a RoleBinding (ns set) or ClusterRoleBinding (ns "")
 * with this roleRef? system:masters may; so may a holder of `bind` on the
 * referenced role (roles/clusterroles named roleRef.name, in `ns`); otherwise
 * the user must hold every rule of the referenced role in `ns`. 0 or -1 with
 * msg as for rbac_check_role_write (or the resolver's not-found text). */
int rbac_check_binding_write(const rbac_snapshot *s, const rbac_user *u, const char *ns,
                             const json_t *role_ref, char *msg, size_t n);

/* ---- 403 texts (responsewriters.ForbiddenStatusError + errors.NewForbidden) ---- */

/* The Status message of a denied request:
 *   pods "p" is forbidden: User "u" cannot get resource "pods" in API group "" in the namespace
 * "ns" pods is forbidden: User "u" cannot list resource "pods" in API group "" at the cluster scope
 *   pods "p" is forbidden: User "u" cannot create resource "pods/binding" in API group "" ...
 *   deployments.apps is forbidden: ... in API group "apps" ...
 *   forbidden: User "u" cannot get path "/metrics"
 * followed by ": <reason>" when `reason` is non-empty. Status details are
 * {group: api_group, kind: resource, name}. Truncated to fit, NUL-terminated. */
void rbac_forbidden_message(const rbac_attrs *a, const char *reason, char *buf, size_t n);
/* NewForbidden(group/resource, name, detail): "<res>[.<group>] [\"<name>\" ]is
 * forbidden: <detail>" ("forbidden: <detail>" without a resource). */
void rbac_forbidden_text(const char *resource, const char *group, const char *name,
                         const char *detail, char *buf, size_t n);

/* ---- bootstrap policy ---- */

/* The default ClusterRoles and ClusterRoleBindings (a JSON array of objects,
 * apiVersion rbac.authorization.k8s.io/v1, labelled
 * kubernetes.io/bootstrapping=rbac-defaults and annotated
 * rbac.authorization.kubernetes.io/autoupdate=true): upstream's bootstrap
 * policy (kube-apiserver 1.28+, bootstrappolicy/testdata/cluster-roles.yaml),
 * every role with upstream's exact rules whether or not allot serves the
 * resources they name, and the bindings upstream makes:
 *
 *   cluster-admin            everything; bound to group system:masters.
 *   admin / edit / view      aggregated from the roles labelled
 *                            rbac.authorization.k8s.io/aggregate-to-admin /
 *                            -edit / -view (edit is labelled aggregate-to-admin,
 *                            view aggregate-to-edit), rules filled in already:
 *                            the tenant roles, for use through RoleBindings.
 *   system:aggregate-to-admin / -edit / -view  upstream's pieces: pods and their
 *                            exec/attach/log, workloads (apps deployments,
 *                            replicasets, statefulsets, daemonsets; batch jobs,
 *                            cronjobs), autoscaling, policy, networking, ...
 *                            edit never writes resourcequotas, limitranges or
 *                            pods/binding; view never reads secrets.
 *   allot:aggregate-to-view  allot's piece: read Capsule's resourcepoolclaims
 *                            and customquotas (and their status).
 *   allot:aggregate-to-edit  allot's piece: write resourcepoolclaims. Never
 *                            resourcepools, customquotas, globalcustomquotas.
 *   system:monitoring        get /metrics, /metrics/slis, /livez, /readyz,
 *                            /healthz and the paths below the last three;
 *                            bound to group system:monitoring.
 *   system:discovery, system:basic-user (bound to system:authenticated),
 *   system:public-info-viewer (and system:unauthenticated), system:node
 *   (bound to group system:nodes: allot has no Node authorizer),
 *   system:kube-scheduler (plus read resourcequotas: deferred quota),
 *   system:kube-controller-manager, system:volume-scheduler, system:kube-dns,
 *   system:node-proxier, system:service-account-issuer-discovery (bound as
 *   upstream binds them), system:auth-delegator, system:heapster,
 *   system:kube-aggregator, system:kubelet-api-admin, system:node-bootstrapper,
 *   system:node-problem-detector, system:persistent-volume-provisioner and the
 *   six system:certificates.k8s.io:* roles (unbound, as upstream).
 *   system:controller:resourcequota-controller, namespace-controller,
 *   generic-garbage-collector: upstream's controller roles (the first with
 *   the Capsule statuses allot writes), bound to the service accounts of
 *   those names in kube-system. */
json_t *rbac_default_objects(void);

typedef enum {
    RBAC_RECONCILE_NONE,      /* the stored object already holds the default */
    RBAC_RECONCILE_UPDATE,    /* write the returned object */
    RBAC_RECONCILE_RECREATE,  /* a binding whose roleRef differs: delete, create the returned */
    RBAC_RECONCILE_PROTECTED, /* it lacks something, but is annotated autoupdate "false" */
    RBAC_RECONCILE_ERROR,     /* out of memory */
} rbac_reconcile_op;

/* Upstream's bootstrap reconciliation (pkg/registry/rbac/reconciliation,
 * without removing extra permissions) of a stored ClusterRole or
 * ClusterRoleBinding against its default `def`: the default's labels and
 * annotations the stored object lacks are added (stored values win); a role
 * gets each default rule it does not cover appended (whole: upstream
 * appends the uncovered pieces one verb and resource each, the same
 * authority), rules being left alone when both are aggregated (the
 * aggregation owns them), and the default's aggregationRule selectors
 * (none when the default has no aggregationRule); a binding gets the
 * default's subjects it lacks, and the default's roleRef (RECREATE). What
 * the stored object holds beyond the default is kept. Returns the object to
 * write (a new reference) for UPDATE and RECREATE, else NULL. */
json_t *rbac_reconcile(const json_t *stored, const json_t *def, rbac_reconcile_op *op);

#endif
