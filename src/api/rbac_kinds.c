/* rbac_kinds.c - the RBAC kinds' hooks (see rbac_kinds.h). */
#include "api/rbac_kinds.h"

#include "api/status.h"
#include "api/validation.h"
#include "core/dbuf.h"
#include "core/names.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define FIELD_MAX 96
#define MSG_MAX 4096

/* Upstream's words (validation.go), in one place. */
#define MSG_VERBS "verbs must contain at least one value"
#define MSG_NS_URLS "namespaced rules cannot apply to non-resource URLs"
#define MSG_BOTH "rules cannot apply to both regular resources and non-resource URLs"
#define MSG_GROUPS "resource rules must supply at least one api group"
#define MSG_RESOURCES "resource rules must supply at least one resource"
#define MSG_NAMES "resource names cannot apply to multiple resources"
#define MSG_SELECTORS "at least one clusterRoleSelector required if aggregationRule is non-nil"
#define MSG_ROLEREF "cannot change roleRef"
#define MSG_USER_NAME "user name cannot be empty"
#define MSG_GROUP_NAME "group name cannot be empty"

static const char *str_of(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

/* An Invalid cause whose value upstream prints with %#v (a []string or a
 * struct): the caller renders the value. */
static void invalid_raw(json_t *causes, const char *field, const char *value, const char *detail)
{
    char msg[2 * MSG_MAX];
    snprintf(msg, sizeof msg, "Invalid value: %s: %s", value, detail);
    json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "reason", "FieldValueInvalid",
                                            "message", msg, "field", field));
}

/* Go's %#v of a []string: []string{"a", "b"}. */
static void go_string_slice(const json_t *list, char *buf, size_t n)
{
    dbuf b;
    char q[1024];
    size_t i;
    const json_t *v;
    dbuf_init(&b, MSG_MAX);
    dbuf_adds(&b, "[]string{");
    json_array_foreach(list, i, v)
    {
        name_go_quote(json_is_string(v) ? json_string_value(v) : "", q, sizeof q);
        dbuf_printf(&b, "%s%s", i ? ", " : "", q);
    }
    dbuf_adds(&b, "}");
    snprintf(buf, n, "%s", b.p ? b.p : "");
    dbuf_free(&b);
}

static void not_supported(json_t *causes, const char *field, const char *value,
                          const char *supported)
{
    ferr_add_str(causes, FERR_NOT_SUPPORTED, field, value, supported);
}

/* ---- rules ---- */

static void validate_rule(const json_t *rule, bool namespaced, const char *path, json_t *causes)
{
    char f[FIELD_MAX + 16], v[MSG_MAX];
    const json_t *urls = json_object_get(rule, "nonResourceURLs");
    size_t groups = json_array_size(json_object_get(rule, "apiGroups")),
           res = json_array_size(json_object_get(rule, "resources")),
           names = json_array_size(json_object_get(rule, "resourceNames"));
    if (json_array_size(json_object_get(rule, "verbs")) == 0) {
        snprintf(f, sizeof f, "%s.verbs", path);
        ferr_add(causes, FERR_REQUIRED, f, NULL, MSG_VERBS);
    }
    if (json_array_size(urls) > 0) {
        snprintf(f, sizeof f, "%s.nonResourceURLs", path);
        go_string_slice(urls, v, sizeof v);
        if (namespaced) invalid_raw(causes, f, v, MSG_NS_URLS);
        if (groups || res || names) invalid_raw(causes, f, v, MSG_BOTH);
        return;
    }
    snprintf(f, sizeof f, "%s.apiGroups", path);
    if (!groups) ferr_add(causes, FERR_REQUIRED, f, NULL, MSG_GROUPS);
    snprintf(f, sizeof f, "%s.resources", path);
    if (!res) ferr_add(causes, FERR_REQUIRED, f, NULL, MSG_RESOURCES);
    snprintf(f, sizeof f, "%s.resourceNames", path);
    if (names && res > 1) ferr_add(causes, FERR_REQUIRED, f, NULL, MSG_NAMES);
}

static void validate_rules(const json_t *obj, bool namespaced, json_t *causes)
{
    char path[FIELD_MAX];
    size_t i;
    const json_t *rule;
    json_array_foreach(json_object_get(obj, "rules"), i, rule)
    {
        snprintf(path, sizeof path, "rules[%zu]", i);
        validate_rule(rule, namespaced, path, causes);
    }
}

void role_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    validate_rules(obj, true, causes);
}

static void validate_aggregation(const json_t *agg, json_t *causes)
{
    char f[FIELD_MAX];
    const json_t *sels = json_object_get(agg, "clusterRoleSelectors");
    size_t i;
    const json_t *sel;
    if (!agg || json_is_null(agg)) return;
    if (json_array_size(sels) == 0)
        ferr_add(causes, FERR_REQUIRED, "aggregationRule.clusterRoleSelectors", NULL,
                 MSG_SELECTORS);
    json_array_foreach(sels, i, sel)
    {
        snprintf(f, sizeof f, "aggregationRule.clusterRoleSelectors[%zu]", i);
        val_label_selector(sel, f, causes);
    }
}

void clusterrole_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    validate_rules(obj, false, causes);
    validate_aggregation(json_object_get(obj, "aggregationRule"), causes);
}

/* ---- bindings ---- */

static void default_binding(json_t *obj)
{
    json_t *ref = json_object_get(obj, "roleRef");
    if (json_is_object(ref) && !*str_of(ref, "apiGroup"))
        json_object_set_new(ref, "apiGroup", json_string(RBAC_GROUP));
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(obj, "subjects"), i, s)
    {
        const char *kind = str_of(s, "kind");
        if (!json_is_object(s) || *str_of(s, "apiGroup")) continue;
        if (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0)
            json_object_set_new(s, "apiGroup", json_string(RBAC_GROUP));
    }
}

void rolebinding_defaults(json_t *obj)
{
    default_binding(obj);
}

void clusterrolebinding_defaults(json_t *obj)
{
    default_binding(obj);
}

static void validate_role_ref(const json_t *ref, bool namespaced, json_t *causes)
{
    const char *group = str_of(ref, "apiGroup"), *kind = str_of(ref, "kind"),
               *name = str_of(ref, "name");
    if (strcmp(group, RBAC_GROUP) != 0)
        not_supported(causes, "roleRef.apiGroup", group, "supported values: \"" RBAC_GROUP "\"");
    if (namespaced && strcmp(kind, "Role") != 0 && strcmp(kind, "ClusterRole") != 0)
        not_supported(causes, "roleRef.kind", kind, "supported values: \"Role\", \"ClusterRole\"");
    if (!namespaced && strcmp(kind, "ClusterRole") != 0)
        not_supported(causes, "roleRef.kind", kind, "supported values: \"ClusterRole\"");
    if (!*name)
        ferr_add(causes, FERR_REQUIRED, "roleRef.name", NULL, NULL);
    else
        val_name(name, VAL_NAME_PATH_SEGMENT, false, "roleRef.name", causes);
}

static void validate_subject(const json_t *s, bool namespaced, const char *path, json_t *causes)
{
    char f[FIELD_MAX + 16];
    const char *kind = str_of(s, "kind"), *name = str_of(s, "name"), *group = str_of(s, "apiGroup");
    snprintf(f, sizeof f, "%s.name", path);
    if (!*name) ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
    bool sa = strcmp(kind, "ServiceAccount") == 0;
    if (sa && *name) val_dns1123_subdomain(name, f, causes);
    if (!sa && (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0) && !*name)
        ferr_add_str(causes, FERR_INVALID, f, name, *kind == 'U' ? MSG_USER_NAME : MSG_GROUP_NAME);
    snprintf(f, sizeof f, "%s.apiGroup", path);
    if (sa && *group) not_supported(causes, f, group, "supported values: \"\"");
    if (!sa && (strcmp(kind, "User") == 0 || strcmp(kind, "Group") == 0) &&
        strcmp(group, RBAC_GROUP) != 0)
        not_supported(causes, f, group, "supported values: \"" RBAC_GROUP "\"");
    snprintf(f, sizeof f, "%s.namespace", path);
    if (sa && !namespaced && !*str_of(s, "namespace"))
        ferr_add(causes, FERR_REQUIRED, f, NULL, NULL);
    snprintf(f, sizeof f, "%s.kind", path);
    if (!sa && strcmp(kind, "User") != 0 && strcmp(kind, "Group") != 0)
        not_supported(causes, f, kind, "supported values: \"ServiceAccount\", \"User\", \"Group\"");
}

static void validate_binding(const json_t *obj, bool namespaced, json_t *causes)
{
    char path[FIELD_MAX];
    size_t i;
    const json_t *s;
    validate_role_ref(json_object_get(obj, "roleRef"), namespaced, causes);
    json_array_foreach(json_object_get(obj, "subjects"), i, s)
    {
        snprintf(path, sizeof path, "subjects[%zu]", i);
        validate_subject(s, namespaced, path, causes);
    }
}

void rolebinding_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    validate_binding(obj, true, causes);
}

void clusterrolebinding_validate(const json_t *obj, const json_t *old, json_t *causes)
{
    (void)old;
    validate_binding(obj, false, causes);
}

/* Go's %#v of the internal rbac.RoleRef. */
static void go_role_ref(const json_t *ref, char *buf, size_t n)
{
    char g[512], k[512], nm[512];
    name_go_quote(str_of(ref, "apiGroup"), g, sizeof g);
    name_go_quote(str_of(ref, "kind"), k, sizeof k);
    name_go_quote(str_of(ref, "name"), nm, sizeof nm);
    snprintf(buf, n, "rbac.RoleRef{APIGroup:%s, Kind:%s, Name:%s}", g, k, nm);
}

static bool same_ref(const json_t *a, const json_t *b)
{
    return strcmp(str_of(a, "apiGroup"), str_of(b, "apiGroup")) == 0 &&
           strcmp(str_of(a, "kind"), str_of(b, "kind")) == 0 &&
           strcmp(str_of(a, "name"), str_of(b, "name")) == 0;
}

void rbac_binding_validate_update(const json_t *obj, const json_t *old, const char *sub,
                                  json_t *causes)
{
    char v[MSG_MAX];
    const json_t *ref = json_object_get(obj, "roleRef");
    (void)sub;
    if (same_ref(ref, json_object_get(old, "roleRef"))) return;
    go_role_ref(ref, v, sizeof v);
    invalid_raw(causes, "roleRef", v, MSG_ROLEREF);
}
