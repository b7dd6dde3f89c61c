/* rq_validation.c - ResourceQuota validation (see rq_validation.h).
 *
 * Order of causes follows upstream: for each hard key (sorted here) the name
 * errors then the value errors, then spec.scopes, then spec.scopeSelector.
 * Upstream prints a bad value with field.ErrorBody; ferr_add renders
 * structured values (the scopes slice, the selector) as compact JSON, the
 * project-wide rendering (spec section 6.5).
 */
#include "api/rq_validation.h"

#include "api/core_validation.h"
#include "api/status.h"
#include "api/validation.h"
#include "core/names.h"
#include "core/quantity.h"

#include "core/quota_eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- resource-name tables (helpers.go) ---- */

static const char *const standard_resources[] = {
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
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
    NULL,
};

static const char *const integer_resources[] = {
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
    NULL,
};

/* Scopes: name, and which resources (NULL list: any) the scope may limit. */
static const char *const pod_scope_resources[] = {
    "pods", "cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory", NULL,
};
static const char *const besteffort_resources[] = {"pods", NULL};
static const char *const vac_resources[] = {"persistentvolumeclaims", "requests.storage", NULL};

static const struct {
    const char *name;
    const char *const *resources;
    bool exists_only; /* operator must be Exists in a scopeSelector */
} scopes[] = {
    {"Terminating", pod_scope_resources, true},
    {"NotTerminating", pod_scope_resources, true},
    {"BestEffort", besteffort_resources, true},
    {"NotBestEffort", pod_scope_resources, true},
    {"PriorityClass", pod_scope_resources, false},
    {"CrossNamespacePodAffinity", pod_scope_resources, true},
    /* Present in releases with VolumeAttributesClass quota (1.31+). */
    {"VolumeAttributesClass", vac_resources, false},
};
#define NSCOPES (sizeof scopes / sizeof *scopes)

static bool in_list(const char *const *list, const char *s)
{
    for (; *list; list++)
        if (strcmp(*list, s) == 0) return true;
    return false;
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

bool rq_is_hugepage_resource_name(const char *name)
{
    return has_prefix(name, "hugepages-");
}

static bool is_quota_hugepage(const char *name)
{
    return has_prefix(name, "hugepages-") || has_prefix(name, "requests.hugepages-");
}

bool rq_is_standard_resource_name(const char *name)
{
    return in_list(standard_resources, name) || is_quota_hugepage(name);
}

bool rq_is_standard_quota_resource_name(const char *name)
{
    return strcmp(name, "storage") != 0 && rq_is_standard_resource_name(name);
}

bool rq_is_standard_container_resource_name(const char *name)
{
    return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
           strcmp(name, "ephemeral-storage") == 0 || rq_is_hugepage_resource_name(name);
}

bool rq_is_native_resource(const char *name)
{
    return quota_is_native_resource(name);
}

bool rq_is_extended_resource_name(const char *name)
{
    return quota_is_extended_resource_name(name);
}

/* Note: `count/pods` is extended by this definition ("requests.count/pods" is
 * a qualified name), so upstream does require count/... quotas to be whole. */
bool rq_is_integer_resource_name(const char *name)
{
    return in_list(integer_resources, name) || rq_is_extended_resource_name(name);
}

bool rq_is_overcommit_allowed(const char *name)
{
    return rq_is_native_resource(name) && !rq_is_hugepage_resource_name(name);
}

static int scope_index(const char *scope)
{
    for (size_t i = 0; i < NSCOPES; i++)
        if (strcmp(scopes[i].name, scope) == 0) return (int)i;
    return -1;
}

bool rq_is_standard_scope(const char *scope)
{
    return scope_index(scope) >= 0;
}

bool rq_scope_valid_for_resource(const char *scope, const char *resource)
{
    int i = scope_index(scope);
    return i < 0 || in_list(scopes[i].resources, resource);
}

/* ---- names ---- */

int rq_validate_resource_name(const char *name, const char *field, json_t *causes)
{
    int n = val_qualified_name(name, field, causes);
    if (n) return n;
    if (!strchr(name, '/') && !rq_is_standard_resource_name(name)) {
        ferr_add_str(causes, FERR_INVALID, field, name, RQ_MSG_NOT_STANDARD);
        return 1;
    }
    return 0;
}

int rq_validate_quota_resource_name(const char *name, const char *field, json_t *causes)
{
    int n = rq_validate_resource_name(name, field, causes);
    if (!strchr(name, '/') && !rq_is_standard_quota_resource_name(name)) {
        ferr_add_str(causes, FERR_INVALID, field, name, RQ_MSG_NOT_QUOTA);
        n++;
    }
    return n;
}

int rq_validate_container_resource_name(const char *name, const char *field, json_t *causes)
{
    int n = rq_validate_resource_name(name, field, causes);
    if (!strchr(name, '/')) {
        if (!rq_is_standard_container_resource_name(name)) {
            ferr_add_str(causes, FERR_INVALID, field, name,
                         "must be a standard resource for containers");
            n++;
        }
    } else if (!rq_is_native_resource(name) && !rq_is_extended_resource_name(name)) {
        ferr_add_str(causes, FERR_INVALID, field, name,
                     "doesn't follow extended resource name standard");
        n++;
    }
    return n;
}

/* ---- values ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char **rq_sorted_keys(const json_t *obj, size_t *n)
{
    *n = 0;
    size_t total = json_is_object(obj) ? json_object_size(obj) : 0;
    if (total == 0) return NULL;
    const char **keys = malloc(total * sizeof *keys);
    if (!keys) return NULL;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        (void)v;
        keys[(*n)++] = k;
    }
    qsort(keys, *n, sizeof *keys, cmp_str);
    return keys;
}

int rq_validate_quantity_value(const char *name, const json_t *v, const char *field, json_t *causes)
{
    qty q;
    int rc = qty_from_json(v, &q);
    if (rc != QTY_OK) {
        ferr_add(causes, FERR_INVALID, field, v, qty_strerror(rc));
        return 1;
    }
    char buf[QTY_STR_MAX];
    qty_format_str(&q, buf, sizeof buf);
    int n = 0;
    if (qty_sign(&q) < 0) {
        ferr_add_str(causes, FERR_INVALID, field, buf, RQ_MSG_NEGATIVE);
        n++;
    }
    if (rq_is_integer_resource_name(name) && qty_milli_value(&q) % 1000 != 0) {
        ferr_add_str(causes, FERR_INVALID, field, buf, RQ_MSG_NOT_INTEGER);
        n++;
    }
    return n;
}

int rq_validate_resource_list(const json_t *list, const char *field, json_t *causes)
{
    if (cv_type_check(list, CV_OBJECT, field, causes)) return 1;
    size_t nkeys;
    const char **keys = rq_sorted_keys(list, &nkeys);
    int n = 0;
    for (size_t i = 0; i < nkeys; i++) {
        size_t len = strlen(field) + strlen(keys[i]) + 3;
        char *path = malloc(len);
        if (!path) break;
        snprintf(path, len, "%s[%s]", field, keys[i]);
        n += rq_validate_quota_resource_name(keys[i], path, causes);
        n += rq_validate_quantity_value(keys[i], json_object_get(list, keys[i]), path, causes);
        free(path);
    }
    free(keys);
    return n;
}

/* ---- scopes ---- */

/* Standard quota resources among the hard keys that `scope` may not limit:
 * one cause per offending key, as upstream. */
static void scope_vs_hard(const char *scope, const char **keys, size_t nkeys, const char *field,
                          const json_t *bad, json_t *causes)
{
    for (size_t i = 0; i < nkeys; i++)
        if (rq_is_standard_quota_resource_name(keys[i]) &&
            !rq_scope_valid_for_resource(scope, keys[i]))
            ferr_add(causes, FERR_INVALID, field, bad, RQ_MSG_SCOPE_RESOURCE);
}

static bool set_has(const char *const *set, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(set[i], s) == 0) return true;
    return false;
}

/* BestEffort+NotBestEffort and Terminating+NotTerminating cannot combine. */
static void conflicting(const char *const *set, size_t n, const char *field, const json_t *bad,
                        json_t *causes)
{
    if (set_has(set, n, "BestEffort") && set_has(set, n, "NotBestEffort"))
        ferr_add(causes, FERR_INVALID, field, bad, RQ_MSG_CONFLICTING);
    if (set_has(set, n, "Terminating") && set_has(set, n, "NotTerminating"))
        ferr_add(causes, FERR_INVALID, field, bad, RQ_MSG_CONFLICTING);
}

static const char *str_or_empty(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : "";
}

static void validate_scopes(const json_t *spec, const char **keys, size_t nkeys, json_t *causes)
{
    const json_t *sc = json_object_get(spec, "scopes");
    size_t n = json_array_size(sc);
    if (n == 0) return;
    const char **set = malloc(n * sizeof *set);
    if (!set) return;
    for (size_t i = 0; i < n; i++) {
        const char *s = str_or_empty(json_array_get(sc, i));
        if (!rq_is_standard_scope(s))
            ferr_add(causes, FERR_INVALID, "spec.scopes", sc, RQ_MSG_UNSUPPORTED_SCOPE);
        scope_vs_hard(s, keys, nkeys, "spec.scopes", sc, causes);
        set[i] = s;
    }
    conflicting(set, n, "spec.scopes", sc, causes);
    free(set);
}

static void validate_requirement(const json_t *req, const json_t *sel, const char **keys,
                                 size_t nkeys, json_t *causes)
{
    const char *path = "spec.scopeSelector.matchExpressions";
    const char *scope = str_or_empty(json_object_get(req, "scopeName"));
    const char *op = str_or_empty(json_object_get(req, "operator"));
    const json_t *values = json_object_get(req, "values");
    int si = scope_index(scope);
    if (si < 0)
        ferr_add_str(causes, FERR_INVALID, "spec.scopeSelector.matchExpressions.scopeName", scope,
                     RQ_MSG_UNSUPPORTED_SCOPE);
    scope_vs_hard(scope, keys, nkeys, path, sel, causes);
    if (si >= 0 && scopes[si].exists_only && strcmp(op, "Exists") != 0)
        ferr_add_str(causes, FERR_INVALID, "spec.scopeSelector.matchExpressions.operator", op,
                     RQ_MSG_OP_EXISTS);
    if (strcmp(op, "In") == 0 || strcmp(op, "NotIn") == 0) {
        if (json_array_size(values) == 0)
            ferr_add(causes, FERR_REQUIRED, "spec.scopeSelector.matchExpressions.values", NULL,
                     RQ_MSG_VALUES_REQUIRED);
    } else if (strcmp(op, "Exists") == 0 || strcmp(op, "DoesNotExist") == 0) {
        if (json_array_size(values) != 0)
            ferr_add(causes, FERR_INVALID, "spec.scopeSelector.matchExpressions.values", values,
                     RQ_MSG_VALUES_FORBIDDEN);
    } else {
        ferr_add_str(causes, FERR_INVALID, "spec.scopeSelector.matchExpressions.operator", op,
                     RQ_MSG_BAD_OPERATOR);
    }
}

static void validate_scope_selector(const json_t *spec, const char **keys, size_t nkeys,
                                    json_t *causes)
{
    const json_t *sel = json_object_get(spec, "scopeSelector");
    if (!json_is_object(sel)) return;
    const json_t *exprs = json_object_get(sel, "matchExpressions");
    size_t n = json_array_size(exprs);
    const char **set = n ? malloc(n * sizeof *set) : NULL;
    if (n && !set) return;
    for (size_t i = 0; i < n; i++) {
        const json_t *req = json_array_get(exprs, i);
        validate_requirement(req, sel, keys, nkeys, causes);
        set[i] = str_or_empty(json_object_get(req, "scopeName"));
    }
    /* Upstream reports spec.scopes (not the selector) as the bad value here. */
    conflicting(set, n, "spec.scopeSelector.matchExpressions", json_object_get(spec, "scopes"),
                causes);
    free(set);
}

/* ---- entry points ---- */

/* allot only: the JSON types of the fields read here and by the quota
 * evaluators (upstream refuses other types when it decodes the body). */
static int shape_strings(const json_t *arr, const char *field, json_t *causes)
{
    if (cv_type_check(arr, CV_ARRAY, field, causes)) return 1;
    size_t i;
    const json_t *v;
    char path[128];
    int n = 0;
    json_array_foreach(arr, i, v)
    {
        snprintf(path, sizeof path, "%s[%zu]", field, i);
        n += cv_type_check(v, CV_STRING, path, causes);
    }
    return n;
}

static int shape_requirement(const json_t *req, size_t i, json_t *causes)
{
    char path[128];
    snprintf(path, sizeof path, "spec.scopeSelector.matchExpressions[%zu]", i);
    if (cv_type_check(req, CV_OBJECT, path, causes)) return 1;
    snprintf(path, sizeof path, "spec.scopeSelector.matchExpressions[%zu].scopeName", i);
    int n = cv_type_check(json_object_get(req, "scopeName"), CV_STRING, path, causes);
    snprintf(path, sizeof path, "spec.scopeSelector.matchExpressions[%zu].operator", i);
    n += cv_type_check(json_object_get(req, "operator"), CV_STRING, path, causes);
    snprintf(path, sizeof path, "spec.scopeSelector.matchExpressions[%zu].values", i);
    return n + shape_strings(json_object_get(req, "values"), path, causes);
}

static int shape(const json_t *obj, json_t *causes)
{
    const json_t *spec = json_object_get(obj, "spec"), *status = json_object_get(obj, "status");
    int n = cv_type_check(spec, CV_OBJECT, "spec", causes) +
            cv_type_check(status, CV_OBJECT, "status", causes);
    if (n) return n;
    n += shape_strings(json_object_get(spec, "scopes"), "spec.scopes", causes);
    const json_t *sel = json_object_get(spec, "scopeSelector");
    if (cv_type_check(sel, CV_OBJECT, "spec.scopeSelector", causes)) return n + 1;
    const json_t *exprs = json_object_get(sel, "matchExpressions");
    if (cv_type_check(exprs, CV_ARRAY, "spec.scopeSelector.matchExpressions", causes)) return n + 1;
    size_t i;
    const json_t *req;
    json_array_foreach(exprs, i, req) n += shape_requirement(req, i, causes);
    return n;
}

static void validate_spec(const json_t *spec, json_t *causes)
{
    const json_t *hard = json_object_get(spec, "hard");
    rq_validate_resource_list(hard, "spec.hard", causes);
    size_t nkeys;
    const char **keys = rq_sorted_keys(hard, &nkeys);
    validate_scopes(spec, keys, nkeys, causes);
    validate_scope_selector(spec, keys, nkeys, causes);
    free(keys);
}

/* The scopes of new and old as sets must be equal. */
static bool same_scope_set(const json_t *a, const json_t *b)
{
    size_t na = json_array_size(a), nb = json_array_size(b), i;
    for (i = 0; i < na; i++) {
        const char *s = str_or_empty(json_array_get(a, i));
        bool found = false;
        for (size_t j = 0; j < nb && !found; j++)
            found = strcmp(s, str_or_empty(json_array_get(b, j))) == 0;
        if (!found) return false;
    }
    for (i = 0; i < nb; i++) {
        const char *s = str_or_empty(json_array_get(b, i));
        bool found = false;
        for (size_t j = 0; j < na && !found; j++)
            found = strcmp(s, str_or_empty(json_array_get(a, j))) == 0;
        if (!found) return false;
    }
    return true;
}

void resourcequota_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    if (shape(obj, causes)) return;
    validate_spec(json_object_get(obj, "spec"), causes);
    const json_t *status = json_object_get(obj, "status");
    rq_validate_resource_list(json_object_get(status, "hard"), "status.hard", causes);
    rq_validate_resource_list(json_object_get(status, "used"), "status.used", causes);
}

void resourcequota_validate_update(const json_t *obj, const json_t *old, const char *sub,
                                   json_t *causes)
{
    if (*sub) return; /* status: ValidateResourceQuotaStatusUpdate is the validate hook's part */
    const json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec) && spec) return; /* reported by the validate hook */
    const json_t *ns = json_object_get(spec, "scopes");
    const json_t *os = json_object_get(json_object_get(old, "spec"), "scopes");
    if (!same_scope_set(ns, os))
        ferr_add(causes, FERR_INVALID, "spec.scopes", json_is_array(ns) ? ns : NULL,
                 RQ_MSG_IMMUTABLE);
}

void resourcequota_warnings(const json_t *obj, json_t *warnings)
{
    static const char *const known[] = {"cpu", "memory", "storage", "ephemeral-storage"};
    const json_t *hard = json_object_get(json_object_get(obj, "spec"), "hard");
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char req_name[64], lim_name[64];
        snprintf(req_name, sizeof req_name, "requests.%s", known[i]);
        snprintf(lim_name, sizeof lim_name, "limits.%s", known[i]);
        const json_t *req = json_object_get(hard, req_name), *lim = json_object_get(hard, lim_name);
        if (!req && i < 2 && (req = json_object_get(hard, known[i]))) /* bare cpu, memory */
            snprintf(req_name, sizeof req_name, "%s", known[i]);
        qty r, l;
        if (!req || !lim || qty_from_json(req, &r) || qty_from_json(lim, &l) ||
            qty_cmp(&r, &l) <= 0)
            continue;
        char rs[QTY_STR_MAX], ls[QTY_STR_MAX], text[2 * QTY_STR_MAX + 2 * 64 + 64];
        qty_format_str(&r, rs, sizeof rs);
        qty_format_str(&l, ls, sizeof ls);
        snprintf(text, sizeof text, "ResourceQuota %s (%s) should be less than %s (%s)", req_name,
                 rs, lim_name, ls);
        json_array_append_new(warnings, json_string(text));
    }
}
