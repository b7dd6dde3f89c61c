/* custom_quota_kinds.c - CustomQuota and GlobalCustomQuota hooks (see
 * custom_quota_kinds.h). */
#include "api/custom_quota_kinds.h"

#include "api/core_validation.h"
#include "api/status.h"
#include "api/validation.h"
#include "core/jsonpath.h"
#include "core/quantity.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OP_ADD "add"
#define OP_SUB "sub"
#define OP_COUNT "count"

#define FIELD_MAX 192 /* "spec.sources[i].selectors[j].celExpressions[k]" and the like */

/* A string member, "" when absent or not a string (the typed decoding has
 * refused other types before these hooks run). */
static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* An apiVersion as Kubernetes reads it: "<version>" (core group) or
 * "<group>/<version>", both parts non-empty. Returns 0 and the parts, or -1. */
static int split_api_version(const char *av, char *group, size_t gn, char *version, size_t vn)
{
    const char *slash = strchr(av, '/');
    if (!*av) return -1;
    if (!slash) {
        group[0] = '\0';
        return snprintf(version, vn, "%s", av) < (int)vn ? 0 : -1;
    }
    size_t glen = (size_t)(slash - av);
    if (glen == 0 || glen >= gn || !slash[1] || strchr(slash + 1, '/')) return -1;
    memcpy(group, av, glen);
    group[glen] = '\0';
    return snprintf(version, vn, "%s", slash + 1) < (int)vn ? 0 : -1;
}

/* ---- defaulting ---- */

/* The CRD's `options: {emitMetricPerClaimUsage: false}` and the flag's own
 * `false`. */
static void default_options(json_t *spec)
{
    json_t *options = json_object_get(spec, "options");
    if (!options) {
        options = json_object();
        if (!options || json_object_set_new(spec, "options", options) != 0) return;
    }
    if (json_is_object(options) && !json_object_get(options, "emitMetricPerClaimUsage"))
        json_object_set_new(options, "emitMetricPerClaimUsage", json_false());
}

/* apiVersion from group and version: "v1" or "apps/v1". */
static void default_api_version(json_t *src, const char *group, const char *version)
{
    char av[512];
    int n = *group ? snprintf(av, sizeof av, "%s/%s", group, version)
                   : snprintf(av, sizeof av, "%s", version);
    if (n < 0 || (size_t)n >= sizeof av) return; /* validation reports what stays missing */
    json_object_set_new(src, "apiVersion", json_string(av));
    if (!json_object_get(src, "group")) json_object_set_new(src, "group", json_string(""));
}

/* group and version from apiVersion, when they are absent or agree with it. */
static void default_group_version(json_t *src, const char *av)
{
    char group[256], version[256];
    const char *g = str_of(src, "group");
    if (*str_of(src, "version") ||
        split_api_version(av, group, sizeof group, version, sizeof version) != 0)
        return;
    if (*g && strcmp(g, group) != 0) return;
    json_object_set_new(src, "group", json_string(group));
    json_object_set_new(src, "version", json_string(version));
}

/* Capsule's apiVersion plus allot's group/version spelling of a source's
 * target (docs/decisions.md "Custom quotas"). */
static void default_gvk(json_t *src)
{
    const char *av = str_of(src, "apiVersion"), *g = str_of(src, "group"),
               *v = str_of(src, "version");
    if (*av) {
        default_group_version(src, av);
    } else if (*v) {
        default_api_version(src, g, v);
    } else if (!*g) { /* nothing given: Capsule reads an empty apiVersion as core v1 */
        default_api_version(src, "", "v1");
        json_object_set_new(src, "version", json_string("v1"));
    }
}

static void default_sources(json_t *spec)
{
    size_t i;
    json_t *src;
    json_array_foreach(json_object_get(spec, "sources"), i, src)
    {
        if (!json_is_object(src)) continue;
        if (!json_object_get(src, "op")) json_object_set_new(src, "op", json_string(OP_ADD));
        default_gvk(src);
    }
}

static void default_spec(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) return; /* validation: spec is required */
    default_options(spec);
    default_sources(spec);
}

void customquota_defaults(json_t *obj)
{
    default_spec(obj);
}

void globalcustomquota_defaults(json_t *obj)
{
    default_spec(obj);
}

/* ---- validation: the apiserver's texts for the CRD schema ---- */

/* A required member: "<field>: Required value" when absent or null. */
static int require(const json_t *v, const char *field, json_t *causes)
{
    if (v && !json_is_null(v)) return 0;
    ferr_add(causes, FERR_REQUIRED, field, NULL, NULL);
    return -1;
}

/* field.TooMany (maxItems): "Too many: 65: must have at most 64 items".
 * status.h has no constructor for it; only these CRD limits need one. */
static void too_many(json_t *causes, const char *field, size_t n, int max)
{
    char msg[128];
    snprintf(msg, sizeof msg, "Too many: %zu: must have at most %d items", n, max);
    json_t *c =
        json_pack("{s:s, s:s, s:s}", "reason", "FieldValueTooMany", "message", msg, "field", field);
    if (c) json_array_append_new(causes, c);
}

/* Characters as OpenAPI's minLength/maxLength count them: UTF-8 code points. */
static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) n++;
    return n;
}

/* minLength and maxLength of a string: kube-openapi's text for the first
 * (an Invalid cause), field.TooLong for the second. Returns 0 when within. */
static int check_length(const char *s, const char *field, size_t min, size_t max, json_t *causes)
{
    char detail[FIELD_MAX + 64];
    size_t n = utf8_chars(s);
    if (n < min) {
        snprintf(detail, sizeof detail, "%s in body should be at least %zu chars long", field, min);
        ferr_add_str(causes, FERR_INVALID, field, s, detail);
        return -1;
    }
    if (n > max) {
        ferr_addf(causes, FERR_TOO_LONG, field, NULL, "may not be more than %zu bytes", max);
        return -1;
    }
    return 0;
}

/* fieldSelectors / celExpressions: at most 64 strings of 1-4096 characters
 * (the CRD says so of celExpressions; fieldSelectors get the same bounds,
 * docs/decisions.md "Custom quotas"). */
static void check_string_list(const json_t *list, const char *field, json_t *causes)
{
    char path[FIELD_MAX];
    size_t i;
    const json_t *s;
    if (!list || cv_type_check(list, CV_ARRAY, field, causes)) return;
    if (json_array_size(list) > CQ_SELECTOR_ITEMS)
        too_many(causes, field, json_array_size(list), CQ_SELECTOR_ITEMS);
    json_array_foreach(list, i, s)
    {
        snprintf(path, sizeof path, "%s[%zu]", field, i);
        if (!cv_type_check(s, CV_STRING, path, causes))
            check_length(json_string_value(s), path, 1, CQ_CEL_MAX, causes);
    }
}

/* A list of label selectors (scopeSelectors, namespaceSelectors): each must
 * parse. A null entry is Go's zero selector. */
static void check_label_selectors(const json_t *list, const char *field, json_t *causes)
{
    char path[FIELD_MAX];
    size_t i;
    const json_t *sel;
    if (!list || cv_type_check(list, CV_ARRAY, field, causes)) return;
    json_array_foreach(list, i, sel)
    {
        snprintf(path, sizeof path, "%s[%zu]", field, i);
        if (!json_is_null(sel) && !cv_type_check(sel, CV_OBJECT, path, causes))
            val_label_selector(sel, path, causes);
    }
}

/* One SelectorWithFields: an inline label selector, JSONPath field
 * selectors and CEL expressions. */
static void check_selector(const json_t *sel, const char *field, json_t *causes)
{
    char path[FIELD_MAX];
    if (json_is_null(sel) || cv_type_check(sel, CV_OBJECT, field, causes)) return;
    val_label_selector(sel, field, causes);
    snprintf(path, sizeof path, "%s.fieldSelectors", field);
    /* Each field selector's JSONPath is compiled by the registry
     * (core/jsonpath.h), which refuses what does not parse. */
    check_string_list(json_object_get(sel, "fieldSelectors"), path, causes);
    snprintf(path, sizeof path, "%s.celExpressions", field);
    /* Each expression is compiled (and must be bool) by the registry
     * (core/cel.h), with Capsule's "invalid CEL expression: <field>: ..." */
    check_string_list(json_object_get(sel, "celExpressions"), path, causes);
}

static void check_selectors(const json_t *list, const char *field, json_t *causes)
{
    char path[FIELD_MAX];
    size_t i;
    const json_t *sel;
    if (!list || cv_type_check(list, CV_ARRAY, field, causes)) return;
    json_array_foreach(list, i, sel)
    {
        snprintf(path, sizeof path, "%s[%zu]", field, i);
        check_selector(sel, path, causes);
    }
}

/* ---- validation: a source ---- */

#define GVK_HINT "set apiVersion, or group and version, or all three alike"

/* The target's group, version and apiVersion agree (after defaulting they
 * are all there unless they do not). */
static void check_gvk(const json_t *src, const char *field, json_t *causes)
{
    char path[FIELD_MAX], group[256], version[256];
    const char *av = str_of(src, "apiVersion"), *g = str_of(src, "group"),
               *v = str_of(src, "version");
    if (!*av) {
        snprintf(path, sizeof path, "%s.version", field);
        if (*g && !*v)
            ferr_addf(causes, FERR_REQUIRED, path, NULL,
                      "with group \"%s\", when apiVersion is not set", g);
        return;
    }
    snprintf(path, sizeof path, "%s.apiVersion", field);
    if (split_api_version(av, group, sizeof group, version, sizeof version) != 0) {
        ferr_add_str(causes, FERR_INVALID, path, av, "must be <version> or <group>/<version>");
        return;
    }
    /* With a version, group and version name a group version (group ""
     * being core); without one, a group given must be apiVersion's. */
    if (*v ? strcmp(g, group) == 0 && strcmp(v, version) == 0 : !*g || strcmp(g, group) == 0)
        return;
    char detail[700];
    if (*v)
        snprintf(detail, sizeof detail, "does not match group \"%s\" and version \"%s\"; " GVK_HINT,
                 g, v);
    else
        snprintf(detail, sizeof detail, "does not match group \"%s\"; " GVK_HINT, g);
    ferr_add_str(causes, FERR_INVALID, path, av, detail);
}

/* The op enum; returns the op ("add" when absent). */
static const char *check_op(const json_t *src, const char *field, json_t *causes)
{
    const json_t *op = json_object_get(src, "op");
    if (!op) return OP_ADD;
    const char *s = str_of(src, "op");
    if (strcmp(s, OP_ADD) != 0 && strcmp(s, OP_SUB) != 0 && strcmp(s, OP_COUNT) != 0) {
        char path[FIELD_MAX];
        snprintf(path, sizeof path, "%s.op", field);
        ferr_add_str(causes, FERR_NOT_SUPPORTED, path, s,
                     "supported values: \"" OP_ADD "\", \"" OP_SUB "\", \"" OP_COUNT "\"");
    }
    return s;
}

/* The CRD's CEL rule on a source: count takes neither path nor cel, the
 * other ops exactly one of them. Reported on the source, as the apiserver
 * reports a rule on an object. */
static void check_rule(const json_t *src, const char *op, const char *field, json_t *causes)
{
    bool path = *str_of(src, "path"), cel = *str_of(src, "cel");
    bool ok = strcmp(op, OP_COUNT) == 0 ? !path && !cel : path != cel;
    if (ok) return;
    ferr_add_str(causes, FERR_INVALID, field, "object", CQ_MSG_SOURCE_RULE);
}

static void check_path(const json_t *src, const char *field, json_t *causes)
{
    /* Capsule's rules before parsing (core/jsonpath.h, Go's TrimSpace) */
    const char *p = str_of(src, "path");
    char err[256];
    if (!*p || jp_source_path_rules(p, err, sizeof err) == JP_OK) return;
    char path[FIELD_MAX];
    snprintf(path, sizeof path, "%s.path", field);
    ferr_add_str(causes, FERR_INVALID, path, p, err);
    /* The path's JSONPath is compiled by the registry (core/jsonpath.h
     * jp_compile_source_path); Capsule itself only compiles it in its
     * controller, so a path that does not parse is Ready=False there. */
}

static void check_cel(const json_t *src, const char *field, json_t *causes)
{
    const char *cel = str_of(src, "cel");
    if (!*cel) return;
    char path[FIELD_MAX];
    snprintf(path, sizeof path, "%s.cel", field);
    check_length(cel, path, 0, CQ_CEL_MAX, causes);
    /* The expression is compiled (and must give a quantity or a list of
     * them) by the registry (core/cel.h), with Capsule's
     * "invalid CEL expression: spec.sources[i].cel: ..." */
}

static void check_source(const json_t *src, const char *field, json_t *causes)
{
    char path[FIELD_MAX];
    if (cv_type_check(src, CV_OBJECT, field, causes)) return;
    const json_t *kind = json_object_get(src, "kind");
    snprintf(path, sizeof path, "%s.kind", field);
    if (require(kind, path, causes) == 0)
        check_length(str_of(src, "kind"), path, 1, SIZE_MAX, causes);
    check_gvk(src, field, causes);
    check_rule(src, check_op(src, field, causes), field, causes);
    check_path(src, field, causes);
    check_cel(src, field, causes);
    snprintf(path, sizeof path, "%s.selectors", field);
    check_selectors(json_object_get(src, "selectors"), path, causes);
}

/* ---- validation: the spec ---- */

/* Capsule's webhook: the limit must be more than 0. */
static void check_limit(const json_t *spec, json_t *causes)
{
    const json_t *limit = json_object_get(spec, "limit");
    qty q;
    char text[128], detail[256];
    if (require(limit, "spec.limit", causes) != 0) return;
    if (cv_quantity(limit, "spec.limit", &q, causes) != 0 || qty_sign(&q) > 0) return;
    qty_format_str(&q, text, sizeof text);
    snprintf(detail, sizeof detail, CQ_MSG_LIMIT, text);
    ferr_add_str(causes, FERR_INVALID, "spec.limit", text, detail);
}

static void check_sources(const json_t *spec, json_t *causes)
{
    const json_t *sources = json_object_get(spec, "sources");
    char path[FIELD_MAX];
    size_t i;
    const json_t *src;
    if (require(sources, "spec.sources", causes) != 0 ||
        cv_type_check(sources, CV_ARRAY, "spec.sources", causes))
        return;
    if (json_array_size(sources) == 0)
        ferr_add(causes, FERR_REQUIRED, "spec.sources", NULL, "at least one source is required");
    json_array_foreach(sources, i, src)
    {
        snprintf(path, sizeof path, "spec.sources[%zu]", i);
        check_source(src, path, causes);
    }
}

static void check_options(const json_t *spec, json_t *causes)
{
    const json_t *options = json_object_get(spec, "options");
    if (require(options, "spec.options", causes) != 0 ||
        cv_type_check(options, CV_OBJECT, "spec.options", causes))
        return;
    cv_type_check(json_object_get(options, "emitMetricPerClaimUsage"), CV_BOOLEAN,
                  "spec.options.emitMetricPerClaimUsage", causes);
}

/* The CustomQuota spec, shared by both kinds; returns the spec when it is an
 * object, else NULL. */
static const json_t *check_spec(const json_t *obj, json_t *causes)
{
    const json_t *spec = json_object_get(obj, "spec");
    if (require(spec, "spec", causes) != 0 || cv_type_check(spec, CV_OBJECT, "spec", causes))
        return NULL;
    check_limit(spec, causes);
    check_sources(spec, causes);
    check_options(spec, causes);
    check_label_selectors(json_object_get(spec, "scopeSelectors"), "spec.scopeSelectors", causes);
    return spec;
}

/* `old` is unused: Capsule's update rules (sources fixed and limit not below
 * usage while usage is recorded) read the quota's status, which the
 * registry owns. */
void customquota_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    check_spec(obj, causes);
}

void globalcustomquota_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    const json_t *spec = check_spec(obj, causes);
    if (spec)
        check_label_selectors(json_object_get(spec, "namespaceSelectors"),
                              "spec.namespaceSelectors", causes);
}
