/* status.c - Kubernetes Status objects and field error lists (see status.h). */
#include "api/status.h"
#include "core/jdump.h"

#include "core/utf8.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const struct {
    int http;
    const char *reason;
} reason_table[] = {[API_OK] = {200, ""},
#define X(name, code, reason) [name] = {code, reason},
                    API_REASONS(X)
#undef X
};

int api_errcode_http(api_errcode c)
{
    return reason_table[c].http;
}

const char *api_errcode_reason(api_errcode c)
{
    return reason_table[c].reason;
}

void api_err_init(api_err *e)
{
    e->code = API_OK;
    e->message[0] = '\0';
    e->details = NULL;
}

void api_err_clear(api_err *e)
{
    json_decref(e->details);
    api_err_init(e);
}

int api_err_set(api_err *e, api_errcode code, const char *fmt, ...)
{
    va_list ap;
    e->code = code;
    va_start(ap, fmt);
    int n = vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof e->message) /* cut: not inside a character, or it would not encode */
        e->message[utf8_cut(e->message, sizeof e->message - 1)] = '\0';
    return -1;
}

void api_err_details(api_err *e, const char *name, const char *group, const char *kind)
{
    if (!e->details) e->details = json_object();
    if (name) json_object_set_new(e->details, "name", json_string(name));
    if (group && *group) json_object_set_new(e->details, "group", json_string(group));
    if (kind) json_object_set_new(e->details, "kind", json_string(kind));
}

/* Upstream names the resource "pods" or "deployments.apps" in messages. */
static void qualified(char *buf, size_t n, const char *group, const char *resource)
{
    if (group && *group)
        snprintf(buf, n, "%s.%s", resource, group);
    else
        snprintf(buf, n, "%s", resource);
}

int api_err_not_found(api_err *e, const char *group, const char *resource, const char *name)
{
    char gr[256];
    qualified(gr, sizeof gr, group, resource);
    api_err_set(e, API_NOT_FOUND, "%s \"%s\" not found", gr, name);
    api_err_details(e, name, group, resource);
    return -1;
}

int api_err_already_exists(api_err *e, const char *group, const char *resource, const char *name)
{
    char gr[256];
    qualified(gr, sizeof gr, group, resource);
    api_err_set(e, API_ALREADY_EXISTS, "%s \"%s\" already exists", gr, name);
    api_err_details(e, name, group, resource);
    return -1;
}

int api_err_conflict(api_err *e, const char *group, const char *resource, const char *name,
                     const char *why)
{
    char gr[256];
    qualified(gr, sizeof gr, group, resource);
    api_err_set(e, API_CONFLICT, "Operation cannot be fulfilled on %s \"%s\": %s", gr, name, why);
    api_err_details(e, name, group, resource);
    return -1;
}

static json_t *status_base(void)
{
    return json_pack("{s:s, s:s, s:{}}", "kind", "Status", "apiVersion", "v1", "metadata");
}

/* A string member's size in a cause, as bounded. */
static size_t cause_string_size(const json_t *v)
{
    size_t n = json_string_length(v);
    return n > API_STATUS_STRING_BYTES ? API_STATUS_STRING_BYTES : n;
}

/* About the JSON bytes of a cause as bounded (escapes aside); *cut when a
 * string of it must be cut. */
static size_t cause_size(const json_t *c, bool *cut)
{
    size_t n = 2;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)c, k, v)
    {
        n += strlen(k) + 6;
        if (!json_is_string(v)) {
            n += 24;
            continue;
        }
        n += cause_string_size(v);
        *cut |= json_string_length(v) > API_STATUS_STRING_BYTES;
    }
    return n;
}

/* The cause with its strings cut at API_STATUS_STRING_BYTES (a new reference). */
static json_t *cause_cut(json_t *c)
{
    json_t *out = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(c, k, v)
    {
        if (json_is_string(v) && json_string_length(v) > API_STATUS_STRING_BYTES) {
            const char *s = json_string_value(v);
            size_t n = utf8_cut(s, API_STATUS_STRING_BYTES);
            json_object_set_new(out, k, json_stringn(s, n));
        } else {
            json_object_set(out, k, v);
        }
    }
    return out;
}

/* details, or a copy whose causes are those that fit (API_STATUS_CAUSES_BYTES). */
static json_t *bounded_details(json_t *details)
{
    json_t *causes = json_object_get(details, "causes");
    size_t total = 0, i, keep = 0;
    bool cut = false;
    json_t *c;
    json_array_foreach(causes, i, c)
    {
        size_t n = cause_size(c, &cut);
        if (total + n > API_STATUS_CAUSES_BYTES) break;
        total += n, keep++;
    }
    if (!cut && keep == json_array_size(causes)) return json_incref(details);
    json_t *d = json_copy(details), *kept = json_array();
    for (i = 0; d && kept && i < keep; i++)
        json_array_append_new(kept, cause_cut(json_array_get(causes, i)));
    json_object_set_new(d, "causes", kept);
    return d;
}

json_t *api_err_status(const api_err *e)
{
    json_t *st = status_base();
    json_object_set_new(st, "status", json_string("Failure"));
    json_object_set_new(st, "message", json_string(e->message));
    json_object_set_new(st, "reason", json_string(api_errcode_reason(e->code)));
    if (e->details) json_object_set_new(st, "details", bounded_details(e->details));
    json_object_set_new(st, "code", json_integer(api_errcode_http(e->code)));
    return st;
}

json_t *api_status_success(const char *name, const char *group, const char *kind)
{
    json_t *st = status_base();
    json_object_set_new(st, "status", json_string("Success"));
    if (name || kind) {
        json_t *d = json_object();
        if (name) json_object_set_new(d, "name", json_string(name));
        if (group && *group) json_object_set_new(d, "group", json_string(group));
        if (kind) json_object_set_new(d, "kind", json_string(kind));
        json_object_set_new(st, "details", d);
    }
    return st;
}

/* ---- field errors ---- */

static const struct {
    const char *reason;
    const char *prefix;
} ferr_table[] = {
    [FERR_INVALID] = {"FieldValueInvalid", "Invalid value"},
    [FERR_REQUIRED] = {"FieldValueRequired", "Required value"},
    [FERR_FORBIDDEN] = {"FieldValueForbidden", "Forbidden"},
    [FERR_NOT_SUPPORTED] = {"FieldValueNotSupported", "Unsupported value"},
    [FERR_DUPLICATE] = {"FieldValueDuplicate", "Duplicate value"},
    [FERR_TOO_LONG] = {"FieldValueTooLong", "Too long"},
    [FERR_TYPE_INVALID] = {"FieldValueTypeInvalid", "Invalid value"},
};

/* Upstream prints values with %#v-like rules: strings quoted, numbers bare. */
static void format_value(char *buf, size_t n, const json_t *v)
{
    if (!v) {
        snprintf(buf, n, "null");
    } else if (json_is_string(v)) {
        snprintf(buf, n, "\"%s\"", json_string_value(v));
    } else {
        char *s = jdump(v, NULL);
        snprintf(buf, n, "%s", s ? s : "");
        free(s);
    }
}

void ferr_add(json_t *list, ferr_type t, const char *field, const json_t *value, const char *detail)
{
    char msg[3072], val[2048];
    const char *p = ferr_table[t].prefix;
    switch (t) {
    case FERR_INVALID:
    case FERR_TYPE_INVALID:
    case FERR_NOT_SUPPORTED:
        format_value(val, sizeof val, value);
        if (detail && *detail)
            snprintf(msg, sizeof msg, "%s: %s: %s", p, val, detail);
        else
            snprintf(msg, sizeof msg, "%s: %s", p, val);
        break;
    case FERR_DUPLICATE:
        format_value(val, sizeof val, value);
        snprintf(msg, sizeof msg, "%s: %s", p, val);
        break;
    default:
        if (detail && *detail)
            snprintf(msg, sizeof msg, "%s: %s", p, detail);
        else
            snprintf(msg, sizeof msg, "%s", p);
    }
    json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "reason", ferr_table[t].reason,
                                          "message", msg, "field", field));
}

void ferr_addf(json_t *list, ferr_type t, const char *field, const json_t *value, const char *fmt,
               ...)
{
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    ferr_add(list, t, field, value, detail);
}

void ferr_add_str(json_t *list, ferr_type t, const char *field, const char *value,
                  const char *detail)
{
    json_t *v = value ? json_string(value) : NULL;
    ferr_add(list, t, field, v, detail);
    json_decref(v);
}

int api_err_invalid(api_err *e, const char *group, const char *kind, const char *name, json_t *list)
{
    char agg[3584];
    size_t n = json_array_size(list), off = 0;
    agg[0] = '\0';
    if (n > 1) off += snprintf(agg + off, sizeof agg - off, "[");
    for (size_t i = 0; i < n && off < sizeof agg; i++) {
        json_t *c = json_array_get(list, i);
        off += snprintf(agg + off, sizeof agg - off, "%s%s: %s", i ? ", " : "",
                        json_string_value(json_object_get(c, "field")),
                        json_string_value(json_object_get(c, "message")));
    }
    if (n > 1 && off < sizeof agg) snprintf(agg + off, sizeof agg - off, "]");
    /* upstream prints the qualified kind: "Deployment.apps", "Pod" */
    api_err_set(e, API_INVALID, "%s%s%s \"%s\" is invalid: %s", kind, group && *group ? "." : "",
                group ? group : "", name ? name : "", agg);
    api_err_details(e, name, group, kind);
    json_object_set_new(e->details, "causes", list);
    return -1;
}
