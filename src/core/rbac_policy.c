/* rbac_policy.c - the bootstrap ClusterRoles and ClusterRoleBindings (see
 * rbac_default_objects in rbac.h).
 *
 * Upstream's plugin/pkg/auth/authorizer/rbac/bootstrappolicy (policy.go,
 * controller_policy.go), keeping only the resources allot serves (api/kinds.c)
 * and adding Capsule's. Rules are data: each is a row of space-separated
 * lists, the token "core" standing for the core group "". Where a role here
 * grants less than upstream's it is because allot does not serve the rest.
 */
#include "core/rbac.h"

#include <stdio.h>
#include <string.h>

#define READ "get list watch"
#define WRITE "create update patch delete deletecollection"
#define READ_WRITE READ " " WRITE
#define CAPSULE "capsule.clastix.io"
#define AGG_LABEL "rbac.authorization.k8s.io/aggregate-to-"

typedef struct prule {
    const char *verbs, *groups, *resources, *names, *urls;
} prule;

/* Upstream's eventsRule(): create, update, patch events in "" and events.k8s.io. */
#define EVENTS                                                                                     \
    {                                                                                              \
        "create update patch", "core events.k8s.io", "events", NULL, NULL                          \
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
     "/livez /readyz /healthz /version /version/ /openapi /openapi/* /api /api/* /apis /apis/*"},
    END,
};
static const prule basic_user[] = {
    {"create", "authorization.k8s.io", "selfsubjectaccessreviews selfsubjectrulesreviews", NULL,
     NULL},
    {"create", "authentication.k8s.io", "selfsubjectreviews", NULL, NULL}, /* (1.28+) */
    END,
};
static const prule public_info[] = {
    {"get", NULL, NULL, NULL, "/livez /readyz /healthz /version /version/"},
    END,
};
static const prule to_admin[] = {
    {"create", "authorization.k8s.io", "localsubjectaccessreviews", NULL, NULL},
    {READ_WRITE, RBAC_GROUP, "roles rolebindings", NULL, NULL},
    END,
};
static const prule to_edit[] = {
    /* read on escalating resources */
    {READ, "core", "secrets", NULL, NULL},
    {"impersonate", "core", "serviceaccounts", NULL, NULL},
    {WRITE, "core", "pods", NULL, NULL},
    {"create", "core", "pods/eviction", NULL, NULL},
    {WRITE, "core",
     "replicationcontrollers replicationcontrollers/scale serviceaccounts services "
     "persistentvolumeclaims configmaps secrets events",
     NULL, NULL},
    {"create", "core", "serviceaccounts/token", NULL, NULL},
    {WRITE, "apps", "deployments deployments/scale replicasets replicasets/scale", NULL, NULL},
    /* A claim is the tenant's request against a pool, as a PVC is against
     * storage; the quotas and pools that bound the tenant stay read-only. */
    {WRITE, CAPSULE, "resourcepoolclaims", NULL, NULL},
    END,
};
static const prule to_view[] = {
    {READ, "core",
     "pods replicationcontrollers replicationcontrollers/scale serviceaccounts services "
     "services/status endpoints persistentvolumeclaims persistentvolumeclaims/status configmaps",
     NULL, NULL},
    {READ, "core",
     "limitranges resourcequotas bindings events pods/status resourcequotas/status "
     "namespaces/status replicationcontrollers/status",
     NULL, NULL},
    /* read access to namespaces at the namespace scope is read access to this one */
    {READ, "core", "namespaces", NULL, NULL},
    {READ, "discovery.k8s.io", "endpointslices", NULL, NULL},
    {READ, "apps",
     "deployments deployments/status deployments/scale replicasets replicasets/status "
     "replicasets/scale",
     NULL, NULL},
    {READ, CAPSULE, "resourcepoolclaims resourcepoolclaims/status customquotas customquotas/status",
     NULL, NULL},
    END,
};
static const prule scheduler[] = {
    EVENTS,
    {READ, "core", "nodes namespaces resourcequotas", NULL, NULL},
    {"get list watch delete", "core", "pods", NULL, NULL},
    {"create", "core", "pods/binding bindings", NULL, NULL},
    {"patch update", "core", "pods/status", NULL, NULL},
    END,
};
static const prule node[] = {
    {"create get list watch update patch", "core", "nodes", NULL, NULL},
    {"update patch", "core", "nodes/status", NULL, NULL},
    EVENTS,
    {READ, "core", "pods", NULL, NULL},
    {"create delete", "core", "pods", NULL, NULL},
    {"update patch", "core", "pods/status", NULL, NULL},
    {"create", "core", "pods/eviction", NULL, NULL},
    END,
};
static const prule quota_controller[] = {
    {"list watch", "*", "*", NULL, NULL},
    {"update", "core", "resourcequotas/status", NULL, NULL},
    {"update patch", CAPSULE,
     "customquotas/status globalcustomquotas/status resourcepools/status "
     "resourcepoolclaims/status",
     NULL, NULL},
    EVENTS,
    END,
};
static const prule namespace_controller[] = {
    {"get list watch delete", "core", "namespaces", NULL, NULL},
    {"update", "core", "namespaces/finalize namespaces/status", NULL, NULL},
    {"get list delete deletecollection", "*", "*", NULL, NULL},
    END,
};
static const prule gc_controller[] = {
    {"get list watch patch update delete", "*", "*", NULL, NULL},
    EVENTS,
    END,
};

typedef struct prole {
    const char *name;
    const char *agg_label;  /* labelled aggregate-to-<this>, or NULL */
    const char *aggregates; /* aggregationRule selecting aggregate-to-<this>, or NULL */
    const prule *rules;     /* NULL for aggregated roles */
    const char *groups;     /* bound (one binding named as the role) to these groups */
    const char *users;
    const char *sa; /* "<ns>:<name>" */
} prole;

#define CTRL "system:controller:"
static const prole roles[] = {
    {"cluster-admin", NULL, NULL, cluster_admin, RBAC_SYSTEM_MASTERS, NULL, NULL},
    {"system:discovery", NULL, NULL, discovery, RBAC_AUTHENTICATED, NULL, NULL},
    {"system:basic-user", NULL, NULL, basic_user, RBAC_AUTHENTICATED, NULL, NULL},
    {"system:public-info-viewer", NULL, NULL, public_info,
     RBAC_AUTHENTICATED " " RBAC_UNAUTHENTICATED, NULL, NULL},
    {"admin", NULL, "admin", NULL, NULL, NULL, NULL},
    {"edit", "admin", "edit", NULL, NULL, NULL, NULL},
    {"view", "edit", "view", NULL, NULL, NULL, NULL},
    {"system:aggregate-to-admin", "admin", NULL, to_admin, NULL, NULL, NULL},
    {"system:aggregate-to-edit", "edit", NULL, to_edit, NULL, NULL, NULL},
    {"system:aggregate-to-view", "view", NULL, to_view, NULL, NULL, NULL},
    {"system:kube-scheduler", NULL, NULL, scheduler, NULL, "system:kube-scheduler", NULL},
    {"system:node", NULL, NULL, node, "system:nodes", NULL, NULL},
    {CTRL "resourcequota-controller", NULL, NULL, quota_controller, NULL, NULL,
     "kube-system:resourcequota-controller"},
    {CTRL "namespace-controller", NULL, NULL, namespace_controller, NULL, NULL,
     "kube-system:namespace-controller"},
    {CTRL "generic-garbage-collector", NULL, NULL, gc_controller, NULL, NULL,
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
    json_t *m = json_pack("{s:s, s:{s:s}, s:{s:s}}", "name", name, "labels",
                          "kubernetes.io/bootstrapping", "rbac-defaults", "annotations",
                          "rbac.authorization.kubernetes.io/autoupdate", "true");
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
    return json_pack("{s:s, s:s, s:o, s:{s:s, s:s, s:s}, s:o}", "apiVersion",
                     RBAC_GROUP "/" RBAC_VERSION, "kind", "ClusterRoleBinding", "metadata",
                     metadata(p->name, NULL), "roleRef", "apiGroup", RBAC_GROUP, "kind",
                     "ClusterRole", "name", p->name, "subjects", subjects);
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
        if (roles[i].groups || roles[i].users || roles[i].sa)
            json_array_append_new(out, cluster_binding(&roles[i]));
    return out;
}
