/* crd.c - the CustomResourceDefinition kind: defaults, validation, the
 * delete finalizer and conditions (see crd.h). Messages are upstream's
 * (apiextensions-apiserver/pkg/apis/apiextensions/validation), in the
 * order upstream appends them. */
#include "api/crd.h"

#include "api/objects.h"
#include "api/status.h"
#include "core/jget.h"
#include "core/jsonpath.h"
#include "core/jsonschema.h"
#include "core/names.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool jtrue(const json_t *o, const char *k)
{
    return json_is_true(json_object_get(o, k));
}

static const json_t *spec_of(const json_t *crd)
{
    return json_object_get(crd, "spec");
}

static const json_t *versions_of(const json_t *crd)
{
    return json_object_get(spec_of(crd), "versions");
}

const char *crd_storage_version(const json_t *crd)
{
    size_t i;
    json_t *v;
    json_array_foreach(versions_of(crd), i, v) if (jtrue(v, "storage")) return jstr(v, "name");
    return NULL;
}

const json_t *crd_version(const json_t *crd, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(versions_of(crd), i, v)
    {
        const char *n = jstr(v, "name");
        if (n && !strcmp(n, name)) return v;
    }
    return NULL;
}

bool crd_namespaced(const json_t *crd)
{
    const char *scope = jstr(spec_of(crd), "scope");
    return scope && !strcmp(scope, "Namespaced");
}

/* ---- defaults ---- */

static void lower(const char *in, char *out, size_t n)
{
    size_t i = 0;
    for (; in[i] && i + 1 < n; i++)
        out[i] = (char)tolower((unsigned char)in[i]);
    out[i] = '\0';
}

/* status.storedVersions gets the storage version when it lacks it. */
static void default_stored_versions(json_t *obj)
{
    const char *sv = crd_storage_version(obj);
    if (!sv) return;
    json_t *status = json_object_ensure(obj, "status");
    json_t *stored = json_object_get(status, "storedVersions");
    if (!json_is_array(stored)) {
        stored = json_array();
        json_object_set_new(status, "storedVersions", stored);
    }
    size_t i;
    json_t *v;
    json_array_foreach(stored, i,
                       v) if (json_is_string(v) && !strcmp(json_string_value(v), sv)) return;
    json_array_append_new(stored, json_string(sv));
}

void crd_defaults(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    if (!json_is_object(spec)) return;
    json_t *conv = json_object_ensure(spec, "conversion");
    if (!jstr(conv, "strategy")) json_object_set_new(conv, "strategy", json_string("None"));
    json_t *names = json_object_get(spec, "names");
    const char *kind = jstr(names, "kind");
    if (json_is_object(names) && kind && *kind) {
        char buf[512];
        const char *singular = jstr(names, "singular");
        const char *list = jstr(names, "listKind");
        if (!singular || !*singular) {
            lower(kind, buf, sizeof buf);
            json_object_set_new(names, "singular", json_string(buf));
        }
        if (!list || !*list) {
            snprintf(buf, sizeof buf, "%sList", kind);
            json_object_set_new(names, "listKind", json_string(buf));
        }
    }
    default_stored_versions(obj);
    /* upstream serialises acceptedNames (a struct, not a pointer) always */
    json_t *status = json_object_ensure(obj, "status");
    json_t *acc = json_object_get(status, "acceptedNames");
    if (!json_is_object(acc))
        json_object_set_new(status, "acceptedNames",
                            json_pack("{s:s, s:s}", "plural", "", "kind", ""));
}

/* ---- field errors ---- */

/* One Invalid error whose detail is IsDNS1035Label's messages joined by ","
 * (with `prefix` before them), as upstream reports names. */
static void dns1035(const char *v, const char *field, const char *prefix, bool lowercase,
                    json_t *causes)
{
    name_msgs m = {0};
    char low[512], joined[NAME_MSGS_MAX * NAME_MSG_LEN], detail[sizeof joined + 128];
    if (lowercase) {
        lower(v, low, sizeof low);
        name_dns1035_label(low, &m);
    } else {
        name_dns1035_label(v, &m);
    }
    if (!m.n) return;
    name_msgs_join(&m, ",", joined, sizeof joined);
    snprintf(detail, sizeof detail, "%s%s", prefix, joined);
    ferr_add_str(causes, FERR_INVALID, field, v, detail);
}

/* ValidateCustomResourceDefinitionNames (spec.names and status.acceptedNames). */
static void validate_names(const json_t *names, const char *path, json_t *causes)
{
    char f[512];
    const struct {
        const char *key;
        bool mixed; /* kinds: lower-cased first, with upstream's prefix */
    } one[] = {{"plural", false}, {"singular", false}, {"kind", true}, {"listKind", true}};
    for (size_t i = 0; i < sizeof one / sizeof *one; i++) {
        const char *v = jstr(names, one[i].key);
        if (!v || !*v) continue;
        snprintf(f, sizeof f, "%s.%s", path, one[i].key);
        dns1035(v, f, one[i].mixed ? "may have mixed case, but should otherwise match: " : "",
                one[i].mixed, causes);
    }
    const char *lists[] = {"shortNames", "categories"};
    for (size_t l = 0; l < 2; l++) {
        if (l == 1) {
            const char *kind = jstr(names, "kind"), *list = jstr(names, "listKind");
            if (kind && *kind && list && !strcmp(kind, list)) {
                snprintf(f, sizeof f, "%s.listKind", path);
                ferr_add_str(causes, FERR_INVALID, f, list,
                             "kind and listKind may not be the same");
            }
        }
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(names, lists[l]), i, v)
        {
            snprintf(f, sizeof f, "%s.%s[%zu]", path, lists[l], i);
            dns1035(json_is_string(v) ? json_string_value(v) : "", f, "", false, causes);
        }
    }
}

/* upstream's validateSimpleJSONPath: 0 when s is a simple path. */
static int simple_json_path(const char *s, const char *field, json_t *causes)
{
    if (!*s) {
        ferr_add_str(causes, FERR_INVALID, field, s, "must not be empty");
        return -1;
    }
    if (s[0] != '.') {
        ferr_add_str(causes, FERR_INVALID, field, s, "must be a simple json path starting with .");
        return -1;
    }
    return 0;
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* ValidateCustomResourceDefinitionSubresources (scale). */
static void validate_scale(const json_t *scale, const char *path, json_t *causes)
{
    char f[512];
    static const struct {
        const char *key, *under, *msg;
    } paths[] = {{"specReplicasPath", ".spec.", "should be a json path under .spec"},
                 {"statusReplicasPath", ".status.", "should be a json path under .status"}};
    for (size_t i = 0; i < 2; i++) {
        const char *p = jstr(scale, paths[i].key);
        snprintf(f, sizeof f, "%s.scale.%s", path, paths[i].key);
        if (!p || !*p)
            ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
        else if (simple_json_path(p, f, causes) == 0 && !has_prefix(p, paths[i].under))
            ferr_add_str(causes, FERR_INVALID, f, p, paths[i].msg);
    }
    const char *sel = jstr(scale, "labelSelectorPath");
    snprintf(f, sizeof f, "%s.scale.labelSelectorPath", path);
    if (sel && *sel && simple_json_path(sel, f, causes) == 0 && !has_prefix(sel, ".spec.") &&
        !has_prefix(sel, ".status."))
        ferr_add_str(causes, FERR_INVALID, f, sel,
                     "should be a json path under either .spec or .status");
}

static bool in_list(const char *v, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(v, *list)) return true;
    return false;
}

/* ValidateCustomResourceColumnDefinition; the path must also compile as
 * client-go's JSONPath, which upstream finds only when it serves the table
 * (stricter: refused here, not when listing). */
static void validate_column(const json_t *col, const char *path, json_t *causes)
{
    static const char *const types[] = {"boolean", "date", "integer", "number", "string", NULL};
    static const char *const formats[] = {"byte",  "date",  "date-time", "double", "float",
                                          "int32", "int64", "password",  NULL};
    char f[512];
    const char *name = jstr(col, "name"), *type = jstr(col, "type"), *format = jstr(col, "format");
    const char *jp = jstr(col, "jsonPath");
    snprintf(f, sizeof f, "%s.name", path);
    if (!name || !*name) ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
    snprintf(f, sizeof f, "%s.type", path);
    if (!type || !*type)
        ferr_add(causes, FERR_REQUIRED, f, NULL,
                 "must be one of boolean,date,integer,number,string");
    else if (!in_list(type, types))
        ferr_add_str(causes, FERR_INVALID, f, type,
                     "must be one of boolean,date,integer,number,string");
    snprintf(f, sizeof f, "%s.format", path);
    if (format && *format && !in_list(format, formats))
        ferr_add_str(causes, FERR_INVALID, f, format,
                     "must be one of byte,date,date-time,double,float,int32,int64,password");
    snprintf(f, sizeof f, "%s.JSONPath", path);
    if (!jp || !*jp) {
        ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
    } else if (simple_json_path(jp, f, causes) == 0) {
        char tmpl[1100], err[512];
        snprintf(tmpl, sizeof tmpl, "{%s}", jp);
        jp_expr *e = strlen(jp) < 1024 ? jp_compile(tmpl, NULL, err, sizeof err) : NULL;
        if (!e) ferr_add_str(causes, FERR_INVALID, f, jp, "unrecognized column definition");
        jp_free(e);
    }
}

/* selectableFields: at most 8, each a simple path under the schema, unique. */
static void validate_selectable(const json_t *fields, const char *path, json_t *causes)
{
    char f[512];
    size_t n = json_array_size(fields), i;
    json_t *v;
    if (n > CRD_MAX_SELECTABLE_FIELDS) {
        json_t *c = json_pack("{s:s, s:s, s:s}", "reason", "FieldValueTooMany", "field", path,
                              "message", "");
        char msg[128];
        snprintf(msg, sizeof msg, "Too many: %zu: must have at most %d items", n,
                 CRD_MAX_SELECTABLE_FIELDS);
        json_object_set_new(c, "message", json_string(msg));
        json_array_append_new(causes, c);
    }
    json_array_foreach(fields, i, v)
    {
        const char *jp = jstr(v, "jsonPath");
        snprintf(f, sizeof f, "%s[%zu].jsonPath", path, i);
        if (!jp || !*jp) {
            ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
            continue;
        }
        if (simple_json_path(jp, f, causes) != 0) continue;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(jp, jstr(json_array_get(fields, j), "jsonPath") ?: "")) {
                ferr_add_str(causes, FERR_DUPLICATE, f, jp, NULL);
                break;
            }
    }
}

/* A js_compile error "<path>: <Reason>: <detail>" as a cause under `prefix`. */
static void schema_error(const char *err, const char *prefix, json_t *causes)
{
    static const struct {
        const char *text, *reason;
    } reasons[] = {{"Required value", "FieldValueRequired"},
                   {"Forbidden", "FieldValueForbidden"},
                   {"Unsupported value", "FieldValueNotSupported"},
                   {"Too long", "FieldValueTooLong"},
                   {"Invalid value", "FieldValueInvalid"}};
    const char *sep = strstr(err, ": ");
    char field[1024];
    const char *msg = sep ? sep + 2 : err, *reason = "FieldValueInvalid";
    snprintf(field, sizeof field, "%s%.*s", prefix, sep ? (int)(sep - err) : 0, err);
    for (size_t i = 0; i < sizeof reasons / sizeof *reasons; i++)
        if (has_prefix(msg, reasons[i].text)) reason = reasons[i].reason;
    json_array_append_new(
        causes, json_pack("{s:s, s:s, s:s}", "reason", reason, "message", msg, "field", field));
}

/* ValidateCustomResourceDefinitionVersion: schema, subresources, columns,
 * selectable fields. */
static void validate_version(const json_t *v, size_t i, json_t *causes)
{
    char path[128], f[256];
    snprintf(path, sizeof path, "spec.versions[%zu]", i);
    const json_t *schema = json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
    snprintf(f, sizeof f, "%s.schema.openAPIV3Schema", path);
    if (!json_is_object(schema)) {
        ferr_add(causes, FERR_REQUIRED, f, NULL, "schemas are required");
    } else {
        char err[1024], prefix[160];
        js_schema *s = js_compile(schema, err, sizeof err);
        snprintf(prefix, sizeof prefix, "%s.schema.", path);
        if (!s) schema_error(err, prefix, causes);
        js_free(s);
    }
    const json_t *scale = json_object_get(json_object_get(v, "subresources"), "scale");
    snprintf(f, sizeof f, "%s.subresources", path);
    if (json_is_object(scale)) validate_scale(scale, f, causes);
    size_t j;
    json_t *col;
    json_array_foreach(json_object_get(v, "additionalPrinterColumns"), j, col)
    {
        snprintf(f, sizeof f, "%s.additionalPrinterColumns[%zu]", path, j);
        validate_column(col, f, causes);
    }
    snprintf(f, sizeof f, "%s.selectableFields", path);
    validate_selectable(json_object_get(v, "selectableFields"), f, causes);
}

/* The versions as a cause's value: name, served and storage of each
 * (upstream prints the Go structs with %#v, schemas and all). */
static json_t *versions_value(const json_t *versions)
{
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(versions, i, v) json_array_append_new(
        out, json_pack("{s:s, s:b, s:b}", "name", jstr(v, "name") ?: "", "served",
                       jtrue(v, "served"), "storage", jtrue(v, "storage")));
    return out;
}

static void validate_versions(const json_t *spec, json_t *causes)
{
    const json_t *versions = json_object_get(spec, "versions");
    size_t storage = 0, served = 0, i;
    bool unique = true;
    json_t *v;
    char f[128];
    json_array_foreach(versions, i, v)
    {
        const char *name = jstr(v, "name") ?: "";
        storage += jtrue(v, "storage");
        served += jtrue(v, "served");
        for (size_t j = 0; j < i; j++)
            if (!strcmp(name, jstr(json_array_get(versions, j), "name") ?: "")) unique = false;
        snprintf(f, sizeof f, "spec.versions[%zu].name", i);
        dns1035(name, f, "", false, causes);
        validate_version(v, i, causes);
    }
    json_t *val = versions_value(versions);
    if (!unique)
        ferr_add(causes, FERR_INVALID, "spec.versions", val, "must contain unique version names");
    if (storage != 1)
        ferr_add(causes, FERR_INVALID, "spec.versions", val,
                 "must have exactly one version marked as storage version");
    /* allot's rule: a definition serving no version is refused (upstream
     * accepts it and serves nothing) */
    if (json_array_size(versions) && !served)
        ferr_add(causes, FERR_INVALID, "spec.versions", val,
                 "must have at least one version marked as served");
    json_decref(val);
}

static void validate_group(const char *group, json_t *causes)
{
    name_msgs m = {0};
    char joined[NAME_MSGS_MAX * NAME_MSG_LEN];
    if (!group || !*group) {
        ferr_add(causes, FERR_REQUIRED, "spec.group", NULL, NULL);
    } else if (name_dns1123_subdomain(group, &m)) {
        name_msgs_join(&m, ",", joined, sizeof joined);
        ferr_add_str(causes, FERR_INVALID, "spec.group", group, joined);
    } else if (!strchr(group, '.')) {
        ferr_add_str(causes, FERR_INVALID, "spec.group", group,
                     "should be a domain with at least one dot");
    }
}

static void validate_required_names(const json_t *names, json_t *causes)
{
    const char *keys[] = {"plural", "singular", "kind", "listKind"};
    char f[64];
    for (size_t i = 0; i < 4; i++) {
        const char *v = jstr(names, keys[i]);
        snprintf(f, sizeof f, "spec.names.%s", keys[i]);
        if (!v || !*v) ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
    }
}

static void validate_conversion(const json_t *conv, json_t *causes)
{
    const char *strategy = jstr(conv, "strategy");
    if (!conv) return;
    if (!strategy || !*strategy)
        ferr_add(causes, FERR_REQUIRED, "spec.conversion.strategy", NULL, NULL);
    else if (strcmp(strategy, "None") != 0) /* no conversion webhooks (docs/crds.md) */
        ferr_add_str(causes, FERR_NOT_SUPPORTED, "spec.conversion.strategy", strategy,
                     "supported values: \"None\"");
    else if (json_object_get(conv, "webhook"))
        ferr_add(causes, FERR_FORBIDDEN, "spec.conversion.webhook", NULL,
                 "should not be set when strategy is not set to Webhook");
}

/* A group ending in k8s.io or kubernetes.io needs the approval annotation. */
static void validate_approval(const json_t *obj, const char *group, json_t *causes)
{
    if (!group) return;
    size_t n = strlen(group);
    bool protected_group = !strcmp(group, "k8s.io") || !strcmp(group, "kubernetes.io") ||
                           (n > 7 && !strcmp(group + n - 7, ".k8s.io")) ||
                           (n > 14 && !strcmp(group + n - 14, ".kubernetes.io"));
    if (!protected_group) return;
    const char *ann = jstr(json_object_get(json_object_get(obj, "metadata"), "annotations"),
                           CRD_APPROVAL_ANNOTATION);
    if (!ann || !*ann)
        ferr_add(causes, FERR_REQUIRED, "metadata.annotations[" CRD_APPROVAL_ANNOTATION "]", NULL,
                 "protected groups must have approval annotation \"" CRD_APPROVAL_ANNOTATION
                 "\", see https://github.com/kubernetes/enhancements/pull/1111");
}

static void validate_stored_versions(const json_t *obj, json_t *causes)
{
    const json_t *stored = json_object_get(json_object_get(obj, "status"), "storedVersions");
    const json_t *versions = versions_of(obj);
    if (!json_array_size(stored)) {
        json_t *val = json_array();
        ferr_add(causes, FERR_INVALID, "status.storedVersions", val,
                 "must have at least one stored version");
        json_decref(val);
        return;
    }
    size_t i;
    json_t *v;
    char f[64], msg[128];
    json_array_foreach(versions, i, v)
    {
        const char *name = jstr(v, "name") ?: "";
        bool found = false;
        for (size_t j = 0; j < json_array_size(stored); j++)
            if (!strcmp(json_string_value(json_array_get(stored, j)) ?: "", name)) found = true;
        if (jtrue(v, "storage") && !found) {
            snprintf(msg, sizeof msg, "must have the storage version %s", name);
            ferr_add_str(causes, FERR_INVALID, "status.storedVersions", name, msg);
        }
    }
    json_array_foreach(stored, i, v)
    {
        const char *s = json_string_value(v) ?: "";
        if (crd_version(obj, s)) continue;
        snprintf(f, sizeof f, "status.storedVersions[%zu]", i);
        ferr_add_str(causes, FERR_INVALID, f, s, "must appear in spec.versions");
    }
}

void crd_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    const json_t *spec = spec_of(obj), *names = json_object_get(spec, "names");
    const char *group = jstr(spec, "group"), *plural = jstr(names, "plural");
    const char *name = jstr(json_object_get(obj, "metadata"), "name");
    char want[600];
    snprintf(want, sizeof want, "%s.%s", plural ? plural : "", group ? group : "");
    if (name && strcmp(name, want) != 0)
        ferr_add_str(causes, FERR_INVALID, "metadata.name", name,
                     "must be spec.names.plural+\".\"+spec.group");
    validate_group(group, causes);
    const char *scope = jstr(spec, "scope");
    if (!scope || !*scope)
        ferr_add(causes, FERR_REQUIRED, "spec.scope", NULL, NULL);
    else if (strcmp(scope, "Cluster") && strcmp(scope, "Namespaced"))
        ferr_add_str(causes, FERR_NOT_SUPPORTED, "spec.scope", scope,
                     "supported values: \"Cluster\", \"Namespaced\"");
    validate_versions(spec, causes);
    validate_required_names(names, causes);
    validate_names(names, "spec.names", causes);
    validate_conversion(json_object_get(spec, "conversion"), causes);
    if (jtrue(spec, "preserveUnknownFields")) {
        json_t *t = json_true();
        ferr_add(causes, FERR_INVALID, "spec.preserveUnknownFields", t,
                 "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in "
                 "spec.versions[*].schema instead");
        json_decref(t);
    }
    validate_names(json_object_get(json_object_get(obj, "status"), "acceptedNames"),
                   "status.acceptedNames", causes);
    if (old) validate_stored_versions(obj, causes);
    validate_approval(obj, group, causes);
}

static void immutable(const json_t *a, const json_t *b, const char *field, json_t *causes)
{
    if (json_equal(a, b) || (!a && !b)) return;
    ferr_add(causes, FERR_INVALID, field, a ? a : json_null(), "field is immutable");
}

void crd_validate_update(const json_t *obj, const json_t *old, const char *sub, json_t *causes)
{
    const json_t *spec = spec_of(obj), *ospec = spec_of(old);
    const json_t *names = json_object_get(spec, "names"), *onames = json_object_get(ospec, "names");
    if (crd_condition_true(old, "Established")) {
        immutable(json_object_get(spec, "scope"), json_object_get(ospec, "scope"), "spec.scope",
                  causes);
        immutable(json_object_get(names, "kind"), json_object_get(onames, "kind"),
                  "spec.names.kind", causes);
    }
    immutable(json_object_get(spec, "group"), json_object_get(ospec, "group"), "spec.group",
              causes);
    immutable(json_object_get(names, "plural"), json_object_get(onames, "plural"),
              "spec.names.plural", causes);
}

/* Whether a schema (or any schema inside it) holds CEL rules. */
static bool has_cel_rules(const json_t *schema, int depth)
{
    if (!json_is_object(schema) || depth > 2 * (int)JS_MAX_SCHEMA_DEPTH) return false;
    if (json_array_size(json_object_get(schema, "x-kubernetes-validations"))) return true;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)schema, key, v)
    {
        if (json_is_object(v) && has_cel_rules(v, depth + 1)) return true;
        size_t i;
        json_t *e;
        if (json_is_array(v))
            json_array_foreach(v, i, e) if (has_cel_rules(e, depth + 1)) return true;
    }
    return false;
}

void crd_warnings(const json_t *obj, json_t *warnings)
{
    size_t i;
    json_t *v;
    json_array_foreach(versions_of(obj), i, v)
    {
        const json_t *s = json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
        if (has_cel_rules(s, 0))
            json_array_append_new(warnings,
                                  json_sprintf("spec.versions[%zu].schema.openAPIV3Schema: "
                                               "x-kubernetes-validations rules are not enforced "
                                               "by allotd",
                                               i));
    }
}

/* ---- conditions ---- */

const json_t *crd_condition(const json_t *crd, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(crd, "status"), "conditions"), i, c)
    {
        const char *t = jstr(c, "type");
        if (t && !strcmp(t, type)) return c;
    }
    return NULL;
}

bool crd_condition_true(const json_t *crd, const char *type)
{
    const char *s = jstr(crd_condition(crd, type), "status");
    return s && !strcmp(s, "True");
}

static bool set_str(json_t *o, const char *k, const char *v)
{
    const char *cur = jstr(o, k);
    if ((!v || !*v) && !cur) return false;
    if (cur && v && !strcmp(cur, v)) return false;
    if (!v || !*v)
        json_object_del(o, k);
    else
        json_object_set_new(o, k, json_string(v));
    return true;
}

bool crd_set_condition(json_t *crd, const char *type, const char *status, const char *reason,
                       const char *message, const char *now)
{
    json_t *st = json_object_ensure(crd, "status");
    json_t *conds = json_object_get(st, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        json_object_set_new(st, "conditions", conds);
    }
    json_t *c = (json_t *)crd_condition(crd, type);
    if (!c) {
        json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status",
                                               status, "lastTransitionTime", now, "reason", reason,
                                               "message", message));
        return true;
    }
    bool changed = false;
    if (set_str(c, "status", status)) {
        json_object_set_new(c, "lastTransitionTime", json_string(now));
        changed = true;
    }
    changed |= set_str(c, "reason", reason);
    changed |= set_str(c, "message", message);
    return changed;
}

void crd_on_delete(json_t *obj, const char *now)
{
    json_t *meta = json_object_ensure(obj, "metadata");
    json_t *fins = json_object_get(meta, "finalizers");
    if (!json_is_array(fins)) {
        fins = json_array();
        json_object_set_new(meta, "finalizers", fins);
    }
    bool has = false;
    size_t i;
    json_t *f;
    json_array_foreach(fins, i, f) if (!strcmp(json_string_value(f) ?: "", CRD_CLEANUP_FINALIZER))
        has = true;
    if (!has) json_array_append_new(fins, json_string(CRD_CLEANUP_FINALIZER));
    crd_set_condition(obj, "Terminating", "True", "InstanceDeletionPending",
                      "CustomResourceDefinition marked for deletion; CustomResource deletion will "
                      "begin soon",
                      now);
}
