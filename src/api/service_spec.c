/* service_spec.c - a Service's linked fields around allocation (see
 * service_spec.h). Each function is named after the upstream function it
 * follows; comments say where allot's single-family cluster makes a branch
 * of it moot. */
#include "api/service_spec.h"
#include "core/jdump.h"

#include "api/core_validation.h"
#include "api/validation.h"
#include "core/jget.h"

#include <stdio.h>
#include <string.h>

#define POLICY_SINGLE "SingleStack"
#define POLICY_PREFER "PreferDualStack"
#define POLICY_REQUIRE "RequireDualStack"

static json_t *spec_of(json_t *svc)
{
    json_t *spec = json_object_get(svc, "spec");
    if (!json_is_object(spec)) {
        spec = json_object();
        json_object_set_new(svc, "spec", spec);
    }
    return spec;
}

static const char *type_of(const json_t *svc)
{
    const char *t = jtext(svc, "spec", "type");
    return *t ? t : "ClusterIP";
}

static bool is_type(const json_t *svc, const char *t)
{
    return strcmp(type_of(svc), t) == 0;
}

bool svcspec_needs_cluster_ip(const json_t *svc)
{
    return !is_type(svc, "ExternalName");
}

bool svcspec_needs_node_ports(const json_t *svc)
{
    return is_type(svc, "NodePort") || is_type(svc, "LoadBalancer");
}

bool svcspec_needs_hc_node_port(const json_t *svc)
{
    return is_type(svc, "LoadBalancer") &&
           strcmp(jtext(svc, "spec", "externalTrafficPolicy"), "Local") == 0;
}

bool svcspec_allocates_node_ports(const json_t *svc)
{
    if (is_type(svc, "NodePort")) return true;
    /* Defaulted to true for LoadBalancers; absent only in objects stored
     * before allot defaulted it, which upstream would have defaulted. */
    return is_type(svc, "LoadBalancer") &&
           !json_is_false(jget(svc, "spec", "allocateLoadBalancerNodePorts"));
}

bool svcspec_headless(const json_t *svc)
{
    const char *first = json_string_value(json_array_get(jget(svc, "spec", "clusterIPs"), 0));
    return first ? strcmp(first, "None") == 0
                 : strcmp(jtext(svc, "spec", "clusterIP"), "None") == 0;
}

/* ---- small helpers ---- */

static size_t len_of(const json_t *svc, const char *field)
{
    return json_array_size(jget(svc, "spec", field));
}

/* Arrays equal, an absent one as empty (Go's nil and empty slices). */
static bool same_list(const json_t *a, const json_t *b)
{
    if (!json_array_size(a) && !json_array_size(b)) return true;
    return json_equal((json_t *)a, (json_t *)b);
}

static bool same_field(const json_t *a, const json_t *b, const char *field)
{
    return same_list(jget(a, "spec", field), jget(b, "spec", field));
}

static bool same_string(const json_t *a, const json_t *b, const char *field)
{
    return strcmp(jtext(a, "spec", field), jtext(b, "spec", field)) == 0;
}

static void set_list_copy(json_t *spec, const char *field, const json_t *from)
{
    json_object_set_new(spec, field, jcopy(from));
}

static json_int_t port_node_port(const json_t *p)
{
    return json_integer_value(json_object_get(p, "nodePort"));
}

/* Whether `list` (a service's ports) has node port np (non-zero). */
static bool has_node_port(const json_t *svc, json_int_t np)
{
    size_t i;
    const json_t *p;
    json_array_foreach(jget(svc, "spec", "ports"), i,
                       p) if (np && port_node_port(p) == np) return true;
    return false;
}

/* ---- normalizeClusterIPs ---- */

void svcspec_normalize_ips(json_t *svc, const json_t *old)
{
    json_t *spec = spec_of(svc);
    const char *ip = jtext(spec, "clusterIP");
    if (!old) {
        /* An old client's singular fills the plural; both empty are allocated. */
        if (*ip && !json_array_size(json_object_get(spec, "clusterIPs")))
            json_object_set_new(spec, "clusterIPs", json_pack("[s]", ip));
        return;
    }
    const char *oldip = jtext(old, "spec", "clusterIP");
    /* An old client patching other fields left the plural out. */
    if (len_of(old, "clusterIPs") && !json_array_size(json_object_get(spec, "clusterIPs")) &&
        strcmp(oldip, ip) == 0)
        set_list_copy(spec, "clusterIPs", jget(old, "spec", "clusterIPs"));
    if (strcmp(oldip, ip) == 0) return;
    bool same_plural = same_field(old, svc, "clusterIPs");
    if (*oldip && !*ip) {
        if (same_plural) json_object_del(spec, "clusterIPs"); /* cleared on their behalf */
    } else if (same_plural) {
        json_object_set_new(spec, "clusterIPs", json_pack("[s]", ip));
    }
}

/* ---- patchAllocatedValues ---- */

/* Node ports the client left out, by port name, unless another port of the
 * new service already uses the stored value. */
static void patch_node_ports(json_t *svc, const json_t *old)
{
    size_t i, j;
    json_t *p;
    const json_t *q;
    json_array_foreach(jget(svc, "spec", "ports"), i, p)
    {
        if (!json_is_object(p) || port_node_port(p)) continue;
        const char *name = jtext(p, "name");
        json_int_t was = 0;
        json_array_foreach(jget(old, "spec", "ports"), j, q) if (!strcmp(jtext(q, "name"), name))
            was = port_node_port(q); /* the last of a name, as upstream's map */
        /* upstream's `used`: values both the old and the new service hold */
        if (was && !(has_node_port(old, was) && has_node_port(svc, was)))
            json_object_set_new(p, "nodePort", json_integer(was));
    }
}

void svcspec_patch_allocated(json_t *svc, const json_t *old)
{
    json_t *spec = spec_of(svc);
    if (svcspec_needs_cluster_ip(old) && svcspec_needs_cluster_ip(svc)) {
        const char *was = jtext(old, "spec", "clusterIP");
        if (!*jtext(spec, "clusterIP") && *was)
            json_object_set_new(spec, "clusterIP", json_string(was));
        if (!json_array_size(json_object_get(spec, "clusterIPs")) && len_of(old, "clusterIPs"))
            set_list_copy(spec, "clusterIPs", jget(old, "spec", "clusterIPs"));
    }
    if (svcspec_needs_node_ports(old) && svcspec_needs_node_ports(svc)) patch_node_ports(svc, old);
    json_int_t hc = json_integer_value(jget(old, "spec", "healthCheckNodePort"));
    if (svcspec_needs_hc_node_port(old) && svcspec_needs_hc_node_port(svc) && hc &&
        !json_integer_value(json_object_get(spec, "healthCheckNodePort")))
        json_object_set_new(spec, "healthCheckNodePort", json_integer(hc));
}

/* ---- initIPFamilyFields ---- */

/* isMatchingPreferDualStackClusterIPFields: an update of a PreferDualStack
 * service that changes none of these fields is left as it is. */
static bool matching_prefer_dual(const json_t *svc, const json_t *old)
{
    return old && !strcmp(type_of(svc), type_of(old)) && same_field(old, svc, "clusterIPs") &&
           same_field(old, svc, "ipFamilies") && same_string(old, svc, "ipFamilyPolicy") &&
           !strcmp(jtext(svc, "spec", "ipFamilyPolicy"), POLICY_PREFER);
}

static const char *family_of_ip(const char *ip)
{
    return cv_parse_ip(ip, NULL) == 6 ? "IPv6" : "IPv4";
}

static const char *other_family(const char *f)
{
    return strcmp(f, "IPv4") == 0 ? "IPv6" : "IPv4";
}

/* The policy a service without one gets. */
static void default_policy(json_t *spec, const json_t *old)
{
    const char *was = old ? jstr(old, "spec", "ipFamilyPolicy") : NULL;
    const char *pol = POLICY_SINGLE;
    if (was) /* an update keeps the stored policy */
        pol = was;
    else if (!strcmp(jtext(spec, "clusterIP"), "None") &&
             !json_object_size(json_object_get(spec, "selector")))
        pol = POLICY_REQUIRE; /* headless and selectorless: either family's endpoints */
    json_object_set_new(spec, "ipFamilyPolicy", json_string(pol));
}

static void truncate_list(json_t *spec, const char *field)
{
    json_t *l = json_object_get(spec, field);
    while (json_array_size(l) > 1)
        json_array_remove(l, json_array_size(l) - 1);
}

/* Update-only: single-stack trims what it may, other policies may not shrink. */
static void policy_on_update(json_t *spec, json_t *svc, const json_t *old, json_t *causes)
{
    const char *pol = jtext(spec, "ipFamilyPolicy");
    if (!strcmp(pol, POLICY_SINGLE)) {
        if (same_field(old, svc, "clusterIPs")) truncate_list(spec, "clusterIPs");
        if (same_field(old, svc, "ipFamilies")) truncate_list(spec, "ipFamilies");
        return;
    }
    size_t nips = len_of(svc, "clusterIPs"), nfams = len_of(svc, "ipFamilies");
    if (nips && nips < len_of(old, "clusterIPs"))
        ferr_add_str(causes, FERR_INVALID, "spec.ipFamilyPolicy", pol,
                     "must be 'SingleStack' to release the secondary cluster IP");
    if (nfams && nfams < len_of(old, "ipFamilies"))
        ferr_add_str(causes, FERR_INVALID, "spec.ipFamilyPolicy", pol,
                     "must be 'SingleStack' to release the secondary IP family");
}

/* Families inferred from the given cluster IPs. */
static void infer_families(json_t *spec, const char *family, json_t *causes)
{
    json_t *ips = json_object_get(spec, "clusterIPs");
    json_t *fams = json_object_get(spec, "ipFamilies");
    size_t i;
    json_t *ip;
    json_array_foreach(ips, i, ip)
    {
        const char *s = json_string_value(ip);
        if (!s || !strcmp(s, "None")) break;
        if (i < json_array_size(fams)) continue;
        const char *fam = family_of_ip(s);
        char path[64], detail[64];
        if (strcmp(fam, family) != 0) {
            snprintf(path, sizeof path, "spec.clusterIPs[%zu]", i);
            snprintf(detail, sizeof detail, "%s is not configured on this cluster", fam);
            val_invalid_strings(causes, path, ips, detail);
            continue;
        }
        if (!json_is_array(fams)) {
            fams = json_array();
            json_object_set_new(spec, "ipFamilies", fams);
        }
        json_array_append_new(fams, json_string(fam));
    }
}

static int invalid(api_err *e, const json_t *svc, json_t *causes)
{
    return api_err_invalid(e, "", "Service", jtext(svc, "metadata", "name"), causes);
}

static void ensure_families(json_t *spec, const char *family)
{
    if (!json_array_size(json_object_get(spec, "ipFamilies")))
        json_object_set_new(spec, "ipFamilies", json_pack("[s]", family));
}

int svcspec_init_families(json_t *svc, const json_t *old, const char *family, api_err *e)
{
    if (!svcspec_needs_cluster_ip(svc) || matching_prefer_dual(svc, old)) return 0;
    json_t *spec = spec_of(svc);
    if (!jstr(spec, "ipFamilyPolicy")) default_policy(spec, old);
    json_t *causes = json_array();
    if (service_validate_cluster_ips(svc, causes) > 0) return invalid(e, svc, causes);
    if (old) policy_on_update(spec, svc, old, causes);
    const char *pol = jtext(spec, "ipFamilyPolicy");
    if (!strcmp(pol, POLICY_SINGLE)) {
        if (len_of(svc, "clusterIPs") == 2)
            ferr_add_str(causes, FERR_INVALID, "spec.ipFamilyPolicy", pol,
                         "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster "
                         "IPs are specified");
        if (len_of(svc, "ipFamilies") == 2)
            ferr_add_str(causes, FERR_INVALID, "spec.ipFamilyPolicy", pol,
                         "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP "
                         "families are specified");
    }
    infer_families(spec, family, causes);
    if (json_array_size(causes)) return invalid(e, svc, causes);
    if (!strcmp(jtext(spec, "clusterIP"), "None") &&
        !json_object_size(json_object_get(spec, "selector"))) {
        /* Headless and selectorless: any families, even on one-family clusters. */
        ensure_families(spec, family);
        json_t *fams = json_object_get(spec, "ipFamilies");
        if (json_array_size(fams) < 2 && strcmp(pol, POLICY_SINGLE) != 0)
            json_array_append_new(
                fams, json_string(other_family(json_string_value(json_array_get(fams, 0)))));
        json_decref(causes);
        return 0;
    }
    if (!strcmp(pol, POLICY_REQUIRE))
        ferr_add_str(causes, FERR_INVALID, "spec.ipFamilyPolicy", pol,
                     "this cluster is not configured for dual-stack services");
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(spec, "ipFamilies"), i, f)
    {
        const char *fam = json_string_value(f);
        if (fam && strcmp(fam, family) != 0) {
            char path[64];
            snprintf(path, sizeof path, "spec.ipFamilies[%zu]", i);
            ferr_add_str(causes, FERR_INVALID, path, fam, "not configured on this cluster");
        }
    }
    if (json_array_size(causes)) return invalid(e, svc, causes);
    json_decref(causes);
    ensure_families(spec, family); /* (one family: PreferDualStack gets it alone) */
    return 0;
}

/* ---- dropTypeDependentFields ---- */

/* The new service's node ports are all the old one's: no net-new value. */
static bool same_node_ports(const json_t *old, const json_t *svc)
{
    size_t i;
    const json_t *p;
    json_array_foreach(jget(svc, "spec", "ports"), i, p)
    {
        json_int_t np = port_node_port(p);
        if (np && !has_node_port(old, np)) return false;
    }
    return true;
}

static bool externally_accessible(const json_t *svc)
{
    return svcspec_needs_node_ports(svc) ||
           (is_type(svc, "ClusterIP") && len_of(svc, "externalIPs") > 0);
}

void svcspec_drop_type_dependent(json_t *svc, const json_t *old)
{
    if (!old) return;
    json_t *spec = spec_of(svc);
    if (svcspec_needs_cluster_ip(old) && !svcspec_needs_cluster_ip(svc)) {
        if (same_string(old, svc, "clusterIP") && same_field(old, svc, "clusterIPs")) {
            json_object_del(spec, "clusterIP"); /* released by the allocator */
            json_object_del(spec, "clusterIPs");
        }
        if (same_field(old, svc, "ipFamilies")) json_object_del(spec, "ipFamilies");
        if (same_string(old, svc, "ipFamilyPolicy")) json_object_del(spec, "ipFamilyPolicy");
    }
    if (svcspec_needs_node_ports(old) && !svcspec_needs_node_ports(svc) &&
        same_node_ports(old, svc)) {
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(spec, "ports"), i, p) json_object_del(p, "nodePort");
    }
    if (svcspec_needs_hc_node_port(old) && !svcspec_needs_hc_node_port(svc) &&
        json_integer_value(jget(old, "spec", "healthCheckNodePort")) ==
            json_integer_value(json_object_get(spec, "healthCheckNodePort")))
        json_object_del(spec, "healthCheckNodePort");
    bool was_lb = is_type(old, "LoadBalancer"), lb = is_type(svc, "LoadBalancer");
    const json_t *alloc_old = jget(old, "spec", "allocateLoadBalancerNodePorts");
    const json_t *alloc_new = json_object_get(spec, "allocateLoadBalancerNodePorts");
    if (was_lb && !lb && json_is_boolean(alloc_old) && json_is_boolean(alloc_new) &&
        json_is_true(alloc_old) == json_is_true(alloc_new))
        json_object_del(spec, "allocateLoadBalancerNodePorts");
    if (was_lb && !lb &&
        json_equal((json_t *)jget(old, "spec", "loadBalancerClass"),
                   json_object_get(spec, "loadBalancerClass")))
        json_object_del(spec, "loadBalancerClass");
    if (externally_accessible(old) && !externally_accessible(svc) &&
        same_string(old, svc, "externalTrafficPolicy"))
        json_object_del(spec, "externalTrafficPolicy");
    if (!lb) {
        json_t *status = json_object_get(svc, "status");
        if (json_is_object(status)) json_object_set_new(status, "loadBalancer", json_object());
    }
}
