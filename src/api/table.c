/* table.c - the Table frame: columns, rows, row objects, list metadata, and
 * the time helpers every printer uses (see table.h). The per-kind printers
 * live in table_printers.c. */
#include "api/table.h"
#include "core/jdump.h"

#include "api/table_internal.h"
#include "core/jsonpath.h"
#include "core/rfc3339.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- time ---- */

/* Unix seconds of Go's zero time.Time (0001-01-01T00:00:00Z): IsZero(). */
#define GO_ZERO_TIME (-62135596800LL)

bool table_parse_time(const json_t *v, int64_t *out)
{
    int64_t t;
    if (!json_is_string(v) || !rfc3339_parse(json_string_value(v), &t, NULL) || t == GO_ZERO_TIME)
        return false;
    *out = t;
    return true;
}

/* Mirrors duration.HumanDuration branch for branch (apimachinery/pkg/util/duration);
 * with whole seconds, Go's int(d.Seconds()), d/time.Minute ... are plain divisions. */
const char *table_human_duration(int64_t s, char *buf, size_t n)
{
    long long m = s / 60, h = s / 3600, days = h / 24;
    if (s < -1)
        snprintf(buf, n, "<invalid>");
    else if (s < 0)
        snprintf(buf, n, "0s");
    else if (s < 60 * 2)
        snprintf(buf, n, "%llds", (long long)s);
    else if (m < 10 && s % 60 == 0)
        snprintf(buf, n, "%lldm", m);
    else if (m < 10)
        snprintf(buf, n, "%lldm%llds", m, (long long)(s % 60));
    else if (m < 60 * 3)
        snprintf(buf, n, "%lldm", m);
    else if (h < 8 && m % 60 == 0)
        snprintf(buf, n, "%lldh", h);
    else if (h < 8)
        snprintf(buf, n, "%lldh%lldm", h, m % 60);
    else if (h < 48)
        snprintf(buf, n, "%lldh", h);
    else if (h < 24 * 8 && h % 24 == 0)
        snprintf(buf, n, "%lldd", days);
    else if (h < 24 * 8)
        snprintf(buf, n, "%lldd%lldh", days, h % 24);
    else if (h < 24 * 365 * 2)
        snprintf(buf, n, "%lldd", days);
    else if (h < 24 * 365 * 8 && days % 365 == 0)
        snprintf(buf, n, "%lldy", days / 365);
    else if (h < 24 * 365 * 8)
        snprintf(buf, n, "%lldy%lldd", days / 365, days % 365);
    else
        snprintf(buf, n, "%lldy", days / 365);
    return buf;
}

const char *table_since(const json_t *ts, int64_t now, char *buf, size_t n)
{
    int64_t t;
    if (!table_parse_time(ts, &t)) {
        snprintf(buf, n, "<unknown>");
        return buf;
    }
    return table_human_duration(now - t, buf, n);
}

/* ---- tbuf ---- */

static bool tbuf_reserve(tbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap) return true;
    if (b->len + extra + 1 > TBUF_MAX) return false;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    if (cap > TBUF_MAX) cap = TBUF_MAX;
    char *p = realloc(b->p, cap);
    if (!p) return false;
    b->p = p;
    b->cap = cap;
    return true;
}

void tbuf_puts(tbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (!tbuf_reserve(b, n)) return;
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

void tbuf_printf(tbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !tbuf_reserve(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

const char *tbuf_str(const tbuf *b)
{
    return b->p ? b->p : "";
}

void tbuf_free(tbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* ---- the Table ---- */

/* upstream rest.DefaultTableConvertor: for kinds without a printer. */
static const table_col default_cols[] = {
    {"Name", "string", "name", TABLE_DESC_NAME, 0},
    {"Created At", "date", "", TABLE_DESC_AGE, 0},
    {NULL, NULL, NULL, NULL, 0},
};

static void default_row(const json_t *obj, int64_t now, json_t *cells)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    int64_t t;
    char ts[40];
    /* A missing timestamp is Go's zero time, which Format() still prints. */
    rfc3339_format(table_parse_time(json_object_get(meta, "creationTimestamp"), &t) ? t
                                                                                    : GO_ZERO_TIME,
                   ts, sizeof ts);
    json_array_append_new(cells, json_string(name ? name : ""));
    json_array_append_new(cells, json_string(ts));
}

static const table_printer default_printer = {"", "", default_cols, default_row, NULL};

static json_t *column_defs(const table_col *cols)
{
    json_t *defs = json_array();
    for (const table_col *c = cols; c->name; c++)
        json_array_append_new(defs, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", c->name, "type",
                                              c->type, "format", c->format, "description", c->desc,
                                              "priority", c->priority));
    return defs;
}

/* Table.metadata is a ListMeta: only the fields that are set. */
static json_t *list_metadata(const json_t *list_meta)
{
    json_t *m = json_object();
    const char *keys[] = {"resourceVersion", "continue"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = json_string_value(json_object_get(list_meta, keys[i]));
        if (v && *v) json_object_set_new(m, keys[i], json_string(v));
    }
    json_t *rem = json_object_get(list_meta, "remainingItemCount");
    if (json_is_integer(rem)) json_object_set(m, "remainingItemCount", rem);
    return m;
}

typedef enum { INCLUDE_NONE, INCLUDE_METADATA, INCLUDE_OBJECT } include_mode;

static include_mode include_parse(const char *s)
{
    if (s && strcmp(s, "None") == 0) return INCLUDE_NONE;
    if (s && strcmp(s, "Object") == 0) return INCLUDE_OBJECT;
    return INCLUDE_METADATA;
}

bool table_include_object_valid(const char *s)
{
    return !s || !*s || strcmp(s, "None") == 0 || strcmp(s, "Metadata") == 0 ||
           strcmp(s, "Object") == 0;
}

/* The row's `object`, as the apiserver's asTable() sets it per includeObject. */
static json_t *row_object(const api_kind *k, const json_t *obj, include_mode mode)
{
    if (mode == INCLUDE_NONE) return json_null();
    if (mode == INCLUDE_METADATA) {
        json_t *meta = json_object_get(obj, "metadata");
        return json_pack("{s:s, s:s, s:o}", "kind", "PartialObjectMetadata", "apiVersion",
                         "meta.k8s.io/v1", "metadata",
                         json_is_object(meta) ? jcopy(meta) : json_object());
    }
    json_t *full = jcopy(obj);
    if (k && !json_object_get(full, "kind")) {
        char av[256];
        api_kind_api_version(k, av, sizeof av);
        json_object_set_new(full, "apiVersion", json_string(av));
        json_object_set_new(full, "kind", json_string(k->kind));
    }
    return full;
}

/* ---- columns given as data (a CRD's additionalPrinterColumns) ----
 * upstream's CRD table convertor: Name, then each column's value found by
 * its JSONPath (missing keys allowed), the first value only, shaped by the
 * column's type (cellForJSONValue); null when nothing is found. */

static json_t *data_column_defs(const api_kind *k)
{
    json_t *defs = json_array();
    json_array_append_new(defs, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", "Name", "type",
                                          "string", "format", "name", "description",
                                          TABLE_DESC_NAME, "priority", 0));
    for (size_t i = 0; i < k->ncolumns; i++) {
        const api_column *c = &k->columns[i];
        json_array_append_new(defs, json_pack("{s:s, s:s, s:s, s:s, s:i}", "name", c->name, "type",
                                              c->type, "format", c->format, "description",
                                              c->description, "priority", c->priority));
    }
    return defs;
}

/* Go's %v of a float64 (strconv 'g', shortest; %e past exponent 6). */
static void go_float(double d, char *buf, size_t n)
{
    char tmp[64];
    int prec = 1;
    for (; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
        if (strtod(tmp, NULL) == d) break;
    }
    int exp = atoi(strchr(tmp, 'e') + 1);
    if (exp < -4 || exp >= 6)
        snprintf(buf, n, "%s", tmp);
    else
        snprintf(buf, n, "%.*f", prec - 1 - exp > 0 ? prec - 1 - exp : 0, d);
}

/* A "string" column: the value as kubectl's JSONPath prints it. */
static json_t *text_cell(const json_t *v)
{
    char buf[64];
    if (json_is_string(v)) return json_string(json_string_value(v));
    if (json_is_integer(v)) return json_sprintf("%lld", (long long)json_integer_value(v));
    if (json_is_real(v)) {
        go_float(json_real_value(v), buf, sizeof buf);
        return json_string(buf);
    }
    if (json_is_boolean(v)) return json_string(json_is_true(v) ? "true" : "false");
    if (json_is_object(v) || json_is_array(v)) {
        char *t = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
        json_t *cell = t ? json_string(t) : json_null();
        free(t);
        return cell;
    }
    return json_null();
}

static json_t *typed_cell(const api_column *c, const json_t *v, int64_t now)
{
    if (!strcmp(c->type, "string")) return text_cell(v);
    if (!strcmp(c->type, "integer")) {
        if (json_is_integer(v)) return json_integer(json_integer_value(v));
        if (json_is_real(v)) return json_integer((json_int_t)json_real_value(v));
    } else if (!strcmp(c->type, "number")) {
        if (json_is_number(v)) return jcopy(v);
    } else if (!strcmp(c->type, "boolean")) {
        if (json_is_boolean(v)) return json_boolean(json_is_true(v));
    } else if (!strcmp(c->type, "date") && json_is_string(v)) {
        int64_t t;
        char buf[32];
        if (!rfc3339_parse(json_string_value(v), &t, NULL)) return json_string("<invalid>");
        if (t == GO_ZERO_TIME) return json_string("<unknown>");
        return json_string(table_human_duration(now - t, buf, sizeof buf));
    }
    return json_null();
}

static void data_row(const api_kind *k, const json_t *obj, int64_t now, json_t *cells)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    json_array_append_new(cells, json_string(name ? name : ""));
    for (size_t i = 0; i < k->ncolumns; i++) {
        const api_column *c = &k->columns[i];
        jp_results *res = NULL;
        char err[256];
        json_t *cell = NULL;
        if (c->path && jp_find(c->path, obj, true, &res, err, sizeof err) == JP_OK && res &&
            jp_results_ngroups(res) > 0 && jp_results_group_len(res, 0) > 0)
            cell = typed_cell(c, jp_results_get(res, 0, 0), now);
        jp_results_free(res);
        json_array_append_new(cells, cell ? cell : json_null());
    }
}

json_t *table_crd_columns(const char *group, const char *resource)
{
    const table_printer *p = table_printer_find(group, resource);
    if (!p) return NULL;
    json_t *cols = json_array();
    for (const table_col *c = p->cols; c->name; c++) {
        if (!strcmp(c->format, "name")) continue; /* the API server adds Name itself */
        if (!c->path) goto fail;
        json_t *col = json_pack("{s:s, s:s, s:s, s:s}", "name", c->name, "type", c->type,
                                "description", c->desc, "jsonPath", c->path);
        if (!col) goto fail;
        if (c->priority) json_object_set_new(col, "priority", json_integer(c->priority));
        if (json_array_append_new(cols, col) != 0) goto fail;
    }
    return cols;
fail:
    json_decref(cols);
    return NULL;
}

json_t *table_build(const api_kind *k, const json_t *items, const char *include_object, int64_t now,
                    const json_t *list_meta)
{
    const table_printer *p = k && !k->columns ? table_printer_find(k->group, k->resource) : NULL;
    if (!p) p = &default_printer;
    include_mode mode = include_parse(include_object);

    json_t *rows = json_array();
    size_t i;
    json_t *obj;
    json_array_foreach(items, i, obj)
    {
        if (!json_is_object(obj)) continue;
        json_t *row = json_object();
        json_t *cells = json_array();
        if (k && k->columns)
            data_row(k, obj, now, cells);
        else
            p->row(obj, now, cells);
        json_object_set_new(row, "cells", cells);
        json_t *conds = k && k->columns ? NULL : p->conds ? p->conds(obj) : NULL;
        if (conds) json_object_set_new(row, "conditions", conds);
        json_object_set_new(row, "object", row_object(k, obj, mode));
        json_array_append_new(rows, row);
    }
    return json_pack("{s:s, s:s, s:o, s:o, s:o}", "kind", "Table", "apiVersion", "meta.k8s.io/v1",
                     "metadata", list_metadata(list_meta), "columnDefinitions",
                     k && k->columns ? data_column_defs(k) : column_defs(p->cols), "rows", rows);
}
