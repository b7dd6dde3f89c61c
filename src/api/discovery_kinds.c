/* discovery_kinds.c - EndpointSlice defaults and validation (see
 * discovery_kinds.h). Rules and texts are upstream's
 * pkg/apis/discovery/validation (1.32), in its order. */
#include "api/discovery_kinds.h"

#include "api/core_validation.h"
#include "api/status.h"
#include "api/validation.h"
#include "core/jget.h"

#include <stdio.h>
#include <string.h>

#define MAX_ADDRESSES 100
#define MAX_PORTS 20000
#define MAX_ENDPOINTS 1000
#define MAX_TOPOLOGY_LABELS 16
#define MAX_ZONE_HINTS 8
#define MSG_BAD_IP "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"

static const char *const address_types[] = {"FQDN", "IPv4", "IPv6", NULL};
static const char *const protocols[] = {"SCTP", "TCP", "UDP", NULL};

static bool in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (!strcmp(*list, s)) return true;
    return false;
}

static void not_supported(json_t *causes, const char *field, const char *v, const char *const *list)
{
    char detail[256];
    size_t off = (size_t)snprintf(detail, sizeof detail, "supported values: ");
    for (size_t i = 0; list[i] && off < sizeof detail; i++)
        off +=
            (size_t)snprintf(detail + off, sizeof detail - off, "%s\"%s\"", i ? ", " : "", list[i]);
    ferr_add_str(causes, FERR_NOT_SUPPORTED, field, v, detail);
}

/* field.TooMany */
static void too_many(json_t *causes, const char *field, size_t n, int max)
{
    char msg[128];
    snprintf(msg, sizeof msg, "Too many: %zu: must have at most %d items", n, max);
    json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "reason", "FieldValueTooMany",
                                            "message", msg, "field", field));
}

/* SetDefaults_EndpointPort: name "" and protocol TCP when absent. */
void endpointslice_defaults(json_t *obj)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(obj, "ports"), i, p)
    {
        if (!json_is_object(p)) continue;
        if (!json_object_get(p, "name")) json_object_set_new(p, "name", json_string(""));
        if (!json_object_get(p, "protocol")) json_object_set_new(p, "protocol", json_string("TCP"));
    }
}

/* IsFullyQualifiedDomainName */
static void fqdn(const char *v, const char *field, json_t *causes)
{
    char name[300];
    if (!*v) {
        ferr_add(causes, FERR_REQUIRED, field, NULL, NULL);
        return;
    }
    snprintf(name, sizeof name, "%s", v);
    size_t len = strlen(name);
    if (len && name[len - 1] == '.') name[len - 1] = '\0';
    if (val_dns1123_subdomain(name, field, causes) > 0) return;
    if (!strchr(name, '.'))
        ferr_add_str(causes, FERR_INVALID, field, name,
                     "should be a domain with at least two segments separated by dots");
}

static void address(const char *type, const char *a, const char *list_path, size_t i,
                    json_t *causes)
{
    char path[224];
    snprintf(path, sizeof path, "%s[%zu]", list_path, i);
    if (!strcmp(type, "FQDN")) {
        fqdn(a, path, causes);
        return;
    }
    if (strcmp(type, "IPv4") && strcmp(type, "IPv6")) return; /* unknown types: not checked */
    int fam = cv_parse_ip(a, NULL);
    if (!fam) {
        ferr_add_str(causes, FERR_INVALID, path, a, MSG_BAD_IP);
        return;
    }
    /* (upstream's family errors name the list, not the element) */
    if (!strcmp(type, "IPv4") && fam != 4)
        ferr_add_str(causes, FERR_INVALID, list_path, a, "must be an IPv4 address");
    if (!strcmp(type, "IPv6") && fam != 6)
        ferr_add_str(causes, FERR_INVALID, list_path, a, "must be an IPv6 address");
    cv_endpoint_ip(a, path, causes);
}

static void hints(const json_t *h, const char *base, json_t *causes)
{
    char path[200];
    const json_t *zones = jget(h, "forZones"), *z;
    snprintf(path, sizeof path, "%s.forZones", base);
    if (json_array_size(zones) > MAX_ZONE_HINTS) {
        too_many(causes, path, json_array_size(zones), MAX_ZONE_HINTS);
        return;
    }
    size_t i, k;
    json_array_foreach(zones, i, z)
    {
        const char *name = jtext(z, "name");
        snprintf(path, sizeof path, "%s.forZones[%zu].name", base, i);
        bool dup = false;
        for (k = 0; k < i; k++)
            dup |= !strcmp(jtext(json_array_get(zones, k), "name"), name);
        if (dup) ferr_add_str(causes, FERR_DUPLICATE, path, name, NULL);
        val_label_value(name, path, causes);
    }
}

static void endpoint(const json_t *ep, const char *type, size_t i, json_t *causes)
{
    char base[64], path[160];
    snprintf(base, sizeof base, "endpoints[%zu]", i);
    const json_t *addrs = jget(ep, "addresses"), *a;
    snprintf(path, sizeof path, "%s.addresses", base);
    if (!json_array_size(addrs))
        ferr_add(causes, FERR_REQUIRED, path, NULL, "must contain at least 1 address");
    else if (json_array_size(addrs) > MAX_ADDRESSES)
        too_many(causes, path, json_array_size(addrs), MAX_ADDRESSES);
    size_t k;
    json_array_foreach(addrs, k, a) address(type, json_text(a), path, k, causes);
    const char *node = jstr(ep, "nodeName");
    snprintf(path, sizeof path, "%s.nodeName", base);
    if (node) val_dns1123_subdomain(node, path, causes);
    const json_t *topo = jget(ep, "deprecatedTopology");
    snprintf(path, sizeof path, "%s.deprecatedTopology", base);
    if (json_object_size(topo) > MAX_TOPOLOGY_LABELS)
        too_many(causes, path, json_object_size(topo), MAX_TOPOLOGY_LABELS);
    if (topo) val_labels(topo, path, causes);
    const char *zone = jstr(ep, "zone"), *host = jstr(ep, "hostname");
    snprintf(path, sizeof path, "%s.zone", base);
    if (zone) val_dns1123_label(zone, path, causes);
    snprintf(path, sizeof path, "%s.hostname", base);
    if (host) val_dns1123_label(host, path, causes);
    if (jget(ep, "hints")) {
        snprintf(path, sizeof path, "%s.hints", base);
        hints(jget(ep, "hints"), path, causes);
    }
}

static void ports(const json_t *list, json_t *causes)
{
    if (json_array_size(list) > MAX_PORTS) {
        too_many(causes, "ports", json_array_size(list), MAX_PORTS);
        return;
    }
    size_t i, k;
    const json_t *p;
    char path[96];
    json_array_foreach(list, i, p)
    {
        const char *name = jtext(p, "name");
        snprintf(path, sizeof path, "ports[%zu].name", i);
        if (*name) val_dns1123_label(name, path, causes);
        bool dup = false;
        for (k = 0; k < i; k++)
            dup |= !strcmp(jtext(json_array_get(list, k), "name"), name);
        if (dup) ferr_add_str(causes, FERR_DUPLICATE, path, name, NULL);
        const char *proto = jstr(p, "protocol");
        snprintf(path, sizeof path, "ports[%zu].protocol", i);
        if (!proto)
            ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
        else if (!in_list(protocols, proto))
            not_supported(causes, path, proto, protocols);
        const char *app = jstr(p, "appProtocol");
        snprintf(path, sizeof path, "ports[%zu].appProtocol", i);
        if (app) val_qualified_name(app, path, causes);
    }
}

void endpointslice_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const char *type = jtext(obj, "addressType");
    if (!*type)
        ferr_add(causes, FERR_REQUIRED, "addressType", NULL, NULL);
    else if (!in_list(address_types, type))
        not_supported(causes, "addressType", type, address_types);
    const json_t *eps = jget(obj, "endpoints"), *ep;
    if (json_array_size(eps) > MAX_ENDPOINTS) {
        too_many(causes, "endpoints", json_array_size(eps), MAX_ENDPOINTS);
    } else {
        size_t i;
        json_array_foreach(eps, i, ep) endpoint(ep, type, i, causes);
    }
    ports(jget(obj, "ports"), causes);
}

void endpointslice_validate_update(const json_t *obj, const json_t *old, const char *sub,
                                   json_t *causes)
{
    (void)sub;
    const char *now = jtext(obj, "addressType"), *was = jtext(old, "addressType");
    if (strcmp(now, was) != 0)
        ferr_add_str(causes, FERR_INVALID, "addressType", now, VAL_FIELD_IMMUTABLE);
}
