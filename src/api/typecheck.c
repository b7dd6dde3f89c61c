/* typecheck.c - decode a JSON object as its typed kind (see typecheck.h).
 *
 * Two paths are kept while walking: the strict path, with list indices
 * ("spec.containers[0].foo"), which sigs.k8s.io/json reports unknown fields
 * under, and encoding/json's error context, which names the innermost struct
 * and the chain of struct fields without indices ("Container.spec.containers.
 * resources"). The second is derived from the first when an error is made.
 */
#include "api/typecheck.h"

#include "core/dbuf.h"
#include "core/quantity.h"
#include "core/rfc3339.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_LEN 1024

typedef struct tc_ctx {
    tc_result *r;
    tc_mode mode;
    char path[PATH_MAX_LEN]; /* strict path of the value being decoded */
    size_t len;
} tc_ctx;

/* ---- paths ---- */

/* Appends without printf: the path is extended for every member decoded
 * and read only when an error or an unknown field needs it. Past the buffer
 * the path is cut, never overrun. */
static void path_append(tc_ctx *c, const char *s, size_t n)
{
    size_t room = sizeof c->path - 1 - c->len;
    if (n > room) n = room;
    memcpy(c->path + c->len, s, n);
    c->len += n;
    c->path[c->len] = '\0';
}

static size_t path_push_field(tc_ctx *c, const char *name)
{
    size_t mark = c->len;
    if (c->len) path_append(c, ".", 1);
    path_append(c, name, strlen(name));
    return mark;
}

static size_t path_push_index(tc_ctx *c, size_t i)
{
    char buf[32];
    size_t mark = c->len, n = sizeof buf;
    buf[--n] = ']';
    do
        buf[--n] = (char)('0' + i % 10);
    while ((i /= 10) && n > 1);
    buf[--n] = '[';
    path_append(c, buf + n, sizeof buf - n);
    return mark;
}

static void path_pop(tc_ctx *c, size_t mark)
{
    c->len = mark;
    c->path[mark] = '\0';
}

/* encoding/json's field chain: the strict path without "[i]" parts. */
static void go_field_chain(const char *path, char *out, size_t n)
{
    size_t o = 0;
    for (const char *p = path; *p && o + 1 < n; p++) {
        if (*p == '[') {
            while (*p && *p != ']')
                p++;
            if (!*p) break;
            continue;
        }
        out[o++] = *p;
    }
    out[o] = '\0';
}

/* ---- errors ---- */

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "object";
    case JSON_ARRAY:
        return "array";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "bool";
    default:
        return "null";
    }
}

/* "number 1.5": how encoding/json names a number that does not fit an int. */
static void number_text(const json_t *v, char *buf, size_t n)
{
    if (json_is_integer(v))
        snprintf(buf, n, "number %lld", (long long)json_integer_value(v));
    else
        snprintf(buf, n, "number %.17g", json_real_value(v));
}

/* The Go kind a decoded JSON value has in an unstructured map. */
static const char *go_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "map";
    case JSON_ARRAY:
        return "slice";
    case JSON_STRING:
        return "string";
    case JSON_INTEGER:
        return "int64";
    case JSON_REAL:
        return "float64";
    default:
        return "bool";
    }
}

/* A value of the wrong type. TC_JSON: encoding/json's
 *   json: cannot unmarshal <what> into Go struct field <Struct>.<chain> of type <type>
 * TC_UNSTRUCTURED: runtime.DefaultUnstructuredConverter's texts. */
static int type_error(tc_ctx *c, const sch_msg *owner, const sch_field *f, bool elem,
                      const json_t *v, const char *what)
{
    char chain[PATH_MAX_LEN], type[256];
    if (c->mode == TC_UNSTRUCTURED) {
        bool map = f->type == SCH_MAP_SS || f->type == SCH_MAP_SB || f->type == SCH_MAP_SQ ||
                   f->type == SCH_MAP_SM;
        if ((f->flags & SCH_REP) && !elem)
            snprintf(c->r->error, sizeof c->r->error, "cannot restore slice from %s", go_kind(v));
        else if (map && !elem)
            snprintf(c->r->error, sizeof c->r->error, "cannot restore map from %s", go_kind(v));
        else if (f->type == SCH_MSG || f->type == SCH_INLINE)
            snprintf(c->r->error, sizeof c->r->error, "cannot restore struct from: %s", go_kind(v));
        else {
            sch_go_type(f, true, type, sizeof type);
            snprintf(c->r->error, sizeof c->r->error, "cannot convert %s to %s", go_kind(v), type);
        }
        return -1;
    }
    go_field_chain(c->path, chain, sizeof chain);
    sch_go_type(f, elem, type, sizeof type);
    snprintf(c->r->error, sizeof c->r->error,
             "json: cannot unmarshal %s into Go struct field %s.%.600s of type %s", what,
             owner->name, chain, type);
    return -1;
}

/* Errors of types with their own UnmarshalJSON carry no field context. */
static int plain_error(tc_ctx *c, const char *msg)
{
    snprintf(c->r->error, sizeof c->r->error, "%s", msg);
    return -1;
}

static void add_unknown(tc_ctx *c)
{
    if (!c->r->unknown) c->r->unknown = json_array();
    if (c->r->unknown && json_array_size(c->r->unknown) < TC_MAX_UNKNOWN)
        json_array_append_new(c->r->unknown, json_string(c->path));
}

/* ---- scalars ---- */

static bool base64_ok(const char *s, size_t len, size_t *bad)
{
    /* encoding/json decodes []byte with base64.StdEncoding (padding required). */
    size_t pad = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        bool alpha = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                     (ch >= '0' && ch <= '9') || ch == '+' || ch == '/';
        if (ch == '=' && i >= len - 2 && len % 4 == 0) {
            pad++;
            continue;
        }
        if (!alpha || pad) {
            *bad = i;
            return false;
        }
    }
    if (len % 4 != 0) {
        *bad = len - len % 4;
        return false;
    }
    return true;
}

static int check_bytes(tc_ctx *c, const sch_msg *owner, const sch_field *f, bool elem,
                       const json_t *v)
{
    if (!json_is_string(v)) return type_error(c, owner, f, elem, v, json_kind(v));
    size_t bad;
    if (!base64_ok(json_string_value(v), json_string_length(v), &bad)) {
        snprintf(c->r->error, sizeof c->r->error, "illegal base64 data at input byte %zu", bad);
        return -1;
    }
    return 0;
}

static int check_int(tc_ctx *c, const sch_msg *owner, const sch_field *f, bool elem,
                     const json_t *v)
{
    char what[64];
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (f->type == SCH_INT64 || (i >= INT32_MIN && i <= INT32_MAX)) return 0;
    } else if (!json_is_real(v)) {
        return type_error(c, owner, f, elem, v, json_kind(v));
    }
    number_text(v, what, sizeof what);
    return type_error(c, owner, f, elem, v, what);
}

/* A quantity in canonical form, in place: `slot` is replaced. */
static int quantity(tc_ctx *c, json_t *v, json_t **canon)
{
    qty q;
    int rc = json_is_string(v) || json_is_number(v) || json_is_null(v) ? qty_from_json(v, &q)
                                                                       : QTY_ERR_FORMAT;
    if (rc != 0) return plain_error(c, qty_strerror(rc));
    /* Most bodies already carry the canonical form: then nothing is replaced. */
    char buf[QTY_STR_MAX];
    qty_format_str(&q, buf, sizeof buf);
    if (json_is_string(v) && strcmp(buf, json_string_value(v)) == 0) return 0;
    *canon = json_string(buf);
    return *canon ? 0 : plain_error(c, "out of memory");
}

static int check_intorstr(tc_ctx *c, const json_t *v)
{
    char what[64];
    if (json_is_string(v)) return 0;
    if (json_is_integer(v) && json_integer_value(v) >= INT32_MIN &&
        json_integer_value(v) <= INT32_MAX)
        return 0;
    /* IntOrString.UnmarshalJSON: anything not a string goes to int32. */
    if (json_is_number(v))
        number_text(v, what, sizeof what);
    else
        snprintf(what, sizeof what, "%s", json_kind(v));
    snprintf(c->r->error, sizeof c->r->error,
             "json: cannot unmarshal %s into Go value of type int32", what);
    return -1;
}

static int check_time(tc_ctx *c, const json_t *v)
{
    if (json_is_null(v)) return 0;
    if (!json_is_string(v)) {
        snprintf(c->r->error, sizeof c->r->error,
                 "json: cannot unmarshal %s into Go value of type string", json_kind(v));
        return -1;
    }
    const char *s = json_string_value(v);
    int64_t sec, nsec;
    if (!*s || rfc3339_parse(s, &sec, &nsec)) return 0;
    snprintf(c->r->error, sizeof c->r->error,
             "parsing time \"%.200s\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"%.200s\" "
             "as \"2006\"",
             s, s);
    return -1;
}

/* ---- values ---- */

static int decode_msg(tc_ctx *c, const sch_msg *m, json_t *obj, bool root);

/* One value of a map of messages (SCH_MAP_SM) at the current path: an
 * object of f->msg or, with SCH_VREP, an array of them. A null value is the
 * Go zero value: an empty object, or an empty list. */
static int decode_map_value(tc_ctx *c, const sch_msg *owner, const sch_field *f, json_t *map,
                            const char *key, json_t *val)
{
    const sch_field one = {0, f->json, SCH_MSG, 0, f->msg};
    bool list = f->flags & SCH_VREP;
    if (json_is_null(val))
        return json_object_set_new(map, key, list ? json_array() : json_object())
                   ? plain_error(c, "out of memory")
                   : 0;
    if (!list) {
        if (!json_is_object(val)) return type_error(c, owner, f, true, val, json_kind(val));
        return decode_msg(c, f->msg, val, false);
    }
    if (!json_is_array(val)) return type_error(c, owner, f, true, val, json_kind(val));
    size_t i;
    json_t *el;
    json_array_foreach(val, i, el)
    {
        size_t mark = path_push_index(c, i);
        int rc = json_is_object(el) ? decode_msg(c, f->msg, el, false)
                                    : type_error(c, owner, &one, false, el, json_kind(el));
        path_pop(c, mark);
        if (rc != 0) return -1;
    }
    return 0;
}

/* A map of messages: each value decoded under "<path>.<key>". */
static int decode_map_msgs(tc_ctx *c, const sch_msg *owner, const sch_field *f, json_t *v)
{
    if (!json_is_object(v)) return type_error(c, owner, f, false, v, json_kind(v));
    const char *key;
    json_t *val, *tmp;
    json_object_foreach_safe(v, tmp, key, val)
    {
        size_t mark = path_push_field(c, key);
        int rc = decode_map_value(c, owner, f, v, key, val);
        path_pop(c, mark);
        if (rc != 0) return -1;
    }
    return 0;
}

/* One value of field f (an element when f repeats). *replace is set when the
 * value must be replaced (a quantity in canonical form). */
static int decode_one(tc_ctx *c, const sch_msg *owner, const sch_field *f, bool elem, json_t *v,
                      json_t **replace)
{
    switch (f->type) {
    case SCH_STRING:
        return json_is_string(v) ? 0 : type_error(c, owner, f, elem, v, json_kind(v));
    case SCH_BYTES:
        return check_bytes(c, owner, f, elem, v);
    case SCH_BOOL:
        return json_is_boolean(v) ? 0 : type_error(c, owner, f, elem, v, json_kind(v));
    case SCH_INT32:
    case SCH_INT64:
        return check_int(c, owner, f, elem, v);
    case SCH_QUANTITY:
        return quantity(c, v, replace);
    case SCH_INTORSTR:
        return check_intorstr(c, v);
    case SCH_TIME:
    case SCH_MICROTIME:
        return check_time(c, v);
    case SCH_RAWJSON:
        return 0;
    case SCH_MSG:
    case SCH_INLINE:
        if (!json_is_object(v)) return type_error(c, owner, f, elem, v, json_kind(v));
        return decode_msg(c, f->msg, v, false);
    case SCH_MAP_SM:
        return decode_map_msgs(c, owner, f, v);
    default:
        break;
    }
    /* maps */
    if (!json_is_object(v)) return type_error(c, owner, f, false, v, json_kind(v));
    const char *key;
    json_t *val, *tmp;
    json_object_foreach_safe(v, tmp, key, val)
    {
        json_t *canon = NULL;
        int rc = 0;
        if (json_is_null(val) && f->type != SCH_MAP_SQ) {
            /* a nil map value is the zero value: "" */
            json_object_set_new(v, key, json_string(""));
            continue;
        }
        if (f->type == SCH_MAP_SS)
            rc = json_is_string(val) ? 0 : type_error(c, owner, f, true, val, json_kind(val));
        else if (f->type == SCH_MAP_SB)
            rc = check_bytes(c, owner, f, true, val);
        else
            rc = quantity(c, val, &canon);
        if (rc != 0) return -1;
        if (canon && json_object_set_new(v, key, canon) != 0)
            return plain_error(c, "out of memory");
    }
    return 0;
}

static int decode_field(tc_ctx *c, const sch_msg *owner, const sch_field *f, json_t *parent,
                        const char *key, json_t *v)
{
    if (!(f->flags & SCH_REP)) {
        json_t *canon = NULL;
        if (decode_one(c, owner, f, false, v, &canon) != 0) return -1;
        if (canon && json_object_set_new(parent, key, canon) != 0)
            return plain_error(c, "out of memory");
        return 0;
    }
    if (!json_is_array(v)) return type_error(c, owner, f, false, v, json_kind(v));
    size_t i;
    json_t *el;
    json_array_foreach(v, i, el)
    {
        size_t mark = path_push_index(c, i);
        json_t *canon = NULL;
        int rc = decode_one(c, owner, f, true, el, &canon);
        if (rc == 0 && canon && json_array_set_new(v, i, canon) != 0)
            rc = plain_error(c, "out of memory");
        path_pop(c, mark);
        if (rc != 0) return -1;
    }
    return 0;
}

static bool keeps_null(const sch_field *f)
{
    return !(f->flags & SCH_REP) &&
           (f->type == SCH_TIME || f->type == SCH_MICROTIME || f->type == SCH_RAWJSON);
}

static int decode_msg(tc_ctx *c, const sch_msg *m, json_t *obj, bool root)
{
    const char *key;
    json_t *v, *tmp;
    json_object_foreach_safe(obj, tmp, key, v)
    {
        size_t mark = path_push_field(c, key);
        const sch_field *f = sch_field_find(m, key);
        int rc = 0;
        if (!f && root && (!strcmp(key, "apiVersion") || !strcmp(key, "kind"))) {
            if (!json_is_string(v) && !json_is_null(v)) {
                static const sch_field typemeta = {0, "kind", SCH_STRING, 0, NULL};
                static const sch_msg tm = {"TypeMeta", "io.k8s.apimachinery.pkg.apis.meta.v1", NULL,
                                           0};
                rc = type_error(c, &tm, &typemeta, false, v, json_kind(v));
            }
        } else if (!f) {
            add_unknown(c);
            json_object_del(obj, key);
        } else if (json_is_null(v)) {
            if (!keeps_null(f)) json_object_del(obj, key);
        } else {
            rc = decode_field(c, m, f, obj, key, v);
        }
        path_pop(c, mark);
        if (rc != 0) return -1;
    }
    return 0;
}

int tc_decode(const sch_msg *m, json_t *obj, tc_result *r)
{
    return tc_decode_mode(m, obj, TC_JSON, r);
}

int tc_decode_mode(const sch_msg *m, json_t *obj, tc_mode mode, tc_result *r)
{
    tc_ctx c;
    c.mode = mode;
    r->unknown = NULL;
    r->error[0] = '\0';
    c.r = r;
    c.len = 0;
    c.path[0] = '\0';
    if (!json_is_object(obj)) {
        snprintf(r->error, sizeof r->error, "json: cannot unmarshal %s into Go value of type %s.%s",
                 json_kind(obj), strrchr(m->pkg, '.') ? strrchr(m->pkg, '.') + 1 : m->pkg, m->name);
        return -1;
    }
    return decode_msg(&c, m, obj, true);
}

void tc_result_clear(tc_result *r)
{
    json_decref(r->unknown);
    r->unknown = NULL;
}

void tc_strict_error(const json_t *unknown, char *buf, size_t n)
{
    size_t o = 0;
    int w = snprintf(buf, n, "strict decoding error: ");
    if (w < 0 || (size_t)w >= n) return;
    o = (size_t)w;
    size_t i;
    json_t *p;
    json_array_foreach(unknown, i, p)
    {
        w = snprintf(buf + o, n - o, "%sunknown field \"%s\"", i ? ", " : "", json_string_value(p));
        if (w < 0 || (size_t)w >= n - o) return;
        o += (size_t)w;
    }
}

/* ---- Go's %v of a decoded JSON value ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int go_value(dbuf *b, const json_t *v)
{
    size_t i;
    const char *k;
    json_t *x;
    int rc = 0;
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        /* fmt prints a map's keys sorted */
        size_t n = json_object_size(v), j = 0;
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys) return -1;
        json_object_foreach((json_t *)v, k, x) keys[j++] = k;
        qsort(keys, n, sizeof *keys, cmp_str);
        rc |= dbuf_adds(b, "map[");
        for (j = 0; j < n && rc == 0; j++) {
            rc |= dbuf_printf(b, "%s%s:", j ? " " : "", keys[j]);
            rc |= go_value(b, json_object_get(v, keys[j]));
        }
        free(keys);
        return rc | dbuf_adds(b, "]");
    }
    case JSON_ARRAY:
        rc |= dbuf_adds(b, "[");
        json_array_foreach(v, i, x)
        {
            if (i) rc |= dbuf_adds(b, " ");
            rc |= go_value(b, x);
            if (rc) return rc;
        }
        return rc | dbuf_adds(b, "]");
    case JSON_STRING:
        return dbuf_add(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        return dbuf_printf(b, "%lld", (long long)json_integer_value(v));
    case JSON_REAL: {
        /* %v of a float64: shortest form, exponent from 1e21 (and below 1e-4) */
        double d = json_real_value(v);
        char buf[64];
        snprintf(buf, sizeof buf, "%.17g", d);
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(buf, sizeof buf, "%.*g", prec, d);
            if (strtod(buf, NULL) == d) break;
        }
        double a = d < 0 ? -d : d;
        if (a != 0 && (a < 1e-4 || a >= 1e21)) return dbuf_adds(b, buf);
        for (int prec = 0; prec <= 20; prec++) {
            char f[64];
            snprintf(f, sizeof f, "%.*f", prec, d);
            if (strtod(f, NULL) == d) return dbuf_adds(b, f);
        }
        return dbuf_adds(b, buf);
    }
    case JSON_TRUE:
        return dbuf_adds(b, "true");
    case JSON_FALSE:
        return dbuf_adds(b, "false");
    default:
        return dbuf_adds(b, "<nil>");
    }
}

char *tc_go_value(const json_t *v, size_t max)
{
    dbuf b;
    dbuf_init(&b, max);
    go_value(&b, v); /* past `max` the text is cut where it stopped */
    char *s = dbuf_take(&b, NULL);
    return s;
}
