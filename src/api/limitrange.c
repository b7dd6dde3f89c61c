/* limitrange.c - LimitRange validation and LimitRanger admission.
 *
 * Upstream ranges over Go maps; allot visits resource names in sorted order
 * so defaults, annotations and error lists are deterministic.
 */
#include "api/limitrange.h"

#include "api/core_validation.h"
#include "api/rq_validation.h"
#include "api/validation.h"
#include "core/names.h"
#include "core/quantity.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* resource.MaxMilliValue: above it MilliValue() would overflow. */
#define MAX_MILLI_VALUE (INT64_MAX / 1000)

/* ---- a small resource list: borrowed names, parsed values ----
 * Local on purpose: names stay borrowed from the objects being checked.
 * core/rlist.h (being written in parallel) could replace it later. */

typedef struct {
    const char *name;
    qty q;
} rs_item;

typedef struct {
    rs_item *v;
    size_t n, cap;
} rset;

static void rs_free(rset *l)
{
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

static rs_item *rs_find(const rset *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0) return &l->v[i];
    return NULL;
}

/* Set name=q, replacing an existing entry. Returns 0 or -1 (no memory). */
static int rs_set(rset *l, const char *name, const qty *q)
{
    rs_item *it = rs_find(l, name);
    if (it) {
        it->q = *q;
        return 0;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        rs_item *v = realloc(l->v, cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].name = name;
    l->v[l->n].q = *q;
    l->n++;
    return 0;
}

/* A JSON ResourceList; values that do not parse are left out (validation
 * rejects them before they can be stored). */
static void rs_from_json(rset *l, const json_t *obj)
{
    const char *k;
    json_t *v;
    qty q;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (qty_from_json(v, &q) == QTY_OK) rs_set(l, k, &q);
    }
}

/* addResourceList: list += other (absent names are copied). */
static void rs_add(rset *l, const rset *other)
{
    for (size_t i = 0; i < other->n; i++) {
        rs_item *it = rs_find(l, other->v[i].name);
        if (!it)
            rs_set(l, other->v[i].name, &other->v[i].q);
        else
            qty_add(&it->q, &other->v[i].q); /* beyond 72 digits: keeps the old sum */
    }
}

/* maxResourceList: list[name] = max(list[name], other[name]). */
static void rs_max(rset *l, const rset *other)
{
    for (size_t i = 0; i < other->n; i++) {
        rs_item *it = rs_find(l, other->v[i].name);
        if (!it || qty_cmp(&other->v[i].q, &it->q) > 0) rs_set(l, other->v[i].name, &other->v[i].q);
    }
}

/* ---- messages ---- */

/* A list of distinct messages (utilerrors.NewAggregate prints each once). */
static void msg_add(json_t *msgs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void msg_add(json_t *msgs, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m)
    {
        if (strcmp(json_string_value(m), buf) == 0) return;
    }
    json_array_append_new(msgs, json_string(buf));
}

/* admission.NewForbidden: `<resource> "<name>" is forbidden: <aggregate>`,
 * the name falling back to generateName, then "Unknown". */
static int forbidden(api_err *e, const char *resource, const json_t *obj, const json_t *msgs)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (!name || !*name) name = json_string_value(json_object_get(meta, "generateName"));
    if (!name || !*name) name = "Unknown";
    char agg[1800], qname[300];
    size_t off = 0, n = json_array_size(msgs);
    agg[0] = '\0';
    for (size_t i = 0; i < n && off < sizeof agg; i++)
        off += (size_t)snprintf(agg + off, sizeof agg - off, "%s%s", i ? ", " : "",
                                json_string_value(json_array_get(msgs, i)));
    name_go_quote(name, qname, sizeof qname);
    api_err_set(e, API_FORBIDDEN, n > 1 ? "%s %s is forbidden: [%s]" : "%s %s is forbidden: %s",
                resource, qname, agg);
    api_err_details(e, name, "", resource);
    return -1;
}

/* ---- constraints (admission.go) ---- */

/* requestLimitEnforcedValues: compare in milli-units unless that overflows. */
static void enforced_values(const rs_item *req, const rs_item *lim, const qty *enf, int64_t *r,
                            int64_t *l, int64_t *v)
{
    qty zero = qty_zero(QTY_DECIMAL_SI);
    const qty *rq = req ? &req->q : &zero, *lq = lim ? &lim->q : &zero;
    *r = qty_value(rq);
    *l = qty_value(lq);
    *v = qty_value(enf);
    if (*r <= MAX_MILLI_VALUE && *l <= MAX_MILLI_VALUE && *v <= MAX_MILLI_VALUE) {
        *r = qty_milli_value(rq);
        *l = qty_milli_value(lq);
        *v = qty_milli_value(enf);
    }
}

typedef struct {
    const char *type; /* "Container", "Pod", "PersistentVolumeClaim" */
    const char *res;  /* resource name */
    const qty *enf;   /* the LimitRange value */
    const rset *req, *lim;
    json_t *msgs;
} constraint;

static void min_constraint(const constraint *c)
{
    char e[QTY_STR_MAX], o[QTY_STR_MAX];
    rs_item *req = rs_find(c->req, c->res), *lim = rs_find(c->lim, c->res);
    int64_t r, l, v;
    enforced_values(req, lim, c->enf, &r, &l, &v);
    qty_format_str(c->enf, e, sizeof e);
    if (!req) {
        msg_add(c->msgs, "minimum %s usage per %s is %s.  No request is specified", c->res, c->type,
                e);
    } else if (r < v) {
        qty_format_str(&req->q, o, sizeof o);
        msg_add(c->msgs, "minimum %s usage per %s is %s, but request is %s", c->res, c->type, e, o);
    } else if (lim && l < v) {
        qty_format_str(&lim->q, o, sizeof o);
        msg_add(c->msgs, "minimum %s usage per %s is %s, but limit is %s", c->res, c->type, e, o);
    }
}

static void max_constraint(const constraint *c)
{
    char e[QTY_STR_MAX], o[QTY_STR_MAX];
    rs_item *req = rs_find(c->req, c->res), *lim = rs_find(c->lim, c->res);
    int64_t r, l, v;
    enforced_values(req, lim, c->enf, &r, &l, &v);
    qty_format_str(c->enf, e, sizeof e);
    if (!lim) {
        msg_add(c->msgs, "maximum %s usage per %s is %s.  No limit is specified", c->res, c->type,
                e);
    } else if (l > v) {
        qty_format_str(&lim->q, o, sizeof o);
        msg_add(c->msgs, "maximum %s usage per %s is %s, but limit is %s", c->res, c->type, e, o);
    } else if (req && r > v) {
        qty_format_str(&req->q, o, sizeof o);
        msg_add(c->msgs, "maximum %s usage per %s is %s, but request is %s", c->res, c->type, e, o);
    }
}

/* maxRequestConstraint: for PVCs, where only requests are user input. */
static void max_request_constraint(const constraint *c)
{
    char e[QTY_STR_MAX], o[QTY_STR_MAX];
    rs_item *req = rs_find(c->req, c->res);
    int64_t r, l, v;
    enforced_values(req, NULL, c->enf, &r, &l, &v);
    qty_format_str(c->enf, e, sizeof e);
    if (!req) {
        msg_add(c->msgs, "maximum %s usage per %s is %s.  No request is specified", c->res, c->type,
                e);
    } else if (r > v) {
        qty_format_str(&req->q, o, sizeof o);
        msg_add(c->msgs, "maximum %s usage per %s is %s, but request is %s", c->res, c->type, e, o);
    }
}

static void ratio_constraint(const constraint *c)
{
    char e[QTY_STR_MAX];
    rs_item *req = rs_find(c->req, c->res), *lim = rs_find(c->lim, c->res);
    int64_t r, l, v;
    enforced_values(req, lim, c->enf, &r, &l, &v);
    qty_format_str(c->enf, e, sizeof e);
    if (!req || r == 0) {
        msg_add(c->msgs,
                "%s max limit to request ratio per %s is %s, but no request is specified or "
                "request is 0",
                c->res, c->type, e);
        return;
    }
    if (!lim || l == 0) {
        msg_add(c->msgs,
                "%s max limit to request ratio per %s is %s, but no limit is specified or limit "
                "is 0",
                c->res, c->type, e);
        return;
    }
    double observed = (double)l / (double)r, display = observed;
    double max = (double)qty_value(c->enf);
    if (qty_value(c->enf) <= MAX_MILLI_VALUE) {
        observed *= 1000;
        max = (double)qty_milli_value(c->enf);
    }
    if (observed > max)
        msg_add(c->msgs, "%s max limit to request ratio per %s is %s, but provided ratio is %f",
                c->res, c->type, e, display);
}

typedef void (*constraint_fn)(const constraint *c);

/* Apply fn for every resource (sorted) in item[key]. */
static void each_limit(const json_t *item, const char *key, constraint_fn fn, constraint *c)
{
    const json_t *list = json_object_get(item, key);
    size_t n;
    const char **keys = rq_sorted_keys(list, &n);
    for (size_t i = 0; i < n; i++) {
        qty q;
        if (qty_from_json(json_object_get(list, keys[i]), &q) != QTY_OK) continue;
        c->res = keys[i];
        c->enf = &q;
        fn(c);
    }
    free(keys);
}

static void check_min_max_ratio(const json_t *item, constraint *c)
{
    each_limit(item, "min", min_constraint, c);
    each_limit(item, "max", max_constraint, c);
    each_limit(item, "maxLimitRequestRatio", ratio_constraint, c);
}

static void container_lists(const json_t *ctr, rset *req, rset *lim)
{
    const json_t *res = json_object_get(ctr, "resources");
    rs_from_json(req, json_object_get(res, "requests"));
    rs_from_json(lim, json_object_get(res, "limits"));
}

static void check_containers(const json_t *item, const json_t *list, json_t *msgs)
{
    size_t i;
    json_t *ctr;
    json_array_foreach(list, i, ctr)
    {
        rset req = {0}, lim = {0};
        container_lists(ctr, &req, &lim);
        constraint c = {.type = "Container", .req = &req, .lim = &lim, .msgs = msgs};
        check_min_max_ratio(item, &c);
        rs_free(&req);
        rs_free(&lim);
    }
}

static bool is_sidecar(const json_t *ctr)
{
    const char *p = json_string_value(json_object_get(ctr, "restartPolicy"));
    return p && strcmp(p, "Always") == 0;
}

/* The pod's effective requests or limits (component-helpers PodRequests/
 * PodLimits without overhead and status): the sum over containers, raised
 * to the largest init-container need, where an init container also needs
 * the sidecars (restartable init containers) started before it and the
 * sidecars count towards the sum. Then pod-level cpu/memory
 * (spec.resources, PodLevelResources) override the aggregate. */
static void pod_aggregate(const json_t *spec, const char *which, rset *out)
{
    size_t i;
    json_t *ctr;
    json_array_foreach(json_object_get(spec, "containers"), i, ctr)
    {
        rset l = {0};
        rs_from_json(&l, json_object_get(json_object_get(ctr, "resources"), which));
        rs_add(out, &l);
        rs_free(&l);
    }
    rset sidecars = {0}, init = {0};
    json_array_foreach(json_object_get(spec, "initContainers"), i, ctr)
    {
        rset l = {0};
        rs_from_json(&l, json_object_get(json_object_get(ctr, "resources"), which));
        if (is_sidecar(ctr)) {
            rs_add(out, &l);
            rs_add(&sidecars, &l);
            rs_max(&init, &sidecars);
        } else {
            rs_add(&l, &sidecars);
            rs_max(&init, &l);
        }
        rs_free(&l);
    }
    rs_max(out, &init);
    rs_free(&sidecars);
    rs_free(&init);
    const json_t *pl = json_object_get(json_object_get(spec, "resources"), which);
    static const char *const pod_level[] = {"cpu", "memory"};
    for (size_t k = 0; k < 2; k++) {
        qty q;
        const json_t *v = json_object_get(pl, pod_level[k]);
        if (v && qty_from_json(v, &q) == QTY_OK) rs_set(out, pod_level[k], &q);
    }
}

static void check_pod(const json_t *item, const json_t *spec, json_t *msgs)
{
    rset req = {0}, lim = {0};
    pod_aggregate(spec, "requests", &req);
    pod_aggregate(spec, "limits", &lim);
    constraint c = {.type = "Pod", .req = &req, .lim = &lim, .msgs = msgs};
    check_min_max_ratio(item, &c);
    rs_free(&req);
    rs_free(&lim);
}

static const char *item_type(const json_t *item)
{
    const char *t = json_string_value(json_object_get(item, "type"));
    return t ? t : "";
}

int limitrange_validate_pod(const json_t *pod, const json_t *const *lrs, size_t n, api_err *e)
{
    const json_t *spec = json_object_get(pod, "spec");
    for (size_t k = 0; k < n; k++) {
        json_t *msgs = json_array();
        size_t i;
        json_t *item;
        json_array_foreach(json_object_get(json_object_get(lrs[k], "spec"), "limits"), i, item)
        {
            if (strcmp(item_type(item), "Container") == 0) {
                check_containers(item, json_object_get(spec, "containers"), msgs);
                check_containers(item, json_object_get(spec, "initContainers"), msgs);
            } else if (strcmp(item_type(item), "Pod") == 0) {
                check_pod(item, spec, msgs);
            }
        }
        int rc = json_array_size(msgs) ? forbidden(e, "pods", pod, msgs) : 0;
        json_decref(msgs);
        if (rc) return rc;
    }
    return 0;
}

int limitrange_validate_pvc(const json_t *pvc, const json_t *const *lrs, size_t n, api_err *e)
{
    rset req = {0}, none = {0};
    rs_from_json(&req, json_object_get(json_object_get(json_object_get(pvc, "spec"), "resources"),
                                       "requests"));
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        json_t *msgs = json_array();
        size_t i;
        json_t *item;
        json_array_foreach(json_object_get(json_object_get(lrs[k], "spec"), "limits"), i, item)
        {
            if (strcmp(item_type(item), "PersistentVolumeClaim") != 0) continue;
            constraint c = {
                .type = "PersistentVolumeClaim", .req = &req, .lim = &none, .msgs = msgs};
            each_limit(item, "min", min_constraint, &c);
            each_limit(item, "max", max_request_constraint, &c);
        }
        if (json_array_size(msgs)) rc = forbidden(e, "persistentvolumeclaims", pvc, msgs);
        json_decref(msgs);
    }
    rs_free(&req);
    return rc;
}

/* ---- defaulting (mutating phase) ---- */

/* defaultContainerResourceRequirements: later Container items win. */
static void lr_defaults(const json_t *lr, json_t *req, json_t *lim)
{
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(json_object_get(lr, "spec"), "limits"), i, item)
    {
        if (strcmp(item_type(item), "Container") != 0) continue;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(item, "defaultRequest"), k, v)
        {
            json_object_set(req, k, v);
        }
        json_object_foreach(json_object_get(item, "default"), k, v)
        {
            json_object_set(lim, k, v);
        }
    }
}

/* Fill container.resources[which] from defaults; append "a, b <what> for
 * <prefix> <name>" to the annotation parts. Returns values set. */
static int merge_list(json_t *ctr, const char *which, const json_t *defaults, const char *what,
                      const char *prefix, json_t *parts)
{
    size_t n;
    const char **keys = rq_sorted_keys(defaults, &n);
    char buf[1024];
    size_t off = 0;
    int set = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        json_t *res = json_object_get(ctr, "resources");
        if (json_object_get(json_object_get(res, which), keys[i])) continue;
        qty q;
        if (qty_from_json(json_object_get(defaults, keys[i]), &q) != QTY_OK) continue;
        if (!json_is_object(res)) {
            res = json_object();
            json_object_set_new(ctr, "resources", res);
        }
        json_t *list = json_object_get(res, which);
        if (!json_is_object(list)) {
            list = json_object();
            json_object_set_new(res, which, list);
        }
        json_object_set_new(list, keys[i], qty_to_json(&q));
        if (off < sizeof buf)
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", set ? ", " : "", keys[i]);
        set++;
    }
    free(keys);
    if (set) {
        const char *name = json_string_value(json_object_get(ctr, "name"));
        char part[1400];
        snprintf(part, sizeof part, "%s %s for %s %s", buf, what, prefix, name ? name : "");
        json_array_append_new(parts, json_string(part));
    }
    return set;
}

static int merge_containers(json_t *list, const json_t *req, const json_t *lim, const char *prefix,
                            json_t *parts)
{
    size_t i;
    json_t *ctr;
    int set = 0;
    json_array_foreach(list, i, ctr)
    {
        if (!json_is_object(ctr)) continue;
        /* Upstream fills limits first but lists the requests first. */
        json_t *tmp = json_array();
        set += merge_list(ctr, "limits", lim, "limit", prefix, tmp);
        set += merge_list(ctr, "requests", req, "request", prefix, parts);
        json_array_extend(parts, tmp);
        json_decref(tmp);
    }
    return set;
}

static void set_annotation(json_t *pod, const json_t *parts)
{
    char buf[4096];
    size_t off = (size_t)snprintf(buf, sizeof buf, "LimitRanger plugin set: ");
    for (size_t i = 0; i < json_array_size(parts) && off < sizeof buf; i++)
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", i ? "; " : "",
                                json_string_value(json_array_get(parts, i)));
    json_t *meta = json_object_get(pod, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(pod, "metadata", meta);
    }
    json_t *ann = json_object_get(meta, "annotations");
    if (!json_is_object(ann)) {
        ann = json_object();
        json_object_set_new(meta, "annotations", ann);
    }
    json_object_set_new(ann, LIMITRANGE_ANNOTATION, json_string(buf));
}

int limitrange_default_pod(json_t *pod, const json_t *const *lrs, size_t n)
{
    json_t *spec = json_object_get(pod, "spec");
    int total = 0;
    for (size_t k = 0; k < n; k++) {
        json_t *req = json_object(), *lim = json_object(), *parts = json_array();
        lr_defaults(lrs[k], req, lim);
        int set =
            merge_containers(json_object_get(spec, "containers"), req, lim, "container", parts);
        set += merge_containers(json_object_get(spec, "initContainers"), req, lim, "init container",
                                parts);
        if (set) set_annotation(pod, parts);
        total += set;
        json_decref(req);
        json_decref(lim);
        json_decref(parts);
    }
    return total;
}

/* ---- ValidateLimitRange ---- */

/* The five lists of one item, parsed; `keys` is the union of their names. */
typedef struct {
    rset min, max, def, defreq, ratio;
    json_t *keys; /* object used as a set */
} lr_item;

static void item_free(lr_item *it)
{
    rs_free(&it->min);
    rs_free(&it->max);
    rs_free(&it->def);
    rs_free(&it->defreq);
    rs_free(&it->ratio);
    json_decref(it->keys);
}

/* Validate the names of item[key] (path <base>.<key>[<name>]) and parse
 * the values into `out`. */
static void item_list(const json_t *item, const char *key, bool container, const char *base,
                      rset *out, json_t *keys, json_t *causes)
{
    const json_t *list = json_object_get(item, key);
    size_t n;
    char path[512];
    snprintf(path, sizeof path, "%s.%s", base, key);
    if (cv_type_check(list, CV_OBJECT, path, causes)) return;
    const char **names = rq_sorted_keys(list, &n);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s.%s[%s]", base, key, names[i]);
        if (container)
            rq_validate_container_resource_name(names[i], path, causes);
        else
            rq_validate_resource_name(names[i], path, causes);
        json_object_set_new(keys, names[i], json_true());
        const json_t *v = json_object_get(list, names[i]);
        qty q;
        int rc = qty_from_json(v, &q);
        if (rc == QTY_OK)
            rs_set(out, names[i], &q);
        else /* a decoding error upstream */
            ferr_add(causes, FERR_INVALID, path, v, qty_strerror(rc));
    }
    free(names);
}

static void type_name(const char *t, const char *field, json_t *causes)
{
    if (val_qualified_name(t, field, causes)) return;
    if (!strchr(t, '/') && strcmp(t, "Container") != 0 && strcmp(t, "Pod") != 0 &&
        strcmp(t, "PersistentVolumeClaim") != 0)
        ferr_add_str(causes, FERR_INVALID, field, t,
                     "must be a standard limit type or fully qualified");
}

/* Invalid at <base>.<list>[k] with the canonical `shown` value. */
static void bad(json_t *causes, const char *base, const char *list, const char *k, const qty *shown,
                const char *fmt, const char *a, const char *b)
{
    char path[512], v[QTY_STR_MAX], detail[512];
    snprintf(path, sizeof path, "%s.%s[%s]", base, list, k);
    qty_format_str(shown, v, sizeof v);
    snprintf(detail, sizeof detail, fmt, a, b);
    ferr_add_str(causes, FERR_INVALID, path, v, detail);
}

static void check_ratio_vs_min_max(const char *base, const char *k, const qty *ratio, const qty *mn,
                                   const qty *mx, json_t *causes)
{
    double rv = (double)qty_value(ratio);
    int64_t minv = qty_value(mn), maxv = qty_value(mx);
    if (qty_value(ratio) < MAX_MILLI_VALUE && minv < MAX_MILLI_VALUE && maxv < MAX_MILLI_VALUE) {
        rv = (double)qty_milli_value(ratio) / 1000;
        minv = qty_milli_value(mn);
        maxv = qty_milli_value(mx);
    }
    double limit = (double)maxv / (double)minv;
    if (rv > limit) {
        char path[512], v[QTY_STR_MAX], detail[512];
        snprintf(path, sizeof path, "%s.maxLimitRequestRatio[%s]", base, k);
        qty_format_str(ratio, v, sizeof v);
        snprintf(detail, sizeof detail, "ratio %s is greater than max/min = %f", v, limit);
        ferr_add_str(causes, FERR_INVALID, path, v, detail);
    }
}

/* The cross-list rules for one resource name, in upstream's order. */
static void check_key(const lr_item *it, const char *base, const char *k, json_t *causes)
{
    rs_item *mn = rs_find(&it->min, k), *mx = rs_find(&it->max, k), *df = rs_find(&it->def, k),
            *dr = rs_find(&it->defreq, k), *ra = rs_find(&it->ratio, k);
    char a[QTY_STR_MAX], b[QTY_STR_MAX], c[QTY_STR_MAX], d[QTY_STR_MAX];
    if (mn) qty_format_str(&mn->q, a, sizeof a);
    if (mx) qty_format_str(&mx->q, b, sizeof b);
    if (df) qty_format_str(&df->q, c, sizeof c);
    if (dr) qty_format_str(&dr->q, d, sizeof d);
    if (mn && mx && qty_cmp(&mn->q, &mx->q) > 0)
        bad(causes, base, "min", k, &mn->q, "min value %s is greater than max value %s", a, b);
    if (dr && mn && qty_cmp(&mn->q, &dr->q) > 0)
        bad(causes, base, "defaultRequest", k, &dr->q,
            "min value %s is greater than default request value %s", a, d);
    if (dr && mx && qty_cmp(&dr->q, &mx->q) > 0)
        bad(causes, base, "defaultRequest", k, &dr->q,
            "default request value %s is greater than max value %s", d, b);
    if (dr && df && qty_cmp(&dr->q, &df->q) > 0)
        bad(causes, base, "defaultRequest", k, &dr->q,
            "default request value %s is greater than default limit value %s", d, c);
    /* Upstream shows min (not default) as the bad value here, and max below. */
    if (df && mn && qty_cmp(&mn->q, &df->q) > 0)
        bad(causes, base, "default", k, &mn->q, "min value %s is greater than default value %s", a,
            c);
    if (df && mx && qty_cmp(&df->q, &mx->q) > 0)
        bad(causes, base, "default", k, &mx->q, "default value %s is greater than max value %s", c,
            b);
    if (ra && qty_cmp_int64(&ra->q, 1) < 0) {
        char r[QTY_STR_MAX];
        qty_format_str(&ra->q, r, sizeof r);
        bad(causes, base, "maxLimitRequestRatio", k, &ra->q, "ratio %s is less than %s", r, "1");
    }
    if (ra && mn && mx) check_ratio_vs_min_max(base, k, &ra->q, &mn->q, &mx->q, causes);
    if (!rq_is_overcommit_allowed(k) && df && dr && qty_cmp(&df->q, &dr->q) != 0) {
        char path[512], detail[600];
        snprintf(path, sizeof path, "%s.defaultRequest[%s]", base, k);
        snprintf(detail, sizeof detail,
                 "default value %s must equal to defaultRequest value %s in %s", c, d, k);
        ferr_add_str(causes, FERR_INVALID, path, d, detail);
    }
}

static void validate_item(const json_t *item, size_t idx, json_t *seen, json_t *causes)
{
    char base[64], path[96];
    snprintf(base, sizeof base, "spec.limits[%zu]", idx);
    snprintf(path, sizeof path, "%s.type", base);
    if (cv_type_check(item, CV_OBJECT, base, causes) ||
        cv_type_check(json_object_get(item, "type"), CV_STRING, path, causes))
        return;
    const char *t = item_type(item);
    type_name(t, path, causes);
    if (json_object_get(seen, t)) ferr_add_str(causes, FERR_DUPLICATE, path, t, NULL);
    json_object_set_new(seen, t, json_true());

    bool pod = strcmp(t, "Pod") == 0, container = pod || strcmp(t, "Container") == 0;
    lr_item it = {.keys = json_object()};
    item_list(item, "max", container, base, &it.max, it.keys, causes);
    item_list(item, "min", container, base, &it.min, it.keys, causes);
    if (pod) {
        snprintf(path, sizeof path, "%s.default", base);
        cv_type_check(json_object_get(item, "default"), CV_OBJECT, path, causes);
        snprintf(path, sizeof path, "%s.defaultRequest", base);
        cv_type_check(json_object_get(item, "defaultRequest"), CV_OBJECT, path, causes);
        if (json_object_size(json_object_get(item, "default"))) {
            snprintf(path, sizeof path, "%s.default", base);
            ferr_add(causes, FERR_FORBIDDEN, path, NULL,
                     "may not be specified when `type` is 'Pod'");
        }
        if (json_object_size(json_object_get(item, "defaultRequest"))) {
            snprintf(path, sizeof path, "%s.defaultRequest", base);
            ferr_add(causes, FERR_FORBIDDEN, path, NULL,
                     "may not be specified when `type` is 'Pod'");
        }
    } else {
        item_list(item, "default", container, base, &it.def, it.keys, causes);
        item_list(item, "defaultRequest", container, base, &it.defreq, it.keys, causes);
    }
    if (strcmp(t, "PersistentVolumeClaim") == 0 &&
        !json_object_get(json_object_get(item, "min"), "storage") &&
        !json_object_get(json_object_get(item, "max"), "storage")) {
        snprintf(path, sizeof path, "%s.limits", base);
        ferr_add(causes, FERR_REQUIRED, path, NULL,
                 "either minimum or maximum storage value is required, but neither was provided");
    }
    item_list(item, "maxLimitRequestRatio", container, base, &it.ratio, it.keys, causes);

    size_t n;
    const char **keys = rq_sorted_keys(it.keys, &n);
    for (size_t i = 0; i < n; i++)
        check_key(&it, base, keys[i], causes);
    free(keys);
    item_free(&it);
}

void limitrange_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = json_object_get(obj, "spec");
    if (cv_type_check(spec, CV_OBJECT, "spec", causes) ||
        cv_type_check(json_object_get(spec, "limits"), CV_ARRAY, "spec.limits", causes))
        return;
    json_t *seen = json_object();
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(json_object_get(obj, "spec"), "limits"), i, item)
    {
        validate_item(item, i, seen, causes);
    }
    json_decref(seen);
}
