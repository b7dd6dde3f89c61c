/* pod_validation.c - Pod validation (see pod_validation.h).
 *
 * Follows pkg/apis/core/validation: validateContainers / validateInitContainers
 * / validateEphemeralContainers, validateResourceRequirements,
 * validatePodResources, validateOverhead, ValidateTolerations,
 * ValidatePodUpdate, ValidatePodStatusUpdate and ValidatePodResize, for the
 * fields quota and scheduling read. Comparisons of specs are Go's
 * apiequality.Semantic.DeepEqual over the typed object (schema.h): a zero
 * value equals an absent field unless the field keeps zeros (pointers), nil
 * and empty lists and maps are equal, quantities compare by value.
 */
#include "api/pod_validation.h"
#include "core/jdump.h"

#include "api/objects.h"
#include "api/rq_validation.h"
#include "api/schema.h"
#include "api/status.h"
#include "api/validation.h"
#include "core/dbuf.h"
#include "core/names.h"
#include "core/quota_eval.h"
#include "core/quantity.h"
#include "core/rlist.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_LEN 768
#define MAX_INT32 2147483647
#define HUGEPAGES_PREFIX "hugepages-"
#define SUMMARY_PATHS 3 /* changed paths named in a forbidden-update message */
#define MSG_OOM "could not be validated: out of memory"
#define MSG_WHITESPACE "must not have leading or trailing whitespace"

typedef struct pv_opts {
    bool allow_indivisible_hugepages; /* upstream's AllowIndivisibleHugePagesValues */
} pv_opts;

/* ---- small helpers ---- */

static bool is_null(const json_t *v)
{
    return !v || json_is_null(v);
}

static const json_t *get(const json_t *o, const char *key)
{
    return json_is_object(o) ? json_object_get(o, key) : NULL;
}

static const char *str_of(const json_t *o, const char *key)
{
    const json_t *v = get(o, key);
    return json_is_string(v) ? json_string_value(v) : "";
}

static bool in_list(const char *const *list, const char *s)
{
    for (; list && *list; list++)
        if (strcmp(*list, s) == 0) return true;
    return false;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* len(strings.TrimSpace(s)) != len(s), for ASCII white space. */
static bool padded(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && (is_space(s[0]) || is_space(s[n - 1]));
}

static bool restartable(const json_t *ctr)
{
    return strcmp(str_of(ctr, "restartPolicy"), "Always") == 0;
}

static void add_invalid_qty(json_t *causes, const char *field, const qty *q, const char *detail)
{
    char s[QTY_STR_MAX];
    qty_format_str(q, s, sizeof s);
    ferr_add_str(causes, FERR_INVALID, field, s, detail);
}

static void path_printf(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void path_printf(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, PATH_LEN, fmt, ap);
    va_end(ap);
}

/* The sorted keys of a resource list; false (with a cause at `field`) when out
 * of memory. */
static bool sorted_keys(const json_t *list, const char *field, const char ***keys, size_t *n,
                        json_t *causes)
{
    *keys = rq_sorted_keys(list, n);
    if (*keys || !json_is_object(list) || json_object_size(list) == 0) return true;
    ferr_add(causes, FERR_FORBIDDEN, field, NULL, MSG_OOM);
    return false;
}

/* ---- quantities ---- */

/* ValidateResourceQuantityValue (`name` NULL: no integer rule). False when the
 * value does not parse: that is reported with the parser's message. */
static bool check_quantity(const char *name, const json_t *v, const char *field, json_t *causes,
                           qty *q)
{
    int rc = qty_from_json(v, q);
    if (rc != QTY_OK) {
        ferr_add(causes, FERR_INVALID, field, v, qty_strerror(rc));
        return false;
    }
    if (qty_sign(q) < 0) add_invalid_qty(causes, field, q, RQ_MSG_NEGATIVE);
    if (name && rq_is_integer_resource_name(name) && qty_milli_value(q) % 1000 != 0)
        add_invalid_qty(causes, field, q, RQ_MSG_NOT_INTEGER);
    return true;
}

/* IsHugePageResourceValueDivisible: a whole multiple of the page size the
 * name carries ("hugepages-2Mi"). */
static bool hugepage_divisible(const char *name, const qty *q)
{
    qty page;
    if (qty_parse(name + strlen(HUGEPAGES_PREFIX), &page) != QTY_OK) return false;
    if (qty_sign(&page) <= 0 || qty_milli_value(&page) % 1000 != 0) return false;
    int64_t size = qty_value(&page);
    return size > 0 && qty_value(q) % size == 0;
}

static void check_hugepage(const char *name, const qty *q, const char *field, const pv_opts *o,
                           json_t *causes)
{
    if (o->allow_indivisible_hugepages || hugepage_divisible(name, q)) return;
    char s[QTY_STR_MAX], detail[1024];
    qty_format_str(q, s, sizeof s);
    snprintf(detail, sizeof detail, "%s is not positive integer multiple of %s", s, name);
    ferr_add_str(causes, FERR_INVALID, field, s, detail);
}

/* ---- resource requirements (validateResourceRequirements) ---- */

enum { SEEN_CPU_MEMORY = 1, SEEN_HUGEPAGES = 2 };

typedef struct req_ctx {
    const char *field; /* the ResourceRequirements path: "spec.containers[0].resources" */
    bool pod_level;    /* validatePodResourceName, else validateContainerResourceName */
    const pv_opts *opts;
    json_t *causes;
} req_ctx;

/* IsSupportedPodLevelResource, as quota reads pod-level resources. */
static bool pod_level_supported(const char *name)
{
    return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
           rq_is_hugepage_resource_name(name);
}

static void check_name(const req_ctx *c, const char *name, const char *path)
{
    if (!c->pod_level) {
        rq_validate_container_resource_name(name, path, c->causes);
        return;
    }
    rq_validate_resource_name(name, path, c->causes);
    if (!pod_level_supported(name))
        ferr_add_str(c->causes, FERR_NOT_SUPPORTED, path, name,
                     "supported values: \"cpu\", \"memory\"");
}

static unsigned seen_of(const char *name)
{
    if (strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0) return SEEN_CPU_MEMORY;
    return rq_is_hugepage_resource_name(name) ? SEEN_HUGEPAGES : 0;
}

static unsigned check_limits(const req_ctx *c, const json_t *lim)
{
    char path[PATH_LEN];
    path_printf(path, "%s.limits", c->field);
    const char **keys;
    size_t n;
    if (!sorted_keys(lim, path, &keys, &n, c->causes)) return 0;
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        qty q;
        path_printf(path, "%s.limits[%s]", c->field, keys[i]);
        check_name(c, keys[i], path);
        bool ok = check_quantity(keys[i], json_object_get(lim, keys[i]), path, c->causes, &q);
        if (ok && rq_is_hugepage_resource_name(keys[i]))
            check_hugepage(keys[i], &q, path, c->opts, c->causes);
        seen |= seen_of(keys[i]);
    }
    free(keys);
    return seen;
}

/* A request against its limit: equal for resources that cannot be
 * overcommitted (and then a limit is required), else not above it. */
static void check_against_limit(const req_ctx *c, const char *name, const qty *q, const json_t *lim)
{
    char path[PATH_LEN], detail[1024], ls[QTY_STR_MAX];
    bool overcommit = rq_is_overcommit_allowed(name);
    const json_t *lv = get(lim, name);
    if (!lv) {
        path_printf(path, "%s.limits", c->field);
        if (!overcommit)
            ferr_add(c->causes, FERR_REQUIRED, path, NULL,
                     "Limit must be set for non overcommitable resources");
        return;
    }
    qty l;
    if (qty_from_json(lv, &l) != QTY_OK) return; /* reported with the limits */
    int cmp = qty_cmp(q, &l);
    qty_format_str(&l, ls, sizeof ls);
    path_printf(path, "%s.requests", c->field);
    if (cmp != 0 && !overcommit) {
        snprintf(detail, sizeof detail, "must be equal to %s limit of %s", name, ls);
        add_invalid_qty(c->causes, path, q, detail);
    } else if (cmp > 0) {
        snprintf(detail, sizeof detail, "must be less than or equal to %s limit of %s", name, ls);
        add_invalid_qty(c->causes, path, q, detail);
    }
}

static unsigned check_requests(const req_ctx *c, const json_t *req, const json_t *lim)
{
    char path[PATH_LEN];
    path_printf(path, "%s.requests", c->field);
    const char **keys;
    size_t n;
    if (!sorted_keys(req, path, &keys, &n, c->causes)) return 0;
    unsigned seen = 0;
    for (size_t i = 0; i < n; i++) {
        qty q;
        path_printf(path, "%s.requests[%s]", c->field, keys[i]);
        check_name(c, keys[i], path);
        if (check_quantity(keys[i], json_object_get(req, keys[i]), path, c->causes, &q)) {
            check_against_limit(c, keys[i], &q, lim);
            if (rq_is_hugepage_resource_name(keys[i]))
                check_hugepage(keys[i], &q, path, c->opts, c->causes);
        }
        seen |= seen_of(keys[i]);
    }
    free(keys);
    return seen;
}

static void validate_requirements(const json_t *lim, const json_t *req, const req_ctx *c)
{
    unsigned seen = check_limits(c, lim) | check_requests(c, req, lim);
    if (!(seen & SEEN_CPU_MEMORY) && (seen & SEEN_HUGEPAGES))
        ferr_add(c->causes, FERR_FORBIDDEN, c->field, NULL, "HugePages require cpu or memory");
}

static void validate_resources(const json_t *res, const char *field, bool pod_level,
                               const pv_opts *o, json_t *causes)
{
    req_ctx c = {field, pod_level, o, causes};
    validate_requirements(get(res, "limits"), get(res, "requests"), &c);
}

/* ---- containers ---- */

/* validateContainerCommon, for the fields allot reads: name, image, resources. */
static void validate_container(const json_t *ctr, const char *path, const pv_opts *o,
                               json_t *causes)
{
    char f[PATH_LEN];
    const char *name = str_of(ctr, "name");
    path_printf(f, "%s.name", path);
    if (!*name)
        ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
    else
        val_dns1123_label(name, f, causes);
    path_printf(f, "%s.image", path);
    if (!*str_of(ctr, "image")) ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
    path_printf(f, "%s.resources", path);
    validate_resources(get(ctr, "resources"), f, false, o, causes);
}

/* Duplicate names: `names` is a JSON object used as a set (NULL: out of
 * memory, reported once by the caller). */
static void check_unique(json_t *names, const char *name, bool insert_empty, const char *path,
                         json_t *causes)
{
    char f[PATH_LEN];
    if (!names) return;
    if (json_object_get(names, name)) {
        path_printf(f, "%s.name", path);
        ferr_add_str(causes, FERR_DUPLICATE, f, name, NULL);
    } else if (*name || insert_empty) {
        json_object_set_new(names, name, json_true());
    }
}

static void validate_regular(const json_t *spec, const pv_opts *o, json_t *names, json_t *causes)
{
    const json_t *list = get(spec, "containers");
    if (json_array_size(list) == 0) {
        ferr_add(causes, FERR_REQUIRED, "spec.containers", NULL, NULL);
        return;
    }
    char path[PATH_LEN], f[PATH_LEN];
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        path_printf(path, "spec.containers[%zu]", i);
        validate_container(c, path, o, causes);
        check_unique(names, str_of(c, "name"), true, path, causes);
        if (!is_null(get(c, "restartPolicy"))) {
            path_printf(f, "%s.restartPolicy", path);
            ferr_add(causes, FERR_FORBIDDEN, f, NULL, "may not be set for non-init containers");
        }
    }
}

static void validate_init(const json_t *spec, const pv_opts *o, json_t *names, json_t *causes)
{
    char path[PATH_LEN], f[PATH_LEN];
    size_t i;
    json_t *c;
    json_array_foreach(get(spec, "initContainers"), i, c)
    {
        path_printf(path, "spec.initContainers[%zu]", i);
        validate_container(c, path, o, causes);
        const json_t *rp = get(c, "restartPolicy");
        if (!is_null(rp) && !restartable(c)) {
            path_printf(f, "%s.restartPolicy", path);
            ferr_add(causes, FERR_NOT_SUPPORTED, f, rp, "supported values: \"Always\"");
        }
        check_unique(names, str_of(c, "name"), false, path, causes);
    }
}

/* Fields of EphemeralContainerCommon outside upstream's allow list, in the
 * order of the Go struct. */
static const char *const ephemeral_forbidden[] = {
    "ports",        "resources", "resizePolicy", "restartPolicy", "livenessProbe", "readinessProbe",
    "startupProbe", "lifecycle", NULL,
};

/* validateFieldAllowList: set means not the Go zero value; resources is a
 * struct, so `{}` is zero. */
static void ephemeral_fields(const json_t *c, const char *path, json_t *causes)
{
    char f[PATH_LEN];
    for (const char *const *k = ephemeral_forbidden; *k; k++) {
        const json_t *v = get(c, *k);
        if (is_null(v)) continue;
        if (strcmp(*k, "resources") == 0 && json_is_object(v) && json_object_size(v) == 0) continue;
        path_printf(f, "%s.%s", path, *k);
        ferr_add(causes, FERR_FORBIDDEN, f, NULL, "cannot be set for an Ephemeral Container");
    }
}

static void validate_ephemeral(const json_t *spec, const pv_opts *o, json_t *names, json_t *causes)
{
    char path[PATH_LEN], f[PATH_LEN];
    size_t i;
    json_t *c;
    json_array_foreach(get(spec, "ephemeralContainers"), i, c)
    {
        path_printf(path, "spec.ephemeralContainers[%zu]", i);
        validate_container(c, path, o, causes);
        const char *image = str_of(c, "image");
        if (padded(image)) {
            path_printf(f, "%s.image", path);
            ferr_add_str(causes, FERR_INVALID, f, image, MSG_WHITESPACE);
        }
        check_unique(names, str_of(c, "name"), true, path, causes);
        ephemeral_fields(c, path, causes);
    }
}

/* validateContainersOnlyForPod: images without surrounding white space. */
static void image_whitespace(const json_t *spec, const char *list, json_t *causes)
{
    char f[PATH_LEN];
    size_t i;
    json_t *c;
    json_array_foreach(get(spec, list), i, c)
    {
        const char *image = str_of(c, "image");
        if (!padded(image)) continue;
        path_printf(f, "spec.%s[%zu].image", list, i);
        ferr_add_str(causes, FERR_INVALID, f, image, MSG_WHITESPACE);
    }
}

static void validate_all_containers(const json_t *spec, const pv_opts *o, json_t *causes)
{
    json_t *names = json_object();
    if (!names) ferr_add(causes, FERR_FORBIDDEN, "spec.containers", NULL, MSG_OOM);
    validate_regular(spec, o, names, causes);
    validate_init(spec, o, names, causes);
    validate_ephemeral(spec, o, names, causes);
    json_decref(names);
}

/* ---- pod-level resources (validatePodResources) ---- */

/* out = max(out, b), per name. */
static int max_into(rlist *out, const rlist *b)
{
    for (size_t i = 0; i < rl_len(b); i++) {
        const qty *cur = rl_get(out, rl_name(b, i));
        if ((!cur || qty_cmp(rl_qty(b, i), cur) > 0) && rl_set(out, rl_name(b, i), rl_qty(b, i)))
            return -1;
    }
    return 0;
}

/* A container's requests that parse, into out (cleared). */
static int container_requests(const json_t *ctr, rlist *out)
{
    rl_clear(out);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)get(get(ctr, "resources"), "requests"), k, v)
    {
        qty q;
        if (qty_from_json(v, &q) == QTY_OK && rl_set(out, k, &q) != 0) return -1;
    }
    return 0;
}

/* Init containers into the running sum `sum` (sidecars) and the maximum over
 * init containers, as AggregateContainerRequests. */
static int add_init_requests(const json_t *spec, rlist *sum, rlist *c)
{
    rlist *side = rl_new(), *init_max = rl_new();
    int rc = side && init_max ? 0 : -1;
    size_t i;
    json_t *ic;
    json_array_foreach(get(spec, "initContainers"), i, ic)
    {
        bool sidecar = restartable(ic);
        if (!rc) rc = container_requests(ic, c);
        if (!rc && sidecar) rc = rl_add_to(sum, c) || rl_add_to(side, c) ? -1 : 0;
        if (!rc && !sidecar) rc = rl_add_to(c, side) ? -1 : 0;
        if (!rc) rc = max_into(init_max, sidecar ? side : c);
    }
    if (!rc) rc = max_into(sum, init_max);
    rl_free(side);
    rl_free(init_max);
    return rc;
}

/* AggregateContainerRequests (spec only); NULL when out of memory. */
static rlist *aggregate_requests(const json_t *spec)
{
    rlist *sum = rl_new(), *c = rl_new();
    int rc = sum && c ? 0 : -1;
    size_t i;
    json_t *ctr;
    json_array_foreach(get(spec, "containers"), i, ctr)
    {
        if (!rc) rc = container_requests(ctr, c);
        if (!rc) rc = rl_add_to(sum, c) ? -1 : 0;
    }
    if (!rc) rc = add_init_requests(spec, sum, c);
    rl_free(c);
    if (rc) {
        rl_free(sum);
        return NULL;
    }
    return sum;
}

/* Pod-level requests at least the containers' aggregate (for the resources
 * the pod level names: allot does not default the others). */
static void requests_cover_containers(const json_t *spec, const json_t *preq, json_t *causes)
{
    rlist *agg = aggregate_requests(spec);
    if (!agg) {
        ferr_add(causes, FERR_FORBIDDEN, "spec.resources.requests", NULL, MSG_OOM);
        return;
    }
    char path[PATH_LEN], detail[1024], as[QTY_STR_MAX];
    for (size_t i = 0; i < rl_len(agg); i++) {
        qty p;
        const json_t *pv = get(preq, rl_name(agg, i));
        if (!pv || qty_from_json(pv, &p) != QTY_OK || qty_cmp(rl_qty(agg, i), &p) <= 0) continue;
        qty_format_str(rl_qty(agg, i), as, sizeof as);
        path_printf(path, "spec.resources.requests[%s]", rl_name(agg, i));
        snprintf(detail, sizeof detail,
                 "must be greater than or equal to aggregate container "
                 "requests of %s",
                 as);
        add_invalid_qty(causes, path, &p, detail);
    }
    rl_free(agg);
}

/* Each container's limit at most the pod-level limit. Upstream's odd path
 * (spec.resources.containers[i][name].limits) is kept. */
static void limits_within_pod(const json_t *spec, const json_t *plim, json_t *causes)
{
    char path[PATH_LEN], detail[1024], ps[QTY_STR_MAX];
    size_t i;
    json_t *c;
    json_array_foreach(get(spec, "containers"), i, c)
    {
        const json_t *lim = get(get(c, "resources"), "limits");
        const char **keys;
        size_t n;
        if (!sorted_keys(lim, "spec.resources", &keys, &n, causes)) return;
        for (size_t k = 0; k < n; k++) {
            qty cl, pl;
            const json_t *pv = get(plim, keys[k]);
            if (!pv || qty_from_json(pv, &pl) != QTY_OK ||
                qty_from_json(json_object_get(lim, keys[k]), &cl) != QTY_OK ||
                qty_cmp(&cl, &pl) <= 0)
                continue;
            qty_format_str(&pl, ps, sizeof ps);
            path_printf(path, "spec.resources.containers[%zu][%s].limits", i, keys[k]);
            snprintf(detail, sizeof detail, "must be less than or equal to pod limits of %s", ps);
            add_invalid_qty(causes, path, &cl, detail);
        }
        free(keys);
    }
}

static void validate_pod_resources(const json_t *spec, const pv_opts *o, json_t *causes)
{
    const json_t *res = get(spec, "resources");
    if (is_null(res)) return;
    if (!is_null(get(res, "claims")))
        ferr_add(causes, FERR_FORBIDDEN, "spec.resources.claims", NULL,
                 "claims cannot be set for Resources at pod-level");
    validate_resources(res, "spec.resources", true, o, causes);
    requests_cover_containers(spec, get(res, "requests"), causes);
    limits_within_pod(spec, get(res, "limits"), causes);
}

/* validateOverhead: the overhead validated as the limits of a requirement. */
static void validate_overhead(const json_t *spec, const pv_opts *o, json_t *causes)
{
    const json_t *oh = get(spec, "overhead");
    if (is_null(oh)) return;
    req_ctx c = {"spec.overhead", false, o, causes};
    validate_requirements(oh, NULL, &c);
}

/* ---- scheduling fields ---- */

static void validate_active_deadline(const json_t *spec, json_t *causes)
{
    const json_t *v = get(spec, "activeDeadlineSeconds");
    if (!json_is_integer(v)) return;
    json_int_t n = json_integer_value(v);
    if (n < 1 || n > MAX_INT32)
        ferr_add(causes, FERR_INVALID, "spec.activeDeadlineSeconds", v,
                 "must be between 1 and 2147483647, inclusive");
}

static void toleration_operator(const json_t *t, const char *path, json_t *causes)
{
    char f[PATH_LEN];
    const char *op = str_of(t, "operator"), *value = str_of(t, "value");
    path_printf(f, "%s.operator", path);
    if (!*op || strcmp(op, "Equal") == 0) {
        name_msgs m = {0};
        if (name_label_value(value, &m) == 0) return;
        char joined[1024];
        name_msgs_join(&m, ";", joined, sizeof joined);
        ferr_add_str(causes, FERR_INVALID, f, value, joined);
    } else if (strcmp(op, "Exists") == 0) {
        if (*value)
            ferr_add_str(causes, FERR_INVALID, f, value,
                         "value must be empty when `operator` is 'Exists'");
    } else {
        ferr_add_str(causes, FERR_NOT_SUPPORTED, f, op, "supported values: \"Equal\", \"Exists\"");
    }
}

static bool valid_taint_effect(const char *e)
{
    return strcmp(e, "NoSchedule") == 0 || strcmp(e, "PreferNoSchedule") == 0 ||
           strcmp(e, "NoExecute") == 0;
}

static void validate_toleration(const json_t *t, const char *path, json_t *causes)
{
    char f[PATH_LEN];
    const char *key = str_of(t, "key"), *op = str_of(t, "operator"), *effect = str_of(t, "effect");
    if (*key) {
        path_printf(f, "%s.key", path);
        val_qualified_name(key, f, causes);
    }
    if (!*key && strcmp(op, "Exists") != 0) {
        path_printf(f, "%s.operator", path);
        ferr_add_str(causes, FERR_INVALID, f, op,
                     "operator must be Exists when `key` is empty, which means \"match all "
                     "values and all keys\"");
    }
    path_printf(f, "%s.effect", path);
    if (!is_null(get(t, "tolerationSeconds")) && strcmp(effect, "NoExecute") != 0)
        ferr_add_str(causes, FERR_INVALID, f, effect,
                     "effect must be 'NoExecute' when `tolerationSeconds` is set");
    toleration_operator(t, path, causes);
    if (*effect && !valid_taint_effect(effect))
        ferr_add_str(causes, FERR_NOT_SUPPORTED, f, effect,
                     "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
}

/* ValidateTolerations. */
static void validate_tolerations(const json_t *tols, json_t *causes)
{
    char path[PATH_LEN];
    size_t i;
    json_t *t;
    json_array_foreach(tols, i, t)
    {
        path_printf(path, "spec.tolerations[%zu]", i);
        validate_toleration(t, path, causes);
    }
}

/* validateSchedulingGates: qualified names, no duplicates. */
static void validate_gates(const json_t *spec, json_t *causes)
{
    json_t *seen = json_object();
    if (!seen) {
        ferr_add(causes, FERR_FORBIDDEN, "spec.schedulingGates", NULL, MSG_OOM);
        return;
    }
    char path[PATH_LEN];
    size_t i;
    json_t *g;
    json_array_foreach(get(spec, "schedulingGates"), i, g)
    {
        const char *name = str_of(g, "name");
        path_printf(path, "spec.schedulingGates[%zu]", i);
        val_qualified_name(name, path, causes);
        if (json_object_get(seen, name)) ferr_add_str(causes, FERR_DUPLICATE, path, name, NULL);
        json_object_set_new(seen, name, json_true());
    }
    json_decref(seen);
}

/* validatePodMetadataAndSpec, for the fields above (metadata is the registry's). */
static void validate_spec(const json_t *spec, const pv_opts *o, json_t *causes)
{
    validate_all_containers(spec, o, causes);
    validate_pod_resources(spec, o, causes);
    validate_gates(spec, causes);
    validate_active_deadline(spec, causes);
    validate_tolerations(get(spec, "tolerations"), causes);
    validate_overhead(spec, o, causes);
    image_whitespace(spec, "containers", causes);
    image_whitespace(spec, "initContainers", causes);
}

void pod_validate_create(const json_t *pod, json_t *causes)
{
    const json_t *spec = get(pod, "spec");
    pv_opts o = {false};
    validate_spec(spec, &o, causes);
    if (json_array_size(get(spec, "ephemeralContainers")) > 0)
        ferr_add(causes, FERR_FORBIDDEN, "spec.ephemeralContainers", NULL,
                 "cannot be set on create");
    if (*str_of(spec, "nodeName") && json_array_size(get(spec, "schedulingGates")) > 0)
        ferr_add(causes, FERR_FORBIDDEN, "spec.nodeName", NULL,
                 "cannot be set until all schedulingGates have been cleared");
}

/* usesIndivisibleHugePagesValues: an old pod keeps what it was created with. */
static bool uses_indivisible_hugepages(const json_t *spec)
{
    static const char *const lists[] = {"containers", "initContainers", NULL};
    static const char *const parts[] = {"requests", "limits", NULL};
    for (const char *const *l = lists; *l; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(get(spec, *l), i, c)
        {
            for (const char *const *p = parts; *p; p++) {
                const char *k;
                json_t *v;
                json_object_foreach((json_t *)get(get(c, "resources"), *p), k, v)
                {
                    qty q;
                    if (rq_is_hugepage_resource_name(k) && qty_from_json(v, &q) == QTY_OK &&
                        !hugepage_divisible(k, &q))
                        return true;
                }
            }
        }
    }
    return false;
}

static pv_opts update_opts(const json_t *old_spec)
{
    pv_opts o = {uses_indivisible_hugepages(old_spec)};
    return o;
}

/* ---- semantic comparison (apiequality.Semantic.DeepEqual) ---- */

typedef struct diff_ctx {
    char path[PATH_LEN]; /* where the walk is */
    size_t len;
    int found;   /* differences found */
    int limit;   /* stop after this many */
    dbuf *paths; /* NULL, or where the first SUMMARY_PATHS paths are listed */
} diff_ctx;

static size_t path_push(diff_ctx *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t path_push(diff_ctx *d, const char *fmt, ...)
{
    size_t mark = d->len;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(d->path + d->len, sizeof d->path - d->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        d->len += (size_t)n < sizeof d->path - d->len ? (size_t)n : sizeof d->path - d->len - 1;
    return mark;
}

static void path_pop(diff_ctx *d, size_t mark)
{
    d->len = mark;
    d->path[mark] = '\0';
}

static void differ(diff_ctx *d)
{
    if (d->paths && d->found < SUMMARY_PATHS)
        dbuf_printf(d->paths, "%s%s", d->found ? ", " : "", d->path);
    d->found++;
}

static bool done(const diff_ctx *d)
{
    return d->found >= d->limit;
}

/* A scalar equal to its absence: null, or Go's zero value for a field that
 * is omitted when zero (not a pointer). */
static bool scalar_zero(const sch_field *f, const json_t *v)
{
    if (is_null(v)) return true;
    if (!f || (f->flags & SCH_KEEP)) return false;
    switch (f->type) {
    case SCH_STRING:
    case SCH_BYTES:
        return json_is_string(v) && !*json_string_value(v);
    case SCH_BOOL:
        return json_is_false(v);
    case SCH_INT32:
    case SCH_INT64:
        return json_is_integer(v) && json_integer_value(v) == 0;
    default:
        return false;
    }
}

static bool same_quantity(const json_t *a, const json_t *b)
{
    if (is_null(a) || is_null(b)) return is_null(a) && is_null(b);
    qty x, y;
    if (qty_from_json(a, &x) != QTY_OK || qty_from_json(b, &y) != QTY_OK) return json_equal(a, b);
    return qty_cmp(&x, &y) == 0;
}

static bool object_or_null(const json_t *v)
{
    return is_null(v) || json_is_object(v);
}

static void diff_value(diff_ctx *d, const sch_field *f, bool elem, const json_t *a,
                       const json_t *b);

static void diff_member(diff_ctx *d, const sch_msg *m, const char *key, const json_t *a,
                        const json_t *b)
{
    size_t mark = path_push(d, ".%s", key);
    diff_value(d, m ? sch_field_find(m, key) : NULL, false, a, b);
    path_pop(d, mark);
}

/* Two structs of type m, but for the members named in `skip`. */
static void diff_members(diff_ctx *d, const sch_msg *m, const json_t *a, const json_t *b,
                         const char *const *skip)
{
    if (!object_or_null(a) || !object_or_null(b)) {
        if (!json_equal(a, b)) differ(d);
        return;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        if (done(d)) return;
        if (!in_list(skip, k)) diff_member(d, m, k, v, get(b, k));
    }
    json_object_foreach((json_t *)b, k, v)
    {
        if (done(d)) return;
        if (!in_list(skip, k) && !get(a, k)) diff_member(d, m, k, NULL, v);
    }
}

/* Two maps: the same keys, values equal (as quantities for a ResourceList). */
static void diff_map(diff_ctx *d, bool quantities, const json_t *a, const json_t *b)
{
    if (!object_or_null(a) || !object_or_null(b)) {
        if (!json_equal(a, b)) differ(d);
        return;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        if (done(d)) return;
        const json_t *w = get(b, k);
        if (w && (quantities ? same_quantity(v, w) : json_equal(v, w))) continue;
        size_t mark = path_push(d, "[%s]", k);
        differ(d);
        path_pop(d, mark);
    }
    json_object_foreach((json_t *)b, k, v)
    {
        if (done(d)) return;
        if (get(a, k)) continue;
        size_t mark = path_push(d, "[%s]", k);
        differ(d);
        path_pop(d, mark);
    }
}

static void diff_array(diff_ctx *d, const sch_field *f, const json_t *a, const json_t *b)
{
    bool aa = is_null(a) || json_is_array(a), ba = is_null(b) || json_is_array(b);
    if (!aa || !ba || json_array_size(a) != json_array_size(b)) {
        if (!json_equal(a, b)) differ(d);
        return;
    }
    for (size_t i = 0; i < json_array_size(a) && !done(d); i++) {
        size_t mark = path_push(d, "[%zu]", i);
        diff_value(d, f, true, json_array_get(a, i), json_array_get(b, i));
        path_pop(d, mark);
    }
}

/* One value of field f (an element of it when `elem`); f NULL: a field the
 * schema does not know, compared as JSON. */
static void diff_value(diff_ctx *d, const sch_field *f, bool elem, const json_t *a, const json_t *b)
{
    if (done(d)) return;
    if (f && (f->flags & SCH_REP) && !elem) {
        diff_array(d, f, a, b);
        return;
    }
    switch (f ? f->type : SCH_RAWJSON) {
    case SCH_MSG:
    case SCH_INLINE:
        diff_members(d, f->msg, a, b, NULL);
        return;
    case SCH_MAP_SQ:
        diff_map(d, true, a, b);
        return;
    case SCH_MAP_SS:
    case SCH_MAP_SB:
        diff_map(d, false, a, b);
        return;
    case SCH_QUANTITY:
        if (!same_quantity(a, b)) differ(d);
        return;
    default:
        if (scalar_zero(f, a) && scalar_zero(f, b)) return;
        if (is_null(a) || is_null(b) || !json_equal(a, b)) differ(d);
    }
}

static const sch_msg *pod_spec_msg(void)
{
    const sch_msg *pod = sch_kind("v1", "Pod");
    const sch_field *f = pod ? sch_field_find(pod, "spec") : NULL;
    return f ? f->msg : NULL;
}

static const sch_msg *spec_member_msg(const char *member)
{
    const sch_msg *ps = pod_spec_msg();
    const sch_field *f = ps ? sch_field_find(ps, member) : NULL;
    return f ? f->msg : NULL;
}

/* spec.<list>: containers paired by index, each compared but for `skip`. */
static void diff_containers(diff_ctx *d, const char *list, const json_t *a, const json_t *b,
                            const char *const *skip)
{
    const sch_msg *ps = pod_spec_msg();
    const sch_field *f = ps ? sch_field_find(ps, list) : NULL;
    const json_t *la = get(a, list), *lb = get(b, list);
    size_t mark = path_push(d, ".%s", list);
    if (json_array_size(la) != json_array_size(lb) || (!is_null(la) && !json_is_array(la)) ||
        (!is_null(lb) && !json_is_array(lb))) {
        diff_value(d, f, false, la, lb);
    } else {
        for (size_t i = 0; i < json_array_size(la) && !done(d); i++) {
            size_t m = path_push(d, "[%zu]", i);
            diff_members(d, f ? f->msg : NULL, json_array_get(la, i), json_array_get(lb, i), skip);
            path_pop(d, m);
        }
    }
    path_pop(d, mark);
}

/* Differences between two pod specs, but for the PodSpec members in
 * `spec_skip` and the (init) container members in `ctr_skip`; the paths of
 * the first ones go to `paths` when not NULL. Returns how many (at most
 * `limit`). */
static int diff_spec(const json_t *a, const json_t *b, const char *const *spec_skip,
                     const char *const *ctr_skip, int limit, dbuf *paths)
{
    diff_ctx d = {.limit = limit, .paths = paths};
    path_push(&d, "spec");
    static const char *const lists[] = {"containers", "initContainers", NULL};
    if (!object_or_null(a) || !object_or_null(b)) {
        diff_value(&d, NULL, false, a, b);
        return d.found;
    }
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)a, k, v)
    {
        if (done(&d)) return d.found;
        if (!in_list(spec_skip, k) && !in_list(lists, k))
            diff_member(&d, pod_spec_msg(), k, v, get(b, k));
    }
    json_object_foreach((json_t *)b, k, v)
    {
        if (done(&d)) return d.found;
        if (!in_list(spec_skip, k) && !in_list(lists, k) && !get(a, k))
            diff_member(&d, pod_spec_msg(), k, NULL, v);
    }
    for (const char *const *l = lists; *l && !done(&d); l++)
        if (!in_list(spec_skip, *l)) diff_containers(&d, *l, a, b, ctr_skip);
    return d.found;
}

/* ---- ValidatePodUpdate ---- */

/* ValidateContainerUpdates: true (stop) when containers were added or removed. */
static bool container_updates(const json_t *ns, const json_t *os, const char *list, json_t *causes)
{
    char path[PATH_LEN], f[PATH_LEN];
    const json_t *a = get(ns, list);
    path_printf(path, "spec.%s", list);
    if (json_array_size(a) != json_array_size(get(os, list))) {
        ferr_add(causes, FERR_FORBIDDEN, path, NULL,
                 "pod updates may not add or remove containers");
        return true;
    }
    size_t i;
    json_t *c;
    json_array_foreach(a, i, c)
    {
        const char *image = str_of(c, "image");
        path_printf(f, "%s[%zu].image", path, i);
        if (!*image) ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
        if (padded(image)) ferr_add_str(causes, FERR_INVALID, f, image, MSG_WHITESPACE);
    }
    return false;
}

/* activeDeadlineSeconds may be set, or lowered; true (stop) on a bad value. */
static bool active_deadline_update(const json_t *ns, const json_t *os, json_t *causes)
{
    const char *f = "spec.activeDeadlineSeconds";
    const json_t *nv = get(ns, "activeDeadlineSeconds"), *ov = get(os, "activeDeadlineSeconds");
    if (!is_null(nv)) {
        json_int_t n = json_integer_value(nv);
        if (n < 0 || n > MAX_INT32) {
            ferr_add(causes, FERR_INVALID, f, nv, "must be between 0 and 2147483647, inclusive");
            return true;
        }
        if (!is_null(ov) && json_integer_value(ov) < n) {
            ferr_add(causes, FERR_INVALID, f, nv, "must be less than or equal to previous value");
            return true;
        }
    } else if (!is_null(ov)) {
        ferr_add(causes, FERR_INVALID, f, NULL,
                 "must not update from a positive integer to nil value");
    }
    return false;
}

/* Equal but for tolerationSeconds (reflect.DeepEqual of the struct). */
static bool same_toleration(const sch_msg *tm, const json_t *a, const json_t *b)
{
    static const char *const skip[] = {"tolerationSeconds", NULL};
    diff_ctx d = {.limit = 1};
    diff_members(&d, tm, a, b, skip);
    return d.found == 0;
}

/* validateOnlyAddedTolerations. */
static void only_added_tolerations(const json_t *ns, const json_t *os, json_t *causes)
{
    const sch_msg *tm = spec_member_msg("tolerations");
    const json_t *nt = get(ns, "tolerations");
    size_t i, j;
    json_t *o, *n;
    json_array_foreach(get(os, "tolerations"), i, o)
    {
        bool found = false;
        json_array_foreach(nt, j, n)
        {
            if ((found = same_toleration(tm, o, n))) break;
        }
        if (!found) {
            ferr_add(causes, FERR_FORBIDDEN, "spec.tolerations", NULL,
                     "existing toleration can not be modified except its tolerationSeconds");
            return;
        }
    }
    validate_tolerations(nt, causes);
}

static bool gate_named(const json_t *gates, const char *name, size_t from)
{
    for (size_t i = from; i < json_array_size(gates); i++)
        if (strcmp(str_of(json_array_get(gates, i), "name"), name) == 0) return true;
    return false;
}

/* validateOnlyDeletedSchedulingGates: a gate named twice is reported at its
 * last index, as upstream's map does. */
static void only_deleted_gates(const json_t *ns, const json_t *os, json_t *causes)
{
    const json_t *ng = get(ns, "schedulingGates"), *og = get(os, "schedulingGates");
    char path[PATH_LEN], detail[1024];
    for (size_t i = 0; i < json_array_size(ng); i++) {
        const char *name = str_of(json_array_get(ng, i), "name");
        if (gate_named(ng, name, i + 1) || gate_named(og, name, 0)) continue;
        path_printf(path, "spec.schedulingGates[%zu].name", i);
        snprintf(detail, sizeof detail,
                 "only deletion is allowed, but found new scheduling gate '%s'", name);
        ferr_add(causes, FERR_FORBIDDEN, path, NULL, detail);
    }
}

/* terminationGracePeriodSeconds may go from a negative value to 1. */
static bool grace_period_relaxed(const json_t *ns, const json_t *os)
{
    const json_t *nv = get(ns, "terminationGracePeriodSeconds");
    const json_t *ov = get(os, "terminationGracePeriodSeconds");
    return json_is_integer(ov) && json_integer_value(ov) < 0 && json_is_integer(nv) &&
           json_integer_value(nv) == 1;
}

static void report_forbidden_update(int found, dbuf *paths, json_t *causes)
{
    if (found > SUMMARY_PATHS) dbuf_printf(paths, ", and %d more", found - SUMMARY_PATHS);
    char *changed = dbuf_take(paths, NULL);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s\nchanged: %s", POD_MSG_UPDATE_FORBIDDEN, changed ? changed : "");
    free(changed);
    ferr_add(causes, FERR_FORBIDDEN, "spec", NULL, msg);
}

/* Anything but the updatable fields differs from `base`, the old spec as
 * today's defaulting writes it: forbidden. */
static void forbid_other_changes(const json_t *ns, const json_t *os, const json_t *base,
                                 json_t *causes)
{
    static const char *const skip[] = {"activeDeadlineSeconds", "tolerations", "schedulingGates",
                                       NULL};
    static const char *const skip_grace[] = {"activeDeadlineSeconds", "tolerations",
                                             "schedulingGates", "terminationGracePeriodSeconds",
                                             NULL};
    static const char *const image[] = {"image", NULL};
    const char *const *s = grace_period_relaxed(ns, os) ? skip_grace : skip;
    dbuf paths;
    dbuf_init(&paths, 600);
    int found = diff_spec(ns, base, s, image, 1000, &paths);
    if (found > 0) report_forbidden_update(found, &paths, causes);
    dbuf_free(&paths);
}

/* The stored pod with today's defaults (NULL when out of memory): a pod
 * written by an older allot lacks the defaults added since. */
static json_t *defaulted_copy(const json_t *old)
{
    json_t *d = jcopy(old);
    if (d) pod_defaults(d);
    return d;
}

static void validate_pod_update(const json_t *obj, const json_t *old, json_t *causes)
{
    const json_t *ns = get(obj, "spec"), *os = get(old, "spec");
    /* The spec is validated again only when it changed: a pod stored before a
     * rule existed can still have its metadata written (finalizers, labels). */
    bool changed = diff_spec(ns, os, NULL, NULL, 1, NULL) > 0;
    json_t *defaulted = changed ? defaulted_copy(old) : NULL;
    const json_t *base = defaulted ? get(defaulted, "spec") : os;
    if (defaulted) changed = diff_spec(ns, base, NULL, NULL, 1, NULL) > 0;
    if (changed) {
        pv_opts o = update_opts(os);
        validate_spec(ns, &o, causes);
    }
    bool stop = container_updates(ns, os, "containers", causes) ||
                container_updates(ns, os, "initContainers", causes) ||
                active_deadline_update(ns, os, causes);
    if (!stop) {
        only_added_tolerations(ns, os, causes);
        only_deleted_gates(ns, os, causes);
        if (changed) forbid_other_changes(ns, os, base, causes);
    }
    json_decref(defaulted);
}

/* ---- ValidatePodStatusUpdate ---- */

static void quantity_list(const json_t *list, const char *field, json_t *causes)
{
    const char **keys;
    size_t n;
    if (!sorted_keys(list, field, &keys, &n, causes)) return;
    char path[PATH_LEN];
    for (size_t i = 0; i < n; i++) {
        qty q;
        path_printf(path, "%s[%s]", field, keys[i]);
        check_quantity(NULL, json_object_get(list, keys[i]), path, causes, &q);
    }
    free(keys);
}

static void requirement_quantities(const json_t *res, const char *field, json_t *causes)
{
    char path[PATH_LEN];
    path_printf(path, "%s.requests", field);
    quantity_list(get(res, "requests"), path, causes);
    path_printf(path, "%s.limits", field);
    quantity_list(get(res, "limits"), path, causes);
}

/* The quantities kubelets report (quota reads them): parse, not negative. */
static void status_quantities(const json_t *status, json_t *causes)
{
    static const char *const lists[] = {"containerStatuses", "initContainerStatuses",
                                        "ephemeralContainerStatuses", NULL};
    char base[PATH_LEN], path[PATH_LEN];
    for (const char *const *l = lists; *l; l++) {
        size_t i;
        json_t *cs;
        json_array_foreach(get(status, *l), i, cs)
        {
            path_printf(base, "status.%s[%zu]", *l, i);
            path_printf(path, "%s.allocatedResources", base);
            quantity_list(get(cs, "allocatedResources"), path, causes);
            path_printf(path, "%s.resources", base);
            requirement_quantities(get(cs, "resources"), path, causes);
        }
    }
    requirement_quantities(get(status, "resources"), "status.resources", causes);
}

/* Upstream's GetPodQOS: status.qosClass, else the spec's class. */
static const char *get_pod_qos(const json_t *pod)
{
    static const char *const names[] = {"BestEffort", "Burstable", "Guaranteed"};
    return names[quota_pod_qos(pod)];
}

static void validate_status_update(const json_t *obj, const json_t *old, json_t *causes)
{
    if (strcmp(str_of(get(obj, "spec"), "nodeName"), str_of(get(old, "spec"), "nodeName")) != 0)
        ferr_add(causes, FERR_FORBIDDEN, "status.nodeName", NULL, "may not be changed directly");
    /* "Pod QoS is immutable". Upstream backfills an empty qosClass from the
     * stored pod first; here the pod's defaults have filled it from the
     * (stored) spec, which is the stored class for every pod allot wrote. A
     * stored pod without one (written before that) accepts its spec's class:
     * the one quota already reads for it. */
    const char *nq = str_of(get(obj, "status"), "qosClass");
    const char *oq = str_of(get(old, "status"), "qosClass");
    bool backfill = !*oq && strcmp(nq, get_pod_qos(old)) == 0;
    if (*nq && strcmp(nq, oq) != 0 && !backfill)
        ferr_add_str(causes, FERR_INVALID, "status.qosClass", nq, VAL_FIELD_IMMUTABLE);
    status_quantities(get(obj, "status"), causes);
}

/* ---- ValidatePodResize ---- */

static bool pod_level_set(const json_t *spec)
{
    const json_t *r = get(spec, "resources");
    return json_object_size(get(r, "requests")) + json_object_size(get(r, "limits")) > 0;
}

static bool names_removed(const json_t *now, const json_t *before)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)before, k, v)
    {
        if (!get(now, k)) return true;
    }
    return false;
}

/* validateContainerResize: no request or limit may be removed. */
static void container_resize(const json_t *nres, const json_t *ores, const char *path,
                             json_t *causes)
{
    char f[PATH_LEN];
    if (names_removed(get(nres, "requests"), get(ores, "requests"))) {
        path_printf(f, "%s.requests", path);
        ferr_add(causes, FERR_FORBIDDEN, f, NULL, "resource requests cannot be removed");
    }
    if (names_removed(get(nres, "limits"), get(ores, "limits"))) {
        path_printf(f, "%s.limits", path);
        ferr_add(causes, FERR_FORBIDDEN, f, NULL, "resource limits cannot be removed");
    }
}

static bool cpu_or_memory(const char *name)
{
    return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0;
}

/* Every request and limit but cpu and memory is the same (by value) before
 * and after, as upstream's dropCPUMemoryResourcesFromContainer comparison;
 * stricter in one case: a resource added to a container that had no list of
 * that kind is a change here (upstream lets it through). */
static bool only_cpu_memory_changed(const json_t *nres, const json_t *ores)
{
    static const char *const parts[] = {"requests", "limits", NULL};
    for (const char *const *p = parts; *p; p++) {
        const json_t *lists[2] = {get(ores, *p), get(nres, *p)};
        for (int side = 0; side < 2; side++) {
            const char *k;
            json_t *v;
            json_object_foreach((json_t *)lists[side], k, v)
            {
                if (cpu_or_memory(k)) continue;
                const json_t *w = get(lists[!side], k);
                if (!w || !same_quantity(v, w)) return false;
            }
        }
    }
    return true;
}

static bool same_container(const sch_msg *cm, const json_t *a, const json_t *b)
{
    diff_ctx d = {.limit = 1};
    diff_members(&d, cm, a, b, NULL);
    return d.found == 0;
}

/* validateContainerResize over restartable init containers, then containers;
 * then which resources changed: cpu and memory only for containers and
 * sidecars, nothing for other init containers. Containers are compared by
 * index: the resize strategy keeps the stored lists. */
static void resize_containers(const json_t *ns, const json_t *os, json_t *causes)
{
    char path[PATH_LEN];
    const json_t *nl = get(ns, "containers"), *ol = get(os, "containers");
    const json_t *nil = get(ns, "initContainers"), *oil = get(os, "initContainers");
    size_t nc =
        json_array_size(ol) < json_array_size(nl) ? json_array_size(ol) : json_array_size(nl);
    size_t ni =
        json_array_size(oil) < json_array_size(nil) ? json_array_size(oil) : json_array_size(nil);
    for (size_t i = 0; i < ni; i++) {
        const json_t *o = json_array_get(oil, i);
        if (!restartable(o)) continue;
        path_printf(path, "spec.initContainers[%zu].resources", i);
        container_resize(get(json_array_get(nil, i), "resources"), get(o, "resources"), path,
                         causes);
    }
    for (size_t i = 0; i < nc; i++) {
        path_printf(path, "spec.containers[%zu].resources", i);
        container_resize(get(json_array_get(nl, i), "resources"),
                         get(json_array_get(ol, i), "resources"), path, causes);
    }
    for (size_t i = 0; i < nc; i++)
        if (!only_cpu_memory_changed(get(json_array_get(nl, i), "resources"),
                                     get(json_array_get(ol, i), "resources")))
            ferr_add(causes, FERR_FORBIDDEN, "spec", NULL,
                     "only cpu and memory resources are mutable");
    const sch_msg *cm = spec_member_msg("initContainers");
    for (size_t i = 0; i < ni; i++) {
        const json_t *o = json_array_get(oil, i), *n = json_array_get(nil, i);
        if (restartable(o)) {
            if (!only_cpu_memory_changed(get(n, "resources"), get(o, "resources")))
                ferr_add(causes, FERR_FORBIDDEN, "spec", NULL,
                         "only cpu and memory resources for sidecar containers are mutable");
        } else if (!same_container(cm, n, o)) {
            ferr_add(causes, FERR_FORBIDDEN, "spec", NULL,
                     "resources for non-sidecar init containers are immutable");
        }
    }
}

/* ValidatePodResize's "GetPodQOS(oldPod) != ComputePodQOS(newPod)": the class
 * the stored pod holds (its spec's when it holds none) against the class of
 * the resized, defaulted spec. The value shown is the new pod's
 * status.qosClass, which the resize strategy keeps from the stored pod. */
static void resize_qos(const json_t *obj, const json_t *old, json_t *causes)
{
    const char *was = get_pod_qos(old), *now = pod_qos_class(obj);
    if (!now)
        ferr_add(causes, FERR_FORBIDDEN, "spec", NULL, MSG_OOM);
    else if (strcmp(was, now) != 0)
        ferr_add_str(causes, FERR_INVALID, "spec", str_of(get(obj, "status"), "qosClass"),
                     "Pod QOS Class may not change as a result of resizing");
}

/* A pod that cannot be resized at all: the one cause, or NULL. */
static const char *not_resizable(const json_t *obj, const json_t *old)
{
    const json_t *os = get(old, "spec");
    if (pod_level_set(os) || pod_level_set(get(obj, "spec")))
        return "pods with pod-level resources cannot be resized";
    if (get(get(get(old, "metadata"), "annotations"), "kubernetes.io/config.mirror"))
        return "static pods cannot be resized";
    if (strcmp(str_of(get(os, "os"), "name"), "windows") == 0)
        return "windows pods cannot be resized";
    return NULL;
}

/* In upstream's order: the spec as on create, the QoS class, removals, then
 * what changed (the node-support check is left out: no kubelet reports). */
static void validate_resize(const json_t *obj, const json_t *old, json_t *causes)
{
    static const char *const resizable[] = {"resources", "resizePolicy", NULL};
    const char *why = not_resizable(obj, old);
    if (why) {
        ferr_add(causes, FERR_FORBIDDEN, "", NULL, why);
        return;
    }
    const json_t *ns = get(obj, "spec"), *os = get(old, "spec");
    size_t before = json_array_size(causes);
    pv_opts o = update_opts(os);
    validate_spec(ns, &o, causes);
    resize_qos(obj, old, causes);
    resize_containers(ns, os, causes);
    if (json_array_size(causes) > before) return;
    if (diff_spec(ns, os, NULL, resizable, 1, NULL) > 0)
        ferr_add(causes, FERR_FORBIDDEN, "spec", NULL, "only cpu and memory resources are mutable");
}

void pod_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes)
{
    if (!sub) sub = "";
    if (strcmp(sub, "binding") == 0) return;
    if (strcmp(sub, "status") == 0)
        validate_status_update(obj, old, causes);
    else if (strcmp(sub, "resize") == 0)
        validate_resize(obj, old, causes);
    else
        validate_pod_update(obj, old, causes);
}
