/* validation.c - ObjectMeta validation with upstream messages (see validation.h).
 *
 * Where upstream prints a bad value with a Go Stringer or %#v (times,
 * []string, OwnerReference) the text is not a quoted JSON value, so those
 * causes are built by add_raw with the Go rendering; everything else goes
 * through ferr_add so status.c stays the one place causes are formatted.
 */
#include "api/validation.h"

#include "api/status.h"
#include "core/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FINALIZER_ORPHAN "orphan"
#define FINALIZER_FOREGROUND "foregroundDeletion"
#define FIELD_MANAGER_MAX 128
#define SUBRESOURCE_MAX 256
#define GENERATED_BASE_MAX 58 /* 63 - random suffix */

/* ---- helpers ---- */

static const char *str_of(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

/* One Invalid cause per message, all for the same value. */
static int add_msgs(json_t *causes, const char *field, const char *value, const name_msgs *m)
{
    for (int i = 0; i < m->n; i++)
        ferr_add_str(causes, FERR_INVALID, field, value, m->msg[i]);
    return m->n;
}

/* An Invalid cause whose value is already rendered the Go way (unquoted). */
static void add_raw(json_t *causes, const char *field, const char *raw, const char *detail)
{
    size_t n = strlen(raw) + strlen(detail) + 32;
    char *msg = malloc(n);
    if (!msg) return;
    snprintf(msg, n, "Invalid value: %s: %s", raw, detail);
    json_array_append_new(causes, json_pack("{s:s, s:s, s:s}", "reason", "FieldValueInvalid",
                                            "message", msg, "field", field));
    free(msg);
}

/* Go %#v of a []string into a malloc'd string. */
static char *go_string_slice(const char *const *v, size_t n)
{
    size_t cap = 16;
    for (size_t i = 0; i < n; i++)
        cap += strlen(v[i]) * 4 + 4;
    char *out = malloc(cap), *q = malloc(cap);
    if (!out || !q) {
        free(out);
        free(q);
        return NULL;
    }
    strcpy(out, "[]string{");
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(out, ", ");
        strcat(out, name_go_quote(v[i], q, cap));
    }
    strcat(out, "}");
    free(q);
    return out;
}

void val_invalid_strings(json_t *causes, const char *field, const json_t *list, const char *detail)
{
    size_t cnt = json_array_size(list), i;
    const char **v = calloc(cnt ? cnt : 1, sizeof *v);
    char *raw = NULL;
    const json_t *s;
    if (v) {
        json_array_foreach(list, i, s) v[i] = json_is_string(s) ? json_string_value(s) : "";
        raw = go_string_slice(v, cnt);
    }
    add_raw(causes, field, raw ? raw : "[]string{}", detail);
    free(raw);
    free(v);
}

/* ---- single strings ---- */

#define STRING_VALIDATOR(fn, check)                                                                \
    int fn(const char *v, const char *field, json_t *causes)                                       \
    {                                                                                              \
        name_msgs m = {0};                                                                         \
        check(v, &m);                                                                              \
        return add_msgs(causes, field, v, &m);                                                     \
    }
STRING_VALIDATOR(val_dns1123_subdomain, name_dns1123_subdomain)
STRING_VALIDATOR(val_dns1123_label, name_dns1123_label)
STRING_VALIDATOR(val_dns1035_label, name_dns1035_label)
STRING_VALIDATOR(val_qualified_name, name_qualified)
STRING_VALIDATOR(val_label_value, name_label_value)
STRING_VALIDATOR(val_namespace_name, name_dns1123_label)
#undef STRING_VALIDATOR

int val_name(const char *v, int name_kind, bool prefix, const char *field, json_t *causes)
{
    name_msgs m = {0};
    char masked[512];
    const char *check = v;
    size_t len = strlen(v);
    /* maskTrailingDash: upstream drops the last TWO bytes and appends 'a'
     * ("b-" -> "a", "-foo-" -> "-foa"); "-" alone stays as is. */
    if (prefix && name_kind != VAL_NAME_PATH_SEGMENT && len > 1 && v[len - 1] == '-') {
        char *buf = len < sizeof masked ? masked : malloc(len + 1);
        if (!buf) return 0;
        memcpy(buf, v, len - 2);
        buf[len - 2] = 'a';
        buf[len - 1] = '\0';
        check = buf;
    }
    switch (name_kind) {
    case VAL_NAME_LABEL:
        name_dns1123_label(check, &m);
        break;
    case VAL_NAME_DNS1035:
        name_dns1035_label(check, &m);
        break;
    case VAL_NAME_PATH_SEGMENT:
        name_path_segment(check, prefix, &m);
        break;
    default:
        name_dns1123_subdomain(check, &m);
        break;
    }
    if (check != v && check != masked) free((char *)check);
    return add_msgs(causes, field, v, &m);
}

/* ---- maps and lists ---- */

int val_labels(const json_t *labels, const char *field, json_t *causes)
{
    const char *k;
    json_t *v;
    int n = 0;
    json_object_foreach((json_t *)labels, k, v)
    {
        n += val_qualified_name(k, field, causes);
        n += val_label_value(json_is_string(v) ? json_string_value(v) : "", field, causes);
    }
    return n;
}

int val_annotations(const json_t *annotations, const char *field, json_t *causes)
{
    const char *k;
    json_t *v;
    int n = 0;
    size_t total = 0;
    json_object_foreach((json_t *)annotations, k, v)
    {
        /* QualifiedName, except that case does not matter */
        size_t len = strlen(k);
        char *lower = malloc(len + 1);
        if (!lower) continue;
        for (size_t i = 0; i <= len; i++)
            lower[i] = (k[i] >= 'A' && k[i] <= 'Z') ? (char)(k[i] - 'A' + 'a') : k[i];
        name_msgs m = {0};
        name_qualified(lower, &m);
        free(lower);
        n += add_msgs(causes, field, k, &m);
        total += len + (json_is_string(v) ? json_string_length(v) : 0);
    }
    if (total > VAL_ANNOTATIONS_MAX_BYTES) {
        ferr_addf(causes, FERR_TOO_LONG, field, NULL, "must have at most %d bytes",
                  VAL_ANNOTATIONS_MAX_BYTES);
        n++;
    }
    return n;
}

int val_finalizers(const json_t *finalizers, const char *field, json_t *causes)
{
    size_t i;
    json_t *f;
    int n = 0;
    bool orphan = false, foreground = false;
    json_array_foreach(finalizers, i, f)
    {
        const char *s = json_is_string(f) ? json_string_value(f) : "";
        n += val_qualified_name(s, field, causes);
        orphan |= strcmp(s, FINALIZER_ORPHAN) == 0;
        foreground |= strcmp(s, FINALIZER_FOREGROUND) == 0;
    }
    if (orphan && foreground) {
        size_t cnt = json_array_size(finalizers);
        const char **v = calloc(cnt, sizeof *v);
        char *raw = NULL;
        if (v) {
            json_array_foreach(finalizers, i, f) v[i] =
                json_is_string(f) ? json_string_value(f) : "";
            raw = go_string_slice(v, cnt);
        }
        add_raw(causes, field, raw ? raw : "[]string{}",
                "finalizer " FINALIZER_ORPHAN " and " FINALIZER_FOREGROUND " cannot be both set");
        free(raw);
        free(v);
        n++;
    }
    return n;
}

/* The gogo-protobuf String() of metav1.OwnerReference, as %v prints it. */
static char *owner_ref_string(const json_t *ref)
{
    const json_t *c = json_object_get(ref, "controller");
    const json_t *b = json_object_get(ref, "blockOwnerDeletion");
    const char *cs = json_is_boolean(c) ? (json_is_true(c) ? "*true" : "*false") : "nil";
    const char *bs = json_is_boolean(b) ? (json_is_true(b) ? "*true" : "*false") : "nil";
    const char *kind = str_of(ref, "kind"), *name = str_of(ref, "name");
    const char *uid = str_of(ref, "uid"), *av = str_of(ref, "apiVersion");
    size_t n = strlen(kind) + strlen(name) + strlen(uid) + strlen(av) + 128;
    char *s = malloc(n);
    if (s)
        snprintf(s, n,
                 "&OwnerReference{Kind:%s,Name:%s,UID:%s,APIVersion:%s,Controller:%s,"
                 "BlockOwnerDeletion:%s,}",
                 kind, name, uid, av, cs, bs);
    return s;
}

static int val_owner_reference(const json_t *ref, const char *field, json_t *causes)
{
    char path[512];
    int n = 0;
    const char *av = str_of(ref, "apiVersion");
    const char *slash = strchr(av, '/');
    /* schema.ParseGroupVersion: "", "/", more than one '/' and "g/" all
     * leave the version empty. */
    const char *version = av;
    if (strcmp(av, "/") == 0 || (slash && strchr(slash + 1, '/')))
        version = "";
    else if (slash)
        version = slash + 1;
    static const struct {
        const char *key, *detail;
    } required[] = {
        {"kind", "must not be empty"}, {"name", "must not be empty"}, {"uid", "must not be empty"}};
    if (!*version) {
        snprintf(path, sizeof path, "%s.apiVersion", field);
        ferr_add_str(causes, FERR_INVALID, path, av, "version must not be empty");
        n++;
    }
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++) {
        if (*str_of(ref, required[i].key)) continue;
        snprintf(path, sizeof path, "%s.%s", field, required[i].key);
        ferr_add_str(causes, FERR_INVALID, path, "", required[i].detail);
        n++;
    }
    /* BannedOwners: core/v1 Event */
    if (!slash && strcmp(av, "v1") == 0 && strcmp(str_of(ref, "kind"), "Event") == 0) {
        char *raw = owner_ref_string(ref);
        add_raw(causes, field, raw ? raw : "", "/v1, Kind=Event is disallowed from being an owner");
        free(raw);
        n++;
    }
    return n;
}

int val_owner_references(const json_t *refs, const char *field, json_t *causes)
{
    size_t i;
    json_t *ref;
    int n = 0;
    char first[512] = "";
    json_array_foreach(refs, i, ref)
    {
        n += val_owner_reference(ref, field, causes);
        if (!json_is_true(json_object_get(ref, "controller"))) continue;
        char cur[512];
        snprintf(cur, sizeof cur, "%s/%s", str_of(ref, "kind"), str_of(ref, "name"));
        if (!*first) {
            snprintf(first, sizeof first, "%s", cur);
            continue;
        }
        /* Upstream prints the whole []OwnerReference with %#v (pointer
         * addresses included); the JSON list stands in for it. */
        ferr_addf(causes, FERR_INVALID, field, refs,
                  "Only one reference can have Controller set to true. Found \"true\" in "
                  "references for %s and %s",
                  first, cur);
        n++;
    }
    return n;
}

int val_label_selector(const json_t *ls, const char *field, json_t *causes)
{
    char path[512], vpath[600];
    size_t i, j;
    json_t *expr, *v;
    int n = 0;
    if (!ls || json_is_null(ls)) return 0;
    snprintf(path, sizeof path, "%s.matchLabels", field);
    n += val_labels(json_object_get(ls, "matchLabels"), path, causes);
    json_array_foreach(json_object_get(ls, "matchExpressions"), i, expr)
    {
        const char *op = str_of(expr, "operator");
        const json_t *vals = json_object_get(expr, "values");
        snprintf(path, sizeof path, "%s.matchExpressions[%zu]", field, i);
        snprintf(vpath, sizeof vpath, "%s.values", path);
        if (!strcmp(op, "In") || !strcmp(op, "NotIn")) {
            if (json_array_size(vals) == 0) {
                ferr_add(causes, FERR_REQUIRED, vpath, NULL,
                         "must be specified when `operator` is 'In' or 'NotIn'");
                n++;
            }
        } else if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
            if (json_array_size(vals) > 0) {
                ferr_add(causes, FERR_FORBIDDEN, vpath, NULL,
                         "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
                n++;
            }
        } else {
            snprintf(vpath, sizeof vpath, "%s.operator", path);
            ferr_add_str(causes, FERR_INVALID, vpath, op, "not a valid selector operator");
            n++;
        }
        snprintf(vpath, sizeof vpath, "%s.key", path);
        n += val_qualified_name(str_of(expr, "key"), vpath, causes);
        json_array_foreach(vals, j, v)
        {
            snprintf(vpath, sizeof vpath, "%s.values[%zu]", path, j);
            n += val_label_value(json_is_string(v) ? json_string_value(v) : "", vpath, causes);
        }
    }
    return n;
}

static int val_managed_fields(const json_t *mf, json_t *causes)
{
    size_t i;
    json_t *e;
    int n = 0;
    char path[128];
    json_array_foreach(mf, i, e)
    {
        const char *op = str_of(e, "operation"), *ft = str_of(e, "fieldsType");
        if (strcmp(op, "Apply") != 0 && strcmp(op, "Update") != 0) {
            snprintf(path, sizeof path, "metadata.managedFields[%zu].operation", i);
            ferr_add_str(causes, FERR_INVALID, path, op, "must be `Apply` or `Update`");
            n++;
        }
        if (*ft && strcmp(ft, "FieldsV1") != 0) {
            snprintf(path, sizeof path, "metadata.managedFields[%zu].fieldsType", i);
            ferr_add_str(causes, FERR_INVALID, path, ft, "must be `FieldsV1`");
            n++;
        }
        if (strlen(str_of(e, "manager")) > FIELD_MANAGER_MAX) {
            snprintf(path, sizeof path, "metadata.managedFields[%zu].manager", i);
            ferr_addf(causes, FERR_TOO_LONG, path, NULL, "must have at most %d bytes",
                      FIELD_MANAGER_MAX);
            n++;
        }
        if (strlen(str_of(e, "subresource")) > SUBRESOURCE_MAX) {
            snprintf(path, sizeof path, "metadata.managedFields[%zu].subresource", i);
            ferr_addf(causes, FERR_TOO_LONG, path, NULL, "must have at most %d bytes",
                      SUBRESOURCE_MAX);
            n++;
        }
    }
    return n;
}

/* Shared by create and update (validateObjectMetaAccessorWithOptsCommon
 * minus the namespace part, plus the update's trailing checks). */
static int val_meta_maps(const json_t *meta, json_t *causes)
{
    int n = val_labels(json_object_get(meta, "labels"), "metadata.labels", causes);
    n += val_annotations(json_object_get(meta, "annotations"), "metadata.annotations", causes);
    n += val_owner_references(json_object_get(meta, "ownerReferences"), "metadata.ownerReferences",
                              causes);
    return n;
}

/* ---- ObjectMeta ---- */

int val_object_meta(const json_t *meta, bool namespaced, int name_kind, json_t *causes)
{
    int n = 0;
    const char *gen = str_of(meta, "generateName");
    const char *name = str_of(meta, "name");
    const char *ns = str_of(meta, "namespace");
    if (*gen) n += val_name(gen, name_kind, true, "metadata.generateName", causes);
    if (!*name) {
        ferr_add(causes, FERR_REQUIRED, "metadata.name", NULL, "name or generateName is required");
        n++;
    } else {
        n += val_name(name, name_kind, false, "metadata.name", causes);
    }
    if (namespaced && !*ns) {
        ferr_add(causes, FERR_REQUIRED, "metadata.namespace", NULL, NULL);
        n++;
    } else if (namespaced) {
        n += val_namespace_name(ns, "metadata.namespace", causes);
    } else if (*ns) {
        ferr_add(causes, FERR_FORBIDDEN, "metadata.namespace", NULL, "not allowed on this type");
        n++;
    }
    const json_t *g = json_object_get(meta, "generation");
    if (json_is_integer(g) && json_integer_value(g) < 0) {
        ferr_add(causes, FERR_INVALID, "metadata.generation", g,
                 "must be greater than or equal to 0");
        n++;
    }
    n += val_meta_maps(meta, causes);
    n += val_finalizers(json_object_get(meta, "finalizers"), "metadata.finalizers", causes);
    n += val_managed_fields(json_object_get(meta, "managedFields"), causes);
    return n;
}

/* metav1.Time's String() for an RFC 3339 UTC time, as Go prints it in a
 * UTC process: "2024-01-02 03:04:05 +0000 UTC". Absent means the zero time. */
static void go_time(const json_t *t, char *buf, size_t n)
{
    const char *s = json_string_value(t);
    if (!s || !*s) {
        snprintf(buf, n, "0001-01-01 00:00:00 +0000 UTC");
    } else if (strlen(s) == 20 && s[10] == 'T' && s[19] == 'Z') {
        snprintf(buf, n, "%.10s %.8s +0000 UTC", s, s + 11);
    } else {
        snprintf(buf, n, "%s", s);
    }
}

static int immutable_str(const json_t *newm, const json_t *oldm, const char *key, json_t *causes)
{
    const char *nv = str_of(newm, key), *ov = str_of(oldm, key);
    char field[64];
    if (strcmp(nv, ov) == 0) return 0;
    snprintf(field, sizeof field, "metadata.%s", key);
    ferr_add_str(causes, FERR_INVALID, field, nv, VAL_FIELD_IMMUTABLE);
    return 1;
}

static int immutable_time(const json_t *newm, const json_t *oldm, const char *key, bool pointer,
                          json_t *causes)
{
    const json_t *nt = json_object_get(newm, key), *ot = json_object_get(oldm, key);
    char nb[64], ob[64], field[64];
    go_time(nt, nb, sizeof nb);
    go_time(ot, ob, sizeof ob);
    if (strcmp(nb, ob) == 0) return 0;
    snprintf(field, sizeof field, "metadata.%s", key);
    /* a nil *Time prints as null; a metav1.Time value as its String() */
    bool nil = pointer && (!json_is_string(nt) || !*json_string_value(nt));
    add_raw(causes, field, nil ? "null" : nb, VAL_FIELD_IMMUTABLE);
    return 1;
}

static int no_new_finalizers(const json_t *newf, const json_t *oldf, json_t *causes)
{
    size_t i, j, cnt = 0;
    json_t *f, *o;
    const char **extra = calloc(json_array_size(newf) + 1, sizeof *extra);
    if (!extra) return 0;
    json_array_foreach(newf, i, f)
    {
        const char *s = json_is_string(f) ? json_string_value(f) : "";
        bool known = false;
        json_array_foreach(oldf, j, o) known |=
            json_is_string(o) && !strcmp(s, json_string_value(o));
        for (j = 0; j < cnt && !known; j++)
            known = strcmp(extra[j], s) == 0;
        if (known) continue;
        /* sets.String.List(): sorted */
        for (j = cnt; j > 0 && strcmp(extra[j - 1], s) > 0; j--)
            extra[j] = extra[j - 1];
        extra[j] = s;
        cnt++;
    }
    if (cnt) {
        char *raw = go_string_slice(extra, cnt);
        ferr_addf(causes, FERR_FORBIDDEN, "metadata.finalizers", NULL,
                  "no new finalizers can be added if the object is being deleted, found new "
                  "finalizers %s",
                  raw ? raw : "");
        free(raw);
    }
    free(extra);
    return cnt ? 1 : 0;
}

int val_object_meta_update(const json_t *newm, const json_t *oldm, json_t *causes)
{
    int n = 0;
    const json_t *odel = json_object_get(oldm, "deletionTimestamp");
    if (json_is_string(odel) && *json_string_value(odel))
        n += no_new_finalizers(json_object_get(newm, "finalizers"),
                               json_object_get(oldm, "finalizers"), causes);
    if (!*str_of(newm, "resourceVersion")) {
        ferr_add_str(causes, FERR_INVALID, "metadata.resourceVersion", "",
                     "must be specified for an update");
        n++;
    }
    const json_t *ng = json_object_get(newm, "generation");
    json_int_t ngv = json_integer_value(ng),
               ogv = json_integer_value(json_object_get(oldm, "generation"));
    if (ngv < ogv) {
        json_t *v = json_integer(ngv);
        ferr_add(causes, FERR_INVALID, "metadata.generation", v, "must not be decremented");
        json_decref(v);
        n++;
    }
    n += immutable_str(newm, oldm, "name", causes);
    n += immutable_str(newm, oldm, "namespace", causes);
    n += immutable_str(newm, oldm, "uid", causes);
    n += immutable_time(newm, oldm, "creationTimestamp", false, causes);
    n += immutable_time(newm, oldm, "deletionTimestamp", true, causes);
    const json_t *ngp = json_object_get(newm, "deletionGracePeriodSeconds");
    const json_t *ogp = json_object_get(oldm, "deletionGracePeriodSeconds");
    bool nset = json_is_integer(ngp), oset = json_is_integer(ogp);
    if (nset != oset || (nset && json_integer_value(ngp) != json_integer_value(ogp))) {
        ferr_add(causes, FERR_INVALID, "metadata.deletionGracePeriodSeconds", nset ? ngp : NULL,
                 VAL_FIELD_IMMUTABLE);
        n++;
    }
    n += val_meta_maps(newm, causes);
    n += val_managed_fields(json_object_get(newm, "managedFields"), causes);
    return n;
}

int val_generate_name(const char *base, const char *suffix, char *out, size_t n)
{
    size_t bl = strlen(base), sl = strlen(suffix);
    if (bl > GENERATED_BASE_MAX) bl = GENERATED_BASE_MAX;
    if (bl + sl + 1 > n) return -1;
    memcpy(out, base, bl);
    memcpy(out + bl, suffix, sl + 1);
    return 0;
}
