/* quota_eval.c - the quota evaluators (upstream pkg/quota/v1/evaluator/core and
 * component-helpers/resource/helpers.go), one rule per function.
 *
 * Layout: small JSON helpers; kind dispatch and owned names; pod requests and
 * limits (containers, init containers and sidecars, pod-level resources,
 * overhead, resize status); pod usage, QoS, scopes and constraints; services;
 * PVCs; object counts; the public entry points; the controller recount.
 */
#include "core/quota_eval.h"
#include "core/jdump.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jget.h"
#include "core/names.h"
#include "core/rfc3339.h"
#include "core/selector.h"

/* Return early on a QUOTA_* error. */
#define TRY(expr)                                                                                  \
    do {                                                                                           \
        int rc_ = (expr);                                                                          \
        if (rc_) return rc_;                                                                       \
    } while (0)

static void seterr(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void seterr(char *err, size_t n, const char *fmt, ...)
{
    if (!err || !n) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

/* ---- JSON helpers ---------------------------------------------------------------------------- */

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

/* Map a rlist/qty error to a QUOTA_* code. */
static int qerr(int rc)
{
    if (!rc) return 0;
    return rc == RL_ENOMEM || rc == QUOTA_ENOMEM ? QUOTA_ENOMEM : QUOTA_EINVAL;
}

/* A ResourceList field of an object, added into out. */
static int read_list(const json_t *v, rlist *out)
{
    return qerr(rl_from_json(v, out, NULL));
}

/* ---- kinds and the names they own ------------------------------------------------------------ */

typedef enum { K_POD, K_SVC, K_PVC, K_COUNT } kind;

static kind kind_of(const char *group, const char *resource)
{
    if (group && *group) return K_COUNT;
    if (strcmp(resource, "pods") == 0) return K_POD;
    if (strcmp(resource, "services") == 0) return K_SVC;
    if (strcmp(resource, "persistentvolumeclaims") == 0) return K_PVC;
    return K_COUNT;
}

bool quota_ignored_resource(const char *group, const char *resource)
{
    static const char *const core[] = {"bindings", "componentstatuses", "events", NULL};
    static const char *const authn[] = {"tokenreviews", "selfsubjectreviews", NULL};
    static const char *const authz[] = {"subjectaccessreviews", "selfsubjectaccessreviews",
                                        "localsubjectaccessreviews", "selfsubjectrulesreviews",
                                        NULL};
    const char *const *set = NULL;
    if (!group || !*group)
        set = core;
    else if (strcmp(group, "events.k8s.io") == 0)
        return strcmp(resource, "events") == 0;
    else if (strcmp(group, "authentication.k8s.io") == 0)
        set = authn;
    else if (strcmp(group, "authorization.k8s.io") == 0)
        set = authz;
    for (; set && *set; set++)
        if (strcmp(*set, resource) == 0) return true;
    return false;
}

bool quota_is_native_resource(const char *name)
{
    return !strchr(name, '/') || strstr(name, "kubernetes.io/");
}

bool quota_is_extended_resource_name(const char *name)
{
    if (quota_is_native_resource(name) || has_prefix(name, "requests.")) return false;
    /* It must stay a qualified name once turned into its quota name. */
    char buf[512];
    if ((size_t)snprintf(buf, sizeof buf, "requests.%s", name) >= sizeof buf) return false;
    name_msgs m = {0};
    return name_qualified(buf, &m) == 0;
}

static bool is_native(const char *name)
{
    return quota_is_native_resource(name);
}

/* The DRA variant (IsDRAExtendedResourceName) used by the pod evaluator. */
static bool is_extended(const char *name)
{
    return has_prefix(name, "deviceclass.resource.kubernetes.io/") ||
           quota_is_extended_resource_name(name);
}

/* isExtendedResourceNameForQuota. */
static bool is_extended_for_quota(const char *name)
{
    return has_prefix(name, "requests.") &&
           (!is_native(name) || has_prefix(name, "requests.deviceclass.resource.kubernetes.io/"));
}

static bool in_set(const char *const *set, const char *name)
{
    for (; *set; set++)
        if (strcmp(*set, name) == 0) return true;
    return false;
}

static const char *const pod_names[] = {"count/pods",
                                        "cpu",
                                        "memory",
                                        "ephemeral-storage",
                                        "requests.cpu",
                                        "requests.memory",
                                        "requests.ephemeral-storage",
                                        "limits.cpu",
                                        "limits.memory",
                                        "limits.ephemeral-storage",
                                        "pods",
                                        NULL};
static const char *const svc_names[] = {"count/services", "services", "services.nodeports",
                                        "services.loadbalancers", NULL};
static const char *const pvc_names[] = {"count/persistentvolumeclaims", "persistentvolumeclaims",
                                        "requests.storage", NULL};
static const char *const legacy_counts[] = {"configmaps", "resourcequotas",
                                            "replicationcontrollers", "secrets", NULL};
#define SC_SUFFIX ".storageclass.storage.k8s.io/"

/* The object-count name of a group/resource: count/<resource>[.<group>]. */
static void count_name(const char *group, const char *resource, char *buf, size_t n)
{
    if (group && *group)
        snprintf(buf, n, "count/%s.%s", resource, group);
    else
        snprintf(buf, n, "count/%s", resource);
}

bool quota_owns(const char *group, const char *resource, const char *name)
{
    char cn[512];
    switch (kind_of(group, resource)) {
    case K_POD:
        return in_set(pod_names, name) || has_prefix(name, "hugepages-") ||
               has_prefix(name, "requests.hugepages-") || is_extended_for_quota(name);
    case K_SVC:
        return in_set(svc_names, name);
    case K_PVC:
        return in_set(pvc_names, name) ||
               (strstr(name, SC_SUFFIX) && (has_suffix(name, SC_SUFFIX "persistentvolumeclaims") ||
                                            has_suffix(name, SC_SUFFIX "requests.storage")));
    case K_COUNT:
        break;
    }
    count_name(group, resource, cn, sizeof cn);
    if (strcmp(cn, name) == 0) return true;
    return (!group || !*group) && in_set(legacy_counts, resource) && strcmp(resource, name) == 0;
}

int quota_matching_resources(const char *group, const char *resource, const rlist *names,
                             rlist *out)
{
    for (size_t i = 0; i < rl_len(names); i++) {
        if (quota_owns(group, resource, rl_name(names, i)) && rl_add_name(out, rl_name(names, i)))
            return QUOTA_ENOMEM;
    }
    return 0;
}

/* ---- pod requests and limits (component-helpers resource/helpers.go) ------------------------- */

/* maxResourceList(dst, src): src wins where absent or strictly greater. */
static int max_into(rlist *dst, const rlist *src)
{
    for (size_t i = 0; i < rl_len(src); i++) {
        const qty *d = rl_get(dst, rl_name(src, i));
        if ((!d || qty_cmp(rl_qty(src, i), d) > 0) && rl_set(dst, rl_name(src, i), rl_qty(src, i)))
            return QUOTA_ENOMEM;
    }
    return 0;
}

static bool is_restartable(const json_t *c)
{
    return strcmp(jtext(c, "restartPolicy"), "Always") == 0;
}

/* The status entry (containerStatuses or initContainerStatuses) named `name`. */
static const json_t *container_status(const json_t *pod, const char *name)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses"};
    const json_t *found = NULL;
    for (size_t l = 0; l < 2; l++) {
        const json_t *arr = jget(pod, "status", lists[l]);
        size_t i;
        const json_t *cs;
        json_array_foreach(arr, i, cs)
        {
            /* Upstream fills a map, so a later entry with the same name wins. */
            if (strcmp(jtext(cs, "name"), name) == 0) found = cs;
        }
    }
    return found;
}

/* IsPodResizeInfeasible: the PodResizePending condition has reason Infeasible. */
static bool resize_infeasible(const json_t *pod)
{
    size_t i;
    const json_t *c;
    json_array_foreach(jget(pod, "status", "conditions"), i, c)
    {
        if (strcmp(jtext(c, "type"), "PodResizePending") == 0)
            return strcmp(jtext(c, "reason"), "Infeasible") == 0;
    }
    return false;
}

/* One container's requests (limits=false) or limits, into out (cleared). With
 * use_status and a status entry carrying resources: determineContainerReqs /
 * determineContainerLimits, i.e. the max of spec, actuated and allocated. */
static int container_list(const json_t *pod, const json_t *c, bool limits, bool use_status,
                          rlist *out)
{
    const char *which = limits ? "limits" : "requests";
    const json_t *cs = use_status ? container_status(pod, jtext(c, "name")) : NULL;
    const json_t *actual = cs ? jget(cs, "resources") : NULL;
    rl_clear(out);
    if (!actual || json_is_null(actual)) return read_list(jget(c, "resources", which), out);
    bool infeasible = resize_infeasible(pod);
    if (!infeasible) TRY(read_list(jget(c, "resources", which), out));
    rlist *tmp = rl_new();
    if (!tmp) return QUOTA_ENOMEM;
    int rc = read_list(jget(actual, which), tmp);
    if (!rc) rc = max_into(out, tmp);
    if (!rc && !limits) {
        rl_clear(tmp);
        rc = read_list(jget(cs, "allocatedResources"), tmp);
        if (!rc) rc = max_into(out, tmp);
    }
    rl_free(tmp);
    return rc;
}

/* Init containers: InitContainerUse(i) = sum of earlier sidecars + container i;
 * sidecars also add to the running total `out`. Then out = max(out, initMax). */
static int add_init_containers(const json_t *pod, bool limits, rlist *out, rlist *c)
{
    rlist *side = rl_new(), *init_max = rl_new();
    int rc = side && init_max ? 0 : QUOTA_ENOMEM;
    size_t i;
    const json_t *ic;
    json_array_foreach(jget(pod, "spec", "initContainers"), i, ic)
    {
        bool sidecar = is_restartable(ic);
        if (!rc) rc = container_list(pod, ic, limits, sidecar, c);
        if (!rc && sidecar) rc = qerr(rl_add_to(out, c));
        if (!rc && sidecar) rc = qerr(rl_add_to(side, c));
        if (!rc && !sidecar) rc = qerr(rl_add_to(c, side));
        if (!rc) rc = max_into(init_max, sidecar ? side : c);
    }
    if (!rc) rc = max_into(out, init_max);
    rl_free(side);
    rl_free(init_max);
    return rc;
}

static int aggregate_containers(const json_t *pod, bool limits, rlist *out)
{
    rlist *c = rl_new();
    if (!c) return QUOTA_ENOMEM;
    int rc = 0;
    size_t i;
    const json_t *ctr;
    json_array_foreach(jget(pod, "spec", "containers"), i, ctr)
    {
        if (!rc) rc = container_list(pod, ctr, limits, true, c);
        if (!rc) rc = qerr(rl_add_to(out, c));
    }
    if (!rc) rc = add_init_containers(pod, limits, out, c);
    rl_free(c);
    return rc;
}

/* IsSupportedPodLevelResource. */
static bool pod_level_supported(const char *name)
{
    return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
           has_prefix(name, "hugepages-");
}

static bool list_has_supported(const json_t *list)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)list, k, v)
    {
        if (pod_level_supported(k)) return true;
    }
    return false;
}

/* IsPodLevelRequestsSet / IsPodLevelResourcesSet. */
static bool pod_level_set(const json_t *pod, bool include_limits)
{
    const json_t *r = jget(pod, "spec", "resources");
    return list_has_supported(jget(r, "requests")) ||
           (include_limits && list_has_supported(jget(r, "limits")));
}

/* Pod-level values replace the aggregated container values, per supported key. */
static int apply_pod_level(const json_t *pod, bool limits, rlist *out)
{
    if (!pod_level_set(pod, limits)) return 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)jget(pod, "spec", "resources", limits ? "limits" : "requests"), k,
                        v)
    {
        qty q;
        if (!pod_level_supported(k)) continue;
        if (qty_from_json(v, &q)) return QUOTA_EINVAL;
        if (rl_set(out, k, &q)) return QUOTA_ENOMEM;
    }
    return 0;
}

/* Overhead: added to every request; to a limit only where one is set (upstream's
 * PodLimits tests presence, `if value, ok := limits[name]; ok`, not non-zero). */
static int apply_overhead(const json_t *pod, bool limits, rlist *out)
{
    rlist *oh = rl_new();
    if (!oh) return QUOTA_ENOMEM;
    int rc = read_list(jget(pod, "spec", "overhead"), oh);
    if (!rc && limits) {
        rlist *m = rl_mask(oh, out);
        rc = m ? qerr(rl_add_to(out, m)) : QUOTA_ENOMEM;
        rl_free(m);
    } else if (!rc) {
        rc = qerr(rl_add_to(out, oh));
    }
    rl_free(oh);
    return rc;
}

static int pod_list(const json_t *pod, bool limits, rlist *out)
{
    rl_clear(out);
    TRY(aggregate_containers(pod, limits, out));
    TRY(apply_pod_level(pod, limits, out));
    return apply_overhead(pod, limits, out);
}

int quota_pod_requests(const json_t *pod, rlist *out)
{
    return pod_list(pod, false, out);
}

int quota_pod_limits(const json_t *pod, rlist *out)
{
    return pod_list(pod, true, out);
}

/* ---- pod usage (pods.go PodUsageFunc, podComputeUsageHelper) --------------------------------- */

static int set_int(rlist *l, const char *name, int64_t v)
{
    qty q = qty_from_int64(v, 0, QTY_DECIMAL_SI);
    return rl_set(l, name, &q) ? QUOTA_ENOMEM : 0;
}

static int set_q(rlist *l, const char *name, const qty *q)
{
    return rl_set(l, name, q) ? QUOTA_ENOMEM : 0;
}

/* maskResourceWithPrefix(name, "requests."). */
static int set_requests_name(rlist *l, const char *name, const qty *q)
{
    char buf[512];
    if (has_prefix(name, "requests.")) return set_q(l, name, q);
    if ((size_t)snprintf(buf, sizeof buf, "requests.%s", name) >= sizeof buf) return QUOTA_EINVAL;
    return set_q(l, buf, q);
}

static const struct {
    const char *res, *req, *lim;
} compute_names[] = {
    {"cpu", "requests.cpu", "limits.cpu"},
    {"memory", "requests.memory", "limits.memory"},
    {"ephemeral-storage", "requests.ephemeral-storage", "limits.ephemeral-storage"},
};

/* podComputeUsageHelper: the quota names a (requests, limits) pair charges. */
static int usage_helper(const rlist *req, const rlist *lim, rlist *out)
{
    TRY(set_int(out, "pods", 1));
    for (size_t i = 0; i < sizeof compute_names / sizeof compute_names[0]; i++) {
        const qty *r = rl_get(req, compute_names[i].res), *l = rl_get(lim, compute_names[i].res);
        if (r) TRY(set_q(out, compute_names[i].res, r));
        if (r) TRY(set_q(out, compute_names[i].req, r));
        if (l) TRY(set_q(out, compute_names[i].lim, l));
    }
    for (size_t i = 0; i < rl_len(req); i++) {
        const char *name = rl_name(req, i);
        if (has_prefix(name, "hugepages-")) {
            TRY(set_q(out, name, rl_qty(req, i)));
            TRY(set_requests_name(out, name, rl_qty(req, i)));
        }
        if (is_extended(name)) TRY(set_requests_name(out, name, rl_qty(req, i)));
    }
    return 0;
}

bool quota_pod_counts(const json_t *pod, int64_t now)
{
    const char *phase = jtext(pod, "status", "phase");
    if (strcmp(phase, "Failed") == 0 || strcmp(phase, "Succeeded") == 0) return false;
    const json_t *md = jget(pod, "metadata");
    const json_t *grace = jget(md, "deletionGracePeriodSeconds");
    int64_t ts;
    if (!json_is_integer(grace) || !rfc3339_parse(jtext(md, "deletionTimestamp"), &ts, NULL))
        return true;
    return !(now > ts + json_integer_value(grace));
}

static int pod_usage(const json_t *pod, int64_t now, rlist *out)
{
    /* count/pods tracks every pod in storage; the rest only live ones. */
    TRY(set_int(out, "count/pods", 1));
    if (!quota_pod_counts(pod, now)) return 0;
    rlist *req = rl_new(), *lim = rl_new();
    int rc = req && lim ? 0 : QUOTA_ENOMEM;
    if (!rc) rc = pod_list(pod, false, req);
    if (!rc) rc = pod_list(pod, true, lim);
    if (!rc) rc = usage_helper(req, lim, out);
    rl_free(req);
    rl_free(lim);
    return rc;
}

/* ---- QoS (qos.go ComputePodQOS) -------------------------------------------------------------- */

typedef struct qos_acc {
    qty req[2], lim[2]; /* cpu, memory: sums of positive values */
    bool has_req[2], has_lim[2];
    bool guaranteed;
} qos_acc;

/* Sum the positive cpu/memory values of a ResourceList into sums/has; returns a
 * bitmask of what was found (1 cpu, 2 memory). Unparsable values count as unset. */
static int qos_sum(const json_t *list, qty *sums, bool *has)
{
    static const char *const names[2] = {"cpu", "memory"};
    int found = 0;
    for (int i = 0; i < 2; i++) {
        qty q;
        const json_t *v = jget(list, names[i]);
        if (!v || qty_from_json(v, &q) || qty_sign(&q) <= 0) continue;
        if (has[i])
            qty_add(&sums[i], &q);
        else
            sums[i] = q;
        has[i] = true;
        found |= 1 << i;
    }
    return found;
}

/* One ResourceRequirements. `pod_level`: a missing limits list keeps Guaranteed
 * possible (upstream only checks limits when the pod-level list is non-empty). */
static void qos_add(qos_acc *a, const json_t *rr, bool pod_level)
{
    const json_t *lims = jget(rr, "limits");
    qos_sum(jget(rr, "requests"), a->req, a->has_req);
    int found = qos_sum(lims, a->lim, a->has_lim);
    if (pod_level && json_object_size(lims) == 0) return;
    if (found != 3) a->guaranteed = false;
}

/* With PodLevelResources, a non-nil spec.resources (any JSON object, even {})
 * alone decides the class, as upstream's pointer test does. */
static quota_qos qos_compute(const json_t *pod)
{
    qos_acc a = {.guaranteed = true};
    const json_t *pl = jget(pod, "spec", "resources");
    if (json_is_object(pl)) {
        qos_add(&a, pl, true);
    } else {
        static const char *const lists[] = {"containers", "initContainers"};
        for (int l = 0; l < 2; l++) {
            size_t i;
            const json_t *c;
            json_array_foreach(jget(pod, "spec", lists[l]), i, c)
            {
                qos_add(&a, jget(c, "resources"), false);
            }
        }
    }
    int nreq = a.has_req[0] + a.has_req[1], nlim = a.has_lim[0] + a.has_lim[1];
    if (!nreq && !nlim) return QUOTA_QOS_BEST_EFFORT;
    for (int i = 0; i < 2 && a.guaranteed; i++) {
        if (a.has_req[i] && (!a.has_lim[i] || qty_cmp(&a.lim[i], &a.req[i]) != 0))
            a.guaranteed = false;
    }
    return a.guaranteed && nreq == nlim ? QUOTA_QOS_GUARANTEED : QUOTA_QOS_BURSTABLE;
}

quota_qos quota_pod_qos(const json_t *pod)
{
    const char *c = jtext(pod, "status", "qosClass");
    if (strcmp(c, "BestEffort") == 0) return QUOTA_QOS_BEST_EFFORT;
    if (strcmp(c, "Burstable") == 0) return QUOTA_QOS_BURSTABLE;
    if (strcmp(c, "Guaranteed") == 0) return QUOTA_QOS_GUARANTEED;
    return qos_compute(pod);
}

/* ---- scopes ---------------------------------------------------------------------------------- */

bool quota_pod_is_terminating(const json_t *pod)
{
    const json_t *ads = jget(pod, "spec", "activeDeadlineSeconds");
    return json_is_integer(ads) && json_integer_value(ads) >= 0;
}

static bool cross_ns_term(const json_t *term)
{
    const json_t *ns = jget(term, "namespaces"), *sel = jget(term, "namespaceSelector");
    return json_array_size(ns) > 0 || (sel && !json_is_null(sel));
}

/* usesCrossNamespacePodAffinity: any (anti-)affinity term, required or preferred. */
static bool uses_cross_ns_affinity(const json_t *pod)
{
    static const char *const kinds[] = {"podAffinity", "podAntiAffinity"};
    for (int k = 0; k < 2; k++) {
        const json_t *a = jget(pod, "spec", "affinity", kinds[k]);
        size_t i;
        const json_t *t;
        json_array_foreach(jget(a, "requiredDuringSchedulingIgnoredDuringExecution"), i, t)
        {
            if (cross_ns_term(t)) return true;
        }
        json_array_foreach(jget(a, "preferredDuringSchedulingIgnoredDuringExecution"), i, t)
        {
            if (cross_ns_term(jget(t, "podAffinityTerm"))) return true;
        }
    }
    return false;
}

/* The VolumeAttributesClass names a PVC references (empties dropped). */
static size_t pvc_vac_names(const json_t *pvc, const char *out[3])
{
    const char *v[3] = {
        jtext(pvc, "spec", "volumeAttributesClassName"),
        jtext(pvc, "status", "currentVolumeAttributesClassName"),
        jtext(pvc, "status", "modifyVolumeStatus", "targetVolumeAttributesClassName"),
    };
    size_t k = 0;
    for (int i = 0; i < 3; i++) {
        bool dup = false;
        for (size_t j = 0; j < k; j++)
            dup |= strcmp(out[j], v[i]) == 0;
        if (*v[i] && !dup) out[k++] = v[i];
    }
    return k;
}

/* ---- per-object facts ------------------------------------------------------------------------ */

enum { F_TERMINATING = 1, F_BEST_EFFORT = 2, F_CROSS_NS = 4 };

/* One allocation: the header, then `nstr` NUL-terminated strings (pods: the
 * priorityClassName when set; PVCs: the VolumeAttributesClass names), then
 * `nusage` usage entries. An entry is a name (one byte: (table << 4 | index)
 * into known_names, or NAME_INLINE followed by the NUL-terminated name) and a
 * packed qty (QTY_HEAD bytes, then only the limbs in use). Unaligned: read with
 * memcpy. Kept for every stored object, hence the packing. */
struct quota_facts {
    uint8_t kind;     /* a `kind` */
    uint8_t flags;    /* F_*: pods only */
    uint8_t nstr;     /* <= 3 */
    int32_t usage_rc; /* quota_usage's result; no entries unless 0 */
    uint32_t nusage;
    uint32_t len; /* bytes in data */
    unsigned char data[];
};

static const char *const *const known_names[] = {pod_names, svc_names, pvc_names, legacy_counts};
_Static_assert(sizeof pod_names / sizeof pod_names[0] <= 16, "known_names index is 4 bits");
#define NAME_INLINE 0xff
#define QTY_HEAD 16 /* exp (8), uscale (4), nlimb, neg, big, format */

static unsigned name_code(const char *name)
{
    for (unsigned t = 0; t < sizeof known_names / sizeof known_names[0]; t++)
        for (unsigned i = 0; known_names[t][i]; i++)
            if (strcmp(known_names[t][i], name) == 0) return t << 4 | i;
    return NAME_INLINE;
}

static size_t entry_size(const char *name, const qty *q)
{
    size_t nm = name_code(name) == NAME_INLINE ? strlen(name) + 1 : 0;
    return 1 + nm + QTY_HEAD + 4u * q->nlimb;
}

static unsigned char *entry_pack(unsigned char *p, const char *name, const qty *q)
{
    unsigned code = name_code(name);
    *p++ = (unsigned char)code;
    if (code == NAME_INLINE) p = (unsigned char *)stpcpy((char *)p, name) + 1;
    memcpy(p, &q->exp, 8);
    memcpy(p + 8, &q->uscale, 4);
    p[12] = q->nlimb;
    p[13] = q->neg;
    p[14] = q->big;
    p[15] = q->format;
    memcpy(p + QTY_HEAD, q->limb, 4u * q->nlimb);
    return p + QTY_HEAD + 4u * q->nlimb;
}

static const unsigned char *entry_unpack(const unsigned char *p, const char **name, qty *q)
{
    unsigned code = *p++;
    if (code == NAME_INLINE) {
        *name = (const char *)p;
        p += strlen(*name) + 1;
    } else {
        *name = known_names[code >> 4][code & 15];
    }
    memset(q, 0, sizeof *q);
    memcpy(&q->exp, p, 8);
    memcpy(&q->uscale, p + 8, 4);
    q->nlimb = p[12] <= QTY_LIMBS ? p[12] : QTY_LIMBS;
    q->neg = p[13];
    q->big = p[14];
    q->format = p[15];
    memcpy(q->limb, p + QTY_HEAD, 4u * q->nlimb);
    return p + QTY_HEAD + 4u * q->nlimb;
}

static uint8_t pod_flags(const json_t *pod)
{
    return (uint8_t)((quota_pod_is_terminating(pod) ? F_TERMINATING : 0) |
                     (quota_pod_qos(pod) == QUOTA_QOS_BEST_EFFORT ? F_BEST_EFFORT : 0) |
                     (uses_cross_ns_affinity(pod) ? F_CROSS_NS : 0));
}

/* The scope facts of obj, and the usage u (NULL: scopes only) with its result. */
static quota_facts *facts_pack(kind k, const json_t *obj, const rlist *u, int usage_rc)
{
    const char *strs[3];
    size_t nstr = 0, len = 0;
    if (k == K_POD) {
        const char *pc = jtext(obj, "spec", "priorityClassName");
        if (*pc) strs[nstr++] = pc;
    } else if (k == K_PVC) {
        nstr = pvc_vac_names(obj, strs);
    }
    for (size_t i = 0; i < nstr; i++)
        len += strlen(strs[i]) + 1;
    for (size_t i = 0; i < rl_len(u); i++)
        len += entry_size(rl_name(u, i), rl_qty(u, i));
    quota_facts *f = malloc(sizeof *f + len);
    if (!f) return NULL;
    *f = (quota_facts){.kind = (uint8_t)k,
                       .flags = k == K_POD ? pod_flags(obj) : 0,
                       .nstr = (uint8_t)nstr,
                       .usage_rc = usage_rc,
                       .nusage = (uint32_t)rl_len(u),
                       .len = (uint32_t)len};
    unsigned char *p = f->data;
    for (size_t i = 0; i < nstr; i++)
        p = (unsigned char *)stpcpy((char *)p, strs[i]) + 1;
    for (size_t i = 0; i < rl_len(u); i++)
        p = entry_pack(p, rl_name(u, i), rl_qty(u, i));
    return f;
}

quota_facts *quota_facts_of_usage(const char *group, const char *resource, const json_t *obj,
                                  const rlist *usage, int usage_rc)
{
    /* Out of memory is not a fact about the object: never keep it. */
    if (usage_rc == QUOTA_ENOMEM) return NULL;
    return facts_pack(kind_of(group, resource), obj, usage_rc ? NULL : usage, usage_rc);
}

quota_facts *quota_facts_new(const char *group, const char *resource, const json_t *obj,
                             int64_t now)
{
    rlist *u = rl_new();
    if (!u) return NULL;
    int rc = quota_usage(group, resource, obj, now, u);
    quota_facts *f = quota_facts_of_usage(group, resource, obj, u, rc);
    rl_free(u);
    return f;
}

bool quota_facts_equal(const quota_facts *a, const quota_facts *b)
{
    if (!a || !b) return a == b;
    return a->kind == b->kind && a->flags == b->flags && a->nstr == b->nstr &&
           a->usage_rc == b->usage_rc && a->nusage == b->nusage && a->len == b->len &&
           memcmp(a->data, b->data, a->len) == 0;
}

void quota_facts_free(quota_facts *f)
{
    free(f);
}

size_t quota_facts_size(const quota_facts *f)
{
    return f ? sizeof *f + f->len : 0;
}

/* The i-th string (i < nstr). */
static const char *facts_str(const quota_facts *f, size_t i)
{
    const char *p = (const char *)f->data;
    while (i--)
        p += strlen(p) + 1;
    return p;
}

/* ---- scopes on facts ------------------------------------------------------------------------- */

/* One ScopedResourceSelectorRequirement, ready to match. Its label selector
 * (ScopedResourceSelectorRequirementsAsSelector) is built on first use, as only
 * PriorityClass and VolumeAttributesClass requirements need one (a bad operator
 * on any other scope is never an error, as upstream). A recount asks about the
 * same few class names again and again, so results are memoised per value. */
#define SCOPE_MEMO 8
typedef struct scope_req {
    const json_t *s; /* borrowed */
    const char *name, *op;
    int built; /* 0 not yet, 1 sel ready, -1 does not convert (err says why) */
    sel_t *sel;
    char err[640];
    size_t nmemo;
    char *memo_value[SCOPE_MEMO]; /* NULL: the empty label set */
    bool memo_match[SCOPE_MEMO];
} scope_req;

static void scope_req_init(scope_req *r, const json_t *s)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    r->name = jtext(s, "scopeName");
    r->op = jtext(s, "operator");
}

static void scope_req_cleanup(scope_req *r)
{
    sel_free(r->sel);
    for (size_t i = 0; i < r->nmemo; i++)
        free(r->memo_value[i]);
}

static int scope_req_build(scope_req *r)
{
    static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};
    char q[256], e[512];
    if (!in_set(ops, r->op)) {
        seterr(r->err, sizeof r->err,
               "failed to parse and convert selector: %s is not a valid scope selector operator",
               name_go_quote(r->op, q, sizeof q));
        return r->built = -1;
    }
    json_t *values = jcopy(jget(r->s, "values"));
    json_t *ls = json_pack("{s:[{s:s,s:s,s:o}]}", "matchExpressions", "key", r->name, "operator",
                           r->op, "values", values ? values : json_array());
    r->sel = ls ? sel_from_json(ls, e, sizeof e) : NULL;
    if (!r->sel)
        seterr(r->err, sizeof r->err, "failed to parse and convert selector: %s",
               ls ? e : "out of memory");
    json_decref(ls);
    return r->built = r->sel ? 1 : -1;
}

/* One request's object as scopes see it (quota_scope_subject_new). Admission
 * matches it against prepared quotas that threads share, so the label sets a
 * class scope is tested on are cached here, per request, not in the shared
 * requirement. */
struct quota_scope_subject {
    quota_facts *f; /* scope facts only (no usage) */
    /* labels[i]: {scopeName: facts string i} (i < 3); labels[3]: the empty set.
     * Built on first use. A kind has one class scope (pods PriorityClass, PVCs
     * VolumeAttributesClass), so the scope name is the same for every entry. */
    json_t *labels[4];
};

/* The label set for facts string `idx` (-1: the empty set), NULL on OOM. */
static const json_t *subject_labels(quota_scope_subject *subj, const char *scope, int idx)
{
    size_t slot = idx < 0 ? 3 : (size_t)idx;
    if (!subj->labels[slot])
        subj->labels[slot] =
            idx < 0 ? json_object() : json_pack("{s:s}", scope, facts_str(subj->f, slot));
    return subj->labels[slot];
}

/* Shared, prepared requirement (built eagerly, see quota_scopes_new): read only. */
static int scope_req_matches_subject(const scope_req *r, quota_scope_subject *subj, int idx,
                                     char *err, size_t n)
{
    const json_t *labels = subject_labels(subj, r->name, idx);
    if (!labels) {
        seterr(err, n, "failed to parse and convert selector: out of memory");
        return -1;
    }
    return sel_matches(r->sel, labels);
}

/* Matches on the one-label set {scopeName: facts string idx} (idx -1: the
 * empty set). Without a subject (the recount), the result is memoised in r.
 * 1, 0 or -1 (err). */
static int scope_req_matches(scope_req *r, const quota_facts *f, quota_scope_subject *subj, int idx,
                             char *err, size_t n)
{
    if (!r->built) scope_req_build(r);
    if (r->built < 0) {
        seterr(err, n, "%s", r->err);
        return -1;
    }
    if (subj) return scope_req_matches_subject(r, subj, idx, err, n);
    const char *value = idx < 0 ? NULL : facts_str(f, (size_t)idx);
    for (size_t i = 0; i < r->nmemo; i++) {
        const char *m = r->memo_value[i];
        if (value ? m && strcmp(m, value) == 0 : !m) return r->memo_match[i];
    }
    json_t *labels = value ? json_pack("{s:s}", r->name, value) : json_object();
    if (!labels) {
        seterr(err, n, "failed to parse and convert selector: out of memory");
        return -1;
    }
    bool match = sel_matches(r->sel, labels);
    json_decref(labels);
    char *copy = value ? strdup(value) : NULL;
    if (r->nmemo < SCOPE_MEMO && (copy || !value)) {
        r->memo_value[r->nmemo] = copy;
        r->memo_match[r->nmemo++] = match;
    } else {
        free(copy);
    }
    return match;
}

/* podMatchesScopeFunc. */
static int pod_scope(scope_req *r, const quota_facts *f, quota_scope_subject *subj, char *err,
                     size_t n)
{
    const char *name = r->name;
    if (strcmp(name, "Terminating") == 0) return (f->flags & F_TERMINATING) != 0;
    if (strcmp(name, "NotTerminating") == 0) return (f->flags & F_TERMINATING) == 0;
    if (strcmp(name, "BestEffort") == 0) return (f->flags & F_BEST_EFFORT) != 0;
    if (strcmp(name, "NotBestEffort") == 0) return (f->flags & F_BEST_EFFORT) == 0;
    if (strcmp(name, "CrossNamespacePodAffinity") == 0) return (f->flags & F_CROSS_NS) != 0;
    if (strcmp(name, "PriorityClass") != 0) return 0;
    if (strcmp(r->op, "Exists") == 0) return f->nstr > 0;
    return scope_req_matches(r, f, subj, f->nstr ? 0 : -1, err, n);
}

/* pvcMatchesScopeFunc: only VolumeAttributesClass; any referenced name may match. */
static int pvc_scope(scope_req *r, const quota_facts *f, quota_scope_subject *subj, char *err,
                     size_t n)
{
    if (strcmp(r->name, "VolumeAttributesClass") != 0) return 0;
    if (strcmp(r->op, "Exists") == 0) return f->nstr > 0;
    if (f->nstr == 0) return scope_req_matches(r, f, subj, -1, err, n);
    for (int i = 0; i < f->nstr; i++) {
        int rc = scope_req_matches(r, f, subj, i, err, n);
        if (rc) return rc;
    }
    return 0;
}

/* subj NULL: f's object, memoising in r (the recount); else subj's object,
 * with r read only (admission on a shared prepared quota). */
static int scope_matches(scope_req *r, const quota_facts *f, quota_scope_subject *subj, char *err,
                         size_t n)
{
    if (subj) f = subj->f;
    if (f->kind == K_POD) return pod_scope(r, f, subj, err, n);
    if (f->kind == K_PVC) return pvc_scope(r, f, subj, err, n);
    return 0; /* generic.MatchesNoScopeFunc */
}

/* Go %v of one ScopedResourceSelectorRequirement: {Name Op [v1 v2]}. */
static int format_scope(const json_t *s, dbuf *out)
{
    if (dbuf_printf(out, "{%s %s [", jtext(s, "scopeName"), jtext(s, "operator")))
        return QUOTA_ENOMEM;
    size_t i;
    const json_t *v;
    json_array_foreach(jget(s, "values"), i, v)
    {
        const char *str = json_string_value(v);
        if (dbuf_printf(out, "%s%s", i ? " " : "", str ? str : "")) return QUOTA_ENOMEM;
    }
    return dbuf_adds(out, "]}") ? QUOTA_ENOMEM : 0;
}

int quota_format_scopes(const json_t *selectors, dbuf *out)
{
    size_t i;
    const json_t *s;
    if (dbuf_adds(out, "[")) return QUOTA_ENOMEM;
    json_array_foreach(selectors, i, s)
    {
        if (i && dbuf_adds(out, " ")) return QUOTA_ENOMEM;
        TRY(format_scope(s, out));
    }
    return dbuf_adds(out, "]") ? QUOTA_ENOMEM : 0;
}

json_t *quota_scope_selectors(const json_t *spec)
{
    json_t *arr = json_array();
    size_t i;
    const json_t *v;
    json_array_foreach(jget(spec, "scopes"), i, v)
    {
        const char *s = json_string_value(v);
        if (arr && json_array_append_new(arr, json_pack("{s:s,s:s}", "scopeName", s ? s : "",
                                                        "operator", "Exists"))) {
            json_decref(arr);
            arr = NULL;
        }
    }
    json_array_foreach(jget(spec, "scopeSelector", "matchExpressions"), i, v)
    {
        if (arr && json_array_append(arr, (json_t *)v)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    return arr;
}

/* ---- a quota's scopes, ready to match -------------------------------------------------------- */

/* Scope requirements (getScopeSelectorsFromQuota, or limitedResources'
 * matchScopes) over the array that holds them. */
typedef struct scope_set {
    json_t *sels; /* owned reference */
    scope_req *reqs;
    size_t n;
} scope_set;

static void scope_set_cleanup(scope_set *ss)
{
    for (size_t i = 0; i < ss->n; i++)
        scope_req_cleanup(&ss->reqs[i]);
    free(ss->reqs);
    json_decref(ss->sels);
    memset(ss, 0, sizeof *ss);
}

/* Takes the reference `sels` (NULL: out of memory). 0 or QUOTA_ENOMEM. */
static int scope_set_init(scope_set *ss, json_t *sels)
{
    size_t n = json_array_size(sels);
    memset(ss, 0, sizeof *ss);
    ss->sels = sels;
    ss->reqs = n ? calloc(n, sizeof *ss->reqs) : NULL;
    if (!sels || (n && !ss->reqs)) {
        scope_set_cleanup(ss);
        return QUOTA_ENOMEM;
    }
    for (ss->n = 0; ss->n < n; ss->n++)
        scope_req_init(&ss->reqs[ss->n], json_array_get(sels, ss->n));
    return 0;
}

/* Matches: every requirement matches (none: 1). The first error wins; a
 * mismatch does not stop the walk, so an error later on still shows. */
static int scope_set_all(scope_set *ss, const quota_facts *f, quota_scope_subject *subj, char *err,
                         size_t n)
{
    int match = 1;
    for (size_t i = 0; i < ss->n; i++) {
        int rc = scope_matches(&ss->reqs[i], f, subj, err, n);
        if (rc < 0) return -1;
        match = match && rc;
    }
    return match;
}

/* MatchingScopes: appends each matched selector to out (NULL: only count
 * them). The number matched, -1 (err: `error on matching scope {..}: ..` for
 * the first one that fails; the walk stops there) or QUOTA_ENOMEM. */
static int scope_set_each(scope_set *ss, const quota_facts *f, quota_scope_subject *subj,
                          json_t *out, char *err, size_t n)
{
    int count = 0;
    char e[640];
    for (size_t i = 0; i < ss->n; i++) {
        int m = scope_matches(&ss->reqs[i], f, subj, e, sizeof e);
        if (m < 0) {
            dbuf b;
            dbuf_init(&b, 4096);
            format_scope(ss->reqs[i].s, &b);
            seterr(err, n, "error on matching scope %s: %s", b.p ? b.p : "", e);
            dbuf_free(&b);
            return -1;
        }
        if (m > 0 && out && json_array_append(out, (json_t *)ss->reqs[i].s)) return QUOTA_ENOMEM;
        count += m > 0;
    }
    return count;
}

int quota_matching_scopes(const char *group, const char *resource, const json_t *obj,
                          const json_t *selectors, json_t *out, char *err, size_t n)
{
    scope_set ss;
    quota_facts *f = facts_pack(kind_of(group, resource), obj, NULL, 0);
    json_t *matched = json_array();
    /* No selectors (e.g. a limitedResources entry without matchScopes): none match. */
    json_t *sels = selectors ? json_incref((json_t *)selectors) : json_array();
    int rc = f && matched ? scope_set_init(&ss, sels) : (json_decref(sels), QUOTA_ENOMEM);
    if (!rc) {
        rc = scope_set_each(&ss, f, NULL, matched, err, n);
        scope_set_cleanup(&ss);
    }
    /* out is left unchanged on an error. */
    if (rc >= 0) rc = json_array_extend(out, matched) ? QUOTA_ENOMEM : 0;
    json_decref(matched);
    quota_facts_free(f);
    return rc;
}

/* ---- prepared scopes and subjects (admission) ------------------------------------------------ */

struct quota_scopes {
    scope_set set;
};

quota_scopes *quota_scopes_new(const json_t *quota_spec)
{
    quota_scopes *s = calloc(1, sizeof *s);
    if (!s || scope_set_init(&s->set, quota_scope_selectors(quota_spec))) {
        free(s);
        return NULL;
    }
    /* Built now, once: matching a subject then only reads the requirements,
     * which is what lets threads share them. */
    for (size_t i = 0; i < s->set.n; i++)
        scope_req_build(&s->set.reqs[i]);
    return s;
}

void quota_scopes_free(quota_scopes *s)
{
    if (!s) return;
    scope_set_cleanup(&s->set);
    free(s);
}

size_t quota_scopes_len(const quota_scopes *s)
{
    return s->set.n;
}

quota_scope_subject *quota_scope_subject_new(const char *group, const char *resource,
                                             const json_t *obj)
{
    quota_scope_subject *subj = calloc(1, sizeof *subj);
    if (subj && !(subj->f = facts_pack(kind_of(group, resource), obj, NULL, 0))) {
        free(subj);
        return NULL;
    }
    return subj;
}

void quota_scope_subject_free(quota_scope_subject *subj)
{
    if (!subj) return;
    for (size_t i = 0; i < sizeof subj->labels / sizeof subj->labels[0]; i++)
        json_decref(subj->labels[i]);
    quota_facts_free(subj->f);
    free(subj);
}

/* With a subject, scope_matches reads the (eagerly built) requirements only:
 * casting const away here never leads to a write. */
int quota_scopes_matching(const quota_scopes *s, quota_scope_subject *subj, json_t *out, char *err,
                          size_t n)
{
    return scope_set_each((scope_set *)&s->set, NULL, subj, out, err, n);
}

int quota_scopes_matches(const quota_scopes *s, quota_scope_subject *subj, char *err, size_t n)
{
    return scope_set_all((scope_set *)&s->set, NULL, subj, err, n);
}

/* ---- the recount context ----------------------------------------------------------------------
 */

struct quota_recount_ctx {
    kind kind;
    scope_set scopes; /* memoises class-scope results: not shared */
    rlist *hard;      /* spec.hard; NULL: keep every usage key */
    /* Per known_names code: whether hard has that name (the common names are
     * then decided without a string compare). */
    bool known_in_hard[sizeof known_names / sizeof known_names[0]][16];
};

void quota_recount_ctx_free(quota_recount_ctx *c)
{
    if (!c) return;
    scope_set_cleanup(&c->scopes);
    rl_free(c->hard);
    free(c);
}

static quota_recount_ctx *ctx_new(const json_t *spec, kind k)
{
    quota_recount_ctx *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->kind = k;
    if (scope_set_init(&c->scopes, quota_scope_selectors(spec))) {
        free(c);
        return NULL;
    }
    return c;
}

int quota_recount_matches(quota_recount_ctx *c, const quota_facts *f, char *err, size_t n)
{
    return scope_set_all(&c->scopes, f, NULL, err, n);
}

int quota_matches_scopes(const json_t *spec, const char *group, const char *resource,
                         const json_t *obj, char *err, size_t n)
{
    kind k = kind_of(group, resource);
    quota_recount_ctx *c = ctx_new(spec, k);
    /* No scopes: everything matches, without looking at the object. */
    quota_facts *f = c && c->scopes.n ? facts_pack(k, obj, NULL, 0) : NULL;
    int match = c && !c->scopes.n ? 1 : -1;
    if (f)
        match = quota_recount_matches(c, f, err, n);
    else if (match < 0)
        seterr(err, n, "out of memory");
    quota_facts_free(f);
    quota_recount_ctx_free(c);
    return match;
}

int quota_matches(const json_t *spec, const rlist *hard, const char *group, const char *resource,
                  const json_t *obj, char *err, size_t n)
{
    bool owned = false;
    for (size_t i = 0; i < rl_len(hard) && !owned; i++)
        owned = quota_owns(group, resource, rl_name(hard, i));
    int m = quota_matches_scopes(spec, group, resource, obj, err, n);
    return m < 0 ? -1 : owned && m;
}

/* ---- pod constraints (pods.go Constraints) --------------------------------------------------- */

/* validationSet, sorted (the order of the message). */
static const char *const must_specify[] = {"cpu",    "limits.cpu",   "limits.memory",
                                           "memory", "requests.cpu", "requests.memory"};
#define NMUST (sizeof must_specify / sizeof must_specify[0])

/* ---- constraints, once per object ----
 * pods.go Constraints walks every container of the pod; admission asks once
 * per pertinent quota, with the required names of each. The walk does not
 * depend on those names, so it is done once: per container, its name and
 * which names of the validation set its usage has. */
typedef struct cf_container {
    const char *name; /* borrowed from the object */
    uint8_t has;      /* bit i: its usage has must_specify[i] */
} cf_container;

struct quota_cfacts {
    bool skip; /* not a pod, or pod-level resources: nothing is required */
    int rc;    /* the walk failed (a bad quantity): every check returns it */
    size_t n;
    cf_container c[];
};

/* enforcePodContainerConstraints' input: what container c's own usage has. */
static int container_has(const json_t *c, rlist *req, rlist *lim, rlist *u, uint8_t *has)
{
    rl_clear(req);
    rl_clear(lim);
    rl_clear(u);
    TRY(read_list(jget(c, "resources", "requests"), req));
    TRY(read_list(jget(c, "resources", "limits"), lim));
    TRY(usage_helper(req, lim, u));
    *has = 0;
    for (size_t i = 0; i < NMUST; i++)
        if (rl_has(u, must_specify[i])) *has |= (uint8_t)(1u << i);
    return 0;
}

/* Containers, then init containers (the order names are recorded in). */
static void cfacts_walk(quota_cfacts *cf, const json_t *pod)
{
    static const char *const lists[] = {"containers", "initContainers"};
    rlist *req = rl_new(), *lim = rl_new(), *u = rl_new();
    cf->rc = req && lim && u ? 0 : QUOTA_ENOMEM;
    for (int l = 0; l < 2 && !cf->rc; l++) {
        size_t i;
        const json_t *c;
        json_array_foreach(jget(pod, "spec", lists[l]), i, c)
        {
            cf_container *e = &cf->c[cf->n++];
            e->name = jtext(c, "name");
            cf->rc = container_has(c, req, lim, u, &e->has);
            if (cf->rc) break;
        }
    }
    rl_free(req);
    rl_free(lim);
    rl_free(u);
}

quota_cfacts *quota_cfacts_new(const char *group, const char *resource, const json_t *obj)
{
    bool skip = kind_of(group, resource) != K_POD || pod_level_set(obj, true);
    size_t n = skip ? 0
                    : json_array_size(jget(obj, "spec", "containers")) +
                          json_array_size(jget(obj, "spec", "initContainers"));
    quota_cfacts *cf = calloc(1, sizeof *cf + n * sizeof cf->c[0]);
    if (!cf) return NULL;
    cf->skip = skip;
    if (!skip) cfacts_walk(cf, obj);
    return cf;
}

void quota_cfacts_free(quota_cfacts *cf)
{
    free(cf);
}

/* "must specify <res> for: <names>; <res> for: <names>" over the containers
 * lacking a required name (each list sorted and de-duplicated, as a set). */
static int must_specify_message(const quota_cfacts *cf, unsigned lacking, char *err, size_t n)
{
    dbuf b;
    dbuf_init(&b, 1 << 16);
    rlist *names = rl_new();
    int rc = names ? dbuf_adds(&b, "must specify ") : QUOTA_ENOMEM;
    bool first = true;
    for (size_t i = 0; !rc && i < NMUST; i++) {
        if (!(lacking & (1u << i))) continue;
        rl_clear(names);
        for (size_t k = 0; !rc && k < cf->n; k++)
            if (!(cf->c[k].has & (1u << i))) rc = rl_add_name(names, cf->c[k].name);
        if (!rc) rc = dbuf_printf(&b, "%s%s for: ", first ? "" : "; ", must_specify[i]);
        if (!rc) rc = rl_format_names(names, ",", &b);
        first = false;
    }
    if (!rc) seterr(err, n, "%s", b.p);
    dbuf_free(&b);
    rl_free(names);
    return rc ? QUOTA_ENOMEM : 1;
}

unsigned quota_must_specify_mask(const rlist *required)
{
    unsigned mask = 0;
    for (size_t i = 0; i < NMUST; i++)
        if (rl_has(required, must_specify[i])) mask |= 1u << i;
    return mask;
}

int quota_cfacts_check_mask(const quota_cfacts *cf, unsigned required, char *err, size_t n)
{
    if (cf->skip) return 0;
    if (cf->rc) return cf->rc;
    unsigned lacking = 0; /* bit i: some container lacks required must_specify[i] */
    for (size_t k = 0; k < cf->n; k++)
        lacking |= required & ~(unsigned)cf->c[k].has;
    return lacking ? must_specify_message(cf, lacking, err, n) : 0;
}

int quota_cfacts_check(const quota_cfacts *cf, const rlist *required, char *err, size_t n)
{
    return quota_cfacts_check_mask(cf, quota_must_specify_mask(required), err, n);
}

int quota_constraints(const char *group, const char *resource, const rlist *required,
                      const json_t *obj, char *err, size_t n)
{
    quota_cfacts *cf = quota_cfacts_new(group, resource, obj);
    int rc = cf ? quota_cfacts_check(cf, required, err, n) : QUOTA_ENOMEM;
    quota_cfacts_free(cf);
    return rc;
}

/* ---- services, PVCs, object counts ----------------------------------------------------------- */

/* The service evaluator: a NodePort or LoadBalancer Service is charged a node
 * port per port, the intent (node ports are allocated after admission
 * upstream); a LoadBalancer with allocateLoadBalancerNodePorts false only
 * the ports that ask for one by number (portsWithNodePorts). */
static int svc_usage(const json_t *svc, rlist *out)
{
    const char *type = jtext(svc, "spec", "type");
    const json_t *ports = jget(svc, "spec", "ports");
    int64_t n = (int64_t)json_array_size(ports);
    bool lb = strcmp(type, "LoadBalancer") == 0, np = lb || strcmp(type, "NodePort") == 0;
    if (lb && json_is_false(jget(svc, "spec", "allocateLoadBalancerNodePorts"))) {
        size_t i;
        const json_t *p;
        n = 0;
        json_array_foreach(ports, i, p) n += json_integer_value(jget(p, "nodePort")) != 0;
    }
    TRY(set_int(out, "count/services", 1));
    TRY(set_int(out, "services", 1));
    TRY(set_int(out, "services.loadbalancers", lb ? 1 : 0));
    return set_int(out, "services.nodeports", np ? n : 0);
}

/* GetPersistentVolumeClaimClass: the beta annotation wins, even when empty. */
static const char *pvc_class(const json_t *pvc)
{
    const json_t *a =
        jget(pvc, "metadata", "annotations", "volume.beta.kubernetes.io/storage-class");
    if (json_is_string(a)) return json_string_value(a);
    return jtext(pvc, "spec", "storageClassName");
}

/* getStorageUsage: the request rounded up to whole bytes, or the allocated size
 * when larger. Returns 1 with *out set, 0 when there is no storage request. */
static int pvc_storage(const json_t *pvc, qty *out)
{
    const json_t *req = jget(pvc, "spec", "resources", "requests", "storage");
    const json_t *alloc = jget(pvc, "status", "allocatedResources", "storage");
    qty a;
    if (!req) return 0;
    if (qty_from_json(req, out)) return QUOTA_EINVAL;
    qty_round_up(out, 0);
    if (alloc && !json_is_null(alloc)) {
        if (qty_from_json(alloc, &a)) return QUOTA_EINVAL;
        qty_round_up(&a, 0);
        if (qty_cmp(&a, out) > 0) *out = a;
    }
    return 1;
}

static int pvc_usage(const json_t *pvc, rlist *out)
{
    const char *cls = pvc_class(pvc);
    char name[512];
    qty storage;
    TRY(set_int(out, "persistentvolumeclaims", 1));
    TRY(set_int(out, "count/persistentvolumeclaims", 1));
    snprintf(name, sizeof name, "%s" SC_SUFFIX "persistentvolumeclaims", cls);
    if (*cls) TRY(set_int(out, name, 1));
    int has = pvc_storage(pvc, &storage);
    if (has <= 0) return has;
    TRY(set_q(out, "requests.storage", &storage));
    snprintf(name, sizeof name, "%s" SC_SUFFIX "requests.storage", cls);
    return *cls ? set_q(out, name, &storage) : 0;
}

static int count_usage(const char *group, const char *resource, rlist *out)
{
    char cn[512];
    count_name(group, resource, cn, sizeof cn);
    TRY(set_int(out, cn, 1));
    if ((!group || !*group) && in_set(legacy_counts, resource)) return set_int(out, resource, 1);
    return 0;
}

int quota_usage(const char *group, const char *resource, const json_t *obj, int64_t now, rlist *out)
{
    rl_clear(out);
    switch (kind_of(group, resource)) {
    case K_POD:
        return pod_usage(obj, now, out);
    case K_SVC:
        return svc_usage(obj, out);
    case K_PVC:
        return pvc_usage(obj, out);
    case K_COUNT:
        break;
    }
    return count_usage(group, resource, out);
}

/* RequiresQuotaReplenish: allocated storage or the referenced VAC set changed. */
static bool pvc_requires_replenish(const json_t *pvc, const json_t *old)
{
    const json_t *a = jget(pvc, "status", "allocatedResources", "storage");
    const json_t *b = jget(old, "status", "allocatedResources", "storage");
    qty qa, qb;
    if (qty_from_json(a, &qa) || qty_from_json(b, &qb) || qty_cmp(&qa, &qb) != 0) return true;
    const char *na[3], *nb[3];
    size_t ka = pvc_vac_names(pvc, na), kb = pvc_vac_names(old, nb);
    if (ka != kb) return true;
    for (size_t i = 0; i < ka; i++) {
        bool found = false;
        for (size_t j = 0; j < kb; j++)
            found |= strcmp(na[i], nb[j]) == 0;
        if (!found) return true;
    }
    return false;
}

bool quota_handles(const char *group, const char *resource, quota_op op, const char *sub,
                   const json_t *obj, const json_t *old)
{
    sub = sub ? sub : "";
    bool write = op == QUOTA_CREATE || op == QUOTA_UPDATE;
    switch (kind_of(group, resource)) {
    case K_POD:
        if (*sub) return strcmp(sub, "resize") == 0 && op == QUOTA_UPDATE;
        /* An update is charged only when the pod moves between Terminating scopes. */
        return op == QUOTA_CREATE || (op == QUOTA_UPDATE && quota_pod_is_terminating(obj) !=
                                                                quota_pod_is_terminating(old));
    case K_SVC:
        return write;
    case K_PVC:
        if (!*sub) return write;
        return strcmp(sub, "status") == 0 && op == QUOTA_UPDATE && pvc_requires_replenish(obj, old);
    case K_COUNT:
        break;
    }
    return op == QUOTA_CREATE && !*sub;
}

/* ---- controller recount ---------------------------------------------------------------------- */

static int spec_hard(const json_t *quota, rlist *hard)
{
    return read_list(jget(quota, "spec", "hard"), hard);
}

int quota_recount_begin(const json_t *quota, const char *group, const char *resource, rlist *acc)
{
    rlist *hard = rl_new(), *owned = rl_new();
    int rc = hard && owned ? 0 : QUOTA_ENOMEM;
    if (!rc) rc = spec_hard(quota, hard);
    if (!rc) rc = quota_matching_resources(group, resource, hard, owned);
    for (size_t i = 0; !rc && i < rl_len(owned); i++)
        rc = rl_add_name(acc, rl_name(owned, i)) ? QUOTA_ENOMEM : 0;
    if (!rc) rc = (int)rl_len(owned);
    rl_free(hard);
    rl_free(owned);
    return rc;
}

quota_recount_ctx *quota_recount_prepare(const json_t *quota, const char *group,
                                         const char *resource)
{
    quota_recount_ctx *c = ctx_new(jget(quota, "spec"), kind_of(group, resource));
    if (!c) return NULL;
    c->hard = rl_new();
    /* Unparsable hard: quota_status_used_for fails anyway; keep every key meanwhile. */
    if (c->hard && spec_hard(quota, c->hard)) {
        rl_free(c->hard);
        c->hard = NULL;
    } else if (!c->hard) {
        quota_recount_ctx_free(c);
        return NULL;
    }
    for (size_t t = 0; t < sizeof known_names / sizeof known_names[0]; t++)
        for (size_t i = 0; known_names[t][i]; i++)
            c->known_in_hard[t][i] = !c->hard || rl_has(c->hard, known_names[t][i]);
    return c;
}

/* Whether a usage entry's name is a key of spec.hard. */
static bool in_hard(const quota_recount_ctx *c, unsigned code, const char *name)
{
    if (code != NAME_INLINE) return c->known_in_hard[code >> 4][code & 15];
    return !c->hard || rl_has(c->hard, name);
}

/* acc[name] += q, as upstream's quota.Add. */
static int acc_add(rlist *acc, const char *name, const qty *q)
{
    const qty *cur = rl_get(acc, name);
    qty sum = cur ? *cur : *q;
    if (cur) TRY(qerr(qty_add(&sum, q)));
    return set_q(acc, name, &sum);
}

int quota_recount_add_facts(quota_recount_ctx *c, const quota_facts *f, rlist *acc)
{
    char err[256];
    if (f->kind != c->kind) return QUOTA_EINVAL; /* facts of another kind: a caller bug */
    if (quota_recount_matches(c, f, err, sizeof err) <= 0) return 0;
    if (f->usage_rc) return f->usage_rc;
    const unsigned char *p = f->data;
    for (size_t i = 0; i < f->nstr; i++)
        p += strlen((const char *)p) + 1;
    for (uint32_t i = 0; i < f->nusage; i++) {
        const char *name;
        qty q;
        unsigned code = *p;
        p = entry_unpack(p, &name, &q);
        /* Keys outside spec.hard would be masked out of status.used anyway. */
        if (in_hard(c, code, name)) TRY(acc_add(acc, name, &q));
    }
    return 1;
}

int quota_recount_add(const json_t *quota, const char *group, const char *resource,
                      const json_t *obj, int64_t now, rlist *acc)
{
    quota_recount_ctx *c = quota_recount_prepare(quota, group, resource);
    quota_facts *f = c ? quota_facts_new(group, resource, obj, now) : NULL;
    int rc = f ? quota_recount_add_facts(c, f, acc) : QUOTA_ENOMEM;
    quota_facts_free(f);
    quota_recount_ctx_free(c);
    return rc;
}

json_t *quota_status_used_for(const json_t *quota, const rlist *acc)
{
    rlist *used = rl_new(), *hard = rl_new(), *masked = NULL;
    json_t *out = NULL;
    if (!used || !hard) goto done;
    if (read_list(jget(quota, "status", "used"), used) || spec_hard(quota, hard)) goto done;
    for (size_t i = 0; i < rl_len(acc); i++)
        if (rl_set(used, rl_name(acc, i), rl_qty(acc, i))) goto done;
    masked = rl_mask(used, hard);
    if (masked) out = rl_to_json(masked);
done:
    rl_free(used);
    rl_free(hard);
    rl_free(masked);
    return out;
}
