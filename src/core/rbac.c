/* rbac.c - PolicyRule lists, RuleAllows, Covers and the 403 texts (see
 * rbac.h). The snapshot and authorizer are in rbac_snapshot.c, the bootstrap
 * policy in rbac_policy.c. */
#include "core/rbac.h"

#include "core/names.h"
#include "core/rbac_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upstream's wildcards (rbacv1.VerbAll, APIGroupAll, ResourceAll, NonResourceAll). */
#define ALL "*"

/* ---- string lists ---- */

static int strv_add(rbac_strv *s, const char *v)
{
    char *d = strdup(v);
    char **nv = d ? realloc(s->v, (s->n + 1) * sizeof *nv) : NULL;
    if (!nv) {
        free(d);
        return -1;
    }
    nv[s->n++] = d;
    s->v = nv;
    return 0;
}

static void strv_free(rbac_strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

static int strv_copy(rbac_strv *dst, const rbac_strv *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (strv_add(dst, src->v[i]) != 0) return -1;
    return 0;
}

static int strv_from_json(rbac_strv *s, const json_t *arr)
{
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (json_is_string(v) && strv_add(s, json_string_value(v)) != 0) return -1;
    }
    return 0;
}

bool rbac_strv_has(const rbac_strv *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], v) == 0) return true;
    return false;
}

/* ---- rule lists ---- */

static void rule_free(rbac_rule *r)
{
    strv_free(&r->verbs);
    strv_free(&r->api_groups);
    strv_free(&r->resources);
    strv_free(&r->resource_names);
    strv_free(&r->non_resource_urls);
}

void rbac_rules_init(rbac_rules *r)
{
    memset(r, 0, sizeof *r);
}

void rbac_rules_cleanup(rbac_rules *r)
{
    for (size_t i = 0; i < r->n; i++)
        rule_free(&r->v[i]);
    free(r->v);
    rbac_rules_init(r);
}

/* A new zeroed rule at the end of the list, or NULL. */
static rbac_rule *rules_push(rbac_rules *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        rbac_rule *v = realloc(r->v, cap * sizeof *v);
        if (!v) return NULL;
        r->v = v;
        r->cap = cap;
    }
    rbac_rule *rule = &r->v[r->n++];
    memset(rule, 0, sizeof *rule);
    return rule;
}

int rbac_rules_add(rbac_rules *r, const rbac_rule *src)
{
    rbac_rule *d = rules_push(r);
    if (!d) return -1;
    if (strv_copy(&d->verbs, &src->verbs) || strv_copy(&d->api_groups, &src->api_groups) ||
        strv_copy(&d->resources, &src->resources) ||
        strv_copy(&d->resource_names, &src->resource_names) ||
        strv_copy(&d->non_resource_urls, &src->non_resource_urls)) {
        rule_free(d);
        r->n--;
        return -1;
    }
    return 0;
}

static int rule_from_json(rbac_rule *d, const json_t *o)
{
    return strv_from_json(&d->verbs, json_object_get(o, "verbs")) |
           strv_from_json(&d->api_groups, json_object_get(o, "apiGroups")) |
           strv_from_json(&d->resources, json_object_get(o, "resources")) |
           strv_from_json(&d->resource_names, json_object_get(o, "resourceNames")) |
           strv_from_json(&d->non_resource_urls, json_object_get(o, "nonResourceURLs"));
}

int rbac_rules_add_json(rbac_rules *r, const json_t *rules)
{
    size_t i;
    const json_t *o;
    json_array_foreach(rules, i, o)
    {
        if (!json_is_object(o)) continue;
        rbac_rule *d = rules_push(r);
        if (!d) return -1;
        if (rule_from_json(d, o) != 0) {
            rule_free(d);
            r->n--;
            return -1;
        }
    }
    return 0;
}

static json_t *strv_json(const rbac_strv *s)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < s->n; i++)
        json_array_append_new(a, json_string(s->v[i]));
    return a;
}

/* Set `key` to the list unless it is empty (omitempty), or always. */
static void put_list(json_t *o, const char *key, const rbac_strv *s, bool always)
{
    if (s->n || always) json_object_set_new(o, key, strv_json(s));
}

json_t *rbac_rules_to_json(const rbac_rules *r)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < r->n; i++) {
        const rbac_rule *rule = &r->v[i];
        json_t *o = json_object();
        put_list(o, "verbs", &rule->verbs, true);
        put_list(o, "apiGroups", &rule->api_groups, false);
        put_list(o, "resources", &rule->resources, false);
        put_list(o, "resourceNames", &rule->resource_names, false);
        put_list(o, "nonResourceURLs", &rule->non_resource_urls, false);
        json_array_append_new(arr, o);
    }
    return arr;
}

/* ---- RuleAllows (evaluation_helpers.go) ---- */

static const char *nz(const char *s)
{
    return s ? s : "";
}

static bool has_or_all(const rbac_strv *s, const char *v)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], ALL) == 0 || strcmp(s->v[i], v) == 0) return true;
    return false;
}

/* "*", the combined "res/sub", or "*" + "/" + sub for any resource's sub. */
static bool resource_matches(const rbac_strv *s, const char *combined, const char *sub)
{
    size_t sublen = strlen(sub);
    for (size_t i = 0; i < s->n; i++) {
        const char *r = s->v[i];
        if (strcmp(r, ALL) == 0 || strcmp(r, combined) == 0) return true;
        if (sublen && strlen(r) == sublen + 2 && r[0] == '*' && r[1] == '/' &&
            strcmp(r + 2, sub) == 0)
            return true;
    }
    return false;
}

static bool name_matches(const rbac_strv *s, const char *name)
{
    return s->n == 0 || rbac_strv_has(s, name);
}

/* strings.HasSuffix(owner, "*") && HasPrefix(url, TrimRight(owner, "*")) */
static bool url_prefix_matches(const char *owner, const char *url)
{
    size_t n = strlen(owner);
    if (n == 0 || owner[n - 1] != '*') return false;
    while (n && owner[n - 1] == '*')
        n--;
    return strncmp(url, owner, n) == 0;
}

static bool url_matches(const rbac_strv *s, const char *url)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], ALL) == 0 || strcmp(s->v[i], url) == 0 ||
            url_prefix_matches(s->v[i], url))
            return true;
    return false;
}

bool rbac_rule_allows(const rbac_rule *rule, const rbac_attrs *a)
{
    if (!has_or_all(&rule->verbs, nz(a->verb))) return false;
    if (!a->resource_request) return url_matches(&rule->non_resource_urls, nz(a->path));
    const char *res = nz(a->resource), *sub = nz(a->subresource);
    char stackbuf[256], *combined = stackbuf;
    size_t rl = strlen(res), sl = strlen(sub), need = rl + sl + 2;
    if (*sub && need > sizeof stackbuf && !(combined = malloc(need))) return false;
    if (*sub) { /* "res/sub", without printf: this runs for every rule visited */
        memcpy(combined, res, rl);
        combined[rl] = '/';
        memcpy(combined + rl + 1, sub, sl + 1);
    } else {
        combined = (char *)res;
    }
    bool ok = has_or_all(&rule->api_groups, nz(a->api_group)) &&
              resource_matches(&rule->resources, combined, sub) &&
              name_matches(&rule->resource_names, nz(a->name));
    if (combined != stackbuf && combined != res) free(combined);
    return ok;
}

int rbac_sa_username(const char *ns, const char *name, char *buf, size_t n)
{
    int len = snprintf(buf, n, RBAC_SA_PREFIX "%s:%s", nz(ns), nz(name));
    return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* ---- Covers (policy_comparator.go) ---- */

static bool has_all(const rbac_strv *set, const rbac_strv *want)
{
    for (size_t i = 0; i < want->n; i++)
        if (!rbac_strv_has(set, want->v[i])) return false;
    return true;
}

static bool resource_covers_all(const rbac_strv *set, const rbac_strv *want)
{
    if (rbac_strv_has(set, ALL) || has_all(set, want)) return true;
    for (size_t i = 0; i < want->n; i++) {
        const char *path = want->v[i], *slash = strchr(path, '/');
        if (rbac_strv_has(set, path)) continue;
        if (!slash) return false;
        char sub[512];
        if (snprintf(sub, sizeof sub, "*%s", slash) >= (int)sizeof sub) return false;
        if (!rbac_strv_has(set, sub)) return false;
    }
    return true;
}

static bool url_covers(const char *owner, const char *url)
{
    return strcmp(owner, url) == 0 || url_prefix_matches(owner, url);
}

static bool urls_cover_all(const rbac_strv *set, const rbac_strv *want)
{
    for (size_t i = 0; i < want->n; i++) {
        bool covered = false;
        for (size_t j = 0; j < set->n && !covered; j++)
            covered = url_covers(set->v[j], want->v[i]);
        if (!covered) return false;
    }
    return true;
}

/* ruleCovers: `sub` has at most one verb, group, resource, name and URL. */
static bool rule_covers(const rbac_rule *owner, const rbac_rule *sub)
{
    bool names =
        sub->resource_names.n == 0
            ? owner->resource_names.n == 0
            : owner->resource_names.n == 0 || has_all(&owner->resource_names, &sub->resource_names);
    return (rbac_strv_has(&owner->verbs, ALL) || has_all(&owner->verbs, &sub->verbs)) &&
           (rbac_strv_has(&owner->api_groups, ALL) ||
            has_all(&owner->api_groups, &sub->api_groups)) &&
           resource_covers_all(&owner->resources, &sub->resources) &&
           urls_cover_all(&owner->non_resource_urls, &sub->non_resource_urls) && names;
}

/* One piece of a breakdown: every list holds at most the one value given. */
static int add_piece(rbac_rules *out, const char *group, const char *res, const char *verb,
                     const char *name, const char *url)
{
    rbac_rule *r = rules_push(out);
    if (!r) return -1;
    int rc = strv_add(&r->verbs, verb);
    if (group) rc |= strv_add(&r->api_groups, group);
    if (res) rc |= strv_add(&r->resources, res);
    if (name) rc |= strv_add(&r->resource_names, name);
    if (url) rc |= strv_add(&r->non_resource_urls, url);
    return rc;
}

static int breakdown_resource(const rbac_rule *rule, const char *g, const char *res,
                              rbac_rules *out)
{
    for (size_t v = 0; v < rule->verbs.n; v++) {
        const char *verb = rule->verbs.v[v];
        if (!rule->resource_names.n && add_piece(out, g, res, verb, NULL, NULL)) return -1;
        for (size_t k = 0; k < rule->resource_names.n; k++)
            if (add_piece(out, g, res, verb, rule->resource_names.v[k], NULL)) return -1;
    }
    return 0;
}

int rbac_breakdown_rule(const rbac_rule *rule, rbac_rules *out)
{
    for (size_t g = 0; g < rule->api_groups.n; g++)
        for (size_t r = 0; r < rule->resources.n; r++)
            if (breakdown_resource(rule, rule->api_groups.v[g], rule->resources.v[r], out))
                return -1;
    for (size_t u = 0; u < rule->non_resource_urls.n; u++)
        for (size_t v = 0; v < rule->verbs.n; v++)
            if (add_piece(out, NULL, NULL, rule->verbs.v[v], NULL, rule->non_resource_urls.v[u]))
                return -1;
    return 0;
}

bool rbac_covers(const rbac_rules *owner, const rbac_rules *requested, rbac_rules *uncovered)
{
    rbac_rules pieces = {0};
    bool all = true;
    for (size_t i = 0; i < requested->n; i++)
        if (rbac_breakdown_rule(&requested->v[i], &pieces) != 0) all = false; /* OOM: refuse */
    for (size_t i = 0; i < pieces.n; i++) {
        bool covered = false;
        for (size_t j = 0; j < owner->n && !covered; j++)
            covered = rule_covers(&owner->v[j], &pieces.v[i]);
        if (covered) continue;
        all = false;
        if (uncovered) rbac_rules_add(uncovered, &pieces.v[i]);
    }
    rbac_rules_cleanup(&pieces);
    return all;
}

/* ---- texts ---- */

/* Whether Go's %q would write s as it is, between quotes. */
static bool plain(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == '"' || *p == '\\' || *p >= 0x7f) return false;
    return true;
}

int rbac_quote(dbuf *b, const char *s)
{
    if (plain(s)) /* the usual name: no allocation */
        return dbuf_add(b, "\"", 1) | dbuf_adds(b, s) | dbuf_add(b, "\"", 1);
    size_t cap = 4 * strlen(s) + 3; /* every byte escaped as \xNN at worst */
    char *q = malloc(cap);
    if (!q) return -1;
    name_go_quote(s, q, cap);
    int rc = dbuf_adds(b, q);
    free(q);
    return rc;
}

int rbac_quote_list(dbuf *b, const char *const *v, size_t n)
{
    int rc = dbuf_adds(b, "[");
    for (size_t i = 0; i < n; i++)
        rc |= (i ? dbuf_adds(b, " ") : 0) | rbac_quote(b, v[i]);
    return rc | dbuf_adds(b, "]");
}

static void compact_part(dbuf *b, const char *label, const rbac_strv *s, bool *first)
{
    if (!s->n) return;
    dbuf_printf(b, "%s%s:", *first ? "" : ", ", label);
    rbac_quote_list(b, (const char *const *)s->v, s->n);
    *first = false;
}

static void compact_dbuf(dbuf *b, const rbac_rule *r)
{
    bool first = true;
    dbuf_adds(b, "{");
    compact_part(b, "APIGroups", &r->api_groups, &first);
    compact_part(b, "Resources", &r->resources, &first);
    compact_part(b, "NonResourceURLs", &r->non_resource_urls, &first);
    compact_part(b, "ResourceNames", &r->resource_names, &first);
    compact_part(b, "Verbs", &r->verbs, &first);
    dbuf_adds(b, "}");
}

/* Copy a dbuf's text into buf (truncating) and free it. */
static void dbuf_out(dbuf *b, char *buf, size_t n)
{
    if (n) snprintf(buf, n, "%s", b->p ? b->p : "");
    dbuf_free(b);
}

void rbac_rule_compact_string(const rbac_rule *rule, char *buf, size_t n)
{
    dbuf b;
    dbuf_init(&b, RBAC_TEXT_MAX);
    compact_dbuf(&b, rule);
    dbuf_out(&b, buf, n);
}

/* CompactRules (pkg/registry/rbac/validation/compact.go): rules with one
 * group, one resource, at most one name and no URL merge their verbs by
 * (group, resource, name); the others stay as they are. */
static bool simple_rule(const rbac_rule *r)
{
    return r->resource_names.n <= 1 && r->non_resource_urls.n == 0 && r->api_groups.n == 1 &&
           r->resources.n == 1;
}

static bool same_simple(const rbac_rule *a, const rbac_rule *b)
{
    return strcmp(a->api_groups.v[0], b->api_groups.v[0]) == 0 &&
           strcmp(a->resources.v[0], b->resources.v[0]) == 0 &&
           a->resource_names.n == b->resource_names.n &&
           (!a->resource_names.n || strcmp(a->resource_names.v[0], b->resource_names.v[0]) == 0);
}

static void compact_rules(const rbac_rules *in, rbac_rules *out)
{
    for (size_t i = 0; i < in->n; i++) {
        const rbac_rule *r = &in->v[i];
        rbac_rule *merged = NULL;
        for (size_t j = 0; simple_rule(r) && j < out->n && !merged; j++)
            if (simple_rule(&out->v[j]) && same_simple(&out->v[j], r)) merged = &out->v[j];
        if (merged)
            strv_copy(&merged->verbs, &r->verbs);
        else
            rbac_rules_add(out, r);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The CompactString of each rule, sorted and de-duplicated (sets.String). */
static void sorted_lines(const rbac_rules *rules, dbuf *b)
{
    char **lines = calloc(rules->n ? rules->n : 1, sizeof *lines);
    if (!lines) return;
    for (size_t i = 0; i < rules->n; i++) {
        dbuf l;
        dbuf_init(&l, RBAC_TEXT_MAX);
        compact_dbuf(&l, &rules->v[i]);
        lines[i] = dbuf_take(&l, NULL);
    }
    qsort(lines, rules->n, sizeof *lines, cmp_str);
    for (size_t i = 0, out = 0; i < rules->n; i++) {
        if (lines[i] && (i == 0 || !lines[i - 1] || strcmp(lines[i], lines[i - 1]) != 0))
            dbuf_printf(b, "%s%s", out++ ? "\n" : "", lines[i]);
    }
    for (size_t i = 0; i < rules->n; i++)
        free(lines[i]);
    free(lines);
}

void rbac_escalation_text(const rbac_user *u, const rbac_rules *missing, const char *err, char *buf,
                          size_t n)
{
    dbuf b;
    rbac_rules compact = {0};
    dbuf_init(&b, RBAC_TEXT_MAX);
    compact_rules(missing, &compact);
    dbuf_adds(&b, "user ");
    rbac_quote(&b, nz(u->name));
    dbuf_adds(&b, " (groups=");
    rbac_quote_list(&b, u->groups, u->ngroups);
    dbuf_adds(&b, ") is attempting to grant RBAC permissions not currently held:\n");
    sorted_lines(&compact, &b);
    if (err && *err) dbuf_printf(&b, "; resolution errors: [%s]", err);
    rbac_rules_cleanup(&compact);
    dbuf_out(&b, buf, n);
}

void rbac_forbidden_text(const char *resource, const char *group, const char *name,
                         const char *detail, char *buf, size_t n)
{
    dbuf b;
    dbuf_init(&b, RBAC_TEXT_MAX);
    if (!resource || !*resource) {
        dbuf_printf(&b, "forbidden: %s", nz(detail));
    } else {
        dbuf_adds(&b, resource);
        if (group && *group) dbuf_printf(&b, ".%s", group);
        if (name && *name) {
            dbuf_adds(&b, " ");
            rbac_quote(&b, name);
        }
        dbuf_printf(&b, " is forbidden: %s", nz(detail));
    }
    dbuf_out(&b, buf, n);
}

/* forbiddenMessage (responsewriters/errors.go). */
static void forbidden_detail(const rbac_attrs *a, dbuf *b)
{
    dbuf_adds(b, "User ");
    rbac_quote(b, nz(a->user.name));
    dbuf_printf(b, " cannot %s ", nz(a->verb));
    if (!a->resource_request) {
        dbuf_adds(b, "path ");
        rbac_quote(b, nz(a->path));
        return;
    }
    dbuf b2;
    dbuf_init(&b2, RBAC_TEXT_MAX);
    dbuf_adds(&b2, nz(a->resource));
    if (a->subresource && *a->subresource) dbuf_printf(&b2, "/%s", a->subresource);
    dbuf_adds(b, "resource ");
    rbac_quote(b, b2.p ? b2.p : "");
    dbuf_free(&b2);
    dbuf_adds(b, " in API group ");
    rbac_quote(b, nz(a->api_group));
    if (a->ns && *a->ns) {
        dbuf_adds(b, " in the namespace ");
        rbac_quote(b, a->ns);
    } else {
        dbuf_adds(b, " at the cluster scope");
    }
}

void rbac_forbidden_message(const rbac_attrs *a, const char *reason, char *buf, size_t n)
{
    dbuf d;
    dbuf_init(&d, RBAC_TEXT_MAX);
    forbidden_detail(a, &d);
    if (reason && *reason) dbuf_printf(&d, ": %s", reason);
    const char *res = a->resource_request ? a->resource : NULL;
    rbac_forbidden_text(res, a->api_group, a->resource_request ? a->name : NULL, d.p ? d.p : "",
                        buf, n);
    dbuf_free(&d);
}
