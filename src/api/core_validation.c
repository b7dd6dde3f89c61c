/* core_validation.c - Service, PersistentVolumeClaim, Namespace and Node
 * validation (see core_validation.h).
 *
 * Each kind's checks run in upstream's order. Resource-list keys are visited
 * in sorted order (upstream ranges over Go maps) so causes are deterministic.
 * Structured bad values (a slice, a Taint, a ServicePort) are rendered as
 * compact JSON, the project-wide rendering (status.c), where upstream prints
 * Go's %#v; a Service's clusterIPs (a []string) print as Go prints them,
 * as the cluster IP allocator's errors quote them (val_invalid_strings).
 */
#include "api/core_validation.h"
#include "core/jdump.h"

#include "api/rq_validation.h"
#include "api/status.h"
#include "api/validation.h"
#include "core/jget.h"
#include "core/names.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_LEN 1024
#define MSG_PORT_RANGE "must be between 1 and 65535, inclusive"
#define MSG_BAD_IP "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
#define MSG_BAD_CIDR "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
#define MSG_ONLY_LB "may only be used when `type` is 'LoadBalancer'"
#define MSG_NOT_CHANGE "may not change once set"
#define SC_ANNOTATION "volume.beta.kubernetes.io/storage-class"
#define LB_RANGES_ANNOTATION "service.beta.kubernetes.io/load-balancer-source-ranges"
#define MAX_AFFINITY_SECONDS 86400 /* core.MaxClientIPServiceAffinitySeconds */

/* ---- small helpers ---- */

static bool present(const json_t *v)
{
    return v && !json_is_null(v);
}

static bool streq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0) return true;
    return false;
}

/* `supported values: "a", "b"` for a NotSupported cause. */
static void supported(const char *const *list, char *buf, size_t n)
{
    size_t off = (size_t)snprintf(buf, n, "supported values: ");
    for (size_t i = 0; list[i] && off < n; i++)
        off += (size_t)snprintf(buf + off, n - off, "%s\"%s\"", i ? ", " : "", list[i]);
}

static void not_supported(json_t *causes, const char *field, const char *value,
                          const char *const *list)
{
    char detail[512];
    supported(list, detail, sizeof detail);
    ferr_add_str(causes, FERR_NOT_SUPPORTED, field, value, detail);
}

/* An int-valued cause (upstream passes an int32/int64 bad value). */
static void add_int(json_t *causes, ferr_type t, const char *field, json_int_t v,
                    const char *detail)
{
    json_t *j = json_integer(v);
    ferr_add(causes, t, field, j, detail);
    json_decref(j);
}

/* A cause whose message carries a detail after a Duplicate value (ferr_add
 * drops details for Duplicate; upstream's ErrorBody keeps them). */
static void add_duplicate_detail(json_t *causes, const char *field, const json_t *value,
                                 const char *detail)
{
    char *v = jdump(value, NULL), msg[1024];
    snprintf(msg, sizeof msg, "Duplicate value: %s: %s", v ? v : "null", detail);
    free(v);
    json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "reason", "FieldValueDuplicate",
                                            "message", msg, "field", field));
}

static const char *const type_names[] = {"object", "array", "string", "integer", "boolean"};

static bool has_type(const json_t *v, cv_type t)
{
    switch (t) {
    case CV_OBJECT:
        return json_is_object(v);
    case CV_ARRAY:
        return json_is_array(v);
    case CV_STRING:
        return json_is_string(v);
    case CV_INTEGER:
        return json_is_integer(v);
    case CV_BOOLEAN:
        return json_is_boolean(v);
    }
    return false;
}

int cv_type_check(const json_t *v, cv_type t, const char *field, json_t *causes)
{
    if (!present(v) || has_type(v, t)) return 0;
    ferr_addf(causes, FERR_TYPE_INVALID, field, v, "must be of type %s", type_names[t]);
    return 1;
}

int cv_quantity(const json_t *v, const char *field, qty *out, json_t *causes)
{
    qty q;
    int rc = qty_from_json(v, &q);
    if (rc != QTY_OK) {
        ferr_add(causes, FERR_INVALID, field, v, qty_strerror(rc));
        return 1;
    }
    if (out) *out = q;
    return 0;
}

/* ---- shapes: the JSON types of the fields a validator reads ---- */

#define NO_ELEM (-1)

typedef struct shape {
    const char *key;
    cv_type type;
    int elem; /* for arrays: the elements' cv_type, or NO_ELEM */
} shape;

static int check_elems(const json_t *arr, cv_type t, const char *field, json_t *causes)
{
    size_t i;
    const json_t *v;
    char path[PATH_MAX_LEN];
    int n = 0;
    json_array_foreach(arr, i, v)
    {
        snprintf(path, sizeof path, "%s[%zu]", field, i);
        n += cv_type_check(v, t, path, causes);
    }
    return n;
}

/* Every table entry of obj (at path `base`); returns the causes added. */
static int check_shape(const json_t *obj, const char *base, const shape *tab, json_t *causes)
{
    int n = 0;
    char path[PATH_MAX_LEN];
    for (const shape *s = tab; s->key; s++) {
        const json_t *v = jget(obj, s->key);
        snprintf(path, sizeof path, "%s.%s", base, s->key);
        int bad = cv_type_check(v, s->type, path, causes);
        if (!bad && s->type == CV_ARRAY && s->elem != NO_ELEM)
            bad = check_elems(v, (cv_type)s->elem, path, causes);
        n += bad;
    }
    return n;
}

/* A ResourceList: an object of quantities; causes at <field>[<name>]. */
static int check_list(const json_t *list, const char *field, json_t *causes)
{
    if (cv_type_check(list, CV_OBJECT, field, causes)) return 1;
    size_t nk;
    const char **keys = rq_sorted_keys(list, &nk);
    char path[PATH_MAX_LEN];
    int n = 0;
    for (size_t i = 0; i < nk; i++) {
        snprintf(path, sizeof path, "%s[%s]", field, keys[i]);
        n += cv_quantity(json_object_get(list, keys[i]), path, NULL, causes);
    }
    free(keys);
    return n;
}

/* A ResourceRequirements-like object at `field`: its requests and limits. */
static int check_requirements(const json_t *rr, const char *field, json_t *causes)
{
    if (cv_type_check(rr, CV_OBJECT, field, causes)) return 1;
    char path[PATH_MAX_LEN];
    snprintf(path, sizeof path, "%s.requests", field);
    int n = check_list(jget(rr, "requests"), path, causes);
    snprintf(path, sizeof path, "%s.limits", field);
    return n + check_list(jget(rr, "limits"), path, causes);
}

/* ---- network syntax ---- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Go's (pre-1.17, "sloppy") dotted IPv4: four fields of digits, each <= 255. */
static bool parse_v4(const char *s, unsigned char out[4])
{
    for (int i = 0; i < 4; i++) {
        if (i && *s++ != '.') return false;
        if (!is_digit(*s)) return false;
        unsigned n = 0;
        while (is_digit(*s)) {
            n = n * 10 + (unsigned)(*s++ - '0');
            if (n > 255) return false;
        }
        out[i] = (unsigned char)n;
    }
    return *s == '\0';
}

static bool is_v4_mapped(const unsigned char a[16])
{
    static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(a, prefix, sizeof prefix) == 0;
}

int cv_parse_ip(const char *s, unsigned char *addr)
{
    unsigned char a[16] = {0};
    int fam;
    if (strchr(s, ':')) {
        if (inet_pton(AF_INET6, s, a) != 1) return 0;
        fam = is_v4_mapped(a) ? 4 : 6;
    } else {
        a[10] = a[11] = 0xff;
        if (!parse_v4(s, a + 12)) return 0;
        fam = 4;
    }
    if (addr) memcpy(addr, a, sizeof a);
    return fam;
}

int cv_parse_cidr(const char *s)
{
    const char *slash = strrchr(s, '/');
    if (!slash || !slash[1]) return 0;
    size_t len = (size_t)(slash - s);
    char ip[64];
    if (len >= sizeof ip) return 0;
    memcpy(ip, s, len);
    ip[len] = '\0';
    int fam = cv_parse_ip(ip, NULL);
    unsigned bits = strchr(ip, ':') ? 128 : 32, n = 0;
    for (const char *p = slash + 1; *p; p++) {
        if (!is_digit(*p)) return 0;
        n = n * 10 + (unsigned)(*p - '0');
        if (n > bits) return 0;
    }
    return fam;
}

/* ValidateNonSpecialIP for an address that parsed. */
static void non_special_ip(const char *ip, const char *field, json_t *causes)
{
    unsigned char a[16];
    int fam = cv_parse_ip(ip, a);
    static const unsigned char zero[16];
    bool v4 = fam == 4;
    const unsigned char *b = v4 ? a + 12 : a;
    char detail[128];
    if (v4 ? memcmp(b, zero, 4) == 0 : memcmp(a, zero, 16) == 0) {
        snprintf(detail, sizeof detail, "may not be unspecified (%s)", ip);
        ferr_add_str(causes, FERR_INVALID, field, ip, detail);
    }
    bool loop = v4 ? b[0] == 127 : (memcmp(a, zero, 15) == 0 && a[15] == 1);
    if (loop)
        ferr_add_str(causes, FERR_INVALID, field, ip,
                     "may not be in the loopback range (127.0.0.0/8, ::1/128)");
    bool ll = v4 ? (b[0] == 169 && b[1] == 254) : (a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
    if (ll)
        ferr_add_str(causes, FERR_INVALID, field, ip,
                     "may not be in the link-local range (169.254.0.0/16, fe80::/10)");
    bool llm = v4 ? (b[0] == 224 && b[1] == 0 && b[2] == 0) : (a[0] == 0xff && (a[1] & 0x0f) == 2);
    if (llm)
        ferr_add_str(causes, FERR_INVALID, field, ip,
                     "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)");
}

/* validation.IsValidPortName. */
static int port_name(const char *v, const char *field, json_t *causes)
{
    size_t len = strlen(v);
    bool charset = len > 0, letter = false;
    for (const char *p = v; *p; p++) {
        charset &= (*p >= 'a' && *p <= 'z') || is_digit(*p) || *p == '-';
        letter |= *p >= 'a' && *p <= 'z';
    }
    int n = 0;
    const char *msgs[5];
    if (len > 15) msgs[n++] = "must be no more than 15 characters";
    if (!charset)
        msgs[n++] = "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)";
    if (!letter) msgs[n++] = "must contain at least one letter (a-z)";
    if (strstr(v, "--")) msgs[n++] = "must not contain consecutive hyphens";
    if (len && (v[0] == '-' || v[len - 1] == '-'))
        msgs[n++] = "must not begin or end with a hyphen";
    for (int i = 0; i < n; i++)
        ferr_add_str(causes, FERR_INVALID, field, v, msgs[i]);
    return n;
}

static bool port_ok(json_int_t p)
{
    return p >= 1 && p <= 65535;
}

/* ---- the quantities quota reads ---- */

static int pod_container_lists(const json_t *list, const char *field, json_t *causes)
{
    if (cv_type_check(list, CV_ARRAY, field, causes)) return 1;
    size_t i;
    const json_t *c;
    char path[PATH_MAX_LEN];
    int n = 0;
    json_array_foreach(list, i, c)
    {
        snprintf(path, sizeof path, "%s[%zu]", field, i);
        if (cv_type_check(c, CV_OBJECT, path, causes)) {
            n++;
            continue;
        }
        snprintf(path, sizeof path, "%s[%zu].resources", field, i);
        n += check_requirements(jget(c, "resources"), path, causes);
    }
    return n;
}

static int pod_status_lists(const json_t *list, const char *field, json_t *causes)
{
    if (cv_type_check(list, CV_ARRAY, field, causes)) return 1;
    size_t i;
    const json_t *cs;
    char path[PATH_MAX_LEN];
    int n = 0;
    json_array_foreach(list, i, cs)
    {
        snprintf(path, sizeof path, "%s[%zu]", field, i);
        if (cv_type_check(cs, CV_OBJECT, path, causes)) {
            n++;
            continue;
        }
        snprintf(path, sizeof path, "%s[%zu].resources", field, i);
        n += check_requirements(jget(cs, "resources"), path, causes);
        snprintf(path, sizeof path, "%s[%zu].allocatedResources", field, i);
        n += check_list(jget(cs, "allocatedResources"), path, causes);
    }
    return n;
}

static int pod_quantities(const json_t *pod, json_t *causes)
{
    const json_t *spec = jget(pod, "spec"), *status = jget(pod, "status");
    int n = cv_type_check(spec, CV_OBJECT, "spec", causes) +
            cv_type_check(status, CV_OBJECT, "status", causes);
    if (n) return n;
    n += pod_container_lists(jget(spec, "containers"), "spec.containers", causes);
    n += pod_container_lists(jget(spec, "initContainers"), "spec.initContainers", causes);
    n += check_list(jget(spec, "overhead"), "spec.overhead", causes);
    n += check_requirements(jget(spec, "resources"), "spec.resources", causes);
    n += pod_status_lists(jget(status, "containerStatuses"), "status.containerStatuses", causes);
    return n + pod_status_lists(jget(status, "initContainerStatuses"),
                                "status.initContainerStatuses", causes);
}

static int pvc_quantities(const json_t *pvc, json_t *causes)
{
    const json_t *spec = jget(pvc, "spec"), *status = jget(pvc, "status");
    int n = cv_type_check(spec, CV_OBJECT, "spec", causes) +
            cv_type_check(status, CV_OBJECT, "status", causes);
    if (n) return n;
    n += check_requirements(jget(spec, "resources"), "spec.resources", causes);
    return n + check_list(jget(status, "allocatedResources"), "status.allocatedResources", causes);
}

int cv_quota_quantities(const char *group, const char *resource, const json_t *obj, json_t *causes)
{
    if (group && *group) return 0;
    if (strcmp(resource, "pods") == 0) return pod_quantities(obj, causes);
    if (strcmp(resource, "persistentvolumeclaims") == 0) return pvc_quantities(obj, causes);
    return 0;
}

/* ==== Service ==== */

static const char *const svc_types[] = {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort",
                                        NULL};
static const char *const protocols[] = {"SCTP", "TCP", "UDP", NULL};
static const char *const affinities[] = {"ClientIP", "None", NULL};
static const char *const ip_families[] = {"IPv4", "IPv6", NULL};
static const char *const family_policies[] = {"PreferDualStack", "RequireDualStack", "SingleStack",
                                              NULL};
static const char *const traffic_policies[] = {"Cluster", "Local", NULL};

static const shape svc_spec_shape[] = {
    {"type", CV_STRING, NO_ELEM},
    {"ports", CV_ARRAY, CV_OBJECT},
    {"selector", CV_OBJECT, NO_ELEM},
    {"clusterIP", CV_STRING, NO_ELEM},
    {"clusterIPs", CV_ARRAY, CV_STRING},
    {"ipFamilies", CV_ARRAY, CV_STRING},
    {"ipFamilyPolicy", CV_STRING, NO_ELEM},
    {"externalIPs", CV_ARRAY, CV_STRING},
    {"externalName", CV_STRING, NO_ELEM},
    {"sessionAffinity", CV_STRING, NO_ELEM},
    {"sessionAffinityConfig", CV_OBJECT, NO_ELEM},
    {"loadBalancerSourceRanges", CV_ARRAY, CV_STRING},
    {"loadBalancerClass", CV_STRING, NO_ELEM},
    {"allocateLoadBalancerNodePorts", CV_BOOLEAN, NO_ELEM},
    {"externalTrafficPolicy", CV_STRING, NO_ELEM},
    {"internalTrafficPolicy", CV_STRING, NO_ELEM},
    {"healthCheckNodePort", CV_INTEGER, NO_ELEM},
    {NULL, 0, 0},
};

static const shape svc_port_shape[] = {
    {"name", CV_STRING, NO_ELEM},        {"protocol", CV_STRING, NO_ELEM},
    {"port", CV_INTEGER, NO_ELEM},       {"nodePort", CV_INTEGER, NO_ELEM},
    {"appProtocol", CV_STRING, NO_ELEM}, {NULL, 0, 0},
};

static int svc_shape(const json_t *spec, json_t *causes)
{
    int n = check_shape(spec, "spec", svc_spec_shape, causes);
    size_t i;
    const json_t *p;
    char base[64];
    json_array_foreach(jget(spec, "ports"), i, p)
    {
        if (!json_is_object(p)) continue;
        snprintf(base, sizeof base, "spec.ports[%zu]", i);
        n += check_shape(p, base, svc_port_shape, causes);
        const json_t *tp = jget(p, "targetPort");
        if (present(tp) && !json_is_integer(tp) && !json_is_string(tp)) {
            snprintf(base, sizeof base, "spec.ports[%zu].targetPort", i);
            ferr_add(causes, FERR_TYPE_INVALID, base, tp, "must be of type integer or string");
            n++;
        }
    }
    const json_t *cfg = jget(spec, "sessionAffinityConfig", "clientIP");
    if (!cv_type_check(cfg, CV_OBJECT, "spec.sessionAffinityConfig.clientIP", causes))
        n += cv_type_check(jget(cfg, "timeoutSeconds"), CV_INTEGER,
                           "spec.sessionAffinityConfig.clientIP.timeoutSeconds", causes);
    else
        n++;
    return n;
}

/* The service's fields as validation reads them (strings default to ""). */
typedef struct svc {
    const json_t *spec, *ports, *ips; /* ips: spec.clusterIPs as given, or NULL */
    const char *type, *cluster_ip;
    const char *eff[8]; /* clusterIPs, else [clusterIP]: what upstream's strategy syncs */
    size_t neff;
    bool headless;
} svc;

static void svc_init(svc *s, const json_t *obj)
{
    memset(s, 0, sizeof *s);
    s->spec = jget(obj, "spec");
    s->ports = jget(s->spec, "ports");
    s->type = jtext(s->spec, "type");
    if (!*s->type) s->type = "ClusterIP"; /* SetDefaults_Service */
    s->cluster_ip = jtext(s->spec, "clusterIP");
    s->ips = json_array_size(jget(s->spec, "clusterIPs")) ? jget(s->spec, "clusterIPs") : NULL;
    if (s->ips) {
        for (size_t i = 0; i < json_array_size(s->ips) && i < 8; i++)
            s->eff[s->neff++] = json_string_value(json_array_get(s->ips, i));
    } else if (*s->cluster_ip) {
        s->eff[s->neff++] = s->cluster_ip;
    }
    s->headless = s->neff == 1 && strcmp(s->eff[0], "None") == 0;
}

/* The effective clusterIPs as a JSON array (for bad values). Caller owns. */
static json_t *svc_ips_json(const svc *s)
{
    if (s->ips) return json_incref((json_t *)s->ips);
    json_t *a = json_array();
    for (size_t i = 0; i < s->neff; i++)
        json_array_append_new(a, json_string(s->eff[i]));
    return a;
}

static bool is_type(const svc *s, const char *t)
{
    return strcmp(s->type, t) == 0;
}

static void svc_external_name(const svc *s, json_t *causes)
{
    if (s->neff > 0)
        ferr_add(causes, FERR_FORBIDDEN, "spec.clusterIPs", NULL,
                 "may not be set for ExternalName services");
    if (json_array_size(jget(s->spec, "ipFamilies")))
        ferr_add(causes, FERR_FORBIDDEN, "spec.ipFamilies", NULL,
                 "may not be set for ExternalName services");
    if (present(jget(s->spec, "ipFamilyPolicy")))
        ferr_add(causes, FERR_FORBIDDEN, "spec.ipFamilyPolicy", NULL,
                 "may not be set for ExternalName services");
    char cname[512];
    snprintf(cname, sizeof cname, "%s", jtext(s->spec, "externalName"));
    size_t len = strlen(cname);
    if (len && cname[len - 1] == '.') cname[len - 1] = '\0';
    if (*cname)
        val_dns1123_subdomain(cname, "spec.externalName", causes);
    else
        ferr_add(causes, FERR_REQUIRED, "spec.externalName", NULL, NULL);
}

static void svc_type_rules(const svc *s, json_t *causes)
{
    if (json_array_size(s->ports) == 0 && !s->headless && !is_type(s, "ExternalName"))
        ferr_add(causes, FERR_REQUIRED, "spec.ports", NULL, NULL);
    if (is_type(s, "LoadBalancer") && s->headless)
        ferr_add_str(causes, FERR_INVALID, "spec.clusterIPs[0]", "None",
                     "may not be set to 'None' for LoadBalancer services");
    else if (is_type(s, "NodePort") && s->headless)
        ferr_add_str(causes, FERR_INVALID, "spec.clusterIPs[0]", "None",
                     "may not be set to 'None' for NodePort services");
    else if (is_type(s, "ExternalName"))
        svc_external_name(s, causes);
}

/* A Service's or an Endpoints' port: its number in range, its protocol one
 * of `protocols`; `base` is its path ("spec.ports[0]"). */
static void port_and_protocol(const json_t *p, const char *base, json_t *causes)
{
    char path[128];
    json_int_t port = json_integer_value(jget(p, "port"));
    snprintf(path, sizeof path, "%s.port", base);
    if (!port_ok(port)) add_int(causes, FERR_INVALID, path, port, MSG_PORT_RANGE);
    const char *proto = jtext(p, "protocol");
    snprintf(path, sizeof path, "%s.protocol", base);
    if (!*proto)
        ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
    else if (!in_list(protocols, proto))
        not_supported(causes, path, proto, protocols);
}

/* validateServicePort. targetPort 0 or "" is what upstream's defaulting
 * replaces with `port` (allot's only when absent), so it is not an error. */
static void svc_port(const json_t *p, size_t i, bool require_name, json_t *names, json_t *causes)
{
    char path[128];
    const char *name = jtext(p, "name");
    snprintf(path, sizeof path, "spec.ports[%zu].name", i);
    if (require_name && !*name) {
        ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
    } else if (*name) {
        val_dns1123_label(name, path, causes);
        if (json_object_get(names, name)) ferr_add_str(causes, FERR_DUPLICATE, path, name, NULL);
        json_object_set_new(names, name, json_true());
    }
    char base[64];
    snprintf(base, sizeof base, "spec.ports[%zu]", i);
    port_and_protocol(p, base, causes);
    const json_t *tp = jget(p, "targetPort");
    snprintf(path, sizeof path, "spec.ports[%zu].targetPort", i);
    if (json_is_integer(tp) && json_integer_value(tp) != 0 && !port_ok(json_integer_value(tp)))
        add_int(causes, FERR_INVALID, path, json_integer_value(tp), MSG_PORT_RANGE);
    else if (json_is_string(tp) && *json_string_value(tp))
        port_name(json_string_value(tp), path, causes);
    const char *app = jstr(p, "appProtocol");
    snprintf(path, sizeof path, "spec.ports[%zu].appProtocol", i);
    if (app) val_qualified_name(app, path, causes);
}

static void svc_ports(const svc *s, json_t *causes)
{
    json_t *names = json_object();
    size_t i;
    const json_t *p;
    json_array_foreach(s->ports, i, p)
    {
        svc_port(p, i, json_array_size(s->ports) > 1, names, causes);
    }
    json_decref(names);
}

static void svc_affinity(const svc *s, json_t *causes)
{
    const char *aff = jtext(s->spec, "sessionAffinity");
    if (!*aff) aff = "None"; /* SetDefaults_Service */
    if (!in_list(affinities, aff)) not_supported(causes, "spec.sessionAffinity", aff, affinities);
    const json_t *cfg = jget(s->spec, "sessionAffinityConfig");
    if (strcmp(aff, "None") == 0 && present(cfg)) {
        ferr_add(causes, FERR_FORBIDDEN, "spec.sessionAffinityConfig", NULL,
                 "must not be set when session affinity is None");
    } else if (strcmp(aff, "ClientIP") == 0) {
        /* Upstream defaults an absent timeout to 10800; a given one must fit. */
        const json_t *t = jget(cfg, "clientIP", "timeoutSeconds");
        json_int_t v = json_integer_value(t);
        if (json_is_integer(t) && (v <= 0 || v > MAX_AFFINITY_SECONDS)) {
            char detail[64];
            snprintf(detail, sizeof detail, "must be greater than 0 and less than %d",
                     MAX_AFFINITY_SECONDS);
            add_int(causes, FERR_INVALID, "spec.sessionAffinityConfig.clientIP.timeoutSeconds", v,
                    detail);
        }
    }
}

/* clusterIP and clusterIPs in step (create only: on update upstream's
 * strategy re-syncs them from the stored service first). */
static void svc_ip_sync(const svc *s, json_t *causes)
{
    json_t *v = s->ips ? svc_ips_json(s) : NULL;
    if (*s->cluster_ip && s->ips && !streq(s->eff[0], s->cluster_ip))
        val_invalid_strings(causes, "spec.clusterIPs", v, "first value must match `clusterIP`");
    else if (!*s->cluster_ip && s->ips)
        val_invalid_strings(causes, "spec.clusterIPs", v,
                            "must be empty when `clusterIP` is not specified");
    json_decref(v);
}

static void svc_families(const svc *s, json_t *causes)
{
    json_t *seen = json_object();
    size_t i;
    const json_t *f;
    char path[64];
    json_array_foreach(jget(s->spec, "ipFamilies"), i, f)
    {
        const char *fam = json_string_value(f);
        snprintf(path, sizeof path, "spec.ipFamilies[%zu]", i);
        if (!in_list(ip_families, fam)) not_supported(causes, path, fam, ip_families);
        if (json_object_get(seen, fam)) ferr_add_str(causes, FERR_DUPLICATE, path, fam, NULL);
        json_object_set_new(seen, fam, json_true());
    }
    json_decref(seen);
    const char *pol = jstr(s->spec, "ipFamilyPolicy");
    if (pol && !in_list(family_policies, pol))
        not_supported(causes, "spec.ipFamilyPolicy", pol, family_policies);
}

/* Each clusterIP parses ("None" only alone, first); returns false if not. */
static bool svc_ips_valid(const svc *s, json_t *causes)
{
    bool ok = true;
    char path[64];
    for (size_t i = 0; i < s->neff; i++) {
        if (i == 0 && strcmp(s->eff[0], "None") == 0) {
            if (s->neff > 1) {
                json_t *v = svc_ips_json(s);
                val_invalid_strings(causes, "spec.clusterIPs", v,
                                    "'None' must be the first and only value");
                json_decref(v);
                ok = false;
            }
            continue;
        }
        if (!cv_parse_ip(s->eff[i], NULL)) {
            snprintf(path, sizeof path, "spec.clusterIPs[%zu]", i);
            ferr_add_str(causes, FERR_INVALID, path, s->eff[i], MSG_BAD_IP);
            ok = false;
        }
    }
    if (s->neff > 2) {
        json_t *v = svc_ips_json(s);
        val_invalid_strings(causes, "spec.clusterIPs", v, "may only hold up to 2 values");
        json_decref(v);
    }
    return ok;
}

/* ValidateServiceClusterIPsRelatedFields (not for ExternalName). */
static void svc_cluster_ips(const svc *s, bool create, json_t *causes)
{
    if (is_type(s, "ExternalName")) return;
    if (create) svc_ip_sync(s, causes);
    svc_families(s, causes);
    if (!svc_ips_valid(s, causes)) return;
    if (s->neff == 2 && cv_parse_ip(s->eff[0], NULL) == cv_parse_ip(s->eff[1], NULL)) {
        json_t *v = svc_ips_json(s);
        val_invalid_strings(causes, "spec.clusterIPs", v,
                            "may specify no more than one IP for each IP family");
        json_decref(v);
    }
    const json_t *fams = jget(s->spec, "ipFamilies");
    for (size_t i = 0; !s->headless && i < s->neff && i < json_array_size(fams); i++) {
        const char *fam = json_string_value(json_array_get(fams, i));
        bool v6 = cv_parse_ip(s->eff[i], NULL) == 6;
        char path[64], detail[96];
        snprintf(path, sizeof path, "spec.clusterIPs[%zu]", i);
        if (streq(fam, "IPv4") && v6) {
            snprintf(detail, sizeof detail,
                     "expected an IPv4 value as indicated by `ipFamilies[%zu]`", i);
            ferr_add_str(causes, FERR_INVALID, path, s->eff[i], detail);
        } else if (streq(fam, "IPv6") && !v6) {
            snprintf(detail, sizeof detail,
                     "expected an IPv6 value as indicated by `ipFamilies[%zu]`", i);
            ferr_add_str(causes, FERR_INVALID, path, s->eff[i], detail);
        }
    }
}

int service_validate_cluster_ips(const json_t *obj, json_t *causes)
{
    size_t before = json_array_size(causes);
    const json_t *spec = jget(obj, "spec");
    if (cv_type_check(spec, CV_OBJECT, "spec", causes) || svc_shape(spec, causes))
        return (int)(json_array_size(causes) - before);
    svc s;
    svc_init(&s, obj);
    svc_cluster_ips(&s, true, causes);
    return (int)(json_array_size(causes) - before);
}

static void svc_external_ips(const svc *s, json_t *causes)
{
    size_t i;
    const json_t *ip;
    char path[64];
    json_array_foreach(jget(s->spec, "externalIPs"), i, ip)
    {
        snprintf(path, sizeof path, "spec.externalIPs[%zu]", i);
        if (!cv_parse_ip(json_string_value(ip), NULL))
            ferr_add(causes, FERR_INVALID, path, ip, MSG_BAD_IP);
        else
            non_special_ip(json_string_value(ip), path, causes);
    }
}

/* The node ports: forbidden on ClusterIP, unique per protocol; then the
 * (protocol, port) pairs unique. */
static void svc_port_uniqueness(const svc *s, json_t *causes)
{
    json_t *node_ports = json_object(), *ports = json_object();
    size_t i;
    const json_t *p;
    char path[64], key[96];
    json_array_foreach(s->ports, i, p)
    {
        json_int_t np = json_integer_value(jget(p, "nodePort"));
        snprintf(path, sizeof path, "spec.ports[%zu].nodePort", i);
        if (np && is_type(s, "ClusterIP"))
            ferr_add(causes, FERR_FORBIDDEN, path, NULL,
                     "may not be used when `type` is 'ClusterIP'");
    }
    json_array_foreach(s->ports, i, p)
    {
        json_int_t np = json_integer_value(jget(p, "nodePort"));
        if (!np) continue;
        snprintf(key, sizeof key, "%s/%lld", jtext(p, "protocol"), (long long)np);
        snprintf(path, sizeof path, "spec.ports[%zu].nodePort", i);
        if (json_object_get(node_ports, key)) add_int(causes, FERR_DUPLICATE, path, np, NULL);
        json_object_set_new(node_ports, key, json_true());
    }
    json_array_foreach(s->ports, i, p)
    {
        json_int_t port = json_integer_value(jget(p, "port"));
        snprintf(key, sizeof key, "%s/%lld", jtext(p, "protocol"), (long long)port);
        snprintf(path, sizeof path, "spec.ports[%zu]", i);
        if (json_object_get(ports, key)) {
            json_t *v =
                json_pack("{s:I, s:s}", "port", (json_int_t)port, "protocol", jtext(p, "protocol"));
            ferr_add(causes, FERR_DUPLICATE, path, v, NULL);
            json_decref(v);
        }
        json_object_set_new(ports, key, json_true());
    }
    json_decref(node_ports);
    json_decref(ports);
}

/* spec.loadBalancerSourceRanges, else the legacy annotation. */
static void svc_source_ranges(const json_t *obj, const svc *s, json_t *causes)
{
    const json_t *ranges = jget(s->spec, "loadBalancerSourceRanges");
    const char *ann = jstr(obj, "metadata", "annotations", LB_RANGES_ANNOTATION);
    const char *field = json_array_size(ranges) ? "spec.LoadBalancerSourceRanges"
                                                : "metadata.annotations[" LB_RANGES_ANNOTATION "]";
    if (!json_array_size(ranges) && !ann) return;
    if (!is_type(s, "LoadBalancer")) ferr_add(causes, FERR_FORBIDDEN, field, NULL, MSG_ONLY_LB);
    char buf[512], path[128];
    if (json_array_size(ranges)) {
        size_t i;
        const json_t *r;
        json_array_foreach(ranges, i, r)
        {
            snprintf(path, sizeof path, "%s[%zu]", field, i);
            snprintf(buf, sizeof buf, "%s", json_string_value(r));
            char *t = buf + strspn(buf, " \t\n\r\v\f");
            for (size_t n = strlen(t); n && strchr(" \t\n\r\v\f", t[n - 1]); n--)
                t[n - 1] = '\0';
            if (!cv_parse_cidr(t)) ferr_add_str(causes, FERR_INVALID, path, t, MSG_BAD_CIDR);
        }
        return;
    }
    snprintf(buf, sizeof buf, "%s", ann);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        t += strspn(t, " \t\n\r\v\f");
        for (size_t n = strlen(t); n && strchr(" \t\n\r\v\f", t[n - 1]); n--)
            t[n - 1] = '\0';
        if (*t && !cv_parse_cidr(t)) ferr_add_str(causes, FERR_INVALID, field, t, MSG_BAD_CIDR);
    }
}

static void svc_load_balancer(const svc *s, json_t *causes)
{
    bool lb = is_type(s, "LoadBalancer");
    if (present(jget(s->spec, "allocateLoadBalancerNodePorts")) && !lb)
        ferr_add(causes, FERR_FORBIDDEN, "spec.allocateLoadBalancerNodePorts", NULL, MSG_ONLY_LB);
    const char *cls = jstr(s->spec, "loadBalancerClass");
    if (cls && lb)
        val_qualified_name(cls, "spec.loadBalancerClass", causes);
    else if (cls)
        ferr_add(causes, FERR_FORBIDDEN, "spec.loadBalancerClass", NULL, MSG_ONLY_LB);
}

static bool externally_accessible(const svc *s)
{
    return is_type(s, "LoadBalancer") || is_type(s, "NodePort") ||
           (is_type(s, "ClusterIP") && json_array_size(jget(s->spec, "externalIPs")) > 0);
}

static bool needs_health_check(const svc *s)
{
    return is_type(s, "LoadBalancer") && streq(jstr(s->spec, "externalTrafficPolicy"), "Local");
}

/* Upstream defaults externalTrafficPolicy (Cluster) and allocates
 * healthCheckNodePort; allot does neither, so only given values are checked. */
static void svc_traffic(const svc *s, json_t *causes)
{
    const char *etp = jtext(s->spec, "externalTrafficPolicy");
    if (!externally_accessible(s) && *etp)
        ferr_add_str(causes, FERR_INVALID, "spec.externalTrafficPolicy", etp,
                     "may only be set for externally-accessible services");
    else if (*etp && !in_list(traffic_policies, etp))
        not_supported(causes, "spec.externalTrafficPolicy", etp, traffic_policies);
    json_int_t hc = json_integer_value(jget(s->spec, "healthCheckNodePort"));
    if (!needs_health_check(s) && hc)
        add_int(causes, FERR_INVALID, "spec.healthCheckNodePort", hc,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is "
                "'Local'");
    else if (hc && !port_ok(hc))
        add_int(causes, FERR_INVALID, "spec.healthCheckNodePort", hc, MSG_PORT_RANGE);
    const json_t *itp = jget(s->spec, "internalTrafficPolicy");
    if (!present(itp) &&
        (is_type(s, "ClusterIP") || is_type(s, "NodePort") || is_type(s, "LoadBalancer")))
        ferr_add(causes, FERR_REQUIRED, "spec.internalTrafficPolicy", NULL, NULL);
    else if (present(itp) && !in_list(traffic_policies, json_string_value(itp)))
        not_supported(causes, "spec.internalTrafficPolicy", json_string_value(itp),
                      traffic_policies);
}

void service_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    const json_t *spec = jget(obj, "spec");
    if (cv_type_check(spec, CV_OBJECT, "spec", causes) || svc_shape(spec, causes)) return;
    svc s;
    svc_init(&s, obj);
    svc_type_rules(&s, causes);
    svc_ports(&s, causes);
    val_labels(jget(spec, "selector"), "spec.selector", causes);
    svc_affinity(&s, causes);
    svc_cluster_ips(&s, old == NULL, causes);
    svc_external_ips(&s, causes);
    if (!in_list(svc_types, s.type)) not_supported(causes, "spec.type", s.type, svc_types);
    svc_port_uniqueness(&s, causes);
    svc_source_ranges(obj, &s, causes);
    svc_load_balancer(&s, causes);
    svc_traffic(&s, causes);
}

/* validateUpgradeDowngradeClusterIPs on the effective lists. An update that
 * leaves both fields empty keeps the stored IPs upstream (its strategy
 * copies them back), so it is not an error here either. */
static void svc_ips_update(const svc *nw, const svc *old, json_t *causes)
{
    if (is_type(nw, "ExternalName") || is_type(old, "ExternalName")) return;
    if ((old->headless && nw->headless) || nw->neff == 0) return;
    json_t *v = svc_ips_json(nw);
    if (old->neff == nw->neff) {
        char path[64];
        for (size_t i = 0; i < old->neff; i++) {
            snprintf(path, sizeof path, "spec.clusterIPs[%zu]", i);
            if (!streq(old->eff[i], nw->eff[i]))
                val_invalid_strings(causes, path, v, MSG_NOT_CHANGE);
        }
    } else if (old->neff > 0 && !streq(old->eff[0], nw->eff[0])) {
        val_invalid_strings(causes, "spec.clusterIPs[0]", v, MSG_NOT_CHANGE);
    }
    if (old->neff > nw->neff && nw->neff == 1 &&
        !streq(jstr(nw->spec, "ipFamilyPolicy"), "SingleStack"))
        ferr_add(causes, FERR_INVALID, "spec.ipFamilyPolicy", jget(nw->spec, "ipFamilyPolicy"),
                 "must be set to 'SingleStack' when releasing the secondary clusterIP");
    json_decref(v);
}

/* validateUpgradeDowngradeIPFamilies (its bad values and index quirks kept). */
static void svc_families_update(const svc *nw, const svc *old, json_t *causes)
{
    if (is_type(nw, "ExternalName") || is_type(old, "ExternalName")) return;
    if (nw->headless || old->headless) return;
    const json_t *nf = jget(nw->spec, "ipFamilies"), *of = jget(old->spec, "ipFamilies");
    size_t nn = json_array_size(nf), on = json_array_size(of);
    const char *n0 = json_string_value(json_array_get(nf, 0)),
               *o0 = json_string_value(json_array_get(of, 0));
    json_t *ips = svc_ips_json(nw);
    if (nn == on) {
        for (size_t i = 0; i < on; i++)
            if (!streq(json_string_value(json_array_get(nf, i)),
                       json_string_value(json_array_get(of, i))))
                ferr_add(causes, FERR_INVALID, "spec.ipFamilies[0]", nf, MSG_NOT_CHANGE);
    } else if (on > nn) {
        if (nw->neff == 0)
            ferr_add(causes, FERR_INVALID, "spec.ipFamilies[0]", nf,
                     "primary ipFamily can not be unset");
        if (nn > 0 && !streq(n0, o0))
            ferr_add(causes, FERR_INVALID, "spec.ipFamilies[0]", ips, MSG_NOT_CHANGE);
        if (nn == 1 && !streq(jstr(nw->spec, "ipFamilyPolicy"), "SingleStack"))
            ferr_add(causes, FERR_INVALID, "spec.ipFamilyPolicy", jget(nw->spec, "ipFamilyPolicy"),
                     "must be set to 'SingleStack' when releasing the secondary ipFamily");
    } else if (on > 0 && !streq(n0, o0)) {
        ferr_add(causes, FERR_INVALID, "spec.ipFamilies[0]", ips, MSG_NOT_CHANGE);
    }
    json_decref(ips);
}

void service_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes)
{
    if (*sub) return; /* status: upstream checks only the load balancer status */
    if (!json_is_object(jget(obj, "spec")) || !json_is_object(jget(old, "spec"))) return;
    svc nw, was;
    svc_init(&nw, obj);
    svc_init(&was, old);
    svc_ips_update(&nw, &was, causes);
    svc_families_update(&nw, &was, causes);
    if (is_type(&nw, "LoadBalancer") && is_type(&was, "LoadBalancer") &&
        !json_equal(jget(nw.spec, "loadBalancerClass") ? jget(nw.spec, "loadBalancerClass")
                                                       : json_null(),
                    jget(was.spec, "loadBalancerClass") ? jget(was.spec, "loadBalancerClass")
                                                        : json_null()))
        ferr_add(causes, FERR_INVALID, "spec.loadBalancerClass", jget(nw.spec, "loadBalancerClass"),
                 MSG_NOT_CHANGE);
    if (needs_health_check(&nw) && needs_health_check(&was) &&
        json_integer_value(jget(nw.spec, "healthCheckNodePort")) !=
            json_integer_value(jget(was.spec, "healthCheckNodePort")))
        ferr_add(causes, FERR_FORBIDDEN, "spec.healthCheckNodePort", NULL, VAL_FIELD_IMMUTABLE);
}

/* ==== Endpoints ==== */

int cv_endpoint_ip(const char *ip, const char *field, json_t *causes)
{
    json_t *probe = json_array();
    non_special_ip(ip, field, probe);
    size_t i;
    json_t *c;
    int n = 0;
    json_array_foreach(probe, i, c)
    {
        if (strstr(jtext(c, "message"), "loopback")) continue;
        json_array_append(causes, c);
        n++;
    }
    json_decref(probe);
    return n;
}

/* validateEndpointAddress (loopback accepted: cv_endpoint_ip). */
static void ep_address(const json_t *a, const char *base, json_t *causes)
{
    char path[128];
    size_t before = json_array_size(causes);
    const char *ip = jtext(a, "ip");
    snprintf(path, sizeof path, "%s.ip", base);
    if (!cv_parse_ip(ip, NULL)) ferr_add_str(causes, FERR_INVALID, path, ip, MSG_BAD_IP);
    const char *host = jtext(a, "hostname");
    snprintf(path, sizeof path, "%s.hostname", base);
    if (*host) val_dns1123_label(host, path, causes);
    const char *node = jstr(a, "nodeName");
    snprintf(path, sizeof path, "%s.nodeName", base);
    if (node) val_dns1123_subdomain(node, path, causes);
    if (json_array_size(causes) != before) return;
    snprintf(path, sizeof path, "%s.ip", base);
    cv_endpoint_ip(ip, path, causes);
}

/* validateEndpointPort */
static void ep_port(const json_t *p, bool require_name, const char *base, json_t *causes)
{
    char path[128];
    const char *name = jtext(p, "name");
    snprintf(path, sizeof path, "%s.name", base);
    if (require_name && !*name)
        ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
    else if (*name)
        val_dns1123_label(name, path, causes);
    port_and_protocol(p, base, causes);
    const char *app = jstr(p, "appProtocol");
    snprintf(path, sizeof path, "%s.appProtocol", base);
    if (app) val_qualified_name(app, path, causes);
}

void endpoints_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *subsets = jget(obj, "subsets");
    if (cv_type_check(subsets, CV_ARRAY, "subsets", causes)) return;
    size_t i, j;
    const json_t *ss, *v;
    char base[96];
    json_array_foreach(subsets, i, ss)
    {
        snprintf(base, sizeof base, "subsets[%zu]", i);
        if (cv_type_check(ss, CV_OBJECT, base, causes)) continue;
        const json_t *addrs = jget(ss, "addresses"), *nr = jget(ss, "notReadyAddresses");
        const json_t *ports = jget(ss, "ports");
        if (!json_array_size(addrs) && !json_array_size(nr))
            ferr_add(causes, FERR_REQUIRED, base, NULL,
                     "must specify `addresses` or `notReadyAddresses`");
        json_array_foreach(addrs, j, v)
        {
            snprintf(base, sizeof base, "subsets[%zu].addresses[%zu]", i, j);
            ep_address(v, base, causes);
        }
        json_array_foreach(nr, j, v)
        {
            snprintf(base, sizeof base, "subsets[%zu].notReadyAddresses[%zu]", i, j);
            ep_address(v, base, causes);
        }
        json_array_foreach(ports, j, v)
        {
            snprintf(base, sizeof base, "subsets[%zu].ports[%zu]", i, j);
            ep_port(v, json_array_size(ports) > 1, base, causes);
        }
    }
}

/* ==== PersistentVolumeClaim ==== */

static const char *const access_modes[] = {"ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce",
                                           "ReadWriteOncePod", NULL};
static const char *const volume_modes[] = {"Block", "Filesystem", NULL};
static const char *const resize_statuses[] = {
    "ControllerResizeInProgress", "ControllerResizeInfeasible", "NodeResizeInProgress",
    "NodeResizeInfeasible",       "NodeResizePending",          NULL};

static const shape pvc_spec_shape[] = {
    {"accessModes", CV_ARRAY, CV_STRING},
    {"selector", CV_OBJECT, NO_ELEM},
    {"resources", CV_OBJECT, NO_ELEM},
    {"storageClassName", CV_STRING, NO_ELEM},
    {"volumeMode", CV_STRING, NO_ELEM},
    {"volumeName", CV_STRING, NO_ELEM},
    {"dataSource", CV_OBJECT, NO_ELEM},
    {"dataSourceRef", CV_OBJECT, NO_ELEM},
    {"volumeAttributesClassName", CV_STRING, NO_ELEM},
    {NULL, 0, 0},
};

static const shape pvc_status_shape[] = {
    {"phase", CV_STRING, NO_ELEM},
    {"accessModes", CV_ARRAY, CV_STRING},
    {"capacity", CV_OBJECT, NO_ELEM},
    {"allocatedResources", CV_OBJECT, NO_ELEM},
    {"allocatedResourceStatuses", CV_OBJECT, NO_ELEM},
    {NULL, 0, 0},
};

static const shape ref_shape[] = {
    {"apiGroup", CV_STRING, NO_ELEM},
    {"kind", CV_STRING, NO_ELEM},
    {"name", CV_STRING, NO_ELEM},
    {"namespace", CV_STRING, NO_ELEM},
    {NULL, 0, 0},
};

static int pvc_shape(const json_t *obj, json_t *causes)
{
    const json_t *spec = jget(obj, "spec"), *status = jget(obj, "status");
    int n = cv_type_check(spec, CV_OBJECT, "spec", causes) +
            cv_type_check(status, CV_OBJECT, "status", causes);
    if (n) return n;
    n += check_shape(spec, "spec", pvc_spec_shape, causes);
    n += check_shape(status, "status", pvc_status_shape, causes);
    n += check_shape(jget(spec, "dataSource"), "spec.dataSource", ref_shape, causes);
    n += check_shape(jget(spec, "dataSourceRef"), "spec.dataSourceRef", ref_shape, causes);
    return n + check_requirements(jget(spec, "resources"), "spec.resources", causes);
}

static void pvc_access_modes(const json_t *spec, json_t *causes)
{
    const json_t *modes = jget(spec, "accessModes");
    if (json_array_size(modes) == 0)
        ferr_add(causes, FERR_REQUIRED, "spec.accessModes", NULL,
                 "at least 1 access mode is required");
    bool rwop = false, other = false;
    size_t i;
    const json_t *m;
    json_array_foreach(modes, i, m)
    {
        const char *s = json_string_value(m);
        if (!in_list(access_modes, s))
            not_supported(causes, "spec.accessModes", s, access_modes);
        else if (strcmp(s, "ReadWriteOncePod") == 0)
            rwop = true;
        else
            other = true;
    }
    if (rwop && other)
        ferr_add(causes, FERR_FORBIDDEN, "spec.accessModes", NULL,
                 "may not use ReadWriteOncePod with other access modes");
}

static void pvc_storage(const json_t *spec, json_t *causes)
{
    const json_t *v = jget(spec, "resources", "requests", "storage");
    qty q;
    if (!v) {
        ferr_add(causes, FERR_REQUIRED, "spec.resources[storage]", NULL, NULL);
    } else if (qty_from_json(v, &q) == QTY_OK && qty_sign(&q) <= 0) {
        char buf[QTY_STR_MAX];
        qty_format_str(&q, buf, sizeof buf);
        ferr_add_str(causes, FERR_INVALID, "spec.resources[storage]", buf,
                     "must be greater than zero");
    } /* a value that does not parse: check_requirements said so */
}

/* validateDataSource / validateDataSourceRef (without the dataSource ==
 * dataSourceRef rule, which needs upstream's defaulting of one from the other). */
static void pvc_source(const json_t *ref, const char *field, bool is_ref, json_t *causes)
{
    if (!present(ref)) return;
    char path[96];
    snprintf(path, sizeof path, "%s.name", field);
    if (!*jtext(ref, "name")) ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
    snprintf(path, sizeof path, "%s.kind", field);
    const char *kind = jtext(ref, "kind"), *group = jtext(ref, "apiGroup");
    if (!*kind) ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
    if (!*group && strcmp(kind, "PersistentVolumeClaim") != 0)
        ferr_add_str(causes, FERR_INVALID, field, kind,
                     "must be 'PersistentVolumeClaim' when referencing the default apiGroup");
    snprintf(path, sizeof path, "%s.apiGroup", field);
    if (*group) val_dns1123_subdomain(group, path, causes);
    snprintf(path, sizeof path, "%s.namespace", field);
    if (is_ref && *jtext(ref, "namespace"))
        val_namespace_name(jtext(ref, "namespace"), path, causes);
}

void pvc_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    if (pvc_shape(obj, causes)) return;
    const json_t *spec = jget(obj, "spec");
    pvc_access_modes(spec, causes);
    if (present(jget(spec, "selector")))
        val_label_selector(jget(spec, "selector"), "spec.selector", causes);
    pvc_storage(spec, causes);
    const char *sc = jstr(spec, "storageClassName");
    if (sc && *sc) val_dns1123_subdomain(sc, "spec.storageClassName", causes);
    const char *mode = jstr(spec, "volumeMode");
    if (mode && !in_list(volume_modes, mode))
        not_supported(causes, "spec.volumeMode", mode, volume_modes);
    pvc_source(jget(spec, "dataSource"), "spec.dataSource", false, causes);
    pvc_source(jget(spec, "dataSourceRef"), "spec.dataSourceRef", true, causes);
    const char *vac = jstr(spec, "volumeAttributesClassName");
    if (vac && *vac) val_dns1123_subdomain(vac, "spec.volumeAttributesClassName", causes);
}

/* ---- PVC update ---- */

static bool empty_json(const json_t *v)
{
    return !present(v) || (json_is_array(v) && json_array_size(v) == 0) ||
           (json_is_object(v) && json_object_size(v) == 0);
}

/* apiequality.Semantic.DeepEqual on JSON: absent, null and empty lists or
 * maps are equal; everything else exactly (quantities are canonical). */
static bool sem_equal(const json_t *a, const json_t *b)
{
    if (empty_json(a) || empty_json(b)) return empty_json(a) && empty_json(b);
    if (!json_is_object(a) || !json_is_object(b)) {
        if (!json_is_array(a) || !json_is_array(b)) return json_equal(a, b);
        if (json_array_size(a) != json_array_size(b)) return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!sem_equal(json_array_get(a, i), json_array_get(b, i))) return false;
        return true;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        if (!sem_equal(v, json_object_get(b, k))) return false;
    }
    json_object_foreach((json_t *)b, k, v)
    {
        if (!json_object_get(a, k) && !empty_json(v)) return false;
    }
    return true;
}

/* Rewrite the quantities of a ResourceList in canonical form, so that "1Gi"
 * and "1073741824" compare equal as upstream's Quantity.Cmp does. */
static void canonical_list(json_t *list)
{
    const char *k;
    json_t *v;
    qty q;
    json_object_foreach(list, k, v)
    {
        if (qty_from_json(v, &q) == QTY_OK) json_object_set_new(list, k, qty_to_json(&q));
    }
}

static void set_or_del(json_t *obj, const char *key, const json_t *v)
{
    if (present(v))
        json_object_set(obj, key, (json_t *)v);
    else
        json_object_del(obj, key);
}

/* The storage class rules: an upgrade from the beta annotation, or from no
 * class, may set spec.storageClassName once; the annotation is immutable. */
static void pvc_storage_class(const json_t *nw, const json_t *old, json_t *nspec,
                              const json_t *ospec, json_t *causes)
{
    const json_t *na = jget(nw, "metadata", "annotations"),
                 *oa = jget(old, "metadata", "annotations");
    const char *oann = jstr(oa, SC_ANNOTATION), *nann = jstr(na, SC_ANNOTATION);
    const char *nsc = jstr(nspec, "storageClassName");
    bool osc_nil = !present(jget(ospec, "storageClassName"));
    if (oann && osc_nil && nsc && strcmp(nsc, oann) == 0 && (!nann || strcmp(nann, oann) == 0)) {
        json_object_del(nspec, "storageClassName");
        return;
    }
    if (!streq(nann, oann))
        ferr_add_str(causes, FERR_INVALID, "metadata.annotations." SC_ANNOTATION, nann ? nann : "",
                     VAL_FIELD_IMMUTABLE);
    if (nsc && osc_nil && (!oann || strcmp(nsc, oann) == 0))
        json_object_del(nspec, "storageClassName");
}

/* What of the spec differs, one "- key: old" / "+ key: new" pair per field
 * (upstream appends a cmp.Diff, whose layout is deliberately unstable). */
static void spec_diff(const json_t *ospec, const json_t *nspec, char *buf, size_t n)
{
    size_t off = 0;
    buf[0] = '\0';
    size_t nk;
    json_t *keys = json_object();
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)ospec, k, v) json_object_set_new(keys, k, json_true());
    json_object_foreach((json_t *)nspec, k, v) json_object_set_new(keys, k, json_true());
    const char **sorted = rq_sorted_keys(keys, &nk);
    for (size_t i = 0; i < nk && off < n; i++) {
        const json_t *a = jget(ospec, sorted[i]), *b = jget(nspec, sorted[i]);
        if (sem_equal(a, b)) continue;
        char *as = present(a) ? jdump(a, NULL) : NULL;
        char *bs = present(b) ? jdump(b, NULL) : NULL;
        off += (size_t)snprintf(buf + off, n - off, "\n- %s: %s\n+ %s: %s", sorted[i],
                                as ? as : "null", sorted[i], bs ? bs : "null");
        free(as);
        free(bs);
    }
    free(sorted);
    json_decref(keys);
}

/* Specs as upstream compares them: volumeName may be set once, the storage
 * request and volumeAttributesClassName of a bound claim may change. */
static void pvc_spec_immutable(const json_t *nw, const json_t *old, json_t *causes)
{
    json_t *nspec = jcopy(jget(nw, "spec")), *ospec = jcopy(jget(old, "spec"));
    if (!nspec || !ospec) goto out;
    json_t *nres = json_object_get(nspec, "resources"), *ores = json_object_get(ospec, "resources");
    canonical_list(json_object_get(nres, "requests"));
    canonical_list(json_object_get(nres, "limits"));
    canonical_list(json_object_get(ores, "requests"));
    canonical_list(json_object_get(ores, "limits"));
    if (!*jtext(ospec, "volumeName")) set_or_del(ospec, "volumeName", jget(nspec, "volumeName"));
    pvc_storage_class(nw, old, nspec, ospec, causes);
    bool bound = streq(jstr(nw, "status", "phase"), "Bound");
    json_t *nreq = json_object_get(nres, "requests");
    if (bound && json_is_object(nreq))
        set_or_del(nreq, "storage", jget(ospec, "resources", "requests", "storage"));
    if (bound && present(jget(nspec, "volumeAttributesClassName")))
        set_or_del(nspec, "volumeAttributesClassName", jget(ospec, "volumeAttributesClassName"));
    if (!sem_equal(nspec, ospec)) {
        char diff[1024];
        spec_diff(ospec, nspec, diff, sizeof diff);
        ferr_addf(causes, FERR_FORBIDDEN, "spec", NULL,
                  "spec is immutable after creation except resources.requests and "
                  "volumeAttributesClassName for bound claims%s",
                  diff);
    }
out:
    json_decref(nspec);
    json_decref(ospec);
}

/* The request at path, or zero when absent or unparsable. */
static qty storage_at(const json_t *list)
{
    qty q = qty_zero(QTY_DECIMAL_SI);
    const json_t *v = jget(list, "storage");
    if (v && qty_from_json(v, &q) != QTY_OK) q = qty_zero(QTY_DECIMAL_SI);
    return q;
}

/* With RecoverVolumeExpansionFailure (on by default): a request may go down,
 * but not to status.capacity or below. */
static void pvc_shrink(const json_t *nw, const json_t *old, json_t *causes)
{
    qty oldsz = storage_at(jget(old, "spec", "resources", "requests"));
    qty newsz = storage_at(jget(nw, "spec", "resources", "requests"));
    qty cap = storage_at(jget(old, "status", "capacity"));
    if (qty_cmp(&newsz, &oldsz) < 0 && qty_cmp(&newsz, &cap) <= 0)
        ferr_add(causes, FERR_FORBIDDEN, "spec.resources.requests.storage", NULL,
                 "field can not be less than status.capacity");
}

static void pvc_vac_update(const json_t *nspec, const json_t *ospec, json_t *causes)
{
    const json_t *n = jget(nspec, "volumeAttributesClassName"),
                 *o = jget(ospec, "volumeAttributesClassName");
    if (!present(o) || (present(n) && json_equal(n, o))) return;
    if (!present(n))
        ferr_add(causes, FERR_FORBIDDEN, "spec.volumeAttributesClassName", NULL,
                 "update from non-nil value to nil is forbidden");
    else if (!*json_string_value(n))
        ferr_add(causes, FERR_FORBIDDEN, "spec.volumeAttributesClassName", NULL,
                 "update from non-nil value to an empty string is forbidden");
}

/* validatePersistentVolumeClaimResourceKey: 0 when valid. */
static int pvc_resource_key(const char *k, const char *field, json_t *causes)
{
    int n = val_qualified_name(k, field, causes);
    if (n) return n;
    static const char *const storage_only[] = {"storage", NULL};
    if (rq_is_native_resource(k) && strcmp(k, "storage") != 0) {
        not_supported(causes, field, k, storage_only);
        return 1;
    }
    return 0;
}

/* validateBasicResource: Value() < 0, shown as an integer. */
static void basic_resource(const json_t *v, const char *field, json_t *causes)
{
    qty q;
    if (qty_from_json(v, &q) == QTY_OK && qty_value(&q) < 0)
        add_int(causes, FERR_INVALID, field, qty_value(&q), "must be a valid resource quantity");
}

static void pvc_status(const json_t *status, json_t *causes)
{
    size_t nk;
    char path[PATH_MAX_LEN];
    const json_t *cap = jget(status, "capacity");
    check_list(cap, "status.capacity", causes);
    const char **keys = rq_sorted_keys(cap, &nk);
    for (size_t i = 0; i < nk; i++) {
        snprintf(path, sizeof path, "status.capacity[%s]", keys[i]);
        basic_resource(jget(cap, keys[i]), path, causes);
    }
    free(keys);
    const json_t *rs = jget(status, "allocatedResourceStatuses");
    keys = rq_sorted_keys(rs, &nk);
    for (size_t i = 0; i < nk; i++) {
        pvc_resource_key(keys[i], "status.allocatedResourceStatus", causes);
        if (!in_list(resize_statuses, jtext(rs, keys[i])))
            not_supported(causes, "status.allocatedResourceStatus", keys[i], resize_statuses);
    }
    free(keys);
    const json_t *alloc = jget(status, "allocatedResources");
    check_list(alloc, "status.allocatedResources", causes);
    keys = rq_sorted_keys(alloc, &nk);
    for (size_t i = 0; i < nk; i++) {
        if (pvc_resource_key(keys[i], "status.allocatedResources", causes)) continue;
        snprintf(path, sizeof path, "status.allocatedResources[%s]", keys[i]);
        size_t before = json_array_size(causes);
        basic_resource(jget(alloc, keys[i]), path, causes);
        if (json_array_size(causes) == before)
            rq_validate_quantity_value("storage", jget(alloc, keys[i]), path, causes);
    }
    free(keys);
}

void pvc_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes)
{
    if (!json_is_object(jget(obj, "spec")) || !json_is_object(jget(old, "spec"))) return;
    if (strcmp(sub, "status") == 0) {
        if (json_is_object(jget(obj, "status"))) pvc_status(jget(obj, "status"), causes);
        return;
    }
    if (*sub) return;
    pvc_spec_immutable(obj, old, causes);
    pvc_shrink(obj, old, causes);
    const json_t *nm = jget(obj, "spec", "volumeMode"), *om = jget(old, "spec", "volumeMode");
    if (!json_equal(present(nm) ? nm : json_null(), present(om) ? om : json_null()))
        ferr_add(causes, FERR_INVALID, "volumeMode", present(nm) ? nm : NULL, VAL_FIELD_IMMUTABLE);
    pvc_vac_update(jget(obj, "spec"), jget(old, "spec"), causes);
}

/* ==== Namespace ==== */

static const char *const standard_finalizers[] = {"kubernetes", "orphan", "foregroundDeletion",
                                                  NULL};

/* validateFinalizerName: a qualified name, and a bare one must be standard. */
static void finalizer_name(const char *f, const char *field, json_t *causes)
{
    if (val_qualified_name(f, field, causes)) return;
    if (!strchr(f, '/') && !in_list(standard_finalizers, f))
        ferr_add_str(causes, FERR_INVALID, field, f,
                     "name is neither a standard finalizer name nor is it fully qualified");
}

/* `indexed`: spec.finalizers[i] (the finalize subresource), else
 * spec.finalizers for every entry (ValidateNamespace). */
static void ns_finalizers(const json_t *obj, bool indexed, json_t *causes)
{
    size_t i;
    const json_t *f;
    char path[64];
    json_array_foreach(jget(obj, "spec", "finalizers"), i, f)
    {
        if (indexed)
            snprintf(path, sizeof path, "spec.finalizers[%zu]", i);
        else
            snprintf(path, sizeof path, "spec.finalizers");
        finalizer_name(json_string_value(f), path, causes);
    }
}

static int ns_shape(const json_t *obj, json_t *causes)
{
    static const shape spec_shape[] = {{"finalizers", CV_ARRAY, CV_STRING}, {NULL, 0, 0}};
    static const shape status_shape[] = {{"phase", CV_STRING, NO_ELEM}, {NULL, 0, 0}};
    const json_t *spec = jget(obj, "spec"), *status = jget(obj, "status");
    int n = cv_type_check(spec, CV_OBJECT, "spec", causes) +
            cv_type_check(status, CV_OBJECT, "status", causes);
    if (n) return n;
    return check_shape(spec, "spec", spec_shape, causes) +
           check_shape(status, "status", status_shape, causes);
}

void namespace_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    if (ns_shape(obj, causes)) return;
    if (!old) ns_finalizers(obj, false, causes);
}

/* ValidateNamespaceStatusUpdate. An absent phase is Active, as upstream's
 * decoding defaults it. */
static void ns_phase(const json_t *obj, json_t *causes)
{
    const char *phase = jstr(obj, "status", "phase");
    const char *del = jstr(obj, "metadata", "deletionTimestamp");
    if (!phase) phase = "Active";
    if ((!del || !*del) && strcmp(phase, "Active") != 0)
        ferr_add_str(causes, FERR_INVALID, "status.Phase", phase,
                     "may only be 'Active' if `deletionTimestamp` is empty");
    else if (del && *del && strcmp(phase, "Terminating") != 0)
        ferr_add_str(causes, FERR_INVALID, "status.Phase", phase,
                     "may only be 'Terminating' if `deletionTimestamp` is not empty");
}

void namespace_validate_update(const json_t *obj, const json_t *old, const char *sub,
                               json_t *causes)
{
    (void)old;
    if (!json_is_object(jget(obj, "spec")) && present(jget(obj, "spec"))) return;
    if (!json_is_object(jget(obj, "status")) && present(jget(obj, "status"))) return;
    if (!*sub)
        ns_finalizers(obj, false, causes);
    else if (strcmp(sub, "finalize") == 0)
        ns_finalizers(obj, true, causes);
    else if (strcmp(sub, "status") == 0)
        ns_phase(obj, causes);
}

/* ==== Node ==== */

static const char *const taint_effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};

static const shape node_spec_shape[] = {
    {"podCIDR", CV_STRING, NO_ELEM},
    {"podCIDRs", CV_ARRAY, CV_STRING},
    {"providerID", CV_STRING, NO_ELEM},
    {"externalID", CV_STRING, NO_ELEM},
    {"taints", CV_ARRAY, CV_OBJECT},
    {"unschedulable", CV_BOOLEAN, NO_ELEM},
    {NULL, 0, 0},
};
static const shape node_status_shape[] = {
    {"capacity", CV_OBJECT, NO_ELEM},
    {"allocatable", CV_OBJECT, NO_ELEM},
    {"addresses", CV_ARRAY, CV_OBJECT},
    {NULL, 0, 0},
};
static const shape taint_shape[] = {
    {"key", CV_STRING, NO_ELEM},
    {"value", CV_STRING, NO_ELEM},
    {"effect", CV_STRING, NO_ELEM},
    {NULL, 0, 0},
};

static int node_shape(const json_t *obj, json_t *causes)
{
    const json_t *spec = jget(obj, "spec"), *status = jget(obj, "status");
    int n = cv_type_check(spec, CV_OBJECT, "spec", causes) +
            cv_type_check(status, CV_OBJECT, "status", causes);
    if (n) return n;
    n += check_shape(spec, "spec", node_spec_shape, causes);
    n += check_shape(status, "status", node_status_shape, causes);
    size_t i;
    const json_t *t;
    char base[64];
    json_array_foreach(jget(spec, "taints"), i, t)
    {
        snprintf(base, sizeof base, "spec.taints[%zu]", i);
        n += check_shape(t, base, taint_shape, causes);
    }
    return n;
}

/* validateNodeTaints; upstream roots the paths at metadata (metadata.taints[i]). */
static void node_taints(const json_t *taints, json_t *causes)
{
    json_t *seen = json_object();
    size_t i;
    const json_t *t;
    char path[96], key[600];
    json_array_foreach(taints, i, t)
    {
        const char *k = jtext(t, "key"), *v = jtext(t, "value"), *eff = jtext(t, "effect");
        snprintf(path, sizeof path, "metadata.taints[%zu].key", i);
        val_qualified_name(k, path, causes);
        name_msgs m = {0};
        if (name_label_value(v, &m)) {
            char joined[NAME_MSGS_MAX * NAME_MSG_LEN];
            name_msgs_join(&m, ";", joined, sizeof joined);
            snprintf(path, sizeof path, "metadata.taints[%zu].value", i);
            ferr_add_str(causes, FERR_INVALID, path, v, joined);
        }
        snprintf(path, sizeof path, "metadata.taints[%zu].effect", i);
        if (!*eff)
            ferr_add(causes, FERR_REQUIRED, path, NULL, NULL);
        else if (!in_list(taint_effects, eff))
            not_supported(causes, path, eff, taint_effects);
        snprintf(key, sizeof key, "%s\n%s", eff, k);
        snprintf(path, sizeof path, "metadata.taints[%zu]", i);
        if (json_object_get(seen, key))
            add_duplicate_detail(causes, path, t, "taints must be unique by key and effect pair");
        else
            json_object_set_new(seen, key, json_true());
    }
    json_decref(seen);
}

/* ValidateNodeResources: status.capacity.<name> and status.allocatable.<name>. */
static void node_resources(const json_t *status, json_t *causes)
{
    static const char *const lists[] = {"capacity", "allocatable"};
    char path[PATH_MAX_LEN];
    for (size_t l = 0; l < 2; l++) {
        const json_t *list = jget(status, lists[l]);
        size_t nk;
        const char **keys = rq_sorted_keys(list, &nk);
        for (size_t i = 0; i < nk; i++) {
            snprintf(path, sizeof path, "status.%s.%s", lists[l], keys[i]);
            rq_validate_quantity_value(keys[i], jget(list, keys[i]), path, causes);
        }
        free(keys);
    }
}

/* spec.podCIDRs, or [spec.podCIDR] from a client that sets only that (the
 * v1 conversion fills one from the other). */
static json_t *pod_cidrs(const json_t *spec)
{
    const json_t *l = jget(spec, "podCIDRs");
    if (json_array_size(l)) return json_incref((json_t *)l);
    json_t *a = json_array();
    const char *one = jstr(spec, "podCIDR");
    if (one && *one) json_array_append_new(a, json_string(one));
    return a;
}

static void node_pod_cidrs(const json_t *spec, json_t *causes)
{
    json_t *cidrs = pod_cidrs(spec);
    size_t n = json_array_size(cidrs), i;
    const json_t *c;
    char path[64];
    int fams[2] = {0, 0};
    json_array_foreach(cidrs, i, c)
    {
        snprintf(path, sizeof path, "spec.podCIDRs[%zu]", i);
        int fam = cv_parse_cidr(json_string_value(c));
        if (!fam) ferr_add(causes, FERR_INVALID, path, c, MSG_BAD_CIDR);
        if (i < 2) fams[i] = fam;
    }
    if (n > 1) {
        if (n > 2 || !fams[0] || !fams[1] || fams[0] == fams[1])
            ferr_add(causes, FERR_INVALID, "spec.podCIDRs", cidrs,
                     "may specify no more than one CIDR for each IP family");
        for (i = 1; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (json_equal(json_array_get(cidrs, i), json_array_get(cidrs, j))) {
                    snprintf(path, sizeof path, "spec.podCIDRs[%zu]", i);
                    ferr_add(causes, FERR_DUPLICATE, path, json_array_get(cidrs, i), NULL);
                    break;
                }
    }
    json_decref(cidrs);
}

void node_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    if (node_shape(obj, causes)) return;
    const json_t *spec = jget(obj, "spec");
    node_taints(jget(spec, "taints"), causes);
    node_resources(jget(obj, "status"), causes);
    if (!old) node_pod_cidrs(spec, causes);
}

static void node_addresses(const json_t *status, json_t *causes)
{
    const json_t *addrs = jget(status, "addresses");
    char path[64];
    for (size_t i = 1; i < json_array_size(addrs); i++) {
        const json_t *a = json_array_get(addrs, i);
        for (size_t j = 0; j < i; j++) {
            if (!json_equal((json_t *)a, json_array_get(addrs, j))) continue;
            snprintf(path, sizeof path, "status.addresses[%zu]", i);
            ferr_add(causes, FERR_DUPLICATE, path, a, NULL);
            break;
        }
    }
}

void node_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes)
{
    (void)sub; /* nodes/status is validated as a whole update, as upstream */
    const json_t *spec = jget(obj, "spec"), *ospec = jget(old, "spec"),
                 *status = jget(obj, "status");
    /* a field of the wrong type: node_validate has said so */
    if ((present(spec) && !json_is_object(spec)) || (present(status) && !json_is_object(status)))
        return;
    node_addresses(status, causes);
    json_t *nc = pod_cidrs(spec), *oc = pod_cidrs(ospec);
    static const char *msg = "node updates may not change podCIDR except from \"\" to valid";
    if (json_array_size(oc) && json_array_size(oc) != json_array_size(nc)) {
        ferr_add(causes, FERR_FORBIDDEN, "spec.podCIDRs", NULL, msg);
    } else {
        for (size_t i = 0; i < json_array_size(oc); i++)
            if (!json_equal(json_array_get(oc, i), json_array_get(nc, i)))
                ferr_add(causes, FERR_FORBIDDEN, "spec.podCIDRs", NULL, msg);
    }
    json_decref(nc);
    json_decref(oc);
    const char *opid = jtext(ospec, "providerID");
    if (*opid && !streq(opid, jstr(spec, "providerID")))
        ferr_add(causes, FERR_FORBIDDEN, "spec.providerID", NULL,
                 "node updates may not change providerID except from \"\" to valid");
    if (!streq(jstr(spec, "externalID"), jstr(ospec, "externalID")))
        ferr_add(causes, FERR_FORBIDDEN, "spec.externalID", NULL, "may not be updated");
}
