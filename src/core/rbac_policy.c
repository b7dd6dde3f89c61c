/* rbac_policy.c - the bootstrap ClusterRoles and ClusterRoleBindings, and
 * their reconciliation with stored ones (see rbac.h).
 *
 * Upstream's plugin/pkg/auth/authorizer/rbac/bootstrappolicy (policy.go, as
 * its testdata/cluster-roles.yaml and cluster-role-bindings.yaml print it):
 * every cluster role kube-apiserver bootstraps, with upstream's rules as they
 * are, naming resources allot does not serve too (a role is a grant, not a
 * list of what is served; a cluster with more served later needs no new
 * roles). Three of upstream's controller roles with allot's additions, and
 * allot's own aggregated rules (allot:aggregate-to-view, -edit) for
 * Capsule's kinds, labelled as upstream labels its aggregated pieces.
 * Rules are data: each is a row of space-separated lists, sorted as
 * upstream's PolicyRuleBuilder sorts them, the token "core" standing for the
 * core group "".
 */
#include "core/rbac.h"

#include "core/jdump.h"

#include <stdio.h>
#include <string.h>

#define READ "get list watch"
#define WRITE "create delete deletecollection patch update"
#define READ_WRITE "create delete deletecollection get list patch update watch"
#define CAPSULE "capsule.clastix.io"
#define AGG_LABEL "rbac.authorization.k8s.io/aggregate-to-"
#define AUTOUPDATE "rbac.authorization.kubernetes.io/autoupdate"

typedef struct prule {
    const char *verbs, *groups, *resources, *names, *urls;
} prule;

/* Upstream's eventsRule(): create, patch, update events in "" and events.k8s.io. */
#define EVENTS                                                                                     \
    {                                                                                              \
        "create patch update", "core events.k8s.io", "events", NULL, NULL                          \
    }
#define END                                                                                        \
    {                                                                                              \
        NULL, NULL, NULL, NULL, NULL                                                               \
    }

static const prule cluster_admin[] = {
    {"*", "*", "*", NULL, NULL},
    {"*", NULL, NULL, NULL, "*"},
    END,
};
static const prule discovery[] = {
    {"get", NULL, NULL, NULL,
     "/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/"},
    END,
};
static const prule monitoring[] = {
    {"get", NULL, NULL, NULL,
     "/healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*"},
    END,
};
static const prule basic_user[] = {
    {"create", "authorization.k8s.io", "selfsubjectaccessreviews selfsubjectrulesreviews", NULL,
     NULL},
    {"create", "authentication.k8s.io", "selfsubjectreviews", NULL, NULL},
    END,
};
static const prule public_info[] = {
    {"get", NULL, NULL, NULL, "/healthz /livez /readyz /version /version/"},
    END,
};
static const prule to_admin[] = {
    {"create", "authorization.k8s.io", "localsubjectaccessreviews", NULL, NULL},
    {READ_WRITE, RBAC_GROUP, "rolebindings roles", NULL, NULL},
    END,
};
static const prule to_edit[] = {
    /* read on escalating resources */
    {READ, "core", "pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy", NULL,
     NULL},
    {"impersonate", "core", "serviceaccounts", NULL, NULL},
    {WRITE, "core", "pods pods/attach pods/exec pods/portforward pods/proxy", NULL, NULL},
    {"create", "core", "pods/eviction", NULL, NULL},
    {WRITE, "core",
     "configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale "
     "secrets serviceaccounts services services/proxy",
     NULL, NULL},
    {"create", "core", "serviceaccounts/token", NULL, NULL},
    {WRITE, "apps",
     "daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale "
     "statefulsets statefulsets/scale",
     NULL, NULL},
    {WRITE, "autoscaling", "horizontalpodautoscalers", NULL, NULL},
    {WRITE, "batch", "cronjobs jobs", NULL, NULL},
    {WRITE, "extensions",
     "daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies "
     "replicasets replicasets/scale replicationcontrollers/scale",
     NULL, NULL},
    {WRITE, "policy", "poddisruptionbudgets", NULL, NULL},
    {WRITE, "networking.k8s.io", "ingresses networkpolicies", NULL, NULL},
    {READ_WRITE, "coordination.k8s.io", "leases", NULL, NULL},
    END,
};
static const prule to_view[] = {
    {READ, "core",
     "configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods "
     "replicationcontrollers replicationcontrollers/scale serviceaccounts services "
     "services/status",
     NULL, NULL},
    {READ, "core",
     "bindings events limitranges namespaces/status pods/log pods/status "
     "replicationcontrollers/status resourcequotas resourcequotas/status",
     NULL, NULL},
    /* read access to namespaces at the namespace scope is read access to this one */
    {READ, "core", "namespaces", NULL, NULL},
    {READ, "discovery.k8s.io", "endpointslices", NULL, NULL},
    {READ, "apps",
     "controllerrevisions daemonsets daemonsets/status deployments deployments/scale "
     "deployments/status replicasets replicasets/scale replicasets/status statefulsets "
     "statefulsets/scale statefulsets/status",
     NULL, NULL},
    {READ, "autoscaling", "horizontalpodautoscalers horizontalpodautoscalers/status", NULL, NULL},
    {READ, "batch", "cronjobs cronjobs/status jobs jobs/status", NULL, NULL},
    {READ, "extensions",
     "daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses "
     "ingresses/status networkpolicies replicasets replicasets/scale replicasets/status "
     "replicationcontrollers/scale",
     NULL, NULL},
    {READ, "policy", "poddisruptionbudgets poddisruptionbudgets/status", NULL, NULL},
    {READ, "networking.k8s.io", "ingresses ingresses/status networkpolicies", NULL, NULL},
    END,
};
/* allot's: a tenant reads the claims and custom quotas that bound it (view),
 * and may claim from a pool (edit: a claim is the tenant's request against a
 * pool, as a PVC is against storage). The quotas, LimitRanges, pools and
 * custom quotas that bound a tenant stay read-only or unseen. */
static const prule allot_to_view[] = {
    {READ, CAPSULE, "customquotas customquotas/status resourcepoolclaims resourcepoolclaims/status",
     NULL, NULL},
    END,
};
static const prule allot_to_edit[] = {
    {WRITE, CAPSULE, "resourcepoolclaims", NULL, NULL},
    END,
};
static const prule auth_delegator[] = {
    {"create", "authentication.k8s.io", "tokenreviews", NULL, NULL},
    {"create", "authorization.k8s.io", "subjectaccessreviews", NULL, NULL},
    END,
};
#define CSR "certificates.k8s.io"
static const prule csr_nodeclient[] = {
    {"create", CSR, "certificatesigningrequests/nodeclient", NULL, NULL},
    END,
};
static const prule csr_selfnodeclient[] = {
    {"create", CSR, "certificatesigningrequests/selfnodeclient", NULL, NULL},
    END,
};
static const prule csr_client_approver[] = {
    {"approve", CSR, "signers", "kubernetes.io/kube-apiserver-client", NULL},
    END,
};
static const prule csr_client_kubelet_approver[] = {
    {"approve", CSR, "signers", "kubernetes.io/kube-apiserver-client-kubelet", NULL},
    END,
};
static const prule csr_serving_approver[] = {
    {"approve", CSR, "signers", "kubernetes.io/kubelet-serving", NULL},
    END,
};
static const prule csr_legacy_approver[] = {
    {"approve", CSR, "signers", "kubernetes.io/legacy-unknown", NULL},
    END,
};
static const prule heapster[] = {
    {READ, "core", "events namespaces nodes pods", NULL, NULL},
    {READ, "extensions", "deployments", NULL, NULL},
    END,
};
static const prule kube_aggregator[] = {
    {READ, "core", "endpoints services", NULL, NULL},
    END,
};
static const prule controller_manager[] = {
    EVENTS,
    {"create", "coordination.k8s.io", "leases", NULL, NULL},
    {"get update", "coordination.k8s.io", "leases", "kube-controller-manager", NULL},
    {"create", "core", "secrets serviceaccounts", NULL, NULL},
    {"delete", "core", "secrets", NULL, NULL},
    {"get", "core", "configmaps namespaces secrets serviceaccounts", NULL, NULL},
    {"update", "core", "secrets serviceaccounts", NULL, NULL},
    {"create", "authentication.k8s.io", "tokenreviews", NULL, NULL},
    {"create", "authorization.k8s.io", "subjectaccessreviews", NULL, NULL},
    {"list watch", "*", "*", NULL, NULL},
    {"create", "core", "serviceaccounts/token", NULL, NULL},
    END,
};
static const prule kube_dns[] = {
    {"list watch", "core", "endpoints services", NULL, NULL},
    END,
};
static const prule scheduler[] = {
    EVENTS,
    {"create", "coordination.k8s.io", "leases", NULL, NULL},
    {"get update", "coordination.k8s.io", "leases", "kube-scheduler", NULL},
    {READ, "core", "nodes", NULL, NULL},
    {"delete get list watch", "core", "pods", NULL, NULL},
    {"create", "core", "bindings pods/binding", NULL, NULL},
    {"patch update", "core", "pods/status", NULL, NULL},
    {READ, "core", "replicationcontrollers services", NULL, NULL},
    {READ, "apps extensions", "replicasets", NULL, NULL},
    {READ, "apps", "statefulsets", NULL, NULL},
    {READ, "policy", "poddisruptionbudgets", NULL, NULL},
    {READ, "core", "persistentvolumeclaims persistentvolumes", NULL, NULL},
    {"create", "authentication.k8s.io", "tokenreviews", NULL, NULL},
    {"create", "authorization.k8s.io", "subjectaccessreviews", NULL, NULL},
    {READ, "storage.k8s.io", "csinodes", NULL, NULL},
    {READ, "core", "namespaces", NULL, NULL},
    {READ, "storage.k8s.io", "csidrivers", NULL, NULL},
    {READ, "storage.k8s.io", "csistoragecapacities", NULL, NULL},
    /* allot's: under deferred quota the scheduler re-checks quota at bind. */
    {READ, "core", "resourcequotas", NULL, NULL},
    END,
};
static const prule kubelet_api_admin[] = {
    {READ, "core", "nodes", NULL, NULL},
    {"proxy", "core", "nodes", NULL, NULL},
    {"*", "core", "nodes/log nodes/metrics nodes/proxy nodes/stats", NULL, NULL},
    END,
};
static const prule node[] = {
    {"create", "authentication.k8s.io", "tokenreviews", NULL, NULL},
    {"create", "authorization.k8s.io", "localsubjectaccessreviews subjectaccessreviews", NULL,
     NULL},
    {READ, "core", "services", NULL, NULL},
    {"create get list watch", "core", "nodes", NULL, NULL},
    {"patch update", "core", "nodes/status", NULL, NULL},
    {"patch update", "core", "nodes", NULL, NULL},
    {"create patch update", "core", "events", NULL, NULL},
    {READ, "core", "pods", NULL, NULL},
    {"create delete", "core", "pods", NULL, NULL},
    {"patch update", "core", "pods/status", NULL, NULL},
    {"create", "core", "pods/eviction", NULL, NULL},
    {READ, "core", "configmaps secrets", NULL, NULL},
    {"get", "core", "persistentvolumeclaims persistentvolumes", NULL, NULL},
    {"get", "core", "endpoints", NULL, NULL},
    {"create get list watch", CSR, "certificatesigningrequests", NULL, NULL},
    {"create delete get patch update", "coordination.k8s.io", "leases", NULL, NULL},
    {"get", "storage.k8s.io", "volumeattachments", NULL, NULL},
    {"create", "core", "serviceaccounts/token", NULL, NULL},
    {"get patch update", "core", "persistentvolumeclaims/status", NULL, NULL},
    {READ, "storage.k8s.io", "csidrivers", NULL, NULL},
    {"create delete get patch update", "storage.k8s.io", "csinodes", NULL, NULL},
    {READ, "node.k8s.io", "runtimeclasses", NULL, NULL},
    END,
};
static const prule node_bootstrapper[] = {
    {"create get list watch", CSR, "certificatesigningrequests", NULL, NULL},
    END,
};
static const prule node_problem_detector[] = {
    {"get", "core", "nodes", NULL, NULL},
    {"patch", "core", "nodes/status", NULL, NULL},
    EVENTS,
    END,
};
static const prule node_proxier[] = {
    {"list watch", "core", "endpoints services", NULL, NULL},
    {READ, "core", "nodes", NULL, NULL},
    EVENTS,
    {"list watch", "discovery.k8s.io", "endpointslices", NULL, NULL},
    END,
};
static const prule pv_provisioner[] = {
    {"create delete get list watch", "core", "persistentvolumes", NULL, NULL},
    {"get list update watch", "core", "persistentvolumeclaims", NULL, NULL},
    {READ, "storage.k8s.io", "storageclasses", NULL, NULL},
    {"watch", "core", "events", NULL, NULL},
    EVENTS,
    END,
};
static const prule sa_issuer_discovery[] = {
    {"get", NULL, NULL, NULL, "/.well-known/openid-configuration /openid/v1/jwks"},
    END,
};
static const prule volume_scheduler[] = {
    {"get list patch update watch", "core", "persistentvolumes", NULL, NULL},
    {READ, "storage.k8s.io", "storageclasses", NULL, NULL},
    {"get list patch update watch", "core", "persistentvolumeclaims", NULL, NULL},
    END,
};
/* Upstream's controller roles (controller_policy.go) for the controllers
 * allot runs, with the Capsule statuses allot's quota controller writes. */
static const prule quota_controller[] = {
    {"list watch", "*", "*", NULL, NULL},
    {"update", "core", "resourcequotas/status", NULL, NULL},
    EVENTS,
    {"patch update", CAPSULE,
     "customquotas/status globalcustomquotas/status resourcepoolclaims/status "
     "resourcepools/status",
     NULL, NULL},
    END,
};
static const prule namespace_controller[] = {
    {"delete get list watch", "core", "namespaces", NULL, NULL},
    {"update", "core", "namespaces/finalize namespaces/status", NULL, NULL},
    {"delete deletecollection get list", "*", "*", NULL, NULL},
    END,
};
static const prule gc_controller[] = {
    {"delete get list patch update watch", "*", "*", NULL, NULL},
    EVENTS,
    END,
};

typedef struct prole {
    const char *name;
    const char *agg_label;  /* labelled aggregate-to-<this>, or NULL */
    const char *aggregates; /* aggregationRule selecting aggregate-to-<this>, or NULL */
    const prule *rules;     /* NULL for aggregated roles */
    /* Bound by a ClusterRoleBinding named as the role to these subjects
     * (space-separated); `bind` without subjects is upstream's empty binding. */
    bool bind;
    const char *groups, *users;
    const char *sa; /* "<ns>:<name>" */
} prole;

#define CTRL "system:controller:"
#define CERTS "system:certificates.k8s.io:"
static const prole roles[] = {
    {"cluster-admin", NULL, NULL, cluster_admin, true, RBAC_SYSTEM_MASTERS, NULL, NULL},
    {"system:discovery", NULL, NULL, discovery, true, RBAC_AUTHENTICATED, NULL, NULL},
    {"system:monitoring", NULL, NULL, monitoring, true, RBAC_MONITORING, NULL, NULL},
    {"system:basic-user", NULL, NULL, basic_user, true, RBAC_AUTHENTICATED, NULL, NULL},
    {"system:public-info-viewer", NULL, NULL, public_info, true,
     RBAC_AUTHENTICATED " " RBAC_UNAUTHENTICATED, NULL, NULL},
    {"admin", NULL, "admin", NULL, false, NULL, NULL, NULL},
    {"edit", "admin", "edit", NULL, false, NULL, NULL, NULL},
    {"view", "edit", "view", NULL, false, NULL, NULL, NULL},
    {"system:aggregate-to-admin", "admin", NULL, to_admin, false, NULL, NULL, NULL},
    {"system:aggregate-to-edit", "edit", NULL, to_edit, false, NULL, NULL, NULL},
    {"system:aggregate-to-view", "view", NULL, to_view, false, NULL, NULL, NULL},
    {"allot:aggregate-to-edit", "edit", NULL, allot_to_edit, false, NULL, NULL, NULL},
    {"allot:aggregate-to-view", "view", NULL, allot_to_view, false, NULL, NULL, NULL},
    {"system:heapster", NULL, NULL, heapster, false, NULL, NULL, NULL},
    /* Upstream binds no subject here (its Node authorizer authorizes
     * nodes); allot has none, so a node agent run apart needs the group. */
    {"system:node", NULL, NULL, node, true, "system:nodes", NULL, NULL},
    {"system:node-problem-detector", NULL, NULL, node_problem_detector, false, NULL, NULL, NULL},
    {"system:kubelet-api-admin", NULL, NULL, kubelet_api_admin, false, NULL, NULL, NULL},
    {"system:node-bootstrapper", NULL, NULL, node_bootstrapper, false, NULL, NULL, NULL},
    {"system:auth-delegator", NULL, NULL, auth_delegator, false, NULL, NULL, NULL},
    {"system:kube-aggregator", NULL, NULL, kube_aggregator, false, NULL, NULL, NULL},
    {"system:kube-controller-manager", NULL, NULL, controller_manager, true, NULL,
     "system:kube-controller-manager", NULL},
    {"system:kube-dns", NULL, NULL, kube_dns, true, NULL, NULL, "kube-system:kube-dns"},
    {"system:persistent-volume-provisioner", NULL, NULL, pv_provisioner, false, NULL, NULL, NULL},
    {CERTS "certificatesigningrequests:nodeclient", NULL, NULL, csr_nodeclient, false, NULL, NULL,
     NULL},
    {CERTS "certificatesigningrequests:selfnodeclient", NULL, NULL, csr_selfnodeclient, false, NULL,
     NULL, NULL},
    {"system:volume-scheduler", NULL, NULL, volume_scheduler, true, NULL, "system:kube-scheduler",
     NULL},
    {CERTS "legacy-unknown-approver", NULL, NULL, csr_legacy_approver, false, NULL, NULL, NULL},
    {CERTS "kubelet-serving-approver", NULL, NULL, csr_serving_approver, false, NULL, NULL, NULL},
    {CERTS "kube-apiserver-client-approver", NULL, NULL, csr_client_approver, false, NULL, NULL,
     NULL},
    {CERTS "kube-apiserver-client-kubelet-approver", NULL, NULL, csr_client_kubelet_approver, false,
     NULL, NULL, NULL},
    {"system:service-account-issuer-discovery", NULL, NULL, sa_issuer_discovery, true,
     RBAC_SA_GROUP, NULL, NULL},
    {"system:node-proxier", NULL, NULL, node_proxier, true, NULL, "system:kube-proxy", NULL},
    {"system:kube-scheduler", NULL, NULL, scheduler, true, NULL, "system:kube-scheduler", NULL},
    {CTRL "resourcequota-controller", NULL, NULL, quota_controller, true, NULL, NULL,
     "kube-system:resourcequota-controller"},
    {CTRL "namespace-controller", NULL, NULL, namespace_controller, true, NULL, NULL,
     "kube-system:namespace-controller"},
    {CTRL "generic-garbage-collector", NULL, NULL, gc_controller, true, NULL, NULL,
     "kube-system:generic-garbage-collector"},
};

/* Space-separated words as a JSON array ("core" is ""). */
static json_t *words(const char *s)
{
    json_t *a = json_array();
    char w[128];
    while (a && s && *s) {
        size_t n = strcspn(s, " ");
        if (n && n < sizeof w) {
            memcpy(w, s, n);
            w[n] = '\0';
            json_array_append_new(a, json_string(strcmp(w, "core") == 0 ? "" : w));
        }
        s += n + (s[n] == ' ');
    }
    return a;
}

static json_t *rule_json(const prule *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "verbs", words(r->verbs));
    if (r->groups) json_object_set_new(o, "apiGroups", words(r->groups));
    if (r->resources) json_object_set_new(o, "resources", words(r->resources));
    if (r->names) json_object_set_new(o, "resourceNames", words(r->names));
    if (r->urls) json_object_set_new(o, "nonResourceURLs", words(r->urls));
    return o;
}

static json_t *metadata(const char *name, const char *agg_label)
{
    json_t *m =
        json_pack("{s:s, s:{s:s}, s:{s:s}}", "name", name, "labels", "kubernetes.io/bootstrapping",
                  "rbac-defaults", "annotations", AUTOUPDATE, "true");
    char key[128];
    if (m && agg_label) {
        snprintf(key, sizeof key, AGG_LABEL "%s", agg_label);
        json_object_set_new(json_object_get(m, "labels"), key, json_string("true"));
    }
    return m;
}

static json_t *cluster_role(const prole *p)
{
    json_t *o =
        json_pack("{s:s, s:s, s:o, s:[]}", "apiVersion", RBAC_GROUP "/" RBAC_VERSION, "kind",
                  "ClusterRole", "metadata", metadata(p->name, p->agg_label), "rules");
    for (const prule *r = p->rules; o && r && r->verbs; r++)
        json_array_append_new(json_object_get(o, "rules"), rule_json(r));
    if (o && p->aggregates) {
        char key[128];
        snprintf(key, sizeof key, AGG_LABEL "%s", p->aggregates);
        json_object_set_new(
            o, "aggregationRule",
            json_pack("{s:[{s:{s:s}}]}", "clusterRoleSelectors", "matchLabels", key, "true"));
    }
    return o;
}

static void add_subjects(json_t *subjects, const char *kind, const char *names)
{
    json_t *w = words(names);
    size_t i;
    json_t *n;
    json_array_foreach(w, i, n)
    {
        json_array_append_new(subjects, json_pack("{s:s, s:s, s:O}", "kind", kind, "apiGroup",
                                                  RBAC_GROUP, "name", n));
    }
    json_decref(w);
}

static json_t *cluster_binding(const prole *p)
{
    json_t *subjects = json_array();
    add_subjects(subjects, "Group", p->groups);
    add_subjects(subjects, "User", p->users);
    if (p->sa) {
        char ns[64];
        const char *colon = strchr(p->sa, ':');
        snprintf(ns, sizeof ns, "%.*s", (int)(colon - p->sa), p->sa);
        json_array_append_new(subjects, json_pack("{s:s, s:s, s:s}", "kind", "ServiceAccount",
                                                  "name", colon + 1, "namespace", ns));
    }
    json_t *b =
        json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}}", "apiVersion", RBAC_GROUP "/" RBAC_VERSION,
                  "kind", "ClusterRoleBinding", "metadata", metadata(p->name, NULL), "roleRef",
                  "apiGroup", RBAC_GROUP, "kind", "ClusterRole", "name", p->name);
    if (b && json_array_size(subjects)) json_object_set(b, "subjects", subjects);
    json_decref(subjects);
    return b;
}

json_t *rbac_default_objects(void)
{
    size_t nroles = sizeof roles / sizeof *roles;
    json_t *croles = json_array(), *out = json_array();
    for (size_t i = 0; i < nroles; i++)
        json_array_append_new(croles, cluster_role(&roles[i]));
    /* Aggregated roles are written with their rules, as upstream's controller
     * would write them moments after start. */
    size_t i;
    json_t *r;
    json_array_foreach(croles, i, r)
    {
        json_t *rules = rbac_aggregate_rules(r, croles);
        if (rules) json_object_set_new(r, "rules", rules);
    }
    json_array_extend(out, croles);
    json_decref(croles);
    for (i = 0; i < nroles; i++)
        if (roles[i].bind) json_array_append_new(out, cluster_binding(&roles[i]));
    return out;
}

/* ---- reconciliation (pkg/registry/rbac/reconciliation) ---- */

/* merge(expected, existing): the keys of `def` the stored map lacks are
 * added; stored values win. True when something was added. */
static bool merge_map(json_t *meta, const json_t *def_meta, const char *key)
{
    const json_t *want = json_object_get(def_meta, key);
    json_t *have = json_object_get(meta, key);
    bool changed = false;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)want, k, v)
    {
        if (json_object_get(have, k)) continue;
        if (!json_is_object(have)) {
            json_object_set_new(meta, key, json_object());
            have = json_object_get(meta, key);
        }
        json_object_set(have, k, v);
        changed = true;
    }
    return changed;
}

/* Append to `rules` (the stored role's) each default rule they do not cover,
 * whole. True when one was appended. */
static bool add_missing_rules(json_t *rules, const json_t *def_rules, bool *oom)
{
    rbac_rules have, want;
    rbac_rules_init(&have);
    rbac_rules_init(&want);
    bool changed = false;
    if (rbac_rules_add_json(&have, rules) != 0) goto fail;
    size_t i;
    json_t *r;
    json_array_foreach(def_rules, i, r)
    {
        json_t *one = json_pack("[O]", r);
        rbac_rules_cleanup(&want);
        rbac_rules_init(&want);
        int rc = one ? rbac_rules_add_json(&want, one) : -1;
        json_decref(one);
        if (rc != 0) goto fail;
        if (want.n == 0 || rbac_covers(&have, &want, NULL)) continue;
        if (json_array_append(rules, r) != 0 || rbac_rules_add(&have, &want.v[0]) != 0) goto fail;
        changed = true;
    }
    rbac_rules_cleanup(&have);
    rbac_rules_cleanup(&want);
    return changed;
fail:
    *oom = true;
    rbac_rules_cleanup(&have);
    rbac_rules_cleanup(&want);
    return false;
}

/* The aggregationRule's selectors: those of the default missing from the
 * stored rule are appended; a rule the default does not have is removed. */
static bool reconcile_aggregation(json_t *obj, const json_t *def)
{
    const json_t *want =
        json_object_get(json_object_get(def, "aggregationRule"), "clusterRoleSelectors");
    json_t *agg = json_object_get(obj, "aggregationRule");
    if (!json_object_get(def, "aggregationRule")) {
        if (!agg) return false;
        json_object_del(obj, "aggregationRule");
        return true;
    }
    if (!json_is_object(agg)) {
        json_object_set_new(obj, "aggregationRule", json_object());
        agg = json_object_get(obj, "aggregationRule");
    }
    json_t *have = json_object_get(agg, "clusterRoleSelectors");
    if (!json_is_array(have)) {
        json_object_set_new(agg, "clusterRoleSelectors", json_array());
        have = json_object_get(agg, "clusterRoleSelectors");
    }
    bool changed = false;
    size_t i, j;
    json_t *w, *h;
    json_array_foreach(want, i, w)
    {
        bool found = false;
        json_array_foreach(have, j, h) found = found || json_equal(h, w);
        if (!found) {
            json_array_append(have, w);
            changed = true;
        }
    }
    return changed;
}

static bool same_subject(const json_t *a, const json_t *b)
{
    static const char *const keys[] = {"kind", "name", "namespace"};
    for (size_t i = 0; i < 3; i++) {
        const char *x = json_string_value(json_object_get(a, keys[i]));
        const char *y = json_string_value(json_object_get(b, keys[i]));
        if (strcmp(x ? x : "", y ? y : "")) return false;
    }
    return true;
}

static bool add_missing_subjects(json_t *obj, const json_t *def)
{
    const json_t *want = json_object_get(def, "subjects");
    json_t *have = json_object_get(obj, "subjects");
    bool changed = false;
    size_t i, j;
    json_t *w, *h;
    json_array_foreach(want, i, w)
    {
        bool found = false;
        json_array_foreach(have, j, h) found = found || same_subject(h, w);
        if (found) continue;
        if (!json_is_array(have)) {
            json_object_set_new(obj, "subjects", json_array());
            have = json_object_get(obj, "subjects");
        }
        json_array_append(have, w);
        changed = true;
    }
    return changed;
}

json_t *rbac_reconcile(const json_t *stored, const json_t *def, rbac_reconcile_op *op)
{
    *op = RBAC_RECONCILE_NONE;
    const char *kind = json_string_value(json_object_get(def, "kind"));
    bool binding = kind && strstr(kind, "Binding");
    json_t *out = jcopy(stored);
    json_t *meta = json_object_get(out, "metadata");
    const json_t *dmeta = json_object_get(def, "metadata");
    if (!out || !json_is_object(meta)) goto fail;
    bool changed = merge_map(meta, dmeta, "annotations");
    changed = merge_map(meta, dmeta, "labels") || changed;
    bool oom = false;
    if (binding) {
        const json_t *ref = json_object_get(def, "roleRef");
        if (!json_equal(json_object_get(out, "roleRef"), ref)) {
            json_object_set(out, "roleRef", (json_t *)ref);
            *op = RBAC_RECONCILE_RECREATE;
        }
        changed = add_missing_subjects(out, def) || changed;
    } else {
        /* Upstream compares no rules when both are aggregated: the
         * aggregation controller owns them. */
        bool aggregated =
            json_object_get(def, "aggregationRule") && json_object_get(stored, "aggregationRule");
        if (!aggregated) {
            if (!json_is_array(json_object_get(out, "rules")))
                json_object_set_new(out, "rules", json_array());
            changed = add_missing_rules(json_object_get(out, "rules"),
                                        json_object_get(def, "rules"), &oom) ||
                      changed;
        }
        changed = reconcile_aggregation(out, def) || changed;
    }
    if (oom) goto fail;
    if (*op == RBAC_RECONCILE_NONE && changed) *op = RBAC_RECONCILE_UPDATE;
    const char *au = json_string_value(json_object_get(
        json_object_get(json_object_get(stored, "metadata"), "annotations"), AUTOUPDATE));
    if (*op != RBAC_RECONCILE_NONE && au && !strcmp(au, "false")) *op = RBAC_RECONCILE_PROTECTED;
    if (*op == RBAC_RECONCILE_NONE || *op == RBAC_RECONCILE_PROTECTED) {
        json_decref(out);
        return NULL;
    }
    return out;
fail:
    json_decref(out);
    *op = RBAC_RECONCILE_ERROR;
    return NULL;
}
